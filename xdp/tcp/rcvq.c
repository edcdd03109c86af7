/*
 * A stream's receive queue (see rcvq_internal.h).  gsoi_rcvq_put() works
 * in offsets from nxt, which are small and unsigned once the segment is
 * trimmed to [nxt, the window's right edge), so the 2^32 wrap of the
 * sequence space is handled once, at the top, and nowhere else.
 */
#include "rcvq_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int gsoi_rcvq_init(struct rcvq *q, uint32_t size, uint32_t first_seq)
{
	if (!q || !size || size > RCVQ_MAX_SIZE)
		return -EINVAL;
	uint8_t *buf = malloc(size);

	if (!buf)
		return -ENOMEM;
	*q = (struct rcvq){ .buf = buf, .size = size, .head = first_seq, .nxt = first_seq };
	return 0;
}

void gsoi_rcvq_free(struct rcvq *q)
{
	if (!q)
		return;
	free(q->buf);
	q->buf = NULL;
	q->size = 0;
	q->nranges = 0;
}

/* The index in buf of the byte `rel` bytes after nxt (rel < free space). */
static uint32_t ring_pos(const struct rcvq *q, uint32_t rel)
{
	/* off < size and (nxt - head) + rel < size: the sum is below 2^31. */
	uint32_t pos = q->off + (q->nxt - q->head) + rel;

	return pos >= q->size ? pos - q->size : pos;
}

static void ring_write(struct rcvq *q, uint32_t rel, const uint8_t *data, uint32_t n)
{
	uint32_t pos = ring_pos(q, rel);
	uint32_t first = q->size - pos < n ? q->size - pos : n;

	memcpy(q->buf + pos, data, first);
	if (n > first)
		memcpy(q->buf, data + first, n - first);
}

static void range_remove(struct rcvq *q, unsigned i)
{
	memmove(&q->r[i], &q->r[i + 1], (q->nranges - i - 1) * sizeof(q->r[0]));
	q->nranges--;
}

/* In-order bytes up to `end` (from nxt): move nxt, swallowing every range it reaches. */
static void advance(struct rcvq *q, uint32_t end, struct rcvq_res *res)
{
	/*
	 * The ranges are not sorted (r[] is in arrival order), so start over
	 * after each one swallowed: a chain of ranges each reaching the next
	 * is swallowed whole.  At most RCVQ_MAX_RANGES^2 looks.
	 */
	for (unsigned i = 0; i < q->nranges;) {
		uint32_t rs = q->r[i].start - q->nxt, re = q->r[i].end - q->nxt;

		if (rs <= end) {
			if (re > end)
				end = re;
			range_remove(q, i);
			res->hole_filled = true;
			i = 0;
			continue;
		}
		i++;
	}
	q->nxt += end;
	res->advanced = end;
}

/*
 * Out-of-order bytes [s, e) (from nxt, s > 0): join the ranges they
 * overlap or touch into one at r[0], or open one there.  Returns false
 * (nothing stored) when a new range is needed and there is no room.
 */
static bool hold(struct rcvq *q, uint32_t s, uint32_t e, struct rcvq_res *res)
{
	struct rcvq_range kept[RCVQ_MAX_RANGES];
	unsigned nkept = 0;
	uint32_t ns = s, ne = e, covered = 0;

	for (unsigned i = 0; i < q->nranges; i++) {
		uint32_t rs = q->r[i].start - q->nxt, re = q->r[i].end - q->nxt;

		if (rs > e || re < s) {
			kept[nkept++] = q->r[i];
			continue;
		}
		/* Overlapping or adjacent: merged.  Disjoint ranges: the overlaps add up. */
		uint32_t lo = rs > s ? rs : s, hi = re < e ? re : e;

		if (hi > lo)
			covered += hi - lo;
		if (rs < ns)
			ns = rs;
		if (re > ne)
			ne = re;
	}
	if (nkept == q->nranges && q->nranges == RCVQ_MAX_RANGES)
		return false;
	q->r[0] = (struct rcvq_range){ q->nxt + ns, q->nxt + ne };
	memcpy(&q->r[1], kept, nkept * sizeof(kept[0]));
	q->nranges = nkept + 1;
	res->ooo_held = true;
	res->dup = covered == e - s && !res->beyond;
	return true;
}

void gsoi_rcvq_put(struct rcvq *q, uint32_t seq, const uint8_t *data, uint32_t len, uint32_t limit,
		   struct rcvq_res *res)
{
	*res = (struct rcvq_res){ 0 };
	if (!len)
		return;

	/* The right edge, from nxt: the end of the ring or `limit`, whichever comes first. */
	uint32_t room = q->head + q->size - q->nxt;
	int32_t lim = (int32_t)(limit - q->nxt);
	uint32_t cap = lim <= 0 ? 0 : (uint32_t)lim < room ? (uint32_t)lim : room;
	/* 64 bits: a segment near 2^31 away must not wrap back into the window. */
	int64_t s0 = (int32_t)(seq - q->nxt), s = s0, e = s0 + len;

	if (e > (int64_t)cap) {
		res->beyond = (uint32_t)(e - (s > (int64_t)cap ? s : (int64_t)cap));
		e = cap;
	}
	if (s < 0)
		s = 0;
	if (s >= e) {
		/* Nothing in the window: before nxt, cut off, or both. */
		res->dup = !res->beyond;
		return;
	}

	const uint8_t *src = data + (s - s0);

	if (s == 0) {
		ring_write(q, 0, src, (uint32_t)e);
		advance(q, (uint32_t)e, res);
		return;
	}
	if (!hold(q, (uint32_t)s, (uint32_t)e, res)) {
		res->ooo_dropped = true;
		return;
	}
	ring_write(q, (uint32_t)s, src, (uint32_t)(e - s));
}

uint32_t gsoi_rcvq_readable(const struct rcvq *q)
{
	return q->nxt - q->head;
}

uint32_t gsoi_rcvq_free_space(const struct rcvq *q)
{
	return q->head + q->size - q->nxt;
}

uint32_t gsoi_rcvq_peek(const struct rcvq *q, const uint8_t **p)
{
	uint32_t n = q->nxt - q->head;

	if (!n) {
		*p = NULL;
		return 0;
	}
	*p = q->buf + q->off;
	return q->size - q->off < n ? q->size - q->off : n;
}

uint32_t gsoi_rcvq_read(struct rcvq *q, void *buf, uint32_t len)
{
	uint32_t n = q->nxt - q->head;

	if (len < n)
		n = len;
	if (!n)
		return 0;
	uint32_t first = q->size - q->off < n ? q->size - q->off : n;

	memcpy(buf, q->buf + q->off, first);
	if (n > first)
		memcpy((uint8_t *)buf + first, q->buf, n - first);
	gsoi_rcvq_consume(q, n);
	return n;
}

void gsoi_rcvq_consume(struct rcvq *q, uint32_t n)
{
	q->head += n;
	q->off += n;
	if (q->off >= q->size)
		q->off -= q->size;
}

unsigned gsoi_rcvq_sack(const struct rcvq *q, uint32_t blocks[][2], unsigned max)
{
	unsigned n = q->nranges < max ? q->nranges : max;

	for (unsigned i = 0; i < n; i++) {
		blocks[i][0] = q->r[i].start;
		blocks[i][1] = q->r[i].end;
	}
	return n;
}
