/*
 * TCP passive and active open as a Linux peer sees it, in virtual time,
 * against the scripted peer of tcppeer.h: the handshake's options both
 * ways (what our SYN offers, what a SYN-ACK without options turns off,
 * what a listener's SYN-ACK echoes, what the streams agree), and
 * listeners: the accept queue and its overflow, SYN-ACK retransmissions
 * and the half-open table's end, duplicate SYNs, RSTs, segments of no
 * connection, SYN cookies under a flood and on demand.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include <gso/engine.h>
#include "tcppeer.h"

TestSuite(tcp_hs, .init = tp_setup, .fini = tp_teardown, .timeout = 60);

/* Our SYN offers MSS, SACK-permitted, timestamps and the window scale that fits rcvbuf into 16 bits. */
Test(tcp_hs, active_syn_offers_all)
{
	static const struct {
		uint32_t rcvbuf;
		uint8_t ws;
	} cases[] = { { 0, 3 }, { 4096, 0 }, { 65535, 0 }, { 65536, 1 }, { 1u << 20, 5 }, { 64u << 20, 11 } };

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fk *f = fk_new();
		struct gso_engine *e = tp_engine(f);
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
	struct gso_engine *e = tp_engine(f);
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
		struct gso_engine *e = tp_engine(f);
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
		cr_assert_eq(gso_listener__accept(&s, l, NULL), 0, "case %u", i);
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

TestSuite(tcp_listen, .init = tp_setup, .fini = tp_teardown, .timeout = 60);

/* READY once when the queue becomes non-empty; accept until -EAGAIN, oldest first. */
Test(tcp_listen, accept_queue_ready_once)
{
	struct fk *f = fk_new();
	struct gso_engine *e = tp_engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV4, 0, 0, 0, 0, 0);
	struct gso_stream *s[3], *x;
	struct gso_listener_info li;

	cr_assert_eq(gso_listener__accept(&x, l, NULL), -EAGAIN);
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
		cr_assert_eq(gso_listener__accept(&s[i], l, &o), 0);
	}
	cr_assert_eq(gso_listener__accept(&x, l, NULL), -EAGAIN);
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

/*
 * A full accept queue: the handshake's ACK is dropped and counted; the
 * SYN-ACK again at 1 s; the re-ACK then opens it.
 */
Test(tcp_listen, accept_queue_overflow)
{
	struct fk *f = fk_new();
	struct gso_engine *e = tp_engine(f);
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
	cr_assert_eq(gso_listener__accept(&a, l, NULL), 0);
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
	cr_assert_eq(gso_listener__accept(&b, l, NULL), 0);
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
	struct gso_engine *e = tp_engine(f);
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
	struct gso_engine *e = tp_engine(f);
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
	struct gso_engine *e = tp_engine(f);
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
	struct gso_engine *e = tp_engine(f);
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
	cr_assert_eq(gso_listener__accept(&s, l, NULL), 0);
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
	struct gso_engine *e = tp_engine(f);
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
	cr_assert_eq(gso_listener__accept(&s, l, NULL), 0);
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
	cr_assert_eq(gso_listener__accept(&s, l, NULL), 0);
	run_until(e, vnow + MS);
	cr_assert_not(sinfo(s).sack);
	cr_assert_not(sinfo(s).timestamps);
	cr_assert_eq(sinfo(s).rcv_wscale, 0);
	cr_assert_eq(linfo(l).cookies_ok, 2);
	gso_stream__close(s);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* The client's first data completes the handshake (its ACK was lost): queued, acknowledged, readable on accept. */
Test(tcp_listen, handshake_completed_by_data)
{
	struct fk *f = fk_new();
	struct gso_engine *e = tp_engine(f);
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
	cr_assert_eq(gso_listener__accept(&s, l, NULL), 0);
	/* Raised after the sizing, once the caller has the handle, not from inside the accept. */
	cr_assert_eq(nev(GSO_EV_STREAM_READABLE, 0), 0);
	run_until(e, vnow + MS);
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
	struct gso_engine *e = tp_engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV6, 0, 1, 0, 0, 0);
	struct gso_stream *a, *b;
	uint32_t iss;
	uint8_t buf[400];

	fill_pattern();
	handshake(f, e, GSO_L3_IPV6, 48100, 1);
	iss = handshake(f, e, GSO_L3_IPV6, 48101, 5000);
	cr_assert_eq(linfo(l).overflows, 1);
	cr_assert_eq(gso_listener__accept(&a, l, NULL), 0);
	run_until(e, vnow + 1100 * MS);
	struct pseg g = { .l3 = GSO_L3_IPV6, .sport = 48101, .dport = OUR_PORT, .seq = 5001, .ack = iss + 1,
			  .flags = GSO_TCP_ACK, .win = 502, .ts = true, .tsval = 71000,
			  .tsecr = last_to(f, 48101, 0)->tsval, .data = pattern, .len = 300 };
	inject(e, &g);
	cr_assert_eq(last_to(f, 48101, 0)->ack, 5301);
	cr_assert_eq(gso_listener__accept(&b, l, NULL), 0);
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
	struct gso_engine *e = tp_engine(f);
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

/* A cookie is good in its 64-second slot and the next, not later. */
Test(tcp_listen, cookie_age)
{
	struct fk *f = fk_new();
	struct gso_engine *e = tp_engine(f);
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
			cr_assert_eq(gso_listener__accept(&s, l, NULL), 0, "a cookie of the slot before refused");
			gso_stream__close(s);
		} else {
			cr_assert_eq(gso_listener__accept(&s, l, NULL), -EAGAIN, "a cookie two slots old taken");
			cr_assert_eq(f->r[f->n - 1].flags, GSO_TCP_RST);
		}
	}
	cr_assert_eq(linfo(l).cookies_ok, 1);
	cr_assert_eq(linfo(l).cookies_bad, 1);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* The window of the handshake's ACK is scaled by the client's shift (from the table, and from a cookie). */
Test(tcp_listen, handshake_ack_window_scaled)
{
	fill_pattern();
	for (int cookie = 0; cookie < 2; cookie++) {
		struct fk *f = fk_new();
		struct gso_engine *e = tp_engine(f);
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
		cr_assert_eq(gso_listener__accept(&s, l, NULL), 0);
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
		struct gso_engine *e = tp_engine(f);
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

/* A stream nobody accepted yet acknowledges as any other: quick ACKs, then the delayed-ACK timer. */
Test(tcp_listen, acks_before_accept)
{
	struct fk *f = fk_new();
	struct gso_engine *e = tp_engine(f);
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
	cr_assert_eq(gso_listener__accept(&s, l, NULL), 0);
	cr_assert_eq(sinfo(s).rx_queued, 17000);
	cr_assert_eq(sinfo(s).acks_delayed, 1);
	gso_stream__close(s);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* Shut down at once after the accept (before the stream is sized): the FIN still goes, and its ACK ends it. */
Test(tcp_listen, shutdown_right_after_accept)
{
	struct fk *f = fk_new();
	struct gso_engine *e = tp_engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV4, 0, 0, 0, 0, 0);
	uint32_t iss = handshake(f, e, GSO_L3_IPV4, 54000, 10);
	struct gso_stream *s;
	unsigned mark = f->n;

	cr_assert_eq(gso_listener__accept(&s, l, NULL), 0);
	cr_assert_eq(gso_stream__write(s, pattern, 10), -EAGAIN, "written before it was sized");
	cr_assert_eq(gso_stream__shutdown(s), 0);
	run_until(e, vnow + 10 * MS);
	cr_assert_eq(count_to(f, 54000, mark, GSO_TCP_FIN, 0), 1);
	cr_assert_eq(last_to(f, 54000, mark)->seq, iss + 1);
	cr_assert_eq(sinfo(s).state, GSO_STREAM_FIN_SENT);
	struct pseg g = { .l3 = GSO_L3_IPV4, .sport = 54000, .dport = OUR_PORT, .seq = 11, .ack = iss + 2,
			  .flags = GSO_TCP_ACK | GSO_TCP_FIN, .win = 502 };
	inject(e, &g);
	cr_assert_eq(sinfo(s).state, GSO_STREAM_DONE);
	cr_assert_eq(last_to(f, 54000, mark)->ack, 12);
	cr_assert_eq(linfo(l).time_wait, 1);
	gso_stream__close(s);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/*
 * The largest half-open table under a flood spread over one second (60000
 * clients: the peer has no more ports): every entry's five SYN-ACK
 * retransmissions, then its end, without a scan of the table per SYN
 * (60000 SYNs once took about 14 s of the engine's thread to go in) or
 * per entry's timer.
 */
Test(tcp_listen, flood_largest_table)
{
	struct fk *f = fk_new();
	struct gso_engine *e = tp_engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV4, 0, 0, GSO_LISTEN_MAX_SYN_BACKLOG, 0, 0);
	const uint32_t n = 60000;
	uint64_t t0 = gso_evloop_now_ns(), start = vnow;
	struct gso_listener_info li;

	f->discard = true;
	for (uint32_t i = 0; i < n; i++) {
		struct pseg g = client_syn(GSO_L3_IPV4, (uint16_t)(1024 + i), i);

		vnow = start + (uint64_t)i * SEC / n;
		inject(e, &g);
	}
	li = linfo(l);
	cr_assert_eq(li.half_open, n);
	cr_assert_eq(li.cookies_sent, 0);
	cr_assert_lt((double)(gso_evloop_now_ns() - t0) / 1e9, 5.0, "the flood took %.1f s to go in",
		     (double)(gso_evloop_now_ns() - t0) / 1e9);
	run_until(e, start + 70 * SEC);
	li = linfo(l);
	cr_assert_eq(li.half_open, 0);
	cr_assert_eq(li.half_open_expired, n);
	cr_assert_eq(li.synack_retrans, 5ull * n);
	cr_assert_eq(f->sent, 6ull * n);
	cr_assert_lt((double)(gso_evloop_now_ns() - t0) / 1e9, 30.0, "the flood's timers took %.1f s",
		     (double)(gso_evloop_now_ns() - t0) / 1e9);
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* ---- device memory shared by the engine's streams ---- */

TestSuite(tcp_mem, .init = tp_setup, .fini = tp_teardown, .timeout = 60);

static unsigned writable_of(struct gso_stream *s, unsigned from)
{
	unsigned n = 0;

	for (unsigned i = from; i < evs->n; i++)
		n += evs->ev[i].type == GSO_EV_STREAM_WRITABLE && evs->ev[i].stream == s;
	return n;
}

/*
 * Two streams of one engine share its device memory.  The first takes
 * all of it; the second's write meets -ENOBUFS with nothing of its own in
 * flight, so no ACK of its own will ever come: it must hear WRITABLE when
 * the first one's ACK gives memory back.  Before, it waited forever (64
 * curl downloads from gsohttpd at once: some stalled for good, with the
 * window open and nothing in flight).
 */
Test(tcp_mem, enobufs_woken_by_another_streams_ack)
{
	struct fk *f = fk_new();
	struct gso_engine *e = tp_engine(f);
	struct gso_listener *l = listen_on(e, GSO_L3_IPV4, 0, 0, 0, 0, 0);
	GSO_OPTS(gso_stream_opts, so, .notsent_lowat = 1u << 30);
	struct gso_stream *s1, *s2;
	uint32_t iss1, sent = 0;
	unsigned e0, wakes = 0;
	bool woke_ok = false;
	int w = 0;

	fill_pattern();
	iss1 = handshake(f, e, GSO_L3_IPV4, 41001, 1000);
	handshake(f, e, GSO_L3_IPV4, 41002, 5000);
	cr_assert_eq(gso_listener__accept(&s1, l, &so), 0);
	cr_assert_eq(gso_listener__accept(&s2, l, &so), 0);
	run_until(e, vnow + MS);
	cr_assert_eq(writable_of(s1, 0), 1);
	cr_assert_eq(writable_of(s2, 0), 1);
	/* The first stream writes until the device's memory is gone. */
	for (int i = 0; i < 1000 && (w = gso_stream__write(s1, pattern, 60000)) > 0; i++)
		;
	cr_assert_eq(w, -ENOBUFS, "write: %d", w);
	run_until(e, vnow + MS);
	cr_assert_eq(gso_stream__write(s2, pattern, 1000), -ENOBUFS);
	/*
	 * The peer of the first acknowledges what it got, round after round:
	 * memory comes back (a buffer is a run of chunks, so it may take a
	 * few rounds before one fits).  Each WRITABLE of the second is a cue
	 * to try again; a write that still meets -ENOBUFS waits anew.
	 */
	e0 = evs->n;
	for (int round = 0; round < 200 && !woke_ok; round++) {
		for (unsigned i = 0; i < f->n; i++)
			if (f->r[i].dport == 41001 && f->r[i].len &&
			    after32(f->r[i].seq + f->r[i].len, iss1 + 1 + sent))
				sent = f->r[i].seq + f->r[i].len - (iss1 + 1);
		struct pseg a = { .l3 = GSO_L3_IPV4, .sport = 41001, .dport = OUR_PORT, .seq = 1001,
				  .ack = iss1 + 1 + sent, .flags = GSO_TCP_ACK, .win = 65535, .ts = true,
				  .tsval = 70100 + (uint32_t)round };
		inject(e, &a);
		run_until(e, vnow + MS);
		if (writable_of(s2, e0)) {
			wakes++;
			e0 = evs->n;
			w = gso_stream__write(s2, pattern, 1000);
			cr_assert(w == 1000 || w == -ENOBUFS, "write: %d", w);
			woke_ok = w == 1000;
		}
	}
	cr_assert(woke_ok, "the second stream never heard that memory came back (%u wake-ups, %u bytes acked)", wakes,
		  sent);
	gso_stream__close(s1);
	gso_stream__close(s2);
	gso_listener__close(l);
	gso_engine__destroy(e);
}
