/*
 * Size fields of libgso's caller-allocated results and descriptors
 * (CONTRIBUTING.md, C7): sz 0 or one that does not reach past the sz field
 * is -EINVAL with nothing written; a short sz is filled up to sz and read
 * back with the missing fields as 0; a larger one is filled up to this
 * build's struct and sz says how much was written.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <gso/gso.h>

static struct gso_tmpl tcp4(void)
{
	GSO_OPTS(gso_tmpl_fields, f, .l3 = GSO_L3_IPV4, .l4 = GSO_L4_TCP, .df = true, .sport = 1,
		 .dport = 2, .tcp_flags = GSO_TCP_ACK);
	struct gso_tmpl t;

	cr_assert_eq(gso_tmpl__build(&t, &f), 0);
	return t;
}

Test(struct_sz, burst)
{
	GSO_OPTS(gso_burst_in, in, .rate = 125000000, .queued = 1 << 20, .mss = 1448, .hdr_len = 54,
		 .cwnd = 100, .peer_wnd = UINT32_MAX);
	struct gso_burst b, ref;
	struct {
		struct gso_burst b;
		uint8_t more[8];
	} big;
	int n;

	memset(&b, 0xa5, sizeof(b));
	for (size_t sz = 0; sz <= sizeof(size_t); sz++) {
		b.sz = sz;
		ref = b;
		cr_expect_eq(gso_burst_size(&in, NULL, &b), -EINVAL, "sz %zu", sz);
		cr_expect_eq(memcmp(&b, &ref, sizeof(b)), 0);
	}
	b.sz = offsetof(struct gso_burst, bytes); /* segs only */
	n = gso_burst_size(&in, NULL, &b);
	cr_assert_gt(n, 0);
	cr_expect_eq(b.sz, offsetof(struct gso_burst, bytes));
	cr_expect_eq(b.segs, (uint32_t)n);
	cr_expect_eq(b.bytes, 0xa5a5a5a5u, "past sz: not written");

	memset(&big, 0x5a, sizeof(big));
	big.b.sz = sizeof(big);
	cr_assert_eq(gso_burst_size(&in, NULL, &big.b), n);
	cr_expect_eq(big.b.sz, sizeof(struct gso_burst), "sz: the bytes written");
	cr_expect_eq(big.more[0], 0x5a);
}

Test(struct_sz, flowq_tx_and_ack_res)
{
	GSO_OPTS(gso_flowq_opts, o, .max_entries = 64);
	struct gso_flowq *q;
	struct gso_flowq_tx tx, ref;
	struct gso_flowq_ack_res res, rref;
	struct gso_flowq_rel rel[65];

	cr_assert_eq(gso_flowq__create(&q, &o), 0);
	cr_assert_eq(gso_flowq__append(q, 1, 0, 4 * 1448, 1448), 0);

	memset(&tx, 0xa5, sizeof(tx));
	for (size_t sz = 0; sz <= sizeof(size_t); sz++) {
		tx.sz = sz;
		ref = tx;
		cr_expect_eq(gso_flowq__peek(q, 4, &tx), -EINVAL, "sz %zu", sz);
		cr_expect_eq(memcmp(&tx, &ref, sizeof(tx)), 0);
		cr_expect_eq(gso_flowq__sent(q, &tx, 1), -EINVAL, "sent, sz %zu", sz);
	}
	/* Short: fields past sz are not written, and read back as 0 (mss 0: -EINVAL). */
	tx.sz = offsetof(struct gso_flowq_tx, mss);
	cr_assert_eq(gso_flowq__peek(q, 4, &tx), 1);
	cr_expect_eq(tx.len, 4 * 1448u);
	cr_expect_eq(tx.mss, 0xa5a5a5a5u);
	cr_expect_eq(gso_flowq__sent(q, &tx, 1), -EINVAL);

	tx.sz = sizeof(tx);
	cr_assert_eq(gso_flowq__peek(q, 4, &tx), 1);
	cr_assert_eq(gso_flowq__sent(q, &tx, 1), 0);

	GSO_OPTS(gso_flowq_ack, a, .now_ns = 1000, .ack = 4 * 1448, .wnd = 1 << 20);
	memset(&res, 0xa5, sizeof(res));
	for (size_t sz = 0; sz <= sizeof(size_t); sz++) {
		res.sz = sz;
		rref = res;
		cr_expect_eq(gso_flowq__ack(q, &a, &res, rel, 65), -EINVAL, "sz %zu", sz);
		cr_expect_eq(memcmp(&res, &rref, sizeof(res)), 0);
	}
	res.sz = sizeof(res);
	cr_assert_eq(gso_flowq__ack(q, &a, &res, rel, 65), 0);
	cr_expect_eq(res.acked_bytes, 4 * 1448u);
	cr_expect_eq(res.sz, sizeof(res));
	gso_flowq__destroy(q);
}

Test(struct_sz, offload_req)
{
	struct gso_tmpl t = tcp4();
	struct gso_offload_req r, ref;
	struct gso_vnet_hdr h;
	uint8_t hdr[GSO_MAX_HDR_LEN + 1];

	memset(&r, 0xa5, sizeof(r));
	for (size_t sz = 0; sz <= sizeof(size_t); sz++) {
		r.sz = sz;
		ref = r;
		cr_expect_eq(gso_offload_describe(&t, 10000, 1000, 0, &r), -EINVAL, "sz %zu", sz);
		cr_expect_eq(memcmp(&r, &ref, sizeof(r)), 0);
	}
	/* Described in full, then handed to an encoder with a short sz: refused. */
	r.sz = sizeof(r);
	cr_assert_eq(gso_offload_describe(&t, 10000, 1000, 0, &r), 0);
	cr_assert_eq(gso_offload_vnet(&r, &t, &h, hdr, sizeof(hdr)), 0);
	r.sz = offsetof(struct gso_offload_req, flags);
	cr_expect_eq(gso_offload_vnet(&r, &t, &h, hdr, sizeof(hdr)), -EINVAL);
	r.sz = 0;
	cr_expect_eq(gso_offload_vnet(&r, &t, &h, hdr, sizeof(hdr)), -EINVAL);
}

