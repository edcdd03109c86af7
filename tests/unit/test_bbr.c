/*
 * BBR (GSO_CC_BBR) in virtual time: the library's flow queue, rate
 * samples, BBR, burst sizing and pacer on the multi-flow bottleneck
 * simulator (flowsim.h).  The scenarios are issue #12's: what BBR is for
 * (1 % random loss), no bufferbloat in a deep buffer, a fast startup,
 * PROBE_RTT on schedule, sharing, and app-limited senders.  Every
 * bound is derived from the path in the test, not from a measured run.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>

#include "flowsim.h"

#define MSS 1448u
#define HDR 66u                       /* Ethernet + IPv4 + TCP with timestamps */
#define GBIT (1000000000ull / 8)      /* 1 Gbit/s in bytes/s */
#define MS 1000000ull
#define S 1000000000ull

static void path(struct fs_params *p, uint64_t rate, uint64_t rtt_ns, double buf_bdp, uint32_t loss_ppm)
{
	memset(p, 0, sizeof(*p));
	p->link_rate = rate;
	p->rtt_ns = rtt_ns;
	p->queue_bytes = (uint64_t)(buf_bdp * (double)rate * (double)rtt_ns / 1e9);
	p->loss_ppm = loss_ppm;
	p->seed = 12;
	p->mss = MSS;
	p->hdr_len = HDR;
}

static double bdp_bytes(const struct fs_params *p)
{
	return (double)p->link_rate * (double)p->rtt_ns / 1e9;
}

/* ---- what BBR is for --------------------------------------------------- */

Test(bbr, one_percent_loss_keeps_the_link_full)
{
	struct fs_params p;
	struct fs_result bbr, cubic;

	path(&p, GBIT, 20 * MS, 1.0, 10000);
	p.duration_ns = 30 * S;
	p.nflows = 1;
	p.flow[0].cc_algo = GSO_CC_BBR;
	cr_assert_eq(fs_run(&p, &bbr), 0);
	p.flow[0].cc_algo = GSO_CC_CUBIC;
	cr_assert_eq(fs_run(&p, &cubic), 0);
	printf("1%% loss, 1 Gbit/s, 20 ms: BBR %.1f %% of the link (%lu retrans, %lu RTO), CUBIC %.1f %%\n",
	       bbr.utilization * 100, (unsigned long)bbr.flow[0].retrans_segs, (unsigned long)bbr.flow[0].rto,
	       cubic.utilization * 100);
	/* Loss-based control halves on every loss: ~1.22 / sqrt(p) segments per RTT (Mathis). */
	cr_expect_lt(cubic.utilization, 0.10, "CUBIC at 1 %% loss: %.3f", cubic.utilization);
	cr_expect_geq(bbr.utilization, 0.80, "BBR at 1 %% loss: %.3f", bbr.utilization);
	cr_expect_eq(bbr.flow[0].rto, 0, "SACK and RACK repair the losses without timeouts");
}

/* ---- a trace of the model, taken after every ACK ------------------------ */

#define MAX_MODES 64

struct trace {
	unsigned flow;
	uint64_t base_rtt_ns, link_payload;
	uint32_t last_mode;
	uint32_t nmodes;
	uint32_t mode[MAX_MODES];
	uint64_t mode_at[MAX_MODES];
	uint64_t bw_at_full;           /* first time bw >= 90 % of the link's payload rate */
	uint64_t stamp_before[MAX_MODES]; /* the min RTT stamp on the ACK before each mode change */
	uint64_t stamp;
	uint32_t phases_seen;          /* PROBE_BW cycle indices seen (bit mask) */
	uint32_t phase_gain[8], phase_cwnd_gain[8];
	uint32_t first_phase;          /* the cycle index PROBE_BW started at (+1: 0 = not yet) */
	/* PROBE_RTT */
	uint32_t probe_max_cwnd, probe_min_inflight;
	uint64_t probe_min_rtt;        /* smallest RTT sample seen in PROBE_RTT */
	uint64_t min_rtt_after_probe;  /* the model's min RTT right after the last PROBE_RTT */
	/* app-limited */
	uint64_t window_from, window_to, bw_min_in_window, bw_before;
	uint64_t app_limited_samples;
};

static void trace_init(struct trace *t, const struct fs_params *p, unsigned flow)
{
	memset(t, 0, sizeof(*t));
	t->flow = flow;
	t->base_rtt_ns = p->rtt_ns;
	t->link_payload = (uint64_t)fs_payload_rate(p);
	t->last_mode = UINT32_MAX;
	t->probe_min_inflight = UINT32_MAX;
	t->probe_min_rtt = UINT64_MAX;
	t->bw_min_in_window = UINT64_MAX;
}

static void trace_hook(void *ctx, unsigned flow, uint64_t now, const struct gso_cc *cc,
		       const struct gso_flowq *q)
{
	struct trace *t = ctx;
	struct gso_cc_bbr_info bi = { .sz = sizeof(bi) };
	struct gso_flowq_info fi = { .sz = sizeof(fi) };
	struct gso_rate_sample rs = { .sz = sizeof(rs) };

	if (flow != t->flow || gso_cc__bbr_info(cc, &bi))
		return;
	gso_flowq__info(q, &fi);
	gso_flowq__rate_sample(q, &rs);
	if (bi.mode != t->last_mode) {
		if (t->last_mode == GSO_BBR_PROBE_RTT)
			t->min_rtt_after_probe = bi.min_rtt_ns;
		if (t->nmodes < MAX_MODES) {
			t->stamp_before[t->nmodes] = t->stamp;
			t->mode[t->nmodes] = bi.mode;
			t->mode_at[t->nmodes++] = now;
		}
		t->last_mode = bi.mode;
	}
	t->stamp = bi.min_rtt_stamp_ns;
	if (bi.mode == GSO_BBR_PROBE_BW) {
		if (!t->first_phase)
			t->first_phase = bi.cycle_idx + 1;
		t->phases_seen |= 1u << bi.cycle_idx;
		t->phase_gain[bi.cycle_idx] = bi.pacing_gain;
		t->phase_cwnd_gain[bi.cycle_idx] = bi.cwnd_gain;
	}
	if (!t->bw_at_full && bi.bw * 10 >= t->link_payload * 9)
		t->bw_at_full = now;
	if (bi.mode == GSO_BBR_PROBE_RTT) {
		uint32_t cwnd = gso_cc__cwnd(cc);

		if (cwnd > t->probe_max_cwnd)
			t->probe_max_cwnd = cwnd;
		if (fi.in_flight < t->probe_min_inflight)
			t->probe_min_inflight = fi.in_flight;
		if (rs.rtt_ns && rs.rtt_ns < t->probe_min_rtt)
			t->probe_min_rtt = rs.rtt_ns;
	}
	if (now < t->window_from)
		t->bw_before = bi.bw;
	if (now >= t->window_from && now < t->window_to) {
		if (bi.bw < t->bw_min_in_window)
			t->bw_min_in_window = bi.bw;
		if (rs.flags & GSO_RATE_F_APP_LIMITED)
			t->app_limited_samples++;
	}
}

static const char *mode_name(uint32_t m)
{
	static const char *const n[] = { "STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT" };

	return m < 4 ? n[m] : "?";
}

static void trace_print(const struct trace *t)
{
	for (uint32_t i = 0; i < t->nmodes; i++)
		printf("  %9.3f ms  %s\n", (double)t->mode_at[i] / 1e6, mode_name(t->mode[i]));
}

/* ---- no bufferbloat, and a fast startup --------------------------------- */

Test(bbr, deep_buffer_no_standing_queue_fast_startup)
{
	struct fs_params p;
	struct fs_result r;
	struct trace t;
	double bdp, bdp_segs, rounds;

	path(&p, GBIT, 20 * MS, 4.0, 0);
	p.duration_ns = 6 * S;
	p.nflows = 1;
	p.flow[0].cc_algo = GSO_CC_BBR;
	trace_init(&t, &p, 0);
	p.hook = trace_hook;
	p.hook_ctx = &t;
	/* Statistics from when STARTUP and DRAIN are long over (they take well under 1 s here). */
	p.measure_from_ns = 1 * S;
	cr_assert_eq(fs_run(&p, &r), 0);
	bdp = bdp_bytes(&p);
	bdp_segs = bdp / (MSS + HDR);
	rounds = (double)t.bw_at_full / (double)p.rtt_ns;
	printf("4 BDP buffer: max queue %.2f BDP, mean %.2f BDP; bw at 90 %% after %.1f RTTs "
	       "(log2(BDP segs) + 3 = %.1f); goodput %.1f %%\n",
	       (double)r.max_queue_bytes / bdp, r.mean_queue_bytes / bdp, rounds, log2(bdp_segs) + 3,
	       r.utilization * 100);
	trace_print(&t);
	cr_assert_geq(t.nmodes, 3);
	cr_expect_eq(t.mode[0], GSO_BBR_STARTUP);
	cr_expect_eq(t.mode[1], GSO_BBR_DRAIN);
	cr_expect_eq(t.mode[2], GSO_BBR_PROBE_BW);
	cr_expect_lt(t.mode_at[2], p.measure_from_ns, "startup and drain over before the statistics start");
	cr_expect_leq((double)r.max_queue_bytes, bdp, "standing queue %.2f BDP", (double)r.max_queue_bytes / bdp);
	cr_expect_eq(r.flow[0].losses_queue, 0, "a 4 BDP buffer never overflows");
	cr_expect_gt(t.bw_at_full, 0);
	cr_expect_leq(rounds, log2(bdp_segs) + 3 + 0.5, "startup took %.1f RTTs", rounds);
	cr_expect_geq(r.utilization, 0.95);
	/* PROBE_BW: 5/4, 3/4, then six phases of 1, cwnd gain 2, never starting at 3/4. */
	cr_expect_eq(t.phases_seen, 0xff, "phases seen %#x", t.phases_seen);
	cr_expect_neq(t.first_phase, 2, "started at the 3/4 phase");
	cr_expect_eq(t.phase_gain[0], GSO_BBR_UNIT * 5 / 4);
	cr_expect_eq(t.phase_gain[1], GSO_BBR_UNIT * 3 / 4);
	for (int k = 2; k < 8; k++)
		cr_expect_eq(t.phase_gain[k], GSO_BBR_UNIT, "phase %d", k);
	for (int k = 0; k < 8; k++)
		cr_expect_eq(t.phase_cwnd_gain[k], 2 * GSO_BBR_UNIT, "phase %d", k);
}

/* ---- PROBE_RTT on schedule ------------------------------------------------ */

Test(bbr, probe_rtt_every_10s_for_200ms_at_4_segments)
{
	struct fs_params p;
	struct fs_result r;
	struct trace t;
	uint64_t rtt = 20 * MS, ser = (MSS + HDR) * S / (100 * GBIT / 1000);
	unsigned probes = 0;

	/* 100 Mbit/s keeps 25 simulated seconds quick; a 2 BDP buffer holds a standing
	 * queue in PROBE_BW, so every RTT sample outside PROBE_RTT is above the minimum. */
	path(&p, 100 * GBIT / 1000, rtt, 2.0, 0);
	p.duration_ns = 25 * S;
	p.nflows = 1;
	p.flow[0].cc_algo = GSO_CC_BBR;
	trace_init(&t, &p, 0);
	p.hook = trace_hook;
	p.hook_ctx = &t;
	cr_assert_eq(fs_run(&p, &r), 0);
	trace_print(&t);
	for (uint32_t i = 0; i < t.nmodes; i++) {
		uint64_t start = t.mode_at[i], end, since;

		if (t.mode[i] != GSO_BBR_PROBE_RTT)
			continue;
		cr_assert_lt(i + 1, t.nmodes, "PROBE_RTT ends");
		end = t.mode_at[i + 1];
		/* Due 10 s after the min RTT was last taken (or the last PROBE_RTT ended):
		 * the first ACK after that starts it. */
		since = start - t.stamp_before[i];
		printf("  PROBE_RTT %u: %.3f s after the min RTT stamp, %.1f ms long\n", probes,
		       (double)since / 1e9, (double)(end - start) / 1e6);
		cr_expect_geq(since, 10 * S, "PROBE_RTT %u after %.3f s", probes, (double)since / 1e9);
		cr_expect_leq(since, 10 * S + rtt, "PROBE_RTT %u after %.3f s", probes, (double)since / 1e9);
		/* 200 ms at the minimum, after in flight has come down (at most a round of drain). */
		cr_expect_geq(end - start, 200 * MS, "PROBE_RTT %u lasted %.1f ms", probes, (double)(end - start) / 1e6);
		cr_expect_leq(end - start, 200 * MS + 3 * rtt, "PROBE_RTT %u lasted %.1f ms", probes,
			      (double)(end - start) / 1e6);
		cr_expect_neq(t.mode[i + 1], GSO_BBR_STARTUP, "the pipe stays known full");
		probes++;
	}
	cr_expect_eq(probes, 2, "two PROBE_RTTs in 25 s");
	cr_expect_leq(t.probe_max_cwnd, 4, "cwnd 4 in PROBE_RTT");
	cr_expect_leq(t.probe_min_inflight, 4, "in flight reached 4");
	/* With the queue drained the samples are the path's own RTT: the minimum is re-taken. */
	cr_expect_leq(t.probe_min_rtt, rtt + 4 * ser, "PROBE_RTT saw %.3f ms", (double)t.probe_min_rtt / 1e6);
	cr_expect_leq(t.min_rtt_after_probe, t.probe_min_rtt);
	cr_expect_geq(r.utilization, 0.90, "PROBE_RTT costs about 2 %% of the time");
}

/* ---- sharing ------------------------------------------------------------------- */

struct share_case {
	double buf_bdp;
	uint64_t second_start_ns;
};

/*
 * Two flows, measured from 10 s to 20 s.  The second starts while the
 * first is in STARTUP (a 2 BDP buffer), or once the first has filled the
 * pipe (a 1 BDP buffer).  Not tested: a latecomer into a deep standing
 * queue, whose min RTT includes the first flow's queue until their
 * PROBE_RTTs coincide; BBR v1 (as Linux's) favours it meanwhile.
 */
ParameterizedTestParameters(bbr, two_flows_share_fairly)
{
	static struct share_case c[] = { { 2.0, 100 * MS }, { 1.0, 1 * S } };

	return cr_make_param_array(struct share_case, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct share_case *c, bbr, two_flows_share_fairly)
{
	struct fs_params p;
	struct fs_result r;
	double fair;

	path(&p, 100 * GBIT / 1000, 20 * MS, c->buf_bdp, 0);
	p.duration_ns = 20 * S;
	p.measure_from_ns = 10 * S;
	p.nflows = 2;
	p.flow[0].cc_algo = GSO_CC_BBR;
	p.flow[1].cc_algo = GSO_CC_BBR;
	p.flow[1].start_ns = c->second_start_ns;
	cr_assert_eq(fs_run(&p, &r), 0);
	fair = fs_payload_rate(&p) / 2;
	printf("two BBR flows, %.0f BDP buffer, second at %.1f s; 10-20 s: %.1f and %.1f Mbit/s "
	       "(fair share %.1f), link %.1f %%\n", c->buf_bdp, (double)c->second_start_ns / 1e9,
	       r.flow[0].goodput * 8e-6, r.flow[1].goodput * 8e-6, fair * 8e-6, r.utilization * 100);
	for (int i = 0; i < 2; i++) {
		cr_expect_geq(r.flow[i].goodput, 0.7 * fair, "flow %d: %.1f Mbit/s", i, r.flow[i].goodput * 8e-6);
		cr_expect_leq(r.flow[i].goodput, 1.3 * fair, "flow %d: %.1f Mbit/s", i, r.flow[i].goodput * 8e-6);
	}
	cr_expect_geq(r.utilization, 0.90);
}

/* ---- app-limited senders ------------------------------------------------------- */

Test(bbr, app_limited_sender_keeps_its_bandwidth_estimate)
{
	struct fs_params p;
	struct fs_result r;
	struct trace t;

	/* Bulk for 3 s, then the application writes 10 % of the link rate for 5 s
	 * (25 times the bandwidth filter's 10 rounds), then bulk again. */
	path(&p, 100 * GBIT / 1000, 20 * MS, 2.0, 0);
	p.duration_ns = 10 * S;
	p.nflows = 1;
	p.flow[0].cc_algo = GSO_CC_BBR;
	p.flow[0].app_rate = (uint64_t)(fs_payload_rate(&p) / 10);
	p.flow[0].app_from_ns = 3 * S;
	p.flow[0].app_to_ns = 8 * S;
	trace_init(&t, &p, 0);
	t.window_from = 3 * S + 500 * MS; /* what was queued at 3 s has gone by then */
	t.window_to = 8 * S;
	p.hook = trace_hook;
	p.hook_ctx = &t;
	cr_assert_eq(fs_run(&p, &r), 0);
	printf("app-limited: bw before %.1f, lowest while app-limited %.1f Mbit/s; %lu app-limited samples\n",
	       (double)t.bw_before * 8e-6, (double)t.bw_min_in_window * 8e-6, (unsigned long)t.app_limited_samples);
	cr_expect_gt(t.app_limited_samples, 100, "the samples were marked");
	cr_expect_geq(t.bw_before * 10, t.link_payload * 9, "bulk filled the link first");
	cr_expect_geq(t.bw_min_in_window * 10, t.bw_before * 9, "app-limited samples did not pull the estimate down");
}

/* ---- the controller through its API ---------------------------------------------- */

static struct gso_cc *bbr_new(uint64_t max_rate)
{
	struct gso_cc *cc = NULL;

	GSO_OPTS(gso_cc_opts, o, .algo = GSO_CC_BBR, .mss = MSS, .hdr_len = HDR, .max_rate = max_rate, .seed = 7);
	cr_assert_eq(gso_cc__create(&cc, &o), 0);
	return cc;
}

/* One ACK of `segs` segments with a sample of `rate` payload bytes/s over `rtt`. */
static void bbr_ack(struct gso_cc *cc, uint64_t now, uint64_t *delivered, uint32_t segs, uint64_t rate,
		    uint64_t rtt, uint32_t packets_out, uint32_t flags, uint32_t lost_segs)
{
	struct gso_rate_sample rs = { .sz = sizeof(rs) };

	/* UINT32_MAX: what a 172-segment pipe with a short queue holds, or cwnd if less. */
	if (packets_out == UINT32_MAX)
		packets_out = gso_cc__cwnd(cc) < 180 ? gso_cc__cwnd(cc) : 180;
	rs.prior_in_flight = (packets_out + segs) * MSS;
	rs.prior_delivered = *delivered > rate * rtt / S ? *delivered - rate * rtt / S : 0;
	*delivered += (uint64_t)segs * MSS;
	rs.delivered_total = *delivered;
	rs.delivered = *delivered - rs.prior_delivered;
	rs.interval_ns = rs.delivered * S / rate;
	rs.ack_interval_ns = rs.interval_ns;
	rs.rtt_ns = rtt;
	rs.acked_sacked = segs * MSS;
	rs.losses = lost_segs * MSS;
	GSO_OPTS(gso_cc_ack, a, .now_ns = now, .rtt_ns = rtt, .acked_segs = segs, .packets_out = packets_out,
		 .flags = flags, .rs = &rs);
	cr_assert_eq(gso_cc__on_ack(cc, &a), 0);
}

Test(bbr_cc, options_and_info)
{
	struct gso_cc *cc = NULL;
	struct gso_cc_bbr_info bi = { .sz = sizeof(bi) };
	struct gso_rate_sample bad = { .sz = 3 };
	uint64_t want;

	GSO_OPTS(gso_cc_opts, shift, .algo = GSO_CC_BBR, .mss = MSS, .pacing_shift = 32);
	cr_expect_eq(gso_cc__create(&cc, &shift), -EINVAL);
	cc = bbr_new(0);
	cr_assert_eq(gso_cc__bbr_info(cc, &bi), 0);
	cr_expect_eq(bi.mode, GSO_BBR_STARTUP);
	cr_expect_eq(bi.pacing_gain, GSO_BBR_UNIT * 2885 / 1000 + 1, "2/ln 2");
	cr_expect_eq(bi.cwnd_gain, bi.pacing_gain);
	cr_expect_eq(bi.min_rtt_ns, 0);
	cr_expect_eq(gso_cc__cwnd(cc), GSO_CC_DEF_INIT_CWND);
	/* Before an RTT: 2.885 x init cwnd per nominal 1 ms, less the 1 % margin, in wire bytes. */
	want = (uint64_t)10 * (MSS + HDR) * 1000 * 739 / 256 * 99 / 100;
	cr_expect(llabs((long long)gso_cc__pacing_rate(cc) - (long long)want) <= (long long)want / 100,
		  "initial rate %lu, want about %lu", (unsigned long)gso_cc__pacing_rate(cc), (unsigned long)want);
	cr_expect_eq(gso_cc__min_burst_segs(cc), 2);
	GSO_OPTS(gso_cc_ack, a, .now_ns = 1, .rs = &bad);
	cr_expect_eq(gso_cc__on_ack(cc, &a), -EINVAL, "a sample with a bad sz is refused");
	GSO_OPTS(gso_cc_ack, f, .now_ns = 1, .flags = 1u << 7);
	cr_expect_eq(gso_cc__on_ack(cc, &f), -EINVAL);
	bi.sz = 4;
	cr_expect_eq(gso_cc__bbr_info(cc, &bi), -EINVAL);
	cr_expect_eq(gso_cc__bbr_info(NULL, &bi), -EINVAL);
	gso_cc__destroy(cc);

	GSO_OPTS(gso_cc_opts, cu, .mss = MSS);
	cr_assert_eq(gso_cc__create(&cc, &cu), 0);
	bi.sz = sizeof(bi);
	cr_expect_eq(gso_cc__bbr_info(cc, &bi), -EOPNOTSUPP);
	cr_expect_eq(gso_cc__min_burst_segs(cc), 0, "CUBIC: the pacer's default");
	gso_cc__destroy(cc);
	cr_expect_eq(gso_cc__min_burst_segs(NULL), 0);
}

Test(bbr_cc, min_burst_is_one_segment_below_1_2_mbit)
{
	/* A 1 Mbit/s cap keeps the pacing rate below bbr_min_tso_rate. */
	struct gso_cc *cc = bbr_new(1000000 / 8);

	cr_expect_leq(gso_cc__pacing_rate(cc), 1000000 / 8);
	cr_expect_eq(gso_cc__min_burst_segs(cc), 1);
	gso_cc__destroy(cc);
}

/* Drive a controller into PROBE_BW on a 100 Mbit/s, 20 ms path. */
static struct gso_cc *bbr_steady(uint64_t *now, uint64_t *delivered)
{
	struct gso_cc *cc = bbr_new(0);
	struct gso_cc_bbr_info bi = { .sz = sizeof(bi) };
	uint64_t rate = 12500000, rtt = 20 * MS;

	*now = 1 * MS;
	*delivered = 0;
	for (int i = 0; i < 4000; i++) {
		*now += 200000; /* an ACK of 2 segments every 0.2 ms: about 116 Mbit/s of payload */
		bbr_ack(cc, *now, delivered, 2, rate, rtt, UINT32_MAX, 0, 0);
	}
	cr_assert_eq(gso_cc__bbr_info(cc, &bi), 0);
	cr_assert_eq(bi.mode, GSO_BBR_PROBE_BW, "mode %u", bi.mode);
	cr_assert(bi.full_bw_reached);
	return cc;
}

Test(bbr_cc, recovery_conserves_packets_then_restores_cwnd)
{
	uint64_t now, delivered, rate_before;
	struct gso_cc *cc = bbr_steady(&now, &delivered);
	struct gso_cc_bbr_info bi = { .sz = sizeof(bi) };
	uint32_t cwnd_before = gso_cc__cwnd(cc);

	rate_before = gso_cc__pacing_rate(cc);
	/* Loss: nothing is cut by the loss itself. */
	cr_expect_eq(gso_cc__on_loss(cc, now, now - 20 * MS), 1);
	cr_expect_eq(gso_cc__cwnd(cc), cwnd_before);
	cr_expect_eq(gso_cc__pacing_rate(cc), rate_before, "loss does not cut the rate");
	/* First ACK in recovery: cwnd = in flight + delivered (packet conservation). */
	now += 200000;
	bbr_ack(cc, now, &delivered, 2, 12500000, 20 * MS, 100, GSO_CC_ACK_RECOVERY, 1);
	cr_expect_eq(gso_cc__cwnd(cc), 102);
	/* Still recovering in the same round: never below in flight + delivered. */
	now += 200000;
	bbr_ack(cc, now, &delivered, 2, 12500000, 20 * MS, 90, GSO_CC_ACK_RECOVERY, 0);
	cr_expect_eq(gso_cc__cwnd(cc), 102);
	/* Recovery over: the cwnd from before comes back, within the model's target. */
	now += 200000;
	bbr_ack(cc, now, &delivered, 2, 12500000, 20 * MS, 90, 0, 0);
	gso_cc__bbr_info(cc, &bi);
	cr_expect_eq(gso_cc__cwnd(cc), cwnd_before + 2 < bi.target_cwnd ? cwnd_before + 2 : bi.target_cwnd,
		     "cwnd %u, before %u, target %u", gso_cc__cwnd(cc), cwnd_before, bi.target_cwnd);
	cr_expect_gt(gso_cc__cwnd(cc), 102);
	gso_cc__destroy(cc);
}

Test(bbr_cc, timeout_starts_at_one_segment_and_restores)
{
	uint64_t now, delivered;
	struct gso_cc *cc = bbr_steady(&now, &delivered);
	struct gso_cc_bbr_info bi = { .sz = sizeof(bi) };
	uint32_t cwnd_before = gso_cc__cwnd(cc);
	uint64_t bw_before;

	gso_cc__bbr_info(cc, &bi);
	bw_before = bi.bw;
	cr_assert_eq(gso_cc__on_rto(cc, now), 0);
	cr_expect_eq(gso_cc__cwnd(cc), 1);
	gso_cc__bbr_info(cc, &bi);
	cr_expect_eq(bi.bw, bw_before, "the model survives a timeout");
	cr_expect_eq(bi.prior_cwnd, cwnd_before);
	now += 200000;
	bbr_ack(cc, now, &delivered, 1, 12500000, 20 * MS, 1, GSO_CC_ACK_RECOVERY, 0);
	/* 1 + 1 delivered, raised to the 4-segment floor (no conservation after a timeout). */
	cr_expect_eq(gso_cc__cwnd(cc), 4, "cwnd %u", gso_cc__cwnd(cc));
	now += 200000;
	bbr_ack(cc, now, &delivered, 1, 12500000, 20 * MS, 1, 0, 0);
	gso_cc__bbr_info(cc, &bi);
	cr_expect_eq(gso_cc__cwnd(cc), cwnd_before + 1 < bi.target_cwnd ? cwnd_before + 1 : bi.target_cwnd,
		     "cwnd %u, before %u, target %u", gso_cc__cwnd(cc), cwnd_before, bi.target_cwnd);
	gso_cc__destroy(cc);
}
