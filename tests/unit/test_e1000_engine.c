/*
 * The e1000 transmit engine, without threads or sockets: a descriptor
 * ring and a DMA area in memory, filled the way Linux e1000_tso() /
 * e1000_tx_map() fill them (through libgso's encoders), and a wire that
 * records frames.
 *
 *  - Byte for byte: the engine's frames equal gso_segment()'s (Linux
 *    software GSO) except where the e1000 is known to differ: CWR kept on
 *    every frame, and a computed TCP checksum of 0 sent as 0xffff.  Every
 *    frame's checksums are also verified independently.
 *  - Descriptor-ring edge cases: wrap-around, a context change between
 *    packets (and a checksum-only context in between that must not
 *    disturb the TSO one), descriptors cut at 4 KiB and at odd places,
 *    the header split over descriptors, payload spread over several
 *    scattered chunks, EOP missing, the tail inside a packet, a full
 *    wire, bad addresses and lengths, IPv6 TSE, legacy descriptors.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gso/csum.h>
#include <gso/offload.h>
#include <gso/seg.h>
#include <gso/tmpl.h>

#include "e1000/e1000_internal.h"
#include "gso_test.h"
#include "ref_csum.h"

#define DMA_LEN (1u << 20)
#define CHUNK 4096u
#define FRAME_MAX 9216u
#define MAX_FRAMES 1024u
#define RING 256u

/* ---- a wire that records frames ---- */

struct mwire {
	struct e1000_wire w;
	uint8_t *store;
	uint32_t n;           /* frames recorded */
	uint32_t lens[MAX_FRAMES];
	uint32_t budget;      /* frames it takes before it is full (UINT32_MAX: never) */
	uint32_t flushes;
};

static uint32_t mw_room(struct e1000_wire *w, uint32_t want, uint32_t max_len)
{
	struct mwire *m = (struct mwire *)w;
	uint32_t k = want < m->budget ? want : m->budget;

	cr_assert_leq(max_len, FRAME_MAX);
	if (k > MAX_FRAMES - m->n)
		k = MAX_FRAMES - m->n;
	return k;
}

static uint8_t *mw_buf(struct e1000_wire *w)
{
	struct mwire *m = (struct mwire *)w;

	return m->store + (size_t)m->n * FRAME_MAX;
}

static void mw_put(struct e1000_wire *w, uint32_t len)
{
	struct mwire *m = (struct mwire *)w;

	m->lens[m->n++] = len;
	if (m->budget != UINT32_MAX)
		m->budget--;
}

static void mw_flush(struct e1000_wire *w)
{
	((struct mwire *)w)->flushes++;
}

/* ---- the "driver": ring, DMA memory ---- */

struct bed {
	struct e1000_engine e;
	struct mwire mw;
	uint8_t ring[RING * GSO_E1000_DESC_LEN];
	uint8_t *dma;
	uint32_t head, tail;
	uint64_t dma_next;    /* bump allocator in the DMA area */
};

static struct bed *bed;

static void bed_init(uint32_t max_frame)
{
	bed = calloc(1, sizeof(*bed));
	cr_assert_not_null(bed);
	bed->dma = calloc(1, DMA_LEN);
	bed->mw.store = malloc((size_t)MAX_FRAMES * FRAME_MAX);
	cr_assert(bed->dma && bed->mw.store);
	bed->mw.w = (struct e1000_wire){ mw_room, mw_buf, mw_put, mw_flush };
	bed->mw.budget = UINT32_MAX;
	bed->dma_next = 64;
	cr_assert_eq(gsoi_e1000_engine_init(&bed->e, RING, bed->dma, DMA_LEN, max_frame), 0);
}

static void bed_fini(void)
{
	if (!bed)
		return;
	gsoi_e1000_engine_fini(&bed->e);
	free(bed->dma);
	free(bed->mw.store);
	free(bed);
	bed = NULL;
}

static void put_desc(const uint8_t d[GSO_E1000_DESC_LEN])
{
	memcpy(bed->ring + (size_t)(bed->tail % RING) * GSO_E1000_DESC_LEN, d, GSO_E1000_DESC_LEN);
	bed->tail++;
}

static void put_ctx(const struct gso_e1000_ctx *c)
{
	uint8_t d[GSO_E1000_DESC_LEN];

	cr_assert_eq(gso_e1000_ctx_encode(c, d), 0);
	put_desc(d);
}

static void put_data(uint64_t addr, uint32_t len, uint8_t dcmd, uint8_t popts)
{
	struct gso_e1000_data dd = { .addr = addr, .len = len, .dcmd = dcmd, .popts = popts };
	uint8_t d[GSO_E1000_DESC_LEN];

	cr_assert_eq(gso_e1000_data_encode(&dd, d), 0);
	put_desc(d);
}

/* Copy `n` bytes into the DMA area at a fresh place, `skew` bytes past a chunk start. */
static uint64_t dma_copy(const void *p, size_t n, uint32_t skew)
{
	uint64_t a = (bed->dma_next + CHUNK - 1) / CHUNK * CHUNK + skew;

	cr_assert_leq(a + n, DMA_LEN, "test DMA area exhausted");
	memcpy(bed->dma + a, p, n);
	bed->dma_next = a + n;
	return a;
}

static uint32_t run(void)
{
	return gsoi_e1000_engine_run(&bed->e, bed->ring, &bed->head, bed->tail, &bed->mw.w);
}

/* How the driver cuts a packet into data descriptors. */
struct split {
	uint32_t hdr_first;    /* header: first descriptor this long (0: whole header in one) */
	uint32_t max_per_desc; /* payload pieces at most this long (0: 4096) */
	uint32_t chunk_run;    /* payload copied in runs of this many bytes to scattered places (0: contiguous) */
	uint32_t skew;         /* offset of the payload in its first chunk */
	uint64_t random_cuts;  /* non-zero: cut payload at random places (PRNG seed) */
};

/*
 * Queue one super-segment as Linux e1000 would: context descriptor,
 * header descriptor(s), payload descriptors, EOP|RS on the last.  With
 * keep_cwr the template's CWR is kept (the encoder refuses CWR because
 * the device keeps it on every frame; the driver may allow it).
 */
static void queue_super(const struct gso_tmpl *tin, const uint8_t *pay, uint32_t len, uint32_t mss,
			const struct split *sp, bool keep_cwr)
{
	struct gso_e1000_data dd[64];
	struct gso_offload_req r = { .sz = sizeof(r) };
	struct gso_e1000_ctx c;
	struct gso_tmpl t = *tin;
	uint8_t hdr[GSO_MAX_HDR_LEN + 1];
	uint64_t ha;
	uint32_t off = 0, maxp = sp->max_per_desc ? sp->max_per_desc : 4096;
	uint64_t rng = sp->random_cuts;
	uint8_t fl = 0;
	bool cwr = !gso_tmpl__tcp_flags(&t, &fl) && (fl & GSO_TCP_CWR);
	int n;

	if (cwr && keep_cwr)
		cr_assert_eq(gso_tmpl__set_tcp_flags(&t, fl & ~GSO_TCP_CWR), 0);
	cr_assert_eq(gso_offload_describe(&t, len, mss, 0, &r), 0);
	cr_assert_eq(gso_offload_e1000(&r, &t, &c, hdr, sizeof(hdr)), 0);
	if (cwr && keep_cwr)
		hdr[r.csum_start + 13] |= GSO_TCP_CWR;
	put_ctx(&c);
	ha = dma_copy(hdr, r.hdr_len, 100);
	if (sp->hdr_first && sp->hdr_first < r.hdr_len) {
		cr_assert_eq(gso_offload_e1000_data(&r, ha, sp->hdr_first, false, 0, dd, 1), 1);
		put_data(dd[0].addr, dd[0].len, dd[0].dcmd, dd[0].popts);
		cr_assert_eq(gso_offload_e1000_data(&r, ha + sp->hdr_first, r.hdr_len - sp->hdr_first,
						    !len, 0, dd, 1), 1);
	} else {
		cr_assert_eq(gso_offload_e1000_data(&r, ha, r.hdr_len, !len, 0, dd, 1), 1);
	}
	put_data(dd[0].addr, dd[0].len, dd[0].dcmd, dd[0].popts);
	while (off < len) {
		uint32_t run_len = sp->chunk_run ? sp->chunk_run : len;
		uint64_t a;

		if (run_len > len - off)
			run_len = len - off;
		a = dma_copy(pay + off, run_len, off ? 0 : sp->skew);
		for (uint32_t done = 0; done < run_len;) {
			uint32_t piece = run_len - done;

			if (rng)
				piece = (uint32_t)(gso_test_rand(&rng) % 1500) + 1;
			if (piece > run_len - done)
				piece = run_len - done;
			if (piece > maxp)
				piece = maxp;
			n = gso_offload_e1000_data(&r, a + done, piece, off + done + piece == len,
						   maxp, dd, 64);
			cr_assert_geq(n, 1);
			for (int i = 0; i < n; i++)
				put_data(dd[i].addr, dd[i].len, dd[i].dcmd, dd[i].popts);
			done += piece;
		}
		off += run_len;
	}
}

/* ---- expected frames and independent checks ---- */

/* Both checksums of an IPv4 TCP/UDP frame verify (big-endian reference arithmetic). */
static void check_sums(const uint8_t *f, uint32_t len, unsigned i)
{
	unsigned l3 = f[12] == 0x81 ? 18 : 14, ihl = (f[l3] & 0xf) * 4u, l4 = l3 + ihl;
	uint32_t l4len = len - l4, acc;
	uint8_t proto = f[l3 + 9];

	cr_assert_eq(ref_fold(ref_sum(f + l3, ihl, 0)), 0xffff, "frame %u: IPv4 header checksum", i);
	acc = ref_sum(f + l3 + 12, 8, 0) + proto + l4len;
	cr_assert_eq(ref_fold(ref_sum(f + l4, l4len, acc)), 0xffff, "frame %u: L4 checksum", i);
}

struct exp {
	int n;
	struct gso_frame fr[MAX_FRAMES];
	uint8_t *store;
};

static struct exp *exp_;

static void expect_segments(const struct gso_tmpl *t, const uint8_t *pay, uint32_t len, uint32_t mss)
{
	struct gso_extent ext = { pay, len };
	struct gso_super s = { t, &ext, len ? 1 : 0 };
	GSO_OPTS(gso_seg_opts, o, .mss = mss);

	if (!exp_) {
		exp_ = calloc(1, sizeof(*exp_));
		exp_->store = malloc((size_t)MAX_FRAMES * FRAME_MAX);
	}
	for (unsigned i = 0; i < MAX_FRAMES; i++) {
		exp_->fr[i].buf = exp_->store + (size_t)i * FRAME_MAX;
		exp_->fr[i].cap = FRAME_MAX;
	}
	exp_->n = gso_segment(&s, &o, exp_->fr, MAX_FRAMES);
	cr_assert_gt(exp_->n, 0, "gso_segment: %d", exp_->n);
}

static void fini(void)
{
	bed_fini();
	if (exp_) {
		free(exp_->store);
		free(exp_);
		exp_ = NULL;
	}
}

/*
 * Frames first..first+n-1 of the wire against the expected ones, allowing
 * the e1000's two known differences.
 */
static void compare_frames(const char *what, uint32_t first, bool tcp, unsigned l4_off)
{
	cr_assert_eq(bed->mw.n - first, (uint32_t)exp_->n, "%s: %u frames, expected %d", what,
		     bed->mw.n - first, exp_->n);
	for (int i = 0; i < exp_->n; i++) {
		uint8_t *g = bed->mw.store + (size_t)(first + i) * FRAME_MAX;
		uint8_t *x = exp_->fr[i].buf;
		uint32_t len = bed->mw.lens[first + i];
		size_t k = 0;

		cr_assert_eq(len, exp_->fr[i].len, "%s: frame %d length", what, i);
		check_sums(g, len, (unsigned)i);
		if (tcp) {
			/* CWR: Linux clears it after the first segment, the e1000 does not. */
			if ((g[l4_off + 13] ^ x[l4_off + 13]) == GSO_TCP_CWR) {
				cr_assert_gt(i, 0, "%s: CWR differs on the first frame", what);
				cr_assert(g[l4_off + 13] & GSO_TCP_CWR);
				x[l4_off + 13] |= GSO_TCP_CWR;
				memcpy(x + l4_off + 16, g + l4_off + 16, 2); /* checked by check_sums */
			}
			/* A computed 0: Linux GSO leaves 0x0000, the e1000 (nozero) writes 0xffff. */
			if (!x[l4_off + 16] && !x[l4_off + 17] && g[l4_off + 16] == 0xff &&
			    g[l4_off + 17] == 0xff && exp_->n > 1)
				x[l4_off + 16] = x[l4_off + 17] = 0xff;
		}
		while (k < len && g[k] == x[k])
			k++;
		cr_assert_eq(k, len, "%s: frame %d of %d differs at byte %zu (e1000 0x%02x, gso 0x%02x)",
			     what, i, exp_->n, k, g[k], x[k]);
	}
}

/* ---- cases ---- */

struct tcase {
	const char *what;
	uint8_t l4;
	uint32_t mss, len;
	uint8_t tflags;
	uint8_t topt, ipopt;
	bool vlan, df;
	struct split sp;
	bool zero_csum; /* tune the payload so that frame 0's L4 checksum computes to 0 */
};

static void build_tmpl(struct gso_tmpl *t, const struct tcase *c, uint16_t id)
{
	static const uint8_t ipo[8] = { 0x94, 4, 0, 0, 1, 1, 1, 1 };
	uint8_t to[40];
	GSO_OPTS(gso_tmpl_fields, f, .l3 = GSO_L3_IPV4, .l4 = c->l4, .sport = 1234, .dport = 80,
		 .df = c->df, .ip_id = id, .tos = 0x02, .ttl = 61);

	memset(to, 1, sizeof(to));
	if (c->topt >= 12)
		memcpy(to + c->topt - 12, (uint8_t[]){ 1, 1, 8, 10, 9, 8, 7, 6, 5, 4, 3, 2 }, 12);
	memcpy(f.eth_dst, (uint8_t[]){ 2, 0, 0, 0, 0, 2 }, 6);
	memcpy(f.eth_src, (uint8_t[]){ 2, 0, 0, 0, 0, 1 }, 6);
	memcpy(f.saddr, (uint8_t[]){ 10, 1, 2, 3 }, 4);
	memcpy(f.daddr, (uint8_t[]){ 10, 9, 8, 7 }, 4);
	f.has_vlan = c->vlan;
	f.vlan_tci = c->vlan ? 0x2005 : 0;
	f.ip_opts = ipo;
	f.ip_opts_len = c->ipopt;
	if (c->l4 == GSO_L4_TCP) {
		f.seq = 0xfffffe00u;
		f.ack = 99;
		f.window = 1000;
		f.tcp_flags = GSO_TCP_ACK | c->tflags;
		f.tcp_opts = to;
		f.tcp_opts_len = c->topt;
	}
	cr_assert_eq(gso_tmpl__build(t, &f), 0, "%s: template", c->what);
}

/* Make frame 0's L4 checksum compute to 0 by adding its checksum into a payload word. */
static void tune_zero(const struct gso_tmpl *t, uint8_t *pay, uint32_t len, uint32_t mss)
{
	uint16_t ck, w;
	uint32_t off = (t->hdr_len - t->l4_off) & 1; /* an even offset from the L4 header */

	expect_segments(t, pay, len, mss);
	memcpy(&ck, (uint8_t *)exp_->fr[0].buf + t->l4_off + (t->l4 == GSO_L4_TCP ? 16 : 6), 2);
	memcpy(&w, pay + off, 2);
	w = gso_csum_fold(gso_csum_add(w, ck));
	memcpy(pay + off, &w, 2);
}

static void run_case(const struct tcase *c, bool keep_cwr)
{
	static uint8_t pay[65536];
	struct gso_tmpl t;
	uint64_t seed = c->len * 31u + c->mss;
	uint32_t before;

	gso_test_fill_random(pay, c->len, &seed);
	build_tmpl(&t, c, 0xfffa);
	if (c->zero_csum)
		tune_zero(&t, pay, c->len, c->mss);
	expect_segments(&t, pay, c->len, c->mss);
	before = bed->mw.n;
	queue_super(&t, pay, c->len, c->mss, &c->sp, keep_cwr);
	run();
	cr_assert_eq(bed->head, bed->tail, "%s: descriptors left in the ring", c->what);
	compare_frames(c->what, before, c->l4 == GSO_L4_TCP, t.l4_off);
	if (c->zero_csum && c->l4 == GSO_L4_TCP)
		cr_assert(bed->mw.store[(size_t)before * FRAME_MAX + t.l4_off + 16] == 0xff,
			  "%s: a zero checksum went out as 0xffff", c->what);
}

#define T4(w, m, l, fl, to, ...) \
	{ .what = w, .l4 = GSO_L4_TCP, .mss = m, .len = l, .tflags = fl, .topt = to, .df = true, .sp = __VA_ARGS__ }
static struct tcase byte_cases[] = {
	T4("tcp mss+1", 1448, 1449, 0, 0, { 0 }),
	T4("tcp 2mss", 1448, 2896, GSO_TCP_PSH, 0, { 0 }),
	T4("tcp fin psh 2mss+1", 1448, 2897, GSO_TCP_PSH | GSO_TCP_FIN, 12, { 0 }),
	T4("tcp one frame", 1448, 1000, GSO_TCP_PSH, 0, { 0 }),
	T4("tcp header only", 1448, 0, 0, 0, { 0 }),
	T4("tcp 64k", 1448, 65535 - 20 - 32, 0, 12, { 0 }),
	T4("tcp mss 536 opts", 536, 30000, GSO_TCP_ECE, 40, { 0 }),
	T4("tcp mss 1 odd", 1, 300, GSO_TCP_PSH, 0, { 0 }),
	T4("tcp mss 7", 7, 1001, 0, 4, { 0 }),
	T4("tcp 4k cuts, skew", 1448, 40000, 0, 12, { .skew = 3001 }),
	T4("tcp header split 14/rest", 1448, 9000, 0, 12, { .hdr_first = 14 }),
	T4("tcp header split odd", 1000, 9000, 0, 12, { .hdr_first = 33 }),
	T4("tcp scattered chunks", 1448, 30000, 0, 0, { .chunk_run = 4096, .skew = 1 }),
	T4("tcp scattered odd runs", 1380, 20000, 0, 0, { .chunk_run = 1001, .skew = 7 }),
	T4("tcp random cuts", 1448, 50000, GSO_TCP_PSH, 12, { .random_cuts = 77 }),
	T4("tcp 4*mss per desc", 536, 20000, 0, 0, { .max_per_desc = 4 * 536 }),
	T4("tcp zero checksum", 1448, 5000, 0, 0, { 0 }, .zero_csum = true),
	{ .what = "tcp ip options", .l4 = GSO_L4_TCP, .mss = 1400, .len = 10000, .topt = 12, .ipopt = 8, .df = true },
	{ .what = "tcp no df", .l4 = GSO_L4_TCP, .mss = 1448, .len = 10000 },
	{ .what = "tcp vlan", .l4 = GSO_L4_TCP, .mss = 1448, .len = 10000, .tflags = GSO_TCP_PSH, .topt = 12,
	  .vlan = true, .df = true, .sp = { .hdr_first = 20 } },
	{ .what = "udp 2 segs", .l4 = GSO_L4_UDP, .mss = 1472, .len = 1473, .df = true },
	{ .what = "udp big", .l4 = GSO_L4_UDP, .mss = 1200, .len = 60000, .sp = { .random_cuts = 5 } },
	{ .what = "udp zero checksum", .l4 = GSO_L4_UDP, .mss = 1000, .len = 3000, .df = true, .zero_csum = true },
	{ .what = "udp vlan scattered", .l4 = GSO_L4_UDP, .mss = 1000, .len = 20000, .vlan = true, .df = true,
	  .sp = { .chunk_run = 3000 } },
};

ParameterizedTestParameters(e1000_engine, equals_software_gso)
{
	return cr_make_param_array(struct tcase, byte_cases, sizeof(byte_cases) / sizeof(byte_cases[0]));
}

ParameterizedTest(struct tcase *c, e1000_engine, equals_software_gso, .fini = fini)
{
	bed_init(9018);
	run_case(c, false);
	cr_assert_eq(atomic_load(&bed->e.cnt.packets), 1);
	cr_assert_eq(atomic_load(&bed->e.cnt.frames), bed->mw.n);
}

Test(e1000_engine, cwr_kept_on_every_frame_when_allowed, .fini = fini)
{
	struct tcase c = T4("tcp cwr", 1448, 10000, GSO_TCP_CWR | GSO_TCP_ECE, 12, { 0 });

	bed_init(1518);
	run_case(&c, true);
	for (uint32_t i = 0; i < bed->mw.n; i++)
		cr_assert(bed->mw.store[(size_t)i * FRAME_MAX + 34 + 13] & GSO_TCP_CWR, "frame %u", i);
}

/* ---- ring edge cases ---- */

static void two_packets(uint32_t mss_a, uint32_t mss_b, uint32_t *frames_a)
{
	struct tcase a = T4("a", mss_a, 7000, 0, 12, { 0 }), b = T4("b", mss_b, 5000, 0, 0, { 0 });

	run_case(&a, false);
	*frames_a = bed->mw.n;
	run_case(&b, false);
}

Test(e1000_engine, ring_wraps_around, .fini = fini)
{
	uint32_t fa;

	bed_init(1518);
	/* Start near the end of the ring, as after a long run. */
	bed->head = bed->tail = RING - 3;
	two_packets(1448, 1000, &fa);
	cr_assert_gt(bed->tail % RING, 0);
	cr_assert_lt(bed->tail, 2 * RING);
	/* Free-running indices across the 2^32 wrap as well. */
	bed->head = bed->tail = UINT32_MAX - 2;
	two_packets(1448, 1000, &fa);
}

Test(e1000_engine, context_change_between_packets, .fini = fini)
{
	uint8_t f[60] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00 };
	struct gso_e1000_ctx cs = { .tucss = 34, .tucso = 40, .tucmd = GSO_E1000_CMD_DEXT };
	uint32_t fa, before;
	struct tcase b = T4("after checksum packet", 700, 9000, GSO_TCP_PSH, 0, { 0 });

	bed_init(1518);
	two_packets(1448, 512, &fa);
	/*
	 * A checksum-only packet between two TSO packets loads the other
	 * context slot; the next TSO packet brings its own context anyway,
	 * and the frames of the checksum packet use the checksum context.
	 */
	put_ctx(&cs);
	put_data(dma_copy(f, sizeof(f), 0), sizeof(f),
		 GSO_E1000_CMD_DEXT | GSO_E1000_CMD_EOP | GSO_E1000_CMD_RS, 0);
	before = bed->mw.n;
	run();
	cr_assert_eq(bed->mw.n, before + 1);
	cr_assert_eq(bed->mw.lens[before], sizeof(f));
	run_case(&b, false);
	cr_assert_eq(atomic_load(&bed->e.cnt.ctx_descs), 4);
	cr_assert_eq(atomic_load(&bed->e.cnt.tso_packets), 3);
}

/* A TSO packet reusing the previous TSO context: QEMU keeps it across a checksum context. */
Test(e1000_engine, tso_context_survives_checksum_context, .fini = fini)
{
	static uint8_t pay[6000];
	struct tcase c = T4("x", 1000, sizeof(pay), 0, 0, { 0 });
	struct gso_e1000_data dd[8];
	struct gso_offload_req r = { .sz = sizeof(r) };
	struct gso_e1000_ctx ctx, cs = { .tucss = 34, .tucso = 50, .tucmd = GSO_E1000_CMD_DEXT };
	struct gso_tmpl t;
	uint8_t hdr[256];
	int n;

	bed_init(1518);
	build_tmpl(&t, &c, 1);
	memset(pay, 0x33, sizeof(pay));
	expect_segments(&t, pay, sizeof(pay), 1000);
	cr_assert_eq(gso_offload_describe(&t, sizeof(pay), 1000, 0, &r), 0);
	cr_assert_eq(gso_offload_e1000(&r, &t, &ctx, hdr, sizeof(hdr)), 0);
	put_ctx(&ctx);
	put_ctx(&cs);
	put_data(dma_copy(hdr, r.hdr_len, 0), r.hdr_len, GSO_E1000_CMD_DEXT | GSO_E1000_CMD_TSE,
		 GSO_E1000_POPTS_TXSM | GSO_E1000_POPTS_IXSM);
	n = gso_offload_e1000_data(&r, dma_copy(pay, sizeof(pay), 0), sizeof(pay), true, 0, dd, 8);
	for (int i = 0; i < n; i++)
		put_data(dd[i].addr, dd[i].len, dd[i].dcmd, dd[i].popts);
	run();
	compare_frames("tso after csum ctx", 0, true, t.l4_off);
}

/* One TSO packet queued with an EOP-less packet in front: that one is dropped, reported. */
Test(e1000_engine, eop_missing_dropped_and_reported, .fini = fini)
{
	struct tcase c = T4("good", 1448, 5000, 0, 0, { 0 });
	static uint8_t junk[3000];
	struct gso_tmpl t;

	bed_init(1518);
	/* Data descriptors without EOP, then a normal packet (which starts with a context). */
	put_data(dma_copy(junk, 1500, 0), 1500, GSO_E1000_CMD_DEXT | GSO_E1000_CMD_RS, 0);
	put_data(dma_copy(junk, 1500, 0), 1500, GSO_E1000_CMD_DEXT, 0);
	build_tmpl(&t, &c, 5);
	run_case(&c, false);
	cr_assert_eq(atomic_load(&bed->e.cnt.eop_missing), 1);
	cr_assert_eq(atomic_load(&bed->e.cnt.packets), 1);
	cr_assert_eq(atomic_load(&bed->e.cnt.last_err_desc), 0);
	/* The dropped descriptors were completed (DD where RS was asked). */
	cr_assert(bed->ring[12] & E1000_STA_DD);
}

/* The tail inside a packet: the device emits nothing and waits; reported once. */
Test(e1000_engine, tail_inside_packet_waits, .fini = fini)
{
	static uint8_t pay[8000];
	struct tcase c = T4("split tail", 1448, sizeof(pay), 0, 0, { 0 });
	struct gso_tmpl t;
	uint32_t tail;

	bed_init(1518);
	build_tmpl(&t, &c, 9);
	memset(pay, 0x5a, sizeof(pay));
	expect_segments(&t, pay, sizeof(pay), 1448);
	queue_super(&t, pay, sizeof(pay), 1448, &c.sp, false);
	tail = bed->tail;
	bed->tail = tail - 1; /* the EOP descriptor not yet published */
	cr_assert_eq(run(), 1, "only the context descriptor is consumed");
	cr_assert_eq(run(), 0);
	cr_assert_eq(bed->mw.n, 0, "nothing of the packet left");
	cr_assert_eq(atomic_load(&bed->e.cnt.tail_no_eop), 1, "reported once");
	bed->tail = tail;
	run();
	compare_frames("after the tail moved", 0, true, t.l4_off);
}

/* The wire fills up in the middle of a packet: resumed later, nothing lost or repeated. */
Test(e1000_engine, wire_full_resumes_mid_packet, .fini = fini)
{
	static uint8_t pay[30000];
	struct tcase c = T4("wire full", 1000, sizeof(pay), GSO_TCP_PSH, 12, { 0 });
	struct gso_tmpl t;
	unsigned runs = 0;

	bed_init(1518);
	build_tmpl(&t, &c, 3);
	gso_test_fill_random(pay, sizeof(pay), &(uint64_t){ 3 });
	expect_segments(&t, pay, sizeof(pay), 1000);
	queue_super(&t, pay, sizeof(pay), 1000, &c.sp, false);
	while (bed->head != bed->tail && runs < 100) {
		bed->mw.budget = 7;
		run();
		runs++;
		if (bed->head != bed->tail)
			cr_assert(!(bed->ring[(size_t)((bed->tail - 1) % RING) * 16 + 12] & E1000_STA_DD),
				  "EOP completed before its frames were out");
	}
	cr_assert_eq(runs, 5, "30 frames, 7 per run");
	compare_frames("resumed", 0, true, t.l4_off);
	cr_assert_eq(atomic_load(&bed->e.cnt.wire_full), 4);
}

struct bad_case {
	const char *what;
	int kind; /* 0 addr outside, 1 length != hdr+paylen, 2 IPv6 TSE, 3 legacy, 4 VLE, 5 no context, 6 mixed TSE */
};

static struct bad_case bad_cases[] = {
	{ "address outside memory", 0 }, { "data shorter than PAYLEN", 1 }, { "TSE without IP (IPv6)", 2 },
	{ "legacy descriptor", 3 }, { "VLE", 4 }, { "checksum without context", 5 }, { "TSE on some descriptors", 6 },
};

ParameterizedTestParameters(e1000_engine, bad_packets_dropped)
{
	return cr_make_param_array(struct bad_case, bad_cases, sizeof(bad_cases) / sizeof(bad_cases[0]));
}

/* A bad packet emits nothing and is counted; the good packet after it goes out. */
ParameterizedTest(struct bad_case *b, e1000_engine, bad_packets_dropped, .fini = fini)
{
	static uint8_t pay[4000];
	struct tcase good = T4("good after bad", 1448, 4000, 0, 0, { 0 });
	struct gso_offload_req r = { .sz = sizeof(r) };
	struct gso_e1000_ctx c;
	struct gso_tmpl t;
	uint8_t hdr[256], legacy[16] = { 0 };
	uint64_t ha, pa;
	const uint8_t tse = GSO_E1000_CMD_DEXT | GSO_E1000_CMD_TSE, popts = GSO_E1000_POPTS_TXSM;
	uint64_t bad_total;

	bed_init(1518);
	build_tmpl(&t, &good, 1);
	cr_assert_eq(gso_offload_describe(&t, sizeof(pay), 1448, 0, &r), 0);
	cr_assert_eq(gso_offload_e1000(&r, &t, &c, hdr, sizeof(hdr)), 0);
	ha = dma_copy(hdr, r.hdr_len, 0);
	pa = dma_copy(pay, sizeof(pay), 0);
	switch (b->kind) {
	case 0:
		put_ctx(&c);
		put_data(ha, r.hdr_len, tse, popts);
		put_data(DMA_LEN - 100, sizeof(pay), tse | GSO_E1000_CMD_EOP, popts);
		break;
	case 1:
		put_ctx(&c);
		put_data(ha, r.hdr_len, tse, popts);
		put_data(pa, sizeof(pay) - 1, tse | GSO_E1000_CMD_EOP, popts);
		break;
	case 2:
		c.tucmd &= (uint8_t)~GSO_E1000_TUCMD_IP;
		put_ctx(&c);
		put_data(ha, r.hdr_len, tse, popts);
		put_data(pa, sizeof(pay), tse | GSO_E1000_CMD_EOP, popts);
		break;
	case 3:
		legacy[8] = 60;
		legacy[11] = GSO_E1000_CMD_EOP;
		put_desc(legacy);
		break;
	case 4:
		put_ctx(&c);
		put_data(ha, r.hdr_len, tse | GSO_E1000_CMD_VLE, popts);
		put_data(pa, sizeof(pay), tse | GSO_E1000_CMD_EOP, popts);
		break;
	case 5:
		put_data(pa, 100, GSO_E1000_CMD_DEXT | GSO_E1000_CMD_EOP, popts);
		break;
	case 6:
		put_ctx(&c);
		put_data(ha, r.hdr_len, tse, popts);
		put_data(pa, sizeof(pay), GSO_E1000_CMD_DEXT | GSO_E1000_CMD_EOP, popts);
		break;
	}
	run();
	cr_assert_eq(bed->mw.n, 0, "%s: frames were sent", b->what);
	cr_assert_eq(bed->head, bed->tail, "%s: descriptors not consumed", b->what);
	bad_total = atomic_load(&bed->e.cnt.bad_desc) + atomic_load(&bed->e.cnt.bad_len) +
		    atomic_load(&bed->e.cnt.bad_ctx);
	cr_assert_eq(bad_total, 1, "%s: counted %llu", b->what, (unsigned long long)bad_total);
	run_case(&good, false);
}

Test(e1000_engine, status_written_back_only_with_rs, .fini = fini)
{
	struct tcase c = T4("rs", 1448, 3000, 0, 0, { 0 });

	bed_init(1518);
	run_case(&c, false);
	/* Context, header and first payload descriptor carry no RS; the EOP one does. */
	for (uint32_t i = 0; i < bed->tail; i++) {
		uint8_t *d = bed->ring + (size_t)i * 16;

		cr_assert_eq(!!(d[12] & E1000_STA_DD), !!(d[11] & GSO_E1000_CMD_RS), "descriptor %u", i);
	}
}

/* A tail published more than a ring ahead: at most one ring's worth is read. */
Test(e1000_engine, bogus_tail_reads_one_ring_at_most, .fini = fini)
{
	uint8_t f[60] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00 };
	uint64_t a;

	bed_init(1518);
	a = dma_copy(f, sizeof(f), 0);
	for (uint32_t i = 0; i < RING; i++)
		put_data(a, sizeof(f), GSO_E1000_CMD_DEXT | GSO_E1000_CMD_EOP, 0);
	cr_assert_eq(gsoi_e1000_engine_run(&bed->e, bed->ring, &bed->head, bed->tail + 77, &bed->mw.w), RING);
	cr_assert_eq(bed->mw.n, RING);
}

Test(e1000_engine, init_refuses_bad_arguments)
{
	struct e1000_engine e;
	uint8_t m[64] = { 0 };

	cr_assert_eq(gsoi_e1000_engine_init(&e, 0, m, sizeof(m), 1518), -EINVAL);
	cr_assert_eq(gsoi_e1000_engine_init(&e, 100, m, sizeof(m), 1518), -EINVAL);
	cr_assert_eq(gsoi_e1000_engine_init(&e, 64, NULL, sizeof(m), 1518), -EINVAL);
	cr_assert_eq(gsoi_e1000_engine_init(&e, 64, m, sizeof(m), 20), -EINVAL);
	cr_assert_eq(gsoi_e1000_engine_init(&e, 64, m, sizeof(m), 1518), 0);
	gsoi_e1000_engine_fini(&e);
}
