/*
 * AVX2 checksum kernel.  AVX2 has no byte-masked loads, so a scalar head
 * brings the pointer (for the copy: dst) to 32-byte alignment and a scalar
 * tail finishes; the vector part's sum is rotated by 8 when the head had
 * odd length (gso_csum_block_add's rule).  Accumulation as in
 * csum_scalar.c: A += x (wrapping), H += x >> 32 (exact).
 */
#include "csum_internal.h"

#if CSUM_HAVE_X86
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/* Below this a vector loop does not pay for its set-up. */
#define SHORT 64

AVX2 static inline uint64_t hsum256(__m256i v)
{
	__m128i s = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));

	return (uint64_t)_mm_cvtsi128_si64(s) + (uint64_t)_mm_extract_epi64(s, 1);
}

#define ACC(A, H, X)                                          \
	do {                                                  \
		A = _mm256_add_epi64(A, X);                   \
		H = _mm256_add_epi64(H, _mm256_srli_epi64(X, 32)); \
	} while (0)

/*
 * Keep loaded vectors in registers: otherwise gcc folds each load into
 * both of its uses and issues twice the loads (about 20 % slower from L1).
 */
#define PIN4(X0, X1, X2, X3) __asm__("" : "+v"(X0), "+v"(X1), "+v"(X2), "+v"(X3))

/* Combine: head sum, exact vector-part total, head length parity. */
static inline uint32_t combine(uint64_t head, uint64_t body, size_t hlen, uint32_t sum)
{
	uint32_t s = csum_fold64(body);

	if (hlen & 1)
		s = csum_rot8(s);
	return gso_csum_add(gso_csum_add(s, csum_fold64(head)), sum);
}

AVX2 uint32_t gsoi_csum_partial_avx2(const void *buf, size_t len, uint32_t sum)
{
	const unsigned char *p = buf;
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
	__m256i h0 = a0, h1 = a0, h2 = a0, h3 = a0;
	uint64_t head, ta, th;
	size_t hlen;

	if (len < SHORT)
		return gso_csum_add(csum_fold64(csum_small(p, len)), sum);
	hlen = -(uintptr_t)p & 31;
	head = csum_small(p, hlen);
	p += hlen;
	len -= hlen;
	for (; len >= 128; p += 128, len -= 128) {
		__m256i x0 = _mm256_load_si256((const __m256i *)p);
		__m256i x1 = _mm256_load_si256((const __m256i *)(p + 32));
		__m256i x2 = _mm256_load_si256((const __m256i *)(p + 64));
		__m256i x3 = _mm256_load_si256((const __m256i *)(p + 96));

		PIN4(x0, x1, x2, x3);
		ACC(a0, h0, x0);
		ACC(a1, h1, x1);
		ACC(a2, h2, x2);
		ACC(a3, h3, x3);
	}
	for (; len >= 32; p += 32, len -= 32) {
		__m256i x = _mm256_load_si256((const __m256i *)p);

		ACC(a0, h0, x);
	}
	ta = hsum256(_mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)));
	th = hsum256(_mm256_add_epi64(_mm256_add_epi64(h0, h1), _mm256_add_epi64(h2, h3)));
	return combine(head, ta - (th << 32) + th + csum_small(p, len), hlen, sum);
}

AVX2 uint32_t gsoi_csum_copy_avx2(void *dst, const void *src, size_t len, uint32_t sum)
{
	const unsigned char *s = src;
	unsigned char *d = dst;
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
	__m256i h0 = a0, h1 = a0, h2 = a0, h3 = a0;
	uint64_t head, ta, th;
	size_t hlen;

	if (len < SHORT)
		return gso_csum_add(csum_fold64(csum_small_copy(d, s, len)), sum);
	hlen = -(uintptr_t)d & 31;
	head = csum_small_copy(d, s, hlen);
	s += hlen;
	d += hlen;
	len -= hlen;
	for (; len >= 128; s += 128, d += 128, len -= 128) {
		__m256i x0 = _mm256_loadu_si256((const __m256i *)s);
		__m256i x1 = _mm256_loadu_si256((const __m256i *)(s + 32));
		__m256i x2 = _mm256_loadu_si256((const __m256i *)(s + 64));
		__m256i x3 = _mm256_loadu_si256((const __m256i *)(s + 96));

		_mm256_store_si256((__m256i *)d, x0);
		_mm256_store_si256((__m256i *)(d + 32), x1);
		_mm256_store_si256((__m256i *)(d + 64), x2);
		_mm256_store_si256((__m256i *)(d + 96), x3);
		ACC(a0, h0, x0);
		ACC(a1, h1, x1);
		ACC(a2, h2, x2);
		ACC(a3, h3, x3);
	}
	for (; len >= 32; s += 32, d += 32, len -= 32) {
		__m256i x = _mm256_loadu_si256((const __m256i *)s);

		_mm256_store_si256((__m256i *)d, x);
		ACC(a0, h0, x);
	}
	ta = hsum256(_mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)));
	th = hsum256(_mm256_add_epi64(_mm256_add_epi64(h0, h1), _mm256_add_epi64(h2, h3)));
	return combine(head, ta - (th << 32) + th + csum_small_copy(d, s, len), hlen, sum);
}
#endif
