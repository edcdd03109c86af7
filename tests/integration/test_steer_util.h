/*
 * Shared by the steering integration tests (test_steer*.c): a veth
 * test-bed (test_xsk_util.h) with a receiving AF_XDP device on side a and
 * the steering program attached there; senders are kernel sockets on side
 * b.  sg_fini() detaches the program and closes every socket, even after a
 * failed assertion.
 */
#ifndef TEST_STEER_UTIL_H
#define TEST_STEER_UTIL_H

#include <stdlib.h>

#include <gso/steer.h>

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

static inline void sg_fini(void)
{
	/* Detach in the namespace it was attached in. */
	if (sg.steer && nsbed_enter(&xt_g.tb, 0) == 0)
		gso_steer__destroy(sg.steer);
	sg.steer = NULL;
	for (int i = 0; i < sg.nfds; i++)
		close(sg.fds[i]);
	sg.nfds = 0;
	xt_fini();
}

static inline int keep_fd(int fd)
{
	cr_assert_geq(fd, 0, "socket: %s", strerror(errno));
	cr_assert_lt(sg.nfds, MAX_FDS);
	sg.fds[sg.nfds++] = fd;
	return fd;
}

static inline const char *addr_of(int side, bool v6)
{
	static const char *a[2][2] = { { "10.77.0.1", "fd77::1" }, { "10.77.0.2", "fd77::2" } };
	return a[side][v6];
}

static inline void make_sa(int side, bool v6, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
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
static inline int udp_on(int side, bool v6, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;

	cr_assert_eq(nsbed_enter(&xt_g.tb, side), 0);
	fd = keep_fd(socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
	make_sa(side, v6, port, &ss, &len);
	cr_assert_eq(bind(fd, (struct sockaddr *)&ss, len), 0, "bind %s:%u: %s", addr_of(side, v6), port,
		     strerror(errno));
	return fd;
}

/* Datagram i from b's socket to a's port: payload "steer <tag> <i>" padded to 64 bytes. */
static inline void send_udp(int fd, bool v6, uint16_t to_port, const char *tag, int i)
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
static inline bool ping_once(int side, bool v6, uint16_t seq)
{
	struct sockaddr_storage ss;
	socklen_t len;
	uint8_t pkt[64], rep[256];
	uint16_t id = (uint16_t)getpid();
	bool ok = false;
	int fd;

	cr_assert_eq(nsbed_enter(&xt_g.tb, side), 0);
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
static inline unsigned rx_collect(struct gso_rx_pkt *out, unsigned want, int ms)
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
static inline void frame_fields(const struct gso_rx_pkt *p, struct gso_tmpl *t, uint16_t *sport, uint16_t *dport)
{
	cr_assert_eq(gso_tmpl__parse(t, p->data, p->len), 0, "received frame of %u bytes is not TCP/UDP over IP",
		     p->len);
	*sport = (uint16_t)(p->data[t->l4_off] << 8 | p->data[t->l4_off + 1]);
	*dport = (uint16_t)(p->data[t->l4_off + 2] << 8 | p->data[t->l4_off + 3]);
}

/* The registered UDP flow b:B_PORT -> a:A_PORT. */
static inline struct gso_flow udp_flow(bool v6)
{
	struct gso_flow f;

	memset(&f, 0, sizeof(f));
	f.sz = sizeof(f);
	f.l3 = v6 ? GSO_L3_IPV6 : GSO_L3_IPV4;
	f.l4 = GSO_L4_UDP;
	f.sport = B_PORT;
	f.dport = A_PORT;
	inet_pton(v6 ? AF_INET6 : AF_INET, addr_of(1, v6), f.saddr);
	inet_pton(v6 ? AF_INET6 : AF_INET, addr_of(0, v6), f.daddr);
	return f;
}

/* Test-bed, receiving AF_XDP device on side a, steering attached, device added. */
static inline void sg_setup(uint32_t rx_chunks)
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

static inline struct gso_steer_stats steer_stats(void)
{
	GSO_OPTS(gso_steer_stats, ss);
	cr_assert_eq(gso_steer__stats(sg.steer, &ss), 0);
	return ss;
}

/* Every chunk free after releasing and closing (invariant 7). */
static inline void check_teardown(struct gso_rx_pkt *held, unsigned n)
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

#endif
