/*
 * What the libFuzzer targets share: the input as a stream of bytes read
 * front to back (zeros once it runs out), and check(), which traps so
 * that the fuzzer keeps the input that broke an invariant.
 */
#ifndef GSO_FUZZ_INPUT_H
#define GSO_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

#define check(cond)                       \
	do {                              \
		if (!(cond))              \
			__builtin_trap(); \
	} while (0)

struct in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t take8(struct in *in)
{
	uint8_t v = 0;

	if (in->n) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

/* Little-endian, the bytes taken in order (each call its own statement). */
static inline uint16_t take16(struct in *in)
{
	uint16_t lo = take8(in);

	return (uint16_t)(lo | take8(in) << 8);
}

static inline uint32_t take32(struct in *in)
{
	uint32_t lo = take16(in);

	return lo | (uint32_t)take16(in) << 16;
}

#endif
