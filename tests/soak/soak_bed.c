/*
 * The soak's test-bed (soak.h): tests/nsbed's namespaces (unique names,
 * removed however the process ends), a veth of SOAK_QUEUES queues each
 * way made inside them, and the kernel receivers (bench/receiver) of the
 * peer namespace, which the schedule kills and starts again.  Receivers
 * write nothing the soak reads: each stream gets its verdict back over
 * its own connection (proto.h), so their output goes to /dev/null and
 * they hold no descriptor of ours.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "soak.h"

extern char **environ;

int soak_bed_create(struct soak_bed *b, const char *receiver_path)
{
	const struct nsbed_opts o = {
		.tag = "k",
		.ifname = { SOAK_IF_A, SOAK_IF_B },
		.ip4 = { SOAK_ADDR_A "/24", SOAK_ADDR_B "/24" },
		.no_ipv6 = true,
		.queues = SOAK_QUEUES,
	};
	int err;

	b->receiver_path = receiver_path;
	snprintf(b->dir, sizeof(b->dir), "/tmp/gso-soak-XXXXXX");
	if (!mkdtemp(b->dir)) {
		err = -errno;
		fprintf(stderr, "soak: temporary directory: %s\n", strerror(errno));
		b->dir[0] = 0;
		return err;
	}
	err = nsbed_create(&b->nb, &o);
	if (err) {
		fprintf(stderr, "soak: namespace test-bed: %s\n", strerror(-err));
		rmdir(b->dir);
		b->dir[0] = 0;
		return err;
	}
	b->ifindex = b->nb.ifindex[0];
	return 0;
}

void soak_bed_destroy(struct soak_bed *b)
{
	nsbed_destroy(&b->nb);
	if (b->dir[0]) {
		/* Only ready files live there. */
		for (unsigned k = 0; k < SOAK_MAX_STREAMS; k++) {
			char f[160];

			snprintf(f, sizeof(f), "%s/ready%u", b->dir, k);
			unlink(f);
		}
		rmdir(b->dir);
		b->dir[0] = 0;
	}
}

int soak_receiver_start(struct soak_bed *b, struct soak_receiver *r, unsigned k)
{
	char port[16];
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int err;

	snprintf(r->ready_file, sizeof(r->ready_file), "%s/ready%u", b->dir, k);
	unlink(r->ready_file);
	snprintf(port, sizeof(port), "%d", SOAK_RX_PORT + (int)k);
	char *const argv[] = { (char *)b->receiver_path, "--netns", b->nb.ns[1], "--port", port,
			       "--bind", SOAK_ADDR_B, "--idle-timeout", "20", "--accept-timeout", "120",
			       "--ready-file", r->ready_file,
			       "--buf", "64K", NULL };

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	err = posix_spawn(&pid, b->receiver_path, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err)
		return -err;
	r->pid = pid;
	r->ready = false;
	r->restart_at = 0;
	return 0;
}

void soak_receiver_kill(struct soak_receiver *r)
{
	if (r->pid <= 0)
		return;
	kill(r->pid, SIGKILL);
	while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
		;
	r->pid = 0;
	r->ready = false;
	unlink(r->ready_file);
}

bool soak_receiver_poll(struct soak_receiver *r, bool *died)
{
	struct stat st;

	*died = false;
	if (r->pid <= 0)
		return false;
	if (waitpid(r->pid, NULL, WNOHANG) == r->pid) {
		r->pid = 0;
		r->ready = false;
		*died = true;
		return false;
	}
	if (!r->ready && !stat(r->ready_file, &st))
		r->ready = true;
	return r->ready;
}

int soak_link_set(struct soak_bed *b, bool up)
{
	return nsbed_sh(&b->nb, 0, "ip link set dev " SOAK_IF_A " %s", up ? "up" : "down");
}

/*
 * Both ends: a veth checks a frame against the MTU of the end that
 * receives it, and AF_XDP in copy mode does not check the sending end's,
 * so a lower MTU on the sender's veth alone would change only what the
 * route says to new streams, never drop a frame of an older one.
 */
int soak_mtu_set(struct soak_bed *b, unsigned mtu)
{
	int err = nsbed_sh(&b->nb, 0, "ip link set dev " SOAK_IF_A " mtu %u", mtu);

	return err ? err : nsbed_sh(&b->nb, 1, "ip link set dev " SOAK_IF_B " mtu %u", mtu);
}
