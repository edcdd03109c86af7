/* Reno window arithmetic (RFC 5681; Linux tcp_reno_cong_avoid). */
#include "cc_internal.h"

void gsoi_cc_reno_ack(struct gso_cc *cc, uint64_t now_ns, uint32_t acked)
{
	(void)now_ns;
	if (cc->cwnd < cc->ssthresh) {
		acked = gsoi_cc_slow_start(cc, acked);
		if (!acked)
			return;
	}
	gsoi_cc_avoid_ai(cc, cc->cwnd, acked);
}

uint32_t gsoi_cc_reno_ssthresh(struct gso_cc *cc)
{
	uint32_t half = cc->cwnd / 2;

	return half > GSO_CC_MIN_CWND ? half : GSO_CC_MIN_CWND;
}
