/*
 * libFuzzer target for the stream flows' receive side before any state
 * changes: segment parsing (gsoi_tcp_frame_key, gsoi_tcp_frame_parse,
 * xdp/tcp/engine_tcp_pkt.c) over raw frames, then the acceptance rules
 * (gsoi_tcp_rx_check, gsoi_tcp_ack_check, gsoi_tcp_oow_allow,
 * xdp/tcp/engine_tcp_valid.c) with fuzzed connection state.
 *
 * Input: a mode byte; rcv_nxt, rcv_wnd, snd_una, snd_max - snd_una,
 * max_wnd and a start time (32 bits each); four time steps (16 bits, in
 * 10 us); then the frame, parsed from a heap copy of exactly its length.
 * Mode bit 0: rcv_nxt is a signed 16-bit distance from the segment's
 * sequence number, bit 1: snd_una one from its ACK (so that the edges are
 * near); bit 2: the time steps go back; bits 3-7: the flags (FIN, SYN,
 * RST, PSH, ACK) of the segment used when the frame does not parse.
 *
 * Checked: the key and the segment against this target's own walk
 * (fuzz_frame.h) and option reader (lengths within the frame, options
 * within the header, each field from its bytes; a frame is refused
 * exactly when the walk or the options say so); the verdicts against
 * RFC 793/5961 arithmetic done here in 64-bit signed distances, for the
 * windows TCP can have (at most 65535 << 14) and ACK fields judged in
 * Linux's order (tcp_ack(): older than SND.UNA first); the challenge-ACK
 * throttle against its contract, one ACK per 500 ms.
 *
 * Links: xdp/engine/frame_rx.c xdp/tcp/engine_tcp_pkt.c xdp/tcp/engine_tcp_valid.c
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gso/tmpl.h>

#include "fuzz_frame.h"
#include "fuzz_input.h"
#include "tcp/engine_tcp_internal.h"

#define MAX_WND (65535u << 14) /* RFC 7323 2.3: the largest window a scaled field says */

struct ropts {
	bool bad;
	bool has_mss, sack_perm, has_ts;
	uint16_t mss;
	int wscale;
	unsigned nsack;
	uint32_t sack[TCP_MAX_SACK][2];
	uint32_t tsval, tsecr;
};

/* RFC 9293 3.2's option list: EOL ends it, NOP is one byte, the rest kind, length (>= 2, within), value. */
static void ropts(const uint8_t *o, size_t n, struct ropts *r)
{
	memset(r, 0, sizeof(*r));
	r->wscale = -1;
	for (size_t i = 0; i < n && o[i] != 0;) {
		size_t len, vl;
		const uint8_t *v;

		if (o[i] == 1) {
			i++;
			continue;
		}
		len = n - i >= 2 ? o[i + 1] : 0;
		if (len < 2 || len > n - i) {
			r->bad = true;
			return;
		}
		v = o + i + 2;
		vl = len - 2;
		switch (o[i]) {
		case 2:
			if (vl == 2) {
				r->has_mss = true;
				r->mss = (uint16_t)be16(v);
			}
			break;
		case 3:
			if (vl == 1)
				r->wscale = v[0] > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : v[0];
			break;
		case 4:
			r->sack_perm = true;
			break;
		case 5:
			for (size_t b = 0; b + 8 <= vl && r->nsack < TCP_MAX_SACK; b += 8, r->nsack++) {
				r->sack[r->nsack][0] = be32(v + b);
				r->sack[r->nsack][1] = be32(v + b + 4);
			}
			break;
		case 8:
			if (vl == 8) {
				r->has_ts = true;
				r->tsval = be32(v);
				r->tsecr = be32(v + 4);
			}
			break;
		}
		i += len;
	}
}

/* The frame: key and segment against the walk here.  Returns whether *g was parsed. */
static bool check_frame(const uint8_t *f, size_t n, struct tcp_seg *g)
{
	struct tcp_key k;
	struct fwalk w;
	struct ropts r;
	int kr = gsoi_tcp_frame_key(f, (uint32_t)n, &k);
	int pr = gsoi_tcp_frame_parse(f, (uint32_t)n, g);
	bool tcp = fwalk(f, n, &w) && w.proto == 6 && !w.frag && w.l4_len >= 20;
	size_t doff, alen = w.v6 ? 16 : 4;
	const uint8_t *l4;

	check(kr == 0 || kr == -ENOENT || kr == -EBADMSG);
	check(pr == 0 || pr == -EBADMSG);
	check((kr == 0) == tcp);
	if (!tcp) {
		check(pr != 0);
		return false;
	}
	l4 = f + w.l4;
	check(k.l3 == (w.v6 ? GSO_L3_IPV6 : GSO_L3_IPV4));
	check(k.vlan == (w.tagged ? 0x8000 | w.vid : 0));
	check(k.peer_port == be16(l4) && k.our_port == be16(l4 + 2));
	check(!memcmp(k.peer_addr, f + w.ip + (w.v6 ? 8 : 12), alen));
	check(!memcmp(k.our_addr, f + w.ip + (w.v6 ? 24 : 16), alen));

	doff = (l4[12] >> 4) * 4u;
	if (doff < 20 || doff > w.l4_len) {
		check(pr != 0);
		return false;
	}
	ropts(l4 + 20, doff - 20, &r);
	check((pr == 0) == !r.bad);
	if (pr)
		return false;
	check(g->data_off == w.l4 + doff && g->payload == w.l4_len - doff);
	check(g->data_off + g->payload <= n);
	check(g->seq == be32(l4 + 4) && g->ack == be32(l4 + 8) && g->flags == l4[13] && g->win == be16(l4 + 14));
	check(g->has_mss == r.has_mss && (!r.has_mss || g->mss == r.mss));
	check(g->wscale == r.wscale && g->sack_perm == r.sack_perm);
	check(g->has_ts == r.has_ts && (!r.has_ts || (g->tsval == r.tsval && g->tsecr == r.tsecr)));
	check(g->nsack == r.nsack && !memcmp(g->sack, r.sack, sizeof(r.sack[0]) * r.nsack));
	return true;
}

/* RFC 793's window test and RFC 5961 3.2/4.2, in signed distances from RCV.NXT that cannot wrap. */
static enum tcp_rx_verdict model_rx(const struct tcp_seg *g, uint32_t rcv_nxt, uint32_t rcv_wnd)
{
	int64_t start = (int32_t)(g->seq - rcv_nxt);
	int64_t end = start + g->payload + !!(g->flags & GSO_TCP_SYN) + !!(g->flags & GSO_TCP_FIN);
	bool in = end >= 0 && start <= (int64_t)rcv_wnd;

	if (g->flags & GSO_TCP_RST)
		return !in ? TCP_RX_DROP : start == 0 ? TCP_RX_RESET : TCP_RX_CHALLENGE;
	if (g->flags & GSO_TCP_SYN)
		return TCP_RX_CHALLENGE;
	return in ? TCP_RX_ACCEPT : TCP_RX_DUPACK;
}

/* RFC 5961 5.2 in Linux's order: an ACK below SND.UNA is old (too old past MAX.SND.WND), else above SND.MAX unsent. */
static enum tcp_ack_verdict model_ack(uint32_t ack, uint32_t snd_una, uint32_t flight, uint32_t max_wnd)
{
	int64_t d = (int32_t)(ack - snd_una);

	if (d < 0)
		return d < -(int64_t)max_wnd ? TCP_ACK_TOO_OLD : TCP_ACK_OK;
	return d > (int64_t)flight ? TCP_ACK_UNSENT : TCP_ACK_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	uint8_t mode = take8(&in);
	uint32_t p_nxt = take32(&in), rcv_wnd = take32(&in), p_una = take32(&in), flight = take32(&in);
	uint32_t max_wnd = take32(&in), rcv_nxt, snd_una;
	uint64_t now = (uint64_t)take32(&in) + 1, last = 0, allowed_at = 0;
	uint16_t steps[4];
	struct tcp_seg g;
	uint8_t *f;

	for (unsigned i = 0; i < 4; i++)
		steps[i] = take16(&in);
	f = malloc(in.n ? in.n : 1);
	check(f);
	memcpy(f, in.p, in.n);
	if (!check_frame(f, in.n, &g)) {
		memset(&g, 0, sizeof(g));
		g.seq = p_una ^ max_wnd;
		g.ack = p_nxt ^ flight;
		g.payload = (uint16_t)now;
		g.flags = mode >> 3;
	}
	free(f);

	rcv_nxt = mode & 1 ? g.seq + (uint32_t)(int32_t)(int16_t)p_nxt : p_nxt;
	enum tcp_rx_verdict rv = gsoi_tcp_rx_check(&g, rcv_nxt, rcv_wnd);
	check(rv <= TCP_RX_DROP);
	if (rcv_wnd <= MAX_WND)
		check(rv == model_rx(&g, rcv_nxt, rcv_wnd));

	snd_una = mode & 2 ? g.ack + (uint32_t)(int32_t)(int16_t)p_una : p_una;
	enum tcp_ack_verdict av = gsoi_tcp_ack_check(g.ack, snd_una, snd_una + flight, max_wnd);
	check(av <= TCP_ACK_TOO_OLD);
	if (flight < (1u << 31) && max_wnd <= MAX_WND)
		check(av == model_ack(g.ack, snd_una, flight, max_wnd));

	/* One ACK per interval: allowed when none went yet, a full interval after the last, or the clock went back. */
	for (unsigned i = 0; i <= 4; i++) {
		bool want = !allowed_at || now < allowed_at || now - allowed_at >= TCP_OOW_INTERVAL_NS;

		check(gsoi_tcp_oow_allow(&last, now) == want);
		if (want)
			allowed_at = now;
		check(last == allowed_at);
		if (i == 4)
			break;
		uint64_t step = steps[i] * 10000ull;
		if ((mode & 4) && now > step)
			now -= step;
		else
			now += step;
	}
	return 0;
}
