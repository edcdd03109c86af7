/*
 * quic_io.h over a libgso engine (--mode auto, software, csum, multibuf,
 * offload-vnet): gso_engine__open_path on the interface, a datagram
 * listener on the address and port (the steering program hands their
 * datagrams to the engine; the kernel never sees them), and a datagram
 * flow per (connection, path) opened from the path's last received
 * message (gso_dgram__open_reply).
 *
 * Datagrams that belong to no flow of the caller's (stateless resets,
 * version negotiation) go through a flow of their own, opened for the one
 * send and closed when it is sent; at most ONCE_MAX at a time, so that a
 * flood of garbage cannot take every flow slot of the engine.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gso/engine.h>
#include <gso/evloop.h>

#include "quic_io.h"

#define ONCE_MAX 64
#define ONCE_BIT (1ull << 63)  /* a cookie of ours, not the caller's */
#define ONCE_LEN 1500

_Static_assert(sizeof(struct gso_dgram_msg) <= sizeof(((struct qio_peer *)0)->be), "qio_peer.be too small");

struct qio_path {
	struct gso_dgram *d;
};

struct once {
	struct gso_dgram *d;   /* NULL: free */
	uint8_t buf[ONCE_LEN];
};

struct qio_g {
	struct qio base;
	struct gso_engine *e;
	struct gso_dgram_listener *l;
	bool dev_gone;
	struct gso_dgram_listener_info li;
	bool have_li;
	struct once once[ONCE_MAX];
	struct qio_report rep;
};

static struct qio_g *G(struct qio *q)
{
	return (struct qio_g *)q;
}

static int g_path_open(struct qio *q, const struct qio_peer *peer, struct qio_path **out)
{
	struct qio_g *g = G(q);
	GSO_OPTS(gso_dgram_opts, o, .queue_len = g->base.cfg.flow_queue);
	struct gso_dgram_msg m;
	struct qio_path *p;
	int err;

	if (!g->l)
		return -ESHUTDOWN;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	memcpy(&m, peer->be, sizeof(m));
	err = gso_dgram__open_reply(&p->d, g->l, &m, &o);
	if (err) {
		free(p);
		return err;
	}
	*out = p;
	return 0;
}

static void g_path_close(struct qio *q, struct qio_path *p)
{
	(void)q;
	gso_dgram__close(p->d); /* queued sends: DROPPED events now */
	free(p);
}

static int g_send(struct qio *q, struct qio_path *p, const void *buf, uint32_t len, uint32_t gso_size,
		  uint64_t at_ns, uint64_t cookie)
{
	struct qio_g *g = G(q);
	int err;

	if (cookie & ONCE_BIT)
		return -EINVAL;
	err = at_ns ? gso_dgram__send_at(p->d, buf, len, gso_size, cookie, at_ns)
		    : gso_dgram__send(p->d, buf, len, gso_size, cookie);
	g->rep.tx_calls++;
	if (err) {
		g->rep.tx_errors++;
		return err;
	}
	g->rep.tx_supers++;
	g->rep.tx_datagrams += gso_size ? (len + gso_size - 1) / gso_size : 1;
	g->rep.tx_bytes += len;
	return 0;
}

static int g_set_rate(struct qio *q, struct qio_path *p, uint64_t rate)
{
	(void)q;
	return gso_dgram__set_rate(p->d, rate);
}

static int g_send_once(struct qio *q, const struct qio_peer *peer, const void *buf, uint32_t len)
{
	struct qio_g *g = G(q);
	struct gso_dgram_msg m;
	struct once *o = NULL;
	int err;

	for (int i = 0; i < ONCE_MAX && !o; i++)
		if (!g->once[i].d)
			o = &g->once[i];
	if (!o || len > ONCE_LEN || !g->l) {
		g->rep.once_dropped++;
		return -EAGAIN;
	}
	memcpy(&m, peer->be, sizeof(m));
	err = gso_dgram__open_reply(&o->d, g->l, &m, NULL);
	if (err) {
		o->d = NULL;
		g->rep.once_dropped++;
		return err;
	}
	memcpy(o->buf, buf, len);
	err = gso_dgram__send(o->d, o->buf, len, len ? len : 1, ONCE_BIT | (uint64_t)(o - g->once));
	if (err) {
		gso_dgram__close(o->d);
		o->d = NULL;
		g->rep.once_dropped++;
		return err;
	}
	g->rep.once_sent++;
	return 0;
}

static void peer_of(const struct gso_dgram_msg *m, struct qio_peer *peer, struct sockaddr_storage *local,
		    socklen_t *local_len)
{
	memset(peer, 0, sizeof(*peer));
	memset(local, 0, sizeof(*local));
	if (m->l3 == GSO_L3_IPV6) {
		struct sockaddr_in6 *r = (struct sockaddr_in6 *)&peer->remote, *l = (struct sockaddr_in6 *)local;

		r->sin6_family = l->sin6_family = AF_INET6;
		r->sin6_port = htons(m->sport);
		l->sin6_port = htons(m->dport);
		memcpy(&r->sin6_addr, m->saddr, 16);
		memcpy(&l->sin6_addr, m->daddr, 16);
		peer->remote_len = *local_len = sizeof(*r);
	} else {
		struct sockaddr_in *r = (struct sockaddr_in *)&peer->remote, *l = (struct sockaddr_in *)local;

		r->sin_family = l->sin_family = AF_INET;
		r->sin_port = htons(m->sport);
		l->sin_port = htons(m->dport);
		memcpy(&r->sin_addr, m->saddr, 4);
		memcpy(&l->sin_addr, m->daddr, 4);
		peer->remote_len = *local_len = sizeof(*r);
	}
	/*
	 * Only what gso_dgram__open_reply reads (addresses, ports, MACs, VLAN):
	 * two datagrams of one path then keep equal records (the server opens
	 * the path's flow again only when they differ), and the copy keeps no
	 * pointer into the receive frame.
	 */
	{
		struct gso_dgram_msg c = { .sz = sizeof(c), .l3 = m->l3, .vlan = m->vlan, .sport = m->sport,
					   .dport = m->dport };

		memcpy(c.saddr, m->saddr, sizeof(c.saddr));
		memcpy(c.daddr, m->daddr, sizeof(c.daddr));
		memcpy(c.smac, m->smac, sizeof(c.smac));
		memcpy(c.dmac, m->dmac, sizeof(c.dmac));
		memcpy(peer->be, &c, sizeof(c));
	}
}

static void on_recv(void *ctx, struct gso_dgram_listener *l, const struct gso_dgram_msg *m)
{
	struct qio_g *g = ctx;
	struct sockaddr_storage local;
	struct qio_peer peer;
	struct qio_rx rx = { .data = m->data, .len = m->len, .ecn = m->tos & 3, .rx_ns = m->rx_ns, .peer = &peer,
			     .local = (struct sockaddr *)&local };

	(void)l;
	peer_of(m, &peer, &local, &rx.local_len);
	g->base.cfg.cb.on_recv(g->base.cfg.ctx, &rx);
}

static void on_event(void *ctx, const struct gso_engine_event *ev)
{
	struct qio_g *g = ctx;

	switch (ev->type) {
	case GSO_EV_DGRAM_SENT:
	case GSO_EV_DGRAM_DROPPED:
		if (ev->cookie & ONCE_BIT) {
			struct once *o = &g->once[(ev->cookie & ~ONCE_BIT) % ONCE_MAX];

			if (o->d)
				gso_dgram__close(o->d);
			o->d = NULL;
			return;
		}
		g->base.cfg.cb.on_sent(g->base.cfg.ctx, ev->cookie, ev->type == GSO_EV_DGRAM_SENT ? 0 : ev->err ? ev->err : -ECANCELED,
				       ev->time_ns);
		return;
	case GSO_EV_DGRAM_RECV_DONE:
		if (g->base.cfg.cb.on_recv_done)
			g->base.cfg.cb.on_recv_done(g->base.cfg.ctx);
		return;
	case GSO_EV_DEV_GONE:
		g->dev_gone = true;
		gso_engine__stop(g->e);
		return;
	default:
		return;
	}
}

static int g_run(struct qio *q, uint64_t until_ns)
{
	struct qio_g *g = G(q);
	int err;

	if (g->dev_gone)
		return -ENODEV;
	err = gso_engine__run(g->e, until_ns);
	if (err == -ENODEV)
		g->dev_gone = true;
	return g->dev_gone ? -ENODEV : err;
}

/* An atomic store and a write(2): async-signal-safe, and it works from the engine's own callbacks. */
static void g_stop(struct qio *q)
{
	gso_engine__stop(G(q)->e);
}

static void add_chunks(struct gso_dev *d, struct qio_report *r)
{
	GSO_OPTS(gso_dev_stats, st);

	if (!d || gso_dev__stats(d, &st)) {
		r->balanced = false;
		return;
	}
	r->chunks_total += st.chunks_total;
	r->chunks_free += st.chunks_free;
}

static void g_close(struct qio *q, struct qio_report *rep)
{
	struct qio_g *g = G(q);
	GSO_OPTS(gso_engine_stats, es);
	struct gso_dev *d;
	int err;

	if (g->l) {
		g->li.sz = sizeof(g->li);
		g->have_li = !gso_dgram_listener__info(g->l, &g->li);
		gso_dgram_listener__close(g->l);
		g->l = NULL;
	}
	for (int i = 0; i < ONCE_MAX; i++)
		if (g->once[i].d) {
			gso_dgram__close(g->once[i].d);
			g->once[i].d = NULL;
		}
	if (!gso_engine__stats(g->e, &es)) {
		g->rep.have_engine = true;
		g->rep.e_polls = es.polls;
		g->rep.e_waits = es.waits;
		g->rep.e_submits = es.submits;
		g->rep.e_supers = es.supers;
		g->rep.e_frames = es.frames;
		g->rep.e_backpressure = es.backpressure;
		g->rep.e_kicks = es.kicks;
		g->rep.e_rx_frames = es.rx_frames;
		g->rep.e_rx_other = es.rx_other;
		g->rep.e_late_ns_max = es.late_ns_max;
		g->rep.e_behind_events = es.behind_events;
		g->rep.e_lost_ns = es.lost_ns;
		g->rep.e_link_down = es.link_down;
		g->rep.e_link_up = es.link_up;
	}
	if (g->have_li) {
		g->rep.have_listener = true;
		g->rep.rx_datagrams = g->li.datagrams;
		g->rep.rx_bytes = g->li.bytes;
		g->rep.rx_passes = g->li.passes;
		g->rep.rx_bad_csum = g->li.bad_csum;
		g->rep.rx_bad_len = g->li.bad_len;
		g->rep.rx_csum_partial = g->li.csum_partial;
	}
	/* Every flow ends and every buffer comes back; then the accounting must balance. */
	err = gso_engine__close(g->e);
	g->rep.balanced = !err;
	d = gso_engine__dev(g->e);
	add_chunks(d, &g->rep);
	for (uint32_t i = 0; gso_engine__rx(g->e, i); i++)
		if (gso_engine__rx(g->e, i) != d)
			add_chunks(gso_engine__rx(g->e, i), &g->rep);
	g->rep.balanced = g->rep.balanced && g->rep.chunks_free == g->rep.chunks_total;
	g->rep.dev_gone = g->dev_gone;
	*rep = g->rep;
}

static void g_destroy(struct qio *q)
{
	struct qio_g *g = G(q);

	gso_engine__destroy(g->e);
	free(g);
}

static const struct qio_ops g_ops = {
	.path_open = g_path_open, .path_close = g_path_close, .send = g_send, .set_rate = g_set_rate,
	.send_once = g_send_once, .run = g_run, .stop = g_stop, .close = g_close, .destroy = g_destroy,
};

int qio_gso_open(struct qio **out, const struct qio_cfg *cfg, char *errbuf, size_t errlen)
{
	struct qio_g *g = calloc(1, sizeof(*g));
	GSO_OPTS(gso_path_info, pi);
	int err;

	if (!g)
		return -ENOMEM;
	g->base.ops = &g_ops;
	g->base.cfg = *cfg;
	{
		GSO_OPTS(gso_engine_opts, eo, .max_flows = cfg->max_flows + ONCE_MAX + 16, .on_event = on_event,
			 .ctx = g, .flow_queue = cfg->flow_queue);
		GSO_OPTS(gso_path_opts, po, .path = cfg->gso_path);

		err = gso_engine__open_path(&g->e, cfg->ifindex, &po, &eo);
	}
	if (err) {
		snprintf(errbuf, errlen, "%s path%s", gso_path_name(cfg->gso_path) ? gso_path_name(cfg->gso_path) : "?",
			 err == -ENOENT ? " (the XDP steering program, steer.bpf.o, is looked for in ../bpf/ and bpf/ "
					  "beside the program, in bpf/ beside libgso-xdp.so, or in $GSO_BPF_DIR)" : "");
		free(g);
		return err;
	}
	if (!gso_engine__path(g->e, &pi)) {
		g->rep.path = gso_path_name(pi.path);
		g->rep.reason = pi.reason ? pi.reason : "";
	}
	{
		GSO_OPTS(gso_dgram_listen_opts, lo, .l3 = cfg->family == AF_INET6 ? GSO_L3_IPV6 : GSO_L3_IPV4,
			 .port = cfg->port, .on_recv = on_recv, .ctx = g);

		memcpy(lo.addr, cfg->addr, 16);
		err = gso_dgram_listener__open(&g->l, g->e, &lo);
	}
	if (err) {
		snprintf(errbuf, errlen, "datagram listener on port %u", cfg->port);
		gso_engine__destroy(g->e);
		free(g);
		return err;
	}
	*out = &g->base;
	return 0;
}
