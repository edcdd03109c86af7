/*
 * Multi-flow scheduler in virtual time: EDT order within a flow, horizon
 * refusal, backpressure when full, fairness between flows (deficit round
 * robin with fq's quanta), the aggregate cap and its accuracy, teardown.
 * The driver loop calls dequeue at exactly the time the scheduler names,
 * as an event loop with a perfect timer would.  Tables run as one test
 * each (rows named in the messages) to keep the process count low.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <gso/gso.h>
#include "gso_test.h"

#define MBIT(x) ((uint64_t)(x) * 1000000u / 8u)
#define MS 1000000ull
#define SEC 1000000000ull

static struct gso_sched *mk(uint32_t flows, uint32_t bursts, uint64_t max_rate,
			    uint64_t horizon)
{
	GSO_OPTS(gso_sched_opts, o, .max_flows = flows, .max_bursts = bursts,
		 .max_rate = max_rate, .horizon_ns = horizon);
	struct gso_sched *s = NULL;

	cr_assert_eq(gso_sched__create(&s, &o), 0);
	cr_assert_not_null(s);
	return s;
}

static uint32_t add_flow(struct gso_sched *s, uint64_t rate, bool pace_all)
{
	GSO_OPTS(gso_pacer_opts, po, .flags = pace_all ? GSO_PACER_F_PACE_ALL : 0);
	uint32_t id;

	cr_assert_eq(gso_sched__flow_add(s, &po, &id), 0);
	cr_assert_eq(gso_sched__flow_set_rate(s, id, rate), 0);
	return id;
}

static int enq(struct gso_sched *s, uint64_t now, uint32_t flow, uint32_t segs, uint64_t cookie,
	       uint64_t *dep)
{
	struct gso_sched_burst b = { .cookie = cookie, .flow = flow, .wire_bytes = segs * 1514,
				     .segs = segs };
	int rc = gso_sched__enqueue(s, now, &b);

	if (!rc && dep)
		*dep = b.departure_ns;
	return rc;
}

/* ---- creation ---- */

Test(sched, create_validates)
{
	struct gso_sched *s = (void *)1;
	struct {
		struct gso_sched_opts o;
		uint8_t tail[8];
	} t;
	static uint64_t mem[4096];

	GSO_OPTS(gso_sched_opts, none);
	cr_expect_eq(gso_sched__create(&s, &none), -EINVAL, "max_flows required");
	cr_expect_eq(gso_sched__create(&s, NULL), -EINVAL);
	GSO_OPTS(gso_sched_opts, nob, .max_flows = 4);
	cr_expect_eq(gso_sched__create(&s, &nob), -EINVAL, "max_bursts required");
	GSO_OPTS(gso_sched_opts, huge, .max_flows = (1u << 24) + 1, .max_bursts = 4);
	cr_expect_eq(gso_sched__create(&s, &huge), -EINVAL);
	GSO_OPTS(gso_sched_opts, flags, .max_flows = 4, .max_bursts = 4, .flags = 1);
	cr_expect_eq(gso_sched__create(&s, &flags), -EINVAL);
	memset(&t, 0, sizeof(t));
	t.o.sz = sizeof(t);
	t.o.max_flows = 4;
	t.o.max_bursts = 4;
	t.tail[2] = 1;
	cr_expect_eq(gso_sched__create(&s, &t.o), -EINVAL, "unknown tail");
	cr_expect_eq(gso_sched__mem_size(&t.o), 0u);
	t.tail[2] = 0;
	cr_expect_gt(gso_sched__mem_size(&t.o), 0u);
	cr_expect_eq(s, (void *)1, "nothing written on error");

	/* caller memory */
	GSO_OPTS(gso_sched_opts, o, .max_flows = 8, .max_bursts = 64);
	size_t need = gso_sched__mem_size(&o);
	cr_assert_gt(need, 0u);
	cr_assert_leq(need, sizeof(mem));
	cr_expect_eq(gso_sched__init(&s, mem, need - 1, &o), -ENOSPC);
	cr_expect_eq(gso_sched__init(&s, (char *)mem + 4, need, &o), -EINVAL, "misaligned");
	cr_expect_eq(gso_sched__init(&s, NULL, need, &o), -EINVAL);
	cr_assert_eq(gso_sched__init(&s, mem, need, &o), 0);
	uint32_t id;
	cr_expect_eq(gso_sched__flow_add(s, NULL, &id), 0);
	gso_sched__destroy(s); /* caller memory: nothing freed */
	gso_sched__destroy(NULL);
}

/* ---- one flow: EDT order, unpaced start, next time ---- */

Test(sched, one_flow_edt)
{
	struct gso_sched *s = mk(4, 64, 0, 0);
	uint32_t f = add_flow(s, 1000000, false); /* 1 MB/s */
	struct gso_sched_burst b;
	uint64_t dep[8], next;

	/* 2-segment bursts, 3028 wire bytes: the first 10 segments unpaced */
	for (int i = 0; i < 8; i++)
		cr_assert_eq(enq(s, 0, f, 2, (uint64_t)i, &dep[i]), 0);
	for (int i = 0; i < 5; i++)
		cr_expect_eq(dep[i], 0u, "burst %d", i);
	cr_expect_eq(dep[5], 0u);
	cr_expect_eq(dep[6], 3028000u);
	cr_expect_eq(dep[7], 6056000u);

	for (int i = 0; i < 6; i++) {
		cr_assert_eq(gso_sched__dequeue(s, 0, &b, &next), 1);
		cr_expect_eq(b.cookie, (uint64_t)i, "FIFO within a flow");
		cr_expect_eq(b.flow, f);
		cr_expect_eq(b.segs, 2u);
	}
	cr_expect_eq(gso_sched__dequeue(s, 0, &b, &next), 0);
	cr_expect_eq(next, 3028000u);
	cr_expect_eq(gso_sched__next_time(s), 3028000u);
	cr_expect_eq(gso_sched__dequeue(s, 3027999, &b, &next), 0, "never early");
	cr_assert_eq(gso_sched__dequeue(s, 3028000, &b, &next), 1);
	cr_expect_eq(b.cookie, 6u);
	cr_assert_eq(gso_sched__dequeue(s, 9000000, &b, &next), 1);
	cr_expect_eq(b.cookie, 7u);
	cr_expect_eq(gso_sched__dequeue(s, 9000000, &b, &next), 0);
	cr_expect_eq(next, UINT64_MAX, "empty");

	struct gso_sched_stats st = { .sz = sizeof(st) };
	cr_assert_eq(gso_sched__stats(s, &st), 0);
	cr_expect_eq(st.enqueued, 8u);
	cr_expect_eq(st.dequeued, 8u);
	/* A caller's shorter struct (an older header) is filled up to its sz. */
	struct gso_sched_stats part;
	memset(&part, 0xff, sizeof(part));
	part.sz = offsetof(struct gso_sched_stats, dequeued);
	cr_assert_eq(gso_sched__stats(s, &part), 0);
	cr_expect_eq(part.enqueued, 8u);
	cr_expect_eq(part.dequeued, UINT64_MAX, "written past sz");
	part.sz = sizeof(size_t);
	cr_expect_eq(gso_sched__stats(s, &part), -EINVAL);
	cr_expect_eq(st.queued, 0u);
	cr_expect_eq(st.queued_bytes, 0u);
	cr_expect_eq(st.late_ns_max, 9000000u - 6056000u);
	gso_sched__destroy(s);
}

/* A burst that left shorter than queued: the flow's next departure moves up by the bytes it did not carry. */
Test(sched, refund_moves_the_next_departure)
{
	struct gso_sched *s = mk(4, 64, 0, 0);
	uint32_t f = add_flow(s, 1000000, false); /* 1 MB/s */
	struct gso_sched_burst b;
	uint64_t dep[8], next;

	/* Past the 10 unpaced segments, then one paced 2-segment burst of 3028 wire bytes. */
	for (int i = 0; i < 6; i++)
		cr_assert_eq(enq(s, 0, f, 2, (uint64_t)i, &dep[i]), 0);
	cr_expect_eq(dep[5], 0u);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(gso_sched__dequeue(s, 0, &b, &next), 1);
	/* The last one carried 1514 bytes of its 3028: 1.514 ms back, next at 1.514 ms. */
	cr_assert_eq(gso_sched__flow_refund(s, f, 1514), 0);
	cr_assert_eq(enq(s, 0, f, 2, 6, &dep[6]), 0);
	cr_expect_eq(dep[6], 1514000u);
	cr_expect_eq(gso_sched__flow_refund(s, f + 1, 1), -ENOENT);
	cr_expect_eq(gso_sched__flow_refund(NULL, f, 1), -EINVAL);
	gso_sched__destroy(s);
}

/* ---- horizon: refused, not queued, and the flow's clock is untouched ---- */

Test(sched, horizon_refusal)
{
	struct gso_sched *s = mk(2, 64, 0, 0);
	uint32_t f = add_flow(s, 1514000, true); /* 1 segment = 1 ms */
	uint64_t dep;
	int i;

	/* default horizon 10 s: bursts up to 10 s ahead are fine */
	for (i = 0; i < 64; i++)
		cr_assert_eq(enq(s, 0, f, 1, 0, &dep), 0);
	gso_sched__destroy(s);

	s = mk(2, 4096, 0, 50 * MS);
	f = add_flow(s, 1514000, true);
	for (i = 0; i <= 50; i++) {
		cr_assert_eq(enq(s, 0, f, 1, (uint64_t)i, &dep), 0, "burst %d", i);
		cr_expect_eq(dep, (uint64_t)i * MS);
	}
	/* the 52nd would depart at 51 ms > 0 + 50 ms */
	cr_expect_eq(enq(s, 0, f, 1, 99, &dep), -ERANGE);
	cr_expect_eq(enq(s, 0, f, 1, 99, &dep), -ERANGE);
	/* a millisecond later it is inside, with the departure it would have had */
	cr_assert_eq(enq(s, MS, f, 1, 51, &dep), 0);
	cr_expect_eq(dep, 51 * MS, "refusals did not advance the clock");

	struct gso_sched_stats st = { .sz = sizeof(st) };
	gso_sched__stats(s, &st);
	cr_expect_eq(st.refused_horizon, 2u);
	cr_expect_eq(st.queued, 52u);
	gso_sched__destroy(s);
}

/* ---- backpressure: a distinct errno when every slot is queued ---- */

Test(sched, full_is_backpressure)
{
	struct gso_sched *s = mk(2, 4, 0, 0);
	uint32_t a = add_flow(s, GSO_RATE_UNPACED, false);
	uint32_t c = add_flow(s, 1514000, true);
	struct gso_sched_burst b;
	uint64_t dep, next;

	cr_assert_eq(enq(s, 0, c, 1, 10, &dep), 0);
	cr_expect_eq(dep, 0u);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(enq(s, 0, a, 1, (uint64_t)i, NULL), 0);
	cr_expect_eq(enq(s, 0, a, 1, 3, NULL), -EAGAIN);
	cr_expect_eq(enq(s, 0, c, 1, 11, NULL), -EAGAIN);
	cr_assert_eq(gso_sched__dequeue(s, 0, &b, &next), 1);
	/* room again; flow c's refused burst left its clock at 1 ms */
	cr_assert_eq(enq(s, 0, c, 1, 11, &dep), 0);
	cr_expect_eq(dep, MS);

	struct gso_sched_stats st = { .sz = sizeof(st) };
	gso_sched__stats(s, &st);
	cr_expect_eq(st.refused_full, 2u);
	gso_sched__destroy(s);
}

/* ---- argument checks, flows ---- */

Test(sched, flows_and_errors)
{
	struct gso_sched *s = mk(2, 8, 0, 0);
	struct gso_sched_burst out[4], b;
	uint32_t a, c, d;
	uint64_t next;

	cr_assert_eq(gso_sched__flow_add(s, NULL, &a), 0);
	cr_assert_eq(gso_sched__flow_add(s, NULL, &c), 0);
	cr_expect_eq(gso_sched__flow_add(s, NULL, &d), -ENOSPC);
	GSO_OPTS(gso_pacer_opts, bad, .flags = 8);
	cr_expect_eq(gso_sched__flow_add(s, &bad, &d), -EINVAL);
	cr_expect_eq(gso_sched__flow_set_rate(s, a, 0), -EINVAL);
	cr_expect_eq(gso_sched__flow_set_rate(s, 7, 1000), -ENOENT);
	cr_expect_eq(enq(s, 0, 7, 1, 0, NULL), -ENOENT);
	struct gso_sched_burst z = { .flow = a, .wire_bytes = 0, .segs = 1 };
	cr_expect_eq(gso_sched__enqueue(s, 0, &z), -EINVAL);
	z.wire_bytes = 100;
	z.segs = 0;
	cr_expect_eq(gso_sched__enqueue(s, 0, &z), -EINVAL);
	cr_expect_eq(gso_sched__enqueue(s, 0, NULL), -EINVAL);
	cr_expect_eq(gso_sched__dequeue(s, 0, NULL, &next), -EINVAL);
	cr_expect_eq(gso_sched__dequeue(NULL, 0, &b, &next), -EINVAL);
	cr_expect_eq(gso_sched__stats(s, NULL), -EINVAL);

	/* paced flow: its bursts wait in the throttled heap, then drain */
	cr_assert_eq(gso_sched__flow_set_rate(s, a, 1514000), 0);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(enq(s, 0, a, 1, (uint64_t)i, NULL), 0);
	cr_assert_eq(gso_sched__dequeue(s, 0, &b, &next), 1);
	cr_expect_eq(b.cookie, 0u);
	cr_expect_eq(gso_sched__flow_del(s, a), -EBUSY);
	cr_expect_eq(gso_sched__flow_drain(s, a, out, 4), 4);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(out[i].cookie, (uint64_t)(i + 1), "oldest first");
	cr_expect_eq(gso_sched__flow_drain(s, a, out, 4), 3);
	cr_expect_eq(gso_sched__flow_drain(s, a, out, 4), 0);
	cr_expect_eq(gso_sched__dequeue(s, 10 * SEC, &b, &next), 0);
	cr_expect_eq(next, UINT64_MAX);
	cr_expect_eq(gso_sched__flow_del(s, a), 0);
	cr_expect_eq(gso_sched__flow_del(s, a), -ENOENT);
	cr_expect_eq(gso_sched__flow_drain(s, a, out, 4), -ENOENT);
	cr_assert_eq(gso_sched__flow_add(s, NULL, &d), 0);
	cr_expect_eq(d, a, "slot reused");
	gso_sched__destroy(s);
}

/* Draining a throttled flow's head re-keys the heap correctly. */
Test(sched, drain_throttled)
{
	struct gso_sched *s = mk(4, 64, 0, 0);
	uint32_t a = add_flow(s, 1514000, true), c = add_flow(s, 1514000, true);
	struct gso_sched_burst out[2], b;
	uint64_t next;

	/* a: 0, 1, 2 ms; c: 0, 1 ms */
	for (int i = 0; i < 3; i++)
		cr_assert_eq(enq(s, 0, a, 1, 100 + (uint64_t)i, NULL), 0);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(enq(s, 0, c, 1, 200 + (uint64_t)i, NULL), 0);
	cr_assert_eq(gso_sched__dequeue(s, 0, &b, &next), 1);
	cr_assert_eq(gso_sched__dequeue(s, 0, &b, &next), 1);
	cr_assert_eq(gso_sched__dequeue(s, 0, &b, &next), 0);
	cr_expect_eq(next, MS);
	/* both throttled now; take a's 1 ms burst away: a's head is at 2 ms */
	cr_assert_eq(gso_sched__flow_drain(s, a, out, 1), 1);
	cr_expect_eq(out[0].cookie, 101u);
	cr_assert_eq(gso_sched__dequeue(s, MS, &b, &next), 1);
	cr_expect_eq(b.cookie, 201u);
	cr_assert_eq(gso_sched__dequeue(s, MS, &b, &next), 0);
	cr_expect_eq(next, 2 * MS);
	cr_assert_eq(gso_sched__dequeue(s, 2 * MS, &b, &next), 1);
	cr_expect_eq(b.cookie, 102u);
	/* drain the last of a throttled flow entirely */
	cr_assert_eq(enq(s, 2 * MS, c, 1, 202, NULL), 0);
	cr_assert_eq(enq(s, 2 * MS, c, 1, 203, NULL), 0);
	cr_assert_eq(gso_sched__dequeue(s, 2 * MS, &b, &next), 1);
	cr_expect_eq(b.cookie, 202u);
	cr_assert_eq(gso_sched__dequeue(s, 2 * MS, &b, &next), 0);
	cr_expect_eq(next, 3 * MS);
	cr_assert_eq(gso_sched__flow_drain(s, c, out, 2), 1);
	cr_expect_eq(out[0].cookie, 203u);
	cr_assert_eq(gso_sched__dequeue(s, 5 * MS, &b, &next), 0);
	cr_expect_eq(next, UINT64_MAX);
	cr_expect_eq(gso_sched__flow_del(s, c), 0);
	gso_sched__destroy(s);
}

/* ---- virtual-time driver ---- */

struct run {
	uint64_t bytes[64];
	uint64_t first_ns, last_ns, total;
	uint32_t n;
};

/*
 * Keep every flow backlogged (`depth` bursts of flow i's size queued) and
 * dequeue at the times the scheduler names until `end_ns`.  Checks that no
 * burst leaves before its departure and that a flow's bursts stay in order.
 */
static void drive_jitter(struct gso_sched *s, const uint32_t *flows, const uint32_t *segs,
			 unsigned n, unsigned depth, uint64_t end_ns, uint64_t jitter_ns,
			 struct run *r)
{
	uint64_t t = 0, last_dep[64] = { 0 }, seq[64] = { 0 }, got[64] = { 0 }, rng = 7;
	struct gso_sched_burst b;

	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < depth; k++)
			cr_assert_eq(enq(s, 0, flows[i], segs[i], seq[i]++, NULL), 0);
	r->first_ns = UINT64_MAX;
	while (t <= end_ns) {
		uint64_t next;
		int rc = gso_sched__dequeue(s, t, &b, &next);

		cr_assert_geq(rc, 0);
		if (!rc) {
			cr_assert_neq(next, UINT64_MAX);
			cr_assert_gt(next, t, "next must move time on");
			/* the timer fires late by up to jitter_ns */
			t = next + (jitter_ns ? gso_test_rand(&rng) % jitter_ns : 0);
			continue;
		}
		unsigned i = 0;
		while (flows[i] != b.flow)
			i++;
		cr_assert_leq(b.departure_ns, t, "dequeued before its departure");
		cr_assert_geq(b.departure_ns, last_dep[i]);
		cr_assert_eq(b.cookie, got[i]++, "flow order");
		last_dep[i] = b.departure_ns;
		r->bytes[i] += b.wire_bytes;
		r->total += b.wire_bytes;
		if (r->first_ns == UINT64_MAX)
			r->first_ns = t;
		r->last_ns = t;
		r->n++;
		cr_assert_eq(enq(s, t, flows[i], segs[i], seq[i]++, NULL), 0);
	}
}

static void drive(struct gso_sched *s, const uint32_t *flows, const uint32_t *segs, unsigned n,
		  unsigned depth, uint64_t end_ns, struct run *r)
{
	drive_jitter(s, flows, segs, n, depth, end_ns, 0, r);
}

/* ---- fairness: N backlogged flows share a capped link within 5 % ---- */

struct fcase {
	unsigned n;
	uint64_t cap_mbit;
	uint32_t seg_mix; /* 0: all 10 segs; 1: 1..44 segs; 2: 1 vs 44 */
};

static struct fcase sched_fairness_cases[] = {
	{ 2, 1000, 2 }, { 4, 1000, 1 }, { 8, 1000, 0 }, { 8, 1000, 1 },
	{ 16, 10000, 1 }, { 32, 10000, 2 }, { 3, 100, 1 },
};

static void sched_fairness_row(const struct fcase *c)
{
	struct gso_sched *s = mk(c->n, c->n * 4, MBIT(c->cap_mbit), 0);
	uint32_t flows[64], segs[64];
	struct run r;

	for (unsigned i = 0; i < c->n; i++) {
		flows[i] = add_flow(s, GSO_RATE_UNPACED, false);
		segs[i] = c->seg_mix == 0 ? 10 : c->seg_mix == 1 ? 1 + (i * 13) % 44 : i % 2 ? 44 : 1;
	}
	/* long enough for every flow to send ~100 of the largest bursts */
	uint64_t end = (uint64_t)c->n * 100 * 44 * 1514 * SEC / MBIT(c->cap_mbit);
	drive(s, flows, segs, c->n, 4, end, &r);
	double mean = (double)r.total / c->n, worst = 0;
	for (unsigned i = 0; i < c->n; i++) {
		double dev = r.bytes[i] / mean - 1.0;
		worst = dev > worst ? dev : -dev > worst ? -dev : worst;
		cr_expect(dev > -0.05 && dev < 0.05, "flow %u (%u segs): %.2f %% off the mean", i,
			  segs[i], dev * 100);
	}
	cr_log_info("fairness %u flows at %lu Mbit/s, size mix %u: worst %.2f %% off the mean",
		    c->n, (unsigned long)c->cap_mbit, c->seg_mix, worst * 100);
	gso_sched__destroy(s);
}

Test(sched, fairness)
{
	for (size_t i = 0; i < sizeof(sched_fairness_cases) / sizeof(sched_fairness_cases[0]); i++)
		sched_fairness_row(&sched_fairness_cases[i]);
}

/*
 * Max-min: a flow paced below its fair share keeps its own rate; the others
 * split the rest evenly.
 */
Test(sched, paced_flow_below_share)
{
	struct gso_sched *s = mk(4, 16, MBIT(1000), 0);
	uint32_t flows[4], segs[4] = { 4, 10, 20, 44 };
	struct run r;

	flows[0] = add_flow(s, MBIT(100), true);
	for (int i = 1; i < 4; i++)
		flows[i] = add_flow(s, GSO_RATE_UNPACED, false);
	drive(s, flows, segs, 4, 4, 2 * SEC, &r);
	double secs = (double)(r.last_ns - r.first_ns) / 1e9;
	double r0 = r.bytes[0] / secs, rest = (r.total - r.bytes[0]) / 3.0;
	cr_expect(r0 / MBIT(100) > 0.99 && r0 / MBIT(100) < 1.01, "paced flow: %.1f Mbit/s",
		  r0 * 8 / 1e6);
	for (int i = 1; i < 4; i++) {
		double dev = r.bytes[i] / rest - 1.0;
		cr_expect(dev > -0.05 && dev < 0.05, "flow %d: %.2f %%", i, dev * 100);
	}
	cr_expect(r.total / secs / MBIT(1000) > 0.99, "link used: %.1f Mbit/s", r.total / secs * 8 / 1e6);
	gso_sched__destroy(s);
}

/* ---- accuracy: per-flow EDT rates and the aggregate cap ---- */

struct rcase {
	uint64_t mbit;
	uint32_t segs;
	bool cap; /* true: one unpaced flow under the aggregate cap; false: flow rate */
	uint32_t jitter_div; /* timer late by up to gap / jitter_div (0: exact) */
};

static struct rcase sched_accuracy_cases[] = {
	{ 10, 1, true, 0 },      { 10, 2, false, 2 },    { 100, 4, true, 3 },
	{ 100, 1, false, 0 },    { 1000, 10, true, 2 },  { 1000, 1, false, 4 },
	{ 10000, 1, true, 0 },   { 10000, 44, false, 2 }, { 40000, 20, true, 4 },
	{ 40000, 1, false, 0 },  { 100000, 1, true, 2 },  { 100000, 44, true, 0 },
	{ 100000, 1, false, 3 }, { 100000, 44, false, 0 }, { 100000, 44, true, 2 },
};

static void sched_accuracy_row(const struct rcase *c)
{
	uint64_t rate = MBIT(c->mbit);
	struct gso_sched *s = mk(2, 8, c->cap ? rate : 0, 0);
	uint32_t f = add_flow(s, c->cap ? GSO_RATE_UNPACED : rate, false);
	uint32_t segs = c->segs;
	struct run r;
	/* ~3000 bursts */
	uint64_t end = 3000ull * segs * 1514 * SEC / rate;

	uint64_t gap = (uint64_t)segs * 1514 * SEC / rate;
	drive_jitter(s, &f, &segs, 1, 4, end, c->jitter_div ? gap / c->jitter_div + 1 : 0, &r);
	cr_assert_gt(r.n, 1000u);
	/* bytes handed out after the first burst, over the time they took */
	double achieved = (double)(r.total - (uint64_t)segs * 1514) * 1e9 / (double)(r.last_ns - r.first_ns);
	double err = achieved / rate - 1.0;
	if (!c->cap) {
		/* the unpaced start (10 segments) runs ahead of the rate: skip it */
		err = (double)(r.total - (uint64_t)segs * 1514 * (10 / segs + 1)) * 1e9 /
		      (double)(r.last_ns - r.first_ns) / rate - 1.0;
	}
	cr_log_info("sched %lu Mbit/s %s, %u segs, jitter 1/%u: %+.4f %%", (unsigned long)c->mbit,
		    c->cap ? "cap" : "flow", segs, c->jitter_div, err * 100);
	cr_expect(err > -0.01 && err < 0.01, "%lu Mbit/s %s, %u segs: %.3f %%",
		  (unsigned long)c->mbit, c->cap ? "cap" : "flow", segs, err * 100);
	gso_sched__destroy(s);
}

Test(sched, accuracy)
{
	for (size_t i = 0; i < sizeof(sched_accuracy_cases) / sizeof(sched_accuracy_cases[0]); i++)
		sched_accuracy_row(&sched_accuracy_cases[i]);
}

/* Two flows at different rates, no cap: each keeps its own (the heap orders them). */
Test(sched, two_rates_interleave)
{
	struct gso_sched *s = mk(2, 16, 0, 0);
	uint32_t flows[2], segs[2] = { 3, 7 };
	struct run r;

	flows[0] = add_flow(s, MBIT(300), true);
	flows[1] = add_flow(s, MBIT(700), true);
	drive(s, flows, segs, 2, 4, SEC / 2, &r);
	double secs = (double)r.last_ns / 1e9;
	double e0 = r.bytes[0] / secs / MBIT(300) - 1.0, e1 = r.bytes[1] / secs / MBIT(700) - 1.0;
	cr_expect(e0 > -0.01 && e0 < 0.01, "300 Mbit/s flow: %.3f %%", e0 * 100);
	cr_expect(e1 > -0.01 && e1 < 0.01, "700 Mbit/s flow: %.3f %%", e1 * 100);
	gso_sched__destroy(s);
}

/*
 * A new flow's first burst does not wait behind a backlogged flow's round:
 * new flows are served first, with the initial quantum (fq).
 */
Test(sched, new_flow_first)
{
	struct gso_sched *s = mk(2, 64, MBIT(1000), 0);
	uint32_t heavy = add_flow(s, GSO_RATE_UNPACED, false);
	struct gso_sched_burst b;
	uint64_t t = 0, next;
	int i;

	for (i = 0; i < 20; i++)
		cr_assert_eq(enq(s, 0, heavy, 44, (uint64_t)i, NULL), 0);
	/* let the heavy flow spend its initial quantum and go around */
	for (i = 0; i < 5; i++) {
		while (gso_sched__dequeue(s, t, &b, &next) == 0)
			t = next;
		cr_expect_eq(b.flow, heavy);
	}
	uint32_t light = add_flow(s, GSO_RATE_UNPACED, false);
	cr_assert_eq(enq(s, t, light, 1, 1000, NULL), 0);
	while (gso_sched__dequeue(s, t, &b, &next) == 0)
		t = next;
	cr_expect_eq(b.flow, light, "the new flow's burst goes next");
	gso_sched__destroy(s);
}

/*
 * Random operations against a model: every burst comes out exactly once
 * (dequeue or drain), in order within its flow, never before its
 * departure; counters match; next_time is never later than a burst that
 * is due.
 */
Test(sched, random_ops_model)
{
	enum { NF = 6, NB = 32 };
	struct gso_sched *s = mk(NF, NB, 0, 0);
	uint64_t st = 42, now = 0, next_cookie = 1;
	uint64_t queued_cookies[NF][NB * 2], queued_dep[NF][NB * 2];
	uint32_t qh[NF] = { 0 }, qt[NF] = { 0 };
	bool live[NF] = { false };
	uint32_t ids[NF];
	uint32_t total = 0;
	struct gso_sched_burst b, out[NB];

	for (int step = 0; step < 20000; step++) {
		uint64_t r = gso_test_rand(&st);
		unsigned f = (unsigned)(r % NF);

		switch ((r >> 8) % 8) {
		case 0: /* add / delete */
			if (!live[f]) {
				GSO_OPTS(gso_pacer_opts, po, .flags = (r >> 16) & 1 ? GSO_PACER_F_PACE_ALL : 0);
				cr_assert_eq(gso_sched__flow_add(s, &po, &ids[f]), 0);
				live[f] = true;
				qh[f] = qt[f] = 0;
			} else if (qh[f] == qt[f]) {
				cr_assert_eq(gso_sched__flow_del(s, ids[f]), 0);
				live[f] = false;
			} else {
				cr_assert_eq(gso_sched__flow_del(s, ids[f]), -EBUSY);
			}
			break;
		case 1: /* rate */
			if (live[f])
				cr_assert_eq(gso_sched__flow_set_rate(s, ids[f],
								      (r >> 20) % 4 ? 1000000 + (r >> 24) % 100000000
										    : GSO_RATE_UNPACED),
					     0);
			break;
		case 2:
		case 3:
		case 4: { /* enqueue */
			if (!live[f])
				break;
			struct gso_sched_burst nb = { .cookie = next_cookie, .flow = ids[f],
						      .segs = 1 + (uint32_t)((r >> 12) % 44) };
			nb.wire_bytes = nb.segs * 1514;
			int rc = gso_sched__enqueue(s, now, &nb);
			if (total == NB) {
				cr_assert(rc == -EAGAIN || rc == -ERANGE, "full: %d", rc);
			} else if (rc == 0) {
				cr_assert_geq(nb.departure_ns, now);
				queued_dep[f][qt[f] % (NB * 2)] = nb.departure_ns;
				queued_cookies[f][qt[f]++ % (NB * 2)] = next_cookie++;
				total++;
			} else {
				cr_assert_eq(rc, -ERANGE);
			}
			break;
		}
		case 5: /* drain some */
			if (live[f]) {
				unsigned want = (unsigned)((r >> 12) % 4);
				int n = gso_sched__flow_drain(s, ids[f], out, want);
				cr_assert_geq(n, 0);
				for (int k = 0; k < n; k++) {
					cr_assert_eq(out[k].cookie, queued_cookies[f][qh[f]++ % (NB * 2)]);
					total--;
				}
			}
			break;
		default: { /* time passes, dequeue what is due */
			uint64_t nt = gso_sched__next_time(s), next;

			now += (r >> 12) % 3000000;
			while (gso_sched__dequeue(s, now, &b, &next) == 1) {
				unsigned g = 0;
				while (!live[g] || ids[g] != b.flow)
					g++;
				cr_assert_leq(b.departure_ns, now);
				cr_assert_geq(b.departure_ns, nt, "next_time %lu was late",
					      (unsigned long)nt);
				cr_assert_eq(b.cookie, queued_cookies[g][qh[g]++ % (NB * 2)],
					     "flow order");
				total--;
			}
			/* nothing due may be left behind */
			for (unsigned g = 0; g < NF; g++)
				if (live[g] && qh[g] != qt[g])
					cr_assert_gt(queued_dep[g][qh[g] % (NB * 2)], now,
						     "flow %u has a due burst left", g);
			if (total) {
				cr_assert_neq(next, UINT64_MAX);
				cr_assert_gt(next, now);
			} else {
				cr_assert_eq(next, UINT64_MAX);
			}
			break;
		}
		}
		struct gso_sched_stats ss = { .sz = sizeof(ss) };
		cr_assert_eq(gso_sched__stats(s, &ss), 0);
		cr_assert_eq(ss.queued, total, "step %d", step);
	}
	gso_sched__destroy(s);
}

Test(sched, dequeue_batch)
{
	struct gso_sched *s = mk(2, 16, 0, 0);
	uint32_t a = add_flow(s, 1514000, true), c = add_flow(s, GSO_RATE_UNPACED, false);
	struct gso_sched_burst out[8];
	uint64_t next;

	for (int i = 0; i < 3; i++) {
		cr_assert_eq(enq(s, 0, a, 1, 10 + (uint64_t)i, NULL), 0);
		cr_assert_eq(enq(s, 0, c, 1, 20 + (uint64_t)i, NULL), 0);
	}
	/* due now: a's first and all of c's */
	cr_expect_eq(gso_sched__dequeue_batch(s, 0, out, 2, &next), 2);
	cr_expect_eq(next, 0u, "more is due: call again");
	cr_expect_eq(gso_sched__dequeue_batch(s, 0, out + 2, 6, &next), 2);
	cr_expect_eq(next, MS);
	uint64_t seen = 0;
	for (int i = 0; i < 4; i++)
		seen |= 1ull << (out[i].cookie - 10);
	cr_expect_eq(seen, (1ull << 0) | (1ull << 10) | (1ull << 11) | (1ull << 12));
	cr_expect_eq(gso_sched__dequeue_batch(s, 5 * MS, out, 8, &next), 2);
	cr_expect_eq(next, UINT64_MAX);
	cr_expect_eq(gso_sched__dequeue_batch(s, 0, NULL, 0, &next), 0);
	cr_expect_eq(gso_sched__dequeue_batch(s, 0, NULL, 1, &next), -EINVAL);
	cr_expect_eq(gso_sched__dequeue_batch(NULL, 0, out, 1, &next), -EINVAL);
	gso_sched__destroy(s);
}
