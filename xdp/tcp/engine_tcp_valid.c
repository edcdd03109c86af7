/*
 * Stream flows' acceptance rules for the peer's segments once the
 * handshake is done (see engine_tcp_internal.h): RFC 793's window test
 * and RFC 5961's defences against blind resets, SYNs and data/ACK
 * injection, with Linux's choices where the RFCs leave room
 * (tcp_validate_incoming(), tcp_ack() and tcp_send_challenge_ack() in
 * net/ipv4/tcp_input.c).  Pure functions.
 */
#include "engine_tcp_internal.h"

#include <gso/tmpl.h>

static bool before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static bool after(uint32_t a, uint32_t b)
{
	return before(b, a);
}

enum tcp_rx_verdict gsoi_tcp_rx_check(const struct tcp_seg *g, uint32_t rcv_nxt, uint32_t rcv_wnd)
{
	/* SYN and FIN occupy a sequence number each. */
	uint32_t end = g->seq + g->payload + !!(g->flags & GSO_TCP_SYN) + !!(g->flags & GSO_TCP_FIN);
	/*
	 * Linux's tcp_sequence(): some of the segment at or after RCV.NXT and
	 * its start no later than the window's right edge.  A pure ACK at
	 * RCV.NXT passes, a keepalive (RCV.NXT - 1) does not, and is answered.
	 */
	bool in_wnd = !before(end, rcv_nxt) && !after(g->seq, rcv_nxt + rcv_wnd);

	if (g->flags & GSO_TCP_RST) {
		/* RFC 5961 3.2: exact match resets, in-window is challenged, the rest is dropped silently. */
		if (!in_wnd)
			return TCP_RX_DROP;
		return g->seq == rcv_nxt ? TCP_RX_RESET : TCP_RX_CHALLENGE;
	}
	/* RFC 5961 4.2: a SYN after the handshake, wherever it falls, only earns a challenge ACK. */
	if (g->flags & GSO_TCP_SYN)
		return TCP_RX_CHALLENGE;
	/* RFC 793: an unacceptable segment is answered with an ACK and dropped. */
	return in_wnd ? TCP_RX_ACCEPT : TCP_RX_DUPACK;
}

enum tcp_ack_verdict gsoi_tcp_ack_check(uint32_t ack, uint32_t snd_una, uint32_t snd_max, uint32_t max_wnd)
{
	/*
	 * Below SND.UNA first, as tcp_ack() asks: an ACK about half the
	 * sequence space away is both below SND.UNA and past SND.MAX, and
	 * Linux takes it for an old one.  RFC 5961 5.2: acceptable only from
	 * SND.UNA - MAX.SND.WND on.
	 */
	if (before(ack, snd_una))
		return before(ack, snd_una - max_wnd) ? TCP_ACK_TOO_OLD : TCP_ACK_OK;
	if (after(ack, snd_max))
		return TCP_ACK_UNSENT;
	return TCP_ACK_OK;
}

bool gsoi_tcp_oow_allow(uint64_t *last_ns, uint64_t now_ns)
{
	if (*last_ns && now_ns >= *last_ns && now_ns - *last_ns < TCP_OOW_INTERVAL_NS)
		return false;
	*last_ns = now_ns ? now_ns : 1; /* 0 means "never" */
	return true;
}
