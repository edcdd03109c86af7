/*
 * SipHash-2-4 (see siphash_internal.h): two compression rounds per 8-byte
 * word, four finalization rounds.  Words are read byte by byte as little
 * endian, so the result is the same on every host and for any alignment.
 */
#include "siphash_internal.h"

static uint64_t rotl(uint64_t x, unsigned b)
{
	return x << b | x >> (64 - b);
}

static uint64_t load_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* The state v0..v3. */
struct sip {
	uint64_t v0, v1, v2, v3;
};

static void sipround(struct sip *s)
{
	s->v0 += s->v1;
	s->v1 = rotl(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = rotl(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = rotl(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = rotl(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = rotl(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = rotl(s->v2, 32);
}

static void absorb(struct sip *s, uint64_t m)
{
	s->v3 ^= m;
	sipround(s);
	sipround(s);
	s->v0 ^= m;
}

uint64_t gsoi_siphash24(const uint8_t key[SIPHASH_KEY_LEN], const void *msg, size_t len)
{
	const uint8_t *p = msg;
	uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
	/* The initial state: the key xored with "somepseudorandomlygeneratedbytes". */
	struct sip s = {
		k0 ^ 0x736f6d6570736575ull,
		k1 ^ 0x646f72616e646f6dull,
		k0 ^ 0x6c7967656e657261ull,
		k1 ^ 0x7465646279746573ull,
	};
	size_t full = len & ~(size_t)7;

	for (size_t i = 0; i < full; i += 8)
		absorb(&s, load_le64(p + i));
	/* The last word: the 0..7 bytes left, and the length (mod 256) in its top byte. */
	uint64_t last = (uint64_t)(len & 0xff) << 56;

	for (size_t i = full; i < len; i++)
		last |= (uint64_t)p[i] << (8 * (i - full));
	absorb(&s, last);
	s.v2 ^= 0xff;
	for (unsigned i = 0; i < 4; i++)
		sipround(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
