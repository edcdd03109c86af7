/*
 * The multi-queue port, inside (not installed).  port.c opens, starts and
 * stops the engines and runs the hand-off calls; port_hand.c hands stream
 * frames over between queues and keeps each worker's table of owners;
 * port_rss.c is the Toeplitz hash; port_ring.c the rings below.
 */
#ifndef GSO_XDP_PORT_INTERNAL_H
#define GSO_XDP_PORT_INTERNAL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <gso/port.h>
#include "engine/engine_internal.h"
#include "tcp/engine_tcp_internal.h"

/* ---- a bounded single-producer / single-consumer ring (port_ring.c) ---- */

/*
 * Fixed-size elements, a power-of-2 count.  `head` is written only by the
 * producer, `tail` only by the consumer, each on a cache line of its own
 * with the side's cached copy of the other index (refreshed only when the
 * ring looks full / empty), as in the kernel's xsk_queue.h.
 *
 * Barriers (C11):
 *   A  producer: release store of head after writing the element;
 *      pairs with B.
 *   B  consumer: acquire load of head before reading the element.
 *   C  consumer: release store of tail after it is done with the element;
 *      pairs with D.
 *   D  producer: acquire load of tail before overwriting a slot.
 */
struct pring {
	alignas(64) _Atomic uint32_t head; /* next slot the producer fills */
	uint32_t cached_tail;              /* producer's copy of tail */
	alignas(64) _Atomic uint32_t tail; /* next slot the consumer reads */
	uint32_t cached_head;              /* consumer's copy of head */
	alignas(64) uint32_t mask;
	uint32_t esz;                      /* element bytes */
	uint8_t *slots;
};

/* `n` (power of 2, >= 2) elements of `esz` bytes.  0 or -EINVAL / -ENOMEM. */
int gsoi_pring_init(struct pring *r, uint32_t n, uint32_t esz);
void gsoi_pring_fini(struct pring *r);

/* Producer: the next free slot, or NULL when full.  gsoi_pring_push() publishes it. */
void *gsoi_pring_reserve(struct pring *r);
void gsoi_pring_push(struct pring *r);

/* Consumer: the oldest element, or NULL when empty.  gsoi_pring_pop() frees it. */
void *gsoi_pring_peek(struct pring *r);
void gsoi_pring_pop(struct pring *r);

/* ---- the port ---------------------------------------------------------- */

/* A hand-off call. */
struct port_call {
	gso_port_call_fn fn;
	void *arg;
};

/* A stream frame handed from one queue to its owner's. */
struct port_frame {
	uint16_t len;
	uint16_t from;  /* queue it arrived on */
	uint8_t *big;   /* a longer frame (a stream's data): a copy of its own, freed by the consumer */
	uint8_t data[GSO_PORT_HANDOVER_FRAME];
};

enum { PORT_MSG_ADD = 1, PORT_MSG_DEL = 2 };

/* "Stream `key` is owned by queue `owner` from now on / no longer." */
struct port_msg {
	uint32_t op;
	uint32_t owner;
	struct tcp_key key;
};

/* Owner table entry (a worker's own: no lock). */
struct port_owner {
	struct port_owner *next;
	struct tcp_key key;
	uint32_t owner;
};

/* Counters written by one thread, read by any (relaxed atomics). */
struct port_ctr {
	_Atomic uint64_t calls_run, handover_out, handover_in, handover_drops, handover_stale, owner_msgs,
		owner_drops;
	_Atomic uint32_t streams;
};

struct port;

/* Everything of queue q; only worker q touches what is not atomic or a ring end of its own. */
struct port_q {
	struct port *p;
	uint32_t q;
	struct gso_engine *e;    /* the engine's handle, as the API and the callbacks see it */
	struct engine *eng;      /* the engine itself (gsoi_engine_of(e)) */
	int cpu;

	/* producer side of `calls` (the application's thread) */
	alignas(64) _Atomic uint64_t calls, calls_refused;

	alignas(64) struct port_ctr ctr;
	struct pring calls_ring;
	/* in[r]: frames from queue r to this one; msgs_in[r]: owner messages from r (NULL for r == q) */
	struct pring *frames_in, *msgs_in;
	/* owner messages this queue could not put in msgs_in of queue r yet, in order */
	struct port_msg **backlog;
	uint32_t *nbacklog, *capbacklog;
	uint64_t dirty;              /* queues whose frames_in[q] got frames this pass: wake them */
	bool feeding;                /* feeding handed-over frames: a miss is stale, never passed on */
	bool stale_hit;              /* the frame being fed was stale */
	struct port_owner **owners;  /* hash of streams other queues own */
	uint32_t owners_mask;
	_Atomic bool drained;        /* answer of the last drain check */
	_Atomic bool drain_asked;
};

/* The API's struct gso_port * is the port's handle (engine/handle_internal.h), not this: port_of(). */
struct port {
	uintptr_t handle;        /* what gso_port__open() handed out */
	uint32_t n;
	struct port_q *qs;
	struct gso_steer *steer;
	bool own_steer;
	bool closed;
	/*
	 * Held for writing across every change of who runs the engines
	 * (start, stop, close, a drain on the caller's thread), for reading
	 * by gso_port__stats while it reads the engines' and devices' own
	 * counters: those are plain fields their runner writes, so they are
	 * read only when no worker runs, and the lock keeps that true from
	 * the check to the last read.  Never taken by a worker.
	 */
	pthread_rwlock_t ctl;
	/*
	 * One stats reader of the engines at a time, under ctl's read side:
	 * a device's stats call may write a cache of its own (the AF_XDP
	 * device keeps the kernel's last invalid count for after its close).
	 */
	pthread_mutex_t stats_mu;
	_Atomic bool running;    /* changed only with ctl held for writing */
	_Atomic bool dying;
	gso_port_event_fn on_event;
	void *ctx;
	uint32_t ring_size, handover_size;
	/* gso_port__listen (port_listen.c): one listener per engine, one steering entry for all */
	struct gso_listener **listeners; /* n entries, NULL: not listening */
	struct gso_flow listen_flow;
};

/* port_listen.c: the steering entry of gso_port__listen goes (free_port, before the program). */
void gsoi_port_unlisten(struct port *p);

/* The port of a live handle; NULL for NULL or a destroyed port's handle. */
static inline struct port *port_of(const struct gso_port *h)
{
	return gsoi_handle_get((uintptr_t)h, HANDLE_PORT);
}

/* port_hand.c */
extern const struct engine_port_hooks gsoi_port_hooks;
/* Allocate / free queue q's hand-over rings, backlog and owner table. */
int gsoi_port_hand_init(struct port *p, struct port_q *pq, uint32_t max_flows);
void gsoi_port_hand_fini(struct port *p, struct port_q *pq);
/* On worker q (GSO_EV_WAKE): take owner messages, feed frames handed over, retry the backlog. */
void gsoi_port_hand_wake(struct port_q *pq);

/* port_rss.c: Toeplitz over `n` bytes with the 40-byte `key` (n <= keylen - 4). */
uint32_t gsoi_port_toeplitz(const uint8_t *key, uint32_t keylen, const uint8_t *in, uint32_t n);
extern const uint8_t gsoi_port_rss_key[40];

#endif
