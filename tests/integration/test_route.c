/*
 * gso_route__lookup() and the rtnetlink monitor against the kernel, in a
 * veth test-bed of our own (tests/common/gso_test.h): the test thread is
 * moved into side a, and side b's stack answers ARP and neighbour
 * discovery.  Each test starts from a flushed neighbour table, so that
 * "resolved by this call" is really exercised.  Time bounds are generous
 * upper limits; nothing here asserts speed.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/neighbour.h>

#include <gso/route.h>
#include <gso/tmpl.h>

#include "gso_test.h"
#include "kernel/rtnl_internal.h"

static struct nsbed rt_tb;
static struct rtmon rt_mon = { .fd = -1 };

static void rt_fini(void)
{
	gsoi_rtmon_close(&rt_mon);
	nsbed_destroy(&rt_tb);
}

TestSuite(route, .fini = rt_fini, .timeout = 60);

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Test-bed up, this thread in side a, side a's neighbour table empty. */
static void rt_bed(void)
{
	gso_test_require_root();
	int err = gso_testbed_create(&rt_tb);
	cr_assert_eq(err, 0, "test-bed: %s", strerror(-err));
	cr_assert_eq(nsbed_enter(&rt_tb, 0), 0);
	/*
	 * Neighbour solicitations the kernel sends on its own (no packet to
	 * take a source from) need a link-local source that has finished DAD
	 * (ndisc_send_ns()), up to ~2 s after the link came up.
	 */
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "for i in $(seq 100); do "
				   "[ -z \"$(ip -6 addr show dev %s tentative)\" ] && exit 0; sleep 0.05; "
				   "done; exit 1", rt_tb.ifname[0]), 0, "link-local address still tentative");
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip neigh flush dev %s", rt_tb.ifname[0]), 0);
}

static void addr(int l3, const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	cr_assert_eq(inet_pton(l3 == GSO_L3_IPV4 ? AF_INET : AF_INET6, s, out), 1, "%s", s);
}

static int lookup(int l3, const char *dst, int ifindex, int timeout_ms, struct gso_route *r)
{
	uint8_t a[16];

	addr(l3, dst, a);
	return gso_route__lookup(l3, a, ifindex, timeout_ms, r);
}

static void check_direct(int l3, const char *dst, const char *src)
{
	uint8_t d[16], s[16];

	addr(l3, dst, d);
	addr(l3, src, s);
	GSO_OPTS(gso_route, r);
	int err = gso_route__lookup(l3, d, 0, 0, &r);
	cr_assert_eq(err, 0, "%s: %s", dst, strerror(-err));
	cr_assert_eq(r.sz, sizeof(r));
	cr_assert_eq(r.ifindex, rt_tb.ifindex[0]);
	cr_assert_eq(r.l3, l3);
	cr_assert_eq(memcmp(r.dst, d, 16), 0);
	cr_assert_eq(memcmp(r.src, s, 16), 0, "the source the kernel picks");
	cr_assert_eq(memcmp(r.nexthop, d, 16), 0, "connected route: the next hop is dst");
	cr_assert_eq(memcmp(r.src_mac, rt_tb.mac[0], 6), 0);
	cr_assert_eq(memcmp(r.dst_mac, rt_tb.mac[1], 6), 0, "side b's MAC");
	cr_assert_eq(r.mtu, 1500);
	cr_assert_eq(r.flags, GSO_ROUTE_F_RESOLVED, "flushed table: resolved by this call (flags %#x)", r.flags);

	/* Asked again, the entry is there: same answer, nothing resolved. */
	GSO_OPTS(gso_route, r2);
	cr_assert_eq(gso_route__lookup(l3, d, 0, 0, &r2), 0);
	cr_assert_eq(r2.flags, 0);
	cr_assert_eq(memcmp(r2.dst_mac, rt_tb.mac[1], 6), 0);
	/* And with the interface named. */
	cr_assert_eq(gso_route__lookup(l3, d, rt_tb.ifindex[0], 0, &r2), 0);
	cr_assert_eq(r2.ifindex, rt_tb.ifindex[0]);
}

Test(route, ipv4_connected)
{
	rt_bed();
	check_direct(GSO_L3_IPV4, "10.77.0.2", "10.77.0.1");
}

Test(route, ipv6_connected)
{
	rt_bed();
	check_direct(GSO_L3_IPV6, "fd77::2", "fd77::1");
}

Test(route, gateway)
{
	uint8_t gw4[16], gw6[16];

	rt_bed();
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip route add 198.51.100.0/24 via 10.77.0.2 && "
				   "ip -6 route add 2001:db8::/64 via fd77::2"), 0);
	addr(GSO_L3_IPV4, "10.77.0.2", gw4);
	addr(GSO_L3_IPV6, "fd77::2", gw6);

	GSO_OPTS(gso_route, r);
	cr_assert_eq(lookup(GSO_L3_IPV4, "198.51.100.7", 0, 0, &r), 0);
	cr_assert_eq(memcmp(r.nexthop, gw4, 16), 0, "the gateway is the next hop");
	cr_assert_eq(r.flags, GSO_ROUTE_F_GATEWAY | GSO_ROUTE_F_RESOLVED);
	cr_assert_eq(memcmp(r.dst_mac, rt_tb.mac[1], 6), 0);
	cr_assert_eq(r.ifindex, rt_tb.ifindex[0]);

	GSO_OPTS(gso_route, r6);
	cr_assert_eq(lookup(GSO_L3_IPV6, "2001:db8::5", 0, 0, &r6), 0);
	cr_assert_eq(memcmp(r6.nexthop, gw6, 16), 0);
	cr_assert(r6.flags & GSO_ROUTE_F_GATEWAY);
	cr_assert_eq(memcmp(r6.dst_mac, rt_tb.mac[1], 6), 0);
}

Test(route, route_mtu)
{
	rt_bed();
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip route add 192.0.2.0/24 via 10.77.0.2 mtu 1400 && "
				   "ip -6 route add 2001:db8::/64 via fd77::2 mtu 1300"), 0);
	GSO_OPTS(gso_route, r);
	cr_assert_eq(lookup(GSO_L3_IPV4, "192.0.2.9", 0, 0, &r), 0);
	cr_assert_eq(r.mtu, 1400, "the route's MTU, not the link's: %u", r.mtu);
	cr_assert_eq(lookup(GSO_L3_IPV6, "2001:db8::9", 0, 0, &r), 0);
	cr_assert_eq(r.mtu, 1300);
	cr_assert_eq(lookup(GSO_L3_IPV4, "10.77.0.2", 0, 0, &r), 0);
	cr_assert_eq(r.mtu, 1500, "no route MTU: the interface's");
}

static void check_unanswered(int l3, const char *dst)
{
	GSO_OPTS(gso_route, r);
	memset((char *)&r + sizeof(r.sz), 0x5a, sizeof(r) - sizeof(r.sz));
	struct gso_route before = r;
	double t0 = now_s();
	int err = lookup(l3, dst, 0, 1000, &r);
	double dt = now_s() - t0;

	cr_assert_eq(err, -EHOSTUNREACH, "%s: %d", dst, err);
	cr_assert_geq(dt, 0.9, "%s: gave up after %.3f s, before the timeout", dst, dt);
	cr_assert_lt(dt, 3.0, "%s: %.3f s, far past the 1 s timeout", dst, dt);
	cr_assert_eq(memcmp(&r, &before, sizeof(r)), 0, "out written on error");
}

Test(route, unanswered_neighbour)
{
	rt_bed();
	check_unanswered(GSO_L3_IPV4, "10.77.0.99");
	check_unanswered(GSO_L3_IPV6, "fd77::99");
}

/* A FAILED entry from before the call does not end the wait at once. */
Test(route, old_failed_entry)
{
	rt_bed();
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip neigh replace 10.77.0.98 dev %s nud failed && "
				   "ip neigh show 10.77.0.98 | grep -q FAILED", rt_tb.ifname[0]), 0);
	check_unanswered(GSO_L3_IPV4, "10.77.0.98");
	/* The same for an entry that really failed: probed by a first call. */
	check_unanswered(GSO_L3_IPV6, "fd77::98");
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "sleep 3; ip -6 neigh show fd77::98 | grep -q FAILED"), 0);
	check_unanswered(GSO_L3_IPV6, "fd77::98");
}

/* A STALE entry is used as it is, and the kernel is nudged to re-verify it. */
Test(route, stale_entry)
{
	char mac[18];
	const uint8_t *m = rt_tb.mac[1];

	rt_bed();
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip neigh replace 10.77.0.2 lladdr %s dev %s nud stale",
				   mac, rt_tb.ifname[0]), 0);
	GSO_OPTS(gso_route, r);
	cr_assert_eq(lookup(GSO_L3_IPV4, "10.77.0.2", 0, 0, &r), 0);
	cr_assert_eq(r.flags, 0, "a STALE entry needs no resolution");
	cr_assert_eq(memcmp(r.dst_mac, m, 6), 0);
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip neigh show 10.77.0.2 | grep -q -e DELAY -e PROBE -e REACHABLE"),
		     0, "NTF_USE moved the entry on from STALE");
}

/* A PERMANENT entry is taken as it is and stays PERMANENT (NTF_USE would clear that). */
Test(route, permanent_entry)
{
	static const uint8_t want[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x66 };

	rt_bed();
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip neigh replace 10.77.0.60 lladdr 02:11:22:33:44:66 dev %s",
				   rt_tb.ifname[0]), 0);
	GSO_OPTS(gso_route, r);
	cr_assert_eq(lookup(GSO_L3_IPV4, "10.77.0.60", 0, 0, &r), 0);
	cr_assert_eq(memcmp(r.dst_mac, want, 6), 0);
	cr_assert_eq(r.flags, 0);
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip neigh show 10.77.0.60 | grep -q PERMANENT"), 0);
}

/* An interface without ARP: no neighbour, no MAC. */
Test(route, noarp_interface)
{
	rt_bed();
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip link add gn0 type veth peer name gn1 && "
				   "ip link set gn0 arp off up && ip link set gn1 up && "
				   "ip addr add 10.88.0.1/24 dev gn0"), 0);
	int gn0 = (int)if_nametoindex("gn0");
	cr_assert_gt(gn0, 0);
	GSO_OPTS(gso_route, r);
	memset(r.dst_mac, 0x5a, 6);
	cr_assert_eq(lookup(GSO_L3_IPV4, "10.88.0.5", 0, 0, &r), 0);
	cr_assert_eq(r.ifindex, gn0);
	cr_assert_eq(r.flags, GSO_ROUTE_F_NOARP);
	cr_assert_eq(memcmp(r.dst_mac, (uint8_t[6]){ 0 }, 6), 0);
}

/* A named interface picks the route through it: here the default route, not a more specific one elsewhere. */
Test(route, ifindex_selects_route)
{
	uint8_t gw4[16], gw6[16];

	rt_bed();
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip link add gn0 type veth peer name gn1 && "
				   "ip link set gn0 arp off up && ip link set gn1 up && "
				   "ip addr add 10.88.0.1/24 dev gn0 && ip -6 addr add fd88::1/64 dev gn0 nodad && "
				   "ip route add 203.0.113.0/24 dev gn0 && ip route add default via 10.77.0.2 && "
				   "ip -6 route add 2001:db8:5::/64 dev gn0 && ip -6 route add default via fd77::2"), 0);
	int gn0 = (int)if_nametoindex("gn0");
	cr_assert_gt(gn0, 0);
	addr(GSO_L3_IPV4, "10.77.0.2", gw4);
	addr(GSO_L3_IPV6, "fd77::2", gw6);

	GSO_OPTS(gso_route, r);
	cr_assert_eq(lookup(GSO_L3_IPV4, "203.0.113.1", 0, 0, &r), 0);
	cr_assert_eq(r.ifindex, gn0, "the kernel's choice: the specific route");
	cr_assert_eq(r.flags, GSO_ROUTE_F_NOARP);
	cr_assert_eq(lookup(GSO_L3_IPV4, "203.0.113.1", rt_tb.ifindex[0], 0, &r), 0);
	cr_assert_eq(r.ifindex, rt_tb.ifindex[0]);
	cr_assert_eq(memcmp(r.nexthop, gw4, 16), 0, "the default route through the named interface");
	cr_assert(r.flags & GSO_ROUTE_F_GATEWAY);
	cr_assert_eq(memcmp(r.dst_mac, rt_tb.mac[1], 6), 0);

	cr_assert_eq(lookup(GSO_L3_IPV6, "2001:db8:5::1", 0, 0, &r), 0);
	cr_assert_eq(r.ifindex, gn0);
	cr_assert_eq(lookup(GSO_L3_IPV6, "2001:db8:5::1", rt_tb.ifindex[0], 0, &r), 0);
	cr_assert_eq(r.ifindex, rt_tb.ifindex[0]);
	cr_assert_eq(memcmp(r.nexthop, gw6, 16), 0);
	cr_assert_eq(memcmp(r.dst_mac, rt_tb.mac[1], 6), 0);
}

/* Resolution is a neighbour-table write: without CAP_NET_ADMIN, -EPERM; a known entry needs none. */
Test(route, resolution_needs_cap_net_admin)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	rt_bed();
	GSO_OPTS(gso_route, r);
	cr_assert_eq(lookup(GSO_L3_IPV4, "10.77.0.2", 0, 0, &r), 0, "resolved while privileged");
	/* Drop it from the effective set of this test process only (programs it runs get it back). */
	cr_assert_eq(syscall(SYS_capget, &h, d), 0);
	d[CAP_NET_ADMIN / 32].effective &= ~(1u << (CAP_NET_ADMIN % 32));
	cr_assert_eq(syscall(SYS_capset, &h, d), 0);

	cr_assert_eq(lookup(GSO_L3_IPV4, "10.77.0.2", 0, 0, &r), 0, "a valid entry is only read");
	cr_assert_eq(memcmp(r.dst_mac, rt_tb.mac[1], 6), 0);
	cr_assert_eq(lookup(GSO_L3_IPV6, "fd77::2", 0, 0, &r), -EPERM);
	cr_assert_eq(lookup(GSO_L3_IPV4, "10.77.0.99", 0, 0, &r), -EPERM);
	cr_assert_eq(lookup(GSO_L3_IPV4, "203.0.113.1", 0, 0, &r), -ENETUNREACH, "reading routes needs nothing");
}

Test(route, no_route)
{
	rt_bed();
	GSO_OPTS(gso_route, r);
	cr_assert_eq(lookup(GSO_L3_IPV4, "203.0.113.1", 0, 0, &r), -ENETUNREACH);
	cr_assert_eq(lookup(GSO_L3_IPV6, "2001:db9::1", 0, 0, &r), -ENETUNREACH);
	/* With the interface named, IPv4 would assume the destination on-link: still no route. */
	cr_assert_eq(lookup(GSO_L3_IPV4, "203.0.113.1", rt_tb.ifindex[0], 0, &r), -ENETUNREACH);
	cr_assert_eq(lookup(GSO_L3_IPV6, "2001:db9::1", rt_tb.ifindex[0], 0, &r), -ENETUNREACH);
	/* A route that leaves by another interface than the one named. */
	cr_assert_eq(lookup(GSO_L3_IPV4, "10.77.0.2", 1, 0, &r), -ENETUNREACH);
	cr_assert_eq(lookup(GSO_L3_IPV6, "fd77::2", 1, 0, &r), -ENETUNREACH);
	/* Routes that refuse. */
	cr_assert_eq(nsbed_sh(&rt_tb, 0,
				   "ip route add blackhole 192.0.2.1/32 && ip route add unreachable 192.0.2.2/32 && "
				   "ip route add prohibit 192.0.2.3/32 && ip -6 route add blackhole 2001:db8:1::/64 && "
				   "ip -6 route add unreachable 2001:db8:2::/64 && ip -6 route add prohibit 2001:db8:3::/64"),
		     0);
	const char *v4[] = { "192.0.2.1", "192.0.2.2", "192.0.2.3" };
	const char *v6[] = { "2001:db8:1::1", "2001:db8:2::1", "2001:db8:3::1" };
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(lookup(GSO_L3_IPV4, v4[i], 0, 0, &r), -ENETUNREACH, "%s", v4[i]);
		cr_assert_eq(lookup(GSO_L3_IPV6, v6[i], 0, 0, &r), -ENETUNREACH, "%s", v6[i]);
	}
}

Test(route, no_such_interface)
{
	rt_bed();
	GSO_OPTS(gso_route, r);
	cr_assert_eq(lookup(GSO_L3_IPV4, "10.77.0.2", 9999, 0, &r), -ENODEV);
	cr_assert_eq(lookup(GSO_L3_IPV6, "fd77::2", 9999, 0, &r), -ENODEV);
}

Test(route, bad_arguments)
{
	uint8_t a[16];

	rt_bed();
	addr(GSO_L3_IPV4, "10.77.0.2", a);
	GSO_OPTS(gso_route, r);
	memset((char *)&r + sizeof(r.sz), 0x5a, sizeof(r) - sizeof(r.sz));
	struct gso_route before = r;

	cr_assert_eq(gso_route__lookup(GSO_L3_IPV4, NULL, 0, 0, &r), -EINVAL);
	cr_assert_eq(gso_route__lookup(GSO_L3_IPV4, a, 0, 0, NULL), -EINVAL);
	cr_assert_eq(gso_route__lookup(5, a, 0, 0, &r), -EINVAL);
	cr_assert_eq(gso_route__lookup(0, a, 0, 0, &r), -EINVAL);
	cr_assert_eq(gso_route__lookup(GSO_L3_IPV4, a, -1, 0, &r), -EINVAL);
	cr_assert_eq(gso_route__lookup(GSO_L3_IPV4, a, 0, -1, &r), -EINVAL);
	cr_assert_eq(gso_route__lookup(GSO_L3_IPV4, a, 0, GSO_ROUTE_MAX_TIMEOUT_MS + 1, &r), -EINVAL);
	cr_assert_eq(memcmp(&r, &before, sizeof(r)), 0);
	struct gso_route small = r;
	small.sz = 4;
	cr_assert_eq(gso_route__lookup(GSO_L3_IPV4, a, 0, 0, &small), -EINVAL);
	small.sz = sizeof(size_t);
	cr_assert_eq(gso_route__lookup(GSO_L3_IPV4, a, 0, 0, &small), -EINVAL);

	/* Destinations no unicast route leads to. */
	const char *bad4[] = { "0.0.0.0", "127.0.0.1", "127.1.2.3", "224.0.0.1", "239.255.255.255",
			       "255.255.255.255", "10.77.0.1" /* our own */, "10.77.0.255" /* broadcast */ };
	for (size_t i = 0; i < sizeof(bad4) / sizeof(bad4[0]); i++)
		cr_assert_eq(lookup(GSO_L3_IPV4, bad4[i], 0, 0, &r), -EINVAL, "%s", bad4[i]);
	const char *bad6[] = { "::", "::1", "ff02::1", "ff0e::5", "fd77::1" /* our own */ };
	for (size_t i = 0; i < sizeof(bad6) / sizeof(bad6[0]); i++)
		cr_assert_eq(lookup(GSO_L3_IPV6, bad6[i], 0, 0, &r), -EINVAL, "%s", bad6[i]);
	cr_assert_eq(memcmp(&r, &before, sizeof(r)), 0, "nothing written on error");
}

/* An older, shorter struct gets what it has room for, and nothing past it. */
Test(route, short_struct)
{
	struct gso_route r;

	rt_bed();
	memset(&r, 0x5a, sizeof(r));
	r.sz = offsetof(struct gso_route, src);
	cr_assert_eq(lookup(GSO_L3_IPV4, "10.77.0.2", 0, 0, &r), 0);
	cr_assert_eq(r.sz, offsetof(struct gso_route, src));
	cr_assert_eq(r.ifindex, rt_tb.ifindex[0]);
	cr_assert_eq(r.l3, GSO_L3_IPV4);
	cr_assert_eq(r.src[0], 0x5a, "field past sz written");
	cr_assert_eq(r.flags, 0x5a5a5a5a);
}

/* ---- the monitor ---- */

struct seen {
	int n;
	struct rtmon_event ev[256];
};

static void seen_add(void *ctx, const struct rtmon_event *ev)
{
	struct seen *s = ctx;

	if (s->n < 256)
		s->ev[s->n++] = *ev;
}

typedef bool (*ev_pred)(const struct rtmon_event *ev, const void *arg);

/* Read the monitor until an event matches, for at most `ms`; the match or NULL. */
static const struct rtmon_event *wait_ev(struct seen *s, ev_pred pred, const void *arg, int ms)
{
	double end = now_s() + ms / 1000.0;

	for (;;) {
		int from = s->n;

		cr_assert_geq(gsoi_rtmon_read(&rt_mon, seen_add, s), 0);
		for (int i = from; i < s->n; i++)
			if (pred(&s->ev[i], arg))
				return &s->ev[i];
		double left = end - now_s();
		if (left <= 0)
			return NULL;
		struct pollfd pfd = { .fd = rt_mon.fd, .events = POLLIN };
		poll(&pfd, 1, (int)(left * 1000) + 1);
	}
}

struct link_q {
	int ifindex;
	uint8_t type;
	int usable; /* -1: either */
};

static bool link_is(const struct rtmon_event *ev, const void *arg)
{
	const struct link_q *q = arg;

	return ev->type == q->type && ev->ifindex == q->ifindex &&
	       (q->usable < 0 || gsoi_rtnl_link_usable(ev->ifi_flags) == (bool)q->usable);
}

Test(route, monitor_link_down_up)
{
	struct seen s = { 0 };
	uint32_t flags;

	rt_bed();
	cr_assert_eq(gsoi_rtmon_open(&rt_mon, RTMON_LINK | RTMON_NEIGH), 0);
	cr_assert_geq(rt_mon.fd, 0);
	cr_assert_eq(gsoi_rtnl_link_flags(rt_tb.ifindex[0], &flags), 0);
	cr_assert(gsoi_rtnl_link_usable(flags), "flags %#x", flags);
	cr_assert_eq(gsoi_rtnl_link_flags(9999, &flags), -ENODEV);

	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip link set %s down", rt_tb.ifname[0]), 0);
	struct link_q down = { rt_tb.ifindex[0], RTMON_EV_LINK, 0 };
	const struct rtmon_event *ev = wait_ev(&s, link_is, &down, 5000);
	cr_assert_not_null(ev, "no LINK event with the link unusable");
	cr_assert_not(ev->ifi_flags & IFF_UP);
	cr_assert_eq(ev->mtu, 1500);
	cr_assert_eq(gsoi_rtnl_link_flags(rt_tb.ifindex[0], &flags), 0);
	cr_assert_not(flags & IFF_UP);

	/* Carrier follows IFF_UP through linkwatch, possibly in a later event. */
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip link set %s up", rt_tb.ifname[0]), 0);
	struct link_q up = { rt_tb.ifindex[0], RTMON_EV_LINK, 1 };
	cr_assert_not_null(wait_ev(&s, link_is, &up, 5000), "no LINK event with the link usable again");
	cr_assert_geq(rt_mon.events, (uint64_t)s.n);
	cr_assert_eq(rt_mon.overruns, 0);
}

Test(route, monitor_link_gone)
{
	struct seen s = { 0 };

	rt_bed();
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip link add gx0 type veth peer name gx1"), 0);
	int gx0 = (int)if_nametoindex("gx0");
	cr_assert_gt(gx0, 0);
	cr_assert_eq(gsoi_rtmon_open(&rt_mon, RTMON_LINK), 0);
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip link del gx0"), 0);
	struct link_q gone = { gx0, RTMON_EV_LINK_GONE, -1 };
	cr_assert_not_null(wait_ev(&s, link_is, &gone, 5000), "no LINK_GONE for ifindex %d", gx0);
	uint32_t flags;
	cr_assert_eq(gsoi_rtnl_link_flags(gx0, &flags), -ENODEV);
}

struct neigh_q {
	uint8_t type;
	int ifindex;
	uint8_t addr[16];
};

static bool neigh_is(const struct rtmon_event *ev, const void *arg)
{
	const struct neigh_q *q = arg;

	return ev->type == q->type && ev->ifindex == q->ifindex && ev->l3 == GSO_L3_IPV4 &&
	       !memcmp(ev->addr, q->addr, 16);
}

Test(route, monitor_neigh)
{
	static const uint8_t mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
	struct seen s = { 0 };
	struct neigh_q q = { RTMON_EV_NEIGH, 0, { 0 } };

	rt_bed();
	q.ifindex = rt_tb.ifindex[0];
	addr(GSO_L3_IPV4, "10.77.0.50", q.addr);
	cr_assert_eq(gsoi_rtmon_open(&rt_mon, RTMON_LINK | RTMON_NEIGH), 0);
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip neigh replace 10.77.0.50 lladdr 02:11:22:33:44:55 dev %s",
				   rt_tb.ifname[0]), 0);
	const struct rtmon_event *ev = wait_ev(&s, neigh_is, &q, 5000);
	cr_assert_not_null(ev, "no NEIGH event for 10.77.0.50");
	cr_assert(ev->has_mac);
	cr_assert_eq(memcmp(ev->mac, mac, 6), 0);
	cr_assert_eq(ev->nud_state, NUD_PERMANENT, "ip neigh replace makes it permanent");

	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip neigh del 10.77.0.50 dev %s", rt_tb.ifname[0]), 0);
	q.type = RTMON_EV_NEIGH_GONE;
	cr_assert_not_null(wait_ev(&s, neigh_is, &q, 5000), "no NEIGH_GONE for 10.77.0.50");
}

/* A socket buffer too small for a burst: one OVERRUN event, counted. */
Test(route, monitor_overrun)
{
	struct seen s = { 0 };
	int tiny = 0;
	char path[64];

	rt_bed();
	cr_assert_eq(gsoi_rtmon_open(&rt_mon, RTMON_NEIGH), 0);
	/* SO_RCVBUF 0 is raised to the kernel's minimum (SOCK_MIN_RCVBUF), a few notifications. */
	cr_assert_eq(setsockopt(rt_mon.fd, SOL_SOCKET, SO_RCVBUF, &tiny, sizeof(tiny)), 0);
	snprintf(path, sizeof(path), "/tmp/gso-route-batch-%d", (int)getpid());
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	for (int i = 1; i <= 200; i++)
		fprintf(f, "neigh replace 10.77.1.%d lladdr 02:00:00:00:01:%02x dev %s\n", i, i & 0xff,
			rt_tb.ifname[0]);
	fclose(f);
	cr_assert_eq(nsbed_sh(&rt_tb, 0, "ip route add 10.77.1.0/24 dev %s && ip -batch %s",
				   rt_tb.ifname[0], path), 0);
	unlink(path);
	int n = gsoi_rtmon_read(&rt_mon, seen_add, &s);
	cr_assert_gt(n, 0);
	int overruns = 0;
	for (int i = 0; i < s.n; i++)
		overruns += s.ev[i].type == RTMON_EV_OVERRUN;
	cr_assert_eq(overruns, 1, "one OVERRUN event per read, however many were lost");
	cr_assert_geq(rt_mon.overruns, 1);
	cr_assert_eq(s.ev[s.n - 1].type, RTMON_EV_OVERRUN, "reported after what was still queued");
	cr_assert_lt(s.n, 200, "most of the burst did not fit");
	/* The socket keeps working afterwards. */
	cr_assert_eq(gsoi_rtmon_read(&rt_mon, seen_add, &s), 0);
}
