/*
 * conftool compare: captures against the expected frames, per case (the
 * source port), in order within a case, byte for byte.  Differences both
 * sides may legitimately show (a zero checksum's two spellings, Ethernet
 * padding, a tag left in capture metadata) are counted in their own
 * columns and are mismatches only with --strict; every other difference
 * is a mismatch, printed with its first differing byte.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>

#include "conftool.h"
#include "tool_pcap.h"
#include "tool_util.h"

struct pkt {
	uint8_t *data;
	uint32_t len;
};

/* The frames of one pcap, by case. */
struct capture {
	const char *name, *path;
	struct pkt *pk[CONF_MAX_CASES];
	unsigned n[CONF_MAX_CASES];
	unsigned total, ours, unrelated;
};

static int load(struct capture *c)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *p;
	pcap_t *in = tool_pcap_open_in(c->path, errbuf);
	int rc;

	if (!in) {
		fprintf(stderr, "conftool: %s: %s\n", c->path, errbuf);
		return -EINVAL;
	}
	while ((rc = pcap_next_ex(in, &h, &p)) == 1) {
		unsigned idx;
		size_t l4;
		uint8_t proto;
		struct pkt *np;

		c->total++;
		if (!conf_frame_case(p, h->caplen, &idx, &l4, &proto)) {
			c->unrelated++;
			continue;
		}
		if (h->caplen < h->len)
			fprintf(stderr, "conftool: %s: frame %u truncated by the capture (%u of %u bytes; "
				"capture with a larger snap length)\n", c->path, c->total, h->caplen,
				h->len);
		np = realloc(c->pk[idx], (c->n[idx] + 1) * sizeof(*np));
		if (np)
			c->pk[idx] = np;
		if (!np || !(np[c->n[idx]].data = malloc(h->caplen ? h->caplen : 1))) {
			fprintf(stderr, "conftool: %s: out of memory\n", c->path);
			pcap_close(in);
			return -ENOMEM;
		}
		memcpy(np[c->n[idx]].data, p, h->caplen);
		np[c->n[idx]++].len = h->caplen;
		c->ours++;
	}
	if (rc == PCAP_ERROR) {
		fprintf(stderr, "conftool: %s: read error after frame %u: %s\n", c->path, c->total,
			pcap_geterr(in));
		pcap_close(in);
		return -EIO;
	}
	pcap_close(in);
	return 0;
}

static void unload(struct capture *c)
{
	for (unsigned i = 0; i < CONF_MAX_CASES; i++) {
		for (unsigned k = 0; k < c->n[i]; k++)
			free(c->pk[i][k].data);
		free(c->pk[i]);
	}
	free(c);
}

enum { D_EQUAL, D_CSUM0, D_PAD, D_UNTAG, D_MISMATCH };

/* Where byte `off` of expected frame `e` lies, for people. */
static void where(const struct pkt *e, size_t off, char *buf, size_t n)
{
	unsigned idx;
	size_t l4, l3 = e->len > 13 && e->data[12] == 0x81 && e->data[13] == 0 ? 18 : 14;
	uint8_t proto;

	if (!conf_frame_case(e->data, e->len, &idx, &l4, &proto) || off < l3) {
		snprintf(buf, n, "Ethernet header byte %zu", off);
		return;
	}
	if (off < l4)
		snprintf(buf, n, "IP header byte %zu", off - l3);
	else if (off < l4 + (proto == 6 ? (size_t)(e->data[l4 + 12] >> 4) * 4 : 8))
		snprintf(buf, n, "%s header byte %zu", proto == 6 ? "TCP" : "UDP", off - l4);
	else
		snprintf(buf, n, "payload byte %zu", off - l4 - (proto == 6 ? (size_t)(e->data[l4 + 12] >> 4) * 4 : 8));
}

/*
 * Compare captured `g` with expected `e`.  Returns D_*; for D_MISMATCH,
 * *off is the first differing byte in the expected frame, *goff the same
 * byte in the captured one (4 less when the capture lost the tag).
 */
static int diff(const struct pkt *e, const struct pkt *g, size_t *off, size_t *goff)
{
	const uint8_t *ed = e->data, *gd = g->data;
	uint32_t el = e->len, gl = g->len;
	uint8_t untagged[CONF_FRAME_MAX];
	unsigned idx;
	size_t l3, ipck, l4, ck, n, i;
	uint8_t proto;
	int kind = D_EQUAL;
	bool csum0 = false;

	conf_frame_case(ed, el, &idx, &l4, &proto);
	/* The capture lost the tag that was on the wire: compare the rest. */
	if (el >= 18 && ed[12] == 0x81 && ed[13] == 0 && !(gl >= 14 && gd[12] == 0x81 && gd[13] == 0) &&
	    (gl == el - 4 || (gl == 60 && el - 4 < 60))) {
		memcpy(untagged, ed, 12);
		memcpy(untagged + 12, ed + 16, el - 16);
		ed = untagged;
		el -= 4;
		l4 -= 4;
		kind = D_UNTAG;
	}
	/* Ethernet minimum: the device or driver pads with zeros up to 60 bytes. */
	if (gl == 60 && el < 60) {
		for (i = el; i < gl && !gd[i]; i++)
			;
		if (i == gl) {
			gl = el;
			kind = kind == D_EQUAL ? D_PAD : kind;
		}
	}
	n = el < gl ? el : gl;
	/*
	 * A checksum that computes to 0 has two spellings, 0x0000 and 0xffff,
	 * and implementations differ (Linux GSO segments: 0x0000 in TCP and
	 * IPv4 headers; QEMU's e1000 and the model: 0xffff in both).
	 * Differences only there are D_CSUM0; any other byte is a mismatch.
	 */
	l3 = ed[12] == 0x81 && ed[13] == 0 ? 18 : 14;
	ipck = ed[l3 - 2] == 0x08 && ed[l3 - 1] == 0 ? l3 + 10 : 0;
	ck = l4 + (proto == 6 ? 16 : 6);
	for (i = 0; i < n; i++) {
		size_t f = ipck && (i == ipck || i == ipck + 1) ? ipck : i == ck || i == ck + 1 ? ck : 0;

		if (ed[i] == gd[i])
			continue;
		if (!f || f + 2 > n || el != gl ||
		    !((ed[f] == 0 && ed[f + 1] == 0 && gd[f] == 0xff && gd[f + 1] == 0xff) ||
		      (ed[f] == 0xff && ed[f + 1] == 0xff && gd[f] == 0 && gd[f + 1] == 0)))
			break;
		csum0 = true;
		i = f + 1;
	}
	if (i == n && el == gl)
		return kind == D_EQUAL && csum0 ? D_CSUM0 : kind;
	*off = i + (kind == D_UNTAG && i >= 12 ? 4 : 0);
	*goff = i;
	return D_MISMATCH;
}

struct row {
	unsigned cases, frames, equal, csum0, pad, untag, empty, mismatch, missing, extra, bad_cases, shown;
};

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* TCP payload bytes of an untagged or tagged IPv4/IPv6 frame of ours (its length field). */
static bool tcp_payload(const struct pkt *p, size_t *l4, uint32_t *pay)
{
	unsigned idx;
	uint8_t proto;
	size_t l3, ip_end;

	if (!conf_frame_case(p->data, p->len, &idx, l4, &proto) || proto != 6 || *l4 + 20 > p->len)
		return false;
	l3 = p->data[12] == 0x81 && p->data[13] == 0 ? 18 : 14;
	if ((p->data[l3] >> 4) == 4)
		ip_end = l3 + ((size_t)p->data[l3 + 2] << 8 | p->data[l3 + 3]);
	else
		ip_end = l3 + 40 + ((size_t)p->data[l3 + 4] << 8 | p->data[l3 + 5]);
	if (ip_end > p->len || ip_end < *l4 + (size_t)(p->data[*l4 + 12] >> 4) * 4)
		return false;
	*pay = (uint32_t)(ip_end - *l4 - (size_t)(p->data[*l4 + 12] >> 4) * 4);
	return true;
}

/*
 * One frame after the expected ones that carries no TCP payload and
 * continues the last expected frame: the same ports and flags, its sequence
 * number where that frame's payload ends.  QEMU 7.2's e1000 sends one when
 * a TSO payload is a whole number of MSS: its transmit loop emits a frame
 * each time HDRLEN + MSS bytes have gathered, and at end of packet sends
 * what is left -- here the header alone.  Real hardware and Linux do not.
 */
static bool empty_tail(const struct pkt *last, const struct pkt *g)
{
	size_t el4, gl4;
	uint32_t epay, gpay;

	if (!tcp_payload(last, &el4, &epay) || !tcp_payload(g, &gl4, &gpay) || gpay || !epay || el4 != gl4)
		return false;
	return !memcmp(last->data + el4, g->data + gl4, 4) &&
	       rd32(g->data + gl4 + 4) == rd32(last->data + el4 + 4) + epay &&
	       last->data[el4 + 13] == g->data[gl4 + 13];
}

static void compare_one(const struct conftool_cmp *o, const struct capture *exp,
			const struct capture *got, struct row *r)
{
	for (unsigned idx = 0; idx < CONF_MAX_CASES; idx++) {
		unsigned ne = exp->n[idx], ng = got->n[idx], bad = 0;

		if (!ne && !ng)
			continue;
		r->cases += ng > 0;
		r->frames += ng;
		for (unsigned k = 0; k < ne || k < ng; k++) {
			char w[64];
			size_t off = 0, goff = 0;
			int d;

			if (k >= ng) {
				r->missing += ne - k;
				bad++;
				if (r->shown++ < o->show)
					fprintf(stderr, "conftool: %s: case %u (port %u): frames %u..%u of %u "
						"missing\n", got->name, idx, CONF_SPORT_BASE + idx, k, ne - 1,
						ne);
				break;
			}
			if (k >= ne && ne && ng - k == 1 && empty_tail(&exp->pk[idx][ne - 1], &got->pk[idx][k]) &&
			    !o->strict) {
				r->empty++;
				break;
			}
			if (k >= ne) {
				r->extra += ng - k;
				bad++;
				if (r->shown++ < o->show)
					fprintf(stderr, "conftool: %s: case %u (port %u): %u extra frames "
						"after the %u expected\n", got->name, idx,
						CONF_SPORT_BASE + idx, ng - k, ne);
				break;
			}
			d = diff(&exp->pk[idx][k], &got->pk[idx][k], &off, &goff);
			switch (d) {
			case D_EQUAL:
				r->equal++;
				continue;
			case D_CSUM0:
				r->csum0++;
				break;
			case D_PAD:
				r->pad++;
				break;
			case D_UNTAG:
				r->untag++;
				break;
			default:
				r->mismatch++;
				bad++;
				if (r->shown++ >= o->show)
					continue;
				where(&exp->pk[idx][k], off, w, sizeof(w));
				if (off >= exp->pk[idx][k].len || goff >= got->pk[idx][k].len)
					fprintf(stderr, "conftool: %s: case %u (port %u) frame %u of %u: "
						"length expected %u, captured %u (equal up to there)\n",
						got->name, idx, CONF_SPORT_BASE + idx, k, ne,
						exp->pk[idx][k].len, got->pk[idx][k].len);
				else
					fprintf(stderr, "conftool: %s: case %u (port %u) frame %u of %u "
						"(length expected %u, captured %u): first difference at byte "
						"%zu (%s): expected 0x%02x, captured 0x%02x\n", got->name, idx,
						CONF_SPORT_BASE + idx, k, ne, exp->pk[idx][k].len,
						got->pk[idx][k].len, off, w, exp->pk[idx][k].data[off],
						got->pk[idx][k].data[goff]);
				continue;
			}
			if (o->strict) {
				bad++;
				r->mismatch++;
				if (r->shown++ < o->show)
					fprintf(stderr, "conftool: %s: case %u (port %u) frame %u of %u: %s "
						"(a mismatch with --strict)\n", got->name, idx,
						CONF_SPORT_BASE + idx, k, ne,
						d == D_CSUM0 ? "csum0" : d == D_PAD ? "pad" : "untag");
			}
		}
		r->bad_cases += bad > 0;
	}
}

int conftool_compare(const struct conftool_cmp *o, int argc, char **argv)
{
	struct capture *exp, *got;
	unsigned exp_cases = 0, differ = 0;
	int status = TOOL_EXIT_OK;

	if (argc < 2) {
		fprintf(stderr, "conftool: compare needs EXPECTED.pcap and at least one NAME=CAPTURE.pcap\n");
		return TOOL_EXIT_USAGE;
	}
	for (int i = 1; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');

		if (!eq || eq == argv[i] || !eq[1]) {
			fprintf(stderr, "conftool: '%s' is not NAME=CAPTURE.pcap\n", argv[i]);
			return TOOL_EXIT_USAGE;
		}
	}
	exp = calloc(1, sizeof(*exp));
	if (!exp) {
		fprintf(stderr, "conftool: out of memory\n");
		return TOOL_EXIT_USAGE;
	}
	exp->name = "libgso (expected)";
	exp->path = argv[0];
	if (load(exp)) {
		unload(exp);
		return TOOL_EXIT_USAGE;
	}
	for (unsigned i = 0; i < CONF_MAX_CASES; i++)
		exp_cases += exp->n[i] > 0;
	if (!exp->ours) {
		fprintf(stderr, "conftool: %s holds no frame of ours: nothing to compare\n", argv[0]);
		unload(exp);
		return TOOL_EXIT_BAD_RECORDS;
	}
	printf("%-20s %6s %7s %7s %6s %6s %6s %6s %8s %7s %6s %9s %9s\n", "implementation", "cases", "frames",
	       "equal", "csum0", "pad", "untag", "empty", "mismatch", "missing", "extra", "bad-cases",
	       "unrelated");
	printf("%-20s %6u %7u %7s %6s %6s %6s %6s %8s %7s %6s %9s %9u\n", exp->name, exp_cases, exp->ours,
	       "-", "-", "-", "-", "-", "-", "-", "-", "-", exp->unrelated);
	fflush(stdout);
	for (int i = 1; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		struct row r = { 0 };
		char name[64];

		got = calloc(1, sizeof(*got));
		if (!got) {
			fprintf(stderr, "conftool: out of memory\n");
			status = TOOL_EXIT_USAGE;
			break;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(eq - argv[i]), argv[i]);
		got->name = name;
		got->path = eq + 1;
		if (load(got)) {
			unload(got);
			status = TOOL_EXIT_USAGE;
			break;
		}
		compare_one(o, exp, got, &r);
		if (r.shown > o->show)
			fprintf(stderr, "conftool: %s: %u more differences not shown (--show)\n", name,
				r.shown - o->show);
		fflush(stderr);
		printf("%-20s %6u %7u %7u %6u %6u %6u %6u %8u %7u %6u %9u %9u\n", name, r.cases, r.frames,
		       r.equal, r.csum0, r.pad, r.untag, r.empty, r.mismatch, r.missing, r.extra, r.bad_cases,
		       got->unrelated);
		fflush(stdout);
		differ += r.mismatch + r.missing + r.extra;
		unload(got);
	}
	if (status == TOOL_EXIT_OK)
		printf("conftool: compare: %s%s\n", differ ? "DIFFERENCES (details on stderr)" : "all equal",
		       o->strict ? " (strict)" : " (csum0, pad, untag and empty are tolerated, see --help)");
	unload(exp);
	if (status == TOOL_EXIT_OK && differ)
		status = TOOL_EXIT_BAD_RECORDS;
	return status;
}
