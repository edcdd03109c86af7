/*
 * The steering program's verdict on crafted frames, through
 * BPF_PROG_TEST_RUN on the program as gso_steer__create attached it (the
 * interface's MAC in its config, a device on queue 0, two flows: UDP b->a
 * untagged and the same tuple on VLAN 100, plus one over IPv6): each frame
 * must come out with the right action and raise exactly its own counter.
 * Whatever the kernel would drop or is not ours (another MAC, a VLAN no
 * flow has, an insane or cut IP header) passes, and says why.
 */
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "test_steer_util.h"
#include "test_inject_util.h"
#include "steer/steer_map.h"

TestSuite(steer_prog, .fini = sg_fini, .timeout = 60);

/* UDP b:B_PORT -> a:A_PORT, 16 bytes of payload, to side a's MAC.  Checksums do not matter here. */
static struct inj_frame udp_frame(bool v6)
{
	struct inj_frame f;
	uint8_t *ip = f.b + 14, *udp;

	memset(&f, 0, sizeof(f));
	memcpy(f.b, xt_g.tb.mac[0], 6);
	memcpy(f.b + 6, xt_g.tb.mac[1], 6);
	f.l3 = 14;
	f.v6 = v6;
	if (v6) {
		inj_put16(f.b + 12, ETH_P_IPV6);
		ip[0] = 0x60;
		inj_put16(ip + 4, 8 + 16);
		ip[6] = IPPROTO_UDP;
		ip[7] = 64;
		inet_pton(AF_INET6, addr_of(1, true), ip + 8);
		inet_pton(AF_INET6, addr_of(0, true), ip + 24);
		f.l4 = 14 + 40;
	} else {
		inj_put16(f.b + 12, ETH_P_IP);
		ip[0] = 0x45;
		inj_put16(ip + 2, 20 + 8 + 16);
		ip[8] = 64;
		ip[9] = IPPROTO_UDP;
		inet_pton(AF_INET, addr_of(1, false), ip + 12);
		inet_pton(AF_INET, addr_of(0, false), ip + 16);
		f.l4 = 14 + 20;
	}
	udp = f.b + f.l4;
	inj_put16(udp, B_PORT);
	inj_put16(udp + 2, A_PORT);
	inj_put16(udp + 4, 8 + 16);
	f.len = f.l4 + 8 + 16;
	return f;
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

Test(steer_prog, verdicts)
{
	struct gso_flow f4 = udp_flow(false), f4v = f4, f6 = udp_flow(true);
	uint32_t id = 0;
	int fd, err;

	sg_setup(0);
	f4v.vlan = 100;
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f4), 0);
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f4v), 0, "the same tuple on a VLAN is another flow");
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f6), 0);
	f4v.vlan = 4095;
	cr_assert_eq(gso_steer__flow_add(sg.steer, &f4v), -EINVAL);
	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);
	err = bpf_xdp_query_id(xt_g.tb.ifindex[0], 0, &id);
	cr_assert(!err && id, "no XDP program on %s: %s", xt_g.tb.ifname[0], strerror(-err));
	fd = keep_fd(bpf_prog_get_fd_by_id(id));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct prog_case *c = &cases[i];
		struct inj_frame fr = udp_frame(c->v6);
		struct gso_steer_stats before = steer_stats(), after;

		mutate(&fr, c->m);
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fr.b, .data_size_in = fr.len, .repeat = 1);
		err = bpf_prog_test_run_opts(fd, &o);
		cr_assert_eq(err, 0, "%s: test run: %s", c->name, strerror(-err));
		cr_assert_eq(o.retval, (uint32_t)c->action, "%s: action %u, want %d", c->name, o.retval, c->action);
		after = steer_stats();
		for (int k = 0; k < STEER_C_COUNT; k++) {
			uint64_t d = counter(&after, (enum steer_counter)k) - counter(&before, (enum steer_counter)k);

			cr_assert_eq(d, k == STEER_C_SEEN || k == (int)c->want ? 1u : 0u, "%s: counter %d moved by %llu",
				     c->name, k, (unsigned long long)d);
		}
	}
}
