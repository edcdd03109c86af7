/*
 * soak: hours of churn on a multi-queue port, checked for balance
 * (`make soak`; soak.h says which file does what).
 *
 * All at once, each kind at random intervals around --churn-every:
 * streams to kernel receivers in the peer namespace and datagram flows
 * to a kernel UDP socket, opened and closed continuously (every stream's
 * bytes verified by its receiver, whose verdict comes back over the
 * stream; every datagram checked by the sink); the sender's veth taken
 * down and up; its MTU moved between 1500 and 1280, with its peer's
 * (soak_bed.c says why both; --no-mtu: not);
 * receivers killed and started again; the port closed and opened again,
 * with its own steering program and with one the soak creates and
 * destroys around it.
 *
 * Every port cycle quiesces first (no new flows, the open ones end) and
 * wants every UMEM chunk free once the port is closed.  Every
 * --check-every seconds the cycle also counts the process's descriptors
 * and threads (exactly as at the first check, the baseline) and its RSS
 * and heap (within --slack of it).  The first imbalance stops the soak.
 *
 * A stream or datagram flow that fails with an error is reported and
 * counted when a flap, an MTU change or the kill of its receiver happened
 * during its life (the churn explains it); any other failure, a bad
 * verdict or datagram, or a flow that does not end within 60 s of a
 * quiesce stops the soak.  Rates are capped (--rate per stream) so that
 * the soak stays far below one core.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include "soak.h"
#include "util.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	(void)sig;
	stop_signal = 1;
}

uint64_t soak_rnd(struct soak *S, uint64_t n)
{
	return n ? bench_splitmix64(&S->rng) % n : 0;
}

/* A churn interval: uniform in [0.5, 1.5] x --churn-every. */
static uint64_t churn_gap(struct soak *S)
{
	uint64_t mean = (uint64_t)(S->o.churn_s * 1e9);

	return mean / 2 + soak_rnd(S, mean + 1);
}

void soak_fail(struct soak *S, const char *fmt, ...)
{
	va_list ap;

	if (S->fail[0])
		return;
	va_start(ap, fmt);
	vsnprintf(S->fail, sizeof(S->fail), fmt, ap);
	va_end(ap);
	fprintf(stderr, "soak: FAILED at %.1f s: %s\n", (double)(gso_evloop_now_ns() - S->t0) / 1e9, S->fail);
}

/* ---- the port ---- */

static int port_open(struct soak *S)
{
	GSO_OPTS(gso_engine_opts, eo, .max_flows = 64);
	GSO_OPTS(gso_port_opts, po, .queues = SOAK_QUEUES, .engine = &eo, .on_event = soak_on_event,
		 .path = GSO_PATH_SOFTWARE);
	int err;

	/* Every other cycle the steering program is the soak's: created here, destroyed after the port. */
	if (S->c.port_cycles % 2) {
		err = gso_steer__create(&S->steer, S->bed.ifindex, NULL);
		if (err) {
			soak_fail(S, "creating a steering program: %s", strerror(-err));
			return err;
		}
		po.steer = S->steer;
		S->c.steer_soak++;
	} else {
		S->c.steer_own++;
	}
	err = gso_port__open(&S->port, S->bed.ifindex, &po);
	if (!err && (err = gso_port__start(S->port)))
		gso_port__destroy(S->port);
	if (err) {
		S->port = NULL;
		gso_steer__destroy(S->steer);
		S->steer = NULL;
		soak_fail(S, "opening the port: %s", strerror(-err));
	}
	return err;
}

/* Close the port (every engine's buffers reclaimed) and want every UMEM chunk free. */
static void port_close(struct soak *S)
{
	GSO_OPTS(gso_port_stats, all);

	if (!S->port)
		return;
	gso_port__close(S->port);
	for (uint32_t q = 0; q < gso_port__queues(S->port); q++) {
		GSO_OPTS(gso_port_stats, st);

		if (gso_port__stats(S->port, q, &st) || !st.chunks_total || st.chunks_free != st.chunks_total)
			soak_fail(S, "UMEM not balanced after a quiesce: queue %u has %u of %u chunks free", q, st.chunks_free,
			     st.chunks_total);
	}
	if (!gso_port__stats(S->port, GSO_PORT_ALL, &all)) {
		S->chunks_total = all.chunks_total;
		S->chunks_free = all.chunks_free;
	}
	gso_port__destroy(S->port);
	S->port = NULL;
	gso_steer__destroy(S->steer);
	S->steer = NULL;
	S->c.port_cycles++;
}

/* No new flows; wait for the open ones to end, closing those that do not within SOAK_QUIESCE_NS. */
static void quiesce(struct soak *S)
{
	uint64_t deadline = gso_evloop_now_ns() + SOAK_QUIESCE_NS;
	bool aborted = false;

	S->quiescing = true;
	if (!S->link_up && !soak_link_set(&S->bed, true)) {
		S->link_up = true;
		soak_note_event(S, gso_evloop_now_ns());
	}
	while (soak_harvest(S, gso_evloop_now_ns())) {
		if (!aborted && gso_evloop_now_ns() > deadline && S->port) {
			aborted = true;
			for (unsigned k = 0; k < S->o.streams; k++)
				if (atomic_load(&S->st[k].state) == SLOT_ACTIVE)
					gso_port__call(S->port, S->st[k].q, soak_stream_abort, &S->st[k]);
			for (unsigned i = 0; i < SOAK_DGRAMS; i++)
				if (atomic_load(&S->dg[i].state) == SLOT_ACTIVE)
					gso_port__call(S->port, S->dg[i].q, soak_dgram_abort, &S->dg[i]);
		}
		if (aborted && gso_evloop_now_ns() > deadline + 5 * SOAK_NS) {
			soak_fail(S, "flows still open %llu s after the quiesce closed them", SOAK_QUIESCE_NS / SOAK_NS + 5);
			break;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
	}
	S->quiescing = false;
}

static void print_check(const struct soak *S, uint64_t now)
{
	fprintf(stderr, "soak: %.1f min: check %llu: %d descriptors, %d threads, RSS %llu KiB, heap %llu KiB, "
		"UMEM %u/%u chunks free; %llu streams verified, %llu datagram flows, %llu flaps, %llu MTU changes\n",
		(double)(now - S->t0) / 60e9, (unsigned long long)S->c.checks, S->last.fds, S->last.tasks,
		(unsigned long long)(S->last.rss >> 10), (unsigned long long)(S->last.heap >> 10), S->chunks_free,
		S->chunks_total, (unsigned long long)S->c.streams_ok, (unsigned long long)S->c.dgram_flows,
		(unsigned long long)S->c.flaps, (unsigned long long)S->c.mtu_changes);
}

/* Quiesce, close the port (UMEM checked), maybe check the balance, open it again (unless `last`). */
static void cycle(struct soak *S, bool check, bool last)
{
	quiesce(S);
	port_close(S);
	if (check && !S->fail[0]) {
		char why[384];

		soak_balance_now(&S->last);
		S->c.checks++;
		if (!S->have_base) {
			S->base = S->last;
			S->have_base = true;
		} else if (!soak_balance_ok(&S->base, &S->last, S->o.slack, why, sizeof(why))) {
			soak_fail(S, "not balanced at check %llu: %s", (unsigned long long)S->c.checks, why);
		}
		print_check(S, gso_evloop_now_ns());
	}
	if (!last && !S->fail[0])
		port_open(S);
}

/* ---- churn ---- */

static void churn_receivers(struct soak *S, uint64_t now)
{
	for (unsigned k = 0; k < S->o.streams; k++) {
		struct soak_receiver *r = &S->rx[k];
		bool died;

		soak_receiver_poll(r, &died);
		if (died) {
			/*
			 * It should not end by itself: its accept timeout does not hit while flows come,
			 * and it waited SOAK_RX_REBIND_NS for its port.  Counted, and started again.
			 */
			S->c.receiver_exits++;
			r->restart_at = now + SOAK_RX_REBIND_NS;
			fprintf(stderr, "soak: %.1f s: receiver %u ended by itself; starting it again\n",
				(double)(now - S->t0) / 1e9, k);
		}
		if (!r->pid && r->restart_at && now >= r->restart_at) {
			int err = soak_receiver_start(&S->bed, r, k);

			if (err)
				soak_fail(S, "starting receiver %u again: %s", k, strerror(-err));
			S->c.restarts++;
		}
	}
	if (now >= S->next_kill) {
		unsigned k = (unsigned)soak_rnd(S, S->o.streams);
		struct soak_receiver *r = &S->rx[k];

		S->next_kill = now + churn_gap(S);
		if (r->pid) {
			soak_receiver_kill(r);
			r->kills[r->nkills++ % 8] = now;
			r->restart_at = now + SOAK_RX_REBIND_NS + soak_rnd(S, 2 * SOAK_NS);
			S->c.kills++;
		}
	}
}

static void churn_link(struct soak *S, uint64_t now)
{
	int err;

	if (S->link_up && now >= S->next_flap) {
		if ((err = soak_link_set(&S->bed, false))) {
			soak_fail(S, "taking " SOAK_IF_A " down: exit %d", err);
			return;
		}
		S->link_up = false;
		S->flap_up_at = now + SOAK_NS / 5 + soak_rnd(S, 13 * SOAK_NS / 10);
		soak_note_event(S, now);
		S->c.flaps++;
	} else if (!S->link_up && now >= S->flap_up_at) {
		if ((err = soak_link_set(&S->bed, true))) {
			soak_fail(S, "bringing " SOAK_IF_A " up: exit %d", err);
			return;
		}
		S->link_up = true;
		S->next_flap = now + churn_gap(S);
		soak_note_event(S, gso_evloop_now_ns());
	}
	if (!S->o.no_mtu && now >= S->next_mtu) {
		unsigned mtu = S->mtu == SOAK_MTU_HIGH ? SOAK_MTU_LOW : SOAK_MTU_HIGH;

		S->next_mtu = now + churn_gap(S);
		if ((err = soak_mtu_set(&S->bed, mtu))) {
			soak_fail(S, "MTU %u on " SOAK_IF_A ": exit %d", mtu, err);
			return;
		}
		S->mtu = mtu;
		soak_note_event(S, now);
		S->c.mtu_changes++;
	}
}

/* Every datagram the sink got was whole and as sent? */
static bool sink_ok(struct soak *S)
{
	if (!atomic_load_explicit(&S->sink.bad, memory_order_acquire))
		return true;
	soak_fail(S, "the sink got a bad datagram: %s", S->sink.first_bad);
	return false;
}

static void run(struct soak *S)
{
	uint64_t now = gso_evloop_now_ns();

	S->next_flap = now + churn_gap(S);
	S->next_mtu = now + churn_gap(S);
	S->next_kill = now + churn_gap(S);
	S->next_cycle = now + churn_gap(S);
	S->next_check = now + (uint64_t)(S->o.check_s * 1e9);
	while (!S->fail[0] && !stop_signal && (now = gso_evloop_now_ns()) < S->end) {
		if (!sink_ok(S))
			break;
		soak_harvest(S, now);
		churn_receivers(S, now);
		churn_link(S, now);
		if (now >= S->next_check) {
			cycle(S, true, false);
			S->next_check = gso_evloop_now_ns() + (uint64_t)(S->o.check_s * 1e9);
			S->next_cycle = gso_evloop_now_ns() + churn_gap(S);
		} else if (now >= S->next_cycle) {
			cycle(S, false, false);
			S->next_cycle = gso_evloop_now_ns() + churn_gap(S);
		}
		soak_open_flows(S, gso_evloop_now_ns());
		nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
	}
	/* The balance at the end, after a last quiesce. */
	cycle(S, true, true);
	sink_ok(S);
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: soak [options]   (as root)\n\n"
		"Churn on a multi-queue port in a namespace test-bed of its own: streams to kernel receivers\n"
		"and datagram flows opened and closed, link flaps, MTU changes, receivers killed and\n"
		"restarted, port and steering program cycles; descriptors, threads, memory and UMEM\n"
		"checked for balance.  A stream or datagram flow that fails while a flap, an MTU change\n"
		"or its receiver's kill happened is reported and counted; an imbalance, a bad verdict or\n"
		"datagram, or any other failure stops the soak.\n\n"
		"  -m, --minutes M        how long (default 120; fractions allowed)\n"
		"  -c, --check-every S    balance check every S seconds (default 60)\n"
		"  -C, --churn-every S    mean seconds between churn events of each kind (default 15)\n"
		"  -s, --seed N           seed of the schedule and the data (default: from the clock)\n"
		"      --no-mtu           no MTU changes\n"
		"  -n, --streams N        streams (and kernel receivers) at once, 1..%u (default 4)\n"
		"  -r, --rate R           per-stream pacing cap, bit/s with k/M/G (default 16M)\n"
		"      --slack MIB        RSS and heap growth allowed over the baseline (default 64)\n"
		"      --receiver PATH    the kernel receiver (default: bench/receiver of this build)\n"
		"  -j, --json             the summary as one JSON object on stdout\n"
		"  -h, --help\n\n"
		"Exit status: 0 balanced and nothing unexplained failed (also when stopped by a signal),\n"
		"1 an imbalance or a failure, 2 usage or setup error.\n", SOAK_MAX_STREAMS);
}

enum { O_NOMTU = 256, O_SLACK, O_RECEIVER };

static void parse_args(int argc, char **argv, struct soak_opts *o)
{
	static const struct option lo[] = {
		{ "minutes", required_argument, 0, 'm' },  { "check-every", required_argument, 0, 'c' },
		{ "churn-every", required_argument, 0, 'C' }, { "seed", required_argument, 0, 's' },
		{ "no-mtu", no_argument, 0, O_NOMTU },     { "streams", required_argument, 0, 'n' },
		{ "rate", required_argument, 0, 'r' },     { "slack", required_argument, 0, O_SLACK },
		{ "receiver", required_argument, 0, O_RECEIVER }, { "json", no_argument, 0, 'j' },
		{ "help", no_argument, 0, 'h' },           { 0, 0, 0, 0 },
	};
	uint64_t v;
	int c;

	*o = (struct soak_opts){ .minutes = 120, .check_s = 60, .churn_s = 15, .seed = (uint64_t)time(NULL),
			    .slack = 64ull << 20, .rate = 16e6, .streams = 4 };
	while ((c = getopt_long(argc, argv, "m:c:C:s:n:r:jh", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (bench_parse_double(optarg, &o->minutes) || o->minutes <= 0)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --minutes '%s'", optarg);
			break;
		case 'c':
			if (bench_parse_double(optarg, &o->check_s) || o->check_s < 1)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --check-every '%s' (at least 1 s)", optarg);
			break;
		case 'C':
			if (bench_parse_double(optarg, &o->churn_s) || o->churn_s < 0.5)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --churn-every '%s' (at least 0.5 s)", optarg);
			break;
		case 's':
			if (bench_parse_u64(optarg, &o->seed))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --seed '%s'", optarg);
			break;
		case O_NOMTU: o->no_mtu = true; break;
		case 'n':
			if (bench_parse_u64(optarg, &v) || v < 1 || v > SOAK_MAX_STREAMS)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --streams '%s' (1..%u)", optarg, SOAK_MAX_STREAMS);
			o->streams = (unsigned)v;
			break;
		case 'r':
			if (bench_parse_rate(optarg, &o->rate) || o->rate < 8e3)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --rate '%s' (at least 8k)", optarg);
			break;
		case O_SLACK:
			if (bench_parse_u64(optarg, &v) || v > (1u << 20))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --slack '%s' (MiB)", optarg);
			o->slack = v << 20;
			break;
		case O_RECEIVER: o->receiver = optarg; break;
		case 'j': o->json = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(BENCH_EXIT_USAGE);
		}
	}
	if (optind < argc) {
		usage(stderr);
		exit(BENCH_EXIT_USAGE);
	}
}

int main(int argc, char **argv)
{
	static struct soak S;
	static char rpath[4096];
	struct rusage self, kids;
	struct sigaction sa = { .sa_handler = on_signal };
	int err;

	parse_args(argc, argv, &S.o);
	if (geteuid() != 0)
		bench_die(BENCH_EXIT_USAGE, 0, "needs root: it creates network namespaces and attaches XDP programs");
	if (!S.o.receiver) {
		snprintf(rpath, sizeof(rpath), "%s/../bench/receiver", bench_exe_dir());
		S.o.receiver = rpath;
	}
	if (access(S.o.receiver, X_OK))
		bench_die(BENCH_EXIT_USAGE, errno, "the kernel receiver %s (build it with make, or give --receiver)",
			  S.o.receiver);
	S.rng = S.o.seed;
	S.st = calloc(S.o.streams, sizeof(*S.st));
	S.dg = calloc(SOAK_DGRAMS, sizeof(*S.dg));
	if (!S.st || !S.dg)
		bench_die(BENCH_EXIT_USAGE, ENOMEM, "slots");
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (soak_bed_create(&S.bed, S.o.receiver))
		return BENCH_EXIT_USAGE;
	if ((err = nsbed_enter(&S.bed.nb, 0)) || (err = soak_sink_start(&S.sink, &S.bed.nb))) {
		fprintf(stderr, "soak: the UDP sink: %s\n", strerror(-err));
		soak_bed_destroy(&S.bed);
		return BENCH_EXIT_USAGE;
	}
	S.link_up = true;
	S.mtu = SOAK_MTU_HIGH;
	S.sport = 20000;
	S.t0 = gso_evloop_now_ns();
	S.end = S.t0 + (uint64_t)(S.o.minutes * 60e9);
	for (unsigned k = 0; k < S.o.streams && !S.fail[0]; k++)
		if ((err = soak_receiver_start(&S.bed, &S.rx[k], k)))
			soak_fail(&S, "starting receiver %u (%s): %s", k, S.o.receiver, strerror(-err));
	if (!S.fail[0] && !port_open(&S))
		run(&S);
	for (unsigned k = 0; k < S.o.streams; k++)
		soak_receiver_kill(&S.rx[k]);
	soak_sink_stop(&S.sink);
	soak_bed_destroy(&S.bed);
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	S.interrupted = stop_signal;
	soak_report(&S, (double)(gso_evloop_now_ns() - S.t0) / 1e9, &self, &kids);
	return S.fail[0] ? BENCH_EXIT_FAIL : BENCH_EXIT_OK;
}
