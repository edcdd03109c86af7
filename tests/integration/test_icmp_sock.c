/*
 * The kernel's copy of the path-MTU errors (xdp/kernel/icmp_sock.c), which
 * an engine reads for the errors that come in on a queue without an
 * AF_XDP socket of its own: on a veth in a namespace with no XDP program,
 * an ICMP "fragmentation needed" and an ICMPv6 "packet too big" sent at
 * the interface from the other side come back from the raw sockets as
 * frames that the parser (gsoi_icmp_err_parse) reads as the errors they
 * were, quoted ports and sequence number included; an echo request and a
 * port unreachable (no path-MTU errors) are filtered out.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <sys/socket.h>

#include "gso_test.h"
#include "icmpframe.h"
#include "engine/icmp_err_internal.h"
#include "kernel/icmp_sock_internal.h"

static struct nsbed tb;

static void fini(void)
{
	nsbed_destroy(&tb);
}

TestSuite(icmp_sock, .fini = fini, .timeout = 60);

struct got {
	unsigned n;
	struct icmp_err e;
	enum icmp_err_verdict v;
};

static void on_frame(void *ctx, const uint8_t *frame, uint32_t len)
{
	struct got *g = ctx;

	g->n++;
	g->v = gsoi_icmp_err_parse(frame, len, &g->e);
}

/* The knobs of an error from side 1 (the router) to side 0 (us), quoting our TCP packet to 192.0.2.7. */
static struct icmp_knobs knobs(bool v6, uint8_t type, uint8_t code)
{
	struct icmp_knobs k = { .v6 = v6, .type = type, .code = code, .mtu = 1280, .q_ver = v6 ? 6 : 4,
				.q_ihl = 5, .q_proto = IPPROTO_TCP, .q_l4 = 20, .lport = 5555, .rport = 80,
				.seq = 0x12345678 };

	if (v6) {
		inet_pton(AF_INET6, "fd78::2", k.router);
		inet_pton(AF_INET6, "fd78::1", k.our);
		inet_pton(AF_INET6, "2001:db8::7", k.peer);
	} else {
		inet_pton(AF_INET, "10.78.0.2", k.router);
		inet_pton(AF_INET, "10.78.0.1", k.our);
		inet_pton(AF_INET, "192.0.2.7", k.peer);
	}
	return k;
}

/* Put the frame on the wire from side 1, to side 0's MAC. */
static void send_frame(int pfd, struct icmp_frame *f)
{
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_ifindex = tb.ifindex[1], .sll_halen = 6 };

	memcpy(f->b, tb.mac[0], 6);
	memcpy(f->b + 6, tb.mac[1], 6);
	memcpy(to.sll_addr, tb.mac[0], 6);
	cr_assert_eq(sendto(pfd, f->b, f->len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)f->len,
		     "sendto: %s", strerror(errno));
}

/* What the socket of `fd` hands back within `ms`. */
static struct got take(const struct icmp_sock *s, int fd, int ms)
{
	struct got g = { 0 };
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, ms) == 1)
		gsoi_icmp_sock_read(s, fd, 16, on_frame, &g);
	return g;
}

Test(icmp_sock, kernel_copy_of_pmtu_errors)
{
	static const char *const ip4[2] = { "10.78.0.1/24", "10.78.0.2/24" }, *const ip6[2] = { "fd78::1/64",
												 "fd78::2/64" };
	struct nsbed_opts o = { .ip4 = { ip4[0], ip4[1] }, .ip6 = { ip6[0], ip6[1] } };
	struct icmp_sock s;
	struct icmp_frame f;
	struct icmp_knobs k;
	struct got g;
	int pfd;

	gso_test_require_root();
	cr_assert_eq(nsbed_create(&tb, &o), 0);
	cr_assert_eq(nsbed_enter(&tb, 0), 0);
	cr_assert_eq(gsoi_icmp_sock_open(&s, tb.ifindex[0]), 0);
	cr_assert_eq(nsbed_enter(&tb, 1), 0);
	pfd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	cr_assert_geq(pfd, 0, "AF_PACKET: %s", strerror(errno));

	for (int v6 = 0; v6 < 2; v6++) {
		k = knobs(v6, v6 ? 2 : 3, v6 ? 0 : 4);
		icmp_frame_build(&f, &k);
		send_frame(pfd, &f);
		g = take(&s, v6 ? s.fd6 : s.fd4, 2000);
		cr_assert_eq(g.n, 1, "v%d: %u frames from the kernel", v6 ? 6 : 4, g.n);
		cr_assert_eq(g.v, ICMP_ERR_PMTU, "v%d: verdict %d", v6 ? 6 : 4, g.v);
		cr_expect_eq(g.e.l3, v6 ? 6 : 4);
		cr_expect_eq(g.e.l4, IPPROTO_TCP);
		cr_expect_eq(g.e.mtu, 1280);
		cr_expect_eq(g.e.lport, 5555);
		cr_expect_eq(g.e.rport, 80);
		cr_expect_eq(g.e.seq, 0x12345678u);
		cr_expect_eq(memcmp(g.e.local, k.our, v6 ? 16 : 4), 0);
		cr_expect_eq(memcmp(g.e.remote, k.peer, v6 ? 16 : 4), 0);
		cr_expect_eq(memcmp(g.e.router, k.router, v6 ? 16 : 4), 0);

		/* An echo request, a port unreachable: no path-MTU errors, filtered out. */
		k = knobs(v6, v6 ? 128 : 8, 0);
		icmp_frame_build(&f, &k);
		send_frame(pfd, &f);
		k = knobs(v6, v6 ? 1 : 3, v6 ? 4 : 3);
		icmp_frame_build(&f, &k);
		send_frame(pfd, &f);
		g = take(&s, v6 ? s.fd6 : s.fd4, 300);
		cr_expect_eq(g.n, 0, "v%d: %u frames came through", v6 ? 6 : 4, g.n);
	}
	close(pfd);
	gsoi_icmp_sock_close(&s);
	gsoi_icmp_sock_close(&s);
	cr_expect_eq(s.fd4, -1);
	cr_expect_eq(s.fd6, -1);
}
