/*
 * The 2004 TSO failure and its fix, as assertions in virtual time
 * (seeds 000/001: "bad TSO performance in 2.6.9-rc2-BK").
 *
 * What broke: 2.6.9-rc2 counted a TSO frame as all of its segments but
 * still sent a frame only when the whole of it fitted in cwnd
 * (tcp_snd_test: in_flight + tso_factor - 1 < cwnd), with tso_factor up to
 * 64 KiB / mss ~ 44-45 segments.  Once the frame is as large as the window,
 * the sender "has to see 44 ACKs before it is able to send the next TSO
 * frame" (David Miller): the window goes out as one burst, then nothing
 * until all of it is acked.  The receiver ACKs every second segment; a
 * window of an odd number of segments leaves the last one to the
 * delayed-ACK timer, and the sender idles for it every window.  Anton saw
 * 100 MB/s fall to 1-10 MB/s, "send out one TSO bundle and then wait for
 * the ack".  Small receive buffers made it worse ("receivers with too small
 * socket receive buffers crap out if TSO bursts are too large"): the
 * window is the receive buffer, so the burst is the whole window.
 *
 * Parameters (a 2004 gigabit LAN): bottleneck 1 Gbit/s behind a 10 Gbit/s
 * sender NIC with a 100-packet switch queue, 200 us RTT, MSS 1448 with
 * 66 header bytes (Ethernet + IPv4 + TCP with timestamps), receive buffer
 * 64 KiB without autotuning (45 segments: odd), ACK every 2nd segment,
 * 40 ms delayed-ACK timer, Reno.  The window (64 KiB) exceeds the BDP
 * (25 KB), so a sender that keeps data flowing fills the link; the queue
 * holds a whole window, so no packet is lost in any mode -- the collapse
 * is ACK clocking, not loss, as in the thread.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <gso/gso.h>
#include "linksim.h"

#define MS 1000000ull

static struct ls_params lan2004(enum ls_mode mode)
{
	return (struct ls_params){
		.mode = mode,
		.link_rate = 125000000,   /* 1 Gbit/s */
		.nic_rate = 1250000000,   /* 10 Gbit/s */
		.queue_pkts = 100,
		.rtt_ns = 200000,
		.mss = 1448,
		.hdr_len = 66,
		.rcvbuf = 65536,
		.ack_every = 2,
		.delack_ns = 40 * MS,
		.cc_algo = GSO_CC_RENO,
		.duration_ns = 1000 * MS,
		.warmup_ns = 200 * MS,
	};
}

static struct ls_result run(const struct ls_params *p, const char *what)
{
	struct ls_result r;

	cr_assert_eq(ls_run(p, &r), 0, "%s: simulator limit hit", what);
	cr_log_info("%s: goodput %.1f MB/s (%.1f %% of the link), bursts %lu (max %u segs), "
		    "delayed-ACK timeouts %lu, drops %lu, max queue %u, cwnd %u",
		    what, r.goodput / 1e6, r.utilization * 100, (unsigned long)r.bursts,
		    r.max_burst_segs, (unsigned long)r.delack_timeouts, (unsigned long)r.drops,
		    r.max_queue, r.final_cwnd);
	return r;
}

Test(linksim, seed_2004_whole_window_collapses)
{
	struct ls_params p = lan2004(LS_WHOLE_WINDOW);
	struct ls_result r = run(&p, "whole-window TSO frames");

	/* the mechanism, not only the number */
	cr_expect_eq(r.drops, 0u, "collapse without loss");
	cr_expect_eq(r.max_burst_segs, 45u, "the burst is the whole 64 KiB window");
	cr_expect_gt(r.delack_timeouts, 10u, "the tail of every window waits for the timer");
	cr_expect_lt(r.utilization, 0.10, "goodput %.1f MB/s should collapse", r.goodput / 1e6);
	/* ~65 KB per 40 ms cycle: the thread's 1-10 MB/s */
	cr_expect(r.goodput > 0.5e6 && r.goodput < 10e6, "%.2f MB/s", r.goodput / 1e6);
}

Test(linksim, seed_2004_scheduler_keeps_link_full)
{
	struct ls_params p = lan2004(LS_SCHED);
	struct ls_result r = run(&p, "burst sizing + EDT scheduler");

	cr_expect_geq(r.utilization, 0.95, "goodput %.1f MB/s = %.1f %% of the link",
		      r.goodput / 1e6, r.utilization * 100);
	cr_expect_eq(r.drops, 0u);
	cr_expect_leq(r.max_burst_segs, 45u / 3 + 1, "bursts stay a fraction of the window");
	cr_expect_lt(r.delack_timeouts, 5u, "ACK clocking keeps running");
}

/* The 2004 fix alone (burst <= cwnd/divisor, two bursts in flight), unpaced. */
Test(linksim, seed_2004_sizing_alone)
{
	struct ls_params p = lan2004(LS_SIZED_UNPACED);
	struct ls_result r = run(&p, "burst sizing, unpaced");

	cr_expect_geq(r.utilization, 0.95, "%.1f %%", r.utilization * 100);
}

/* Same outcome with CUBIC as the controller. */
Test(linksim, scheduler_with_cubic)
{
	struct ls_params p = lan2004(LS_SCHED);

	p.cc_algo = GSO_CC_CUBIC;
	struct ls_result r = run(&p, "scheduler, CUBIC");
	cr_expect_geq(r.utilization, 0.95, "%.1f %%", r.utilization * 100);
}

/*
 * 2018: a device taking 2 segments at a time must not shrink what the
 * controller computes.  Same link, a 1 MiB receive buffer so that cwnd is
 * what limits, and a 1000-packet queue so that slow start ends on the
 * window, not on a loss: cwnd, pacing rate and goodput must match whatever
 * the device's gso_max_segs.
 */
Test(linksim, seed_2018_gso_max_segs_2)
{
	struct ls_params p = lan2004(LS_SCHED);

	p.rcvbuf = 1 << 20;
	p.queue_pkts = 1000;
	p.duration_ns = 500 * MS;
	p.warmup_ns = 100 * MS;
	struct ls_result big = run(&p, "gso_max_segs 65535");
	p.dev_max_segs = 2;
	struct ls_result two = run(&p, "gso_max_segs 2");

	cr_expect_leq(two.max_burst_segs, 2u);
	cr_expect_gt(big.max_burst_segs, 2u);
	cr_expect_geq(big.utilization, 0.95, "%.1f %%", big.utilization * 100);
	cr_expect_geq(two.utilization, 0.95, "%.1f %%", two.utilization * 100);
	double dc = (double)two.final_cwnd / big.final_cwnd;
	double dr = (double)two.final_rate / (double)big.final_rate;
	cr_expect(dc > 0.9 && dc < 1.1, "cwnd %u vs %u", two.final_cwnd, big.final_cwnd);
	cr_expect(dr > 0.9 && dr < 1.1, "rate %lu vs %lu", (unsigned long)two.final_rate,
		  (unsigned long)big.final_rate);
}

/*
 * A shallow queue and a big window: whole-window bursts overflow the
 * bottleneck and fall into loss recovery; paced bursts of a fraction of the
 * window do not.  (The simulator's go-back-N repair is crude, which only
 * matters for the unpaced sender.)
 */
Test(linksim, shallow_queue_bursts_overflow)
{
	struct ls_params p = lan2004(LS_WHOLE_WINDOW);

	p.queue_pkts = 16;
	p.rcvbuf = 256 * 1024;
	struct ls_result whole = run(&p, "whole-window, 16-packet queue");
	p.mode = LS_SCHED;
	struct ls_result paced = run(&p, "scheduler, 16-packet queue");

	cr_expect_gt(whole.drops, 0u, "45-segment bursts at 10x the link rate overflow 16 slots");
	cr_expect_gt(paced.utilization, whole.utilization + 0.2, "paced %.1f %% vs whole %.1f %%",
		     paced.utilization * 100, whole.utilization * 100);
}

/*
 * Pacing proper: the flow's rate capped at 40 % of the link (an application
 * limit, SO_MAX_PACING_RATE).  Paced, it gets that rate and the
 * bottleneck never holds more than one burst; unpaced, the same sender
 * ignores the cap, fills the queue and loses packets.
 */
Test(linksim, paced_rate_keeps_queue_short)
{
	struct ls_params p = lan2004(LS_SCHED);

	p.rcvbuf = 1 << 20;
	p.max_rate = 50000000; /* 400 Mbit/s of wire bytes */
	struct ls_result paced = run(&p, "scheduler, rate capped at 40 %");
	p.mode = LS_SIZED_UNPACED;
	struct ls_result unpaced = run(&p, "sizing only, rate cap ignored");

	double wire = paced.goodput * (p.mss + p.hdr_len) / p.mss;
	cr_expect(wire > 0.98 * 50e6 && wire < 1.01 * 50e6, "paced: %.2f MB/s of wire bytes",
		  wire / 1e6);
	/* at 200 us the short-RTT bonus makes bursts of 64 KiB: the queue holds
	 * at most one of them, never a standing backlog */
	cr_expect_leq(paced.max_queue, paced.max_burst_segs, "queue %u, burst %u",
		      paced.max_queue, paced.max_burst_segs);
	cr_expect_eq(paced.drops, 0u);
	cr_expect_gt(unpaced.max_queue, 2 * paced.max_queue, "unpaced queue %u vs paced %u",
		     unpaced.max_queue, paced.max_queue);
	cr_expect_gt(unpaced.drops, 0u);
}

/*
 * Deferral (tcp_tso_should_defer), off by default: with the window nearly
 * closed and an ACK due, waiting for a third of the window gives bursts
 * several times larger at the same goodput.
 */
Test(linksim, deferral_bigger_bursts_same_goodput)
{
	struct ls_params p = lan2004(LS_SCHED);
	struct ls_result plain = run(&p, "scheduler");

	p.defer = 1;
	struct ls_result defer = run(&p, "scheduler with deferral");

	double avg_plain = (double)plain.segs_sent / plain.bursts;
	double avg_defer = (double)defer.segs_sent / defer.bursts;
	cr_expect_gt(defer.deferrals, 0u);
	cr_expect_gt(avg_defer, 3 * avg_plain, "average burst %.1f vs %.1f segments", avg_defer,
		     avg_plain);
	cr_expect_leq(defer.max_burst_segs, 45u / 3 + 1, "still a fraction of the window");
	cr_expect_geq(defer.utilization, 0.95, "%.1f %%", defer.utilization * 100);
	cr_expect_eq(defer.delack_timeouts, 0u);
}
