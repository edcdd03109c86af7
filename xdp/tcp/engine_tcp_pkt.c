/*
 * Stream flows' packet helpers (engine_tcp_internal.h): parsing the peer's
 * segments (Ethernet, 802.1Q, IPv4 or IPv6, TCP options) and the option
 * blocks of our own.  Pure.
 */
#include "engine_tcp_internal.h"

#include <errno.h>
#include <string.h>

#include <gso/tmpl.h>

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A TCP segment's headers, or why the frame is not one (gsoi_tcp_frame_key's errors). */
static int locate(const uint8_t *f, uint32_t len, struct frame_l4 *w)
{
	int err = gsoi_frame_l4(f, len, w);

	if (err)
		return err;
	if (w->proto != 6 || w->frag)
		return -ENOENT; /* not TCP, or a fragment: never one of ours */
	return w->l4_len < 20 ? -EBADMSG : 0;
}

_Static_assert(sizeof(struct tcp_key) % 8 == 0, "gsoi_tcp_key_hash reads the key in 8-byte words");

/*
 * Over the whole key, its padding included (zeroed wherever keys are
 * made), a word at a time: multiply-xorshift per 8 bytes.  Byte-wise FNV-1a
 * cost about 240 instructions per ACK (callgrind, bench_frame_cost); this
 * is about 30.  Only the engine's and the port's own tables use it.
 */
uint32_t gsoi_tcp_key_hash(const struct tcp_key *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint64_t h = 0x9e3779b97f4a7c15ull, w;

	for (size_t i = 0; i < sizeof(*k); i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (uint32_t)(h ^ (h >> 29));
}

int gsoi_tcp_frame_key(const uint8_t *f, uint32_t len, struct tcp_key *key)
{
	struct frame_l4 w;
	const uint8_t *ip = f;
	int err = locate(f, len, &w);

	/* Keys are compared and hashed whole: padding included. */
	memset(key, 0, sizeof(*key));
	if (err)
		return err;
	ip += w.ip;
	key->vlan = w.vlan;
	key->l3 = w.l3;
	if (w.l3 == GSO_L3_IPV4) {
		memcpy(key->peer_addr, ip + 12, 4);
		memcpy(key->our_addr, ip + 16, 4);
	} else {
		memcpy(key->peer_addr, ip + 8, 16);
		memcpy(key->our_addr, ip + 24, 16);
	}
	key->peer_port = get16(f + w.l4);
	key->our_port = get16(f + w.l4 + 2);
	return 0;
}

static int parse_opts(const uint8_t *o, unsigned n, struct tcp_seg *s)
{
	unsigned i = 0;

	while (i < n) {
		uint8_t kind = o[i], l;

		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= n)
			return -EBADMSG;
		l = o[i + 1];
		if (l < 2 || i + l > n)
			return -EBADMSG;
		switch (kind) {
		case 2:
			if (l == 4) {
				s->has_mss = true;
				s->mss = get16(o + i + 2);
			}
			break;
		case 3:
			if (l == 3)
				s->wscale = o[i + 2] > 14 ? 14 : o[i + 2];
			break;
		case 4:
			s->sack_perm = true;
			break;
		case 5:
			for (unsigned b = 0; b + 8 <= (unsigned)l - 2 && s->nsack < TCP_MAX_SACK; b += 8) {
				s->sack[s->nsack][0] = get32(o + i + 2 + b);
				s->sack[s->nsack][1] = get32(o + i + 6 + b);
				s->nsack++;
			}
			break;
		case 8:
			if (l == 10) {
				s->has_ts = true;
				s->tsval = get32(o + i + 2);
				s->tsecr = get32(o + i + 6);
			}
			break;
		default:
			break;
		}
		i += l;
	}
	return 0;
}

int gsoi_tcp_frame_parse(const uint8_t *f, uint32_t len, struct tcp_seg *s)
{
	struct frame_l4 w;
	uint32_t l4, l4_len;
	unsigned doff;

	if (locate(f, len, &w))
		return -EBADMSG;
	l4 = w.l4;
	l4_len = w.l4_len;
	doff = (f[l4 + 12] >> 4) * 4u;
	if (doff < 20 || doff > l4_len)
		return -EBADMSG;
	memset(s, 0, sizeof(*s));
	s->wscale = -1;
	s->seq = get32(f + l4 + 4);
	s->ack = get32(f + l4 + 8);
	s->flags = f[l4 + 13];
	s->win = get16(f + l4 + 14);
	s->payload = l4_len - doff;
	s->data_off = l4 + doff;
	return parse_opts(f + l4 + 20, doff - 20, s);
}

void gsoi_tcp_syn_opts(uint8_t o[TCP_SYN_OPTS_LEN], uint16_t mss, bool sack, bool ts, uint32_t tsval, uint8_t wscale)
{
	o[0] = 2;
	o[1] = 4;
	o[2] = (uint8_t)(mss >> 8);
	o[3] = (uint8_t)mss;
	/* Linux's layout: SACK-permitted folded into the timestamps' padding. */
	if (sack) {
		o[4] = 4;
		o[5] = 2;
	} else {
		o[4] = o[5] = 1;
	}
	if (ts) {
		o[6] = 8;
		o[7] = 10;
		put32(o + 8, tsval);
		put32(o + 12, 0);
	} else {
		memset(o + 6, 1, 10);
	}
	o[16] = 1;
	o[17] = 3;
	o[18] = 3;
	o[19] = wscale;
}

void gsoi_tcp_ts_opts(uint8_t o[TCP_TS_OPTS_LEN], uint32_t tsval, uint32_t tsecr)
{
	o[0] = o[1] = 1;
	o[2] = 8;
	o[3] = 10;
	put32(o + 4, tsval);
	put32(o + 8, tsecr);
}

unsigned gsoi_tcp_synack_opts(uint8_t o[TCP_SYN_OPTS_LEN], uint16_t mss, bool sack, bool ts, uint32_t tsval,
			      uint32_t tsecr, int wscale)
{
	/* The SYN's layout with each option the client did not offer (RFC 7323: no WS without its WS) padded. */
	gsoi_tcp_syn_opts(o, mss, sack, ts, tsval, wscale < 0 ? 0 : (uint8_t)wscale);
	if (ts)
		put32(o + 12, tsecr);
	if (wscale < 0) {
		/* Nothing follows the window scale option: drop it and its NOP. */
		return TCP_SYN_OPTS_LEN - 4;
	}
	return TCP_SYN_OPTS_LEN;
}

unsigned gsoi_tcp_ack_opts(uint8_t o[TCP_ACK_OPTS_MAX], bool ts, uint32_t tsval, uint32_t tsecr,
			   const uint32_t (*sack)[2], unsigned nsack)
{
	unsigned n = 0;

	if (ts) {
		gsoi_tcp_ts_opts(o, tsval, tsecr);
		n = TCP_TS_OPTS_LEN;
	}
	/* 40 bytes of options: with timestamps 3 blocks fit, without them 4. */
	if (nsack > (ts ? 3u : 4u))
		nsack = ts ? 3u : 4u;
	if (nsack) {
		o[n++] = 1;
		o[n++] = 1;
		o[n++] = 5;
		o[n++] = (uint8_t)(2 + 8 * nsack);
		for (unsigned i = 0; i < nsack; i++) {
			put32(o + n, sack[i][0]);
			put32(o + n + 4, sack[i][1]);
			n += 8;
		}
	}
	return n;
}

uint8_t gsoi_tcp_wscale_for(uint32_t rcvbuf)
{
	uint8_t ws = 0;

	while (ws < TCP_MAX_WSCALE && (rcvbuf >> ws) > 65535)
		ws++;
	return ws;
}
