/*
 * Device limits as facts (gso_dev__max_payload, caps.max_segs_udp/_tcp,
 * gso_dev__inflight, gso_dev__ifindex) on every backend, checked against
 * what gso_dev__plan() accepts: the largest payload per frame is accepted
 * and one byte more is refused.  And an AF_XDP device opened while its
 * interface is down: its checksum probe waits (GSO_DEV_PROBE_PENDING) and
 * runs once the interface is up, so the device gets the offload a device
 * opened on an up interface has.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <gso/gso.h>
#include <gso/dev.h>
#include <gso/xsk.h>
#include <gso/vnet.h>
#include <gso/e1000.h>
#include "gso_test.h"

static struct nsbed tb;

static void bed(void)
{
	gso_test_require_root();
	cr_assert_eq(gso_testbed_create(&tb), 0);
	cr_assert_eq(nsbed_enter(&tb, 0), 0);
}

static void fini(void)
{
	nsbed_destroy(&tb);
}

static struct gso_tmpl tmpl(uint8_t l4)
{
	GSO_OPTS(gso_tmpl_fields, f, .l3 = GSO_L3_IPV4, .l4 = l4, .sport = 9, .dport = 9, .df = true,
		 .tcp_flags = l4 == GSO_L4_TCP ? GSO_TCP_ACK : 0);
	struct gso_tmpl t;

	memcpy(f.eth_dst, tb.mac[1], 6);
	memcpy(f.eth_src, tb.mac[0], 6);
	memcpy(f.saddr, "\x0a\x4d\x00\x01", 4);
	memcpy(f.daddr, "\x0a\x4d\x00\x02", 4);
	cr_assert_eq(gso_tmpl__build(&t, &f), 0);
	return t;
}

static uint32_t flags_of(struct gso_dev *d)
{
	GSO_OPTS(gso_dev_caps, c);

	cr_assert_eq(gso_dev__caps(d, &c), 0);
	return c.flags;
}

/* max_payload is accepted by plan (2 segments of it), one more byte is -EMSGSIZE. */
static void check_edge(struct gso_dev *d, const struct gso_tmpl *t, uint32_t tx_flags, const struct gso_buf *buf,
		       int want)
{
	static uint8_t data[2 * 65536];
	int max = gso_dev__max_payload(d, t, tx_flags);
	struct gso_tx_plan p = { .sz = sizeof(p) };
	struct gso_tx tx = { .tmpl = t, .buf = buf, .data = buf ? NULL : data, .flags = (uint8_t)tx_flags };

	cr_assert_eq(max, want, "%s flags %#x: max payload %d, want %d", gso_dev__name(d), tx_flags, max, want);
	tx.len = 2 * (uint32_t)max;
	tx.mss = (uint32_t)max;
	cr_assert_eq(gso_dev__plan(d, &tx, &p), 0, "%s: MSS %d refused", gso_dev__name(d), max);
	tx.mss = (uint32_t)max + 1;
	tx.len = 2 * tx.mss;
	cr_assert_eq(gso_dev__plan(d, &tx, &p), -EMSGSIZE, "%s: MSS %d accepted", gso_dev__name(d), max + 1);
}

Test(dev_limits, xsk_copy_and_sg, .init = bed, .fini = fini)
{
	struct gso_tmpl u = tmpl(GSO_L4_UDP), t = tmpl(GSO_L4_TCP);
	struct gso_dev *copy, *sg;
	struct gso_buf buf;
	GSO_OPTS(gso_xsk_opts, oc, .mode = GSO_XSK_MODE_COPY, .flags = GSO_XSK_F_NO_SG);
	GSO_OPTS(gso_xsk_opts, os, .mode = GSO_XSK_MODE_COPY, .queue_id = 0);
	GSO_OPTS(gso_dev_caps, c);
	uint32_t meta;

	cr_assert_eq(gso_xsk__create(&copy, tb.ifindex[0], &oc), 0);
	check_edge(copy, &u, 0, NULL, 1500 - 28);
	check_edge(copy, &t, 0, NULL, 1500 - 40);
	cr_assert_eq(gso_dev__caps(copy, &c), 0);
	cr_assert_eq(c.max_segs_udp, GSO_UDP_MAX_SEGS, "UDP allows 128 whatever the ring holds");
	cr_assert_eq(c.max_segs_tcp, c.max_segs);
	cr_assert_eq(gso_dev__ifindex(copy), tb.ifindex[0]);
	cr_assert_eq(gso_dev__inflight(copy), 0);
	meta = c.buf_headroom;
	gso_dev__destroy(copy);

	/* A jumbo MTU: whole frames are bounded by a chunk, referenced payload by the MTU. */
	cr_assert_eq(nsbed_sh(&tb, 0, "ip link set %s mtu 9000", tb.ifname[0]), 0);
	cr_assert_eq(nsbed_sh(&tb, 1, "ip link set %s mtu 9000", tb.ifname[1]), 0);
	cr_assert_eq(gso_xsk__create(&copy, tb.ifindex[0], &oc), 0);
	check_edge(copy, &u, 0, NULL, (int)(4096 - meta - u.hdr_len));
	gso_dev__destroy(copy);
	cr_assert_eq(gso_xsk__create(&sg, tb.ifindex[0], &os), 0);
	if (flags_of(sg) & GSO_DEV_SG) {
		cr_assert_eq(gso_dev__buf_alloc(sg, 2 * 9000, &buf), 0);
		check_edge(sg, &t, 0, &buf, 9000 - 40);
		check_edge(sg, &t, GSO_TX_F_COPY, NULL, (int)(4096 - meta - t.hdr_len));
		gso_dev__buf_free(sg, &buf);
	} else {
		cr_log_warn("no AF_XDP multi-buffer here: the referenced-payload limit is not checked");
	}
	gso_dev__destroy(sg);
}

Test(dev_limits, vnet_and_e1000, .init = bed, .fini = fini)
{
	struct gso_tmpl t = tmpl(GSO_L4_TCP), u = tmpl(GSO_L4_UDP);
	struct gso_dev *v, *x;
	GSO_OPTS(gso_vnet_opts, vo);
	GSO_OPTS(gso_e1000_opts, eo, .flags = GSO_E1000_F_NO_THREAD, .wire_fn = NULL);
	GSO_OPTS(gso_dev_caps, c);

	cr_assert_eq(gso_vnet__create(&v, tb.ifindex[0], &vo), 0);
	check_edge(v, &t, 0, NULL, 1500 - 40);
	cr_assert_eq(gso_dev__ifindex(v), tb.ifindex[0]);
	cr_assert_eq(gso_dev__caps(v, &c), 0);
	cr_assert(c.max_segs_udp == 128 || c.max_segs_udp == 64, "virtio UDP limit %u", c.max_segs_udp);
	cr_assert_eq(gso_dev__inflight(v), 0);
	gso_dev__destroy(v);

	cr_assert_eq(gso_e1000__create(&x, tb.ifindex[0], &eo), 0);
	check_edge(x, &u, 0, NULL, 1500 - 28);
	cr_assert_eq(gso_dev__ifindex(x), tb.ifindex[0]);
	cr_assert_eq(gso_dev__caps(x, &c), 0);
	cr_assert_eq(c.max_segs_udp, GSO_UDP_MAX_SEGS);
	gso_dev__destroy(x);
}

static void drop_frame(void *ctx, const void *frame, uint32_t len)
{
	(void)ctx;
	(void)frame;
	(void)len;
}

Test(dev_limits, e1000_callback_wire_has_no_interface)
{
	struct gso_dev *x;
	GSO_OPTS(gso_e1000_opts, eo, .flags = GSO_E1000_F_NO_THREAD, .wire_fn = drop_frame);

	cr_assert_eq(gso_e1000__create(&x, 0, &eo), 0);
	cr_assert_eq(gso_dev__ifindex(x), -ENODEV);
	cr_assert_eq(gso_dev__probe(x), 0, "nothing pending");
	gso_dev__destroy(x);
}

/* Opened while down: no checksum offload yet, said so; probed once up, the same as when opened up. */
Test(dev_limits, xsk_probe_waits_for_link_up, .init = bed, .fini = fini)
{
	GSO_OPTS(gso_xsk_opts, o, .mode = GSO_XSK_MODE_COPY, .flags = GSO_XSK_F_NO_SG);
	struct gso_dev *up, *d;
	uint32_t want, f;

	cr_assert_eq(gso_xsk__create(&up, tb.ifindex[0], &o), 0);
	want = flags_of(up) & GSO_DEV_CSUM;
	cr_assert_eq(flags_of(up) & GSO_DEV_PROBE_PENDING, 0);
	gso_dev__destroy(up);

	cr_assert_eq(nsbed_sh(&tb, 0, "ip link set %s down", tb.ifname[0]), 0);
	cr_assert_eq(gso_xsk__create(&d, tb.ifindex[0], &o), 0);
	f = flags_of(d);
	cr_assert(f & GSO_DEV_PROBE_PENDING, "flags %#x", f);
	cr_assert_eq(f & GSO_DEV_CSUM, 0);
	cr_assert_eq(gso_dev__probe(d), -ENETDOWN);
	cr_assert_eq(nsbed_sh(&tb, 0, "ip link set %s up", tb.ifname[0]), 0);
	cr_assert_eq(gso_dev__probe(d), 0);
	f = flags_of(d);
	cr_assert_eq(f & GSO_DEV_PROBE_PENDING, 0, "flags %#x", f);
	cr_assert_eq(f & GSO_DEV_CSUM, want, "checksum offload after the link came up: %#x, opened up: %#x", f, want);
	cr_assert_eq(gso_dev__probe(d), 0, "nothing pending any more");
	GSO_OPTS(gso_dev_stats, st);
	cr_assert_eq(gso_dev__close(d), 0);
	cr_assert_eq(gso_dev__stats(d, &st), 0);
	cr_assert_eq(st.chunks_free, st.chunks_total, "the probe's chunk came back");
	cr_assert_eq(st.kernel_invalid, 0);
	gso_dev__destroy(d);
}
