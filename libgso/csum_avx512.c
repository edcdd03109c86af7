/*
 * AVX-512 checksum kernel.  Loads are aligned to 64 bytes (for the copy:
 * stores, aligned on dst); the partial first and last blocks use byte-masked
 * loads and stores, which touch no byte outside the buffer and cannot fault.
 * Lanes hold bytes at their address modulo 64, so words pair up by address
 * parity: a buffer at an odd address gets its sum rotated by 8 at the end.
 *
 * Accumulation per 64-bit lane as in csum_scalar.c: A += x (wrapping),
 * H += x >> 32 (exact), total A - (H << 32) + H.
 */
#include "csum_internal.h"

#if CSUM_HAVE_X86
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,avx512bw")))

/* Mask of byte lanes [from, to), 0 <= from < to <= 64. */
static inline uint64_t lanes(size_t from, size_t to)
{
	uint64_t hi = to >= 64 ? ~0ull : (1ull << to) - 1;

	return hi & (~0ull << from);
}

/* Lane sum modulo 2^64 (gcc's _mm512_reduce_add_epi64 adds signed: UB). */
AVX512 static inline uint64_t hsum512(__m512i v)
{
	__m256i y = _mm256_add_epi64(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
	__m128i x = _mm_add_epi64(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));

	return (uint64_t)_mm_cvtsi128_si64(x) + (uint64_t)_mm_extract_epi64(x, 1);
}

/*
 * Per lane, A - (H << 32) + H is the lane's exact total (see above), so
 * lanes are combined first and reduced once.
 */
AVX512 static inline uint32_t finish512(__m512i a, __m512i h, uintptr_t odd, uint32_t sum)
{
	__m512i t = _mm512_add_epi64(_mm512_sub_epi64(a, _mm512_slli_epi64(h, 32)), h);
	uint32_t s = csum_fold64(hsum512(t));

	if (odd)
		s = csum_rot8(s);
	return gso_csum_add(s, sum);
}

#define ACC(A, H, X)                                          \
	do {                                                  \
		A = _mm512_add_epi64(A, X);                   \
		H = _mm512_add_epi64(H, _mm512_srli_epi64(X, 32)); \
	} while (0)

/*
 * Keep loaded vectors in registers: otherwise gcc folds each load into
 * both of its uses and issues twice the loads (about 20 % slower from L1).
 */
#define PIN4(X0, X1, X2, X3) __asm__("" : "+v"(X0), "+v"(X1), "+v"(X2), "+v"(X3))

AVX512 uint32_t gsoi_csum_partial_avx512(const void *buf, size_t len, uint32_t sum)
{
	uintptr_t o = (uintptr_t)buf & 63;
	const unsigned char *b = (const unsigned char *)((uintptr_t)buf - o);
	size_t end = o + len; /* bytes from b */
	__m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
	__m512i h0 = a0, h1 = a0, h2 = a0, h3 = a0, x;

	if (end <= 64) {
		x = _mm512_maskz_loadu_epi8(_cvtu64_mask64(lanes(o, end)), b);
		ACC(a0, h0, x);
		return finish512(a0, h0, o & 1, sum);
	}
	x = _mm512_maskz_loadu_epi8(_cvtu64_mask64(lanes(o, 64)), b);
	ACC(a0, h0, x);
	b += 64;
	end -= 64;
	for (; end >= 256; b += 256, end -= 256) {
		__m512i x0 = _mm512_load_si512(b);
		__m512i x1 = _mm512_load_si512(b + 64);
		__m512i x2 = _mm512_load_si512(b + 128);
		__m512i x3 = _mm512_load_si512(b + 192);

		PIN4(x0, x1, x2, x3);
		ACC(a0, h0, x0);
		ACC(a1, h1, x1);
		ACC(a2, h2, x2);
		ACC(a3, h3, x3);
	}
	for (; end >= 64; b += 64, end -= 64) {
		x = _mm512_load_si512(b);
		ACC(a1, h1, x);
	}
	if (end) {
		x = _mm512_maskz_loadu_epi8(_cvtu64_mask64(lanes(0, end)), b);
		ACC(a2, h2, x);
	}
	a0 = _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3));
	h0 = _mm512_add_epi64(_mm512_add_epi64(h0, h1), _mm512_add_epi64(h2, h3));
	return finish512(a0, h0, o & 1, sum);
}

AVX512 uint32_t gsoi_csum_copy_avx512(void *dst, const void *src, size_t len, uint32_t sum)
{
	uintptr_t o = (uintptr_t)dst & 63;
	unsigned char *d = (unsigned char *)((uintptr_t)dst - o);
	const unsigned char *s = (const unsigned char *)((uintptr_t)src - o);
	size_t end = o + len;
	__m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
	__m512i h0 = a0, h1 = a0, h2 = a0, h3 = a0, x;
	__mmask64 m;

	if (end <= 64) {
		m = _cvtu64_mask64(lanes(o, end));
		x = _mm512_maskz_loadu_epi8(m, s);
		_mm512_mask_storeu_epi8(d, m, x);
		ACC(a0, h0, x);
		return finish512(a0, h0, o & 1, sum);
	}
	m = _cvtu64_mask64(lanes(o, 64));
	x = _mm512_maskz_loadu_epi8(m, s);
	_mm512_mask_storeu_epi8(d, m, x);
	ACC(a0, h0, x);
	d += 64;
	s += 64;
	end -= 64;
	for (; end >= 256; d += 256, s += 256, end -= 256) {
		__m512i x0 = _mm512_loadu_si512(s);
		__m512i x1 = _mm512_loadu_si512(s + 64);
		__m512i x2 = _mm512_loadu_si512(s + 128);
		__m512i x3 = _mm512_loadu_si512(s + 192);

		_mm512_store_si512(d, x0);
		_mm512_store_si512(d + 64, x1);
		_mm512_store_si512(d + 128, x2);
		_mm512_store_si512(d + 192, x3);
		ACC(a0, h0, x0);
		ACC(a1, h1, x1);
		ACC(a2, h2, x2);
		ACC(a3, h3, x3);
	}
	for (; end >= 64; d += 64, s += 64, end -= 64) {
		x = _mm512_loadu_si512(s);
		_mm512_store_si512(d, x);
		ACC(a1, h1, x);
	}
	if (end) {
		m = _cvtu64_mask64(lanes(0, end));
		x = _mm512_maskz_loadu_epi8(m, s);
		_mm512_mask_storeu_epi8(d, m, x);
		ACC(a2, h2, x);
	}
	a0 = _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3));
	h0 = _mm512_add_epi64(_mm512_add_epi64(h0, h1), _mm512_add_epi64(h2, h3));
	return finish512(a0, h0, o & 1, sum);
}
#endif
