/*
 * libgso's public functions with NULL pointers (and zero or all-ones
 * sizes, counts and indices), header by header: each call gives what its
 * header promises, never a crash.  The table format is null_args.h's.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gso/gso.h>

#include "null_args.h"

/* ---- valid arguments for the parameters that are not under test ---- */

static _Alignas(64) uint8_t buf[256], obuf[256];

/* Caller memory of `len` bytes for an __init (64-byte aligned; kept, not leaked). */
static void *mem(size_t len)
{
	static void *kept[8];
	static unsigned n;
	void *m = aligned_alloc(64, (len + 63) / 64 * 64);

	cr_assert(m && n < 8);
	return kept[n++] = m;
}

static const struct gso_tmpl *tmpl(void)
{
	static struct gso_tmpl t;
	GSO_OPTS(gso_tmpl_fields, f, .l3 = GSO_L3_IPV4, .l4 = GSO_L4_TCP, .df = true, .sport = 1, .dport = 2,
		 .tcp_flags = GSO_TCP_ACK);

	if (!t.hdr_len)
		cr_assert_eq(gso_tmpl__build(&t, &f), 0);
	return &t;
}

static struct gso_tmpl *tmpl_rw(void)
{
	static struct gso_tmpl t;

	t = *tmpl();
	return &t;
}

/* The template's headers as a header-only frame (its lengths say so). */
static uint8_t *frame(void)
{
	memcpy(buf, tmpl()->hdr, tmpl()->hdr_len);
	return buf;
}
#define FRAME_LEN (tmpl()->hdr_len)

static const struct gso_offload_req *req(uint32_t payload)
{
	static struct gso_offload_req r;

	r = (struct gso_offload_req){ .sz = sizeof(r) };
	cr_assert_eq(gso_offload_describe(tmpl(), payload, 1000, 0, &r), 0);
	return &r;
}

static const struct gso_seg_opts seg_o = { .sz = sizeof(seg_o), .mss = 1000 };
static const struct gso_extent ext = { buf, 100 };
static const struct gso_super *super(void)
{
	static struct gso_super s;

	s = (struct gso_super){ tmpl(), &ext, 1 };
	return &s;
}
static struct gso_frame frames[4] = { { .buf = obuf, .cap = sizeof(obuf) } };
static struct gso_seg_ref refs[4] = { { .hdr = obuf, .hdr_cap = sizeof(obuf) } };

static struct gso_vnet_hdr vh = { .gso_type = GSO_VNET_HDR_GSO_NONE };
static struct gso_e1000_ctx ectx = { .tucmd = GSO_E1000_CMD_DEXT };
static struct gso_e1000_data edata = { .len = 1, .dcmd = GSO_E1000_CMD_DEXT };
static struct gso_xsk_txmd txmd;

static const struct gso_burst_in *burst_in(void)
{
	static struct gso_burst_in in;

	in = (struct gso_burst_in){ .sz = sizeof(in), .rate = 1000000, .queued = 100000, .mss = 1000, .cwnd = 10,
				    .peer_wnd = UINT32_MAX };
	return &in;
}
static const struct gso_burst_opts burst_o0; /* all zero: the defaults */
static struct gso_burst burst_out = { .sz = sizeof(burst_out) };

static struct gso_pacer *pacer(void)
{
	static struct gso_pacer p;

	cr_assert_eq(gso_pacer__init(&p, NULL), 0);
	return &p;
}
static struct gso_aggr *aggr(void)
{
	static struct gso_aggr a;

	cr_assert_eq(gso_aggr__init(&a), 0);
	return &a;
}
static struct gso_aggr_info aggr_info;
static struct gso_aggr_policy aggr_pol;
static uint64_t u64;
static uint32_t u32;
static uint16_t u16;
static uint8_t u8;
static bool flag;

static const struct gso_sched_opts sched_o = { .sz = sizeof(sched_o), .max_flows = 4, .max_bursts = 8 };
#define SCHED_MEM mem(gso_sched__mem_size(&sched_o)), gso_sched__mem_size(&sched_o)
static struct gso_sched *sched(void)
{
	static struct gso_sched *s;

	if (!s) {
		cr_assert_eq(gso_sched__init(&s, SCHED_MEM, &sched_o), 0);
		cr_assert_eq(gso_sched__flow_add(s, NULL, &u32), 0);
		cr_assert_eq(u32, 0);
	}
	return s;
}
static struct gso_sched_burst sburst = { .wire_bytes = 100, .segs = 1 };
static struct gso_sched_stats sched_st = { .sz = sizeof(sched_st) };
static struct gso_sched *sched_out;

#define CC_MEM mem(gso_cc__mem_size()), gso_cc__mem_size()
static const struct gso_cc_opts cc_o = { .sz = sizeof(cc_o), .mss = 1000 };
static struct gso_cc *cc(void)
{
	static struct gso_cc *c;

	if (!c)
		cr_assert_eq(gso_cc__init(&c, CC_MEM, &cc_o), 0);
	return c;
}
static struct gso_cc *cc_out;
static struct gso_cc_ack cc_ack = { .sz = sizeof(cc_ack) };
static struct gso_cc_state cc_st = { .sz = sizeof(cc_st) };
static struct gso_cc_bbr_info bbr = { .sz = sizeof(bbr) };
static struct gso_rtt rtt;

#define FQ_MEM mem(gso_flowq__mem_size(NULL)), gso_flowq__mem_size(NULL)
static struct gso_flowq *fq(void)
{
	static struct gso_flowq *q;

	if (!q)
		cr_assert_eq(gso_flowq__init(&q, FQ_MEM, NULL), 0);
	return q;
}
static struct gso_flowq *fq_out;
static struct gso_flowq_tx fq_tx = { .sz = sizeof(fq_tx) };
static struct gso_flowq_ack fq_ack = { .sz = sizeof(fq_ack) };
static struct gso_flowq_ack_res fq_res = { .sz = sizeof(fq_res) };
static struct gso_flowq_rel fq_rel[4];
static struct gso_rate_sample fq_rs = { .sz = sizeof(fq_rs) };
static struct gso_flowq_info fq_info = { .sz = sizeof(fq_info) };
static const struct gso_flowq_opts fq_o0; /* all zero: the defaults */

/* gso_flowq__create() with NULL options makes a queue: 0 if it did. */
static int flowq_create_defaults(void)
{
	struct gso_flowq *q = NULL;
	int err = gso_flowq__create(&q, NULL);

	gso_flowq__destroy(q);
	return err ? err : !q;
}

/* ---- the rows, header by header ---- */

#define CSUM_ROWS(R, C, N)                                                                          \
	R(gso_csum_partial, buf, gso_csum_partial(NULL, 0, 0x1234), 0x1234)                          \
	C(gso_csum_partial, buf, "NULL only with len 0: a partial sum has no error value")           \
	R(gso_csum_copy, dst, gso_csum_copy(NULL, buf, 0, 0x1234), 0x1234)                           \
	R(gso_csum_copy, src, gso_csum_copy(obuf, NULL, 0, 0x1234), 0x1234)                          \
	C(gso_csum_copy, dst, "NULL only with len 0: a partial sum has no error value")              \
	C(gso_csum_copy, src, "NULL only with len 0: a partial sum has no error value")              \
	C(gso_csum_pseudo4, saddr, "never NULL: a partial sum has no error value")                   \
	C(gso_csum_pseudo4, daddr, "never NULL: a partial sum has no error value")                   \
	C(gso_csum_pseudo6, saddr, "never NULL: a partial sum has no error value")                   \
	C(gso_csum_pseudo6, daddr, "never NULL: a partial sum has no error value")                   \
	R(gso_csum_replace2, all1, gso_csum_replace2(0x1234, 0xffff, 0xffff), 0x1234)                \
	R(gso_csum_replace4, all1, gso_csum_replace4(0x1234, ~0u, ~0u), 0x1234)                      \
	R(gso_csum_select, all1, gso_csum_select((enum gso_csum_impl)~0u), -EINVAL)                 \
	R(gso_csum_select, count, gso_csum_select(GSO_CSUM_IMPL_COUNT), -EINVAL)                     \
	R(gso_csum_current, never_auto, gso_csum_current() != GSO_CSUM_IMPL_AUTO, 1)                 \
	R(gso_csum_impl_name, count, NULLARG_PTR(gso_csum_impl_name(GSO_CSUM_IMPL_COUNT)), 0)        \
	R(gso_csum_impl_name, all1, NULLARG_PTR(gso_csum_impl_name((enum gso_csum_impl)~0u)), 0)     \
	R(gso_csum_impl_supported, all1, gso_csum_impl_supported((enum gso_csum_impl)~0u), 0)

#define TMPL_ROWS(R, C, N)                                                                          \
	R(gso_tmpl__parse, t, gso_tmpl__parse(NULL, frame(), FRAME_LEN), -EINVAL)                     \
	R(gso_tmpl__parse, buf, gso_tmpl__parse(tmpl_rw(), NULL, FRAME_LEN), -EINVAL)                 \
	R(gso_tmpl__parse, len0, gso_tmpl__parse(tmpl_rw(), frame(), 0), -ENODATA)                    \
	R(gso_tmpl__parse_pkt, t, gso_tmpl__parse_pkt(NULL, frame(), FRAME_LEN, NULL, NULL), -EINVAL) \
	R(gso_tmpl__parse_pkt, frame, gso_tmpl__parse_pkt(tmpl_rw(), NULL, FRAME_LEN, NULL, NULL), -EINVAL) \
	R(gso_tmpl__parse_pkt, payload_off, gso_tmpl__parse_pkt(tmpl_rw(), frame(), FRAME_LEN, NULL, &u64), 0) \
	R(gso_tmpl__parse_pkt, payload_len, gso_tmpl__parse_pkt(tmpl_rw(), frame(), FRAME_LEN, &u64, NULL), 0) \
	R(gso_tmpl__build, t, gso_tmpl__build(NULL, &(struct gso_tmpl_fields){ 0 }), -EINVAL)         \
	R(gso_tmpl__build, f, gso_tmpl__build(tmpl_rw(), NULL), -EINVAL)                              \
	R(gso_tmpl__tcp_seq, t, gso_tmpl__tcp_seq(NULL, &u32), -EINVAL)                               \
	R(gso_tmpl__tcp_seq, seq, gso_tmpl__tcp_seq(tmpl(), NULL), -EINVAL)                           \
	R(gso_tmpl__tcp_flags, t, gso_tmpl__tcp_flags(NULL, &u8), -EINVAL)                            \
	R(gso_tmpl__tcp_flags, flags, gso_tmpl__tcp_flags(tmpl(), NULL), -EINVAL)                     \
	R(gso_tmpl__ip_id, t, gso_tmpl__ip_id(NULL, &u16), -EINVAL)                                   \
	R(gso_tmpl__ip_id, id, gso_tmpl__ip_id(tmpl(), NULL), -EINVAL)                                \
	R(gso_tmpl__df, t, gso_tmpl__df(NULL, &flag), -EINVAL)                                        \
	R(gso_tmpl__df, df, gso_tmpl__df(tmpl(), NULL), -EINVAL)                                      \
	R(gso_tmpl__set_tcp_seq, t, gso_tmpl__set_tcp_seq(NULL, ~0u), -EINVAL)                        \
	R(gso_tmpl__set_tcp_ack, t, gso_tmpl__set_tcp_ack(NULL, ~0u, 0xffff), -EINVAL)                \
	R(gso_tmpl__set_tcp_flags, t, gso_tmpl__set_tcp_flags(NULL, GSO_TCP_ACK), -EINVAL)            \
	R(gso_tmpl__set_tcp_flags, all1, gso_tmpl__set_tcp_flags(tmpl_rw(), 0xff), -EINVAL)           \
	R(gso_tmpl__set_ip_id, t, gso_tmpl__set_ip_id(NULL, 0xffff), -EINVAL)

#define SEG_ROWS(R, C, N)                                                                           \
	R(gso_seg_count, s, gso_seg_count(NULL, &seg_o), -EINVAL)                                     \
	R(gso_seg_count, o, gso_seg_count(super(), NULL), -EINVAL)                                    \
	R(gso_segment, s, gso_segment(NULL, &seg_o, frames, 4), -EINVAL)                              \
	R(gso_segment, o, gso_segment(super(), NULL, frames, 4), -EINVAL)                             \
	R(gso_segment, out, gso_segment(super(), &seg_o, NULL, 4), -EINVAL)                           \
	R(gso_segment, n_out0, gso_segment(super(), &seg_o, frames, 0), -ENOSPC)                      \
	R(gso_segment_ref, s, gso_segment_ref(NULL, &seg_o, refs, 4), -EINVAL)                        \
	R(gso_segment_ref, o, gso_segment_ref(super(), NULL, refs, 4), -EINVAL)                       \
	R(gso_segment_ref, out, gso_segment_ref(super(), &seg_o, NULL, 4), -EINVAL)                   \
	R(gso_segment_ref, n_out0, gso_segment_ref(super(), &seg_o, refs, 0), -ENOSPC)

#define OFFLOAD_ROWS(R, C, N)                                                                       \
	R(gso_offload_describe, t, gso_offload_describe(NULL, 100, 1000, 0, &(struct gso_offload_req){ 0 }), -EINVAL) \
	R(gso_offload_describe, r, gso_offload_describe(tmpl(), 100, 1000, 0, NULL), -EINVAL)          \
	R(gso_offload_describe, mss0, gso_offload_describe(tmpl(), 100, 0, 0, &(struct gso_offload_req){ 0 }), -EINVAL) \
	R(gso_offload_describe, flags_all1, gso_offload_describe(tmpl(), 100, 1000, ~0u, &(struct gso_offload_req){ 0 }), -EINVAL) \
	R(gso_vnet_hdr_encode, h, gso_vnet_hdr_encode(NULL, buf, GSO_VNET_HDR_LEN), -EINVAL)           \
	R(gso_vnet_hdr_encode, out, gso_vnet_hdr_encode(&vh, NULL, GSO_VNET_HDR_LEN), -EINVAL)         \
	R(gso_vnet_hdr_encode, len0, gso_vnet_hdr_encode(&vh, buf, 0), -EINVAL)                        \
	R(gso_vnet_hdr_decode, in, gso_vnet_hdr_decode(NULL, GSO_VNET_HDR_LEN, &vh), -EINVAL)          \
	R(gso_vnet_hdr_decode, h, gso_vnet_hdr_decode(buf, GSO_VNET_HDR_LEN, NULL), -EINVAL)           \
	R(gso_vnet_hdr_check, h, gso_vnet_hdr_check(NULL, 100), -EINVAL)                               \
	R(gso_offload_vnet, r, gso_offload_vnet(NULL, tmpl(), &vh, buf, sizeof(buf)), -EINVAL)         \
	R(gso_offload_vnet, t, gso_offload_vnet(req(100), NULL, &vh, buf, sizeof(buf)), -EINVAL)       \
	R(gso_offload_vnet, h, gso_offload_vnet(req(100), tmpl(), NULL, buf, sizeof(buf)), -EINVAL)    \
	R(gso_offload_vnet, hdr_out, gso_offload_vnet(req(100), tmpl(), &vh, NULL, sizeof(buf)), -EINVAL) \
	R(gso_e1000_desc_kind, desc, gso_e1000_desc_kind(NULL), GSO_E1000_RESERVED)                    \
	R(gso_e1000_ctx_encode, c, gso_e1000_ctx_encode(NULL, buf), -EINVAL)                           \
	R(gso_e1000_ctx_encode, out, gso_e1000_ctx_encode(&ectx, NULL), -EINVAL)                       \
	R(gso_e1000_data_encode, d, gso_e1000_data_encode(NULL, buf), -EINVAL)                         \
	R(gso_e1000_data_encode, out, gso_e1000_data_encode(&edata, NULL), -EINVAL)                    \
	R(gso_e1000_ctx_decode, in, gso_e1000_ctx_decode(NULL, &ectx), -EINVAL)                        \
	R(gso_e1000_ctx_decode, c, gso_e1000_ctx_decode(buf, NULL), -EINVAL)                           \
	R(gso_e1000_data_decode, in, gso_e1000_data_decode(NULL, &edata), -EINVAL)                     \
	R(gso_e1000_data_decode, d, gso_e1000_data_decode(buf, NULL), -EINVAL)                         \
	R(gso_offload_e1000, r, gso_offload_e1000(NULL, tmpl(), &ectx, buf, sizeof(buf)), -EINVAL)     \
	R(gso_offload_e1000, t, gso_offload_e1000(req(3000), NULL, &ectx, buf, sizeof(buf)), -EINVAL)  \
	R(gso_offload_e1000, c, gso_offload_e1000(req(3000), tmpl(), NULL, buf, sizeof(buf)), -EINVAL) \
	R(gso_offload_e1000, hdr_out, gso_offload_e1000(req(3000), tmpl(), &ectx, NULL, sizeof(buf)), -EINVAL) \
	R(gso_offload_e1000_data, r, gso_offload_e1000_data(NULL, 4096, 100, true, 0, &edata, 1), -EINVAL) \
	R(gso_offload_e1000_data, out, gso_offload_e1000_data(req(3000), 4096, 100, true, 0, NULL, 1), -EINVAL) \
	R(gso_offload_e1000_data, len0, gso_offload_e1000_data(req(3000), 4096, 0, true, 0, &edata, 1), -EINVAL) \
	R(gso_offload_e1000_data, n_out0, gso_offload_e1000_data(req(3000), 4096, 100, true, 0, &edata, 0), -ENOSPC) \
	R(gso_offload_e1000_data, addr_all1, gso_offload_e1000_data(req(3000), ~0ull, 100, true, 0, &edata, 1), -EOVERFLOW) \
	R(gso_xsk_txmd_encode, m, gso_xsk_txmd_encode(NULL, buf), -EINVAL)                            \
	R(gso_xsk_txmd_encode, out, gso_xsk_txmd_encode(&txmd, NULL), -EINVAL)                        \
	R(gso_xsk_txmd_decode, in, gso_xsk_txmd_decode(NULL, &txmd), -EINVAL)                         \
	R(gso_xsk_txmd_decode, m, gso_xsk_txmd_decode(buf, NULL), -EINVAL)                            \
	R(gso_offload_xsk, r, gso_offload_xsk(NULL, tmpl(), 0, &txmd, buf, sizeof(buf)), -EINVAL)     \
	R(gso_offload_xsk, t, gso_offload_xsk(req(100), NULL, 0, &txmd, buf, sizeof(buf)), -EINVAL)   \
	R(gso_offload_xsk, m, gso_offload_xsk(req(100), tmpl(), 0, NULL, buf, sizeof(buf)), -EINVAL)  \
	R(gso_offload_xsk, hdr_out, gso_offload_xsk(req(100), tmpl(), 0, &txmd, NULL, sizeof(buf)), -EINVAL) \
	R(gso_offload_seed_frame, t, gso_offload_seed_frame(NULL, frame(), FRAME_LEN, &u16, &u16), -EINVAL) \
	R(gso_offload_seed_frame, frame, gso_offload_seed_frame(tmpl(), NULL, FRAME_LEN, &u16, &u16), -EINVAL) \
	R(gso_offload_seed_frame, csum_start, gso_offload_seed_frame(tmpl(), frame(), FRAME_LEN, NULL, &u16), 0) \
	R(gso_offload_seed_frame, csum_offset, gso_offload_seed_frame(tmpl(), frame(), FRAME_LEN, &u16, NULL), 0)

#define PACER_ROWS(R, C, N)                                                                         \
	R(gso_burst_size, in, gso_burst_size(NULL, NULL, &burst_out), -EINVAL)                        \
	R(gso_burst_size, o, gso_burst_size(burst_in(), NULL, NULL) == gso_burst_size(burst_in(), &burst_o0, NULL), 1) \
	R(gso_burst_size, out, gso_burst_size(burst_in(), NULL, NULL) == gso_burst_size(burst_in(), NULL, &burst_out), 1) \
	R(gso_pacer__init, p, gso_pacer__init(NULL, NULL), -EINVAL)                                   \
	R(gso_pacer__init, o, gso_pacer__init(&(struct gso_pacer){ 0 }, NULL), 0)                     \
	R(gso_pacer__stamp, p, gso_pacer__stamp(NULL, 0, 1000, 100, 1, &u64), -EINVAL)                \
	R(gso_pacer__stamp, departure_ns, gso_pacer__stamp(pacer(), 0, 1000, 100, 1, NULL), -EINVAL)  \
	R(gso_pacer__stamp, zeros, gso_pacer__stamp(pacer(), 0, 0, 0, 0, &u64), -EINVAL)              \
	R(gso_pacer__refund, p, gso_pacer__refund(NULL, 1000, 100, 0), -EINVAL)                       \
	R(gso_pacer__next, p, gso_pacer__next(NULL), (int64_t)UINT64_MAX)                             \
	R(gso_pacer__reset, p, (gso_pacer__reset(NULL), 0), 0)                                        \
	R(gso_aggr__init, a, gso_aggr__init(NULL), -EINVAL)                                           \
	R(gso_aggr__look, a, gso_aggr__look(NULL, 1, 1, 1), -EINVAL)                                  \
	R(gso_aggr__look, uninit, gso_aggr__look(&(struct gso_aggr){ 0 }, 1, 1, 1), -EINVAL)          \
	R(gso_aggr__info, a, gso_aggr__info(NULL, &aggr_info), -EINVAL)                               \
	R(gso_aggr__info, out, gso_aggr__info(aggr(), NULL), -EINVAL)                                 \
	R(gso_aggr__policy, a, gso_aggr__policy(NULL, 1000000, 0, 1000, 0, 0, &aggr_pol), 0)          \
	R(gso_aggr__policy, out, gso_aggr__policy(aggr(), 1000000, 0, 1000, 0, 0, NULL), -EINVAL)        \
	R(gso_aggr__policy, zeros, gso_aggr__policy(aggr(), 0, 0, 0, 0, 0, &aggr_pol), 0)

#define SCHED_ROWS(R, C, N)                                                                         \
	R(gso_sched__mem_size, o, gso_sched__mem_size(NULL), 0)                                       \
	R(gso_sched__init, out, gso_sched__init(NULL, SCHED_MEM, &sched_o), -EINVAL)        \
	R(gso_sched__init, mem, gso_sched__init(&sched_out, NULL, gso_sched__mem_size(&sched_o), &sched_o), -EINVAL)       \
	R(gso_sched__init, o, gso_sched__init(&sched_out, SCHED_MEM, NULL), -EINVAL)        \
	R(gso_sched__init, len0, gso_sched__init(&sched_out, mem(64), 0, &sched_o), -ENOSPC) \
	R(gso_sched__create, out, gso_sched__create(NULL, &sched_o), -EINVAL)                         \
	R(gso_sched__create, o, gso_sched__create(&sched_out, NULL), -EINVAL)                         \
	R(gso_sched__destroy, s, (gso_sched__destroy(NULL), 0), 0)                                    \
	R(gso_sched__flow_add, s, gso_sched__flow_add(NULL, NULL, &u32), -EINVAL)                     \
	R(gso_sched__flow_add, po, gso_sched__flow_add(sched(), NULL, &u32), 0)                       \
	R(gso_sched__flow_add, flow, gso_sched__flow_add(sched(), NULL, NULL), -EINVAL)               \
	R(gso_sched__flow_del, s, gso_sched__flow_del(NULL, 0), -EINVAL)                              \
	R(gso_sched__flow_del, flow_all1, gso_sched__flow_del(sched(), ~0u), -ENOENT)                 \
	R(gso_sched__flow_set_rate, s, gso_sched__flow_set_rate(NULL, 0, 1000), -EINVAL)              \
	R(gso_sched__flow_set_rate, flow_all1, gso_sched__flow_set_rate(sched(), ~0u, 1000), -ENOENT) \
	R(gso_sched__flow_drain, s, gso_sched__flow_drain(NULL, 0, &sburst, 1), -EINVAL)              \
	R(gso_sched__flow_drain, out, gso_sched__flow_drain(sched(), 0, NULL, 1), -EINVAL)            \
	R(gso_sched__flow_drain, n0, gso_sched__flow_drain(sched(), 0, NULL, 0), 0)                   \
	R(gso_sched__enqueue, s, gso_sched__enqueue(NULL, 0, &sburst), -EINVAL)                       \
	R(gso_sched__enqueue, b, gso_sched__enqueue(sched(), 0, NULL), -EINVAL)                       \
	R(gso_sched__flow_refund, s, gso_sched__flow_refund(NULL, 0, 100), -EINVAL)                   \
	R(gso_sched__flow_refund, flow_all1, gso_sched__flow_refund(sched(), ~0u, 100), -ENOENT)      \
	R(gso_sched__dequeue, s, gso_sched__dequeue(NULL, 0, &sburst, &u64), -EINVAL)                 \
	R(gso_sched__dequeue, out, gso_sched__dequeue(sched(), 0, NULL, &u64), -EINVAL)               \
	R(gso_sched__dequeue, next_ns, gso_sched__dequeue(sched(), 0, &sburst, NULL), 0)              \
	R(gso_sched__dequeue_batch, s, gso_sched__dequeue_batch(NULL, 0, &sburst, 1, &u64), -EINVAL)  \
	R(gso_sched__dequeue_batch, out, gso_sched__dequeue_batch(sched(), 0, NULL, 1, &u64), -EINVAL) \
	R(gso_sched__dequeue_batch, n0, gso_sched__dequeue_batch(sched(), 0, NULL, 0, &u64), 0)       \
	R(gso_sched__dequeue_batch, next_ns, gso_sched__dequeue_batch(sched(), 0, &sburst, 1, NULL), 0) \
	R(gso_sched__next_time, s, gso_sched__next_time(NULL), (int64_t)UINT64_MAX)                   \
	R(gso_sched__stats, s, gso_sched__stats(NULL, &sched_st), -EINVAL)                            \
	R(gso_sched__stats, st, gso_sched__stats(sched(), NULL), -EINVAL)

#define CC_ROWS(R, C, N)                                                                            \
	R(gso_rtt__init, r, gso_rtt__init(NULL, 0), -EINVAL)                                          \
	R(gso_rtt__update, r, gso_rtt__update(NULL, 0, 1000), -EINVAL)                                \
	R(gso_rtt__update, uninit, gso_rtt__update(&rtt, 0, 1000), -EINVAL)                           \
	R(gso_rtt__rto, r, gso_rtt__rto(NULL), GSO_RTT_INIT_RTO_NS)                                   \
	R(gso_cc__mem_size, nonzero, gso_cc__mem_size() > 0, 1)                                       \
	R(gso_cc__init, out, gso_cc__init(NULL, CC_MEM, &cc_o), -EINVAL)                    \
	R(gso_cc__init, mem, gso_cc__init(&cc_out, NULL, gso_cc__mem_size(), &cc_o), -EINVAL)         \
	R(gso_cc__init, o, gso_cc__init(&cc_out, CC_MEM, NULL), -EINVAL)                    \
	R(gso_cc__create, out, gso_cc__create(NULL, &cc_o), -EINVAL)                                  \
	R(gso_cc__create, o, gso_cc__create(&cc_out, NULL), -EINVAL)                                  \
	R(gso_cc__destroy, cc, (gso_cc__destroy(NULL), 0), 0)                                         \
	R(gso_cc__on_ack, cc, gso_cc__on_ack(NULL, &cc_ack), -EINVAL)                                 \
	R(gso_cc__on_ack, a, gso_cc__on_ack(cc(), NULL), -EINVAL)                                     \
	R(gso_cc__on_loss, cc, gso_cc__on_loss(NULL, 0, 0), -EINVAL)                                  \
	R(gso_cc__on_rto, cc, gso_cc__on_rto(NULL, 0), -EINVAL)                                       \
	R(gso_cc__on_tx_start, cc, gso_cc__on_tx_start(NULL, 0, false), -EINVAL)                      \
	R(gso_cc__set_mss, cc, gso_cc__set_mss(NULL, 1448), -EINVAL)                                  \
	R(gso_cc__set_dev_quantum, cc, gso_cc__set_dev_quantum(NULL, 1448), -EINVAL)                  \
	R(gso_cc__state, cc, gso_cc__state(NULL, &cc_st), -EINVAL)                                    \
	R(gso_cc__state, st, gso_cc__state(cc(), NULL), -EINVAL)                                      \
	R(gso_cc__min_burst_segs, cc, gso_cc__min_burst_segs(NULL), 0)                                \
	R(gso_cc__bbr_info, cc, gso_cc__bbr_info(NULL, &bbr), -EINVAL)                                \
	R(gso_cc__bbr_info, bi, gso_cc__bbr_info(cc(), NULL), -EINVAL)                                \
	R(gso_cc__cwnd, cc, gso_cc__cwnd(NULL), 0)                                                    \
	R(gso_cc__pacing_rate, cc, gso_cc__pacing_rate(NULL), 0)

#define FLOWQ_ROWS(R, C, N)                                                                         \
	R(gso_flowq__mem_size, o, gso_flowq__mem_size(NULL) == gso_flowq__mem_size(&fq_o0), 1)        \
	R(gso_flowq__init, out, gso_flowq__init(NULL, FQ_MEM, NULL), -EINVAL)               \
	R(gso_flowq__init, mem, gso_flowq__init(&fq_out, NULL, gso_flowq__mem_size(NULL), NULL), -EINVAL) \
	R(gso_flowq__init, o, gso_flowq__init(&fq_out, FQ_MEM, NULL), 0) \
	R(gso_flowq__init, len0, gso_flowq__init(&fq_out, buf, 0, NULL), -ENOSPC)                     \
	R(gso_flowq__create, out, gso_flowq__create(NULL, NULL), -EINVAL)                             \
	R(gso_flowq__create, o, flowq_create_defaults(), 0)                                           \
	R(gso_flowq__destroy, q, (gso_flowq__destroy(NULL), 0), 0)                                    \
	R(gso_flowq__append, q, gso_flowq__append(NULL, 0, 0, 100, 1000), -EINVAL)                    \
	R(gso_flowq__append, len0, gso_flowq__append(fq(), 0, 0, 0, 1000), -EINVAL)                   \
	R(gso_flowq__append, all1, gso_flowq__append(fq(), ~0ull, ~0u, ~0u, ~0u), -EINVAL)            \
	R(gso_flowq__peek, q, gso_flowq__peek(NULL, 1, &fq_tx), -EINVAL)                              \
	R(gso_flowq__peek, tx, gso_flowq__peek(fq(), 1, NULL), -EINVAL)                               \
	R(gso_flowq__peek, max_segs0, gso_flowq__peek(fq(), 0, &fq_tx), -EINVAL)                      \
	R(gso_flowq__sent, q, gso_flowq__sent(NULL, &fq_tx, 0), -EINVAL)                              \
	R(gso_flowq__sent, tx, gso_flowq__sent(fq(), NULL, 0), -EINVAL)                               \
	R(gso_flowq__ack, q, gso_flowq__ack(NULL, &fq_ack, &fq_res, fq_rel, 4), -EINVAL)              \
	R(gso_flowq__ack, a, gso_flowq__ack(fq(), NULL, &fq_res, fq_rel, 4), -EINVAL)                 \
	R(gso_flowq__ack, res, gso_flowq__ack(fq(), &fq_ack, NULL, fq_rel, 4), -EINVAL)               \
	R(gso_flowq__ack, rel, gso_flowq__ack(fq(), &fq_ack, &fq_res, NULL, 4), -EINVAL)              \
	R(gso_flowq__timeout, q, gso_flowq__timeout(NULL), -EINVAL)                                   \
	R(gso_flowq__set_mss, q, gso_flowq__set_mss(NULL, 1448), -EINVAL)                             \
	R(gso_flowq__rate_sample, q, gso_flowq__rate_sample(NULL, &fq_rs), -EINVAL)                   \
	R(gso_flowq__rate_sample, rs, gso_flowq__rate_sample(fq(), NULL), -EINVAL)                    \
	R(gso_flowq__check_app_limited, q, gso_flowq__check_app_limited(NULL, 10), -EINVAL)           \
	R(gso_flowq__set_wnd, q, gso_flowq__set_wnd(NULL, ~0u), -EINVAL)                              \
	R(gso_flowq__info, q, gso_flowq__info(NULL, &fq_info), -EINVAL)                               \
	R(gso_flowq__info, st, gso_flowq__info(fq(), NULL), -EINVAL)                                  \
	R(gso_flowq__snd_nxt, q, gso_flowq__snd_nxt(NULL), 0)                                         \
	R(gso_flowq__unacked_bytes, q, gso_flowq__unacked_bytes(NULL), 0)                             \
	R(gso_flowq__packets_out, q, gso_flowq__packets_out(NULL), 0)                                 \
	R(gso_flowq__unsent_bytes, q, gso_flowq__unsent_bytes(NULL), 0)                               \
	R(gso_flowq__lost_pending, q, gso_flowq__lost_pending(NULL), 0)                               \
	R(gso_flowq__flush, q, gso_flowq__flush(NULL, fq_rel, 4), -EINVAL)                            \
	R(gso_flowq__flush, rel, gso_flowq__flush(fq(), NULL, 4), -EINVAL)                            \
	R(gso_flowq__flush, n_rel0, gso_flowq__flush(fq(), NULL, 0), 0)                               \
	R(gso_flowq__check, q, gso_flowq__check(NULL), -EINVAL)

#define LIBGSO_ROWS(R, C, N) \
	CSUM_ROWS(R, C, N) TMPL_ROWS(R, C, N) SEG_ROWS(R, C, N) OFFLOAD_ROWS(R, C, N) \
	PACER_ROWS(R, C, N) SCHED_ROWS(R, C, N) CC_ROWS(R, C, N) FLOWQ_ROWS(R, C, N)

NULLARG_TABLE(nullarg_libgso, LIBGSO_ROWS);

NULLARG_TESTS(null_libgso, nullarg_libgso);
