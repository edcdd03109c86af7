/*
 * Listeners (engine.h, "Listeners"): TCP passive open on an engine.
 *
 * A listener is a flow of the engine (a slot, a handle, a timer) that
 * sends nothing through the scheduler: SYN-ACKs and RSTs are control
 * segments and leave at once (tcp_reply.c).  What it holds:
 *  - the half-open table: one entry per SYN answered, a fixed pool of
 *    syn_backlog entries hashed by 4-tuple, each with what the client's
 *    SYN offered, retransmitting its SYN-ACK at 1, 2, 4, 8 and 16 s and
 *    forgotten 32 s after the last (Linux's tcp_synack_retries 5);
 *  - SYN cookies (syncookie.c) when the table is full, or always with
 *    GSO_LISTEN_F_COOKIES_ALWAYS: no state at all until a valid ACK;
 *  - the accept queue: streams whose handshake completed (they receive
 *    already), at most `backlog`, taken by gso_listener__accept().
 *
 * It also owns the engine's TCP state (struct tcp_state, e->tcp): the
 * list of listeners, the TIME_WAIT table and the secret of cookies and
 * timestamp offsets, and the dispatch of frames no stream owns.
 */
#include "tcp_conn_internal.h"
#include "syncookie_internal.h"
#include "opts_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define NS_PER_MS 1000000ull
#define SYNACK_RTO_NS (1000 * NS_PER_MS)
#define SYNACK_TRIES 5
#define SYNACK_SLACK_NS (10 * NS_PER_MS)

struct synrecv {
	struct tcp_peer peer;
	uint32_t irs, iss;
	uint32_t ts_recent, ts_off;
	uint16_t peer_mss;
	int8_t snd_wscale;
	bool sack, ts, used;
	uint8_t tries;
	uint64_t t_syn, next;
	uint32_t hnext;          /* chain, NIL32 = end; the free list uses it too */
};

struct listener {
	struct eflow f;          /* first: the engine sees flows through it */
	struct listener *next;   /* the engine's list */
	uint8_t l3;
	uint8_t addr[16];
	uint16_t port;
	uint32_t backlog, syn_backlog, flags, mss_cap, rcvbuf;
	bool steered;            /* it added the steering entry (a port's listeners share the port's) */
	uint8_t rcv_wscale;
	struct synrecv *pool;
	uint32_t *bucket, bmask, free_head, nhalf;
	struct stream **aq;      /* accept queue, a ring of backlog entries */
	uint32_t aq_head, aq_n;
	uint64_t deadline;
	struct gso_listener_info st;
};

/* ---- the engine's TCP state ------------------------------------------------------------- */

struct tcp_state *gsoi_tcp_state(struct engine *e)
{
	struct tcp_state *ts = e->tcp;

	if (ts)
		return ts;
	ts = calloc(1, sizeof(*ts));
	if (!ts)
		return NULL;
	if (getrandom(ts->secret, sizeof(ts->secret), GRND_NONBLOCK) != (ssize_t)sizeof(ts->secret)) {
		uint64_t a = gso_evloop_now_ns() ^ (uintptr_t)ts, b = a * 0x9e3779b97f4a7c15ull;

		memcpy(ts->secret, &a, 8);
		memcpy(ts->secret + 8, &b, 8);
	}
	e->tcp = ts;
	return ts;
}

void gsoi_engine_tcp_free(struct engine *e)
{
	struct tcp_state *ts = e->tcp;

	if (!ts)
		return;
	gsoi_tw_free(ts->tw);
	free(ts);
	e->tcp = NULL;
}

uint32_t gsoi_tcp_ts_off(struct engine *e, const struct tcp_key *k)
{
	struct tcp_state *ts = gsoi_tcp_state(e);
	uint32_t h = gsoi_tcp_key_hash(k), s0 = 0, s1 = 0;

	if (ts) {
		memcpy(&s0, ts->secret, 4);
		memcpy(&s1, ts->secret + 4, 4);
	}
	/* Not a secret worth a PRF: it only keeps our uptime out of the timestamps. */
	h ^= s0;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	return h + s1;
}

static uint32_t ts_now(uint64_t now, uint32_t off)
{
	return (uint32_t)(now / NS_PER_MS) + off;
}

static struct listener *find_listener(struct engine *e, const struct tcp_key *k)
{
	struct tcp_state *ts = e->tcp;

	for (struct listener *l = ts ? ts->listeners : NULL; l; l = l->next)
		if (l->l3 == k->l3 && l->port == k->our_port &&
		    !memcmp(l->addr, k->our_addr, k->l3 == GSO_L3_IPV6 ? 16 : 4))
			return l;
	return NULL;
}

/* ---- the half-open table ------------------------------------------------------------------ */

static uint32_t hslot(const struct listener *l, const struct tcp_key *k)
{
	return gsoi_tcp_key_hash(k) & l->bmask;
}

static struct synrecv *half_find(struct listener *l, const struct tcp_key *k)
{
	for (uint32_t i = l->bucket[hslot(l, k)]; i != NIL32; i = l->pool[i].hnext)
		if (!memcmp(&l->pool[i].peer.key, k, sizeof(*k)))
			return &l->pool[i];
	return NULL;
}

static struct synrecv *half_new(struct listener *l, const struct tcp_key *k)
{
	uint32_t i = l->free_head, b;

	if (i == NIL32)
		return NULL;
	l->free_head = l->pool[i].hnext;
	memset(&l->pool[i], 0, sizeof(l->pool[i]));
	l->pool[i].used = true;
	b = hslot(l, k);
	l->pool[i].hnext = l->bucket[b];
	l->bucket[b] = i;
	l->nhalf++;
	/* In a port: the client's ACK may come on another queue (port.h, "ACK hand-over"). */
	if (l->f.e->port)
		l->f.e->port->key_owned(l->f.e->port_ctx, k);
	return &l->pool[i];
}

/* `to_stream`: the connection it held became a stream, which owns its frames now. */
static void half_del(struct listener *l, struct synrecv *r, bool to_stream)
{
	uint32_t idx = (uint32_t)(r - l->pool);
	uint32_t *p = &l->bucket[hslot(l, &r->peer.key)];

	if (!to_stream && l->f.e->port)
		l->f.e->port->key_released(l->f.e->port_ctx, &r->peer.key);
	for (; *p != NIL32; p = &l->pool[*p].hnext)
		if (*p == idx) {
			*p = r->hnext;
			break;
		}
	r->used = false;
	r->hnext = l->free_head;
	l->free_head = idx;
	l->nhalf--;
}

/* The listener's deadline: the earliest of its entries' (a scan: once per timer run, not per SYN). */
static void l_timer_update(struct listener *l)
{
	uint64_t d = UINT64_MAX;

	for (uint32_t i = 0; l->nhalf && i < l->syn_backlog; i++)
		if (l->pool[i].used && l->pool[i].next < d)
			d = l->pool[i].next;
	if (d != l->deadline) {
		l->deadline = d;
		gsoi_engine_timer_set(l->f.e, l->f.slot, d);
	}
}

/* ---- SYN-ACKs ------------------------------------------------------------------------------ */

static uint16_t our_mss(const struct listener *l)
{
	const struct engine *e = l->f.e;
	/* The interface's now (the link monitor's), within what the device took when opened. */
	uint32_t mtu = e->link_mtu && e->link_mtu < e->caps.mtu ? e->link_mtu : e->caps.mtu ? e->caps.mtu : 1500;
	uint32_t mss = mtu - (l->l3 == GSO_L3_IPV6 ? 40 : 20) - 20;

	if (l->mss_cap && l->mss_cap < mss)
		mss = l->mss_cap;
	return (uint16_t)(mss > 65535 ? 65535 : mss);
}

static int send_synack(struct listener *l, const struct tcp_peer *p, uint32_t iss, uint32_t irs, bool sack,
		       bool ts, uint32_t tsval, uint32_t tsecr, int peer_wscale)
{
	uint8_t opts[TCP_SYN_OPTS_LEN];
	unsigned n = gsoi_tcp_synack_opts(opts, our_mss(l), sack, ts, tsval, tsecr,
					  peer_wscale >= 0 ? l->rcv_wscale : -1);
	uint32_t win = l->rcvbuf > 65535 ? 65535 : l->rcvbuf; /* a SYN's window is never scaled */
	int err = gsoi_tcp_reply(l->f.e, p, iss, irs + 1, GSO_TCP_SYN | GSO_TCP_ACK, (uint16_t)win, opts, n);

	if (!err)
		l->st.synacks++;
	return err;
}

static uint32_t random32(void)
{
	uint32_t v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		v = (uint32_t)gso_evloop_now_ns() * 2654435761u;
	return v;
}

static void on_syn(struct listener *l, const struct tcp_peer *p, const struct tcp_seg *g, uint64_t now)
{
	struct engine *e = l->f.e;
	struct synrecv *r;
	bool sack = g->sack_perm && !(l->flags & GSO_STREAM_F_NO_SACK);
	bool ts = g->has_ts && !(l->flags & GSO_STREAM_F_NO_TS);
	uint16_t peer_mss = g->has_mss && g->mss ? g->mss : 536;
	uint32_t off = gsoi_tcp_ts_off(e, &p->key);

	l->st.syns++;
	if ((r = half_find(l, &p->key))) {
		/* The client sent its SYN again: the same answer. */
		if (r->irs == g->seq)
			send_synack(l, &r->peer, r->iss, r->irs, r->sack, r->ts, ts_now(now, r->ts_off), r->ts_recent,
				    r->snd_wscale);
		return;
	}
	if (!(l->flags & GSO_LISTEN_F_COOKIES_ALWAYS) && (r = half_new(l, &p->key))) {
		r->peer = *p;
		r->irs = g->seq;
		r->iss = random32();
		r->sack = sack;
		r->ts = ts;
		r->ts_recent = g->tsval;
		r->ts_off = off;
		r->peer_mss = peer_mss;
		r->snd_wscale = (int8_t)(g->wscale > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : g->wscale);
		r->t_syn = now;
		r->next = now + SYNACK_RTO_NS;
		send_synack(l, p, r->iss, r->irs, sack, ts, ts_now(now, off), g->tsval, r->snd_wscale);
		/* O(1): a scan of the table per SYN made filling it quadratic (seconds for 65536 entries). */
		if (r->next < l->deadline) {
			l->deadline = r->next;
			gsoi_engine_timer_set(l->f.e, l->f.slot, r->next);
		}
		return;
	}
	/*
	 * No room (or cookies asked for): a SYN cookie.  The sequence number
	 * carries the client's MSS class; our timestamp its window scale and
	 * SACK, which it echoes; without timestamps there is nowhere to keep
	 * them, and the connection goes without (as Linux's does).
	 */
	{
		struct tcp_state *st = gsoi_tcp_state(e);
		uint16_t mss_used;
		uint32_t cookie, tsv = ts_now(now, off);
		int ws = g->wscale > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : g->wscale;

		if (!st)
			return;
		cookie = gsoi_syncookie_make(st->secret, &p->key, g->seq, now, peer_mss, &mss_used);
		if (ts) {
			/* Never ahead of our clock (gsoi_syncookie_tsval sees to it): the client's PAWS test passes. */
			tsv = gsoi_syncookie_tsval(tsv, ws, sack);
		}
		l->st.cookies_sent++;
		send_synack(l, p, cookie, g->seq, ts && sack, ts, tsv, g->tsval, ts ? ws : -1);
	}
}

/* ---- completing a handshake ---------------------------------------------------------------- */

static int complete(struct listener *l, const struct passive_open *po, struct gso_dev *rx, const uint8_t *frame,
		    const struct tcp_seg *g, uint64_t now)
{
	struct stream *s;
	int err;

	/* Reap what ended while it waited, so that the dead do not hold places. */
	while (l->aq_n && gsoi_stream_gone(l->aq[l->aq_head])) {
		gsoi_stream_abort(l->aq[l->aq_head], false);
		l->aq_head = (l->aq_head + 1) % l->backlog;
		l->aq_n--;
	}
	if (l->aq_n >= l->backlog) {
		l->st.overflows++;
		return -ENOSPC;
	}
	err = gsoi_stream_passive(l->f.e, po, &s);
	if (err)
		return err;
	l->aq[(l->aq_head + l->aq_n) % l->backlog] = s;
	l->aq_n++;
	gsoi_stream_segment(s, rx, frame, g, now);
	if (l->aq_n == 1)
		gsoi_engine_emit(l->f.e, &(struct gso_engine_event){ .type = GSO_EV_LISTENER_READY, .flow_ctx = l->f.ctx,
								  .listener = (struct gso_listener *)l->f.handle });
	return 0;
}

static void fill_common(const struct listener *l, struct passive_open *po)
{
	po->flags = l->flags & (GSO_STREAM_F_NO_SACK | GSO_STREAM_F_NO_TS);
	po->mss_cap = l->mss_cap;
	po->rcvbuf = l->rcvbuf;
	po->l = (struct listener *)l;
}

static void on_ack(struct listener *l, struct gso_dev *rx, const uint8_t *frame, const struct tcp_peer *p,
		   const struct tcp_seg *g, uint64_t now)
{
	struct engine *e = l->f.e;
	struct synrecv *r = half_find(l, &p->key);
	struct passive_open po = { .peer = *p };

	fill_common(l, &po);
	if (r) {
		if (g->flags & GSO_TCP_RST) {
			/* RFC 5961 for a half-open connection too: only at exactly RCV.NXT. */
			if (g->seq == r->irs + 1)
				half_del(l, r, false);
			return;
		}
		if (g->ack != r->iss + 1 || (g->flags & GSO_TCP_SYN)) {
			gsoi_tcp_reset_for(e, p, g);
			l->st.resets++;
			return;
		}
		po.iss = r->iss;
		po.irs = r->irs;
		po.sack_ok = r->sack;
		po.ts_ok = r->ts && g->has_ts;
		po.ts_recent = g->has_ts ? g->tsval : r->ts_recent;
		po.ts_off = r->ts_off;
		po.peer_mss = r->peer_mss;
		po.snd_wscale = r->snd_wscale;
		po.rcv_wscale = l->rcv_wscale;
		po.syn_rtt_ns = r->tries ? 0 : now - r->t_syn;
		/* The deadline may now be early: the timer run finds nothing due and sets the next. */
		if (!complete(l, &po, rx, frame, g, now))
			half_del(l, r, true);
		return;
	}
	if (g->flags & GSO_TCP_RST)
		return;
	{
		struct tcp_state *st = gsoi_tcp_state(e);
		uint16_t mss = 0;
		int ws = -1;
		bool sack = false;

		if (st && !(g->flags & GSO_TCP_SYN))
			mss = gsoi_syncookie_check(st->secret, &p->key, g->seq - 1, g->ack - 1, now);
		if (!mss || (g->has_ts && !gsoi_syncookie_ts_decode(g->tsecr, &ws, &sack))) {
			l->st.cookies_bad++;
			l->st.resets++;
			gsoi_tcp_reset_for(e, p, g);
			return;
		}
		po.iss = g->ack - 1;
		po.irs = g->seq - 1;
		po.ts_ok = g->has_ts && !(l->flags & GSO_STREAM_F_NO_TS);
		po.sack_ok = po.ts_ok && sack && !(l->flags & GSO_STREAM_F_NO_SACK);
		po.snd_wscale = po.ts_ok ? ws : -1;
		po.rcv_wscale = l->rcv_wscale;
		po.ts_recent = g->tsval;
		po.ts_off = gsoi_tcp_ts_off(e, &p->key);
		po.peer_mss = mss;
		if (!complete(l, &po, rx, frame, g, now))
			l->st.cookies_ok++;
	}
}

/* TIME_WAIT's answers (RFC 793 and 6191, as Linux's tcp_timewait_state_process). */
static bool tw_input(struct engine *e, struct tw_entry *t, const struct tcp_seg *g, struct listener *l,
		     uint64_t now)
{
	uint8_t opts[TCP_TS_OPTS_LEN];

	if (g->flags & GSO_TCP_RST) {
		/* Only at RCV.NXT (RFC 5961): a blind RST does not end TIME_WAIT early. */
		if (g->seq == t->rcv_nxt)
			gsoi_tw_del(e, t);
		return true;
	}
	/*
	 * A bare ACK at RCV.NXT needs no answer (Linux absorbs it): answering
	 * would start an endless exchange with a peer in TIME_WAIT too.
	 */
	if (g->seq == t->rcv_nxt && !g->payload && !(g->flags & (GSO_TCP_SYN | GSO_TCP_FIN)))
		return true;
	if ((g->flags & GSO_TCP_SYN) && !(g->flags & GSO_TCP_ACK) && l &&
	    ((int32_t)(g->seq - t->rcv_nxt) > 0 || (t->ts && g->has_ts && (int32_t)(g->tsval - t->ts_recent) > 0))) {
		/* A new incarnation: the old one is done with. */
		gsoi_tw_del(e, t);
		gsoi_tcp_state(e)->reused++;
		return false;
	}
	if (t->ts)
		gsoi_tcp_ts_opts(opts, ts_now(now, t->ts_off), t->ts_recent);
	/* A retransmitted FIN (its ACK was lost), or anything else: say where we are. */
	gsoi_tcp_reply(e, &t->peer, t->snd_nxt, t->rcv_nxt, GSO_TCP_ACK, 0, t->ts ? opts : NULL,
		       t->ts ? TCP_TS_OPTS_LEN : 0);
	return true;
}

bool gsoi_tcp_unowned_input(struct engine *e, struct gso_dev *rx, const uint8_t *frame, uint32_t len,
			    const struct tcp_key *k, uint64_t now, bool local)
{
	struct listener *l = find_listener(e, k);
	struct tw_entry *t;
	struct tcp_peer p;
	struct tcp_seg g;

	if (!l && !(e->tcp && ((struct tcp_state *)e->tcp)->tw))
		return false;
	/* Before asking the port: only what this engine holds (TIME_WAIT, a half-open connection). */
	if (local && !(l && l->nhalf && half_find(l, k)) && !gsoi_tw_find(e, k, now))
		return false;
	if (gsoi_tcp_frame_parse(frame, len, &g))
		return false;
	if ((t = gsoi_tw_find(e, k, now)) && tw_input(e, t, &g, l, now))
		return true;
	if (!l)
		return false;
	gsoi_tcp_peer_of(frame, k, &p);
	if ((g.flags & (GSO_TCP_SYN | GSO_TCP_ACK | GSO_TCP_RST)) == GSO_TCP_SYN)
		on_syn(l, &p, &g, now);
	else if (g.flags & (GSO_TCP_ACK | GSO_TCP_RST))
		on_ack(l, rx, frame, &p, &g, now);
	return true;
}

/* ---- timers -------------------------------------------------------------------------------- */

static void l_timers(struct eflow *f, uint64_t now)
{
	struct listener *l = (struct listener *)f;

	l->deadline = UINT64_MAX;
	for (uint32_t i = 0; l->nhalf && i < l->syn_backlog; i++) {
		struct synrecv *r = &l->pool[i];

		/* Entries due within SYNACK_SLACK_NS go now too: one scan serves a burst of them. */
		if (!r->used || r->next > now + SYNACK_SLACK_NS)
			continue;
		if (r->tries >= SYNACK_TRIES) {
			l->st.half_open_expired++;
			half_del(l, r, false);
			continue;
		}
		r->tries++;
		if (!send_synack(l, &r->peer, r->iss, r->irs, r->sack, r->ts, ts_now(now, r->ts_off), r->ts_recent,
				 r->snd_wscale))
			l->st.synack_retrans++;
		/* After the last one, the client has 32 s more to answer (Linux gives up at about 63 s). */
		r->next = now + (SYNACK_RTO_NS << r->tries);
	}
	l_timer_update(l);
}

static void unlink_listener(struct listener *l)
{
	struct tcp_state *ts = l->f.e->tcp;

	for (struct listener **p = ts ? &ts->listeners : NULL; p && *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			break;
		}
}

static int steer_entry(struct listener *l, bool add)
{
	return gsoi_steer_listener(l->f.e, l->l3, GSO_L4_TCP, l->addr, l->port, add);
}

/* The engine frees the queued streams itself (they are its flows): only our own memory here. */
static void l_free(struct eflow *f)
{
	struct listener *l = (struct listener *)f;

	unlink_listener(l);
	if (l->steered && l->f.e->steer)
		steer_entry(l, false);
	free(l->pool);
	free(l->bucket);
	free(l->aq);
	free(l);
}

/* Never armed, never following a neighbour (engine_internal.h): only its memory and its timer. */
const struct eflow_ops gsoi_listener_ops = {
	.free = l_free,
	.timers = l_timers,
};

/* ---- the API ------------------------------------------------------------------------------- */

static int get(const struct gso_listener *h, struct listener **out)
{
	struct eflow *f = NULL;
	int err = gsoi_flow_get((uintptr_t)h, HANDLE_LISTENER, &f);

	if (f)
		*out = (struct listener *)f;
	return err;
}

int gsoi_listener_open(struct gso_listener **out, struct gso_engine *h, const struct gso_listen_opts *o,
		       bool steer)
{
	struct engine *e = gsoi_engine_of(h);
	struct tcp_state *ts;
	struct listener *l;
	struct tcp_key k = { 0 };
	uint32_t nb = 1;
	int err;

	if (!out || !h || !o || !GSO_OPTS_VALID(gso_listen_opts, o))
		return -EINVAL;
	if (!e)
		return -EBADF;
	{
		uint8_t l3 = GSO_OPTS_GET(o, l3, (uint8_t)0);
		static const uint8_t zero[16];
		uint32_t rb = GSO_OPTS_GET(o, rcvbuf, 0u), bl = GSO_OPTS_GET(o, backlog, 0u),
			 sb = GSO_OPTS_GET(o, syn_backlog, 0u), mss = GSO_OPTS_GET(o, mss, 0u),
			 fl = GSO_OPTS_GET(o, flags, 0u);

		if ((l3 != GSO_L3_IPV4 && l3 != GSO_L3_IPV6) || !GSO_OPTS_GET(o, port, (uint16_t)0) ||
		    !memcmp(o->addr, zero, l3 == GSO_L3_IPV6 ? 16 : 4) ||
		    (l3 == GSO_L3_IPV4 && memcmp(o->addr + 4, zero, 12)) || (fl & ~GSO_LISTEN_F_KNOWN) ||
		    bl > GSO_LISTEN_MAX_BACKLOG || sb > GSO_LISTEN_MAX_SYN_BACKLOG ||
		    (rb && (rb < GSO_STREAM_MIN_RCVBUF || rb > GSO_STREAM_MAX_RCVBUF)) ||
		    (mss && mss < GSO_STREAM_MIN_MSS + (fl & GSO_STREAM_F_NO_TS ? 0 : GSO_STREAM_TS_LEN)))
			return -EINVAL;
	}
	err = engine_thread_ok(e);
	if (err)
		return err;
	if (e->dead)
		return -ENODEV;
	k.l3 = o->l3;
	memcpy(k.our_addr, o->addr, 16);
	k.our_port = o->port;
	if (find_listener(e, &k))
		return -EADDRINUSE;
	if (!(ts = gsoi_tcp_state(e)))
		return -ENOMEM;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->l3 = o->l3;
	memcpy(l->addr, o->addr, 16);
	l->port = o->port;
	l->backlog = GSO_OPTS_GET(o, backlog, 0u) ?: GSO_LISTEN_DEF_BACKLOG;
	l->syn_backlog = GSO_OPTS_GET(o, syn_backlog, 0u) ?: GSO_LISTEN_DEF_SYN_BACKLOG;
	l->flags = GSO_OPTS_GET(o, flags, 0u);
	l->mss_cap = GSO_OPTS_GET(o, mss, 0u);
	l->rcvbuf = GSO_OPTS_GET(o, rcvbuf, 0u) ?: GSO_STREAM_DEF_RCVBUF;
	l->rcv_wscale = gsoi_tcp_wscale_for(l->rcvbuf);
	while (nb < l->syn_backlog)
		nb <<= 1;
	l->bmask = nb - 1;
	l->pool = calloc(l->syn_backlog, sizeof(*l->pool));
	l->bucket = malloc(nb * sizeof(*l->bucket));
	l->aq = calloc(l->backlog, sizeof(*l->aq));
	if (!l->pool || !l->bucket || !l->aq) {
		err = -ENOMEM;
		goto fail;
	}
	memset(l->bucket, 0xff, nb * sizeof(*l->bucket));
	for (uint32_t i = 0; i < l->syn_backlog; i++)
		l->pool[i].hnext = i + 1 < l->syn_backlog ? i + 1 : NIL32;
	l->free_head = 0;
	l->deadline = UINT64_MAX;
	l->st.backlog = l->backlog;
	l->st.syn_backlog = l->syn_backlog;
	err = gsoi_engine_flow_add(e, &l->f, &gsoi_listener_ops, false, GSO_OPTS_GET(o, ctx, (void *)NULL),
				   HANDLE_LISTENER);
	if (err)
		goto fail;
	if (steer && e->steer) {
		err = steer_entry(l, true);
		if (err) {
			gsoi_engine_flow_del(e, &l->f);
			goto fail;
		}
		l->steered = true;
	}
	l->next = ts->listeners;
	ts->listeners = l;
	*out = (struct gso_listener *)l->f.handle;
	return 0;
fail:
	free(l->pool);
	free(l->bucket);
	free(l->aq);
	free(l);
	return err;
}

int gsoi_tcp_share_secret(struct gso_engine *from, struct gso_engine *to)
{
	struct engine *a = gsoi_engine_of(from), *b = gsoi_engine_of(to);
	struct tcp_state *sa, *sb;

	if (!a || !b)
		return -EBADF;
	sa = gsoi_tcp_state(a);
	sb = gsoi_tcp_state(b);
	if (!sa || !sb)
		return -ENOMEM;
	memcpy(sb->secret, sa->secret, sizeof(sb->secret));
	return 0;
}

int gso_listener__open(struct gso_listener **out, struct gso_engine *e, const struct gso_listen_opts *o)
{
	return gsoi_listener_open(out, e, o, true);
}

int gso_listener__accept(struct gso_stream **out, struct gso_listener *h, const struct gso_stream_opts *o)
{
	struct listener *l;
	uintptr_t sh;
	int err;

	if (!h || !out || (o && !GSO_OPTS_VALID(gso_stream_opts, o)))
		return -EINVAL;
	err = get(h, &l);
	if (err)
		return err;
	while (l->aq_n) {
		struct stream *s = l->aq[l->aq_head];

		l->aq_head = (l->aq_head + 1) % l->backlog;
		l->aq_n--;
		if (gsoi_stream_gone(s)) {
			gsoi_stream_abort(s, false);
			continue;
		}
		err = gsoi_stream_accept(s, o, &sh);
		if (err) {
			/* Bad options: the connection stays queued for a better call. */
			l->aq_head = (l->aq_head + l->backlog - 1) % l->backlog;
			l->aq[l->aq_head] = s;
			l->aq_n++;
			return err;
		}
		l->st.accepted++;
		*out = (struct gso_stream *)sh;
		return 0;
	}
	return -EAGAIN;
}

int gso_listener__close(struct gso_listener *h)
{
	struct listener *l;
	struct engine *e;
	int err = get(h, &l);

	if (err)
		return err;
	e = l->f.e;
	while (l->aq_n) {
		gsoi_stream_abort(l->aq[l->aq_head], true);
		l->aq_head = (l->aq_head + 1) % l->backlog;
		l->aq_n--;
	}
	for (uint32_t i = 0; l->nhalf && i < l->syn_backlog; i++)
		if (l->pool[i].used)
			half_del(l, &l->pool[i], false);
	gsoi_engine_flush_flow_events(e, &l->f);
	gsoi_engine_flow_del(e, &l->f);
	l_free(&l->f);
	return 0;
}

int gso_listener__info(const struct gso_listener *h, struct gso_listener_info *info)
{
	struct gso_listener_info full;
	struct listener *l;
	uint32_t q = 0;
	int err;

	if (!h || !GSO_OUT_VALID(info))
		return -EINVAL;
	err = get(h, &l);
	if (err)
		return err;
	for (uint32_t i = 0; i < l->aq_n; i++)
		q += !gsoi_stream_gone(l->aq[(l->aq_head + i) % l->backlog]);
	full = l->st;
	full.half_open = l->nhalf;
	full.queued = q;
	full.time_wait = gsoi_tw_count(l->f.e, engine_now(l->f.e));
	full.time_wait_reused = l->f.e->tcp ? ((struct tcp_state *)l->f.e->tcp)->reused : 0;
	GSO_OUT_PUT(info, full);
	return 0;
}
