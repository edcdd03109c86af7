/*
 * Portable checksum kernel: 64-bit loads (memcpy, any alignment), several
 * independent accumulators so the adds overlap.
 *
 * Per 8-byte word w we keep A += w (wrapping) and H += w >> 32 (exact).
 * A == Σlo + 2^32·H modulo 2^64, so Σlo + Σhi == A - (H << 32) + H exactly
 * while Σlo stays below 2^64 (any length up to CSUM_CHUNK): three
 * operations per word instead of four for splitting the halves.
 */
#include "csum_internal.h"

uint32_t gsoi_csum_partial_scalar(const void *buf, size_t len, uint32_t sum)
{
	const unsigned char *p = buf;
	uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, h0 = 0, h1 = 0, h2 = 0, h3 = 0;
	uint64_t a, h;

	for (; len >= 32; p += 32, len -= 32) {
		uint64_t w0, w1, w2, w3;

		memcpy(&w0, p, 8);
		memcpy(&w1, p + 8, 8);
		memcpy(&w2, p + 16, 8);
		memcpy(&w3, p + 24, 8);
		a0 += w0;
		a1 += w1;
		a2 += w2;
		a3 += w3;
		h0 += w0 >> 32;
		h1 += w1 >> 32;
		h2 += w2 >> 32;
		h3 += w3 >> 32;
	}
	a = a0 + a1 + a2 + a3;
	h = h0 + h1 + h2 + h3;
	return csum_fold64(a - (h << 32) + h + csum_small(p, len) + sum);
}

uint32_t gsoi_csum_copy_scalar(void *dst, const void *src, size_t len, uint32_t sum)
{
	const unsigned char *s = src;
	unsigned char *d = dst;
	uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, h0 = 0, h1 = 0, h2 = 0, h3 = 0;
	uint64_t a, h;

	for (; len >= 32; s += 32, d += 32, len -= 32) {
		uint64_t w0, w1, w2, w3;

		memcpy(&w0, s, 8);
		memcpy(&w1, s + 8, 8);
		memcpy(&w2, s + 16, 8);
		memcpy(&w3, s + 24, 8);
		memcpy(d, &w0, 8);
		memcpy(d + 8, &w1, 8);
		memcpy(d + 16, &w2, 8);
		memcpy(d + 24, &w3, 8);
		a0 += w0;
		a1 += w1;
		a2 += w2;
		a3 += w3;
		h0 += w0 >> 32;
		h1 += w1 >> 32;
		h2 += w2 >> 32;
		h3 += w3 >> 32;
	}
	a = a0 + a1 + a2 + a3;
	h = h0 + h1 + h2 + h3;
	return csum_fold64(a - (h << 32) + h + csum_small_copy(d, s, len) + sum);
}
