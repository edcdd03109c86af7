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
 * linksim.h is the older, single-flow go-back-N model of the 2004 pacing
 * tests; this one exists for congestion control that needs SACK recovery
 * and rate samples (BBR).
 */
#ifndef GSO_TEST_FLOWSIM_H
#define GSO_TEST_FLOWSIM_H

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
};

struct fs_result {
	struct fs_flow_result flow[FS_MAX_FLOWS];
	uint64_t max_queue_bytes;  /* deepest bottleneck queue from measure_from_ns on */
	double mean_queue_bytes;   /* time-weighted mean over the same span */
	double utilization;        /* all flows' measured payload / payload capacity of the link */
	uint64_t events;
};

/* Run one simulation.  Returns 0, or a negative errno if a limit was hit. */
int fs_run(const struct fs_params *p, struct fs_result *r);

/* Payload bytes/s the link carries with full segments. */
double fs_payload_rate(const struct fs_params *p);

#endif
