/*
 * libgso-xdp event loop: wait for file descriptors (an AF_XDP socket's
 * completions or RX, a UDP socket, an eventfd) AND the next departure time
 * of the pacer, in one call, with one system call per sleep.
 *
 *   gso_evloop__wait_until(loop, deadline_ns, ev, max)
 *
 * returns the ready descriptors as soon as one is ready, or 0 at the
 * deadline (an absolute CLOCK_MONOTONIC time, the clock the pacer's EDT
 * stamps use), never before it.  How it waits:
 *
 *  - io_uring (default): one io_uring_enter() submits a one-shot poll per
 *    descriptor that needs (re-)arming and an absolute IORING_TIMEOUT_ABS
 *    timeout (or moves the pending one), then waits for the first
 *    completion.  Needs Linux >= 5.17 (CQE skip); liburing 2.3 suffices.
 *  - epoll + timerfd (fallback, when io_uring_setup() fails with EPERM,
 *    ENOSYS or any other error, or on request): a timerfd armed at the
 *    absolute deadline (TFD_TIMER_ABSTIME, one extra system call when the
 *    deadline changes) inside an epoll set.  gso_evloop_stats.backend says
 *    which one runs and uring_err why io_uring is not used.
 *  - spin: a deadline closer than spin_ns is not slept for; the call reads
 *    the clock (vDSO, no system call) until it passes, watching io_uring's
 *    completion queue meanwhile (epoll: descriptors are checked once before
 *    the spin).  A timer wake-up typically costs tens of microseconds of
 *    lateness and of CPU (more below), so for short waits spinning is both
 *    more exact and not much more expensive.
 *
 * Descriptors are level-triggered: a descriptor that is still ready is
 * reported again by the next call (io_uring: its one-shot poll is re-armed
 * when the next call starts, after the caller has seen the event).
 *
 * Lateness of the return after an absolute deadline: io_uring and timerfd
 * timers have no timer slack; clock_nanosleep adds the thread's (50 us by
 * default) unless prctl(PR_SET_TIMERSLACK) lowers it.  What remains is
 * the kernel's timer and wake-up path (typically tens of microseconds at
 * the median), plus preemption in the tails, which hits a spinning thread
 * as much as a sleeping one.  A sleep costs about as much CPU as that
 * lateness (epoll + timerfd one more system call whenever the deadline
 * moves); a spin costs its length and ends almost on time.  Hence
 * GSO_EVLOOP_DEF_SPIN_NS = 50 us, about one wake-up's lateness: a shorter
 * spin costs at most about twice the CPU of a sleep and ends that much
 * earlier.  To make longer waits exact too, set early_ns near the wake-up
 * lateness (each wait then also spins that long).
 *
 * Conventions as in <gso/dev.h>: 0, a count or a negative errno; a failed
 * call changes nothing; options structs start with `size_t sz`, are
 * declared with GSO_OPTS() and 0 means "default".  A loop is used by one
 * thread at a time.  Nothing is allocated after gso_evloop__create().
 */
#ifndef GSO_EVLOOP_H
#define GSO_EVLOOP_H

#include <gso/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Deadlines closer than this are spun on the clock instead of slept for. */
#define GSO_EVLOOP_DEF_SPIN_NS 50000u
/* Largest spin_ns / early_ns accepted: 10 ms. */
#define GSO_EVLOOP_MAX_SPIN_NS 10000000u
/* Descriptors a loop can watch when opts.max_fds is 0, and the largest max_fds. */
#define GSO_EVLOOP_DEF_MAX_FDS 64u
#define GSO_EVLOOP_MAX_FDS 4096u
/* A deadline that never comes: wait for descriptors only. */
#define GSO_EVLOOP_FOREVER UINT64_MAX

enum gso_evloop_backend {
	GSO_EVLOOP_AUTO = 0,  /* io_uring if io_uring_setup() works, else epoll + timerfd */
	GSO_EVLOOP_URING = 1, /* io_uring or fail */
	GSO_EVLOOP_EPOLL = 2, /* epoll + timerfd */
};

/* Never spin: every wait sleeps in the kernel (spin_ns and early_ns ignored). */
#define GSO_EVLOOP_F_NO_SPIN (1u << 0)

struct gso_evloop_opts {
	size_t sz;
	uint32_t backend;  /* enum gso_evloop_backend */
	uint32_t flags;    /* GSO_EVLOOP_F_* */
	uint32_t max_fds;  /* descriptors watched at once, 1..GSO_EVLOOP_MAX_FDS
			    * (0 = GSO_EVLOOP_DEF_MAX_FDS) */
	uint32_t spin_ns;  /* spin instead of sleeping when the deadline is at most
			    * this far (0 = GSO_EVLOOP_DEF_SPIN_NS), <= GSO_EVLOOP_MAX_SPIN_NS */
	uint32_t early_ns; /* end sleeps this long before the deadline and spin the
			    * rest: trades CPU for exactness (0 = none),
			    * <= GSO_EVLOOP_MAX_SPIN_NS */
	size_t :0;
};
#define gso_evloop_opts__last_field early_ns

struct gso_evloop;

/*
 * One ready descriptor.  No sz field: an element of the arrays of
 * gso_evloop__wait_until(); growing it needs a new symbol version of the
 * calls that take it.
 */
struct gso_evloop_event {
	uint64_t cookie;  /* as given to gso_evloop__add_fd() */
	int fd;
	uint32_t revents; /* poll(2) bits: the requested ones that are ready, plus
			   * POLLERR / POLLHUP / POLLNVAL */
};

/*
 * Make a loop (`opts` NULL: the defaults).  Returns 0 and *out, or
 *   -EINVAL  out NULL, bad opts (sz, non-zero unknown tail, unknown backend
 *            or flag, max_fds / spin_ns / early_ns out of range)
 *   -ENOMEM
 *   with backend GSO_EVLOOP_URING: io_uring_setup()'s error (-EPERM when
 *            disabled by sysctl or seccomp, -ENOSYS when absent, ...)
 *   with GSO_EVLOOP_EPOLL (or AUTO falling back): epoll_create1() /
 *            timerfd_create()'s error (-EMFILE, ...)
 * The caller owns the loop: gso_evloop__destroy().
 */
GSO_API int gso_evloop__create(struct gso_evloop **out, const struct gso_evloop_opts *opts);

/*
 * Free the loop and its kernel objects.  Registered descriptors are not
 * closed (they stay the caller's).  NULL is a no-op.
 */
GSO_API void gso_evloop__destroy(struct gso_evloop *loop);

/*
 * Watch `fd` for `events` (poll(2) bits among POLLIN, POLLPRI, POLLOUT,
 * POLLRDNORM, POLLRDBAND, POLLWRNORM, POLLWRBAND, POLLRDHUP; POLLERR and
 * POLLHUP are always reported) and report it with `cookie`.  The
 * descriptor stays the caller's; remove it with gso_evloop__del_fd()
 * before closing it.  Returns 0, or
 *   -EINVAL  loop NULL, fd < 0, events 0 or with an unknown bit
 *   -EEXIST  fd is already watched
 *   -ENOSPC  max_fds descriptors are watched already
 *   -EPERM   (epoll) fd does not support polling, e.g. a regular file
 *   -EBADF   (epoll) fd is not open; io_uring reports this as POLLNVAL
 */
GSO_API int gso_evloop__add_fd(struct gso_evloop *loop, int fd, uint32_t events, uint64_t cookie);

/*
 * Change what `fd` is watched for and its cookie.  An event of the old
 * settings not yet returned is dropped.  Returns 0, or -EINVAL (as
 * add_fd), -ENOENT (fd not watched).
 */
GSO_API int gso_evloop__mod_fd(struct gso_evloop *loop, int fd, uint32_t events, uint64_t cookie);

/*
 * Stop watching `fd`; an event for it not yet returned is dropped.
 * Returns 0, or -EINVAL (loop NULL), -ENOENT (fd not watched).
 */
GSO_API int gso_evloop__del_fd(struct gso_evloop *loop, int fd);

/*
 * Wait until a watched descriptor is ready or CLOCK_MONOTONIC reaches
 * `deadline_ns` (GSO_EVLOOP_FOREVER: no deadline), whichever comes first.
 *
 * Descriptors already ready are returned at once.  A deadline that has
 * passed already returns 0 without sleeping, after a check of the
 * descriptors that blocks nothing (epoll: always one system call;
 * io_uring: one only if a poll needs re-arming).  Otherwise, if the
 * deadline is at most spin_ns away, the call spins to it; if farther, it
 * sleeps in the kernel until the deadline minus early_ns and spins the
 * rest.  A timeout never returns early: 0 means the clock, read after
 * waking, is at or past the deadline.
 *
 * Writes up to `max` events into ev[] (caller memory; further ready
 * descriptors are returned by the next call).  Returns the number of
 * events (1..max), 0 at the deadline, or
 *   -EINVAL  loop NULL, ev NULL, max 0
 *   -EINTR   a signal interrupted the sleep before the deadline (the loop
 *            stays usable; call again)
 *   another negative errno from the kernel (io_uring_enter, epoll_wait)
 */
GSO_API int gso_evloop__wait_until(struct gso_evloop *loop, uint64_t deadline_ns,
				   struct gso_evloop_event *ev, unsigned max);

/* CLOCK_MONOTONIC now, in ns: the clock deadlines are compared with. */
GSO_API uint64_t gso_evloop_now_ns(void);

/* How the waits went (gso_evloop__stats). */
struct gso_evloop_stats {
	size_t sz;
	uint32_t backend;    /* enum gso_evloop_backend in use (URING or EPOLL) */
	int32_t uring_err;   /* 0 with io_uring, else why it is not used (negative
			      * errno of io_uring_setup, or -EOPNOTSUPP when epoll
			      * was asked for) */
	uint64_t waits;      /* gso_evloop__wait_until() calls that got past argument checks */
	uint64_t sleeps;     /* blocking system calls made (io_uring_enter / epoll_wait) */
	uint64_t wakeups;    /* returns from them (a timer, a descriptor, a signal, or spurious) */
	uint64_t spurious;   /* wake-ups that found neither an event nor the deadline */
	uint64_t spins;      /* waits that ended by spinning on the clock */
	uint64_t spin_ns;    /* time spent spinning */
	uint64_t immediate;  /* waits whose deadline had passed when called */
	uint64_t timeouts;   /* waits that returned 0 at their deadline */
	uint64_t events;     /* events returned */
	uint64_t syscalls;   /* all system calls made by waits (sleeps included) */
	/*
	 * Lateness of returns at the deadline (now read after waking minus the
	 * deadline), for waits that found the deadline passed right after a
	 * sleep and for waits that ended by spinning (with early_ns, a sleep
	 * followed by a spin counts as a spin).  Percentiles are
	 * upper bounds of a log-linear histogram (6.25 % resolution); max is
	 * exact.  Immediate returns are not counted (the caller was late).
	 */
	uint64_t late_sleep_n, late_sleep_p50_ns, late_sleep_p99_ns, late_sleep_max_ns;
	uint64_t late_spin_n, late_spin_p50_ns, late_spin_p99_ns, late_spin_max_ns;
	size_t :0;
};
#define gso_evloop_stats__last_field late_spin_max_ns

/*
 * Fill `st` up to st->sz (declare it with GSO_OPTS(gso_evloop_stats, st)).
 * Returns 0, or -EINVAL (NULL, sz no larger than the sz field).
 */
GSO_API int gso_evloop__stats(const struct gso_evloop *loop, struct gso_evloop_stats *st);

/* Zero the counters and histograms (not backend / uring_err).  NULL is a no-op. */
GSO_API void gso_evloop__stats_reset(struct gso_evloop *loop);

/* "io_uring", "epoll" or "auto" for a backend value; NULL for any other value. */
GSO_API const char *gso_evloop_backend_name(unsigned backend);

#ifdef __cplusplus
}
#endif
#endif
