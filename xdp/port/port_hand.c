/*
 * ACK hand-over between the queues of a port.  The peer decides which
 * queue a stream's segments arrive on, and the steering program gives
 * them to the AF_XDP socket of that queue; when that is not the queue of
 * the engine that owns the stream, its worker passes the frame on.
 *
 * Each worker keeps a table "stream -> owning queue" of its own, filled
 * from the owners' messages (a ring per ordered pair of queues): an owner
 * announces a stream when it is hashed, before its SYN leaves, so the
 * SYN-ACK finds the entry; and again when it is freed.  A lookup miss
 * first takes the messages waiting (the announcement may be in flight),
 * then gives up (rx_other).  Frames travel in rings per ordered pair too,
 * and the owner is woken once per receive pass, not per frame.  Nothing
 * on this path takes a lock; messages that do not fit wait in the
 * sender's backlog, in order, and the sender wakes itself to retry.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "port_internal.h"

#define MSG_RING 256u

static void inc(_Atomic uint64_t *c)
{
	/* One writer per counter: a relaxed add is enough for readers on other threads. */
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* ---- the owner table ---- */

static struct port_owner **owner_slot(struct port_q *pq, const struct tcp_key *k)
{
	struct port_owner **o = &pq->owners[gsoi_tcp_key_hash(k) & pq->owners_mask];

	while (*o && memcmp(&(*o)->key, k, sizeof(*k)))
		o = &(*o)->next;
	return o;
}

static void apply(struct port_q *pq, const struct port_msg *m)
{
	struct port_owner **o = owner_slot(pq, &m->key), *x;

	if (m->op == PORT_MSG_ADD) {
		if (*o) {
			(*o)->owner = m->owner;
			return;
		}
		x = malloc(sizeof(*x));
		if (!x)
			return; /* its frames will count as rx_other here */
		x->next = NULL;
		x->key = m->key;
		x->owner = m->owner;
		*o = x;
	} else if (*o && (*o)->owner == m->owner) {
		/* Only the owner that announced it takes it away (it may have moved meanwhile). */
		x = *o;
		*o = x->next;
		free(x);
	}
}

static void take_msgs(struct port_q *pq)
{
	for (uint32_t r = 0; r < pq->p->n; r++) {
		struct port_msg *m;

		if (r == pq->q)
			continue;
		while ((m = gsoi_pring_peek(&pq->msgs_in[r]))) {
			apply(pq, m);
			gsoi_pring_pop(&pq->msgs_in[r]);
		}
	}
}

/* ---- announcing ---- */

static bool push_msg(struct port_q *pq, uint32_t r, const struct port_msg *m)
{
	struct pring *ring = &pq->p->qs[r].msgs_in[pq->q];
	struct port_msg *slot = gsoi_pring_reserve(ring);

	if (!slot)
		return false;
	*slot = *m;
	gsoi_pring_push(ring);
	inc(&pq->ctr.owner_msgs);
	return true;
}

static bool backlog_add(struct port_q *pq, uint32_t r, const struct port_msg *m)
{
	if (pq->nbacklog[r] == pq->capbacklog[r]) {
		uint32_t cap = pq->capbacklog[r] ? 2 * pq->capbacklog[r] : 64;
		struct port_msg *b = realloc(pq->backlog[r], cap * sizeof(*b));

		if (!b)
			return false;
		pq->backlog[r] = b;
		pq->capbacklog[r] = cap;
	}
	pq->backlog[r][pq->nbacklog[r]++] = *m;
	return true;
}

/* Push what waits for queue r; true if something is still waiting. */
static bool backlog_flush(struct port_q *pq, uint32_t r)
{
	uint32_t done = 0;

	while (done < pq->nbacklog[r] && push_msg(pq, r, &pq->backlog[r][done]))
		done++;
	if (done) {
		memmove(pq->backlog[r], pq->backlog[r] + done, (pq->nbacklog[r] - done) * sizeof(struct port_msg));
		pq->nbacklog[r] -= done;
		gso_engine__wake(pq->p->qs[r].e);
	}
	return pq->nbacklog[r] > 0;
}

static void flush_all(struct port_q *pq)
{
	bool left = false;

	for (uint32_t r = 0; r < pq->p->n; r++)
		if (r != pq->q && pq->nbacklog[r])
			left |= backlog_flush(pq, r);
	if (left)
		gso_engine__wake(pq->e); /* try again on our next pass */
}

static void announce(struct port_q *pq, uint32_t op, const struct tcp_key *k)
{
	struct port_msg m = { .op = op, .owner = pq->q, .key = *k };
	bool left = false;

	for (uint32_t r = 0; r < pq->p->n; r++) {
		if (r == pq->q)
			continue;
		/* Behind a backlog it waits its turn: the order of ADD and DEL matters. */
		if (!pq->nbacklog[r] && push_msg(pq, r, &m)) {
			gso_engine__wake(pq->p->qs[r].e);
			continue;
		}
		if (!backlog_add(pq, r, &m))
			inc(&pq->ctr.owner_drops);
		left = true;
	}
	if (left)
		gso_engine__wake(pq->e);
}

static void stream_added(void *ctx, const struct tcp_key *k)
{
	struct port_q *pq = ctx;

	atomic_fetch_add_explicit(&pq->ctr.streams, 1, memory_order_relaxed);
	announce(pq, PORT_MSG_ADD, k);
}

static void stream_removed(void *ctx, const struct tcp_key *k)
{
	struct port_q *pq = ctx;

	atomic_fetch_sub_explicit(&pq->ctr.streams, 1, memory_order_relaxed);
	announce(pq, PORT_MSG_DEL, k);
}

/* A listener's half-open connection: its handshake ACK may come on any queue. */
static void key_owned(void *ctx, const struct tcp_key *k)
{
	announce(ctx, PORT_MSG_ADD, k);
}

static void key_released(void *ctx, const struct tcp_key *k)
{
	announce(ctx, PORT_MSG_DEL, k);
}

/* ---- frames ---- */

static bool foreign(void *ctx, const struct tcp_key *k, const uint8_t *frame, uint32_t len)
{
	struct port_q *pq = ctx;
	struct port_owner *o;
	struct port_frame *f;
	struct pring *ring;

	if (pq->feeding) {
		/* Handed over to us, and the stream has gone meanwhile: never passed on again. */
		inc(&pq->ctr.handover_stale);
		pq->stale_hit = true;
		return true;
	}
	o = *owner_slot(pq, k);
	if (!o) {
		take_msgs(pq);
		o = *owner_slot(pq, k);
	}
	if (!o || o->owner == pq->q || o->owner >= pq->p->n)
		return false;
	ring = &pq->p->qs[o->owner].frames_in[pq->q];
	if (len > UINT16_MAX || !(f = gsoi_pring_reserve(ring))) {
		inc(&pq->ctr.handover_drops);
		return true;
	}
	f->big = NULL;
	if (len > GSO_PORT_HANDOVER_FRAME) {
		/*
		 * Data for a stream that receives (a request, an upload): rarer
		 * than ACKs, so a copy of its own rather than rings of
		 * full-sized slots for every pair of queues.
		 */
		f->big = malloc(len);
		if (!f->big) {
			inc(&pq->ctr.handover_drops);
			return true;
		}
		memcpy(f->big, frame, len);
	} else {
		memcpy(f->data, frame, len);
	}
	f->len = (uint16_t)len;
	f->from = (uint16_t)pq->q;
	gsoi_pring_push(ring);
	inc(&pq->ctr.handover_out);
	pq->dirty |= 1ull << o->owner;
	return true;
}

static void rx_done(void *ctx)
{
	struct port_q *pq = ctx;

	/* One wake-up per owner per receive pass. */
	while (pq->dirty) {
		uint32_t r = (uint32_t)__builtin_ctzll(pq->dirty);

		pq->dirty &= pq->dirty - 1;
		gso_engine__wake(pq->p->qs[r].e);
	}
}

const struct engine_port_hooks gsoi_port_hooks = {
	.foreign = foreign,
	.stream_added = stream_added,
	.stream_removed = stream_removed,
	.key_owned = key_owned,
	.key_released = key_released,
	.rx_done = rx_done,
};

void gsoi_port_hand_wake(struct port_q *pq)
{
	struct port *p = pq->p;
	bool more = false;

	take_msgs(pq);
	pq->feeding = true;
	for (uint32_t r = 0; r < p->n; r++) {
		struct port_frame *f;
		uint32_t k = 0;

		if (r == pq->q)
			continue;
		/* At most one ring's worth per pass, so that one busy queue cannot starve this one. */
		for (; k < p->handover_size && (f = gsoi_pring_peek(&pq->frames_in[r])); k++) {
			pq->stale_hit = false;
			gsoi_engine_input_frame(pq->eng, gso_engine__dev(p->qs[f->from].e), f->big ? f->big : f->data,
						f->len);
			if (!pq->stale_hit)
				inc(&pq->ctr.handover_in);
			free(f->big);
			gsoi_pring_pop(&pq->frames_in[r]);
		}
		more |= k == p->handover_size;
	}
	pq->feeding = false;
	flush_all(pq);
	if (more)
		gso_engine__wake(pq->e);
}

/* ---- set-up ---- */

int gsoi_port_hand_init(struct port *p, struct port_q *pq, uint32_t max_flows)
{
	uint32_t nb = 256;
	int err = -ENOMEM;

	while (nb < 2 * max_flows * p->n && nb < (1u << 20))
		nb <<= 1;
	pq->frames_in = calloc(p->n, sizeof(*pq->frames_in));
	pq->msgs_in = calloc(p->n, sizeof(*pq->msgs_in));
	pq->backlog = calloc(p->n, sizeof(*pq->backlog));
	pq->nbacklog = calloc(p->n, sizeof(*pq->nbacklog));
	pq->capbacklog = calloc(p->n, sizeof(*pq->capbacklog));
	pq->owners = calloc(nb, sizeof(*pq->owners));
	pq->owners_mask = nb - 1;
	if (!pq->frames_in || !pq->msgs_in || !pq->backlog || !pq->nbacklog || !pq->capbacklog || !pq->owners)
		goto fail;
	for (uint32_t r = 0; r < p->n; r++) {
		if (r == pq->q)
			continue;
		if ((err = gsoi_pring_init(&pq->frames_in[r], p->handover_size, sizeof(struct port_frame))) ||
		    (err = gsoi_pring_init(&pq->msgs_in[r], MSG_RING, sizeof(struct port_msg))))
			goto fail;
	}
	return 0;
fail:
	gsoi_port_hand_fini(p, pq);
	return err;
}

void gsoi_port_hand_fini(struct port *p, struct port_q *pq)
{
	for (uint32_t r = 0; r < p->n; r++) {
		struct port_frame *f;

		if (pq->frames_in) {
			while ((f = gsoi_pring_peek(&pq->frames_in[r]))) {
				free(f->big);
				gsoi_pring_pop(&pq->frames_in[r]);
			}
			gsoi_pring_fini(&pq->frames_in[r]);
		}
		if (pq->msgs_in)
			gsoi_pring_fini(&pq->msgs_in[r]);
		if (pq->backlog)
			free(pq->backlog[r]);
	}
	if (pq->owners)
		for (uint32_t i = 0; i <= pq->owners_mask; i++)
			while (pq->owners[i]) {
				struct port_owner *o = pq->owners[i];

				pq->owners[i] = o->next;
				free(o);
			}
	free(pq->frames_in);
	free(pq->msgs_in);
	free(pq->backlog);
	free(pq->nbacklog);
	free(pq->capbacklog);
	free(pq->owners);
	pq->frames_in = pq->msgs_in = NULL;
	pq->backlog = NULL;
	pq->nbacklog = pq->capbacklog = NULL;
	pq->owners = NULL;
}
