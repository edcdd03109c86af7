/*
 * TCP as a Linux peer sees it, in virtual time: listeners (passive open,
 * the half-open table, SYN cookies, the accept queue), the handshake's
 * options both ways, and the receive side of every stream (ACK policy,
 * SACK, the window, FIN and RST in each state, TIME_WAIT).
 *
 * The fake device records every segment the engine hands it, whole: the
 * template's headers parsed (seq, ack, flags, window, every option) and
 * the payload's length and first bytes.  The peer is scripted: each
 * segment it sends is a frame with options, payload and right checksums
 * (IPv4 or IPv6), given to the engine as its receive path would.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gso/csum.h>
#include <gso/engine.h>
#include <gso/gso.h>
#include "dev/dev_internal.h"
#include "engine/engine_internal.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define MAX_REC 20000
#define PEEK 16

/* ---- the fake device: every segment, parsed ---- */

struct frec {
	uint64_t t;
	uint8_t l3;
	uint16_t sport, dport;
	uint32_t seq, ack, len, mss_seg;
	uint8_t flags;
	uint16_t win;
	bool has_mss, sack_perm, has_ts, has_ws;
	uint16_t mss;
	uint8_t ws;
	uint32_t tsval, tsecr;
	unsigned nsack;
	uint32_t sack[4][2];
	uint8_t data[PEEK];
};

struct fk {
	struct gso_dev dev;
	uint32_t mtu;
	unsigned n;
	struct frec *r;
	struct dev_mem mem;
};

static uint64_t vnow;

static uint64_t vclock(void *ctx)
{
	(void)ctx;
	return vnow;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void k_caps(const struct gso_dev *d, struct gso_dev_caps *c)
{
	c->mtu = ((const struct fk *)d)->mtu;
	c->max_frame = c->mtu + 14;
	c->max_segs = 4096;
	c->max_frags = 1;
}

static int k_plan(struct gso_dev *d, const struct gso_tx *tx, struct gso_tx_plan *p)
{
	(void)d;
	memset(p, 0, sizeof(*p));
	p->frames = p->descs = tx->len ? (tx->len + tx->mss - 1) / tx->mss : 1;
	return 0;
}

static void parse_opts(struct frec *r, const uint8_t *o, unsigned n)
{
	for (unsigned i = 0; i < n;) {
		uint8_t kind = o[i], len;

		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		cr_assert_lt(i + 1, n, "option %u cut", kind);
		len = o[i + 1];
		cr_assert(len >= 2 && i + len <= n, "option %u length %u", kind, len);
		switch (kind) {
		case 2:
			r->has_mss = true;
			r->mss = be16(o + i + 2);
			break;
		case 3:
			r->has_ws = true;
			r->ws = o[i + 2];
			break;
		case 4:
			r->sack_perm = true;
			break;
		case 5:
			r->nsack = (len - 2u) / 8;
			for (unsigned k = 0; k < r->nsack && k < 4; k++) {
				r->sack[k][0] = be32(o + i + 2 + 8 * k);
				r->sack[k][1] = be32(o + i + 6 + 8 * k);
			}
			break;
		case 8:
			r->has_ts = true;
			r->tsval = be32(o + i + 2);
			r->tsecr = be32(o + i + 6);
			break;
		default:
			cr_assert_fail("unknown option %u", kind);
		}
		i += len;
	}
}

static int k_submit(struct gso_dev *d, const struct gso_tx *tx, unsigned n)
{
	struct fk *f = (struct fk *)d;

	for (unsigned k = 0; k < n; k++) {
		const struct gso_tmpl *t = tx[k].tmpl;
		const uint8_t *l4 = t->hdr + t->l4_off, *pl;
		struct frec *r;

		cr_assert_lt(f->n, MAX_REC);
		cr_assert_eq(t->l4, GSO_L4_TCP);
		r = &f->r[f->n++];
		memset(r, 0, sizeof(*r));
		r->t = vnow;
		r->l3 = t->l3;
		r->sport = be16(l4);
		r->dport = be16(l4 + 2);
		r->seq = be32(l4 + 4);
		r->ack = be32(l4 + 8);
		r->flags = l4[13];
		r->win = be16(l4 + 14);
		parse_opts(r, l4 + 20, (l4[12] >> 4) * 4u - 20);
		r->len = tx[k].len;
		r->mss_seg = tx[k].mss;
		pl = tx[k].buf ? tx[k].buf->data + tx[k].off : tx[k].data;
		if (pl)
			memcpy(r->data, pl, r->len < PEEK ? r->len : PEEK);
	}
	return (int)n;
}

static int k_kick(struct gso_dev *d)
{
	(void)d;
	return 0;
}

static int k_reap(struct gso_dev *d, unsigned max)
{
	(void)d, (void)max;
	return 0;
}

static void k_stats(struct gso_dev *d, struct gso_dev_stats *st)
{
	(void)d, (void)st;
}

static void k_close(struct gso_dev *d)
{
	(void)d;
}

static void k_destroy(struct gso_dev *d)
{
	struct fk *f = (struct fk *)d;

	gsoi_ua_fini(&f->mem.ua);
	free(f->mem.base);
	free(f->r);
	free(f);
}

static uint32_t k_inflight(const struct gso_dev *d)
{
	(void)d;
	return 0;
}

static const struct gso_dev_ops k_ops = {
	.kind = "fake-tcp", .caps = k_caps, .plan = k_plan, .submit = k_submit, .kick = k_kick, .reap = k_reap,
	.stats = k_stats, .close = k_close, .destroy = k_destroy, .inflight = k_inflight,
};

/* ---- events ---- */

#define MAX_EV 20000

static struct {
	unsigned n;
	struct gso_engine_event ev[MAX_EV];
} *evs;

static void on_event(void *ctx, const struct gso_engine_event *ev)
{
	(void)ctx;
	cr_assert_lt(evs->n, MAX_EV);
	evs->ev[evs->n++] = *ev;
}

static unsigned nev(uint32_t type, unsigned from)
{
	unsigned n = 0;

	for (unsigned i = from; i < evs->n; i++)
		n += evs->ev[i].type == type;
	return n;
}

static uint32_t peer_isn;

static void setup(void)
{
	peer_isn = 0;
	evs = calloc(1, sizeof(*evs));
	cr_assert_not_null(evs);
	vnow = 1 * SEC;
}

static void teardown(void)
{
	free(evs);
}

static struct fk *fk_new(void)
{
	struct fk *f = calloc(1, sizeof(*f));

	cr_assert_not_null(f);
	f->dev.ops = &k_ops;
	snprintf(f->dev.name, sizeof(f->dev.name), "fk");
	f->mtu = 1500;
	f->r = calloc(MAX_REC, sizeof(*f->r));
	cr_assert_not_null(f->r);
	f->mem.chunk_size = 2048;
	f->mem.len = 1024ull * f->mem.chunk_size;
	f->mem.base = calloc(1, f->mem.len);
	cr_assert_not_null(f->mem.base);
	cr_assert_eq(gsoi_ua_init(&f->mem.ua, 1024, 1024), 0);
	f->dev.mem = &f->mem;
	return f;
}

static struct gso_engine *engine(struct fk *f)
{
	GSO_OPTS(gso_engine_opts, o, .max_flows = 4096, .on_event = on_event, .clock = vclock,
		 .flags = GSO_ENGINE_F_NO_LINK_MONITOR);
	struct gso_engine *e = NULL;

	cr_assert_eq(gso_engine__create(&e, &f->dev, &o), 0);
	return e;
}

static void run_until(struct gso_engine *e, uint64_t until)
{
	for (int i = 0; i < 1000000; i++) {
		uint64_t next;

		if (gso_engine__poll(e, &next))
			return;
		if (next == GSO_EVLOOP_FOREVER || next > until) {
			vnow = until;
			return;
		}
		vnow = next > vnow ? next : vnow + 1000;
	}
	cr_assert_fail("the engine never went quiet");
}

/* ---- the peer ---- */

static const uint8_t our4[4] = { 10, 0, 0, 1 }, peer4[4] = { 10, 0, 0, 2 };
static const uint8_t our6[16] = { 0xfd, [15] = 1 }, peer6[16] = { 0xfd, [15] = 2 };
#define OUR_PORT 8080

struct pseg {
	uint8_t l3;
	uint16_t sport, dport;    /* the peer's port, ours */
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win;
	uint16_t mss;             /* 0: no MSS option */
	bool has_ws, sackperm, ts;
	uint8_t ws;
	uint32_t tsval, tsecr;
	unsigned nsack;
	uint32_t sack[4][2];
	const uint8_t *data;
	uint32_t len;
};

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* One frame from the peer, with its options in Linux's layout and right checksums, into the engine. */
static void inject(struct gso_engine *h, const struct pseg *p)
{
	static uint8_t fr[14 + 40 + 60 + 9000];
	uint8_t opt[40], *ip = fr + 14, *t;
	unsigned no = 0, iph = p->l3 == GSO_L3_IPV6 ? 40 : 20, tl;
	uint16_t c;

	memset(fr, 0, 14 + 40 + 60);
	if (p->mss) {
		opt[no++] = 2, opt[no++] = 4;
		put16(opt + no, p->mss);
		no += 2;
	}
	if (p->sackperm)
		opt[no++] = 1, opt[no++] = 1, opt[no++] = 4, opt[no++] = 2;
	if (p->ts) {
		opt[no++] = 1, opt[no++] = 1, opt[no++] = 8, opt[no++] = 10;
		put32(opt + no, p->tsval);
		put32(opt + no + 4, p->tsecr);
		no += 8;
	}
	if (p->has_ws)
		opt[no++] = 1, opt[no++] = 3, opt[no++] = 3, opt[no++] = p->ws;
	if (p->nsack) {
		opt[no++] = 1, opt[no++] = 1, opt[no++] = 5, opt[no++] = (uint8_t)(2 + 8 * p->nsack);
		for (unsigned i = 0; i < p->nsack; i++, no += 8) {
			put32(opt + no, p->sack[i][0]);
			put32(opt + no + 4, p->sack[i][1]);
		}
	}
	cr_assert_leq(no, 40);
	cr_assert_eq(no % 4, 0);
	tl = 20 + no + p->len;
	memcpy(fr, "\x02\0\0\0\0\1", 6);
	memcpy(fr + 6, "\x02\0\0\0\0\2", 6);
	t = ip + iph;
	if (p->l3 == GSO_L3_IPV6) {
		fr[12] = 0x86, fr[13] = 0xdd;
		ip[0] = 0x60;
		put16(ip + 4, (uint16_t)tl);
		ip[6] = 6;
		ip[7] = 64;
		memcpy(ip + 8, peer6, 16);
		memcpy(ip + 24, our6, 16);
	} else {
		fr[12] = 0x08;
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(iph + tl));
		ip[6] = 0x40;
		ip[8] = 64;
		ip[9] = 6;
		memcpy(ip + 12, peer4, 4);
		memcpy(ip + 16, our4, 4);
		c = gso_csum_finish(gso_csum_partial(ip, 20, 0));
		memcpy(ip + 10, &c, 2);
	}
	put16(t, p->sport);
	put16(t + 2, p->dport);
	put32(t + 4, p->seq);
	put32(t + 8, p->ack);
	t[12] = (uint8_t)((20 + no) / 4 << 4);
	t[13] = p->flags;
	put16(t + 14, p->win);
	memcpy(t + 20, opt, no);
	if (p->len)
		memcpy(t + 20 + no, p->data, p->len);
	c = gso_csum_finish(gso_csum_partial(t, tl,
					     p->l3 == GSO_L3_IPV6 ? gso_csum_pseudo6(ip + 8, ip + 24, 6, tl)
								 : gso_csum_pseudo4(ip + 12, ip + 16, 6, tl)));
	memcpy(t + 16, &c, 2);
	gsoi_engine_input_frame(gsoi_engine_of(h), NULL, fr, 14 + iph + tl);
}

/* The last segment sent to peer port `pport` from record `from` on, NULL if none. */
static const struct frec *last_to(const struct fk *f, uint16_t pport, unsigned from)
{
	for (unsigned i = f->n; i-- > from;)
		if (f->r[i].dport == pport)
			return &f->r[i];
	return NULL;
}

/* Segments to `pport` from `from` on with all of `flags` set (0: any), and without `not`. */
static unsigned count_to(const struct fk *f, uint16_t pport, unsigned from, uint8_t flags, uint8_t not)
{
	unsigned n = 0;

	for (unsigned i = from; i < f->n; i++)
		n += f->r[i].dport == pport && (f->r[i].flags & flags) == flags && !(f->r[i].flags & not);
	return n;
}

/* Pure ACKs (no data, no SYN/FIN/RST) to `pport` from `from` on. */
static unsigned pure_acks(const struct fk *f, uint16_t pport, unsigned from)
{
	unsigned n = 0;

	for (unsigned i = from; i < f->n; i++)
		n += f->r[i].dport == pport && f->r[i].flags == GSO_TCP_ACK && !f->r[i].len;
	return n;
}

static struct gso_stream_info sinfo(struct gso_stream *s)
{
	struct gso_stream_info si = { .sz = sizeof(si) };

	cr_assert_eq(gso_stream__info(s, &si), 0);
	return si;
}

static struct gso_listener_info linfo(struct gso_listener *l)
{
	struct gso_listener_info li = { .sz = sizeof(li) };

	cr_assert_eq(gso_listener__info(l, &li), 0);
	return li;
}

static struct gso_listener *listen_on(struct gso_engine *e, uint8_t l3, uint32_t flags, uint32_t backlog,
				      uint32_t syn_backlog, uint32_t rcvbuf, uint32_t mss)
{
	GSO_OPTS(gso_listen_opts, o, .l3 = l3, .port = OUR_PORT, .flags = flags, .backlog = backlog,
		 .syn_backlog = syn_backlog, .rcvbuf = rcvbuf, .mss = mss, .ctx = (void *)0x5157);
	struct gso_listener *l = NULL;

	memcpy(o.addr, l3 == GSO_L3_IPV6 ? our6 : our4, l3 == GSO_L3_IPV6 ? 16 : 4);
	cr_assert_eq(gso_listener__open(&l, e, &o), 0);
	return l;
}

/* A client's SYN with Linux's options (MSS 1460, SACK-permitted, timestamps, window scale 7). */
static struct pseg client_syn(uint8_t l3, uint16_t pport, uint32_t isn)
{
	return (struct pseg){ .l3 = l3, .sport = pport, .dport = OUR_PORT, .seq = isn, .flags = GSO_TCP_SYN,
			      .win = 64240, .mss = 1460, .sackperm = true, .ts = true, .tsval = 70000,
			      .has_ws = true, .ws = 7 };
}

/* ---- a connection and its peer, accepted or connected ---- */

struct conn {
	struct fk *f;
	struct gso_engine *e;
	struct gso_listener *l;
	struct gso_stream *s;
	uint8_t l3;
	bool passive;
	uint16_t pport;
	uint32_t irs;    /* its ISN + 1: our stream's byte 0 */
	uint32_t oseq;   /* our next sequence number (what the peer acknowledges) */
	uint32_t pts;    /* the peer's clock */
	uint8_t ows;     /* our window scale */
};

/* A segment of the peer on connection c (ACK of everything we sent, timestamps, window 512 << 7). */
static struct pseg cseg(const struct conn *c, uint32_t seq, uint8_t flags, const uint8_t *data, uint32_t len)
{
	const struct frec *last = last_to(c->f, c->pport, 0);

	return (struct pseg){ .l3 = c->l3, .sport = c->pport, .dport = OUR_PORT, .seq = seq, .ack = c->oseq,
			      .flags = flags, .win = 512, .ts = true, .tsval = c->pts,
			      .tsecr = last ? last->tsval : 0, .data = data, .len = len };
}

static uint8_t pattern[1 << 20];

/* The peer sends bytes [off, off + len) of the pattern (offsets from the stream's first byte). */
static void pdata(struct conn *c, uint32_t off, uint32_t len, uint8_t flags)
{
	struct pseg g = cseg(c, c->irs + off, GSO_TCP_ACK | flags, pattern + off, len);

	c->pts++;
	inject(c->e, &g);
}

static void pctl(struct conn *c, uint32_t seq, uint8_t flags)
{
	struct pseg g = cseg(c, seq, flags, NULL, 0);

	c->pts++;
	inject(c->e, &g);
}

/* The peer's ISN for conn_open (0: a fixed one of its own): peer_isn, set before. */

/*
 * An established stream: accepted from a listener (passive) or connected
 * (active), over l3, with a receive buffer of rcvbuf bytes; the peer
 * offered everything (MSS 1460, SACK, timestamps, window scale 7).
 */
static struct conn conn_open(bool passive, uint8_t l3, uint32_t rcvbuf)
{
	struct conn c = { .passive = passive, .l3 = l3, .pport = 40000, .pts = 500000 };
	const struct frec *r;

	c.f = fk_new();
	c.e = engine(c.f);
	if (passive) {
		struct pseg g = client_syn(l3, c.pport, peer_isn ? peer_isn : 9000);

		c.l = listen_on(c.e, l3, 0, 0, 0, rcvbuf, 0);
		inject(c.e, &g);
		r = last_to(c.f, c.pport, 0);
		cr_assert_not_null(r);
		cr_assert_eq(r->flags, GSO_TCP_SYN | GSO_TCP_ACK);
		c.irs = (peer_isn ? peer_isn : 9000) + 1;
		c.oseq = r->seq + 1;
		c.ows = r->ws;
		g = cseg(&c, c.irs, GSO_TCP_ACK, NULL, 0);
		inject(c.e, &g);
		cr_assert_eq(gso_listener__accept(c.l, &c.s, NULL), 0);
	} else {
		GSO_OPTS(gso_route, rt, .l3 = l3, .mtu = 1500);
		GSO_OPTS(gso_stream_opts, o, .route = &rt, .sport = OUR_PORT, .dport = c.pport, .rcvbuf = rcvbuf);
		size_t al = l3 == GSO_L3_IPV6 ? 16 : 4;

		memcpy(rt.src, l3 == GSO_L3_IPV6 ? our6 : our4, al);
		memcpy(rt.dst, l3 == GSO_L3_IPV6 ? peer6 : peer4, al);
		memcpy(rt.nexthop, rt.dst, al);
		memcpy(rt.src_mac, "\x02\0\0\0\0\1", 6);
		memcpy(rt.dst_mac, "\x02\0\0\0\0\2", 6);
		cr_assert_eq(gso_stream__connect(&c.s, c.e, &o), 0);
		r = last_to(c.f, c.pport, 0);
		cr_assert_not_null(r);
		cr_assert_eq(r->flags, GSO_TCP_SYN);
		c.oseq = r->seq + 1;
		c.ows = r->ws;
		c.irs = (peer_isn ? peer_isn : 7000) + 1;
		struct pseg g = { .l3 = l3, .sport = c.pport, .dport = OUR_PORT, .seq = c.irs - 1, .ack = c.oseq,
				  .flags = GSO_TCP_SYN | GSO_TCP_ACK, .win = 65160, .mss = 1460, .sackperm = true,
				  .ts = true, .tsval = c.pts, .tsecr = r->tsval, .has_ws = true, .ws = 7 };
		inject(c.e, &g);
	}
	run_until(c.e, vnow + MS);
	cr_assert_eq(sinfo(c.s).state, GSO_STREAM_ESTABLISHED);
	cr_assert(sinfo(c.s).mss > 0, "sized");
	return c;
}

static void conn_close(struct conn *c)
{
	gso_stream__close(c->s);
	if (c->l)
		gso_listener__close(c->l);
	gso_engine__destroy(c->e);
}

/* Both kinds of stream each receive test runs on: accepted over IPv4, connected over IPv6, and the reverse. */
static const struct {
	bool passive;
	uint8_t l3;
} kinds[] = { { true, GSO_L3_IPV4 }, { false, GSO_L3_IPV6 }, { true, GSO_L3_IPV6 }, { false, GSO_L3_IPV4 } };
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))
#define KIND(k) kinds[k].passive ? "accepted" : "connected", kinds[k].l3 == GSO_L3_IPV6 ? "v6" : "v4"

static void fill_pattern(void)
{
	for (size_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (uint8_t)(i * 131 + (i >> 8));
}

/* =========================================================================== */
/* The handshake's options                                                     */
/* =========================================================================== */

TestSuite(tcp_hs, .init = setup, .fini = teardown, .timeout = 60);

/* Our SYN offers MSS, SACK-permitted, timestamps and the window scale that fits rcvbuf into 16 bits. */
Test(tcp_hs, active_syn_offers_all)
{
	static const struct {
		uint32_t rcvbuf;
		uint8_t ws;
	} cases[] = { { 0, 3 }, { 4096, 0 }, { 65535, 0 }, { 65536, 1 }, { 1u << 20, 5 }, { 64u << 20, 11 } };

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fk *f = fk_new();
		struct gso_engine *e = engine(f);
		GSO_OPTS(gso_route, rt, .l3 = GSO_L3_IPV4, .mtu = 1500);
		GSO_OPTS(gso_stream_opts, o, .route = &rt, .sport = OUR_PORT, .dport = 40000, .rcvbuf = cases[i].rcvbuf);
		struct gso_stream *s;

		memcpy(rt.src, our4, 4);
		memcpy(rt.dst, peer4, 4);
		memcpy(rt.nexthop, peer4, 4);
		cr_assert_eq(gso_stream__connect(&s, e, &o), 0);
		cr_assert_eq(f->n, 1);
		cr_assert_eq(f->r[0].flags, GSO_TCP_SYN);
		cr_assert(f->r[0].has_mss && f->r[0].mss == 1460, "mss %u", f->r[0].mss);
		cr_assert(f->r[0].sack_perm);
		cr_assert(f->r[0].has_ts && f->r[0].tsecr == 0);
		cr_assert(f->r[0].has_ws, "no window scale");
		cr_assert_eq(f->r[0].ws, cases[i].ws, "rcvbuf %u: ws %u, want %u", cases[i].rcvbuf, f->r[0].ws,
			     cases[i].ws);
		uint32_t rb = cases[i].rcvbuf ? cases[i].rcvbuf : GSO_STREAM_DEF_RCVBUF;
		cr_assert_eq(f->r[0].win, rb > 65535 ? 65535 : rb, "a SYN's window is unscaled");
		gso_stream__close(s);
		gso_engine__destroy(e);
	}
}

/* A SYN-ACK without window scale, SACK or timestamps turns them off: none on our segments. */
Test(tcp_hs, synack_without_options)
{
	struct fk *f = fk_new();
	struct gso_engine *e = engine(f);
	GSO_OPTS(gso_route, rt, .l3 = GSO_L3_IPV4, .mtu = 1500);
	GSO_OPTS(gso_stream_opts, o, .route = &rt, .sport = OUR_PORT, .dport = 40000, .rcvbuf = 1u << 20);
	struct gso_stream *s;
	struct gso_stream_info si;
	const struct frec *r;
	unsigned mark;

	memcpy(rt.src, our4, 4);
	memcpy(rt.dst, peer4, 4);
	memcpy(rt.nexthop, peer4, 4);
	cr_assert_eq(gso_stream__connect(&s, e, &o), 0);
	cr_assert_eq(f->r[0].ws, 5);
	struct pseg g = { .l3 = GSO_L3_IPV4, .sport = 40000, .dport = OUR_PORT, .seq = 100, .ack = f->r[0].seq + 1,
			  .flags = GSO_TCP_SYN | GSO_TCP_ACK, .win = 8000, .mss = 1000 };
	mark = f->n;
	inject(e, &g);
	run_until(e, vnow + MS);
	si = sinfo(s);
	cr_assert_eq(si.state, GSO_STREAM_ESTABLISHED);
	cr_assert_not(si.sack);
	cr_assert_not(si.timestamps);
	cr_assert_eq(si.rcv_wscale, 0, "no scaling either way");
	cr_assert_eq(si.mss, 1000, "the peer's MSS, no timestamp room");
	r = last_to(f, 40000, mark);
	cr_assert_not_null(r, "no handshake ACK");
	cr_assert_eq(r->flags, GSO_TCP_ACK);
	cr_assert_eq(r->ack, 101);
	cr_assert_not(r->has_ts, "timestamps not agreed, still sent");
	cr_assert_eq(r->win, 65535, "1 MiB unscaled: the largest field, %u", r->win);
	/* Data from the peer: acknowledged without SACK or timestamps, window unscaled. */
	fill_pattern();
	g = (struct pseg){ .l3 = GSO_L3_IPV4, .sport = 40000, .dport = OUR_PORT, .seq = 101, .ack = f->r[0].seq + 1,
			   .flags = GSO_TCP_ACK, .win = 8000, .data = pattern, .len = 500 };
	g.seq = 1101; /* out of order: a dup ACK, no SACK blocks */
	mark = f->n;
	inject(e, &g);
	r = last_to(f, 40000, mark);
	cr_assert_not_null(r);
	cr_assert_eq(r->ack, 101);
	cr_assert_eq(r->nsack, 0, "SACK blocks without SACK-permitted");
	cr_assert_not(r->has_ts);
	gso_stream__close(s);
	gso_engine__destroy(e);
}

/* With everything offered, the connected stream agrees on everything; its ACK echoes the peer's TSval. */
Test(tcp_hs, synack_with_options)
{
	for (unsigned k = 0; k < NKINDS; k++) {
		if (kinds[k].passive)
			continue;
		struct conn c = conn_open(false, kinds[k].l3, 0);
		struct gso_stream_info si = sinfo(c.s);
		const struct frec *r = last_to(c.f, c.pport, 0);

		cr_assert(si.sack && si.timestamps, "%s %s", KIND(k));
		cr_assert_eq(si.rcv_wscale, 3);
		cr_assert_eq(si.mss, (kinds[k].l3 == GSO_L3_IPV6 ? 1440u : 1460u) - 12);
		cr_assert_eq(r->flags, GSO_TCP_ACK, "the handshake ACK");
		cr_assert(r->has_ts && r->tsecr == c.pts, "TSecr %u, want %u", r->tsecr, c.pts);
		cr_assert_eq(r->win, GSO_STREAM_DEF_RCVBUF >> 3, "scaled window %u", r->win);
		conn_close(&c);
	}
}

/* The listener's SYN-ACK echoes only what the client offered, and the accepted stream agrees. */
Test(tcp_hs, listener_synack_echoes_offer)
{
	static const struct {
		bool ws, sack, ts;
		uint16_t mss;      /* the client's; 0: none (536) */
		uint32_t lflags, lmss, rcvbuf;
		uint8_t l3;
	} cases[] = {
		{ true, true, true, 1460, 0, 0, 0, GSO_L3_IPV4 },
		{ true, true, true, 1460, 0, 0, 1u << 20, GSO_L3_IPV6 },
		{ false, true, true, 1460, 0, 0, 0, GSO_L3_IPV4 },
		{ true, false, true, 1200, 0, 0, 0, GSO_L3_IPV4 },
		{ true, true, false, 1460, 0, 0, 0, GSO_L3_IPV6 },
		{ false, false, false, 0, 0, 0, 0, GSO_L3_IPV4 },
		{ true, true, true, 1460, GSO_STREAM_F_NO_SACK, 1000, 0, GSO_L3_IPV4 },
		{ true, true, true, 1460, GSO_STREAM_F_NO_TS, 0, 0, GSO_L3_IPV4 },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fk *f = fk_new();
		struct gso_engine *e = engine(f);
		struct gso_listener *l = listen_on(e, cases[i].l3, cases[i].lflags, 0, 0, cases[i].rcvbuf, cases[i].lmss);
		struct pseg g = client_syn(cases[i].l3, 41000, 5555);
		struct gso_stream *s;
		struct gso_stream_info si;
		const struct frec *r;
		uint32_t rb = cases[i].rcvbuf ? cases[i].rcvbuf : GSO_STREAM_DEF_RCVBUF;
		uint32_t dev_mss = cases[i].l3 == GSO_L3_IPV6 ? 1440 : 1460;
		bool sack = cases[i].sack && !(cases[i].lflags & GSO_STREAM_F_NO_SACK);
		bool ts = cases[i].ts && !(cases[i].lflags & GSO_STREAM_F_NO_TS);
		uint32_t our_mss = cases[i].lmss ? cases[i].lmss : dev_mss;
		uint32_t peer_mss = cases[i].mss ? cases[i].mss : 536;

		g.has_ws = cases[i].ws;
		g.sackperm = cases[i].sack;
		g.ts = cases[i].ts;
		g.mss = cases[i].mss;
		inject(e, &g);
		cr_assert_eq(f->n, 1, "case %u: one SYN-ACK", i);
		r = &f->r[0];
		cr_assert_eq(r->flags, GSO_TCP_SYN | GSO_TCP_ACK);
		cr_assert_eq(r->ack, 5556);
		cr_assert_eq(r->l3, cases[i].l3);
		cr_assert(r->has_mss && r->mss == our_mss, "case %u: MSS %u want %u", i, r->mss, our_mss);
		cr_assert_eq(r->has_ws, cases[i].ws, "case %u: window scale without the client's", i);
		if (r->has_ws)
			cr_assert_eq(r->ws, rb == GSO_STREAM_DEF_RCVBUF ? 3 : 5);
		cr_assert_eq(r->sack_perm, sack, "case %u: SACK-permitted", i);
		cr_assert_eq(r->has_ts, ts, "case %u: timestamps", i);
		if (ts)
			cr_assert_eq(r->tsecr, 70000, "TSecr = the client's TSval");
		cr_assert_eq(r->win, rb > 65535 ? 65535 : rb);
		/* The client's ACK: the stream waits for accept with what was agreed. */
		g = (struct pseg){ .l3 = cases[i].l3, .sport = 41000, .dport = OUR_PORT, .seq = 5556, .ack = r->seq + 1,
				   .flags = GSO_TCP_ACK, .win = 1000, .ts = cases[i].ts, .tsval = 70001,
				   .tsecr = r->tsval };
		inject(e, &g);
		cr_assert_eq(gso_listener__accept(l, &s, NULL), 0, "case %u", i);
		run_until(e, vnow + MS);
		si = sinfo(s);
		cr_assert_eq(si.state, GSO_STREAM_ESTABLISHED);
		cr_assert_eq(si.sack, sack, "case %u", i);
		cr_assert_eq(si.timestamps, ts, "case %u", i);
		uint32_t mss = our_mss < peer_mss ? our_mss : peer_mss;
		cr_assert_eq(si.mss, mss - (ts ? 12 : 0), "case %u: mss %u", i, si.mss);
		cr_assert_eq(si.rcv_wscale, cases[i].ws ? (rb == GSO_STREAM_DEF_RCVBUF ? 3u : 5u) : 0u, "case %u", i);
		cr_assert_eq(si.rcvbuf, rb);
		cr_assert_eq(nev(GSO_EV_STREAM_WRITABLE, 0), 1, "case %u: WRITABLE after the accept", i);
		/* The peer's window: shifted by its scale only when both sides scale. */
		g.tsval++;
		g.win = 100;
		inject(e, &g);
		si = sinfo(s);
		cr_assert_eq(si.max_wnd, cases[i].ws ? 100u << 7 : 100u, "case %u: peer window %u", i, si.max_wnd);
		gso_stream__close(s);
		gso_listener__close(l);
		gso_engine__destroy(e);
		evs->n = 0;
	}
}

/* =========================================================================== */
/* Listeners                                                                   */
/* =========================================================================== */

TestSuite(tcp_listen, .init = setup, .fini = teardown, .timeout = 60);

/* One client's full handshake: SYN, then its ACK of our SYN-ACK.  Returns our ISN. */
static uint32_t handshake(struct fk *f, struct gso_engine *e, uint8_t l3, uint16_t pport, uint32_t isn)
{
	struct pseg g = client_syn(l3, pport, isn);
	const struct frec *r;
	unsigned mark = f->n;

	inject(e, &g);
	r = last_to(f, pport, mark);
	cr_assert_not_null(r, "no SYN-ACK for %u", pport);
	cr_assert_eq(r->flags, GSO_TCP_SYN | GSO_TCP_ACK);
	g = (struct pseg){ .l3 = l3, .sport = pport, .dport = OUR_PORT, .seq = isn + 1, .ack = r->seq + 1,
			   .flags = GSO_TCP_ACK, .win = 502, .ts = true, .tsval = 70001, .tsecr = r->tsval };
	inject(e, &g);
	return r->seq;
}

/* READY once when the queue becomes non-empty; accept until -EAGAIN, oldest first. */
Test(tcp_listen, accept_queue_ready_once)
{
	struct fk *f = fk_new();
	struct gso_engine *e = engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV4, 0, 0, 0, 0, 0);
	struct gso_stream *s[3], *x;
	struct gso_listener_info li;

	cr_assert_eq(gso_listener__accept(l, &x, NULL), -EAGAIN);
	for (int i = 0; i < 3; i++)
		handshake(f, e, GSO_L3_IPV4, (uint16_t)(42000 + i), 100u * (uint32_t)i + 1);
	cr_assert_eq(nev(GSO_EV_LISTENER_READY, 0), 1, "READY once for three");
	for (unsigned i = 0; i < evs->n; i++)
		if (evs->ev[i].type == GSO_EV_LISTENER_READY) {
			cr_assert_eq(evs->ev[i].listener, l);
			cr_assert_eq(evs->ev[i].flow_ctx, (void *)0x5157);
		}
	li = linfo(l);
	cr_assert_eq(li.queued, 3);
	cr_assert_eq(li.half_open, 0);
	cr_assert_eq(li.syns, 3);
	cr_assert_eq(li.synacks, 3);
	for (int i = 0; i < 3; i++) {
		GSO_OPTS(gso_stream_opts, o, .ctx = (void *)(uintptr_t)(i + 1));
		cr_assert_eq(gso_listener__accept(l, &s[i], &o), 0);
	}
	cr_assert_eq(gso_listener__accept(l, &x, NULL), -EAGAIN);
	li = linfo(l);
	cr_assert_eq(li.accepted, 3);
	cr_assert_eq(li.queued, 0);
	run_until(e, vnow + MS);
	/* The oldest first: its segments go to port 42000. */
	unsigned mark = f->n;
	cr_assert_eq(gso_stream__write(s[0], pattern, 10), 10);
	run_until(e, vnow + MS);
	cr_assert_not_null(last_to(f, 42000, mark), "the first accepted is the first client");
	/* Empty again, then one more: READY again. */
	handshake(f, e, GSO_L3_IPV4, 42010, 77);
	cr_assert_eq(nev(GSO_EV_LISTENER_READY, 0), 2);
	for (int i = 0; i < 3; i++)
		gso_stream__close(s[i]);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* A full accept queue: the handshake's ACK is dropped and counted; the SYN-ACK again at 1 s; the re-ACK then opens it. */
Test(tcp_listen, accept_queue_overflow)
{
	struct fk *f = fk_new();
	struct gso_engine *e = engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV4, 0, 1, 0, 0, 0);
	struct gso_listener_info li;
	struct gso_stream *a, *b;
	uint64_t t0;
	uint32_t iss;
	unsigned mark;

	handshake(f, e, GSO_L3_IPV4, 43000, 1000);
	t0 = vnow;
	mark = f->n;
	iss = handshake(f, e, GSO_L3_IPV4, 43001, 2000);
	li = linfo(l);
	cr_assert_eq(li.overflows, 1);
	cr_assert_eq(li.queued, 1);
	cr_assert_eq(li.half_open, 1, "the second stays half-open");
	cr_assert_eq(count_to(f, 43001, mark, GSO_TCP_RST, 0), 0, "no RST for an overflow");
	cr_assert_eq(gso_listener__accept(l, &a, NULL), 0);
	mark = f->n;
	run_until(e, t0 + SEC - MS);
	cr_assert_eq(count_to(f, 43001, mark, GSO_TCP_SYN, 0), 0, "SYN-ACK again before 1 s");
	run_until(e, t0 + SEC + MS);
	cr_assert_eq(count_to(f, 43001, mark, GSO_TCP_SYN | GSO_TCP_ACK, 0), 1);
	cr_assert_eq(last_to(f, 43001, mark)->seq, iss, "the same SYN-ACK");
	cr_assert_eq(linfo(l).synack_retrans, 1);
	/* The client answers the retransmission with its ACK again. */
	struct pseg g = { .l3 = GSO_L3_IPV4, .sport = 43001, .dport = OUR_PORT, .seq = 2001, .ack = iss + 1,
			  .flags = GSO_TCP_ACK, .win = 502, .ts = true, .tsval = 71001,
			  .tsecr = last_to(f, 43001, mark)->tsval };
	inject(e, &g);
	li = linfo(l);
	cr_assert_eq(li.half_open, 0);
	cr_assert_eq(li.queued, 1);
	cr_assert_eq(gso_listener__accept(l, &b, NULL), 0);
	cr_assert_eq(nev(GSO_EV_LISTENER_READY, 0), 2);
	run_until(e, vnow + MS);
	cr_assert_eq(sinfo(b).state, GSO_STREAM_ESTABLISHED);
	gso_stream__close(a);
	gso_stream__close(b);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* SYN-ACK retransmissions at 1, 2, 4, 8, 16 s; then the half-open entry expires. */
Test(tcp_listen, synack_retransmissions_then_expiry)
{
	struct fk *f = fk_new();
	struct gso_engine *e = engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV6, 0, 0, 0, 0, 0);
	struct pseg g = client_syn(GSO_L3_IPV6, 44000, 123);
	uint64_t t0 = vnow, at = 0;
	static const uint64_t gaps[5] = { 1, 2, 4, 8, 16 };

	inject(e, &g);
	cr_assert_eq(f->n, 1);
	run_until(e, t0 + 120 * SEC);
	cr_assert_eq(f->n, 6, "1 + 5 SYN-ACKs, got %u", f->n);
	for (int i = 0; i < 5; i++) {
		at += gaps[i] * SEC;
		cr_assert_eq(f->r[i + 1].t, t0 + at, "retransmission %d at %lu ns, want %lu", i + 1,
			     f->r[i + 1].t - t0, at);
		cr_assert_eq(f->r[i + 1].seq, f->r[0].seq);
		cr_assert_eq(f->r[i + 1].flags, GSO_TCP_SYN | GSO_TCP_ACK);
		cr_assert(f->r[i + 1].has_ts && f->r[i + 1].tsecr == 70000);
	}
	struct gso_listener_info li = linfo(l);
	cr_assert_eq(li.half_open, 0);
	cr_assert_eq(li.half_open_expired, 1);
	cr_assert_eq(li.synack_retrans, 5);
	cr_assert_eq(li.synacks, 6);
	/* The late ACK finds nothing (the cookie check refuses it): an RST. */
	g = (struct pseg){ .l3 = GSO_L3_IPV6, .sport = 44000, .dport = OUR_PORT, .seq = 124, .ack = f->r[0].seq + 1,
			   .flags = GSO_TCP_ACK, .win = 502 };
	inject(e, &g);
	cr_assert_eq(f->r[f->n - 1].flags, GSO_TCP_RST);
	cr_assert_eq(f->r[f->n - 1].seq, f->r[0].seq + 1);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* A duplicate SYN gets the same SYN-ACK; an RST at RCV.NXT removes the entry, one elsewhere does not. */
Test(tcp_listen, dup_syn_and_rst_half_open)
{
	struct fk *f = fk_new();
	struct gso_engine *e = engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV4, 0, 0, 0, 0, 0);
	struct pseg g = client_syn(GSO_L3_IPV4, 45000, 500);

	inject(e, &g);
	vnow += 300 * MS;
	inject(e, &g);
	cr_assert_eq(f->n, 2);
	cr_assert_eq(f->r[1].seq, f->r[0].seq, "the same ISN");
	cr_assert_eq(f->r[1].ack, 501);
	cr_assert_eq(f->r[1].has_ws, true);
	cr_assert_eq(f->r[1].ws, f->r[0].ws);
	cr_assert_eq(linfo(l).half_open, 1);
	/* RST out of place: ignored. */
	struct pseg rst = { .l3 = GSO_L3_IPV4, .sport = 45000, .dport = OUR_PORT, .seq = 600, .flags = GSO_TCP_RST };
	inject(e, &rst);
	cr_assert_eq(linfo(l).half_open, 1, "an RST off RCV.NXT removed the entry");
	rst.seq = 501;
	inject(e, &rst);
	cr_assert_eq(linfo(l).half_open, 0);
	cr_assert_eq(f->n, 2, "never answer an RST");
	/* Its ACK afterwards: nothing to open, an RST. */
	g = (struct pseg){ .l3 = GSO_L3_IPV4, .sport = 45000, .dport = OUR_PORT, .seq = 501, .ack = f->r[0].seq + 1,
			   .flags = GSO_TCP_ACK, .win = 502, .ts = true, .tsval = 70010, .tsecr = f->r[0].tsval };
	inject(e, &g);
	cr_assert_eq(f->r[f->n - 1].flags, GSO_TCP_RST);
	cr_assert_eq(linfo(l).queued, 0);
	/* An ACK of the wrong number on a half-open entry: RST (seq = its ack), the entry stays. */
	g = client_syn(GSO_L3_IPV4, 45001, 900);
	inject(e, &g);
	g = (struct pseg){ .l3 = GSO_L3_IPV4, .sport = 45001, .dport = OUR_PORT, .seq = 901, .ack = 0xdeadbeef,
			   .flags = GSO_TCP_ACK, .win = 502 };
	inject(e, &g);
	cr_assert_eq(f->r[f->n - 1].flags, GSO_TCP_RST);
	cr_assert_eq(f->r[f->n - 1].seq, 0xdeadbeef);
	cr_assert_eq(linfo(l).half_open, 1);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* A segment of no connection: RST with seq = its ACK, or ACK of what it covered. */
Test(tcp_listen, ack_for_nothing_rst)
{
	struct fk *f = fk_new();
	struct gso_engine *e = engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV4, 0, 0, 0, 0, 0);
	struct pseg g = { .l3 = GSO_L3_IPV4, .sport = 46000, .dport = OUR_PORT, .seq = 1000, .ack = 0x12345678,
			  .flags = GSO_TCP_ACK, .win = 100, .data = pattern, .len = 10 };

	inject(e, &g);
	cr_assert_eq(f->n, 1);
	cr_assert_eq(f->r[0].flags, GSO_TCP_RST);
	cr_assert_eq(f->r[0].seq, 0x12345678);
	struct gso_listener_info li = linfo(l);
	cr_assert_eq(li.resets, 1);
	cr_assert_eq(li.cookies_bad, 1);
	cr_assert_eq(li.queued, 0);
	/* LISTEN (RFC 793): a segment with neither SYN, ACK nor RST (a FIN with data) is dropped. */
	g = (struct pseg){ .l3 = GSO_L3_IPV4, .sport = 46001, .dport = OUR_PORT, .seq = 5000,
			   .flags = GSO_TCP_FIN, .data = pattern, .len = 10 };
	inject(e, &g);
	cr_assert_eq(f->n, 1);
	cr_assert_eq(linfo(l).half_open, 0);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/*
 * A SYN flood: syn_backlog entries, then cookies (memory flat); a real
 * client's handshake during it completes through its cookie, with its
 * window scale and SACK recovered from the timestamp echo; a forged ACK
 * gets an RST.
 */
Test(tcp_listen, syn_flood_cookies)
{
	struct fk *f = fk_new();
	struct gso_engine *e = engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV4, 0, 0, 8, 0, 0);
	struct gso_listener_info li;
	struct gso_stream *s;
	size_t before = 0;

	for (uint32_t i = 0; i < 2000; i++) {
		struct pseg g = client_syn(GSO_L3_IPV4, (uint16_t)(10000 + i), i * 7919u);

		if (i == 100)
			before = mallinfo2().uordblks;
		inject(e, &g);
	}
	cr_assert_leq(mallinfo2().uordblks, before + 1024, "the flood grew the heap by %zu",
		      mallinfo2().uordblks - before);
	li = linfo(l);
	cr_assert_eq(li.half_open, 8);
	cr_assert_eq(li.cookies_sent, 2000 - 8);
	cr_assert_eq(li.synacks, 2000);
	cr_assert_eq(f->n, 2000);
	/* A real client: window scale 6, SACK-permitted, timestamps. */
	struct pseg g = client_syn(GSO_L3_IPV4, 50000, 31337);
	g.ws = 6;
	g.mss = 1400;
	inject(e, &g);
	const struct frec *r = &f->r[f->n - 1];
	cr_assert_eq(r->dport, 50000);
	cr_assert(r->has_ws && r->sack_perm && r->has_ts, "a cookie SYN-ACK still carries the options");
	cr_assert_eq(linfo(l).cookies_sent, 2000 - 8 + 1);
	vnow += 30 * MS;
	/* A forged ACK first (a wrong cookie): RST, counted. */
	struct pseg a = { .l3 = GSO_L3_IPV4, .sport = 50000, .dport = OUR_PORT, .seq = 31338, .ack = r->seq + 0x1001,
			  .flags = GSO_TCP_ACK, .win = 300, .ts = true, .tsval = 70030, .tsecr = r->tsval };
	inject(e, &a);
	cr_assert_eq(f->r[f->n - 1].flags, GSO_TCP_RST);
	cr_assert_eq(f->r[f->n - 1].seq, r->seq + 0x1001);
	cr_assert_eq(linfo(l).cookies_bad, 1);
	r = &f->r[f->n - 2];
	a.ack = r->seq + 1;
	inject(e, &a);
	li = linfo(l);
	cr_assert_eq(li.cookies_ok, 1);
	cr_assert_eq(li.queued, 1);
	cr_assert_eq(li.half_open, 8);
	cr_assert_eq(gso_listener__accept(l, &s, NULL), 0);
	run_until(e, vnow + MS);
	struct gso_stream_info si = sinfo(s);
	cr_assert_eq(si.state, GSO_STREAM_ESTABLISHED);
	cr_assert(si.sack, "SACK lost in the cookie");
	cr_assert(si.timestamps);
	cr_assert_eq(si.rcv_wscale, 3);
	cr_assert_leq(si.mss, 1400 - 12, "the client's MSS class: %u", si.mss);
	cr_assert_geq(si.mss, 1200, "the client's MSS class: %u", si.mss);
	a.tsval++;
	a.win = 1000;
	inject(e, &a);
	cr_assert_eq(sinfo(s).max_wnd, 1000u << 6, "the window scale lost in the cookie: %u", sinfo(s).max_wnd);
	gso_stream__close(s);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* GSO_LISTEN_F_COOKIES_ALWAYS: no half-open entry at all; a client without timestamps gets no WS/SACK. */
Test(tcp_listen, cookies_always)
{
	struct fk *f = fk_new();
	struct gso_engine *e = engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV6, GSO_LISTEN_F_COOKIES_ALWAYS, 0, 0, 0, 0);
	struct gso_stream *s;
	struct pseg g = client_syn(GSO_L3_IPV6, 51000, 4242);

	inject(e, &g);
	cr_assert_eq(linfo(l).half_open, 0);
	cr_assert_eq(linfo(l).cookies_sent, 1);
	cr_assert_eq(f->n, 1);
	g = (struct pseg){ .l3 = GSO_L3_IPV6, .sport = 51000, .dport = OUR_PORT, .seq = 4243, .ack = f->r[0].seq + 1,
			   .flags = GSO_TCP_ACK, .win = 300, .ts = true, .tsval = 70001, .tsecr = f->r[0].tsval };
	inject(e, &g);
	cr_assert_eq(gso_listener__accept(l, &s, NULL), 0);
	run_until(e, vnow + MS);
	cr_assert(sinfo(s).sack && sinfo(s).timestamps);
	cr_assert_eq(sinfo(s).rcv_wscale, 3);
	gso_stream__close(s);
	/* Without timestamps: nowhere to keep WS and SACK, the connection goes without. */
	g = client_syn(GSO_L3_IPV6, 51001, 777);
	g.ts = false;
	inject(e, &g);
	const struct frec *r = &f->r[f->n - 1];
	cr_assert_not(r->has_ts);
	cr_assert_not(r->has_ws);
	cr_assert_not(r->sack_perm);
	g = (struct pseg){ .l3 = GSO_L3_IPV6, .sport = 51001, .dport = OUR_PORT, .seq = 778, .ack = r->seq + 1,
			   .flags = GSO_TCP_ACK, .win = 300 };
	inject(e, &g);
	cr_assert_eq(gso_listener__accept(l, &s, NULL), 0);
	run_until(e, vnow + MS);
	cr_assert_not(sinfo(s).sack);
	cr_assert_not(sinfo(s).timestamps);
	cr_assert_eq(sinfo(s).rcv_wscale, 0);
	cr_assert_eq(linfo(l).cookies_ok, 2);
	gso_stream__close(s);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* =========================================================================== */
/* Receiving                                                                   */
/* =========================================================================== */

TestSuite(tcp_rx, .init = setup, .fini = teardown, .timeout = 120);

static bool after32(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

/* What the peer has of ours: past every byte, SYN and FIN we sent (c->oseq), so its ACKs cover them. */
static void sync_oseq(struct conn *c)
{
	for (unsigned i = 0; i < c->f->n; i++) {
		const struct frec *r = &c->f->r[i];
		uint32_t end = r->seq + r->len + !!(r->flags & GSO_TCP_FIN) + !!(r->flags & GSO_TCP_SYN);

		if (r->dport == c->pport && !(r->flags & GSO_TCP_RST) && after32(end, c->oseq))
			c->oseq = end;
	}
}

/* Events of type `type` for the connection's stream from event `from` on. */
static unsigned sev(const struct conn *c, uint32_t type, unsigned from)
{
	unsigned n = 0;

	for (unsigned i = from; i < evs->n; i++)
		n += evs->ev[i].type == type && evs->ev[i].stream == c->s;
	return n;
}

static void read_expect(struct conn *c, uint32_t off, uint32_t len)
{
	static uint8_t buf[1 << 20];
	uint32_t got = 0;

	while (got < len) {
		int n = gso_stream__read(c->s, buf + got, len - got);

		cr_assert_gt(n, 0, "read: %d after %u of %u", n, got, len);
		got += (uint32_t)n;
	}
	cr_assert_eq(memcmp(buf, pattern + off, len), 0, "the bytes read are not the bytes sent");
}

/* In-order data: READABLE, the bytes, rx_bytes; each of the first segments acknowledged at once with the peer's TSval. */
Test(tcp_rx, in_order)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		unsigned e0 = evs->n, mark = c.f->n;
		uint8_t b[8];

		cr_assert_eq(gso_stream__read(c.s, b, sizeof(b)), -EAGAIN);
		for (uint32_t i = 0; i < 3; i++) {
			pdata(&c, i * 1000, 1000, 0);
			const struct frec *r = last_to(c.f, c.pport, mark);
			cr_assert_not_null(r, "%s %s: no ACK", KIND(k));
			cr_assert_eq(r->ack, c.irs + (i + 1) * 1000, "%s %s: ack %u", KIND(k), r->ack - c.irs);
			cr_assert(r->has_ts && r->tsecr == c.pts - 1, "%s %s: TSecr", KIND(k));
			cr_assert_eq(r->l3, kinds[k].l3);
		}
		cr_assert_eq(pure_acks(c.f, c.pport, mark), 3, "%s %s: quick ACKs", KIND(k));
		cr_assert_eq(sev(&c, GSO_EV_STREAM_READABLE, e0), 1, "%s %s: READABLE once until a read", KIND(k));
		struct gso_stream_info si = sinfo(c.s);
		cr_assert_eq(si.rx_bytes, 3000);
		cr_assert_eq(si.rx_segs, 3);
		cr_assert_eq(si.rx_queued, 3000);
		cr_assert_eq(si.acks_sent, 3);
		read_expect(&c, 0, 3000);
		cr_assert_eq(gso_stream__read(c.s, b, sizeof(b)), -EAGAIN);
		cr_assert_eq(sinfo(c.s).rx_read, 3000);
		pdata(&c, 3000, 500, GSO_TCP_PSH);
		cr_assert_eq(sev(&c, GSO_EV_STREAM_READABLE, e0), 2, "READABLE again after a read");
		read_expect(&c, 3000, 500);
		conn_close(&c);
	}
}

/* Quick ACKs for the first 16 segments, then every second full-sized one; a lone one waits 40 ms. */
Test(tcp_rx, quick_then_delayed_acks)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		unsigned mark = c.f->n;
		uint32_t off = 0;
		uint64_t t;

		for (int i = 0; i < 16; i++, off += 1000) {
			pdata(&c, off, 1000, 0);
			cr_assert_eq(pure_acks(c.f, c.pport, mark), (unsigned)i + 1, "%s %s: quick ACK %d", KIND(k), i);
		}
		/* The 17th: delayed. */
		mark = c.f->n;
		t = vnow;
		pdata(&c, off, 1000, 0);
		off += 1000;
		cr_assert_eq(pure_acks(c.f, c.pport, mark), 0, "%s %s: the 17th was acknowledged at once", KIND(k));
		run_until(c.e, t + 39 * MS);
		cr_assert_eq(pure_acks(c.f, c.pport, mark), 0, "%s %s: delayed ACK early", KIND(k));
		run_until(c.e, t + 41 * MS);
		cr_assert_eq(pure_acks(c.f, c.pport, mark), 1, "%s %s: no delayed ACK at 40 ms", KIND(k));
		cr_assert_eq(last_to(c.f, c.pport, mark)->t, t + 40 * MS);
		cr_assert_eq(last_to(c.f, c.pport, mark)->ack, c.irs + off);
		cr_assert_eq(sinfo(c.s).acks_delayed, 1);
		/* Then an ACK every second full-sized segment. */
		for (int i = 0; i < 6; i++, off += 1000) {
			mark = c.f->n;
			pdata(&c, off, 1000, 0);
			cr_assert_eq(pure_acks(c.f, c.pport, mark), (unsigned)(i & 1), "%s %s: segment %d after the quick ones",
				     KIND(k), i);
			if (i & 1)
				cr_assert_eq(last_to(c.f, c.pport, mark)->ack, c.irs + off + 1000);
		}
		cr_assert_eq(sinfo(c.s).acks_delayed, 1);
		conn_close(&c);
	}
}

/* Our data carries the ACK: no pure ACK is owed after it. */
Test(tcp_rx, data_carries_ack)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		uint32_t off = 0;
		unsigned mark;

		for (int i = 0; i < 16; i++, off += 1000)
			pdata(&c, off, 1000, 0);
		mark = c.f->n;
		pdata(&c, off, 700, 0); /* owed: a delayed ACK */
		off += 700;
		cr_assert_eq(gso_stream__write(c.s, pattern, 300), 300);
		run_until(c.e, vnow + 100 * MS);
		cr_assert_eq(count_to(c.f, c.pport, mark, 0, 0), 1, "%s %s: %u segments, want the data alone", KIND(k),
			     count_to(c.f, c.pport, mark, 0, 0));
		const struct frec *r = last_to(c.f, c.pport, mark);
		cr_assert_eq(r->len, 300);
		cr_assert_eq(r->ack, c.irs + off, "%s %s: the data's ACK", KIND(k));
		cr_assert_eq(sinfo(c.s).acks_delayed, 0);
		conn_close(&c);
	}
}

/* Out of order: a duplicate ACK at once with SACK blocks, newest first; filling the holes: ACKs at once. */
Test(tcp_rx, out_of_order_sack)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		const struct frec *r;
		unsigned mark, e0 = evs->n;
		uint32_t b = c.irs;

		for (int i = 0; i < 16; i++) /* past the quick ACKs: what follows is not one of them */
			pdata(&c, (uint32_t)i * 1000, 1000, 0);
		read_expect(&c, 0, 16000);
		b += 16000;
		e0 = evs->n;
		mark = c.f->n;
		pdata(&c, 17000, 1000, 0);
		r = last_to(c.f, c.pport, mark);
		cr_assert_not_null(r, "%s %s: no duplicate ACK", KIND(k));
		cr_assert_eq(r->ack, b);
		cr_assert_eq(r->nsack, 1);
		cr_assert(r->sack[0][0] == b + 1000 && r->sack[0][1] == b + 2000);
		cr_assert(r->has_ts, "timestamps with SACK blocks");
		mark = c.f->n;
		pdata(&c, 19000, 1000, 0);
		r = last_to(c.f, c.pport, mark);
		cr_assert_eq(r->ack, b);
		cr_assert_eq(r->nsack, 2);
		cr_assert(r->sack[0][0] == b + 3000 && r->sack[0][1] == b + 4000, "the newest first");
		cr_assert(r->sack[1][0] == b + 1000 && r->sack[1][1] == b + 2000);
		cr_assert_eq(sev(&c, GSO_EV_STREAM_READABLE, e0), 0, "nothing in order yet");
		/* The first hole: everything up to the second, at once, with the rest as SACK. */
		mark = c.f->n;
		pdata(&c, 16000, 1000, 0);
		r = last_to(c.f, c.pport, mark);
		cr_assert_eq(pure_acks(c.f, c.pport, mark), 1);
		cr_assert_eq(r->ack, b + 2000);
		cr_assert_eq(r->nsack, 1);
		cr_assert(r->sack[0][0] == b + 3000 && r->sack[0][1] == b + 4000);
		mark = c.f->n;
		pdata(&c, 18000, 1000, 0);
		r = last_to(c.f, c.pport, mark);
		cr_assert_eq(pure_acks(c.f, c.pport, mark), 1, "%s %s: the last hole filled, not acknowledged at once",
			     KIND(k));
		cr_assert_eq(r->ack, b + 4000);
		cr_assert_eq(r->nsack, 0);
		struct gso_stream_info si = sinfo(c.s);
		cr_assert_eq(si.rx_ooo_segs, 2);
		cr_assert_eq(si.rx_bytes, 20000);
		read_expect(&c, 16000, 4000);
		/* A duplicate segment: answered at once, counted. */
		mark = c.f->n;
		pdata(&c, 18000, 1000, 0);
		cr_assert_eq(pure_acks(c.f, c.pport, mark), 1);
		cr_assert_eq(last_to(c.f, c.pport, mark)->ack, b + 4000);
		cr_assert_eq(sinfo(c.s).rx_dup_segs, 1);
		conn_close(&c);
	}
}

/*
 * The window: the free buffer, shrinking as unread data accumulates with
 * its right edge fixed, zero when full (bytes beyond refused), a window
 * update after the application reads enough.
 */
Test(tcp_rx, window_shrinks_zero_update)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 32768);
		const struct frec *r;
		uint32_t off = 0, edge;
		unsigned mark = c.f->n;

		cr_assert_eq(c.ows, 0);
		cr_assert_eq(last_to(c.f, c.pport, 0)->win, 32768, "%s %s: the whole buffer", KIND(k));
		edge = c.irs + 32768;
		while (off + 1000 <= 32768) {
			pdata(&c, off, 1000, 0);
			off += 1000;
			run_until(c.e, vnow + 50 * MS);
			r = last_to(c.f, c.pport, mark);
			cr_assert_eq(r->ack, c.irs + off, "%s %s", KIND(k));
			cr_assert_eq(r->win, 32768 - off, "%s %s: window %u after %u unread", KIND(k), r->win, off);
			cr_assert_eq(r->ack + r->win, edge, "the right edge moved");
		}
		/* The last 768 bytes, and 232 past the window: cut off. */
		mark = c.f->n;
		pdata(&c, off, 1000, 0);
		r = last_to(c.f, c.pport, mark);
		cr_assert_not_null(r, "%s %s: no ACK for bytes past the window", KIND(k));
		cr_assert_eq(r->ack, edge);
		cr_assert_eq(r->win, 0, "%s %s: a full buffer, window %u", KIND(k), r->win);
		struct gso_stream_info si = sinfo(c.s);
		cr_assert_eq(si.rx_beyond_wnd, 232);
		cr_assert_eq(si.rx_bytes, 32768);
		cr_assert_eq(si.rcv_wnd, 0);
		/* A zero window: more data is refused, and answered with the window. */
		mark = c.f->n;
		pdata(&c, 32768, 1000, 0);
		r = last_to(c.f, c.pport, mark);
		cr_assert_not_null(r);
		cr_assert_eq(r->ack, edge);
		cr_assert_eq(r->win, 0);
		cr_assert_eq(sinfo(c.s).rx_bytes, 32768);
		cr_assert_eq(sinfo(c.s).rx_beyond_wnd, 1232);
		/* Reading a little: not worth an update; two segments' worth: a window update. */
		mark = c.f->n;
		read_expect(&c, 0, 500);
		cr_assert_eq(c.f->n, mark, "%s %s: an update for 500 bytes", KIND(k));
		read_expect(&c, 500, 1500);
		r = last_to(c.f, c.pport, mark);
		cr_assert_not_null(r, "%s %s: no window update", KIND(k));
		cr_assert_eq(r->ack, edge);
		cr_assert_eq(r->win, 2000);
		cr_assert_eq(sinfo(c.s).wnd_updates, 1);
		/* Reading half the buffer: another update, the whole free part. */
		mark = c.f->n;
		read_expect(&c, 2000, 16384);
		r = last_to(c.f, c.pport, mark);
		cr_assert_not_null(r, "%s %s: no window update after half the buffer", KIND(k));
		cr_assert_eq(r->win, 2000 + 16384);
		conn_close(&c);
	}
}

/* A scaled window: advertised >> our scale, the right edge never moves back. */
Test(tcp_rx, window_scaled_edge)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 1u << 20);
		uint32_t edge = 0;
		unsigned mark = c.f->n;

		cr_assert_eq(c.ows, 5);
		cr_assert_eq(sinfo(c.s).rcv_wscale, 5);
		uint32_t rd = 0, off = 0;

		for (int i = 0; off < 200000; off += 1337, i++) {
			pdata(&c, off, 1337, 0);
			if (i % 3 == 2) { /* read some, not all: the window moves by odd amounts */
				read_expect(&c, rd, off + 1337 - rd - 1000);
				rd = off + 1337 - 1000;
			}
		}
		run_until(c.e, vnow + 50 * MS);
		for (unsigned i = mark; i < c.f->n; i++) {
			const struct frec *r = &c.f->r[i];
			uint32_t e = r->ack + ((uint32_t)r->win << 5);

			if (r->dport != c.pport)
				continue;
			cr_assert(!edge || !after32(edge, e), "%s %s: the right edge went back by %u", KIND(k), edge - e);
			edge = e;
			cr_assert_leq(r->win << 5, 1u << 20);
		}
		cr_assert_eq(c.f->r[c.f->n - 1].ack, c.irs + off);
		/* The last ACK left before the last read (a read of less than half the buffer sends none). */
		cr_assert_geq(((uint32_t)c.f->r[c.f->n - 1].win << 5) + 3 * 1337 + 1000 + 32, 1u << 20, "%s %s: win %u unread %u ack %u", KIND(k), (uint32_t)c.f->r[c.f->n - 1].win << 5, off - rd, c.f->r[c.f->n - 1].ack - c.irs);
		conn_close(&c);
	}
}

/* Zero-copy reading: peek shows the bytes in place, consume frees them. */
Test(tcp_rx, peek_consume)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		const void *p;
		uint32_t len;

		cr_assert_eq(gso_stream__peek(c.s, &p, &len), -EAGAIN);
		cr_assert_eq(len, 0);
		pdata(&c, 0, 1000, 0);
		pdata(&c, 1000, 2000, 0);
		cr_assert_eq(gso_stream__peek(c.s, &p, &len), 0);
		cr_assert_eq(len, 3000);
		cr_assert_eq(memcmp(p, pattern, 3000), 0);
		cr_assert_eq(gso_stream__consume(c.s, 3001), -EINVAL);
		cr_assert_eq(gso_stream__consume(c.s, 1200), 0);
		cr_assert_eq(gso_stream__peek(c.s, &p, &len), 0);
		cr_assert_eq(len, 1800);
		cr_assert_eq(memcmp(p, pattern + 1200, 1800), 0);
		cr_assert_eq(gso_stream__consume(c.s, 1800), 0);
		cr_assert_eq(gso_stream__peek(c.s, &p, &len), -EAGAIN);
		cr_assert_eq(sinfo(c.s).rx_read, 3000);
		cr_assert_eq(sinfo(c.s).rx_queued, 0);
		conn_close(&c);
	}
}

/* =========================================================================== */
/* The end: FIN, RST, TIME_WAIT                                                */
/* =========================================================================== */

TestSuite(tcp_close, .init = setup, .fini = teardown, .timeout = 120);

/* A listener on the connection's engine, for its TIME_WAIT counters (the passive kinds have theirs). */
static struct gso_listener *tw_listener(struct conn *c)
{
	if (!c->l)
		c->l = listen_on(c->e, c->l3, 0, 0, 0, 0, 0);
	return c->l;
}

/* The connection ended with `err` (one CLOSED event since e0), and `tw` 4-tuples are in TIME_WAIT. */
static void expect_end(struct conn *c, unsigned k, unsigned e0, int err, uint64_t tw)
{
	struct gso_stream_info si = sinfo(c->s);

	cr_assert_eq(si.state, err ? GSO_STREAM_FAILED : GSO_STREAM_DONE, "%s %s: state %u", KIND(k), si.state);
	cr_assert_eq(si.err, err, "%s %s: err %d", KIND(k), si.err);
	cr_assert_eq(sev(c, GSO_EV_STREAM_CLOSED, e0), 1, "%s %s: CLOSED events", KIND(k));
	cr_assert_eq(linfo(c->l).time_wait, tw, "%s %s: %lu in TIME_WAIT, want %lu", KIND(k),
		     (unsigned long)linfo(c->l).time_wait, (unsigned long)tw);
}

/* The peer's FIN in ESTABLISHED: CLOSE_WAIT, PEER_CLOSED, read gives the data then 0; our FIN then LAST_ACK, DONE, no TIME_WAIT. */
Test(tcp_close, peer_closes_first)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		unsigned e0 = evs->n, mark = c.f->n;
		const struct frec *r;
		uint8_t b[4];

		tw_listener(&c);
		pdata(&c, 0, 500, GSO_TCP_FIN);
		r = last_to(c.f, c.pport, mark);
		cr_assert_not_null(r);
		cr_assert_eq(r->ack, c.irs + 501, "%s %s: the FIN acknowledged", KIND(k));
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_CLOSE_WAIT);
		cr_assert_eq(sev(&c, GSO_EV_STREAM_PEER_CLOSED, e0), 1);
		cr_assert_eq(sev(&c, GSO_EV_STREAM_READABLE, e0), 1);
		read_expect(&c, 0, 500);
		cr_assert_eq(gso_stream__read(c.s, b, sizeof(b)), 0, "the end of the stream");
		cr_assert_eq(gso_stream__read(c.s, b, sizeof(b)), 0);
		/* Half-close: we still send. */
		mark = c.f->n;
		cr_assert_eq(gso_stream__write(c.s, pattern, 100), 100);
		cr_assert_eq(gso_stream__shutdown(c.s), 0);
		run_until(c.e, vnow + MS);
		r = last_to(c.f, c.pport, mark);
		cr_assert_eq(r->len, 100, "%s %s: the data after the peer's FIN", KIND(k));
		cr_assert_eq(r->ack, c.irs + 501);
		sync_oseq(&c);
		pctl(&c, c.irs + 501, GSO_TCP_ACK);
		run_until(c.e, vnow + MS);
		r = last_to(c.f, c.pport, mark);
		cr_assert_eq(r->flags, GSO_TCP_FIN | GSO_TCP_ACK, "%s %s: flags %#x", KIND(k), r->flags);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_LAST_ACK);
		cr_assert_eq(sev(&c, GSO_EV_STREAM_CLOSED, e0), 0);
		sync_oseq(&c);
		pctl(&c, c.irs + 501, GSO_TCP_ACK);
		expect_end(&c, k, e0, 0, 0); /* no TIME_WAIT for the side that closed second */
		cr_assert_eq(gso_stream__read(c.s, b, sizeof(b)), 0);
		conn_close(&c);
	}
}

/*
 * We close first: FIN_SENT, CLOSING when it is acknowledged (still
 * receiving), DONE at the peer's FIN and TIME_WAIT: a retransmitted FIN
 * is answered from it, a new SYN with a higher sequence number takes it over.
 */
Test(tcp_close, we_close_first_time_wait)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		unsigned e0 = evs->n, mark = c.f->n;
		const struct frec *r;
		uint32_t fin, fin_ts;

		tw_listener(&c);
		cr_assert_eq(gso_stream__shutdown(c.s), 0);
		run_until(c.e, vnow + MS);
		r = last_to(c.f, c.pport, mark);
		cr_assert_not_null(r);
		cr_assert_eq(r->flags, GSO_TCP_FIN | GSO_TCP_ACK, "%s %s", KIND(k));
		fin = r->seq;
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_FIN_SENT);
		sync_oseq(&c);
		pctl(&c, c.irs, GSO_TCP_ACK);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_CLOSING);
		/* FIN-WAIT-2 receives. */
		mark = c.f->n;
		pdata(&c, 0, 300, 0);
		cr_assert_eq(last_to(c.f, c.pport, mark)->ack, c.irs + 300);
		cr_assert_eq(last_to(c.f, c.pport, mark)->seq, fin + 1);
		read_expect(&c, 0, 300);
		fin_ts = c.pts;
		pdata(&c, 300, 0, GSO_TCP_FIN);
		expect_end(&c, k, e0, 0, 1);
		cr_assert_eq(sev(&c, GSO_EV_STREAM_PEER_CLOSED, e0), 1);
		r = last_to(c.f, c.pport, mark);
		cr_assert_eq(r->ack, c.irs + 301, "the FIN acknowledged");
		/* The FIN again (our ACK was lost): TIME_WAIT answers, also after the stream is closed. */
		gso_stream__close(c.s);
		vnow += 10 * SEC;
		mark = c.f->n;
		pdata(&c, 300, 0, GSO_TCP_FIN);
		r = last_to(c.f, c.pport, mark);
		cr_assert_not_null(r, "%s %s: no answer from TIME_WAIT", KIND(k));
		cr_assert_eq(r->flags, GSO_TCP_ACK);
		cr_assert_eq(r->seq, fin + 1);
		cr_assert_eq(r->ack, c.irs + 301);
		/* As Linux: TS.Recent is not taken from a retransmitted FIN (only from a segment at RCV.NXT). */
		cr_assert(r->has_ts && r->tsecr == fin_ts, "TIME_WAIT's ACK echoes %u, want the first FIN's %u",
			  r->tsecr, fin_ts);
		cr_assert_eq(linfo(c.l).time_wait, 1);
		/* A new SYN for the tuple, past the old sequence numbers: a new connection. */
		struct pseg g = client_syn(c.l3, c.pport, c.irs + 100000);
		g.tsval = c.pts + 1000;
		mark = c.f->n;
		inject(c.e, &g);
		r = last_to(c.f, c.pport, mark);
		cr_assert_not_null(r);
		cr_assert_eq(r->flags, GSO_TCP_SYN | GSO_TCP_ACK, "%s %s: flags %#x", KIND(k), r->flags);
		cr_assert_eq(r->ack, c.irs + 100001);
		struct gso_listener_info li = linfo(c.l);
		cr_assert_eq(li.time_wait_reused, 1);
		cr_assert_eq(li.time_wait, 0);
		cr_assert_eq(li.half_open, 1);
		c.s = NULL;
		conn_close(&c);
	}
}

/* TIME_WAIT ends after GSO_STREAM_TIME_WAIT_NS. */
Test(tcp_close, time_wait_expires)
{
	struct conn c = conn_open(true, GSO_L3_IPV4, 0);

	cr_assert_eq(gso_stream__shutdown(c.s), 0);
	run_until(c.e, vnow + MS);
	sync_oseq(&c);
	pctl(&c, c.irs, GSO_TCP_ACK | GSO_TCP_FIN);
	cr_assert_eq(sinfo(c.s).state, GSO_STREAM_DONE);
	cr_assert_eq(linfo(c.l).time_wait, 1);
	vnow += GSO_STREAM_TIME_WAIT_NS - MS;
	cr_assert_eq(linfo(c.l).time_wait, 1);
	vnow += 2 * MS;
	cr_assert_eq(linfo(c.l).time_wait, 0);
	conn_close(&c);
}

/* Both FINs cross: each side acknowledges the other's; DONE and TIME_WAIT (both closed first). */
Test(tcp_close, simultaneous_close)
{
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		unsigned e0 = evs->n, mark = c.f->n;
		const struct frec *r;
		uint32_t una = c.oseq;

		tw_listener(&c);
		cr_assert_eq(gso_stream__shutdown(c.s), 0);
		run_until(c.e, vnow + MS);
		cr_assert_eq(count_to(c.f, c.pport, mark, GSO_TCP_FIN, 0), 1);
		/* The peer's FIN, not acknowledging ours. */
		pctl(&c, c.irs, GSO_TCP_ACK | GSO_TCP_FIN);
		cr_assert_eq(una, c.oseq);
		r = last_to(c.f, c.pport, mark);
		cr_assert_eq(r->ack, c.irs + 1, "%s %s: the peer's FIN acknowledged", KIND(k));
		cr_assert_eq(sev(&c, GSO_EV_STREAM_PEER_CLOSED, e0), 1);
		cr_assert_neq(sinfo(c.s).state, GSO_STREAM_DONE);
		sync_oseq(&c);
		pctl(&c, c.irs + 1, GSO_TCP_ACK);
		expect_end(&c, k, e0, 0, 1);
		conn_close(&c);
	}
}

/* A FIN ahead of missing bytes is applied when the hole fills. */
Test(tcp_close, fin_out_of_order)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		unsigned e0 = evs->n, mark = c.f->n;
		const struct frec *r;
		uint8_t b[4];

		pdata(&c, 1000, 1000, GSO_TCP_FIN);
		r = last_to(c.f, c.pport, mark);
		cr_assert_eq(r->ack, c.irs);
		cr_assert_eq(r->nsack, 1);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_ESTABLISHED);
		cr_assert_eq(sev(&c, GSO_EV_STREAM_PEER_CLOSED, e0), 0);
		cr_assert_eq(gso_stream__read(c.s, b, sizeof(b)), -EAGAIN);
		mark = c.f->n;
		pdata(&c, 0, 1000, 0);
		r = last_to(c.f, c.pport, mark);
		cr_assert_eq(r->ack, c.irs + 2001, "%s %s: ack %u", KIND(k), r->ack - c.irs);
		cr_assert_eq(r->nsack, 0);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_CLOSE_WAIT);
		cr_assert_eq(sev(&c, GSO_EV_STREAM_PEER_CLOSED, e0), 1);
		read_expect(&c, 0, 2000);
		cr_assert_eq(gso_stream__read(c.s, b, sizeof(b)), 0);
		conn_close(&c);
	}
}

/* An RST at RCV.NXT with unread bytes: read gives them, then -ECONNRESET. */
Test(tcp_close, rst_with_unread_data)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		unsigned e0 = evs->n, mark;
		uint8_t b[4];

		pdata(&c, 0, 700, 0);
		mark = c.f->n;
		pctl(&c, c.irs + 700, GSO_TCP_RST);
		cr_assert_eq(c.f->n, mark, "an RST answered");
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_FAILED);
		cr_assert_eq(sinfo(c.s).err, -ECONNRESET);
		cr_assert_eq(sev(&c, GSO_EV_STREAM_CLOSED, e0), 1);
		read_expect(&c, 0, 700);
		cr_assert_eq(gso_stream__read(c.s, b, sizeof(b)), -ECONNRESET);
		conn_close(&c);
	}
}

/* RST in CLOSE_WAIT and in FIN_SENT: -ECONNRESET; in FIN-WAIT-2 (CLOSING): a clean end. */
Test(tcp_close, rst_in_closing_states)
{
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);

		pctl(&c, c.irs, GSO_TCP_ACK | GSO_TCP_FIN);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_CLOSE_WAIT);
		pctl(&c, c.irs + 1, GSO_TCP_RST);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_FAILED, "%s %s: CLOSE_WAIT", KIND(k));
		cr_assert_eq(sinfo(c.s).err, -ECONNRESET);
		conn_close(&c);

		c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		cr_assert_eq(gso_stream__shutdown(c.s), 0);
		run_until(c.e, vnow + MS);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_FIN_SENT);
		pctl(&c, c.irs, GSO_TCP_RST);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_FAILED, "%s %s: FIN_SENT", KIND(k));
		cr_assert_eq(sinfo(c.s).err, -ECONNRESET);
		conn_close(&c);

		c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		cr_assert_eq(gso_stream__shutdown(c.s), 0);
		run_until(c.e, vnow + MS);
		sync_oseq(&c);
		pctl(&c, c.irs, GSO_TCP_ACK);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_CLOSING);
		pctl(&c, c.irs, GSO_TCP_RST);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_DONE, "%s %s: FIN-WAIT-2", KIND(k));
		cr_assert_eq(sinfo(c.s).err, 0);
		conn_close(&c);
	}
}

/* RFC 5961: an RST outside the window is dropped; in it but off RCV.NXT, challenged; a SYN, challenged. */
Test(tcp_close, rst_outside_and_in_window)
{
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		unsigned mark = c.f->n;
		const struct frec *r;

		pctl(&c, c.irs + (1u << 30), GSO_TCP_RST);
		pctl(&c, c.irs - 5000, GSO_TCP_RST);
		cr_assert_eq(c.f->n, mark);
		cr_assert_eq(sinfo(c.s).rx_rst_ignored, 2);
		pctl(&c, c.irs + 1000, GSO_TCP_RST);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_ESTABLISHED);
		cr_assert_eq(sinfo(c.s).rx_rst_challenged, 1);
		r = last_to(c.f, c.pport, mark);
		cr_assert_not_null(r, "%s %s: no challenge ACK", KIND(k));
		cr_assert_eq(r->flags, GSO_TCP_ACK);
		cr_assert_eq(r->ack, c.irs);
		cr_assert_eq(r->seq, c.oseq);
		cr_assert_eq(sinfo(c.s).challenge_acks, 1);
		/* A SYN (500 ms later: the throttle): a challenge ACK, no reset. */
		vnow += 600 * MS;
		mark = c.f->n;
		struct pseg g = client_syn(c.l3, c.pport, c.irs + 50);
		inject(c.e, &g);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_ESTABLISHED);
		cr_assert_eq(sinfo(c.s).rx_syn_challenged, 1);
		cr_assert_eq(pure_acks(c.f, c.pport, mark), 1);
		/* The peer answers with an RST at RCV.NXT: that one counts. */
		pctl(&c, c.irs, GSO_TCP_RST);
		cr_assert_eq(sinfo(c.s).err, -ECONNRESET);
		conn_close(&c);
	}
}

/* An RST for a connection waiting in the accept queue: gone, accept never gives it. */
Test(tcp_close, rst_before_accept)
{
	struct fk *f = fk_new();
	struct gso_engine *e = engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV4, 0, 0, 0, 0, 0);
	struct gso_stream *s;

	handshake(f, e, GSO_L3_IPV4, 47000, 3000);
	cr_assert_eq(linfo(l).queued, 1);
	/* Data before the accept: received and acknowledged already. */
	struct pseg g = { .l3 = GSO_L3_IPV4, .sport = 47000, .dport = OUR_PORT, .seq = 3001,
			  .ack = f->r[0].seq + 1, .flags = GSO_TCP_ACK, .win = 502, .data = pattern, .len = 100 };
	inject(e, &g);
	cr_assert_eq(f->r[f->n - 1].ack, 3101, "data before accept acknowledged");
	g.flags = GSO_TCP_RST;
	g.seq = 3101;
	g.len = 0;
	inject(e, &g);
	cr_assert_eq(linfo(l).queued, 0);
	cr_assert_eq(gso_listener__accept(l, &s, NULL), -EAGAIN);
	cr_assert_eq(nev(GSO_EV_STREAM_CLOSED, 0), 0, "an event for a stream nobody has");
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* Data and FIN before the accept: READABLE and PEER_CLOSED come with the accept. */
Test(tcp_close, data_and_fin_before_accept)
{
	struct fk *f = fk_new();
	struct gso_engine *e = engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV6, 0, 0, 0, 0, 0);
	struct gso_stream *s;
	uint8_t b[200];

	fill_pattern();
	handshake(f, e, GSO_L3_IPV6, 47001, 3000);
	struct pseg g = { .l3 = GSO_L3_IPV6, .sport = 47001, .dport = OUR_PORT, .seq = 3001,
			  .ack = f->r[0].seq + 1, .flags = GSO_TCP_ACK | GSO_TCP_FIN, .win = 502, .data = pattern,
			  .len = 100 };
	inject(e, &g);
	cr_assert_eq(f->r[f->n - 1].ack, 3102);
	cr_assert_eq(nev(GSO_EV_STREAM_READABLE, 0) + nev(GSO_EV_STREAM_PEER_CLOSED, 0), 0);
	cr_assert_eq(gso_listener__accept(l, &s, NULL), 0);
	cr_assert_eq(nev(GSO_EV_STREAM_READABLE, 0), 1);
	cr_assert_eq(nev(GSO_EV_STREAM_PEER_CLOSED, 0), 1);
	cr_assert_eq(gso_stream__read(s, b, sizeof(b)), 100);
	cr_assert_eq(memcmp(b, pattern, 100), 0);
	cr_assert_eq(gso_stream__read(s, b, sizeof(b)), 0);
	cr_assert_eq(sinfo(s).state, GSO_STREAM_CLOSE_WAIT);
	/* Sized after the FIN all the same: it writes, shuts down, and ends at the ACK of its FIN. */
	run_until(e, vnow + MS);
	cr_assert_eq(nev(GSO_EV_STREAM_WRITABLE, 0), 1);
	unsigned mark = f->n;
	cr_assert_eq(gso_stream__write(s, pattern, 50), 50);
	cr_assert_eq(gso_stream__shutdown(s), 0);
	run_until(e, vnow + MS);
	cr_assert_eq(count_to(f, 47001, mark, 0, 0), 1);
	cr_assert_eq(f->r[f->n - 1].len, 50);
	g = (struct pseg){ .l3 = GSO_L3_IPV6, .sport = 47001, .dport = OUR_PORT, .seq = 3102,
			   .ack = f->r[0].seq + 51, .flags = GSO_TCP_ACK, .win = 502 };
	inject(e, &g);
	run_until(e, vnow + MS);
	cr_assert_eq(f->r[f->n - 1].flags, GSO_TCP_FIN | GSO_TCP_ACK);
	cr_assert_eq(sinfo(s).state, GSO_STREAM_LAST_ACK);
	g.ack++;
	inject(e, &g);
	cr_assert_eq(sinfo(s).state, GSO_STREAM_DONE);
	cr_assert_eq(nev(GSO_EV_STREAM_CLOSED, 0), 1);
	gso_stream__close(s);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* =========================================================================== */
/* More of the same, at the edges                                              */
/* =========================================================================== */

/* Four out-of-order ranges: three SACK blocks fit with timestamps, the newest first; a fifth range is dropped. */
Test(tcp_rx, sack_ranges_limit)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		const struct frec *r;
		unsigned mark;

		for (uint32_t i = 0; i < 4; i++)
			pdata(&c, 2000 + i * 2000, 1000, 0); /* [2000,3000) [4000,5000) [6000,7000) [8000,9000) */
		r = last_to(c.f, c.pport, 0);
		cr_assert_eq(r->nsack, 3, "%s %s: %u blocks", KIND(k), r->nsack);
		for (uint32_t i = 0; i < 3; i++)
			cr_assert(r->sack[i][0] == c.irs + 8000 - i * 2000 && r->sack[i][1] == c.irs + 9000 - i * 2000,
				  "%s %s: block %u", KIND(k), i);
		mark = c.f->n;
		pdata(&c, 10000, 1000, 0);
		cr_assert_eq(sinfo(c.s).rx_ooo_dropped, 1);
		cr_assert_eq(pure_acks(c.f, c.pport, mark), 1, "a dropped range is answered at once");
		r = last_to(c.f, c.pport, mark);
		cr_assert_eq(r->ack, c.irs);
		cr_assert_neq(r->sack[0][0], c.irs + 10000, "a block for bytes not held");
		/* The old range again: it becomes the newest block. */
		mark = c.f->n;
		pdata(&c, 4000, 1000, 0);
		r = last_to(c.f, c.pport, mark);
		cr_assert(r->sack[0][0] == c.irs + 4000 && r->sack[0][1] == c.irs + 5000);
		/* Everything in: one ACK of all of it. */
		pdata(&c, 0, 2000, 0);
		pdata(&c, 3000, 1000, 0);
		pdata(&c, 5000, 1000, 0);
		pdata(&c, 7000, 1000, 0);
		mark = c.f->n;
		pdata(&c, 9000, 2000, 0);
		r = last_to(c.f, c.pport, mark);
		cr_assert_eq(r->ack, c.irs + 11000);
		cr_assert_eq(r->nsack, 0);
		read_expect(&c, 0, 11000);
		conn_close(&c);
	}
}

/* A random mix: segments out of order, duplicated, reads of random sizes; every byte right, every ACK sane. */
Test(tcp_rx, random_reorder)
{
	fill_pattern();
	srand(7);
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, (65536u << k) + 4096 * k + 1000);
		const uint32_t seg = k == 3 ? 537 : 1200 + 124 * k, total = 600 * seg;
		uint32_t rd = 0, sent_upto = 0, edge = 0;
		unsigned mark = c.f->n;
		static uint8_t buf[1 << 16];

		while (rd < total) {
			/* The peer sends what the window allows, in a shuffled order, some twice, some not at all. */
			const struct frec *r = last_to(c.f, c.pport, 0);
			uint32_t right = r->ack + ((uint32_t)r->win << c.ows) - c.irs, base = r->ack - c.irs;
			uint32_t n = 0, list[64];

			for (uint32_t o = base; o + seg <= right && o < total && n < 64; o += seg)
				list[n++] = o;
			for (uint32_t i = n; i > 1; i--) {
				uint32_t j = (uint32_t)rand() % i, t = list[i - 1];

				list[i - 1] = list[j];
				list[j] = t;
			}
			for (uint32_t i = 0; i < n; i++) {
				if (rand() % 10 == 0)
					continue; /* lost */
				pdata(&c, list[i], seg, 0);
				if (rand() % 10 == 0)
					pdata(&c, list[i], seg, 0);
				if (list[i] + seg > sent_upto)
					sent_upto = list[i] + seg;
			}
			run_until(c.e, vnow + 50 * MS);
			/* Read a random part. */
			for (;;) {
				int got = gso_stream__read(c.s, buf, (uint32_t)rand() % sizeof(buf) + 1);

				if (got == -EAGAIN)
					break;
				cr_assert_gt(got, 0);
				cr_assert_eq(memcmp(buf, pattern + rd, (size_t)got), 0, "%s %s: bytes at %u", KIND(k), rd);
				rd += (uint32_t)got;
				if (rand() % 2)
					break;
			}
			run_until(c.e, vnow + 50 * MS);
			if (c.f->n == mark && base < total) /* nothing new from us: the peer retransmits from its ACK (a timeout) */
				pdata(&c, base, seg, 0);
			mark = c.f->n;
		}
		cr_assert_eq(rd, total);
		struct gso_stream_info si = sinfo(c.s);
		cr_assert_eq(si.rx_bytes, total, "%s %s (ws %u): rx_bytes %lu, read %u of %u", KIND(k), c.ows,
			     (unsigned long)si.rx_bytes, rd, total);
		/* Every ACK: the right edge never back, SACK blocks above the ACK and within the window. */
		for (unsigned i = 0; i < c.f->n; i++) {
			const struct frec *r = &c.f->r[i];
			uint32_t e = r->ack + ((uint32_t)r->win << c.ows);

			if (r->dport != c.pport || (r->flags & GSO_TCP_SYN))
				continue;
			cr_assert(!edge || !after32(edge, e), "%s %s: ACK %u: the right edge went back by %u", KIND(k), i,
				  edge - e);
			edge = e;
			for (unsigned b = 0; b < r->nsack; b++) {
				cr_assert(after32(r->sack[b][0], r->ack), "%s %s: a SACK block below the ACK", KIND(k));
				cr_assert(after32(r->sack[b][1], r->sack[b][0]));
				cr_assert(!after32(r->sack[b][1], e), "%s %s: a SACK block past the window", KIND(k));
			}
		}
		conn_close(&c);
	}
}

/* The client's first data completes the handshake (its ACK was lost): queued, acknowledged, readable on accept. */
Test(tcp_listen, handshake_completed_by_data)
{
	struct fk *f = fk_new();
	struct gso_engine *e = engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV4, 0, 0, 0, 0, 0);
	struct gso_stream *s;
	struct pseg g = client_syn(GSO_L3_IPV4, 48000, 100);
	uint8_t b[600];

	fill_pattern();
	inject(e, &g);
	g = (struct pseg){ .l3 = GSO_L3_IPV4, .sport = 48000, .dport = OUR_PORT, .seq = 101, .ack = f->r[0].seq + 1,
			   .flags = GSO_TCP_ACK | GSO_TCP_PSH, .win = 502, .ts = true, .tsval = 70002,
			   .tsecr = f->r[0].tsval, .data = pattern, .len = 500 };
	inject(e, &g);
	cr_assert_eq(f->r[f->n - 1].ack, 601);
	cr_assert_eq(f->r[f->n - 1].flags, GSO_TCP_ACK);
	cr_assert_eq(linfo(l).queued, 1);
	cr_assert_eq(gso_listener__accept(l, &s, NULL), 0);
	cr_assert_eq(nev(GSO_EV_STREAM_READABLE, 0), 1);
	cr_assert_eq(gso_stream__read(s, b, sizeof(b)), 500);
	cr_assert_eq(memcmp(b, pattern, 500), 0);
	gso_stream__close(s);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* The accept queue full, the client's re-ACK after the SYN-ACK's retransmission carries data: all of it arrives. */
Test(tcp_listen, overflow_reack_with_data)
{
	struct fk *f = fk_new();
	struct gso_engine *e = engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV6, 0, 1, 0, 0, 0);
	struct gso_stream *a, *b;
	uint32_t iss;
	uint8_t buf[400];

	fill_pattern();
	handshake(f, e, GSO_L3_IPV6, 48100, 1);
	iss = handshake(f, e, GSO_L3_IPV6, 48101, 5000);
	cr_assert_eq(linfo(l).overflows, 1);
	cr_assert_eq(gso_listener__accept(l, &a, NULL), 0);
	run_until(e, vnow + 1100 * MS);
	struct pseg g = { .l3 = GSO_L3_IPV6, .sport = 48101, .dport = OUR_PORT, .seq = 5001, .ack = iss + 1,
			  .flags = GSO_TCP_ACK, .win = 502, .ts = true, .tsval = 71000,
			  .tsecr = last_to(f, 48101, 0)->tsval, .data = pattern, .len = 300 };
	inject(e, &g);
	cr_assert_eq(last_to(f, 48101, 0)->ack, 5301);
	cr_assert_eq(gso_listener__accept(l, &b, NULL), 0);
	cr_assert_eq(gso_stream__read(b, buf, sizeof(buf)), 300);
	gso_stream__close(a);
	gso_stream__close(b);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* Closing a listener resets the connections nobody accepted. */
Test(tcp_listen, close_resets_queued)
{
	struct fk *f = fk_new();
	struct gso_engine *e = engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV4, 0, 0, 0, 0, 0);
	uint32_t iss = handshake(f, e, GSO_L3_IPV4, 48200, 10);
	unsigned mark = f->n;

	cr_assert_eq(gso_listener__close(l), 0);
	cr_assert_eq(count_to(f, 48200, mark, GSO_TCP_RST, 0), 1);
	cr_assert_eq(last_to(f, 48200, mark)->seq, iss + 1);
	cr_assert_eq(gso_listener__info(l, &(struct gso_listener_info){ .sz = sizeof(struct gso_listener_info) }),
		     -EBADF);
	/* Nobody listens now: a SYN is nobody's. */
	struct pseg g = client_syn(GSO_L3_IPV4, 48201, 1);
	mark = f->n;
	inject(e, &g);
	cr_assert_eq(f->n, mark);
	gso_engine__destroy(e);
}

/* TIME_WAIT: an old SYN (sequence number not past it) is answered with an ACK, not taken. */
Test(tcp_close, time_wait_old_syn)
{
	struct conn c = conn_open(true, GSO_L3_IPV4, 0);
	const struct frec *r;
	unsigned mark;

	cr_assert_eq(gso_stream__shutdown(c.s), 0);
	run_until(c.e, vnow + MS);
	sync_oseq(&c);
	pctl(&c, c.irs, GSO_TCP_ACK | GSO_TCP_FIN);
	cr_assert_eq(linfo(c.l).time_wait, 1);
	struct pseg g = client_syn(c.l3, c.pport, c.irs - 1000);
	g.ts = false;
	mark = c.f->n;
	inject(c.e, &g);
	r = last_to(c.f, c.pport, mark);
	cr_assert_not_null(r);
	cr_assert_eq(r->flags, GSO_TCP_ACK);
	cr_assert_eq(r->ack, c.irs + 1);
	cr_assert_eq(linfo(c.l).time_wait, 1);
	cr_assert_eq(linfo(c.l).time_wait_reused, 0);
	cr_assert_eq(linfo(c.l).half_open, 0);
	/* An RST ends it. */
	pctl(&c, c.irs + 1, GSO_TCP_RST);
	cr_assert_eq(linfo(c.l).time_wait, 0);
	conn_close(&c);
}

/* Challenge ACKs are throttled: one per 500 ms. */
Test(tcp_close, challenge_ack_throttle)
{
	struct conn c = conn_open(false, GSO_L3_IPV4, 0);
	unsigned mark = c.f->n;

	for (int i = 0; i < 5; i++)
		pctl(&c, c.irs + 100 + (uint32_t)i, GSO_TCP_RST);
	cr_assert_eq(pure_acks(c.f, c.pport, mark), 1);
	cr_assert_eq(sinfo(c.s).challenge_limited, 4);
	vnow += 501 * MS;
	pctl(&c, c.irs + 100, GSO_TCP_RST);
	cr_assert_eq(pure_acks(c.f, c.pport, mark), 2);
	cr_assert_eq(sinfo(c.s).state, GSO_STREAM_ESTABLISHED);
	conn_close(&c);
}

/* Closing an open stream abandons it: the peer gets an RST (at our SND.NXT), not an ACK. */
Test(tcp_close, close_sends_rst)
{
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		unsigned mark = c.f->n;
		const struct frec *r;

		pdata(&c, 0, 100, 0);
		mark = c.f->n;
		cr_assert_eq(gso_stream__close(c.s), 0);
		r = last_to(c.f, c.pport, mark);
		cr_assert_not_null(r, "%s %s: nothing sent", KIND(k));
		cr_assert_eq(r->flags, GSO_TCP_RST | GSO_TCP_ACK, "%s %s: flags %#x", KIND(k), r->flags);
		cr_assert_eq(r->seq, c.oseq);
		cr_assert_eq(r->ack, c.irs + 100);
		c.s = NULL;
		conn_close(&c);
	}
}

/* The peer's sequence numbers wrap around 2^32 in the middle of the data (in order, then reordered). */
Test(tcp_rx, sequence_wrap)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		peer_isn = 0xffffffffu - 2500 - 1000 * k;
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		const struct frec *r;

		for (uint32_t i = 0; i < 4; i++)
			pdata(&c, i * 1000, 1000, 0);
		pdata(&c, 6000, 1000, 0);
		pdata(&c, 5000, 1000, 0);
		r = last_to(c.f, c.pport, 0);
		cr_assert_eq(r->ack, c.irs + 4000);
		cr_assert_eq(r->nsack, 1);
		cr_assert(r->sack[0][0] == c.irs + 5000 && r->sack[0][1] == c.irs + 7000, "%s %s: merged block", KIND(k));
		pdata(&c, 4000, 1000, GSO_TCP_PSH);
		r = last_to(c.f, c.pport, 0);
		cr_assert_eq(r->ack, c.irs + 7000);
		read_expect(&c, 0, 7000);
		pctl(&c, c.irs + 7000, GSO_TCP_ACK | GSO_TCP_FIN);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_CLOSE_WAIT);
		cr_assert_eq(last_to(c.f, c.pport, 0)->ack, c.irs + 7001);
		conn_close(&c);
	}
}

/* A keepalive (RCV.NXT - 1, no data) is answered with an ACK of where we are. */
Test(tcp_rx, keepalive_answered)
{
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		unsigned mark = c.f->n;

		pctl(&c, c.irs - 1, GSO_TCP_ACK);
		cr_assert_eq(pure_acks(c.f, c.pport, mark), 1, "%s %s", KIND(k));
		cr_assert_eq(last_to(c.f, c.pport, mark)->ack, c.irs);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_ESTABLISHED);
		conn_close(&c);
	}
}

/*
 * Timestamps with delayed ACKs: the ACK echoes the TSval of the earliest
 * segment it acknowledges (RFC 7323 section 4.3, Linux's rcv_wup test),
 * so that the peer's RTT includes the delay.
 */
Test(tcp_rx, delayed_ack_echoes_earliest_tsval)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		uint32_t off = 0, first_ts;
		unsigned mark;

		for (int i = 0; i < 16; i++, off += 1000)
			pdata(&c, off, 1000, 0);
		mark = c.f->n;
		first_ts = c.pts;
		pdata(&c, off, 1000, 0);
		off += 1000;
		vnow += 5 * MS;
		c.pts += 5;
		pdata(&c, off, 1000, 0);
		off += 1000;
		cr_assert_eq(pure_acks(c.f, c.pport, mark), 1);
		const struct frec *r = last_to(c.f, c.pport, mark);
		cr_assert_eq(r->ack, c.irs + off);
		cr_assert_eq(r->tsecr, first_ts, "%s %s: TSecr %u: want the first unacknowledged segment's %u", KIND(k),
			     r->tsecr, first_ts);
		/* A lone segment, ACKed by the timer: its own TSval. */
		mark = c.f->n;
		first_ts = c.pts;
		pdata(&c, off, 1000, 0);
		off += 1000;
		run_until(c.e, vnow + 50 * MS);
		r = last_to(c.f, c.pport, mark);
		cr_assert_eq(r->tsecr, first_ts);
		conn_close(&c);
	}
}

/* We closed first and the peer never sends its FIN (nor a byte): DONE 500 ms after our FIN's ACK. */
Test(tcp_close, fin_wait2_linger)
{
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		uint64_t t;

		cr_assert_eq(gso_stream__shutdown(c.s), 0);
		run_until(c.e, vnow + MS);
		sync_oseq(&c);
		pctl(&c, c.irs, GSO_TCP_ACK);
		t = vnow;
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_CLOSING);
		run_until(c.e, t + 499 * MS);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_CLOSING, "%s %s", KIND(k));
		run_until(c.e, t + 501 * MS);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_DONE, "%s %s", KIND(k));
		cr_assert_eq(sinfo(c.s).err, 0);
		conn_close(&c);
	}
}

/* A cookie is good in its 64-second slot and the next, not later. */
Test(tcp_listen, cookie_age)
{
	struct fk *f = fk_new();
	struct gso_engine *e = engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV4, GSO_LISTEN_F_COOKIES_ALWAYS, 0, 0, 0, 0);
	struct gso_stream *s;

	for (int late = 0; late < 2; late++) {
		uint16_t port = (uint16_t)(49000 + late);
		struct pseg g = client_syn(GSO_L3_IPV4, port, 1000);

		vnow = (uint64_t)(10 + 1000 * late) * 64 * SEC + 3 * SEC; /* early in a slot */
		inject(e, &g);
		const struct frec *r = &f->r[f->n - 1];
		vnow += late ? 130 * SEC : 120 * SEC; /* the next slot; or two slots on */
		g = (struct pseg){ .l3 = GSO_L3_IPV4, .sport = port, .dport = OUR_PORT, .seq = 1001, .ack = r->seq + 1,
				   .flags = GSO_TCP_ACK, .win = 502, .ts = true, .tsval = 90000, .tsecr = r->tsval };
		inject(e, &g);
		if (!late) {
			cr_assert_eq(gso_listener__accept(l, &s, NULL), 0, "a cookie of the slot before refused");
			gso_stream__close(s);
		} else {
			cr_assert_eq(gso_listener__accept(l, &s, NULL), -EAGAIN, "a cookie two slots old taken");
			cr_assert_eq(f->r[f->n - 1].flags, GSO_TCP_RST);
		}
	}
	cr_assert_eq(linfo(l).cookies_ok, 1);
	cr_assert_eq(linfo(l).cookies_bad, 1);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* Half-close: after our FIN's ACK the peer goes on sending for longer than idle_ns; we keep receiving. */
Test(tcp_close, fin_wait2_keeps_receiving)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		uint32_t off = 0;

		cr_assert_eq(gso_stream__shutdown(c.s), 0);
		run_until(c.e, vnow + MS);
		sync_oseq(&c);
		pctl(&c, c.irs, GSO_TCP_ACK);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_CLOSING);
		for (int i = 0; i < 30; i++, off += 100) {
			pdata(&c, off, 100, 0);
			read_expect(&c, off, 100);
			run_until(c.e, vnow + SEC);
			cr_assert_eq(sinfo(c.s).state, GSO_STREAM_CLOSING, "%s %s: ended after %d s of a talking peer",
				     KIND(k), i + 1);
		}
		pdata(&c, off, 0, GSO_TCP_FIN);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_DONE);
		/* Then silent for idle_ns: the end. */
		conn_close(&c);
	}
}

/* The window of the handshake's ACK is scaled by the client's shift (from the table, and from a cookie). */
Test(tcp_listen, handshake_ack_window_scaled)
{
	fill_pattern();
	for (int cookie = 0; cookie < 2; cookie++) {
		struct fk *f = fk_new();
		struct gso_engine *e = engine(f);
		struct gso_listener *l = listen_on(e, GSO_L3_IPV4, cookie ? GSO_LISTEN_F_COOKIES_ALWAYS : 0, 0, 0, 0, 0);
		struct gso_stream *s;
		struct pseg g = client_syn(GSO_L3_IPV4, 52000, 100);
		uint32_t sent = 0;
		unsigned mark;

		inject(e, &g);
		g = (struct pseg){ .l3 = GSO_L3_IPV4, .sport = 52000, .dport = OUR_PORT, .seq = 101,
				   .ack = f->r[0].seq + 1, .flags = GSO_TCP_ACK, .win = 10, .ts = true, .tsval = 70001,
				   .tsecr = f->r[0].tsval };
		inject(e, &g);
		cr_assert_eq(gso_listener__accept(l, &s, NULL), 0);
		run_until(e, vnow + MS);
		mark = f->n;
		cr_assert_eq(gso_stream__write(s, pattern, 5000), 5000);
		run_until(e, vnow + 10 * MS);
		for (unsigned i = mark; i < f->n; i++)
			sent += f->r[i].len;
		cr_assert_gt(sent, 10, "cookie %d: the window taken unscaled (%u bytes sent)", cookie, sent);
		cr_assert_leq(sent, 10u << 7, "cookie %d: %u bytes sent into a window of %u", cookie, sent, 10u << 7);
		gso_stream__close(s);
		gso_listener__close(l);
		gso_engine__destroy(e);
	}
}

/* opts.mss caps what our SYN announces and the segments; the peer's smaller MSS wins over the device's. */
Test(tcp_hs, active_mss)
{
	static const struct {
		uint8_t l3;
		uint32_t cap, peer, flags, want_syn, want_mss;
	} cases[] = {
		{ GSO_L3_IPV4, 0, 1460, 0, 1460, 1448 },
		{ GSO_L3_IPV6, 0, 1460, 0, 1440, 1428 },
		{ GSO_L3_IPV4, 1000, 1460, 0, 1000, 988 },
		{ GSO_L3_IPV4, 0, 900, 0, 1460, 888 },
		{ GSO_L3_IPV6, 1200, 1300, GSO_STREAM_F_NO_TS, 1200, 1200 },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fk *f = fk_new();
		struct gso_engine *e = engine(f);
		uint8_t l3 = cases[i].l3;
		size_t al = l3 == GSO_L3_IPV6 ? 16 : 4;
		GSO_OPTS(gso_route, rt, .l3 = l3, .mtu = 1500);
		GSO_OPTS(gso_stream_opts, o, .route = &rt, .sport = OUR_PORT, .dport = 40000, .mss = cases[i].cap,
			 .flags = cases[i].flags);
		struct gso_stream *s;

		memcpy(rt.src, l3 == GSO_L3_IPV6 ? our6 : our4, al);
		memcpy(rt.dst, l3 == GSO_L3_IPV6 ? peer6 : peer4, al);
		memcpy(rt.nexthop, rt.dst, al);
		cr_assert_eq(gso_stream__connect(&s, e, &o), 0);
		cr_assert_eq(f->r[0].mss, cases[i].want_syn, "case %u: SYN MSS %u", i, f->r[0].mss);
		cr_assert_eq(f->r[0].has_ts, !(cases[i].flags & GSO_STREAM_F_NO_TS));
		struct pseg g = { .l3 = l3, .sport = 40000, .dport = OUR_PORT, .seq = 1, .ack = f->r[0].seq + 1,
				  .flags = GSO_TCP_SYN | GSO_TCP_ACK, .win = 65535, .mss = (uint16_t)cases[i].peer,
				  .sackperm = true, .ts = true, .tsval = 5, .tsecr = f->r[0].tsval, .has_ws = true, .ws = 2 };
		inject(e, &g);
		run_until(e, vnow + MS);
		struct gso_stream_info si = sinfo(s);
		cr_assert_eq(si.mss, cases[i].want_mss, "case %u: mss %u", i, si.mss);
		cr_assert_eq(si.timestamps, !(cases[i].flags & GSO_STREAM_F_NO_TS));
		cr_assert_eq(si.hdr_len, 14 + (l3 == GSO_L3_IPV6 ? 40u : 20u) + 20 + (si.timestamps ? 12u : 0u));
		/* A full segment of ours is exactly that long. */
		unsigned mark = f->n;
		cr_assert_eq(gso_stream__write(s, pattern, 3 * si.mss), (int)(3 * si.mss));
		run_until(e, vnow + MS);
		cr_assert_eq(f->r[f->n - 1].mss_seg, si.mss);
		cr_assert_gt(f->n, mark);
		gso_stream__close(s);
		gso_engine__destroy(e);
	}
}

/* Peek across the end of the receive ring: the first part, then the rest. */
Test(tcp_rx, peek_across_ring_end)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, GSO_STREAM_MIN_RCVBUF);
		const void *p;
		uint32_t len, got = 0;

		pdata(&c, 0, 3000, 0);
		read_expect(&c, 0, 3000);
		pdata(&c, 3000, 1000, 0);
		pdata(&c, 4000, 2000, 0);
		cr_assert_eq(sinfo(c.s).rx_queued, 3000);
		cr_assert_eq(gso_stream__peek(c.s, &p, &len), 0);
		cr_assert(len > 0 && len < 3000, "%s %s: one run of %u bytes across the ring's end", KIND(k), len);
		while (got < 3000) {
			cr_assert_eq(gso_stream__peek(c.s, &p, &len), 0);
			cr_assert_eq(memcmp(p, pattern + 3000 + got, len), 0, "%s %s: bytes at %u", KIND(k), 3000 + got);
			cr_assert_eq(gso_stream__consume(c.s, len), 0);
			got += len;
		}
		cr_assert_eq(got, 3000);
		cr_assert_eq(gso_stream__peek(c.s, &p, &len), -EAGAIN);
		conn_close(&c);
	}
}

/* A bare FIN at RCV.NXT into a zero window is taken (as Linux does); a FIN behind cut-off bytes is not. */
Test(tcp_close, fin_into_zero_window)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, GSO_STREAM_MIN_RCVBUF);

		pdata(&c, 0, 4000, 0);
		pdata(&c, 4000, 500, GSO_TCP_FIN); /* 96 fit: the FIN behind the rest is not taken */
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_ESTABLISHED, "%s %s", KIND(k));
		cr_assert_eq(sinfo(c.s).rx_beyond_wnd, 404);
		cr_assert_eq(last_to(c.f, c.pport, 0)->win, 0);
		cr_assert_eq(last_to(c.f, c.pport, 0)->ack, c.irs + 4096);
		pctl(&c, c.irs + 4096, GSO_TCP_ACK | GSO_TCP_FIN);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_CLOSE_WAIT, "%s %s: FIN into a zero window", KIND(k));
		cr_assert_eq(last_to(c.f, c.pport, 0)->ack, c.irs + 4097);
		read_expect(&c, 0, 4096);
		cr_assert_eq(gso_stream__read(c.s, pattern + (1 << 19), 1), 0);
		conn_close(&c);
	}
}

/* A stream nobody accepted yet acknowledges as any other: quick ACKs, then the delayed-ACK timer. */
Test(tcp_listen, acks_before_accept)
{
	struct fk *f = fk_new();
	struct gso_engine *e = engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV4, 0, 0, 0, 0, 0);
	uint32_t iss = handshake(f, e, GSO_L3_IPV4, 53000, 0), off = 0;
	struct gso_stream *s;
	unsigned mark = f->n;
	uint64_t t;

	fill_pattern();
	for (int i = 0; i < 17; i++, off += 1000) {
		struct pseg g = { .l3 = GSO_L3_IPV4, .sport = 53000, .dport = OUR_PORT, .seq = 1 + off, .ack = iss + 1,
				  .flags = GSO_TCP_ACK, .win = 502, .ts = true, .tsval = 70010 + (uint32_t)i,
				  .tsecr = f->r[0].tsval, .data = pattern + off, .len = 1000 };
		t = vnow;
		inject(e, &g);
	}
	cr_assert_eq(pure_acks(f, 53000, mark), 16);
	run_until(e, t + 41 * MS);
	cr_assert_eq(pure_acks(f, 53000, mark), 17);
	cr_assert_eq(last_to(f, 53000, mark)->ack, 1 + off);
	cr_assert_eq(last_to(f, 53000, mark)->t, t + 40 * MS);
	cr_assert_eq(gso_listener__accept(l, &s, NULL), 0);
	cr_assert_eq(sinfo(s).rx_queued, 17000);
	cr_assert_eq(sinfo(s).acks_delayed, 1);
	gso_stream__close(s);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/*
 * TIME_WAIT as Linux keeps it (tcp_timewait_state_process): a bare ACK
 * at RCV.NXT is absorbed without an answer (two TIME_WAITs, ours and a
 * peer's after a simultaneous close, would otherwise ACK each other for
 * ever); an RST kills the entry only at RCV.NXT (a blind RST does not).
 */
Test(tcp_close, time_wait_bare_ack_and_blind_rst)
{
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		unsigned mark;

		tw_listener(&c);
		cr_assert_eq(gso_stream__shutdown(c.s), 0);
		run_until(c.e, vnow + MS);
		sync_oseq(&c);
		pctl(&c, c.irs, GSO_TCP_ACK | GSO_TCP_FIN);
		cr_assert_eq(linfo(c.l).time_wait, 1);
		mark = c.f->n;
		pctl(&c, c.irs + 1, GSO_TCP_ACK);
		cr_assert_eq(c.f->n, mark, "%s %s: TIME_WAIT answered a bare ACK (an ACK loop with a peer's TIME_WAIT)",
			     KIND(k));
		pctl(&c, c.irs + 1 + 5000, GSO_TCP_RST);
		pctl(&c, c.irs - 5000, GSO_TCP_RST | GSO_TCP_ACK);
		cr_assert_eq(linfo(c.l).time_wait, 1, "%s %s: a blind RST killed TIME_WAIT", KIND(k));
		cr_assert_eq(c.f->n, mark);
		pctl(&c, c.irs + 1, GSO_TCP_RST);
		cr_assert_eq(linfo(c.l).time_wait, 0);
		conn_close(&c);
	}
}

/* TIME_WAIT reuse by timestamps (RFC 6191): a SYN whose sequence number is not past the old one, but whose TSval is. */
Test(tcp_close, time_wait_reuse_by_timestamp)
{
	struct conn c = conn_open(true, GSO_L3_IPV6, 0);
	const struct frec *r;
	unsigned mark;

	cr_assert_eq(gso_stream__shutdown(c.s), 0);
	run_until(c.e, vnow + MS);
	sync_oseq(&c);
	pctl(&c, c.irs, GSO_TCP_ACK | GSO_TCP_FIN);
	cr_assert_eq(linfo(c.l).time_wait, 1);
	/* An older TSval and an older sequence number: an ACK, still TIME_WAIT. */
	struct pseg g = client_syn(c.l3, c.pport, c.irs - 100000);
	g.tsval = c.pts - 1000;
	mark = c.f->n;
	inject(c.e, &g);
	r = last_to(c.f, c.pport, mark);
	cr_assert_eq(r->flags, GSO_TCP_ACK);
	cr_assert_eq(linfo(c.l).time_wait, 1);
	/* A newer TSval: taken over. */
	g.tsval = c.pts + 1000;
	mark = c.f->n;
	inject(c.e, &g);
	r = last_to(c.f, c.pport, mark);
	cr_assert_eq(r->flags, GSO_TCP_SYN | GSO_TCP_ACK);
	cr_assert_eq(r->ack, c.irs - 100000 + 1);
	cr_assert_eq(linfo(c.l).time_wait_reused, 1);
	cr_assert_eq(linfo(c.l).time_wait, 0);
	conn_close(&c);
}
