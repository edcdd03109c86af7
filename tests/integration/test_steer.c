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
#include <stdlib.h>

#include "test_xsk_util.h"

#define A_PORT 7001  /* registered flow: b:B_PORT -> a:A_PORT */
#define A_PORT2 7002 /* never registered */
#define B_PORT 7000
#define MAX_FDS 8

static struct {
	struct gso_steer *steer;
	int fds[MAX_FDS];
	int nfds;
} sg;

static void sg_fini(void)
{
	/* Detach in the namespace it was attached in. */
	if (sg.steer && gso_testbed_enter(&xt_g.tb, 0) == 0)
		gso_steer__destroy(sg.steer);
	sg.steer = NULL;
	for (int i = 0; i < sg.nfds; i++)
		close(sg.fds[i]);
	sg.nfds = 0;
	xt_fini();
}

TestSuite(steer, .fini = sg_fini, .timeout = 60);

static int keep_fd(int fd)
{
	cr_assert_geq(fd, 0, "socket: %s", strerror(errno));
	cr_assert_lt(sg.nfds, MAX_FDS);
	sg.fds[sg.nfds++] = fd;
	return fd;
}

static const char *addr_of(int side, bool v6)
{
	static const char *a[2][2] = { { "10.77.0.1", "fd77::1" }, { "10.77.0.2", "fd77::2" } };
	return a[side][v6];
}

static void make_sa(int side, bool v6, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		inet_pton(AF_INET6, addr_of(side, true), &a->sin6_addr);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		inet_pton(AF_INET, addr_of(side, false), &a->sin_addr);
		*len = sizeof(*a);
	}
}

/* A UDP socket on `side` bound to `port` (non-blocking). */
static int udp_on(int side, bool v6, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;

	cr_assert_eq(gso_testbed_enter(&xt_g.tb, side), 0);
	fd = keep_fd(socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
	make_sa(side, v6, port, &ss, &len);
	cr_assert_eq(bind(fd, (struct sockaddr *)&ss, len), 0, "bind %s:%u: %s", addr_of(side, v6), port,
		     strerror(errno));
	return fd;
}

/* Datagram i from b's socket to a's port: payload "steer <tag> <i>" padded to 64 bytes. */
static void send_udp(int fd, bool v6, uint16_t to_port, const char *tag, int i)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char p[64];

	memset(p, 0, sizeof(p));
	snprintf(p, sizeof(p), "steer %s %d", tag, i);
	make_sa(0, v6, to_port, &ss, &len);
	cr_assert_eq(sendto(fd, p, sizeof(p), 0, (struct sockaddr *)&ss, len), (ssize_t)sizeof(p), "sendto: %s",
		     strerror(errno));
}

/*
 * One ICMP echo from `side` to the other side, answered by the other
 * side's kernel (no ping binary needed).  Returns true on a reply.
 */
static bool ping_once(int side, bool v6, uint16_t seq)
{
	struct sockaddr_storage ss;
	socklen_t len;
	uint8_t pkt[64], rep[256];
	uint16_t id = (uint16_t)getpid();
	bool ok = false;
	int fd;

	cr_assert_eq(gso_testbed_enter(&xt_g.tb, side), 0);
	fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_RAW | SOCK_CLOEXEC, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
	cr_assert_geq(fd, 0, "raw socket: %s", strerror(errno));
	memset(pkt, 0xa5, sizeof(pkt));
	pkt[0] = v6 ? 128 : 8; /* echo request */
	pkt[1] = 0;
	pkt[2] = pkt[3] = 0;
	pkt[4] = (uint8_t)(id >> 8);
	pkt[5] = (uint8_t)id;
	pkt[6] = (uint8_t)(seq >> 8);
	pkt[7] = (uint8_t)seq;
	if (!v6) {
		/* ICMPv6 raw sockets get their checksum from the kernel; ICMPv4 ones do not. */
		/* The sum is in memory order: store it as it is. */
		uint16_t c = gso_csum_finish(gso_csum_partial(pkt, sizeof(pkt), 0));
		memcpy(pkt + 2, &c, 2);
	}
	make_sa(1 - side, v6, 0, &ss, &len);
	cr_assert_eq(sendto(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&ss, len), (ssize_t)sizeof(pkt));
	for (uint64_t end = xt_now_ms() + XT_WAIT_MS; !ok && xt_now_ms() < end;) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		if (poll(&pf, 1, 100) != 1)
			continue;
		ssize_t n = recv(fd, rep, sizeof(rep), 0);
		/* IPv4 raw sockets see the IP header; IPv6 ones do not. */
		size_t off = v6 ? 0 : (size_t)(rep[0] & 0xf) * 4;
		if (n >= (ssize_t)(off + 8) && rep[off] == (v6 ? 129 : 0) && rep[off + 4] == pkt[4] &&
		    rep[off + 5] == pkt[5] && rep[off + 6] == pkt[6] && rep[off + 7] == pkt[7])
			ok = true;
	}
	close(fd);
	return ok;
}

/* Frames from the device until `want` arrived or `ms` passed; returns how many. */
static unsigned rx_collect(struct gso_rx_pkt *out, unsigned want, int ms)
{
	uint64_t end = xt_now_ms() + (uint64_t)ms;
	unsigned got = 0;

	while (got < want) {
		int r = gso_dev__recv(xt_g.dev, out + got, want - got);
		cr_assert_geq(r, 0, "recv: %s", strerror(-r));
		got += (unsigned)r;
		if (got >= want)
			break;
		int64_t left = (int64_t)(end - xt_now_ms());
		if (left <= 0)
			break;
		r = gso_dev__rx_wait(xt_g.dev, (int)left);
		cr_assert(r == 0 || r == -ETIMEDOUT, "rx_wait: %s", strerror(-r));
	}
	return got;
}

/* Parse a received frame: L4 and ports, payload. */
static void frame_fields(const struct gso_rx_pkt *p, struct gso_tmpl *t, uint16_t *sport, uint16_t *dport)
{
	cr_assert_eq(gso_tmpl_parse(t, p->data, p->len), 0, "received frame of %u bytes is not TCP/UDP over IP",
		     p->len);
	*sport = (uint16_t)(p->data[t->l4_off] << 8 | p->data[t->l4_off + 1]);
	*dport = (uint16_t)(p->data[t->l4_off + 2] << 8 | p->data[t->l4_off + 3]);
}

/* The registered UDP flow b:B_PORT -> a:A_PORT. */
static struct gso_flow udp_flow(bool v6)
{
	struct gso_flow f;

	memset(&f, 0, sizeof(f));
	f.l3 = v6 ? GSO_L3_IPV6 : GSO_L3_IPV4;
	f.l4 = GSO_L4_UDP;
	f.sport = B_PORT;
	f.dport = A_PORT;
	inet_pton(v6 ? AF_INET6 : AF_INET, addr_of(1, v6), f.saddr);
	inet_pton(v6 ? AF_INET6 : AF_INET, addr_of(0, v6), f.daddr);
	return f;
}

/* Test-bed, receiving AF_XDP device on side a, steering attached, device added. */
static void setup(uint32_t rx_chunks)
{
	gso_test_require_root();
	xt_bed(0);
	GSO_OPTS(gso_xsk_opts, o, .rx_size = 64, .rx_chunks = rx_chunks);
	xt_open(&o);
	int err = gso_steer__create(&sg.steer, xt_g.tb.ifindex[0], NULL);
	cr_assert_eq(err, 0, "gso_steer__create: %s", strerror(-err));
	cr_assert_eq(gso_steer__add_dev(sg.steer, xt_g.dev), 0);
	GSO_OPTS(gso_steer_stats, ss);
	cr_assert_eq(gso_steer__stats(sg.steer, &ss), 0);
	cr_log_info("attached %s, %s", ss.multiprog ? "under libxdp's dispatcher" : "alone (no dispatcher)",
		    ss.xdp_mode == GSO_STEER_XDP_SKB ? "generic mode" : "native mode");
}

static struct gso_steer_stats steer_stats(void)
{
	GSO_OPTS(gso_steer_stats, ss);
	cr_assert_eq(gso_steer__stats(sg.steer, &ss), 0);
	return ss;
}

/* Every chunk free after releasing and closing (invariant 7). */
static void check_teardown(struct gso_rx_pkt *held, unsigned n)
{
	gso_dev__close(xt_g.dev);
	struct gso_dev_stats st = xt_stats();
	cr_assert_eq(st.rx_held, n);
	cr_assert_eq(st.chunks_held + st.chunks_queued, n, "after close only the caller's %u frames stay held", n);
	/* Frames stay readable after close until released. */
	for (unsigned i = 0; i < n; i++)
		cr_assert_gt(held[i].len, 0);
	cr_assert_eq(gso_dev__rx_release(xt_g.dev, held, n), (int)n);
	st = xt_stats();
	cr_assert_eq(st.chunks_free, st.chunks_total, "after teardown: %u free of %u (%u queued, %u in flight, %u held)",
		     st.chunks_free, st.chunks_total, st.chunks_queued, st.chunks_inflight, st.chunks_held);
	cr_assert_eq(st.rx_held, 0);
}

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

	setup(0);
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
	cr_assert_eq(gso_testbed_enter(&xt_g.tb, 0), 0);
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
	cr_assert_eq(gso_testbed_enter(&xt_g.tb, 0), 0);

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
	struct gso_flow f;
	cr_assert_eq(gso_flow__reply_of(&f, &xt_g.tmpl), 0);
	cr_assert_eq(f.sport, XT_PORT_RX);
	cr_assert_eq(f.dport, sport);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f), 0);

	/* An unrelated TCP connection b -> a through the same interface, carried by the kernel. */
	struct sockaddr_storage ss;
	socklen_t sl;
	cr_assert_eq(gso_testbed_enter(&xt_g.tb, 0), 0);
	int l2 = keep_fd(socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	make_sa(0, v6, 9100, &ss, &sl);
	cr_assert_eq(bind(l2, (struct sockaddr *)&ss, sl), 0);
	cr_assert_eq(listen(l2, 1), 0);

	cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, ROUNDS * LEN, &buf), 0);
	gso_test_fill_random(buf.data, ROUNDS * LEN, &rng);
	for (uint32_t k = 0; k < ROUNDS; k++) {
		cr_assert_eq(gso_tmpl_set_tcp_seq(&xt_g.tmpl, snd_nxt + k * LEN), 0);
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
	cr_assert_eq(gso_testbed_enter(&xt_g.tb, 1), 0);
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
	cr_assert_eq(gso_testbed_enter(&xt_g.tb, 0), 0);

	struct gso_steer_stats st2 = steer_stats();
	cr_assert_eq(st2.steered, acks, "every steered frame reached the socket");
	cr_assert_geq(acks, ROUNDS);
	struct gso_dev_stats st = xt_stats();
	cr_assert_eq(st.rx_frames, acks);
	cr_assert_eq(st.kernel_invalid, 0);
	gso_dev__buf_free(xt_g.dev, &buf);
	xt_drain();
	check_teardown(NULL, 0);
}
