/* Connection timers: see timer_heap.h. */
#include <errno.h>
#include <stdlib.h>

#include "timer_heap.h"

int theap_init(struct theap *h, uint32_t cap)
{
	h->n = 0;
	h->cap = cap;
	h->a = calloc(cap ? cap : 1, sizeof(*h->a));
	return h->a ? 0 : -ENOMEM;
}

void theap_free(struct theap *h)
{
	free(h->a);
	h->a = NULL;
	h->n = h->cap = 0;
}

static void place(struct theap *h, uint32_t i, struct tnode *t)
{
	h->a[i] = t;
	t->idx = (int32_t)i;
}

static void up(struct theap *h, uint32_t i)
{
	struct tnode *t = h->a[i];

	while (i) {
		uint32_t p = (i - 1) / 2;

		if (h->a[p]->key <= t->key)
			break;
		place(h, i, h->a[p]);
		i = p;
	}
	place(h, i, t);
}

static void down(struct theap *h, uint32_t i)
{
	struct tnode *t = h->a[i];

	for (;;) {
		uint32_t l = 2 * i + 1, m = l;

		if (l >= h->n)
			break;
		if (l + 1 < h->n && h->a[l + 1]->key < h->a[l]->key)
			m = l + 1;
		if (t->key <= h->a[m]->key)
			break;
		place(h, i, h->a[m]);
		i = m;
	}
	place(h, i, t);
}

void theap_set(struct theap *h, struct tnode *t, uint64_t key)
{
	uint64_t old = t->key;

	t->key = key;
	if (t->idx < 0) {
		if (h->n >= h->cap)
			return; /* cannot happen: one node per connection slot */
		place(h, h->n++, t);
		up(h, (uint32_t)t->idx);
	} else if (key < old) {
		up(h, (uint32_t)t->idx);
	} else if (key > old) {
		down(h, (uint32_t)t->idx);
	}
}

void theap_del(struct theap *h, struct tnode *t)
{
	uint32_t i = (uint32_t)t->idx;
	struct tnode *last;

	if (t->idx < 0)
		return;
	last = h->a[--h->n];
	t->idx = -1;
	if (i == h->n)
		return;
	place(h, i, last);
	up(h, i);
	down(h, (uint32_t)last->idx);
}
