/*
 * Options- and result-struct handling shared by the sources of libgso and
 * libgso-xdp (not installed).
 *
 * A caller built against an older header passes a smaller struct (sz), one
 * built against a newer header a larger one.  Fields past the caller's sz
 * read as 0 ("default"); bytes past the last field we know must be zero,
 * otherwise the caller asked for something this library cannot do.
 *
 * sz 0 (a struct written `= {0}`, or left without sz): CONTRIBUTING.md C7.
 * The rule lives here and nowhere else:
 *  - options and inputs: all of it zero is "all defaults" (as NULL); a
 *    non-zero field with sz 0 is -EINVAL, since it would be ignored;
 *  - results and per-call descriptors: filled whole, sz set to the bytes
 *    written;
 *  - state initialised in caller memory (gso_pacer, gso_rtt): __init takes
 *    it as the whole struct.
 * "Whole" is GSO_SZ0: the struct as it was in the first release that had
 * it (LIBGSO_0.1 / LIBGSO_XDP_0.1; today, all of it), so that a caller
 * built against an older header who writes `= {0}` never gets more bytes
 * than its struct has.  A release that grows a struct keeps GSO_SZ0 at
 * the old size (tests/unit/test_struct_sz.c pins the sizes).
 */
#ifndef GSO_OPTS_INTERNAL_H
#define GSO_OPTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline bool gso_opts_tail_zero(const void *opts, size_t known, size_t sz)
{
	const uint8_t *p = opts;

	for (size_t i = known; i < sz; i++)
		if (p[i])
			return false;
	return true;
}

/* End offset of the last field this build knows of TYPE. */
#define GSO_OPTS_KNOWN(TYPE) \
	(offsetof(struct TYPE, TYPE##__last_field) + sizeof(((struct TYPE *)0)->TYPE##__last_field))

/* The size sz 0 stands for (see the top): every struct's own size, as no release has grown one yet. */
#define GSO_SZ0(x) sizeof(x)

/*
 * NULL is valid (all defaults); so is sz 0 with every field zero (`= {0}`:
 * all defaults too; fields past sz read as their default, GSO_OPTS_GET).
 * sz 0 with a field set, or an sz that does not cover the sz field, is
 * invalid.  The per-call cost of a caller with sz set is unchanged: one
 * compare.
 */
#define GSO_OPTS_VALID(TYPE, opts)                                                        \
	(!(opts) || ((opts)->sz >= sizeof(size_t)                                          \
			     ? gso_opts_tail_zero((opts), GSO_OPTS_KNOWN(TYPE), (opts)->sz)    \
			     : (opts)->sz == 0 &&                                              \
				       gso_opts_tail_zero((opts), sizeof(size_t), GSO_OPTS_KNOWN(TYPE))))

/* Field value if the caller's struct reaches it, else the default. */
#define GSO_OPTS_GET(opts, field, dflt)                                       \
	((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field) \
		 ? (opts)->field : (dflt))

/*
 * Results and per-call descriptors (caller-allocated, filled by the
 * library): the caller's sz is 0 (the whole struct, GSO_SZ0) or reaches
 * past the sz field itself.
 */
#define GSO_OUT_VALID(p) ((p) && (size_t)((p)->sz - 1) >= sizeof(size_t)) /* sz 0 wraps: one compare */

/*
 * Write the result `full` (a local of the struct type, sz not yet set) to
 * the caller's `dst`: sizeof(full) bytes, or dst->sz if that is smaller
 * (sz 0: GSO_SZ0), and dst->sz becomes the bytes written.  The whole-struct
 * case, the only one for a caller built against this header, is one
 * struct copy.
 */
#define GSO_OUT_PUT(dst, full)                                               \
	do {                                                                 \
		if ((dst)->sz == 0 && GSO_SZ0(full) < sizeof(full))          \
			(dst)->sz = GSO_SZ0(full);                           \
		if ((size_t)((dst)->sz - 1) >= sizeof(full) - 1) {           \
			(full).sz = sizeof(full);                            \
			*(dst) = (full);                                     \
		} else {                                                     \
			(full).sz = (dst)->sz;                               \
			memcpy((dst), &(full), (dst)->sz);                   \
		}                                                            \
	} while (0)

/*
 * A descriptor the library filled (GSO_OUT_PUT) and the caller hands back:
 * the caller's struct itself when it is whole, else `tmp` holding the
 * caller's bytes and zeros past them (fields past sz read as 0).  Check
 * GSO_OUT_VALID(src) first.  No tail check: the library wrote those bytes.
 * sz 0 (never filled by the library, which sets sz) reads as the whole
 * struct, as GSO_OUT_PUT writes it.
 */
#define GSO_IN_GET(src, tmp)                                                  \
	((src)->sz >= sizeof(tmp) || (src)->sz == 0                           \
		 ? (src)                                                      \
		 : (__typeof__(src))opts_in_copy(&(tmp), sizeof(tmp), (src), (src)->sz))

/*
 * sz of state the library initialises in caller memory (gso_pacer,
 * gso_rtt): 0 stands for the whole struct; anything else must cover it.
 * Returns the sz to keep, or 0 for a struct too small.
 */
#define GSO_STATE_SZ(p) ((p)->sz == 0 ? GSO_SZ0(*(p)) : (p)->sz >= sizeof(*(p)) ? (p)->sz : 0)

static inline const void *opts_in_copy(void *tmp, size_t n, const void *src, size_t sz)
{
	memset(tmp, 0, n);
	memcpy(tmp, src, sz);
	return tmp;
}

#endif
