/*
 * The pure half of the route lookup (route.c; not installed): reading
 * the kernel's RTM_NEWROUTE answer.  Apart from the socket code so that
 * the fuzz target (tests/fuzz/fuzz_rtnl.c) reaches it; only route.c
 * calls it.
 */
#ifndef GSO_XDP_ROUTE_INTERNAL_H
#define GSO_XDP_ROUTE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the kernel's answer to RTM_GETROUTE says. */
struct route_ans {
	uint8_t type;        /* RTN_* */
	uint32_t table;      /* 0: no table matched */
	int oif;
	bool has_gw, has_via, has_src;
	uint8_t gw[16], src[16];
	uint32_t mtu;        /* RTAX_MTU, 0 if none */
};

/*
 * Reads one answer of `len` bytes at `buf` (4-byte aligned, as a receive
 * buffer is) for a destination of `alen` bytes (4 or 16): 0 with *ra
 * filled, or -EPROTO when it is no RTM_NEWROUTE or too short for its
 * rtmsg.  Attributes of other lengths than their kind has, and a chain
 * that runs past the message, are left out.
 */
int gsoi_route_reply(const void *buf, size_t len, size_t alen, struct route_ans *ra);

#endif
