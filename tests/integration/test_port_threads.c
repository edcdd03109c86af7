/*
 * The port from two application threads (<gso/port.h>, "Threads" and
 * gso_port__stats): one thread reads gso_port__stats of every queue and
 * of GSO_PORT_ALL in a loop while the test's thread stops and starts the
 * port again and again, with eight streams to a kernel listener and a
 * paced datagram flow per queue sending all the while.  make check builds
 * it with ThreadSanitizer as well (build/tsan, tests/run.sh), where it
 * must report no race: the stats' reads of the engines' and devices'
 * counters against the workers that write them.
 *
 * Checked here too: every stats call succeeds, the device's figures seen
 * never go backwards, read while stopped they are there, and the streams
 * and the datagram flows carried data.
 */
#include <criterion/criterion.h>
#include <poll.h>
#include <stdatomic.h>

#include <gso/port.h>
#include <gso/route.h>
#include <gso/tmpl.h>

#include "test_sender_util.h"

#define NSTREAMS 8
#define SINK_PORT 5310
#define SPORT0 42000
#define ROUNDS 25
#define DG_SLOTS 8
#define DG_LEN 16384

enum { K_STREAM = 1, K_DGRAM };

struct tstream {
	int kind;
	struct gso_stream_opts so;
	struct gso_stream *s; /* the worker's until the port stops (NULL: connect failed) */
	uint32_t q;
};

struct tdgram {
	int kind;
	struct gso_route *rt;
	struct gso_dgram *d;
	uint8_t *mem;
	int open_err;
};

static struct {
	struct tstream st[NSTREAMS];
	struct tdgram dg[2];
	_Atomic int established, dg_opened;
	_Atomic uint64_t dg_sent;
} run;

/* ---- the kernel's side: accept the streams, read and drop their bytes ---- */

static struct sink {
	int lfd;
	atomic_bool stop;
	pthread_t t;
	bool started;
} sink;

static void *sink_main(void *arg)
{
	struct sink *k = arg;
	struct pollfd pf[1 + NSTREAMS];
	static char buf[65536];
	int n = 1;

	pf[0] = (struct pollfd){ .fd = k->lfd, .events = POLLIN };
	while (!atomic_load(&k->stop)) {
		if (poll(pf, (nfds_t)n, 20) <= 0)
			continue;
		if ((pf[0].revents & POLLIN) && n < 1 + NSTREAMS) {
			int fd = accept4(k->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

			if (fd >= 0)
				pf[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		}
		for (int i = 1; i < n; i++) {
			ssize_t r;

			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			while ((r = read(pf[i].fd, buf, sizeof(buf))) > 0)
				;
			/* Ended (0, or an error other than "nothing now"): poll ignores it from now on. */
			if (r == 0 || errno != EAGAIN) {
				close(pf[i].fd);
				pf[i].fd = -1;
			}
		}
	}
	for (int i = 1; i < n; i++)
		if (pf[i].fd >= 0)
			close(pf[i].fd);
	return NULL;
}

/* ---- the workers' side ---- */

/* Straight into the stream's device buffers until it says "later" (the bytes are not checked). */
static void fill(struct tstream *ts)
{
	void *p;
	uint32_t room;

	while (!gso_stream__reserve(ts->s, &p, &room)) {
		memset(p, 0x5a, room);
		if (gso_stream__commit(ts->s, room))
			break;
	}
}

static void dgram_send(struct tdgram *g, uint64_t slot)
{
	gso_dgram__send(g->d, g->mem + slot * DG_LEN, DG_LEN, 1400, slot);
}

static void on_event(void *ctx, uint32_t q, struct gso_engine *e, const struct gso_engine_event *ev)
{
	(void)ctx;
	(void)q;
	(void)e;
	if (!ev->flow_ctx)
		return;
	if (*(int *)ev->flow_ctx == K_STREAM) {
		if (ev->type == GSO_EV_STREAM_ESTABLISHED)
			atomic_fetch_add(&run.established, 1);
		else if (ev->type == GSO_EV_STREAM_WRITABLE)
			fill(ev->flow_ctx);
	} else if (ev->type == GSO_EV_DGRAM_SENT) {
		/* Keep the flow's queue full: the slot is ours again, send it anew. */
		atomic_fetch_add_explicit(&run.dg_sent, 1, memory_order_relaxed);
		dgram_send(ev->flow_ctx, ev->cookie);
	}
}

static void do_connect(struct gso_engine *e, void *arg)
{
	struct tstream *ts = arg;

	if (gso_stream__connect(&ts->s, e, &ts->so))
		ts->s = NULL;
}

/* A datagram flow at 20 MB/s to the discard port, its slots all queued. */
static void do_dgram(struct gso_engine *e, void *arg)
{
	struct tdgram *g = arg;
	GSO_OPTS(gso_tmpl_fields, tf, .l4 = GSO_L4_UDP, .sport = 30000, .dport = 9);
	struct gso_tmpl tm;

	g->open_err = gso_route__tmpl_fields(g->rt, &tf) ?: gso_tmpl__build(&tm, &tf);
	if (!g->open_err) {
		GSO_OPTS(gso_dgram_opts, o, .tmpl = &tm, .rate = 20000000, .route = g->rt, .ctx = g);

		g->open_err = gso_dgram__open(&g->d, e, &o);
	}
	if (g->open_err)
		return;
	for (uint64_t i = 0; i < DG_SLOTS; i++)
		dgram_send(g, i);
	atomic_fetch_add(&run.dg_opened, 1);
}

/* ---- the statistics thread ---- */

struct reader {
	struct gso_port *p;
	atomic_bool stop;
	_Atomic uint64_t reads;
	uint64_t failed, backwards, unbalanced, stopped_reads; /* read after the join */
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	uint64_t last_tx = 0;

	while (!atomic_load(&r->stop)) {
		for (uint32_t q = 0; q <= 2; q++) {
			GSO_OPTS(gso_port_stats, st);
			uint32_t which = q == 2 ? GSO_PORT_ALL : q;

			if (gso_port__stats(r->p, which, &st) || st.queues != (which == GSO_PORT_ALL ? 2u : 1u)) {
				r->failed++;
				continue;
			}
			if (st.chunks_free > st.chunks_total)
				r->unbalanced++;
			/* The device's figures are there only while stopped; then they only grow. */
			if (which == GSO_PORT_ALL && st.chunks_total) {
				r->stopped_reads++;
				if (st.tx_frames < last_tx)
					r->backwards++;
				last_tx = st.tx_frames;
			}
		}
		atomic_fetch_add(&r->reads, 1);
	}
	return NULL;
}

static void wait_reads(struct reader *r, uint64_t more)
{
	uint64_t want = atomic_load(&r->reads) + more;

	for (int i = 0; i < 10000 && atomic_load(&r->reads) < want; i++)
		usleep(1000);
	cr_assert_geq(atomic_load(&r->reads), want, "the stats thread stalled");
}

/* Also after a failed assertion: the sink's thread ends before the test-bed goes. */
static void fini_sink(void)
{
	if (sink.started) {
		atomic_store(&sink.stop, true);
		pthread_join(sink.t, NULL);
		close(sink.lfd);
		sink.started = false;
	}
	fini();
}

static int sink_listen(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(SINK_PORT) };
	int fd, one = 1;

	cr_assert_eq(nsbed_enter(&tb, 1), 0);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	inet_pton(AF_INET, ADDR_B, &a.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0, "bind: %s", strerror(errno));
	cr_assert_eq(listen(fd, NSTREAMS), 0);
	cr_assert_eq(nsbed_enter(&tb, 0), 0);
	return fd;
}

static void open_flows(struct gso_port *p, struct gso_route *rt)
{
	for (uint32_t i = 0; i < NSTREAMS; i++) {
		struct tstream *ts = &run.st[i];
		struct gso_flow f = { .sz = sizeof(f), .l3 = GSO_L3_IPV4, .l4 = GSO_L4_TCP, .sport = SINK_PORT,
				      .dport = (uint16_t)(SPORT0 + i) };

		ts->kind = K_STREAM;
		ts->so = (struct gso_stream_opts){ .sz = sizeof(ts->so), .route = rt, .sport = (uint16_t)(SPORT0 + i),
						   .dport = SINK_PORT, .ctx = ts };
		/* On the queue the kernel's ACKs are hashed to (the flow as its segments carry it). */
		memcpy(f.saddr, rt->dst, 16);
		memcpy(f.daddr, rt->src, 16);
		ts->q = (uint32_t)gso_port__queue_of(p, &f);
		cr_assert_eq(gso_port__call(p, ts->q, do_connect, ts), 0);
	}
	for (uint32_t q = 0; q < 2; q++) {
		run.dg[q].kind = K_DGRAM;
		run.dg[q].rt = rt;
		run.dg[q].mem = calloc(DG_SLOTS, DG_LEN);
		cr_assert_not_null(run.dg[q].mem);
		cr_assert_eq(gso_port__call(p, q, do_dgram, &run.dg[q]), 0);
	}
}

Test(port_threads, stats_while_restarting, .fini = fini_sink, .timeout = 240)
{
	struct reader r = { 0 };
	struct gso_route rt = { .sz = sizeof(rt) };
	struct gso_port *p;
	pthread_t rt_thread;
	uint8_t dst[16] = { 0 };
	uint64_t last_tx = 0, acked = 0;

	bed();
	memset(&run, 0, sizeof(run));
	memset(&sink, 0, sizeof(sink));
	sink.lfd = sink_listen();
	cr_assert_eq(pthread_create(&sink.t, NULL, sink_main, &sink), 0);
	sink.started = true;
	inet_pton(AF_INET, ADDR_B, dst);
	cr_assert_eq(gso_route__lookup(GSO_L3_IPV4, dst, (int)if_nametoindex(IF_A), 2000, &rt), 0);
	{
		GSO_OPTS(gso_engine_opts, eo, .max_flows = NSTREAMS + 4);
		GSO_OPTS(gso_port_opts, po, .queues = 2, .engine = &eo, .on_event = on_event);

		cr_assert_eq(gso_port__open(&p, (int)if_nametoindex(IF_A), &po), 0);
	}
	r.p = p;
	cr_assert_eq(pthread_create(&rt_thread, NULL, reader_main, &r), 0);
	cr_assert_eq(gso_port__start(p), 0);
	open_flows(p, &rt);
	for (int i = 0; i < 30000 && (atomic_load(&run.established) < NSTREAMS || atomic_load(&run.dg_opened) < 2); i++)
		usleep(1000);
	cr_assert_eq(atomic_load(&run.established), NSTREAMS, "streams established");
	cr_assert_eq(atomic_load(&run.dg_opened), 2, "datagram flows open: %d / %d", run.dg[0].open_err,
		     run.dg[1].open_err);

	for (int round = 0; round < ROUNDS; round++) {
		GSO_OPTS(gso_port_stats, st);

		usleep(10000);
		cr_assert_eq(gso_port__stop(p), 0);
		/* Stopped: the device's figures are there, and the stats thread reads them meanwhile. */
		cr_assert_eq(gso_port__stats(p, GSO_PORT_ALL, &st), 0);
		cr_assert_gt(st.chunks_total, 0);
		cr_assert_geq(st.tx_frames, last_tx, "round %d", round);
		last_tx = st.tx_frames;
		wait_reads(&r, 3);
		cr_assert_eq(gso_port__start(p), 0, "round %d", round);
		wait_reads(&r, 1);
	}
	cr_assert_eq(gso_port__stop(p), 0);
	atomic_store(&r.stop, true);
	pthread_join(rt_thread, NULL);
	cr_assert_eq(r.failed, 0, "stats calls failed or summed the wrong queues");
	cr_assert_eq(r.unbalanced, 0, "more chunks free than there are");
	cr_assert_eq(r.backwards, 0, "tx_frames went backwards");
	cr_assert_geq(r.stopped_reads, ROUNDS, "the stats thread read the stopped port");
	cr_assert_gt(last_tx, 0, "frames were sent");
	cr_assert_gt(atomic_load(&run.dg_sent), 0, "datagrams were sent");

	/* The workers are joined: this thread may read and close the flows now. */
	for (int i = 0; i < NSTREAMS; i++) {
		GSO_OPTS(gso_stream_info, si);

		cr_assert_eq(gso_stream__info(run.st[i].s, &si), 0);
		acked += si.acked;
		gso_stream__close(run.st[i].s);
	}
	cr_assert_gt(acked, 0, "the streams carried data");
	for (int q = 0; q < 2; q++)
		gso_dgram__close(run.dg[q].d);
	cr_assert_eq(gso_port__close(p), 0);
	{
		GSO_OPTS(gso_port_stats, st);

		cr_assert_eq(gso_port__stats(p, GSO_PORT_ALL, &st), 0);
		cr_assert_eq(st.chunks_free, st.chunks_total, "every buffer reclaimed");
	}
	gso_port__destroy(p);
	for (int q = 0; q < 2; q++)
		free(run.dg[q].mem);
}
