/*
 * Flow send queue: ACK processing.  Cumulative trim (whole entries and the
 * byte-exact head of a partially acknowledged one), the SACK scoreboard,
 * duplicate-ACK, SACK and time-based loss marking (RFC 5681/6582 NewReno,
 * RFC 6675 IsLost, RFC 8985 RACK), and the retransmission timeout.
 *
 * Everything that can fail is checked before the first change, so that a
 * refused ACK leaves the queue as it was.  After that point only the
 * splits of SACK and loss marking need free entries; without one they
 * degrade (a SACK edge is not applied, a whole entry is marked lost
 * instead of its first segment) instead of failing.
 */
#include <errno.h>
#include <string.h>
#include "flowq_internal.h"
#include "opts_internal.h"

#define ACK_F_KNOWN GSO_FLOWQ_ACK_F_DATA

struct ack_ctx {
	struct gso_flowq_ack_res *res;
	uint64_t rtt_tx_ns;   /* newest send time among delivered, never retransmitted bytes */
	bool rtt_have;
	uint64_t lost_oldest;
	/* rate sample: the newest transmission this ACK delivers (tcp_rate_skb_delivered) */
	bool rate_have;
	uint8_t rate_flags;   /* GSO_RATE_F_* of that transmission */
	uint32_t rate_end;    /* its end sequence: the tie-break between equal send times */
	uint64_t prior_delivered, prior_ns, snd_interval_ns;
	uint64_t delivered, lost; /* bytes newly delivered / marked lost by this ACK */
};

/*
 * `len` bytes of entry e are delivered now (cumulatively or by SACK, not
 * delivered before).  Of all deliveries of one ACK, the transmission sent
 * last (ties: the higher sequence) gives the sample; it also starts the
 * next flight (first_tx_ns).  A SACKed entry gives its sample once.
 */
static void rate_delivered(struct gso_flowq *q, struct ack_ctx *c, struct fq_ent *e, uint32_t len,
			   bool sacked)
{
	q->delivered += len;
	c->delivered += len;
	if (!(e->flags & FQ_RATE))
		return;
	if (!c->rate_have || e->tx_ns > q->first_tx_ns ||
	    (e->tx_ns == q->first_tx_ns && fq_after(fq_end(e), c->rate_end))) {
		c->rate_have = true;
		c->prior_delivered = e->rate_delivered;
		c->prior_ns = e->rate_ns;
		c->rate_flags = (uint8_t)(((e->flags & FQ_APP_LIM) ? GSO_RATE_F_APP_LIMITED : 0) |
					  ((e->flags & FQ_EVER_RT) ? GSO_RATE_F_RETRANS : 0));
		c->rate_end = fq_end(e);
		c->snd_interval_ns = e->tx_ns - e->rate_first_ns;
		q->first_tx_ns = e->tx_ns;
	}
	if (sacked)
		e->flags &= (uint8_t)~FQ_RATE;
}

/*
 * The ACK's sample (tcp_rate_gen): delivered since the chosen transmission
 * over max(send interval, ACK interval); an interval below the min RTT is
 * no measurement (ACK compression or a retransmission's stale state).
 */
static void rate_gen(struct gso_flowq *q, const struct ack_ctx *c, uint64_t now_ns,
		     uint32_t prior_in_flight)
{
	struct gso_rate_sample *rs = &q->rs;
	uint64_t ack_iv, iv;

	if (q->app_limited && q->delivered > q->app_limited)
		q->app_limited = 0;
	if (c->delivered)
		q->delivered_ns = now_ns;
	memset(rs, 0, sizeof(*rs));
	rs->sz = sizeof(*rs);
	rs->delivered_total = q->delivered;
	rs->rtt_ns = c->res->rtt_ns;
	rs->acked_sacked = (uint32_t)c->delivered;
	rs->losses = (uint32_t)c->lost;
	rs->prior_in_flight = prior_in_flight;
	if (!c->rate_have)
		return;
	ack_iv = now_ns > c->prior_ns ? now_ns - c->prior_ns : 0;
	iv = c->snd_interval_ns > ack_iv ? c->snd_interval_ns : ack_iv;
	rs->prior_delivered = c->prior_delivered;
	rs->snd_interval_ns = c->snd_interval_ns;
	rs->ack_interval_ns = ack_iv;
	rs->flags = c->rate_flags;
	if (!iv || iv < q->min_rtt_ns || q->delivered == c->prior_delivered)
		return;
	rs->delivered = q->delivered - c->prior_delivered;
	rs->interval_ns = iv;
	/* tcpi_delivery_rate: an app-limited sample only when it beats the last one. */
	if (!(rs->flags & GSO_RATE_F_APP_LIMITED) || !q->rate_interval_ns ||
	    (unsigned __int128)rs->delivered * q->rate_interval_ns >=
		    (unsigned __int128)q->rate_delivered * iv) {
		q->rate_delivered = rs->delivered;
		q->rate_interval_ns = iv;
		q->delivery_rate = (uint64_t)((unsigned __int128)rs->delivered * 1000000000u / iv);
	}
}

static void rtt_candidate(struct ack_ctx *c, const struct fq_ent *e)
{
	if (e->flags & FQ_EVER_RT)
		return; /* Karn: whose ACK is it? */
	if (!c->rtt_have || e->tx_ns > c->rtt_tx_ns)
		c->rtt_tx_ns = e->tx_ns;
	c->rtt_have = true;
}

static void mark_lost(struct gso_flowq *q, uint32_t i, struct ack_ctx *c)
{
	struct fq_ent *e = &q->ent[i];
	uint32_t segs = fq_segs(e);

	gsoi_fq_set_flags(q, i, (uint8_t)((e->flags | FQ_LOST) & ~FQ_RETRANS));
	c->lost += e->len;
	c->res->lost_segs += segs;
	q->lost_marked += segs;
	if (e->tx_ns < c->lost_oldest)
		c->lost_oldest = e->tx_ns;
}

/* The first segment at snd_una is lost (third duplicate ACK, NewReno partial ACK). */
static void mark_head_lost(struct gso_flowq *q, struct ack_ctx *c)
{
	uint32_t i = q->head;
	struct fq_ent *e;

	if (i == FQ_NIL)
		return;
	e = &q->ent[i];
	if (!(e->flags & FQ_SENT) || (e->flags & (FQ_SACKED | FQ_LOST)))
		return;
	/* Without a free entry the whole entry goes: more is resent, nothing is missed. */
	if (e->len > e->mss)
		gsoi_fq_split(q, i, e->mss);
	mark_lost(q, i, c);
}

/* RFC 6675 IsLost: dupthresh SACKed segments above an un-SACKed one. */
static void mark_sack_lost(struct gso_flowq *q, struct ack_ctx *c)
{
	uint32_t above = 0;

	for (uint32_t i = q->tail; i != FQ_NIL; i = q->ent[i].prev) {
		const struct fq_ent *e = &q->ent[i];

		if (!(e->flags & FQ_SENT))
			continue;
		if (e->flags & FQ_SACKED)
			above += fq_segs(e);
		else if (!(e->flags & FQ_LOST) && above >= q->dupthresh)
			mark_lost(q, i, c);
	}
}

/*
 * RACK (RFC 8985): bytes sent more than a reordering window before bytes
 * that have been delivered are lost, retransmissions included.  Only holes
 * can be affected (with nothing SACKed or retransmitted, every delivered
 * byte was cumulatively acknowledged and everything left was sent after
 * it), so the walk runs only then.
 */
static void mark_rack_lost(struct gso_flowq *q, struct ack_ctx *c)
{
	uint64_t reo = q->min_rtt_ns / 4;

	if (!q->rack_xmit_ns || !q->min_rtt_ns || q->rack_xmit_ns <= reo)
		return;
	for (uint32_t i = q->head; i != FQ_NIL; i = q->ent[i].next) {
		const struct fq_ent *e = &q->ent[i];
		uint32_t before = c->res->lost_segs;

		if (!(e->flags & FQ_SENT))
			break;
		if ((e->flags & FQ_SACKED) || (e->flags & (FQ_LOST | FQ_RETRANS)) == FQ_LOST)
			continue;
		if (e->tx_ns + reo < q->rack_xmit_ns) {
			mark_lost(q, i, c);
			q->rack_lost += c->res->lost_segs - before;
		}
	}
}

/* Merge SACKed neighbours that continue each other, to give entries back. */
static void merge_sacked(struct gso_flowq *q)
{
	uint32_t i = q->head;

	while (i != FQ_NIL) {
		struct fq_ent *e = &q->ent[i];
		uint32_t j = e->next;
		struct fq_ent *n;

		if (j == FQ_NIL)
			break;
		n = &q->ent[j];
		/* Only whole-segment entries, so that the merged count is the sum. */
		if ((e->flags & FQ_SACKED) && (n->flags & FQ_SACKED) && e->handle == n->handle &&
		    e->mss == n->mss && e->off + e->len == n->off && e->len % e->mss == 0 &&
		    (uint64_t)e->len + n->len <= UINT32_MAX - e->off) {
			uint64_t tx = n->tx_ns > e->tx_ns ? n->tx_ns : e->tx_ns;
			uint8_t rt = n->flags & FQ_EVER_RT;

			gsoi_fq_account(q, e, -1);
			e->len += n->len;
			gsoi_fq_remove(q, j);
			e->tx_ns = tx;
			e->flags |= rt;
			gsoi_fq_account(q, e, +1);
			continue;
		}
		i = j;
	}
}

/* Mark the whole segments inside [s, e) SACKed (s > snd_una, e <= snd_nxt). */
static void sack_block(struct gso_flowq *q, uint32_t s, uint32_t end, struct ack_ctx *c)
{
	for (uint32_t i = q->head; i != FQ_NIL; i = q->ent[i].next) {
		struct fq_ent *e = &q->ent[i];
		uint32_t lo, hi, mss = e->mss, segs;

		if (!fq_after(fq_end(e), s))
			continue;
		if (!fq_before(e->seq, end))
			break;
		if (e->flags & FQ_SACKED)
			continue;
		/* Only whole segments of this entry's grid: the peer holds whole segments. */
		lo = fq_after(s, e->seq) ? s - e->seq : 0;
		lo = (uint32_t)(((uint64_t)lo + mss - 1) / mss * mss);
		hi = fq_before(end, fq_end(e)) ? (end - e->seq) / mss * mss : e->len;
		if (lo >= hi)
			continue;
		if (hi < e->len && gsoi_fq_split(q, i, hi) == FQ_NIL) {
			c->res->sack_unsplit++;
			q->sack_unsplit++;
			continue;
		}
		if (lo > 0) {
			uint32_t j = gsoi_fq_split(q, i, lo);

			if (j == FQ_NIL) {
				c->res->sack_unsplit++;
				q->sack_unsplit++;
				continue;
			}
			i = j;
			e = &q->ent[i];
		}
		segs = fq_segs(e);
		c->res->sacked_segs += segs;
		c->res->delivered_segs += segs;
		rtt_candidate(c, e);
		rate_delivered(q, c, e, e->len, true);
		gsoi_fq_set_flags(q, i, (uint8_t)((e->flags & ~(FQ_LOST | FQ_RETRANS)) | FQ_SACKED));
	}
}

static void rel_add(struct gso_flowq_rel *rel, unsigned *k, uint64_t handle, uint32_t upto)
{
	if (!*k || rel[*k - 1].handle != handle)
		rel[(*k)++] = (struct gso_flowq_rel){ .handle = handle, .done = 1 };
	rel[*k - 1].upto = upto;
}

int gso_flowq__ack(struct gso_flowq *q, const struct gso_flowq_ack *a,
		   struct gso_flowq_ack_res *res_out, struct gso_flowq_rel *rel, unsigned n_rel)
{
	struct gso_flowq_ack_res res_l, *res = &res_l;
	struct gso_flowq_ack A;
	struct ack_ctx c;
	uint32_t old_una, old_wnd, need = 0, i, pipe, prior_in_flight;
	uint64_t h = 0;
	bool old_known;
	unsigned k = 0;

	if (!q || !a || !GSO_OUT_VALID(res_out) || (!rel && n_rel) || !GSO_OPTS_VALID(gso_flowq_ack, a))
		return -EINVAL;
	memset(&A, 0, sizeof(A));
	memcpy(&A, a, a->sz < sizeof(A) ? a->sz : sizeof(A));
	if ((A.flags & ~ACK_F_KNOWN) || A.n_sack > GSO_FLOWQ_MAX_SACK || fq_after(A.ack, q->nxt))
		return -EINVAL;
	for (unsigned b = 0; b < A.n_sack; b++)
		if (!fq_after(A.sack[b].end, A.sack[b].start) || fq_after(A.sack[b].end, q->nxt))
			return -EINVAL;

	memset(res, 0, sizeof(*res));
	if (fq_before(A.ack, q->una)) {
		res->flags = GSO_FLOWQ_RES_OLD;
		res->dupacks = q->dupacks;
		memset(&q->rs, 0, sizeof(q->rs));
		q->rs.sz = sizeof(q->rs);
		q->rs.delivered_total = q->delivered;
		gsoi_fq_pipe(q, &pipe, &q->rs.prior_in_flight);
		GSO_OUT_PUT(res_out, res_l);
		return 0;
	}
	for (i = q->head; i != FQ_NIL && fq_before(q->ent[i].seq, A.ack); i = q->ent[i].next) {
		if (!need || q->ent[i].handle != h)
			need++;
		h = q->ent[i].handle;
	}
	if (need > n_rel)
		return -ENOSPC;

	/* Nothing below fails. */
	memset(&c, 0, sizeof(c));
	c.res = res;
	c.lost_oldest = UINT64_MAX;
	old_una = q->una;
	old_wnd = q->wnd;
	old_known = q->wnd_known;

	gsoi_fq_pipe(q, &pipe, &prior_in_flight);
	while ((i = q->head) != FQ_NIL && !fq_after(fq_end(&q->ent[i]), A.ack)) {
		struct fq_ent *e = &q->ent[i];
		uint32_t segs = fq_segs(e);

		res->acked_segs += segs;
		if (!(e->flags & FQ_SACKED)) {
			res->delivered_segs += segs;
			rtt_candidate(&c, e);
			rate_delivered(q, &c, e, e->len, false);
		}
		rel_add(rel, &k, e->handle, e->off + e->len);
		gsoi_fq_remove(q, i);
	}
	if (i != FQ_NIL && fq_before(q->ent[i].seq, A.ack)) {
		/* Partial ACK: trim the head now, count the segments it completed. */
		struct fq_ent *e = &q->ent[i];
		uint32_t d = A.ack - e->seq, before = fq_segs(e), after;

		gsoi_fq_account(q, e, -1);
		e->seq += d;
		e->off += d;
		e->len -= d;
		gsoi_fq_account(q, e, +1);
		after = fq_segs(e);
		res->acked_segs += before - after;
		if (!(e->flags & FQ_SACKED)) {
			res->delivered_segs += before - after;
			rtt_candidate(&c, e);
			rate_delivered(q, &c, e, d, false);
		}
		rel_add(rel, &k, e->handle, e->off);
	}
	if (k && q->head != FQ_NIL && q->ent[q->head].handle == rel[k - 1].handle)
		rel[k - 1].done = 0;
	res->n_rel = k;
	q->una = A.ack;
	res->acked_bytes = A.ack - old_una;

	if (old_known && fq_before(A.ack + A.wnd, old_una + old_wnd))
		res->flags |= GSO_FLOWQ_RES_WND_SHRUNK;
	q->wnd = A.wnd;
	q->wnd_known = true;
	if (A.wnd > q->max_wnd)
		q->max_wnd = A.wnd;

	if (res->acked_bytes) {
		res->flags |= GSO_FLOWQ_RES_ADVANCED;
		q->dupacks = 0;
		/* The ACK covers the segment that was missing plus those the duplicates announced. */
		if (res->acked_segs)
			q->reno_dup -= res->acked_segs - 1 < q->reno_dup ? res->acked_segs - 1 : q->reno_dup;
	} else if (q->nxt != q->una && !(A.flags & GSO_FLOWQ_ACK_F_DATA) && old_known &&
		   A.wnd <= old_wnd) {
		/* A window that grew is an update, not a duplicate (as Linux's tcp_may_update_window). */
		res->flags |= GSO_FLOWQ_RES_DUP;
		q->dupacks++;
		/*
		 * Without SACK a duplicate is the only sign that a segment left the
		 * network: count one out of flight (Linux's tcp_add_reno_sack), which
		 * gives limited transmit (RFC 3042) and fast recovery room to send.
		 */
		if ((q->flags & GSO_FLOWQ_F_NO_SACK) && q->reno_dup < q->c.in_flight)
			q->reno_dup++;
	}
	if (q->recovery && !fq_before(q->una, q->recovery_end)) {
		q->recovery = false;
		q->reno_dup = 0;
		res->flags |= GSO_FLOWQ_RES_RECOVERED;
	}

	for (unsigned b = 0; b < A.n_sack; b++) {
		uint32_t s = A.sack[b].start, e = A.sack[b].end;

		if (!fq_after(e, q->una)) {
			res->dsack++;
			continue;
		}
		if (fq_before(s, q->una))
			s = q->una;
		sack_block(q, s, e, &c);
	}
	if (res->sacked_segs)
		merge_sacked(q);
	if (c.rtt_have && A.now_ns > c.rtt_tx_ns) {
		res->rtt_ns = A.now_ns - c.rtt_tx_ns;
		if (!q->min_rtt_ns || res->rtt_ns < q->min_rtt_ns)
			q->min_rtt_ns = res->rtt_ns;
	}

	if ((res->flags & GSO_FLOWQ_RES_DUP) && q->dupacks == q->dupthresh)
		mark_head_lost(q, &c);
	if ((q->flags & GSO_FLOWQ_F_NO_SACK) && q->recovery && (res->flags & GSO_FLOWQ_RES_ADVANCED))
		mark_head_lost(q, &c); /* NewReno: a partial ACK shows the next hole */
	if (!(q->flags & GSO_FLOWQ_F_NO_SACK) && q->c.sacked_out >= q->dupthresh)
		mark_sack_lost(q, &c);
	if (c.rtt_have && c.rtt_tx_ns > q->rack_xmit_ns)
		q->rack_xmit_ns = c.rtt_tx_ns;
	if (!(q->flags & (GSO_FLOWQ_F_NO_SACK | GSO_FLOWQ_F_NO_RACK)) && (q->c.sacked_out || q->c.retrans_out))
		mark_rack_lost(q, &c);
	if (res->lost_segs) {
		res->lost_sent_ns = c.lost_oldest;
		if (!q->recovery) {
			q->recovery = true;
			q->recovery_end = q->nxt;
			res->flags |= GSO_FLOWQ_RES_RECOVERY;
		}
	}
	res->dupacks = q->dupacks;
	rate_gen(q, &c, A.now_ns, prior_in_flight);
	GSO_OUT_PUT(res_out, res_l);
	return 0;
}

int gso_flowq__timeout(struct gso_flowq *q)
{
	uint32_t n = 0;

	if (!q)
		return -EINVAL;
	for (uint32_t i = q->head; i != FQ_NIL; i = q->ent[i].next) {
		struct fq_ent *e = &q->ent[i];

		if (!(e->flags & FQ_SENT) || (e->flags & FQ_SACKED))
			continue;
		if ((e->flags & (FQ_LOST | FQ_RETRANS)) == FQ_LOST)
			continue; /* still waiting for its retransmission */
		n += fq_segs(e);
		gsoi_fq_set_flags(q, i, (uint8_t)((e->flags | FQ_LOST) & ~FQ_RETRANS));
	}
	q->lost_marked += n;
	q->dupacks = 0;
	q->reno_dup = 0;
	q->recovery = q->nxt != q->una;
	q->recovery_end = q->nxt;
	return (int)n;
}

int gso_flowq__set_mss(struct gso_flowq *q, uint32_t mss)
{
	uint32_t n = 0;

	if (!q || !mss || mss > 65535)
		return -EINVAL;
	for (uint32_t i = q->head; i != FQ_NIL; i = q->ent[i].next) {
		struct fq_ent *e = &q->ent[i];
		uint8_t f = e->flags;
		/* Linux's tcp_skb_seglen: one segment is as long as the entry, more are mss long. */
		bool too_long = e->len > mss;

		if (e->mss <= mss)
			continue;
		gsoi_fq_account(q, e, -1);
		e->mss = (uint16_t)mss;
		if ((f & FQ_SENT) && !(f & FQ_SACKED) && too_long && (f & (FQ_LOST | FQ_RETRANS)) != FQ_LOST) {
			e->flags = (uint8_t)((f | FQ_LOST) & ~FQ_RETRANS);
			n += fq_segs(e);
		}
		gsoi_fq_account(q, e, +1);
	}
	if (n) {
		q->lost_marked += n;
		q->recovery = true;
		q->recovery_end = q->nxt;
	}
	return (int)n;
}
