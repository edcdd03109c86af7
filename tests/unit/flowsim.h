/*
 * A discrete-event simulator of TCP-like flows sharing one bottleneck, in
 * virtual time, built from the library's own transmit path: each sender is
 * a gso_flowq (SACK, RACK, NewReno), a gso_cc (Reno, CUBIC or BBR fed
 * with the queue's delivery-rate samples), gso_burst_size() and a
 * gso_pacer, wired as the transmit engine wires them.  Deterministic: the
 * same parameters give the same run.
 *
 *   senders --(bursts at their EDT)--> random loss --> bottleneck FIFO
 *     (queue_bytes, link_rate) --rtt/2--> receivers --ACKs, rtt/2--> senders
 *
 * Receivers deliver in order, hold out-of-order segments and report them
 * in up to 3 SACK blocks (the block of the latest arrival first, then the
 * highest), ACK every `ack_every` in-order segments, at once on anything
 * out of order, and else after delack_ns.  Loss and queue overflow are
 * the only impairments; the ACK path is lossless.
 *
 * With dev.on, the senders' own device is the bottleneck instead (the
 * 2015 seed: a Wi-Fi device that sends in aggregates; issue 28):
 *
 *   senders --(bursts at their EDT, while TSQ allows)--> device (link_rate;
 *     aggregates at opportunities, or a FIFO) --rtt/2--> receivers
 *
 * The device has no buffer limit of its own: what it holds is bounded by
 * each sender's device-queue limit, applied as the transmit engine does
 * (look, gso_aggr__policy(), wait TSQ_RETRY when full), and its bursts
 * take that policy's pacing shift.  flowsim_dev.c says more.
 *
 * linksim.h is the older, single-flow go-back-N model of the 2004 pacing
 * tests; this one exists for congestion control that needs SACK recovery
 * and rate samples (BBR).
 */
#ifndef GSO_TEST_FLOWSIM_H
#define GSO_TEST_FLOWSIM_H

#include <stdbool.h>
#include <stdint.h>

#include <gso/gso.h>

#define FS_MAX_FLOWS 8

struct fs_flow_params {
	uint32_t cc_algo;      /* enum gso_cc_algo */
	uint32_t seed;         /* gso_cc_opts.seed (BBR's start phase); 0 = 1 + flow index */
	uint64_t start_ns;     /* first data */
	/* Application: bulk (always data ready) except in [app_from_ns, app_to_ns),
	 * where it writes app_rate payload bytes/s in 1 ms steps. */
	uint64_t app_rate, app_from_ns, app_to_ns;
};

struct fs_sim;

/*
 * The senders' own device as the bottleneck (flowsim_dev.c).  It replaces
 * the FIFO (queue_bytes and jitter_ns are then unused).
 */
struct fs_dev_params {
	bool on;
	/* Transmit opportunities every interval_ns +- jitter_ns (uniform,
	 * from the run's seed); 0: no aggregation, a FIFO draining at
	 * link_rate that completes each frame as it leaves. */
	uint64_t interval_ns, jitter_ns;
	/* Wire bytes one aggregate carries at most, whole frames (0:
	 * link_rate * interval_ns, so that full aggregates fill the link). */
	uint64_t aggr_bytes;
	/* The flows' pacing_shift setting: 0 the default, 1..31 fixed (10 is
	 * the 2015 policy, 8 mac80211's static fix). */
	uint32_t shift;
	/* Give gso_aggr__policy() the flow's gso_aggr (adaptive with shift 0);
	 * false: NULL, the policy of a device known not to aggregate. */
	bool learn;
	/* The floor of the queue limit is two bursts of the device's largest
	 * super-segment (64 KiB, as xdp/tcp tsq_full counts it) instead of
	 * two of the flow's full burst at its rate (Linux's 2 * truesize). */
	bool floor_max_burst;
};

/* Called after every ACK a sender processes (tests watch the model with it). */
typedef void (*fs_ack_hook)(void *ctx, unsigned flow, uint64_t now_ns, const struct gso_cc *cc,
			    const struct gso_flowq *q);

struct fs_params {
	uint64_t link_rate;    /* bottleneck, wire bytes/s */
	uint64_t rtt_ns;       /* propagation round trip, split evenly */
	uint64_t jitter_ns;    /* the data direction's delay varies uniformly by +-jitter_ns
				* per frame, never reordering (a frame never leaves before
				* the one ahead of it), as bench/impair relay --jitter */
	uint64_t queue_bytes;  /* bottleneck buffer, wire bytes (a frame is dropped if it does not fit) */
	uint32_t loss_ppm;     /* random loss before the bottleneck, per million frames */
	uint32_t seed;         /* of the loss process (0 = 1) */
	uint32_t mss, hdr_len;
	uint32_t ack_every;    /* 0 = 2 */
	uint64_t delack_ns;    /* 0 = 5 ms */
	uint64_t duration_ns;
	uint64_t measure_from_ns; /* goodput and queue statistics from here on */
	unsigned nflows;
	struct fs_flow_params flow[FS_MAX_FLOWS];
	struct fs_dev_params dev;
	fs_ack_hook hook;
	void *hook_ctx;
};

struct fs_flow_result {
	uint64_t delivered;      /* payload bytes delivered in order, whole run */
	uint64_t measured;       /* of those, from measure_from_ns on */
	double goodput;          /* measured * 1e9 / (duration - max(measure_from, start)) bytes/s */
	uint64_t segs_sent, retrans_segs, rto, losses_random, losses_queue;
	uint32_t cwnd_end;
	uint64_t rate_end;
	/* with dev.on: */
	uint64_t tsq_waits;      /* looks that found the device queue full */
	uint64_t aggr_interval_ns, aggr_batch_bytes; /* what its gso_aggr learned (0: nothing) */
	uint32_t shift_end;      /* the policy at the end: pacing shift, queue limit */
	uint64_t queue_limit_end;
};

struct fs_result {
	struct fs_flow_result flow[FS_MAX_FLOWS];
	uint64_t max_queue_bytes;  /* deepest bottleneck queue from measure_from_ns on
				    * (dev.on: the device's posted, not completed bytes) */
	double mean_queue_bytes;   /* time-weighted mean over the same span */
	double utilization;        /* all flows' measured payload / payload capacity of the link */
	uint64_t events;
	/* with dev.on: RTT samples (a segment's send to the ACK that covers it) from measure_from_ns */
	uint64_t rtt_samples, rtt_p50_us, rtt_p99_us;
	uint64_t aggregates;       /* the device's, whole run */
};

/* Run one simulation.  Returns 0, or a negative errno if a limit was hit. */
int fs_run(const struct fs_params *p, struct fs_result *r);

/* Payload bytes/s the link carries with full segments. */
double fs_payload_rate(const struct fs_params *p);

#endif
