/*
 * A small discrete-event link simulator for the pacer tests (virtual time,
 * deterministic).  One bulk TCP-like flow:
 *
 *   sender --NIC (nic_rate)--> bottleneck queue (queue_pkts, link_rate)
 *          --rtt/2--> receiver --ACKs, rtt/2--> sender
 *
 * The receiver delivers in order (out-of-order segments are dropped and
 * answered with a duplicate ACK), ACKs every `ack_every` full segments or
 * when its delayed-ACK timer (delack_ns after the first unacknowledged
 * segment) fires, and advertises a fixed receive buffer (the application
 * reads at once, so the window is the buffer).  The sender runs the
 * library's congestion control and one of three transmit policies:
 *
 *   LS_WHOLE_WINDOW   Linux 2.6.9-rc2: a TSO frame of min(64 KiB / mss,
 *                     cwnd) segments leaves whole, only when all of it fits
 *                     in cwnd and the peer's window, unpaced.
 *   LS_SIZED_UNPACED  bursts from gso_burst_size(), handed to the NIC at once.
 *   LS_SCHED          bursts from gso_burst_size(), released by gso_sched at
 *                     their EDT departure, at most two bursts queued below
 *                     the transport (a TCP Small Queues stand-in).
 *
 * Losses (queue overflow) are repaired go-back-N on three duplicate ACKs or
 * a timeout, with the CC told.
 */
#ifndef GSO_TEST_LINKSIM_H
#define GSO_TEST_LINKSIM_H

#include <stdint.h>

enum ls_mode { LS_WHOLE_WINDOW, LS_SIZED_UNPACED, LS_SCHED };

struct ls_params {
	enum ls_mode mode;
	uint64_t link_rate;   /* bottleneck, wire bytes/s */
	uint64_t nic_rate;    /* sender NIC, wire bytes/s (>= link_rate) */
	uint32_t queue_pkts;  /* bottleneck queue, packets (the one in service included) */
	uint64_t rtt_ns;      /* base round trip (propagation), split evenly */
	uint32_t mss, hdr_len;
	uint32_t rcvbuf;      /* receive buffer = advertised window, bytes */
	uint32_t ack_every;   /* ACK every this many in-order segments */
	uint64_t delack_ns;   /* delayed-ACK timer */
	uint32_t dev_max_segs; /* device segments per super-segment (0 = default) */
	uint32_t cc_algo;     /* enum gso_cc_algo */
	uint32_t pacing_shift; /* 0 = default */
	uint64_t max_rate;    /* CC pacing-rate cap, wire bytes/s (0 = none) */
	uint32_t defer;       /* 1: GSO_BURST_F_DEFER (sized modes) */
	uint64_t duration_ns, warmup_ns;
};

struct ls_result {
	uint64_t delivered;    /* payload bytes delivered in order after warmup */
	double goodput;        /* payload bytes/s after warmup */
	double utilization;    /* goodput / payload capacity of the bottleneck */
	uint64_t drops;        /* bottleneck overflows */
	uint64_t delack_timeouts; /* ACKs sent by the delayed-ACK timer */
	uint64_t acks;
	uint64_t bursts;
	uint64_t segs_sent;    /* segments handed to the NIC, retransmits included */
	uint64_t deferrals;    /* times gso_burst_size() chose to wait */
	uint32_t max_burst_segs;
	uint32_t max_queue;    /* deepest bottleneck queue seen, packets */
	uint32_t final_cwnd;
	uint64_t final_rate;
	uint64_t retransmits;  /* segments sent again */
	uint64_t events;
};

/* Run one simulation.  Returns 0, or -1 if an internal limit was hit. */
int ls_run(const struct ls_params *p, struct ls_result *r);

#endif
