/*
 * Datagram flows (engine.h): a ring of super-segments of caller memory
 * per flow, the head of which is in the engine's scheduler.  The engine
 * owns what a UDP_SEGMENT user of the kernel never sees: the IP ID
 * (advanced by the datagrams of every super-segment), the lengths and
 * checksums (the segmenter's), the pacing, and the device's limits,
 * which are checked at send so that nothing is refused later.
 */
#include "engine_internal.h"
#include "icmp_err_internal.h"
#include "opts_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gso/seg.h>

struct dsend {
	const void *p;
	uint32_t len, gso_size;
	uint64_t cookie;
	uint64_t at;          /* departure time (gso_dgram__send_at), 0: paced at the flow's rate */
};

/* Datagrams of a send: derived from its length each time, never stored beside it. */
static uint32_t dsend_segs(const struct dsend *r)
{
	return r->len ? r->len / r->gso_size + (r->len % r->gso_size != 0) : 1;
}

/* The API's struct gso_dgram * is the flow's handle (handle_internal.h), not this. */
struct dgram {
	struct eflow f;       /* first: engine.c sees flows through it */
	struct gso_tmpl tmpl;
	uint16_t ip_id;       /* of the next datagram */
	uint32_t tx_flags;
	uint64_t rate;        /* 0 = unpaced */
	uint32_t hdr_len;     /* wire header bytes per datagram */
	uint32_t max_gso, max_segs, max_len;
	uint32_t qcap, qhead, qlen;
	struct dsend *q;
	uint64_t sent_supers, sent_frames, sent_bytes, dropped;
	uint64_t timed_sends, timed_late_sum, timed_late_max;
	bool icmp_steered;    /* the steering program has its ICMP-only entry (icmp_steer) */
};

static struct dgram *to_d(struct eflow *f)
{
	return (struct dgram *)f;
}

static struct dsend *head(struct dgram *d)
{
	return &d->q[d->qhead];
}

static void pop(struct dgram *d)
{
	d->qhead = d->qhead + 1 == d->qcap ? 0 : d->qhead + 1;
	d->qlen--;
	d->f.e->queued--;
}

static void arm_head(struct dgram *d, uint64_t now, bool chained)
{
	struct dsend *r;

	if (!d->qlen || d->f.armed || d->f.e->dead)
		return;
	r = head(d);
	/* With no burst slot or horizon limit in the engine's scheduler this cannot fail. */
	if (r->at)
		gsoi_engine_arm_at(d->f.e, &d->f, r->len + dsend_segs(r) * d->hdr_len, dsend_segs(r), r->at, now);
	else
		gsoi_engine_arm(d->f.e, &d->f, d->rate, r->len + dsend_segs(r) * d->hdr_len, dsend_segs(r), now,
				chained);
}

static void emit(struct dgram *d, uint32_t type, int err, uint64_t cookie, uint64_t time_ns)
{
	gsoi_engine_emit(d->f.e, &(struct gso_engine_event){ .type = type, .err = err, .flow_ctx = d->f.ctx,
						       .dgram = (struct gso_dgram *)d->f.handle, .cookie = cookie,
						       .time_ns = time_ns });
}

/* Every queued super-segment goes back to the caller unsent. */
static void drop_all(struct dgram *d, int err)
{
	while (d->qlen) {
		uint64_t cookie = head(d)->cookie;

		pop(d);
		d->dropped++;
		emit(d, GSO_EV_DGRAM_DROPPED, err, cookie, 0);
	}
}

/* ---- hooks ---------------------------------------------------------------------- */

static int d_build(struct eflow *f, const struct gso_sched_burst *b, struct gso_tx *tx, uint64_t now)
{
	struct dgram *d = to_d(f);
	struct dsend *r;

	(void)b;
	(void)now;
	if (!d->qlen)
		return -ENODATA;
	r = head(d);
	if (d->tmpl.l3 == GSO_L3_IPV4)
		gso_tmpl__set_ip_id(&d->tmpl, d->ip_id);
	*tx = (struct gso_tx){ .tmpl = &d->tmpl, .data = r->p, .len = r->len, .mss = r->gso_size,
			       .ipid = GSO_IPID_INC, .flags = (uint8_t)d->tx_flags };
	return 0;
}

static void d_sent(struct eflow *f, const struct gso_sched_burst *b, const struct gso_tx *tx, uint64_t now)
{
	struct dgram *d = to_d(f);
	struct dsend *r = head(d);
	uint64_t cookie = r->cookie;
	uint32_t nseg = dsend_segs(r);

	(void)b;
	(void)tx;
	d->ip_id = (uint16_t)(d->ip_id + nseg);
	if (r->at) {
		uint64_t late = now > r->at ? now - r->at : 0;

		d->timed_sends++;
		d->timed_late_sum += late;
		if (late > d->timed_late_max)
			d->timed_late_max = late;
	}
	d->sent_supers++;
	d->sent_frames += nseg;
	d->sent_bytes += r->len;
	f->e->st.frames += nseg;
	pop(d);
	arm_head(d, now, true);
	emit(d, GSO_EV_DGRAM_SENT, 0, cookie, now);
}

static void d_refused(struct eflow *f, const struct gso_sched_burst *b, int err, uint64_t now)
{
	struct dgram *d = to_d(f);
	uint64_t cookie = head(d)->cookie;

	(void)b;
	pop(d);
	d->dropped++;
	arm_head(d, now, false);
	emit(d, GSO_EV_DGRAM_DROPPED, err, cookie, 0);
}

static void d_ended(struct eflow *f, int err)
{
	drop_all(to_d(f), err);
}

static void d_neigh(struct eflow *f)
{
	struct dgram *d = to_d(f);

	/* The Ethernet destination leads every template. */
	memcpy(d->tmpl.hdr, f->route.dst_mac, 6);
}

static int limits(struct dgram *d, struct engine *e);

/* The path MTU moved: datagrams of the new size from the next send on (engine.h, "Path MTU"). */
static void d_mtu(struct eflow *f, uint32_t src, uint64_t now)
{
	struct dgram *d = to_d(f);

	(void)now;
	limits(d, f->e);
	gsoi_engine_emit(f->e, &(struct gso_engine_event){ .type = GSO_EV_PATH_MTU, .flow_ctx = f->ctx,
							 .dgram = (struct gso_dgram *)f->handle, .mtu = f->pmtu,
							 .mtu_src = src });
}

int gsoi_dgram_icmp_flow(struct engine *e, const struct icmp_err *ie, struct eflow **out)
{
	/* A scan: ICMP errors are rare, and only those quoting a steered tuple get here. */
	for (uint32_t i = 0; i < e->max_flows; i++) {
		struct eflow *f = e->flows[i];
		GSO_OPTS(gso_flow, r);

		/* The flow of its replies is the tuple the error quotes, turned round. */
		if (!f || f->ops != &gsoi_engine_dgram_ops || gso_flow__reply_of(&r, &to_d(f)->tmpl))
			continue;
		if (r.l3 == ie->l3 && r.vlan == ie->vlan && r.dport == ie->lport && r.sport == ie->rport &&
		    !memcmp(r.daddr, ie->local, 16) && !memcmp(r.saddr, ie->remote, 16)) {
			*out = f;
			return 1;
		}
	}
	return 0;
}

/*
 * The steering program's entry for the ICMP errors about this flow's
 * packets alone (steer.h, GSO_FLOW_F_ICMP_ONLY), so that it follows the
 * path MTU while whatever answers it still reaches whoever receives it.
 * Best effort: with no room (or the tuple another flow's), the flow
 * follows the interface's MTU only.
 */
static void icmp_steer(struct dgram *d, bool add)
{
	struct gso_steer *st = d->f.e->steer;
	GSO_OPTS(gso_flow, fl);

	if (!st || add == d->icmp_steered || gso_flow__reply_of(&fl, &d->tmpl))
		return;
	fl.flags = GSO_FLOW_F_ICMP_ONLY;
	if (add)
		d->icmp_steered = !gso_steer__flow_add(st, &fl);
	else if (!gso_steer__flow_del(st, &fl))
		d->icmp_steered = false;
}

static void d_free(struct eflow *f)
{
	struct dgram *d = to_d(f);

	if (d->f.e)
		icmp_steer(d, false);
	free(d->q);
	free(d);
}

const struct eflow_ops gsoi_engine_dgram_ops = {
	.build = d_build,
	.sent = d_sent,
	.refused = d_refused,
	.ended = d_ended,
	.neigh = d_neigh,
	.mtu = d_mtu,
	.free = d_free,
};

/* ---- the API ---------------------------------------------------------------------- */

/*
 * The flow of handle `h` for a call on it: 0 and *out, -EINVAL (NULL),
 * -EBADF (closed, or its engine destroyed), -EPERM (another thread runs
 * its engine).
 */
static inline __attribute__((always_inline)) int get(const struct gso_dgram *h, struct dgram **out)
{
	struct eflow *f = NULL;
	int err = gsoi_flow_get((uintptr_t)h, HANDLE_DGRAM, &f);

	if (f)
		*out = to_d(f);
	return err;
}

/* What the device takes with this template (engine.h, gso_dgram_info). */
static int limits(struct dgram *d, struct engine *e)
{
	/* The payload is ordinary memory: it is copied into whole frames, whatever the device can reference. */
	int mp = gso_dev__max_payload(e->tx, &d->tmpl, d->tx_flags | GSO_TX_F_COPY);
	uint32_t ip_hdrs = (uint32_t)(d->tmpl.hdr_len - d->tmpl.l3_off);

	if (mp < 0)
		return mp;
	d->max_gso = (uint32_t)mp;
	/* And what the path carries: one datagram's IP and UDP headers and payload within its MTU. */
	if (d->f.pmtu && d->f.pmtu < ip_hdrs + d->max_gso)
		d->max_gso = d->f.pmtu > ip_hdrs ? d->f.pmtu - ip_hdrs : 0;
	d->max_segs = e->caps.max_segs_udp ? e->caps.max_segs_udp : GSO_UDP_MAX_SEGS;
	if (d->max_segs > GSO_UDP_MAX_SEGS)
		d->max_segs = GSO_UDP_MAX_SEGS;
	d->max_len = GSO_MAX_IP_LEN - (uint32_t)(d->tmpl.hdr_len - d->tmpl.l3_off);
	return 0;
}

int gso_dgram__open(struct gso_dgram **out, struct gso_engine *h, const struct gso_dgram_opts *o)
{
	struct engine *e = gsoi_engine_of(h);
	const struct gso_tmpl *t;
	const struct gso_route *rt;
	struct dgram *d;
	uint32_t qlen, flags;
	int err;

	if (!h || !o || !out || !GSO_OPTS_VALID(gso_dgram_opts, o))
		return -EINVAL;
	if (!e)
		return -EBADF;
	t = GSO_OPTS_GET(o, tmpl, (const struct gso_tmpl *)NULL);
	qlen = GSO_OPTS_GET(o, queue_len, 0u) ?: e->flow_queue;
	flags = GSO_OPTS_GET(o, tx_flags, 0u);
	rt = GSO_OPTS_GET(o, route, (const struct gso_route *)NULL);
	if (!t || t->l4 != GSO_L4_UDP || (t->l3 != GSO_L3_IPV4 && t->l3 != GSO_L3_IPV6) ||
	    t->hdr_len <= t->l3_off || qlen > (1u << 16) || (flags & ~(GSO_TX_F_SW_CSUM | GSO_TX_F_COPY)))
		return -EINVAL;
	if (rt && (rt->sz <= sizeof(size_t) || rt->l3 != t->l3))
		return -EINVAL;
	err = engine_thread_ok(e);
	if (err)
		return err;
	if (e->dead)
		return -ENODEV;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->q = calloc(qlen, sizeof(*d->q));
	if (!d->q) {
		free(d);
		return -ENOMEM;
	}
	d->qcap = qlen;
	d->tmpl = *t;
	d->tx_flags = flags;
	d->rate = GSO_OPTS_GET(o, rate, (uint64_t)0);
	d->hdr_len = t->hdr_len;
	d->ip_id = t->l3 == GSO_L3_IPV4 ? (uint16_t)(t->hdr[t->l3_off + 4] << 8 | t->hdr[t->l3_off + 5]) : 0;
	err = limits(d, e);
	if (!err)
		err = gsoi_engine_flow_add(e, &d->f, &gsoi_engine_dgram_ops, true, GSO_OPTS_GET(o, ctx, (void *)NULL),
					   HANDLE_DGRAM);
	if (err) {
		d_free(&d->f);
		return err;
	}
	if (rt) {
		d->f.follow = true;
		memcpy(&d->f.route, rt, rt->sz < sizeof(d->f.route) ? rt->sz : sizeof(d->f.route));
		d->f.route.sz = sizeof(d->f.route);
		/* Its route may carry an MTU of its own; it is a path's flow, so it hears the path's ICMP errors. */
		gsoi_flow_pmtu_init(e, &d->f);
		icmp_steer(d, true);
	}
	limits(d, e);
	*out = (struct gso_dgram *)d->f.handle;
	return 0;
}

int gso_dgram__send(struct gso_dgram *h, const void *payload, uint32_t len, uint32_t gso_size,
		    uint64_t cookie)
{
	return gso_dgram__send_at(h, payload, len, gso_size, cookie, 0);
}

int gso_dgram__send_at(struct gso_dgram *h, const void *payload, uint32_t len, uint32_t gso_size,
		       uint64_t cookie, uint64_t at_ns)
{
	struct dsend rec = { .p = payload, .len = len, .gso_size = gso_size, .cookie = cookie, .at = at_ns };
	struct engine *e;
	struct dgram *d;
	uint32_t tail;
	int err;

	if (!h || (len && !payload) || !gso_size || gso_size > 65535)
		return -EINVAL;
	err = get(h, &d);
	if (err)
		return err;
	e = d->f.e;
	if (e->dead)
		return -ENODEV;
	if (gso_size > d->max_gso || len > d->max_len)
		return -EMSGSIZE;
	if (dsend_segs(&rec) > d->max_segs)
		return -EMSGSIZE;
	/* A time from another clock (CLOCK_REALTIME's ns, say) would hold the flow for good: refused. */
	if (at_ns && at_ns > engine_now(e) + GSO_ENGINE_MAX_WAIT_NS)
		return -ERANGE;
	if (d->qlen == d->qcap || e->queued >= e->max_queued)
		return -EAGAIN;
	tail = d->qhead + d->qlen;
	if (tail >= d->qcap)
		tail -= d->qcap;
	d->q[tail] = rec;
	d->qlen++;
	e->queued++;
	/* Behind a head already in the scheduler it waits for that one to leave: no clock needed. */
	if (!d->f.armed)
		arm_head(d, engine_now(e), false);
	return 0;
}

int gso_dgram__set_rate(struct gso_dgram *h, uint64_t rate)
{
	struct dgram *d;
	int err = get(h, &d);

	if (err)
		return err;
	d->rate = rate;
	return 0;
}

int gso_dgram__close(struct gso_dgram *h)
{
	struct engine *e;
	struct dgram *d;
	int err = get(h, &d);

	if (err)
		return err;
	e = d->f.e;
	/* Sends it already made are told first, then what it drops, all before it goes. */
	gsoi_engine_flush_flow_events(e, &d->f);
	drop_all(d, -ECANCELED);
	gsoi_engine_flush_flow_events(e, &d->f);
	gsoi_engine_flow_del(e, &d->f);
	d_free(&d->f);
	return 0;
}

int gso_dgram__info(const struct gso_dgram *h, struct gso_dgram_info *info)
{
	struct gso_dgram_info full;
	struct dgram *d;
	int err;

	if (!h || !GSO_OUT_VALID(info))
		return -EINVAL;
	err = get(h, &d);
	if (err)
		return err;
	memset(&full, 0, sizeof(full));
	full.queued = d->qlen;
	full.queue_len = d->qcap;
	full.max_gso_size = d->max_gso;
	{
		struct gso_aggr_info ai = { .sz = sizeof(ai) };

		if (!gso_aggr__info(&d->f.e->aggr, &ai) && ai.aggregating)
			full.dev_aggr_interval_ns = ai.interval_ns;
	}
	full.max_segs = d->max_segs;
	full.max_len = d->max_len;
	full.rate = d->rate;
	full.sent_supers = d->sent_supers;
	full.sent_frames = d->sent_frames;
	full.sent_bytes = d->sent_bytes;
	full.dropped = d->dropped;
	full.behind = d->f.behind;
	full.behind_events = d->f.behind_events;
	full.lost_ns = d->f.lost_ns;
	full.timed_sends = d->timed_sends;
	full.timed_late_ns_sum = d->timed_late_sum;
	full.timed_late_ns_max = d->timed_late_max;
	full.path_mtu = d->f.pmtu;
	full.pmtu_changes = d->f.pmtu_changes;
	GSO_OUT_PUT(info, full);
	return 0;
}
