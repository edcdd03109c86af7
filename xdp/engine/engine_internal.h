/*
 * The transmit engine, inside (not installed).  engine.c owns the loop,
 * the devices, the link and the scheduler; engine_dgram.c and
 * engine_tcp*.c the two kinds of flows, which plug into it through the
 * hooks below.
 *
 * Scheduling: every flow with something to send has exactly one burst in
 * the gso_sched (its "head"), whose cookie is the flow's slot.  When the
 * head leaves, the flow puts its next one in, stamped on the flow's own
 * grid (gsoi_engine_arm): so a rate change applies from the next burst on, the
 * scheduler never holds more than one burst per flow, and a batch the
 * scheduler hands out has at most one burst of each flow (so each can use
 * the flow's one template, with its own IP ID, in the same submit call).
 *
 * Included by engine/'s files and by the layers above it: the stream
 * flows (tcp/) and the port (port/).
 */
#ifndef GSO_XDP_ENGINE_INTERNAL_H
#define GSO_XDP_ENGINE_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <gso/engine.h>
#include <gso/evloop.h>
#include <gso/sched.h>
#include <gso/dev.h>
#include <gso/steer.h>
#include <gso/ifcaps.h>
#include "kernel/icmp_sock_internal.h"
#include "kernel/rtnl_internal.h"
#include "handle_internal.h"

#define ENGINE_MAX_RX 16
#define NIL32 UINT32_MAX

/* The head every flow starts with. */
struct eflow {
	struct engine *e;
	uintptr_t handle;      /* what the API hands out (handle_internal.h); events carry it */
	bool armed;            /* its head burst is in the scheduler (or held) */
	bool follow;           /* rewrite the MAC when route.nexthop's neighbour entry changes */
	uint32_t slot;         /* index in e->flows[]: the scheduler cookie */
	uint32_t sched_id;     /* gso_sched flow */
	uint64_t grid_ns;      /* departure stamp of the flow's last burst (0: none) */
	void *ctx;
	const struct eflow_ops *ops;
	struct gso_tso_flow *tso; /* per-flow offload choice on TSO devices (NULL: the device's default) */
	bool ended;            /* ops->ended ran */
	struct gso_route route; /* addressing, for neighbour following */
	/* Pacing debt (engine.h, GSO_EV_FLOW_BEHIND): */
	bool behind;           /* in a behind episode */
	uint64_t win_start;    /* start of the current debt window (0: none yet) */
	uint64_t win_lost;     /* schedule time lost in it */
	uint64_t lost_ns;      /* schedule time lost in all */
	uint64_t behind_events; /* episodes */
	/* Path MTU (pmtu.c): IP bytes per packet, and what bounds it besides the interface. */
	uint32_t pmtu;         /* in force now */
	uint32_t route_mtu;    /* the route's own, below the interface's at open (0: none) */
	uint32_t icmp_mtu;     /* the lowest an accepted ICMP error reported (0: none) */
	uint64_t pmtu_changes; /* times pmtu moved */
};

struct tcp_key;
struct stream;
struct tcp_state;

/*
 * Hooks of a multi-queue port (port.c) in each of its engines; NULL in an
 * engine of its own.  All run on the engine's thread.
 */
struct engine_port_hooks {
	/*
	 * A stream frame (checksums verified) that no stream of this engine
	 * owns: true if the port took it (another queue's stream), false to
	 * count it as rx_other.
	 */
	bool (*foreign)(void *ctx, const struct tcp_key *k, const uint8_t *frame, uint32_t len);
	/* A stream with key `k` now receives here / no longer does (hashed, unhashed). */
	void (*stream_added)(void *ctx, const struct tcp_key *k);
	void (*stream_removed)(void *ctx, const struct tcp_key *k);
	/*
	 * Frames of `k` belong here though no stream has it (a listener's
	 * half-open connection) / no longer do.  A stream that follows the
	 * half-open one takes it over with stream_added, without a release.
	 */
	void (*key_owned)(void *ctx, const struct tcp_key *k);
	void (*key_released)(void *ctx, const struct tcp_key *k);
	/* The end of a receive pass: frames taken by foreign() may be passed on now. */
	void (*rx_done)(void *ctx);
};

/* One burst out of the scheduler, and what the engine hands the device for it. */
struct ebatch {
	struct gso_sched_burst b;
	struct eflow *f;
};

/*
 * Hooks of a flow kind, called by engine.c.  A flow that never sends
 * through the scheduler and follows no neighbour (a listener: its
 * segments leave at once) leaves build, sent, refused, neigh and ended
 * NULL; free and timers it needs.
 */
struct eflow_ops {
	/* Build the device request of the flow's head burst into *tx.  0, or -ENODATA: nothing to send now. */
	int (*build)(struct eflow *f, const struct gso_sched_burst *b, struct gso_tx *tx, uint64_t now);
	/* The device took it. */
	void (*sent)(struct eflow *f, const struct gso_sched_burst *b, const struct gso_tx *tx, uint64_t now);
	/* The device refused it for good (validation error err). */
	void (*refused)(struct eflow *f, const struct gso_sched_burst *b, int err, uint64_t now);
	/* The interface is gone (err -ENODEV) or the engine is being destroyed (-ECANCELED). */
	void (*ended)(struct eflow *f, int err);
	/* The next-hop MAC changed (route.dst_mac already updated). */
	void (*neigh)(struct eflow *f);
	/*
	 * Its path MTU changed to f->pmtu (`src`: GSO_PMTU_SRC_*): resize
	 * what it sends from now on and raise GSO_EV_PATH_MTU.
	 */
	void (*mtu)(struct eflow *f, uint32_t src, uint64_t now);
	/* Free it (gso_engine__destroy; after ended). */
	void (*free)(struct eflow *f);
	/* Its deadline in the engine's timer heap passed (flows that set one: streams). */
	void (*timers)(struct eflow *f, uint64_t now);
};

extern const struct eflow_ops gsoi_engine_dgram_ops, gsoi_engine_stream_ops;

/* A stream's place in the engine's timer heap (engine_timer.c). */
struct etimers {
	uint32_t n, cap;
	uint32_t *heap;        /* slots */
	uint64_t *key;         /* per slot: deadline, UINT64_MAX = none */
	uint32_t *pos;         /* per slot: index in heap, NIL32 = not in it */
};

/* The API's struct gso_engine * is the engine's handle (handle_internal.h), not this: gsoi_engine_of(). */
struct engine {
	uintptr_t handle;              /* what gso_engine__create() handed out */
	/* configuration */
	uint32_t max_flows, max_queued, flow_queue, batch, slack_ns, catchup_ns, flags;
	gso_engine_event_fn on_event;
	void *ctx;
	gso_engine_clock_fn clock;
	void *clock_ctx;
	struct gso_steer *steer;       /* opts.steer, or the engine's own (own_steer) */
	bool own_steer;                /* gso_engine__open_path made it: destroyed with the engine */
	bool has_path;                 /* gso_engine__open_path (or a port) chose the path: path is set */
	struct gso_path_info path;

	/* devices */
	struct gso_dev *tx;            /* transmit device */
	bool tx_is_tso;                /* a TSO backend (gso_tso__submit per stream) */
	struct gso_dev_caps caps;      /* of tx, refreshed on link-up and set_tx */
	struct gso_dev *rx[ENGINE_MAX_RX];
	unsigned nrx;
	struct gso_dev *retired[ENGINE_MAX_RX]; /* former transmit devices that do not receive */
	unsigned nretired;
	int ifindex;                   /* of tx; 0: none */
	uint32_t link_mtu;             /* the interface's MTU (the link monitor's latest), or the device's */
	/*
	 * How tx batches its completions (<gso/pacer.h> section 3), in
	 * descriptors, fed by gsoi_engine_look(); streams size their bursts
	 * and device-queue limit from it.  Reset with the device.
	 */
	struct gso_aggr aggr;
	uint64_t aggr_completed;       /* tx's completed descriptors at the last look */
	uint64_t dev_quiet_from;       /* tx held descriptors and completed none since (0: not now) */
	uint32_t dev_lost;             /* of tx's in-flight descriptors, those given up on (tx_lost_completions) */

	/* the loop */
	struct gso_evloop *loop;
	int wake_fd;                   /* eventfd for gso_engine__wake(), -1 if none */
	atomic_bool stop;
	atomic_bool wake_pending;
	pthread_t thread;
	bool threaded;
	/*
	 * The thread that runs the engine now (inside gso_engine__run / poll /
	 * drain, or the thread of gso_engine__start), as engine_self(); 0: none.
	 * Calls from any other thread are refused (engine_thread_ok).
	 */
	_Atomic uintptr_t owner;

	/* link */
	struct rtmon mon;              /* fd -1: no monitor */
	uint32_t mon_flags;            /* the interface's flags as last reported */
	bool flags_usable;             /* mon_flags say it carries frames (true without a monitor) */
	bool ext_down;                 /* gso_engine__link_changed(false) */
	bool dev_down;                 /* the device said -ENETDOWN */
	bool usable;                   /* flags_usable && !ext_down && !dev_down */
	bool dead;                     /* the interface is gone */
	bool mon_ready;                /* the loop saw the monitor readable */
	uint64_t mon_read_ns;          /* last read of the monitor */
	uint64_t down_since_ns;
	uint64_t link_retry_ns;        /* while dev_down: kick again then */
	/* The kernel's copy of PMTU errors the steering program passed on (kernel/icmp_sock_internal.h). */
	struct icmp_sock icmp;         /* fds -1: none (no CAP_NET_RAW, no interface, or a port's engine) */
	bool icmp_ready;               /* the loop saw one of them readable */
	uint64_t icmp_read_ns;         /* last read */

	/* sending */
	struct gso_sched *sched;
	uint64_t retry_ns;             /* after backpressure: try again then (0: none) */
	struct ebatch *held;           /* dequeued, not yet taken by the device, in order */
	unsigned nheld;
	struct ebatch *bq;             /* batch scratch */
	struct gso_tx *txq;
	unsigned *txmap;               /* txq index -> bq index */

	/* flows */
	struct eflow **flows;          /* max_flows slots */
	uint32_t *free_slots;
	uint32_t nfree;
	uint32_t queued;               /* datagram super-segments queued over all flows */
	struct etimers timers;         /* flows' next timer (streams set one) */
	struct stream **hash;          /* stream lookup by 4-tuple, hash_mask + 1 buckets */
	uint32_t hash_mask;
	/* events: deferred while a pass works on a batch (so callbacks see a settled state) */
	struct gso_engine_event *evq;
	unsigned nevq, evq_cap;
	int defer;

	struct gso_engine_stats st;

	/* datagram listeners (dgram_rx.c); NULL: none, and the receive pass never looks for UDP */
	struct dlistener *dlisteners;
	/* TCP state beyond the streams (tcp/: listeners, TIME_WAIT), NULL until needed */
	struct tcp_state *tcp;

	/* the multi-queue port this engine belongs to (NULL: none) */
	const struct engine_port_hooks *port;
	void *port_ctx;
};

/*
 * The path gso_engine__open_path() takes on interface `ifindex` for
 * `asked` (enum gso_path), from its capabilities `ic`; `xsk_only` (a
 * port: one AF_XDP engine per queue) never chooses offload-vnet.  Fills
 * info's path, asked, why, reason, ifname and driver, and *xsk_flags with
 * the GSO_XSK_F_* of an AF_XDP path.  0 or -EINVAL (an unknown path,
 * offload-vnet with xsk_only: -EOPNOTSUPP).  engine_path.c; port/ uses it.
 */
int gsoi_path_choose(const struct gso_ifcaps *ic, uint32_t asked, bool xsk_only, struct gso_path_info *info,
		     uint32_t *xsk_flags);

static inline uint64_t engine_now(const struct engine *e)
{
	return e->clock ? e->clock(e->clock_ctx) : gso_evloop_now_ns();
}

/* The engine of a live handle; NULL for NULL or a destroyed engine's handle. */
static inline struct engine *gsoi_engine_of(const struct gso_engine *h)
{
	return gsoi_handle_get((uintptr_t)h, HANDLE_ENGINE);
}

/*
 * The calling thread, as kept in engine.owner: never 0 or
 * ENGINE_OWNER_STARTING.  The thread pointer where the compiler reads it
 * as a register (no call: the check stays a few instructions on the
 * per-send path), else pthread_self().
 */
#define ENGINE_OWNER_STARTING ((uintptr_t)1) /* gso_engine__start() until its thread takes over */
static inline uintptr_t engine_self(void)
{
#if defined(__x86_64__) || defined(__aarch64__)
	return (uintptr_t)__builtin_thread_pointer();
#else
	return (uintptr_t)pthread_self();
#endif
}

/*
 * engine.h, "Threads": 0, or -EPERM when another thread runs the engine
 * now.  One relaxed load (and engine_self() while the engine runs): cheap
 * enough for every call.
 */
static inline int engine_thread_ok(const struct engine *e)
{
	uintptr_t o = atomic_load_explicit(&e->owner, memory_order_relaxed);

	return !o || o == engine_self() ? 0 : -EPERM;
}

/*
 * A flow call's first step (engine.h, "Handles" and "Threads"): the live
 * flow of kind `kind` behind handle `h`, and whether this thread may use
 * its engine.  0 and *out, -EINVAL (NULL), -EBADF (closed, stale or
 * another kind's), -EPERM (another thread runs the engine; *out is set).
 * Inline: it runs on every send.
 */
static inline __attribute__((always_inline)) int gsoi_flow_get(uintptr_t h, enum handle_kind kind,
							       struct eflow **out)
{
	struct eflow *f;

	if (!h)
		return -EINVAL;
	f = gsoi_handle_get(h, kind);
	if (!f)
		return -EBADF;
	*out = f;
	return engine_thread_ok(f->e);
}

/* Deliver an event (no-op without a callback). */
void gsoi_engine_emit(struct engine *e, const struct gso_engine_event *ev);

/*
 * Deliver now the events still deferred for flow `f` (before it goes), so
 * that none is delivered after its pointer became invalid.
 */
void gsoi_engine_flush_flow_events(struct engine *e, const struct eflow *f);

/* Flow slots, scheduler flows and the flow's handle (`kind`): 0 or -ENOSPC / -ENOMEM / -errno. */
int gsoi_engine_flow_add(struct engine *e, struct eflow *f, const struct eflow_ops *ops, bool pace_all,
			 void *ctx, enum handle_kind kind);
/* Take the flow out of the scheduler (its head too), free its slot and retire its handle. */
void gsoi_engine_flow_del(struct engine *e, struct eflow *f);

/*
 * Put the flow's head burst into the scheduler, stamped at `rate` (wire
 * bytes/s, GSO_RATE_UNPACED).  `chained`: it follows the flow's previous
 * burst back to back, so it is stamped on the flow's grid (see engine.h,
 * "Pacing"); otherwise from now.  0, -EAGAIN (no burst slot: cannot
 * happen with one per flow), or -ERANGE (beyond the horizon).
 */
int gsoi_engine_arm(struct engine *e, struct eflow *f, uint64_t rate, uint32_t wire_bytes, uint32_t segs,
		    uint64_t now, bool chained);

/*
 * Reap tx's completions and show the aggregation estimator what completed
 * since the last look and what is still posted.  Returns gso_dev__reap()'s
 * result.
 */
int gsoi_engine_look(struct engine *e, uint64_t now);

/* tx's descriptors posted and not completed, less those given up on (GSO_ENGINE_DEV_STALL_NS). */
uint32_t gsoi_engine_dev_inflight(const struct engine *e);

/* A flow's next timer changed (UINT64_MAX: none); ops->timers runs when it passes. */
void gsoi_engine_timer_set(struct engine *e, uint32_t slot, uint64_t deadline);

/* engine_timer.c: the heap itself. */
int gsoi_etimers_init(struct etimers *t, uint32_t cap);
void gsoi_etimers_fini(struct etimers *t);
void gsoi_etimers_set(struct etimers *t, uint32_t slot, uint64_t key);
/* The earliest slot and its key; NIL32 when empty. */
uint32_t gsoi_etimers_top(const struct etimers *t, uint64_t *key);

/* Stream lookup (engine_tcp.c): the stream a received frame belongs to, or NULL. */
void gsoi_engine_stream_input(struct engine *e, struct gso_dev *rx, const uint8_t *frame, uint32_t len,
			      uint64_t now);
/*
 * Feed a frame received by another engine of the same port to this one's
 * streams, as engine_rx does (events deferred until it is through).  On
 * the engine's thread.
 */
void gsoi_engine_input_frame(struct engine *e, struct gso_dev *rx, const uint8_t *frame, uint32_t len);
/*
 * dgram_rx.c: a received frame for a datagram listener (delivered, or
 * dropped and counted): true; anything else false.  And the end of a
 * receive pass (GSO_EV_DGRAM_RECV_DONE).
 */
struct dlistener;
/*
 * Add or remove the steering program's listener entry (steer.h) for l4
 * (GSO_L4_TCP or _UDP) to addr:port, every source: a datagram listener's
 * or a TCP listener's.  e->steer must be set.  The program's errno.
 */
int gsoi_steer_listener(struct engine *e, uint8_t l3, uint8_t l4, const uint8_t addr[16], uint16_t port, bool add);
/*
 * Path MTU (pmtu.c).  gsoi_flow_pmtu_init(): a new flow's, from the
 * interface and its route (after f->route is set).  gsoi_flow_pmtu_update():
 * recompute from link_mtu, route_mtu and icmp_mtu; on a change call
 * ops->mtu with `src`.  gsoi_engine_link_mtu(): the interface's MTU is now
 * `mtu`, for every flow.  gsoi_engine_icmp_input(): a received frame that
 * is not TCP: true if it was an ICMP PMTU error (taken and counted), false
 * to let the caller count it as someone else's.
 */
struct icmp_err;
void gsoi_flow_pmtu_init(struct engine *e, struct eflow *f);
bool gsoi_flow_pmtu_update(struct engine *e, struct eflow *f, uint32_t src, uint64_t now);
void gsoi_engine_link_mtu(struct engine *e, uint32_t mtu, uint64_t now);
/* A route changed on the interface: every flow with a destination asks for its route's MTU again. */
void gsoi_engine_routes_changed(struct engine *e, uint64_t now);
bool gsoi_engine_icmp_input(struct engine *e, const uint8_t *frame, uint32_t len, uint64_t now);
/*
 * The same for a frame the kernel received (gsoi_engine_read_icmp: the raw
 * sockets' copies, the engine's own and the host's other sockets'): what
 * quotes no flow of ours is someone else's, and not counted.
 */
void gsoi_engine_read_icmp(struct engine *e, uint64_t now);
/* Stop reading the kernel's copies (a port's engines receive on every queue). */
void gsoi_engine_icmp_sock_off(struct engine *e);
/*
 * The flow an ICMP error quotes, each kind its own way (tcp/, engine_dgram.c):
 * 1 and *out: a live flow, the quoted packet in flight; 0: no such flow
 * here; -ERANGE (TCP): the stream, but a sequence number not in flight;
 * -EXDEV (TCP, in a port): another queue's stream, the frame handed over.
 */
int gsoi_tcp_icmp_flow(struct engine *e, const struct icmp_err *ie, const uint8_t *frame, uint32_t len,
		       struct eflow **out);
int gsoi_dgram_icmp_flow(struct engine *e, const struct icmp_err *ie, struct eflow **out);

bool gsoi_dgram_rx(struct engine *e, struct gso_dev *rx, const uint8_t *frame, uint32_t len, uint64_t now);
void gsoi_dgram_rx_end(struct engine *e);
/*
 * Queue the flow's head burst to leave at `at_ns` (not before; at once
 * if past), outside its rate and grid: a departure time the application
 * chose (gso_dgram__send_at).  0 or the scheduler's errno.
 */
int gsoi_engine_arm_at(struct engine *e, struct eflow *f, uint32_t wire_bytes, uint32_t segs, uint64_t at_ns,
		       uint64_t now);
/* Free e->tcp (tcp/ implements it), after every flow was freed. */
void gsoi_engine_tcp_free(struct engine *e);
/* The device is gone or the engine ends: every flow ends with err. */
void gsoi_engine_end_all(struct engine *e, int err);

#endif
