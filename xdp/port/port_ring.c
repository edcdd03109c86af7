/*
 * The port's single-producer / single-consumer ring (port_internal.h has
 * the barrier pairs A-D).  Indices run free (uint32_t wrap) and are
 * masked on use, so head - tail is the fill level at any point.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "port_internal.h"

int gsoi_pring_init(struct pring *r, uint32_t n, uint32_t esz)
{
	memset(r, 0, sizeof(*r));
	if (n < 2 || (n & (n - 1)) || !esz)
		return -EINVAL;
	r->slots = calloc(n, esz);
	if (!r->slots)
		return -ENOMEM;
	r->mask = n - 1;
	r->esz = esz;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	return 0;
}

void gsoi_pring_fini(struct pring *r)
{
	free(r->slots);
	r->slots = NULL;
}

void *gsoi_pring_reserve(struct pring *r)
{
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed); /* our own index */

	if (head - r->cached_tail > r->mask) {
		/* D: pairs with C; the consumer is done with the slot we are about to overwrite. */
		r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (head - r->cached_tail > r->mask)
			return NULL;
	}
	return r->slots + (size_t)(head & r->mask) * r->esz;
}

void gsoi_pring_push(struct pring *r)
{
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);

	/* A: pairs with B; the element is written before the consumer can see it. */
	atomic_store_explicit(&r->head, head + 1, memory_order_release);
}

void *gsoi_pring_peek(struct pring *r)
{
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed); /* our own index */

	if (tail == r->cached_head) {
		/* B: pairs with A. */
		r->cached_head = atomic_load_explicit(&r->head, memory_order_acquire);
		if (tail == r->cached_head)
			return NULL;
	}
	return r->slots + (size_t)(tail & r->mask) * r->esz;
}

void gsoi_pring_pop(struct pring *r)
{
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

	/* C: pairs with D; our reads of the element are done before the slot is reused. */
	atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
}
