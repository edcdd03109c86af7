/*
 * libgso-xdp multi-queue port: one interface, N transmit engines
 * (<gso/engine.h>), one per device queue, each on a worker thread of its
 * own (optionally pinned to a CPU).  The port starts, stops, drains and
 * destroys them as one, carries work from the application's threads to a
 * worker, places flows on queues, and hands a stream's ACKs over to the
 * engine that owns the stream when they arrive on another queue.
 *
 * Queues and memory.  Engine q is gso_engine__open(ifindex, q, ...): an
 * AF_XDP socket bound to queue q with a UMEM of its own (no
 * XDP_SHARED_UMEM), so every frame engine q sends leaves on queue q and
 * each engine's chunk accounting is exact on its own; the port's is their
 * sum (gso_port__stats with GSO_PORT_ALL).  A shared UMEM was no faster,
 * and pooling its chunks would put a lock or a multi-producer ring on
 * every batch.
 *
 * GSO_EV_STREAM_ESTABLISHED's `dev` is the device the SYN-ACK arrived on,
 * which may be another queue's (compare it, do not call on it).
 *
 * Threads.  After gso_port__start() engine q belongs to worker q: every
 * call on it and on its flows must run on that worker, i.e. from the
 * port's event callback for queue q or from a function handed to
 * gso_port__call(p, q, ...).  The port functions themselves may be called
 * from any one application thread (one at a time), except
 * gso_port__call(), see there.  Before start (and after stop) the caller
 * may use the engines directly from its own thread.
 *
 * Hand-off.  gso_port__call(p, q, fn, arg) puts (fn, arg) in a bounded
 * single-producer/single-consumer ring of queue q and wakes worker q
 * (gso_engine__wake), which runs the calls in order when it sees
 * GSO_EV_WAKE.  No lock is taken: ONE producer thread per queue at a time;
 * application threads sharing a queue serialise their calls themselves.
 * A full ring answers -EAGAIN.
 *
 * Placement.  gso_port__queue_of() is the queue a flow belongs on: the
 * Toeplitz hash (gso_flow__rss_hash) of the flow as the peer's frames
 * carry it, modulo N.  It is the hash receive-side scaling computes with
 * the well-known default key, so on a NIC that uses that key and the
 * default indirection table (entry i -> queue i mod N; for N a power of
 * two any table size gives hash mod N) the peer's segments arrive on the
 * owner's queue.  The caller may open a flow on any queue instead.
 *
 * ACK hand-over.  A stream's ACKs reach the AF_XDP socket of the queue
 * they arrive on (an XSK receives only from its own queue), which is the
 * peer's choice.  When engine r receives a segment of a stream that
 * engine o owns, worker r copies it into a single-producer ring from r to
 * o and wakes o, which feeds it to the stream.  Each worker knows the
 * owners from messages the owners send when a stream connects and when it
 * is freed (rings again, one per ordered pair of queues): no lock on the
 * per-frame path.  Hand-overs are counted per queue (gso_port_stats).
 * The same holds for a listener's half-open connections (the client's
 * ACK may come on another queue than its SYN: Linux picks a new transmit
 * queue for a socket whose SYN-ACK came twice) and for data a stream
 * receives; the queues' listeners share one SYN-cookie secret, so a
 * cookie's ACK opens its connection on whichever queue it arrives.
 *
 * Handles.  struct gso_port * is a checked handle, as the engine's and
 * the flows' are (<gso/engine.h>, "Handles"): after gso_port__destroy()
 * every call with it fails with -EBADF (NULL and errno EBADF where a
 * pointer is returned, 0 from gso_port__queues) and touches nothing, and
 * gso_port__destroy() again does nothing.  The engines' handles die with
 * the port.
 *
 * Conventions as in <gso/engine.h>: 0 or a negative errno, a failed call
 * changes nothing and leaves nothing open, options start with `size_t sz`
 * (GSO_OPTS()), 0 means "default", the library never prints.
 */
#ifndef GSO_PORT_H
#define GSO_PORT_H

#include <gso/common.h>
#include <gso/engine.h>
#include <gso/dev.h>
#include <gso/xsk.h>
#include <gso/steer.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gso_port; /* opaque */

#define GSO_PORT_MAX_QUEUES 64u
#define GSO_PORT_DEF_RING 1024u      /* gso_port__call entries per queue */
#define GSO_PORT_MAX_RING (1u << 20)
#define GSO_PORT_DEF_HANDOVER 1024u   /* handed-over frames in flight per pair of queues */
#define GSO_PORT_HANDOVER_FRAME 256u /* longest frame handed over in place (an ACK with every option fits);
				      * a longer one (data) goes as a copy of its own */
#define GSO_PORT_ALL UINT32_MAX      /* gso_port__stats: the sum over every queue */

/*
 * Events of engine `queue` (`e`), on worker `queue`, in order: what
 * gso_engine_event_fn gets, plus where it comes from.  GSO_EV_WAKE is
 * delivered too (after the port has run the queued calls).
 */
typedef void (*gso_port_event_fn)(void *ctx, uint32_t queue, struct gso_engine *e,
				  const struct gso_engine_event *ev);

/* A call handed to a worker: runs on the worker of the engine `e`. */
typedef void (*gso_port_call_fn)(struct gso_engine *e, void *arg);

struct gso_port_opts {
	size_t sz;
	/*
	 * Engines (= queues 0..queues-1); 0 = the interface's TX queues in
	 * use (its RX count if smaller: a socket binds a queue that exists
	 * both ways; in use as ethtool's channels say, not as allocated), at
	 * most GSO_PORT_MAX_QUEUES.
	 */
	uint32_t queues;
	/*
	 * Worker q runs pinned to CPU cpus[q] when q < ncpus and cpus[q] >= 0
	 * (-1: not pinned).  NULL / ncpus 0: none pinned.  Each CPU must be
	 * one this process may run on (sched_getaffinity).
	 */
	const int *cpus;
	uint32_t ncpus;
	/* gso_port__call ring entries per queue, a power of 2, 2..GSO_PORT_MAX_RING (0 = GSO_PORT_DEF_RING). */
	uint32_t ring_size;
	/*
	 * Hand-over frames in flight from one queue to another, power of 2,
	 * 2..65536 (0 = GSO_PORT_DEF_HANDOVER).  Memory: N * (N - 1) rings of
	 * handover_size * (GSO_PORT_HANDOVER_FRAME + 4) bytes.
	 */
	uint32_t handover_size;
	/* For every engine's AF_XDP socket (queue_id is set per engine); NULL: gso_engine__open's default. */
	const struct gso_xsk_opts *xsk;
	/*
	 * For every engine; its on_event, ctx and steer are ignored (the port
	 * owns them), clock must be NULL.  NULL: the defaults.
	 */
	const struct gso_engine_opts *engine;
	gso_port_event_fn on_event; /* may be NULL */
	void *ctx;                  /* for on_event */
	/*
	 * The steering program every engine's receive side joins (each
	 * engine's socket is added to it; not owned, must outlive the port).
	 * NULL: the port attaches one of its own (gso_steer__create with
	 * steer_opts, NULL = defaults) and destroys it with the port.
	 */
	struct gso_steer *steer;
	const struct gso_steer_opts *steer_opts;
	/*
	 * The AF_XDP path of every engine (enum gso_path, <gso/engine.h>):
	 * its GSO_XSK_F_* flags are added to those of `xsk`.  0 = auto, as
	 * gso_engine__open_path() chooses it but never offload-vnet (a port
	 * is one AF_XDP engine per queue): csum where the driver does
	 * zero-copy with TX checksum offload, else software.  Pass
	 * GSO_PATH_MULTIBUF to keep the gso_xsk_opts defaults.
	 * gso_engine__path() on any engine says what runs and why.
	 */
	uint32_t path;
	size_t :0;
};
#define gso_port_opts__last_field path

/*
 * Open engines 0..N-1 on interface `ifindex` and join their receive sides
 * to one steering program.  Nothing runs until gso_port__start().
 * Returns 0 and *out, or
 *   -EINVAL   NULL, bad options (ring sizes, an engine clock, unknown tail)
 *   -E2BIG    more than GSO_PORT_MAX_QUEUES queues asked
 *   -ERANGE   more queues asked than the interface has (TX or RX)
 *   -EDOM     a cpus[] entry that is neither -1 nor a CPU this process may use
 *   -ENODEV   no such interface
 *   -EOPNOTSUPP  path GSO_PATH_OFFLOAD_VNET
 *   or what gso_engine__open(), gso_steer__create() and gso_steer__add_dev() return.
 * On failure nothing is left open (no engine, socket, thread or program).
 */
GSO_API int gso_port__open(struct gso_port **out, int ifindex, const struct gso_port_opts *opts);

/* Queues (engines) of the port; 0 for NULL and a destroyed port's handle. */
GSO_API uint32_t gso_port__queues(const struct gso_port *p);

/*
 * Engine `q` (for calls on its worker, or before start), NULL when q is
 * out of range (errno ENXIO), p is NULL (EINVAL) or a destroyed port's
 * handle (EBADF).
 */
GSO_API struct gso_engine *gso_port__engine(const struct gso_port *p, uint32_t q);

/* The steering program the engines use (the port's own or opts.steer); NULL for NULL and a destroyed port. */
GSO_API struct gso_steer *gso_port__steer(const struct gso_port *p);

/*
 * Start worker q on engine q for every q (gso_engine__start with cpus[q]).
 * Calls queued before are run then.  Returns 0, -EINVAL, -EBADF, -EALREADY
 * (started), or pthread's errno (the workers started are stopped again).
 */
GSO_API int gso_port__start(struct gso_port *p);

/*
 * Stop every worker and join it.  Each returns within one pass of its
 * loop (it is woken; no pass blocks).  Flows stay as they are, calls still
 * queued stay queued.  0, -EINVAL or -EBADF; a no-op when not started.
 */
GSO_API int gso_port__stop(struct gso_port *p);

/*
 * Wait until every engine has handed every queued datagram super-segment
 * to its device and the device completed them (gso_engine__drain), or
 * until CLOCK_MONOTONIC reaches `until_ns`.  Started: the workers keep
 * running and are asked (through their rings) until all say drained;
 * not started: each engine is drained in turn on the caller's thread.
 * Returns 0, -ETIMEDOUT, -ENODEV (an engine's interface is gone),
 * -EINVAL, -EBADF.
 */
GSO_API int gso_port__drain(struct gso_port *p, uint64_t until_ns);

/*
 * Run fn(engine q, arg) on worker q, after every call queued before it
 * on q.  Lock-free; see "Hand-off" above for the one-producer rule.
 * Returns 0, -EAGAIN (the ring of q is full: retry after some ran),
 * -ENXIO (q >= queues), -EINVAL (NULL p or fn), -EBADF (a destroyed
 * port), -ESHUTDOWN (the port is being destroyed).  Calls are run only by a started worker; those still
 * queued at gso_port__destroy() are discarded, never run.
 */
GSO_API int gso_port__call(struct gso_port *p, uint32_t q, gso_port_call_fn fn, void *arg);

/*
 * The queue for flow `f` (the flow as the peer's frames carry it, e.g.
 * gso_flow__reply_of() of the template): gso_flow__rss_hash(f) % N.
 * The same on every run and every host.  Returns the queue, or -EINVAL
 * (NULL, f->sz bad as for gso_steer__flow_add, an unknown l3), -EBADF (a
 * destroyed port).
 */
GSO_API int gso_port__queue_of(const struct gso_port *p, const struct gso_flow *f);

/*
 * Listen for TCP connections on every queue: a listener
 * (gso_listener__open, <gso/engine.h>) on each engine, behind one
 * steering entry.  A SYN arrives on the queue the peer's hash chooses
 * and its connection belongs to that queue: GSO_EV_LISTENER_READY comes
 * to worker q's callback with gso_port__listener(p, q), which accepts
 * there.  Segments of a connection that arrive on another queue are
 * handed over to its owner as for any stream.  Before gso_port__start()
 * (or after gso_port__stop()) only.  The listeners close with the port.
 * Returns 0, -EINVAL, -EBUSY (running, or listening already), -EBADF,
 * or what gso_listener__open() returns (nothing left open then).
 */
GSO_API int gso_port__listen(struct gso_port *p, const struct gso_listen_opts *o);

/* Queue q's listener, NULL if the port does not listen (or a bad q / handle). */
GSO_API struct gso_listener *gso_port__listener(const struct gso_port *p, uint32_t q);

/*
 * The Toeplitz hash receive-side scaling computes over a frame of flow
 * `f`, with the default 40-byte key of Microsoft's RSS specification
 * (the one Linux drivers and DPDK use): over source address, destination
 * address, source port, destination port, in network byte order (IPv4:
 * 12 bytes, IPv6: 36).  VLAN is not hashed.  0 for NULL, a bad sz or an
 * unknown l3.
 */
GSO_API uint32_t gso_flow__rss_hash(const struct gso_flow *f);

/*
 * Close every engine (gso_engine__close: every flow ends, every buffer is
 * reclaimed, the devices are closed) after stopping the workers, so that
 * gso_port__stats shows the chunk accounting balanced.  The port does
 * nothing afterwards but be destroyed.  0, -EINVAL, -EBADF.
 */
GSO_API int gso_port__close(struct gso_port *p);

/*
 * Stop the workers, destroy every engine (every flow ends as
 * gso_engine__destroy says, on the caller's thread, with events
 * delivered to the port's callback), the port's own steering program
 * and the rings.  Calls still queued are discarded.  When it returns no
 * thread of the port is left.  NULL and a destroyed port's handle are a
 * no-op.
 */
GSO_API void gso_port__destroy(struct gso_port *p);

struct gso_port_stats {
	size_t sz;
	uint32_t queues;          /* queues summed (1, or N for GSO_PORT_ALL) */
	uint32_t streams;         /* stream flows the queue owns now */
	uint64_t calls;           /* gso_port__call accepted */
	uint64_t calls_refused;   /* gso_port__call answered -EAGAIN */
	uint64_t calls_run;       /* calls the worker ran */
	uint64_t handover_out;    /* frames received here for another queue's stream, passed to it */
	uint64_t handover_in;     /* frames passed here by other queues and fed to this queue's streams
				   * (those whose stream had gone are handover_stale instead) */
	uint64_t handover_drops;  /* frames for another queue's stream not passed on: its ring was full
				   * (or no memory for a copy of a long one) */
	uint64_t handover_stale;  /* frames passed here whose stream had gone meanwhile */
	uint64_t owner_msgs;      /* "stream added / removed" messages sent to other queues */
	uint64_t owner_drops;     /* such messages lost to a full ring (that stream's ACKs may be lost) */
	/*
	 * From the engine's devices (gso_dev__stats of the transmit device)
	 * and its gso_engine_stats: filled only while the port is not running
	 * (before start, after stop or close), 0 while the workers run and
	 * while a gso_port__start, __stop, __close or a not-started
	 * __drain is under way on another thread.
	 */
	uint64_t tx_frames;       /* frames queued on the device */
	uint64_t rx_frames;       /* frames the engine read */
	uint64_t rx_other;        /* of those, for no stream anywhere in the port */
	uint32_t chunks_total;    /* device memory chunks */
	uint32_t chunks_free;     /* free now: equals chunks_total when balanced */
	/* ICMP path-MTU errors (gso_engine_stats.icmp_*, engine.h "Path MTU"), counted where they arrived: */
	uint64_t icmp_pmtu;       /* that lowered a stream's path MTU */
	uint64_t icmp_stale;      /* about a stream, reporting no less than its path MTU */
	uint64_t icmp_forged;     /* quoting no stream of the port, or a sequence number not in flight */
	uint64_t icmp_bad;        /* malformed or with a wrong checksum */
	size_t :0;
};
#define gso_port_stats__last_field icmp_bad

/*
 * Statistics of queue `q`, or with GSO_PORT_ALL the sum over all queues.
 * Any thread, also while another starts or stops the port (the port's own
 * counters are atomic; the engines' are read only while no other thread
 * runs them, see above).  Never waits for a worker.  Returns 0, -EINVAL
 * (NULL, sz too small), -EBADF (a destroyed port), -ENXIO (q out of
 * range).
 */
GSO_API int gso_port__stats(const struct gso_port *p, uint32_t q, struct gso_port_stats *st);

#ifdef __cplusplus
}
#endif
#endif
