/*
 * AF_XDP transmit of UDP super-segments on a veth, received by the stock
 * Linux stack on the peer: every datagram must arrive with every byte in
 * place (the kernel drops bad checksums, so delivery checks them too), and
 * a capture on the peer shows how each frame's checksum left us: finished
 * (software, or the kernel's TX_SW_CSUM) or still a seed (checksum
 * metadata, finished by nobody on a veth).  Each configuration runs the
 * copied-frame path and the multi-buffer path, IPv4 and IPv6.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "test_xsk_util.h"

TestSuite(xsk_tx, .fini = xt_fini, .timeout = 60);

enum csum_cfg { C_SW, C_META, C_KERNEL };

struct tx_case {
	char name[48];
	uint8_t csum;   /* enum csum_cfg */
	bool sg;
	bool v6;
	uint32_t mss;
	uint32_t len;
};

ParameterizedTestParameters(xsk_tx, udp_super)
{
	static struct tx_case c[] = {
		{ "sw csum, copied frames, v4", C_SW, false, false, 1400, 60000 },
		{ "sw csum, multi-buffer, v4", C_SW, true, false, 1400, 60000 },
		{ "sw csum, multi-buffer, v6", C_SW, true, true, 1400, 50000 },
		{ "csum metadata, copied frames, v4", C_META, false, false, 1400, 60000 },
		{ "csum metadata, multi-buffer, v4", C_META, true, false, 1400, 60000 },
		{ "csum metadata, multi-buffer, v6", C_META, true, true, 1232, 40000 },
		/* TX_SW_CSUM sums the first descriptor only: the device turns multi-buffer off. */
		{ "kernel-finished csum, no multi-buffer, v4", C_KERNEL, false, false, 1400, 60000 },
		{ "kernel-finished csum, copied frames, v6", C_KERNEL, false, true, 1400, 30000 },
		{ "one byte", C_SW, true, false, 1400, 1 },
		{ "exactly one mss", C_META, true, false, 1400, 1400 },
		{ "mss + 1", C_SW, true, false, 1400, 1401 },
		{ "odd mss, odd length", C_META, true, false, 999, 33333 },
		{ "tiny mss, 128 segments", C_SW, true, false, 16, 2048 },
	};
	return cr_make_param_array(struct tx_case, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct tx_case *c, xsk_tx, udp_super)
{
	static uint8_t rx[70000], frame[70000];
	uint64_t rng = 0x5eed + c->len;
	struct gso_buf buf;
	struct gso_tx_plan plan = { .sz = sizeof(plan) };
	uint32_t nseg = (c->len + c->mss - 1) / c->mss;

	gso_test_require_root();
	cr_log_info("case: %s", c->name);
	xt_bed(0);
	xt_udp_rx(c->v6);
	xt_capture();
	xt_tmpl(c->v6, GSO_L4_UDP, 0, 0, XT_PORT_TX, XT_PORT_RX);
	GSO_OPTS(gso_xsk_opts, o, .flags = (c->sg ? 0 : GSO_XSK_F_NO_SG) |
		 (c->csum == C_SW ? GSO_XSK_F_NO_CSUM : 0) | (c->csum == C_KERNEL ? GSO_XSK_F_KERNEL_CSUM : 0));
	xt_open(&o);

	GSO_OPTS(gso_dev_caps, caps);
	cr_assert_eq(gso_dev__caps(xt_g.dev, &caps), 0);
	cr_assert_eq(!!(caps.flags & GSO_DEV_CSUM), c->csum != C_SW, "checksum metadata detected on this kernel (%s)",
		     gso_dev__name(xt_g.dev));
	cr_assert_eq(!!(caps.flags & GSO_DEV_SG), c->sg, "multi-buffer (%s)", gso_dev__name(xt_g.dev));
	cr_assert(caps.flags & GSO_DEV_BUFS);
	cr_assert_eq(caps.mtu, 1500);

	cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, c->len, &buf), 0);
	gso_test_fill_random(buf.data, c->len, &rng);
	struct gso_tx tx = { .tmpl = &xt_g.tmpl, .buf = &buf, .off = 0, .len = c->len, .mss = c->mss };
	cr_assert_eq(gso_dev__plan(xt_g.dev, &tx, &plan), 0);
	cr_assert_eq(plan.frames, nseg);
	cr_assert_eq(plan.seg, GSO_TX_SOFTWARE);
	cr_assert_eq(plan.csum, c->csum == C_SW ? GSO_TX_SOFTWARE : GSO_TX_DEVICE);
	cr_assert_eq(plan.copy, !c->sg);
	cr_assert_geq(plan.descs, c->sg ? 2 * nseg : nseg);

	int r = gso_dev__submit(xt_g.dev, &tx, 1);
	cr_assert_eq(r, 1, "submit: %d (%s)", r, strerror(-r));

	for (uint32_t i = 0; i < nseg; i++) {
		uint32_t want = c->len - i * c->mss < c->mss ? c->len - i * c->mss : c->mss;
		ssize_t n = xt_recv(rx, sizeof(rx));
		cr_assert_eq(n, (ssize_t)want, "datagram %u of %u: got %zd, want %u bytes", i, nseg, n, want);
		cr_assert_eq(memcmp(rx, buf.data + i * c->mss, want), 0, "datagram %u payload differs", i);
	}
	/*
	 * Byte for byte what libgso's software GSO makes of the same
	 * super-segment: complete frames, or for checksum requests (which a
	 * veth passes on unfinished) frames that still carry the seed.
	 */
	static uint8_t expect[1 << 17];
	static struct gso_frame want[200];
	struct gso_extent ext = { buf.data, c->len };
	struct gso_super sup = { &xt_g.tmpl, &ext, 1 };
	GSO_OPTS(gso_seg_opts, so, .mss = c->mss, .csum = c->csum == C_META ? GSO_CSUM_PARTIAL : GSO_CSUM_FULL);
	uint32_t fsz = xt_g.tmpl.hdr_len + c->mss;
	cr_assert_leq(nseg, 200);
	cr_assert_leq(nseg * fsz, sizeof(expect));
	for (uint32_t i = 0; i < nseg; i++) {
		want[i].buf = expect + i * fsz;
		want[i].cap = fsz;
	}
	cr_assert_eq(gso_segment(&sup, &so, want, nseg), (int)nseg);
	for (uint32_t i = 0; i < nseg; i++) {
		ssize_t n = xt_cap_next(frame, sizeof(frame), GSO_L4_UDP);
		cr_assert_gt(n, 0, "captured frame %u of %u: %zd", i, nseg, n);
		bool ok = xt_l4_csum_ok(frame, (size_t)n);
		if (c->csum == C_META)
			cr_assert_not(ok, "frame %u: a checksum request crosses a veth unfinished", i);
		else
			cr_assert(ok, "frame %u: UDP checksum wrong", i);
		cr_assert_eq((uint32_t)n, want[i].len, "frame %u: %zd bytes, libgso makes %u", i, n, want[i].len);
		cr_assert_eq(memcmp(frame, want[i].buf, want[i].len), 0, "frame %u differs from libgso's software GSO", i);
	}
	xt_drain();
	struct gso_dev_stats st = xt_stats();
	cr_assert_eq(st.tx_super, 1);
	cr_assert_eq(st.tx_frames, nseg);
	cr_assert_eq(st.tx_descs, plan.descs);
	cr_assert_eq(st.tx_completed, plan.descs);
	cr_assert_eq(st.tx_sg_frames, c->sg ? nseg : 0);
	cr_assert_eq(st.tx_csum_offload, c->csum == C_SW ? 0 : nseg);
	cr_assert_eq(st.fallback_csum, c->csum == C_SW ? 1 : 0);
	cr_assert_eq(st.fallback_copy, c->sg ? 0 : 1);
	cr_assert_eq(st.kernel_invalid, 0);
	cr_assert_eq(st.bad_completions, 0);
	cr_assert_eq(st.invalid, 0);
	xt_check_accounting();
	/* Held (sent by reference) or queued (copied, never referenced): the buffer and the backend's open chunk. */
	cr_assert_eq(st.chunks_inflight, 0);
	cr_assert(st.chunks_held + st.chunks_queued >= xt_buf_chunks(&buf) && st.chunks_held + st.chunks_queued <= xt_buf_chunks(&buf) + 1,
		  "held %u + queued %u: the buffer (%u) and the backend's open chunk", st.chunks_held,
		  st.chunks_queued, xt_buf_chunks(&buf));
	if (c->sg)
		cr_assert_geq(st.chunks_held, xt_buf_chunks(&buf), "sent by reference: held for retransmit");
	gso_dev__buf_free(xt_g.dev, &buf);
	gso_dev__close(xt_g.dev);
	st = xt_stats();
	cr_assert_eq(st.chunks_free, st.chunks_total, "all chunks free after teardown");
}

/* ---- UMEM geometries, kick budget, payload outside the UMEM ---- */

struct mode_case {
	char name[48];
	uint32_t xflags, chunk_size, tx_budget;
	bool plain_memory;  /* payload in ordinary memory: always copied */
	bool expect_sg, expect_csum;
	uint32_t mss, len;
	uint32_t min_kicks;
};

ParameterizedTestParameters(xsk_tx, modes)
{
	static struct mode_case c[] = {
		{ "aligned, no metadata: multi-buffer", GSO_XSK_F_ALIGNED | GSO_XSK_F_NO_CSUM, 0, 0, false, true, false,
		  1400, 60000, 1 },
		{ "aligned with metadata: copied frames", GSO_XSK_F_ALIGNED, 0, 0, false, false, true, 1400, 60000, 1 },
		{ "2048-byte chunks", 0, 2048, 0, false, true, true, 1400, 60000, 1 },
		{ "3000-byte chunks (unaligned)", 0, 3000, 0, false, true, true, 1400, 60000, 1 },
		{ "kernel budget 32: several kicks", 0, 0, 32, false, true, true, 100, 12800, 8 },
		{ "payload in plain memory", 0, 0, 0, true, true, true, 1400, 30000, 1 },
	};
	return cr_make_param_array(struct mode_case, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct mode_case *c, xsk_tx, modes)
{
	static uint8_t rx[2048], plain[70000];
	uint64_t rng = 99;
	struct gso_buf buf;
	const uint8_t *src;
	uint32_t nseg = (c->len + c->mss - 1) / c->mss;

	gso_test_require_root();
	cr_log_info("case: %s", c->name);
	xt_bed(0);
	xt_udp_rx(false);
	xt_tmpl(false, GSO_L4_UDP, 0, 0, XT_PORT_TX, XT_PORT_RX);
	GSO_OPTS(gso_xsk_opts, o, .flags = c->xflags, .chunk_size = c->chunk_size, .tx_budget = c->tx_budget);
	xt_open(&o);
	GSO_OPTS(gso_dev_caps, caps);
	cr_assert_eq(gso_dev__caps(xt_g.dev, &caps), 0);
	cr_assert_eq(!!(caps.flags & GSO_DEV_SG), c->expect_sg, "%s", gso_dev__name(xt_g.dev));
	cr_assert_eq(!!(caps.flags & GSO_DEV_CSUM), c->expect_csum, "%s", gso_dev__name(xt_g.dev));
	struct gso_tx tx = { .tmpl = &xt_g.tmpl, .len = c->len, .mss = c->mss };
	if (c->plain_memory) {
		gso_test_fill_random(plain, c->len, &rng);
		tx.data = plain;
		src = plain;
	} else {
		cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, c->len, &buf), 0);
		gso_test_fill_random(buf.data, c->len, &rng);
		tx.buf = &buf;
		src = buf.data;
	}
	struct gso_dev_stats st0 = xt_stats();
	cr_assert_eq(gso_dev__submit(xt_g.dev, &tx, 1), 1);
	for (uint32_t i = 0; i < nseg; i++) {
		uint32_t want = c->len - i * c->mss < c->mss ? c->len - i * c->mss : c->mss;
		cr_assert_eq(xt_recv(rx, sizeof(rx)), (ssize_t)want, "datagram %u of %u", i, nseg);
		cr_assert_eq(memcmp(rx, src + i * c->mss, want), 0, "datagram %u", i);
	}
	xt_drain();
	struct gso_dev_stats st = xt_stats();
	cr_assert_geq(st.kicks - st0.kicks, c->min_kicks, "%lu kicks", (unsigned long)(st.kicks - st0.kicks));
	cr_assert_eq(st.fallback_copy, (c->plain_memory || !c->expect_sg) ? 1 : 0);
	cr_assert_eq(st.tx_sg_frames, (!c->plain_memory && c->expect_sg) ? nseg : 0);
	cr_assert_eq(st.kernel_invalid, 0, "the kernel refused %lu descriptors", (unsigned long)st.kernel_invalid);
	if (!c->plain_memory)
		gso_dev__buf_free(xt_g.dev, &buf);
	gso_dev__close(xt_g.dev);
	st = xt_stats();
	cr_assert_eq(st.chunks_free, st.chunks_total);
}
