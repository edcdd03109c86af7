/*
 * TCP super-segments through AF_XDP into a real, established Linux TCP
 * connection.  A kernel client on side a connects to a listener on side b;
 * the client is then put in repair mode (silent: it sends nothing more) and
 * its sequence numbers are read, and the AF_XDP device sends the stream's
 * next bytes in its place.  The stock TCP stack on side b must deliver
 * every byte in order: it drops segments with bad checksums, wrong
 * sequence numbers or wrong lengths, so the byte stream is the check.
 * Timestamps are off on side a, so that segments need no TS option.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "test_xsk_util.h"

TestSuite(xsk_tcp, .fini = xt_fini, .timeout = 60);

struct tcp_case {
	char name[48];
	bool v6;
	uint32_t xflags;
	uint32_t mss;
	uint32_t len;
};

ParameterizedTestParameters(xsk_tcp, stream)
{
	static struct tcp_case c[] = {
		{ "v4, checksum metadata, multi-buffer", false, 0, 1448, 30000 },
		{ "v4, software checksums, multi-buffer", false, GSO_XSK_F_NO_CSUM, 1448, 30000 },
		{ "v4, software checksums, copied frames", false, GSO_XSK_F_NO_CSUM | GSO_XSK_F_NO_SG, 1000, 29999 },
		{ "v4, kernel-finished checksums", false, GSO_XSK_F_KERNEL_CSUM, 1448, 30000 },
		{ "v6, checksum metadata, multi-buffer", true, 0, 1428, 30000 },
		{ "v6, software checksums, copied frames", true, GSO_XSK_F_NO_CSUM | GSO_XSK_F_NO_SG, 1200, 25001 },
	};
	return cr_make_param_array(struct tcp_case, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct tcp_case *c, xsk_tcp, stream)
{
	static uint8_t got[40000];
	uint32_t snd_nxt, rcv_nxt;
	uint16_t sport;
	uint64_t rng = 77 + c->len;
	struct gso_buf buf;

	gso_test_require_root();
	cr_log_info("case: %s", c->name);
	xt_bed(0);
	xt_tcp_connect(c->v6, &snd_nxt, &rcv_nxt, &sport);
	xt_tmpl(c->v6, GSO_L4_TCP, snd_nxt, rcv_nxt, sport, XT_PORT_RX);
	GSO_OPTS(gso_xsk_opts, o, .flags = c->xflags);
	xt_open(&o);
	cr_assert_eq(gso_dev__buf_alloc(xt_g.dev, 3 * c->len, &buf), 0);
	gso_test_fill_random(buf.data, 3 * c->len, &rng);

	/* Three super-segments in a row, each read before the next (stays inside b's window). */
	for (uint32_t k = 0; k < 3; k++) {
		cr_assert_eq(gso_tmpl__set_tcp_seq(&xt_g.tmpl, snd_nxt + k * c->len), 0);
		struct gso_tx tx = { .tmpl = &xt_g.tmpl, .buf = &buf, .off = k * c->len, .len = c->len, .mss = c->mss };
		int r = gso_dev__submit(xt_g.dev, &tx, 1);
		cr_assert_eq(r, 1, "super-segment %u: %d (%s)", k, r, strerror(-r));
		xt_tcp_recv_all(got, c->len);
		cr_assert_eq(memcmp(got, buf.data + k * c->len, c->len), 0, "super-segment %u: stream bytes differ", k);
		/* The ACK covered it: release that part of the buffer. */
		cr_assert_geq(gso_dev__buf_release(xt_g.dev, &buf, (k + 1) * c->len), 0);
	}
	xt_drain();
	struct gso_dev_stats st = xt_stats();
	cr_assert_eq(st.tx_super, 3);
	cr_assert_eq(st.kernel_invalid, 0);
	xt_check_accounting();
	gso_dev__buf_free(xt_g.dev, &buf);
	gso_dev__close(xt_g.dev);
	st = xt_stats();
	cr_assert_eq(st.chunks_free, st.chunks_total);
}
