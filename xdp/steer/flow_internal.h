/*
 * Reading a caller's struct gso_flow (not installed): steer.c and
 * port_rss.c (port/, which may include it) take one by pointer.  Its sz is checked as options are
 * (opts_internal.h): at least the sz field, unknown tail bytes zero;
 * fields past the caller's sz read as 0.
 */
#ifndef GSO_XDP_FLOW_INTERNAL_H
#define GSO_XDP_FLOW_INTERNAL_H

#include <stdbool.h>
#include <string.h>

#include <gso/steer.h>
#include "opts_internal.h"

/* Copy `f` into the full-size `out`; false for NULL or a bad sz. */
static inline bool gsoi_flow_read(const struct gso_flow *f, struct gso_flow *out)
{
	if (!f || !GSO_OPTS_VALID(gso_flow, f))
		return false;
	memset(out, 0, sizeof(*out));
	memcpy(out, f, f->sz < sizeof(*out) ? f->sz : sizeof(*out));
	out->sz = sizeof(*out);
	return true;
}

#endif
