/*
 * bench/sender when the MTU falls mid-transfer (issue 26): a stream whose
 * MSS was fixed at connect used to die "the peer went silent" after five
 * RTOs.  Here the link's MTU goes from 1500 to 1280 on both of its ends
 * (the sender's interface and its peer, which drops larger frames) 0.3 s
 * into a transfer, in every sender mode, over IPv4 and IPv6: the
 * engine hears of it from the link monitor, the stream cuts its segments
 * at the new size and retransmits what was in flight too large, and every
 * byte arrives verified.  The same when a route of its own to the receiver
 * gets MTU 1280 (the link stays at 1500): the engine asks for the route's
 * MTU again on the route change.  (The path's MTU, announced by ICMP
 * errors from a router: test_sender_impair.c's pmtu_* cases.)
 */
#include "test_sender_util.h"

static int cur_port;

/* Once the connection is up (IPv6's neighbour discovery can take a while), and data flows. */
static void lower_link_mtu_wait(void)
{
	for (int i = 0; i < 100; i++) {
		if (!nsbed_sh(&tb, 1, "ss -Htn state established '( sport = :%d )' | grep -q .", cur_port))
			break;
		usleep(50000);
	}
	usleep(300000);
}

static void lower_link_mtu(struct bt_proc *sp)
{
	(void)sp;
	lower_link_mtu_wait();
	cr_assert_eq(nsbed_sh(&tb, 1, "ip link set " IF_B " mtu 1280"), 0);
	cr_assert_eq(nsbed_sh(&tb, 0, "ip link set " IF_A " mtu 1280"), 0);
}

/* A route of its own to the receiver with MTU 1280; the link stays at 1500. */
static void lower_route_mtu(struct bt_proc *sp)
{
	lower_link_mtu_wait();
	cr_assert_eq(nsbed_sh(&tb, 0, "ip route add " ADDR_B "/32 dev " IF_A " mtu 1280 && "
			      "ip -6 route add " ADDR6_B "/128 dev " IF_A " mtu 1280"), 0);
	(void)sp;
}

static void mtu_every_mode(const char *dst, int port0, const char *const *modes, size_t nmodes,
			   void (*during)(struct bt_proc *), unsigned link_mtu)
{
	for (size_t m = 0; m < nmodes; m++) {
		/* 40 MB at 200 Mbit/s: 1.6 s of data, the MTU lowered at 0.3 s. */
		struct run r = { .mode = modes[m], .bytes = "40M", .port = port0 + (int)m, .dst = dst,
				 .during = during, .extra = { "--rate", "200M" } };

		bed();
		cur_port = r.port;
		transfer(&r, NULL);
		if (r.sender_exit == 77) {
			cr_log_warn("sender mode %s not available here: %s", r.mode, r.sj);
			cr_assert_neq(m, 0, "software mode must always be available");
			bt_fini();
			fini();
			continue;
		}
		if (!strcmp(r.mode, "kernel")) {
			/* The reference: Linux's own TCP over the same change. */
			cr_assert_eq(r.sender_exit, 0, "kernel: %s", r.sj);
			cr_assert_eq(r.receiver_exit, 0, "kernel: %s", r.rj);
			cr_assert_eq(bt_num(r.rj, "bytes_verified"), 40u << 20, "kernel: %s", r.rj);
			cr_assert_eq(bt_num(r.sj, "ti_snd_mss"), 1280 - (dst ? 40 : 20) - 20 - 12, "kernel: %s", r.sj);
		} else {
			expect_verified(&r, 40u << 20);
			cr_assert_eq(bt_num(r.sj, "link_mtu"), link_mtu, "%s: %s", r.mode, r.sj);
			cr_assert_eq(bt_num(r.sj, "path_mtu"), 1280, "%s: %s", r.mode, r.sj);
			cr_assert_geq(bt_num(r.sj, "pmtu_changes"), 1, "%s: %s", r.mode, r.sj);
			cr_assert_leq(bt_num(r.sj, "mss"), 1280 - (dst ? 40 : 20) - 20, "%s: %s", r.mode, r.sj);
			cr_log_info("%s %s: MTU 1500 -> 1280 survived, mss %g, %g segments resent for it, %g RTOs",
				    r.mode, dst ? "IPv6" : "IPv4", bt_num(r.sj, "mss"), bt_num(r.sj, "pmtu_lost_segs"),
				    bt_num(r.sj, "rto"));
		}
		bt_fini();
		fini();
	}
}

static const char *const all_modes[] = { "software", "csum", "multibuf", "offload-vnet", "offload-e1000", "auto",
					 "kernel" };

Test(sender_mtu, link_mtu_lowered_ipv4, .fini = fini, .timeout = 300)
{
	mtu_every_mode(NULL, 7480, all_modes, sizeof(all_modes) / sizeof(all_modes[0]), lower_link_mtu, 1280);
}

Test(sender_mtu, link_mtu_lowered_ipv6, .fini = fini, .timeout = 300)
{
	mtu_every_mode(ADDR6_B, 7490, all_modes, sizeof(all_modes) / sizeof(all_modes[0]), lower_link_mtu, 1280);
}

/* The route's MTU: the engine asks for it again when a route on its interface changes. */
Test(sender_mtu, route_mtu_lowered, .fini = fini, .timeout = 300)
{
	static const char *const modes[] = { "software", "offload-vnet", "kernel" };

	mtu_every_mode(NULL, 7500, modes, 3, lower_route_mtu, 1500);
	mtu_every_mode(ADDR6_B, 7510, modes, 3, lower_route_mtu, 1500);
}
