/*
 * UMEM chunk accounting: which chunk is free, queued, in flight or held.
 * Pure bookkeeping over chunk indices (no syscalls, no memory of its own
 * beyond the tables), so every backend can use it over any memory area and
 * the unit tests can drive it directly.  Not installed.
 *
 * Two regions, so that callers' super-segment buffers can never starve the
 * backend of the chunks it needs for headers and frames (that would
 * deadlock: the buffers are released only after what they hold is sent):
 *   [0, nbuf)        runs of consecutive chunks for callers' buffers;
 *   [nbuf, nchunks)  single chunks for the backend.
 *
 * A chunk has at most one *hold* (its owner: the flow until ACK, or the
 * backend while it fills it) and any number of *in-flight references* (one
 * per descriptor posted to the device that points into it).  It returns to
 * the free pool when both are gone.  Its state, derived from those, is
 *   FREE      neither;
 *   QUEUED    held, never referenced by a descriptor (waiting to be sent);
 *   INFLIGHT  at least one descriptor not yet completed;
 *   HELD      held, sent at least once, nothing in flight (kept for retransmit).
 * The four counters always add up to nchunks (tests/unit/test_umem_alloc.c
 * checks it after its operations).
 *
 * Every run allocation stamps its chunks with a fresh *generation*, so that
 * a caller's handle to a run (struct gso_buf) can be told from a stale copy
 * of it once the chunks were freed and handed out again: gsoi_ua_unhold_run()
 * and gsoi_ua_run_held() act only on chunks that still carry the handle's
 * generation and hold.
 */
#ifndef GSO_XDP_UMEM_ALLOC_INTERNAL_H
#define GSO_XDP_UMEM_ALLOC_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

enum ua_state { UA_FREE = 0, UA_QUEUED, UA_INFLIGHT, UA_HELD, UA_NSTATES };

/* Largest number of in-flight references one chunk may carry. */
#define UA_MAX_REFS 0xffffu

/*
 * Per-chunk state, together in one 8-byte entry: every operation on a
 * chunk reads and writes its references and flags, and the checks of a
 * run its generation as well, so one cache line serves all three.
 */
struct ua_chunk {
	uint32_t gen;   /* generation of the run allocation it belongs to; 0: none */
	uint16_t ref;   /* in-flight references */
	uint8_t flags;  /* UA_F_* (umem_alloc.c) */
	uint8_t pad_;
};

struct umem_alloc {
	uint32_t nchunks;
	uint32_t nbuf;       /* chunks [0, nbuf) are the buffer region */
	uint32_t nstack;     /* free chunks on `stack` */
	uint64_t *busy;      /* buffer region: bit set = not free */
	uint32_t *stack;     /* backend region: free chunk indices */
	struct ua_chunk *c;  /* per chunk */
	uint32_t gen;        /* generation of the last run allocated */
	uint32_t count[UA_NSTATES];
	uint64_t bad_ops;    /* refused operations (bogus completion, double release) */
};

/*
 * Set up accounting for `nchunks` chunks (1 .. 2^31), the first `nbuf` of
 * them (0 .. nchunks) for callers' buffers.  All start free.  Returns 0,
 * -EINVAL or -ENOMEM (nothing allocated on error).
 */
int gsoi_ua_init(struct umem_alloc *a, uint32_t nchunks, uint32_t nbuf);
/* Free the tables.  Idempotent; `a` is zeroed. */
void gsoi_ua_fini(struct umem_alloc *a);

/*
 * Take `n` consecutive free chunks of the buffer region, held by the
 * caller (QUEUED), all stamped with a new generation (never 0; ua_gen()
 * of any of them).  Returns 0 and the first index, -EINVAL (n == 0),
 * -EMSGSIZE (n > nbuf: can never succeed) or -ENOBUFS (no free run of n
 * now: wait for completions or releases).
 */
int gsoi_ua_alloc_run(struct umem_alloc *a, uint32_t n, uint32_t *first);
/* Generation of chunk `idx` (the run it was last allocated with); 0 out of range. */
static inline uint32_t ua_gen(const struct umem_alloc *a, uint32_t idx)
{
	return idx < a->nchunks ? a->c[idx].gen : 0;
}
/*
 * Whether chunks [first, first + n) all lie in the buffer region, carry
 * generation `gen` and are still held: the run of an allocation with that
 * generation whose hold on those chunks was not dropped.  n == 0 is true.
 */
bool gsoi_ua_run_held(const struct umem_alloc *a, uint32_t first, uint32_t n, uint32_t gen);
/*
 * Drop the hold on chunks [first, first + n) of the run allocated with
 * generation `gen`: all of them, or -- when gsoi_ua_run_held() is false for
 * the range -- none (-EINVAL, counted in bad_ops).  Returns 0 or -EINVAL.
 */
int gsoi_ua_unhold_run(struct umem_alloc *a, uint32_t first, uint32_t n, uint32_t gen);
/*
 * Count chunks [first, first + n) as referenced by a descriptor once, one
 * that is already done with them (a copying backend): each is marked sent,
 * so a QUEUED chunk becomes HELD and an INFLIGHT or HELD one stays as it
 * is -- the net effect of gsoi_ua_get() then gsoi_ua_put() on each, in one
 * pass.  A chunk out of range or free is counted in bad_ops and left
 * alone, the others are still marked.  Returns 0, or -EINVAL when any
 * chunk was refused.
 */
int gsoi_ua_mark_sent_run(struct umem_alloc *a, uint32_t first, uint32_t n);
/* Take one chunk of the backend region, held (QUEUED).  0 or -ENOBUFS. */
int gsoi_ua_alloc_one(struct umem_alloc *a, uint32_t *idx);
/* Free chunks in the backend region right now. */
static inline uint32_t ua_free_backend(const struct umem_alloc *a)
{
	return a->nstack;
}

/*
 * Drop the hold on chunk `idx`; it is free once nothing is in flight.
 * Returns 0, or -EINVAL (out of range or not held; counted in bad_ops).
 */
int gsoi_ua_unhold(struct umem_alloc *a, uint32_t idx);
/*
 * Add an in-flight reference to a chunk that is held or already in flight.
 * Returns 0, -EINVAL (out of range, free chunk; counted) or -EOVERFLOW
 * (UA_MAX_REFS reached).
 */
int gsoi_ua_get(struct umem_alloc *a, uint32_t idx);
/*
 * Drop an in-flight reference (a completion).  Returns 0, or -EINVAL when
 * the chunk has none (out of range, or a completion we never posted;
 * counted in bad_ops, nothing changes).
 */
int gsoi_ua_put(struct umem_alloc *a, uint32_t idx);
/*
 * Drop every in-flight reference: the device has let go of all
 * descriptors (teardown).  Returns how many references were dropped.
 */
uint64_t gsoi_ua_reclaim(struct umem_alloc *a);

enum ua_state gsoi_ua_state_of(const struct umem_alloc *a, uint32_t idx);
static inline uint32_t ua_count(const struct umem_alloc *a, enum ua_state s)
{
	return a->count[s];
}

#endif
