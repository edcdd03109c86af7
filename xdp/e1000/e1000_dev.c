/*
 * The e1000 model's device thread: the "NIC" on its own core.  It polls
 * the tail register (TDT) for a while after each burst of work, then
 * sleeps on a doorbell futex that the driver rings when it publishes a
 * new tail while the device sleeps.  Its own CPU time is measured with
 * CLOCK_THREAD_CPUTIME_ID, so that offload is charged to the device and
 * not to the sender.
 *
 * Doorbell protocol (all seq_cst):
 *   driver:  store TDT; load sleeping; if set: bell++, futex_wake(bell)
 *   device:  store sleeping = 1; b = load bell; load TDT; if unchanged:
 *            futex_wait(bell, b)
 * Either the device's TDT load sees the new tail, or the driver's load of
 * `sleeping` sees 1 and its bell++ makes the futex_wait return at once.
 *
 * In transmit-opportunity mode (e1000_txop.c) the device does not poll and
 * takes no doorbell (it never sets `sleeping`): new descriptors wait for
 * the next opportunity anyway.  It sleeps on the bell until the absolute
 * time of its next opportunity or completion; only the stop request bumps
 * the bell then.
 */
#include "e1000_internal.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SLEEP_MAX_NS 10000000L /* wake up anyway, to reap wire completions */

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void futex_wait(_Atomic uint32_t *addr, uint32_t val, long ns)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ns };

	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

/* Sleep until CLOCK_MONOTONIC `deadline` (ns), or until the bell moves on from val. */
static void futex_wait_until(_Atomic uint32_t *addr, uint32_t val, uint64_t deadline)
{
	struct timespec ts = { .tv_sec = (time_t)(deadline / 1000000000u), .tv_nsec = (long)(deadline % 1000000000u) };

	/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time: no drift from a relative one. */
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_BITSET_PRIVATE, val, &ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

static void futex_wake(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

void gsoi_e1000_dev_doorbell(struct e1000_dev *x)
{
	if (!x->threaded)
		return;
	if (atomic_load(&x->sleeping)) {
		atomic_fetch_add(&x->bell, 1);
		futex_wake(&x->bell);
		e1000_cnt_add(&x->wakeups, 1);
	}
}

/* Run the engine over what the driver published; publish the new head. */
static uint32_t work(struct e1000_dev *x)
{
	/* Acquire pairs with the driver's release store of TDT: descriptors before the tail. */
	uint32_t tail = atomic_load_explicit(&x->tdt, memory_order_acquire), n;

	if (tail == x->dev_head && !x->eng.pkt.active)
		return 0;
	n = gsoi_e1000_engine_run(&x->eng, x->ring, &x->dev_head, tail, x->wire);
	/* Release pairs with the driver's acquire load of TDH: status write-back before the head. */
	atomic_store_explicit(&x->tdh, x->dev_head, memory_order_release);
	return n;
}

uint32_t gsoi_e1000_dev_poll(struct e1000_dev *x)
{
	uint32_t total = 0, n;

	if (x->txop.on) {
		/* What is due now; the wire taking only part of an aggregate ends the call too. */
		gsoi_e1000_txop_step(x, now_ns(CLOCK_MONOTONIC), &total);
		gsoi_e1000_wire_inflight(x->wire);
		return total;
	}
	while ((n = work(x)))
		total += n;
	/* Completions of the wire, so that its frames are reused. */
	gsoi_e1000_wire_inflight(x->wire);
	return total;
}

/* Transmit-opportunity mode: run what is due, sleep to the next deadline. */
static void txop_main(struct e1000_dev *x)
{
	for (;;) {
		uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID), now = now_ns(CLOCK_MONOTONIC), next, t1;
		uint32_t n = 0, b;

		next = gsoi_e1000_txop_step(x, now, &n);
		t1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		if (n)
			e1000_cnt_add(&x->busy_ns, t1 - t0);
		atomic_store_explicit(&x->cpu_ns, t1, memory_order_relaxed);
		b = atomic_load(&x->bell);
		if (atomic_load(&x->stop))
			break;
		if (next <= now) {
			cpu_relax(); /* the wire is full: its completions come soon */
			continue;
		}
		gsoi_e1000_wire_inflight(x->wire);
		futex_wait_until(&x->bell, b, next);
	}
	gsoi_e1000_txop_flush(x);
}

/* The plain device: poll for spin_us after work, then sleep until the doorbell. */
static void plain_main(struct e1000_dev *x)
{
	uint64_t idle_since = now_ns(CLOCK_MONOTONIC), spin_ns = (uint64_t)x->spin_us * 1000u;

	for (;;) {
		uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID), t1;
		uint32_t n = work(x);

		if (n || x->eng.pkt.active) {
			t1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
			e1000_cnt_add(&x->busy_ns, t1 - t0);
			atomic_store_explicit(&x->cpu_ns, t1, memory_order_relaxed);
			if (!n)
				cpu_relax(); /* the wire is full: its completions come soon */
			idle_since = now_ns(CLOCK_MONOTONIC);
			continue;
		}
		if (atomic_load(&x->stop))
			break;
		if (now_ns(CLOCK_MONOTONIC) - idle_since < spin_ns) {
			cpu_relax();
			continue;
		}
		gsoi_e1000_wire_inflight(x->wire);
		atomic_store_explicit(&x->cpu_ns, now_ns(CLOCK_THREAD_CPUTIME_ID), memory_order_relaxed);
		atomic_store(&x->sleeping, 1);
		{
			uint32_t b = atomic_load(&x->bell);

			if (atomic_load(&x->tdt) == x->dev_head && !atomic_load(&x->stop))
				futex_wait(&x->bell, b, SLEEP_MAX_NS);
		}
		atomic_store(&x->sleeping, 0);
		idle_since = now_ns(CLOCK_MONOTONIC);
	}
}

static void *dev_main(void *arg)
{
	struct e1000_dev *x = arg;

	if (x->cpu) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(x->cpu - 1, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	if (x->txop.on)
		txop_main(x);
	else
		plain_main(x);
	/* Let the wire finish what it holds before the socket goes. */
	for (int i = 0; i < 200 && gsoi_e1000_wire_inflight(x->wire); i++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	atomic_store_explicit(&x->cpu_ns, now_ns(CLOCK_THREAD_CPUTIME_ID), memory_order_relaxed);
	return NULL;
}

int gsoi_e1000_dev_start(struct e1000_dev *x)
{
	int err;

	atomic_store(&x->stop, false);
	err = pthread_create(&x->thr, NULL, dev_main, x);
	if (err)
		return -err;
	x->thread_started = true;
	return 0;
}

void gsoi_e1000_dev_stop(struct e1000_dev *x, unsigned ms)
{
	if (!x->thread_started)
		return;
	/* The device drains what was published before it is told to stop. */
	for (unsigned i = 0; i < ms && atomic_load(&x->tdh) != atomic_load(&x->tdt); i++) {
		struct timespec ts = { 0, 1000000 };

		gsoi_e1000_dev_doorbell(x);
		nanosleep(&ts, NULL);
	}
	atomic_store(&x->stop, true);
	atomic_fetch_add(&x->bell, 1);
	futex_wake(&x->bell);
	pthread_join(x->thr, NULL);
	x->thread_started = false;
}
