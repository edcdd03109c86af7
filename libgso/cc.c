/*
 * Congestion-control front door: the object, the events, and the pacing
 * rate derived from cwnd and srtt (Linux tcp_update_pacing_rate).  The
 * window arithmetic of each algorithm lives in cc_reno.c and cc_cubic.c.
 */
#include <errno.h>
#include <stdlib.h>
#include "cc_internal.h"
#include "opts_internal.h"

size_t gso_cc__mem_size(void)
{
	return sizeof(struct gso_cc);
}

static void update_rate(struct gso_cc *cc)
{
	uint64_t srtt = cc->rtt.srtt_ns;
	uint32_t segs = cc->cwnd > cc->packets_out ? cc->cwnd : cc->packets_out;
	uint32_t ratio;
	unsigned __int128 r;

	if (!srtt) {
		cc->pacing_rate = cc->max_rate ? cc->max_rate : GSO_RATE_UNPACED;
		return;
	}
	/* Slow start doubles cwnd per RTT: pacing at 2x lets it, 1.2x in
	 * congestion avoidance keeps the queue from growing. */
	ratio = cc->cwnd < cc->ssthresh / 2 ? cc->ss_ratio : cc->ca_ratio;
	r = (unsigned __int128)(cc->mss + cc->hdr_len) * segs * ratio * 1000000000u;
	r /= (unsigned __int128)srtt * 100;
	if (r < 1)
		r = 1;
	if (r > GSO_RATE_UNPACED)
		r = GSO_RATE_UNPACED;
	cc->pacing_rate = (uint64_t)r;
	if (cc->max_rate && cc->pacing_rate > cc->max_rate)
		cc->pacing_rate = cc->max_rate;
}

int gso_cc__init(struct gso_cc **out, void *mem, size_t len, const struct gso_cc_opts *o)
{
	struct gso_cc *cc = mem;
	uint32_t algo, mss, hdr, init, maxc, ss, ca, shift;

	if (!mem || !out || !o || ((uintptr_t)mem & 7) || !GSO_OPTS_VALID(gso_cc_opts, o))
		return -EINVAL;
	algo = GSO_OPTS_GET(o, algo, 0u);
	mss = GSO_OPTS_GET(o, mss, 0u);
	hdr = GSO_OPTS_GET(o, hdr_len, 0u);
	init = GSO_OPTS_GET(o, init_cwnd, 0u);
	maxc = GSO_OPTS_GET(o, max_cwnd, 0u);
	ss = GSO_OPTS_GET(o, ss_ratio, 0u);
	ca = GSO_OPTS_GET(o, ca_ratio, 0u);
	shift = GSO_OPTS_GET(o, pacing_shift, 0u);
	if (algo > GSO_CC_BBR || !mss || mss > 65535 || hdr > GSO_MAX_HDR_LEN ||
	    ss > 10000 || ca > 10000 || shift > 31)
		return -EINVAL;
	if (len < sizeof(*cc))
		return -ENOSPC;

	memset(cc, 0, sizeof(*cc));
	cc->algo = algo;
	cc->mss = mss;
	cc->hdr_len = hdr;
	cc->max_cwnd = maxc ? maxc : UINT32_MAX;
	cc->ss_ratio = ss ? ss : GSO_CC_DEF_SS_RATIO;
	cc->ca_ratio = ca ? ca : GSO_CC_DEF_CA_RATIO;
	cc->max_rate = GSO_OPTS_GET(o, max_rate, (uint64_t)0);
	cc->cwnd = init ? init : GSO_CC_DEF_INIT_CWND;
	if (cc->cwnd > cc->max_cwnd)
		cc->cwnd = cc->max_cwnd;
	cc->ssthresh = UINT32_MAX;
	cc->rtt.sz = sizeof(cc->rtt);
	gso_rtt__init(&cc->rtt, GSO_OPTS_GET(o, min_rtt_win_ns, (uint64_t)0));
	gsoi_cc_cubic_reset(cc);
	if (algo == GSO_CC_BBR)
		gsoi_cc_bbr_init(cc, shift ? shift : GSO_BURST_DEF_PACING_SHIFT, GSO_OPTS_GET(o, seed, 0u));
	else
		update_rate(cc);
	*out = cc;
	return 0;
}

int gso_cc__create(struct gso_cc **out, const struct gso_cc_opts *o)
{
	struct gso_cc *cc;
	int err;

	if (!out)
		return -EINVAL;
	cc = malloc(sizeof(*cc));
	if (!cc)
		return -ENOMEM;
	err = gso_cc__init(out, cc, sizeof(*cc), o);
	if (err) {
		free(cc);
		return err;
	}
	cc->owned = true;
	return 0;
}

void gso_cc__destroy(struct gso_cc *cc)
{
	if (cc && cc->owned)
		free(cc);
}

uint32_t gsoi_cc_slow_start(struct gso_cc *cc, uint32_t acked)
{
	uint64_t cwnd = (uint64_t)cc->cwnd + acked;

	if (cwnd > cc->ssthresh)
		cwnd = cc->ssthresh;
	acked -= (uint32_t)(cwnd - cc->cwnd);
	cc->cwnd = (uint32_t)cwnd;
	return acked;
}

void gsoi_cc_avoid_ai(struct gso_cc *cc, uint32_t w, uint32_t acked)
{
	if (!w)
		w = 1;
	/* w may have shrunk since the counter grew: no double credit. */
	if (cc->cwnd_cnt >= w) {
		cc->cwnd_cnt = 0;
		cc->cwnd++;
	}
	cc->cwnd_cnt += acked;
	if (cc->cwnd_cnt >= w) {
		uint32_t delta = cc->cwnd_cnt / w;

		cc->cwnd_cnt -= delta * w;
		cc->cwnd = cc->cwnd > UINT32_MAX - delta ? UINT32_MAX : cc->cwnd + delta;
	}
}

int gso_cc__on_ack(struct gso_cc *cc, const struct gso_cc_ack *a)
{
	const struct gso_rate_sample *rs;
	uint64_t now, rtt;
	uint32_t acked, flags;

	if (!cc || !a || !GSO_OPTS_VALID(gso_cc_ack, a))
		return -EINVAL;
	flags = GSO_OPTS_GET(a, flags, 0u);
	rs = GSO_OPTS_GET(a, rs, (const struct gso_rate_sample *)NULL);
	if ((flags & ~(GSO_CC_ACK_NOT_CWND_LIMITED | GSO_CC_ACK_RECOVERY)) ||
	    (rs && !GSO_OPTS_VALID(gso_rate_sample, rs)))
		return -EINVAL;
	now = GSO_OPTS_GET(a, now_ns, (uint64_t)0);
	rtt = GSO_OPTS_GET(a, rtt_ns, (uint64_t)0);
	acked = GSO_OPTS_GET(a, acked_segs, 0u);
	cc->packets_out = GSO_OPTS_GET(a, packets_out, 0u);
	if (rtt)
		gso_rtt__update(&cc->rtt, now, rtt);
	if (cc->algo == GSO_CC_BBR) {
		gsoi_cc_bbr_ack(cc, a, rs);
		return 0;
	}

	/* ACKs within an RTT of a reduction acknowledge data sent before it:
	 * growing on them would undo the reduction (Linux: no growth in
	 * Recovery). */
	if (acked && !(flags & GSO_CC_ACK_NOT_CWND_LIMITED) && now >= cc->freeze_until_ns) {
		if (cc->algo == GSO_CC_RENO)
			gsoi_cc_reno_ack(cc, now, acked);
		else
			gsoi_cc_cubic_ack(cc, now, acked);
		if (cc->cwnd > cc->max_cwnd)
			cc->cwnd = cc->max_cwnd;
	}
	update_rate(cc);
	return 0;
}

static void reduce(struct gso_cc *cc, uint64_t now_ns)
{
	cc->ssthresh = cc->algo == GSO_CC_RENO ? gsoi_cc_reno_ssthresh(cc)
					       : gsoi_cc_cubic_ssthresh(cc);
	cc->recovery_start_ns = now_ns;
	cc->in_recovery_once = true;
	cc->cwnd_cnt = 0;
	cc->loss_events++;
}

int gso_cc__on_loss(struct gso_cc *cc, uint64_t now_ns, uint64_t sent_ns)
{
	if (!cc)
		return -EINVAL;
	if (cc->algo == GSO_CC_BBR)
		return gsoi_cc_bbr_loss(cc, now_ns, sent_ns);
	if (cc->in_recovery_once && sent_ns <= cc->recovery_start_ns)
		return 0;
	reduce(cc, now_ns);
	cc->cwnd = cc->ssthresh;
	cc->freeze_until_ns = now_ns + cc->rtt.srtt_ns;
	update_rate(cc);
	return 1;
}

int gso_cc__on_rto(struct gso_cc *cc, uint64_t now_ns)
{
	if (!cc)
		return -EINVAL;
	if (cc->algo == GSO_CC_BBR) {
		gsoi_cc_bbr_rto(cc, now_ns);
		return 0;
	}
	reduce(cc, now_ns);
	cc->cwnd = 1;
	/* Slow start again from one segment at once; losses of segments sent
	 * before the timeout still count as this event. */
	cc->freeze_until_ns = 0;
	gsoi_cc_cubic_reset(cc);
	update_rate(cc);
	return 0;
}

int gso_cc__on_tx_start(struct gso_cc *cc, uint64_t now_ns, bool app_limited)
{
	if (!cc)
		return -EINVAL;
	if (cc->algo == GSO_CC_BBR)
		gsoi_cc_bbr_tx_start(cc, now_ns, app_limited);
	return 0;
}

int gso_cc__set_mss(struct gso_cc *cc, uint32_t mss)
{
	if (!cc || !mss || mss > 65535)
		return -EINVAL;
	cc->mss = mss;
	/* Reno's and CUBIC's rate is cwnd's bytes over srtt: at the new size now.  BBR's comes with its next ACK. */
	if (cc->algo != GSO_CC_BBR)
		update_rate(cc);
	return 0;
}

int gso_cc__set_dev_quantum(struct gso_cc *cc, uint32_t bytes)
{
	if (!cc)
		return -EINVAL;
	cc->dev_quantum = bytes;
	return 0;
}

uint32_t gso_cc__min_burst_segs(const struct gso_cc *cc)
{
	return cc && cc->algo == GSO_CC_BBR ? gsoi_cc_bbr_min_tso_segs(cc) : 0;
}

int gso_cc__state(const struct gso_cc *cc, struct gso_cc_state *out)
{
	struct gso_cc_state full, *st = &full;

	if (!cc || !GSO_OUT_VALID(out))
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->cwnd = cc->cwnd;
	st->ssthresh = cc->ssthresh;
	st->pacing_rate = cc->pacing_rate;
	st->srtt_ns = cc->rtt.srtt_ns;
	st->rttvar_ns = cc->rtt.rttvar_ns;
	st->min_rtt_ns = cc->rtt.min_rtt_ns;
	st->rto_ns = gso_rtt__rto(&cc->rtt);
	st->recovery_start_ns = cc->recovery_start_ns;
	st->in_slow_start = cc->cwnd < cc->ssthresh;
	st->loss_events = cc->loss_events;
	GSO_OUT_PUT(out, full);
	return 0;
}

uint32_t gso_cc__cwnd(const struct gso_cc *cc)
{
	return cc ? cc->cwnd : 0;
}

uint64_t gso_cc__pacing_rate(const struct gso_cc *cc)
{
	return cc ? cc->pacing_rate : 0;
}
