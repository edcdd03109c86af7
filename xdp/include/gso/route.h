/*
 * libgso-xdp addressing: what the kernel knows about reaching a
 * destination, asked over rtnetlink, so that a user-space sender builds
 * the same Ethernet and IP headers the kernel would.
 *
 *   gso_route__lookup(): RTM_GETROUTE for the interface, the next hop
 *   (gateway, or the destination itself on a connected route) and the
 *   source address the kernel would pick; the interface's own MAC and MTU;
 *   the next hop's link-layer address from the neighbour table
 *   (RTM_GETNEIGH).  When the neighbour is unknown (or failed), the kernel
 *   is asked to resolve it (RTM_NEWNEIGH with NTF_USE: ARP or neighbour
 *   discovery, sent by the kernel itself) and the call waits a bounded
 *   time for the answer (RTNLGRP_NEIGH notifications).  A STALE entry is
 *   used as it is (the kernel would too) and nudged the same way, since
 *   frames sent around the kernel never refresh it.  Link-local IPv6
 *   destinations need `ifindex`.
 *
 * IPv4 and IPv6, in the network namespace of the calling thread.  No
 * state is kept between calls: every call asks the kernel again.
 * Conventions as in <gso/dev.h>: 0 or a negative errno, output structs
 * start with `size_t sz` (declare them with GSO_OPTS), nothing is printed.
 */
#ifndef GSO_ROUTE_H
#define GSO_ROUTE_H

#include <stdbool.h>
#include <gso/common.h>
#include <gso/tmpl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How long gso_route__lookup() waits for neighbour resolution when timeout_ms is 0. */
#define GSO_ROUTE_DEF_TIMEOUT_MS 3000
/* The largest timeout_ms accepted (a minute). */
#define GSO_ROUTE_MAX_TIMEOUT_MS 60000

/* struct gso_route.flags */
#define GSO_ROUTE_F_GATEWAY (1u << 0) /* the next hop is a gateway (not the destination itself) */
#define GSO_ROUTE_F_RESOLVED (1u << 1) /* the neighbour had to be resolved by this call */
#define GSO_ROUTE_F_NOARP   (1u << 2) /* the interface needs no link-layer address (dst_mac is zero) */

struct gso_route {
	size_t sz;
	int ifindex;          /* interface the route leaves by */
	uint8_t l3;           /* GSO_L3_IPV4 or GSO_L3_IPV6 (enum gso_l3) */
	uint8_t dst[16];      /* the destination asked about (IPv4 in the first 4 bytes, rest zero) */
	uint8_t src[16];      /* the source address the kernel would use for it */
	uint8_t nexthop[16];  /* the gateway, or dst on a directly connected route */
	uint8_t src_mac[6];   /* the interface's own MAC */
	uint8_t dst_mac[6];   /* the next hop's MAC */
	uint32_t mtu;         /* the route's MTU if it has one, else the interface's (L3 bytes) */
	uint32_t flags;       /* GSO_ROUTE_F_* */
	size_t :0;
};
#define gso_route__last_field flags

/*
 * Look up how the kernel would send to `dst` (`l3` GSO_L3_IPV4: 4 bytes,
 * GSO_L3_IPV6: 16 bytes) and resolve the next hop's MAC, waiting at most
 * `timeout_ms` for it (0 = GSO_ROUTE_DEF_TIMEOUT_MS).  With `ifindex` > 0
 * the route must leave by that interface (RTA_OIF: a connected route on
 * it, or its default route); 0 lets the kernel choose.  Fills `out` up to
 * out->sz.
 *
 * Returns 0, or
 *   -EINVAL        NULL, bad sz, unknown l3, timeout out of range, a
 *                  multicast/broadcast/unspecified/loopback dst
 *   -ENETUNREACH   no route (or an unreachable/blackhole/prohibit one, or
 *                  a route that leaves by another interface than ifindex)
 *   -ENODEV        ifindex names no interface
 *   -EHOSTUNREACH  the next hop did not answer within timeout_ms (the
 *                  neighbour entry is INCOMPLETE or FAILED), or the kernel
 *                  marked it FAILED before the timeout
 *   -EPERM         resolution needs CAP_NET_ADMIN and the caller lacks it
 *   another -errno of the netlink socket
 * On error `out` is not written.
 */
GSO_API int gso_route__lookup(int l3, const uint8_t *dst, int ifindex, int timeout_ms,
			      struct gso_route *out);

/*
 * The addressing part of a template from a route: l3, Ethernet source and
 * destination, IP source and destination, and DF for IPv4 (as Linux sets
 * it on TCP and on UDP with path MTU discovery).  Ports, l4 and the rest
 * of `f` are left as they are.  Returns 0, or -EINVAL (NULL, a route
 * whose sz or l3 is not set).
 */
GSO_API int gso_route__tmpl_fields(const struct gso_route *r, struct gso_tmpl_fields *f);

#ifdef __cplusplus
}
#endif
#endif
