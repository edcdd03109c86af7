/*
 * The transmit engine (engine.h): one device queue driven from one
 * thread.  This file owns the loop, the devices, the link state and the
 * scheduler; the flows live in engine_dgram.c and engine_tcp*.c.
 *
 * One pass (engine_pass) reads the receive devices, runs the streams'
 * expired timers, sends what the scheduler says is due (within the slack)
 * in batches, and reaps completions.  The device's answers drive the
 * link state as much as rtnetlink does: -EAGAIN/-ENOBUFS keep the rest of
 * a batch "held" (first in line next time, so order is kept), -ENETDOWN
 * stops sending until the link is back (the monitor says so, or a kick
 * every GSO_ENGINE_LINK_RETRY_NS succeeds), -ENODEV ends everything.
 */
#include "engine_internal.h"
#include "dev/dev_internal.h"
#include "kernel/link_internal.h"
#include "opts_internal.h"

#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define COOKIE_WAKE (1ull << 62)
#define COOKIE_MON (COOKIE_WAKE + 1)
#define COOKIE_ICMP (COOKIE_WAKE + 2)
#define RETRY_NS 20000ull           /* after backpressure: copy mode completes within the kick */
#define MON_POLL_NS 10000000ull     /* gso_engine__poll() reads the monitor at least this often */
#define TX_ROUNDS 16                /* batches per pass before input is looked at again */
#define RX_BATCH 64
#define RX_ROUNDS 8
#define DEF_RX_SIZE 1024u
#define DEF_RX_CHUNKS 2048u

/* ---- events ---------------------------------------------------------------- */

void gsoi_engine_emit(struct engine *e, const struct gso_engine_event *ev)
{
	if (!e->on_event)
		return;
	if (e->defer && e->nevq == e->evq_cap) {
		/* Grown rather than delivered early: a callback must never run mid-operation. */
		struct gso_engine_event *q = realloc(e->evq, 2 * e->evq_cap * sizeof(*q));

		if (q) {
			e->evq = q;
			e->evq_cap *= 2;
		}
	}
	if (e->defer && e->nevq < e->evq_cap) {
		e->evq[e->nevq++] = *ev;
		return;
	}
	e->on_event(e->ctx, ev);
}

static void flush_events(struct engine *e)
{
	/*
	 * Callbacks run with nothing deferred: what they cause is delivered at
	 * once.  Each entry is taken out before its callback runs, so that a
	 * callback that closes its flow (gsoi_engine_flush_flow_events) does
	 * not get the same event again.
	 */
	for (unsigned i = 0; i < e->nevq; i++) {
		struct gso_engine_event ev = e->evq[i];

		if (!ev.type)
			continue;
		e->evq[i].type = 0;
		e->on_event(e->ctx, &ev);
	}
	e->nevq = 0;
}

void gsoi_engine_flush_flow_events(struct engine *e, const struct eflow *f)
{
	for (unsigned i = 0; i < e->nevq; i++) {
		struct gso_engine_event ev = e->evq[i];

		if (!ev.type || ((uintptr_t)ev.dgram != f->handle && (uintptr_t)ev.stream != f->handle &&
				 (uintptr_t)ev.listener != f->handle))
			continue;
		e->evq[i].type = 0;
		e->on_event(e->ctx, &ev);
	}
}

/* ---- flows and the scheduler ------------------------------------------------ */

int gsoi_engine_flow_add(struct engine *e, struct eflow *f, const struct eflow_ops *ops, bool pace_all,
			 void *ctx, enum handle_kind kind)
{
	GSO_OPTS(gso_pacer_opts, po, .flags = pace_all ? GSO_PACER_F_PACE_ALL : 0);
	int err;

	if (e->dead)
		return -ENODEV;
	if (!e->nfree)
		return -ENOSPC;
	f->handle = gsoi_handle_new(f, kind);
	if (!f->handle)
		return -ENOMEM;
	err = gso_sched__flow_add(e->sched, &po, &f->sched_id);
	if (err) {
		gsoi_handle_free(f->handle);
		f->handle = 0;
		return err;
	}
	f->e = e;
	f->ops = ops;
	f->ctx = ctx;
	f->slot = e->free_slots[--e->nfree];
	e->flows[f->slot] = f;
	gsoi_flow_pmtu_init(e, f);
	return 0;
}

/* Forget the flow's bursts that were dequeued but not taken by the device. */
static void unhold(struct engine *e, const struct eflow *f)
{
	unsigned k = 0;

	for (unsigned i = 0; i < e->nheld; i++)
		if (e->held[i].f != f)
			e->held[k++] = e->held[i];
	e->nheld = k;
}

void gsoi_engine_flow_del(struct engine *e, struct eflow *f)
{
	struct gso_sched_burst b;

	unhold(e, f);
	while (gso_sched__flow_drain(e->sched, f->sched_id, &b, 1) == 1)
		;
	gso_sched__flow_del(e->sched, f->sched_id);
	gsoi_etimers_set(&e->timers, f->slot, UINT64_MAX);
	e->flows[f->slot] = NULL;
	e->free_slots[e->nfree++] = f->slot;
	f->armed = false;
	/* From now on every copy of the flow's handle is stale: -EBADF. */
	gsoi_handle_free(f->handle);
	f->handle = 0;
}

int gsoi_engine_arm(struct engine *e, struct eflow *f, uint64_t rate, uint32_t wire_bytes, uint32_t segs,
		    uint64_t now, bool chained)
{
	struct gso_sched_burst b = { .cookie = f->slot, .flow = f->sched_id, .wire_bytes = wire_bytes,
				     .segs = segs };
	uint64_t t = now;
	int err;

	if (chained && f->grid_ns) {
		/* On the flow's own grid, unless it fell more than catchup_ns behind. */
		uint64_t floor = now > e->catchup_ns ? now - e->catchup_ns : 0;

		t = f->grid_ns > floor ? f->grid_ns : floor;
		if (t > now)
			t = now;
		if (f->grid_ns < floor) {
			/* The grid moves: time the flow will never make good (its debt). */
			f->win_lost += floor - f->grid_ns;
			f->lost_ns += floor - f->grid_ns;
			e->st.lost_ns += floor - f->grid_ns;
		}
	}
	gso_sched__flow_set_rate(e->sched, f->sched_id, rate ? rate : GSO_RATE_UNPACED);
	err = gso_sched__enqueue(e->sched, t, &b);
	if (!err)
		f->armed = true;
	return err;
}

int gsoi_engine_arm_at(struct engine *e, struct eflow *f, uint32_t wire_bytes, uint32_t segs, uint64_t at_ns,
		       uint64_t now)
{
	struct gso_sched_burst b = { .cookie = f->slot, .flow = f->sched_id, .wire_bytes = wire_bytes,
				     .segs = segs };
	int err;

	/* Unpaced, stamped at its own time: the scheduler keeps the flow's order (never before its last). */
	gso_sched__flow_set_rate(e->sched, f->sched_id, GSO_RATE_UNPACED);
	err = gso_sched__enqueue(e->sched, at_ns > now ? at_ns : now, &b);
	if (!err)
		f->armed = true;
	return err;
}

/*
 * At each super-segment a flow sends: close its debt window once it is at
 * least GSO_ENGINE_BEHIND_WIN_NS long, and start or end a behind episode
 * (engine.h, GSO_EV_FLOW_BEHIND).  A few adds and compares per burst.
 */
static void behind_check(struct engine *e, struct eflow *f, uint64_t now)
{
	uint64_t el;
	int err;

	if (!f->win_start) {
		f->win_start = now;
		return;
	}
	el = now - f->win_start;
	if (el < GSO_ENGINE_BEHIND_WIN_NS)
		return;
	if (!f->behind && f->win_lost > el / GSO_ENGINE_BEHIND_RAISE) {
		f->behind = true;
		f->behind_events++;
		e->st.behind_events++;
		err = -ETIME;
	} else if (f->behind && f->win_lost <= el / GSO_ENGINE_BEHIND_CLEAR) {
		f->behind = false;
		err = 0;
	} else {
		err = 1;
	}
	f->win_start = now;
	f->win_lost = 0;
	if (err <= 0) {
		bool dg = f->ops == &gsoi_engine_dgram_ops;

		gsoi_engine_emit(e, &(struct gso_engine_event){ .type = GSO_EV_FLOW_BEHIND, .err = err,
							       .flow_ctx = f->ctx,
							       .dgram = dg ? (struct gso_dgram *)f->handle : NULL,
							       .stream = dg ? NULL : (struct gso_stream *)f->handle });
	}
}

void gsoi_engine_timer_set(struct engine *e, uint32_t slot, uint64_t deadline)
{
	gsoi_etimers_set(&e->timers, slot, deadline);
}

void gsoi_engine_end_all(struct engine *e, int err)
{
	for (uint32_t i = 0; i < e->max_flows; i++) {
		struct eflow *f = e->flows[i];

		if (!f || f->ended)
			continue;
		/* Flow by flow: a callback may close this flow or others, so nothing is kept across it. */
		e->defer++;
		f->ended = true;
		if (f->ops->ended)
			f->ops->ended(f, err);
		e->defer--;
		flush_events(e);
	}
}

/* ---- devices ------------------------------------------------------------------ */

static void refresh_caps(struct engine *e)
{
	memset(&e->caps, 0, sizeof(e->caps));
	e->caps.sz = sizeof(e->caps);
	gso_dev__caps(e->tx, &e->caps);
}

static bool is_tso(struct gso_dev *dev)
{
	GSO_OPTS(gso_tso_stats, ts);

	return !gso_tso__stats(dev, &ts);
}

static int watch_rx(struct engine *e, struct gso_dev *dev, unsigned idx)
{
	int fd = gso_xsk__fd(dev);

	/* Devices without a descriptor are read on every pass anyway. */
	if (fd < 0)
		return 0;
	return gso_evloop__add_fd(e->loop, fd, POLLIN, idx);
}

static bool receives(struct gso_dev *dev)
{
	GSO_OPTS(gso_dev_caps, c);

	return !gso_dev__caps(dev, &c) && (c.flags & GSO_DEV_RX);
}

static int rx_index(const struct engine *e, const struct gso_dev *dev)
{
	for (unsigned i = 0; i < e->nrx; i++)
		if (e->rx[i] == dev)
			return (int)i;
	return -1;
}

/* Re-register every receive descriptor with its index as cookie. */
static void rewatch_rx(struct engine *e)
{
	for (unsigned i = 0; i < e->nrx; i++) {
		int fd = gso_xsk__fd(e->rx[i]);

		if (fd >= 0 && gso_evloop__mod_fd(e->loop, fd, POLLIN, i) == -ENOENT)
			gso_evloop__add_fd(e->loop, fd, POLLIN, i);
	}
}

/*
 * With a steering program (opts.steer), every AF_XDP receive device of
 * the engine joins it: the flows the streams register are steered to the
 * device of the queue they arrive on.  Adding a device the program has
 * already is harmless (gso_steer__add_dev is idempotent), so a caller or
 * a port that adds it too changes nothing.
 */
static int steer_dev(struct engine *e, struct gso_dev *dev)
{
	if (!e->steer || gso_xsk__fd(dev) < 0)
		return 0;
	return gso_steer__add_dev(e->steer, dev);
}

/* The device leaves the program (-ENOENT: it was never in it, or was removed already). */
static void unsteer_dev(struct engine *e, struct gso_dev *dev)
{
	if (e->steer)
		gso_steer__del_dev(e->steer, dev);
}

int gso_engine__add_rx(struct gso_engine *h, struct gso_dev *rx)
{
	struct engine *e = gsoi_engine_of(h);
	int err;

	if (h && !e)
		return -EBADF;
	if (!e || !rx || !receives(rx))
		return -EINVAL;
	err = engine_thread_ok(e);
	if (err)
		return err;
	if (rx_index(e, rx) >= 0)
		return -EEXIST;
	if (e->nrx >= ENGINE_MAX_RX)
		return -E2BIG;
	err = steer_dev(e, rx);
	if (err)
		return err;
	err = watch_rx(e, rx, e->nrx);
	if (err) {
		unsteer_dev(e, rx);
		return err;
	}
	e->rx[e->nrx++] = rx;
	return 0;
}

int gso_engine__del_rx(struct gso_engine *h, struct gso_dev *rx)
{
	struct engine *e = gsoi_engine_of(h);
	int i, fd;

	if (h && !e)
		return -EBADF;
	if (!e || !rx)
		return -EINVAL;
	if (engine_thread_ok(e))
		return -EPERM;
	i = rx_index(e, rx);
	if (i < 0)
		return -ENOENT;
	if (rx == e->tx)
		return -EBUSY;
	unsteer_dev(e, rx);
	fd = gso_xsk__fd(rx);
	if (fd >= 0)
		gso_evloop__del_fd(e->loop, fd);
	memmove(&e->rx[i], &e->rx[i + 1], (e->nrx - (unsigned)i - 1) * sizeof(e->rx[0]));
	e->nrx--;
	rewatch_rx(e);
	return 0;
}

/* A new transmit device: nothing learned about the old one applies. */
static void aggr_reset(struct engine *e)
{
	e->aggr = (struct gso_aggr){ .sz = sizeof(e->aggr) };
	gso_aggr__init(&e->aggr);
	e->aggr_completed = gsoi_dev_completed(e->tx);
	e->dev_quiet_from = 0;
	e->dev_lost = 0;
}

int gsoi_engine_look(struct engine *e, uint64_t now)
{
	int r = gso_dev__reap(e->tx, 0), held;
	uint64_t c;

	if (r < 0)
		return r;
	c = gsoi_dev_completed(e->tx);
	held = gso_dev__inflight(e->tx);
	/* A clock that stepped back (a test's) is refused and the look lost; the next one counts. */
	gso_aggr__look(&e->aggr, now, c - e->aggr_completed, held > 0 ? (uint64_t)held : 0);
	if (held <= 0) {
		e->dev_quiet_from = 0;
		e->dev_lost = 0;
	} else {
		if (e->dev_lost > (uint32_t)held)
			e->dev_lost = (uint32_t)held; /* late completions of what was given up on */
		if (c != e->aggr_completed || !e->dev_quiet_from || now < e->dev_quiet_from) {
			e->dev_quiet_from = now;
		} else if (now - e->dev_quiet_from >= GSO_ENGINE_DEV_STALL_NS && (uint32_t)held > e->dev_lost) {
			/*
			 * Nothing completed for a second while descriptors were out:
			 * their completions are lost (no device, aggregating or not,
			 * holds a frame that long), and a stream waiting for room in
			 * the device would wait for ever.
			 */
			e->st.tx_lost_completions += (uint32_t)held - e->dev_lost;
			e->dev_lost = (uint32_t)held;
			e->dev_quiet_from = now;
		}
	}
	e->aggr_completed = c;
	return r;
}

uint32_t gsoi_engine_dev_inflight(const struct engine *e)
{
	int held = gso_dev__inflight(e->tx);

	return held > 0 && (uint32_t)held > e->dev_lost ? (uint32_t)held - e->dev_lost : 0;
}

int gso_engine__set_tx(struct gso_engine *h, struct gso_dev *tx)
{
	struct engine *e = gsoi_engine_of(h);
	struct gso_dev *old;

	if (h && !e)
		return -EBADF;
	if (!e || !tx || tx == e->tx)
		return -EINVAL;
	if (engine_thread_ok(e))
		return -EPERM;
	if (e->dead)
		return -ESHUTDOWN;
	if (e->nretired >= ENGINE_MAX_RX)
		return -E2BIG;
	old = e->tx;
	gso_dev__kick(old);
	if (rx_index(e, old) < 0)
		e->retired[e->nretired++] = old;
	e->tx = tx;
	e->tx_is_tso = is_tso(tx);
	refresh_caps(e);
	aggr_reset(e);
	return 0;
}

struct gso_dev *gso_engine__dev(const struct gso_engine *h)
{
	const struct engine *e = gsoi_engine_of(h);

	return e ? e->tx : NULL;
}

struct gso_dev *gso_engine__rx(const struct gso_engine *h, uint32_t i)
{
	const struct engine *e = gsoi_engine_of(h);

	return e && i < e->nrx ? e->rx[i] : NULL;
}

struct gso_steer *gso_engine__steer(const struct gso_engine *h)
{
	const struct engine *e = gsoi_engine_of(h);

	return e ? e->steer : NULL;
}

/* ---- the link ----------------------------------------------------------------- */

static void engine_gone(struct engine *e)
{
	if (e->dead)
		return;
	e->dead = true;
	e->usable = false;
	e->nheld = 0;
	gsoi_engine_end_all(e, -ENODEV);
	/* Closing reclaims every descriptor queued or in flight: the UMEM balances. */
	gso_dev__close(e->tx);
	for (unsigned i = 0; i < e->nrx; i++)
		gso_dev__close(e->rx[i]);
	for (unsigned i = 0; i < e->nretired; i++)
		gso_dev__close(e->retired[i]);
	gsoi_engine_emit(e, &(struct gso_engine_event){ .type = GSO_EV_DEV_GONE, .err = -ENODEV });
}

static void link_eval(struct engine *e, uint64_t now)
{
	bool u = e->flags_usable && !e->ext_down && !e->dev_down && !e->dead;

	if (u == e->usable)
		return;
	e->usable = u;
	if (!u) {
		e->st.link_down++;
		e->down_since_ns = now;
		gsoi_engine_emit(e, &(struct gso_engine_event){ .type = GSO_EV_LINK, .err = -ENETDOWN });
		return;
	}
	e->st.link_up++;
	e->st.link_down_ns += now - e->down_since_ns;
	/* What waited in the device goes first; offloads not probed yet are probed now. */
	gso_dev__kick(e->tx);
	e->st.kicks++;
	if (e->caps.flags & GSO_DEV_PROBE_PENDING) {
		gso_dev__reap(e->tx, 0);
		gso_dev__probe(e->tx);
	}
	refresh_caps(e);
	gsoi_engine_emit(e, &(struct gso_engine_event){ .type = GSO_EV_LINK, .err = 0 });
}

/* Kick the device to learn whether it still says -ENETDOWN. */
static void try_kick(struct engine *e, uint64_t now)
{
	int r = gso_dev__kick(e->tx);

	e->st.kicks++;
	if (r == -ENODEV) {
		engine_gone(e);
		return;
	}
	e->dev_down = r == -ENETDOWN;
	if (e->dev_down)
		e->link_retry_ns = now + GSO_ENGINE_LINK_RETRY_NS;
	link_eval(e, now);
}

static void dev_said_down(struct engine *e, uint64_t now)
{
	if (!e->dev_down) {
		e->dev_down = true;
		e->link_retry_ns = now + GSO_ENGINE_LINK_RETRY_NS;
	}
	link_eval(e, now);
}

static void neigh_changed(struct engine *e, const struct rtmon_event *ev)
{
	for (uint32_t i = 0; i < e->max_flows; i++) {
		struct eflow *f = e->flows[i];
		size_t alen;

		if (!f || !f->follow || f->route.ifindex != ev->ifindex || f->route.l3 != ev->l3)
			continue;
		alen = ev->l3 == GSO_L3_IPV6 ? 16 : 4;
		if (memcmp(f->route.nexthop, ev->addr, alen) || !memcmp(f->route.dst_mac, ev->mac, 6))
			continue;
		memcpy(f->route.dst_mac, ev->mac, 6);
		f->ops->neigh(f);
		e->st.neigh_updates++;
	}
}

static void flags_now(struct engine *e, uint32_t flags, uint64_t now)
{
	e->mon_flags = flags;
	e->flags_usable = gsoi_rtnl_link_usable(flags);
	/* Frames that waited for an admin-down link: a kick tells whether they can go. */
	if (e->flags_usable && e->dev_down)
		try_kick(e, now);
	else
		link_eval(e, now);
}

struct mon_ctx {
	struct engine *e;
	uint64_t now;
	bool overrun;
	bool routes;    /* a route on our interface changed: ask for the flows' route MTUs after the read */
};

static void on_mon(void *ctx, const struct rtmon_event *ev)
{
	struct mon_ctx *m = ctx;
	struct engine *e = m->e;

	switch (ev->type) {
	case RTMON_EV_LINK:
		if (ev->ifindex == e->ifindex) {
			flags_now(e, ev->ifi_flags, m->now);
			gsoi_engine_link_mtu(e, ev->mtu, m->now);
		}
		break;
	case RTMON_EV_LINK_GONE:
		if (ev->ifindex == e->ifindex)
			engine_gone(e);
		break;
	case RTMON_EV_NEIGH:
		if (ev->has_mac && (ev->nud_state & RTNL_NUD_VALID))
			neigh_changed(e, ev);
		break;
	case RTMON_EV_ROUTE:
		if (!ev->ifindex || ev->ifindex == e->ifindex)
			m->routes = true;
		break;
	case RTMON_EV_OVERRUN:
		m->overrun = true;
		break;
	default:
		break;
	}
}

static void read_monitor(struct engine *e, uint64_t now)
{
	struct mon_ctx m = { .e = e, .now = now };
	uint32_t flags;
	int err;

	e->mon_ready = false;
	e->mon_read_ns = now;
	/* Flows raise GSO_EV_PATH_MTU as the MTU moves: after the read, as for a receive pass. */
	e->defer++;
	gsoi_rtmon_read(&e->mon, on_mon, &m);
	e->defer--;
	flush_events(e);
	if (e->dead)
		return;
	if (m.overrun) {
		/* Notifications were lost: ask for the state instead. */
		err = gsoi_rtnl_link_flags(e->ifindex, &flags);
		if (err == -ENODEV) {
			engine_gone(e);
			return;
		}
		if (!err)
			flags_now(e, flags, now);
	}
	if (m.routes || m.overrun) {
		e->defer++;
		gsoi_engine_routes_changed(e, now);
		e->defer--;
		flush_events(e);
	}
}

int gso_engine__link_changed(struct gso_engine *h, bool up)
{
	struct engine *e = gsoi_engine_of(h);
	uint64_t now;

	if (h && !e)
		return -EBADF;
	if (!e)
		return -EINVAL;
	if (engine_thread_ok(e))
		return -EPERM;
	now = engine_now(e);
	e->ext_down = !up;
	if (up && e->dev_down)
		try_kick(e, now);
	else
		link_eval(e, now);
	return 0;
}

/* ---- sending ------------------------------------------------------------------ */

/*
 * Hand txq[0..m) to the device, in order.  Returns how many it took and
 * the error of the first it did not take in *err.  TSO backends count
 * offload choices per stream, so their requests go one by one with the
 * flow's choice; AF_XDP takes the batch in one call (one kick).
 */
static unsigned submit_txq(struct engine *e, unsigned m, int *err)
{
	unsigned done = 0;

	*err = 0;
	while (done < m) {
		const struct eflow *f = e->bq[e->txmap[done]].f;
		int r;

		e->st.submits++;
		if (!e->tx_is_tso)
			r = gso_dev__submit(e->tx, &e->txq[done], m - done);
		else
			r = gso_tso__submit(e->tx, f->tso, &e->txq[done], 1);
		if (r < 0) {
			*err = r;
			break;
		}
		done += (unsigned)r;
	}
	return done;
}

/* Bursts bq[txmap[from..m)] wait, first in line, for the next try. */
static void hold_rest(struct engine *e, unsigned from, unsigned m)
{
	for (unsigned j = from; j < m; j++)
		e->held[e->nheld++] = e->bq[e->txmap[j]];
}

static void engine_tx(struct engine *e, uint64_t now)
{
	e->retry_ns = 0;
	e->defer++;
	for (int round = 0; round < TX_ROUNDS && e->usable; round++) {
		struct gso_sched_burst sb[GSO_ENGINE_MAX_BATCH];
		unsigned n, m = 0, taken;
		int err;

		if (e->nheld) {
			n = e->nheld;
			memcpy(e->bq, e->held, n * sizeof(*e->bq));
			e->nheld = 0;
		} else {
			int k = gso_sched__dequeue_batch(e->sched, now + e->slack_ns, sb, e->batch, NULL);

			n = k > 0 ? (unsigned)k : 0;
			for (unsigned i = 0; i < n; i++) {
				e->bq[i].b = sb[i];
				e->bq[i].f = e->flows[sb[i].cookie];
			}
		}
		if (!n)
			break;
		/*
		 * A flow stays armed while its burst is dequeued or held: it is
		 * armed again only from its sent or refused hook.
		 */
		for (unsigned i = 0; i < n; i++) {
			struct ebatch *q = &e->bq[i];

			if (!q->f->ops->build(q->f, &q->b, &e->txq[m], now))
				e->txmap[m++] = i;
			else
				q->f->armed = false;
		}
		taken = submit_txq(e, m, &err);
		for (unsigned j = 0; j < taken; j++) {
			struct ebatch *q = &e->bq[e->txmap[j]];

			if (now > q->b.departure_ns && now - q->b.departure_ns > e->st.late_ns_max)
				e->st.late_ns_max = now - q->b.departure_ns;
			q->f->armed = false;
			q->f->grid_ns = q->b.departure_ns;
			e->st.supers++;
			behind_check(e, q->f, now);
			q->f->ops->sent(q->f, &q->b, &e->txq[j], now);
		}
		if (taken == m)
			continue;
		if (err == -EAGAIN || err == -ENOBUFS) {
			e->st.backpressure++;
			hold_rest(e, taken, m);
			e->retry_ns = now + RETRY_NS;
			break;
		}
		if (err == -ENETDOWN) {
			hold_rest(e, taken, m);
			dev_said_down(e, now);
			break;
		}
		if (err == -ENODEV || err == -ESHUTDOWN) {
			engine_gone(e);
			break;
		}
		/* This request can never be sent: its flow hears why; the rest go on. */
		{
			struct ebatch *q = &e->bq[e->txmap[taken]];

			q->f->armed = false;
			q->f->ops->refused(q->f, &q->b, err, now);
		}
		hold_rest(e, taken + 1, m);
	}
	e->defer--;
	flush_events(e);
}

/* ---- receiving ------------------------------------------------------------------ */

/*
 * Receive what the devices hold.  Every frame after the first is stamped
 * with the clock read when its turn comes (a vDSO read, small beside an
 * ACK's processing): a pass can spend milliseconds on ACKs at high rate
 * (more with GSO_STREAM_F_CHECK), and an ACK stamped with the pass's
 * start time gives an RTT sample that much short (seen through a 20 ms
 * relay: samples of 14 ms).  *now advances with it, so that what follows
 * in the pass never sees a time before an ACK's.
 */
static void engine_rx(struct engine *e, uint64_t *now)
{
	struct gso_rx_pkt pk[RX_BATCH];
	bool gone = false, first = true;

	e->defer++;
	for (unsigned i = 0; i < e->nrx && !gone; i++) {
		for (int round = 0; round < RX_ROUNDS; round++) {
			int n = gso_dev__recv(e->rx[i], pk, RX_BATCH);

			if (n == -ENODEV) {
				gone = true;
				break;
			}
			if (n <= 0)
				break;
			e->st.rx_frames += (uint64_t)n;
			for (int k = 0; k < n; k++) {
				if (!first) {
					uint64_t t = engine_now(e);

					if (t > *now)
						*now = t;
				}
				first = false;
				if (e->dlisteners && gsoi_dgram_rx(e, e->rx[i], pk[k].data, pk[k].len, *now))
					continue;
				gsoi_engine_stream_input(e, e->rx[i], pk[k].data, pk[k].len, *now);
			}
			gso_dev__rx_release(e->rx[i], pk, (unsigned)n);
			if (n < RX_BATCH)
				break;
		}
	}
	if (e->dlisteners)
		gsoi_dgram_rx_end(e);
	e->defer--;
	flush_events(e);
	if (e->port)
		e->port->rx_done(e->port_ctx);
	if (gone)
		engine_gone(e);
}

void gsoi_engine_input_frame(struct engine *e, struct gso_dev *rx, const uint8_t *frame, uint32_t len)
{
	if (e->dead)
		return;
	e->defer++;
	if (!e->dlisteners || !gsoi_dgram_rx(e, rx, frame, len, engine_now(e)))
		gsoi_engine_stream_input(e, rx, frame, len, engine_now(e));
	if (e->dlisteners)
		gsoi_dgram_rx_end(e);
	e->defer--;
	flush_events(e);
}

/* ---- one pass ------------------------------------------------------------------- */

static void drain_wake(struct engine *e)
{
	uint64_t v;

	if (!atomic_exchange(&e->wake_pending, false))
		return;
	if (e->wake_fd >= 0 && read(e->wake_fd, &v, sizeof(v)) < 0) {
		/* Nothing to read: another pass took it. */
	}
	gsoi_engine_emit(e, &(struct gso_engine_event){ .type = GSO_EV_WAKE });
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static int engine_pass(struct engine *e, uint64_t *next_ns)
{
	uint64_t now, next = GSO_EVLOOP_FOREVER, key;
	uint32_t slot;

	e->st.polls++;
	drain_wake(e);
	/*
	 * Read after the wake callback: what it did (a multi-queue port feeds
	 * streams frames there) is stamped with the clock of its own, and the
	 * timers below must not see a time before it (last_heard > now).
	 */
	now = engine_now(e);
	if (e->mon.fd >= 0 && !e->dead && (e->mon_ready || now - e->mon_read_ns >= MON_POLL_NS))
		read_monitor(e, now);
	if (!e->dead)
		engine_rx(e, &now);
	if (e->icmp.fd4 >= 0 && !e->dead && (e->icmp_ready || now - e->icmp_read_ns >= MON_POLL_NS)) {
		gsoi_engine_read_icmp(e, now);
		flush_events(e);
	}
	/* Expired flow timers; each sets its next one. */
	for (int k = 0; k < 1024 && !e->dead; k++) {
		slot = gsoi_etimers_top(&e->timers, &key);
		if (slot == NIL32 || key > now)
			break;
		gsoi_etimers_set(&e->timers, slot, UINT64_MAX);
		e->defer++;
		e->flows[slot]->ops->timers(e->flows[slot], now);
		e->defer--;
		flush_events(e);
	}
	if (!e->dead && e->dev_down && now >= e->link_retry_ns)
		try_kick(e, now);
	if (!e->dead && e->usable && (!e->retry_ns || now >= e->retry_ns))
		engine_tx(e, now);
	if (!e->dead && gsoi_engine_look(e, now) == -ENODEV)
		engine_gone(e);
	if (e->dead) {
		if (next_ns)
			*next_ns = GSO_EVLOOP_FOREVER;
		return -ENODEV;
	}

	if (e->usable) {
		if (e->nheld || e->retry_ns) {
			next = e->retry_ns ? e->retry_ns : now;
		} else {
			uint64_t t = gso_sched__next_time(e->sched);

			if (t != UINT64_MAX)
				next = t > e->slack_ns ? t - e->slack_ns : 0;
		}
	}
	gsoi_etimers_top(&e->timers, &key);
	next = min64(next, key);
	if (e->dev_down)
		next = min64(next, e->link_retry_ns);
	if (next_ns)
		*next_ns = next;
	return 0;
}

/*
 * The calling thread runs the engine from now on (engine.h, "Threads"):
 * 0 and *prev (what engine_leave() restores), or -EPERM when another
 * thread runs it.
 */
static int engine_enter(struct engine *e, uintptr_t *prev)
{
	uintptr_t self = engine_self(), o = atomic_load_explicit(&e->owner, memory_order_relaxed);

	if (o == self) {
		*prev = o;
		return 0;
	}
	*prev = 0;
	if (o || !atomic_compare_exchange_strong(&e->owner, &o, self))
		return -EPERM;
	return 0;
}

static void engine_leave(struct engine *e, uintptr_t prev)
{
	if (!prev)
		atomic_store(&e->owner, 0);
}

int gso_engine__poll(struct gso_engine *h, uint64_t *next_ns)
{
	struct engine *e = gsoi_engine_of(h);
	uintptr_t prev;
	int r;

	if (h && !e)
		return -EBADF;
	if (!e)
		return -EINVAL;
	r = engine_enter(e, &prev);
	if (r)
		return r;
	r = engine_pass(e, next_ns);
	engine_leave(e, prev);
	return r;
}

/* gso_engine__run() on the thread that runs the engine. */
static int engine_run(struct engine *e, uint64_t until_ns)
{
	struct gso_evloop_event ev[ENGINE_MAX_RX + 2];

	for (;;) {
		uint64_t next, now;
		int r, n;

		if (atomic_exchange(&e->stop, false))
			return 0;
		r = engine_pass(e, &next);
		if (r)
			return r;
		now = gso_evloop_now_ns();
		if (now >= until_ns)
			return 0;
		if (next <= now || atomic_load_explicit(&e->stop, memory_order_relaxed))
			continue;
		e->st.waits++;
		n = gso_evloop__wait_until(e->loop, min64(next, until_ns), ev, sizeof(ev) / sizeof(ev[0]));
		for (int i = 0; i < n; i++) {
			if (ev[i].cookie == COOKIE_MON)
				e->mon_ready = true;
			else if (ev[i].cookie == COOKIE_ICMP)
				e->icmp_ready = true;
			else if (ev[i].cookie == COOKIE_WAKE)
				atomic_store(&e->wake_pending, true);
		}
	}
}

int gso_engine__run(struct gso_engine *h, uint64_t until_ns)
{
	struct engine *e = gsoi_engine_of(h);
	uintptr_t prev;
	int r;

	if (h && !e)
		return -EBADF;
	if (!e || e->clock)
		return -EINVAL;
	r = engine_enter(e, &prev);
	if (r)
		return r;
	r = engine_run(e, until_ns);
	engine_leave(e, prev);
	return r;
}

static bool drained(const struct engine *e)
{
	return !e->queued && !e->nheld && gso_dev__inflight(e->tx) <= 0;
}

int gso_engine__drain(struct gso_engine *h, uint64_t until_ns)
{
	struct engine *e = gsoi_engine_of(h);
	uintptr_t prev;
	int r = 0;

	if (h && !e)
		return -EBADF;
	if (!e || e->clock)
		return -EINVAL;
	r = engine_enter(e, &prev);
	if (r)
		return r;
	while (!r && !drained(e)) {
		uint64_t now = gso_evloop_now_ns(), slice;

		if (e->dead) {
			r = -ENODEV;
			break;
		}
		if (now >= until_ns) {
			r = -ETIMEDOUT;
			break;
		}
		/* Completions come without an event to wake for: look again every 100 us. */
		slice = until_ns - now < 100000 ? until_ns - now : 100000;
		r = engine_run(e, now + slice);
		if (!r)
			gso_dev__reap(e->tx, 0);
	}
	engine_leave(e, prev);
	return r;
}

static void *thread_main(void *arg)
{
	struct engine *e = arg;

	/* The engine is this thread's until gso_engine__stop() has joined it. */
	atomic_store(&e->owner, engine_self());
	/* Returns when stopped (run() takes the stop request) or when the device is gone. */
	engine_run(e, GSO_EVLOOP_FOREVER);
	return NULL;
}

int gso_engine__start(struct gso_engine *h, int cpu)
{
	struct engine *e = gsoi_engine_of(h);
	pthread_attr_t attr;
	int err;

	if (h && !e)
		return -EBADF;
	if (!e || e->clock)
		return -EINVAL;
	if (e->threaded)
		return -EALREADY;
	err = engine_thread_ok(e);
	if (err)
		return err;
	atomic_store(&e->stop, false);
	pthread_attr_init(&attr);
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	/* Calls from other threads are refused from now on; the new thread takes the engine over. */
	atomic_store(&e->owner, ENGINE_OWNER_STARTING);
	err = pthread_create(&e->thread, &attr, thread_main, e);
	pthread_attr_destroy(&attr);
	if (err) {
		atomic_store(&e->owner, 0);
		return -err;
	}
	e->threaded = true;
	return 0;
}

/* Wake the loop's sleep (async-signal-safe: one write). */
static void poke(struct engine *e)
{
	uint64_t one = 1;

	if (e->wake_fd >= 0 && write(e->wake_fd, &one, sizeof(one)) < 0) {
		/* The counter is full: a wake-up is pending anyway. */
	}
}

int gso_engine__wake(struct gso_engine *h)
{
	struct engine *e = gsoi_engine_of(h);

	if (h && !e)
		return -EBADF;
	if (!e)
		return -EINVAL;
	atomic_store(&e->wake_pending, true);
	poke(e);
	return 0;
}

static void engine_stop(struct engine *e)
{
	atomic_store(&e->stop, true);
	/*
	 * From the thread that runs the engine (its event callback: an
	 * application lowering its deadline) the loop sees the flag before it
	 * waits again: no eventfd write and read, no GSO_EV_WAKE.
	 */
	if (atomic_load_explicit(&e->owner, memory_order_relaxed) != engine_self())
		poke(e);
	if (e->threaded && !pthread_equal(pthread_self(), e->thread)) {
		pthread_join(e->thread, NULL);
		e->threaded = false;
		atomic_store(&e->stop, false);
		atomic_store(&e->owner, 0);
	}
}

int gso_engine__stop(struct gso_engine *h)
{
	struct engine *e = gsoi_engine_of(h);

	if (h && !e)
		return -EBADF;
	if (!e)
		return -EINVAL;
	engine_stop(e);
	return 0;
}

int gso_engine__stats(const struct gso_engine *h, struct gso_engine_stats *st)
{
	struct engine *e = gsoi_engine_of(h);
	struct gso_engine_stats full;

	if (h && !e)
		return -EBADF;
	if (!e || !GSO_OUT_VALID(st))
		return -EINVAL;
	if (engine_thread_ok(e))
		return -EPERM;
	full = e->st;
	full.flows = e->max_flows - e->nfree;
	full.queued = e->queued;
	full.link_usable = e->usable;
	full.dead = e->dead;
	full.link_mtu = e->link_mtu;
	GSO_OUT_PUT(st, full);
	return 0;
}

/* ---- creation ------------------------------------------------------------------- */

static int read_opts(struct engine *e, const struct gso_engine_opts *o)
{
	uint64_t q;

	if (!GSO_OPTS_VALID(gso_engine_opts, o))
		return -EINVAL;
	e->max_flows = GSO_OPTS_GET(o, max_flows, 0u) ?: GSO_ENGINE_DEF_MAX_FLOWS;
	e->flow_queue = GSO_OPTS_GET(o, flow_queue, 0u) ?: GSO_ENGINE_DEF_FLOW_QUEUE;
	e->batch = GSO_OPTS_GET(o, batch, 0u) ?: GSO_ENGINE_DEF_BATCH;
	e->slack_ns = GSO_OPTS_GET(o, slack_ns, 0u) ?: GSO_ENGINE_DEF_SLACK_NS;
	e->catchup_ns = GSO_OPTS_GET(o, catchup_ns, 0u) ?: GSO_ENGINE_DEF_CATCHUP_NS;
	e->flags = GSO_OPTS_GET(o, flags, 0u);
	e->on_event = GSO_OPTS_GET(o, on_event, (gso_engine_event_fn)NULL);
	e->ctx = GSO_OPTS_GET(o, ctx, (void *)NULL);
	e->clock = GSO_OPTS_GET(o, clock, (gso_engine_clock_fn)NULL);
	e->clock_ctx = GSO_OPTS_GET(o, clock_ctx, (void *)NULL);
	e->steer = GSO_OPTS_GET(o, steer, (struct gso_steer *)NULL);
	if (e->max_flows > GSO_ENGINE_MAX_FLOWS || e->flow_queue > (1u << 16) ||
	    e->batch > GSO_ENGINE_MAX_BATCH || (e->flags & ~GSO_ENGINE_F_KNOWN))
		return -EINVAL;
	q = GSO_OPTS_GET(o, max_queued, 0u);
	if (!q)
		q = (uint64_t)e->flow_queue * e->max_flows;
	if (q > (1u << 22))
		q = 1u << 22;
	e->max_queued = (uint32_t)q;
	return 0;
}

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static void engine_free(struct engine *e)
{
	gsoi_engine_tcp_free(e);
	if (e->loop)
		gso_evloop__destroy(e->loop);
	if (e->wake_fd >= 0)
		close(e->wake_fd);
	gsoi_rtmon_close(&e->mon);
	gsoi_icmp_sock_close(&e->icmp);
	gso_sched__destroy(e->sched);
	gsoi_etimers_fini(&e->timers);
	free(e->flows);
	free(e->free_slots);
	free(e->hash);
	free(e->held);
	free(e->bq);
	free(e->txq);
	free(e->txmap);
	free(e->evq);
	free(e);
}

int gso_engine__create(struct gso_engine **out, struct gso_dev *dev, const struct gso_engine_opts *o)
{
	struct engine *e;
	uint32_t flags;
	int err;

	if (!out || !dev)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->wake_fd = -1;
	e->mon.fd = -1;
	e->icmp.fd4 = e->icmp.fd6 = -1;
	err = read_opts(e, o);
	if (err)
		goto fail;
	e->tx = dev;
	refresh_caps(e);
	aggr_reset(e);
	if (!e->caps.mtu) {
		err = -ESHUTDOWN;
		goto fail;
	}
	e->link_mtu = e->caps.mtu;
	{
		/*
		 * One burst per flow; no horizon: a flow's queue is its own and
		 * bounded, and a slow flow's next departure may lie far ahead.
		 * A quantum of a whole super-segment: with one burst per flow a
		 * smaller one buys no fairness, only rounds of credit top-ups
		 * (DRR is O(1) per burst when the quantum covers the largest;
		 * 2 frames cost 22 rounds, ~1,300 instructions, per 64 KiB burst).
		 */
		GSO_OPTS(gso_sched_opts, so, .max_flows = e->max_flows, .max_bursts = e->max_flows,
			 .mtu = e->caps.max_frame, .quantum = GSO_OPTS_GET(o, quantum, 0u) ?: GSO_ENGINE_DEF_QUANTUM,
			 .max_rate = GSO_OPTS_GET(o, max_rate, (uint64_t)0), .horizon_ns = 1ull << 62);
		err = gso_sched__create(&e->sched, &so);
		if (err)
			goto fail;
	}
	e->flows = calloc(e->max_flows, sizeof(*e->flows));
	e->free_slots = calloc(e->max_flows, sizeof(*e->free_slots));
	e->hash_mask = pow2_at_least(e->max_flows < 65536 ? e->max_flows : 65536) - 1;
	e->hash = calloc(e->hash_mask + 1, sizeof(*e->hash));
	e->held = calloc(e->batch, sizeof(*e->held));
	e->bq = calloc(e->batch, sizeof(*e->bq));
	e->txq = calloc(e->batch, sizeof(*e->txq));
	e->txmap = calloc(e->batch, sizeof(*e->txmap));
	/* What one pass defers at most: TX_ROUNDS batches of sends, a few events per frame received. */
	e->evq_cap = TX_ROUNDS * e->batch * 2 + RX_BATCH * RX_ROUNDS * 3 + 64;
	e->evq = calloc(e->evq_cap, sizeof(*e->evq));
	if (!e->flows || !e->free_slots || !e->hash || !e->held || !e->bq || !e->txq || !e->txmap || !e->evq) {
		err = -ENOMEM;
		goto fail;
	}
	err = gsoi_etimers_init(&e->timers, e->max_flows);
	if (err)
		goto fail;
	/* Slots are handed out from the top of the stack: 0 first. */
	for (uint32_t i = 0; i < e->max_flows; i++)
		e->free_slots[i] = e->max_flows - 1 - i;
	e->nfree = e->max_flows;
	{
		GSO_OPTS(gso_evloop_opts, lo, .flags = (e->flags & GSO_ENGINE_F_NO_SPIN) ? GSO_EVLOOP_F_NO_SPIN : 0,
			 .max_fds = ENGINE_MAX_RX + 6);
		err = gso_evloop__create(&e->loop, &lo);
		if (err)
			goto fail;
	}
	e->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (e->wake_fd < 0) {
		err = -errno;
		goto fail;
	}
	err = gso_evloop__add_fd(e->loop, e->wake_fd, POLLIN, COOKIE_WAKE);
	if (err)
		goto fail;
	e->tx_is_tso = is_tso(dev);
	err = gso_dev__ifindex(dev);
	e->ifindex = err > 0 ? err : 0;
	e->flags_usable = true;
	if (e->ifindex && !(e->flags & GSO_ENGINE_F_NO_LINK_MONITOR)) {
		err = gsoi_rtmon_open(&e->mon, RTMON_LINK | RTMON_NEIGH | RTMON_ROUTE);
		if (!err)
			err = gso_evloop__add_fd(e->loop, e->mon.fd, POLLIN, COOKIE_MON);
		if (err)
			goto fail;
		/* Subscribed first, asked second: no change falls in between. */
		if (!gsoi_rtnl_link_flags(e->ifindex, &flags)) {
			e->mon_flags = flags;
			e->flags_usable = gsoi_rtnl_link_usable(flags);
		}
		/*
		 * The path-MTU errors that come in on a queue without an AF_XDP
		 * socket reach the kernel only.  Best effort: without CAP_NET_RAW
		 * the engine hears the steered ones alone.
		 */
		if (!gsoi_icmp_sock_open(&e->icmp, e->ifindex) &&
		    (gso_evloop__add_fd(e->loop, e->icmp.fd4, POLLIN, COOKIE_ICMP) ||
		     gso_evloop__add_fd(e->loop, e->icmp.fd6, POLLIN, COOKIE_ICMP)))
			gsoi_engine_icmp_sock_off(e);
	}
	if (receives(dev)) {
		err = watch_rx(e, dev, 0);
		if (!err)
			err = steer_dev(e, dev);
		if (err)
			goto fail;
		e->rx[e->nrx++] = dev;
	}
	e->usable = e->flags_usable;
	if (!e->usable)
		e->st.link_down++;
	e->down_since_ns = engine_now(e);
	e->handle = gsoi_handle_new(e, HANDLE_ENGINE);
	if (!e->handle) {
		err = -ENOMEM;
		goto fail;
	}
	*out = (struct gso_engine *)e->handle;
	return 0;
fail:
	engine_free(e);
	return err;
}

int gso_engine__open(struct gso_engine **out, int ifindex, uint32_t queue_id, const struct gso_xsk_opts *xsk,
		     const struct gso_engine_opts *opts)
{
	GSO_OPTS(gso_xsk_opts, xo, .rx_size = DEF_RX_SIZE, .rx_chunks = DEF_RX_CHUNKS);
	struct engine chk;
	uint32_t rxq, txq;
	struct gso_dev *dev;
	int err;

	if (!out || ifindex <= 0 || (xsk && !GSO_OPTS_VALID(gso_xsk_opts, xsk)))
		return -EINVAL;
	/* Bad options are -EINVAL at once, not after a bind that waits for a busy queue. */
	err = read_opts(&chk, opts);
	if (err)
		return err;
	err = gsoi_link_queues(ifindex, &rxq, &txq);
	if (err)
		return err;
	/* AF_XDP binds a queue that exists both ways (xsk_bind: real_num_rx/tx_queues). */
	if ((rxq && queue_id >= rxq) || (txq && queue_id >= txq))
		return -ENXIO;
	if (xsk) {
		memset(&xo, 0, sizeof(xo));
		memcpy(&xo, xsk, xsk->sz < sizeof(xo) ? xsk->sz : sizeof(xo));
		xo.sz = sizeof(xo);
	}
	xo.queue_id = queue_id;
	err = gso_xsk__create(&dev, ifindex, &xo);
	if (err)
		return err;
	err = gso_engine__create(out, dev, opts);
	if (err)
		gso_dev__destroy(dev);
	return err;
}

int gso_engine__evloop_stats(const struct gso_engine *h, struct gso_evloop_stats *st)
{
	struct engine *e = gsoi_engine_of(h);

	if (h && !e)
		return -EBADF;
	if (!e)
		return -EINVAL;
	if (engine_thread_ok(e))
		return -EPERM;
	return gso_evloop__stats(e->loop, st);
}

int gso_engine__close(struct gso_engine *h)
{
	struct engine *e = gsoi_engine_of(h);

	if (h && !e)
		return -EBADF;
	if (!e)
		return -EINVAL;
	/* Not from inside a pass of its own (an event callback): the pass would go on over closed devices. */
	if (atomic_load(&e->owner) == engine_self())
		return -EDEADLK;
	if (e->threaded)
		engine_stop(e);
	if (engine_thread_ok(e))
		return -EPERM;
	gsoi_engine_end_all(e, -ECANCELED);
	e->usable = false;
	e->nheld = 0;
	gso_dev__close(e->tx);
	for (unsigned i = 0; i < e->nrx; i++)
		gso_dev__close(e->rx[i]);
	for (unsigned i = 0; i < e->nretired; i++)
		gso_dev__close(e->retired[i]);
	/* Nothing may run any more: the devices are closed. */
	e->dead = true;
	return 0;
}

void gso_engine__destroy(struct gso_engine *h)
{
	struct engine *e = gsoi_engine_of(h);

	/* NULL, or destroyed already (its handle is stale): nothing to do. */
	if (!e)
		return;
	/* Stale from now on: callbacks of the flows ending below cannot reach the engine any more. */
	gsoi_handle_free(e->handle);
	e->handle = 0;
	if (e->threaded)
		engine_stop(e);
	gsoi_engine_end_all(e, -ECANCELED);
	for (uint32_t i = 0; i < e->max_flows; i++) {
		struct eflow *f = e->flows[i];

		if (f) {
			gsoi_engine_flow_del(e, f);
			f->ops->free(f);
		}
	}
	for (unsigned i = 0; i < e->nrx; i++) {
		unsteer_dev(e, e->rx[i]);
		if (e->rx[i] != e->tx)
			gso_dev__destroy(e->rx[i]);
	}
	for (unsigned i = 0; i < e->nretired; i++)
		gso_dev__destroy(e->retired[i]);
	gso_dev__destroy(e->tx);
	if (e->own_steer)
		gso_steer__destroy(e->steer);
	engine_free(e);
}
