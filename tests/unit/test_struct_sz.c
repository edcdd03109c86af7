/*
 * Size fields of libgso's caller-allocated results and descriptors
 * (CONTRIBUTING.md, C7): sz 0 (`= {0}`) is the whole struct, filled and
 * sz set; one that does not reach past the sz field is -EINVAL with
 * nothing written; a short sz is filled up to sz and read back with the
 * missing fields as 0; a larger one is filled up to this build's struct
 * and sz says how much was written.  Options and inputs with sz 0 are all
 * defaults when all zero and -EINVAL otherwise; state in caller memory
 * (gso_pacer, gso_rtt) that was never initialised is refused loudly.
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
	for (size_t sz = 1; sz <= sizeof(size_t); sz++) {
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
	for (size_t sz = 1; sz <= sizeof(size_t); sz++) {
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
	for (size_t sz = 1; sz <= sizeof(size_t); sz++) {
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
	for (size_t sz = 1; sz <= sizeof(size_t); sz++) {
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


/* As a user writes them: `= {0}` results are filled whole. */
Test(struct_sz, zero_results_filled_whole)
{
	GSO_OPTS(gso_burst_in, in, .rate = 125000000, .queued = 1 << 20, .mss = 1448, .hdr_len = 54,
		 .cwnd = 100, .peer_wnd = UINT32_MAX);
	GSO_OPTS(gso_flowq_opts, o, .max_entries = 64);
	struct gso_burst b = { 0 };
	struct gso_flowq_tx tx = { 0 };
	struct gso_flowq_ack_res res = { 0 };
	struct gso_flowq_rel rel[65];
	struct gso_offload_req r = { 0 };
	struct gso_tmpl t = tcp4();
	struct gso_flowq *q;
	int n;

	n = gso_burst_size(&in, NULL, &b);
	cr_assert_gt(n, 0);
	cr_expect_eq(b.sz, sizeof(b));
	cr_expect_eq(b.segs, (uint32_t)n);
	cr_expect_gt(b.wire_bytes, 0);

	cr_assert_eq(gso_flowq__create(&q, &o), 0);
	cr_assert_eq(gso_flowq__append(q, 1, 0, 4 * 1448, 1448), 0);
	cr_assert_eq(gso_flowq__peek(q, 4, &tx), 1);
	cr_expect_eq(tx.sz, sizeof(tx));
	cr_expect_eq(tx.mss, 1448u);
	cr_assert_eq(gso_flowq__sent(q, &tx, 1), 0);
	GSO_OPTS(gso_flowq_ack, a, .now_ns = 1000, .ack = 4 * 1448, .wnd = 1 << 20);
	cr_assert_eq(gso_flowq__ack(q, &a, &res, rel, 65), 0);
	cr_expect_eq(res.sz, sizeof(res));
	cr_expect_eq(res.acked_bytes, 4 * 1448u);
	gso_flowq__destroy(q);

	cr_assert_eq(gso_offload_describe(&t, 10000, 1000, 0, &r), 0);
	cr_expect_eq(r.sz, sizeof(r));
}

/* Options and inputs with sz 0: all zero is all defaults; a field set without sz is -EINVAL. */
Test(struct_sz, zero_sz_options)
{
	struct gso_burst_in in = { 0 };
	struct gso_burst_opts bo = { 0 };
	struct gso_pacer_opts po = { 0 };
	struct gso_pacer p = { .sz = sizeof(p) };

	cr_expect_eq(gso_pacer__init(&p, &po), 0, "all zero: the defaults");
	po.flags = GSO_PACER_F_PACE_ALL;
	cr_expect_eq(gso_pacer__init(&p, &po), -EINVAL, "a field set with sz 0 would be ignored");

	in.rate = 125000000;
	in.queued = 1 << 20;
	in.mss = 1448;
	in.cwnd = 100;
	in.peer_wnd = UINT32_MAX;
	cr_expect_eq(gso_burst_size(&in, &bo, NULL), -EINVAL, "input filled without sz");
	in.sz = sizeof(in);
	cr_expect_gt(gso_burst_size(&in, &bo, NULL), 0, "all-zero options: the defaults");
	bo.min_segs = 4;
	cr_expect_eq(gso_burst_size(&in, &bo, NULL), -EINVAL, "options filled without sz");
}

/* A pacer or RTT estimator that was never initialised fails loudly at its first use. */
Test(struct_sz, state_never_initialised)
{
	struct gso_pacer p = { 0 }, g;
	struct gso_rtt r = { 0 };
	uint64_t dep = 12345;

	cr_expect_eq(gso_pacer__stamp(&p, 1000, 1000000, 1500, 1, &dep), -EINVAL);
	cr_expect_eq(dep, 12345u);
	cr_expect_eq(gso_pacer__refund(&p, 1000000, 1500, 0), -EINVAL);
	cr_expect_eq(gso_pacer__next(&p), UINT64_MAX, "never, not now");
	memset(&g, 0x5a, sizeof(g)); /* stack garbage */
	cr_expect_eq(gso_pacer__stamp(&g, 1000, 1000000, 1500, 1, &dep), -EINVAL);
	cr_expect_eq(gso_pacer__next(&g), UINT64_MAX);

	/* A failed init (unknown flag) leaves it unusable too. */
	GSO_OPTS(gso_pacer_opts, bad, .flags = 1u << 30);
	p.sz = sizeof(p);
	cr_expect_eq(gso_pacer__init(&p, &bad), -EINVAL);
	cr_expect_eq(gso_pacer__stamp(&p, 1000, 1000000, 1500, 1, &dep), -EINVAL);

	/* sz 0 at init: the whole struct. */
	p.sz = 0;
	cr_assert_eq(gso_pacer__init(&p, NULL), 0);
	cr_expect_eq(p.sz, sizeof(p));
	cr_expect_eq(gso_pacer__stamp(&p, 1000, 1000000, 1500, 1, &dep), 0);
	p.sz = sizeof(p) - 1;
	cr_expect_eq(gso_pacer__init(&p, NULL), -EINVAL);

	cr_expect_eq(gso_rtt__update(&r, 1000, 50000), -EINVAL);
	cr_expect_eq(gso_rtt__rto(&r), GSO_RTT_INIT_RTO_NS);
	cr_assert_eq(gso_rtt__init(&r, 0), 0);
	cr_expect_eq(r.sz, sizeof(r));
	cr_expect_eq(gso_rtt__update(&r, 1000, 50000), 0);
	cr_expect_eq(r.srtt_ns, 50000u);
}

/*
 * sz 0 stands for the struct of the first release (opts_internal.h,
 * GSO_SZ0): if a struct grows, this fails, and GSO_SZ0 must keep the old
 * size for it, or a caller built against the old header who writes
 * `= {0}` gets more bytes than its struct has.  (x86-64 / LP64 sizes.)
 */
Test(struct_sz, sz0_sizes_pinned)
{
	cr_expect_eq(sizeof(struct gso_burst), 40);
	cr_expect_eq(sizeof(struct gso_pacer), 56);
	cr_expect_eq(sizeof(struct gso_rtt), 64);
}
