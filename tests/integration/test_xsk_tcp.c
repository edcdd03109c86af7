/*
 * TCP super-segments through AF_XDP into a real, established Linux TCP
 * connection.  A kernel client on side a connects to a listener on side b;
 * the client is then put in repair mode (silent: it sends nothing more) and
 * its sequence numbers are read, and the AF_XDP device sends the stream's
 * next bytes in its place.  The stock TCP stack on side b must deliver
 * every byte in order: it drops segments with bad checksums, wrong
 * sequence numbers or wrong lengths, so the byte stream is the check.
 * Timestamps are off on side a, so that segments need no TS option.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <netinet/tcp.h>

#include "test_xsk_util.h"

TestSuite(xsk_tcp, .fini = xt_fini, .timeout = 60);

#ifndef TCP_REPAIR
#define TCP_REPAIR 19
#define TCP_REPAIR_QUEUE 20
#define TCP_QUEUE_SEQ 21
#endif
#ifndef TCP_RECV_QUEUE
#define TCP_RECV_QUEUE 1
#define TCP_SEND_QUEUE 2
#endif

static void sockaddr_b(bool v6, struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(XT_PORT_RX);
		inet_pton(AF_INET6, "fd77::2", &a->sin6_addr);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		a->sin_family = AF_INET;
		a->sin_port = htons(XT_PORT_RX);
		inet_pton(AF_INET, "10.77.0.2", &a->sin_addr);
		*len = sizeof(*a);
	}
}

static uint32_t queue_seq(int fd, int q)
{
	uint32_t seq = 0;
	socklen_t l = sizeof(seq);

	cr_assert_eq(setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)), 0);
	cr_assert_eq(getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, &seq, &l), 0);
	return seq;
}

/* An established connection a -> b; returns the client's snd_nxt and rcv_nxt. */
static void connect_pair(bool v6, uint32_t *snd_nxt, uint32_t *rcv_nxt, uint16_t *sport)
{
	struct sockaddr_storage ss, local;
	socklen_t len, llen = sizeof(local);
	int one = 1, big = 8 << 20, lfd, cfd;

	cr_assert_eq(gso_testbed_sh(&xt_g.tb, 0, "sysctl -qw net.ipv4.tcp_timestamps=0"), 0);
	sockaddr_b(v6, &ss, &len);
	cr_assert_eq(gso_testbed_enter(&xt_g.tb, 1), 0);
	lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(lfd, 0);
	setsockopt(lfd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	cr_assert_eq(bind(lfd, (struct sockaddr *)&ss, len), 0, "bind: %s", strerror(errno));
	cr_assert_eq(listen(lfd, 1), 0);
	xt_g.rx_fd = lfd;

	cr_assert_eq(gso_testbed_enter(&xt_g.tb, 0), 0);
	cfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(cfd, 0);
	xt_g.cli_fd = cfd;
	cr_assert_eq(connect(cfd, (struct sockaddr *)&ss, len), 0, "connect: %s", strerror(errno));
	xt_g.tcp_fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	cr_assert_geq(xt_g.tcp_fd, 0);
	cr_assert_eq(getsockname(cfd, (struct sockaddr *)&local, &llen), 0);
	*sport = ntohs(v6 ? ((struct sockaddr_in6 *)&local)->sin6_port : ((struct sockaddr_in *)&local)->sin_port);
	/* From here the kernel client stays silent; we speak for it. */
	cr_assert_eq(setsockopt(cfd, IPPROTO_TCP, TCP_REPAIR, &one, sizeof(one)), 0, "TCP_REPAIR: %s",
		     strerror(errno));
	*snd_nxt = queue_seq(cfd, TCP_SEND_QUEUE);
	*rcv_nxt = queue_seq(cfd, TCP_RECV_QUEUE);
}

/* Read exactly n bytes from the accepted connection on side b. */
static void recv_all(uint8_t *out, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = recv(xt_g.tcp_fd, out + got, n - got, 0);
		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		cr_assert(r < 0 && errno == EAGAIN, "recv: %zd (%s) after %zu of %zu bytes", r, strerror(errno), got, n);
		cr_assert(xt_wait(xt_g.tcp_fd, XT_WAIT_MS), "stream stalled at %zu of %zu bytes", got, n);
	}
}

struct tcp_case {
	char name[48];
	bool v6;
	uint32_t xflags;
	uint32_t mss;
	uint32_t len;
};

ParameterizedTestParameters(xsk_tcp, stream)
{
	static struct tcp_case c[] = {
		{ "v4, checksum metadata, multi-buffer", false, 0, 1448, 30000 },
		{ "v4, software checksums, multi-buffer", false, GSO_XSK_F_NO_CSUM, 1448, 30000 },
		{ "v4, software checksums, copied frames", false, GSO_XSK_F_NO_CSUM | GSO_XSK_F_NO_SG, 1000, 29999 },
		{ "v4, kernel-finished checksums", false, GSO_XSK_F_KERNEL_CSUM, 1448, 30000 },
		{ "v6, checksum metadata, multi-buffer", true, 0, 1428, 30000 },
		{ "v6, software checksums, copied frames", true, GSO_XSK_F_NO_CSUM | GSO_XSK_F_NO_SG, 1200, 25001 },
	};
	return cr_make_param_array(struct tcp_case, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct tcp_case *c, xsk_tcp, stream)
{
	static uint8_t got[40000];
	uint32_t snd_nxt, rcv_nxt;
	uint16_t sport;
	uint64_t rng = 77 + c->len;
	struct gso_buf buf;

	gso_test_require_root();
	cr_log_info("case: %s", c->name);
	xt_bed(0);
	connect_pair(c->v6, &snd_nxt, &rcv_nxt, &sport);
	xt_tmpl(c->v6, GSO_L4_TCP, snd_nxt, rcv_nxt, sport, XT_PORT_RX);
	GSO_OPTS(gso_xsk_opts, o, .flags = c->xflags);
	xt_open(&o);
	cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, 3 * c->len, &buf), 0);
	gso_test_fill_random(buf.data, 3 * c->len, &rng);

	/* Three super-segments in a row, each read before the next (stays inside b's window). */
	for (uint32_t k = 0; k < 3; k++) {
		cr_assert_eq(gso_tmpl_set_tcp_seq(&xt_g.tmpl, snd_nxt + k * c->len), 0);
		struct gso_tx tx = { .tmpl = &xt_g.tmpl, .buf = &buf, .off = k * c->len, .len = c->len, .mss = c->mss };
		int r = gso_dev__submit(xt_g.dev, &tx, 1);
		cr_assert_eq(r, 1, "super-segment %u: %d (%s)", k, r, strerror(-r));
		recv_all(got, c->len);
		cr_assert_eq(memcmp(got, buf.data + k * c->len, c->len), 0, "super-segment %u: stream bytes differ", k);
		/* The ACK covered it: release that part of the buffer. */
		cr_assert_geq(gso_dev__buf_release(xt_g.dev, &buf, (k + 1) * c->len), 0);
	}
	xt_drain();
	struct gso_dev_stats st = xt_stats();
	cr_assert_eq(st.tx_super, 3);
	cr_assert_eq(st.kernel_invalid, 0);
	xt_check_accounting();
	gso_dev__buf_free(xt_g.dev, &buf);
	gso_dev__close(xt_g.dev);
	st = xt_stats();
	cr_assert_eq(st.chunks_free, st.chunks_total);
}
