/*
 * The virtio_net_hdr backend on a veth test-bed (side a sends, side b
 * captures or receives with its own stack):
 *  - veth with TSO on: each super-segment crosses the veth whole, exactly
 *    the prepared headers (whole lengths, checksum seed) + payload;
 *  - veth with `tso off gso on tx off`: the kernel segments in software and
 *    finishes checksums, and its frames equal gso_segment()'s byte for
 *    byte; the same when the flow is set to software (our frames with a
 *    checksum request, finished by the kernel);
 *  - the kernel's refusals (gso_size 0 or 0xffff, csum_offset mismatch,
 *    hdr_len past the frame, UDP_L4 over 128 segments) are refused by our
 *    validation first, with the errno the kernel gives for the same bytes;
 *  - TX ring frames reused many times deliver intact data to a UDP socket.
 * Frames are addressed so that side b's stack ignores them (a MAC and
 * addresses that are not b's), except in the UDP delivery test.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <gso/csum.h>
#include <gso/offload.h>
#include <gso/seg.h>
#include <gso/tmpl.h>
#include <gso/dev.h>
#include <gso/vnet.h>

#include "gso_test.h"

#define RXBUF (1 << 17)
#define WAIT_MS 500

static const uint8_t other_mac[6] = { 0x02, 0x77, 0x00, 0x00, 0x00, 0xbb };
static const uint8_t saddr4[4] = { 198, 18, 0, 1 }, daddr4[4] = { 198, 19, 0, 2 };
static const uint8_t saddr6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x77, [15] = 1 };
static const uint8_t daddr6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x77, [15] = 2 };

struct vcase {
	const char *what;
	uint8_t l3, l4;
	uint32_t mss, len;
	uint8_t tflags;   /* beyond ACK */
	uint8_t topt;     /* TCP option bytes (timestamps + NOPs) */
	bool df;
};

/* ---- fixture ---- */

static struct nsbed tb;
static struct gso_dev *dev;
static int cap = -1, raw = -1;
static uint8_t *rxbuf;

static void fini(void)
{
	gso_dev__destroy(dev);
	dev = NULL;
	if (cap >= 0)
		close(cap);
	if (raw >= 0)
		close(raw);
	cap = raw = -1;
	free(rxbuf);
	rxbuf = NULL;
	nsbed_destroy(&tb);
}

static int ns_socket(int side, int proto)
{
	int s;

	cr_assert_eq(nsbed_enter(&tb, side), 0, "setns");
	s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, proto);
	cr_assert_geq(s, 0, "socket: %s", strerror(errno));
	return s;
}

/* Test-bed, side a features, a capture socket on b, the device on a. */
static void setup(const char *features, const struct gso_vnet_opts *o)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int rcv = 32 << 20, err;

	gso_test_require_root();
	err = gso_testbed_create(&tb);
	cr_assert_eq(err, 0, "test-bed: %s", strerror(-err));
	if (features)
		cr_assert_eq(nsbed_sh(&tb, 0, "ethtool -K %s %s >/dev/null 2>&1", tb.ifname[0],
				      features), 0, "ethtool -K %s", features);
	nsbed_sh(&tb, 1, "ethtool -K %s gro off >/dev/null 2>&1", tb.ifname[1]);
	rxbuf = malloc(RXBUF);
	cr_assert_not_null(rxbuf);

	cap = ns_socket(1, htons(ETH_P_ALL));
	if (setsockopt(cap, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)))
		setsockopt(cap, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	ll.sll_ifindex = tb.ifindex[1];
	cr_assert_eq(bind(cap, (struct sockaddr *)&ll, sizeof(ll)), 0, "bind: %s", strerror(errno));

	cr_assert_eq(nsbed_enter(&tb, 0), 0);
	err = gso_vnet__create(&dev, tb.ifindex[0], o);
	cr_assert_eq(err, 0, "gso_vnet__create: %s", strerror(-err));
}

/* ---- frames ---- */

static void make_tmpl(struct gso_tmpl *t, const struct vcase *c, uint16_t sport)
{
	static const uint8_t ts[12] = { 1, 1, 8, 10, 0, 1, 2, 3, 4, 5, 6, 7 };
	uint8_t opts[40];
	int err;
	GSO_OPTS(gso_tmpl_fields, f, .l3 = c->l3, .l4 = c->l4, .sport = sport, .dport = 9);

	memcpy(f.eth_dst, other_mac, 6);
	memcpy(f.eth_src, tb.mac[0], 6);
	memcpy(f.saddr, c->l3 == GSO_L3_IPV4 ? saddr4 : saddr6, c->l3 == GSO_L3_IPV4 ? 4 : 16);
	memcpy(f.daddr, c->l3 == GSO_L3_IPV4 ? daddr4 : daddr6, c->l3 == GSO_L3_IPV4 ? 4 : 16);
	if (c->l3 == GSO_L3_IPV4) {
		f.df = c->df;
		f.ip_id = (uint16_t)(0xfff0 + sport);
	}
	if (c->l4 == GSO_L4_TCP) {
		f.seq = 0xfffff000u + sport;
		f.ack = 0x12345678;
		f.tcp_flags = GSO_TCP_ACK | c->tflags;
		f.window = 502;
		memset(opts, 1, sizeof(opts));
		if (c->topt >= 12)
			memcpy(opts + c->topt - 12, ts, 12);
		f.tcp_opts = opts;
		f.tcp_opts_len = c->topt;
	}
	err = gso_tmpl__build(t, &f);
	cr_assert_eq(err, 0, "%s: gso_tmpl__build: %s", c->what, strerror(-err));
}

/* Our frame of case sport?  IPv4/IPv6 from our source address, L4 source port sport. */
static bool ours(const uint8_t *f, size_t n, uint16_t sport)
{
	uint16_t type;
	const uint8_t *l4;

	if (n < 14 + 20 + 8)
		return false;
	type = (uint16_t)(f[12] << 8 | f[13]);
	if (type == ETH_P_IP && !memcmp(f + 14 + 12, saddr4, 4) && n >= 14 + (f[14] & 0xfu) * 4 + 2)
		l4 = f + 14 + (f[14] & 0xf) * 4;
	else if (type == ETH_P_IPV6 && n >= 14 + 40 + 8 && !memcmp(f + 14 + 8, saddr6, 16))
		l4 = f + 14 + 40;
	else
		return false;
	return (uint16_t)(l4[0] << 8 | l4[1]) == sport;
}

/* Next captured frame of `sport` within `wait_ms`; its length, 0 on timeout. */
static size_t cap_next_wait(uint16_t sport, int wait_ms)
{
	for (;;) {
		struct pollfd p = { .fd = cap, .events = POLLIN };
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t n;

		if (poll(&p, 1, wait_ms) <= 0)
			return 0;
		n = recvfrom(cap, rxbuf, RXBUF, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (n > 0 && from.sll_pkttype != PACKET_OUTGOING && ours(rxbuf, (size_t)n, sport))
			return (size_t)n;
	}
}

static size_t cap_next(uint16_t sport)
{
	return cap_next_wait(sport, WAIT_MS);
}

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	gso_test_fill_random(p, n, &seed);
}

static void compare(const char *what, unsigned i, const uint8_t *got, size_t glen, const uint8_t *want,
		    size_t wlen)
{
	size_t k = 0;

	while (k < glen && k < wlen && got[k] == want[k])
		k++;
	cr_expect(glen == wlen && k == wlen,
		  "%s: frame %u: length %zu, expected %zu; first difference at byte %zu", what, i, glen,
		  wlen, k);
}

/* Send `c` through the device (as `flow` says) and check that side b sees gso_segment()'s frames. */
static void kernel_segments(const struct vcase *c, uint16_t sport, struct gso_tso_flow *flow)
{
	static uint8_t pay[65536];
	struct gso_tmpl t;
	struct gso_extent ext = { pay, c->len };
	struct gso_super s = { &t, &ext, c->len ? 1 : 0 };
	GSO_OPTS(gso_seg_opts, o, .mss = c->mss);
	struct gso_frame *fr;
	struct gso_tx tx;
	int n, r;

	make_tmpl(&t, c, sport);
	fill(pay, c->len, sport);
	n = gso_seg_count(&s, &o);
	cr_assert_gt(n, 0, "%s: gso_seg_count %d", c->what, n);
	fr = calloc((size_t)n, sizeof(*fr));
	cr_assert_not_null(fr);
	for (int i = 0; i < n; i++) {
		fr[i].buf = malloc(16384);
		fr[i].cap = 16384;
	}
	cr_assert_eq(gso_segment(&s, &o, fr, (unsigned)n), n);

	memset(&tx, 0, sizeof(tx));
	tx.tmpl = &t;
	tx.data = pay;
	tx.len = c->len;
	tx.mss = c->mss;
	r = gso_tso__submit(dev, flow, &tx, 1);
	cr_assert_eq(r, 1, "%s: submit: %s", c->what, strerror(-r));
	for (int i = 0; i < n; i++) {
		size_t got = cap_next(sport);

		cr_assert_gt(got, 0, "%s: frame %d of %d never arrived", c->what, i, n);
		compare(c->what, (unsigned)i, rxbuf, got, fr[i].buf, fr[i].len);
		free(fr[i].buf);
	}
	free(fr);
	gso_dev__reap(dev, 0);
}

#define TCP4(w, m, l, fl, to, d) { w, GSO_L3_IPV4, GSO_L4_TCP, m, l, fl, to, d }
#define TCP6(w, m, l, fl, to) { w, GSO_L3_IPV6, GSO_L4_TCP, m, l, fl, to, false }
#define UDP4(w, m, l, d) { w, GSO_L3_IPV4, GSO_L4_UDP, m, l, 0, 0, d }
#define UDP6(w, m, l) { w, GSO_L3_IPV6, GSO_L4_UDP, m, l, 0, 0, false }

static const struct vcase seg_cases[] = {
	TCP4("tcp4 mss+1", 1448, 1449, 0, 0, true),
	TCP4("tcp4 2mss", 1448, 2896, 0, 0, true),
	TCP4("tcp4 2mss+1 psh fin", 1448, 2897, GSO_TCP_PSH | GSO_TCP_FIN, 0, true),
	TCP4("tcp4 cwr ece", 1448, 10000, GSO_TCP_CWR | GSO_TCP_ECE, 12, true),
	TCP4("tcp4 no df, ts", 1436, 30000, GSO_TCP_PSH, 12, false),
	TCP4("tcp4 largest", 1448, 65535 - 20 - 32, 0, 12, true),
	TCP4("tcp4 mss 536", 536, 20000, 0, 0, true),
	TCP4("tcp4 mss 100", 100, 5000, GSO_TCP_PSH, 40, true),
	TCP6("tcp6 2mss+1", 1428, 2857, GSO_TCP_PSH, 0),
	TCP6("tcp6 cwr", 1428, 20000, GSO_TCP_CWR, 12),
	TCP6("tcp6 largest", 1400, 65535 - 40 - 20 - 20, 0, 20),
	UDP4("udp4 mss+1", 1472, 1473, true),
	UDP4("udp4 big", 1200, 60000, false),
	UDP4("udp4 128 segs", 100, 12800, true),
	UDP6("udp6 mid", 1452, 9000),
	UDP6("udp6 odd", 999, 7777),
};

Test(vnet, tso_off_kernel_segments_like_gso_segment, .fini = fini, .timeout = 60)
{
	struct gso_tso_stats st = { .sz = sizeof(st) };
	unsigned n = sizeof(seg_cases) / sizeof(seg_cases[0]);

	setup("tso off gso on tx off", NULL);
	for (unsigned i = 0; i < n; i++)
		kernel_segments(&seg_cases[i], (uint16_t)(1000 + i), NULL);
	cr_assert_eq(gso_tso__stats(dev, &st), 0);
	/* Everything was handed whole to the kernel, which segmented it. */
	cr_expect_eq(st.offloaded, n, "offloaded %llu of %u", (unsigned long long)st.offloaded, n);
	cr_expect_eq(st.software, 0);
}

Test(vnet, software_flow_frames_finished_by_kernel, .fini = fini, .timeout = 60)
{
	struct gso_tso_flow flow = { .sz = sizeof(flow), .mode = GSO_TSO_SOFTWARE };
	struct gso_dev_stats ds = { .sz = sizeof(ds) };
	unsigned n = sizeof(seg_cases) / sizeof(seg_cases[0]);

	setup("tso off gso on tx off", NULL);
	for (unsigned i = 0; i < n; i++)
		kernel_segments(&seg_cases[i], (uint16_t)(2000 + i), &flow);
	cr_expect_eq(flow.software, n);
	cr_expect_eq(flow.why[GSO_TSO_WHY_MODE], n);
	cr_expect_eq(flow.offloaded, 0);
	cr_assert_eq(gso_dev__stats(dev, &ds), 0);
	cr_expect_eq(ds.tx_super, n);
	cr_expect_gt(ds.tx_csum_offload, 0, "frames carried checksum requests");
}

Test(vnet, sendmmsg_transport_too, .fini = fini, .timeout = 60)
{
	GSO_OPTS(gso_vnet_opts, o, .flags = GSO_VNET_F_NO_RING);
	struct gso_tso_flow sw = { .sz = sizeof(sw), .mode = GSO_TSO_SOFTWARE };

	setup("tso off gso on tx off", &o);
	for (unsigned i = 0; i < 6; i++)
		kernel_segments(&seg_cases[i * 2], (uint16_t)(3000 + i), i & 1 ? &sw : NULL);
}

/*
 * With TSO on the veth, the super-segment crosses whole: prepared headers
 * + payload.  Through sendmmsg the virtio header asks for a linear skb
 * (gsoi_vnet_linear_hint): up to 64 KiB - 1 KiB of it, so the 64 KiB
 * cases put the rest in a page; every byte must still arrive in place.
 */
static void super_segments_cross_whole(const struct gso_vnet_opts *o)
{
	static const struct vcase cases[] = {
		TCP4("tcp4", 1448, 20000, GSO_TCP_PSH, 12, true),
		TCP4("tcp4 cwr", 1448, 9000, GSO_TCP_CWR, 0, true),
		TCP6("tcp6", 1428, 30000, 0, 0),
		UDP4("udp4", 1472, 8000, true),
		UDP6("udp6", 1452, 8000),
		TCP4("tcp4 64k", 1448, 65160, GSO_TCP_PSH, 12, true),
		TCP6("tcp6 64k", 1428, 65415, 0, 0),
	};
	static uint8_t pay[65536];
	static uint8_t want[65536 + 256];
	struct gso_tso_stats st = { .sz = sizeof(st) };
	struct gso_dev_stats ds = { .sz = sizeof(ds) };
	unsigned n = sizeof(cases) / sizeof(cases[0]);

	setup("tso on gso on tx on", o);
	for (unsigned i = 0; i < n; i++) {
		const struct vcase *c = &cases[i];
		struct gso_offload_req r = { .sz = sizeof(r) };
		struct gso_vnet_hdr vh;
		struct gso_tmpl t;
		struct gso_tx tx = { 0 };
		uint16_t sport = (uint16_t)(4000 + i);
		size_t got;

		make_tmpl(&t, c, sport);
		fill(pay, c->len, sport);
		cr_assert_eq(gso_offload_describe(&t, c->len, c->mss, 0, &r), 0);
		cr_assert_eq(gso_offload_vnet(&r, &t, &vh, want, sizeof(want)), 0);
		memcpy(want + r.hdr_len, pay, c->len);
		tx.tmpl = &t;
		tx.data = pay;
		tx.len = c->len;
		tx.mss = c->mss;
		cr_assert_eq(gso_dev__submit(dev, &tx, 1), 1, "%s", c->what);
		got = cap_next(sport);
		cr_assert_gt(got, 0, "%s: nothing arrived", c->what);
		compare(c->what, 0, rxbuf, got, want, r.hdr_len + c->len);
	}
	for (unsigned i = 0; i < n; i++)
		cr_expect_eq(cap_next_wait((uint16_t)(4000 + i), 50), 0, "%s: more than one frame arrived",
			     cases[i].what);
	cr_assert_eq(gso_tso__stats(dev, &st), 0);
	cr_expect_eq(st.offloaded, n);
	/* Ring frames come back once the kernel has freed their skbs. */
	for (int w = 0; w < 100; w++) {
		gso_dev__reap(dev, 0);
		cr_assert_eq(gso_dev__stats(dev, &ds), 0);
		if (!ds.inflight_descs)
			break;
		usleep(10000);
	}
	cr_expect_eq(ds.inflight_descs, 0, "ring frames never came back");
	cr_expect_eq(ds.tx_completed, n);
}

Test(vnet, tso_on_super_segment_crosses_whole, .fini = fini, .timeout = 60)
{
	super_segments_cross_whole(NULL);
}

Test(vnet, tso_on_super_segment_crosses_whole_sendmmsg, .fini = fini, .timeout = 60)
{
	GSO_OPTS(gso_vnet_opts, o, .flags = GSO_VNET_F_NO_RING);

	super_segments_cross_whole(&o);
}

/* ---- the kernel's refusals ---- */

struct bad {
	const char *what;
	bool refused;
	uint8_t l4;
	uint32_t mss, len;
	void (*spoil)(struct gso_vnet_hdr *h, size_t frame_len);
};

static void gso_size_0(struct gso_vnet_hdr *h, size_t n) { (void)n; h->gso_size = 0; }
static void gso_by_frags(struct gso_vnet_hdr *h, size_t n) { (void)n; h->gso_size = 0xffff; }
static void csum_offset_udp(struct gso_vnet_hdr *h, size_t n) { (void)n; h->csum_offset = 6; }
static void hdr_len_past(struct gso_vnet_hdr *h, size_t n) { h->hdr_len = (uint16_t)(n + 1); }
static void csum_start_past(struct gso_vnet_hdr *h, size_t n) { h->csum_start = (uint16_t)n; }
static void nothing(struct gso_vnet_hdr *h, size_t n) { (void)h; (void)n; }

/*
 * Each frame goes to our validation (gso_vnet__send_frame) and, as the
 * same bytes, to the kernel through a plain PACKET_VNET_HDR socket: both
 * must refuse it with the same errno (or both accept the control case).
 */
Test(vnet, kernel_refusals_caught_first_same_errno, .fini = fini, .timeout = 60)
{
	static const struct bad cases[] = {
		{ "good tcp (control)", false, GSO_L4_TCP, 1000, 5000, nothing },
		{ "good udp 128 segs (control)", false, GSO_L4_UDP, 100, 12800, nothing },
		{ "gso_size 0", true, GSO_L4_TCP, 1000, 5000, gso_size_0 },
		{ "gso_size 0xffff", true, GSO_L4_TCP, 1000, 5000, gso_by_frags },
		{ "tcp csum_offset 6", true, GSO_L4_TCP, 1000, 5000, csum_offset_udp },
		{ "hdr_len past the frame", true, GSO_L4_TCP, 1000, 5000, hdr_len_past },
		{ "csum_start past the frame", true, GSO_L4_TCP, 1000, 5000, csum_start_past },
		{ "udp_l4 129 segments", true, GSO_L4_UDP, 100, 12801, nothing },
	};
	static uint8_t buf[GSO_VNET_HDR_LEN + 65536];
	int one = 1;

	setup(NULL, NULL);
	raw = ns_socket(0, 0);
	cr_assert_eq(setsockopt(raw, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)), 0);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad *b = &cases[i];
		struct vcase c = { b->what, GSO_L3_IPV4, b->l4, b->mss, b->len, 0, 0, true };
		struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP),
					  .sll_ifindex = tb.ifindex[0], .sll_halen = 6 };
		uint8_t *frame = buf + GSO_VNET_HDR_LEN;
		struct gso_offload_req r = { .sz = sizeof(r) };
		struct gso_vnet_hdr vh;
		struct gso_tmpl t;
		size_t flen;
		int ours_err, kern_err = 0;

		make_tmpl(&t, &c, (uint16_t)(5000 + i));
		/* The UDP limit case is built with the describe() limit lifted by hand. */
		cr_assert_eq(gso_offload_describe(&t, b->len <= 12800 ? b->len : 12800, b->mss, 0, &r), 0);
		r.payload_len = b->len;
		r.segs = (b->len + b->mss - 1) / b->mss;
		vh = (struct gso_vnet_hdr){ .flags = GSO_VNET_HDR_F_NEEDS_CSUM,
					    .gso_type = b->l4 == GSO_L4_TCP ? GSO_VNET_HDR_GSO_TCPV4
									    : GSO_VNET_HDR_GSO_UDP_L4,
					    .hdr_len = r.hdr_len, .gso_size = b->mss,
					    .csum_start = r.csum_start, .csum_offset = r.csum_offset };
		memcpy(frame, t.hdr, t.hdr_len);
		memset(frame + t.hdr_len, 0x5a, b->len);
		flen = t.hdr_len + b->len;
		/* Lengths of the whole, so that only the spoiled field is wrong. */
		frame[14 + 2] = (uint8_t)((flen - 14) >> 8);
		frame[14 + 3] = (uint8_t)(flen - 14);
		if (b->l4 == GSO_L4_UDP) {
			frame[34 + 4] = (uint8_t)((flen - 34) >> 8);
			frame[34 + 5] = (uint8_t)(flen - 34);
		}
		b->spoil(&vh, flen);
		ours_err = gso_vnet__send_frame(dev, &vh, frame, flen);
		cr_assert_eq(gso_vnet_hdr_encode(&vh, buf, GSO_VNET_HDR_LEN), 0);
		memcpy(ll.sll_addr, other_mac, 6);
		if (sendto(raw, buf, GSO_VNET_HDR_LEN + flen, 0, (struct sockaddr *)&ll, sizeof(ll)) < 0)
			kern_err = -errno;
		cr_expect_eq(ours_err, kern_err, "%s: ours %d (%s), kernel %d (%s)", b->what, ours_err,
			     strerror(-ours_err), kern_err, strerror(-kern_err));
		if (b->refused)
			cr_expect_eq(kern_err, -EINVAL, "%s: the kernel said %d", b->what, kern_err);
		else
			cr_expect_eq(kern_err, 0, "%s: the kernel refused it (%d)", b->what, kern_err);
	}
}

/* Validation through the device calls: MSS 0 and UDP over 128 segments, offload mode. */
Test(vnet, submit_validation_errno, .fini = fini, .timeout = 30)
{
	struct vcase c = UDP4("udp", 100, 12801, true);
	struct gso_tso_flow off = { .sz = sizeof(off), .mode = GSO_TSO_OFFLOAD };
	struct gso_tso_flow autof = { .sz = sizeof(autof) };
	static uint8_t pay[20000];
	struct gso_dev_stats ds = { .sz = sizeof(ds) };
	struct gso_tmpl t;
	struct gso_tx tx = { 0 };

	setup(NULL, NULL);
	make_tmpl(&t, &c, 6000);
	tx.tmpl = &t;
	tx.data = pay;
	tx.len = c.len;
	tx.mss = 0;
	cr_expect_eq(gso_tso__submit(dev, &off, &tx, 1), -EINVAL, "mss 0");
	tx.mss = 100;
	cr_expect_eq(gso_tso__submit(dev, &off, &tx, 1), -EINVAL, "udp 129 segments, offload");
	/* Auto segments it in software, where the software limit (128) answers. */
	cr_expect_eq(gso_tso__submit(dev, &autof, &tx, 1), -E2BIG, "udp 129 segments, auto");
	tx.len = 12800;
	cr_expect_eq(gso_tso__submit(dev, &off, &tx, 1), 1, "udp 128 segments");
	cr_assert_eq(gso_dev__stats(dev, &ds), 0);
	cr_expect_eq(ds.tx_super, 1);
	cr_expect_eq(ds.invalid, 3);
}

/* ---- delivery to a kernel socket through many reuses of a small ring ---- */

enum { SUPERS = 120, PER = 8, DLEN = 1000 };

/* Datagram d of super-segment s: s, d, then (s * PER + d) & 0xff throughout. */
static bool dgram_ok(const uint8_t *g, ssize_t n)
{
	uint8_t v = (uint8_t)((g[0] * PER + g[1]) & 0xff);

	if (n != DLEN)
		return false;
	for (int i = 2; i < DLEN; i++)
		if (g[i] != v)
			return false;
	return true;
}

Test(vnet, ring_reuse_delivers_intact_udp, .fini = fini, .timeout = 60)
{
	GSO_OPTS(gso_vnet_opts, o, .frames = 15);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9000) };
	static uint8_t pay[PER * DLEN], got[2048];
	int rcv = 16 << 20, us, seen = 0, bad = 0;
	struct gso_tmpl t;

	setup(NULL, &o);
	cr_assert_eq(nsbed_enter(&tb, 1), 0);
	us = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(us, 0);
	if (setsockopt(us, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)))
		setsockopt(us, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	inet_pton(AF_INET, "10.77.0.2", &a.sin_addr);
	cr_assert_eq(bind(us, (struct sockaddr *)&a, sizeof(a)), 0, "bind: %s", strerror(errno));
	cr_assert_eq(nsbed_enter(&tb, 0), 0);
	{
		GSO_OPTS(gso_tmpl_fields, f, .l3 = GSO_L3_IPV4, .l4 = GSO_L4_UDP, .sport = 4000,
			 .dport = 9000, .df = true);
		memcpy(f.eth_dst, tb.mac[1], 6);
		memcpy(f.eth_src, tb.mac[0], 6);
		inet_pton(AF_INET, "10.77.0.1", f.saddr);
		inet_pton(AF_INET, "10.77.0.2", f.daddr);
		cr_assert_eq(gso_tmpl__build(&t, &f), 0);
	}
	for (int s = 0; s < SUPERS; s++) {
		struct gso_tx tx = { .tmpl = &t, .data = pay, .len = sizeof(pay), .mss = DLEN };
		int r;

		/* Every datagram says which it is; the ring frames are overwritten 8 times over. */
		for (int d = 0; d < PER; d++) {
			memset(pay + d * DLEN, (s * PER + d) & 0xff, DLEN);
			pay[d * DLEN] = (uint8_t)s;
			pay[d * DLEN + 1] = (uint8_t)d;
		}
		gso_tmpl__set_ip_id(&t, (uint16_t)(s * PER));
		do {
			r = gso_dev__submit(dev, &tx, 1);
			if (r == -EAGAIN)
				usleep(1000);
		} while (r == -EAGAIN);
		cr_assert_eq(r, 1, "submit %d: %s", s, strerror(-r));
		/* Read as we go, so the socket's queue never overflows. */
		for (;;) {
			ssize_t n = recv(us, got, sizeof(got), MSG_DONTWAIT);

			if (n < 0)
				break;
			bad += !dgram_ok(got, n);
			seen++;
		}
	}
	for (int w = 0; w < 200 && seen < SUPERS * PER; w++) {
		struct pollfd p = { .fd = us, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 50) <= 0)
			continue;
		while ((n = recv(us, got, sizeof(got), MSG_DONTWAIT)) > 0) {
			bad += !dgram_ok(got, n);
			seen++;
		}
	}
	close(us);
	cr_expect_eq(seen, SUPERS * PER, "datagrams received: %d of %d", seen, SUPERS * PER);
	cr_expect_eq(bad, 0, "%d datagrams damaged", bad);
}
