/*
 * gsocaps: what an interface can do for super-segment transmission --
 * ethtool offloads, GSO/TSO limits, XDP features from netlink, and AF_XDP
 * as measured by binding sockets (copy, zero-copy, multi-buffer, TX
 * metadata, checksum requests).  All the probing is in libgso-xdp
 * (gso_ifcaps__probe); this program only prints, plus what auto TSO
 * selection would do per backend, asked of gso_tso__choice() on a vnet
 * device opened on the interface and an e1000 model without a wire, so
 * the answer is the library's own decision and nothing new is sent.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gso/tmpl.h>
#include <gso/dev.h>
#include <gso/vnet.h>
#include <gso/ifcaps.h>
#include <gso/e1000.h>


/* The library's name lookups answer NULL for a value they have no name for. */
static const char *name_or(const char *name)
{
	return name ? name : "unknown";
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gsocaps [options] IFACE\n"
		"\n"
		"Report what IFACE (in the current network namespace) offers for sending\n"
		"TCP/UDP super-segments: ethtool offloads and GSO/TSO limits, XDP features\n"
		"from the kernel's netdev netlink family, and AF_XDP as measured by binding\n"
		"sockets to queue 0 and sending one probe frame.\n"
		"\n"
		"options:\n"
		"  --json      one JSON object instead of text\n"
		"  --no-xsk    skip the AF_XDP socket probes (they need root and queue 0)\n"
		"  --no-send   do not send the checksum probe frame (60 bytes, ethertype\n"
		"              0x88b5, to the interface's own MAC)\n"
		"  -h, --help  this text\n"
		"\n"
		"A probe answers yes, no (the kernel refuses it; the reason follows), not\n"
		"probed (an option skipped it), or unknown when the probe could not run\n"
		"(interface down, queue in use, not root, ...); nothing is concluded from\n"
		"the last two.\n"
		"\n"
		"The \"auto selection\" section asks libgso (gso_tso__choice, the code\n"
		"gso_tso__submit runs) what mode auto would do with an example\n"
		"super-segment of each kind (TCPv4, TCPv6, UDPv4, UDPv6, TCPv4 with CWR;\n"
		"8 segments of an MSS that fits the MTU) on each backend: AF_XDP (always\n"
		"software GSO), virtio_net_hdr over AF_PACKET (a device is opened on IFACE,\n"
		"nothing is sent; what libgso hands over whole, the kernel gives to the\n"
		"device's TSO/USO when that ethtool feature is on, else segments in\n"
		"software) and the e1000 device model (TCPv4/UDPv4 only; CWR only with\n"
		"GSO_TSO_F_ECN_EVERY).  Each answer names its reason (gso_tso_why_name).\n"
		"\n"
		"Exit status: 0 done, 1 no such interface or probing failed, 2 usage.\n");
}

/*
 * Is a probe's error the kernel's answer "no" (it refuses the flag or the
 * option), rather than a probe that could not run (interface down, queue
 * busy, no permission, ...), which says nothing about the interface?
 */
static bool probe_refused(gso_probe_t v)
{
	return v == -EOPNOTSUPP || v == -EINVAL || v == -ENOPROTOOPT || v == -EPROTONOSUPPORT ||
	       v == -EAFNOSUPPORT;
}

/* A probe answer for people. */
static const char *answer(gso_probe_t v, char *buf, size_t cap)
{
	if (v == 1)
		return "yes";
	if (v == 0)
		return "no";
	if (v == -ECANCELED)
		return "not probed";
	if (probe_refused(v))
		snprintf(buf, cap, "no (%s)", strerror(-v));
	else
		snprintf(buf, cap, "unknown: the probe could not run (%s)", strerror(-v));
	return buf;
}

/*
 * For a feature the kernel refused: which kernel brought it, so that "no"
 * on an older kernel (Debian 12 runs 6.1) reads as a version, not a fault.
 */
static const char *since(gso_probe_t v, const char *what)
{
	static char buf[96];

	if (v == 1 || v == -ECANCELED || (v != 0 && !probe_refused(v)))
		return "";
	snprintf(buf, sizeof(buf), " [%s or later]", what);
	return buf;
}

/* One conclusion drawn from probe `v`: `yes`, `no`, or that `topic` is unknown and why. */
static void conclude(gso_probe_t v, const char *yes, const char *no, const char *topic, const char *probe)
{
	if (v == 1)
		printf("%s", yes);
	else if (v == 0 || probe_refused(v))
		printf("%s", no);
	else if (v == -ECANCELED)
		printf("%s unknown (not probed)", topic);
	else
		printf("%s unknown (the %s probe could not run: %s)", topic, probe, strerror(-v));
}

static const char *xdp_act_name(unsigned bit)
{
	static const char *const n[] = { "basic", "redirect", "ndo-xmit", "xsk-zerocopy", "hw-offload",
					 "rx-sg", "ndo-xmit-sg" };
	return bit < sizeof(n) / sizeof(n[0]) ? n[bit] : NULL;
}

static const char *xsk_feat_name(unsigned bit)
{
	static const char *const n[] = { "tx-timestamp", "tx-checksum", "tx-launch-time-fifo" };
	return bit < sizeof(n) / sizeof(n[0]) ? n[bit] : NULL;
}

/* Space-separated names of set bits; "none" if none. */
static const char *bits(uint64_t v, const char *(*name)(unsigned), char *buf, size_t cap, bool json)
{
	size_t o = 0;

	buf[0] = 0;
	for (unsigned b = 0; b < 64; b++) {
		if (!(v >> b & 1))
			continue;
		const char *s = name(b);
		char tmp[24];
		if (!s) {
			snprintf(tmp, sizeof(tmp), "bit%u", b);
			s = tmp;
		}
		o += (size_t)snprintf(buf + o, cap - o, json ? "%s\"%s\"" : "%s%s", o ? (json ? "," : " ") : "", s);
		if (o >= cap)
			break;
	}
	if (!o && !json)
		snprintf(buf, cap, "none");
	return buf;
}


/* ---- auto selection: what gso_tso__choice() says per super-segment type ---- */

enum { K_TCP4, K_TCP6, K_UDP4, K_UDP6, K_CWR, K_CWR_EVERY, NKINDS };
static const char *const kind_name[NKINDS] = { "tcp4", "tcp6", "udp4", "udp6", "tcp4_cwr", "tcp4_cwr_ecn_every" };
enum { B_XSK, B_VNET, B_E1000, NBACK };
static const char *const back_name[NBACK] = { "af_xdp", "vnet", "e1000" };

#define SEL_SEGS 8

struct sel {
	uint32_t mss[NKINDS];
	int why[NBACK][NKINDS]; /* enum gso_tso_why, or -errno */
	int kernel[NKINDS];     /* vnet offload: 1 the device's TSO/USO, 0 the kernel's software GSO */
	int vnet_err, e1000_err;
	char e1000_text[96];    /* e1000_err in words, naming the model's limit when one was hit */
};

static void noop_wire(void *ctx, const void *frame, uint32_t len)
{
	(void)ctx, (void)frame, (void)len;
}

static int kind_tmpl(unsigned k, struct gso_tmpl *t)
{
	GSO_OPTS(gso_tmpl_fields, f);
	bool v6 = k == K_TCP6 || k == K_UDP6;
	bool udp = k == K_UDP4 || k == K_UDP6;

	f.l3 = v6 ? GSO_L3_IPV6 : GSO_L3_IPV4;
	f.l4 = udp ? GSO_L4_UDP : GSO_L4_TCP;
	f.saddr[0] = v6 ? 0xfd : 10;
	f.daddr[0] = v6 ? 0xfd : 10;
	f.saddr[15] = 1, f.daddr[15] = 2;
	f.saddr[3] = v6 ? 0 : 1, f.daddr[3] = v6 ? 0 : 2;
	f.sport = 9001, f.dport = 9000;
	if (!v6)
		f.df = true;
	if (!udp) {
		f.tcp_flags = GSO_TCP_ACK | (k == K_CWR || k == K_CWR_EVERY ? GSO_TCP_CWR : 0);
		f.window = 512;
	}
	return gso_tmpl__build(t, &f);
}

/* Ask `dev` (NULL: failed to open, err) about every kind. */
static void ask(struct sel *s, unsigned b, struct gso_dev *dev, int err)
{
	for (unsigned k = 0; k < NKINDS; k++) {
		struct gso_tso_flow flow = { .sz = sizeof(flow), .flags = k == K_CWR_EVERY ? GSO_TSO_F_ECN_EVERY : 0 };
		struct gso_tmpl t;
		struct gso_tx tx = { .tmpl = &t, .mss = s->mss[k], .len = s->mss[k] * SEL_SEGS };

		if (!dev) {
			s->why[b][k] = err;
			continue;
		}
		s->why[b][k] = kind_tmpl(k, &t);
		if (!s->why[b][k])
			s->why[b][k] = gso_tso__choice(dev, &flow, &tx);
	}
}

static void selection(const struct gso_ifcaps *c, struct sel *s)
{
	struct gso_dev *dev = NULL;
	int err;

	memset(s, 0, sizeof(*s));
	for (unsigned k = 0; k < NKINDS; k++) {
		bool v6 = k == K_TCP6 || k == K_UDP6, udp = k == K_UDP4 || k == K_UDP6;
		uint32_t hdr = (v6 ? 40 : 20) + (udp ? 8 : 20), m = c->mtu > hdr ? c->mtu - hdr : 1;

		s->mss[k] = m < 1400 ? m : 1400;
	}
	/* AF_XDP: opening a device would send its checksum probe; no AF_XDP device has TSO. */
	for (unsigned k = 0; k < NKINDS; k++)
		s->why[B_XSK][k] = GSO_TSO_WHY_PROTO;

	GSO_OPTS(gso_vnet_opts, vo);
	vo.frames = 8;
	vo.nchunks = 16;
	err = gso_vnet__create(&dev, c->ifindex, &vo);
	s->vnet_err = err;
	ask(s, B_VNET, err ? NULL : dev, err);
	gso_dev__destroy(err ? NULL : dev);
	dev = NULL;

	/* The model without a wire: only its limits matter, the MTU is the interface's. */
	GSO_OPTS(gso_e1000_opts, eo);
	eo.flags = GSO_E1000_F_NO_THREAD;
	eo.ring_size = 64;
	eo.nchunks = 16;
	eo.mtu = c->mtu;
	eo.wire_fn = noop_wire;
	err = gso_e1000__create(&dev, 0, &eo);
	s->e1000_err = err;
	/* The model's only option taken from the interface is its MTU: an -EINVAL is the MTU's range. */
	if (err == -EINVAL && c->mtu > GSO_E1000_MAX_MTU)
		snprintf(s->e1000_text, sizeof(s->e1000_text), "MTU %u exceeds the e1000 model's limit of %u",
			 c->mtu, GSO_E1000_MAX_MTU);
	else if (err == -EINVAL && c->mtu < GSO_E1000_MIN_MTU)
		snprintf(s->e1000_text, sizeof(s->e1000_text), "MTU %u is below the e1000 model's minimum of %u",
			 c->mtu, GSO_E1000_MIN_MTU);
	else if (err)
		snprintf(s->e1000_text, sizeof(s->e1000_text), "%s", strerror(-err));
	ask(s, B_E1000, err ? NULL : dev, err);
	gso_dev__destroy(err ? NULL : dev);

	for (unsigned k = 0; k < NKINDS; k++) {
		uint64_t need = k == K_TCP4 ? GSO_IF_TSO4 : k == K_TCP6 ? GSO_IF_TSO6 :
				k == K_UDP4 || k == K_UDP6 ? GSO_IF_USO : GSO_IF_TSO4 | GSO_IF_TSO_ECN;

		s->kernel[k] = (c->features & need) == need;
	}
}

/* "offload", "software (proto)", "error: ..." (`err_text`, if not NULL, says what the error means) */
static const char *verdict(int why, const char *err_text, char *buf, size_t cap)
{
	if (why < 0)
		snprintf(buf, cap, "error: %s", err_text ? err_text : strerror(-why));
	else if (why == GSO_TSO_WHY_OFFLOAD)
		snprintf(buf, cap, "offload");
	else if (why == GSO_TSO_WHY_SINGLE)
		snprintf(buf, cap, "single packet");
	else
		snprintf(buf, cap, "software (%s)", name_or(gso_tso_why_name((unsigned)why)));
	return buf;
}

static void print_sel_text(const struct sel *s)
{
	char b[96];

	printf("\nAuto selection (gso_tso__choice, %u-segment super-segments, MSS tcp4 %u):\n", SEL_SEGS,
	       s->mss[K_TCP4]);
	printf("  %-20s %-18s %-40s %s\n", "super-segment", "af_xdp", "vnet (AF_PACKET)", "e1000 model");
	for (unsigned k = 0; k < NKINDS; k++) {
		char vn[128];
		int w = s->why[B_VNET][k];

		int we = s->why[B_E1000][k];

		printf("  %-20s %-18s ", kind_name[k], verdict(s->why[B_XSK][k], NULL, b, sizeof(b)));
		verdict(w, NULL, b, sizeof(b));
		if (w == GSO_TSO_WHY_OFFLOAD)
			snprintf(vn, sizeof(vn), "offload -> %s", s->kernel[k] ? "device TSO/USO" : "kernel software GSO");
		else
			snprintf(vn, sizeof(vn), "%s", b);
		printf("%-40s %s\n", vn,
		       verdict(we, s->e1000_err && we == s->e1000_err ? s->e1000_text : NULL, b, sizeof(b)));
	}
}

static void print_sel_json(const struct sel *s)
{
	printf(",\"auto_selection\":{\"segs\":%u,\"mss\":{", SEL_SEGS);
	for (unsigned k = 0; k < NKINDS; k++)
		printf("%s\"%s\":%u", k ? "," : "", kind_name[k], s->mss[k]);
	printf("},\"vnet_error\":%d,\"e1000_error\":%d", s->vnet_err, s->e1000_err);
	/* The text holds no quote or backslash (numbers and strerror()). */
	if (s->e1000_err)
		printf(",\"e1000_error_text\":\"%s\"", s->e1000_text);
	for (unsigned bk = 0; bk < NBACK; bk++) {
		printf(",\"%s\":{", back_name[bk]);
		for (unsigned k = 0; k < NKINDS; k++) {
			int w = s->why[bk][k];

			printf("%s\"%s\":{\"offload\":%s,\"why\":", k ? "," : "", kind_name[k],
			       w == GSO_TSO_WHY_OFFLOAD ? "true" : "false");
			if (w >= 0)
				printf("\"%s\"", name_or(gso_tso_why_name((unsigned)w)));
			else
				printf("null,\"error\":%d", w);
			if (bk == B_VNET && w == GSO_TSO_WHY_OFFLOAD)
				printf(",\"kernel\":\"%s\"", s->kernel[k] ? "device" : "software");
			printf("}");
		}
		printf("}");
	}
	printf("}");
}

static void print_text(const struct gso_ifcaps *c, const struct sel *s)
{
	char b1[128], b2[256];

	printf("%s: ifindex %d, driver %s, MTU %u, queues rx %u tx %u\n", c->ifname, c->ifindex,
	       c->driver[0] ? c->driver : "?", c->mtu, c->rx_queues, c->tx_queues);
	printf("  GSO limits: gso_max_size %u, gso_max_segs %u, tso_max_size %u, tso_max_segs %u\n",
	       c->gso_max_size, c->gso_max_segs, c->tso_max_size, c->tso_max_segs);
	printf("\nOffloads (ethtool -k):\n");
	for (unsigned i = 0; i < GSO_IF_NFEATURES; i++)
		printf("  %-30s %s%s\n", name_or(gso_ifcaps_feature_name(i)), c->features >> i & 1 ? "on" : "off",
		       c->features_fixed >> i & 1 ? " [fixed]" : "");

	printf("\nXDP (netdev netlink family):\n");
	if (c->netdev_genl != 1) {
		printf("  unavailable: %s (the family exists from Linux 6.3)\n", strerror(-c->netdev_genl));
	} else {
		printf("  xdp-features     %s\n", bits(c->xdp_features, xdp_act_name, b2, sizeof(b2), false));
		if (c->xdp_zc_max_segs)
			printf("  xdp-zc-max-segs  %u\n", c->xdp_zc_max_segs);
		else
			printf("  xdp-zc-max-segs  - (no zero-copy)\n");
		printf("  xsk-features     %s  (zero-copy driver TX metadata)\n",
		       bits(c->xsk_features, xsk_feat_name, b2, sizeof(b2), false));
	}

	printf("\nAF_XDP (measured on queue 0):\n");
	printf("  copy mode            %s\n", answer(c->xsk_copy, b1, sizeof(b1)));
	printf("  zero-copy            %s\n", answer(c->xsk_zerocopy, b1, sizeof(b1)));
	printf("  multi-buffer         %s", answer(c->xsk_sg, b1, sizeof(b1)));
	if (c->xsk_sg == 1)
		printf(", up to %u descriptors per packet in copy mode", c->xsk_copy_max_descs);
	printf("%s\n", since(c->xsk_sg, "XDP_USE_SG: Linux 6.6"));
	printf("  unaligned chunks     %s\n", answer(c->xsk_unaligned, b1, sizeof(b1)));
	printf("  TX metadata          %s%s\n", answer(c->xsk_tx_metadata, b1, sizeof(b1)),
	       since(c->xsk_tx_metadata, "tx_metadata_len: Linux 6.8"));
	printf("  checksum requests    %s%s%s\n", answer(c->xsk_csum, b1, sizeof(b1)),
	       c->xsk_csum == 1 ? " (copy mode; the stack or the NIC finishes them)" : "",
	       since(c->xsk_csum, "needs TX metadata: Linux 6.8"));
	printf("  TX budget option     %s%s\n", answer(c->xsk_tx_budget, b1, sizeof(b1)),
	       since(c->xsk_tx_budget, "XDP_MAX_TX_SKB_BUDGET: 2025 kernels"));

	printf("\nFor libgso: segmentation in software on AF_XDP (no kernel offers TSO there); ");
	conclude(c->xsk_csum, "L4 checksums by the device", "L4 checksums in software", "L4 checksums",
		 "checksum");
	printf("; ");
	conclude(c->xsk_sg, "payload referenced, not copied (multi-buffer)", "payload copied into whole frames",
		 "payload handling", "multi-buffer");
	printf(".\n");
	if (c->features & (GSO_IF_TSO4 | GSO_IF_TSO6 | GSO_IF_USO))
		printf("The kernel path (AF_PACKET + virtio_net_hdr) can hand super-segments to the device's TSO/USO.\n");
	print_sel_text(s);
}

static void print_json(const struct gso_ifcaps *c, const struct sel *s)
{
	char b[512];

	printf("{\"ifname\":\"%s\",\"ifindex\":%d,\"driver\":\"%s\",\"mtu\":%u,\"rx_queues\":%u,\"tx_queues\":%u,",
	       c->ifname, c->ifindex, c->driver, c->mtu, c->rx_queues, c->tx_queues);
	printf("\"gso_max_size\":%u,\"gso_max_segs\":%u,\"tso_max_size\":%u,\"tso_max_segs\":%u,", c->gso_max_size,
	       c->gso_max_segs, c->tso_max_size, c->tso_max_segs);
	printf("\"features\":{");
	for (unsigned i = 0; i < GSO_IF_NFEATURES; i++)
		printf("%s\"%s\":{\"active\":%s,\"fixed\":%s}", i ? "," : "", name_or(gso_ifcaps_feature_name(i)),
		       c->features >> i & 1 ? "true" : "false", c->features_fixed >> i & 1 ? "true" : "false");
	printf("},\"netdev_genl\":%d,", c->netdev_genl);
	printf("\"xdp_features\":[%s],", bits(c->xdp_features, xdp_act_name, b, sizeof(b), true));
	printf("\"xdp_zc_max_segs\":%u,", c->xdp_zc_max_segs);
	printf("\"xsk_features\":[%s],", bits(c->xsk_features, xsk_feat_name, b, sizeof(b), true));
	printf("\"xsk\":{\"copy\":%d,\"zerocopy\":%d,\"multi_buffer\":%d,\"copy_max_descs\":%u,"
	       "\"unaligned\":%d,\"tx_metadata\":%d,\"checksum\":%d,\"tx_budget\":%d}",
	       c->xsk_copy, c->xsk_zerocopy, c->xsk_sg, c->xsk_copy_max_descs, c->xsk_unaligned,
	       c->xsk_tx_metadata, c->xsk_csum, c->xsk_tx_budget);
	print_sel_json(s);
	printf("}\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "no-xsk", no_argument, NULL, 'x' },
		{ "no-send", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	unsigned flags = 0;
	bool json = false;
	int o, err;

	while ((o = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (o) {
		case 'j': json = true; break;
		case 'x': flags |= GSO_IFCAPS_NO_XSK; break;
		case 's': flags |= GSO_IFCAPS_NO_SEND; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	GSO_OPTS(gso_ifcaps, c);
	err = gso_ifindex(argv[optind]);
	if (err > 0)
		err = gso_ifcaps__probe(err, flags, &c);
	if (err) {
		fprintf(stderr, "gsocaps: %s: %s\n", argv[optind], strerror(-err));
		return 1;
	}
	struct sel sel;
	selection(&c, &sel);
	if (json)
		print_json(&c, &sel);
	else
		print_text(&c, &sel);
	return 0;
}
