/* Event queue of the simulators; see simheap.h. */
#include "simheap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

static bool ev_less(const struct sim_ev *a, const struct sim_ev *b)
{
	return a->t != b->t ? a->t < b->t : a->seq < b->seq;
}

static void swap(struct sim_ev *a, struct sim_ev *b)
{
	struct sim_ev t = *a;

	*a = *b;
	*b = t;
}

int sim_heap_push(struct sim_heap *h, uint64_t t, uint32_t type, uint32_t flow, uint64_t arg)
{
	uint32_t i;

	if (h->max && h->n == h->max)
		return -E2BIG;
	if (h->n == h->cap) {
		uint32_t nc = h->cap ? h->cap * 2 : 1u << 12;
		struct sim_ev *e = realloc(h->ev, (size_t)nc * sizeof(*e));

		if (!e)
			return -ENOMEM;
		h->ev = e;
		h->cap = nc;
	}
	i = h->n++;
	h->ev[i] = (struct sim_ev){ .t = t, .seq = h->seq++, .arg = arg, .type = type, .flow = flow };
	while (i && ev_less(&h->ev[i], &h->ev[(i - 1) / 2])) {
		swap(&h->ev[i], &h->ev[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	return 0;
}

struct sim_ev sim_heap_pop(struct sim_heap *h)
{
	struct sim_ev top = h->ev[0];
	uint32_t i = 0;

	h->ev[0] = h->ev[--h->n];
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && ev_less(&h->ev[c + 1], &h->ev[c]))
			c++;
		if (!ev_less(&h->ev[c], &h->ev[i]))
			break;
		swap(&h->ev[i], &h->ev[c]);
		i = c;
	}
	return top;
}

void sim_heap_free(struct sim_heap *h)
{
	free(h->ev);
	h->ev = NULL;
	h->n = h->cap = 0;
}
