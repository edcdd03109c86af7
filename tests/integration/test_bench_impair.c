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
 * 10.77.0.2; fd77::1 and fd77::2) only through the relay.  The sending
 * veth has TSO/GSO off, so faults apply per segment, except where a case
 * wants GSO units through the relay.  Both beds' watchdogs remove
 * everything.
 *
 * With `--mtu 1280` (veths at 1500) the relay drops what is longer and
 * answers with ICMP "fragmentation needed" / ICMPv6 "packet too big": the
 * transfer completes only if Linux accepts those errors (checksums, the
 * quoted headers and sequence number) and lowers its path MTU.
 */
#include <math.h>

#include "test_bench_util.h"

/* tso: leave TSO/GSO on at the sender, so that GSO units cross the relay. */
static void relay_topology(bool tso)
{
	bt_relay_beds();
	cr_assert_eq(nsbed_sh(&bt_bed[0], 1,
			      "ip addr flush dev %s && "
			      "echo 1 > /proc/sys/net/ipv6/conf/%s/disable_ipv6 && "
			      "echo 1 > /proc/sys/net/ipv6/conf/%s/disable_ipv6 && "
			      "ip link set %s up && ip link set %s up",
			      bt_bed[0].ifname[1], bt_bed[0].ifname[1], bt_bed[1].ifname[0], bt_bed[0].ifname[1],
			      bt_bed[1].ifname[0]), 0);
	cr_assert_eq(nsbed_sh(&bt_bed[0], 0, "ethtool -K %s tso %s gso %s >/dev/null", bt_bed[0].ifname[0],
			      tso ? "on" : "off", tso ? "on" : "off"), 0);
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

/*
 * Kernel TCP from the sender to the receiver through `impair relay` with
 * `args` (up to 12, "" ends), to `dst`: the transfer must complete and
 * verify.  Returns the relay's and the sender's JSON.
 */
static void relay_transfer(const char *name, const char (*args)[12], const char *dst, const char *bytes,
			   const char **ij, const char **sj)
{
	const char *rready = bt_path("rready"), *iready = bt_path("iready");
	const char *iargv[BT_MAX_ARGS] = { NULL };
	struct bt_proc *ip, *rp, *sp;
	const char *rj;
	int n = 0, rs, ss;

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
	for (int i = 0; i < 12 && args[i][0]; i++)
		iargv[n++] = args[i];
	ip = bt_spawn(iargv);
	bt_wait_file(iready, ip, 10);

	const char *rargv[] = { bt_prog("receiver"), "--netns", bt_bed[1].ns[1], "--once", "--json",
				"--port", "7321", "--idle-timeout", "20", "--accept-timeout", "30",
				"--ready-file", rready, NULL };
	rp = bt_spawn(rargv);
	bt_wait_file(rready, rp, 10);
	const char *sargv[] = { bt_prog("kernel_sender"), "--netns", bt_bed[0].ns[0], "--dst", dst,
				"--port", "7321", "--bytes", bytes, "--seed", "3", "--json",
				"--connect-timeout", "10", "--verdict-timeout", "60", NULL };
	sp = bt_spawn(sargv);
	ss = bt_wait(sp, 90);
	rs = bt_wait(rp, 20);
	bt_stop(ip, 10);
	*ij = bt_read(ip->out);
	rj = bt_read(rp->out);
	*sj = bt_read(sp->out);
	cr_log_info("%s: relay: %s", name, *ij);
	if (rs || ss) {
		bt_dump(sp, "kernel_sender");
		bt_dump(rp, "receiver");
		bt_dump(ip, "impair");
	}
	cr_assert_eq(rs, 0, "%s: receiver exit %d: %s", name, rs, rj);
	cr_assert_eq(ss, 0, "%s: sender exit %d: %s", name, ss, *sj);
	cr_assert_str_eq(bt_str(rj, "status"), "ok", "%s", rj);
	cr_assert_eq(bt_num(rj, "bytes_verified"), bt_num(rj, "expected_bytes"), "%s", rj);
	cr_assert(strstr(*sj, "\"verified\": true"), "%s", *sj);
	/* The relay saw the flow. */
	cr_assert_str_eq(bt_str(*ij, "tool"), "impair", "relay report missing: %s", *ij);
}

ParameterizedTest(struct imp_case *c, bench_impair, kernel_tcp_recovers, .fini = bt_relay_fini, .timeout = 120)
{
	const char *ij, *sj;
	double cnt, rx;

	gso_test_require_root();
	relay_topology(false);
	relay_transfer(c->name, c->args, "10.77.0.2", c->bytes, &ij, &sj);
	/* The relay did what it was told. */
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

struct mtu_case {
	char name[16];
	char dst[16];
	bool tso;
	unsigned max_mss; /* the sender's MSS once it took the path MTU of 1280 */
};

static struct mtu_case mtu_cases[] = {
	{ "ipv4", "10.77.0.2", false, 1280 - 40 },
	{ "ipv6", "fd77::2", false, 1280 - 60 },
	{ "ipv4_tso", "10.77.0.2", true, 1280 - 40 },
	{ "ipv6_tso", "fd77::2", true, 1280 - 60 },
};

ParameterizedTestParameters(bench_impair, kernel_tcp_takes_mtu)
{
	return cr_make_param_array(struct mtu_case, mtu_cases, sizeof(mtu_cases) / sizeof(mtu_cases[0]));
}

ParameterizedTest(struct mtu_case *c, bench_impair, kernel_tcp_takes_mtu, .fini = bt_relay_fini, .timeout = 120)
{
	static const char args[12][12] = { "--mtu", "1280" };
	const char *ij, *sj;

	gso_test_require_root();
	relay_topology(c->tso);
	relay_transfer(c->name, args, c->dst, "8M", &ij, &sj);
	cr_assert_gt(bt_num(ij, "mtu_drops"), 0, "%s: nothing was too big: %s", c->name, ij);
	cr_assert_gt(bt_num(ij, "mtu_icmp_sent"), 0, "%s: %s", c->name, ij);
	cr_assert_eq(bt_num(ij, "fwd_mtu_icmp_sent"), bt_num(ij, "mtu_icmp_sent"), "%s: %s", c->name, ij);
	/* Linux TCP sets DF, and nothing it sends is an ICMP error. */
	cr_assert_eq(bt_num(ij, "mtu_drops_no_df"), 0, "%s: %s", c->name, ij);
	cr_assert_eq(bt_num(ij, "mtu_icmp_suppressed"), 0, "%s: %s", c->name, ij);
	cr_assert_leq(bt_num(sj, "ti_snd_mss"), c->max_mss, "%s: %s", c->name, sj);
	/* The sender's first full-sized writes go out as GSO units: one of them was too big. */
	if (c->tso)
		cr_assert_gt(bt_num(ij, "mtu_drops_gso"), 0, "%s: no GSO unit was judged: %s", c->name, ij);
	cr_assert_eq(bt_num(ij, "fwd_queue_drops"), 0, "%s", ij);
}

/*
 * --block-ack 4: the ACKs (b -> a) held and released together every 4 ms,
 * as a Wi-Fi receiver sends them.  Kernel TCP still delivers every byte;
 * every reverse frame went through the hold, none was dropped, and they
 * left in bursts (more than one frame per release on average).
 */
Test(bench_impair, kernel_tcp_through_block_ack, .fini = bt_relay_fini, .timeout = 120)
{
	static const char args[12][12] = { "--block-ack", "4" };
	const char *ij, *sj;
	double frames, releases;

	gso_test_require_root();
	relay_topology(false);
	relay_transfer("block_ack", args, "10.77.0.2", "8M", &ij, &sj);
	frames = bt_num(ij, "rev_block_ack_frames");
	releases = bt_num(ij, "rev_block_ack_releases");
	cr_log_info("block-ack: %g ACK frames in %g releases (max %g at once, %g early)", frames, releases,
		    bt_num(ij, "rev_block_ack_max_burst"), bt_num(ij, "rev_block_ack_early"));
	cr_assert_eq(bt_num(ij, "block_ack_ms"), 4, "%s", ij);
	cr_assert_gt(releases, 0, "%s", ij);
	cr_assert_eq(frames, bt_num(ij, "rev_rx"), "a reverse frame bypassed the hold: %s", ij);
	cr_assert_gt(frames / releases, 1.5, "ACKs were not held in bursts: %s", ij);
	cr_assert_geq(bt_num(ij, "rev_block_ack_max_burst"), 2, "%s", ij);
	cr_assert_eq(bt_num(ij, "fwd_block_ack_frames"), 0, "the data path was held: %s", ij);
	cr_assert_eq(bt_num(ij, "rev_queue_drops") + bt_num(ij, "fwd_queue_drops"), 0, "%s", ij);
	cr_assert_eq(bt_num(ij, "rev_lost") + bt_num(ij, "rev_reordered"), 0, "%s", ij);
}

/* --block-ack nonsense is a usage error (exit 2) with a message; --help documents it. */
Test(bench_impair, block_ack_usage, .fini = bt_fini, .timeout = 30)
{
	static const struct bt_usage bad[] = {
		{ { "--block-ack", "0" }, "bad --block-ack '0'" },
		{ { "--block-ack", "1001" }, "bad --block-ack '1001'" },
		{ { "--block-ack", "4", "--block-ack-max", "0" }, "bad --block-ack-max '0'" },
		{ { "--block-ack-max", "8" }, "--block-ack-max needs --block-ack" },
	};
	const char *pre[] = { bt_prog("impair"), "relay", "--a", "lo", "--b", "lo", NULL };
	const char *help[] = { bt_prog("impair"), "relay", "--help", NULL };
	struct bt_proc *p;

	bt_expect_usages(pre, bad, sizeof(bad) / sizeof(bad[0]));
	p = bt_spawn(help);
	cr_assert_eq(bt_wait(p, 10), 0);
	cr_assert(strstr(bt_read(p->out), "--block-ack MS"), "%s", bt_read(p->out));
}
