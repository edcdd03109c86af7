/*
 * The e1000 transmit engine: walks the descriptor ring as the 8254x does
 * (QEMU hw/net/e1000.c is the reference), and turns each packet into
 * frames.  Two passes per packet: first the descriptors up to EOP are
 * checked, so that nothing of a packet the device cannot send leaves;
 * then the frames are built, each by copying the packet's header (TSO)
 * and its share of payload while summing it, then applying the per-frame
 * fix-ups and checksum insertion exactly as xmit_seg()/putsum() do.
 */
#include "e1000_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gso/csum.h>
#include "tmpl_wire_internal.h"

#define ETH_MIN_HDR 14u
#define FIN_PSH (GSO_TCP_FIN | GSO_TCP_PSH)

int gsoi_e1000_engine_init(struct e1000_engine *e, uint32_t ring_size, const uint8_t *dma,
			   uint64_t dma_len, uint32_t max_frame)
{
	if (!e || !ring_size || (ring_size & (ring_size - 1)) || !dma || !dma_len || max_frame < 60)
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	e->pieces = calloc(ring_size, sizeof(*e->pieces));
	if (!e->pieces)
		return -ENOMEM;
	e->ring_size = ring_size;
	e->dma = dma;
	e->dma_len = dma_len;
	e->max_frame = max_frame;
	return 0;
}

void gsoi_e1000_engine_fini(struct e1000_engine *e)
{
	if (!e)
		return;
	free(e->pieces);
	e->pieces = NULL;
}

static uint8_t *desc_at(const struct e1000_engine *e, uint8_t *ring, uint32_t i)
{
	return ring + (size_t)(i & (e->ring_size - 1)) * GSO_E1000_DESC_LEN;
}

/* Write back DD for descriptors [from, to) that asked for status (RS). */
static void writeback(struct e1000_engine *e, uint8_t *ring, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i != to; i++) {
		uint8_t *d = desc_at(e, ring, i);

		if (d[11] & GSO_E1000_CMD_RS)
			d[12] |= E1000_STA_DD;
	}
}

/* ---- pass 1: find and check a packet ---- */

enum scan_result { SCAN_OK, SCAN_WAIT, SCAN_EOP_MISSING, SCAN_BAD_DESC, SCAN_BAD_CTX, SCAN_BAD_LEN };

/*
 * Checksum ranges QEMU's putsum() would handle sanely: the field inside
 * [start, end] (end 0 = to the end of the frame).  QEMU sums a negative
 * length otherwise.
 */
static bool ranges_ok(const struct gso_e1000_ctx *c, uint8_t popts)
{
	if ((popts & GSO_E1000_POPTS_TXSM) &&
	    (c->tucso < c->tucss || (c->tucse && c->tucse <= c->tucso)))
		return false;
	if ((popts & GSO_E1000_POPTS_IXSM) &&
	    (c->ipcso < c->ipcss || (c->ipcse && c->ipcse <= c->ipcso)))
		return false;
	return true;
}

/* Offsets of a TSO context that make sense for a packet header of hdr_len bytes. */
static bool tso_ctx_ok(const struct e1000_engine *e, const struct gso_e1000_ctx *c, uint8_t popts)
{
	unsigned l4min = c->tucmd & GSO_E1000_TUCMD_TCP ? 20u : 8u;

	/* The 8254x segments IPv4 only; QEMU's IPv6 branch writes a wrong payload length. */
	if (!(c->tucmd & GSO_E1000_TUCMD_IP) || !c->mss || !ranges_ok(c, popts))
		return false;
	return c->ipcss + 20u <= c->tucss && c->tucss + l4min <= c->hdr_len &&
	       (unsigned)c->ipcso + 2 <= c->hdr_len && (unsigned)c->tucso + 2 <= c->hdr_len &&
	       c->hdr_len + (uint32_t)c->mss <= e->max_frame;
}

/*
 * Collect the data descriptors of the packet starting at `head` into
 * e->pieces, up to its EOP; *end = one past the last descriptor that
 * belongs to the packet (EOP, or where it was cut short).
 */
static enum scan_result scan(struct e1000_engine *e, uint8_t *ring, uint32_t head, uint32_t tail,
			     uint32_t *end)
{
	struct e1000_pkt *p = &e->pkt;
	enum scan_result bad = SCAN_OK;
	uint64_t total = 0;
	uint32_t i;

	memset(p, 0, sizeof(*p));
	for (i = head; i != tail; i++) {
		const uint8_t *d = desc_at(e, ring, i);
		struct gso_e1000_data dd;

		if (gso_e1000_data_decode(d, &dd)) {
			/* A context or legacy descriptor inside a packet: its EOP never came. */
			*end = i;
			return SCAN_EOP_MISSING;
		}
		if (i == head) {
			/* POPTS and TSE come from the first data descriptor. */
			p->popts = dd.popts;
			p->tse = dd.dcmd & GSO_E1000_CMD_TSE;
		}
		if (!!(dd.dcmd & GSO_E1000_CMD_TSE) != p->tse || (dd.dcmd & GSO_E1000_CMD_VLE) ||
		    dd.addr > e->dma_len || dd.len > e->dma_len - dd.addr)
			bad = bad ?: SCAN_BAD_DESC;
		else
			e->pieces[p->npieces++] = (struct e1000_piece){ e->dma + dd.addr, dd.len };
		total += dd.len;
		if (dd.dcmd & GSO_E1000_CMD_EOP)
			break;
	}
	if (i == tail)
		return SCAN_WAIT;
	*end = i + 1;
	if (bad)
		return bad;
	if (p->tse) {
		if (!e->tso_valid || !tso_ctx_ok(e, &e->tso, p->popts))
			return SCAN_BAD_CTX;
		if (total != (uint64_t)e->tso.hdr_len + e->tso.paylen)
			return SCAN_BAD_LEN;
		p->frames = e->tso.paylen ? (e->tso.paylen + e->tso.mss - 1) / e->tso.mss : 1;
	} else {
		if ((p->popts & (GSO_E1000_POPTS_TXSM | GSO_E1000_POPTS_IXSM)) &&
		    (!e->csum_valid || !ranges_ok(&e->csum, p->popts)))
			return SCAN_BAD_CTX;
		if (total < ETH_MIN_HDR || total > e->max_frame)
			return SCAN_BAD_LEN;
		p->frames = 1;
	}
	p->total = (uint32_t)total;
	return SCAN_OK;
}

/* ---- pass 2: frames ---- */

/*
 * Copy the next `len` packet bytes to dst, which sits at frame offset
 * `at`, adding the sum of the bytes inside [lo, hi) of the frame to *sum
 * (placed relative to lo, so odd offsets are byte-swapped).
 */
static void gather(struct e1000_engine *e, uint8_t *dst, uint32_t len, uint32_t at, uint32_t lo,
		   uint32_t hi, uint32_t *sum)
{
	struct e1000_pkt *p = &e->pkt;

	while (len) {
		const struct e1000_piece *pc = &e->pieces[p->cur];
		uint32_t n = pc->len - p->cur_off, s0, s1;
		const uint8_t *src = pc->p + p->cur_off;

		if (!n) {
			p->cur++;
			p->cur_off = 0;
			continue;
		}
		if (n > len)
			n = len;
		/* The summed part of [at, at + n) is [s0, s1). */
		s0 = at > lo ? at : lo;
		s1 = at + n < hi ? at + n : hi;
		if (s0 >= s1) {
			memcpy(dst, src, n);
		} else {
			memcpy(dst, src, s0 - at);
			*sum = gso_csum_block_add(*sum, gso_csum_copy(dst + (s0 - at), src + (s0 - at),
								      s1 - s0, 0), s0 - lo);
			memcpy(dst + (s1 - at), src + (s1 - at), at + n - s1);
		}
		dst += n;
		at += n;
		len -= n;
		p->cur_off += n;
	}
}

/* QEMU's net_checksum_finish_nozero(): a computed 0 goes out as 0xffff. */
static void store_sum(uint8_t *field, uint32_t sum)
{
	uint16_t v = gso_csum_finish(sum);

	if (!v)
		v = 0xffff;
	memcpy(field, &v, 2);
}

/* putsum(): checksum [css, min(cse + 1, n)) into sloc, if sloc lies inside. */
static void putsum(uint8_t *f, uint32_t n, uint32_t sloc, uint32_t css, uint32_t cse)
{
	if (cse && cse < n)
		n = cse + 1;
	if (sloc < n - 1 && css < n)
		store_sum(f + sloc, gso_csum_partial(f + css, n - css, 0));
}

/* End of the L4 checksum range of an n-byte frame (exclusive). */
static uint32_t l4_end(const struct gso_e1000_ctx *c, uint32_t n)
{
	return c->tucse && c->tucse < n ? c->tucse + 1u : n;
}

static void build_tso_frame(struct e1000_engine *e, uint8_t *f, uint32_t k)
{
	const struct gso_e1000_ctx *c = &e->tso;
	struct e1000_pkt *p = &e->pkt;
	uint32_t sofar = k * c->mss, plen = c->paylen - sofar, hl = c->hdr_len, n, end, sum = 0;
	bool txsm = p->popts & GSO_E1000_POPTS_TXSM;

	if (plen > c->mss)
		plen = c->mss;
	n = hl + plen;
	end = l4_end(c, n);
	memcpy(f, e->hdr, hl);
	/* xmit_seg(): IPv4 total length and ID + frame index. */
	put_be16(f + c->ipcss + IP4_TOT_LEN_, (uint16_t)(n - c->ipcss));
	put_be16(f + c->ipcss + IP4_ID_, (uint16_t)(get_be16(e->hdr + c->ipcss + IP4_ID_) + k));
	if (c->tucmd & GSO_E1000_TUCMD_TCP) {
		put_be32(f + c->tucss + TCP_SEQ_, get_be32(e->hdr + c->tucss + TCP_SEQ_) + sofar);
		/* FIN and PSH only on the last frame; CWR is left alone on every one. */
		if (c->paylen - sofar > c->mss)
			f[c->tucss + TCP_FLAGS_] &= (uint8_t)~FIN_PSH;
	} else {
		put_be16(f + c->tucss + UDP_LEN_, (uint16_t)(n - c->tucss));
	}
	if (txsm) {
		/* The seed carries no length: add this frame's L4 length (one fold, as QEMU). */
		uint32_t ph = get_be16(f + c->tucso) + (n - c->tucss);

		put_be16(f + c->tucso, (uint16_t)((ph >> 16) + (ph & 0xffff)));
		sum = gso_csum_partial(f + c->tucss, (end < hl ? end : hl) - c->tucss, 0);
	}
	gather(e, f + hl, plen, hl, c->tucss, txsm ? end : 0, &sum);
	if (txsm && c->tucso < end - 1)
		store_sum(f + c->tucso, sum);
	if (p->popts & GSO_E1000_POPTS_IXSM)
		putsum(f, n, c->ipcso, c->ipcss, c->ipcse);
	e1000_cnt_add(&e->cnt.bytes, n);
}

static void build_plain_frame(struct e1000_engine *e, uint8_t *f)
{
	const struct gso_e1000_ctx *c = &e->csum;
	struct e1000_pkt *p = &e->pkt;
	uint32_t n = p->total, sum = 0, end = 0;
	bool txsm = p->popts & GSO_E1000_POPTS_TXSM;

	if (txsm)
		end = l4_end(c, n);
	gather(e, f, n, 0, txsm ? c->tucss : 0, end, &sum);
	if (txsm && c->tucso < end - 1 && c->tucss < end)
		store_sum(f + c->tucso, sum);
	if (p->popts & GSO_E1000_POPTS_IXSM)
		putsum(f, n, c->ipcso, c->ipcss, c->ipcse);
	e1000_cnt_add(&e->cnt.bytes, n);
}

/* Length of the active packet's frame k. */
static uint32_t frame_len(const struct e1000_engine *e, uint32_t k)
{
	const struct e1000_pkt *p = &e->pkt;
	uint32_t plen;

	if (!p->tse)
		return p->total;
	plen = e->tso.paylen - k * e->tso.mss;
	return e->tso.hdr_len + (plen < e->tso.mss ? plen : e->tso.mss);
}

/*
 * A budget that splits packets (e1000_budget.split): how many of the
 * active packet's next `left` frames still fit the aggregate (at least one
 * if it has none yet).  Fewer than left: the rest waits for the next
 * aggregate.
 */
static uint32_t budget_fit(struct e1000_engine *e, uint32_t left)
{
	struct e1000_budget *b = e->budget;
	uint64_t bytes = 0;
	uint32_t n = 0;

	if (!b || !b->split)
		return left;
	while (n < left && n < b->frames) {
		bytes += frame_len(e, e->pkt.done + n);
		if (bytes > b->bytes)
			break;
		n++;
	}
	return n || b->took_frames ? n : 1;
}

/* Charge the n frames before the active packet's cursor to a splitting budget. */
static void budget_charge(struct e1000_engine *e, uint32_t n)
{
	struct e1000_budget *b = e->budget;

	if (!b || !b->split)
		return;
	for (uint32_t k = e->pkt.done - n; k != e->pkt.done; k++) {
		uint32_t len = frame_len(e, k);

		b->bytes = len < b->bytes ? b->bytes - len : 0;
		b->took_bytes += len;
	}
	b->frames = n < b->frames ? b->frames - n : 0;
	b->took_frames += n;
}

/* Emit what the wire (and a splitting budget) takes of the active packet; true when it is all out. */
static bool emit(struct e1000_engine *e, struct e1000_wire *w)
{
	struct e1000_pkt *p = &e->pkt;
	uint32_t left = p->frames - p->done, max_len, room, want;

	if (!left)
		return true;
	want = budget_fit(e, left);
	if (!want)
		return false;
	max_len = p->tse ? e->tso.hdr_len + (uint32_t)e->tso.mss : p->total;
	room = w->room(w, want, max_len);
	for (uint32_t i = 0; i < room; i++) {
		uint8_t *f = w->buf(w);

		if (p->tse) {
			build_tso_frame(e, f, p->done);
			w->put(w, frame_len(e, p->done));
		} else {
			build_plain_frame(e, f);
			w->put(w, p->total);
		}
		p->done++;
	}
	e1000_cnt_add(&e->cnt.frames, room);
	budget_charge(e, room);
	if (room < want) {
		e1000_cnt_add(&e->cnt.wire_full, 1);
		return false;
	}
	if (want < left) {
		/* The aggregate is full: the packet's other frames go in the next. */
		e->budget->full = e->budget->stopped = true;
		return false;
	}
	return true;
}

/* Start emitting a checked packet: header copy and payload cursor for TSO. */
static void start(struct e1000_engine *e)
{
	struct e1000_pkt *p = &e->pkt;
	uint32_t unused = 0;

	p->active = true;
	p->cur = p->cur_off = 0;
	if (p->tse)
		gather(e, e->hdr, e->tso.hdr_len, 0, 0, 0, &unused);
}

/* Charge the checked packet to the aggregate's budget; false: it waits for the next aggregate. */
static bool budget_take(struct e1000_engine *e)
{
	struct e1000_budget *b = e->budget;
	const struct e1000_pkt *p = &e->pkt;
	uint64_t bytes = p->tse ? (uint64_t)p->frames * e->tso.hdr_len + e->tso.paylen : p->total;

	if (!b)
		return true;
	if (b->split) {
		/* Frames are charged as they go out; the packet starts if its first frame fits. */
		if (!b->took_frames || (b->frames && frame_len(e, 0) <= b->bytes))
			return true;
		b->full = b->stopped = true;
		return false;
	}
	if (b->took_frames && (p->frames > b->frames || bytes > b->bytes)) {
		b->full = b->stopped = true;
		return false;
	}
	b->frames = p->frames < b->frames ? b->frames - p->frames : 0;
	b->bytes = bytes < b->bytes ? b->bytes - bytes : 0;
	b->took_frames += p->frames;
	b->took_bytes += bytes;
	return true;
}

static void drop(struct e1000_engine *e, enum scan_result r, uint32_t first)
{
	_Atomic uint64_t *c = r == SCAN_EOP_MISSING ? &e->cnt.eop_missing :
			      r == SCAN_BAD_DESC ? &e->cnt.bad_desc :
			      r == SCAN_BAD_CTX ? &e->cnt.bad_ctx : &e->cnt.bad_len;

	e1000_cnt_add(c, 1);
	atomic_store_explicit(&e->cnt.last_err_desc, first & (e->ring_size - 1), memory_order_relaxed);
}

/* With a budget (transmit opportunities), a packet is left half out. */
static bool half_out(const struct e1000_engine *e)
{
	return e->budget && e->pkt.active;
}

uint32_t gsoi_e1000_engine_run(struct e1000_engine *e, uint8_t *ring, uint32_t *head, uint32_t tail,
			       struct e1000_wire *w)
{
	uint32_t consumed = 0, h = *head, end = 0, nctx = 0;

	/* A tail more than a ring ahead is the driver's bug; never read a slot twice in one pass. */
	if (tail - h > e->ring_size)
		tail = h + e->ring_size;
	for (;;) {
		struct e1000_pkt *p = &e->pkt;
		enum scan_result r;
		struct gso_e1000_ctx c;
		const uint8_t *d;

		if (p->active) {
			if (!emit(e, w))
				break;
			writeback(e, ring, p->first, p->end);
			consumed += p->end - p->first + (p->ctx_held ? p->ctx : 0);
			h = p->end;
			p->active = false;
			e1000_cnt_add(&e->cnt.packets, 1);
			if (p->tse)
				e1000_cnt_add(&e->cnt.tso_packets, 1);
			continue;
		}
		if (h == tail)
			break;
		d = desc_at(e, ring, h);
		switch (gso_e1000_desc_kind(d)) {
		case GSO_E1000_CONTEXT:
			gso_e1000_ctx_decode(d, &c);
			if (c.tucmd & GSO_E1000_CMD_TSE) {
				e->tso = c;
				e->tso_valid = true;
			} else {
				e->csum = c;
				e->csum_valid = true;
			}
			writeback(e, ring, h, h + 1);
			e1000_cnt_add(&e->cnt.ctx_descs, 1);
			h++;
			consumed++;
			nctx++;
			continue;
		case GSO_E1000_DATA:
			break;
		default:
			/* Legacy and reserved descriptors are not modelled. */
			drop(e, SCAN_BAD_DESC, h);
			writeback(e, ring, h, h + 1);
			h++;
			consumed++;
			nctx = 0;
			continue;
		}
		r = scan(e, ring, h, tail, &end);
		if (r == SCAN_WAIT) {
			/* The driver bumps the tail after whole packets only: report once, then wait. */
			if (!e->stalled || e->stall_at != h) {
				e1000_cnt_add(&e->cnt.tail_no_eop, 1);
				e->stalled = true;
				e->stall_at = h;
			}
			break;
		}
		e->stalled = false;
		if (r != SCAN_OK) {
			drop(e, r, h);
			writeback(e, ring, h, end);
			consumed += end - h;
			h = end;
			nctx = 0;
			continue;
		}
		if (!budget_take(e)) {
			/*
			 * The packet's context descriptors wait with it, so that
			 * an aggregate completes whole packets only; taken again
			 * next time, they set the same context.
			 */
			h -= nctx;
			consumed -= nctx;
			e1000_cnt_add(&e->cnt.ctx_descs, (uint64_t)0 - nctx);
			break;
		}
		p->ctx = nctx;
		nctx = 0;
		p->first = h;
		p->end = end;
		start(e);
	}
	if (half_out(e) && !e->pkt.ctx_held) {
		/*
		 * Transmit opportunities: the head register covers whole
		 * packets only, so a packet the wire or the aggregate took in
		 * part keeps its context descriptors until it is all out.
		 */
		h -= e->pkt.ctx;
		consumed -= e->pkt.ctx;
		e->pkt.ctx_held = true;
	}
	w->flush(w);
	e1000_cnt_add(&e->cnt.descs, consumed);
	*head = h;
	return consumed;
}
