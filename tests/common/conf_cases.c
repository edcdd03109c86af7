/*
 * The conformance cases (conf_cases.h): reference arithmetic of our own, in
 * network byte order, that shares nothing with libgso's header code.
 */
#include "conf_cases.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include <gso/offload.h>
#include <gso/tmpl.h>

#include "gso_test.h"
#include "ref_csum.h"

const char *const conf_proto_name[CONF_NPROTO] = { "tcp4", "tcp6", "udp4", "udp6" };
const uint8_t conf_dst_mac[6] = { 0x02, 0x77, 0x00, 0x00, 0x00, 0xbb };
const uint8_t conf_saddr4[4] = { 198, 18, 0, 1 }, conf_daddr4[4] = { 198, 19, 0, 2 };
const uint8_t conf_saddr6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x77, [15] = 1 };
const uint8_t conf_daddr6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x77, [15] = 2 };

/* ---- independent reference arithmetic (network byte order; checksums: ref_csum.h) ---- */

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
	bool v4 = CONF_IS_V4(proto);
	uint32_t acc = 0;

	acc = ref_sum(v4 ? conf_saddr4 : conf_saddr6, v4 ? 4 : 16, acc);
	acc = ref_sum(v4 ? conf_daddr4 : conf_daddr6, v4 ? 4 : 16, acc);
	return acc + (CONF_IS_TCP(proto) ? 6 : 17) + (l4_len >> 16) + (l4_len & 0xffff);
}

/* ---- building a super-packet ---- */

static size_t l3_hlen(const struct conf_case *c)
{
	return CONF_IS_V4(c->proto) ? 20u + c->ipopt_len : 40u;
}

static size_t l4_hlen(const struct conf_case *c)
{
	return CONF_IS_TCP(c->proto) ? 20u + c->topt_len : 8u;
}

/* Largest payload that keeps the whole IP datagram within 65535 bytes. */
uint32_t conf_max_payload(const struct conf_case *c)
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
size_t conf_build_frame(const struct conf_case *c, const uint8_t src_mac[6], uint8_t *f,
			  size_t *l4_off)
{
	uint64_t rng = c->fill;
	size_t l3 = c->vlan_tci ? 18 : 14, l4 = l3 + l3_hlen(c), th = l4_hlen(c), pay = l4 + th;
	uint32_t l4_total = (uint32_t)th + c->paylen;
	uint8_t *ip = f + l3, *h = f + l4;
	uint64_t r;

	memcpy(f, conf_dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	if (c->vlan_tci) {
		put16(f + 12, ETH_P_8021Q);
		put16(f + 14, c->vlan_tci);
	}
	put16(f + l3 - 2, CONF_IS_V4(c->proto) ? ETH_P_IP : ETH_P_IPV6);
	if (CONF_IS_V4(c->proto)) {
		ip[0] = (uint8_t)(0x40 | l3_hlen(c) / 4);
		ip[1] = c->tos;
		put16(ip + 2, (uint32_t)l3_hlen(c) + l4_total);
		put16(ip + 4, c->ip_id);
		put16(ip + 6, c->df ? 0x4000 : 0);
		ip[8] = 64;
		ip[9] = CONF_IS_TCP(c->proto) ? 6 : 17;
		put16(ip + 10, 0);
		memcpy(ip + 12, conf_saddr4, 4);
		memcpy(ip + 16, conf_daddr4, 4);
		ip_options(ip + 20, c->ipopt_len, &rng);
		put16(ip + 10, (uint16_t)~ref_fold(ref_sum(ip, l3_hlen(c), 0)));
	} else {
		put32(ip, 6u << 28 | (uint32_t)c->tos << 20 | (c->flow & 0xfffff));
		put16(ip + 4, l4_total);
		ip[6] = CONF_IS_TCP(c->proto) ? 6 : 17;
		ip[7] = 64;
		memcpy(ip + 8, conf_saddr6, 16);
		memcpy(ip + 24, conf_daddr6, 16);
	}
	r = gso_test_rand(&rng);
	put16(h, CONF_SPORT_BASE + c->idx);
	put16(h + 2, (uint32_t)(r % 60000) + 1);
	if (CONF_IS_TCP(c->proto)) {
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
		if (CONF_IS_TCP(c->proto)) {
			if (seg)
				hdr[13] &= (uint8_t)~(GSO_TCP_FIN | GSO_TCP_PSH);
			put16(hdr + 16, 0);
		} else {
			put16(hdr + 4, seg_l4);
			put16(hdr + 6, 0);
		}
		f[pay] = f[pay + 1] = 0;
		acc = pseudo_sum(c->proto, seg_l4);
		acc = ref_sum(hdr, th, acc);
		acc = ref_sum(f + pay, seg_pay, acc);
		put16(f + pay, 0xffffu - ref_fold(acc));
	}
	put16(h + (CONF_IS_TCP(c->proto) ? 16 : 6), ref_fold(pseudo_sum(c->proto, l4_total)));
	*l4_off = l4;
	return pay + c->paylen;
}

/* ---- cases ---- */

void conf_describe(const struct conf_case *c, char *buf, size_t n)
{
	snprintf(buf, n,
		 "case %u (%s): %s mss %" PRIu32 " payload %" PRIu32 " flags 0x%02x tcpopt %u "
		 "ipopt %u df %d ipid 0x%04x tos 0x%02x vlan 0x%04x zero_csum %d%s fill 0x%016" PRIx64,
		 c->idx, c->what, conf_proto_name[c->proto], c->mss, c->paylen, c->flags, c->topt_len,
		 c->ipopt_len, c->df, c->ip_id, c->tos, c->vlan_tci, c->zero_csum,
		 c->refused ? " (must be refused)" : "", c->fill);
}

static uint32_t clamp_pay(const struct conf_case *c, int64_t v)
{
	if (v < 1)
		return 1;
	if (v > conf_max_payload(c))
		return conf_max_payload(c);
	return (uint32_t)v;
}

int conf_add(struct conf_set *s, struct conf_case c)
{
	if (s->n >= CONF_MAX_CASES)
		return -ENOSPC;
	if (s->n == s->cap) {
		unsigned cap = s->cap ? 2 * s->cap : 256;
		void *p = realloc(s->c, cap * sizeof(*s->c));

		if (!p)
			return -ENOMEM;
		s->c = p;
		s->cap = cap;
	}
	c.idx = s->n;
	s->c[s->n++] = c;
	return 0;
}

void conf_set_free(struct conf_set *s)
{
	free(s->c);
	memset(s, 0, sizeof(*s));
}

/* Append, or return the error from the calling generator. */
#define ADD(s, c)                               \
	do {                                    \
		int add_err_ = conf_add((s), (c)); \
		if (add_err_)                   \
			return add_err_;        \
	} while (0)

/* The fixed boundary table. */
int conf_table_cases(struct conf_set *s, uint64_t *rng)
{
	static const uint32_t mss[] = { 536, 1448, 8960 };

	for (uint8_t p = 0; p < CONF_NPROTO; p++) {
		struct conf_case base = { .what = "table", .proto = p, .flags = CONF_IS_TCP(p) ? GSO_TCP_ACK : 0,
				      .df = true, .ip_id = 0x1234 };

		for (unsigned m = 0; m < sizeof(mss) / sizeof(mss[0]); m++) {
			int64_t lens[] = { 1, mss[m] - 1, mss[m], mss[m] + 1, 2 * mss[m],
					   2 * mss[m] + 1, 3 * mss[m] - 1, 64000 / mss[m] * mss[m],
					   65535 };

			for (unsigned l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
				struct conf_case c = base;

				c.mss = mss[m];
				c.paylen = clamp_pay(&c, lens[l]);
				c.fill = gso_test_rand(rng);
				c.what = "table: payload around MSS multiples";
				ADD(s, c);
			}
		}
		/* Odd MSS: segment payloads start at odd offsets. */
		for (unsigned k = 0; k < 2; k++) {
			struct conf_case c = base;

			c.mss = 537 + 912 * k;
			c.paylen = clamp_pay(&c, 7 * (int64_t)c.mss + 3);
			c.fill = gso_test_rand(rng);
			c.what = "table: odd MSS";
			ADD(s, c);
		}
		/* Checksums that compute to 0, segmented and not. */
		for (unsigned k = 0; k < 2; k++) {
			struct conf_case c = base;

			c.mss = 1448;
			c.paylen = k ? 1000 : 5000;
			c.zero_csum = true;
			c.fill = gso_test_rand(rng);
			c.what = k ? "table: single packet, checksum computes to 0"
				   : "table: first segment's checksum computes to 0";
			ADD(s, c);
		}
		/* One 802.1Q tag (the receive side gets it back from PACKET_AUXDATA). */
		for (unsigned k = 0; k < 2; k++) {
			struct conf_case c = base;

			c.mss = k ? 8960 : 1448;
			c.vlan_tci = (uint16_t)(k ? 0xe123 : 0x0064);
			c.paylen = clamp_pay(&c, k ? 60000 : 4 * 1448 + 1);
			c.fill = gso_test_rand(rng);
			c.what = "table: 802.1Q tag";
			ADD(s, c);
		}
		if (CONF_IS_V4(p)) {
			static const struct { bool df; uint8_t ipopt; uint16_t id; const char *what; } v4[] = {
				{ false, 0, 0x1234, "table: IPv4 without DF" },
				{ true, 40, 0x1234, "table: IPv4 with 40 option bytes" },
				{ false, 4, 0x1234, "table: IPv4 router alert, no DF" },
				{ true, 0, 0xfffe, "table: IPv4 ID wraps" },
			};
			for (unsigned k = 0; k < sizeof(v4) / sizeof(v4[0]); k++) {
				struct conf_case c = base;

				c.mss = 1448;
				c.df = v4[k].df;
				c.ipopt_len = v4[k].ipopt;
				c.ip_id = v4[k].id;
				c.paylen = clamp_pay(&c, 10 * 1448 + 17);
				c.fill = gso_test_rand(rng);
				c.what = v4[k].what;
				ADD(s, c);
			}
		}
		if (CONF_IS_TCP(p)) {
			static const struct { uint8_t flags, topt; const char *what; } tcp[] = {
				{ GSO_TCP_ACK | GSO_TCP_PSH | GSO_TCP_FIN, 12, "table: ACK PSH FIN, timestamps" },
				{ GSO_TCP_ACK | GSO_TCP_CWR, 12, "table: CWR (ECN gso bit)" },
				{ GSO_TCP_ACK | GSO_TCP_ECE, 0, "table: ECE" },
				{ GSO_TCP_ACK | GSO_TCP_CWR | GSO_TCP_ECE | GSO_TCP_PSH | GSO_TCP_FIN, 40,
				  "table: every allowed flag, 40 option bytes" },
				{ 0, 4, "table: no ACK, MSS option" },
			};
			for (unsigned k = 0; k < sizeof(tcp) / sizeof(tcp[0]); k++) {
				struct conf_case c = base;

				c.mss = 1448;
				c.flags = tcp[k].flags;
				c.topt_len = tcp[k].topt;
				c.paylen = clamp_pay(&c, 5 * 1448 + 1);
				c.fill = gso_test_rand(rng);
				c.what = tcp[k].what;
				ADD(s, c);
			}
			/*
			 * payload <= mss < payload + options: the kernel counts options
			 * as payload when deciding to segment, so this goes out as one
			 * plain packet (sent without a GSO type, reference section 8).
			 */
			for (unsigned k = 0; k < 2; k++) {
				struct conf_case c = base;

				c.mss = 536;
				c.topt_len = 40;
				c.flags = GSO_TCP_ACK | GSO_TCP_PSH;
				c.paylen = k ? 536 : 520;
				c.fill = gso_test_rand(rng);
				c.what = "table: payload <= mss < payload + options";
				ADD(s, c);
			}
		}
	}
	return 0;
}

static uint32_t rnd(uint64_t *rng, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(gso_test_rand(rng) % ((uint64_t)hi - lo + 1));
}

int conf_random_cases(struct conf_set *s, unsigned count, uint64_t *rng)
{
	/* A small pool of MSS values per run keeps gsoseg invocations few. */
	uint32_t pool[16] = { 536, 1220, 1380, 1448, 1460, 4096, 8948, 8960 };

	for (unsigned i = 8; i < 16; i++)
		pool[i] = rnd(rng, 536, 8960);
	for (unsigned i = 0; i < count; i++) {
		struct conf_case c = { .what = "random" };
		uint32_t limit;

		c.proto = (uint8_t)rnd(rng, 0, CONF_NPROTO - 1);
		c.mss = pool[rnd(rng, 0, 15)];
		if (CONF_IS_TCP(c.proto)) {
			c.flags = (uint8_t)((rnd(rng, 0, 15) ? GSO_TCP_ACK : 0) |
					    (rnd(rng, 0, 1) ? GSO_TCP_PSH : 0) |
					    (rnd(rng, 0, 7) ? 0 : GSO_TCP_FIN) |
					    (rnd(rng, 0, 7) ? 0 : GSO_TCP_ECE) |
					    (rnd(rng, 0, 7) ? 0 : GSO_TCP_CWR));
			c.topt_len = (uint8_t)(4 * rnd(rng, 0, 10));
		}
		if (CONF_IS_V4(c.proto)) {
			c.df = rnd(rng, 0, 3) != 0;
			c.ipopt_len = rnd(rng, 0, 7) ? 0 : (uint8_t)(4 * rnd(rng, 1, 10));
			c.ip_id = (uint16_t)gso_test_rand(rng);
		} else {
			c.flow = (uint32_t)gso_test_rand(rng) & 0xfffff;
		}
		c.tos = rnd(rng, 0, 1) ? 0 : (uint8_t)gso_test_rand(rng);
		limit = conf_max_payload(&c) < 64000 ? conf_max_payload(&c) : 64000;
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
		ADD(s, c);
	}
	return 0;
}

int conf_small_cases(struct conf_set *s, unsigned n_random, uint64_t *rng)
{
	static const uint32_t mss_fixed[] = { 1, 2, 7, 8, 64, 100, 255, 535 };

	for (unsigned i = 0; i < n_random + 4 * 8 * 2; i++) {
		struct conf_case c = { .what = "small MSS" };
		bool fixed = i < 4 * 8 * 2;

		c.proto = (uint8_t)(fixed ? i / 16 : rnd(rng, 0, CONF_NPROTO - 1));
		c.mss = fixed ? mss_fixed[(i / 2) % 8] : rnd(rng, 1, 535);
		if (CONF_IS_TCP(c.proto)) {
			c.flags = GSO_TCP_ACK | (rnd(rng, 0, 1) ? GSO_TCP_PSH | GSO_TCP_FIN : 0) |
				  (rnd(rng, 0, 3) ? 0 : GSO_TCP_CWR);
			c.topt_len = (uint8_t)(4 * rnd(rng, 0, 10));
		}
		c.df = rnd(rng, 0, 1);
		c.ip_id = (uint16_t)gso_test_rand(rng);
		if (CONF_IS_TCP(c.proto)) {
			/* At most ~1200 segments, so one case stays within a few ms. */
			uint32_t hi = c.mss * 1200u < conf_max_payload(&c) ? c.mss * 1200u
									   : conf_max_payload(&c);

			c.paylen = fixed && i % 2 ? hi : rnd(rng, 1, hi);
		} else {
			uint32_t hi = c.mss * 128u < conf_max_payload(&c) ? c.mss * 128u
									  : conf_max_payload(&c);

			c.paylen = fixed && i % 2 ? hi : rnd(rng, 1, hi);
			/* One past the kernel's UDP segment limit. */
			if (fixed && i % 2 && c.mss * 129u <= conf_max_payload(&c)) {
				c.paylen = c.mss * 128u + 1;
				c.refused = true;
				c.what = "small MSS: UDP with 129 segments";
			}
		}
		c.zero_csum = rnd(rng, 0, 15) == 0;
		c.fill = gso_test_rand(rng);
		ADD(s, c);
	}
	return 0;
}

uint32_t conf_max_ip_len(const struct conf_case *c)
{
	return (uint32_t)(l3_hlen(c) + l4_hlen(c)) + (c->paylen < c->mss ? c->paylen : c->mss);
}

unsigned conf_frames(const struct conf_case *c)
{
	if (c->refused)
		return 0;
	return c->paylen <= c->mss ? 1u : (c->paylen + c->mss - 1) / c->mss;
}

long conf_vnet_packet(const struct conf_case *c, const uint8_t *frame, size_t len, uint8_t *out,
		      const char **step, size_t *hdr_diff)
{
	uint8_t *hdrs = out + GSO_VNET_HDR_LEN;
	struct gso_offload_req r = { .sz = sizeof(r) };
	struct gso_vnet_hdr vh;
	struct gso_tmpl t;
	size_t poff, plen, i;
	int err;

	*hdr_diff = SIZE_MAX;
	*step = "gso_tmpl__parse_pkt";
	err = gso_tmpl__parse_pkt(&t, frame, len, &poff, &plen);
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
	err = gso_vnet_hdr_encode(&vh, out, GSO_VNET_HDR_LEN);
	if (err)
		return err;
	for (i = 0; i < r.hdr_len && hdrs[i] == frame[i]; i++)
		;
	if (i < r.hdr_len || r.hdr_len != poff)
		*hdr_diff = i;
	memcpy(hdrs + r.hdr_len, frame + poff, plen);
	return (long)(GSO_VNET_HDR_LEN + r.hdr_len + plen);
}

bool conf_frame_case(const uint8_t *f, size_t n, unsigned *idx, size_t *l4_off, uint8_t *l4proto)
{
	size_t l3 = 14, l4;
	uint16_t type, sport;
	uint8_t proto;

	if (n < 14 + 20 + 8)
		return false;
	type = (uint16_t)(f[12] << 8 | f[13]);
	if (type == ETH_P_8021Q) {
		l3 = 18;
		type = (uint16_t)(f[16] << 8 | f[17]);
	}
	if (n < l3 + 20 + 8)
		return false;
	if (type == ETH_P_IP && (f[l3] >> 4) == 4 && !memcmp(f + l3 + 12, conf_saddr4, 4)) {
		l4 = l3 + (f[l3] & 0xfu) * 4;
		proto = f[l3 + 9];
	} else if (type == ETH_P_IPV6 && n >= l3 + 48 && !memcmp(f + l3 + 8, conf_saddr6, 16)) {
		l4 = l3 + 40;
		proto = f[l3 + 6];
	} else {
		return false;
	}
	if ((proto != 6 && proto != 17) || l4 + 2 > n)
		return false;
	sport = (uint16_t)(f[l4] << 8 | f[l4 + 1]);
	if (sport < CONF_SPORT_BASE || sport - CONF_SPORT_BASE >= CONF_MAX_CASES)
		return false;
	*idx = sport - CONF_SPORT_BASE;
	*l4_off = l4;
	*l4proto = proto;
	return true;
}

ssize_t conf_recv(int fd, uint8_t *buf, size_t cap, int wait_ms, uint8_t **frame, int *pkttype)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct sockaddr_ll from;
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
		} ctl;
		struct iovec iov = { .iov_base = buf + 4, .iov_len = cap - 4 };
		struct msghdr msg = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov,
				      .msg_iovlen = 1, .msg_control = &ctl, .msg_controllen = sizeof(ctl) };
		ssize_t n;
		int r = poll(&pfd, 1, wait_ms);

		if (r < 0)
			return errno == EINTR ? 0 : -errno;
		if (r == 0)
			return 0;
		n = recvmsg(fd, &msg, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		if (n < 14)
			continue;
		*frame = buf + 4;
		*pkttype = from.sll_pkttype;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			struct tpacket_auxdata aux;

			if (cm->cmsg_level != SOL_PACKET || cm->cmsg_type != PACKET_AUXDATA)
				continue;
			memcpy(&aux, CMSG_DATA(cm), sizeof(aux));
			if (!(aux.tp_status & TP_STATUS_VLAN_VALID))
				continue;
			memmove(buf, buf + 4, 12);
			put16(buf + 12, aux.tp_status & TP_STATUS_VLAN_TPID_VALID ? aux.tp_vlan_tpid
										 : ETH_P_8021Q);
			put16(buf + 14, aux.tp_vlan_tci);
			*frame = buf;
			n += 4;
		}
		return n;
	}
}
