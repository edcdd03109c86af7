/*
 * Path MTU (engine.h, "Path MTU"): the IP packet size each flow may send,
 * kept as the lowest of the interface's MTU (the link monitor's), its
 * route's (at open, and asked again on every route change), and what
 * accepted ICMP errors reported; and the receive side of those errors
 * (RFC 1191, RFC 8201), checked as the kernel checks them (RFC 5927)
 * before any flow sees one, whether the steering program handed them over
 * or the kernel's raw sockets did (gsoi_engine_read_icmp).
 */
#include "engine_internal.h"
#include "icmp_err_internal.h"

#include <errno.h>

static uint32_t pmtu_now(const struct engine *e, const struct eflow *f)
{
	uint32_t m = e->link_mtu;

	if (f->route_mtu && f->route_mtu < m)
		m = f->route_mtu;
	if (f->icmp_mtu && f->icmp_mtu < m)
		m = f->icmp_mtu;
	return m;
}

void gsoi_flow_pmtu_init(struct engine *e, struct eflow *f)
{
	/* A route MTU equal to the interface's is the interface's: it follows the link. */
	f->route_mtu = f->route.mtu && f->route.mtu < e->link_mtu ? f->route.mtu : 0;
	f->icmp_mtu = 0;
	f->pmtu = pmtu_now(e, f);
}

bool gsoi_flow_pmtu_update(struct engine *e, struct eflow *f, uint32_t src, uint64_t now)
{
	uint32_t m = pmtu_now(e, f);

	if (m == f->pmtu)
		return false;
	f->pmtu = m;
	f->pmtu_changes++;
	if (f->ops->mtu)
		f->ops->mtu(f, src, now);
	return true;
}

void gsoi_engine_link_mtu(struct engine *e, uint32_t mtu, uint64_t now)
{
	if (!mtu || mtu == e->link_mtu)
		return;
	e->link_mtu = mtu;
	e->st.link_mtu_changes++;
	for (uint32_t i = 0; i < e->max_flows; i++)
		if (e->flows[i])
			gsoi_flow_pmtu_update(e, e->flows[i], GSO_PMTU_SRC_LINK, now);
}

static bool icmp_input(struct engine *e, const uint8_t *frame, uint32_t len, uint64_t now, bool kernel)
{
	struct eflow *f = NULL;
	struct icmp_err ie;
	int r;

	switch (gsoi_icmp_err_parse(frame, len, &ie)) {
	case ICMP_ERR_OTHER:
		return false;
	case ICMP_ERR_BAD:
		if (!kernel)
			e->st.icmp_bad++;
		return true;
	case ICMP_ERR_PMTU:
		break;
	}
	r = ie.l4 == GSO_L4_TCP ? gsoi_tcp_icmp_flow(e, &ie, frame, len, &f) : gsoi_dgram_icmp_flow(e, &ie, &f);
	if (r == -EXDEV)
		return true; /* another queue's stream: the port handed the frame to its engine */
	/* The kernel's copies include those about the host's own sockets: no flow here is no forgery. */
	if (r == 0 && kernel)
		return true;
	if (r <= 0) {
		e->st.icmp_forged++;
		return true;
	}
	if (kernel)
		e->st.icmp_kernel++;
	/* Only down (RFC 1191: a larger MTU comes from probing, not from an error). */
	if (ie.mtu >= f->pmtu) {
		e->st.icmp_stale++;
		return true;
	}
	f->icmp_mtu = ie.mtu;
	gsoi_flow_pmtu_update(e, f, GSO_PMTU_SRC_ICMP, now);
	e->st.icmp_pmtu++;
	return true;
}

void gsoi_engine_routes_changed(struct engine *e, uint64_t now)
{
	for (uint32_t i = 0; i < e->max_flows; i++) {
		struct eflow *f = e->flows[i];
		uint32_t m;

		/* Flows with a destination: streams, datagram flows opened with a route. */
		if (!f || !f->route.l3 || gsoi_route_mtu(f->route.l3, f->route.dst, e->ifindex, &m))
			continue;
		f->route_mtu = m;
		gsoi_flow_pmtu_update(e, f, GSO_PMTU_SRC_ROUTE, now);
	}
}

bool gsoi_engine_icmp_input(struct engine *e, const uint8_t *frame, uint32_t len, uint64_t now)
{
	return icmp_input(e, frame, len, now, false);
}

struct icmp_read {
	struct engine *e;
	uint64_t now;
};

static void kernel_copy(void *ctx, const uint8_t *frame, uint32_t len)
{
	struct icmp_read *r = ctx;

	icmp_input(r->e, frame, len, r->now, true);
}

void gsoi_engine_read_icmp(struct engine *e, uint64_t now)
{
	struct icmp_read r = { e, now };

	e->icmp_ready = false;
	e->icmp_read_ns = now;
	e->defer++;
	/* A bounded pass: a flood of errors waits for the next one rather than starving the flows. */
	gsoi_icmp_sock_read(&e->icmp, e->icmp.fd4, 64, kernel_copy, &r);
	gsoi_icmp_sock_read(&e->icmp, e->icmp.fd6, 64, kernel_copy, &r);
	e->defer--;
}

void gsoi_engine_icmp_sock_off(struct engine *e)
{
	if (e->icmp.fd4 >= 0)
		gso_evloop__del_fd(e->loop, e->icmp.fd4);
	if (e->icmp.fd6 >= 0)
		gso_evloop__del_fd(e->loop, e->icmp.fd6);
	gsoi_icmp_sock_close(&e->icmp);
}
