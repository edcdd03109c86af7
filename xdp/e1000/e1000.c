/*
 * The e1000 model, driver side: what Linux e1000_xmit_frame() does, over
 * our device memory.  Per super-segment (offload): a context descriptor
 * (gso_offload_e1000), a data descriptor for a header copy in a device
 * memory slot, data descriptors over the payload in place (at most
 * min(4 * MSS, 4 KiB) each, EOP|RS on the last), then the tail.  Per
 * super-segment (software fallback): header + payload references from
 * gso_segment_ref(), one packet per segment, the device finishing the
 * checksums through a checksum-only context.  Completions come from the
 * head register (TDH) the device publishes; every descriptor holds a
 * reference on the chunks it points into until then.
 */
#include "e1000_internal.h"
#include "kernel/link_internal.h"

#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "opts_internal.h"

#define DEF_RING 4096u
#define DEF_CHUNK 4096u
#define DEF_NCHUNKS 4096u
#define DEF_WIRE 2048u
#define DEF_SPIN_US 50u
#define DEF_MTU 1500u
#define HDR_SLOT 256u          /* a header copy: GSO_MAX_HDR_LEN, rounded */
#define MAX_PER_DESC GSO_E1000_MAX_PER_DESC
#define CLOSE_DRAIN_MS 500u
#define BIND_WAIT_MS 2000u
#define DEF_TXOP_US 4000u      /* a Wi-Fi aggregate's duration at most, about (A-MPDU, 802.11n/ac) */
#define DEF_TXOP_FRAMES 64u    /* a block-ACK window */
#define MAX_TXOP_US 1000000u

static const struct gso_dev_ops e1000_ops;

static struct e1000_dev *to_x(struct gso_dev *d)
{
	return (struct e1000_dev *)d;
}

static uint32_t mask(const struct e1000_dev *x)
{
	return x->ring_size - 1;
}

/* ---- completions ---- */

static int e1000_reap(struct gso_dev *d, unsigned max)
{
	struct e1000_dev *x = to_x(d);
	/* Acquire pairs with the device's release store of TDH: it is done with those descriptors. */
	uint32_t h = atomic_load_explicit(&x->tdh, memory_order_acquire), n = 0;

	while (x->clean != h && (!max || n < max)) {
		struct e1000_slot *s = &x->slots[x->clean & mask(x)];

		for (uint32_t c = 0; c < s->n; c++)
			gsoi_ua_put(&x->mem.ua, s->chunk + c);
		s->n = 0;
		x->clean++;
		n++;
	}
	x->st.tx_completed += n;
	return (int)n;
}

/* Room for n more descriptors; one slot stays empty, so that TDT == TDH means empty. */
static bool ring_room(struct e1000_dev *x, uint32_t n)
{
	if (x->ring_size - 1 - (x->next - x->clean) < n)
		e1000_reap(&x->t.dev, 0);
	return x->ring_size - 1 - (x->next - x->clean) >= n;
}

/* ---- header slots, carved from backend chunks ---- */

static uint32_t slab_need(const struct e1000_dev *x, uint32_t n)
{
	uint32_t per = x->mem.chunk_size / HDR_SLOT;
	uint32_t left = x->slab.valid ? (x->mem.chunk_size - x->slab.off) / HDR_SLOT : 0;

	return n <= left ? 0 : (n - left + per - 1) / per;
}

/*
 * Offset of a fresh slot, its chunk pinned (an in-flight reference) until
 * slab_unpin(): the descriptor posted for the slot takes a reference of its
 * own, but a software-segmented super-segment takes all its slots before
 * posting any, and when the slab moves on, the chunk left behind would
 * otherwise be free -- and handed out again by the next slab_take() of the
 * same loop, so that two segments' headers shared memory (seen as payload
 * sent under the header of the segment 16 slots later).  The caller
 * checked slab_need() against the free chunks.
 */
static uint64_t slab_take(struct e1000_dev *x)
{
	uint64_t a;

	if (!x->slab.valid || x->mem.chunk_size - x->slab.off < HDR_SLOT) {
		/* The old chunk lives on until its last descriptor completes. */
		if (x->slab.valid)
			gsoi_ua_unhold(&x->mem.ua, x->slab.chunk);
		x->slab.valid = !gsoi_ua_alloc_one(&x->mem.ua, &x->slab.chunk);
		x->slab.off = 0;
	}
	a = (uint64_t)x->slab.chunk * x->mem.chunk_size + x->slab.off;
	x->slab.off += HDR_SLOT;
	gsoi_ua_get(&x->mem.ua, x->slab.chunk);
	return a;
}

/* Drop slab_take()'s pin once the slot's descriptor holds its own reference (or was never posted). */
static void slab_unpin(struct e1000_dev *x, uint64_t a)
{
	gsoi_ua_put(&x->mem.ua, (uint32_t)(a / x->mem.chunk_size));
}

/* ---- descriptors ---- */

/* Write one descriptor at the next slot; a data descriptor references [addr, addr + len). */
static void post(struct e1000_dev *x, const uint8_t desc[GSO_E1000_DESC_LEN], uint64_t addr, uint32_t len)
{
	struct e1000_slot *s = &x->slots[x->next & mask(x)];
	uint32_t cs = x->mem.chunk_size;

	memcpy(x->ring + (size_t)(x->next & mask(x)) * GSO_E1000_DESC_LEN, desc, GSO_E1000_DESC_LEN);
	s->n = 0;
	if (len) {
		s->chunk = (uint32_t)(addr / cs);
		s->n = (uint32_t)((addr + len - 1) / cs) - s->chunk + 1;
		for (uint32_t c = 0; c < s->n; c++)
			gsoi_ua_get(&x->mem.ua, s->chunk + c);
	}
	x->next++;
}

static void post_data(struct e1000_dev *x, const struct gso_e1000_data *d)
{
	uint8_t b[GSO_E1000_DESC_LEN];

	gso_e1000_data_encode(d, b);
	post(x, b, d->addr, d->len);
}

static void post_ctx(struct e1000_dev *x, const struct gso_e1000_ctx *c)
{
	uint8_t b[GSO_E1000_DESC_LEN];

	gso_e1000_ctx_encode(c, b);
	post(x, b, 0, 0);
}

/* Where the payload is in device memory; plain memory is copied into a bounce run of chunks. */
struct payload {
	uint64_t addr;
	uint32_t bounce_first, bounce_n; /* held until the descriptors reference them */
};

static int payload_place(struct e1000_dev *x, const struct gso_tx *tx, struct payload *p)
{
	uint32_t cs = x->mem.chunk_size;
	int err;

	memset(p, 0, sizeof(*p));
	if (tx->buf) {
		err = gsoi_dev_buf_check(&x->mem, tx->buf, tx->off, tx->len);
		if (err)
			return err;
		p->addr = dev_buf_addr(&x->mem, tx->buf, tx->off);
		return 0;
	}
	if (!tx->len)
		return 0;
	if (!tx->data)
		return -EINVAL;
	p->bounce_n = (tx->len + cs - 1) / cs;
	err = gsoi_ua_alloc_run(&x->mem.ua, p->bounce_n, &p->bounce_first);
	if (err) {
		p->bounce_n = 0;
		return err == -EMSGSIZE ? -EMSGSIZE : -ENOBUFS;
	}
	p->addr = (uint64_t)p->bounce_first * cs;
	memcpy(x->area + p->addr, tx->data, tx->len);
	return 0;
}

/* Let go of the bounce run: the descriptors' references keep it until completion. */
static void payload_done(struct e1000_dev *x, struct payload *p)
{
	for (uint32_t i = 0; i < p->bounce_n; i++)
		gsoi_ua_unhold(&x->mem.ua, p->bounce_first + i);
	p->bounce_n = 0;
}

static void mark_sent(struct e1000_dev *x, const struct gso_tx *tx, uint32_t frames, uint64_t bytes)
{
	x->st.tx_super++;
	x->st.tx_frames += frames;
	x->st.tx_bytes += bytes;
	x->st.tx_csum_offload += frames;
	if (tx->len)
		x->st.tx_sg_frames += frames;
	if (!tx->buf && tx->len)
		x->st.fallback_copy++;
}

static int queue_offload(struct e1000_dev *x, const struct gso_tx *tx, const struct tso_choice *c)
{
	const struct gso_tmpl *t = tx->tmpl;
	struct gso_offload_req r = c->req;
	struct gso_tmpl plain;
	struct gso_e1000_ctx ctx;
	struct gso_e1000_data hd;
	struct payload p;
	uint32_t maxp = MAX_PER_DESC, ndesc, start;
	uint64_t ha;
	int n, err;

	err = gsoi_tso_mtu_check(tx, x->mtu);
	if (err)
		return err;
	if (c->keep_cwr) {
		/*
		 * The encoder refuses CWR for a device that keeps it on every
		 * frame; the user allowed that, so encode without it and put
		 * it back into the header copy (the seed does not cover flags).
		 */
		uint8_t fl = 0;

		plain = *t;
		gso_tmpl__tcp_flags(t, &fl);
		gso_tmpl__set_tcp_flags(&plain, fl & (uint8_t)~GSO_TCP_CWR);
		err = gso_offload_describe(&plain, tx->len, tx->mss, 0, &r);
		if (err)
			return err;
		t = &plain;
	}
	if (r.type != GSO_OFFLOAD_NONE && 4u * r.mss < maxp)
		maxp = 4u * r.mss;
	ndesc = 2 + (tx->len + maxp - 1) / maxp;
	if (ndesc >= x->ring_size)
		return -EMSGSIZE;
	if (!ring_room(x, ndesc))
		return -EAGAIN;
	if (slab_need(x, 1) > ua_free_backend(&x->mem.ua))
		return -ENOBUFS;
	err = payload_place(x, tx, &p);
	if (err)
		return err;
	start = x->next;
	ha = slab_take(x);
	err = gso_offload_e1000(&r, t, &ctx, x->area + ha, HDR_SLOT);
	if (err) {
		slab_unpin(x, ha);
		payload_done(x, &p);
		return err;
	}
	if (c->keep_cwr)
		x->area[ha + r.csum_start + 13] |= GSO_TCP_CWR;
	post_ctx(x, &ctx);
	gso_offload_e1000_data(&r, ha, r.hdr_len, !tx->len, 0, &hd, 1);
	post_data(x, &hd);
	if (tx->len) {
		n = gso_offload_e1000_data(&r, p.addr, tx->len, true, maxp, x->dd, x->scratch_n);
		for (int i = 0; i < n; i++)
			post_data(x, &x->dd[i]);
	}
	slab_unpin(x, ha);
	payload_done(x, &p);
	x->st.tx_descs += x->next - start;
	mark_sent(x, tx, r.segs, (uint64_t)r.segs * r.hdr_len + tx->len);
	return 0;
}

static int queue_software(struct e1000_dev *x, const struct gso_tx *tx)
{
	bool partial = !(tx->flags & GSO_TX_F_SW_CSUM);
	struct gso_extent ext;
	struct gso_super s;
	struct gso_seg_opts o;
	struct payload p;
	uint32_t n, ndesc, start;
	uint64_t bytes = 0;
	int r, err;

	if (tx->len && !tx->buf && !tx->data)
		return -EINVAL;
	r = gsoi_tso_sw_count(tx, tx->buf ? tx->buf->data + tx->off : tx->data, partial, &s, &ext, &o);
	if (r < 0)
		return r;
	n = (uint32_t)r;
	err = gsoi_tso_mtu_check(tx, x->mtu);
	if (err)
		return err;
	/* Per segment a header descriptor and its payload pieces (a segment is at most one MSS). */
	ndesc = partial + n * (1 + (tx->mss + MAX_PER_DESC - 1) / MAX_PER_DESC);
	if (n > x->scratch_n || ndesc >= x->ring_size)
		return -EMSGSIZE;
	if (!ring_room(x, ndesc))
		return -EAGAIN;
	if (slab_need(x, n) > ua_free_backend(&x->mem.ua))
		return -ENOBUFS;
	err = payload_place(x, tx, &p);
	if (err)
		return err;
	ext.base = x->area + p.addr;
	for (uint32_t i = 0; i < n; i++) {
		x->refs[i].hdr = x->area + slab_take(x);
		x->refs[i].hdr_cap = HDR_SLOT;
	}
	r = gso_segment_ref(&s, &o, x->refs, n);
	if (r != (int)n) {
		for (uint32_t i = 0; i < n; i++)
			slab_unpin(x, (uint64_t)((uint8_t *)x->refs[i].hdr - x->area));
		payload_done(x, &p);
		return r < 0 ? r : -EIO;
	}
	start = x->next;
	if (partial) {
		struct gso_e1000_ctx cc = {
			.tucss = (uint8_t)x->refs[0].csum_start,
			.tucso = (uint8_t)(x->refs[0].csum_start + x->refs[0].csum_offset),
			.tucmd = GSO_E1000_CMD_DEXT | (tx->tmpl->l4 == GSO_L4_TCP ? GSO_E1000_TUCMD_TCP : 0),
		};

		post_ctx(x, &cc);
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct gso_seg_ref *g = &x->refs[i];
		uint8_t last = GSO_E1000_CMD_EOP | GSO_E1000_CMD_RS;
		struct gso_e1000_data d = {
			.addr = (uint64_t)((uint8_t *)g->hdr - x->area),
			.len = g->hdr_len,
			.dcmd = GSO_E1000_CMD_DEXT | GSO_E1000_CMD_IFCS | (g->pay_len ? 0 : last),
			.popts = partial ? GSO_E1000_POPTS_TXSM : 0,
		};

		post_data(x, &d);
		for (uint32_t off = 0; off < g->pay_len;) {
			uint32_t piece = g->pay_len - off < MAX_PER_DESC ? g->pay_len - off : MAX_PER_DESC;

			d.addr = p.addr + g->pay_off + off;
			d.len = piece;
			off += piece;
			d.dcmd = GSO_E1000_CMD_DEXT | GSO_E1000_CMD_IFCS | (off == g->pay_len ? last : 0);
			post_data(x, &d);
		}
		bytes += g->hdr_len + g->pay_len;
	}
	for (uint32_t i = 0; i < n; i++)
		slab_unpin(x, (uint64_t)((uint8_t *)x->refs[i].hdr - x->area));
	payload_done(x, &p);
	x->st.tx_descs += x->next - start;
	mark_sent(x, tx, n, bytes);
	if (!partial) {
		x->st.tx_csum_offload -= n;
		x->st.fallback_csum++;
	}
	return 0;
}

static int e1000_queue(struct tso_dev *t, const struct gso_tx *tx, const struct tso_choice *c)
{
	struct e1000_dev *x = (struct e1000_dev *)t;

	return c->offload ? queue_offload(x, tx, c) : queue_software(x, tx);
}

static int e1000_push(struct e1000_dev *x)
{
	if (atomic_load_explicit(&x->tdt, memory_order_relaxed) == x->next)
		return 0;
	/* Release (seq_cst) pairs with the device's acquire load of TDT; see e1000_dev.c for the doorbell. */
	atomic_store(&x->tdt, x->next);
	gsoi_e1000_dev_doorbell(x);
	x->st.kicks++;
	return 0;
}

static void e1000_make_room(struct tso_dev *t)
{
	struct e1000_dev *x = (struct e1000_dev *)t;

	e1000_push(x);
	if (x->threaded)
		sched_yield();
	e1000_reap(&t->dev, 0);
}

static int e1000_push_hook(struct tso_dev *t)
{
	return e1000_push((struct e1000_dev *)t);
}

static const struct tso_hooks e1000_hooks = {
	.queue = e1000_queue,
	.make_room = e1000_make_room,
	.push = e1000_push_hook,
};

/* ---- ops ---- */

static int e1000_kick(struct gso_dev *d)
{
	return e1000_push(to_x(d));
}

static int e1000_plan(struct gso_dev *d, const struct gso_tx *tx, struct gso_tx_plan *plan)
{
	struct e1000_dev *x = to_x(d);
	struct tso_choice c;
	struct gso_extent ext;
	struct gso_super s;
	struct gso_seg_opts o;
	int err = gsoi_tso_choose(&x->t.lim, tx, x->t.mode, x->t.flags, &c);

	if (!err && tx->buf)
		err = gsoi_dev_buf_check(&x->mem, tx->buf, tx->off, tx->len);
	if (!err)
		err = gsoi_tso_mtu_check(tx, x->mtu);
	if (err)
		return err;
	memset(plan, 0, sizeof(*plan));
	plan->copy = !tx->buf && tx->len;
	plan->csum = tx->flags & GSO_TX_F_SW_CSUM ? GSO_TX_SOFTWARE : GSO_TX_DEVICE;
	if (c.offload) {
		uint32_t maxp = MAX_PER_DESC;

		if (c.req.type != GSO_OFFLOAD_NONE && 4u * c.req.mss < maxp)
			maxp = 4u * c.req.mss;
		plan->seg = c.req.type == GSO_OFFLOAD_NONE ? GSO_TX_SOFTWARE : GSO_TX_DEVICE;
		plan->frames = c.req.segs;
		plan->descs = 2 + (tx->len + maxp - 1) / maxp;
		return 0;
	}
	err = gsoi_tso_sw_count(tx, tx->buf ? tx->buf->data + tx->off : tx->data, true, &s, &ext, &o);
	if (err < 0)
		return err;
	plan->seg = GSO_TX_SOFTWARE;
	plan->frames = (uint32_t)err;
	plan->descs = 1 + 2 * (uint32_t)err;
	return 0;
}

static void e1000_caps(const struct gso_dev *d, struct gso_dev_caps *c)
{
	const struct e1000_dev *x = (const struct e1000_dev *)d;

	c->flags = x->t.lim.seg_types | GSO_DEV_CSUM | GSO_DEV_SG;
	c->mtu = x->mtu;
	c->max_frame = x->mtu + 14;
	c->max_segs = x->t.lim.max_segs;
	c->max_segs_udp = x->t.lim.udp_max_segs;
	c->max_frags = 1 + (x->mtu + MAX_PER_DESC - 1) / MAX_PER_DESC;
}

static uint32_t e1000_inflight(const struct gso_dev *d)
{
	const struct e1000_dev *x = (const struct e1000_dev *)d;

	return x->next - x->clean;
}

static uint64_t e1000_completed(const struct gso_dev *d)
{
	return ((const struct e1000_dev *)d)->st.tx_completed;
}

static void e1000_stats(struct gso_dev *d, struct gso_dev_stats *st)
{
	struct e1000_dev *x = to_x(d);

	*st = x->st;
	st->ring_full = x->t.ring_full;
	st->umem_full = x->t.umem_full;
	st->invalid = x->t.invalid;
	st->inflight_descs = x->next - x->clean;
}

static void e1000_close(struct gso_dev *d)
{
	struct e1000_dev *x = to_x(d);

	e1000_push(x);
	if (x->threaded) {
		gsoi_e1000_dev_stop(x, CLOSE_DRAIN_MS);
	} else {
		for (unsigned i = 0; i < CLOSE_DRAIN_MS && atomic_load(&x->tdh) != x->next; i++) {
			struct timespec ts = { 0, 1000000 };

			gsoi_e1000_dev_poll(x);
			if (atomic_load(&x->tdh) != x->next)
				nanosleep(&ts, NULL);
		}
	}
	e1000_reap(d, 0);
	/* Whatever the device did not take is dropped: the ring is gone. */
	for (; x->clean != x->next; x->clean++)
		x->slots[x->clean & mask(x)].n = 0;
	gsoi_ua_reclaim(&x->mem.ua);
	if (x->slab.valid)
		gsoi_ua_unhold(&x->mem.ua, x->slab.chunk);
	x->slab.valid = false;
	gsoi_e1000_wire_free(x->wire);
	x->wire = NULL;
}

static void e1000_destroy(struct gso_dev *d)
{
	struct e1000_dev *x = to_x(d);

	gsoi_e1000_engine_fini(&x->eng);
	gsoi_e1000_wire_free(x->wire);
	gsoi_ua_fini(&x->mem.ua);
	if (x->area)
		munmap(x->area, x->area_len);
	free(x->ring);
	free(x->slots);
	free(x->refs);
	free(x->dd);
	free(x);
}

static const struct gso_dev_ops e1000_ops = {
	.kind = "e1000",
	.caps = e1000_caps,
	.plan = e1000_plan,
	.submit = gsoi_tso_dev_submit,
	.kick = e1000_kick,
	.reap = e1000_reap,
	.stats = e1000_stats,
	.close = e1000_close,
	.destroy = e1000_destroy,
	.inflight = e1000_inflight,
	.completed = e1000_completed,
};

/* ---- public extras ---- */

int gso_e1000__poll(struct gso_dev *d)
{
	struct e1000_dev *x;

	if (!d || d->ops != &e1000_ops || to_x(d)->threaded)
		return -EINVAL;
	if (d->closed)
		return -ESHUTDOWN;
	x = to_x(d);
	e1000_push(x);
	return (int)gsoi_e1000_dev_poll(x);
}

static void txop_stats(const struct e1000_txop_counters *c, struct gso_e1000_stats *f)
{
	f->txops = atomic_load_explicit(&c->txops, memory_order_relaxed);
	f->txop_empty = atomic_load_explicit(&c->empty, memory_order_relaxed);
	f->txop_full = atomic_load_explicit(&c->full, memory_order_relaxed);
	f->txop_bytes = atomic_load_explicit(&c->bytes, memory_order_relaxed);
	f->txop_frames_max = atomic_load_explicit(&c->frames_max, memory_order_relaxed);
	f->txop_bytes_max = atomic_load_explicit(&c->bytes_max, memory_order_relaxed);
	f->txop_airtime_ns = atomic_load_explicit(&c->airtime_ns, memory_order_relaxed);
	f->txop_span_ns = atomic_load_explicit(&c->span_ns, memory_order_relaxed);
	f->txop_late_ns = atomic_load_explicit(&c->late_ns, memory_order_relaxed);
	f->txop_late_max_ns = atomic_load_explicit(&c->late_max_ns, memory_order_relaxed);
}

int gso_e1000__stats(struct gso_dev *d, struct gso_e1000_stats *st)
{
	struct e1000_dev *x;
	struct gso_e1000_stats f;
	const struct e1000_counters *c;

	if (!d || d->ops != &e1000_ops || !GSO_OUT_VALID(st))
		return -EINVAL;
	x = to_x(d);
	c = &x->eng.cnt;
	memset(&f, 0, sizeof(f));
	f.descs = atomic_load_explicit(&c->descs, memory_order_relaxed);
	f.ctx_descs = atomic_load_explicit(&c->ctx_descs, memory_order_relaxed);
	f.packets = atomic_load_explicit(&c->packets, memory_order_relaxed);
	f.tso_packets = atomic_load_explicit(&c->tso_packets, memory_order_relaxed);
	f.frames = atomic_load_explicit(&c->frames, memory_order_relaxed);
	f.bytes = atomic_load_explicit(&c->bytes, memory_order_relaxed);
	f.eop_missing = atomic_load_explicit(&c->eop_missing, memory_order_relaxed);
	f.tail_no_eop = atomic_load_explicit(&c->tail_no_eop, memory_order_relaxed);
	f.bad_desc = atomic_load_explicit(&c->bad_desc, memory_order_relaxed);
	f.bad_ctx = atomic_load_explicit(&c->bad_ctx, memory_order_relaxed);
	f.bad_len = atomic_load_explicit(&c->bad_len, memory_order_relaxed);
	f.wire_full = atomic_load_explicit(&c->wire_full, memory_order_relaxed);
	f.last_err_desc = atomic_load_explicit(&c->last_err_desc, memory_order_relaxed);
	f.wire_errors = gsoi_e1000_wire_errors(x->wire) + x->st.bad_completions;
	f.ring_full = x->t.ring_full;
	f.wakeups = atomic_load_explicit(&x->wakeups, memory_order_relaxed);
	f.dev_cpu_ns = atomic_load_explicit(&x->cpu_ns, memory_order_relaxed);
	if (x->thread_started) {
		clockid_t cid;
		struct timespec ts;

		/* A fresh reading of the device thread's clock, from outside. */
		if (!pthread_getcpuclockid(x->thr, &cid) && !clock_gettime(cid, &ts))
			f.dev_cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	f.dev_busy_ns = atomic_load_explicit(&x->busy_ns, memory_order_relaxed);
	f.inflight_descs = x->next - x->clean;
	txop_stats(&x->txop.cnt, &f);
	GSO_OUT_PUT(st, f);
	return 0;
}

/* ---- creation ---- */

struct ecfg {
	uint32_t mode, tso_flags, flags, ring, cs, nchunks, buf_chunks, wire, max_segs, mtu, cpu, spin_us,
		queue_id, xsk_mode;
	gso_e1000_wire_fn fn;
	void *ctx;
	struct e1000_txop_cfg txop;
};

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* GSO_E1000_F_TXOP's fields: each set without the flag would be ignored, so it is -EINVAL. */
static int read_txop(const struct gso_e1000_opts *o, struct ecfg *c)
{
	uint32_t us = GSO_OPTS_GET(o, txop_us, 0), jit = GSO_OPTS_GET(o, txop_jitter_us, 0);
	uint32_t frames = GSO_OPTS_GET(o, txop_frames, 0), bytes = GSO_OPTS_GET(o, txop_bytes, 0);
	uint64_t rate = GSO_OPTS_GET(o, link_rate, 0);

	if (!(c->flags & GSO_E1000_F_TXOP))
		return us || jit || frames || bytes || rate ||
		       (c->flags & (GSO_E1000_F_TXOP_NO_JITTER | GSO_E1000_F_TXOP_SPLIT)) ? -EINVAL : 0;
	us = us ?: DEF_TXOP_US;
	if (us > MAX_TXOP_US || frames > 65535 || (jit && (c->flags & GSO_E1000_F_TXOP_NO_JITTER)) || jit >= us)
		return -EINVAL;
	if (!jit && !(c->flags & GSO_E1000_F_TXOP_NO_JITTER))
		jit = us / 8;
	c->txop = (struct e1000_txop_cfg){
		.period_ns = (uint64_t)us * 1000u,
		.jitter_ns = (uint64_t)jit * 1000u,
		.max_frames = frames ?: DEF_TXOP_FRAMES,
		.max_bytes = bytes ?: UINT64_MAX,
		.rate = rate,
		.split = c->flags & GSO_E1000_F_TXOP_SPLIT,
	};
	return 0;
}

static int read_opts(const struct gso_e1000_opts *o, int ifindex, struct ecfg *c)
{
	long page = sysconf(_SC_PAGESIZE);

	if (!GSO_OPTS_VALID(gso_e1000_opts, o))
		return -EINVAL;
	c->mode = GSO_OPTS_GET(o, mode, 0);
	c->tso_flags = GSO_OPTS_GET(o, tso_flags, 0);
	c->flags = GSO_OPTS_GET(o, flags, 0);
	c->ring = GSO_OPTS_GET(o, ring_size, 0) ?: DEF_RING;
	c->cs = GSO_OPTS_GET(o, chunk_size, 0) ?: DEF_CHUNK;
	c->nchunks = GSO_OPTS_GET(o, nchunks, 0) ?: DEF_NCHUNKS;
	c->buf_chunks = GSO_OPTS_GET(o, buf_chunks, 0) ?: c->nchunks / 4 * 3;
	c->wire = GSO_OPTS_GET(o, wire_frames, 0) ?: DEF_WIRE;
	c->max_segs = GSO_OPTS_GET(o, max_segs, 0) ?: GSO_MAX_SEGS;
	c->mtu = GSO_OPTS_GET(o, mtu, 0);
	c->cpu = GSO_OPTS_GET(o, cpu, 0);
	c->spin_us = GSO_OPTS_GET(o, spin_us, 0) ?: DEF_SPIN_US;
	c->queue_id = GSO_OPTS_GET(o, queue_id, 0);
	c->xsk_mode = GSO_OPTS_GET(o, xsk_mode, 0);
	c->fn = GSO_OPTS_GET(o, wire_fn, NULL);
	c->ctx = GSO_OPTS_GET(o, wire_ctx, NULL);
	if (c->mode > GSO_TSO_OFFLOAD || (c->tso_flags & ~GSO_TSO_F_KNOWN) ||
	    (c->flags & ~GSO_E1000_F_KNOWN) || c->xsk_mode > GSO_XSK_MODE_ZEROCOPY)
		return -EINVAL;
	if (!pow2(c->ring) || c->ring < 64 || c->ring > 65536)
		return -EINVAL;
	if (!pow2(c->cs) || c->cs < 2048 || c->cs > (uint32_t)page)
		return -EINVAL;
	/* The driver needs a few chunks of its own for header copies. */
	if (c->nchunks < 8 || c->nchunks > (1u << 22) || c->buf_chunks > c->nchunks - 4)
		return -EINVAL;
	if (c->wire < 16 || c->wire > (1u << 20) || c->max_segs > GSO_MAX_SEGS)
		return -EINVAL;
	if (ifindex == 0 ? !c->fn : ifindex < 0 || c->fn)
		return -EINVAL;
	if (c->mtu && (ifindex || c->mtu < GSO_E1000_MIN_MTU || c->mtu > GSO_E1000_MAX_MTU))
		return -EINVAL;
	return read_txop(o, c);
}

static void set_limits(struct e1000_dev *x, const struct ecfg *c)
{
	struct tso_limits *l = &x->t.lim;

	/* What the model segments: TCP and UDP over IPv4 (Linux e1000 uses TCP only). */
	l->seg_types = GSO_DEV_SEG_TCP4 | GSO_DEV_SEG_UDP4;
	l->max_hdr_len = GSO_MAX_HDR_LEN; /* HDRLEN, TUCSS, TUCSO are 8 bits */
	l->max_mss = 0xffff;
	l->max_segs = c->max_segs;
	l->udp_max_segs = c->max_segs < GSO_UDP_MAX_SEGS ? c->max_segs : GSO_UDP_MAX_SEGS;
	l->max_frame = x->mtu + 14;
	l->cwr_every_seg = true;
	l->csum = true;
}

int gso_e1000__create(struct gso_dev **out, int ifindex, const struct gso_e1000_opts *o)
{
	struct e1000_dev *x;
	struct ecfg c;
	uint32_t fchunks;
	int err;

	if (!out)
		return -EINVAL;
	err = read_opts(o, ifindex, &c);
	if (err)
		return err;
	/* The shared indices are on their own cache lines: the struct must be aligned. */
	x = aligned_alloc(64, (sizeof(*x) + 63) & ~(size_t)63);
	if (!x)
		return -ENOMEM;
	memset(x, 0, sizeof(*x));
	x->t.dev.ops = &e1000_ops;
	x->t.hooks = &e1000_hooks;
	x->t.mode = (uint8_t)c.mode;
	x->t.flags = (uint8_t)c.tso_flags;
	x->ring_size = c.ring;
	x->cpu = c.cpu;
	x->spin_us = c.spin_us;
	x->threaded = !(c.flags & GSO_E1000_F_NO_THREAD);
	if (c.flags & GSO_E1000_F_TXOP)
		gsoi_e1000_txop_init(&x->txop, &c.txop);
	x->t.dev.ifindex = ifindex;
	x->mtu = c.mtu ?: DEF_MTU;
	if (ifindex) {
		err = gsoi_link_mtu(ifindex, NULL, &x->mtu);
		/* A frame must fit one chunk of the wire. */
		if (!err && x->mtu + 18 > c.cs)
			err = -EMSGSIZE;
		if (err)
			goto fail;
	}
	set_limits(x, &c);
	fchunks = ifindex ? c.wire : 0;
	x->dchunks = c.nchunks;
	x->fchunks = fchunks;
	x->area_len = (uint64_t)(c.nchunks + fchunks) * c.cs;
	x->area = mmap(NULL, x->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		       -1, 0);
	if (x->area == MAP_FAILED) {
		x->area = NULL;
		err = -ENOMEM;
		goto fail;
	}
	x->mem.base = x->area;
	x->mem.len = (uint64_t)c.nchunks * c.cs;
	x->mem.chunk_size = c.cs;
	err = gsoi_ua_init(&x->mem.ua, c.nchunks, c.buf_chunks);
	if (err)
		goto fail;
	x->t.dev.mem = &x->mem;
	x->scratch_n = c.ring;
	x->ring = calloc(c.ring, GSO_E1000_DESC_LEN);
	x->slots = calloc(c.ring, sizeof(*x->slots));
	x->refs = calloc(c.ring, sizeof(*x->refs));
	x->dd = calloc(c.ring, sizeof(*x->dd));
	if (!x->ring || !x->slots || !x->refs || !x->dd) {
		err = -ENOMEM;
		goto fail;
	}
	/* The device reads (DMA) the driver's chunks only. */
	err = gsoi_e1000_engine_init(&x->eng, c.ring, x->area, x->mem.len, x->mtu + 18);
	if (err)
		goto fail;
	if (ifindex) {
		struct xsk_wire_cfg wc = {
			.ifindex = ifindex,
			.queue_id = c.queue_id,
			.xsk_mode = c.xsk_mode,
			.area = x->area,
			.area_len = x->area_len,
			.chunk_size = c.cs,
			.first_chunk = c.nchunks,
			.nchunks = fchunks,
			.bind_wait_ms = BIND_WAIT_MS,
		};

		err = gsoi_e1000_wire_xsk(&x->wire, &wc);
	} else {
		err = gsoi_e1000_wire_cb(&x->wire, c.fn, c.ctx, x->mtu + 18);
	}
	if (err)
		goto fail;
	if (x->threaded) {
		err = gsoi_e1000_dev_start(x);
		if (err)
			goto fail;
	}
	snprintf(x->t.dev.name, sizeof(x->t.dev.name), "e1000 model %s%s", ifindex ? "af_xdp" : "callback",
		 x->threaded ? "" : " polled");
	*out = &x->t.dev;
	return 0;
fail:
	e1000_destroy(&x->t.dev);
	return err;
}
