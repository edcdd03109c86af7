/*
 * One flow's earliest departure time, advanced per burst as Linux's
 * tcp_update_skb_after_send() does, with the sub-nanosecond remainder kept
 * so that small bursts at 100 Gbit/s do not drift.
 */
#include <errno.h>
#include <gso/pacer.h>
#include "opts_internal.h"

/* gso_pacer.init_ of an initialised pacer: `= {0}` and stack garbage are not it. */
#define PACER_INIT 0x70616365725f6f6bull

static bool ready(const struct gso_pacer *p)
{
	return p && p->init_ == PACER_INIT;
}

int gso_pacer__init(struct gso_pacer *p, const struct gso_pacer_opts *o)
{
	uint32_t unpaced, flags;
	size_t sz;

	if (!p)
		return -EINVAL;
	sz = GSO_STATE_SZ(p);
	if (!sz)
		return -EINVAL; /* the caller's struct may end before init_: not written */
	/* A failed init leaves no marker: a caller that ignores the error fails at the first stamp. */
	p->init_ = 0;
	if (!GSO_OPTS_VALID(gso_pacer_opts, o))
		return -EINVAL;
	unpaced = GSO_OPTS_GET(o, unpaced_segs, 0u);
	flags = GSO_OPTS_GET(o, flags, 0u);
	if (flags & ~GSO_PACER_F_PACE_ALL)
		return -EINVAL;
	memset(&p->next_ns_, 0, sizeof(*p) - offsetof(struct gso_pacer, next_ns_));
	p->sz = sz;
	p->unpaced_segs_ = unpaced ? unpaced : GSO_PACER_DEF_UNPACED_SEGS;
	p->flags_ = flags;
	p->init_ = PACER_INIT;
	return 0;
}

int gso_pacer__stamp(struct gso_pacer *p, uint64_t now_ns, uint64_t rate,
		     uint32_t wire_bytes, uint32_t segs, uint64_t *departure_ns)
{
	uint64_t dep, gap, credit, frac;
	bool first;

	if (!ready(p) || !departure_ns || !rate || !segs || !wire_bytes)
		return -EINVAL;

	dep = p->next_ns_ > now_ns ? p->next_ns_ : now_ns;
	*departure_ns = dep;
	first = p->segs_sent_ == 0;
	p->segs_sent_ += segs;
	if (rate == GSO_RATE_UNPACED ||
	    (!(p->flags_ & GSO_PACER_F_PACE_ALL) && p->segs_sent_ <= p->unpaced_segs_)) {
		/* An initial window goes out back to back; the clock waits. */
		p->next_ns_ = dep;
		return 0;
	}

	frac = p->frac_rate_ == rate ? p->frac_ : 0;
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
	credit = first ? 0 : dep - p->next_ns_;
	gap -= credit < gap / 2 ? credit : gap / 2;
	p->next_ns_ = dep > UINT64_MAX - gap ? UINT64_MAX : dep + gap;
	p->frac_ = frac;
	p->frac_rate_ = rate;
	return 0;
}

int gso_pacer__refund(struct gso_pacer *p, uint64_t rate, uint32_t wire_bytes, uint64_t floor_ns)
{
	uint64_t gap;

	if (!ready(p) || !rate)
		return -EINVAL;
	if (rate == GSO_RATE_UNPACED || !wire_bytes ||
	    (!(p->flags_ & GSO_PACER_F_PACE_ALL) && p->segs_sent_ <= p->unpaced_segs_))
		return 0;
	if (p->next_ns_ <= floor_ns)
		return 0;
	gap = (uint64_t)wire_bytes * 1000000000u / rate;
	p->next_ns_ = p->next_ns_ - floor_ns > gap ? p->next_ns_ - gap : floor_ns;
	return 0;
}

uint64_t gso_pacer__next(const struct gso_pacer *p)
{
	return ready(p) ? p->next_ns_ : UINT64_MAX;
}

void gso_pacer__reset(struct gso_pacer *p)
{
	if (!ready(p))
		return;
	p->next_ns_ = 0;
	p->segs_sent_ = 0;
	p->frac_ = 0;
	p->frac_rate_ = 0;
}
