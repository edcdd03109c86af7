/*
 * The event queue of the virtual-time simulators (linksim.c, flowsim.c):
 * a binary min-heap ordered by time, then by insertion (FIFO among equal
 * times), so that every run with the same inputs is the same run.
 */
#ifndef GSO_TEST_SIMHEAP_H
#define GSO_TEST_SIMHEAP_H

#include <stdint.h>

struct sim_ev {
	uint64_t t, seq; /* time, then insertion order */
	uint64_t arg;
	uint32_t type, flow;
};

struct sim_heap {
	struct sim_ev *ev;
	uint32_t n, cap, max; /* max: the most events held at once (0 = no limit) */
	uint64_t seq;
};

/* Queue an event.  Returns 0, or -ENOMEM / -E2BIG (more than max). */
int sim_heap_push(struct sim_heap *h, uint64_t t, uint32_t type, uint32_t flow, uint64_t arg);
/* Take the earliest event; the heap must not be empty. */
struct sim_ev sim_heap_pop(struct sim_heap *h);
void sim_heap_free(struct sim_heap *h);

#endif
