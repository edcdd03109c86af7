/*
 * Shared by the bench integration tests (test_bench_*.c): run the bench
 * programs (build/bench/receiver, kernel_sender, impair) as child
 * processes with their stdout in a temporary file, wait for them with a
 * deadline (killed by PID past it), and read keys of their JSON lines.
 * Every child is killed and reaped in bt_fini(), which Criterion runs even
 * after a failed assertion, before the test-beds are removed.
 */
#ifndef TEST_BENCH_UTIL_H
#define TEST_BENCH_UTIL_H

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gso_test.h"

#define BT_MAX_PROCS 8
#define BT_MAX_ARGS 48

struct bt_proc {
	pid_t pid;
	int status; /* exit code once reaped, 128+sig if killed, -1 before */
	char out[128], err[128];
};

static struct bt_proc bt_procs[BT_MAX_PROCS];
static int bt_nprocs;
static char bt_dir[64];

extern char **environ;

static inline double bt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A private scratch directory for outputs and ready files. */
static inline const char *bt_tmpdir(void)
{
	if (!bt_dir[0]) {
		snprintf(bt_dir, sizeof(bt_dir), "/tmp/gso-bench-test-XXXXXX");
		cr_assert_not_null(mkdtemp(bt_dir), "mkdtemp: %s", strerror(errno));
	}
	return bt_dir;
}

static inline const char *bt_path(const char *name)
{
	static __thread char p[8][128];
	static __thread int k;
	char *s = p[k++ & 7];

	snprintf(s, 128, "%s/%s", bt_tmpdir(), name);
	return s;
}

/* The bench program `name`; fails the test when it was not built. */
static inline const char *bt_prog(const char *name)
{
	static __thread char p[4][4096];
	static __thread int k;
	char *s = p[k++ & 3];
	char rel[64];

	snprintf(rel, sizeof(rel), "bench/%s", name);
	snprintf(s, 4096, "%s", gso_test_build_path(rel));
	cr_assert_eq(access(s, X_OK), 0, "%s not built (make bench-progs): %s", s, strerror(errno));
	return s;
}

/* bt_spawn() wants a path: `ip` where Debian and others put it (for `ip netns exec`). */
static inline const char *bt_ip_cmd(void)
{
	static const char *const where[] = { "/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip" };

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (!access(where[i], X_OK))
			return where[i];
	cr_assert_fail("no ip(8) found");
	return NULL;
}

/* Spawn argv (NULL-terminated); stdout/stderr go to files.  Returns the slot. */
static inline struct bt_proc *bt_spawn(const char *const *argv)
{
	posix_spawn_file_actions_t fa;
	struct bt_proc *p;
	int err;

	cr_assert_lt(bt_nprocs, BT_MAX_PROCS);
	p = &bt_procs[bt_nprocs];
	snprintf(p->out, sizeof(p->out), "%s/out%d", bt_tmpdir(), bt_nprocs);
	snprintf(p->err, sizeof(p->err), "%s/err%d", bt_tmpdir(), bt_nprocs);
	bt_nprocs++;
	p->status = -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, p->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, p->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	err = posix_spawn(&p->pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	cr_assert_eq(err, 0, "spawn %s: %s", argv[0], strerror(err));
	return p;
}

/* Wait up to timeout_s; kill it (by PID) past that.  Returns the exit code, 128+sig if killed. */
static inline int bt_wait(struct bt_proc *p, double timeout_s)
{
	double end = bt_now() + timeout_s;
	int st;

	if (p->status >= 0)
		return p->status;
	for (;;) {
		pid_t r = waitpid(p->pid, &st, WNOHANG);

		if (r == p->pid)
			break;
		if (r < 0 && errno != EINTR) {
			p->status = 255;
			return p->status;
		}
		if (bt_now() > end) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &st, 0);
			break;
		}
		usleep(10000);
	}
	p->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return p->status;
}

/* SIGTERM, then wait (the programs print their report on SIGTERM). */
static inline int bt_stop(struct bt_proc *p, double timeout_s)
{
	if (p->status < 0)
		kill(p->pid, SIGTERM);
	return bt_wait(p, timeout_s);
}

/* Wait until a file exists (a --ready-file), up to timeout_s. */
static inline void bt_wait_file(const char *path, struct bt_proc *p, double timeout_s)
{
	double end = bt_now() + timeout_s;

	while (access(path, F_OK)) {
		cr_assert(waitpid(p->pid, NULL, WNOHANG) == 0, "%s exited before it was ready", path);
		cr_assert(bt_now() < end, "%s: not ready within %.0f s", path, timeout_s);
		usleep(10000);
	}
}

/* Whole file into a static buffer (the last JSON line is what we parse). */
static inline const char *bt_read(const char *path)
{
	static __thread char buf[4][16384];
	static __thread int k;
	char *s = buf[k++ & 3];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	s[0] = 0;
	if (f) {
		n = fread(s, 1, 16383, f);
		fclose(f);
	}
	s[n] = 0;
	return s;
}

/* Numeric value of "key": in json, or NAN when absent / null. */
static inline double bt_num(const char *json, const char *key)
{
	char pat[96];
	const char *p;
	char *end;
	double v;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(json, pat);
	if (!p)
		return __builtin_nan("");
	p += strlen(pat);
	v = strtod(p, &end);
	return end == p ? __builtin_nan("") : v;
}

/* String value of "key": in json (no escapes expected), or "" when absent. */
static inline const char *bt_str(const char *json, const char *key)
{
	static __thread char out[4][256];
	static __thread int k;
	char *s = out[k++ & 3], pat[96];
	const char *p, *q;

	snprintf(pat, sizeof(pat), "\"%s\": \"", key);
	s[0] = 0;
	p = strstr(json, pat);
	if (!p)
		return s;
	p += strlen(pat);
	q = strchr(p, '"');
	if (q && (size_t)(q - p) < 256) {
		memcpy(s, p, (size_t)(q - p));
		s[q - p] = 0;
	}
	return s;
}

/*
 * A program's stdout and stderr, for failure messages: whole, on the test
 * binary's stderr (Criterion shows no info logs by default and cuts an
 * assertion's message at 4 KiB, and a rare failure in CI is only as
 * useful as the counters it leaves in the log).
 */
static inline void bt_dump(const struct bt_proc *p, const char *what)
{
	fprintf(stderr, "==== %s (exit %d) stdout:\n%s\n==== %s stderr:\n%s\n==== end of %s\n", what, p->status,
		bt_read(p->out), what, bt_read(p->err), what);
}

/* A usage error: arguments (up to 4, NULL-ended) and what the message must say. */
struct bt_usage {
	const char *args[5];
	const char *msg;
};

/*
 * The command `pre` followed by `args` (both NULL-ended; args at most 8)
 * must be a usage error: exit 2, `msg` in its stderr, no result on stdout.
 */
static inline void bt_expect_usage(const char *const *pre, const char *const *args, const char *msg)
{
	const char *argv[BT_MAX_ARGS] = { NULL };
	struct bt_proc *p;
	int n = 0;

	for (int i = 0; pre[i] && n < BT_MAX_ARGS - 9; i++)
		argv[n++] = pre[i];
	for (int i = 0; i < 8 && args[i]; i++)
		argv[n++] = args[i];
	p = bt_spawn(argv);
	cr_assert_eq(bt_wait(p, 10), 2, "%s %s: exit %d: %s", args[0], args[1] ? args[1] : "", p->status,
		     bt_read(p->err));
	cr_assert(strstr(bt_read(p->err), msg), "wanted '%s': %s", msg, bt_read(p->err));
	cr_assert_eq(bt_read(p->out)[0], 0, "a usage error printed a result: %s", bt_read(p->out));
}

/* bt_expect_usage() for each of n cases. */
static inline void bt_expect_usages(const char *const *pre, const struct bt_usage *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		bt_expect_usage(pre, c[i].args, c[i].msg);
}

/* Kill and reap every child still running, remove the scratch files. */
static inline void bt_fini(void)
{
	for (int i = 0; i < bt_nprocs; i++) {
		if (bt_procs[i].status < 0) {
			kill(bt_procs[i].pid, SIGKILL);
			waitpid(bt_procs[i].pid, NULL, 0);
			bt_procs[i].status = 137;
		}
	}
	if (bt_dir[0]) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", bt_dir);
		if (system(cmd)) {
			/* Scratch files only; nothing to undo. */
		}
	}
	bt_nprocs = 0;
	bt_dir[0] = 0;
}

/*
 * Three namespaces for relay tests, from two test-beds: bed[0] side a (the
 * sender), bed[0] side b (the relay, which also gets bed[1]'s side-a veth)
 * and bed[1] side b (the receiver).  Each test then sets the relay's links
 * up as it needs; bt_relay_fini() kills the children and removes the beds.
 */
static struct nsbed bt_bed[2];

static inline void bt_relay_beds(void)
{
	int err = gso_testbed_create(&bt_bed[0]);

	cr_assert_eq(err, 0, "test-bed 0: %s", strerror(-err));
	err = gso_testbed_create(&bt_bed[1]);
	cr_assert_eq(err, 0, "test-bed 1: %s", strerror(-err));
	/* Same veth names in both beds: the relay has gvb, and gets bed 1's gva. */
	cr_assert_eq(nsbed_sh(&bt_bed[1], 0, "ip link set %s netns %s", bt_bed[1].ifname[0],
			      bt_bed[0].ns[1]), 0);
}

/*
 * The relay beds with the sender on a link of its own, 2 queues a side
 * (the relay transmits the ACKs on whichever queue the flow hashes to; the
 * e1000 model's wire takes one): BT_IF_S (10.77.0.1, fd77::1) in bed 0's
 * side a, BT_IF_R in the relay's namespace (b0), bed 0's own veth left
 * down and without addresses.  The relay's ends carry no IPv6 of their own.
 */
#define BT_IF_S "sq0"
#define BT_IF_R "sq1"
static inline void bt_relay_sender_beds(void)
{
	bt_relay_beds();
	cr_assert_eq(nsbed_sh(&bt_bed[0], 0,
			      "ip addr flush dev %s && ip link set %s down && "
			      "ip link add " BT_IF_S " numtxqueues 2 numrxqueues 2 type veth peer name " BT_IF_R
			      " netns %s numtxqueues 2 numrxqueues 2 && "
			      "ip addr add 10.77.0.1/24 dev " BT_IF_S " && ip -6 addr add fd77::1/64 dev " BT_IF_S
			      " nodad && ip link set " BT_IF_S " up",
			      bt_bed[0].ifname[0], bt_bed[0].ifname[0], bt_bed[0].ns[1]), 0);
	cr_assert_eq(nsbed_sh(&bt_bed[0], 1,
			      "ip addr flush dev %s && "
			      "echo 1 > /proc/sys/net/ipv6/conf/" BT_IF_R "/disable_ipv6 && "
			      "echo 1 > /proc/sys/net/ipv6/conf/%s/disable_ipv6 && "
			      "ip link set " BT_IF_R " up && ip link set %s up",
			      bt_bed[0].ifname[1], bt_bed[1].ifname[0], bt_bed[1].ifname[0]), 0);
}

static inline void bt_relay_fini(void)
{
	bt_fini();
	nsbed_destroy(&bt_bed[0]);
	nsbed_destroy(&bt_bed[1]);
}

#endif
