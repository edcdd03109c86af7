/*
 * The AF_XDP receive side (see xsk_rx_internal.h): fill ring kept topped
 * up from spare receive chunks, RX ring read in batches, frames lent to
 * the caller until released.
 */
#include "xsk_rx_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Empty receive calls between two liveness probes (one syscall each). */
#define PROBE_EVERY 64
/* rx_wait polls in slices this long: poll() does not wake for an unbound socket. */
#define WAIT_SLICE_MS 50

int gsoi_xsk_rx_init(struct xsk_rx *r, struct umem_alloc *ua, uint32_t n)
{
	uint32_t c;

	memset(r, 0, sizeof(*r));
	if (!n)
		return 0;
	if (ua_free_backend(ua) < n)
		return -ENOBUFS;
	r->where = calloc(n, sizeof(*r->where));
	r->spare = calloc(n, sizeof(*r->spare));
	if (!r->where || !r->spare) {
		gsoi_xsk_rx_fini(r);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		int err = gsoi_ua_alloc_one(ua, &c);

		/* The backend stack pops in ascending order while nothing else took from it. */
		if (err || (i && c != r->first + i)) {
			if (!err)
				gsoi_ua_unhold(ua, c);
			for (uint32_t k = 0; k < i; k++)
				gsoi_ua_unhold(ua, r->first + k);
			gsoi_xsk_rx_fini(r);
			return err ? err : -EIO;
		}
		if (!i)
			r->first = c;
		r->where[i] = RXC_SPARE;
	}
	/* Post the lowest chunks first. */
	for (uint32_t i = 0; i < n; i++)
		r->spare[i] = n - 1 - i;
	r->nspare = n;
	r->n = n;
	return 0;
}

void gsoi_xsk_rx_fini(struct xsk_rx *r)
{
	free(r->where);
	free(r->spare);
	r->where = NULL;
	r->spare = NULL;
	r->n = r->nspare = 0;
}

/* recvfrom() tells whether the socket is still bound, and wakes a zero-copy driver's RX. */
int gsoi_xsk_rx_probe(const struct xsk_sock *s)
{
	if (recvfrom(s->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL) >= 0)
		return 0;
	switch (errno) {
	case ENXIO:  /* unbound: the interface was unregistered */
	case ENODEV:
	case EBADF:
	case ENOTCONN:
		return -ENODEV;
	case ENETDOWN:
		return -ENETDOWN;
	default:
		/* EAGAIN, EBUSY, EINTR: bound and alive. */
		return 0;
	}
}

void gsoi_xsk_rx_refill(struct xsk_rx *r, struct xsk_sock *s, struct dev_mem *m)
{
	uint32_t k, idx;

	if (!r->nspare || !s->fill.map)
		return;
	k = xring_prod_free(&s->fill, r->nspare);
	if (k > r->nspare)
		k = r->nspare;
	if (!k || !xring_prod_reserve(&s->fill, k, &idx))
		return;
	for (uint32_t i = 0; i < k; i++) {
		uint32_t rel = r->spare[--r->nspare];
		uint32_t chunk = r->first + rel;

		/* Unaligned mode takes the address as is; aligned mode wants chunk starts anyway. */
		xring_fill_set(&s->fill, idx + i, (uint64_t)chunk * m->chunk_size);
		gsoi_ua_get(&m->ua, chunk);
		r->where[rel] = RXC_KERNEL;
	}
	r->nkernel += k;
	xring_prod_submit(&s->fill);
	/* Copy mode never asks; a zero-copy driver may sleep until woken. */
	if (r->zerocopy && xring_needs_wakeup(&s->fill))
		gsoi_xsk_rx_probe(s);
}

/* Back to the spare stack (the caller refills). */
static void recycle(struct xsk_rx *r, uint32_t rel)
{
	r->where[rel] = RXC_SPARE;
	r->spare[r->nspare++] = rel;
}

int gsoi_xsk_rx_recv(struct xsk_rx *r, struct xsk_sock *s, struct dev_mem *m, struct gso_rx_pkt *out, unsigned n)
{
	uint32_t idx, got, k = 0;

	got = xring_cons_peek(&s->rx, n, &idx);
	for (uint32_t i = 0; i < got; i++) {
		const struct xdp_desc *d = xring_rx_desc(&s->rx, idx + i);
		/* Unaligned mode carries the offset into the chunk in the top bits. */
		uint64_t a = (d->addr & XSK_UNALIGNED_BUF_ADDR_MASK) + (d->addr >> XSK_UNALIGNED_BUF_OFFSET_SHIFT);
		uint64_t chunk = a / m->chunk_size;
		uint32_t rel = (uint32_t)(chunk - r->first);
		bool contd = d->options & XDP_PKT_CONTD;

		if (chunk < r->first || rel >= r->n || r->where[rel] != RXC_KERNEL ||
		    a % m->chunk_size + d->len > m->chunk_size) {
			r->bad_descs++;
			continue;
		}
		gsoi_ua_put(&m->ua, (uint32_t)chunk);
		r->nkernel--;
		/* A frame in several descriptors: ours are single chunks, so drop all its pieces. */
		if (contd || r->dropping) {
			recycle(r, rel);
			if (!contd)
				r->multi_dropped++;
			r->dropping = contd;
			continue;
		}
		r->where[rel] = RXC_USER;
		r->nuser++;
		out[k].data = m->base + a;
		out[k].len = d->len;
		out[k].id_ = (uint32_t)chunk;
		r->frames++;
		r->bytes += d->len;
		k++;
	}
	if (got)
		xring_cons_release(&s->rx);
	gsoi_xsk_rx_refill(r, s, m);
	if (k || got)
		return (int)k;
	if (++r->empty >= PROBE_EVERY) {
		r->empty = 0;
		if (gsoi_xsk_rx_probe(s) == -ENODEV)
			return -ENODEV;
	}
	return 0;
}

int gsoi_xsk_rx_release(struct xsk_rx *r, struct xsk_sock *s, struct dev_mem *m, const struct gso_rx_pkt *p,
			unsigned n)
{
	unsigned i;

	/* Check all, marking as we go so a frame listed twice is caught; undo on error. */
	for (i = 0; i < n; i++) {
		uint32_t rel = p[i].id_ - r->first;

		if (p[i].id_ < r->first || rel >= r->n || r->where[rel] != RXC_USER ||
		    p[i].data < m->base + (uint64_t)p[i].id_ * m->chunk_size ||
		    p[i].data >= m->base + (uint64_t)(p[i].id_ + 1) * m->chunk_size)
			break;
		r->where[rel] = RXC_GONE;
	}
	if (i < n) {
		while (i--)
			r->where[p[i].id_ - r->first] = RXC_USER;
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		uint32_t rel = p[i].id_ - r->first;

		r->nuser--;
		if (s)
			recycle(r, rel);
		else
			gsoi_ua_unhold(&m->ua, p[i].id_); /* closed: stays RXC_GONE */
	}
	if (s)
		gsoi_xsk_rx_refill(r, s, m);
	return (int)n;
}

int gsoi_xsk_rx_wait(struct xsk_rx *r, struct xsk_sock *s, int timeout_ms)
{
	int left = timeout_ms, err;

	(void)r;
	for (;;) {
		struct pollfd pf = { .fd = s->fd, .events = POLLIN };
		int slice = left < 0 || left > WAIT_SLICE_MS ? WAIT_SLICE_MS : left, pr;

		if (xring_cons_avail(&s->rx))
			return 0;
		err = gsoi_xsk_rx_probe(s);
		if (err)
			return err;
		pr = poll(&pf, 1, slice);
		if (pr < 0)
			return -errno;
		if (pr > 0 && (pf.revents & POLLIN))
			return 0;
		if (left >= 0) {
			left -= slice;
			if (left <= 0)
				return xring_cons_avail(&s->rx) ? 0 : (gsoi_xsk_rx_probe(s) ?: -ETIMEDOUT);
		}
	}
}

void gsoi_xsk_rx_save_stats(struct xsk_rx *r, const struct xsk_sock *s)
{
	struct compat_xdp_statistics st;

	if (r->n && s->fd >= 0 && !gsoi_xsk_sock_stats(s, &st))
		r->kfinal = st;
}

void gsoi_xsk_rx_close(struct xsk_rx *r, struct umem_alloc *ua)
{
	for (uint32_t i = 0; i < r->n; i++) {
		if (r->where[i] == RXC_SPARE || r->where[i] == RXC_KERNEL) {
			gsoi_ua_unhold(ua, r->first + i);
			r->where[i] = RXC_GONE;
		}
	}
	r->nspare = 0;
	r->nkernel = 0;
}

void gsoi_xsk_rx_stats(const struct xsk_rx *r, const struct xsk_sock *s, struct gso_dev_stats *st)
{
	struct compat_xdp_statistics k = r->kfinal;

	if (!r->n)
		return;
	if (s->fd >= 0)
		gsoi_xsk_sock_stats(s, &k);
	st->rx_held = r->nuser;
	st->rx_posted = r->nkernel;
	st->rx_frames = r->frames;
	st->rx_bytes = r->bytes;
	st->rx_dropped_multi = r->multi_dropped;
	st->rx_bad_descs = r->bad_descs;
	st->rx_kernel_dropped = k.rx_dropped;
	st->rx_ring_full = k.rx_ring_full;
	st->rx_fill_empty = k.rx_fill_ring_empty_descs;
	st->rx_kernel_invalid = k.rx_invalid_descs;
}
