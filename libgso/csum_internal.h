/* Internal: the per-ISA checksum kernels behind gso_csum_partial/copy. */
#ifndef CSUM_INTERNAL_H
#define CSUM_INTERNAL_H

#include <gso/csum.h>

typedef uint32_t csum_partial_fn(const void *buf, size_t len, uint32_t sum);
typedef uint32_t csum_copy_fn(void *dst, const void *src, size_t len, uint32_t sum);

struct csum_ops {
	csum_partial_fn *partial;
	csum_copy_fn *copy;
};

/*
 * The kernels' contract.  Each adds up, as plain 64-bit integers without
 * overflow, non-negative pieces that are congruent modulo 0xffff to the
 * sum of the memory-order words they cover (32-bit halves of 64-bit words,
 * for instance: 2^16 == 1 modulo 0xffff) and are zero only when their bytes
 * are, and only then folds with end-around carry.  So a result folds to 0
 * exactly when the buffer and `sum` are all zero, and folded results are
 * identical across kernels although the unfolded 32-bit values may differ.
 *
 * The 64-bit sums stay exact only up to some length: the largest term,
 * the sum of low 32-bit halves, reaches 2^64 after 2^32 8-byte words
 * (32 GiB).  The front door splits longer buffers into CSUM_CHUNK pieces
 * (even, so no byte swap between them), a 32-fold margin.
 */
#define CSUM_CHUNK ((size_t)1 << 30)

/* Run `fn` over `chunk`-byte pieces (chunk even) and chain the sums. */
uint32_t gsoi_csum_partial_split(csum_partial_fn *fn, const void *buf, size_t len, uint32_t sum,
				 size_t chunk);
uint32_t gsoi_csum_copy_split(csum_copy_fn *fn, void *dst, const void *src, size_t len, uint32_t sum,
			      size_t chunk);

uint32_t gsoi_csum_partial_scalar(const void *buf, size_t len, uint32_t sum);
uint32_t gsoi_csum_copy_scalar(void *dst, const void *src, size_t len, uint32_t sum);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CSUM_HAVE_X86 1
uint32_t gsoi_csum_partial_avx2(const void *buf, size_t len, uint32_t sum);
uint32_t gsoi_csum_copy_avx2(void *dst, const void *src, size_t len, uint32_t sum);
uint32_t gsoi_csum_partial_avx512(const void *buf, size_t len, uint32_t sum);
uint32_t gsoi_csum_copy_avx512(void *dst, const void *src, size_t len, uint32_t sum);
#else
#define CSUM_HAVE_X86 0
#endif

/* Fold a 64-bit sum to 32 bits with end-around carry. */
static inline uint32_t csum_fold64(uint64_t acc)
{
	acc = (acc & 0xffffffffu) + (acc >> 32);
	acc = (acc & 0xffffffffu) + (acc >> 32);
	return (uint32_t)acc;
}

/*
 * A sum taken over words that start one byte off: rotating a 32-bit
 * partial sum by 8 multiplies it by 2^8 modulo 0xffff, which swaps the
 * bytes of the folded result.
 */
static inline uint32_t csum_rot8(uint32_t s)
{
	return (s >> 8) | (s << 24);
}

/* 32-bit halves of one 64-bit word: the word's sum, exactly. */
static inline uint64_t csum_halves(uint64_t w)
{
	return (w & 0xffffffffu) + (w >> 32);
}

/*
 * Sum of a short run of bytes (heads and tails of the vector kernels), as
 * a sum of pieces that are each congruent to their words' sum, non-zero
 * unless their bytes are, and below 2^33 (which is all the kernels'
 * contract needs).  The run starts at an even offset; an odd final byte is
 * the first half of a zero-padded word, which memcpy into a zeroed word
 * gives on any byte order.
 */
static inline uint64_t csum_small(const unsigned char *p, size_t len)
{
	uint64_t s = 0, w;
	uint32_t v;
	uint16_t h = 0;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		s += csum_halves(w);
	}
	if (len & 4) {
		memcpy(&v, p, 4);
		s += v;
		p += 4;
	}
	if (len & 2) {
		memcpy(&h, p, 2);
		s += h;
		p += 2;
	}
	if (len & 1) {
		h = 0;
		memcpy(&h, p, 1);
		s += h;
	}
	return s;
}

/* Same, copying the bytes to `d` as well. */
static inline uint64_t csum_small_copy(unsigned char *d, const unsigned char *p, size_t len)
{
	uint64_t s = 0, w;
	uint32_t v;
	uint16_t h = 0;

	for (; len >= 8; p += 8, d += 8, len -= 8) {
		memcpy(&w, p, 8);
		memcpy(d, &w, 8);
		s += csum_halves(w);
	}
	if (len & 4) {
		memcpy(&v, p, 4);
		memcpy(d, &v, 4);
		s += v;
		p += 4;
		d += 4;
	}
	if (len & 2) {
		memcpy(&h, p, 2);
		memcpy(d, &h, 2);
		s += h;
		p += 2;
		d += 2;
	}
	if (len & 1) {
		*d = *p;
		h = 0;
		memcpy(&h, p, 1);
		s += h;
	}
	return s;
}

#endif
