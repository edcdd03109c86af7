/*
 * The steering program's verdict on crafted frames, through
 * BPF_PROG_TEST_RUN on the program as gso_steer__create attached it (the
 * interface's MAC in its config, a device on queue 0, two flows: UDP b->a
 * untagged and the same tuple on VLAN 100, plus one over IPv6): each frame
 * must come out with the right action and raise exactly its own counter.
 * Whatever the kernel would drop or is not ours (another MAC, a VLAN no
 * flow has, an insane or cut IP header) passes, and says why.
 *
 * ICMP path-MTU errors go where the flow they quote goes (icmp_errors).
 *
 * Listener entries (saddr all zero, sport 0): every source to their
 * address and port on their VLAN, TCP and UDP apart, the exact flow
 * winning and counting its own frames, the program's listener flag set
 * while at least one is registered.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "test_steer_util.h"
#include "test_inject_util.h"
#include "icmpframe.h"
#include "steer/steer_map.h"

TestSuite(steer_prog, .fini = sg_fini, .timeout = 60);

/*
 * TCP (a SYN) or UDP src:sport -> dst:dport, 16 bytes of payload, to side a's MAC.
 * Checksums do not matter here.
 */
static struct inj_frame mk_frame(bool v6, uint8_t l4, const char *src, uint16_t sport, const char *dst,
				 uint16_t dport)
{
	struct inj_frame f;
	uint8_t *ip = f.b + 14, *h;
	uint16_t l4_len = (uint16_t)((l4 == IPPROTO_TCP ? 20 : 8) + 16);

	memset(&f, 0, sizeof(f));
	memcpy(f.b, xt_g.tb.mac[0], 6);
	memcpy(f.b + 6, xt_g.tb.mac[1], 6);
	f.l3 = 14;
	f.v6 = v6;
	if (v6) {
		inj_put16(f.b + 12, ETH_P_IPV6);
		ip[0] = 0x60;
		inj_put16(ip + 4, l4_len);
		ip[6] = l4;
		ip[7] = 64;
		cr_assert_eq(inet_pton(AF_INET6, src, ip + 8), 1);
		cr_assert_eq(inet_pton(AF_INET6, dst, ip + 24), 1);
		f.l4 = 14 + 40;
	} else {
		inj_put16(f.b + 12, ETH_P_IP);
		ip[0] = 0x45;
		inj_put16(ip + 2, (uint16_t)(20 + l4_len));
		ip[8] = 64;
		ip[9] = l4;
		cr_assert_eq(inet_pton(AF_INET, src, ip + 12), 1);
		cr_assert_eq(inet_pton(AF_INET, dst, ip + 16), 1);
		f.l4 = 14 + 20;
	}
	h = f.b + f.l4;
	inj_put16(h, sport);
	inj_put16(h + 2, dport);
	if (l4 == IPPROTO_TCP) {
		h[12] = 0x50;
		h[13] = GSO_TCP_SYN;
	} else {
		inj_put16(h + 4, l4_len);
	}
	f.len = f.l4 + l4_len;
	return f;
}

/* UDP b:B_PORT -> a:A_PORT, the flow udp_flow() names. */
static struct inj_frame udp_frame(bool v6)
{
	return mk_frame(v6, IPPROTO_UDP, addr_of(1, v6), B_PORT, addr_of(0, v6), A_PORT);
}

enum mutation {
	M_NONE, M_VLAN999, M_VLAN100, M_PRIO_TAG, M_QINQ, M_8021AD, M_OTHER_MAC, M_BROADCAST, M_MULTICAST,
	M_IP_VERSION, M_IHL4, M_TOT_LONG, M_TOT_SHORT, M_CUT_IP, M_CUT_OPTS, M_L4_SHORT, M_OTHER_PORT,
	M_FRAGMENT, M_V6_VERSION, M_V6_LONG, M_NOT_IP,
};

struct prog_case {
	const char *name;
	bool v6;
	enum mutation m;
	int action;              /* XDP_PASS or XDP_REDIRECT */
	enum steer_counter want; /* the one counter besides SEEN that must move */
};

static void mutate(struct inj_frame *f, enum mutation m)
{
	static const uint8_t other[6] = { 0x02, 0x00, 0x5e, 0x10, 0x00, 0x99 };
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
	uint8_t *ip = f->b + f->l3;

	switch (m) {
	case M_NONE: break;
	case M_VLAN999: inj_vlan(f, ETH_P_8021Q, 999); break;
	case M_VLAN100: inj_vlan(f, ETH_P_8021Q, 100); break;
	case M_PRIO_TAG: inj_vlan(f, ETH_P_8021Q, 0); break;
	case M_QINQ:
		inj_vlan(f, ETH_P_8021Q, 100);
		inj_vlan(f, ETH_P_8021Q, 100);
		break;
	case M_8021AD: inj_vlan(f, ETH_P_8021AD, 100); break;
	case M_OTHER_MAC: inj_dst_mac(f, other); break;
	case M_BROADCAST: inj_dst_mac(f, bcast); break;
	case M_MULTICAST: inj_dst_mac(f, mcast); break;
	case M_IP_VERSION: ip[0] = 0x55; break;
	case M_IHL4: ip[0] = 0x44; break;
	case M_TOT_LONG: inj_put16(ip + 2, (uint16_t)(f->len - f->l3 + 1)); break;
	case M_TOT_SHORT: inj_put16(ip + 2, 19); break;
	case M_CUT_IP: f->len = f->l3 + 12; break;
	case M_CUT_OPTS:
		/* Header length 60: options beyond the frame's end. */
		ip[0] = 0x4f;
		f->len = f->l3 + 40;
		inj_put16(ip + 2, 40);
		break;
	case M_L4_SHORT:
		inj_put16(ip + 2, 20 + 4);
		break;
	case M_OTHER_PORT: inj_put16(f->b + f->l4 + 2, A_PORT2); break;
	case M_FRAGMENT: inj_put16(ip + 6, 0x2000); break;
	case M_V6_VERSION: ip[0] = 0x40; break;
	case M_V6_LONG: inj_put16(ip + 4, (uint16_t)(f->len - f->l4 + 1)); break;
	case M_NOT_IP: inj_put16(f->b + 12, 0x88b5); break;
	}
}

static const struct prog_case cases[] = {
	{ "the flow's frame", false, M_NONE, XDP_REDIRECT, STEER_C_STEERED },
	{ "the flow's frame, IPv6", true, M_NONE, XDP_REDIRECT, STEER_C_STEERED },
	{ "the VLAN 100 flow's frame", false, M_VLAN100, XDP_REDIRECT, STEER_C_STEERED },
	{ "foreign VLAN 999", false, M_VLAN999, XDP_PASS, STEER_C_VLAN },
	{ "VLAN 999 on the untagged IPv6 flow", true, M_VLAN999, XDP_PASS, STEER_C_VLAN },
	{ "priority tag", false, M_PRIO_TAG, XDP_PASS, STEER_C_VLAN },
	{ "two 802.1Q tags", false, M_QINQ, XDP_PASS, STEER_C_VLAN },
	{ "802.1ad tag", false, M_8021AD, XDP_PASS, STEER_C_VLAN },
	{ "foreign destination MAC", false, M_OTHER_MAC, XDP_PASS, STEER_C_OTHER_MAC },
	{ "broadcast", false, M_BROADCAST, XDP_PASS, STEER_C_OTHER_MAC },
	{ "multicast", true, M_MULTICAST, XDP_PASS, STEER_C_OTHER_MAC },
	{ "IP version 5", false, M_IP_VERSION, XDP_PASS, STEER_C_BAD_HDR },
	{ "ihl 4", false, M_IHL4, XDP_PASS, STEER_C_BAD_HDR },
	{ "total length past the frame", false, M_TOT_LONG, XDP_PASS, STEER_C_BAD_HDR },
	{ "total length below the header", false, M_TOT_SHORT, XDP_PASS, STEER_C_BAD_HDR },
	{ "truncated IPv4 header", false, M_CUT_IP, XDP_PASS, STEER_C_BAD_HDR },
	{ "IPv4 options cut off", false, M_CUT_OPTS, XDP_PASS, STEER_C_BAD_HDR },
	{ "no room for the UDP header", false, M_L4_SHORT, XDP_PASS, STEER_C_BAD_HDR },
	{ "IPv6 version 4", true, M_V6_VERSION, XDP_PASS, STEER_C_BAD_HDR },
	{ "IPv6 payload past the frame", true, M_V6_LONG, XDP_PASS, STEER_C_BAD_HDR },
	{ "another port", false, M_OTHER_PORT, XDP_PASS, STEER_C_PASSED },
	{ "a first fragment", false, M_FRAGMENT, XDP_PASS, STEER_C_PASSED },
	{ "not IP", false, M_NOT_IP, XDP_PASS, STEER_C_PASSED },
};

static uint64_t counter(const struct gso_steer_stats *s, enum steer_counter c)
{
	switch (c) {
	case STEER_C_SEEN: return s->seen;
	case STEER_C_STEERED: return s->steered;
	case STEER_C_NO_SOCKET: return s->no_socket;
	case STEER_C_PASSED: return s->passed;
	case STEER_C_OTHER_MAC: return s->other_mac;
	case STEER_C_VLAN: return s->vlan;
	case STEER_C_BAD_HDR: return s->bad_hdr;
	default: return 0;
	}
}

/* The fd of the program gso_steer__create attached to side a (in side a's namespace from then on). */
static int attached_prog(void)
{
	uint32_t id = 0;
	int err;

	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);
	err = bpf_xdp_query_id(xt_g.tb.ifindex[0], 0, &id);
	cr_assert(!err && id, "no XDP program on %s: %s", xt_g.tb.ifname[0], strerror(-err));
	return keep_fd(bpf_prog_get_fd_by_id(id));
}

/* Run `fr` through the program: its action must be `action`, and SEEN and `want` the only counters that move. */
static void verdict(int fd, const char *name, const struct inj_frame *fr, int action, enum steer_counter want)
{
	struct gso_steer_stats before = steer_stats(), after;
	int err;

	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fr->b, .data_size_in = fr->len, .repeat = 1);
	err = bpf_prog_test_run_opts(fd, &o);
	cr_assert_eq(err, 0, "%s: test run: %s", name, strerror(-err));
	cr_assert_eq(o.retval, (uint32_t)action, "%s: action %u, want %d", name, o.retval, action);
	after = steer_stats();
	for (int k = 0; k < STEER_C_COUNT; k++) {
		uint64_t d = counter(&after, (enum steer_counter)k) - counter(&before, (enum steer_counter)k);

		cr_assert_eq(d, k == STEER_C_SEEN || k == (int)want ? 1u : 0u, "%s: counter %d moved by %llu", name, k,
			     (unsigned long long)d);
	}
}

/* The listener flag in the program's config, as the program reads it. */
static uint8_t cfg_listeners(int prog_fd)
{
	uint32_t ids[8], zero = 0;
	struct bpf_prog_info pi;
	uint32_t len = sizeof(pi);

	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = 8;
	pi.map_ids = (uint64_t)(uintptr_t)ids;
	cr_assert_eq(bpf_obj_get_info_by_fd(prog_fd, &pi, &len), 0);
	for (uint32_t i = 0; i < pi.nr_map_ids && i < 8; i++) {
		struct bpf_map_info mi;
		uint32_t mlen = sizeof(mi);
		struct steer_cfg cfg;
		int fd = bpf_map_get_fd_by_id(ids[i]);

		cr_assert_geq(fd, 0);
		memset(&mi, 0, sizeof(mi));
		cr_assert_eq(bpf_obj_get_info_by_fd(fd, &mi, &mlen), 0);
		if (strcmp(mi.name, STEER_MAP_CFG)) {
			close(fd);
			continue;
		}
		cr_assert_eq(mi.value_size, sizeof(cfg));
		cr_assert_eq(bpf_map_lookup_elem(fd, &zero, &cfg), 0);
		close(fd);
		return cfg.listeners;
	}
	cr_assert_fail("no %s map in the program", STEER_MAP_CFG);
	return 0;
}

Test(steer_prog, verdicts)
{
	struct gso_flow f4 = udp_flow(false), f4v = f4, f6 = udp_flow(true);
	int fd;

	sg_setup(0);
	f4v.vlan = 100;
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f4), 0);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f4v), 0, "the same tuple on a VLAN is another flow");
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f6), 0);
	f4v.vlan = 4095;
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f4v), -EINVAL);
	fd = attached_prog();
	cr_assert_eq(cfg_listeners(fd), 0, "no listener entry: no second lookup");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct prog_case *c = &cases[i];
		struct inj_frame fr = udp_frame(c->v6);

		mutate(&fr, c->m);
		verdict(fd, c->name, &fr, c->action, c->want);
	}
}

/* ---- listener entries ---- */

/* A third host, neither side of the test-bed: another source for a listener. */
static const char *addr_c(bool v6)
{
	return v6 ? "fd77::9" : "10.77.0.9";
}

/* A flow src:sport -> dst:dport; src NULL: the source all zero (with sport 0, a listener entry). */
static struct gso_flow mk_flow(bool v6, uint8_t l4, const char *src, uint16_t sport, const char *dst, uint16_t dport)
{
	GSO_OPTS(gso_flow, f, .l3 = v6 ? GSO_L3_IPV6 : GSO_L3_IPV4, .l4 = l4, .sport = sport, .dport = dport);

	if (src)
		cr_assert_eq(inet_pton(v6 ? AF_INET6 : AF_INET, src, f.saddr), 1);
	cr_assert_eq(inet_pton(v6 ? AF_INET6 : AF_INET, dst, f.daddr), 1);
	return f;
}

static void want_count(const struct gso_flow *f, uint64_t packets, uint64_t bytes, const char *what)
{
	uint64_t p = 0, b = 0;

	cr_assert_eq(gso_steer__flow_count(sg.steer, f, &p, &b), 0, "%s: not registered", what);
	cr_assert_eq(p, packets, "%s: %llu packets, want %llu", what, (unsigned long long)p,
		     (unsigned long long)packets);
	cr_assert_eq(b, bytes, "%s: %llu bytes, want %llu", what, (unsigned long long)b, (unsigned long long)bytes);
}

ParameterizedTestParameters(steer_prog, listener_tcp)
{
	static bool v6[] = { false, true };
	return cr_make_param_array(bool, v6, 2);
}

/*
 * A TCP listener entry on a:A_PORT next to the exact flow b:B_PORT ->
 * a:A_PORT: the flow keeps its frames, the listener takes every other
 * source; another port, another address, UDP and another VLAN pass;
 * after the flow's del its frames go to the listener, after the
 * listener's del everything passes.
 */
ParameterizedTest(bool *v6p, steer_prog, listener_tcp)
{
	/* First: the frames take side a's MAC from the test-bed. */
	sg_setup(0);
	bool v6 = *v6p;
	const char *a = addr_of(0, v6), *b = addr_of(1, v6), *c = addr_c(v6);
	const char *other_a = v6 ? "fd77::5" : "10.77.0.5";
	struct gso_flow lis = mk_flow(v6, GSO_L4_TCP, NULL, 0, a, A_PORT);
	struct gso_flow exact = mk_flow(v6, GSO_L4_TCP, b, B_PORT, a, A_PORT);
	struct inj_frame from_b = mk_frame(v6, IPPROTO_TCP, b, B_PORT, a, A_PORT);
	struct inj_frame from_b2 = mk_frame(v6, IPPROTO_TCP, b, B_PORT + 1, a, A_PORT);
	struct inj_frame from_c = mk_frame(v6, IPPROTO_TCP, c, 40000, a, A_PORT);
	struct inj_frame fr;
	uint32_t len = from_b.len; /* every TCP frame here has that length */
	int fd;

	fd = attached_prog();
	cr_assert_eq(gso_steer__flow_add(sg.steer, &lis), 0, "a listener entry (source all zero, port 0) is a flow");
	cr_assert_eq(gso_steer__flow_add(sg.steer, &lis), -EEXIST);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &exact), 0, "a flow next to the listener on its port");
	cr_assert_eq(steer_stats().flows, 2);
	cr_assert_eq(cfg_listeners(fd), 1);
	want_count(&lis, 0, 0, "new listener");

	verdict(fd, "the exact flow's frame", &from_b, XDP_REDIRECT, STEER_C_STEERED);
	want_count(&exact, 1, len, "exact flow");
	want_count(&lis, 0, 0, "listener, after the exact flow's frame");
	verdict(fd, "the flow's source address, another port", &from_b2, XDP_REDIRECT, STEER_C_STEERED);
	verdict(fd, "another source", &from_c, XDP_REDIRECT, STEER_C_STEERED);
	want_count(&lis, 2, 2 * len, "listener");
	want_count(&exact, 1, len, "exact flow, after the listener's frames");

	fr = mk_frame(v6, IPPROTO_TCP, c, 40000, a, A_PORT2);
	verdict(fd, "another destination port", &fr, XDP_PASS, STEER_C_PASSED);
	fr = mk_frame(v6, IPPROTO_TCP, c, 40000, other_a, A_PORT);
	verdict(fd, "another destination address", &fr, XDP_PASS, STEER_C_PASSED);
	fr = mk_frame(v6, IPPROTO_UDP, c, 40000, a, A_PORT);
	verdict(fd, "UDP to the TCP listener's port", &fr, XDP_PASS, STEER_C_PASSED);
	fr = from_c;
	inj_vlan(&fr, ETH_P_8021Q, 100);
	verdict(fd, "the untagged listener's port under VLAN 100", &fr, XDP_PASS, STEER_C_PASSED);
	fr = from_b;
	inj_vlan(&fr, ETH_P_8021Q, 100);
	verdict(fd, "the untagged flow under VLAN 100", &fr, XDP_PASS, STEER_C_VLAN);
	want_count(&lis, 2, 2 * len, "listener, after frames it must not take");
	want_count(&exact, 1, len, "exact flow, after frames it must not take");

	/* Without its flow, the connection's frames fall to the listener. */
	cr_assert_eq(gso_steer__flow_del(sg.steer, &exact), 0);
	cr_assert_eq(cfg_listeners(fd), 1, "a flow's del leaves the listener flag");
	verdict(fd, "the deleted flow's frame", &from_b, XDP_REDIRECT, STEER_C_STEERED);
	want_count(&lis, 3, 3 * len, "listener, after the flow's del");

	cr_assert_eq(gso_steer__flow_del(sg.steer, &lis), 0);
	cr_assert_eq(gso_steer__flow_del(sg.steer, &lis), -ENOENT);
	cr_assert_eq(gso_steer__flow_count(sg.steer, &lis, NULL, NULL), -ENOENT);
	cr_assert_eq(cfg_listeners(fd), 0, "the last listener's del clears the flag");
	cr_assert_eq(steer_stats().flows, 0);
	verdict(fd, "after del, the former flow's source", &from_b, XDP_PASS, STEER_C_PASSED);
	verdict(fd, "after del, another source", &from_c, XDP_PASS, STEER_C_PASSED);
}

ParameterizedTestParameters(steer_prog, listener_udp)
{
	static bool v6[] = { false, true };
	return cr_make_param_array(bool, v6, 2);
}

/* A UDP listener entry: every source's datagrams to its port, TCP to that port passes. */
ParameterizedTest(bool *v6p, steer_prog, listener_udp)
{
	/* First: the frames take side a's MAC from the test-bed. */
	sg_setup(0);
	bool v6 = *v6p;
	const char *a = addr_of(0, v6), *b = addr_of(1, v6), *c = addr_c(v6);
	struct gso_flow lis = mk_flow(v6, GSO_L4_UDP, NULL, 0, a, A_PORT);
	struct inj_frame d1 = mk_frame(v6, IPPROTO_UDP, b, B_PORT, a, A_PORT);
	struct inj_frame d2 = mk_frame(v6, IPPROTO_UDP, c, 53, a, A_PORT);
	struct inj_frame fr;
	int fd;

	fd = attached_prog();
	cr_assert_eq(gso_steer__flow_add(sg.steer, &lis), 0);
	cr_assert_eq(cfg_listeners(fd), 1);
	verdict(fd, "a datagram from b", &d1, XDP_REDIRECT, STEER_C_STEERED);
	verdict(fd, "a datagram from c", &d2, XDP_REDIRECT, STEER_C_STEERED);
	want_count(&lis, 2, d1.len + d2.len, "UDP listener");
	fr = mk_frame(v6, IPPROTO_TCP, b, B_PORT, a, A_PORT);
	verdict(fd, "TCP to the UDP listener's port", &fr, XDP_PASS, STEER_C_PASSED);
	fr = mk_frame(v6, IPPROTO_UDP, b, B_PORT, a, A_PORT2);
	verdict(fd, "a datagram to another port", &fr, XDP_PASS, STEER_C_PASSED);
	cr_assert_eq(gso_steer__flow_del(sg.steer, &lis), 0);
	cr_assert_eq(cfg_listeners(fd), 0);
	verdict(fd, "after del", &d1, XDP_PASS, STEER_C_PASSED);
}

/*
 * The listener flag counts: it stays while any listener entry is left,
 * whatever the order of the dels; a listener on a VLAN takes that VLAN's
 * frames only; a source that is zero in its address or its port alone
 * is an exact flow, not a listener.
 */
Test(steer_prog, listener_flag)
{
	/* First: the frames take side a's MAC from the test-bed. */
	sg_setup(0);
	const char *a = addr_of(0, false), *b = addr_of(1, false);
	struct gso_flow l1 = mk_flow(false, GSO_L4_TCP, NULL, 0, a, A_PORT);
	struct gso_flow l2 = mk_flow(false, GSO_L4_TCP, NULL, 0, a, A_PORT2);
	struct gso_flow l6 = mk_flow(true, GSO_L4_UDP, NULL, 0, addr_of(0, true), A_PORT);
	struct gso_flow lv = l1, half = mk_flow(false, GSO_L4_TCP, NULL, B_PORT, a, A_PORT);
	struct inj_frame t1 = mk_frame(false, IPPROTO_TCP, b, B_PORT, a, A_PORT);
	struct inj_frame t2 = mk_frame(false, IPPROTO_TCP, b, B_PORT, a, A_PORT2);
	struct inj_frame tv = t1;
	int fd;

	fd = attached_prog();
	inj_vlan(&tv, ETH_P_8021Q, 100);
	lv.vlan = 100;

	cr_assert_eq(gso_steer__flow_add(sg.steer, &half), 0);
	cr_assert_eq(cfg_listeners(fd), 0, "a source address of zero with a port is an exact flow");
	verdict(fd, "source port of the address-zero flow, from b", &t1, XDP_PASS, STEER_C_PASSED);
	cr_assert_eq(gso_steer__flow_del(sg.steer, &half), 0);

	cr_assert_eq(gso_steer__flow_add(sg.steer, &lv), 0);
	cr_assert_eq(cfg_listeners(fd), 1);
	verdict(fd, "VLAN 100 to the VLAN 100 listener", &tv, XDP_REDIRECT, STEER_C_STEERED);
	verdict(fd, "untagged to the VLAN 100 listener's port", &t1, XDP_PASS, STEER_C_PASSED);
	want_count(&lv, 1, tv.len, "VLAN 100 listener");

	cr_assert_eq(gso_steer__flow_add(sg.steer, &l1), 0);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &l2), 0);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &l6), 0);
	verdict(fd, "untagged to the untagged listener", &t1, XDP_REDIRECT, STEER_C_STEERED);
	verdict(fd, "VLAN 100 still to its own listener", &tv, XDP_REDIRECT, STEER_C_STEERED);
	want_count(&l1, 1, t1.len, "untagged listener");
	want_count(&lv, 2, 2 * tv.len, "VLAN 100 listener");

	cr_assert_eq(gso_steer__flow_del(sg.steer, &l1), 0);
	cr_assert_eq(gso_steer__flow_del(sg.steer, &lv), 0);
	cr_assert_eq(cfg_listeners(fd), 1, "two listener entries left");
	verdict(fd, "to the listener left on A_PORT2", &t2, XDP_REDIRECT, STEER_C_STEERED);
	verdict(fd, "to the deleted listener", &t1, XDP_PASS, STEER_C_PASSED);
	cr_assert_eq(gso_steer__flow_del(sg.steer, &l2), 0);
	cr_assert_eq(cfg_listeners(fd), 1, "the IPv6 UDP listener is left");
	cr_assert_eq(gso_steer__flow_del(sg.steer, &l6), 0);
	cr_assert_eq(cfg_listeners(fd), 0);
	verdict(fd, "no listener left", &t2, XDP_PASS, STEER_C_PASSED);
	/* Again from zero: the count went back to 0, not below. */
	cr_assert_eq(gso_steer__flow_add(sg.steer, &l2), 0);
	cr_assert_eq(cfg_listeners(fd), 1);
	verdict(fd, "a listener again", &t2, XDP_REDIRECT, STEER_C_STEERED);
	cr_assert_eq(gso_steer__flow_del(sg.steer, &l2), 0);
	cr_assert_eq(cfg_listeners(fd), 0);
}

/* ---- ICMP path-MTU errors ---- */

/* An ICMP error from b to a quoting a's packet a:A_PORT -> b:B_PORT of protocol l4 (type/code as given). */
static struct inj_frame icmp_to_a(bool v6, uint8_t l4, uint8_t type, uint8_t code, uint16_t lport)
{
	struct icmp_knobs k = { .v6 = v6, .type = type, .code = code, .mtu = 1280, .q_ver = v6 ? 6 : 4,
				.q_ihl = 5, .q_proto = l4, .q_l4 = l4 == IPPROTO_TCP ? 20 : 8, .lport = lport,
				.rport = B_PORT, .seq = 1 };
	struct icmp_frame f;
	struct inj_frame fr;

	cr_assert_eq(inet_pton(v6 ? AF_INET6 : AF_INET, addr_of(1, v6), k.router), 1);
	cr_assert_eq(inet_pton(v6 ? AF_INET6 : AF_INET, addr_of(0, v6), k.our), 1);
	cr_assert_eq(inet_pton(v6 ? AF_INET6 : AF_INET, addr_of(1, v6), k.peer), 1);
	icmp_frame_build(&f, &k);
	memcpy(f.b, xt_g.tb.mac[0], 6);
	memcpy(f.b + 6, xt_g.tb.mac[1], 6);
	memset(&fr, 0, sizeof(fr));
	memcpy(fr.b, f.b, f.len);
	fr.len = f.len;
	return fr;
}

/*
 * ICMP "fragmentation needed" and ICMPv6 "packet too big" quoting a
 * registered flow's packet go where its frames go (and count on its
 * entry); quoting another tuple, or of another type or code, they pass.
 * An ICMP-only entry (GSO_FLOW_F_ICMP_ONLY: a datagram flow whose replies
 * are someone else's) takes the errors and lets its own frames pass.
 */
Test(steer_prog, icmp_errors)
{
	sg_setup(0);
	const char *a4 = addr_of(0, false), *b4 = addr_of(1, false), *a6 = addr_of(0, true), *b6 = addr_of(1, true);
	struct gso_flow t4 = mk_flow(false, GSO_L4_TCP, b4, B_PORT, a4, A_PORT);
	struct gso_flow t6 = mk_flow(true, GSO_L4_TCP, b6, B_PORT, a6, A_PORT);
	struct gso_flow u4 = mk_flow(false, GSO_L4_UDP, b4, B_PORT, a4, A_PORT2);
	struct gso_flow lu = mk_flow(false, GSO_L4_UDP, NULL, 0, a4, A_PORT);
	struct inj_frame e;
	int fd = attached_prog();

	cr_assert_eq(gso_steer__flow_add(sg.steer, &t4), 0);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &t6), 0);
	e = icmp_to_a(false, IPPROTO_TCP, 3, 4, A_PORT);
	verdict(fd, "frag-needed quoting the TCP flow", &e, XDP_REDIRECT, STEER_C_STEERED);
	want_count(&t4, 1, e.len, "TCP flow, its ICMP error");
	e = icmp_to_a(true, IPPROTO_TCP, 2, 0, A_PORT);
	verdict(fd, "packet-too-big quoting the IPv6 TCP flow", &e, XDP_REDIRECT, STEER_C_STEERED);
	e = icmp_to_a(false, IPPROTO_TCP, 3, 4, A_PORT2);
	verdict(fd, "frag-needed quoting no flow", &e, XDP_PASS, STEER_C_PASSED);
	e = icmp_to_a(false, IPPROTO_TCP, 3, 3, A_PORT);
	verdict(fd, "port unreachable quoting the flow: the kernel's", &e, XDP_PASS, STEER_C_PASSED);
	e = icmp_to_a(false, IPPROTO_TCP, 8, 0, A_PORT);
	verdict(fd, "an echo request", &e, XDP_PASS, STEER_C_PASSED);
	e = icmp_to_a(true, IPPROTO_TCP, 1, 4, A_PORT);
	verdict(fd, "ICMPv6 port unreachable", &e, XDP_PASS, STEER_C_PASSED);

	/* ICMP only: the flow's own frames pass, its errors are steered. */
	u4.flags = GSO_FLOW_F_ICMP_ONLY;
	cr_assert_eq(gso_steer__flow_add(sg.steer, &u4), 0);
	struct inj_frame u = mk_frame(false, IPPROTO_UDP, b4, B_PORT, a4, A_PORT2);
	verdict(fd, "a datagram of the ICMP-only flow", &u, XDP_PASS, STEER_C_PASSED);
	e = icmp_to_a(false, IPPROTO_UDP, 3, 4, A_PORT2);
	verdict(fd, "frag-needed quoting the ICMP-only flow", &e, XDP_REDIRECT, STEER_C_STEERED);
	/* ... and with a listener on its port, the listener takes its datagrams. */
	lu.dport = A_PORT2;
	cr_assert_eq(gso_steer__flow_add(sg.steer, &lu), 0);
	verdict(fd, "a datagram of the ICMP-only flow, a listener on the port", &u, XDP_REDIRECT, STEER_C_STEERED);
	want_count(&lu, 1, u.len, "the listener");
	cr_assert_eq(gso_steer__flow_del(sg.steer, &lu), 0);
	cr_assert_eq(gso_steer__flow_del(sg.steer, &u4), 0);

	/* Not on a listener entry; no unknown flags. */
	lu.flags = GSO_FLOW_F_ICMP_ONLY;
	cr_assert_eq(gso_steer__flow_add(sg.steer, &lu), -EINVAL);
	u4.flags = 1u << 7;
	cr_assert_eq(gso_steer__flow_add(sg.steer, &u4), -EINVAL);
}
