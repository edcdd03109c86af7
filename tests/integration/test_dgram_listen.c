/*
 * Datagram receive on a real interface (engine.h, "Datagram receive"):
 * an echo server on a datagram listener in side a, on every transmit
 * path, answered by a plain UDP socket of the stock stack in side b.
 *
 * Each request carries a sequence number and asks for k copies of
 * itself (1..8); the server answers with one super-segment of k
 * datagrams cut at the request's length (gso_dgram__send on a flow from
 * gso_dgram__open_reply), from memory it holds until GSO_EV_DGRAM_SENT.
 * The client checks every answer byte for byte and counts the copies, so
 * the steering of the listener's port, the receive checks, the reply
 * template (addresses, ports, MAC, IPv4 and IPv6) and the segmentation of
 * every path are judged by the kernel's UDP.  A kernel socket bound to
 * the same port in side a hears nothing while the listener is open, and
 * everything once it is closed.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gso/engine.h>
#include "gso_test.h"

#define PORT 7710
#define NREQ 3000
#define WINDOW 16
#define NBUF 64
#define MAXK 8

static struct nsbed tb;

static void fini(void)
{
	nsbed_destroy(&tb);
}

static uint8_t pat(uint32_t seq, uint32_t i)
{
	return (uint8_t)(seq * 13 + i * 7 + 1);
}

static uint32_t req_len(uint32_t seq)
{
	return 8 + (seq * 389) % 1393; /* 8..1400 */
}

static uint32_t req_k(uint32_t seq)
{
	return 1 + seq % MAXK;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* ---- the server: echo k copies from the engine ---- */

struct server {
	struct gso_engine *e;
	struct gso_dgram_listener *l;
	struct gso_dgram *reply; /* one client: one flow (its port never changes) */
	uint16_t reply_port;
	uint8_t buf[NBUF][MAXK * 1400];
	bool busy[NBUF];
	uint64_t got, sent, no_buf, errors, done_events, sent_events;
	int last_err;
};

static void on_recv(void *ctx, struct gso_dgram_listener *l, const struct gso_dgram_msg *m)
{
	struct server *s = ctx;
	uint32_t k, slot;
	int err;

	s->got++;
	if (m->len < 8) {
		s->errors++;
		return;
	}
	if (!s->reply || s->reply_port != m->sport) {
		if (s->reply)
			gso_dgram__close(s->reply);
		s->reply = NULL;
		err = gso_dgram__open_reply(&s->reply, l, m, &(struct gso_dgram_opts){ .sz = sizeof(struct gso_dgram_opts),
											 .queue_len = NBUF });
		if (err) {
			s->errors++;
			s->last_err = err;
			return;
		}
		s->reply_port = m->sport;
	}
	for (slot = 0; slot < NBUF && s->busy[slot]; slot++)
		;
	if (slot == NBUF) {
		s->no_buf++; /* the client sends again after its timeout */
		return;
	}
	k = get32(m->data + 4);
	if (k < 1 || k > MAXK) {
		s->errors++;
		return;
	}
	for (uint32_t i = 0; i < k; i++)
		memcpy(s->buf[slot] + i * m->len, m->data, m->len);
	err = gso_dgram__send(s->reply, s->buf[slot], k * m->len, m->len, slot);
	if (err) {
		s->errors++;
		s->last_err = err;
		return;
	}
	s->busy[slot] = true;
	s->sent++;
}

static void on_event(void *ctx, const struct gso_engine_event *ev)
{
	struct server *s = ctx;

	if (ev->type == GSO_EV_DGRAM_SENT || ev->type == GSO_EV_DGRAM_DROPPED) {
		s->busy[ev->cookie] = false;
		s->sent_events += ev->type == GSO_EV_DGRAM_SENT;
		if (ev->type == GSO_EV_DGRAM_SENT)
			cr_assert_gt(ev->time_ns, 0);
	} else if (ev->type == GSO_EV_DGRAM_RECV_DONE) {
		s->done_events++;
		cr_assert_eq(ev->dlistener, s->l);
		cr_assert_gt(ev->acked, 0);
	}
}

/* ---- the client: a kernel socket in side b ---- */

struct client {
	int fd;
	int family;
	struct sockaddr_storage to;
	socklen_t tolen;
	uint8_t copies[NREQ];
	uint64_t bad, dup, resent;
	uint32_t complete;
	atomic_bool done;
	pthread_t th;
};

static void send_req(struct client *c, uint32_t seq)
{
	uint8_t b[1400];
	uint32_t n = req_len(seq);

	put32(b, seq);
	put32(b + 4, req_k(seq));
	for (uint32_t i = 8; i < n; i++)
		b[i] = pat(seq, i);
	if (sendto(c->fd, b, n, 0, (struct sockaddr *)&c->to, c->tolen) != (ssize_t)n)
		c->bad++;
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	uint32_t next = 0, base = 0;
	int quiet = 0;

	while (base < NREQ && quiet < 20) {
		uint8_t b[2048];
		ssize_t n;

		while (next < NREQ && next < base + WINDOW)
			send_req(c, next++);
		n = recv(c->fd, b, sizeof(b), 0);
		if (n < 0) {
			/* 100 ms without an answer: ask again for what is missing in the window. */
			quiet++;
			for (uint32_t s = base; s < next; s++)
				if (c->copies[s] < req_k(s)) {
					c->copies[s] = 0;
					c->resent++;
					send_req(c, s);
				}
			continue;
		}
		quiet = 0;
		if (n < 8) {
			c->bad++;
			continue;
		}
		uint32_t seq = get32(b);

		if (seq >= NREQ || (uint32_t)n != req_len(seq) || get32(b + 4) != req_k(seq)) {
			c->bad++;
			continue;
		}
		for (uint32_t i = 8; i < (uint32_t)n; i++)
			if (b[i] != pat(seq, i)) {
				c->bad++;
				break;
			}
		if (c->copies[seq] >= req_k(seq)) {
			c->dup++;
			continue;
		}
		if (++c->copies[seq] == req_k(seq))
			c->complete++;
		while (base < next && c->copies[base] >= req_k(base))
			base++;
	}
	atomic_store(&c->done, true);
	return NULL;
}

static int side_socket(int side, int family, uint16_t bind_port)
{
	struct sockaddr_storage a = { 0 };
	struct timeval tv = { .tv_usec = 100000 };
	int fd;

	cr_assert_eq(nsbed_enter(&tb, side), 0);
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(nsbed_enter(&tb, 0), 0);
	cr_assert_geq(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (bind_port) {
		if (family == AF_INET) {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&a;

			s4->sin_family = AF_INET;
			s4->sin_port = htons(bind_port);
		} else {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a;

			s6->sin6_family = AF_INET6;
			s6->sin6_port = htons(bind_port);
		}
		cr_assert_eq(bind(fd, (struct sockaddr *)&a, family == AF_INET ? sizeof(struct sockaddr_in)
										 : sizeof(struct sockaddr_in6)),
			     0, "bind: %s", strerror(errno));
	}
	return fd;
}

static void server_addr(int family, struct sockaddr_storage *to, socklen_t *len, uint8_t addr[16])
{
	memset(to, 0, sizeof(*to));
	memset(addr, 0, 16);
	if (family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)to;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(PORT);
		inet_pton(AF_INET, "10.77.0.1", &s4->sin_addr);
		memcpy(addr, &s4->sin_addr, 4);
		*len = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)to;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(PORT);
		inet_pton(AF_INET6, "fd77::1", &s6->sin6_addr);
		memcpy(addr, &s6->sin6_addr, 16);
		*len = sizeof(*s6);
	}
}

struct echo_case {
	uint32_t path;
	int family;
};

static struct echo_case cases[] = {
	{ GSO_PATH_AUTO, 4 },	  { GSO_PATH_AUTO, 6 },	    { GSO_PATH_SOFTWARE, 4 },     { GSO_PATH_SOFTWARE, 6 },
	{ GSO_PATH_CSUM, 4 },	  { GSO_PATH_CSUM, 6 },	    { GSO_PATH_MULTIBUF, 4 },     { GSO_PATH_MULTIBUF, 6 },
	{ GSO_PATH_OFFLOAD_VNET, 4 }, { GSO_PATH_OFFLOAD_VNET, 6 },
};

ParameterizedTestParameters(dgram_listen, echo)
{
	return cr_make_param_array(struct echo_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct echo_case *tc, dgram_listen, echo, .fini = fini, .timeout = 90)
{
	static struct server s;
	static struct client c;
	struct gso_dgram_listener_info li = { .sz = sizeof(li) };
	int family = tc->family == 6 ? AF_INET6 : AF_INET, kfd, err;
	uint8_t addr[16], b[64];

	gso_test_require_root();
	cr_assert_eq(gso_testbed_create(&tb), 0);
	memset(&s, 0, sizeof(s));
	memset(&c, 0, sizeof(c));
	{
		GSO_OPTS(gso_engine_opts, eo, .on_event = on_event, .ctx = &s);
		GSO_OPTS(gso_path_opts, po, .path = tc->path);

		cr_assert_eq(nsbed_enter(&tb, 0), 0);
		err = gso_engine__open_path(&s.e, tb.ifindex[0], &po, &eo);
		if (err == -EOPNOTSUPP) {
			cr_log_warn("path %s not available here", gso_path_name(tc->path));
			cr_assert_neq(getenv("CI") && !strcmp(getenv("CI"), "true"), true, "no skips under CI=true");
			return;
		}
		cr_assert_eq(err, 0, "open_path %s: %s", gso_path_name(tc->path), strerror(-err));
	}
	server_addr(family, &c.to, &c.tolen, addr);
	/* The kernel's socket on the same port, in side a: it must hear nothing while the listener is open. */
	kfd = side_socket(0, family, PORT);
	{
		GSO_OPTS(gso_dgram_listen_opts, lo, .l3 = family == AF_INET ? GSO_L3_IPV4 : GSO_L3_IPV6, .port = PORT,
			 .on_recv = on_recv, .ctx = &s);

		memcpy(lo.addr, addr, 16);
		cr_assert_eq(gso_dgram_listener__open(&s.l, s.e, &lo), 0);
	}
	c.fd = side_socket(1, family, 0);
	c.family = family;
	cr_assert_eq(pthread_create(&c.th, NULL, client_main, &c), 0);
	while (!atomic_load(&c.done)) {
		err = gso_engine__run(s.e, gso_evloop_now_ns() + 20000000ull);
		cr_assert_eq(err, 0, "%s", strerror(-err));
	}
	pthread_join(c.th, NULL);
	cr_assert_eq(gso_dgram_listener__info(s.l, &li), 0);
	cr_log_info("%s ipv%d: %u requests complete, %" PRIu64 " resent, %" PRIu64 " duplicate copies; server got %" PRIu64
		    ", sent %" PRIu64 " supers, %" PRIu64 " RECV_DONE, no buffer %" PRIu64 "; listener %" PRIu64
		    " datagrams in %" PRIu64 " passes, csum partial %" PRIu64,
		    gso_path_name(tc->path), tc->family, c.complete, c.resent, c.dup, s.got, s.sent, s.done_events,
		    s.no_buf, li.datagrams, li.passes, li.csum_partial);
	cr_assert_eq(c.complete, NREQ, "%u of %u requests answered in full", c.complete, NREQ);
	cr_assert_eq(c.bad, 0, "answers that were wrong");
	cr_assert_eq(s.errors, 0, "server errors, last %d", s.last_err);
	cr_assert_eq(li.bad_csum + li.bad_len, 0);
	cr_assert_eq(li.datagrams, s.got);
	cr_assert_eq(li.passes, s.done_events);
	cr_assert_geq(s.sent_events, NREQ);
	/* The kernel's socket heard none of it. */
	cr_assert_lt(recv(kfd, b, sizeof(b), MSG_DONTWAIT), 0, "the kernel socket got a listener's datagram");
	/* Closed: the port's datagrams reach the kernel again. */
	cr_assert_eq(gso_dgram_listener__close(s.l), 0);
	send_req(&c, 1);
	{
		ssize_t n = recv(kfd, b, sizeof(b), 0);

		for (int i = 0; i < 20 && n < 0; i++) {
			gso_engine__run(s.e, gso_evloop_now_ns() + 10000000ull);
			n = recv(kfd, b, sizeof(b), 0);
		}
		cr_assert_gt(n, 0, "after close the kernel socket hears the port: %s", strerror(errno));
	}
	close(kfd);
	close(c.fd);
	gso_engine__destroy(s.e);
}
