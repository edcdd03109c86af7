/*
 * The e1000 model's transmit-opportunity mode (GSO_E1000_F_TXOP, no root;
 * a callback wire): frames leave in aggregates at opportunities about
 * txop_us apart, an aggregate holds whole packets up to txop_frames /
 * txop_bytes (but at least one packet), and its descriptors complete only
 * once its airtime (frame bytes / link_rate) is over.
 *
 * The threaded test runs on a loaded 2-core machine too: it asserts on
 * medians with wide bounds, and on orderings the model guarantees (a
 * completion never comes before its frames), never on speed.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gso/tmpl.h>
#include <gso/dev.h>
#include <gso/e1000.h>

#include "gso_test.h"

#define MAXF 4096u
#define MSS 1448u
#define PKT_FRAMES 8u
#define PKT_LEN (PKT_FRAMES * MSS)
#define PKT_DESCS 5u          /* context, header, 3 payload pieces of at most 4 KiB */
#define FRAME_BYTES (MSS + 54u) /* Ethernet + IPv4 + TCP without options */

struct rec {
	uint64_t t[MAXF];     /* CLOCK_MONOTONIC of each frame */
	_Atomic uint32_t n;
};

static struct rec *rec;
static struct gso_dev *dev;
static struct gso_tmpl tmpl;
static uint8_t pay[PKT_LEN];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	nanosleep(&ts, NULL);
}

static void wire(void *ctx, const void *frame, uint32_t len)
{
	struct rec *r = ctx;
	uint32_t n = atomic_load_explicit(&r->n, memory_order_relaxed);

	(void)frame;
	(void)len;
	if (n >= MAXF)
		return;
	r->t[n] = now_ns();
	/* Release pairs with the test thread's acquire load: the time before the count. */
	atomic_store_explicit(&r->n, n + 1, memory_order_release);
}

static void fini(void)
{
	gso_dev__destroy(dev);
	dev = NULL;
	free(rec);
	rec = NULL;
}

static void init(void)
{
	gso_test_tmpl_tcp4(&tmpl);
	gso_test_fill_random(pay, sizeof(pay), &(uint64_t){ 5 });
	rec = calloc(1, sizeof(*rec));
	cr_assert_not_null(rec);
}

static void make(const struct gso_e1000_opts *o)
{
	int err = gso_e1000__create(&dev, 0, o);

	cr_assert_eq(err, 0, "gso_e1000__create: %s", strerror(-err));
}

/* n TSO packets of PKT_FRAMES frames each, posted and pushed. */
static void post(unsigned n)
{
	struct gso_tx tx = { .tmpl = &tmpl, .data = pay, .len = PKT_LEN, .mss = MSS };

	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(gso_dev__submit(dev, &tx, 1), 1, "packet %u", i);
	cr_assert_eq(gso_dev__kick(dev), 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

Test(e1000_txop, options_that_would_be_ignored_or_make_no_sense_are_refused, .init = init, .fini = fini)
{
	static const struct gso_e1000_opts bad[] = {
		{ .sz = sizeof(bad[0]), .txop_us = 4000 },               /* no F_TXOP */
		{ .sz = sizeof(bad[0]), .link_rate = 1000000 },
		{ .sz = sizeof(bad[0]), .flags = GSO_E1000_F_TXOP_NO_JITTER },
		{ .sz = sizeof(bad[0]), .flags = GSO_E1000_F_TXOP, .txop_us = 1000, .txop_jitter_us = 1000 },
		{ .sz = sizeof(bad[0]), .flags = GSO_E1000_F_TXOP | GSO_E1000_F_TXOP_NO_JITTER, .txop_jitter_us = 10 },
		{ .sz = sizeof(bad[0]), .flags = GSO_E1000_F_TXOP, .txop_us = 1000001 },
		{ .sz = sizeof(bad[0]), .flags = GSO_E1000_F_TXOP, .txop_frames = 65536 },
		{ .sz = sizeof(bad[0]), .flags = GSO_E1000_F_TXOP_SPLIT },
	};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gso_e1000_opts o = bad[i];

		o.flags |= GSO_E1000_F_NO_THREAD;
		o.wire_fn = wire;
		o.wire_ctx = rec;
		cr_assert_eq(gso_e1000__create(&dev, 0, &o), -EINVAL, "case %u", i);
	}
	{
		GSO_OPTS(gso_e1000_opts, o, .flags = GSO_E1000_F_NO_THREAD | GSO_E1000_F_TXOP, .wire_fn = wire,
			 .wire_ctx = rec);
		make(&o);
	}
}

/*
 * Polled (no thread): nothing leaves before the opportunity; then one
 * aggregate of whole packets -- a packet larger than txop_frames goes
 * alone, never split -- whose descriptors complete only after its
 * airtime; opportunities with nothing posted are counted as empty.
 */
Test(e1000_txop, polled_aggregate_completes_after_its_airtime, .init = init, .fini = fini)
{
	const uint64_t air_ns = 100000000; /* one packet: 8 frames at the link rate below */
	GSO_OPTS(gso_e1000_opts, o, .flags = GSO_E1000_F_NO_THREAD | GSO_E1000_F_TXOP | GSO_E1000_F_TXOP_NO_JITTER,
		 .txop_us = 2000, .txop_frames = 4, .link_rate = PKT_FRAMES * FRAME_BYTES * 10,
		 .nchunks = 1024, .wire_fn = wire, .wire_ctx = rec);
	struct gso_e1000_stats es = { .sz = sizeof(es) };
	uint64_t t0;
	int inflight;

	make(&o);
	post(3);
	inflight = gso_dev__inflight(dev);
	cr_assert_eq(inflight, 3 * PKT_DESCS);
	t0 = now_ns();
	cr_assert_eq(gso_e1000__poll(dev), 0, "the first poll only starts the schedule");
	cr_assert_eq(atomic_load(&rec->n), 0);
	sleep_ns(3000000);
	/* One packet: alone it is over txop_frames, and the next one waits for the next aggregate. */
	cr_assert_eq(gso_e1000__poll(dev), PKT_DESCS);
	cr_assert_eq(atomic_load(&rec->n), PKT_FRAMES);
	gso_dev__reap(dev, 0);
	if (now_ns() - t0 < air_ns / 2)
		cr_assert_eq(gso_dev__inflight(dev), inflight, "completed before the airtime was over");
	/* Nothing new before the airtime ends, then it completes. */
	cr_assert_eq(gso_e1000__poll(dev), 0);
	sleep_ns(air_ns + 5000000);
	gso_e1000__poll(dev);
	gso_dev__reap(dev, 0);
	cr_assert_leq(gso_dev__inflight(dev), inflight - (int)PKT_DESCS);
	cr_assert_eq(gso_e1000__stats(dev, &es), 0);
	cr_assert_geq(es.txops, 1);
	cr_assert_eq(es.txop_frames_max, PKT_FRAMES);
	cr_assert_eq(es.txop_bytes_max, PKT_FRAMES * FRAME_BYTES);
	cr_assert_geq(es.txop_full, 1);
	cr_assert_geq(es.txop_airtime_ns, air_ns - 1000);

	/* Drain, then idle opportunities count as empty. */
	for (int i = 0; i < 100 && gso_dev__inflight(dev); i++) {
		sleep_ns(air_ns / 10);
		gso_e1000__poll(dev);
		gso_dev__reap(dev, 0);
	}
	cr_assert_eq(gso_dev__inflight(dev), 0);
	cr_assert_eq(atomic_load(&rec->n), 3 * PKT_FRAMES);
	for (int i = 0; i < 4; i++) {
		sleep_ns(2500000);
		gso_e1000__poll(dev);
	}
	cr_assert_eq(gso_e1000__stats(dev, &es), 0);
	cr_assert_eq(es.txops, 3);
	cr_assert_geq(es.txop_empty, 2);
	cr_assert_eq(es.frames, 3 * PKT_FRAMES);
}

/* A byte limit: two packets' frame bytes per aggregate, however many frames it would allow. */
Test(e1000_txop, polled_byte_limit_closes_the_aggregate, .init = init, .fini = fini)
{
	GSO_OPTS(gso_e1000_opts, o, .flags = GSO_E1000_F_NO_THREAD | GSO_E1000_F_TXOP | GSO_E1000_F_TXOP_NO_JITTER,
		 .txop_us = 1000, .txop_frames = 1000, .txop_bytes = 2 * PKT_FRAMES * FRAME_BYTES + 100,
		 .nchunks = 1024, .wire_fn = wire, .wire_ctx = rec);
	struct gso_e1000_stats es = { .sz = sizeof(es) };

	make(&o);
	post(5);
	gso_e1000__poll(dev);
	for (int i = 0; i < 200 && atomic_load(&rec->n) < 5 * PKT_FRAMES; i++) {
		sleep_ns(1500000);
		gso_e1000__poll(dev);
	}
	cr_assert_eq(atomic_load(&rec->n), 5 * PKT_FRAMES);
	cr_assert_eq(gso_e1000__stats(dev, &es), 0);
	cr_assert_eq(es.txops, 3, "2 + 2 + 1 packets");
	cr_assert_eq(es.txop_frames_max, 2 * PKT_FRAMES);
	cr_assert_eq(es.txop_full, 2);
	cr_assert_eq(es.txop_bytes, 5 * PKT_FRAMES * FRAME_BYTES);
	cr_assert_eq(es.txop_airtime_ns, 0, "no link rate: no airtime");
}

/*
 * GSO_E1000_F_TXOP_SPLIT: aggregates of frames, not packets.  With 4 (or
 * 3 by the byte limit) frames per aggregate, an 8-frame packet spans
 * aggregates, and its descriptors (its context descriptor too) complete
 * only with the aggregate that carries its last frame.
 */
struct split_case {
	uint32_t frames, bytes; /* limits */
	uint32_t per;           /* frames per aggregate that follow */
};

static void split_run(const struct split_case *c)
{
	GSO_OPTS(gso_e1000_opts, o,
		 .flags = GSO_E1000_F_NO_THREAD | GSO_E1000_F_TXOP | GSO_E1000_F_TXOP_NO_JITTER | GSO_E1000_F_TXOP_SPLIT,
		 .txop_us = 1000, .txop_frames = c->frames, .txop_bytes = c->bytes, .nchunks = 1024, .wire_fn = wire,
		 .wire_ctx = rec);
	struct gso_e1000_stats es = { .sz = sizeof(es) };
	const uint32_t total = 3 * PKT_FRAMES;
	int inflight0, polls = 0;

	make(&o);
	post(3);
	inflight0 = gso_dev__inflight(dev);
	gso_e1000__poll(dev);
	while (atomic_load(&rec->n) < total && polls++ < 200) {
		uint32_t sent, done;

		sleep_ns(1500000);
		gso_e1000__poll(dev);
		gso_dev__reap(dev, 0);
		sent = atomic_load(&rec->n);
		done = (uint32_t)(inflight0 - gso_dev__inflight(dev));
		/* Whole packets, context descriptor included, and only those whose every frame is out. */
		cr_assert_eq(done % PKT_DESCS, 0, "%u descriptors completed", done);
		cr_assert_eq(done / PKT_DESCS, sent / PKT_FRAMES, "%u frames out, %u descriptors completed", sent, done);
	}
	cr_assert_eq(atomic_load(&rec->n), total);
	cr_assert_eq(gso_dev__inflight(dev), 0);
	cr_assert_eq(gso_e1000__stats(dev, &es), 0);
	cr_assert_eq(es.txops, (total + c->per - 1) / c->per);
	cr_assert_eq(es.txop_frames_max, c->per);
	cr_assert_eq(es.txop_full, es.txops - 1);
	cr_assert_eq(es.txop_bytes, total * FRAME_BYTES);
	cr_assert_eq(es.packets, 3);
}

Test(e1000_txop, split_frames_limit, .init = init, .fini = fini)
{
	split_run(&(struct split_case){ .frames = 4, .per = 4 });
}

Test(e1000_txop, split_bytes_limit, .init = init, .fini = fini)
{
	split_run(&(struct split_case){ .frames = 64, .bytes = 3 * FRAME_BYTES + 10, .per = 3 });
}

/*
 * The device thread: 40 packets of 8 frames, at most 16 frames per
 * aggregate, opportunities every 4 ms +- 0.5 ms, 2 ms of airtime each.
 * Frames come in groups about 4 ms apart (median), none larger than 16
 * frames; completions come in batches, each after every frame it
 * completes, and (median) an airtime after its aggregate began.
 */
Test(e1000_txop, thread_sends_aggregates_at_opportunities, .init = init, .fini = fini, .timeout = 30)
{
	enum { NPKT = 40, T_US = 4000, AGG = 2 * PKT_FRAMES };
	const uint64_t air_ns = 2000000, T = T_US * 1000ull;
	GSO_OPTS(gso_e1000_opts, o, .flags = GSO_E1000_F_TXOP, .txop_us = T_US, .txop_frames = AGG,
		 .link_rate = AGG * FRAME_BYTES * 500, /* an aggregate in 2 ms */
		 .nchunks = 1024, .wire_fn = wire, .wire_ctx = rec);
	struct gso_e1000_stats es = { .sz = sizeof(es) };
	static uint64_t gap[MAXF], since[MAXF], step[MAXF];
	uint64_t deadline, last_start;
	unsigned ngap = 0, nc = 0, groups = 0, gsize = 0, gmax = 0;
	uint32_t done_pkts = 0;
	int inflight;

	make(&o);
	post(NPKT);
	inflight = gso_dev__inflight(dev);
	cr_assert_eq(inflight, NPKT * PKT_DESCS);
	/* Watch completions: each must come after every frame of the packets it completes. */
	deadline = now_ns() + 10000000000ull;
	while (inflight && now_ns() < deadline) {
		int now_in;

		sleep_ns(100000);
		gso_dev__reap(dev, 0);
		now_in = gso_dev__inflight(dev);
		if (now_in != inflight) {
			uint64_t tc = now_ns();
			uint32_t pkts = (uint32_t)(NPKT * PKT_DESCS - now_in) / PKT_DESCS;
			uint32_t n = atomic_load_explicit(&rec->n, memory_order_acquire);

			cr_assert_eq((NPKT * PKT_DESCS - now_in) % PKT_DESCS, 0, "a packet completed in part");
			cr_assert_geq(n, pkts * PKT_FRAMES, "completed before its frames left");
			cr_assert_lt(rec->t[pkts * PKT_FRAMES - 1], tc);
			/* From the first frame of what just completed. */
			since[nc] = tc - rec->t[done_pkts * PKT_FRAMES];
			step[nc++] = (uint64_t)(inflight - now_in);
			done_pkts = pkts;
			inflight = now_in;
		}
	}
	cr_assert_eq(inflight, 0, "not everything completed in 10 s");
	cr_assert_eq(atomic_load(&rec->n), NPKT * PKT_FRAMES);
	/* Group frames: a gap of a quarter interval starts a new aggregate. */
	last_start = rec->t[0];
	for (unsigned i = 0; i < NPKT * PKT_FRAMES; i++) {
		if (i && rec->t[i] - rec->t[i - 1] > T / 4) {
			gap[ngap++] = rec->t[i] - last_start;
			last_start = rec->t[i];
			gmax = gsize > gmax ? gsize : gmax;
			gsize = 0;
			groups++;
		}
		gsize++;
	}
	gmax = gsize > gmax ? gsize : gmax;
	groups++;
	cr_assert_eq(gso_e1000__stats(dev, &es), 0);
	cr_log_info("txop: %u groups (max %u frames), median spacing %.2f ms, %u completions (median %.2f ms after "
		    "the aggregate began, median %lu descs); stats: txops %lu empty %lu full %lu frames_max %lu "
		    "late max %.2f ms", groups, gmax, (double)median(gap, ngap) * 1e-6, nc,
		    (double)median(since, nc) * 1e-6, (unsigned long)median(step, nc), (unsigned long)es.txops,
		    (unsigned long)es.txop_empty, (unsigned long)es.txop_full, (unsigned long)es.txop_frames_max,
		    (double)es.txop_late_max_ns * 1e-6);
	cr_assert_leq(es.txop_frames_max, AGG);
	cr_assert_geq(es.txops, NPKT * PKT_FRAMES / AGG);
	cr_assert_geq(es.txop_full, 1);
	cr_assert_eq(es.txop_bytes, NPKT * PKT_FRAMES * FRAME_BYTES);
	cr_assert_geq(ngap, 10, "frames did not come in aggregates: %u groups", groups);
	/* Median spacing within 25 % of the interval (the jitter is +-12.5 %). */
	cr_assert_geq(median(gap, ngap), T * 3 / 4, "median spacing %lu ns", (unsigned long)median(gap, ngap));
	cr_assert_leq(median(gap, ngap), T * 5 / 4, "median spacing %lu ns", (unsigned long)median(gap, ngap));
	/* Completions in batches of whole aggregates, an airtime after the aggregate began. */
	cr_assert_geq(median(step, nc), AGG / PKT_FRAMES * PKT_DESCS);
	cr_assert_geq(median(since, nc), air_ns * 9 / 10, "median %lu ns", (unsigned long)median(since, nc));

	/* Idle, the device sleeps between opportunities: a spinning thread would take most of 100 ms. */
	{
		struct gso_e1000_stats e2 = { .sz = sizeof(e2) };

		sleep_ns(100000000);
		cr_assert_eq(gso_e1000__stats(dev, &e2), 0);
		cr_assert_lt(e2.dev_cpu_ns - es.dev_cpu_ns, 20000000, "device thread CPU %.1f ms in 100 ms idle",
			     (double)(e2.dev_cpu_ns - es.dev_cpu_ns) * 1e-6);
		cr_assert_geq(e2.txop_empty, es.txop_empty + 5, "no empty opportunities while idle");
	}
}
