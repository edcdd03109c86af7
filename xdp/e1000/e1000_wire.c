/*
 * Where the e1000 model's frames go: an AF_XDP socket over the device's
 * own memory (the "wire": one frame per chunk of the device region, the
 * socket's UMEM being the whole device memory), or a callback.  Used by
 * the device thread only.  The AF_XDP side reuses the socket set-up of the
 * AF_XDP backend (xsk_internal.h, ring_internal.h): the model needs raw
 * frames on the wire, which the backend's gso_dev__submit() does not take
 * (it segments and checksums itself).
 */
#include "e1000_internal.h"
#include "xsk/xsk_internal.h"
#include "kernel/sleep_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TX_SIZE 2048u
#define FILL_SIZE 64u
#define MAX_STALLS 4

struct cb_wire {
	struct e1000_wire w;
	gso_e1000_wire_fn fn;
	void *ctx;
	uint8_t *frame;
};

struct xsk_wire {
	struct e1000_wire w;
	struct xsk_sock sk;
	uint8_t *area;
	uint32_t cs;
	uint32_t first, nchunks;
	uint32_t *free_;      /* free frame chunks (stack) */
	uint32_t nfree;
	uint32_t idx;         /* next reserved TX slot to fill */
	uint32_t cur;         /* chunk handed out by buf() */
	uint32_t inflight;
	uint64_t errors;
};

/* ---- callback ---- */

static uint32_t cb_room(struct e1000_wire *w, uint32_t want, uint32_t max_len)
{
	(void)w;
	(void)max_len;
	return want;
}

static uint8_t *cb_buf(struct e1000_wire *w)
{
	return ((struct cb_wire *)w)->frame;
}

static void cb_put(struct e1000_wire *w, uint32_t len)
{
	struct cb_wire *c = (struct cb_wire *)w;

	c->fn(c->ctx, c->frame, len);
}

static void cb_flush(struct e1000_wire *w)
{
	(void)w;
}

int gsoi_e1000_wire_cb(struct e1000_wire **out, gso_e1000_wire_fn fn, void *ctx, uint32_t max_frame)
{
	struct cb_wire *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->frame = malloc(max_frame);
	if (!c->frame) {
		free(c);
		return -ENOMEM;
	}
	c->w = (struct e1000_wire){ cb_room, cb_buf, cb_put, cb_flush };
	c->fn = fn;
	c->ctx = ctx;
	*out = &c->w;
	return 0;
}

/* ---- AF_XDP ---- */

static bool is_xsk(const struct e1000_wire *w)
{
	return w->room != cb_room;
}

static void xw_reap(struct xsk_wire *x)
{
	uint32_t idx, n = xring_cons_peek(&x->sk.cq, UINT32_MAX, &idx);

	for (uint32_t i = 0; i < n; i++) {
		uint64_t c = xring_cq_addr(&x->sk.cq, idx + i) / x->cs;

		/* Only our own frame chunks are ever posted. */
		if (c >= x->first && c < x->first + x->nchunks && x->nfree < x->nchunks)
			x->free_[x->nfree++] = (uint32_t)c;
		else
			x->errors++;
	}
	if (n) {
		xring_cons_release(&x->sk.cq);
		x->inflight -= n < x->inflight ? n : x->inflight;
	}
}

/*
 * Push published descriptors.  Copy mode transmits inside sendto(), a
 * budget at a time, so kick until the kernel has taken everything or
 * stops making progress.
 */
static void xw_push(struct xsk_wire *x)
{
	uint32_t prev = UINT32_MAX;
	int stalls = 0;

	for (;;) {
		uint32_t pend = xring_prod_pending(&x->sk.tx);
		int err;

		if (!pend || !xring_needs_wakeup(&x->sk.tx))
			return;
		if (pend >= prev && ++stalls > MAX_STALLS)
			return;
		if (pend < prev)
			stalls = 0;
		prev = pend;
		err = gsoi_xsk_sock_kick(&x->sk);
		xw_reap(x);
		if (err && err != -EAGAIN && err != -EBUSY && err != -ENOBUFS) {
			x->errors++;
			return;
		}
		if (!err && x->sk.zerocopy)
			return;
	}
}

static uint32_t xw_room(struct e1000_wire *w, uint32_t want, uint32_t max_len)
{
	struct xsk_wire *x = (struct xsk_wire *)w;
	uint32_t n, idx;

	if (max_len > x->cs)
		return 0;
	xw_reap(x);
	for (int tries = 0; tries < 2; tries++) {
		n = want < x->nfree ? want : x->nfree;
		n = n < xring_prod_free(&x->sk.tx, n) ? n : xring_prod_free(&x->sk.tx, n);
		if (n)
			break;
		/* Full: push what is waiting, take back what completed. */
		xring_prod_submit(&x->sk.tx);
		xw_push(x);
		xw_reap(x);
	}
	if (!n || !xring_prod_reserve(&x->sk.tx, n, &idx))
		return 0;
	x->idx = idx;
	return n;
}

static uint8_t *xw_buf(struct e1000_wire *w)
{
	struct xsk_wire *x = (struct xsk_wire *)w;

	x->cur = x->free_[--x->nfree];
	return x->area + (uint64_t)x->cur * x->cs;
}

static void xw_put(struct e1000_wire *w, uint32_t len)
{
	struct xsk_wire *x = (struct xsk_wire *)w;
	struct xdp_desc *d = xring_tx_desc(&x->sk.tx, x->idx++);

	d->addr = (uint64_t)x->cur * x->cs;
	d->len = len;
	d->options = 0;
	x->inflight++;
}

static void xw_flush(struct e1000_wire *w)
{
	struct xsk_wire *x = (struct xsk_wire *)w;

	xring_prod_submit(&x->sk.tx);
	xw_push(x);
}

int gsoi_e1000_wire_xsk(struct e1000_wire **out, const struct xsk_wire_cfg *c)
{
	struct xsk_sock_cfg sc = {
		.ifindex = c->ifindex,
		.queue_id = c->queue_id,
		.area = c->area,
		.area_len = c->area_len,
		.chunk_size = c->chunk_size,
		.unaligned = false,
		.want_meta = false,
		.fill_size = FILL_SIZE,
		.tx_size = TX_SIZE,
		.cq_size = 2 * TX_SIZE,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	struct xsk_wire *x;
	long waited = 0;
	uint32_t budget = TX_SIZE;
	int err;

	if (c->xsk_mode == GSO_XSK_MODE_COPY)
		sc.bind_flags |= XDP_COPY;
	else if (c->xsk_mode == GSO_XSK_MODE_ZEROCOPY)
		sc.bind_flags |= XDP_ZEROCOPY;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->free_ = calloc(c->nchunks, sizeof(*x->free_));
	if (!x->free_) {
		free(x);
		return -ENOMEM;
	}
	for (;;) {
		err = gsoi_xsk_sock_open(&x->sk, &sc);
		/* A queue is released a moment after its previous socket closed. */
		if (err != -EBUSY || waited >= (long)c->bind_wait_ms)
			break;
		sleep_ms(10);
		waited += 10;
	}
	if (err) {
		free(x->free_);
		free(x);
		return err;
	}
	/* Copy mode: more descriptors per sendto() than the default 32 where the kernel allows it. */
	setsockopt(x->sk.fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &budget, sizeof(budget));
	x->w = (struct e1000_wire){ xw_room, xw_buf, xw_put, xw_flush };
	x->area = c->area;
	x->cs = c->chunk_size;
	x->first = c->first_chunk;
	x->nchunks = c->nchunks;
	for (uint32_t i = 0; i < c->nchunks; i++)
		x->free_[x->nfree++] = c->first_chunk + c->nchunks - 1 - i;
	*out = &x->w;
	return 0;
}

uint32_t gsoi_e1000_wire_inflight(struct e1000_wire *w)
{
	struct xsk_wire *x = (struct xsk_wire *)w;

	if (!w || !is_xsk(w))
		return 0;
	xw_reap(x);
	if (x->inflight)
		xw_push(x);
	return x->inflight;
}

uint64_t gsoi_e1000_wire_errors(const struct e1000_wire *w)
{
	return w && is_xsk(w) ? ((const struct xsk_wire *)w)->errors : 0;
}

void gsoi_e1000_wire_free(struct e1000_wire *w)
{
	if (!w)
		return;
	if (is_xsk(w)) {
		struct xsk_wire *x = (struct xsk_wire *)w;

		gsoi_xsk_sock_close(&x->sk);
		free(x->free_);
		free(x);
	} else {
		struct cb_wire *c = (struct cb_wire *)w;

		free(c->frame);
		free(c);
	}
}
