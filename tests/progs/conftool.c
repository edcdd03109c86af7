/*
 * conftool: the conformance harness across implementations.  One seed
 * makes one set of super-packets (tests/common/conf_cases.h); `send` puts
 * them through a backend onto an interface, one case at a time, `expect`
 * writes what libgso's software GSO makes of them, `compare` matches
 * captures against that, frame for frame per case (the source port names
 * the case), byte for byte.  The VM test-bed (issue #13) runs `send
 * --backend vnet` in the guest and `compare` on the host's tap capture;
 * tests/integration/test_conftool.c runs the rest over a veth.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/ether.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gso/seg.h>
#include <gso/tmpl.h>

#include "conf_cases.h"
#include "conftool.h"
#include "gso_test.h"
#include "tool_pcap.h"
#include "tool_util.h"

static void usage(FILE *out)
{
	fprintf(out,
"usage: conftool send    --ifname IF --backend vnet|e1000|kernel [CASES] [SEND]\n"
"       conftool expect  --seed N [CASES] OUT.pcap\n"
"       conftool list    --seed N [CASES]\n"
"       conftool compare [--strict] [--show N] EXPECTED.pcap NAME=CAPTURE.pcap...\n"
"\n"
"The conformance cases of tests/common/conf_cases.c -- a table of\n"
"boundaries plus random cases from a seed -- through any implementation of\n"
"TCP/UDP segmentation, and a frame-for-frame comparison of what each put on\n"
"the wire.  Case i is a super-packet from 198.18.0.1 / 2001:db8:77::1, source\n"
"port 20000+i, to a MAC and addresses nobody owns.\n"
"\n"
"  send     send each case's super-packet out of IF, one case at a time:\n"
"           vnet    libgso's virtio_net_hdr backend (gso_vnet__create, AF_PACKET,\n"
"                   through the qdisc): the driver below does TSO or the kernel\n"
"                   segments (the one to run in a VM guest)\n"
"           e1000   libgso's e1000 TSO device model over AF_XDP (copy mode)\n"
"           kernel  raw AF_PACKET + PACKET_VNET_HDR, as the kernel oracle does\n"
"           After each case it waits until IF's TX packet counter (/proc/net/dev)\n"
"           has grown by the case's frame count (at most --wait-ms), then\n"
"           --gap-us more, so that a slow device ring (e1000 under TCG) and the\n"
"           capturing host's backlog (1000 frames) keep up.  Cases the kernel\n"
"           and libgso refuse (UDP over 128 segments) are skipped with a note.\n"
"  expect   write libgso's software GSO of the same cases (complete checksums,\n"
"           IPv4 ID +1 per segment) to OUT.pcap, in case order (timestamp\n"
"           seconds = case number).\n"
"  list     one line per selected case, and the totals.\n"
"  compare  match each CAPTURE against EXPECTED: frames of our cases only\n"
"           (anything else -- ARP, IPv6 ND, ... -- is counted as unrelated),\n"
"           grouped by case, in order within a case, byte for byte.  One row\n"
"           per implementation, and the first differing byte of each mismatch.\n"
"\n"
"CASES (the same for send, expect and list):\n"
"  --seed N          PRNG seed (send: default from the clock; always printed)\n"
"  --random N        random cases after the table (default %u)\n"
"  --small N         also the small-MSS set (MSS 1..535, 64 fixed + N random, up\n"
"                    to ~1200 frames per case: over a peer's 1000-frame backlog)\n"
"  --no-table        leave the boundary table out\n"
"  --proto LIST      only these of tcp4,tcp6,udp4,udp6 (default all)\n"
"  --mtu N           only cases whose largest IP packet fits N bytes\n"
"  --src-mac MAC     source MAC of every frame (default 02:77:00:00:00:aa)\n"
"Filters never renumber: a case keeps its number and source port.\n"
"\n"
"SEND:\n"
"  --ifname IF       interface to send on (its MTU must fit every case: --mtu)\n"
"  --backend B       vnet, e1000 or kernel\n"
"  --wait-ms N       longest wait for IF's counter per case (default 2000; 0: none)\n"
"  --gap-us N        pause after each case (default 1000)\n"
"\n"
"compare:\n"
"  NAME=CAPTURE      a capture (pcap, Ethernet) and the name of its row\n"
"  --strict          count the tolerated differences below as mismatches\n"
"  --show N          print at most N differences per capture (default 20)\n"
"  Tolerated and counted in their own columns (both sides are valid frames):\n"
"    csum0  an IPv4 header or L4 checksum that computes to 0 sent as 0x0000 on\n"
"           one side and 0xffff on the other (Linux GSO segments: 0x0000; QEMU's\n"
"           e1000 and the e1000 model: 0xffff in both; a TCP single packet the\n"
"           stack finishes and UDP: 0xffff)\n"
"    pad    the capture is the expected frame plus zero bytes up to 60\n"
"           (Ethernet minimum; Linux's e1000 driver pads short frames)\n"
"    untag  the capture lacks the expected 802.1Q tag and is otherwise equal\n"
"           (a capture that left the tag in metadata)\n"
"    empty  one frame after a case's last, with no TCP payload, the same ports\n"
"           and flags and the sequence number where the last one ended: QEMU\n"
"           7.2's e1000 sends it when the payload is a whole number of MSS\n"
"           (at end of packet it sends what is left, here the header alone)\n"
"\n"
"exit status:\n"
"  0  send: every case sent, every device count reached; expect/list: done;\n"
"     compare: no mismatch, missing or extra frame in any capture\n"
"  1  send: some cases failed to send or the counter fell short (the rest were\n"
"     sent); expect: libgso refused a case it should take; compare: differences\n"
"  2  bad options, unreadable or unwritable files, a device that cannot be\n"
"     opened, an interface whose MTU is too small for a selected case\n",
		CONFTOOL_DEFAULT_RANDOM);
}

static const uint8_t default_src_mac[6] = { 0x02, 0x77, 0x00, 0x00, 0x00, 0xaa };

/* ---- the selected cases ---- */

int conftool_cases(const struct conftool_sel *sel, struct conf_set *all, struct conf_set *out)
{
	uint64_t rng = sel->seed;
	int err = 0;

	memset(all, 0, sizeof(*all));
	memset(out, 0, sizeof(*out));
	/* The table is always generated: it advances the stream the random cases follow. */
	err = conf_table_cases(all, &rng);
	if (!err)
		err = conf_random_cases(all, sel->random, &rng);
	if (!err && sel->small >= 0) {
		/* The oracle's small-MSS test draws from this stream of the same seed. */
		uint64_t srng = sel->seed ^ 0x5a11u;

		err = conf_small_cases(all, (unsigned)sel->small, &srng);
	}
	for (unsigned i = 0; !err && i < all->n; i++) {
		const struct conf_case *c = &all->c[i];

		if (sel->no_table && !strncmp(c->what, "table", 5))
			continue;
		if (!(sel->protos & (1u << c->proto)))
			continue;
		if (sel->mtu && conf_max_ip_len(c) > sel->mtu)
			continue;
		err = conf_add(out, *c);
		out->c[out->n - 1].idx = c->idx;
	}
	return err;
}

static int parse_protos(const char *s, unsigned *mask)
{
	char buf[64], *save = NULL;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	*mask = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned p;

		for (p = 0; p < CONF_NPROTO && strcmp(t, conf_proto_name[p]); p++)
			;
		if (p == CONF_NPROTO)
			return -EINVAL;
		*mask |= 1u << p;
	}
	return *mask ? 0 : -EINVAL;
}

void conftool_print_selection(FILE *f, const struct conftool_sel *sel, const struct conf_set *cs)
{
	unsigned frames = 0, per[CONF_NPROTO] = { 0 }, refused = 0, cwr = 0;

	for (unsigned i = 0; i < cs->n; i++) {
		const struct conf_case *c = &cs->c[i];

		frames += conf_frames(c);
		per[c->proto]++;
		refused += c->refused;
		cwr += CONF_IS_TCP(c->proto) && (c->flags & GSO_TCP_CWR) && conf_frames(c) > 1;
	}
	fprintf(f, "conftool: seed %" PRIu64 ", %u random%s%s, %u cases (tcp4 %u, tcp6 %u, udp4 %u, "
		"udp6 %u), %u expected frames, %u refused cases, %u segmented CWR cases\n",
		sel->seed, sel->random, sel->no_table ? ", no table" : " + table",
		sel->small >= 0 ? " + small MSS" : "", cs->n, per[CONF_TCP4], per[CONF_TCP6],
		per[CONF_UDP4], per[CONF_UDP6], frames, refused, cwr);
}

/* ---- list, expect ---- */

static int cmd_list(const struct conftool_sel *sel, const struct conf_set *cs)
{
	char d[512];

	for (unsigned i = 0; i < cs->n; i++) {
		conf_describe(&cs->c[i], d, sizeof(d));
		printf("%s, %u frames\n", d, conf_frames(&cs->c[i]));
	}
	conftool_print_selection(stdout, sel, cs);
	return TOOL_EXIT_OK;
}

static int cmd_expect(const struct conftool_sel *sel, const struct conf_set *cs, const char *out)
{
	static uint8_t frame[CONF_FRAME_MAX];
	struct gso_frame *fr = calloc(GSO_MAX_SEGS, sizeof(*fr));
	uint8_t *data = malloc((size_t)CONF_FRAME_MAX * 2 + (size_t)GSO_MAX_SEGS * GSO_MAX_HDR_LEN);
	char errbuf[PCAP_ERRBUF_SIZE];
	unsigned frames = 0, unexpected = 0;
	struct tool_pcap_out w;
	int err = 0;

	if (!fr || !data) {
		fprintf(stderr, "conftool: out of memory\n");
		free(fr);
		free(data);
		return TOOL_EXIT_USAGE;
	}
	if (tool_pcap_out_open(&w, out, PCAP_TSTAMP_PRECISION_MICRO, NULL, errbuf)) {
		fprintf(stderr, "conftool: %s: %s\n", out, errbuf);
		free(fr);
		free(data);
		return TOOL_EXIT_USAGE;
	}
	conftool_print_selection(stderr, sel, cs);
	for (unsigned i = 0; i < cs->n && !err; i++) {
		const struct conf_case *c = &cs->c[i];
		size_t l4, poff, plen, len = conf_build_frame(c, sel->src_mac, frame, &l4), per, at = 0;
		GSO_OPTS(gso_seg_opts, o, .mss = c->mss, .csum = GSO_CSUM_FULL, .ipid = GSO_IPID_INC);
		struct gso_tmpl t;
		int n = gso_tmpl__parse_pkt(&t, frame, len, &poff, &plen);
		struct gso_extent ext = { .base = frame + poff, .len = plen };
		struct gso_super s = { .tmpl = &t, .ext = &ext, .n_ext = 1 };

		if (!n)
			n = gso_seg_count(&s, &o);
		if (n < 0) {
			fprintf(stderr, "conftool: case %u: libgso refuses it: %s (%s)%s\n", c->idx,
				tool_gso_strerror(n), tool_errno_name(n),
				c->refused ? ", as it should" : "");
			unexpected += !c->refused;
			continue;
		}
		if (c->refused) {
			fprintf(stderr, "conftool: case %u: libgso takes it, the kernel refuses it\n",
				c->idx);
			unexpected++;
		}
		per = t.hdr_len + (plen < c->mss ? plen : c->mss);
		for (int k = 0; k < n; k++, at += per) {
			fr[k].buf = data + at;
			fr[k].cap = (uint32_t)per;
		}
		n = gso_segment(&s, &o, fr, (unsigned)n);
		if (n < 0) {
			fprintf(stderr, "conftool: case %u: gso_segment: %s\n", c->idx,
				tool_gso_strerror(n));
			unexpected++;
			continue;
		}
		for (int k = 0; k < n && !err; k++) {
			struct pcap_pkthdr h = { .ts = { .tv_sec = c->idx, .tv_usec = k },
						 .caplen = fr[k].len, .len = fr[k].len };

			err = tool_pcap_out_write(&w, &h, fr[k].buf);
		}
		frames += (unsigned)n;
	}
	if (!err)
		err = tool_pcap_out_close(&w);
	else
		tool_pcap_out_close(&w);
	free(fr);
	free(data);
	if (err) {
		fprintf(stderr, "conftool: %s: write failed: %s\n", out, strerror(-err));
		return TOOL_EXIT_USAGE;
	}
	fprintf(stderr, "conftool: expect: %u frames written to %s%s\n", frames, out,
		unexpected ? ", some cases unexpectedly refused or taken (above)" : "");
	return unexpected ? TOOL_EXIT_BAD_RECORDS : TOOL_EXIT_OK;
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	enum { O_SEED = 256, O_RANDOM, O_SMALL, O_NO_TABLE, O_PROTO, O_MTU, O_SRC_MAC, O_IFNAME,
	       O_BACKEND, O_WAIT, O_GAP, O_STRICT, O_SHOW };
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, O_SEED },
		{ "random", required_argument, NULL, O_RANDOM },
		{ "small", required_argument, NULL, O_SMALL },
		{ "no-table", no_argument, NULL, O_NO_TABLE },
		{ "proto", required_argument, NULL, O_PROTO },
		{ "mtu", required_argument, NULL, O_MTU },
		{ "src-mac", required_argument, NULL, O_SRC_MAC },
		{ "ifname", required_argument, NULL, O_IFNAME },
		{ "backend", required_argument, NULL, O_BACKEND },
		{ "wait-ms", required_argument, NULL, O_WAIT },
		{ "gap-us", required_argument, NULL, O_GAP },
		{ "strict", no_argument, NULL, O_STRICT },
		{ "show", required_argument, NULL, O_SHOW },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct conftool_sel sel = { .random = CONFTOOL_DEFAULT_RANDOM, .small = -1,
				    .protos = (1u << CONF_NPROTO) - 1 };
	struct conftool_send snd = { .wait_ms = 2000, .gap_us = 1000 };
	struct conftool_cmp cmp = { .show = 20 };
	struct conf_set all, cs;
	struct ether_addr mac;
	bool have_seed = false;
	const char *cmd;
	uint64_t v;
	int c, rc;

	memcpy(sel.src_mac, default_src_mac, 6);
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? TOOL_EXIT_USAGE : TOOL_EXIT_OK;
	}
	cmd = argv[1];
	if (strcmp(cmd, "send") && strcmp(cmd, "expect") && strcmp(cmd, "list") &&
	    strcmp(cmd, "compare")) {
		fprintf(stderr, "conftool: unknown command '%s' (send, expect, list, compare; try --help)\n",
			cmd);
		return TOOL_EXIT_USAGE;
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		const char *bad = NULL;

		switch (c) {
		case O_SEED:
			if (tool_parse_u64(optarg, 0, UINT64_MAX, &sel.seed))
				bad = "--seed wants an unsigned integer";
			have_seed = true;
			break;
		case O_RANDOM:
			if (tool_parse_u64(optarg, 0, CONF_MAX_CASES - 1000, &v))
				bad = "--random wants an integer 0..39000";
			sel.random = (unsigned)v;
			break;
		case O_SMALL:
			if (tool_parse_u64(optarg, 0, 10000, &v))
				bad = "--small wants an integer 0..10000";
			sel.small = (int)v;
			break;
		case O_NO_TABLE:
			sel.no_table = true;
			break;
		case O_PROTO:
			if (parse_protos(optarg, &sel.protos))
				bad = "--proto wants a list of tcp4, tcp6, udp4, udp6";
			break;
		case O_MTU:
			if (tool_parse_u64(optarg, 68, 65535, &v))
				bad = "--mtu wants an integer 68..65535";
			sel.mtu = (uint32_t)v;
			break;
		case O_SRC_MAC:
			if (!ether_aton_r(optarg, &mac))
				bad = "--src-mac wants xx:xx:xx:xx:xx:xx";
			else
				memcpy(sel.src_mac, mac.ether_addr_octet, 6);
			break;
		case O_IFNAME:
			snd.ifname = optarg;
			break;
		case O_BACKEND:
			snd.backend = optarg;
			if (strcmp(optarg, "vnet") && strcmp(optarg, "e1000") && strcmp(optarg, "kernel"))
				bad = "--backend wants vnet, e1000 or kernel";
			break;
		case O_WAIT:
			if (tool_parse_u64(optarg, 0, 600000, &v))
				bad = "--wait-ms wants an integer 0..600000";
			snd.wait_ms = (unsigned)v;
			break;
		case O_GAP:
			if (tool_parse_u64(optarg, 0, 10000000, &v))
				bad = "--gap-us wants an integer 0..10000000";
			snd.gap_us = (unsigned)v;
			break;
		case O_STRICT:
			cmp.strict = true;
			break;
		case O_SHOW:
			if (tool_parse_u64(optarg, 0, 1000000, &v))
				bad = "--show wants an integer";
			cmp.show = (unsigned)v;
			break;
		case 'h':
			usage(stdout);
			return TOOL_EXIT_OK;
		default:
			fprintf(stderr, "conftool: try --help\n");
			return TOOL_EXIT_USAGE;
		}
		if (bad) {
			fprintf(stderr, "conftool: %s, not '%s'\n", bad, optarg);
			return TOOL_EXIT_USAGE;
		}
	}
	if (!strcmp(cmd, "compare"))
		return conftool_compare(&cmp, argc - optind, argv + optind);
	if (!strcmp(cmd, "send")) {
		if (!snd.ifname || !snd.backend) {
			fprintf(stderr, "conftool: send needs --ifname and --backend (try --help)\n");
			return TOOL_EXIT_USAGE;
		}
		if (argc != optind) {
			fprintf(stderr, "conftool: send takes no file arguments\n");
			return TOOL_EXIT_USAGE;
		}
		if (!have_seed) {
			struct timespec now;

			clock_gettime(CLOCK_REALTIME, &now);
			sel.seed = ((uint64_t)now.tv_sec * 1000003u ^ (uint64_t)now.tv_nsec) &
				   0xffffffffffffull;
		}
	} else {
		if (!have_seed) {
			fprintf(stderr, "conftool: %s needs --seed (the one send printed)\n", cmd);
			return TOOL_EXIT_USAGE;
		}
		if (argc - optind != (strcmp(cmd, "expect") ? 0 : 1)) {
			fprintf(stderr, "conftool: %s\n", strcmp(cmd, "expect") ? "list takes no file arguments"
										 : "expect needs OUT.pcap");
			return TOOL_EXIT_USAGE;
		}
	}
	rc = conftool_cases(&sel, &all, &cs);
	if (rc) {
		fprintf(stderr, "conftool: making the cases: %s (at most %u)\n", strerror(-rc),
			CONF_MAX_CASES);
		return TOOL_EXIT_USAGE;
	}
	if (!strcmp(cmd, "send"))
		rc = conftool_send(&snd, &sel, &cs);
	else if (!strcmp(cmd, "expect"))
		rc = cmd_expect(&sel, &cs, argv[optind]);
	else
		rc = cmd_list(&sel, &cs);
	conf_set_free(&all);
	conf_set_free(&cs);
	return rc;
}
