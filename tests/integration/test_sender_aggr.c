/*
 * bench/sender over a device that sends in aggregates (issue 28, the 2015
 * seed): the e1000 model in transmit-opportunity mode sends only every
 * 4 ms (with jitter), at most 64 frames at a time (a TSO packet's frames
 * may span aggregates, as A-MPDU aggregates frames) at a 200 Mbit/s link
 * rate, and completes an aggregate's descriptors when it has left, as a
 * Wi-Fi device does.  Once with the default sizing (the engine learns the
 * interval and adapts) and once with the 2015 policy forced
 * (--pacing-shift 10: about 1 ms of data per burst and in the device).
 * Both must deliver every byte verified, and in both the engine must have
 * learned the model's interval to within 25 %.  The throughput each got
 * is printed, not asserted (bench/bench_aggregation measures the policies).
 */
#include "test_sender_util.h"

#define TXOP_US 4000.0

static void aggregating_run(const char *name, int port, const char *shift)
{
	struct run r = { .mode = "offload-e1000", .bytes = "12M", .port = port, .sender_timeout = 90,
			 .extra = { "--txop", "4000", "--txop-rate", "200", "--txop-split",
				    shift ? "--pacing-shift" : NULL, shift } };
	double iv;

	bed();
	transfer(&r, NULL);
	expect_verified(&r, 12u << 20);
	iv = bt_num(r.sj, "dev_aggr_interval_us");
	cr_log_info("%s: %.1f Mbit/s, learned interval %.0f us (model %.0f), %.0f KB per aggregate, "
		    "device-queue limit %.0f KB, burst shift %g, tsq waits %g", name,
		    bt_num(r.sj, "goodput_gbps") * 1e3, iv, TXOP_US, bt_num(r.sj, "dev_aggr_bytes") * 1e-3,
		    bt_num(r.sj, "dev_queue_limit") * 1e-3, bt_num(r.sj, "burst_shift"), bt_num(r.sj, "tsq_waits"));
	cr_assert_geq(iv, TXOP_US * 0.75, "%s: learned %.0f us: %s", name, iv, r.sj);
	cr_assert_leq(iv, TXOP_US * 1.25, "%s: learned %.0f us: %s", name, iv, r.sj);
	if (shift) {
		/* The forced policy stays forced: learned, not applied. */
		cr_assert(strstr(r.sj, "\"dev_aggr_adapted\": false"), "%s: %s", name, r.sj);
		cr_assert_eq(bt_num(r.sj, "burst_shift"), 10, "%s: %s", name, r.sj);
	} else {
		cr_assert(strstr(r.sj, "\"dev_aggr_adapted\": true"), "%s: %s", name, r.sj);
		cr_assert_eq(bt_num(r.sj, "burst_shift"), 8, "%s: 4 ms is mac80211's shift 8: %s", name, r.sj);
	}
	fini();
}

/*
 * A device that does not aggregate learns nothing and keeps the fixed
 * policy: the e1000 model without the mode (its own thread, completions
 * asynchronous, a device-queue limit in force) and the AF_XDP copy path.
 */
Test(sender_aggr, non_aggregating_devices_keep_the_fixed_policy, .fini = fini, .timeout = 200)
{
	static const char *const modes[] = { "offload-e1000", "software" };

	for (int m = 0; m < 2; m++) {
		struct run r = { .mode = modes[m], .bytes = "40M", .port = 7630 + m };

		bed();
		transfer(&r, NULL);
		expect_verified(&r, 40u << 20);
		cr_log_info("%s: %.2f Gbit/s, device-queue limit %.0f KB, burst shift %g, tsq waits %g", r.mode,
			    bt_num(r.sj, "goodput_gbps"), bt_num(r.sj, "dev_queue_limit") * 1e-3,
			    bt_num(r.sj, "burst_shift"), bt_num(r.sj, "tsq_waits"));
		cr_assert_eq(bt_num(r.sj, "dev_aggr_interval_us"), 0, "%s: %s", r.mode, r.sj);
		cr_assert(strstr(r.sj, "\"dev_aggr_adapted\": false"), "%s: %s", r.mode, r.sj);
		cr_assert_eq(bt_num(r.sj, "burst_shift"), 10, "%s: %s", r.mode, r.sj);
		fini();
	}
}

Test(sender_aggr, adaptive_learns_the_opportunity_interval, .fini = fini, .timeout = 200)
{
	aggregating_run("adaptive", 7610, NULL);
}

Test(sender_aggr, forced_2015_policy_still_completes, .fini = fini, .timeout = 200)
{
	aggregating_run("forced 2015 policy", 7620, "10");
}
