/*
 * Opening a transmit path in one call, and steering that cannot be
 * half-done, on the tests' veth test-bed (side a sends with the library,
 * side b's own stack receives):
 *  - an engine made with gso_engine_opts.steer and nothing else (no
 *    gso_steer__add_dev) connects a stream to a kernel listener and
 *    delivers every byte: the engine joins its receive device to the
 *    program;
 *  - gso_engine__open_path() in auto mode on a veth with TSO off picks
 *    AF_XDP (software: copy mode) and says why; with TSO on it picks
 *    offload-vnet; either delivers a verified stream; a named path runs
 *    as named;
 *  - a port in auto mode takes the AF_XDP path and its engines say so.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <gso/engine.h>
#include <gso/ifcaps.h>
#include <gso/port.h>
#include <gso/route.h>
#include <gso/steer.h>
#include <gso/xsk.h>

#include "gso_test.h"

#define PEER "10.77.0.2"
#define PORT 5411
#define TOTAL (2u << 20)

static struct nsbed tb;

static void fini(void)
{
	nsbed_destroy(&tb);
}

static int bed(bool tso)
{
	gso_test_require_root();
	cr_assert_eq(gso_testbed_create(&tb), 0);
	/* The veth's features as the case wants them (a veth does TSO by default). */
	cr_assert_eq(nsbed_sh(&tb, 0, "ethtool -K %s tso %s >/dev/null", tb.ifname[0], tso ? "on" : "off"), 0);
	cr_assert_eq(nsbed_enter(&tb, 0), 0);
	return tb.ifindex[0];
}

static uint8_t pat(uint64_t i)
{
	return (uint8_t)(i * 7 + (i >> 11) + 3);
}

/* ---- the kernel's side: a listener in side b that reads and checks every byte ---- */

struct sink {
	int lfd;
	uint64_t got, bad;
	bool eof;
	pthread_t th;
};

static void *sink_main(void *arg)
{
	struct sink *k = arg;
	uint8_t buf[65536];
	int fd = accept(k->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n <= 0) {
			k->eof = n == 0;
			break;
		}
		for (ssize_t i = 0; i < n; i++)
			k->bad += buf[i] != pat(k->got + (uint64_t)i);
		k->got += (uint64_t)n;
	}
	close(fd);
	return NULL;
}

static void sink_start(struct sink *k)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	int one = 1;

	memset(k, 0, sizeof(*k));
	cr_assert_eq(nsbed_enter(&tb, 1), 0);
	k->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(nsbed_enter(&tb, 0), 0);
	cr_assert_geq(k->lfd, 0);
	setsockopt(k->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	inet_pton(AF_INET, PEER, &a.sin_addr);
	cr_assert_eq(bind(k->lfd, (struct sockaddr *)&a, sizeof(a)), 0, "bind: %s", strerror(errno));
	cr_assert_eq(listen(k->lfd, 4), 0);
	cr_assert_eq(pthread_create(&k->th, NULL, sink_main, k), 0);
}

static void sink_stop(struct sink *k)
{
	shutdown(k->lfd, SHUT_RDWR);
	pthread_join(k->th, NULL);
	close(k->lfd);
}

/* ---- our side: one stream of TOTAL pattern bytes ---- */

struct flow {
	struct gso_stream *s;
	uint64_t written;
	bool shut, closed;
	int err;
};

static void on_event(void *ctx, const struct gso_engine_event *ev)
{
	struct flow *f = ctx;

	if (ev->type == GSO_EV_STREAM_WRITABLE) {
		while (!f->shut) {
			uint8_t buf[16384];
			uint32_t n = TOTAL - f->written < sizeof(buf) ? (uint32_t)(TOTAL - f->written) : sizeof(buf);
			int w;

			if (!n) {
				f->shut = true;
				gso_stream__shutdown(f->s);
				break;
			}
			for (uint32_t i = 0; i < n; i++)
				buf[i] = pat(f->written + i);
			w = gso_stream__write(f->s, buf, n);
			if (w <= 0)
				break;
			f->written += (uint64_t)w;
		}
	} else if (ev->type == GSO_EV_STREAM_CLOSED) {
		f->closed = true;
		f->err = ev->err;
	}
}

/* Connect, send TOTAL bytes, FIN; the kernel must read every one of them intact. */
static void transfer(struct gso_engine *e, struct flow *f, int ifindex)
{
	GSO_OPTS(gso_route, rt);
	GSO_OPTS(gso_stream_info, si);
	uint8_t dst[16] = { 0 };
	struct sink k;
	uint64_t end;

	sink_start(&k);
	inet_pton(AF_INET, PEER, dst);
	cr_assert_eq(gso_route__lookup(GSO_L3_IPV4, dst, ifindex, 2000, &rt), 0);
	{
		GSO_OPTS(gso_stream_opts, so, .route = &rt, .sport = 40411, .dport = PORT,
			 .idle_ns = 4000000000ull, .ctx = f);

		cr_assert_eq(gso_stream__connect(&f->s, e, &so), 0);
	}
	end = gso_evloop_now_ns() + 30000000000ull;
	while (!f->closed && gso_evloop_now_ns() < end)
		gso_engine__run(e, gso_evloop_now_ns() + 20000000ull);
	gso_stream__info(f->s, &si);
	cr_assert(f->closed, "stream not closed in 30 s");
	cr_assert_eq(f->err, 0, "stream ended with %s (%s)", strerror(-f->err), si.why ? si.why : "");
	sink_stop(&k);
	cr_assert_eq(k.got, TOTAL, "the kernel read %lu of %u bytes", (unsigned long)k.got, TOTAL);
	cr_assert_eq(k.bad, 0, "%lu bytes differ", (unsigned long)k.bad);
	cr_assert(k.eof, "no FIN");
	gso_stream__close(f->s);
}

Test(engine_steer, connect_without_add_dev, .fini = fini, .timeout = 90)
{
	int ifindex = bed(false);
	struct gso_steer *steer;
	struct gso_engine *e;
	struct flow f = { 0 };
	GSO_OPTS(gso_steer_stats, st);

	cr_assert_eq(gso_steer__create(&steer, ifindex, NULL), 0);
	{
		GSO_OPTS(gso_engine_opts, eo, .on_event = on_event, .ctx = &f, .steer = steer);

		/* No gso_steer__add_dev(): the engine's receive device joins the program by itself. */
		cr_assert_eq(gso_engine__open(&e, ifindex, 0, NULL, &eo), 0);
	}
	cr_assert_eq(gso_steer__stats(steer, &st), 0);
	cr_assert_eq(st.devs, 1, "the engine's device is in the program");
	cr_assert_eq(gso_engine__steer(e), steer);
	cr_assert_eq(gso_engine__path(e, &(struct gso_path_info){ .sz = sizeof(struct gso_path_info) }), -ENOENT);
	transfer(e, &f, ifindex);
	gso_engine__destroy(e);
	cr_assert_eq(gso_steer__stats(steer, &st), 0);
	cr_assert_eq(st.devs, 0, "destroy took the device out of the program");
	gso_steer__destroy(steer);
}

/* Open in one call, check what was chosen, send a verified stream. */
static void open_and_send(int ifindex, uint32_t path, uint32_t want, uint32_t why)
{
	GSO_OPTS(gso_path_info, pi);
	struct gso_engine *e;
	struct flow f = { 0 };
	GSO_OPTS(gso_engine_opts, eo, .on_event = on_event, .ctx = &f);
	GSO_OPTS(gso_path_opts, po, .path = path);

	cr_assert_eq(gso_engine__open_path(&e, ifindex, &po, &eo), 0);
	cr_assert_eq(gso_engine__path(e, &pi), 0);
	cr_assert_eq(pi.path, want, "chose %s (%s), want %s", gso_path_name(pi.path), pi.reason, gso_path_name(want));
	cr_assert_eq(pi.asked, path);
	cr_assert_eq(pi.why, why, "why %u: %s", pi.why, pi.reason);
	cr_assert_not_null(pi.reason);
	cr_assert_str_eq(pi.ifname, tb.ifname[0]);
	cr_assert_str_eq(pi.driver, "veth");
	cr_assert_geq(pi.rx_devs, 1);
	cr_assert_not_null(gso_engine__steer(e), "its own steering program");
	cr_assert_geq(gso_xsk__queue(gso_engine__rx(e, 0)), 0, "receive device 0 is AF_XDP");
	if (want == GSO_PATH_OFFLOAD_VNET)
		cr_assert_eq(gso_xsk__fd(gso_engine__dev(e)), -EINVAL, "transmit device is not AF_XDP");
	else
		cr_assert_eq(gso_engine__dev(e), gso_engine__rx(e, 0), "the AF_XDP device receives too");
	transfer(e, &f, ifindex);
	gso_engine__destroy(e);
}

Test(engine_path, auto_veth_no_tso_picks_xdp, .fini = fini, .timeout = 90)
{
	int ifindex = bed(false);

	open_and_send(ifindex, GSO_PATH_AUTO, GSO_PATH_SOFTWARE, GSO_PATH_WHY_COPY_MODE);
	{
		GSO_OPTS(gso_path_info, pi);
		struct gso_engine *e;

		cr_assert_eq(gso_engine__open_path(&e, ifindex, NULL, NULL), 0);
		cr_assert_eq(gso_engine__path(e, &pi), 0);
		cr_assert(strstr(pi.reason, "AF_XDP") && strstr(pi.reason, "no TSO"), "reason: %s", pi.reason);
		gso_engine__destroy(e);
	}
}

Test(engine_path, auto_veth_tso_picks_vnet, .fini = fini, .timeout = 90)
{
	int ifindex = bed(true);

	open_and_send(ifindex, GSO_PATH_AUTO, GSO_PATH_OFFLOAD_VNET, GSO_PATH_WHY_TSO);
}

Test(engine_path, named_paths, .fini = fini, .timeout = 90)
{
	int ifindex = bed(true);
	struct gso_engine *e;
	GSO_OPTS(gso_path_opts, bad, .path = GSO_PATH_COUNT);
	GSO_OPTS(gso_path_opts, badq, .path = GSO_PATH_SOFTWARE, .queue_id = 7);

	open_and_send(ifindex, GSO_PATH_SOFTWARE, GSO_PATH_SOFTWARE, GSO_PATH_WHY_ASKED);
	cr_assert_eq(gso_engine__open_path(&e, ifindex, &bad, NULL), -EINVAL);
	cr_assert_eq(gso_engine__open_path(&e, ifindex, &badq, NULL), -ENXIO);
	cr_assert_eq(gso_engine__open_path(NULL, ifindex, NULL, NULL), -EINVAL);
	cr_assert_eq(gso_engine__open_path(&e, 0, NULL, NULL), -EINVAL);
	cr_assert_str_eq(gso_path_name(GSO_PATH_OFFLOAD_VNET), "offload-vnet");
	cr_assert_null(gso_path_name(GSO_PATH_COUNT));
	{
		/* Datagrams only: the transmit device alone, no program. */
		GSO_OPTS(gso_path_opts, po, .path = GSO_PATH_SOFTWARE, .flags = GSO_PATH_F_NO_RX);

		cr_assert_eq(gso_engine__open_path(&e, ifindex, &po, NULL), 0);
		cr_assert_null(gso_engine__steer(e));
		cr_assert_null(gso_engine__rx(e, 0));
		gso_engine__destroy(e);
	}
}

Test(engine_path, port_auto_is_xdp, .fini = fini, .timeout = 60)
{
	int ifindex = bed(true);
	struct gso_port *p;
	GSO_OPTS(gso_path_info, pi);
	GSO_OPTS(gso_port_opts, po, .queues = 1);
	GSO_OPTS(gso_port_opts, vnet, .queues = 1, .path = GSO_PATH_OFFLOAD_VNET);

	int r = gso_port__open(&p, ifindex, &po);

	cr_assert_eq(r, 0, "gso_port__open: %s", strerror(-r));
	cr_assert_eq(gso_engine__path(gso_port__engine(p, 0), &pi), 0);
	cr_assert_eq(pi.path, GSO_PATH_SOFTWARE, "port auto chose %s", gso_path_name(pi.path));
	cr_assert_eq(pi.why, GSO_PATH_WHY_PORT, "%s", pi.reason);
	gso_port__destroy(p);
	cr_assert_eq(gso_port__open(&p, ifindex, &vnet), -EOPNOTSUPP);
}
