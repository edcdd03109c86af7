/*
 * Options-struct handling shared by libgso's sources (not installed).
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

#endif
