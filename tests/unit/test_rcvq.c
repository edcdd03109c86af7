/*
 * A stream's receive queue (xdp/tcp/rcvq.c): in-order and out-of-order
 * bytes, range merges and the four-range limit, SACK order, duplicates,
 * old and cut-off parts, the ring's wrap and the sequence space's, and a
 * randomized run (fixed seed) against a byte-per-byte model.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tcp/rcvq_internal.h"

/* The sender's stream: the byte at stream offset x. */
static uint8_t sbyte(uint64_t x)
{
	return (uint8_t)((x * 0x9E3779B1u) >> 11 ^ x);
}

static uint8_t stream[1 << 16]; /* sbyte(0..) for the fixed tests */

static void fill_stream(void)
{
	for (uint32_t i = 0; i < sizeof(stream); i++)
		stream[i] = sbyte(i);
}

/* Put stream bytes [a, b) (offsets from isn) with the ring's own right edge as the limit. */
static struct rcvq_res put(struct rcvq *q, uint32_t isn, uint32_t a, uint32_t b)
{
	struct rcvq_res res;

	gsoi_rcvq_put(q, isn + a, stream + a, b - a, q->head + q->size, &res);
	return res;
}

/* Read n bytes and check they are stream bytes from offset `at`. */
static void read_check(struct rcvq *q, uint32_t at, uint32_t n)
{
	uint8_t out[4096];

	cr_assert_leq(n, sizeof(out));
	cr_assert_eq(gsoi_rcvq_read(q, out, n), n);
	cr_assert_arr_eq(out, stream + at, n, "bytes at %u", at);
}

static void init(struct rcvq *q, uint32_t size, uint32_t isn)
{
	fill_stream();
	cr_assert_eq(gsoi_rcvq_init(q, size, isn), 0);
}

Test(rcvq, init_bad)
{
	struct rcvq q;

	cr_expect_eq(gsoi_rcvq_init(NULL, 100, 0), -EINVAL);
	cr_expect_eq(gsoi_rcvq_init(&q, 0, 0), -EINVAL);
	cr_expect_eq(gsoi_rcvq_init(&q, RCVQ_MAX_SIZE + 1, 0), -EINVAL);
	cr_assert_eq(gsoi_rcvq_init(&q, 100, 7), 0);
	cr_expect_eq(q.head, 7);
	cr_expect_eq(q.nxt, 7);
	cr_expect_eq(q.nranges, 0);
	cr_expect_eq(gsoi_rcvq_readable(&q), 0);
	cr_expect_eq(gsoi_rcvq_free_space(&q), 100);
	gsoi_rcvq_free(&q);
	gsoi_rcvq_free(&q);
	gsoi_rcvq_free(NULL);
}

Test(rcvq, in_order)
{
	struct rcvq q;
	const uint8_t *p = (const uint8_t *)1;

	init(&q, 1000, 5000);
	cr_expect_eq(gsoi_rcvq_peek(&q, &p), 0);
	cr_expect_null(p);
	struct rcvq_res r = put(&q, 5000, 0, 100);

	cr_expect_eq(r.advanced, 100);
	cr_expect(!r.dup && !r.ooo_held && !r.ooo_dropped && !r.hole_filled && !r.beyond);
	r = put(&q, 5000, 100, 300);
	cr_expect_eq(r.advanced, 200);
	cr_expect_eq(q.nxt, 5300);
	cr_expect_eq(gsoi_rcvq_readable(&q), 300);
	cr_expect_eq(gsoi_rcvq_free_space(&q), 700);
	cr_expect_eq(gsoi_rcvq_peek(&q, &p), 300);
	cr_expect_arr_eq(p, stream, 300);
	read_check(&q, 0, 120);
	cr_expect_eq(q.head, 5120);
	cr_expect_eq(gsoi_rcvq_free_space(&q), 820);
	read_check(&q, 120, 180);
	cr_expect_eq(gsoi_rcvq_read(&q, p ? (void *)stream : NULL, 10), 0);
	gsoi_rcvq_free(&q);
}

/* A small ring whose sequence numbers cross 2^32: bytes read back in order, many times round. */
Test(rcvq, wrap_ring_and_seq)
{
	struct rcvq q;
	const uint32_t isn = 0xFFFFFF00u;
	uint32_t at = 0, rd = 0;

	init(&q, 256, isn);
	/* 100-byte segments into a 256-byte ring, reads of 70: the ring wraps at every place. */
	while (at < 20000) {
		uint32_t n = 100;

		if (n > gsoi_rcvq_free_space(&q))
			n = gsoi_rcvq_free_space(&q);
		if (n) {
			struct rcvq_res r = put(&q, isn, at, at + n);

			cr_assert_eq(r.advanced, n, "at %u", at);
			at += n;
		}
		uint32_t m = gsoi_rcvq_readable(&q) < 70 ? gsoi_rcvq_readable(&q) : 70;

		read_check(&q, rd, m);
		rd += m;
	}
	cr_expect_eq(q.nxt, isn + at);
	cr_expect_lt(q.nxt, isn, "sequence numbers wrapped");
	gsoi_rcvq_free(&q);
}

Test(rcvq, ooo_then_fill)
{
	struct rcvq q;
	uint32_t isn = 0xFFFFFFF0u; /* the hole straddles 2^32 */

	init(&q, 1000, isn);
	struct rcvq_res r = put(&q, isn, 10, 20);

	cr_expect(r.ooo_held);
	cr_expect_eq(r.advanced, 0);
	cr_expect(!r.dup && !r.hole_filled && !r.ooo_dropped);
	cr_expect_eq(q.nranges, 1);
	cr_expect_eq(q.r[0].start, isn + 10);
	cr_expect_eq(q.r[0].end, isn + 20);
	cr_expect_eq(gsoi_rcvq_readable(&q), 0);
	/* Part of the hole: still a hole. */
	r = put(&q, isn, 0, 5);
	cr_expect_eq(r.advanced, 5);
	cr_expect(!r.hole_filled && !r.ooo_held);
	/* The rest: nxt jumps over the range. */
	r = put(&q, isn, 5, 10);
	cr_expect_eq(r.advanced, 15);
	cr_expect(r.hole_filled);
	cr_expect(!r.ooo_held && !r.dup);
	cr_expect_eq(q.nranges, 0);
	cr_expect_eq(q.nxt, isn + 20);
	read_check(&q, 0, 20);
	gsoi_rcvq_free(&q);
}

/* A chain: filling the first hole swallows ranges that reach each other in any r[] order. */
Test(rcvq, fill_chain)
{
	struct rcvq q;

	init(&q, 1000, 0);
	put(&q, 0, 30, 40);
	put(&q, 0, 10, 20);
	put(&q, 0, 50, 60);
	cr_expect_eq(q.nranges, 3);
	/* [5, 30) reaches [10, 20) and, over it, [30, 40); [50, 60) stays. */
	struct rcvq_res r = put(&q, 0, 5, 30);

	cr_expect_eq(q.nranges, 2, "out of order: joined into one");
	cr_expect_eq(q.r[0].start, 5);
	cr_expect_eq(q.r[0].end, 40);
	cr_expect(r.ooo_held);
	r = put(&q, 0, 0, 5);
	cr_expect_eq(r.advanced, 40);
	cr_expect(r.hole_filled);
	cr_expect_eq(q.nranges, 1);
	cr_expect_eq(q.r[0].start, 50);
	read_check(&q, 0, 40);
	r = put(&q, 0, 40, 55); /* overlaps the last range */
	cr_expect_eq(r.advanced, 20);
	cr_expect(r.hole_filled);
	cr_expect_eq(q.nranges, 0);
	read_check(&q, 40, 20);
	gsoi_rcvq_free(&q);
}

Test(rcvq, five_ranges_fifth_dropped)
{
	struct rcvq q;

	init(&q, 1000, 100);
	for (uint32_t i = 0; i < 4; i++) {
		struct rcvq_res r = put(&q, 100, 10 + 20 * i, 20 + 20 * i);

		cr_expect(r.ooo_held && !r.ooo_dropped);
	}
	cr_expect_eq(q.nranges, 4);
	struct rcvq r0 = q;
	struct rcvq_res r = put(&q, 100, 100, 110);

	cr_expect(r.ooo_dropped);
	cr_expect(!r.ooo_held && !r.dup);
	cr_expect_eq(r.advanced, 0);
	cr_expect_eq(q.nranges, 4);
	cr_expect_arr_eq(q.r, r0.r, sizeof(q.r), "ranges unchanged");
	/* Touching a range needs no new one: held. */
	r = put(&q, 100, 80, 85);
	cr_expect(r.ooo_held && !r.ooo_dropped);
	cr_expect_eq(q.r[0].start, 170);
	cr_expect_eq(q.r[0].end, 185);
	/* Bridging two ranges frees one; then the fifth fits. */
	r = put(&q, 100, 20, 30);
	cr_expect(r.ooo_held);
	cr_expect_eq(q.nranges, 3);
	cr_expect_eq(q.r[0].start, 110);
	cr_expect_eq(q.r[0].end, 140);
	r = put(&q, 100, 100, 110);
	cr_expect(r.ooo_held && !r.ooo_dropped);
	cr_expect_eq(q.nranges, 4);
	/* In-order data is never dropped for want of a range. */
	r = put(&q, 100, 0, 5);
	cr_expect_eq(r.advanced, 5);
	cr_expect(!r.ooo_dropped);
	gsoi_rcvq_free(&q);
}

Test(rcvq, merges)
{
	struct rcvq q;

	init(&q, 1000, 0);
	put(&q, 0, 10, 20);
	struct rcvq_res r = put(&q, 0, 20, 30); /* adjacent after */

	cr_expect(r.ooo_held && !r.dup);
	cr_expect_eq(q.nranges, 1);
	cr_expect_eq(q.r[0].start, 10);
	cr_expect_eq(q.r[0].end, 30);
	put(&q, 0, 5, 10); /* adjacent before */
	cr_expect_eq(q.nranges, 1);
	cr_expect_eq(q.r[0].start, 5);
	put(&q, 0, 25, 40); /* overlapping the end */
	cr_expect_eq(q.nranges, 1);
	cr_expect_eq(q.r[0].end, 40);
	put(&q, 0, 60, 70);
	put(&q, 0, 80, 90);
	cr_expect_eq(q.nranges, 3);
	r = put(&q, 0, 2, 100); /* covers all three */
	cr_expect(r.ooo_held && !r.dup);
	cr_expect_eq(q.nranges, 1);
	cr_expect_eq(q.r[0].start, 2);
	cr_expect_eq(q.r[0].end, 100);
	r = put(&q, 0, 0, 2);
	cr_expect_eq(r.advanced, 100);
	read_check(&q, 0, 100);
	gsoi_rcvq_free(&q);
}

Test(rcvq, sack_most_recent_first)
{
	struct rcvq q;
	uint32_t b[4][2];

	init(&q, 1000, 1000);
	cr_expect_eq(gsoi_rcvq_sack(&q, b, 4), 0);
	put(&q, 1000, 10, 20);
	put(&q, 1000, 30, 40);
	put(&q, 1000, 50, 60);
	cr_assert_eq(gsoi_rcvq_sack(&q, b, 4), 3);
	uint32_t want[3][2] = { { 1050, 1060 }, { 1030, 1040 }, { 1010, 1020 } };

	cr_expect_arr_eq(b, want, sizeof(want));
	/* A repeat inside the oldest range makes it the first (RFC 2018 section 4). */
	struct rcvq_res r = put(&q, 1000, 12, 14);

	cr_expect(r.dup && r.ooo_held);
	cr_assert_eq(gsoi_rcvq_sack(&q, b, 2), 2, "max honoured");
	uint32_t want2[2][2] = { { 1010, 1020 }, { 1050, 1060 } };

	cr_expect_arr_eq(b, want2, sizeof(want2));
	/* Filling the first hole removes that range; the others keep their order. */
	put(&q, 1000, 0, 10);
	cr_assert_eq(gsoi_rcvq_sack(&q, b, 4), 2);
	uint32_t want3[2][2] = { { 1050, 1060 }, { 1030, 1040 } };

	cr_expect_arr_eq(b, want3, sizeof(want3));
	gsoi_rcvq_free(&q);
}

Test(rcvq, dup)
{
	struct rcvq q;
	struct rcvq_res r;

	init(&q, 1000, 0xFFFFFFFFu);
	put(&q, 0xFFFFFFFFu, 0, 50);
	r = put(&q, 0xFFFFFFFFu, 0, 50);
	cr_expect(r.dup);
	cr_expect_eq(r.advanced, 0);
	cr_expect(!r.ooo_held && !r.beyond);
	r = put(&q, 0xFFFFFFFFu, 10, 20);
	cr_expect(r.dup);
	/* Far behind (more than 2^31 would be ahead): old. */
	gsoi_rcvq_put(&q, q.nxt - 0x7FFFFFF0u, stream, 10, q.head + q.size, &r);
	cr_expect(r.dup);
	/* An out-of-order repeat. */
	put(&q, 0xFFFFFFFFu, 100, 120);
	r = put(&q, 0xFFFFFFFFu, 100, 120);
	cr_expect(r.dup && r.ooo_held);
	/* Partly new out of order: not a duplicate. */
	r = put(&q, 0xFFFFFFFFu, 110, 121);
	cr_expect(!r.dup && r.ooo_held);
	/* An empty segment is nothing. */
	gsoi_rcvq_put(&q, q.nxt, stream, 0, q.head + q.size, &r);
	cr_expect(!r.dup && !r.advanced && !r.beyond && !r.ooo_held);
	/* Old and held, with a hole between: every byte known, so a duplicate. */
	r = put(&q, 0xFFFFFFFFu, 40, 50);
	cr_expect(r.dup);
	read_check(&q, 0, 50);
	gsoi_rcvq_free(&q);
}

Test(rcvq, partial_old)
{
	struct rcvq q;

	init(&q, 1000, 77);
	put(&q, 77, 0, 100);
	read_check(&q, 0, 60);
	/* 60..100 are unread but received: only 100..150 is new. */
	struct rcvq_res r = put(&q, 77, 50, 150);

	cr_expect_eq(r.advanced, 50);
	cr_expect(!r.dup);
	/* Partly old, the rest out of order. */
	r = put(&q, 77, 140, 145);
	cr_expect(r.dup);
	gsoi_rcvq_put(&q, 77 + 140, stream + 140, 20, q.head + q.size, &r);
	cr_expect_eq(r.advanced, 10);
	read_check(&q, 60, 100);
	gsoi_rcvq_free(&q);
}

Test(rcvq, beyond_limit_and_size)
{
	struct rcvq q;
	struct rcvq_res r;

	init(&q, 100, 0x7FFFFFF0u);
	uint32_t isn = 0x7FFFFFF0u;

	/* The advertised window ends at 50: 10 bytes cut. */
	gsoi_rcvq_put(&q, isn, stream, 60, isn + 50, &r);
	cr_expect_eq(r.advanced, 50);
	cr_expect_eq(r.beyond, 10);
	cr_expect(!r.dup);
	/* Entirely past the window: cut, not a duplicate, nothing held. */
	gsoi_rcvq_put(&q, isn + 60, stream + 60, 10, isn + 50, &r);
	cr_expect_eq(r.beyond, 10);
	cr_expect(!r.dup && !r.ooo_held && !r.ooo_dropped);
	cr_expect_eq(q.nranges, 0);
	/* A zero window probe: one byte at nxt, window closed. */
	gsoi_rcvq_put(&q, isn + 50, stream + 50, 1, isn + 50, &r);
	cr_expect_eq(r.beyond, 1);
	cr_expect_eq(r.advanced, 0);
	/* A limit behind nxt counts as a closed window. */
	gsoi_rcvq_put(&q, isn + 50, stream + 50, 5, isn + 40, &r);
	cr_expect_eq(r.beyond, 5);
	/* A limit past the ring: the ring's end (head + 100) cuts. */
	gsoi_rcvq_put(&q, isn + 50, stream + 50, 80, isn + 100000, &r);
	cr_expect_eq(r.advanced, 50);
	cr_expect_eq(r.beyond, 30);
	cr_expect_eq(gsoi_rcvq_free_space(&q), 0);
	/* Out of order, partly past the edge. */
	read_check(&q, 0, 30);
	gsoi_rcvq_put(&q, isn + 120, stream + 120, 20, isn + 1000, &r);
	cr_expect(r.ooo_held);
	cr_expect_eq(r.beyond, 10);
	cr_expect_eq(q.r[0].end, isn + 130);
	/* Partly old and partly beyond, nothing new in between: not a duplicate. */
	gsoi_rcvq_put(&q, isn + 90, stream + 90, 50, isn + 1000, &r);
	cr_expect_eq(r.advanced, 30);
	cr_expect(r.hole_filled);
	cr_expect_eq(r.beyond, 10);
	gsoi_rcvq_put(&q, isn + 90, stream + 90, 50, isn + 1000, &r);
	cr_expect(!r.dup);
	cr_expect_eq(r.beyond, 10);
	read_check(&q, 30, 100);
	gsoi_rcvq_free(&q);
}

Test(rcvq, read_peek_consume_across_wrap)
{
	struct rcvq q;
	const uint8_t *p;
	uint8_t out[32];

	init(&q, 16, 0);
	put(&q, 0, 0, 12);
	gsoi_rcvq_consume(&q, 12); /* the ring's head at index 12 */
	cr_expect_eq(gsoi_rcvq_readable(&q), 0);
	put(&q, 0, 12, 22); /* 4 bytes at the end, 6 at the start */
	cr_expect_eq(gsoi_rcvq_readable(&q), 10);
	cr_expect_eq(gsoi_rcvq_free_space(&q), 6);
	cr_assert_eq(gsoi_rcvq_peek(&q, &p), 4);
	cr_expect_eq(p, q.buf + 12);
	cr_expect_arr_eq(p, stream + 12, 4);
	gsoi_rcvq_consume(&q, 4);
	cr_assert_eq(gsoi_rcvq_peek(&q, &p), 6);
	cr_expect_eq(p, q.buf);
	cr_expect_arr_eq(p, stream + 16, 6);
	gsoi_rcvq_consume(&q, 1);
	put(&q, 0, 22, 33); /* fills the ring but one... */
	cr_expect_eq(gsoi_rcvq_readable(&q), 16);
	/* A read across the wrap, asking for more than there is. */
	cr_expect_eq(gsoi_rcvq_read(&q, out, sizeof(out)), 16);
	cr_expect_arr_eq(out, stream + 17, 16);
	cr_expect_eq(gsoi_rcvq_readable(&q), 0);
	cr_expect_eq(gsoi_rcvq_free_space(&q), 16);
	gsoi_rcvq_free(&q);
}

/* ---- randomized, against a model that keeps a flag per byte ---- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n) /* 0..n-1 (xorshift64*) */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 32) % n;
}

#define M_TOTAL (1u << 21) /* stream bytes the model can hold */
#define M_SIZE 3000u       /* the ring: not a power of two */

struct model {
	uint8_t *have;     /* per stream offset: received */
	uint64_t head, nxt;
	unsigned runs;     /* maximal runs of received bytes after nxt */
	uint64_t run[64][2];
};

static void model_runs(struct model *m)
{
	m->runs = 0;
	for (uint64_t x = m->nxt; x < m->head + M_SIZE; x++) {
		if (!m->have[x])
			continue;
		uint64_t y = x;

		while (y < m->head + M_SIZE && m->have[y])
			y++;
		cr_assert_lt(m->runs, 64);
		m->run[m->runs][0] = x;
		m->run[m->runs][1] = y;
		m->runs++;
		x = y;
	}
}

struct seg {
	uint64_t a;
	uint32_t len;
};

Test(rcvq, random_vs_model)
{
	const uint32_t isn = 0xFFFF0000u; /* the sequence space wraps early in the run */
	struct rcvq q;
	struct model m = { .have = calloc(M_TOTAL, 1) };
	struct seg net[12];
	unsigned nnet = 0;
	uint64_t snd = 0, rd = 0;
	uint8_t *data = malloc(M_TOTAL + 4096);
	uint8_t out[4096];
	unsigned puts = 0, drops = 0, fills = 0, dups = 0, cut = 0, held = 0;

	cr_assert(m.have && data);
	for (uint32_t i = 0; i < M_TOTAL + 4096; i++)
		data[i] = sbyte(i);
	rng_state = 0x5eed1234abcdull;
	cr_assert_eq(gsoi_rcvq_init(&q, M_SIZE, isn), 0);

	while (snd + 4096 < M_TOTAL - M_SIZE) {
		struct seg s;
		uint32_t act = rnd(100);

		if (act < 25) {
			/* New data; the sender may run past our window. */
			if (nnet == 12 || snd > m.head + M_SIZE + M_SIZE / 4)
				continue;
			net[nnet++] = (struct seg){ snd, 1 + rnd(250) };
			snd += net[nnet - 1].len;
			continue;
		} else if (act < 65) {
			/* The network delivers one at random (reordering), loses some, duplicates some. */
			if (!nnet)
				continue;
			unsigned i = rnd(nnet);

			s = net[i];
			if (rnd(100) >= 10)
				net[i] = net[--nnet];
			if (rnd(100) < 8)
				continue;
		} else if (act < 80) {
			/* A retransmission: from nxt, or anywhere near the window. */
			uint64_t lo = m.nxt > 300 ? m.nxt - 300 : 0;

			s.a = rnd(3) ? m.nxt : lo + rnd((uint32_t)(snd + 1 - lo));
			s.len = 1 + rnd(500);
			if (s.a + s.len > snd)
				snd = s.a + s.len; /* a retransmission from nxt may send new bytes too */
		} else {
			/* The application reads some, or peeks and consumes. */
			uint32_t n = rnd(sizeof(out) / 2);
			uint32_t got;

			if (rnd(2)) {
				got = gsoi_rcvq_read(&q, out, n);
			} else {
				const uint8_t *p;

				got = gsoi_rcvq_peek(&q, &p);
				if (got > n)
					got = n;
				if (got)
					memcpy(out, p, got);
				gsoi_rcvq_consume(&q, got);
			}
			uint32_t want = (uint32_t)(m.nxt - m.head) < n ? (uint32_t)(m.nxt - m.head) : n;

			/* A peek ends at the ring's end; a read does not. */
			if (got != want)
				cr_assert(got < want && q.off == 0, "read at %llu", (unsigned long long)rd);
			cr_assert_arr_eq(out, data + rd, got, "bytes at %llu", (unsigned long long)rd);
			rd += got;
			m.head += got;
			continue;
		}

		/* The limit: usually the ring's end, sometimes a window advertised smaller. */
		uint64_t lim = m.head + M_SIZE;

		if (rnd(5) == 0)
			lim = m.nxt + rnd(M_SIZE - (uint32_t)(m.nxt - m.head) + 1);

		/* What the model expects. */
		uint64_t a = s.a, b = s.a + s.len;
		uint64_t lo = a > m.nxt ? a : m.nxt, hi = b < lim ? b : lim;
		uint32_t beyond = b > lim ? (uint32_t)(b - (a > lim ? a : lim)) : 0;
		uint32_t fresh = 0;
		uint64_t nxt_before = m.nxt, first_held = UINT64_MAX;

		model_runs(&m);
		for (unsigned i = 0; i < m.runs; i++)
			if (m.run[i][0] < first_held)
				first_held = m.run[i][0];
		for (uint64_t x = lo; x < hi; x++) {
			fresh += !m.have[x];
			m.have[x] = 1;
		}
		model_runs(&m);
		/* Out of order, and one run more than RCVQ_MAX_RANGES: it joined none, dropped. */
		bool dropped = lo < hi && lo > m.nxt && m.runs > RCVQ_MAX_RANGES;

		if (dropped)
			for (uint64_t x = lo; x < hi; x++)
				m.have[x] = 0; /* all were fresh: it touched nothing held */
		while (m.have[m.nxt])
			m.nxt++;
		model_runs(&m);
		bool filled = m.nxt > nxt_before && first_held < m.nxt;

		struct rcvq_res r;

		gsoi_rcvq_put(&q, isn + (uint32_t)s.a, data + s.a, s.len, isn + (uint32_t)lim, &r);
		puts++;
		cr_assert_eq(r.beyond, beyond, "put %u: a %llu len %u nxt %llu head %llu lim %llu: %u", puts, (unsigned long long)a, s.len, (unsigned long long)nxt_before, (unsigned long long)m.head, (unsigned long long)lim, r.beyond);
		cr_assert_eq(r.advanced, (uint32_t)(m.nxt - nxt_before), "put %u", puts);
		cr_assert_eq(r.ooo_dropped, dropped, "put %u", puts);
		cr_assert_eq(r.dup, !fresh && !beyond, "put %u", puts);
		cr_assert_eq(r.hole_filled, filled, "put %u", puts);
		cr_assert_eq(r.ooo_held, lo < hi && lo > nxt_before && !dropped, "put %u", puts);
		cr_assert_eq(q.nxt, isn + (uint32_t)m.nxt, "put %u", puts);
		cr_assert_eq(q.head, isn + (uint32_t)m.head);
		cr_assert_eq(q.nranges, m.runs, "put %u", puts);
		/* The ranges are the model's runs, the segment's first. */
		for (unsigned i = 0; i < m.runs; i++) {
			bool found = false;

			for (unsigned j = 0; j < q.nranges; j++)
				found |= q.r[j].start == isn + (uint32_t)m.run[i][0] &&
					 q.r[j].end == isn + (uint32_t)m.run[i][1];
			cr_assert(found, "put %u: run %u", puts, i);
		}
		if (r.ooo_held)
			cr_assert(q.r[0].start - q.nxt <= (uint32_t)(lo - m.nxt) &&
					  q.r[0].end - q.nxt >= (uint32_t)(hi - m.nxt),
				  "put %u: r[0] holds the segment", puts);
		drops += r.ooo_dropped;
		fills += r.hole_filled;
		dups += r.dup;
		cut += !!r.beyond;
		held += r.ooo_held;
	}
	/* Read the rest, then check the run did what it was meant to. */
	uint32_t n;

	while ((n = gsoi_rcvq_read(&q, out, sizeof(out))) > 0) {
		cr_assert_arr_eq(out, data + rd, n);
		rd += n;
	}
	cr_expect_eq(rd, m.nxt);
	cr_expect_gt(rd, M_TOTAL / 2, "the stream got through: %llu", (unsigned long long)rd);
	cr_expect_gt(puts, 5000);
	cr_expect_gt(drops, 50);
	cr_expect_gt(fills, 500);
	cr_expect_gt(dups, 1000);
	cr_expect_gt(cut, 100);
	cr_expect_gt(held, 1000);
	cr_log_info("rcvq random: %u puts, %u held, %u dropped, %u holes filled, %u dups, %u cut, %llu bytes read",
		    puts, held, drops, fills, dups, cut, (unsigned long long)rd);
	gsoi_rcvq_free(&q);
	free(m.have);
	free(data);
}
