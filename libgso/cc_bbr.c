/*
 * BBR v1: the path model (bottleneck bandwidth and min RTT) and the two
 * outputs it drives, pacing rate and cwnd.  The behaviour and every
 * constant follow Linux net/ipv4/tcp_bbr.c (the reference named in
 * gso/cc.h); the units differ: bandwidth is payload bytes per ns scaled by
 * 2^BBR_BW_SCALE (Linux: packets per us), delivered counts are bytes, times
 * are ns.  Windows stay in segments of the controller's mss.
 *
 * Left out on purpose (see gso/cc.h): the long-term policer model and the
 * EDT correction of in-flight data.
 */
#include <errno.h>
#include "cc_internal.h"
#include "opts_internal.h"

/* Fixed point: bandwidth in bytes/ns << 24 (tcp_bbr.c BW_SCALE), gains in 1/256 (BBR_SCALE). */
#define BBR_BW_SCALE 24
#define BBR_SCALE 8
#define BBR_UNIT GSO_BBR_UNIT

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

/* PROBE_BW gain cycle: 8 phases (tcp_bbr.c CYCLE_LEN). */
#define BBR_CYCLE_LEN 8u
/* Max filter of the bandwidth: 10 round trips (bbr_bw_rtts = CYCLE_LEN + 2). */
#define BBR_BW_RTTS (BBR_CYCLE_LEN + 2)
/* Min RTT filter: 10 s (bbr_min_rtt_win_sec). */
#define BBR_MIN_RTT_WIN_NS (10 * NS_PER_S)
/* Time in PROBE_RTT at the minimum cwnd: 200 ms (bbr_probe_rtt_mode_ms). */
#define BBR_PROBE_RTT_NS (200 * NS_PER_MS)
/* Below this pacing rate bursts are one segment: 1.2 Mbit/s (bbr_min_tso_rate). */
#define BBR_MIN_TSO_RATE (1200000ull / 8)
/* Pace 1 % below the estimated bandwidth (bbr_pacing_margin_percent). */
#define BBR_PACING_MARGIN_PCT 1u
/* 2/ln 2, the smallest gain that doubles the sending rate each round (bbr_high_gain). */
#define BBR_HIGH_GAIN (BBR_UNIT * 2885 / 1000 + 1)
/* Its inverse drains STARTUP's queue in about one round (bbr_drain_gain). */
#define BBR_DRAIN_GAIN (BBR_UNIT * 1000 / 2885)
/* Steady-state cwnd: 2 x BDP, room for delayed and stretched ACKs (bbr_cwnd_gain). */
#define BBR_CWND_GAIN (BBR_UNIT * 2)
/* Random start phase among 7 of the 8 (never the 3/4 phase) (bbr_cycle_rand). */
#define BBR_CYCLE_RAND 7u
/* Keep 4 segments in flight: two 2-segment delayed-ACK pairs (bbr_cwnd_min_target). */
#define BBR_CWND_MIN_TARGET 4u
/* STARTUP ends after 3 rounds without 25 % bandwidth growth (bbr_full_bw_thresh, _cnt). */
#define BBR_FULL_BW_THRESH (BBR_UNIT * 5 / 4)
#define BBR_FULL_BW_CNT 3u
/* ACK aggregation: gain 1, max over 5-10 rounds, epoch reset after 2^20 segments,
 * allowance at most 100 ms of bandwidth (bbr_extra_acked_*). */
#define BBR_EXTRA_ACKED_GAIN BBR_UNIT
#define BBR_EXTRA_ACKED_WIN_RTTS 5u
#define BBR_ACK_EPOCH_RESET_SEGS (1ull << 20)
#define BBR_EXTRA_ACKED_MAX_NS (100 * NS_PER_MS)
/* Linux's TCP_INIT_CWND: the BDP before any RTT sample. */
#define BBR_INIT_CWND 10u
/* Largest burst BBR budgets for: GSO_MAX_SIZE less headers (bbr_tso_segs_goal). */
#define BBR_TSO_MAX_BYTES (65536u - 1 - 320)

static const uint32_t bbr_pacing_gain[BBR_CYCLE_LEN] = {
	BBR_UNIT * 5 / 4, /* probe for more bandwidth */
	BBR_UNIT * 3 / 4, /* drain what the probe queued, yield to others */
	BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, /* cruise */
};

/* ---- windowed max filter ---------------------------------------------- */

static uint64_t mm_get(const struct cc_bbr *b)
{
	return b->bw[0].v;
}

static void mm_reset(struct cc_bbr *b, uint64_t t, uint64_t v)
{
	for (int i = 0; i < 3; i++)
		b->bw[i] = (struct bbr_minmax_sample){ .t = t, .v = v };
}

/*
 * Keep the best, second-best and third-best samples of the window, each
 * from a later part of it, so that when the best ages out the next is
 * already known.
 */
static void mm_running_max(struct cc_bbr *b, uint64_t win, uint64_t t, uint64_t v)
{
	struct bbr_minmax_sample s = { .t = t, .v = v }, *m = b->bw;
	uint64_t dt;

	if (v >= m[0].v || t - m[2].t > win) {
		mm_reset(b, t, v);
		return;
	}
	if (v >= m[1].v)
		m[2] = m[1] = s;
	else if (v >= m[2].v)
		m[2] = s;
	dt = t - m[0].t;
	if (dt > win) {
		m[0] = m[1];
		m[1] = m[2];
		m[2] = s;
		if (t - m[0].t > win) {
			m[0] = m[1];
			m[1] = m[2];
			m[2] = s;
		}
	} else if (m[1].t == m[0].t && dt > win / 4) {
		m[2] = m[1] = s; /* a quarter of the window gone: take a second choice */
	} else if (m[2].t == m[1].t && dt > win / 2) {
		m[2] = s;        /* half of it: a third choice */
	}
}

/* ---- small helpers ---------------------------------------------------- */

static uint32_t rng_next(struct cc_bbr *b)
{
	uint32_t x = b->rng;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	b->rng = x;
	return x;
}

static uint32_t bytes_to_segs(const struct gso_cc *cc, uint64_t bytes)
{
	uint64_t s = (bytes + cc->mss - 1) / cc->mss;

	return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

/* Payload bytes/ns << 24 to wire bytes/s with a gain and the 1 % margin (bbr_rate_bytes_per_sec). */
static uint64_t bw_to_rate(const struct gso_cc *cc, uint64_t bw, uint32_t gain)
{
	unsigned __int128 r = (unsigned __int128)bw * gain * (cc->mss + cc->hdr_len);

	r *= NS_PER_S / 100 * (100 - BBR_PACING_MARGIN_PCT);
	r >>= BBR_SCALE + BBR_BW_SCALE;
	r /= cc->mss;
	if (r < 1)
		r = 1;
	if (r > GSO_RATE_UNPACED)
		r = GSO_RATE_UNPACED;
	if (cc->max_rate && r > cc->max_rate)
		r = cc->max_rate;
	return (uint64_t)r;
}

uint32_t gsoi_cc_bbr_min_tso_segs(const struct gso_cc *cc)
{
	return cc->pacing_rate < BBR_MIN_TSO_RATE ? 1 : 2;
}

/* Segments per burst BBR budgets for (bbr_tso_segs_goal). */
static uint32_t tso_segs_goal(const struct gso_cc *cc)
{
	uint64_t bytes = cc->pacing_rate >> cc->bbr.pacing_shift;
	uint32_t segs, min = gsoi_cc_bbr_min_tso_segs(cc);

	if (bytes > BBR_TSO_MAX_BYTES)
		bytes = BBR_TSO_MAX_BYTES;
	segs = (uint32_t)(bytes / cc->mss);
	return segs > min ? segs : min;
}

/* ceil(bw * min_rtt * gain), segments; the initial window before any RTT (bbr_bdp). */
static uint32_t bdp(const struct gso_cc *cc, uint64_t bw, uint32_t gain)
{
	const struct cc_bbr *b = &cc->bbr;
	unsigned __int128 w, unit = ((unsigned __int128)cc->mss) << (BBR_BW_SCALE + BBR_SCALE);

	if (b->min_rtt_ns == UINT64_MAX)
		return BBR_INIT_CWND;
	w = (unsigned __int128)bw * b->min_rtt_ns * gain;
	w = (w + unit - 1) / unit;
	return w > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)w;
}

/*
 * Room for full bursts in the sender, the device and the receiver's GRO
 * (bbr_quantization_budget), and for two of the device's aggregates when
 * it sends in them (gso_cc__set_dev_quantum).
 */
static uint32_t quantization_budget(const struct gso_cc *cc, uint32_t cwnd)
{
	const struct cc_bbr *b = &cc->bbr;

	cwnd += 3 * tso_segs_goal(cc) + 2 * (cc->dev_quantum / cc->mss);
	cwnd = (cwnd + 1) & ~1u; /* even: fewer delayed ACKs */
	if (b->mode == GSO_BBR_PROBE_BW && b->cycle_idx == 0)
		cwnd += 2; /* lets the probe phase get above the BDP even when it is tiny */
	return cwnd;
}

static uint32_t inflight(const struct gso_cc *cc, uint64_t bw, uint32_t gain)
{
	return quantization_budget(cc, bdp(cc, bw, gain));
}

/* In flight when the next burst leaves (bbr_packets_in_net_at_edt, without the EDT lag). */
static uint32_t in_net_at_edt(const struct gso_cc *cc, uint32_t inflight_now)
{
	if (cc->bbr.pacing_gain > BBR_UNIT)
		inflight_now += tso_segs_goal(cc); /* the burst about to leave */
	return inflight_now;
}

static void save_cwnd(struct gso_cc *cc)
{
	struct cc_bbr *b = &cc->bbr;

	if (b->prev_ca_state < BBR_CA_RECOVERY && b->mode != GSO_BBR_PROBE_RTT)
		b->prior_cwnd = cc->cwnd; /* good enough to return to */
	else if (cc->cwnd > b->prior_cwnd)
		b->prior_cwnd = cc->cwnd; /* recovery or PROBE_RTT cut it: keep the larger */
}

/* ---- modes ------------------------------------------------------------ */

static void advance_cycle_phase(struct cc_bbr *b)
{
	b->cycle_idx = (b->cycle_idx + 1) & (BBR_CYCLE_LEN - 1);
	b->cycle_ns = b->delivered_ns;
}

static void reset_probe_bw_mode(struct cc_bbr *b)
{
	b->mode = GSO_BBR_PROBE_BW;
	b->cycle_idx = BBR_CYCLE_LEN - 1 - rng_next(b) % BBR_CYCLE_RAND;
	advance_cycle_phase(b);
}

static void reset_mode(struct cc_bbr *b)
{
	if (!b->full_bw_reached)
		b->mode = GSO_BBR_STARTUP;
	else
		reset_probe_bw_mode(b);
}

static void init_pacing_rate_from_rtt(struct gso_cc *cc)
{
	uint64_t rtt = NS_PER_MS, bw; /* nominal 1 ms before any sample */

	if (cc->rtt.srtt_ns) {
		rtt = cc->rtt.srtt_ns;
		cc->bbr.has_seen_rtt = true;
	}
	bw = (uint64_t)((((unsigned __int128)cc->cwnd * cc->mss) << BBR_BW_SCALE) / rtt);
	cc->pacing_rate = bw_to_rate(cc, bw, BBR_HIGH_GAIN);
}

static void set_pacing_rate(struct gso_cc *cc, uint64_t bw, uint32_t gain)
{
	uint64_t rate = bw_to_rate(cc, bw, gain);

	if (!cc->bbr.has_seen_rtt && cc->rtt.srtt_ns)
		init_pacing_rate_from_rtt(cc);
	/* Before the pipe is full the rate only rises: a low early sample is no news. */
	if (bw && (cc->bbr.full_bw_reached || rate > cc->pacing_rate))
		cc->pacing_rate = rate;
}

static void check_probe_rtt_done(struct gso_cc *cc, uint64_t now)
{
	struct cc_bbr *b = &cc->bbr;

	if (!b->probe_rtt_done_set || now <= b->probe_rtt_done_ns)
		return;
	b->min_rtt_stamp_ns = now; /* wait a whole window before the next PROBE_RTT */
	if (b->prior_cwnd > cc->cwnd)
		cc->cwnd = b->prior_cwnd;
	reset_mode(b);
}

/* ---- the model -------------------------------------------------------- */

static bool sample_valid(const struct gso_rate_sample *rs)
{
	return rs->delivered && rs->interval_ns;
}

/*
 * Linux marks the socket app-limited on every ACK in PROBE_RTT, so that
 * what is sent at 4 segments, up to the last such ACK's delivered + in
 * flight, makes app-limited samples, also those that arrive after
 * PROBE_RTT ended.  The controller cannot mark the transport's packets;
 * it keeps the same range of delivered counts instead (probe_rtt_lo..hi,
 * until the next PROBE_RTT) and treats samples of packets sent in it so.
 */
static bool sample_app_limited(const struct cc_bbr *b, const struct gso_rate_sample *rs)
{
	if (b->probe_rtt_app && rs->prior_delivered >= b->probe_rtt_lo &&
	    rs->prior_delivered <= b->probe_rtt_hi)
		return true;
	return rs->flags & GSO_RATE_F_APP_LIMITED;
}

static void update_bw(struct gso_cc *cc, const struct gso_rate_sample *rs)
{
	struct cc_bbr *b = &cc->bbr;
	uint64_t bw;

	b->round_start = false;
	if (!sample_valid(rs))
		return;
	/* A round ends when a packet sent after the last round's end is delivered. */
	if (rs->prior_delivered >= b->next_rtt_delivered) {
		b->next_rtt_delivered = rs->delivered_total;
		b->rtt_cnt++;
		b->round_start = true;
		b->packet_conservation = false;
	}
	bw = (uint64_t)(((unsigned __int128)rs->delivered << BBR_BW_SCALE) / rs->interval_ns);
	/* App-limited samples only count when they show more than the model knows. */
	if (!sample_app_limited(b, rs) || bw >= mm_get(b))
		mm_running_max(b, BBR_BW_RTTS, b->rtt_cnt, bw);
}

static void update_ack_aggregation(struct gso_cc *cc, const struct gso_rate_sample *rs)
{
	struct cc_bbr *b = &cc->bbr;
	uint64_t expected, extra, cap;

	if (!rs->acked_sacked || !sample_valid(rs))
		return;
	if (b->round_start) {
		if (b->extra_acked_win_rtts < 0x1f)
			b->extra_acked_win_rtts++;
		if (b->extra_acked_win_rtts >= BBR_EXTRA_ACKED_WIN_RTTS) {
			b->extra_acked_win_rtts = 0;
			b->extra_acked_win_idx ^= 1;
			b->extra_acked[b->extra_acked_win_idx] = 0;
		}
	}
	/* What the model says should have been delivered since the epoch began. */
	expected = (uint64_t)(((unsigned __int128)mm_get(b) * (b->delivered_ns - b->ack_epoch_ns)) >>
			      BBR_BW_SCALE);
	/* ACKs no faster than the model, or a very old epoch: start a new one. */
	if (b->ack_epoch_acked <= expected ||
	    b->ack_epoch_acked + rs->acked_sacked >= BBR_ACK_EPOCH_RESET_SEGS * cc->mss) {
		b->ack_epoch_acked = 0;
		b->ack_epoch_ns = b->delivered_ns;
		expected = 0;
	}
	b->ack_epoch_acked += rs->acked_sacked;
	cap = (BBR_ACK_EPOCH_RESET_SEGS - 1) * cc->mss;
	if (b->ack_epoch_acked > cap)
		b->ack_epoch_acked = cap;
	extra = b->ack_epoch_acked - expected;
	if (extra > (uint64_t)cc->cwnd * cc->mss)
		extra = (uint64_t)cc->cwnd * cc->mss;
	if (extra > b->extra_acked[b->extra_acked_win_idx])
		b->extra_acked[b->extra_acked_win_idx] = extra;
}

/* Segments of ACK-aggregation allowance, once the pipe is known full (bbr_ack_aggregation_cwnd). */
static uint32_t ack_aggregation_cwnd(const struct gso_cc *cc)
{
	const struct cc_bbr *b = &cc->bbr;
	uint64_t aggr, max_aggr;

	if (!b->full_bw_reached)
		return 0;
	max_aggr = (uint64_t)(((unsigned __int128)mm_get(b) * BBR_EXTRA_ACKED_MAX_NS) >> BBR_BW_SCALE);
	aggr = b->extra_acked[0] > b->extra_acked[1] ? b->extra_acked[0] : b->extra_acked[1];
	aggr = aggr * BBR_EXTRA_ACKED_GAIN >> BBR_SCALE;
	if (aggr > max_aggr)
		aggr = max_aggr;
	return (uint32_t)(aggr / cc->mss);
}

static bool is_next_cycle_phase(struct gso_cc *cc, const struct gso_rate_sample *rs)
{
	struct cc_bbr *b = &cc->bbr;
	bool full_length = b->delivered_ns - b->cycle_ns > b->min_rtt_ns;
	uint32_t in_net;

	if (b->pacing_gain == BBR_UNIT)
		return full_length;
	in_net = in_net_at_edt(cc, bytes_to_segs(cc, rs->prior_in_flight));
	/* Probing: until in flight reaches gain x BDP, unless losses say it will not fit. */
	if (b->pacing_gain > BBR_UNIT)
		return full_length && (rs->losses || in_net >= inflight(cc, mm_get(b), b->pacing_gain));
	/* Draining: until the queue the probe made is gone, or a min RTT passed. */
	return full_length || in_net <= inflight(cc, mm_get(b), BBR_UNIT);
}

static void check_full_bw_reached(struct gso_cc *cc, const struct gso_rate_sample *rs)
{
	struct cc_bbr *b = &cc->bbr;

	if (b->full_bw_reached || !b->round_start || sample_app_limited(b, rs))
		return;
	if (mm_get(b) >= (b->full_bw * BBR_FULL_BW_THRESH) >> BBR_SCALE) {
		b->full_bw = mm_get(b);
		b->full_bw_cnt = 0;
		return;
	}
	b->full_bw_reached = ++b->full_bw_cnt >= BBR_FULL_BW_CNT;
}

static void check_drain(struct gso_cc *cc, uint32_t packets_out)
{
	struct cc_bbr *b = &cc->bbr;

	if (b->mode == GSO_BBR_STARTUP && b->full_bw_reached) {
		b->mode = GSO_BBR_DRAIN;
		cc->ssthresh = inflight(cc, mm_get(b), BBR_UNIT);
	}
	if (b->mode == GSO_BBR_DRAIN && in_net_at_edt(cc, packets_out) <= inflight(cc, mm_get(b), BBR_UNIT))
		reset_probe_bw_mode(b);
}

static void update_min_rtt(struct gso_cc *cc, const struct gso_rate_sample *rs, uint64_t now,
			   uint32_t packets_out)
{
	struct cc_bbr *b = &cc->bbr;
	bool expired;

	if (!b->min_rtt_stamp_set) {
		b->min_rtt_stamp_ns = now;
		b->min_rtt_stamp_set = true;
	}
	expired = now > b->min_rtt_stamp_ns + BBR_MIN_RTT_WIN_NS;
	if (rs->rtt_ns && (rs->rtt_ns < b->min_rtt_ns || expired)) {
		b->min_rtt_ns = rs->rtt_ns;
		b->min_rtt_stamp_ns = now;
	}
	if (expired && !b->idle_restart && b->mode != GSO_BBR_PROBE_RTT) {
		b->mode = GSO_BBR_PROBE_RTT;
		save_cwnd(cc);
		b->probe_rtt_done_set = false;
		b->probe_rtts++;
		b->probe_rtt_app = true;
		b->probe_rtt_lo = rs->delivered_total;
	}
	if (b->mode == GSO_BBR_PROBE_RTT) {
		/* What is sent now is sent at 4 segments: its samples measure us, not the path. */
		b->probe_rtt_hi = rs->delivered_total + (uint64_t)packets_out * cc->mss;
		if (!b->probe_rtt_done_set && packets_out <= BBR_CWND_MIN_TARGET) {
			/* At the minimum for max(200 ms, one round). */
			b->probe_rtt_done_ns = now + BBR_PROBE_RTT_NS;
			b->probe_rtt_done_set = true;
			b->probe_rtt_round_done = false;
			b->next_rtt_delivered = rs->delivered_total;
		} else if (b->probe_rtt_done_set) {
			if (b->round_start)
				b->probe_rtt_round_done = true;
			if (b->probe_rtt_round_done)
				check_probe_rtt_done(cc, now);
		}
	}
	if (rs->delivered)
		b->idle_restart = false;
}

static void update_gains(struct cc_bbr *b)
{
	switch (b->mode) {
	case GSO_BBR_STARTUP:
		b->pacing_gain = BBR_HIGH_GAIN;
		b->cwnd_gain = BBR_HIGH_GAIN;
		break;
	case GSO_BBR_DRAIN:
		b->pacing_gain = BBR_DRAIN_GAIN; /* slow down to drain the queue */
		b->cwnd_gain = BBR_HIGH_GAIN;    /* but keep cwnd */
		break;
	case GSO_BBR_PROBE_BW:
		b->pacing_gain = bbr_pacing_gain[b->cycle_idx];
		b->cwnd_gain = BBR_CWND_GAIN;
		break;
	default:
		b->pacing_gain = BBR_UNIT;
		b->cwnd_gain = BBR_UNIT;
		break;
	}
}

/* ---- cwnd --------------------------------------------------------------- */

/*
 * Loss recovery (bbr_set_cwnd_to_recover_or_restore): lost segments come
 * off cwnd; the first round of recovery sends one segment per segment
 * delivered; when recovery ends, the cwnd from before it comes back.
 */
static bool recover_or_restore(struct gso_cc *cc, const struct gso_rate_sample *rs, uint32_t acked,
			       uint32_t packets_out, uint32_t *new_cwnd)
{
	struct cc_bbr *b = &cc->bbr;
	uint32_t prev = b->prev_ca_state, state = b->ca_state, cwnd = cc->cwnd;
	uint32_t losses = rs->losses ? bytes_to_segs(cc, rs->losses) : 0;

	if (losses)
		cwnd = cwnd > losses ? cwnd - losses : 1;
	if (state == BBR_CA_RECOVERY && prev != BBR_CA_RECOVERY) {
		b->packet_conservation = true;
		b->next_rtt_delivered = rs->delivered_total; /* this round starts now */
		cwnd = packets_out + acked; /* what the app, TSQ or deferral left unused goes */
	} else if (prev >= BBR_CA_RECOVERY && state < BBR_CA_RECOVERY) {
		if (b->prior_cwnd > cwnd)
			cwnd = b->prior_cwnd;
		b->packet_conservation = false;
	}
	b->prev_ca_state = state;
	if (b->packet_conservation) {
		*new_cwnd = cwnd > packets_out + acked ? cwnd : packets_out + acked;
		return true;
	}
	*new_cwnd = cwnd;
	return false;
}

static void set_cwnd(struct gso_cc *cc, const struct gso_rate_sample *rs, uint32_t acked,
		     uint32_t packets_out, uint64_t bw, uint32_t gain)
{
	struct cc_bbr *b = &cc->bbr;
	uint32_t cwnd = cc->cwnd, target;

	if (!acked)
		goto done;
	if (recover_or_restore(cc, rs, acked, packets_out, &cwnd))
		goto done;
	target = bdp(cc, bw, gain) + ack_aggregation_cwnd(cc);
	target = quantization_budget(cc, target);
	b->target_cwnd = target;
	/* Grow toward the target like slow start; above it, come down only once the pipe was full. */
	if (b->full_bw_reached)
		cwnd = cwnd + acked < target ? cwnd + acked : target;
	else if (cwnd < target || rs->delivered_total < (uint64_t)BBR_INIT_CWND * cc->mss)
		cwnd += acked;
	if (cwnd < BBR_CWND_MIN_TARGET)
		cwnd = BBR_CWND_MIN_TARGET;
done:
	cc->cwnd = cwnd < cc->max_cwnd ? cwnd : cc->max_cwnd;
	if (b->mode == GSO_BBR_PROBE_RTT && cc->cwnd > BBR_CWND_MIN_TARGET)
		cc->cwnd = BBR_CWND_MIN_TARGET; /* drain the queue so that min RTT shows */
}

/* ---- events ------------------------------------------------------------- */

void gsoi_cc_bbr_init(struct gso_cc *cc, uint32_t pacing_shift, uint32_t seed)
{
	struct cc_bbr *b = &cc->bbr;

	memset(b, 0, sizeof(*b));
	b->min_rtt_ns = UINT64_MAX;
	b->pacing_shift = pacing_shift;
	if (!seed)
		seed = (uint32_t)((uintptr_t)cc >> 4) * 2654435761u;
	b->rng = seed ? seed : 1;
	b->mode = GSO_BBR_STARTUP;
	update_gains(b);
	init_pacing_rate_from_rtt(cc);
}

void gsoi_cc_bbr_ack(struct gso_cc *cc, const struct gso_cc_ack *a, const struct gso_rate_sample *in)
{
	struct cc_bbr *b = &cc->bbr;
	struct gso_rate_sample rs = { .sz = sizeof(rs) };
	uint64_t now = GSO_OPTS_GET(a, now_ns, (uint64_t)0);
	uint32_t flags = GSO_OPTS_GET(a, flags, 0u), acked = 0, state;

	if (in) {
		memcpy(&rs, in, in->sz < sizeof(rs) ? in->sz : sizeof(rs));
		rs.sz = sizeof(rs);
		acked = GSO_OPTS_GET(a, acked_segs, 0u);
		if (!acked && rs.acked_sacked)
			acked = bytes_to_segs(cc, rs.acked_sacked);
	}
	if (!rs.rtt_ns)
		rs.rtt_ns = GSO_OPTS_GET(a, rtt_ns, (uint64_t)0);
	if (rs.delivered_total > b->delivered_total)
		b->delivered_total = rs.delivered_total;
	else
		rs.delivered_total = b->delivered_total;
	if (rs.acked_sacked)
		b->delivered_ns = now;

	/* Recovery as the transport reports it; a timeout's state lasts until it ends. */
	state = !(flags & GSO_CC_ACK_RECOVERY) ? BBR_CA_OPEN
		: b->ca_state == BBR_CA_LOSS ? BBR_CA_LOSS : BBR_CA_RECOVERY;
	if (state == BBR_CA_RECOVERY && b->ca_state == BBR_CA_OPEN)
		save_cwnd(cc); /* recovery began without gso_cc__on_loss() first */
	b->ca_state = state;

	update_bw(cc, &rs);
	update_ack_aggregation(cc, &rs);
	if (b->mode == GSO_BBR_PROBE_BW && is_next_cycle_phase(cc, &rs))
		advance_cycle_phase(b);
	check_full_bw_reached(cc, &rs);
	check_drain(cc, cc->packets_out);
	update_min_rtt(cc, &rs, now, cc->packets_out);
	update_gains(b);
	set_pacing_rate(cc, mm_get(b), b->pacing_gain);
	set_cwnd(cc, &rs, acked, cc->packets_out, mm_get(b), b->cwnd_gain);
}

int gsoi_cc_bbr_loss(struct gso_cc *cc, uint64_t now_ns, uint64_t sent_ns)
{
	struct cc_bbr *b = &cc->bbr;

	if (cc->in_recovery_once && sent_ns <= cc->recovery_start_ns)
		return 0;
	cc->recovery_start_ns = now_ns;
	cc->in_recovery_once = true;
	cc->loss_events++;
	if (b->ca_state == BBR_CA_OPEN) {
		save_cwnd(cc); /* bbr_ssthresh: remember the cwnd to come back to */
		b->ca_state = BBR_CA_RECOVERY;
	}
	return 1;
}

void gsoi_cc_bbr_rto(struct gso_cc *cc, uint64_t now_ns)
{
	struct cc_bbr *b = &cc->bbr;

	cc->recovery_start_ns = now_ns;
	cc->in_recovery_once = true;
	cc->loss_events++;
	save_cwnd(cc);
	/* bbr_set_state(CA_Loss): a new round, and STARTUP's growth check starts over. */
	b->ca_state = b->prev_ca_state = BBR_CA_LOSS;
	b->full_bw = 0;
	b->round_start = true;
	cc->cwnd = 1; /* tcp_enter_loss: everything in flight is lost, one segment goes */
}

void gsoi_cc_bbr_tx_start(struct gso_cc *cc, uint64_t now_ns, bool app_limited)
{
	struct cc_bbr *b = &cc->bbr;

	if (!app_limited)
		return;
	b->idle_restart = true;
	b->ack_epoch_ns = now_ns;
	b->ack_epoch_acked = 0;
	/* Restarting from idle with little to send: no probing into a queue. */
	if (b->mode == GSO_BBR_PROBE_BW)
		set_pacing_rate(cc, mm_get(b), BBR_UNIT);
	else if (b->mode == GSO_BBR_PROBE_RTT)
		check_probe_rtt_done(cc, now_ns);
}

int gso_cc__bbr_info(const struct gso_cc *cc, struct gso_cc_bbr_info *bi)
{
	struct gso_cc_bbr_info f;
	const struct cc_bbr *b;

	if (!cc || !GSO_OUT_VALID(bi))
		return -EINVAL;
	if (cc->algo != GSO_CC_BBR)
		return -EOPNOTSUPP;
	b = &cc->bbr;
	memset(&f, 0, sizeof(f));
	f.mode = b->mode;
	f.cycle_idx = b->cycle_idx;
	f.bw = (uint64_t)(((unsigned __int128)mm_get(b) * NS_PER_S) >> BBR_BW_SCALE);
	f.min_rtt_ns = b->min_rtt_ns == UINT64_MAX ? 0 : b->min_rtt_ns;
	f.pacing_gain = b->pacing_gain;
	f.cwnd_gain = b->cwnd_gain;
	f.full_bw_reached = b->full_bw_reached;
	f.extra_acked = ack_aggregation_cwnd(cc);
	f.rounds = b->rtt_cnt;
	f.probe_rtts = b->probe_rtts;
	f.target_cwnd = b->target_cwnd;
	f.prior_cwnd = b->prior_cwnd;
	f.min_rtt_stamp_ns = b->min_rtt_stamp_ns;
	GSO_OUT_PUT(bi, f);
	return 0;
}
