/*
 * bench/sender --queues N (N > 1): the bench streams over a multi-queue
 * port (<gso/port.h>), one engine and worker per queue.  Stream i goes
 * from sport + i to dport + i and lives on the queue gso_port__queue_of
 * gives its ACK flow; its events, writes and shutdown all run on that
 * queue's worker, and its figures are read only after the port stopped.
 * One JSON object (--json) sums the streams and lists per-queue counters.
 */
#ifndef BENCH_SENDER_PORT_H
#define BENCH_SENDER_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <gso/engine.h>
#include <gso/route.h>

struct sender_port_args {
	int mode;                     /* enum snd_mode: software, csum or multibuf */
	int ifindex;
	uint32_t queues, streams;
	const struct gso_route *route;
	uint16_t sport, dport;        /* of stream 0 */
	uint64_t bytes, seed;         /* per stream; bytes UINT64_MAX: until time_s */
	bool raw, json, quiet;
	double time_s;
	const char *label;
	struct gso_stream_opts so;    /* every stream's options (ports, ctx, tx_flags set per stream) */
};

/* Run the streams to their end; returns the exit code (BENCH_EXIT_*). */
int sender_port_run(const struct sender_port_args *a);

#endif
