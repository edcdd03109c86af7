/*
 * Time and CPU accounting for benches.  A snapshot holds the monotonic
 * clock, the process's user and system CPU (getrusage, all threads) and the
 * calling thread's CPU (CLOCK_THREAD_CPUTIME_ID); the difference of two
 * snapshots is what a run cost.
 *
 * Caveat on veth test-beds: the peer's receive processing (softirq) may run
 * on the sending thread's CPU and be charged to it as system time, and what
 * a sender hands to a device is finished by the kernel in its context.
 * Absolute CPU-per-byte therefore includes some receive work; compare
 * modes side by side in one run.
 */
#ifndef BENCH_CPU_H
#define BENCH_CPU_H

#include <stdint.h>

struct bench_cpu {
	double wall;   /* CLOCK_MONOTONIC, s */
	double user;   /* process user CPU, s */
	double sys;    /* process system CPU, s */
	double thread; /* calling thread's CPU, s */
};

void bench_cpu_now(struct bench_cpu *c);
/* d = b - a */
void bench_cpu_diff(const struct bench_cpu *a, const struct bench_cpu *b, struct bench_cpu *d);

/* CLOCK_MONOTONIC in ns / s. */
uint64_t bench_now_ns(void);
double bench_now(void);
/* CLOCK_THREAD_CPUTIME_ID in ns. */
uint64_t bench_thread_cpu_ns(void);

#endif
