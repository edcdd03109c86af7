/* The public device calls: checks, then the backend's ops; buffers over dev_mem. */
#include "dev_internal.h"
#include "opts_internal.h"

#include <errno.h>
#include <string.h>


int gso_dev__caps(const struct gso_dev *dev, struct gso_dev_caps *caps)
{
	struct gso_dev_caps full;

	if (!dev || !GSO_OUT_VALID(caps))
		return -EINVAL;
	memset(&full, 0, sizeof(full));
	dev->ops->caps(dev, &full);
	if (!full.max_segs_tcp)
		full.max_segs_tcp = full.max_segs;
	if (!full.max_segs_udp)
		full.max_segs_udp = full.max_segs < GSO_UDP_MAX_SEGS ? full.max_segs : GSO_UDP_MAX_SEGS;
	if (dev->mem) {
		full.flags |= GSO_DEV_BUFS;
		full.buf_chunk = dev->mem->chunk_size;
		full.buf_headroom = dev->mem->headroom;
		full.buf_max = dev->mem->ua.nbuf ? dev->mem->ua.nbuf * dev->mem->chunk_size - dev->mem->headroom : 0;
	}
	GSO_OUT_PUT(caps, full);
	return 0;
}

const char *gso_dev__name(const struct gso_dev *dev)
{
	return dev ? dev->name : NULL;
}

int gso_dev__max_payload(struct gso_dev *dev, const struct gso_tmpl *t, uint32_t tx_flags)
{
	struct gso_dev_caps c;
	uint32_t l3_hdrs, room, max;

	if (!dev || !t || (tx_flags & ~(GSO_TX_F_SW_CSUM | GSO_TX_F_COPY)) || t->hdr_len <= t->l3_off)
		return -EINVAL;
	if (dev->closed)
		return -ESHUTDOWN;
	memset(&c, 0, sizeof(c));
	dev->ops->caps(dev, &c);
	/* The MTU counts from the IP header on: IP and L4 headers, then payload. */
	l3_hdrs = (uint32_t)(t->hdr_len - t->l3_off);
	if (c.mtu <= l3_hdrs)
		return -EMSGSIZE;
	max = c.mtu - l3_hdrs;
	room = dev->ops->frame_room ? dev->ops->frame_room(dev, t, tx_flags) : UINT32_MAX;
	if (room < max)
		max = room;
	if (!max)
		return -EMSGSIZE;
	return (int)(max > 65535 ? 65535 : max);
}

int gso_dev__inflight(const struct gso_dev *dev)
{
	if (!dev)
		return -EINVAL;
	if (dev->closed)
		return 0;
	return (int)dev->ops->inflight(dev);
}

uint64_t gsoi_dev_completed(const struct gso_dev *dev)
{
	return dev->closed || !dev->ops->completed ? 0 : dev->ops->completed(dev);
}

int gso_dev__ifindex(const struct gso_dev *dev)
{
	if (!dev)
		return -EINVAL;
	return dev->ifindex > 0 ? dev->ifindex : -ENODEV;
}

int gso_dev__probe(struct gso_dev *dev)
{
	if (!dev)
		return -EINVAL;
	if (dev->closed)
		return -ESHUTDOWN;
	return dev->ops->probe ? dev->ops->probe(dev) : 0;
}

/* ---- buffers ---- */

/* Callers allocate gso_buf: a new private field would change its size (the ABI). */
_Static_assert(sizeof(struct gso_buf) == sizeof(uint8_t *) + 4 * sizeof(uint32_t),
	       "struct gso_buf changed size");

int gso_dev__buf_alloc(struct gso_dev *dev, uint32_t len, struct gso_buf *buf)
{
	struct dev_mem *m;
	uint64_t n;
	uint32_t first;
	int err;

	if (!dev || !buf || !len)
		return -EINVAL;
	if (!dev->mem)
		return -EOPNOTSUPP;
	if (dev->closed)
		return -ESHUTDOWN;
	m = dev->mem;
	n = ((uint64_t)len + m->headroom + m->chunk_size - 1) / m->chunk_size;
	if (n > m->ua.nbuf)
		return -EMSGSIZE;
	err = gsoi_ua_alloc_run(&m->ua, (uint32_t)n, &first);
	if (err) {
		if (err == -ENOBUFS)
			dev->buf_nobufs++;
		return err;
	}
	buf->data = m->base + (uint64_t)first * m->chunk_size + m->headroom;
	buf->cap = (uint32_t)(n * m->chunk_size - m->headroom);
	buf->first_ = first;
	buf->gen_ = ua_gen(&m->ua, first);
	buf->done_ = 0;
	return 0;
}

/*
 * The buffer's fields agree with each other and with the memory; returns
 * its chunk count, or 0.  Whether its chunks are still its own is up to
 * the generation check of each caller, over the chunks it touches.
 */
static uint32_t buf_chunks(const struct dev_mem *m, const struct gso_buf *b)
{
	uint64_t span = (uint64_t)b->cap + m->headroom;
	uint64_t n = span / m->chunk_size;

	if (!n || span % m->chunk_size || b->first_ >= m->ua.nbuf || n > m->ua.nbuf - b->first_ ||
	    b->done_ > n || b->data != m->base + (uint64_t)b->first_ * m->chunk_size + m->headroom)
		return 0;
	return (uint32_t)n;
}

int gso_dev__buf_release(struct gso_dev *dev, struct gso_buf *buf, uint32_t upto)
{
	struct dev_mem *m;
	uint32_t n, done, rel;

	if (!dev || !buf || !dev->mem || upto > buf->cap)
		return -EINVAL;
	m = dev->mem;
	n = buf_chunks(m, buf);
	if (!n)
		return -EINVAL;
	/* Chunk k ends at data offset (k + 1) * chunk_size - headroom; upto <= cap keeps done <= n. */
	done = (uint32_t)(((uint64_t)upto + m->headroom) / m->chunk_size);
	if (done <= buf->done_) {
		/* Nothing to release: still refuse a stale copy, by its first chunk not released yet. */
		if (buf->done_ < n && !gsoi_ua_run_held(&m->ua, buf->first_ + buf->done_, 1, buf->gen_))
			return -EINVAL;
		return 0;
	}
	/* All or nothing: a stale copy must not free what is another buffer's now. */
	if (gsoi_ua_unhold_run(&m->ua, buf->first_ + buf->done_, done - buf->done_, buf->gen_))
		return -EINVAL;
	rel = done - buf->done_;
	buf->done_ = done;
	return (int)rel;
}

void gso_dev__buf_free(struct gso_dev *dev, struct gso_buf *buf)
{
	if (!dev || !buf || !buf->cap)
		return;
	gso_dev__buf_release(dev, buf, buf->cap);
	memset(buf, 0, sizeof(*buf));
}

int gsoi_dev_buf_check(const struct dev_mem *m, const struct gso_buf *b, uint32_t off, uint32_t len)
{
	uint64_t end = (uint64_t)off + len;
	uint32_t c0, c1;

	if (!m || !b || !buf_chunks(m, b) || end > b->cap)
		return -EINVAL;
	/* Empty payloads reference nothing. */
	if (!len)
		return 0;
	c0 = (uint32_t)(((uint64_t)off + m->headroom) / m->chunk_size);
	c1 = (uint32_t)((end - 1 + m->headroom) / m->chunk_size);
	/* Released chunks, or chunks of another allocation now, are not this buffer's. */
	if (c0 < b->done_ || !gsoi_ua_run_held(&m->ua, b->first_ + c0, c1 - c0 + 1, b->gen_))
		return -EINVAL;
	return 0;
}

/* ---- the data path ---- */

int gso_dev__plan(struct gso_dev *dev, const struct gso_tx *tx, struct gso_tx_plan *plan)
{
	struct gso_tx_plan full;
	int err;

	if (!dev || !tx || !GSO_OUT_VALID(plan))
		return -EINVAL;
	if (dev->closed)
		return -ESHUTDOWN;
	memset(&full, 0, sizeof(full));
	err = dev->ops->plan(dev, tx, &full);
	if (err)
		return err;
	GSO_OUT_PUT(plan, full);
	return 0;
}

int gso_dev__submit(struct gso_dev *dev, const struct gso_tx *tx, unsigned n)
{
	if (!dev || !tx || !n)
		return -EINVAL;
	if (dev->closed)
		return -ESHUTDOWN;
	return dev->ops->submit(dev, tx, n);
}

int gso_dev__kick(struct gso_dev *dev)
{
	if (!dev)
		return -EINVAL;
	if (dev->closed)
		return -ESHUTDOWN;
	return dev->ops->kick(dev);
}

int gso_dev__reap(struct gso_dev *dev, unsigned max)
{
	if (!dev)
		return -EINVAL;
	if (dev->closed)
		return -ESHUTDOWN;
	return dev->ops->reap(dev, max);
}

int gso_dev__stats(struct gso_dev *dev, struct gso_dev_stats *st)
{
	struct gso_dev_stats full;

	if (!dev || !GSO_OUT_VALID(st))
		return -EINVAL;
	memset(&full, 0, sizeof(full));
	dev->ops->stats(dev, &full);
	full.umem_full += dev->buf_nobufs;
	if (dev->mem) {
		const struct umem_alloc *a = &dev->mem->ua;
		full.chunks_total = a->nchunks;
		full.chunks_free = ua_count(a, UA_FREE);
		full.chunks_queued = ua_count(a, UA_QUEUED);
		full.chunks_inflight = ua_count(a, UA_INFLIGHT);
		full.chunks_held = ua_count(a, UA_HELD);
	}
	GSO_OUT_PUT(st, full);
	return 0;
}

/* ---- receiving ---- */

int gso_dev__recv(struct gso_dev *dev, struct gso_rx_pkt *out, unsigned n)
{
	if (!dev || !out || !n)
		return -EINVAL;
	if (dev->closed)
		return -ESHUTDOWN;
	if (!dev->ops->recv)
		return -EOPNOTSUPP;
	return dev->ops->recv(dev, out, n);
}

int gso_dev__rx_release(struct gso_dev *dev, const struct gso_rx_pkt *pkts, unsigned n)
{
	if (!dev || (n && !pkts))
		return -EINVAL;
	if (!dev->ops->rx_release)
		return n ? -EINVAL : 0;
	return n ? dev->ops->rx_release(dev, pkts, n) : 0;
}

int gso_dev__rx_wait(struct gso_dev *dev, int timeout_ms)
{
	if (!dev)
		return -EINVAL;
	if (dev->closed)
		return -ESHUTDOWN;
	if (!dev->ops->rx_wait)
		return -EOPNOTSUPP;
	return dev->ops->rx_wait(dev, timeout_ms);
}

int gso_dev__close(struct gso_dev *dev)
{
	if (!dev || dev->closed)
		return 0;
	dev->ops->close(dev);
	dev->closed = true;
	return 0;
}

void gso_dev__destroy(struct gso_dev *dev)
{
	if (!dev)
		return;
	gso_dev__close(dev);
	dev->ops->destroy(dev);
}
