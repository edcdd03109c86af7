#include "gso_test.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/if.h>

const char *gso_test_build_path(const char *rel)
{
	static __thread char path[4096];
	const char *b = getenv("GSO_BUILD_DIR");

	snprintf(path, sizeof(path), "%s/%s", b && *b ? b : GSO_BUILD_DIR, rel);
	return path;
}

void gso_test_require_root(void)
{
	const char *ci = getenv("CI");

	if (geteuid() == 0)
		return;
	if (ci && !strcmp(ci, "true"))
		cr_assert_fail("this integration test needs root, and CI=true makes a skip a failure");
	cr_skip_test("needs root (network namespaces, veth, AF_PACKET); run as root to include it");
}

static int run_cmd(const char *cmd)
{
	int st = system(cmd);

	if (st == -1)
		return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int gso_test_sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return run_cmd(cmd);
}

int gso_testbed_sh(const struct gso_testbed *tb, int side, const char *fmt, ...)
{
	char inner[768], cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(inner, sizeof(inner), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "ip netns exec %s sh -c '%s'", tb->ns[side], inner);
	return run_cmd(cmd);
}

int gso_testbed_nsfd(const struct gso_testbed *tb, int side)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", tb->ns[side]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int gso_testbed_enter(const struct gso_testbed *tb, int side)
{
	int fd = gso_testbed_nsfd(tb, side), err = 0;

	if (fd < 0)
		return fd;
	if (setns(fd, CLONE_NEWNET))
		err = -errno;
	close(fd);
	return err;
}

/* Read ifindex and MAC of a device inside a namespace. */
static int read_link(struct gso_testbed *tb, int side)
{
	int cur = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), err, s;
	struct ifreq ifr;

	if (cur < 0)
		return -errno;
	err = gso_testbed_enter(tb, side);
	if (!err) {
		s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", tb->ifname[side]);
		if (s < 0 || ioctl(s, SIOCGIFHWADDR, &ifr))
			err = -errno;
		else
			memcpy(tb->mac[side], ifr.ifr_hwaddr.sa_data, 6);
		tb->ifindex[side] = (int)if_nametoindex(tb->ifname[side]);
		if (!err && !tb->ifindex[side])
			err = -ENODEV;
		if (s >= 0)
			close(s);
	}
	if (setns(cur, CLONE_NEWNET) && !err)
		err = -errno;
	close(cur);
	return err;
}

/*
 * A watchdog process removes the namespaces when the test process dies,
 * however it dies (assert, crash, timeout kill): it blocks reading a pipe
 * whose only write end the test holds, and the kernel closes that end at
 * exit.  gso_testbed_destroy() removes them first in the normal case.
 */
static void start_watchdog(struct gso_testbed *tb)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return;
	pid = fork();
	if (pid == 0) {
		char c;

		/*
		 * Detach: the watchdog must not be a child that the test
		 * runner could wait for, nor hold any of its descriptors.
		 */
		if (fork() != 0)
			_exit(0);
		setsid();
		for (int fd = 0; fd < 1024; fd++)
			if (fd != p[0])
				close(fd);
		open("/dev/null", O_RDWR); /* 0, 1, 2 */
		open("/dev/null", O_RDWR);
		open("/dev/null", O_RDWR);
		while (read(p[0], &c, 1) > 0)
			;
		for (int i = 0; i < 2; i++) {
			char path[128];

			snprintf(path, sizeof(path), "/run/netns/%s", tb->ns[i]);
			if (access(path, F_OK) == 0) {
				pid_t c2 = fork();

				if (c2 == 0) {
					execlp("ip", "ip", "netns", "del", tb->ns[i], (char *)NULL);
					_exit(127);
				}
				if (c2 > 0)
					waitpid(c2, NULL, 0);
			}
		}
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return;
	}
	tb->watchdog_fd = p[1];
}

int gso_testbed_create(struct gso_testbed *tb)
{
	static unsigned counter;
	const char *run = getenv("GSO_TEST_RUN_ID");
	unsigned n = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
	int err;

	memset(tb, 0, sizeof(*tb));
	for (int i = 0; i < 2; i++) {
		snprintf(tb->ns[i], sizeof(tb->ns[i]), "gsot%s-%d-%u%c", run && *run ? run : "x",
			 (int)getpid(), n, 'a' + i);
		snprintf(tb->ifname[i], sizeof(tb->ifname[i]), "gv%c", 'a' + i);
	}
	if (gso_test_sh("ip netns add %s", tb->ns[0]))
		return -EIO;
	if (gso_test_sh("ip netns add %s", tb->ns[1])) {
		gso_test_sh("ip netns del %s", tb->ns[0]);
		return -EIO;
	}
	tb->up = true;
	tb->watchdog_fd = -1;
	start_watchdog(tb);
	err = gso_test_sh("ip link add %s netns %s type veth peer name %s netns %s",
		      tb->ifname[0], tb->ns[0], tb->ifname[1], tb->ns[1]);
	for (int i = 0; !err && i < 2; i++)
		err = gso_testbed_sh(tb, i,
				     "ip link set lo up && ip link set %s up && "
				     "ip addr add 10.77.0.%d/24 dev %s && "
				     "ip -6 addr add fd77::%d/64 dev %s nodad",
				     tb->ifname[i], i + 1, tb->ifname[i], i + 1, tb->ifname[i]);
	if (!err)
		err = read_link(tb, 0) ?: read_link(tb, 1);
	if (err) {
		gso_testbed_destroy(tb);
		return err < 0 ? err : -EIO;
	}
	return 0;
}

void gso_testbed_destroy(struct gso_testbed *tb)
{
	if (!tb->up)
		return;
	gso_test_sh("ip netns del %s 2>/dev/null", tb->ns[0]);
	gso_test_sh("ip netns del %s 2>/dev/null", tb->ns[1]);
	if (tb->watchdog_fd >= 0)
		close(tb->watchdog_fd);
	tb->watchdog_fd = -1;
	tb->up = false;
}

void gso_test_count_wire(void *ctx, const void *frame, uint32_t len)
{
	(void)frame;
	(void)len;
	atomic_fetch_add_explicit((_Atomic uint32_t *)ctx, 1, memory_order_relaxed);
}

uint64_t gso_test_env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	char *end;
	uint64_t x;

	if (!v || !*v)
		return dflt;
	errno = 0;
	x = strtoull(v, &end, 0);
	cr_assert(!errno && !*end, "%s=%s is not a number", name, v);
	return x;
}

uint64_t gso_test_seed(const char *env)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return gso_test_env_u64(env, ((uint64_t)now.tv_sec * 1000003u ^ (uint64_t)now.tv_nsec) &
					     0xffffffffffffull);
}
