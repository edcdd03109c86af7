/*
 * Software segmentation.  Every frame the library writes is compared byte
 * for byte with a naive reference segmenter written here (plain field
 * stores and a plain 16-bit big-endian checksum loop, nothing from
 * libgso's checksum code), and its IP and L4 checksums are verified again
 * on their own.  Field values that matter (seq, flags, IDs, lengths) are
 * also checked against literal expectations, so that a misconception
 * shared by library and reference still shows.
 *
 * Suites: seg_bounds (udpgso-style length/segment-count table for every
 * protocol), seg_flags, seg_ipid, seg_csum (zero rule, PARTIAL seeds),
 * seg_ext (extent splits), seg_err (every error writes nothing),
 * seg_random (random super-segments against the reference).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gso/seg.h>
#include <gso/tmpl.h>

#include "gso_test.h"
#include "ref_csum.h"

/* ---- byte-order helpers (the reference checksum is ref_csum.h) ---- */

static unsigned rd16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)rd16(p) << 16 | rd16(p + 2); }
static void wr16(uint8_t *p, unsigned v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void wr32(uint8_t *p, uint32_t v) { wr16(p, v >> 16); wr16(p + 2, v & 0xffff); }

static uint32_t ref_pseudo(const struct gso_tmpl *t, const uint8_t *frame, uint32_t l4len)
{
	const uint8_t *ip = frame + t->l3_off;
	uint32_t s = t->l3 == 4 ? ref_sum(ip + 12, 8, 0) : ref_sum(ip + 8, 32, 0);

	return s + t->l4 + (l4len >> 16) + (l4len & 0xffff);
}

/* ---- reference segmenter ---- */

enum { CS_FULL = GSO_CSUM_FULL, CS_PARTIAL = GSO_CSUM_PARTIAL };

/* Frame i of n for payload `pay` (contiguous), as the kernel would send it. */
static size_t ref_frame(const struct gso_tmpl *t, const uint8_t *pay, size_t total, uint32_t mss,
			uint32_t i, uint32_t n, int fixed_id, int csum, uint8_t *f)
{
	size_t off = (size_t)i * mss;
	size_t pl = total - off < mss ? total - off : mss;
	size_t len = t->hdr_len + pl;
	uint32_t l4len = (uint32_t)(len - t->l4_off);
	uint8_t *ip = f + t->l3_off, *l4 = f + t->l4_off;
	unsigned check;

	memcpy(f, t->hdr, t->hdr_len);
	memcpy(f + t->hdr_len, pay + off, pl);
	if (t->l3 == 4) {
		wr16(ip + 2, (unsigned)(len - t->l3_off));
		if (!fixed_id)
			wr16(ip + 4, (rd16(ip + 4) + i) & 0xffff);
		wr16(ip + 10, 0);
		wr16(ip + 10, (uint16_t)~ref_fold(ref_sum(ip, t->l4_off - t->l3_off, 0)));
	} else {
		wr16(ip + 4, l4len);
	}
	if (t->l4 == 6) {
		wr32(l4 + 4, rd32(l4 + 4) + i * mss);
		if (i + 1 < n)
			l4[13] &= (uint8_t)~(GSO_TCP_FIN | GSO_TCP_PSH);
		if (i > 0)
			l4[13] &= (uint8_t)~GSO_TCP_CWR;
		wr16(l4 + 16, 0);
	} else {
		wr16(l4 + 4, l4len);
		wr16(l4 + 6, 0);
	}
	if (csum == CS_PARTIAL) {
		check = ref_fold(ref_pseudo(t, f, l4len));
	} else {
		check = (uint16_t)~ref_fold(ref_pseudo(t, f, l4len) + ref_sum(l4, l4len, 0));
		if (check == 0 && (t->l4 == 17 || n == 1))
			check = 0xffff;
	}
	wr16(l4 + (t->l4 == 6 ? 16 : 6), check);
	return len;
}

/* Checksums of a complete frame, verified from scratch. */
static void verify_frame(const struct gso_tmpl *t, const uint8_t *f, size_t len)
{
	uint32_t l4len = (uint32_t)(len - t->l4_off);

	if (t->l3 == 4) {
		cr_assert_eq(ref_fold(ref_sum(f + t->l3_off, t->l4_off - t->l3_off, 0)), 0xffff,
			     "bad IPv4 header checksum");
		cr_assert_eq(rd16(f + t->l3_off + 2), len - t->l3_off);
	} else {
		cr_assert_eq(rd16(f + t->l3_off + 4), l4len);
	}
	if (t->l4 == 17)
		cr_assert_eq(rd16(f + t->l4_off + 4), l4len);
	cr_assert_eq(ref_fold(ref_pseudo(t, f, l4len) + ref_sum(f + t->l4_off, l4len, 0)), 0xffff,
		     "bad L4 checksum (len %zu)", len);
}

/* ---- templates ---- */

enum { P_TCP4, P_TCP6, P_UDP4, P_UDP6, P_TCP4_X, P_UDP6_X, P_TCP4_BIG, P_TCP6_BIG, P_COUNT };
static const char *const pname[P_COUNT] = {
	"tcp4", "tcp6", "udp4", "udp6", "tcp4+vlan+ipopts+ts", "udp6+vlan",
	"tcp4+vlan+40B ip opts+40B tcp opts (138B headers)", "tcp6+vlan+40B tcp opts (118B headers)",
};

static const uint8_t ip_opts8[8] = { 1, 1, 1, 1, 1, 1, 1, 0 };
static const uint8_t ts_opts[12] = { 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2 };
/* the largest option areas: NOPs, a timestamp, NOPs, EOL */
static const uint8_t ip_opts40[40] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
				       1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 };
static const uint8_t tcp_opts40[40] = { 1, 1, 8, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1,
					1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 };

static void mk_tmpl(struct gso_tmpl *t, int pid, uint8_t flags, bool df, uint16_t id, uint32_t seq)
{
	int tcp = pid == P_TCP4 || pid == P_TCP6 || pid == P_TCP4_X || pid == P_TCP4_BIG ||
		  pid == P_TCP6_BIG;
	int v4 = pid == P_TCP4 || pid == P_UDP4 || pid == P_TCP4_X || pid == P_TCP4_BIG;
	GSO_OPTS(gso_tmpl_fields, f, .l3 = v4 ? GSO_L3_IPV4 : GSO_L3_IPV6,
		 .l4 = tcp ? GSO_L4_TCP : GSO_L4_UDP, .sport = 40000, .dport = 5001,
		 .eth_dst = { 2, 0, 0, 0, 0, 2 }, .eth_src = { 2, 0, 0, 0, 0, 1 });

	for (int k = 0; k < 16; k++) {
		f.saddr[k] = (uint8_t)(0xfd ^ k);
		f.daddr[k] = (uint8_t)(0x3c + 17 * k);
	}
	if (v4) {
		f.df = df;
		f.ip_id = id;
		f.tos = 0x02;
	} else {
		f.flow_label = 0x12345;
		f.tos = 0xb8;
	}
	if (tcp) {
		f.seq = seq;
		f.ack = 0x01020304;
		f.tcp_flags = flags;
		f.window = 501;
	}
	if (pid == P_TCP4_X) {
		f.has_vlan = true;
		f.vlan_tci = 0x2005;
		f.ip_opts = ip_opts8;
		f.ip_opts_len = 8;
		f.tcp_opts = ts_opts;
		f.tcp_opts_len = 12;
	}
	if (pid == P_UDP6_X) {
		f.has_vlan = true;
		f.vlan_tci = 7;
	}
	if (pid == P_TCP4_BIG || pid == P_TCP6_BIG) {
		f.has_vlan = true;
		f.vlan_tci = 0x0fff;
		f.tcp_opts = tcp_opts40;
		f.tcp_opts_len = 40;
	}
	if (pid == P_TCP4_BIG) {
		f.ip_opts = ip_opts40;
		f.ip_opts_len = 40;
	}
	cr_assert_eq(gso_tmpl__build(t, &f), 0, "template %s", pname[pid]);
}

/* ---- running both forms and comparing with the reference ---- */

struct ext_set {
	struct gso_extent e[64];
	void *own[64];
	unsigned n;
};

static void ext_single(struct ext_set *x, const uint8_t *pay, size_t total)
{
	memset(x, 0, sizeof(*x));
	x->n = 1;
	x->own[0] = malloc(total ? total : 1);
	memcpy(x->own[0], pay, total);
	x->e[0].base = x->own[0];
	x->e[0].len = total;
}

/* Random split with empty, 1-byte and odd pieces, each exactly allocated. */
static void ext_split(struct ext_set *x, const uint8_t *pay, size_t total, uint64_t *rng)
{
	size_t done = 0;

	memset(x, 0, sizeof(*x));
	while (done < total || x->n == 0) {
		size_t k;
		uint64_t r = gso_test_rand(rng);

		if (x->n == 63)
			k = total - done;
		else if (r % 8 == 0)
			k = 0;
		else if (r % 8 == 1)
			k = 1;
		else
			k = (r >> 8) % (total / 4 + 8);
		if (k > total - done)
			k = total - done;
		x->own[x->n] = k ? malloc(k) : NULL;
		if (k)
			memcpy(x->own[x->n], pay + done, k);
		x->e[x->n].base = x->own[x->n];
		x->e[x->n].len = k;
		x->n++;
		done += k;
	}
}

static void ext_free(struct ext_set *x)
{
	for (unsigned k = 0; k < x->n; k++)
		free(x->own[k]);
}

#define POISON 0xa5
#define SLACK 8u

/*
 * Segment with both forms and both checksum modes; compare every frame
 * with the reference, verify it, and check that PARTIAL seeds finish to
 * the FULL checksums.  Returns the segment count.
 */
static int check_all(const struct gso_tmpl *t, const uint8_t *pay, size_t total,
		     const struct ext_set *x, uint32_t mss, int fixed_id, uint32_t max_segs)
{
	struct gso_super s = { t, x->e, x->n };
	int n = -1;
	uint8_t *full_frames = NULL;
	size_t stride = t->hdr_len + (size_t)mss;
	uint8_t ref[GSO_MAX_HDR_LEN + 65536];

	for (int cs = CS_FULL; cs <= CS_PARTIAL; cs++) {
		GSO_OPTS(gso_seg_opts, o, .mss = mss, .csum = (uint8_t)cs,
			 .ipid = fixed_id ? GSO_IPID_FIXED : GSO_IPID_INC, .max_segs = max_segs);
		int c = gso_seg_count(&s, &o);

		cr_assert_gt(c, 0, "count %d", c);
		if (n < 0) {
			n = c;
			full_frames = malloc((size_t)n * stride);
		}
		cr_assert_eq(c, n);

		/* form (a) */
		struct gso_frame *fr = calloc((size_t)n + 1, sizeof(*fr));
		for (int i = 0; i < n; i++) {
			size_t want = t->hdr_len + (i + 1 < n ? mss : total - (size_t)i * mss);

			fr[i].cap = (uint32_t)(want + SLACK);
			fr[i].buf = malloc(fr[i].cap);
			memset(fr[i].buf, POISON, fr[i].cap);
		}
		fr[n].len = 0xdeadbeef; /* entry past the count must stay */
		cr_assert_eq(gso_segment(&s, &o, fr, (unsigned)n + 1), n);
		cr_assert_eq(fr[n].len, 0xdeadbeef);
		for (int i = 0; i < n; i++) {
			size_t len = ref_frame(t, pay, total, mss, (uint32_t)i, (uint32_t)n, fixed_id, cs, ref);
			const uint8_t *b = fr[i].buf;

			cr_assert_eq(fr[i].len, len, "%s seg %d/%d: len %u != %zu", cs ? "partial" : "full",
				     i, n, fr[i].len, len);
			cr_assert_eq(fr[i].csum_start, t->l4_off);
			cr_assert_eq(fr[i].csum_offset, t->l4 == 6 ? 16 : 6);
			if (memcmp(b, ref, len))
				for (size_t k = 0; k < len; k++)
					cr_assert_eq(b[k], ref[k], "%s seg %d/%d mss %u: byte %zu is %02x, want %02x",
						     cs ? "partial" : "full", i, n, mss, k, b[k], ref[k]);
			for (size_t k = len; k < fr[i].cap; k++)
				if (b[k] != POISON)
					cr_assert_fail("seg %d: written past the frame", i);
			if (cs == CS_FULL) {
				verify_frame(t, b, len);
				memcpy(full_frames + (size_t)i * stride, b, len);
			} else {
				/* the device's job: sum from csum_start over the seed, complement */
				const uint8_t *fu = full_frames + (size_t)i * stride;
				unsigned done = (uint16_t)~ref_fold(ref_sum(b + t->l4_off, len - t->l4_off, 0));
				unsigned want = rd16(fu + t->l4_off + fr[i].csum_offset);

				if (done == 0 && (t->l4 == 17 || n == 1))
					done = 0xffff;
				cr_assert_eq(done, want, "seg %d: partial seed finishes to %04x, full is %04x",
					     i, done, want);
				cr_assert_arr_eq(b, fu, t->l4_off + fr[i].csum_offset);
				cr_assert_arr_eq(b + t->l4_off + fr[i].csum_offset + 2,
						 fu + t->l4_off + fr[i].csum_offset + 2,
						 len - t->l4_off - fr[i].csum_offset - 2);
			}
		}

		/* form (b): headers + references, rebuilt into frames */
		struct gso_seg_ref *rf = calloc((size_t)n, sizeof(*rf));
		for (int i = 0; i < n; i++) {
			rf[i].hdr_cap = (uint16_t)(t->hdr_len + SLACK);
			rf[i].hdr = malloc(rf[i].hdr_cap);
			memset(rf[i].hdr, POISON, rf[i].hdr_cap);
		}
		cr_assert_eq(gso_segment_ref(&s, &o, rf, (unsigned)n), n);
		for (int i = 0; i < n; i++) {
			uint8_t *h = rf[i].hdr;
			size_t got = rf[i].hdr_len;
			uint32_t idx = rf[i].ext_idx, off = rf[i].ext_off, left = rf[i].pay_len;

			cr_assert_eq(rf[i].hdr_len, t->hdr_len);
			cr_assert_eq(rf[i].pay_off, (uint32_t)i * mss);
			cr_assert_eq(rf[i].csum_start, t->l4_off);
			cr_assert_eq(rf[i].csum_offset, t->l4 == 6 ? 16 : 6);
			for (size_t k = t->hdr_len; k < rf[i].hdr_cap; k++)
				if (h[k] != POISON)
					cr_assert_fail("seg %d: written past the header", i);
			memcpy(ref, h, got);
			if (left) {
				cr_assert_lt(idx, x->n);
				cr_assert_lt(off, x->e[idx].len, "ref points at an empty extent or past one");
			}
			while (left) {
				cr_assert_lt(idx, x->n);
				size_t k = x->e[idx].len - off;
				if (k > left)
					k = left;
				if (k)
					memcpy(ref + got, (const uint8_t *)x->e[idx].base + off, k);
				got += k;
				left -= (uint32_t)k;
				idx++;
				off = 0;
			}
			cr_assert_eq(got, fr[i].len);
			cr_assert_arr_eq(ref, fr[i].buf, got, "form (b) seg %d differs from form (a)", i);
			free(rf[i].hdr);
		}
		free(rf);
		for (int i = 0; i < n; i++)
			free(fr[i].buf);
		free(fr);
	}
	free(full_frames);
	return n;
}

/* ---- errors write nothing ---- */

/*
 * Call both forms with poisoned outputs (n_out entries, each buffer `cap`
 * bytes, entry `small` gets `small_cap`; small == -2: the last entry's
 * buffer is NULL) and check that gso_segment() fails with `err`,
 * gso_segment_ref() returns `err_ref` (which may be a success: a frame
 * that does not fit may still have room for its headers) and that no
 * failing call changed anything.
 */
static void check_fails(const struct gso_super *s, const struct gso_seg_opts *o, unsigned n_out,
			uint32_t cap, int small, uint32_t small_cap, int err, int err_ref)
{
	struct gso_frame *fr = calloc(n_out + 1, sizeof(*fr)), *fr0 = calloc(n_out + 1, sizeof(*fr));
	struct gso_seg_ref *rf = calloc(n_out + 1, sizeof(*rf)), *rf0 = calloc(n_out + 1, sizeof(*rf));
	bool out_err = err == -ENOSPC || err == -ENOBUFS || small == -2;
	int r;

	for (unsigned i = 0; i < n_out; i++) {
		uint32_t c = (int)i == small ? small_cap : cap;

		fr[i].cap = c;
		fr[i].buf = malloc(c + 1);
		memset(fr[i].buf, POISON, c + 1);
		fr[i].len = 0x11111111;
		fr[i].csum_start = fr[i].csum_offset = 0x2222;
		rf[i].hdr_cap = (uint16_t)(c > 0xffff ? 0xffff : c);
		rf[i].hdr = malloc(rf[i].hdr_cap + 1u);
		memset(rf[i].hdr, POISON, rf[i].hdr_cap + 1u);
		memset(&rf[i].hdr_len, 0x33, sizeof(rf[i]) - offsetof(struct gso_seg_ref, hdr_len));
	}
	if (small == -2) {
		free(fr[n_out - 1].buf);
		fr[n_out - 1].buf = NULL;
		free(rf[n_out - 1].hdr);
		rf[n_out - 1].hdr = NULL;
	}
	memcpy(fr0, fr, (n_out + 1) * sizeof(*fr));
	memcpy(rf0, rf, (n_out + 1) * sizeof(*rf));

	r = gso_seg_count(s, o);
	if (out_err)
		cr_assert_gt(r, 0, "gso_seg_count: %d", r);
	else
		cr_assert_eq(r, err, "gso_seg_count: %d, want %d", r, err);
	r = gso_segment(s, o, fr, n_out);
	cr_assert_eq(r, err, "gso_segment: %d, want %d", r, err);
	r = gso_segment_ref(s, o, rf, n_out);
	cr_assert_eq(r, err_ref, "gso_segment_ref: %d, want %d", r, err_ref);
	cr_assert_arr_eq(fr, fr0, (n_out + 1) * sizeof(*fr), "out[] entry modified on error");
	for (unsigned i = 0; i < n_out; i++) {
		const uint8_t *b = fr[i].buf;

		for (uint32_t k = 0; b && k <= fr[i].cap; k++)
			if (b[k] != POISON)
				cr_assert_fail("buffer %u written on error %d", i, err);
		if (err_ref > 0)
			continue;
		cr_assert_arr_eq(&rf[i], &rf0[i], sizeof(rf[i]), "ref entry %u modified on error", i);
		b = rf[i].hdr;
		for (uint32_t k = 0; b && k <= rf[i].hdr_cap; k++)
			if (b[k] != POISON)
				cr_assert_fail("header buffer %u written on error %d", i, err);
	}
	for (unsigned i = 0; i < n_out; i++) {
		free(fr[i].buf);
		free(rf[i].hdr);
	}
	free(fr);
	free(fr0);
	free(rf);
	free(rf0);
}

static uint8_t payload[65536];

static void fill_payload(uint64_t seed)
{
	uint64_t st = seed;

	gso_test_fill_random(payload, sizeof(payload), &st);
}

/* ---- seg_bounds: the udpgso selftest table, for every protocol ---- */

#define LEN_MAX ((size_t)-1)     /* the largest payload the template allows */
#define LEN_MAX1 ((size_t)-2)    /* one more byte */

struct bound {
	uint32_t mss;
	size_t len;
	uint32_t max_segs;
	int n_tcp, n_udp;        /* expected count or -errno */
	uint32_t last;           /* expected payload of the last segment (if ok) */
};

/* mss 1000 unless said; -1 in `last` = check by formula only */
static const struct bound bounds[] = {
	{ 1000, 0, 0, 1, 1, 0 },            /* header only */
	{ 1000, 1, 0, 1, 1, 1 },            /* 1 byte */
	{ 1000, 1000, 0, 1, 1, 1000 },      /* exactly MSS: no GSO */
	{ 1000, 1001, 0, 2, 2, 1 },         /* MSS + 1 */
	{ 1000, 2001, 0, 3, 3, 1 },         /* 2 MSS + 1 */
	{ 1000, 3000, 0, 3, 3, 1000 },      /* exact multiple */
	{ 1, 1, 0, 1, 1, 1 },
	{ 1, 7, 0, 7, 7, 1 },               /* mss 1 */
	{ 3, 10, 0, 4, 4, 1 },              /* odd mss */
	{ 1447, 4341, 0, 3, 3, 1447 },
	{ 1448, 65000, 0, 45, 45, 1288 },
	{ 100, 12800, 0, 128, 128, 100 },   /* UDP: UDP_MAX_SEGMENTS */
	{ 100, 12801, 0, 129, -E2BIG, 1 },  /* UDP: one more fails */
	{ 100, 6400, 64, 64, 64, 100 },     /* opts max_segs (old UDP limit) */
	{ 100, 6401, 64, -E2BIG, -E2BIG, 1 },
	{ 1000, 16000, 16, 16, 16, 1000 },
	{ 1000, 16001, 16, -E2BIG, -E2BIG, 1 },
	{ 100, 20000, 200, 200, 200, 100 }, /* explicit max_segs above 128 for UDP */
	{ 1, 1, 1, 1, 1, 1 },               /* max_segs 1: single packet */
	{ 1, 2, 1, -E2BIG, -E2BIG, 1 },
	{ 1448, LEN_MAX, 0, 0, 0, 0 },      /* the largest IP datagram */
	{ 1448, LEN_MAX1, 0, -EMSGSIZE, -EMSGSIZE, 0 },
	{ 65535, LEN_MAX, 0, 1, 1, 0 },     /* mss >= payload: one 64 KiB packet */
	{ 65535, LEN_MAX1, 0, -EMSGSIZE, -EMSGSIZE, 0 },
	{ 7, LEN_MAX, 0, 0, -E2BIG, 0 },    /* TCP: 9000+ segments */
};
#define N_BOUNDS (sizeof(bounds) / sizeof(bounds[0]))

ParameterizedTestParameters(seg_bounds, table)
{
	static int pids[P_COUNT] = { P_TCP4, P_TCP6, P_UDP4, P_UDP6,
				     P_TCP4_X, P_UDP6_X, P_TCP4_BIG, P_TCP6_BIG };

	return cr_make_param_array(int, pids, P_COUNT);
}

/* Every row of the table on one protocol variant. */
ParameterizedTest(int *pidp, seg_bounds, table)
{
	int pid = *pidp;

	for (unsigned row = 0; row < N_BOUNDS; row++) {
		const struct bound *b = &bounds[row];
		struct gso_tmpl t;
		struct ext_set x;
		size_t len = b->len;
		int tcp = !(pid == P_UDP4 || pid == P_UDP6 || pid == P_UDP6_X);
		int want = tcp ? b->n_tcp : b->n_udp;
		uint64_t rng = 1000 + row;

		mk_tmpl(&t, pid, GSO_TCP_ACK | GSO_TCP_PSH, true, 0x4321, 0xfffff000u);
		if (len == LEN_MAX || len == LEN_MAX1)
			len = GSO_MAX_IP_LEN - (t.hdr_len - t.l3_off) + (len == LEN_MAX1);
		if (want == 0 && b->len == LEN_MAX) /* count by formula */
			want = (int)((len + b->mss - 1) / b->mss);
		fill_payload(row);

		if (want < 0) {
			struct gso_super s = { &t, NULL, 0 };
			GSO_OPTS(gso_seg_opts, o, .mss = b->mss, .max_segs = b->max_segs);
			/* room for every frame (up to 300), so only the limit can fail */
			size_t segs = (len + b->mss - 1) / b->mss;

			ext_single(&x, payload, len);
			s.ext = x.e;
			s.n_ext = x.n;
			cr_assert_eq(gso_seg_count(&s, &o), want, "%s row %u: mss %u len %zu", pname[pid], row,
				     b->mss, len);
			check_fails(&s, &o, segs < 300 ? (unsigned)segs : 300u,
				    (uint32_t)(t.hdr_len + (len < b->mss ? len : b->mss)), -1, 0, want, want);
			ext_free(&x);
			continue;
		}
		ext_single(&x, payload, len);
		int n = check_all(&t, payload, len, &x, b->mss, 0, b->max_segs);
		cr_assert_eq(n, want, "%s row %u: mss %u len %zu: %d segments, want %d", pname[pid], row,
			     b->mss, len, n, want);
		if (b->len != LEN_MAX)
			cr_assert_eq(len - (size_t)(n - 1) * b->mss, b->last, "%s row %u", pname[pid], row);
		ext_free(&x);

		/* the same payload in odd pieces gives the same frames (skip the huge one) */
		if (n < 2000) {
			ext_split(&x, payload, len, &rng);
			cr_assert_eq(check_all(&t, payload, len, &x, b->mss, 0, b->max_segs), n);
			ext_free(&x);
		}
	}
}

/* ---- seg_flags ---- */

struct flag_case {
	uint8_t flags;
	uint32_t len; /* mss 500 */
};

static const struct flag_case flag_cases[] = {
	{ GSO_TCP_ACK, 1200 },
	{ GSO_TCP_ACK | GSO_TCP_PSH, 1200 },
	{ GSO_TCP_ACK | GSO_TCP_FIN, 1200 },
	{ GSO_TCP_ACK | GSO_TCP_PSH | GSO_TCP_FIN, 1500 },
	{ GSO_TCP_ACK | GSO_TCP_CWR, 1200 },
	{ GSO_TCP_ACK | GSO_TCP_ECE, 1200 },
	{ GSO_TCP_ACK | GSO_TCP_ECE | GSO_TCP_CWR | GSO_TCP_PSH | GSO_TCP_FIN, 1001 },
	{ GSO_TCP_ACK | GSO_TCP_ECE | GSO_TCP_CWR | GSO_TCP_PSH | GSO_TCP_FIN, 500 }, /* single */
	{ GSO_TCP_ACK | GSO_TCP_CWR | GSO_TCP_FIN, 1 },
	{ 0, 1200 },
	{ GSO_TCP_CWR | GSO_TCP_ECE | GSO_TCP_FIN | GSO_TCP_PSH, 0 }, /* header only */
};

/* Each mix on IPv4 and IPv6, checked against the reference and literally. */
Test(seg_flags, mixes)
{
	for (size_t c = 0; c < 2 * sizeof(flag_cases) / sizeof(flag_cases[0]); c++) {
		const struct flag_case *fc = &flag_cases[c / 2];
		int pid = c & 1 ? P_TCP6 : P_TCP4;
		uint32_t len = fc->len, mss = 500;
		struct gso_tmpl t;
		struct ext_set x;

		mk_tmpl(&t, pid, fc->flags, true, 7, 0x10);
		fill_payload(len);
		ext_single(&x, payload, len);
		int n = check_all(&t, payload, len, &x, mss, 0, 0);
		uint32_t want_n = len ? (len + mss - 1) / mss : 1;
		cr_assert_eq((uint32_t)n, want_n);

		struct gso_frame fr[8];
		uint8_t bufs[8][1600];
		struct gso_super s = { &t, x.e, x.n };
		GSO_OPTS(gso_seg_opts, o, .mss = mss);
		for (int i = 0; i < 8; i++)
			fr[i] = (struct gso_frame){ .buf = bufs[i], .cap = sizeof(bufs[i]) };
		cr_assert_eq(gso_segment(&s, &o, fr, 8), n);
		for (int i = 0; i < n; i++) {
			const uint8_t *th = bufs[i] + t.l4_off;
			uint8_t f = fc->flags;

			if (i + 1 < n)
				f &= (uint8_t)~(GSO_TCP_FIN | GSO_TCP_PSH);
			if (i)
				f &= (uint8_t)~GSO_TCP_CWR;
			cr_assert_eq(th[13], f, "%s case %zu seg %d/%d flags %02x, want %02x", pname[pid],
				     c / 2, i, n, th[13], f);
			cr_assert_eq(rd32(th + 4), 0x10u + (uint32_t)i * mss);
			cr_assert_eq(rd32(th + 8), 0x01020304u);
			cr_assert_eq(rd16(th + 14), 501u);
		}
		ext_free(&x);
	}
}

/* URG and the urgent pointer are copied unchanged (offload-reference 8). */
Test(seg_flags, urg_pointer_copied)
{
	uint8_t h[54] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00 };
	uint8_t *ip = h + 14, *th = h + 34;
	struct gso_tmpl t;

	ip[0] = 0x45;
	wr16(ip + 2, 40);
	wr16(ip + 4, 0x0100);
	wr16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = 6;
	memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	wr16(th, 1234);
	wr16(th + 2, 80);
	wr32(th + 4, 0xfffffe00u); /* seq wraps inside the super-segment */
	wr32(th + 8, 99);
	th[12] = 0x50;
	th[13] = GSO_TCP_ACK | GSO_TCP_URG | GSO_TCP_PSH;
	wr16(th + 14, 4096);
	wr16(th + 18, 0x0123);
	cr_assert_eq(gso_tmpl__parse(&t, h, sizeof(h)), 0);

	struct ext_set x;
	fill_payload(77);
	ext_single(&x, payload, 2000);
	int n = check_all(&t, payload, 2000, &x, 600, 0, 0);
	cr_assert_eq(n, 4);

	uint8_t bufs[4][700];
	struct gso_frame fr[4];
	struct gso_super s = { &t, x.e, x.n };
	GSO_OPTS(gso_seg_opts, o, .mss = 600);
	for (int i = 0; i < 4; i++)
		fr[i] = (struct gso_frame){ .buf = bufs[i], .cap = sizeof(bufs[i]) };
	cr_assert_eq(gso_segment(&s, &o, fr, 4), 4);
	for (int i = 0; i < 4; i++) {
		const uint8_t *sth = bufs[i] + 34;

		cr_assert_eq(rd16(sth + 18), 0x0123u);
		cr_assert_eq(sth[13], GSO_TCP_ACK | GSO_TCP_URG | (i == 3 ? GSO_TCP_PSH : 0));
		cr_assert_eq(rd32(sth + 4), 0xfffffe00u + (uint32_t)i * 600);
		cr_assert_eq(rd16(bufs[i] + 14 + 4), 0x0100u + (unsigned)i);
	}
	cr_assert_eq(rd32(bufs[3] + 34 + 4), 0x00000508u, "seq must wrap mod 2^32");
	ext_free(&x);
}

/* ---- seg_ipid ---- */

Test(seg_ipid, inc_wraps)
{
	for (int pid = P_TCP4; pid <= P_UDP4; pid += 2) {
		struct gso_tmpl t;
		struct ext_set x;
		uint8_t bufs[5][1200];
		struct gso_frame fr[5];

		mk_tmpl(&t, pid, GSO_TCP_ACK, false, 0xfffe, 1);
		fill_payload(5);
		ext_single(&x, payload, 4001);
		cr_assert_eq(check_all(&t, payload, 4001, &x, 1000, 0, 0), 5);

		struct gso_super s = { &t, x.e, x.n };
		GSO_OPTS(gso_seg_opts, o, .mss = 1000);
		for (int i = 0; i < 5; i++)
			fr[i] = (struct gso_frame){ .buf = bufs[i], .cap = sizeof(bufs[i]) };
		cr_assert_eq(gso_segment(&s, &o, fr, 5), 5);
		static const unsigned want[5] = { 0xfffe, 0xffff, 0x0000, 0x0001, 0x0002 };
		for (int i = 0; i < 5; i++) {
			cr_assert_eq(rd16(bufs[i] + t.l3_off + 4), want[i], "%s seg %d", pname[pid], i);
			cr_assert_eq(rd16(bufs[i] + t.l3_off + 2), i < 4 ? 1000 + t.hdr_len - t.l3_off
									: 1 + t.hdr_len - t.l3_off);
			cr_assert_eq(bufs[i][t.l3_off + 6], 0, "DF must stay clear");
		}
		ext_free(&x);
	}
}

Test(seg_ipid, fixed_needs_df)
{
	for (int pid = P_TCP4; pid <= P_UDP4; pid += 2) {
		struct gso_tmpl t;
		struct ext_set x;

		/* with DF: every segment keeps the template's ID */
		mk_tmpl(&t, pid, GSO_TCP_ACK, true, 0xffff, 1);
		fill_payload(6);
		ext_single(&x, payload, 3500);
		cr_assert_eq(check_all(&t, payload, 3500, &x, 1000, 1, 0), 4);
		uint8_t bufs[4][1200];
		struct gso_frame fr[4];
		struct gso_super s = { &t, x.e, x.n };
		GSO_OPTS(gso_seg_opts, o, .mss = 1000, .ipid = GSO_IPID_FIXED);
		for (int i = 0; i < 4; i++)
			fr[i] = (struct gso_frame){ .buf = bufs[i], .cap = sizeof(bufs[i]) };
		cr_assert_eq(gso_segment(&s, &o, fr, 4), 4);
		for (int i = 0; i < 4; i++)
			cr_assert_eq(rd16(bufs[i] + t.l3_off + 4), 0xffffu);

		/* without DF: refused, nothing written */
		mk_tmpl(&t, pid, GSO_TCP_ACK, false, 0xffff, 1);
		cr_assert_eq(gso_seg_count(&s, &o), -EINVAL);
		check_fails(&s, &o, 4, 1200, -1, 0, -EINVAL, -EINVAL);
		/* a single packet is refused too: the mode is wrong, not the size */
		x.e[0].len = 10;
		check_fails(&s, &o, 4, 1200, -1, 0, -EINVAL, -EINVAL);
		ext_free(&x);
	}
	/* IPv6 has no ID: FIXED is accepted and changes nothing */
	for (int pid = P_TCP6; pid <= P_UDP6; pid += 2) {
		struct gso_tmpl t;
		struct ext_set x;

		mk_tmpl(&t, pid, GSO_TCP_ACK, false, 0, 1);
		fill_payload(7);
		ext_single(&x, payload, 2500);
		cr_assert_eq(check_all(&t, payload, 2500, &x, 1000, 1, 0), 3);
		ext_free(&x);
	}
}

/* ---- seg_csum ---- */

/*
 * Make segment `seg`'s L4 checksum compute to exactly 0 by choosing two
 * payload bytes (at an even offset inside that segment), then check the
 * value Linux puts on the wire.
 */
static unsigned zero_csum_case(int pid, uint32_t mss, size_t total, uint32_t seg)
{
	struct gso_tmpl t;
	struct ext_set x;
	uint8_t f[2000];
	size_t adj = (size_t)seg * mss + 2, len;
	int n;

	mk_tmpl(&t, pid, GSO_TCP_ACK, true, 9, 12345);
	fill_payload(seg + mss);
	payload[adj] = payload[adj + 1] = 0;
	len = ref_frame(&t, payload, total, mss, seg, (uint32_t)((total + mss - 1) / mss), 0, CS_PARTIAL, f);
	/* f's check field holds the pseudo-header seed: sum over the L4 part = full sum */
	uint16_t s = ref_fold(ref_sum(f + t.l4_off, len - t.l4_off, 0));
	wr16(payload + adj, 0xffffu - s);
	len = ref_frame(&t, payload, total, mss, seg, (uint32_t)((total + mss - 1) / mss), 0, CS_PARTIAL, f);
	cr_assert_eq(ref_fold(ref_sum(f + t.l4_off, len - t.l4_off, 0)), 0xffff, "test setup");

	ext_single(&x, payload, total);
	n = check_all(&t, payload, total, &x, mss, 0, 0);
	uint8_t *bufs = malloc((size_t)n * 1600);
	struct gso_frame fr[8];
	struct gso_super su = { &t, x.e, x.n };
	GSO_OPTS(gso_seg_opts, o, .mss = mss);
	for (int i = 0; i < n; i++)
		fr[i] = (struct gso_frame){ .buf = bufs + i * 1600, .cap = 1600 };
	cr_assert_eq(gso_segment(&su, &o, fr, 8), n);
	unsigned got = rd16(bufs + seg * 1600 + t.l4_off + (t.l4 == 6 ? 16 : 6));
	free(bufs);
	ext_free(&x);
	return got;
}

Test(seg_csum, tcp_zero_is_0000_in_gso_segments)
{
	cr_assert_eq(zero_csum_case(P_TCP4, 1000, 3000, 0), 0x0000);
	cr_assert_eq(zero_csum_case(P_TCP4, 1000, 2500, 2), 0x0000); /* last, short */
	cr_assert_eq(zero_csum_case(P_TCP6, 1000, 3000, 1), 0x0000);
	cr_assert_eq(zero_csum_case(P_TCP4_X, 700, 1500, 2), 0x0000);
}

Test(seg_csum, tcp_zero_is_ffff_in_single_packet)
{
	cr_assert_eq(zero_csum_case(P_TCP4, 1000, 1000, 0), 0xffff);
	cr_assert_eq(zero_csum_case(P_TCP6, 1000, 7, 0), 0xffff);
}

Test(seg_csum, udp_zero_is_always_ffff)
{
	cr_assert_eq(zero_csum_case(P_UDP4, 1000, 3000, 0), 0xffff);
	cr_assert_eq(zero_csum_case(P_UDP4, 1000, 2100, 2), 0xffff);
	cr_assert_eq(zero_csum_case(P_UDP6, 1000, 3000, 1), 0xffff);
	cr_assert_eq(zero_csum_case(P_UDP6, 1000, 900, 0), 0xffff);
}

/* PARTIAL seed = folded pseudo-header with this segment's L4 length. */
Test(seg_csum, partial_seed_literal)
{
	struct gso_tmpl t;
	struct gso_extent e = { payload, 2500 };
	uint8_t bufs[3][1200];
	struct gso_frame fr[3];

	mk_tmpl(&t, P_TCP4, GSO_TCP_ACK, true, 1, 1);
	struct gso_super s = { &t, &e, 1 };
	GSO_OPTS(gso_seg_opts, o, .mss = 1000, .csum = GSO_CSUM_PARTIAL);
	for (int i = 0; i < 3; i++)
		fr[i] = (struct gso_frame){ .buf = bufs[i], .cap = sizeof(bufs[i]) };
	cr_assert_eq(gso_segment(&s, &o, fr, 3), 3);
	for (int i = 0; i < 3; i++) {
		/* 10.x addresses from mk_tmpl: saddr fd fc ff fe, daddr 3c 4d 5e 6f */
		uint32_t l4len = 20u + (i < 2 ? 1000u : 500u);
		uint32_t ps = 0xfdfc + 0xfffe + 0x3c4d + 0x5e6f + 6 + l4len;

		cr_assert_eq(rd16(bufs[i] + t.l4_off + 16), ref_fold(ps), "seg %d", i);
		cr_assert_eq(fr[i].csum_start, 34);
		cr_assert_eq(fr[i].csum_offset, 16);
	}
}

/* ---- seg_ext ---- */

Test(seg_ext, odd_splits_same_frames)
{
	uint64_t rng = 42;

	for (int round = 0; round < 60; round++) {
		int pid = (int)(gso_test_rand(&rng) % P_COUNT);
		uint32_t mss = 1 + (uint32_t)(gso_test_rand(&rng) % 1500);
		size_t len = gso_test_rand(&rng) % 9000;
		struct gso_tmpl t;
		struct ext_set x;

		if (pid == P_UDP4 || pid == P_UDP6 || pid == P_UDP6_X)
			while ((len + mss - 1) / mss > GSO_UDP_MAX_SEGS)
				mss *= 2;
		mk_tmpl(&t, pid, GSO_TCP_ACK | GSO_TCP_PSH, true, (uint16_t)round, (uint32_t)round);
		fill_payload((uint64_t)round);
		ext_split(&x, payload, len, &rng);
		int n = check_all(&t, payload, len, &x, mss, 0, 0);
		cr_assert_eq((size_t)n, len ? (len + mss - 1) / mss : 1);
		ext_free(&x);
	}
}

/* Extents ending exactly on segment boundaries, and many empty ones. */
Test(seg_ext, boundaries_and_empties)
{
	struct gso_tmpl t;
	struct ext_set x;
	static const size_t cuts[][6] = {
		{ 1000, 1000, 1000, 0, 0, 0 },
		{ 0, 0, 999, 1, 2000, 0 },
		{ 1001, 0, 999, 0, 1000, 0 },
		{ 1, 1, 1, 1, 1, 2995 },
		{ 2999, 1, 0, 0, 0, 0 },
	};

	mk_tmpl(&t, P_TCP4, GSO_TCP_ACK, true, 1, 1);
	fill_payload(3);
	for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
		size_t done = 0;

		memset(&x, 0, sizeof(x));
		for (int k = 0; k < 6; k++) {
			x.own[k] = cuts[c][k] ? malloc(cuts[c][k]) : NULL;
			if (cuts[c][k])
				memcpy(x.own[k], payload + done, cuts[c][k]);
			x.e[k].base = x.own[k];
			x.e[k].len = cuts[c][k];
			done += cuts[c][k];
		}
		x.n = 6;
		cr_assert_eq(check_all(&t, payload, done, &x, 1000, 0, 0), 3, "cut %zu", c);
		ext_free(&x);
	}
}

/* ---- seg_err ---- */

Test(seg_err, options_and_arguments)
{
	struct gso_tmpl t;
	struct gso_extent e = { payload, 3000 };
	struct gso_super s = { &t, &e, 1 };

	mk_tmpl(&t, P_TCP4, GSO_TCP_ACK, true, 1, 1);
	{
		GSO_OPTS(gso_seg_opts, o, .mss = 0);
		check_fails(&s, &o, 8, 2000, -1, 0, -EINVAL, -EINVAL);
	}
	{
		GSO_OPTS(gso_seg_opts, o, .mss = 65536);
		check_fails(&s, &o, 8, 2000, -1, 0, -EINVAL, -EINVAL);
	}
	{
		GSO_OPTS(gso_seg_opts, o, .mss = 1000, .csum = 2);
		check_fails(&s, &o, 8, 2000, -1, 0, -EINVAL, -EINVAL);
	}
	{
		GSO_OPTS(gso_seg_opts, o, .mss = 1000, .ipid = 2);
		check_fails(&s, &o, 8, 2000, -1, 0, -EINVAL, -EINVAL);
	}
	{
		GSO_OPTS(gso_seg_opts, o, .mss = 1000, .max_segs = GSO_MAX_SEGS + 1);
		check_fails(&s, &o, 8, 2000, -1, 0, -EINVAL, -EINVAL);
	}
	{
		/* sz too small to hold sz itself */
		GSO_OPTS(gso_seg_opts, o, .mss = 1000);
		o.sz = 4;
		check_fails(&s, &o, 8, 2000, -1, 0, -EINVAL, -EINVAL);
	}
	{
		/* a newer caller's struct with a non-zero field we do not know */
		struct { struct gso_seg_opts o; uint64_t future; } big;
		memset(&big, 0, sizeof(big));
		big.o.sz = sizeof(big);
		big.o.mss = 1000;
		big.future = 1;
		check_fails(&s, &big.o, 8, 2000, -1, 0, -EINVAL, -EINVAL);
		big.future = 0; /* zero tail is fine */
		cr_assert_eq(gso_seg_count(&s, &big.o), 3);
	}
	{
		/* an older caller's struct without max_segs: defaults apply */
		GSO_OPTS(gso_seg_opts, o, .mss = 1000, .max_segs = 2);
		o.sz = offsetof(struct gso_seg_opts, max_segs);
		cr_assert_eq(gso_seg_count(&s, &o), 3);
	}
	GSO_OPTS(gso_seg_opts, o, .mss = 1000);
	check_fails(&s, NULL, 8, 2000, -1, 0, -EINVAL, -EINVAL);
	check_fails(NULL, &o, 8, 2000, -1, 0, -EINVAL, -EINVAL);
	{
		struct gso_super s2 = { NULL, &e, 1 };
		check_fails(&s2, &o, 8, 2000, -1, 0, -EINVAL, -EINVAL);
	}
	{
		struct gso_super s2 = { &t, NULL, 1 };
		check_fails(&s2, &o, 8, 2000, -1, 0, -EINVAL, -EINVAL);
	}
	{
		struct gso_extent e2[2] = { { payload, 10 }, { NULL, 5 } };
		struct gso_super s2 = { &t, e2, 2 };
		check_fails(&s2, &o, 8, 2000, -1, 0, -EINVAL, -EINVAL);
	}
	/* NULL out arrays */
	cr_assert_eq(gso_segment(&s, &o, NULL, 8), -EINVAL);
	cr_assert_eq(gso_segment_ref(&s, &o, NULL, 8), -EINVAL);
	/* NULL base with length 0 is fine, so is no extent at all */
	{
		struct gso_extent e2[2] = { { NULL, 0 }, { payload, 5 } };
		struct gso_super s2 = { &t, e2, 2 };
		cr_assert_eq(gso_seg_count(&s2, &o), 1);
		struct gso_super s3 = { &t, NULL, 0 };
		cr_assert_eq(gso_seg_count(&s3, &o), 1);
	}
}

Test(seg_err, outputs_too_small)
{
	for (int pid = 0; pid < P_COUNT; pid++) {
		struct gso_tmpl t;
		struct gso_extent e = { payload, 2500 };
		struct gso_super s = { &t, &e, 1 };
		GSO_OPTS(gso_seg_opts, o, .mss = 1000);
		uint32_t full;

		mk_tmpl(&t, pid, GSO_TCP_ACK, true, 1, 1);
		full = t.hdr_len + 1000u;
		check_fails(&s, &o, 2, full, -1, 0, -ENOSPC, -ENOSPC);       /* n_out too small */
		check_fails(&s, &o, 0, full, -1, 0, -ENOSPC, -ENOSPC);
		check_fails(&s, &o, 3, full, 1, full - 1, -ENOBUFS, 3); /* middle frame one byte short */
		check_fails(&s, &o, 3, full, 2, t.hdr_len + 499u, -ENOBUFS, 3); /* last one byte short */
		check_fails(&s, &o, 3, full, 0, t.hdr_len - 1u, -ENOBUFS, -ENOBUFS);    /* even the header */
		check_fails(&s, &o, 3, full, -2, 0, -EINVAL, -EINVAL);        /* a NULL buffer */
		/* exact sizes are enough */
		uint8_t b0[1200], b1[1200], b2[1200];
		struct gso_frame fr[3] = { { b0, full, 0, 0, 0 }, { b1, full, 0, 0, 0 },
					   { b2, t.hdr_len + 500u, 0, 0, 0 } };
		cr_assert_eq(gso_segment(&s, &o, fr, 3), 3);
		struct gso_seg_ref rf[3] = { { .hdr = b0, .hdr_cap = t.hdr_len },
					     { .hdr = b1, .hdr_cap = t.hdr_len },
					     { .hdr = b2, .hdr_cap = t.hdr_len } };
		cr_assert_eq(gso_segment_ref(&s, &o, rf, 3), 3);
	}
}

Test(seg_err, damaged_template)
{
	struct gso_tmpl good, t;
	struct gso_extent e = { payload, 2500 };
	struct gso_super s = { &t, &e, 1 };
	GSO_OPTS(gso_seg_opts, o, .mss = 1000);

	mk_tmpl(&good, P_TCP4_X, GSO_TCP_ACK, true, 1, 1);
#define DAMAGE(stmt)                                              \
	do {                                                      \
		t = good;                                         \
		stmt;                                             \
		check_fails(&s, &o, 4, 1400, -1, 0, -EINVAL, -EINVAL);     \
	} while (0)
	DAMAGE(t.l3 = 5);
	DAMAGE(t.l4 = 1);
	DAMAGE(t.hdr_len = 255);
	DAMAGE(t.hdr_len++);
	DAMAGE(t.l4_len = 8);
	DAMAGE(t.l4_off += 4);
	DAMAGE(t.l3_off = 0);
	DAMAGE(t.hdr[t.l3_off] = 0x46);              /* IHL disagrees with l4_off */
	DAMAGE(t.hdr[t.l3_off] = 0x65);              /* version */
	DAMAGE(t.hdr[t.l3_off + 9] = 17);            /* protocol */
	DAMAGE(t.hdr[t.l3_off + 6] |= 0x20);         /* MF: a fragment */
	DAMAGE(t.hdr[t.l3_off + 7] = 1);             /* fragment offset */
	DAMAGE(t.hdr[t.l4_off + 12] = 0x50);         /* doff disagrees */
	DAMAGE(t.hdr[t.l4_off + 12] = 0x40);         /* doff < 5 */
	/* offsets that would make the checks themselves read past hdr_len */
	DAMAGE(t.l4_len = 0; t.hdr_len = t.l4_off);
	DAMAGE(t.l4_len = 4; t.hdr_len = t.l4_off + 4);
	DAMAGE(t.l4_off = 250; t.l4_len = 5; t.hdr_len = 255);
	DAMAGE(t.hdr[t.l3_off] = 0x50; t.l4_off = t.l3_off + 64; t.hdr_len = t.l4_off + t.l4_len);
	DAMAGE(t.l4_off = t.l3_off + 8; t.hdr_len = t.l4_off + t.l4_len);
	/* a consistent IPv4 header at the very end of hdr[], L4 offset 255 */
	DAMAGE(memmove(t.hdr + 235, t.hdr + t.l3_off, 20); t.hdr[235] = 0x45; t.l3_off = 235;
	       t.l4_off = 255; t.l4_len = 0; t.hdr_len = 255);
	DAMAGE(memset(&t, 0xff, sizeof(t)));
	DAMAGE(memset(&t, 0, sizeof(t)));
	/* SYN or RST on a multi-segment super-segment */
	DAMAGE(t.hdr[t.l4_off + 13] |= GSO_TCP_SYN);
	DAMAGE(t.hdr[t.l4_off + 13] |= GSO_TCP_RST);
#undef DAMAGE
	/* ...but a single SYN packet is fine */
	t = good;
	t.hdr[t.l4_off + 13] = GSO_TCP_SYN;
	e.len = 100;
	cr_assert_eq(gso_seg_count(&s, &o), 1);

	mk_tmpl(&good, P_UDP6, 0, false, 0, 0);
	t = good;
	e.len = 2500;
	cr_assert_eq(gso_seg_count(&s, &o), 3);
	t.hdr[t.l3_off + 6] = 6;
	check_fails(&s, &o, 4, 1400, -1, 0, -EINVAL, -EINVAL);
	t = good;
	t.l4_len = 20;
	t.hdr_len += 12;
	check_fails(&s, &o, 4, 1400, -1, 0, -EINVAL, -EINVAL);
}

/* ---- seg_random: random super-segments against the reference ---- */

Test(seg_random, against_reference)
{
	uint64_t rng = 0x5e9;

	for (int round = 0; round < 150; round++) {
		int pid = (int)(gso_test_rand(&rng) % P_COUNT);
		int udp = pid == P_UDP4 || pid == P_UDP6 || pid == P_UDP6_X;
		uint32_t r = (uint32_t)gso_test_rand(&rng);
		uint32_t mss = r % 3 == 0 ? 1 + r % 64 : 500 + r % 9000;
		size_t len = gso_test_rand(&rng) % 20000;
		uint8_t flags = (uint8_t)(gso_test_rand(&rng) & (GSO_TCP_FIN | GSO_TCP_PSH | GSO_TCP_ACK |
								  GSO_TCP_ECE | GSO_TCP_CWR));
		int fixed = (int)(gso_test_rand(&rng) & 1);
		struct gso_tmpl t;
		struct ext_set x;

		if ((len + mss - 1) / mss > (udp ? 128u : 800u))
			len = (size_t)mss * (udp ? 128u : 800u);
		if (len > 60000)
			len = 60000;
		mk_tmpl(&t, pid, flags, true, (uint16_t)gso_test_rand(&rng), (uint32_t)gso_test_rand(&rng));
		fill_payload((uint64_t)round * 77);
		if (round & 1)
			ext_split(&x, payload, len, &rng);
		else
			ext_single(&x, payload, len);
		int n = check_all(&t, payload, len, &x, mss, fixed, 0);
		cr_assert_eq((size_t)n, len ? (len + mss - 1) / mss : 1);
		ext_free(&x);
	}
}

/*
 * Payload of at most one MSS takes the library's one-segment path (no
 * plan): every protocol, both checksum modes and forms, IP ID modes,
 * extent splits, lengths 0..mss, and SYN/RST, which only a single
 * segment may carry.
 */
Test(seg_random, one_segment_against_reference)
{
	uint64_t rng = 0x1e9;

	for (int round = 0; round < 400; round++) {
		int pid = round % P_COUNT;
		int tcp = !(pid == P_UDP4 || pid == P_UDP6 || pid == P_UDP6_X);
		uint32_t r = (uint32_t)gso_test_rand(&rng);
		uint32_t mss = r % 4 == 0 ? 1 + r % 64 : 1 + r % 9000;
		size_t len = r % 5 == 1 ? mss : r % 7 == 2 ? 0 : gso_test_rand(&rng) % (mss + 1u);
		uint8_t flags = (uint8_t)(gso_test_rand(&rng) & (GSO_TCP_FIN | GSO_TCP_PSH | GSO_TCP_ACK |
								  GSO_TCP_ECE | GSO_TCP_CWR));
		int fixed = (int)(gso_test_rand(&rng) & 1);
		struct gso_tmpl t;
		struct ext_set x;

		mk_tmpl(&t, pid, flags, true, (uint16_t)gso_test_rand(&rng), (uint32_t)gso_test_rand(&rng));
		if (tcp && round % 11 == 3)
			t.hdr[t.l4_off + 13] |= round & 1 ? GSO_TCP_SYN : GSO_TCP_RST;
		fill_payload((uint64_t)round * 31);
		if (round & 2)
			ext_split(&x, payload, len, &rng);
		else
			ext_single(&x, payload, len);
		cr_assert_eq(check_all(&t, payload, len, &x, mss, fixed, 0), 1, "round %d", round);
		ext_free(&x);
	}
}
