/*
 * The ICMP path-MTU error parser (icmp_err_internal.h): the rules of
 * the kernel's icmp_rcv/icmp_unreach and __ip_rt_update_pmtu with
 * tcp_v4_err for IPv4, icmpv6_rcv/icmpv6_notify with tcp_v6_err for
 * IPv6, over the receive path's one header walk (frame_rx.c).  Pure.
 */
#include "icmp_err_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>

#include <gso/tmpl.h>

#include "frame_rx_internal.h"

enum {
	ICMP_HDR = 8,           /* type, code, checksum, 4 bytes (unused and MTU; ICMPv6: MTU) */
	ICMP_DEST_UNREACH = 3,  /* ICMPv4 type */
	ICMP_FRAG_NEEDED = 4,   /* its code */
	ICMPV6_PKT_TOOBIG = 2,  /* ICMPv6 type, code 0 */
	QUOTED_L4 = 8,          /* ports and TCP's sequence number: what RFC 792 promises to quote */
};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * The quoted packet (`n` bytes at q, cut wherever the router chose):
 * its addresses, protocol and ports into *e.  Returns false when it is
 * not an IP header of family `l3` that holds QUOTED_L4 bytes of TCP or UDP.
 */
static bool quoted(const uint8_t *q, uint32_t n, uint8_t l3, struct icmp_err *e)
{
	uint32_t hl;

	memset(e->local, 0, sizeof(e->local));
	memset(e->remote, 0, sizeof(e->remote));
	if (l3 == GSO_L3_IPV4) {
		if (n < 20 || q[0] >> 4 != 4)
			return false;
		hl = (q[0] & 15) * 4u;
		if (hl < 20)
			return false;
		e->l4 = q[9];
		memcpy(e->local, q + 12, 4);
		memcpy(e->remote, q + 16, 4);
	} else {
		/* The kernel would skip extension headers here; our flows never send any. */
		hl = 40;
		if (n < hl || q[0] >> 4 != 6)
			return false;
		e->l4 = q[6];
		memcpy(e->local, q + 8, 16);
		memcpy(e->remote, q + 24, 16);
	}
	if ((e->l4 != IPPROTO_TCP && e->l4 != IPPROTO_UDP) || n < hl + QUOTED_L4)
		return false;
	e->lport = get16(q + hl);
	e->rport = get16(q + hl + 2);
	e->seq = e->l4 == IPPROTO_TCP ? get32(q + hl + 4) : 0;
	return true;
}

enum icmp_err_verdict gsoi_icmp_err_parse(const uint8_t *f, uint32_t len, struct icmp_err *e)
{
	struct frame_l4 w;
	const uint8_t *icmp;
	bool v4;
	int err = gsoi_frame_l4(f, len, &w);

	if (err == -ENOENT)
		return ICMP_ERR_OTHER;
	if (!w.l3)
		return ICMP_ERR_BAD; /* an IP header too cut to say what it carries */
	v4 = w.l3 == GSO_L3_IPV4;
	if (w.proto != (v4 ? IPPROTO_ICMP : IPPROTO_ICMPV6))
		return ICMP_ERR_OTHER;
	if (err || (v4 && (w.frag || !gsoi_frame_ip4_sum_ok(f, &w))))
		return ICMP_ERR_BAD;
	icmp = f + w.l4;
	/* Another type is another handler's, whatever its state; judge it only once it is ours. */
	if (w.l4_len >= 2 && (v4 ? icmp[0] != ICMP_DEST_UNREACH || icmp[1] != ICMP_FRAG_NEEDED
				 : icmp[0] != ICMPV6_PKT_TOOBIG || icmp[1] != 0))
		return ICMP_ERR_OTHER;
	if (w.l4_len < ICMP_HDR || !gsoi_frame_l4_sum_ok(f, &w, v4 ? 0 : gsoi_frame_pseudo(f, &w)))
		return ICMP_ERR_BAD;
	if (v4) {
		/* __ip_rt_update_pmtu raises a report below its floor to the floor rather than ignore it. */
		e->mtu = get16(icmp + 6);
		if (e->mtu < ICMP_ERR_MIN_PMTU4)
			e->mtu = ICMP_ERR_MIN_PMTU4;
	} else {
		/* tcp_v6_err drops it: no IPv6 link may be smaller. */
		e->mtu = get32(icmp + 4);
		if (e->mtu < ICMP_ERR_MIN_MTU6)
			return ICMP_ERR_BAD;
	}
	if (!quoted(icmp + ICMP_HDR, w.l4_len - ICMP_HDR, w.l3, e))
		return ICMP_ERR_BAD;
	e->l3 = w.l3;
	e->vlan = w.vlan & 0xfff;
	memset(e->router, 0, sizeof(e->router));
	memcpy(e->router, f + w.ip + (v4 ? 12 : 8), v4 ? 4 : 16);
	return ICMP_ERR_PMTU;
}
