/*
 * CUBIC window arithmetic (RFC 8312; Linux tcp_cubic.c without HyStart):
 * after a reduction cwnd follows W(t) = C (t - K)^3 + W_max, concave up to
 * the old maximum and convex beyond, but never slower than what Reno would
 * have reached in the same time (the "TCP-friendly" estimate).
 */
#include "cc_internal.h"

#define CUBIC_C 0.4     /* segments / s^3 */
#define CUBIC_BETA 0.7  /* Linux: 717/1024 */

/* Newton's method: libgso needs no libm for one cube root per loss. */
static double cube_root(double x)
{
	double y = x > 1.0 ? x / 3.0 : 1.0;

	if (x <= 0.0)
		return 0.0;
	for (int i = 0; i < 100; i++) {
		double ny = y - (y * y * y - x) / (3.0 * y * y);

		if (ny == y || (ny > y ? ny - y : y - ny) < 1e-9 * y)
			return ny;
		y = ny;
	}
	return y;
}

void gsoi_cc_cubic_reset(struct gso_cc *cc)
{
	memset(&cc->cubic, 0, sizeof(cc->cubic));
}

static void cubic_update(struct gso_cc *cc, uint64_t now_ns)
{
	struct cc_cubic *c = &cc->cubic;
	double cwnd = cc->cwnd, t, target, w_est, off;
	uint64_t cnt;

	if (!c->epoch_ns) {
		c->epoch_ns = now_ns ? now_ns : 1;
		c->w_epoch = cwnd;
		if (c->w_last_max <= cwnd) {
			c->k = 0;
			c->origin = cwnd;
		} else {
			c->k = cube_root((c->w_last_max - cwnd) / CUBIC_C);
			c->origin = c->w_last_max;
		}
	}
	/* Linux looks one min_rtt ahead: the window set now acts an RTT later. */
	t = (double)(now_ns - c->epoch_ns + cc->rtt.min_rtt_ns) / 1e9;
	off = t - c->k;
	target = c->origin + CUBIC_C * off * off * off;
	if (target > cwnd)
		cnt = (uint64_t)(cwnd / (target - cwnd));
	else
		cnt = 100 * (uint64_t)cc->cwnd;
	/* Before any loss there is no plateau to approach carefully. */
	if (c->w_last_max == 0 && cnt > 20)
		cnt = 20;
	if (cc->rtt.srtt_ns) {
		w_est = c->w_epoch + 3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA) *
				     ((double)(now_ns - c->epoch_ns) / (double)cc->rtt.srtt_ns);
		if (w_est > cwnd) {
			uint64_t max_cnt = (uint64_t)(cwnd / (w_est - cwnd));

			if (cnt > max_cnt)
				cnt = max_cnt;
		}
	}
	if (cnt < 2)
		cnt = 2;
	c->cnt = cnt > UINT32_MAX ? UINT32_MAX : (uint32_t)cnt;
}

void gsoi_cc_cubic_ack(struct gso_cc *cc, uint64_t now_ns, uint32_t acked)
{
	if (cc->cwnd < cc->ssthresh) {
		acked = gsoi_cc_slow_start(cc, acked);
		if (!acked)
			return;
	}
	cubic_update(cc, now_ns);
	gsoi_cc_avoid_ai(cc, cc->cubic.cnt, acked);
}

uint32_t gsoi_cc_cubic_ssthresh(struct gso_cc *cc)
{
	struct cc_cubic *c = &cc->cubic;
	double w;

	c->epoch_ns = 0;
	/* Fast convergence: a flow losing below its last peak yields room to
	 * newer flows by aiming lower. */
	if (cc->cwnd < c->w_last_max)
		c->w_last_max = cc->cwnd * (1.0 + CUBIC_BETA) / 2.0;
	else
		c->w_last_max = cc->cwnd;
	w = cc->cwnd * CUBIC_BETA;
	return w > GSO_CC_MIN_CWND ? (uint32_t)w : GSO_CC_MIN_CWND;
}
