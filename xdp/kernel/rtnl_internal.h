/*
 * rtnetlink plumbing shared by the route lookup (route.c) and the
 * transmit engine's link and neighbour monitor (not installed).
 *
 * A monitor is a non-blocking NETLINK_ROUTE socket subscribed to link
 * and/or neighbour notifications; its descriptor goes into the caller's
 * event loop, and gsoi_rtmon_read() decodes whatever is pending into events.
 * The kernel drops notifications when the socket's buffer overflows
 * (ENOBUFS on read): that is reported as one RTMON_EV_OVERRUN event, after
 * which the caller asks for the state it cares about again.
 *
 * Included by kernel/'s files and by the engine (engine/).
 */
#ifndef GSO_XDP_RTNL_INTERNAL_H
#define GSO_XDP_RTNL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* gsoi_rtmon_open() groups */
#define RTMON_LINK  (1u << 0) /* RTNLGRP_LINK: RTM_NEWLINK / RTM_DELLINK */
#define RTMON_NEIGH (1u << 1) /* RTNLGRP_NEIGH: RTM_NEWNEIGH / RTM_DELNEIGH (IPv4 and IPv6) */
#define RTMON_ROUTE (1u << 2) /* RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE: RTM_NEWROUTE / RTM_DELROUTE */

enum rtmon_ev_type {
	RTMON_EV_LINK = 1,    /* an interface's flags or state changed (or were reported) */
	RTMON_EV_LINK_GONE,   /* an interface was removed (or left this namespace) */
	RTMON_EV_NEIGH,       /* a neighbour entry was added or changed */
	RTMON_EV_NEIGH_GONE,  /* a neighbour entry was deleted */
	RTMON_EV_OVERRUN,     /* notifications were lost: re-query */
	RTMON_EV_ROUTE,       /* a route was added, changed or removed (what it now says: ask, gso_route) */
};

struct rtmon_event {
	uint8_t type;        /* enum rtmon_ev_type */
	int ifindex;
	/* LINK: */
	uint32_t ifi_flags;  /* IFF_* as reported (IFF_UP, IFF_RUNNING, IFF_LOWER_UP, ...) */
	uint32_t mtu;        /* IFLA_MTU, 0 if absent */
	/* NEIGH, NEIGH_GONE, ROUTE: */
	uint8_t l3;          /* GSO_L3_IPV4 or GSO_L3_IPV6 */
	/* ROUTE: ifindex is its RTA_OIF, 0 when it names none (multipath, unreachable) */
	uint8_t addr[16];    /* the neighbour's address (IPv4 in the first 4 bytes, rest zero) */
	bool has_mac;        /* NDA_LLADDR of 6 bytes was present */
	uint8_t mac[6];
	uint16_t nud_state;  /* NUD_* */
};

struct rtmon {
	int fd;              /* -1 when closed */
	uint64_t overruns;   /* ENOBUFS seen */
	uint64_t events;     /* events decoded */
};

/* NUD states that carry a usable link-layer address. */
#define RTNL_NUD_VALID 0xde /* NUD_REACHABLE|NUD_STALE|NUD_DELAY|NUD_PROBE|NUD_NOARP|NUD_PERMANENT */

typedef void (*rtmon_fn)(void *ctx, const struct rtmon_event *ev);

/* Open a monitor for `groups` (RTMON_*).  0 or -errno (m->fd = -1 then). */
int gsoi_rtmon_open(struct rtmon *m, unsigned groups);
/* Close it; idempotent. */
void gsoi_rtmon_close(struct rtmon *m);
/*
 * Read and decode everything pending, without blocking, calling fn for
 * each event in order.  Returns the number of events (>= 0), or -errno
 * of the socket (never -EAGAIN: nothing pending is 0).
 */
int gsoi_rtmon_read(struct rtmon *m, rtmon_fn fn, void *ctx);
/*
 * Decode one buffer of netlink messages as gsoi_rtmon_read() does (unit tests
 * feed it crafted messages).  Messages of other types, and malformed or
 * truncated ones, are skipped.  Returns the number of events.
 */
int gsoi_rtmon_parse(const void *buf, size_t len, rtmon_fn fn, void *ctx);

/* The interface's flags now (RTM_GETLINK).  0, -ENODEV, or -errno. */
int gsoi_rtnl_link_flags(int ifindex, uint32_t *ifi_flags);

/* A link can carry frames: administratively up and with carrier (operstate up). */
bool gsoi_rtnl_link_usable(uint32_t ifi_flags);

/*
 * The MTU the route to `dst` (l3 GSO_L3_IPV4: 4 bytes, GSO_L3_IPV6: 16)
 * by interface `ifindex` carries (RTAX_MTU, a route's own or a cached
 * path MTU of the kernel's) into *mtu, 0 when it has none: the
 * interface's applies.  One RTM_GETROUTE round trip (route.c).  0 or
 * -errno (the kernel's refusal: no route).
 */
int gsoi_route_mtu(uint8_t l3, const uint8_t *dst, int ifindex, uint32_t *mtu);

#endif
