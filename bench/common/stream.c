#include "stream.h"

#include <endian.h>
#include <string.h>

#define STREAM_MUL 0x9e3779b97f4a7c15ull

uint64_t bench_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void bench_stream_init(struct bench_stream *s, uint64_t seed)
{
	uint64_t st = seed;

	s->seed = seed;
	for (unsigned k = 0; k < BENCH_STREAM_TAB; k++)
		s->tab[k] = bench_splitmix64(&st);
}

/* The word in wire (little-endian) byte order, ready to store or compare. */
static inline uint64_t wire_word(const struct bench_stream *s, uint64_t i)
{
	return htole64(s->tab[i & (BENCH_STREAM_TAB - 1)] ^ (i * STREAM_MUL));
}

uint8_t bench_stream_byte(const struct bench_stream *s, uint64_t off)
{
	uint64_t w = le64toh(wire_word(s, off >> 3));

	return (uint8_t)(w >> (8 * (off & 7)));
}

void bench_stream_fill(const struct bench_stream *s, uint64_t off, void *dst, size_t len)
{
	uint8_t *p = dst;
	uint64_t i = off >> 3, w;
	unsigned head = off & 7;

	if (head && len) {
		size_t n = 8 - head < len ? 8 - head : len;

		w = wire_word(s, i++);
		memcpy(p, (uint8_t *)&w + head, n);
		p += n;
		len -= n;
	}
	for (; len >= 8; len -= 8, p += 8) {
		w = wire_word(s, i++);
		memcpy(p, &w, 8);
	}
	if (len) {
		w = wire_word(s, i);
		memcpy(p, &w, len);
	}
}

/* Index of the first differing byte of two 8-byte groups (they differ). */
static size_t first_diff(const uint8_t *a, const uint8_t *b)
{
	size_t k = 0;

	while (a[k] == b[k])
		k++;
	return k;
}

size_t bench_stream_check(const struct bench_stream *s, uint64_t off, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t i = off >> 3, w, v;
	unsigned head = off & 7;
	size_t done = 0;

	if (head && len) {
		size_t n = 8 - head < len ? 8 - head : len;

		w = wire_word(s, i++);
		for (size_t k = 0; k < n; k++)
			if (p[k] != ((uint8_t *)&w)[head + k])
				return k;
		done = n;
	}
	/*
	 * Differences are OR-ed over 32 bytes before any branch: verification
	 * runs on every received byte, so the common (all equal) case must
	 * stay close to memory speed.
	 */
	while (len - done >= 32) {
		uint64_t e[4], d[4];

		for (int k = 0; k < 4; k++) {
			e[k] = wire_word(s, i + (uint64_t)k);
			memcpy(&d[k], p + done + 8 * k, 8);
		}
		if ((e[0] ^ d[0]) | (e[1] ^ d[1]) | (e[2] ^ d[2]) | (e[3] ^ d[3])) {
			for (int k = 0; k < 4; k++)
				if (e[k] != d[k])
					return done + 8 * k +
					       first_diff(p + done + 8 * k, (const uint8_t *)&e[k]);
		}
		i += 4;
		done += 32;
	}
	for (; len - done >= 8; done += 8) {
		w = wire_word(s, i++);
		memcpy(&v, p + done, 8);
		if (v != w)
			return done + first_diff(p + done, (const uint8_t *)&w);
	}
	if (len > done) {
		w = wire_word(s, i);
		for (size_t k = 0; k < len - done; k++)
			if (p[done + k] != ((uint8_t *)&w)[k])
				return done + k;
	}
	return len;
}
