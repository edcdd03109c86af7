/*
 * Portable checksum kernel.  Loads are memcpy (any alignment); the sum of
 * 64-bit words is the sum of their 16-bit words once folded, because
 * 2^16 == 1 modulo 0xffff, so wide loads keep the memory-order result.
 */
#include "csum_internal.h"

/* Sum of the last 0..7 bytes; an odd final byte is the first half of a word. */
static inline uint64_t tail_sum(const unsigned char *p, size_t len)
{
	uint64_t w = 0;

	memcpy(&w, p, len);
	return (w & 0xffffffffu) + (w >> 32);
}

uint32_t csum_partial_scalar(const void *buf, size_t len, uint32_t sum)
{
	const unsigned char *p = buf;
	/*
	 * Adding 32-bit halves into 64-bit accumulators cannot overflow for
	 * any length below 2^34 bytes per accumulator; four of them give the
	 * CPU independent add chains.
	 */
	uint64_t a0 = sum, a1 = 0, a2 = 0, a3 = 0;

	while (len >= 32) {
		uint64_t w0, w1, w2, w3;

		memcpy(&w0, p, 8);
		memcpy(&w1, p + 8, 8);
		memcpy(&w2, p + 16, 8);
		memcpy(&w3, p + 24, 8);
		a0 += (w0 & 0xffffffffu) + (w0 >> 32);
		a1 += (w1 & 0xffffffffu) + (w1 >> 32);
		a2 += (w2 & 0xffffffffu) + (w2 >> 32);
		a3 += (w3 & 0xffffffffu) + (w3 >> 32);
		p += 32;
		len -= 32;
	}
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		a0 += (w & 0xffffffffu) + (w >> 32);
		p += 8;
		len -= 8;
	}
	a0 += tail_sum(p, len);
	/* Each accumulator is < 2^63 here, so their sum of halves fits. */
	a0 = (a0 & 0xffffffffu) + (a0 >> 32) + (a1 & 0xffffffffu) + (a1 >> 32) +
	     (a2 & 0xffffffffu) + (a2 >> 32) + (a3 & 0xffffffffu) + (a3 >> 32);
	return csum_fold64(a0);
}

uint32_t csum_copy_scalar(void *dst, const void *src, size_t len, uint32_t sum)
{
	const unsigned char *s = src;
	unsigned char *d = dst;
	uint64_t a0 = sum, a1 = 0;

	while (len >= 16) {
		uint64_t w0, w1;

		memcpy(&w0, s, 8);
		memcpy(&w1, s + 8, 8);
		memcpy(d, &w0, 8);
		memcpy(d + 8, &w1, 8);
		a0 += (w0 & 0xffffffffu) + (w0 >> 32);
		a1 += (w1 & 0xffffffffu) + (w1 >> 32);
		s += 16;
		d += 16;
		len -= 16;
	}
	if (len >= 8) {
		uint64_t w;

		memcpy(&w, s, 8);
		memcpy(d, &w, 8);
		a0 += (w & 0xffffffffu) + (w >> 32);
		s += 8;
		d += 8;
		len -= 8;
	}
	memcpy(d, s, len);
	a0 += tail_sum(s, len);
	a0 = (a0 & 0xffffffffu) + (a0 >> 32) + (a1 & 0xffffffffu) + (a1 >> 32);
	return csum_fold64(a0);
}
