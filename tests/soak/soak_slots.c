/*
 * The main thread's side of the soak's flows (soak.h): a slot that is
 * IDLE and due gets a new stream or datagram flow, handed to the worker
 * of its queue; a slot the worker made DONE is judged here.  A stream
 * must end with its receiver's verdict "ok" for every byte; a failure
 * is counted when a flap, an MTU change or its receiver's kill fell in
 * its life (soak_note_event and the receivers' kill rings), and stops the
 * soak otherwise; a wrong verdict stops it always.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "soak.h"

#define EXPLAIN_BEFORE_NS SOAK_NS /* an event this shortly before a flow opened still counts */

const char *soak_errname(int err)
{
	const char *n = strerrorname_np(err < 0 ? -err : err);

	return n ? n : "unknown";
}

static void count_errno(struct soak *S, int err)
{
	for (unsigned i = 0; i < SOAK_MAX_ERRNOS; i++)
		if (S->c.errnos[i] == err || !S->c.errno_n[i]) {
			S->c.errnos[i] = err;
			S->c.errno_n[i]++;
			return;
		}
}

void soak_note_event(struct soak *S, uint64_t t)
{
	S->events[S->nevents++ % SOAK_EVENTS] = t;
}

/* Did a flap, an MTU change or the kill of receiver `rx` (UINT32_MAX: none) fall in [t_open, t_end]? */
static const char *explained(const struct soak *S, uint32_t rx, uint64_t t_open, uint64_t t_end)
{
	uint64_t from = t_open > EXPLAIN_BEFORE_NS ? t_open - EXPLAIN_BEFORE_NS : 0;

	if (rx < SOAK_MAX_STREAMS)
		for (unsigned i = 0; i < 8 && i < S->rx[rx].nkills; i++)
			if (S->rx[rx].kills[i] >= from && S->rx[rx].kills[i] <= t_end)
				return "its receiver's kill";
	for (unsigned i = 0; i < SOAK_EVENTS && i < S->nevents; i++)
		if (S->events[i] >= from && S->events[i] <= t_end)
			return "a flap or MTU change";
	return NULL;
}

/* ---- streams and datagram flows ---- */

static bool route(struct soak *S, struct gso_route *rt)
{
	uint8_t dst[16] = { 0 };

	inet_pton(AF_INET, SOAK_ADDR_B, dst);
	*rt = (struct gso_route){ .sz = sizeof(*rt) };
	if (gso_route__lookup(GSO_L3_IPV4, dst, S->bed.ifindex, 300, rt)) {
		S->c.route_waits++;
		return false;
	}
	return true;
}

/* Give a slot to worker q, whose `fn` opens its flow; a full ring: IDLE again, retried shortly. */
static bool hand_over(struct soak *S, uint32_t q, gso_port_call_fn fn, void *slot, atomic_int *state, uint64_t *next,
		      uint64_t now)
{
	int err;

	atomic_store_explicit(state, SLOT_ACTIVE, memory_order_relaxed);
	err = gso_port__call(S->port, q, fn, slot);
	if (!err)
		return true;
	atomic_store_explicit(state, SLOT_IDLE, memory_order_relaxed);
	*next = now + SOAK_NS / 10;
	if (err != -EAGAIN)
		soak_fail(S, "handing a flow to queue %u: %s", q, strerror(-err));
	return false;
}

static void stream_open(struct soak *S, unsigned k, uint64_t now)
{
	struct soak_stream *ss = &S->st[k];
	struct gso_flow f = { .sz = sizeof(f), .l3 = GSO_L3_IPV4, .l4 = GSO_L4_TCP };
	struct bench_hdr h = { .flags = BENCH_HDR_F_VERDICT };

	if (!route(S, &ss->rt)) {
		S->next_stream[k] = now + SOAK_NS / 5;
		return;
	}
	memset(ss->verdict, 0, sizeof(ss->verdict));
	ss->vlen = 0;
	ss->vextra = ss->aborted = ss->shut = false;
	ss->connect_err = ss->err = 0;
	ss->why[0] = 0;
	ss->acked = ss->written = ss->t_end = 0;
	ss->s = NULL;
	ss->kind = KIND_STREAM;
	ss->id = ++S->next_id;
	ss->rx = k;
	h.seed = ss->id * 0x9e3779b97f4a7c15ull ^ S->o.seed;
	h.total = 16384 + soak_rnd(S, 4u << 20);
	ss->total = h.total + BENCH_HDR_LEN;
	bench_hdr_encode(&h, ss->hdr);
	bench_stream_init(&ss->bs, h.seed);
	S->sport = S->sport >= 59999 ? 20000 : S->sport + 1;
	ss->so = (struct gso_stream_opts){ .sz = sizeof(ss->so), .route = &ss->rt, .sport = S->sport,
					   .dport = (uint16_t)(SOAK_RX_PORT + k), .max_rate = (uint64_t)(S->o.rate / 8),
					   .tx_flags = GSO_TX_F_SW_CSUM | GSO_TX_F_COPY, .ctx = ss };
	/* The queue of the ACK flow, as the receiver's segments carry it. */
	memcpy(f.saddr, ss->rt.dst, 16);
	memcpy(f.daddr, ss->rt.src, 16);
	f.sport = ss->so.dport;
	f.dport = ss->so.sport;
	ss->q = (uint32_t)gso_port__queue_of(S->port, &f);
	ss->t_open = now;
	if (hand_over(S, ss->q, soak_stream_connect, ss, &ss->state, &S->next_stream[k], now))
		S->c.streams++;
}

enum verdict { VERDICT_OK, VERDICT_MISSING, VERDICT_BAD };

/* The receiver's word on a stream that ended cleanly: missing only if it died first (churn may explain that). */
static enum verdict verdict(const struct soak_stream *ss, char *why, size_t len)
{
	struct bench_verdict v;
	uint64_t want = ss->total - BENCH_HDR_LEN;

	if (ss->vlen < BENCH_VERDICT_LEN) {
		snprintf(why, len, "ended without the receiver's verdict (%u of its bytes came back)", ss->vlen);
		return VERDICT_MISSING;
	}
	if (ss->vextra || bench_verdict_decode(ss->verdict, &v)) {
		snprintf(why, len, "ended with %s back from the receiver", ss->vextra ? "more than a verdict" :
			 "a verdict without its magic");
		return VERDICT_BAD;
	}
	if (v.status != BENCH_OK || v.received != want || v.verified != want) {
		snprintf(why, len, "ended with the receiver's verdict %s: %llu of %llu bytes received, %llu verified",
			 bench_status_name((int)v.status), (unsigned long long)v.received, (unsigned long long)want,
			 (unsigned long long)v.verified);
		return VERDICT_BAD;
	}
	return VERDICT_OK;
}

static void stream_harvest(struct soak *S, unsigned k, uint64_t now)
{
	struct soak_stream *ss = &S->st[k];
	const char *expl;
	char why[192];
	bool bad = false;
	int err;

	if (atomic_load_explicit(&ss->state, memory_order_acquire) != SLOT_DONE)
		return;
	atomic_store_explicit(&ss->state, SLOT_IDLE, memory_order_relaxed);
	S->next_stream[k] = now + soak_rnd(S, SOAK_NS / 2);
	expl = explained(S, k, ss->t_open, ss->t_end);
	err = ss->connect_err ? ss->connect_err : ss->err;
	if (ss->aborted) {
		soak_fail(S, "stream %llu (receiver %u, queue %u) did not end within %llu s of a quiesce",
		     (unsigned long long)ss->id, k, ss->q, SOAK_QUIESCE_NS / SOAK_NS);
		return;
	}
	if (err) {
		snprintf(why, sizeof(why), "%s %s (%s)%s%s", ss->connect_err ? "connect:" : "failed:", soak_errname(err),
			 strerror(-err), ss->why[0] ? ": " : "", ss->why);
	} else {
		enum verdict v = verdict(ss, why, sizeof(why));

		if (v == VERDICT_OK) {
			S->c.streams_ok++;
			S->c.stream_bytes += ss->total - BENCH_HDR_LEN;
			return;
		}
		if (v == VERDICT_BAD) {
			expl = NULL; /* wrong data is never the churn's doing */
			bad = true;
		}
	}
	if (!expl) {
		soak_fail(S, "stream %llu (receiver %u, queue %u, %llu of %llu bytes acknowledged) %s%s",
		     (unsigned long long)ss->id, k, ss->q, (unsigned long long)ss->acked, (unsigned long long)ss->total,
		     why, bad ? "" : ", with no flap, MTU change or receiver kill during it");
		return;
	}
	S->c.streams_explained++;
	if (ss->connect_err)
		S->c.streams_connect_failed++;
	count_errno(S, err);
	/*
	 * Its receiver may still hold the dead connection until its idle
	 * timeout, and it serves one at a time: start it afresh, so that the
	 * next stream is not held up behind it (and past a quiesce's deadline).
	 */
	if (S->rx[k].pid) {
		soak_receiver_kill(&S->rx[k]);
		S->rx[k].restart_at = now + SOAK_RX_REBIND_NS;
		S->c.receiver_resets++;
	}
	fprintf(stderr, "soak: %.1f s: stream %llu (receiver %u, queue %u) %s; counted: %s happened during it\n",
		(double)(now - S->t0) / 1e9, (unsigned long long)ss->id, k, ss->q, why, expl);
}

static void dgram_open(struct soak *S, unsigned i, uint64_t now)
{
	struct soak_dgram *dg = &S->dg[i];

	if (!route(S, &dg->rt)) {
		S->next_dgram[i] = now + SOAK_NS / 5;
		return;
	}
	dg->kind = KIND_DGRAM;
	dg->id = ++S->next_id;
	dg->count = 8 + (uint32_t)soak_rnd(S, 57);
	dg->rate = 1000000;
	dg->q = i % gso_port__queues(S->port);
	dg->queued = dg->done = dg->inflight = 0;
	dg->err = 0;
	dg->dgrams_sent = dg->t_end = 0;
	dg->d = NULL;
	dg->t_open = now;
	if (hand_over(S, dg->q, soak_dgram_open, dg, &dg->state, &S->next_dgram[i], now))
		S->c.dgram_flows++;
}

static void dgram_harvest(struct soak *S, unsigned i, uint64_t now)
{
	struct soak_dgram *dg = &S->dg[i];
	const char *expl;

	if (atomic_load_explicit(&dg->state, memory_order_acquire) != SLOT_DONE)
		return;
	atomic_store_explicit(&dg->state, SLOT_IDLE, memory_order_relaxed);
	S->next_dgram[i] = now + soak_rnd(S, SOAK_NS / 2);
	S->c.dgrams_sent += dg->dgrams_sent;
	if (dg->aborted) {
		soak_fail(S, "datagram flow %llu (queue %u) did not end within %llu s of a quiesce",
		     (unsigned long long)dg->id, dg->q, SOAK_QUIESCE_NS / SOAK_NS);
		return;
	}
	if (!dg->err) {
		S->c.dgram_flows_ok++;
		return;
	}
	expl = explained(S, UINT32_MAX, dg->t_open, dg->t_end);
	if (!expl) {
		soak_fail(S, "datagram flow %llu (queue %u, %u of %u super-segments sent) failed: %s (%s), with no flap or "
			"MTU change during it", (unsigned long long)dg->id, dg->q, dg->done, dg->count,
		     soak_errname(dg->err), strerror(-dg->err));
		return;
	}
	S->c.dgram_flows_explained++;
	count_errno(S, dg->err);
	fprintf(stderr, "soak: %.1f s: datagram flow %llu (queue %u) failed: %s; counted: %s happened during it\n",
		(double)(now - S->t0) / 1e9, (unsigned long long)dg->id, dg->q, soak_errname(dg->err), expl);
}

unsigned soak_harvest(struct soak *S, uint64_t now)
{
	unsigned active = 0;

	for (unsigned k = 0; k < S->o.streams; k++) {
		stream_harvest(S, k, now);
		active += atomic_load_explicit(&S->st[k].state, memory_order_relaxed) != SLOT_IDLE;
	}
	for (unsigned i = 0; i < SOAK_DGRAMS; i++) {
		dgram_harvest(S, i, now);
		active += atomic_load_explicit(&S->dg[i].state, memory_order_relaxed) != SLOT_IDLE;
	}
	return active;
}

void soak_open_flows(struct soak *S, uint64_t now)
{
	if (!S->port || !S->link_up || S->fail[0])
		return;
	for (unsigned k = 0; k < S->o.streams; k++)
		if (S->rx[k].ready && now >= S->next_stream[k] &&
		    atomic_load_explicit(&S->st[k].state, memory_order_relaxed) == SLOT_IDLE)
			stream_open(S, k, now);
	for (unsigned i = 0; i < SOAK_DGRAMS; i++)
		if (now >= S->next_dgram[i] && atomic_load_explicit(&S->dg[i].state, memory_order_relaxed) == SLOT_IDLE)
			dgram_open(S, i, now);
}
