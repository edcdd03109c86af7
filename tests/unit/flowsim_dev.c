/*
 * flowsim's sender device (fs_params.dev): the senders' own device is the
 * bottleneck, as a Wi-Fi device is (the 2015 seed, issue 28).  Two kinds:
 *
 *  - aggregating: a transmit opportunity every interval (+- jitter); it
 *    takes what is posted, whole frames up to the aggregate cap, puts it
 *    on the air for bytes / link_rate, completes all its frames when it
 *    has left, and they reach the receiver rtt/2 later.  The next
 *    opportunity is at max(this one + interval, end of airtime); one that
 *    finds nothing posted sends nothing;
 *  - not aggregating: flowsim.c's FIFO at link_rate without a buffer
 *    limit, each frame completed as it leaves.
 *
 * What the device holds is bounded by the senders' device-queue limit
 * (TCP Small Queues), applied as the transmit engine applies it: before a
 * burst the sender looks at the device (gso_aggr__look with what
 * completed since its previous look and what is posted and not
 * completed), takes gso_aggr__policy() and, at or over its queue limit,
 * looks again FS_TSQ_RETRY_NS later.  Its bursts take the policy's shift.
 */
#include "flowsim_internal.h"

#include <errno.h>
#include <stdlib.h>

#define TSQ_MAX_BYTES (256u << 10) /* the fixed policy's cap, as xdp/tcp's (tcp_limit_output_bytes) */

static uint64_t aggr_cap(const struct fs_params *p)
{
	if (p->dev.aggr_bytes)
		return p->dev.aggr_bytes;
	return (uint64_t)((unsigned __int128)p->link_rate * p->dev.interval_ns / 1000000000u);
}

static uint64_t next_gap(struct fs_sim *s)
{
	const struct fs_dev_params *d = &s->p->dev;

	if (!d->jitter_ns)
		return d->interval_ns;
	return d->interval_ns - d->jitter_ns + fs_rand32(s) % (2 * d->jitter_ns + 1);
}

int fs_dev_init(struct fs_sim *s)
{
	const struct fs_dev_params *d = &s->p->dev;

	if (!d->interval_ns)
		return 0;
	if (d->jitter_ns >= d->interval_ns)
		return -EINVAL;
	s->dev.cap = FS_DEV_MAX_FRAMES;
	s->dev.ring = calloc(s->dev.cap, sizeof(*s->dev.ring));
	if (!s->dev.ring)
		return -ENOMEM;
	fs_push(s, next_gap(s), EV_OPP, 0, 0);
	return 0;
}

void fs_dev_free(struct fs_sim *s)
{
	free(s->dev.ring);
	free(s->dev.rtt);
}

void fs_dev_post(struct fs_sim *s, struct fs_flow *f, uint64_t seg, uint32_t wire)
{
	struct fs_dev *d = &s->dev;

	if (d->n == d->cap) {
		s->err = -E2BIG;
		return;
	}
	d->ring[(d->head + d->n) % d->cap] = (struct fs_dev_frame){ seg, f->id, wire };
	d->n++;
	fs_queue_account(s, s->now);
	s->q_bytes += wire;
	if (s->now >= s->p->measure_from_ns && s->q_bytes > s->r->max_queue_bytes)
		s->r->max_queue_bytes = s->q_bytes;
}

/* An opportunity: send one aggregate of what is posted, then the next opportunity. */
static void opportunity(struct fs_sim *s)
{
	const struct fs_params *p = s->p;
	struct fs_dev *d = &s->dev;
	uint64_t cap = aggr_cap(p), bytes = 0, end, next = s->now + next_gap(s);
	uint32_t k = 0;

	/* Whole frames up to the cap; the first always goes, however large. */
	while (k < d->n && (!k || bytes + d->ring[(d->head + k) % d->cap].wire <= cap))
		bytes += d->ring[(d->head + k++) % d->cap].wire;
	if (k) {
		end = s->now + bytes * 1000000000u / p->link_rate;
		for (uint32_t i = 0; i < k; i++) {
			const struct fs_dev_frame *fr = &d->ring[(d->head + i) % d->cap];

			fs_push(s, end + p->rtt_ns / 2, EV_SEG, fr->flow, fr->seg);
		}
		d->head = (d->head + k) % d->cap;
		d->n -= k;
		fs_push(s, end, EV_DONE, 0, bytes);
		s->r->aggregates++;
		if (next < end)
			next = end;
	}
	fs_push(s, next, EV_OPP, 0, 0);
}

void fs_dev_event(struct fs_sim *s, const struct sim_ev *e)
{
	if (e->type == EV_OPP) {
		opportunity(s);
		return;
	}
	/* EV_DONE: the aggregate has left; its frames are completed. */
	fs_queue_account(s, s->now);
	s->q_bytes -= e->arg;
	s->dev.done += e->arg;
}

static const struct gso_aggr *estimator(const struct fs_sim *s, const struct fs_flow *f)
{
	return s->p->dev.learn ? &f->aggr : NULL;
}

uint32_t fs_dev_shift(struct fs_sim *s, struct fs_flow *f, uint64_t rate)
{
	struct gso_aggr_policy pol = { .sz = sizeof(pol) };
	int err = gso_aggr__policy(estimator(s, f), rate, s->p->dev.shift, 0, 0, TSQ_MAX_BYTES, &pol);

	if (err)
		s->err = err;
	return pol.pacing_shift;
}

bool fs_dev_tsq_full(struct fs_sim *s, struct fs_flow *f, uint64_t rate, uint64_t full_burst)
{
	uint64_t done;
	int err;

	if (!s->p->dev.interval_ns)
		fs_queue_drain(s, s->now); /* the FIFO's frames that left by now are completed */
	done = s->dev.done - f->dev_seen;
	f->dev_seen = s->dev.done;
	if (s->p->dev.learn && gso_aggr__look(&f->aggr, s->now, done, s->q_bytes) < 0)
		s->err = -EINVAL;
	f->pol.sz = sizeof(f->pol);
	err = gso_aggr__policy(estimator(s, f), rate, s->p->dev.shift, full_burst, 0, TSQ_MAX_BYTES, &f->pol);
	if (err)
		s->err = err;
	/* As the engine: BBR's budget holds the two aggregates the limit is sized for. */
	gso_cc__set_dev_quantum(f->cc, f->pol.adapted ? (uint32_t)(f->pol.queue_limit / 2) : 0);
	if (s->q_bytes && s->q_bytes >= f->pol.queue_limit) {
		f->res->tsq_waits++;
		return true;
	}
	return false;
}

void fs_dev_rtt(struct fs_sim *s, uint64_t rtt_ns)
{
	struct fs_dev *d = &s->dev;

	if (d->nrtt == d->rtt_cap) {
		size_t nc = d->rtt_cap ? d->rtt_cap * 2 : 65536;
		uint64_t *v = realloc(d->rtt, nc * sizeof(*v));

		if (!v) {
			s->err = -ENOMEM;
			return;
		}
		d->rtt = v;
		d->rtt_cap = nc;
	}
	d->rtt[d->nrtt++] = rtt_ns;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void fs_dev_results(struct fs_sim *s)
{
	struct fs_dev *d = &s->dev;
	struct fs_result *r = s->r;

	if (d->nrtt) {
		qsort(d->rtt, d->nrtt, sizeof(*d->rtt), cmp_u64);
		r->rtt_samples = d->nrtt;
		r->rtt_p50_us = d->rtt[(d->nrtt - 1) * 50 / 100] / 1000;
		r->rtt_p99_us = d->rtt[(d->nrtt - 1) * 99 / 100] / 1000;
	}
	for (unsigned i = 0; i < s->p->nflows; i++) {
		struct gso_aggr_info ai = { .sz = sizeof(ai) };
		struct fs_flow *f = &s->flow[i];

		if (!gso_aggr__info(&f->aggr, &ai)) {
			f->res->aggr_interval_ns = ai.interval_ns;
			f->res->aggr_batch_bytes = ai.batch_work;
		}
		f->res->shift_end = f->pol.pacing_shift;
		f->res->queue_limit_end = f->pol.queue_limit;
	}
}
