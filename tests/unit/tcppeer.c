/*
 * The scripted TCP peer of tcppeer.h: the recording device, the peer's
 * frames, connections.
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
#include "tcppeer.h"

/* ---- the fake device: every segment, parsed ---- */

uint64_t vnow;

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

		f->sent++;
		if (f->discard)
			continue;
		cr_assert_lt(f->n, MAX_REC);
		r = &f->r[f->n++];
		memset(r, 0, sizeof(*r));
		r->t = vnow;
		r->l3 = t->l3;
		r->l4 = t->l4;
		r->sport = be16(l4);
		r->dport = be16(l4 + 2);
		r->len = tx[k].len;
		r->mss_seg = tx[k].mss;
		pl = tx[k].buf ? tx[k].buf->data + tx[k].off : tx[k].data;
		if (pl)
			memcpy(r->data, pl, r->len < PEEK ? r->len : PEEK);
		if (t->l4 != GSO_L4_TCP)
			continue; /* a datagram flow's (test_dgram_rx.c): ports, length and payload are all */
		r->seq = be32(l4 + 4);
		r->ack = be32(l4 + 8);
		r->flags = l4[13];
		r->win = be16(l4 + 14);
		parse_opts(r, l4 + 20, (l4[12] >> 4) * 4u - 20);
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
	return ((const struct fk *)d)->stuck;
}

static const struct gso_dev_ops k_ops = {
	.kind = "fake-tcp", .caps = k_caps, .plan = k_plan, .submit = k_submit, .kick = k_kick, .reap = k_reap,
	.stats = k_stats, .close = k_close, .destroy = k_destroy, .inflight = k_inflight,
};

/* ---- events ---- */

struct evlog *evs;

static void on_event(void *ctx, const struct gso_engine_event *ev)
{
	(void)ctx;
	cr_assert_lt(evs->n, MAX_EV);
	evs->ev[evs->n++] = *ev;
}

unsigned nev(uint32_t type, unsigned from)
{
	unsigned n = 0;

	for (unsigned i = from; i < evs->n; i++)
		n += evs->ev[i].type == type;
	return n;
}

uint32_t peer_isn;

void tp_setup(void)
{
	peer_isn = 0;
	evs = calloc(1, sizeof(*evs));
	cr_assert_not_null(evs);
	vnow = 1 * SEC;
}

void tp_teardown(void)
{
	free(evs);
}

struct fk *fk_new(void)
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

struct gso_engine *tp_engine(struct fk *f)
{
	GSO_OPTS(gso_engine_opts, o, .max_flows = 4096, .on_event = on_event, .clock = vclock,
		 .flags = GSO_ENGINE_F_NO_LINK_MONITOR);
	struct gso_engine *e = NULL;

	cr_assert_eq(gso_engine__create(&e, &f->dev, &o), 0);
	return e;
}

void run_until(struct gso_engine *e, uint64_t until)
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

const uint8_t our4[4] = { 10, 0, 0, 1 }, peer4[4] = { 10, 0, 0, 2 };
const uint8_t our6[16] = { 0xfd, [15] = 1 }, peer6[16] = { 0xfd, [15] = 2 };

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
void inject(struct gso_engine *h, const struct pseg *p)
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
const struct frec *last_to(const struct fk *f, uint16_t pport, unsigned from)
{
	for (unsigned i = f->n; i-- > from;)
		if (f->r[i].dport == pport)
			return &f->r[i];
	return NULL;
}

/* Segments to `pport` from `from` on with all of `flags` set (0: any), and without `not`. */
unsigned count_to(const struct fk *f, uint16_t pport, unsigned from, uint8_t flags, uint8_t not)
{
	unsigned n = 0;

	for (unsigned i = from; i < f->n; i++)
		n += f->r[i].dport == pport && (f->r[i].flags & flags) == flags && !(f->r[i].flags & not);
	return n;
}

/* Pure ACKs (no data, no SYN/FIN/RST) to `pport` from `from` on. */
unsigned pure_acks(const struct fk *f, uint16_t pport, unsigned from)
{
	unsigned n = 0;

	for (unsigned i = from; i < f->n; i++)
		n += f->r[i].dport == pport && f->r[i].flags == GSO_TCP_ACK && !f->r[i].len;
	return n;
}

struct gso_stream_info sinfo(struct gso_stream *s)
{
	struct gso_stream_info si = { .sz = sizeof(si) };

	cr_assert_eq(gso_stream__info(s, &si), 0);
	return si;
}

struct gso_listener_info linfo(struct gso_listener *l)
{
	struct gso_listener_info li = { .sz = sizeof(li) };

	cr_assert_eq(gso_listener__info(l, &li), 0);
	return li;
}

struct gso_listener *listen_on(struct gso_engine *e, uint8_t l3, uint32_t flags, uint32_t backlog,
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
struct pseg client_syn(uint8_t l3, uint16_t pport, uint32_t isn)
{
	return (struct pseg){ .l3 = l3, .sport = pport, .dport = OUR_PORT, .seq = isn, .flags = GSO_TCP_SYN,
			      .win = 64240, .mss = 1460, .sackperm = true, .ts = true, .tsval = 70000,
			      .has_ws = true, .ws = 7 };
}

/* ---- a connection and its peer, accepted or connected ---- */

/* A segment of the peer on connection c (ACK of everything we sent, timestamps, window 512 << 7). */
struct pseg cseg(const struct conn *c, uint32_t seq, uint8_t flags, const uint8_t *data, uint32_t len)
{
	const struct frec *last = last_to(c->f, c->pport, 0);

	return (struct pseg){ .l3 = c->l3, .sport = c->pport, .dport = OUR_PORT, .seq = seq, .ack = c->oseq,
			      .flags = flags, .win = 512, .ts = true, .tsval = c->pts,
			      .tsecr = last ? last->tsval : 0, .data = data, .len = len };
}

uint8_t pattern[1 << 20];

/* The peer sends bytes [off, off + len) of the pattern (offsets from the stream's first byte). */
void pdata(struct conn *c, uint32_t off, uint32_t len, uint8_t flags)
{
	struct pseg g = cseg(c, c->irs + off, GSO_TCP_ACK | flags, pattern + off, len);

	c->pts++;
	inject(c->e, &g);
}

void pctl(struct conn *c, uint32_t seq, uint8_t flags)
{
	struct pseg g = cseg(c, seq, flags, NULL, 0);

	c->pts++;
	inject(c->e, &g);
}

/* The peer's ISN for conn_open (0: a fixed one of its own): peer_isn, set before. */

/*
 * A connection's handshake up to our SYN-ACK (accepted from a listener:
 * passive) or our SYN (connected), over l3, with a receive buffer of
 * rcvbuf bytes; the peer offers everything (MSS 1460, SACK, timestamps,
 * window scale 7).  conn_finish() completes it.
 */
struct conn conn_start(bool passive, uint8_t l3, uint32_t rcvbuf)
{
	struct conn c = { .passive = passive, .l3 = l3, .pport = 40000, .pts = 500000 };
	const struct frec *r;

	c.f = fk_new();
	c.e = tp_engine(c.f);
	if (passive) {
		struct pseg g = client_syn(l3, c.pport, peer_isn ? peer_isn : 9000);

		c.l = listen_on(c.e, l3, 0, 0, 0, rcvbuf, 0);
		inject(c.e, &g);
		r = last_to(c.f, c.pport, 0);
		cr_assert_not_null(r);
		cr_assert_eq(r->flags, GSO_TCP_SYN | GSO_TCP_ACK);
		c.irs = (peer_isn ? peer_isn : 9000) + 1;
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
		c.irs = (peer_isn ? peer_isn : 7000) + 1;
	}
	c.oseq = r->seq + 1;
	c.ows = r->ws;
	return c;
}

/* The peer's last step of conn_start()'s handshake: its ACK of our SYN-ACK, or its SYN-ACK. */
void conn_finish(struct conn *c)
{
	struct pseg g;

	if (c->passive) {
		g = cseg(c, c->irs, GSO_TCP_ACK, NULL, 0);
		inject(c->e, &g);
		cr_assert_eq(gso_listener__accept(&c->s, c->l, NULL), 0);
	} else {
		g = cseg(c, c->irs - 1, GSO_TCP_SYN | GSO_TCP_ACK, NULL, 0);
		g.win = 65160;
		g.mss = 1460;
		g.sackperm = true;
		g.has_ws = true;
		g.ws = 7;
		inject(c->e, &g);
	}
	run_until(c->e, vnow + MS);
	cr_assert_eq(sinfo(c->s).state, GSO_STREAM_ESTABLISHED);
	cr_assert(sinfo(c->s).mss > 0, "sized");
}

/* An established stream (conn_start() and conn_finish()). */
struct conn conn_open(bool passive, uint8_t l3, uint32_t rcvbuf)
{
	struct conn c = conn_start(passive, l3, rcvbuf);

	conn_finish(&c);
	return c;
}

void conn_close(struct conn *c)
{
	struct gso_engine_stats st = { .sz = sizeof(st) };

	/* Every frame of the peer had right checksums (else the test tested nothing). */
	cr_assert_eq(gso_engine__stats(c->e, &st), 0);
	cr_assert_eq(st.rx_bad_csum, 0);
	cr_assert_eq(st.rx_csum_partial, 0);
	gso_stream__close(c->s);
	if (c->l)
		gso_listener__close(c->l);
	gso_engine__destroy(c->e);
}

/* Accepted over IPv4, connected over IPv6, and the reverse. */
const struct kind kinds[NKINDS] = {
	{ true, GSO_L3_IPV4 }, { false, GSO_L3_IPV6 }, { true, GSO_L3_IPV6 }, { false, GSO_L3_IPV4 },
};

void fill_pattern(void)
{
	for (size_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (uint8_t)(i * 131 + (i >> 8));
}

/* One client's full handshake: SYN, then its ACK of our SYN-ACK.  Returns our ISN. */
uint32_t handshake(struct fk *f, struct gso_engine *e, uint8_t l3, uint16_t pport, uint32_t isn)
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

bool after32(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

/* What the peer has of ours: past every byte, SYN and FIN we sent (c->oseq), so its ACKs cover them. */
void sync_oseq(struct conn *c)
{
	for (unsigned i = 0; i < c->f->n; i++) {
		const struct frec *r = &c->f->r[i];
		uint32_t end = r->seq + r->len + !!(r->flags & GSO_TCP_FIN) + !!(r->flags & GSO_TCP_SYN);

		if (r->dport == c->pport && !(r->flags & GSO_TCP_RST) && after32(end, c->oseq))
			c->oseq = end;
	}
}

/* Events of type `type` for the connection's stream from event `from` on. */
unsigned sev(const struct conn *c, uint32_t type, unsigned from)
{
	unsigned n = 0;

	for (unsigned i = from; i < evs->n; i++)
		n += evs->ev[i].type == type && evs->ev[i].stream == c->s;
	return n;
}

void read_expect(struct conn *c, uint32_t off, uint32_t len)
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

/* A listener on the connection's engine, for its TIME_WAIT counters (the passive kinds have theirs). */
struct gso_listener *tw_listener(struct conn *c)
{
	if (!c->l)
		c->l = listen_on(c->e, c->l3, 0, 0, 0, 0, 0);
	return c->l;
}

/* The connection ended with `err` (one CLOSED event since e0), and `tw` 4-tuples are in TIME_WAIT. */
void expect_end(struct conn *c, unsigned k, unsigned e0, int err, uint64_t tw)
{
	struct gso_stream_info si = sinfo(c->s);

	cr_assert_eq(si.state, err ? GSO_STREAM_FAILED : GSO_STREAM_DONE, "%s %s: state %u", KIND(k), si.state);
	cr_assert_eq(si.err, err, "%s %s: err %d", KIND(k), si.err);
	cr_assert_eq(sev(c, GSO_EV_STREAM_CLOSED, e0), 1, "%s %s: CLOSED events", KIND(k));
	cr_assert_eq(linfo(c->l).time_wait, tw, "%s %s: %lu in TIME_WAIT, want %lu", KIND(k),
		     (unsigned long)linfo(c->l).time_wait, (unsigned long)tw);
}
