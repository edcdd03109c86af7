/*
 * Header-only segments built from a received frame: SYN-ACKs of a
 * listener, RSTs for segments of no connection, ACKs from TIME_WAIT.
 * The reply goes back to the link-layer address the frame came from,
 * through the engine's transmit device: no route lookup, so a SYN flood
 * costs no system call per SYN.
 */
#include "tcp_conn_internal.h"

#include <string.h>

#include <gso/tmpl.h>

void gsoi_tcp_peer_of(const uint8_t *frame, const struct tcp_key *k, struct tcp_peer *p)
{
	p->key = *k;
	memcpy(p->our_mac, frame, 6);
	memcpy(p->peer_mac, frame + 6, 6);
}

int gsoi_tcp_ctl_tmpl(struct gso_tmpl *out, const struct gso_tmpl_fields *f, uint8_t flags)
{
	uint8_t frame[GSO_MAX_HDR_LEN];
	struct gso_tmpl t;
	int r = gso_tmpl__build(&t, f);

	if (r)
		return r;
	/* Templates refuse SYN and RST (never on a super-segment): set the flags in a raw frame and parse that. */
	memcpy(frame, t.hdr, t.hdr_len);
	frame[t.l4_off + 13] = flags;
	return gso_tmpl__parse(out, frame, t.hdr_len);
}

int gsoi_tcp_reply(struct engine *e, const struct tcp_peer *p, uint32_t seq, uint32_t ack, uint8_t flags,
		   uint16_t win, const uint8_t *opts, unsigned opts_len)
{
	struct gso_tmpl out;
	size_t alen = p->key.l3 == GSO_L3_IPV6 ? 16 : 4;
	int r;

	if (e->dead)
		return -ENODEV;
	GSO_OPTS(gso_tmpl_fields, f, .l3 = p->key.l3, .l4 = GSO_L4_TCP, .sport = p->key.our_port,
		 .dport = p->key.peer_port, .seq = seq, .ack = ack, .tcp_flags = GSO_TCP_ACK, .window = win,
		 .tcp_opts = opts, .tcp_opts_len = opts_len, .df = p->key.l3 == GSO_L3_IPV4);
	memcpy(f.eth_dst, p->peer_mac, 6);
	memcpy(f.eth_src, p->our_mac, 6);
	memcpy(f.saddr, p->key.our_addr, alen);
	memcpy(f.daddr, p->key.peer_addr, alen);
	r = gsoi_tcp_ctl_tmpl(&out, &f, flags);
	if (r)
		return r;
	struct gso_tx tx = { .tmpl = &out, .mss = 536 };
	r = gso_dev__submit(e->tx, &tx, 1);
	if (r == 1)
		return 0;
	return r < 0 ? r : -EIO;
}

int gsoi_tcp_reset_for(struct engine *e, const struct tcp_peer *p, const struct tcp_seg *g)
{
	uint32_t len = g->payload + !!(g->flags & GSO_TCP_SYN) + !!(g->flags & GSO_TCP_FIN);

	if (g->flags & GSO_TCP_RST)
		return 0; /* never answer an RST */
	if (g->flags & GSO_TCP_ACK)
		return gsoi_tcp_reply(e, p, g->ack, 0, GSO_TCP_RST, 0, NULL, 0);
	return gsoi_tcp_reply(e, p, 0, g->seq + len, GSO_TCP_RST | GSO_TCP_ACK, 0, NULL, 0);
}
