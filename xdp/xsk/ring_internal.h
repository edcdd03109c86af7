/*
 * AF_XDP rings shared with the kernel: user space produces into the TX
 * and fill rings and consumes the completion and RX rings (not
 * installed).
 *
 * Cached copies of the other side's index are refreshed only when they run
 * dry, so a batch costs one shared-memory load and one store.  Indices are
 * free-running u32s; slots are index & mask.
 *
 * Barriers pair with the kernel's, labelled as in net/xdp/xsk_queue.h:
 *   kernel consumer (TX, fill):  LOAD producer; smp_rmb (C); LOAD descs; smp_mb (D); STORE consumer
 *   kernel producer (CQ, RX):    LOAD consumer (A, control dep.); STORE entries; smp_wmb (B); STORE producer
 */
#ifndef GSO_XDP_RING_INTERNAL_H
#define GSO_XDP_RING_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/compat.h"

struct xring {
	uint32_t cached_prod;
	uint32_t cached_cons;
	uint32_t mask;
	uint32_t size;
	_Atomic uint32_t *producer;
	_Atomic uint32_t *consumer;
	_Atomic uint32_t *flags;
	void *ring;     /* struct xdp_desc[size] (TX, RX) or uint64_t[size] (CQ, fill) */
	void *map;      /* the mmap()ed area */
	size_t map_len;
};

/* ---- producer side (TX and fill rings) ---- */

/* Free slots, refreshing the kernel's consumer index only if fewer than `want`. */
static inline uint32_t xring_prod_free(struct xring *r, uint32_t want)
{
	uint32_t free_ = r->size - (r->cached_prod - r->cached_cons);

	if (free_ >= want)
		return free_;
	/*
	 * Acquire pairs with the kernel's (D): once we see the new consumer
	 * index, the kernel has finished reading the descriptors before it,
	 * so overwriting them is safe.
	 */
	r->cached_cons = atomic_load_explicit(r->consumer, memory_order_acquire);
	return r->size - (r->cached_prod - r->cached_cons);
}

/* Reserve `n` slots; returns n and the first index, or 0 (nothing reserved). */
static inline uint32_t xring_prod_reserve(struct xring *r, uint32_t n, uint32_t *idx)
{
	if (xring_prod_free(r, n) < n)
		return 0;
	*idx = r->cached_prod;
	r->cached_prod += n;
	return n;
}

static inline struct xdp_desc *xring_tx_desc(struct xring *r, uint32_t idx)
{
	return &((struct xdp_desc *)r->ring)[idx & r->mask];
}

static inline void xring_fill_set(struct xring *r, uint32_t idx, uint64_t addr)
{
	((uint64_t *)r->ring)[idx & r->mask] = addr;
}

/* Publish everything reserved so far. */
static inline void xring_prod_submit(struct xring *r)
{
	/* Release pairs with the kernel's (C): descriptors before the index. */
	atomic_store_explicit(r->producer, r->cached_prod, memory_order_release);
}

/*
 * After a submit: does the kernel want a wake-up?  The full fence orders
 * our producer store before the flag load.  Without it the load could be
 * satisfied first, miss a NEED_WAKEUP the driver sets just after its last
 * look at the ring, and leave the ring stalled with nobody to kick it.
 */
static inline bool xring_needs_wakeup(const struct xring *r)
{
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit(r->flags, memory_order_relaxed) & XDP_RING_NEED_WAKEUP;
}

/* Descriptors published but not yet taken by the kernel. */
static inline uint32_t xring_prod_pending(struct xring *r)
{
	/* Acquire: as in xring_prod_free(). */
	r->cached_cons = atomic_load_explicit(r->consumer, memory_order_acquire);
	return atomic_load_explicit(r->producer, memory_order_relaxed) - r->cached_cons;
}

/* ---- consumer side (completion and RX rings) ---- */

/* Up to `max` available entries; returns the count and the first index. */
static inline uint32_t xring_cons_peek(struct xring *r, uint32_t max, uint32_t *idx)
{
	uint32_t n = r->cached_prod - r->cached_cons;

	if (n < max) {
		/* Acquire pairs with the kernel's (B): addresses before the index. */
		r->cached_prod = atomic_load_explicit(r->producer, memory_order_acquire);
		n = r->cached_prod - r->cached_cons;
	}
	if (n > max)
		n = max;
	*idx = r->cached_cons;
	r->cached_cons += n;
	return n;
}

/* Entries the kernel has published and we have not peeked yet. */
static inline uint32_t xring_cons_avail(struct xring *r)
{
	/* Acquire: as in xring_cons_peek(). */
	r->cached_prod = atomic_load_explicit(r->producer, memory_order_acquire);
	return r->cached_prod - r->cached_cons;
}

static inline uint64_t xring_cq_addr(const struct xring *r, uint32_t idx)
{
	return ((const uint64_t *)r->ring)[idx & r->mask];
}

static inline const struct xdp_desc *xring_rx_desc(const struct xring *r, uint32_t idx)
{
	return &((const struct xdp_desc *)r->ring)[idx & r->mask];
}

/* Hand back everything peeked so far. */
static inline void xring_cons_release(struct xring *r)
{
	/*
	 * Release pairs with the kernel's (A): our loads of the entries are
	 * done before it can see the slots as free and overwrite them.
	 */
	atomic_store_explicit(r->consumer, r->cached_cons, memory_order_release);
}

/* ---- set-up (ring.c) ---- */

enum xring_kind { XRING_TX, XRING_CQ, XRING_RX, XRING_FILL };

/*
 * Map ring `kind` of AF_XDP socket `fd` (created with `size` entries by
 * setsockopt, before bind) using the offsets from XDP_MMAP_OFFSETS.
 * Returns 0 or -errno (nothing mapped on error).
 */
int gsoi_xring_map(struct xring *r, int fd, enum xring_kind kind, uint32_t size);
/* Unmap; idempotent. */
void gsoi_xring_unmap(struct xring *r);

#endif
