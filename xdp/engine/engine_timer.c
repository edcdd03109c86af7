/*
 * The engine's timer heap: per flow slot one deadline (a stream's next
 * RTO, probe, retry or handshake timer), a binary min-heap over the slots
 * that have one, so that finding what is due costs O(1) and changing a
 * deadline O(log n) however many streams are open.
 */
#include "engine_internal.h"

#include <errno.h>
#include <stdlib.h>

int gsoi_etimers_init(struct etimers *t, uint32_t cap)
{
	t->n = 0;
	t->cap = cap;
	t->heap = calloc(cap, sizeof(*t->heap));
	t->key = calloc(cap, sizeof(*t->key));
	t->pos = calloc(cap, sizeof(*t->pos));
	if (!t->heap || !t->key || !t->pos) {
		gsoi_etimers_fini(t);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < cap; i++) {
		t->pos[i] = NIL32;
		t->key[i] = UINT64_MAX;
	}
	return 0;
}

void gsoi_etimers_fini(struct etimers *t)
{
	free(t->heap);
	free(t->key);
	free(t->pos);
	t->heap = t->pos = NULL;
	t->key = NULL;
	t->n = t->cap = 0;
}

static void place(struct etimers *t, uint32_t at, uint32_t slot)
{
	t->heap[at] = slot;
	t->pos[slot] = at;
}

static void up(struct etimers *t, uint32_t at)
{
	uint32_t slot = t->heap[at];

	while (at) {
		uint32_t parent = (at - 1) / 2;

		if (t->key[t->heap[parent]] <= t->key[slot])
			break;
		place(t, at, t->heap[parent]);
		at = parent;
	}
	place(t, at, slot);
}

static void down(struct etimers *t, uint32_t at)
{
	uint32_t slot = t->heap[at];

	for (;;) {
		uint32_t c = 2 * at + 1;

		if (c >= t->n)
			break;
		if (c + 1 < t->n && t->key[t->heap[c + 1]] < t->key[t->heap[c]])
			c++;
		if (t->key[t->heap[c]] >= t->key[slot])
			break;
		place(t, at, t->heap[c]);
		at = c;
	}
	place(t, at, slot);
}

void gsoi_etimers_set(struct etimers *t, uint32_t slot, uint64_t key)
{
	uint32_t at;

	if (slot >= t->cap)
		return;
	at = t->pos[slot];
	t->key[slot] = key;
	if (key == UINT64_MAX) {
		uint32_t last;

		if (at == NIL32)
			return;
		t->pos[slot] = NIL32;
		last = t->heap[--t->n];
		if (last == slot)
			return;
		place(t, at, last);
		up(t, at);
		down(t, t->pos[last]);
		return;
	}
	if (at == NIL32) {
		place(t, t->n++, slot);
		up(t, t->n - 1);
		return;
	}
	up(t, at);
	down(t, t->pos[slot]);
}

uint32_t gsoi_etimers_top(const struct etimers *t, uint64_t *key)
{
	if (!t->n) {
		*key = UINT64_MAX;
		return NIL32;
	}
	*key = t->key[t->heap[0]];
	return t->heap[0];
}
