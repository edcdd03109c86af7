/*
 * udp_pacer: COUNT UDP datagrams to DST:PORT on IFNAME, paced at MBIT Mbit/s
 * by the libgso-xdp transmit engine, on the path the library finds best for
 * the interface (AF_XDP, or the driver's segmentation offload).  Needs root.
 *
 *   udp_pacer IFNAME DST PORT MBIT COUNT [PAYLOAD]     (PAYLOAD: 1200 bytes)
 *   cc -o udp_pacer udp_pacer.c $(pkg-config --cflags --libs libgso-xdp)
 *
 * The kernel says how to reach DST; the headers are built once; the engine
 * cuts our super-segments into datagrams, fills in lengths, IP IDs and
 * checksums, and paces them.  Datagram k holds k (8 bytes, big-endian),
 * then pattern(k, i) at each byte i, for udp_sink to check.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gso/engine.h>
#include <gso/gso.h>
#include <gso/route.h>

#define SPORT 40000
#define PER_SEND 16 /* datagrams per super-segment: one call, one pacing stamp */
#define NBUF 8      /* super-segments queued at once: enough to ride out a late wake-up */

static uint8_t pattern(uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 7 + i);
}

struct pacer {
	struct gso_engine *e;
	struct gso_dgram *d;
	uint8_t *mem;        /* NBUF buffers of per_send datagrams */
	uint32_t nseg[NBUF]; /* datagrams in buffer k while the engine has it, 0 while it is ours */
	uint32_t payload, per_send;
	uint64_t count, next_seq, sent;
	int err;             /* the first failure */
};

static void set_err(struct pacer *p, const char *what, int err)
{
	if (p->err)
		return; /* the first failure is the one to tell */
	fprintf(stderr, "udp_pacer: %s: %s\n", what, strerror(-err));
	p->err = err;
}

/* Fill each buffer that is ours with the next datagrams and queue it. */
static void refill(struct pacer *p)
{
	for (uint32_t k = 0; k < NBUF && p->next_seq < p->count && !p->err; k++) {
		uint64_t left = p->count - p->next_seq;
		uint32_t n = left < p->per_send ? (uint32_t)left : p->per_send;
		uint8_t *buf = p->mem + (size_t)k * p->per_send * p->payload;
		int err;

		if (p->nseg[k])
			continue; /* the engine's until its SENT or DROPPED event */
		for (uint32_t s = 0; s < n; s++) {
			uint8_t *dg = buf + (size_t)s * p->payload;
			uint64_t seq = p->next_seq + s;

			for (int b = 0; b < 8; b++)
				dg[b] = (uint8_t)(seq >> (56 - 8 * b));
			for (uint32_t i = 8; i < p->payload; i++)
				dg[i] = pattern(seq, i);
		}
		/* The cookie comes back in this send's event: it names the buffer. */
		err = gso_dgram__send(p->d, buf, n * p->payload, p->payload, k);
		if (err == -EAGAIN)
			return; /* backpressure: queue full, so a SENT event will come and call again */
		if (err) {
			set_err(p, "gso_dgram__send", err);
			return;
		}
		p->nseg[k] = n;
		p->next_seq += n;
	}
}

/* Say what failed, if anything, and free everything.  Returns the exit code. */
static int finish(struct pacer *p, const char *what, int err)
{
	if (err)
		set_err(p, what, err);
	/* Drops what is still queued (DROPPED events; err is set, so no refills): then all is ours. */
	gso_engine__destroy(p->e);
	free(p->mem);
	return p->err ? 1 : 0;
}

/* Runs inside gso_engine__run() (and __destroy()), on this thread: it may send, not run. */
static void on_event(void *ctx, const struct gso_engine_event *ev)
{
	struct pacer *p = ctx;

	/* Other events need nothing here: when the interface goes away every queued send is
	 * DROPPED (-ENODEV), and while the link is down the engine holds them. */
	if (ev->type != GSO_EV_DGRAM_SENT && ev->type != GSO_EV_DGRAM_DROPPED)
		return;
	/* Only now is the buffer ours again: until here the engine may still read it. */
	if (ev->type == GSO_EV_DGRAM_SENT)
		p->sent += p->nseg[ev->cookie];
	else
		set_err(p, "a datagram was dropped", ev->err);
	p->nseg[ev->cookie] = 0;
	refill(p);
	/* Done, or failed: gso_engine__run() returns now, not at its deadline. */
	if (p->sent == p->count || p->err)
		gso_engine__stop(p->e);
}

int main(int argc, char **argv)
{
	struct pacer p = { .payload = argc > 6 ? (uint32_t)atoi(argv[6]) : 1200 };
	GSO_OPTS(gso_route, rt);
	GSO_OPTS(gso_dgram_info, di);
	struct gso_tmpl t;
	uint8_t dst[16] = { 0 };
	int ifindex, l3, port, err;
	uint64_t t0, t1, slice;
	double mbit;

	if (argc < 6 || argc > 7) {
		fprintf(stderr, "usage: udp_pacer IFNAME DST PORT MBIT COUNT [PAYLOAD]\n");
		return 2;
	}
	ifindex = (int)if_nametoindex(argv[1]);
	l3 = inet_pton(AF_INET, argv[2], dst) == 1 ? GSO_L3_IPV4 :
	     inet_pton(AF_INET6, argv[2], dst) == 1 ? GSO_L3_IPV6 : 0;
	port = atoi(argv[3]);
	mbit = atof(argv[4]);
	p.count = strtoull(argv[5], NULL, 10);
	if (!ifindex || !l3 || port <= 0 || port > 65535 || !(mbit > 0) || !p.count || p.payload < 8) {
		fprintf(stderr, "udp_pacer: bad interface, address, port, rate, count or payload (< 8)\n");
		return 2;
	}

	/* Ask the kernel, not the user, for addresses and MACs (it resolves the next hop if need be). */
	err = gso_route__lookup(l3, dst, ifindex, 0, &rt);
	if (err)
		return finish(&p, "gso_route__lookup", err);
	GSO_OPTS(gso_tmpl_fields, f, .l4 = GSO_L4_UDP, .sport = SPORT, .dport = (uint16_t)port);
	gso_route__tmpl_fields(&rt, &f); /* MACs, addresses, DF for IPv4 */
	err = gso_tmpl__build(&t, &f);
	if (err)
		return finish(&p, "gso_tmpl__build", err);
	/* Woken late (a busy machine), the engine sends what is overdue, but at most catchup_ns
	 * worth (1 ms by default, short bursts); the rest of the delay is lost to the rate.
	 * This program is about the rate, so it allows 5 ms. */
	GSO_OPTS(gso_engine_opts, eo, .on_event = on_event, .ctx = &p, .catchup_ns = 5000000);
	/* One call: the library probes the interface and opens the best path for it (auto);
	 * this program only sends, so no receive sockets and no steering program. */
	GSO_OPTS(gso_path_opts, po, .path = GSO_PATH_AUTO, .flags = GSO_PATH_F_NO_RX);
	GSO_OPTS(gso_path_info, pi);
	err = gso_engine__open_path(&p.e, ifindex, &po, &eo);
	if (err)
		return finish(&p, "gso_engine__open_path", err);
	gso_engine__path(p.e, &pi);
	fprintf(stderr, "udp_pacer: %s on %s: %s\n", gso_path_name(pi.path), pi.ifname, pi.reason);
	/* The rate is in wire bytes: payload plus each datagram's Ethernet, IP and UDP headers.
	 * The flow queues as many sends as we have buffers; with .route it follows the next
	 * hop's MAC when the kernel's neighbour entry changes. */
	GSO_OPTS(gso_dgram_opts, o, .tmpl = &t, .rate = (uint64_t)(mbit * 1e6 / 8), .queue_len = NBUF,
		 .route = &rt);
	err = gso_dgram__open(&p.d, p.e, &o);
	if (err)
		return finish(&p, "gso_dgram__open", err);
	gso_dgram__info(p.d, &di);
	if (p.payload > di.max_gso_size)
		return finish(&p, "payload over gso_dgram_info.max_gso_size, one frame's worth", -EMSGSIZE);
	/* A super-segment is at most one IP datagram's worth, and max_segs datagrams. */
	p.per_send = di.max_len / p.payload < PER_SEND ? di.max_len / p.payload : PER_SEND;
	p.per_send = p.per_send < di.max_segs ? p.per_send : di.max_segs;
	p.mem = malloc((size_t)NBUF * p.per_send * p.payload);
	if (!p.mem)
		return finish(&p, "malloc", -ENOMEM);

	t0 = gso_evloop_now_ns();
	refill(&p);
	/* The rest happens in on_event.  A slice in which two super-segments were due and nothing
	 * was sent is a stall: link down or no carrier (the engine holds frames then, drops none). */
	slice = 1000000000ull + (uint64_t)(2e3 * p.per_send * (p.payload + t.hdr_len) * 8 / mbit);
	while (p.sent < p.count && !p.err) {
		uint64_t before = p.sent;

		err = gso_engine__run(p.e, gso_evloop_now_ns() + slice);
		if (err)
			set_err(&p, "gso_engine__run", err);
		else if (p.sent == before && p.sent < p.count)
			set_err(&p, "nothing sent for a while", -ETIMEDOUT);
	}
	t1 = gso_evloop_now_ns();
	if (p.err)
		return finish(&p, NULL, 0);
	/* SENT gave our memory back, but frames may still sit in the device's ring: let it finish. */
	err = gso_engine__drain(p.e, gso_evloop_now_ns() + slice);
	if (err)
		return finish(&p, "gso_engine__drain", err);
	printf("udp_pacer: sent=%llu elapsed_s=%.4f rate_mbit=%.2f asked_mbit=%.2f\n",
	       (unsigned long long)p.sent, (double)(t1 - t0) / 1e9,
	       (double)p.sent * (p.payload + t.hdr_len) * 8e3 / (double)(t1 - t0), mbit);
	return finish(&p, NULL, 0);
}
