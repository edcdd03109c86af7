/*
 * The process-wide table of checked handles (handle_internal.h).
 *
 * Two levels, so that entries never move once made and a lookup needs no
 * lock: a fixed directory of HDIR chunk pointers, each chunk HCHUNK
 * entries, made when first needed and kept for the life of the process.
 * An entry's `tag` is (generation << 8 | kind) while live and
 * (generation << 8) while free; a lookup compares the whole tag with the
 * handle's, so a stale handle, a handle of another kind and a free entry
 * all miss.
 */
#include "handle_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#if UINTPTR_MAX > 0xffffffffu
#define HIDX_BITS 24 /* 16 M objects alive at once */
#else
#define HIDX_BITS 20
#endif
#define HCHUNK_BITS 12
#define HCHUNK (1u << HCHUNK_BITS)
#define HDIR (1u << (HIDX_BITS - HCHUNK_BITS))
#define HIDX_MASK ((1u << HIDX_BITS) - 1)
#define HGEN_MAX (UINTPTR_MAX >> HIDX_BITS) /* generations run 1..HGEN_MAX */
#define HNIL UINT32_MAX

struct hent {
	_Atomic uint64_t tag; /* generation << 8 | kind (kind 0: free) */
	void *_Atomic obj;
	uint32_t next_free;
};

static struct hent *_Atomic hdir[HDIR];
static pthread_mutex_t hlock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t hfree = HNIL; /* free list, most recently freed first */
static uint32_t hused;        /* entries ever made */

static struct hent *entry(uint32_t idx)
{
	struct hent *c = atomic_load_explicit(&hdir[idx >> HCHUNK_BITS], memory_order_acquire);

	return c ? &c[idx & (HCHUNK - 1)] : NULL;
}

uintptr_t gsoi_handle_new(void *obj, enum handle_kind kind)
{
	struct hent *en;
	uint32_t idx;
	uint64_t gen;

	pthread_mutex_lock(&hlock);
	if (hfree != HNIL) {
		idx = hfree;
		en = entry(idx);
		hfree = en->next_free;
	} else {
		if (hused > HIDX_MASK) {
			pthread_mutex_unlock(&hlock);
			return 0;
		}
		idx = hused;
		if (!(idx & (HCHUNK - 1))) {
			struct hent *c = calloc(HCHUNK, sizeof(*c));

			if (!c) {
				pthread_mutex_unlock(&hlock);
				return 0;
			}
			for (uint32_t i = 0; i < HCHUNK; i++)
				atomic_init(&c[i].tag, (uint64_t)1 << 8);
			atomic_store_explicit(&hdir[idx >> HCHUNK_BITS], c, memory_order_release);
		}
		hused++;
		en = entry(idx);
	}
	gen = atomic_load_explicit(&en->tag, memory_order_relaxed) >> 8;
	atomic_store_explicit(&en->obj, obj, memory_order_relaxed);
	/* Release: a thread that sees the tag sees the object pointer. */
	atomic_store_explicit(&en->tag, gen << 8 | (uint64_t)kind, memory_order_release);
	pthread_mutex_unlock(&hlock);
	return (uintptr_t)gen << HIDX_BITS | idx;
}

void *gsoi_handle_get(uintptr_t h, enum handle_kind kind)
{
	uint32_t idx = (uint32_t)(h & HIDX_MASK);
	struct hent *en;

	if (!h || idx >= HDIR * HCHUNK || !(en = entry(idx)))
		return NULL;
	if (atomic_load_explicit(&en->tag, memory_order_acquire) != ((uint64_t)(h >> HIDX_BITS) << 8 | kind))
		return NULL;
	return atomic_load_explicit(&en->obj, memory_order_relaxed);
}

void gsoi_handle_free(uintptr_t h)
{
	uint32_t idx = (uint32_t)(h & HIDX_MASK);
	uint64_t gen = h >> HIDX_BITS, tag;
	struct hent *en;

	if (!h || !(en = entry(idx)))
		return;
	pthread_mutex_lock(&hlock);
	tag = atomic_load_explicit(&en->tag, memory_order_relaxed);
	if (tag >> 8 == gen && (tag & 0xff)) {
		gen = gen == HGEN_MAX ? 1 : gen + 1;
		atomic_store_explicit(&en->tag, gen << 8, memory_order_release);
		atomic_store_explicit(&en->obj, NULL, memory_order_relaxed);
		en->next_free = hfree;
		hfree = idx;
	}
	pthread_mutex_unlock(&hlock);
}
