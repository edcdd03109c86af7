/*
 * The multi-queue port (<gso/port.h>): N engines on queues 0..N-1 of one
 * interface, their workers, the hand-off calls and the statistics.  The
 * ACK hand-over is port_hand.c's; the engines see the port only through
 * their engine_port_hooks.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/link_internal.h"
#include "opts_internal.h"
#include "port_internal.h"

#define CALLS_PER_WAKE 256u /* calls run per GSO_EV_WAKE; more wake the worker again */

/* ---- the worker's side ---- */

static void run_calls(struct port_q *pq)
{
	struct port_call *c;
	uint32_t k = 0;

	for (; k < CALLS_PER_WAKE && (c = gsoi_pring_peek(&pq->calls_ring)); k++) {
		struct port_call call = *c;

		/* Freed first: the call may queue another on its own queue. */
		gsoi_pring_pop(&pq->calls_ring);
		call.fn(pq->e, call.arg);
		atomic_fetch_add_explicit(&pq->ctr.calls_run, 1, memory_order_relaxed);
	}
	if (k == CALLS_PER_WAKE)
		gso_engine__wake(pq->e);
}

static void on_engine_event(void *ctx, const struct gso_engine_event *ev)
{
	struct port_q *pq = ctx;
	struct port *p = pq->p;

	if (ev->type == GSO_EV_WAKE && !atomic_load_explicit(&p->dying, memory_order_relaxed)) {
		gsoi_port_hand_wake(pq);
		run_calls(pq);
	}
	if (p->on_event)
		p->on_event(p->ctx, pq->q, pq->e, ev);
}

/* ---- opening ---- */

static int check_cpus(const struct gso_port_opts *o, uint32_t n)
{
	const int *cpus = GSO_OPTS_GET(o, cpus, (const int *)NULL);
	uint32_t nc = GSO_OPTS_GET(o, ncpus, 0u);
	cpu_set_t allowed;

	if (!cpus || !nc)
		return 0;
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return -errno;
	for (uint32_t q = 0; q < nc && q < n; q++) {
		if (cpus[q] == -1)
			continue;
		if (cpus[q] < 0 || cpus[q] >= CPU_SETSIZE || !CPU_ISSET(cpus[q], &allowed))
			return -EDOM;
	}
	return 0;
}

static bool pow2_in(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v >= lo && v <= hi && !(v & (v - 1));
}

static void free_port(struct port *p)
{
	/* Stale from now on (0, before gso_port__open handed one out: no-op). */
	gsoi_handle_free(p->handle);
	for (uint32_t q = 0; q < p->n; q++) {
		struct port_q *pq = &p->qs[q];

		if (pq->eng) {
			pq->eng->port = NULL;
			if (p->steer && !p->closed)
				gso_steer__del_dev(p->steer, gso_engine__dev(pq->e));
		}
	}
	gsoi_port_unlisten(p);
	for (uint32_t q = 0; q < p->n; q++) {
		gso_engine__destroy(p->qs[q].e);
		gsoi_port_hand_fini(p, &p->qs[q]);
		gsoi_pring_fini(&p->qs[q].calls_ring);
	}
	if (p->own_steer)
		gso_steer__destroy(p->steer);
	pthread_mutex_destroy(&p->stats_mu);
	pthread_rwlock_destroy(&p->ctl);
	free(p->qs);
	free(p);
}

/*
 * The engines' AF_XDP options: the caller's (or gso_engine__open's
 * defaults: a receive ring for the ACKs) with the flags of the path.
 */
static int port_path(int ifindex, uint32_t path, const struct gso_xsk_opts *uxo, struct gso_xsk_opts *xo,
		     struct gso_path_info *info)
{
	GSO_OPTS(gso_ifcaps, ic);
	uint32_t xflags;
	int err;

	if (uxo) {
		if (!GSO_OPTS_VALID(gso_xsk_opts, uxo))
			return -EINVAL;
		memcpy(xo, uxo, uxo->sz < sizeof(*xo) ? uxo->sz : sizeof(*xo));
		xo->sz = sizeof(*xo);
	} else {
		xo->rx_size = 1024;
		xo->rx_chunks = 2048;
	}
	err = gso_ifcaps__probe(ifindex, GSO_IFCAPS_NO_XSK | GSO_IFCAPS_REFRESH, &ic);
	if (!err)
		err = gsoi_path_choose(&ic, path, true, info, &xflags);
	if (err)
		return err;
	xo->flags |= xflags;
	return 0;
}

int gso_port__open(struct gso_port **out, int ifindex, const struct gso_port_opts *o)
{
	GSO_OPTS(gso_engine_opts, eo);
	GSO_OPTS(gso_xsk_opts, xo);
	struct gso_path_info info;
	const struct gso_engine_opts *ueo;
	struct port *p;
	uint32_t n, have, rxq, txq, ring, hand;
	int err;

	if (!out || ifindex <= 0 || !GSO_OPTS_VALID(gso_port_opts, o))
		return -EINVAL;
	ring = GSO_OPTS_GET(o, ring_size, 0u) ?: GSO_PORT_DEF_RING;
	hand = GSO_OPTS_GET(o, handover_size, 0u) ?: GSO_PORT_DEF_HANDOVER;
	ueo = GSO_OPTS_GET(o, engine, (const struct gso_engine_opts *)NULL);
	if (!pow2_in(ring, 2, GSO_PORT_MAX_RING) || !pow2_in(hand, 2, 65536) || !GSO_OPTS_VALID(gso_engine_opts, ueo) ||
	    GSO_OPTS_GET(ueo, clock, (gso_engine_clock_fn)NULL))
		return -EINVAL;
	err = gsoi_link_queues(ifindex, &rxq, &txq);
	if (err)
		return err;
	/* A socket binds a queue that exists both ways (xsk_bind: real_num_rx/tx_queues). */
	have = txq;
	if (rxq && rxq < have)
		have = rxq;
	if (!have)
		have = 1;
	n = GSO_OPTS_GET(o, queues, 0u);
	if (n > GSO_PORT_MAX_QUEUES)
		return -E2BIG;
	if (n > have)
		return -ERANGE;
	if (!n)
		n = have < GSO_PORT_MAX_QUEUES ? have : GSO_PORT_MAX_QUEUES;
	err = check_cpus(o, n);
	if (err)
		return err;

	err = port_path(ifindex, GSO_OPTS_GET(o, path, 0u), GSO_OPTS_GET(o, xsk, (const struct gso_xsk_opts *)NULL),
			&xo, &info);
	if (err)
		return err;
	if (ueo)
		memcpy(&eo, ueo, ueo->sz < sizeof(eo) ? ueo->sz : sizeof(eo));
	eo.sz = sizeof(eo);
	eo.on_event = on_engine_event;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->qs = aligned_alloc(64, ((n * sizeof(*p->qs)) + 63) / 64 * 64);
	err = p->qs ? -pthread_rwlock_init(&p->ctl, NULL) : -ENOMEM;
	if (!err && (err = -pthread_mutex_init(&p->stats_mu, NULL)))
		pthread_rwlock_destroy(&p->ctl);
	if (err) {
		free(p->qs);
		free(p);
		return err;
	}
	memset(p->qs, 0, n * sizeof(*p->qs));
	p->n = n;
	p->ring_size = ring;
	p->handover_size = hand;
	p->on_event = GSO_OPTS_GET(o, on_event, (gso_port_event_fn)NULL);
	p->ctx = GSO_OPTS_GET(o, ctx, (void *)NULL);
	p->steer = GSO_OPTS_GET(o, steer, (struct gso_steer *)NULL);
	if (!p->steer) {
		err = gso_steer__create(&p->steer, ifindex, GSO_OPTS_GET(o, steer_opts, (const struct gso_steer_opts *)NULL));
		if (err) {
			p->steer = NULL;
			goto fail;
		}
		p->own_steer = true;
	}
	eo.steer = p->steer;
	for (uint32_t q = 0; q < n; q++) {
		struct port_q *pq = &p->qs[q];
		const int *cpus = GSO_OPTS_GET(o, cpus, (const int *)NULL);

		pq->p = p;
		pq->q = q;
		pq->cpu = cpus && q < GSO_OPTS_GET(o, ncpus, 0u) ? cpus[q] : -1;
		if ((err = gsoi_pring_init(&pq->calls_ring, ring, sizeof(struct port_call))) ||
		    (err = gsoi_port_hand_init(p, pq, eo.max_flows ?: GSO_ENGINE_DEF_MAX_FLOWS)))
			goto fail;
		eo.ctx = pq;
		err = gso_engine__open(&pq->e, ifindex, q, &xo, &eo);
		if (err) {
			pq->e = NULL;
			goto fail;
		}
		/* The engine joined its device to the program already (eo.steer; adding again changes
		 * nothing); this says -EOPNOTSUPP for a socket opts.xsk left without a receive ring. */
		err = gso_steer__add_dev(p->steer, gso_engine__dev(pq->e));
		if (err) {
			gso_engine__destroy(pq->e);
			pq->e = NULL;
			goto fail;
		}
		pq->eng = gsoi_engine_of(pq->e);
		pq->eng->path = info;
		pq->eng->path.rx_devs = pq->eng->nrx;
		pq->eng->has_path = true;
		pq->eng->port = &gsoi_port_hooks;
		pq->eng->port_ctx = pq;
		/* Every queue has its socket: no ICMP error the steering program sees goes to the kernel. */
		gsoi_engine_icmp_sock_off(pq->eng);
	}
	p->handle = gsoi_handle_new(p, HANDLE_PORT);
	if (!p->handle) {
		err = -ENOMEM;
		goto fail;
	}
	*out = (struct gso_port *)p->handle;
	return 0;
fail:
	free_port(p);
	return err;
}

uint32_t gso_port__queues(const struct gso_port *h)
{
	const struct port *p = port_of(h);

	return p ? p->n : 0;
}

struct gso_engine *gso_port__engine(const struct gso_port *h, uint32_t q)
{
	const struct port *p = port_of(h);

	if (!p) {
		errno = h ? EBADF : EINVAL;
		return NULL;
	}
	if (q >= p->n) {
		errno = ENXIO;
		return NULL;
	}
	return p->qs[q].e;
}

struct gso_steer *gso_port__steer(const struct gso_port *h)
{
	const struct port *p = port_of(h);

	return p ? p->steer : NULL;
}

/* ---- running ---- */

int gso_port__start(struct gso_port *h)
{
	struct port *p = port_of(h);
	int err;

	if (h && !p)
		return -EBADF;
	if (!p || p->closed)
		return -EINVAL;
	/* Held from before the first worker starts until running says so: stats meanwhile leave the engines out. */
	pthread_rwlock_wrlock(&p->ctl);
	if (atomic_load(&p->running)) {
		pthread_rwlock_unlock(&p->ctl);
		return -EALREADY;
	}
	for (uint32_t q = 0; q < p->n; q++) {
		err = gso_engine__start(p->qs[q].e, p->qs[q].cpu);
		if (err) {
			while (q--)
				gso_engine__stop(p->qs[q].e);
			pthread_rwlock_unlock(&p->ctl);
			return err;
		}
	}
	atomic_store(&p->running, true);
	pthread_rwlock_unlock(&p->ctl);
	/* Calls queued before start, and announcements made before, are taken now. */
	for (uint32_t q = 0; q < p->n; q++)
		gso_engine__wake(p->qs[q].e);
	return 0;
}

/* With p->ctl held for writing. */
static void port_stop_locked(struct port *p)
{
	if (!atomic_load(&p->running))
		return;
	/* Ask them all first, then join: they wind down in parallel. */
	for (uint32_t q = 0; q < p->n; q++)
		atomic_store(&p->qs[q].eng->stop, true);
	for (uint32_t q = 0; q < p->n; q++)
		gso_engine__stop(p->qs[q].e);
	atomic_store(&p->running, false);
}

static void port_stop(struct port *p)
{
	pthread_rwlock_wrlock(&p->ctl);
	port_stop_locked(p);
	pthread_rwlock_unlock(&p->ctl);
}

int gso_port__stop(struct gso_port *h)
{
	struct port *p = port_of(h);

	if (h && !p)
		return -EBADF;
	if (!p)
		return -EINVAL;
	port_stop(p);
	return 0;
}

static int port_call(struct port *p, uint32_t q, gso_port_call_fn fn, void *arg)
{
	struct port_call *c;
	struct port_q *pq;

	if (q >= p->n)
		return -ENXIO;
	if (atomic_load_explicit(&p->dying, memory_order_relaxed))
		return -ESHUTDOWN;
	pq = &p->qs[q];
	c = gsoi_pring_reserve(&pq->calls_ring);
	if (!c) {
		atomic_fetch_add_explicit(&pq->calls_refused, 1, memory_order_relaxed);
		return -EAGAIN;
	}
	c->fn = fn;
	c->arg = arg;
	gsoi_pring_push(&pq->calls_ring);
	atomic_fetch_add_explicit(&pq->calls, 1, memory_order_relaxed);
	/* The wake's atomic store is ordered after the push: the worker that sees it sees the call. */
	gso_engine__wake(pq->e);
	return 0;
}

int gso_port__call(struct gso_port *h, uint32_t q, gso_port_call_fn fn, void *arg)
{
	struct port *p = port_of(h);

	if (h && !p)
		return -EBADF;
	if (!p || !fn)
		return -EINVAL;
	return port_call(p, q, fn, arg);
}

/* On the worker: is this engine drained? */
static void drain_check(struct gso_engine *h, void *arg)
{
	struct port_q *pq = arg;
	const struct engine *e = pq->eng;

	(void)h;
	atomic_store(&pq->drained, e->dead || (!e->queued && !e->nheld && gso_dev__inflight(e->tx) <= 0));
	atomic_store(&pq->drain_asked, false);
}

static int drain_started(struct port *p, uint64_t until_ns)
{
	for (;;) {
		bool all = true;

		for (uint32_t q = 0; q < p->n; q++) {
			struct port_q *pq = &p->qs[q];

			if (atomic_load(&pq->drain_asked))
				all = false;
			else if (!atomic_load(&pq->drained)) {
				all = false;
				atomic_store(&pq->drain_asked, true);
				if (port_call(p, q, drain_check, pq))
					atomic_store(&pq->drain_asked, false);
			}
		}
		if (all)
			break;
		if (gso_evloop_now_ns() >= until_ns)
			return -ETIMEDOUT;
		nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
	}
	for (uint32_t q = 0; q < p->n; q++)
		if (p->qs[q].eng->dead)
			return -ENODEV;
	return 0;
}

int gso_port__drain(struct gso_port *h, uint64_t until_ns)
{
	struct port *p = port_of(h);
	int err;

	if (h && !p)
		return -EBADF;
	if (!p || p->closed)
		return -EINVAL;
	if (atomic_load(&p->running)) {
		for (uint32_t q = 0; q < p->n; q++) {
			/* Wait for a check still out before asking anew. */
			while (atomic_load(&p->qs[q].drain_asked) && gso_evloop_now_ns() < until_ns)
				nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
			atomic_store(&p->qs[q].drained, false);
		}
		return drain_started(p, until_ns);
	}
	/* The caller's thread runs the engines meanwhile: no stats read them. */
	pthread_rwlock_wrlock(&p->ctl);
	err = 0;
	for (uint32_t q = 0; q < p->n && !err; q++)
		err = gso_engine__drain(p->qs[q].e, until_ns);
	pthread_rwlock_unlock(&p->ctl);
	return err;
}

/* ---- ending ---- */

int gso_port__close(struct gso_port *h)
{
	struct port *p = port_of(h);

	if (h && !p)
		return -EBADF;
	if (!p)
		return -EINVAL;
	if (p->closed)
		return 0;
	pthread_rwlock_wrlock(&p->ctl);
	port_stop_locked(p);
	for (uint32_t q = 0; q < p->n; q++) {
		/* The hand-over is over: streams end without announcing it to engines that are closing too. */
		p->qs[q].eng->port = NULL;
		gso_steer__del_dev(p->steer, gso_engine__dev(p->qs[q].e));
	}
	for (uint32_t q = 0; q < p->n; q++)
		gso_engine__close(p->qs[q].e);
	p->closed = true;
	pthread_rwlock_unlock(&p->ctl);
	return 0;
}

void gso_port__destroy(struct gso_port *h)
{
	struct port *p = port_of(h);

	/* NULL, or destroyed already (its handle is stale): nothing to do. */
	if (!p)
		return;
	atomic_store(&p->dying, true);
	port_stop(p);
	free_port(p);
}

/* ---- statistics ---- */

static uint64_t ld(const _Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

/* `engines`: the engines' and devices' counters may be read (no worker, no start, stop, close or drain under way). */
static void add_q(const struct port_q *pq, bool engines, struct gso_port_stats *s)
{
	const struct port_ctr *c = &pq->ctr;

	s->queues++;
	s->streams += atomic_load_explicit(&c->streams, memory_order_relaxed);
	s->calls += ld(&pq->calls);
	s->calls_refused += ld(&pq->calls_refused);
	s->calls_run += ld(&c->calls_run);
	s->handover_out += ld(&c->handover_out);
	s->handover_in += ld(&c->handover_in);
	s->handover_drops += ld(&c->handover_drops);
	s->handover_stale += ld(&c->handover_stale);
	s->owner_msgs += ld(&c->owner_msgs);
	s->owner_drops += ld(&c->owner_drops);
	if (engines) {
		GSO_OPTS(gso_dev_stats, ds);
		GSO_OPTS(gso_engine_stats, es);

		if (!gso_dev__stats(gso_engine__dev(pq->e), &ds)) {
			s->tx_frames += ds.tx_frames;
			s->chunks_total += ds.chunks_total;
			s->chunks_free += ds.chunks_free;
		}
		if (!gso_engine__stats(pq->e, &es)) {
			s->rx_frames += es.rx_frames;
			s->rx_other += es.rx_other;
			s->icmp_pmtu += es.icmp_pmtu;
			s->icmp_stale += es.icmp_stale;
			s->icmp_forged += es.icmp_forged;
			s->icmp_bad += es.icmp_bad;
		}
	}
}

int gso_port__stats(const struct gso_port *h, uint32_t q, struct gso_port_stats *st)
{
	struct port *p = port_of(h);
	struct gso_port_stats full;
	bool engines;

	if (h && !p)
		return -EBADF;
	if (!p || !GSO_OUT_VALID(st))
		return -EINVAL;
	if (q != GSO_PORT_ALL && q >= p->n)
		return -ENXIO;
	memset(&full, 0, sizeof(full));
	/*
	 * Never waits: while a start, stop, close or drain holds the lock the
	 * engines are (about to be) run by another thread, as while running.
	 * Readers share it, so stats on two threads do not blank each other.
	 */
	engines = !pthread_rwlock_tryrdlock(&p->ctl);
	if (engines && atomic_load(&p->running)) {
		pthread_rwlock_unlock(&p->ctl);
		engines = false;
	}
	if (engines)
		pthread_mutex_lock(&p->stats_mu);
	for (uint32_t i = 0; i < p->n; i++)
		if (q == GSO_PORT_ALL || q == i)
			add_q(&p->qs[i], engines, &full);
	if (engines) {
		pthread_mutex_unlock(&p->stats_mu);
		pthread_rwlock_unlock(&p->ctl);
	}
	GSO_OUT_PUT(st, full);
	return 0;
}
