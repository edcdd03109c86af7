/*
 * Checked handles (not installed): the values the API hands out for
 * engines, datagram flows, stream flows and ports.  A handle is not a
 * pointer but an index into one process-wide table of live objects plus
 * the generation of that table entry: freeing an object bumps its
 * entry's generation, so every copy of the old handle misses from then on
 * (the caller gets -EBADF), also after the entry was reused by a new
 * object, whose handle carries the new generation.  The table's memory is
 * never freed and its entries are reused, so it stays as large as the
 * most objects that were alive at once (memory is flat over open/close
 * cycles); a lookup is lock-free (a few loads), allocation and freeing
 * take a mutex (they run at open and close only).
 *
 * Generations: 40 bits on 64-bit targets (an entry must be reused 2^40
 * times before an old handle could match again), 12 on 32-bit ones.
 *
 * Included by engine/'s files and by the layers above it (tcp/, port/).
 */
#ifndef GSO_XDP_HANDLE_INTERNAL_H
#define GSO_XDP_HANDLE_INTERNAL_H

#include <stdint.h>

enum handle_kind {
	HANDLE_ENGINE = 1,
	HANDLE_DGRAM,
	HANDLE_STREAM,
	HANDLE_PORT,
};

/* A new handle for `obj` of `kind`: never 0; 0 when the table is out of memory or full. */
uintptr_t gsoi_handle_new(void *obj, enum handle_kind kind);

/* The object of a live handle of `kind`; NULL for 0, a stale handle or another kind's. */
void *gsoi_handle_get(uintptr_t h, enum handle_kind kind);

/* Retire a live handle (every copy of it misses from now on).  0 and stale handles: no-op. */
void gsoi_handle_free(uintptr_t h);

#endif
