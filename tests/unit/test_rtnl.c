/*
 * The rtnetlink monitor's decoder (xdp/kernel/rtnl.c) on crafted buffers: link
 * and neighbour notifications as the kernel writes them (rtnl_fill_ifinfo(),
 * __neigh_fill_info()), messages it must skip, and malformed ones that must
 * be skipped without reading past the buffer (this file also runs under
 * ASan in build/tests/unit-asan, where the cut buffers below are heap
 * copies of exactly their length).  No socket is opened here; the live
 * monitor is tested in tests/integration/test_route.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <gso/tmpl.h>

#include "kernel/rtnl_internal.h"

/* ---- building messages ---- */

struct nlbuf {
	uint8_t b[4096] __attribute__((aligned(8)));
	size_t len;   /* bytes used (messages padded to 4) */
	size_t start; /* where the open message begins */
};

static void msg_begin(struct nlbuf *m, uint16_t type, const void *hdr, size_t hlen)
{
	struct nlmsghdr nh = { .nlmsg_len = (uint32_t)NLMSG_LENGTH(hlen), .nlmsg_type = type };

	m->start = m->len;
	memset(m->b + m->len, 0, NLMSG_SPACE(hlen));
	memcpy(m->b + m->len, &nh, sizeof(nh));
	memcpy(m->b + m->len + NLMSG_HDRLEN, hdr, hlen);
	m->len += NLMSG_SPACE(hlen);
}

/* Append an attribute; `rta_len` 0 means the honest length. */
static void msg_attr_len(struct nlbuf *m, uint16_t type, const void *data, size_t len, uint16_t rta_len)
{
	struct rtattr a = { .rta_len = rta_len ? rta_len : (uint16_t)RTA_LENGTH(len), .rta_type = type };
	struct nlmsghdr nh;

	memset(m->b + m->len, 0, RTA_SPACE(len));
	memcpy(m->b + m->len, &a, sizeof(a));
	memcpy(m->b + m->len + RTA_LENGTH(0), data, len);
	m->len += RTA_SPACE(len);
	memcpy(&nh, m->b + m->start, sizeof(nh));
	nh.nlmsg_len = (uint32_t)(m->len - m->start);
	memcpy(m->b + m->start, &nh, sizeof(nh));
}

static void msg_attr(struct nlbuf *m, uint16_t type, const void *data, size_t len)
{
	msg_attr_len(m, type, data, len, 0);
}

static void add_link(struct nlbuf *m, uint16_t type, int ifindex, uint32_t flags, uint32_t mtu)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex, .ifi_flags = flags };

	msg_begin(m, type, &ifi, sizeof(ifi));
	msg_attr(m, IFLA_IFNAME, "gtest0", 7);
	if (mtu)
		msg_attr(m, IFLA_MTU, &mtu, sizeof(mtu));
	uint8_t txq = 0;
	msg_attr(m, IFLA_LINKMODE, &txq, 1);
}

static const uint8_t MAC[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
static const uint8_t V4[4] = { 10, 77, 0, 2 };
static const uint8_t V6[16] = { 0xfd, 0x77, [15] = 2 };

/* Open a neighbour message: its ndmsg, no attributes yet. */
static void begin_ndm(struct nlbuf *m, uint16_t type, int family, int ifindex, uint16_t state, uint8_t flags)
{
	struct ndmsg ndm = { .ndm_family = (uint8_t)family, .ndm_ifindex = ifindex, .ndm_state = state,
			     .ndm_flags = flags, .ndm_type = RTN_UNICAST };

	msg_begin(m, type, &ndm, sizeof(ndm));
}

static void add_neigh(struct nlbuf *m, uint16_t type, int family, int ifindex, uint16_t state,
		      const uint8_t *mac, size_t maclen)
{
	uint32_t probes = 0;

	begin_ndm(m, type, family, ifindex, state, 0);
	if (family == AF_INET6)
		msg_attr(m, NDA_DST, V6, sizeof(V6));
	else
		msg_attr(m, NDA_DST, V4, sizeof(V4));
	if (mac)
		msg_attr(m, NDA_LLADDR, mac, maclen);
	msg_attr(m, NDA_PROBES, &probes, sizeof(probes));
}

/* ---- collecting events ---- */

struct got {
	int n;
	struct rtmon_event ev[16];
};

static void collect(void *ctx, const struct rtmon_event *ev)
{
	struct got *g = ctx;

	cr_assert_lt(g->n, 16);
	g->ev[g->n++] = *ev;
}

static int parse(const struct nlbuf *m, struct got *g)
{
	memset(g, 0, sizeof(*g));
	int n = gsoi_rtmon_parse(m->b, m->len, collect, g);
	cr_assert_eq(n, g->n, "the count returned is the number of callbacks");
	return n;
}

/* ---- links ---- */

Test(rtnl, newlink_flags_and_mtu)
{
	struct nlbuf m = { 0 };
	struct got g;

	add_link(&m, RTM_NEWLINK, 7, IFF_UP | IFF_RUNNING | IFF_LOWER_UP | IFF_BROADCAST, 9000);
	cr_assert_eq(parse(&m, &g), 1);
	cr_assert_eq(g.ev[0].type, RTMON_EV_LINK);
	cr_assert_eq(g.ev[0].ifindex, 7);
	cr_assert_eq(g.ev[0].ifi_flags, IFF_UP | IFF_RUNNING | IFF_LOWER_UP | IFF_BROADCAST);
	cr_assert_eq(g.ev[0].mtu, 9000);
	cr_assert(gsoi_rtnl_link_usable(g.ev[0].ifi_flags));
}

Test(rtnl, newlink_without_mtu)
{
	struct nlbuf m = { 0 };
	struct got g;

	add_link(&m, RTM_NEWLINK, 3, IFF_UP, 0);
	cr_assert_eq(parse(&m, &g), 1);
	cr_assert_eq(g.ev[0].mtu, 0, "IFLA_MTU absent: 0");
	cr_assert_not(gsoi_rtnl_link_usable(g.ev[0].ifi_flags), "up without carrier");

	/* A bare ifinfomsg, no attributes at all, is still a valid message. */
	struct ifinfomsg ifi = { .ifi_index = 4, .ifi_flags = IFF_UP | IFF_RUNNING };
	m.len = 0;
	msg_begin(&m, RTM_NEWLINK, &ifi, sizeof(ifi));
	cr_assert_eq(parse(&m, &g), 1);
	cr_assert_eq(g.ev[0].ifindex, 4);

	/* An IFLA_MTU of the wrong size is ignored, the rest is kept. */
	m.len = 0;
	msg_begin(&m, RTM_NEWLINK, &ifi, sizeof(ifi));
	uint16_t short_mtu = 1500;
	msg_attr(&m, IFLA_MTU, &short_mtu, sizeof(short_mtu));
	cr_assert_eq(parse(&m, &g), 1);
	cr_assert_eq(g.ev[0].mtu, 0);
}

Test(rtnl, dellink_is_gone)
{
	struct nlbuf m = { 0 };
	struct got g;

	add_link(&m, RTM_DELLINK, 12, IFF_BROADCAST, 1500);
	cr_assert_eq(parse(&m, &g), 1);
	cr_assert_eq(g.ev[0].type, RTMON_EV_LINK_GONE);
	cr_assert_eq(g.ev[0].ifindex, 12);
}

Test(rtnl, link_of_other_family_skipped)
{
	struct nlbuf m = { 0 };
	struct ifinfomsg ifi = { .ifi_family = AF_BRIDGE, .ifi_index = 5, .ifi_flags = IFF_UP };
	struct got g;

	msg_begin(&m, RTM_NEWLINK, &ifi, sizeof(ifi));
	cr_assert_eq(parse(&m, &g), 0, "bridge port messages repeat the AF_UNSPEC ones");
}

/* ---- neighbours ---- */

Test(rtnl, newneigh_with_mac)
{
	static const struct {
		int family, ifindex;
		uint16_t state;
		uint8_t l3;
		uint8_t addr[16]; /* IPv4 in the first 4 bytes, rest zero */
	} t[] = {
		{ AF_INET, 2, NUD_REACHABLE, GSO_L3_IPV4, { 10, 77, 0, 2 } },
		{ AF_INET6, 9, NUD_STALE, GSO_L3_IPV6, { 0xfd, 0x77, [15] = 2 } }, /* STALE is usable */
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct nlbuf m = { 0 };
		struct got g;

		add_neigh(&m, RTM_NEWNEIGH, t[i].family, t[i].ifindex, t[i].state, MAC, 6);
		cr_assert_eq(parse(&m, &g), 1);
		cr_assert_eq(g.ev[0].type, RTMON_EV_NEIGH);
		cr_assert_eq(g.ev[0].ifindex, t[i].ifindex);
		cr_assert_eq(g.ev[0].l3, t[i].l3);
		cr_assert_eq(memcmp(g.ev[0].addr, t[i].addr, 16), 0, "case %zu", i);
		cr_assert(g.ev[0].has_mac);
		cr_assert_eq(memcmp(g.ev[0].mac, MAC, 6), 0);
		cr_assert_eq(g.ev[0].nud_state, t[i].state);
		cr_assert(g.ev[0].nud_state & RTNL_NUD_VALID, "case %zu", i);
	}
}

Test(rtnl, newneigh_without_mac)
{
	static const uint8_t ib[20] = { 1 };
	struct nlbuf m = { 0 };
	struct got g;

	add_neigh(&m, RTM_NEWNEIGH, AF_INET, 2, NUD_INCOMPLETE, NULL, 0);
	add_neigh(&m, RTM_NEWNEIGH, AF_INET6, 2, NUD_FAILED, NULL, 0);
	add_neigh(&m, RTM_NEWNEIGH, AF_INET, 2, NUD_NOARP, MAC, 0);   /* NOARP devices: 0 bytes */
	add_neigh(&m, RTM_NEWNEIGH, AF_INET, 2, NUD_REACHABLE, ib, 20); /* InfiniBand-sized */
	cr_assert_eq(parse(&m, &g), 4);
	for (int i = 0; i < 4; i++)
		cr_assert_not(g.ev[i].has_mac, "event %d", i);
	cr_assert_eq(g.ev[0].nud_state, NUD_INCOMPLETE);
	cr_assert_not(g.ev[0].nud_state & RTNL_NUD_VALID);
	cr_assert_eq(g.ev[1].nud_state, NUD_FAILED);
	cr_assert_not(g.ev[1].nud_state & RTNL_NUD_VALID);
}

Test(rtnl, delneigh_is_gone)
{
	struct nlbuf m = { 0 };
	struct got g;

	add_neigh(&m, RTM_DELNEIGH, AF_INET6, 4, NUD_STALE, MAC, 6);
	cr_assert_eq(parse(&m, &g), 1);
	cr_assert_eq(g.ev[0].type, RTMON_EV_NEIGH_GONE);
	cr_assert_eq(g.ev[0].ifindex, 4);
	cr_assert_eq(memcmp(g.ev[0].addr, V6, 16), 0);
}

Test(rtnl, neigh_not_ours_skipped)
{
	struct nlbuf m = { 0 };
	struct got g;

	/* A bridge FDB entry shares RTNLGRP_NEIGH. */
	begin_ndm(&m, RTM_NEWNEIGH, AF_BRIDGE, 3, NUD_REACHABLE, 0);
	msg_attr(&m, NDA_LLADDR, MAC, 6);
	/* A proxy entry (pneigh) is not a neighbour. */
	begin_ndm(&m, RTM_NEWNEIGH, AF_INET, 3, NUD_NONE, NTF_PROXY);
	msg_attr(&m, NDA_DST, V4, 4);
	/* No NDA_DST. */
	begin_ndm(&m, RTM_NEWNEIGH, AF_INET, 3, NUD_REACHABLE, 0);
	msg_attr(&m, NDA_LLADDR, MAC, 6);
	/* NDA_DST of the other family's length. */
	begin_ndm(&m, RTM_NEWNEIGH, AF_INET, 3, NUD_REACHABLE, 0);
	msg_attr(&m, NDA_DST, V6, 16);
	cr_assert_eq(parse(&m, &g), 0);
}

/* ---- buffers of several messages, and what is skipped ---- */

/*
 * Route notifications (rt_fill_info(), rt6_fill_info()): one event each,
 * its family and its RTA_OIF (0 without one: multipath, unreachable); what
 * the route says is asked for when needed (gsoi_route_mtu).  Other families
 * are skipped.
 */
Test(rtnl, route_changes)
{
	struct nlbuf m = { 0 };
	struct got g = { 0 };
	struct rtmsg r4 = { .rtm_family = AF_INET, .rtm_dst_len = 24, .rtm_table = RT_TABLE_MAIN,
			    .rtm_type = RTN_UNICAST };
	struct rtmsg r6 = { .rtm_family = AF_INET6, .rtm_dst_len = 64, .rtm_table = RT_TABLE_MAIN,
			    .rtm_type = RTN_UNICAST };
	struct rtmsg rmpls = { .rtm_family = 28 /* AF_MPLS */ };
	uint32_t oif = 7, mtu[2] = { 8, RTAX_MTU };

	msg_begin(&m, RTM_NEWROUTE, &r4, sizeof(r4));
	msg_attr(&m, RTA_DST, V4, sizeof(V4));
	msg_attr(&m, RTA_OIF, &oif, sizeof(oif));
	msg_attr(&m, RTA_METRICS, mtu, sizeof(mtu));
	msg_begin(&m, RTM_DELROUTE, &r6, sizeof(r6));
	msg_attr(&m, RTA_DST, V6, sizeof(V6));
	msg_begin(&m, RTM_NEWROUTE, &rmpls, sizeof(rmpls));
	msg_attr(&m, RTA_OIF, &oif, sizeof(oif));
	cr_assert_eq(parse(&m, &g), 2);
	cr_expect_eq(g.ev[0].type, RTMON_EV_ROUTE);
	cr_expect_eq(g.ev[0].l3, GSO_L3_IPV4);
	cr_expect_eq(g.ev[0].ifindex, 7);
	cr_expect_eq(g.ev[1].type, RTMON_EV_ROUTE);
	cr_expect_eq(g.ev[1].l3, GSO_L3_IPV6);
	cr_expect_eq(g.ev[1].ifindex, 0);
}

Test(rtnl, several_messages_and_other_types)
{
	struct nlbuf m = { 0 };
	struct got g;

	add_link(&m, RTM_NEWLINK, 1, IFF_UP | IFF_RUNNING, 65536);
	/* An address notification: not a group the monitor decodes (route_changes has the routes). */
	struct ifaddrmsg ifa = { .ifa_family = AF_INET, .ifa_prefixlen = 24, .ifa_index = 1 };
	msg_begin(&m, RTM_NEWADDR, &ifa, sizeof(ifa));
	msg_attr(&m, IFA_ADDRESS, V4, 4);
	add_neigh(&m, RTM_NEWNEIGH, AF_INET, 2, NUD_REACHABLE, MAC, 6);
	struct nlmsgerr e = { .error = -ENOENT };
	msg_begin(&m, NLMSG_ERROR, &e, sizeof(e));
	int zero = 0;
	msg_begin(&m, NLMSG_DONE, &zero, sizeof(zero));
	add_neigh(&m, RTM_DELNEIGH, AF_INET6, 2, NUD_NONE, NULL, 0);
	add_link(&m, RTM_DELLINK, 6, 0, 0);

	cr_assert_eq(parse(&m, &g), 4);
	cr_assert_eq(g.ev[0].type, RTMON_EV_LINK);
	cr_assert_eq(g.ev[0].mtu, 65536);
	cr_assert_eq(g.ev[1].type, RTMON_EV_NEIGH);
	cr_assert_eq(g.ev[2].type, RTMON_EV_NEIGH_GONE);
	cr_assert_eq(g.ev[3].type, RTMON_EV_LINK_GONE);
	cr_assert_eq(g.ev[3].ifindex, 6);
}

Test(rtnl, unpadded_last_message)
{
	struct nlbuf m = { 0 };
	struct got g;

	/* IFLA_IFNAME "gtest0\0" is 7 bytes: the message ends 1 byte short of alignment. */
	struct ifinfomsg ifi = { .ifi_index = 8, .ifi_flags = IFF_UP | IFF_RUNNING };
	add_neigh(&m, RTM_NEWNEIGH, AF_INET, 2, NUD_PERMANENT, MAC, 6);
	msg_begin(&m, RTM_NEWLINK, &ifi, sizeof(ifi));
	msg_attr(&m, IFLA_IFNAME, "gtest0", 7);
	struct nlmsghdr nh;
	memcpy(&nh, m.b + m.start, sizeof(nh));
	nh.nlmsg_len -= 1; /* the kernel does not count the attribute's padding */
	memcpy(m.b + m.start, &nh, sizeof(nh));
	m.len -= 1;
	cr_assert_eq(parse(&m, &g), 2);
	cr_assert_eq(g.ev[1].ifindex, 8);
}

Test(rtnl, unaligned_buffer)
{
	struct nlbuf m = { 0 };
	struct got g = { 0 };
	static uint8_t shifted[4096 + 1];

	add_neigh(&m, RTM_NEWNEIGH, AF_INET6, 2, NUD_REACHABLE, MAC, 6);
	add_link(&m, RTM_NEWLINK, 3, IFF_UP, 1280);
	memcpy(shifted + 1, m.b, m.len);
	cr_assert_eq(gsoi_rtmon_parse(shifted + 1, m.len, collect, &g), 2, "headers are copied, not cast");
	cr_assert_eq(memcmp(g.ev[0].mac, MAC, 6), 0);
	cr_assert_eq(g.ev[1].mtu, 1280);
}

Test(rtnl, malformed_messages_skipped)
{
	struct nlbuf m = { 0 };
	struct got g;

	/* An attribute claiming more than the message holds. */
	begin_ndm(&m, RTM_NEWNEIGH, AF_INET, 2, NUD_REACHABLE, 0);
	msg_attr(&m, NDA_DST, V4, 4);
	msg_attr_len(&m, NDA_LLADDR, MAC, 6, 200);
	/* An attribute shorter than its own header. */
	begin_ndm(&m, RTM_NEWNEIGH, AF_INET, 2, NUD_REACHABLE, 0);
	msg_attr_len(&m, NDA_DST, V4, 4, 2);
	/* A body shorter than ndmsg / ifinfomsg. */
	uint32_t tiny = 0;
	msg_begin(&m, RTM_NEWNEIGH, &tiny, sizeof(tiny));
	msg_begin(&m, RTM_NEWLINK, &tiny, sizeof(tiny));
	/* A link message whose attribute runs past the end. */
	struct ifinfomsg ifi = { .ifi_index = 3, .ifi_flags = IFF_UP };
	uint32_t mtu = 1500;
	msg_begin(&m, RTM_NEWLINK, &ifi, sizeof(ifi));
	msg_attr_len(&m, IFLA_MTU, &mtu, 4, 9);
	/* And one good message after all of them: parsing went on. */
	add_neigh(&m, RTM_NEWNEIGH, AF_INET, 2, NUD_REACHABLE, MAC, 6);

	cr_assert_eq(parse(&m, &g), 1);
	cr_assert_eq(g.ev[0].type, RTMON_EV_NEIGH);
	cr_assert(g.ev[0].has_mac);
}

Test(rtnl, bad_message_length_stops)
{
	struct nlbuf m = { 0 };
	struct got g;
	struct nlmsghdr nh;

	add_neigh(&m, RTM_NEWNEIGH, AF_INET, 2, NUD_REACHABLE, MAC, 6);
	size_t second = m.len;
	add_neigh(&m, RTM_NEWNEIGH, AF_INET6, 2, NUD_REACHABLE, MAC, 6);

	/* Longer than the buffer: the second cannot be trusted, the first stands. */
	memcpy(&nh, m.b + second, sizeof(nh));
	nh.nlmsg_len = 5000;
	memcpy(m.b + second, &nh, sizeof(nh));
	cr_assert_eq(parse(&m, &g), 1);
	/* Shorter than a header: no way to step over it. */
	nh.nlmsg_len = 8;
	memcpy(m.b + second, &nh, sizeof(nh));
	cr_assert_eq(parse(&m, &g), 1);
	nh.nlmsg_len = 0;
	memcpy(m.b + second, &nh, sizeof(nh));
	cr_assert_eq(parse(&m, &g), 1);
	/* Nothing, or less than a header. */
	cr_assert_eq(gsoi_rtmon_parse(m.b, 0, collect, &g), 0);
	cr_assert_eq(gsoi_rtmon_parse(m.b, NLMSG_HDRLEN - 1, collect, &g), 0);
}

/*
 * Every prefix of a valid buffer, copied to a heap block of exactly that
 * length: nothing may be read past it (ASan), and no event may come from a
 * message cut short.
 */
Test(rtnl, every_truncation)
{
	struct nlbuf m = { 0 };
	size_t ends[4];

	add_link(&m, RTM_NEWLINK, 1, IFF_UP | IFF_RUNNING, 1500);
	ends[0] = m.len;
	add_neigh(&m, RTM_NEWNEIGH, AF_INET6, 2, NUD_REACHABLE, MAC, 6);
	ends[1] = m.len;
	add_neigh(&m, RTM_DELNEIGH, AF_INET, 2, NUD_STALE, MAC, 6);
	ends[2] = m.len;
	add_link(&m, RTM_DELLINK, 1, 0, 0);
	ends[3] = m.len;

	for (size_t len = 0; len <= m.len; len++) {
		uint8_t *copy = malloc(len ? len : 1);
		struct got g = { 0 };
		int want = 0;

		cr_assert_not_null(copy);
		memcpy(copy, m.b, len);
		for (int i = 0; i < 4; i++)
			want += ends[i] <= len;
		cr_assert_eq(gsoi_rtmon_parse(copy, len, collect, &g), want, "cut at %zu", len);
		free(copy);
	}
}

/* ---- gsoi_rtnl_link_usable ---- */

Test(rtnl, link_usable_truth_table)
{
	static const struct {
		uint32_t flags;
		bool usable;
	} t[] = {
		{ 0, false },
		{ IFF_UP, false },                              /* up, no carrier */
		{ IFF_RUNNING, false },                         /* carrier, down */
		{ IFF_LOWER_UP, false },
		{ IFF_UP | IFF_LOWER_UP, false },               /* operstate not up (e.g. dormant) */
		{ IFF_UP | IFF_RUNNING, true },
		{ IFF_UP | IFF_RUNNING | IFF_LOWER_UP, true },
		{ IFF_UP | IFF_RUNNING | IFF_NOARP | IFF_POINTOPOINT, true },
		{ ~(uint32_t)IFF_UP, false },
		{ ~(uint32_t)IFF_RUNNING, false },
		{ ~(uint32_t)0, true },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		cr_assert_eq(gsoi_rtnl_link_usable(t[i].flags), t[i].usable, "flags %#x", t[i].flags);
}

/* ---- the monitor's arguments (no kernel state involved) ---- */

Test(rtnl, monitor_arguments)
{
	struct rtmon m = { .fd = 99 };
	struct got g = { 0 };

	cr_assert_eq(gsoi_rtmon_open(&m, 0), -EINVAL);
	cr_assert_eq(m.fd, -1, "fd is -1 after a failed open");
	cr_assert_eq(gsoi_rtmon_open(&m, 1u << 5), -EINVAL);
	cr_assert_eq(m.fd, -1);
	cr_assert_eq(gsoi_rtmon_read(&m, collect, &g), -EBADF);
	gsoi_rtmon_close(&m);
	gsoi_rtmon_close(&m);
	cr_assert_eq(m.fd, -1);
	cr_assert_eq(gsoi_rtnl_link_flags(0, &(uint32_t){ 0 }), -ENODEV);
	cr_assert_eq(gsoi_rtnl_link_flags(-3, &(uint32_t){ 0 }), -ENODEV);
}
