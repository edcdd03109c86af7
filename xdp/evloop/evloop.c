/*
 * Event loop front end: options, descriptor slots, the wait policy
 * (sleep, spin, or both) and statistics.  The kernel calls live in
 * evloop_uring.c and evloop_epoll.c.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evloop_internal.h"
#include "opts_internal.h"

#define EV_KNOWN_EVENTS (POLLIN | POLLPRI | POLLOUT | POLLRDNORM | POLLRDBAND | POLLWRNORM | \
			 POLLWRBAND | POLLRDHUP)
#define EV_KNOWN_FLAGS GSO_EVLOOP_F_NO_SPIN

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

uint64_t gso_evloop_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *gso_evloop_backend_name(unsigned backend)
{
	switch (backend) {
	case GSO_EVLOOP_AUTO:
		return "auto";
	case GSO_EVLOOP_URING:
		return "io_uring";
	case GSO_EVLOOP_EPOLL:
		return "epoll";
	}
	return NULL;
}

/* ---- histogram ----------------------------------------------------------- */

static unsigned hist_idx(uint64_t v)
{
	unsigned e, idx;

	if (v < EV_HIST_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v); /* >= 4 */
	idx = (e - 3u) * EV_HIST_SUB + (unsigned)((v >> (e - 4u)) & (EV_HIST_SUB - 1u));
	return idx < EV_HIST_BUCKETS ? idx : EV_HIST_BUCKETS - 1u;
}

/* Largest value that falls into bucket idx. */
static uint64_t hist_upper(unsigned idx)
{
	unsigned e, sub;

	if (idx < EV_HIST_SUB)
		return idx;
	e = idx / EV_HIST_SUB + 3u;
	sub = idx % EV_HIST_SUB;
	return (((uint64_t)EV_HIST_SUB + sub + 1u) << (e - 4u)) - 1u;
}

static void hist_add(struct ev_hist *h, uint64_t v)
{
	h->b[hist_idx(v)]++;
	h->n++;
	if (v > h->max)
		h->max = v;
}

/* Upper bound of the p-quantile (p in per mille), capped by the exact max. */
static uint64_t hist_pct(const struct ev_hist *h, unsigned permille)
{
	uint64_t rank, seen = 0;

	if (!h->n)
		return 0;
	rank = (h->n * permille + 999u) / 1000u;
	if (!rank)
		rank = 1;
	for (unsigned i = 0; i < EV_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			uint64_t u = hist_upper(i);
			return u < h->max ? u : h->max;
		}
	}
	return h->max;
}

/* ---- create / destroy ----------------------------------------------------- */

int gso_evloop__create(struct gso_evloop **out, const struct gso_evloop_opts *o)
{
	struct gso_evloop *l;
	uint32_t backend, flags, max_fds, spin_ns, early_ns;
	int err;

	if (!out || !GSO_OPTS_VALID(gso_evloop_opts, o))
		return -EINVAL;
	backend = GSO_OPTS_GET(o, backend, 0u);
	flags = GSO_OPTS_GET(o, flags, 0u);
	max_fds = GSO_OPTS_GET(o, max_fds, 0u);
	spin_ns = GSO_OPTS_GET(o, spin_ns, 0u);
	early_ns = GSO_OPTS_GET(o, early_ns, 0u);
	if (backend > GSO_EVLOOP_EPOLL || (flags & ~EV_KNOWN_FLAGS) || max_fds > GSO_EVLOOP_MAX_FDS ||
	    spin_ns > GSO_EVLOOP_MAX_SPIN_NS || early_ns > GSO_EVLOOP_MAX_SPIN_NS)
		return -EINVAL;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->flags = flags;
	l->max_fds = max_fds ? max_fds : GSO_EVLOOP_DEF_MAX_FDS;
	l->spin_ns = spin_ns ? spin_ns : GSO_EVLOOP_DEF_SPIN_NS;
	l->early_ns = early_ns;
	l->slots = calloc(l->max_fds, sizeof(*l->slots));
	l->pend = calloc(l->max_fds, sizeof(*l->pend));
	if (!l->slots || !l->pend) {
		err = -ENOMEM;
		goto fail;
	}

	err = -EOPNOTSUPP;
	if (backend != GSO_EVLOOP_EPOLL) {
		l->ops = &gsoi_evloop_uring_ops;
		l->backend = GSO_EVLOOP_URING;
		err = l->ops->init(l);
		if (err && backend == GSO_EVLOOP_URING)
			goto fail;
	}
	l->uring_err = err;
	if (err) {
		l->ops = &gsoi_evloop_epoll_ops;
		l->backend = GSO_EVLOOP_EPOLL;
		err = l->ops->init(l);
		if (err)
			goto fail;
	}
	l->st.backend = l->backend;
	l->st.uring_err = l->uring_err;
	*out = l;
	return 0;

fail:
	free(l->slots);
	free(l->pend);
	free(l);
	return err;
}

void gso_evloop__destroy(struct gso_evloop *l)
{
	if (!l)
		return;
	l->ops->fini(l);
	free(l->slots);
	free(l->pend);
	free(l);
}

/* ---- descriptors ---------------------------------------------------------- */

static int find_fd(const struct gso_evloop *l, int fd)
{
	for (uint32_t i = 0; i < l->max_fds; i++)
		if (l->slots[i].state != EV_FREE && l->slots[i].fd == fd)
			return (int)i;
	return -1;
}

static bool events_ok(uint32_t events)
{
	return events && !(events & ~(uint32_t)EV_KNOWN_EVENTS);
}

int gso_evloop__add_fd(struct gso_evloop *l, int fd, uint32_t events, uint64_t cookie)
{
	struct ev_slot *s = NULL;
	uint32_t i;
	int err;

	if (!l || fd < 0 || !events_ok(events))
		return -EINVAL;
	if (find_fd(l, fd) >= 0)
		return -EEXIST;
	for (i = 0; i < l->max_fds; i++)
		if (l->slots[i].state == EV_FREE) {
			s = &l->slots[i];
			break;
		}
	if (!s)
		return -ENOSPC;
	s->fd = fd;
	s->events = events;
	s->cookie = cookie;
	s->gen++;
	s->state = EV_IDLE;
	err = l->ops->add(l, i);
	if (err) {
		s->state = EV_FREE;
		return err;
	}
	l->nwatched++;
	return 0;
}

int gso_evloop__mod_fd(struct gso_evloop *l, int fd, uint32_t events, uint64_t cookie)
{
	struct ev_slot *s, old;
	int i, err;

	if (!l || fd < 0 || !events_ok(events))
		return -EINVAL;
	i = find_fd(l, fd);
	if (i < 0)
		return -ENOENT;
	s = &l->slots[i];
	old = *s;
	s->events = events;
	s->cookie = cookie;
	s->gen++; /* a pending event of the old settings is now stale */
	err = l->ops->mod(l, (uint32_t)i);
	if (err)
		*s = old;
	return err;
}

int gso_evloop__del_fd(struct gso_evloop *l, int fd)
{
	int i;

	if (!l)
		return -EINVAL;
	i = find_fd(l, fd);
	if (i < 0)
		return -ENOENT;
	l->slots[i].gen++;
	l->ops->del(l, (uint32_t)i);
	l->slots[i].state = EV_FREE;
	l->slots[i].fd = -1;
	l->nwatched--;
	return 0;
}

void gsoi_evloop_push(struct gso_evloop *l, uint32_t i, uint32_t revents, bool dead)
{
	struct ev_pend *p = &l->pend[(l->pend_head + l->pend_n) % l->max_fds];

	p->slot = i;
	p->gen = l->slots[i].gen;
	p->revents = revents;
	p->dead = dead;
	l->pend_n++;
	l->slots[i].state = EV_PENDING;
}

/*
 * Hand out pending events.  A delivered descriptor goes back to IDLE, so
 * io_uring re-arms its poll at the next wait (level-triggered).
 */
static int deliver(struct gso_evloop *l, struct gso_evloop_event *ev, unsigned max)
{
	unsigned n = 0;

	while (l->pend_n && n < max) {
		struct ev_pend *p = &l->pend[l->pend_head];
		struct ev_slot *s = &l->slots[p->slot];

		l->pend_head = (l->pend_head + 1) % l->max_fds;
		l->pend_n--;
		if (s->state == EV_FREE || s->gen != p->gen)
			continue;
		ev[n].cookie = s->cookie;
		ev[n].fd = s->fd;
		ev[n].revents = p->revents;
		n++;
		if (s->state == EV_PENDING) {
			s->state = p->dead ? EV_DEAD : EV_IDLE;
			if (!p->dead && l->ops->delivered)
				l->ops->delivered(l, p->slot);
		}
	}
	l->st.events += n;
	return (int)n;
}

/* ---- waiting -------------------------------------------------------------- */

/* Spin to the deadline, watching for events the backend can see for free. */
static int spin_to(struct gso_evloop *l, uint64_t now, uint64_t deadline,
		   struct gso_evloop_event *ev, unsigned max)
{
	uint64_t t0 = now;

	while (now < deadline) {
		if (l->ops->peek) {
			l->ops->peek(l);
			if (l->pend_n) {
				int n = deliver(l, ev, max);

				if (n) {
					l->st.spin_ns += gso_evloop_now_ns() - t0;
					return n;
				}
			}
		}
		cpu_relax();
		now = gso_evloop_now_ns();
	}
	l->st.spins++;
	l->st.spin_ns += now - t0;
	l->st.timeouts++;
	hist_add(&l->late_spin, now - deadline);
	return 0;
}

int gso_evloop__wait_until(struct gso_evloop *l, uint64_t deadline, struct gso_evloop_event *ev,
			   unsigned max)
{
	bool spin_ok;
	uint64_t now, margin;
	int err, n;

	if (!l || !ev || !max)
		return -EINVAL;
	l->st.waits++;
	if (l->pend_n && (n = deliver(l, ev, max)))
		return n;

	now = gso_evloop_now_ns();
	if (now >= deadline) {
		l->st.immediate++;
		err = l->ops->poll_now(l);
		if (err < 0)
			return err;
		n = deliver(l, ev, max);
		if (!n)
			l->st.timeouts++;
		return n;
	}

	spin_ok = !(l->flags & GSO_EVLOOP_F_NO_SPIN);
	margin = l->spin_ns > l->early_ns ? l->spin_ns : l->early_ns;
	for (;;) {
		uint64_t wake_at;

		if (spin_ok && deadline - now <= margin) {
			/* Arm polls and collect what is ready before spinning. */
			err = l->ops->poll_now(l);
			if (err < 0)
				return err;
			if (l->pend_n && (n = deliver(l, ev, max)))
				return n;
			return spin_to(l, gso_evloop_now_ns(), deadline, ev, max);
		}

		wake_at = deadline;
		if (spin_ok && l->early_ns && deadline != GSO_EVLOOP_FOREVER)
			wake_at = deadline - l->early_ns;
		err = l->ops->sleep(l, wake_at);
		now = gso_evloop_now_ns();
		if (l->pend_n && (n = deliver(l, ev, max)))
			return n;
		if (now >= deadline) {
			l->st.timeouts++;
			hist_add(&l->late_sleep, now - deadline);
			return 0;
		}
		if (err < 0)
			return err;
		if (now < wake_at)
			l->st.spurious++;
	}
}

/* ---- statistics ------------------------------------------------------------ */

int gso_evloop__stats(const struct gso_evloop *l, struct gso_evloop_stats *st)
{
	struct gso_evloop_stats s;

	if (!l || !GSO_OUT_VALID(st))
		return -EINVAL;
	s = l->st;
	s.late_sleep_n = l->late_sleep.n;
	s.late_sleep_p50_ns = hist_pct(&l->late_sleep, 500);
	s.late_sleep_p99_ns = hist_pct(&l->late_sleep, 990);
	s.late_sleep_max_ns = l->late_sleep.max;
	s.late_spin_n = l->late_spin.n;
	s.late_spin_p50_ns = hist_pct(&l->late_spin, 500);
	s.late_spin_p99_ns = hist_pct(&l->late_spin, 990);
	s.late_spin_max_ns = l->late_spin.max;
	GSO_OUT_PUT(st, s);
	return 0;
}

void gso_evloop__stats_reset(struct gso_evloop *l)
{
	if (!l)
		return;
	memset(&l->st, 0, sizeof(l->st));
	l->st.backend = l->backend;
	l->st.uring_err = l->uring_err;
	memset(&l->late_sleep, 0, sizeof(l->late_sleep));
	memset(&l->late_spin, 0, sizeof(l->late_spin));
}
