/*
 * Multi-flow burst scheduler, after Linux sch_fq: bursts carry an EDT stamp
 * from their flow's pacer; flows whose head burst is not due wait in a
 * min-heap keyed by that stamp ("throttled"); due flows take turns by
 * deficit round robin, new flows ahead of old ones.  An optional aggregate
 * rate spaces the bursts of all flows together, and a horizon keeps a
 * too-fast flow from queueing bursts for the far future.  All memory is
 * laid out once at creation: flows, bursts and heap are index-linked arrays.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <gso/sched.h>
#include "opts_internal.h"

#define NIL UINT32_MAX
#define MAX_ENTRIES (1u << 24)

enum { F_FREE, F_IDLE, F_NEW, F_OLD, F_THROTTLED };

struct sflow {
	struct gso_pacer pacer;
	uint64_t rate;
	uint64_t last_dep;   /* departure of the newest queued burst: order within a flow */
	uint64_t idle_since; /* when it last left the lists empty */
	int64_t credit;      /* bytes it may still send this round */
	uint32_t head, tail, qlen;
	uint32_t prev, next; /* new/old list links, or the free list (next) */
	uint32_t heap_pos;
	uint32_t state;
};

struct sburst {
	struct gso_sched_burst b;
	uint32_t next;
};

struct slist {
	uint32_t head, tail;
};

struct gso_sched {
	uint32_t max_flows, max_bursts;
	uint32_t quantum, initial_quantum;
	uint64_t horizon_ns, max_rate, refill_ns;
	bool owned;
	struct sflow *flows;
	struct sburst *bursts;
	uint32_t *heap;
	uint32_t heap_n;
	uint32_t free_flow, free_burst;
	struct slist new_flows, old_flows;
	struct gso_pacer agg; /* spacing of the aggregate cap */
	struct gso_sched_stats st;
};

struct sched_cfg {
	uint32_t max_flows, max_bursts, quantum, initial_quantum;
	uint64_t horizon_ns, max_rate, refill_ns;
};

static int sched_cfg(const struct gso_sched_opts *o, struct sched_cfg *c)
{
	uint32_t mtu;

	if (!o || !GSO_OPTS_VALID(gso_sched_opts, o))
		return -EINVAL;
	c->max_flows = GSO_OPTS_GET(o, max_flows, 0u);
	c->max_bursts = GSO_OPTS_GET(o, max_bursts, 0u);
	mtu = GSO_OPTS_GET(o, mtu, 0u);
	c->quantum = GSO_OPTS_GET(o, quantum, 0u);
	c->initial_quantum = GSO_OPTS_GET(o, initial_quantum, 0u);
	c->horizon_ns = GSO_OPTS_GET(o, horizon_ns, (uint64_t)0);
	c->max_rate = GSO_OPTS_GET(o, max_rate, (uint64_t)0);
	c->refill_ns = GSO_OPTS_GET(o, refill_ns, (uint64_t)0);
	if (GSO_OPTS_GET(o, flags, 0u))
		return -EINVAL;
	if (!c->max_flows || c->max_flows > MAX_ENTRIES || !c->max_bursts ||
	    c->max_bursts > MAX_ENTRIES || mtu > (1u << 24))
		return -EINVAL;
	if (!mtu)
		mtu = GSO_SCHED_DEF_MTU;
	if (!c->quantum)
		c->quantum = 2 * mtu;
	if (!c->initial_quantum)
		c->initial_quantum = 10 * mtu;
	if (c->quantum > (1u << 30) || c->initial_quantum > (1u << 30))
		return -EINVAL;
	if (!c->horizon_ns)
		c->horizon_ns = GSO_SCHED_DEF_HORIZON_NS;
	if (!c->refill_ns)
		c->refill_ns = GSO_SCHED_DEF_REFILL_NS;
	return 0;
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static size_t layout(const struct sched_cfg *c, size_t *off_flows, size_t *off_bursts,
		     size_t *off_heap)
{
	size_t n = align8(sizeof(struct gso_sched));

	*off_flows = n;
	n += align8((size_t)c->max_flows * sizeof(struct sflow));
	*off_bursts = n;
	n += align8((size_t)c->max_bursts * sizeof(struct sburst));
	*off_heap = n;
	n += align8((size_t)c->max_flows * sizeof(uint32_t));
	return n;
}

size_t gso_sched__mem_size(const struct gso_sched_opts *o)
{
	struct sched_cfg c;
	size_t a, b, h;

	if (sched_cfg(o, &c))
		return 0;
	return layout(&c, &a, &b, &h);
}

int gso_sched__init(struct gso_sched **out, void *mem, size_t len,
		    const struct gso_sched_opts *o)
{
	struct sched_cfg c;
	struct gso_sched *s = mem;
	size_t need, of, ob, oh;
	int err;

	if (!mem || !out || ((uintptr_t)mem & 7))
		return -EINVAL;
	err = sched_cfg(o, &c);
	if (err)
		return err;
	need = layout(&c, &of, &ob, &oh);
	if (len < need)
		return -ENOSPC;

	memset(s, 0, sizeof(*s));
	s->max_flows = c.max_flows;
	s->max_bursts = c.max_bursts;
	s->quantum = c.quantum;
	s->initial_quantum = c.initial_quantum;
	s->horizon_ns = c.horizon_ns;
	s->max_rate = c.max_rate;
	s->refill_ns = c.refill_ns;
	s->flows = (struct sflow *)((char *)mem + of);
	s->bursts = (struct sburst *)((char *)mem + ob);
	s->heap = (uint32_t *)((char *)mem + oh);
	for (uint32_t i = 0; i < c.max_flows; i++) {
		memset(&s->flows[i], 0, sizeof(s->flows[i]));
		s->flows[i].state = F_FREE;
		s->flows[i].next = i + 1 < c.max_flows ? i + 1 : NIL;
	}
	for (uint32_t i = 0; i < c.max_bursts; i++)
		s->bursts[i].next = i + 1 < c.max_bursts ? i + 1 : NIL;
	s->free_flow = 0;
	s->free_burst = 0;
	s->new_flows.head = s->new_flows.tail = NIL;
	s->old_flows.head = s->old_flows.tail = NIL;
	{
		GSO_OPTS(gso_pacer_opts, po, .flags = GSO_PACER_F_PACE_ALL);
		s->agg.sz = sizeof(s->agg);
		gso_pacer__init(&s->agg, &po);
	}
	*out = s;
	return 0;
}

int gso_sched__create(struct gso_sched **out, const struct gso_sched_opts *o)
{
	size_t need = gso_sched__mem_size(o);
	void *mem;
	int err;

	if (!need || !out)
		return -EINVAL;
	mem = malloc(need);
	if (!mem)
		return -ENOMEM;
	err = gso_sched__init(out, mem, need, o);
	if (err) {
		free(mem);
		return err;
	}
	(*out)->owned = true;
	return 0;
}

void gso_sched__destroy(struct gso_sched *s)
{
	if (s && s->owned)
		free(s);
}

/* ---- flow lists ---------------------------------------------------------- */

static void list_add_tail(struct gso_sched *s, struct slist *l, uint32_t i)
{
	struct sflow *f = &s->flows[i];

	f->next = NIL;
	f->prev = l->tail;
	if (l->tail != NIL)
		s->flows[l->tail].next = i;
	else
		l->head = i;
	l->tail = i;
}

static void list_del(struct gso_sched *s, struct slist *l, uint32_t i)
{
	struct sflow *f = &s->flows[i];

	if (f->prev != NIL)
		s->flows[f->prev].next = f->next;
	else
		l->head = f->next;
	if (f->next != NIL)
		s->flows[f->next].prev = f->prev;
	else
		l->tail = f->prev;
	f->prev = f->next = NIL;
}

static struct slist *list_of(struct gso_sched *s, const struct sflow *f)
{
	return f->state == F_NEW ? &s->new_flows : &s->old_flows;
}

/* ---- throttled heap: flows keyed by their head burst's departure ---------- */

static uint64_t head_dep(const struct gso_sched *s, uint32_t i)
{
	return s->bursts[s->flows[i].head].b.departure_ns;
}

static void heap_set(struct gso_sched *s, uint32_t pos, uint32_t i)
{
	s->heap[pos] = i;
	s->flows[i].heap_pos = pos;
}

static void heap_up(struct gso_sched *s, uint32_t pos)
{
	uint32_t i = s->heap[pos];
	uint64_t key = head_dep(s, i);

	while (pos) {
		uint32_t parent = (pos - 1) / 2;

		if (head_dep(s, s->heap[parent]) <= key)
			break;
		heap_set(s, pos, s->heap[parent]);
		pos = parent;
	}
	heap_set(s, pos, i);
}

static void heap_down(struct gso_sched *s, uint32_t pos)
{
	uint32_t i = s->heap[pos];
	uint64_t key = head_dep(s, i);

	for (;;) {
		uint32_t c = 2 * pos + 1;

		if (c >= s->heap_n)
			break;
		if (c + 1 < s->heap_n && head_dep(s, s->heap[c + 1]) < head_dep(s, s->heap[c]))
			c++;
		if (head_dep(s, s->heap[c]) >= key)
			break;
		heap_set(s, pos, s->heap[c]);
		pos = c;
	}
	heap_set(s, pos, i);
}

static void heap_push(struct gso_sched *s, uint32_t i)
{
	heap_set(s, s->heap_n++, i);
	heap_up(s, s->heap_n - 1);
	s->flows[i].state = F_THROTTLED;
}

static void heap_remove(struct gso_sched *s, uint32_t i)
{
	uint32_t pos = s->flows[i].heap_pos;
	uint32_t last = s->heap[--s->heap_n];

	s->flows[i].heap_pos = NIL;
	if (last == i)
		return;
	heap_set(s, pos, last);
	heap_up(s, pos);
	heap_down(s, s->flows[last].heap_pos);
}

/* ---- flows ----------------------------------------------------------------- */

static struct sflow *flow_get(struct gso_sched *s, uint32_t id)
{
	if (!s || id >= s->max_flows || s->flows[id].state == F_FREE)
		return NULL;
	return &s->flows[id];
}

int gso_sched__flow_add(struct gso_sched *s, const struct gso_pacer_opts *po, uint32_t *flow)
{
	struct gso_pacer p = { .sz = sizeof(p) };
	struct sflow *f;
	uint32_t i;
	int err;

	if (!s || !flow)
		return -EINVAL;
	err = gso_pacer__init(&p, po);
	if (err)
		return err;
	if (s->free_flow == NIL)
		return -ENOSPC;
	i = s->free_flow;
	f = &s->flows[i];
	s->free_flow = f->next;
	memset(f, 0, sizeof(*f));
	f->pacer = p;
	f->rate = GSO_RATE_UNPACED;
	f->credit = s->initial_quantum;
	f->head = f->tail = NIL;
	f->prev = f->next = NIL;
	f->heap_pos = NIL;
	f->state = F_IDLE;
	s->st.flows++;
	*flow = i;
	return 0;
}

int gso_sched__flow_del(struct gso_sched *s, uint32_t flow)
{
	struct sflow *f;

	if (!s)
		return -EINVAL;
	f = flow_get(s, flow);
	if (!f)
		return -ENOENT;
	if (f->qlen)
		return -EBUSY;
	/* Empty flows may still sit in a list until the next dequeue visits them. */
	if (f->state == F_NEW || f->state == F_OLD)
		list_del(s, list_of(s, f), flow);
	f->state = F_FREE;
	f->next = s->free_flow;
	s->free_flow = flow;
	s->st.flows--;
	return 0;
}

int gso_sched__flow_set_rate(struct gso_sched *s, uint32_t flow, uint64_t rate)
{
	struct sflow *f;

	if (!s || !rate)
		return -EINVAL;
	f = flow_get(s, flow);
	if (!f)
		return -ENOENT;
	f->rate = rate;
	return 0;
}

static void burst_pop(struct gso_sched *s, struct sflow *f, struct gso_sched_burst *out)
{
	uint32_t bi = f->head;
	struct sburst *b = &s->bursts[bi];

	*out = b->b;
	f->head = b->next;
	if (f->head == NIL)
		f->tail = NIL;
	f->qlen--;
	b->next = s->free_burst;
	s->free_burst = bi;
	s->st.queued--;
	s->st.queued_bytes -= out->wire_bytes;
}

int gso_sched__flow_drain(struct gso_sched *s, uint32_t flow, struct gso_sched_burst *out,
			  unsigned n)
{
	struct sflow *f;
	unsigned k = 0;

	if (!s || (!out && n))
		return -EINVAL;
	f = flow_get(s, flow);
	if (!f)
		return -ENOENT;
	while (k < n && f->qlen)
		burst_pop(s, f, &out[k++]);
	if (f->state == F_THROTTLED) {
		/* Its key was the burst just taken: re-place it, or let it go idle. */
		if (f->qlen) {
			heap_down(s, f->heap_pos);
		} else {
			heap_remove(s, flow);
			f->state = F_IDLE;
		}
	}
	if (!f->qlen)
		f->last_dep = 0;
	return (int)k;
}

/* ---- enqueue / dequeue ------------------------------------------------------ */

int gso_sched__flow_refund(struct gso_sched *s, uint32_t flow, uint32_t wire_bytes)
{
	struct sflow *f;

	if (!s)
		return -EINVAL;
	f = flow_get(s, flow);
	if (!f)
		return -ENOENT;
	return gso_pacer__refund(&f->pacer, f->rate, wire_bytes, f->last_dep);
}

int gso_sched__enqueue(struct gso_sched *s, uint64_t now_ns, struct gso_sched_burst *b)
{
	struct gso_pacer p;
	struct sflow *f;
	struct sburst *sb;
	uint64_t dep, limit;
	uint32_t bi;

	if (!s || !b || !b->wire_bytes || !b->segs)
		return -EINVAL;
	f = flow_get(s, b->flow);
	if (!f)
		return -ENOENT;

	/* Stamp a copy: a refused burst must leave the flow's clock alone. */
	p = f->pacer;
	gso_pacer__stamp(&p, now_ns, f->rate, b->wire_bytes, b->segs, &dep);
	if (dep < f->last_dep)
		dep = f->last_dep;
	limit = now_ns > UINT64_MAX - s->horizon_ns ? UINT64_MAX : now_ns + s->horizon_ns;
	if (dep > limit) {
		s->st.refused_horizon++;
		return -ERANGE;
	}
	if (s->free_burst == NIL) {
		s->st.refused_full++;
		return -EAGAIN;
	}

	f->pacer = p;
	f->last_dep = dep;
	bi = s->free_burst;
	sb = &s->bursts[bi];
	s->free_burst = sb->next;
	sb->b = *b;
	sb->b.departure_ns = dep;
	sb->next = NIL;
	if (f->tail != NIL)
		s->bursts[f->tail].next = bi;
	else
		f->head = bi;
	f->tail = bi;
	f->qlen++;
	s->st.queued++;
	s->st.queued_bytes += b->wire_bytes;
	s->st.enqueued++;
	b->departure_ns = dep;

	if (f->state == F_IDLE) {
		/* fq: a flow back from idle is new again; after a long pause it gets
		 * a fresh quantum, a short pause keeps its debt. */
		if (now_ns - f->idle_since >= s->refill_ns && f->credit < (int64_t)s->quantum)
			f->credit = s->quantum;
		f->state = F_NEW;
		list_add_tail(s, &s->new_flows, b->flow);
	}
	return 0;
}

static void unthrottle(struct gso_sched *s, uint64_t now_ns)
{
	while (s->heap_n && head_dep(s, s->heap[0]) <= now_ns) {
		uint32_t i = s->heap[0];

		heap_remove(s, i);
		s->flows[i].state = F_OLD;
		list_add_tail(s, &s->old_flows, i);
	}
}

static uint64_t earliest(const struct gso_sched *s)
{
	uint64_t t;

	if (!s->st.queued)
		return UINT64_MAX;
	if (s->new_flows.head != NIL || s->old_flows.head != NIL)
		t = 0;
	else
		t = s->heap_n ? head_dep(s, s->heap[0]) : 0;
	if (s->max_rate && s->agg.next_ns_ > t)
		t = s->agg.next_ns_;
	return t;
}

int gso_sched__dequeue(struct gso_sched *s, uint64_t now_ns, struct gso_sched_burst *out,
		       uint64_t *next_ns)
{
	if (!s || !out)
		return -EINVAL;
	if (s->st.queued && !(s->max_rate && now_ns < s->agg.next_ns_)) {
		unthrottle(s, now_ns);
		for (;;) {
			struct slist *l = s->new_flows.head != NIL ? &s->new_flows : &s->old_flows;
			uint32_t i = l->head;
			struct sflow *f;
			uint64_t dep, ignored;

			if (i == NIL)
				break;
			f = &s->flows[i];
			if (f->credit <= 0) {
				f->credit += s->quantum;
				list_del(s, l, i);
				f->state = F_OLD;
				list_add_tail(s, &s->old_flows, i);
				continue;
			}
			if (!f->qlen) {
				list_del(s, l, i);
				/* fq: a new flow that ran dry goes to the old list once, so
				 * that flows sending one small burst at a time cannot
				 * starve the others by being new forever. */
				if (l == &s->new_flows && s->old_flows.head != NIL) {
					f->state = F_OLD;
					list_add_tail(s, &s->old_flows, i);
				} else {
					f->state = F_IDLE;
					f->idle_since = now_ns;
				}
				continue;
			}
			dep = head_dep(s, i);
			if (dep > now_ns) {
				list_del(s, l, i);
				heap_push(s, i);
				continue;
			}
			burst_pop(s, f, out);
			f->credit -= out->wire_bytes;
			if (!f->qlen)
				f->last_dep = 0;
			if (now_ns - dep > s->st.late_ns_max)
				s->st.late_ns_max = now_ns - dep;
			if (s->max_rate)
				gso_pacer__stamp(&s->agg, now_ns, s->max_rate, out->wire_bytes,
						 out->segs, &ignored);
			s->st.dequeued++;
			return 1;
		}
	}
	if (next_ns)
		*next_ns = earliest(s);
	return 0;
}

int gso_sched__dequeue_batch(struct gso_sched *s, uint64_t now_ns, struct gso_sched_burst *out,
			     unsigned n, uint64_t *next_ns)
{
	unsigned k = 0;

	if (!s || (!out && n))
		return -EINVAL;
	while (k < n && gso_sched__dequeue(s, now_ns, &out[k], NULL) == 1)
		k++;
	if (next_ns)
		*next_ns = earliest(s);
	return (int)k;
}

uint64_t gso_sched__next_time(const struct gso_sched *s)
{
	return s ? earliest(s) : UINT64_MAX;
}

int gso_sched__stats(const struct gso_sched *s, struct gso_sched_stats *st)
{
	struct gso_sched_stats full;

	if (!s || !GSO_OUT_VALID(st))
		return -EINVAL;
	full = s->st;
	GSO_OUT_PUT(st, full);
	return 0;
}
