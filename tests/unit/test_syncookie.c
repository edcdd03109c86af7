/*
 * SYN cookies (xdp/tcp/syncookie.c) and the SipHash-2-4 under them
 * (xdp/tcp/siphash.c): the published test vectors; cookie round trips for
 * every MSS class of both families and the rounding down to a class;
 * rejection of another key, tuple or ISN, of an old cookie and of random
 * values; the time slot's wrap; the options carried in the TSval.
 */
#include <criterion/criterion.h>
#include <string.h>

#include <gso/tmpl.h>

#include "tcp/siphash_internal.h"
#include "tcp/syncookie_internal.h"

static const uint8_t key[SYNCOOKIE_KEY_LEN] = { 0x3c, 0x11, 0x9a, 0x07, 0xe4, 0x52, 0x88, 0xd1,
						0x6b, 0x2f, 0xc0, 0x95, 0x17, 0x4e, 0xa3, 0x79 };

#define S(n) ((uint64_t)(n) * SYNCOOKIE_SLOT_NS)
#define T0 (S(1000) + 5000000000ull) /* 5 s into slot 1000 */

static struct tcp_key key_v4(void)
{
	struct tcp_key k = { .l3 = GSO_L3_IPV4, .peer_port = 40000, .our_port = 80 };

	memcpy(k.peer_addr, (uint8_t[]){ 10, 0, 0, 2 }, 4);
	memcpy(k.our_addr, (uint8_t[]){ 10, 0, 0, 1 }, 4);
	return k;
}

static struct tcp_key key_v6(void)
{
	struct tcp_key k = { .l3 = GSO_L3_IPV6, .peer_port = 51515, .our_port = 443 };
	const uint8_t peer[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 }, ours[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };

	memcpy(k.peer_addr, peer, 16);
	memcpy(k.our_addr, ours, 16);
	return k;
}

/* The paper's appendix and its reference vectors: key 00..0f, messages 00..(n-1). */
Test(syncookie, siphash_vectors)
{
	uint8_t k[16], msg[64];

	for (unsigned i = 0; i < 16; i++)
		k[i] = (uint8_t)i;
	for (unsigned i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	cr_expect_eq(gsoi_siphash24(k, msg, 15), 0xa129ca6149be45e5ull);
	cr_expect_eq(gsoi_siphash24(k, msg, 0), 0x726fdb47dd0e0e31ull);
	/* Every length of a word's worth differs (the length is in the last word). */
	for (unsigned n = 1; n < 64; n++)
		cr_expect_neq(gsoi_siphash24(k, msg, n), gsoi_siphash24(k, msg, n - 1), "len %u", n);
}

static void round_trip(const struct tcp_key *k)
{
	const uint16_t *tab = gsoi_syncookie_mss_table(k->l3);

	for (unsigned i = 0; i < SYNCOOKIE_MSS_CLASSES; i++) {
		for (uint32_t isn = 0; isn < 40; isn++) {
			uint32_t peer_isn = isn * 0x9E3779B9u;
			uint16_t used = 0;
			uint32_t c = gsoi_syncookie_make(key, k, peer_isn, T0, tab[i], &used);

			cr_assert_eq(used, tab[i]);
			cr_assert_eq(gsoi_syncookie_check(key, k, peer_isn, c, T0), tab[i], "l3 %u class %u isn %u",
				     k->l3, i, peer_isn);
			/* Later in the same slot, and anywhere in the next. */
			cr_assert_eq(gsoi_syncookie_check(key, k, peer_isn, c, S(1001) - 1), tab[i]);
			cr_assert_eq(gsoi_syncookie_check(key, k, peer_isn, c, S(1001)), tab[i]);
			cr_assert_eq(gsoi_syncookie_check(key, k, peer_isn, c, S(1002) - 1), tab[i]);
		}
	}
}

Test(syncookie, round_trip_v4)
{
	struct tcp_key k = key_v4();
	const uint16_t *tab = gsoi_syncookie_mss_table(GSO_L3_IPV4);
	const uint16_t want[SYNCOOKIE_MSS_CLASSES] = { 536, 1300, 1440, 1460 };

	cr_expect_arr_eq(tab, want, sizeof(want));
	round_trip(&k);
}

Test(syncookie, round_trip_v6)
{
	struct tcp_key k = key_v6();
	const uint16_t *tab = gsoi_syncookie_mss_table(GSO_L3_IPV6);
	const uint16_t want[SYNCOOKIE_MSS_CLASSES] = { 1220, 1420, 1440, 8940 };

	cr_expect_arr_eq(tab, want, sizeof(want));
	round_trip(&k);
}

Test(syncookie, mss_rounds_down)
{
	struct tcp_key k4 = key_v4(), k6 = key_v6();
	struct {
		const struct tcp_key *k;
		uint16_t mss, want;
	} c[] = {
		{ &k4, 1459, 1440 }, { &k4, 1460, 1460 }, { &k4, 9000, 1460 }, { &k4, 1439, 1300 },
		{ &k4, 1300, 1300 }, { &k4, 1299, 536 }, { &k4, 536, 536 },  { &k4, 535, 536 },
		{ &k4, 0, 536 },     { &k6, 8939, 1440 }, { &k6, 65535, 8940 }, { &k6, 1439, 1420 },
		{ &k6, 1419, 1220 }, { &k6, 1220, 1220 }, { &k6, 1000, 1220 }, { &k6, 1460, 1440 },
	};

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint16_t used = 0;
		uint32_t cookie = gsoi_syncookie_make(key, c[i].k, 77, T0, c[i].mss, &used);

		cr_expect_eq(used, c[i].want, "row %u: mss %u", i, c[i].mss);
		cr_expect_eq(gsoi_syncookie_check(key, c[i].k, 77, cookie, T0), c[i].want, "row %u", i);
		cr_expect_eq(gsoi_syncookie_make(key, c[i].k, 77, T0, c[i].mss, NULL), cookie, "mss_used NULL");
	}
}

/* Each field of the tuple, the key, the ISN: any change and the cookie is no longer one. */
Test(syncookie, rejects_other_key_tuple_isn)
{
	const uint32_t isn = 0x12345678u;

	for (int fam = 0; fam < 2; fam++) {
		struct tcp_key k = fam ? key_v6() : key_v4();
		uint32_t c = gsoi_syncookie_make(key, &k, isn, T0, 1440, NULL);

		cr_assert_neq(gsoi_syncookie_check(key, &k, isn, c, T0), 0);

		uint8_t key2[SYNCOOKIE_KEY_LEN];

		for (unsigned b = 0; b < SYNCOOKIE_KEY_LEN; b++) {
			memcpy(key2, key, sizeof(key2));
			key2[b] ^= 0x40;
			cr_expect_eq(gsoi_syncookie_check(key2, &k, isn, c, T0), 0, "key byte %u", b);
		}
		struct tcp_key o;
		unsigned alen = fam ? 16 : 4;

		for (unsigned b = 0; b < alen; b++) {
			o = k;
			o.peer_addr[b] ^= 1;
			cr_expect_eq(gsoi_syncookie_check(key, &o, isn, c, T0), 0, "peer addr byte %u", b);
			o = k;
			o.our_addr[b] ^= 0x80;
			cr_expect_eq(gsoi_syncookie_check(key, &o, isn, c, T0), 0, "our addr byte %u", b);
		}
		o = k;
		o.peer_port++;
		cr_expect_eq(gsoi_syncookie_check(key, &o, isn, c, T0), 0, "peer port");
		o = k;
		o.our_port = 8080;
		cr_expect_eq(gsoi_syncookie_check(key, &o, isn, c, T0), 0, "our port");
		o = k;
		o.peer_port = k.our_port; /* swapped ports */
		o.our_port = k.peer_port;
		cr_expect_eq(gsoi_syncookie_check(key, &o, isn, c, T0), 0, "ports swapped");
		o = k;
		o.l3 = fam ? GSO_L3_IPV4 : GSO_L3_IPV6;
		cr_expect_eq(gsoi_syncookie_check(key, &o, isn, c, T0), 0, "l3");
		o = k;
		o.vlan = 0x8005;
		cr_expect_eq(gsoi_syncookie_check(key, &o, isn, c, T0), 0, "vlan");

		/* The ISN is hashed, not only added: off by one is no neighbouring MSS class. */
		const uint32_t other[] = { isn + 1, isn - 1, isn + 2, isn + 0x1000000u, isn ^ 0x80000000u, 0 };

		for (unsigned i = 0; i < sizeof(other) / sizeof(other[0]); i++)
			cr_expect_eq(gsoi_syncookie_check(key, &k, other[i], c, T0), 0, "isn %#x", other[i]);
		/* Another slot byte: from the future, or the slot before with the wrong H2. */
		cr_expect_eq(gsoi_syncookie_check(key, &k, isn, c + (1u << 24), T0), 0);
		cr_expect_eq(gsoi_syncookie_check(key, &k, isn, c - (1u << 24), T0), 0);
		/*
		 * The class is added, not hashed: a neighbouring value is the
		 * neighbouring class, as in Linux's layout.  Harmless: only one who
		 * saw our SYN-ACK knows the cookie, and could as well ACK it.
		 */
		const uint16_t *tab = gsoi_syncookie_mss_table(k.l3);

		cr_expect_eq(gsoi_syncookie_check(key, &k, isn, c + 1, T0), tab[3]);
		cr_expect_eq(gsoi_syncookie_check(key, &k, isn, c - 1, T0), tab[1]);
		cr_expect_eq(gsoi_syncookie_check(key, &k, isn, c + 2, T0), 0);
		c = gsoi_syncookie_make(key, &k, isn, T0, 0, NULL); /* class 0 */
		cr_expect_eq(gsoi_syncookie_check(key, &k, isn, c - 1, T0), 0);
	}
}

Test(syncookie, age)
{
	struct tcp_key k = key_v4();
	uint32_t c = gsoi_syncookie_make(key, &k, 99, T0, 1460, NULL);

	cr_expect_eq(gsoi_syncookie_check(key, &k, 99, c, T0), 1460);
	cr_expect_eq(gsoi_syncookie_check(key, &k, 99, c, S(1001) + 30000000000ull), 1460, "next slot");
	cr_expect_eq(gsoi_syncookie_check(key, &k, 99, c, S(1002)), 0, "two slots later");
	cr_expect_eq(gsoi_syncookie_check(key, &k, 99, c, S(1003)), 0);
	cr_expect_eq(gsoi_syncookie_check(key, &k, 99, c, S(1000) - 1), 0, "from the future");
	cr_expect_eq(gsoi_syncookie_check(key, &k, 99, c, S(1000 + 256)), 0, "the same slot byte, 256 later");
	cr_expect_eq(gsoi_syncookie_check(key, &k, 99, c, S(1000 + 257)), 0);
}

Test(syncookie, slot_wrap)
{
	struct tcp_key k = key_v6();

	/* The slot byte goes from 255 to 0. */
	for (uint64_t base = 255; base < 256 * 5; base += 256) {
		uint32_t c = gsoi_syncookie_make(key, &k, 1, S(base) + 1, 8940, NULL);

		cr_expect_eq(gsoi_syncookie_check(key, &k, 1, c, S(base)), 8940, "slot %llu", (unsigned long long)base);
		cr_expect_eq(gsoi_syncookie_check(key, &k, 1, c, S(base + 1)), 8940, "slot %llu + 1",
			     (unsigned long long)base);
		cr_expect_eq(gsoi_syncookie_check(key, &k, 1, c, S(base + 2)), 0);
	}
	/* Slot 0 has no slot before it: a cookie whose byte says 255 is not one. */
	uint32_t c = gsoi_syncookie_make(key, &k, 1, S(255), 8940, NULL);

	cr_expect_eq(gsoi_syncookie_check(key, &k, 1, c, 0), 0);
	c = gsoi_syncookie_make(key, &k, 1, 0, 8940, NULL);
	cr_expect_eq(gsoi_syncookie_check(key, &k, 1, c, 0), 8940);
	cr_expect_eq(gsoi_syncookie_check(key, &k, 1, c, S(1)), 8940);
}

static uint64_t rng = 0x9d2c5680a1b2c3d4ull;

static uint32_t rnd32(void) /* xorshift64* */
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545F4914F6CDD1Dull) >> 32);
}

/*
 * A random value passes with probability 2/256 (its top byte, H1 taken
 * away, must name this slot or the one before) times 4/2^24 (its low 24
 * bits, H2 taken away, must be an MSS class): 2^-29.  Over 10^6 values
 * that is 0.0019 expected, and 3 or more has a probability near 10^-9: a
 * count above 2 means the check lets through far more than it should.
 */
Test(syncookie, random_values_rejected)
{
	struct tcp_key k = key_v4();
	unsigned pass = 0;

	for (unsigned i = 0; i < 1000000; i++) {
		uint32_t isn = rnd32(), cookie = rnd32();

		pass += gsoi_syncookie_check(key, &k, isn, cookie, T0) != 0;
	}
	cr_expect_leq(pass, 2, "%u of 10^6 random cookies accepted", pass);
	cr_log_info("syncookie: %u of 10^6 random (cookie, isn) pairs accepted", pass);
}

Test(syncookie, ts_options_round_trip)
{
	const uint32_t tsvals[] = { 0, 1, 31, 63, 64, 1000, 0x12345678u, 0xFFFFFFC0u, 0xFFFFFFFFu };

	for (unsigned t = 0; t < sizeof(tsvals) / sizeof(tsvals[0]); t++) {
		for (int ws = -1; ws <= 14; ws++) {
			for (int sack = 0; sack < 2; sack++) {
				uint32_t ts = gsoi_syncookie_tsval(tsvals[t], ws, sack);
				int w = 99;
				bool s = !sack;

				/* Never after the clock's value, and at most 63 before it (mod 2^32). */
				cr_assert_lt(tsvals[t] - ts, 64u, "tsval %u ws %d sack %d: %u", tsvals[t], ws, sack, ts);
				cr_assert(gsoi_syncookie_ts_decode(ts, &w, &s));
				cr_assert_eq(w, ws, "tsval %u ws %d", tsvals[t], ws);
				cr_assert_eq(s, (bool)sack);
			}
		}
	}
	/* Out of range in: a shift past 14 is 14 (RFC 7323), a negative one none. */
	int w;
	bool s;

	cr_assert(gsoi_syncookie_ts_decode(gsoi_syncookie_tsval(5000, 15, true), &w, &s));
	cr_expect_eq(w, 14);
	cr_assert(gsoi_syncookie_ts_decode(gsoi_syncookie_tsval(5000, 200, false), &w, &s));
	cr_expect_eq(w, 14);
	cr_assert(gsoi_syncookie_ts_decode(gsoi_syncookie_tsval(5000, -7, false), &w, &s));
	cr_expect_eq(w, -1);
	/* The reserved bit set: not ours, nothing written. */
	w = 42;
	s = true;
	cr_expect_not(gsoi_syncookie_ts_decode(0x20, &w, &s));
	cr_expect_not(gsoi_syncookie_ts_decode(0x12345678u | 0x20, &w, &s));
	cr_expect_eq(w, 42);
	cr_expect(s);
}
