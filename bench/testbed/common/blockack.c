/* The block-ACK hold of bench/impair relay --block-ack (blockack.h says what it models). */
#include "blockack.h"

#include <errno.h>
#include <stdlib.h>

int bench_ba_init(struct bench_blockack *b, uint64_t period_ns, uint32_t cap, uint64_t t0)
{
	if (!period_ns || !cap)
		return -EINVAL;
	*b = (struct bench_blockack){ .period_ns = period_ns, .t0 = t0, .cap = cap, .deadline = UINT64_MAX };
	b->q = calloc(cap, sizeof(*b->q));
	return b->q ? 0 : -ENOMEM;
}

void bench_ba_fini(struct bench_blockack *b)
{
	for (; b->count; b->count--, b->head = (b->head + 1) % b->cap)
		free(b->q[b->head].data);
	free(b->q);
	b->q = NULL;
}

bool bench_ba_hold(struct bench_blockack *b, uint8_t *data, uint32_t len, uint64_t now)
{
	/* The caller releases a full hold at once, so there is always room here. */
	b->q[(b->head + b->count) % b->cap] = (struct bench_ba_frame){ data, len };
	if (!b->count++) {
		/* The next point of the grid: a frame never waits a whole period or more. */
		uint64_t k = now > b->t0 ? (now - b->t0) / b->period_ns + 1 : 1;

		b->deadline = b->t0 + k * b->period_ns;
	}
	b->frames++;
	return b->count == b->cap;
}

uint32_t bench_ba_release(struct bench_blockack *b, uint64_t now, bool early, bench_ba_fn fn, void *ctx)
{
	uint32_t n = b->count;

	if (!n || (!early && now < b->deadline))
		return 0;
	for (; b->count; b->count--, b->head = (b->head + 1) % b->cap)
		fn(ctx, &b->q[b->head]);
	b->deadline = UINT64_MAX;
	b->releases++;
	b->early += early;
	if (n > b->max_burst)
		b->max_burst = n;
	return n;
}
