/* RTT estimator: RFC 6298 smoothing plus a windowed minimum. */
#include <errno.h>
#include <stddef.h>
#include <gso/cc.h>
#include "opts_internal.h"

/* gso_rtt.init_ of an initialised estimator: `= {0}` and stack garbage are not it. */
#define RTT_INIT 0x7274745f5f5f6f6bull

int gso_rtt__init(struct gso_rtt *r, uint64_t min_win_ns)
{
	size_t sz;

	if (!r)
		return -EINVAL;
	sz = GSO_STATE_SZ(r);
	if (!sz)
		return -EINVAL;
	memset(&r->srtt_ns, 0, sizeof(*r) - offsetof(struct gso_rtt, srtt_ns));
	r->sz = sz;
	r->min_rtt_win_ns_ = min_win_ns ? min_win_ns : GSO_RTT_DEF_MIN_WIN_NS;
	r->init_ = RTT_INIT;
	return 0;
}

int gso_rtt__update(struct gso_rtt *r, uint64_t now_ns, uint64_t sample_ns)
{
	if (!r || r->init_ != RTT_INIT || !sample_ns)
		return -EINVAL;
	if (!r->srtt_ns) {
		r->srtt_ns = sample_ns;
		r->rttvar_ns = sample_ns / 2;
	} else {
		uint64_t dev = r->srtt_ns > sample_ns ? r->srtt_ns - sample_ns
						      : sample_ns - r->srtt_ns;

		r->rttvar_ns = (3 * r->rttvar_ns + dev) / 4;
		r->srtt_ns = (7 * r->srtt_ns + sample_ns) / 8;
	}
	r->latest_ns = sample_ns;
	/* A path that got longer (route change) must not keep a stale minimum
	 * forever, but a single queue-inflated sample must not replace it. */
	if (!r->min_rtt_ns || sample_ns <= r->min_rtt_ns ||
	    now_ns - r->min_rtt_at_ns_ > r->min_rtt_win_ns_) {
		r->min_rtt_ns = sample_ns;
		r->min_rtt_at_ns_ = now_ns;
	}
	return 0;
}

uint64_t gso_rtt__rto(const struct gso_rtt *r)
{
	uint64_t var, rto;

	if (!r || r->init_ != RTT_INIT || !r->srtt_ns)
		return GSO_RTT_INIT_RTO_NS;
	var = 4 * r->rttvar_ns;
	if (var < 1000000)
		var = 1000000;
	rto = r->srtt_ns + var;
	return rto < GSO_RTT_MIN_RTO_NS ? GSO_RTT_MIN_RTO_NS : rto;
}
