/*
 * bench/sender (TCP over libgso) through the impair relay: loss, delay with
 * jitter, reordering and duplication between the sender and the stock
 * Linux receiver.  Every byte must be verified by the receiver, the
 * sender's UMEM accounting balanced at the end, all within a bounded time,
 * and the relay's counters must show the fault happened (so the test fails
 * when the relay silently forwards everything).  The BBR case (1 % loss,
 * 20 ms) also checks that the sender ran BBR and reports a model that saw
 * the path: a valid mode, a bandwidth estimate, a min RTT no shorter than
 * the relay's delay.  The pmtu_* cases (issue 26) put a lower path MTU
 * behind the relay, in every sender mode, IPv4 and IPv6 (expect_pmtu).  No
 * speed is asserted.
 *
 * Topology as in test_bench_impair.c (bed 1's side-a veth moved into b0,
 * the relay namespace), except that the sender's link is a veth pair with
 * 2 queues on each side, as in test_sender.c: the relay transmits the ACKs
 * on whichever of its 2 queues the flow hashes to, and the sender listens
 * on both.  The sender (a0, 10.77.0.1 on sq0) addresses the receiver's MAC
 * directly (b1, 10.77.0.2): the relay is a transparent L2 hop.
 */
#include <math.h>

#include "test_bench_util.h"

#define IF_S BT_IF_S
#define IF_R BT_IF_R

static void relay_topology(void)
{
	bt_relay_sender_beds();
}

struct simp_case {
	char name[32];        /* (no pointers: Criterion copies params to another process) */
	char args[6][12];     /* relay fault options, "" ends */
	char mode[16];
	char port[8];
	char counter[24];     /* relay JSON counter that must be > 0 */
	double frac_lo, frac_hi; /* counter / fwd_rx bounds (0,0: only > 0) */
	double min_rtt_ms;    /* sender's min RTT at least this (delay cases) */
	char cc[8];           /* sender --cc ("": its default) */
	unsigned mb;          /* stream MiB (0: 3) */
	char dst[16];         /* the receiver's address ("": 10.77.0.2) */
	bool queues;          /* a multi-queue port: --queues 2 --streams 1 */
};

static struct simp_case simp_cases[] = {
	{ "loss_1pct", { "--loss", "1" }, "software", "7501", "fwd_lost", 0.002, 0.04, 0, "", 0, "", false },
	{ "loss_5pct", { "--loss", "5" }, "software", "7502", "fwd_lost", 0.02, 0.12, 0, "", 0, "", false },
	{ "delay_20ms_jitter_5ms", { "--delay", "20", "--jitter", "5" }, "software", "7503", "fwd_tx", 0, 0, 14, "", 0, "", false },
	{ "reorder_1pct", { "--reorder", "1" }, "software", "7504", "fwd_reordered", 0.002, 0.04, 0, "", 0, "", false },
	{ "dup_1pct", { "--dup", "1" }, "software", "7505", "fwd_dup", 0.002, 0.04, 0, "", 0, "", false },
	{ "csum_loss_1pct", { "--loss", "1" }, "csum", "7506", "fwd_lost", 0.002, 0.04, 0, "", 0, "", false },
	{ "bbr_loss_1pct_delay_20ms", { "--loss", "1", "--delay", "20" }, "software", "7507", "fwd_lost", 0.002, 0.04,
	  0, "bbr", 24, "", false },
	/*
	 * ACKs that come back in bursts every 4 ms, as a Wi-Fi block-ACK
	 * receiver sends them (issue 28): ACK aggregation, which BBR's
	 * extra_acked answers; CUBIC, and BBR behind 20 ms.
	 */
	{ "block_ack_4ms", { "--block-ack", "4" }, "software", "7508", "rev_block_ack_frames", 0, 0, 0, "", 0, "", false },
	{ "block_ack_4ms_vnet", { "--block-ack", "4" }, "offload-vnet", "7509", "rev_block_ack_frames", 0, 0, 0, "", 0, "",
	  false },
	{ "bbr_block_ack_4ms_delay_20ms", { "--block-ack", "4", "--delay", "20" }, "software", "7510",
	  "rev_block_ack_frames", 0, 0, 0, "bbr", 8, "", false },
	/* A path MTU of 1280 behind the relay, every sender mode (expect_pmtu). */
#define PMTU(name, mode, port, dst) { name, { "--mtu", "1280" }, mode, port, "mtu_icmp_sent", 0, 0, 0, "", 8, dst, false }
	PMTU("pmtu_software_v4", "software", "7521", ""),
	PMTU("pmtu_csum_v4", "csum", "7522", ""),
	PMTU("pmtu_multibuf_v4", "multibuf", "7523", ""),
	PMTU("pmtu_vnet_v4", "offload-vnet", "7524", ""),
	PMTU("pmtu_e1000_v4", "offload-e1000", "7525", ""),
	PMTU("pmtu_auto_v4", "auto", "7526", ""),
	PMTU("pmtu_software_v6", "software", "7531", "fd77::2"),
	PMTU("pmtu_csum_v6", "csum", "7532", "fd77::2"),
	PMTU("pmtu_multibuf_v6", "multibuf", "7533", "fd77::2"),
	PMTU("pmtu_vnet_v6", "offload-vnet", "7534", "fd77::2"),
	PMTU("pmtu_e1000_v6", "offload-e1000", "7535", "fd77::2"),
	PMTU("pmtu_auto_v6", "auto", "7536", "fd77::2"),
#undef PMTU
	/* A port: the error may come in on the other queue than the stream's, which hands it over. */
	{ "pmtu_port_v4", { "--mtu", "1280" }, "software", "7527", "mtu_icmp_sent", 0, 0, 0, "", 8, "", true },
	{ "pmtu_port_v6", { "--mtu", "1280" }, "software", "7537", "mtu_icmp_sent", 0, 0, 0, "", 8, "fd77::2", true },
};

/* The sender's "bbr": {...} object, alone (its keys repeat top-level names), or "". */
static const char *bbr_obj(const char *json)
{
	static __thread char out[1024];
	const char *p = strstr(json, "\"bbr\": {"), *q = p ? strchr(p, '}') : NULL;

	out[0] = 0;
	if (q && (size_t)(q - p) < sizeof(out)) {
		memcpy(out, p, (size_t)(q + 1 - p));
		out[q + 1 - p] = 0;
	}
	return out;
}

/* The sender's line without its "bbr" object: top-level keys only, as bt_num takes the first. */
static const char *top_level(const char *json)
{
	static __thread char out[16384];
	const char *p = strstr(json, ", \"bbr\": {"), *q = p ? strchr(p, '}') : NULL;

	snprintf(out, sizeof(out), "%s", json);
	if (q)
		snprintf(out + (p - json), sizeof(out) - (size_t)(p - json), "%s", q + 1);
	return out;
}

/* BBR ran, and its model at the end is one of the path it measured. */
static void expect_bbr_model(const struct simp_case *c, const char *raw)
{
	static const char *const modes[] = { "startup", "drain", "probe_bw", "probe_rtt" };
	const char *b = bbr_obj(raw), *sj = top_level(raw), *mode;
	bool known = false;

	cr_assert_str_eq(bt_str(sj, "cc"), "bbr", "%s", sj);
	cr_assert(b[0], "%s: no bbr object: %s", c->name, sj);
	mode = bt_str(b, "mode");
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		known |= !strcmp(mode, modes[i]);
	cr_assert(known, "%s: bbr mode '%s': %s", c->name, mode, b);
	cr_assert_gt(bt_num(b, "bw_gbps"), 0, "%s: no bandwidth estimate: %s", c->name, b);
	cr_assert_gt(bt_num(b, "pacing_gain"), 0, "%s", b);
	cr_assert_gt(bt_num(b, "cwnd_gain"), 0, "%s", b);
	cr_assert_gt(bt_num(b, "rounds"), 0, "%s: no round trip counted: %s", c->name, b);
	/*
	 * The relay never lets a frame leave before its 20 ms, so a shorter
	 * min RTT is a mis-stamped ACK (the engine stamped every ACK of a long
	 * receive pass with the pass's start time: 11-19 ms were seen here
	 * with --check, before each frame got its own clock reading).
	 */
	cr_assert_geq(bt_num(b, "min_rtt_us"), 20000, "%s: BBR's min RTT under the path's 20 ms: %s", c->name, b);
	cr_assert_geq(bt_num(sj, "min_rtt_us"), 20000, "%s: min RTT under the path's 20 ms: %s", c->name, sj);
	cr_assert_gt(bt_num(sj, "delivery_rate_gbps_end"), 0, "%s", sj);
}

/*
 * The relay was a router with a next-hop MTU of 1280 (`--mtu 1280`, the
 * veths at 1500): it dropped what was longer and answered with ICMP
 * "fragmentation needed" / ICMPv6 "packet too big".  The engine believed
 * it (the steering program handed it over, or, when it came in on a queue
 * without an AF_XDP socket of the engine, such as the e1000 model's wire
 * queue, the kernel did and the engine read its raw sockets' copy) and the
 * stream took it: segments at the new size, the rest resent.
 */
static void expect_pmtu(const struct simp_case *c, const char *ij, const char *sj)
{
	bool v6 = strchr(c->dst, ':') != NULL;

	cr_assert_gt(bt_num(ij, "mtu_drops"), 0, "%s: nothing was too big: %s", c->name, ij);
	cr_assert_eq(bt_num(ij, "mtu_drops_no_df"), 0, "%s: %s", c->name, ij);
	cr_assert_geq(bt_num(sj, "icmp_pmtu"), 1, "%s: %s", c->name, sj);
	cr_assert_eq(bt_num(sj, "icmp_bad"), 0, "%s: %s", c->name, sj);
	cr_assert_eq(bt_num(sj, "path_mtu"), 1280, "%s: %s", c->name, sj);
	if (!c->queues)
		cr_assert_eq(bt_num(sj, "link_mtu"), 1500, "%s: %s", c->name, sj);
	cr_assert_leq(bt_num(sj, "mss"), 1280 - (v6 ? 40 : 20) - 20 - 12, "%s: %s", c->name, sj);
	cr_log_info("%s: relay dropped %g, sent %g errors; sender took %g, %g stale, %g forged (%g through the kernel), "
		    "%g segments resent", c->name, bt_num(ij, "mtu_drops"), bt_num(ij, "mtu_icmp_sent"),
		    bt_num(sj, "icmp_pmtu"), bt_num(sj, "icmp_stale"), bt_num(sj, "icmp_forged"),
		    bt_num(sj, "icmp_kernel"), bt_num(sj, "pmtu_lost_segs"));
}

ParameterizedTestParameters(sender_impair, verified_through_relay)
{
	return cr_make_param_array(struct simp_case, simp_cases, sizeof(simp_cases) / sizeof(simp_cases[0]));
}

ParameterizedTest(struct simp_case *c, sender_impair, verified_through_relay, .fini = bt_relay_fini, .timeout = 60)
{
	const char *rready = bt_path("rready"), *iready = bt_path("iready");
	const char *iargv[BT_MAX_ARGS] = { NULL };
	struct bt_proc *ip, *rp, *sp;
	const char *ij, *rj, *sj;
	char mac[32], bytes[16];
	int n = 0, rs, ss;
	unsigned mb = c->mb ? c->mb : 3;
	double t0, secs, cnt, rx;
	const uint8_t *m;

	gso_test_require_root();
	relay_topology();
	m = bt_bed[1].mac[1];
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	iargv[n++] = bt_prog("impair");
	iargv[n++] = "relay";
	iargv[n++] = "--netns";
	iargv[n++] = bt_bed[0].ns[1];
	iargv[n++] = "--a";
	iargv[n++] = IF_R;
	iargv[n++] = "--b";
	iargv[n++] = bt_bed[1].ifname[0];
	iargv[n++] = "--seed";
	iargv[n++] = "11";
	iargv[n++] = "--json";
	iargv[n++] = "--ready-file";
	iargv[n++] = iready;
	for (int i = 0; i < 6 && c->args[i][0]; i++)
		iargv[n++] = c->args[i];
	ip = bt_spawn(iargv);
	bt_wait_file(iready, ip, 10);

	const char *rargv[] = { bt_prog("receiver"), "--netns", bt_bed[1].ns[1], "--once", "--json",
				"--port", c->port, "--idle-timeout", "10", "--accept-timeout", "15",
				"--ready-file", rready, NULL };
	rp = bt_spawn(rargv);
	bt_wait_file(rready, rp, 10);
	snprintf(bytes, sizeof(bytes), "%uM", mb);
	const char *sargv[BT_MAX_ARGS] = { bt_prog("sender"), "--netns", bt_bed[0].ns[0], "--dev", IF_S,
					   "--dst", c->dst[0] ? c->dst : "10.77.0.2",
					   "--dst-mac", mac, "--port", c->port, "--mode", c->mode, "--bytes", bytes,
					   "--seed", "5", "--json", "--check", "--idle-timeout", "5" };
	for (n = 0; sargv[n]; n++)
		;
	if (c->cc[0]) {
		sargv[n++] = "--cc";
		sargv[n++] = c->cc;
	}
	if (c->queues) {
		sargv[n++] = "--queues";
		sargv[n++] = "2";
		sargv[n++] = "--streams";
		sargv[n++] = "1";
	}
	t0 = bt_now();
	sp = bt_spawn(sargv);
	ss = bt_wait(sp, 25);
	secs = bt_now() - t0;
	if (ss)
		bt_stop(rp, 5); /* a sender that failed may never have connected */
	rs = bt_wait(rp, 10);
	bt_stop(ip, 10);
	ij = bt_read(ip->out);
	rj = bt_read(rp->out);
	sj = top_level(bt_read(sp->out));
	cr_log_info("%s: %.2f s; relay: %s", c->name, secs, ij);
	if (c->cc[0])
		cr_log_info("%s: sender: %s", c->name, bt_read(sp->out));
	if (rs || ss) {
		bt_dump(sp, "sender");
		bt_dump(rp, "receiver");
		bt_dump(ip, "impair");
	}
	cr_assert_eq(ss, 0, "%s: sender exit %d: %s", c->name, ss, sj);
	cr_assert_eq(rs, 0, "%s: receiver exit %d: %s", c->name, rs, rj);
	cr_assert_lt(secs, 20, "%s: transfer took %.1f s", c->name, secs);
	/* Every byte verified by the receiver, and all of them were the whole stream. */
	cr_assert_str_eq(bt_str(rj, "status"), "ok", "%s", rj);
	cr_assert_eq(bt_num(rj, "bytes"), (double)mb * (1u << 20), "%s", rj);
	cr_assert_eq(bt_num(rj, "bytes_verified"), bt_num(rj, "bytes"), "%s", rj);
	cr_assert_eq(bt_num(rj, "expected_bytes"), bt_num(rj, "bytes"), "%s", rj);
	cr_assert_str_eq(bt_str(sj, "status"), "ok", "%s", sj);
	cr_assert_eq(bt_num(sj, "bytes"), bt_num(rj, "bytes"), "%s", sj);
	cr_assert(strstr(sj, "\"umem_balanced\": true"), "%s: UMEM not balanced: %s", c->name, sj);
	cr_assert_eq(bt_num(sj, "umem_free_at_end"), bt_num(sj, "umem_chunks"), "%s", sj);
	cr_assert_eq(bt_num(sj, "wnd_violations"), 0, "%s", sj);
	/* The relay saw the flow and did what it was told. */
	cr_assert_str_eq(bt_str(ij, "tool"), "impair", "relay report missing: %s", ij);
	rx = bt_num(ij, "fwd_rx");
	cnt = bt_num(ij, c->counter);
	/*
	 * Frames, or GSO units: offload-vnet and auto hand the veth
	 * super-packets (about 50 for 3 MiB at full size), and after a lower
	 * path MTU a few hundred.
	 */
	cr_assert_gt(rx, !strcmp(c->mode, "offload-vnet") || !strcmp(c->mode, "auto") ? 20
			 : strcmp(c->counter, "mtu_icmp_sent") ? 1000 : 100, "%s", ij);
	cr_assert_gt(cnt, 0, "%s: %s is 0: %s", c->name, c->counter, ij);
	if (c->frac_hi > 0) {
		cr_assert_geq(cnt / rx, c->frac_lo, "%s: %s/fwd_rx = %g: %s", c->name, c->counter, cnt / rx, ij);
		cr_assert_leq(cnt / rx, c->frac_hi, "%s: %s/fwd_rx = %g: %s", c->name, c->counter, cnt / rx, ij);
	}
	if (strstr(c->counter, "lost"))
		cr_assert_gt(bt_num(sj, "retrans"), 0, "losses but no retransmissions: %s", sj);
	/* A lower bound only: the relay never releases a frame early. */
	if (c->min_rtt_ms > 0)
		cr_assert_geq(bt_num(sj, "min_rtt_us"), c->min_rtt_ms * 1000, "%s", sj);
	if (!strcmp(c->mode, "csum"))
		cr_assert_gt(bt_num(sj, "tx_csum_offload"), 0, "%s", sj);
	cr_assert_eq(bt_num(ij, "fwd_queue_drops"), 0, "%s", ij);
	if (!strcmp(c->cc, "bbr"))
		expect_bbr_model(c, bt_read(sp->out));
	else if (!c->queues) /* (a port's report has no "cc") */
		cr_assert_str_eq(bt_str(sj, "cc"), c->cc[0] ? c->cc : "cubic", "%s", sj);
	if (!strcmp(c->args[0], "--mtu"))
		expect_pmtu(c, ij, sj);
}
