/*
 * Offload descriptors: the neutral request and its kernel-equivalent
 * rejections, known-answer bytes for every encoder, decode(encode(x)) == x,
 * and the checksum-seed conventions, each verified by finishing the
 * checksum the way its consumer does and comparing with a full software
 * checksum computed here, independently of libgso's checksum code.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <gso/gso.h>
#include "gso_test.h"
#include "ref_csum.h"

/* ---- reference arithmetic: byte order here, the RFC 1071 sum in ref_csum.h ---- */

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static void wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)rd16(p) << 16 | rd16(p + 2); }
static void wr32(uint8_t *p, uint32_t v) { wr16(p, (uint16_t)(v >> 16)); wr16(p + 2, (uint16_t)v); }

/* Pseudo-header sum of the frame's addresses, `proto` and `l4_len`. */
static uint32_t ref_pseudo(const uint8_t *f, unsigned l3_off, int v4, uint8_t proto, uint32_t l4_len)
{
	uint32_t s = 0;

	if (v4)
		s = ref_sum(f + l3_off + 12, 8, 0);
	else
		s = ref_sum(f + l3_off + 8, 32, 0);
	return s + proto + (l4_len >> 16) + (l4_len & 0xffff);
}

/* The L4 checksum a full software implementation would store. */
static uint16_t ref_l4_csum(const uint8_t *f, size_t len, unsigned l3_off, unsigned l4_off,
			    int v4, uint8_t proto, unsigned check_off)
{
	uint8_t save[2];
	uint32_t s;

	memcpy(save, f + l4_off + check_off, 2);
	memset((uint8_t *)f + l4_off + check_off, 0, 2);
	s = ref_pseudo(f, l3_off, v4, proto, (uint32_t)(len - l4_off));
	s = ref_sum(f + l4_off, len - l4_off, s);
	memcpy((uint8_t *)f + l4_off + check_off, save, 2);
	return (uint16_t)~ref_fold(s);
}

/* What a device that finishes a seeded checksum does: sum from csum_start
 * to the end, seed included, complement, store. */
static uint16_t dev_finish(const uint8_t *f, size_t len, unsigned start)
{
	return (uint16_t)~ref_fold(ref_sum(f + start, len - start, 0));
}

/* ---- templates ---- */

struct tcase {
	char name[24];
	uint8_t l3, l4, vlan, tcp_opts, ip_opts;
	uint8_t cwr;
};

static const uint8_t ts_opts[12] = { 1, 1, 8, 10, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 7 };
static const uint8_t ip_opts4[4] = { 1, 1, 1, 0 };

static void mk_tmpl(struct gso_tmpl *t, const struct tcase *c)
{
	struct gso_tmpl_fields f = {
		.sz = sizeof(f), .l3 = c->l3, .l4 = c->l4, .has_vlan = c->vlan,
		.vlan_tci = c->vlan ? 0x0064 : 0, .sport = 0xc001, .dport = 0x1389,
	};

	memcpy(f.eth_dst, "\x02\x11\x22\x33\x44\x55", 6);
	memcpy(f.eth_src, "\x02\x66\x77\x88\x99\xaa", 6);
	if (c->l3 == GSO_L3_IPV4) {
		memcpy(f.saddr, "\xc0\xa8\x01\x02", 4);
		memcpy(f.daddr, "\xc0\xa8\x01\xfe", 4);
		f.df = true;
		f.ip_id = 0xfffe;
		f.ip_opts = c->ip_opts ? ip_opts4 : NULL;
		f.ip_opts_len = c->ip_opts ? 4 : 0;
	} else {
		for (int i = 0; i < 16; i++) {
			f.saddr[i] = (uint8_t)(0x20 + i);
			f.daddr[i] = (uint8_t)(0xf0 - i);
		}
		f.flow_label = 0xabcde;
	}
	f.tos = c->cwr ? 0x02 : 0;
	if (c->l4 == GSO_L4_TCP) {
		f.seq = 0xfffff000;
		f.ack = 0x01020304;
		f.window = 0x7fff;
		f.tcp_flags = GSO_TCP_ACK | GSO_TCP_PSH | (c->cwr ? GSO_TCP_CWR : 0);
		f.tcp_opts = c->tcp_opts ? ts_opts : NULL;
		f.tcp_opts_len = c->tcp_opts ? 12 : 0;
	}
	cr_assert_eq(gso_tmpl__build(t, &f), 0, "%s", c->name);
}

static const struct tcase tcases[] = {
	{ "v4 tcp", 4, 6, 0, 0, 0, 0 },      { "v4 tcp ts vlan", 4, 6, 1, 12, 0, 0 },
	{ "v4 tcp ipopt", 4, 6, 0, 12, 4, 0 }, { "v4 tcp cwr", 4, 6, 0, 0, 0, 1 },
	{ "v6 tcp", 6, 6, 0, 12, 0, 0 },     { "v6 tcp vlan cwr", 6, 6, 1, 0, 0, 1 },
	{ "v4 udp", 4, 17, 0, 0, 0, 0 },     { "v4 udp vlan", 4, 17, 1, 0, 4, 0 },
	{ "v6 udp", 6, 17, 0, 0, 0, 0 },     { "v6 udp vlan", 6, 17, 1, 0, 0, 0 },
};
#define N_TC (sizeof(tcases) / sizeof(tcases[0]))

static uint8_t frame[70000];
static uint8_t payload[70000];

static void fill_payload(uint64_t seed)
{
	gso_test_fill_random(payload, sizeof(payload), &seed);
}

/* ===================================================================== */
/* describe                                                               */
/* ===================================================================== */

Test(offload, describe_fields)
{
	struct gso_tmpl t;
	struct gso_offload_req r = { .sz = sizeof(r) };

	mk_tmpl(&t, &tcases[1]); /* v4 tcp ts vlan: 18 + 20 + 32 */
	cr_assert_eq(gso_offload_describe(&t, 4000, 1448, 0, &r), 0);
	cr_assert_eq(r.type, GSO_OFFLOAD_TCPV4);
	cr_assert_eq(r.segs, 3);
	cr_assert_eq(r.mss, 1448);
	cr_assert_eq(r.payload_len, 4000);
	cr_assert_eq(r.l2_len, 18);
	cr_assert_eq(r.l3_len, 20);
	cr_assert_eq(r.l4_len, 32);
	cr_assert_eq(r.hdr_len, 70);
	cr_assert_eq(r.csum_start, 38);
	cr_assert_eq(r.csum_offset, 16);
	cr_assert_eq(r.flags, GSO_OFFLOAD_F_IPV4);

	mk_tmpl(&t, &tcases[5]); /* v6 tcp vlan cwr */
	cr_assert_eq(gso_offload_describe(&t, 2897, 1448, 0, &r), 0);
	cr_assert_eq(r.type, GSO_OFFLOAD_TCPV6);
	cr_assert_eq(r.segs, 3);
	cr_assert_eq(r.flags, GSO_OFFLOAD_F_ECN);
	cr_assert_eq(r.csum_start, 58);

	mk_tmpl(&t, &tcases[8]); /* v6 udp */
	cr_assert_eq(gso_offload_describe(&t, 1201, 1200, 0, &r), 0);
	cr_assert_eq(r.type, GSO_OFFLOAD_UDP_L4);
	cr_assert_eq(r.segs, 2);
	cr_assert_eq(r.csum_offset, 6);
	cr_assert_eq(r.l4_len, 8);
}

/* Payload that fits one MSS is a plain packet, as Linux decides. */
Test(offload, describe_not_gso)
{
	struct gso_tmpl t;
	struct gso_offload_req r = { .sz = sizeof(r) };

	for (size_t i = 0; i < N_TC; i++) {
		mk_tmpl(&t, &tcases[i]);
		for (uint32_t pay = 0; pay <= 3; pay++) {
			cr_assert_eq(gso_offload_describe(&t, 1000 + pay - 2, 1000, 0, &r), 0);
			cr_assert_eq(r.type, pay <= 2 ? GSO_OFFLOAD_NONE : r.type, "%s", tcases[i].name);
			cr_assert_eq(r.segs, pay <= 2 ? 1u : 2u);
		}
		cr_assert_eq(gso_offload_describe(&t, 0, 1, 0, &r), 0);
		cr_assert_eq(r.type, GSO_OFFLOAD_NONE);
		cr_assert_eq(r.segs, 1);
	}
	/* payload <= mss < payload + TCP options: still NONE (Linux would drop
	 * it as GSO, offload-reference section 8) */
	mk_tmpl(&t, &tcases[1]);
	cr_assert_eq(gso_offload_describe(&t, 1448, 1448, 0, &r), 0);
	cr_assert_eq(r.type, GSO_OFFLOAD_NONE);
}

struct rej {
	char name[40];
	uint8_t tc;        /* index into tcases */
	uint32_t payload, mss, flags;
	int err;
};

static const struct rej rejs[] = {
	/* what virtio_net_hdr_to_skb refuses, same errno */
	{ "mss 0", 0, 100, 0, 0, -EINVAL },
	{ "mss 0xffff (GSO_BY_FRAGS)", 0, 100000 - 100000 + 60000, 0xffff, 0, -EINVAL },
	{ "mss 0x10000", 6, 100, 0x10000, 0, -EINVAL },
	/* more segments than the limit: gso_segment()'s errno (the kernel's is EINVAL) */
	{ "udp 129 segments", 6, 100 * 128 + 1, 100, 0, -E2BIG },
	{ "udp6 129 segments", 8, 8 * 128 + 1, 8, 0, -E2BIG },
	{ "udp 65 segments, max64", 6, 100 * 64 + 1, 100, GSO_OFFLOAD_F_UDP_MAX64, -E2BIG },
	/* our own limits */
	{ "v4 tcp datagram 65536", 0, 65536 - 40, 1448, 0, -EMSGSIZE },
	{ "v6 udp datagram 65536", 8, 65536 - 48, 65534, 0, -EMSGSIZE },
	{ "v4 tcp ts vlan 65536", 1, 65536 - 52, 1000, 0, -EMSGSIZE },
	{ "unknown flag", 0, 100, 100, 1u << 20, -EINVAL },
	{ "output-only flag ECN", 0, 100, 100, GSO_OFFLOAD_F_ECN, -EINVAL },
	{ "output-only flag IPV4", 0, 100, 100, GSO_OFFLOAD_F_IPV4, -EINVAL },
};

static const struct rej accepts[] = {
	{ "udp 128 segments", 6, 100 * 128, 100, 0, 0 },
	{ "udp 64 segments, max64", 6, 100 * 64, 100, GSO_OFFLOAD_F_UDP_MAX64, 0 },
	{ "mss 1", 0, 65495, 1, 0, 0 },
	{ "mss 65534", 8, 65535 - 48, 65534, 0, 0 },
	{ "v4 tcp datagram 65535", 0, 65535 - 40, 1448, 0, 0 },
	{ "fixedid v4 tcp DF", 0, 3000, 1000, GSO_OFFLOAD_F_FIXEDID, 0 },
	/* software GSO takes these; no device segments with them (the encoders say -ENOTSUP) */
	{ "fixedid on udp with DF", 6, 3000, 1000, GSO_OFFLOAD_F_FIXEDID, 0 },
	{ "fixedid on v6 (no effect)", 4, 3000, 1000, GSO_OFFLOAD_F_FIXEDID, 0 },
	{ "udp big payload, one segment", 6, 65507, 65507, 0, 0 },
};

static void describe_rejects_one(const struct rej *c)
{
	struct gso_tmpl t;
	struct gso_offload_req r = { .sz = sizeof(r) }, before = { .sz = sizeof(before) };

	mk_tmpl(&t, &tcases[c->tc]);
	memset(&r, 0x5a, sizeof(r));
	before = r;
	cr_assert_eq(gso_offload_describe(&t, c->payload, c->mss, c->flags, &r), c->err, "%s", c->name);
	cr_assert_arr_eq(&r, &before, sizeof(r), "%s: request written on error", c->name);
}

Test(offload, describe_rejects)
{
	for (size_t i = 0; i < sizeof(rejs) / sizeof(rejs[0]); i++)
		describe_rejects_one(&rejs[i]);
}

static void describe_accepts_one(const struct rej *c)
{
	struct gso_tmpl t;
	struct gso_offload_req r = { .sz = sizeof(r) };

	mk_tmpl(&t, &tcases[c->tc]);
	cr_assert_eq(gso_offload_describe(&t, c->payload, c->mss, c->flags, &r), 0, "%s", c->name);
	cr_assert_eq(r.segs, c->payload <= c->mss ? 1 : (c->payload + c->mss - 1) / c->mss);
	cr_assert_eq(r.flags & GSO_OFFLOAD_F_IN_MASK, c->flags);
}

Test(offload, describe_accepts)
{
	for (size_t i = 0; i < sizeof(accepts) / sizeof(accepts[0]); i++)
		describe_accepts_one(&accepts[i]);
}

Test(offload, describe_bad_args)
{
	struct gso_tmpl t;
	struct gso_offload_req r = { .sz = sizeof(r) };

	mk_tmpl(&t, &tcases[0]);
	cr_assert_eq(gso_offload_describe(NULL, 10, 10, 0, &r), -EINVAL);
	cr_assert_eq(gso_offload_describe(&t, 10, 10, 0, NULL), -EINVAL);
	/* FIXEDID needs DF */
	t.hdr[t.l3_off + 6] &= (uint8_t)~0x40;
	cr_assert_eq(gso_offload_describe(&t, 3000, 1000, GSO_OFFLOAD_F_FIXEDID, &r), -EINVAL);
	/* a template whose offsets contradict themselves */
	mk_tmpl(&t, &tcases[0]);
	t.hdr_len++;
	cr_assert_eq(gso_offload_describe(&t, 3000, 1000, 0, &r), -EINVAL);
	mk_tmpl(&t, &tcases[0]);
	t.l3 = 5;
	cr_assert_eq(gso_offload_describe(&t, 3000, 1000, 0, &r), -EINVAL);
}

/* ===================================================================== */
/* virtio_net_hdr                                                         */
/* ===================================================================== */

/* Expected bytes derived by hand from offload-reference section 3: u8 flags,
 * u8 gso_type, then le16 hdr_len, gso_size, csum_start, csum_offset
 * (and le16 num_buffers in the 12-byte form). */
Test(offload, vnet_known_answer)
{
	struct gso_tmpl t;
	struct gso_offload_req r = { .sz = sizeof(r) };
	struct gso_vnet_hdr h;
	uint8_t hdr[256], out[12];

	/* IPv4/TCP, 14+20+20 = 54 = 0x36 header bytes, csum_start 34 = 0x22,
	 * MSS 1448 = 0x05a8, NEEDS_CSUM, TCPV4. */
	mk_tmpl(&t, &tcases[0]);
	cr_assert_eq(gso_offload_describe(&t, 4000, 1448, 0, &r), 0);
	cr_assert_eq(gso_offload_vnet(&r, &t, &h, hdr, sizeof(hdr)), 0);
	cr_assert_eq(gso_vnet_hdr_encode(&h, out, 10), 0);
	cr_assert_arr_eq(out, "\x01\x01\x36\x00\xa8\x05\x22\x00\x10\x00", 10);
	memset(out, 0xee, sizeof(out));
	cr_assert_eq(gso_vnet_hdr_encode(&h, out, 12), 0);
	cr_assert_arr_eq(out, "\x01\x01\x36\x00\xa8\x05\x22\x00\x10\x00\x00\x00", 12);

	/* same with CWR: gso_type gets the ECN bit, 0x81 */
	mk_tmpl(&t, &tcases[3]);
	cr_assert_eq(gso_offload_describe(&t, 4000, 1448, 0, &r), 0);
	cr_assert_eq(gso_offload_vnet(&r, &t, &h, hdr, sizeof(hdr)), 0);
	cr_assert_eq(gso_vnet_hdr_encode(&h, out, 10), 0);
	cr_assert_arr_eq(out, "\x01\x81\x36\x00\xa8\x05\x22\x00\x10\x00", 10);

	/* IPv6/TCP with VLAN and CWR: 18+40+20 = 78 = 0x4e, csum_start 58 =
	 * 0x3a, MSS 1220 = 0x04c4, TCPV6|ECN = 0x84. */
	mk_tmpl(&t, &tcases[5]);
	cr_assert_eq(gso_offload_describe(&t, 5000, 1220, 0, &r), 0);
	cr_assert_eq(gso_offload_vnet(&r, &t, &h, hdr, sizeof(hdr)), 0);
	cr_assert_eq(gso_vnet_hdr_encode(&h, out, 10), 0);
	cr_assert_arr_eq(out, "\x01\x84\x4e\x00\xc4\x04\x3a\x00\x10\x00", 10);

	/* IPv6/UDP: 14+40+8 = 62 = 0x3e, csum_start 54 = 0x36, offset 6,
	 * MSS 1200 = 0x04b0, UDP_L4 = 5. */
	mk_tmpl(&t, &tcases[8]);
	cr_assert_eq(gso_offload_describe(&t, 12000, 1200, 0, &r), 0);
	cr_assert_eq(gso_offload_vnet(&r, &t, &h, hdr, sizeof(hdr)), 0);
	cr_assert_eq(gso_vnet_hdr_encode(&h, out, 10), 0);
	cr_assert_arr_eq(out, "\x01\x05\x3e\x00\xb0\x04\x36\x00\x06\x00", 10);

	/* A single packet: gso_type NONE, gso_size 0, checksum offload only. */
	mk_tmpl(&t, &tcases[6]);
	cr_assert_eq(gso_offload_describe(&t, 100, 1472, 0, &r), 0);
	cr_assert_eq(gso_offload_vnet(&r, &t, &h, hdr, sizeof(hdr)), 0);
	cr_assert_eq(gso_vnet_hdr_encode(&h, out, 10), 0);
	cr_assert_arr_eq(out, "\x01\x00\x2a\x00\x00\x00\x22\x00\x06\x00", 10);
}

Test(offload, vnet_roundtrip)
{
	uint64_t s = 42;

	for (int i = 0; i < 2000; i++) {
		struct gso_vnet_hdr a, b;
		uint8_t out[12];
		size_t len = i & 1 ? 12 : 10;

		gso_test_fill_random(&a, sizeof(a), &s);
		memset(&b, 0, sizeof(b));
		a = (struct gso_vnet_hdr){ a.flags, a.gso_type, a.hdr_len, a.gso_size, a.csum_start,
					   a.csum_offset, len == 12 ? a.num_buffers : 0 };
		cr_assert_eq(gso_vnet_hdr_encode(&a, out, len), 0);
		cr_assert_eq(gso_vnet_hdr_decode(out, len, &b), 0);
		cr_assert_arr_eq(&a, &b, sizeof(a));
	}
	struct gso_vnet_hdr a = { .num_buffers = 1 };
	uint8_t out[12];
	cr_assert_eq(gso_vnet_hdr_encode(&a, out, 10), -EINVAL);
	cr_assert_eq(gso_vnet_hdr_encode(&a, out, 11), -EINVAL);
	cr_assert_eq(gso_vnet_hdr_decode(out, 24, &a), -EINVAL);
	cr_assert_eq(gso_vnet_hdr_encode(NULL, out, 10), -EINVAL);
}

/* The header copy: whole-packet lengths, valid IPv4 checksum, and a seed
 * that a device finishing from csum_start turns into the full checksum. */
Test(offload, vnet_seed_finishes)
{
	fill_payload(7);
	for (size_t i = 0; i < N_TC; i++) {
		static const uint32_t pays[] = { 1, 1447, 1449, 4001, 20000, 65000 };
		struct gso_tmpl t, before;

		mk_tmpl(&t, &tcases[i]);
		before = t;
		for (size_t k = 0; k < sizeof(pays) / sizeof(pays[0]); k++) {
			struct gso_offload_req r = { .sz = sizeof(r) };
			struct gso_vnet_hdr h;
			uint32_t pay = pays[k];
			int v4 = t.l3 == 4;

			if (pay + t.hdr_len - t.l3_off > 65535 || (t.l4 == 17 && pay > 1448u * 128))
				continue;
			cr_assert_eq(gso_offload_describe(&t, pay, 1448, 0, &r), 0);
			cr_assert_eq(gso_offload_vnet(&r, &t, &h, frame, r.hdr_len), 0, "%s", tcases[i].name);
			cr_assert_arr_eq(&t, &before, sizeof(t), "template modified");
			memcpy(frame + r.hdr_len, payload, pay);
			size_t len = r.hdr_len + pay;
			cr_assert_eq(gso_vnet_hdr_check(&h, len), 0, "%s %u", tcases[i].name, pay);

			/* lengths of the whole super-packet */
			size_t off = 0, plen = 0;
			struct gso_tmpl p;
			cr_assert_eq(gso_tmpl__parse_pkt(&p, frame, len, &off, &plen), 0, "%s", tcases[i].name);
			cr_assert_eq(plen, pay);
			if (v4)
				cr_assert_eq(ref_fold(ref_sum(frame + t.l3_off, r.l3_len, 0)), 0xffff,
					     "IPv4 header checksum");
			/* seed + data sum == full software checksum */
			uint16_t want = ref_l4_csum(frame, len, t.l3_off, t.l4_off, v4, t.l4, r.csum_offset);
			uint16_t got = dev_finish(frame, len, h.csum_start);
			cr_assert_eq(got, want, "%s pay %u: %04x != %04x", tcases[i].name, pay, got, want);
			/* and it is the pseudo-header sum with the whole L4 length */
			uint16_t seed = rd16(frame + t.l4_off + r.csum_offset);
			cr_assert_eq(seed, ref_fold(ref_pseudo(frame, t.l3_off, v4, t.l4,
							       (uint32_t)(len - t.l4_off))));
		}
	}
}

struct vcheck {
	char name[40];
	struct gso_vnet_hdr h;
	uint32_t frame_len;
	int err;
};

#define NC GSO_VNET_HDR_F_NEEDS_CSUM
static const struct vcheck vchecks[] = {
	{ "good tcpv4", { NC, 1, 54, 1448, 34, 16, 0 }, 4054, 0 },
	{ "good tcpv4 ecn", { NC, 0x81, 54, 1448, 34, 16, 0 }, 4054, 0 },
	{ "good udp_l4 128 segs", { NC, 5, 42, 100, 34, 6, 0 }, 42 + 12800, 0 },
	{ "good none, csum", { NC, 0, 0, 0, 34, 16, 0 }, 60, 0 },
	{ "good none, nothing", { 0, 0, 0, 0, 0, 0, 0 }, 1, 0 },
	{ "gso_size 1", { NC, 1, 54, 1, 34, 16, 0 }, 4054, 0 },
	{ "gso_size 65534", { NC, 4, 74, 65534, 54, 16, 0 }, 65000, 0 },
	{ "ufo accepted", { NC, 3, 42, 1000, 34, 6, 0 }, 3000, 0 },
	{ "gso without csum", { 0, 1, 54, 1448, 0, 0, 0 }, 4054, 0 },
	{ "unknown gso_type 2", { NC, 2, 54, 1448, 34, 16, 0 }, 4054, -EINVAL },
	{ "unknown gso_type 6", { NC, 6, 54, 1448, 34, 16, 0 }, 4054, -EINVAL },
	{ "ecn bit alone", { NC, 0x80, 54, 1448, 34, 16, 0 }, 4054, -EINVAL },
	{ "gso_size 0", { NC, 1, 54, 0, 34, 16, 0 }, 4054, -EINVAL },
	{ "gso_size 0xffff", { NC, 1, 54, 0xffff, 34, 16, 0 }, 70000, -EINVAL },
	{ "csum_start 19", { NC, 1, 54, 1448, 19, 16, 0 }, 4054, -EINVAL },
	{ "csum_start 20 ok", { NC, 1, 54, 1448, 20, 16, 0 }, 4054, 0 },
	{ "tcpv6 csum_start 39", { NC, 4, 74, 1448, 39, 16, 0 }, 4054, -EINVAL },
	{ "tcpv6 csum_start 40 ok", { NC, 4, 74, 1448, 40, 16, 0 }, 4054, 0 },
	{ "csum field past frame", { NC, 0, 0, 0, 34, 16, 0 }, 51, -EINVAL },
	{ "csum field at frame end", { NC, 0, 0, 0, 34, 16, 0 }, 52, 0 },
	{ "tcp header past frame", { NC, 1, 0, 1448, 34, 16, 0 }, 53, -EINVAL },
	{ "tcp gso csum_offset 6", { NC, 1, 54, 1448, 34, 6, 0 }, 4054, -EINVAL },
	{ "udp_l4 without csum", { 0, 5, 42, 100, 34, 6, 0 }, 1000, -EINVAL },
	{ "udp_l4 offset 16", { NC, 5, 42, 100, 34, 16, 0 }, 1000, -EINVAL },
	{ "udp_l4 ecn", { NC, 0x85, 42, 100, 34, 6, 0 }, 1000, -EINVAL },
	{ "udp_l4 129 segs", { NC, 5, 42, 100, 34, 6, 0 }, 42 + 12801, -EINVAL },
	{ "hdr_len past frame", { NC, 1, 4055, 1448, 34, 16, 0 }, 4054, -EINVAL },
	{ "hdr_len raised past frame", { NC, 0, 0, 0, 34, 100, 0 }, 135, -EINVAL },
	{ "gso, no csum, frame too short", { 0, 1, 0, 1448, 0, 0, 0 }, 39, -EINVAL },
};

static void vnet_check_one(const struct vcheck *c)
{
	cr_assert_eq(gso_vnet_hdr_check(&c->h, c->frame_len), c->err, "%s", c->name);
}

Test(offload, vnet_check)
{
	for (size_t i = 0; i < sizeof(vchecks) / sizeof(vchecks[0]); i++)
		vnet_check_one(&vchecks[i]);
}

Test(offload, vnet_rejects)
{
	struct gso_tmpl t, other;
	struct gso_offload_req r = { .sz = sizeof(r) };
	struct gso_vnet_hdr h, before;
	uint8_t hdr[256], hdr_before[256];

	mk_tmpl(&t, &tcases[0]);
	mk_tmpl(&other, &tcases[1]);
	memset(&h, 0x77, sizeof(h));
	before = h;
	memset(hdr, 0x66, sizeof(hdr));
	memcpy(hdr_before, hdr, sizeof(hdr));

	cr_assert_eq(gso_offload_describe(&t, 3000, 1000, GSO_OFFLOAD_F_FIXEDID, &r), 0);
	cr_assert_eq(gso_offload_vnet(&r, &t, &h, hdr, sizeof(hdr)), -ENOTSUP);
	cr_assert_eq(gso_offload_describe(&t, 3000, 1000, 0, &r), 0);
	cr_assert_eq(gso_offload_vnet(&r, &t, &h, hdr, 53), -ENOBUFS);
	cr_assert_eq(gso_offload_vnet(&r, &other, &h, hdr, sizeof(hdr)), -EINVAL, "wrong template");
	cr_assert_eq(gso_offload_vnet(NULL, &t, &h, hdr, sizeof(hdr)), -EINVAL);
	cr_assert_eq(gso_offload_vnet(&r, &t, NULL, hdr, sizeof(hdr)), -EINVAL);
	struct gso_offload_req bad = r;
	bad.mss = 999;
	cr_assert_eq(gso_offload_vnet(&bad, &t, &h, hdr, sizeof(hdr)), -EINVAL, "edited request");
	bad = r;
	bad.type = GSO_OFFLOAD_TCPV6;
	cr_assert_eq(gso_offload_vnet(&bad, &t, &h, hdr, sizeof(hdr)), -EINVAL, "edited request");
	cr_assert_arr_eq(&h, &before, sizeof(h));
	cr_assert_arr_eq(hdr, hdr_before, sizeof(hdr));
	/* FIXEDID on a single packet is harmless */
	cr_assert_eq(gso_offload_describe(&t, 900, 1000, GSO_OFFLOAD_F_FIXEDID, &r), 0);
	cr_assert_eq(gso_offload_vnet(&r, &t, &h, hdr, sizeof(hdr)), 0);
}

/* ===================================================================== */
/* e1000                                                                  */
/* ===================================================================== */

/* Expected bytes derived by hand from offload-reference section 4:
 * IPCSS, IPCSO, le16 IPCSE, TUCSS, TUCSO, le16 TUCSE, le32 (PAYLEN bits
 * 0-19 | DTYP 0 | TUCMD << 24), STA, HDRLEN, le16 MSS. */
Test(offload, e1000_ctx_known_answer)
{
	struct gso_tmpl t;
	struct gso_offload_req r = { .sz = sizeof(r) };
	struct gso_e1000_ctx c;
	uint8_t hdr[256], out[16];

	/* IPv4/TCP untagged: IPCSS 14 (0x0e), IPCSO 14+10 = 24 (0x18), IPCSE
	 * 33 (0x21), TUCSS 34 (0x22), TUCSO 50 (0x32), TUCSE 0, PAYLEN 4000 =
	 * 0xfa0, TUCMD DEXT|TSE|IP|TCP = 0x27 -> 0x27000fa0, HDRLEN 54 (0x36),
	 * MSS 1448 (0x05a8). */
	mk_tmpl(&t, &tcases[0]);
	cr_assert_eq(gso_offload_describe(&t, 4000, 1448, 0, &r), 0);
	cr_assert_eq(gso_offload_e1000(&r, &t, &c, hdr, sizeof(hdr)), 0);
	cr_assert_eq(gso_e1000_ctx_encode(&c, out), 0);
	cr_assert_arr_eq(out, "\x0e\x18\x21\x00\x22\x32\x00\x00\xa0\x0f\x00\x27\x00\x36\xa8\x05", 16);
	cr_assert_eq(gso_e1000_desc_kind(out), GSO_E1000_CONTEXT);

	/* IPv4/UDP tagged, IP options 4: IPCSS 18, IPCSO 28 (0x1c), IPCSE
	 * 18+24-1 = 41 (0x29), TUCSS 42 (0x2a), TUCSO 48 (0x30), PAYLEN 65000
	 * = 0xfde8, TUCMD DEXT|TSE|IP = 0x26, HDRLEN 50 (0x32), MSS 1000. */
	mk_tmpl(&t, &tcases[7]);
	cr_assert_eq(gso_offload_describe(&t, 65000 - 32 + 32 - 500, 1000, 0, &r), 0);
	cr_assert_eq(gso_offload_e1000(&r, &t, &c, hdr, sizeof(hdr)), 0);
	cr_assert_eq(gso_e1000_ctx_encode(&c, out), 0);
	/* payload 64500 = 0xfbf4 */
	cr_assert_arr_eq(out, "\x12\x1c\x29\x00\x2a\x30\x00\x00\xf4\xfb\x00\x26\x00\x32\xe8\x03", 16);

	/* A single IPv6/TCP packet: checksum-only context, TUCSS 54 (0x36),
	 * TUCSO 70 (0x46), TUCMD DEXT|TCP = 0x21, nothing else. */
	mk_tmpl(&t, &tcases[4]);
	cr_assert_eq(gso_offload_describe(&t, 500, 1448, 0, &r), 0);
	cr_assert_eq(gso_offload_e1000(&r, &t, &c, hdr, sizeof(hdr)), 0);
	cr_assert_eq(gso_e1000_ctx_encode(&c, out), 0);
	cr_assert_arr_eq(out, "\x00\x00\x00\x00\x36\x46\x00\x00\x00\x00\x00\x21\x00\x00\x00\x00", 16);
}

/* le64 address, le32 (length | DTYP 1 << 20 | DCMD << 24), STA, POPTS,
 * le16 special. */
Test(offload, e1000_data_known_answer)
{
	struct gso_tmpl t;
	struct gso_offload_req r = { .sz = sizeof(r) };
	struct gso_e1000_data d[8];
	uint8_t out[16];

	mk_tmpl(&t, &tcases[0]);
	cr_assert_eq(gso_offload_describe(&t, 9000, 1448, 0, &r), 0);
	/* 9000 bytes at 0x123456789000: 4096 + 4096 + 808 */
	cr_assert_eq(gso_offload_e1000_data(&r, 0x123456789000ull, 9000, true, 0, d, 8), 3);
	cr_assert_eq(gso_e1000_data_encode(&d[0], out), 0);
	/* len 0x1000, DTYP 0x00100000, DCMD DEXT|TSE|IFCS = 0x26, POPTS
	 * IXSM|TXSM = 3 */
	cr_assert_arr_eq(out, "\x00\x90\x78\x56\x34\x12\x00\x00\x00\x10\x10\x26\x00\x03\x00\x00", 16);
	cr_assert_eq(gso_e1000_desc_kind(out), GSO_E1000_DATA);
	cr_assert_eq(gso_e1000_data_encode(&d[1], out), 0);
	cr_assert_arr_eq(out, "\x00\xa0\x78\x56\x34\x12\x00\x00\x00\x10\x10\x26\x00\x03\x00\x00", 16);
	/* last: 808 = 0x328, DCMD |= EOP|RS -> 0x2f */
	cr_assert_eq(gso_e1000_data_encode(&d[2], out), 0);
	cr_assert_arr_eq(out, "\x00\xb0\x78\x56\x34\x12\x00\x00\x28\x03\x10\x2f\x00\x03\x00\x00", 16);

	/* checksum-only packet: DCMD DEXT|IFCS (0x22) + EOP|RS = 0x2b, POPTS TXSM */
	cr_assert_eq(gso_offload_describe(&t, 100, 1448, 0, &r), 0);
	cr_assert_eq(gso_offload_e1000_data(&r, 0x1000, 154, true, 0, d, 1), 1);
	cr_assert_eq(gso_e1000_data_encode(&d[0], out), 0);
	cr_assert_arr_eq(out, "\x00\x10\x00\x00\x00\x00\x00\x00\x9a\x00\x10\x2b\x00\x02\x00\x00", 16);
}

Test(offload, e1000_data_split)
{
	struct gso_tmpl t;
	struct gso_offload_req r = { .sz = sizeof(r) };
	struct gso_e1000_data d[20], before[20];
	static const struct { uint32_t len, max; int n; } cases[] = {
		{ 1, 0, 1 }, { 4095, 0, 1 }, { 4096, 0, 1 }, { 4097, 0, 2 }, { 8192, 0, 2 },
		{ 65536, 0, 16 }, { 65537, 0, 17 }, { 5792, 5792 / 4 * 4 / 4, 4 }, { 10, 3, 4 },
	};

	mk_tmpl(&t, &tcases[0]);
	cr_assert_eq(gso_offload_describe(&t, 60000, 1448, 0, &r), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t max = cases[i].max ? cases[i].max : 4096, sum = 0;
		int n = gso_offload_e1000_data(&r, 1000, cases[i].len, i & 1, cases[i].max, d, 20);

		cr_assert_eq(n, cases[i].n, "len %u: %d", cases[i].len, n);
		for (int k = 0; k < n; k++) {
			cr_assert_eq(d[k].addr, 1000u + sum);
			cr_assert(d[k].len >= 1 && d[k].len <= max);
			sum += d[k].len;
			bool last = k == n - 1 && (i & 1);
			cr_assert_eq(d[k].dcmd & (GSO_E1000_CMD_EOP | GSO_E1000_CMD_RS),
				     last ? GSO_E1000_CMD_EOP | GSO_E1000_CMD_RS : 0);
			cr_assert(d[k].dcmd & GSO_E1000_CMD_TSE);
		}
		cr_assert_eq(sum, cases[i].len);
	}
	memset(d, 0x3c, sizeof(d));
	memcpy(before, d, sizeof(d));
	cr_assert_eq(gso_offload_e1000_data(&r, 0, 4097, true, 0, d, 1), -ENOSPC);
	cr_assert_eq(gso_offload_e1000_data(&r, 0, 0, true, 0, d, 1), -EINVAL);
	cr_assert_eq(gso_offload_e1000_data(&r, 0, 10, true, 4097, d, 1), -EINVAL);
	cr_assert_eq(gso_offload_e1000_data(NULL, 0, 10, true, 0, d, 1), -EINVAL);
	cr_assert_arr_eq(d, before, sizeof(d));
}

/*
 * A buffer whose end passes 2^64: the pieces' addresses would wrap to 0
 * (they did: UINT64_MAX - 99 + 4096 came out as 3996).  One that ends
 * exactly at 2^64 is addressable and accepted.
 */
Test(offload, e1000_data_refuses_wrapping_buffer)
{
	static const struct {
		uint64_t addr;
		uint32_t len;
		int ret;
	} cases[] = {
		{ UINT64_MAX - 99, 100, 1 },
		{ UINT64_MAX - 99, 101, -EOVERFLOW },
		{ UINT64_MAX, 1, 1 },
		{ UINT64_MAX, 2, -EOVERFLOW },
		{ UINT64_MAX - 8999, 9000, 3 },
		{ UINT64_MAX - 4095, 9000, -EOVERFLOW },
		{ UINT64_MAX - 8998, 9000, -EOVERFLOW },
		{ UINT64_MAX - 99, 9000, -EOVERFLOW },
		{ 1ull << 63, 65535, 16 },
	};
	struct gso_offload_req r = { .sz = sizeof(r) };
	struct gso_tmpl t;
	struct gso_e1000_data d[20], before[20];
	uint8_t out[GSO_E1000_DESC_LEN];

	mk_tmpl(&t, &tcases[0]);
	cr_assert_eq(gso_offload_describe(&t, 9000, 1448, 0, &r), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t a = cases[i].addr;
		uint32_t len = cases[i].len;

		memset(d, 0x3c, sizeof(d));
		memcpy(before, d, sizeof(d));
		int n = gso_offload_e1000_data(&r, a, len, true, 0, d, 20);
		cr_assert_eq(n, cases[i].ret, "addr %#llx len %u: %d", (unsigned long long)a, len, n);
		if (n < 0) {
			cr_assert_arr_eq(d, before, sizeof(d), "written on error");
			/* The one-descriptor encoder refuses the same buffer. */
			struct gso_e1000_data one = { .addr = a, .len = len > 4096 ? 4096 : len,
						      .dcmd = GSO_E1000_CMD_DEXT };
			if (one.len - 1 > UINT64_MAX - a)
				cr_assert_eq(gso_e1000_data_encode(&one, out), -EOVERFLOW);
			continue;
		}
		uint64_t next = a;
		for (int k = 0; k < n; k++) {
			cr_assert_eq(d[k].addr, next, "piece %d of addr %#llx", k, (unsigned long long)a);
			cr_assert_geq(d[k].addr + (d[k].len - 1), d[k].addr, "piece %d wraps", k);
			cr_assert_eq(gso_e1000_data_encode(&d[k], out), 0);
			next = d[k].addr + d[k].len;
		}
	}
}

/* Field by field: the structs have padding. */
static bool ctx_eq(const struct gso_e1000_ctx *a, const struct gso_e1000_ctx *b)
{
	return a->ipcss == b->ipcss && a->ipcso == b->ipcso && a->ipcse == b->ipcse &&
	       a->tucss == b->tucss && a->tucso == b->tucso && a->tucse == b->tucse &&
	       a->paylen == b->paylen && a->tucmd == b->tucmd && a->sta == b->sta &&
	       a->hdr_len == b->hdr_len && a->mss == b->mss;
}

static bool data_eq(const struct gso_e1000_data *a, const struct gso_e1000_data *b)
{
	return a->addr == b->addr && a->len == b->len && a->dcmd == b->dcmd && a->sta == b->sta &&
	       a->popts == b->popts && a->special == b->special;
}

Test(offload, e1000_roundtrip)
{
	uint64_t s = 99;

	for (int i = 0; i < 2000; i++) {
		struct gso_e1000_ctx c, c2;
		struct gso_e1000_data d, d2;
		uint8_t out[16];

		gso_test_fill_random(&c, sizeof(c), &s);
		c = (struct gso_e1000_ctx){ c.ipcss, c.ipcso, c.ipcse, c.tucss, c.tucso, c.tucse,
					    c.paylen & 0xfffff, (uint8_t)(c.tucmd | GSO_E1000_CMD_DEXT),
					    c.sta, c.hdr_len, c.mss };
		memset(&c2, 0, sizeof(c2));
		cr_assert_eq(gso_e1000_ctx_encode(&c, out), 0);
		cr_assert_eq(gso_e1000_data_decode(out, &d2), -EINVAL, "context read as data");
		cr_assert_eq(gso_e1000_ctx_decode(out, &c2), 0);
		cr_assert(ctx_eq(&c, &c2));

		gso_test_fill_random(&d, sizeof(d), &s);
		d = (struct gso_e1000_data){ d.addr, d.len & 0xfffff, (uint8_t)(d.dcmd | GSO_E1000_CMD_DEXT),
					     d.sta, d.popts, d.special };
		memset(&d2, 0, sizeof(d2));
		cr_assert_eq(gso_e1000_data_encode(&d, out), 0);
		cr_assert_eq(gso_e1000_ctx_decode(out, &c2), -EINVAL, "data read as context");
		cr_assert_eq(gso_e1000_data_decode(out, &d2), 0);
		cr_assert(data_eq(&d, &d2));
	}
	struct gso_e1000_ctx c = { .tucmd = GSO_E1000_TUCMD_TCP };
	struct gso_e1000_data d = { .len = 0x100000, .dcmd = GSO_E1000_CMD_DEXT };
	uint8_t out[16] = { 0 };
	cr_assert_eq(gso_e1000_ctx_encode(&c, out), -EINVAL, "no DEXT");
	cr_assert_eq(gso_e1000_data_encode(&d, out), -EINVAL, "len over 20 bits");
	cr_assert_eq(gso_e1000_desc_kind(out), GSO_E1000_LEGACY);
	out[11] = GSO_E1000_CMD_DEXT;
	out[10] = 0x30;
	cr_assert_eq(gso_e1000_desc_kind(out), GSO_E1000_RESERVED);
	cr_assert_eq(gso_e1000_ctx_decode(out, &c), -EINVAL);
}

/*
 * The e1000 engine per frame, as QEMU's hw/net/e1000.c does it
 * (offload-reference section 4): headers copied, IPv4 tot_len = frame_len -
 * IPCSS, ID + index, TCP seq + index * mss, FIN/PSH only on the last, UDP
 * length = frame_len - TUCSS; TXSM adds frame_len - TUCSS to the seed at
 * TUCSO and checksums TUCSS..end; IXSM checksums IPCSS..IPCSE.
 */
static size_t e1000_emulate(const struct gso_e1000_ctx *c, uint8_t popts, const uint8_t *hdr,
			    const uint8_t *pay, uint32_t index, uint8_t *f)
{
	uint32_t off = index * c->mss;
	uint32_t n = c->paylen - off < c->mss ? c->paylen - off : c->mss;
	bool last = off + n == c->paylen;
	size_t len = c->hdr_len + n;

	memcpy(f, hdr, c->hdr_len);
	memcpy(f + c->hdr_len, pay + off, n);
	if (c->tucmd & GSO_E1000_TUCMD_IP) {
		wr16(f + c->ipcss + 2, (uint16_t)(len - c->ipcss));
		wr16(f + c->ipcss + 4, (uint16_t)(rd16(f + c->ipcss + 4) + index));
	}
	if (c->tucmd & GSO_E1000_TUCMD_TCP) {
		wr32(f + c->tucss + 4, rd32(f + c->tucss + 4) + off);
		if (!last)
			f[c->tucss + 13] &= (uint8_t)~0x09;
	} else {
		wr16(f + c->tucss + 4, (uint16_t)(len - c->tucss));
	}
	if (popts & GSO_E1000_POPTS_TXSM) {
		uint32_t seed = rd16(f + c->tucso) + (uint32_t)(len - c->tucss);

		wr16(f + c->tucso, ref_fold(seed));
		wr16(f + c->tucso, dev_finish(f, len, c->tucss));
	}
	if (popts & GSO_E1000_POPTS_IXSM)
		wr16(f + c->ipcso, (uint16_t)~ref_fold(ref_sum(f + c->ipcss, c->ipcse - c->ipcss + 1u, 0)));
	return len;
}

Test(offload, e1000_seed_emulated)
{
	static const uint8_t which[] = { 0, 1, 2, 3, 6, 7 };

	fill_payload(11);
	for (size_t w = 0; w < sizeof(which); w++) {
		const struct tcase *tc = &tcases[which[w]];
		static const uint32_t pays[] = { 1449, 2896, 2897, 30001, 65000 };
		struct gso_tmpl t;
		uint8_t hdr[256], f[2000];

		mk_tmpl(&t, tc);
		for (size_t k = 0; k < sizeof(pays) / sizeof(pays[0]); k++) {
			struct gso_offload_req r = { .sz = sizeof(r) };
			struct gso_e1000_ctx c;
			struct gso_e1000_data d[20];
			uint32_t pay = pays[k];

			if (pay + t.hdr_len - t.l3_off > 65535 || (t.l4 == 17 && pay > 1448u * 128))
				continue;
			cr_assert_eq(gso_offload_describe(&t, pay, 1448, 0, &r), 0);
			cr_assert_eq(gso_offload_e1000(&r, &t, &c, hdr, sizeof(hdr)), 0, "%s", tc->name);
			/* Linux e1000_tso(): tot_len 0, IP check 0, seed with length 0 */
			cr_assert_eq(rd16(hdr + t.l3_off + 2), 0);
			cr_assert_eq(rd16(hdr + t.l3_off + 10), 0);
			cr_assert_eq(rd16(hdr + t.l4_off + r.csum_offset),
				     ref_fold(ref_pseudo(hdr, t.l3_off, 1, t.l4, 0)));
			cr_assert_eq(gso_offload_e1000_data(&r, 0, pay, true, 0, d, 20), (int)(pay + 4095) / 4096);

			for (uint32_t i = 0; i < r.segs; i++) {
				size_t len = e1000_emulate(&c, d[0].popts, hdr, payload, i, f);
				uint16_t want = ref_l4_csum(f, len, t.l3_off, t.l4_off, 1, t.l4, r.csum_offset);

				cr_assert_eq(rd16(f + t.l4_off + r.csum_offset), want,
					     "%s pay %u seg %u", tc->name, pay, i);
				cr_assert_eq(ref_fold(ref_sum(f + t.l3_off, r.l3_len, 0)), 0xffff,
					     "IPv4 header checksum, seg %u", i);
				/* every emitted frame parses as a consistent packet */
				struct gso_tmpl p;
				size_t plen;
				cr_assert_eq(gso_tmpl__parse_pkt(&p, f, len, NULL, &plen), 0);
				cr_assert_eq(plen, i + 1 < r.segs ? 1448u : pay - i * 1448u);
			}
		}
	}
}

Test(offload, e1000_rejects)
{
	struct gso_tmpl t;
	struct gso_offload_req r = { .sz = sizeof(r) };
	struct gso_e1000_ctx c, before;
	uint8_t hdr[256];

	memset(&c, 0x11, sizeof(c));
	before = c;
	mk_tmpl(&t, &tcases[4]); /* v6 tcp */
	cr_assert_eq(gso_offload_describe(&t, 3000, 1000, 0, &r), 0);
	cr_assert_eq(gso_offload_e1000(&r, &t, &c, hdr, sizeof(hdr)), -ENOTSUP, "no TSO6");
	mk_tmpl(&t, &tcases[8]); /* v6 udp */
	cr_assert_eq(gso_offload_describe(&t, 3000, 1000, 0, &r), 0);
	cr_assert_eq(gso_offload_e1000(&r, &t, &c, hdr, sizeof(hdr)), -ENOTSUP);
	mk_tmpl(&t, &tcases[0]);
	cr_assert_eq(gso_offload_describe(&t, 3000, 1000, GSO_OFFLOAD_F_FIXEDID, &r), 0);
	cr_assert_eq(gso_offload_e1000(&r, &t, &c, hdr, sizeof(hdr)), -ENOTSUP);
	cr_assert_eq(gso_offload_describe(&t, 3000, 1000, 0, &r), 0);
	cr_assert_eq(gso_offload_e1000(&r, &t, &c, hdr, 53), -ENOBUFS);
	cr_assert_eq(gso_offload_e1000(&r, &t, NULL, hdr, 54), -EINVAL);
	cr_assert(ctx_eq(&c, &before));
	/* CWR is encoded (the caller decides whether CWR on every frame is
	 * acceptable), segmented or not */
	mk_tmpl(&t, &tcases[3]);
	cr_assert_eq(gso_offload_describe(&t, 3000, 1000, 0, &r), 0);
	cr_assert_eq(r.flags & GSO_OFFLOAD_F_ECN, GSO_OFFLOAD_F_ECN);
	cr_assert_eq(gso_offload_e1000(&r, &t, &c, hdr, sizeof(hdr)), 0);
	cr_assert_eq(c.tucmd, GSO_E1000_CMD_DEXT | GSO_E1000_CMD_TSE | GSO_E1000_TUCMD_IP |
			      GSO_E1000_TUCMD_TCP);
	cr_assert_eq(hdr[t.l4_off + 13] & GSO_TCP_CWR, GSO_TCP_CWR);
	cr_assert_eq(gso_offload_describe(&t, 300, 1000, 0, &r), 0);
	cr_assert_eq(gso_offload_e1000(&r, &t, &c, hdr, sizeof(hdr)), 0);
	cr_assert_eq(c.tucmd, GSO_E1000_CMD_DEXT | GSO_E1000_TUCMD_TCP);
}

/* Checksum-only context: the device adds no length, so the seed holds it. */
Test(offload, e1000_csum_only_seed)
{
	fill_payload(5);
	for (size_t i = 0; i < N_TC; i++) {
		struct gso_tmpl t;
		struct gso_offload_req r = { .sz = sizeof(r) };
		struct gso_e1000_ctx c;
		int v4;

		mk_tmpl(&t, &tcases[i]);
		v4 = t.l3 == 4;
		cr_assert_eq(gso_offload_describe(&t, 1001, 1448, 0, &r), 0);
		cr_assert_eq(gso_offload_e1000(&r, &t, &c, frame, 256), 0);
		memcpy(frame + r.hdr_len, payload, 1001);
		size_t len = r.hdr_len + 1001u;
		cr_assert_eq(c.tucmd & GSO_E1000_CMD_TSE, 0);
		uint16_t got = dev_finish(frame, len, c.tucss);
		cr_assert_eq(got, ref_l4_csum(frame, len, t.l3_off, t.l4_off, v4, t.l4, r.csum_offset),
			     "%s", tcases[i].name);
		if (v4)
			cr_assert_eq(ref_fold(ref_sum(frame + t.l3_off, r.l3_len, 0)), 0xffff);
	}
}

/* ===================================================================== */
/* AF_XDP metadata                                                        */
/* ===================================================================== */

/* Expected bytes derived by hand from offload-reference section 5: le64
 * flags, le16 csum_start, le16 csum_offset, le32 reserved, le64 launch_time. */
Test(offload, xsk_known_answer)
{
	struct gso_tmpl t;
	struct gso_offload_req r = { .sz = sizeof(r) };
	struct gso_xsk_txmd m;
	uint8_t hdr[256], out[24];

	mk_tmpl(&t, &tcases[0]);
	cr_assert_eq(gso_offload_describe(&t, 1448, 1448, 0, &r), 0);
	cr_assert_eq(gso_offload_xsk(&r, &t, 0, &m, hdr, sizeof(hdr)), 0);
	cr_assert_eq(gso_xsk_txmd_encode(&m, out), 0);
	/* CHECKSUM (2), csum_start 34 (0x22), offset 16 */
	cr_assert_arr_eq(out, "\x02\0\0\0\0\0\0\0\x22\0\x10\0\0\0\0\0\0\0\0\0\0\0\0\0", 24);

	/* IPv6/UDP tagged with launch time 0x0102030405060708: flags
	 * CHECKSUM|LAUNCH_TIME = 6, csum_start 18+40 = 58 (0x3a), offset 6 */
	mk_tmpl(&t, &tcases[9]);
	cr_assert_eq(gso_offload_describe(&t, 100, 1448, 0, &r), 0);
	cr_assert_eq(gso_offload_xsk(&r, &t, 0x0102030405060708ull, &m, hdr, sizeof(hdr)), 0);
	cr_assert_eq(gso_xsk_txmd_encode(&m, out), 0);
	cr_assert_arr_eq(out, "\x06\0\0\0\0\0\0\0\x3a\0\x06\0\0\0\0\0\x08\x07\x06\x05\x04\x03\x02\x01", 24);
}

Test(offload, xsk_roundtrip_and_rejects)
{
	uint64_t s = 5;

	for (int i = 0; i < 1000; i++) {
		struct gso_xsk_txmd a, b;
		uint8_t out[24];

		gso_test_fill_random(&a, sizeof(a), &s);
		a = (struct gso_xsk_txmd){ a.flags & GSO_XSK_TXMD_KNOWN, a.csum_start, a.csum_offset, 0,
					   a.launch_time };
		memset(&b, 0, sizeof(b));
		cr_assert_eq(gso_xsk_txmd_encode(&a, out), 0);
		cr_assert_eq(gso_xsk_txmd_decode(out, &b), 0);
		cr_assert_arr_eq(&a, &b, sizeof(a));
	}
	struct gso_xsk_txmd m = { .flags = 1u << 3 };
	uint8_t out[24];
	cr_assert_eq(gso_xsk_txmd_encode(&m, out), -EINVAL, "unknown flag (the research fork's SEGMENT_OFFLOAD)");
	m = (struct gso_xsk_txmd){ .flags = GSO_XSK_TXMD_CHECKSUM, .reserved = 1 };
	cr_assert_eq(gso_xsk_txmd_encode(&m, out), -EINVAL, "reserved non-zero");

	struct gso_tmpl t;
	struct gso_offload_req r = { .sz = sizeof(r) };
	uint8_t hdr[256];
	mk_tmpl(&t, &tcases[0]);
	cr_assert_eq(gso_offload_describe(&t, 1449, 1448, 0, &r), 0);
	cr_assert_eq(gso_offload_xsk(&r, &t, 0, &m, hdr, sizeof(hdr)), -ENOTSUP, "AF_XDP has no TSO");
	cr_assert_eq(gso_offload_describe(&t, 1448, 1448, 0, &r), 0);
	cr_assert_eq(gso_offload_xsk(&r, &t, 0, &m, hdr, 10), -ENOBUFS);
}

Test(offload, xsk_seed_finishes)
{
	fill_payload(3);
	for (size_t i = 0; i < N_TC; i++) {
		struct gso_tmpl t;
		struct gso_offload_req r = { .sz = sizeof(r) };
		struct gso_xsk_txmd m;
		int v4;

		mk_tmpl(&t, &tcases[i]);
		v4 = t.l3 == 4;
		for (uint32_t pay = 0; pay < 1500; pay += 499) {
			cr_assert_eq(gso_offload_describe(&t, pay, 1500, 0, &r), 0);
			cr_assert_eq(gso_offload_xsk(&r, &t, 0, &m, frame, 256), 0);
			memcpy(frame + r.hdr_len, payload, pay);
			size_t len = r.hdr_len + pay;
			cr_assert_eq(dev_finish(frame, len, m.csum_start),
				     ref_l4_csum(frame, len, t.l3_off, t.l4_off, v4, t.l4, m.csum_offset),
				     "%s pay %u", tcases[i].name, pay);
		}
	}
}

/* ===================================================================== */
/* per-frame seed                                                         */
/* ===================================================================== */

Test(offload, seed_frame)
{
	fill_payload(13);
	for (size_t i = 0; i < N_TC; i++) {
		struct gso_tmpl t;
		struct gso_offload_req r = { .sz = sizeof(r) };
		struct gso_vnet_hdr h;
		uint16_t cs = 0, co = 0;
		int v4;

		mk_tmpl(&t, &tcases[i]);
		v4 = t.l3 == 4;
		for (uint32_t pay = 0; pay < 3000; pay += 733) {
			/* a frame with real lengths (built through the vnet path),
			 * then its checksum field scribbled over */
			cr_assert_eq(gso_offload_describe(&t, pay, 65000, 0, &r), 0);
			cr_assert_eq(gso_offload_vnet(&r, &t, &h, frame, 256), 0);
			memcpy(frame + r.hdr_len, payload, pay);
			size_t len = r.hdr_len + pay;
			frame[t.l4_off + r.csum_offset] ^= 0x5a;
			cr_assert_eq(gso_offload_seed_frame(&t, frame, len, &cs, &co), 0);
			cr_assert_eq(cs, t.l4_off);
			cr_assert_eq(co, r.csum_offset);
			cr_assert_eq(dev_finish(frame, len, cs),
				     ref_l4_csum(frame, len, t.l3_off, t.l4_off, v4, t.l4, co),
				     "%s pay %u", tcases[i].name, pay);
			/* Ethernet padding after the datagram is not summed */
			if (len < 60) {
				memset(frame + len, 0xff, 60 - len);
				cr_assert_eq(gso_offload_seed_frame(&t, frame, 60, NULL, NULL), 0);
				cr_assert_eq(dev_finish(frame, len, cs),
					     ref_l4_csum(frame, len, t.l3_off, t.l4_off, v4, t.l4, co));
			}
		}
	}
}

Test(offload, seed_frame_rejects)
{
	struct gso_tmpl t, t6;
	struct gso_offload_req r = { .sz = sizeof(r) };
	struct gso_vnet_hdr h;
	uint8_t f[200], before[200];

	mk_tmpl(&t, &tcases[0]);
	mk_tmpl(&t6, &tcases[4]);
	cr_assert_eq(gso_offload_describe(&t, 100, 1448, 0, &r), 0);
	cr_assert_eq(gso_offload_vnet(&r, &t, &h, f, sizeof(f)), 0);
	memset(f + 54, 0, 100);
	memcpy(before, f, sizeof(f));
	cr_assert_eq(gso_offload_seed_frame(&t, f, 53, NULL, NULL), -ENODATA);
	cr_assert_eq(gso_offload_seed_frame(&t, f, 153, NULL, NULL), -EBADMSG, "IP length past frame");
	cr_assert_eq(gso_offload_seed_frame(&t6, f, 154, NULL, NULL), -EBADMSG, "wrong template");
	cr_assert_eq(gso_offload_seed_frame(NULL, f, 154, NULL, NULL), -EINVAL);
	cr_assert_eq(gso_offload_seed_frame(&t, NULL, 154, NULL, NULL), -EINVAL);
	f[14 + 9] = 17;
	cr_assert_eq(gso_offload_seed_frame(&t, f, 154, NULL, NULL), -EBADMSG, "protocol changed");
	f[14 + 9] = 6;
	f[14 + 3] = 39; /* tot_len shorter than the headers */
	f[14 + 2] = 0;
	cr_assert_eq(gso_offload_seed_frame(&t, f, 154, NULL, NULL), -EBADMSG);
	f[14 + 3] = before[14 + 3];
	f[14 + 2] = before[14 + 2];
	cr_assert_arr_eq(f, before, sizeof(f), "frame written on error");
	cr_assert_eq(gso_offload_seed_frame(&t, f, 154, NULL, NULL), 0);
}

/* Every encoder's descriptor passes the kernel-equivalent check where it
 * is a virtio_net_hdr, for every template and a spread of sizes. */
Test(offload, vnet_encoder_output_accepted)
{
	for (size_t i = 0; i < N_TC; i++) {
		struct gso_tmpl t;
		uint8_t hdr[256];

		mk_tmpl(&t, &tcases[i]);
		for (uint32_t mss = 1; mss < 65535; mss = mss * 3 + 7) {
			for (uint32_t pay = 0; pay < 65536; pay = pay * 5 + 3) {
				struct gso_offload_req r = { .sz = sizeof(r) };
				struct gso_vnet_hdr h;
				int e = gso_offload_describe(&t, pay, mss, 0, &r);

				if (e) {
					cr_assert(e == -EMSGSIZE || (t.l4 == 17 && pay > mss * 128u),
						  "%s pay %u mss %u: %d", tcases[i].name, pay, mss, e);
					continue;
				}
				cr_assert_eq(gso_offload_vnet(&r, &t, &h, hdr, sizeof(hdr)), 0);
				cr_assert_eq(gso_vnet_hdr_check(&h, r.hdr_len + (size_t)pay), 0,
					     "%s pay %u mss %u", tcases[i].name, pay, mss);
			}
		}
	}
}

/*
 * Design invariant 6: software GSO produces what the e1000 engine
 * produces from the same context descriptor.  The engine is the emulation
 * above; the software side is gso_segment() with full checksums and
 * incrementing IDs.  (UDP: Linux sends a computed 0 as 0xffff, the engine
 * does not; the fixed payload here never hits that case.)
 */
Test(offload, e1000_matches_software_gso)
{
	static const uint8_t which[] = { 0, 1, 2, 6, 7 };
	static uint8_t out[64][1600];

	fill_payload(17);
	for (size_t w = 0; w < sizeof(which); w++) {
		const struct tcase *tc = &tcases[which[w]];
		static const uint32_t pays[] = { 1449, 2897, 9000, 40000 };
		struct gso_tmpl t;
		uint8_t hdr[256], f[1600];

		mk_tmpl(&t, tc);
		for (size_t k = 0; k < sizeof(pays) / sizeof(pays[0]); k++) {
			struct gso_offload_req r = { .sz = sizeof(r) };
			struct gso_e1000_ctx c;
			struct gso_frame fr[64];
			uint32_t pay = pays[k];
			struct gso_extent ext = { payload, pay };
			struct gso_super sup = { &t, &ext, 1 };
			GSO_OPTS(gso_seg_opts, o, .mss = 1448, .csum = GSO_CSUM_FULL);

			cr_assert_eq(gso_offload_describe(&t, pay, 1448, 0, &r), 0);
			cr_assert_eq(gso_offload_e1000(&r, &t, &c, hdr, sizeof(hdr)), 0);
			for (unsigned i = 0; i < 64; i++)
				fr[i] = (struct gso_frame){ .buf = out[i], .cap = sizeof(out[i]) };
			cr_assert_eq(gso_segment(&sup, &o, fr, 64), (int)r.segs, "%s %u", tc->name, pay);
			for (uint32_t i = 0; i < r.segs; i++) {
				size_t len = e1000_emulate(&c, GSO_E1000_POPTS_TXSM | GSO_E1000_POPTS_IXSM,
							   hdr, payload, i, f);

				cr_assert_eq(fr[i].len, len, "%s %u seg %u", tc->name, pay, i);
				cr_assert_arr_eq(f, out[i], len, "%s pay %u seg %u differs", tc->name, pay, i);
			}
		}
	}
}
