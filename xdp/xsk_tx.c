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
#include "dev_internal.h"
#include "link_internal.h"
#include "xsk_internal.h"
#include "xsk_rx_internal.h"

#include <endian.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <gso/offload.h>
#include <gso/seg.h>
#include "opts_internal.h"

#define DEF_CHUNK_SIZE 4096u
#define DEF_NCHUNKS 4096u
#define DEF_TX_SIZE 2048u
#define DEF_BIND_WAIT_MS 2000u
#define FILL_SIZE 64u        /* bind needs a fill ring even without RX */
#define MAX_PUSH_STALLS 4    /* kicks in a row that move nothing before -EAGAIN */
#define CLOSE_DRAIN_MS 200

struct slab {
	bool valid;
	uint32_t chunk;
	uint32_t off;
};

struct xsk_dev {
	struct gso_dev dev; /* first: the public handle */
	struct dev_mem mem;
	struct xsk_sock sk;
	int ifindex;
	uint32_t queue_id;
	uint32_t mtu;
	uint32_t meta;      /* metadata room before every descriptor (the registered tx_metadata_len) */
	uint32_t max_descs; /* descriptors per packet */
	uint32_t budget;    /* copy-mode descriptors per sendto */
	uint32_t cs_shift;  /* log2(chunk_size) when a power of 2, else 0: a 64-bit divide per completion is dozens of cycles */
	bool csum;          /* frames may carry checksum requests */
	bool sg;            /* frames may be header + payload references */
	bool dead;          /* the interface went away */
	bool link_down;     /* the last kick said -ENETDOWN; frames wait in the ring */
	bool probe_pending; /* the checksum probe could not run (interface down at creation) */
	uint64_t probe_tried_ns; /* last time submit tried the pending probe */
	int64_t invalid_base; /* kernel tx_invalid_descs not ours (the probe) */
	uint64_t kernel_invalid_final;
	struct slab slab;
	uint32_t scratch_n;
	struct gso_frame *frames;
	struct gso_seg_ref *refs;
	uint32_t inflight;
	struct xsk_rx rx;   /* receive side (rx.n == 0: none) */
	struct gso_dev_stats st; /* the backend's counters */
};

static int xsk_probe_op(struct gso_dev *d);

static struct xsk_dev *to_xsk(struct gso_dev *d)
{
	return (struct xsk_dev *)d;
}

static uint32_t align8(uint32_t v)
{
	return (v + 7) & ~7u;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- completions ---- */

static int xsk_reap(struct gso_dev *d, unsigned max)
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
static int xsk_push(struct xsk_dev *x)
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
		xsk_reap(&x->dev, 0);
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

static int xsk_kick(struct gso_dev *d)
{
	return xsk_push(to_xsk(d));
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
 * Only flags and the checksum request are written: the kernel reads
 * launch_time only under its flag, and the reserved bytes are padding it
 * never looks at.  Stored directly rather than through
 * gso_xsk_txmd_encode(): the constant flags need no validation, and this
 * runs once per frame.
 */
static void put_meta(struct xsk_dev *x, uint64_t addr, uint16_t start, uint16_t off)
{
	uint8_t *md = x->mem.base + addr - x->meta;
	uint64_t flags = htole64(GSO_XSK_TXMD_CHECKSUM);
	uint16_t req[2] = { htole16(start), htole16(off) };

	memcpy(md, &flags, sizeof(flags));
	memcpy(md + 8, req, sizeof(req));
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
	xsk_probe_op(&x->dev);
}

static int xsk_submit(struct gso_dev *d, const struct gso_tx *tx, unsigned n)
{
	struct xsk_dev *x = to_xsk(d);
	unsigned done = 0;
	int err = 0;

	if (x->dead)
		return -ENODEV;
	if (unlikely(x->link_down) && xsk_push(x) == -ENETDOWN)
		return -ENETDOWN;
	if (unlikely(x->probe_pending) && !x->inflight)
		try_probe(x);
	while (done < n) {
		err = queue_one(x, &tx[done]);
		if (err == -EAGAIN || err == -ENOBUFS) {
			/* Make room: send what is queued and take back what completed. */
			xring_prod_submit(&x->sk.tx);
			xsk_push(x);
			xsk_reap(d, 0);
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
		xsk_push(x);
		return (int)done;
	}
	return x->dead ? -ENODEV : err;
}

static int xsk_plan(struct gso_dev *d, const struct gso_tx *tx, struct gso_tx_plan *plan)
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

/* ---- caps, stats, teardown ---- */

static void xsk_caps(const struct gso_dev *d, struct gso_dev_caps *c)
{
	const struct xsk_dev *x = (const struct xsk_dev *)d;

	c->flags = (x->csum ? GSO_DEV_CSUM : 0) | (x->sg ? GSO_DEV_SG : 0) |
		   (x->sk.zerocopy ? GSO_DEV_ZEROCOPY : 0) | (x->probe_pending ? GSO_DEV_PROBE_PENDING : 0);
	c->mtu = x->mtu;
	c->max_frame = x->mtu + 14;
	/* A segment takes one descriptor, or a header and up to two payload pieces with SG. */
	c->max_segs = x->sk.tx.size / (x->sg ? 3 : 1);
	if (!c->max_segs)
		c->max_segs = x->scratch_n;
	c->max_frags = x->sg ? x->max_descs : 1;
	if (x->rx.n) {
		c->flags |= GSO_DEV_RX;
		/* Copy mode and the usual drivers put XDP_PACKET_HEADROOM before the frame. */
		c->rx_max_frame = x->mem.chunk_size - COMPAT_XDP_PACKET_HEADROOM;
	}
}

static uint32_t xsk_inflight(const struct gso_dev *d)
{
	return ((const struct xsk_dev *)d)->inflight;
}

/*
 * Whole frames are copied into a slab slot of one chunk: metadata room,
 * headers, payload, the slot rounded up to 8 bytes (xplan_make).
 * Multi-buffer frames reference the payload where it is (only the MTU
 * limits them), but payload outside a device buffer, or GSO_TX_F_COPY,
 * still makes whole frames.
 */
static uint32_t xsk_frame_room(const struct gso_dev *d, const struct gso_tmpl *t, uint32_t tx_flags)
{
	const struct xsk_dev *x = (const struct xsk_dev *)d;
	uint32_t slot_max = x->mem.chunk_size & ~7u;

	if (x->sg && !(tx_flags & GSO_TX_F_COPY))
		return UINT32_MAX;
	if (slot_max <= x->meta + t->hdr_len)
		return 0;
	return slot_max - x->meta - t->hdr_len;
}

static uint64_t kernel_invalid(struct xsk_dev *x)
{
	int64_t v;

	if (x->sk.fd < 0)
		return x->kernel_invalid_final;
	v = gsoi_xsk_sock_tx_invalid(&x->sk);
	if (v >= x->invalid_base)
		x->kernel_invalid_final = (uint64_t)(v - x->invalid_base);
	return x->kernel_invalid_final;
}

static void xsk_stats(struct gso_dev *d, struct gso_dev_stats *st)
{
	struct xsk_dev *x = to_xsk(d);

	*st = x->st;
	st->kernel_invalid = kernel_invalid(x);
	st->inflight_descs = x->inflight;
	gsoi_xsk_rx_stats(&x->rx, &x->sk, st);
}

static void xsk_close(struct gso_dev *d)
{
	struct xsk_dev *x = to_xsk(d);

	if (x->sk.fd >= 0 && !x->dead) {
		for (int t = 0; t < CLOSE_DRAIN_MS && x->inflight; t++) {
			int err = xsk_push(x);
			xsk_reap(d, 0);
			if (err && err != -EAGAIN)
				break;
			if (x->inflight)
				sleep_ms(1);
		}
	}
	if (x->sk.fd >= 0) {
		xsk_reap(d, 0);
		kernel_invalid(x);
		gsoi_xsk_rx_save_stats(&x->rx, &x->sk);
		/* After this the kernel no longer reads the rings or the UMEM. */
		gsoi_xsk_sock_close(&x->sk);
	}
	gsoi_ua_reclaim(&x->mem.ua);
	gsoi_xsk_rx_close(&x->rx, &x->mem.ua);
	x->inflight = 0;
	if (x->slab.valid)
		gsoi_ua_unhold(&x->mem.ua, x->slab.chunk);
	x->slab.valid = false;
}

static void xsk_destroy(struct gso_dev *d)
{
	struct xsk_dev *x = to_xsk(d);

	gsoi_xsk_rx_fini(&x->rx);
	gsoi_ua_fini(&x->mem.ua);
	if (x->mem.base)
		munmap(x->mem.base, x->mem.len);
	free(x->frames);
	free(x->refs);
	free(x);
}

/* ---- receiving (xsk_rx.c) ---- */

static int xsk_recv(struct gso_dev *d, struct gso_rx_pkt *out, unsigned n)
{
	struct xsk_dev *x = to_xsk(d);
	int r;

	if (!x->rx.n)
		return -EOPNOTSUPP;
	r = gsoi_xsk_rx_recv(&x->rx, &x->sk, &x->mem, out, n);
	if (r == -ENODEV)
		x->dead = true;
	/* Frames still in the ring are worth more than the news that the interface is gone. */
	return r == 0 && x->dead ? -ENODEV : r;
}

static int xsk_rx_release_op(struct gso_dev *d, const struct gso_rx_pkt *p, unsigned n)
{
	struct xsk_dev *x = to_xsk(d);

	if (!x->rx.n)
		return -EINVAL;
	return gsoi_xsk_rx_release(&x->rx, d->closed || x->sk.fd < 0 ? NULL : &x->sk, &x->mem, p, n);
}

static int xsk_rx_wait_op(struct gso_dev *d, int timeout_ms)
{
	struct xsk_dev *x = to_xsk(d);
	int r;

	if (!x->rx.n)
		return -EOPNOTSUPP;
	if (x->dead)
		return xring_cons_avail(&x->sk.rx) ? 0 : -ENODEV;
	r = gsoi_xsk_rx_wait(&x->rx, &x->sk, timeout_ms);
	if (r == -ENODEV)
		x->dead = true;
	return r;
}

static const struct gso_dev_ops xsk_ops = {
	.kind = "af_xdp",
	.caps = xsk_caps,
	.plan = xsk_plan,
	.submit = xsk_submit,
	.kick = xsk_kick,
	.reap = xsk_reap,
	.stats = xsk_stats,
	.close = xsk_close,
	.destroy = xsk_destroy,
	.recv = xsk_recv,
	.rx_release = xsk_rx_release_op,
	.rx_wait = xsk_rx_wait_op,
	.inflight = xsk_inflight,
	.frame_room = xsk_frame_room,
	.probe = xsk_probe_op,
};

int gsoi_xsk_dev_info(const struct gso_dev *d, int *ifindex, uint32_t *queue_id, int *fd, bool *rx)
{
	const struct xsk_dev *x = (const struct xsk_dev *)d;

	if (!d || d->ops != &xsk_ops)
		return -EINVAL;
	if (d->closed || x->sk.fd < 0)
		return -ESHUTDOWN;
	*ifindex = x->ifindex;
	*queue_id = x->queue_id;
	*fd = x->sk.fd;
	*rx = x->rx.n > 0;
	return 0;
}

int gso_xsk__fd(const struct gso_dev *d)
{
	if (!d || d->ops != &xsk_ops)
		return -EINVAL;
	if (d->closed)
		return -ESHUTDOWN;
	return ((const struct xsk_dev *)d)->sk.fd;
}

/* ---- creation ---- */

struct xcfg {
	uint32_t mode, flags, chunk_size, nchunks, buf_chunks, tx_size, cq_size, budget, bind_wait_ms, queue_id;
	uint32_t rx_size, fill_size, rx_chunks;
};

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static int read_opts(const struct gso_xsk_opts *o, struct xcfg *c)
{
	long page = sysconf(_SC_PAGESIZE);

	if (!GSO_OPTS_VALID(gso_xsk_opts, o))
		return -EINVAL;
	c->queue_id = GSO_OPTS_GET(o, queue_id, 0);
	c->mode = GSO_OPTS_GET(o, mode, GSO_XSK_MODE_AUTO);
	c->flags = GSO_OPTS_GET(o, flags, 0);
	c->chunk_size = GSO_OPTS_GET(o, chunk_size, 0) ?: DEF_CHUNK_SIZE;
	c->rx_size = GSO_OPTS_GET(o, rx_size, 0);
	c->fill_size = c->rx_size ? (GSO_OPTS_GET(o, fill_size, 0) ?: 2 * c->rx_size) : FILL_SIZE;
	c->rx_chunks = c->rx_size ? (GSO_OPTS_GET(o, rx_chunks, 0) ?: c->fill_size) : 0;
	if (!c->rx_size && (GSO_OPTS_GET(o, fill_size, 0) || GSO_OPTS_GET(o, rx_chunks, 0)))
		return -EINVAL;
	if (c->rx_size && (!pow2(c->rx_size) || c->rx_size < 64 || c->rx_size > 32768 ||
			   !pow2(c->fill_size) || c->fill_size < c->rx_size || c->fill_size > 65536 ||
			   c->rx_chunks > (1u << 24)))
		return -EINVAL;
	c->nchunks = GSO_OPTS_GET(o, nchunks, 0) ?: DEF_NCHUNKS + c->rx_chunks;
	if (c->rx_chunks >= c->nchunks)
		return -EINVAL;
	c->buf_chunks = GSO_OPTS_GET(o, buf_chunks, 0) ?: (c->nchunks - c->rx_chunks) / 4 * 3;
	c->tx_size = GSO_OPTS_GET(o, tx_size, 0) ?: DEF_TX_SIZE;
	c->cq_size = GSO_OPTS_GET(o, cq_size, 0) ?: 2 * c->tx_size;
	c->budget = GSO_OPTS_GET(o, tx_budget, 0) ?: c->tx_size;
	c->bind_wait_ms = GSO_OPTS_GET(o, bind_wait_ms, 0) ?: DEF_BIND_WAIT_MS;
	if (c->mode > GSO_XSK_MODE_ZEROCOPY || (c->flags & ~GSO_XSK_F_KNOWN))
		return -EINVAL;
	if (c->chunk_size < 2048 || c->chunk_size > (uint32_t)page)
		return -EINVAL;
	if ((c->flags & GSO_XSK_F_ALIGNED) && !pow2(c->chunk_size))
		return -EINVAL;
	/* The backend needs a few chunks of its own for headers and frames. */
	if (c->nchunks < 8 || c->nchunks > (1u << 24) || (uint64_t)c->buf_chunks + c->rx_chunks + 4 > c->nchunks)
		return -EINVAL;
	if (!pow2(c->tx_size) || c->tx_size < 64 || c->tx_size > 32768)
		return -EINVAL;
	if (!pow2(c->cq_size) || c->cq_size < c->tx_size || c->cq_size > 65536)
		return -EINVAL;
	if (c->budget > c->tx_size)
		c->budget = c->tx_size;
	if (c->budget < COMPAT_XSK_TX_BUDGET_DEFAULT)
		c->budget = COMPAT_XSK_TX_BUDGET_DEFAULT;
	return 0;
}

/* Open the socket, retrying what older kernels and a just-closed queue need. */
static int open_sock(struct xsk_dev *x, const struct xcfg *c, bool want_meta)
{
	struct xsk_sock_cfg sc = {
		.ifindex = x->ifindex,
		.queue_id = c->queue_id,
		.area = x->mem.base,
		.area_len = x->mem.len,
		.chunk_size = c->chunk_size,
		.unaligned = !(c->flags & GSO_XSK_F_ALIGNED),
		.want_meta = want_meta,
		.kernel_csum = c->flags & GSO_XSK_F_KERNEL_CSUM,
		.fill_size = c->fill_size,
		.cq_size = c->cq_size,
		.tx_size = c->tx_size,
		.rx_size = c->rx_size,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	long waited = 0, step = 5;
	int err;

	if (c->mode == GSO_XSK_MODE_COPY)
		sc.bind_flags |= XDP_COPY;
	else if (c->mode == GSO_XSK_MODE_ZEROCOPY)
		sc.bind_flags |= XDP_ZEROCOPY;
	if (!(c->flags & GSO_XSK_F_NO_SG))
		sc.bind_flags |= XDP_USE_SG;
	for (;;) {
		err = gsoi_xsk_sock_open(&x->sk, &sc);
		if (!err)
			return 0;
		if (err == -EBUSY && waited < (long)c->bind_wait_ms) {
			/* The queue is released a moment after the previous socket closes. */
			sleep_ms(step);
			waited += step;
			step = step < 80 ? step * 2 : 100;
			continue;
		}
		/* Before 6.6 XDP_USE_SG is an unknown bind flag; zero-copy drivers may lack it. */
		if ((err == -EINVAL || err == -EOPNOTSUPP) && (sc.bind_flags & XDP_USE_SG)) {
			sc.bind_flags &= (uint16_t)~XDP_USE_SG;
			continue;
		}
		return err;
	}
}

/*
 * Send the checksum probe frame (xsk_probe.c) from a chunk of the backend
 * region.  Returns 1 (requests are carried), 0 (not), or -errno; the
 * chunk's accounting is settled either way: a descriptor that did not
 * complete yet (-ETIMEDOUT, or -ENETDOWN: still in the ring) is in flight
 * and its completion gives the chunk back like any other.
 */
static int csum_probe(struct xsk_dev *x)
{
	uint8_t mac[6] = { 0 };
	uint32_t chunk;
	bool completed;
	int r;

	if (gsoi_link_mac(x->ifindex, NULL, mac) || gsoi_ua_alloc_one(&x->mem.ua, &chunk))
		return 0;
	gsoi_ua_get(&x->mem.ua, chunk);
	r = gsoi_xsk_probe_csum(&x->sk, x->mem.base, (uint64_t)chunk * x->mem.chunk_size + x->meta, mac,
				&completed);
	/* Invalid descriptors are dropped without a completion. */
	if (completed || r == 0)
		gsoi_ua_put(&x->mem.ua, chunk);
	else
		x->inflight++;
	gsoi_ua_unhold(&x->mem.ua, chunk);
	if (r == -ENETDOWN)
		x->link_down = true;
	return r;
}

static void set_name(struct xsk_dev *x)
{
	snprintf(x->dev.name, sizeof(x->dev.name), "af_xdp %s%s%s%s", x->sk.zerocopy ? "zerocopy" : "copy",
		 x->sg ? " sg" : "", x->csum ? " csum" : x->probe_pending ? " csum?" : "",
		 x->rx.n ? " rx" : "");
}

/* The interface is administratively up (what the probe's sendto needs). */
static bool link_is_up(int ifindex)
{
	struct link_info li;

	memset(&li, 0, sizeof(li));
	return !gsoi_link_rtnl(ifindex, &li) && (li.ifi_flags & IFF_UP);
}

/*
 * Decide checksum metadata.  Returns 0, or -EAGAIN when the probe left
 * the socket unusable and it must be opened again without metadata.  On
 * an interface that is down the probe cannot run (sendto says ENETDOWN):
 * it is left pending rather than deciding "no checksums" for the device's
 * whole life.
 */
static int setup_csum(struct xsk_dev *x)
{
	int r;

	x->csum = false;
	x->probe_pending = false;
	x->invalid_base = gsoi_xsk_sock_tx_invalid(&x->sk);
	if (x->invalid_base < 0)
		x->invalid_base = 0;
	if (!x->meta)
		return 0;
	if (x->sk.zerocopy) {
		uint64_t xf, kf;
		uint32_t zc;
		x->csum = !gsoi_xsk_netdev_get(x->ifindex, &xf, &zc, &kf) && (kf & NETDEV_XSK_FLAGS_TX_CHECKSUM);
		return 0;
	}
	if (!link_is_up(x->ifindex)) {
		x->probe_pending = true;
		return 0;
	}
	r = csum_probe(x);
	if (r == -EINVAL)
		return -EAGAIN;
	x->csum = r == 1;
	x->probe_pending = r == -ENETDOWN;
	/* The probe's own invalid descriptor is not the caller's. */
	x->invalid_base = gsoi_xsk_sock_tx_invalid(&x->sk);
	if (x->invalid_base < 0)
		x->invalid_base = 0;
	return 0;
}

/*
 * The pending probe, once the interface is up and the ring is quiet (the
 * probe waits for its own completion, which must not be mixed up with the
 * frames of others).
 */
static int xsk_probe_op(struct gso_dev *d)
{
	struct xsk_dev *x = to_xsk(d);
	int64_t inv0, inv1;
	int r;

	if (!x->probe_pending)
		return 0;
	if (x->dead)
		return -ENODEV;
	if (!link_is_up(x->ifindex))
		return -ENETDOWN;
	if (x->link_down && xsk_push(x) == -ENETDOWN)
		return -ENETDOWN;
	xsk_reap(d, 0);
	if (x->inflight || xring_prod_pending(&x->sk.tx))
		return -EAGAIN;
	inv0 = gsoi_xsk_sock_tx_invalid(&x->sk);
	r = csum_probe(x);
	if (r == -ENETDOWN || r == -EAGAIN)
		return r;
	inv1 = gsoi_xsk_sock_tx_invalid(&x->sk);
	if (inv0 >= 0 && inv1 > inv0)
		x->invalid_base += inv1 - inv0;
	x->probe_pending = false;
	if (r == -EINVAL) {
		/*
		 * At creation this reopens the socket without metadata; here
		 * the socket may be steered to already.  A kernel that took the
		 * metadata room at registration and then refuses a well-formed
		 * request keeps the refused descriptor at the ring's head, so
		 * nothing could be sent after it: the device is unusable.
		 */
		x->dead = true;
		return -ENODEV;
	}
	x->csum = r == 1;
	set_name(x);
	return 0;
}

int gso_xsk__create(struct gso_dev **out, int ifindex, const struct gso_xsk_opts *o)
{
	struct xsk_dev *x;
	struct xcfg c;
	uint64_t xf = 0, kf = 0;
	uint32_t zc = 0;
	bool want_meta;
	int err;

	if (!out || ifindex <= 0)
		return -EINVAL;
	err = read_opts(o, &c);
	if (err)
		return err;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->sk.fd = -1;
	x->ifindex = ifindex;
	x->dev.ifindex = ifindex;
	x->queue_id = c.queue_id;
	x->dev.ops = &xsk_ops;
	x->dev.mem = &x->mem;
	err = gsoi_link_mtu(ifindex, NULL, &x->mtu);
	if (err)
		goto fail;
	x->mem.chunk_size = c.chunk_size;
	x->cs_shift = pow2(c.chunk_size) ? (uint32_t)__builtin_ctz(c.chunk_size) : 0;
	x->mem.len = (uint64_t)c.nchunks * c.chunk_size;
	x->mem.base = mmap(NULL, x->mem.len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (x->mem.base == MAP_FAILED) {
		x->mem.base = NULL;
		err = -ENOMEM;
		goto fail;
	}
	err = gsoi_ua_init(&x->mem.ua, c.nchunks, c.buf_chunks);
	if (err)
		goto fail;
	err = gsoi_xsk_rx_init(&x->rx, &x->mem.ua, c.rx_chunks);
	if (err)
		goto fail;
	x->scratch_n = c.tx_size;
	x->frames = calloc(x->scratch_n, sizeof(*x->frames));
	x->refs = calloc(x->scratch_n, sizeof(*x->refs));
	if (!x->frames || !x->refs) {
		err = -ENOMEM;
		goto fail;
	}

	want_meta = !(c.flags & GSO_XSK_F_NO_CSUM);
	for (int round = 0; round < 2; round++) {
		err = open_sock(x, &c, want_meta);
		if (err)
			goto fail;
		x->meta = x->sk.meta_len;
		err = setup_csum(x);
		if (err != -EAGAIN)
			break;
		/* The kernel refused our metadata at send: start over without it. */
		gsoi_xsk_sock_close(&x->sk);
		gsoi_ua_reclaim(&x->mem.ua);
		x->inflight = 0;
		want_meta = false;
	}
	if (err)
		goto fail;
	/* Buffers start past the metadata room so a payload descriptor at offset 0 has it. */
	x->mem.headroom = align8(x->meta);
	x->sg = x->sk.bind_flags & XDP_USE_SG;
	/* Aligned chunks put a payload piece at a chunk start, with no room for metadata. */
	if ((c.flags & GSO_XSK_F_ALIGNED) && x->meta)
		x->sg = false;
	if (x->sk.zerocopy)
		x->max_descs = !gsoi_xsk_netdev_get(ifindex, &xf, &zc, &kf) && zc ? zc : 1;
	else
		x->max_descs = gsoi_xsk_copy_max_descs();
	if (x->max_descs < 2)
		x->sg = false;
	/*
	 * TX_SW_CSUM finishes the checksum while the kernel builds the skb
	 * from the first descriptor, before the payload fragments are added
	 * (seen on 6.18: wrong checksums), so it only works for whole frames.
	 */
	if (x->csum && x->sk.kernel_csum)
		x->sg = false;
	x->budget = COMPAT_XSK_TX_BUDGET_DEFAULT;
	if (!x->sk.zerocopy && !setsockopt(x->sk.fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &c.budget,
					   sizeof(c.budget)))
		x->budget = c.budget;
	set_name(x);
	/* Receiving works from here on: the kernel needs chunks before the first frame. */
	x->rx.zerocopy = x->sk.zerocopy;
	gsoi_xsk_rx_refill(&x->rx, &x->sk, &x->mem);
	*out = &x->dev;
	return 0;
fail:
	if (x->sk.fd >= 0)
		gsoi_xsk_sock_close(&x->sk);
	xsk_destroy(&x->dev);
	return err;
}
