/*
 * The tests' deterministic PRNG, apart from gso_test.c so that programs
 * without Criterion (tests/progs/) can link it and regenerate the same data.
 */
#include <string.h>

#include "gso_test.h"

uint64_t gso_test_rand(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

void gso_test_fill_random(void *buf, size_t len, uint64_t *state)
{
	uint8_t *p = buf;

	while (len >= 8) {
		uint64_t r = gso_test_rand(state);
		memcpy(p, &r, 8);
		p += 8;
		len -= 8;
	}
	if (len) {
		uint64_t r = gso_test_rand(state);
		memcpy(p, &r, len);
	}
}
