/*
 * A device that never gives the completions of some descriptors (seen
 * with AF_XDP copy mode's multi-buffer frames into a veth whose peer runs
 * XDP: the stream then waited behind its device-queue limit for ever,
 * its RTO retransmissions included).  The engine gives them up after
 * GSO_ENGINE_DEV_STALL_NS without a completion, counts them in
 * tx_lost_completions, and the stream goes on; what completes late is
 * taken back.  In virtual time over tcppeer's fake device.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>

#include "gso_test.h"
#include "tcppeer.h"

TestSuite(tcp_stuck_dev, .init = tp_setup, .fini = tp_teardown, .timeout = 60);

static struct gso_engine_stats estats(struct gso_engine *e)
{
	struct gso_engine_stats st = { .sz = sizeof(st) };

	cr_assert_eq(gso_engine__stats(e, &st), 0);
	return st;
}

/* Bytes of data sent to the peer from record `from` on. */
static uint64_t data_sent(const struct conn *c, unsigned from)
{
	uint64_t n = 0;

	for (unsigned i = from; i < c->f->n; i++)
		if (c->f->r[i].dport == c->pport)
			n += c->f->r[i].len;
	return n;
}

Test(tcp_stuck_dev, lost_completions_do_not_hold_the_stream)
{
	for (unsigned k = 0; k < NKINDS; k++) {
		struct conn c = conn_open(kinds[k].passive, kinds[k].l3, 0);
		uint64_t t0;
		unsigned mark;
		int n;

		fill_pattern();
		/* Far more than any device-queue limit, never completed. */
		c.f->stuck = 100000;
		mark = c.f->n;
		n = gso_stream__write(c.s, pattern, 200000);
		cr_assert_gt(n, 0, "%s %s: write %d", KIND(k), n);
		t0 = vnow;
		run_until(c.e, t0 + GSO_ENGINE_DEV_STALL_NS / 2);
		cr_assert_eq(data_sent(&c, mark), 0, "%s %s: sent past a full device", KIND(k));
		cr_assert_eq(estats(c.e).tx_lost_completions, 0, "%s %s", KIND(k));
		cr_assert_gt(sinfo(c.s).tsq_waits, 0, "%s %s", KIND(k));

		/* A second without a completion: given up on, and the data goes. */
		run_until(c.e, t0 + GSO_ENGINE_DEV_STALL_NS + 50 * MS);
		cr_assert_eq(estats(c.e).tx_lost_completions, 100000, "%s %s: %" PRIu64, KIND(k),
			     estats(c.e).tx_lost_completions);
		cr_assert_gt(data_sent(&c, mark), 0, "%s %s: still held", KIND(k));

		/* The late completions come: nothing more to give up on, nothing counted twice. */
		c.f->stuck = 0;
		run_until(c.e, vnow + 2 * GSO_ENGINE_DEV_STALL_NS);
		cr_assert_eq(estats(c.e).tx_lost_completions, 100000, "%s %s", KIND(k));
		conn_close(&c);
	}
}
