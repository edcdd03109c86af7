/*
 * Options- and result-struct handling shared by the sources of libgso and
 * libgso-xdp (not installed).
 *
 * A caller built against an older header passes a smaller struct (sz), one
 * built against a newer header a larger one.  Fields past the caller's sz
 * read as 0 ("default"); bytes past the last field we know must be zero,
 * otherwise the caller asked for something this library cannot do.
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

/* NULL is valid (all defaults); sz must at least cover the sz field itself. */
#define GSO_OPTS_VALID(TYPE, opts)                                        \
	(!(opts) || ((opts)->sz >= sizeof(size_t) &&                      \
		     gso_opts_tail_zero((opts), GSO_OPTS_KNOWN(TYPE), (opts)->sz)))

/* Field value if the caller's struct reaches it, else the default. */
#define GSO_OPTS_GET(opts, field, dflt)                                       \
	((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field) \
		 ? (opts)->field : (dflt))

/*
 * Results and per-call descriptors (caller-allocated, filled by the
 * library): the caller's sz must reach past the sz field itself.
 */
#define GSO_OUT_VALID(p) ((p) && (p)->sz > sizeof(size_t))

/*
 * Write the result `full` (a local of the struct type, sz not yet set) to
 * the caller's `dst`: sizeof(full) bytes, or dst->sz if that is smaller,
 * and dst->sz becomes the bytes written.  The whole-struct case, the only
 * one for a caller built against this header, is one struct copy.
 */
#define GSO_OUT_PUT(dst, full)                                               \
	do {                                                                 \
		if ((dst)->sz >= sizeof(full)) {                             \
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
 */
#define GSO_IN_GET(src, tmp) \
	((src)->sz >= sizeof(tmp) ? (src) : (__typeof__(src))opts_in_copy(&(tmp), sizeof(tmp), (src), (src)->sz))

static inline const void *opts_in_copy(void *tmp, size_t n, const void *src, size_t sz)
{
	memset(tmp, 0, n);
	memcpy(tmp, src, sz);
	return tmp;
}

#endif
