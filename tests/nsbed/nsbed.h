/*
 * The namespace test-bed of the tests and the micro-benchmarks: two fresh
 * network namespaces joined by one veth pair, built once into libnsbed.a.
 * The tests' gso_testbed_create() (tests/common/gso_test.c) and the
 * micro-benchmarks' benchbed_create() and xskbed_create()
 * (bench/common/benchbed.c) are this with their names and addresses.
 *
 * Rules it keeps, whoever calls it:
 * - Names are unique to the run and the process:
 *   "gso<tag><run>-<pid>-<n><a|b>", <run> being $GSO_TEST_RUN_ID ("x" when
 *   unset), so tests/run.sh can sweep what a test run left ("gsot<run>-*").
 * - Nothing of the host is touched: the veth is created directly inside the
 *   namespaces, and nothing is routed out of them.
 * - Removal cannot be forgotten: before the namespaces are added, a
 *   watchdog process starts that removes whichever still has a name when
 *   the creating process ends, however it ends (exit, failed assert, crash,
 *   SIGKILL).  nsbed_destroy() removes them first in the normal case.  With
 *   .anonymous the names are dropped once set up: open descriptors alone
 *   hold the namespaces, and the kernel deletes them (veth included) with
 *   the process's last reference.
 *
 * Not thread-safe during nsbed_create() (it enters the sides from the
 * calling thread); the other calls may run on any thread.
 */
#ifndef NSBED_H
#define NSBED_H

#include <stdbool.h>
#include <stdint.h>

struct nsbed_opts {
	const char *tag;       /* name part after "gso"; NULL: "t" */
	const char *ifname[2]; /* veth names; NULL: "gva", "gvb" */
	/*
	 * IPv4 address with prefix length per side ("10.77.0.1/24"), NULL for
	 * none; nsbed.ip[] gets it without the length.
	 */
	const char *ip4[2];
	const char *ip6[2];    /* IPv6 address with length, added "nodad"; NULL for none */
	bool no_ipv6;          /* disable IPv6 in both namespaces (sysctl all.disable_ipv6) */
	unsigned queues;       /* veth transmit and receive queues each side; 0: the veth default */
	bool static_neigh;     /* permanent IPv4 neighbour entries both ways (needs ip4) */
	/* Shell command run inside each side once configured (nsbed_sh), NULL for none. */
	const char *setup[2];
	bool anonymous;        /* drop the names once set up (see above) */
};

struct nsbed {
	char ns[2][48];     /* namespace names; "" once dropped (.anonymous) */
	char ifname[2][16]; /* veth names inside them */
	char ip[2][48];     /* IPv4 address without length, "" if none */
	int nsfd[2];        /* the namespaces, held open; -1 when closed */
	int ifindex[2];
	uint8_t mac[2][6];
	/* private */
	bool up;            /* created, not yet destroyed (a zeroed struct is not: destroy is a no-op) */
	int watchdog_fd;    /* write end of the pipe the watchdog waits on, -1 when none */
};

/*
 * Create and configure both sides: loopback and veth up, addresses, then
 * `setup`.  opts may be NULL (all defaults).  The calling thread is back in
 * its own namespace on return.  Returns 0 or -errno (-EIO when a command
 * failed); on failure everything made is removed again.
 */
int nsbed_create(struct nsbed *b, const struct nsbed_opts *opts);

/* Remove both namespaces (the veth goes with them) and close them.  Idempotent. */
void nsbed_destroy(struct nsbed *b);

/*
 * Run `sh -c <command>` inside side 0 or 1, the command formatted from fmt
 * (any length, any characters: it is passed as one argument, never quoted).
 * While the sides have names it runs under "ip netns exec", which also gives
 * it the side's own /sys; once anonymous it runs after setns() and sees the
 * caller's /sys.  Returns its exit status, 128 if a signal ended it, or
 * -errno.
 */
int nsbed_sh(const struct nsbed *b, int side, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Move the calling thread into side 0 or 1 (setns).  0 or -errno. */
int nsbed_enter(const struct nsbed *b, int side);

/* A new descriptor of side 0's or 1's namespace (for setns), or -errno; the caller closes it. */
int nsbed_nsfd(const struct nsbed *b, int side);

#endif
