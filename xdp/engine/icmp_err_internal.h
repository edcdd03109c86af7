/*
 * What an ICMP "fragmentation needed" or ICMPv6 "packet too big" says
 * about one of our packets (icmp_err.c; not installed): the checks the
 * kernel makes before it believes a path-MTU message, as pure
 * computation.  For the engine's receive pass (engine/) and the flows
 * above it (tcp/, port/), which match the quoted packet to a flow and
 * check its sequence number themselves.
 */
#ifndef GSO_XDP_ICMP_ERR_INTERNAL_H
#define GSO_XDP_ICMP_ERR_INTERNAL_H

#include <stdint.h>

/* What an ICMP "fragmentation needed" or ICMPv6 "packet too big" says about one of our packets. */
struct icmp_err {
	uint8_t l3;            /* 4 or 6 */
	uint8_t l4;            /* IPPROTO_TCP or IPPROTO_UDP: the quoted packet's protocol */
	uint16_t vlan;         /* the ICMP frame's 802.1Q VLAN ID, 0: untagged */
	uint8_t local[16];     /* the quoted packet's source: our address (IPv4: first 4 bytes, rest zero) */
	uint8_t remote[16];    /* the quoted packet's destination */
	uint16_t lport, rport; /* the quoted ports, host order (lport = quoted source port) */
	uint32_t seq;          /* TCP: the quoted sequence number, host order; UDP: 0 */
	uint32_t mtu;          /* the next-hop MTU it reports, after the kernel's clamp (below) */
	uint8_t router[16];    /* the ICMP packet's own source: who said so (IPv4: first 4 bytes, rest zero) */
};

enum icmp_err_verdict {
	ICMP_ERR_PMTU = 0,  /* a well-formed PMTU message about a TCP or UDP packet: *e filled */
	ICMP_ERR_OTHER,     /* not ICMP/ICMPv6, or another type/code: not ours to judge (the caller passes it on) */
	ICMP_ERR_BAD,       /* an ICMP PMTU message we ignore: truncated, bad IPv4 header or ICMP checksum, quoted
			     * header insane or not TCP/UDP, too short to hold the ports (and TCP's sequence), an
			     * IPv6 MTU below 1280 */
};

/* The kernel's floor for an IPv4 path MTU (ip_rt_min_pmtu: 512 + 20 + 20); a lower report is raised to it. */
#define ICMP_ERR_MIN_PMTU4 552u
/* IPv6's minimum link MTU (RFC 8200 5); the kernel ignores a lower report (tcp_v6_err). */
#define ICMP_ERR_MIN_MTU6 1280u

/*
 * Reads `len` bytes of a whole Ethernet frame as received (one optional
 * 802.1Q tag, then IPv4 or IPv6) and never more.  The checks, in order:
 *   - not IPv4 or IPv6, or an IP header whose protocol (next header) is
 *     not ICMP (ICMPv6), extension headers included: OTHER;
 *   - an IP header cut, inconsistent or (IPv4) with a wrong checksum, or
 *     an IPv4 fragment: BAD;
 *   - an ICMP type and code other than 3/4 (ICMPv6: 2/0): OTHER;
 *   - an ICMP header cut, a wrong ICMP checksum (over the whole message,
 *     with ICMPv6's pseudo-header), an IPv6 MTU below 1280: BAD;
 *   - the quoted packet: an IP header of the outer's family, whole
 *     (IPv4: version 4, ihl >= 5; IPv6: version 6, next header TCP or UDP
 *     directly), protocol TCP or UDP, and 8 bytes of its L4 header after
 *     it, else BAD.  The quoted IPv4 header's checksum is not checked:
 *     the kernel does not, and routers change its TTL.
 * An IPv4 MTU below ICMP_ERR_MIN_PMTU4 (0 from old routers included)
 * becomes ICMP_ERR_MIN_PMTU4.  Fills every field of *e on ICMP_ERR_PMTU;
 * leaves *e unspecified otherwise.
 */
enum icmp_err_verdict gsoi_icmp_err_parse(const uint8_t *frame, uint32_t len, struct icmp_err *e);

#endif
