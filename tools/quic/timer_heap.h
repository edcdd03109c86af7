/*
 * Timers of gsoquicd's connections: an indexed binary min-heap of nodes
 * embedded in the connections, keyed by expiry (ns).  A connection's
 * expiry moves after nearly every read and write, so a node knows its own
 * place and is moved in O(log n); the earliest is O(1).  Not part of
 * libgso.
 */
#ifndef GSO_TOOL_TIMER_HEAP_H
#define GSO_TOOL_TIMER_HEAP_H

#include <stdint.h>

struct tnode {
	uint64_t key;
	int32_t idx;      /* its place in the heap, -1: not in it */
};

struct theap {
	struct tnode **a;
	uint32_t n, cap;
};

/* cap: the most nodes at once.  0 or -ENOMEM. */
int theap_init(struct theap *h, uint32_t cap);
void theap_free(struct theap *h);
static inline void tnode_init(struct tnode *t)
{
	t->idx = -1;
}
/* Put t in at `key`, or move it there.  t must fit (at most cap nodes). */
void theap_set(struct theap *h, struct tnode *t, uint64_t key);
void theap_del(struct theap *h, struct tnode *t);
/* The earliest node, or NULL. */
static inline struct tnode *theap_min(const struct theap *h)
{
	return h->n ? h->a[0] : (struct tnode *)0;
}

#endif
