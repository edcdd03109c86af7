/*
 * The e1000 model's transmit-opportunity mode (GSO_E1000_F_TXOP, the rules
 * are in <gso/e1000.h>): a device that sends in aggregates at
 * opportunities, as Wi-Fi does, and completes an aggregate's descriptors
 * only once it has left.  It decides when: the engine (e1000_engine.c)
 * still turns descriptors into frames, within the aggregate's budget, and
 * the device thread (e1000_dev.c) or gso_e1000__poll() runs this with the
 * time as an argument and sleeps until the time it returns.
 *
 * The driver sees only the head register (TDH): the device's own head
 * runs ahead of it by the aggregate on the air, which is what makes
 * completions come in batches, one per aggregate.
 */
#include "e1000_internal.h"

#include <string.h>

#define SEED 0x9e3779b97f4a7c15ull

void gsoi_e1000_txop_init(struct e1000_txop *t, const struct e1000_txop_cfg *c)
{
	memset(t, 0, sizeof(*t));
	t->on = true;
	t->c = *c;
	t->rng = SEED;
}

/* splitmix64: the jitter needs no more than a fast, seeded, uniform draw. */
static uint64_t rnd(struct e1000_txop *t)
{
	uint64_t z = (t->rng += SEED);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The time to the next opportunity: period +- jitter, uniform. */
static uint64_t interval(struct e1000_txop *t)
{
	uint64_t j = t->c.jitter_ns;

	if (!j)
		return t->c.period_ns;
	return t->c.period_ns - j + rnd(t) % (2 * j + 1);
}

static uint64_t airtime(const struct e1000_txop *t, uint64_t bytes)
{
	return t->c.rate ? (uint64_t)((double)bytes * 1e9 / (double)t->c.rate) : 0;
}

static void cnt_max(_Atomic uint64_t *c, uint64_t v)
{
	if (v > atomic_load_explicit(c, memory_order_relaxed))
		atomic_store_explicit(c, v, memory_order_relaxed);
}

static void publish(struct e1000_dev *x, uint32_t head)
{
	/* Release pairs with the driver's acquire load of TDH: status write-back before the head. */
	atomic_store_explicit(&x->tdh, head, memory_order_release);
}

/* Publish the head of the aggregate on the air once its airtime is over. */
static void land(struct e1000_dev *x, uint64_t now)
{
	struct e1000_txop *t = &x->txop;

	if (t->in_air && now >= t->done_at) {
		publish(x, t->done_head);
		t->in_air = false;
	}
}

/* Frames of the aggregate's packets to the wire, within its budget, from what was posted at the opportunity. */
static uint32_t emit(struct e1000_dev *x)
{
	uint32_t n;

	x->eng.budget = &x->txop.budget;
	n = gsoi_e1000_engine_run(&x->eng, x->ring, &x->dev_head, x->txop.tail, x->wire);
	x->eng.budget = NULL;
	return n;
}

/*
 * Every frame of the aggregate is out: no packet is half sent, or one is
 * but only because the aggregate is full (split mode), not because the
 * wire is.
 */
static bool on_wire(const struct e1000_dev *x)
{
	return !x->eng.pkt.active || x->txop.budget.stopped;
}

/* Every frame of the aggregate is out: it is on the air until start + airtime. */
static void sent(struct e1000_dev *x, uint64_t now)
{
	struct e1000_txop *t = &x->txop;
	struct e1000_txop_counters *c = &t->cnt;
	const struct e1000_budget *b = &t->budget;
	uint64_t air = airtime(t, b->took_bytes);

	t->sending = false;
	/* A wire that made the device wait (AF_XDP ring full) delays the end past the airtime. */
	t->done_at = t->start + air > now ? t->start + air : now;
	t->done_head = x->dev_head;
	t->in_air = true;
	if (t->next_op < t->done_at)
		t->next_op = t->done_at;
	e1000_cnt_add(&c->txops, 1);
	e1000_cnt_add(&c->bytes, b->took_bytes);
	e1000_cnt_add(&c->airtime_ns, air);
	if (b->full)
		e1000_cnt_add(&c->full, 1);
	cnt_max(&c->frames_max, b->took_frames);
	cnt_max(&c->bytes_max, b->took_bytes);
	atomic_store_explicit(&c->span_ns, t->start - t->first_start, memory_order_relaxed);
}

static uint32_t opportunity(struct e1000_dev *x, uint64_t now)
{
	struct e1000_txop *t = &x->txop;
	struct e1000_txop_counters *c = &t->cnt;
	uint64_t late = now - t->next_op;
	uint32_t n;

	e1000_cnt_add(&c->late_ns, late);
	cnt_max(&c->late_max_ns, late);
	/*
	 * Keep to the schedule, so that a thread woken a little late does not
	 * stretch the mean interval; but one that missed most of an interval
	 * (descheduled) starts afresh rather than sending catch-up aggregates
	 * back to back, which no real medium would grant.
	 */
	t->next_op = (late > t->c.period_ns / 2 ? now : t->next_op) + interval(t);
	/* Acquire pairs with the driver's release store of TDT: descriptors before the tail. */
	t->tail = atomic_load_explicit(&x->tdt, memory_order_acquire);
	if (t->tail == x->dev_head && !x->eng.pkt.active) {
		e1000_cnt_add(&c->empty, 1);
		return 0;
	}
	t->budget = (struct e1000_budget){ .frames = t->c.max_frames, .bytes = t->c.max_bytes, .split = t->c.split };
	t->start = now;
	n = emit(x);
	if (!t->budget.took_frames) {
		/* Context descriptors, dropped packets or half a packet: nothing went on the air. */
		e1000_cnt_add(&c->empty, 1);
		if (n)
			publish(x, x->dev_head);
		return n;
	}
	if (!atomic_load_explicit(&c->txops, memory_order_relaxed))
		t->first_start = now;
	if (on_wire(x))
		sent(x, now);
	else
		t->sending = true;
	return n;
}

uint64_t gsoi_e1000_txop_step(struct e1000_dev *x, uint64_t now, uint32_t *consumed)
{
	struct e1000_txop *t = &x->txop;
	uint32_t n = 0;

	if (!t->started) {
		t->started = true;
		t->next_op = now + interval(t);
	}
	land(x, now);
	if (t->sending) {
		n = emit(x);
		if (on_wire(x))
			sent(x, now);
	} else if (!t->in_air && now >= t->next_op) {
		n = opportunity(x, now);
	}
	if (consumed)
		*consumed = n;
	if (t->sending)
		return now;
	land(x, now);
	return t->in_air && t->done_at < t->next_op ? t->done_at : t->next_op;
}

void gsoi_e1000_txop_flush(struct e1000_dev *x)
{
	/* The device's head covers every packet whose frames are all out (not half a packet's). */
	publish(x, x->dev_head);
	x->txop.in_air = false;
}
