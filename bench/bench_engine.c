/*
 * What the transmit engine (<gso/engine.h>) costs on top of the parts it
 * drives: the same UDP load sent two ways in one run, side by side, on a
 * veth made for the run (two namespaces, removed at exit; needs root)
 * whose peer drops every frame in XDP and counts it (xskbed_attach_drop):
 *
 *   parts   the bare device loop of bench_xsk_tx: gso_dev__submit() of a
 *           prepared gso_tx, one super-segment per call, kick and reap on
 *           -EAGAIN / -ENOBUFS, the IP ID advanced by hand
 *           (gso_tmpl__set_ip_id) as a user of the parts must;
 *   engine  the same super-segments through the engine: datagram flows,
 *           unpaced (rate 0), gso_dgram__send() of the same payload and
 *           gso_size, refilled from the GSO_EV_DGRAM_SENT callback, driven
 *           by gso_engine__poll() on the same thread.
 *
 * --flows N spreads the engine's load over N flows (sends go round robin;
 * each flow has its own source port).  Unpaced flows are always due, so
 * the scheduler serves them from its round-robin lists and its heap stays
 * empty; the heap holds flows whose next burst waits.  --rate R paces the
 * flows (R over all of them together) in virtual time (opts.clock; the
 * clock jumps to the engine's next deadline whenever nothing is due), so
 * that every burst waits in the heap once and the run never idles: that
 * is the O(log n) case.  Paced, the engine sends one super-segment per
 * pass; unpaced with one flow, one per submit, as the parts loop does (the
 * scheduler holds one burst per flow); unpaced with many flows, batches of
 * GSO_ENGINE_DEF_BATCH per submit (fewer kicks): the "engine:" line says
 * which.
 *
 * Each mode has its own AF_XDP device on its own veth queue (0: parts, 1:
 * engine), both in copy mode (a veth has no zero-copy) with
 * GSO_XSK_F_NO_SG: the engine's payload is ordinary memory, which is
 * copied into whole frames whatever the device could reference, so the
 * parts send from the same memory (gso_tx.data, not a device buffer) and
 * both devices do the same work frame for frame; whole frames are also
 * the cheaper copy-mode path in total CPU (GSO_XSK_F_NO_SG in xsk.h).
 * Checksums as the device takes them (a metadata request where the kernel
 * carries it), the same for both.
 *
 * Two frame sizes: 64 and 1514 bytes, counted from the Ethernet header to
 * the end of the UDP payload, FCS not included (as bench_xsk_pps counts):
 * IPv4 + UDP, 22 and 1472 payload bytes per datagram.  A super-segment
 * holds --segs datagrams (64), fewer where UDP or the IP length limit says
 * so (1472-byte datagrams: 44, an IP datagram's worth).  Everything runs
 * on one CPU (--cpu): the sender and the peer's receive softirq that its
 * sends raise.  Rounds interleave sizes and modes (who goes first rotates)
 * so that noise hits both alike.  Printed per size, medians over rounds:
 * Mpps of frames counted at the peer, thread CPU (CLOCK_THREAD_CPUTIME_ID,
 * user + system: copy mode transmits inside sendto) per frame the device
 * took, user CPU per frame (getrusage: tick-sampled, rough), and
 * engine/parts CPU per frame, as a ratio of medians and as the median of
 * each round's ratio.  The project's goal is <= 1.05; printed, not
 * asserted.
 *
 * Instruction counts, repeatable where timing on a shared machine is not:
 * --count N sends N super-segments per mode and size after a warm-up,
 * then exits.  The counted loops run inside be_count_parts() and
 * be_count_engine(); when the build found <valgrind/callgrind.h>, each is
 * bracketed by client requests (instrumentation on, counters zeroed, a
 * dump named "<mode> <size>B flows=<N>[ paced]" after), so one run writes
 * one file per region, numbered in the order the program prints them
 * ("count: ... frames").  Ir per frame = the file's summary / those
 * frames; user space only (callgrind does not see the kernel).  1 vs
 * 10,000 flows, 64-byte frames (B is the build directory, e.g. build):
 *
 *   valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/be-f1 \
 *       $B/bench/bench_engine --count 20000 --size 64 --flows 1
 *   valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/be-f10k \
 *       $B/bench/bench_engine --count 20000 --size 64 --flows 10000
 *   awk '/^desc: Trigger/ {d = $0} /^summary:/ {print FILENAME ": " $2 " Ir, " d}' \
 *       /tmp/be-f1.[0-9]* /tmp/be-f10k.[0-9]*
 *
 * (.1 is the parts region, .2 the engine's.)  The heap's case: the same
 * with --rate 10G --only engine (one file, .1).  Where the engine's Ir go,
 * inclusive, per function:
 *
 *   callgrind_annotate --inclusive=yes --auto=no /tmp/be-f10k.2 | head -60
 *
 * A build without callgrind.h has no client requests: collect by function
 * instead, one mode per run, e.g. --only engine with
 * --toggle-collect=be_count_engine in place of --instr-atstart=no (the
 * totals then cover that function only, warm-up excluded).
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/resource.h>

#include <gso/gso.h>
#include <gso/engine.h>
#include <gso/dev.h>
#include <gso/xsk.h>

#include "cpu.h"
#include "util.h"
#include "benchbed.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BE_CALLGRIND 1
#endif
#endif
#ifndef BE_CALLGRIND
#define CALLGRIND_START_INSTRUMENTATION do { } while (0)
#define CALLGRIND_STOP_INSTRUMENTATION do { } while (0)
#define CALLGRIND_ZERO_STATS do { } while (0)
#define CALLGRIND_DUMP_STATS_AT(s) do { (void)(s); } while (0)
#endif

enum { M_PARTS, M_ENGINE, M_COUNT };
static const char *const mname[M_COUNT] = { "parts", "engine" };

#define MAX_ROUNDS 64
#define MAX_SIZES 2
#define MAX_FLOWS 60000u   /* source ports BASE_PORT .. BASE_PORT + MAX_FLOWS - 1 */
#define BASE_PORT 1024u
#define DEF_SEGS 64u
#define OUTSTANDING 64u    /* super-segments queued in the engine at least (one flow: its whole queue) */
#define DRAIN_S 5.0
#define ETH_UDP4_HDR (14 + 20 + 8) /* wire header bytes of every datagram */

/* One frame size's load. */
struct load {
	uint32_t frame;  /* L2 bytes, Ethernet header on, no FCS */
	uint32_t gso;    /* UDP payload per datagram */
	uint32_t nseg;   /* datagrams per super-segment */
	uint32_t len;    /* super-segment payload */
};

struct parts {
	struct gso_dev *dev;
	struct gso_tmpl t;
	uint16_t ip_id;  /* of the next datagram */
};

struct eng {
	struct gso_engine *e;
	struct gso_dgram **fl;
	uint32_t n, cursor;
	bool virt;               /* paced flows in virtual time (--rate) */
	uint64_t vnow;           /* the virtual clock, ns */
	uint64_t rate;           /* of all flows together, wire bytes/s (0: unpaced) */
	uint32_t depth;          /* super-segments per flow queued when a run starts */
	const struct load *ld;   /* what sends send */
	bool refill;             /* a SENT event sends the next one */
	uint64_t sent, dropped;  /* super-segments, from the events */
};

/* The payload of every datagram: ordinary memory, never changed while sent. */
static uint8_t payload[GSO_MAX_IP_LEN];

/* ---- the parts ---- */

/* Send until CLOCK_MONOTONIC `until` s (0: no limit) or `max` super-segments; returns how many. */
static uint64_t parts_loop(struct parts *p, const struct load *ld, double until, uint64_t max)
{
	const struct gso_tx tx = { .tmpl = &p->t, .data = payload, .len = ld->len, .mss = ld->gso,
				   .ipid = GSO_IPID_INC };
	uint64_t n = 0;

	for (unsigned i = 1; n < max; i++) {
		int r = gso_dev__submit(p->dev, &tx, 1);

		if (r == 1) {
			n++;
			/* The next super-segment's first datagram follows this one's last. */
			p->ip_id = (uint16_t)(p->ip_id + ld->nseg);
			gso_tmpl__set_ip_id(&p->t, p->ip_id);
		} else if (r == -EAGAIN || r == -ENOBUFS) {
			gso_dev__kick(p->dev);
			gso_dev__reap(p->dev, 0);
		} else {
			bench_die(BENCH_EXIT_FAIL, -r, "gso_dev__submit");
		}
		if (until > 0 && (i & 15) == 0 && bench_now() >= until)
			break;
	}
	return n;
}

/* ---- the engine ---- */

/* One super-segment on the next flow in turn that takes it.  False: every queue is full. */
static bool eng_send(struct eng *g)
{
	for (uint32_t tries = 0; tries < g->n; tries++) {
		struct gso_dgram *d = g->fl[g->cursor];
		int r;

		if (++g->cursor == g->n)
			g->cursor = 0;
		r = gso_dgram__send(d, payload, g->ld->len, g->ld->gso, 0);
		if (!r)
			return true;
		if (r != -EAGAIN)
			bench_die(BENCH_EXIT_FAIL, -r, "gso_dgram__send");
	}
	return false;
}

static void on_event(void *ctx, const struct gso_engine_event *ev)
{
	struct eng *g = ctx;

	if (ev->type == GSO_EV_DGRAM_SENT) {
		g->sent++;
		if (g->refill)
			eng_send(g);
	} else if (ev->type == GSO_EV_DGRAM_DROPPED) {
		g->dropped++;
	}
}

static uint64_t eng_clock(void *ctx)
{
	return ((const struct eng *)ctx)->vnow;
}

/* One pass.  `jump`: in virtual time, time jumps to the engine's next deadline (paced runs never idle). */
static void eng_poll(struct eng *g, bool jump)
{
	uint64_t next;
	int r = gso_engine__poll(g->e, &next);

	if (r)
		bench_die(BENCH_EXIT_FAIL, -r, "gso_engine__poll");
	if (jump && g->virt && next != GSO_EVLOOP_FOREVER && next > g->vnow)
		g->vnow = next;
}

static uint32_t eng_queued(const struct eng *g)
{
	GSO_OPTS(gso_engine_stats, st);

	gso_engine__stats(g->e, &st);
	return st.queued;
}

/* Poll until `until` (0: no limit) or `max` super-segments were sent; returns how many. */
static uint64_t engine_loop(struct eng *g, double until, uint64_t max)
{
	uint64_t start = g->sent;

	while (g->sent - start < max) {
		eng_poll(g, true);
		if (until > 0 && bench_now() >= until)
			break;
	}
	return g->sent - start;
}

/*
 * Queue the starting load: depth super-segments on every flow.  Paced,
 * the flows first start one after the other, a super-segment's time at
 * the aggregate rate apart, each sending its first at once: so their
 * departures spread over the period instead of falling due all together.
 */
static void eng_fill(struct eng *g, const struct load *ld)
{
	uint64_t want = (uint64_t)g->n * g->depth;

	g->ld = ld;
	g->refill = false;
	if (g->virt) {
		uint64_t step = (uint64_t)((double)(ld->len + ld->nseg * (uint32_t)ETH_UDP4_HDR) * 1e9 / (double)g->rate);

		for (uint32_t i = 0; i < g->n; i++) {
			eng_send(g);
			eng_poll(g, false);
			g->vnow += step;
		}
	}
	while (eng_queued(g) < want)
		if (!eng_send(g))
			bench_die(BENCH_EXIT_FAIL, EAGAIN, "engine queues full at the start");
	g->refill = true;
}

/* Stop refilling and send what is queued, so that the next run starts empty. */
static void eng_drain(struct eng *g)
{
	double end = bench_now() + DRAIN_S;

	g->refill = false;
	while (eng_queued(g)) {
		eng_poll(g, true);
		if (bench_now() > end)
			bench_die(BENCH_EXIT_FAIL, ETIMEDOUT, "engine: %u super-segments still queued", eng_queued(g));
	}
	if (g->dropped)
		bench_die(BENCH_EXIT_FAIL, EIO, "engine dropped %lu super-segments", (unsigned long)g->dropped);
}

/* ---- measuring ---- */

struct snap {
	uint64_t wall_ns, cpu_ns, user_us, peer;
};

static void snap_now(struct snap *s, int cnt_fd)
{
	struct rusage ru;
	uint64_t bytes;

	getrusage(RUSAGE_THREAD, &ru);
	s->user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec;
	s->cpu_ns = bench_thread_cpu_ns();
	s->wall_ns = bench_now_ns();
	if (cnt_fd < 0 || xskbed_drop_count(cnt_fd, &s->peer, &bytes))
		s->peer = 0;
}

/* One round's numbers of one mode and size. */
struct sample {
	double mpps;        /* frames counted at the peer per wall second, millions */
	double cpu_ns;      /* thread CPU per frame sent */
	double user_ns;     /* user CPU per frame sent */
	double peer_share;  /* frames at the peer / frames sent */
};

struct bench {
	struct parts p;
	struct eng g;
	int cnt_fd;
};

/* The engine's statistics over the timed runs of one size. */
struct eng_sum {
	uint64_t submits, supers, polls, backpressure;
	uint32_t busy_flows; /* flows with data queued when the last run ended */
};

static void run_timed(struct bench *b, int m, const struct load *ld, double secs, struct sample *s,
		      struct eng_sum *es)
{
	GSO_OPTS(gso_engine_stats, st0);
	GSO_OPTS(gso_engine_stats, st1);
	struct snap a, z;
	uint64_t supers;

	if (m == M_ENGINE) {
		eng_fill(&b->g, ld);
		gso_engine__stats(b->g.e, &st0);
	}
	snap_now(&a, b->cnt_fd);
	if (m == M_PARTS)
		supers = parts_loop(&b->p, ld, (double)a.wall_ns * 1e-9 + secs, UINT64_MAX);
	else
		supers = engine_loop(&b->g, (double)a.wall_ns * 1e-9 + secs, UINT64_MAX);
	snap_now(&z, b->cnt_fd);
	if (m == M_ENGINE) {
		gso_engine__stats(b->g.e, &st1);
		es->submits += st1.submits - st0.submits;
		es->supers += st1.supers - st0.supers;
		es->polls += st1.polls - st0.polls;
		es->backpressure += st1.backpressure - st0.backpressure;
		es->busy_flows = 0;
		for (uint32_t i = 0; i < b->g.n; i++) {
			GSO_OPTS(gso_dgram_info, in);
			gso_dgram__info(b->g.fl[i], &in);
			es->busy_flows += in.queued > 0;
		}
		eng_drain(&b->g);
	} else {
		gso_dev__kick(b->p.dev);
		gso_dev__reap(b->p.dev, 0);
	}
	if (!supers)
		bench_die(BENCH_EXIT_FAIL, EIO, "%s sent nothing", mname[m]);
	double frames = (double)supers * ld->nseg;
	s->mpps = (double)(z.peer - a.peer) / ((double)(z.wall_ns - a.wall_ns) * 1e-9) / 1e6;
	s->cpu_ns = (double)(z.cpu_ns - a.cpu_ns) / frames;
	s->user_ns = (double)(z.user_us - a.user_us) * 1e3 / frames;
	s->peer_share = (double)(z.peer - a.peer) / frames;
}

/*
 * The counted regions: callgrind's --toggle-collect names them, so they
 * keep their names (no inlining, no specialised clones).
 */
#if defined(__has_attribute)
#if __has_attribute(noipa)
#define BE_REGION __attribute__((noipa))
#endif
#endif
#ifndef BE_REGION
#define BE_REGION __attribute__((noinline))
#endif

BE_REGION static uint64_t be_count_parts(struct parts *p, const struct load *ld, uint64_t n)
{
	return parts_loop(p, ld, 0, n);
}

BE_REGION static uint64_t be_count_engine(struct eng *g, uint64_t n)
{
	return engine_loop(g, 0, n);
}

static void run_count(struct bench *b, int m, const struct load *ld, uint64_t n)
{
	uint64_t warm = n / 4 > (uint64_t)b->g.n * b->g.depth ? n / 4 : (uint64_t)b->g.n * b->g.depth;
	uint64_t got;
	char name[64];

	snprintf(name, sizeof(name), "%s %uB flows=%u%s", mname[m], ld->frame, m == M_ENGINE ? b->g.n : 1,
		 m == M_ENGINE && b->g.virt ? " paced" : "");
	if (m == M_ENGINE) {
		eng_fill(&b->g, ld);
		engine_loop(&b->g, 0, warm);
	} else {
		parts_loop(&b->p, ld, 0, warm);
	}
	CALLGRIND_START_INSTRUMENTATION;
	CALLGRIND_ZERO_STATS;
	got = m == M_ENGINE ? be_count_engine(&b->g, n) : be_count_parts(&b->p, ld, n);
	CALLGRIND_DUMP_STATS_AT(name);
	CALLGRIND_STOP_INSTRUMENTATION;
	if (m == M_ENGINE)
		eng_drain(&b->g);
	printf("count: %-28s %8lu super-segments, %10lu frames\n", name, (unsigned long)got,
	       (unsigned long)(got * ld->nseg));
}

static double median(const double *v, unsigned n)
{
	double t[MAX_ROUNDS];

	/* Insertion sort of a copy: n is small. */
	for (unsigned i = 0; i < n; i++) {
		unsigned j = i;

		for (; j > 0 && t[j - 1] > v[i]; j--)
			t[j] = t[j - 1];
		t[j] = v[i];
	}
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* ---- set-up ---- */

static struct gso_dev *open_dev(const struct nsbed *bed, uint32_t queue)
{
	GSO_OPTS(gso_xsk_opts, o, .mode = GSO_XSK_MODE_COPY, .queue_id = queue, .flags = GSO_XSK_F_NO_SG);
	struct gso_dev *dev;
	int err = gso_xsk__create(&dev, bed->ifindex[0], &o);

	if (err)
		bench_die(BENCH_EXIT_SKIP, -err, "AF_XDP device on queue %u", queue);
	return dev;
}

/* `rate`: all flows together, wire bytes/s (0: unpaced, in real time). */
static void open_engine(struct eng *g, const struct nsbed *bed, uint32_t nflows, uint64_t rate)
{
	GSO_OPTS(gso_engine_opts, eo, .max_flows = nflows, .on_event = on_event, .ctx = g);
	struct gso_dev *dev = open_dev(bed, 1);
	struct gso_tmpl t;
	int err;

	memset(g, 0, sizeof(*g));
	g->n = nflows;
	/* Paced flows wait in the heap with their next burst: two each, so that each always has one. */
	g->depth = (OUTSTANDING + nflows - 1) / nflows;
	if (rate && g->depth < 2)
		g->depth = 2;
	g->virt = rate != 0;
	g->rate = rate;
	g->vnow = 1000000000ull;
	if (g->virt) {
		eo.clock = eng_clock;
		eo.clock_ctx = g;
	}
	err = gso_engine__create(&g->e, dev, &eo);
	if (err)
		bench_die(BENCH_EXIT_FAIL, -err, "gso_engine__create");
	g->fl = calloc(nflows, sizeof(*g->fl));
	if (!g->fl)
		bench_die(BENCH_EXIT_FAIL, ENOMEM, "flows");
	for (uint32_t i = 0; i < nflows; i++) {
		/* Room for more than the starting load: round-robin refills may run ahead of a flow. */
		GSO_OPTS(gso_dgram_opts, o, .tmpl = &t, .queue_len = 2 * g->depth < 4 ? 4 : 2 * g->depth,
			 .rate = rate ? (rate / nflows ?: 1) : 0);
		xskbed_udp_tmpl(bed, (uint16_t)(BASE_PORT + i), 9, &t);
		err = gso_dgram__open(&g->fl[i], g->e, &o);
		if (err)
			bench_die(BENCH_EXIT_FAIL, -err, "gso_dgram__open (flow %u)", i);
	}
}

/* The load of `frame`-byte frames, within what UDP, IP and the engine's device allow. */
static void make_load(struct load *ld, const struct eng *g, const struct gso_tmpl *t, uint32_t frame, uint32_t segs)
{
	GSO_OPTS(gso_dgram_info, in);

	gso_dgram__info(g->fl[0], &in);
	ld->frame = frame;
	ld->gso = frame - t->hdr_len;
	if (ld->gso > in.max_gso_size)
		bench_die(BENCH_EXIT_USAGE, EMSGSIZE, "%u-byte frames: the device takes %u payload bytes per frame at most",
			  frame, in.max_gso_size);
	ld->nseg = segs < in.max_segs ? segs : in.max_segs;
	if (ld->nseg > in.max_len / ld->gso)
		ld->nseg = in.max_len / ld->gso;
	ld->len = ld->nseg * ld->gso;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bench_engine [--quick] [--seconds S] [--rounds N] [--flows N] [--segs N] [--size BYTES]\n"
		"                    [--only parts|engine] [--cpu C] [--count N] [--rate BITS/S]\n"
		"CPU per frame of the transmit engine next to the bare device loop it drives: the same UDP\n"
		"super-segments sent with gso_dev__submit() (\"parts\") and through gso_dgram__send() +\n"
		"gso_engine__poll() (\"engine\"), each on its own AF_XDP copy-mode device, to a veth peer\n"
		"that drops in XDP.  64- and 1514-byte frames (Ethernet header to UDP payload, no FCS).\n"
		"Needs root: creates two network namespaces for the run (removed at exit, also on\n"
		"signals); the host's interfaces are never touched.  The drop program is looked up in\n"
		"$GSO_BPF_DIR, else <program dir>/../bpf/xdp_drop.bpf.o.\n"
		"  --quick        one short round (a smoke test; numbers are rough)\n"
		"  --seconds S    time per mode per size per round (default 1)\n"
		"  --rounds N     rounds, sizes and modes interleaved (default 5, at most %d)\n"
		"  --flows N      datagram flows of the engine, sends round robin (default 1, at most %u)\n"
		"  --segs N       datagrams per super-segment (default %u; fewer where UDP or IP limits say)\n"
		"  --size BYTES   one frame size only (%u..1514)\n"
		"  --only M       one mode only: parts or engine (for profiling)\n"
		"  --cpu C        CPU to run on (default: the one it starts on)\n"
		"  --rate R       pace the engine's flows at R bit/s of wire bytes, all together (k/M/G),\n"
		"                 in virtual time: the clock jumps to the next departure, so nothing idles\n"
		"                 and waiting flows sit in the scheduler's heap (default 0: unpaced)\n"
		"  --count N      no timing: N super-segments per mode and size after a warm-up, then exit;\n"
		"                 for callgrind (the header of bench/bench_engine.c has the commands)\n",
		MAX_ROUNDS, MAX_FLOWS, DEF_SEGS, ETH_UDP4_HDR + 1);
}

struct args {
	double secs, rate;
	uint64_t rounds, flows, segs, size, cpu, count;
	int only;
};

static void parse_args(int argc, char **argv, struct args *a)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },        { "seconds", required_argument, NULL, 's' },
		{ "rounds", required_argument, NULL, 'r' }, { "flows", required_argument, NULL, 'f' },
		{ "segs", required_argument, NULL, 'g' },   { "size", required_argument, NULL, 'z' },
		{ "only", required_argument, NULL, 'o' },   { "cpu", required_argument, NULL, 'c' },
		{ "count", required_argument, NULL, 'n' },  { "rate", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int o;

	*a = (struct args){ .secs = 1, .rounds = 5, .flows = 1, .segs = DEF_SEGS, .cpu = UINT64_MAX, .only = -1 };
	while ((o = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (o) {
		case 'q': a->secs = 0.2; a->rounds = 1; break;
		case 's': if (bench_parse_double(optarg, &a->secs) || a->secs <= 0 || a->secs > 60) bench_die(2, 0, "--seconds (0..60]"); break;
		case 'r': if (bench_parse_u64(optarg, &a->rounds) || !a->rounds || a->rounds > MAX_ROUNDS) bench_die(2, 0, "--rounds (1..%d)", MAX_ROUNDS); break;
		case 'f': if (bench_parse_u64(optarg, &a->flows) || !a->flows || a->flows > MAX_FLOWS) bench_die(2, 0, "--flows (1..%u)", MAX_FLOWS); break;
		case 'g': if (bench_parse_u64(optarg, &a->segs) || !a->segs || a->segs > GSO_UDP_MAX_SEGS) bench_die(2, 0, "--segs (1..%u)", GSO_UDP_MAX_SEGS); break;
		case 'z': if (bench_parse_u64(optarg, &a->size) || a->size <= ETH_UDP4_HDR || a->size > 1514) bench_die(2, 0, "--size (%d..1514)", ETH_UDP4_HDR + 1); break;
		case 'c': if (bench_parse_u64(optarg, &a->cpu) || a->cpu >= CPU_SETSIZE) bench_die(2, 0, "--cpu"); break;
		case 'p': if (bench_parse_rate(optarg, &a->rate) || a->rate > 1e12) bench_die(2, 0, "--rate (bit/s, 0..1T)"); break;
		case 'n': if (bench_parse_u64(optarg, &a->count) || !a->count || a->count > 100000000) bench_die(2, 0, "--count (1..1e8)"); break;
		case 'o':
			for (int m = 0; m < M_COUNT; m++)
				if (!strcmp(optarg, mname[m]))
					a->only = m;
			if (a->only < 0)
				bench_die(2, 0, "--only: parts or engine");
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(BENCH_EXIT_USAGE);
		}
	}
	if (optind != argc) {
		usage(stderr);
		exit(BENCH_EXIT_USAGE);
	}
}

static void print_size(const struct bench *b, const struct load *ld, struct sample (*s)[MAX_ROUNDS], unsigned rounds,
		       int only, const struct eng_sum *es)
{
	double cpu[M_COUNT], ratio[MAX_ROUNDS];

	printf("\n%u-byte frames (%u-byte UDP payload), %u datagrams per super-segment (%u bytes)\n", ld->frame, ld->gso,
	       ld->nseg, ld->len);
	printf("%-28s %8s %13s %14s %10s\n", "mode", "Mpps", "CPU ns/frame", "user ns/frame", "peer/sent");
	for (int m = 0; m < M_COUNT; m++) {
		double mpps[MAX_ROUNDS], user[MAX_ROUNDS], share[MAX_ROUNDS], c[MAX_ROUNDS];
		char label[40];

		if (only >= 0 && only != m)
			continue;
		for (unsigned r = 0; r < rounds; r++) {
			mpps[r] = s[m][r].mpps;
			c[r] = s[m][r].cpu_ns;
			user[r] = s[m][r].user_ns;
			share[r] = s[m][r].peer_share;
		}
		cpu[m] = median(c, rounds);
		if (m == M_ENGINE)
			snprintf(label, sizeof(label), "engine (%u flow%s%s)", b->g.n, b->g.n == 1 ? "" : "s",
				 b->g.virt ? ", paced" : "");
		else
			snprintf(label, sizeof(label), "parts");
		printf("%-28s %8.3f %13.1f %14.1f %9.1f%%\n", label, median(mpps, rounds), cpu[m], median(user, rounds),
		       100 * median(share, rounds));
	}
	if (only < 0) {
		for (unsigned r = 0; r < rounds; r++)
			ratio[r] = s[M_ENGINE][r].cpu_ns / s[M_PARTS][r].cpu_ns;
		printf("engine/parts CPU per frame: %.3f (ratio of medians), %.3f (median of per-round ratios); goal <= 1.05\n",
		       cpu[M_ENGINE] / cpu[M_PARTS], median(ratio, rounds));
	}
	if (only != M_PARTS && es->submits)
		printf("engine: %.2f super-segments per device submit, %.1f per poll, %lu backpressure answers, "
		       "%u of %u flows with data queued at the end of the last run\n",
		       (double)es->supers / (double)es->submits, (double)es->supers / (double)es->polls,
		       (unsigned long)es->backpressure, es->busy_flows, b->g.n);
}

int main(int argc, char **argv)
{
	static struct sample smp[MAX_SIZES][M_COUNT][MAX_ROUNDS];
	static struct bench b;
	struct load ld[MAX_SIZES];
	struct eng_sum es[MAX_SIZES];
	struct args a;
	struct nsbed bed;
	char err[256];
	unsigned nsizes;
	int e;

	parse_args(argc, argv, &a);
	if (a.rate && a.rate < 8.0 * (double)a.flows)
		bench_die(BENCH_EXIT_USAGE, 0, "--rate: at least 8 bit/s per flow");
	if (geteuid())
		bench_die(BENCH_EXIT_SKIP, EPERM, "needs root");
	if (a.cpu == UINT64_MAX)
		a.cpu = (uint64_t)sched_getcpu();
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((int)a.cpu, &set);
	/* One core: the sender, and the peer's receive softirq that its sends raise. */
	if (sched_setaffinity(0, sizeof(set), &set))
		bench_die(BENCH_EXIT_USAGE, errno, "pin to CPU %lu", (unsigned long)a.cpu);

	e = xskbed_create(&bed, "eng", 2);
	if (e)
		bench_die(BENCH_EXIT_USAGE, -e, "test-bed");
	b.cnt_fd = -1;
	if (xskbed_attach_drop(&bed, 1, &b.cnt_fd, err, sizeof(err))) {
		/* Counting runs need no peer count (the peer's stack drops what it gets). */
		if (!a.count)
			bench_die(BENCH_EXIT_SKIP, 0, "XDP drop program: %s", err);
		fprintf(stderr, "bench_engine: no XDP drop program on the peer (%s)\n", err);
		b.cnt_fd = -1;
	}
	if (nsbed_enter(&bed, 0))
		bench_die(BENCH_EXIT_FAIL, errno, "enter side a");
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13 + 1);

	b.p.dev = open_dev(&bed, 0);
	xskbed_udp_tmpl(&bed, (uint16_t)BASE_PORT, 9, &b.p.t);
	open_engine(&b.g, &bed, (uint32_t)a.flows, (uint64_t)(a.rate / 8));
	nsizes = a.size ? 1 : 2;
	for (unsigned z = 0; z < nsizes; z++)
		make_load(&ld[z], &b.g, &b.p.t, a.size ? (uint32_t)a.size : (z ? 1514u : 64u), (uint32_t)a.segs);

	if (a.count) {
		for (unsigned z = 0; z < nsizes; z++)
			for (int m = 0; m < M_COUNT; m++)
				if (a.only < 0 || a.only == m)
					run_count(&b, m, &ld[z], a.count);
	} else {
		memset(es, 0, sizeof(es));
		for (unsigned r = 0; r < a.rounds; r++)
			for (unsigned z = 0; z < nsizes; z++)
				for (int k = 0; k < M_COUNT; k++) {
					int m = (int)((k + r + z) % M_COUNT); /* who goes first rotates */

					if (a.only < 0 || a.only == m)
						run_timed(&b, m, &ld[z], a.secs, &smp[z][m][r], &es[z]);
				}
		printf("bench_engine: parts (gso_dev__submit loop) vs engine (gso_dgram__send + gso_engine__poll),\n"
		       "one core (CPU %lu), veth, peer drops in XDP; AF_XDP copy mode, whole frames (GSO_XSK_F_NO_SG);\n"
		       "%lu round%s x %.2f s per mode per size, medians; CPU = sender thread (user+sys) per frame sent;\n"
		       "frame bytes from the Ethernet header to the end of the UDP payload, FCS not counted\n",
		       (unsigned long)a.cpu, (unsigned long)a.rounds, a.rounds == 1 ? "" : "s", a.secs);
		if (b.g.virt)
			printf("engine flows paced at %.4g Gbit/s of wire bytes in all, in virtual time (--rate)\n",
			       a.rate / 1e9);
		for (unsigned z = 0; z < nsizes; z++)
			print_size(&b, &ld[z], smp[z], (unsigned)a.rounds, a.only, &es[z]);
	}
	gso_engine__destroy(b.g.e);
	free(b.g.fl);
	gso_dev__destroy(b.p.dev);
	nsbed_destroy(&bed);
	return BENCH_EXIT_OK;
}
