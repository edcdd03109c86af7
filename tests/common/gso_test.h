/* Helpers shared by libgso's Criterion tests. */
#ifndef GSO_TEST_H
#define GSO_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Path of a built artefact, e.g. gso_test_build_path("tools/gsoseg"). */
const char *gso_test_build_path(const char *rel);

/*
 * Integration tests need root.  As non-root they skip with a message; with
 * CI=true in the environment a skip is a failure.  Call first in the test.
 */
void gso_test_require_root(void);

/* Run a shell command on the host side (system()); returns its exit status, 128 if killed, or -errno. */
int gso_test_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Environment variable `name` as a number (decimal or 0x hex), `dflt` if unset; asserts it parses. */
uint64_t gso_test_env_u64(const char *name, uint64_t dflt);
/* A seed for random test cases: $env if set, else one from the clock (print it). */
uint64_t gso_test_seed(const char *env);

/* Deterministic PRNG for test data (xorshift64*); seed 0 is remapped. */
uint64_t gso_test_rand(uint64_t *state);
void gso_test_fill_random(void *buf, size_t len, uint64_t *state);

/*
 * A callback wire for the e1000 model (gso_e1000_opts.wire_fn) that only
 * counts frames: wire_ctx is an _Atomic uint32_t (the model's thread adds).
 */
void gso_test_count_wire(void *ctx, const void *frame, uint32_t len);

/*
 * A test-bed of two network namespaces joined by one veth pair, all with
 * names unique to this test run and process ("gsot<run>-<pid>-<n>a/b").
 * Nothing of the host is touched: the veth is created directly inside the
 * namespaces.  They are removed by gso_testbed_destroy(), and by a watchdog
 * process if the test process dies first (crash, kill, failed assert).  Addresses: 10.77.0.1/24 + fd77::1/64 on side a,
 * 10.77.0.2/24 + fd77::2/64 on side b (namespace-local, never routed).
 */
struct gso_testbed {
	char ns[2][48];     /* namespace names, side a and b */
	char ifname[2][16]; /* veth names inside them */
	int ifindex[2];
	uint8_t mac[2][6];
	bool up;
	int watchdog_fd; /* write end of the pipe the clean-up watchdog waits on */
};

/* Create it; returns 0 or -errno (and cleans up what it made). */
int gso_testbed_create(struct gso_testbed *tb);
/* Remove both namespaces (the veth goes with them).  Idempotent. */
void gso_testbed_destroy(struct gso_testbed *tb);
/* Run a shell command inside side 0/1 ("ip netns exec"); returns its exit status. */
int gso_testbed_sh(const struct gso_testbed *tb, int side, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * Move the calling thread into side 0/1's namespace (setns).  Criterion runs
 * each test in its own process, so this lasts for the test.  Returns 0 or -errno.
 */
int gso_testbed_enter(const struct gso_testbed *tb, int side);
/* Open a file descriptor for side 0/1's namespace (for setns from other threads). */
int gso_testbed_nsfd(const struct gso_testbed *tb, int side);

#endif
