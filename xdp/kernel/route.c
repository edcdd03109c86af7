/*
 * gso_route__lookup(): the kernel's own answer to "how would you send to
 * this address", asked over rtnetlink in the calling thread's namespace.
 *
 *   1. RTM_GETROUTE (RTA_DST, RTA_OIF): the kernel runs its output route
 *      lookup, as for a socket's first packet, and answers with the route
 *      it made: type, interface, gateway, the source address it selected,
 *      metrics (MTU).
 *   2. The interface's flags (NOARP needs no neighbour), MAC and MTU.
 *   3. RTM_GETNEIGH for the next hop.  When there is no valid entry, the
 *      kernel is asked to resolve it with RTM_NEWNEIGH + NTF_USE, and the
 *      answer is awaited on an RTNLGRP_NEIGH monitor, with a re-query every
 *      RESOLVE_POLL_MS in case a notification is lost.
 *
 * One NETLINK_ROUTE socket carries every request of a call; replies are
 * matched by sequence number.  rtnetlink handles a request inside the
 * sender's sendto(), so a reply is queued before sendto() returns; the
 * waits on it are bounded by the call's deadline only as a safeguard.
 */
#include <gso/route.h>
#include <gso/tmpl.h>

#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "link_internal.h"
#include "opts_internal.h"
#include "route_internal.h"
#include "rtnl_internal.h"

/* How often the neighbour entry is asked for again while waiting. */
#define RESOLVE_POLL_MS 100
/* Replies here are a route or a neighbour entry: well under 1 KiB. */
#define REPLY_BUF 8192

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- one request socket -------------------------------------------------- */

struct nl {
	int fd;
	uint32_t seq;
	int64_t deadline; /* CLOCK_MONOTONIC ms */
	uint8_t req[256] __attribute__((aligned(8)));
	uint8_t buf[REPLY_BUF] __attribute__((aligned(8)));
	size_t len;       /* bytes of reply in buf */
};

/* Start a request: header plus the family header `hdr` of `hlen` bytes. */
static void req_init(struct nl *s, uint16_t type, uint16_t flags, const void *hdr, size_t hlen)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)s->req;

	memset(s->req, 0, sizeof(s->req));
	nh->nlmsg_len = NLMSG_LENGTH(hlen);
	nh->nlmsg_type = type;
	nh->nlmsg_flags = NLM_F_REQUEST | flags;
	nh->nlmsg_seq = ++s->seq;
	memcpy(NLMSG_DATA(nh), hdr, hlen);
}

static void req_attr(struct nl *s, uint16_t type, const void *data, size_t len)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)s->req;
	struct rtattr *a = (struct rtattr *)(s->req + NLMSG_ALIGN(nh->nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/*
 * Send the request and wait for its answer.  0 with the answer in buf/len
 * (len 0 for a bare ack), the kernel's -errno from NLMSG_ERROR, or
 * -ETIMEDOUT.  Datagrams of other sequence numbers (the late answer to an
 * earlier request) are dropped.
 */
static int nl_ask(struct nl *s)
{
	const struct nlmsghdr *req = (const struct nlmsghdr *)s->req;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	if (sendto(s->fd, s->req, req->nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	for (;;) {
		int64_t left = s->deadline - now_ms();
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, left > 0 ? (int)left : 0) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		r = recv(s->fd, s->buf, sizeof(s->buf), MSG_DONTWAIT | MSG_TRUNC);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN && left > 0)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		if ((size_t)r > sizeof(s->buf))
			return -EMSGSIZE;
		const struct nlmsghdr *nh = (const struct nlmsghdr *)s->buf;
		if (!NLMSG_OK(nh, (unsigned)r) || nh->nlmsg_seq != req->nlmsg_seq)
			continue;
		if (nh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(nh);

			if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				return -EPROTO;
			s->len = 0;
			return e->error > 0 ? -EPROTO : e->error;
		}
		s->len = (size_t)r;
		return 0;
	}
}

/* ---- 1. the route --------------------------------------------------------- */

static void route_attrs(const struct rtmsg *rtm, int rem, size_t alen, struct route_ans *ra)
{
	for (const struct rtattr *a = RTM_RTA(rtm); RTA_OK(a, rem); a = RTA_NEXT(a, rem)) {
		size_t n = RTA_PAYLOAD(a);

		switch (a->rta_type) {
		case RTA_OIF:
			if (n == 4)
				memcpy(&ra->oif, RTA_DATA(a), 4);
			break;
		case RTA_TABLE:
			if (n == 4)
				memcpy(&ra->table, RTA_DATA(a), 4);
			break;
		case RTA_GATEWAY:
			ra->has_gw = n == alen;
			if (ra->has_gw)
				memcpy(ra->gw, RTA_DATA(a), alen);
			break;
		case RTA_VIA:
			ra->has_via = true;
			break;
		case RTA_PREFSRC:
			ra->has_src = n == alen;
			if (ra->has_src)
				memcpy(ra->src, RTA_DATA(a), alen);
			break;
		case RTA_METRICS: {
			int mrem = (int)n;

			for (const struct rtattr *m = RTA_DATA(a); RTA_OK(m, mrem); m = RTA_NEXT(m, mrem))
				if (m->rta_type == RTAX_MTU && RTA_PAYLOAD(m) == 4)
					memcpy(&ra->mtu, RTA_DATA(m), 4);
			break;
		}
		default:
			break;
		}
	}
}

int gsoi_route_reply(const void *buf, size_t len, size_t alen, struct route_ans *ra)
{
	const struct nlmsghdr *nh = buf;

	/* nl_ask() checked the length against what it received; this holds for any buffer. */
	if (len < NLMSG_HDRLEN || nh->nlmsg_len > len || nh->nlmsg_type != RTM_NEWROUTE ||
	    nh->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg)))
		return -EPROTO;
	const struct rtmsg *r = NLMSG_DATA(nh);
	memset(ra, 0, sizeof(*ra));
	ra->type = r->rtm_type;
	ra->table = r->rtm_table; /* RTA_TABLE, when present, has all 32 bits */
	route_attrs(r, (int)RTM_PAYLOAD(nh), alen, ra);
	return 0;
}

/*
 * RTM_GETROUTE without an input interface runs ip_route_output_key() /
 * ip6_route_output(), the lookup a connecting socket makes, and the answer
 * (rt_fill_info(), rt6_fill_info()) carries the source address that lookup
 * selected as RTA_PREFSRC.  RTM_F_LOOKUP_TABLE makes IPv4 report the
 * table that matched, or 0 when none did (kernels without the flag say
 * "main" and lose only the check in route_verdict()).
 */
static int route_get(struct nl *s, int family, const uint8_t *dst, size_t alen, int ifindex,
		     struct route_ans *ra)
{
	struct rtmsg rtm = {
		.rtm_family = (uint8_t)family,
		.rtm_dst_len = (uint8_t)(alen * 8),
		.rtm_flags = RTM_F_LOOKUP_TABLE,
	};
	int err;

	req_init(s, RTM_GETROUTE, 0, &rtm, sizeof(rtm));
	req_attr(s, RTA_DST, dst, alen);
	if (ifindex > 0) {
		uint32_t oif = (uint32_t)ifindex;

		req_attr(s, RTA_OIF, &oif, sizeof(oif));
	}
	err = nl_ask(s);
	if (err)
		return err;
	return gsoi_route_reply(s->buf, s->len, alen, ra);
}

/* The kernel's refusals, and routes that lead nowhere a sender can use. */
static int route_verdict(int kernel_err, const struct route_ans *ra, int ifindex)
{
	switch (kernel_err) {
	case 0:
		break;
	/*
	 * What an output lookup fails with: no route (ENETUNREACH), and the
	 * fib_props[] errors of the route types that refuse: unreachable
	 * (EHOSTUNREACH), prohibit (EACCES), throw (EAGAIN), blackhole
	 * (EINVAL; the request itself is well formed, it was checked here).
	 */
	case -ENETUNREACH:
	case -EHOSTUNREACH:
	case -EACCES:
	case -EAGAIN:
	case -EINVAL:
		return -ENETUNREACH;
	default:
		return kernel_err;
	}
	switch (ra->type) {
	case RTN_UNICAST:
		break;
	case RTN_LOCAL:     /* one of our own addresses: it would go over loopback */
	case RTN_ANYCAST:   /* an IPv6 anycast address of ours */
	case RTN_BROADCAST:
	case RTN_MULTICAST:
		return -EINVAL;
	default:
		return -ENETUNREACH;
	}
	/*
	 * With an output interface and no matching route, IPv4 assumes the
	 * destination is on that link (ip_route_output_key_hash_rcu(), "routing
	 * tables are wrong"); RTM_F_LOOKUP_TABLE shows it as table 0.  That is no
	 * route for our purposes.
	 */
	if (ra->table == 0)
		return -ENETUNREACH;
	/*
	 * Both families honour RTA_OIF (IPv6 strictly because the request has
	 * no source address: RT6_LOOKUP_F_IFACE in ip6_route_output_flags());
	 * this keeps a route that leaves elsewhere from ever being reported as
	 * leaving by ifindex.
	 */
	if (ifindex > 0 && ra->oif != ifindex)
		return -ENETUNREACH;
	/*
	 * An IPv4 route through an IPv6 gateway (RTA_VIA, Linux 5.2) would need
	 * the gateway resolved by neighbour discovery and a next hop of the
	 * other family in struct gso_route: not supported.
	 */
	if (ra->has_via && !ra->has_gw)
		return -ENETUNREACH;
	if (ra->oif <= 0)
		return -ENETUNREACH;
	return 0;
}

/*
 * The source address when the answer had none: connect() on a UDP socket
 * runs the same source selection and sends nothing.  A link-local IPv6
 * destination needs the interface as its scope.
 */
static int src_by_connect(int family, const uint8_t *dst, int oif, uint8_t src[16])
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, err = 0;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(9);
		memcpy(&in->sin_addr, dst, 4);
		sl = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(9);
		memcpy(&in6->sin6_addr, dst, 16);
		if (IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr))
			in6->sin6_scope_id = (uint32_t)oif;
		sl = sizeof(*in6);
	}
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&ss, sl) || getsockname(fd, (struct sockaddr *)&ss, &sl)) {
		err = -errno;
	} else if (family == AF_INET) {
		memcpy(src, &((struct sockaddr_in *)&ss)->sin_addr, 4);
	} else {
		memcpy(src, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	}
	close(fd);
	return err;
}

/* ---- 3. the neighbour ----------------------------------------------------- */

struct nb_want {
	int ifindex;
	uint8_t l3;
	uint8_t addr[16];
	bool armed;      /* FAILED counts: our own resolution request has been handled */
	bool requery;    /* the monitor lost notifications */
	int result;      /* 0 pending, 1 resolved, -1 failed */
	uint16_t nud;
	uint8_t mac[6];
};

static void nb_got(void *ctx, const struct rtmon_event *ev)
{
	struct nb_want *w = ctx;

	if (ev->type == RTMON_EV_OVERRUN) {
		w->requery = true;
		return;
	}
	if (ev->type != RTMON_EV_NEIGH || ev->ifindex != w->ifindex || ev->l3 != w->l3 ||
	    memcmp(ev->addr, w->addr, sizeof(w->addr)) || w->result > 0)
		return;
	if ((ev->nud_state & RTNL_NUD_VALID) && ev->has_mac) {
		w->result = 1;
		w->nud = ev->nud_state;
		memcpy(w->mac, ev->mac, sizeof(w->mac));
	} else if ((ev->nud_state & NUD_FAILED) && w->armed) {
		w->result = -1;
	}
}

static struct ndmsg nb_ndmsg(const struct nb_want *w)
{
	return (struct ndmsg){
		.ndm_family = w->l3 == GSO_L3_IPV4 ? AF_INET : AF_INET6,
		.ndm_ifindex = w->ifindex,
	};
}

/* RTM_GETNEIGH for one entry (neigh_get(), Linux 5.0); absent is not an error. */
static int nb_get(struct nl *s, struct nb_want *w)
{
	struct ndmsg ndm = nb_ndmsg(w);
	int err;

	req_init(s, RTM_GETNEIGH, 0, &ndm, sizeof(ndm));
	req_attr(s, NDA_DST, w->addr, w->l3 == GSO_L3_IPV4 ? 4 : 16);
	err = nl_ask(s);
	if (err == -ENOENT)
		return 0;
	if (!err)
		gsoi_rtmon_parse(s->buf, s->len, nb_got, w);
	return err;
}

/*
 * Ask the kernel to resolve the entry, as its own transmit path does:
 * RTM_NEWNEIGH with NTF_USE makes neigh_add() create the entry if needed
 * (NLM_F_CREATE) and call neigh_event_send(), which moves NONE/FAILED to
 * INCOMPLETE and sends the first ARP request / neighbour solicitation at
 * once, or STALE to DELAY (a unicast probe follows).  Since the NTF_MANAGED
 * rework (Linux 5.16; as read in 6.18) the request first goes through
 * __neigh_update(NEIGH_UPDATE_F_USE), which leaves the state alone except
 * that it drops NUD_PERMANENT: so never sent for PERMANENT or NOARP
 * entries.  Needs CAP_NET_ADMIN (-EPERM).
 *
 * Seen on Linux 6.18 with veth: the ARP request leaves at once.  A
 * neighbour solicitation does not while the interface's link-local
 * address is still tentative (the first ~1-2 s after the link came up):
 * with no packet to take a source address from, ndisc_send_ns() wants a
 * link-local one that finished DAD and silently skips the probe; the
 * kernel's retransmission a second later (RETRANS_TIME) goes out.
 */
static int nb_use(struct nl *s, const struct nb_want *w)
{
	struct ndmsg ndm = nb_ndmsg(w);

	ndm.ndm_flags = NTF_USE;
	req_init(s, RTM_NEWNEIGH, NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE, &ndm, sizeof(ndm));
	req_attr(s, NDA_DST, w->addr, w->l3 == GSO_L3_IPV4 ? 4 : 16);
	return nl_ask(s);
}

static int nb_wait(struct nl *s, struct nb_want *w)
{
	int64_t next_get = now_ms() + RESOLVE_POLL_MS;
	struct rtmon m;
	int err;

	/* Subscribed before the request, so that the answer cannot slip past. */
	err = gsoi_rtmon_open(&m, RTMON_NEIGH);
	if (err)
		return err;
	err = nb_use(s, w);
	if (err)
		goto out;
	/*
	 * Notifications are queued on the monitor synchronously, so everything
	 * sent before our request was handled is queued by now: a FAILED among
	 * it is left from an earlier attempt and must not end this one.
	 */
	err = gsoi_rtmon_read(&m, nb_got, w);
	if (err < 0)
		goto out;
	err = 0;
	w->armed = true;
	while (!w->result) {
		int64_t now = now_ms(), until;
		struct pollfd pfd = { .fd = m.fd, .events = POLLIN };

		if (now >= s->deadline)
			break;
		if (now >= next_get || w->requery) {
			w->requery = false;
			next_get = now + RESOLVE_POLL_MS;
			err = nb_get(s, w);
			if (err == -ETIMEDOUT)
				break;
			if (err)
				goto out;
			continue;
		}
		until = next_get < s->deadline ? next_get : s->deadline;
		if (poll(&pfd, 1, (int)(until - now)) < 0 && errno != EINTR) {
			err = -errno;
			goto out;
		}
		err = gsoi_rtmon_read(&m, nb_got, w);
		if (err < 0)
			goto out;
		err = 0;
	}
	err = w->result > 0 ? 0 : -EHOSTUNREACH;
out:
	gsoi_rtmon_close(&m);
	return err;
}

/* The next hop's MAC into w->mac; *resolved when this call had to ask for it. */
static int nb_resolve(struct nl *s, struct nb_want *w, bool *resolved)
{
	int err = nb_get(s, w);

	if (err)
		return err;
	if (w->result > 0) {
		/*
		 * The kernel would send through a STALE entry and re-verify it
		 * (neigh_event_send() on its transmit path); frames sent over
		 * AF_XDP bypass that, so nudge it the same way, without waiting.
		 * Best effort: without CAP_NET_ADMIN the stale MAC still stands.
		 */
		if (w->nud & NUD_STALE)
			nb_use(s, w);
		return 0;
	}
	*resolved = true;
	return nb_wait(s, w);
}

/* ---- the call ------------------------------------------------------------- */

/* Addresses no unicast route leads to: unspecified, loopback, multicast, broadcast. */
static bool dst_ok(int l3, const uint8_t *a)
{
	static const uint8_t zero[16];

	if (l3 == GSO_L3_IPV4)
		return memcmp(a, zero, 4) && a[0] != 127 && (a[0] & 0xf0) != 0xe0 &&
		       !(a[0] == 255 && a[1] == 255 && a[2] == 255 && a[3] == 255);
	if (a[0] == 0xff || !memcmp(a, zero, 16))
		return false;
	return memcmp(a, zero, 15) || a[15] != 1; /* ::1 */
}

int gso_route__lookup(int l3, const uint8_t *dst, int ifindex, int timeout_ms,
		      struct gso_route *out)
{
	struct nl s = { .fd = -1 };
	struct route_ans ra = { 0 };
	struct gso_route r;
	uint32_t flags = 0;
	size_t alen;
	int family, err;

	if (!dst || !GSO_OUT_VALID(out) || ifindex < 0)
		return -EINVAL;
	if (l3 == GSO_L3_IPV4) {
		family = AF_INET;
		alen = 4;
	} else if (l3 == GSO_L3_IPV6) {
		family = AF_INET6;
		alen = 16;
	} else {
		return -EINVAL;
	}
	if (timeout_ms < 0 || timeout_ms > GSO_ROUTE_MAX_TIMEOUT_MS || !dst_ok(l3, dst))
		return -EINVAL;
	if (!timeout_ms)
		timeout_ms = GSO_ROUTE_DEF_TIMEOUT_MS;
	s.deadline = now_ms() + timeout_ms;
	if (ifindex > 0) {
		err = gsoi_rtnl_link_flags(ifindex, &flags);
		if (err)
			return err;
	}

	memset(&r, 0, sizeof(r));
	r.l3 = (uint8_t)l3;
	memcpy(r.dst, dst, alen);
	s.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	if (s.fd < 0)
		return -errno;
	err = route_verdict(route_get(&s, family, dst, alen, ifindex, &ra), &ra, ifindex);
	if (err)
		goto out;
	r.ifindex = ra.oif;
	if (ra.has_gw) {
		r.flags |= GSO_ROUTE_F_GATEWAY;
		memcpy(r.nexthop, ra.gw, alen);
	} else {
		memcpy(r.nexthop, dst, alen);
	}
	if (ra.has_src)
		memcpy(r.src, ra.src, alen);
	else if ((err = src_by_connect(family, dst, ra.oif, r.src)))
		goto out;

	if (ra.oif != ifindex && (err = gsoi_rtnl_link_flags(ra.oif, &flags)))
		goto out;
	if ((err = gsoi_link_mac(ra.oif, NULL, r.src_mac)))
		goto out;
	r.mtu = ra.mtu;
	if (!r.mtu && (err = gsoi_link_mtu(ra.oif, NULL, &r.mtu)))
		goto out;

	if (flags & (IFF_NOARP | IFF_LOOPBACK)) {
		/* No link-layer header to fill (tun, WireGuard, loopback). */
		r.flags |= GSO_ROUTE_F_NOARP;
	} else {
		struct nb_want w = { .ifindex = ra.oif, .l3 = (uint8_t)l3 };
		bool resolved = false;

		memcpy(w.addr, r.nexthop, alen);
		err = nb_resolve(&s, &w, &resolved);
		if (err)
			goto out;
		memcpy(r.dst_mac, w.mac, sizeof(r.dst_mac));
		if (resolved)
			r.flags |= GSO_ROUTE_F_RESOLVED;
	}

	GSO_OUT_PUT(out, r);
out:
	close(s.fd);
	return err;
}

int gsoi_route_mtu(uint8_t l3, const uint8_t *dst, int ifindex, uint32_t *mtu)
{
	struct nl s = { .fd = -1 };
	struct route_ans ra;
	int err;

	if (!dst || !mtu || (l3 != GSO_L3_IPV4 && l3 != GSO_L3_IPV6))
		return -EINVAL;
	/* A local question: the kernel answers at once or not at all. */
	s.deadline = now_ms() + 1000;
	s.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	if (s.fd < 0)
		return -errno;
	err = route_get(&s, l3 == GSO_L3_IPV6 ? AF_INET6 : AF_INET, dst, l3 == GSO_L3_IPV6 ? 16 : 4, ifindex, &ra);
	close(s.fd);
	if (!err)
		*mtu = ra.mtu;
	return err;
}

int gso_route__tmpl_fields(const struct gso_route *r, struct gso_tmpl_fields *f)
{
	if (!r || !f || r->sz < offsetof(struct gso_route, dst_mac) + 6 ||
	    (r->l3 != GSO_L3_IPV4 && r->l3 != GSO_L3_IPV6))
		return -EINVAL;
	f->l3 = r->l3;
	memcpy(f->eth_dst, r->dst_mac, 6);
	memcpy(f->eth_src, r->src_mac, 6);
	memcpy(f->saddr, r->src, 16);
	memcpy(f->daddr, r->dst, 16);
	f->df = r->l3 == GSO_L3_IPV4;
	return 0;
}
