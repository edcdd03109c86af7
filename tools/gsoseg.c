/*
 * gsoseg: segment the super-packets of a pcap with libgso's software GSO
 * and write the frames that would go on the wire.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gso/seg.h>
#include <gso/tmpl.h>

#include "tool_pcap.h"
#include "tool_util.h"

static void usage(FILE *out)
{
	fprintf(out,
"usage: gsoseg [options] IN.pcap OUT.pcap\n"
"\n"
"Segment each super-packet of IN.pcap as the Linux kernel's software GSO\n"
"does and write the resulting frames, in order, to OUT.pcap.  Each input\n"
"record is one Ethernet frame (optionally one 802.1Q tag) carrying IPv4\n"
"(options allowed) or IPv6 (no extension headers) and TCP or UDP, whose\n"
"headers describe the whole super-packet, like a Linux GSO skb: the IPv4\n"
"total length / IPv6 payload length and the UDP length cover all of it.\n"
"The L4 checksum field of the input is ignored.  TCP segments get seq + i*MSS,\n"
"FIN/PSH only on the last, CWR only on the first; UDP segments are full\n"
"datagrams (at most 128 per super-packet, as Linux).  A payload of at most\n"
"one MSS gives one frame.  Every output frame keeps the timestamp of its\n"
"input record.  Either file may be - (stdin / stdout).\n"
"\n"
"options:\n"
"  --mss N            payload bytes per segment (Linux gso_size), 1..65535\n"
"                     (default 1448)\n"
"  --csum full|partial\n"
"                     full: complete L4 checksums (default); partial: leave the\n"
"                     pseudo-header seed for a device that finishes them\n"
"  --ipid inc|fixed   IPv4 ID + 1 per segment (default, as Linux), or the same\n"
"                     ID on every segment (refused for packets without DF)\n"
"  -q, --quiet        no summary line\n"
"  -h, --help         this text\n"
"\n"
"A record that cannot be segmented (truncated, not IPv4/IPv6 + TCP/UDP, IPv6\n"
"extension header, lengths that contradict each other or the frame, too many\n"
"segments, a TCP SYN or RST with more than one MSS of payload, ...) is\n"
"reported on stderr as\n"
"  gsoseg: IN.pcap: record N: <reason> (<errno name>)\n"
"with N counted from 1, and is not written; the other records still are.\n"
"Unless --quiet, a summary line on stderr ends the run:\n"
"  gsoseg: R records in, F frames out, B bad records\n"
"\n"
"exit status:\n"
"  0  every record segmented and written\n"
"  1  some records were bad (reported and skipped), the rest written\n"
"  2  bad options, unreadable or non-Ethernet input, unwritable output, an\n"
"     output that is the input file (refused before it is touched), a read\n"
"     error part-way (frames of records before it are written), or a write\n"
"     error (disk full, closed stdout, ...: reported with its reason, OUT.pcap\n"
"     is incomplete and no summary line is printed)\n");
}

struct outbuf {
	struct gso_frame *frames;
	unsigned n_frames;
	uint8_t *data;
	size_t data_cap;
};

/* Grow the scratch space for one super-packet's frames; 0 or -ENOMEM. */
static int outbuf_reserve(struct outbuf *b, unsigned n, size_t bytes)
{
	if (n > b->n_frames) {
		void *p = realloc(b->frames, n * sizeof(*b->frames));

		if (!p)
			return -ENOMEM;
		b->frames = p;
		b->n_frames = n;
	}
	if (bytes > b->data_cap) {
		void *p = realloc(b->data, bytes);

		if (!p)
			return -ENOMEM;
		b->data = p;
		b->data_cap = bytes;
	}
	return 0;
}

/*
 * Why the segmenter refused the record with -EINVAL, in words: one errno
 * covers several causes, and the headers tell them apart.  NULL: none of
 * the known ones (the generic text of tool_gso_strerror is printed).
 */
static const char *einval_reason(const struct gso_tmpl *t, size_t pay_len, const struct gso_seg_opts *o,
				 char *buf, size_t cap)
{
	uint8_t fl = 0; /* stays 0 for UDP (-ENOENT) */

	gso_tmpl__tcp_flags(t, &fl);

	/* Every segment would carry the flag: several SYNs, or several RSTs. */
	if ((fl & (GSO_TCP_SYN | GSO_TCP_RST)) && pay_len > o->mss) {
		const char *f = (fl & GSO_TCP_SYN) && (fl & GSO_TCP_RST) ? "SYN+RST" : fl & GSO_TCP_SYN ? "SYN" : "RST";

		snprintf(buf, cap, "TCP %s with %zu payload bytes, more than one MSS (%u): a %s is never "
			 "segmented, since every segment would carry it", f, pay_len, o->mss, f);
		return buf;
	}
	if (t->l3 == GSO_L3_IPV4 && o->ipid == GSO_IPID_FIXED && !(t->hdr[t->l3_off + 6] & 0x40)) {
		snprintf(buf, cap, "--ipid fixed needs DF, and this IPv4 packet has it clear "
			 "(segments with one ID and no DF could not be told apart when fragmented)");
		return buf;
	}
	return NULL;
}

/*
 * Segment one frame into b; returns the frame count or -errno, with a
 * precise reason for some errors in *why (else *why is NULL).
 */
static int segment_one(const uint8_t *pkt, size_t len, const struct gso_seg_opts *o,
		       struct outbuf *b, const char **why, char *why_buf, size_t why_cap)
{
	size_t pay_off, pay_len, per;
	struct gso_tmpl t;
	int n, err;

	*why = NULL;
	err = gso_tmpl__parse_pkt(&t, pkt, len, &pay_off, &pay_len);
	if (err)
		return err;
	struct gso_extent ext = { .base = pkt + pay_off, .len = pay_len };
	struct gso_super s = { .tmpl = &t, .ext = &ext, .n_ext = 1 };

	n = gso_seg_count(&s, o);
	if (n == -EINVAL)
		*why = einval_reason(&t, pay_len, o, why_buf, why_cap);
	if (n < 0)
		return n;
	per = t.hdr_len + (pay_len < o->mss ? pay_len : o->mss);
	err = outbuf_reserve(b, (unsigned)n, (size_t)n * per);
	if (err)
		return err;
	for (int i = 0; i < n; i++) {
		b->frames[i].buf = b->data + (size_t)i * per;
		b->frames[i].cap = (uint32_t)per;
	}
	return gso_segment(&s, o, b->frames, (unsigned)n);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "mss", required_argument, NULL, 'm' },
		{ "csum", required_argument, NULL, 'c' },
		{ "ipid", required_argument, NULL, 'i' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	unsigned long records = 0, frames_out = 0, bad = 0;
	uint64_t mss = 1448;
	int csum = GSO_CSUM_FULL, ipid = GSO_IPID_INC, quiet = 0, status = TOOL_EXIT_OK, c, rc, err;
	unsigned long long bytes;
	char errbuf[PCAP_ERRBUF_SIZE];
	struct outbuf b = { 0 };
	struct tool_pcap_out w;
	const char *in, *out;
	pcap_t *p;

	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (tool_parse_u64(optarg, 1, 65535, &mss)) {
				fprintf(stderr, "gsoseg: --mss wants an integer 1..65535, not '%s'\n",
					optarg);
				return TOOL_EXIT_USAGE;
			}
			break;
		case 'c':
			if (!strcmp(optarg, "full")) {
				csum = GSO_CSUM_FULL;
			} else if (!strcmp(optarg, "partial")) {
				csum = GSO_CSUM_PARTIAL;
			} else {
				fprintf(stderr, "gsoseg: --csum wants full or partial, not '%s'\n", optarg);
				return TOOL_EXIT_USAGE;
			}
			break;
		case 'i':
			if (!strcmp(optarg, "inc")) {
				ipid = GSO_IPID_INC;
			} else if (!strcmp(optarg, "fixed")) {
				ipid = GSO_IPID_FIXED;
			} else {
				fprintf(stderr, "gsoseg: --ipid wants inc or fixed, not '%s'\n", optarg);
				return TOOL_EXIT_USAGE;
			}
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return TOOL_EXIT_OK;
		default:
			fprintf(stderr, "gsoseg: try --help\n");
			return TOOL_EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "gsoseg: need IN.pcap and OUT.pcap (try --help)\n");
		return TOOL_EXIT_USAGE;
	}
	in = argv[optind];
	out = argv[optind + 1];

	GSO_OPTS(gso_seg_opts, o, .mss = (uint32_t)mss, .csum = (uint8_t)csum,
		 .ipid = (uint8_t)ipid);

	p = tool_pcap_open_in(in, errbuf);
	if (!p) {
		fprintf(stderr, "gsoseg: %s: %s\n", in, errbuf);
		return TOOL_EXIT_USAGE;
	}
	if (tool_pcap_out_open(&w, out, pcap_get_tstamp_precision(p), p, errbuf)) {
		fprintf(stderr, "gsoseg: %s: %s\n", out, errbuf);
		pcap_close(p);
		return TOOL_EXIT_USAGE;
	}

	for (int werr = 0; !werr;) {
		struct pcap_pkthdr *h;
		const u_char *pkt;
		const char *why;
		char why_buf[192];
		int n;

		rc = pcap_next_ex(p, &h, &pkt);
		if (rc != 1)
			break;
		records++;
		if (h->caplen < h->len) {
			fprintf(stderr, "gsoseg: %s: record %lu: truncated by the capture "
				"(%u of %u bytes saved; capture with a larger snap length)\n",
				in, records, h->caplen, h->len);
			bad++;
			continue;
		}
		n = segment_one(pkt, h->caplen, &o, &b, &why, why_buf, sizeof(why_buf));
		if (n < 0) {
			fprintf(stderr, "gsoseg: %s: record %lu: %s (%s)\n", in, records,
				why ? why : tool_gso_strerror(n), tool_errno_name(n));
			bad++;
			continue;
		}
		for (int i = 0; i < n && !werr; i++) {
			struct pcap_pkthdr oh = { .ts = h->ts, .caplen = b.frames[i].len,
						  .len = b.frames[i].len };

			werr = tool_pcap_out_write(&w, &oh, b.frames[i].buf);
		}
		frames_out += (unsigned long)n;
	}
	if (rc == PCAP_ERROR) {
		fprintf(stderr, "gsoseg: %s: read error after record %lu: %s\n", in, records,
			pcap_geterr(p));
		status = TOOL_EXIT_USAGE;
	}
	bytes = w.bytes;
	err = tool_pcap_out_close(&w);
	pcap_close(p);
	free(b.frames);
	free(b.data);
	if (err) {
		/* The frames counted were not all written: no summary that says they were. */
		fprintf(stderr, "gsoseg: %s: write failed after %llu bytes, at record %lu: %s\n", out,
			bytes, records, strerror(-err));
		return TOOL_EXIT_USAGE;
	}
	if (status == TOOL_EXIT_OK && bad)
		status = TOOL_EXIT_BAD_RECORDS;
	if (!quiet)
		fprintf(stderr, "gsoseg: %lu records in, %lu frames out, %lu bad records\n",
			records, frames_out, bad);
	return status;
}
