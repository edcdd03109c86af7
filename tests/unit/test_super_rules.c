/*
 * One set of rules for a super-segment, whoever segments it: what
 * gso_segment() refuses, gso_offload_describe() refuses with the same
 * errno, and so do the encoders (e1000, virtio_net_hdr, AF_XDP metadata)
 * and the e1000 model as a device.  A SYN or RST super-segment of several
 * segments was refused by software GSO and accepted by the offload path:
 * the e1000 model then put 7 SYN frames on the wire.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include <gso/offload.h>
#include <gso/seg.h>
#include <gso/tmpl.h>
#include <gso/dev.h>
#include <gso/e1000.h>

#include "gso_test.h"

static uint8_t payload[70000];

/* ---- templates: built clean, then edited where the builder refuses ---- */

enum edit {
	E_NONE,
	E_SYN,     /* SYN (the builder refuses it; gso_tmpl__parse would not) */
	E_SYNACK,
	E_RST,
	E_RSTACK,
	E_FINPSH,  /* FIN and PSH: legal, go on the last segment */
	E_URG,     /* URG: copied to every segment, as Linux's GSO does */
	E_NODF,
	E_MF,      /* an IPv4 fragment: not segmentable */
	E_FRAGOFF,
	E_DOFF,    /* doff disagrees with the header length */
	E_PROTO,   /* IP protocol byte disagrees with l4 */
};

struct tdef {
	const char *name;
	uint8_t l3, l4;
	bool vlan, df, cwr;
	enum edit edit;
};

static const struct tdef tdefs[] = {
	{ "tcp4", GSO_L3_IPV4, GSO_L4_TCP, false, true, false, E_NONE },
	{ "tcp4 syn", GSO_L3_IPV4, GSO_L4_TCP, false, true, false, E_SYN },
	{ "tcp4 syn+ack", GSO_L3_IPV4, GSO_L4_TCP, false, true, false, E_SYNACK },
	{ "tcp4 rst", GSO_L3_IPV4, GSO_L4_TCP, false, true, false, E_RST },
	{ "tcp4 rst+ack vlan", GSO_L3_IPV4, GSO_L4_TCP, true, true, false, E_RSTACK },
	{ "tcp4 fin+psh", GSO_L3_IPV4, GSO_L4_TCP, false, true, false, E_FINPSH },
	{ "tcp4 urg", GSO_L3_IPV4, GSO_L4_TCP, false, true, false, E_URG },
	{ "tcp4 cwr", GSO_L3_IPV4, GSO_L4_TCP, false, true, true, E_NONE },
	{ "tcp4 no df", GSO_L3_IPV4, GSO_L4_TCP, false, false, false, E_NODF },
	{ "tcp4 mf", GSO_L3_IPV4, GSO_L4_TCP, false, false, false, E_MF },
	{ "tcp4 fragment offset", GSO_L3_IPV4, GSO_L4_TCP, false, false, false, E_FRAGOFF },
	{ "tcp4 bad doff", GSO_L3_IPV4, GSO_L4_TCP, false, true, false, E_DOFF },
	{ "tcp4 bad protocol", GSO_L3_IPV4, GSO_L4_TCP, false, true, false, E_PROTO },
	{ "tcp6", GSO_L3_IPV6, GSO_L4_TCP, false, false, false, E_NONE },
	{ "tcp6 syn", GSO_L3_IPV6, GSO_L4_TCP, false, false, false, E_SYN },
	{ "tcp6 rst vlan", GSO_L3_IPV6, GSO_L4_TCP, true, false, false, E_RST },
	{ "udp4", GSO_L3_IPV4, GSO_L4_UDP, false, true, false, E_NONE },
	{ "udp4 no df", GSO_L3_IPV4, GSO_L4_UDP, false, false, false, E_NODF },
	{ "udp4 mf", GSO_L3_IPV4, GSO_L4_UDP, false, false, false, E_MF },
	{ "udp6", GSO_L3_IPV6, GSO_L4_UDP, false, false, false, E_NONE },
};
#define N_T (sizeof(tdefs) / sizeof(tdefs[0]))

static void build(struct gso_tmpl *t, const struct tdef *d)
{
	GSO_OPTS(gso_tmpl_fields, f, .l3 = d->l3, .l4 = d->l4, .sport = 1000, .dport = 2000,
		 .has_vlan = d->vlan, .vlan_tci = d->vlan ? 7 : 0);
	uint8_t *h;

	memset(f.eth_dst, 2, 6);
	memset(f.eth_src, 4, 6);
	memset(f.saddr, 10, 16);
	memset(f.daddr, 11, 16);
	if (d->l3 == GSO_L3_IPV4) {
		f.df = d->df;
		f.ip_id = 0x1234;
	}
	if (d->l4 == GSO_L4_TCP) {
		f.seq = 1;
		f.ack = 2;
		f.window = 100;
		f.tcp_flags = GSO_TCP_ACK | (d->cwr ? GSO_TCP_CWR : 0);
	}
	cr_assert_eq(gso_tmpl__build(t, &f), 0, "%s", d->name);
	h = t->hdr;
	switch (d->edit) {
	case E_SYN: h[t->l4_off + 13] = GSO_TCP_SYN; break;
	case E_SYNACK: h[t->l4_off + 13] = GSO_TCP_SYN | GSO_TCP_ACK; break;
	case E_RST: h[t->l4_off + 13] = GSO_TCP_RST; break;
	case E_RSTACK: h[t->l4_off + 13] = GSO_TCP_RST | GSO_TCP_ACK; break;
	case E_FINPSH: h[t->l4_off + 13] |= GSO_TCP_FIN | GSO_TCP_PSH; break;
	case E_URG: h[t->l4_off + 13] |= GSO_TCP_URG; break;
	case E_MF: h[t->l3_off + 6] |= 0x20; break;
	case E_FRAGOFF: h[t->l3_off + 7] = 1; break;
	case E_DOFF: h[t->l4_off + 12] = 6 << 4; break;
	case E_PROTO: h[t->l3_off + 9] = 17; break;
	default: break;
	}
}

/* ---- super-segments: payload length, MSS, IP ID mode ---- */

struct sdef {
	uint32_t len, mss;
	uint8_t ipid;
};

static const struct sdef sdefs[] = {
	{ 0, 1448, GSO_IPID_INC },
	{ 1000, 1448, GSO_IPID_INC },
	{ 1448, 1448, GSO_IPID_INC },     /* exactly one MSS: one segment */
	{ 1449, 1448, GSO_IPID_INC },     /* one byte more: two */
	{ 10000, 1448, GSO_IPID_INC },    /* seven */
	{ 10000, 1448, GSO_IPID_FIXED },
	{ 1000, 1448, GSO_IPID_FIXED },
	{ 12800, 100, GSO_IPID_INC },     /* 128: the UDP limit */
	{ 12801, 100, GSO_IPID_INC },     /* 129 */
	{ 65535 - 60, 1, GSO_IPID_INC },  /* many segments, datagram fits when headers are 60 */
	{ 65535 - 40, 1400, GSO_IPID_INC },
	{ 65536 - 40, 1400, GSO_IPID_INC }, /* one byte over for IPv4/TCP */
	{ 1000, 0, GSO_IPID_INC },
	{ 70000, 1448, GSO_IPID_INC },
	{ 100, 65535, GSO_IPID_INC },
};
#define N_S (sizeof(sdefs) / sizeof(sdefs[0]))

static int seg_count(const struct gso_tmpl *t, const struct sdef *s)
{
	struct gso_extent e = { payload, s->len };
	struct gso_super sup = { t, &e, s->len ? 1u : 0u };
	GSO_OPTS(gso_seg_opts, o, .mss = s->mss, .ipid = s->ipid);

	return gso_seg_count(&sup, &o);
}

static int describe(const struct gso_tmpl *t, const struct sdef *s, struct gso_offload_req *r)
{
	return gso_offload_describe(t, s->len, s->mss, s->ipid == GSO_IPID_FIXED ? GSO_OFFLOAD_F_FIXEDID : 0, r);
}

/* Every encoder, for request `r` on template `t`: 0 or the encoder's errno. */
static void encode_all(const struct gso_offload_req *r, const struct gso_tmpl *t, int err[3])
{
	uint8_t hdr[GSO_MAX_HDR_LEN];
	struct gso_e1000_ctx c;
	struct gso_vnet_hdr v;
	struct gso_xsk_txmd m;

	err[0] = gso_offload_e1000(r, t, &c, hdr, sizeof(hdr));
	err[1] = gso_offload_vnet(r, t, &v, hdr, sizeof(hdr));
	err[2] = gso_offload_xsk(r, t, 0, &m, hdr, sizeof(hdr));
}

/*
 * The table: every template with every super-segment.  Software and
 * describe agree on the count or on the errno; a refused super-segment
 * cannot be encoded for any device even with a request made for its clean
 * twin; an accepted one is never called invalid by an encoder (a device
 * may still be unable to segment it: -ENOTSUP).
 */
Test(super_rules, software_and_offload_agree)
{
	unsigned refused = 0, accepted = 0;

	for (unsigned i = 0; i < N_T; i++) {
		struct gso_tmpl t, twin;
		struct tdef clean = tdefs[i];

		build(&t, &tdefs[i]);
		clean.edit = E_NONE;
		clean.df = tdefs[i].l3 == GSO_L3_IPV4;
		build(&twin, &clean);
		for (unsigned k = 0; k < N_S; k++) {
			const struct sdef *s = &sdefs[k];
			struct gso_offload_req r = { .sz = sizeof(r) }, before = { .sz = sizeof(before) };
			int n = seg_count(&t, s), err[3];

			memset(&r, 0x5a, sizeof(r));
			before = r;
			int d = describe(&t, s, &r);

			if (n < 0) {
				refused++;
				cr_assert_eq(d, n, "%s, %u bytes at mss %u ipid %u: software %d, describe %d",
					     tdefs[i].name, s->len, s->mss, s->ipid, n, d);
				cr_assert_arr_eq(&r, &before, sizeof(r), "%s: request written on error",
						 tdefs[i].name);
				/* Only the template differs from the twin: no encoder takes it. */
				if (describe(&twin, s, &r) == 0) {
					encode_all(&r, &t, err);
					for (int e = 0; e < 3; e++)
						cr_assert_eq(err[e], -EINVAL, "%s, %u bytes at mss %u: encoder %d said %d",
							     tdefs[i].name, s->len, s->mss, e, err[e]);
				}
				continue;
			}
			/* mss 0xffff is the kernel's GSO_BY_FRAGS: only the offload paths refuse it. */
			if (s->mss == 0xffff) {
				cr_assert_eq(d, -EINVAL);
				continue;
			}
			accepted++;
			cr_assert_eq(d, 0, "%s, %u bytes at mss %u ipid %u: software %d segments, describe %d",
				     tdefs[i].name, s->len, s->mss, s->ipid, n, d);
			cr_assert_eq(r.segs, (uint32_t)n, "%s: segment count", tdefs[i].name);
			encode_all(&r, &t, err);
			for (int e = 0; e < 3; e++)
				cr_assert(err[e] == 0 || err[e] == -ENOTSUP, "%s, %u bytes at mss %u: encoder %d said %d",
					  tdefs[i].name, s->len, s->mss, e, err[e]);
		}
	}
	cr_assert_gt(refused, 40);
	cr_assert_gt(accepted, 80);
}

/* The reported case, each path by name. */
Test(super_rules, multi_segment_syn_and_rst_refused_everywhere)
{
	static const enum edit bad[] = { E_SYN, E_SYNACK, E_RST, E_RSTACK };

	for (unsigned b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		struct tdef d = { "tcp4", GSO_L3_IPV4, GSO_L4_TCP, false, true, false, bad[b] };
		struct tdef clean = d;
		struct gso_tmpl t, twin;
		struct gso_offload_req r = { .sz = sizeof(r) };
		const struct sdef seven = { 10000, 1448, GSO_IPID_INC }, one = { 1448, 1448, GSO_IPID_INC };
		int err[3];

		clean.edit = E_NONE;
		build(&t, &d);
		build(&twin, &clean);
		cr_assert_eq(seg_count(&t, &seven), -EINVAL);
		cr_assert_eq(describe(&t, &seven, &r), -EINVAL, "flags %#x: describe took 7 segments",
			     t.hdr[t.l4_off + 13]);
		cr_assert_eq(describe(&twin, &seven, &r), 0);
		encode_all(&r, &t, err);
		cr_assert_eq(err[0], -EINVAL, "e1000 encoder");
		cr_assert_eq(err[1], -EINVAL, "virtio_net_hdr encoder");
		cr_assert_eq(err[2], -EINVAL, "AF_XDP metadata encoder");
		/* One segment is a legal SYN or RST. */
		cr_assert_eq(seg_count(&t, &one), 1);
		cr_assert_eq(describe(&t, &one, &r), 0);
		cr_assert_eq(r.type, GSO_OFFLOAD_NONE);
	}
}

/* ---- through the e1000 model: nothing reaches the wire ---- */

static _Atomic uint32_t frames; /* on the model's wire (gso_test_count_wire) */

static struct gso_dev *dev;

static void fini(void)
{
	gso_dev__destroy(dev);
	dev = NULL;
}

Test(super_rules, e1000_model_sends_no_multi_segment_syn_or_rst, .fini = fini)
{
	static const enum edit bad[] = { E_SYN, E_RST };
	static const unsigned modes[] = { GSO_TSO_AUTO, GSO_TSO_OFFLOAD, GSO_TSO_SOFTWARE };
	GSO_OPTS(gso_e1000_opts, o, .flags = GSO_E1000_F_NO_THREAD, .nchunks = 256, .wire_fn = gso_test_count_wire,
		 .wire_ctx = (void *)&frames);
	struct gso_dev_stats st = { .sz = sizeof(st) };
	struct gso_tx_plan plan = { .sz = sizeof(plan) };

	cr_assert_eq(gso_e1000__create(&dev, 0, &o), 0);
	for (unsigned b = 0; b < 2; b++) {
		struct tdef d = { "tcp4", GSO_L3_IPV4, GSO_L4_TCP, false, true, false, bad[b] };
		struct gso_tmpl t;

		build(&t, &d);
		for (unsigned m = 0; m < 3; m++) {
			struct gso_tso_flow flow = { .sz = sizeof(flow), .mode = (uint8_t)modes[m] };
			struct gso_tx tx = { .tmpl = &t, .data = payload, .len = 10000, .mss = 1448 };

			cr_assert_eq(gso_tso__submit(dev, &flow, &tx, 1), -EINVAL, "mode %u, flags %#x", modes[m],
				     t.hdr[t.l4_off + 13]);
			if (modes[m] != GSO_TSO_SOFTWARE)
				cr_assert_eq(gso_tso__choice(dev, &flow, &tx), -EINVAL);
		}
		struct gso_tx tx = { .tmpl = &t, .data = payload, .len = 10000, .mss = 1448 };
		cr_assert_eq(gso_dev__plan(dev, &tx, &plan), -EINVAL);
		cr_assert_eq(gso_dev__submit(dev, &tx, 1), -EINVAL);
	}
	gso_e1000__poll(dev);
	gso_dev__reap(dev, 0);
	cr_assert_eq(atomic_load(&frames), 0, "frames on the wire");
	cr_assert_eq(gso_dev__stats(dev, &st), 0);
	cr_assert_eq(st.tx_super, 0);
	cr_assert_eq(st.tx_descs, 0);

	/* A single SYN still goes out. */
	{
		struct tdef d = { "tcp4", GSO_L3_IPV4, GSO_L4_TCP, false, true, false, E_SYN };
		struct gso_tmpl t;
		struct gso_tx tx = { .tmpl = &t, .data = payload, .len = 0, .mss = 1448 };

		build(&t, &d);
		cr_assert_eq(gso_dev__submit(dev, &tx, 1), 1);
		gso_e1000__poll(dev);
		cr_assert_eq(atomic_load(&frames), 1);
	}
}
