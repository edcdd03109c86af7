/*
 * The steering API's pure parts: the reply flow of a template (addresses
 * and ports swapped, IPv4 padded with zeros) and argument checks that
 * need no kernel.  The program itself is tested in
 * tests/integration/test_steer*.c.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <gso/gso.h>
#include <gso/dev.h>
#include <gso/steer.h>

struct reply_case {
	char name[32];
	uint8_t l3, l4;
	bool vlan;
	char src[40], dst[40];
	uint16_t sport, dport;
};

ParameterizedTestParameters(steer_flow, reply_of)
{
	static struct reply_case c[] = {
		{ "tcp v4", GSO_L3_IPV4, GSO_L4_TCP, false, "10.1.2.3", "10.9.8.7", 40000, 443 },
		{ "udp v4, vlan", GSO_L3_IPV4, GSO_L4_UDP, true, "192.0.2.1", "198.51.100.2", 1, 65535 },
		{ "tcp v6", GSO_L3_IPV6, GSO_L4_TCP, false, "fd00::1", "fd00::abcd:2", 5000, 80 },
		{ "udp v6", GSO_L3_IPV6, GSO_L4_UDP, false, "2001:db8::1", "2001:db8::ffff", 9, 9 },
	};
	return cr_make_param_array(struct reply_case, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct reply_case *c, steer_flow, reply_of)
{
	int fam = c->l3 == GSO_L3_IPV4 ? AF_INET : AF_INET6;
	unsigned alen = c->l3 == GSO_L3_IPV4 ? 4 : 16;
	uint8_t s[16] = { 0 }, d[16] = { 0 }, zero[16] = { 0 };
	struct gso_tmpl t;
	struct gso_flow f;

	GSO_OPTS(gso_tmpl_fields, tf, .l3 = c->l3, .l4 = c->l4, .sport = c->sport, .dport = c->dport,
		 .has_vlan = c->vlan, .vlan_tci = c->vlan ? 7 : 0);
	cr_assert_eq(inet_pton(fam, c->src, tf.saddr), 1);
	cr_assert_eq(inet_pton(fam, c->dst, tf.daddr), 1);
	memcpy(s, tf.saddr, alen);
	memcpy(d, tf.daddr, alen);
	cr_assert_eq(gso_tmpl__build(&t, &tf), 0, "%s", c->name);
	memset(&f, 0xee, sizeof(f));
	f.sz = sizeof(f);
	cr_assert_eq(gso_flow__reply_of(&f, &t), 0);
	cr_assert_eq(f.sz, sizeof(f));
	cr_assert_eq(f.l3, c->l3);
	cr_assert_eq(f.l4, c->l4);
	cr_assert_eq(f.sport, c->dport, "%s: the reply comes from the port we send to", c->name);
	cr_assert_eq(f.dport, c->sport);
	cr_assert_eq(memcmp(f.saddr, d, 16), 0, "%s: source = our destination, zero-padded", c->name);
	cr_assert_eq(memcmp(f.daddr, s, 16), 0);
	if (alen == 4) {
		cr_assert_eq(memcmp(f.saddr + 4, zero, 12), 0);
		cr_assert_eq(memcmp(f.daddr + 4, zero, 12), 0);
	}
}

Test(steer_flow, bad_arguments)
{
	struct gso_tmpl t;
	struct gso_flow f, before;

	GSO_OPTS(gso_tmpl_fields, tf, .l3 = GSO_L3_IPV4, .l4 = GSO_L4_UDP, .sport = 1, .dport = 2);
	cr_assert_eq(gso_tmpl__build(&t, &tf), 0);
	memset(&f, 0x5a, sizeof(f));
	f.sz = sizeof(f);
	before = f;
	cr_assert_eq(gso_flow__reply_of(NULL, &t), -EINVAL);
	cr_assert_eq(gso_flow__reply_of(&f, NULL), -EINVAL);
	struct gso_tmpl bad = t;
	bad.l3 = 5;
	cr_assert_eq(gso_flow__reply_of(&f, &bad), -EINVAL);
	bad = t;
	bad.l4 = 1;
	cr_assert_eq(gso_flow__reply_of(&f, &bad), -EINVAL);
	bad = t;
	bad.hdr_len = (uint16_t)(bad.l4_off + 2);
	cr_assert_eq(gso_flow__reply_of(&f, &bad), -EINVAL, "ports past the headers");
	f.sz = 4;
	cr_assert_eq(gso_flow__reply_of(&f, &t), -EINVAL, "sz short of the sz field");
	f.sz = sizeof(size_t);
	cr_assert_eq(gso_flow__reply_of(&f, &t), -EINVAL, "sz only covers sz");
	f.sz = sizeof(f);
	cr_assert_eq(memcmp(&f, &before, sizeof(f)), 0, "failed calls write nothing");
	struct gso_flow z = { 0 };
	cr_assert_eq(gso_flow__reply_of(&z, &t), 0, "sz 0 (= {0}): the whole struct");
	cr_assert_eq(z.sz, sizeof(z));
	/* The steering calls check their arguments before touching a kernel object. */
	cr_assert_eq(gso_steer__flow_add(NULL, &f), -EINVAL);
	cr_assert_eq(gso_steer__flow_del(NULL, &f), -EINVAL);
	cr_assert_eq(gso_steer__flow_count(NULL, &f, NULL, NULL), -EINVAL);
	cr_assert_eq(gso_steer__add_dev(NULL, NULL), -EINVAL);
	cr_assert_eq(gso_steer__del_dev(NULL, NULL), -EINVAL);
	cr_assert_eq(gso_steer__create(NULL, 1, NULL), -EINVAL);
	struct gso_steer *st = NULL;
	GSO_OPTS(gso_steer_opts, o, .max_queues = 1u << 20);
	cr_assert_eq(gso_steer__create(&st, 1, &o), -EINVAL);
	cr_assert_null(st);
	gso_steer__destroy(NULL);
	struct gso_rx_pkt p = { 0 };
	cr_assert_eq(gso_dev__recv(NULL, &p, 1), -EINVAL);
	cr_assert_eq(gso_dev__rx_release(NULL, &p, 1), -EINVAL);
	cr_assert_eq(gso_dev__rx_wait(NULL, 0), -EINVAL);
}
