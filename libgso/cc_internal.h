/*
 * Congestion-control state shared by cc.c and the algorithms (cc_reno.c,
 * cc_cubic.c).  Not installed.
 */
#ifndef GSO_CC_INTERNAL_H
#define GSO_CC_INTERNAL_H

#include <stdbool.h>
#include <gso/cc.h>

struct cc_cubic {
	double w_last_max;   /* cwnd before the last reduction (fast convergence) */
	double origin;       /* the curve's plateau, segments */
	double k;            /* seconds from epoch start to the plateau */
	double w_epoch;      /* cwnd at epoch start: base of the Reno estimate */
	uint64_t epoch_ns;   /* start of this growth epoch; 0 = none yet */
	uint32_t cnt;        /* acked segments per +1 of cwnd, from the curve */
};

struct gso_cc {
	uint32_t algo, mss, hdr_len, max_cwnd, ss_ratio, ca_ratio;
	uint64_t max_rate;
	uint32_t cwnd, ssthresh, cwnd_cnt, packets_out;
	uint64_t pacing_rate;
	uint64_t recovery_start_ns;
	uint64_t freeze_until_ns; /* no growth before: ACKs of data sent before a cut */
	bool in_recovery_once; /* a reduction happened: recovery_start is meaningful */
	uint32_t loss_events;
	bool owned;
	struct gso_rtt rtt;
	struct cc_cubic cubic;
};

/* Linux tcp_slow_start: grow by acked up to ssthresh, return what is left. */
uint32_t gso_cc_slow_start(struct gso_cc *cc, uint32_t acked);
/* Linux tcp_cong_avoid_ai: +1 segment per `w` segments acked. */
void gso_cc_avoid_ai(struct gso_cc *cc, uint32_t w, uint32_t acked);

void gso_cc_reno_ack(struct gso_cc *cc, uint64_t now_ns, uint32_t acked);
uint32_t gso_cc_reno_ssthresh(struct gso_cc *cc);

void gso_cc_cubic_ack(struct gso_cc *cc, uint64_t now_ns, uint32_t acked);
uint32_t gso_cc_cubic_ssthresh(struct gso_cc *cc);
void gso_cc_cubic_reset(struct gso_cc *cc);

#endif
