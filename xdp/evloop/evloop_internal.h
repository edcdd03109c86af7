/*
 * Event loop internals (not installed): the backend-neutral state in
 * evloop.c and the two kernel backends, evloop_uring.c and evloop_epoll.c.
 *
 * Events a backend learns about go into a FIFO of pending events; the
 * front end hands them out.  A descriptor has at most one pending event,
 * so the FIFO holds max_fds entries, and backends only ask the kernel when
 * it is empty (level-triggered: anything still ready shows up again).
 */
#ifndef EVLOOP_INTERNAL_H
#define EVLOOP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <liburing.h>
#include <gso/evloop.h>

enum ev_slot_state {
	EV_FREE = 0,
	EV_IDLE,    /* watched, no poll in the kernel (io_uring: needs arming) */
	EV_ARMED,   /* io_uring: a one-shot poll is in the kernel */
	EV_PENDING, /* an event waits in the FIFO */
	EV_DEAD,    /* io_uring: the poll failed (bad fd); reported once, not re-armed */
};

struct ev_slot {
	uint64_t cookie;
	int fd;
	uint32_t events;
	uint32_t gen;    /* bumped on add/mod/del: completions of older polls are stale */
	uint8_t state;   /* enum ev_slot_state */
	bool queued;     /* in the io_uring arm list */
};

struct ev_pend {
	uint32_t slot;
	uint32_t gen;
	uint32_t revents;
	bool dead;       /* the slot is EV_DEAD once this is delivered */
};

/* Log-linear histogram of nanoseconds: exact below 16, then 16 buckets per power of 2. */
#define EV_HIST_SUB 16u
#define EV_HIST_BUCKETS ((41u - 3u) * EV_HIST_SUB)
struct ev_hist {
	uint64_t n;
	uint64_t max;
	uint32_t b[EV_HIST_BUCKETS];
};

struct ev_ops;

struct gso_evloop {
	const struct ev_ops *ops;
	uint32_t backend;
	int32_t uring_err;
	uint32_t flags;
	uint32_t max_fds;
	uint32_t spin_ns;
	uint32_t early_ns;

	struct ev_slot *slots;      /* max_fds */
	uint32_t nwatched;
	struct ev_pend *pend;       /* FIFO ring of max_fds */
	uint32_t pend_head;
	uint32_t pend_n;

	struct gso_evloop_stats st; /* counters only; percentiles filled on read */
	struct ev_hist late_sleep;
	struct ev_hist late_spin;

	union {
		struct {
			struct io_uring ring;
			uint32_t *arm;      /* slots waiting for a poll SQE (max_fds) */
			uint32_t narm;
			struct __kernel_timespec ts; /* read by the kernel at submit */
			uint64_t tmo_at;    /* deadline of the armed timeout */
			uint32_t tmo_gen;
			bool tmo_armed;
		} u;
		struct {
			int epfd;
			int tfd;
			uint64_t timer_at;  /* 0 = disarmed */
			void *evbuf;        /* struct epoll_event[max_fds + 1] */
		} e;
	};
};

struct ev_ops {
	int (*init)(struct gso_evloop *l);
	void (*fini)(struct gso_evloop *l);
	/* Slot i was filled (add) or changed (mod, gen already bumped). */
	int (*add)(struct gso_evloop *l, uint32_t i);
	int (*mod)(struct gso_evloop *l, uint32_t i);
	/* Slot i's event was handed to the caller (it is EV_IDLE again); NULL if nothing to do. */
	void (*delivered)(struct gso_evloop *l, uint32_t i);
	/* Slot i is about to be freed (gen already bumped). */
	void (*del)(struct gso_evloop *l, uint32_t i);
	/* Learn what is ready without blocking. */
	int (*poll_now)(struct gso_evloop *l);
	/* Cheap check while spinning (no system call); NULL if none. */
	void (*peek)(struct gso_evloop *l);
	/*
	 * Block until an event or CLOCK_MONOTONIC reaches wake_at
	 * (GSO_EVLOOP_FOREVER: events only).  0, -EINTR, or -errno.
	 */
	int (*sleep)(struct gso_evloop *l, uint64_t wake_at);
};

extern const struct ev_ops gsoi_evloop_uring_ops;
extern const struct ev_ops gsoi_evloop_epoll_ops;

/* Queue an event for slot i (state becomes EV_PENDING, then EV_DEAD or EV_IDLE once delivered). */
void gsoi_evloop_push(struct gso_evloop *l, uint32_t i, uint32_t revents, bool dead);

#endif
