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

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum handle_kind {
	HANDLE_ENGINE = 1,
	HANDLE_DGRAM,
	HANDLE_STREAM,
	HANDLE_PORT,
	HANDLE_LISTENER,
	HANDLE_DLISTENER,
};

/*
 * The table (handle.c): a fixed directory of chunk pointers, each chunk
 * HANDLE_CHUNK entries, never freed, so an entry never moves and a lookup
 * takes no lock.  Directory slots not yet given a chunk point at one
 * shared chunk of zeros, whose tags match no handle: a lookup tests
 * nothing but the tag.  A handle is (generation << HANDLE_IDX_BITS |
 * index); an entry's tag is (generation << HANDLE_IDX_BITS | kind) while
 * live and (generation << HANDLE_IDX_BITS) while free (kind 0).
 */
#if UINTPTR_MAX > 0xffffffffu
#define HANDLE_IDX_BITS 24 /* 16 M objects alive at once */
#else
#define HANDLE_IDX_BITS 20
#endif
#define HANDLE_CHUNK_BITS 12
#define HANDLE_CHUNK (1u << HANDLE_CHUNK_BITS)
#define HANDLE_IDX_MASK ((1u << HANDLE_IDX_BITS) - 1)

struct handle_ent {
	_Atomic uintptr_t tag;
	void *_Atomic obj;     /* the object; while free, the next free index */
};

extern struct handle_ent *_Atomic gsoi_handle_dir[1u << (HANDLE_IDX_BITS - HANDLE_CHUNK_BITS)];

/*
 * The object of a live handle of `kind`; NULL for 0, a stale handle or
 * another kind's.  Inline: it runs on every call of the API (a dozen
 * instructions).
 */
static inline void *gsoi_handle_get(uintptr_t h, enum handle_kind kind)
{
	uint32_t idx = (uint32_t)(h & HANDLE_IDX_MASK);
	struct handle_ent *en = &atomic_load_explicit(&gsoi_handle_dir[idx >> HANDLE_CHUNK_BITS],
						      memory_order_acquire)[idx & (HANDLE_CHUNK - 1)];

	/* Acquire: the object pointer read below is the one stored with this tag. */
	if (atomic_load_explicit(&en->tag, memory_order_acquire) != ((h & ~(uintptr_t)HANDLE_IDX_MASK) | kind))
		return NULL;
	return atomic_load_explicit(&en->obj, memory_order_relaxed);
}

/* A new handle for `obj` of `kind`: never 0; 0 when the table is out of memory or full. */
uintptr_t gsoi_handle_new(void *obj, enum handle_kind kind);

/* Retire a live handle (every copy of it misses from now on).  0 and stale handles: no-op. */
void gsoi_handle_free(uintptr_t h);

#endif
