/*
 * The transmit engine in virtual time, over a fake device that records
 * every super-segment with the (virtual) time it was handed over and can
 * be told to push back (-EAGAIN), to be down (-ENETDOWN) or gone
 * (-ENODEV).  The driver loop polls the engine exactly when it says it has
 * work, as a perfect timer would.
 *
 * What is checked: pacing per flow (spacing = wire bytes / rate, achieved
 * rate), order and IP IDs within a flow, one completion event per send
 * with its cookie, -EAGAIN on full queues with nothing queued, link down
 * (nothing sent, nothing lost, everything after the link-up in order),
 * backpressure (the rest of a batch first in line), flow close with data
 * queued, the device going away, bad input with distinct errnos.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gso/engine.h>
#include <gso/gso.h>
#include "dev/dev_internal.h"
#include "engine/engine_internal.h"
#include <gso/csum.h>
#include "gso_test.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define MAX_REC 200000

/* ---- the fake device ---- */

struct rec {
	uint64_t t;        /* virtual time of the hand-over */
	uint16_t sport;    /* which flow (UDP source port) */
	uint16_t ip_id;
	uint32_t len, mss, first_word;
	uint8_t tcp_flags; /* a stream's frames: the TCP flags of the template */
};

struct fake {
	struct gso_dev dev;
	uint32_t mtu;
	int mode;          /* 0 ok, -ENETDOWN, -ENODEV */
	uint32_t room;     /* super-segments it takes before -EAGAIN (UINT32_MAX: unlimited) */
	uint32_t queued_down; /* taken while down: they wait for a kick */
	unsigned nrec;
	struct rec *rec;
	uint64_t kicks;
	struct dev_mem mem; /* buffers for stream flows (fake_mem) */
};

static uint64_t vnow;

static uint64_t vclock(void *ctx)
{
	(void)ctx;
	return vnow;
}

static struct fake *F(struct gso_dev *d)
{
	return (struct fake *)d;
}

static void f_caps(const struct gso_dev *d, struct gso_dev_caps *c)
{
	c->mtu = ((const struct fake *)d)->mtu;
	c->max_frame = c->mtu + 14;
	c->max_segs = 4096;
	c->max_frags = 1;
}

static int f_plan(struct gso_dev *d, const struct gso_tx *tx, struct gso_tx_plan *p)
{
	(void)d;
	memset(p, 0, sizeof(*p));
	p->frames = p->descs = tx->len ? (tx->len + tx->mss - 1) / tx->mss : 1;
	return 0;
}

static void record(struct fake *f, const struct gso_tx *tx)
{
	const struct gso_tmpl *t = tx->tmpl;
	struct rec *r;

	cr_assert_lt(f->nrec, MAX_REC);
	r = &f->rec[f->nrec++];
	r->t = vnow;
	r->sport = (uint16_t)(t->hdr[t->l4_off] << 8 | t->hdr[t->l4_off + 1]);
	r->ip_id = (uint16_t)(t->hdr[t->l3_off + 4] << 8 | t->hdr[t->l3_off + 5]);
	r->len = tx->len;
	r->mss = tx->mss;
	r->first_word = 0;
	r->tcp_flags = t->l4 == GSO_L4_TCP ? t->hdr[t->l4_off + 13] : 0;
	if (tx->len >= 4 && tx->data)
		memcpy(&r->first_word, tx->data, 4);
}

static int f_submit(struct gso_dev *d, const struct gso_tx *tx, unsigned n)
{
	struct fake *f = F(d);
	unsigned k = 0;

	if (f->mode == -ENODEV)
		return -ENODEV;
	if (f->mode == -ENETDOWN && f->queued_down)
		return -ENETDOWN; /* as the AF_XDP device: one call queues, later ones are refused */
	for (; k < n && f->room; k++) {
		if (f->room != UINT32_MAX)
			f->room--;
		if (f->mode == -ENETDOWN)
			f->queued_down++;
		else
			record(f, &tx[k]);
	}
	return k ? (int)k : -EAGAIN;
}

static int f_kick(struct gso_dev *d)
{
	struct fake *f = F(d);

	f->kicks++;
	if (f->mode)
		return f->mode;
	f->queued_down = 0;
	return 0;
}

static int f_reap(struct gso_dev *d, unsigned max)
{
	(void)d;
	(void)max;
	return 0;
}

static void f_stats(struct gso_dev *d, struct gso_dev_stats *st)
{
	(void)d;
	(void)st;
}

static void f_close(struct gso_dev *d)
{
	(void)d;
}

static void f_destroy(struct gso_dev *d)
{
	if (d->mem) {
		gsoi_ua_fini(&d->mem->ua);
		free(d->mem->base);
	}
	free(F(d)->rec);
	free(d);
}

static uint32_t f_inflight(const struct gso_dev *d)
{
	(void)d;
	return 0;
}

static const struct gso_dev_ops fake_ops = {
	.kind = "fake", .caps = f_caps, .plan = f_plan, .submit = f_submit, .kick = f_kick, .reap = f_reap,
	.stats = f_stats, .close = f_close, .destroy = f_destroy, .inflight = f_inflight,
};

static struct fake *fake_new(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	cr_assert_not_null(f);
	f->dev.ops = &fake_ops;
	snprintf(f->dev.name, sizeof(f->dev.name), "fake");
	f->mtu = 1500;
	f->room = UINT32_MAX;
	f->rec = calloc(MAX_REC, sizeof(*f->rec));
	cr_assert_not_null(f->rec);
	return f;
}

/* Device memory for stream flows' buffers: what they write into before it is sent. */
static void fake_mem(struct fake *f)
{
	f->mem.chunk_size = 2048;
	f->mem.len = 1024ull * f->mem.chunk_size;
	f->mem.base = calloc(1, f->mem.len);
	cr_assert_not_null(f->mem.base);
	cr_assert_eq(gsoi_ua_init(&f->mem.ua, 1024, 1024), 0);
	f->dev.mem = &f->mem;
}

/* ---- events ---- */

#define MAX_EV 200000

struct evlog {
	unsigned n;
	struct gso_engine_event ev[MAX_EV];
};

static struct evlog *evs;

static void on_event(void *ctx, const struct gso_engine_event *ev)
{
	(void)ctx;
	cr_assert_lt(evs->n, MAX_EV);
	evs->ev[evs->n++] = *ev;
}

static void setup(void)
{
	evs = calloc(1, sizeof(*evs));
	cr_assert_not_null(evs);
	vnow = 1 * SEC;
}

static void teardown(void)
{
	free(evs);
}

static struct gso_engine *engine(struct fake *f, uint32_t max_flows, uint32_t flow_queue)
{
	GSO_OPTS(gso_engine_opts, o, .max_flows = max_flows, .flow_queue = flow_queue, .on_event = on_event,
		 .clock = vclock, .flags = GSO_ENGINE_F_NO_LINK_MONITOR);
	struct gso_engine *e = NULL;

	cr_assert_eq(gso_engine__create(&e, &f->dev, &o), 0);
	return e;
}

static struct gso_tmpl udp_tmpl(uint16_t sport, uint16_t ip_id)
{
	GSO_OPTS(gso_tmpl_fields, tf, .l3 = GSO_L3_IPV4, .l4 = GSO_L4_UDP, .sport = sport, .dport = 4433, .df = true,
		 .ip_id = ip_id);
	struct gso_tmpl t;

	memcpy(tf.eth_dst, "\x02\0\0\0\0\2", 6);
	memcpy(tf.eth_src, "\x02\0\0\0\0\1", 6);
	memcpy(tf.saddr, "\x0a\0\0\1", 4);
	memcpy(tf.daddr, "\x0a\0\0\2", 4);
	cr_assert_eq(gso_tmpl__build(&t, &tf), 0);
	return t;
}

static struct gso_dgram *dgram(struct gso_engine *e, uint16_t sport, uint64_t rate, uint32_t qlen)
{
	struct gso_tmpl t = udp_tmpl(sport, 100);
	GSO_OPTS(gso_dgram_opts, o, .tmpl = &t, .rate = rate, .queue_len = qlen, .ctx = (void *)(uintptr_t)sport);
	struct gso_dgram *d = NULL;

	cr_assert_eq(gso_dgram__open(&d, e, &o), 0);
	return d;
}

/* Poll at every time the engine names, until `until` or until it has nothing to do. */
static void run_until(struct gso_engine *e, uint64_t until)
{
	for (int i = 0; i < 10000000; i++) {
		uint64_t next;
		int r = gso_engine__poll(e, &next);

		if (r)
			return;
		if (next == GSO_EVLOOP_FOREVER || next > until) {
			vnow = until;
			return;
		}
		vnow = next > vnow ? next : vnow + 1000;
	}
	cr_assert_fail("the engine never went quiet");
}

static unsigned count_events(uint32_t type, uint16_t flow)
{
	unsigned n = 0;

	for (unsigned i = 0; i < evs->n; i++)
		n += evs->ev[i].type == type && (!flow || (uintptr_t)evs->ev[i].flow_ctx == flow);
	return n;
}

static uint8_t payload[65536];

/* ---- tests ---- */

TestSuite(engine, .init = setup, .fini = teardown, .timeout = 60);

/* Each flow's super-segments leave spaced by wire bytes / rate, at the rate asked for. */
Test(engine, pacing_per_flow)
{
	static const uint64_t rates[3] = { 1000000, 2000000, 4000000 }; /* wire bytes/s */
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 8, 64);
	struct gso_dgram *d[3];
	uint32_t len = 4000, mss = 1000, wire = len + 4 * 42;
	uint64_t t0 = vnow;
	unsigned sent[3] = { 0 };

	for (int i = 0; i < 3; i++)
		d[i] = dgram(e, (uint16_t)(1000 + i), rates[i], 64);
	/* Keep every flow backlogged for 2 s: refill whenever a send completed. */
	while (vnow < t0 + 2 * SEC) {
		for (int i = 0; i < 3; i++)
			while (gso_dgram__send(d[i], payload, len, mss, sent[i]) == 0)
				sent[i]++;
		uint64_t next;
		cr_assert_eq(gso_engine__poll(e, &next), 0);
		vnow = next > vnow ? next : vnow + 1000;
	}
	for (int i = 0; i < 3; i++) {
		uint64_t first = 0, last = 0, n = 0, prev = 0;

		for (unsigned k = 0; k < f->nrec; k++) {
			if (f->rec[k].sport != 1000 + i)
				continue;
			if (n) {
				uint64_t gap = f->rec[k].t - prev, want = (uint64_t)wire * SEC / rates[i];

				/* Exact to the slack the engine allows (50 us early), never later than asked here. */
				cr_assert_leq(gap, want + 50000, "flow %d gap %lu want %lu", i, gap, want);
			} else {
				first = f->rec[k].t;
			}
			prev = last = f->rec[k].t;
			n++;
		}
		double rate = (double)(n - 1) * wire / ((double)(last - first) / SEC);
		cr_assert(rate > rates[i] * 0.98 && rate < rates[i] * 1.02, "flow %d: %.0f B/s, asked %lu", i, rate,
			  rates[i]);
	}
	gso_engine__destroy(e);
}

/* Every send is reported once, in order, with its cookie; IP IDs advance by the datagrams sent. */
Test(engine, completions_order_ipid)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 4, 64);
	struct gso_dgram *d = dgram(e, 7, 0, 64);
	uint16_t id = 100;

	for (uint32_t i = 0; i < 50; i++) {
		memcpy(payload + i * 8, &i, 4);
		cr_assert_eq(gso_dgram__send(d, payload + i * 8, 100 + i * 37, 50, 1000 + i), 0);
	}
	run_until(e, vnow + SEC);
	cr_assert_eq(f->nrec, 50);
	cr_assert_eq(count_events(GSO_EV_DGRAM_SENT, 7), 50);
	for (uint32_t i = 0, k = 0; i < evs->n; i++) {
		if (evs->ev[i].type != GSO_EV_DGRAM_SENT)
			continue;
		cr_assert_eq(evs->ev[i].cookie, 1000 + k, "event %u cookie %lu", i, evs->ev[i].cookie);
		cr_assert_eq(evs->ev[i].dgram, d);
		k++;
	}
	for (uint32_t i = 0; i < 50; i++) {
		uint32_t len = 100 + i * 37;

		cr_assert_eq(f->rec[i].len, len);
		cr_assert_eq(f->rec[i].first_word, i, "out of order at %u", i);
		cr_assert_eq(f->rec[i].ip_id, id, "super-segment %u: IP ID %u, want %u", i, f->rec[i].ip_id, id);
		id = (uint16_t)(id + (len + 49) / 50);
	}
	GSO_OPTS(gso_dgram_info, di);
	cr_assert_eq(gso_dgram__info(d, &di), 0);
	cr_assert_eq(di.sent_supers, 50);
	cr_assert_eq(di.queued, 0);
	gso_engine__destroy(e);
}

/* A full flow queue (and a full engine) says -EAGAIN and queues nothing. */
Test(engine, full_queue_eagain)
{
	struct fake *f = fake_new();
	GSO_OPTS(gso_engine_opts, o, .max_flows = 4, .flow_queue = 4, .max_queued = 6, .on_event = on_event,
		 .clock = vclock, .flags = GSO_ENGINE_F_NO_LINK_MONITOR);
	struct gso_engine *e = NULL;
	struct gso_dgram *a, *b;
	GSO_OPTS(gso_dgram_info, di);

	cr_assert_eq(gso_engine__create(&e, &f->dev, &o), 0);
	a = dgram(e, 1, 1000, 0);
	b = dgram(e, 2, 1000, 0);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(gso_dgram__send(a, payload, 100, 100, (uint64_t)i), 0);
	cr_assert_eq(gso_dgram__send(a, payload, 100, 100, 9), -EAGAIN);
	gso_dgram__info(a, &di);
	cr_assert_eq(di.queued, 4);
	cr_assert_eq(gso_dgram__send(b, payload, 100, 100, 0), 0);
	cr_assert_eq(gso_dgram__send(b, payload, 100, 100, 1), 0);
	cr_assert_eq(gso_dgram__send(b, payload, 100, 100, 2), -EAGAIN, "engine-wide limit");
	GSO_OPTS(gso_engine_stats, es);
	gso_engine__stats(e, &es);
	cr_assert_eq(es.queued, 6);
	gso_engine__destroy(e);
}

/* Link down: nothing is sent and nothing lost; after the link-up everything leaves in order. */
Test(engine, link_down_queue_and_rekick)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 4, 64);
	struct gso_dgram *d = dgram(e, 5, 0, 64);

	f->mode = -ENETDOWN;
	for (uint32_t i = 0; i < 20; i++) {
		memcpy(payload + i * 4, &i, 4);
		cr_assert_eq(gso_dgram__send(d, payload + i * 4, 400, 100, i), 0);
	}
	run_until(e, vnow + 3 * SEC);
	cr_assert_eq(f->nrec, 0, "sent while down");
	GSO_OPTS(gso_engine_stats, es);
	gso_engine__stats(e, &es);
	cr_assert_eq(es.link_usable, 0);
	cr_assert_eq(es.link_down, 1);
	cr_assert_geq(f->kicks, 20, "the engine kicks again while down (every 100 ms): %lu", f->kicks);
	cr_assert_eq(count_events(GSO_EV_LINK, 0), 1);
	/* What the device took before it said down waits in it; the rest in the engine. */
	GSO_OPTS(gso_dgram_info, di);
	gso_dgram__info(d, &di);
	cr_assert_eq(di.queued + f->queued_down, 20, "queued %u + in the device %u", di.queued, f->queued_down);
	f->mode = 0;
	cr_assert_eq(gso_engine__link_changed(e, true), 0);
	run_until(e, vnow + SEC);
	cr_assert_eq(f->nrec + 1, 20, "after the link-up: %u", f->nrec); /* the first waited in the device */
	for (uint32_t i = 0; i < f->nrec; i++)
		cr_assert_eq(f->rec[i].first_word, i + 1, "order after the link-up at %u", i);
	cr_assert_eq(count_events(GSO_EV_DGRAM_SENT, 5), 20);
	gso_engine__stats(e, &es);
	cr_assert_eq(es.link_usable, 1);
	cr_assert_eq(es.link_up, 1);
	gso_engine__destroy(e);
}

/* Without a link-up event, the periodic kick finds the link back. */
Test(engine, link_back_by_retry_kick)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 4, 64);
	struct gso_dgram *d = dgram(e, 5, 0, 64);

	f->mode = -ENETDOWN;
	for (uint32_t i = 0; i < 5; i++)
		cr_assert_eq(gso_dgram__send(d, payload, 400, 100, i), 0);
	run_until(e, vnow + SEC);
	cr_assert_eq(f->nrec, 0);
	f->mode = 0;
	run_until(e, vnow + SEC);
	cr_assert_eq(f->nrec, 4);
	cr_assert_eq(count_events(GSO_EV_DGRAM_SENT, 5), 5);
	gso_engine__destroy(e);
}

/* Backpressure: the device takes a few at a time; the rest go first next time, in order. */
Test(engine, backpressure_keeps_order)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 8, 256);
	struct gso_dgram *d[4];
	uint32_t seq[4] = { 0 };

	for (int i = 0; i < 4; i++)
		d[i] = dgram(e, (uint16_t)(10 + i), 0, 256);
	for (uint32_t k = 0; k < 100; k++)
		for (int i = 0; i < 4; i++) {
			memcpy(payload + (k * 4 + (uint32_t)i) * 4, &k, 4);
			cr_assert_eq(gso_dgram__send(d[i], payload + (k * 4 + (uint32_t)i) * 4, 64, 64, k), 0);
		}
	for (int round = 0; round < 1000 && f->nrec < 400; round++) {
		f->room = 3;
		uint64_t next;
		gso_engine__poll(e, &next);
		vnow += 30000;
	}
	cr_assert_eq(f->nrec, 400);
	for (unsigned k = 0; k < f->nrec; k++) {
		int i = f->rec[k].sport - 10;

		cr_assert_eq(f->rec[k].first_word, seq[i], "flow %d out of order", i);
		seq[i]++;
	}
	GSO_OPTS(gso_engine_stats, es);
	gso_engine__stats(e, &es);
	cr_assert_gt(es.backpressure, 0);
	gso_engine__destroy(e);
}

/* Unpaced backlogged flows share the device; none starves. */
Test(engine, fair_between_flows)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 16, 64);
	struct gso_dgram *d[10];
	unsigned got[10] = { 0 };

	for (int i = 0; i < 10; i++) {
		d[i] = dgram(e, (uint16_t)(100 + i), 0, 64);
		for (int k = 0; k < 64; k++)
			cr_assert_eq(gso_dgram__send(d[i], payload, 3000, 1000, 0), 0);
	}
	f->room = 100;
	uint64_t next;
	gso_engine__poll(e, &next);
	cr_assert_eq(f->nrec, 100);
	for (unsigned k = 0; k < f->nrec; k++)
		got[f->rec[k].sport - 100]++;
	for (int i = 0; i < 10; i++)
		cr_assert(got[i] >= 8 && got[i] <= 12, "flow %d got %u of 100", i, got[i]);
	gso_engine__destroy(e);
}

/* Closing a flow with data queued reports every queued send as dropped, during the call. */
Test(engine, close_with_data_queued)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 4, 64);
	struct gso_dgram *d = dgram(e, 3, 10000, 64), *other = dgram(e, 4, 0, 8);

	for (uint32_t i = 0; i < 30; i++)
		cr_assert_eq(gso_dgram__send(d, payload, 1000, 500, i), 0);
	run_until(e, vnow + 200 * MS);
	unsigned sent = count_events(GSO_EV_DGRAM_SENT, 3);
	cr_assert(sent > 0 && sent < 30, "sent %u", sent);
	cr_assert_eq(gso_dgram__close(d), 0);
	cr_assert_eq(count_events(GSO_EV_DGRAM_DROPPED, 3), 30 - sent);
	for (unsigned i = 0, k = sent; i < evs->n; i++)
		if (evs->ev[i].type == GSO_EV_DGRAM_DROPPED) {
			cr_assert_eq(evs->ev[i].err, -ECANCELED);
			cr_assert_eq(evs->ev[i].cookie, k++);
		}
	unsigned nrec = f->nrec;
	cr_assert_eq(gso_dgram__send(other, payload, 10, 10, 0), 0);
	run_until(e, vnow + SEC);
	cr_assert_eq(f->nrec, nrec + 1, "the other flow still works, the closed one is gone");
	GSO_OPTS(gso_engine_stats, es);
	gso_engine__stats(e, &es);
	cr_assert_eq(es.flows, 1);
	cr_assert_eq(es.queued, 0);
	gso_engine__destroy(e);
}

/* The device goes away: every flow's queue is dropped with -ENODEV, and the engine says so. */
Test(engine, device_gone)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 4, 64);
	struct gso_dgram *d = dgram(e, 3, 0, 64);
	uint64_t next;

	for (uint32_t i = 0; i < 10; i++)
		cr_assert_eq(gso_dgram__send(d, payload, 100, 100, i), 0);
	f->mode = -ENODEV;
	cr_assert_eq(gso_engine__poll(e, &next), -ENODEV);
	cr_assert_eq(count_events(GSO_EV_DGRAM_DROPPED, 3), 10);
	cr_assert_eq(count_events(GSO_EV_DEV_GONE, 0), 1);
	cr_assert_eq(gso_dgram__send(d, payload, 100, 100, 0), -ENODEV);
	GSO_OPTS(gso_engine_stats, es);
	gso_engine__stats(e, &es);
	cr_assert_eq(es.dead, 1);
	cr_assert_eq(es.queued, 0);
	gso_engine__destroy(e);
}

/* Bad input: each a distinct errno, nothing queued. */
Test(engine, bad_input)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 2, 8);
	struct gso_dgram *d = dgram(e, 1, 0, 8), *d2 = dgram(e, 2, 0, 8), *x = NULL;
	GSO_OPTS(gso_dgram_info, di);
	struct gso_tmpl t = udp_tmpl(3, 0);
	GSO_OPTS(gso_dgram_opts, o, .tmpl = &t);

	(void)d2;
	cr_assert_eq(gso_dgram__open(&x, e, &o), -ENOSPC, "more flows than configured");
	cr_assert_eq(gso_dgram__send(d, payload, 100, 0, 0), -EINVAL, "gso_size 0");
	cr_assert_eq(gso_dgram__send(d, NULL, 100, 10, 0), -EINVAL);
	cr_assert_eq(gso_dgram__info(d, &di), 0);
	cr_assert_eq(di.max_gso_size, 1500 - 28);
	cr_assert_eq(di.max_segs, GSO_UDP_MAX_SEGS);
	cr_assert_eq(gso_dgram__send(d, payload, 1000, di.max_gso_size + 1, 0), -EMSGSIZE, "datagram over the MTU");
	cr_assert_eq(gso_dgram__send(d, payload, di.max_len + 1, 1000, 0), -EMSGSIZE, "over an IP datagram");
	cr_assert_eq(gso_dgram__send(d, payload, 129 * 10, 10, 0), -EMSGSIZE, "129 datagrams");
	cr_assert_eq(gso_dgram__send(d, payload, 128 * 10, 10, 0), 0, "128 datagrams");
	gso_dgram__info(d, &di);
	cr_assert_eq(di.queued, 1);
	{
		GSO_OPTS(gso_tmpl_fields, tf, .l3 = GSO_L3_IPV4, .l4 = GSO_L4_TCP, .sport = 1, .dport = 2,
			 .tcp_flags = GSO_TCP_ACK);
		struct gso_tmpl tt;

		cr_assert_eq(gso_tmpl__build(&tt, &tf), 0);
		o.tmpl = &tt;
		gso_dgram__close(d2);
		cr_assert_eq(gso_dgram__open(&x, e, &o), -EINVAL, "a TCP template");
	}
	gso_engine__destroy(e);
}

/* 10,000 flows on one engine: each one's queue drains, none starves. */
Test(engine, many_flows)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 10000, 4);
	static struct gso_dgram *d[10000];

	for (int i = 0; i < 10000; i++) {
		d[i] = dgram(e, (uint16_t)(20000 + i), 2000, 4);
		cr_assert_eq(gso_dgram__send(d[i], payload, 100, 100, 0), 0);
		cr_assert_eq(gso_dgram__send(d[i], payload, 100, 100, 1), 0);
	}
	run_until(e, vnow + 2 * SEC);
	cr_assert_eq(f->nrec, 20000);
	cr_assert_eq(count_events(GSO_EV_DGRAM_SENT, 0), 20000);
	gso_engine__destroy(e);
}

/* ---- real time: run, the engine's own thread, wake, stop ---- */

static atomic_int wakes;

static void on_wake(void *ctx, const struct gso_engine_event *ev)
{
	(void)ctx;
	if (ev->type == GSO_EV_WAKE)
		atomic_fetch_add(&wakes, 1);
}

/* An engine with nothing to do sleeps (no spin), and returns at its deadline, not before. */
Test(engine, quiet_engine_sleeps)
{
	struct fake *f = fake_new();
	GSO_OPTS(gso_engine_opts, o, .flags = GSO_ENGINE_F_NO_LINK_MONITOR);
	GSO_OPTS(gso_evloop_stats, ls);
	struct gso_engine *e = NULL;
	uint64_t t0, until;

	cr_assert_eq(gso_engine__create(&e, &f->dev, &o), 0);
	t0 = gso_evloop_now_ns();
	until = t0 + 200 * MS;
	cr_assert_eq(gso_engine__run(e, until), 0);
	cr_assert_geq(gso_evloop_now_ns(), until);
	cr_assert_eq(gso_engine__evloop_stats(e, &ls), 0);
	cr_assert_geq(ls.sleeps, 1);
	cr_assert_eq(ls.spins, 0, "an idle engine spun");
	GSO_OPTS(gso_engine_stats, es);
	gso_engine__stats(e, &es);
	cr_assert_leq(es.polls, 3, "an idle engine woke %lu times in 200 ms", es.polls);
	gso_engine__destroy(e);
}

/* On its own thread: work handed in through the callback, a wake-up from another thread, stop. */
Test(engine, own_thread_wake_stop)
{
	struct fake *f = fake_new();
	GSO_OPTS(gso_engine_opts, o, .flags = GSO_ENGINE_F_NO_LINK_MONITOR, .on_event = on_wake);
	struct gso_engine *e = NULL;

	cr_assert_eq(gso_engine__create(&e, &f->dev, &o), 0);
	cr_assert_eq(gso_engine__start(e, -1), 0);
	cr_assert_eq(gso_engine__start(e, -1), -EALREADY);
	for (int i = 0; i < 3; i++) {
		int before = atomic_load(&wakes);

		cr_assert_eq(gso_engine__wake(e), 0);
		for (int k = 0; k < 2000 && atomic_load(&wakes) == before; k++)
			usleep(1000);
		cr_assert_gt(atomic_load(&wakes), before, "wake-up %d never arrived", i);
	}
	cr_assert_eq(gso_engine__stop(e), 0);
	/* Stopped: a wake-up is not delivered until the engine runs again. */
	int n = atomic_load(&wakes);
	gso_engine__wake(e);
	usleep(20000);
	cr_assert_eq(atomic_load(&wakes), n);
	gso_engine__destroy(e);
}

/* Stop from the run's own callback (a QUIC server whose timer moved earlier): run returns, no wake-up. */
static struct gso_engine *stop_e;
static atomic_int stop_sent;

static void on_sent_stop(void *ctx, const struct gso_engine_event *ev)
{
	(void)ctx;
	if (ev->type == GSO_EV_WAKE)
		atomic_fetch_add(&wakes, 1);
	if (ev->type == GSO_EV_DGRAM_SENT) {
		atomic_fetch_add(&stop_sent, 1);
		cr_assert_eq(gso_engine__stop(stop_e), 0);
	}
}

Test(engine, stop_from_callback)
{
	struct fake *f = fake_new();
	GSO_OPTS(gso_engine_opts, o, .flags = GSO_ENGINE_F_NO_LINK_MONITOR, .on_event = on_sent_stop);
	struct gso_dgram *d;
	uint64_t t0;

	cr_assert_eq(gso_engine__create(&stop_e, &f->dev, &o), 0);
	d = dgram(stop_e, 1, 0, 8);
	atomic_store(&wakes, 0);
	for (int i = 1; i <= 3; i++) {
		cr_assert_eq(gso_dgram__send(d, payload, 100, 100, (uint64_t)i), 0);
		t0 = gso_evloop_now_ns();
		cr_assert_eq(gso_engine__run(stop_e, t0 + 5000000000ull), 0);
		cr_assert_lt(gso_evloop_now_ns() - t0, 1000000000ull, "run did not return after the stop");
		cr_assert_eq(atomic_load(&stop_sent), i);
	}
	cr_assert_eq(atomic_load(&wakes), 0, "a stop from the callback raised GSO_EV_WAKE");
	gso_engine__destroy(stop_e);
}

/* ---- misuse: closed and stale handles, calls from another thread (engine.h, "Handles", "Threads") ---- */

TestSuite(engine_misuse, .init = setup, .fini = teardown, .timeout = 60);

/* Closing a datagram flow twice: the second close is refused, nothing crashes. */
Test(engine_misuse, dgram_double_close)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 4, 8);
	struct gso_dgram *d = dgram(e, 1, 0, 8);

	cr_assert_eq(gso_dgram__send(d, payload, 100, 100, 1), 0);
	cr_assert_eq(gso_dgram__close(d), 0);
	cr_assert_eq(gso_dgram__close(d), -EBADF);
	GSO_OPTS(gso_engine_stats, es);
	cr_assert_eq(gso_engine__stats(e, &es), 0);
	cr_assert_eq(es.flows, 0);
	cr_assert_eq(es.queued, 0);
	gso_engine__destroy(e);
}

/* Every call on a closed datagram flow: -EBADF, nothing queued, no event. */
Test(engine_misuse, dgram_calls_after_close)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 4, 8);
	struct gso_dgram *d = dgram(e, 1, 0, 8);
	GSO_OPTS(gso_dgram_info, di);

	cr_assert_eq(gso_dgram__close(d), 0);
	unsigned nev = evs->n;
	cr_assert_eq(gso_dgram__send(d, payload, 100, 100, 1), -EBADF);
	cr_assert_eq(gso_dgram__set_rate(d, 1000000), -EBADF);
	cr_assert_eq(gso_dgram__info(d, &di), -EBADF);
	run_until(e, vnow + SEC);
	cr_assert_eq(f->nrec, 0);
	cr_assert_eq(evs->n, nev);
	gso_engine__destroy(e);
}

/*
 * A closed flow's handle after a new flow took its slot (and, before
 * handles were checked, its memory): every call on the old handle is
 * refused and the new flow is untouched.
 */
Test(engine_misuse, dgram_stale_after_reuse)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 1, 8);
	struct gso_dgram *old = dgram(e, 1, 0, 8), *d;
	GSO_OPTS(gso_dgram_info, di);

	cr_assert_eq(gso_dgram__close(old), 0);
	d = dgram(e, 2, 0, 8); /* max_flows 1: the same slot */
	cr_assert_neq(d, old, "a new flow must not get the handle of a closed one");
	cr_assert_eq(gso_dgram__send(old, payload, 100, 100, 7), -EBADF);
	cr_assert_eq(gso_dgram__set_rate(old, 1), -EBADF);
	cr_assert_eq(gso_dgram__close(old), -EBADF);
	cr_assert_eq(gso_dgram__info(d, &di), 0);
	cr_assert_eq(di.queued, 0);
	cr_assert_eq(di.rate, 0);
	cr_assert_eq(gso_dgram__send(d, payload, 100, 100, 8), 0);
	run_until(e, vnow + SEC);
	cr_assert_eq(f->nrec, 1);
	cr_assert_eq(f->rec[0].sport, 2);
	cr_assert_eq(count_events(GSO_EV_DGRAM_SENT, 2), 1);
	gso_engine__destroy(e);
}

/* A flow's handle after its engine was destroyed (which freed the flow): -EBADF. */
Test(engine_misuse, dgram_after_engine_destroy)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 4, 8);
	struct gso_dgram *d = dgram(e, 1, 0, 8);
	GSO_OPTS(gso_dgram_info, di);

	gso_engine__destroy(e);
	cr_assert_eq(gso_dgram__send(d, payload, 100, 100, 1), -EBADF);
	cr_assert_eq(gso_dgram__info(d, &di), -EBADF);
	cr_assert_eq(gso_dgram__close(d), -EBADF);
}

/* A stream flow as a user opens it: a route filled by hand, the SYN goes to the fake device. */
static struct gso_stream *stream(struct gso_engine *e, uint16_t sport)
{
	GSO_OPTS(gso_route, rt, .l3 = GSO_L3_IPV4, .mtu = 1500);
	GSO_OPTS(gso_stream_opts, o, .route = &rt, .sport = sport, .dport = 80, .isn = 1000);
	struct gso_stream *s = NULL;

	memcpy(rt.src, "\x0a\0\0\1", 4);
	memcpy(rt.dst, "\x0a\0\0\2", 4);
	memcpy(rt.nexthop, rt.dst, 4);
	memcpy(rt.src_mac, "\x02\0\0\0\0\1", 6);
	memcpy(rt.dst_mac, "\x02\0\0\0\0\2", 6);
	cr_assert_eq(gso_stream__connect(&s, e, &o), 0);
	return s;
}

/* Closing a stream twice, and every call after close: -EBADF. */
Test(engine_misuse, stream_double_close_and_calls_after)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 4, 8);
	struct gso_stream *s = stream(e, 5000);
	GSO_OPTS(gso_stream_info, si);
	void *buf = NULL;
	uint32_t room = 0;

	cr_assert_eq(f->nrec, 1, "the SYN");
	cr_assert_eq(gso_stream__close(s), 0);
	cr_assert_eq(gso_stream__close(s), -EBADF);
	cr_assert_eq(gso_stream__write(s, payload, 100), -EBADF);
	cr_assert_eq(gso_stream__reserve(s, &buf, &room), -EBADF);
	cr_assert_eq(gso_stream__commit(s, 0), -EBADF);
	cr_assert_eq(gso_stream__shutdown(s), -EBADF);
	cr_assert_eq(gso_stream__info(s, &si), -EBADF);
	cr_assert_null(buf);
	run_until(e, vnow + 5 * SEC);
	cr_assert_eq(f->nrec, 1, "nothing more was sent for the closed stream");
	gso_engine__destroy(e);
}

/* A closed stream's handle after a new stream took its slot: refused, the new one untouched. */
Test(engine_misuse, stream_stale_after_reuse)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 1, 8);
	struct gso_stream *old = stream(e, 5000), *s;
	GSO_OPTS(gso_stream_info, si);

	cr_assert_eq(gso_stream__close(old), 0);
	s = stream(e, 5000); /* the same 4-tuple, the same slot */
	cr_assert_neq(s, old, "a new stream must not get the handle of a closed one");
	cr_assert_eq(gso_stream__shutdown(old), -EBADF);
	cr_assert_eq(gso_stream__close(old), -EBADF);
	cr_assert_eq(gso_stream__info(s, &si), 0);
	cr_assert_eq(si.state, GSO_STREAM_SYN_SENT, "the new stream was shut down through the old handle");
	cr_assert_eq(gso_stream__close(s), 0);
	gso_engine__destroy(e);
}

/* A handle of one kind is not a handle of another: a datagram flow's given as a stream. */
Test(engine_misuse, wrong_kind)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 4, 8);
	struct gso_dgram *d = dgram(e, 1, 0, 8);
	GSO_OPTS(gso_stream_info, si);

	cr_assert_eq(gso_stream__info((struct gso_stream *)(void *)d, &si), -EBADF);
	cr_assert_eq(gso_stream__close((struct gso_stream *)(void *)d), -EBADF);
	cr_assert_eq(gso_dgram__close(d), 0);
	gso_engine__destroy(e);
}

struct other_thread {
	struct gso_dgram *d;
	atomic_int in_cb_send, in_cb_done;
};

static void on_wake_send(void *ctx, const struct gso_engine_event *ev)
{
	struct other_thread *ot = ctx;

	if (ev->type != GSO_EV_WAKE || atomic_load(&ot->in_cb_done))
		return;
	atomic_store(&ot->in_cb_send, gso_dgram__send(ot->d, payload, 100, 100, 1));
	atomic_store(&ot->in_cb_done, 1);
}

/*
 * An engine on its own thread (gso_engine__start): calls on it and its
 * flows from another thread are refused with -EPERM, from its event
 * callback they work; stopped, the caller's thread may use it again.
 */
Test(engine_misuse, call_from_another_thread)
{
	struct fake *f = fake_new();
	struct other_thread ot = { 0 };
	GSO_OPTS(gso_engine_opts, o, .flags = GSO_ENGINE_F_NO_LINK_MONITOR, .on_event = on_wake_send, .ctx = &ot);
	struct gso_tmpl t = udp_tmpl(1, 0);
	GSO_OPTS(gso_dgram_opts, dopts, .tmpl = &t);
	GSO_OPTS(gso_dgram_info, di);
	GSO_OPTS(gso_engine_stats, es);
	struct gso_engine *e = NULL;
	struct gso_dgram *d2 = NULL;

	cr_assert_eq(gso_engine__create(&e, &f->dev, &o), 0);
	cr_assert_eq(gso_dgram__open(&ot.d, e, &dopts), 0);
	cr_assert_eq(gso_engine__start(e, -1), 0);
	cr_assert_eq(gso_dgram__send(ot.d, payload, 100, 100, 1), -EPERM);
	cr_assert_eq(gso_dgram__info(ot.d, &di), -EPERM);
	cr_assert_eq(gso_dgram__set_rate(ot.d, 1), -EPERM);
	cr_assert_eq(gso_dgram__close(ot.d), -EPERM);
	cr_assert_eq(gso_dgram__open(&d2, e, &dopts), -EPERM);
	cr_assert_null(d2);
	cr_assert_eq(gso_engine__stats(e, &es), -EPERM);
	cr_assert_eq(gso_engine__poll(e, NULL), -EPERM);
	cr_assert_eq(gso_engine__link_changed(e, true), -EPERM);
	/* From the callback, on the engine's thread: accepted. */
	cr_assert_eq(gso_engine__wake(e), 0);
	for (int k = 0; k < 2000 && !atomic_load(&ot.in_cb_done); k++)
		usleep(1000);
	cr_assert_eq(atomic_load(&ot.in_cb_done), 1);
	cr_assert_eq(atomic_load(&ot.in_cb_send), 0);
	cr_assert_eq(gso_engine__stop(e), 0);
	/* Stopped: the caller's thread runs it again. */
	cr_assert_eq(gso_dgram__info(ot.d, &di), 0);
	cr_assert_eq(gso_engine__stats(e, &es), 0);
	cr_assert_eq(gso_dgram__close(ot.d), 0);
	gso_engine__destroy(e);
}

/* A destroyed engine's handle: every call is refused, destroy again does nothing, a new engine is not reached. */
Test(engine_misuse, engine_after_destroy)
{
	struct fake *f = fake_new(), *f2 = fake_new();
	struct gso_engine *e = engine(f, 4, 8), *e2;
	struct gso_tmpl t = udp_tmpl(1, 0);
	GSO_OPTS(gso_dgram_opts, o, .tmpl = &t);
	GSO_OPTS(gso_engine_stats, es);
	struct gso_dgram *d = NULL;
	uint64_t next;

	gso_engine__destroy(e);
	gso_engine__destroy(e);
	e2 = engine(f2, 4, 8);
	cr_assert_neq(e2, e, "a new engine must not get the handle of a destroyed one");
	cr_assert_eq(gso_engine__poll(e, &next), -EBADF);
	cr_assert_eq(gso_engine__stats(e, &es), -EBADF);
	cr_assert_eq(gso_engine__link_changed(e, false), -EBADF);
	cr_assert_eq(gso_engine__wake(e), -EBADF);
	cr_assert_eq(gso_engine__stop(e), -EBADF);
	cr_assert_eq(gso_engine__close(e), -EBADF);
	cr_assert_null(gso_engine__dev(e));
	cr_assert_eq(gso_dgram__open(&d, e, &o), -EBADF);
	cr_assert_null(d);
	gso_engine__destroy(e);
	cr_assert_eq(gso_engine__stats(e2, &es), 0);
	cr_assert_eq(es.link_usable, 1, "the new engine was reached through the old handle");
	gso_engine__destroy(e2);
}

/*
 * Handles cost no memory over open/close cycles: 100,000 datagram flows
 * and 1,000 stream flows opened and closed one after another, 1,000
 * engines created and destroyed, leave the heap as it was after the
 * first round or a warm-up (the table reuses its entries).  mallinfo2 reads glibc's
 * heap; under ASan it reads zeros and the test checks nothing.
 */
Test(engine_misuse, churn_keeps_memory_flat)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 4, 8);
	size_t before;

	for (int round = 0; round < 2; round++) {
		int n = round ? 100000 : 1000;

		if (round)
			before = mallinfo2().uordblks;
		for (int i = 0; i < n; i++)
			cr_assert_eq(gso_dgram__close(dgram(e, 1, 0, 8)), 0);
		for (int i = 0; i < n / 100; i++)
			cr_assert_eq(gso_stream__close(stream(e, 5000)), 0);
	}
	cr_assert_leq(mallinfo2().uordblks, before + 4096, "the heap grew by %zu bytes",
		      mallinfo2().uordblks - before);
	gso_engine__destroy(e);
	before = mallinfo2().uordblks;
	for (int i = 0; i < 1000; i++) {
		gso_engine__destroy(engine(fake_new(), 4, 8));
		if (i == 100) /* past what the first ones allocate once (the C library's own) */
			before = mallinfo2().uordblks;
	}
	cr_assert_leq(mallinfo2().uordblks, before + 4096, "engines: the heap grew by %zu bytes",
		      mallinfo2().uordblks - before);
}

/* A datagram flow's first super-segments already depart on the paced grid, none back to back. */
Test(engine, dgram_first_supers_paced)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 4, 64);
	uint64_t rate = 1000000, t0 = vnow;
	uint32_t len = 1000, mss = 1000, wire = len + 42;
	uint64_t want = (uint64_t)wire * SEC / rate;
	struct gso_dgram *d = dgram(e, 9, rate, 64);

	for (int i = 0; i < 20; i++)
		cr_assert_eq(gso_dgram__send(d, payload, len, mss, (uint64_t)i), 0);
	run_until(e, t0 + SEC);
	cr_assert_eq(f->nrec, 20);
	cr_expect_eq(f->rec[0].t, t0, "the first leaves at once");
	for (unsigned k = 1; k < f->nrec; k++) {
		uint64_t gap = f->rec[k].t - f->rec[k - 1].t;

		/* The slack lets a burst leave up to 50 us early, never more. */
		cr_expect_geq(gap + 50000, want, "super-segment %u: gap %lu, want %lu", k, gap, want);
		cr_expect_leq(gap, want + 50000, "super-segment %u: gap %lu, want %lu", k, gap, want);
	}
	gso_engine__destroy(e);
}

/*
 * A backlogged datagram flow whose engine is polled late (a loaded
 * machine: every poll 2 gaps late) falls behind its rate: one
 * GSO_EV_FLOW_BEHIND (-ETIME) and one episode in the counters, however
 * many bursts it lasts; polled on time again it catches up: one event
 * with err 0.
 */
Test(engine, dgram_behind_raised_once_and_cleared)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 4, 64);
	uint64_t rate = 1000000;
	uint32_t len = 4000, mss = 1000, wire = len + 4 * 42;
	uint64_t gap = (uint64_t)wire * SEC / rate; /* ~4.2 ms, more than catchup_ns (1 ms) */
	struct gso_dgram *d = dgram(e, 11, rate, 64);
	struct gso_dgram_info info = { 0 };
	struct gso_engine_stats st = { 0 };
	unsigned sent = 0, k;

	for (int phase = 0; phase < 3; phase++) {
		/* 0: on time, 1: every poll late by two gaps, 2: on time again. */
		uint64_t end = vnow + SEC;

		while (vnow < end) {
			uint64_t next;

			while (gso_dgram__send(d, payload, len, mss, sent) == 0)
				sent++;
			cr_assert_eq(gso_engine__poll(e, &next), 0);
			if (next == GSO_EVLOOP_FOREVER)
				next = vnow + gap;
			vnow = (next > vnow ? next : vnow + 1000) + (phase == 1 ? 2 * gap : 0);
		}
		if (phase == 0) {
			cr_expect_eq(count_events(GSO_EV_FLOW_BEHIND, 0), 0, "on time: never behind");
			cr_assert_eq(gso_dgram__info(d, &info), 0);
			cr_expect_eq(info.lost_ns, 0);
		}
		if (phase == 1) {
			cr_assert_eq(gso_dgram__info(d, &info), 0);
			cr_expect_eq(info.sz, sizeof(info), "sz 0: filled whole");
			cr_expect_eq(info.behind, 1);
			cr_expect_eq(info.behind_events, 1, "once per episode");
			cr_expect_gt(info.lost_ns, SEC / 2);
		}
	}
	cr_assert_eq(count_events(GSO_EV_FLOW_BEHIND, 11), 2, "behind once, caught up once");
	for (k = 0; k < evs->n && evs->ev[k].type != GSO_EV_FLOW_BEHIND; k++)
		;
	cr_expect_eq(evs->ev[k].err, -ETIME);
	cr_expect_eq(evs->ev[k].dgram, d);
	cr_expect_eq((uintptr_t)evs->ev[k].flow_ctx, 11);
	for (k++; k < evs->n && evs->ev[k].type != GSO_EV_FLOW_BEHIND; k++)
		;
	cr_expect_eq(evs->ev[k].err, 0, "caught up");
	cr_assert_eq(gso_dgram__info(d, &info), 0);
	cr_expect_eq(info.behind, 0);
	cr_expect_eq(info.behind_events, 1);
	cr_assert_eq(gso_engine__stats(e, &st), 0);
	cr_expect_eq(st.behind_events, 1);
	cr_expect_eq(st.lost_ns, info.lost_ns);
	gso_engine__destroy(e);
}

/* A stream's mss cap below the smallest segment it can send is -EINVAL at connect, not a failure later. */
Test(engine, stream_mss_minimum)
{
	struct fake *f = fake_new();
	struct gso_engine *e = engine(f, 8, 64);
	struct gso_route rt = { .sz = sizeof(rt), .l3 = GSO_L3_IPV4, .mtu = 1500 };
	struct gso_stream *s = NULL;
	uint16_t port = 5000;

	memcpy(rt.src, "\x0a\0\0\1", 4);
	memcpy(rt.dst, "\x0a\0\0\2", 4);
	memcpy(rt.nexthop, rt.dst, 4);
	memcpy(rt.src_mac, "\x02\0\0\0\0\1", 6);
	memcpy(rt.dst_mac, "\x02\0\0\0\0\2", 6);
	for (uint32_t mss = 1; mss <= 80; mss++) {
		for (int nots = 0; nots < 2; nots++) {
			uint32_t min = GSO_STREAM_MIN_MSS + (nots ? 0 : GSO_STREAM_TS_LEN);
			GSO_OPTS(gso_stream_opts, o, .route = &rt, .sport = port++, .dport = 80, .mss = mss,
				 .flags = nots ? GSO_STREAM_F_NO_TS : 0);
			int err = gso_stream__connect(&s, e, &o);

			if (mss < min) {
				cr_expect_eq(err, -EINVAL, "mss %u%s", mss, nots ? " no ts" : "");
			} else {
				cr_expect_eq(err, 0, "mss %u%s", mss, nots ? " no ts" : "");
				if (!err)
					gso_stream__close(s);
			}
		}
	}
	cr_expect_eq(GSO_STREAM_MIN_MSS + GSO_STREAM_TS_LEN, 76u);
	gso_engine__destroy(e);
}

/* ---- a stream against a scripted peer ---- */

/* The peer (10.0.0.2:80) sends our stream (10.0.0.1:dport) a segment without options or payload. */
static void tcp_in(struct gso_engine *h, uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win)
{
	uint8_t f[54] = { 0 }, *ip = f + 14, *t = ip + 20;
	uint16_t c;

	memcpy(f, "\x02\0\0\0\0\1", 6);
	memcpy(f + 6, "\x02\0\0\0\0\2", 6);
	f[12] = 0x08;
	ip[0] = 0x45;
	ip[3] = 40;
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = 6;
	memcpy(ip + 12, "\x0a\0\0\2", 4);
	memcpy(ip + 16, "\x0a\0\0\1", 4);
	c = gso_csum_finish(gso_csum_partial(ip, 20, 0));
	memcpy(ip + 10, &c, 2);
	t[1] = 80;
	t[2] = (uint8_t)(dport >> 8);
	t[3] = (uint8_t)dport;
	for (int i = 0; i < 4; i++) {
		t[4 + i] = (uint8_t)(seq >> (24 - 8 * i));
		t[8 + i] = (uint8_t)(ack >> (24 - 8 * i));
	}
	t[12] = 5 << 4;
	t[13] = flags;
	t[14] = (uint8_t)(win >> 8);
	t[15] = (uint8_t)win;
	c = gso_csum_finish(gso_csum_partial(t, 20, gso_csum_pseudo4(ip + 12, ip + 16, 6, 20)));
	memcpy(t + 16, &c, 2);
	gsoi_engine_input_frame(gsoi_engine_of(h), NULL, f, sizeof(f));
}

static unsigned count_tcp(const struct fake *f, uint8_t flag)
{
	unsigned n = 0;

	for (unsigned i = 0; i < f->nrec; i++)
		n += !!(f->rec[i].tcp_flags & flag);
	return n;
}

/*
 * The ACK that leaves nothing outstanding comes while the flow's burst (a
 * retransmission after an RTO) is still in the engine, held by the
 * device: that burst finds nothing to send when it leaves, and the FIN
 * must still go.  Before the fix the FIN waited for an s_arm() that only
 * a later ACK or timer would bring, and with nothing outstanding no timer
 * came: the stream sat silent until "the peer went silent" (seen as
 * sender::loss_newreno failing after one RTO under CPU load).
 */
Test(engine, fin_after_ack_while_burst_held)
{
	struct fake *f = fake_new();
	struct gso_engine *e;
	struct gso_stream *s;
	const uint32_t irs = 7000, len = 3 * 536;
	struct gso_stream_info si = { .sz = sizeof(si) };
	struct gso_engine_stats st = { .sz = sizeof(st) };
	int w;

	fake_mem(f);
	e = engine(f, 8, 64);
	s = stream(e, 5001);
	run_until(e, vnow + MS);
	cr_assert_eq(count_tcp(f, GSO_TCP_SYN), 1);
	tcp_in(e, 5001, irs, 1001, GSO_TCP_SYN | GSO_TCP_ACK, 65535);
	run_until(e, vnow + MS);
	w = gso_stream__write(s, payload, len);
	cr_assert_eq(w, (int)len, "write: %d", w);
	cr_assert_eq(gso_stream__shutdown(s), 0);
	run_until(e, vnow + 10 * MS);
	cr_assert_eq(count_tcp(f, GSO_TCP_FIN), 0, "FIN before the data was acknowledged");
	/* No ACK: the RTO fires and its retransmission is held by a full device. */
	f->room = 0;
	run_until(e, vnow + 5 * SEC);
	cr_assert_eq(count_tcp(f, GSO_TCP_FIN), 0);
	cr_assert_eq(gso_stream__info(s, &si), 0);
	cr_assert_geq(si.rto, 1);
	cr_assert_eq(si.retrans_supers, 0, "the retransmission left: it was to be held");
	cr_assert_eq(gso_engine__stats(e, &st), 0);
	cr_assert_gt(st.backpressure, 0);
	/* Now everything is acknowledged (the originals arrived after all), the device takes again. */
	tcp_in(e, 5001, irs + 1, 1001 + len, GSO_TCP_ACK, 65535);
	f->room = UINT32_MAX;
	run_until(e, vnow + 2 * SEC);
	cr_assert_eq(gso_stream__info(s, &si), 0);
	cr_expect_eq(si.acked, len);
	cr_expect_eq(si.err, 0);
	cr_expect_eq(count_tcp(f, GSO_TCP_FIN), 1, "no FIN after everything was acknowledged (state %u, rto %llu)",
		     si.state, (unsigned long long)si.rto);
	gso_stream__close(s);
	gso_engine__destroy(e);
}

/*
 * The same without backpressure, as sender::loss_newreno met it: after an
 * RTO, an ACK for the first retransmission lets the flow queue the next
 * one in the scheduler, and the next ACK in the same receive batch
 * acknowledges everything (the originals had arrived) before that burst
 * leaves.
 */
Test(engine, fin_after_ack_while_burst_queued)
{
	struct fake *f = fake_new();
	struct gso_engine *e;
	struct gso_stream *s;
	const uint32_t irs = 7000, len = 3 * 536;
	struct gso_stream_info si = { .sz = sizeof(si) };
	unsigned sent;
	int w;

	fake_mem(f);
	e = engine(f, 8, 64);
	s = stream(e, 5002);
	run_until(e, vnow + MS);
	tcp_in(e, 5002, irs, 1001, GSO_TCP_SYN | GSO_TCP_ACK, 65535);
	run_until(e, vnow + MS);
	w = gso_stream__write(s, payload, len);
	cr_assert_eq(w, (int)len, "write: %d", w);
	cr_assert_eq(gso_stream__shutdown(s), 0);
	run_until(e, vnow + 10 * MS);
	sent = f->nrec;
	/* The RTO (200 ms: the SYN's RTT is the sample) and its one retransmission (cwnd 1). */
	run_until(e, vnow + 300 * MS);
	cr_assert_eq(gso_stream__info(s, &si), 0);
	cr_assert_eq(si.rto, 1, "rto %llu retrans %llu recs %u sent %u", (unsigned long long)si.rto,
		     (unsigned long long)si.retrans_supers, f->nrec, sent);
	cr_assert_eq(si.retrans_supers, 1);
	cr_assert_eq(f->nrec, sent + 1);
	/* One batch: the first segment acknowledged (cwnd 2: the other two queued), then all of it. */
	tcp_in(e, 5002, irs + 1, 1001 + 536, GSO_TCP_ACK, 65535);
	tcp_in(e, 5002, irs + 1, 1001 + len, GSO_TCP_ACK, 65535);
	run_until(e, vnow + 10 * MS);
	cr_assert_eq(gso_stream__info(s, &si), 0);
	cr_expect_eq(si.acked, len);
	cr_expect_eq(si.err, 0);
	cr_expect_eq(si.rto, 1);
	cr_expect_eq(count_tcp(f, GSO_TCP_FIN), 1, "no FIN after everything was acknowledged (state %u)", si.state);
	gso_stream__close(s);
	gso_engine__destroy(e);
}

/* ---- a callback that closes its stream ---- */

static unsigned closed_seen;

static void on_event_close(void *ctx, const struct gso_engine_event *ev)
{
	(void)ctx;
	on_event(NULL, ev);
	if (ev->type == GSO_EV_STREAM_CLOSED) {
		closed_seen++;
		cr_assert_lt(closed_seen, 4, "CLOSED delivered again and again");
		cr_assert_eq(gso_stream__close(ev->stream), 0);
	}
}

/*
 * The way a server ends a connection: gso_stream__close() on
 * GSO_EV_STREAM_CLOSED.  The close delivers the flow's deferred events
 * first (gsoi_engine_flush_flow_events); the CLOSED being delivered was
 * still in the queue, so it came again, and again, until the stack ran
 * out (found serving curl).  Exactly one CLOSED, and the handle is stale
 * afterwards.
 */
Test(engine, close_inside_closed_event)
{
	struct fake *f = fake_new();
	GSO_OPTS(gso_engine_opts, o, .max_flows = 8, .on_event = on_event_close, .clock = vclock,
		 .flags = GSO_ENGINE_F_NO_LINK_MONITOR);
	struct gso_engine *e = NULL;
	struct gso_stream *s;

	closed_seen = 0;
	fake_mem(f);
	cr_assert_eq(gso_engine__create(&e, &f->dev, &o), 0);
	s = stream(e, 5003);
	run_until(e, vnow + MS);
	tcp_in(e, 5003, 7000, 1001, GSO_TCP_SYN | GSO_TCP_ACK, 65535);
	run_until(e, vnow + MS);
	/* The peer resets the connection at RCV.NXT. */
	tcp_in(e, 5003, 7001, 1001, GSO_TCP_RST | GSO_TCP_ACK, 0);
	run_until(e, vnow + MS);
	cr_assert_eq(closed_seen, 1);
	cr_assert_eq(count_events(GSO_EV_STREAM_CLOSED, 0), 1);
	cr_assert_eq(gso_stream__close(s), -EBADF);
	gso_engine__destroy(e);
}
