/*
 * The tests' reference Internet checksum (RFC 1071), written apart from
 * libgso's on purpose: byte by byte over big-endian 16-bit words, so that a
 * test checks the library's vector kernels and incremental updates against
 * arithmetic that shares no code with them.  Header-only, so that the fuzz
 * targets and test programs built without the test helpers can use it.
 */
#ifndef GSO_TEST_REF_CSUM_H
#define GSO_TEST_REF_CSUM_H

#include <stddef.h>
#include <stdint.h>

/* Add the n bytes at p to acc as big-endian words (an odd last byte is the high half). */
static inline uint32_t ref_sum(const uint8_t *p, size_t n, uint32_t acc)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		acc += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		acc += (uint32_t)p[n - 1] << 8;
	return acc;
}

/* Fold the carries back in: the one's-complement sum, not complemented. */
static inline uint16_t ref_fold(uint32_t acc)
{
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)acc;
}

#endif
