/*
 * The AF_XDP device under bad input and faults: invalid requests never
 * reach the ring; ring-full and UMEM-full are backpressure (nothing is
 * dropped: after the link comes back every accepted datagram arrives, in
 * order); a closed device and a deleted interface give clear errors; and
 * after teardown every chunk is free.  No test depends on timing: the link
 * is taken down to hold descriptors in the ring.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <gso/engine.h>

#include "test_xsk_util.h"

TestSuite(xsk_faults, .fini = xt_fini, .timeout = 60);

static void setup_udp(struct gso_xsk_opts *o)
{
	gso_test_require_root();
	xt_bed(0);
	xt_udp_rx(false);
	xt_tmpl(false, GSO_L4_UDP, 0, 0, XT_PORT_TX, XT_PORT_RX);
	xt_open(o);
}

/* Every chunk free once buffers are released and the device is closed. */
static void check_all_free_after_close(void)
{
	gso_dev__close(xt_g.dev);
	struct gso_dev_stats st = xt_stats();
	cr_assert_eq(st.chunks_free, st.chunks_total, "after teardown: %u free of %u (%u queued, %u in flight, %u held)",
		     st.chunks_free, st.chunks_total, st.chunks_queued, st.chunks_inflight, st.chunks_held);
	cr_assert_eq(st.inflight_descs, 0);
}

/* ---- invalid requests ---- */

struct bad_case {
	char name[40];
	int what;
	int err;
};

enum { B_MSS0, B_MSS_BIG, B_NO_TMPL, B_PAST_BUF, B_OFF_PAST, B_NO_DATA, B_FLAGS, B_MTU, B_UDP_SEGS, B_IPID,
       B_FOREIGN_BUF, B_RELEASED };

ParameterizedTestParameters(xsk_faults, invalid_never_reaches_ring)
{
	static struct bad_case c[] = {
		{ "mss 0", B_MSS0, -EINVAL },
		{ "mss 65536", B_MSS_BIG, -EINVAL },
		{ "no template", B_NO_TMPL, -EINVAL },
		{ "payload past the buffer", B_PAST_BUF, -EINVAL },
		{ "offset past the buffer", B_OFF_PAST, -EINVAL },
		{ "no payload pointer", B_NO_DATA, -EINVAL },
		{ "unknown flag", B_FLAGS, -EINVAL },
		{ "frame over the MTU", B_MTU, -EMSGSIZE },
		{ "129 UDP segments", B_UDP_SEGS, -E2BIG },
		{ "fixed IP ID without DF", B_IPID, -EINVAL },
		{ "buffer of another device", B_FOREIGN_BUF, -EINVAL },
		{ "released head of a buffer", B_RELEASED, -EINVAL },
	};
	return cr_make_param_array(struct bad_case, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct bad_case *c, xsk_faults, invalid_never_reaches_ring)
{
	static uint8_t data[20000];
	struct gso_buf buf;
	struct gso_tmpl nodf;

	GSO_OPTS(gso_xsk_opts, o);
	setup_udp(&o);
	cr_log_info("case: %s", c->name);
	cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, 10000, &buf), 0);
	struct gso_tx tx = { .tmpl = &xt_g.tmpl, .buf = &buf, .len = 5000, .mss = 1400 };
	switch (c->what) {
	case B_MSS0: tx.mss = 0; break;
	case B_MSS_BIG: tx.mss = 65536; break;
	case B_NO_TMPL: tx.tmpl = NULL; break;
	case B_PAST_BUF: tx.len = buf.cap + 1; break;
	case B_OFF_PAST: tx.off = buf.cap; tx.len = 1; break;
	case B_NO_DATA: tx.buf = NULL; tx.data = NULL; break;
	case B_FLAGS: tx.flags = 0x80; break;
	case B_MTU: tx.mss = 1473; break; /* 20 + 8 + 1473 = 1501 */
	case B_UDP_SEGS: tx.buf = NULL; tx.data = data; tx.len = 129 * 100 + 1; tx.mss = 100; break;
	case B_IPID:
		nodf = xt_g.tmpl;
		cr_assert_eq(gso_tmpl__set_ip_id(&nodf, 7), 0);
		nodf.hdr[nodf.l3_off + 6] = 0; /* clear DF */
		tx.tmpl = &nodf;
		tx.ipid = GSO_IPID_FIXED;
		break;
	case B_FOREIGN_BUF: {
		struct gso_buf f = buf;
		f.first_ += 1; /* data no longer matches its chunk */
		tx.buf = &f;
		int r = gso_dev__submit(xt_g.dev, &tx, 1);
		cr_assert_eq(r, c->err, "%s: %d", c->name, r);
		tx.buf = NULL;
		tx.data = NULL;
		tx.len = 1;
		break;
	}
	case B_RELEASED:
		cr_assert_eq(gso_dev__buf_release(xt_g.dev, &buf, buf.cap - 100), (int)xt_buf_chunks(&buf) - 1);
		break;
	}
	struct gso_tx_plan plan = { .sz = sizeof(plan) };
	cr_assert_eq(gso_dev__plan(xt_g.dev, &tx, &plan), c->err, "plan: %s", c->name);
	int r = gso_dev__submit(xt_g.dev, &tx, 1);
	cr_assert_eq(r, c->err, "%s: submit gave %d, want %d", c->name, r, c->err);
	struct gso_dev_stats st = xt_stats();
	cr_assert_eq(st.tx_descs, 0, "an invalid request produced descriptors");
	cr_assert_eq(st.tx_super, 0);
	cr_assert_geq(st.invalid, 1);
	cr_assert_eq(st.kernel_invalid, 0);
	/* The device still works afterwards. */
	tx = (struct gso_tx){ .tmpl = &xt_g.tmpl, .data = data, .len = 100, .mss = 1400 };
	cr_assert_eq(gso_dev__submit(xt_g.dev, &tx, 1), 1);
	cr_assert_eq(xt_recv(data, sizeof(data)), 100);
	gso_dev__buf_free(xt_g.dev, &buf);
	check_all_free_after_close();
}

Test(xsk_faults, bad_arguments)
{
	struct gso_buf buf;
	struct gso_tx tx = { 0 };

	GSO_OPTS(gso_xsk_opts, o);
	setup_udp(&o);
	cr_assert_eq(gso_dev__submit(NULL, &tx, 1), -EINVAL);
	cr_assert_eq(gso_dev__submit(xt_g.dev, NULL, 1), -EINVAL);
	cr_assert_eq(gso_dev__submit(xt_g.dev, &tx, 0), -EINVAL);
	cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, 0, &buf), -EINVAL);
	cr_assert_eq(gso_dev__buf_alloc(NULL, 10, &buf), -EINVAL);
	cr_assert_eq(gso_dev__kick(NULL), -EINVAL);
	cr_assert_eq(gso_dev__reap(NULL, 0), -EINVAL);
	struct gso_dev_stats st = { .sz = 4 };
	cr_assert_eq(gso_dev__stats(xt_g.dev, &st), -EINVAL);
	memset(&buf, 0, sizeof(buf));
	cr_assert_eq(gso_dev__buf_release(xt_g.dev, &buf, 0), -EINVAL, "a zeroed buffer is not ours");
	gso_dev__buf_free(xt_g.dev, &buf); /* no-op */
	gso_dev__buf_free(xt_g.dev, NULL);
	cr_assert_eq(gso_xsk__fd(NULL), -EINVAL);
	cr_assert_geq(gso_xsk__fd(xt_g.dev), 0);

	/* Options. */
	struct gso_dev *d = NULL;
	GSO_OPTS(gso_xsk_opts, bad, .chunk_size = 1024);
	cr_assert_eq(gso_xsk__create(&d, xt_g.tb.ifindex[0], &bad), -EINVAL);
	bad.chunk_size = 3000;
	bad.flags = GSO_XSK_F_ALIGNED;
	cr_assert_eq(gso_xsk__create(&d, xt_g.tb.ifindex[0], &bad), -EINVAL, "aligned needs a power of 2");
	GSO_OPTS(gso_xsk_opts, bad2, .tx_size = 100);
	cr_assert_eq(gso_xsk__create(&d, xt_g.tb.ifindex[0], &bad2), -EINVAL);
	GSO_OPTS(gso_xsk_opts, bad3, .flags = 1u << 20);
	cr_assert_eq(gso_xsk__create(&d, xt_g.tb.ifindex[0], &bad3), -EINVAL);
	GSO_OPTS(gso_xsk_opts, bad4, .mode = 7);
	cr_assert_eq(gso_xsk__create(&d, xt_g.tb.ifindex[0], &bad4), -EINVAL);
	cr_assert_eq(gso_xsk__create(&d, 999999, NULL), -ENODEV);
	check_all_free_after_close();
	/* With the queue free again (create waits out the moment it stays busy). */
	GSO_OPTS(gso_xsk_opts, zc, .mode = GSO_XSK_MODE_ZEROCOPY);
	cr_assert_eq(gso_xsk__create(&d, xt_g.tb.ifindex[0], &zc), -EOPNOTSUPP, "veth has no zero-copy");
	cr_assert_null(d, "failed calls write nothing");
}

/* ---- the UMEM share and the buffer region ---- */

Test(xsk_faults, umem_share_and_backpressure)
{
	struct gso_buf b[8], extra;
	GSO_OPTS(gso_xsk_opts, o, .nchunks = 64, .buf_chunks = 32);
	setup_udp(&o);
	GSO_OPTS(gso_dev_caps, caps);
	cr_assert_eq(gso_dev__caps(xt_g.dev, &caps), 0);
	cr_assert_eq(caps.buf_max, 32 * 4096 - caps.buf_headroom);
	cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, caps.buf_max + 1, &extra), -EMSGSIZE, "larger than the share");
	for (int i = 0; i < 8; i++)
		cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, 4 * 4096 - caps.buf_headroom, &b[i]), 0, "buffer %d", i);
	cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, 1, &extra), -ENOBUFS, "share used up: backpressure");
	struct gso_dev_stats st = xt_stats();
	cr_assert_eq(st.umem_full, 1);
	cr_assert_eq(st.chunks_queued, 32);
	xt_check_accounting();
	/* Sending still works: the backend region is separate. */
	struct gso_tx tx = { .tmpl = &xt_g.tmpl, .buf = &b[0], .len = 4000, .mss = 1000 };
	memset(b[0].data, 0xab, 4000);
	cr_assert_eq(gso_dev__submit(xt_g.dev, &tx, 1), 1);
	/* Releasing half of one buffer makes room for a 2-chunk buffer only after the whole head is free. */
	cr_assert_eq(gso_dev__buf_release(xt_g.dev, &b[1], 2 * 4096 - caps.buf_headroom), 2);
	cr_assert_eq(gso_dev__buf_release(xt_g.dev, &b[1], 100), 0, "release is monotonic");
	cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, 2 * 4096 - caps.buf_headroom, &extra), 0);
	cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, 1, &extra), -ENOBUFS);
	for (int i = 0; i < 8; i++)
		gso_dev__buf_free(xt_g.dev, &b[i]);
	gso_dev__buf_free(xt_g.dev, &extra);
	xt_drain();
	check_all_free_after_close();
}

/*
 * Link down: the kernel keeps descriptors in the TX ring.  The call that
 * meets the down link queues what the ring and UMEM hold, and the ring
 * and then the backend's UMEM filling up come back as backpressure within
 * it; every later call says -ENETDOWN without queueing (the device knows
 * now); every datagram accepted arrives once the link is up.
 */
Test(xsk_faults, ring_and_umem_full_are_backpressure)
{
	static uint8_t rx[2048], payload[1000][600];
	static struct gso_tx tx[1000];
	int accepted;

	GSO_OPTS(gso_xsk_opts, o, .tx_size = 64, .nchunks = 40, .buf_chunks = 8);
	setup_udp(&o);
	cr_assert_eq(nsbed_sh(&xt_g.tb, 0, "ip link set %s down", xt_g.tb.ifname[0]), 0);
	for (int i = 0; i < 1000; i++) {
		memset(payload[i], i & 0xff, sizeof(payload[i]));
		payload[i][0] = (uint8_t)(i >> 8);
		tx[i] = (struct gso_tx){ .tmpl = &xt_g.tmpl, .data = payload[i], .len = sizeof(payload[i]), .mss = 1400 };
	}
	accepted = gso_dev__submit(xt_g.dev, tx, 1000);
	struct gso_dev_stats st = xt_stats();
	/* 40 chunks, 8 for buffers: 32 for frames of 628 bytes, 6 a chunk = 192 > 64 ring slots: the ring fills first. */
	cr_assert_eq(accepted, 64, "the ring's worth: %d", accepted);
	cr_assert_eq(st.ring_full, 1);
	cr_assert_eq(st.umem_full, 0);
	cr_assert_eq(st.inflight_descs, (uint32_t)accepted);
	xt_check_accounting();
	cr_assert_eq(gso_dev__kick(xt_g.dev), -ENETDOWN);
	cr_assert_eq(gso_dev__submit(xt_g.dev, &tx[64], 1), -ENETDOWN, "known down: nothing more queued");
	st = xt_stats();
	cr_assert_eq(st.inflight_descs, (uint32_t)accepted);
	cr_assert_eq(nsbed_sh(&xt_g.tb, 0, "ip link set %s up", xt_g.tb.ifname[0]), 0);
	cr_assert_eq(gso_dev__kick(xt_g.dev), 0);
	for (int i = 0; i < accepted; i++) {
		ssize_t n = xt_recv(rx, sizeof(rx));
		cr_assert_eq(n, (ssize_t)sizeof(payload[i]), "datagram %d of %d: %zd", i, accepted, n);
		cr_assert_eq(rx[0], (uint8_t)(i >> 8));
		cr_assert_eq(rx[1], (uint8_t)i, "datagram %d out of order", i);
	}
	/* Copy mode delivers inside the kick, so anything extra would be there already. */
	cr_assert_eq(xt_recv_wait(rx, sizeof(rx), 100), -ETIMEDOUT, "nothing extra");
	cr_assert_eq(gso_dev__submit(xt_g.dev, &tx[64], 1), 1, "up again: queued and sent");
	xt_drain();
	check_all_free_after_close();
}

Test(xsk_faults, umem_full_is_backpressure)
{
	static uint8_t rx[2048], payload[101][1400];
	static struct gso_tx tx[101];
	int accepted;

	/* 12 backend chunks of 4096: two 1442-byte frames each = 24 frames, fewer than the 64 ring slots. */
	GSO_OPTS(gso_xsk_opts, o, .tx_size = 64, .nchunks = 20, .buf_chunks = 8);
	setup_udp(&o);
	cr_assert_eq(nsbed_sh(&xt_g.tb, 0, "ip link set %s down", xt_g.tb.ifname[0]), 0);
	for (int i = 0; i <= 100; i++) {
		payload[i][0] = (uint8_t)i;
		tx[i] = (struct gso_tx){ .tmpl = &xt_g.tmpl, .data = payload[i], .len = sizeof(payload[i]), .mss = 1400 };
	}
	accepted = gso_dev__submit(xt_g.dev, tx, 100);
	struct gso_dev_stats st = xt_stats();
	cr_assert_eq(st.umem_full, 1, "UMEM full within the call");
	cr_assert_eq(st.ring_full, 0);
	cr_assert_geq(accepted, 20);
	cr_assert_leq(accepted, 24);
	xt_check_accounting();
	cr_assert_eq(gso_dev__submit(xt_g.dev, &tx[accepted], 1), -ENETDOWN);
	cr_assert_eq(nsbed_sh(&xt_g.tb, 0, "ip link set %s up", xt_g.tb.ifname[0]), 0);
	/* Submitting again makes room by itself (kick + reap) and succeeds. */
	cr_assert_eq(gso_dev__submit(xt_g.dev, &tx[accepted], 1), 1);
	for (int i = 0; i <= accepted; i++) {
		cr_assert_eq(xt_recv(rx, sizeof(rx)), 1400, "datagram %d", i);
		cr_assert_eq(rx[0], (uint8_t)i, "datagram %d out of order", i);
	}
	xt_drain();
	check_all_free_after_close();
}

/* ---- batches ---- */

Test(xsk_faults, batch_stops_at_first_bad)
{
	static uint8_t rx[2048];
	uint8_t p[3][100];

	GSO_OPTS(gso_xsk_opts, o);
	setup_udp(&o);
	for (int i = 0; i < 3; i++)
		memset(p[i], 'a' + i, sizeof(p[i]));
	struct gso_tx tx[3] = {
		{ .tmpl = &xt_g.tmpl, .data = p[0], .len = 100, .mss = 1400 },
		{ .tmpl = &xt_g.tmpl, .data = p[1], .len = 100, .mss = 0 },
		{ .tmpl = &xt_g.tmpl, .data = p[2], .len = 100, .mss = 1400 },
	};
	cr_assert_eq(gso_dev__submit(xt_g.dev, tx, 3), 1);
	cr_assert_eq(gso_dev__submit(xt_g.dev, tx + 1, 2), -EINVAL);
	cr_assert_eq(gso_dev__submit(xt_g.dev, tx + 2, 1), 1);
	cr_assert_eq(xt_recv(rx, sizeof(rx)), 100);
	cr_assert_eq(rx[0], 'a');
	cr_assert_eq(xt_recv(rx, sizeof(rx)), 100);
	cr_assert_eq(rx[0], 'c');
	check_all_free_after_close();
}

/* ---- teardown and faults ---- */

Test(xsk_faults, closed_device)
{
	struct gso_buf buf;
	uint8_t d[10] = { 0 };

	GSO_OPTS(gso_xsk_opts, o);
	setup_udp(&o);
	cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, 9000, &buf), 0);
	struct gso_tx tx = { .tmpl = &xt_g.tmpl, .buf = &buf, .len = 9000, .mss = 1400 };
	cr_assert_eq(gso_dev__submit(xt_g.dev, &tx, 1), 1);
	cr_assert_eq(gso_dev__close(xt_g.dev), 0);
	cr_assert_eq(gso_dev__close(xt_g.dev), 0, "close twice");
	cr_assert_eq(gso_dev__submit(xt_g.dev, &tx, 1), -ESHUTDOWN);
	cr_assert_eq(gso_dev__kick(xt_g.dev), -ESHUTDOWN);
	cr_assert_eq(gso_dev__reap(xt_g.dev, 0), -ESHUTDOWN);
	struct gso_tx_plan plan = { .sz = sizeof(plan) };
	cr_assert_eq(gso_dev__plan(xt_g.dev, &tx, &plan), -ESHUTDOWN);
	struct gso_buf b2;
	cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, 10, &b2), -ESHUTDOWN);
	cr_assert_eq(gso_xsk__fd(xt_g.dev), -ESHUTDOWN);
	tx.buf = NULL;
	tx.data = d;
	tx.len = sizeof(d);
	cr_assert_eq(gso_dev__submit(xt_g.dev, &tx, 1), -ESHUTDOWN);
	struct gso_dev_stats st = xt_stats();
	cr_assert_eq(st.inflight_descs, 0);
	cr_assert_eq(st.chunks_inflight, 0);
	cr_assert_eq(st.chunks_held, xt_buf_chunks(&buf), "the caller still holds its buffer");
	gso_dev__buf_free(xt_g.dev, &buf);
	st = xt_stats();
	cr_assert_eq(st.chunks_free, st.chunks_total);
}

Test(xsk_faults, interface_deleted_mid_run)
{
	static uint8_t rx[2048];
	struct gso_buf buf;
	int r;

	GSO_OPTS(gso_xsk_opts, o);
	setup_udp(&o);
	cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, 20000, &buf), 0);
	memset(buf.data, 7, 20000);
	struct gso_tx tx = { .tmpl = &xt_g.tmpl, .buf = &buf, .len = 20000, .mss = 1400 };
	cr_assert_eq(gso_dev__submit(xt_g.dev, &tx, 1), 1);
	cr_assert_eq(xt_recv(rx, sizeof(rx)), 1400);
	/* Hold some descriptors in the ring, then take the interface away. */
	cr_assert_eq(nsbed_sh(&xt_g.tb, 0, "ip link set %s down", xt_g.tb.ifname[0]), 0);
	cr_assert_eq(gso_dev__submit(xt_g.dev, &tx, 1), 1);
	cr_assert_gt(xt_stats().inflight_descs, 0);
	cr_assert_eq(nsbed_sh(&xt_g.tb, 0, "ip link del %s", xt_g.tb.ifname[0]), 0);
	r = gso_dev__kick(xt_g.dev);
	cr_assert_eq(r, -ENODEV, "kick after the interface went away: %d (%s)", r, strerror(-r));
	cr_assert_eq(gso_dev__submit(xt_g.dev, &tx, 1), -ENODEV);
	cr_assert_geq(gso_dev__reap(xt_g.dev, 0), 0);
	xt_check_accounting();
	gso_dev__buf_free(xt_g.dev, &buf);
	check_all_free_after_close();
}

Test(xsk_faults, rebind_same_queue_at_once)
{
	GSO_OPTS(gso_xsk_opts, o);
	setup_udp(&o);
	for (int i = 0; i < 3; i++) {
		gso_dev__destroy(xt_g.dev);
		xt_g.dev = NULL;
		/* The queue is still held for a moment after close: create waits that out. */
		int err = gso_xsk__create(&xt_g.dev, xt_g.tb.ifindex[0], &o);
		cr_assert_eq(err, 0, "re-create %d: %s", i, strerror(-err));
	}
	/* A second socket on a queue that stays busy gives EBUSY after the wait. */
	struct gso_dev *d2 = NULL;
	GSO_OPTS(gso_xsk_opts, o2, .mode = GSO_XSK_MODE_COPY, .bind_wait_ms = 50);
	cr_assert_eq(gso_xsk__create(&d2, xt_g.tb.ifindex[0], &o2), -EBUSY);
	cr_assert_null(d2);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/*
 * Options written `= {0}` and then filled without sz, on a queue another
 * socket holds: -EINVAL at once, before any bind (not -EBUSY after the
 * 2 s bind retry); all-zero ones are the defaults.
 */
Test(xsk_faults, sz0_options_on_taken_queue_einval_at_once)
{
	struct gso_xsk_opts xo = { 0 };
	struct gso_engine_opts eo = { 0 };
	struct gso_engine *e = NULL;
	struct gso_dev *d = NULL;
	struct timespec t0;
	int err;

	GSO_OPTS(gso_xsk_opts, o);
	setup_udp(&o); /* queue 0 is now taken */
	xo.mode = GSO_XSK_MODE_COPY;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = gso_xsk__create(&d, xt_g.tb.ifindex[0], &xo);
	cr_expect_eq(err, -EINVAL, "xsk opts sz 0 with a field set: %s", strerror(-err));
	cr_expect_lt(ms_since(&t0), 200.0, "no bind wait");
	cr_expect_null(d);

	eo.max_flows = 16;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = gso_engine__open(&e, xt_g.tb.ifindex[0], 0, NULL, &eo);
	cr_expect_eq(err, -EINVAL, "engine opts sz 0 with a field set: %s", strerror(-err));
	cr_expect_lt(ms_since(&t0), 200.0, "no bind wait");
	cr_expect_null(e);

	GSO_OPTS(gso_engine_opts, big, .batch = GSO_ENGINE_MAX_BATCH + 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_expect_eq(gso_engine__open(&e, xt_g.tb.ifindex[0], 0, NULL, &big), -EINVAL);
	cr_expect_lt(ms_since(&t0), 200.0, "no bind wait");

	/* All zero: the defaults, so the taken queue answers (after the short wait asked for). */
	struct gso_xsk_opts zero = { 0 };
	err = gso_xsk__create(&d, xt_g.tb.ifindex[0], &zero);
	cr_expect_eq(err, -EBUSY, "all-zero xsk opts are the defaults: %s", strerror(-err));
	check_all_free_after_close();
}
