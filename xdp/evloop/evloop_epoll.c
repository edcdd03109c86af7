/*
 * epoll + timerfd backend of the event loop, for kernels or sandboxes
 * without io_uring.  The timerfd is armed at the absolute deadline
 * (TFD_TIMER_ABSTIME, hrtimer without timer slack, unlike epoll_wait's own
 * timeout) and watched edge-triggered, so an expiry needs no read().
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "evloop_internal.h"

#define TIMER_TAG UINT64_MAX

static int e_init(struct gso_evloop *l)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u64 = TIMER_TAG };
	int err;

	l->e.tfd = -1;
	l->e.evbuf = NULL;
	l->e.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->e.epfd < 0)
		return -errno;
	l->e.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (l->e.tfd < 0 || epoll_ctl(l->e.epfd, EPOLL_CTL_ADD, l->e.tfd, &ev))
		goto fail_errno;
	l->e.evbuf = calloc(l->max_fds + 1u, sizeof(struct epoll_event));
	if (!l->e.evbuf) {
		errno = ENOMEM;
		goto fail_errno;
	}
	l->e.timer_at = 0;
	return 0;

fail_errno:
	err = -errno;
	if (l->e.tfd >= 0)
		close(l->e.tfd);
	close(l->e.epfd);
	return err;
}

static void e_fini(struct gso_evloop *l)
{
	close(l->e.tfd);
	close(l->e.epfd);
	free(l->e.evbuf);
}

static int ctl(struct gso_evloop *l, int op, uint32_t i)
{
	struct ev_slot *s = &l->slots[i];
	struct epoll_event ev = {
		.events = s->events,
		.data.u64 = (uint64_t)s->gen << 32 | i,
	};

	return epoll_ctl(l->e.epfd, op, s->fd, &ev) ? -errno : 0;
}

static int e_add(struct gso_evloop *l, uint32_t i)
{
	return ctl(l, EPOLL_CTL_ADD, i);
}

static int e_mod(struct gso_evloop *l, uint32_t i)
{
	int err = ctl(l, EPOLL_CTL_MOD, i);

	if (!err)
		l->slots[i].state = EV_IDLE;
	return err;
}

static void e_del(struct gso_evloop *l, uint32_t i)
{
	struct epoll_event ev = { 0 };

	/* Fails with EBADF if the caller closed the fd first; epoll forgot it then. */
	epoll_ctl(l->e.epfd, EPOLL_CTL_DEL, l->slots[i].fd, &ev);
}

static void collect(struct gso_evloop *l, int n)
{
	const struct epoll_event *evs = l->e.evbuf;

	for (int k = 0; k < n; k++) {
		uint64_t d = evs[k].data.u64;
		uint32_t i = (uint32_t)d;

		if (d == TIMER_TAG) {
			l->e.timer_at = 0; /* one-shot: it has fired */
			continue;
		}
		if (i < l->max_fds && l->slots[i].state == EV_IDLE && l->slots[i].gen == (uint32_t)(d >> 32))
			gsoi_evloop_push(l, i, evs[k].events, false);
	}
}

static int e_poll_now(struct gso_evloop *l)
{
	int n = epoll_wait(l->e.epfd, l->e.evbuf, (int)l->max_fds + 1, 0);

	l->st.syscalls++;
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	collect(l, n);
	return 0;
}

static int e_sleep(struct gso_evloop *l, uint64_t wake_at)
{
	int n;

	if (wake_at != l->e.timer_at && !(wake_at == GSO_EVLOOP_FOREVER && !l->e.timer_at)) {
		struct itimerspec its = { 0 };

		if (wake_at != GSO_EVLOOP_FOREVER) {
			its.it_value.tv_sec = (time_t)(wake_at / 1000000000ull);
			its.it_value.tv_nsec = (long)(wake_at % 1000000000ull);
		}
		l->st.syscalls++;
		if (timerfd_settime(l->e.tfd, TFD_TIMER_ABSTIME, &its, NULL))
			return -errno;
		l->e.timer_at = wake_at == GSO_EVLOOP_FOREVER ? 0 : wake_at;
	}
	n = epoll_wait(l->e.epfd, l->e.evbuf, (int)l->max_fds + 1, -1);
	l->st.syscalls++;
	l->st.sleeps++;
	if (n < 0)
		return errno == EINTR ? (l->st.wakeups++, -EINTR) : -errno;
	l->st.wakeups++;
	collect(l, n);
	return 0;
}

const struct ev_ops gsoi_evloop_epoll_ops = {
	.init = e_init,
	.fini = e_fini,
	.add = e_add,
	.mod = e_mod,
	.delivered = NULL,
	.del = e_del,
	.poll_now = e_poll_now,
	.peek = NULL,
	.sleep = e_sleep,
};
