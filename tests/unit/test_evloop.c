/*
 * Event loop (gso/evloop.h) on eventfds, no root needed, for both kernel
 * backends: readiness before the deadline, return at the deadline (never
 * early; lateness only bounded by a generous sanity limit), the spin and
 * sleep paths, level-triggered re-reporting, add/mod/del, and argument
 * checks.  The io_uring -> epoll fallback is forced with a seccomp filter
 * that makes io_uring_setup() fail with EPERM in this test's process.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gso/evloop.h>
#include "gso_test.h"

#define MS 1000000ull
#define US 1000ull
/* Lateness is measured, not asserted; this only catches a wait that never ends. */
#define SANE_LATE (1000 * MS)

static const uint32_t backends[] = { GSO_EVLOOP_URING, GSO_EVLOOP_EPOLL };

static struct gso_evloop *mk(uint32_t backend, uint32_t flags, uint32_t spin_ns, uint32_t early_ns,
			     uint32_t max_fds)
{
	GSO_OPTS(gso_evloop_opts, o, .backend = backend, .flags = flags, .spin_ns = spin_ns,
		 .early_ns = early_ns, .max_fds = max_fds);
	struct gso_evloop *l = NULL;
	int err = gso_evloop__create(&l, &o);

	if (backend == GSO_EVLOOP_URING && (err == -EPERM || err == -ENOSYS || err == -EOPNOTSUPP))
		gso_test_skip("io_uring is not available here (%s); the epoll cases cover the loop",
			      strerror(-err));
	cr_assert_eq(err, 0, "create(%s): %s", gso_evloop_backend_name(backend), strerror(-err));
	cr_assert_not_null(l);
	return l;
}

static struct gso_evloop_stats stats(const struct gso_evloop *l)
{
	GSO_OPTS(gso_evloop_stats, st);
	cr_assert_eq(gso_evloop__stats(l, &st), 0);
	return st;
}

static int efd(void)
{
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	cr_assert_geq(fd, 0);
	return fd;
}

static void efd_write(int fd)
{
	uint64_t one = 1;

	cr_assert_eq(write(fd, &one, sizeof(one)), (ssize_t)sizeof(one));
}

static void efd_drain(int fd)
{
	uint64_t v;

	cr_assert_eq(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
}

/* ---- option and argument checks ------------------------------------------- */

struct badopt {
	const char *name;
	uint32_t backend, flags, max_fds, spin_ns, early_ns;
	bool tail; /* a non-zero byte past the known fields */
	bool tiny; /* sz smaller than the sz field */
};

ParameterizedTestParameters(evloop, create_rejects)
{
	static struct badopt cases[] = {
		{ "backend 3", .backend = 3 },
		{ "unknown flag", .flags = 1u << 7 },
		{ "max_fds too big", .max_fds = GSO_EVLOOP_MAX_FDS + 1 },
		{ "spin_ns too big", .spin_ns = GSO_EVLOOP_MAX_SPIN_NS + 1 },
		{ "early_ns too big", .early_ns = GSO_EVLOOP_MAX_SPIN_NS + 1 },
		{ "non-zero tail", .tail = true },
		{ "sz too small", .tiny = true },
	};
	return cr_make_param_array(struct badopt, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct badopt *c, evloop, create_rejects)
{
	struct {
		struct gso_evloop_opts o;
		uint64_t extra;
	} big;
	struct gso_evloop *l = (struct gso_evloop *)0x1;

	memset(&big, 0, sizeof(big));
	big.o.sz = c->tail ? sizeof(big) : c->tiny ? sizeof(size_t) - 1 : sizeof(big.o);
	big.o.backend = c->backend;
	big.o.flags = c->flags;
	big.o.max_fds = c->max_fds;
	big.o.spin_ns = c->spin_ns;
	big.o.early_ns = c->early_ns;
	if (c->tail)
		big.extra = 1;
	cr_expect_eq(gso_evloop__create(&l, &big.o), -EINVAL, "%s", c->name);
	cr_expect_eq(l, (struct gso_evloop *)0x1, "%s: out written on failure", c->name);
}

Test(evloop, create_null_out)
{
	cr_expect_eq(gso_evloop__create(NULL, NULL), -EINVAL);
}

ParameterizedTestParameters(evloop, bad_args)
{
	return cr_make_param_array(uint32_t, (void *)backends, 2);
}

ParameterizedTest(uint32_t *be, evloop, bad_args)
{
	struct gso_evloop *l = mk(*be, 0, 0, 0, 2);
	struct gso_evloop_event ev[2];
	int a = efd(), b = efd(), c = efd();

	memset(ev, 0xa5, sizeof(ev));
	cr_expect_eq(gso_evloop__wait_until(NULL, 0, ev, 2), -EINVAL);
	cr_expect_eq(gso_evloop__wait_until(l, 0, NULL, 2), -EINVAL);
	cr_expect_eq(gso_evloop__wait_until(l, 0, ev, 0), -EINVAL);
	cr_expect_eq(ev[0].cookie, 0xa5a5a5a5a5a5a5a5ull, "ev written by a failed call");

	cr_expect_eq(gso_evloop__add_fd(NULL, a, POLLIN, 1), -EINVAL);
	cr_expect_eq(gso_evloop__add_fd(l, -1, POLLIN, 1), -EINVAL);
	cr_expect_eq(gso_evloop__add_fd(l, a, 0, 1), -EINVAL);
	cr_expect_eq(gso_evloop__add_fd(l, a, POLLIN | (1u << 20), 1), -EINVAL);
	cr_expect_eq(gso_evloop__mod_fd(l, a, POLLIN, 1), -ENOENT);
	cr_expect_eq(gso_evloop__del_fd(l, a), -ENOENT);
	cr_expect_eq(gso_evloop__del_fd(NULL, a), -EINVAL);

	cr_expect_eq(gso_evloop__add_fd(l, a, POLLIN, 1), 0);
	cr_expect_eq(gso_evloop__add_fd(l, a, POLLIN, 1), -EEXIST);
	cr_expect_eq(gso_evloop__mod_fd(l, a, 0, 1), -EINVAL);
	cr_expect_eq(gso_evloop__add_fd(l, b, POLLIN, 2), 0);
	cr_expect_eq(gso_evloop__add_fd(l, c, POLLIN, 3), -ENOSPC, "max_fds 2");
	cr_expect_eq(gso_evloop__del_fd(l, b), 0);
	cr_expect_eq(gso_evloop__add_fd(l, c, POLLIN, 3), 0, "a freed slot is reused");

	struct gso_evloop_stats st;
	cr_expect_eq(gso_evloop__stats(NULL, &st), -EINVAL);
	cr_expect_eq(gso_evloop__stats(l, NULL), -EINVAL);
	st.sz = 4;
	cr_expect_eq(gso_evloop__stats(l, &st), -EINVAL);
	st.sz = 0;
	cr_expect_eq(gso_evloop__stats(l, &st), 0, "sz 0 (= {0}): the whole struct");
	cr_expect_eq(st.sz, sizeof(st));

	gso_evloop__destroy(l);
	gso_evloop__destroy(NULL);
	close(a);
	close(b);
	close(c);
}

Test(evloop, stats_respect_sz)
{
	struct gso_evloop *l = mk(GSO_EVLOOP_AUTO, 0, 0, 0, 0);
	struct gso_evloop_stats st;

	memset(&st, 0xee, sizeof(st));
	st.sz = offsetof(struct gso_evloop_stats, waits);
	cr_assert_eq(gso_evloop__stats(l, &st), 0);
	cr_expect(st.backend == GSO_EVLOOP_URING || st.backend == GSO_EVLOOP_EPOLL);
	cr_expect_eq(st.waits, 0xeeeeeeeeeeeeeeeeull, "written past sz");
	gso_evloop__destroy(l);
}

/* ---- readiness -------------------------------------------------------------- */

ParameterizedTestParameters(evloop, ready_before_deadline)
{
	return cr_make_param_array(uint32_t, (void *)backends, 2);
}

ParameterizedTest(uint32_t *be, evloop, ready_before_deadline)
{
	struct gso_evloop *l = mk(*be, 0, 0, 0, 0);
	struct gso_evloop_event ev[4];
	int fd = efd(), other = efd();
	uint64_t deadline;

	cr_assert_eq(gso_evloop__add_fd(l, other, POLLIN, 7), 0);
	cr_assert_eq(gso_evloop__add_fd(l, fd, POLLIN, 42), 0);
	efd_write(fd);
	deadline = gso_evloop_now_ns() + 5000 * MS;
	cr_assert_eq(gso_evloop__wait_until(l, deadline, ev, 4), 1);
	cr_expect_lt(gso_evloop_now_ns(), deadline);
	cr_expect_eq(ev[0].cookie, 42);
	cr_expect_eq(ev[0].fd, fd);
	cr_expect(ev[0].revents & POLLIN);
	cr_expect_eq(stats(l).events, 1);
	gso_evloop__destroy(l);
	close(fd);
	close(other);
}

struct poke {
	int fd;
	unsigned delay_ms;
	pthread_t thr;
	pthread_t target;
};

static void *poke_fn(void *arg)
{
	struct poke *p = arg;
	uint64_t one = 1;

	usleep(p->delay_ms * 1000u);
	if (p->fd >= 0) {
		if (write(p->fd, &one, sizeof(one)) != sizeof(one))
			return NULL;
	} else {
		pthread_kill(p->target, SIGUSR1);
	}
	return NULL;
}

ParameterizedTestParameters(evloop, ready_while_sleeping)
{
	return cr_make_param_array(uint32_t, (void *)backends, 2);
}

/* The descriptor becomes ready while the loop sleeps, with or without a deadline. */
ParameterizedTest(uint32_t *be, evloop, ready_while_sleeping)
{
	struct gso_evloop *l = mk(*be, 0, 0, 0, 0);
	struct gso_evloop_event ev[2];
	struct poke p = { .fd = efd(), .delay_ms = 20 };

	cr_assert_eq(gso_evloop__add_fd(l, p.fd, POLLIN, 5), 0);
	for (int round = 0; round < 2; round++) {
		uint64_t deadline = round ? GSO_EVLOOP_FOREVER : gso_evloop_now_ns() + 10000 * MS;

		cr_assert_eq(pthread_create(&p.thr, NULL, poke_fn, &p), 0);
		int n = gso_evloop__wait_until(l, deadline, ev, 2);
		pthread_join(p.thr, NULL);
		cr_assert_eq(n, 1, "round %d: %d", round, n);
		cr_expect_lt(gso_evloop_now_ns(), deadline);
		cr_expect_eq(ev[0].cookie, 5);
		efd_drain(p.fd);
	}
	cr_expect_geq(stats(l).sleeps, 2);
	gso_evloop__destroy(l);
	close(p.fd);
}

ParameterizedTestParameters(evloop, level_triggered)
{
	return cr_make_param_array(uint32_t, (void *)backends, 2);
}

/* An event the caller did not consume is reported again; a consumed one is not. */
ParameterizedTest(uint32_t *be, evloop, level_triggered)
{
	struct gso_evloop *l = mk(*be, 0, 0, 0, 0);
	struct gso_evloop_event ev[2];
	int fd = efd();

	cr_assert_eq(gso_evloop__add_fd(l, fd, POLLIN, 9), 0);
	efd_write(fd);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(gso_evloop__wait_until(l, gso_evloop_now_ns() + 1000 * MS, ev, 2), 1);
		cr_expect_eq(ev[0].cookie, 9);
	}
	efd_drain(fd);
	cr_expect_eq(gso_evloop__wait_until(l, gso_evloop_now_ns() + 5 * MS, ev, 2), 0);
	gso_evloop__destroy(l);
	close(fd);
}

ParameterizedTestParameters(evloop, mod_del)
{
	return cr_make_param_array(uint32_t, (void *)backends, 2);
}

ParameterizedTest(uint32_t *be, evloop, mod_del)
{
	struct gso_evloop *l = mk(*be, 0, 0, 0, 0);
	struct gso_evloop_event ev[2];
	int a = efd(), b = efd();

	cr_assert_eq(gso_evloop__add_fd(l, a, POLLIN, 1), 0);
	cr_assert_eq(gso_evloop__add_fd(l, b, POLLIN, 2), 0);
	efd_write(a);
	efd_write(b);
	/* Both ready and harvested; a's event is then dropped by del, b's cookie changed by mod. */
	cr_assert_eq(gso_evloop__wait_until(l, gso_evloop_now_ns() + 1000 * MS, ev, 1), 1);
	cr_assert_eq(gso_evloop__del_fd(l, a), 0);
	cr_assert_eq(gso_evloop__mod_fd(l, b, POLLIN, 22), 0);
	int n = gso_evloop__wait_until(l, gso_evloop_now_ns() + 1000 * MS, ev, 2);
	cr_assert_eq(n, 1);
	cr_expect_eq(ev[0].cookie, 22);
	cr_expect_eq(ev[0].fd, b);
	/* Watching b for POLLOUT only: an eventfd is writable. */
	cr_assert_eq(gso_evloop__mod_fd(l, b, POLLOUT, 23), 0);
	cr_assert_eq(gso_evloop__wait_until(l, gso_evloop_now_ns() + 1000 * MS, ev, 2), 1);
	cr_expect_eq(ev[0].cookie, 23);
	cr_expect(ev[0].revents & POLLOUT);
	cr_expect_eq(gso_evloop__del_fd(l, b), 0);
	cr_expect_eq(gso_evloop__wait_until(l, gso_evloop_now_ns() + 5 * MS, ev, 2), 0);
	gso_evloop__destroy(l);
	close(a);
	close(b);
}

ParameterizedTestParameters(evloop, max_events)
{
	return cr_make_param_array(uint32_t, (void *)backends, 2);
}

/* More ready descriptors than `max`: the rest come with the next call, none twice. */
ParameterizedTest(uint32_t *be, evloop, max_events)
{
	struct gso_evloop *l = mk(*be, 0, 0, 0, 0);
	struct gso_evloop_event ev[3];
	int fd[3];
	unsigned seen = 0;

	for (int i = 0; i < 3; i++) {
		fd[i] = efd();
		cr_assert_eq(gso_evloop__add_fd(l, fd[i], POLLIN, 100u + (unsigned)i), 0);
		efd_write(fd[i]);
	}
	int n = gso_evloop__wait_until(l, gso_evloop_now_ns() + 1000 * MS, ev, 2);
	cr_assert_eq(n, 2);
	for (int i = 0; i < n; i++) {
		seen |= 1u << (ev[i].cookie - 100);
		efd_drain(ev[i].fd);
	}
	n = gso_evloop__wait_until(l, gso_evloop_now_ns() + 1000 * MS, ev, 3);
	cr_assert_eq(n, 1);
	seen |= 1u << (ev[0].cookie - 100);
	cr_expect_eq(seen, 7u);
	gso_evloop__destroy(l);
	for (int i = 0; i < 3; i++)
		close(fd[i]);
}

/* A descriptor that is not open: epoll refuses it, io_uring reports POLLNVAL once. */
ParameterizedTestParameters(evloop, bad_fd)
{
	return cr_make_param_array(uint32_t, (void *)backends, 2);
}

ParameterizedTest(uint32_t *be, evloop, bad_fd)
{
	struct gso_evloop *l = mk(*be, 0, 0, 0, 0);
	struct gso_evloop_event ev[2];
	int fd = efd();

	close(fd); /* a number that is surely not open now */
	if (*be == GSO_EVLOOP_EPOLL) {
		cr_expect_eq(gso_evloop__add_fd(l, fd, POLLIN, 3), -EBADF);
	} else {
		cr_assert_eq(gso_evloop__add_fd(l, fd, POLLIN, 3), 0);
		cr_assert_eq(gso_evloop__wait_until(l, gso_evloop_now_ns() + 1000 * MS, ev, 2), 1);
		cr_expect_eq(ev[0].cookie, 3);
		cr_expect(ev[0].revents & POLLNVAL);
		cr_expect_eq(gso_evloop__wait_until(l, gso_evloop_now_ns() + 5 * MS, ev, 2), 0,
			     "reported once, not re-armed");
		cr_expect_eq(gso_evloop__del_fd(l, fd), 0);
	}
	gso_evloop__destroy(l);
}

/* ---- deadlines ----------------------------------------------------------------- */

struct dcase {
	const char *name;
	uint32_t backend;
	uint32_t flags;
	uint32_t spin_ns, early_ns;
	uint64_t sleep_ns; /* deadline = now + sleep_ns; 0: already passed */
	int path;          /* 0 immediate, 1 spin, 2 sleep, 3 sleep then spin (early_ns) */
};

ParameterizedTestParameters(evloop, deadline)
{
	static struct dcase cases[] = {
		{ "uring passed", GSO_EVLOOP_URING, 0, 0, 0, 0, 0 },
		{ "uring spin 5 ms", GSO_EVLOOP_URING, 0, 10 * MS, 0, 5 * MS, 1 },
		{ "uring sleep 100 us", GSO_EVLOOP_URING, 0, 10 * US, 0, 100 * US, 2 },
		{ "uring sleep 20 ms", GSO_EVLOOP_URING, 0, 10 * US, 0, 20 * MS, 2 },
		{ "uring no-spin 50 us", GSO_EVLOOP_URING, GSO_EVLOOP_F_NO_SPIN, 10 * MS, 0, 50 * US, 2 },
		{ "uring early 2 ms", GSO_EVLOOP_URING, 0, 10 * US, 2 * MS, 20 * MS, 3 },
		{ "epoll passed", GSO_EVLOOP_EPOLL, 0, 0, 0, 0, 0 },
		{ "epoll spin 5 ms", GSO_EVLOOP_EPOLL, 0, 10 * MS, 0, 5 * MS, 1 },
		{ "epoll sleep 100 us", GSO_EVLOOP_EPOLL, 0, 10 * US, 0, 100 * US, 2 },
		{ "epoll sleep 20 ms", GSO_EVLOOP_EPOLL, 0, 10 * US, 0, 20 * MS, 2 },
		{ "epoll no-spin 50 us", GSO_EVLOOP_EPOLL, GSO_EVLOOP_F_NO_SPIN, 10 * MS, 0, 50 * US, 2 },
		{ "epoll early 2 ms", GSO_EVLOOP_EPOLL, 0, 10 * US, 2 * MS, 20 * MS, 3 },
	};
	return cr_make_param_array(struct dcase, cases, sizeof(cases) / sizeof(cases[0]));
}

/*
 * Nothing is ready: the call returns 0 at the deadline, never before it.
 * Which path it took is checked loosely, because a preempted test process
 * may find its deadline passed already (then "immediate" is correct).
 */
ParameterizedTest(struct dcase *c, evloop, deadline)
{
	struct gso_evloop *l = mk(c->backend, c->flags, (uint32_t)c->spin_ns, (uint32_t)c->early_ns, 0);
	struct gso_evloop_event ev[1];
	int fd = efd();

	cr_assert_eq(gso_evloop__add_fd(l, fd, POLLIN, 1), 0);
	for (int rep = 0; rep < 3; rep++) {
		gso_evloop__stats_reset(l);
		uint64_t deadline = gso_evloop_now_ns() + c->sleep_ns;
		int n = gso_evloop__wait_until(l, deadline, ev, 1);
		uint64_t now = gso_evloop_now_ns();
		struct gso_evloop_stats st = stats(l);

		cr_assert_eq(n, 0, "%s: %d", c->name, n);
		cr_assert_geq(now, deadline, "%s: returned %llu ns early", c->name,
			      (unsigned long long)(deadline - now));
		cr_assert_lt(now - deadline, SANE_LATE, "%s: never returned", c->name);
		cr_expect_eq(st.waits, 1);
		cr_expect_eq(st.timeouts, 1);
		cr_expect_eq(st.events, 0);
		if (c->path == 0)
			cr_expect_eq(st.immediate, 1, "%s", c->name);
		if (st.immediate) {
			cr_expect_eq(st.sleeps + st.spins, 0, "%s", c->name);
			continue;
		}
		switch (c->path) {
		case 1:
			cr_expect_eq(st.spins, 1, "%s: spins", c->name);
			cr_expect_eq(st.sleeps, 0, "%s: sleeps", c->name);
			cr_expect_eq(st.late_spin_n, 1, "%s", c->name);
			cr_expect_geq(st.spin_ns, 1, "%s", c->name);
			break;
		case 2:
			cr_expect_eq(st.spins, 0, "%s: spins", c->name);
			cr_expect_geq(st.sleeps, 1, "%s: sleeps", c->name);
			cr_expect_eq(st.late_sleep_n, 1, "%s", c->name);
			cr_expect_leq(st.late_sleep_p50_ns, st.late_sleep_p99_ns);
			cr_expect_leq(st.late_sleep_p99_ns, st.late_sleep_max_ns);
			cr_expect_leq(st.late_sleep_max_ns, now - deadline);
			break;
		case 3:
			cr_expect_geq(st.sleeps, 1, "%s: sleeps", c->name);
			/* Woken at deadline - early_ns and spun, unless the wake-up was that late. */
			cr_expect_eq(st.spins + st.late_sleep_n, 1, "%s", c->name);
			break;
		}
	}
	gso_evloop__destroy(l);
	close(fd);
}

Test(evloop, default_is_io_uring_or_says_why)
{
	struct gso_evloop *l = mk(GSO_EVLOOP_AUTO, 0, 0, 0, 0);
	struct gso_evloop_stats st = stats(l);

	if (st.backend == GSO_EVLOOP_EPOLL)
		cr_expect_lt(st.uring_err, 0, "fell back without a reason");
	else
		cr_expect_eq(st.uring_err, 0);
	cr_expect_eq(st.backend, GSO_EVLOOP_URING, "io_uring works on this kernel: %s",
		     strerror(-st.uring_err));
	gso_evloop__destroy(l);
}

/* ---- signals and fallback ----------------------------------------------------------- */

static void on_usr1(int sig)
{
	(void)sig;
}

ParameterizedTestParameters(evloop, signal_eintr)
{
	return cr_make_param_array(uint32_t, (void *)backends, 2);
}

ParameterizedTest(uint32_t *be, evloop, signal_eintr)
{
	struct gso_evloop *l = mk(*be, 0, 0, 0, 0);
	struct gso_evloop_event ev[1];
	struct sigaction sa = { .sa_handler = on_usr1 }; /* no SA_RESTART */
	struct poke p = { .fd = -1, .delay_ms = 20, .target = pthread_self() };
	int n;

	cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	cr_assert_eq(pthread_create(&p.thr, NULL, poke_fn, &p), 0);
	n = gso_evloop__wait_until(l, gso_evloop_now_ns() + 10000 * MS, ev, 1);
	pthread_join(p.thr, NULL);
	cr_expect_eq(n, -EINTR);
	/* Still usable afterwards. */
	cr_expect_eq(gso_evloop__wait_until(l, gso_evloop_now_ns() + 2 * MS, ev, 1), 0);
	gso_evloop__destroy(l);
}

/* Make io_uring_setup() fail with EPERM in this process, as a sandbox would. */
static void forbid_io_uring(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	cr_assert_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	cr_assert_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0);
}

Test(evloop, fallback_to_epoll)
{
	GSO_OPTS(gso_evloop_opts, o, .backend = GSO_EVLOOP_URING);
	struct gso_evloop *l = NULL;
	struct gso_evloop_event ev[1];
	int fd = efd();

	forbid_io_uring();
	cr_expect_eq(gso_evloop__create(&l, &o), -EPERM, "io_uring asked for explicitly");
	o.backend = GSO_EVLOOP_AUTO;
	cr_assert_eq(gso_evloop__create(&l, &o), 0);
	struct gso_evloop_stats st = stats(l);
	cr_expect_eq(st.backend, GSO_EVLOOP_EPOLL);
	cr_expect_eq(st.uring_err, -EPERM);
	/* And it works. */
	cr_assert_eq(gso_evloop__add_fd(l, fd, POLLIN, 77), 0);
	efd_write(fd);
	cr_assert_eq(gso_evloop__wait_until(l, gso_evloop_now_ns() + 1000 * MS, ev, 1), 1);
	cr_expect_eq(ev[0].cookie, 77);
	gso_evloop__destroy(l);
	close(fd);
}
