/*
 * soak: hours of churn on a multi-queue port, checked for balance
 * (`make soak`; soak.h says which file does what).
 *
 * All at once, each kind at random intervals around --churn-every:
 * streams to kernel receivers in the peer namespace and datagram flows
 * to a kernel UDP socket, opened and closed continuously (every stream's
 * bytes verified by its receiver, whose verdict comes back over the
 * stream; every datagram checked by the sink); the sender's veth taken
 * down and up; its MTU moved between 1500 and 1280, with its peer's
 * (soak_bed.c says why both; --no-mtu: not);
 * receivers killed and started again; the port closed and opened again,
 * with its own steering program and with one the soak creates and
 * destroys around it.
 *
 * Every port cycle quiesces first (no new flows, the open ones end) and
 * wants every UMEM chunk free once the port is closed.  Every
 * --check-every seconds the cycle also counts the process's descriptors
 * and threads (exactly as at the first check, the baseline) and its RSS
 * and heap (within --slack of it).  The first imbalance stops the soak.
 *
 * A stream or datagram flow that fails with an error is reported and
 * counted when a flap, an MTU change or the kill of its receiver happened
 * during its life (the churn explains it); any other failure, a bad
 * verdict or datagram, or a flow that does not end within 60 s of a
 * quiesce stops the soak.  Rates are capped (--rate per stream) so that
 * the soak stays far below one core.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/resource.h>

#include "json.h"
#include "soak.h"
#include "util.h"

#define NS 1000000000ull
#define QUIESCE_NS (60 * NS)       /* streams take seconds, a stalled one ends at its 10 s idle timeout */
#define EXPLAIN_BEFORE_NS NS      /* an event this shortly before a flow opened still counts */
#define EVENTS 64                 /* recent flaps and MTU changes kept for explanations */
#define MAX_ERRNOS 16

struct opts {
	double minutes, check_s, churn_s;
	uint64_t seed, slack;
	double rate;                  /* per stream, bit/s on the wire */
	unsigned streams;
	bool no_mtu, json;
	const char *receiver;
};

struct counts {
	uint64_t streams, streams_ok, streams_explained, streams_connect_failed, stream_bytes;
	uint64_t dgram_flows, dgram_flows_ok, dgram_flows_explained, dgrams_sent;
	uint64_t flaps, mtu_changes, kills, restarts, receiver_exits, receiver_resets;
	uint64_t port_cycles, steer_own, steer_soak, checks, route_waits;
	int errnos[MAX_ERRNOS];
	uint64_t errno_n[MAX_ERRNOS];
};

struct soak {
	struct opts o;
	struct counts c;
	struct soak_bed bed;
	struct soak_sink sink;
	struct soak_receiver rx[SOAK_MAX_STREAMS];
	struct gso_port *port;
	struct gso_steer *steer;      /* the soak's own, on odd cycles */
	struct soak_stream *st;
	struct soak_dgram *dg;
	uint64_t rng, t0, end, next_id;
	uint16_t sport;
	bool link_up, quiescing;
	unsigned mtu;
	uint64_t next_flap, flap_up_at, next_mtu, next_kill, next_cycle, next_check;
	uint64_t next_stream[SOAK_MAX_STREAMS], next_dgram[SOAK_DGRAMS];
	uint64_t events[EVENTS];
	unsigned nevents;
	struct soak_balance base, last;
	bool have_base;
	uint32_t chunks_total, chunks_free;
	char fail[512];
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	(void)sig;
	stop_signal = 1;
}

static uint64_t now_ns(void)
{
	return gso_evloop_now_ns();
}

static uint64_t rnd(struct soak *S, uint64_t n)
{
	return n ? bench_splitmix64(&S->rng) % n : 0;
}

/* A churn interval: uniform in [0.5, 1.5] x --churn-every. */
static uint64_t churn_gap(struct soak *S)
{
	uint64_t mean = (uint64_t)(S->o.churn_s * 1e9);

	return mean / 2 + rnd(S, mean + 1);
}

static void fail(struct soak *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct soak *S, const char *fmt, ...)
{
	va_list ap;

	if (S->fail[0])
		return;
	va_start(ap, fmt);
	vsnprintf(S->fail, sizeof(S->fail), fmt, ap);
	va_end(ap);
	fprintf(stderr, "soak: FAILED at %.1f s: %s\n", (double)(now_ns() - S->t0) / 1e9, S->fail);
}

static const char *errname(int err)
{
	const char *n = strerrorname_np(err < 0 ? -err : err);

	return n ? n : "unknown";
}

static void count_errno(struct soak *S, int err)
{
	for (unsigned i = 0; i < MAX_ERRNOS; i++)
		if (S->c.errnos[i] == err || !S->c.errno_n[i]) {
			S->c.errnos[i] = err;
			S->c.errno_n[i]++;
			return;
		}
}

static void note_event(struct soak *S, uint64_t t)
{
	S->events[S->nevents++ % EVENTS] = t;
}

/* Did a flap, an MTU change or the kill of receiver `rx` (UINT32_MAX: none) fall in [t_open, t_end]? */
static const char *explained(const struct soak *S, uint32_t rx, uint64_t t_open, uint64_t t_end)
{
	uint64_t from = t_open > EXPLAIN_BEFORE_NS ? t_open - EXPLAIN_BEFORE_NS : 0;

	if (rx < SOAK_MAX_STREAMS)
		for (unsigned i = 0; i < 8 && i < S->rx[rx].nkills; i++)
			if (S->rx[rx].kills[i] >= from && S->rx[rx].kills[i] <= t_end)
				return "its receiver's kill";
	for (unsigned i = 0; i < EVENTS && i < S->nevents; i++)
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
	*next = now + NS / 10;
	if (err != -EAGAIN)
		fail(S, "handing a flow to queue %u: %s", q, strerror(-err));
	return false;
}

static void stream_open(struct soak *S, unsigned k, uint64_t now)
{
	struct soak_stream *ss = &S->st[k];
	struct gso_flow f = { .sz = sizeof(f), .l3 = GSO_L3_IPV4, .l4 = GSO_L4_TCP };
	struct bench_hdr h = { .flags = BENCH_HDR_F_VERDICT };

	if (!route(S, &ss->rt)) {
		S->next_stream[k] = now + NS / 5;
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
	h.total = 16384 + rnd(S, 4u << 20);
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
	S->next_stream[k] = now + rnd(S, NS / 2);
	expl = explained(S, k, ss->t_open, ss->t_end);
	err = ss->connect_err ? ss->connect_err : ss->err;
	if (ss->aborted) {
		fail(S, "stream %llu (receiver %u, queue %u) did not end within %llu s of a quiesce",
		     (unsigned long long)ss->id, k, ss->q, QUIESCE_NS / NS);
		return;
	}
	if (err) {
		snprintf(why, sizeof(why), "%s %s (%s)%s%s", ss->connect_err ? "connect:" : "failed:", errname(err),
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
		fail(S, "stream %llu (receiver %u, queue %u, %llu of %llu bytes acknowledged) %s%s",
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
		S->rx[k].restart_at = now;
		S->c.receiver_resets++;
	}
	fprintf(stderr, "soak: %.1f s: stream %llu (receiver %u, queue %u) %s; counted: %s happened during it\n",
		(double)(now - S->t0) / 1e9, (unsigned long long)ss->id, k, ss->q, why, expl);
}

static void dgram_open(struct soak *S, unsigned i, uint64_t now)
{
	struct soak_dgram *dg = &S->dg[i];

	if (!route(S, &dg->rt)) {
		S->next_dgram[i] = now + NS / 5;
		return;
	}
	dg->kind = KIND_DGRAM;
	dg->id = ++S->next_id;
	dg->count = 8 + (uint32_t)rnd(S, 57);
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
	S->next_dgram[i] = now + rnd(S, NS / 2);
	S->c.dgrams_sent += dg->dgrams_sent;
	if (dg->aborted) {
		fail(S, "datagram flow %llu (queue %u) did not end within %llu s of a quiesce",
		     (unsigned long long)dg->id, dg->q, QUIESCE_NS / NS);
		return;
	}
	if (!dg->err) {
		S->c.dgram_flows_ok++;
		return;
	}
	expl = explained(S, UINT32_MAX, dg->t_open, dg->t_end);
	if (!expl) {
		fail(S, "datagram flow %llu (queue %u, %u of %u super-segments sent) failed: %s (%s), with no flap or "
			"MTU change during it", (unsigned long long)dg->id, dg->q, dg->done, dg->count,
		     errname(dg->err), strerror(-dg->err));
		return;
	}
	S->c.dgram_flows_explained++;
	count_errno(S, dg->err);
	fprintf(stderr, "soak: %.1f s: datagram flow %llu (queue %u) failed: %s; counted: %s happened during it\n",
		(double)(now - S->t0) / 1e9, (unsigned long long)dg->id, dg->q, errname(dg->err), expl);
}

static unsigned harvest(struct soak *S, uint64_t now)
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

/* ---- the port ---- */

static int port_open(struct soak *S)
{
	GSO_OPTS(gso_engine_opts, eo, .max_flows = 64);
	GSO_OPTS(gso_port_opts, po, .queues = SOAK_QUEUES, .engine = &eo, .on_event = soak_on_event,
		 .path = GSO_PATH_SOFTWARE);
	int err;

	/* Every other cycle the steering program is the soak's: created here, destroyed after the port. */
	if (S->c.port_cycles % 2) {
		err = gso_steer__create(&S->steer, S->bed.ifindex, NULL);
		if (err) {
			fail(S, "creating a steering program: %s", strerror(-err));
			return err;
		}
		po.steer = S->steer;
		S->c.steer_soak++;
	} else {
		S->c.steer_own++;
	}
	err = gso_port__open(&S->port, S->bed.ifindex, &po);
	if (!err && (err = gso_port__start(S->port)))
		gso_port__destroy(S->port);
	if (err) {
		S->port = NULL;
		gso_steer__destroy(S->steer);
		S->steer = NULL;
		fail(S, "opening the port: %s", strerror(-err));
	}
	return err;
}

/* Close the port (every engine's buffers reclaimed) and want every UMEM chunk free. */
static void port_close(struct soak *S)
{
	GSO_OPTS(gso_port_stats, all);

	if (!S->port)
		return;
	gso_port__close(S->port);
	for (uint32_t q = 0; q < gso_port__queues(S->port); q++) {
		GSO_OPTS(gso_port_stats, st);

		if (gso_port__stats(S->port, q, &st) || !st.chunks_total || st.chunks_free != st.chunks_total)
			fail(S, "UMEM not balanced after a quiesce: queue %u has %u of %u chunks free", q, st.chunks_free,
			     st.chunks_total);
	}
	if (!gso_port__stats(S->port, GSO_PORT_ALL, &all)) {
		S->chunks_total = all.chunks_total;
		S->chunks_free = all.chunks_free;
	}
	gso_port__destroy(S->port);
	S->port = NULL;
	gso_steer__destroy(S->steer);
	S->steer = NULL;
	S->c.port_cycles++;
}

/* No new flows; wait for the open ones to end, closing those that do not within QUIESCE_NS. */
static void quiesce(struct soak *S)
{
	uint64_t deadline = now_ns() + QUIESCE_NS;
	bool aborted = false;

	S->quiescing = true;
	if (!S->link_up && !soak_link_set(&S->bed, true)) {
		S->link_up = true;
		note_event(S, now_ns());
	}
	while (harvest(S, now_ns())) {
		if (!aborted && now_ns() > deadline && S->port) {
			aborted = true;
			for (unsigned k = 0; k < S->o.streams; k++)
				if (atomic_load(&S->st[k].state) == SLOT_ACTIVE)
					gso_port__call(S->port, S->st[k].q, soak_stream_abort, &S->st[k]);
			for (unsigned i = 0; i < SOAK_DGRAMS; i++)
				if (atomic_load(&S->dg[i].state) == SLOT_ACTIVE)
					gso_port__call(S->port, S->dg[i].q, soak_dgram_abort, &S->dg[i]);
		}
		if (aborted && now_ns() > deadline + 5 * NS) {
			fail(S, "flows still open %llu s after the quiesce closed them", QUIESCE_NS / NS + 5);
			break;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
	}
	S->quiescing = false;
}

static void print_check(const struct soak *S, uint64_t now)
{
	fprintf(stderr, "soak: %.1f min: check %llu: %d descriptors, %d threads, RSS %llu KiB, heap %llu KiB, "
		"UMEM %u/%u chunks free; %llu streams verified, %llu datagram flows, %llu flaps, %llu MTU changes\n",
		(double)(now - S->t0) / 60e9, (unsigned long long)S->c.checks, S->last.fds, S->last.tasks,
		(unsigned long long)(S->last.rss >> 10), (unsigned long long)(S->last.heap >> 10), S->chunks_free,
		S->chunks_total, (unsigned long long)S->c.streams_ok, (unsigned long long)S->c.dgram_flows,
		(unsigned long long)S->c.flaps, (unsigned long long)S->c.mtu_changes);
}

/* Quiesce, close the port (UMEM checked), maybe check the balance, open it again (unless `last`). */
static void cycle(struct soak *S, bool check, bool last)
{
	quiesce(S);
	port_close(S);
	if (check && !S->fail[0]) {
		char why[384];

		soak_balance_now(&S->last);
		S->c.checks++;
		if (!S->have_base) {
			S->base = S->last;
			S->have_base = true;
		} else if (!soak_balance_ok(&S->base, &S->last, S->o.slack, why, sizeof(why))) {
			fail(S, "not balanced at check %llu: %s", (unsigned long long)S->c.checks, why);
		}
		print_check(S, now_ns());
	}
	if (!last && !S->fail[0])
		port_open(S);
}

/* ---- churn ---- */

static void churn_receivers(struct soak *S, uint64_t now)
{
	for (unsigned k = 0; k < S->o.streams; k++) {
		struct soak_receiver *r = &S->rx[k];
		bool died;

		soak_receiver_poll(r, &died);
		if (died) {
			/* It should never end by itself (no accept timeout of its own hits while flows come). */
			S->c.receiver_exits++;
			r->restart_at = now;
			fprintf(stderr, "soak: %.1f s: receiver %u ended by itself; starting it again\n",
				(double)(now - S->t0) / 1e9, k);
		}
		if (!r->pid && r->restart_at && now >= r->restart_at) {
			int err = soak_receiver_start(&S->bed, r, k);

			if (err)
				fail(S, "starting receiver %u again: %s", k, strerror(-err));
			S->c.restarts++;
		}
	}
	if (now >= S->next_kill) {
		unsigned k = (unsigned)rnd(S, S->o.streams);
		struct soak_receiver *r = &S->rx[k];

		S->next_kill = now + churn_gap(S);
		if (r->pid) {
			soak_receiver_kill(r);
			r->kills[r->nkills++ % 8] = now;
			r->restart_at = now + NS / 4 + rnd(S, 2 * NS);
			S->c.kills++;
		}
	}
}

static void churn_link(struct soak *S, uint64_t now)
{
	int err;

	if (S->link_up && now >= S->next_flap) {
		if ((err = soak_link_set(&S->bed, false))) {
			fail(S, "taking " SOAK_IF_A " down: exit %d", err);
			return;
		}
		S->link_up = false;
		S->flap_up_at = now + NS / 5 + rnd(S, 13 * NS / 10);
		note_event(S, now);
		S->c.flaps++;
	} else if (!S->link_up && now >= S->flap_up_at) {
		if ((err = soak_link_set(&S->bed, true))) {
			fail(S, "bringing " SOAK_IF_A " up: exit %d", err);
			return;
		}
		S->link_up = true;
		S->next_flap = now + churn_gap(S);
		note_event(S, now_ns());
	}
	if (!S->o.no_mtu && now >= S->next_mtu) {
		unsigned mtu = S->mtu == SOAK_MTU_HIGH ? SOAK_MTU_LOW : SOAK_MTU_HIGH;

		S->next_mtu = now + churn_gap(S);
		if ((err = soak_mtu_set(&S->bed, mtu))) {
			fail(S, "MTU %u on " SOAK_IF_A ": exit %d", mtu, err);
			return;
		}
		S->mtu = mtu;
		note_event(S, now);
		S->c.mtu_changes++;
	}
}

static void open_flows(struct soak *S, uint64_t now)
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

/* Every datagram the sink got was whole and as sent? */
static bool sink_ok(struct soak *S)
{
	if (!atomic_load_explicit(&S->sink.bad, memory_order_acquire))
		return true;
	fail(S, "the sink got a bad datagram: %s", S->sink.first_bad);
	return false;
}

static void run(struct soak *S)
{
	uint64_t now = now_ns();

	S->next_flap = now + churn_gap(S);
	S->next_mtu = now + churn_gap(S);
	S->next_kill = now + churn_gap(S);
	S->next_cycle = now + churn_gap(S);
	S->next_check = now + (uint64_t)(S->o.check_s * 1e9);
	while (!S->fail[0] && !stop_signal && (now = now_ns()) < S->end) {
		if (!sink_ok(S))
			break;
		harvest(S, now);
		churn_receivers(S, now);
		churn_link(S, now);
		if (now >= S->next_check) {
			cycle(S, true, false);
			S->next_check = now_ns() + (uint64_t)(S->o.check_s * 1e9);
			S->next_cycle = now_ns() + churn_gap(S);
		} else if (now >= S->next_cycle) {
			cycle(S, false, false);
			S->next_cycle = now_ns() + churn_gap(S);
		}
		open_flows(S, now_ns());
		nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
	}
	/* The balance at the end, after a last quiesce. */
	cycle(S, true, true);
	sink_ok(S);
}

/* ---- report ---- */

static void report(const struct soak *S, double secs, const struct rusage *self, const struct rusage *kids)
{
	const struct counts *c = &S->c;
	double cpu = (double)self->ru_utime.tv_sec + self->ru_utime.tv_usec / 1e6 + (double)self->ru_stime.tv_sec +
		     self->ru_stime.tv_usec / 1e6;
	double kcpu = (double)kids->ru_utime.tv_sec + kids->ru_utime.tv_usec / 1e6 + (double)kids->ru_stime.tv_sec +
		      kids->ru_stime.tv_usec / 1e6;
	uint64_t rxd = atomic_load(&S->sink.dgrams), rxb = atomic_load(&S->sink.bytes), bad = atomic_load(&S->sink.bad);
	const char *status = S->fail[0] ? "failed" : stop_signal ? "interrupted" : "ok";

	if (S->o.json) {
		struct bench_json j;

		bench_json_begin(&j, stdout);
		bench_json_str(&j, "tool", "soak");
		bench_json_str(&j, "status", status);
		if (S->fail[0])
			bench_json_str(&j, "failure", S->fail);
		bench_json_u64(&j, "seed", S->o.seed);
		bench_json_dbl(&j, "seconds", secs);
		bench_json_bool(&j, "mtu_changes_on", !S->o.no_mtu);
		bench_json_u64(&j, "streams_opened", c->streams);
		bench_json_u64(&j, "streams_verified", c->streams_ok);
		bench_json_u64(&j, "streams_failed_explained", c->streams_explained);
		bench_json_u64(&j, "streams_connect_failed", c->streams_connect_failed);
		bench_json_u64(&j, "stream_bytes", c->stream_bytes);
		bench_json_u64(&j, "dgram_flows_opened", c->dgram_flows);
		bench_json_u64(&j, "dgram_flows_ok", c->dgram_flows_ok);
		bench_json_u64(&j, "dgram_flows_failed_explained", c->dgram_flows_explained);
		bench_json_u64(&j, "dgrams_sent", c->dgrams_sent);
		bench_json_u64(&j, "dgrams_received", rxd);
		bench_json_u64(&j, "dgram_bytes_received", rxb);
		bench_json_u64(&j, "dgrams_bad", bad);
		bench_json_u64(&j, "flaps", c->flaps);
		bench_json_u64(&j, "mtu_changes", c->mtu_changes);
		bench_json_u64(&j, "receiver_kills", c->kills);
		bench_json_u64(&j, "receiver_restarts", c->restarts);
		bench_json_u64(&j, "receiver_exits", c->receiver_exits);
		bench_json_u64(&j, "receiver_resets", c->receiver_resets);
		bench_json_u64(&j, "port_cycles", c->port_cycles);
		bench_json_u64(&j, "steer_own_cycles", c->steer_own);
		bench_json_u64(&j, "steer_soak_cycles", c->steer_soak);
		bench_json_u64(&j, "checks", c->checks);
		bench_json_u64(&j, "route_waits", c->route_waits);
		bench_json_obj(&j, "errors");
		for (unsigned i = 0; i < MAX_ERRNOS && c->errno_n[i]; i++)
			bench_json_u64(&j, errname(c->errnos[i]), c->errno_n[i]);
		bench_json_close(&j);
		bench_json_i64(&j, "fds", S->last.fds);
		bench_json_i64(&j, "fds_baseline", S->base.fds);
		bench_json_i64(&j, "threads", S->last.tasks);
		bench_json_i64(&j, "threads_baseline", S->base.tasks);
		bench_json_u64(&j, "rss_kib", S->last.rss >> 10);
		bench_json_u64(&j, "rss_kib_baseline", S->base.rss >> 10);
		bench_json_u64(&j, "heap_kib", S->last.heap >> 10);
		bench_json_u64(&j, "heap_kib_baseline", S->base.heap >> 10);
		bench_json_u64(&j, "umem_chunks", S->chunks_total);
		bench_json_u64(&j, "umem_chunks_free", S->chunks_free);
		bench_json_dbl(&j, "cpu_s", cpu);
		bench_json_dbl(&j, "cpu_pct", secs > 0 ? 100 * cpu / secs : 0);
		bench_json_dbl(&j, "receivers_cpu_s", kcpu);
		bench_json_end(&j);
		return;
	}
	printf("soak: %s after %.1f min (seed %llu, MTU changes %s)%s%s\n", status, secs / 60,
	       (unsigned long long)S->o.seed, S->o.no_mtu ? "off" : "on", S->fail[0] ? ": " : "", S->fail);
	printf("  streams     %llu opened, %llu verified (%.1f MB), %llu failed with an error the churn explains "
	       "(%llu of them at connect)\n", (unsigned long long)c->streams, (unsigned long long)c->streams_ok,
	       (double)c->stream_bytes / 1e6, (unsigned long long)c->streams_explained,
	       (unsigned long long)c->streams_connect_failed);
	printf("  datagrams   %llu flows opened, %llu ended cleanly, %llu failed (explained); %llu datagrams sent, "
	       "%llu received (%.1f MB), %llu bad\n", (unsigned long long)c->dgram_flows,
	       (unsigned long long)c->dgram_flows_ok, (unsigned long long)c->dgram_flows_explained,
	       (unsigned long long)c->dgrams_sent, (unsigned long long)rxd, (double)rxb / 1e6, (unsigned long long)bad);
	printf("  errors     ");
	for (unsigned i = 0; i < MAX_ERRNOS && c->errno_n[i]; i++)
		printf(" %s %llu", errname(c->errnos[i]), (unsigned long long)c->errno_n[i]);
	printf("%s\n", c->errno_n[0] ? "" : " none");
	printf("  churn       %llu flaps, %llu MTU changes, %llu receiver kills (%llu restarts, %llu after a failed "
	       "stream, %llu ended by themselves), %llu port cycles (%llu with the port's own steering program, %llu with one the soak "
	       "created and destroyed), %llu balance checks\n", (unsigned long long)c->flaps,
	       (unsigned long long)c->mtu_changes, (unsigned long long)c->kills, (unsigned long long)c->restarts,
	       (unsigned long long)c->receiver_resets, (unsigned long long)c->receiver_exits, (unsigned long long)c->port_cycles,
	       (unsigned long long)c->steer_own, (unsigned long long)c->steer_soak, (unsigned long long)c->checks);
	printf("  balance     %d descriptors (baseline %d), %d threads (%d), RSS %llu KiB (%llu), heap %llu KiB "
	       "(%llu), UMEM %u of %u chunks free\n", S->last.fds, S->base.fds, S->last.tasks, S->base.tasks,
	       (unsigned long long)(S->last.rss >> 10), (unsigned long long)(S->base.rss >> 10),
	       (unsigned long long)(S->last.heap >> 10), (unsigned long long)(S->base.heap >> 10), S->chunks_free,
	       S->chunks_total);
	printf("  cpu         %.1f s (%.1f%% of one core), receivers %.1f s\n", cpu, secs > 0 ? 100 * cpu / secs : 0,
	       kcpu);
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: soak [options]   (as root)\n\n"
		"Churn on a multi-queue port in a namespace test-bed of its own: streams to kernel receivers\n"
		"and datagram flows opened and closed, link flaps, MTU changes, receivers killed and\n"
		"restarted, port and steering program cycles; descriptors, threads, memory and UMEM\n"
		"checked for balance.  A stream or datagram flow that fails while a flap, an MTU change\n"
		"or its receiver's kill happened is reported and counted; an imbalance, a bad verdict or\n"
		"datagram, or any other failure stops the soak.\n\n"
		"  -m, --minutes M        how long (default 120; fractions allowed)\n"
		"  -c, --check-every S    balance check every S seconds (default 60)\n"
		"  -C, --churn-every S    mean seconds between churn events of each kind (default 15)\n"
		"  -s, --seed N           seed of the schedule and the data (default: from the clock)\n"
		"      --no-mtu           no MTU changes\n"
		"  -n, --streams N        streams (and kernel receivers) at once, 1..%u (default 4)\n"
		"  -r, --rate R           per-stream pacing cap, bit/s with k/M/G (default 16M)\n"
		"      --slack MIB        RSS and heap growth allowed over the baseline (default 64)\n"
		"      --receiver PATH    the kernel receiver (default: bench/receiver of this build)\n"
		"  -j, --json             the summary as one JSON object on stdout\n"
		"  -h, --help\n\n"
		"Exit status: 0 balanced and nothing unexplained failed (also when stopped by a signal),\n"
		"1 an imbalance or a failure, 2 usage or setup error.\n", SOAK_MAX_STREAMS);
}

enum { O_NOMTU = 256, O_SLACK, O_RECEIVER };

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "minutes", required_argument, 0, 'm' },  { "check-every", required_argument, 0, 'c' },
		{ "churn-every", required_argument, 0, 'C' }, { "seed", required_argument, 0, 's' },
		{ "no-mtu", no_argument, 0, O_NOMTU },     { "streams", required_argument, 0, 'n' },
		{ "rate", required_argument, 0, 'r' },     { "slack", required_argument, 0, O_SLACK },
		{ "receiver", required_argument, 0, O_RECEIVER }, { "json", no_argument, 0, 'j' },
		{ "help", no_argument, 0, 'h' },           { 0, 0, 0, 0 },
	};
	uint64_t v;
	int c;

	*o = (struct opts){ .minutes = 120, .check_s = 60, .churn_s = 15, .seed = (uint64_t)time(NULL),
			    .slack = 64ull << 20, .rate = 16e6, .streams = 4 };
	while ((c = getopt_long(argc, argv, "m:c:C:s:n:r:jh", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (bench_parse_double(optarg, &o->minutes) || o->minutes <= 0)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --minutes '%s'", optarg);
			break;
		case 'c':
			if (bench_parse_double(optarg, &o->check_s) || o->check_s < 1)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --check-every '%s' (at least 1 s)", optarg);
			break;
		case 'C':
			if (bench_parse_double(optarg, &o->churn_s) || o->churn_s < 0.5)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --churn-every '%s' (at least 0.5 s)", optarg);
			break;
		case 's':
			if (bench_parse_u64(optarg, &o->seed))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --seed '%s'", optarg);
			break;
		case O_NOMTU: o->no_mtu = true; break;
		case 'n':
			if (bench_parse_u64(optarg, &v) || v < 1 || v > SOAK_MAX_STREAMS)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --streams '%s' (1..%u)", optarg, SOAK_MAX_STREAMS);
			o->streams = (unsigned)v;
			break;
		case 'r':
			if (bench_parse_rate(optarg, &o->rate) || o->rate < 8e3)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --rate '%s' (at least 8k)", optarg);
			break;
		case O_SLACK:
			if (bench_parse_u64(optarg, &v) || v > (1u << 20))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --slack '%s' (MiB)", optarg);
			o->slack = v << 20;
			break;
		case O_RECEIVER: o->receiver = optarg; break;
		case 'j': o->json = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(BENCH_EXIT_USAGE);
		}
	}
	if (optind < argc) {
		usage(stderr);
		exit(BENCH_EXIT_USAGE);
	}
}

int main(int argc, char **argv)
{
	static struct soak S;
	static char rpath[4096];
	struct rusage self, kids;
	struct sigaction sa = { .sa_handler = on_signal };
	int err;

	parse_args(argc, argv, &S.o);
	if (geteuid() != 0)
		bench_die(BENCH_EXIT_USAGE, 0, "needs root: it creates network namespaces and attaches XDP programs");
	if (!S.o.receiver) {
		snprintf(rpath, sizeof(rpath), "%s/../bench/receiver", bench_exe_dir());
		S.o.receiver = rpath;
	}
	if (access(S.o.receiver, X_OK))
		bench_die(BENCH_EXIT_USAGE, errno, "the kernel receiver %s (build it with make, or give --receiver)",
			  S.o.receiver);
	S.rng = S.o.seed;
	S.st = calloc(S.o.streams, sizeof(*S.st));
	S.dg = calloc(SOAK_DGRAMS, sizeof(*S.dg));
	if (!S.st || !S.dg)
		bench_die(BENCH_EXIT_USAGE, ENOMEM, "slots");
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (soak_bed_create(&S.bed, S.o.receiver))
		return BENCH_EXIT_USAGE;
	if ((err = nsbed_enter(&S.bed.nb, 0)) || (err = soak_sink_start(&S.sink, &S.bed.nb))) {
		fprintf(stderr, "soak: the UDP sink: %s\n", strerror(-err));
		soak_bed_destroy(&S.bed);
		return BENCH_EXIT_USAGE;
	}
	S.link_up = true;
	S.mtu = SOAK_MTU_HIGH;
	S.sport = 20000;
	S.t0 = now_ns();
	S.end = S.t0 + (uint64_t)(S.o.minutes * 60e9);
	for (unsigned k = 0; k < S.o.streams && !S.fail[0]; k++)
		if ((err = soak_receiver_start(&S.bed, &S.rx[k], k)))
			fail(&S, "starting receiver %u (%s): %s", k, S.o.receiver, strerror(-err));
	if (!S.fail[0] && !port_open(&S))
		run(&S);
	for (unsigned k = 0; k < S.o.streams; k++)
		soak_receiver_kill(&S.rx[k]);
	soak_sink_stop(&S.sink);
	soak_bed_destroy(&S.bed);
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	report(&S, (double)(now_ns() - S.t0) / 1e9, &self, &kids);
	return S.fail[0] ? BENCH_EXIT_FAIL : BENCH_EXIT_OK;
}
