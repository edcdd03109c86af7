/*
 * The e1000 model on a veth, frames put on the wire through AF_XDP (copy
 * mode), against the kernel's own software GSO of the same super-segments
 * (virtio_net_hdr backend on a `tso off gso on tx off` veth), both
 * captured on the peer: byte for byte equal, except a TCP checksum that
 * computes to 0 (kernel GSO: 0x0000, e1000: 0xffff).  Also: IPv6 falls
 * back to software segmentation with device checksums and still matches,
 * and the device reports its own CPU time.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>

#include <gso/tmpl.h>
#include <gso/dev.h>
#include <gso/xsk.h>
#include <gso/vnet.h>
#include <gso/e1000.h>

#include "gso_test.h"

#define RXBUF (1 << 17)
#define MAXF 128

static const uint8_t other_mac[6] = { 0x02, 0x77, 0x00, 0x00, 0x00, 0xbb };
static const uint8_t saddr4[4] = { 198, 18, 0, 1 }, daddr4[4] = { 198, 19, 0, 2 };
static const uint8_t saddr6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x77, [15] = 1 };
static const uint8_t daddr6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x77, [15] = 2 };

static struct nsbed tb;
static struct gso_dev *e1k, *vnet;
static int cap = -1;

struct frames {
	unsigned n;
	uint32_t len[MAXF];
	uint8_t *data[MAXF];
};

static struct frames kern, dev;

static void frames_free(struct frames *f)
{
	for (unsigned i = 0; i < f->n; i++)
		free(f->data[i]);
	f->n = 0;
}

static void fini(void)
{
	gso_dev__destroy(e1k);
	gso_dev__destroy(vnet);
	e1k = vnet = NULL;
	if (cap >= 0)
		close(cap);
	cap = -1;
	frames_free(&kern);
	frames_free(&dev);
	nsbed_destroy(&tb);
}

static void setup(void)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int rcv = 32 << 20, err;

	gso_test_require_root();
	err = gso_testbed_create(&tb);
	cr_assert_eq(err, 0, "test-bed: %s", strerror(-err));
	cr_assert_eq(nsbed_sh(&tb, 0, "ethtool -K %s tso off gso on tx off >/dev/null 2>&1",
			      tb.ifname[0]), 0);
	nsbed_sh(&tb, 1, "ethtool -K %s gro off >/dev/null 2>&1", tb.ifname[1]);
	cr_assert_eq(nsbed_enter(&tb, 1), 0);
	cap = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	cr_assert_geq(cap, 0);
	if (setsockopt(cap, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)))
		setsockopt(cap, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	ll.sll_ifindex = tb.ifindex[1];
	cr_assert_eq(bind(cap, (struct sockaddr *)&ll, sizeof(ll)), 0);
	cr_assert_eq(nsbed_enter(&tb, 0), 0);
	{
		GSO_OPTS(gso_e1000_opts, o, .ring_size = 1024, .nchunks = 2048, .wire_frames = 512,
			 .xsk_mode = GSO_XSK_MODE_COPY);
		err = gso_e1000__create(&e1k, tb.ifindex[0], &o);
	}
	cr_assert_eq(err, 0, "gso_e1000__create: %s", strerror(-err));
	err = gso_vnet__create(&vnet, tb.ifindex[0], NULL);
	cr_assert_eq(err, 0, "gso_vnet__create: %s", strerror(-err));
}

static bool ours(const uint8_t *f, size_t n, uint16_t sport)
{
	uint16_t type = (uint16_t)(f[12] << 8 | f[13]);
	const uint8_t *l4;

	if (n < 14 + 20 + 8)
		return false;
	if (type == ETH_P_IP && !memcmp(f + 26, saddr4, 4))
		l4 = f + 14 + (f[14] & 0xf) * 4;
	else if (type == ETH_P_IPV6 && n >= 14 + 48 && !memcmp(f + 22, saddr6, 16))
		l4 = f + 54;
	else
		return false;
	return l4 + 2 <= f + n && (uint16_t)(l4[0] << 8 | l4[1]) == sport;
}

/* Capture `want` frames of sport into f. */
static void capture(struct frames *f, uint16_t sport, unsigned want)
{
	static uint8_t buf[RXBUF];

	while (f->n < want) {
		struct pollfd p = { .fd = cap, .events = POLLIN };
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t n;

		cr_assert_gt(poll(&p, 1, 1000), 0, "only %u of %u frames arrived", f->n, want);
		n = recvfrom(cap, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (n <= 0 || from.sll_pkttype == PACKET_OUTGOING || !ours(buf, (size_t)n, sport))
			continue;
		cr_assert_lt(f->n, MAXF);
		f->data[f->n] = malloc((size_t)n);
		memcpy(f->data[f->n], buf, (size_t)n);
		f->len[f->n++] = (uint32_t)n;
	}
}

struct ecase {
	const char *what;
	uint8_t l3, l4;
	uint32_t mss, len;
	uint8_t tflags;
};

static void build(struct gso_tmpl *t, const struct ecase *c, uint16_t sport)
{
	GSO_OPTS(gso_tmpl_fields, f, .l3 = c->l3, .l4 = c->l4, .sport = sport, .dport = 9);

	memcpy(f.eth_dst, other_mac, 6);
	memcpy(f.eth_src, tb.mac[0], 6);
	memcpy(f.saddr, c->l3 == GSO_L3_IPV4 ? saddr4 : saddr6, c->l3 == GSO_L3_IPV4 ? 4 : 16);
	memcpy(f.daddr, c->l3 == GSO_L3_IPV4 ? daddr4 : daddr6, c->l3 == GSO_L3_IPV4 ? 4 : 16);
	if (c->l3 == GSO_L3_IPV4) {
		f.df = true;
		f.ip_id = 0xfffd;
	}
	if (c->l4 == GSO_L4_TCP) {
		f.seq = 0xffffff00u;
		f.ack = 5;
		f.window = 1000;
		f.tcp_flags = GSO_TCP_ACK | c->tflags;
	}
	cr_assert_eq(gso_tmpl__build(t, &f), 0);
}

static void send_on(struct gso_dev *d, const struct gso_tmpl *t, const uint8_t *pay, uint32_t len,
		    uint32_t mss)
{
	struct gso_tx tx = { .tmpl = t, .data = pay, .len = len, .mss = mss };
	int r;

	while ((r = gso_dev__submit(d, &tx, 1)) == -EAGAIN)
		usleep(100);
	cr_assert_eq(r, 1, "submit on %s: %s", gso_dev__name(d), strerror(-r));
}

static void compare(const struct ecase *c, const struct gso_tmpl *t)
{
	unsigned ck = t->l4_off + (c->l4 == GSO_L4_TCP ? 16u : 6u);

	cr_assert_eq(dev.n, kern.n);
	for (unsigned i = 0; i < kern.n; i++) {
		uint8_t *k = kern.data[i], *g = dev.data[i];

		cr_assert_eq(dev.len[i], kern.len[i], "%s: frame %u length", c->what, i);
		if (c->l4 == GSO_L4_TCP && kern.n > 1 && !k[ck] && !k[ck + 1] && g[ck] == 0xff &&
		    g[ck + 1] == 0xff)
			k[ck] = k[ck + 1] = 0xff;
		cr_expect(!memcmp(k, g, kern.len[i]), "%s: frame %u of %u differs", c->what, i, kern.n);
	}
}

static const struct ecase cases[] = {
	{ "tcp4 2mss+1", GSO_L3_IPV4, GSO_L4_TCP, 1448, 2897, GSO_TCP_PSH | GSO_TCP_FIN },
	{ "tcp4 64k", GSO_L3_IPV4, GSO_L4_TCP, 1448, 65535 - 40, 0 },
	{ "tcp4 mss 536", GSO_L3_IPV4, GSO_L4_TCP, 536, 20000, GSO_TCP_PSH },
	{ "tcp4 one packet", GSO_L3_IPV4, GSO_L4_TCP, 1448, 700, GSO_TCP_PSH },
	{ "udp4", GSO_L3_IPV4, GSO_L4_UDP, 1472, 30000, 0 },
	{ "udp4 odd", GSO_L3_IPV4, GSO_L4_UDP, 999, 12345, 0 },
	{ "tcp6 (software, device checksums)", GSO_L3_IPV6, GSO_L4_TCP, 1428, 20000, GSO_TCP_PSH },
	{ "udp6 (software, device checksums)", GSO_L3_IPV6, GSO_L4_UDP, 1400, 9000, 0 },
};

Test(e1000, wire_frames_equal_kernel_gso, .fini = fini, .timeout = 60)
{
	static uint8_t pay[65536];
	struct gso_e1000_stats es = { .sz = sizeof(es) };
	struct gso_tso_stats ts = { .sz = sizeof(ts) };
	unsigned n = sizeof(cases) / sizeof(cases[0]), tso = 0;

	setup();
	for (unsigned i = 0; i < n; i++) {
		const struct ecase *c = &cases[i];
		uint16_t sport = (uint16_t)(7000 + i);
		struct gso_tmpl t;
		unsigned want = c->len <= c->mss ? 1 : (c->len + c->mss - 1) / c->mss;

		build(&t, c, sport);
		gso_test_fill_random(pay, c->len, &(uint64_t){ sport });
		send_on(vnet, &t, pay, c->len, c->mss);
		capture(&kern, sport, want);
		send_on(e1k, &t, pay, c->len, c->mss);
		capture(&dev, sport, want);
		compare(c, &t);
		frames_free(&kern);
		frames_free(&dev);
		tso += c->l3 == GSO_L3_IPV4 && want > 1;
	}
	cr_assert_eq(gso_e1000__stats(e1k, &es), 0);
	cr_expect_eq(es.tso_packets, tso);
	cr_expect_eq(es.eop_missing + es.bad_desc + es.bad_ctx + es.bad_len + es.wire_errors, 0);
	cr_expect_gt(es.dev_cpu_ns, 0);
	cr_assert_eq(gso_tso__stats(e1k, &ts), 0);
	cr_expect_eq(ts.offloaded, tso);
	cr_expect_eq(ts.why[GSO_TSO_WHY_PROTO], 2);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Many super-segments back to back: the wire's frame pool and ring recycle, nothing is lost. */
Test(e1000, sustained_stream_all_frames_arrive, .fini = fini, .timeout = 60)
{
	static uint8_t pay[60000];
	struct ecase c = { "stream", GSO_L3_IPV4, GSO_L4_UDP, 1000, sizeof(pay), 0 };
	struct gso_e1000_stats es = { .sz = sizeof(es) };
	struct gso_dev_stats ds = { .sz = sizeof(ds) };
	struct gso_tmpl t;
	unsigned got = 0;
	static uint8_t buf[RXBUF];

	setup();
	build(&t, &c, 7777);
	for (int i = 0; i < 40; i++) {
		send_on(e1k, &t, pay, sizeof(pay), 1000);
		/* Drain the capture as we go: 60 frames per super-segment. */
		for (;;) {
			ssize_t n = recv(cap, buf, sizeof(buf), MSG_DONTWAIT);

			if (n < 0)
				break;
			got += ours(buf, (size_t)n, 7777);
		}
	}
	/*
	 * The model's thread puts the frames on the wire after the submits
	 * return; on a loaded machine (make check runs QEMU guests beside this)
	 * that can take seconds.  Wait by the clock, not by a count of polls.
	 */
	for (uint64_t end = now_ms() + 20000; got < 40 * 60 && now_ms() < end;) {
		struct pollfd p = { .fd = cap, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 20) <= 0)
			continue;
		while ((n = recv(cap, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
			got += ours(buf, (size_t)n, 7777);
	}
	cr_expect_eq(got, 40 * 60, "frames captured: %u", got);
	cr_assert_eq(gso_e1000__stats(e1k, &es), 0);
	cr_expect_eq(es.frames, 40 * 60);
	gso_dev__reap(e1k, 0);
	cr_assert_eq(gso_dev__stats(e1k, &ds), 0);
	cr_expect_eq(ds.tx_super, 40);
}
