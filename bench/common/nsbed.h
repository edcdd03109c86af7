/*
 * A bench test-bed: two fresh network namespaces joined by one veth pair,
 * with names unique to this process.  Once configured, the namespaces are
 * held only by open file descriptors and their names are removed, so
 * nothing is left behind however the process ends (exit, Ctrl-C, SIGKILL):
 * the kernel deletes a namespace, and the veth in it, with its last
 * reference.  The host's interfaces, routes and firewall are never touched.
 *
 * Side 0 has 10.79.0.1/24, side 1 10.79.0.2/24.  Threads enter a side with
 * nsbed_enter() (setns of the calling thread only).
 */
#ifndef BENCH_NSBED_H
#define BENCH_NSBED_H

#include <stdbool.h>
#include <stdint.h>

struct nsbed {
	char ns[2][40];     /* names while setting up, "" afterwards */
	char ifname[2][16]; /* veth names inside the namespaces */
	char ip[2][16];     /* "10.79.0.1", "10.79.0.2" */
	int nsfd[2];        /* the namespaces; -1 when closed */
	int ifindex[2];
	uint8_t mac[2][6];
};

/*
 * Create and configure both sides (loopback and veth up, addresses, no
 * IPv6 duplicate address detection), then run `setup[side]` (a shell
 * command run inside that side, may be NULL) and drop the names.
 * Returns 0 or -errno (everything made is removed again).
 */
int nsbed_create(struct nsbed *b, const char *const setup[2]);

/* Move the calling thread into side 0 or 1.  0 or -errno. */
int nsbed_enter(const struct nsbed *b, int side);

/* Run a shell command inside side 0 or 1; returns its exit status or -errno. */
int nsbed_sh(const struct nsbed *b, int side, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Close the namespaces (they vanish with the last thread inside them).  Idempotent. */
void nsbed_destroy(struct nsbed *b);

#endif
