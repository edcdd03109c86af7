/*
 * Offload or software, per super-segment (gsoi_tso_choose), for the limits of
 * the e1000 model and of the virtio_net_hdr backend: every reason, the
 * three modes, and the errors the kernel would give for what no path can
 * send.  Pure: no device is opened.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <string.h>

#include <gso/tmpl.h>
#include <gso/dev.h>

#include "dev/tsodev_internal.h"

enum lim_kind { VNET, VNET64, E1000, E1000_SEGS10, SMALL_HDR, SMALL_MSS };

static void limits(enum lim_kind k, struct tso_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->max_hdr_len = GSO_MAX_HDR_LEN;
	l->max_mss = 0xfffe;
	l->max_segs = GSO_MAX_SEGS;
	l->udp_max_segs = GSO_UDP_MAX_SEGS;
	l->max_frame = 1514;
	l->csum = true;
	l->seg_types = GSO_DEV_SEG_TCP4 | GSO_DEV_SEG_TCP6 | GSO_DEV_SEG_UDP4 | GSO_DEV_SEG_UDP6;
	switch (k) {
	case VNET64:
		l->udp_max_segs = 64;
		break;
	case E1000_SEGS10:
		l->max_segs = l->udp_max_segs = 10;
		/* fall through */
	case E1000:
		l->seg_types = GSO_DEV_SEG_TCP4 | GSO_DEV_SEG_UDP4;
		l->cwr_every_seg = true;
		break;
	case SMALL_HDR:
		l->max_hdr_len = 60;
		break;
	case SMALL_MSS:
		l->max_mss = 1000;
		break;
	default:
		break;
	}
}

struct sc {
	const char *what;
	enum lim_kind lim;
	uint8_t l3, l4, tflags, topt;
	bool df;
	uint32_t len, mss;
	uint8_t mode, flags, tx_flags, ipid;
	int err;          /* expected error, or 0 */
	uint8_t why;
	bool offload, keep_cwr;
};

#define V4 GSO_L3_IPV4
#define V6 GSO_L3_IPV6
#define TCP GSO_L4_TCP
#define UDP GSO_L4_UDP

static struct sc cases[] = {
	{ "vnet tcp4", VNET, V4, TCP, 0, 0, true, 20000, 1448, .why = GSO_TSO_WHY_OFFLOAD, .offload = true },
	{ "vnet tcp6", VNET, V6, TCP, 0, 0, false, 20000, 1428, .why = GSO_TSO_WHY_OFFLOAD, .offload = true },
	{ "vnet cwr: kernel clears it after the first", VNET, V4, TCP, GSO_TCP_CWR, 0, true, 20000, 1448,
	  .why = GSO_TSO_WHY_OFFLOAD, .offload = true },
	{ "e1000 cwr, auto", E1000, V4, TCP, GSO_TCP_CWR, 0, true, 20000, 1448, .why = GSO_TSO_WHY_ECN },
	{ "e1000 cwr, allowed", E1000, V4, TCP, GSO_TCP_CWR, 0, true, 20000, 1448,
	  .flags = GSO_TSO_F_ECN_EVERY, .why = GSO_TSO_WHY_OFFLOAD, .offload = true, .keep_cwr = true },
	{ "e1000 cwr, offload mode", E1000, V4, TCP, GSO_TCP_CWR, 0, true, 20000, 1448,
	  .mode = GSO_TSO_OFFLOAD, .why = GSO_TSO_WHY_OFFLOAD, .offload = true, .keep_cwr = true },
	{ "e1000 ece only", E1000, V4, TCP, GSO_TCP_ECE, 0, true, 20000, 1448, .why = GSO_TSO_WHY_OFFLOAD,
	  .offload = true },
	{ "e1000 tcp6", E1000, V6, TCP, 0, 0, false, 20000, 1428, .why = GSO_TSO_WHY_PROTO },
	{ "e1000 tcp6, offload mode", E1000, V6, TCP, 0, 0, false, 20000, 1428, .mode = GSO_TSO_OFFLOAD,
	  .err = -EOPNOTSUPP },
	{ "e1000 udp4", E1000, V4, UDP, 0, 0, false, 12000, 1000, .why = GSO_TSO_WHY_OFFLOAD, .offload = true },
	{ "e1000 udp6", E1000, V6, UDP, 0, 0, false, 12000, 1000, .why = GSO_TSO_WHY_PROTO },
	{ "udp 128 segments", VNET, V4, UDP, 0, 0, false, 12800, 100, .why = GSO_TSO_WHY_OFFLOAD, .offload = true },
	{ "udp 129 segments, auto", VNET, V4, UDP, 0, 0, false, 12801, 100, .why = GSO_TSO_WHY_SEGS },
	{ "udp 129 segments, offload: kernel's EINVAL", VNET, V4, UDP, 0, 0, false, 12801, 100,
	  .mode = GSO_TSO_OFFLOAD, .err = -EINVAL },
	{ "udp 65 segments, old kernel", VNET64, V4, UDP, 0, 0, false, 6401, 100, .why = GSO_TSO_WHY_SEGS },
	{ "udp 64 segments, old kernel", VNET64, V4, UDP, 0, 0, false, 6400, 100, .why = GSO_TSO_WHY_OFFLOAD,
	  .offload = true },
	{ "device max_segs", E1000_SEGS10, V4, TCP, 0, 0, true, 14481, 1448, .why = GSO_TSO_WHY_SEGS },
	{ "device max_segs exactly", E1000_SEGS10, V4, TCP, 0, 0, true, 14480, 1448,
	  .why = GSO_TSO_WHY_OFFLOAD, .offload = true },
	{ "header too long", SMALL_HDR, V4, TCP, 0, 40, true, 20000, 1400, .why = GSO_TSO_WHY_HDR_LEN },
	{ "mss too large", SMALL_MSS, V4, TCP, 0, 0, true, 20000, 1448, .why = GSO_TSO_WHY_MSS },
	{ "single packet", E1000, V4, TCP, 0, 0, true, 1448, 1448, .why = GSO_TSO_WHY_SINGLE, .offload = true },
	{ "single, software checksum", E1000, V4, TCP, 0, 0, true, 100, 1448, .tx_flags = GSO_TX_F_SW_CSUM,
	  .why = GSO_TSO_WHY_SINGLE },
	{ "single, software mode", VNET, V4, UDP, 0, 0, true, 100, 1448, .mode = GSO_TSO_SOFTWARE,
	  .why = GSO_TSO_WHY_SINGLE },
	{ "software mode", VNET, V4, TCP, 0, 0, true, 20000, 1448, .mode = GSO_TSO_SOFTWARE,
	  .why = GSO_TSO_WHY_MODE },
	{ "software checksums", VNET, V4, TCP, 0, 0, true, 20000, 1448, .tx_flags = GSO_TX_F_SW_CSUM,
	  .why = GSO_TSO_WHY_CSUM },
	{ "software checksums, offload mode", VNET, V4, TCP, 0, 0, true, 20000, 1448,
	  .tx_flags = GSO_TX_F_SW_CSUM, .mode = GSO_TSO_OFFLOAD, .err = -EOPNOTSUPP },
	{ "fixed ip id", E1000, V4, TCP, 0, 0, true, 20000, 1448, .ipid = GSO_IPID_FIXED,
	  .why = GSO_TSO_WHY_IPID },
	{ "fixed ip id without df", E1000, V4, TCP, 0, 0, false, 20000, 1448, .ipid = GSO_IPID_FIXED,
	  .err = -EINVAL },
	/* Software GSO keeps IDs fixed for UDP too; no device can: auto goes software. */
	{ "fixed ip id, udp", VNET, V4, UDP, 0, 0, true, 12000, 1000, .ipid = GSO_IPID_FIXED,
	  .why = GSO_TSO_WHY_IPID },
	{ "fixed ip id, udp, offload mode", VNET, V4, UDP, 0, 0, true, 12000, 1000, .ipid = GSO_IPID_FIXED,
	  .mode = GSO_TSO_OFFLOAD, .err = -EOPNOTSUPP },
	{ "fixed ip id, tcp6 (no effect)", VNET, V6, TCP, 0, 0, false, 20000, 1428, .ipid = GSO_IPID_FIXED,
	  .why = GSO_TSO_WHY_IPID },
	{ "mss 0", VNET, V4, TCP, 0, 0, true, 20000, 0, .err = -EINVAL },
	{ "mss 0xffff", VNET, V4, TCP, 0, 0, true, 60000, 0xffff, .err = -EINVAL },
	/* Over 64 KiB software GSO says -EMSGSIZE first, and so does every offload path. */
	{ "mss 0xffff, datagram over 64 KiB", VNET, V4, TCP, 0, 0, true, 200000, 0xffff, .err = -EMSGSIZE },
	{ "datagram over 64 KiB", VNET, V4, TCP, 0, 0, true, 65536 - 40, 1448, .err = -EMSGSIZE },
	{ "unknown mode", VNET, V4, TCP, 0, 0, true, 20000, 1448, .mode = 3, .err = -EINVAL },
	{ "unknown flag", VNET, V4, TCP, 0, 0, true, 20000, 1448, .flags = 0x80, .err = -EINVAL },
	{ "unknown tx flag", VNET, V4, TCP, 0, 0, true, 20000, 1448, .tx_flags = 0x40, .err = -EINVAL },
};

ParameterizedTestParameters(e1000_select, choose)
{
	return cr_make_param_array(struct sc, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct sc *c, e1000_select, choose)
{
	static const uint8_t opts[40] = { 1, 1, 1, 1 };
	struct tso_limits l;
	struct tso_choice ch;
	struct gso_tmpl t;
	struct gso_tx tx = { 0 };
	GSO_OPTS(gso_tmpl_fields, f, .l3 = c->l3, .l4 = c->l4, .sport = 1, .dport = 2);
	int err;

	memset(f.saddr, 1, 16);
	memset(f.daddr, 2, 16);
	if (c->l3 == V4)
		f.df = c->df;
	if (c->l4 == TCP) {
		f.tcp_flags = GSO_TCP_ACK | c->tflags;
		f.tcp_opts = opts;
		f.tcp_opts_len = c->topt;
	}
	cr_assert_eq(gso_tmpl__build(&t, &f), 0, "%s: template", c->what);
	limits(c->lim, &l);
	tx.tmpl = &t;
	tx.len = c->len;
	tx.mss = c->mss;
	tx.flags = c->tx_flags;
	tx.ipid = c->ipid;
	memset(&ch, 0xa5, sizeof(ch));
	err = gsoi_tso_choose(&l, &tx, c->mode, c->flags, &ch);
	cr_assert_eq(err, c->err, "%s: error %d, expected %d", c->what, err, c->err);
	if (err)
		return;
	cr_assert_eq(ch.why, c->why, "%s: why %s, expected %s", c->what, gso_tso_why_name(ch.why),
		     gso_tso_why_name(c->why));
	cr_assert_eq(ch.offload, c->offload, "%s: offload", c->what);
	cr_assert_eq(ch.keep_cwr, c->keep_cwr, "%s: keep_cwr", c->what);
	if (ch.offload)
		cr_assert_eq(ch.req.payload_len, c->len, "%s: request describes the super-segment", c->what);
}

Test(e1000_select, why_names)
{
	for (unsigned i = 0; i < GSO_TSO_WHY_COUNT; i++) {
		cr_assert_not_null(gso_tso_why_name(i), "reason %u", i);
		for (unsigned j = 0; j < i; j++)
			cr_assert_str_neq(gso_tso_why_name(i), gso_tso_why_name(j));
	}
	cr_assert_null(gso_tso_why_name(GSO_TSO_WHY_COUNT));
	cr_assert_str_eq(gso_tso_why_name(GSO_TSO_WHY_ECN), "ecn");
}

Test(e1000_select, flow_api_refuses_non_tso_use)
{
	struct gso_tso_stats st = { .sz = sizeof(st) };

	cr_assert_eq(gso_tso__stats(NULL, &st), -EINVAL);
	cr_assert_eq(gso_tso__set_mode(NULL, GSO_TSO_AUTO, 0), -EINVAL);
	cr_assert_eq(gso_tso__submit(NULL, NULL, NULL, 1), -EINVAL);
}
