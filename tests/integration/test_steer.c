/*
 * ACK steering on a veth test-bed: the XDP program on side a sends the
 * frames of registered flows to the AF_XDP device's RX ring, and every
 * other frame still reaches side a's kernel (ARP, neighbour discovery,
 * ping, unrelated UDP and TCP).  Senders are the stock Linux stack on side
 * b: UDP datagrams, and the ACKs of a real TCP connection whose data the
 * AF_XDP device sends.  Flows come and go at run time; teardown detaches
 * the program and leaves every UMEM chunk free; an interface that goes
 * away gives -ENODEV.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "test_steer_util.h"

TestSuite(steer, .fini = sg_fini, .timeout = 60);

/* ---- UDP: the registered flow goes to the socket, everything else to the kernel ---- */

ParameterizedTestParameters(steer, udp_only_registered)
{
	static bool v6[] = { false, true };
	return cr_make_param_array(bool, v6, 2);
}

ParameterizedTest(bool *v6p, steer, udp_only_registered)
{
	enum { N = 40 };
	static struct gso_rx_pkt pk[N + 8];
	bool v6 = *v6p;
	char buf[128];

	sg_setup(0);
	struct gso_flow f = udp_flow(v6);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f), 0);
	int a1 = udp_on(0, v6, A_PORT), a2 = udp_on(0, v6, A_PORT2), b = udp_on(1, v6, B_PORT);
	/* Interleave: registered, unregistered port, and a b-side port not in the flow. */
	int b2 = udp_on(1, v6, B_PORT + 100);
	for (int i = 0; i < N; i++) {
		send_udp(b, v6, A_PORT, "reg", i);
		send_udp(b, v6, A_PORT2, "other", i);
		send_udp(b2, v6, A_PORT, "wrongsrc", i);
	}
	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);
	unsigned got = rx_collect(pk, N, XT_WAIT_MS);
	cr_assert_eq(got, N, "steered frames: %u of %d", got, N);
	for (unsigned i = 0; i < got; i++) {
		struct gso_tmpl t;
		uint16_t sp, dp;
		char want[64];
		frame_fields(&pk[i], &t, &sp, &dp);
		cr_assert_eq(t.l3, v6 ? GSO_L3_IPV6 : GSO_L3_IPV4);
		cr_assert_eq(t.l4, GSO_L4_UDP);
		cr_assert_eq(sp, B_PORT);
		cr_assert_eq(dp, A_PORT);
		cr_assert_eq(pk[i].len, t.hdr_len + 64u);
		memset(want, 0, sizeof(want));
		snprintf(want, sizeof(want), "steer reg %u", i);
		cr_assert_eq(memcmp(pk[i].data + t.hdr_len, want, 64), 0, "frame %u: payload out of order or wrong", i);
	}
	/* Nothing else came to the socket... */
	cr_assert_eq(rx_collect(pk + N, 8, 100), 0, "unregistered frames reached the socket");
	/* ...and everything else reached the kernel, the registered flow excepted. */
	for (int i = 0; i < N; i++) {
		char want[64];
		memset(want, 0, sizeof(want));
		snprintf(want, sizeof(want), "steer other %d", i);
		cr_assert(xt_wait(a2, XT_WAIT_MS), "unregistered datagram %d did not reach the kernel", i);
		cr_assert_eq(recv(a2, buf, sizeof(buf), 0), 64);
		cr_assert_eq(memcmp(buf, want, 64), 0);
		snprintf(want, sizeof(want), "steer wrongsrc %d", i);
		cr_assert(xt_wait(a1, XT_WAIT_MS), "datagram %d from another source port did not reach the kernel", i);
		cr_assert_eq(recv(a1, buf, sizeof(buf), 0), 64);
		cr_assert_eq(memcmp(buf, want, 64), 0);
	}
	cr_assert_not(xt_wait(a1, 100), "a steered datagram reached the kernel too");
	/* Ping through the same interface while steering is active. */
	cr_assert(ping_once(1, v6, 1), "ping b -> a (%s)", v6 ? "v6" : "v4");
	cr_assert(ping_once(0, v6, 2), "ping a -> b");
	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);

	struct gso_steer_stats ss = steer_stats();
	uint64_t fp = 0;
	cr_assert_eq(gso_steer__flow_count(sg.steer, &f, &fp, NULL), 0);
	cr_assert_eq(fp, N);
	cr_assert_eq(ss.steered, N);
	cr_assert_eq(ss.no_socket, 0);
	cr_assert_geq(ss.passed, 2 * N);
	cr_assert_eq(ss.flows, 1);
	cr_assert_eq(ss.devs, 1);
	struct gso_dev_stats st = xt_stats();
	cr_assert_eq(st.rx_frames, N);
	cr_assert_eq(st.rx_held, N);
	cr_assert_eq(st.rx_fill_empty + st.rx_ring_full + st.rx_kernel_dropped, 0);
	xt_check_accounting();
	/* Release half now; the rest after close. */
	cr_assert_eq(gso_dev__rx_release(xt_g.dev, pk, N / 2), N / 2);
	cr_assert_eq(xt_stats().rx_held, N - N / 2);
	check_teardown(pk + N / 2, N - N / 2);
}

/* ---- TCP: the ACKs of a real connection whose data we send ---- */

ParameterizedTestParameters(steer, tcp_acks)
{
	static bool v6[] = { false, true };
	return cr_make_param_array(bool, v6, 2);
}

ParameterizedTest(bool *v6p, steer, tcp_acks)
{
	enum { LEN = 20000, ROUNDS = 3 };
	static uint8_t got[LEN];
	static struct gso_rx_pkt pk[256];
	bool v6 = *v6p;
	uint32_t snd_nxt, rcv_nxt, last_ack = 0;
	uint16_t sport;
	uint64_t rng = 5;
	unsigned acks = 0;
	struct gso_buf buf;

	gso_test_require_root();
	xt_bed(0);
	xt_tcp_connect(v6, &snd_nxt, &rcv_nxt, &sport);
	xt_tmpl(v6, GSO_L4_TCP, snd_nxt, rcv_nxt, sport, XT_PORT_RX);
	GSO_OPTS(gso_xsk_opts, o, .rx_size = 256);
	xt_open(&o);
	int err = gso_steer__create(&sg.steer, xt_g.tb.ifindex[0], NULL);
	cr_assert_eq(err, 0, "gso_steer__create: %s", strerror(-err));
	cr_assert_eq(gso_steer__add_dev(sg.steer, xt_g.dev), 0);
	GSO_OPTS(gso_flow, f);
	cr_assert_eq(gso_flow__reply_of(&f, &xt_g.tmpl), 0);
	cr_assert_eq(f.sport, XT_PORT_RX);
	cr_assert_eq(f.dport, sport);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f), 0);

	/* An unrelated TCP connection b -> a through the same interface, carried by the kernel. */
	struct sockaddr_storage ss;
	socklen_t sl;
	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);
	int l2 = keep_fd(socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	make_sa(0, v6, 9100, &ss, &sl);
	cr_assert_eq(bind(l2, (struct sockaddr *)&ss, sl), 0);
	cr_assert_eq(listen(l2, 1), 0);

	cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, ROUNDS * LEN, &buf), 0);
	gso_test_fill_random(buf.data, ROUNDS * LEN, &rng);
	for (uint32_t k = 0; k < ROUNDS; k++) {
		cr_assert_eq(gso_tmpl__set_tcp_seq(&xt_g.tmpl, snd_nxt + k * LEN), 0);
		struct gso_tx tx = { .tmpl = &xt_g.tmpl, .buf = &buf, .off = k * LEN, .len = LEN, .mss = 1400 };
		cr_assert_eq(gso_dev__submit(xt_g.dev, &tx, 1), 1);
		xt_tcp_recv_all(got, LEN);
		cr_assert_eq(memcmp(got, buf.data + k * LEN, LEN), 0);
		/* Wait for the ACK that covers this super-segment, through the socket. */
		uint32_t want = snd_nxt + (k + 1) * LEN;
		uint64_t end = xt_now_ms() + XT_WAIT_MS;
		while (last_ack != want && xt_now_ms() < end) {
			unsigned n = rx_collect(pk, 1, (int)(end - xt_now_ms()));
			for (unsigned i = 0; i < n; i++) {
				struct gso_tmpl t;
				uint16_t sp, dp;
				frame_fields(&pk[i], &t, &sp, &dp);
				cr_assert_eq(t.l4, GSO_L4_TCP);
				cr_assert_eq(sp, XT_PORT_RX);
				cr_assert_eq(dp, sport);
				cr_assert(pk[i].data[t.l4_off + 13] & GSO_TCP_ACK);
				const uint8_t *a = pk[i].data + t.l4_off + 8;
				last_ack = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
				acks++;
			}
			cr_assert_eq(gso_dev__rx_release(xt_g.dev, pk, n), (int)n);
		}
		cr_assert_eq(last_ack, want, "round %u: last ACK through the socket %u, want %u", k, last_ack, want);
		cr_assert_geq(gso_dev__buf_release(xt_g.dev, &buf, (k + 1) * LEN), 0);
	}
	/* The unrelated connection works while steering is active, both ways. */
	cr_assert_eq(nsbed_enter(&xt_g.tb, 1), 0);
	int c2 = keep_fd(socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	cr_assert_eq(connect(c2, (struct sockaddr *)&ss, sl), 0, "connect b -> a:9100: %s", strerror(errno));
	cr_assert_eq(send(c2, "unrelated", 9, 0), 9);
	int c = keep_fd(accept4(l2, NULL, NULL, SOCK_CLOEXEC));
	char line[16] = { 0 };
	cr_assert(xt_wait(c, XT_WAIT_MS));
	cr_assert_eq(recv(c, line, sizeof(line), 0), 9);
	cr_assert_eq(memcmp(line, "unrelated", 9), 0);
	cr_assert_eq(send(c, "back", 4, 0), 4);
	cr_assert(xt_wait(c2, XT_WAIT_MS));
	cr_assert_eq(recv(c2, line, sizeof(line), 0), 4);
	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);

	/* Later ACKs (window updates) may still be on their way: every steered frame must arrive. */
	struct gso_steer_stats st2 = steer_stats();
	for (uint64_t end = xt_now_ms() + XT_WAIT_MS; acks < st2.steered && xt_now_ms() < end;
	     st2 = steer_stats()) {
		unsigned n = rx_collect(pk, 16, 20);
		acks += n;
		cr_assert_eq(gso_dev__rx_release(xt_g.dev, pk, n), (int)n);
	}
	cr_assert_eq(st2.steered, acks, "every steered frame reached the socket");
	cr_assert_geq(acks, ROUNDS);
	struct gso_dev_stats st = xt_stats();
	cr_assert_eq(st.rx_frames, acks);
	cr_assert_eq(st.kernel_invalid, 0);
	gso_dev__buf_free(xt_g.dev, &buf);
	xt_drain();
	check_teardown(NULL, 0);
}
