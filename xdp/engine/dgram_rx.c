/*
 * Datagram listeners (engine.h, "Datagram receive"): the UDP datagrams to
 * one local address and port, from every source, checked as the kernel's
 * udp_rcv checks them and handed to the application's on_recv while they
 * are still in the device's receive frame (no copy), and the reply flows
 * that answer them.
 *
 * The engine's receive pass offers every frame here first while a
 * listener is open (gsoi_dgram_rx); with none open it costs one pointer
 * test per frame, so TCP-only engines are unchanged.  A listener is an
 * engine flow that never sends (like a TCP listener): a handle, a slot,
 * and freed with its engine.
 */
#include "engine_internal.h"
#include "frame_rx_internal.h"
#include "opts_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gso/tmpl.h>

struct dlistener {
	struct eflow f;        /* first: engine.c sees flows through it */
	struct dlistener *next; /* e->dlisteners */
	uint8_t l3;
	uint8_t addr[16];
	uint16_t port;
	gso_dgram_recv_fn on_recv;
	void *ctx;
	bool steered;          /* it added the steering program's listener entry */
	uint32_t pass_n;       /* datagrams handed over in the current receive pass */
	struct gso_dgram_listener_info st;
};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static struct dlistener *find(struct engine *e, uint8_t l3, const uint8_t *addr, uint16_t port)
{
	for (struct dlistener *l = e->dlisteners; l; l = l->next)
		if (l->port == port && l->l3 == l3 && !memcmp(l->addr, addr, l3 == GSO_L3_IPV6 ? 16 : 4))
			return l;
	return NULL;
}

/*
 * One received frame: true when it is a datagram for one of the engine's
 * listeners (delivered, or dropped and counted), false for everything
 * else (the stream flows' turn).  As udp_rcv: the UDP length must be at
 * least the header and at most what the IP header carries (trailing
 * bytes past it are ignored), the checksum covers the UDP length, and a
 * zero checksum is "none" over IPv4 and an error over IPv6.
 */
bool gsoi_dgram_rx(struct engine *e, struct gso_dev *rx, const uint8_t *f, uint32_t len, uint64_t now)
{
	struct gso_dgram_msg m;
	struct frame_l4 w;
	struct dlistener *l;
	const uint8_t *ip, *udp;
	uint32_t ulen;

	if (gsoi_frame_l4(f, len, &w) || w.proto != 17 || w.frag || w.l4_len < 8)
		return false;
	ip = f + w.ip;
	udp = f + w.l4;
	l = find(e, w.l3, w.l3 == GSO_L3_IPV4 ? ip + 16 : ip + 24, get16(udp + 2));
	if (!l)
		return false;
	ulen = get16(udp + 4);
	if (ulen < 8 || ulen > w.l4_len) {
		l->st.bad_len++;
		return true;
	}
	w.l4_len = ulen;
	switch (gsoi_rx_csum_walked(f, &w)) {
	case RX_CSUM_BAD:
		l->st.bad_csum++;
		return true;
	case RX_CSUM_PARTIAL:
		l->st.csum_partial++;
		break;
	case RX_CSUM_OK:
		break;
	}
	memset(&m, 0, sizeof(m));
	m.sz = sizeof(m);
	m.data = udp + 8;
	m.len = ulen - 8;
	m.l3 = w.l3;
	m.vlan = w.vlan & 0xfff;
	m.sport = get16(udp);
	m.dport = l->port;
	if (w.l3 == GSO_L3_IPV4) {
		m.tos = ip[1];
		memcpy(m.saddr, ip + 12, 4);
		memcpy(m.daddr, ip + 16, 4);
	} else {
		m.tos = (uint8_t)((ip[0] & 15) << 4 | ip[1] >> 4);
		memcpy(m.saddr, ip + 8, 16);
		memcpy(m.daddr, ip + 24, 16);
	}
	memcpy(m.dmac, f, 6);
	memcpy(m.smac, f + 6, 6);
	m.dev = rx;
	m.rx_ns = now;
	l->st.datagrams++;
	l->st.bytes += m.len;
	l->pass_n++;
	l->on_recv(l->ctx, (struct gso_dgram_listener *)l->f.handle, &m);
	return true;
}

/* The end of a receive pass: GSO_EV_DGRAM_RECV_DONE for every listener that was handed datagrams. */
void gsoi_dgram_rx_end(struct engine *e)
{
	for (struct dlistener *l = e->dlisteners; l; l = l->next) {
		if (!l->pass_n)
			continue;
		l->st.passes++;
		gsoi_engine_emit(e, &(struct gso_engine_event){ .type = GSO_EV_DGRAM_RECV_DONE, .flow_ctx = l->ctx,
							      .acked = l->pass_n,
							      .dlistener = (struct gso_dgram_listener *)l->f.handle });
		l->pass_n = 0;
	}
}

/* ---- the flow ----------------------------------------------------------------------- */

/* The listener entry of the steering program (steer.h): every source to our address and port. */
int gsoi_steer_listener(struct engine *e, uint8_t l3, uint8_t l4, const uint8_t addr[16], uint16_t port, bool add)
{
	struct gso_flow fl = { .sz = sizeof(fl), .l3 = l3, .l4 = l4, .dport = port };

	memcpy(fl.daddr, addr, 16);
	return add ? gso_steer__flow_add(e->steer, &fl) : gso_steer__flow_del(e->steer, &fl);
}

static int steer_entry(struct dlistener *l, bool add)
{
	return gsoi_steer_listener(l->f.e, l->l3, GSO_L4_UDP, l->addr, l->port, add);
}

static void unlink_l(struct dlistener *l)
{
	for (struct dlistener **p = &l->f.e->dlisteners; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			break;
		}
}

static void dl_free(struct eflow *f)
{
	struct dlistener *l = (struct dlistener *)f;

	unlink_l(l);
	if (l->steered && l->f.e->steer)
		steer_entry(l, false);
	free(l);
}

/* Never armed, never following a neighbour, no timer: only its memory (engine_internal.h). */
static const struct eflow_ops dlistener_ops = {
	.free = dl_free,
};

static int get(const struct gso_dgram_listener *h, struct dlistener **out)
{
	struct eflow *f = NULL;
	int err = gsoi_flow_get((uintptr_t)h, HANDLE_DLISTENER, &f);

	if (f)
		*out = (struct dlistener *)f;
	return err;
}

/* ---- the API ------------------------------------------------------------------------ */

int gso_dgram_listener__open(struct gso_dgram_listener **out, struct gso_engine *h,
			     const struct gso_dgram_listen_opts *o)
{
	static const uint8_t zero[16];
	struct engine *e = gsoi_engine_of(h);
	struct dlistener *l;
	gso_dgram_recv_fn fn;
	uint8_t l3;
	uint16_t port;
	int err;

	if (!out || !h || !o || !GSO_OPTS_VALID(gso_dgram_listen_opts, o))
		return -EINVAL;
	if (!e)
		return -EBADF;
	l3 = GSO_OPTS_GET(o, l3, (uint8_t)0);
	port = GSO_OPTS_GET(o, port, (uint16_t)0);
	fn = GSO_OPTS_GET(o, on_recv, (gso_dgram_recv_fn)NULL);
	if ((l3 != GSO_L3_IPV4 && l3 != GSO_L3_IPV6) || !port || !fn ||
	    !memcmp(o->addr, zero, l3 == GSO_L3_IPV6 ? 16 : 4) || (l3 == GSO_L3_IPV4 && memcmp(o->addr + 4, zero, 12)))
		return -EINVAL;
	err = engine_thread_ok(e);
	if (err)
		return err;
	if (e->dead)
		return -ENODEV;
	if (find(e, l3, o->addr, port))
		return -EADDRINUSE;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->l3 = l3;
	memcpy(l->addr, o->addr, 16);
	l->port = port;
	l->on_recv = fn;
	l->ctx = GSO_OPTS_GET(o, ctx, (void *)NULL);
	err = gsoi_engine_flow_add(e, &l->f, &dlistener_ops, false, l->ctx, HANDLE_DLISTENER);
	if (err) {
		free(l);
		return err;
	}
	if (e->steer) {
		err = steer_entry(l, true);
		if (err) {
			gsoi_engine_flow_del(e, &l->f);
			free(l);
			return err;
		}
		l->steered = true;
	}
	l->next = e->dlisteners;
	e->dlisteners = l;
	*out = (struct gso_dgram_listener *)l->f.handle;
	return 0;
}

int gso_dgram_listener__close(struct gso_dgram_listener *h)
{
	struct dlistener *l;
	int err = get(h, &l);

	if (err)
		return err;
	/* A RECV_DONE still deferred for it is delivered before the handle goes stale. */
	gsoi_engine_flush_flow_events(l->f.e, &l->f);
	gsoi_engine_flow_del(l->f.e, &l->f);
	dl_free(&l->f);
	return 0;
}

int gso_dgram_listener__info(const struct gso_dgram_listener *h, struct gso_dgram_listener_info *info)
{
	struct dlistener *l;
	int err;

	if (!h || !GSO_OUT_VALID(info))
		return -EINVAL;
	err = get(h, &l);
	if (err)
		return err;
	GSO_OUT_PUT(info, l->st);
	return 0;
}

int gso_dgram__open_reply(struct gso_dgram **out, struct gso_dgram_listener *h, const struct gso_dgram_msg *m,
			  const struct gso_dgram_opts *o)
{
	struct gso_dgram_opts dopts;
	struct gso_tmpl t;
	struct dlistener *l;
	int err;

	if (!out || !h || !m || m->sz <= offsetof(struct gso_dgram_msg, dmac) + sizeof(m->dmac) ||
	    (o && !GSO_OPTS_VALID(gso_dgram_opts, o)))
		return -EINVAL;
	err = get(h, &l);
	if (err)
		return err;
	if (m->l3 != l->l3 || m->vlan > 4094 || !m->sport ||
	    (o && (GSO_OPTS_GET(o, tmpl, (const struct gso_tmpl *)NULL) ||
		   GSO_OPTS_GET(o, route, (const struct gso_route *)NULL))))
		return -EINVAL;
	{
		GSO_OPTS(gso_tmpl_fields, fl, .l3 = m->l3, .l4 = GSO_L4_UDP, .sport = l->port, .dport = m->sport,
			 .has_vlan = m->vlan != 0, .vlan_tci = m->vlan, .df = m->l3 == GSO_L3_IPV4);

		memcpy(fl.eth_dst, m->smac, 6);
		/* The steering program takes only frames to the interface's own MAC: that is ours. */
		memcpy(fl.eth_src, m->dmac, 6);
		memcpy(fl.saddr, l->addr, 16);
		memcpy(fl.daddr, m->saddr, 16);
		err = gso_tmpl__build(&t, &fl);
		if (err)
			return err;
	}
	memset(&dopts, 0, sizeof(dopts));
	if (o)
		memcpy(&dopts, o, o->sz < sizeof(dopts) ? o->sz : sizeof(dopts));
	dopts.sz = sizeof(dopts);
	dopts.tmpl = &t;
	return gso_dgram__open(out, (struct gso_engine *)l->f.e->handle, &dopts);
}
