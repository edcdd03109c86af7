/* Internal: the per-ISA checksum kernels behind gso_csum_partial/copy. */
#ifndef CSUM_INTERNAL_H
#define CSUM_INTERNAL_H

#include <gso/csum.h>

struct csum_ops {
	uint32_t (*partial)(const void *buf, size_t len, uint32_t sum);
	uint32_t (*copy)(void *dst, const void *src, size_t len, uint32_t sum);
};

/*
 * Kernels may return different 32-bit partial sums for the same bytes, but
 * they only ever add with end-around carry, so a result folds to 0 exactly
 * when all input is 0: folded results are identical across kernels.
 */
uint32_t csum_partial_scalar(const void *buf, size_t len, uint32_t sum);
uint32_t csum_copy_scalar(void *dst, const void *src, size_t len, uint32_t sum);

#if 0 /* vector kernels: next commit */
#define CSUM_HAVE_X86 1
uint32_t csum_partial_avx2(const void *buf, size_t len, uint32_t sum);
uint32_t csum_copy_avx2(void *dst, const void *src, size_t len, uint32_t sum);
uint32_t csum_partial_avx512(const void *buf, size_t len, uint32_t sum);
uint32_t csum_copy_avx512(void *dst, const void *src, size_t len, uint32_t sum);
#else
#define CSUM_HAVE_X86 0
#endif

/* Fold a 64-bit accumulator to 32 bits with end-around carry. */
static inline uint32_t csum_fold64(uint64_t acc)
{
	acc = (acc & 0xffffffffu) + (acc >> 32);
	acc = (acc & 0xffffffffu) + (acc >> 32);
	return (uint32_t)acc;
}

#endif
