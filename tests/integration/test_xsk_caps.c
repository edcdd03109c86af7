/*
 * Capability probing on interfaces whose answers we know on this kernel: a
 * veth (copy mode, no zero-copy: bind gives EOPNOTSUPP; multi-buffer; TX
 * metadata and checksum requests; netdev netlink present) and loopback,
 * through gso_ifcaps__probe() and through tools/gsocaps (text, --json,
 * --help, bad arguments).
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include <gso/dev.h>
#include <gso/ifcaps.h>
#include <gso/e1000.h>

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
	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);
	/* The name helper agrees with the test-bed's ifindex. */
	cr_assert_eq(gso_ifindex(xt_g.tb.ifname[0]), xt_g.tb.ifindex[0]);
	GSO_OPTS(gso_ifcaps, c);
	cr_assert_eq(gso_ifcaps__probe(xt_g.tb.ifindex[0], 0, &c), 0);
	cr_assert_str_eq(c.ifname, xt_g.tb.ifname[0]);
	cr_assert_eq(c.ifindex, xt_g.tb.ifindex[0]);
	check_veth(&c);

	/* Cached: same answer; a refresh probes again and agrees. */
	GSO_OPTS(gso_ifcaps, c2);
	cr_assert_eq(gso_ifcaps__probe(xt_g.tb.ifindex[0], 0, &c2), 0);
	cr_assert_eq(memcmp(&c, &c2, sizeof(c)), 0);
	cr_assert_eq(gso_ifcaps__probe(xt_g.tb.ifindex[0], GSO_IFCAPS_REFRESH, &c2), 0);
	check_veth(&c2);

	/* Skipped probes say so. */
	GSO_OPTS(gso_ifcaps, c3);
	cr_assert_eq(gso_ifcaps__probe(xt_g.tb.ifindex[0], GSO_IFCAPS_NO_XSK, &c3), 0);
	cr_assert_eq(c3.xsk_copy, -ECANCELED);
	cr_assert_eq(c3.mtu, 1500);

	/* A short struct (an older caller) gets only what it has room for. */
	struct gso_ifcaps small;
	memset(&small, 0x5a, sizeof(small));
	small.sz = offsetof(struct gso_ifcaps, mtu);
	cr_assert_eq(gso_ifcaps__probe(xt_g.tb.ifindex[0], 0, &small), 0);
	cr_assert_eq(small.ifindex, xt_g.tb.ifindex[0]);
	cr_assert_eq(small.mtu, 0x5a5a5a5a, "field past sz written");

	cr_assert_eq(gso_ifcaps__probe(0x7ffffff0, 0, &c), -ENODEV);
	cr_assert_eq(gso_ifcaps__probe(0, 0, &c), -EINVAL);
	cr_assert_eq(gso_ifcaps__probe(-1, 0, &c), -EINVAL);
	cr_assert_eq(gso_ifcaps__probe(xt_g.tb.ifindex[0], 0, NULL), -EINVAL);
	cr_assert_eq(gso_ifcaps__probe(xt_g.tb.ifindex[0], 1u << 30, &c), -EINVAL);
	c.sz = 4;
	cr_assert_eq(gso_ifcaps__probe(xt_g.tb.ifindex[0], 0, &c), -EINVAL);
}

Test(xsk_caps, loopback_probe)
{
	gso_test_require_root();
	xt_bed(0);
	cr_assert_eq(nsbed_enter(&xt_g.tb, 0), 0);
	GSO_OPTS(gso_ifcaps, c);
	cr_assert_eq(gso_ifcaps__probe(gso_ifindex("lo"), 0, &c), 0);
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
	st = nsbed_sh(&xt_g.tb, 0, "%s %s >%s 2>&1", gso_test_build_path("tools/gsocaps"), args, path);
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

/* ---- the auto-selection section (gso_tso__choice) ---- */

/* Minimal JSON syntax check: one value, then only whitespace.  Returns the end or NULL. */
static const char *js_value(const char *p, int depth);

static const char *js_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *js_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p && *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\' && !*++p)
			return NULL;
	}
	return *p == '"' ? p + 1 : NULL;
}

static const char *js_list(const char *p, char close, bool keys, int depth)
{
	p = js_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (keys) {
			if (!(p = js_string(js_ws(p))))
				return NULL;
			p = js_ws(p);
			if (*p++ != ':')
				return NULL;
		}
		if (!(p = js_value(p, depth + 1)))
			return NULL;
		p = js_ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *js_value(const char *p, int depth)
{
	p = js_ws(p);
	if (depth > 32)
		return NULL;
	if (*p == '{')
		return js_list(p, '}', true, depth);
	if (*p == '[')
		return js_list(p, ']', false, depth);
	if (*p == '"')
		return js_string(p);
	for (const char *w = "true\0false\0null\0"; *w; w += strlen(w) + 1)
		if (!strncmp(p, w, strlen(w)))
			return p + strlen(w);
	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return NULL;
	while (*p >= '0' && *p <= '9')
		p++;
	return p;
}

static bool json_ok(const char *s)
{
	const char *e = js_value(s, 0);

	return e && !*js_ws(e);
}

Test(xsk_caps, json_checker_can_fail)
{
	cr_assert(json_ok("{\"a\":[1,-2,true,null,\"x\\\"y\"],\"b\":{}}\n"));
	cr_assert_not(json_ok("{\"a\":1,}"));
	cr_assert_not(json_ok("{\"a\":1}}"));
	cr_assert_not(json_ok("{\"a\":error}"));
	cr_assert_not(json_ok("[1 2]"));
}

/* The line of `out` that starts with `prefix`, copied into `line`. */
static const char *line_of(const char *out, const char *prefix, char *line, size_t cap)
{
	for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!strncmp(p, prefix, strlen(prefix))) {
			size_t n = strcspn(p, "\n");
			snprintf(line, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
			return line;
		}
	}
	snprintf(line, cap, "(no line %s)", prefix);
	return line;
}

Test(xsk_caps, gsocaps_selection)
{
	static char out[32768];
	char args[64], l[256];

	gso_test_require_root();
	xt_bed(0);

	/* veth with TSO/USO on: vnet hands everything whole, the device segments. */
	snprintf(args, sizeof(args), "--no-xsk %s", xt_g.tb.ifname[0]);
	cr_assert_eq(run_caps(args, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "Auto selection (gso_tso__choice"), "%s", out);
	line_of(out, "  tcp4 ", l, sizeof(l));
	cr_assert(strstr(l, "software (proto)   offload -> device TSO/USO"), "%s", l);
	cr_assert(strstr(l, "offload -> device TSO/USO                offload"), "%s", l);
	line_of(out, "  tcp6 ", l, sizeof(l));
	cr_assert(strstr(l, "offload -> device TSO/USO                software (proto)"), "%s", l);
	line_of(out, "  udp6 ", l, sizeof(l));
	cr_assert(strstr(l, "offload -> device TSO/USO                software (proto)"), "%s", l);
	line_of(out, "  tcp4_cwr ", l, sizeof(l));
	cr_assert(strstr(l, "offload -> device TSO/USO                software (ecn)"), "%s", l);
	line_of(out, "  tcp4_cwr_ecn_every ", l, sizeof(l));
	cr_assert(strstr(l, "offload -> device TSO/USO                offload"), "%s", l);

	snprintf(args, sizeof(args), "--no-xsk --json %s", xt_g.tb.ifname[0]);
	cr_assert_eq(run_caps(args, out, sizeof(out)), 0, "%s", out);
	cr_assert(json_ok(out), "not JSON: %s", out);
	cr_assert(strstr(out, "\"vnet\":{\"tcp4\":{\"offload\":true,\"why\":\"offload\",\"kernel\":\"device\"}"),
		  "%s", out);
	cr_assert(strstr(out, "\"af_xdp\":{\"tcp4\":{\"offload\":false,\"why\":\"proto\"}"), "%s", out);
	cr_assert(strstr(out, "\"tcp4_cwr\":{\"offload\":false,\"why\":\"ecn\"}"), "%s", out);

	/* TSO and USO off: still handed whole, but the kernel segments in software. */
	cr_assert_eq(nsbed_sh(&xt_g.tb, 0, "ethtool -K %s tso off tx-udp-segmentation off >/dev/null 2>&1",
			      xt_g.tb.ifname[0]), 0);
	snprintf(args, sizeof(args), "--no-xsk %s", xt_g.tb.ifname[0]);
	cr_assert_eq(run_caps(args, out, sizeof(out)), 0, "%s", out);
	cr_assert_null(strstr(out, "device TSO/USO"), "%s", out);
	line_of(out, "  udp4 ", l, sizeof(l));
	cr_assert(strstr(l, "offload -> kernel software GSO"), "%s", l);
	snprintf(args, sizeof(args), "--no-xsk --json %s", xt_g.tb.ifname[0]);
	cr_assert_eq(run_caps(args, out, sizeof(out)), 0, "%s", out);
	cr_assert(json_ok(out), "not JSON: %s", out);
	cr_assert(strstr(out, "\"vnet\":{\"tcp4\":{\"offload\":true,\"why\":\"offload\",\"kernel\":\"software\"}"),
		  "%s", out);
	cr_assert_null(strstr(out, "\"kernel\":\"device\""), "%s", out);

	/* The e1000 model cannot take lo's MTU: the error is reported, and it is still JSON. */
	cr_assert_eq(run_caps("--no-xsk --json lo", out, sizeof(out)), 0, "%s", out);
	cr_assert(json_ok(out), "not JSON: %s", out);
	cr_assert(strstr(out, "\"e1000\":{\"tcp4\":{\"offload\":false,\"why\":null,\"error\":-22}"), "%s", out);
	cr_assert(strstr(out, "\"e1000_error_text\":\"MTU 65536 exceeds the e1000 model's limit of 65535\""), "%s",
		  out);
	/* In text, the reason, not "error: Invalid argument". */
	cr_assert_eq(run_caps("--no-xsk lo", out, sizeof(out)), 0, "%s", out);
	line_of(out, "  tcp4 ", l, sizeof(l));
	cr_assert(strstr(l, "MTU 65536 exceeds the e1000 model's limit of 65535"), "%s", l);
	cr_assert_null(strstr(out, "Invalid argument"), "%s", out);

	cr_assert_eq(run_caps("--help", out, sizeof(out)), 0);
	cr_assert(strstr(out, "auto selection"), "%s", out);
}

static void null_wire(void *ctx, const void *frame, uint32_t len)
{
	(void)ctx, (void)frame, (void)len;
}

/* gso_tso__choice() directly: the e1000 model's answers, and its errors. */
Test(xsk_caps, tso_choice)
{
	struct gso_dev *dev = NULL;
	struct gso_tmpl t4, t6, tc;
	GSO_OPTS(gso_tmpl_fields, f);

	f.l3 = GSO_L3_IPV4, f.l4 = GSO_L4_TCP, f.df = true, f.tcp_flags = GSO_TCP_ACK;
	cr_assert_eq(gso_tmpl__build(&t4, &f), 0);
	f.tcp_flags = GSO_TCP_ACK | GSO_TCP_CWR;
	cr_assert_eq(gso_tmpl__build(&tc, &f), 0);
	f.l3 = GSO_L3_IPV6, f.df = false, f.tcp_flags = GSO_TCP_ACK;
	cr_assert_eq(gso_tmpl__build(&t6, &f), 0);

	GSO_OPTS(gso_e1000_opts, eo);
	eo.flags = GSO_E1000_F_NO_THREAD;
	eo.ring_size = 64;
	eo.nchunks = 16;
	eo.wire_fn = null_wire;
	cr_assert_eq(gso_e1000__create(&dev, 0, &eo), 0);
	xt_g.dev = dev;

	const struct {
		const struct gso_tmpl *t;
		uint32_t len, mss;
		uint8_t mode, flags, txflags;
		int want;
	} cases[] = {
		{ &t4, 8000, 1000, GSO_TSO_AUTO, 0, 0, GSO_TSO_WHY_OFFLOAD },
		{ &t4, 1000, 1000, GSO_TSO_AUTO, 0, 0, GSO_TSO_WHY_SINGLE },
		{ &t4, 8000, 1000, GSO_TSO_SOFTWARE, 0, 0, GSO_TSO_WHY_MODE },
		{ &t4, 8000, 1000, GSO_TSO_AUTO, 0, GSO_TX_F_SW_CSUM, GSO_TSO_WHY_CSUM },
		{ &t6, 8000, 1000, GSO_TSO_AUTO, 0, 0, GSO_TSO_WHY_PROTO },
		{ &t6, 8000, 1000, GSO_TSO_OFFLOAD, 0, 0, -EOPNOTSUPP },
		{ &tc, 8000, 1000, GSO_TSO_AUTO, 0, 0, GSO_TSO_WHY_ECN },
		{ &tc, 8000, 1000, GSO_TSO_AUTO, GSO_TSO_F_ECN_EVERY, 0, GSO_TSO_WHY_OFFLOAD },
		{ &t4, 8000, 1000, 3, 0, 0, -EINVAL },
		{ &t4, 8000, 1000, GSO_TSO_AUTO, 0x80, 0, -EINVAL },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gso_tso_flow fl = { .sz = sizeof(fl), .mode = cases[i].mode, .flags = cases[i].flags };
		struct gso_tx tx = { .tmpl = cases[i].t, .len = cases[i].len, .mss = cases[i].mss,
				     .flags = cases[i].txflags };

		cr_assert_eq(gso_tso__choice(dev, &fl, &tx), cases[i].want, "case %u: %d", i,
			     gso_tso__choice(dev, &fl, &tx));
	}
	/* Nothing was counted. */
	GSO_OPTS(gso_tso_stats, st);
	cr_assert_eq(gso_tso__stats(dev, &st), 0);
	cr_assert_eq(st.offloaded + st.software + st.single, 0);

	struct gso_tx tx = { .tmpl = &t4, .len = 8000, .mss = 1000 };
	cr_assert_eq(gso_tso__choice(dev, NULL, &tx), GSO_TSO_WHY_OFFLOAD, "device default: auto");
	cr_assert_eq(gso_tso__set_mode(dev, GSO_TSO_SOFTWARE, 0), 0);
	cr_assert_eq(gso_tso__choice(dev, NULL, &tx), GSO_TSO_WHY_MODE);
	cr_assert_eq(gso_tso__choice(NULL, NULL, &tx), -EINVAL);
	cr_assert_eq(gso_tso__choice(dev, NULL, NULL), -EINVAL);
	tx.tmpl = NULL;
	cr_assert_eq(gso_tso__choice(dev, NULL, &tx), -EINVAL);
	tx.tmpl = &t4;
	cr_assert_eq(gso_dev__close(dev), 0);
	cr_assert_eq(gso_tso__choice(dev, NULL, &tx), -ESHUTDOWN);
}

/*
 * An interface that is down: the checksum probe cannot send, and gsocaps
 * says so instead of concluding that checksums are done in software.
 */
Test(xsk_caps, gsocaps_down_interface)
{
	static char out[32768];
	char l[256];

	gso_test_require_root();
	xt_bed(0);
	/* A second veth pair inside side a's namespace, never brought up. */
	cr_assert_eq(nsbed_sh(&xt_g.tb, 0, "ip link add gdown0 type veth peer name gdown1"), 0);
	cr_assert_eq(run_caps("gdown0", out, sizeof(out)), 0, "%s", out);
	line_of(out, "  checksum requests ", l, sizeof(l));
	cr_assert(strstr(l, "unknown: the probe could not run (Network is down)"), "%s", l);
	cr_assert_null(strstr(out, "L4 checksums in software"), "%s", out);
	cr_assert_null(strstr(out, "L4 checksums by the device"), "%s", out);
	cr_assert(strstr(out, "L4 checksums unknown (the checksum probe could not run: Network is down)"), "%s",
		  out);
	/* The JSON keeps the errno for programs. */
	cr_assert_eq(run_caps("--json gdown0", out, sizeof(out)), 0, "%s", out);
	cr_assert(json_ok(out), "not JSON: %s", out);
	cr_assert(strstr(out, "\"checksum\":-100"), "%s", out);

	/* Probes skipped on request conclude nothing either. */
	cr_assert_eq(run_caps("--no-xsk gdown0", out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "L4 checksums unknown (not probed)"), "%s", out);
	cr_assert(strstr(out, "payload handling unknown (not probed)"), "%s", out);
	cr_assert_null(strstr(out, "L4 checksums in software"), "%s", out);
	cr_assert_null(strstr(out, "copied into whole frames"), "%s", out);
}
