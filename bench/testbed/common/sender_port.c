/*
 * bench/sender's multi-queue path (sender_port.h).  Threads: the main
 * thread opens the port, hands each stream's connect to its worker with
 * gso_port__call, and then only waits (an atomic count of streams ended)
 * and, past --time, hands each worker a shutdown call.  Everything of a
 * stream is touched by its worker alone until gso_port__stop() has
 * joined every worker; the report reads it after that.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gso/port.h>

#include "cpu.h"
#include "json.h"
#include "proto.h"
#include "sender_dev.h"
#include "sender_port.h"
#include "stream.h"
#include "util.h"
#include "xfer_write.h"

struct sp;

struct pstream {
	struct sp *run;
	uint32_t q;
	struct gso_stream_opts so;
	struct gso_stream *s;
	struct bench_stream bs;
	uint8_t hdr[BENCH_HDR_LEN];
	uint64_t total, written;
	bool shut, ended;
	int connect_err;
};

struct sp {
	const struct sender_port_args *a;
	struct pstream *st;
	atomic_uint ended;
};

static volatile sig_atomic_t sp_signal;

static void on_signal(int sig)
{
	(void)sig;
	sp_signal++;
}

static void ended(struct pstream *ps)
{
	if (ps->ended)
		return;
	ps->ended = true;
	atomic_fetch_add(&ps->run->ended, 1);
}

static void shut(struct pstream *ps)
{
	if (ps->shut || !ps->s)
		return;
	ps->shut = true;
	gso_stream__shutdown(ps->s);
}

/* As bench/sender's fill(): straight into the stream's device buffers until it says "later". */
static void fill(struct pstream *ps)
{
	if (!ps->shut && bench_xfer_write(ps->s, ps->hdr, ps->run->a->raw ? 0 : BENCH_HDR_LEN, &ps->bs, &ps->written,
					  ps->total))
		shut(ps);
}

static void on_event(void *ctx, uint32_t q, struct gso_engine *e, const struct gso_engine_event *ev)
{
	struct pstream *ps = ev->flow_ctx;

	(void)ctx;
	(void)q;
	(void)e;
	if (!ps)
		return;
	if (ev->type == GSO_EV_STREAM_WRITABLE)
		fill(ps);
	else if (ev->type == GSO_EV_STREAM_CLOSED)
		ended(ps);
}

static void do_connect(struct gso_engine *e, void *arg)
{
	struct pstream *ps = arg;

	ps->connect_err = gso_stream__connect(&ps->s, e, &ps->so);
	if (ps->connect_err) {
		ps->s = NULL;
		ended(ps);
	}
}

static void do_shutdown(struct gso_engine *e, void *arg)
{
	(void)e;
	shut(arg);
}

/* Hand a call over, waiting while the ring is full. */
static int call(struct gso_port *p, uint32_t q, gso_port_call_fn fn, void *arg)
{
	int err;

	while ((err = gso_port__call(p, q, fn, arg)) == -EAGAIN)
		nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
	return err;
}

static void report(const struct sp *r, struct gso_port *p, const struct gso_stream_info *si, bool ok,
		   bool umem_ok, const struct bench_cpu *cpu)
{
	const struct sender_port_args *a = r->a;
	uint32_t n = gso_port__queues(p);
	uint64_t bytes = 0, supers = 0, segs = 0, retrans = 0, wviol = 0, hl = a->raw ? 0 : BENCH_HDR_LEN;
	uint64_t pmtu_changes = 0;
	uint32_t path_mtu = 0, mss = 0;
	uint64_t qs[GSO_PORT_MAX_QUEUES] = { 0 }, qtx[GSO_PORT_MAX_QUEUES], qin[GSO_PORT_MAX_QUEUES],
		 qout[GSO_PORT_MAX_QUEUES], sq[1024];
	double secs = 0;
	struct bench_json j;
	GSO_OPTS(gso_port_stats, all);

	for (uint32_t i = 0; i < a->streams; i++) {
		uint64_t end = si[i].t_data_acked ? si[i].t_data_acked : si[i].t_end;
		double s = si[i].t_estab && end > si[i].t_estab ? (double)(end - si[i].t_estab) * 1e-9 : 0;

		bytes += si[i].acked > hl ? si[i].acked - hl : 0;
		supers += si[i].supers;
		segs += si[i].segs;
		retrans += si[i].retrans_segs;
		wviol += si[i].wnd_violations;
		pmtu_changes += si[i].pmtu_changes;
		/* The lowest over the streams: one that missed a change shows. */
		if (!path_mtu || si[i].path_mtu < path_mtu)
			path_mtu = si[i].path_mtu;
		if (!mss || si[i].mss > mss)
			mss = si[i].mss;
		secs = s > secs ? s : secs;
		qs[r->st[i].q]++;
		sq[i] = r->st[i].q;
	}
	for (uint32_t q = 0; q < n; q++) {
		GSO_OPTS(gso_port_stats, st);

		gso_port__stats(p, q, &st);
		qtx[q] = st.tx_frames;
		qin[q] = st.handover_in;
		qout[q] = st.handover_out;
	}
	gso_port__stats(p, GSO_PORT_ALL, &all);
	bench_json_begin(&j, stdout);
	bench_json_str(&j, "tool", "sender");
	bench_json_str(&j, "mode", snd_mode_name((unsigned)a->mode));
	if (a->label)
		bench_json_str(&j, "label", a->label);
	bench_json_str(&j, "status", ok ? "ok" : "failed");
	bench_json_u64(&j, "queues", n);
	bench_json_u64(&j, "streams", a->streams);
	bench_json_u64(&j, "seed", a->seed);
	bench_json_u64(&j, "bytes", bytes);
	bench_json_dbl(&j, "seconds", secs);
	bench_json_dbl(&j, "goodput_gbps", secs > 0 ? (double)bytes * 8 / secs / 1e9 : 0);
	bench_json_dbl(&j, "cpu_s", cpu->user + cpu->sys);
	bench_json_u64(&j, "super_segments", supers);
	bench_json_u64(&j, "segments", segs);
	bench_json_u64(&j, "retrans", retrans);
	bench_json_u64(&j, "wnd_violations", wviol);
	bench_json_u64(&j, "rx_other", all.rx_other);
	bench_json_u64(&j, "mss", mss);
	bench_json_u64(&j, "path_mtu", path_mtu);
	bench_json_u64(&j, "pmtu_changes", pmtu_changes);
	bench_json_u64(&j, "icmp_pmtu", all.icmp_pmtu);
	bench_json_u64(&j, "icmp_stale", all.icmp_stale);
	bench_json_u64(&j, "icmp_forged", all.icmp_forged);
	bench_json_u64(&j, "icmp_bad", all.icmp_bad);
	bench_json_u64(&j, "handover_in", all.handover_in);
	bench_json_u64(&j, "handover_out", all.handover_out);
	bench_json_u64(&j, "handover_drops", all.handover_drops);
	bench_json_u64(&j, "calls", all.calls);
	bench_json_u64(&j, "calls_refused", all.calls_refused);
	bench_json_u64_array(&j, "stream_queue", sq, a->streams);
	bench_json_u64_array(&j, "queue_streams", qs, n);
	bench_json_u64_array(&j, "queue_tx_frames", qtx, n);
	bench_json_u64_array(&j, "queue_handover_in", qin, n);
	bench_json_u64_array(&j, "queue_handover_out", qout, n);
	bench_json_u64(&j, "tx_frames", all.tx_frames);
	bench_json_u64(&j, "umem_chunks", all.chunks_total);
	bench_json_u64(&j, "umem_free_at_end", all.chunks_free);
	bench_json_bool(&j, "umem_balanced", umem_ok);
	bench_json_end(&j);
}

int sender_port_run(const struct sender_port_args *a)
{
	uint32_t path, txf = 0;
	struct gso_stream_info *si;
	struct bench_cpu c0, c1, cpu;
	struct gso_port *p;
	struct sp r;
	bool ok = true, umem_ok = true, shut_sent = false;
	uint64_t t0;
	int err;

	/* The port opens every queue's AF_XDP socket with the flags of the path (gso_port_opts.path). */
	switch (a->mode) {
	case SND_MODE_SOFTWARE:
		path = GSO_PATH_SOFTWARE;
		txf = GSO_TX_F_SW_CSUM | GSO_TX_F_COPY;
		break;
	case SND_MODE_CSUM:
		path = GSO_PATH_CSUM;
		txf = GSO_TX_F_COPY;
		break;
	case SND_MODE_MULTIBUF:
		path = GSO_PATH_MULTIBUF;
		break;
	default:
		bench_die(BENCH_EXIT_USAGE, 0, "--queues needs an AF_XDP mode (software, csum, multibuf)");
	}
	{
		GSO_OPTS(gso_xsk_opts, xo, .mode = GSO_XSK_MODE_AUTO, .rx_size = 1024, .rx_chunks = 2048);
		GSO_OPTS(gso_engine_opts, eo, .max_flows = a->streams + 4);
		GSO_OPTS(gso_port_opts, po, .queues = a->queues, .xsk = &xo, .engine = &eo, .on_event = on_event,
			 .ctx = &r, .path = path);

		err = gso_port__open(&p, a->ifindex, &po);
		if (err)
			bench_die(BENCH_EXIT_USAGE, -err, "multi-queue port of %u queues", a->queues);
	}
	memset(&r, 0, sizeof(r));
	r.a = a;
	r.st = calloc(a->streams, sizeof(*r.st));
	si = calloc(a->streams, sizeof(*si));
	if (!r.st || !si)
		bench_die(BENCH_EXIT_USAGE, ENOMEM, "streams");
	for (uint32_t i = 0; i < a->streams; i++) {
		struct pstream *ps = &r.st[i];
		struct gso_flow f = { .sz = sizeof(f), .l3 = a->route->l3, .l4 = GSO_L4_TCP };

		ps->run = &r;
		ps->so = a->so;
		ps->so.sport = (uint16_t)(a->sport + i);
		ps->so.dport = (uint16_t)(a->dport + i);
		ps->so.tx_flags = txf;
		ps->so.ctx = ps;
		ps->total = a->bytes == UINT64_MAX ? UINT64_MAX : a->bytes + (a->raw ? 0 : BENCH_HDR_LEN);
		bench_stream_init(&ps->bs, a->seed);
		if (!a->raw) {
			struct bench_hdr h = { .seed = a->seed, .total = a->bytes == UINT64_MAX || a->time_s ? 0 : a->bytes };

			bench_hdr_encode(&h, ps->hdr);
		}
		/* The ACK flow, as the peer's segments carry it. */
		memcpy(f.saddr, a->route->dst, 16);
		memcpy(f.daddr, a->route->src, 16);
		f.sport = ps->so.dport;
		f.dport = ps->so.sport;
		ps->q = (uint32_t)gso_port__queue_of(p, &f);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	bench_cpu_now(&c0);
	t0 = bench_now_ns();
	err = gso_port__start(p);
	if (err)
		bench_die(BENCH_EXIT_USAGE, -err, "starting the workers");
	for (uint32_t i = 0; i < a->streams; i++)
		if ((err = call(p, r.st[i].q, do_connect, &r.st[i])))
			bench_die(BENCH_EXIT_USAGE, -err, "handing stream %u to queue %u", i, r.st[i].q);
	while (atomic_load(&r.ended) < a->streams && sp_signal < 2) {
		bool time_up = a->time_s && bench_now_ns() - t0 >= (uint64_t)(a->time_s * 1e9);

		if ((time_up || sp_signal) && !shut_sent) {
			/* Past --time or Ctrl-C: finish what is queued, then FIN, on each stream's worker. */
			shut_sent = true;
			for (uint32_t i = 0; i < a->streams; i++)
				call(p, r.st[i].q, do_shutdown, &r.st[i]);
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
	}
	gso_port__stop(p);
	bench_cpu_now(&c1);
	bench_cpu_diff(&c0, &c1, &cpu);
	/* The workers are joined: this thread may read and close the streams now. */
	for (uint32_t i = 0; i < a->streams; i++) {
		si[i].sz = sizeof(si[i]);
		if (!r.st[i].s) {
			ok = false;
			fprintf(stderr, "sender: stream %u: connect: %s\n", i, strerror(-r.st[i].connect_err));
			continue;
		}
		gso_stream__info(r.st[i].s, &si[i]);
		if (si[i].state != GSO_STREAM_DONE) {
			ok = false;
			fprintf(stderr, "sender: stream %u (queue %u): %s: %s\n", i, r.st[i].q,
				si[i].why ? si[i].why : "interrupted", si[i].err ? strerror(-si[i].err) : "signal");
		}
		gso_stream__close(r.st[i].s);
	}
	gso_port__close(p);
	for (uint32_t q = 0; q < gso_port__queues(p); q++) {
		GSO_OPTS(gso_port_stats, st);

		if (gso_port__stats(p, q, &st) || !st.chunks_total || st.chunks_free != st.chunks_total)
			umem_ok = false;
	}
	if (a->json)
		report(&r, p, si, ok, umem_ok, &cpu);
	else if (!a->quiet)
		fprintf(stderr, "sender: %u streams on %u queues %s, UMEM %s\n", a->streams, gso_port__queues(p),
			ok ? "ok" : "FAILED", umem_ok ? "balanced" : "NOT balanced");
	gso_port__destroy(p);
	free(si);
	free(r.st);
	return ok && umem_ok ? BENCH_EXIT_OK : BENCH_EXIT_FAIL;
}
