/* UMEM chunk accounting: each chunk free, queued, in flight or held (umem_alloc_internal.h). */
#include "umem_alloc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define UA_F_HELD 0x01 /* owner still holds it */
#define UA_F_SENT 0x02 /* referenced by a descriptor at least once since allocation
			* (so set on every chunk with references) */
#define UA_F_BUSY 0x04 /* allocated (not on a free list) */

static enum ua_state classify(const struct umem_alloc *a, uint32_t i)
{
	if (a->c[i].ref)
		return UA_INFLIGHT;
	if (a->c[i].flags & UA_F_HELD)
		return (a->c[i].flags & UA_F_SENT) ? UA_HELD : UA_QUEUED;
	return UA_FREE;
}

static void move(struct umem_alloc *a, enum ua_state from, enum ua_state to)
{
	a->count[from]--;
	a->count[to]++;
}

static void release(struct umem_alloc *a, uint32_t i)
{
	a->c[i].flags = 0;
	if (i < a->nbuf)
		a->busy[i / 64] &= ~(1ull << (i % 64));
	else
		a->stack[a->nstack++] = i;
}

int gsoi_ua_init(struct umem_alloc *a, uint32_t nchunks, uint32_t nbuf)
{
	struct umem_alloc n = { .nchunks = nchunks, .nbuf = nbuf };
	uint32_t nback;

	if (!a || !nchunks || nchunks > (1u << 31) || nbuf > nchunks)
		return -EINVAL;
	nback = nchunks - nbuf;
	n.busy = calloc(nbuf / 64 + 1, sizeof(*n.busy));
	n.stack = malloc((size_t)(nback ? nback : 1) * sizeof(*n.stack));
	n.c = calloc(nchunks, sizeof(*n.c));
	if (!n.busy || !n.stack || !n.c) {
		gsoi_ua_fini(&n);
		return -ENOMEM;
	}
	/* Pop order low to high keeps the backend's working set compact. */
	for (uint32_t k = 0; k < nback; k++)
		n.stack[k] = nchunks - 1 - k;
	n.nstack = nback;
	n.count[UA_FREE] = nchunks;
	*a = n;
	return 0;
}

void gsoi_ua_fini(struct umem_alloc *a)
{
	if (!a)
		return;
	free(a->busy);
	free(a->stack);
	free(a->c);
	memset(a, 0, sizeof(*a));
}

/* Set (or clear) the busy bits of chunks [s, e), a word at a time. */
static inline void busy_set(uint64_t *busy, uint32_t s, uint32_t e, bool set)
{
	uint32_t w, last;
	uint64_t m;

	if (s >= e)
		return;
	w = s / 64;
	last = (e - 1) / 64;
	m = ~0ull << (s % 64);
	for (; w <= last; w++, m = ~0ull) {
		if (w == last)
			m &= ~0ull >> (63 - (e - 1) % 64);
		if (set)
			busy[w] |= m;
		else
			busy[w] &= ~m;
	}
}

/*
 * Lowest chunk in [i, to) whose busy bit is `busy`, or `to`.  Words are
 * read only while they hold chunks below `to` (i < to <= nbuf, and the
 * bitmap has nbuf / 64 + 1 words); bits past `to` in the last word -- the
 * calloc'd zeros past nbuf look free -- are cut off by the clamp.
 */
static uint32_t next_bit(const uint64_t *bits, uint32_t i, uint32_t to, bool busy)
{
	uint32_t w = i / 64;
	uint64_t x = (busy ? bits[w] : ~bits[w]) & (~0ull << (i % 64));

	while (!x) {
		if (++w >= (to + 63) / 64)
			return to;
		x = busy ? bits[w] : ~bits[w];
	}
	i = w * 64 + (uint32_t)__builtin_ctzll(x);
	return i < to ? i : to;
}

/*
 * First free run of n (>= 1) chunks in [from, to), or UINT32_MAX: the
 * lowest start s with chunks [s, s + n) all free.  Word-wise: find the
 * next free chunk s (counting trailing ones skips a busy stretch, whole
 * busy words at a time), then the first busy chunk in [s, s + n); none
 * there is a fit, else the search goes on from that busy chunk -- no start
 * in between can fit, since each run from there would contain it.
 */
static uint32_t find_run(const struct umem_alloc *a, uint32_t from, uint32_t to, uint32_t n)
{
	uint32_t i = from;

	while (i < to) {
		uint32_t s = next_bit(a->busy, i, to, false), e;

		if (to - s < n)
			break;
		e = next_bit(a->busy, s, s + n, true);
		if (e == s + n)
			return s;
		i = e;
	}
	return UINT32_MAX;
}

int gsoi_ua_alloc_run(struct umem_alloc *a, uint32_t n, uint32_t *first)
{
	uint32_t s;

	if (!a || !first || !n)
		return -EINVAL;
	if (n > a->nbuf)
		return -EMSGSIZE;
	if (n > a->count[UA_FREE])
		return -ENOBUFS;
	/*
	 * First fit: the lowest free run, most often the one the ACKs just
	 * freed, so that what the application writes next goes to lines still
	 * in the cache.  Next fit cycled through the whole region (16 MiB by
	 * default) and every write missed: offload-vnet's stream generator
	 * cost 0.085 s/GB against 0.036 into a reused buffer.  The bitmap is
	 * scanned a word at a time (find_run), so busy stretches such as a
	 * run held for retransmission cost little to skip.
	 */
	s = find_run(a, 0, a->nbuf, n);
	if (s == UINT32_MAX)
		return -ENOBUFS;
	/* 0 stays "no run": a zeroed handle never matches. */
	if (!++a->gen)
		a->gen = 1;
	busy_set(a->busy, s, s + n, true);
	/* Free chunks have no references: each entry is written whole. */
	{
		const struct ua_chunk e = { .gen = a->gen, .flags = UA_F_HELD | UA_F_BUSY };
		struct ua_chunk *c = a->c;

		for (uint32_t i = s; i < s + n; i++)
			c[i] = e;
	}
	a->count[UA_FREE] -= n;
	a->count[UA_QUEUED] += n;
	*first = s;
	return 0;
}

int gsoi_ua_alloc_one(struct umem_alloc *a, uint32_t *idx)
{
	uint32_t i;

	if (!a || !idx)
		return -EINVAL;
	if (!a->nstack)
		return -ENOBUFS;
	i = a->stack[--a->nstack];
	a->c[i].flags = UA_F_HELD | UA_F_BUSY;
	a->c[i].gen = 0;
	move(a, UA_FREE, UA_QUEUED);
	*idx = i;
	return 0;
}

int gsoi_ua_unhold(struct umem_alloc *a, uint32_t idx)
{
	enum ua_state was;

	if (idx >= a->nchunks || !(a->c[idx].flags & UA_F_HELD)) {
		a->bad_ops++;
		return -EINVAL;
	}
	was = classify(a, idx);
	a->c[idx].flags &= (uint8_t)~UA_F_HELD;
	if (!a->c[idx].ref)
		release(a, idx);
	move(a, was, classify(a, idx));
	return 0;
}

bool gsoi_ua_run_held(const struct umem_alloc *a, uint32_t first, uint32_t n, uint32_t gen)
{
	if (first > a->nbuf || n > a->nbuf - first)
		return false;
	for (uint32_t i = first; i < first + n; i++)
		if (a->c[i].gen != gen || !(a->c[i].flags & UA_F_HELD))
			return false;
	return true;
}

/*
 * gsoi_ua_unhold_run() once its range is known held: a chunk with
 * references stays INFLIGHT, only losing its hold (and busy); one without
 * is released, from QUEUED (never sent) or HELD (sent).
 */
static void unhold_held_run(struct umem_alloc *a, uint32_t first, uint32_t n)
{
	struct ua_chunk *c = a->c + first;
	uint32_t nfree = 0, nsent = 0;

	busy_set(a->busy, first, first + n, false);
	for (uint32_t i = 0; i < n; i++) {
		if (c[i].ref) {
			c[i].flags &= (uint8_t)~UA_F_HELD;
			a->busy[(first + i) / 64] |= 1ull << ((first + i) % 64);
			continue;
		}
		nsent += (c[i].flags & UA_F_SENT) != 0;
		nfree++;
		c[i].flags = 0;
	}
	a->count[UA_QUEUED] -= nfree - nsent;
	a->count[UA_HELD] -= nsent;
	a->count[UA_FREE] += nfree;
}

int gsoi_ua_unhold_run(struct umem_alloc *a, uint32_t first, uint32_t n, uint32_t gen)
{
	/* Check every chunk before changing any: a stale handle frees nothing. */
	if (!gsoi_ua_run_held(a, first, n, gen)) {
		a->bad_ops++;
		return -EINVAL;
	}
	unhold_held_run(a, first, n);
	return 0;
}

int gsoi_ua_mark_sent_run(struct umem_alloc *a, uint32_t first, uint32_t n)
{
	uint64_t end = (uint64_t)first + n;
	uint32_t stop = end < a->nchunks ? (uint32_t)end : a->nchunks;
	uint32_t nqueued = 0, nbad;

	/* Past the table: each chunk a refused reference, as gsoi_ua_get() counts it. */
	nbad = (uint32_t)(end - (first < stop ? stop : first));
	/*
	 * Allocated and never sent is QUEUED: a chunk with references was
	 * sent, and one without is released once its hold is gone.
	 */
	for (struct ua_chunk *c = a->c + first, *e = a->c + stop; c < e; c++) {
		if (!(c->flags & UA_F_BUSY)) {
			nbad++;
			continue;
		}
		nqueued += !(c->flags & UA_F_SENT);
		c->flags |= UA_F_SENT;
	}
	a->count[UA_QUEUED] -= nqueued;
	a->count[UA_HELD] += nqueued;
	if (!nbad)
		return 0;
	a->bad_ops += nbad;
	return -EINVAL;
}

int gsoi_ua_get(struct umem_alloc *a, uint32_t idx)
{
	enum ua_state was;

	if (idx >= a->nchunks || !(a->c[idx].flags & UA_F_BUSY)) {
		a->bad_ops++;
		return -EINVAL;
	}
	if (a->c[idx].ref == UA_MAX_REFS)
		return -EOVERFLOW;
	was = classify(a, idx);
	a->c[idx].ref++;
	a->c[idx].flags |= UA_F_SENT;
	move(a, was, UA_INFLIGHT);
	return 0;
}

int gsoi_ua_put(struct umem_alloc *a, uint32_t idx)
{
	if (idx >= a->nchunks || !a->c[idx].ref) {
		a->bad_ops++;
		return -EINVAL;
	}
	if (--a->c[idx].ref)
		return 0;
	if (!(a->c[idx].flags & UA_F_HELD))
		release(a, idx);
	move(a, UA_INFLIGHT, classify(a, idx));
	return 0;
}

uint64_t gsoi_ua_reclaim(struct umem_alloc *a)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < a->nchunks; i++) {
		if (!a->c[i].ref)
			continue;
		n += a->c[i].ref;
		a->c[i].ref = 1;
		gsoi_ua_put(a, i);
	}
	return n;
}

enum ua_state gsoi_ua_state_of(const struct umem_alloc *a, uint32_t idx)
{
	return idx < a->nchunks ? classify(a, idx) : UA_FREE;
}
