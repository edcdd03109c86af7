/*
 * Burst sizing: how many segments one flow may put into its next
 * super-segment.  Linux's tcp_tso_autosize/tcp_tso_segs give the rate-based
 * goal; tcp_cwnd_test's quota, the 2004 window divisor and the peer's window
 * keep a burst from eating the window (a cwnd-limited burst is at most
 * cwnd / win_divisor segments).
 */
#include <errno.h>
#include <gso/pacer.h>
#include "opts_internal.h"

struct burst_cfg {
	uint32_t shift, min_segs, divisor, rtt_log, flags;
	uint64_t defer_ns;
};

static int burst_cfg(const struct gso_burst_opts *o, struct burst_cfg *c)
{
	if (!GSO_OPTS_VALID(gso_burst_opts, o))
		return -EINVAL;
	c->shift = GSO_OPTS_GET(o, pacing_shift, 0u);
	c->min_segs = GSO_OPTS_GET(o, min_segs, 0u);
	c->divisor = GSO_OPTS_GET(o, win_divisor, 0u);
	c->rtt_log = GSO_OPTS_GET(o, rtt_log, 0u);
	c->flags = GSO_OPTS_GET(o, flags, 0u);
	c->defer_ns = GSO_OPTS_GET(o, defer_ns, (uint64_t)0);
	if (!c->shift)
		c->shift = GSO_BURST_DEF_PACING_SHIFT;
	if (!c->min_segs)
		c->min_segs = GSO_BURST_DEF_MIN_SEGS;
	if (!c->divisor)
		c->divisor = GSO_BURST_DEF_WIN_DIVISOR;
	if (!c->rtt_log)
		c->rtt_log = GSO_BURST_DEF_RTT_LOG;
	if (!c->defer_ns)
		c->defer_ns = GSO_BURST_DEF_DEFER_NS;
	if (c->shift > 31 || c->min_segs > 65535 || c->divisor > 255 || c->rtt_log > 31 ||
	    (c->flags & ~(GSO_BURST_F_NO_RTT_BONUS | GSO_BURST_F_DEFER)))
		return -EINVAL;
	return 0;
}

static inline uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * tcp_tso_should_defer(), restated on our inputs.  `full` is the burst the
 * rate and device would allow, `room` what cwnd and the peer's window allow
 * now.  Deferring only pays when an ACK is about to widen the room; without
 * one soon, waiting just idles the link.
 */
static bool should_defer(const struct gso_burst_in *in, const struct burst_cfg *c,
			 uint64_t full_bytes, uint64_t room, uint64_t queued, uint64_t cwnd,
			 uint64_t in_flight)
{
	uint64_t now = GSO_OPTS_GET(in, now_ns, (uint64_t)0);
	uint64_t last = GSO_OPTS_GET(in, last_send_ns, (uint64_t)0);
	uint64_t oldest = GSO_OPTS_GET(in, oldest_unacked_ns, (uint64_t)0);
	uint64_t srtt = GSO_OPTS_GET(in, srtt_ns, (uint64_t)0);
	uint32_t flags = GSO_OPTS_GET(in, flags, 0u);
	uint64_t mss = in->mss, chunk;

	if (flags & (GSO_BURST_IN_RECOVERY | GSO_BURST_IN_PUSH))
		return false;
	if (!srtt || !in_flight)
		return false;
	/* A flow quiet for longer than the bound would turn deferral into a stall. */
	if (now >= last && now - last >= c->defer_ns)
		return false;
	if (room >= full_bytes || queued <= room)
		return false;
	chunk = min64((uint64_t)GSO_OPTS_GET(in, peer_wnd, 0u) + in_flight * mss, cwnd * mss) / c->divisor;
	if (room >= chunk)
		return false;
	/* The oldest segment left less than srtt/2 ago: its ACK is not near. */
	if (now < oldest || now - oldest < srtt / 2)
		return false;
	return true;
}

int gso_burst_size(const struct gso_burst_in *in, const struct gso_burst_opts *o,
		   struct gso_burst *out)
{
	struct burst_cfg c;
	struct gso_burst r = { 0 };
	uint64_t rate, queued, bytes, d, min_rtt, payload, room;
	uint32_t mss, hdr_len, cwnd, in_flight, peer_wnd, dev_segs, dev_bytes, segs, quota, cap, in_flags;
	int err;

	if (!in || !GSO_OPTS_VALID(gso_burst_in, in) || (out && !GSO_OUT_VALID(out)))
		return -EINVAL;
	err = burst_cfg(o, &c);
	if (err)
		return err;

	rate = GSO_OPTS_GET(in, rate, (uint64_t)0);
	queued = GSO_OPTS_GET(in, queued, (uint64_t)0);
	mss = GSO_OPTS_GET(in, mss, 0u);
	hdr_len = GSO_OPTS_GET(in, hdr_len, 0u);
	cwnd = GSO_OPTS_GET(in, cwnd, 0u);
	in_flight = GSO_OPTS_GET(in, in_flight, 0u);
	peer_wnd = GSO_OPTS_GET(in, peer_wnd, 0u);
	dev_segs = GSO_OPTS_GET(in, dev_max_segs, 0u);
	dev_bytes = GSO_OPTS_GET(in, dev_max_bytes, 0u);
	min_rtt = GSO_OPTS_GET(in, min_rtt_ns, (uint64_t)0);
	in_flags = GSO_OPTS_GET(in, flags, 0u);
	if (!dev_segs)
		dev_segs = GSO_BURST_DEF_DEV_MAX_SEGS;
	if (!dev_bytes)
		dev_bytes = GSO_BURST_DEF_DEV_MAX_BYTES;

	if (!rate || !mss || mss > 65535 || !cwnd || hdr_len > GSO_MAX_HDR_LEN ||
	    dev_segs > GSO_BURST_DEF_DEV_MAX_SEGS || dev_bytes > (1u << 24) ||
	    (uint64_t)dev_bytes < (uint64_t)hdr_len + mss ||
	    (in_flags & ~(GSO_BURST_IN_RECOVERY | GSO_BURST_IN_PUSH | GSO_BURST_IN_BYTES)))
		return -EINVAL;
	if (in_flags & GSO_BURST_IN_BYTES) {
		/* A partly filled window is not a segment of room; a partly
		 * acked segment is still in flight. */
		cwnd = cwnd / mss ? cwnd / mss : 1;
		in_flight = (uint32_t)(((uint64_t)in_flight + mss - 1) / mss);
	}

	/* tcp_tso_autosize: about 2^-shift seconds of data at the pacing rate. */
	d = dev_bytes - hdr_len;
	bytes = rate >> c.shift;
	if (!(c.flags & GSO_BURST_F_NO_RTT_BONUS) && min_rtt) {
		/* Short paths get bigger bursts: few in flight, ACKs come back fast. */
		uint64_t rsh = (min_rtt / 1000) >> c.rtt_log;

		if (rsh < 32)
			bytes += d >> rsh;
	}
	r.limit = GSO_BURST_LIM_RATE;
	if (bytes > d) {
		bytes = d;
		r.limit = GSO_BURST_LIM_DEV_BYTES;
	}
	segs = (uint32_t)(bytes / mss);
	if (segs < c.min_segs) {
		segs = c.min_segs;
		r.limit = GSO_BURST_LIM_MIN_SEGS;
	}
	/* The goal stays free of device limits, so a CC model built on it does
	 * not shrink on a device that takes few segments (2018, BBR). */
	r.goal_segs = segs;

	if (d / mss < segs) {
		segs = (uint32_t)(d / mss);
		r.limit = GSO_BURST_LIM_DEV_BYTES;
	}
	if (dev_segs < segs) {
		segs = dev_segs;
		r.limit = GSO_BURST_LIM_DEV_SEGS;
	}
	/* 2004: a window-sized burst waits for the whole window's ACKs. */
	cap = cwnd / c.divisor ? cwnd / c.divisor : 1;
	if (cap < segs) {
		segs = cap;
		r.limit = GSO_BURST_LIM_CWND_DIV;
	}
	/* tcp_cwnd_test: leave room for a second burst to be in flight. */
	quota = in_flight >= cwnd ? 0 : cwnd - in_flight;
	if (quota > (cwnd / 2 ? cwnd / 2 : 1))
		quota = cwnd / 2 ? cwnd / 2 : 1;
	if (quota < segs) {
		segs = quota;
		r.limit = GSO_BURST_LIM_QUOTA;
	}

	payload = (uint64_t)segs * mss;
	if (payload > peer_wnd && (uint64_t)peer_wnd < queued) {
		/* Whole segments inside the window; a sliver at the edge would be
		 * silly-window sending.  Only the end of the data may be short. */
		payload = (uint64_t)peer_wnd / mss * mss;
		r.limit = GSO_BURST_LIM_PEER_WND;
	}
	if (payload > queued) {
		payload = queued;
		r.limit = GSO_BURST_LIM_DATA;
	}
	segs = (uint32_t)((payload + mss - 1) / mss);

	if ((c.flags & GSO_BURST_F_DEFER) && segs) {
		uint32_t full = r.goal_segs;
		uint64_t cwnd_room = in_flight >= cwnd ? 0 : (uint64_t)(cwnd - in_flight) * mss;

		if (d / mss < full)
			full = (uint32_t)(d / mss);
		if (dev_segs < full)
			full = dev_segs;
		room = min64(peer_wnd, cwnd_room);
		if (should_defer(in, &c, (uint64_t)full * mss, room, queued, cwnd, in_flight)) {
			segs = 0;
			payload = 0;
			r.limit = GSO_BURST_LIM_DEFER;
			r.defer_until_ns = GSO_OPTS_GET(in, last_send_ns, (uint64_t)0) + c.defer_ns;
		}
	}

	r.segs = segs;
	r.bytes = (uint32_t)payload;
	r.wire_bytes = (uint32_t)(payload + (uint64_t)segs * hdr_len);
	if (out)
		GSO_OUT_PUT(out, r);
	return (int)segs;
}
