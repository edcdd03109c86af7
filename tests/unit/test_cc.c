/*
 * Congestion control without a network: the RTT estimator's arithmetic,
 * Reno's and CUBIC's windows on scripted ACK/loss sequences, and the pacing
 * rate formula.  (The controllers over a simulated link are in
 * test_linksim.c.)
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include <gso/gso.h>

#define MS 1000000ull
#define SEC 1000000000ull

/* ---- RTT estimator ---- */

Test(rtt, rfc6298)
{
	struct gso_rtt r = { .sz = sizeof(r) };

	cr_assert_eq(gso_rtt__init(&r, 0), 0);
	cr_expect_eq(gso_rtt__rto(&r), GSO_RTT_INIT_RTO_NS);
	cr_assert_eq(gso_rtt__update(&r, 1 * SEC, 100 * MS), 0);
	cr_expect_eq(r.srtt_ns, 100 * MS);
	cr_expect_eq(r.rttvar_ns, 50 * MS);
	cr_expect_eq(r.min_rtt_ns, 100 * MS);
	cr_expect_eq(gso_rtt__rto(&r), 300 * MS);
	cr_assert_eq(gso_rtt__update(&r, 2 * SEC, 200 * MS), 0);
	/* rttvar = 3/4 * 50 + 1/4 * 100 = 62.5; srtt = 7/8 * 100 + 1/8 * 200 = 112.5 */
	cr_expect_eq(r.rttvar_ns, 62500000u);
	cr_expect_eq(r.srtt_ns, 112500000u);
	cr_expect_eq(r.latest_ns, 200 * MS);
	cr_expect_eq(r.min_rtt_ns, 100 * MS, "a larger sample keeps the minimum");
	cr_assert_eq(gso_rtt__update(&r, 3 * SEC, 80 * MS), 0);
	cr_expect_eq(r.min_rtt_ns, 80 * MS);
	/* tiny RTTs: RTO floor */
	cr_assert_eq(gso_rtt__init(&r, 0), 0);
	cr_assert_eq(gso_rtt__update(&r, 0, 50000), 0);
	cr_expect_eq(gso_rtt__rto(&r), GSO_RTT_MIN_RTO_NS);
	cr_expect_eq(gso_rtt__update(&r, 0, 0), -EINVAL);
	cr_expect_eq(gso_rtt__update(NULL, 0, 1), -EINVAL);
	cr_expect_eq(gso_rtt__init(NULL, 0), -EINVAL);
	r.sz = 0;
	cr_expect_eq(gso_rtt__init(&r, 0), 0, "sz 0 (= {0}): the whole struct");
	cr_expect_eq(r.sz, sizeof(r));
	r.sz = sizeof(r) - 1;
	cr_expect_eq(gso_rtt__init(&r, 0), -EINVAL, "sz too small");
}

Test(rtt, min_window_expires)
{
	struct gso_rtt r = { .sz = sizeof(r) };

	cr_assert_eq(gso_rtt__init(&r, 10 * SEC), 0);
	cr_assert_eq(gso_rtt__update(&r, 1 * SEC, 10 * MS), 0);
	cr_assert_eq(gso_rtt__update(&r, 5 * SEC, 30 * MS), 0);
	cr_expect_eq(r.min_rtt_ns, 10 * MS);
	/* the path got longer: after the window the old minimum goes */
	cr_assert_eq(gso_rtt__update(&r, 12 * SEC, 30 * MS), 0);
	cr_expect_eq(r.min_rtt_ns, 30 * MS);
}

/* ---- helpers ---- */

static struct gso_cc *mkcc(uint32_t algo, uint32_t hdr, uint64_t max_rate)
{
	GSO_OPTS(gso_cc_opts, o, .algo = algo, .mss = 1448, .hdr_len = hdr, .max_rate = max_rate);
	struct gso_cc *cc = NULL;

	cr_assert_eq(gso_cc__create(&cc, &o), 0);
	return cc;
}

static void ack(struct gso_cc *cc, uint64_t now, uint32_t acked, uint64_t rtt, uint32_t out,
		uint32_t flags)
{
	GSO_OPTS(gso_cc_ack, a, .now_ns = now, .acked_segs = acked, .rtt_ns = rtt,
		 .packets_out = out, .flags = flags);

	cr_assert_eq(gso_cc__on_ack(cc, &a), 0);
}

static struct gso_cc_state state(const struct gso_cc *cc)
{
	struct gso_cc_state st = { .sz = sizeof(st) };

	cr_assert_eq(gso_cc__state(cc, &st), 0);
	return st;
}

/* ---- validation ---- */

Test(cc, validates)
{
	struct gso_cc *cc = (void *)1;
	static uint64_t mem[64];
	struct {
		struct gso_cc_opts o;
		uint8_t tail[8];
	} t;

	GSO_OPTS(gso_cc_opts, nomss);
	cr_expect_eq(gso_cc__create(&cc, &nomss), -EINVAL);
	cr_expect_eq(gso_cc__create(&cc, NULL), -EINVAL);
	GSO_OPTS(gso_cc_opts, bigmss, .mss = 65536);
	cr_expect_eq(gso_cc__create(&cc, &bigmss), -EINVAL);
	GSO_OPTS(gso_cc_opts, algo, .mss = 1448, .algo = 3);
	cr_expect_eq(gso_cc__create(&cc, &algo), -EINVAL);
	GSO_OPTS(gso_cc_opts, hdr, .mss = 1448, .hdr_len = 256);
	cr_expect_eq(gso_cc__create(&cc, &hdr), -EINVAL);
	GSO_OPTS(gso_cc_opts, ratio, .mss = 1448, .ss_ratio = 10001);
	cr_expect_eq(gso_cc__create(&cc, &ratio), -EINVAL);
	memset(&t, 0, sizeof(t));
	t.o.sz = sizeof(t);
	t.o.mss = 1448;
	t.tail[5] = 1;
	cr_expect_eq(gso_cc__create(&cc, &t.o), -EINVAL);
	cr_expect_eq(cc, (void *)1, "nothing written on error");

	GSO_OPTS(gso_cc_opts, o, .mss = 1448);
	cr_assert_leq(gso_cc__mem_size(), sizeof(mem));
	cr_expect_eq(gso_cc__init(&cc, mem, gso_cc__mem_size() - 1, &o), -ENOSPC);
	cr_assert_eq(gso_cc__init(&cc, mem, sizeof(mem), &o), 0);
	GSO_OPTS(gso_cc_ack, badflag, .acked_segs = 1, .flags = 4);
	cr_expect_eq(gso_cc__on_ack(cc, &badflag), -EINVAL);
	cr_expect_eq(gso_cc__on_ack(cc, NULL), -EINVAL);
	cr_expect_eq(gso_cc__on_loss(NULL, 0, 0), -EINVAL);
	cr_expect_eq(gso_cc__on_rto(NULL, 0), -EINVAL);
	cr_expect_eq(gso_cc__state(cc, NULL), -EINVAL);
	cr_expect_eq(gso_cc__state(cc, &(struct gso_cc_state){ .sz = sizeof(size_t) }), -EINVAL);
	cr_expect_eq(gso_cc__cwnd(cc), GSO_CC_DEF_INIT_CWND);
	gso_cc__destroy(cc); /* caller memory: no free */
	gso_cc__destroy(NULL);
}

/* ---- Reno ---- */

/*
 * A new segment size (the path MTU moved): cwnd stays in segments, and
 * CUBIC's pacing rate, cwnd's bytes over srtt, follows the new size at once.
 */
Test(cc, set_mss)
{
	struct gso_cc *cc = mkcc(GSO_CC_CUBIC, 52, 0);
	uint64_t rate;
	uint32_t cwnd;

	ack(cc, 1000000, 1, 10000000, 10, 0);
	cwnd = gso_cc__cwnd(cc);
	rate = gso_cc__pacing_rate(cc);
	cr_assert_eq(gso_cc__set_mss(cc, 1228), 0);
	cr_expect_eq(gso_cc__cwnd(cc), cwnd);
	/* (1228 + 52) / (1448 + 52) of the rate, within rounding. */
	cr_expect_lt(gso_cc__pacing_rate(cc), rate);
	cr_expect_geq(gso_cc__pacing_rate(cc) + 2, rate * 1280 / 1500);
	cr_expect_leq(gso_cc__pacing_rate(cc), rate * 1280 / 1500 + 2);
	cr_expect_eq(gso_cc__set_mss(NULL, 1228), -EINVAL);
	cr_expect_eq(gso_cc__set_mss(cc, 0), -EINVAL);
	cr_expect_eq(gso_cc__set_mss(cc, 65536), -EINVAL);
	gso_cc__destroy(cc);
}

Test(cc, reno_window)
{
	struct gso_cc *cc = mkcc(GSO_CC_RENO, 0, 0);
	struct gso_cc_state st = state(cc);

	cr_expect_eq(st.cwnd, 10u);
	cr_expect_eq(st.ssthresh, UINT32_MAX);
	cr_expect_eq(st.in_slow_start, 1u);
	cr_expect_eq(st.pacing_rate, GSO_RATE_UNPACED, "no RTT sample yet");

	/* slow start: one segment per segment acked */
	ack(cc, 10 * MS, 10, 10 * MS, 0, 0);
	cr_expect_eq(gso_cc__cwnd(cc), 20u);
	ack(cc, 20 * MS, 20, 10 * MS, 0, 0);
	cr_expect_eq(gso_cc__cwnd(cc), 40u);
	/* not cwnd-limited: no growth */
	ack(cc, 25 * MS, 20, 10 * MS, 0, GSO_CC_ACK_NOT_CWND_LIMITED);
	cr_expect_eq(gso_cc__cwnd(cc), 40u);

	/* loss: halve */
	cr_expect_eq(gso_cc__on_loss(cc, 30 * MS, 29 * MS), 1);
	st = state(cc);
	cr_expect_eq(st.cwnd, 20u);
	cr_expect_eq(st.ssthresh, 20u);
	cr_expect_eq(st.loss_events, 1u);
	/* more losses from the same window: one event */
	cr_expect_eq(gso_cc__on_loss(cc, 31 * MS, 29 * MS), 0);
	cr_expect_eq(gso_cc__on_loss(cc, 31 * MS, 30 * MS), 0);
	cr_expect_eq(gso_cc__cwnd(cc), 20u);
	/* ACKs within an RTT of the reduction do not grow it */
	ack(cc, 35 * MS, 10, 10 * MS, 10, 0);
	cr_expect_eq(gso_cc__cwnd(cc), 20u);
	/* congestion avoidance: +1 per cwnd acked */
	ack(cc, 45 * MS, 19, 10 * MS, 10, 0);
	cr_expect_eq(gso_cc__cwnd(cc), 20u);
	ack(cc, 46 * MS, 1, 10 * MS, 10, 0);
	cr_expect_eq(gso_cc__cwnd(cc), 21u);
	ack(cc, 56 * MS, 42, 10 * MS, 10, 0);
	cr_expect_eq(gso_cc__cwnd(cc), 23u);
	/* a loss of a segment sent after recovery began is a new event */
	cr_expect_eq(gso_cc__on_loss(cc, 60 * MS, 31 * MS), 1);
	cr_expect_eq(gso_cc__cwnd(cc), 11u);
	/* timeout: back to one segment, slow start */
	cr_expect_eq(gso_cc__on_rto(cc, 70 * MS), 0);
	st = state(cc);
	cr_expect_eq(st.cwnd, 1u);
	cr_expect_eq(st.ssthresh, 5u);
	cr_expect_eq(st.in_slow_start, 1u);
	ack(cc, 80 * MS, 1, 10 * MS, 0, 0);
	cr_expect_eq(gso_cc__cwnd(cc), 2u);
	/* floor of 2 */
	for (int i = 0; i < 5; i++)
		gso_cc__on_loss(cc, (100 + (uint64_t)i * 100) * MS, (99 + (uint64_t)i * 100) * MS);
	cr_expect_eq(gso_cc__cwnd(cc), GSO_CC_MIN_CWND);
	gso_cc__destroy(cc);
}

/* ---- pacing rate ---- */

Test(cc, pacing_rate_formula)
{
	struct gso_cc *cc = mkcc(GSO_CC_RENO, 66, 0);

	/* srtt 10 ms, cwnd 10, slow start (ssthresh infinite): 200 % */
	ack(cc, 10 * MS, 0, 10 * MS, 0, 0);
	/* (1448 + 66) * 10 * 2 / 0.01 s */
	cr_expect_eq(gso_cc__pacing_rate(cc), 3028000u);
	/* packets_out above cwnd counts */
	ack(cc, 11 * MS, 0, 10 * MS, 15, 0);
	cr_expect_eq(gso_cc__pacing_rate(cc), 4542000u);
	/* after a loss: cwnd 5 = ssthresh, not < ssthresh/2: 120 % */
	gso_cc__on_loss(cc, 12 * MS, 11 * MS);
	ack(cc, 13 * MS, 0, 10 * MS, 0, 0);
	cr_expect_eq(gso_cc__cwnd(cc), 5u);
	cr_expect_eq(gso_cc__pacing_rate(cc), 1514u * 5 * 12 * 10);
	gso_cc__destroy(cc);

	/* the cap */
	cc = mkcc(GSO_CC_CUBIC, 66, 1000000);
	cr_expect_eq(gso_cc__pacing_rate(cc), 1000000u, "cap also bounds the unpaced start");
	ack(cc, 10 * MS, 0, 10 * MS, 0, 0);
	cr_expect_eq(gso_cc__pacing_rate(cc), 1000000u);
	gso_cc__destroy(cc);

	/* ratios are settings */
	GSO_OPTS(gso_cc_opts, o, .mss = 1000, .ss_ratio = 100, .ca_ratio = 100, .init_cwnd = 4);
	cr_assert_eq(gso_cc__create(&cc, &o), 0);
	ack(cc, 10 * MS, 0, 1 * MS, 0, 0);
	cr_expect_eq(gso_cc__pacing_rate(cc), 4000000u);
	gso_cc__destroy(cc);
}

/* ---- CUBIC ---- */

/*
 * One window acked per RTT, the way a cwnd-limited sender sees it, as ACKs
 * of two segments spread over the RTT.  Returns cwnd after `secs` seconds.
 */
static uint32_t run_rtts(struct gso_cc *cc, uint64_t *now, uint64_t rtt, double secs)
{
	uint64_t end = *now + (uint64_t)(secs * 1e9);

	while (*now < end) {
		uint32_t w = gso_cc__cwnd(cc);

		for (uint32_t k = 0; k < w; k += 2)
			ack(cc, *now + (uint64_t)k * rtt / w, w - k >= 2 ? 2 : 1, rtt, w, 0);
		*now += rtt;
	}
	return gso_cc__cwnd(cc);
}

/*
 * W_max 1000 segments, RTT 100 ms: the cubic term dominates the Reno
 * estimate, so cwnd follows W(t) = 1000 + 0.4 (t - K)^3 with
 * K = cbrt(1000 * 0.3 / 0.4) = 9.09 s (t counted from the first growth,
 * one min_rtt ahead).
 */
Test(cc, cubic_curve)
{
	struct gso_cc *cc = mkcc(GSO_CC_CUBIC, 0, 0);
	uint64_t now = 0, rtt = 100 * MS;

	ack(cc, 0, 990, rtt, 0, 0);
	cr_assert_eq(gso_cc__cwnd(cc), 1000u);
	now = SEC;
	cr_assert_eq(gso_cc__on_loss(cc, now, now - 1), 1);
	cr_expect_eq(gso_cc__cwnd(cc), 700u, "beta 0.7");
	cr_expect_eq(state(cc).ssthresh, 700u);
	now += rtt; /* the recovery RTT */

	uint32_t w2 = run_rtts(cc, &now, rtt, 2.0);
	cr_expect(w2 > 820 && w2 < 950, "concave: fast at first (%u after 2 s; curve 864)", w2);
	uint32_t wk = run_rtts(cc, &now, rtt, 7.0);
	cr_expect(wk >= 970 && wk <= 1030, "plateau near W_max at K (%u)", wk);
	uint32_t w11 = run_rtts(cc, &now, rtt, 2.0);
	cr_expect(w11 >= wk && w11 <= 1050, "flat around the plateau (%u; curve 1004)", w11);
	uint32_t w16 = run_rtts(cc, &now, rtt, 5.0);
	cr_expect(w16 > 1080 && w16 < 1200, "convex beyond it (%u; curve 1143)", w16);

	/* fast convergence: a loss below the last maximum remembers less */
	cr_assert_eq(gso_cc__on_loss(cc, now, now - 1), 1);
	uint32_t w = gso_cc__cwnd(cc);
	cr_expect_eq(w, (uint32_t)(w16 * 0.7));
	now += SEC;
	cr_assert_eq(gso_cc__on_loss(cc, now, now - 1), 1);
	cr_expect_eq(gso_cc__cwnd(cc), (uint32_t)(w * 0.7));
	gso_cc__destroy(cc);
}

/*
 * Small window, short RTT: the cubic term is tiny and CUBIC grows like the
 * Reno estimate, 3 (1 - 0.7) / (1 + 0.7) = 0.53 segment per RTT from 0.7 W
 * (RFC 8312 TCP-friendly region), while Reno itself adds 1 per RTT from W/2.
 */
Test(cc, cubic_reno_friendly)
{
	struct gso_cc *cu = mkcc(GSO_CC_CUBIC, 0, 0), *re = mkcc(GSO_CC_RENO, 0, 0);
	uint64_t t1 = 0, t2 = 0, rtt = 10 * MS;

	ack(cu, 0, 30, rtt, 0, 0);
	ack(re, 0, 30, rtt, 0, 0);
	cr_assert_eq(gso_cc__on_loss(cu, 1, 0), 1);
	cr_assert_eq(gso_cc__on_loss(re, 1, 0), 1);
	cr_expect_eq(gso_cc__cwnd(cu), 28u);
	cr_expect_eq(gso_cc__cwnd(re), 20u);
	uint32_t c = run_rtts(cu, &t1, rtt, 2.0), r = run_rtts(re, &t2, rtt, 2.0);
	/* 200 RTTs: 28 + 0.53 * 199 = 133 (the pure cubic curve would be ~40) */
	cr_expect(c > 120 && c < 145, "cubic %u", c);
	cr_expect(r > 210 && r < 222, "reno %u", r);
	gso_cc__destroy(cu);
	gso_cc__destroy(re);
}

/*
 * The window counts segments acked, not ACKs or bursts: the same segments
 * acked two at a time or as stretch ACKs of 44 give the same Reno window
 * (2004: cwnd grew once per super-segment).
 */
Test(cc, counts_segments_not_acks)
{
	struct gso_cc *a = mkcc(GSO_CC_RENO, 66, 0), *b = mkcc(GSO_CC_RENO, 66, 0);
	uint64_t now = 5 * MS;

	ack(a, now, 0, 5 * MS, 0, 0);
	ack(b, now, 0, 5 * MS, 0, 0);
	gso_cc__on_loss(a, now, now - 1);
	gso_cc__on_loss(b, now, now - 1);
	now += 10 * MS;
	for (int round = 0; round < 60; round++) {
		for (int k = 0; k < 44; k += 2)
			ack(a, now, 2, 5 * MS, 44, 0);
		ack(b, now, 44, 5 * MS, 44, 0);
		now += 5 * MS;
	}
	struct gso_cc_state sa = state(a), sb = state(b);
	cr_expect_eq(sa.cwnd, sb.cwnd);
	cr_expect_gt(sa.cwnd, 5u + 30, "grew in congestion avoidance (%u)", sa.cwnd);
	cr_expect_eq(sa.pacing_rate, sb.pacing_rate);
	gso_cc__destroy(a);
	gso_cc__destroy(b);
}

/* After a timeout, an old segment's loss is the same event; growth resumes at once. */
Test(cc, rto_then_old_loss)
{
	struct gso_cc *cc = mkcc(GSO_CC_RENO, 0, 0);

	ack(cc, 10 * MS, 30, 10 * MS, 0, 0);
	cr_assert_eq(gso_cc__cwnd(cc), 40u);
	cr_assert_eq(gso_cc__on_rto(cc, 500 * MS), 0);
	cr_expect_eq(gso_cc__cwnd(cc), 1u);
	cr_expect_eq(state(cc).ssthresh, 20u);
	cr_expect_eq(gso_cc__on_loss(cc, 501 * MS, 400 * MS), 0, "sent before the timeout");
	cr_expect_eq(state(cc).ssthresh, 20u);
	ack(cc, 502 * MS, 1, 0, 0, 0);
	cr_expect_eq(gso_cc__cwnd(cc), 2u, "slow start right away");
	gso_cc__destroy(cc);
}
