#include "nsbed.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int wait_status(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/*
 * Run argv (execvp) in a child, inside namespace `nsfd` (-1: the caller's),
 * with stdout and stderr to /dev/null when `quiet`.
 */
static int run_argv(int nsfd, bool quiet, char *const argv[])
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		if (quiet) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
			}
		}
		if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	return wait_status(pid);
}

static int vsh(const struct nsbed *b, int side, const char *fmt, va_list ap)
{
	char *cmd;
	int st;

	if (vasprintf(&cmd, fmt, ap) < 0)
		return -ENOMEM;
	if (side >= 0 && b->ns[side][0])
		st = run_argv(-1, false, (char *[]){ "ip", "netns", "exec", (char *)b->ns[side], "sh", "-c", cmd, NULL });
	else
		st = run_argv(side >= 0 ? b->nsfd[side] : -1, false, (char *[]){ "/bin/sh", "-c", cmd, NULL });
	free(cmd);
	return st;
}

/* A command on the host side (side -1), for "ip netns add" and "ip link add ... netns". */
static int host_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int host_sh(const char *fmt, ...)
{
	va_list ap;
	int st;

	va_start(ap, fmt);
	st = vsh(NULL, -1, fmt, ap);
	va_end(ap);
	return st;
}

int nsbed_sh(const struct nsbed *b, int side, const char *fmt, ...)
{
	va_list ap;
	int st;

	if (side < 0 || side > 1 || (!b->ns[side][0] && b->nsfd[side] < 0))
		return -EBADF;
	va_start(ap, fmt);
	st = vsh(b, side, fmt, ap);
	va_end(ap);
	return st;
}

int nsbed_enter(const struct nsbed *b, int side)
{
	return setns(b->nsfd[side], CLONE_NEWNET) ? -errno : 0;
}

int nsbed_nsfd(const struct nsbed *b, int side)
{
	int fd = fcntl(b->nsfd[side], F_DUPFD_CLOEXEC, 0);

	return fd < 0 ? -errno : fd;
}

/* Read ifindex and MAC of a side's veth, from inside it; back to the caller's namespace after. */
static int read_link(struct nsbed *b, int side)
{
	int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC), s = -1, err;
	struct ifreq ifr;

	if (self < 0)
		return -errno;
	err = nsbed_enter(b, side);
	if (!err) {
		s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", b->ifname[side]);
		if (s < 0 || ioctl(s, SIOCGIFHWADDR, &ifr))
			err = -errno;
		else
			memcpy(b->mac[side], ifr.ifr_hwaddr.sa_data, 6);
		b->ifindex[side] = (int)if_nametoindex(b->ifname[side]);
		if (!err && !b->ifindex[side])
			err = -ENODEV;
		if (s >= 0)
			close(s);
	}
	if (setns(self, CLONE_NEWNET) && !err)
		err = -errno;
	close(self);
	return err;
}

static void del_name(char *name)
{
	if (name[0])
		run_argv(-1, true, (char *[]){ "ip", "netns", "del", name, NULL });
	name[0] = '\0';
}

/*
 * The watchdog blocks reading a pipe whose only write end this process
 * holds; the kernel closes that end when the process ends, however it
 * ends.  Then the watchdog removes the names that still exist.
 */
static void start_watchdog(struct nsbed *b)
{
	int p[2];
	pid_t pid;

	b->watchdog_fd = -1;
	if (pipe2(p, O_CLOEXEC))
		return;
	pid = fork();
	if (pid == 0) {
		char c;

		/*
		 * Detach: the watchdog must not be a child that a test runner
		 * could wait for, nor hold any of its descriptors.
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

			snprintf(path, sizeof(path), "/run/netns/%s", b->ns[i]);
			if (access(path, F_OK) == 0)
				del_name(b->ns[i]);
		}
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	close(p[0]);
	if (pid < 0)
		close(p[1]);
	else
		b->watchdog_fd = p[1];
}

static void drop_names(struct nsbed *b)
{
	del_name(b->ns[0]);
	del_name(b->ns[1]);
	/* Nothing left for the watchdog: let it go. */
	if (b->watchdog_fd >= 0)
		close(b->watchdog_fd);
	b->watchdog_fd = -1;
}

static int configure(struct nsbed *b, const struct nsbed_opts *o)
{
	char mac[2][20], q[64] = "";
	int err = 0;

	if (o->queues)
		snprintf(q, sizeof(q), " numtxqueues %u numrxqueues %u", o->queues, o->queues);
	for (int i = 0; i < 2 && !err; i++) {
		char path[96];

		if (host_sh("ip netns add %s", b->ns[i])) {
			b->ns[i][0] = '\0';
			return -EIO;
		}
		snprintf(path, sizeof(path), "/run/netns/%s", b->ns[i]);
		b->nsfd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (b->nsfd[i] < 0)
			return -errno;
	}
	/* The veth is created directly inside the namespaces, never in the host's. */
	if (host_sh("ip link add %s netns %s%s type veth peer name %s netns %s%s", b->ifname[0], b->ns[0], q,
		    b->ifname[1], b->ns[1], q))
		return -EIO;
	for (int i = 0; i < 2; i++) {
		if (nsbed_sh(b, i, "%sip link set lo up && ip link set %s up",
			     o->no_ipv6 ? "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; " : "", b->ifname[i]))
			return -EIO;
		if (o->ip4[i] && nsbed_sh(b, i, "ip addr add %s dev %s", o->ip4[i], b->ifname[i]))
			return -EIO;
		if (o->ip6[i] && nsbed_sh(b, i, "ip -6 addr add %s dev %s nodad", o->ip6[i], b->ifname[i]))
			return -EIO;
	}
	err = read_link(b, 0) ?: read_link(b, 1);
	for (int i = 0; !err && i < 2; i++)
		snprintf(mac[i], sizeof(mac[i]), "%02x:%02x:%02x:%02x:%02x:%02x", b->mac[i][0], b->mac[i][1],
			 b->mac[i][2], b->mac[i][3], b->mac[i][4], b->mac[i][5]);
	for (int i = 0; !err && o->static_neigh && i < 2; i++)
		if (!b->ip[0][0] || !b->ip[1][0] ||
		    nsbed_sh(b, i, "ip neigh replace %s lladdr %s dev %s nud permanent", b->ip[!i], mac[!i],
			     b->ifname[i]))
			err = -EIO;
	for (int i = 0; !err && i < 2; i++)
		if (o->setup[i] && nsbed_sh(b, i, "%s", o->setup[i]))
			err = -EIO;
	return err;
}

int nsbed_create(struct nsbed *b, const struct nsbed_opts *opts)
{
	static const struct nsbed_opts dflt;
	static unsigned counter;
	const struct nsbed_opts *o = opts ? opts : &dflt;
	const char *run = getenv("GSO_TEST_RUN_ID");
	unsigned n = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
	int err;

	memset(b, 0, sizeof(*b));
	b->nsfd[0] = b->nsfd[1] = -1;
	for (int i = 0; i < 2; i++) {
		const char *slash;
		size_t len;

		snprintf(b->ns[i], sizeof(b->ns[i]), "gso%s%s-%d-%u%c", o->tag ? o->tag : "t",
			 run && *run ? run : "x", (int)getpid(), n, 'a' + i);
		snprintf(b->ifname[i], sizeof(b->ifname[i]), "%s", o->ifname[i] ? o->ifname[i] : i ? "gvb" : "gva");
		if (o->ip4[i]) {
			slash = strchr(o->ip4[i], '/');
			len = slash ? (size_t)(slash - o->ip4[i]) : strlen(o->ip4[i]);
			if (len >= sizeof(b->ip[i]))
				return -EINVAL;
			memcpy(b->ip[i], o->ip4[i], len);
		}
	}
	b->up = true;
	start_watchdog(b);
	err = configure(b, o);
	if (err) {
		nsbed_destroy(b);
		return err;
	}
	if (o->anonymous)
		drop_names(b);
	return 0;
}

void nsbed_destroy(struct nsbed *b)
{
	if (!b->up)
		return;
	drop_names(b);
	for (int i = 0; i < 2; i++) {
		if (b->nsfd[i] >= 0)
			close(b->nsfd[i]);
		b->nsfd[i] = -1;
	}
	b->up = false;
}
