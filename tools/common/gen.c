#include "gen.h"

#include <errno.h>
#include <string.h>

#include <gso/csum.h>
#include <gso/tmpl.h>

void gen_init(struct gen *g, uint64_t seed, enum gen_proto proto, uint32_t max_payload)
{
	g->state = seed;
	g->proto = proto;
	g->max_payload = max_payload ? max_payload : 1;
}

int gen_proto_parse(const char *s, enum gen_proto *out)
{
	static const char *const names[] = { "mix", "tcp4", "tcp6", "udp4", "udp6" };

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i])) {
			*out = (enum gen_proto)i;
			return 0;
		}
	return -EINVAL;
}

/* splitmix64: every seed, 0 included, gives a full-period stream. */
uint64_t gen_rand(struct gen *g)
{
	uint64_t z = (g->state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi] (hi - lo small compared with 2^64). */
static uint32_t urange(struct gen *g, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(gen_rand(g) % ((uint64_t)hi - lo + 1));
}

static void fill(struct gen *g, uint8_t *p, size_t len)
{
	while (len) {
		uint64_t r = gen_rand(g);
		size_t n = len < 8 ? len : 8;

		memcpy(p, &r, n);
		p += n;
		len -= n;
	}
}

/*
 * TCP options as real senders write them (every segment copies them, so
 * they have to be well formed).  Returns the length, a multiple of 4.
 */
static uint8_t tcp_options(struct gen *g, uint8_t *o)
{
	uint8_t n = 0;

	switch (gen_rand(g) % 6) {
	case 0:
		return 0;
	case 1: /* MSS */
		o[0] = 2, o[1] = 4;
		fill(g, o + 2, 2);
		return 4;
	case 2: /* NOP, window scale */
		o[0] = 1, o[1] = 3, o[2] = 3, o[3] = (uint8_t)urange(g, 0, 14);
		return 4;
	case 3: /* NOP padding only */
		n = (uint8_t)(4 * urange(g, 1, 10));
		memset(o, 1, n);
		return n;
	default: { /* timestamps, sometimes with SACK blocks */
		unsigned blocks = gen_rand(g) % 2 ? 0 : urange(g, 1, 3);

		o[0] = 1, o[1] = 1, o[2] = 8, o[3] = 10;
		fill(g, o + 4, 8);
		n = 12;
		if (blocks) {
			o[n] = 1, o[n + 1] = 1, o[n + 2] = 5, o[n + 3] = (uint8_t)(2 + 8 * blocks);
			fill(g, o + n + 4, 8 * blocks);
			n = (uint8_t)(n + 4 + 8 * blocks);
		}
		return n;
	}
	}
}

/* IPv4 options: router alert, or a NOP-aligned record route.  Multiple of 4. */
static uint8_t ip_options(struct gen *g, uint8_t *o)
{
	unsigned slots;

	if (gen_rand(g) % 2) {
		o[0] = 0x94, o[1] = 4, o[2] = 0, o[3] = 0;
		return 4;
	}
	slots = urange(g, 1, 9);
	o[0] = 1, o[1] = 7, o[2] = (uint8_t)(3 + 4 * slots), o[3] = 4;
	fill(g, o + 4, 4 * slots);
	return (uint8_t)(4 + 4 * slots);
}

/* Payload lengths that hit the segmenter's edges often: MSS multiples +-1, max, tiny. */
static uint32_t payload_len(struct gen *g, uint32_t limit)
{
	static const uint32_t mss[] = { 536, 1220, 1380, 1448, 1460, 4096, 8948, 8960 };
	uint32_t m, k, len;

	switch (gen_rand(g) % 8) {
	case 0: case 1: case 2:
		return urange(g, 1, limit);
	case 3:
		return urange(g, 1, limit < 1500 ? limit : 1500);
	case 4: case 5:
		m = mss[gen_rand(g) % (sizeof(mss) / sizeof(mss[0]))];
		if (m > limit)
			return urange(g, 1, limit);
		k = urange(g, 1, limit / m);
		len = k * m + urange(g, 0, 2) - 1;
		return len < 1 ? 1 : len > limit ? limit : len;
	case 6:
		return limit;
	default:
		return urange(g, 1, limit < 64 ? limit : 64);
	}
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

int gen_next(struct gen *g, uint8_t *frame, size_t cap)
{
	static const uint8_t dst_mac[6] = { 0x02, 0x00, 0x5e, 0x00, 0x00, 0x02 };
	static const uint8_t src_mac[6] = { 0x02, 0x00, 0x5e, 0x00, 0x00, 0x01 };
	enum gen_proto proto = g->proto ? g->proto : (enum gen_proto)urange(g, GEN_TCP4, GEN_UDP6);
	bool v4 = proto == GEN_TCP4 || proto == GEN_UDP4;
	bool tcp = proto == GEN_TCP4 || proto == GEN_TCP6;
	uint8_t topts[40], iopts[40];
	struct gso_tmpl t;
	uint32_t limit, pay, l3_len, l4_total, pseudo;
	uint16_t seed, check;
	uint8_t *ip, *l4;
	int err;

	if (cap < GEN_FRAME_MAX)
		return -ENOBUFS;

	GSO_OPTS(gso_tmpl_fields, f, .l3 = v4 ? GSO_L3_IPV4 : GSO_L3_IPV6,
		 .l4 = tcp ? GSO_L4_TCP : GSO_L4_UDP);
	memcpy(f.eth_dst, dst_mac, 6);
	memcpy(f.eth_src, src_mac, 6);
	if (gen_rand(g) % 16 == 0) {
		f.has_vlan = true;
		f.vlan_tci = (uint16_t)urange(g, 1, 4094);
	}
	if (v4) {
		f.saddr[0] = 10, f.daddr[0] = 10;
		fill(g, f.saddr + 1, 3);
		fill(g, f.daddr + 1, 3);
		f.df = gen_rand(g) % 4 != 0;
		f.ip_id = (uint16_t)gen_rand(g);
		if (gen_rand(g) % 8 == 0) {
			f.ip_opts_len = ip_options(g, iopts);
			f.ip_opts = iopts;
		}
	} else {
		f.saddr[0] = 0xfd, f.daddr[0] = 0xfd;
		fill(g, f.saddr + 1, 15);
		fill(g, f.daddr + 1, 15);
		f.flow_label = (uint32_t)gen_rand(g) & 0xfffff;
	}
	f.tos = gen_rand(g) % 2 ? 0 : (uint8_t)gen_rand(g);
	f.ttl = (uint8_t)urange(g, 1, 255);
	f.sport = (uint16_t)urange(g, 1, 65535);
	f.dport = (uint16_t)urange(g, 1, 65535);
	if (tcp) {
		uint64_t r = gen_rand(g);

		f.seq = (uint32_t)r;
		f.ack = (uint32_t)(r >> 32);
		f.window = (uint16_t)gen_rand(g);
		f.tcp_flags = (gen_rand(g) % 16 ? GSO_TCP_ACK : 0) |
			      (gen_rand(g) % 2 ? GSO_TCP_PSH : 0) |
			      (gen_rand(g) % 8 ? 0 : GSO_TCP_FIN) |
			      (gen_rand(g) % 8 ? 0 : GSO_TCP_ECE) |
			      (gen_rand(g) % 8 ? 0 : GSO_TCP_CWR);
		f.tcp_opts_len = tcp_options(g, topts);
		f.tcp_opts = topts;
	}
	err = gso_tmpl__build(&t, &f);
	if (err)
		return err;

	/* Keep the whole IP datagram (IPv6 header included) within 16 bits. */
	l3_len = (uint32_t)(t.l4_off - t.l3_off);
	limit = 65535u - l3_len - t.l4_len;
	if (limit > g->max_payload)
		limit = g->max_payload;
	pay = payload_len(g, limit);

	memcpy(frame, t.hdr, t.hdr_len);
	fill(g, frame + t.hdr_len, pay);
	ip = frame + t.l3_off;
	l4 = frame + t.l4_off;
	l4_total = t.l4_len + pay;
	if (v4) {
		put_be16(ip + 2, (uint16_t)(l3_len + l4_total));
		memset(ip + 10, 0, 2);
		check = gso_csum_finish(gso_csum_partial(ip, l3_len, 0));
		memcpy(ip + 10, &check, 2);
		pseudo = gso_csum_pseudo4(ip + 12, ip + 16, t.l4, l4_total);
	} else {
		put_be16(ip + 4, (uint16_t)l4_total);
		pseudo = gso_csum_pseudo6(ip + 8, ip + 24, t.l4, l4_total);
	}
	if (!tcp)
		put_be16(l4 + 4, (uint16_t)l4_total);
	seed = gso_csum_fold(pseudo);
	memcpy(l4 + (tcp ? 16 : 6), &seed, 2);
	return (int)(t.hdr_len + pay);
}
