/*
 * gsogen: write a pcap of random, valid super-packets (deterministic from
 * the seed) to feed gsoseg, the kernel oracle or a replay tool.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "tool_pcap.h"
#include "tool_util.h"

static void usage(FILE *out)
{
	fprintf(out,
"usage: gsogen [options] OUT.pcap\n"
"\n"
"Write random super-packets, one Ethernet frame per pcap record, as a Linux\n"
"GSO skb looks before segmentation: the IPv4 total length / IPv6 payload\n"
"length and the UDP length cover the whole super-packet, the IPv4 header\n"
"checksum is valid and the L4 checksum field holds the pseudo-header seed\n"
"(with the whole L4 length), as CHECKSUM_PARTIAL leaves it.  Headers vary:\n"
"TCP flags (ACK, PSH, FIN, ECE, CWR) and options (MSS, window scale,\n"
"timestamps, SACK, NOPs), IPv4 DF and options, TOS/traffic class, IPv6 flow\n"
"label, the odd 802.1Q tag.  Payload lengths favour MSS multiples +-1.\n"
"The same seed always gives the same file.  OUT.pcap may be - (stdout).\n"
"\n"
"options:\n"
"  --seed N          PRNG seed (default 1)\n"
"  --count N         number of super-packets, 1..1000000 (default 100)\n"
"  --proto P         tcp4, tcp6, udp4, udp6 or mix (default mix)\n"
"  --max-payload N   largest L4 payload, 1..65507 (default 65000); each packet\n"
"                    also stays within a 65535-byte IP datagram\n"
"  -q, --quiet       no summary line on stderr\n"
"  -h, --help        this text\n"
"\n"
"example: gsogen --seed 7 --count 1000 super.pcap && gsoseg --mss 1448 super.pcap segs.pcap\n"
"\n"
"exit status: 0 written, 2 bad options, or OUT.pcap not writable or a write\n"
"to it failed (disk full, closed stdout, ...; the reason is on stderr).\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'c' },
		{ "proto", required_argument, NULL, 'p' },
		{ "max-payload", required_argument, NULL, 'm' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	uint64_t seed = 1, count = 100, max_payload = 65000;
	enum gen_proto proto = GEN_MIX;
	char errbuf[PCAP_ERRBUF_SIZE];
	unsigned long long bytes = 0, written;
	struct tool_pcap_out w;
	struct gen g;
	uint8_t *frame;
	int quiet = 0, c, werr = 0;

	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		int err = 0;

		switch (c) {
		case 's':
			err = tool_parse_u64(optarg, 0, UINT64_MAX, &seed);
			break;
		case 'c':
			err = tool_parse_u64(optarg, 1, 1000000, &count);
			break;
		case 'm':
			err = tool_parse_u64(optarg, 1, 65507, &max_payload);
			break;
		case 'p':
			err = gen_proto_parse(optarg, &proto);
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return TOOL_EXIT_OK;
		default:
			usage(stderr);
			return TOOL_EXIT_USAGE;
		}
		if (err) {
			fprintf(stderr, "gsogen: bad value '%s' for --%s (%s)\n", optarg,
				c == 's' ? "seed" : c == 'c' ? "count (1..1000000)" :
				c == 'm' ? "max-payload (1..65507)" : "proto (tcp4|tcp6|udp4|udp6|mix)",
				err == -ERANGE ? "out of range" : "not a valid value");
			return TOOL_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "gsogen: need exactly one output file (try --help)\n");
		return TOOL_EXIT_USAGE;
	}
	frame = malloc(GEN_FRAME_MAX);
	if (!frame) {
		fprintf(stderr, "gsogen: out of memory\n");
		return TOOL_EXIT_USAGE;
	}
	if (tool_pcap_out_open(&w, argv[optind], PCAP_TSTAMP_PRECISION_MICRO, NULL, errbuf)) {
		fprintf(stderr, "gsogen: %s: %s\n", argv[optind], errbuf);
		free(frame);
		return TOOL_EXIT_USAGE;
	}
	gen_init(&g, seed, proto, (uint32_t)max_payload);
	for (uint64_t i = 0; i < count && !werr; i++) {
		struct pcap_pkthdr h;
		int len = gen_next(&g, frame, GEN_FRAME_MAX);

		if (len < 0) {
			/* The generator only asks for headers the library must accept. */
			fprintf(stderr, "gsogen: packet %llu: header builder refused it: %s (%s)\n",
				(unsigned long long)i + 1, tool_gso_strerror(len), tool_errno_name(len));
			tool_pcap_out_close(&w);
			free(frame);
			return TOOL_EXIT_USAGE;
		}
		/* Fixed clock so that a seed names one exact file. */
		memset(&h, 0, sizeof(h));
		h.ts.tv_sec = 1700000000 + (time_t)(i / 10000);
		h.ts.tv_usec = (suseconds_t)(i % 10000) * 100;
		h.caplen = h.len = (bpf_u_int32)len;
		werr = tool_pcap_out_write(&w, &h, frame);
		bytes += (unsigned)len;
	}
	written = w.bytes;
	werr = tool_pcap_out_close(&w);
	free(frame);
	if (werr) {
		fprintf(stderr, "gsogen: %s: write failed after %llu bytes: %s\n", argv[optind], written,
			strerror(-werr));
		return TOOL_EXIT_USAGE;
	}
	if (!quiet)
		fprintf(stderr, "gsogen: %llu super-packets, %llu bytes, seed %llu\n",
			(unsigned long long)count, bytes, (unsigned long long)seed);
	return TOOL_EXIT_OK;
}
