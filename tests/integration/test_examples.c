/*
 * The examples/ programs, run as a user would run them, across a veth
 * test-bed: examples/udp_sink in side b, examples/udp_pacer in side a
 * (AF_XDP on the veth), each through `ip netns exec`.  Every datagram must
 * arrive intact, and the rate the pacer measured must be near the one
 * asked: a functional check of pacing, with a wide band, not a speed test.
 * `make check-install` builds the examples against the installed library
 * (in `make check` it runs before the tests).
 */
#include <math.h>

#include "test_bench_util.h"

#define EX_COUNT "20000"
#define EX_MBIT 200.0

static struct nsbed tb;

static void fini(void)
{
	bt_fini();
	nsbed_destroy(&tb);
}

/* A built example, or the test fails saying how to build it. */
static const char *example(const char *name, char *path, size_t len)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "examples/%s", name);
	snprintf(path, len, "%s", gso_test_build_path(rel));
	cr_assert_eq(access(path, X_OK), 0, "%s: %s; the examples are built by `make check-install`",
		     path, strerror(errno));
	return path;
}

/* The number after "key=" in a program's output line, or NAN. */
static double kv(const char *out, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "%s=", key);
	p = strstr(out, pat);
	return p ? strtod(p + strlen(pat), NULL) : NAN;
}

/* Wait until the sink says on stderr that it is bound. */
static void wait_listening(struct bt_proc *p, double timeout_s)
{
	double end = bt_now() + timeout_s;

	while (!strstr(bt_read(p->err), "listening")) {
		cr_assert(bt_now() < end && kill(p->pid, 0) == 0, "udp_sink not listening: %s", bt_read(p->err));
		usleep(10000);
	}
}

struct ex_case {
	char name[8];
	char dst[32];
	char port[8];
};

static struct ex_case ex_cases[] = {
	{ "ipv4", "10.77.0.2", "7501" },
	{ "ipv6", "fd77::2", "7502" },
};

ParameterizedTestParameters(examples, pacer_to_sink)
{
	return cr_make_param_array(struct ex_case, ex_cases, sizeof(ex_cases) / sizeof(ex_cases[0]));
}

ParameterizedTest(struct ex_case *c, examples, pacer_to_sink, .fini = fini, .timeout = 60)
{
	char pacer[4096], sink[4096], mbit[16];
	struct bt_proc *pp, *sp;
	const char *pout, *sout;
	int err, ps, ss;
	double rate;

	gso_test_require_root();
	example("udp_pacer", pacer, sizeof(pacer));
	example("udp_sink", sink, sizeof(sink));
	err = gso_testbed_create(&tb);
	cr_assert_eq(err, 0, "test-bed: %s", strerror(-err));
	snprintf(mbit, sizeof(mbit), "%.0f", EX_MBIT);

	const char *sargv[] = { bt_ip_cmd(), "netns", "exec", tb.ns[1], sink, c->port, EX_COUNT, "1200", "5", NULL };
	sp = bt_spawn(sargv);
	wait_listening(sp, 10);
	const char *pargv[] = { bt_ip_cmd(), "netns", "exec", tb.ns[0], pacer, tb.ifname[0], c->dst,
				c->port, mbit, EX_COUNT, "1200", NULL };
	pp = bt_spawn(pargv);
	ps = bt_wait(pp, 30);
	ss = bt_wait(sp, 15);
	pout = bt_read(pp->out);
	sout = bt_read(sp->out);
	/* Each program's stdout and stderr in the message: its one line, or what failed. */
	cr_assert_eq(ps, 0, "%s: udp_pacer exit %d: %s%s", c->name, ps, pout, bt_read(pp->err));
	cr_assert_eq(ss, 0, "%s: udp_sink exit %d: %s%s", c->name, ss, sout, bt_read(sp->err));
	cr_assert_eq(kv(pout, "sent"), atof(EX_COUNT), "%s: %s", c->name, pout);
	cr_assert_eq(kv(sout, "received"), atof(EX_COUNT), "%s: %s", c->name, sout);
	cr_assert(kv(sout, "bad") == 0 && kv(sout, "dup") == 0 && kv(sout, "missing") == 0, "%s: %s", c->name, sout);
	rate = kv(pout, "rate_mbit");
	cr_log_info("%s: %s", c->name, pout);
	cr_assert(rate >= 0.9 * EX_MBIT && rate <= 1.1 * EX_MBIT, "%s: paced at %.1f Mbit/s, asked %.0f: %s",
		  c->name, rate, EX_MBIT, pout);
}
