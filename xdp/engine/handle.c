/*
 * The process-wide table of checked handles (handle_internal.h).
 *
 * The table's layout and the lookup are in the header (the lookup is
 * inline); here are allocation and freeing, under a mutex, with a free
 * list of entries, most recently freed first.
 */
#include "handle_internal.h"

#include <pthread.h>
#include <stdlib.h>

#define HDIR (1u << (HANDLE_IDX_BITS - HANDLE_CHUNK_BITS))
#define HGEN_MAX (UINTPTR_MAX >> HANDLE_IDX_BITS) /* generations run 1..HGEN_MAX */
#define HNIL UINT32_MAX

/* Read-only zeros: tag 0 matches no handle (generations start at 1). */
static struct handle_ent hnone[HANDLE_CHUNK];
struct handle_ent *_Atomic gsoi_handle_dir[HDIR] = { [0 ... HDIR - 1] = hnone };
static pthread_mutex_t hlock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t hfree = HNIL; /* free list, most recently freed first */
static uint32_t hused;        /* entries ever made */

/* Entry idx, NULL when its chunk was never made. */
static struct handle_ent *entry(uint32_t idx)
{
	struct handle_ent *c = atomic_load_explicit(&gsoi_handle_dir[idx >> HANDLE_CHUNK_BITS], memory_order_acquire);

	return c != hnone ? &c[idx & (HANDLE_CHUNK - 1)] : NULL;
}

uintptr_t gsoi_handle_new(void *obj, enum handle_kind kind)
{
	struct handle_ent *en;
	uint32_t idx;
	uintptr_t gen;

	pthread_mutex_lock(&hlock);
	if (hfree != HNIL) {
		idx = hfree;
		en = entry(idx);
		hfree = (uint32_t)(uintptr_t)atomic_load_explicit(&en->obj, memory_order_relaxed);
	} else {
		if (hused > HANDLE_IDX_MASK) {
			pthread_mutex_unlock(&hlock);
			return 0;
		}
		idx = hused;
		if (!(idx & (HANDLE_CHUNK - 1))) {
			struct handle_ent *c = calloc(HANDLE_CHUNK, sizeof(*c));

			if (!c) {
				pthread_mutex_unlock(&hlock);
				return 0;
			}
			for (uint32_t i = 0; i < HANDLE_CHUNK; i++)
				atomic_init(&c[i].tag, (uintptr_t)1 << HANDLE_IDX_BITS);
			atomic_store_explicit(&gsoi_handle_dir[idx >> HANDLE_CHUNK_BITS], c, memory_order_release);
		}
		hused++;
		en = entry(idx);
	}
	gen = atomic_load_explicit(&en->tag, memory_order_relaxed) & ~(uintptr_t)HANDLE_IDX_MASK;
	atomic_store_explicit(&en->obj, obj, memory_order_relaxed);
	/* Release: a thread that sees the tag sees the object pointer. */
	atomic_store_explicit(&en->tag, gen | (uintptr_t)kind, memory_order_release);
	pthread_mutex_unlock(&hlock);
	return gen | idx;
}

void gsoi_handle_free(uintptr_t h)
{
	uint32_t idx = (uint32_t)(h & HANDLE_IDX_MASK);
	uintptr_t gen = h >> HANDLE_IDX_BITS, tag;
	struct handle_ent *en;

	if (!h || !(en = entry(idx)))
		return;
	pthread_mutex_lock(&hlock);
	tag = atomic_load_explicit(&en->tag, memory_order_relaxed);
	if (tag >> HANDLE_IDX_BITS == gen && (tag & HANDLE_IDX_MASK)) {
		gen = gen == HGEN_MAX ? 1 : gen + 1;
		atomic_store_explicit(&en->tag, gen << HANDLE_IDX_BITS, memory_order_release);
		atomic_store_explicit(&en->obj, (void *)(uintptr_t)hfree, memory_order_relaxed);
		hfree = idx;
	}
	pthread_mutex_unlock(&hlock);
}
