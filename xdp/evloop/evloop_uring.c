/*
 * io_uring backend of the event loop: one-shot polls plus one absolute
 * timeout, submitted and waited for in a single io_uring_enter().
 *
 * The timeout is kept armed across waits and moved with a timeout update
 * (IOSQE_CQE_SKIP_SUCCESS: a successful move posts nothing), rather than
 * removed and re-added, because a removal posts a completion for the
 * removed timeout, and that completion would end the next wait at once.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>

#include "evloop_internal.h"

/* user_data: type (2 bits) | generation (30 bits) | slot (32 bits). */
enum { UD_OTHER = 0, UD_POLL = 1, UD_TMO = 2, UD_UPD = 3 };
#define UD_GEN_MASK 0x3fffffffu

static inline uint64_t ud_make(unsigned type, uint32_t gen, uint32_t idx)
{
	return (uint64_t)type << 62 | (uint64_t)(gen & UD_GEN_MASK) << 32 | idx;
}

static inline unsigned ud_type(uint64_t ud)
{
	return (unsigned)(ud >> 62);
}

static inline uint32_t ud_gen(uint64_t ud)
{
	return (uint32_t)(ud >> 32) & UD_GEN_MASK;
}

static inline uint32_t ud_idx(uint64_t ud)
{
	return (uint32_t)ud;
}

static int u_init(struct gso_evloop *l)
{
	unsigned entries = 8;
	int err;

	/* Every watched fd may need a poll SQE in one submit, plus the timeout. */
	while (entries < l->max_fds + 4)
		entries <<= 1;
	err = io_uring_queue_init(entries, &l->u.ring, 0);
	if (err)
		return err < 0 ? err : -EIO;
	/* Without CQE skipping (Linux < 5.17) every timeout move would wake us. */
	if (!(l->u.ring.features & IORING_FEAT_CQE_SKIP)) {
		io_uring_queue_exit(&l->u.ring);
		return -EOPNOTSUPP;
	}
	l->u.arm = calloc(l->max_fds, sizeof(*l->u.arm));
	if (!l->u.arm) {
		io_uring_queue_exit(&l->u.ring);
		return -ENOMEM;
	}
	return 0;
}

static void u_fini(struct gso_evloop *l)
{
	io_uring_queue_exit(&l->u.ring);
	free(l->u.arm);
}

static struct io_uring_sqe *get_sqe(struct gso_evloop *l)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->u.ring);

	/* The SQ holds max_fds + 4 entries, so this only happens after many mod/del calls. */
	if (!sqe) {
		io_uring_submit(&l->u.ring);
		l->st.syscalls++;
		sqe = io_uring_get_sqe(&l->u.ring);
	}
	return sqe;
}

static void queue_arm(struct gso_evloop *l, uint32_t i)
{
	struct ev_slot *s = &l->slots[i];

	s->state = EV_IDLE;
	if (!s->queued) {
		s->queued = true;
		l->u.arm[l->u.narm++] = i;
	}
}

/* Prepare a poll for each slot that needs one; returns how many. */
static unsigned arm_polls(struct gso_evloop *l)
{
	unsigned n = 0;

	for (uint32_t k = 0; k < l->u.narm; k++) {
		uint32_t i = l->u.arm[k];
		struct ev_slot *s = &l->slots[i];
		struct io_uring_sqe *sqe;

		s->queued = false;
		if (s->state != EV_IDLE)
			continue;
		sqe = get_sqe(l);
		if (!sqe) {
			/* Keep the rest queued; the next wait tries again. */
			uint32_t left = l->u.narm - k;

			for (uint32_t j = 0; j < left; j++) {
				l->u.arm[j] = l->u.arm[k + j];
				l->slots[l->u.arm[j]].queued = true;
			}
			l->u.narm = left;
			return n;
		}
		io_uring_prep_poll_add(sqe, s->fd, s->events);
		io_uring_sqe_set_data64(sqe, ud_make(UD_POLL, s->gen, i));
		s->state = EV_ARMED;
		n++;
	}
	l->u.narm = 0;
	return n;
}

/* Cancel slot i's poll, which was armed under generation `gen`. */
static void cancel_poll(struct gso_evloop *l, uint32_t i, uint32_t gen)
{
	struct io_uring_sqe *sqe = get_sqe(l);

	if (!sqe)
		return; /* its completion will be stale (generation) and ignored */
	io_uring_prep_poll_remove(sqe, ud_make(UD_POLL, gen, i));
	io_uring_sqe_set_data64(sqe, ud_make(UD_OTHER, 0, 0));
	sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
}

static int u_add(struct gso_evloop *l, uint32_t i)
{
	queue_arm(l, i);
	return 0;
}

static int u_mod(struct gso_evloop *l, uint32_t i)
{
	if (l->slots[i].state == EV_ARMED)
		cancel_poll(l, i, l->slots[i].gen - 1);
	queue_arm(l, i);
	return 0;
}

static void u_del(struct gso_evloop *l, uint32_t i)
{
	if (l->slots[i].state == EV_ARMED) {
		cancel_poll(l, i, l->slots[i].gen - 1);
		/* Now, so that the kernel drops its file reference before the caller closes the fd. */
		io_uring_submit(&l->u.ring);
	}
}

/* Consume every completion; returns how many there were. */
static unsigned harvest(struct gso_evloop *l)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;

	io_uring_for_each_cqe(&l->u.ring, head, cqe) {
		uint64_t ud = cqe->user_data;
		uint32_t i = ud_idx(ud);
		struct ev_slot *s;

		n++;
		switch (ud_type(ud)) {
		case UD_POLL:
			if (i >= l->max_fds)
				break;
			s = &l->slots[i];
			if (s->state != EV_ARMED || (s->gen & UD_GEN_MASK) != ud_gen(ud))
				break; /* stale: cancelled by mod/del */
			if (cqe->res > 0)
				gsoi_evloop_push(l, i, (uint32_t)cqe->res, false);
			else if (cqe->res == -ECANCELED || cqe->res == 0)
				queue_arm(l, i);
			else
				gsoi_evloop_push(l, i, cqe->res == -EBADF ? POLLNVAL : POLLERR, true);
			break;
		case UD_TMO:
			if (ud_gen(ud) == (l->u.tmo_gen & UD_GEN_MASK))
				l->u.tmo_armed = false;
			break;
		case UD_UPD:
			/*
			 * Only failures post (CQE skip): the timeout had fired or was
			 * going away.  Forget it; its own completion, if still to
			 * come, is then stale.
			 */
			if (ud_gen(ud) == (l->u.tmo_gen & UD_GEN_MASK)) {
				l->u.tmo_armed = false;
				l->u.tmo_gen++;
			}
			break;
		default:
			break;
		}
	}
	io_uring_cq_advance(&l->u.ring, n);
	return n;
}

static int u_poll_now(struct gso_evloop *l)
{
	if (arm_polls(l)) {
		int ret = io_uring_submit(&l->u.ring);

		l->st.syscalls++;
		if (ret < 0)
			return ret;
	}
	harvest(l);
	return 0;
}

static void u_peek(struct gso_evloop *l)
{
	harvest(l);
}

static int u_sleep(struct gso_evloop *l, uint64_t wake_at)
{
	struct io_uring_sqe *sqe;
	int ret;

	arm_polls(l);
	if (!l->u.tmo_armed || l->u.tmo_at != wake_at) {
		/* GSO_EVLOOP_FOREVER becomes a time past KTIME_MAX, which the kernel clamps. */
		l->u.ts.tv_sec = (int64_t)(wake_at / 1000000000ull);
		l->u.ts.tv_nsec = (long long)(wake_at % 1000000000ull);
		sqe = get_sqe(l);
		if (!sqe)
			return -EBUSY;
		if (!l->u.tmo_armed) {
			l->u.tmo_gen++;
			io_uring_prep_timeout(sqe, &l->u.ts, 0, IORING_TIMEOUT_ABS);
			io_uring_sqe_set_data64(sqe, ud_make(UD_TMO, l->u.tmo_gen, 0));
			l->u.tmo_armed = true;
		} else {
			io_uring_prep_timeout_update(sqe, &l->u.ts, ud_make(UD_TMO, l->u.tmo_gen, 0),
						     IORING_TIMEOUT_ABS);
			io_uring_sqe_set_data64(sqe, ud_make(UD_UPD, l->u.tmo_gen, 0));
			sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
		}
		l->u.tmo_at = wake_at;
	}
	ret = io_uring_submit_and_wait(&l->u.ring, 1);
	l->st.syscalls++;
	l->st.sleeps++;
	if (ret < 0 && ret != -EINTR && ret != -ETIME)
		return ret;
	l->st.wakeups++;
	/* With wait_nr 1 the kernel returns without a completion only for a signal. */
	if (!harvest(l))
		return -EINTR;
	return 0;
}

const struct ev_ops gsoi_evloop_uring_ops = {
	.init = u_init,
	.fini = u_fini,
	.add = u_add,
	.mod = u_mod,
	.delivered = queue_arm,
	.del = u_del,
	.poll_now = u_poll_now,
	.peek = u_peek,
	.sleep = u_sleep,
};
