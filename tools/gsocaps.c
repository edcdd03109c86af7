/*
 * gsocaps: what an interface can do for super-segment transmission --
 * ethtool offloads, GSO/TSO limits, XDP features from netlink, and AF_XDP
 * as measured by binding sockets (copy, zero-copy, multi-buffer, TX
 * metadata, checksum requests).  All the probing is in libgso-xdp
 * (gso_ifcaps__probe); this program only prints.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gso/xdp.h>


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
		"Exit status: 0 done, 1 no such interface or probing failed, 2 usage.\n");
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
	snprintf(buf, cap, "no (%s)", strerror(-v));
	return buf;
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

static void print_text(const struct gso_ifcaps *c)
{
	char b1[128], b2[256];

	printf("%s: ifindex %d, driver %s, MTU %u, queues rx %u tx %u\n", c->ifname, c->ifindex,
	       c->driver[0] ? c->driver : "?", c->mtu, c->rx_queues, c->tx_queues);
	printf("  GSO limits: gso_max_size %u, gso_max_segs %u, tso_max_size %u, tso_max_segs %u\n",
	       c->gso_max_size, c->gso_max_segs, c->tso_max_size, c->tso_max_segs);
	printf("\nOffloads (ethtool -k):\n");
	for (unsigned i = 0; i < GSO_IF_NFEATURES; i++)
		printf("  %-30s %s%s\n", gso_ifcaps_feature_name(i), c->features >> i & 1 ? "on" : "off",
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
	printf("\n  unaligned chunks     %s\n", answer(c->xsk_unaligned, b1, sizeof(b1)));
	printf("  TX metadata          %s\n", answer(c->xsk_tx_metadata, b1, sizeof(b1)));
	printf("  checksum requests    %s%s\n", answer(c->xsk_csum, b1, sizeof(b1)),
	       c->xsk_csum == 1 ? " (copy mode; the stack or the NIC finishes them)" : "");
	printf("  TX budget option     %s\n", answer(c->xsk_tx_budget, b1, sizeof(b1)));

	printf("\nFor libgso: segmentation in software on AF_XDP (no kernel offers TSO there); ");
	if (c->xsk_csum == 1)
		printf("L4 checksums by the device; ");
	else
		printf("L4 checksums in software; ");
	printf("payload %s.\n", c->xsk_sg == 1 ? "referenced, not copied (multi-buffer)" : "copied into whole frames");
	if (c->features & (GSO_IF_TSO4 | GSO_IF_TSO6 | GSO_IF_USO))
		printf("The kernel path (AF_PACKET + virtio_net_hdr) can hand super-segments to the device's TSO/USO.\n");
}

static void print_json(const struct gso_ifcaps *c)
{
	char b[512];

	printf("{\"ifname\":\"%s\",\"ifindex\":%d,\"driver\":\"%s\",\"mtu\":%u,\"rx_queues\":%u,\"tx_queues\":%u,",
	       c->ifname, c->ifindex, c->driver, c->mtu, c->rx_queues, c->tx_queues);
	printf("\"gso_max_size\":%u,\"gso_max_segs\":%u,\"tso_max_size\":%u,\"tso_max_segs\":%u,", c->gso_max_size,
	       c->gso_max_segs, c->tso_max_size, c->tso_max_segs);
	printf("\"features\":{");
	for (unsigned i = 0; i < GSO_IF_NFEATURES; i++)
		printf("%s\"%s\":{\"active\":%s,\"fixed\":%s}", i ? "," : "", gso_ifcaps_feature_name(i),
		       c->features >> i & 1 ? "true" : "false", c->features_fixed >> i & 1 ? "true" : "false");
	printf("},\"netdev_genl\":%d,", c->netdev_genl);
	printf("\"xdp_features\":[%s],", bits(c->xdp_features, xdp_act_name, b, sizeof(b), true));
	printf("\"xdp_zc_max_segs\":%u,", c->xdp_zc_max_segs);
	printf("\"xsk_features\":[%s],", bits(c->xsk_features, xsk_feat_name, b, sizeof(b), true));
	printf("\"xsk\":{\"copy\":%d,\"zerocopy\":%d,\"multi_buffer\":%d,\"copy_max_descs\":%u,"
	       "\"unaligned\":%d,\"tx_metadata\":%d,\"checksum\":%d,\"tx_budget\":%d}}\n",
	       c->xsk_copy, c->xsk_zerocopy, c->xsk_sg, c->xsk_copy_max_descs, c->xsk_unaligned,
	       c->xsk_tx_metadata, c->xsk_csum, c->xsk_tx_budget);
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
	err = gso_ifcaps__probe(argv[optind], flags, &c);
	if (err) {
		fprintf(stderr, "gsocaps: %s: %s\n", argv[optind], strerror(-err));
		return 1;
	}
	if (json)
		print_json(&c);
	else
		print_text(&c);
	return 0;
}
