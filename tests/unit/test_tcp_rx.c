/*
 * Receiving on every stream (accepted and connected, IPv4 and IPv6) as a
 * Linux peer expects it, in virtual time, against the scripted peer of
 * tcppeer.h: quick and delayed ACKs, SACK blocks, the window, reading,
 * and the end of a connection: FIN in each state, RST (RFC 5961),
 * TIME_WAIT and its reuse.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include <gso/engine.h>
#include "tcppeer.h"

/*
 * 60 s, as the other suites: Criterion 2.4's runner leaks 48 bytes (which
 * the ASan run of `make check` fails on) when a test with a longer
 * timeout runs before one with a shorter timeout.
 */
TestSuite(tcp_rx, .init = tp_setup, .fini = tp_teardown, .timeout = 60);

/*
 * In-order data: READABLE, the bytes, rx_bytes; each of the first
 * segments acknowledged at once, with the peer's TSval.
 */
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
			cr_assert_leq((uint32_t)r->win << 5, 1u << 20);
		}
		cr_assert_eq(c.f->r[c.f->n - 1].ack, c.irs + off);
		/* The last ACK left before the last read (a read of less than half the buffer sends none). */
		cr_assert_geq(((uint32_t)c.f->r[c.f->n - 1].win << 5) + 3 * 1337 + 1000 + 32, 1u << 20,
			      "%s %s: window %u, unread %u", KIND(k), (uint32_t)c.f->r[c.f->n - 1].win << 5, off - rd);
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

TestSuite(tcp_close, .init = tp_setup, .fini = tp_teardown, .timeout = 60);

/*
 * The peer's FIN in ESTABLISHED: CLOSE_WAIT, PEER_CLOSED, read gives the
 * data then 0; our FIN then LAST_ACK, DONE, no TIME_WAIT.
 */
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

/* We close first, the peer's ACK and FIN in one segment: DONE, and the 4-tuple in TIME_WAIT. */
static void into_time_wait(struct conn *c)
{
	tw_listener(c);
	cr_assert_eq(gso_stream__shutdown(c->s), 0);
	run_until(c->e, vnow + MS);
	sync_oseq(c);
	pctl(c, c->irs, GSO_TCP_ACK | GSO_TCP_FIN);
	cr_assert_eq(sinfo(c->s).state, GSO_STREAM_DONE);
	cr_assert_eq(linfo(c->l).time_wait, 1);
}

/* TIME_WAIT ends after GSO_STREAM_TIME_WAIT_NS. */
Test(tcp_close, time_wait_expires)
{
	struct conn c = conn_open(true, GSO_L3_IPV4, 0);

	into_time_wait(&c);
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
	fill_pattern();
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
		pdata(&c, 0, 300, 0);
		pctl(&c, c.irs + 300, GSO_TCP_RST);
		/* What we sent was all acknowledged: a clean end for the sender... */
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_DONE, "%s %s: FIN-WAIT-2", KIND(k));
		cr_assert_eq(sinfo(c.s).err, 0);
		/* ... but the peer's bytes end in a reset, not a FIN: read says so after them. */
		read_expect(&c, 0, 300);
		cr_assert_eq(gso_stream__read(c.s, pattern + (1 << 19), 1), -ECONNRESET,
			     "%s %s: the end of the stream without the peer's FIN", KIND(k));
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
	struct gso_engine *e = tp_engine(f);
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
	cr_assert_eq(gso_listener__accept(&s, l, NULL), -EAGAIN);
	cr_assert_eq(nev(GSO_EV_STREAM_CLOSED, 0), 0, "an event for a stream nobody has");
	gso_listener__close(l);
	gso_engine__destroy(e);
}

/* Data and FIN before the accept: READABLE and PEER_CLOSED come with the accept. */
Test(tcp_close, data_and_fin_before_accept)
{
	struct fk *f = fk_new();
	struct gso_engine *e = tp_engine(f);
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
	cr_assert_eq(gso_listener__accept(&s, l, NULL), 0);
	/* Nothing from inside the accept (the caller has no handle yet): after the sizing, in order. */
	cr_assert_eq(nev(GSO_EV_STREAM_READABLE, 0) + nev(GSO_EV_STREAM_PEER_CLOSED, 0), 0);
	cr_assert_eq(gso_stream__read(s, b, sizeof(b)), 100);
	cr_assert_eq(memcmp(b, pattern, 100), 0);
	cr_assert_eq(gso_stream__read(s, b, sizeof(b)), 0);
	cr_assert_eq(sinfo(s).state, GSO_STREAM_CLOSE_WAIT);
	/* Sized after the FIN all the same: it writes, shuts down, and ends at the ACK of its FIN. */
	run_until(e, vnow + MS);
	cr_assert_eq(nev(GSO_EV_STREAM_WRITABLE, 0), 1);
	cr_assert_eq(nev(GSO_EV_STREAM_READABLE, 0), 1);
	cr_assert_eq(nev(GSO_EV_STREAM_PEER_CLOSED, 0), 1);
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

/* TIME_WAIT: an old SYN (sequence number not past it) is answered with an ACK, not taken. */
Test(tcp_close, time_wait_old_syn)
{
	struct conn c = conn_open(true, GSO_L3_IPV4, 0);
	const struct frec *r;
	unsigned mark;

	into_time_wait(&c);
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

		into_time_wait(&c);
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

	into_time_wait(&c);
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

/* Retransmissions that overlap what we have (repacketized by the peer): only the new bytes count. */
Test(tcp_rx, overlapping_retransmissions)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		const struct frec *r;

		pdata(&c, 0, 1000, 0);
		pdata(&c, 500, 1500, 0); /* [500, 2000): half old */
		r = last_to(c.f, c.pport, 0);
		cr_assert_eq(r->ack, c.irs + 2000, "%s %s", KIND(k));
		pdata(&c, 3000, 1000, 0); /* held */
		pdata(&c, 1500, 3000, 0); /* [1500, 4500): over the hole and the held range */
		r = last_to(c.f, c.pport, 0);
		cr_assert_eq(r->ack, c.irs + 4500, "%s %s: ack %u", KIND(k), r->ack - c.irs);
		cr_assert_eq(r->nsack, 0);
		cr_assert_eq(sinfo(c.s).rx_bytes, 4500);
		read_expect(&c, 0, 4500);
		conn_close(&c);
	}
}

/* LAST_ACK: our FIN unacknowledged is sent again at the retransmission timeout, and its ACK ends the stream. */
Test(tcp_close, last_ack_fin_retransmitted)
{
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		unsigned e0 = evs->n, mark;

		tw_listener(&c);
		pctl(&c, c.irs, GSO_TCP_ACK | GSO_TCP_FIN);
		mark = c.f->n;
		cr_assert_eq(gso_stream__shutdown(c.s), 0);
		run_until(c.e, vnow + MS);
		cr_assert_eq(count_to(c.f, c.pport, mark, GSO_TCP_FIN, 0), 1);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_LAST_ACK);
		run_until(c.e, vnow + 3 * SEC);
		cr_assert_geq(count_to(c.f, c.pport, mark, GSO_TCP_FIN, 0), 2, "%s %s: the FIN never sent again", KIND(k));
		cr_assert_eq(last_to(c.f, c.pport, mark)->seq, c.f->r[mark].seq, "the same FIN");
		sync_oseq(&c);
		pctl(&c, c.irs + 1, GSO_TCP_ACK);
		expect_end(&c, k, e0, 0, 0);
		conn_close(&c);
	}
}

/* A FIN alone, out of order (the bytes before it missing): a duplicate ACK at once, as for out-of-order data. */
Test(tcp_close, lone_fin_out_of_order_dupack)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		unsigned mark = c.f->n;
		const struct frec *r;

		pctl(&c, c.irs + 1000, GSO_TCP_ACK | GSO_TCP_FIN);
		r = last_to(c.f, c.pport, mark);
		cr_assert_not_null(r, "%s %s: no duplicate ACK for a FIN past a hole", KIND(k));
		cr_assert_eq(r->ack, c.irs);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_ESTABLISHED);
		pdata(&c, 0, 1000, 0);
		r = last_to(c.f, c.pport, mark);
		cr_assert_eq(r->ack, c.irs + 1001);
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_CLOSE_WAIT);
		read_expect(&c, 0, 1000);
		conn_close(&c);
	}
}

/*
 * A keep-alive connection quiet for longer than idle_ns, then an answer
 * and our FIN: the peer owes us nothing while we are quiet, so its
 * silence must count only from when we start to wait.  Before the fix the
 * FIN (or the data) left and the stream failed at once with "the peer
 * went silent", and the peer's FIN-ACK met an RST (gsohttpd's keep-alive
 * close after 60 s, seen in a capture).
 */
Test(tcp_close, quiet_then_send_waits_anew)
{
	fill_pattern();
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		unsigned e0 = evs->n, mark;
		const struct frec *r;

		tw_listener(&c);
		pdata(&c, 0, 100, 0);
		read_expect(&c, 0, 100);
		/* Far longer than GSO_STREAM_DEF_IDLE_NS with nothing outstanding: only idle. */
		run_until(c.e, vnow + 3 * GSO_STREAM_DEF_IDLE_NS);
		cr_assert_eq(sev(&c, GSO_EV_STREAM_CLOSED, e0), 0, "%s %s: closed while only idle", KIND(k));
		mark = c.f->n;
		cr_assert_eq(gso_stream__write(c.s, pattern, 200), 200);
		cr_assert_eq(gso_stream__shutdown(c.s), 0);
		run_until(c.e, vnow + 10 * MS);
		cr_assert_eq(sev(&c, GSO_EV_STREAM_CLOSED, e0), 0, "%s %s: failed when it began to wait", KIND(k));
		r = last_to(c.f, c.pport, mark);
		cr_assert_not_null(r);
		/* The peer acknowledges the data and closes its side; then it acknowledges our FIN. */
		sync_oseq(&c);
		pctl(&c, c.irs + 100, GSO_TCP_ACK | GSO_TCP_FIN);
		run_until(c.e, vnow + MS);
		cr_assert_eq(sinfo(c.s).err, 0, "%s %s: %s", KIND(k), sinfo(c.s).why ? sinfo(c.s).why : "");
		sync_oseq(&c);
		pctl(&c, c.irs + 101, GSO_TCP_ACK);
		run_until(c.e, vnow + MS);
		cr_assert_eq(sinfo(c.s).err, 0, "%s %s: %s", KIND(k), sinfo(c.s).why ? sinfo(c.s).why : "");
		cr_assert_eq(sev(&c, GSO_EV_STREAM_CLOSED, e0), 1);
		cr_assert_eq(count_to(c.f, c.pport, mark, GSO_TCP_RST, 0), 0, "%s %s: an RST", KIND(k));
		conn_close(&c);
	}
}
