/*
 * libFuzzer target for the rtnetlink parsers: the link and neighbour
 * monitor's (gsoi_rtmon_parse, xdp/kernel/rtnl.c) and the route lookup's
 * reading of the kernel's answer (gsoi_route_reply, xdp/kernel/route.c).
 *
 * Input: a byte whose bit 0 picks the route's address length (16 or 4
 * bytes), then the netlink buffer, parsed from a heap copy of exactly its
 * length.  Checked: every event is of a kind the monitor decodes, with
 * its family's address and nothing past it; the count returned is the
 * events delivered; the buffer gives the same events as its messages
 * parsed one by one (each from its own exact copy), as this target steps
 * over them; the route answer's fields equal what this target's own
 * attribute walk reads, and a refused answer is one that is no
 * RTM_NEWROUTE or too short.
 *
 * Links: xdp/kernel/rtnl.c xdp/kernel/route.c xdp/kernel/link_info.c
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <gso/tmpl.h>

#include "fuzz_input.h"
#include "kernel/route_internal.h"
#include "kernel/rtnl_internal.h"

struct evs {
	struct rtmon_event *ev;
	size_t n, cap;
};

static void got(void *ctx, const struct rtmon_event *ev)
{
	static const uint8_t zero[12];
	struct evs *s = ctx;

	check((ev->type >= RTMON_EV_LINK && ev->type <= RTMON_EV_NEIGH_GONE) || ev->type == RTMON_EV_ROUTE);
	if (ev->type == RTMON_EV_NEIGH || ev->type == RTMON_EV_NEIGH_GONE)
		check(ev->l3 == GSO_L3_IPV6 || (ev->l3 == GSO_L3_IPV4 && !memcmp(ev->addr + 4, zero, 12)));
	else if (ev->type == RTMON_EV_ROUTE)
		check((ev->l3 == GSO_L3_IPV4 || ev->l3 == GSO_L3_IPV6) && ev->ifindex >= 0 && !ev->has_mac &&
		      !ev->nud_state && !ev->mtu && !ev->ifi_flags);
	else
		check(!ev->l3 && !ev->has_mac && !ev->nud_state);
	check(s->n < s->cap);
	s->ev[s->n++] = *ev;
}

/* Field by field: a struct copy need not carry its padding. */
static bool ev_eq(const struct rtmon_event *a, const struct rtmon_event *b)
{
	return a->type == b->type && a->ifindex == b->ifindex && a->ifi_flags == b->ifi_flags && a->mtu == b->mtu &&
	       a->l3 == b->l3 && !memcmp(a->addr, b->addr, sizeof(a->addr)) && a->has_mac == b->has_mac &&
	       !memcmp(a->mac, b->mac, sizeof(a->mac)) && a->nud_state == b->nud_state;
}

static uint32_t le16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
	return le16(p) | le16(p + 2) << 16;
}

/* Each message alone, as this target steps over them, into s. */
static void one_by_one(const uint8_t *b, size_t n, struct evs *s)
{
	for (size_t off = 0; n - off >= NLMSG_HDRLEN;) {
		size_t len = le32(b + off), step = NLMSG_ALIGN(len);
		uint8_t *m;
		int r;

		if (len < NLMSG_HDRLEN || len > n - off)
			return;
		m = malloc(len);
		check(m);
		memcpy(m, b + off, len);
		size_t before = s->n;
		r = gsoi_rtmon_parse(m, len, got, s);
		check(r >= 0 && (size_t)r == s->n - before);
		free(m);
		if (step >= n - off)
			return;
		off += step;
	}
}

/* The route answer read here: attributes kind, length, value, each 4-aligned; a bad length ends them. */
static void check_route(const uint8_t *b, size_t n, size_t alen)
{
	struct route_ans ra, want;
	int r = gsoi_route_reply(b, n, alen, &ra);
	size_t hl = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct rtmsg)), len;

	check(r == 0 || r == -EPROTO);
	len = n >= NLMSG_HDRLEN ? le32(b) : 0;
	check((r == 0) == (n >= NLMSG_HDRLEN && le16(b + 4) == RTM_NEWROUTE && len >= hl && len <= n));
	if (r)
		return;
	memset(&want, 0, sizeof(want));
	want.type = b[NLMSG_HDRLEN + 7];
	want.table = b[NLMSG_HDRLEN + 4];
	for (size_t off = hl; len - off >= 4;) {
		size_t al = le16(b + off), vl = al - 4;
		const uint8_t *v = b + off + 4;

		if (al < 4 || al > len - off)
			break;
		switch (le16(b + off + 2)) {
		case RTA_OIF:
			if (vl == 4)
				want.oif = (int)le32(v);
			break;
		case RTA_TABLE:
			if (vl == 4)
				want.table = le32(v);
			break;
		case RTA_GATEWAY:
			want.has_gw = vl == alen;
			if (want.has_gw)
				memcpy(want.gw, v, alen);
			break;
		case RTA_VIA:
			want.has_via = true;
			break;
		case RTA_PREFSRC:
			want.has_src = vl == alen;
			if (want.has_src)
				memcpy(want.src, v, alen);
			break;
		case RTA_METRICS:
			for (size_t m = 0; vl - m >= 4;) {
				size_t ml = le16(v + m);

				if (ml < 4 || ml > vl - m)
					break;
				if (le16(v + m + 2) == RTAX_MTU && ml == 8)
					want.mtu = le32(v + m + 4);
				if (RTA_ALIGN(ml) >= vl - m)
					break;
				m += RTA_ALIGN(ml);
			}
			break;
		}
		if (RTA_ALIGN(al) >= len - off)
			break;
		off += RTA_ALIGN(al);
	}
	check(ra.type == want.type && ra.table == want.table && ra.oif == want.oif && ra.mtu == want.mtu);
	check(ra.has_gw == want.has_gw && ra.has_via == want.has_via && ra.has_src == want.has_src);
	check(!memcmp(ra.gw, want.gw, 16) && !memcmp(ra.src, want.src, 16));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	size_t alen = take8(&in) & 1 ? 16 : 4, n = in.n, cap = n / NLMSG_HDRLEN + 1;
	uint8_t *b = malloc(n ? n : 1);
	struct evs whole = { calloc(cap, sizeof(struct rtmon_event)), 0, cap };
	struct evs parts = { calloc(cap, sizeof(struct rtmon_event)), 0, cap };
	int r;

	check(b && whole.ev && parts.ev);
	memcpy(b, in.p, n);
	r = gsoi_rtmon_parse(b, n, got, &whole);
	check(r >= 0 && (size_t)r == whole.n);
	one_by_one(b, n, &parts);
	check(parts.n == whole.n);
	for (size_t i = 0; i < whole.n; i++)
		check(ev_eq(&parts.ev[i], &whole.ev[i]));
	check_route(b, n, alen);
	free(parts.ev);
	free(whole.ev);
	free(b);
	return 0;
}
