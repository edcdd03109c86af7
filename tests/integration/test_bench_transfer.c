/*
 * bench/kernel_sender -> bench/receiver across a veth test-bed: every byte
 * of the stream verified by the receiver, and the sender told so by the
 * receiver's verdict.  Variants: length given in the header, time-limited
 * (length unknown until FIN), raw stream with the seed on both command
 * lines, and the tiny receive buffer of the 2004 TSO story.
 */
#include <math.h>

#include "test_bench_util.h"

static struct nsbed tb;

static void fini(void)
{
	bt_fini();
	nsbed_destroy(&tb);
}

struct xfer_case {
	char name[32];          /* (no pointers: Criterion copies params to another process) */
	char bytes[16];         /* --bytes, or "" */
	char time[16];          /* --time, or "" */
	char rcvbuf[16];        /* receiver --rcvbuf, or "" */
	bool raw;               /* --seed on the receiver, --raw on the sender */
	uint64_t expect_bytes;  /* 0: whatever was sent, but more than 0 */
};

static struct xfer_case xfer_cases[] = {
	{ "header_with_length", "24M", "", "", false, 24u << 20 },
	{ "time_limited", "", "0.5", "", false, 0 },
	{ "time_before_bytes", "64G", "0.3", "", false, 0 },
	{ "raw_seed", "8M", "", "", true, 8u << 20 },
	{ "tiny_rcvbuf", "1M", "", "4K", false, 1u << 20 },
	{ "odd_length", "1000003", "", "", false, 1000003 },
};

static void run_case(const struct xfer_case *c)
{
	const char *recv = bt_prog("receiver"), *send = bt_prog("kernel_sender");
	const char *ready = bt_path("ready");
	const char *rargv[BT_MAX_ARGS] = { recv, "--netns", tb.ns[1], "--once", "--json",
					   "--port", "7301", "--idle-timeout", "10",
					   "--accept-timeout", "20", "--ready-file", ready };
	const char *sargv[BT_MAX_ARGS] = { send, "--netns", tb.ns[0], "--dst", "10.77.0.2",
					   "--port", "7301", "--seed", "424242", "--json" };
	int rn = 13, sn = 10, rs, ss;
	struct bt_proc *rp, *sp;
	const char *rj, *sj;
	double rbytes;

	if (c->rcvbuf[0]) {
		rargv[rn++] = "--rcvbuf";
		rargv[rn++] = c->rcvbuf;
	}
	if (c->raw) {
		rargv[rn++] = "--seed";
		rargv[rn++] = "424242";
		sargv[sn++] = "--raw";
	}
	if (c->bytes[0]) {
		sargv[sn++] = "--bytes";
		sargv[sn++] = c->bytes;
	}
	if (c->time[0]) {
		sargv[sn++] = "--time";
		sargv[sn++] = c->time;
	}
	rp = bt_spawn(rargv);
	bt_wait_file(ready, rp, 10);
	sp = bt_spawn(sargv);
	ss = bt_wait(sp, 40);
	rs = bt_wait(rp, 20);
	rj = bt_read(rp->out);
	sj = bt_read(sp->out);
	if (rs || ss) {
		bt_dump(rp, "receiver");
		bt_dump(sp, "kernel_sender");
	}
	cr_assert_eq(rs, 0, "%s: receiver exit %d: %s", c->name, rs, rj);
	cr_assert_eq(ss, 0, "%s: sender exit %d: %s", c->name, ss, sj);
	cr_assert_str_eq(bt_str(rj, "status"), "ok", "%s: %s", c->name, rj);
	rbytes = bt_num(rj, "bytes");
	cr_assert_eq(bt_num(rj, "bytes_verified"), rbytes, "%s: %s", c->name, rj);
	cr_assert_eq(bt_num(sj, "bytes"), rbytes, "%s: sender %s / receiver %s", c->name, sj, rj);
	if (c->expect_bytes)
		cr_assert_eq(rbytes, (double)c->expect_bytes, "%s: %s", c->name, rj);
	else
		cr_assert_gt(rbytes, 0, "%s: %s", c->name, rj);
	if (c->time[0])
		cr_assert_eq(bt_num(rj, "expected_bytes"), 0, "time-limited: open-ended header: %s", rj);
	if (c->raw) {
		cr_assert_str_eq(bt_str(rj, "stream"), "raw");
		cr_assert(isnan(bt_num(sj, "verified")) && strstr(sj, "\"verified\": null"), "%s", sj);
	} else {
		cr_assert_str_eq(bt_str(rj, "stream"), "header");
		cr_assert_eq(bt_num(rj, "seed"), 424242);
		cr_assert(strstr(sj, "\"verified\": true"), "%s: %s", c->name, sj);
		cr_assert_eq(bt_num(sj, "verdict_verified"), rbytes, "%s", sj);
	}
	if (c->rcvbuf[0]) {
		/* The kernel doubles the request; the buffer must stay tiny. */
		cr_assert_leq(bt_num(rj, "rcvbuf"), 16384, "%s", rj);
		cr_assert_eq(bt_num(rj, "rcvbuf_requested"), 4096);
	}
	/* The receiver's view of the stack is there and consistent. */
	cr_assert_geq(bt_num(rj, "ip_segments_in"), bt_num(rj, "ip_packets_in"), "%s", rj);
	cr_assert_geq(bt_num(rj, "ti_data_segs_in"), rbytes / 65536, "%s", rj);
}

ParameterizedTestParameters(bench_transfer, kernel_to_receiver)
{
	return cr_make_param_array(struct xfer_case, xfer_cases, sizeof(xfer_cases) / sizeof(xfer_cases[0]));
}

ParameterizedTest(struct xfer_case *c, bench_transfer, kernel_to_receiver, .fini = fini, .timeout = 90)
{
	int err;

	gso_test_require_root();
	err = gso_testbed_create(&tb);
	cr_assert_eq(err, 0, "test-bed: %s", strerror(-err));
	run_case(c);
}

/* A second connection to a --once receiver is refused; without --once it is served. */
Test(bench_transfer, serves_sequential_connections, .fini = fini, .timeout = 60)
{
	const char *ready = bt_path("ready2");
	int err;

	gso_test_require_root();
	err = gso_testbed_create(&tb);
	cr_assert_eq(err, 0, "test-bed: %s", strerror(-err));
	const char *rargv[] = { bt_prog("receiver"), "--netns", tb.ns[1], "--json", "--port", "7302",
				"--idle-timeout", "10", "--ready-file", ready, NULL };
	struct bt_proc *rp = bt_spawn(rargv);

	bt_wait_file(ready, rp, 10);
	for (int i = 0; i < 2; i++) {
		const char *sargv[] = { bt_prog("kernel_sender"), "--netns", tb.ns[0], "--dst", "fd77::2",
					"--port", "7302", "--bytes", "2M", "--seed", i ? "2" : "1",
					"--json", NULL };
		struct bt_proc *sp = bt_spawn(sargv);
		int ss = bt_wait(sp, 30);

		if (ss)
			bt_dump(sp, "kernel_sender");
		cr_assert_eq(ss, 0, "connection %d over IPv6", i);
	}
	cr_assert_eq(bt_stop(rp, 10), 0, "receiver: %s", bt_read(rp->out));
	const char *rj = bt_read(rp->out);
	const char *second = strchr(rj, '\n');

	cr_assert(second && strstr(second + 1, "\"status\": \"ok\""), "two results expected: %s", rj);
	cr_assert(strstr(rj, "\"seed\": 1,") && strstr(rj, "\"seed\": 2,"), "%s", rj);
}
