/*
 * How a flow's device batches its completions, learned from the sender's
 * own looks at it, and the burst size and device-queue limit that follow
 * (the 2015 seed: TSO autosizing and TCP Small Queues starving a Wi-Fi
 * device that sends in aggregates).  The rule is documented in
 * <gso/pacer.h>, section 3.
 */
#include <errno.h>
#include <gso/pacer.h>
#include "opts_internal.h"

/* gso_aggr.init_ of an initialised estimator. */
#define AGGR_INIT 0x616767725f6f6b21ull

static bool ready(const struct gso_aggr *a)
{
	return a && a->init_ == AGGR_INIT;
}

int gso_aggr__init(struct gso_aggr *a)
{
	size_t sz;

	if (!a)
		return -EINVAL;
	sz = GSO_STATE_SZ(a);
	if (!sz)
		return -EINVAL;
	memset(&a->last_look_ns_, 0, sizeof(*a) - offsetof(struct gso_aggr, last_look_ns_));
	a->sz = sz;
	a->init_ = AGGR_INIT;
	return 0;
}

static void forget(struct gso_aggr *a)
{
	a->n_ = 0;
	a->pos_ = 0;
	a->steady_ = 0;
	a->last_batch_ns_ = 0;
	a->forgotten_++;
}

/* The median of n values (n <= GSO_AGGR_WINDOW), lower middle for even n. */
static uint64_t median(const uint64_t *v, uint32_t n)
{
	uint64_t s[GSO_AGGR_WINDOW];
	uint32_t i, j;

	for (i = 0; i < n; i++) {
		uint64_t x = v[i];

		for (j = i; j > 0 && s[j - 1] > x; j--)
			s[j] = s[j - 1];
		s[j] = x;
	}
	return n ? s[(n - 1) / 2] : 0;
}

static uint64_t interval(const struct gso_aggr *a)
{
	return a->n_ >= GSO_AGGR_MIN_SAMPLES ? median(a->iv_, a->n_) : 0;
}

int gso_aggr__look(struct gso_aggr *a, uint64_t now_ns, uint64_t done, uint64_t held)
{
	uint64_t prev_look, iv, mid, unc;
	bool held_batch;

	if (!ready(a) || now_ns < a->last_look_ns_)
		return -EINVAL;
	prev_look = a->last_look_ns_;
	a->last_look_ns_ = now_ns;
	if (!done) {
		if (!held) {
			/* Idle: the next batch's interval would include our own silence. */
			a->holding_ = 0;
			a->last_batch_ns_ = 0;
		} else {
			if (!a->holding_) {
				a->holding_ = 1;
				a->hold_from_ns_ = now_ns;
			}
			a->hold_last_ns_ = now_ns;
		}
		return 0;
	}
	/* Held: seen still holding long enough after the hold began, then released. */
	held_batch = a->holding_ && a->hold_last_ns_ - a->hold_from_ns_ >= GSO_AGGR_MIN_HOLD_NS;
	a->holding_ = 0;
	if (!held_batch) {
		/*
		 * Completions without a hold.  Steady when looked at closely:
		 * the previous look, a quarter interval ago at most, also found
		 * completions and work stayed posted, which an aggregating
		 * device does not do between its opportunities.
		 */
		iv = interval(a);
		if (!iv)
			iv = GSO_AGGR_MIN_INTERVAL_NS; /* samples not yet an estimate: stray ones go too */
		if (held && a->last_done_ns_ == prev_look && now_ns - prev_look < iv / 4 &&
		    ++a->steady_ >= 2 * GSO_AGGR_WINDOW) {
			if (a->n_)
				forget(a);
			a->steady_ = 0;
		}
		a->last_done_ns_ = now_ns;
		a->last_batch_ns_ = 0;
		return 0;
	}
	a->batches_++;
	a->steady_ = 0;
	/* It completed after the hold's last look and by this one. */
	unc = now_ns - a->hold_last_ns_;
	mid = a->hold_last_ns_ + unc / 2;
	if (a->last_batch_ns_ && a->last_done_ns_ == a->last_batch_ns_ && mid > a->last_mid_ns_) {
		iv = mid - a->last_mid_ns_;
		if (iv <= GSO_AGGR_MAX_INTERVAL_NS && (unc + a->last_unc_ns_) * 4 <= iv) {
			a->iv_[a->pos_] = iv;
			a->work_[a->pos_] = done;
			a->pos_ = (a->pos_ + 1) % GSO_AGGR_WINDOW;
			if (a->n_ < GSO_AGGR_WINDOW)
				a->n_++;
		}
	}
	a->last_done_ns_ = now_ns;
	a->last_batch_ns_ = now_ns;
	a->last_mid_ns_ = mid;
	a->last_unc_ns_ = unc;
	return 1;
}

int gso_aggr__info(const struct gso_aggr *a, struct gso_aggr_info *out)
{
	struct gso_aggr_info r = { 0 };
	uint32_t i;

	if (!ready(a) || !GSO_OUT_VALID(out))
		return -EINVAL;
	r.interval_ns = interval(a);
	if (r.interval_ns) {
		r.batch_work = median(a->work_, a->n_);
		for (i = 0; i < a->n_; i++)
			if (a->work_[i] > r.batch_work_max)
				r.batch_work_max = a->work_[i];
	}
	r.batches = a->batches_;
	r.forgotten = a->forgotten_;
	r.samples = a->n_;
	r.aggregating = r.interval_ns >= GSO_AGGR_MIN_INTERVAL_NS;
	GSO_OUT_PUT(out, r);
	return 0;
}

/* The device's own rate, work per second: the fastest held batch of the window over the interval before it. */
static uint64_t device_rate(const struct gso_aggr *a)
{
	uint64_t best = 0;
	uint32_t i;

	for (i = 0; i < a->n_; i++) {
		uint64_t r;

		if (!a->iv_[i])
			continue;
		r = (uint64_t)((unsigned __int128)a->work_[i] * 1000000000u / a->iv_[i]);
		if (r > best)
			best = r;
	}
	return best;
}

/*
 * round(log2(1 s / t)), at least 1: the shift whose rate >> shift is about
 * t of data.  t is GSO_AGGR_MIN_INTERVAL_NS..GSO_AGGR_MAX_INTERVAL_NS, so
 * t << s stays at most 1 s and its square fits 64 bits.
 */
static uint32_t shift_for(uint64_t t_ns)
{
	uint32_t s = 0;
	uint64_t ts;

	/* 2^s * t <= 1 s < 2^(s+1) * t ... */
	while (s < 31 && (t_ns << (s + 1)) <= 1000000000ull)
		s++;
	/* ... rounded up when 1 s / (2^s * t) is above sqrt 2: (1 s)^2 > 2 (2^s t)^2. */
	ts = t_ns << s;
	if (s < 31 && ts <= 1000000000ull && 1000000000000000000ull / 2 > ts * ts)
		s++;
	return s ? s : 1;
}

int gso_aggr__policy(const struct gso_aggr *a, uint64_t rate, uint32_t shift, uint64_t burst, uint64_t burst_work,
		     uint64_t max_queue, struct gso_aggr_policy *out)
{
	struct gso_aggr_policy r = { 0 };
	uint64_t t = 0, q, two = burst > UINT64_MAX / 2 ? UINT64_MAX : 2 * burst;

	if (!GSO_OUT_VALID(out) || shift > 31 || (a && !ready(a)))
		return -EINVAL;
	if (!shift && a) {
		t = interval(a);
		if (t < GSO_AGGR_MIN_INTERVAL_NS)
			t = 0;
	}
	r.pacing_shift = shift ? shift : GSO_BURST_DEF_PACING_SHIFT;
	if (t) {
		uint32_t s = shift_for(t);

		if (s < r.pacing_shift)
			r.pacing_shift = s;
		r.adapted = 1;
		r.interval_ns = t;
	}
	if (t && rate != GSO_RATE_UNPACED) {
		/* Size from what the device delivers (with headroom to grow), not from a pacing rate far above it. */
		unsigned __int128 dev = (unsigned __int128)device_rate(a) * GSO_AGGR_RATE_PCT / 100;

		if (burst_work)
			dev = dev * burst / burst_work;
		if (dev && dev < rate)
			rate = (uint64_t)dev;
	}
	/* The fixed policy's limit: rate >> shift (capped), two bursts at least. */
	q = rate == GSO_RATE_UNPACED ? 0 : rate >> r.pacing_shift;
	if (max_queue && q > max_queue)
		q = max_queue;
	if (q < two)
		q = two;
	if (t && rate != GSO_RATE_UNPACED) {
		/* Two aggregates at that rate: the one on the air and the next. */
		unsigned __int128 need = (unsigned __int128)rate * 2 * t / 1000000000u;
		uint64_t n = need > GSO_AGGR_MAX_QUEUE ? GSO_AGGR_MAX_QUEUE : (uint64_t)need;

		if (n > q)
			q = n;
	}
	r.queue_limit = q;
	GSO_OUT_PUT(out, r);
	return 0;
}
