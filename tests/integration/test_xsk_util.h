/*
 * Shared by the AF_XDP integration tests (test_xsk_*.c): a veth test-bed
 * with the stock Linux stack on side b as the receiver (a UDP socket that
 * the kernel only delivers to when checksums are right) and an AF_PACKET
 * capture on b, and the AF_XDP device on side a.  Everything the test
 * opens is closed in xt_fini(), which Criterion runs even when an
 * assertion fails, so the namespaces never outlive the test.
 */
#ifndef TEST_XSK_UTIL_H
#define TEST_XSK_UTIL_H

#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <gso/gso.h>
#include <gso/dev.h>
#include <gso/xsk.h>

#include "gso_test.h"

#define XT_PORT_RX 9000
#define XT_PORT_TX 9001
#define XT_WAIT_MS 2000 /* a frame not there after this was not delivered */

struct xt {
	struct nsbed tb;
	int rx_fd;   /* UDP or TCP listening socket on side b */
	int cap_fd;  /* AF_PACKET on side b's veth, or -1 */
	int tcp_fd;  /* accepted TCP connection on side b, or -1 */
	int cli_fd;  /* TCP client on side a (repair mode), or -1 */
	struct gso_dev *dev;
	struct gso_tmpl tmpl;
	bool v6;
};

static struct xt xt_g = { .rx_fd = -1, .cap_fd = -1, .tcp_fd = -1, .cli_fd = -1 };

static inline void xt_fini(void)
{
	gso_dev__destroy(xt_g.dev);
	xt_g.dev = NULL;
	if (xt_g.rx_fd >= 0)
		close(xt_g.rx_fd);
	if (xt_g.cap_fd >= 0)
		close(xt_g.cap_fd);
	if (xt_g.tcp_fd >= 0)
		close(xt_g.tcp_fd);
	if (xt_g.cli_fd >= 0)
		close(xt_g.cli_fd);
	xt_g.rx_fd = xt_g.cap_fd = xt_g.tcp_fd = xt_g.cli_fd = -1;
	nsbed_destroy(&xt_g.tb);
}

static inline uint64_t xt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Create the test-bed; `mtu` 0 keeps 1500. */
static inline void xt_bed(int mtu)
{
	int err = gso_testbed_create(&xt_g.tb);

	cr_assert_eq(err, 0, "test-bed: %s", strerror(-err));
	if (mtu)
		for (int s = 0; s < 2; s++)
			cr_assert_eq(nsbed_sh(&xt_g.tb, s, "ip link set %s mtu %d", xt_g.tb.ifname[s], mtu), 0);
}

/* A UDP receiver on side b with a big buffer, so nothing is lost to it. */
static inline void xt_udp_rx(bool v6)
{
	int big = 16 << 20, fd;

	cr_assert_eq(nsbed_enter(&xt_g.tb, 1), 0);
	fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	cr_assert_geq(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	if (v6) {
		struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(XT_PORT_RX) };
		inet_pton(AF_INET6, "fd77::2", &a.sin6_addr);
		cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0, "bind: %s", strerror(errno));
	} else {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(XT_PORT_RX) };
		inet_pton(AF_INET, "10.77.0.2", &a.sin_addr);
		cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0, "bind: %s", strerror(errno));
	}
	xt_g.rx_fd = fd;
	xt_g.v6 = v6;
}

/* An AF_PACKET capture of everything arriving on side b's veth. */
static inline void xt_capture(void)
{
	int big = 16 << 20, fd;
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };

	cr_assert_eq(nsbed_enter(&xt_g.tb, 1), 0);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(ETH_P_ALL));
	cr_assert_geq(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	ll.sll_ifindex = xt_g.tb.ifindex[1];
	cr_assert_eq(bind(fd, (struct sockaddr *)&ll, sizeof(ll)), 0);
	xt_g.cap_fd = fd;
}

/* Template a -> b for UDP (or TCP with seq/ack), IPv4 or IPv6. */
static inline void xt_tmpl(bool v6, uint8_t l4, uint32_t seq, uint32_t ack, uint16_t sport, uint16_t dport)
{
	GSO_OPTS(gso_tmpl_fields, f, .l3 = v6 ? GSO_L3_IPV6 : GSO_L3_IPV4, .l4 = l4,
		 .sport = sport, .dport = dport);
	if (!v6) {
		f.df = true;
		f.ip_id = 0x1000;
	}
	if (l4 == GSO_L4_TCP) {
		f.seq = seq;
		f.ack = ack;
		f.tcp_flags = GSO_TCP_ACK;
		f.window = 1024;
	}
	memcpy(f.eth_dst, xt_g.tb.mac[1], 6);
	memcpy(f.eth_src, xt_g.tb.mac[0], 6);
	if (v6) {
		inet_pton(AF_INET6, "fd77::1", f.saddr);
		inet_pton(AF_INET6, "fd77::2", f.daddr);
	} else {
		inet_pton(AF_INET, "10.77.0.1", f.saddr);
		inet_pton(AF_INET, "10.77.0.2", f.daddr);
	}
	cr_assert_eq(gso_tmpl__build(&xt_g.tmpl, &f), 0);
}

/* Open the AF_XDP device on side a (copy mode unless the options say otherwise). */
static inline void xt_open(struct gso_xsk_opts *o)
{
	int err;

	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);
	if (!o->mode)
		o->mode = GSO_XSK_MODE_COPY;
	err = gso_xsk__create(&xt_g.dev, xt_g.tb.ifindex[0], o);
	cr_assert_eq(err, 0, "gso_xsk__create: %s", strerror(-err));
}

/* Wait until fd is readable; false on timeout. */
static inline bool xt_wait(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/* Receive one datagram on the UDP receiver; -ETIMEDOUT after `ms`. */
static inline ssize_t xt_recv_wait(void *buf, size_t cap, int ms)
{
	ssize_t n = recv(xt_g.rx_fd, buf, cap, 0);

	if (n >= 0 || errno != EAGAIN)
		return n < 0 ? -errno : n;
	if (!xt_wait(xt_g.rx_fd, ms))
		return -ETIMEDOUT;
	n = recv(xt_g.rx_fd, buf, cap, 0);
	return n < 0 ? -errno : n;
}

static inline ssize_t xt_recv(void *buf, size_t cap)
{
	return xt_recv_wait(buf, cap, XT_WAIT_MS);
}

/* Next captured frame that is IPv4/IPv6 to our receiver port; -ETIMEDOUT after XT_WAIT_MS. */
static inline ssize_t xt_cap_next(uint8_t *buf, size_t cap, uint8_t l4)
{
	uint64_t end = xt_now_ms() + XT_WAIT_MS;

	for (;;) {
		ssize_t n = recv(xt_g.cap_fd, buf, cap, 0);
		if (n < 0) {
			int64_t left = (int64_t)(end - xt_now_ms());
			if (errno != EAGAIN)
				return -errno;
			if (left <= 0 || !xt_wait(xt_g.cap_fd, (int)left))
				return -ETIMEDOUT;
			continue;
		}
		struct gso_tmpl t;
		if (gso_tmpl__parse(&t, buf, (size_t)n) || t.l4 != l4)
			continue;
		uint16_t dport = (uint16_t)(buf[t.l4_off + 2] << 8 | buf[t.l4_off + 3]);
		if (dport == XT_PORT_RX)
			return n;
	}
}

/* Does the L4 checksum of a captured frame verify? */
static inline bool xt_l4_csum_ok(const uint8_t *f, size_t len)
{
	struct gso_tmpl t;
	uint32_t l4len, sum;

	if (gso_tmpl__parse(&t, f, len))
		return false;
	if (t.l3 == GSO_L3_IPV4)
		l4len = (uint32_t)(f[t.l3_off + 2] << 8 | f[t.l3_off + 3]) - (t.l4_off - t.l3_off);
	else
		l4len = (uint32_t)(f[t.l3_off + 4] << 8 | f[t.l3_off + 5]);
	if (t.l4_off + l4len > len)
		return false;
	if (t.l3 == GSO_L3_IPV4)
		sum = gso_csum_pseudo4(f + t.l3_off + 12, f + t.l3_off + 16, t.l4, l4len);
	else
		sum = gso_csum_pseudo6(f + t.l3_off + 8, f + t.l3_off + 24, t.l4, l4len);
	sum = gso_csum_partial(f + t.l4_off, l4len, sum);
	return gso_csum_fold(sum) == 0xffff;
}

static inline struct gso_dev_stats xt_stats(void)
{
	GSO_OPTS(gso_dev_stats, st);
	cr_assert_eq(gso_dev__stats(xt_g.dev, &st), 0);
	return st;
}

/* Chunks a buffer of the device spans (its cap plus the headroom, in whole chunks). */
static inline uint32_t xt_buf_chunks(const struct gso_buf *b)
{
	GSO_OPTS(gso_dev_caps, c);
	cr_assert_eq(gso_dev__caps(xt_g.dev, &c), 0);
	return (b->cap + c.buf_headroom) / c.buf_chunk;
}

/* Invariant 7: the four chunk counters add up. */
static inline void xt_check_accounting(void)
{
	struct gso_dev_stats st = xt_stats();

	cr_assert_eq(st.chunks_free + st.chunks_queued + st.chunks_inflight + st.chunks_held, st.chunks_total,
		     "chunks: %u free + %u queued + %u in flight + %u held != %u", st.chunks_free,
		     st.chunks_queued, st.chunks_inflight, st.chunks_held, st.chunks_total);
}

/* Reap until nothing is in flight (bounded). */
static inline void xt_drain(void)
{
	uint64_t end = xt_now_ms() + XT_WAIT_MS;

	for (;;) {
		gso_dev__kick(xt_g.dev);
		gso_dev__reap(xt_g.dev, 0);
		struct gso_dev_stats st = xt_stats();
		if (!st.inflight_descs)
			return;
		cr_assert_lt(xt_now_ms(), end, "%u descriptors still in flight after %d ms", st.inflight_descs,
			     XT_WAIT_MS);
		usleep(1000);
	}
}

/* ---- a real TCP connection (test_xsk_tcp.c, test_steer.c) ---- */

#ifndef TCP_REPAIR
#define TCP_REPAIR 19
#define TCP_REPAIR_QUEUE 20
#define TCP_QUEUE_SEQ 21
#endif
#ifndef TCP_RECV_QUEUE
#define TCP_RECV_QUEUE 1
#define TCP_SEND_QUEUE 2
#endif

static inline void xt_sockaddr_b(bool v6, struct sockaddr_storage *ss, socklen_t *len)
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

static inline uint32_t xt_queue_seq(int fd, int q)
{
	uint32_t seq = 0;
	socklen_t l = sizeof(seq);

	cr_assert_eq(setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)), 0);
	cr_assert_eq(getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, &seq, &l), 0);
	return seq;
}

/*
 * An established connection from a kernel client on side a to a listener
 * on side b (XT_PORT_RX); the client is then put in repair mode (silent)
 * so that the AF_XDP device can speak for it.  Returns the client's
 * snd_nxt, rcv_nxt and source port.  Timestamps are off on side a.
 */
static inline void xt_tcp_connect(bool v6, uint32_t *snd_nxt, uint32_t *rcv_nxt, uint16_t *sport)
{
	struct sockaddr_storage ss, local;
	socklen_t len, llen = sizeof(local);
	int one = 1, big = 8 << 20, lfd, cfd;

	cr_assert_eq(nsbed_sh(&xt_g.tb, 0, "sysctl -qw net.ipv4.tcp_timestamps=0"), 0);
	xt_sockaddr_b(v6, &ss, &len);
	cr_assert_eq(nsbed_enter(&xt_g.tb, 1), 0);
	lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(lfd, 0);
	setsockopt(lfd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	cr_assert_eq(bind(lfd, (struct sockaddr *)&ss, len), 0, "bind: %s", strerror(errno));
	cr_assert_eq(listen(lfd, 1), 0);
	xt_g.rx_fd = lfd;

	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);
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
	*snd_nxt = xt_queue_seq(cfd, TCP_SEND_QUEUE);
	*rcv_nxt = xt_queue_seq(cfd, TCP_RECV_QUEUE);
}

/* Read exactly n bytes from the accepted connection on side b. */
static inline void xt_tcp_recv_all(uint8_t *out, size_t n)
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

#endif
