/*
 * rtnetlink link and neighbour monitor (rtnl_internal.h).
 *
 * Everything that comes from the socket is decoded by gsoi_rtmon_parse(), which
 * trusts no length in the buffer: every message and attribute is checked
 * against what is left before it is read, headers are copied out with
 * memcpy (the buffer need not be aligned), and a message whose attribute
 * chain runs past its end is dropped whole rather than decoded in part.
 */
#include "rtnl_internal.h"
#include "link_internal.h"

#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <gso/tmpl.h>

/*
 * Large enough that a burst of notifications (every neighbour of an
 * interface going STALE at once, a link flap) does not overflow; the
 * kernel doubles the value and caps SO_RCVBUF at net.core.rmem_max, which
 * SO_RCVBUFFORCE (CAP_NET_ADMIN) ignores.
 */
#define RTMON_RCVBUF (1 << 20)

/*
 * One datagram carries one notification; RTM_NEWLINK is the largest (a few
 * KiB, more with many VFs).  A datagram that does not fit is reported as an
 * overrun: something was lost, so the caller re-queries.
 */
#define RTMON_BUF 32768

int gsoi_rtmon_open(struct rtmon *m, unsigned groups)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd, sz = RTMON_RCVBUF, err;

	m->fd = -1;
	m->overruns = 0;
	m->events = 0;
	if (!groups || (groups & ~(RTMON_LINK | RTMON_NEIGH | RTMON_ROUTE)))
		return -EINVAL;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz)); /* best effort */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	/*
	 * NETLINK_ADD_MEMBERSHIP (Linux 2.6.14) takes group numbers rather than
	 * the 32-bit nl_groups mask, which cannot name groups above 32.
	 */
	if (groups & RTMON_LINK) {
		int g = RTNLGRP_LINK;

		if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)))
			goto fail;
	}
	if (groups & RTMON_NEIGH) {
		int g = RTNLGRP_NEIGH;

		if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)))
			goto fail;
	}
	if (groups & RTMON_ROUTE) {
		int g4 = RTNLGRP_IPV4_ROUTE, g6 = RTNLGRP_IPV6_ROUTE;

		if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g4, sizeof(g4)) ||
		    setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &g6, sizeof(g6)))
			goto fail;
	}
	m->fd = fd;
	return 0;
fail:
	err = -errno;
	close(fd);
	return err;
}

void gsoi_rtmon_close(struct rtmon *m)
{
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
}

/*
 * Walk the attributes in [p, p + len).  Calls fn for each and returns 0, or
 * -EBADMSG when an attribute's length is impossible (then the message is
 * not to be trusted).  Up to 3 trailing bytes are padding, not an error.
 */
typedef void (*rta_fn)(void *arg, unsigned type, const uint8_t *data, size_t len);

static int rta_walk(const uint8_t *p, size_t len, rta_fn fn, void *arg)
{
	while (len >= sizeof(struct rtattr)) {
		struct rtattr a;

		memcpy(&a, p, sizeof(a));
		if (a.rta_len < sizeof(a) || a.rta_len > len)
			return -EBADMSG;
		fn(arg, a.rta_type & NLA_TYPE_MASK, p + sizeof(a), a.rta_len - sizeof(a));
		if (RTA_ALIGN(a.rta_len) >= len)
			return 0;
		p += RTA_ALIGN(a.rta_len);
		len -= RTA_ALIGN(a.rta_len);
	}
	return 0;
}

static void route_attr(void *arg, unsigned type, const uint8_t *data, size_t len)
{
	struct rtmon_event *ev = arg;

	if (type == RTA_OIF && len == sizeof(ev->ifindex))
		memcpy(&ev->ifindex, data, sizeof(ev->ifindex));
}

static void link_attr(void *arg, unsigned type, const uint8_t *data, size_t len)
{
	struct rtmon_event *ev = arg;

	if (type == IFLA_MTU && len == sizeof(ev->mtu))
		memcpy(&ev->mtu, data, sizeof(ev->mtu));
}

struct neigh_attrs {
	struct rtmon_event *ev;
	size_t alen;   /* address length of the family */
	bool has_dst;
	bool bad_dst;  /* NDA_DST of another length */
};

static void neigh_attr(void *arg, unsigned type, const uint8_t *data, size_t len)
{
	struct neigh_attrs *na = arg;

	if (type == NDA_DST) {
		if (len != na->alen) {
			na->bad_dst = true;
			return;
		}
		memcpy(na->ev->addr, data, len);
		na->has_dst = true;
	} else if (type == NDA_LLADDR) {
		/* Only Ethernet-sized addresses; NOARP devices report 0 bytes. */
		na->ev->has_mac = len == sizeof(na->ev->mac);
		if (na->ev->has_mac)
			memcpy(na->ev->mac, data, len);
	}
}

/* Decode one message (nh, already bounds-checked, copied from msg); 1 if ev was filled. */
static int decode(const struct nlmsghdr *nh, const uint8_t *msg, struct rtmon_event *ev)
{
	const uint8_t *body = msg + NLMSG_HDRLEN;
	size_t blen = nh->nlmsg_len - NLMSG_HDRLEN;

	memset(ev, 0, sizeof(*ev));
	switch (nh->nlmsg_type) {
	case RTM_NEWLINK:
	case RTM_DELLINK: {
		struct ifinfomsg ifi;
		size_t hl = NLMSG_ALIGN(sizeof(ifi));

		if (blen < sizeof(ifi))
			return 0;
		memcpy(&ifi, body, sizeof(ifi));
		/* AF_BRIDGE port messages share the group; they repeat what AF_UNSPEC says. */
		if (ifi.ifi_family != AF_UNSPEC)
			return 0;
		ev->type = nh->nlmsg_type == RTM_NEWLINK ? RTMON_EV_LINK : RTMON_EV_LINK_GONE;
		ev->ifindex = ifi.ifi_index;
		ev->ifi_flags = ifi.ifi_flags;
		if (blen > hl && rta_walk(body + hl, blen - hl, link_attr, ev))
			return 0;
		return 1;
	}
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH: {
		struct ndmsg ndm;
		size_t hl = NLMSG_ALIGN(sizeof(ndm));
		struct neigh_attrs na = { .ev = ev };

		if (blen < sizeof(ndm))
			return 0;
		memcpy(&ndm, body, sizeof(ndm));
		/* Bridge FDB entries (AF_BRIDGE) and proxy entries are not neighbours. */
		if (ndm.ndm_family == AF_INET) {
			ev->l3 = GSO_L3_IPV4;
			na.alen = 4;
		} else if (ndm.ndm_family == AF_INET6) {
			ev->l3 = GSO_L3_IPV6;
			na.alen = 16;
		} else {
			return 0;
		}
		if (ndm.ndm_flags & NTF_PROXY)
			return 0;
		if (blen > hl && rta_walk(body + hl, blen - hl, neigh_attr, &na))
			return 0;
		if (!na.has_dst || na.bad_dst)
			return 0;
		ev->type = nh->nlmsg_type == RTM_NEWNEIGH ? RTMON_EV_NEIGH : RTMON_EV_NEIGH_GONE;
		ev->ifindex = ndm.ndm_ifindex;
		ev->nud_state = ndm.ndm_state;
		return 1;
	}
	case RTM_NEWROUTE:
	case RTM_DELROUTE: {
		struct rtmsg rtm;
		size_t hl = NLMSG_ALIGN(sizeof(rtm));

		if (blen < sizeof(rtm))
			return 0;
		memcpy(&rtm, body, sizeof(rtm));
		if (rtm.rtm_family != AF_INET && rtm.rtm_family != AF_INET6)
			return 0;
		if (blen > hl && rta_walk(body + hl, blen - hl, route_attr, ev))
			return 0;
		ev->type = RTMON_EV_ROUTE;
		ev->l3 = rtm.rtm_family == AF_INET ? GSO_L3_IPV4 : GSO_L3_IPV6;
		if (ev->ifindex < 0)
			ev->ifindex = 0;
		return 1;
	}
	default:
		return 0; /* NLMSG_ERROR, NLMSG_DONE, other families' notifications */
	}
}

int gsoi_rtmon_parse(const void *buf, size_t len, rtmon_fn fn, void *ctx)
{
	const uint8_t *p = buf;
	int n = 0;

	while (len >= NLMSG_HDRLEN) {
		struct nlmsghdr nh;
		struct rtmon_event ev;

		memcpy(&nh, p, sizeof(nh));
		/* A length we cannot step over ends the buffer: nothing after it can be found. */
		if (nh.nlmsg_len < NLMSG_HDRLEN || nh.nlmsg_len > len)
			break;
		if (decode(&nh, p, &ev)) {
			fn(ctx, &ev);
			n++;
		}
		if (NLMSG_ALIGN(nh.nlmsg_len) >= len)
			break;
		p += NLMSG_ALIGN(nh.nlmsg_len);
		len -= NLMSG_ALIGN(nh.nlmsg_len);
	}
	return n;
}

int gsoi_rtmon_read(struct rtmon *m, rtmon_fn fn, void *ctx)
{
	uint8_t buf[RTMON_BUF] __attribute__((aligned(8)));
	bool overrun = false;
	int n = 0;

	if (m->fd < 0)
		return -EBADF;
	for (;;) {
		struct sockaddr_nl from;
		socklen_t fl = sizeof(from);
		/* With MSG_TRUNC netlink returns the datagram's real length: a cut one shows. */
		ssize_t r = recvfrom(m->fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&from, &fl);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno != ENOBUFS)
				return -errno;
			/* The kernel dropped notifications; the queue is still readable. */
			m->overruns++;
			overrun = true;
			continue;
		}
		/* Only the kernel (port 0) speaks for the kernel. */
		if (fl < sizeof(from) || from.nl_pid != 0)
			continue;
		if ((size_t)r > sizeof(buf)) {
			overrun = true;
			continue;
		}
		n += gsoi_rtmon_parse(buf, (size_t)r, fn, ctx);
	}
	if (overrun) {
		struct rtmon_event ev = { .type = RTMON_EV_OVERRUN };

		fn(ctx, &ev);
		n++;
	}
	m->events += (uint64_t)n;
	return n;
}

int gsoi_rtnl_link_flags(int ifindex, uint32_t *ifi_flags)
{
	struct link_info li;
	int err;

	if (ifindex <= 0)
		return -ENODEV;
	memset(&li, 0, sizeof(li));
	/* The backends' RTM_GETLINK exchange (link_info.c) answers this too. */
	err = gsoi_link_rtnl(ifindex, &li);
	if (!err)
		*ifi_flags = li.ifi_flags;
	return err;
}

bool gsoi_rtnl_link_usable(uint32_t ifi_flags)
{
	/* IFF_RUNNING in rtnetlink's ifi_flags is the operstate (dev_get_flags()). */
	return (ifi_flags & (IFF_UP | IFF_RUNNING)) == (IFF_UP | IFF_RUNNING);
}
