/*
 * Flow send queue: entries, append, the two-phase send, teardown and the
 * consistency check.  ACK, SACK and loss processing live in flowq_ack.c.
 *
 * Entries are index-linked slots of one array laid out at creation, kept in
 * sequence order; a free list holds the unused ones.  Counters (segments
 * unsent, out, SACKed, lost, in flight) are maintained incrementally, but
 * only through gsoi_fq_account(), which derives an entry's segments from its
 * length and MSS at that moment: every change to an entry is "take its
 * contribution out, change it, put the new contribution in".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "flowq_internal.h"
#include "opts_internal.h"

void gsoi_fq_contrib(const struct fq_ent *e, struct fq_count *c)
{
	uint32_t segs = fq_segs(e);

	memset(c, 0, sizeof(*c));
	if (!(e->flags & FQ_SENT)) {
		c->unsent_segs = segs;
		return;
	}
	c->packets_out = segs;
	if (e->flags & FQ_SACKED) {
		c->sacked_out = segs;
		return;
	}
	if (e->flags & FQ_LOST) {
		c->lost_out = segs;
		if (!(e->flags & FQ_RETRANS)) {
			c->lost_pending = segs;
			return;
		}
		c->retrans_out = segs;
	}
	c->in_flight = segs;
	c->in_flight_bytes = e->len;
}

void gsoi_fq_account(struct gso_flowq *q, const struct fq_ent *e, int sign)
{
	struct fq_count d;
	uint32_t *dst = (uint32_t *)&q->c, *src = (uint32_t *)&d;

	gsoi_fq_contrib(e, &d);
	for (size_t k = 0; k < sizeof(d) / sizeof(uint32_t); k++)
		dst[k] += sign > 0 ? src[k] : -src[k];
}

void gsoi_fq_set_flags(struct gso_flowq *q, uint32_t i, uint8_t flags)
{
	gsoi_fq_account(q, &q->ent[i], -1);
	q->ent[i].flags = flags;
	gsoi_fq_account(q, &q->ent[i], +1);
}

static uint32_t fq_alloc(struct gso_flowq *q)
{
	uint32_t i = q->free_head;

	q->free_head = q->ent[i].next;
	q->nfree--;
	q->n++;
	return i;
}

uint32_t gsoi_fq_split(struct gso_flowq *q, uint32_t i, uint32_t at)
{
	struct fq_ent *e = &q->ent[i], *n;
	uint32_t j;

	if (!q->nfree)
		return FQ_NIL;
	j = fq_alloc(q);
	n = &q->ent[j];
	gsoi_fq_account(q, e, -1);
	*n = *e;
	n->seq = e->seq + at;
	n->off = e->off + at;
	n->len = e->len - at;
	e->len = at;
	n->prev = i;
	n->next = e->next;
	if (e->next != FQ_NIL)
		q->ent[e->next].prev = j;
	else
		q->tail = j;
	e->next = j;
	gsoi_fq_account(q, e, +1);
	gsoi_fq_account(q, n, +1);
	return j;
}

void gsoi_fq_remove(struct gso_flowq *q, uint32_t i)
{
	struct fq_ent *e = &q->ent[i];

	gsoi_fq_account(q, e, -1);
	if (e->prev != FQ_NIL)
		q->ent[e->prev].next = e->next;
	else
		q->head = e->next;
	if (e->next != FQ_NIL)
		q->ent[e->next].prev = e->prev;
	else
		q->tail = e->prev;
	if (q->nxt_idx == i)
		q->nxt_idx = e->next;
	e->next = q->free_head;
	e->prev = FQ_NIL;
	q->free_head = i;
	q->nfree++;
	q->n--;
}

/* ---- creation -------------------------------------------------------- */

struct fq_cfg {
	uint32_t cap, max_bytes, isn, dupthresh, flags;
};

static int fq_cfg(const struct gso_flowq_opts *o, struct fq_cfg *c)
{
	if (!GSO_OPTS_VALID(gso_flowq_opts, o))
		return -EINVAL;
	c->cap = GSO_OPTS_GET(o, max_entries, 0) ?: GSO_FLOWQ_DEF_ENTRIES;
	c->max_bytes = GSO_OPTS_GET(o, max_bytes, 0) ?: GSO_FLOWQ_DEF_MAX_BYTES;
	c->isn = GSO_OPTS_GET(o, isn, 0);
	c->dupthresh = GSO_OPTS_GET(o, dupthresh, 0) ?: GSO_FLOWQ_DEF_DUPTHRESH;
	c->flags = GSO_OPTS_GET(o, flags, 0);
	if (c->cap < 2 * GSO_FLOWQ_RESERVE || c->cap > GSO_FLOWQ_MAX_ENTRIES ||
	    c->max_bytes > 65535 || c->dupthresh > 255 ||
	    (c->flags & ~(GSO_FLOWQ_F_NO_SACK | GSO_FLOWQ_F_NO_RACK)))
		return -EINVAL;
	return 0;
}

size_t gso_flowq__mem_size(const struct gso_flowq_opts *o)
{
	struct fq_cfg c;

	if (fq_cfg(o, &c))
		return 0;
	return sizeof(struct gso_flowq) + (size_t)c.cap * sizeof(struct fq_ent);
}

int gso_flowq__init(struct gso_flowq **out, void *mem, size_t len, const struct gso_flowq_opts *o)
{
	struct gso_flowq *q = mem;
	struct fq_cfg c;
	int err;

	if (!mem || !out || ((uintptr_t)mem & 7))
		return -EINVAL;
	err = fq_cfg(o, &c);
	if (err)
		return err;
	if (len < sizeof(*q) + (size_t)c.cap * sizeof(struct fq_ent))
		return -ENOSPC;
	memset(q, 0, sizeof(*q));
	q->cap = c.cap;
	q->max_bytes = c.max_bytes;
	q->dupthresh = c.dupthresh;
	q->flags = c.flags;
	q->una = q->nxt = q->end = c.isn;
	q->wnd = UINT32_MAX;
	q->head = q->tail = q->nxt_idx = FQ_NIL;
	q->rs.sz = sizeof(q->rs);
	for (uint32_t i = 0; i < c.cap; i++) {
		q->ent[i].next = i + 1 < c.cap ? i + 1 : FQ_NIL;
		q->ent[i].prev = FQ_NIL;
	}
	q->free_head = 0;
	q->nfree = c.cap;
	*out = q;
	return 0;
}

int gso_flowq__create(struct gso_flowq **out, const struct gso_flowq_opts *o)
{
	size_t need = gso_flowq__mem_size(o);
	void *mem;
	int err;

	if (!need || !out)
		return -EINVAL;
	mem = malloc(need);
	if (!mem)
		return -ENOMEM;
	err = gso_flowq__init(out, mem, need, o);
	if (err) {
		free(mem);
		return err;
	}
	(*out)->owned = true;
	return 0;
}

void gso_flowq__destroy(struct gso_flowq *q)
{
	if (q && q->owned)
		free(q);
}

/* ---- append ---------------------------------------------------------- */

int gso_flowq__append(struct gso_flowq *q, uint64_t handle, uint32_t off, uint32_t len,
		      uint32_t mss)
{
	uint32_t lim, grow = 0, rest, need, t, seq;

	if (!q || !len || !mss || mss > 65535 || mss > q->max_bytes ||
	    (uint64_t)off + len > UINT32_MAX)
		return -EINVAL;
	if ((uint64_t)(q->end - q->una) + len > GSO_FLOWQ_MAX_QUEUED)
		return -EOVERFLOW;
	/* Whole segments per entry, so that entries cut on the MSS grid. */
	lim = q->max_bytes / mss * mss;
	t = q->tail;
	if (t != FQ_NIL) {
		const struct fq_ent *e = &q->ent[t];

		if (!(e->flags & FQ_SENT) && e->handle == handle && e->off + e->len == off &&
		    e->mss == mss && e->len < lim)
			grow = len < lim - e->len ? len : lim - e->len;
	}
	rest = len - grow;
	need = rest / lim + (rest % lim != 0);
	if (need && q->nfree < need + GSO_FLOWQ_RESERVE)
		return -ENOSPC;

	if (grow) {
		gsoi_fq_account(q, &q->ent[t], -1);
		q->ent[t].len += grow;
		gsoi_fq_account(q, &q->ent[t], +1);
	}
	off += grow;
	seq = q->end + grow;
	while (rest) {
		uint32_t i = fq_alloc(q), l = rest < lim ? rest : lim;
		struct fq_ent *e = &q->ent[i];

		*e = (struct fq_ent){ .handle = handle, .seq = seq, .len = l, .off = off,
				      .mss = (uint16_t)mss, .prev = q->tail, .next = FQ_NIL };
		if (q->tail != FQ_NIL)
			q->ent[q->tail].next = i;
		else
			q->head = i;
		q->tail = i;
		if (q->nxt_idx == FQ_NIL)
			q->nxt_idx = i;
		gsoi_fq_account(q, e, +1);
		seq += l;
		off += l;
		rest -= l;
	}
	q->end += len;
	return 0;
}

/* ---- sending --------------------------------------------------------- */

int gsoi_fq_peek(const struct gso_flowq *q, uint32_t max_segs, struct gso_flowq_tx *tx, uint32_t *idx)
{
	const struct fq_ent *e;
	uint64_t cap;
	uint32_t i, len, flags = 0;

	memset(tx, 0, sizeof(*tx));
	if (q->c.lost_pending) {
		for (i = q->head; i != FQ_NIL; i = q->ent[i].next)
			if ((q->ent[i].flags & (FQ_LOST | FQ_RETRANS | FQ_SACKED)) == FQ_LOST)
				break;
		if (i == FQ_NIL) /* counters say otherwise: never trust a stale count */
			return -EUCLEAN;
		flags = GSO_FLOWQ_TX_RETRANS;
	} else {
		i = q->nxt_idx;
		if (i == FQ_NIL) {
			tx->why = GSO_FLOWQ_WHY_EMPTY;
			return 0;
		}
	}
	e = &q->ent[i];
	cap = (uint64_t)max_segs * e->mss;
	len = cap < e->len ? (uint32_t)cap : e->len;
	if (!flags && q->wnd_known) {
		uint32_t used = q->nxt - q->una;
		uint32_t left = q->wnd > used ? q->wnd - used : 0;

		if (len > left) {
			/* A window-limited burst carries whole segments only (tcp_mss_split_point). */
			len = left / e->mss * e->mss;
			if (!len) {
				if (!left) {
					tx->why = GSO_FLOWQ_WHY_WND;
					return 0;
				}
				if ((uint64_t)left * 2 < q->max_wnd) {
					tx->why = GSO_FLOWQ_WHY_SWS;
					return 0;
				}
				len = left;
			}
		}
	}
	if (len < e->len && !q->nfree) {
		tx->why = GSO_FLOWQ_WHY_SLOTS;
		return 0;
	}
	tx->handle = e->handle;
	tx->off = e->off;
	tx->len = len;
	tx->seq = e->seq;
	tx->mss = e->mss;
	tx->segs = gso_flowq_segs(len, e->mss);
	if (e->seq + len == q->end)
		flags |= GSO_FLOWQ_TX_END;
	tx->flags = flags;
	tx->why = GSO_FLOWQ_WHY_SEND;
	*idx = i;
	return 1;
}

int gso_flowq__peek(const struct gso_flowq *q, uint32_t max_segs, struct gso_flowq_tx *tx)
{
	struct gso_flowq_tx t; /* gsoi_fq_peek() clears it; GSO_OUT_PUT sets sz */
	uint32_t idx;
	int r;

	if (!q || !GSO_OUT_VALID(tx) || !max_segs)
		return -EINVAL;
	r = gsoi_fq_peek(q, max_segs, &t, &idx);
	if (r >= 0)
		GSO_OUT_PUT(tx, t);
	return r;
}

int gso_flowq__sent(struct gso_flowq *q, const struct gso_flowq_tx *tx_in, uint64_t now_ns)
{
	struct gso_flowq_tx p, tx_l; /* filled by gsoi_fq_peek() / GSO_IN_GET */
	const struct gso_flowq_tx *tx;
	struct fq_ent *e;
	uint32_t i, segs;
	int r;

	if (!q || !GSO_OUT_VALID(tx_in))
		return -EINVAL;
	tx = GSO_IN_GET(tx_in, tx_l);
	if (!tx->len || !tx->mss)
		return -EINVAL;
	/* Whatever peek allows now for this many segments is what may be recorded. */
	r = gsoi_fq_peek(q, gso_flowq_segs(tx->len, tx->mss), &p, &i);
	if (r < 0)
		return r;
	if (r == 0)
		return p.why == GSO_FLOWQ_WHY_SLOTS ? -ENOSPC : -EINVAL;
	if (p.seq != tx->seq || p.handle != tx->handle || p.off != tx->off || p.mss != tx->mss ||
	    (p.flags & GSO_FLOWQ_TX_RETRANS) != (tx->flags & GSO_FLOWQ_TX_RETRANS) || tx->len > p.len)
		return -EINVAL;
	if (tx->len < q->ent[i].len && gsoi_fq_split(q, i, tx->len) == FQ_NIL)
		return -ENOSPC;
	e = &q->ent[i];
	segs = fq_segs(e);
	/* A send into an empty pipe starts a flight: its intervals start now (tcp_rate_skb_sent). */
	if (!q->c.packets_out)
		q->first_tx_ns = q->delivered_ns = now_ns;
	if (p.flags & GSO_FLOWQ_TX_RETRANS) {
		gsoi_fq_set_flags(q, i, e->flags | FQ_RETRANS | FQ_EVER_RT);
		q->retrans_segs += segs;
	} else {
		gsoi_fq_set_flags(q, i, FQ_SENT);
		q->nxt += e->len;
		q->nxt_idx = e->next;
		q->sent_segs += segs;
	}
	e->tx_ns = now_ns;
	e->rate_delivered = q->delivered;
	e->rate_ns = q->delivered_ns;
	e->rate_first_ns = q->first_tx_ns;
	e->flags = (uint8_t)((e->flags & ~FQ_APP_LIM) | FQ_RATE | (q->app_limited ? FQ_APP_LIM : 0));
	return 0;
}

/* ---- state ----------------------------------------------------------- */

void gsoi_fq_pipe(const struct gso_flowq *q, uint32_t *segs, uint32_t *bytes)
{
	uint32_t b = q->c.in_flight_bytes;

	/* Without SACK each duplicate ACK stands for one segment that left the network. */
	*segs = q->c.in_flight - (q->reno_dup < q->c.in_flight ? q->reno_dup : q->c.in_flight);
	if (q->reno_dup && q->head != FQ_NIL) {
		uint64_t d = (uint64_t)q->reno_dup * q->ent[q->head].mss;

		b = d < b ? b - (uint32_t)d : 0;
	}
	*bytes = b;
}

int gso_flowq__check_app_limited(struct gso_flowq *q, uint32_t cwnd_segs)
{
	uint32_t pipe, pipe_bytes, unsent, mss;

	if (!q)
		return -EINVAL;
	gsoi_fq_pipe(q, &pipe, &pipe_bytes);
	unsent = q->end - q->nxt;
	mss = q->nxt_idx != FQ_NIL ? q->ent[q->nxt_idx].mss : 1;
	if (unsent >= mss || pipe >= cwnd_segs || q->c.lost_pending)
		return 0;
	/* Until what is in flight now is delivered (0 is "not limited", hence ?: 1). */
	q->app_limited = (q->delivered + pipe_bytes) ?: 1;
	return 1;
}

int gso_flowq__rate_sample(const struct gso_flowq *q, struct gso_rate_sample *rs)
{
	struct gso_rate_sample full;

	if (!q || !GSO_OUT_VALID(rs))
		return -EINVAL;
	full = q->rs;
	GSO_OUT_PUT(rs, full);
	return 0;
}

int gso_flowq__set_wnd(struct gso_flowq *q, uint32_t wnd)
{
	if (!q)
		return -EINVAL;
	q->wnd = wnd;
	q->wnd_known = true;
	if (wnd > q->max_wnd)
		q->max_wnd = wnd;
	return 0;
}

int gso_flowq__info(const struct gso_flowq *q, struct gso_flowq_info *st)
{
	struct gso_flowq_info f;
	uint32_t used;

	if (!q || !GSO_OUT_VALID(st))
		return -EINVAL;
	memset(&f, 0, sizeof(f));
	used = q->nxt - q->una;
	f.snd_una = q->una;
	f.snd_nxt = q->nxt;
	f.write_seq = q->end;
	f.snd_wnd = q->wnd_known ? q->wnd : UINT32_MAX;
	f.wnd_left = !q->wnd_known ? UINT32_MAX : q->wnd > used ? q->wnd - used : 0;
	f.max_wnd = q->max_wnd;
	f.unsent_bytes = q->end - q->nxt;
	f.unacked_bytes = used;
	f.unsent_segs = q->c.unsent_segs;
	f.packets_out = q->c.packets_out;
	f.sacked_out = q->c.sacked_out;
	f.lost_out = q->c.lost_out;
	f.retrans_out = q->c.retrans_out;
	f.lost_pending = q->c.lost_pending;
	gsoi_fq_pipe(q, &f.in_flight, &f.in_flight_bytes);
	f.dupacks = q->dupacks;
	f.in_recovery = q->recovery;
	f.recovery_end = q->recovery ? q->recovery_end : 0;
	f.entries = q->n;
	f.free_entries = q->nfree;
	f.sent_segs = q->sent_segs;
	f.retrans_segs = q->retrans_segs;
	f.lost_marked = q->lost_marked;
	f.sack_unsplit = q->sack_unsplit;
	f.min_rtt_ns = q->min_rtt_ns;
	f.rack_lost = q->rack_lost;
	f.delivered_bytes = q->delivered;
	f.delivery_rate = q->delivery_rate;
	f.app_limited = q->app_limited != 0;
	GSO_OUT_PUT(st, f);
	return 0;
}

uint32_t gso_flowq__snd_nxt(const struct gso_flowq *q)
{
	return q ? q->nxt : 0;
}

uint32_t gso_flowq__unacked_bytes(const struct gso_flowq *q)
{
	return q ? q->nxt - q->una : 0;
}

uint32_t gso_flowq__packets_out(const struct gso_flowq *q)
{
	return q ? q->c.packets_out : 0;
}

uint32_t gso_flowq__unsent_bytes(const struct gso_flowq *q)
{
	return q ? q->end - q->nxt : 0;
}

uint32_t gso_flowq__lost_pending(const struct gso_flowq *q)
{
	return q ? q->c.lost_pending : 0;
}

int gso_flowq__flush(struct gso_flowq *q, struct gso_flowq_rel *rel, unsigned n_rel)
{
	unsigned need = 0, k = 0;
	uint64_t h = 0;

	if (!q || (!rel && n_rel))
		return -EINVAL;
	for (uint32_t i = q->head; i != FQ_NIL; i = q->ent[i].next) {
		if (!need || q->ent[i].handle != h)
			need++;
		h = q->ent[i].handle;
	}
	if (need > n_rel)
		return -ENOSPC;
	while (q->head != FQ_NIL) {
		const struct fq_ent *e = &q->ent[q->head];

		if (!k || rel[k - 1].handle != e->handle)
			rel[k++] = (struct gso_flowq_rel){ .handle = e->handle, .done = 1 };
		rel[k - 1].upto = e->off + e->len;
		gsoi_fq_remove(q, q->head);
	}
	q->una = q->nxt = q->end;
	q->nxt_idx = FQ_NIL;
	q->dupacks = 0;
	q->reno_dup = 0;
	q->recovery = false;
	return (int)k;
}

int gso_flowq__check(const struct gso_flowq *q)
{
	struct fq_count sum, d;
	uint32_t n = 0, nfree = 0, prev = FQ_NIL, seq;
	bool unsent = false, nxt_seen = false;

	if (!q)
		return -EINVAL;
	memset(&sum, 0, sizeof(sum));
	seq = q->una;
	for (uint32_t i = q->head; i != FQ_NIL; i = q->ent[i].next) {
		const struct fq_ent *e = &q->ent[i];
		uint8_t f = e->flags;

		if (i >= q->cap || ++n > q->cap || e->prev != prev || e->seq != seq || !e->len ||
		    !e->mss || (uint64_t)e->off + e->len > UINT32_MAX)
			return -EUCLEAN;
		if (i == q->nxt_idx) {
			if (e->seq != q->nxt)
				return -EUCLEAN;
			nxt_seen = true;
			unsent = true;
		}
		/* Sent entries precede unsent ones; flags follow their rules. */
		if (unsent != !(f & FQ_SENT))
			return -EUCLEAN;
		if (!(f & FQ_SENT) && f)
			return -EUCLEAN;
		if ((f & FQ_SACKED) && (f & (FQ_LOST | FQ_RETRANS)))
			return -EUCLEAN;
		if ((f & FQ_RETRANS) && !(f & FQ_LOST))
			return -EUCLEAN;
		gsoi_fq_contrib(e, &d);
		for (size_t k = 0; k < sizeof(d) / sizeof(uint32_t); k++)
			((uint32_t *)&sum)[k] += ((uint32_t *)&d)[k];
		seq += e->len;
		prev = i;
	}
	if (prev != q->tail || seq != q->end || n != q->n)
		return -EUCLEAN;
	if (!nxt_seen && (q->nxt_idx != FQ_NIL || q->nxt != q->end))
		return -EUCLEAN;
	if (fq_after(q->una, q->nxt) || fq_after(q->nxt, q->end))
		return -EUCLEAN;
	for (uint32_t i = q->free_head; i != FQ_NIL; i = q->ent[i].next)
		if (i >= q->cap || ++nfree > q->cap)
			return -EUCLEAN;
	if (nfree != q->nfree || n + nfree != q->cap)
		return -EUCLEAN;
	if (memcmp(&sum, &q->c, sizeof(sum)))
		return -EUCLEAN;
	return 0;
}
