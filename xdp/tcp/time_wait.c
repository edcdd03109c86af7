/*
 * TIME_WAIT: the 4-tuples of connections this engine closed first,
 * kept GSO_STREAM_TIME_WAIT_NS after they ended (engine.h, "Receiving").
 *
 * Every entry lives the same time, so they expire in the order they came:
 * a ring in arrival order, with a hash over it for lookups.  Nothing
 * needs a timer: an entry past its time is forgotten when a lookup or
 * an add reaches it, and when the ring is full the oldest goes first
 * (Linux drops new ones past tcp_max_tw_buckets instead; keeping the
 * newest protects the connections most likely to see a stray segment).
 */
#include "tcp_conn_internal.h"

#include <stdlib.h>
#include <string.h>

struct tw_state {
	struct tw_entry *ring;
	uint32_t cap, head, n;   /* oldest at head */
	uint32_t *bucket;        /* cap buckets (cap a power of 2) */
	uint32_t live;
};

static uint32_t bucket_of(const struct tw_state *tw, const struct tcp_key *k)
{
	return gsoi_tcp_key_hash(k) & (tw->cap - 1);
}

static void unlink_entry(struct tw_state *tw, uint32_t idx)
{
	struct tw_entry *t = &tw->ring[idx];
	uint32_t *p = &tw->bucket[bucket_of(tw, &t->peer.key)];

	for (; *p != NIL32; p = &tw->ring[*p].hnext)
		if (*p == idx) {
			*p = t->hnext;
			break;
		}
	if (t->live)
		tw->live--;
	t->live = false;
}

/* Forget expired entries at the old end (and the oldest if `room` is needed). */
static void trim(struct tw_state *tw, uint64_t now, bool room)
{
	while (tw->n) {
		struct tw_entry *t = &tw->ring[tw->head];

		if (t->live && t->expires > now && !(room && tw->n == tw->cap))
			break;
		unlink_entry(tw, tw->head);
		tw->head = (tw->head + 1) & (tw->cap - 1);
		tw->n--;
	}
}

static struct tw_state *tw_get(struct engine *e, bool create)
{
	struct tcp_state *ts = gsoi_tcp_state(e);
	struct tw_state *tw;

	if (!ts)
		return NULL;
	if (ts->tw || !create)
		return ts->tw;
	tw = calloc(1, sizeof(*tw));
	if (!tw)
		return NULL;
	tw->cap = GSO_STREAM_MAX_TIME_WAIT;
	tw->ring = calloc(tw->cap, sizeof(*tw->ring));
	tw->bucket = malloc(tw->cap * sizeof(*tw->bucket));
	if (!tw->ring || !tw->bucket) {
		gsoi_tw_free(tw);
		return NULL;
	}
	memset(tw->bucket, 0xff, tw->cap * sizeof(*tw->bucket));
	ts->tw = tw;
	return tw;
}

int gsoi_tw_add(struct engine *e, const struct tw_entry *t, uint64_t now)
{
	struct tw_state *tw = tw_get(e, true);
	struct tw_entry *old;
	uint32_t idx, b;

	if (!tw)
		return -ENOMEM;
	old = gsoi_tw_find(e, &t->peer.key, now);
	if (old)
		gsoi_tw_del(e, old);
	trim(tw, now, true);
	idx = (tw->head + tw->n) & (tw->cap - 1);
	tw->ring[idx] = *t;
	tw->ring[idx].expires = now + GSO_STREAM_TIME_WAIT_NS;
	tw->ring[idx].live = true;
	b = bucket_of(tw, &t->peer.key);
	tw->ring[idx].hnext = tw->bucket[b];
	tw->bucket[b] = idx;
	tw->n++;
	tw->live++;
	return 0;
}

struct tw_entry *gsoi_tw_find(struct engine *e, const struct tcp_key *k, uint64_t now)
{
	struct tw_state *tw = tw_get(e, false);

	if (!tw || !tw->live)
		return NULL;
	trim(tw, now, false);
	for (uint32_t i = tw->bucket[bucket_of(tw, k)]; i != NIL32; i = tw->ring[i].hnext) {
		struct tw_entry *t = &tw->ring[i];

		if (t->live && !memcmp(&t->peer.key, k, sizeof(*k)))
			return t->expires > now ? t : NULL;
	}
	return NULL;
}

void gsoi_tw_del(struct engine *e, struct tw_entry *t)
{
	struct tw_state *tw = tw_get(e, false);

	/* Unlinked now; its ring slot is reclaimed when the head gets there. */
	if (tw && t->live)
		unlink_entry(tw, (uint32_t)(t - tw->ring));
}

uint32_t gsoi_tw_count(struct engine *e, uint64_t now)
{
	struct tw_state *tw = tw_get(e, false);

	if (!tw)
		return 0;
	trim(tw, now, false);
	return tw->live;
}

void gsoi_tw_free(struct tw_state *tw)
{
	if (!tw)
		return;
	free(tw->ring);
	free(tw->bucket);
	free(tw);
}
