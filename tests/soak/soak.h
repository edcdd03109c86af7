/*
 * The soak (`make soak`, build/tests/soak): hours of churn on a
 * multi-queue port (<gso/port.h>) in a namespace test-bed, with the
 * process's descriptors, memory and UMEM checked for balance as it goes.
 * soak.c runs the schedule and prints the summary; the other files each
 * do one job:
 *
 *   soak_bed.c      the namespaces, the kernel receivers in the peer
 *                   namespace (started, killed, restarted), link flaps
 *                   and MTU changes of the sender's veth
 *   soak_flows.c    streams and datagram flows on the port's workers,
 *                   and the kernel UDP sink that checks every datagram
 *   soak_slots.c    the main thread's side of the flows: opens them on the
 *                   workers and judges how each ended (verdicts, errors
 *                   the churn explains)
 *   soak_balance.c  descriptors, threads, RSS and heap of the process
 *   soak_report.c   the summary (text or --json)
 *
 * Threads: the main thread owns the schedule, the port and the slots'
 * IDLE and DONE states; a slot that is ACTIVE belongs to the worker of
 * its queue until that worker stores DONE (release; main loads with
 * acquire).  The sink thread only counts, in atomics.
 */
#ifndef SOAK_H
#define SOAK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <gso/port.h>
#include <gso/route.h>

#include "nsbed.h"
#include "proto.h"
#include "stream.h"

#define SOAK_IF_A "gsk0"          /* the sender's veth (side 0) */
#define SOAK_IF_B "gsk1"          /* the receivers' (side 1) */
#define SOAK_ADDR_A "10.88.0.1"
#define SOAK_ADDR_B "10.88.0.2"
#define SOAK_QUEUES 2u            /* veth queues each way: the port runs two workers */
#define SOAK_MTU_HIGH 1500u
#define SOAK_MTU_LOW 1280u        /* IPv6's minimum: the one a path may really drop to */
#define SOAK_MAX_STREAMS 16u      /* one kernel receiver per stream slot */
#define SOAK_DGRAMS 2u            /* datagram flows open at once */
#define SOAK_RX_PORT 5401         /* receiver k listens on SOAK_RX_PORT + k */
#define SOAK_SINK_PORT 9401       /* the UDP sink */
#define SOAK_DG_SIZE 1200u        /* datagram payload: fits SOAK_MTU_LOW, so MTU changes never matter */
#define SOAK_DG_PER_SUPER 16u
#define SOAK_DG_SUPER (SOAK_DG_SIZE * SOAK_DG_PER_SUPER)
#define SOAK_DG_BUFS 4u           /* super-segments in flight per flow */
#define SOAK_DG_MAGIC 0x47534b44u /* "GSKD" at the head of every datagram */

enum soak_slot_state { SLOT_IDLE = 0, SLOT_ACTIVE, SLOT_DONE };
enum soak_kind { KIND_STREAM = 1, KIND_DGRAM };

/* A stream to receiver `rx`: the bench header (verdict wanted), `total - 32` stream bytes, FIN. */
struct soak_stream {
	int kind;                     /* KIND_STREAM (first: the event handler tells slots apart) */
	/* Set by the main thread before the connect call: */
	uint32_t q, rx;
	uint64_t id, total, t_open;
	struct gso_route rt;
	struct gso_stream_opts so;
	uint8_t hdr[BENCH_HDR_LEN];
	struct bench_stream bs;
	/* The worker's while ACTIVE: */
	struct gso_stream *s;
	uint64_t written;
	bool shut;
	/* Results, the worker's until it stores DONE: */
	uint8_t verdict[BENCH_VERDICT_LEN];
	uint32_t vlen;
	bool vextra;                  /* more bytes than a verdict came back */
	bool aborted;                 /* closed by the quiesce, not ended by itself */
	int connect_err, err;
	char why[64];
	uint64_t acked, t_end;
	atomic_int state;
};

/* A datagram flow to the sink: `count` super-segments of SOAK_DG_PER_SUPER checked datagrams. */
struct soak_dgram {
	int kind;                     /* KIND_DGRAM */
	uint32_t q, count;
	uint64_t id, rate, t_open;
	struct gso_route rt;
	struct gso_dgram *d;
	uint32_t queued, done, inflight;
	bool closing;
	bool aborted;                 /* closed by the quiesce, not ended by itself */
	int err;
	uint64_t dgrams_sent, t_end;
	atomic_int state;
	uint8_t mem[SOAK_DG_BUFS][SOAK_DG_SUPER];
};

struct soak_sink {
	int fd;                       /* UDP socket in the peer namespace */
	pthread_t th;
	atomic_bool stop;
	atomic_uint_fast64_t dgrams, bytes, bad;
	char first_bad[128];          /* what the first bad datagram looked like (written once) */
};

/*
 * A receiver killed and reaped may still hold its port for a moment: one
 * started again at once failed to bind (EADDRINUSE) now and then, most
 * likely because its io_uring, and with it the listening socket of its
 * pending accept, is torn down by a kernel worker after the process is
 * gone.  A new one waits this long.
 */
#define SOAK_RX_REBIND_NS 300000000ull

struct soak_receiver {
	pid_t pid;                    /* 0: not running */
	bool ready;
	uint64_t restart_at;          /* ns; 0: none due */
	char ready_file[128];
	uint64_t kills[8];            /* recent kill times (ns), a ring */
	unsigned nkills;
};

/* ---- soak_bed.c ---- */

struct soak_bed {
	struct nsbed nb;
	int ifindex;                  /* SOAK_IF_A, seen from side 0 */
	char dir[64];                 /* temporary directory for the receivers' ready files */
	const char *receiver_path;
};

/* Namespaces, veth with SOAK_QUEUES queues, addresses.  0 or -errno (with a message). */
int soak_bed_create(struct soak_bed *b, const char *receiver_path);
void soak_bed_destroy(struct soak_bed *b);
/* Start receiver k (port SOAK_RX_PORT + k) in side 1.  0 or -errno. */
int soak_receiver_start(struct soak_bed *b, struct soak_receiver *r, unsigned k);
/* Kill it (SIGKILL) and reap it. */
void soak_receiver_kill(struct soak_receiver *r);
/* Ready (its ready file exists)?  Reaps it if it died: then *died is set. */
bool soak_receiver_poll(struct soak_receiver *r, bool *died);
int soak_link_set(struct soak_bed *b, bool up);
int soak_mtu_set(struct soak_bed *b, unsigned mtu);

/* ---- soak_flows.c ---- */

/* The port's event callback: ctx unused, the slots come in flow_ctx. */
void soak_on_event(void *ctx, uint32_t q, struct gso_engine *e, const struct gso_engine_event *ev);
/* Worker calls (gso_port__call): open and start, or close a slot that is still ACTIVE. */
void soak_stream_connect(struct gso_engine *e, void *arg);
void soak_stream_abort(struct gso_engine *e, void *arg);
void soak_dgram_open(struct gso_engine *e, void *arg);
void soak_dgram_abort(struct gso_engine *e, void *arg);
/* The sink: a UDP socket on SOAK_SINK_PORT made in side 1 (the calling thread returns to side 0). */
int soak_sink_start(struct soak_sink *k, const struct nsbed *nb);
void soak_sink_stop(struct soak_sink *k);

/* ---- soak_balance.c ---- */

struct soak_balance {
	int fds;                      /* /proc/self/fd entries */
	int tasks;                    /* threads (/proc/self/task entries) */
	uint64_t rss;                 /* resident bytes (/proc/self/statm) */
	uint64_t heap;                /* malloc'd bytes in use (mallinfo2: arenas + mmapped) */
};

void soak_balance_now(struct soak_balance *b);
/*
 * Compare `now` with `base`: descriptors and threads must be equal, RSS and
 * heap within `slack` bytes.  Returns true when balanced; else writes what
 * differs to why.
 */
bool soak_balance_ok(const struct soak_balance *base, const struct soak_balance *now, uint64_t slack,
		     char *why, size_t len);


/* ---- the run: soak.c (schedule), soak_slots.c (flows opened and judged), soak_report.c ---- */

#define SOAK_NS 1000000000ull
#define SOAK_QUIESCE_NS (60 * SOAK_NS) /* streams take seconds, a stalled one ends at its 10 s idle timeout */
#define SOAK_EVENTS 64                 /* recent flaps and MTU changes kept for explanations */
#define SOAK_MAX_ERRNOS 16

struct soak_opts {
	double minutes, check_s, churn_s;
	uint64_t seed, slack;
	double rate;                  /* per stream, bit/s on the wire */
	unsigned streams;
	bool no_mtu, json;
	const char *receiver;
};

struct soak_counts {
	uint64_t streams, streams_ok, streams_explained, streams_connect_failed, stream_bytes;
	uint64_t dgram_flows, dgram_flows_ok, dgram_flows_explained, dgrams_sent;
	uint64_t flaps, mtu_changes, kills, restarts, receiver_exits, receiver_resets;
	uint64_t port_cycles, steer_own, steer_soak, checks, route_waits;
	int errnos[SOAK_MAX_ERRNOS];
	uint64_t errno_n[SOAK_MAX_ERRNOS];
};

struct soak {
	struct soak_opts o;
	struct soak_counts c;
	struct soak_bed bed;
	struct soak_sink sink;
	struct soak_receiver rx[SOAK_MAX_STREAMS];
	struct gso_port *port;
	struct gso_steer *steer;      /* the soak's own, on odd cycles */
	struct soak_stream *st;
	struct soak_dgram *dg;
	uint64_t rng, t0, end, next_id;
	uint16_t sport;
	bool link_up, quiescing, interrupted;
	unsigned mtu;
	uint64_t next_flap, flap_up_at, next_mtu, next_kill, next_cycle, next_check;
	uint64_t next_stream[SOAK_MAX_STREAMS], next_dgram[SOAK_DGRAMS];
	uint64_t events[SOAK_EVENTS]; /* times of flaps (down and up) and MTU changes, a ring */
	unsigned nevents;
	struct soak_balance base, last;
	bool have_base;
	uint32_t chunks_total, chunks_free;
	char fail[512];               /* why the soak stopped; "" while all is well */
};

/* soak.c: record the first failure (later ones are not), say it on stderr. */
void soak_fail(struct soak *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* soak.c: uniform in [0, n) from the run's seed. */
uint64_t soak_rnd(struct soak *S, uint64_t n);

/* soak_slots.c: a flap or an MTU change at time t (explains failures of the flows open then). */
void soak_note_event(struct soak *S, uint64_t t);
/* soak_slots.c: open flows on the idle slots that are due (not while quiescing, the link down, ...). */
void soak_open_flows(struct soak *S, uint64_t now);
/* soak_slots.c: judge the slots that are DONE, make them IDLE; returns how many are not IDLE. */
unsigned soak_harvest(struct soak *S, uint64_t now);
/* soak_slots.c: "ECONNRESET" for -ECONNRESET (or ECONNRESET). */
const char *soak_errname(int err);

/* soak_report.c: the summary, as text or one JSON object on stdout. */
void soak_report(const struct soak *S, double secs, const struct rusage *self, const struct rusage *kids);

#endif
