/*
 * bench/bpf/impair_loss.bpf.c through `bench/impair xdp` on a test-bed's
 * receiving veth: UDP datagrams to the filtered port are dropped in about
 * the configured share (counted by the program itself, wide tolerance),
 * other traffic is not matched, a socket receives at most what was not
 * dropped, and the program is gone after the tool exits.  Counts only; no
 * timing is asserted.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "test_bench_util.h"

static struct nsbed tb;

static void fini(void)
{
	bt_fini();
	nsbed_destroy(&tb);
}

struct xdp_case {
	char loss[8];
	double p;
	double lo, hi;    /* bounds of dropped / matched */
	char seed[16];
};

static struct xdp_case xdp_cases[] = {
	{ "0", 0, 0, 0, "0" },
	{ "5", 0.05, 0.025, 0.085, "0" },
	{ "20", 0.20, 0.14, 0.26, "0" },
	{ "20", 0.20, 0.14, 0.26, "12345" }, /* the deterministic per-CPU PRNG */
	{ "100", 1, 0.999, 1, "0" },
};

ParameterizedTestParameters(bench_xdp, drops_configured_share)
{
	return cr_make_param_array(struct xdp_case, xdp_cases, sizeof(xdp_cases) / sizeof(xdp_cases[0]));
}

#define N_MATCH 4000
#define N_OTHER 300

ParameterizedTest(struct xdp_case *c, bench_xdp, drops_configured_share, .fini = fini, .timeout = 60)
{
	const char *ready = bt_path("ready");
	struct sockaddr_in dst = { .sin_family = AF_INET };
	char payload[200] = { 0 };
	uint64_t delivered = 0;
	int err, s, r, one = 1 << 22;

	gso_test_require_root();
	err = gso_testbed_create(&tb);
	cr_assert_eq(err, 0, "test-bed: %s", strerror(-err));

	/* A receiving socket in b, bound before the program is attached. */
	cr_assert_eq(nsbed_enter(&tb, 1), 0);
	r = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	cr_assert_geq(r, 0);
	setsockopt(r, SOL_SOCKET, SO_RCVBUFFORCE, &one, sizeof(one));
	dst.sin_port = htons(9999);
	cr_assert_eq(bind(r, (struct sockaddr *)&dst, sizeof(dst)), 0);

	const char *argv[] = { bt_prog("impair"), "xdp", "--netns", tb.ns[1], "--dev", tb.ifname[1],
			       "--loss", c->loss, "--proto", "udp", "--port", "9999", "--seed", c->seed,
			       "--json", "--ready-file", ready, NULL };
	struct bt_proc *xp = bt_spawn(argv);

	bt_wait_file(ready, xp, 10);
	cr_assert_eq(nsbed_enter(&tb, 0), 0);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	cr_assert_geq(s, 0);
	inet_pton(AF_INET, "10.77.0.2", &dst.sin_addr);
	for (int i = 0; i < N_MATCH + N_OTHER; i++) {
		dst.sin_port = htons(i < N_MATCH ? 9999 : 9998);
		memcpy(payload, &i, sizeof(i));
		cr_assert_eq(sendto(s, payload, sizeof(payload), 0, (struct sockaddr *)&dst, sizeof(dst)),
			     (ssize_t)sizeof(payload), "sendto: %s", strerror(errno));
		/* Stay inside the veth's NAPI ring: drops there are not the program's. */
		if (i % 64 == 63)
			usleep(2000);
	}
	usleep(200000);
	while (recv(r, payload, sizeof(payload), 0) > 0)
		delivered++;
	cr_assert_eq(bt_stop(xp, 10), 0, "impair xdp: %s", bt_read(xp->err));
	const char *j = bt_read(xp->out);
	double matched = bt_num(j, "matched"), dropped = bt_num(j, "dropped"), seen = bt_num(j, "seen");

	cr_log_info("loss %s%%: %s, %" PRIu64 " delivered", c->loss, j, delivered);
	cr_assert_str_eq(bt_str(j, "xdp_mode"), "native", "%s", j);
	/*
	 * Most datagrams reached the program (a starved NAPI poll may lose
	 * some in the veth ring first; the share is taken of what arrived);
	 * the other port is seen but not matched.
	 */
	cr_assert_geq(matched, 0.5 * N_MATCH, "%s", j);
	cr_assert_leq(matched, N_MATCH, "%s", j);
	cr_assert_geq(seen, matched + 0.5 * N_OTHER, "%s", j);
	cr_assert_geq(dropped / matched, c->lo, "dropped %g of %g: %s", dropped, matched, j);
	cr_assert_leq(dropped / matched, c->hi, "dropped %g of %g: %s", dropped, matched, j);
	cr_assert_leq((double)delivered, matched - dropped, "%s", j);
	if (c->p == 0)
		cr_assert_eq(dropped, 0);
	cr_assert_eq(bt_num(j, "dropped_bytes"), dropped * (14 + 20 + 8 + sizeof(payload)), "%s", j);
	/* The BPF link closed with the tool: no XDP program is left on the veth. */
	cr_assert_neq(nsbed_sh(&tb, 1, "ip link show %s | grep -q xdp", tb.ifname[1]), 0);
	close(s);
	close(r);
}
