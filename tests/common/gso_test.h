/* Helpers shared by libgso's Criterion tests. */
#ifndef GSO_TEST_H
#define GSO_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nsbed.h"

/* Path of a built artefact, e.g. gso_test_build_path("tools/gsoseg"). */
const char *gso_test_build_path(const char *rel);

/*
 * Skip the running test, saying why; with CI=true in the environment a
 * skip is a failure instead (CI must run everything).  Does not return.
 */
void gso_test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Integration tests need root.  As non-root they skip with a message
 * (gso_test_skip: a failure under CI=true).  Call first in the test.
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

/* Entries of a directory, "." and ".." included: /proc/self/fd for descriptors, /proc/self/task for threads.  Asserts it opens. */
int gso_test_count_dir(const char *path);

/*
 * A callback wire for the e1000 model (gso_e1000_opts.wire_fn) that only
 * counts frames: wire_ctx is an _Atomic uint32_t (the model's thread adds).
 */
void gso_test_count_wire(void *ctx, const void *frame, uint32_t len);

struct gso_tmpl;
/* A TCP/IPv4 template (ports 7 -> 8, seq 1, ACK, DF, addresses 10.10.10.10 -> 11.11.11.11); asserts it builds. */
void gso_test_tmpl_tcp4(struct gso_tmpl *t);

/*
 * The tests' namespace test-bed: tests/nsbed's (nsbed.h: unique names
 * "gsot<run>-<pid>-<n>a/b", a watchdog that removes them however the test
 * process ends, nothing of the host touched), with the names kept (tests
 * pass them to programs' --netns and "ip netns exec"), veths "gva"/"gvb"
 * and addresses 10.77.0.1/24 + fd77::1/64 on side a, 10.77.0.2/24 +
 * fd77::2/64 on side b (namespace-local, never routed).  Use nsbed_sh(),
 * nsbed_enter(), nsbed_nsfd() and nsbed_destroy() on it.  Returns 0 or
 * -errno (and cleans up what it made).
 */
int gso_testbed_create(struct nsbed *tb);

#endif
