/*
 * Frames forged on a live TCP connection, from the peer's side of a veth
 * (test_sender_inject.c): an AF_PACKET socket on the receiver's interface
 * sniffs one of the receiver's own outgoing segments, whose sequence
 * number is the sender's RCV.NXT and whose ACK is near the sender's
 * SND.UNA, and the test builds variants of it (another seq/ack/flags, a
 * VLAN tag, another destination MAC, bad checksums, a cut IP header) that
 * the same socket sends to the sender.  Checksums are recomputed in full
 * (the sniffed frame may carry a partial one) unless a variant breaks them
 * on purpose.  Ethernet, optional 802.1Q tag, IPv4 or IPv6 (no extension
 * headers), TCP.
 */
#ifndef TEST_INJECT_UTIL_H
#define TEST_INJECT_UTIL_H

#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>

#include <gso/csum.h>

#define INJ_MAX 256

struct inj_frame {
	uint8_t b[INJ_MAX];
	uint32_t len;
	uint32_t l3, l4; /* offsets of the IP and TCP headers */
	bool v6;
};

struct inj_sock {
	int fd, ifindex;
};

static inline uint16_t inj_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t inj_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void inj_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void inj_put32(uint8_t *p, uint32_t v)
{
	inj_put16(p, (uint16_t)(v >> 16));
	inj_put16(p + 2, (uint16_t)v);
}

/* A packet socket on `ifname` of the calling thread's namespace, seeing every frame. */
static inline struct inj_sock inj_open(const char *ifname)
{
	struct inj_sock s = { .fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL)),
			      .ifindex = (int)if_nametoindex(ifname) };
	struct sockaddr_ll sa = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };

	cr_assert_geq(s.fd, 0, "packet socket: %s", strerror(errno));
	cr_assert_gt(s.ifindex, 0, "%s: %s", ifname, strerror(errno));
	sa.sll_ifindex = s.ifindex;
	cr_assert_eq(bind(s.fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "bind: %s", strerror(errno));
	return s;
}

/* Find the IP and TCP headers; false if the frame is not TCP over IPv4/IPv6. */
static inline bool inj_locate(struct inj_frame *f)
{
	uint32_t off = 14;
	uint16_t et;

	if (f->len < 14)
		return false;
	et = inj_get16(f->b + 12);
	if (et == ETH_P_8021Q) {
		et = inj_get16(f->b + 16);
		off = 18;
	}
	f->l3 = off;
	f->v6 = et == ETH_P_IPV6;
	if (et == ETH_P_IP && f->len >= off + 20 && f->b[off + 9] == IPPROTO_TCP)
		f->l4 = off + (f->b[off] & 15) * 4u;
	else if (f->v6 && f->len >= off + 40 && f->b[off + 6] == IPPROTO_TCP)
		f->l4 = off + 40;
	else
		return false;
	return f->len >= f->l4 + 20;
}

/*
 * Wait up to `ms` for the next TCP segment that leaves this interface from
 * port `sport` (the receiver's ACKs) and keep its headers (payload cut
 * off) in *out.  Frames queued on the socket before the call are skipped.
 * False if none came (the connection is over).
 */
static inline bool inj_sniff(const struct inj_sock *s, uint16_t sport, int ms, struct inj_frame *out)
{
	struct inj_frame f;
	struct timespec t0, t;

	/* What queued up since the last call is old: its timestamps would fail PAWS at the sender. */
	while (recv(s->fd, f.b, sizeof(f.b), MSG_DONTWAIT | MSG_TRUNC) > 0)
		;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		struct pollfd pf = { .fd = s->fd, .events = POLLIN };
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= ms)
			return false;
		if (poll(&pf, 1, 50) != 1)
			continue;
		memset(&f, 0, sizeof(f));
		n = recvfrom(s->fd, f.b, sizeof(f.b), MSG_TRUNC, (struct sockaddr *)&from, &fl);
		if (n <= 0 || from.sll_pkttype != PACKET_OUTGOING)
			continue;
		f.len = (uint32_t)(n < INJ_MAX ? n : INJ_MAX);
		if (!inj_locate(&f) || inj_get16(f.b + f.l4) != sport)
			continue;
		f.len = f.l4 + (f.b[f.l4 + 12] >> 4) * 4u;
		*out = f;
		return true;
	}
}

static inline uint32_t inj_seq(const struct inj_frame *f)
{
	return inj_get32(f->b + f->l4 + 4);
}

static inline uint32_t inj_ack(const struct inj_frame *f)
{
	return inj_get32(f->b + f->l4 + 8);
}

/* IP lengths, the IPv4 header checksum and the full TCP checksum, for the frame as it is now. */
static inline void inj_fix(struct inj_frame *f)
{
	uint32_t l4len = f->len - f->l4;
	uint8_t *ip = f->b + f->l3, *th = f->b + f->l4;
	uint32_t sum;
	uint16_t c;

	if (f->v6) {
		inj_put16(ip + 4, (uint16_t)l4len);
		sum = gso_csum_pseudo6(ip + 8, ip + 24, IPPROTO_TCP, l4len);
	} else {
		inj_put16(ip + 2, (uint16_t)(f->len - f->l3));
		memset(ip + 10, 0, 2);
		c = gso_csum_finish(gso_csum_partial(ip, f->l4 - f->l3, 0));
		memcpy(ip + 10, &c, 2);
		sum = gso_csum_pseudo4(ip + 12, ip + 16, IPPROTO_TCP, l4len);
	}
	memset(th + 16, 0, 2);
	c = gso_csum_finish(gso_csum_partial(th, l4len, sum));
	memcpy(th + 16, &c, 2);
}

/* The sniffed segment with another seq, ack and flags (TCP flags byte), checksums right. */
static inline struct inj_frame inj_tcp(const struct inj_frame *base, uint32_t seq, uint32_t ack, uint8_t flags)
{
	struct inj_frame f = *base;

	inj_put32(f.b + f.l4 + 4, seq);
	inj_put32(f.b + f.l4 + 8, ack);
	f.b[f.l4 + 13] = flags;
	inj_fix(&f);
	return f;
}

/* Insert an 802.1Q (tpid 0x8100) or 802.1ad (0x88a8) tag with VLAN `vid` after the MAC addresses. */
static inline void inj_vlan(struct inj_frame *f, uint16_t tpid, uint16_t vid)
{
	cr_assert_leq(f->len + 4, INJ_MAX);
	memmove(f->b + 16, f->b + 12, f->len - 12);
	inj_put16(f->b + 12, tpid);
	inj_put16(f->b + 14, vid & 0xfff);
	f->len += 4;
	f->l3 += 4;
	f->l4 += 4;
}

static inline void inj_dst_mac(struct inj_frame *f, const uint8_t mac[6])
{
	memcpy(f->b, mac, 6);
}

/* Spoil the IPv4 header checksum or the TCP checksum (whatever they were: never right afterwards). */
static inline void inj_bad_ip_csum(struct inj_frame *f)
{
	f->b[f->l3 + 10] ^= 0x5a;
}

static inline void inj_bad_tcp_csum(struct inj_frame *f)
{
	f->b[f->l4 + 16] ^= 0xa5;
}

static inline void inj_send(const struct inj_sock *s, const struct inj_frame *f)
{
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_ifindex = s->ifindex, .sll_halen = 6 };
	uint8_t buf[INJ_MAX];
	uint32_t len = f->len;

	/* Ethernet's minimum: padding the receiver must ignore (the IP length says where the packet ends). */
	memcpy(buf, f->b, len);
	if (len < 60) {
		memset(buf + len, 0, 60 - len);
		len = 60;
	}
	memcpy(to.sll_addr, f->b, 6);
	cr_assert_eq(sendto(s->fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len, "inject: %s",
		     strerror(errno));
}

#endif
