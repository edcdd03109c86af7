/* The impair relay's --mtu: judge a frame, build the ICMP error (mtu_icmp.h). */
#include "mtu_icmp.h"

#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <gso/csum.h>
#include <gso/offload.h>

#define VNET_LEN GSO_VNET_HDR_LEN
#define ETH_LEN 14u
#define VLAN_LEN 4u
#define IP4_LEN 20u
#define IP6_LEN 40u
#define ICMP_LEN 8u
/* RFC 1812 4.3.2.3: an ICMP error is at most 576 bytes; RFC 4443 2.4(c): at most 1280. */
#define ICMP4_MAX 576u
#define ICMP6_MAX 1280u
#define TCP_FIN 0x01
#define TCP_PSH 0x08

/* What the relay needs to know of a frame's IP packet. */
struct ippkt {
	uint32_t l2;        /* Ethernet header with its 802.1Q tag, if any */
	int family;         /* 4 or 6 */
	const uint8_t *ip;  /* the IP header */
	uint32_t avail;     /* bytes from ip to the end of the frame */
	uint32_t ip_len;    /* the packet's length as its header gives it */
	uint32_t seg_len;   /* IP length of the first segment (ip_len unless GSO) */
	uint32_t l4;        /* L4 header offset from ip, 0 when unknown */
	uint32_t l4_hdr;    /* GSO: L4 header length */
	uint8_t proto;      /* L4 protocol, 0 when unknown */
	bool gso, more;     /* a GSO unit; more segments follow its first */
	bool csum_partial;  /* GSO_VNET_HDR_F_NEEDS_CSUM: the L4 checksum is the pseudo-header sum */
	uint16_t csum_off;  /* then the checksum field's offset from l4 */
};

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return ntohs(v);
}

static void put16(uint8_t *p, uint16_t v)
{
	v = htons(v);
	memcpy(p, &v, 2);
}

/* A folded checksum as gso_csum_* returns it (memory order) into a packet field. */
static void put_csum(uint8_t *p, uint16_t c)
{
	memcpy(p, &c, 2);
}

static bool parse(const uint8_t *frame, uint32_t len, struct ippkt *p)
{
	struct gso_vnet_hdr vh;
	const uint8_t *eth = frame + VNET_LEN;
	uint32_t n, hdr, payload;
	uint16_t et;

	if (len < VNET_LEN + ETH_LEN || gso_vnet_hdr_decode(frame, VNET_LEN, &vh))
		return false;
	n = len - VNET_LEN;
	memset(p, 0, sizeof(*p));
	p->l2 = ETH_LEN;
	et = get16(eth + 12);
	if (et == 0x8100) {
		if (n < ETH_LEN + VLAN_LEN)
			return false;
		p->l2 += VLAN_LEN;
		et = get16(eth + 16);
	}
	p->ip = eth + p->l2;
	p->avail = n - p->l2;
	if (et == 0x0800 && p->avail >= IP4_LEN && (p->ip[0] >> 4) == 4) {
		p->family = 4;
		hdr = (p->ip[0] & 15u) * 4;
		if (hdr < IP4_LEN || hdr > p->avail)
			return false;
		p->ip_len = get16(p->ip + 2);
		p->proto = p->ip[9];
		p->l4 = hdr;
	} else if (et == 0x86dd && p->avail >= IP6_LEN && (p->ip[0] >> 4) == 6) {
		p->family = 6;
		hdr = IP6_LEN;
		p->ip_len = IP6_LEN + get16(p->ip + 4);
		/* Extension headers are not walked: the vnet header says where L4 starts. */
		if (p->ip[6] == IPPROTO_TCP || p->ip[6] == IPPROTO_UDP || p->ip[6] == IPPROTO_ICMPV6) {
			p->proto = p->ip[6];
			p->l4 = hdr;
		}
	} else {
		return false;
	}
	if ((vh.flags & GSO_VNET_HDR_F_NEEDS_CSUM) && vh.csum_start >= p->l2 + hdr &&
	    vh.csum_start < n) {
		p->csum_partial = true;
		p->l4 = vh.csum_start - p->l2;
		p->csum_off = vh.csum_offset;
	}
	p->seg_len = p->ip_len;
	switch (vh.gso_type & ~GSO_VNET_HDR_GSO_ECN) {
	case GSO_VNET_HDR_GSO_TCPV4:
	case GSO_VNET_HDR_GSO_TCPV6:
		if (!p->l4 || p->avail < p->l4 + 20)
			return true;
		p->proto = IPPROTO_TCP;
		p->l4_hdr = (p->ip[p->l4 + 12] >> 4) * 4u;
		break;
	case GSO_VNET_HDR_GSO_UDP_L4:
		if (!p->l4 || p->avail < p->l4 + 8)
			return true;
		p->proto = IPPROTO_UDP;
		p->l4_hdr = 8;
		break;
	default:
		/* Not GSO, or UFO (IP fragments): the packet as it is. */
		return true;
	}
	/* A length the header cannot hold (BIG TCP's 0) is what the frame carries. */
	if (p->ip_len <= p->l4 + p->l4_hdr)
		p->ip_len = p->avail;
	if (!vh.gso_size || p->ip_len <= p->l4 + p->l4_hdr)
		return true;
	payload = p->ip_len - p->l4 - p->l4_hdr;
	p->gso = true;
	p->more = payload > vh.gso_size;
	p->seg_len = p->l4 + p->l4_hdr + (p->more ? vh.gso_size : payload);
	return true;
}

static bool v4_unicast(const uint8_t *a)
{
	return a[0] != 0 && a[0] != 127 && a[0] < 224;
}

static bool v6_unicast(const uint8_t *a)
{
	static const uint8_t zero[16], loop[16] = { [15] = 1 };

	return a[0] != 0xff && memcmp(a, zero, 16) && memcmp(a, loop, 16);
}

/* RFC 1812 4.3.2.7 and RFC 4443 2.4(e): the packets no error may be sent about. */
static bool may_answer(const struct ippkt *p, const uint8_t *eth)
{
	const uint8_t *l4 = p->l4 && p->avail > p->l4 ? p->ip + p->l4 : NULL;

	if (p->family == 4) {
		if (!v4_unicast(p->ip + 12) || !v4_unicast(p->ip + 16) || (eth[0] & 1))
			return false;
		if (get16(p->ip + 6) & 0x1fff)
			return false;
		/* Destination unreachable, source quench, redirect, time exceeded, parameter problem. */
		if (p->proto == IPPROTO_ICMP && l4 && (l4[0] == 3 || l4[0] == 4 || l4[0] == 5 || l4[0] == 11 ||
						       l4[0] == 12))
			return false;
		return true;
	}
	/* Packet Too Big may answer a multicast destination (RFC 4443 2.4(e.3)). */
	if (!v6_unicast(p->ip + 8))
		return false;
	return !(p->proto == IPPROTO_ICMPV6 && l4 && l4[0] < 128);
}

enum bench_mtu_verdict bench_mtu_judge(const uint8_t *frame, uint32_t len, uint32_t mtu)
{
	struct ippkt p;

	if (!parse(frame, len, &p) || p.seg_len <= mtu)
		return BENCH_MTU_PASS;
	if (p.family == 4 && !(get16(p.ip + 6) & 0x4000))
		return BENCH_MTU_NO_DF;
	return may_answer(&p, frame + VNET_LEN) ? BENCH_MTU_ICMP : BENCH_MTU_SILENT;
}

/*
 * The first segment's L4 checksum as it would be on the wire, into the
 * quote `q` (`qlen` bytes, a copy of the packet from its IP header).
 */
static void quote_l4_csum(const struct ippkt *p, uint8_t *q, uint32_t qlen)
{
	uint32_t field = p->l4 + p->csum_off, end = p->seg_len < p->avail ? p->seg_len : p->avail;
	uint32_t sum;
	uint16_t c;

	if (field + 2 > qlen || field + 2 > end)
		return;
	if (!p->gso) {
		/* The field holds the pseudo-header sum: what follows is the rest of it. */
		c = gso_csum_finish(gso_csum_partial(p->ip + p->l4, end - p->l4, 0));
	} else {
		uint32_t l4_len = p->seg_len - p->l4, hdr_end = p->l4 + p->l4_hdr;

		if (hdr_end > qlen || hdr_end > end)
			return;
		/* The unit's pseudo-header sum was for the whole unit's length: start afresh. */
		if (p->family == 4)
			sum = gso_csum_pseudo4(p->ip + 12, p->ip + 16, p->proto, l4_len);
		else
			sum = gso_csum_pseudo6(p->ip + 8, p->ip + 24, p->proto, l4_len);
		memset(q + field, 0, 2);
		sum = gso_csum_partial(q + p->l4, p->l4_hdr, sum);
		sum = gso_csum_partial(p->ip + hdr_end, end - hdr_end, sum);
		c = gso_csum_finish(sum);
	}
	if (p->proto == IPPROTO_UDP && !c)
		c = 0xffff;
	put_csum(q + field, c);
}

/* Copy the start of the packet's first segment into q, as a router would have received it. */
static uint32_t quote(const struct ippkt *p, uint8_t *q, uint32_t max)
{
	uint32_t n = p->seg_len < max ? p->seg_len : max;

	if (n > p->avail)
		n = p->avail;
	memcpy(q, p->ip, n);
	if (p->gso) {
		if (p->family == 4) {
			put16(q + 2, (uint16_t)p->seg_len);
			memset(q + 10, 0, 2);
			put_csum(q + 10, gso_csum_finish(gso_csum_partial(q, (q[0] & 15u) * 4, 0)));
		} else {
			put16(q + 4, (uint16_t)(p->seg_len - IP6_LEN));
		}
		if (p->proto == IPPROTO_TCP && p->more && p->l4 + 14 <= n)
			q[p->l4 + 13] &= (uint8_t)~(TCP_FIN | TCP_PSH);
		if (p->proto == IPPROTO_UDP && p->l4 + 6 <= n)
			put16(q + p->l4 + 4, (uint16_t)(p->seg_len - p->l4));
	}
	if (p->csum_partial)
		quote_l4_csum(p, q, n);
	return n;
}

uint32_t bench_mtu_icmp_build(const uint8_t *frame, uint32_t len, uint32_t mtu, const struct bench_mtu_src *src,
			      uint16_t ip_id, uint8_t *out)
{
	const uint8_t *eth = frame + VNET_LEN;
	uint8_t *oeth = out + VNET_LEN, *ip, *icmp;
	struct ippkt p;
	uint32_t n, sum;

	if (!parse(frame, len, &p))
		return 0;
	memset(out, 0, VNET_LEN); /* no offload: every checksum is complete */
	/* The relay is transparent at L2: the error comes "from" the MAC the packet was sent to. */
	memcpy(oeth, eth + 6, 6);
	memcpy(oeth + 6, eth, 6);
	memcpy(oeth + 12, eth + 12, p.l2 - 12); /* EtherType, or the 802.1Q tag and the EtherType */
	ip = oeth + p.l2;
	if (p.family == 4) {
		const uint8_t *saddr = src->has4 ? src->addr4 : p.ip + 16;

		if (!v4_unicast(saddr))
			return 0;
		icmp = ip + IP4_LEN;
		n = quote(&p, icmp + ICMP_LEN, ICMP4_MAX - IP4_LEN - ICMP_LEN);
		ip[0] = 0x45;
		ip[1] = 0xc0; /* precedence "internetwork control", as routers send errors */
		put16(ip + 2, (uint16_t)(IP4_LEN + ICMP_LEN + n));
		put16(ip + 4, ip_id);
		put16(ip + 6, 0);
		ip[8] = 64;
		ip[9] = IPPROTO_ICMP;
		memset(ip + 10, 0, 2);
		memcpy(ip + 12, saddr, 4);
		memcpy(ip + 16, p.ip + 12, 4);
		put_csum(ip + 10, gso_csum_finish(gso_csum_partial(ip, IP4_LEN, 0)));
		icmp[0] = 3; /* destination unreachable */
		icmp[1] = 4; /* fragmentation needed and DF set */
		memset(icmp + 2, 0, 4);
		put16(icmp + 6, (uint16_t)mtu); /* RFC 1191: next-hop MTU in the low 16 bits */
		sum = gso_csum_partial(icmp, ICMP_LEN + n, 0);
	} else {
		const uint8_t *saddr = src->has6 ? src->addr6 : p.ip + 24;
		uint32_t m = htonl(mtu);

		if (!v6_unicast(saddr))
			return 0;
		icmp = ip + IP6_LEN;
		n = quote(&p, icmp + ICMP_LEN, ICMP6_MAX - IP6_LEN - ICMP_LEN);
		memset(ip, 0, 4);
		ip[0] = 0x60;
		put16(ip + 4, (uint16_t)(ICMP_LEN + n));
		ip[6] = IPPROTO_ICMPV6;
		ip[7] = 64;
		memcpy(ip + 8, saddr, 16);
		memcpy(ip + 24, p.ip + 8, 16);
		icmp[0] = 2; /* packet too big */
		icmp[1] = 0;
		memset(icmp + 2, 0, 2);
		memcpy(icmp + 4, &m, 4);
		sum = gso_csum_partial(icmp, ICMP_LEN + n,
				       gso_csum_pseudo6(ip + 8, ip + 24, IPPROTO_ICMPV6, ICMP_LEN + n));
	}
	put_csum(icmp + 2, gso_csum_finish(sum));
	return (uint32_t)(icmp + ICMP_LEN + n - out);
}
