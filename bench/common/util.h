/* Small helpers shared by the bench programs: argument parsing, netns, addresses. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* Exit codes of every bench program. */
#define BENCH_EXIT_OK 0
#define BENCH_EXIT_FAIL 1  /* the run failed: verification, transfer, ... */
#define BENCH_EXIT_USAGE 2 /* bad arguments or setup error */
#define BENCH_EXIT_SKIP 77 /* the requested mode is not available here */

/*
 * Byte sizes: a number with an optional binary suffix K, M, G, T
 * (1K = 1024).  Returns 0 or -EINVAL.
 */
int bench_parse_size(const char *s, uint64_t *out);
/* Rates in bit/s: number with decimal suffix k, M, G (1M = 1e6).  0 or -EINVAL. */
int bench_parse_rate(const char *s, double *out);
/* A plain non-negative number (seconds, milliseconds, percent).  0 or -EINVAL. */
int bench_parse_double(const char *s, double *out);
/* An unsigned integer, decimal or 0x hex.  0 or -EINVAL. */
int bench_parse_u64(const char *s, uint64_t *out);

/* Move the process into the named network namespace (/run/netns/NAME). 0 or -errno. */
int bench_netns_enter(const char *name);

/*
 * Parse an IPv4 or IPv6 literal plus port into ss.  Returns 0 or -EINVAL.
 * A NULL ip means the wildcard of family `family` (AF_INET or AF_INET6).
 */
int bench_addr_parse(const char *ip, uint16_t port, int family, struct sockaddr_storage *ss,
		     socklen_t *len);

/* Print "prog: msg: strerror" to stderr and exit(code). */
void bench_die(int code, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4), noreturn));

/* The median of v[0..n-1] (v is not changed; n >= 1, at most 1024). */
double bench_median(const double *v, unsigned n);

/* Directory of the running executable (for finding build/bpf/...), or "." */
const char *bench_exe_dir(void);

#endif
