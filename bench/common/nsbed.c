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

/* sh -c cmd, inside namespace fd `nsfd` (-1: the current one). */
static int run_in(int nsfd, const char *cmd)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET))
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return wait_status(pid);
}

static int run_fmt(int nsfd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int run_fmt(int nsfd, const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return run_in(nsfd, cmd);
}

int nsbed_sh(const struct nsbed *b, int side, const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	if (b->nsfd[side] < 0)
		return -EBADF;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return run_in(b->nsfd[side], cmd);
}

int nsbed_enter(const struct nsbed *b, int side)
{
	return setns(b->nsfd[side], CLONE_NEWNET) ? -errno : 0;
}

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

static void drop_names(struct nsbed *b)
{
	for (int i = 0; i < 2; i++)
		if (b->ns[i][0]) {
			run_fmt(-1, "ip netns del %s 2>/dev/null", b->ns[i]);
			b->ns[i][0] = 0;
		}
}

int nsbed_create(struct nsbed *b, const char *const setup[2])
{
	static unsigned counter;
	int err = 0;

	memset(b, 0, sizeof(*b));
	b->nsfd[0] = b->nsfd[1] = -1;
	for (int i = 0; i < 2; i++) {
		snprintf(b->ns[i], sizeof(b->ns[i]), "gsob-%d-%u%c", (int)getpid(), counter, 'a' + i);
		snprintf(b->ifname[i], sizeof(b->ifname[i]), "gb%c", 'a' + i);
		snprintf(b->ip[i], sizeof(b->ip[i]), "10.79.0.%d", i + 1);
	}
	counter++;
	for (int i = 0; i < 2 && !err; i++) {
		char path[96];

		if (run_fmt(-1, "ip netns add %s", b->ns[i])) {
			b->ns[i][0] = 0;
			err = -EIO;
			break;
		}
		snprintf(path, sizeof(path), "/run/netns/%s", b->ns[i]);
		b->nsfd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (b->nsfd[i] < 0)
			err = -errno;
	}
	/* The veth is created directly inside the namespaces, never in the host's. */
	if (!err && run_fmt(-1, "ip link add %s netns %s type veth peer name %s netns %s",
			    b->ifname[0], b->ns[0], b->ifname[1], b->ns[1]))
		err = -EIO;
	for (int i = 0; i < 2 && !err; i++)
		if (nsbed_sh(b, i,
			     "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; "
			     "ip link set lo up && ip link set %s up && ip addr add %s/24 dev %s",
			     b->ifname[i], b->ip[i], b->ifname[i]))
			err = -EIO;
	for (int i = 0; i < 2 && !err; i++)
		if (setup && setup[i] && nsbed_sh(b, i, "%s", setup[i]))
			err = -EIO;
	if (!err)
		err = read_link(b, 0) ?: read_link(b, 1);
	drop_names(b);
	if (err)
		nsbed_destroy(b);
	return err;
}

void nsbed_destroy(struct nsbed *b)
{
	drop_names(b);
	for (int i = 0; i < 2; i++)
		if (b->nsfd[i] >= 0) {
			close(b->nsfd[i]);
			b->nsfd[i] = -1;
		}
}
