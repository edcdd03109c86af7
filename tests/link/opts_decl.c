/*
 * GSO_OPTS as a user of the installed headers meets it, built by
 * tests/check-headers.sh as ISO C11 (-pedantic) and as C++20 with gcc and
 * clang, at -O0 and -O2, linked with libgso and run.
 *
 * The library rejects an options struct whose bytes past the last field
 * it knows are not zero, and gso_tmpl_fields and gso_seg_opts have tail
 * padding there.  So each struct is declared on a stack that an earlier
 * call filled with 0xa5, its tail is checked byte by byte, and a real call
 * must accept it: a GSO_OPTS that leaves the padding to the compiler fails
 * here with Clang at -O0.  Both files compile the same source: no compound
 * literals, designated fields in declaration order.
 */
#include <gso/gso.h>
#include <stdio.h>

#define TAIL_FILL 0xa5
#define STACK_FILL 8192

/* Leave TAIL_FILL bytes where the next call's frame will be. */
__attribute__((noinline)) static void dirty_stack(void)
{
	volatile unsigned char junk[STACK_FILL];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = TAIL_FILL;
}

/* Bytes [from, to) of p that are not zero. */
static unsigned nonzero(const void *p, size_t from, size_t to)
{
	const unsigned char *b = (const unsigned char *)p;
	unsigned n = 0;

	for (size_t i = from; i < to; i++)
		n += b[i] != 0;
	return n;
}

static const unsigned char payload_bytes[1000] = { 0 };

#define KNOWN_END(T, last) (offsetof(struct T, last) + sizeof(((struct T *)0)->last))

/* Build a UDP template and count the segments of `payload` bytes at `mss`. */
__attribute__((noinline)) static int declare_and_count(uint16_t sport, uint32_t mss, size_t payload,
						       unsigned *dirty)
{
	GSO_OPTS(gso_tmpl_fields, f, .l3 = GSO_L3_IPV4, .l4 = GSO_L4_UDP, .sport = sport, .dport = 9);
	GSO_OPTS(gso_seg_opts, o, .mss = mss);
	struct gso_tmpl t;
	struct gso_extent ext;
	struct gso_super s;
	int err;

	*dirty = nonzero(&f, KNOWN_END(gso_tmpl_fields, gso_tmpl_fields__last_field), sizeof(f)) +
		 nonzero(&o, KNOWN_END(gso_seg_opts, gso_seg_opts__last_field), sizeof(o));
	f.saddr[0] = 10, f.saddr[3] = 1;
	f.daddr[0] = 10, f.daddr[3] = 2;
	err = gso_tmpl__build(&t, &f);
	if (err)
		return err;
	ext.base = payload_bytes;
	ext.len = payload;
	s.tmpl = &t;
	s.ext = &ext;
	s.n_ext = 1;
	return gso_seg_count(&s, &o);
}

/* A struct named without fields: every byte past sz is zero. */
__attribute__((noinline)) static unsigned declare_empty(void)
{
	GSO_OPTS(gso_pacer_opts, p);

	return p.sz == sizeof(p) ? nonzero(&p, sizeof(p.sz), sizeof(p)) : 1u;
}

int main(int argc, char **argv)
{
	unsigned dirty = 0;
	int n;

	(void)argv;
	dirty_stack();
	/* argc keeps the values out of the compiler's constant folding. */
	n = declare_and_count((uint16_t)(40000 + argc), 99u + (uint32_t)argc, 250, &dirty);
	if (dirty || n != 3) {
		fprintf(stderr, "opts_decl: %u non-zero tail bytes, gso_seg_count %d (want 0, 3)\n", dirty, n);
		return 1;
	}
	dirty_stack();
	if (declare_empty()) {
		fprintf(stderr, "opts_decl: GSO_OPTS with no field left non-zero bytes\n");
		return 1;
	}
	return 0;
}
