/*
 * libgso pacing: how big a burst (super-segment) a flow may release and
 * when it may depart.  The multi-flow scheduler built on them is in
 * <gso/sched.h>.
 *
 * Two pieces, all pure arithmetic with time passed in (uint64_t
 * nanoseconds in the CLOCK_MONOTONIC domain; the library never reads a
 * clock):
 *
 *  1. gso_burst_size(): the segment count of the next burst of one flow, a
 *     documented function of pacing rate, cwnd, segments in flight, the
 *     peer's window, MSS, device limits and settings whose defaults are
 *     Linux's (tcp_tso_autosize, tcp_tso_segs, tcp_cwnd_test,
 *     tcp_mss_split_point, optional tcp_tso_should_defer).
 *  2. struct gso_pacer: one flow's earliest departure time (EDT), advanced
 *     by each burst's wire bytes at the flow's rate, with Linux's credit for
 *     a late sender and its unpaced first segments.
 *  3. struct gso_aggr: how the flow's device batches its completions (a
 *     device that sends in aggregates, such as Wi-Fi), and the burst size
 *     and device-queue limit that follow from it, with no knob.
 *
 * Rates are bytes per second of wire bytes: a burst of n segments of
 * `payload` bytes in total is charged payload + n * hdr_len, the headers
 * each segment adds on the wire (L2+L3+L4).  GSO_RATE_UNPACED is an
 * infinite rate.
 */
#ifndef GSO_PACER_H
#define GSO_PACER_H

#include <stdbool.h>
#include <gso/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An infinite rate: bursts are not spaced. */
#define GSO_RATE_UNPACED UINT64_MAX

/* Linux's defaults, used when the corresponding setting is 0. */
#define GSO_BURST_DEF_PACING_SHIFT 10u   /* sk_pacing_shift: rate >> 10 ~ 1 ms of data */
#define GSO_BURST_DEF_MIN_SEGS 2u        /* tcp_min_tso_segs */
#define GSO_BURST_DEF_WIN_DIVISOR 3u     /* tcp_tso_win_divisor */
#define GSO_BURST_DEF_RTT_LOG 9u         /* tcp_tso_rtt_log: bonus halves per 512 us of min RTT */
#define GSO_BURST_DEF_DEV_MAX_SEGS 65535u /* GSO_MAX_SEGS */
#define GSO_BURST_DEF_DEV_MAX_BYTES 65536u /* GSO_LEGACY_MAX_SIZE */
#define GSO_BURST_DEF_DEFER_NS 1000000u  /* when deferral is on: 1 ms, as Linux */
#define GSO_PACER_DEF_UNPACED_SEGS 10u   /* Linux leaves the first 10 segments unpaced */

/* ---- 1. burst sizing ---------------------------------------------------- */

/* Settings of gso_burst_size(); 0 always means the default above. */
struct gso_burst_opts {
	size_t sz;
	uint32_t pacing_shift; /* burst ~ rate >> shift bytes (10 ~ 1 ms; 7-8 for
				* aggregating links such as Wi-Fi); 1..31 */
	uint32_t min_segs;     /* floor of the rate-based size, 1..65535 */
	uint32_t win_divisor;  /* a cwnd-limited burst is at most cwnd / divisor
				* segments (at least 1); 1 disables; 1..255 */
	uint32_t rtt_log;      /* short-RTT bonus: dev_max_bytes >> (min_rtt_us >> rtt_log)
				* is added while that shift is < 32; 1..31 */
	uint32_t flags;        /* GSO_BURST_F_* */
	uint64_t defer_ns;     /* deferral bound when GSO_BURST_F_DEFER is set (0 = 1 ms) */
	size_t :0;
};
#define gso_burst_opts__last_field defer_ns

/* No short-RTT bonus (Linux before 5.18). */
#define GSO_BURST_F_NO_RTT_BONUS (1u << 0)
/*
 * Allow deferral (tcp_tso_should_defer): when cwnd or the peer's window
 * almost allows a full burst and an ACK is expected soon, return 0 segments
 * and a time to look again rather than a small burst.  Off by default.
 */
#define GSO_BURST_F_DEFER (1u << 1)

/* The flow's state, as the transport sees it now.  Declare with GSO_OPTS. */
struct gso_burst_in {
	size_t sz;
	uint64_t rate;        /* pacing rate, wire bytes/s; required (> 0), GSO_RATE_UNPACED ok */
	uint64_t queued;      /* payload bytes ready to send (0: nothing to send) */
	uint32_t mss;         /* payload bytes per segment; required, 1..65535 */
	uint32_t hdr_len;     /* wire header bytes per segment (L2+L3+L4), 0..GSO_MAX_HDR_LEN */
	uint32_t cwnd;        /* congestion window, segments (bytes with
			       * GSO_BURST_IN_BYTES); required (>= 1) */
	uint32_t in_flight;   /* segments (bytes) sent and not yet acked or lost
			       * (may exceed cwnd) */
	uint32_t peer_wnd;    /* bytes the peer's window still allows beyond what is in
			       * flight (snd_una + snd_wnd - snd_nxt).  Not a setting:
			       * 0 is a closed window, not "the default"; a flow with
			       * no receive window (datagrams) passes UINT32_MAX */
	uint32_t dev_max_segs;  /* device's segments per super-segment (gso_max_segs);
				 * 0 = GSO_BURST_DEF_DEV_MAX_SEGS */
	uint32_t dev_max_bytes; /* device's bytes per super-segment, headers included
				 * (gso_max_size); 0 = GSO_BURST_DEF_DEV_MAX_BYTES;
				 * hdr_len + mss .. 2^24 */
	uint64_t min_rtt_ns;  /* for the short-RTT bonus; 0 = unknown (no bonus) */
	/* Used only with GSO_BURST_F_DEFER: */
	uint64_t now_ns;      /* current time */
	uint64_t last_send_ns; /* departure time of the flow's previous burst */
	uint64_t oldest_unacked_ns; /* send time of the oldest segment in flight */
	uint64_t srtt_ns;     /* smoothed RTT; 0 = unknown (no deferral) */
	uint32_t flags;       /* GSO_BURST_IN_* */
	size_t :0;
};
#define gso_burst_in__last_field flags

/* The flow is recovering from loss: never defer (Linux: CA state >= Recovery). */
#define GSO_BURST_IN_RECOVERY (1u << 0)
/* No more data is coming soon (end of a message, FIN): never defer. */
#define GSO_BURST_IN_PUSH (1u << 1)
/*
 * cwnd and in_flight count bytes, not segments (byte-counting transports
 * such as QUIC).  They become segments of mss: cwnd rounded down (at least
 * 1), in_flight rounded up.
 */
#define GSO_BURST_IN_BYTES (1u << 2)

/* What bound the burst (the smallest limit; ties go to the earlier name). */
enum gso_burst_limit {
	GSO_BURST_LIM_RATE = 0,   /* rate >> pacing_shift (+ short-RTT bonus) */
	GSO_BURST_LIM_MIN_SEGS,   /* the min_segs floor of the rate-based size */
	GSO_BURST_LIM_DEV_BYTES,  /* device bytes per super-segment */
	GSO_BURST_LIM_DEV_SEGS,   /* device segments per super-segment */
	GSO_BURST_LIM_CWND_DIV,   /* cwnd / win_divisor */
	GSO_BURST_LIM_QUOTA,      /* min(max(cwnd/2, 1), cwnd - in_flight) */
	GSO_BURST_LIM_PEER_WND,   /* the peer's window */
	GSO_BURST_LIM_DATA,       /* the queued data */
	GSO_BURST_LIM_DEFER,      /* deferred: 0 segments until defer_until_ns or an ACK */
};

/*
 * The result of gso_burst_size().  The caller sets sz (GSO_OPTS or .sz =
 * sizeof), or leaves it 0 (`= {0}`): filled whole, sz set to the bytes written.
 */
struct gso_burst {
	size_t sz;
	uint32_t segs;       /* segments in the burst (also returned); 0 = send nothing now */
	uint32_t bytes;      /* payload bytes: all segments full (mss) except possibly
			      * the last, which only the end of `queued` makes short */
	uint32_t wire_bytes; /* bytes + segs * hdr_len: what the pacer charges */
	uint32_t goal_segs;  /* the rate-based size before device, cwnd and window
			      * limits (what a CC model should use; never depends on
			      * dev_max_segs, unlike Linux before 2018) */
	uint32_t limit;      /* enum gso_burst_limit */
	uint64_t defer_until_ns; /* with GSO_BURST_LIM_DEFER: look again at this time
				  * (or at the next ACK), else 0 */
	size_t :0;
};
#define gso_burst__last_field defer_until_ns

/*
 * Size the next burst of one flow.  With d = dev_max_bytes - hdr_len (the
 * payload the device takes at once):
 *
 *   bytes  = rate >> pacing_shift
 *   r      = (min_rtt_ns / 1000) >> rtt_log;  if min_rtt known, bonus on and r < 32:
 *   bytes += d >> r                                     (short-RTT bonus)
 *   goal   = max(min(bytes, d) / mss, min_segs)        (tcp_tso_autosize)
 *   segs   = min(goal, dev_max_segs, d / mss)          (tcp_tso_segs)
 *   quota  = min(max(cwnd/2, 1), cwnd - in_flight)     (two bursts in flight;
 *                                                       0 when in_flight >= cwnd)
 *   segs   = min(segs, quota, max(cwnd / win_divisor, 1))
 *   payload = min(segs * mss, queued); if it does not fit peer_wnd it is cut
 *             to whole segments inside the window (0 if none fits)
 *
 * so a burst never eats the window.
 *
 * With GSO_BURST_F_DEFER, a burst that cwnd or the peer's window holds
 * below its full size is deferred (0 segments, limit GSO_BURST_LIM_DEFER,
 * defer_until_ns = last_send_ns + defer_ns) when all of these hold:
 *  - not GSO_BURST_IN_RECOVERY, not GSO_BURST_IN_PUSH, srtt known;
 *  - the last send is less than defer_ns ago (a call at defer_until_ns sends);
 *  - the room, min(peer_wnd, (cwnd - in_flight) * mss), is less than the
 *    full burst (goal_segs within the device limits), less than
 *    min(peer_wnd + in_flight * mss, cwnd * mss) / win_divisor, and less
 *    than the queued data;
 *  - something is in flight and its oldest segment left at least srtt/2
 *    ago, so an ACK is expected soon.
 *
 * `in` is required and only read; `o` may be NULL (all defaults; so is an
 * `o` all zero, sz 0 included); `out` may be NULL, else it is filled up to
 * out->sz bytes (sz 0: whole) and out->sz is set to the bytes written.
 * Returns the segment count (>= 0; 0 when nothing may go now: cwnd full,
 * window closed, no data, or deferred), or
 *   -EINVAL  in NULL; bad sz or non-zero unknown tail in `in` or `o`
 *            (sz 0 with a field set: `in` written `= {0}` and then filled
 *            without .sz, whose fields would be ignored);
 *            out->sz 1..sizeof(size_t); rate 0;
 *            mss 0 or > 65535; cwnd 0; hdr_len > GSO_MAX_HDR_LEN;
 *            dev_max_bytes < hdr_len + mss or > 2^24; dev_max_segs > 65535;
 *            a setting out of its range; an unknown flag
 * On error `out` is not written.
 */
GSO_API int gso_burst_size(const struct gso_burst_in *in, const struct gso_burst_opts *o,
			   struct gso_burst *out);

/* ---- 2. one flow's earliest departure time ------------------------------ */

struct gso_pacer_opts {
	size_t sz;
	uint32_t unpaced_segs; /* segments that go out before pacing starts
				* (0 = GSO_PACER_DEF_UNPACED_SEGS) */
	uint32_t flags;        /* GSO_PACER_F_* */
	size_t :0;
};
#define gso_pacer_opts__last_field flags

/* Pace from the very first segment (unpaced_segs is then ignored). */
#define GSO_PACER_F_PACE_ALL (1u << 0)

/*
 * One flow's pacing state.  Exposed so that it can live inside the caller's
 * flow struct without allocation; use the functions.  Copying it copies
 * the state.  The caller sets sz before gso_pacer__init(), or leaves it 0
 * (`= {0}`: the whole struct):
 *   struct gso_pacer p = { .sz = sizeof(p) };
 * A pacer that gso_pacer__init() did not initialise (left `= {0}` or
 * uninitialised, or whose init failed) is refused by every later call:
 * __stamp and __refund return -EINVAL, __next returns UINT64_MAX ("never",
 * so that a caller that waits for it sends nothing rather than unpaced),
 * __reset does nothing.
 */
struct gso_pacer {
	size_t sz;
	/* private: the library's own; do not read or write */
	uint64_t next_ns_;      /* earliest departure of the next burst */
	uint64_t segs_sent_;
	uint64_t frac_;         /* leftover of bytes * 1e9 / rate, in 1/rate ns */
	uint64_t frac_rate_;    /* rate `frac_` belongs to */
	uint32_t unpaced_segs_;
	uint32_t flags_;
	uint64_t init_;         /* a marker that gso_pacer__init() set */
};

/*
 * Initialise `p` (caller memory, any alignment of the struct, p->sz set by
 * the caller, or 0 for the whole struct, then set to it); `o` may be NULL
 * (the defaults).  Returns 0, or
 * -EINVAL (p NULL, p->sz 1..sizeof(*p) - 1, bad opts sz/tail, unknown
 * flag; `p` is then left unusable).  Only sz is kept from before.
 */
GSO_API int gso_pacer__init(struct gso_pacer *p, const struct gso_pacer_opts *o);

/*
 * Give the burst about to be sent at `now_ns` its departure time and
 * advance the flow's clock (Linux tcp_update_skb_after_send):
 *
 *   departure = max(next, now)
 *   gap       = wire_bytes * 1e9 / rate     (fractions of a ns carried over)
 *   credit    = departure - next  (how late the sender came; 0 if early)
 *   next      = departure + gap - min(gap / 2, credit)
 *
 * The credit lets a sender that is woken late catch up by at most half a
 * gap, so timer jitter does not lower the long-run rate.  While the flow's
 * segments, counting this burst, are at most unpaced_segs, the clock does
 * not advance (the first bursts leave back to back, like Linux's initial
 * window).  rate GSO_RATE_UNPACED never advances it.
 *
 * The order that keeps the rate: wait until gso_pacer__next() (less a
 * little slack), stamp with the time read after waking, send.  Stamping
 * first and then sleeping until the departure loses each late wake-up to
 * the rate (the credit was computed before the sleep, so the flow runs
 * measurably below the rate it was given).  The transmit engine
 * (<gso/engine.h>) does this for its flows.
 *
 * Returns 0 and writes *departure_ns, or -EINVAL (p or departure_ns NULL,
 * p not initialised, rate 0, segs 0, wire_bytes 0).  On error nothing
 * changes.
 */
GSO_API int gso_pacer__stamp(struct gso_pacer *p, uint64_t now_ns, uint64_t rate,
			     uint32_t wire_bytes, uint32_t segs, uint64_t *departure_ns);

/*
 * The burst stamped last carried `wire_bytes` fewer than it was stamped
 * with (it was sized before it was built, and came out shorter: the end of
 * the data, a one-segment retransmission): give their time back, so that
 * the flow's rate counts what left, not what was planned.  The clock moves
 * back by wire_bytes / rate but never before floor_ns (pass that burst's
 * departure).  Nothing changes while the clock does not run (unpaced
 * segments, GSO_RATE_UNPACED).  Returns 0, or -EINVAL (p NULL or not
 * initialised, rate 0).
 */
GSO_API int gso_pacer__refund(struct gso_pacer *p, uint64_t rate, uint32_t wire_bytes, uint64_t floor_ns);

/* Earliest departure of the flow's next burst (0 before the first; UINT64_MAX: p NULL or not initialised). */
GSO_API uint64_t gso_pacer__next(const struct gso_pacer *p);

/* Forget the history (segments sent, clock): the flow starts afresh.  Nothing for p NULL or not initialised. */
GSO_API void gso_pacer__reset(struct gso_pacer *p);

/* ---- 3. a device that sends in aggregates ------------------------------ */

/*
 * Why: the 2015 seed thread ("Throughput regression with `tcp: refine TSO
 * autosizing`", ath10k Wi-Fi, netdev, February 2015).  Linux sized a
 * burst as about 1 ms of data at the pacing rate (sk_pacing_shift 10) and
 * let a socket keep about as much in the device (TCP Small Queues).  A
 * Wi-Fi device sends in aggregates at transmit opportunities a few
 * milliseconds apart; holding 1 ms of data it never has enough to fill
 * one, each aggregate carries what little it holds, and throughput fell
 * from about 600 to 250-440 Mbit/s.  Linux's answer was a static
 * per-device knob (mac80211 set the shift to 8, about 4 ms, in 2018, and
 * to 7, about 8 ms, in 2019).  libgso
 * learns it instead, from what any sender can see: when its device
 * completes what it was given.
 *
 * The rule.  Every time the sender looks at its device (each completion
 * reap) it calls gso_aggr__look() with the work completed since its
 * previous look and the work still posted.  A look that finds completions
 * after looks that found the device holding work and finishing none, the
 * first and the last of them at least GSO_AGGR_MIN_HOLD_NS apart, ends a
 * *hold*: the device was seen sitting on data and then released a batch,
 * as an aggregating device does at its transmit opportunity.  (A device
 * that finished long before the sender looked again shows no such span,
 * however long the sender slept.)  A held batch completed between the
 * last look of its hold and the look that found it; the time between the
 * middles of two consecutive held batches' brackets (no completion
 * between them) is an interval sample, kept when the two brackets
 * together are at most a quarter of it (a sender that looked late at one
 * of them would bias it); the
 * estimate is the median of the last GSO_AGGR_WINDOW samples, once there
 * are GSO_AGGR_MIN_SAMPLES of them.  The device *aggregates* when that
 * median is at least GSO_AGGR_MIN_INTERVAL_NS (below it, the default 1 ms
 * already covers a batch).  Completions that come steadily instead (two
 * looks with completions less than a quarter of the interval, or of
 * GSO_AGGR_MIN_INTERVAL_NS before there is one, apart while work stayed
 * posted, 2 * GSO_AGGR_WINDOW times with no hold between) make it forget
 * what it learned: the device has stopped aggregating, or the samples
 * were strays (a device thread descheduled now and then).
 *
 * What changes (gso_aggr__policy()), with T the learned interval and
 * `rate` the flow's pacing rate, and only while the flow's pacing_shift
 * setting is 0 (the default; a shift the caller sets is its policy, kept
 * as given: 10 is the 2015 policy, 8 mac80211's static fix):
 *  - bursts: pacing_shift = round(log2(1 s / T)), at most the default 10
 *    (about one interval of data: T = 4 ms gives 8, mac80211's value);
 *  - the device-queue limit: max(rate' >> pacing_shift, 2 bursts,
 *    rate' * 2 * T), at most GSO_AGGR_MAX_QUEUE: two aggregates, the one
 *    on the air and the next, so that the device finds a full aggregate
 *    at each opportunity.  rate' is the pacing rate, but at most
 *    GSO_AGGR_RATE_PCT % of the device's own rate (the fastest held
 *    batch of the window: its work over the interval before it).  The
 *    headroom lets a starved device grow (each aggregate up to 1.2 times
 *    the one before); the bound keeps a pacing rate far above what the
 *    device delivers from sizing the queue: a loss-free CUBIC paces at
 *    twice cwnd / srtt with cwnd twice what is in flight, and a limit of
 *    two intervals at that rate let queue, srtt and cwnd grow together
 *    to about eight intervals of data (a quarter of that with the bound).
 * On a device that does not aggregate (completions inside the submit
 * call, or steady ones) nothing is learned and the policy is the fixed
 * one: shift 10 and max(rate >> 10, 2 bursts) capped at the caller's
 * max_queue: the same bursts and the same standing queue as before.
 * Delayed or stretched ACKs (ACK aggregation) are the congestion
 * control's concern (BBR's extra_acked), not this estimator's.
 *
 * Units of "work" are the caller's (bytes, or descriptors when that is
 * what its device counts); they only need to be the same in every call.
 * gso_aggr__policy() converts the device's rate to bytes with the size of
 * a full burst in both units.
 */
#define GSO_AGGR_WINDOW 8u                   /* interval samples the estimate is taken over */
#define GSO_AGGR_MIN_SAMPLES 4u              /* samples before the device counts as aggregating */
#define GSO_AGGR_MIN_HOLD_NS 500000ull       /* a hold shorter than this is not an aggregate */
#define GSO_AGGR_MIN_INTERVAL_NS 1000000ull  /* shorter intervals: the default policy covers them */
#define GSO_AGGR_MAX_INTERVAL_NS 200000000ull /* a longer hold is a stall, not an aggregate */
#define GSO_AGGR_MAX_QUEUE (32ull << 20)     /* the learned device-queue limit's ceiling, bytes */
#define GSO_AGGR_RATE_PCT 110u               /* the learned limit's rate: at most this % of the device's */

/*
 * One device's batching, as its sender sees it.  Exposed so that it can
 * live in the caller's struct; use the functions.  Set sz (or leave the
 * struct `= {0}`) before gso_aggr__init(); a struct it did not initialise
 * is refused by every call (-EINVAL).
 */
struct gso_aggr {
	size_t sz;
	/* private: the library's own; do not read or write */
	uint64_t last_look_ns_;
	uint64_t hold_from_ns_;   /* first look of the current hold */
	uint64_t hold_last_ns_;   /* its latest look */
	uint64_t last_done_ns_;   /* last look that found completions */
	uint64_t last_batch_ns_;  /* last held batch; 0 when a completion followed it */
	uint64_t last_mid_ns_, last_unc_ns_; /* when it completed: the middle of its bracket, and the bracket */
	uint64_t iv_[GSO_AGGR_WINDOW], work_[GSO_AGGR_WINDOW];
	uint64_t batches_, forgotten_;
	uint32_t holding_, steady_, n_, pos_;
	uint64_t init_;
};

/* Initialise `a` (sz set by the caller, or 0 for the whole struct).  Returns 0 or -EINVAL. */
GSO_API int gso_aggr__init(struct gso_aggr *a);

/*
 * One look at the device at `now_ns`: `done` work completed since the
 * previous look, `held` work posted and not yet completed now.  Returns 1
 * when this look ended a held batch, 0 otherwise, or -EINVAL (a NULL or
 * uninitialised `a`; now_ns before the previous look's: nothing changes).
 */
GSO_API int gso_aggr__look(struct gso_aggr *a, uint64_t now_ns, uint64_t done, uint64_t held);

/* What gso_aggr__info() reports.  The caller sets sz, or leaves it 0 (whole). */
struct gso_aggr_info {
	size_t sz;
	uint64_t interval_ns;  /* median interval between held batches (0: fewer than
				* GSO_AGGR_MIN_SAMPLES samples) */
	uint64_t batch_work;   /* median work per held batch, over the same window */
	uint64_t batch_work_max; /* largest of them */
	uint64_t batches;      /* held batches seen since init */
	uint64_t forgotten;    /* times steady completions made it forget */
	uint32_t samples;      /* interval samples in the window */
	uint32_t aggregating;  /* 1: the device aggregates (interval_ns >= GSO_AGGR_MIN_INTERVAL_NS) */
	size_t :0;
};
#define gso_aggr_info__last_field aggregating

/* Fill `out` up to out->sz.  Returns 0, or -EINVAL (NULL, uninitialised, bad sz). */
GSO_API int gso_aggr__info(const struct gso_aggr *a, struct gso_aggr_info *out);

/* The sizing in force (gso_aggr__policy()).  The caller sets sz, or leaves it 0 (whole). */
struct gso_aggr_policy {
	size_t sz;
	uint32_t pacing_shift; /* for gso_burst_opts.pacing_shift */
	uint32_t adapted;      /* 1: sized from a learned interval; 0: the fixed policy */
	uint64_t queue_limit;  /* bytes the flow may keep posted and not completed */
	uint64_t interval_ns;  /* the interval it was sized from (0: none) */
	size_t :0;
};
#define gso_aggr_policy__last_field interval_ns

/*
 * The burst shift and device-queue limit for a flow paced at `rate`
 * (bytes/s, GSO_RATE_UNPACED: no rate term) whose pacing_shift setting is
 * `shift` (0: the default, which adapts; 1..31: fixed), whose full burst
 * is `burst` bytes and `burst_work` in the units of work given to
 * gso_aggr__look() (0: those are bytes; the device's rate is converted
 * at burst / burst_work bytes per unit), with the fixed policy's limit
 * capped at `max_queue` bytes (0: no cap).  `a` may be NULL: a device
 * that does not aggregate.  The rule is at the top of this section.
 * Returns 0, or -EINVAL (out NULL, bad sz, shift > 31, `a` given but
 * uninitialised).
 */
GSO_API int gso_aggr__policy(const struct gso_aggr *a, uint64_t rate, uint32_t shift, uint64_t burst,
			     uint64_t burst_work, uint64_t max_queue, struct gso_aggr_policy *out);

#ifdef __cplusplus
}
#endif
#endif
