/*
 * Header templates: parsing (good frames, every truncation, malformed and
 * unsupported headers), whole-packet length checks, building from fields
 * and the accessors.  Frames are assembled here byte by byte, independently
 * of gso_tmpl__build(), so that the two check each other.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <gso/gso.h>

/* ---- a frame builder independent of the library ---- */

struct spec {
	uint8_t vlan;       /* 1: one 802.1Q tag */
	uint8_t l3;         /* 4 or 6 */
	uint8_t l4;         /* 6 or 17 */
	uint8_t ip_opts;    /* IPv4 option bytes (NOPs + EOL), multiple of 4 */
	uint8_t tcp_opts;   /* TCP option bytes: timestamps (12) or NOP filler */
	uint16_t payload;
};

struct built {
	size_t len, l3_off, l4_off, l4_len, hdr_len;
};

static void be16(uint8_t *p, unsigned v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }

static struct built mk(uint8_t *f, const struct spec *s)
{
	struct built b = { 0 };
	size_t o = 12;

	memcpy(f, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	if (s->vlan) {
		be16(f + o, 0x8100);
		be16(f + o + 2, 0x2005);
		o += 4;
	}
	be16(f + o, s->l3 == 4 ? 0x0800 : 0x86dd);
	b.l3_off = o + 2;
	size_t l3h = s->l3 == 4 ? 20u + s->ip_opts : 40u;
	b.l4_off = b.l3_off + l3h;
	b.l4_len = s->l4 == 6 ? 20u + s->tcp_opts : 8u;
	b.hdr_len = b.l4_off + b.l4_len;
	b.len = b.hdr_len + s->payload;
	uint8_t *ip = f + b.l3_off, *l4 = f + b.l4_off;
	if (s->l3 == 4) {
		ip[0] = (uint8_t)(0x40 | l3h / 4);
		ip[1] = 0x02;
		be16(ip + 2, (unsigned)(b.len - b.l3_off));
		be16(ip + 4, 0x1234);
		be16(ip + 6, 0x4000);
		ip[8] = 64;
		ip[9] = s->l4;
		be16(ip + 10, 0);
		memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
		memset(ip + 20, 1, s->ip_opts); /* NOPs */
		if (s->ip_opts)
			ip[20 + s->ip_opts - 1] = 0; /* EOL */
	} else {
		memcpy(ip, "\x60\x01\x23\x45", 4);
		be16(ip + 4, (unsigned)(b.len - b.l4_off));
		ip[6] = s->l4;
		ip[7] = 64;
		for (int i = 0; i < 32; i++)
			ip[8 + i] = (uint8_t)(i < 16 ? 0xfd : 0xfe) ^ (uint8_t)i;
	}
	be16(l4, 40000);
	be16(l4 + 2, 5001);
	if (s->l4 == 6) {
		memcpy(l4 + 4, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
		l4[12] = (uint8_t)(b.l4_len / 4 << 4);
		l4[13] = 0x18; /* PSH ACK */
		be16(l4 + 14, 512);
		be16(l4 + 16, 0);
		be16(l4 + 18, 0);
		uint8_t *o2 = l4 + 20;
		if (s->tcp_opts == 12)
			memcpy(o2, "\x01\x01\x08\x0a\x00\x00\x00\x01\x00\x00\x00\x02", 12);
		else
			memset(o2, 1, s->tcp_opts);
	} else {
		be16(l4 + 4, (unsigned)(b.len - b.l4_off));
		be16(l4 + 6, 0);
	}
	for (size_t i = b.hdr_len; i < b.len; i++)
		f[i] = (uint8_t)(i * 7);
	return b;
}

static const struct spec good[] = {
	{ 0, 4, 6, 0, 0, 0 },   { 0, 4, 6, 0, 12, 100 }, { 1, 4, 6, 0, 12, 3000 },
	{ 0, 4, 6, 40, 40, 1 }, { 1, 4, 6, 8, 0, 9000 }, { 0, 4, 17, 0, 0, 0 },
	{ 1, 4, 17, 4, 0, 1472 }, { 0, 6, 6, 0, 0, 0 }, { 0, 6, 6, 0, 12, 2000 },
	{ 1, 6, 6, 0, 40, 64000 }, { 0, 6, 17, 0, 0, 5 }, { 1, 6, 17, 0, 0, 1200 },
};
#define N_GOOD (sizeof(good) / sizeof(good[0]))

static uint8_t frame[70000];

static void poison(struct gso_tmpl *t) { memset(t, 0xa5, sizeof(*t)); }

static bool poisoned(const struct gso_tmpl *t)
{
	const uint8_t *p = (const void *)t;

	for (size_t i = 0; i < sizeof(*t); i++)
		if (p[i] != 0xa5)
			return false;
	return true;
}

static void check_tmpl(const struct gso_tmpl *t, const struct spec *s, const struct built *b)
{
	cr_assert_eq(t->hdr_len, b->hdr_len);
	cr_assert_eq(t->l3_off, b->l3_off);
	cr_assert_eq(t->l4_off, b->l4_off);
	cr_assert_eq(t->l4_len, b->l4_len);
	cr_assert_eq(t->l3, s->l3);
	cr_assert_eq(t->l4, s->l4);
	cr_assert_eq(t->vlan, s->vlan);
	cr_assert_arr_eq(t->hdr, frame, b->hdr_len);
	for (size_t i = b->hdr_len; i < sizeof(t->hdr); i++)
		cr_assert_eq(t->hdr[i], 0, "hdr[%zu] past hdr_len not zero", i);
}

Test(tmpl, parse_good)
{
	for (size_t i = 0; i < N_GOOD; i++) {
		struct gso_tmpl t;
		struct built b = mk(frame, &good[i]);
		size_t off = 0, plen = 0;

		poison(&t);
		cr_assert_eq(gso_tmpl__parse(&t, frame, b.len), 0, "case %zu", i);
		check_tmpl(&t, &good[i], &b);
		/* header-only buffer is enough for the template parser */
		poison(&t);
		cr_assert_eq(gso_tmpl__parse(&t, frame, b.hdr_len), 0, "case %zu", i);
		check_tmpl(&t, &good[i], &b);

		poison(&t);
		cr_assert_eq(gso_tmpl__parse_pkt(&t, frame, b.len, &off, &plen), 0, "case %zu", i);
		check_tmpl(&t, &good[i], &b);
		cr_assert_eq(off, b.hdr_len);
		cr_assert_eq(plen, good[i].payload);
	}
}

Test(tmpl, truncated_every_byte)
{
	for (size_t i = 0; i < N_GOOD; i++) {
		struct built b = mk(frame, &good[i]);

		for (size_t len = 0; len < b.hdr_len; len++) {
			/* a fresh exact-size copy so ASan sees any over-read */
			uint8_t *cut = malloc(len ? len : 1);
			struct gso_tmpl t;
			int r;

			memcpy(cut, frame, len);
			poison(&t);
			r = gso_tmpl__parse(&t, cut, len);
			cr_assert(r == -ENODATA || r == -EBADMSG, "case %zu len %zu: %d", i, len, r);
			cr_assert(poisoned(&t), "case %zu len %zu: template written", i, len);
			r = gso_tmpl__parse_pkt(&t, cut, len, NULL, NULL);
			cr_assert(r == -ENODATA || r == -EBADMSG, "case %zu len %zu: %d", i, len, r);
			cr_assert(poisoned(&t));
			free(cut);
		}
	}
}

/* ---- one-byte mutations of a good frame ---- */

enum base { L2, L3, L4 };
struct mut {
	char name[32];
	struct spec s;
	uint8_t base, off, mask, val;   /* byte = (byte & ~mask) | val */
	uint8_t base2, off2, mask2, val2;
	int err;        /* expected from gso_tmpl__parse */
	int pkt_err;    /* expected from gso_tmpl__parse_pkt */
};

#define V4TCP { 0, 4, 6, 0, 12, 100 }
#define V4TCPV { 1, 4, 6, 0, 0, 100 }
#define V4UDP { 0, 4, 17, 0, 0, 100 }
#define V6TCP { 0, 6, 6, 0, 0, 100 }
#define V6UDP { 0, 6, 17, 0, 0, 100 }
#define NOMUT2 0, 0, 0, 0
static const struct mut muts[] = {
	/* unsupported */
	{ "qinq 88a8", V4TCP, L2, 12, 0xff, 0x88, L2, 13, 0xff, 0xa8, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	{ "qinq 9100", V4TCP, L2, 12, 0xff, 0x91, L2, 13, 0xff, 0x00, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	{ "two 8100 tags", V4TCPV, L2, 16, 0xff, 0x81, L2, 17, 0xff, 0x00, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	{ "88a8 inside 8100", V4TCPV, L2, 16, 0xff, 0x88, L2, 17, 0xff, 0xa8, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	{ "arp", V4TCP, L2, 12, 0xff, 0x08, L2, 13, 0xff, 0x06, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	{ "v4 MF", V4TCP, L3, 6, 0x20, 0x20, NOMUT2, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	{ "v4 frag offset", V4TCP, L3, 7, 0xff, 0x01, NOMUT2, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	{ "v4 frag offset high", V4UDP, L3, 6, 0x1f, 0x10, NOMUT2, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	{ "v4 icmp", V4TCP, L3, 9, 0xff, 1, NOMUT2, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	{ "v4 sctp", V4UDP, L3, 9, 0xff, 132, NOMUT2, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	{ "v6 hop-by-hop", V6TCP, L3, 6, 0xff, 0, NOMUT2, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	{ "v6 routing", V6TCP, L3, 6, 0xff, 43, NOMUT2, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	{ "v6 fragment", V6UDP, L3, 6, 0xff, 44, NOMUT2, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	{ "v6 dstopts", V6UDP, L3, 6, 0xff, 60, NOMUT2, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	{ "v6 icmpv6", V6TCP, L3, 6, 0xff, 58, NOMUT2, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	{ "v6 no next", V6TCP, L3, 6, 0xff, 59, NOMUT2, -EPROTONOSUPPORT, -EPROTONOSUPPORT },
	/* malformed */
	{ "v4 version 6", V4TCP, L3, 0, 0xf0, 0x60, NOMUT2, -EBADMSG, -EBADMSG },
	{ "v4 ihl 4", V4TCP, L3, 0, 0x0f, 0x04, NOMUT2, -EBADMSG, -EBADMSG },
	{ "v4 ihl 0", V4UDP, L3, 0, 0x0f, 0x00, NOMUT2, -EBADMSG, -EBADMSG },
	{ "v4 tot_len < ihl", V4TCP, L3, 2, 0xff, 0, L3, 3, 0xff, 19, -EBADMSG, -EBADMSG },
	{ "v4 tot_len < ip+tcp", V4TCP, L3, 2, 0xff, 0, L3, 3, 0xff, 20 + 31, -EBADMSG, -EBADMSG },
	{ "v4 tot_len < ip+udp", V4UDP, L3, 2, 0xff, 0, L3, 3, 0xff, 27, -EBADMSG, -EBADMSG },
	{ "v6 version 4", V6TCP, L3, 0, 0xf0, 0x40, NOMUT2, -EBADMSG, -EBADMSG },
	{ "v6 plen < tcp", V6TCP, L3, 4, 0xff, 0, L3, 5, 0xff, 19, -EBADMSG, -EBADMSG },
	{ "v6 plen < udp", V6UDP, L3, 4, 0xff, 0, L3, 5, 0xff, 7, -EBADMSG, -EBADMSG },
	{ "tcp doff 4", V4TCPV, L4, 12, 0xf0, 0x40, NOMUT2, -EBADMSG, -EBADMSG },
	{ "tcp doff 0", V6TCP, L4, 12, 0xf0, 0x00, NOMUT2, -EBADMSG, -EBADMSG },
	{ "tcp option len 0", V4TCP, L4, 22, 0xff, 0x08, L4, 23, 0xff, 0, -EBADMSG, -EBADMSG },
	{ "tcp option len 1", V4TCP, L4, 23, 0xff, 1, NOMUT2, -EBADMSG, -EBADMSG },
	{ "tcp option past area", V4TCP, L4, 23, 0xff, 11, NOMUT2, -EBADMSG, -EBADMSG },
	{ "udp len 7", V4UDP, L4, 4, 0xff, 0, L4, 5, 0xff, 7, -EBADMSG, -EBADMSG },
	/* accepted by the template parser, refused by the packet parser */
	{ "v4 tot_len short of frame", V4TCP, L3, 3, 0xff, 0xf0, NOMUT2, 0, -EBADMSG },
	{ "v4 tot_len past frame", V4TCP, L3, 2, 0xff, 0x10, NOMUT2, 0, -EBADMSG },
	{ "v6 plen past frame", V6TCP, L3, 4, 0xff, 0x10, NOMUT2, 0, -EBADMSG },
	{ "v6 plen 65535", V6UDP, L3, 4, 0xff, 0xff, L3, 5, 0xff, 0xff, 0, -EMSGSIZE },
	{ "udp len != ip payload", V4UDP, L4, 5, 0xff, 9, NOMUT2, 0, -EBADMSG },
	{ "udp6 len != ip payload", V6UDP, L4, 4, 0xff, 1, NOMUT2, 0, -EBADMSG },
	/* accepted by both: flags are not judged, DF and reserved bits ignored */
	{ "tcp syn", V4TCP, L4, 13, 0xff, 0x02, NOMUT2, 0, 0 },
	{ "v4 no DF", V4TCP, L3, 6, 0x40, 0, NOMUT2, 0, 0 },
};

static void apply(uint8_t *f, const struct built *b, uint8_t base, uint8_t off, uint8_t mask, uint8_t val)
{
	size_t o = base == L2 ? 0 : base == L3 ? b->l3_off : b->l4_off;

	f[o + off] = (uint8_t)((f[o + off] & ~mask) | val);
}

static void mutations_one(const struct mut *m)
{
	struct built b = mk(frame, &m->s);
	struct gso_tmpl t;
	size_t off = 7, plen = 7;
	int r;

	apply(frame, &b, m->base, m->off, m->mask, m->val);
	if (m->mask2)
		apply(frame, &b, m->base2, m->off2, m->mask2, m->val2);
	poison(&t);
	r = gso_tmpl__parse(&t, frame, b.len);
	cr_assert_eq(r, m->err, "%s: tmpl_parse %d, want %d", m->name, r, m->err);
	cr_assert(r == 0 || poisoned(&t), "%s: template written on error", m->name);
	poison(&t);
	r = gso_tmpl__parse_pkt(&t, frame, b.len, &off, &plen);
	cr_assert_eq(r, m->pkt_err, "%s: pkt_parse %d, want %d", m->name, r, m->pkt_err);
	if (r) {
		cr_assert(poisoned(&t), "%s: template written on error", m->name);
		cr_assert(off == 7 && plen == 7, "%s: outputs written on error", m->name);
	}
}

Test(tmpl, mutations)
{
	for (size_t i = 0; i < sizeof(muts) / sizeof(muts[0]); i++)
		mutations_one(&muts[i]);
}

Test(tmpl, null_args)
{
	struct gso_tmpl t;

	mk(frame, &good[0]);
	cr_assert_eq(gso_tmpl__parse(NULL, frame, 100), -EINVAL);
	cr_assert_eq(gso_tmpl__parse(&t, NULL, 100), -EINVAL);
	cr_assert_eq(gso_tmpl__parse_pkt(NULL, frame, 100, NULL, NULL), -EINVAL);
	cr_assert_eq(gso_tmpl__parse_pkt(&t, NULL, 100, NULL, NULL), -EINVAL);
}

/* Short frames padded to the Ethernet minimum are fine; longer slack is not. */
Test(tmpl, pkt_padding)
{
	struct spec s = { 0, 4, 17, 0, 0, 2 }; /* 14+20+8+2 = 44 bytes */
	struct built b = mk(frame, &s);
	struct gso_tmpl t;
	size_t plen = 0;

	memset(frame + b.len, 0, 64);
	cr_assert_eq(gso_tmpl__parse_pkt(&t, frame, 60, NULL, &plen), 0);
	cr_assert_eq(plen, 2);
	cr_assert_eq(gso_tmpl__parse_pkt(&t, frame, 61, NULL, &plen), -EBADMSG);

	s.vlan = 1;
	b = mk(frame, &s);
	memset(frame + b.len, 0, 64);
	cr_assert_eq(gso_tmpl__parse_pkt(&t, frame, 64, NULL, &plen), 0);
	cr_assert_eq(gso_tmpl__parse_pkt(&t, frame, 65, NULL, &plen), -EBADMSG);

	/* a full-size datagram with one trailing byte */
	s = (struct spec){ 0, 4, 6, 0, 0, 1000 };
	b = mk(frame, &s);
	cr_assert_eq(gso_tmpl__parse_pkt(&t, frame, b.len + 1, NULL, NULL), -EBADMSG);
	cr_assert_eq(gso_tmpl__parse_pkt(&t, frame, b.len, NULL, NULL), 0);
}

Test(tmpl, pkt_max_datagram)
{
	struct spec s = { 0, 4, 6, 0, 0, 0 };
	struct built b;
	struct gso_tmpl t;
	size_t plen;

	s.payload = 65535 - 40;
	b = mk(frame, &s);
	cr_assert_eq(gso_tmpl__parse_pkt(&t, frame, b.len, NULL, &plen), 0);
	cr_assert_eq(plen, 65495);

	s = (struct spec){ 0, 6, 17, 0, 0, 65535 - 48 };
	b = mk(frame, &s);
	cr_assert_eq(gso_tmpl__parse_pkt(&t, frame, b.len, NULL, &plen), 0);
	cr_assert_eq(plen, 65535 - 48);
	s.payload++;
	b = mk(frame, &s);
	cr_assert_eq(gso_tmpl__parse_pkt(&t, frame, b.len, NULL, &plen), -EMSGSIZE);
}

/* ---- build ---- */

static const uint8_t ts_opts[12] = { 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2 };
static const uint8_t ip_opts8[8] = { 1, 1, 1, 1, 1, 1, 1, 0 };

struct optbuf {
	uint8_t ip[40], tcp[40];
};

static void fields_for(struct gso_tmpl_fields *f, const struct spec *s, struct optbuf *ob)
{
	memset(f, 0, sizeof(*f));
	f->sz = sizeof(*f);
	memcpy(f->eth_dst, "\x02\x00\x00\x00\x00\x02", 6);
	memcpy(f->eth_src, "\x02\x00\x00\x00\x00\x01", 6);
	f->has_vlan = s->vlan;
	f->vlan_tci = s->vlan ? 0x2005 : 0;
	f->l3 = s->l3;
	f->l4 = s->l4;
	f->tos = 0x02;
	if (s->l3 == 4) {
		memcpy(f->saddr, "\x0a\x00\x00\x01", 4);
		memcpy(f->daddr, "\x0a\x00\x00\x02", 4);
		f->df = true;
		f->ip_id = 0x1234;
		memset(ob->ip, 1, 40);
		if (s->ip_opts)
			ob->ip[s->ip_opts - 1] = 0;
		f->ip_opts = s->ip_opts == 8 ? ip_opts8 : ob->ip;
		f->ip_opts_len = s->ip_opts;
	} else {
		for (int i = 0; i < 32; i++)
			(i < 16 ? f->saddr : f->daddr)[i % 16] = (uint8_t)(i < 16 ? 0xfd : 0xfe) ^ (uint8_t)i;
		f->tos = 0x00;
		f->flow_label = 0x12345;
	}
	f->sport = 40000;
	f->dport = 5001;
	if (s->l4 == 6) {
		f->seq = 0x11223344;
		f->ack = 0x55667788;
		f->tcp_flags = GSO_TCP_PSH | GSO_TCP_ACK;
		f->window = 512;
		memset(ob->tcp, 1, 40);
		f->tcp_opts = s->tcp_opts == 12 ? ts_opts : ob->tcp;
		f->tcp_opts_len = s->tcp_opts;
	}
}

/* Built templates equal what the parser makes of the same bytes from mk(). */
Test(tmpl, build_matches_parse)
{
	for (size_t i = 0; i < N_GOOD; i++) {
		struct spec s = good[i];
		struct gso_tmpl_fields f;
		struct gso_tmpl a, p;
		struct optbuf ob;

		s.payload = 0;
		fields_for(&f, &s, &ob);
		poison(&a);
		cr_assert_eq(gso_tmpl__build(&a, &f), 0, "case %zu", i);
		struct built b = mk(frame, &s);
		cr_assert_eq(a.hdr_len, b.hdr_len, "case %zu", i);
		/* mk() puts NOPs where build copies caller options; same bytes */
		cr_assert_arr_eq(a.hdr, frame, b.hdr_len, "case %zu: bytes differ", i);
		cr_assert_eq(gso_tmpl__parse(&p, a.hdr, a.hdr_len), 0, "case %zu", i);
		cr_assert_arr_eq(&p, &a, sizeof(p), "case %zu: parse(build) != build", i);
	}
}

/* The table holds names and indices, not pointers, so it can move into a
 * Criterion ParameterizedTest (a fresh process image) unchanged. */
enum bad_kind { M_L3, M_L3Z, M_L4, M_IPOPT3, M_IPOPT44, M_IPOPTNULL, M_IPOPTBAD, M_TCPOPT6, M_TCPOPT44, M_TCPOPTBAD, M_SYN, M_RST, M_URG, M_FLOW, M_FLOW4, M_DF6, M_ID6, M_OPTS6, M_UDPSEQ, M_UDPFLAGS, M_UDPOPTS, M_TCI, M_SZ0, M_SZ_SMALL };

struct bad_field {
	char name[32];
	enum bad_kind kind;
	struct spec s;
};

static const uint8_t bad_opt[4] = { 8, 0, 0, 0 };
static const uint8_t tcp_opts44[44] = { 1 };

static void bad_apply(struct gso_tmpl_fields *f, enum bad_kind k)
{
	switch (k) {
	case M_L3: f->l3 = 5; break;
	case M_L3Z: f->l3 = 0; break;
	case M_L4: f->l4 = 1; break;
	case M_IPOPT3: f->ip_opts_len = 3; break;
	case M_IPOPT44: f->ip_opts = tcp_opts44; f->ip_opts_len = 44; break;
	case M_IPOPTNULL: f->ip_opts = NULL; f->ip_opts_len = 4; break;
	case M_IPOPTBAD: f->ip_opts = bad_opt; f->ip_opts_len = 4; break;
	case M_TCPOPT6: f->tcp_opts = ts_opts; f->tcp_opts_len = 6; break;
	case M_TCPOPT44: f->tcp_opts = tcp_opts44; f->tcp_opts_len = 44; break;
	case M_TCPOPTBAD: f->tcp_opts = bad_opt; f->tcp_opts_len = 4; break;
	case M_SYN: f->tcp_flags |= GSO_TCP_SYN; break;
	case M_RST: f->tcp_flags |= GSO_TCP_RST; break;
	case M_URG: f->tcp_flags |= GSO_TCP_URG; break;
	case M_FLOW: f->flow_label = 0x100000; break;
	case M_FLOW4: f->flow_label = 1; break;
	case M_DF6: f->df = true; break;
	case M_ID6: f->ip_id = 1; break;
	case M_OPTS6: f->ip_opts = ip_opts8; f->ip_opts_len = 8; break;
	case M_UDPSEQ: f->seq = 1; break;
	case M_UDPFLAGS: f->tcp_flags = GSO_TCP_ACK; break;
	case M_UDPOPTS: f->tcp_opts = ts_opts; f->tcp_opts_len = 12; break;
	case M_TCI: f->has_vlan = false; f->vlan_tci = 5; break;
	case M_SZ0: f->sz = 0; break;
	case M_SZ_SMALL: f->sz = 4; break;
	}
}

static const struct bad_field bad_fields[] = {
	{ "l3 5", M_L3, V4TCP }, { "l3 0", M_L3Z, V4TCP }, { "l4 icmp", M_L4, V4TCP },
	{ "ip opts 3", M_IPOPT3, V4TCP }, { "ip opts 44", M_IPOPT44, V4TCP },
	{ "ip opts NULL", M_IPOPTNULL, V4TCP }, { "ip opt malformed", M_IPOPTBAD, V4TCP },
	{ "tcp opts 6", M_TCPOPT6, V4TCP }, { "tcp opts 44", M_TCPOPT44, V6TCP },
	{ "tcp opt malformed", M_TCPOPTBAD, V6TCP },
	{ "syn", M_SYN, V4TCP }, { "rst", M_RST, V6TCP }, { "urg", M_URG, V4TCP },
	{ "flow label 21 bits", M_FLOW, V6TCP }, { "flow label on v4", M_FLOW4, V4TCP },
	{ "df on v6", M_DF6, V6TCP }, { "ip id on v6", M_ID6, V6UDP }, { "ip opts on v6", M_OPTS6, V6TCP },
	{ "seq on udp", M_UDPSEQ, V4UDP }, { "tcp flags on udp", M_UDPFLAGS, V6UDP },
	{ "tcp opts on udp", M_UDPOPTS, V4UDP }, { "tci without vlan", M_TCI, V4TCP },
	{ "sz 0", M_SZ0, V4TCP }, { "sz 4", M_SZ_SMALL, V4TCP },
};

static void build_rejects_one(const struct bad_field *c)
{
	struct gso_tmpl_fields f;
	struct gso_tmpl t;
	struct optbuf ob;

	fields_for(&f, &c->s, &ob);
	bad_apply(&f, c->kind);
	poison(&t);
	cr_assert_eq(gso_tmpl__build(&t, &f), -EINVAL, "%s", c->name);
	cr_assert(poisoned(&t), "%s: template written", c->name);
}

Test(tmpl, build_rejects)
{
	for (size_t i = 0; i < sizeof(bad_fields) / sizeof(bad_fields[0]); i++)
		build_rejects_one(&bad_fields[i]);
}

/* An older caller's shorter struct works; unknown non-zero tail is refused. */
Test(tmpl, build_opts_size)
{
	struct {
		struct gso_tmpl_fields f;
		uint8_t tail[8];
	} big;
	struct gso_tmpl t;
	struct optbuf ob;
	struct spec s = V4UDP;

	s.payload = 0;
	fields_for(&big.f, &s, &ob);
	memset(big.tail, 0, sizeof(big.tail));
	big.f.sz = sizeof(big);
	cr_assert_eq(gso_tmpl__build(&t, &big.f), 0);
	big.tail[3] = 1;
	cr_assert_eq(gso_tmpl__build(&t, &big.f), -EINVAL);
	cr_assert_eq(gso_tmpl__build(NULL, &big.f), -EINVAL);
	cr_assert_eq(gso_tmpl__build(&t, NULL), -EINVAL);

	/* sz stopping before l3: l3 reads as 0, which is not a valid value */
	fields_for(&big.f, &s, &ob);
	big.f.sz = offsetof(struct gso_tmpl_fields, l3);
	cr_assert_eq(gso_tmpl__build(&t, &big.f), -EINVAL);
	/* sz stopping before tcp options: defaults for the rest */
	s = (struct spec)V4TCP;
	fields_for(&big.f, &s, &ob);
	big.f.sz = offsetof(struct gso_tmpl_fields, tcp_opts);
	cr_assert_eq(gso_tmpl__build(&t, &big.f), 0);
	cr_assert_eq(t.l4_len, 20);
}

Test(tmpl, build_defaults)
{
	struct gso_tmpl_fields f = { .sz = sizeof(f), .l3 = GSO_L3_IPV6, .l4 = GSO_L4_UDP };
	struct gso_tmpl t;
	bool df = true;

	cr_assert_eq(gso_tmpl__build(&t, &f), 0);
	cr_assert_eq(t.hdr[t.l3_off + 7], 64, "default hop limit");
	cr_assert_eq(t.hdr[t.l3_off + 5], 8, "payload length covers the UDP header");
	cr_assert_eq(t.hdr[t.l4_off + 5], 8, "UDP length");
	f.l3 = GSO_L3_IPV4;
	f.ttl = 7;
	cr_assert_eq(gso_tmpl__build(&t, &f), 0);
	cr_assert_eq(t.hdr[t.l3_off + 8], 7);
	cr_assert_eq(t.hdr[t.l3_off + 3], 28, "tot_len header-only");
	cr_assert_eq(gso_tmpl__df(&t, &df), 0);
	cr_assert_not(df);
	cr_assert_eq(t.hdr[t.l3_off + 10] | t.hdr[t.l3_off + 11], 0, "IP checksum left 0");
}

/* ---- accessors ---- */

/* The getters' value, for a field the template has (asserted). */
static uint32_t seq_of(const struct gso_tmpl *t)
{
	uint32_t v = 0;

	cr_assert_eq(gso_tmpl__tcp_seq(t, &v), 0);
	return v;
}

static uint8_t flags_of(const struct gso_tmpl *t)
{
	uint8_t v = 0;

	cr_assert_eq(gso_tmpl__tcp_flags(t, &v), 0);
	return v;
}

static uint16_t ip_id_of(const struct gso_tmpl *t)
{
	uint16_t v = 0;

	cr_assert_eq(gso_tmpl__ip_id(t, &v), 0);
	return v;
}

static bool df_of(const struct gso_tmpl *t)
{
	bool v = false;

	cr_assert_eq(gso_tmpl__df(t, &v), 0);
	return v;
}

Test(tmpl, accessors_tcp)
{
	struct spec s = { 1, 4, 6, 4, 12, 0 };
	struct built b = mk(frame, &s);
	struct gso_tmpl t, before;

	cr_assert_eq(gso_tmpl__parse(&t, frame, b.len), 0);
	cr_assert_eq(seq_of(&t), 0x11223344u);
	cr_assert_eq(flags_of(&t), GSO_TCP_PSH | GSO_TCP_ACK);
	cr_assert_eq(ip_id_of(&t), 0x1234);
	cr_assert(df_of(&t));

	cr_assert_eq(gso_tmpl__set_tcp_seq(&t, 0xfffffffeu), 0);
	cr_assert_eq(seq_of(&t), 0xfffffffeu);
	cr_assert_arr_eq(t.hdr + b.l4_off + 4, "\xff\xff\xff\xfe", 4);
	cr_assert_eq(gso_tmpl__set_tcp_ack(&t, 0x01020304u, 0xabcd), 0);
	cr_assert_arr_eq(t.hdr + b.l4_off + 8, "\x01\x02\x03\x04", 4);
	cr_assert_arr_eq(t.hdr + b.l4_off + 14, "\xab\xcd", 2);
	cr_assert_eq(gso_tmpl__set_tcp_flags(&t, GSO_TCP_ACK | GSO_TCP_FIN | GSO_TCP_CWR | GSO_TCP_ECE), 0);
	cr_assert_eq(flags_of(&t), 0xd1);
	cr_assert_eq(gso_tmpl__set_ip_id(&t, 0xbeef), 0);
	cr_assert_eq(ip_id_of(&t), 0xbeef);
	cr_assert_arr_eq(t.hdr + b.l3_off + 4, "\xbe\xef", 2);

	before = t;
	for (unsigned bad = GSO_TCP_SYN; bad <= GSO_TCP_URG; bad <<= 1) {
		if (!(bad & (GSO_TCP_SYN | GSO_TCP_RST | GSO_TCP_URG)))
			continue;
		cr_assert_eq(gso_tmpl__set_tcp_flags(&t, (uint8_t)(GSO_TCP_ACK | bad)), -EINVAL);
	}
	cr_assert_arr_eq(&t, &before, sizeof(t));
	cr_assert_eq(gso_tmpl__set_tcp_seq(NULL, 1), -EINVAL);
	cr_assert_eq(gso_tmpl__set_ip_id(NULL, 1), -EINVAL);
	uint32_t seq;
	bool df;

	cr_assert_eq(gso_tmpl__tcp_seq(NULL, &seq), -EINVAL);
	cr_assert_eq(gso_tmpl__tcp_seq(&t, NULL), -EINVAL);
	cr_assert_eq(gso_tmpl__df(NULL, &df), -EINVAL);
	cr_assert_eq(gso_tmpl__df(&t, NULL), -EINVAL);
}

Test(tmpl, accessors_wrong_protocol)
{
	struct spec s = { 0, 6, 17, 0, 0, 0 };
	struct built b = mk(frame, &s);
	struct gso_tmpl t, before;

	cr_assert_eq(gso_tmpl__parse(&t, frame, b.len), 0);
	before = t;
	/* A UDP/IPv6 template has neither TCP nor IPv4 fields: -ENOENT, *out untouched. */
	uint32_t seq = 7;
	uint8_t fl = 7;
	uint16_t id = 7;
	bool df = true;

	cr_assert_eq(gso_tmpl__tcp_seq(&t, &seq), -ENOENT);
	cr_assert_eq(gso_tmpl__tcp_flags(&t, &fl), -ENOENT);
	cr_assert_eq(gso_tmpl__ip_id(&t, &id), -ENOENT);
	cr_assert_eq(gso_tmpl__df(&t, &df), -ENOENT);
	cr_assert(seq == 7 && fl == 7 && id == 7 && df);
	cr_assert_eq(gso_tmpl__set_tcp_seq(&t, 1), -EINVAL);
	cr_assert_eq(gso_tmpl__set_tcp_ack(&t, 1, 1), -EINVAL);
	cr_assert_eq(gso_tmpl__set_tcp_flags(&t, GSO_TCP_ACK), -EINVAL);
	cr_assert_eq(gso_tmpl__set_ip_id(&t, 1), -EINVAL);
	cr_assert_arr_eq(&t, &before, sizeof(t));
}
