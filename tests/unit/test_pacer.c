/*
 * Burst sizing (gso_burst_size) and one flow's earliest departure time
 * (struct gso_pacer), in virtual time.  Expected values are worked out by
 * hand from the formula in gso/pacer.h; the seeds' cases (2004 TSO vs ACK
 * clocking, 2015 Wi-Fi pacing shift, 2018 gso_max_segs) are named.
 * Tables run as one test each, every row named in its messages: a process
 * per row cost more than the rows themselves under ASan.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <string.h>

#include <gso/gso.h>
#include "gso_test.h"

#define MBIT(x) ((uint64_t)(x) * 1000000u / 8u) /* Mbit/s -> bytes/s */
#define BIG (1u << 30)

/* ---- burst sizing: table ---- */

struct bcase {
	const char *name;
	/* inputs */
	uint64_t rate;
	uint64_t queued;
	uint32_t mss, hdr, cwnd, in_flight, peer_wnd, dev_segs, dev_bytes;
	uint64_t min_rtt_ns;
	/* settings */
	uint32_t shift, min_segs, divisor, rtt_log, flags;
	/* expected */
	int segs;
	uint32_t bytes;
	uint32_t limit;
	uint32_t goal;
};

/*
 * A row names only what differs from the base: mss 1448, 66 header bytes,
 * cwnd 200, nothing in flight, window and data plentiful, device defaults
 * (d = 65536 - 66 = 65470 payload bytes, 45 segments).  Z stands for an
 * explicit 0 where 0 would mean "base".
 */
#define Z 0xffffffffu
#define ZZ UINT64_MAX

static void fill_in(const struct bcase *c, struct gso_burst_in *in)
{
	in->rate = c->rate;
	in->queued = c->queued == ZZ ? 0 : c->queued ? c->queued : BIG;
	in->mss = c->mss ? c->mss : 1448;
	in->hdr_len = c->hdr == Z ? 0 : c->hdr ? c->hdr : 66;
	in->cwnd = c->cwnd ? c->cwnd : 200;
	in->in_flight = c->in_flight;
	in->peer_wnd = c->peer_wnd == Z ? 0 : c->peer_wnd ? c->peer_wnd : BIG;
	in->dev_max_segs = c->dev_segs;
	in->dev_max_bytes = c->dev_bytes;
	in->min_rtt_ns = c->min_rtt_ns;
}

static struct bcase burst_table_cases[] = {
	/* 100 Mbit/s: 12500000 >> 10 = 12207 bytes -> 8 segments */
	{ "rate", .rate = MBIT(100), .segs = 8, .bytes = 8 * 1448,
	  .limit = GSO_BURST_LIM_RATE, .goal = 8 },
	/* 10 Mbit/s: 1220 bytes < 1 MSS -> the floor of 2 */
	{ "min_segs floor", .rate = MBIT(10), .segs = 2, .bytes = 2 * 1448,
	  .limit = GSO_BURST_LIM_MIN_SEGS, .goal = 2 },
	{ "min_segs setting 4", .rate = MBIT(10), .min_segs = 4, .segs = 4,
	  .bytes = 4 * 1448, .limit = GSO_BURST_LIM_MIN_SEGS, .goal = 4 },
	{ "min_segs setting 1", .rate = MBIT(10), .min_segs = 1, .segs = 1,
	  .bytes = 1448, .limit = GSO_BURST_LIM_MIN_SEGS, .goal = 1 },
	/* 100 Gbit/s: 12.2 MB per ms, cut to the device's 65470 -> 45 */
	{ "device bytes", .rate = MBIT(100000), .segs = 45, .bytes = 45 * 1448,
	  .limit = GSO_BURST_LIM_DEV_BYTES, .goal = 45 },
	{ "device bytes 9000", .rate = MBIT(100000), .dev_bytes = 9000, .segs = 6,
	  .bytes = 6 * 1448, .limit = GSO_BURST_LIM_DEV_BYTES, .goal = 6 },
	/* 2018: gso_max_segs 2 limits the burst, never the goal */
	{ "gso_max_segs 2", .rate = MBIT(100000), .dev_segs = 2, .segs = 2,
	  .bytes = 2 * 1448, .limit = GSO_BURST_LIM_DEV_SEGS, .goal = 45 },
	{ "gso_max_segs 1", .rate = MBIT(100), .dev_segs = 1, .segs = 1,
	  .bytes = 1448, .limit = GSO_BURST_LIM_DEV_SEGS, .goal = 8 },
	/* 2004: 64 KiB (45 segs) of data, cwnd 44, 100 MB/s: at most 44/3 */
	{ "2004 cwnd 44", .rate = 100000000, .cwnd = 44, .segs = 14,
	  .bytes = 14 * 1448, .limit = GSO_BURST_LIM_CWND_DIV, .goal = 45 },
	{ "2004 divisor 8 (2.6.9)", .rate = 100000000, .cwnd = 44, .divisor = 8,
	  .segs = 5, .bytes = 5 * 1448, .limit = GSO_BURST_LIM_CWND_DIV, .goal = 45 },
	/* divisor 1: only the two-bursts quota min(cwnd/2, room) limits */
	{ "divisor off, quota half", .rate = 100000000, .cwnd = 44, .divisor = 1,
	  .segs = 22, .bytes = 22 * 1448, .limit = GSO_BURST_LIM_QUOTA, .goal = 45 },
	{ "quota room", .rate = 100000000, .cwnd = 100, .in_flight = 90, .segs = 10,
	  .bytes = 10 * 1448, .limit = GSO_BURST_LIM_QUOTA, .goal = 45 },
	{ "quota full", .rate = 100000000, .cwnd = 100, .in_flight = 100, .segs = 0,
	  .bytes = 0, .limit = GSO_BURST_LIM_QUOTA, .goal = 45 },
	{ "quota over", .rate = 100000000, .cwnd = 10, .in_flight = 30, .segs = 0,
	  .bytes = 0, .limit = GSO_BURST_LIM_QUOTA, .goal = 45 },
	{ "cwnd 1", .rate = 100000000, .cwnd = 1, .segs = 1, .bytes = 1448,
	  .limit = GSO_BURST_LIM_CWND_DIV, .goal = 45 },
	{ "cwnd 2 in flight 1", .rate = 100000000, .cwnd = 2, .in_flight = 1, .segs = 1,
	  .bytes = 1448, .limit = GSO_BURST_LIM_CWND_DIV, .goal = 45 },
	/* peer window: whole segments inside it */
	{ "peer window 5000", .rate = 100000000, .peer_wnd = 5000, .segs = 3,
	  .bytes = 3 * 1448, .limit = GSO_BURST_LIM_PEER_WND, .goal = 45 },
	{ "peer window < mss", .rate = 100000000, .peer_wnd = 1000, .segs = 0,
	  .bytes = 0, .limit = GSO_BURST_LIM_PEER_WND, .goal = 45 },
	{ "peer window closed", .rate = 100000000, .peer_wnd = Z, .segs = 0,
	  .bytes = 0, .limit = GSO_BURST_LIM_PEER_WND, .goal = 45 },
	{ "peer window cuts data", .rate = 100000000, .queued = 3000,
	  .peer_wnd = 2000, .segs = 1, .bytes = 1448, .limit = GSO_BURST_LIM_PEER_WND,
	  .goal = 45 },
	/* the end of the data may be a short segment, inside the window */
	{ "data 3000", .rate = 100000000, .queued = 3000, .segs = 3, .bytes = 3000,
	  .limit = GSO_BURST_LIM_DATA, .goal = 45 },
	{ "data = window", .rate = 100000000, .queued = 1000, .peer_wnd = 1000,
	  .segs = 1, .bytes = 1000, .limit = GSO_BURST_LIM_DATA, .goal = 45 },
	{ "no data", .rate = 100000000, .queued = ZZ, .segs = 0, .bytes = 0,
	  .limit = GSO_BURST_LIM_DATA, .goal = 45 },
	/* 2015: shift 7 ~ 8 ms of data for aggregating links */
	{ "shift 10 at 50 Mbit/s", .rate = MBIT(50), .segs = 4, .bytes = 4 * 1448,
	  .limit = GSO_BURST_LIM_RATE, .goal = 4 },
	{ "shift 7 at 50 Mbit/s", .rate = MBIT(50), .shift = 7, .segs = 33,
	  .bytes = 33 * 1448, .limit = GSO_BURST_LIM_RATE, .goal = 33 },
	{ "shift 8 at 50 Mbit/s", .rate = MBIT(50), .shift = 8, .segs = 16,
	  .bytes = 16 * 1448, .limit = GSO_BURST_LIM_RATE, .goal = 16 },
	/* short-RTT bonus: d >> ((min_rtt_us) >> 9) */
	{ "rtt bonus 100us", .rate = MBIT(100), .min_rtt_ns = 100000, .segs = 45,
	  .bytes = 45 * 1448, .limit = GSO_BURST_LIM_DEV_BYTES, .goal = 45 },
	{ "rtt bonus 2ms", .rate = MBIT(100), .min_rtt_ns = 2000000, .segs = 14,
	  .bytes = 14 * 1448, .limit = GSO_BURST_LIM_RATE, .goal = 14 },
	{ "rtt bonus 20ms none", .rate = MBIT(100), .min_rtt_ns = 20000000, .segs = 8,
	  .bytes = 8 * 1448, .limit = GSO_BURST_LIM_RATE, .goal = 8 },
	{ "rtt bonus off", .rate = MBIT(100), .min_rtt_ns = 100000,
	  .flags = GSO_BURST_F_NO_RTT_BONUS, .segs = 8, .bytes = 8 * 1448,
	  .limit = GSO_BURST_LIM_RATE, .goal = 8 },
	{ "rtt_log 12", .rate = MBIT(100), .min_rtt_ns = 2000000, .rtt_log = 12,
	  .segs = 45, .bytes = 45 * 1448, .limit = GSO_BURST_LIM_DEV_BYTES, .goal = 45 },
	/* unpaced: the device bytes decide */
	{ "unpaced", .rate = GSO_RATE_UNPACED, .segs = 45, .bytes = 45 * 1448,
	  .limit = GSO_BURST_LIM_DEV_BYTES, .goal = 45 },
	/* jumbo MSS: 65470 / 9000 = 7 per device burst, rate floor 2 */
	{ "jumbo", .rate = MBIT(100), .mss = 9000, .segs = 2, .bytes = 18000,
	  .limit = GSO_BURST_LIM_MIN_SEGS, .goal = 2 },
	{ "jumbo fast", .rate = MBIT(100000), .mss = 9000, .segs = 7, .bytes = 63000,
	  .limit = GSO_BURST_LIM_DEV_BYTES, .goal = 7 },
	/* mss that exactly fills the device */
	{ "mss = device", .rate = MBIT(100000), .mss = 65470, .segs = 1,
	  .bytes = 65470, .limit = GSO_BURST_LIM_DEV_BYTES, .goal = 2 },
	/* smallest mss, no headers */
	{ "mss 1", .rate = MBIT(1), .mss = 1, .hdr = Z, .cwnd = 10,
	  .segs = 3, .bytes = 3, .limit = GSO_BURST_LIM_CWND_DIV, .goal = 122 },
};

static void burst_table_row(const struct bcase *c)
{
	GSO_OPTS(gso_burst_in, in);
	GSO_OPTS(gso_burst_opts, o, .pacing_shift = c->shift, .min_segs = c->min_segs,
		 .win_divisor = c->divisor, .rtt_log = c->rtt_log, .flags = c->flags);
	struct gso_burst out = { .sz = sizeof(out) };

	fill_in(c, &in);
	int n = gso_burst_size(&in, &o, &out);
	cr_expect_eq(n, c->segs, "%s: segs %d, want %d", c->name, n, c->segs);
	cr_expect_eq(out.segs, (uint32_t)c->segs, "%s", c->name);
	cr_expect_eq(out.bytes, c->bytes, "%s: bytes %u, want %u", c->name, out.bytes, c->bytes);
	cr_expect_eq(out.wire_bytes, c->bytes + (uint32_t)c->segs * in.hdr_len, "%s", c->name);
	cr_expect_eq(out.limit, c->limit, "%s: limit %u, want %u", c->name, out.limit, c->limit);
	cr_expect_eq(out.goal_segs, c->goal, "%s: goal %u, want %u", c->name, out.goal_segs,
		     c->goal);
	cr_expect_eq(out.defer_until_ns, 0);
	/* Same answer without settings struct when the row uses defaults only. */
	if (!c->shift && !c->min_segs && !c->divisor && !c->rtt_log && !c->flags)
		cr_expect_eq(gso_burst_size(&in, NULL, NULL), c->segs, "%s (NULL opts)", c->name);
}

Test(burst, table)
{
	for (size_t i = 0; i < sizeof(burst_table_cases) / sizeof(burst_table_cases[0]); i++)
		burst_table_row(&burst_table_cases[i]);
}

/* 2004 in numbers: a 64 KiB super-segment against cwnd 44 never leaves whole. */
Test(burst, seed_2004_64k_cwnd44)
{
	GSO_OPTS(gso_burst_in, in, .rate = 100000000, .queued = 65536, .mss = 1448,
		 .hdr_len = 66, .cwnd = 44, .peer_wnd = BIG);
	struct gso_burst b = { .sz = sizeof(b) };
	uint32_t sent = 0, bursts = 0;

	/* Drain the 64 KiB as the window allows, acking nothing: every burst is
	 * at most cwnd/3 and at most half of what is left. */
	while (in.queued) {
		int n = gso_burst_size(&in, NULL, &b);

		cr_assert_geq(n, 0);
		if (!n)
			break;
		cr_expect_leq(b.segs, 44u / 3, "burst %u: %u segs", bursts, b.segs);
		cr_expect_leq(b.segs, 44u - in.in_flight);
		in.queued -= b.bytes;
		in.in_flight += b.segs;
		sent += b.bytes;
		bursts++;
	}
	cr_expect_gt(bursts, 1, "64 KiB went out as %u burst(s)", bursts);
	cr_expect_lt(sent, 65536u, "cwnd 44 must stop before all 45 segments leave");
	cr_expect_leq(in.in_flight, 44u);
}

/*
 * 2015: shift 7 gives ~8x the burst of shift 10, wherever no clamp is hit.
 * A BIG TCP device (524280 bytes) leaves room for the larger bursts, so
 * whole-segment rounding stays small.
 */
Test(burst, seed_2015_shift7_8x)
{
	static const uint64_t rates[] = { MBIT(50), MBIT(100), MBIT(200), MBIT(400) };

	for (unsigned i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		GSO_OPTS(gso_burst_in, in, .rate = rates[i], .queued = BIG, .mss = 1448,
			 .hdr_len = 66, .cwnd = 1000, .peer_wnd = BIG, .dev_max_bytes = 524280);
		GSO_OPTS(gso_burst_opts, o7, .pacing_shift = 7);
		GSO_OPTS(gso_burst_opts, o10, .pacing_shift = 10);
		struct gso_burst b7 = { .sz = sizeof(b7) }, b10 = { .sz = sizeof(b10) };

		cr_assert_gt(gso_burst_size(&in, &o10, &b10), 0);
		cr_assert_gt(gso_burst_size(&in, &o7, &b7), 0);
		cr_expect_eq(b7.limit, GSO_BURST_LIM_RATE);
		cr_expect_eq(b10.limit, GSO_BURST_LIM_RATE);
		double ratio = (double)b7.bytes / b10.bytes;
		cr_expect(ratio >= 7.5 && ratio <= 8.5, "rate %lu: shift 7 %u B, shift 10 %u B (x%.2f)",
			  (unsigned long)rates[i], b7.bytes, b10.bytes, ratio);
	}
}

/* 2018: the device's segment limit never feeds back into the goal. */
Test(burst, seed_2018_goal_ignores_gso_max_segs)
{
	for (uint64_t rate = MBIT(1); rate <= MBIT(100000); rate *= 3) {
		GSO_OPTS(gso_burst_in, in, .rate = rate, .queued = BIG, .mss = 1448, .hdr_len = 66,
			 .cwnd = 400, .peer_wnd = BIG, .min_rtt_ns = 300000);
		struct gso_burst a = { .sz = sizeof(a) }, b = { .sz = sizeof(b) };

		in.dev_max_segs = 0;
		cr_assert_geq(gso_burst_size(&in, NULL, &a), 0);
		in.dev_max_segs = 2;
		cr_assert_geq(gso_burst_size(&in, NULL, &b), 0);
		cr_expect_eq(a.goal_segs, b.goal_segs, "rate %lu", (unsigned long)rate);
		cr_expect_leq(b.segs, 2u);
	}
}

/* ---- burst sizing: invariants over random inputs ---- */

Test(burst, random_invariants)
{
	uint64_t st = 0x5eed2004;

	for (int i = 0; i < 20000; i++) {
		uint64_t r = gso_test_rand(&st);
		GSO_OPTS(gso_burst_in, in);
		GSO_OPTS(gso_burst_opts, o);
		struct gso_burst b = { .sz = sizeof(b) };

		in.rate = (gso_test_rand(&st) >> (r & 63)) | 1;
		in.mss = 1 + (uint32_t)(gso_test_rand(&st) % 9000);
		in.hdr_len = (uint32_t)(gso_test_rand(&st) % 128);
		in.cwnd = 1 + (uint32_t)(gso_test_rand(&st) % 500);
		in.in_flight = (uint32_t)(gso_test_rand(&st) % 600);
		in.peer_wnd = (uint32_t)(gso_test_rand(&st) % 2000000);
		in.queued = gso_test_rand(&st) % 3000000;
		in.dev_max_segs = (uint32_t)(gso_test_rand(&st) % 100);
		in.dev_max_bytes = (r >> 8) & 1 ? 0 : in.mss + in.hdr_len +
				   (uint32_t)(gso_test_rand(&st) % 70000);
		in.min_rtt_ns = (r >> 9) & 1 ? gso_test_rand(&st) % 50000000 : 0;
		o.pacing_shift = (uint32_t)(gso_test_rand(&st) % 32);
		o.min_segs = (uint32_t)(gso_test_rand(&st) % 8);
		o.win_divisor = (uint32_t)(gso_test_rand(&st) % 10);

		int n = gso_burst_size(&in, &o, &b);
		cr_assert_geq(n, 0, "case %d: %d", i, n);
		uint32_t div = o.win_divisor ? o.win_divisor : 3;
		uint32_t cap = in.cwnd / div ? in.cwnd / div : 1;
		uint32_t room = in.in_flight >= in.cwnd ? 0 : in.cwnd - in.in_flight;
		uint32_t half = in.cwnd / 2 ? in.cwnd / 2 : 1;
		uint32_t dsegs = in.dev_max_segs ? in.dev_max_segs : 65535;
		uint32_t dbytes = in.dev_max_bytes ? in.dev_max_bytes : 65536;

		/* invariant 2: never eats the window */
		cr_assert_leq(b.segs, cap, "case %d", i);
		cr_assert_leq(b.segs, room, "case %d", i);
		cr_assert_leq(b.segs, half, "case %d", i);
		cr_assert_leq(b.bytes, in.peer_wnd, "case %d", i);
		cr_assert_leq(b.bytes, in.queued, "case %d", i);
		/* device limits */
		cr_assert_leq(b.segs, dsegs, "case %d", i);
		cr_assert_leq(b.bytes + in.hdr_len, dbytes, "case %d", i);
		/* shape: full segments except the data's tail */
		cr_assert_eq(b.segs, (b.bytes + in.mss - 1) / in.mss, "case %d", i);
		if (b.bytes != in.queued)
			cr_assert_eq(b.bytes % in.mss, 0u, "case %d", i);
		cr_assert_eq(b.wire_bytes, b.bytes + b.segs * in.hdr_len);
		/* something goes when everything allows a segment */
		if (room && in.queued && (in.peer_wnd >= in.mss || in.peer_wnd >= in.queued))
			cr_assert_gt(b.segs, 0u, "case %d", i);
		/* the goal does not depend on the device's segment limit */
		struct gso_burst b2 = { .sz = sizeof(b2) };
		in.dev_max_segs = 3;
		cr_assert_geq(gso_burst_size(&in, &o, &b2), 0);
		cr_assert_eq(b2.goal_segs, b.goal_segs, "case %d", i);
	}
}

/* ---- burst sizing: every input validated, nothing written on error ---- */

struct bad {
	const char *name;
	int field;
	uint64_t value;
};

enum { B_RATE, B_MSS, B_CWND, B_HDR, B_DEVSEGS, B_DEVBYTES, B_INFLAGS, B_SZ, B_TAIL,
       O_SHIFT, O_MINSEGS, O_DIV, O_RTTLOG, O_FLAGS, O_SZ, O_TAIL, B_NULL };

static struct bad burst_rejects_cases[] = {
	{ "rate 0", B_RATE, 0 },
	{ "mss 0", B_MSS, 0 },
	{ "mss 65536", B_MSS, 65536 },
	{ "cwnd 0", B_CWND, 0 },
	{ "hdr 256", B_HDR, 256 },
	{ "dev segs 65536", B_DEVSEGS, 65536 },
	{ "dev bytes < hdr+mss", B_DEVBYTES, 1448 + 66 - 1 },
	{ "dev bytes > 16M", B_DEVBYTES, (1u << 24) + 1 },
	{ "unknown in flag", B_INFLAGS, 1u << 5 },
	{ "in sz 1", B_SZ, 1 },
	{ "in tail", B_TAIL, 1 },
	{ "shift 32", O_SHIFT, 32 },
	{ "min_segs 65536", O_MINSEGS, 65536 },
	{ "divisor 256", O_DIV, 256 },
	{ "rtt_log 32", O_RTTLOG, 32 },
	{ "unknown flag", O_FLAGS, 1u << 7 },
	{ "opts sz 1", O_SZ, 1 },
	{ "opts tail", O_TAIL, 1 },
	{ "in NULL", B_NULL, 0 },
};

static void burst_rejects_row(const struct bad *c)
{
	struct {
		struct gso_burst_in in;
		uint8_t tail[8];
	} bi;
	struct {
		struct gso_burst_opts o;
		uint8_t tail[8];
	} bo;
	struct gso_burst out = { .sz = sizeof(out) }, ref = { .sz = sizeof(ref) };

	memset(&bi, 0, sizeof(bi));
	memset(&bo, 0, sizeof(bo));
	bi.in.sz = sizeof(bi.in);
	bo.o.sz = sizeof(bo.o);
	bi.in.rate = 100000000;
	bi.in.queued = BIG;
	bi.in.mss = 1448;
	bi.in.hdr_len = 66;
	bi.in.cwnd = 44;
	bi.in.peer_wnd = BIG;
	/* the valid base works */
	cr_assert_gt(gso_burst_size(&bi.in, &bo.o, &out), 0);

	switch (c->field) {
	case B_RATE: bi.in.rate = c->value; break;
	case B_MSS: bi.in.mss = (uint32_t)c->value; break;
	case B_CWND: bi.in.cwnd = (uint32_t)c->value; break;
	case B_HDR: bi.in.hdr_len = (uint32_t)c->value; break;
	case B_DEVSEGS: bi.in.dev_max_segs = (uint32_t)c->value; break;
	case B_DEVBYTES: bi.in.dev_max_bytes = (uint32_t)c->value; break;
	case B_INFLAGS: bi.in.flags = (uint32_t)c->value; break;
	case B_SZ: bi.in.sz = (size_t)c->value; break;
	case B_TAIL: bi.in.sz = sizeof(bi); bi.tail[3] = 1; break;
	case O_SHIFT: bo.o.pacing_shift = (uint32_t)c->value; break;
	case O_MINSEGS: bo.o.min_segs = (uint32_t)c->value; break;
	case O_DIV: bo.o.win_divisor = (uint32_t)c->value; break;
	case O_RTTLOG: bo.o.rtt_log = (uint32_t)c->value; break;
	case O_FLAGS: bo.o.flags = (uint32_t)c->value; break;
	case O_SZ: bo.o.sz = (size_t)c->value; break;
	case O_TAIL: bo.o.sz = sizeof(bo); bo.tail[0] = 1; break;
	}
	memset(&out, 0xa5, sizeof(out));
	ref = out;
	int rc = gso_burst_size(c->field == B_NULL ? NULL : &bi.in, &bo.o, &out);
	cr_expect_eq(rc, -EINVAL, "%s: %d", c->name, rc);
	cr_expect_eq(memcmp(&out, &ref, sizeof(out)), 0, "%s: out written on error", c->name);
}

Test(burst, rejects)
{
	for (size_t i = 0; i < sizeof(burst_rejects_cases) / sizeof(burst_rejects_cases[0]); i++)
		burst_rejects_row(&burst_rejects_cases[i]);
}

/* An older, shorter struct (fields past its sz read as 0 = default) works. */
Test(burst, short_struct)
{
	GSO_OPTS(gso_burst_in, in, .rate = MBIT(100), .queued = BIG, .mss = 1448, .hdr_len = 66,
		 .cwnd = 200, .peer_wnd = BIG, .min_rtt_ns = 100000);
	struct gso_burst b = { .sz = sizeof(b) };

	in.sz = offsetof(struct gso_burst_in, min_rtt_ns); /* no min_rtt: no bonus */
	cr_expect_eq(gso_burst_size(&in, NULL, &b), 8);
	in.sz = offsetof(struct gso_burst_in, dev_max_segs); /* devices default */
	cr_expect_eq(gso_burst_size(&in, NULL, &b), 8);
}

/* ---- deferral ---- */

struct dcase {
	const char *name;
	uint32_t in_flight;
	uint64_t queued;
	uint64_t last_send, oldest, srtt;
	uint32_t in_flags;
	bool enable;
	int segs; /* 0 = deferred */
};

/*
 * mss 1000, no headers, cwnd 30, unpaced (full burst 45 segments); now 10 ms;
 * srtt 1 ms.  With 25 in flight the room is 5 segments, under cwnd/3 = 10:
 * worth waiting for the ACK of the oldest segment (sent 1 ms ago).
 */
static struct dcase burst_defer_cases[] = {
	{ "defers", 25, BIG, 9900000, 9000000, 1000000, 0, true, 0 },
	{ "off by default", 25, BIG, 9900000, 9000000, 1000000, 0, false, 5 },
	{ "recovery", 25, BIG, 9900000, 9000000, 1000000, GSO_BURST_IN_RECOVERY, true, 5 },
	{ "push", 25, BIG, 9900000, 9000000, 1000000, GSO_BURST_IN_PUSH, true, 5 },
	{ "no srtt", 25, BIG, 9900000, 9000000, 0, 0, true, 5 },
	{ "last send > 1 ms ago", 25, BIG, 8900000, 8000000, 1000000, 0, true, 5 },
	{ "last send 1 ms ago: the bound", 25, BIG, 9000000, 8000000, 1000000, 0, true, 5 },
	{ "last send just inside", 25, BIG, 9000001, 8000000, 1000000, 0, true, 0 },
	{ "room >= cwnd/3", 20, BIG, 9900000, 9000000, 1000000, 0, true, 10 },
	{ "no ACK soon", 25, BIG, 9900000, 9600000, 1000000, 0, true, 5 },
	{ "all data fits", 25, 4000, 9900000, 9000000, 1000000, 0, true, 4 },
};

static void burst_defer_row(const struct dcase *c)
{
	GSO_OPTS(gso_burst_in, in, .rate = GSO_RATE_UNPACED, .queued = c->queued, .mss = 1000,
		 .cwnd = 30, .in_flight = c->in_flight, .peer_wnd = BIG, .now_ns = 10000000,
		 .last_send_ns = c->last_send, .oldest_unacked_ns = c->oldest,
		 .srtt_ns = c->srtt, .flags = c->in_flags);
	GSO_OPTS(gso_burst_opts, o, .flags = c->enable ? GSO_BURST_F_DEFER : 0);
	struct gso_burst b = { .sz = sizeof(b) };

	int n = gso_burst_size(&in, &o, &b);
	cr_expect_eq(n, c->segs, "%s: %d", c->name, n);
	if (!c->segs) {
		cr_expect_eq(b.limit, GSO_BURST_LIM_DEFER, "%s", c->name);
		cr_expect_eq(b.defer_until_ns, c->last_send + GSO_BURST_DEF_DEFER_NS, "%s", c->name);
		cr_expect_eq(b.bytes, 0u);
		/* the bound is a setting */
		o.defer_ns = 200000;
		if (in.now_ns - c->last_send < 200000) {
			cr_expect_eq(gso_burst_size(&in, &o, &b), 0, "%s", c->name);
			cr_expect_eq(b.defer_until_ns, c->last_send + 200000, "%s", c->name);
		} else {
			cr_expect_gt(gso_burst_size(&in, &o, &b), 0, "%s: past a 200 us bound",
				     c->name);
		}
	} else {
		cr_expect_eq(b.defer_until_ns, 0u, "%s", c->name);
	}
}

Test(burst, defer)
{
	for (size_t i = 0; i < sizeof(burst_defer_cases) / sizeof(burst_defer_cases[0]); i++)
		burst_defer_row(&burst_defer_cases[i]);
}

/* ---- EDT pacer ---- */

static struct gso_pacer mkpacer(uint32_t unpaced, uint32_t flags)
{
	GSO_OPTS(gso_pacer_opts, o, .unpaced_segs = unpaced, .flags = flags);
	struct gso_pacer p = { .sz = sizeof(p) };

	cr_assert_eq(gso_pacer__init(&p, &o), 0);
	return p;
}

Test(edt, first_ten_segments_unpaced)
{
	struct gso_pacer p = mkpacer(0, 0);
	uint64_t dep;

	/* 2-segment bursts of 3000 wire bytes at 1 MB/s: a gap would be 3 ms */
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(gso_pacer__stamp(&p, 0, 1000000, 3000, 2, &dep), 0);
		cr_expect_eq(dep, 0u, "burst %d", i);
		cr_expect_eq(gso_pacer__next(&p), 0u, "burst %d: 10 segs go unpaced", i);
	}
	cr_assert_eq(gso_pacer__stamp(&p, 0, 1000000, 3000, 2, &dep), 0);
	cr_expect_eq(dep, 0u);
	cr_expect_eq(gso_pacer__next(&p), 3000000u, "the 11th segment starts the clock");
	cr_assert_eq(gso_pacer__stamp(&p, 0, 1000000, 3000, 2, &dep), 0);
	cr_expect_eq(dep, 3000000u);
	cr_expect_eq(gso_pacer__next(&p), 6000000u);
}

Test(edt, unpaced_setting_and_pace_all)
{
	struct gso_pacer p = mkpacer(4, 0);
	uint64_t dep;

	cr_assert_eq(gso_pacer__stamp(&p, 100, 1000000, 1000, 4, &dep), 0);
	cr_expect_eq(gso_pacer__next(&p), 100u);
	cr_assert_eq(gso_pacer__stamp(&p, 100, 1000000, 1000, 1, &dep), 0);
	cr_expect_eq(gso_pacer__next(&p), 100u + 1000000u);

	p = mkpacer(4, GSO_PACER_F_PACE_ALL);
	cr_assert_eq(gso_pacer__stamp(&p, 100, 1000000, 1000, 1, &dep), 0);
	cr_expect_eq(dep, 100u);
	cr_expect_eq(gso_pacer__next(&p), 100u + 1000000u, "first burst: no credit");
}

Test(edt, late_sender_credit)
{
	struct gso_pacer p = mkpacer(0, GSO_PACER_F_PACE_ALL);
	uint64_t dep;

	/* 1000 bytes at 1 MB/s: 1 ms gaps */
	cr_assert_eq(gso_pacer__stamp(&p, 0, 1000000, 1000, 1, &dep), 0);
	cr_expect_eq(gso_pacer__next(&p), 1000000u);
	/* 0.3 ms late: the next gap shrinks by 0.3 ms, back on the grid */
	cr_assert_eq(gso_pacer__stamp(&p, 1300000, 1000000, 1000, 1, &dep), 0);
	cr_expect_eq(dep, 1300000u);
	cr_expect_eq(gso_pacer__next(&p), 2000000u);
	/* 3 ms late: at most half a gap of credit */
	cr_assert_eq(gso_pacer__stamp(&p, 5000000, 1000000, 1000, 1, &dep), 0);
	cr_expect_eq(dep, 5000000u);
	cr_expect_eq(gso_pacer__next(&p), 5500000u);
	/* early: waits for its time, no credit */
	cr_assert_eq(gso_pacer__stamp(&p, 5000000, 1000000, 1000, 1, &dep), 0);
	cr_expect_eq(dep, 5500000u);
	cr_expect_eq(gso_pacer__next(&p), 6500000u);
	/* unpaced rate: no spacing */
	cr_assert_eq(gso_pacer__stamp(&p, 5000000, GSO_RATE_UNPACED, 1000, 1, &dep), 0);
	cr_expect_eq(dep, 6500000u);
	cr_expect_eq(gso_pacer__next(&p), 6500000u);
	gso_pacer__reset(&p);
	cr_expect_eq(gso_pacer__next(&p), 0u);
}

/* A burst that left shorter than stamped gives its unused time back, never before its departure. */
Test(edt, refund_of_a_shorter_burst)
{
	struct gso_pacer p = mkpacer(0, GSO_PACER_F_PACE_ALL), q;
	uint64_t dep;

	/* Stamped for 1000 bytes at 1 MB/s (1 ms), 400 of them left: 0.4 ms back. */
	cr_assert_eq(gso_pacer__stamp(&p, 0, 1000000, 1000, 1, &dep), 0);
	cr_assert_eq(gso_pacer__refund(&p, 1000000, 400, dep), 0);
	cr_expect_eq(gso_pacer__next(&p), 600000u);
	/* More than the burst's own time: back to its departure, not before. */
	cr_assert_eq(gso_pacer__stamp(&p, 600000, 1000000, 1000, 1, &dep), 0);
	cr_assert_eq(gso_pacer__refund(&p, 1000000, 5000, dep), 0);
	cr_expect_eq(gso_pacer__next(&p), 600000u);
	/* The clock does not run: nothing to give back. */
	q = mkpacer(4, 0);
	cr_assert_eq(gso_pacer__stamp(&q, 0, 1000000, 1000, 1, &dep), 0);
	cr_assert_eq(gso_pacer__refund(&q, 1000000, 1000, 0), 0);
	cr_expect_eq(gso_pacer__next(&q), 0u, "unpaced segments");
	cr_assert_eq(gso_pacer__refund(&p, GSO_RATE_UNPACED, 1000, 0), 0);
	cr_expect_eq(gso_pacer__next(&p), 600000u);
	cr_expect_eq(gso_pacer__refund(&p, 0, 1000, 0), -EINVAL);
	cr_expect_eq(gso_pacer__refund(NULL, 1000000, 1000, 0), -EINVAL);
}

Test(edt, rejects_and_writes_nothing)
{
	struct gso_pacer p = mkpacer(0, GSO_PACER_F_PACE_ALL), ref;
	uint64_t dep = 77;

	cr_assert_eq(gso_pacer__stamp(&p, 0, 1000000, 1000, 1, &dep), 0);
	ref = p;
	dep = 77;
	cr_expect_eq(gso_pacer__stamp(&p, 1, 0, 1000, 1, &dep), -EINVAL);
	cr_expect_eq(gso_pacer__stamp(&p, 1, 1000, 0, 1, &dep), -EINVAL);
	cr_expect_eq(gso_pacer__stamp(&p, 1, 1000, 1000, 0, &dep), -EINVAL);
	cr_expect_eq(gso_pacer__stamp(&p, 1, 1000, 1000, 1, NULL), -EINVAL);
	cr_expect_eq(gso_pacer__stamp(NULL, 1, 1000, 1000, 1, &dep), -EINVAL);
	cr_expect_eq(dep, 77u);
	cr_expect_eq(memcmp(&p, &ref, sizeof(p)), 0);

	GSO_OPTS(gso_pacer_opts, bad, .flags = 1u << 4);
	cr_expect_eq(gso_pacer__init(&p, &bad), -EINVAL);
	cr_expect_eq(gso_pacer__init(NULL, NULL), -EINVAL);
	cr_expect_eq(gso_pacer__init(&p, NULL), 0);
	/* sz is the caller's: short is refused, nothing written; 0 is the whole struct */
	p.sz = 0;
	cr_expect_eq(gso_pacer__init(&p, NULL), 0);
	cr_expect_eq(p.sz, sizeof(p));
	ref = p;
	p.sz = sizeof(p) - 1;
	ref.sz = sizeof(p) - 1;
	cr_expect_eq(gso_pacer__init(&p, NULL), -EINVAL);
	cr_expect_eq(memcmp(&p, &ref, sizeof(p)), 0);
}

/* A huge gap saturates instead of wrapping around. */
Test(edt, saturates)
{
	struct gso_pacer p = mkpacer(0, GSO_PACER_F_PACE_ALL);
	uint64_t dep;

	cr_assert_eq(gso_pacer__stamp(&p, UINT64_MAX - 10, 1, UINT32_MAX, 1, &dep), 0);
	cr_expect_eq(gso_pacer__next(&p), UINT64_MAX);
	cr_assert_eq(gso_pacer__stamp(&p, 0, 1, UINT32_MAX, 1, &dep), 0);
	cr_expect_eq(dep, UINT64_MAX);
}

/* ---- pacing accuracy: 10 Mbit/s .. 100 Gbit/s within 1 % ---- */

struct acase {
	uint64_t mbit;
	uint32_t segs;
	uint32_t jitter_div; /* sender late by up to gap/jitter_div (0: on time) */
};

static struct acase edt_accuracy_cases[] = {
	{ 10, 1, 0 },     { 10, 2, 4 },      { 100, 1, 0 },    { 100, 8, 3 },
	{ 1000, 1, 0 },   { 1000, 10, 4 },   { 10000, 1, 0 },  { 10000, 44, 2 },
	{ 25000, 1, 4 },  { 40000, 5, 0 },   { 40000, 44, 4 }, { 100000, 1, 0 },
	{ 100000, 1, 4 }, { 100000, 7, 3 },  { 100000, 44, 0 }, { 100000, 44, 2 },
};

static void edt_accuracy_row(const struct acase *c)
{
	const uint64_t rate = MBIT(c->mbit);
	const uint32_t wire = c->segs * 1514;
	const uint64_t gap = (uint64_t)wire * 1000000000u / rate;
	struct gso_pacer p = mkpacer(0, 0);
	uint64_t st = c->mbit * 131 + c->segs, now = 1000000, first = 0, last = 0, bytes = 0;
	const int n = 3000;

	for (int i = 0; i < n; i++) {
		uint64_t dep;

		cr_assert_eq(gso_pacer__stamp(&p, now, rate, wire, c->segs, &dep), 0);
		cr_assert_geq(dep, now);
		/* the sender transmits at dep; count bursts once pacing has begun */
		if (i == 20)
			first = dep;
		if (i >= 20 && i < n - 1)
			bytes += wire;
		last = dep;
		/* it wakes at the next departure, possibly late */
		now = gso_pacer__next(&p);
		if (c->jitter_div)
			now += gso_test_rand(&st) % (gap / c->jitter_div + 1);
	}
	double achieved = (double)bytes * 1e9 / (double)(last - first);
	double err = achieved / (double)rate - 1.0;
	cr_log_info("edt %lu Mbit/s, %u segs, jitter 1/%u: %+.4f %%", (unsigned long)c->mbit,
		    c->segs, c->jitter_div, err * 100);
	cr_expect(err > -0.01 && err < 0.01, "%lu Mbit/s, %u segs, jitter 1/%u: %.4f %%",
		  (unsigned long)c->mbit, c->segs, c->jitter_div, err * 100);
}

Test(edt, accuracy)
{
	for (size_t i = 0; i < sizeof(edt_accuracy_cases) / sizeof(edt_accuracy_cases[0]); i++)
		edt_accuracy_row(&edt_accuracy_cases[i]);
}

/* Byte-counting transports: cwnd and in-flight in bytes give the same bursts. */
Test(burst, bytes_in_flight)
{
	static const uint32_t cw[] = { 1, 2, 10, 44, 100, 1000 };

	for (unsigned i = 0; i < sizeof(cw) / sizeof(cw[0]); i++) {
		for (uint32_t fl = 0; fl <= cw[i] + 1; fl += 1 + cw[i] / 7) {
			GSO_OPTS(gso_burst_in, seg, .rate = 100000000, .queued = BIG, .mss = 1448,
				 .hdr_len = 66, .cwnd = cw[i], .in_flight = fl, .peer_wnd = BIG);
			struct gso_burst_in byt = seg;
			struct gso_burst a = { .sz = sizeof(a) }, b = { .sz = sizeof(b) };

			byt.flags = GSO_BURST_IN_BYTES;
			byt.cwnd = cw[i] * 1448 + 1447; /* a partial segment of window is no room */
			byt.in_flight = fl ? fl * 1448 - 1447 : 0; /* a partial one is in flight */
			cr_assert_geq(gso_burst_size(&seg, NULL, &a), 0);
			cr_assert_geq(gso_burst_size(&byt, NULL, &b), 0);
			cr_expect_eq(a.segs, b.segs, "cwnd %u, in flight %u", cw[i], fl);
			cr_expect_eq(a.limit, b.limit, "cwnd %u, in flight %u", cw[i], fl);
		}
	}
	/* a window smaller than one segment still lets one out */
	GSO_OPTS(gso_burst_in, tiny, .rate = 100000000, .queued = BIG, .mss = 1448, .cwnd = 1000,
		 .peer_wnd = BIG, .flags = GSO_BURST_IN_BYTES);
	cr_expect_eq(gso_burst_size(&tiny, NULL, NULL), 1);
}
