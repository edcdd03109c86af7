/*
 * A stream's receive queue (rcvq.c; not installed): one byte ring that
 * holds the in-order bytes the application has not read yet and, at
 * their place after them, the out-of-order ranges the peer sent past a
 * hole.  The ring covers sequence space [head, head + size): a byte's
 * place is fixed by its sequence number, so filling a hole needs no copy
 * of what came after it, and holding a range costs two sequence numbers
 * (no per-byte bitmap).  Pure: no syscalls, no clock; allocation only in
 * gsoi_rcvq_init().
 *
 * Sequence arithmetic is mod 2^32 (signed 32-bit differences), so size
 * is at most RCVQ_MAX_SIZE (2^30, the largest window TCP can advertise
 * with a window scale of 14).
 *
 * Included by tcp/'s files only.
 */
#ifndef GSO_XDP_RCVQ_INTERNAL_H
#define GSO_XDP_RCVQ_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#define RCVQ_MAX_RANGES 4 /* == GSO_STREAM_OOO_RANGES */
#define RCVQ_MAX_SIZE (1u << 30)

struct rcvq_range {
	uint32_t start, end; /* sequence numbers, end exclusive */
};

struct rcvq {
	uint8_t *buf;
	uint32_t size; /* bytes of buf; holds sequence space [head, head + size) */
	uint32_t head; /* sequence number of the first unread byte */
	uint32_t nxt;  /* RCV.NXT: first byte not yet received in order */
	unsigned nranges;
	/*
	 * Out-of-order ranges held: all after nxt, disjoint, not adjacent to
	 * each other; the most recent arrival first (r[0] = the range the
	 * latest segment went into), the order SACK blocks go out in.
	 */
	struct rcvq_range r[RCVQ_MAX_RANGES];
	/* rcvq.c's own: the index in buf of sequence number head */
	uint32_t off;
};

/* What one gsoi_rcvq_put() did with a segment. */
struct rcvq_res {
	uint32_t advanced; /* nxt moved by this many bytes (the segment's and any ranges it joined) */
	uint32_t beyond;   /* bytes of the segment at or past head + size (or `limit`), cut off */
	bool dup;          /* len > 0 and nothing new: every byte was before nxt or already held */
	bool ooo_held;     /* the segment (or its part in the window) lies in an out-of-order range, r[0] */
	bool ooo_dropped;  /* out of order, but a new range was needed and RCVQ_MAX_RANGES are in use: dropped */
	bool hole_filled;  /* nxt advanced into or over at least one held range */
};

/*
 * Allocate `size` bytes (1..RCVQ_MAX_SIZE) of ring; head = nxt =
 * first_seq, no range.  Returns 0, -EINVAL (NULL, size out of range) or
 * -ENOMEM (nothing allocated).
 */
int gsoi_rcvq_init(struct rcvq *q, uint32_t size, uint32_t first_seq);

/* Free the ring (NULL, or a queue freed already: nothing). */
void gsoi_rcvq_free(struct rcvq *q);

/*
 * Take `len` bytes of payload at sequence `seq`.  Bytes before nxt are
 * ignored (we have them); bytes at or past `limit` (the right edge of the
 * window we advertised) or past head + size are cut and counted in
 * res->beyond.  In-order bytes move nxt, and nxt then swallows every
 * range it reaches; out-of-order bytes join the ranges they overlap or
 * touch (merged into one, moved to r[0], also when nothing in them is
 * new), or start a new range at r[0] if there is room, else are dropped.
 * Bytes received again are copied again (TCP's retransmissions carry the
 * same bytes).  O(RCVQ_MAX_RANGES) plus the copy.  Fills every field of
 * *res.
 */
void gsoi_rcvq_put(struct rcvq *q, uint32_t seq, const uint8_t *data, uint32_t len, uint32_t limit,
		   struct rcvq_res *res);

/* Bytes the application can read: nxt - head. */
uint32_t gsoi_rcvq_readable(const struct rcvq *q);

/* Room for in-order bytes: head + size - nxt (out-of-order ranges sit inside it). */
uint32_t gsoi_rcvq_free_space(const struct rcvq *q);

/*
 * The first contiguous run of readable bytes (the ring's end splits what
 * is readable in two): its length, and *p its start, or 0 and *p NULL.
 */
uint32_t gsoi_rcvq_peek(const struct rcvq *q, const uint8_t **p);

/* Copy min(len, readable) bytes to buf and consume them; returns that count. */
uint32_t gsoi_rcvq_read(struct rcvq *q, void *buf, uint32_t len);

/* Drop the first n readable bytes; n <= gsoi_rcvq_readable() (the caller checks). */
void gsoi_rcvq_consume(struct rcvq *q, uint32_t n);

/*
 * Up to `max` held ranges as SACK blocks {start, end}, in r[]'s order
 * (the most recent first, RFC 2018 section 4).  Returns how many.
 */
unsigned gsoi_rcvq_sack(const struct rcvq *q, uint32_t blocks[][2], unsigned max);

#endif
