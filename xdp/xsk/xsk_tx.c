/*
 * The AF_XDP transmit backend: software GSO into UMEM, checksum metadata
 * where the kernel carries it, multi-buffer frames (header + payload
 * reference) where it takes them, completions back into chunk accounting.
 *
 * UMEM layout: the buffer region (callers' super-segment payload, runs of
 * chunks) and the backend region.  Backend chunks are filled as slabs of
 * slots, each slot = [TX metadata room][header or whole frame], so many
 * headers or frames share a chunk; every descriptor takes one in-flight
 * reference on the chunk it points into.  No descriptor ever crosses a
 * chunk boundary, so a completion address alone names the chunk whose
 * reference it drops.
 */
#include "xsk_dev_internal.h"
#include "kernel/link_internal.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include <gso/offload.h>
#include "offload_xsk_internal.h"

#define MAX_PUSH_STALLS 4    /* kicks in a row that move nothing before -EAGAIN */

/* ---- completions ---- */

int gsoi_xsk_reap(struct gso_dev *d, unsigned max)
{
	struct xsk_dev *x = to_xsk(d);
	uint32_t idx, n, cs = x->mem.chunk_size, good = 0;

	if (!x->sk.cq.map)
		return 0;
	n = xring_cons_peek(&x->sk.cq, max ? max : UINT32_MAX, &idx);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = xring_cq_addr(&x->sk.cq, idx + i);
		/* Unaligned mode may carry an offset in the top bits; we never set one. */
		a = (a & XSK_UNALIGNED_BUF_ADDR_MASK) + (a >> XSK_UNALIGNED_BUF_OFFSET_SHIFT);
		uint64_t c = x->cs_shift ? a >> x->cs_shift : a / cs;
		if (c > UINT32_MAX || gsoi_ua_put(&x->mem.ua, (uint32_t)c)) {
			x->st.bad_completions++;
			continue;
		}
		good++;
	}
	if (n)
		xring_cons_release(&x->sk.cq);
	x->st.tx_completed += good;
	x->inflight -= good < x->inflight ? good : x->inflight;
	return (int)good;
}

/* ---- kicking ---- */

static int mark_dead(struct xsk_dev *x)
{
	x->dead = true;
	return -ENODEV;
}

/*
 * Push published descriptors into the device.  In copy mode the kernel
 * transmits inside sendto(), at most `budget` descriptors per call, and
 * reserves a completion slot per descriptor, so we kick until the ring is
 * drained and reap in between; a kick that moves nothing MAX_PUSH_STALLS
 * times in a row means the device is busy: -EAGAIN.
 */
int gsoi_xsk_push(struct xsk_dev *x)
{
	uint32_t prev = UINT32_MAX;
	int stalls = 0;

	if (x->dead)
		return -ENODEV;
	for (;;) {
		uint32_t pend = xring_prod_pending(&x->sk.tx);
		int err;

		if (!pend || !xring_needs_wakeup(&x->sk.tx)) {
			x->link_down = false;
			return 0;
		}
		if (pend >= prev && ++stalls > MAX_PUSH_STALLS)
			return -EAGAIN;
		if (pend < prev)
			stalls = 0;
		prev = pend;
		err = gsoi_xsk_sock_kick(&x->sk);
		x->st.kicks++;
		gsoi_xsk_reap(&x->dev, 0);
		if (err != -ENETDOWN)
			x->link_down = false;
		switch (err) {
		case 0:
			/* Zero-copy: the driver sends asynchronously after the wake-up. */
			if (x->sk.zerocopy)
				return 0;
			break;
		case -EAGAIN:
		case -EBUSY:   /* copy mode: the device dropped one (consumed, completes) */
		case -ENOBUFS:
			x->st.kick_busy++;
			break;
		case -ENETDOWN:
			/* Admin down: the kernel took nothing, the frames wait in the ring. */
			x->link_down = true;
			return -ENETDOWN;
		case -ENXIO:   /* socket unbound: the interface was unregistered */
		case -ENODEV:
		case -EBADF:
		case -ENOTCONN:
			return mark_dead(x);
		default:
			return err;
		}
	}
}

int gsoi_xsk_kick(struct gso_dev *d)
{
	return gsoi_xsk_push(to_xsk(d));
}

/* ---- slab of slots in backend chunks ---- */

/* Backend chunks that `n` more slots of `slot` bytes would take. */
static uint32_t slab_need(const struct xsk_dev *x, uint32_t slot, uint32_t n)
{
	uint32_t cs = x->mem.chunk_size, per, left;

	/* The usual case, a few slots that fit the current chunk, without dividing. */
	if (x->slab.valid && (uint64_t)n * slot <= cs - x->slab.off)
		return 0;
	per = cs / slot;
	left = x->slab.valid ? (cs - x->slab.off) / slot : 0;
	return n <= left ? 0 : (n - left + per - 1) / per;
}

/*
 * UMEM offset of a fresh slot, with the in-flight reference of the
 * descriptor that will point into it already taken: the reference is what
 * keeps the chunk alive once the slab moves on.  The caller checked
 * slab_need() against the free count.
 */
static uint64_t slab_take(struct xsk_dev *x, uint32_t slot)
{
	uint32_t cs = x->mem.chunk_size;
	uint64_t a;

	if (!x->slab.valid || cs - x->slab.off < slot) {
		/* The old chunk lives on until its last descriptor completes. */
		if (x->slab.valid)
			gsoi_ua_unhold(&x->mem.ua, x->slab.chunk);
		x->slab.valid = !gsoi_ua_alloc_one(&x->mem.ua, &x->slab.chunk);
		x->slab.off = 0;
	}
	a = (uint64_t)x->slab.chunk * cs + x->slab.off;
	x->slab.off += slot;
	gsoi_ua_get(&x->mem.ua, x->slab.chunk);
	return a;
}

/* ---- planning one super-segment ---- */

struct xplan {
	struct gso_extent ext;
	struct gso_super s;
	struct gso_seg_opts o;
	uint32_t nseg;
	uint32_t ndescs;
	uint32_t slot;     /* bytes per slab slot */
	uint64_t pay_addr; /* SG: UMEM offset of payload byte 0 */
	bool sg, partial;
};

/* Descriptors for `len` payload bytes at UMEM offset `a`: split at chunk ends and at chunk_size - meta. */
static uint32_t count_pieces(const struct xsk_dev *x, uint64_t a, uint32_t len)
{
	uint32_t cs = x->mem.chunk_size, cap = cs - x->meta, n = 0;

	while (len) {
		uint32_t room = cs - (uint32_t)(a % cs), p = len;
		if (p > room)
			p = room;
		if (p > cap)
			p = cap;
		a += p;
		len -= p;
		n++;
	}
	return n;
}

/*
 * Segment count with the limits gso_seg_count() checks, without building
 * its plan (header images, checksum seeds): gso_segment() builds that
 * again anyway, and for small frames the second plan is a quarter of the
 * user-space cost.  What only the plan finds (a malformed template, a
 * fixed IP ID without DF) is reported by gso_segment() before anything
 * is published: queue_one() then undoes its reservation.
 */
static int quick_count(const struct gso_tmpl *t, const struct gso_tx *tx)
{
	uint32_t n;

	if (!tx->mss || tx->mss > 65535 || tx->ipid > GSO_IPID_FIXED || t->hdr_len <= t->l3_off)
		return -EINVAL;
	if ((uint64_t)(t->hdr_len - t->l3_off) + tx->len > GSO_MAX_IP_LEN)
		return -EMSGSIZE;
	n = tx->len ? (tx->len + tx->mss - 1) / tx->mss : 1;
	if (n > (t->l4 == GSO_L4_UDP ? GSO_UDP_MAX_SEGS : GSO_MAX_SEGS))
		return -E2BIG;
	return (int)n;
}

/* `exact`: validate everything now (gso_dev__plan); else as quick_count() says. */
static int xplan_make(struct xsk_dev *x, const struct gso_tx *tx, struct xplan *p, bool exact)
{
	const struct gso_tmpl *t = tx->tmpl;
	const uint8_t *payload;
	uint32_t first_len, frame;
	int n, err;

	/* Only the options need zeroing (their padding tail is checked); the rest is set below. */
	memset(&p->o, 0, sizeof(p->o));
	p->ndescs = 0;
	p->pay_addr = 0;
	if (!t || (tx->flags & ~(GSO_TX_F_SW_CSUM | GSO_TX_F_COPY)))
		return -EINVAL;
	if (tx->buf) {
		err = gsoi_dev_buf_check(&x->mem, tx->buf, tx->off, tx->len);
		if (err)
			return err;
		payload = tx->buf->data + tx->off;
	} else {
		if (tx->len && !tx->data)
			return -EINVAL;
		payload = tx->data;
	}
	p->ext.base = payload;
	p->ext.len = tx->len;
	p->s.tmpl = t;
	p->s.ext = &p->ext;
	p->s.n_ext = tx->len ? 1 : 0;
	p->partial = x->csum && !(tx->flags & GSO_TX_F_SW_CSUM);
	p->o.sz = sizeof(p->o);
	p->o.mss = tx->mss;
	p->o.ipid = tx->ipid;
	p->o.csum = p->partial ? GSO_CSUM_PARTIAL : GSO_CSUM_FULL;
	n = exact ? gso_seg_count(&p->s, &p->o) : quick_count(t, tx);
	if (n < 0)
		return n;
	p->nseg = (uint32_t)n;
	/* The largest frame is the first: a full MSS, or all of a short payload. */
	first_len = tx->len < tx->mss ? tx->len : tx->mss;
	if (t->hdr_len - t->l3_off + first_len > x->mtu)
		return -EMSGSIZE;
	if (p->nseg > x->scratch_n)
		return -EMSGSIZE;

	p->sg = x->sg && tx->buf && tx->len && !(tx->flags & GSO_TX_F_COPY);
	if (p->sg) {
		p->pay_addr = dev_buf_addr(&x->mem, tx->buf, tx->off);
		for (uint32_t i = 0; i < p->nseg; i++) {
			uint32_t off = i * tx->mss, len = tx->len - off < tx->mss ? tx->len - off : tx->mss;
			uint32_t descs = 1 + count_pieces(x, p->pay_addr + off, len);
			if (descs > x->max_descs) {
				p->sg = false;
				break;
			}
			p->ndescs += descs;
		}
	}
	if (p->sg) {
		p->slot = align8(x->meta + t->hdr_len);
	} else {
		frame = t->hdr_len + first_len;
		p->slot = align8(x->meta + frame);
		if (p->slot > x->mem.chunk_size)
			return -EMSGSIZE;
		p->ndescs = p->nseg;
	}
	if (p->ndescs > x->sk.tx.size)
		return -EMSGSIZE;
	return 0;
}

/*
 * The checksum request of one frame, through libgso's encoder (the one
 * gso_xsk_txmd_encode() uses), without its validation and writing only
 * what the kernel reads: the flags are a constant it knows, and this runs
 * once per frame.
 */
static void put_meta(struct xsk_dev *x, uint64_t addr, uint16_t start, uint16_t off)
{
	const struct gso_xsk_txmd m = {
		.flags = GSO_XSK_TXMD_CHECKSUM, .csum_start = start, .csum_offset = off,
	};

	gsoi_xsk_txmd_put(&m, x->mem.base + addr - x->meta, false);
}

/* Chunk of a UMEM offset. */
static uint32_t chunk_of(const struct xsk_dev *x, uint64_t a)
{
	return (uint32_t)(a / x->mem.chunk_size);
}

/* Whole frames: payload copied (and checksummed, unless the device finishes it). */
static int build_copy(struct xsk_dev *x, struct xplan *p, uint32_t idx)
{
	uint32_t n = p->nseg;
	int r;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = slab_take(x, p->slot) + x->meta;
		x->frames[i].buf = x->mem.base + a;
		x->frames[i].cap = p->slot - x->meta;
	}
	r = gso_segment(&p->s, &p->o, x->frames, n);
	if (r != (int)n) {
		for (uint32_t i = 0; i < n; i++)
			gsoi_ua_put(&x->mem.ua, chunk_of(x, (uint64_t)((uint8_t *)x->frames[i].buf - x->mem.base)));
		return r < 0 ? r : -EIO;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct xdp_desc *d = xring_tx_desc(&x->sk.tx, idx + i);
		uint64_t a = (uint64_t)((uint8_t *)x->frames[i].buf - x->mem.base);

		d->addr = a;
		d->len = x->frames[i].len;
		d->options = 0;
		if (p->partial) {
			put_meta(x, a, x->frames[i].csum_start, x->frames[i].csum_offset);
			d->options = XDP_TX_METADATA;
		}
		x->st.tx_bytes += d->len;
	}
	return 0;
}

/* Header slots + references into the caller's buffer: payload not copied. */
static int build_sg(struct xsk_dev *x, struct xplan *p, uint32_t idx)
{
	uint32_t n = p->nseg, cs = x->mem.chunk_size, cap = cs - x->meta, k = 0;
	int r;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = slab_take(x, p->slot) + x->meta;
		x->refs[i].hdr = x->mem.base + a;
		x->refs[i].hdr_cap = (uint16_t)(p->slot - x->meta);
	}
	r = gso_segment_ref(&p->s, &p->o, x->refs, n);
	if (r != (int)n) {
		for (uint32_t i = 0; i < n; i++)
			gsoi_ua_put(&x->mem.ua, chunk_of(x, (uint64_t)((uint8_t *)x->refs[i].hdr - x->mem.base)));
		return r < 0 ? r : -EIO;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct gso_seg_ref *s = &x->refs[i];
		struct xdp_desc *d = xring_tx_desc(&x->sk.tx, idx + k++);
		uint64_t a = (uint64_t)((uint8_t *)s->hdr - x->mem.base);
		uint32_t left = s->pay_len;

		d->addr = a;
		d->len = s->hdr_len;
		d->options = left ? XDP_PKT_CONTD : 0;
		if (p->partial) {
			put_meta(x, a, s->csum_start, s->csum_offset);
			d->options |= XDP_TX_METADATA;
		}
		/* One extent, so the payload offset is the offset in the buffer. */
		a = p->pay_addr + s->pay_off;
		while (left) {
			uint32_t room = cs - (uint32_t)(a % cs), len = left;
			if (len > room)
				len = room;
			if (len > cap)
				len = cap;
			d = xring_tx_desc(&x->sk.tx, idx + k++);
			d->addr = a;
			d->len = len;
			left -= len;
			d->options = left ? XDP_PKT_CONTD : 0;
			gsoi_ua_get(&x->mem.ua, chunk_of(x, a));
			a += len;
		}
		x->st.tx_bytes += s->hdr_len + s->pay_len;
	}
	x->st.tx_sg_frames += n;
	return 0;
}

/*
 * Queue one super-segment (not yet published).  -EAGAIN / -ENOBUFS are
 * backpressure and leave nothing behind; other errors are validation.
 */
static int queue_one(struct xsk_dev *x, const struct gso_tx *tx)
{
	struct xplan p;
	uint32_t idx;
	int err;

	err = xplan_make(x, tx, &p, false);
	if (err)
		return err;
	if (xring_prod_free(&x->sk.tx, p.ndescs) < p.ndescs)
		return -EAGAIN;
	if (slab_need(x, p.slot, p.nseg) > ua_free_backend(&x->mem.ua))
		return -ENOBUFS;
	/* Room was checked just above. */
	idx = x->sk.tx.cached_prod;
	x->sk.tx.cached_prod += p.ndescs;
	err = p.sg ? build_sg(x, &p, idx) : build_copy(x, &p, idx);
	if (err) {
		/* Found by the segmenter (see quick_count): nothing was published. */
		x->sk.tx.cached_prod -= p.ndescs;
		return err;
	}
	x->inflight += p.ndescs;
	x->st.tx_super++;
	x->st.tx_frames += p.nseg;
	x->st.tx_descs += p.ndescs;
	if (p.partial)
		x->st.tx_csum_offload += p.nseg;
	else
		x->st.fallback_csum++;
	if (!p.sg && tx->len)
		x->st.fallback_copy++;
	return 0;
}

/* A pending probe from the data path: when the ring is quiet, at most every 100 ms. */
static void try_probe(struct xsk_dev *x)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (x->probe_tried_ns && now - x->probe_tried_ns < 100000000ull)
		return;
	x->probe_tried_ns = now;
	gsoi_xsk_probe_op(&x->dev);
}

int gsoi_xsk_submit(struct gso_dev *d, const struct gso_tx *tx, unsigned n)
{
	struct xsk_dev *x = to_xsk(d);
	unsigned done = 0;
	int err = 0;

	if (x->dead)
		return -ENODEV;
	if (unlikely(x->link_down) && gsoi_xsk_push(x) == -ENETDOWN)
		return -ENETDOWN;
	if (unlikely(x->probe_pending) && !x->inflight)
		try_probe(x);
	while (done < n) {
		err = queue_one(x, &tx[done]);
		if (err == -EAGAIN || err == -ENOBUFS) {
			/* Make room: send what is queued and take back what completed. */
			xring_prod_submit(&x->sk.tx);
			gsoi_xsk_push(x);
			gsoi_xsk_reap(d, 0);
			if (x->dead)
				break;
			err = queue_one(x, &tx[done]);
			if (err == -EAGAIN)
				x->st.ring_full++;
			else if (err == -ENOBUFS)
				x->st.umem_full++;
		}
		if (err) {
			if (err != -EAGAIN && err != -ENOBUFS)
				x->st.invalid++;
			break;
		}
		done++;
	}
	if (done) {
		xring_prod_submit(&x->sk.tx);
		gsoi_xsk_push(x);
		return (int)done;
	}
	return x->dead ? -ENODEV : err;
}

int gsoi_xsk_plan(struct gso_dev *d, const struct gso_tx *tx, struct gso_tx_plan *plan)
{
	struct xsk_dev *x = to_xsk(d);
	struct xplan p;
	int err = xplan_make(x, tx, &p, true);

	if (err)
		return err;
	memset(plan, 0, sizeof(*plan));
	plan->seg = GSO_TX_SOFTWARE;
	plan->csum = p.partial ? GSO_TX_DEVICE : GSO_TX_SOFTWARE;
	plan->copy = !p.sg;
	plan->frames = p.nseg;
	plan->descs = p.ndescs;
	return 0;
}
