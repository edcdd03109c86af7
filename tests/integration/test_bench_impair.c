/*
 * Kernel TCP through the impair relay: sender namespace -- veth -- relay
 * namespace (bench/impair relay) -- veth -- receiver namespace.  With loss,
 * delay and jitter, reordering and duplication, kernel TCP must still
 * deliver every byte (the receiver verifies each one) within a bounded
 * time, and the relay's counters must show that the fault really happened
 * (so the test can fail when the relay silently forwards everything).
 *
 * Topology from two gso_testbeds: bed 0 (a0 | b0) and bed 1 (a1 | b1).
 * Bed 1's side-a veth moves into b0, which becomes the relay namespace
 * with no addresses; the sender (a0, 10.77.0.1) reaches the receiver (b1,
 * 10.77.0.2) only through the relay.  The sending veth has TSO/GSO off, so
 * faults apply per segment.  Both beds' watchdogs remove everything.
 */
#include <math.h>

#include "test_bench_util.h"

static void relay_topology(void)
{
	bt_relay_beds();
	cr_assert_eq(nsbed_sh(&bt_bed[0], 1,
			      "ip addr flush dev %s && "
			      "echo 1 > /proc/sys/net/ipv6/conf/%s/disable_ipv6 && "
			      "echo 1 > /proc/sys/net/ipv6/conf/%s/disable_ipv6 && "
			      "ip link set %s up && ip link set %s up",
			      bt_bed[0].ifname[1], bt_bed[0].ifname[1], bt_bed[1].ifname[0], bt_bed[0].ifname[1],
			      bt_bed[1].ifname[0]), 0);
	cr_assert_eq(nsbed_sh(&bt_bed[0], 0, "ethtool -K %s tso off gso off >/dev/null", bt_bed[0].ifname[0]), 0);
}

struct imp_case {
	char name[32];        /* (no pointers: Criterion copies params to another process) */
	char args[12][12];    /* relay fault options, "" ends */
	char bytes[8];
	char counter[16];     /* relay JSON counter that must be > 0 ("rev_faults": any on ACKs) */
	double frac_lo, frac_hi; /* counter / fwd_rx bounds (0,0: only > 0) */
	double min_rtt_ms;    /* sender's min RTT at least this (delay cases) */
};

static struct imp_case imp_cases[] = {
	{ "loss_1pct", { "--loss", "1" }, "6M", "fwd_lost", 0.002, 0.04, 0 },
	{ "loss_5pct", { "--loss", "5" }, "4M", "fwd_lost", 0.02, 0.12, 0 },
	{ "delay_20ms_jitter_5ms", { "--delay", "20", "--jitter", "5" }, "4M", "fwd_tx", 0, 0, 14 },
	{ "reorder_1pct", { "--reorder", "1" }, "6M", "fwd_reordered", 0.002, 0.04, 0 },
	{ "dup_1pct", { "--dup", "1" }, "6M", "fwd_dup", 0.002, 0.04, 0 },
	{ "all_both_ways", { "--loss", "1", "--delay", "20", "--jitter", "5", "--reorder", "1", "--dup", "1",
			     "--dir", "both" }, "2M", "rev_faults", 0, 0, 14 },
};

ParameterizedTestParameters(bench_impair, kernel_tcp_recovers)
{
	return cr_make_param_array(struct imp_case, imp_cases, sizeof(imp_cases) / sizeof(imp_cases[0]));
}

ParameterizedTest(struct imp_case *c, bench_impair, kernel_tcp_recovers, .fini = bt_relay_fini, .timeout = 120)
{
	const char *rready = bt_path("rready"), *iready = bt_path("iready");
	const char *iargv[BT_MAX_ARGS] = { NULL };
	struct bt_proc *ip, *rp, *sp;
	const char *ij, *rj, *sj;
	int n = 0, rs, ss;
	double cnt, rx;

	gso_test_require_root();
	relay_topology();
	iargv[n++] = bt_prog("impair");
	iargv[n++] = "relay";
	iargv[n++] = "--netns";
	iargv[n++] = bt_bed[0].ns[1];
	iargv[n++] = "--a";
	iargv[n++] = bt_bed[0].ifname[1];
	iargv[n++] = "--b";
	iargv[n++] = bt_bed[1].ifname[0];
	iargv[n++] = "--seed";
	iargv[n++] = "11";
	iargv[n++] = "--json";
	iargv[n++] = "--ready-file";
	iargv[n++] = iready;
	for (int i = 0; i < 12 && c->args[i][0]; i++)
		iargv[n++] = c->args[i];
	ip = bt_spawn(iargv);
	bt_wait_file(iready, ip, 10);

	const char *rargv[] = { bt_prog("receiver"), "--netns", bt_bed[1].ns[1], "--once", "--json",
				"--port", "7321", "--idle-timeout", "20", "--accept-timeout", "30",
				"--ready-file", rready, NULL };
	rp = bt_spawn(rargv);
	bt_wait_file(rready, rp, 10);
	const char *sargv[] = { bt_prog("kernel_sender"), "--netns", bt_bed[0].ns[0], "--dst", "10.77.0.2",
				"--port", "7321", "--bytes", c->bytes, "--seed", "3", "--json",
				"--connect-timeout", "10", "--verdict-timeout", "60", NULL };
	sp = bt_spawn(sargv);
	ss = bt_wait(sp, 90);
	rs = bt_wait(rp, 20);
	bt_stop(ip, 10);
	ij = bt_read(ip->out);
	rj = bt_read(rp->out);
	sj = bt_read(sp->out);
	cr_log_info("%s: relay: %s", c->name, ij);
	if (rs || ss) {
		bt_dump(sp, "kernel_sender");
		bt_dump(rp, "receiver");
		bt_dump(ip, "impair");
	}
	cr_assert_eq(rs, 0, "%s: receiver exit %d: %s", c->name, rs, rj);
	cr_assert_eq(ss, 0, "%s: sender exit %d: %s", c->name, ss, sj);
	cr_assert_str_eq(bt_str(rj, "status"), "ok", "%s", rj);
	cr_assert_eq(bt_num(rj, "bytes_verified"), bt_num(rj, "expected_bytes"), "%s", rj);
	cr_assert(strstr(sj, "\"verified\": true"), "%s", sj);
	/* The relay saw the flow and did what it was told. */
	cr_assert_str_eq(bt_str(ij, "tool"), "impair", "relay report missing: %s", ij);
	rx = bt_num(ij, "fwd_rx");
	/* Few ACKs in a short run: any fault on them counts (about 20 expected). */
	if (!strcmp(c->counter, "rev_faults"))
		cnt = bt_num(ij, "rev_lost") + bt_num(ij, "rev_dup") + bt_num(ij, "rev_reordered");
	else
		cnt = bt_num(ij, c->counter);
	cr_assert_gt(rx, 1000, "%s", ij);
	cr_assert_gt(cnt, 0, "%s: %s is 0: %s", c->name, c->counter, ij);
	if (c->frac_hi > 0) {
		cr_assert_geq(cnt / rx, c->frac_lo, "%s: %s/fwd_rx = %g: %s", c->name, c->counter, cnt / rx, ij);
		cr_assert_leq(cnt / rx, c->frac_hi, "%s: %s/fwd_rx = %g: %s", c->name, c->counter, cnt / rx, ij);
	}
	if (strstr(c->counter, "lost"))
		cr_assert_gt(bt_num(sj, "retrans"), 0, "losses but no retransmissions: %s", sj);
	/* A lower bound only: the relay never releases a frame early. */
	if (c->min_rtt_ms > 0)
		cr_assert_geq(bt_num(sj, "ti_min_rtt_us"), c->min_rtt_ms * 1000, "%s", sj);
	cr_assert_eq(bt_num(ij, "fwd_queue_drops"), 0, "%s", ij);
}
