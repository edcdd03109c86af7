/*
 * libgso offload descriptors (being written; see the tmpl engineer's
 * commits).  This placeholder keeps <gso/gso.h> compiling.
 */
#ifndef GSO_OFFLOAD_H
#define GSO_OFFLOAD_H

#include <gso/common.h>
#include <gso/tmpl.h>

#endif
