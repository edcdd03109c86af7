/*
 * Fuzz the checksum kernels: every implementation this CPU runs must agree
 * with a plain 16-bit loop at any offset, length and split point, and the
 * fused copy must copy.  Input: [offset byte][cut 2 bytes][seed 4 bytes][data].
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gso/csum.h>

static uint16_t ref_fold(const unsigned char *p, size_t len, uint32_t seed)
{
	uint64_t s = seed;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		uint16_t w;

		memcpy(&w, p + i, 2);
		s += w;
	}
	if (len & 1) {
		uint16_t w = 0;

		memcpy(&w, p + len - 1, 1);
		s += w;
	}
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char src[65536 + 64], dst[65536 + 64];
	size_t off, cut, len;
	uint32_t seed;

	if (size < 7)
		return 0;
	off = data[0] & 63;
	cut = (size_t)data[1] | (size_t)data[2] << 8;
	memcpy(&seed, data + 3, 4);
	data += 7;
	size -= 7;
	len = size > 65536 ? 65536 : size;
	cut = len ? cut % (len + 1) : 0;
	memcpy(src + off, data, len);

	uint16_t want = ref_fold(src + off, len, seed);

	for (int i = GSO_CSUM_IMPL_SCALAR; i < GSO_CSUM_IMPL_COUNT; i++) {
		uint32_t s;

		if (gso_csum_select((enum gso_csum_impl)i) != 0)
			continue;
		if (gso_csum_fold(gso_csum_partial(src + off, len, seed)) != want)
			abort();
		s = gso_csum_partial(src + off, cut, seed);
		s = gso_csum_block_add(s, gso_csum_partial(src + off + cut, len - cut, 0), cut);
		if (gso_csum_fold(s) != want)
			abort();
		if (gso_csum_fold(gso_csum_copy(dst + (63 - off), src + off, len, seed)) != want ||
		    memcmp(dst + (63 - off), src + off, len) != 0)
			abort();
	}
	gso_csum_select(GSO_CSUM_IMPL_AUTO);
	return 0;
}
