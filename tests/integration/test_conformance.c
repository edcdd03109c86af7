/*
 * The kernel oracle: libgso's software GSO (through tools/gsoseg) must put
 * on the wire exactly what the Linux kernel's own software GSO does for the
 * same super-packet, byte for byte (design invariant 6).
 *
 * Side a of a veth test-bed has `tso off gso on tx off`, so the kernel
 * segments in software and finishes every checksum itself (offload
 * reference section 8).  Each super-packet goes out through an AF_PACKET
 * socket with PACKET_VNET_HDR, its virtio_net_hdr and prepared headers from
 * the library's encoder (gso_offload_describe + gso_offload_vnet).  What the
 * kernel emits is captured with a second AF_PACKET socket -- on side b for
 * MSS 536..8960, on side a (PACKET_OUTGOING) for MSS 1..535, whose thousands
 * of segments would overflow the peer's backlog -- and compared with the
 * frames gsoseg writes for the same record.
 *
 * Cases: a fixed table of boundaries plus random cases from a seed that is
 * printed (GSO_CONFORMANCE_SEED overrides it, GSO_CONFORMANCE_CASES sets how
 * many).  The super-packets are built here byte by byte, independently of
 * the library's header code, with the pseudo-header seed the kernel needs
 * in the L4 checksum field; the encoder's prepared headers must equal them.
 * Cases both must refuse (UDP over 128 segments) check the refusal.
 *
 * Frames are steered away from the peer's stack (a destination MAC that is
 * not b's, addresses nobody owns), so nothing answers them; each case has
 * its own source port, so a frame that arrives late is still charged to the
 * right case, and unrelated traffic (IPv6 ND) is filtered out.  An 802.1Q
 * tag, which the receive path moves into metadata, is put back from
 * PACKET_AUXDATA before comparing.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <pcap/pcap.h>

#include <gso/offload.h>
#include <gso/tmpl.h>

#include "gso_test.h"

extern char **environ;

enum { P_TCP4, P_TCP6, P_UDP4, P_UDP6, P_COUNT };
static const char *const proto_name[P_COUNT] = { "tcp4", "tcp6", "udp4", "udp6" };

#define IS_V4(p) ((p) == P_TCP4 || (p) == P_UDP4)
#define IS_TCP(p) ((p) == P_TCP4 || (p) == P_TCP6)

/* Big enough for MSS 8960 + IPv4/TCP headers with 40 bytes of options each. */
#define VETH_MTU 9216
#define SPORT_BASE 20000u
#define MAX_CASES 40000u
#define DEFAULT_RANDOM_CASES 2000u
/* Waiting longer than this for a frame means the kernel did not send it. */
#define FRAME_WAIT_MS 300
#define RXBUF_LEN (1 << 17)

static const uint8_t dst_mac[6] = { 0x02, 0x77, 0x00, 0x00, 0x00, 0xbb };
static const uint8_t saddr4[4] = { 198, 18, 0, 1 }, daddr4[4] = { 198, 19, 0, 2 };
static const uint8_t saddr6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x77, [15] = 1 };
static const uint8_t daddr6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x77, [15] = 2 };

struct ccase {
	unsigned idx;
	const char *what;   /* table label, or "random" */
	uint8_t proto;
	uint32_t mss;
	uint32_t paylen;
	uint8_t flags;      /* TCP */
	uint8_t topt_len;   /* TCP option bytes, multiple of 4, <= 40 */
	uint8_t ipopt_len;  /* IPv4 option bytes, multiple of 4, <= 40 */
	bool df;
	uint16_t ip_id;
	uint8_t tos;        /* IPv4 TOS / IPv6 traffic class */
	uint32_t flow;      /* IPv6 flow label */
	bool zero_csum;     /* payload tuned so the first frame's L4 checksum computes to 0 */
	uint16_t vlan_tci;  /* non-zero: one 802.1Q tag with this TCI */
	bool refused;       /* both the kernel and gsoseg must refuse it */
	unsigned rec;       /* its record number (1-based) in gsoseg's input */
	uint64_t fill;      /* PRNG state for ports, numbers, options and payload */
};

/* ---- independent reference arithmetic (network byte order) ---- */

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t acc)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		acc += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		acc += (uint32_t)p[n - 1] << 8;
	return acc;
}

static uint16_t fold16(uint32_t acc)
{
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)acc;
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static uint32_t pseudo_sum(uint8_t proto, uint32_t l4_len)
{
	bool v4 = IS_V4(proto);
	uint32_t acc = 0;

	acc = sum16(v4 ? saddr4 : saddr6, v4 ? 4 : 16, acc);
	acc = sum16(v4 ? daddr4 : daddr6, v4 ? 4 : 16, acc);
	return acc + (IS_TCP(proto) ? 6 : 17) + (l4_len >> 16) + (l4_len & 0xffff);
}

/* ---- building a super-packet ---- */

static size_t l3_hlen(const struct ccase *c)
{
	return IS_V4(c->proto) ? 20u + c->ipopt_len : 40u;
}

static size_t l4_hlen(const struct ccase *c)
{
	return IS_TCP(c->proto) ? 20u + c->topt_len : 8u;
}

/* Largest payload that keeps the whole IP datagram within 65535 bytes. */
static uint32_t max_payload(const struct ccase *c)
{
	return (uint32_t)(65535u - l3_hlen(c) - l4_hlen(c));
}

/* Well-formed TCP options of exactly `len` bytes: MSS, or timestamps (+ SACK), NOP-padded. */
static void tcp_options(uint8_t *o, size_t len, uint64_t *rng)
{
	size_t n = 0;

	memset(o, 1, len);
	gso_test_fill_random(o, len, rng);
	if (len == 4) {
		o[0] = 2, o[1] = 4;
		return;
	}
	if (len >= 12) {
		o[0] = 1, o[1] = 1, o[2] = 8, o[3] = 10;
		n = 12;
		if (len - n >= 12) {
			size_t blocks = (len - n - 4) / 8;

			o[n] = 1, o[n + 1] = 1, o[n + 2] = 5, o[n + 3] = (uint8_t)(2 + 8 * blocks);
			n += 4 + 8 * blocks;
		}
	}
	memset(o + n, 1, len - n);
}

/* IPv4 options of exactly `len` bytes: router alert, or NOP + record route. */
static void ip_options(uint8_t *o, size_t len, uint64_t *rng)
{
	gso_test_fill_random(o, len, rng);
	if (len == 4) {
		o[0] = 0x94, o[1] = 4, o[2] = 0, o[3] = 0;
		return;
	}
	o[0] = 1, o[1] = 7, o[2] = (uint8_t)(len - 1), o[3] = 4;
}

/*
 * Build case `c` into `f` (GSO input: lengths of the whole, L4 checksum =
 * pseudo-header seed with the whole L4 length).  Returns the frame length;
 * *l4_off gets the L4 header offset.
 */
static size_t build_frame(const struct ccase *c, const uint8_t src_mac[6], uint8_t *f,
			  size_t *l4_off)
{
	uint64_t rng = c->fill;
	size_t l3 = c->vlan_tci ? 18 : 14, l4 = l3 + l3_hlen(c), th = l4_hlen(c), pay = l4 + th;
	uint32_t l4_total = (uint32_t)th + c->paylen;
	uint8_t *ip = f + l3, *h = f + l4;
	uint64_t r;

	memcpy(f, dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	if (c->vlan_tci) {
		put16(f + 12, ETH_P_8021Q);
		put16(f + 14, c->vlan_tci);
	}
	put16(f + l3 - 2, IS_V4(c->proto) ? ETH_P_IP : ETH_P_IPV6);
	if (IS_V4(c->proto)) {
		ip[0] = (uint8_t)(0x40 | l3_hlen(c) / 4);
		ip[1] = c->tos;
		put16(ip + 2, (uint32_t)l3_hlen(c) + l4_total);
		put16(ip + 4, c->ip_id);
		put16(ip + 6, c->df ? 0x4000 : 0);
		ip[8] = 64;
		ip[9] = IS_TCP(c->proto) ? 6 : 17;
		put16(ip + 10, 0);
		memcpy(ip + 12, saddr4, 4);
		memcpy(ip + 16, daddr4, 4);
		ip_options(ip + 20, c->ipopt_len, &rng);
		put16(ip + 10, (uint16_t)~fold16(sum16(ip, l3_hlen(c), 0)));
	} else {
		put32(ip, 6u << 28 | (uint32_t)c->tos << 20 | (c->flow & 0xfffff));
		put16(ip + 4, l4_total);
		ip[6] = IS_TCP(c->proto) ? 6 : 17;
		ip[7] = 64;
		memcpy(ip + 8, saddr6, 16);
		memcpy(ip + 24, daddr6, 16);
	}
	r = gso_test_rand(&rng);
	put16(h, SPORT_BASE + c->idx);
	put16(h + 2, (uint32_t)(r % 60000) + 1);
	if (IS_TCP(c->proto)) {
		put32(h + 4, (uint32_t)gso_test_rand(&rng));
		put32(h + 8, (uint32_t)gso_test_rand(&rng));
		h[12] = (uint8_t)((th / 4) << 4);
		h[13] = c->flags;
		put16(h + 14, (uint32_t)gso_test_rand(&rng));
		put16(h + 18, 0);
		tcp_options(h + 20, c->topt_len, &rng);
	} else {
		put16(h + 4, l4_total);
	}
	gso_test_fill_random(f + pay, c->paylen, &rng);

	if (c->zero_csum && (c->paylen > c->mss ? c->mss : c->paylen) >= 2) {
		/*
		 * Choose the first two payload bytes so that the first frame on the
		 * wire has a checksum that computes to 0: the frame the kernel
		 * makes of it is segment 0 (FIN/PSH cleared when more follow, its
		 * own length), or the whole packet when it is not segmented.
		 */
		bool seg = c->paylen > c->mss;
		uint32_t seg_pay = seg ? c->mss : c->paylen, seg_l4 = (uint32_t)th + seg_pay;
		uint8_t hdr[60];
		uint32_t acc;

		memcpy(hdr, h, th);
		if (IS_TCP(c->proto)) {
			if (seg)
				hdr[13] &= (uint8_t)~(GSO_TCP_FIN | GSO_TCP_PSH);
			put16(hdr + 16, 0);
		} else {
			put16(hdr + 4, seg_l4);
			put16(hdr + 6, 0);
		}
		f[pay] = f[pay + 1] = 0;
		acc = pseudo_sum(c->proto, seg_l4);
		acc = sum16(hdr, th, acc);
		acc = sum16(f + pay, seg_pay, acc);
		put16(f + pay, 0xffffu - fold16(acc));
	}
	put16(h + (IS_TCP(c->proto) ? 16 : 6), fold16(pseudo_sum(c->proto, l4_total)));
	*l4_off = l4;
	return pay + c->paylen;
}

/* ---- cases ---- */

static void describe(const struct ccase *c, char *buf, size_t n)
{
	snprintf(buf, n,
		 "case %u (%s): %s mss %" PRIu32 " payload %" PRIu32 " flags 0x%02x tcpopt %u "
		 "ipopt %u df %d ipid 0x%04x tos 0x%02x vlan 0x%04x zero_csum %d%s fill 0x%016" PRIx64,
		 c->idx, c->what, proto_name[c->proto], c->mss, c->paylen, c->flags, c->topt_len,
		 c->ipopt_len, c->df, c->ip_id, c->tos, c->vlan_tci, c->zero_csum,
		 c->refused ? " (must be refused)" : "", c->fill);
}

static uint32_t clamp_pay(const struct ccase *c, int64_t v)
{
	if (v < 1)
		return 1;
	if (v > max_payload(c))
		return max_payload(c);
	return (uint32_t)v;
}

static void add_case(struct ccase *cs, unsigned *n, struct ccase c)
{
	cr_assert_lt(*n, MAX_CASES, "too many cases (at most %u)", MAX_CASES);
	c.idx = *n;
	cs[(*n)++] = c;
}

/* The fixed boundary table. */
static void table_cases(struct ccase *cs, unsigned *n, uint64_t *rng)
{
	static const uint32_t mss[] = { 536, 1448, 8960 };

	for (uint8_t p = 0; p < P_COUNT; p++) {
		struct ccase base = { .what = "table", .proto = p, .flags = IS_TCP(p) ? GSO_TCP_ACK : 0,
				      .df = true, .ip_id = 0x1234 };

		for (unsigned m = 0; m < sizeof(mss) / sizeof(mss[0]); m++) {
			int64_t lens[] = { 1, mss[m] - 1, mss[m], mss[m] + 1, 2 * mss[m],
					   2 * mss[m] + 1, 3 * mss[m] - 1, 64000 / mss[m] * mss[m],
					   65535 };

			for (unsigned l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
				struct ccase c = base;

				c.mss = mss[m];
				c.paylen = clamp_pay(&c, lens[l]);
				c.fill = gso_test_rand(rng);
				c.what = "table: payload around MSS multiples";
				add_case(cs, n, c);
			}
		}
		/* Odd MSS: segment payloads start at odd offsets. */
		for (unsigned k = 0; k < 2; k++) {
			struct ccase c = base;

			c.mss = 537 + 912 * k;
			c.paylen = clamp_pay(&c, 7 * (int64_t)c.mss + 3);
			c.fill = gso_test_rand(rng);
			c.what = "table: odd MSS";
			add_case(cs, n, c);
		}
		/* Checksums that compute to 0, segmented and not. */
		for (unsigned k = 0; k < 2; k++) {
			struct ccase c = base;

			c.mss = 1448;
			c.paylen = k ? 1000 : 5000;
			c.zero_csum = true;
			c.fill = gso_test_rand(rng);
			c.what = k ? "table: single packet, checksum computes to 0"
				   : "table: first segment's checksum computes to 0";
			add_case(cs, n, c);
		}
		/* One 802.1Q tag (the receive side gets it back from PACKET_AUXDATA). */
		for (unsigned k = 0; k < 2; k++) {
			struct ccase c = base;

			c.mss = k ? 8960 : 1448;
			c.vlan_tci = (uint16_t)(k ? 0xe123 : 0x0064);
			c.paylen = clamp_pay(&c, k ? 60000 : 4 * 1448 + 1);
			c.fill = gso_test_rand(rng);
			c.what = "table: 802.1Q tag";
			add_case(cs, n, c);
		}
		if (IS_V4(p)) {
			static const struct { bool df; uint8_t ipopt; uint16_t id; const char *what; } v4[] = {
				{ false, 0, 0x1234, "table: IPv4 without DF" },
				{ true, 40, 0x1234, "table: IPv4 with 40 option bytes" },
				{ false, 4, 0x1234, "table: IPv4 router alert, no DF" },
				{ true, 0, 0xfffe, "table: IPv4 ID wraps" },
			};
			for (unsigned k = 0; k < sizeof(v4) / sizeof(v4[0]); k++) {
				struct ccase c = base;

				c.mss = 1448;
				c.df = v4[k].df;
				c.ipopt_len = v4[k].ipopt;
				c.ip_id = v4[k].id;
				c.paylen = clamp_pay(&c, 10 * 1448 + 17);
				c.fill = gso_test_rand(rng);
				c.what = v4[k].what;
				add_case(cs, n, c);
			}
		}
		if (IS_TCP(p)) {
			static const struct { uint8_t flags, topt; const char *what; } tcp[] = {
				{ GSO_TCP_ACK | GSO_TCP_PSH | GSO_TCP_FIN, 12, "table: ACK PSH FIN, timestamps" },
				{ GSO_TCP_ACK | GSO_TCP_CWR, 12, "table: CWR (ECN gso bit)" },
				{ GSO_TCP_ACK | GSO_TCP_ECE, 0, "table: ECE" },
				{ GSO_TCP_ACK | GSO_TCP_CWR | GSO_TCP_ECE | GSO_TCP_PSH | GSO_TCP_FIN, 40,
				  "table: every allowed flag, 40 option bytes" },
				{ 0, 4, "table: no ACK, MSS option" },
			};
			for (unsigned k = 0; k < sizeof(tcp) / sizeof(tcp[0]); k++) {
				struct ccase c = base;

				c.mss = 1448;
				c.flags = tcp[k].flags;
				c.topt_len = tcp[k].topt;
				c.paylen = clamp_pay(&c, 5 * 1448 + 1);
				c.fill = gso_test_rand(rng);
				c.what = tcp[k].what;
				add_case(cs, n, c);
			}
			/*
			 * payload <= mss < payload + options: the kernel counts options
			 * as payload when deciding to segment, so this goes out as one
			 * plain packet (sent without a GSO type, reference section 8).
			 */
			for (unsigned k = 0; k < 2; k++) {
				struct ccase c = base;

				c.mss = 536;
				c.topt_len = 40;
				c.flags = GSO_TCP_ACK | GSO_TCP_PSH;
				c.paylen = k ? 536 : 520;
				c.fill = gso_test_rand(rng);
				c.what = "table: payload <= mss < payload + options";
				add_case(cs, n, c);
			}
		}
	}
}

static uint32_t rnd(uint64_t *rng, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(gso_test_rand(rng) % ((uint64_t)hi - lo + 1));
}

static void random_cases(struct ccase *cs, unsigned *n, unsigned count, uint64_t *rng)
{
	/* A small pool of MSS values per run keeps gsoseg invocations few. */
	uint32_t pool[16] = { 536, 1220, 1380, 1448, 1460, 4096, 8948, 8960 };

	for (unsigned i = 8; i < 16; i++)
		pool[i] = rnd(rng, 536, 8960);
	for (unsigned i = 0; i < count; i++) {
		struct ccase c = { .what = "random" };
		uint32_t limit;

		c.proto = (uint8_t)rnd(rng, 0, P_COUNT - 1);
		c.mss = pool[rnd(rng, 0, 15)];
		if (IS_TCP(c.proto)) {
			c.flags = (uint8_t)((rnd(rng, 0, 15) ? GSO_TCP_ACK : 0) |
					    (rnd(rng, 0, 1) ? GSO_TCP_PSH : 0) |
					    (rnd(rng, 0, 7) ? 0 : GSO_TCP_FIN) |
					    (rnd(rng, 0, 7) ? 0 : GSO_TCP_ECE) |
					    (rnd(rng, 0, 7) ? 0 : GSO_TCP_CWR));
			c.topt_len = (uint8_t)(4 * rnd(rng, 0, 10));
		}
		if (IS_V4(c.proto)) {
			c.df = rnd(rng, 0, 3) != 0;
			c.ipopt_len = rnd(rng, 0, 7) ? 0 : (uint8_t)(4 * rnd(rng, 1, 10));
			c.ip_id = (uint16_t)gso_test_rand(rng);
		} else {
			c.flow = (uint32_t)gso_test_rand(rng) & 0xfffff;
		}
		c.tos = rnd(rng, 0, 1) ? 0 : (uint8_t)gso_test_rand(rng);
		limit = max_payload(&c) < 64000 ? max_payload(&c) : 64000;
		switch (rnd(rng, 0, 5)) {
		case 0: case 1:
			c.paylen = rnd(rng, 1, limit);
			break;
		case 2:
			c.paylen = rnd(rng, 1, 2 * c.mss < limit ? 2 * c.mss : limit);
			break;
		case 3: case 4:
			c.paylen = clamp_pay(&c, (int64_t)rnd(rng, 1, limit / c.mss) * c.mss +
						 rnd(rng, 0, 2) - 1);
			break;
		default:
			c.paylen = limit;
			break;
		}
		c.zero_csum = rnd(rng, 0, 31) == 0;
		if (rnd(rng, 0, 15) == 0)
			c.vlan_tci = (uint16_t)rnd(rng, 1, 0xffff);
		c.fill = gso_test_rand(rng);
		add_case(cs, n, c);
	}
}

/* ---- the kernel side ---- */

struct oracle {
	struct gso_testbed tb;
	int tx, rx;
	uint8_t *rxbuf;
	uint8_t *rxframe; /* the last frame received, its 802.1Q tag re-inserted */
	int capture_side;
};

static int ns_socket(const struct gso_testbed *tb, int side, int proto)
{
	int s, err = gso_testbed_enter(tb, side);

	if (err)
		return err;
	s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, proto);
	return s < 0 ? -errno : s;
}

/*
 * capture_side 1: the peer, what arrived over the veth.  0: the sending
 * side's own outgoing frames (PACKET_OUTGOING), which the kernel hands to
 * packet taps after segmentation, one by one; needed when a super-packet
 * makes more segments than the peer's backlog (netdev_max_backlog, 1000)
 * takes in one burst.
 */
static void oracle_setup(struct oracle *o, int capture_side)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int one = 1, rcvbuf = 64 << 20, err;

	memset(o, 0, sizeof(*o));
	o->tx = o->rx = -1;
	err = gso_testbed_create(&o->tb);
	cr_assert_eq(err, 0, "test-bed: %s", strerror(-err));
	for (int i = 0; i < 2; i++)
		cr_assert_eq(gso_testbed_sh(&o->tb, i, "ip link set %s mtu %d", o->tb.ifname[i],
					    VETH_MTU), 0, "setting MTU %d", VETH_MTU);
	/* Software GSO with checksums finished in software (reference section 8). */
	cr_assert_eq(gso_testbed_sh(&o->tb, 0, "ethtool -K %s tso off gso on tx off >/dev/null 2>&1",
				    o->tb.ifname[0]), 0, "ethtool -K tso off gso on tx off");
	cr_assert_eq(gso_testbed_sh(&o->tb, 0,
				    "ethtool -k %s | grep -Eq \"^(tx-udp-segmentation|tcp-segmentation-offload|"
				    "tx-checksumming): on\" && exit 1; exit 0",
				    o->tb.ifname[0]), 0,
		     "side a still offloads TSO/USO/checksums after ethtool -K");
	/* Merged frames on the receive side would hide the segmentation. */
	gso_testbed_sh(&o->tb, 1, "ethtool -K %s gro off >/dev/null 2>&1", o->tb.ifname[1]);

	o->tx = ns_socket(&o->tb, 0, 0);
	cr_assert_geq(o->tx, 0, "AF_PACKET tx socket: %s", strerror(-o->tx));
	cr_assert_eq(setsockopt(o->tx, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)), 0,
		     "PACKET_VNET_HDR: %s", strerror(errno));
	o->capture_side = capture_side;
	o->rx = ns_socket(&o->tb, capture_side, htons(ETH_P_ALL));
	cr_assert_geq(o->rx, 0, "AF_PACKET rx socket: %s", strerror(-o->rx));
	/* A whole 64 KiB super-packet's segments arrive in one burst. */
	if (setsockopt(o->rx, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(o->rx, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	ll.sll_ifindex = o->tb.ifindex[capture_side];
	cr_assert_eq(bind(o->rx, (struct sockaddr *)&ll, sizeof(ll)), 0, "bind rx: %s",
		     strerror(errno));
	/* The receive path moves an 802.1Q tag out of the frame into metadata. */
	cr_assert_eq(setsockopt(o->rx, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)), 0,
		     "PACKET_AUXDATA: %s", strerror(errno));
	o->rxbuf = malloc(RXBUF_LEN);
	cr_assert_not_null(o->rxbuf);
}

static void oracle_teardown(struct oracle *o)
{
	if (o->tx >= 0)
		close(o->tx);
	if (o->rx >= 0)
		close(o->rx);
	o->tx = o->rx = -1;
	free(o->rxbuf);
	o->rxbuf = NULL;
	gso_testbed_destroy(&o->tb);
}

/*
 * Send case `c`'s super-packet (built in `frame`) through the kernel with a
 * virtio_net_hdr from the library's encoder: gso_offload_describe() picks
 * GSO only when the payload exceeds the MSS (as the kernel does) and the
 * ECN bit for CWR, gso_offload_vnet() prepares the headers with the seed.
 * The prepared headers must equal the ones built here independently.
 * Returns 0, or -errno with *step naming what failed.
 */
static int oracle_send(struct oracle *o, const struct ccase *c, const uint8_t *frame, size_t len,
		       uint8_t *scratch, const char **step, size_t *hdr_diff)
{
	struct sockaddr_ll ll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(c->vlan_tci ? ETH_P_8021Q : IS_V4(c->proto) ? ETH_P_IP : ETH_P_IPV6),
		.sll_ifindex = o->tb.ifindex[0],
		.sll_halen = 6,
	};
	uint8_t *hdrs = scratch + GSO_VNET_HDR_LEN;
	struct gso_offload_req r;
	struct gso_vnet_hdr vh;
	struct gso_tmpl t;
	size_t poff, plen, i;
	int err;

	memcpy(ll.sll_addr, dst_mac, 6);
	*hdr_diff = SIZE_MAX;
	*step = "gso_pkt_parse";
	err = gso_pkt_parse(&t, frame, len, &poff, &plen);
	if (err)
		return err;
	*step = "gso_offload_describe";
	err = gso_offload_describe(&t, (uint32_t)plen, c->mss, 0, &r);
	if (err)
		return err;
	*step = "gso_offload_vnet";
	err = gso_offload_vnet(&r, &t, &vh, hdrs, GSO_MAX_HDR_LEN);
	if (err)
		return err;
	*step = "gso_vnet_hdr_encode";
	err = gso_vnet_hdr_encode(&vh, scratch, GSO_VNET_HDR_LEN);
	if (err)
		return err;
	for (i = 0; i < r.hdr_len && hdrs[i] == frame[i]; i++)
		;
	if (i < r.hdr_len || r.hdr_len != poff)
		*hdr_diff = i;
	memcpy(hdrs + r.hdr_len, frame + poff, plen);
	*step = "sendto";
	if (sendto(o->tx, scratch, GSO_VNET_HDR_LEN + r.hdr_len + plen, 0, (struct sockaddr *)&ll,
		   sizeof(ll)) < 0)
		return -errno;
	return 0;
}

/*
 * Next frame of ours that arrived on side b, within `wait_ms`, at
 * o->rxframe.  Returns its length and, in *idx, the case it belongs to (from
 * the source port), 0 on timeout.  Everything else on the link is skipped.
 */
static ssize_t oracle_recv(struct oracle *o, int wait_ms, unsigned *idx)
{
	for (;;) {
		struct pollfd pfd = { .fd = o->rx, .events = POLLIN };
		struct sockaddr_ll from;
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
		} ctl;
		struct iovec iov = { .iov_base = o->rxbuf + 4, .iov_len = RXBUF_LEN - 4 };
		struct msghdr msg = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov,
				      .msg_iovlen = 1, .msg_control = &ctl, .msg_controllen = sizeof(ctl) };
		const uint8_t *f, *l4;
		size_t l3 = 14;
		ssize_t n;
		uint16_t type;

		if (poll(&pfd, 1, wait_ms) <= 0)
			return 0;
		n = recvmsg(o->rx, &msg, MSG_DONTWAIT);
		if (n < 0 || (from.sll_pkttype == PACKET_OUTGOING) != (o->capture_side == 0) ||
		    n < 14 + 20 + 8)
			continue;
		o->rxframe = o->rxbuf + 4;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			struct tpacket_auxdata aux;

			if (cm->cmsg_level != SOL_PACKET || cm->cmsg_type != PACKET_AUXDATA)
				continue;
			memcpy(&aux, CMSG_DATA(cm), sizeof(aux));
			if (!(aux.tp_status & TP_STATUS_VLAN_VALID))
				continue;
			memmove(o->rxbuf, o->rxbuf + 4, 12);
			put16(o->rxbuf + 12, aux.tp_status & TP_STATUS_VLAN_TPID_VALID ? aux.tp_vlan_tpid
										 : ETH_P_8021Q);
			put16(o->rxbuf + 14, aux.tp_vlan_tci);
			o->rxframe = o->rxbuf;
			n += 4;
		}
		f = o->rxframe;
		type = (uint16_t)(f[12] << 8 | f[13]);
		if (type == ETH_P_8021Q) {
			l3 = 18;
			type = (uint16_t)(f[16] << 8 | f[17]);
		}
		if (n < (ssize_t)l3 + 20 + 8)
			continue;
		if (type == ETH_P_IP && !memcmp(f + l3 + 12, saddr4, 4))
			l4 = f + l3 + (f[l3] & 0xf) * 4;
		else if (type == ETH_P_IPV6 && n >= (ssize_t)l3 + 48 && !memcmp(f + l3 + 8, saddr6, 16))
			l4 = f + l3 + 40;
		else
			continue;
		if (l4 + 2 > f + n)
			continue;
		*idx = (unsigned)(l4[0] << 8 | l4[1]) - SPORT_BASE;
		return n;
	}
}

/* ---- the gsoseg side ---- */

struct frames {
	unsigned n;
	uint8_t **data;
	uint32_t *len;
};

static void frames_free(struct frames *fr)
{
	for (unsigned i = 0; i < fr->n; i++)
		free(fr->data[i]);
	free(fr->data);
	free(fr->len);
	memset(fr, 0, sizeof(*fr));
}

static void frames_add(struct frames *fr, const uint8_t *p, uint32_t len)
{
	fr->data = realloc(fr->data, (fr->n + 1) * sizeof(*fr->data));
	fr->len = realloc(fr->len, (fr->n + 1) * sizeof(*fr->len));
	cr_assert(fr->data && fr->len);
	fr->data[fr->n] = malloc(len ? len : 1);
	cr_assert_not_null(fr->data[fr->n]);
	memcpy(fr->data[fr->n], p, len);
	fr->len[fr->n++] = len;
}

/* Run gsoseg; returns its exit status (or -errno), its stderr in errfile. */
static int run_gsoseg(uint32_t mss, const char *in, const char *out, const char *errfile)
{
	char mss_s[16];
	char *argv[] = { (char *)"gsoseg", (char *)"--quiet", (char *)"--mss", mss_s,
			 (char *)in, (char *)out, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, err;

	snprintf(mss_s, sizeof(mss_s), "%" PRIu32, mss);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	err = posix_spawn(&pid, gso_test_build_path("tools/gsoseg"), &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err)
		return -err;
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	return buf;
}

/* ---- the test ---- */

struct tally {
	unsigned cases[P_COUNT], frames[P_COUNT], bad[P_COUNT];
	bool *case_bad; /* per case: counted in bad[] already */
	unsigned printed;
};

static void report(struct tally *t, const struct ccase *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void report(struct tally *t, const struct ccase *c, const char *fmt, ...)
{
	char d[512], m[512];
	va_list ap;

	if (!t->case_bad[c->idx]) {
		t->case_bad[c->idx] = true;
		t->bad[c->proto]++;
	}
	if (t->printed++ >= 25)
		return;
	describe(c, d, sizeof(d));
	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	fprintf(stderr, "conformance: MISMATCH %s: %s\n", d, m);
}

static void compare_frame(struct tally *t, const struct ccase *c, unsigned i,
			  const uint8_t *kern, size_t klen, const uint8_t *ours, size_t olen)
{
	size_t n = klen < olen ? klen : olen, off;

	for (off = 0; off < n && kern[off] == ours[off]; off++)
		;
	if (off == n && klen == olen)
		return;
	if (off == n)
		report(t, c, "frame %u: length kernel %zu, gsoseg %zu (equal up to there)", i, klen,
		       olen);
	else
		report(t, c, "frame %u (length kernel %zu, gsoseg %zu): first difference at byte "
		       "%zu: kernel 0x%02x, gsoseg 0x%02x", i, klen, olen, off, kern[off], ours[off]);
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	char *end;
	uint64_t x;

	if (!v || !*v)
		return dflt;
	errno = 0;
	x = strtoull(v, &end, 0);
	cr_assert(!errno && !*end, "%s=%s is not a number", name, v);
	return x;
}

static uint64_t pick_seed(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return env_u64("GSO_CONFORMANCE_SEED",
		       ((uint64_t)now.tv_sec * 1000003u ^ (uint64_t)now.tv_nsec) & 0xffffffffffffull);
}

/* Static so that the .fini hook removes the test-bed even when an assert ends the test. */
static struct oracle oracle = { .tx = -1, .rx = -1 };
static char tmpdir[64];

struct run {
	struct ccase *cs;
	unsigned n;
	bool *done;
	struct tally t;
	unsigned frames, stray;
	uint8_t *frame, *scratch;
	char *gsoseg_err; /* stderr of the current gsoseg run */
};

static void run_init(struct run *r)
{
	memset(r, 0, sizeof(*r));
	r->cs = calloc(MAX_CASES, sizeof(*r->cs));
	r->done = calloc(MAX_CASES, sizeof(*r->done));
	r->t.case_bad = calloc(MAX_CASES, sizeof(*r->t.case_bad));
	r->frame = malloc(RXBUF_LEN);
	r->scratch = malloc(RXBUF_LEN);
	cr_assert(r->cs && r->done && r->t.case_bad && r->frame && r->scratch);
}

static void run_free(struct run *r)
{
	free(r->cs);
	free(r->done);
	free(r->t.case_bad);
	free(r->frame);
	free(r->scratch);
	free(r->gsoseg_err);
}

/* gsoseg the cases of one MSS (one run, timestamps = case numbers) into ours[]. */
static void gsoseg_group(struct run *r, struct oracle *o, unsigned first, struct frames *ours)
{
	uint32_t mss = r->cs[first].mss;
	char in[128], out[128], errf[128], ebuf[PCAP_ERRBUF_SIZE];
	pcap_t *dead, *rd;
	pcap_dumper_t *d;
	int st;

	snprintf(in, sizeof(in), "%s/in-%" PRIu32 ".pcap", tmpdir, mss);
	snprintf(out, sizeof(out), "%s/out-%" PRIu32 ".pcap", tmpdir, mss);
	snprintf(errf, sizeof(errf), "%s/err-%" PRIu32 ".txt", tmpdir, mss);
	dead = pcap_open_dead(DLT_EN10MB, 262144);
	d = pcap_dump_open(dead, in);
	cr_assert_not_null(d, "%s: %s", in, pcap_geterr(dead));
	for (unsigned i = first, rec = 0; i < r->n; i++) {
		struct pcap_pkthdr h = { 0 };
		size_t l4;

		if (r->cs[i].mss != mss)
			continue;
		r->cs[i].rec = ++rec;
		h.caplen = h.len = (bpf_u_int32)build_frame(&r->cs[i], o->tb.mac[0], r->frame, &l4);
		h.ts.tv_sec = r->cs[i].idx;
		pcap_dump((u_char *)d, &h, r->frame);
	}
	pcap_dump_close(d);
	pcap_close(dead);

	st = run_gsoseg(mss, in, out, errf);
	cr_assert(st == 0 || st == 1, "gsoseg failed to run (status %d): %s", st, slurp(errf));
	free(r->gsoseg_err);
	r->gsoseg_err = strdup(slurp(errf));
	cr_assert_not_null(r->gsoseg_err);

	rd = pcap_open_offline(out, ebuf);
	cr_assert_not_null(rd, "%s: %s", out, ebuf);
	for (;;) {
		struct pcap_pkthdr *h;
		const u_char *p;

		if (pcap_next_ex(rd, &h, &p) != 1)
			break;
		cr_assert_lt((unsigned long)h->ts.tv_sec, r->n, "gsoseg changed a timestamp");
		frames_add(&ours[h->ts.tv_sec], p, h->caplen);
	}
	pcap_close(rd);
	unlink(in);
	unlink(out);
	unlink(errf);
}

/* Send one case through the kernel and compare what it puts out with ours. */
static void kernel_case(struct run *r, struct oracle *o, const struct ccase *c,
			const struct frames *ours)
{
	const char *step;
	size_t l4, hdr_diff, flen = build_frame(c, o->tb.mac[0], r->frame, &l4);
	unsigned got = 0, who;
	ssize_t len;
	int err;

	err = oracle_send(o, c, r->frame, flen, r->scratch, &step, &hdr_diff);
	if (c->refused) {
		if (!err || ours->n)
			report(&r->t, c, "expected both to refuse it: kernel %s, gsoseg wrote %u frames",
			       err ? "refused" : "accepted", ours->n);
		return;
	}
	if (!ours->n) {
		char tag[32];
		const char *line;

		snprintf(tag, sizeof(tag), "record %u:", c->rec);
		line = strstr(r->gsoseg_err, tag);
		report(&r->t, c, "gsoseg wrote no frame: %.*s", line ? (int)strcspn(line, "\n") : 0,
		       line ? line : "");
	}
	if (hdr_diff != SIZE_MAX)
		report(&r->t, c, "headers from gso_offload_vnet differ from the reference "
		       "super-packet at byte %zu", hdr_diff);
	if (err) {
		report(&r->t, c, "sending through the kernel failed: %s: %s", step, strerror(-err));
		return;
	}
	while (got < ours->n && (len = oracle_recv(o, FRAME_WAIT_MS, &who)) > 0) {
		if (who != c->idx) {
			r->stray++;
			if (who < r->n)
				report(&r->t, &r->cs[who], "an extra frame (%zd bytes) arrived while "
				       "case %u was running", len, c->idx);
			continue;
		}
		compare_frame(&r->t, c, got, o->rxframe, (size_t)len, ours->data[got], ours->len[got]);
		got++;
	}
	r->frames += got;
	r->t.frames[c->proto] += got;
	if (got < ours->n)
		report(&r->t, c, "kernel sent %u frames, gsoseg wrote %u", got, ours->n);
}

/* Run every case (grouped by MSS), then check that nothing else arrived. */
static void run_cases(struct run *r, struct oracle *o, uint64_t seed)
{
	unsigned bad = 0;

	for (unsigned first = 0; first < r->n; first++) {
		struct frames *ours;

		if (r->done[first])
			continue;
		ours = calloc(r->n, sizeof(*ours));
		cr_assert_not_null(ours);
		gsoseg_group(r, o, first, ours);
		for (unsigned i = first; i < r->n; i++) {
			if (r->cs[i].mss != r->cs[first].mss)
				continue;
			r->done[i] = true;
			r->t.cases[r->cs[i].proto]++;
			kernel_case(r, o, &r->cs[i], &ours[i]);
		}
		for (unsigned i = 0; i < r->n; i++)
			frames_free(&ours[i]);
		free(ours);
	}
	for (;;) {
		unsigned who;
		ssize_t len = oracle_recv(o, 50, &who);

		if (len <= 0)
			break;
		r->stray++;
		if (who < r->n)
			report(&r->t, &r->cs[who], "an extra frame (%zd bytes) after the last case", len);
	}
	for (int p = 0; p < P_COUNT; p++) {
		fprintf(stderr, "conformance: %s: %u cases, %u frames compared, %u mismatching cases\n",
			proto_name[p], r->t.cases[p], r->t.frames[p], r->t.bad[p]);
		bad += r->t.bad[p];
	}
	fprintf(stderr, "conformance: seed %" PRIu64 ", %u cases, %u frames, %u mismatches, "
		"%u stray frames\n", seed, r->n, r->frames, bad, r->stray);
	for (int p = 0; p < P_COUNT; p++)
		cr_expect_gt(r->t.frames[p], 0, "no %s frame was compared", proto_name[p]);
	cr_assert_eq(bad, 0, "%u cases differ from the kernel (seed %" PRIu64 "); details above",
		     bad, seed);
}

static void start(int capture_side)
{
	gso_test_require_root();
	cr_assert_eq(access(gso_test_build_path("tools/gsoseg"), X_OK), 0,
		     "%s not built (make tools)", gso_test_build_path("tools/gsoseg"));
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gso-conformance-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
	oracle_setup(&oracle, capture_side);
}

static void finish(void)
{
	oracle_teardown(&oracle);
	if (tmpdir[0])
		rmdir(tmpdir);
	tmpdir[0] = 0;
}

/* MSS 536..8960: boundary table + random cases, captured on the peer. */
Test(conformance, kernel_gso_oracle, .fini = finish, .timeout = 300)
{
	uint64_t seed = pick_seed(), rng = seed;
	unsigned n_random = (unsigned)env_u64("GSO_CONFORMANCE_CASES", DEFAULT_RANDOM_CASES), n_table;
	struct run r;

	cr_assert_leq(n_random, MAX_CASES - 400, "GSO_CONFORMANCE_CASES at most %u", MAX_CASES - 400);
	run_init(&r);
	table_cases(r.cs, &r.n, &rng);
	n_table = r.n;
	random_cases(r.cs, &r.n, n_random, &rng);
	fprintf(stderr, "conformance: seed %" PRIu64 " (GSO_CONFORMANCE_SEED), %u table + %u random "
		"cases (GSO_CONFORMANCE_CASES)\n", seed, n_table, n_random);
	start(1);
	run_cases(&r, &oracle, seed);
	run_free(&r);
}

/*
 * MSS 1..535: up to a few thousand segments per super-packet, more than the
 * peer's backlog takes in one burst, so captured on the sending side.  UDP
 * at GSO_UDP_MAX_SEGS + 1 segments must be refused by both.
 */
Test(conformance, small_mss_sending_side, .fini = finish, .timeout = 300)
{
	static const uint32_t mss_fixed[] = { 1, 2, 7, 8, 64, 100, 255, 535 };
	/* Same seed as the other test, a different stream. */
	uint64_t seed = pick_seed(), rng = seed ^ 0x5a11u;
	unsigned n_random = (unsigned)env_u64("GSO_CONFORMANCE_CASES", DEFAULT_RANDOM_CASES) / 20;
	struct run r;

	run_init(&r);
	for (unsigned i = 0; i < n_random + 4 * 8 * 2; i++) {
		struct ccase c = { .what = "small MSS" };
		bool fixed = i < 4 * 8 * 2;

		c.proto = (uint8_t)(fixed ? i / 16 : rnd(&rng, 0, P_COUNT - 1));
		c.mss = fixed ? mss_fixed[(i / 2) % 8] : rnd(&rng, 1, 535);
		if (IS_TCP(c.proto)) {
			c.flags = GSO_TCP_ACK | (rnd(&rng, 0, 1) ? GSO_TCP_PSH | GSO_TCP_FIN : 0) |
				  (rnd(&rng, 0, 3) ? 0 : GSO_TCP_CWR);
			c.topt_len = (uint8_t)(4 * rnd(&rng, 0, 10));
		}
		c.df = rnd(&rng, 0, 1);
		c.ip_id = (uint16_t)gso_test_rand(&rng);
		if (IS_TCP(c.proto)) {
			/* At most ~1200 segments, so one case stays within a few ms. */
			uint32_t hi = c.mss * 1200u < max_payload(&c) ? c.mss * 1200u : max_payload(&c);

			c.paylen = fixed && i % 2 ? hi : rnd(&rng, 1, hi);
		} else {
			uint32_t hi = c.mss * 128u < max_payload(&c) ? c.mss * 128u : max_payload(&c);

			c.paylen = fixed && i % 2 ? hi : rnd(&rng, 1, hi);
			/* One past the kernel's UDP segment limit. */
			if (fixed && i % 2 && c.mss * 129u <= max_payload(&c)) {
				c.paylen = c.mss * 128u + 1;
				c.refused = true;
				c.what = "small MSS: UDP with 129 segments";
			}
		}
		c.zero_csum = rnd(&rng, 0, 15) == 0;
		c.fill = gso_test_rand(&rng);
		add_case(r.cs, &r.n, c);
	}
	fprintf(stderr, "conformance: small MSS: seed %" PRIu64 " (GSO_CONFORMANCE_SEED), %u cases "
		"(GSO_CONFORMANCE_CASES / 20 random)\n", seed, r.n);
	start(0);
	run_cases(&r, &oracle, seed);
	run_free(&r);
}
