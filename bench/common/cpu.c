#include "cpu.h"

#include <sys/resource.h>
#include <time.h>

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t bench_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

double bench_now(void)
{
	return (double)bench_now_ns() * 1e-9;
}

uint64_t bench_thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void bench_cpu_now(struct bench_cpu *c)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	c->wall = bench_now();
	c->user = tv_s(ru.ru_utime);
	c->sys = tv_s(ru.ru_stime);
	c->thread = (double)bench_thread_cpu_ns() * 1e-9;
}

void bench_cpu_diff(const struct bench_cpu *a, const struct bench_cpu *b, struct bench_cpu *d)
{
	d->wall = b->wall - a->wall;
	d->user = b->user - a->user;
	d->sys = b->sys - a->sys;
	d->thread = b->thread - a->thread;
}
