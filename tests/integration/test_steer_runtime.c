/*
 * Steering at run time and under faults: flows and devices added and
 * removed while traffic flows (each change takes effect for the next
 * frame, and an unregistered flow's frames reach the kernel again), a
 * flow registered before its socket, the flow table limit, a second
 * program on the same interface (joins under libxdp's dispatcher, or is
 * refused when libxdp had to attach alone), frames held until the fill
 * ring runs dry, teardown (program detached, every chunk free) and the
 * interface removed mid-run (-ENODEV, held frames still valid).
 */
#include <criterion/criterion.h>

#include "test_steer_util.h"

TestSuite(steer_runtime, .fini = sg_fini, .timeout = 60);

/* Send `n` datagrams b:B_PORT -> a:A_PORT tagged `tag`. */
static void burst(int b, const char *tag, int n)
{
	for (int i = 0; i < n; i++)
		send_udp(b, false, A_PORT, tag, i);
}

/* Exactly `n` datagrams reach the kernel socket `fd` within the wait; none more. */
static void kernel_gets(int fd, int n)
{
	char buf[128];

	for (int i = 0; i < n; i++) {
		cr_assert(xt_wait(fd, XT_WAIT_MS), "datagram %d of %d did not reach the kernel", i, n);
		cr_assert_eq(recv(fd, buf, sizeof(buf), 0), 64);
	}
	cr_assert_not(xt_wait(fd, 50), "more than %d datagrams reached the kernel", n);
}

/* Exactly `n` frames reach the device; they are released again. */
static void socket_gets(int n)
{
	static struct gso_rx_pkt pk[64];

	cr_assert_leq(n, 60);
	unsigned got = rx_collect(pk, (unsigned)n, XT_WAIT_MS);
	cr_assert_eq(got, (unsigned)n, "socket got %u of %d frames", got, n);
	cr_assert_eq(rx_collect(pk + got, 4, n ? 50 : 200), 0, "more than %d frames reached the socket", n);
	cr_assert_eq(gso_dev__rx_release(xt_g.dev, pk, got), (int)got);
}

Test(steer_runtime, flows_added_and_removed)
{
	sg_setup(0);
	int a = udp_on(0, false, A_PORT), b = udp_on(1, false, B_PORT);
	struct gso_flow f = udp_flow(false);

	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);
	burst(b, "before", 5);
	kernel_gets(a, 5);
	socket_gets(0);

	cr_assert_eq(gso_steer__flow_add(sg.steer, &f), 0);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f), -EEXIST);
	burst(b, "added", 5);
	socket_gets(5);
	kernel_gets(a, 0);

	cr_assert_eq(gso_steer__flow_del(sg.steer, &f), 0);
	cr_assert_eq(gso_steer__flow_del(sg.steer, &f), -ENOENT);
	cr_assert_eq(gso_steer__flow_count(sg.steer, &f, NULL, NULL), -ENOENT);
	burst(b, "removed", 5);
	kernel_gets(a, 5);
	socket_gets(0);

	cr_assert_eq(gso_steer__flow_add(sg.steer, &f), 0);
	burst(b, "again", 7);
	socket_gets(7);
	kernel_gets(a, 0);
	uint64_t pk = 0, by = 0;
	cr_assert_eq(gso_steer__flow_count(sg.steer, &f, &pk, &by), 0);
	cr_assert_eq(pk, 7, "counted since the last registration");
	cr_assert_eq(by, 7 * (14 + 20 + 8 + 64));

	/* Other flows come and go beside it. */
	struct gso_flow g = f;
	g.l3 = GSO_L3_IPV6;
	g.l4 = GSO_L4_TCP;
	inet_pton(AF_INET6, "fd77::2", g.saddr);
	inet_pton(AF_INET6, "fd77::1", g.daddr);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &g), 0);
	cr_assert_eq(steer_stats().flows, 2);
	cr_assert_eq(gso_steer__flow_del(sg.steer, &g), 0);
	cr_assert_eq(steer_stats().flows, 1);

	/* Bad flows change nothing. */
	struct gso_flow bad = f;
	bad.l3 = 5;
	cr_assert_eq(gso_steer__flow_add(sg.steer, &bad), -EINVAL);
	bad = f;
	bad.l4 = 1;
	cr_assert_eq(gso_steer__flow_add(sg.steer, &bad), -EINVAL);
	bad = f;
	bad.saddr[7] = 1;
	cr_assert_eq(gso_steer__flow_add(sg.steer, &bad), -EINVAL, "IPv4 address with bytes past the 4th");
	cr_assert_eq(gso_steer__flow_add(sg.steer, NULL), -EINVAL);
	cr_assert_eq(gso_steer__flow_add(NULL, &f), -EINVAL);
	cr_assert_eq(steer_stats().flows, 1);

	struct gso_steer_stats ss = steer_stats();
	cr_assert_eq(ss.steered, 12);
	cr_assert_eq(ss.no_socket, 0);
	check_teardown(NULL, 0);
}

Test(steer_runtime, devices_added_and_removed)
{
	gso_test_require_root();
	xt_bed(0);
	GSO_OPTS(gso_xsk_opts, o, .rx_size = 64);
	xt_open(&o);
	cr_assert_eq(gso_steer__create(&sg.steer, xt_g.tb.ifindex[0], NULL), 0);
	int a = udp_on(0, false, A_PORT), b = udp_on(1, false, B_PORT);
	struct gso_flow f = udp_flow(false);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f), 0);
	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);

	/* Registered before any socket: nothing is lost, the kernel gets it. */
	burst(b, "nosock", 4);
	kernel_gets(a, 4);
	socket_gets(0);
	cr_assert_eq(steer_stats().no_socket, 4);

	cr_assert_eq(gso_steer__add_dev(sg.steer, xt_g.dev), 0);
	cr_assert_eq(gso_steer__add_dev(sg.steer, xt_g.dev), 0, "adding again is harmless");
	cr_assert_eq(steer_stats().devs, 1);
	burst(b, "sock", 6);
	socket_gets(6);
	kernel_gets(a, 0);

	cr_assert_eq(gso_steer__del_dev(sg.steer, xt_g.dev), 0);
	cr_assert_eq(gso_steer__del_dev(sg.steer, xt_g.dev), -ENOENT);
	cr_assert_eq(steer_stats().devs, 0);
	burst(b, "gone", 3);
	kernel_gets(a, 3);
	socket_gets(0);

	/* Closing a device while added: the kernel drops its socket, frames pass again. */
	cr_assert_eq(gso_steer__add_dev(sg.steer, xt_g.dev), 0);
	gso_dev__close(xt_g.dev);
	cr_assert_eq(gso_steer__add_dev(sg.steer, xt_g.dev), -ESHUTDOWN);
	burst(b, "closed", 3);
	kernel_gets(a, 3);
	struct gso_steer_stats ss = steer_stats();
	cr_assert_eq(ss.steered, 6);
	cr_assert_eq(ss.no_socket, 4 + 3 + 3);
	cr_assert_eq(gso_steer__del_dev(sg.steer, xt_g.dev), 0);

	/* A new device on the same queue takes over. */
	gso_dev__destroy(xt_g.dev);
	xt_g.dev = NULL;
	xt_open(&o);
	cr_assert_eq(gso_steer__add_dev(sg.steer, xt_g.dev), 0);
	burst(b, "new", 5);
	socket_gets(5);
	check_teardown(NULL, 0);
}

Test(steer_runtime, flow_table_limit)
{
	gso_test_require_root();
	xt_bed(0);
	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);
	GSO_OPTS(gso_steer_opts, so, .max_flows = 2);
	cr_assert_eq(gso_steer__create(&sg.steer, xt_g.tb.ifindex[0], &so), 0);
	struct gso_flow f = udp_flow(false);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f), 0);
	f.sport++;
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f), 0);
	f.sport++;
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f), -ENOSPC);
	cr_assert_eq(steer_stats().flows, 2);
	f.sport--;
	cr_assert_eq(gso_steer__flow_del(sg.steer, &f), 0);
	f.sport++;
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f), 0, "room again after a delete");
}

/*
 * A second program on the same interface: under libxdp's dispatcher both
 * run (frames the first passes reach the second); where libxdp had to
 * attach the first alone, the second is refused and the first keeps
 * working.
 */
Test(steer_runtime, second_program)
{
	struct gso_steer *other = NULL;

	sg_setup(0);
	int b = udp_on(1, false, B_PORT);
	struct gso_flow f = udp_flow(false);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f), 0);
	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);
	bool multi = steer_stats().multiprog;
	int err = gso_steer__create(&other, xt_g.tb.ifindex[0], NULL);
	if (multi) {
		cr_assert_eq(err, 0, "second program under the dispatcher: %s", strerror(-err));
	} else {
		cr_assert_eq(err, -EEXIST, "second program without a dispatcher: %d (%s)", err, strerror(-err));
		cr_assert_null(other, "a failed call writes nothing");
	}
	burst(b, "two", 5);
	socket_gets(5);
	if (other) {
		GSO_OPTS(gso_steer_stats, os);
		cr_assert_eq(gso_steer__stats(other, &os), 0);
		cr_assert(os.multiprog);
		cr_assert_eq(os.steered, 0);
		gso_steer__destroy(other);
	}
	/* The first one is unharmed either way. */
	burst(b, "after", 3);
	socket_gets(3);
	check_teardown(NULL, 0);
}

/* Frames the caller keeps come out of the fill ring's supply; the kernel drops and counts the rest. */
Test(steer_runtime, held_frames_starve_the_fill_ring)
{
	enum { CHUNKS = 16 };
	static struct gso_rx_pkt pk[64];

	sg_setup(CHUNKS);
	int b = udp_on(1, false, B_PORT);
	struct gso_flow f = udp_flow(false);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f), 0);
	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);
	struct gso_dev_stats st = xt_stats();
	cr_assert_eq(st.rx_posted, CHUNKS, "every receive chunk posted at creation");
	burst(b, "many", 40);
	unsigned got = rx_collect(pk, 64, 300);
	cr_assert_eq(got, CHUNKS, "only as many frames as chunks: %u", got);
	st = xt_stats();
	cr_assert_eq(st.rx_held, CHUNKS);
	cr_assert_eq(st.rx_posted, 0);
	cr_assert_eq(st.rx_fill_empty, 40 - CHUNKS, "the kernel counts what it had no chunk for");
	xt_check_accounting();
	/* Bad releases change nothing. */
	struct gso_rx_pkt twice[2] = { pk[0], pk[0] };
	cr_assert_eq(gso_dev__rx_release(xt_g.dev, twice, 2), -EINVAL, "same frame twice");
	struct gso_rx_pkt bogus = pk[1];
	bogus.id_ = 3;
	cr_assert_eq(gso_dev__rx_release(xt_g.dev, &bogus, 1), -EINVAL, "not a receive chunk");
	bogus = pk[1];
	bogus.data -= 4096;
	cr_assert_eq(gso_dev__rx_release(xt_g.dev, &bogus, 1), -EINVAL, "data outside its chunk");
	cr_assert_eq(xt_stats().rx_held, CHUNKS);
	cr_assert_eq(gso_dev__rx_release(xt_g.dev, pk, 1), 1);
	cr_assert_eq(gso_dev__rx_release(xt_g.dev, pk, 1), -EINVAL, "released already");
	cr_assert_eq(gso_dev__rx_release(xt_g.dev, pk + 1, CHUNKS - 1), CHUNKS - 1);
	st = xt_stats();
	cr_assert_eq(st.rx_held, 0);
	cr_assert_eq(st.rx_posted, CHUNKS, "released chunks go straight back to the fill ring");
	burst(b, "again", 10);
	socket_gets(10);
	check_teardown(NULL, 0);
}

Test(steer_runtime, teardown_detaches)
{
	static struct gso_rx_pkt pk[8];

	sg_setup(0);
	int a = udp_on(0, false, A_PORT), b = udp_on(1, false, B_PORT);
	struct gso_flow f = udp_flow(false);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f), 0);
	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);
	cr_assert_eq(nsbed_sh(&xt_g.tb, 0, "ip link show dev %s | grep -q xdp", xt_g.tb.ifname[0]), 0,
		     "program attached");
	burst(b, "on", 5);
	cr_assert_eq(rx_collect(pk, 5, XT_WAIT_MS), 5);
	gso_steer__destroy(sg.steer);
	sg.steer = NULL;
	cr_assert_neq(nsbed_sh(&xt_g.tb, 0, "ip link show dev %s | grep -q xdp", xt_g.tb.ifname[0]), 0,
		      "program still attached after gso_steer__destroy");
	burst(b, "off", 5);
	kernel_gets(a, 5);
	/* Frames received before stay valid and are released after the device closed. */
	check_teardown(pk, 5);
}

Test(steer_runtime, interface_removed_mid_run)
{
	static struct gso_rx_pkt pk[8];

	sg_setup(0);
	int b = udp_on(1, false, B_PORT);
	struct gso_flow f = udp_flow(false);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f), 0);
	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);
	burst(b, "x", 5);
	cr_assert_eq(rx_collect(pk, 2, XT_WAIT_MS), 2);
	cr_assert_eq(nsbed_sh(&xt_g.tb, 0, "ip link del %s", xt_g.tb.ifname[0]), 0);
	/* Frames already in the ring still come out, then the error. */
	cr_assert_eq(rx_collect(pk + 2, 3, XT_WAIT_MS), 3);
	uint64_t t0 = xt_now_ms();
	int r = gso_dev__rx_wait(xt_g.dev, 5000);
	cr_assert_eq(r, -ENODEV, "rx_wait after the interface went away: %d (%s)", r, strerror(-r));
	cr_assert_lt(xt_now_ms() - t0, 1000, "noticed promptly");
	cr_assert_eq(gso_dev__recv(xt_g.dev, pk + 5, 1), -ENODEV);
	/* Held frames are still ours to read and release. */
	struct gso_tmpl t;
	uint16_t sp, dp;
	for (int i = 0; i < 5; i++) {
		frame_fields(&pk[i], &t, &sp, &dp);
		cr_assert_eq(dp, A_PORT);
	}
	cr_assert_eq(gso_dev__rx_release(xt_g.dev, pk, 2), 2);
	/* The steering object outlives its interface without harm. */
	cr_assert_eq(gso_steer__flow_del(sg.steer, &f), 0);
	gso_steer__destroy(sg.steer);
	sg.steer = NULL;
	xt_check_accounting();
	check_teardown(pk + 2, 3);
}

/* A device without a receive side, and calls that must fail cleanly. */
Test(steer_runtime, bad_arguments)
{
	struct gso_rx_pkt p;
	struct gso_steer *s2 = NULL;
	struct gso_dev *d2 = NULL;

	gso_test_require_root();
	xt_bed(0);
	GSO_OPTS(gso_xsk_opts, o);
	xt_open(&o);
	GSO_OPTS(gso_dev_caps, caps);
	cr_assert_eq(gso_dev__caps(xt_g.dev, &caps), 0);
	cr_assert_not(caps.flags & GSO_DEV_RX);
	cr_assert_eq(caps.rx_max_frame, 0);
	cr_assert_eq(gso_dev__recv(xt_g.dev, &p, 1), -EOPNOTSUPP, "TX-only device");
	cr_assert_eq(gso_dev__rx_wait(xt_g.dev, 0), -EOPNOTSUPP);
	cr_assert_eq(gso_dev__rx_release(xt_g.dev, &p, 1), -EINVAL);
	cr_assert_eq(gso_dev__rx_release(xt_g.dev, NULL, 0), 0);
	cr_assert_eq(gso_dev__recv(NULL, &p, 1), -EINVAL);
	cr_assert_eq(gso_dev__recv(xt_g.dev, NULL, 1), -EINVAL);
	cr_assert_eq(gso_dev__recv(xt_g.dev, &p, 0), -EINVAL);

	/* Receive options. */
	int ifi = xt_g.tb.ifindex[0];
	GSO_OPTS(gso_xsk_opts, r1, .rx_size = 100);
	cr_assert_eq(gso_xsk__create(&d2, ifi, &r1), -EINVAL, "rx_size not a power of 2");
	GSO_OPTS(gso_xsk_opts, r2, .rx_size = 128, .fill_size = 64);
	cr_assert_eq(gso_xsk__create(&d2, ifi, &r2), -EINVAL, "fill ring smaller than the RX ring");
	GSO_OPTS(gso_xsk_opts, r3, .fill_size = 64);
	cr_assert_eq(gso_xsk__create(&d2, ifi, &r3), -EINVAL, "fill ring without RX");
	GSO_OPTS(gso_xsk_opts, r4, .rx_size = 64, .nchunks = 64, .rx_chunks = 62);
	cr_assert_eq(gso_xsk__create(&d2, ifi, &r4), -EINVAL, "no backend chunks left");
	cr_assert_null(d2);

	/* Steering. */
	cr_assert_eq(gso_steer__create(NULL, ifi, NULL), -EINVAL);
	cr_assert_eq(gso_steer__create(&s2, 0, NULL), -EINVAL);
	cr_assert_eq(gso_steer__create(&s2, 999999, NULL), -ENODEV);
	GSO_OPTS(gso_steer_opts, so, .bpf_obj = "/nonexistent/steer.bpf.o");
	cr_assert_eq(gso_steer__create(&s2, ifi, &so), -ENOENT);
	GSO_OPTS(gso_steer_opts, sm, .xdp_mode = 9);
	cr_assert_eq(gso_steer__create(&s2, ifi, &sm), -EINVAL);
	setenv("GSO_BPF_DIR", "/nonexistent", 1);
	cr_assert_eq(gso_steer__create(&s2, ifi, NULL), -ENOENT, "GSO_BPF_DIR is followed");
	setenv("GSO_BPF_DIR", gso_test_build_path("bpf"), 1);
	GSO_OPTS(gso_steer_opts, skb, .xdp_mode = GSO_STEER_XDP_SKB);
	int err = gso_steer__create(&sg.steer, ifi, &skb);
	unsetenv("GSO_BPF_DIR");
	cr_assert_eq(err, 0, "generic mode through GSO_BPF_DIR: %s", strerror(-err));
	cr_assert_null(s2);
	cr_assert_eq(steer_stats().xdp_mode, GSO_STEER_XDP_SKB);
	cr_assert_eq(gso_steer__add_dev(sg.steer, xt_g.dev), -EOPNOTSUPP, "device without RX ring");
	cr_assert_eq(gso_steer__add_dev(sg.steer, NULL), -EINVAL);
	cr_assert_eq(gso_steer__del_dev(sg.steer, xt_g.dev), -ENOENT);
	GSO_OPTS(gso_steer_stats, tiny);
	tiny.sz = 4;
	cr_assert_eq(gso_steer__stats(sg.steer, &tiny), -EINVAL);
	gso_dev__close(xt_g.dev);
	cr_assert_eq(gso_dev__recv(xt_g.dev, &p, 1), -ESHUTDOWN);
	cr_assert_eq(gso_steer__add_dev(sg.steer, xt_g.dev), -ESHUTDOWN);
	gso_steer__destroy(NULL);
}
