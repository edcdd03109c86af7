/*
 * libgso congestion control, for users whose transport has none: an RTT
 * estimator and Reno / CUBIC / BBR producing a congestion window and a
 * pacing rate from ACK, loss and RTT events (BBR also from delivery-rate
 * samples, struct gso_rate_sample, which gso_flowq produces).  Users with their own transport skip
 * this and feed cwnd and rate to gso_burst_size() and the scheduler
 * directly (gso/pacer.h).
 *
 * Pure arithmetic with time passed in (uint64_t ns, CLOCK_MONOTONIC
 * domain).  Windows count segments (payload `mss` each); rates are wire
 * bytes per second: (mss + hdr_len) per segment, so that they match what
 * the pacer charges.  With hdr_len 0 the rate is Linux's
 * (tcp_update_pacing_rate):
 *
 *   rate = (mss + hdr_len) * max(cwnd, packets_out) * ratio / 100 * 1e9 / srtt_ns
 *   ratio = ss_ratio (200) while cwnd < ssthresh / 2, else ca_ratio (120)
 *
 * capped by max_rate; GSO_RATE_UNPACED before the first RTT sample.  BBR
 * sets both from its path model instead (see GSO_CC_BBR).  The
 * device's segment limit is no input here: how many segments a device
 * takes at once never changes cwnd or rate (2018: BBR under-estimated cwnd
 * when bursts were tied to gso_max_segs).
 */
#ifndef GSO_CC_H
#define GSO_CC_H

#include <stdbool.h>
#include <gso/common.h>
#include <gso/pacer.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- RTT estimator (RFC 6298, plus a windowed minimum) ------------------ */

/*
 * Exposed so that it can be embedded; read the public fields, change them
 * only through the functions.  All times in ns; 0 = no sample yet.  The
 * caller sets sz before gso_rtt__init():
 *   struct gso_rtt r = { .sz = sizeof(r) };
 */
struct gso_rtt {
	size_t sz;
	uint64_t srtt_ns;      /* smoothed RTT: 7/8 old + 1/8 sample */
	uint64_t rttvar_ns;    /* mean deviation: 3/4 old + 1/4 |srtt - sample| */
	uint64_t min_rtt_ns;   /* smallest sample in the last min-RTT window */
	uint64_t latest_ns;    /* last sample */
	/* private: the library's own; do not read or write */
	uint64_t min_rtt_at_ns_;  /* when min_rtt_ns was taken */
	uint64_t min_rtt_win_ns_; /* window of the minimum */
	uint64_t init_;           /* a marker that gso_rtt__init() set */
};

#define GSO_RTT_DEF_MIN_WIN_NS 300000000000ull /* tcp_min_rtt_wlen: 300 s */
#define GSO_RTT_MIN_RTO_NS 200000000ull        /* TCP_RTO_MIN: 200 ms */
#define GSO_RTT_INIT_RTO_NS 1000000000ull      /* RFC 6298 initial RTO: 1 s */

/*
 * Initialise; min_win_ns 0 = GSO_RTT_DEF_MIN_WIN_NS.  r->sz 0 (`= {0}`)
 * stands for the whole struct and is set to it.  -EINVAL on NULL or r->sz
 * 1..sizeof(*r) - 1.  Only sz is kept from before.  An estimator that was
 * never initialised is refused: gso_rtt__update() returns -EINVAL and
 * gso_rtt__rto() GSO_RTT_INIT_RTO_NS (the RTO of no sample).
 */
GSO_API int gso_rtt__init(struct gso_rtt *r, uint64_t min_win_ns);

/*
 * Fold in one RTT sample taken at now_ns.  The first sample sets srtt =
 * sample, rttvar = sample / 2.  The minimum is replaced by a larger sample
 * only once it is older than the window.  Returns 0, or -EINVAL (r NULL
 * or not initialised, sample 0).
 */
GSO_API int gso_rtt__update(struct gso_rtt *r, uint64_t now_ns, uint64_t sample_ns);

/*
 * Retransmission timeout: srtt + max(4 * rttvar, 1 ms), at least
 * GSO_RTT_MIN_RTO_NS; GSO_RTT_INIT_RTO_NS before any sample (also for
 * NULL and an estimator never initialised).
 */
GSO_API uint64_t gso_rtt__rto(const struct gso_rtt *r);

/* ---- congestion control ------------------------------------------------- */

enum gso_cc_algo {
	GSO_CC_CUBIC = 0, /* default, as Linux (RFC 8312: C 0.4, beta 0.7,
			   * fast convergence, Reno-friendly region; no HyStart) */
	GSO_CC_RENO = 1,  /* NewReno-style AIMD (RFC 5681): +1 segment per cwnd
			   * acked, halve on loss */
	GSO_CC_BBR = 2,   /* BBR v1 as Linux's tcp_bbr.c (see below): rate and
			   * cwnd from a model of the path (bottleneck bandwidth,
			   * min RTT) built from rate samples; loss is no signal */
};

/*
 * BBR (GSO_CC_BBR), behaviour as Linux net/ipv4/tcp_bbr.c (BBR v1):
 *  - bw = windowed max of delivery-rate samples over 10 round trips
 *    (app-limited samples only when they raise it); min_rtt = windowed
 *    min over 10 s;
 *  - STARTUP paces at 2/ln 2 x bw until bw has not grown by 25 % for 3
 *    rounds, DRAIN at ln 2 / 2 until in flight <= BDP, then PROBE_BW
 *    cycles the pacing gain through 5/4, 3/4 and six phases of 1 (each
 *    about a min_rtt, starting at a random phase other than 3/4);
 *  - PROBE_RTT when min_rtt has not been re-measured for 10 s: cwnd 4
 *    segments for max(200 ms, one round), then back;
 *  - pacing rate = gain x bw x 99 % (the 1 % margin), cwnd = 2 x BDP +
 *    the ACK-aggregation allowance (extra_acked) + 3 bursts, rounded to
 *    even; on entering recovery cwnd follows packet conservation for one
 *    round and is restored when recovery ends: loss cuts nothing else;
 *  - gso_cc__min_burst_segs(): 1 segment below 1.2 Mbit/s, else 2.
 * Left out: the long-term ("policer") bandwidth model (lt_bw) and the
 * EDT correction of in-flight (bbr_packets_in_net_at_edt), which needs
 * the pacing layer's next departure time.
 *
 * BBR needs gso_cc_ack.rs on every ACK (gso_flowq__rate_sample() gives
 * it) and GSO_CC_ACK_RECOVERY while the transport is in loss recovery;
 * without a sample an ACK only feeds the RTT estimator.  Reno and CUBIC
 * ignore both.
 */

/*
 * A delivery-rate sample, made per ACK (IETF draft "Delivery Rate
 * Estimation", draft-cheng-iccrg-delivery-rate-estimation; Linux
 * tcp_rate.c): of the packets this ACK delivered (cumulatively or by
 * SACK, not delivered before), take the one sent last; the rate is the
 * data delivered between its send and this ACK over the longer of the
 * send and ACK intervals.  Payload bytes, ns.  Declare with GSO_OPTS.
 */
struct gso_rate_sample {
	size_t sz;
	uint64_t delivered;       /* bytes delivered over interval_ns; 0 = no valid sample */
	uint64_t interval_ns;     /* max(snd_interval_ns, ack_interval_ns); 0 = no valid sample
				   * (no packet timed, or shorter than the min RTT) */
	uint64_t snd_interval_ns; /* send time of that packet - send time of the first
				   * packet of its flight (when the prior delivery was acked) */
	uint64_t ack_interval_ns; /* this ACK - the delivery before that packet was sent */
	uint64_t prior_delivered; /* delivered_total when that packet was sent */
	uint64_t delivered_total; /* bytes delivered since the start, this ACK included */
	uint64_t rtt_ns;          /* RTT sample of this ACK (0 = none) */
	uint32_t acked_sacked;    /* bytes this ACK newly delivered (cumulative + SACK) */
	uint32_t losses;          /* bytes this ACK newly marked lost */
	uint32_t prior_in_flight; /* bytes in flight before this ACK */
	uint32_t flags;           /* GSO_RATE_F_* */
	size_t :0;
};
#define gso_rate_sample__last_field flags

/* The packet was sent while the sender had nothing more to send: the rate
 * is a lower bound of what the path carries, not a measure of it. */
#define GSO_RATE_F_APP_LIMITED (1u << 0)
/* That packet was a retransmission. */
#define GSO_RATE_F_RETRANS (1u << 1)

#define GSO_CC_DEF_INIT_CWND 10u  /* RFC 6928 / Linux TCP_INIT_CWND */
#define GSO_CC_DEF_SS_RATIO 200u  /* tcp_pacing_ss_ratio */
#define GSO_CC_DEF_CA_RATIO 120u  /* tcp_pacing_ca_ratio */
#define GSO_CC_MIN_CWND 2u        /* floor after a loss, as Linux */

struct gso_cc_opts {
	size_t sz;
	uint32_t algo;       /* enum gso_cc_algo */
	uint32_t mss;        /* payload bytes per segment; required, 1..65535 */
	uint32_t hdr_len;    /* wire header bytes per segment, 0..GSO_MAX_HDR_LEN */
	uint32_t init_cwnd;  /* 0 = GSO_CC_DEF_INIT_CWND */
	uint32_t max_cwnd;   /* clamp (0 = none, i.e. UINT32_MAX) */
	uint32_t ss_ratio;   /* percent, 0 = 200; 1..10000 */
	uint32_t ca_ratio;   /* percent, 0 = 120; 1..10000 */
	uint64_t max_rate;   /* pacing rate cap, wire bytes/s (0 = none; SO_MAX_PACING_RATE) */
	uint64_t min_rtt_win_ns; /* window of the RTT minimum (0 = 300 s) */
	uint32_t pacing_shift;   /* BBR: bursts are rate >> pacing_shift bytes, as the pacer's
				  * (0 = GSO_BURST_DEF_PACING_SHIFT); 1..31 */
	uint32_t seed;           /* BBR: seed of the random PROBE_BW start phase (0 = from
				  * the object's address) */
	size_t :0;
};
#define gso_cc_opts__last_field seed

/* One ACK, as the transport saw it.  Declare with GSO_OPTS. */
struct gso_cc_ack {
	size_t sz;
	uint64_t now_ns;      /* when the ACK was processed */
	uint64_t rtt_ns;      /* RTT sample it gives (0 = none, e.g. a retransmit) */
	uint32_t acked_segs;  /* segments newly acknowledged (cumulative or SACK) */
	uint32_t packets_out; /* segments still in flight after it */
	uint32_t flags;       /* GSO_CC_ACK_* */
	const struct gso_rate_sample *rs; /* this ACK's delivery-rate sample (BBR; NULL = none) */
	size_t :0;
};
#define gso_cc_ack__last_field rs

/*
 * The sender was not using the whole cwnd (application- or receive-window
 * limited): do not grow cwnd on this ACK (Linux tcp_is_cwnd_limited).
 */
#define GSO_CC_ACK_NOT_CWND_LIMITED (1u << 0)
/*
 * The transport is in loss recovery after this ACK (fast recovery, or
 * after a timeout until what was outstanding then is acknowledged; Linux
 * CA_Recovery / CA_Loss).  BBR conserves packets in the first round of
 * recovery and restores its cwnd when the flag clears.
 */
#define GSO_CC_ACK_RECOVERY (1u << 1)

struct gso_cc_state {
	size_t sz;
	uint32_t cwnd;        /* segments */
	uint32_t ssthresh;    /* segments; UINT32_MAX before the first loss */
	uint64_t pacing_rate; /* wire bytes/s, or GSO_RATE_UNPACED */
	uint64_t srtt_ns, rttvar_ns, min_rtt_ns, rto_ns;
	uint64_t recovery_start_ns; /* losses of segments sent before this are old news */
	uint32_t in_slow_start; /* 1 while cwnd < ssthresh */
	uint32_t loss_events;   /* reductions made (losses + timeouts) */
	size_t :0;
};
#define gso_cc_state__last_field loss_events

struct gso_cc;

/* Bytes of caller memory gso_cc__init() needs. */
GSO_API size_t gso_cc__mem_size(void);

/*
 * Build a controller in caller memory (8-byte aligned, at least
 * gso_cc__mem_size() bytes; nothing else is allocated).  `o` is required
 * (mss).  Returns 0 and *out, -EINVAL (NULL, bad sz/tail, mss 0 or >
 * 65535, unknown algo, a value out of range) or -ENOSPC (len too small).
 */
GSO_API int gso_cc__init(struct gso_cc **out, void *mem, size_t len, const struct gso_cc_opts *o);

/* Same in one allocation made here; -ENOMEM if it fails. */
GSO_API int gso_cc__create(struct gso_cc **out, const struct gso_cc_opts *o);

/* Free one from gso_cc__create() (no-op for gso_cc__init() memory, and NULL). */
GSO_API void gso_cc__destroy(struct gso_cc *cc);

/*
 * An ACK: fold the RTT sample in, grow cwnd (slow start: + acked up to
 * ssthresh; then Reno +1 per cwnd acked, or CUBIC's curve), recompute the
 * pacing rate.  For one srtt after a loss reduction cwnd does not grow (those
 * ACKs cover data sent before the cut; Linux does not grow in Recovery).
 * BBR instead updates its model from a->rs and sets cwnd and rate from it
 * (bbr_main).  Returns 0, or -EINVAL (NULL, bad sz/tail in `a` or a->rs,
 * unknown flag).
 */
GSO_API int gso_cc__on_ack(struct gso_cc *cc, const struct gso_cc_ack *a);

/*
 * A segment sent at sent_ns was found lost (3 duplicate ACKs, SACK, RACK)
 * at now_ns.  The first loss of a window reduces: ssthresh = max(cwnd *
 * beta, 2) (beta 1/2 Reno, 0.7 CUBIC), cwnd = ssthresh, and recovery
 * starts at now_ns; losses of segments sent before that are the same
 * event and ignored (RFC 9002 style, no sequence numbers needed).
 * BBR cuts nothing here: it saves cwnd, to restore it when recovery ends,
 * and its next ACK applies packet conservation (returns 1 for a new loss
 * event all the same).
 * Returns 1 if cwnd was reduced, 0 if ignored, -EINVAL on NULL.
 */
GSO_API int gso_cc__on_loss(struct gso_cc *cc, uint64_t now_ns, uint64_t sent_ns);

/*
 * Retransmission timeout at now_ns: ssthresh as for a loss, cwnd = 1,
 * slow start again.  BBR: cwnd = 1, growing by what is delivered, and the
 * cwnd from before comes back when GSO_CC_ACK_RECOVERY clears; its model
 * is kept.  Returns 0, -EINVAL on NULL.
 */
GSO_API int gso_cc__on_rto(struct gso_cc *cc, uint64_t now_ns);

/*
 * The transport sends again after everything it sent was acknowledged
 * (nothing in flight; Linux CA_EVENT_TX_START).  BBR, when the flow was
 * app-limited: paces at 1 x bw in PROBE_BW instead of probing, restarts
 * its ACK-aggregation epoch and may end PROBE_RTT.  Reno and CUBIC do
 * nothing.  Returns 0, -EINVAL on NULL.
 */
GSO_API int gso_cc__on_tx_start(struct gso_cc *cc, uint64_t now_ns, bool app_limited);

/*
 * The segment size changed (the path MTU moved: gso_flowq__set_mss):
 * cwnd stays in segments, as Linux keeps snd_cwnd in packets across
 * tcp_sync_mss, and the pacing rate and BBR's windows are computed at
 * the new size from the next ACK on.  Returns 0, -EINVAL (NULL, mss 0 or
 * > 65535).
 */
GSO_API int gso_cc__set_mss(struct gso_cc *cc, uint32_t mss);

/*
 * The flow's device sends in aggregates of about `bytes` (learned by
 * struct gso_aggr, <gso/pacer.h> section 3; 0: it does not).  BBR's
 * quantization budget (room for full bursts in the sender, the device and
 * the receiver's GRO, Linux's bbr_quantization_budget) then also holds
 * two of them, the one on the air and the next: a window of twice
 * bw x min_rtt, with a min RTT that the smallest aggregates keep short,
 * does not cover a device that holds data for an interval before sending
 * it.  Applies from the next ACK on.  Reno and CUBIC ignore it (their
 * windows grow to what the path holds).  Returns 0, -EINVAL on NULL.
 */
GSO_API int gso_cc__set_dev_quantum(struct gso_cc *cc, uint32_t bytes);

/* Current state, filled up to st->sz.  Returns 0, -EINVAL (NULL, sz too small). */
GSO_API int gso_cc__state(const struct gso_cc *cc, struct gso_cc_state *st);

/*
 * The smallest burst the algorithm wants (gso_burst_opts.min_segs): BBR 1
 * segment below 1.2 Mbit/s of pacing rate, else 2 (bbr_min_tso_segs);
 * 0 for Reno and CUBIC (the pacer's default).  0 on NULL.
 */
GSO_API uint32_t gso_cc__min_burst_segs(const struct gso_cc *cc);

enum gso_bbr_mode {
	GSO_BBR_STARTUP = 0,
	GSO_BBR_DRAIN = 1,
	GSO_BBR_PROBE_BW = 2,
	GSO_BBR_PROBE_RTT = 3,
};

/* Gains are fixed point: GSO_BBR_UNIT is 1.0 (tcp_bbr.c's BBR_UNIT). */
#define GSO_BBR_UNIT 256u

/* BBR's model.  Declare with GSO_OPTS. */
struct gso_cc_bbr_info {
	size_t sz;
	uint32_t mode;           /* enum gso_bbr_mode */
	uint32_t cycle_idx;      /* PROBE_BW phase, 0..7 (0: gain 5/4, 1: 3/4) */
	uint64_t bw;             /* bottleneck bandwidth estimate, payload bytes/s */
	uint64_t min_rtt_ns;     /* min RTT estimate (0 = none yet) */
	uint32_t pacing_gain;    /* GSO_BBR_UNIT = 1.0 */
	uint32_t cwnd_gain;
	uint32_t full_bw_reached; /* 1: STARTUP found the pipe full */
	uint32_t extra_acked;    /* ACK-aggregation allowance now, segments */
	uint64_t rounds;         /* packet-timed round trips so far */
	uint64_t probe_rtts;     /* PROBE_RTT entries so far */
	uint32_t target_cwnd;    /* cwnd the model aims at (before PROBE_RTT's cap) */
	uint32_t prior_cwnd;     /* cwnd saved at recovery or PROBE_RTT entry */
	uint64_t min_rtt_stamp_ns; /* when min_rtt_ns was taken or PROBE_RTT last ended: the
				    * next PROBE_RTT is due 10 s after it */
	size_t :0;
};
#define gso_cc_bbr_info__last_field min_rtt_stamp_ns

/* Fill `bi` up to bi->sz.  Returns 0, -EINVAL (NULL, sz too small), -EOPNOTSUPP (not BBR). */
GSO_API int gso_cc__bbr_info(const struct gso_cc *cc, struct gso_cc_bbr_info *bi);

/* Shorthands for the two numbers the pacer needs; 0 on NULL. */
GSO_API uint32_t gso_cc__cwnd(const struct gso_cc *cc);
GSO_API uint64_t gso_cc__pacing_rate(const struct gso_cc *cc);

#ifdef __cplusplus
}
#endif
#endif
