/*
 * bench/sender through device faults, on the transmit engine: a 2-second
 * link down/up in the middle of a transfer in every mode (the sender's own
 * interface: admin down, -ENETDOWN from the device), a carrier loss (the
 * peer's side down), the interface deleted mid-transfer (a clear status
 * and exit 1 well within the idle timeout, UMEM balanced), the next hop
 * resolved by the kernel for IPv4 and IPv6, and one that never answers.
 * Every byte of every completed transfer is verified by the receiver.
 */
#include "test_sender_util.h"

static double t_fault;

static void flap_sender_link(struct bt_proc *sp)
{
	(void)sp;
	/* Data flows by now (a handshake takes a millisecond), and there is more to send. */
	usleep(600000);
	cr_assert_eq(nsbed_sh(&tb, 0, "ip link set " IF_A " down && sleep 2 && ip link set " IF_A " up"), 0);
}

Test(sender_faults, link_flap_every_mode, .fini = fini, .timeout = 240)
{
	static const char *const modes[] = { "software", "csum", "multibuf", "offload-vnet",
					     "offload-e1000", "auto" };

	bed();
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		/* 40 MB at 200 Mbit/s: 1.6 s of data, the link down from 0.6 s to 2.6 s. */
		struct run r = { .mode = modes[m], .bytes = "40M", .port = 7460 + (int)m, .during = flap_sender_link,
				 .extra = { "--rate", "200M", "--idle-timeout", "10" } };

		transfer(&r, NULL);
		if (r.sender_exit == 77) {
			/* Said out loud, never silently: this machine lacks what the mode needs. */
			cr_log_warn("sender mode %s not available here: %s", r.mode, r.sj);
			cr_assert_neq(m, 0, "software mode must always be available");
			bt_fini();
			continue;
		}
		expect_verified(&r, 40u << 20);
		cr_assert_geq(bt_num(r.sj, "link_down"), 1, "%s: the engine never saw the link go: %s", r.mode, r.sj);
		cr_assert_geq(bt_num(r.sj, "link_up"), 1, "%s: %s", r.mode, r.sj);
		cr_assert_gt(bt_num(r.sj, "link_down_s"), 1.0, "%s: %s", r.mode, r.sj);
		cr_log_info("%s: flap survived, %g s down, %g retransmitted, %g RTOs", r.mode,
			    bt_num(r.sj, "link_down_s"), bt_num(r.sj, "retrans"), bt_num(r.sj, "rto"));
		bt_fini();
	}
}

static void flap_peer_link(struct bt_proc *sp)
{
	(void)sp;
	usleep(600000);
	cr_assert_eq(nsbed_sh(&tb, 1, "ip link set " IF_B " down && sleep 2 && ip link set " IF_B " up"), 0);
}

/* No carrier (the peer's side down): the kernel would drop what it is given; the engine holds it. */
Test(sender_faults, carrier_loss, .fini = fini, .timeout = 60)
{
	struct run r = { .mode = "software", .bytes = "40M", .port = 7470, .during = flap_peer_link,
			 .extra = { "--rate", "200M", "--idle-timeout", "10" } };

	bed();
	transfer(&r, NULL);
	expect_verified(&r, 40u << 20);
	cr_assert_geq(bt_num(r.sj, "link_down"), 1, "%s", r.sj);
}

static void delete_link(struct bt_proc *sp)
{
	(void)sp;
	usleep(500000);
	t_fault = bt_now();
	cr_assert_eq(nsbed_sh(&tb, 0, "ip link del " IF_A), 0);
}

/* The interface goes away: a clear message and exit 1 at once, every chunk given back. */
Test(sender_faults, interface_removed, .fini = fini, .timeout = 60)
{
	struct run r = { .mode = "software", .bytes = "1G", .port = 7471, .during = delete_link,
			 .extra = { "--rate", "100M", "--idle-timeout", "8" } };
	double took;

	bed();
	transfer(&r, NULL);
	took = bt_now() - t_fault;
	cr_assert_eq(r.sender_exit, 1, "exit %d: %s", r.sender_exit, r.sj);
	cr_assert_str_eq(bt_str(r.sj, "status"), "the interface went away", "%s", r.sj);
	cr_assert_str_eq(bt_str(r.sj, "error"), strerror(ENODEV), "%s", r.sj);
	cr_assert(strstr(r.sj, "\"umem_balanced\": true"), "%s", r.sj);
	/* Well within the idle timeout: the engine learns of it from rtnetlink, not by waiting. */
	cr_assert_lt(took, 8.0, "the sender took %.1f s to notice", took);
	cr_log_info("interface removed: the sender ended %.2f s later (including the receiver's stop)", took);
}

/*
 * IPv6 in the modes whose paths differ: AF_XDP, the virtio_net_hdr device,
 * and the e1000 model, which segments IPv6 in software and finishes the
 * checksums itself (this once sent payload under the wrong header).
 */
Test(sender_faults, ipv6_next_hop_from_the_kernel, .fini = fini, .timeout = 120)
{
	static const char *const modes[] = { "software", "offload-vnet", "offload-e1000" };

	bed();
	for (int m = 0; m < 3; m++) {
		struct run r = { .mode = modes[m], .bytes = "16M", .port = 7475 + m, .dst = ADDR6_B };

		/* Nothing cached: the sender makes the kernel solicit the neighbour. */
		cr_assert_eq(nsbed_sh(&tb, 0, "ip -6 neigh flush dev " IF_A), 0);
		transfer(&r, NULL);
		if (r.sender_exit == 77) {
			cr_log_warn("sender mode %s not available here: %s", r.mode, r.sj);
			cr_assert_neq(m, 0, "software mode must always be available");
			bt_fini();
			continue;
		}
		expect_verified(&r, 16u << 20);
		cr_assert(strstr(r.sj, "\"nexthop_resolved\": true"), "%s", r.sj);
		bt_fini();
	}
}

/* A next hop nobody answers for: exit 2 within the resolution bound, nothing attached. */
Test(sender_faults, next_hop_never_answers, .fini = fini, .timeout = 60)
{
	static const char *const dsts[] = { "10.76.0.99", "fd76::99" };

	bed();
	for (int i = 0; i < 2; i++) {
		const char *sargv[BT_MAX_ARGS] = { bt_prog("sender"), "--netns", tb.ns[0], "--dev", IF_A, "--dst",
						   dsts[i], "--port", "7473", "--json" };
		double t0 = bt_now();
		struct bt_proc *sp = bt_spawn(sargv);

		cr_assert_eq(bt_wait(sp, 20), 2, "%s: exit %d: %s", dsts[i], sp->status, bt_read(sp->err));
		cr_assert_lt(bt_now() - t0, 6.0, "%s: the bound is 3 s", dsts[i]);
		cr_assert(strstr(bt_read(sp->err), "no next hop"), "%s: %s", dsts[i], bt_read(sp->err));
		cr_assert(strstr(bt_read(sp->err), strerror(EHOSTUNREACH)), "%s: %s", dsts[i], bt_read(sp->err));
		bt_fini();
	}
	cr_assert_neq(nsbed_sh(&tb, 0, "ip link show " IF_A " | grep -q xdp"), 0, "an XDP program was left");
}

/* A queue the interface does not have: a usage error before anything is opened. */
Test(sender_faults, queue_the_interface_lacks, .fini = fini, .timeout = 30)
{
	bed();
	const char *sargv[BT_MAX_ARGS] = { bt_prog("sender"), "--netns", tb.ns[0], "--dev", IF_A, "--dst", ADDR_B,
					   "--port", "7474", "--queue", "5" };
	struct bt_proc *sp = bt_spawn(sargv);

	cr_assert_eq(bt_wait(sp, 20), 2, "exit %d: %s", sp->status, bt_read(sp->err));
	cr_assert(strstr(bt_read(sp->err), "queue 5"), "%s", bt_read(sp->err));
}
