/*
 * Path MTU (engine.h, "Path MTU"): the IP packet size each flow may send,
 * kept as the lowest of the interface's MTU (the link monitor's), the
 * route's own when it was lower at open, and what accepted ICMP errors
 * reported; and the receive side of those errors (RFC 1191, RFC 8201),
 * checked as the kernel checks them (RFC 5927) before any flow sees one.
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

bool gsoi_engine_icmp_input(struct engine *e, const uint8_t *frame, uint32_t len, uint64_t now)
{
	struct eflow *f = NULL;
	struct icmp_err ie;
	int r;

	switch (gsoi_icmp_err_parse(frame, len, &ie)) {
	case ICMP_ERR_OTHER:
		return false;
	case ICMP_ERR_BAD:
		e->st.icmp_bad++;
		return true;
	case ICMP_ERR_PMTU:
		break;
	}
	r = ie.l4 == GSO_L4_TCP ? gsoi_tcp_icmp_flow(e, &ie, frame, len, &f) : gsoi_dgram_icmp_flow(e, &ie, &f);
	if (r == -EXDEV)
		return true; /* another queue's stream: the port handed the frame to its engine */
	if (r <= 0) {
		e->st.icmp_forged++;
		return true;
	}
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
