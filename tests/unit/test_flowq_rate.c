/*
 * Delivery-rate samples of the flow send queue (gso_flowq__rate_sample(),
 * gso_flowq__check_app_limited(), the rate fields of gso_flowq_info),
 * against values computed by hand.  The scheme is Linux's tcp_rate.c and
 * the IETF draft "Delivery Rate Estimation" in payload bytes and ns: every
 * transmission records (delivered, delivered_ns, first_tx_ns) of the flow
 * as it is sent; an ACK picks, of the transmissions it newly delivers, the
 * one sent last (ties: the higher sequence), and
 *
 *   snd_interval = that tx time - its first_tx_ns
 *   ack_interval = this ACK     - its delivered_ns
 *   interval     = max(snd, ack), refused (delivered 0, interval 0) below min RTT
 *   delivered    = delivered now - its delivered
 *
 * after which first_tx_ns = its tx time and, if anything was delivered,
 * delivered_ns = now.  A send with nothing out starts a flight:
 * first_tx_ns = delivered_ns = now.
 *
 * Each case is a script of steps with explicit virtual times, in us in the
 * tables (the runner converts to ns).  Sequence numbers start at 0 and
 * every MSS is 1000 bytes, so segment k is [1000k, 1000k + 1000).  In the
 * comments a transmission's recorded state is written (delivered,
 * delivered_ns, first_tx_ns); "st" is the flow's (delivered, delivered_ns,
 * first_tx_ns) after a step; rates are floor(bytes * 1e9 / interval_ns).
 * Every ACK row checks every field of the sample and the info fields
 * delivered_bytes, delivery_rate and app_limited; every step checks
 * gso_flowq__check() and that steps other than ACKs leave the sample alone.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <gso/flowq.h>

#define MSS 1000u
#define WND (1u << 24)
#define REL_MAX 64

enum op { OP_END = 0, OP_APPEND, OP_SEND, OP_TIMEOUT, OP_APPLIM, OP_ACK };

struct xinfo {
	uint64_t delivered_bytes, delivery_rate;
	uint32_t app_limited;
};

struct step {
	enum op op;
	uint64_t t_us;   /* SEND, ACK: virtual time */
	uint32_t a;      /* APPEND: bytes; SEND: max segments; APPLIM: cwnd segments; ACK: cumulative ack */
	uint32_t seq, len; /* SEND: the range peek must name */
	bool rt;         /* SEND: it is a retransmission */
	unsigned nsack;  /* ACK */
	struct gso_flowq_sack sack[2];
	bool norel;      /* ACK: no release records (-ENOSPC when it covers an entry) */
	bool old;        /* ACK: below snd_una (GSO_FLOWQ_RES_OLD) */
	int ret;         /* ACK: 0 or -errno; TIMEOUT: segments marked lost; APPLIM: 0 or 1 */
	struct gso_rate_sample rs; /* ACK with ret 0: the sample */
	struct xinfo in; /* ACK: info afterwards; APPLIM: app_limited afterwards */
};

#define US(x) ((uint64_t)(x) * 1000u)
#define AL GSO_RATE_F_APP_LIMITED
#define RT GSO_RATE_F_RETRANS

#define APPEND(n)              { .op = OP_APPEND, .a = (n) }
#define SEND(t, segs, s, l)    { .op = OP_SEND, .t_us = (t), .a = (segs), .seq = (s), .len = (l) }
#define RESEND(t, segs, s, l)  { .op = OP_SEND, .t_us = (t), .a = (segs), .seq = (s), .len = (l), .rt = true }
#define TIMEOUT(n)             { .op = OP_TIMEOUT, .ret = (n) }
#define APPLIM(cwnd, r, al)    { .op = OP_APPLIM, .a = (cwnd), .ret = (r), .in = { .app_limited = (al) } }
#define ACK(t, seq)            .op = OP_ACK, .t_us = (t), .a = (seq)
#define SACK1(s, e)            .nsack = 1, .sack = { { (s), (e) } }
#define SACK2(s1, e1, s2, e2)  .nsack = 2, .sack = { { (s1), (e1) }, { (s2), (e2) } }
/* Columns: delivered, interval, snd_interval, ack_interval (us), prior_delivered,
 * delivered_total, acked_sacked, losses, prior_in_flight (bytes), rtt (us), flags. */
#define RS(del, iv, snd, ackiv, prior, total, acked, lost, pif, rtt, fl)                   \
	.rs = { .delivered = (del), .interval_ns = US(iv), .snd_interval_ns = US(snd),      \
		.ack_interval_ns = US(ackiv), .prior_delivered = (prior),                   \
		.delivered_total = (total), .rtt_ns = US(rtt), .acked_sacked = (acked),     \
		.losses = (lost), .prior_in_flight = (pif), .flags = (fl) }
/* info after the ACK: delivered_bytes, delivery_rate (bytes/s), app_limited */
#define INFO(d, r, al)         .in = { (d), (r), (al) }
/* An ACK without a sample: nothing newly delivered. */
#define NOSAMPLE(total, pif)   RS(0, 0, 0, 0, 0, total, 0, 0, pif, 0, 0)

static struct gso_flowq_info info(const struct gso_flowq *q)
{
	GSO_OPTS(gso_flowq_info, st);

	cr_assert_eq(gso_flowq__info(q, &st), 0);
	return st;
}

static struct gso_rate_sample sample(const struct gso_flowq *q)
{
	GSO_OPTS(gso_rate_sample, rs);

	cr_assert_eq(gso_flowq__rate_sample(q, &rs), 0);
	return rs;
}

#define EXPECT_FIELD(got, want, f, name, k)                                                \
	cr_expect_eq((got).f, (want).f, "%s step %zu: " #f " %llu, expected %llu", name, k,  \
		     (unsigned long long)(got).f, (unsigned long long)(want).f)

static void expect_sample(const char *name, size_t k, const struct gso_rate_sample *got,
			  const struct gso_rate_sample *want)
{
	EXPECT_FIELD(*got, *want, delivered, name, k);
	EXPECT_FIELD(*got, *want, interval_ns, name, k);
	EXPECT_FIELD(*got, *want, snd_interval_ns, name, k);
	EXPECT_FIELD(*got, *want, ack_interval_ns, name, k);
	EXPECT_FIELD(*got, *want, prior_delivered, name, k);
	EXPECT_FIELD(*got, *want, delivered_total, name, k);
	EXPECT_FIELD(*got, *want, acked_sacked, name, k);
	EXPECT_FIELD(*got, *want, losses, name, k);
	EXPECT_FIELD(*got, *want, prior_in_flight, name, k);
	EXPECT_FIELD(*got, *want, rtt_ns, name, k);
	EXPECT_FIELD(*got, *want, flags, name, k);
}

static void run(const char *name, uint32_t flags, const struct step *st)
{
	GSO_OPTS(gso_flowq_opts, o, .flags = flags);
	struct gso_flowq *q = NULL;
	struct gso_rate_sample last;
	uint32_t off = 0;

	cr_assert_eq(gso_flowq__create(&q, &o), 0);
	cr_assert_eq(gso_flowq__set_wnd(q, WND), 0);
	last = sample(q);
	cr_expect_eq(last.delivered, 0, "%s: sample before any ACK", name);
	cr_expect_eq(last.interval_ns, 0, "%s: sample before any ACK", name);

	for (size_t k = 0; st[k].op != OP_END; k++) {
		const struct step *s = &st[k];
		struct gso_flowq_info before = info(q), after;
		struct gso_flowq_ack_res res = { .sz = sizeof(res) };
		struct gso_flowq_rel rel[REL_MAX];
		struct gso_flowq_tx tx = { .sz = sizeof(tx) };
		struct gso_rate_sample got;
		int r;

		switch (s->op) {
		case OP_APPEND:
			cr_assert_eq(gso_flowq__append(q, 1, off, s->a, MSS), 0, "%s step %zu", name, k);
			off += s->a;
			break;
		case OP_SEND:
			cr_assert_eq(gso_flowq__peek(q, s->a, &tx), 1, "%s step %zu: peek", name, k);
			cr_expect_eq(tx.seq, s->seq, "%s step %zu: seq %u", name, k, tx.seq);
			cr_expect_eq(tx.len, s->len, "%s step %zu: len %u", name, k, tx.len);
			cr_expect_eq(!!(tx.flags & GSO_FLOWQ_TX_RETRANS), s->rt, "%s step %zu: kind", name, k);
			cr_assert_eq(gso_flowq__sent(q, &tx, US(s->t_us)), 0, "%s step %zu: sent", name, k);
			break;
		case OP_TIMEOUT:
			cr_expect_eq(gso_flowq__timeout(q), s->ret, "%s step %zu: timeout", name, k);
			break;
		case OP_APPLIM:
			r = gso_flowq__check_app_limited(q, s->a);
			cr_expect_eq(r, s->ret, "%s step %zu: check_app_limited(%u) = %d", name, k, s->a, r);
			after = info(q);
			cr_expect_eq(after.app_limited, s->in.app_limited, "%s step %zu: app_limited", name, k);
			if (r == 0)
				cr_expect_eq(memcmp(&after, &before, sizeof(after)), 0,
					     "%s step %zu: a check that did not mark changed the queue", name, k);
			break;
		case OP_ACK: {
			GSO_OPTS(gso_flowq_ack, a, .ack = s->a, .wnd = WND, .now_ns = US(s->t_us),
				 .n_sack = s->nsack);
			memcpy(a.sack, s->sack, sizeof(s->sack));
			r = gso_flowq__ack(q, &a, &res, rel, s->norel ? 0 : REL_MAX);
			cr_assert_eq(r, s->ret, "%s step %zu: ack %u returned %d", name, k, s->a, r);
			after = info(q);
			got = sample(q);
			if (r) {
				/* Refused: nothing changes, the previous sample stays. */
				cr_expect_eq(memcmp(&after, &before, sizeof(after)), 0,
					     "%s step %zu: a refused ACK changed the queue", name, k);
				cr_expect_eq(memcmp(&got, &last, sizeof(got)), 0,
					     "%s step %zu: a refused ACK changed the sample", name, k);
				break;
			}
			cr_expect_eq(!!(res.flags & GSO_FLOWQ_RES_OLD), s->old, "%s step %zu: old", name, k);
			if (s->old)
				cr_expect_eq(memcmp(&after, &before, sizeof(after)), 0,
					     "%s step %zu: an old ACK changed the queue", name, k);
			expect_sample(name, k, &got, &s->rs);
			/* The sample agrees with the ACK's result and the queue's own counters. */
			cr_expect_eq(got.rtt_ns, res.rtt_ns, "%s step %zu: rtt vs res", name, k);
			cr_expect_eq(got.prior_in_flight, before.in_flight_bytes,
				     "%s step %zu: prior_in_flight %u, info said %u before the ACK", name, k,
				     got.prior_in_flight, before.in_flight_bytes);
			cr_expect_eq(got.delivered_total, after.delivered_bytes, "%s step %zu: total vs info",
				     name, k);
			EXPECT_FIELD(after, s->in, delivered_bytes, name, k);
			EXPECT_FIELD(after, s->in, delivery_rate, name, k);
			EXPECT_FIELD(after, s->in, app_limited, name, k);
			last = got;
			break;
		}
		case OP_END:
			break;
		}
		cr_assert_eq(gso_flowq__check(q), 0, "%s step %zu: check", name, k);
		if (s->op != OP_ACK) {
			got = sample(q);
			cr_expect_eq(memcmp(&got, &last, sizeof(got)), 0,
				     "%s step %zu: the sample changed without an ACK", name, k);
		}
	}
	gso_flowq__destroy(q);
}

/* ---- a first flight ------------------------------------------------- */

/*
 * Four segments paced 1 ms apart, RTT about 10 ms.  In a first flight every
 * transmission records (0, 0, 0): nothing was delivered yet and the flight
 * started at t = 0.  So the ACK phase (now - 0) is always the longer one.
 */
static const struct step first_flight[] = {
	APPEND(4000),
	SEND(0, 1, 0, 1000),    /* seg0 (0, 0, 0): starts the flight, first_tx = delivered_ns = 0 */
	SEND(1000, 1, 1000, 1000), /* seg1 (0, 0, 0) */
	SEND(2000, 1, 2000, 1000), /* seg2 (0, 0, 0) */
	SEND(3000, 1, 3000, 1000), /* seg3 (0, 0, 0) */
	/* seg0: snd 0 - 0 = 0, ack 10000 - 0 = 10000, interval 10000 = min RTT (10000, this
	 * ACK's RTT): not below, valid.  delivered 1000 - 0 = 1000; 1000 B / 10 ms = 100000 B/s.
	 * In flight before: 4 x 1000.  st (1000, 10000, 0). */
	{ ACK(10000, 1000), RS(1000, 10000, 0, 10000, 0, 1000, 1000, 0, 4000, 10000, 0),
	  INFO(1000, 100000, 0) },
	/* seg1 (tx 1000): snd 1000 - 0 = 1000, ack 12500 - 0 = 12500 -> 12500; delivered
	 * 2000 - 0 = 2000; 2000 / 12.5 ms = 160000.  RTT 12500 - 1000 = 11500.  st (2000, 12500, 1000). */
	{ ACK(12500, 2000), RS(2000, 12500, 1000, 12500, 0, 2000, 1000, 0, 3000, 11500, 0),
	  INFO(2000, 160000, 0) },
	/* seg2 and seg3 in one ACK: seg3 (tx 3000) was sent last.  snd 3000 - 0 = 3000, ack
	 * 16000 - 0 = 16000; delivered 4000 - 0 = 4000; 4000 / 16 ms = 250000.  RTT 16000 - 3000. */
	{ ACK(16000, 4000), RS(4000, 16000, 3000, 16000, 0, 4000, 2000, 0, 2000, 13000, 0),
	  INFO(4000, 250000, 0) },
	{ .op = OP_END },
};

/* ---- steady ACK clock ------------------------------------------------ */

/*
 * Two segments in flight, one sent per ACK, RTT 10 ms: once the clock runs
 * each sample spans one RTT and the two segments delivered in it, 2000 B /
 * 10 ms = 200000 B/s.
 */
static const struct step ack_clock[] = {
	APPEND(6000),
	SEND(0, 1, 0, 1000),       /* seg0 (0, 0, 0), flight starts at 0 */
	SEND(5000, 1, 1000, 1000), /* seg1 (0, 0, 0) */
	/* seg0: snd 0, ack 10000 - 0; delivered 1000; 100000 B/s.  st (1000, 10000, 0) */
	{ ACK(10000, 1000), RS(1000, 10000, 0, 10000, 0, 1000, 1000, 0, 2000, 10000, 0),
	  INFO(1000, 100000, 0) },
	SEND(10000, 1, 2000, 1000), /* seg2 (1000, 10000, 0) */
	/* seg1 (tx 5000): snd 5000 - 0, ack 15000 - 0 = 15000; delivered 2000 - 0 = 2000;
	 * 2000 / 15 ms = 133333.3.  st (2000, 15000, 5000) */
	{ ACK(15000, 2000), RS(2000, 15000, 5000, 15000, 0, 2000, 1000, 0, 2000, 10000, 0),
	  INFO(2000, 133333, 0) },
	SEND(15000, 1, 3000, 1000), /* seg3 (2000, 15000, 5000) */
	/* seg2 (tx 10000): snd 10000 - 0 = 10000, ack 20000 - 10000 = 10000; delivered
	 * 3000 - 1000 = 2000; 200000.  st (3000, 20000, 10000) */
	{ ACK(20000, 3000), RS(2000, 10000, 10000, 10000, 1000, 3000, 1000, 0, 2000, 10000, 0),
	  INFO(3000, 200000, 0) },
	SEND(20000, 1, 4000, 1000), /* seg4 (3000, 20000, 10000) */
	/* seg3 (tx 15000): snd 15000 - 5000, ack 25000 - 15000; delivered 4000 - 2000. */
	{ ACK(25000, 4000), RS(2000, 10000, 10000, 10000, 2000, 4000, 1000, 0, 2000, 10000, 0),
	  INFO(4000, 200000, 0) },
	SEND(25000, 1, 5000, 1000), /* seg5 (4000, 25000, 15000) */
	/* seg4 (tx 20000): snd 20000 - 10000, ack 30000 - 20000; delivered 5000 - 3000. */
	{ ACK(30000, 5000), RS(2000, 10000, 10000, 10000, 3000, 5000, 1000, 0, 2000, 10000, 0),
	  INFO(5000, 200000, 0) },
	/* seg5 (tx 25000): snd 25000 - 15000, ack 35000 - 25000; delivered 6000 - 4000. */
	{ ACK(35000, 6000), RS(2000, 10000, 10000, 10000, 4000, 6000, 1000, 0, 1000, 10000, 0),
	  INFO(6000, 200000, 0) },
	{ .op = OP_END },
};

/* ---- cumulative, partial and stretch ACKs ----------------------------- */

static const struct step stretch[] = {
	APPEND(12000),             /* one entry, 12 segments */
	SEND(0, 4, 0, 4000),       /* A: a 4-segment super-segment (0, 0, 0) */
	SEND(1000, 2, 4000, 2000), /* B (0, 0, 0) */
	SEND(2000, 2, 6000, 2000), /* C (0, 0, 0) */
	/* Partial ACK of A, byte-exact: 1500 bytes delivered (A stays, with its state).
	 * snd 0, ack 10000 - 0; 1500 / 10 ms = 150000.  In flight 8000.  st (1500, 10000, 0) */
	{ ACK(10000, 1500), RS(1500, 10000, 0, 10000, 0, 1500, 1500, 0, 8000, 10000, 0),
	  INFO(1500, 150000, 0) },
	SEND(10000, 2, 8000, 2000), /* D1 (1500, 10000, 0) */
	/* The rest of A (2500 bytes), same state (0, 0, 0): snd 0, ack 12500 - 0 = 12500;
	 * delivered 4000 - 0 = 4000; 4000 / 12.5 ms = 320000.  In flight 2500 + 3 x 2000 = 8500.
	 * st (4000, 12500, 0) */
	{ ACK(12500, 4000), RS(4000, 12500, 0, 12500, 0, 4000, 2500, 0, 8500, 12500, 0),
	  INFO(4000, 320000, 0) },
	SEND(12500, 2, 10000, 2000), /* D2 (4000, 12500, 0) */
	/* Stretch ACK of B, C, D1, D2 (8 segments, four transmissions): D2 was sent last.
	 * snd 12500 - 0 = 12500, ack 22500 - 12500 = 10000: the send phase is the longer
	 * (ACK compression).  delivered 12000 - 4000 = 8000; 8000 / 12.5 ms = 640000.
	 * RTT 22500 - 12500 = 10000. */
	{ ACK(22500, 12000), RS(8000, 12500, 12500, 10000, 4000, 12000, 8000, 0, 8000, 10000, 0),
	  INFO(12000, 640000, 0) },
	{ .op = OP_END },
};

/* ---- SACK ----------------------------------------------------------- */

/*
 * Five segments at t = 0 (seg0..seg4), then four ACKs arriving together at
 * 10 ms, each followed by a new segment: A..D (seg5..seg8) all go out at
 * 10 ms, but each records a different delivered count.  seg4 (H) is then
 * the hole under them.
 */
static const struct step sack[] = {
	APPEND(9000),
	SEND(0, 1, 0, 1000), SEND(0, 1, 1000, 1000), SEND(0, 1, 2000, 1000),
	SEND(0, 1, 3000, 1000), SEND(0, 1, 4000, 1000), /* all (0, 0, 0) */
	/* seg0: snd 0, ack 10000; delivered 1000; 100000.  st (1000, 10000, 0) */
	{ ACK(10000, 1000), RS(1000, 10000, 0, 10000, 0, 1000, 1000, 0, 5000, 10000, 0),
	  INFO(1000, 100000, 0) },
	SEND(10000, 1, 5000, 1000), /* A (1000, 10000, 0) */
	/* seg1 (0, 0, 0): delivered 2000 - 0 over 10000; 200000.  st (2000, 10000, 0) */
	{ ACK(10000, 2000), RS(2000, 10000, 0, 10000, 0, 2000, 1000, 0, 5000, 10000, 0),
	  INFO(2000, 200000, 0) },
	SEND(10000, 1, 6000, 1000), /* B (2000, 10000, 0) */
	{ ACK(10000, 3000), RS(3000, 10000, 0, 10000, 0, 3000, 1000, 0, 5000, 10000, 0),
	  INFO(3000, 300000, 0) },
	SEND(10000, 1, 7000, 1000), /* C (3000, 10000, 0) */
	{ ACK(10000, 4000), RS(4000, 10000, 0, 10000, 0, 4000, 1000, 0, 5000, 10000, 0),
	  INFO(4000, 400000, 0) },
	SEND(10000, 1, 8000, 1000), /* D (4000, 10000, 0) */
	/*
	 * SACK B, then A (blocks in that order).  B is taken first; A has the same send
	 * time and a lower sequence, so B stays chosen: prior 2000 (A's would be 1000).
	 * snd 10000 - 0, ack 20000 - 10000; delivered 6000 - 2000 = 4000; 400000.
	 * Loss: RACK (reordering window min RTT / 4 = 2500) finds H, sent at 0, more than
	 * 2500 before B (10000): 1000 bytes lost; C and D (10000) are not.  st (6000, 20000, 10000)
	 */
	{ ACK(20000, 4000), SACK2(6000, 7000, 5000, 6000),
	  RS(4000, 10000, 10000, 10000, 2000, 6000, 2000, 1000, 5000, 10000, 0), INFO(6000, 400000, 0) },
	/* The same SACK again: A and B gave their sample once, nothing new.  In flight: C, D. */
	{ ACK(20500, 4000), SACK1(5000, 7000), NOSAMPLE(6000, 2000), INFO(6000, 400000, 0) },
	/*
	 * Cumulative ACK of H (lost, never resent: its original arrived), A and B (SACKed:
	 * not counted again), C and D.  H (tx 0) is taken first, then C (tx 10000, later),
	 * then D (same tx as C, higher sequence): prior 4000 (C's would be 3000).
	 * snd 10000 - 0, ack 22000 - 10000 = 12000; delivered 9000 - 4000 = 5000 (acked_sacked
	 * 3000: H, C, D); 5000 / 12 ms = 416666.7.  RTT from C/D: 22000 - 10000.
	 */
	{ ACK(22000, 9000), RS(5000, 12000, 10000, 12000, 4000, 9000, 3000, 0, 2000, 12000, 0),
	  INFO(9000, 416666, 0) },
	{ .op = OP_END },
};

/* ---- retransmission ------------------------------------------------- */

/*
 * A first flight of three segments; seg2 is SACKed, then a (spurious)
 * timeout resends seg0 and seg1, and the originals' ACKs arrive right after
 * the resends.  A sample from a retransmission carries its send's state and
 * GSO_RATE_F_RETRANS, and no RTT (Karn).
 */
static const struct step retrans[] = {
	APPEND(3000),
	SEND(0, 1, 0, 1000), SEND(0, 1, 1000, 1000), SEND(0, 1, 2000, 1000), /* (0, 0, 0) */
	/* SACK seg2: snd 0, ack 10000; delivered 1000; 100000; min RTT 10000.
	 * st (1000, 10000, first_tx = seg2's tx 0) */
	{ ACK(10000, 0), SACK1(2000, 3000), RS(1000, 10000, 0, 10000, 0, 1000, 1000, 0, 3000, 10000, 0),
	  INFO(1000, 100000, 0) },
	TIMEOUT(2),                    /* seg0, seg1 lost */
	RESEND(40000, 1, 0, 1000),     /* seg0' (1000, 10000, 0) */
	/*
	 * seg0' (its original's state would be (0, 0, 0)): snd 40000 - 0 = 40000, ack
	 * 41000 - 10000 = 31000; delivered 2000 - 1000 = 1000; 1000 / 40 ms = 25000.
	 * In flight before: seg0' only (seg1 lost, seg2 SACKed).  st (2000, 41000, 40000)
	 */
	{ ACK(41000, 1000), RS(1000, 40000, 40000, 31000, 1000, 2000, 1000, 0, 1000, 0, RT),
	  INFO(2000, 25000, 0) },
	RESEND(42000, 1, 1000, 1000), /* seg1' (2000, 41000, 40000) */
	/*
	 * seg1' (seg2, SACKed, is not counted again): snd 42000 - 40000 = 2000, ack
	 * 43000 - 41000 = 2000: 2000 < min RTT 10000, refused: delivered 0, interval 0; the
	 * rest of the sample stays.  delivery_rate keeps 25000.
	 */
	{ ACK(43000, 3000), RS(0, 0, 2000, 2000, 2000, 3000, 1000, 0, 1000, 0, RT),
	  INFO(3000, 25000, 0) },
	{ .op = OP_END },
};

/* ---- app-limited -------------------------------------------------------- */

static const struct step app_limited[] = {
	/* Nothing queued, nothing out: marked; delivered + in flight is 0, so the mark is 1. */
	APPLIM(1, 1, 1),
	APPEND(999),
	APPLIM(1, 1, 1),          /* 999 unsent < 1 MSS: marked (mark 0 + 0 -> 1) */
	APPEND(1),                /* the entry grows to 1000 */
	APPLIM(1, 0, 1),          /* 1000 unsent = 1 MSS: not app-limited (the mark stays) */
	SEND(0, 1, 0, 1000),      /* seg0 (0, 0, 0), app-limited */
	/* seg0: snd 0, ack 10000; delivered 1000; 100000, taken although app-limited: no rate
	 * before.  delivered 1000 > mark 1: the mark clears.  st (1000, 10000, 0) */
	{ ACK(10000, 1000), RS(1000, 10000, 0, 10000, 0, 1000, 1000, 0, 1000, 10000, AL),
	  INFO(1000, 100000, 0) },
	APPLIM(10, 1, 1),         /* nothing unsent or out: mark 1000 + 0 = 1000 */
	APPEND(1000),
	SEND(30000, 1, 1000, 1000), /* seg1, a new flight: (1000, 30000, 30000), app-limited */
	/*
	 * seg1: snd 30000 - 30000 = 0, ack 50000 - 30000 = 20000; delivered 2000 - 1000 = 1000;
	 * 1000 / 20 ms = 50000, app-limited and lower than 100000 (1000 x 10 ms < 1000 x 20 ms):
	 * delivery_rate keeps 100000.  delivered 2000 > 1000: the mark clears.  st (2000, 50000, 30000)
	 */
	{ ACK(50000, 2000), RS(1000, 20000, 0, 20000, 1000, 2000, 1000, 0, 1000, 20000, AL),
	  INFO(2000, 100000, 0) },
	APPEND(2000),
	SEND(60000, 2, 2000, 2000), /* X, a new flight: (2000, 60000, 60000), not app-limited */
	APPLIM(2, 0, 0),          /* 2 segments in flight = cwnd 2: cwnd-limited */
	APPLIM(3, 1, 1),          /* mark 2000 + 2000 in flight = 4000 */
	APPEND(1000),
	SEND(60000, 1, 4000, 1000), /* Y (2000, 60000, 60000), app-limited */
	/*
	 * X: snd 0, ack 65000 - 60000 = 5000 (= the new min RTT); delivered 4000 - 2000 = 2000;
	 * 2000 / 5 ms = 400000.  delivered 4000 = mark 4000, not past it: still app-limited.
	 * st (4000, 65000, 60000)
	 */
	{ ACK(65000, 4000), RS(2000, 5000, 0, 5000, 2000, 4000, 2000, 0, 3000, 5000, 0),
	  INFO(4000, 400000, 1) },
	/*
	 * Y: snd 60000 - 60000 = 0, ack 66000 - 60000 = 6000; delivered 5000 - 2000 = 3000;
	 * 3000 / 6 ms = 500000, app-limited but not lower (3000 x 5 ms >= 2000 x 6 ms): taken.
	 * delivered 5000 > 4000: the mark clears.
	 */
	{ ACK(66000, 5000), RS(3000, 6000, 0, 6000, 2000, 5000, 1000, 0, 1000, 6000, AL),
	  INFO(5000, 500000, 0) },
	{ .op = OP_END },
};

/* ---- losses ------------------------------------------------------------- */

static const struct step losses[] = {
	APPEND(6000),
	SEND(0, 6, 0, 6000),      /* one super-segment (0, 0, 0) */
	/*
	 * SACK of its upper half: the entry splits, [3000, 6000) delivered: snd 0, ack 10000;
	 * 3000 / 10 ms = 300000.  Three SACKed segments above [0, 3000) make all three of those
	 * lost (RFC 6675 IsLost): losses 3000.  st (3000, 10000, 0)
	 */
	{ ACK(10000, 0), SACK1(3000, 6000), RS(3000, 10000, 0, 10000, 0, 3000, 3000, 3000, 6000, 10000, 0),
	  INFO(3000, 300000, 0) },
	APPLIM(10, 0, 0),         /* nothing unsent, 0 in flight < 10, but 3 lost segments wait */
	RESEND(10000, 1, 0, 1000),  /* (3000, 10000, 0) */
	APPLIM(10, 0, 0),         /* 2 still wait */
	RESEND(10000, 2, 1000, 2000), /* (3000, 10000, 0) */
	APPLIM(3, 0, 0),          /* all resent, but 3 in flight = cwnd 3 */
	/* seg0': snd 10000 - 0, ack 20000 - 10000; delivered 4000 - 3000 = 1000; 100000. */
	{ ACK(20000, 1000), RS(1000, 10000, 10000, 10000, 3000, 4000, 1000, 0, 3000, 0, RT),
	  INFO(4000, 100000, 0) },
	{ .op = OP_END },
};

/*
 * Without SACK: three duplicate ACKs mark the head segment lost (split off
 * the super-segment: 1000 bytes, not the entry).  Each duplicate stands for
 * a segment that left the network, so what is in flight before the next
 * ACK drops by one MSS per duplicate (as gso_flowq_info.in_flight_bytes
 * and Linux's tcp_packets_in_flight() with Reno's counted dupacks say).
 */
static const struct step reno_losses[] = {
	APPEND(5000),
	SEND(0, 5, 0, 5000),      /* (0, 0, 0) */
	/* Partial ACK: snd 0, ack 10000; delivered 1000; 100000.  st (1000, 10000, 0) */
	{ ACK(10000, 1000), RS(1000, 10000, 0, 10000, 0, 1000, 1000, 0, 5000, 10000, 0),
	  INFO(1000, 100000, 0) },
	{ ACK(11000, 1000), NOSAMPLE(1000, 4000), INFO(1000, 100000, 0) }, /* dup 1: 4 out */
	{ ACK(12000, 1000), NOSAMPLE(1000, 3000), INFO(1000, 100000, 0) }, /* dup 2: 4 - 1 */
	/* dup 3: 4 - 2 in flight before it; [1000, 2000) lost */
	{ ACK(13000, 1000), RS(0, 0, 0, 0, 0, 1000, 0, 1000, 2000, 0, 0), INFO(1000, 100000, 0) },
	RESEND(13000, 1, 1000, 1000), /* (1000, 10000, 0) */
	/*
	 * Everything: [1000, 2000)' (tx 13000) and [2000, 5000) (tx 0); the resend was sent
	 * last.  snd 13000 - 0, ack 26000 - 10000 = 16000; delivered 5000 - 1000 = 4000;
	 * 4000 / 16 ms = 250000.  In flight before: 4 segments out, 1 lost, 1 resent, 3
	 * duplicates: 1 (1000 bytes).  RTT from [2000, 5000), never resent: 26000 - 0.
	 */
	{ ACK(26000, 5000), RS(4000, 16000, 13000, 16000, 1000, 5000, 4000, 0, 1000, 26000, RT),
	  INFO(5000, 250000, 0) },
	{ .op = OP_END },
};

/* ---- old and refused ACKs ------------------------------------------------ */

static const struct step old_and_bad[] = {
	APPEND(3000),
	SEND(0, 3, 0, 3000),      /* (0, 0, 0) */
	/* snd 0, ack 10000; delivered 2000; 200000.  st (2000, 10000, 0) */
	{ ACK(10000, 2000), RS(2000, 10000, 0, 10000, 0, 2000, 2000, 0, 3000, 10000, 0),
	  INFO(2000, 200000, 0) },
	/* Refused: nothing changes, that sample stays. */
	{ ACK(11000, 3001), .ret = -EINVAL },                       /* beyond snd_nxt */
	{ ACK(11000, 2000), SACK1(2500, 3001), .ret = -EINVAL },   /* SACK beyond snd_nxt */
	{ ACK(11000, 3000), .norel = true, .ret = -ENOSPC },        /* no room for the release */
	/* Old (below snd_una): an invalid sample, the flow's counts untouched. */
	{ ACK(12000, 1000), .old = true, NOSAMPLE(2000, 1000), INFO(2000, 200000, 0) },
	/* The last segment, state (0, 0, 0): snd 0, ack 15000 - 0; delivered 3000; 200000. */
	{ ACK(15000, 3000), RS(3000, 15000, 0, 15000, 0, 3000, 1000, 0, 1000, 15000, 0),
	  INFO(3000, 200000, 0) },
	{ .op = OP_END },
};

/* ---- the scripts ---------------------------------------------------------- */

struct rate_case {
	const char *name;
	uint32_t flags; /* GSO_FLOWQ_F_* */
	const struct step *steps;
};

static const struct rate_case cases[] = {
	{ "first flight", 0, first_flight },
	{ "ACK clock", 0, ack_clock },
	{ "partial and stretch ACKs", 0, stretch },
	{ "SACK", 0, sack },
	{ "retransmission", 0, retrans },
	{ "app-limited", 0, app_limited },
	{ "SACK losses", 0, losses },
	{ "NewReno losses", GSO_FLOWQ_F_NO_SACK, reno_losses },
	{ "old and refused ACKs", 0, old_and_bad },
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

/* Criterion hands parameters to another process: pass indices, not pointers. */
ParameterizedTestParameters(flowq_rate, scripts)
{
	static int idx[N_CASES];

	for (size_t i = 0; i < N_CASES; i++)
		idx[i] = (int)i;
	return cr_make_param_array(int, idx, N_CASES);
}

ParameterizedTest(int *i, flowq_rate, scripts)
{
	run(cases[*i].name, cases[*i].flags, cases[*i].steps);
}

/* ---- the sample's size (ABI) ---------------------------------------------- */

Test(flowq_rate, sample_size_and_bad_args)
{
	GSO_OPTS(gso_flowq_opts, o);
	GSO_OPTS(gso_flowq_ack, a, .ack = 1000, .wnd = WND, .now_ns = US(10000));
	struct gso_flowq *q = NULL;
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	struct gso_flowq_rel rel[REL_MAX];
	struct gso_flowq_tx tx = { .sz = sizeof(tx) };
	struct {
		struct gso_rate_sample rs;
		uint64_t tail;
	} big;
	struct gso_rate_sample full, rs;

	cr_assert_eq(gso_flowq__create(&q, &o), 0);
	cr_assert_eq(gso_flowq__append(q, 1, 0, 1000, MSS), 0);
	cr_assert_eq(gso_flowq__peek(q, 1, &tx), 1);
	cr_assert_eq(gso_flowq__sent(q, &tx, 0), 0);
	cr_assert_eq(gso_flowq__ack(q, &a, &res, rel, REL_MAX), 0);
	full = sample(q);
	/* 1000 bytes over 10 ms (flags 0, so a sentinel in flags shows whether it was written). */
	cr_assert_eq(full.delivered, 1000);
	cr_assert_eq(full.interval_ns, US(10000));

	/* A caller built against a struct that ended after `delivered`. */
	memset(&rs, 0xa5, sizeof(rs));
	rs.sz = offsetof(struct gso_rate_sample, interval_ns);
	cr_expect_eq(gso_flowq__rate_sample(q, &rs), 0);
	cr_expect_eq(rs.delivered, 1000);
	for (size_t i = offsetof(struct gso_rate_sample, interval_ns); i < sizeof(rs); i++)
		cr_expect_eq(((unsigned char *)&rs)[i], 0xa5, "byte %zu past sz written", i);

	/* Everything but flags. */
	memset(&rs, 0xa5, sizeof(rs));
	rs.sz = offsetof(struct gso_rate_sample, flags);
	cr_expect_eq(gso_flowq__rate_sample(q, &rs), 0);
	cr_expect_eq(memcmp((char *)&rs + sizeof(size_t), (char *)&full + sizeof(size_t),
			    offsetof(struct gso_rate_sample, flags) - sizeof(size_t)), 0);
	cr_expect_eq(rs.flags, 0xa5a5a5a5u);

	/* Not past sz: refused, nothing written.  sz 0 (`= {0}`): the whole struct. */
	memset(&rs, 0xa5, sizeof(rs));
	rs.sz = sizeof(size_t);
	cr_expect_eq(gso_flowq__rate_sample(q, &rs), -EINVAL);
	cr_expect_eq(rs.delivered, 0xa5a5a5a5a5a5a5a5ull);
	rs.sz = sizeof(size_t) - 1;
	cr_expect_eq(gso_flowq__rate_sample(q, &rs), -EINVAL);
	cr_expect_eq(rs.delivered, 0xa5a5a5a5a5a5a5a5ull);
	rs.sz = 0;
	cr_expect_eq(gso_flowq__rate_sample(q, &rs), 0);
	cr_expect_eq(rs.sz, sizeof(rs));
	cr_expect_eq(memcmp(&rs, &full, sizeof(rs)), 0);

	/* A newer caller's larger struct: the known part filled, its tail left alone. */
	memset(&big, 0xa5, sizeof(big));
	big.rs.sz = sizeof(big);
	cr_expect_eq(gso_flowq__rate_sample(q, &big.rs), 0);
	cr_expect_eq(memcmp((char *)&big.rs + sizeof(size_t), (char *)&full + sizeof(size_t),
			    sizeof(full) - sizeof(size_t)), 0);
	cr_expect_eq(big.tail, 0xa5a5a5a5a5a5a5a5ull);

	cr_expect_eq(gso_flowq__rate_sample(NULL, &rs), -EINVAL);
	cr_expect_eq(gso_flowq__rate_sample(q, NULL), -EINVAL);
	cr_expect_eq(gso_flowq__check_app_limited(NULL, 10), -EINVAL);
	cr_expect_eq(gso_flowq__check(q), 0);
	gso_flowq__destroy(q);
}
