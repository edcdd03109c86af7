/*
 * bench/sender (TCP over libgso) -> bench/receiver (the stock Linux stack)
 * across a veth test-bed: every byte verified by the receiver, in every
 * mode the sender has; its UMEM accounting balanced at the end; the 2004
 * case of a receiver with a tiny buffer, where the sender must never have
 * more outstanding than the peer's window (asserted on the sender's own
 * accounting and on a capture at the peer); loss recovery with SACK and
 * NewReno through an XDP loss program at the receiver.
 *
 * The test-bed's own veth has one queue; the e1000 model needs a second
 * (its wire socket and an ACK socket cannot share one), so the tests add
 * a 2-queue veth pair inside the test's namespaces and use it throughout.
 * The peer has two transmit queues as well: which one carries a
 * connection's ACKs depends on its 4-tuple's hash, so the sender must
 * listen on both (different ports land on different queues).
 */
#include "test_sender_util.h"

/* ---- every mode --------------------------------------------------------- */

Test(sender, every_mode, .fini = fini, .timeout = 240)
{
	static const char *const modes[] = { "software", "csum", "multibuf", "offload-vnet",
					     "offload-e1000", "auto" };
	int skipped = 0, on_queue[2] = { 0, 0 };

	bed();
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct run r = { .mode = modes[m], .bytes = "16M", .port = 7400 + (int)m };

		/* No --dst-mac: the sender asks the kernel for the next hop. */
		transfer(&r, NULL);
		cr_assert(r.sender_exit == 77 || strstr(r.sj, "\"nexthop_resolved\": true"), "%s", r.sj);
		if (r.sender_exit == 77) {
			/* Said out loud, never silently: this machine lacks what the mode needs. */
			cr_log_warn("sender mode %s not available here: %s", r.mode, r.sj);
			cr_assert_neq(m, 0, "software mode must always be available");
			skipped++;
			bt_fini();
			continue;
		}
		expect_verified(&r, 16u << 20);
		double q = bt_num(r.sj, "ack_queue");
		cr_assert(q == 0 || q == 1, "%s: ACKs on queue %g: %s", r.mode, q, r.sj);
		on_queue[(int)q]++;
		if (!strcmp(r.mode, "offload-e1000"))
			cr_assert_eq(bt_num(r.sj, "wire_queue"), 1 - q, "%s: wire shares the ACKs' queue: %s",
				     r.mode, r.sj);
		/* Super-segments, not packets: the burst sizing let them grow. */
		cr_assert_gt(bt_num(r.sj, "burst_max_segs"), 8, "%s: %s", r.mode, r.sj);
		if (!strcmp(r.mode, "offload-vnet") || !strcmp(r.mode, "offload-e1000"))
			cr_assert_gt(bt_num(r.sj, "offloaded"), 0, "%s: nothing offloaded: %s", r.mode, r.sj);
		if (!strcmp(r.mode, "multibuf"))
			cr_assert_gt(bt_num(r.sj, "tx_sg_frames"), 0, "%s", r.sj);
		if (!strcmp(r.mode, "csum"))
			cr_assert_gt(bt_num(r.sj, "tx_csum_offload"), 0, "%s", r.sj);
		if (!strcmp(r.mode, "software"))
			cr_assert_eq(bt_num(r.sj, "tx_csum_offload"), 0, "%s", r.sj);
		bt_fini();
	}
	cr_log_info("sender: %zu modes, %d not available here; ACKs arrived on queue 0 in %d runs, queue 1 in %d",
		    sizeof(modes) / sizeof(modes[0]), skipped, on_queue[0], on_queue[1]);
}

/* A mode that cannot run here says so with exit 77 and never connects. */
Test(sender, unavailable_mode_exit_77, .fini = fini, .timeout = 60)
{
	char cmd[256];

	bed();
	/* The test-bed's own veth has a single queue: no room for the model's wire socket. */
	const char *sargv[BT_MAX_ARGS] = { bt_prog("sender"), "--netns", tb.ns[0], "--dev", tb.ifname[0],
					   "--dst", "10.77.0.2", "--dst-mac", "02:00:00:00:00:01", "--port",
					   "7410", "--mode", "offload-e1000", "--json" };
	struct bt_proc *sp = bt_spawn(sargv);

	cr_assert_eq(bt_wait(sp, 20), 77, "exit %d: %s", sp->status, bt_read(sp->err));
	cr_assert(strstr(bt_read(sp->err), "not available"), "%s", bt_read(sp->err));
	snprintf(cmd, sizeof(cmd), "ip link show %s | grep -q xdp", tb.ifname[0]);
	cr_assert_neq(nsbed_sh(&tb, 0, "%s", cmd), 0, "an XDP program was left attached");
}

/* Nobody listening: the peer's RST ends it at once, with everything given back. */
Test(sender, refused_connection, .fini = fini, .timeout = 60)
{
	const char *mac;

	bed();
	mac = peer_mac();
	const char *sargv[BT_MAX_ARGS] = { bt_prog("sender"), "--netns", tb.ns[0], "--dev", IF_A,
					   "--dst", ADDR_B, "--dst-mac", mac, "--port", "7411", "--json",
					   "--idle-timeout", "5" };
	struct bt_proc *sp = bt_spawn(sargv);
	const char *sj;

	cr_assert_eq(bt_wait(sp, 30), 1, "exit %d: %s", sp->status, bt_read(sp->err));
	sj = bt_read(sp->out);
	cr_assert_str_eq(bt_str(sj, "status"), "connection refused", "%s", sj);
	cr_assert_str_eq(bt_str(sj, "error"), strerror(ECONNREFUSED), "%s", sj);
	cr_assert(strstr(sj, "\"umem_balanced\": true"), "%s", sj);
	cr_assert_eq(bt_num(sj, "bytes"), 0, "%s", sj);
}

/*
 * --cc: an unknown name is a usage error (exit 2) before anything is opened,
 * and --help offers bbr.  kernel_sender (the demo's baseline beside every
 * libgso row) refuses a name its kernel lacks the same way, so a baseline
 * never runs another congestion control than the row it sits beside.
 */
Test(sender, cc_option, .fini = bt_fini, .timeout = 30)
{
	const char *bad[] = { bt_prog("sender"), "--dev", "lo", "--dst", "127.0.0.1", "--cc", "vegas-nope", NULL };
	const char *help[] = { bt_prog("sender"), "--help", NULL };
	const char *kbad[] = { bt_prog("kernel_sender"), "--dst", "127.0.0.1", "--port", "1", "--cc", "vegas-nope", NULL };
	struct bt_proc *p;

	p = bt_spawn(bad);
	cr_assert_eq(bt_wait(p, 10), 2, "exit %d: %s", p->status, bt_read(p->err));
	cr_assert(strstr(bt_read(p->err), "bad --cc 'vegas-nope'"), "%s", bt_read(p->err));
	cr_assert_eq(bt_read(p->out)[0], 0, "a usage error printed a result: %s", bt_read(p->out));
	p = bt_spawn(help);
	cr_assert_eq(bt_wait(p, 10), 0, "exit %d: %s", p->status, bt_read(p->err));
	cr_assert(strstr(bt_read(p->out), "--cc reno|cubic|bbr"), "%s", bt_read(p->out));
	p = bt_spawn(kbad);
	cr_assert_eq(bt_wait(p, 10), 2, "exit %d: %s", p->status, bt_read(p->err));
	cr_assert(strstr(bt_read(p->err), "TCP_CONGESTION vegas-nope"), "%s", bt_read(p->err));
}

/* ---- the tiny receive buffer (2004) --------------------------------------- */

/*
 * Capture at the peer: every data segment's end must lie within the
 * right edge the peer advertised before it (ack + window << scale).
 */
struct wcap {
	int fd;
	uint16_t port;
	volatile int stop;
	int wscale;
	uint32_t right;        /* largest right edge advertised so far */
	bool have_right;
	uint64_t data_segs, acks, violations;
	int64_t worst;         /* largest (segment end - right edge) seen */
};

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void wcap_pkt(struct wcap *w, const uint8_t *f, size_t len, bool outgoing)
{
	const uint8_t *ip = f + 14, *th;
	unsigned ihl, doff, tot;
	uint16_t sport, dport;

	if (len < 54 || f[12] != 0x08 || f[13] != 0x00 || (ip[0] >> 4) != 4 || ip[9] != 6)
		return;
	ihl = (ip[0] & 15) * 4u;
	tot = (unsigned)ip[2] << 8 | ip[3];
	th = ip + ihl;
	if (14 + ihl + 20 > len)
		return;
	sport = (uint16_t)(th[0] << 8 | th[1]);
	dport = (uint16_t)(th[2] << 8 | th[3]);
	doff = (th[12] >> 4) * 4u;
	if (outgoing && sport == w->port && (th[13] & 0x10)) {
		uint32_t win = (uint32_t)th[14] << 8 | th[15];

		if (th[13] & 0x02) {
			/* SYN-ACK: its own window is never scaled; its option gives the scale. */
			for (unsigned i = 20; i < doff && 14 + ihl + i + 2 < len;) {
				uint8_t k = th[i];

				if (k == 0)
					break;
				if (k == 1) {
					i++;
					continue;
				}
				if (k == 3 && th[i + 1] == 3)
					w->wscale = th[i + 2];
				i += th[i + 1] ? th[i + 1] : 1;
			}
		} else {
			win <<= w->wscale;
		}
		uint32_t edge = rd32(th + 8) + win;

		if (!w->have_right || (int32_t)(edge - w->right) > 0)
			w->right = edge;
		w->have_right = true;
		w->acks++;
	} else if (!outgoing && dport == w->port && w->have_right) {
		uint32_t payload = tot - ihl - doff, end = rd32(th + 4) + payload;

		if (!payload)
			return;
		w->data_segs++;
		int64_t over = (int32_t)(end - w->right);
		if (over > 0)
			w->violations++;
		if (w->data_segs == 1 || over > w->worst)
			w->worst = over;
	}
}

static void *wcap_thread(void *arg)
{
	struct wcap *w = arg;
	static uint8_t buf[70000];

	while (!w->stop) {
		struct pollfd p = { .fd = w->fd, .events = POLLIN };
		struct sockaddr_ll ll;
		socklen_t sl = sizeof(ll);

		if (poll(&p, 1, 50) <= 0)
			continue;
		for (;;) {
			ssize_t n = recvfrom(w->fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&ll, &sl);

			if (n <= 0)
				break;
			wcap_pkt(w, buf, (size_t)n, ll.sll_pkttype == PACKET_OUTGOING);
		}
	}
	return NULL;
}

Test(sender, tiny_rcvbuf_respects_window, .fini = fini, .timeout = 120)
{
	struct run r = { .mode = "software", .bytes = "8M", .rcvbuf = "4K", .port = 7420 };
	struct wcap w = { .port = 7420 };
	struct tpacket_stats ts;
	socklen_t tl = sizeof(ts);
	int big = 64 << 20;
	pthread_t th;
	const char *mac;

	bed();
	mac = peer_mac();
	cr_assert_eq(nsbed_enter(&tb, 1), 0);
	w.fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	cr_assert_geq(w.fd, 0);
	setsockopt(w.fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				  .sll_ifindex = (int)if_nametoindex(IF_B) };
	cr_assert_eq(bind(w.fd, (struct sockaddr *)&ll, sizeof(ll)), 0);
	cr_assert_eq(pthread_create(&th, NULL, wcap_thread, &w), 0);

	transfer(&r, mac);
	usleep(100000);
	w.stop = 1;
	pthread_join(th, NULL);
	getsockopt(w.fd, SOL_PACKET, PACKET_STATISTICS, &ts, &tl);
	close(w.fd);

	expect_verified(&r, 8u << 20);
	/* The receive buffer stayed tiny, so the window was small... */
	cr_assert_leq(bt_num(r.rj, "rcvbuf"), 16384, "%s", r.rj);
	cr_assert_leq(bt_num(r.sj, "wnd_max"), 16384, "%s", r.sj);
	/* ...and the sender never had more outstanding than it (its own accounting). */
	cr_assert_gt(bt_num(r.sj, "wnd_checks"), 100, "%s", r.sj);
	cr_assert_eq(bt_num(r.sj, "wnd_violations"), 0, "%s", r.sj);
	cr_assert_leq(bt_num(r.sj, "max_over_wnd"), 0, "%s", r.sj);
	cr_assert_leq(bt_num(r.sj, "max_outstanding"), bt_num(r.sj, "wnd_max"), "%s", r.sj);
	/* The peer's view: no data segment beyond the right edge it had advertised. */
	cr_assert_gt(w.data_segs, 1000, "capture saw %lu data segments", (unsigned long)w.data_segs);
	cr_assert_gt(w.acks, 100);
	if (ts.tp_drops) {
		cr_log_warn("capture dropped %u of %u packets: peer-side window check skipped", ts.tp_drops,
			    ts.tp_packets);
	} else {
		cr_assert_eq(w.violations, 0, "%lu segments beyond the advertised window (worst by %ld bytes)",
			     (unsigned long)w.violations, (long)w.worst);
		cr_log_info("peer capture: %lu data segments, %lu ACKs, closest to the edge: %ld bytes",
			    (unsigned long)w.data_segs, (unsigned long)w.acks, (long)w.worst);
	}
}

/* A receiver that stops reading: zero window, probes, and the transfer resumes intact. */
Test(sender, zero_window_probes, .fini = fini, .timeout = 120)
{
	const char *ready, *mac;
	struct bt_proc *rp, *sp;
	int ss, rs;

	bed();
	mac = peer_mac();
	ready = bt_path("ready");
	const char *rargv[BT_MAX_ARGS] = { bt_prog("receiver"), "--netns", tb.ns[1], "--once", "--json",
					   "--port", "7450", "--rcvbuf", "4K", "--idle-timeout", "30",
					   "--accept-timeout", "30", "--ready-file", ready };
	const char *sargv[BT_MAX_ARGS] = { bt_prog("sender"), "--netns", tb.ns[0], "--dev", IF_A,
					   "--dst", ADDR_B, "--dst-mac", mac, "--port", "7450", "--json",
					   "--check", "--bytes", "8M", "--rate", "50M" };
	rp = bt_spawn(rargv);
	bt_wait_file(ready, rp, 10);
	sp = bt_spawn(sargv);
	/* 8 MB at 50 Mbit/s take over a second: stop the reader well inside that. */
	usleep(300000);
	cr_assert_eq(kill(rp->pid, SIGSTOP), 0);
	usleep(1500000);
	cr_assert_eq(waitpid(sp->pid, NULL, WNOHANG), 0, "the sender finished while the reader was stopped");
	cr_assert_eq(kill(rp->pid, SIGCONT), 0);
	ss = bt_wait(sp, 60);
	rs = bt_wait(rp, 30);
	struct run r = { .mode = "software", .sender_exit = ss, .receiver_exit = rs,
			 .sj = bt_read(sp->out), .rj = bt_read(rp->out) };
	if (ss || rs) {
		bt_dump(sp, "sender");
		bt_dump(rp, "receiver");
	}
	expect_verified(&r, 8u << 20);
	cr_assert_gt(bt_num(r.sj, "zero_window_acks"), 0, "%s", r.sj);
	cr_assert_eq(bt_num(r.sj, "wnd_min"), 0, "%s", r.sj);
	cr_assert_geq(bt_num(r.sj, "zero_window_probes"), 1, "no probe in 1.5 s of zero window: %s", r.sj);
	cr_assert_leq(bt_num(r.sj, "max_over_wnd"), 0, "%s", r.sj);
}

/* ---- loss recovery ----------------------------------------------------------- */

/* Returns the sender's JSON (a copy the caller frees). */
static char *lossy(const char *name, const char *bytes, const char *const extra[], int port)
{
	struct run r = { .mode = "software", .bytes = bytes, .port = port };
	char ports[16], loss_ready[64];
	const char *mac;

	bed();
	mac = peer_mac();
	snprintf(ports, sizeof(ports), "%d", port);
	snprintf(loss_ready, sizeof(loss_ready), "%s", bt_path("loss-ready"));
	/* 1 % of the data segments dropped at the receiver's veth (generic XDP: a 2-queue peer). */
	const char *largv[BT_MAX_ARGS] = { bt_prog("impair"), "xdp", "--netns", tb.ns[1], "--dev", IF_B,
					   "--skb-mode", "--loss", "1", "--proto", "tcp", "--port", ports,
					   "--seed", "11", "--json", "--ready-file", loss_ready };
	struct bt_proc *lp = bt_spawn(largv);

	bt_wait_file(loss_ready, lp, 10);
	for (int i = 0; i < 6 && extra[i]; i++)
		r.extra[i] = extra[i];
	transfer(&r, mac);
	cr_assert_eq(bt_stop(lp, 10), 0, "impair: %s", bt_read(lp->err));
	expect_verified(&r, 0);
	cr_assert_eq(bt_num(r.rj, "bytes"), bt_num(r.rj, "expected_bytes"), "%s: %s", name, r.rj);
	cr_assert_gt(bt_num(bt_read(lp->out), "dropped"), 0, "%s: nothing dropped: %s", name, bt_read(lp->out));
	cr_assert_gt(bt_num(r.sj, "retrans"), 0, "%s: %s", name, r.sj);
	cr_assert_gt(bt_num(r.sj, "lost_segs") + bt_num(r.sj, "rto"), 0, "%s: %s", name, r.sj);
	cr_log_info("%s: %s", name, r.sj);
	return strdup(r.sj);
}

Test(sender, loss_sack, .fini = fini, .timeout = 120)
{
	const char *const extra[6] = { "--cc", "cubic" };

	char *sj = lossy("sack", "16M", extra, 7430);

	cr_assert(strstr(sj, "\"sack\": true"), "%s", sj);
	cr_assert_gt(bt_num(sj, "sacked_segs"), 0, "%s", sj);
	free(sj);
}

Test(sender, loss_newreno, .fini = fini, .timeout = 120)
{
	const char *const extra[6] = { "--no-sack", "--cc", "reno" };

	char *sj = lossy("newreno", "2M", extra, 7431);

	cr_assert(strstr(sj, "\"sack\": false"), "%s", sj);
	cr_assert_eq(bt_num(sj, "sacked_segs"), 0, "%s", sj);
	free(sj);
}

/* ---- time-limited: the header says "until FIN" ------------------------------- */

Test(sender, time_limited, .fini = fini, .timeout = 60)
{
	/* --bytes too large for the time: whichever comes first, the header says "until FIN". */
	struct run r = { .mode = "software", .time = "0.3", .bytes = "64G", .port = 7440 };
	const char *mac;

	bed();
	mac = peer_mac();
	transfer(&r, mac);
	expect_verified(&r, 0);
	cr_assert_eq(bt_num(r.rj, "expected_bytes"), 0, "%s", r.rj);
}
