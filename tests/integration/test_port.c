/*
 * The multi-queue port (<gso/port.h>) on a veth with 2 TX and 2 RX queues
 * each side (test_sender_util.h's bed): bench/sender --queues 2 with four
 * streams to four kernel receivers (placement on both queues, every byte
 * verified, UMEM balanced per queue); the same with the receiver's
 * transmit queue forced by XPS, so that the ACKs of queue 1's streams
 * arrive on queue 0 and must be handed over; stopping a port with data
 * queued on every engine; and bad input, with nothing left behind.
 */
#include <criterion/criterion.h>
#include <math.h>

#include <gso/port.h>
#include <gso/route.h>
#include <gso/tmpl.h>

#include "test_sender_util.h"

#define NSTREAMS 4
#define BASE_PORT 5301

/* A source port base whose NSTREAMS streams land on both queues (stable: the hash is fixed). */
static uint16_t pick_sport(void)
{
	for (uint16_t base = 40000; base < 41000; base += NSTREAMS) {
		unsigned on[2] = { 0 };

		for (unsigned i = 0; i < NSTREAMS; i++) {
			struct gso_flow f = { .sz = sizeof(f), .l3 = GSO_L3_IPV4, .l4 = GSO_L4_TCP,
					      .sport = (uint16_t)(BASE_PORT + i),
					      .dport = (uint16_t)(base + i) };

			inet_pton(AF_INET, ADDR_B, f.saddr);
			inet_pton(AF_INET, ADDR_A, f.daddr);
			on[gso_flow__rss_hash(&f) % 2]++;
		}
		if (on[0] && on[1])
			return base;
	}
	cr_assert_fail("no source port base spreads the streams");
	return 0;
}

/* Element i of the JSON array "key": [a, b, ...]. */
static double arr(const char *json, const char *key, unsigned i)
{
	char pat[96];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": [", key);
	p = strstr(json, pat);
	if (!p)
		return NAN;
	p += strlen(pat);
	while (i--) {
		p = strchr(p, ',');
		if (!p)
			return NAN;
		p++;
	}
	return strtod(p, NULL);
}

static const char *multi_transfer(const char *sport)
{
	const char *ready[NSTREAMS], *rout[NSTREAMS];
	struct bt_proc *rp[NSTREAMS], *sp;
	char port[NSTREAMS][16], base[16];
	const char *sj;
	int se;

	snprintf(base, sizeof(base), "%d", BASE_PORT);
	for (int i = 0; i < NSTREAMS; i++) {
		char name[16];

		snprintf(name, sizeof(name), "ready%d", i);
		ready[i] = strdup(bt_path(name));
		unlink(ready[i]);
		snprintf(port[i], sizeof(port[i]), "%d", BASE_PORT + i);
		const char *rargv[BT_MAX_ARGS] = { bt_prog("receiver"), "--netns", tb.ns[1], "--once", "--json",
						   "--port", port[i], "--idle-timeout", "20", "--accept-timeout", "30",
						   "--ready-file", ready[i] };
		rp[i] = bt_spawn(rargv);
		bt_wait_file(ready[i], rp[i], 10);
	}
	const char *sargv[BT_MAX_ARGS] = { bt_prog("sender"), "--netns", tb.ns[0], "--dev", IF_A, "--dst", ADDR_B,
					   "--port", base, "--sport", sport, "--seed", "2004", "--json", "--mode",
					   "software", "--check", "--queues", "2", "--streams", "4", "--bytes", "3M" };
	sp = bt_spawn(sargv);
	se = bt_wait(sp, 90);
	if (se) {
		bt_dump(sp, "sender");
		for (int i = 0; i < NSTREAMS; i++)
			bt_stop(rp[i], 5);
	}
	for (int i = 0; i < NSTREAMS; i++) {
		int re = bt_wait(rp[i], 30);

		rout[i] = bt_read(rp[i]->out);
		cr_assert_eq(re, 0, "receiver %d exit %d: %s", i, re, rout[i]);
		cr_assert_str_eq(bt_str(rout[i], "status"), "ok", "%s", rout[i]);
		cr_assert_eq(bt_num(rout[i], "bytes"), 3 << 20, "%s", rout[i]);
		cr_assert_eq(bt_num(rout[i], "bytes_verified"), 3 << 20, "every byte verified: %s", rout[i]);
		free((void *)ready[i]);
	}
	sj = strdup(bt_read(sp->out));
	cr_assert_eq(se, 0, "sender exit %d: %s", se, sj);
	cr_assert_str_eq(bt_str(sj, "status"), "ok", "%s", sj);
	cr_assert_eq(bt_num(sj, "bytes"), 4.0 * (3 << 20), "%s", sj);
	cr_assert(strstr(sj, "\"umem_balanced\": true"), "UMEM balanced on every queue: %s", sj);
	cr_assert_eq(bt_num(sj, "umem_free_at_end"), bt_num(sj, "umem_chunks"), "%s", sj);
	cr_assert_eq(bt_num(sj, "wnd_violations"), 0, "%s", sj);
	/* Streams on both queues, and each queue sent frames (its socket is bound to it: no other queue). */
	for (unsigned q = 0; q < 2; q++) {
		cr_assert_gt(arr(sj, "queue_streams", q), 0, "queue %u has streams: %s", q, sj);
		cr_assert_gt(arr(sj, "queue_tx_frames", q), 0, "queue %u sent: %s", q, sj);
	}
	return sj;
}

Test(port, sender_two_queues, .fini = fini, .timeout = 240)
{
	char sport[16];
	const char *sj;

	bed();
	snprintf(sport, sizeof(sport), "%u", pick_sport());
	sj = multi_transfer(sport);
	cr_log_info("%s", sj);
	free((void *)sj);
}

Test(port, acks_on_the_other_queue_handed_over, .fini = fini, .timeout = 240)
{
	char sport[16];
	const char *sj;

	bed();
	/* The receiver sends everything on its TX queue 0 (XPS: every CPU -> tx-0): our RX queue 0. */
	cr_assert_eq(nsbed_sh(&tb, 1, "printf %%x $(( (1 << $(nproc)) - 1 )) > /sys/class/net/" IF_B "/queues/tx-0/xps_cpus && "
					    "echo 0 > /sys/class/net/" IF_B "/queues/tx-1/xps_cpus"), 0);
	snprintf(sport, sizeof(sport), "%u", pick_sport());
	sj = multi_transfer(sport);
	/* Queue 1's streams heard every ACK through queue 0. */
	cr_assert_gt(arr(sj, "queue_handover_out", 0), 0, "%s", sj);
	cr_assert_gt(arr(sj, "queue_handover_in", 1), 0, "%s", sj);
	cr_assert_eq(arr(sj, "queue_handover_out", 1), 0, "%s", sj);
	cr_log_info("%s", sj);
	free((void *)sj);
}

/* ---- in-process: threads and descriptors ---- */

/*
 * Descriptors are counted around the port (which uses a steering program
 * the test made, opts.steer), and again around the steering program's
 * create and destroy: neither leaves one behind (libxdp 1.3.1's leak in
 * its read-back of an interface's programs is handled in xdp/steer/steer.c;
 * tests/integration/test_steer_leak.c cycles them).
 */

struct dg {
	struct gso_route rt;
	struct gso_dgram *d;
	uint8_t *mem;
	int opened, sent;
};

/* On worker q: a datagram flow at 1 MB/s, with 32 super-segments of 16 KB queued. */
static void open_and_queue(struct gso_engine *e, void *arg)
{
	struct dg *g = arg;
	GSO_OPTS(gso_tmpl_fields, tf, .l4 = GSO_L4_UDP, .sport = 30000, .dport = 9);
	struct gso_tmpl tm;

	if (gso_route__tmpl_fields(&g->rt, &tf) || gso_tmpl__build(&tm, &tf))
		return;
	GSO_OPTS(gso_dgram_opts, o, .tmpl = &tm, .rate = 1000000, .route = &g->rt);
	if (gso_dgram__open(&g->d, e, &o))
		return;
	g->opened = 1;
	for (int i = 0; i < 32; i++)
		if (!gso_dgram__send(g->d, g->mem + (size_t)i * 16384, 16384, 1400, (uint64_t)i))
			g->sent++;
}

Test(port, stop_with_data_queued, .fini = fini, .timeout = 120)
{
	struct gso_port *p;
	struct gso_steer *steer;
	struct dg g[2];
	uint8_t dst[16] = { 0 };
	int fds_pre, fds0, tasks0;
	uint64_t t0, dt;

	bed();
	cr_assert_eq(nsbed_enter(&tb, 0), 0);
	fds_pre = gso_test_count_dir("/proc/self/fd");
	cr_assert_eq(gso_steer__create(&steer, (int)if_nametoindex(IF_A), NULL), 0);
	fds0 = gso_test_count_dir("/proc/self/fd");
	tasks0 = gso_test_count_dir("/proc/self/task");
	inet_pton(AF_INET, ADDR_B, dst);
	GSO_OPTS(gso_port_opts, po, .queues = 2, .steer = steer);
	cr_assert_eq(gso_port__open(&p, (int)if_nametoindex(IF_A), &po), 0);
	cr_assert_eq(gso_port__queues(p), 2);
	cr_assert_eq(gso_port__start(p), 0);
	cr_assert_eq(gso_test_count_dir("/proc/self/task"), tasks0 + 2, "one worker per queue");
	for (unsigned q = 0; q < 2; q++) {
		memset(&g[q], 0, sizeof(g[q]));
		g[q].rt.sz = sizeof(g[q].rt);
		cr_assert_eq(gso_route__lookup(GSO_L3_IPV4, dst, (int)if_nametoindex(IF_A), 2000, &g[q].rt), 0);
		g[q].mem = calloc(32, 16384);
		cr_assert_eq(gso_port__call(p, q, open_and_queue, &g[q]), 0);
	}
	/* Let both workers queue their data (1 MB/s: it takes half a second to send). */
	while (!g[0].opened || !g[1].opened)
		usleep(1000);
	usleep(20000);
	t0 = gso_evloop_now_ns();
	cr_assert_eq(gso_port__stop(p), 0);
	dt = gso_evloop_now_ns() - t0;
	cr_assert_lt(dt, 2000000000ull, "stop took %lu ns", (unsigned long)dt);
	cr_assert_eq(gso_test_count_dir("/proc/self/task"), tasks0, "no worker left");
	for (unsigned q = 0; q < 2; q++) {
		GSO_OPTS(gso_dgram_info, di);

		cr_assert_eq(g[q].sent, 32, "queue %u", q);
		cr_assert_eq(gso_dgram__info(g[q].d, &di), 0);
		cr_assert_gt(di.queued, 0, "queue %u still has data queued at stop", q);
	}
	cr_assert_eq(gso_port__close(p), 0);
	for (unsigned q = 0; q < 2; q++) {
		GSO_OPTS(gso_port_stats, st);

		cr_assert_eq(gso_port__stats(p, q, &st), 0);
		cr_assert_gt(st.chunks_total, 0);
		cr_assert_eq(st.chunks_free, st.chunks_total, "queue %u: every buffer reclaimed", q);
		cr_assert_eq(st.calls_run, 1);
	}
	{
		GSO_OPTS(gso_port_stats, st);

		cr_assert_eq(gso_port__stats(p, GSO_PORT_ALL, &st), 0);
		cr_assert_eq(st.queues, 2);
		cr_assert_eq(st.chunks_free, st.chunks_total, "the port's sum balanced");
	}
	gso_port__destroy(p);
	cr_assert_eq(gso_test_count_dir("/proc/self/fd"), fds0, "no descriptor left");
	cr_assert_eq(gso_test_count_dir("/proc/self/task"), tasks0);
	gso_steer__destroy(steer);
	cr_assert_eq(gso_test_count_dir("/proc/self/fd"), fds_pre, "no descriptor left by the steering program");
	free(g[0].mem);
	free(g[1].mem);
}

static void nothing(struct gso_engine *e, void *arg)
{
	(void)e;
	(void)arg;
}

Test(port, bad_input, .fini = fini, .timeout = 120)
{
	struct gso_port *p = NULL;
	struct gso_steer *steer;
	int fds_pre, fds0, tasks0, ifa;
	int cpus_bad[2] = { 0, 4096 }, cpus_neg[2] = { -2, -1 };

	bed();
	/* A second veth pair with one queue each side, in side a. */
	cr_assert_eq(nsbed_sh(&tb, 0, "ip link add sq2 numtxqueues 1 numrxqueues 1 type veth peer name sq3 numtxqueues 1 numrxqueues 1 && "
					    "ip link set sq2 up && "
					    "ip link set sq3 up"), 0);
	cr_assert_eq(nsbed_enter(&tb, 0), 0);
	ifa = (int)if_nametoindex(IF_A);
	fds_pre = gso_test_count_dir("/proc/self/fd");
	cr_assert_eq(gso_steer__create(&steer, ifa, NULL), 0);
	fds0 = gso_test_count_dir("/proc/self/fd");
	tasks0 = gso_test_count_dir("/proc/self/task");
	{
		GSO_OPTS(gso_port_opts, po, .queues = 3);
		cr_assert_eq(gso_port__open(&p, ifa, &po), -ERANGE, "more queues than the device has");
	}
	{
		GSO_OPTS(gso_port_opts, po, .queues = 2);
		cr_assert_eq(gso_port__open(&p, (int)if_nametoindex("sq2"), &po), -ERANGE, "2 on a 1-queue veth");
	}
	{
		GSO_OPTS(gso_port_opts, po, .queues = GSO_PORT_MAX_QUEUES + 1);
		cr_assert_eq(gso_port__open(&p, ifa, &po), -E2BIG);
	}
	{
		GSO_OPTS(gso_port_opts, po, .queues = 2, .cpus = cpus_bad, .ncpus = 2);
		cr_assert_eq(gso_port__open(&p, ifa, &po), -EDOM, "a CPU out of range");
	}
	{
		GSO_OPTS(gso_port_opts, po, .queues = 2, .cpus = cpus_neg, .ncpus = 2);
		cr_assert_eq(gso_port__open(&p, ifa, &po), -EDOM, "a negative CPU other than -1");
	}
	{
		GSO_OPTS(gso_port_opts, po, .ring_size = 3);
		cr_assert_eq(gso_port__open(&p, ifa, &po), -EINVAL);
	}
	cr_assert_null(p, "nothing given out");
	cr_assert_eq(gso_test_count_dir("/proc/self/fd"), fds0, "no descriptor left");
	cr_assert_eq(gso_test_count_dir("/proc/self/task"), tasks0, "no thread left");
	/* A queue out of range on a port that opened (default: both queues). */
	{
		GSO_OPTS(gso_port_opts, po, .ring_size = 2, .steer = steer);
		cr_assert_eq(gso_port__open(&p, ifa, &po), 0);
	}
	cr_assert_eq(gso_port__queues(p), 2, "the device's count");
	cr_assert_eq(gso_port__call(p, 2, nothing, NULL), -ENXIO);
	cr_assert_null(gso_port__engine(p, 2));
	cr_assert_eq(errno, ENXIO);
	{
		GSO_OPTS(gso_port_stats, st);
		cr_assert_eq(gso_port__stats(p, 5, &st), -ENXIO);
	}
	/* Not started: the ring of 2 fills, then -EAGAIN, counted. */
	cr_assert_eq(gso_port__call(p, 0, nothing, NULL), 0);
	cr_assert_eq(gso_port__call(p, 0, nothing, NULL), 0);
	cr_assert_eq(gso_port__call(p, 0, nothing, NULL), -EAGAIN);
	{
		GSO_OPTS(gso_port_stats, st);
		cr_assert_eq(gso_port__stats(p, 0, &st), 0);
		cr_assert_eq(st.calls, 2);
		cr_assert_eq(st.calls_refused, 1);
	}
	struct gso_engine *e0 = gso_port__engine(p, 0);
	gso_port__destroy(p);
	cr_assert_eq(gso_test_count_dir("/proc/self/fd"), fds0, "no descriptor left");
	cr_assert_eq(gso_test_count_dir("/proc/self/task"), tasks0, "no thread left");
	/* The destroyed port's handle, and its engines': refused, nothing touched; destroy again does nothing. */
	cr_assert_eq(gso_port__start(p), -EBADF);
	cr_assert_eq(gso_port__call(p, 0, nothing, NULL), -EBADF);
	cr_assert_eq(gso_port__queues(p), 0);
	cr_assert_null(gso_port__engine(p, 0));
	cr_assert_eq(errno, EBADF);
	{
		GSO_OPTS(gso_port_stats, st);
		cr_assert_eq(gso_port__stats(p, GSO_PORT_ALL, &st), -EBADF);
	}
	cr_assert_eq(gso_engine__wake(e0), -EBADF);
	gso_port__destroy(p);
	gso_steer__destroy(steer);
	cr_assert_eq(gso_test_count_dir("/proc/self/fd"), fds_pre, "no descriptor left by the steering program");
}

/*
 * The queues a port opens by default, and those gso_engine__open() takes,
 * are the ones in use, not the ones the driver allocated: a veth with 4
 * queues allocated and 1 in use (ethtool -L; a veth made without
 * numtxqueues allocates one per possible CPU and uses 1) opens a port of
 * one queue.  rtnetlink reports only the allocated count, and a port that
 * trusted it bound queue 1, which does not exist: -EINVAL.
 */
Test(port, default_queues_are_those_in_use, .fini = fini, .timeout = 120)
{
	struct gso_port *p = NULL;
	struct gso_engine *e = NULL;
	int ifq;

	bed();
	cr_assert_eq(nsbed_sh(&tb, 0, "ip link add pq0 numtxqueues 4 numrxqueues 4 type veth peer name pq1 "
				      "numtxqueues 4 numrxqueues 4 && ethtool -L pq0 rx 1 tx 1 && ethtool -L pq1 rx 1 tx 1 && "
				      "ip link set pq0 up && ip link set pq1 up && test ! -e /sys/class/net/pq0/queues/tx-1"),
		     0);
	cr_assert_eq(nsbed_enter(&tb, 0), 0);
	ifq = (int)if_nametoindex("pq0");
	cr_assert_gt(ifq, 0);
	cr_assert_eq(gso_port__open(&p, ifq, NULL), 0, "a default port on a veth of one queue in use");
	cr_assert_eq(gso_port__queues(p), 1);
	gso_port__destroy(p);
	{
		GSO_OPTS(gso_port_opts, po, .queues = 2);
		cr_assert_eq(gso_port__open(&p, ifq, &po), -ERANGE, "2 queues where 1 is in use");
	}
	cr_assert_eq(gso_engine__open(&e, ifq, 1, NULL, NULL), -ENXIO, "queue 1 is allocated, not in use");
	cr_assert_null(e);
}
