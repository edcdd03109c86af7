/*
 * libFuzzer target for the flow send queue and what feeds on it: a random
 * life of one flow (appends of random sizes and MSS, sends of random
 * bursts, ACKs with random cumulative points, windows and SACK blocks --
 * in range or not --, timeouts, app-limited checks), each ACK's rate
 * sample fed to a BBR controller as the transmit engine feeds it.
 *
 * Checked after every step: gso_flowq__check() finds the counters and the
 * entries in agreement; a refused call changed nothing; the rate sample is
 * consistent (delivered = delivered_total - prior_delivered when valid, its
 * interval at least the min RTT, never more delivered than was appended);
 * delivered bytes never go back; every buffer byte released is released
 * once and in order; BBR's cwnd and pacing rate stay positive.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gso/cc.h>
#include <gso/flowq.h>

#include "fuzz_input.h"

#define ENTRIES 64u
#define ISN 0xfffff000u /* wraps within the first few KiB */

struct life {
	struct gso_flowq *q;
	struct gso_cc *cc;
	struct gso_flowq_rel rel[ENTRIES + 1];
	uint64_t now, appended, delivered;
	uint32_t handle, off;       /* the buffer being appended */
	uint32_t released[256];     /* per handle (mod 256): bytes released so far */
	uint32_t mss;
};

static void info(const struct gso_flowq *q, struct gso_flowq_info *fi)
{
	memset(fi, 0, sizeof(*fi));
	fi->sz = sizeof(*fi);
	check(!gso_flowq__info(q, fi));
}

/* A sequence number around the queue's edges: in range mostly, sometimes not. */
static uint32_t seq_near(struct in *in, const struct gso_flowq_info *fi)
{
	uint32_t span = fi->snd_nxt - fi->snd_una, r = take32(in);

	switch (r & 7) {
	case 0:
		return fi->snd_una - (r >> 20); /* old */
	case 1:
		return fi->snd_nxt + (r >> 20); /* beyond what was sent */
	default:
		return fi->snd_una + (span ? (r >> 3) % (span + 1) : 0);
	}
}

static void do_append(struct life *l, struct in *in)
{
	uint32_t len = 1 + take32(in) % 100000, mss = 1 + take8(in) * 7;
	struct gso_flowq_info before, after;
	int r;

	if (take8(in) & 1)
		mss = l->mss;
	info(l->q, &before);
	r = gso_flowq__append(l->q, l->handle, l->off, len, mss);
	info(l->q, &after);
	if (r) {
		check(r == -ENOSPC || r == -EINVAL || r == -EOVERFLOW);
		check(!memcmp(&before, &after, sizeof(before)));
		/* A full queue: the writer moves to a fresh buffer next time. */
		return;
	}
	check(after.write_seq == before.write_seq + len);
	l->off += len;
	l->appended += len;
	if (take8(in) < 64) { /* start a new buffer */
		l->handle++;
		l->off = 0;
	}
}

static void do_send(struct life *l, struct in *in)
{
	struct gso_flowq_tx tx = { .sz = sizeof(tx) };
	uint32_t segs = 1 + take8(in) % 64;
	int r;

	r = gso_flowq__peek(l->q, segs, &tx);
	check(r == 0 || r == 1);
	if (!r)
		return;
	check(tx.segs <= segs && tx.len && tx.segs == gso_flowq_segs(tx.len, tx.mss));
	if (take8(in) < 32 && tx.len > 1)
		tx.len -= 1 + take32(in) % (tx.len - 1); /* the device took less */
	if (take8(in) < 8)
		tx.seq++; /* not what peek named: refused */
	l->now += take8(in) * 1000u;
	r = gso_flowq__sent(l->q, &tx, l->now);
	check(r == 0 || r == -EINVAL || r == -ENOSPC);
}

static void check_rel(struct life *l, const struct gso_flowq_rel *rel, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t *done = &l->released[rel[i].handle & 255];

		/* Released in order and never twice: the acknowledged head only grows. */
		check(rel[i].upto >= *done);
		*done = rel[i].done ? 0 : rel[i].upto;
	}
}

static void do_ack(struct life *l, struct in *in)
{
	struct gso_flowq_info before, after;
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	struct gso_rate_sample rs = { .sz = sizeof(rs) }, rs_before = { .sz = sizeof(rs_before) };
	uint8_t f = take8(in);
	int r;

	info(l->q, &before);
	GSO_OPTS(gso_flowq_ack, a, .ack = seq_near(in, &before), .wnd = take32(in) >> (take8(in) & 31),
		 .flags = (f & 1) ? GSO_FLOWQ_ACK_F_DATA : 0, .n_sack = (f >> 1) % (GSO_FLOWQ_MAX_SACK + 1));
	for (unsigned b = 0; b < a.n_sack; b++) {
		a.sack[b].start = seq_near(in, &before);
		a.sack[b].end = (take8(in) & 7) ? a.sack[b].start + take32(in) % 200000 : seq_near(in, &before);
	}
	l->now += take32(in) % 50000000u;
	a.now_ns = l->now;
	gso_flowq__rate_sample(l->q, &rs_before);
	r = gso_flowq__ack(l->q, &a, &res, l->rel, (f & 0x80) ? 1 : ENTRIES + 1);
	info(l->q, &after);
	gso_flowq__rate_sample(l->q, &rs);
	if (r) {
		check(r == -EINVAL || r == -ENOSPC);
		check(!memcmp(&before, &after, sizeof(before)));
		check(!memcmp(&rs, &rs_before, sizeof(rs)));
		return;
	}
	check_rel(l, l->rel, res.n_rel);
	check(after.delivered_bytes >= l->delivered);
	check(after.delivered_bytes <= l->appended);
	l->delivered = after.delivered_bytes;
	check(rs.delivered_total == after.delivered_bytes);
	if (rs.interval_ns) {
		check(rs.delivered);
		check(rs.prior_delivered + rs.delivered == rs.delivered_total);
		check(rs.interval_ns >= rs.snd_interval_ns && rs.interval_ns >= rs.ack_interval_ns);
		check(rs.interval_ns >= after.min_rtt_ns);
	} else {
		check(!rs.delivered);
	}
	check(!(rs.flags & ~(GSO_RATE_F_APP_LIMITED | GSO_RATE_F_RETRANS)));
	/* The controller takes what the engine gives it. */
	GSO_OPTS(gso_cc_ack, ca, .now_ns = l->now, .rtt_ns = res.rtt_ns, .acked_segs = res.delivered_segs,
		 .packets_out = after.in_flight, .rs = &rs,
		 .flags = after.in_recovery ? GSO_CC_ACK_RECOVERY : 0);
	check(!gso_cc__on_ack(l->cc, &ca));
	if (res.lost_segs)
		check(gso_cc__on_loss(l->cc, l->now, res.lost_sent_ns) >= 0);
}

static void steps(struct life *l, struct in *in)
{
	while (in->n) {
		uint8_t op = take8(in);

		switch (op % 8) {
		case 0:
		case 1:
			do_append(l, in);
			break;
		case 2:
		case 3:
			do_send(l, in);
			break;
		case 4:
		case 5:
			do_ack(l, in);
			break;
		case 6:
			check(gso_flowq__timeout(l->q) >= 0);
			check(!gso_cc__on_rto(l->cc, l->now));
			break;
		default:
			check(gso_flowq__check_app_limited(l->q, 1 + take8(in)) >= 0);
			check(!gso_cc__on_tx_start(l->cc, l->now, take8(in) & 1));
			break;
		}
		check(!gso_flowq__check(l->q));
		check(gso_cc__cwnd(l->cc) >= 1 && gso_cc__pacing_rate(l->cc) > 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct life l;
	struct gso_flowq_rel flushed[ENTRIES + 1];
	uint8_t f = take8(&in);
	int n;

	memset(&l, 0, sizeof(l));
	l.mss = 1 + take8(&in) * 7;
	l.now = 1000000;
	GSO_OPTS(gso_flowq_opts, fo, .max_entries = ENTRIES, .isn = ISN, .dupthresh = 1 + (f & 3),
		 .flags = (f >> 2) & (GSO_FLOWQ_F_NO_SACK | GSO_FLOWQ_F_NO_RACK),
		 .max_bytes = (f & 0x10) ? 1 + take32(&in) % 65535 : 0);
	GSO_OPTS(gso_cc_opts, co, .algo = GSO_CC_BBR, .mss = l.mss, .hdr_len = 66, .seed = 1);
	if (gso_flowq__create(&l.q, &fo))
		return 0;
	check(!gso_cc__create(&l.cc, &co));
	steps(&l, &in);
	n = gso_flowq__flush(l.q, flushed, ENTRIES + 1);
	check(n >= 0);
	check_rel(&l, flushed, (unsigned)n);
	check(!gso_flowq__check(l.q));
	gso_cc__destroy(l.cc);
	gso_flowq__destroy(l.q);
	return 0;
}
