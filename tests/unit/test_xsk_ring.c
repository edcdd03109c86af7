/*
 * The AF_XDP ring accessors (xdp/xsk/ring_internal.h) over rings in plain
 * memory, with this test playing the kernel's side: reservation limits,
 * publishing, wake-up flag, pending count, completion peeking and release,
 * all across the wrap of the 32-bit indices.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include "xsk/ring_internal.h"

#define N 16

struct fake {
	_Atomic uint32_t producer, consumer, flags;
	struct xdp_desc desc[N];
	uint64_t addr[N];
};

static void init_ring(struct xring *r, struct fake *f, bool tx, uint32_t start)
{
	memset(f, 0, sizeof(*f));
	memset(r, 0, sizeof(*r));
	atomic_store(&f->producer, start);
	atomic_store(&f->consumer, start);
	r->size = N;
	r->mask = N - 1;
	r->producer = &f->producer;
	r->consumer = &f->consumer;
	r->flags = &f->flags;
	r->ring = tx ? (void *)f->desc : (void *)f->addr;
	r->cached_prod = r->cached_cons = start;
}

ParameterizedTestParameters(xsk_ring, tx_reserve_submit)
{
	static uint32_t starts[] = { 0, 5, UINT32_MAX - 3, UINT32_MAX - N, UINT32_MAX };
	return cr_make_param_array(uint32_t, starts, sizeof(starts) / sizeof(starts[0]));
}

ParameterizedTest(uint32_t *start, xsk_ring, tx_reserve_submit)
{
	struct fake f;
	struct xring r;
	uint32_t idx = 0, idx2 = 0;

	init_ring(&r, &f, true, *start);
	cr_assert_eq(xring_prod_free(&r, 1), N);
	cr_assert_eq(xring_prod_reserve(&r, N + 1, &idx), 0, "more than the ring");
	cr_assert_eq(xring_prod_reserve(&r, 10, &idx), 10);
	cr_assert_eq(idx, *start);
	for (uint32_t i = 0; i < 10; i++)
		xring_tx_desc(&r, idx + i)->addr = 100 + i;
	cr_assert_eq(atomic_load(&f.producer), *start, "not visible before submit");
	xring_prod_submit(&r);
	cr_assert_eq(atomic_load(&f.producer), *start + 10);
	cr_assert_eq(xring_prod_pending(&r), 10);
	cr_assert_eq(xring_prod_reserve(&r, 7, &idx2), 0, "only 6 left");
	cr_assert_eq(xring_prod_reserve(&r, 6, &idx2), 6);
	cr_assert_eq(idx2, *start + 10);
	cr_assert_eq(xring_prod_free(&r, 1), 0);
	/* The kernel takes 4: they become free again once we look. */
	for (uint32_t i = 0; i < 4; i++)
		cr_assert_eq(f.desc[(*start + i) & (N - 1)].addr, 100 + i, "slot %u", i);
	atomic_store(&f.consumer, *start + 4);
	cr_assert_eq(xring_prod_free(&r, 4), 4);
	cr_assert_eq(xring_prod_reserve(&r, 4, &idx), 4);
	cr_assert_eq(idx, *start + 16);
	cr_assert_eq(xring_tx_desc(&r, idx), &f.desc[(*start + 16) & (N - 1)], "wraps onto the first slots");
	xring_prod_submit(&r);
	cr_assert_eq(xring_prod_pending(&r), N);
	atomic_store(&f.consumer, *start + 20);
	cr_assert_eq(xring_prod_pending(&r), 0);
}

Test(xsk_ring, need_wakeup_flag)
{
	struct fake f;
	struct xring r;

	init_ring(&r, &f, true, 0);
	cr_assert_not(xring_needs_wakeup(&r));
	atomic_store(&f.flags, XDP_RING_NEED_WAKEUP);
	cr_assert(xring_needs_wakeup(&r));
	atomic_store(&f.flags, 0x80); /* other bits are not ours */
	cr_assert_not(xring_needs_wakeup(&r));
}

ParameterizedTestParameters(xsk_ring, cq_peek_release)
{
	static uint32_t starts[] = { 0, 9, UINT32_MAX - 5, UINT32_MAX };
	return cr_make_param_array(uint32_t, starts, sizeof(starts) / sizeof(starts[0]));
}

ParameterizedTest(uint32_t *start, xsk_ring, cq_peek_release)
{
	struct fake f;
	struct xring r;
	uint32_t idx = 0;

	init_ring(&r, &f, false, *start);
	cr_assert_eq(xring_cons_peek(&r, 8, &idx), 0, "empty");
	/* The kernel completes 12. */
	for (uint32_t i = 0; i < 12; i++)
		f.addr[(*start + i) & (N - 1)] = 1000 + i;
	atomic_store(&f.producer, *start + 12);
	cr_assert_eq(xring_cons_peek(&r, 5, &idx), 5, "limited by max");
	cr_assert_eq(idx, *start);
	for (uint32_t i = 0; i < 5; i++)
		cr_assert_eq(xring_cq_addr(&r, idx + i), 1000 + i);
	cr_assert_eq(atomic_load(&f.consumer), *start, "not released yet");
	xring_cons_release(&r);
	cr_assert_eq(atomic_load(&f.consumer), *start + 5);
	cr_assert_eq(xring_cons_peek(&r, UINT32_MAX, &idx), 7, "the rest");
	cr_assert_eq(idx, *start + 5);
	cr_assert_eq(xring_cq_addr(&r, idx + 6), 1011);
	xring_cons_release(&r);
	cr_assert_eq(atomic_load(&f.consumer), *start + 12);
	/* Across the wrap of the slots: 10 more. */
	for (uint32_t i = 12; i < 22; i++)
		f.addr[(*start + i) & (N - 1)] = 1000 + i;
	atomic_store(&f.producer, *start + 22);
	cr_assert_eq(xring_cons_peek(&r, UINT32_MAX, &idx), 10);
	for (uint32_t i = 0; i < 10; i++)
		cr_assert_eq(xring_cq_addr(&r, idx + i), 1012 + i);
	xring_cons_release(&r);
	cr_assert_eq(xring_cons_peek(&r, 1, &idx), 0);
}

/* The receive pair: fill ring (we produce addresses), RX ring (we consume descriptors). */
ParameterizedTestParameters(xsk_ring, fill_and_rx)
{
	static uint32_t starts[] = { 0, 9, UINT32_MAX - 5, UINT32_MAX };
	return cr_make_param_array(uint32_t, starts, sizeof(starts) / sizeof(starts[0]));
}

ParameterizedTest(uint32_t *start, xsk_ring, fill_and_rx)
{
	struct fake ff, fr;
	struct xring fill, rx;
	uint32_t idx = 0;

	init_ring(&fill, &ff, false, *start);
	init_ring(&rx, &fr, true, *start);
	cr_assert_eq(xring_prod_reserve(&fill, N, &idx), N);
	for (uint32_t i = 0; i < N; i++)
		xring_fill_set(&fill, idx + i, (uint64_t)i * 4096);
	xring_prod_submit(&fill);
	cr_assert_eq(atomic_load(&ff.producer), *start + N);
	/* Slots land at index & mask, across the wrap. */
	for (uint32_t i = 0; i < N; i++)
		cr_assert_eq(ff.addr[(*start + i) & (N - 1)], (uint64_t)i * 4096);
	cr_assert_eq(xring_prod_free(&fill, 1), 0, "full until the kernel consumes");
	atomic_store(&ff.consumer, *start + 5);
	cr_assert_eq(xring_prod_free(&fill, 1), 5);

	/* The "kernel" writes three frames into the RX ring. */
	cr_assert_eq(xring_cons_avail(&rx), 0);
	for (uint32_t i = 0; i < 3; i++) {
		fr.desc[(*start + i) & (N - 1)].addr = (uint64_t)i * 4096 + 256;
		fr.desc[(*start + i) & (N - 1)].len = 60 + i;
	}
	atomic_store(&fr.producer, *start + 3);
	cr_assert_eq(xring_cons_avail(&rx), 3);
	cr_assert_eq(xring_cons_peek(&rx, 2, &idx), 2);
	cr_assert_eq(xring_rx_desc(&rx, idx + 1)->len, 61);
	cr_assert_eq(xring_cons_avail(&rx), 1, "peeked entries are not available again");
	cr_assert_eq(atomic_load(&fr.consumer), *start, "not released before release");
	xring_cons_release(&rx);
	cr_assert_eq(atomic_load(&fr.consumer), *start + 2);
	cr_assert_eq(xring_cons_peek(&rx, 8, &idx), 1);
	cr_assert_eq(xring_rx_desc(&rx, idx)->addr, 2 * 4096 + 256);
}
