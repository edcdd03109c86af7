/*
 * The aggregation estimator and the sizing it implies (struct gso_aggr,
 * <gso/pacer.h> section 3), fed with looks at a device in virtual time:
 * one that sends in aggregates at opportunities (the 2015 seed's Wi-Fi),
 * one that completes steadily, and one looked at rarely by a slow paced
 * sender, which must not be mistaken for the first.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <gso/gso.h>
#include "gso_test.h"

#define US ((uint64_t)1000)
#define MS ((uint64_t)1000000)
#define MBIT(x) ((uint64_t)(x) * 1000000u / 8u)

/* Linux's fixed policy as the engine applied it before: 1 ms at the rate, two bursts at least, a cap. */
static uint64_t fixed_limit(uint64_t rate, uint64_t burst, uint64_t cap)
{
	uint64_t q = rate >> 10;

	if (cap && q > cap)
		q = cap;
	return q < 2 * burst ? 2 * burst : q;
}

/*
 * A device that releases `batch` work at opportunities every t_ns (+- jitter,
 * a fixed pseudo-random sequence) while the sender looks every look_ns and
 * keeps work posted.  Returns the held batches the estimator reported.
 */
static unsigned run_aggregating(struct gso_aggr *a, uint64_t *now, uint64_t t_ns, uint64_t jitter_ns,
				uint64_t look_ns, uint64_t until, uint64_t batch)
{
	uint64_t next_op = *now + t_ns, rnd = 12345;
	unsigned held = 0;

	for (; *now < until; *now += look_ns) {
		uint64_t done = 0;

		while (next_op <= *now) {
			done += batch;
			rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
			next_op += t_ns - jitter_ns + (jitter_ns ? (rnd >> 33) % (2 * jitter_ns + 1) : 0);
		}
		int r = gso_aggr__look(a, *now, done, 128);

		cr_assert_geq(r, 0);
		held += (unsigned)r;
	}
	return held;
}

static struct gso_aggr_info info_of(const struct gso_aggr *a)
{
	struct gso_aggr_info i = { .sz = sizeof(i) };

	cr_assert_eq(gso_aggr__info(a, &i), 0);
	return i;
}

static struct gso_aggr_policy policy_of(const struct gso_aggr *a, uint64_t rate, uint32_t shift, uint64_t burst,
					uint64_t cap)
{
	struct gso_aggr_policy p = { .sz = sizeof(p) };

	cr_assert_eq(gso_aggr__policy(a, rate, shift, burst, 0, cap, &p), 0);
	return p;
}

Test(aggr, fixed_policy_without_aggregation)
{
	struct gso_aggr a = { .sz = sizeof(a) };
	static const uint64_t rates[] = { MBIT(1), MBIT(100), MBIT(600), MBIT(1000), MBIT(40000), GSO_RATE_UNPACED };

	cr_assert_eq(gso_aggr__init(&a), 0);
	for (unsigned i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		uint64_t r = rates[i];
		struct gso_aggr_policy p0 = policy_of(NULL, r, 0, 65000, 256 << 10), p1 = policy_of(&a, r, 0, 65000, 256 << 10);

		cr_expect_eq(p0.pacing_shift, GSO_BURST_DEF_PACING_SHIFT);
		cr_expect_eq(p0.adapted, 0);
		cr_expect_eq(p0.queue_limit, r == GSO_RATE_UNPACED ? 130000 : fixed_limit(r, 65000, 256 << 10),
			     "rate %" PRIu64 ": %" PRIu64, r, p0.queue_limit);
		cr_expect_eq(p1.queue_limit, p0.queue_limit);
		cr_expect_eq(p1.pacing_shift, p0.pacing_shift);
	}
	/* A fixed shift is the caller's: shift 8 is mac80211's static fix. */
	cr_expect_eq(policy_of(NULL, MBIT(600), 8, 1000, 0).queue_limit, MBIT(600) >> 8);
	cr_expect_eq(policy_of(NULL, MBIT(600), 8, 1000, 0).pacing_shift, 8);
}

Test(aggr, learns_the_opportunity_interval)
{
	static const struct {
		uint64_t t, jitter;
		uint32_t shift;
	} c[] = { { 2 * MS, 0, 9 }, { 4 * MS, 500 * US, 8 }, { 8 * MS, 1 * MS, 7 }, { 4 * MS, 0, 8 } };

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct gso_aggr a = { 0 };
		uint64_t now = 1 * MS, rate = MBIT(600);

		cr_assert_eq(gso_aggr__init(&a), 0);
		/* The device carries the flow's rate: its aggregates are rate x T. */
		uint64_t batch = rate * c[i].t / 1000000000u;

		run_aggregating(&a, &now, c[i].t, c[i].jitter, 200 * US, now + 20 * c[i].t, batch);
		struct gso_aggr_info in = info_of(&a);
		struct gso_aggr_policy p = policy_of(&a, rate, 0, 65000, 256 << 10);

		cr_log_info("T %" PRIu64 " us: learned %" PRIu64 " us over %u samples, shift %u, limit %" PRIu64 " bytes",
			    c[i].t / US, in.interval_ns / US, in.samples, p.pacing_shift, p.queue_limit);
		cr_expect_eq(in.aggregating, 1, "T %" PRIu64, c[i].t);
		/* Looks every 200 us: the learned interval is T to within a look and the jitter. */
		cr_expect_leq(in.interval_ns, c[i].t + c[i].jitter + 200 * US, "T %" PRIu64 ": %" PRIu64, c[i].t,
			      in.interval_ns);
		cr_expect_geq(in.interval_ns + c[i].jitter + 200 * US, c[i].t, "T %" PRIu64 ": %" PRIu64, c[i].t,
			      in.interval_ns);
		cr_expect_eq(in.batch_work, batch);
		cr_expect_eq(p.adapted, 1);
		cr_expect_eq(p.pacing_shift, c[i].shift, "T %" PRIu64 ": shift %u", c[i].t, p.pacing_shift);
		/* Two intervals of data at the rate, past the 256 KiB cap of the fixed policy. */
		cr_expect_eq(p.queue_limit, rate * 2 * in.interval_ns / 1000000000u);
		/* A shift the caller fixed is kept: the forced 2015 policy stays forced. */
		struct gso_aggr_policy f = policy_of(&a, rate, 10, 65000, 256 << 10);

		cr_expect_eq(f.adapted, 0);
		cr_expect_eq(f.queue_limit, fixed_limit(rate, 65000, 256 << 10));
	}
}

/*
 * A pacing rate far above what the device delivers (a loss-free CUBIC
 * paces at four times it) does not size the queue: the learned limit is
 * two intervals at GSO_AGGR_RATE_PCT % of the device's own rate, room
 * for each aggregate to grow to 1.2 times the one before.
 */
Test(aggr, learned_limit_follows_the_device_rate)
{
	struct gso_aggr a = { 0 };
	uint64_t now = 1 * MS, rate = MBIT(600), t = 4 * MS;

	cr_assert_eq(gso_aggr__init(&a), 0);
	/* A quarter of the rate per interval: 18.75 MB/s, 20.625 MB/s with the headroom. */
	run_aggregating(&a, &now, t, 0, 200 * US, now + 20 * t, rate * t / 1000000000u / 4);
	struct gso_aggr_policy p = policy_of(&a, rate, 0, 65000, 256 << 10);

	cr_expect_eq(p.adapted, 1);
	cr_expect_eq(p.interval_ns, t);
	cr_expect_eq(p.queue_limit, 165000, "%" PRIu64, p.queue_limit);
	/* A rate below the device's own is taken as it is. */
	cr_expect_eq(policy_of(&a, MBIT(100), 0, 1000, 0).queue_limit, MBIT(100) * 2 * t / 1000000000u);

	/*
	 * The same device counted in descriptors, as the engine counts it (a
	 * 65000-byte super-segment in 25 descriptors): the device's rate is
	 * converted at 2600 bytes a descriptor and the limit comes out the same.
	 */
	struct gso_aggr d = { 0 };
	struct gso_aggr_policy pd = { .sz = sizeof(pd) };

	now = 1 * MS;
	cr_assert_eq(gso_aggr__init(&d), 0);
	run_aggregating(&d, &now, t, 0, 200 * US, now + 20 * t, 75000 / 4 * 4 / 2600);
	cr_assert_eq(gso_aggr__policy(&d, rate, 0, 65000, 25, 256 << 10, &pd), 0);
	/* 28 descriptors of 2600 bytes every 4 ms: 18.2 MB/s, 20.02 with the headroom, two intervals. */
	cr_expect_eq(pd.queue_limit, 160160, "%" PRIu64, pd.queue_limit);
}

Test(aggr, short_intervals_keep_the_default)
{
	struct gso_aggr a = { 0 };
	uint64_t now = 0;

	cr_assert_eq(gso_aggr__init(&a), 0);
	/* Batches every 700 us, looked at every 100 us: held, but within what 1 ms covers. */
	run_aggregating(&a, &now, 700 * US, 0, 100 * US, 50 * MS, 64);
	struct gso_aggr_info in = info_of(&a);

	cr_expect_gt(in.batches, 10);
	cr_expect_eq(in.aggregating, 0, "interval %" PRIu64 " us", in.interval_ns / US);
	cr_expect_eq(policy_of(&a, MBIT(600), 0, 65000, 256 << 10).adapted, 0);
}

Test(aggr, steady_device_learns_nothing)
{
	struct gso_aggr a = { 0 };
	uint64_t now = 0;

	cr_assert_eq(gso_aggr__init(&a), 0);
	/* Completions at every look, work posted throughout (a device that drains steadily). */
	for (; now < 1000 * MS; now += 200 * US)
		cr_assert_eq(gso_aggr__look(&a, now, 3, 40), 0);
	cr_expect_eq(info_of(&a).batches, 0);
	cr_expect_eq(info_of(&a).aggregating, 0);
}

Test(aggr, slow_paced_sender_is_not_an_aggregate)
{
	struct gso_aggr a = { 0 };
	uint64_t now = 0;

	cr_assert_eq(gso_aggr__init(&a), 0);
	/*
	 * 100 Mbit/s, a 64 KB burst every 5 ms: the sender looks when it posts
	 * (work held, a burst just posted), once more 20 us later (another
	 * timer of the same pass), and 5 ms later finds it done.  A device
	 * that finished long ago looks the same: the hold was seen for 20 us,
	 * not 5 ms, and nothing is learned.
	 */
	for (int i = 0; i < 400; i++, now += 5 * MS) {
		cr_assert_eq(gso_aggr__look(&a, now, i ? 18 : 0, 18), 0);
		cr_assert_eq(gso_aggr__look(&a, now + 20 * US, 0, 18), 0);
	}
	cr_expect_eq(info_of(&a).batches, 0);
	/* And a sender that posts and leaves nothing behind (the AF_XDP copy path) never holds. */
	for (int i = 0; i < 400; i++, now += 5 * MS)
		cr_assert_eq(gso_aggr__look(&a, now, 18, 0), 0);
	cr_expect_eq(info_of(&a).aggregating, 0);
}

Test(aggr, forgets_when_completions_turn_steady)
{
	struct gso_aggr a = { 0 };
	uint64_t now = 0;
	int n = 0;

	cr_assert_eq(gso_aggr__init(&a), 0);
	run_aggregating(&a, &now, 4 * MS, 0, 200 * US, 100 * MS, 64);
	cr_assert_eq(info_of(&a).aggregating, 1);
	/* The same device now completes at every look (its aggregation turned off). */
	while (info_of(&a).aggregating && n < 1000) {
		now += 200 * US;
		/* (the first look may still end the hold the device was in) */
		cr_assert_geq(gso_aggr__look(&a, now, 3, 40), 0);
		n++;
	}
	cr_expect_eq(info_of(&a).aggregating, 0);
	cr_expect_eq(info_of(&a).forgotten, 1);
	cr_expect_leq((unsigned)n, 2 * GSO_AGGR_WINDOW + 1, "forgot after %d steady looks", n);
	cr_expect_eq(policy_of(&a, MBIT(600), 0, 65000, 256 << 10).adapted, 0);
	/* And learns again. */
	run_aggregating(&a, &now, 4 * MS, 0, 200 * US, now + 100 * MS, 64);
	cr_expect_eq(info_of(&a).aggregating, 1);
}

Test(aggr, stray_samples_do_not_pile_up)
{
	struct gso_aggr a = { 0 };
	uint64_t now = 0;

	cr_assert_eq(gso_aggr__init(&a), 0);
	for (int round = 0; round < 5; round++) {
		/* A steady device whose thread was held off twice in a row (2 ms each): one stray sample... */
		for (int i = 0; i < 2; i++) {
			cr_assert_eq(gso_aggr__look(&a, now, 0, 10), 0);
			cr_assert_eq(gso_aggr__look(&a, now + 1 * MS, 0, 10), 0);
			cr_assert_eq(gso_aggr__look(&a, now + 1 * MS + 100 * US, 10, 10), 1);
			now += 2 * MS;
		}
		cr_assert_leq(info_of(&a).samples, 1);
		/* ...then steady completions every 100 us clear it before the next such spell. */
		for (int i = 0; i < 40; i++, now += 100 * US)
			cr_assert_eq(gso_aggr__look(&a, now, 3, 10), 0);
		cr_assert_eq(info_of(&a).samples, 0, "round %d", round);
	}
	cr_expect_eq(info_of(&a).aggregating, 0);
}

Test(aggr, idle_breaks_the_chain)
{
	struct gso_aggr a = { 0 };
	uint64_t now = 0;

	cr_assert_eq(gso_aggr__init(&a), 0);
	/* Held batches separated by idle spells (nothing posted): the gaps are ours, not the device's. */
	for (int i = 0; i < 40; i++) {
		cr_assert_eq(gso_aggr__look(&a, now, 0, 10), 0);
		cr_assert_eq(gso_aggr__look(&a, now + 600 * US, 0, 10), 0);
		cr_assert_eq(gso_aggr__look(&a, now + 3 * MS, 10, 0), 1);
		cr_assert_eq(gso_aggr__look(&a, now + 4 * MS, 0, 0), 0);
		now += 20 * MS;
	}
	cr_expect_eq(info_of(&a).batches, 40);
	cr_expect_eq(info_of(&a).samples, 0);
}

Test(aggr, bad_calls_change_nothing)
{
	struct gso_aggr a = { 0 }, b = { 0 };
	struct gso_aggr_policy p = { .sz = sizeof(p) };
	uint64_t now = 10 * MS;

	cr_expect_eq(gso_aggr__look(&a, 1, 1, 1), -EINVAL, "uninitialised");
	cr_assert_eq(gso_aggr__init(&a), 0);
	cr_assert_eq(gso_aggr__look(&a, now, 0, 1), 0);
	b = a;
	cr_expect_eq(gso_aggr__look(&a, now - 1, 5, 1), -EINVAL, "time went backwards");
	cr_expect_eq(memcmp(&a, &b, sizeof(a)), 0);
	cr_expect_eq(gso_aggr__policy(&a, 1000, 32, 1, 0, 0, &p), -EINVAL);
	cr_expect_eq(gso_aggr__policy(&(struct gso_aggr){ .sz = sizeof(a) }, 1000, 0, 1, 0, 0, &p), -EINVAL);
	cr_expect_eq(gso_aggr__init(&(struct gso_aggr){ .sz = 8 }), -EINVAL, "sz too small");
	/* A huge rate and interval: the ceiling, not an overflow. */
	run_aggregating(&a, &now, 150 * MS, 0, 1 * MS, now + 2000 * MS, 1ull << 40);
	p = policy_of(&a, UINT64_MAX / 2, 0, 65000, 0);
	cr_expect_eq(p.adapted, 1);
	cr_expect_geq(p.queue_limit, GSO_AGGR_MAX_QUEUE);
}
