/*
 * Path MTU from ICMP errors in the engine (engine.h, "Path MTU";
 * xdp/engine/pmtu.c, the streams' t_mtu and the datagram flows' d_mtu),
 * with the scripted peer and fake device of tcppeer.h and the ICMP frames
 * of icmpframe.h, in virtual time, on every kind of stream:
 *  - a "fragmentation needed" / "packet too big" quoting a segment in
 *    flight: one GSO_EV_PATH_MTU, segments cut at the new MSS, what was
 *    sent too large retransmitted at it, and every byte acknowledged;
 *  - forged and broken ones (no such flow, a sequence number not in
 *    flight, a wrong checksum, an IPv6 MTU below 1280, no lower than the
 *    path MTU) change nothing and are counted; an IPv4 MTU below 552 is 552;
 *  - one during the handshake sizes the stream when it is established
 *    (a listener's half-open connection has no flow yet: nothing; an
 *    accepted stream is lowered before accept, without an event);
 *  - a datagram flow's max_gso_size follows it;
 *  - ICMP that is no PMTU error is nobody's (rx_other).
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

#include <gso/engine.h>
#include <gso/tmpl.h>
#include "engine/engine_internal.h"
#include "icmpframe.h"
#include "tcppeer.h"

TestSuite(tcp_pmtu, .init = tp_setup, .fini = tp_teardown, .timeout = 60);

static const uint8_t rtr4[4] = { 10, 0, 9, 254 };
static const uint8_t rtr6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 9, [15] = 0xfe };

enum { WRITE = 300000, UDP_OUR = 5000, UDP_PEER = 6000 };

/* A good PMTU error from the router about our packet (our address and port `lport`) to the peer's `rport`. */
static struct icmp_knobs icmp_about(uint8_t l3, uint8_t proto, uint16_t lport, uint16_t rport, uint32_t seq,
				    uint32_t mtu)
{
	bool v6 = l3 == GSO_L3_IPV6;
	struct icmp_knobs k = { .v6 = v6, .type = v6 ? 2 : 3, .code = v6 ? 0 : 4, .mtu = mtu, .q_ver = v6 ? 6 : 4,
				.q_ihl = 5, .q_proto = proto, .q_l4 = 8, .lport = lport, .rport = rport,
				.seq = seq };

	memcpy(k.router, v6 ? rtr6 : rtr4, v6 ? 16 : 4);
	memcpy(k.our, v6 ? our6 : our4, v6 ? 16 : 4);
	memcpy(k.peer, v6 ? peer6 : peer4, v6 ? 16 : 4);
	return k;
}

/* The stream's own: quoting one of c's segments at `seq`. */
static struct icmp_knobs icmp_tcp(const struct conn *c, uint32_t seq, uint32_t mtu)
{
	return icmp_about(c->l3, IPPROTO_TCP, OUR_PORT, c->pport, seq, mtu);
}

/* Into the engine as its receive path would hand it, like tcppeer.c's inject(). */
static void frame_in(struct gso_engine *e, const struct icmp_frame *f)
{
	gsoi_engine_input_frame(gsoi_engine_of(e), NULL, f->b, f->len);
}

static void icmp_in(struct gso_engine *e, const struct icmp_knobs *k)
{
	struct icmp_frame f;

	icmp_frame_build(&f, k);
	frame_in(e, &f);
}

static struct gso_engine_stats estats(struct gso_engine *e)
{
	struct gso_engine_stats st = { .sz = sizeof(st) };

	cr_assert_eq(gso_engine__stats(e, &st), 0);
	return st;
}

static uint32_t ip_hdr(uint8_t l3)
{
	return l3 == GSO_L3_IPV6 ? 40 : 20;
}

/* The MSS of a stream with timestamps over a path MTU of `mtu`. */
static uint32_t mss_at(uint8_t l3, uint32_t mtu)
{
	return mtu - ip_hdr(l3) - 20 - 12;
}

/* The end of the data we sent from record `from` on: SND.NXT when `from` is 0. */
static uint32_t data_end(const struct conn *c, unsigned from, uint32_t start)
{
	uint32_t end = start;

	for (unsigned i = from; i < c->f->n; i++) {
		const struct frec *r = &c->f->r[i];

		if (r->dport == c->pport && r->len && after32(r->seq + r->len, end))
			end = r->seq + r->len;
	}
	return end;
}

/* Write from the pattern up to `total` bytes of the stream (as much as it takes); returns the bytes written. */
static uint32_t write_upto(struct conn *c, uint32_t done, uint32_t total)
{
	while (done < total) {
		int n = gso_stream__write(c->s, pattern + done, total - done);

		if (n == -EAGAIN || n == -ENOBUFS)
			break;
		cr_assert_gt(n, 0, "write: %d", n);
		done += (uint32_t)n;
	}
	return done;
}

/* The data segments to c's peer from record `from` on are cut at most at `mss`, and some at it. */
static void cut_at(const struct conn *c, unsigned k, unsigned from, uint32_t mss)
{
	unsigned at = 0;

	for (unsigned i = from; i < c->f->n; i++) {
		const struct frec *r = &c->f->r[i];

		if (r->dport != c->pport || !r->len)
			continue;
		/* Its segments: mss_seg bytes each, or one of len. */
		cr_assert_leq(r->len < r->mss_seg ? r->len : r->mss_seg, mss, "%s %s: record %u: %u bytes cut at %u",
			      KIND(k), i, r->len, r->mss_seg);
		at += r->mss_seg == mss;
	}
	cr_assert_gt(at, 0, "%s %s: nothing cut at %u", KIND(k), mss);
}

/* An established stream with data in flight, none of it acknowledged; *una and *nxt: SND.UNA, SND.NXT. */
static struct conn busy_conn(unsigned k, uint32_t *written, uint32_t *una, uint32_t *nxt)
{
	struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);

	fill_pattern();
	cr_assert_eq(sinfo(c.s).mss, mss_at(c.l3, 1500), "%s %s: mss %u", KIND(k), sinfo(c.s).mss);
	*written = write_upto(&c, 0, WRITE);
	run_until(c.e, vnow + MS);
	cut_at(&c, k, 0, mss_at(c.l3, 1500));
	*una = c.oseq;
	*nxt = data_end(&c, 0, c.oseq);
	cr_assert(after32(*nxt, *una + 2 * 1448), "%s %s: little in flight", KIND(k));
	return c;
}

/* Where the bytes sent from record `rec` on, contiguous from `from`, end: what a peer that lost the rest has. */
static uint32_t covered(const struct conn *c, unsigned rec, uint32_t from)
{
	uint32_t p = from;
	bool more = true;

	while (more) {
		more = false;
		for (unsigned i = rec; i < c->f->n; i++) {
			const struct frec *r = &c->f->r[i];

			if (r->dport == c->pport && r->len && !after32(r->seq, p) && after32(r->seq + r->len, p)) {
				p = r->seq + r->len;
				more = true;
			}
		}
	}
	return p;
}

/*
 * The peer received only what we sent from record `rec` on (everything
 * before was too large for the path) and acknowledges it, until all
 * WRITE bytes are (writing the rest as room comes).
 */
static void ack_all(struct conn *c, unsigned k, uint32_t written, unsigned rec)
{
	for (int i = 0; i < 4000 && sinfo(c->s).acked < WRITE; i++) {
		uint32_t has = covered(c, rec, c->oseq);

		if (after32(has, c->oseq)) {
			c->oseq = has;
			pctl(c, c->irs, GSO_TCP_ACK);
		}
		written = write_upto(c, written, WRITE);
		run_until(c->e, vnow + MS);
	}
	cr_assert_eq(written, WRITE, "%s %s", KIND(k));
	cr_assert_eq(sinfo(c->s).acked, WRITE, "%s %s: %lu of %u acknowledged", KIND(k),
		     (unsigned long)sinfo(c->s).acked, WRITE);
}

/* The last GSO_EV_PATH_MTU from event `from` on (there is exactly one). */
static const struct gso_engine_event *pmtu_event(unsigned from)
{
	const struct gso_engine_event *ev = NULL;

	cr_assert_eq(nev(GSO_EV_PATH_MTU, from), 1, "%u PATH_MTU events", nev(GSO_EV_PATH_MTU, from));
	for (unsigned i = from; i < evs->n; i++)
		if (evs->ev[i].type == GSO_EV_PATH_MTU)
			ev = &evs->ev[i];
	return ev;
}

Test(tcp_pmtu, icmp_cuts_in_flight_segments_and_nothing_is_lost)
{
	for (unsigned k = 0; k < NKINDS; k++) {
		uint32_t written, una, nxt, mss = mss_at(kinds[k].l3, 1280);
		struct conn c = busy_conn(k, &written, &una, &nxt);
		const struct frec *last = last_to(c.f, c.pport, 0);
		unsigned e0 = evs->n, mark;
		const struct gso_engine_event *ev;
		struct gso_engine_stats st;
		struct gso_stream_info si;
		struct icmp_knobs ik;

		cr_assert_not_null(last);
		cr_assert(last->len && last->has_ts, "%s %s: the last segment carries data and timestamps", KIND(k));
		ik = icmp_tcp(&c, last->seq, 1280);
		icmp_in(c.e, &ik);

		ev = pmtu_event(e0);
		cr_assert_eq(ev->stream, c.s, "%s %s", KIND(k));
		cr_assert_eq(ev->mtu, 1280, "%s %s: event mtu %u", KIND(k), ev->mtu);
		cr_assert_eq(ev->mtu_src, GSO_PMTU_SRC_ICMP, "%s %s", KIND(k));
		si = sinfo(c.s);
		cr_assert_eq(si.path_mtu, 1280, "%s %s: path_mtu %u", KIND(k), si.path_mtu);
		cr_assert_eq(si.pmtu_changes, 1, "%s %s", KIND(k));
		cr_assert_eq(si.mss, mss, "%s %s: mss %u, want %u", KIND(k), si.mss, mss);
		cr_assert_gt(si.pmtu_lost_segs, 0, "%s %s: nothing retransmitted", KIND(k));
		st = estats(c.e);
		cr_assert_eq(st.icmp_pmtu, 1, "%s %s", KIND(k));
		cr_assert_eq(st.icmp_stale + st.icmp_forged + st.icmp_bad, 0, "%s %s", KIND(k));
		cr_assert_eq(st.link_mtu, 1500, "%s %s: link_mtu %u", KIND(k), st.link_mtu);

		/* What was in flight goes again at once (as cwnd allows), cut at the new size. */
		mark = c.f->n;
		run_until(c.e, vnow + 5 * MS);
		cr_assert(after32(covered(&c, mark, una), una + 2 * mss), "%s %s: %u bytes sent again at once",
			  KIND(k), covered(&c, mark, una) - una);
		cut_at(&c, k, mark, mss);

		/* Every byte arrives, all of it sent again; what follows is cut at the new size too. */
		ack_all(&c, k, written, mark);
		cr_assert(!after32(nxt, covered(&c, mark, una)), "%s %s: not all sent again", KIND(k));
		cr_assert(after32(data_end(&c, mark, nxt), nxt), "%s %s: no new data after the error", KIND(k));
		cut_at(&c, k, mark, mss);
		si = sinfo(c.s);
		cr_assert_eq(si.path_mtu, 1280, "%s %s", KIND(k));
		cr_assert_eq(si.mss, mss, "%s %s", KIND(k));
		cr_assert_eq(sev(&c, GSO_EV_PATH_MTU, e0), 1, "%s %s", KIND(k));
		cr_assert_eq(sev(&c, GSO_EV_STREAM_CLOSED, e0), 0, "%s %s: %s", KIND(k), si.why ? si.why : "");
		conn_close(&c);
	}
}

/* One ICMP frame into c's engine that must change nothing but the counter `want` (offsetof in the stats). */
static void ignored(struct conn *c, unsigned k, const struct icmp_frame *f, size_t want, const char *what)
{
	struct gso_stream_info s0 = sinfo(c->s), s1;
	struct gso_engine_stats t0 = estats(c->e), t1;
	uint64_t before, after;
	unsigned e0 = evs->n;

	frame_in(c->e, f);
	run_until(c->e, vnow + MS);
	s1 = sinfo(c->s);
	t1 = estats(c->e);
	cr_assert_eq(s1.path_mtu, s0.path_mtu, "%s %s, %s: path_mtu %u -> %u", KIND(k), what, s0.path_mtu,
		     s1.path_mtu);
	cr_assert_eq(s1.mss, s0.mss, "%s %s, %s: mss %u -> %u", KIND(k), what, s0.mss, s1.mss);
	cr_assert_eq(s1.pmtu_changes, s0.pmtu_changes, "%s %s, %s", KIND(k), what);
	cr_assert_eq(s1.pmtu_lost_segs, s0.pmtu_lost_segs, "%s %s, %s", KIND(k), what);
	cr_assert_eq(nev(GSO_EV_PATH_MTU, e0), 0, "%s %s, %s: an event", KIND(k), what);
	cr_assert_eq(t1.icmp_pmtu, t0.icmp_pmtu, "%s %s, %s", KIND(k), what);
	memcpy(&before, (const char *)&t0 + want, 8);
	memcpy(&after, (const char *)&t1 + want, 8);
	cr_assert_eq(after, before + 1, "%s %s, %s: not counted", KIND(k), what);
	/* And no other counter of what the engine ignored. */
	cr_assert_eq(t1.icmp_stale + t1.icmp_forged + t1.icmp_bad + t1.rx_other,
		     t0.icmp_stale + t0.icmp_forged + t0.icmp_bad + t0.rx_other + 1, "%s %s, %s: counted twice", KIND(k),
		     what);
}

static void ignored_k(struct conn *c, unsigned k, const struct icmp_knobs *ik, size_t want, const char *what)
{
	struct icmp_frame f;

	icmp_frame_build(&f, ik);
	ignored(c, k, &f, want, what);
}

#define FORGED offsetof(struct gso_engine_stats, icmp_forged)
#define BAD offsetof(struct gso_engine_stats, icmp_bad)
#define STALE offsetof(struct gso_engine_stats, icmp_stale)
#define OTHER offsetof(struct gso_engine_stats, rx_other)

Test(tcp_pmtu, forged_and_invalid_errors_change_nothing)
{
	for (unsigned k = 0; k < NKINDS; k++) {
		uint32_t written, una, nxt;
		struct conn c = busy_conn(k, &written, &una, &nxt);
		bool v6 = c.l3 == GSO_L3_IPV6;
		struct icmp_knobs ik;
		struct icmp_frame f;
		unsigned e0, mark;

		/* No stream of ours: another port of the peer, another of ours, another peer. */
		ik = icmp_tcp(&c, una, 1280);
		ik.rport = (uint16_t)(c.pport + 1);
		ignored_k(&c, k, &ik, FORGED, "the peer's other port");
		ik = icmp_tcp(&c, una, 1280);
		ik.lport = OUR_PORT + 1;
		ignored_k(&c, k, &ik, FORGED, "our other port");
		ik = icmp_tcp(&c, una, 1280);
		ik.peer[v6 ? 15 : 3] ^= 0x40;
		ignored_k(&c, k, &ik, FORGED, "another peer");
		/* The stream's, quoting a sequence number not in flight. */
		ik = icmp_tcp(&c, una - 1, 1280);
		ignored_k(&c, k, &ik, FORGED, "below SND.UNA");
		ik = icmp_tcp(&c, una - 100000, 1280);
		ignored_k(&c, k, &ik, FORGED, "far below SND.UNA");
		ik = icmp_tcp(&c, nxt + 1, 1280);
		ignored_k(&c, k, &ik, FORGED, "above SND.NXT");
		ik = icmp_tcp(&c, nxt + 0x7fffffffu, 1280);
		ignored_k(&c, k, &ik, FORGED, "far above SND.NXT");
		/* A UDP packet of the stream's tuple is no stream's. */
		ik = icmp_about(c.l3, IPPROTO_UDP, OUR_PORT, c.pport, 0, 1280);
		ignored_k(&c, k, &ik, FORGED, "UDP on the stream's ports");
		/* Broken. */
		ik = icmp_tcp(&c, una, 1280);
		icmp_frame_build(&f, &ik);
		f.b[f.icmp + 2] ^= 0x01;
		ignored(&c, k, &f, BAD, "a wrong ICMP checksum");
		if (v6) {
			ik = icmp_tcp(&c, una, 1000);
			ignored_k(&c, k, &ik, BAD, "IPv6 MTU 1000");
			ik = icmp_tcp(&c, una, 1279);
			ignored_k(&c, k, &ik, BAD, "IPv6 MTU 1279");
		}
		/* No lower than what the stream has. */
		ik = icmp_tcp(&c, una, 1500);
		ignored_k(&c, k, &ik, STALE, "MTU 1500");
		ik = icmp_tcp(&c, una, 9000);
		ignored_k(&c, k, &ik, STALE, "MTU 9000");

		/* SND.UNA and SND.NXT themselves are in flight; 1280 is taken once. */
		e0 = evs->n;
		ik = icmp_tcp(&c, nxt, 1280);
		icmp_in(c.e, &ik);
		cr_assert_eq(sev(&c, GSO_EV_PATH_MTU, e0), 1, "%s %s: SND.NXT quoted", KIND(k));
		cr_assert_eq(sinfo(c.s).path_mtu, 1280, "%s %s", KIND(k));
		cr_assert_eq(sinfo(c.s).mss, mss_at(c.l3, 1280), "%s %s", KIND(k));
		cr_assert_eq(estats(c.e).icmp_pmtu, 1, "%s %s", KIND(k));
		mark = c.f->n;
		ik = icmp_tcp(&c, una, 1280);
		ignored_k(&c, k, &ik, STALE, "MTU 1280 again");
		ik = icmp_tcp(&c, una, 1400);
		ignored_k(&c, k, &ik, STALE, "MTU 1400 after 1280");

		/* IPv4: below 552 is 552 (ip_rt_min_pmtu). */
		if (!v6) {
			e0 = evs->n;
			ik = icmp_tcp(&c, una, 300);
			icmp_in(c.e, &ik);
			mark = c.f->n;
			cr_assert_eq(pmtu_event(e0)->mtu, 552, "%s %s: MTU 300", KIND(k));
			cr_assert_eq(sinfo(c.s).path_mtu, 552, "%s %s: path_mtu %u", KIND(k), sinfo(c.s).path_mtu);
			cr_assert_eq(sinfo(c.s).mss, 552 - 20 - 20 - 12, "%s %s: mss %u", KIND(k), sinfo(c.s).mss);
			cr_assert_eq(sinfo(c.s).pmtu_changes, 2, "%s %s", KIND(k));
			cr_assert_eq(estats(c.e).icmp_pmtu, 2, "%s %s", KIND(k));
			ik = icmp_tcp(&c, una, 300);
			ignored_k(&c, k, &ik, STALE, "MTU 300 again (552)");
		}
		/* And the stream still delivers everything. */
		ack_all(&c, k, written, mark);
		conn_close(&c);
	}
}

Test(tcp_pmtu, icmp_during_the_handshake_sizes_the_stream)
{
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c;
		struct icmp_knobs ik;
		const struct gso_engine_event *ev;
		const struct frec *syn;
		unsigned e0 = evs->n;

		c = conn_start(kinds[k].passive, kinds[k].l3, 0);
		if (kinds[k].passive) {
			/* Half-open, the connection is the listener's, no flow yet: nothing to lower (Linux's tcp_req_err). */
			syn = last_to(c.f, c.pport, 0);
			cr_assert_eq(syn->flags, GSO_TCP_SYN | GSO_TCP_ACK);
			ik = icmp_tcp(&c, syn->seq, 1280);
			icmp_in(c.e, &ik);
			cr_assert_eq(estats(c.e).icmp_forged, 1, "%s %s: quoting our SYN-ACK", KIND(k));
			cr_assert_eq(estats(c.e).icmp_pmtu, 0, "%s %s", KIND(k));
			cr_assert_eq(nev(GSO_EV_PATH_MTU, e0), 0, "%s %s", KIND(k));
			/* Established, not yet accepted: lowered, and no event for a stream the application has not seen. */
			struct pseg g = cseg(&c, c.irs, GSO_TCP_ACK, NULL, 0);

			inject(c.e, &g);
			ik = icmp_tcp(&c, c.oseq, 1280);
			icmp_in(c.e, &ik);
			cr_assert_eq(estats(c.e).icmp_pmtu, 1, "%s %s: before accept", KIND(k));
			cr_assert_eq(nev(GSO_EV_PATH_MTU, e0), 0, "%s %s", KIND(k));
			cr_assert_eq(gso_listener__accept(&c.s, c.l, NULL), 0);
			run_until(c.e, vnow + MS);
			cr_assert_eq(sinfo(c.s).state, GSO_STREAM_ESTABLISHED);
			cr_assert_eq(sinfo(c.s).path_mtu, 1280, "%s %s", KIND(k));
			cr_assert_eq(sinfo(c.s).pmtu_changes, 1, "%s %s", KIND(k));
			cr_assert_eq(sinfo(c.s).mss, mss_at(c.l3, 1280), "%s %s: mss %u", KIND(k), sinfo(c.s).mss);
			conn_close(&c);
			continue;
		}
		syn = last_to(c.f, c.pport, 0);
		cr_assert_eq(syn->flags, GSO_TCP_SYN);
		/* Only the SYN is in flight: ISS + 1 is SND.NXT, ISS + 2 is not. */
		ik = icmp_tcp(&c, syn->seq + 2, 1280);
		icmp_in(c.e, &ik);
		cr_assert_eq(estats(c.e).icmp_forged, 1, "%s %s: ISS + 2", KIND(k));
		ik = icmp_tcp(&c, syn->seq, 1280);
		icmp_in(c.e, &ik);
		ev = pmtu_event(e0);
		cr_assert_eq(ev->stream, c.s);
		cr_assert_eq(ev->mtu, 1280);
		cr_assert_eq(ev->mtu_src, GSO_PMTU_SRC_ICMP);
		cr_assert_eq(estats(c.e).icmp_pmtu, 1, "%s %s", KIND(k));
		cr_assert_eq(sinfo(c.s).path_mtu, 1280, "%s %s", KIND(k));
		cr_assert_eq(sinfo(c.s).state, GSO_STREAM_SYN_SENT, "%s %s", KIND(k));

		conn_finish(&c);
		cr_assert_eq(sinfo(c.s).mss, mss_at(c.l3, 1280), "%s %s: mss %u", KIND(k), sinfo(c.s).mss);
		cr_assert_eq(sinfo(c.s).pmtu_changes, 1, "%s %s", KIND(k));
		fill_pattern();
		cr_assert_eq(write_upto(&c, 0, 20000), 20000);
		run_until(c.e, vnow + MS);
		cut_at(&c, k, 0, mss_at(c.l3, 1280));
		conn_close(&c);
	}
}

static struct gso_dgram *dgram_open(struct gso_engine *e, uint8_t l3)
{
	GSO_OPTS(gso_tmpl_fields, tf, .l3 = l3, .l4 = GSO_L4_UDP, .sport = UDP_OUR, .dport = UDP_PEER,
		 .df = l3 == GSO_L3_IPV4);
	size_t al = l3 == GSO_L3_IPV6 ? 16 : 4;
	struct gso_dgram *d = NULL;
	struct gso_tmpl t;

	memcpy(tf.eth_dst, "\x02\0\0\0\0\2", 6);
	memcpy(tf.eth_src, "\x02\0\0\0\0\1", 6);
	memcpy(tf.saddr, l3 == GSO_L3_IPV6 ? our6 : our4, al);
	memcpy(tf.daddr, l3 == GSO_L3_IPV6 ? peer6 : peer4, al);
	cr_assert_eq(gso_tmpl__build(&t, &tf), 0);
	GSO_OPTS(gso_dgram_opts, o, .tmpl = &t, .ctx = (void *)0xd6);
	cr_assert_eq(gso_dgram__open(&d, e, &o), 0);
	return d;
}

static struct gso_dgram_info dinfo(struct gso_dgram *d)
{
	struct gso_dgram_info di = { .sz = sizeof(di) };

	cr_assert_eq(gso_dgram__info(d, &di), 0);
	return di;
}

Test(tcp_pmtu, a_datagram_flow_follows_icmp)
{
	static uint8_t payload[8000];

	for (int v6 = 0; v6 < 2; v6++) {
		uint8_t l3 = v6 ? GSO_L3_IPV6 : GSO_L3_IPV4;
		uint32_t hdrs = ip_hdr(l3) + 8, mtu = v6 ? 1280 : 1000, max = mtu - hdrs;
		struct fk *f = fk_new();
		struct gso_engine *e = tp_engine(f);
		struct gso_dgram *d = dgram_open(e, l3);
		const struct gso_engine_event *ev;
		struct gso_engine_stats st;
		struct icmp_knobs ik;
		unsigned e0 = evs->n, mark;

		cr_assert_eq(dinfo(d).max_gso_size, 1500 - hdrs, "v6 %d: max_gso_size %u", v6, dinfo(d).max_gso_size);
		cr_assert_eq(dinfo(d).path_mtu, 1500);

		/* Another port of ours or of the peer's: no flow. */
		ik = icmp_about(l3, IPPROTO_UDP, UDP_OUR, UDP_PEER + 1, 0, mtu);
		icmp_in(e, &ik);
		ik = icmp_about(l3, IPPROTO_UDP, UDP_OUR + 1, UDP_PEER, 0, mtu);
		icmp_in(e, &ik);
		/* A TCP packet on its ports is no datagram's. */
		ik = icmp_about(l3, IPPROTO_TCP, UDP_OUR, UDP_PEER, 1, mtu);
		icmp_in(e, &ik);
		st = estats(e);
		cr_assert_eq(st.icmp_forged, 3, "v6 %d: icmp_forged %lu", v6, (unsigned long)st.icmp_forged);
		cr_assert_eq(nev(GSO_EV_PATH_MTU, e0), 0);
		cr_assert_eq(dinfo(d).max_gso_size, 1500 - hdrs);

		ik = icmp_about(l3, IPPROTO_UDP, UDP_OUR, UDP_PEER, 0, mtu);
		icmp_in(e, &ik);
		ev = pmtu_event(e0);
		cr_assert_eq(ev->dgram, d, "v6 %d", v6);
		cr_assert_null(ev->stream);
		cr_assert_eq(ev->flow_ctx, (void *)0xd6);
		cr_assert_eq(ev->mtu, mtu);
		cr_assert_eq(ev->mtu_src, GSO_PMTU_SRC_ICMP);
		cr_assert_eq(dinfo(d).path_mtu, mtu, "v6 %d: path_mtu %u", v6, dinfo(d).path_mtu);
		cr_assert_eq(dinfo(d).pmtu_changes, 1);
		cr_assert_eq(dinfo(d).max_gso_size, max, "v6 %d: max_gso_size %u, want %u", v6, dinfo(d).max_gso_size,
			     max);
		st = estats(e);
		cr_assert_eq(st.icmp_pmtu, 1);
		cr_assert_eq(st.icmp_stale + st.icmp_bad, 0);
		ik = icmp_about(l3, IPPROTO_UDP, UDP_OUR, UDP_PEER, 0, mtu);
		icmp_in(e, &ik);
		cr_assert_eq(estats(e).icmp_stale, 1, "v6 %d: the same MTU again", v6);

		cr_assert_eq(gso_dgram__send(d, payload, 3 * (max + 1), max + 1, 1), -EMSGSIZE, "v6 %d", v6);
		mark = f->n;
		cr_assert_eq(gso_dgram__send(d, payload, 3 * max, max, 2), 0, "v6 %d", v6);
		run_until(e, vnow + 10 * MS);
		cr_assert_gt(f->n, mark, "v6 %d: nothing sent", v6);
		for (unsigned i = mark; i < f->n; i++)
			cr_assert_eq(f->r[i].mss_seg, max, "v6 %d: cut at %u", v6, f->r[i].mss_seg);
		gso_dgram__close(d);
		gso_engine__destroy(e);
	}
}

/* ICMP that is no PMTU error, quoting the stream: type and code for IPv4, for IPv6. */
static const struct {
	const char *what;
	uint8_t tc[2][2];
} not_pmtu[] = {
	{ "an echo request", { { 8, 0 }, { 128, 0 } } },
	{ "port unreachable", { { 3, 3 }, { 1, 4 } } },
	{ "time exceeded", { { 11, 0 }, { 3, 0 } } },
};

Test(tcp_pmtu, other_icmp_is_nobodys)
{
	for (unsigned k = 0; k < NKINDS; k++) {
		uint32_t written, una, nxt;
		struct conn c = busy_conn(k, &written, &una, &nxt);

		for (unsigned i = 0; i < sizeof(not_pmtu) / sizeof(not_pmtu[0]); i++) {
			struct icmp_knobs ik = icmp_tcp(&c, una, 1280);

			ik.type = not_pmtu[i].tc[c.l3 == GSO_L3_IPV6][0];
			ik.code = not_pmtu[i].tc[c.l3 == GSO_L3_IPV6][1];
			ignored_k(&c, k, &ik, OTHER, not_pmtu[i].what);
		}
		cr_assert_eq(estats(c.e).icmp_pmtu, 0);
		conn_close(&c);
	}
}
