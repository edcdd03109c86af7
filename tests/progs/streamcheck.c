/*
 * streamcheck: check one TCP connection in a pcap (as tapcap writes it)
 * independently of the programs that sent it: frame sizes against the MTU,
 * IPv4 header and TCP checksums in both directions (a plain RFC 1071 loop
 * written here, not libgso's), and that the data direction's sequence
 * space from the SYN's ISN to the FIN was covered, every byte at least
 * once.  Bytes seen more than once are retransmissions: counted, not an
 * error.  Bytes never seen are gaps: an error.
 *
 * Two passes over the file: the first finds the connections and their
 * SYNs (so the ISN is known before any data), the second checks.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pcap/pcap.h>

#include "tool_pcap.h"
#include "tool_util.h"

#define EXIT_CHECK_FAILED 1
#define EXIT_USAGE 2      /* bad options or unreadable capture */
#define EXIT_NO_CONN 3    /* no (matching) TCP connection in the capture */

#define MAX_LIST 8        /* frame numbers / gaps named per kind */
#define MAX_TAGS 4

static void usage(FILE *f)
{
	fprintf(f,
		"usage: streamcheck [options] FILE\n"
		"\n"
		"Check one TCP connection in the pcap FILE (Ethernet, 802.1Q/802.1ad tags\n"
		"inline, IPv4 or IPv6): frame sizes, checksums and sequence coverage of\n"
		"the direction that carries the data, from the SYN's ISN to the FIN.\n"
		"\n"
		"options:\n"
		"  -p, --port N         the connection with port N on either side (the one\n"
		"                       with the most payload if several); default: the\n"
		"                       connection with the most payload in the file\n"
		"  -m, --mtu N          largest IP packet (default 1500): a frame may be\n"
		"                       N + 14 bytes, + 4 per VLAN tag; 0: no size check\n"
		"      --allow-gso      TCP frames above the MTU are GSO super-packets (a\n"
		"                       vnet tap): counted as over_mtu, not an error\n"
		"                       (frames of other protocols above the MTU still are)\n"
		"      --partial-csum-ok  a TCP checksum field that holds only the\n"
		"                       pseudo-header sum (checksum offload not yet done,\n"
		"                       as on a vnet tap or a veth with tx offload) passes;\n"
		"                       counted as tcp_csum_partial. Without it, an error\n"
		"      --allow-truncated  frames cut by the snap length pass; their TCP\n"
		"                       checksum is not checked (counted as csum_unchecked).\n"
		"                       Without it, truncated frames are an error\n"
		"  -q, --quiet          only failures and the summary line\n"
		"  -h, --help           this text\n"
		"\n"
		"Output (stdout): a report, one \"streamcheck: FAIL: ...\" line per failed\n"
		"check, and last a line of key=value pairs:\n"
		"  summary result=ok|fail frames= bytes= max_frame= conns= conn_frames=\n"
		"    data_frames= ack_frames= ipv=4|6 mtu= over_mtu= mtu_violations=\n"
		"    ipv4_csum_errors= tcp_csum_errors= tcp_csum_partial= csum_unchecked=\n"
		"    truncated= malformed= fragments= syn=0|1 fin=0|1 fin_acked=0|1 rst=\n"
		"    isn= stream_bytes= covered_bytes= retrans_bytes= retrans_frames=\n"
		"    dup_frames= gaps= gap_bytes= before_isn_bytes= after_fin_bytes=\n"
		"frames/bytes/max_frame/over_mtu/mtu_violations/truncated count every\n"
		"frame in the file; the rest count the chosen connection. stream_bytes is\n"
		"the sequence space from ISN+1 to the FIN (or to the highest byte seen when\n"
		"there is no FIN); covered_bytes the part of it seen at least once.\n"
		"\n"
		"Exit status: 0 every check holds; 1 a check failed (a checksum, the MTU,\n"
		"a gap, data outside ISN..FIN, no SYN, no FIN, a truncated or malformed\n"
		"frame, an IP fragment); 2 usage or unreadable file; 3 no matching TCP\n"
		"connection.\n");
}

/* ---- parsing ------------------------------------------------------------- */

enum csum { CS_NA, CS_OK, CS_BAD, CS_PARTIAL, CS_UNCHECKED };

struct pkt {
	uint32_t len;       /* wire length */
	int tags;
	bool ip, v6, tcp, frag, truncated, malformed;
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint32_t seq, ack, payload;
	uint8_t flags;
	enum csum ip_csum, tcp_csum;
};

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_ACK 0x10

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* One's complement sum of big-endian 16-bit words (odd tail padded with 0). */
static uint64_t sum16(const uint8_t *p, size_t n, uint64_t s)
{
	for (; n >= 2; p += 2, n -= 2)
		s += rd16(p);
	if (n)
		s += (uint64_t)p[0] << 8;
	return s;
}

static uint16_t fold(uint64_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* 0x0000 and 0xffff are the same number in one's complement. */
static bool oc_eq(uint16_t a, uint16_t b)
{
	return a == b || ((a == 0 || a == 0xffff) && (b == 0 || b == 0xffff));
}

static enum csum tcp_csum(const uint8_t *th, uint32_t tcp_len, const uint8_t *src,
			  const uint8_t *dst, size_t alen)
{
	uint64_t ph = sum16(src, alen, 0);
	uint16_t field = rd16(th + 16);

	ph = sum16(dst, alen, ph);
	ph += 6; /* protocol; the v6 pseudo-header's zero bytes add nothing */
	if (fold(sum16(th, tcp_len, ph + tcp_len)) == 0xffff)
		return CS_OK;
	/* Offload pending: the field is the folded pseudo-header, with or without the length. */
	if (oc_eq(field, fold(ph + tcp_len)) || oc_eq(field, fold(ph)))
		return CS_PARTIAL;
	return CS_BAD;
}

static void parse(struct pkt *k, const uint8_t *d, uint32_t caplen, uint32_t len)
{
	uint32_t off = 12, l3_avail, ip_len, hl, l4_len;
	uint16_t type;
	uint8_t proto;
	const uint8_t *l3, *th;

	memset(k, 0, sizeof(*k));
	k->len = len;
	if (caplen < 14)
		return;
	type = rd16(d + off);
	off += 2;
	while ((type == 0x8100 || type == 0x88a8 || type == 0x9100) && k->tags < MAX_TAGS) {
		if (caplen < off + 4)
			return;
		type = rd16(d + off + 2);
		off += 4;
		k->tags++;
	}
	l3 = d + off;
	l3_avail = caplen - off;
	if (type == 0x0800) {
		if (l3_avail < 20)
			goto cut;
		k->ip = true;
		hl = (uint32_t)(l3[0] & 15) * 4;
		ip_len = rd16(l3 + 2);
		if ((l3[0] >> 4) != 4 || hl < 20 || ip_len < hl || ip_len > len - off) {
			k->malformed = true;
			return;
		}
		if (l3_avail < hl)
			goto cut;
		k->ip_csum = fold(sum16(l3, hl, 0)) == 0xffff ? CS_OK : CS_BAD;
		proto = l3[9];
		memcpy(k->src, l3 + 12, 4);
		memcpy(k->dst, l3 + 16, 4);
		if (rd16(l3 + 6) & 0x3fff) {
			k->frag = proto == 6;
			return;
		}
	} else if (type == 0x86dd) {
		if (l3_avail < 40)
			goto cut;
		k->ip = k->v6 = true;
		hl = 40;
		ip_len = 40u + rd16(l3 + 4);
		proto = l3[6];
		memcpy(k->src, l3 + 8, 16);
		memcpy(k->dst, l3 + 24, 16);
		/* Extension headers: hop-by-hop, routing, destination options; a fragment header. */
		while (proto == 0 || proto == 43 || proto == 60 || proto == 44) {
			if (l3_avail < hl + 8)
				goto cut;
			if (proto == 44) {
				k->frag = l3[hl] == 6;
				return;
			}
			proto = l3[hl];
			hl += ((uint32_t)l3[hl + 1] + 1) * 8;
		}
		if (ip_len < hl || ip_len > len - off) {
			k->malformed = true;
			return;
		}
	} else {
		return;
	}
	if (proto != 6)
		return;
	l4_len = ip_len - hl;
	if (l4_len < 20) {
		k->malformed = true;
		return;
	}
	if (l3_avail < hl + 20)
		goto cut;
	th = l3 + hl;
	k->sport = rd16(th);
	k->dport = rd16(th + 2);
	k->seq = rd32(th + 4);
	k->ack = rd32(th + 8);
	k->flags = th[13];
	k->tcp = true;
	if ((uint32_t)(th[12] >> 4) * 4 < 20 || (uint32_t)(th[12] >> 4) * 4 > l4_len) {
		k->malformed = true; /* still of its connection: the ports were read */
		return;
	}
	k->payload = l4_len - (uint32_t)(th[12] >> 4) * 4;
	if (l3_avail < ip_len) {
		k->truncated = true;
		k->tcp_csum = CS_UNCHECKED;
		return;
	}
	k->tcp_csum = tcp_csum(th, l4_len, k->src, k->dst, k->v6 ? 16 : 4);
	return;
cut:
	/* Cut before the headers we need: nothing to check but the size. */
	k->truncated = true;
}

/* ---- connections ----------------------------------------------------------- */

/* Endpoint 0 is the one with the smaller (address, port). */
struct conn {
	bool v6;
	uint8_t addr[2][16];
	uint16_t port[2];
	uint64_t payload[2], frames;
	bool syn[2], bare_syn[2]; /* a SYN seen; one without ACK (the client's) */
	uint32_t isn[2];
};

static int endpoint_cmp(const uint8_t *a, uint16_t pa, const uint8_t *b, uint16_t pb)
{
	int c = memcmp(a, b, 16);

	return c ? c : (int)pa - (int)pb;
}

/* Which side of c sent k: 0, 1, or -1 if k is not of c. */
static int conn_side(const struct conn *c, const struct pkt *k)
{
	if (!k->tcp || k->v6 != c->v6)
		return -1;
	if (!memcmp(k->src, c->addr[0], 16) && k->sport == c->port[0] &&
	    !memcmp(k->dst, c->addr[1], 16) && k->dport == c->port[1])
		return 0;
	if (!memcmp(k->src, c->addr[1], 16) && k->sport == c->port[1] &&
	    !memcmp(k->dst, c->addr[0], 16) && k->dport == c->port[0])
		return 1;
	return -1;
}

struct conns {
	struct conn *v;
	size_t n, cap, last;
};

static struct conn *conn_find(struct conns *cs, const struct pkt *k, int *side)
{
	struct conn *c;
	int s;

	if (cs->n && (s = conn_side(&cs->v[cs->last], k)) >= 0) {
		*side = s;
		return &cs->v[cs->last];
	}
	for (size_t i = 0; i < cs->n; i++) {
		if ((s = conn_side(&cs->v[i], k)) >= 0) {
			cs->last = i;
			*side = s;
			return &cs->v[i];
		}
	}
	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? cs->cap * 2 : 16;
		struct conn *v = realloc(cs->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		cs->v = v;
		cs->cap = cap;
	}
	c = &cs->v[cs->n];
	memset(c, 0, sizeof(*c));
	c->v6 = k->v6;
	s = endpoint_cmp(k->src, k->sport, k->dst, k->dport) > 0;
	memcpy(c->addr[s], k->src, 16);
	c->port[s] = k->sport;
	memcpy(c->addr[!s], k->dst, 16);
	c->port[!s] = k->dport;
	cs->last = cs->n++;
	*side = s;
	return c;
}

/* ---- sequence coverage: sorted disjoint [start, end) ranges --------------- */

struct range {
	int64_t s, e;
};

struct ranges {
	struct range *v;
	size_t n, cap;
};

/* Add [s, e); returns the bytes of it already covered, or -1 (no memory). */
static int64_t ranges_add(struct ranges *r, int64_t s, int64_t e)
{
	size_t lo = 0, hi = r->n, i, j;
	int64_t old = 0, ns = s, ne = e;

	/* The common case: in order, at or past the end of the last range. */
	if (r->n && s >= r->v[r->n - 1].s) {
		lo = r->n - 1;
	} else {
		while (lo < hi) { /* first range whose end >= s */
			size_t mid = (lo + hi) / 2;

			if (r->v[mid].e < s)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	if (lo < r->n && r->v[lo].e < s)
		lo++;
	/* Ranges lo..j-1 touch or overlap [s, e): merge them. */
	for (j = lo; j < r->n && r->v[j].s <= e; j++) {
		int64_t os = r->v[j].s > s ? r->v[j].s : s, oe = r->v[j].e < e ? r->v[j].e : e;

		if (oe > os)
			old += oe - os;
		if (r->v[j].s < ns)
			ns = r->v[j].s;
		if (r->v[j].e > ne)
			ne = r->v[j].e;
	}
	if (j == lo) { /* nothing touched: insert */
		if (r->n == r->cap) {
			size_t cap = r->cap ? r->cap * 2 : 64;
			struct range *v = realloc(r->v, cap * sizeof(*v));

			if (!v)
				return -1;
			r->v = v;
			r->cap = cap;
		}
		memmove(&r->v[lo + 1], &r->v[lo], (r->n - lo) * sizeof(*r->v));
		r->n++;
	} else if (j > lo + 1) {
		memmove(&r->v[lo + 1], &r->v[j], (r->n - j) * sizeof(*r->v));
		r->n -= j - lo - 1;
	}
	i = lo;
	r->v[i].s = ns;
	r->v[i].e = ne;
	return old;
}

/* ---- the check ------------------------------------------------------------- */

struct list {
	uint64_t n;
	uint64_t at[MAX_LIST];
};

static void list_add(struct list *l, uint64_t frame)
{
	if (l->n < MAX_LIST)
		l->at[l->n] = frame;
	l->n++;
}

static void list_print(const struct list *l)
{
	for (uint64_t i = 0; i < l->n && i < MAX_LIST; i++)
		printf("%s%" PRIu64, i ? ", " : "", l->at[i]);
	if (l->n > MAX_LIST)
		printf(", ...");
}

struct opts {
	const char *path;
	int port; /* -1: any */
	uint32_t mtu;
	bool allow_gso, partial_ok, allow_trunc, quiet;
};

struct check {
	uint64_t frames, bytes, max_frame, conn_frames, dir_frames[2];
	uint64_t over_mtu, rst, csum_unchecked, tcp_csum_partial;
	struct list mtu_bad, ip_bad, tcp_bad, trunc, malformed, frag;
	bool fin, fin_acked, fin_conflict;
	int64_t fin_off, hi, max_ack;
	uint64_t retrans_bytes, retrans_frames, dup_frames, before_isn, after_fin;
	struct ranges cov;
	uint32_t base;
};

static int fail(const char *what)
{
	fprintf(stderr, "streamcheck: %s\n", what);
	return EXIT_USAGE;
}

/* Unwrap a 32-bit sequence number to an offset from base near hi. */
static int64_t unwrap(const struct check *ck, uint32_t seq)
{
	uint32_t rel = seq - ck->base;

	return ck->hi + (int32_t)(rel - (uint32_t)ck->hi);
}

static void addr_str(char *buf, size_t n, const uint8_t *a, bool v6, uint16_t port)
{
	if (v6)
		snprintf(buf, n, "[%x:%x:%x:%x:%x:%x:%x:%x]:%u", rd16(a), rd16(a + 2), rd16(a + 4),
			 rd16(a + 6), rd16(a + 8), rd16(a + 10), rd16(a + 12), rd16(a + 14), port);
	else
		snprintf(buf, n, "%u.%u.%u.%u:%u", a[0], a[1], a[2], a[3], port);
}

/*
 * Read the whole file, each frame parsed and handed to fn with its 1-based
 * number; fn returns 0, or an exit code that stops the scan.  Returns 0 or
 * that exit code (EXIT_USAGE for an unreadable file).
 */
typedef int (*frame_fn)(void *ctx, uint64_t fno, const struct pkt *k);

static int scan(const char *path, frame_fn fn, void *ctx)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	pcap_t *p = tool_pcap_open_in(path, errbuf);
	uint64_t fno = 0;
	int r, rc = 0;

	if (!p) {
		fprintf(stderr, "streamcheck: %s: %s\n", path, errbuf);
		return EXIT_USAGE;
	}
	while (!rc && (r = pcap_next_ex(p, &h, &d)) == 1) {
		struct pkt k;

		parse(&k, d, h->caplen, h->len);
		rc = fn(ctx, ++fno, &k);
	}
	if (!rc && r == PCAP_ERROR) {
		fprintf(stderr, "streamcheck: %s: %s\n", path, pcap_geterr(p));
		rc = EXIT_USAGE;
	}
	pcap_close(p);
	return rc;
}

/* Pass 1: the connections, their payload per side and their SYNs. */
static int pass1_frame(void *ctx, uint64_t fno, const struct pkt *k)
{
	struct conns *cs = ctx;
	struct conn *c;
	int side;

	(void)fno;
	if (!k->tcp)
		return 0;
	c = conn_find(cs, k, &side);
	if (!c)
		return fail("out of memory");
	c->frames++;
	c->payload[side] += k->payload;
	if ((k->flags & TH_SYN) && !c->syn[side]) {
		c->syn[side] = true;
		c->isn[side] = k->seq;
	}
	if ((k->flags & (TH_SYN | TH_ACK)) == TH_SYN)
		c->bare_syn[side] = true;
	return 0;
}

struct pass2 {
	const struct opts *o;
	const struct conn *c;
	int data_side;
	struct check *ck;
	bool have_base;
};

/* Without a SYN the stream starts at the lowest data sequence number. */
static int base_frame(void *ctx, uint64_t fno, const struct pkt *k)
{
	struct pass2 *x = ctx;

	(void)fno;
	if (conn_side(x->c, k) == x->data_side && k->payload && !k->malformed) {
		if (!x->have_base || (int32_t)(k->seq - x->ck->base) < 0)
			x->ck->base = k->seq;
		x->have_base = true;
	}
	return 0;
}

/* A data-direction segment: the FIN's place, and the bytes it covers. */
static int cover(struct check *ck, const struct pkt *k)
{
	int64_t s = unwrap(ck, k->seq + ((k->flags & TH_SYN) ? 1u : 0u));
	int64_t e = s + k->payload;

	if (k->flags & TH_FIN) {
		if (ck->fin && ck->fin_off != e)
			ck->fin_conflict = true;
		ck->fin = true;
		ck->fin_off = e;
	}
	if (!k->payload)
		return 0;
	if (s < 0) {
		ck->before_isn += (uint64_t)((e < 0 ? e : 0) - s);
		s = e < 0 ? e : 0;
	}
	if (e > s) {
		int64_t old = ranges_add(&ck->cov, s, e);

		if (old < 0)
			return fail("out of memory");
		if (old) {
			ck->retrans_bytes += (uint64_t)old;
			ck->retrans_frames++;
			if (old == e - s)
				ck->dup_frames++;
		}
		if (e > ck->hi)
			ck->hi = e;
	}
	return 0;
}

/* Pass 2: every check. */
static int pass2_frame(void *ctx, uint64_t fno, const struct pkt *kp)
{
	struct pass2 *x = ctx;
	const struct opts *o = x->o;
	const struct conn *c = x->c;
	struct check *ck = x->ck;
	const struct pkt k = *kp;
	int side, data_side = x->data_side;

	ck->frames++;
	ck->bytes += k.len;
	if (k.len > ck->max_frame)
		ck->max_frame = k.len;
	if (k.truncated)
		list_add(&ck->trunc, fno);
	if (o->mtu && k.len > o->mtu + 14u + 4u * (uint32_t)k.tags) {
		ck->over_mtu++;
		if (!o->allow_gso || !k.tcp)
			list_add(&ck->mtu_bad, fno);
	}
	if (k.frag)
		list_add(&ck->frag, fno);
	if (!k.tcp || (side = conn_side(c, &k)) < 0) {
		if (k.malformed)
			list_add(&ck->malformed, fno);
		return 0;
	}
	ck->conn_frames++;
	ck->dir_frames[side == data_side]++;
	if (k.malformed) {
		list_add(&ck->malformed, fno);
		return 0;
	}
	if (k.ip_csum == CS_BAD)
		list_add(&ck->ip_bad, fno);
	if (k.tcp_csum == CS_BAD || (k.tcp_csum == CS_PARTIAL && !o->partial_ok))
		list_add(&ck->tcp_bad, fno);
	if (k.tcp_csum == CS_PARTIAL)
		ck->tcp_csum_partial++;
	if (k.tcp_csum == CS_UNCHECKED)
		ck->csum_unchecked++;
	if (k.flags & TH_RST)
		ck->rst++;
	if (side != data_side) {
		/* ACKs of the data: did the receiver acknowledge the FIN? */
		if (k.flags & TH_ACK) {
			int64_t a = unwrap(ck, k.ack);

			if (a > ck->max_ack)
				ck->max_ack = a;
		}
		return 0;
	}
	return cover(ck, &k);
}

static bool failed_list(const char *what, const struct list *l)
{
	if (!l->n)
		return false;
	printf("streamcheck: FAIL: %" PRIu64 " %s (frame%s ", l->n, what, l->n > 1 ? "s" : "");
	list_print(l);
	printf(")\n");
	return true;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "allow-gso", no_argument, NULL, 'G' },
		{ "partial-csum-ok", no_argument, NULL, 'P' },
		{ "allow-truncated", no_argument, NULL, 'T' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "p:m:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (tool_parse_u64(optarg, 0, 65535, &v))
				return fprintf(stderr, "streamcheck: --port: '%s' is not a port\n", optarg),
				       EXIT_USAGE;
			o->port = (int)v;
			break;
		case 'm':
			if (tool_parse_u64(optarg, 0, 1u << 20, &v) || (v && v < 68))
				return fprintf(stderr, "streamcheck: --mtu: '%s' is not 0 or an MTU "
					       "(68..1048576)\n", optarg), EXIT_USAGE;
			o->mtu = (uint32_t)v;
			break;
		case 'G': o->allow_gso = true; break;
		case 'P': o->partial_ok = true; break;
		case 'T': o->allow_trunc = true; break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (argc - optind != 1)
		return fail("one capture FILE is needed (--help)");
	o->path = argv[optind];
	if (!strcmp(o->path, "-"))
		return fail("FILE is read twice: a file, not standard input");
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .port = -1, .mtu = 1500 };
	struct conns cs = { 0 };
	struct check ck = { 0 };
	const struct conn *c = NULL;
	int rc, data_side, candidates = 0;
	bool bad = false, syn;
	char a[64], b[64];
	uint64_t stream, covered = 0, gaps = 0, gap_bytes = 0;
	int64_t end, at = 0;
	struct pass2 x;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	rc = scan(o.path, pass1_frame, &cs);
	if (rc)
		goto out;
	for (size_t i = 0; i < cs.n; i++) {
		const struct conn *cand = &cs.v[i];

		if (o.port >= 0 && cand->port[0] != o.port && cand->port[1] != o.port)
			continue;
		candidates++;
		if (!c || cand->payload[0] + cand->payload[1] > c->payload[0] + c->payload[1])
			c = cand;
	}
	if (!c) {
		if (o.port >= 0)
			printf("streamcheck: FAIL: no TCP connection with port %d in %s (%zu others)\n",
			       o.port, o.path, cs.n);
		else
			printf("streamcheck: FAIL: no TCP connection in %s\n", o.path);
		printf("summary result=fail conns=%zu\n", cs.n);
		rc = EXIT_NO_CONN;
		goto out;
	}
	/* The data flows from the side that sent more; with none, from the client (bare SYN). */
	if (c->payload[0] != c->payload[1])
		data_side = c->payload[1] > c->payload[0];
	else
		data_side = c->bare_syn[1] && !c->bare_syn[0];
	syn = c->syn[data_side];
	ck.base = syn ? c->isn[data_side] + 1 : 0;
	ck.max_ack = INT64_MIN;
	x = (struct pass2){ .o = &o, .c = c, .data_side = data_side, .ck = &ck };
	if (!syn)
		rc = scan(o.path, base_frame, &x);
	if (!rc)
		rc = scan(o.path, pass2_frame, &x);
	if (rc)
		goto out;

	end = ck.fin ? ck.fin_off : ck.hi;
	stream = end > 0 ? (uint64_t)end : 0;
	if (ck.fin && ck.hi > ck.fin_off)
		ck.after_fin = (uint64_t)(ck.hi - ck.fin_off);
	addr_str(a, sizeof(a), c->addr[data_side], c->v6, c->port[data_side]);
	addr_str(b, sizeof(b), c->addr[!data_side], c->v6, c->port[!data_side]);
	if (!o.quiet) {
		printf("streamcheck: %s: %" PRIu64 " frames, %" PRIu64 " bytes, largest frame %" PRIu64
		       " bytes\n", o.path, ck.frames, ck.bytes, ck.max_frame);
		printf("connection: %s -> %s (IPv%d), %d of %zu TCP connection%s matched\n", a, b,
		       c->v6 ? 6 : 4, candidates, cs.n, cs.n == 1 ? "" : "s");
		printf("  frames: %" PRIu64 " data direction, %" PRIu64 " ack direction\n",
		       ck.dir_frames[1], ck.dir_frames[0]);
		if (o.mtu)
			printf("  mtu %u: %" PRIu64 " frames over (%s)\n", o.mtu, ck.over_mtu,
			       o.allow_gso ? "TCP ones allowed: GSO super-packets" : "an error");
		else
			printf("  mtu: not checked\n");
		printf("  checksums: %" PRIu64 " IPv4 header errors, %" PRIu64 " TCP errors, %" PRIu64
		       " TCP partial (%s), %" PRIu64 " not checked (truncated)\n", ck.ip_bad.n,
		       ck.tcp_bad.n, ck.tcp_csum_partial,
		       o.partial_ok ? "accepted" : "counted as errors", ck.csum_unchecked);
		printf("  syn: %s", syn ? "yes" : "no");
		if (syn)
			printf(" (isn %u)", c->isn[data_side]);
		printf(", fin: %s", ck.fin ? "yes" : "no");
		if (ck.fin)
			printf(" (after %" PRId64 " bytes)", ck.fin_off);
		printf(", fin acked: %s, rst: %" PRIu64 "\n",
		       ck.fin && ck.max_ack >= ck.fin_off + 1 ? "yes" : "no", ck.rst);
	}
	ck.fin_acked = ck.fin && ck.max_ack >= ck.fin_off + 1;

	/* Walk the covered ranges over [0, end): what lies between them is a gap. */
	for (size_t i = 0; i <= ck.cov.n; i++) {
		int64_t s = i < ck.cov.n ? ck.cov.v[i].s : end, e = i < ck.cov.n ? ck.cov.v[i].e : end;

		if (s > end)
			s = end;
		if (e > end)
			e = end;
		if (s > at) {
			if (gaps < MAX_LIST)
				printf("  gap: bytes %" PRId64 "..%" PRId64 " (%" PRId64 " bytes; seq %u..%u)\n",
				       at, s, s - at, (uint32_t)(ck.base + (uint64_t)at),
				       (uint32_t)(ck.base + (uint64_t)s));
			gaps++;
			gap_bytes += (uint64_t)(s - at);
		}
		if (e > s && e > at) {
			covered += (uint64_t)(e - (s > at ? s : at));
			at = e;
		}
	}
	if (!o.quiet)
		printf("  stream: %" PRIu64 " bytes, %" PRIu64 " covered, %" PRIu64 " retransmitted in %"
		       PRIu64 " frames (%" PRIu64 " wholly duplicate), %" PRIu64 " gaps of %" PRIu64
		       " bytes\n", stream, covered, ck.retrans_bytes, ck.retrans_frames, ck.dup_frames,
		       gaps, gap_bytes);

	bad |= failed_list("IPv4 header checksum errors", &ck.ip_bad);
	bad |= failed_list(o.partial_ok ? "TCP checksum errors" :
			   "TCP checksum errors (--partial-csum-ok accepts pseudo-header-only ones)",
			   &ck.tcp_bad);
	bad |= failed_list(o.allow_gso ? "frames above the MTU that are not TCP" :
			   "frames above the MTU", &ck.mtu_bad);
	if (!o.allow_trunc)
		bad |= failed_list("truncated frames (--allow-truncated accepts them)", &ck.trunc);
	bad |= failed_list("malformed frames", &ck.malformed);
	bad |= failed_list("TCP IP fragments", &ck.frag);
	if (gaps) {
		printf("streamcheck: FAIL: %" PRIu64 " gaps, %" PRIu64 " bytes never seen\n", gaps,
		       gap_bytes);
		bad = true;
	}
	if (!syn) {
		printf("streamcheck: FAIL: no SYN from %s: the stream's start (ISN) is unknown\n", a);
		bad = true;
	}
	if (!ck.fin) {
		printf("streamcheck: FAIL: no FIN from %s: the stream's end is unknown\n", a);
		bad = true;
	}
	if (ck.fin_conflict) {
		printf("streamcheck: FAIL: FINs at different sequence numbers\n");
		bad = true;
	}
	if (ck.before_isn || ck.after_fin) {
		printf("streamcheck: FAIL: data outside ISN..FIN: %" PRIu64 " bytes before, %" PRIu64
		       " after\n", ck.before_isn, ck.after_fin);
		bad = true;
	}
	printf("summary result=%s frames=%" PRIu64 " bytes=%" PRIu64 " max_frame=%" PRIu64
	       " conns=%zu conn_frames=%" PRIu64 " data_frames=%" PRIu64 " ack_frames=%" PRIu64
	       " ipv=%d mtu=%u over_mtu=%" PRIu64 " mtu_violations=%" PRIu64
	       " ipv4_csum_errors=%" PRIu64 " tcp_csum_errors=%" PRIu64 " tcp_csum_partial=%" PRIu64
	       " csum_unchecked=%" PRIu64 " truncated=%" PRIu64 " malformed=%" PRIu64
	       " fragments=%" PRIu64 " syn=%d fin=%d fin_acked=%d rst=%" PRIu64 " isn=%u"
	       " stream_bytes=%" PRIu64 " covered_bytes=%" PRIu64 " retrans_bytes=%" PRIu64
	       " retrans_frames=%" PRIu64 " dup_frames=%" PRIu64 " gaps=%" PRIu64
	       " gap_bytes=%" PRIu64 " before_isn_bytes=%" PRIu64 " after_fin_bytes=%" PRIu64 "\n",
	       bad ? "fail" : "ok", ck.frames, ck.bytes, ck.max_frame, cs.n, ck.conn_frames,
	       ck.dir_frames[1], ck.dir_frames[0], c->v6 ? 6 : 4, o.mtu, ck.over_mtu, ck.mtu_bad.n,
	       ck.ip_bad.n, ck.tcp_bad.n, ck.tcp_csum_partial, ck.csum_unchecked, ck.trunc.n,
	       ck.malformed.n, ck.frag.n, syn, ck.fin, ck.fin_acked, ck.rst,
	       syn ? c->isn[data_side] : 0, stream, covered, ck.retrans_bytes, ck.retrans_frames,
	       ck.dup_frames, gaps, gap_bytes, ck.before_isn, ck.after_fin);
	rc = bad ? EXIT_CHECK_FAILED : 0;
out:
	free(cs.v);
	free(ck.cov.v);
	return rc;
}
