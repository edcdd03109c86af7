/*
 * The impair relay's `--block-ack MS` (bench/testbed/impair.c): frames of
 * the reverse path held and released all together every MS milliseconds,
 * as the ACKs of a Wi-Fi receiver come back (its TCP ACKs ride in the
 * aggregates it sends when it wins the medium, after the block-ACK of what
 * it received).  Linux's 2015 TSO autosizing met this on ath10k: ACKs in
 * bursts, bursts of data in reply.
 *
 * Releases fall on a fixed grid (t0 + k * period), so a frame waits less
 * than a period.  Nothing is reordered or dropped: the hold is a FIFO of
 * at most `cap` frames, and the frame that fills it releases everything at
 * once (counted as early).  Pure bookkeeping: time is an argument, frames
 * are the caller's buffers, which the hold owns until it hands them back.
 */
#ifndef BENCH_BLOCKACK_H
#define BENCH_BLOCKACK_H

#include <stdbool.h>
#include <stdint.h>

struct bench_ba_frame {
	uint8_t *data;
	uint32_t len;
};

struct bench_blockack {
	uint64_t period_ns, t0;
	uint32_t cap;
	struct bench_ba_frame *q; /* cap entries */
	uint32_t head, count;
	uint64_t deadline;        /* release of what is held; UINT64_MAX: nothing held */
	/* counters */
	uint64_t frames;          /* frames that went through the hold */
	uint64_t releases;        /* releases (each of at least one frame) */
	uint64_t early;           /* of those, because the hold was full */
	uint64_t max_burst;       /* most frames released at once */
};

/* period_ns > 0, cap > 0; releases on the grid from t0.  0 or -ENOMEM / -EINVAL. */
int bench_ba_init(struct bench_blockack *b, uint64_t period_ns, uint32_t cap, uint64_t t0);
/* Free the hold and the frames still in it. */
void bench_ba_fini(struct bench_blockack *b);

/* Hold a frame that arrived at `now`.  Returns true when the hold is full: release it now (early). */
bool bench_ba_hold(struct bench_blockack *b, uint8_t *data, uint32_t len, uint64_t now);

/* When the held frames are due (UINT64_MAX: none held). */
static inline uint64_t bench_ba_deadline(const struct bench_blockack *b)
{
	return b->deadline;
}

typedef void (*bench_ba_fn)(void *ctx, const struct bench_ba_frame *f);

/*
 * Hand every held frame to fn, in arrival order (fn owns its data then),
 * if they are due at `now` or `early` (the hold is full).  Returns how
 * many.
 */
uint32_t bench_ba_release(struct bench_blockack *b, uint64_t now, bool early, bench_ba_fn fn, void *ctx);

#endif
