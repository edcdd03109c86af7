/*
 * Checksum tests: every implementation this CPU runs, against an
 * independent 16-bit reference loop written here.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <gso/csum.h>

#include "csum_internal.h" /* csum_*_split */
#include "gso_test.h"

/* ---- reference: RFC 1071 word by word, as plainly as possible ---- */

static uint16_t ref_fold(const void *buf, size_t len, uint32_t seed)
{
	const unsigned char *p = buf;
	uint64_t s = seed;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		uint16_t w;

		memcpy(&w, p + i, 2);
		s += w;
	}
	if (len & 1) {
		/* The odd byte is the first (lower-address) half of a word. */
		unsigned char last[2] = { p[len - 1], 0 };
		uint16_t w;

		memcpy(&w, last, 2);
		s += w;
	}
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* A 16-bit big-endian value as it reads from memory (memory order). */
static uint16_t mem16(uint16_t be)
{
	unsigned char b[2] = { (unsigned char)(be >> 8), (unsigned char)be };
	uint16_t w;

	memcpy(&w, b, 2);
	return w;
}

/* ---- implementations under test ---- */

static int impls[GSO_CSUM_IMPL_COUNT];
static int n_impls;

static void impls_init(void)
{
	n_impls = 0;
	for (int i = GSO_CSUM_IMPL_SCALAR; i < GSO_CSUM_IMPL_COUNT; i++)
		if (gso_csum_impl_supported((enum gso_csum_impl)i))
			impls[n_impls++] = i;
	cr_assert_geq(n_impls, 1);
}

static void use_impl(int impl)
{
	cr_assert_eq(gso_csum_select((enum gso_csum_impl)impl), 0, "select %s",
		     gso_csum_impl_name((enum gso_csum_impl)impl));
	cr_assert_eq(gso_csum_current(), (enum gso_csum_impl)impl);
}

static void restore_auto(void)
{
	cr_assert_eq(gso_csum_select(GSO_CSUM_IMPL_AUTO), 0);
}

#define BUF_MAX (65536 + 128)
static unsigned char *buf_a, *buf_b;

static void setup(void)
{
	uint64_t rs = 0x1071;

	impls_init();
	buf_a = malloc(BUF_MAX);
	buf_b = malloc(BUF_MAX);
	cr_assert(buf_a && buf_b);
	gso_test_fill_random(buf_a, BUF_MAX, &rs);
}

static void teardown(void)
{
	free(buf_a);
	free(buf_b);
	restore_auto();
}

static void check_partial(int impl, const unsigned char *p, size_t len, uint32_t seed)
{
	uint16_t want = ref_fold(p, len, seed);
	uint16_t got = gso_csum_fold(gso_csum_partial(p, len, seed));

	cr_assert_eq(got, want, "%s: offset %zu len %zu seed %#x: got %#06x want %#06x",
		     gso_csum_impl_name((enum gso_csum_impl)impl), (size_t)(p - buf_a), len,
		     seed, got, want);
}

/* ---- whole-buffer sums ---- */

TestSuite(csum_partial, .init = setup, .fini = teardown);

Test(csum_partial, every_length_to_4096)
{
	static const size_t offs[] = { 0, 1, 2, 3, 7, 33, 63 };

	for (int k = 0; k < n_impls; k++) {
		use_impl(impls[k]);
		for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++)
			for (size_t len = 0; len <= 4096; len++)
				check_partial(impls[k], buf_a + offs[o], len, 0);
	}
}

static const size_t boundary_lens[] = {
	0,    1,    2,    3,    4,    5,    7,    8,    9,    15,   16,   17,   31,
	32,   33,   63,   64,   65,   95,   96,   97,   127,  128,  129,  191,  192,
	255,  256,  257,  511,  512,  513,  1023, 1024, 1025, 1447, 1448, 1449, 1500,
	1514, 4095, 4096, 4097, 8191, 8192, 9000, 9001, 16383, 16384, 32767, 32768,
	32769, 65534, 65535,
};

Test(csum_partial, all_offsets_boundary_lengths)
{
	for (int k = 0; k < n_impls; k++) {
		use_impl(impls[k]);
		for (size_t off = 0; off < 64; off++)
			for (size_t i = 0; i < sizeof(boundary_lens) / sizeof(boundary_lens[0]); i++)
				check_partial(impls[k], buf_a + off, boundary_lens[i], 0);
	}
}

Test(csum_partial, random_offset_length_seed)
{
	uint64_t rs = 42;

	for (int k = 0; k < n_impls; k++) {
		use_impl(impls[k]);
		for (int i = 0; i < 300; i++) {
			size_t off = gso_test_rand(&rs) % 64;
			size_t len = gso_test_rand(&rs) % 65536;
			uint32_t seed = (uint32_t)gso_test_rand(&rs);

			check_partial(impls[k], buf_a + off, len, seed);
		}
	}
}

/* All-ones data maximises carries; all-zero data must stay exactly zero. */
Test(csum_partial, carry_and_zero_patterns)
{
	static const uint32_t seeds[] = { 0, 1, 0xffff, 0x10000, 0xfffffffe, 0xffffffff };

	for (int k = 0; k < n_impls; k++) {
		use_impl(impls[k]);
		for (int fill = 0; fill < 2; fill++) {
			memset(buf_a, fill ? 0xff : 0, BUF_MAX);
			for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++)
				for (size_t i = 0; i < sizeof(boundary_lens) / sizeof(boundary_lens[0]); i++) {
					check_partial(impls[k], buf_a, boundary_lens[i], seeds[s]);
					check_partial(impls[k], buf_a + 1, boundary_lens[i], seeds[s]);
				}
			if (!fill)
				cr_assert_eq(gso_csum_partial(buf_a, 65535, 0), 0);
		}
	}
}

Test(csum_partial, empty_and_null)
{
	for (int k = 0; k < n_impls; k++) {
		use_impl(impls[k]);
		cr_assert_eq(gso_csum_fold(gso_csum_partial(NULL, 0, 0x12345678)), gso_csum_fold(0x12345678));
		cr_assert_eq(gso_csum_fold(gso_csum_copy(NULL, NULL, 0, 0xffffffff)), 0xffff);
		cr_assert_eq(gso_csum_partial(NULL, 0, 0), 0);
	}
}

/* RFC 1071 worked header: the classic example IPv4 header sums to 0xb861. */
Test(csum_partial, ipv4_header_known_answer)
{
	static const unsigned char hdr[20] = {
		0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
		0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
	};
	unsigned char with[20];
	uint16_t c;

	for (int k = 0; k < n_impls; k++) {
		use_impl(impls[k]);
		c = gso_csum_finish(gso_csum_partial(hdr, sizeof(hdr), 0));
		cr_assert_eq(c, mem16(0xb861), "%s: got %#06x",
			     gso_csum_impl_name((enum gso_csum_impl)impls[k]), c);
		/* Stored into the packet, it verifies to zero. */
		memcpy(with, hdr, 20);
		memcpy(with + 10, &c, 2);
		cr_assert_eq(gso_csum_finish(gso_csum_partial(with, 20, 0)), 0);
	}
}

/* ---- fused copy ---- */

Test(csum_partial, copy_matches_and_copies)
{
	uint64_t rs = 7;

	for (int k = 0; k < n_impls; k++) {
		use_impl(impls[k]);
		for (int i = 0; i < 1500; i++) {
			size_t soff = gso_test_rand(&rs) % 64;
			size_t doff = gso_test_rand(&rs) % 64;
			size_t len = i < 1200 ? (size_t)i : gso_test_rand(&rs) % 65536;
			uint32_t seed = (uint32_t)gso_test_rand(&rs);
			unsigned char *d = buf_b + doff;

			memset(buf_b, 0xa5, BUF_MAX);
			uint16_t got = gso_csum_fold(gso_csum_copy(d, buf_a + soff, len, seed));

			cr_assert_eq(got, ref_fold(buf_a + soff, len, seed),
				     "%s: copy src+%zu dst+%zu len %zu",
				     gso_csum_impl_name((enum gso_csum_impl)impls[k]), soff, doff, len);
			cr_assert_eq(memcmp(d, buf_a + soff, len), 0, "copy differs, len %zu", len);
			/* Nothing outside [dst, dst+len) is written. */
			for (size_t j = 0; j < doff; j++)
				cr_assert_eq(buf_b[j], 0xa5);
			for (size_t j = doff + len; j < doff + len + 64 && j < BUF_MAX; j++)
				cr_assert_eq(buf_b[j], 0xa5, "wrote past end, len %zu", len);
		}
	}
}

/* ---- pieces combined with gso_csum_block_add ---- */

TestSuite(csum_pieces, .init = setup, .fini = teardown);

Test(csum_pieces, two_pieces_every_split)
{
	static const size_t lens[] = { 0, 1, 2, 3, 64, 65, 257, 1448, 1449 };
	static const size_t offs[] = { 0, 1, 2, 5 };

	for (int k = 0; k < n_impls; k++) {
		use_impl(impls[k]);
		for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++)
			for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
				const unsigned char *p = buf_a + offs[o];
				size_t len = lens[l];
				uint16_t want = ref_fold(p, len, 0);

				for (size_t cut = 0; cut <= len; cut++) {
					uint32_t s = gso_csum_partial(p, cut, 0);

					s = gso_csum_block_add(s, gso_csum_partial(p + cut, len - cut, 0), cut);
					cr_assert_eq(gso_csum_fold(s), want, "len %zu cut %zu", len, cut);
				}
			}
	}
}

Test(csum_pieces, many_random_pieces_and_copy)
{
	uint64_t rs = 99;

	for (int k = 0; k < n_impls; k++) {
		use_impl(impls[k]);
		for (int it = 0; it < 200; it++) {
			size_t len = gso_test_rand(&rs) % 20000;
			size_t pos = 0;
			uint32_t s = 0, sc = 0;

			while (pos < len) {
				size_t n = 1 + gso_test_rand(&rs) % 3000;

				if (n > len - pos)
					n = len - pos;
				s = gso_csum_block_add(s, gso_csum_partial(buf_a + pos, n, 0), pos);
				sc = gso_csum_block_add(sc, gso_csum_copy(buf_b + pos, buf_a + pos, n, 0), pos);
				pos += n;
			}
			cr_assert_eq(gso_csum_fold(s), ref_fold(buf_a, len, 0));
			cr_assert_eq(gso_csum_fold(sc), ref_fold(buf_a, len, 0));
			cr_assert_eq(memcmp(buf_b, buf_a, len), 0);
		}
	}
}

/* ---- folding and the inline building blocks ---- */

struct fold_case {
	uint32_t in;
	uint16_t fold;
};

ParameterizedTestParameters(csum_fold, fold_table)
{
	static struct fold_case cases[] = {
		{ 0, 0 },
		{ 1, 1 },
		{ 0xffff, 0xffff },
		{ 0x10000, 1 },
		{ 0x1fffe, 0xffff }, /* 0xfffe + 1: one carry, no second */
		{ 0x1ffff, 1 },      /* 0xffff + 1 = 0x10000: needs the second fold */
		{ 0xfffeffff, 0xfffe },
		{ 0xffff0000, 0xffff },
		{ 0xffffffff, 0xffff },
		{ 0x12345678, 0x68ac },
	};
	return cr_make_param_array(struct fold_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct fold_case *c, csum_fold, fold_table)
{
	cr_assert_eq(gso_csum_fold(c->in), c->fold, "fold(%#x) = %#x", c->in, gso_csum_fold(c->in));
	cr_assert_eq(gso_csum_finish(c->in), (uint16_t)~c->fold);
}

Test(csum_fold, add_sub_block_add)
{
	cr_assert_eq(gso_csum_add(0xffffffff, 1), 1);
	cr_assert_eq(gso_csum_add(0x80000000, 0x80000000), 1);
	cr_assert_eq(gso_csum_add(0, 0), 0);
	cr_assert_eq(gso_csum_fold(gso_csum_sub(0x1234, 0x1234)), 0xffff);
	cr_assert_eq(gso_csum_fold(gso_csum_sub(0x5000, 0x1000)), 0x4000);
	/* An odd offset swaps the bytes of each half. */
	cr_assert_eq(gso_csum_block_add(0, 0x00001234, 1), 0x34000012);
	cr_assert_eq(gso_csum_block_add(0, 0x00001234, 2), 0x1234);
	cr_assert_eq(gso_csum_fold(gso_csum_block_add(0, 0x00001234, 3)), 0x3412);
}

/* ---- pseudo-headers ---- */

/*
 * Known answers, summed by hand in network order (then cross-checked with
 * a one-line Python fold) and compared after conversion to memory order:
 *
 *  v4 192.168.0.1 -> 192.168.0.199, UDP (17), length 95 (0x5f):
 *    c0a8 + 0001 + c0a8 + 00c7 + 0011 + 005f = 0x18288 -> fold 0x8289
 *    same with length 0:                       0x18229 -> fold 0x822a
 *  v6 2001:db8::1 -> 2001:db8::2, TCP (6), length 20 (0x14):
 *    2001+0db8+0001 + 2001+0db8+0002 + 0006 + 0014 = 0x5b8f
 *    same with length 0x12345 (32-bit: words 0001, 2345):
 *    0x5b7b + 0001 + 2345 = 0x7ec1
 *  v6 all-ones addresses, proto 255, length 0xffffffff:
 *    18 words 0xffff + 0x00ff = 0x00ff (mod 0xffff)
 *  v4 0.0.0.0 -> 0.0.0.0, proto 0, length 0: exactly 0.
 */
Test(csum_pseudo, known_answers)
{
	static const unsigned char s4[4] = { 192, 168, 0, 1 }, d4[4] = { 192, 168, 0, 199 };
	static const unsigned char z4[4] = { 0 };
	static const unsigned char s6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const unsigned char d6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
	unsigned char f6[16];

	memset(f6, 0xff, sizeof(f6));
	cr_assert_eq(gso_csum_fold(gso_csum_pseudo4(s4, d4, 17, 95)), mem16(0x8289));
	cr_assert_eq(gso_csum_fold(gso_csum_pseudo4(s4, d4, 17, 0)), mem16(0x822a));
	cr_assert_eq(gso_csum_pseudo4(z4, z4, 0, 0), 0);
	cr_assert_eq(gso_csum_fold(gso_csum_pseudo6(s6, d6, 6, 20)), mem16(0x5b8f));
	cr_assert_eq(gso_csum_fold(gso_csum_pseudo6(s6, d6, 6, 0x12345)), mem16(0x7ec1));
	cr_assert_eq(gso_csum_fold(gso_csum_pseudo6(f6, f6, 255, 0xffffffff)), mem16(0x00ff));
}

/* Against the pseudo-header laid out in memory and summed by the reference. */
Test(csum_pseudo, against_layout)
{
	uint64_t rs = 1624;

	for (int i = 0; i < 2000; i++) {
		unsigned char ph[40], a[16 + 1], b[16 + 1];
		uint8_t proto = (uint8_t)gso_test_rand(&rs);
		uint32_t len = i & 1 ? (uint32_t)gso_test_rand(&rs) % 65536 : (uint32_t)gso_test_rand(&rs);

		gso_test_fill_random(a, sizeof(a), &rs);
		gso_test_fill_random(b, sizeof(b), &rs);
		/* v4: saddr, daddr, zero, proto, 16-bit length (only the low 16 bits
		 * when it fits: the upper word is zero then). */
		if (len < 65536) {
			memcpy(ph, a + 1, 4);
			memcpy(ph + 4, b + 1, 4);
			ph[8] = 0;
			ph[9] = proto;
			ph[10] = (unsigned char)(len >> 8);
			ph[11] = (unsigned char)len;
			cr_assert_eq(gso_csum_fold(gso_csum_pseudo4(a + 1, b + 1, proto, len)),
				     ref_fold(ph, 12, 0));
		}
		/* v6: saddr, daddr, 32-bit length, 3 zero bytes, next header. */
		memcpy(ph, a + 1, 16);
		memcpy(ph + 16, b + 1, 16);
		ph[32] = (unsigned char)(len >> 24);
		ph[33] = (unsigned char)(len >> 16);
		ph[34] = (unsigned char)(len >> 8);
		ph[35] = (unsigned char)len;
		ph[36] = ph[37] = ph[38] = 0;
		ph[39] = proto;
		cr_assert_eq(gso_csum_fold(gso_csum_pseudo6(a + 1, b + 1, proto, len)),
			     ref_fold(ph, 40, 0));
	}
}

/*
 * The two seed conventions of offload-reference §0, checked by doing the
 * consumer's job: with CHECKSUM_PARTIAL semantics the device sums the L4
 * bytes *including* the seed sitting in the checksum field and stores the
 * complement; that must equal a full software checksum.  An e1000-style
 * device adds the length itself to a length-0 seed.
 */
Test(csum_pseudo, offload_seed_conventions)
{
	uint64_t rs = 793;
	unsigned char seg[1500 + 40];

	for (int i = 0; i < 500; i++) {
		unsigned char sa[16], da[16];
		size_t l4_len = 20 + gso_test_rand(&rs) % 1481;
		int v6 = i & 1;
		uint32_t ph, ph0;
		uint16_t full, seed, dev;

		gso_test_fill_random(sa, sizeof(sa), &rs);
		gso_test_fill_random(da, sizeof(da), &rs);
		gso_test_fill_random(seg, l4_len, &rs);
		ph = v6 ? gso_csum_pseudo6(sa, da, 6, (uint32_t)l4_len)
			: gso_csum_pseudo4(sa, da, 6, (uint32_t)l4_len);
		ph0 = v6 ? gso_csum_pseudo6(sa, da, 6, 0) : gso_csum_pseudo4(sa, da, 6, 0);

		/* Software: check field (TCP offset 16) zero while summing. */
		memset(seg + 16, 0, 2);
		full = gso_csum_finish(gso_csum_partial(seg, l4_len, ph));

		/* Linux GSO / virtio / AF_XDP metadata: folded seed with length. */
		seed = gso_csum_fold(ph);
		memcpy(seg + 16, &seed, 2);
		dev = gso_csum_finish(gso_csum_partial(seg, l4_len, 0));
		cr_assert_eq(dev, full, "v%d len %zu", v6 ? 6 : 4, l4_len);

		/* e1000 TSO / DPDK: length-0 seed, the device adds the length. */
		seed = gso_csum_fold(gso_csum_add(gso_csum_fold(ph0), mem16((uint16_t)l4_len)));
		memcpy(seg + 16, &seed, 2);
		dev = gso_csum_finish(gso_csum_partial(seg, l4_len, 0));
		cr_assert_eq(dev, full, "len-0 seed, v%d len %zu", v6 ? 6 : 4, l4_len);
	}
}

/* ---- incremental update (RFC 1624) ---- */

TestSuite(csum_replace, .init = setup, .fini = teardown);

Test(csum_replace, against_recompute)
{
	uint64_t rs = 31;

	for (int i = 0; i < 5000; i++) {
		size_t len = 24 + gso_test_rand(&rs) % 1477;
		unsigned char *pkt = buf_b;
		uint16_t check, c2;
		size_t at = 2 * (gso_test_rand(&rs) % ((len - 4) / 2));

		gso_test_fill_random(pkt, len, &rs);
		if (at == 0)
			at = 2; /* the checksum field lives at 0..1 */
		memset(pkt, 0, 2);
		check = gso_csum_finish(gso_csum_partial(pkt, len, 0));
		memcpy(pkt, &check, 2);

		if (i & 1) {
			uint16_t o, n = (uint16_t)gso_test_rand(&rs);

			memcpy(&o, pkt + at, 2);
			memcpy(pkt + at, &n, 2);
			c2 = gso_csum_replace2(check, o, n);
		} else {
			uint32_t o, n = (uint32_t)gso_test_rand(&rs);

			if (at + 4 > len)
				at -= 2;
			memcpy(&o, pkt + at, 4);
			memcpy(pkt + at, &n, 4);
			c2 = gso_csum_replace4(check, o, n);
		}
		memset(pkt, 0, 2);
		cr_assert_eq(c2, gso_csum_finish(gso_csum_partial(pkt, len, 0)), "iter %d", i);
	}
}

Test(csum_replace, edge_values)
{
	/* Unchanged field: unchanged checksum (for any non-zero-sum packet). */
	cr_assert_eq(gso_csum_replace2(0x1234, 0xabcd, 0xabcd), 0x1234);
	cr_assert_eq(gso_csum_replace4(0x1234, 0xdeadbeef, 0xdeadbeef), 0x1234);
	/* Sum 0x0001 -> 0x0000 (+0 is 0xffff in ones' complement): check 0xfffe -> 0x0000. */
	cr_assert_eq(gso_csum_replace2(0xfffe, 0x0001, 0x0000), 0x0000);
	/* Sum 0xfffe, +1 -> 0xffff: check 0x0001 -> 0x0000. */
	cr_assert_eq(gso_csum_replace2(0x0001, 0x0000, 0x0001), 0x0000);
	/* RFC 1624 section 3 example: HC 0xdd2f, m 0x5555 -> m' 0x3285 gives 0x0000. */
	cr_assert_eq(gso_csum_replace2(0xdd2f, 0x5555, 0x3285), 0x0000);
	/* A 32-bit change is the sum of its two 16-bit word changes. */
	cr_assert_eq(gso_csum_replace4(0x4321, 0x00010002, 0x00030004),
		     gso_csum_replace2(gso_csum_replace2(0x4321, 0x0001, 0x0003), 0x0002, 0x0004));
}

/* ---- implementation selection ---- */

Test(csum_select, errors_and_names, .fini = restore_auto)
{
	cr_assert_eq(gso_csum_select((enum gso_csum_impl)-1), -EINVAL);
	cr_assert_eq(gso_csum_select(GSO_CSUM_IMPL_COUNT), -EINVAL);
	cr_assert_eq(gso_csum_select((enum gso_csum_impl)1000), -EINVAL);
	cr_assert_eq(gso_csum_impl_supported(GSO_CSUM_IMPL_COUNT), 0);
	cr_assert_eq(gso_csum_impl_supported((enum gso_csum_impl)-1), 0);
	cr_assert_eq(gso_csum_impl_supported(GSO_CSUM_IMPL_SCALAR), 1);
	cr_assert_eq(gso_csum_impl_supported(GSO_CSUM_IMPL_AUTO), 1);
	cr_assert_str_eq(gso_csum_impl_name(GSO_CSUM_IMPL_SCALAR), "scalar");
	cr_assert_str_eq(gso_csum_impl_name(GSO_CSUM_IMPL_AVX2), "avx2");
	cr_assert_str_eq(gso_csum_impl_name(GSO_CSUM_IMPL_AVX512), "avx512");
	cr_assert_null(gso_csum_impl_name(GSO_CSUM_IMPL_COUNT));

	cr_assert_neq(gso_csum_current(), GSO_CSUM_IMPL_AUTO);
	for (int i = GSO_CSUM_IMPL_SCALAR; i < GSO_CSUM_IMPL_COUNT; i++) {
		enum gso_csum_impl before = gso_csum_current();
		int rc = gso_csum_select((enum gso_csum_impl)i);

		if (gso_csum_impl_supported((enum gso_csum_impl)i)) {
			cr_assert_eq(rc, 0);
			cr_assert_eq(gso_csum_current(), (enum gso_csum_impl)i);
		} else {
			/* A failed call changes nothing. */
			cr_assert_eq(rc, -ENOTSUP);
			cr_assert_eq(gso_csum_current(), before);
		}
	}
	/* AUTO picks the widest supported one. */
	cr_assert_eq(gso_csum_select(GSO_CSUM_IMPL_AUTO), 0);
	for (int i = GSO_CSUM_IMPL_COUNT - 1; i > GSO_CSUM_IMPL_SCALAR; i--)
		if (gso_csum_impl_supported((enum gso_csum_impl)i)) {
			cr_assert_eq(gso_csum_current(), (enum gso_csum_impl)i);
			return;
		}
	cr_assert_eq(gso_csum_current(), GSO_CSUM_IMPL_SCALAR);
}

/* ---- buffers longer than one kernel call (CSUM_CHUNK = 1 GiB) ---- */

/*
 * The front door splits buffers above CSUM_CHUNK into chunk-sized kernel
 * calls.  A > 1 GiB buffer is too slow to test here, so the splitter is
 * tested with small (even) chunks around the public kernels.
 */
Test(csum_partial, split_into_chunks)
{
	static const size_t chunks[] = { 2, 64, 1448, 4096 };
	uint64_t rs = 5;

	for (int k = 0; k < n_impls; k++) {
		use_impl(impls[k]);
		for (int i = 0; i < 200; i++) {
			size_t off = gso_test_rand(&rs) % 64;
			size_t len = gso_test_rand(&rs) % 20000;
			size_t chunk = chunks[i % 4];
			uint32_t seed = (uint32_t)gso_test_rand(&rs);
			uint16_t want = ref_fold(buf_a + off, len, seed);

			cr_assert_eq(gso_csum_fold(gsoi_csum_partial_split(gso_csum_partial, buf_a + off, len,
									   seed, chunk)),
				     want, "len %zu chunk %zu", len, chunk);
			cr_assert_eq(gso_csum_fold(gsoi_csum_copy_split(gso_csum_copy, buf_b, buf_a + off, len,
									seed, chunk)),
				     want, "copy len %zu chunk %zu", len, chunk);
			cr_assert_eq(memcmp(buf_b, buf_a + off, len), 0);
		}
	}
}

/* ---- lazy dispatch under concurrency ---- */

struct racer {
	const unsigned char *buf;
	size_t len;
	uint16_t want;
	int bad;
};

static void *race(void *arg)
{
	struct racer *r = arg;

	for (int i = 0; i < 2000; i++)
		if (gso_csum_fold(gso_csum_partial(r->buf, r->len - (size_t)(i & 1), 0)) !=
		    (i & 1 ? r[1].want : r->want))
			r->bad++;
	return NULL;
}

/*
 * Each Criterion test runs in a fresh process, so these threads race on
 * the very first, resolving call.
 */
Test(csum_select, first_use_from_many_threads)
{
	static unsigned char buf[1501];
	struct racer r[8][2];
	pthread_t t[8];
	uint64_t rs = 3;

	gso_test_fill_random(buf, sizeof(buf), &rs);
	for (int i = 0; i < 8; i++) {
		r[i][0] = (struct racer){ buf, sizeof(buf), ref_fold(buf, sizeof(buf), 0), 0 };
		r[i][1] = (struct racer){ buf, 0, ref_fold(buf, sizeof(buf) - 1, 0), 0 };
		cr_assert_eq(pthread_create(&t[i], NULL, race, r[i]), 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		cr_assert_eq(r[i][0].bad, 0);
	}
	cr_assert_neq(gso_csum_current(), GSO_CSUM_IMPL_AUTO);
}

/* A value without a name gives NULL (callers print their own fallback). */
Test(csum, impl_name_unknown)
{
	cr_expect_null(gso_csum_impl_name(GSO_CSUM_IMPL_COUNT));
	cr_expect_null(gso_csum_impl_name((enum gso_csum_impl)-1));
	cr_expect_null(gso_csum_impl_name((enum gso_csum_impl)1000));
	cr_expect_str_eq(gso_csum_impl_name(GSO_CSUM_IMPL_AUTO), "auto");
}
