/*
 * bench/sender over the e1000 model in transmit-opportunity mode (--txop,
 * --txop-frames, --txop-rate; GSO_E1000_F_TXOP): the stream still
 * delivers every byte when the device sends only in aggregates and
 * completes them late, and the sender's JSON reports the model's
 * aggregates.  No rate is asserted: only that the mode ran as asked
 * (aggregates, their interval no shorter than the model's, none above the
 * frame limit but a single larger packet).  The options' usage errors
 * come first.
 */
#include "test_sender_util.h"

/* Nonsense is a usage error (exit 2) with a message, before anything is opened. */
Test(sender_txop, usage_errors, .fini = bt_fini, .timeout = 30)
{
	static const struct bt_usage bad[] = {
		{ { "--txop", "0" }, "bad --txop '0'" },
		{ { "--txop", "2000000" }, "bad --txop" },
		{ { "--txop-frames", "16" }, "need --txop" },
		{ { "--txop", "4000", "--txop-rate", "0" }, "bad --txop-rate '0'" },
		{ { "--txop", "4000", "--txop-frames", "0" }, "bad --txop-frames" },
		{ { "--txop", "4000" }, "needs --mode offload-e1000" }, /* the default mode is software */
		{ { "--txop-split" }, "need --txop" },
	};
	const char *pre[] = { bt_prog("sender"), "--dev", "lo", "--dst", "127.0.0.1", NULL };
	const char *help[] = { bt_prog("sender"), "--help", NULL };
	struct bt_proc *p;

	bt_expect_usages(pre, bad, sizeof(bad) / sizeof(bad[0]));
	p = bt_spawn(help);
	cr_assert_eq(bt_wait(p, 10), 0);
	cr_assert(strstr(bt_read(p->out), "--txop US"), "%s", bt_read(p->out));
	cr_assert(strstr(bt_read(p->out), "--txop-frames N"), "%s", bt_read(p->out));
	cr_assert(strstr(bt_read(p->out), "--txop-rate MBIT"), "%s", bt_read(p->out));
	cr_assert(strstr(bt_read(p->out), "--txop-split"), "%s", bt_read(p->out));
}

/* 8 MB through a model that sends every 4 ms at most 32 frames at 400 Mbit/s. */
Test(sender_txop, stream_over_aggregating_model, .fini = fini, .timeout = 120)
{
	struct run r = { .mode = "offload-e1000", .bytes = "8M", .port = 7460,
			 .extra = { "--txop", "4000", "--txop-frames", "32", "--txop-rate", "400" },
			 .sender_timeout = 90 };
	double txops, interval, fmax;

	bed();
	transfer(&r, NULL);
	if (r.sender_exit == 77)
		cr_skip_test("offload-e1000 not available here: %s", r.sj);
	expect_verified(&r, 8u << 20);
	txops = bt_num(r.sj, "txops");
	interval = bt_num(r.sj, "txop_interval_mean_us");
	fmax = bt_num(r.sj, "txop_frames_max");
	cr_log_info("txop: %s", r.sj);
	cr_assert(strstr(r.sj, "\"txop\": true"), "%s", r.sj);
	cr_assert_gt(txops, 10, "%s", r.sj);
	/* Jitter is +-1/8: no mean interval below 3/4 of it; above, when the sender left some empty. */
	cr_assert_geq(interval, 3000, "%s", r.sj);
	cr_assert_gt(bt_num(r.sj, "txop_frames_mean"), 1, "%s", r.sj);
	cr_assert_gt(bt_num(r.sj, "txop_airtime_s"), 0, "%s", r.sj);
	/* Whole packets: above 32 only as one TSO packet of more frames, which the model's max_segs bounds. */
	cr_assert_gt(fmax, 0, "%s", r.sj);
	if (fmax > 32)
		cr_assert_geq(bt_num(r.sj, "burst_max_segs"), fmax, "%s", r.sj);
}

/* --txop-split: aggregates of frames (A-MPDU), so none is larger than the limit. */
Test(sender_txop, stream_over_splitting_model, .fini = fini, .timeout = 120)
{
	struct run r = { .mode = "offload-e1000", .bytes = "8M", .port = 7470,
			 .extra = { "--txop", "4000", "--txop-frames", "32", "--txop-split" },
			 .sender_timeout = 90 };

	bed();
	transfer(&r, NULL);
	if (r.sender_exit == 77)
		cr_skip_test("offload-e1000 not available here: %s", r.sj);
	expect_verified(&r, 8u << 20);
	cr_log_info("txop split: %s", r.sj);
	cr_assert(strstr(r.sj, "\"txop_split\": true"), "%s", r.sj);
	cr_assert_gt(bt_num(r.sj, "txops"), 10, "%s", r.sj);
	cr_assert_leq(bt_num(r.sj, "txop_frames_max"), 32, "%s", r.sj);
	cr_assert_gt(bt_num(r.sj, "txop_full"), 0, "%s", r.sj);
	cr_assert_geq(bt_num(r.sj, "txop_interval_mean_us"), 3000, "%s", r.sj);
}
