/*
 * Issue 28 in virtual time: one bulk flow whose own device is the
 * bottleneck (flowsim.h's sender device), as the 2015 seed's ath10k
 * Wi-Fi: transmit opportunities every 2, 4 or 8 ms (+-10 %) at 100, 600
 * and 1000 Mbit/s, CUBIC and BBR, a 2 ms path behind it (a LAN, as in the
 * seed's tests).  Three claims of <gso/pacer.h> section 3:
 *
 *  - the forced 2015 policy (shift 10, about 1 ms in the device) starves
 *    an aggregating device: the collapse the seed reported;
 *  - the adaptive policy (shift setting 0 with a gso_aggr) learns the
 *    interval and fills the link;
 *  - on a device that does not aggregate, adaptive changes nothing: the
 *    same standing queue and RTT as the fixed default policy.
 *
 * Each run is 1 s of warm-up and 3 s measured; a Test is one (rate,
 * CC) pair, so each stays far below the suite timeout under ASan.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <string.h>

#include "flowsim.h"

#define MS 1000000ull
#define MBIT(x) ((uint64_t)(x) * 1000000u / 8u)

struct sim_case {
	uint32_t mbit, cc;
};

static struct sim_case cases[] = {
	{ 100, GSO_CC_CUBIC }, { 600, GSO_CC_CUBIC }, { 1000, GSO_CC_CUBIC },
	{ 100, GSO_CC_BBR },   { 600, GSO_CC_BBR },   { 1000, GSO_CC_BBR },
};

static const uint64_t intervals_ms[] = { 2, 4, 8 };

enum policy { POL_2015, POL_FIXED, POL_ADAPTIVE };

static const char *cc_name(uint32_t cc)
{
	return cc == GSO_CC_BBR ? "BBR" : "CUBIC";
}

static struct fs_result run(const struct sim_case *c, uint64_t interval_ms, enum policy pol)
{
	struct fs_params p;
	struct fs_result r;

	memset(&p, 0, sizeof(p));
	p.link_rate = MBIT(c->mbit);
	p.rtt_ns = 2 * MS;
	p.seed = 7;
	p.mss = 1448;
	p.hdr_len = 66;
	p.measure_from_ns = 1000 * MS;
	p.duration_ns = 4000 * MS;
	p.nflows = 1;
	p.flow[0].cc_algo = c->cc;
	p.dev.on = true;
	p.dev.interval_ns = interval_ms * MS;
	p.dev.jitter_ns = p.dev.interval_ns / 10;
	p.dev.shift = pol == POL_2015 ? 10 : 0;
	p.dev.learn = pol == POL_ADAPTIVE;
	cr_assert_eq(fs_run(&p, &r), 0, "%u Mbit/s, %lu ms, %s", c->mbit, (unsigned long)interval_ms, cc_name(c->cc));
	return r;
}

/*
 * Where the 2015 policy must collapse.  Its device-queue limit is about
 * 1 ms at the pacing rate, at least two bursts, at most 256 KiB, while a
 * device that sends full aggregates needs two of them posted (the one on
 * the air and the next).  BBR paces near what is delivered: its limit,
 * two bursts of about 1 ms, holds only the smallest aggregate here
 * (100 Mbit/s every 2 ms: 25 KB), and its estimate falls with what the
 * starved device delivers.  Loss-free CUBIC stays in slow start (no
 * HyStart in gso_cc), pacing at twice cwnd / srtt with cwnd grown to
 * twice what is in flight: its 1 ms is about 4 ms of delivered data,
 * enough for aggregates well below the 256 KiB ceiling.  Measured (share
 * of the link): CUBIC 96/98/78 % at 100 Mbit/s and 93 % at 600 Mbit/s
 * every 2 ms, BBR 84 % at 100 Mbit/s every 2 ms; every other case 1-68 %.
 */
static bool must_collapse(const struct sim_case *c, uint64_t interval_ms)
{
	uint64_t aggregate = MBIT(c->mbit) * interval_ms / 1000;

	return aggregate >= (c->cc == GSO_CC_BBR ? 40000u : 200000u);
}

ParameterizedTestParameters(aggr_sim, forced_2015_policy_collapses)
{
	return cr_make_param_array(struct sim_case, cases, sizeof(cases) / sizeof(cases[0]));
}

/*
 * Below 75 % of the link: the seed measured 250-440 Mbit/s of about 600
 * (42-73 %), and a starved device here delivers 1-67 %, while a device
 * that is fed delivers 97 % (the +-10 % jitter of the opportunities is
 * the rest).
 */
ParameterizedTest(struct sim_case *c, aggr_sim, forced_2015_policy_collapses)
{
	for (unsigned i = 0; i < sizeof(intervals_ms) / sizeof(intervals_ms[0]); i++) {
		struct fs_result r = run(c, intervals_ms[i], POL_2015);
		bool collapse = must_collapse(c, intervals_ms[i]);

		cr_log_info("2015 policy, %s, %u Mbit/s, opportunities every %lu ms: %.1f %% of the link, "
			    "RTT p99 %.2f ms%s",
			    cc_name(c->cc), c->mbit, (unsigned long)intervals_ms[i], r.utilization * 100,
			    r.rtt_p99_us / 1e3, collapse ? "" : " (small aggregates: no collapse expected)");
		if (collapse)
			cr_expect_lt(r.utilization, 0.75, "2015 policy, %s, %u Mbit/s, %lu ms: %.3f of the link",
				     cc_name(c->cc), c->mbit, (unsigned long)intervals_ms[i], r.utilization);
	}
}

ParameterizedTestParameters(aggr_sim, adaptive_fills_the_link)
{
	return cr_make_param_array(struct sim_case, cases, sizeof(cases) / sizeof(cases[0]));
}

/*
 * At least 90 % of the link, the interval learned within 15 % of the
 * device's (the median of jittered intervals, +-10 %), and a standing
 * queue of at most three aggregates (the one on the air, the next, the
 * limit's headroom), or 256 KiB where two bursts of 64 KiB are more:
 * the limit follows what the device delivers, not a pacing rate far
 * above it (loss-free CUBIC's, four times it, stood at eight intervals).
 *
 * BBR needs the device's aggregates in its window too
 * (gso_cc__set_dev_quantum): without them, at 1 Gbit/s every 8 ms, its
 * cwnd of 2 x bw x min_rtt plus one aggregate of extra_acked (about
 * 1.7 MB, the min RTT kept short by the smallest aggregates) was below
 * the two aggregates the device holds (2 MB) plus the path, and it got
 * 84 %.
 */
ParameterizedTest(struct sim_case *c, aggr_sim, adaptive_fills_the_link)
{
	for (unsigned i = 0; i < sizeof(intervals_ms) / sizeof(intervals_ms[0]); i++) {
		uint64_t t = intervals_ms[i] * MS;
		struct fs_result r = run(c, intervals_ms[i], POL_ADAPTIVE);
		double need = 0.90;

		cr_log_info("adaptive, %s, %u Mbit/s, every %lu ms: %.1f %% of the link, RTT p50 %.2f p99 %.2f ms, "
			    "device queue mean %.0f KB, learned %.2f ms, %lu bytes per batch",
			    cc_name(c->cc), c->mbit, (unsigned long)intervals_ms[i], r.utilization * 100,
			    r.rtt_p50_us / 1e3, r.rtt_p99_us / 1e3, r.mean_queue_bytes / 1e3,
			    r.flow[0].aggr_interval_ns / 1e6, (unsigned long)r.flow[0].aggr_batch_bytes);
		cr_expect_geq(r.utilization, need, "adaptive, %s, %u Mbit/s, %lu ms: %.3f of the link", cc_name(c->cc),
			      c->mbit, (unsigned long)intervals_ms[i], r.utilization);
		uint64_t aggregate = MBIT(c->mbit) * intervals_ms[i] / 1000, qmax = 3 * aggregate;

		if (qmax < 256u << 10)
			qmax = 256u << 10;
		cr_expect_leq(r.mean_queue_bytes, (double)qmax, "adaptive, %s, %u Mbit/s, %lu ms: queue %.0f bytes",
			      cc_name(c->cc), c->mbit, (unsigned long)intervals_ms[i], r.mean_queue_bytes);
		cr_expect(r.flow[0].aggr_interval_ns >= t * 85 / 100 && r.flow[0].aggr_interval_ns <= t * 115 / 100,
			  "learned %lu ns for %lu", (unsigned long)r.flow[0].aggr_interval_ns, (unsigned long)t);
	}
}

ParameterizedTestParameters(aggr_sim, non_aggregating_device_unchanged)
{
	return cr_make_param_array(struct sim_case, cases, sizeof(cases) / sizeof(cases[0]));
}

static void within_10_percent(double adaptive, double fixed, const char *what, const struct sim_case *c)
{
	cr_expect(adaptive <= fixed * 1.10 && adaptive >= fixed * 0.90, "%s, %s, %u Mbit/s: adaptive %.1f, fixed %.1f",
		  what, cc_name(c->cc), c->mbit, adaptive, fixed);
}

/* A FIFO that completes each frame as it leaves: nothing to learn, nothing changes. */
ParameterizedTest(struct sim_case *c, aggr_sim, non_aggregating_device_unchanged)
{
	struct fs_result fixed = run(c, 0, POL_FIXED), ad = run(c, 0, POL_ADAPTIVE);

	cr_log_info("no aggregation, %s, %u Mbit/s: fixed %.1f %% queue %.0f KB RTT p50 %.2f p99 %.2f ms; "
		    "adaptive %.1f %% queue %.0f KB RTT p50 %.2f p99 %.2f ms",
		    cc_name(c->cc), c->mbit, fixed.utilization * 100, fixed.mean_queue_bytes / 1e3,
		    fixed.rtt_p50_us / 1e3, fixed.rtt_p99_us / 1e3, ad.utilization * 100, ad.mean_queue_bytes / 1e3,
		    ad.rtt_p50_us / 1e3, ad.rtt_p99_us / 1e3);
	cr_expect_eq(ad.flow[0].aggr_interval_ns, 0, "learned an interval from a FIFO");
	within_10_percent(ad.mean_queue_bytes, fixed.mean_queue_bytes, "mean device queue", c);
	within_10_percent((double)ad.rtt_p50_us, (double)fixed.rtt_p50_us, "RTT p50", c);
	within_10_percent((double)ad.rtt_p99_us, (double)fixed.rtt_p99_us, "RTT p99", c);
	within_10_percent(ad.utilization, fixed.utilization, "link share", c);
}
