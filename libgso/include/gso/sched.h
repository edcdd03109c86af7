/*
 * libgso multi-flow scheduler: in which order, and when, the bursts of many
 * flows leave.  Bursts are stamped with their flow's EDT (a struct
 * gso_pacer per flow, <gso/pacer.h>) when queued and leave no earlier than
 * that, flows take turns by deficit round robin (fq's quantum and initial
 * quantum), an optional aggregate rate caps the sum, and a burst whose
 * departure lies beyond the horizon is refused.  Fixed capacity chosen at
 * creation; nothing is allocated per burst.  Pure arithmetic with time
 * passed in (uint64_t nanoseconds, CLOCK_MONOTONIC domain); rates are wire
 * bytes per second as in <gso/pacer.h>.
 */
#ifndef GSO_SCHED_H
#define GSO_SCHED_H

#include <gso/common.h>
#include <gso/pacer.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GSO_SCHED_DEF_MTU 1514u          /* wire bytes of a full Ethernet frame */
#define GSO_SCHED_DEF_HORIZON_NS 10000000000ull /* fq horizon: 10 s */
#define GSO_SCHED_DEF_REFILL_NS 40000000ull     /* fq flow_refill_delay: 40 ms */

/*
 * A transmit loop built on it (one thread per scheduler; nothing here locks):
 *
 *   on ACK / timer, at time now:
 *     for each flow with data and room (keep ~2 bursts queued per flow):
 *       gso_sched__flow_set_rate(s, id, cc rate);
 *       n = gso_burst_size(&in, &opts, &b);          // 0: wait for an ACK
 *       build a super-segment of b.bytes, then
 *       gso_sched__enqueue(s, now, &(struct gso_sched_burst){cookie, 0, id,
 *                          b.wire_bytes, b.segs});  // -EAGAIN: backpressure
 *     while (gso_sched__dequeue(s, now, &out, &next) == 1)
 *       transmit out.cookie's super-segment;
 *     arm a CLOCK_MONOTONIC timer (TIMER_ABSTIME) at next.
 */

struct gso_sched;

struct gso_sched_opts {
	size_t sz;
	uint32_t max_flows;   /* flow slots; required, 1..2^24 */
	uint32_t max_bursts;  /* bursts queued at once over all flows; required, 1..2^24 */
	uint32_t mtu;         /* wire bytes of a full frame, for the quantum defaults
			       * (0 = GSO_SCHED_DEF_MTU) */
	uint32_t quantum;     /* bytes a flow may send per round (0 = 2 * mtu) */
	uint32_t initial_quantum; /* credit of a new flow (0 = 10 * mtu) */
	uint32_t flags;       /* none defined yet: must be 0 */
	uint64_t horizon_ns;  /* refuse bursts departing later than now + horizon
			       * (0 = GSO_SCHED_DEF_HORIZON_NS) */
	uint64_t max_rate;    /* aggregate cap over all flows, wire bytes/s (0 = none) */
	uint64_t refill_ns;   /* a flow idle this long comes back as a new flow with
			       * at least one quantum (0 = GSO_SCHED_DEF_REFILL_NS) */
	size_t :0;
};
#define gso_sched_opts__last_field refill_ns

/*
 * One burst as queued and as handed back.  An element of caller arrays
 * (gso_sched__dequeue_batch, gso_sched__flow_drain), so it has no sz field;
 * growing it needs a new symbol version.
 */
struct gso_sched_burst {
	uint64_t cookie;       /* the caller's (e.g. a UMEM address); returned as given */
	uint64_t departure_ns; /* out: the EDT stamp given at enqueue */
	uint32_t flow;         /* flow id from gso_sched__flow_add() */
	uint32_t wire_bytes;   /* bytes charged (payload + segs * hdr_len), >= 1 */
	uint32_t segs;         /* segments, >= 1 */
};

struct gso_sched_stats {
	size_t sz;
	uint64_t enqueued;      /* bursts accepted */
	uint64_t dequeued;      /* bursts handed out */
	uint64_t refused_full;  /* -EAGAIN: no burst slot */
	uint64_t refused_horizon; /* -ERANGE: beyond the horizon */
	uint64_t late_ns_max;   /* largest (dequeue time - departure) seen */
	uint32_t queued;        /* bursts queued now */
	uint32_t flows;         /* flows in use */
	uint64_t queued_bytes;  /* wire bytes queued now */
	size_t :0;
};
#define gso_sched_stats__last_field queued_bytes

/*
 * Bytes of caller memory gso_sched__init() needs for these options
 * (0 if the options are invalid or NULL: they are required).
 */
GSO_API size_t gso_sched__mem_size(const struct gso_sched_opts *o);

/*
 * Build a scheduler in caller memory `mem` of `len` bytes (8-byte aligned,
 * at least gso_sched__mem_size(o)).  The memory stays the caller's; nothing
 * else is allocated, ever.  Returns 0 and *out, or -EINVAL (NULL argument,
 * bad options, misaligned mem) or -ENOSPC (len too small).
 */
GSO_API int gso_sched__init(struct gso_sched **out, void *mem, size_t len,
			    const struct gso_sched_opts *o);

/*
 * Same in one allocation made here.  Returns 0 and *out, -EINVAL as above,
 * or -ENOMEM.
 */
GSO_API int gso_sched__create(struct gso_sched **out, const struct gso_sched_opts *o);

/*
 * Release a scheduler from gso_sched__create() (for one built by
 * gso_sched__init() this does nothing: the memory is the caller's).
 * Queued bursts are forgotten: drain flows first if their cookies own
 * anything.  NULL is ignored.
 */
GSO_API void gso_sched__destroy(struct gso_sched *s);

/*
 * Add a flow with its own EDT pacer (settings `po`, may be NULL) and rate
 * GSO_RATE_UNPACED until gso_sched__flow_set_rate().  Returns 0 and *flow,
 * or -EINVAL (NULL argument, bad po) or -ENOSPC (all max_flows slots used).
 */
GSO_API int gso_sched__flow_add(struct gso_sched *s, const struct gso_pacer_opts *po,
				uint32_t *flow);

/*
 * Remove a flow; its id may be reused.  Returns 0, -EINVAL (s NULL),
 * -ENOENT (no such flow) or -EBUSY (bursts still queued: drain it first).
 */
GSO_API int gso_sched__flow_del(struct gso_sched *s, uint32_t flow);

/*
 * Set the flow's pacing rate (wire bytes/s, from the CC or the caller's
 * transport), used for bursts enqueued from now on.  Returns 0, -EINVAL
 * (s NULL, rate 0) or -ENOENT.
 */
GSO_API int gso_sched__flow_set_rate(struct gso_sched *s, uint32_t flow, uint64_t rate);

/*
 * Take a flow's queued bursts out, oldest first, into out[0..n) without
 * sending them (teardown, retransmit rework).  Returns how many were
 * taken (0..n), or -EINVAL (s NULL, out NULL with n > 0), -ENOENT.  The
 * flow's pacer keeps its clock.
 */
GSO_API int gso_sched__flow_drain(struct gso_sched *s, uint32_t flow,
				  struct gso_sched_burst *out, unsigned n);

/*
 * Queue burst `b` (flow, wire_bytes, segs, cookie) at time `now_ns`.  Its
 * departure is its flow's EDT (gso_pacer__stamp with the flow's rate), and
 * never earlier than the flow's previous burst, so a flow's bursts leave in
 * order.  Returns 0 and writes b->departure_ns, or
 *   -EINVAL  NULL, wire_bytes 0 or segs 0
 *   -ENOENT  no such flow
 *   -ERANGE  departure > now_ns + horizon: refused, not queued (the flow is
 *            sending faster than its rate; retry later or lower the load)
 *   -EAGAIN  all max_bursts slots are queued (backpressure: dequeue, retry)
 * A refused burst changes nothing, the flow's pacer included.
 */
GSO_API int gso_sched__enqueue(struct gso_sched *s, uint64_t now_ns, struct gso_sched_burst *b);

/*
 * The flow's last dequeued burst left with `wire_bytes` fewer than it was
 * queued with: its pacing clock gives their time back (gso_pacer__refund,
 * never before that burst's departure), so that later bursts are not held
 * back for bytes that never left.  Call it before queueing the flow's next
 * burst.  Returns 0, -EINVAL (s NULL), -ENOENT (no such flow).
 */
GSO_API int gso_sched__flow_refund(struct gso_sched *s, uint32_t flow, uint32_t wire_bytes);

/*
 * Hand out the next burst due at `now_ns`: among flows whose head burst's
 * departure is <= now, by deficit round robin (new flows first, each spends
 * its quantum of wire bytes per turn), and only if the aggregate cap allows
 * a burst now.  Returns 1 and fills *out; or 0 when nothing is due, with
 * *next_ns (if not NULL) set to the earliest time worth calling again
 * (UINT64_MAX when nothing is queued); or -EINVAL (s or out NULL).
 * `now_ns` should not go backwards between calls.
 */
GSO_API int gso_sched__dequeue(struct gso_sched *s, uint64_t now_ns,
			       struct gso_sched_burst *out, uint64_t *next_ns);

/*
 * Up to n bursts due at `now_ns`, in the order gso_sched__dequeue() would
 * give them, into out[0..n).  Returns how many (0..n); *next_ns (if not
 * NULL) as for gso_sched__dequeue() after the last one.  -EINVAL if s is
 * NULL or out is NULL with n > 0.
 */
GSO_API int gso_sched__dequeue_batch(struct gso_sched *s, uint64_t now_ns,
				     struct gso_sched_burst *out, unsigned n, uint64_t *next_ns);

/*
 * When to call gso_sched__dequeue() next (UINT64_MAX if nothing is
 * queued, or s is NULL), for arming a timer.  Never later than the first burst becomes
 * due; it may be earlier (e.g. 0 right after an enqueue), in which case
 * that dequeue returns 0 and an exact *next_ns.
 */
GSO_API uint64_t gso_sched__next_time(const struct gso_sched *s);

/*
 * Counters and occupancy, filled up to st->sz (0: whole); st->sz becomes
 * the bytes written.  Returns 0, or -EINVAL (NULL, sz 1..sizeof(size_t)).
 */
GSO_API int gso_sched__stats(const struct gso_sched *s, struct gso_sched_stats *st);

#ifdef __cplusplus
}
#endif
#endif
