/*
 * One flow's earliest departure time, advanced per burst as Linux's
 * tcp_update_skb_after_send() does, with the sub-nanosecond remainder kept
 * so that small bursts at 100 Gbit/s do not drift.
 */
#include <errno.h>
#include <gso/pacer.h>
#include "opts_internal.h"

int gso_pacer__init(struct gso_pacer *p, const struct gso_pacer_opts *o)
{
	uint32_t unpaced, flags;

	if (!p || !GSO_OPTS_VALID(gso_pacer_opts, o))
		return -EINVAL;
	unpaced = GSO_OPTS_GET(o, unpaced_segs, 0u);
	flags = GSO_OPTS_GET(o, flags, 0u);
	if (flags & ~GSO_PACER_F_PACE_ALL)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->unpaced_segs = unpaced ? unpaced : GSO_PACER_DEF_UNPACED_SEGS;
	p->flags = flags;
	return 0;
}

int gso_pacer__stamp(struct gso_pacer *p, uint64_t now_ns, uint64_t rate,
		     uint32_t wire_bytes, uint32_t segs, uint64_t *departure_ns)
{
	uint64_t dep, gap, credit, frac;
	bool first;

	if (!p || !departure_ns || !rate || !segs || !wire_bytes)
		return -EINVAL;

	dep = p->next_ns > now_ns ? p->next_ns : now_ns;
	*departure_ns = dep;
	first = p->segs_sent == 0;
	p->segs_sent += segs;
	if (rate == GSO_RATE_UNPACED ||
	    (!(p->flags & GSO_PACER_F_PACE_ALL) && p->segs_sent <= p->unpaced_segs)) {
		/* An initial window goes out back to back; the clock waits. */
		p->next_ns = dep;
		return 0;
	}

	frac = p->frac_rate == rate ? p->frac : 0;
	if (frac <= UINT64_MAX - (uint64_t)wire_bytes * 1000000000u) {
		/* The common case fits 64 bits: no 128-bit division per burst. */
		uint64_t n64 = (uint64_t)wire_bytes * 1000000000u + frac;

		gap = n64 / rate;
		frac = n64 % rate;
	} else {
		unsigned __int128 num = (unsigned __int128)wire_bytes * 1000000000u + frac;

		gap = num / rate > UINT64_MAX ? UINT64_MAX : (uint64_t)(num / rate);
		frac = num / rate > UINT64_MAX ? 0 : (uint64_t)(num % rate);
	}
	/* A sender woken late may catch up by half a gap, not more: timer jitter
	 * must not cost rate, and a long idle must not buy a burst. */
	credit = first ? 0 : dep - p->next_ns;
	gap -= credit < gap / 2 ? credit : gap / 2;
	p->next_ns = dep > UINT64_MAX - gap ? UINT64_MAX : dep + gap;
	p->frac = frac;
	p->frac_rate = rate;
	return 0;
}

int gso_pacer__refund(struct gso_pacer *p, uint64_t rate, uint32_t wire_bytes, uint64_t floor_ns)
{
	uint64_t gap;

	if (!p || !rate)
		return -EINVAL;
	if (rate == GSO_RATE_UNPACED || !wire_bytes ||
	    (!(p->flags & GSO_PACER_F_PACE_ALL) && p->segs_sent <= p->unpaced_segs))
		return 0;
	if (p->next_ns <= floor_ns)
		return 0;
	gap = (uint64_t)wire_bytes * 1000000000u / rate;
	p->next_ns = p->next_ns - floor_ns > gap ? p->next_ns - gap : floor_ns;
	return 0;
}

uint64_t gso_pacer__next(const struct gso_pacer *p)
{
	return p ? p->next_ns : 0;
}

void gso_pacer__reset(struct gso_pacer *p)
{
	if (!p)
		return;
	p->next_ns = 0;
	p->segs_sent = 0;
	p->frac = 0;
	p->frac_rate = 0;
}
