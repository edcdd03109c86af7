/*
 * The virtio_net_hdr backend on a TAP: super-segments written to the TAP
 * (with their virtio_net_hdr, not segmented by us) are received by the
 * kernel as if they had arrived on the wire, and reach ordinary kernel
 * sockets behind it: UDP (IPv4, IPv6: the datagrams of a UDP_L4
 * super-segment) and TCP (a connection whose handshake we play by hand,
 * then one TSO super-segment of data).  The TAP lives in a namespace the
 * test creates (side b of a test-bed; side a is unused).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <gso/csum.h>
#include <gso/offload.h>
#include <gso/tmpl.h>
#include <gso/dev.h>
#include <gso/vnet.h>

#include "gso_test.h"

#define TAP "gtap0"

static const uint8_t peer_mac[6] = { 0x02, 0x78, 0x00, 0x00, 0x00, 0x02 };
static struct nsbed tb;
static struct gso_dev *dev;
static uint8_t tap_mac[6];
static int sock = -1, lsock = -1;

static void fini(void)
{
	gso_dev__destroy(dev);
	dev = NULL;
	if (sock >= 0)
		close(sock);
	if (lsock >= 0)
		close(lsock);
	sock = lsock = -1;
	nsbed_destroy(&tb);
}

static void setup(void)
{
	struct ifreq ifr;
	int err, s;

	gso_test_require_root();
	err = gso_testbed_create(&tb);
	cr_assert_eq(err, 0, "test-bed: %s", strerror(-err));
	cr_assert_eq(nsbed_enter(&tb, 1), 0);
	err = gso_vnet__create_tap(&dev, TAP, NULL);
	cr_assert_eq(err, 0, "gso_vnet__create_tap: %s", strerror(-err));
	cr_assert_eq(nsbed_sh(&tb, 1,
			      "ip link set " TAP " up && ip addr add 10.78.0.1/24 dev " TAP " && "
			      "ip -6 addr add fd78::1/64 dev " TAP " nodad && "
			      "ip neigh replace 10.78.0.2 lladdr 02:78:00:00:00:02 dev " TAP " nud permanent && "
			      "ip -6 neigh replace fd78::2 lladdr 02:78:00:00:00:02 dev " TAP " nud permanent"),
		     0, "TAP addresses");
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(s, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), TAP);
	cr_assert_eq(ioctl(s, SIOCGIFHWADDR, &ifr), 0);
	memcpy(tap_mac, ifr.ifr_hwaddr.sa_data, 6);
	close(s);
}

/* A template from the peer behind the TAP to the TAP's own address. */
static void peer_tmpl(struct gso_tmpl *t, int l3, int l4, uint16_t sport, uint16_t dport, uint32_t seq,
		      uint32_t ack)
{
	GSO_OPTS(gso_tmpl_fields, f, .l3 = (uint8_t)l3, .l4 = (uint8_t)l4, .sport = sport,
		 .dport = dport);
	int err;

	memcpy(f.eth_dst, tap_mac, 6);
	memcpy(f.eth_src, peer_mac, 6);
	if (l3 == GSO_L3_IPV4) {
		inet_pton(AF_INET, "10.78.0.2", f.saddr);
		inet_pton(AF_INET, "10.78.0.1", f.daddr);
		f.df = true;
		f.ip_id = 7;
	} else {
		inet_pton(AF_INET6, "fd78::2", f.saddr);
		inet_pton(AF_INET6, "fd78::1", f.daddr);
	}
	if (l4 == GSO_L4_TCP) {
		f.seq = seq;
		f.ack = ack;
		f.tcp_flags = GSO_TCP_ACK;
		f.window = 64000;
	}
	err = gso_tmpl__build(t, &f);
	cr_assert_eq(err, 0, "gso_tmpl__build: %s", strerror(-err));
}

static void pattern(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed + (i >> 8));
}

static void udp_case(int l3)
{
	enum { N = 10, DLEN = 1200 };
	static uint8_t pay[N * DLEN], got[4096];
	struct gso_tso_stats st = { .sz = sizeof(st) };
	struct gso_tmpl t;
	struct gso_tx tx = { 0 };
	int r, seen = 0, bad = 0;

	setup();
	if (l3 == GSO_L3_IPV4) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9000) };

		inet_pton(AF_INET, "10.78.0.1", &a.sin_addr);
		sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		cr_assert_eq(bind(sock, (struct sockaddr *)&a, sizeof(a)), 0, "bind: %s", strerror(errno));
	} else {
		struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(9000) };

		inet_pton(AF_INET6, "fd78::1", &a.sin6_addr);
		sock = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		cr_assert_eq(bind(sock, (struct sockaddr *)&a, sizeof(a)), 0, "bind: %s", strerror(errno));
	}
	peer_tmpl(&t, l3, GSO_L4_UDP, 5000, 9000, 0, 0);
	for (int d = 0; d < N; d++)
		pattern(pay + d * DLEN, DLEN, (unsigned)d);
	tx.tmpl = &t;
	tx.data = pay;
	tx.len = sizeof(pay);
	tx.mss = DLEN;
	r = gso_dev__submit(dev, &tx, 1);
	cr_assert_eq(r, 1, "submit: %s", strerror(-r));
	while (seen < N) {
		struct pollfd p = { .fd = sock, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 2000) <= 0)
			break;
		n = recv(sock, got, sizeof(got), MSG_DONTWAIT);
		if (n < 0)
			continue;
		bad += n != DLEN || memcmp(got, pay + seen * DLEN, DLEN);
		seen++;
	}
	cr_expect_eq(seen, N, "datagrams: %d of %d", seen, N);
	cr_expect_eq(bad, 0, "%d datagrams differ (or arrived out of order)", bad);
	cr_assert_eq(gso_tso__stats(dev, &st), 0);
	cr_expect_eq(st.offloaded, 1, "the super-segment went to the TAP whole");
}

Test(vnet_tap, udp4_super_segment_reaches_socket, .fini = fini, .timeout = 30)
{
	udp_case(GSO_L3_IPV4);
}

Test(vnet_tap, udp6_super_segment_reaches_socket, .fini = fini, .timeout = 30)
{
	udp_case(GSO_L3_IPV6);
}

/* The SYN: an ACK template with SYN instead of ACK, checksum left to the kernel. */
static void send_syn(uint32_t isn)
{
	struct gso_vnet_hdr vh = { .flags = GSO_VNET_HDR_F_NEEDS_CSUM, .csum_start = 34,
				   .csum_offset = 16 };
	uint8_t f[54];
	struct gso_tmpl t;
	uint16_t v;
	int err;

	peer_tmpl(&t, GSO_L3_IPV4, GSO_L4_TCP, 5001, 9001, isn, 0);
	memcpy(f, t.hdr, 54);
	f[34 + 13] = GSO_TCP_SYN;
	memset(f + 34 + 8, 0, 4);
	f[14 + 2] = 0, f[14 + 3] = 40;
	memset(f + 14 + 10, 0, 2);
	v = gso_csum_finish(gso_csum_partial(f + 14, 20, 0));
	memcpy(f + 14 + 10, &v, 2);
	v = gso_csum_fold(gso_csum_pseudo4(f + 14 + 12, f + 14 + 16, 6, 20));
	memcpy(f + 34 + 16, &v, 2);
	err = gso_vnet__send_frame(dev, &vh, f, sizeof(f));
	cr_assert_eq(err, 0, "SYN: %s", strerror(-err));
}

/* Read what the kernel sends into the TAP until its SYN-ACK; returns its sequence number. */
static uint32_t read_synack(void)
{
	int fd = gso_vnet__fd(dev);
	uint8_t b[GSO_VNET_HDR_LEN + 2048];

	cr_assert_geq(fd, 0);
	for (int tries = 0; tries < 50; tries++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		const uint8_t *f = b + GSO_VNET_HDR_LEN, *th;
		ssize_t n;

		if (poll(&p, 1, 2000) <= 0)
			break;
		n = read(fd, b, sizeof(b));
		if (n < GSO_VNET_HDR_LEN + 54 || f[12] != 0x08 || f[13] != 0x00 || f[14 + 9] != 6)
			continue;
		th = f + 14 + (f[14] & 0xf) * 4;
		if ((th[0] << 8 | th[1]) != 9001 || th[13] != (GSO_TCP_SYN | GSO_TCP_ACK))
			continue;
		return (uint32_t)th[4] << 24 | (uint32_t)th[5] << 16 | (uint32_t)th[6] << 8 | th[7];
	}
	cr_assert_fail("no SYN-ACK came out of the TAP");
	return 0;
}

Test(vnet_tap, tcp_super_segment_reaches_accepted_socket, .fini = fini, .timeout = 30)
{
	enum { LEN = 20000, MSS = 1448 };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9001) };
	static uint8_t pay[LEN], got[LEN];
	struct gso_tso_stats st = { .sz = sizeof(st) };
	const uint32_t isn = 0x11223344;
	struct gso_tmpl t;
	struct gso_tx tx = { 0 };
	uint32_t srv;
	size_t have = 0;
	int one = 1, r;

	setup();
	inet_pton(AF_INET, "10.78.0.1", &a.sin_addr);
	lsock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(lsock, 0);
	setsockopt(lsock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	cr_assert_eq(bind(lsock, (struct sockaddr *)&a, sizeof(a)), 0, "bind: %s", strerror(errno));
	cr_assert_eq(listen(lsock, 1), 0);

	send_syn(isn);
	srv = read_synack();
	peer_tmpl(&t, GSO_L3_IPV4, GSO_L4_TCP, 5001, 9001, isn + 1, srv + 1);
	tx.tmpl = &t;
	tx.mss = MSS;
	r = gso_dev__submit(dev, &tx, 1); /* the handshake's ACK: a header-only packet */
	cr_assert_eq(r, 1, "ACK: %s", strerror(-r));
	sock = accept(lsock, NULL, NULL);
	cr_assert_geq(sock, 0, "accept: %s", strerror(errno));

	pattern(pay, LEN, 3);
	cr_assert_eq(gso_tmpl__set_tcp_flags(&t, GSO_TCP_ACK | GSO_TCP_PSH), 0);
	tx.data = pay;
	tx.len = LEN;
	r = gso_dev__submit(dev, &tx, 1);
	cr_assert_eq(r, 1, "data: %s", strerror(-r));
	while (have < LEN) {
		struct pollfd p = { .fd = sock, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 2000) <= 0)
			break;
		n = recv(sock, got + have, LEN - have, MSG_DONTWAIT);
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	cr_expect_eq(have, LEN, "received %zu of %d bytes", have, LEN);
	cr_expect(!memcmp(got, pay, have), "received bytes differ");
	cr_assert_eq(gso_tso__stats(dev, &st), 0);
	cr_expect_eq(st.offloaded, 1);
	cr_expect_eq(st.single, 1);
}
