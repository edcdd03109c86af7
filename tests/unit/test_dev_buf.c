/*
 * Device buffers (gso_dev__buf_*, xdp/dev/dev.c) as every backend sees them,
 * driven through the e1000 model with a callback wire (no root): a copy of
 * a gso_buf kept past gso_dev__buf_free() (or past a release made through
 * another copy) is a buffer the device did not hand out.  Releasing,
 * freeing or sending through it must be refused with -EINVAL and must not
 * touch the chunks of the buffer that owns that memory now.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <gso/tmpl.h>
#include <gso/dev.h>
#include <gso/e1000.h>

#include "gso_test.h"

#define NCHUNKS 64u
#define NBUF    32u

static struct gso_dev *dev;
static _Atomic uint32_t frames; /* on the model's wire (gso_test_count_wire) */

static void fini(void)
{
	gso_dev__destroy(dev);
	dev = NULL;
}

/* A device whose buffer region is NBUF chunks, run by gso_e1000__poll(). */
static struct gso_dev_caps make(void)
{
	GSO_OPTS(gso_e1000_opts, o, .flags = GSO_E1000_F_NO_THREAD, .nchunks = NCHUNKS, .buf_chunks = NBUF,
		 .wire_fn = gso_test_count_wire, .wire_ctx = (void *)&frames);
	struct gso_dev_caps c = { .sz = sizeof(c) };
	int err = gso_e1000__create(&dev, 0, &o);

	cr_assert_eq(err, 0, "gso_e1000__create: %s", strerror(-err));
	cr_assert_eq(gso_dev__caps(dev, &c), 0);
	cr_assert(c.flags & GSO_DEV_BUFS);
	return c;
}

static struct gso_dev_stats stats(void)
{
	struct gso_dev_stats st = { .sz = sizeof(st) };

	cr_assert_eq(gso_dev__stats(dev, &st), 0);
	cr_assert_eq(st.chunks_free + st.chunks_queued + st.chunks_inflight + st.chunks_held, st.chunks_total);
	return st;
}

/*
 * The whole buffer region in one buffer, freed, and handed out again: the
 * new buffer has the same chunks, the same data and cap as the stale copy.
 */
Test(dev_buf, stale_copy_after_free_is_refused, .fini = fini)
{
	struct gso_dev_caps c = make();
	struct gso_buf a, stale, b, other;
	struct gso_dev_stats st;
	struct gso_tmpl t;
	struct gso_tx tx;
	uint32_t used;

	cr_assert_eq(gso_dev__buf_alloc(dev, c.buf_max, &a), 0);
	used = stats().chunks_queued;
	cr_assert_eq(used, NBUF);
	stale = a;
	gso_dev__buf_free(dev, &a);
	cr_assert_eq(stats().chunks_free, NCHUNKS);
	cr_assert_eq(gso_dev__buf_alloc(dev, c.buf_max, &b), 0);
	cr_assert(b.data == stale.data && b.cap == stale.cap, "the same memory handed out again");
	memset(b.data, 0x5a, b.cap);

	cr_assert_eq(gso_dev__buf_release(dev, &stale, stale.cap), -EINVAL,
		     "released the live buffer's chunks through a stale copy");
	cr_assert_eq(gso_dev__buf_release(dev, &stale, 0), -EINVAL, "even a release of nothing");
	st = stats();
	cr_assert_eq(st.chunks_queued, used, "the live buffer still holds all its chunks");
	gso_test_tmpl_tcp4(&t);
	tx = (struct gso_tx){ .tmpl = &t, .buf = &stale, .len = 1000, .mss = 1000 };
	cr_assert_eq(gso_dev__submit(dev, &tx, 1), -EINVAL, "sent from a stale copy");
	gso_dev__buf_free(dev, &stale);
	cr_assert_eq(stats().chunks_queued, used, "gso_dev__buf_free through a stale copy freed chunks");
	cr_assert_eq(gso_dev__buf_alloc(dev, 1, &other), -ENOBUFS, "the live buffer's memory handed out twice");
	for (uint32_t i = 0; i < b.cap; i++)
		cr_assert_eq(b.data[i], 0x5a, "byte %u of the live buffer changed", i);

	/* The live buffer works as before and gives back exactly its chunks. */
	tx.buf = &b;
	cr_assert_eq(gso_dev__submit(dev, &tx, 1), 1);
	gso_e1000__poll(dev);
	gso_dev__reap(dev, 0);
	cr_assert_eq(atomic_load(&frames), 1);
	cr_assert_eq(gso_dev__buf_release(dev, &b, b.cap), (int)NBUF);
	cr_assert_eq(gso_dev__buf_release(dev, &b, b.cap), 0, "again: a no-op");
	gso_dev__buf_free(dev, &b);
	st = stats();
	cr_assert_eq(st.chunks_queued + st.chunks_held + st.chunks_inflight, 1, "only the header slab is left");
}

/*
 * A copy taken before a partial release made through another copy: its
 * head chunks are gone.  Releasing through it must not free the rest
 * either (all or nothing) and must not report a count.
 */
Test(dev_buf, release_through_outdated_copy_is_all_or_nothing, .fini = fini)
{
	struct gso_dev_caps c = make();
	struct gso_buf a, old, tail, head;
	uint32_t cs = c.buf_chunk;

	cr_assert_eq(gso_dev__buf_alloc(dev, 8 * cs - c.buf_headroom, &a), 0);
	old = a;
	/* Chunks 0 and 1 end at data offsets 2 * cs - headroom. */
	cr_assert_eq(gso_dev__buf_release(dev, &a, 2 * cs - c.buf_headroom), 2);
	cr_assert_eq(stats().chunks_queued, 6);
	/* The two freed chunks go to someone else (next fit: the run after a, then the front). */
	cr_assert_eq(gso_dev__buf_alloc(dev, (NBUF - 8) * cs - c.buf_headroom, &tail), 0);
	cr_assert_eq(gso_dev__buf_alloc(dev, 2 * cs - c.buf_headroom, &head), 0);
	cr_assert(head.data == old.data, "the released head went to the new buffer");
	cr_assert_eq(stats().chunks_queued, NBUF);

	cr_assert_eq(gso_dev__buf_release(dev, &old, old.cap), -EINVAL);
	cr_assert_eq(stats().chunks_queued, NBUF, "an outdated copy released chunks");
	cr_assert_eq(gso_dev__buf_release(dev, &old, cs - c.buf_headroom), -EINVAL,
		     "an outdated copy released the new buffer's first chunk");
	cr_assert_eq(stats().chunks_queued, NBUF);
	/* The up-to-date copy still releases its own tail. */
	cr_assert_eq(gso_dev__buf_release(dev, &a, a.cap), 6);
	cr_assert_eq(stats().chunks_queued, NBUF - 6);
}
