/*
 * The port's pure parts: the SPSC ring (xdp/port/port_ring.c: order, full,
 * wrap of the free-running indices, two threads exchanging 10^6 items),
 * and flow placement (xdp/port/port_rss.c) against the published RSS
 * verification vectors of Microsoft's "Verifying the RSS Hash
 * Calculation" (default key; IPv4 and IPv6, with TCP ports).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <gso/port.h>
#include "port/port_internal.h"

Test(port_ring, order_full_wrap)
{
	struct pring r;
	uint32_t *slot;

	cr_assert_eq(gsoi_pring_init(&r, 3, 4), -EINVAL);
	cr_assert_eq(gsoi_pring_init(&r, 1, 4), -EINVAL);
	cr_assert_eq(gsoi_pring_init(&r, 8, 4), 0);
	/* Start near the 32-bit wrap so that it happens mid-test. */
	atomic_store(&r.head, UINT32_MAX - 5);
	atomic_store(&r.tail, UINT32_MAX - 5);
	r.cached_tail = r.cached_head = UINT32_MAX - 5;
	uint32_t next_in = 0, next_out = 0;

	for (int round = 0; round < 5; round++) {
		cr_assert_null(gsoi_pring_peek(&r), "empty");
		for (int i = 0; i < 8; i++) {
			slot = gsoi_pring_reserve(&r);
			cr_assert_not_null(slot, "room for 8");
			*slot = next_in++;
			gsoi_pring_push(&r);
		}
		cr_assert_null(gsoi_pring_reserve(&r), "full after 8");
		for (int i = 0; i < 3; i++) {
			slot = gsoi_pring_peek(&r);
			cr_assert_not_null(slot);
			cr_assert_eq(*slot, next_out++);
			gsoi_pring_pop(&r);
		}
		for (int i = 0; i < 3; i++) {
			slot = gsoi_pring_reserve(&r);
			cr_assert_not_null(slot);
			*slot = next_in++;
			gsoi_pring_push(&r);
		}
		cr_assert_null(gsoi_pring_reserve(&r));
		while ((slot = gsoi_pring_peek(&r))) {
			cr_assert_eq(*slot, next_out++, "in order");
			gsoi_pring_pop(&r);
		}
		cr_assert_eq(next_in, next_out);
	}
	gsoi_pring_fini(&r);
}

/* Items the two threads exchange (the TSan build passes fewer: see the Makefile). */
#ifdef GSO_TEST_RING_XCHG
#define XCHG GSO_TEST_RING_XCHG
#else
#define XCHG 1000000u
#endif

static void *consumer(void *arg)
{
	struct pring *r = arg;
	uint64_t *bad = calloc(1, sizeof(*bad));

	for (uint32_t want = 0; want < XCHG;) {
		uint32_t *v = gsoi_pring_peek(r);

		if (!v)
			continue;
		if (*v != want)
			(*bad)++;
		want++;
		gsoi_pring_pop(r);
	}
	return bad;
}

Test(port_ring, two_threads_no_loss, .timeout = 60)
{
	struct pring r;
	pthread_t t;
	uint64_t *bad, full = 0;

	cr_assert_eq(gsoi_pring_init(&r, 64, sizeof(uint32_t)), 0);
	cr_assert_eq(pthread_create(&t, NULL, consumer, &r), 0);
	for (uint32_t i = 0; i < XCHG;) {
		uint32_t *slot = gsoi_pring_reserve(&r);

		if (!slot) {
			full++;
			continue;
		}
		*slot = i++;
		gsoi_pring_push(&r);
	}
	pthread_join(t, (void **)&bad);
	cr_assert_eq(*bad, 0, "%lu items out of order or lost", (unsigned long)*bad);
	free(bad);
	cr_assert_null(gsoi_pring_peek(&r), "nothing left over");
	gsoi_pring_fini(&r);
}

/* ---- RSS ---- */

struct rss_vec {
	const char *src, *dst;
	uint16_t sport, dport;
	uint32_t hash_l3, hash_l4;
};

/* Microsoft's verification suite: the frame's source is the remote end (gso_flow.saddr). */
static const struct rss_vec v4[] = {
	{ "66.9.149.187", "161.142.100.80", 2794, 1766, 0x323e8fc2, 0x51ccc178 },
	{ "199.92.111.2", "65.69.140.83", 14230, 4739, 0xd718262a, 0xc626b0ea },
	{ "24.19.198.95", "12.22.207.184", 12898, 38024, 0xd2d0a5de, 0x5c2b394a },
	{ "38.27.205.30", "209.142.163.6", 48228, 2217, 0x82989176, 0xafc7327f },
	{ "153.39.163.191", "202.188.127.2", 44251, 1303, 0x5d1809c5, 0x10e828a2 },
};

static const struct rss_vec v6[] = {
	{ "3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1", 2794, 1766, 0x2cc18cd5, 0x40207d3d },
	{ "3ffe:501:8::260:97ff:fe40:efab", "ff02::1", 14230, 4739, 0x0f0c461c, 0xdde51bbf },
	{ "3ffe:1900:4545:3:200:f8ff:fe21:67cf", "fe80::200:f8ff:fe21:67cf", 44251, 38024, 0x4b61e985,
	  0x02d1feef },
};

static struct gso_flow mkflow(int l3, const struct rss_vec *v)
{
	struct gso_flow f = { .sz = sizeof(f), .l3 = (uint8_t)l3, .l4 = GSO_L4_TCP, .sport = v->sport,
			      .dport = v->dport };
	int af = l3 == GSO_L3_IPV4 ? AF_INET : AF_INET6;

	cr_assert_eq(inet_pton(af, v->src, f.saddr), 1);
	cr_assert_eq(inet_pton(af, v->dst, f.daddr), 1);
	return f;
}

Test(port_rss, microsoft_vectors)
{
	for (size_t i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		struct gso_flow f = mkflow(GSO_L3_IPV4, &v4[i]);
		uint8_t in[8];

		memcpy(in, f.saddr, 4);
		memcpy(in + 4, f.daddr, 4);
		cr_assert_eq(gsoi_port_toeplitz(gsoi_port_rss_key, 40, in, 8), v4[i].hash_l3, "IPv4 row %zu", i);
		cr_assert_eq(gso_flow__rss_hash(&f), v4[i].hash_l4, "IPv4+TCP row %zu: %08x", i, gso_flow__rss_hash(&f));
	}
	for (size_t i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		struct gso_flow f = mkflow(GSO_L3_IPV6, &v6[i]);
		uint8_t in[32];

		memcpy(in, f.saddr, 16);
		memcpy(in + 16, f.daddr, 16);
		cr_assert_eq(gsoi_port_toeplitz(gsoi_port_rss_key, 40, in, 32), v6[i].hash_l3, "IPv6 row %zu", i);
		cr_assert_eq(gso_flow__rss_hash(&f), v6[i].hash_l4, "IPv6+TCP row %zu: %08x", i, gso_flow__rss_hash(&f));
	}
}

Test(port_rss, bad_input)
{
	struct gso_flow f = { .sz = sizeof(f), .l3 = 7 };
	struct gso_flow ok = mkflow(GSO_L3_IPV4, &v4[0]);

	cr_assert_eq(gso_flow__rss_hash(NULL), 0);
	cr_assert_eq(gso_flow__rss_hash(&f), 0);
	ok.sz = 0;
	cr_assert_eq(gso_flow__rss_hash(&ok), 0, "sz not set");
	cr_assert_eq(gso_port__queue_of(NULL, &f), -EINVAL);
}

Test(port_rss, queue_of_stable_and_spread)
{
	/* queue_of reads only p->n: a port shell with a handle of its own is enough here. */
	struct port shell = { .n = 2 };
	unsigned count[2] = { 0 };
	struct gso_flow f = mkflow(GSO_L3_IPV4, &v4[0]);
	struct gso_port *p;

	shell.handle = gsoi_handle_new(&shell, HANDLE_PORT);
	cr_assert_neq(shell.handle, 0);
	p = (struct gso_port *)shell.handle;
	cr_assert_eq(gso_port__queue_of(p, &f), (int)(0x51ccc178u % 2));
	for (uint16_t port = 1000; port < 1400; port++) {
		int q1, q2;

		f.dport = port;
		q1 = gso_port__queue_of(p, &f);
		q2 = gso_port__queue_of(p, &f);
		cr_assert_eq(q1, q2, "stable");
		cr_assert(q1 == 0 || q1 == 1);
		count[q1]++;
	}
	/* 400 flows: both queues get a fair share (a binomial far tail would be < 120). */
	cr_assert(count[0] > 120 && count[1] > 120, "%u / %u", count[0], count[1]);
	gsoi_handle_free(shell.handle);
	cr_assert_eq(gso_port__queue_of(p, &f), -EBADF, "a freed handle is stale");
}
