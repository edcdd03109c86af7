/* ICMP path-MTU error frames for the tests (icmpframe.h). */
#include <criterion/criterion.h>

#include <netinet/in.h>
#include <string.h>

#include <gso/csum.h>

#include "icmpframe.h"

void icmpf_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void icmpf_put32(uint8_t *p, uint32_t v)
{
	icmpf_put16(p, (uint16_t)(v >> 16));
	icmpf_put16(p + 2, (uint16_t)v);
}

/* Sums are in memory order (gso/csum.h): stored as they are. */
static void set_csum(uint8_t *p, uint16_t c)
{
	memcpy(p, &c, 2);
}

void icmp_frame_reseal(struct icmp_frame *f)
{
	uint8_t *ip = f->b + f->ip, *icmp = f->b + f->icmp;
	uint32_t n = f->len - f->icmp, seed = 0;

	if (!f->v6) {
		set_csum(ip + 10, 0);
		set_csum(ip + 10, gso_csum_finish(gso_csum_partial(ip, f->icmp - f->ip, 0)));
	} else {
		seed = gso_csum_pseudo6(ip + 8, ip + 24, IPPROTO_ICMPV6, n);
	}
	set_csum(icmp + 2, 0);
	set_csum(icmp + 2, gso_csum_finish(gso_csum_partial(icmp, n, seed)));
}

void icmp_frame_build(struct icmp_frame *f, const struct icmp_knobs *k)
{
	unsigned off = ICMPF_ETH + (k->vlan ? ICMPF_VLAN : 0);
	unsigned qh = k->q_ver == 6 ? ICMPF_IP6 : k->q_ihl * 4u;
	uint8_t *ip, *icmp, *q, *l4;

	memset(f, 0, sizeof(*f));
	f->v6 = k->v6;
	memset(f->b, 0x02, 6);
	memset(f->b + 6, 0x04, 6);
	if (k->vlan) {
		icmpf_put16(f->b + 12, 0x8100);
		icmpf_put16(f->b + 14, k->tci);
	}
	icmpf_put16(f->b + off - 2, k->v6 ? 0x86dd : 0x0800);
	f->ip = off;
	f->icmp = off + (k->v6 ? ICMPF_IP6 : ICMPF_IP4);
	f->q = f->icmp + ICMPF_HDR;
	f->len = f->q + qh + k->q_l4;
	cr_assert_leq(f->len, ICMPF_MAX);
	ip = f->b + f->ip;
	icmp = f->b + f->icmp;
	q = f->b + f->q;
	l4 = q + qh;

	/* The router's message to us. */
	if (k->v6) {
		ip[0] = 0x60;
		icmpf_put16(ip + 4, (uint16_t)(f->len - f->icmp));
		ip[6] = IPPROTO_ICMPV6;
		ip[7] = 64;
		memcpy(ip + 8, k->router, 16);
		memcpy(ip + 24, k->our, 16);
		icmpf_put32(icmp + 4, k->mtu);
	} else {
		ip[0] = 0x45;
		icmpf_put16(ip + 2, (uint16_t)(f->len - f->ip));
		ip[8] = 64;
		ip[9] = IPPROTO_ICMP;
		memcpy(ip + 12, k->router, 4);
		memcpy(ip + 16, k->our, 4);
		icmpf_put16(icmp + 6, (uint16_t)k->mtu);
	}
	icmp[0] = k->type;
	icmp[1] = k->code;

	/* Our packet it quotes, as we sent it: 1500 bytes, cut after q_l4 bytes of L4. */
	if (k->q_ver == 6) {
		q[0] = 0x60;
		icmpf_put16(q + 4, 1460);
		q[6] = k->q_proto;
		q[7] = 63;
		memcpy(q + 8, k->our, 16);
		memcpy(q + 24, k->peer, 16);
	} else {
		q[0] = (uint8_t)(0x40 | k->q_ihl);
		icmpf_put16(q + 2, 1500);
		icmpf_put16(q + 6, 0x4000); /* DF: why it came back */
		q[8] = 1;                   /* the TTL the router saw, not the one whose checksum we wrote */
		q[9] = k->q_proto;
		memcpy(q + 12, k->our, 4);
		memcpy(q + 16, k->peer, 4);
		if (k->q_ihl >= 5)
			set_csum(q + 10, 0x1234);
		for (unsigned i = ICMPF_IP4; i < qh; i++)
			q[i] = 1; /* options: NOPs */
	}
	uint8_t l4h[8];
	icmpf_put16(l4h, k->lport);
	icmpf_put16(l4h + 2, k->rport);
	icmpf_put32(l4h + 4, k->q_proto == IPPROTO_UDP ? 0x05c00000u : k->seq); /* UDP: length and checksum */
	memcpy(l4, l4h, k->q_l4 < 8 ? k->q_l4 : 8);
	for (unsigned i = 8; i < k->q_l4; i++)
		l4[i] = (uint8_t)(i * 29);
	icmp_frame_reseal(f);
}
