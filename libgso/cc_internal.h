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

/* A windowed max of three samples (Kathleen Nichols' filter, Linux win_minmax.c). */
struct bbr_minmax_sample {
	uint64_t t, v;
};

/* Loss-recovery states as BBR sees them (Linux's CA_Open, CA_Recovery, CA_Loss). */
enum { BBR_CA_OPEN = 0, BBR_CA_RECOVERY = 3, BBR_CA_LOSS = 4 };

struct cc_bbr {
	struct bbr_minmax_sample bw[3]; /* max delivery rate, bytes/ns << BBR_BW_SCALE, by round */
	uint64_t min_rtt_ns;         /* UINT64_MAX: no sample yet */
	uint64_t min_rtt_stamp_ns;
	uint64_t probe_rtt_done_ns;  /* with probe_rtt_done_set: PROBE_RTT may end after it */
	uint64_t rtt_cnt;            /* packet-timed rounds */
	uint64_t next_rtt_delivered; /* delivered_total that ends this round */
	uint64_t cycle_ns;           /* start of this PROBE_BW phase */
	uint64_t delivered_ns;       /* last ACK that delivered data (tp->delivered_mstamp) */
	uint64_t delivered_total;    /* from the last rate sample */
	uint64_t full_bw;            /* bw at the last 25 % growth in STARTUP */
	uint64_t ack_epoch_ns, ack_epoch_acked; /* ACK aggregation: epoch start, bytes acked since */
	uint64_t extra_acked[2];     /* max excess bytes acked per window of 5 rounds */
	uint64_t probe_rtt_lo, probe_rtt_hi; /* deliveries sent in PROBE_RTT: app-limited */
	uint64_t probe_rtts;
	uint32_t mode, ca_state, prev_ca_state;
	uint32_t pacing_gain, cwnd_gain, cycle_idx, full_bw_cnt;
	uint32_t prior_cwnd, target_cwnd, pacing_shift, rng;
	uint32_t extra_acked_win_rtts, extra_acked_win_idx;
	bool full_bw_reached, packet_conservation, round_start, idle_restart;
	bool probe_rtt_done_set, probe_rtt_round_done, has_seen_rtt, min_rtt_stamp_set;
	bool probe_rtt_app;
};

struct gso_cc {
	uint32_t algo, mss, hdr_len, max_cwnd, ss_ratio, ca_ratio;
	uint64_t max_rate;
	uint32_t cwnd, ssthresh, cwnd_cnt, packets_out;
	uint32_t dev_quantum;  /* bytes of the device's aggregates (gso_cc__set_dev_quantum), 0: none */
	uint64_t pacing_rate;
	uint64_t recovery_start_ns;
	uint64_t freeze_until_ns; /* no growth before: ACKs of data sent before a cut */
	bool in_recovery_once; /* a reduction happened: recovery_start is meaningful */
	uint32_t loss_events;
	bool owned;
	struct gso_rtt rtt;
	struct cc_cubic cubic;
	struct cc_bbr bbr;
};

/* Linux tcp_slow_start: grow by acked up to ssthresh, return what is left. */
uint32_t gsoi_cc_slow_start(struct gso_cc *cc, uint32_t acked);
/* Linux tcp_cong_avoid_ai: +1 segment per `w` segments acked. */
void gsoi_cc_avoid_ai(struct gso_cc *cc, uint32_t w, uint32_t acked);

void gsoi_cc_reno_ack(struct gso_cc *cc, uint64_t now_ns, uint32_t acked);
uint32_t gsoi_cc_reno_ssthresh(struct gso_cc *cc);

void gsoi_cc_cubic_ack(struct gso_cc *cc, uint64_t now_ns, uint32_t acked);
uint32_t gsoi_cc_cubic_ssthresh(struct gso_cc *cc);
void gsoi_cc_cubic_reset(struct gso_cc *cc);

void gsoi_cc_bbr_init(struct gso_cc *cc, uint32_t pacing_shift, uint32_t seed);
void gsoi_cc_bbr_ack(struct gso_cc *cc, const struct gso_cc_ack *a, const struct gso_rate_sample *rs);
int gsoi_cc_bbr_loss(struct gso_cc *cc, uint64_t now_ns, uint64_t sent_ns);
void gsoi_cc_bbr_rto(struct gso_cc *cc, uint64_t now_ns);
void gsoi_cc_bbr_tx_start(struct gso_cc *cc, uint64_t now_ns, bool app_limited);
uint32_t gsoi_cc_bbr_min_tso_segs(const struct gso_cc *cc);

#endif
