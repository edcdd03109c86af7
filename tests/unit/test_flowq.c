/*
 * Flow send queue (gso/flowq.h): append, send, partial and cumulative ACKs,
 * SACK, loss marking, retransmit extraction, windows, wrap-around and bad
 * input.  Every row checks gso_flowq__check() (all counters recomputed from
 * the entries) after each step, so a count cached across an append, trim
 * or split (the 2004 tso_factor bug) fails here.  Tables run as one test
 * each, every row named in its messages.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <gso/flowq.h>
#include "gso_test.h"

#define REL_MAX 64

static struct gso_flowq *mkq(uint32_t isn, uint32_t cap, uint32_t max_bytes, uint32_t flags)
{
	GSO_OPTS(gso_flowq_opts, o, .isn = isn, .max_entries = cap, .max_bytes = max_bytes,
		 .flags = flags);
	struct gso_flowq *q = NULL;

	cr_assert_eq(gso_flowq__create(&q, &o), 0);
	return q;
}

static struct gso_flowq_info info(const struct gso_flowq *q)
{
	GSO_OPTS(gso_flowq_info, st);

	cr_assert_eq(gso_flowq__info(q, &st), 0);
	return st;
}

/* 0 when the queue's state equals `before` (memcmp-style, for cr_expect_eq). */
static int unchanged(const struct gso_flowq *q, const struct gso_flowq_info *before)
{
	struct gso_flowq_info now = info(q);

	return memcmp(&now, before, sizeof(now));
}

#define CHECK(q, ...) cr_assert_eq(gso_flowq__check(q), 0, __VA_ARGS__)

/* Send everything sendable, at most `segs` per range; returns ranges sent. */
static int send_all(struct gso_flowq *q, uint32_t segs, uint64_t now)
{
	struct gso_flowq_tx tx = { .sz = sizeof(tx) };
	int n = 0;

	while (gso_flowq__peek(q, segs, &tx) == 1) {
		cr_assert_eq(gso_flowq__sent(q, &tx, now), 0);
		CHECK(q, "after sent seq %u len %u", tx.seq, tx.len);
		n++;
	}
	return n;
}

static int ack(struct gso_flowq *q, uint32_t seq, uint32_t wnd, uint64_t now, unsigned nsack,
	       const struct gso_flowq_sack *sk, struct gso_flowq_ack_res *res,
	       struct gso_flowq_rel *rel, unsigned nrel)
{
	GSO_OPTS(gso_flowq_ack, a, .ack = seq, .wnd = wnd, .now_ns = now, .n_sack = nsack);
	for (unsigned i = 0; i < nsack; i++)
		a.sack[i] = sk[i];
	return gso_flowq__ack(q, &a, res, rel, nrel);
}

#define WND (1u << 24)

/* ---- options ---------------------------------------------------------- */

Test(flowq, options)
{
	struct {
		const char *name;
		uint32_t cap, max_bytes, dupthresh, flags;
		int err;
	} rows[] = {
		{ "defaults", 0, 0, 0, 0, 0 },
		{ "smallest", 2 * GSO_FLOWQ_RESERVE, 1, 1, GSO_FLOWQ_F_NO_SACK, 0 },
		{ "cap below reserve", 2 * GSO_FLOWQ_RESERVE - 1, 0, 0, 0, -EINVAL },
		{ "cap too big", GSO_FLOWQ_MAX_ENTRIES + 1, 0, 0, 0, -EINVAL },
		{ "max_bytes too big", 0, 65536, 0, 0, -EINVAL },
		{ "dupthresh too big", 0, 0, 256, 0, -EINVAL },
		{ "unknown flag", 0, 0, 0, 4, -EINVAL },
		{ "both flags", 0, 0, 0, GSO_FLOWQ_F_NO_SACK | GSO_FLOWQ_F_NO_RACK, 0 },
	};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		GSO_OPTS(gso_flowq_opts, o, .max_entries = rows[r].cap, .max_bytes = rows[r].max_bytes,
			 .dupthresh = rows[r].dupthresh, .flags = rows[r].flags);
		struct gso_flowq *q = NULL;

		cr_expect_eq(gso_flowq__create(&q, &o), rows[r].err, "%s", rows[r].name);
		cr_expect_eq(gso_flowq__mem_size(&o) == 0, rows[r].err != 0, "%s", rows[r].name);
		if (!rows[r].err)
			CHECK(q, "%s", rows[r].name);
		gso_flowq__destroy(q);
	}

	/* Unknown non-zero tail, short sz, caller memory checks. */
	struct { struct gso_flowq_opts o; uint64_t extra; } big;
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.extra = 1;
	struct gso_flowq *q = NULL;
	cr_expect_eq(gso_flowq__create(&q, &big.o), -EINVAL);
	big.extra = 0;
	cr_expect_eq(gso_flowq__create(&q, &big.o), 0);
	gso_flowq__destroy(q);
	struct gso_flowq_opts tiny = { .sz = 1 };
	cr_expect_eq(gso_flowq__create(&q, &tiny), -EINVAL);

	size_t need = gso_flowq__mem_size(NULL);
	cr_assert_gt(need, 0);
	static uint64_t mem[(1u << 20) / 8];
	cr_assert_leq(need, sizeof(mem));
	cr_expect_eq(gso_flowq__init(&q, (char *)mem + 4, need, NULL), -EINVAL);
	cr_expect_eq(gso_flowq__init(&q, mem, need - 1, NULL), -ENOSPC);
	cr_expect_eq(gso_flowq__init(NULL, mem, need, NULL), -EINVAL);
	cr_expect_eq(gso_flowq__init(&q, mem, need, NULL), 0);
	CHECK(q, "init");
	gso_flowq__destroy(q); /* caller memory: no-op */
	gso_flowq__destroy(NULL);
}

/* ---- append ----------------------------------------------------------- */

struct app {
	uint64_t h;
	uint32_t off, len, mss;
	int err;
};

Test(flowq, append)
{
	struct {
		const char *name;
		uint32_t max_bytes;
		struct app a[4];
		uint32_t entries, unsent_segs, bytes;
	} rows[] = {
		{ "one entry", 0, { { 1, 0, 1448, 1448, 0 } }, 1, 1, 1448 },
		{ "sub-MSS", 0, { { 1, 0, 100, 1448, 0 } }, 1, 1, 100 },
		/* limit = 10000/1000*1000 = 10000: 25000 -> 10000 + 10000 + 5000 */
		{ "split at limit", 10000, { { 1, 0, 25000, 1000, 0 } }, 3, 25, 25000 },
		/* limit = 10000/1448*1448 = 8688 (whole segments) */
		{ "limit on MSS grid", 10000, { { 1, 0, 10000, 1448, 0 } }, 2, 7, 10000 },
		{ "grow tail", 0, { { 1, 0, 500, 1000, 0 }, { 1, 500, 700, 1000, 0 } }, 1, 2, 1200 },
		{ "grow tail to limit", 3000, { { 1, 0, 2500, 1000, 0 }, { 1, 2500, 1000, 1000, 0 } }, 2, 4, 3500 },
		{ "other handle", 0, { { 1, 0, 500, 1000, 0 }, { 2, 500, 700, 1000, 0 } }, 2, 2, 1200 },
		{ "gap in offsets", 0, { { 1, 0, 500, 1000, 0 }, { 1, 600, 700, 1000, 0 } }, 2, 2, 1200 },
		{ "other mss", 0, { { 1, 0, 500, 1000, 0 }, { 1, 500, 700, 536, 0 } }, 2, 3, 1200 },
		{ "len 0", 0, { { 1, 0, 0, 1000, -EINVAL } }, 0, 0, 0 },
		{ "mss 0", 0, { { 1, 0, 10, 0, -EINVAL } }, 0, 0, 0 },
		{ "mss over 65535", 0, { { 1, 0, 10, 65536, -EINVAL } }, 0, 0, 0 },
		{ "mss over max_bytes", 1000, { { 1, 0, 10, 1001, -EINVAL } }, 0, 0, 0 },
		{ "offset overflow", 0, { { 1, UINT32_MAX - 5, 10, 1000, -EINVAL } }, 0, 0, 0 },
		{ "bad after good", 0, { { 1, 0, 3000, 1000, 0 }, { 1, 3000, 0, 1000, -EINVAL } }, 1, 3, 3000 },
	};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct gso_flowq *q = mkq(7, 0, rows[r].max_bytes, 0);

		for (int k = 0; k < 4 && rows[r].a[k].mss + rows[r].a[k].len; k++) {
			struct gso_flowq_info before = info(q), after;
			const struct app *a = &rows[r].a[k];
			int err = gso_flowq__append(q, a->h, a->off, a->len, a->mss);

			cr_expect_eq(err, a->err, "%s: append %d: %d", rows[r].name, k, err);
			after = info(q);
			if (err)
				cr_expect_eq(memcmp(&before, &after, sizeof(before)), 0,
					     "%s: failed append changed the queue", rows[r].name);
			CHECK(q, "%s", rows[r].name);
		}
		struct gso_flowq_info st = info(q);
		cr_expect_eq(st.entries, rows[r].entries, "%s: entries %u", rows[r].name, st.entries);
		cr_expect_eq(st.unsent_segs, rows[r].unsent_segs, "%s: segs %u", rows[r].name, st.unsent_segs);
		cr_expect_eq(st.unsent_bytes, rows[r].bytes, "%s: bytes", rows[r].name);
		cr_expect_eq(st.write_seq, 7 + rows[r].bytes, "%s: write_seq", rows[r].name);
		gso_flowq__destroy(q);
	}
	cr_expect_eq(gso_flowq__append(NULL, 1, 0, 10, 10), -EINVAL);
}

Test(flowq, append_limits)
{
	/* 32 entries, 16 kept in reserve: 16 entries of 1000 bytes fit, the 17th not. */
	struct gso_flowq *q = mkq(0, 32, 1000, 0);

	cr_assert_eq(gso_flowq__append(q, 1, 0, 16000, 1000), 0);
	cr_expect_eq(info(q).entries, 16);
	struct gso_flowq_info before = info(q);
	cr_expect_eq(gso_flowq__append(q, 2, 0, 1, 1000), -ENOSPC);
	cr_expect_eq(unchanged(q, &before), 0);
	CHECK(q, "enospc");
	gso_flowq__destroy(q);

	/* Queued bytes bounded well below 2^31. */
	struct gso_flowq *big = mkq(0, GSO_FLOWQ_MAX_QUEUED / 65000 + 64, 65000, 0);
	cr_assert_eq(gso_flowq__append(big, 1, 0, GSO_FLOWQ_MAX_QUEUED - 10, 65000), 0);
	cr_expect_eq(gso_flowq__append(big, 2, 0, 11, 1000), -EOVERFLOW);
	cr_expect_eq(gso_flowq__append(big, 2, 0, 10, 1000), 0);
	CHECK(big, "max queued");
	gso_flowq__destroy(big);
}

/* ---- partial ACK at MSS and non-MSS boundaries ------------------------ */

Test(flowq, partial_ack)
{
	/* One super-segment of 10 x 1448 bytes in buffer 9 at offset 100, sent. */
	const uint32_t mss = 1448, len = 10 * 1448, isn = 1000;
	struct {
		const char *name;
		uint32_t acked;          /* bytes acknowledged */
		uint32_t acked_segs;     /* segments completed */
		uint32_t left_segs;      /* still out */
	} rows[] = {
		{ "1 byte", 1, 0, 10 },
		{ "MSS - 1", mss - 1, 0, 10 },
		{ "MSS", mss, 1, 9 },
		{ "MSS + 1", mss + 1, 1, 9 },
		{ "2 MSS", 2 * mss, 2, 8 },
		{ "2.5 MSS", 2 * mss + mss / 2, 2, 8 },
		{ "all but 1", len - 1, 9, 1 },
		{ "all", len, 10, 0 },
		{ "nothing", 0, 0, 10 },
	};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct gso_flowq *q = mkq(isn, 0, 0, 0);
		struct gso_flowq_ack_res res = { .sz = sizeof(res) };
		struct gso_flowq_rel rel[REL_MAX];

		cr_assert_eq(gso_flowq__append(q, 9, 100, len, mss), 0);
		cr_assert_eq(send_all(q, 64, 10), 1);
		cr_assert_eq(gso_flowq__set_wnd(q, WND), 0);
		cr_assert_eq(ack(q, isn + rows[r].acked, WND, 50, 0, NULL, &res, rel, REL_MAX), 0,
			     "%s", rows[r].name);
		CHECK(q, "%s", rows[r].name);
		struct gso_flowq_info st = info(q);
		cr_expect_eq(res.acked_bytes, rows[r].acked, "%s", rows[r].name);
		cr_expect_eq(res.acked_segs, rows[r].acked_segs, "%s: acked_segs %u", rows[r].name, res.acked_segs);
		cr_expect_eq(res.delivered_segs, rows[r].acked_segs, "%s", rows[r].name);
		cr_expect_eq(st.packets_out, rows[r].left_segs, "%s: out %u", rows[r].name, st.packets_out);
		cr_expect_eq(st.in_flight, rows[r].left_segs, "%s", rows[r].name);
		cr_expect_eq(st.in_flight_bytes, len - rows[r].acked, "%s", rows[r].name);
		cr_expect_eq(st.snd_una, isn + rows[r].acked, "%s", rows[r].name);
		if (rows[r].acked) {
			/* The buffer's head is released by this very ACK, byte-exact. */
			cr_expect_eq(res.n_rel, 1, "%s", rows[r].name);
			cr_expect_eq(rel[0].handle, 9, "%s", rows[r].name);
			cr_expect_eq(rel[0].upto, 100 + rows[r].acked, "%s", rows[r].name);
			cr_expect_eq(rel[0].done, rows[r].acked == len, "%s", rows[r].name);
			cr_expect_eq(res.rtt_ns, 40, "%s", rows[r].name);
			cr_expect(res.flags & GSO_FLOWQ_RES_ADVANCED, "%s", rows[r].name);
		} else {
			cr_expect_eq(res.n_rel, 0, "%s", rows[r].name);
		}
		/* What is left is re-segmented from the trimmed head: offset moves, MSS stays. */
		if (rows[r].left_segs) {
			cr_assert_eq(gso_flowq__timeout(q), (int)rows[r].left_segs, "%s", rows[r].name);
			struct gso_flowq_tx tx = { .sz = sizeof(tx) };
			cr_assert_eq(gso_flowq__peek(q, 64, &tx), 1);
			cr_expect_eq(tx.off, 100 + rows[r].acked, "%s", rows[r].name);
			cr_expect_eq(tx.seq, isn + rows[r].acked, "%s", rows[r].name);
			cr_expect_eq(tx.len, len - rows[r].acked, "%s", rows[r].name);
			cr_expect_eq(tx.segs, rows[r].left_segs, "%s", rows[r].name);
			cr_expect_eq(tx.mss, mss, "%s", rows[r].name);
			cr_expect(tx.flags & GSO_FLOWQ_TX_RETRANS, "%s", rows[r].name);
		}
		gso_flowq__destroy(q);
	}
}

/* Partial ACKs in steps add up to the segment count, never more (per segment, not per super-segment). */
Test(flowq, partial_ack_steps_sum)
{
	const uint32_t mss = 1000;
	uint32_t steps[] = { 1, 999, 1, 1500, 499, 3000, 2999, 1, 1000 }; /* sum 10000 */
	struct gso_flowq *q = mkq(0, 0, 0, 0);
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	struct gso_flowq_rel rel[REL_MAX];
	uint32_t seq = 0, segs = 0;

	cr_assert_eq(gso_flowq__append(q, 1, 0, 10000, mss), 0);
	send_all(q, 100, 1);
	gso_flowq__set_wnd(q, WND);
	for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		seq += steps[s];
		cr_assert_eq(ack(q, seq, WND, 2, 0, NULL, &res, rel, REL_MAX), 0);
		CHECK(q, "step %zu", s);
		segs += res.acked_segs;
		cr_expect_eq(segs, seq / mss, "step %zu: %u segs at %u", s, segs, seq);
		cr_expect_eq(rel[0].upto, seq, "step %zu", s);
	}
	cr_expect_eq(segs, 10);
	cr_expect_eq(info(q).entries, 0);
	gso_flowq__destroy(q);
}

/* ---- ACK covering several entries and buffers -------------------------- */

Test(flowq, ack_several)
{
	/* Buffer 1: two entries (limit 4000), buffer 2: one, buffer 3: one. */
	struct gso_flowq *q = mkq(500, 0, 4000, 0);
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	struct gso_flowq_rel rel[REL_MAX];

	cr_assert_eq(gso_flowq__append(q, 1, 0, 8000, 1000), 0);
	cr_assert_eq(gso_flowq__append(q, 2, 64, 3000, 1000), 0);
	cr_assert_eq(gso_flowq__append(q, 3, 0, 3000, 1000), 0);
	cr_assert_eq(info(q).entries, 4);
	cr_assert_eq(send_all(q, 3, 1), 6); /* 3-segment bursts: entries split on send */
	CHECK(q, "sent");
	cr_expect_eq(info(q).packets_out, 14);
	gso_flowq__set_wnd(q, WND);

	/* Through buffer 1 and half of buffer 2: too small a release array refuses, changes nothing. */
	struct gso_flowq_info before = info(q);
	cr_expect_eq(ack(q, 500 + 8000 + 1500, WND, 9, 0, NULL, &res, rel, 1), -ENOSPC);
	cr_expect_eq(unchanged(q, &before), 0);
	CHECK(q, "enospc");

	cr_assert_eq(ack(q, 500 + 8000 + 1500, WND, 9, 0, NULL, &res, rel, 2), 0);
	CHECK(q, "ack");
	cr_expect_eq(res.acked_segs, 9);
	cr_expect_eq(res.n_rel, 2);
	cr_expect_eq(rel[0].handle, 1);
	cr_expect_eq(rel[0].upto, 8000);
	cr_expect_eq(rel[0].done, 1);
	cr_expect_eq(rel[1].handle, 2);
	cr_expect_eq(rel[1].upto, 64 + 1500);
	cr_expect_eq(rel[1].done, 0);
	cr_expect_eq(info(q).packets_out, 5);

	/* The rest: buffers 2 and 3 finished. */
	cr_assert_eq(ack(q, 500 + 14000, WND, 9, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect_eq(res.n_rel, 2);
	cr_expect_eq(rel[0].handle, 2);
	cr_expect_eq(rel[0].upto, 64 + 3000);
	cr_expect_eq(rel[0].done, 1);
	cr_expect_eq(rel[1].handle, 3);
	cr_expect_eq(rel[1].upto, 3000);
	cr_expect_eq(rel[1].done, 1);
	cr_expect_eq(res.acked_segs, 5);
	struct gso_flowq_info st = info(q);
	cr_expect_eq(st.entries, 0);
	cr_expect_eq(st.packets_out, 0);
	cr_expect_eq(st.snd_una, 14500);
	CHECK(q, "all acked");
	gso_flowq__destroy(q);
}

/* ---- duplicate, old and bad ACKs -------------------------------------- */

Test(flowq, dup_and_old_acks)
{
	struct gso_flowq *q = mkq(100, 0, 0, 0);
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	struct gso_flowq_rel rel[REL_MAX];

	cr_assert_eq(gso_flowq__append(q, 1, 0, 10000, 1000), 0);
	gso_flowq__set_wnd(q, WND);
	send_all(q, 100, 1);
	cr_assert_eq(ack(q, 2100, WND, 5, 0, NULL, &res, rel, REL_MAX), 0);

	struct gso_flowq_info before = info(q);
	/* Old: below snd_una. */
	cr_assert_eq(ack(q, 1100, WND / 2, 6, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect_eq(res.flags, GSO_FLOWQ_RES_OLD);
	cr_expect_eq(unchanged(q, &before), 0, "old ACK changed the queue");

	/* Bad: beyond snd_nxt, reversed/empty/future SACK blocks, too many blocks, unknown flag. */
	struct gso_flowq_sack rev = { 5000, 4000 }, empty = { 5000, 5000 }, fut = { 9000, 10200 };
	cr_expect_eq(ack(q, 10101, WND, 6, 0, NULL, &res, rel, REL_MAX), -EINVAL);
	cr_expect_eq(ack(q, 2100, WND, 6, 1, &rev, &res, rel, REL_MAX), -EINVAL);
	cr_expect_eq(ack(q, 2100, WND, 6, 1, &empty, &res, rel, REL_MAX), -EINVAL);
	cr_expect_eq(ack(q, 2100, WND, 6, 1, &fut, &res, rel, REL_MAX), -EINVAL);
	GSO_OPTS(gso_flowq_ack, a, .ack = 2100, .wnd = WND, .n_sack = 5);
	cr_expect_eq(gso_flowq__ack(q, &a, &res, rel, REL_MAX), -EINVAL);
	a.n_sack = 0;
	a.flags = 1u << 5;
	cr_expect_eq(gso_flowq__ack(q, &a, &res, rel, REL_MAX), -EINVAL);
	cr_expect_eq(gso_flowq__ack(NULL, &a, &res, rel, REL_MAX), -EINVAL);
	cr_expect_eq(gso_flowq__ack(q, &a, &res, NULL, 1), -EINVAL);
	cr_expect_eq(unchanged(q, &before), 0, "bad ACK changed the queue");

	/* Not duplicates: carrying data, or a window that grew. */
	cr_assert_eq(ack(q, 2100, WND + 1, 7, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect_eq(res.flags & GSO_FLOWQ_RES_DUP, 0);
	a.flags = GSO_FLOWQ_ACK_F_DATA;
	a.wnd = WND + 1;
	cr_assert_eq(gso_flowq__ack(q, &a, &res, rel, REL_MAX), 0);
	cr_expect_eq(res.flags & GSO_FLOWQ_RES_DUP, 0);
	cr_expect_eq(res.dupacks, 0);

	/* Three duplicates: the head segment (one MSS of the entry) is lost, recovery starts. */
	for (int d = 1; d <= 3; d++) {
		cr_assert_eq(ack(q, 2100, WND + 1, 8, 0, NULL, &res, rel, REL_MAX), 0);
		CHECK(q, "dup %d", d);
		cr_expect(res.flags & GSO_FLOWQ_RES_DUP);
		cr_expect_eq(res.dupacks, (uint32_t)d);
		cr_expect_eq(res.lost_segs, d == 3 ? 1 : 0, "dup %d", d);
	}
	cr_expect(res.flags & GSO_FLOWQ_RES_RECOVERY);
	cr_expect_eq(res.lost_sent_ns, 1);
	struct gso_flowq_info st = info(q);
	cr_expect_eq(st.lost_pending, 1);
	cr_expect_eq(st.in_flight, 7);
	cr_expect_eq(st.in_recovery, 1);
	cr_expect_eq(st.recovery_end, 10100);
	struct gso_flowq_tx tx = { .sz = sizeof(tx) };
	cr_assert_eq(gso_flowq__peek(q, 10, &tx), 1);
	cr_expect_eq(tx.seq, 2100);
	cr_expect_eq(tx.len, 1000);
	cr_expect_eq(tx.off, 2000);
	cr_expect(tx.flags & GSO_FLOWQ_TX_RETRANS);
	cr_assert_eq(gso_flowq__sent(q, &tx, 20), 0);
	CHECK(q, "retransmitted");
	cr_expect_eq(info(q).in_flight, 8);
	cr_expect_eq(info(q).retrans_out, 1);
	/* A fourth duplicate (with a smaller window: still a duplicate) marks nothing more. */
	cr_assert_eq(ack(q, 2100, WND, 21, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect(res.flags & GSO_FLOWQ_RES_DUP);
	cr_expect_eq(res.dupacks, 4);
	cr_expect_eq(res.lost_segs, 0);
	/* The ACK for everything ends recovery; no RTT sample from a retransmitted segment alone. */
	cr_assert_eq(ack(q, 3100, WND + 1, 30, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect_eq(res.rtt_ns, 0, "Karn: %lu", (unsigned long)res.rtt_ns);
	cr_assert_eq(ack(q, 10100, WND + 1, 40, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect(res.flags & GSO_FLOWQ_RES_RECOVERED);
	cr_expect_eq(res.rtt_ns, 39);
	CHECK(q, "end");
	gso_flowq__destroy(q);
}

/* ---- SACK blocks ------------------------------------------------------ */

Test(flowq, sack_blocks)
{
	/* 10 segments of 1000 bytes, one entry, sent; isn 0.  Segment k = [1000k, 1000k+1000). */
	struct {
		const char *name;
		uint32_t ack;
		unsigned n;
		struct gso_flowq_sack b[4];
		int err;
		uint32_t sacked, lost, dsack;
	} rows[] = {
		{ "aligned 2..4", 0, 1, { { 2000, 5000 } }, 0, 3, 2, 0 },  /* holes 0,1 have 3 SACKed above */
		{ "unaligned rounds in", 0, 1, { { 2500, 5500 } }, 0, 2, 0, 0 }, /* 3,4: 2 above: no loss */
		{ "inside one segment", 0, 1, { { 2100, 2900 } }, 0, 0, 0, 0 },
		{ "to the end", 0, 1, { { 7000, 10000 } }, 0, 3, 7, 0 },
		{ "end not on grid", 0, 1, { { 7000, 9999 } }, 0, 2, 0, 0 },
		{ "two blocks", 0, 2, { { 1000, 2000 }, { 5000, 7000 } }, 0, 3, 1, 0 }, /* only 0 has 3 SACKed above */
		{ "four blocks", 0, 4, { { 1000, 2000 }, { 3000, 4000 }, { 5000, 6000 }, { 7000, 8000 } }, 0, 4, 2, 0 }, /* 0 and 2 */
		{ "overlapping blocks", 0, 2, { { 1000, 4000 }, { 3000, 5000 } }, 0, 4, 1, 0 },
		{ "D-SACK below ack", 3000, 2, { { 1000, 2000 }, { 5000, 6000 } }, 0, 1, 0, 1 },
		{ "block across ack", 3000, 1, { { 2000, 6000 } }, 0, 3, 0, 0 },
		{ "beyond snd_nxt", 0, 1, { { 9000, 10001 } }, -EINVAL, 0, 0, 0 },
		{ "reversed", 0, 1, { { 5000, 2000 } }, -EINVAL, 0, 0, 0 },
		{ "empty", 0, 1, { { 5000, 5000 } }, -EINVAL, 0, 0, 0 },
	};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct gso_flowq *q = mkq(0, 0, 0, 0);
		struct gso_flowq_ack_res res = { .sz = sizeof(res) };
		struct gso_flowq_rel rel[REL_MAX];

		cr_assert_eq(gso_flowq__append(q, 1, 0, 10000, 1000), 0);
		gso_flowq__set_wnd(q, WND);
		send_all(q, 100, 5);
		struct gso_flowq_info before = info(q);
		int err = ack(q, rows[r].ack, WND, 25, rows[r].n, rows[r].b, &res, rel, REL_MAX);
		cr_expect_eq(err, rows[r].err, "%s: %d", rows[r].name, err);
		CHECK(q, "%s", rows[r].name);
		if (err) {
			cr_expect_eq(unchanged(q, &before), 0, "%s", rows[r].name);
			gso_flowq__destroy(q);
			continue;
		}
		struct gso_flowq_info st = info(q);
		cr_expect_eq(res.sacked_segs, rows[r].sacked, "%s: sacked %u", rows[r].name, res.sacked_segs);
		cr_expect_eq(st.sacked_out, rows[r].sacked, "%s", rows[r].name);
		cr_expect_eq(res.lost_segs, rows[r].lost, "%s: lost %u", rows[r].name, res.lost_segs);
		cr_expect_eq(st.lost_pending, rows[r].lost, "%s", rows[r].name);
		cr_expect_eq(res.dsack, rows[r].dsack, "%s", rows[r].name);
		cr_expect_eq(res.delivered_segs, rows[r].ack / 1000 + rows[r].sacked, "%s", rows[r].name);
		cr_expect_eq(st.in_flight, 10 - rows[r].ack / 1000 - rows[r].sacked - rows[r].lost,
			     "%s: in flight %u", rows[r].name, st.in_flight);
		cr_expect_eq(!!(res.flags & GSO_FLOWQ_RES_RECOVERY), rows[r].lost > 0, "%s", rows[r].name);
		if (rows[r].sacked)
			cr_expect_eq(res.rtt_ns, 20, "%s", rows[r].name);
		/* The same SACK again adds nothing. */
		err = ack(q, rows[r].ack, WND, 26, rows[r].n, rows[r].b, &res, rel, REL_MAX);
		cr_expect_eq(err, 0);
		cr_expect_eq(res.sacked_segs, 0, "%s: repeated", rows[r].name);
		CHECK(q, "%s: repeated", rows[r].name);
		gso_flowq__destroy(q);
	}
}

/* ---- retransmit extraction ------------------------------------------- */

Test(flowq, retransmit_ranges)
{
	/* 20 segments of 1000 in two buffers (limit 10000).  Segments 0-2 and 10-11 lost,
	 * everything else SACKed: holes are lost, retransmitted oldest first in
	 * bursts of at most 2 segments, from the buffer bytes held, then new data. */
	struct gso_flowq *q = mkq(0, 0, 10000, 0);
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	struct gso_flowq_rel rel[REL_MAX];
	struct gso_flowq_tx tx = { .sz = sizeof(tx) };

	cr_assert_eq(gso_flowq__append(q, 1, 0, 10000, 1000), 0);
	cr_assert_eq(gso_flowq__append(q, 2, 0, 10000, 1000), 0);
	cr_assert_eq(gso_flowq__append(q, 3, 0, 5000, 1000), 0);
	gso_flowq__set_wnd(q, 20000);
	cr_assert_eq(send_all(q, 10, 1), 2); /* the window stops the third buffer */
	struct gso_flowq_sack sk[2] = { { 3000, 10000 }, { 12000, 20000 } };
	cr_assert_eq(ack(q, 0, 20000, 2, 2, sk, &res, rel, REL_MAX), 0);
	CHECK(q, "sacked");
	cr_expect_eq(res.sacked_segs, 15);
	cr_expect_eq(res.lost_segs, 5);
	cr_expect_eq(info(q).in_flight, 0);

	struct { uint32_t seq, len, off; uint64_t h; } want[] = {
		{ 0, 2000, 0, 1 }, { 2000, 1000, 2000, 1 }, { 10000, 2000, 0, 2 },
	};
	for (size_t k = 0; k < 3; k++) {
		cr_assert_eq(gso_flowq__peek(q, 2, &tx), 1, "retransmit %zu", k);
		cr_expect(tx.flags & GSO_FLOWQ_TX_RETRANS, "retransmit %zu", k);
		cr_expect_eq(tx.seq, want[k].seq, "retransmit %zu: seq %u", k, tx.seq);
		cr_expect_eq(tx.len, want[k].len, "retransmit %zu: len %u", k, tx.len);
		cr_expect_eq(tx.off, want[k].off, "retransmit %zu", k);
		cr_expect_eq(tx.handle, want[k].h, "retransmit %zu", k);
		cr_expect_eq(tx.mss, 1000);
		cr_assert_eq(gso_flowq__sent(q, &tx, 3), 0);
		CHECK(q, "retransmit %zu", k);
	}
	struct gso_flowq_info st = info(q);
	cr_expect_eq(st.lost_pending, 0);
	cr_expect_eq(st.retrans_out, 5);
	cr_expect_eq(st.in_flight, 5);
	cr_expect_eq(st.retrans_segs, 5);
	/* Window full (20000 outstanding): nothing new. */
	cr_expect_eq(gso_flowq__peek(q, 2, &tx), 0);
	cr_expect_eq(tx.why, GSO_FLOWQ_WHY_WND);
	/* Everything arrives: the window slides, new data is next. */
	cr_assert_eq(ack(q, 20000, 20000, 9, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect_eq(res.acked_segs, 20);
	cr_expect_eq(res.delivered_segs, 5);
	cr_expect(res.flags & GSO_FLOWQ_RES_RECOVERED);
	cr_expect_eq(res.n_rel, 2);
	cr_assert_eq(gso_flowq__peek(q, 2, &tx), 1);
	cr_expect_eq(tx.flags, 0);
	cr_expect_eq(tx.seq, 20000);
	cr_expect_eq(tx.handle, 3);
	CHECK(q, "end");
	gso_flowq__destroy(q);
}

Test(flowq, newreno)
{
	/* No SACK: the third duplicate ACK loses the head segment, each partial
	 * ACK in recovery the next one (RFC 6582), the full ACK ends recovery. */
	struct gso_flowq *q = mkq(0, 0, 0, GSO_FLOWQ_F_NO_SACK);
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	struct gso_flowq_rel rel[REL_MAX];
	struct gso_flowq_tx tx = { .sz = sizeof(tx) };

	cr_assert_eq(gso_flowq__append(q, 1, 0, 8000, 1000), 0);
	gso_flowq__set_wnd(q, WND);
	send_all(q, 8, 1);
	/* Each duplicate stands for a segment that left: limited transmit has room (Linux's reno sacks). */
	uint32_t pipe[4] = { 7, 6, 4, 3 }; /* the third also loses the head segment */
	for (int d = 0; d < 4; d++) {
		cr_assert_eq(ack(q, 0, WND, 2, 0, NULL, &res, rel, REL_MAX), 0);
		cr_expect_eq(info(q).in_flight, pipe[d], "dup %d: in flight %u", d + 1, info(q).in_flight);
		CHECK(q, "dup %d", d + 1);
	}
	cr_expect_eq(info(q).lost_pending, 1);
	for (uint32_t hole = 0; hole < 3; hole++) {
		cr_assert_eq(gso_flowq__peek(q, 8, &tx), 1);
		cr_expect_eq(tx.seq, hole * 1000, "hole %u: seq %u", hole, tx.seq);
		cr_expect_eq(tx.len, 1000);
		cr_expect(tx.flags & GSO_FLOWQ_TX_RETRANS);
		cr_assert_eq(gso_flowq__sent(q, &tx, 3), 0);
		/* Partial ACK: covers the retransmission only. */
		cr_assert_eq(ack(q, (hole + 1) * 1000, WND, 4, 0, NULL, &res, rel, REL_MAX), 0);
		CHECK(q, "hole %u", hole);
		/* The duplicates' credit stays (the ACK covered only the retransmission), the next hole is out. */
		cr_expect_eq(info(q).in_flight, 2 - hole, "hole %u: in flight %u", hole, info(q).in_flight);
		cr_expect_eq(res.lost_segs, 1, "hole %u", hole);
		cr_expect_eq(res.flags & GSO_FLOWQ_RES_RECOVERED, 0);
	}
	cr_assert_eq(gso_flowq__peek(q, 8, &tx), 1);
	cr_expect_eq(tx.seq, 3000);
	cr_assert_eq(gso_flowq__sent(q, &tx, 5), 0);
	cr_assert_eq(ack(q, 8000, WND, 6, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect(res.flags & GSO_FLOWQ_RES_RECOVERED);
	cr_expect_eq(res.lost_segs, 0);
	cr_expect_eq(info(q).entries, 0);
	CHECK(q, "end");
	/* SACK blocks are ignored for loss marking without SACK, but still counted. */
	gso_flowq__destroy(q);
}

/*
 * 10,000 bytes queued at MSS 1000, 8,000 sent in ranges of 2 segments,
 * the first 1,000 acknowledged and 2000..3000 SACKed.
 */
static void one_sacked_hole(struct gso_flowq *q)
{
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	struct gso_flowq_rel rel[REL_MAX];
	struct gso_flowq_sack sk = { 2000, 3000 };

	cr_assert_eq(gso_flowq__append(q, 1, 0, 6000, 1000), 0);
	cr_assert_eq(gso_flowq__append(q, 2, 0, 4000, 1000), 0);
	gso_flowq__set_wnd(q, 8000);
	send_all(q, 2, 1);
	cr_assert_eq(ack(q, 1000, 8000, 2, 1, &sk, &res, rel, REL_MAX), 0);
}

Test(flowq, timeout)
{
	struct gso_flowq *q = mkq(0, 0, 0, 0);
	struct gso_flowq_tx tx = { .sz = sizeof(tx) };

	one_sacked_hole(q);
	/* 8 sent, 1 acked, 1 SACKed: 6 lost on timeout, the SACKed one kept. */
	cr_expect_eq(gso_flowq__timeout(q), 6);
	CHECK(q, "timeout");
	struct gso_flowq_info st = info(q);
	cr_expect_eq(st.in_flight, 0);
	cr_expect_eq(st.lost_pending, 6);
	cr_expect_eq(st.sacked_out, 1);
	cr_expect_eq(st.in_recovery, 1);
	/* Retransmit from the head, skipping the SACKed segment. */
	uint32_t seqs[] = { 1000, 3000, 4000, 6000 };
	for (int k = 0; k < 4; k++) {
		cr_assert_eq(gso_flowq__peek(q, 2, &tx), 1);
		cr_expect_eq(tx.seq, seqs[k], "%d: %u", k, tx.seq);
		cr_expect(tx.flags & GSO_FLOWQ_TX_RETRANS);
		cr_assert_eq(gso_flowq__sent(q, &tx, 10), 0);
		CHECK(q, "retransmit %d", k);
	}
	/* A second timeout loses the retransmissions again. */
	cr_expect_eq(gso_flowq__timeout(q), 6);
	cr_expect_eq(info(q).retrans_out, 0);
	CHECK(q, "second timeout");
	cr_expect_eq(gso_flowq__timeout(NULL), -EINVAL);
	gso_flowq__destroy(q);
}

/*
 * The path MTU fell (tcp_sync_mss + tcp_simple_retransmit): sent, un-SACKed
 * entries cut at a larger MSS are lost and go again at the new one; the
 * SACKed one stays; unsent data follows the new MSS; a segment that was
 * no longer than the new MSS is not lost; a larger MSS changes nothing.
 */
Test(flowq, set_mss)
{
	struct gso_flowq *q = mkq(0, 0, 0, 0);
	struct gso_flowq_tx tx = { .sz = sizeof(tx) };
	struct gso_flowq_info before;

	one_sacked_hole(q);
	cr_assert_eq(info(q).in_recovery, 0);
	before = info(q);
	cr_expect_eq(gso_flowq__set_mss(q, 1000), 0, "the same MSS: nothing");
	cr_expect_eq(gso_flowq__set_mss(q, 1500), 0, "a larger MSS: nothing");
	cr_expect_eq(unchanged(q, &before), 0);
	/* In flight: 1000..2000 and 3000..8000; at 400 bytes that is 3 + 3 + 5 + 5 segments, all lost. */
	cr_expect_eq(gso_flowq__set_mss(q, 400), 16);
	CHECK(q, "set_mss");
	struct gso_flowq_info st = info(q);
	cr_expect_eq(st.in_flight, 0);
	cr_expect_eq(st.lost_pending, 16);
	cr_expect_eq(st.sacked_out, 3, "the SACKed 1000 bytes, now counted at 400");
	cr_expect_eq(st.in_recovery, 1);
	cr_expect_eq(gso_flowq__set_mss(q, 400), 0, "already cut at 400");
	/* The retransmissions first, at 400, skipping the SACKed bytes; then new data at 400. */
	uint32_t seqs[] = { 1000, 3000, 4000, 6000, 8000 };
	for (int k = 0; k < 5; k++) {
		gso_flowq__set_wnd(q, 12000);
		cr_assert_eq(gso_flowq__peek(q, 64, &tx), 1, "%d", k);
		cr_expect_eq(tx.seq, seqs[k], "%d: %u", k, tx.seq);
		cr_expect_eq(tx.mss, 400, "%d: mss %u", k, tx.mss);
		cr_expect_eq(!!(tx.flags & GSO_FLOWQ_TX_RETRANS), k < 4, "%d", k);
		cr_assert_eq(gso_flowq__sent(q, &tx, 10), 0);
		CHECK(q, "resend %d", k);
	}
	cr_expect_eq(gso_flowq__set_mss(NULL, 400), -EINVAL);
	cr_expect_eq(gso_flowq__set_mss(q, 0), -EINVAL);
	cr_expect_eq(gso_flowq__set_mss(q, 65536), -EINVAL);
	gso_flowq__destroy(q);

	/* A short segment that fits the new MSS went through: not lost, only cut at it from now on. */
	q = mkq(0, 0, 0, 0);
	cr_assert_eq(gso_flowq__append(q, 1, 0, 300, 1000), 0);
	gso_flowq__set_wnd(q, 8000);
	send_all(q, 2, 1);
	cr_expect_eq(gso_flowq__set_mss(q, 400), 0);
	CHECK(q, "short segment");
	cr_expect_eq(info(q).in_flight, 1);
	cr_expect_eq(info(q).in_recovery, 0);
	gso_flowq__destroy(q);
}

/* ---- RACK: lost retransmissions ------------------------------------------ */

/*
 * Segment 1 of 10 is lost, found by the scoreboard and retransmitted at
 * t=120; new data sent at t=130 is SACKed (within the reordering window
 * of the retransmission: min RTT 100 / 4 = 25), then data sent at t=200:
 * now the retransmission must be lost too, without a timeout.
 */
static void rack_scenario(uint32_t flags, bool expect_rack)
{
	struct gso_flowq *q = mkq(0, 0, 0, flags);
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	struct gso_flowq_rel rel[REL_MAX];
	struct gso_flowq_tx tx = { .sz = sizeof(tx) };

	cr_assert_eq(gso_flowq__append(q, 1, 0, 10000, 1000), 0);
	gso_flowq__set_wnd(q, WND);
	send_all(q, 10, 10);
	cr_assert_eq(ack(q, 1000, WND, 110, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect_eq(res.rtt_ns, 100);
	struct gso_flowq_sack sk = { 2000, 10000 };
	cr_assert_eq(ack(q, 1000, WND, 111, 1, &sk, &res, rel, REL_MAX), 0);
	cr_expect_eq(res.lost_segs, 1);
	cr_assert_eq(gso_flowq__peek(q, 10, &tx), 1);
	cr_expect_eq(tx.seq, 1000);
	cr_assert_eq(gso_flowq__sent(q, &tx, 120), 0);

	cr_assert_eq(gso_flowq__append(q, 1, 10000, 4000, 1000), 0);
	cr_assert_eq(gso_flowq__peek(q, 3, &tx), 1);
	cr_assert_eq(gso_flowq__sent(q, &tx, 130), 0); /* 10000..13000 */
	sk = (struct gso_flowq_sack){ 2000, 13000 };
	cr_assert_eq(ack(q, 1000, WND, 240, 1, &sk, &res, rel, REL_MAX), 0);
	CHECK(q, "inside reordering window");
	cr_expect_eq(res.lost_segs, 0, "sent 10 after the retransmission: not yet");
	cr_expect_eq(info(q).retrans_out, 1);

	cr_assert_eq(gso_flowq__peek(q, 3, &tx), 1);
	cr_assert_eq(gso_flowq__sent(q, &tx, 200), 0); /* 13000..14000 */
	sk = (struct gso_flowq_sack){ 2000, 14000 };
	cr_assert_eq(ack(q, 1000, WND, 300, 1, &sk, &res, rel, REL_MAX), 0);
	CHECK(q, "after");
	struct gso_flowq_info st = info(q);
	cr_expect_eq(st.min_rtt_ns, 100);
	if (expect_rack) {
		cr_expect_eq(res.lost_segs, 1, "lost retransmission found");
		cr_expect_eq(res.lost_sent_ns, 120);
		cr_expect_eq(st.rack_lost, 1);
		cr_expect_eq(st.lost_pending, 1);
		cr_assert_eq(gso_flowq__peek(q, 10, &tx), 1);
		cr_expect_eq(tx.seq, 1000);
		cr_expect(tx.flags & GSO_FLOWQ_TX_RETRANS);
	} else {
		cr_expect_eq(res.lost_segs, 0);
		cr_expect_eq(st.rack_lost, 0);
		cr_expect_eq(st.retrans_out, 1);
	}
	gso_flowq__destroy(q);
}

Test(flowq, rack_lost_retransmission)
{
	rack_scenario(0, true);
}

Test(flowq, rack_off)
{
	rack_scenario(GSO_FLOWQ_F_NO_RACK, false);
}

/* ---- append after trim, split on send ---------------------------------- */

Test(flowq, counts_follow_append_and_trim)
{
	struct gso_flowq *q = mkq(0, 0, 0, 0);
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	struct gso_flowq_rel rel[REL_MAX];
	struct gso_flowq_tx tx = { .sz = sizeof(tx) };

	/* 5000 unsent (5 segs); send 2 segs: the tail remainder (3000) stays unsent. */
	cr_assert_eq(gso_flowq__append(q, 1, 0, 5000, 1000), 0);
	gso_flowq__set_wnd(q, WND);
	cr_assert_eq(gso_flowq__peek(q, 2, &tx), 1);
	cr_assert_eq(gso_flowq__sent(q, &tx, 1), 0);
	cr_expect_eq(info(q).unsent_segs, 3);
	/* Append grows the unsent remainder: 3000 + 1500 = 4500 -> 5 segments, not 3 + 2 = 5 by luck: */
	cr_assert_eq(gso_flowq__append(q, 1, 5000, 1500, 1000), 0);
	CHECK(q, "grow");
	cr_expect_eq(info(q).unsent_segs, 5);
	cr_assert_eq(gso_flowq__append(q, 1, 6500, 400, 1000), 0);
	cr_expect_eq(info(q).unsent_segs, 5); /* 4900 bytes */
	cr_assert_eq(gso_flowq__append(q, 1, 6900, 200, 1000), 0);
	cr_expect_eq(info(q).unsent_segs, 6); /* 5100 bytes */
	CHECK(q, "grow 3");
	/* Partial ACK at a non-MSS boundary of the sent part. */
	cr_assert_eq(ack(q, 1500, WND, 2, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect_eq(res.acked_segs, 1);
	cr_expect_eq(info(q).packets_out, 1);
	/* Everything sent in 3-segment bursts; a final partial segment counts as one. */
	send_all(q, 3, 3);
	struct gso_flowq_info st = info(q);
	cr_expect_eq(st.packets_out, 1 + 6);
	cr_expect_eq(st.unsent_segs, 0);
	cr_expect_eq(st.snd_nxt, 7100);
	cr_assert_eq(ack(q, 7100, WND, 4, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect_eq(res.acked_segs, 7);
	CHECK(q, "end");
	gso_flowq__destroy(q);
}

/* ---- sequence wrap-around --------------------------------------------- */

Test(flowq, wraparound)
{
	const uint32_t isn = 0xffffffffu - 2500; /* segment 2 crosses 2^32 */
	struct gso_flowq *q = mkq(isn, 0, 0, 0);
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	struct gso_flowq_rel rel[REL_MAX];
	struct gso_flowq_tx tx = { .sz = sizeof(tx) };

	cr_assert_eq(gso_flowq__append(q, 1, 0, 10000, 1000), 0);
	gso_flowq__set_wnd(q, WND);
	send_all(q, 4, 1);
	cr_expect_eq(info(q).snd_nxt, isn + 10000);
	struct gso_flowq_sack sk = { isn + 4000, isn + 10000 };
	cr_assert_eq(ack(q, isn + 1500, WND, 2, 1, &sk, &res, rel, REL_MAX), 0);
	CHECK(q, "wrap sack");
	cr_expect_eq(res.acked_segs, 1);
	cr_expect_eq(res.sacked_segs, 6);
	cr_expect_eq(res.lost_segs, 3); /* [1500,2000), [2000,3000), [3000,4000) */
	cr_expect_eq(rel[0].upto, 1500);
	cr_assert_eq(gso_flowq__peek(q, 10, &tx), 1);
	cr_expect_eq(tx.seq, isn + 1500);
	cr_expect_eq(tx.len, 2500);
	cr_assert_eq(gso_flowq__sent(q, &tx, 3), 0);
	/* Old ACK from before the wrap point is still old after it. */
	cr_assert_eq(ack(q, isn + 1000, WND, 4, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect_eq(res.flags, GSO_FLOWQ_RES_OLD);
	cr_assert_eq(ack(q, isn + 10000, WND, 4, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect_eq(info(q).snd_una, isn + 10000);
	cr_expect_eq(info(q).snd_una, 7499u);
	CHECK(q, "wrapped");
	gso_flowq__destroy(q);
}

/* ---- the peer's window ------------------------------------------------- */

Test(flowq, window)
{
	struct gso_flowq *q = mkq(0, 0, 0, 0);
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	struct gso_flowq_rel rel[REL_MAX];
	struct gso_flowq_tx tx = { .sz = sizeof(tx) };

	cr_assert_eq(gso_flowq__append(q, 1, 0, 20 * 1448, 1448), 0);
	/* Unknown window: not limiting. */
	cr_assert_eq(gso_flowq__peek(q, 100, &tx), 1);
	cr_expect_eq(tx.len, 20 * 1448);
	cr_expect(tx.flags & GSO_FLOWQ_TX_END);
	gso_flowq__set_wnd(q, 5000);
	cr_assert_eq(gso_flowq__peek(q, 10, &tx), 1);
	cr_expect_eq(tx.len, 3 * 1448, "window 5000 takes 3 whole segments: %u", tx.len);
	cr_assert_eq(gso_flowq__sent(q, &tx, 1), 0);
	/* 656 left, less than half the largest window (5000): SWS avoidance waits. */
	cr_assert_eq(gso_flowq__peek(q, 10, &tx), 0);
	cr_expect_eq(tx.why, GSO_FLOWQ_WHY_SWS);
	/* A longer range than peek allows is refused at commit. */
	struct gso_flowq_tx bad = { .sz = sizeof(bad), .handle = 1, .off = 3 * 1448, .len = 1448, .seq = 3 * 1448, .mss = 1448 };
	cr_expect_eq(gso_flowq__sent(q, &bad, 2), -EINVAL);
	CHECK(q, "refused");
	/* Window shrinks to exactly what is out: zero window. */
	cr_assert_eq(ack(q, 0, 3 * 1448, 2, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect(res.flags & GSO_FLOWQ_RES_WND_SHRUNK);
	cr_assert_eq(gso_flowq__peek(q, 10, &tx), 0);
	cr_expect_eq(tx.why, GSO_FLOWQ_WHY_WND);
	/* ACK of all with a window of 1000 bytes: < MSS but >= max_wnd/2?  No (5000): wait. */
	cr_assert_eq(ack(q, 3 * 1448, 1000, 3, 0, NULL, &res, rel, REL_MAX), 0);
	cr_assert_eq(gso_flowq__peek(q, 10, &tx), 0);
	cr_expect_eq(tx.why, GSO_FLOWQ_WHY_SWS);
	/* 3000: two whole... one whole segment. */
	cr_assert_eq(ack(q, 3 * 1448, 3000, 4, 0, NULL, &res, rel, REL_MAX), 0);
	cr_assert_eq(gso_flowq__peek(q, 10, &tx), 1);
	cr_expect_eq(tx.len, 2 * 1448);
	gso_flowq__destroy(q);

	/* A peer whose window never reaches an MSS still gets data (sub-MSS, >= max_wnd/2). */
	q = mkq(0, 0, 0, 0);
	cr_assert_eq(gso_flowq__append(q, 1, 0, 10000, 1448), 0);
	gso_flowq__set_wnd(q, 1000);
	cr_assert_eq(gso_flowq__peek(q, 10, &tx), 1);
	cr_expect_eq(tx.len, 1000);
	cr_expect_eq(tx.segs, 1);
	cr_assert_eq(gso_flowq__sent(q, &tx, 1), 0);
	CHECK(q, "sub-MSS");
	cr_assert_eq(ack(q, 1000, 1000, 2, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect_eq(res.acked_segs, 1);
	cr_assert_eq(gso_flowq__peek(q, 10, &tx), 1);
	cr_expect_eq(tx.seq, 1000);
	cr_expect_eq(tx.off, 1000);
	cr_expect_eq(tx.len, 1000);
	gso_flowq__destroy(q);
}

/* ---- running out of entries -------------------------------------------- */

Test(flowq, slots)
{
	/* 32 entries, 16 filled by appends (2 segments each); sending 1 segment
	 * of each splits it, using the other 16; then splits are impossible. */
	struct gso_flowq *q = mkq(0, 32, 2000, 0);
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	struct gso_flowq_rel rel[REL_MAX];
	struct gso_flowq_tx tx = { .sz = sizeof(tx) };

	cr_assert_eq(gso_flowq__append(q, 1, 0, 32000, 1000), 0);
	gso_flowq__set_wnd(q, WND);
	for (int k = 0; k < 16; k++) {
		cr_assert_eq(gso_flowq__peek(q, 1, &tx), 1, "%d", k);
		cr_assert_eq(gso_flowq__sent(q, &tx, 1), 0, "%d", k);
		if (k < 15) {
			/* the unsent half: send it whole (no split) */
			cr_assert_eq(gso_flowq__peek(q, 2, &tx), 1);
			cr_assert_eq(tx.len, 1000);
			cr_assert_eq(gso_flowq__sent(q, &tx, 1), 0);
		}
	}
	cr_expect_eq(info(q).free_entries, 0);
	CHECK(q, "full");
	/* The last unsent segment needs no split: fine. */
	cr_assert_eq(gso_flowq__peek(q, 1, &tx), 1);
	cr_expect_eq(tx.len, 1000);
	cr_assert_eq(gso_flowq__sent(q, &tx, 1), 0);
	/* Appends need entries beyond the reserve. */
	cr_expect_eq(gso_flowq__append(q, 2, 0, 1000, 1000), -ENOSPC);
	/* ACK frees entries, appends work again. */
	cr_assert_eq(ack(q, 20000, WND, 2, 0, NULL, &res, rel, REL_MAX), 0);
	cr_expect_eq(info(q).free_entries, 20);
	cr_expect_eq(gso_flowq__append(q, 2, 0, 4000, 2000), 0);
	CHECK(q, "end");
	gso_flowq__destroy(q);

	/* SLOTS and sack_unsplit with a queue made full by splits. */
	q = mkq(0, 32, 4000, 0);
	cr_assert_eq(gso_flowq__append(q, 1, 0, 64000, 1000), 0); /* 16 entries of 4 segs */
	gso_flowq__set_wnd(q, WND);
	for (int k = 0; k < 16; k++) {
		cr_assert_eq(gso_flowq__peek(q, 2, &tx), 1);
		cr_assert_eq(gso_flowq__sent(q, &tx, 1), 0); /* split: 2 sent + 2 unsent */
		cr_assert_eq(gso_flowq__peek(q, 4, &tx), 1);
		cr_assert_eq(tx.len, 2000);
		cr_assert_eq(gso_flowq__sent(q, &tx, 1), 0);
	}
	cr_expect_eq(info(q).free_entries, 0);
	cr_expect_eq(info(q).unsent_bytes, 0);
	/* SACK one segment in the middle of an entry: both edges need a split. */
	struct gso_flowq_sack sk = { 10500 - 500, 11000 };
	cr_assert_eq(ack(q, 0, WND, 3, 1, &sk, &res, rel, REL_MAX), 0);
	cr_expect_eq(res.sacked_segs, 0);
	cr_expect_eq(res.sack_unsplit, 1);
	CHECK(q, "unsplit");
	/* A timeout marks everything lost; retransmitting one segment of a 2-segment entry needs a split. */
	cr_assert_eq(gso_flowq__timeout(q), 64);
	cr_assert_eq(gso_flowq__peek(q, 1, &tx), 0);
	cr_expect_eq(tx.why, GSO_FLOWQ_WHY_SLOTS);
	cr_assert_eq(gso_flowq__peek(q, 2, &tx), 1); /* whole entry: no split needed */
	cr_expect_eq(tx.len, 2000);
	struct gso_flowq_tx half = tx;
	half.len = 1000;
	cr_expect_eq(gso_flowq__sent(q, &half, 4), -ENOSPC);
	CHECK(q, "enospc");
	cr_assert_eq(gso_flowq__sent(q, &tx, 4), 0);
	gso_flowq__destroy(q);
}

/* ---- sent() validation, flush ------------------------------------------ */

Test(flowq, sent_validation_and_flush)
{
	struct gso_flowq *q = mkq(0, 0, 0, 0);
	struct gso_flowq_tx tx = { .sz = sizeof(tx) }, bad = { .sz = sizeof(bad) };
	struct gso_flowq_rel rel[REL_MAX];

	cr_assert_eq(gso_flowq__append(q, 1, 10, 3000, 1000), 0);
	cr_assert_eq(gso_flowq__append(q, 2, 0, 3000, 1000), 0);
	cr_assert_eq(gso_flowq__peek(q, 2, &tx), 1);
	struct gso_flowq_info before = info(q);
	bad = tx; bad.seq++;
	cr_expect_eq(gso_flowq__sent(q, &bad, 1), -EINVAL);
	bad = tx; bad.handle = 2;
	cr_expect_eq(gso_flowq__sent(q, &bad, 1), -EINVAL);
	bad = tx; bad.off = 0;
	cr_expect_eq(gso_flowq__sent(q, &bad, 1), -EINVAL);
	bad = tx; bad.mss = 999;
	cr_expect_eq(gso_flowq__sent(q, &bad, 1), -EINVAL);
	bad = tx; bad.flags = GSO_FLOWQ_TX_RETRANS;
	cr_expect_eq(gso_flowq__sent(q, &bad, 1), -EINVAL);
	bad = tx; bad.len = 0;
	cr_expect_eq(gso_flowq__sent(q, &bad, 1), -EINVAL);
	bad = tx; bad.len = 3001;
	cr_expect_eq(gso_flowq__sent(q, &bad, 1), -EINVAL);
	cr_expect_eq(gso_flowq__sent(NULL, &tx, 1), -EINVAL);
	cr_expect_eq(gso_flowq__peek(q, 0, &tx), -EINVAL);
	cr_expect_eq(gso_flowq__peek(NULL, 1, &tx), -EINVAL);
	cr_expect_eq(unchanged(q, &before), 0);
	/* Shorter than peeked is fine (the device took less). */
	bad = tx; bad.len = 1500;
	cr_expect_eq(gso_flowq__sent(q, &bad, 1), 0);
	CHECK(q, "short");
	cr_expect_eq(info(q).snd_nxt, 1500);

	cr_expect_eq(gso_flowq__flush(q, rel, 1), -ENOSPC);
	cr_expect_eq(gso_flowq__flush(q, NULL, 1), -EINVAL);
	cr_assert_eq(gso_flowq__flush(q, rel, 2), 2);
	cr_expect_eq(rel[0].handle, 1);
	cr_expect_eq(rel[0].upto, 3010);
	cr_expect_eq(rel[0].done, 1);
	cr_expect_eq(rel[1].handle, 2);
	cr_expect_eq(rel[1].upto, 3000);
	struct gso_flowq_info st = info(q);
	cr_expect_eq(st.entries, 0);
	cr_expect_eq(st.snd_una, 6000);
	cr_expect_eq(st.snd_nxt, 6000);
	cr_expect_eq(st.packets_out, 0);
	CHECK(q, "flushed");
	cr_expect_eq(gso_flowq__check(NULL), -EINVAL);
	GSO_OPTS(gso_flowq_info, small);
	small.sz = 2;
	cr_expect_eq(gso_flowq__info(q, &small), -EINVAL);
	gso_flowq__destroy(q);
}

/* ---- randomised: a lossy, reordering peer ------------------------------- */

/*
 * The queue against a model receiver: random appends (several buffers, MSS
 * changes), bursts, losses, SACKs of what arrived, timeouts.  After every
 * step the queue checks itself; release records must be monotonic per
 * buffer and every buffer's last record must say done; the cumulative segments acked
 * equal the segments sent, and all bytes arrive.
 */
#define MODEL_BYTES (1u << 20)

Test(flowq, random_model)
{
	static uint8_t got[MODEL_BYTES];
	uint64_t rng = 0x5eed;
	const uint32_t isn = 0xfffe0000u;
	struct gso_flowq *q = mkq(isn, 256, 8000, 0);
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	static struct gso_flowq_rel rel[257];
	uint32_t appended = 0, rcv_nxt = 0, upto[256] = { 0 };
	bool done[256] = { 0 };
	uint64_t now = 1, acked_segs = 0;
	uint32_t nbuf = 0, buf_fill = 0, buf_cap = 0, mss = 1000;

	memset(got, 0, sizeof(got));
	gso_flowq__set_wnd(q, 64000);
	for (int step = 0; step < 100000 && rcv_nxt < MODEL_BYTES; step++) {
		uint64_t r = gso_test_rand(&rng);

		now += 1 + r % 7;
		if (appended < MODEL_BYTES && (r & 3) == 0) {
			if (buf_fill == buf_cap) {
				nbuf++;
				buf_fill = 0;
				buf_cap = 4000 + (uint32_t)(r >> 8) % 8000;
				if (((r >> 20) & 7) == 0)
					mss = 500 + (uint32_t)(r >> 24) % 1000;
			}
			uint32_t len = 1 + (uint32_t)(r >> 32) % 3000;
			if (len > buf_cap - buf_fill)
				len = buf_cap - buf_fill;
			if (len > MODEL_BYTES - appended)
				len = MODEL_BYTES - appended;
			int err = gso_flowq__append(q, nbuf, buf_fill, len, mss);
			cr_assert(err == 0 || err == -ENOSPC, "append %d", err);
			if (!err) {
				buf_fill += len;
				appended += len;
			}
		}
		/* A burst: each segment of it is delivered with probability 9/10. */
		struct gso_flowq_tx tx = { .sz = sizeof(tx) };
		if (gso_flowq__peek(q, 1 + (uint32_t)(r >> 40) % 8, &tx) == 1) {
			cr_assert_eq(gso_flowq__sent(q, &tx, now), 0);
			for (uint32_t o = 0; o < tx.len; o += tx.mss) {
				uint32_t l = tx.len - o < tx.mss ? tx.len - o : tx.mss;
				if (gso_test_rand(&rng) % 10 == 0)
					continue;
				uint32_t rel_off = tx.seq + o - isn;
				memset(got + rel_off, 1, l);
			}
		}
		CHECK(q, "step %d: sent", step);
		/* The receiver acks: cumulative + up to 3 SACK blocks of what it holds above. */
		if ((r >> 50) % 3 == 0) {
			struct gso_flowq_info st = info(q);
			uint32_t nxt = st.snd_nxt - isn;
			while (rcv_nxt < nxt && got[rcv_nxt])
				rcv_nxt++;
			struct gso_flowq_sack sk[3];
			unsigned ns = 0;
			for (uint32_t o = rcv_nxt; o < nxt && ns < 3;) {
				while (o < nxt && !got[o])
					o++;
				if (o >= nxt)
					break;
				uint32_t s = o;
				while (o < nxt && got[o])
					o++;
				sk[ns++] = (struct gso_flowq_sack){ isn + s, isn + o };
			}
			int err = ack(q, isn + rcv_nxt, 64000, now, ns, sk, &res, rel, 257);
			cr_assert_eq(err, 0, "step %d: ack %d", step, err);
			acked_segs += res.acked_segs;
			for (unsigned k = 0; k < res.n_rel; k++) {
				uint64_t h = rel[k].handle;
				cr_assert_lt(h, 256);
				cr_assert_geq(rel[k].upto, upto[h]);
				upto[h] = rel[k].upto;
				done[h] = rel[k].done;
			}
			CHECK(q, "step %d: ack", step);
		}
		/* Now and then the retransmission timer fires. */
		if ((r >> 56) % 61 == 0) {
			cr_assert_geq(gso_flowq__timeout(q), 0);
			CHECK(q, "step %d: timeout", step);
		}
	}
	struct gso_flowq_info st = info(q);
	cr_expect_eq(rcv_nxt, MODEL_BYTES, "all delivered (%u)", rcv_nxt);
	cr_expect_eq(st.entries, 0);
	cr_expect_eq(st.packets_out, 0);
	cr_expect_eq(acked_segs, st.sent_segs, "segments acked %lu = sent %lu",
		     (unsigned long)acked_segs, (unsigned long)st.sent_segs);
	for (uint32_t h = 1; h <= nbuf; h++)
		cr_expect(done[h], "buffer %u never done", h);
	/* The run must have exercised recovery, not just a clean pipe. */
	cr_expect_gt(st.retrans_segs, 50, "retransmitted %lu", (unsigned long)st.retrans_segs);
	cr_expect_gt(st.lost_marked, 50);
	gso_flowq__destroy(q);
}

/* The hot-path shorthands say what gso_flowq__info() says. */
Test(flowq, shorthands_match_info)
{
	struct gso_flowq *q;
	struct gso_flowq_tx tx = { .sz = sizeof(tx) };
	struct gso_flowq_info fi = { .sz = sizeof(fi) };
	GSO_OPTS(gso_flowq_opts, o, .isn = 0xfffffff0u);

	cr_assert_eq(gso_flowq__create(&q, &o), 0);
	cr_assert_eq(gso_flowq__append(q, 1, 0, 10000, 1000), 0);
	cr_assert_eq(gso_flowq__peek(q, 4, &tx), 1);
	cr_assert_eq(gso_flowq__sent(q, &tx, 1), 0);
	cr_assert_eq(gso_flowq__info(q, &fi), 0);
	cr_expect_eq(gso_flowq__snd_nxt(q), fi.snd_nxt);
	cr_expect_eq(gso_flowq__unacked_bytes(q), fi.unacked_bytes);
	cr_expect_eq(gso_flowq__unacked_bytes(q), 4000u, "across the sequence wrap");
	cr_expect_eq(gso_flowq__packets_out(q), fi.packets_out);
	cr_expect_eq(gso_flowq__packets_out(q), 4u);
	cr_expect_eq(gso_flowq__unsent_bytes(q), fi.unsent_bytes);
	cr_expect_eq(gso_flowq__unsent_bytes(q), 6000u);
	cr_expect_eq(gso_flowq__lost_pending(q), fi.lost_pending);
	cr_expect_eq(gso_flowq__snd_nxt(NULL), 0u);
	cr_expect_eq(gso_flowq__unacked_bytes(NULL), 0u);
	cr_expect_eq(gso_flowq__packets_out(NULL), 0u);
	cr_expect_eq(gso_flowq__unsent_bytes(NULL), 0u);
	cr_expect_eq(gso_flowq__lost_pending(NULL), 0u);
	/* An RTO marks what is out lost: the shorthand follows. */
	cr_assert_geq(gso_flowq__timeout(q), 0);
	cr_assert_eq(gso_flowq__info(q, &fi), 0);
	cr_expect_eq(gso_flowq__lost_pending(q), fi.lost_pending);
	cr_expect_eq(gso_flowq__lost_pending(q), 4u);
	gso_flowq__destroy(q);
}
