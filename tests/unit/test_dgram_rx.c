/*
 * Datagram receive and departure-time sends (engine.h, "Datagram
 * receive", gso_dgram__send_at) over the fake device of tcppeer.c, in
 * virtual time: which frames a listener takes (its address and port
 * only), the kernel's udp_rcv checks (lengths, IPv4 header and UDP
 * checksums, a zero UDP checksum over IPv4 and IPv6), what on_recv is
 * given, RECV_DONE once per receive pass, reply flows, and timed sends
 * leaving at their time and in order.
 */
#include <criterion/criterion.h>

#include <string.h>

#include <gso/csum.h>

#include "engine/engine_internal.h"
#include "tcppeer.h"

#define QPORT 4433
#define PPORT 50000

enum mangle { M_NONE, M_BAD_CSUM, M_ZERO_CSUM, M_PARTIAL, M_ULEN_SHORT, M_ULEN_LONG, M_BAD_IPCSUM, M_TRAILER,
	      M_FRAG };

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* One UDP datagram from the peer to `dport`, with right checksums unless `m` says otherwise. */
static void inject_udp(struct gso_engine *e, uint8_t l3, uint16_t sport, uint16_t dport, const void *data,
		       uint32_t len, enum mangle m)
{
	static uint8_t fr[14 + 40 + 8 + 2000 + 8];
	uint8_t *ip = fr + 14, *u;
	unsigned iph = l3 == GSO_L3_IPV6 ? 40 : 20, ul = 8 + len, extra = m == M_TRAILER ? 6 : 0;
	uint32_t seed;
	uint16_t c;

	memset(fr, 0, sizeof(fr));
	memcpy(fr, "\x02\0\0\0\0\1", 6);
	memcpy(fr + 6, "\x02\0\0\0\0\2", 6);
	u = ip + iph;
	if (l3 == GSO_L3_IPV6) {
		fr[12] = 0x86, fr[13] = 0xdd;
		ip[0] = 0x60 | 0x0b; /* traffic class 0xb1: ECN CE in the low bits */
		ip[1] = 0x10;
		put16(ip + 4, (uint16_t)(ul + extra));
		ip[6] = 17;
		ip[7] = 64;
		memcpy(ip + 8, peer6, 16);
		memcpy(ip + 24, our6, 16);
	} else {
		fr[12] = 0x08;
		ip[0] = 0x45;
		ip[1] = 0x02; /* ECT(0) */
		put16(ip + 2, (uint16_t)(iph + ul + extra));
		ip[6] = m == M_FRAG ? 0x20 : 0x40;
		ip[8] = 64;
		ip[9] = 17;
		memcpy(ip + 12, peer4, 4);
		memcpy(ip + 16, our4, 4);
		c = gso_csum_finish(gso_csum_partial(ip, 20, 0));
		memcpy(ip + 10, &c, 2);
		if (m == M_BAD_IPCSUM)
			ip[10] ^= 1;
	}
	put16(u, sport);
	put16(u + 2, dport);
	put16(u + 4, (uint16_t)(m == M_ULEN_SHORT ? 7 : m == M_ULEN_LONG ? ul + 1 : ul));
	if (len)
		memcpy(u + 8, data, len);
	seed = l3 == GSO_L3_IPV6 ? gso_csum_pseudo6(ip + 8, ip + 24, 17, ul) : gso_csum_pseudo4(ip + 12, ip + 16, 17, ul);
	if (m == M_PARTIAL) {
		c = gso_csum_fold(seed); /* the folded pseudo-header alone, as a local sender leaves it */
	} else {
		c = gso_csum_finish(gso_csum_partial(u, ul, seed));
		if (!c)
			c = 0xffff;
	}
	memcpy(u + 6, &c, 2);
	if (m == M_BAD_CSUM)
		u[8] ^= 0x40;
	if (m == M_ZERO_CSUM)
		u[6] = u[7] = 0;
	gsoi_engine_input_frame(gsoi_engine_of(e), gso_engine__dev(e), fr, 14 + iph + ul + extra);
}

static struct {
	unsigned n;
	struct gso_dgram_msg last;
	uint8_t data[2000];
	struct gso_dgram_listener *l;
	void *ctx;
	struct gso_dgram *reply; /* opened from inside on_recv when asked */
	bool open_reply;
	int reply_err;
} got;

static void on_recv(void *ctx, struct gso_dgram_listener *l, const struct gso_dgram_msg *m)
{
	got.n++;
	got.last = *m;
	got.l = l;
	got.ctx = ctx;
	memcpy(got.data, m->data, m->len);
	if (got.open_reply && !got.reply)
		got.reply_err = gso_dgram__open_reply(&got.reply, l, m, NULL);
}

static struct gso_dgram_listener *dlisten(struct gso_engine *e, uint8_t l3)
{
	GSO_OPTS(gso_dgram_listen_opts, o, .l3 = l3, .port = QPORT, .on_recv = on_recv, .ctx = (void *)0x51);
	struct gso_dgram_listener *l = NULL;

	memcpy(o.addr, l3 == GSO_L3_IPV6 ? our6 : our4, l3 == GSO_L3_IPV6 ? 16 : 4);
	cr_assert_eq(gso_dgram_listener__open(&l, e, &o), 0);
	return l;
}

static struct gso_dgram_listener_info dinfo(struct gso_dgram_listener *l)
{
	GSO_OPTS(gso_dgram_listener_info, i);

	cr_assert_eq(gso_dgram_listener__info(l, &i), 0);
	return i;
}

static void setup(void)
{
	tp_setup();
	memset(&got, 0, sizeof(got));
}

TestSuite(dgram_rx, .init = setup, .fini = tp_teardown, .timeout = 60);

static void delivers(uint8_t l3)
{
	struct fk *f = fk_new();
	struct gso_engine *e = tp_engine(f);
	struct gso_dgram_listener *l = dlisten(e, l3);
	struct gso_dgram_listener_info i;
	unsigned ev0 = evs->n;

	inject_udp(e, l3, PPORT, QPORT, "hello, quic", 11, M_NONE);
	cr_assert_eq(got.n, 1);
	cr_assert_eq(got.l, l);
	cr_assert_eq(got.ctx, (void *)0x51);
	cr_assert_eq(got.last.sz, sizeof(struct gso_dgram_msg));
	cr_assert_eq(got.last.len, 11);
	cr_assert_arr_eq(got.data, "hello, quic", 11);
	cr_assert_eq(got.last.l3, l3);
	cr_assert_eq(got.last.sport, PPORT);
	cr_assert_eq(got.last.dport, QPORT);
	cr_assert_eq(got.last.tos, l3 == GSO_L3_IPV6 ? 0xb1 : 0x02);
	cr_assert_arr_eq(got.last.saddr, l3 == GSO_L3_IPV6 ? peer6 : peer4, l3 == GSO_L3_IPV6 ? 16 : 4);
	cr_assert_arr_eq(got.last.daddr, l3 == GSO_L3_IPV6 ? our6 : our4, l3 == GSO_L3_IPV6 ? 16 : 4);
	cr_assert_arr_eq(got.last.smac, "\x02\0\0\0\0\2", 6);
	cr_assert_arr_eq(got.last.dmac, "\x02\0\0\0\0\1", 6);
	cr_assert_eq(got.last.dev, gso_engine__dev(e));
	cr_assert_eq(got.last.rx_ns, vnow);
	/* One RECV_DONE per receive pass, with the count. */
	cr_assert_eq(nev(GSO_EV_DGRAM_RECV_DONE, ev0), 1);
	for (unsigned k = ev0; k < evs->n; k++)
		if (evs->ev[k].type == GSO_EV_DGRAM_RECV_DONE) {
			cr_assert_eq(evs->ev[k].dlistener, l);
			cr_assert_eq(evs->ev[k].flow_ctx, (void *)0x51);
			cr_assert_eq(evs->ev[k].acked, 1);
		}
	/* An empty datagram is one too; bytes past the UDP length (an Ethernet trailer) are not its. */
	inject_udp(e, l3, PPORT, QPORT, NULL, 0, M_NONE);
	cr_assert_eq(got.n, 2);
	cr_assert_eq(got.last.len, 0);
	inject_udp(e, l3, PPORT, QPORT, "abc", 3, M_TRAILER);
	cr_assert_eq(got.n, 3);
	cr_assert_eq(got.last.len, 3);
	i = dinfo(l);
	cr_assert_eq(i.datagrams, 3);
	cr_assert_eq(i.bytes, 14);
	cr_assert_eq(i.passes, 3);
	cr_assert_eq(i.bad_csum + i.bad_len + i.csum_partial, 0);
	cr_assert_eq(gso_dgram_listener__close(l), 0);
	cr_assert_eq(gso_dgram_listener__info(l, &i), -EBADF);
	cr_assert_eq(gso_dgram_listener__close(l), -EBADF);
	/* Closed: the port's datagrams are no one's. */
	inject_udp(e, l3, PPORT, QPORT, "x", 1, M_NONE);
	cr_assert_eq(got.n, 3);
	gso_engine__destroy(e);
}

Test(dgram_rx, delivers_v4)
{
	delivers(GSO_L3_IPV4);
}

Test(dgram_rx, delivers_v6)
{
	delivers(GSO_L3_IPV6);
}

/* The kernel's udp_rcv checks: what fails is dropped and counted, never delivered. */
static void checks(uint8_t l3)
{
	struct fk *f = fk_new();
	struct gso_engine *e = tp_engine(f);
	struct gso_dgram_listener *l = dlisten(e, l3);
	struct gso_dgram_listener_info i;
	struct gso_engine_stats st = { .sz = sizeof(st) };

	inject_udp(e, l3, PPORT, QPORT, "data", 4, M_BAD_CSUM);
	inject_udp(e, l3, PPORT, QPORT, "data", 4, M_ULEN_SHORT);
	inject_udp(e, l3, PPORT, QPORT, "data", 4, M_ULEN_LONG);
	cr_assert_eq(got.n, 0);
	i = dinfo(l);
	cr_assert_eq(i.bad_csum, 1);
	cr_assert_eq(i.bad_len, 2);
	/* No checksum: allowed over IPv4 (RFC 768), refused over IPv6 (RFC 8200 8.1). */
	inject_udp(e, l3, PPORT, QPORT, "data", 4, M_ZERO_CSUM);
	cr_assert_eq(got.n, l3 == GSO_L3_IPV4 ? 1u : 0u);
	cr_assert_eq(dinfo(l).bad_csum, l3 == GSO_L3_IPV4 ? 1u : 2u);
	/* A local sender's CHECKSUM_PARTIAL: taken, counted. */
	inject_udp(e, l3, PPORT, QPORT, "data", 4, M_PARTIAL);
	i = dinfo(l);
	cr_assert_eq(i.csum_partial, 1);
	cr_assert_eq(got.n, l3 == GSO_L3_IPV4 ? 2u : 1u);
	if (l3 == GSO_L3_IPV4) {
		inject_udp(e, l3, PPORT, QPORT, "data", 4, M_BAD_IPCSUM);
		cr_assert_eq(dinfo(l).bad_csum, 2);
		/* A fragment is never a listener's (the kernel reassembles). */
		inject_udp(e, l3, PPORT, QPORT, "data", 4, M_FRAG);
		cr_assert_eq(got.n, 2);
	}
	/* Another port: not the listener's, and no counter of its moves. */
	cr_assert_eq(gso_engine__stats(e, &st), 0);
	{
		uint64_t other = st.rx_other;
		struct gso_dgram_listener_info before = dinfo(l);

		inject_udp(e, l3, PPORT, QPORT + 1, "data", 4, M_NONE);
		cr_assert_eq(gso_engine__stats(e, &st), 0);
		cr_assert_eq(st.rx_other, other + 1);
		i = dinfo(l);
		cr_assert_eq(memcmp(&i, &before, sizeof(i)), 0);
	}
	gso_engine__destroy(e);
}

Test(dgram_rx, checks_v4)
{
	checks(GSO_L3_IPV4);
}

Test(dgram_rx, checks_v6)
{
	checks(GSO_L3_IPV6);
}

Test(dgram_rx, open_errors)
{
	struct fk *f = fk_new();
	struct gso_engine *e = tp_engine(f);
	struct gso_dgram_listener *l = dlisten(e, GSO_L3_IPV4), *l2 = NULL;
	GSO_OPTS(gso_dgram_listen_opts, o, .l3 = GSO_L3_IPV4, .port = QPORT, .on_recv = on_recv);

	memcpy(o.addr, our4, 4);
	cr_assert_eq(gso_dgram_listener__open(&l2, e, &o), -EADDRINUSE);
	o.on_recv = NULL;
	cr_assert_eq(gso_dgram_listener__open(&l2, e, &o), -EINVAL);
	o.on_recv = on_recv;
	o.port = 0;
	cr_assert_eq(gso_dgram_listener__open(&l2, e, &o), -EINVAL);
	o.port = QPORT;
	o.l3 = 9;
	cr_assert_eq(gso_dgram_listener__open(&l2, e, &o), -EINVAL);
	o.l3 = GSO_L3_IPV4;
	memset(o.addr, 0, 16);
	cr_assert_eq(gso_dgram_listener__open(&l2, e, &o), -EINVAL);
	cr_assert_eq(gso_dgram_listener__open(NULL, e, &o), -EINVAL);
	cr_assert_null(l2);
	/* Same port on IPv6: another listener. */
	cr_assert_not_null(dlisten(e, GSO_L3_IPV6));
	cr_assert_eq(gso_dgram_listener__info(NULL, &(struct gso_dgram_listener_info){ .sz = 8 }), -EINVAL);
	gso_engine__destroy(e);
	/* Freed with its engine: the handle is stale. */
	cr_assert_eq(gso_dgram_listener__close(l), -EBADF);
}

/* A reply flow answers the datagram's source from the listener's address and port. */
static void replies(uint8_t l3)
{
	struct fk *f = fk_new();
	struct gso_engine *e = tp_engine(f);
	static uint8_t buf[4 * 1200];
	unsigned r0 = f->n, ev0;
	const struct frec *r;

	dlisten(e, l3);
	got.open_reply = true;
	inject_udp(e, l3, PPORT, QPORT, "ping", 4, M_NONE);
	cr_assert_eq(got.reply_err, 0, "%d", got.reply_err);
	cr_assert_not_null(got.reply);
	memset(buf, 0xa5, sizeof(buf));
	ev0 = evs->n;
	/* Four equal datagrams of 1200 bytes in one super-segment. */
	cr_assert_eq(gso_dgram__send(got.reply, buf, sizeof(buf), 1200, 7), 0);
	run_until(e, vnow + MS);
	cr_assert_eq(f->n, r0 + 1);
	r = &f->r[r0];
	cr_assert_eq(r->l4, GSO_L4_UDP);
	cr_assert_eq(r->l3, l3);
	cr_assert_eq(r->sport, QPORT);
	cr_assert_eq(r->dport, PPORT);
	cr_assert_eq(r->len, sizeof(buf));
	cr_assert_eq(r->mss_seg, 1200);
	cr_assert_eq(nev(GSO_EV_DGRAM_SENT, ev0), 1);
	/* A kept copy of the message serves after its callback (the data pointer is not read). */
	{
		struct gso_dgram_msg m = got.last;
		struct gso_dgram *d2 = NULL;
		GSO_OPTS(gso_dgram_opts, bad, .tmpl = (const struct gso_tmpl *)&m);

		m.data = NULL;
		m.sport = PPORT + 1;
		cr_assert_eq(gso_dgram__open_reply(&d2, got.l, &m, NULL), 0);
		cr_assert_eq(gso_dgram__send(d2, buf, 100, 100, 8), 0);
		run_until(e, vnow + MS);
		cr_assert_eq(f->r[f->n - 1].dport, PPORT + 1);
		cr_assert_eq(gso_dgram__open_reply(&d2, got.l, &m, &bad), -EINVAL);
		m.l3 = l3 == GSO_L3_IPV4 ? GSO_L3_IPV6 : GSO_L3_IPV4;
		cr_assert_eq(gso_dgram__open_reply(&d2, got.l, &m, NULL), -EINVAL);
	}
	gso_engine__destroy(e);
}

Test(dgram_rx, reply_v4)
{
	replies(GSO_L3_IPV4);
}

Test(dgram_rx, reply_v6)
{
	replies(GSO_L3_IPV6);
}

/* gso_dgram__send_at: each leaves at its time, not before, in order, the rate aside; SENT says when. */
Test(dgram_rx, send_at)
{
	struct fk *f = fk_new();
	struct gso_engine *e = tp_engine(f);
	static uint8_t buf[1200];
	struct gso_dgram_info di = { .sz = sizeof(di) };
	unsigned r0, ev0;
	uint64_t t0;

	dlisten(e, GSO_L3_IPV4);
	got.open_reply = true;
	inject_udp(e, GSO_L3_IPV4, PPORT, QPORT, "ping", 4, M_NONE);
	cr_assert_not_null(got.reply);
	/* A slow rate that would hold the second send 1 s: departure times are not paced by it. */
	cr_assert_eq(gso_dgram__set_rate(got.reply, 2000), 0);
	r0 = f->n;
	ev0 = evs->n;
	t0 = vnow;
	cr_assert_eq(gso_dgram__send_at(got.reply, buf, 1200, 1200, 1, t0 + 2 * MS), 0);
	cr_assert_eq(gso_dgram__send_at(got.reply, buf, 1200, 1200, 2, t0 + 3 * MS), 0);
	/* Earlier than the one before it: it waits for that one (a flow keeps its order). */
	cr_assert_eq(gso_dgram__send_at(got.reply, buf, 1200, 1200, 3, t0 + 1 * MS), 0);
	/* In the past: at once (after those before it). */
	cr_assert_eq(gso_dgram__send_at(got.reply, buf, 1200, 1200, 4, t0 - MS), 0);
	/* A burst due within the engine's slack leaves at once (engine.h, "Pacing"), no earlier. */
	run_until(e, t0 + 2 * MS - GSO_ENGINE_DEF_SLACK_NS - 1);
	cr_assert_eq(f->n, r0, "nothing leaves before its time");
	run_until(e, t0 + 10 * MS);
	cr_assert_eq(f->n, r0 + 4);
	cr_assert_geq(f->r[r0].t, t0 + 2 * MS - GSO_ENGINE_DEF_SLACK_NS);
	cr_assert_leq(f->r[r0].t, t0 + 2 * MS + GSO_ENGINE_DEF_SLACK_NS);
	cr_assert_geq(f->r[r0 + 1].t, t0 + 3 * MS - GSO_ENGINE_DEF_SLACK_NS);
	cr_assert_leq(f->r[r0 + 1].t, t0 + 3 * MS + GSO_ENGINE_DEF_SLACK_NS);
	cr_assert_geq(f->r[r0 + 2].t, f->r[r0 + 1].t);
	cr_assert_geq(f->r[r0 + 3].t, f->r[r0 + 2].t);
	cr_assert_leq(f->r[r0 + 3].t, t0 + 3 * MS + GSO_ENGINE_DEF_SLACK_NS);
	{
		unsigned seen = 0;

		for (unsigned k = ev0; k < evs->n; k++)
			if (evs->ev[k].type == GSO_EV_DGRAM_SENT) {
				cr_assert_eq(evs->ev[k].cookie, seen + 1);
				cr_assert_eq(evs->ev[k].time_ns, f->r[r0 + seen].t);
				seen++;
			}
		cr_assert_eq(seen, 4);
	}
	cr_assert_eq(gso_dgram__info(got.reply, &di), 0);
	cr_assert_eq(di.timed_sends, 4);
	cr_assert_geq(di.timed_late_ns_max, 2 * MS - GSO_ENGINE_DEF_SLACK_NS, "the one timed 1 ms waited for 3 ms");
	cr_assert_geq(di.timed_late_ns_sum, di.timed_late_ns_max);
	/* A time of another clock (far ahead of the engine's) is refused, and nothing is queued. */
	cr_assert_eq(gso_dgram__send_at(got.reply, buf, 1200, 1200, 9, vnow + GSO_ENGINE_MAX_WAIT_NS + SEC), -ERANGE);
	cr_assert_eq(gso_dgram__info(got.reply, &di), 0);
	cr_assert_eq(di.queued, 0);
	/* at 0 is an ordinary send: paced at the flow's rate again. */
	cr_assert_eq(gso_dgram__send_at(got.reply, buf, 1200, 1200, 5, 0), 0);
	cr_assert_eq(gso_dgram__send(got.reply, buf, 1200, 1200, 6), 0);
	run_until(e, vnow + 100 * MS);
	cr_assert_eq(f->n, r0 + 5, "the second at 2000 B/s waits about 0.6 s");
	gso_engine__destroy(e);
}
