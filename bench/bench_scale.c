/*
 * Multi-queue scaling, side by side in one run, on a veth made for the
 * run with 2 TX and 2 RX queues each way (two namespaces, removed at exit
 * and on signals; needs root).  The peer drops every frame in XDP and
 * counts it per receive queue (bench/bpf/xdp_drop.bpf.c; a veth delivers what
 * its peer sent on TX queue q to RX queue q), so frames/s are frames that
 * crossed the link, queue by queue.  AF_XDP runs in copy mode (a veth has
 * no zero-copy): every figure here is a copy-mode veth figure.
 *
 * Rows, each for 64-byte and 1514-byte frames (Ethernet header to the end
 * of the UDP payload, no FCS):
 *
 *   raw xsk, 1 queue             one libxdp AF_XDP socket (xsk_socket__create)
 *                                on queue 0, one sender thread on CPU 0: the
 *                                baseline; and the same on CPU 1 (the CPUs
 *                                of a VM need not be alike: 2 queues are
 *                                also compared with the sum of both)
 *   raw xsk, 2 queues, per-queue two sockets (queues 0 and 1), each with a UMEM
 *                                of its own, two sender threads on CPUs 0, 1
 *   raw xsk, 2 queues, shared    two sockets on ONE UMEM (XDP_SHARED_UMEM via
 *                                xsk_socket__create_shared: a fill/completion
 *                                ring pair per queue), the UMEM's chunks split
 *                                in two halves, one per thread
 *   port, 1 or 2 queues, F flows
 *                                libgso's port (<gso/port.h>): one transmit
 *                                engine per queue, each on its own worker
 *                                thread pinned to CPU q; datagram
 *                                flows (gso_dgram), unpaced, super-segments
 *                                cut at gso_size so that every frame has the
 *                                row's size, refilled from GSO_EV_DGRAM_SENT;
 *                                flows placed on queues by gso_port__queue_of
 *                                (the rows of one flow per queue take the first
 *                                source port that lands on each queue);
 *                                F = 1 per queue, and --flows (10,000);
 *                                1 queue with 1 flow also on CPU 1
 *
 * The raw senders are pre-built frames, descriptors recycled from the
 * completion ring, one sendto() per batch of 64: no library logic.  Raw
 * sockets and the port's engines use the same ring sizes (TX 2048, completion 4096)
 * and per-sendto budget (the TX ring size).
 *
 * Measured per row: after a warm-up, the peer's counters and every sender
 * thread's CPU clock (pthread_getcpuclockid: user + system; copy mode
 * transmits inside sendto) are read, the row runs --seconds, and they are
 * read again.  Mframes/s and Gbit/s (L2 bytes) from the peer's counts;
 * CPU-s/GB = sender threads' CPU over 10^9 L2 bytes; ns/frame = the same
 * per frame (per core: CPU over frames).  On a veth the peer's receive
 * softirq (its XDP drop) runs on the sending CPU and is charged to the
 * sender, so per-frame CPU includes that (small) part.  Rounds interleave
 * the rows (who goes first rotates); the table prints medians.
 *
 * --json: one object per row, then one with the scaling ratios of the
 * same run: scale_2_vs_1_<size>B = libgso 2 queues (one flow each) over 1
 * queue (one flow, CPU 0), scale_2_vs_cpu0_plus_cpu1_<size>B = the same
 * over the sum of 1 queue on CPU 0 and 1 queue on CPU 1,
 * cpu_per_frame_2_vs_1_<size>B, raw_scale_* likewise and
 * shared_vs_per_queue_<size>B from the raw rows, flows_<F>_vs_1_<size>B
 * for the many-flows rows.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <xdp/xsk.h>

#include <gso/engine.h>
#include <gso/gso.h>
#include <gso/port.h>
#include <gso/xsk.h>
#include <gso/steer.h>

#include "kernel/compat.h"
#include "cpu.h"
#include "json.h"
#include "util.h"
#include "benchbed.h"

#define MAXQ 2
#define BATCH 64
#define RING 2048u
#define CHUNK 2048u
#define QCHUNKS (2 * RING) /* UMEM chunks per queue (a half of the shared UMEM) */
#define MAX_ROUNDS 32
#define BASE_PORT 1024u
#define MAX_FLOWS 60000u
#define OUTSTANDING 64u /* super-segments queued per engine at start */
#define SEGS 64u        /* datagrams per super-segment, where UDP and IP allow */
#define WARMUP_S 0.05

enum method { M_RAW, M_PORT };
static const char *const method_name[] = { "raw xsk", "port" };
enum umem { U_PER_QUEUE, U_SHARED };
static const char *const umem_name[] = { "per-queue", "shared" };

struct row {
	enum method m;
	enum umem u;
	uint32_t queues, flows, frame;
	int cpu; /* CPU of queue 0's sender; queue q > 0 is on CPU q */
	/* per round */
	double mpps[MAX_ROUNDS], gbps[MAX_ROUNDS], cpu_gb[MAX_ROUNDS], ns_frame[MAX_ROUNDS];
	double cores[MAX_ROUNDS]; /* sender threads' CPU-s per wall s */
	double qmpps[MAXQ][MAX_ROUNDS];
	uint64_t other_queue; /* frames counted on a queue the row does not send on (all rounds) */
};

struct args {
	double secs;
	uint64_t rounds, flows;
	bool json, quick;
};

/* ---- measuring: what every row shares ---- */

struct window {
	uint64_t frames, bytes, q[MAXQ];
	double wall, cpu;
};

static double thread_cpu_s(pthread_t t)
{
	clockid_t c;
	struct timespec ts;

	if (pthread_getcpuclockid(t, &c) || clock_gettime(c, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void snap(int cnt_fd, const pthread_t *tid, uint32_t n, struct window *w)
{
	if (xskbed_drop_count(cnt_fd, &w->frames, &w->bytes))
		bench_die(BENCH_EXIT_FAIL, errno, "peer counters");
	for (uint32_t q = 0; q < MAXQ; q++)
		if (xskbed_drop_queue_count(cnt_fd, q, &w->q[q]))
			bench_die(BENCH_EXIT_FAIL, errno, "peer queue counters");
	w->cpu = 0;
	for (uint32_t i = 0; i < n; i++)
		w->cpu += thread_cpu_s(tid[i]);
	w->wall = bench_now();
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Warm up, then measure `secs` of the running senders into round r of row w. */
static void measure(struct row *w, unsigned r, double secs, int cnt_fd, const pthread_t *tid, uint32_t n)
{
	struct window a, b;
	double dt, frames, bytes;

	sleep_s(WARMUP_S);
	snap(cnt_fd, tid, n, &a);
	sleep_s(secs);
	snap(cnt_fd, tid, n, &b);
	dt = b.wall - a.wall;
	frames = (double)(b.frames - a.frames);
	bytes = (double)(b.bytes - a.bytes);
	w->mpps[r] = frames / dt / 1e6;
	w->gbps[r] = bytes * 8 / dt / 1e9;
	w->cpu_gb[r] = bytes ? (b.cpu - a.cpu) / (bytes / 1e9) : 0;
	w->ns_frame[r] = frames ? (b.cpu - a.cpu) / frames * 1e9 : 0;
	w->cores[r] = (b.cpu - a.cpu) / dt;
	for (uint32_t q = 0; q < MAXQ; q++) {
		w->qmpps[q][r] = (double)(b.q[q] - a.q[q]) / dt / 1e6;
		if (q >= w->queues)
			w->other_queue += b.q[q] - a.q[q];
	}
}

static void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* ---- the raw AF_XDP senders (libxdp xsk API) ---- */

struct raw_q {
	struct xsk_socket *xsk;
	struct xsk_ring_prod tx, fill;
	struct xsk_ring_cons cq;
	uint64_t free_[QCHUNKS]; /* chunk addresses of this queue's part not in flight */
	uint32_t nfree, len;
	int cpu;
	pthread_t tid;
	_Atomic bool *stop;
};

struct raw_set {
	uint32_t n;
	enum umem u;
	struct xsk_umem *umem[MAXQ];
	void *area[MAXQ];
	size_t area_len;
	struct raw_q q[MAXQ];
	_Atomic bool stop;
};

static void *raw_thread(void *arg)
{
	struct raw_q *x = arg;
	int fd = xsk_socket__fd(x->xsk);

	pin_self(x->cpu);
	while (!atomic_load_explicit(x->stop, memory_order_relaxed)) {
		uint32_t idx, n = x->nfree < BATCH ? x->nfree : BATCH;

		n = n ? xsk_ring_prod__reserve(&x->tx, n, &idx) : 0;
		for (uint32_t i = 0; i < n; i++) {
			struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->tx, idx + i);

			d->addr = x->free_[--x->nfree];
			d->len = x->len;
			d->options = 0;
		}
		xsk_ring_prod__submit(&x->tx, n);
		/* Copy mode transmits inside sendto(): always kick. */
		sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
		n = xsk_ring_cons__peek(&x->cq, 2 * RING, &idx);
		for (uint32_t i = 0; i < n; i++)
			x->free_[x->nfree++] = *xsk_ring_cons__comp_addr(&x->cq, idx + i);
		xsk_ring_cons__release(&x->cq, n);
	}
	return NULL;
}

/*
 * Socket of queue q: the first on a UMEM takes the UMEM's own fill and
 * completion rings (xsk_socket__create); a second on the shared UMEM gets
 * a pair of its own (xsk_socket__create_shared, XDP_SHARED_UMEM).  The
 * queue is released a moment after the last row's socket on it closed:
 * -EBUSY until then.
 */
static void raw_sock(struct raw_set *s, uint32_t q, const char *ifname)
{
	const struct xsk_socket_config cfg = {
		.tx_size = RING,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD, /* TX only: no XDP program */
		.bind_flags = XDP_COPY | XDP_USE_NEED_WAKEUP,
	};
	struct raw_q *x = &s->q[q];
	uint32_t budget = RING;
	int err;

	for (int waited_ms = 0;; waited_ms += 10) {
		if (s->u == U_SHARED && q > 0)
			err = xsk_socket__create_shared(&x->xsk, ifname, q, s->umem[0], NULL, &x->tx, &x->fill, &x->cq,
							&cfg);
		else
			err = xsk_socket__create(&x->xsk, ifname, q, s->umem[q], NULL, &x->tx, &cfg);
		if (err != -EBUSY || waited_ms >= 2000)
			break;
		usleep(10000);
	}
	if (err)
		bench_die(BENCH_EXIT_SKIP, -err, "AF_XDP socket on queue %u (%s UMEM)", q, umem_name[s->u]);
	/* The per-call budget the libgso backend asks for too (default 32 frames per sendto). */
	setsockopt(xsk_socket__fd(x->xsk), SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &budget, sizeof(budget));
}

static void raw_open(struct raw_set *s, uint32_t n, enum umem u, int cpu, const uint8_t *frame, uint32_t len)
{
	const struct xsk_umem_config uc = { .fill_size = 64, .comp_size = 2 * RING, .frame_size = CHUNK };
	uint32_t areas = u == U_SHARED ? 1 : n;
	char ifname[IF_NAMESIZE] = "xa";

	memset(s, 0, sizeof(*s));
	s->n = n;
	s->u = u;
	/* Shared: one area for both queues; per-queue: one each.  The same chunks per queue either way. */
	s->area_len = (size_t)QCHUNKS * CHUNK * (u == U_SHARED ? n : 1);
	for (uint32_t a = 0; a < areas; a++) {
		s->area[a] = mmap(NULL, s->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
				  -1, 0);
		if (s->area[a] == MAP_FAILED)
			bench_die(BENCH_EXIT_FAIL, errno, "UMEM area");
		int err = xsk_umem__create(&s->umem[a], s->area[a], s->area_len, &s->q[a].fill, &s->q[a].cq, &uc);
		if (err)
			bench_die(BENCH_EXIT_SKIP, -err, "xsk_umem__create");
	}
	for (uint32_t q = 0; q < n; q++) {
		struct raw_q *x = &s->q[q];
		uint8_t *base = u == U_SHARED ? s->area[0] : s->area[q];
		uint64_t first = u == U_SHARED ? (uint64_t)q * QCHUNKS : 0;

		x->len = len;
		x->cpu = q ? (int)q : cpu;
		x->stop = &s->stop;
		for (uint64_t c = 0; c < QCHUNKS; c++) {
			uint64_t addr = (first + c) * CHUNK;

			memcpy(base + addr, frame, len);
			x->free_[x->nfree++] = addr;
		}
		raw_sock(s, q, ifname);
	}
}

static void raw_close(struct raw_set *s)
{
	for (uint32_t q = 0; q < s->n; q++)
		xsk_socket__delete(s->q[q].xsk);
	for (uint32_t a = 0; a < MAXQ; a++)
		if (s->umem[a]) {
			xsk_umem__delete(s->umem[a]);
			munmap(s->area[a], s->area_len);
		}
}

static void run_raw(struct row *w, unsigned r, const struct args *a, int cnt_fd, const uint8_t *frame)
{
	static struct raw_set s;
	pthread_t tid[MAXQ];

	raw_open(&s, w->queues, w->u, w->cpu, frame, w->frame);
	for (uint32_t q = 0; q < w->queues; q++)
		if (pthread_create(&s.q[q].tid, NULL, raw_thread, &s.q[q]))
			bench_die(BENCH_EXIT_FAIL, errno, "thread");
	for (uint32_t q = 0; q < w->queues; q++)
		tid[q] = s.q[q].tid;
	measure(w, r, a->secs, cnt_fd, tid, w->queues);
	atomic_store(&s.stop, true);
	for (uint32_t q = 0; q < w->queues; q++)
		pthread_join(s.q[q].tid, NULL);
	raw_close(&s);
}

/* ---- libgso: a port, one engine per queue on its own worker ---- */

/* The payload of every datagram: ordinary memory, never changed while sent. */
static uint8_t payload[GSO_MAX_IP_LEN];

struct load {
	uint32_t gso, len; /* payload per datagram, per super-segment */
};

/* What a worker's callback needs; one per queue. */
struct pq {
	const struct load *ld;
	_Atomic bool have_tid;
	pthread_t tid;
};

/* On worker `queue`: learn its thread (for its CPU clock), and keep every flow fed. */
static void port_event(void *ctx, uint32_t queue, struct gso_engine *e, const struct gso_engine_event *ev)
{
	struct pq *q = &((struct pq *)ctx)[queue];

	(void)e;
	if (!atomic_load_explicit(&q->have_tid, memory_order_relaxed)) {
		q->tid = pthread_self();
		atomic_store_explicit(&q->have_tid, true, memory_order_release);
	}
	if (ev->type == GSO_EV_DGRAM_SENT)
		gso_dgram__send(ev->dgram, payload, q->ld->len, q->ld->gso, 0); /* -EAGAIN: the flow is full anyway */
}

static struct load make_load(uint32_t frame, const struct gso_tmpl *t)
{
	struct load ld = { .gso = frame - t->hdr_len };
	uint32_t nseg = SEGS;

	if (nseg > GSO_UDP_MAX_SEGS)
		nseg = GSO_UDP_MAX_SEGS;
	/* An IP datagram's worth at most (1472-byte datagrams: 44). */
	if (nseg > (GSO_MAX_IP_LEN - 28) / ld.gso)
		nseg = (GSO_MAX_IP_LEN - 28) / ld.gso;
	ld.len = ld.gso * nseg;
	return ld;
}

static struct gso_port *port_open(const struct row *w, const struct nsbed *bed, struct pq *pq)
{
	const int cpus[MAXQ] = { w->cpu, 1 };
	/* Copy mode, whole frames (the cheaper copy-mode path), a receive ring: the port steers receive sides. */
	GSO_OPTS(gso_xsk_opts, xo, .mode = GSO_XSK_MODE_COPY, .flags = GSO_XSK_F_NO_SG, .rx_size = 1024);
	GSO_OPTS(gso_engine_opts, eo, .max_flows = w->flows);
	GSO_OPTS(gso_port_opts, po, .queues = w->queues, .cpus = cpus, .ncpus = w->queues, .xsk = &xo, .engine = &eo,
		 .on_event = port_event, .ctx = pq);
	struct gso_port *p;
	int err = gso_port__open(&p, bed->ifindex[0], &po);

	if (err)
		bench_die(BENCH_EXIT_SKIP, -err, "gso_port__open (%u queues)", w->queues);
	return p;
}

/*
 * Placement by gso_port__queue_of() of each flow's source port from
 * BASE_PORT on; the rows of one flow per queue take the first port that
 * lands on each queue.  Returns each flow's port and queue, and the flows
 * per queue.
 */
static void place(const struct row *w, const struct gso_port *p, const struct nsbed *bed, uint16_t *port_of,
		  uint32_t *queue_of, uint32_t *per_q)
{
	struct gso_tmpl t;
	GSO_OPTS(gso_flow, f);

	for (uint32_t i = 0, sp = BASE_PORT; i < w->flows; sp++) {
		int q;

		if (sp > 65535)
			bench_die(BENCH_EXIT_FAIL, 0, "placement: ran out of ports");
		xskbed_udp_tmpl(bed, (uint16_t)sp, 9, &t);
		if (gso_flow__reply_of(&f, &t) || (q = gso_port__queue_of(p, &f)) < 0)
			bench_die(BENCH_EXIT_FAIL, 0, "gso_port__queue_of");
		if (w->flows == w->queues && per_q[q])
			continue;
		port_of[i] = (uint16_t)sp;
		queue_of[i++] = (uint32_t)q;
		per_q[q]++;
	}
}

static void run_port(struct row *w, unsigned r, const struct args *a, int cnt_fd, const struct nsbed *bed)
{
	static struct pq pq[MAXQ];
	static uint16_t port_of[MAX_FLOWS];
	static uint32_t queue_of[MAX_FLOWS];
	uint32_t per_q[MAXQ] = { 0 };
	pthread_t tid[MAXQ];
	struct gso_port *p;
	struct gso_tmpl t;
	struct load ld;

	xskbed_udp_tmpl(bed, BASE_PORT, 9, &t);
	ld = make_load(w->frame, &t);
	memset(pq, 0, sizeof(pq));
	for (uint32_t q = 0; q < MAXQ; q++)
		pq[q].ld = &ld;
	p = port_open(w, bed, pq);
	place(w, p, bed, port_of, queue_of, per_q);
	/* Before start the engines are the caller's: open the flows and queue the starting load here. */
	for (uint32_t i = 0; i < w->flows; i++) {
		uint32_t depth = (OUTSTANDING + per_q[queue_of[i]] - 1) / per_q[queue_of[i]];
		GSO_OPTS(gso_dgram_opts, o, .tmpl = &t, .queue_len = 2 * depth < 4 ? 4 : 2 * depth);
		struct gso_dgram *d;
		int err;

		xskbed_udp_tmpl(bed, port_of[i], 9, &t);
		err = gso_dgram__open(&d, gso_port__engine(p, queue_of[i]), &o);
		if (err)
			bench_die(BENCH_EXIT_FAIL, -err, "gso_dgram__open (flow %u)", i);
		for (uint32_t k = 0; k < depth; k++)
			if ((err = gso_dgram__send(d, payload, ld.len, ld.gso, 0)))
				bench_die(BENCH_EXIT_FAIL, -err, "gso_dgram__send");
	}
	int err = gso_port__start(p);
	if (err)
		bench_die(BENCH_EXIT_FAIL, -err, "gso_port__start");
	/* Every worker has run its callback at least once (its thread is known). */
	for (uint32_t q = 0; q < w->queues; q++) {
		while (!atomic_load_explicit(&pq[q].have_tid, memory_order_acquire))
			sleep_s(0.001);
		tid[q] = pq[q].tid;
	}
	measure(w, r, a->secs, cnt_fd, tid, w->queues);
	gso_port__stop(p);
	gso_port__destroy(p);
}

/* ---- output ---- */

/* The row of these parameters with queue 0 on CPU 0, or on CPU 1 with find1(). */
static const struct row *find_on(const struct row *rows, unsigned n, enum method m, enum umem u, uint32_t queues,
				 uint32_t flows, uint32_t frame, int cpu)
{
	for (unsigned i = 0; i < n; i++)
		if (rows[i].m == m && rows[i].u == u && rows[i].queues == queues && rows[i].flows == flows &&
		    rows[i].frame == frame && rows[i].cpu == cpu)
			return &rows[i];
	return NULL;
}

static const struct row *find(const struct row *rows, unsigned n, enum method m, enum umem u, uint32_t queues,
			      uint32_t flows, uint32_t frame)
{
	return find_on(rows, n, m, u, queues, flows, frame, 0);
}

/* 2 queues over the sum of 1 queue on CPU 0 and 1 queue on CPU 1: what the two CPUs give apart. */
static double ratio_sum(const struct row *x, const struct row *y0, const struct row *y1, unsigned rounds)
{
	return x && y0 && y1 ? bench_median(x->mpps, rounds) /
				       (bench_median(y0->mpps, rounds) + bench_median(y1->mpps, rounds))
			     : 0;
}

static double ratio(const struct row *x, const struct row *y, unsigned rounds)
{
	return x && y ? bench_median(x->mpps, rounds) / bench_median(y->mpps, rounds) : 0;
}

/* Per-frame sender CPU of y over x's: 1 = going to more queues costs nothing per frame. */
static double cost_ratio(const struct row *x, const struct row *y, unsigned rounds)
{
	return x && y ? bench_median(y->ns_frame, rounds) / bench_median(x->ns_frame, rounds) : 0;
}

static const char *cpus_name(const struct row *w)
{
	return w->queues == 2 ? "0,1" : w->cpu ? "1" : "0";
}

static void print_table(const struct row *rows, unsigned n, const struct args *a)
{
	printf("veth with 2 TX/2 RX queues, AF_XDP in copy mode, peer drops in XDP and counts per queue;\n"
	       "sender thread of queue q pinned to CPU q (cpus); %lu round%s x %.2f s per row, medians; frames/s at the peer\n",
	       (unsigned long)a->rounds, a->rounds == 1 ? "" : "s", a->secs);
	for (int z = 0; z < 2; z++) {
		uint32_t frame = z ? 1514 : 64;

		printf("\n%u-byte frames\n%-8s %6s %4s %9s %6s %9s %8s %8s %8s %9s %9s %6s\n", frame, "method", "queues",
		       "cpus", "umem", "flows", "Mframes/s", "q0", "q1", "Gbit/s", "CPU-s/GB", "ns/frame", "cores");
		for (unsigned i = 0; i < n; i++) {
			const struct row *w = &rows[i];
			char other[64] = "";

			if (w->frame != frame)
				continue;
			/* Frames the kernel itself sent (IPv6 neighbour discovery and such) land on any queue. */
			if (w->other_queue)
				snprintf(other, sizeof(other), "  (%lu on an unused queue)", (unsigned long)w->other_queue);
			printf("%-8s %6u %4s %9s %6u %9.3f %8.3f %8.3f %8.2f %9.3f %9.1f %6.2f%s\n", method_name[w->m],
			       w->queues, cpus_name(w), umem_name[w->u], w->flows, bench_median(w->mpps, (unsigned)a->rounds),
			       bench_median(w->qmpps[0], (unsigned)a->rounds), bench_median(w->qmpps[1], (unsigned)a->rounds),
			       bench_median(w->gbps, (unsigned)a->rounds), bench_median(w->cpu_gb, (unsigned)a->rounds),
			       bench_median(w->ns_frame, (unsigned)a->rounds), bench_median(w->cores, (unsigned)a->rounds),
			       other);
		}
		unsigned rd = (unsigned)a->rounds;
		printf("2 queues vs 1 queue on CPU 0 + 1 queue on CPU 1 (frames/s): port %.2fx, raw %.2fx\n",
		       ratio_sum(find(rows, n, M_PORT, U_PER_QUEUE, 2, 2, frame), find(rows, n, M_PORT, U_PER_QUEUE, 1, 1, frame),
				 find_on(rows, n, M_PORT, U_PER_QUEUE, 1, 1, frame, 1), rd),
		       ratio_sum(find(rows, n, M_RAW, U_PER_QUEUE, 2, 2, frame), find(rows, n, M_RAW, U_PER_QUEUE, 1, 1, frame),
				 find_on(rows, n, M_RAW, U_PER_QUEUE, 1, 1, frame, 1), rd));
		printf("2 queues vs 1 (frames/s): port %.2fx, raw %.2fx (goal >= 1.8x); shared vs per-queue UMEM: %.2fx\n"
		       "port per-frame CPU, 2 queues over 1: %.2f; %lu flows vs 1 per queue: %.2fx (1 queue), %.2fx (2 queues)\n",
		       ratio(find(rows, n, M_PORT, U_PER_QUEUE, 2, 2, frame), find(rows, n, M_PORT, U_PER_QUEUE, 1, 1, frame), rd),
		       ratio(find(rows, n, M_RAW, U_PER_QUEUE, 2, 2, frame), find(rows, n, M_RAW, U_PER_QUEUE, 1, 1, frame), rd),
		       ratio(find(rows, n, M_RAW, U_SHARED, 2, 2, frame), find(rows, n, M_RAW, U_PER_QUEUE, 2, 2, frame), rd),
		       cost_ratio(find(rows, n, M_PORT, U_PER_QUEUE, 2, 2, frame),
				  find(rows, n, M_PORT, U_PER_QUEUE, 1, 1, frame), rd),
		       (unsigned long)a->flows,
		       ratio(find(rows, n, M_PORT, U_PER_QUEUE, 1, (uint32_t)a->flows, frame),
			     find(rows, n, M_PORT, U_PER_QUEUE, 1, 1, frame), rd),
		       ratio(find(rows, n, M_PORT, U_PER_QUEUE, 2, (uint32_t)a->flows, frame),
			     find(rows, n, M_PORT, U_PER_QUEUE, 2, 2, frame), rd));
	}
	printf("\ncores: sender threads' CPU-s per second (below 1 per queue: the CPU was shared with\n"
	       "someone, e.g. ksoftirqd or other programs); ns/frame: their CPU per frame at the peer\n");
}

static void print_json(const struct row *rows, unsigned n, const struct args *a)
{
	struct bench_json j;
	unsigned rounds = (unsigned)a->rounds;

	for (unsigned i = 0; i < n; i++) {
		const struct row *w = &rows[i];

		bench_json_begin(&j, stdout);
		bench_json_str(&j, "method", method_name[w->m]);
		bench_json_str(&j, "mode", "copy");
		bench_json_str(&j, "umem", umem_name[w->u]);
		bench_json_str(&j, "cpus", cpus_name(w));
		bench_json_u64(&j, "queues", w->queues);
		bench_json_u64(&j, "frame_bytes", w->frame);
		bench_json_u64(&j, "flows", w->flows);
		bench_json_dbl(&j, "mpps", bench_median(w->mpps, rounds));
		bench_json_dbl(&j, "q0_mpps", bench_median(w->qmpps[0], rounds));
		bench_json_dbl(&j, "q1_mpps", bench_median(w->qmpps[1], rounds));
		bench_json_dbl(&j, "gbps", bench_median(w->gbps, rounds));
		bench_json_dbl(&j, "cpu_s_per_gb", bench_median(w->cpu_gb, rounds));
		bench_json_dbl(&j, "cpu_ns_per_frame", bench_median(w->ns_frame, rounds));
		bench_json_dbl(&j, "sender_cores", bench_median(w->cores, rounds));
		bench_json_u64(&j, "frames_on_unused_queue", w->other_queue);
		bench_json_u64(&j, "rounds", rounds);
		bench_json_dbl(&j, "seconds", a->secs);
		bench_json_end(&j);
	}
	bench_json_begin(&j, stdout);
	for (int z = 0; z < 2; z++) {
		uint32_t f = z ? 1514 : 64;
		char k[64];

		snprintf(k, sizeof(k), "scale_2_vs_1_%uB", f);
		bench_json_dbl(&j, k, ratio(find(rows, n, M_PORT, U_PER_QUEUE, 2, 2, f),
					   find(rows, n, M_PORT, U_PER_QUEUE, 1, 1, f), rounds));
	}
	for (int z = 0; z < 2; z++) {
		uint32_t f = z ? 1514 : 64;
		char k[64];

		snprintf(k, sizeof(k), "scale_2_vs_cpu0_plus_cpu1_%uB", f);
		bench_json_dbl(&j, k, ratio_sum(find(rows, n, M_PORT, U_PER_QUEUE, 2, 2, f),
						find(rows, n, M_PORT, U_PER_QUEUE, 1, 1, f),
						find_on(rows, n, M_PORT, U_PER_QUEUE, 1, 1, f, 1), rounds));
		snprintf(k, sizeof(k), "raw_scale_2_vs_cpu0_plus_cpu1_%uB", f);
		bench_json_dbl(&j, k, ratio_sum(find(rows, n, M_RAW, U_PER_QUEUE, 2, 2, f),
						find(rows, n, M_RAW, U_PER_QUEUE, 1, 1, f),
						find_on(rows, n, M_RAW, U_PER_QUEUE, 1, 1, f, 1), rounds));
		snprintf(k, sizeof(k), "cpu_per_frame_2_vs_1_%uB", f);
		bench_json_dbl(&j, k, cost_ratio(find(rows, n, M_PORT, U_PER_QUEUE, 2, 2, f),
						find(rows, n, M_PORT, U_PER_QUEUE, 1, 1, f), rounds));
	}
	for (int z = 0; z < 2; z++) {
		uint32_t f = z ? 1514 : 64;
		const struct row *raw1 = find(rows, n, M_RAW, U_PER_QUEUE, 1, 1, f);
		char k[64];

		snprintf(k, sizeof(k), "raw_scale_2_vs_1_%uB", f);
		bench_json_dbl(&j, k, ratio(find(rows, n, M_RAW, U_PER_QUEUE, 2, 2, f), raw1, rounds));
		snprintf(k, sizeof(k), "shared_vs_per_queue_%uB", f);
		bench_json_dbl(&j, k, ratio(find(rows, n, M_RAW, U_SHARED, 2, 2, f),
					   find(rows, n, M_RAW, U_PER_QUEUE, 2, 2, f), rounds));
		for (uint32_t q = 1; q <= MAXQ; q++) {
			snprintf(k, sizeof(k), "flows_%lu_vs_1_%uq_%uB", (unsigned long)a->flows, q, f);
			bench_json_dbl(&j, k, ratio(find(rows, n, M_PORT, U_PER_QUEUE, q, (uint32_t)a->flows, f),
						   find(rows, n, M_PORT, U_PER_QUEUE, q, q, f), rounds));
		}
	}
	bench_json_end(&j);
}

/* ---- main ---- */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bench_scale [--quick] [--json] [--seconds S] [--rounds N] [--flows N]\n"
		"Scaling over 2 queues and 2 cores on a veth with 2 TX/2 RX queues whose peer drops\n"
		"in XDP and counts per queue, AF_XDP in copy mode, 64- and 1514-byte frames:\n"
		"raw libxdp sockets with 1 queue, 2 queues with a UMEM each, 2 queues sharing one UMEM\n"
		"(XDP_SHARED_UMEM); libgso's port (an engine per queue on a worker pinned to CPU q) with\n"
		"one datagram flow per queue and with --flows flows placed over the queues.\n"
		"Needs root: creates two network namespaces for the run (removed at exit, also on\n"
		"signals); the host's interfaces are never touched.  The drop program is looked up in\n"
		"$GSO_BPF_DIR, else <program dir>/../bpf/xdp_drop.bpf.o.  Needs 2 CPUs (0 and 1).\n"
		"  --quick       one short round (a smoke test; numbers are rough)\n"
		"  --json        one JSON object per row, then one with the scaling ratios\n"
		"  --seconds S   time per row per round (default 1)\n"
		"  --rounds N    rounds, rows interleaved (default 3, at most %d)\n"
		"  --flows N     flows of the many-flows rows (default 10000, %u..%u)\n",
		MAX_ROUNDS, MAXQ + 1, MAX_FLOWS);
}

static void parse_args(int argc, char **argv, struct args *a)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },         { "json", no_argument, NULL, 'j' },
		{ "seconds", required_argument, NULL, 's' }, { "rounds", required_argument, NULL, 'r' },
		{ "flows", required_argument, NULL, 'f' },   { "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int o;

	*a = (struct args){ .secs = 1, .rounds = 3, .flows = 10000 };
	while ((o = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (o) {
		case 'q': a->quick = true; break;
		case 'j': a->json = true; break;
		case 's':
			if (bench_parse_double(optarg, &a->secs) || a->secs < 0.01 || a->secs > 60)
				bench_die(BENCH_EXIT_USAGE, 0, "--seconds (0.01..60)");
			break;
		case 'r':
			if (bench_parse_u64(optarg, &a->rounds) || !a->rounds || a->rounds > MAX_ROUNDS)
				bench_die(BENCH_EXIT_USAGE, 0, "--rounds (1..%d)", MAX_ROUNDS);
			break;
		case 'f':
			if (bench_parse_u64(optarg, &a->flows) || a->flows <= MAXQ || a->flows > MAX_FLOWS)
				bench_die(BENCH_EXIT_USAGE, 0, "--flows (%u..%u)", MAXQ + 1, MAX_FLOWS);
			break;
		case 'h': usage(stdout); exit(BENCH_EXIT_OK);
		default: usage(stderr); exit(BENCH_EXIT_USAGE);
		}
	}
	if (optind != argc) {
		usage(stderr);
		exit(BENCH_EXIT_USAGE);
	}
	if (a->quick) {
		a->secs = 0.2;
		a->rounds = 1;
	}
}

int main(int argc, char **argv)
{
	static struct row rows[32];
	static uint8_t frame[2][2048];
	struct nsbed bed;
	struct args a;
	unsigned n = 0;
	char err[256];
	int cnt_fd;

	parse_args(argc, argv, &a);
	if (geteuid())
		bench_die(BENCH_EXIT_SKIP, EPERM, "needs root (it creates network namespaces and AF_XDP sockets)");
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) || !CPU_ISSET(0, &set) || !CPU_ISSET(1, &set))
		bench_die(BENCH_EXIT_SKIP, 0, "needs CPUs 0 and 1");

	for (int z = 0; z < 2; z++) {
		uint32_t f = z ? 1514 : 64;

		rows[n++] = (struct row){ .m = M_RAW, .u = U_PER_QUEUE, .queues = 1, .flows = 1, .frame = f };
		/* CPUs of one machine differ (a VM's vCPUs): queue 0 alone on CPU 1 too, for the sum of both. */
		rows[n++] = (struct row){ .m = M_RAW, .u = U_PER_QUEUE, .queues = 1, .flows = 1, .frame = f, .cpu = 1 };
		rows[n++] = (struct row){ .m = M_RAW, .u = U_PER_QUEUE, .queues = 2, .flows = 2, .frame = f };
		rows[n++] = (struct row){ .m = M_RAW, .u = U_SHARED, .queues = 2, .flows = 2, .frame = f };
		for (uint32_t q = 1; q <= MAXQ; q++) {
			rows[n++] = (struct row){ .m = M_PORT, .queues = q, .flows = q, .frame = f };
			if (q == 1)
				rows[n++] = (struct row){ .m = M_PORT, .queues = 1, .flows = 1, .frame = f, .cpu = 1 };
			rows[n++] = (struct row){ .m = M_PORT, .queues = q, .flows = (uint32_t)a.flows, .frame = f };
		}
	}

	int e = xskbed_create(&bed, "scale", MAXQ);
	if (e)
		bench_die(BENCH_EXIT_USAGE, -e, "test-bed");
	if (xskbed_attach_drop(&bed, 1, &cnt_fd, err, sizeof(err)))
		bench_die(BENCH_EXIT_SKIP, 0, "XDP drop program: %s", err);
	/* Threads made from here on start in side 0, where the sockets are. */
	if (nsbed_enter(&bed, 0))
		bench_die(BENCH_EXIT_FAIL, errno, "enter side a");
	for (int z = 0; z < 2; z++) {
		struct gso_tmpl t;
		struct gso_frame out = { .buf = frame[z], .cap = sizeof(frame[z]) };
		uint32_t len = z ? 1514 : 64;

		xskbed_udp_tmpl(&bed, BASE_PORT, 9, &t);
		struct gso_extent ext = { payload, len - t.hdr_len };
		struct gso_super s = { &t, &ext, 1 };
		GSO_OPTS(gso_seg_opts, so, .mss = len - t.hdr_len);
		if (gso_segment(&s, &so, &out, 1) != 1 || out.len != len)
			bench_die(BENCH_EXIT_FAIL, EINVAL, "frame");
	}

	for (unsigned r = 0; r < a.rounds; r++)
		for (unsigned k = 0; k < n; k++) {
			struct row *w = &rows[(k + r) % n];

			if (w->m == M_RAW)
				run_raw(w, r, &a, cnt_fd, frame[w->frame == 1514]);
			else
				run_port(w, r, &a, cnt_fd, &bed);
		}
	if (a.json)
		print_json(rows, n, &a);
	else
		print_table(rows, n, &a);
	nsbed_destroy(&bed);
	return BENCH_EXIT_OK;
}
