/*
 * Capability probing on interfaces whose answers we know on this kernel: a
 * veth (copy mode, no zero-copy: bind gives EOPNOTSUPP; multi-buffer; TX
 * metadata and checksum requests; netdev netlink present) and loopback,
 * through gso_ifcaps__probe() and through tools/gsocaps (text, --json,
 * --help, bad arguments).
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "test_xsk_util.h"

TestSuite(xsk_caps, .fini = xt_fini, .timeout = 60);

static void check_veth(const struct gso_ifcaps *c)
{
	cr_assert_str_eq(c->driver, "veth");
	cr_assert_eq(c->mtu, 1500);
	cr_assert_eq(c->rx_queues, 1);
	cr_assert_eq(c->tx_queues, 1);
	cr_assert_eq(c->gso_max_size, 65536);
	cr_assert(c->features & GSO_IF_SG);
	cr_assert(c->features & GSO_IF_TSO4);
	cr_assert(c->features & GSO_IF_USO);
	cr_assert(c->features & GSO_IF_CSUM_HW);
	cr_assert(c->features_fixed & GSO_IF_CSUM_IPV4, "veth's tx-checksum-ipv4 is fixed off");
	cr_assert_eq(c->netdev_genl, 1, "netdev netlink family: %d", c->netdev_genl);
	cr_assert(c->xdp_features & 1, "xdp-features has basic");
	cr_assert_eq(c->xdp_zc_max_segs, 0, "veth has no zero-copy");
	cr_assert_eq(c->xsk_copy, 1);
	cr_assert_eq(c->xsk_zerocopy, -EOPNOTSUPP, "zero-copy bind on veth: %d", c->xsk_zerocopy);
	cr_assert_eq(c->xsk_sg, 1);
	cr_assert_eq(c->xsk_copy_max_descs, 18);
	cr_assert_eq(c->xsk_unaligned, 1);
	cr_assert_eq(c->xsk_tx_metadata, 1);
	cr_assert_eq(c->xsk_csum, 1);
	cr_assert_eq(c->xsk_tx_budget, 1);
}

Test(xsk_caps, veth_probe)
{
	gso_test_require_root();
	xt_bed(0);
	cr_assert_eq(gso_testbed_enter(&xt_g.tb, 0), 0);
	GSO_OPTS(gso_ifcaps, c);
	cr_assert_eq(gso_ifcaps__probe(xt_g.tb.ifname[0], 0, &c), 0);
	cr_assert_str_eq(c.ifname, xt_g.tb.ifname[0]);
	cr_assert_eq(c.ifindex, xt_g.tb.ifindex[0]);
	check_veth(&c);

	/* Cached: same answer; a refresh probes again and agrees. */
	GSO_OPTS(gso_ifcaps, c2);
	cr_assert_eq(gso_ifcaps__probe(xt_g.tb.ifname[0], 0, &c2), 0);
	cr_assert_eq(memcmp(&c, &c2, sizeof(c)), 0);
	cr_assert_eq(gso_ifcaps__probe(xt_g.tb.ifname[0], GSO_IFCAPS_REFRESH, &c2), 0);
	check_veth(&c2);

	/* Skipped probes say so. */
	GSO_OPTS(gso_ifcaps, c3);
	cr_assert_eq(gso_ifcaps__probe(xt_g.tb.ifname[0], GSO_IFCAPS_NO_XSK, &c3), 0);
	cr_assert_eq(c3.xsk_copy, -ECANCELED);
	cr_assert_eq(c3.mtu, 1500);

	/* A short struct (an older caller) gets only what it has room for. */
	struct gso_ifcaps small;
	memset(&small, 0x5a, sizeof(small));
	small.sz = offsetof(struct gso_ifcaps, mtu);
	cr_assert_eq(gso_ifcaps__probe(xt_g.tb.ifname[0], 0, &small), 0);
	cr_assert_eq(small.ifindex, xt_g.tb.ifindex[0]);
	cr_assert_eq(small.mtu, 0x5a5a5a5a, "field past sz written");

	cr_assert_eq(gso_ifcaps__probe("nosuchif0", 0, &c), -ENODEV);
	cr_assert_eq(gso_ifcaps__probe(NULL, 0, &c), -EINVAL);
	cr_assert_eq(gso_ifcaps__probe(xt_g.tb.ifname[0], 1u << 30, &c), -EINVAL);
	c.sz = 0;
	cr_assert_eq(gso_ifcaps__probe(xt_g.tb.ifname[0], 0, &c), -EINVAL);
}

Test(xsk_caps, loopback_probe)
{
	gso_test_require_root();
	xt_bed(0);
	cr_assert_eq(gso_testbed_enter(&xt_g.tb, 0), 0);
	GSO_OPTS(gso_ifcaps, c);
	cr_assert_eq(gso_ifcaps__probe("lo", 0, &c), 0);
	cr_assert_str_eq(c.driver, "loopback");
	cr_assert_eq(c.mtu, 65536);
	cr_assert(c.features_fixed & GSO_IF_SG);
	cr_assert_eq(c.xsk_copy, 1);
	cr_assert_eq(c.xsk_zerocopy, -EOPNOTSUPP);
	cr_assert_eq(c.xsk_sg, 1);
}

/* Run gsocaps in side a; output into `out`.  Returns its exit status. */
static int run_caps(const char *args, char *out, size_t cap)
{
	char path[] = "/tmp/gsocaps-test-XXXXXX";
	int fd = mkstemp(path), st;
	ssize_t n;

	cr_assert_geq(fd, 0);
	st = gso_testbed_sh(&xt_g.tb, 0, "%s %s >%s 2>&1", gso_test_build_path("tools/gsocaps"), args, path);
	n = read(fd, out, cap - 1);
	out[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(path);
	return st;
}

Test(xsk_caps, gsocaps_tool)
{
	static char out[16384];
	char args[64];

	gso_test_require_root();
	xt_bed(0);
	snprintf(args, sizeof(args), "%s", xt_g.tb.ifname[0]);
	cr_assert_eq(run_caps(args, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "driver veth, MTU 1500"), "%s", out);
	cr_assert(strstr(out, "tx-udp-segmentation            on"), "%s", out);
	cr_assert(strstr(out, "zero-copy            no (Operation not supported)"), "%s", out);
	cr_assert(strstr(out, "multi-buffer         yes, up to 18 descriptors"), "%s", out);
	cr_assert(strstr(out, "checksum requests    yes"), "%s", out);

	snprintf(args, sizeof(args), "--json %s", xt_g.tb.ifname[0]);
	cr_assert_eq(run_caps(args, out, sizeof(out)), 0, "%s", out);
	cr_assert_eq(out[0], '{', "%s", out);
	cr_assert(strstr(out, "\"driver\":\"veth\""), "%s", out);
	cr_assert(strstr(out, "\"zerocopy\":-95"), "%s", out);
	cr_assert(strstr(out, "\"multi_buffer\":1"), "%s", out);
	cr_assert(strstr(out, "\"xdp_features\":[\"basic\""), "%s", out);

	cr_assert_eq(run_caps("--json lo", out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "\"driver\":\"loopback\""), "%s", out);
	cr_assert(strstr(out, "\"mtu\":65536"), "%s", out);

	cr_assert_eq(run_caps("--help", out, sizeof(out)), 0);
	cr_assert(strstr(out, "usage: gsocaps"), "%s", out);
	cr_assert_eq(run_caps("", out, sizeof(out)), 2, "no interface is a usage error");
	cr_assert_eq(run_caps("--bogus lo", out, sizeof(out)), 2);
	cr_assert_eq(run_caps("nosuchif0", out, sizeof(out)), 1);
	cr_assert(strstr(out, "No such device"), "%s", out);
}
