/*
 * The virtio_net_hdr backend: super-segments leave whole, each behind a
 * virtio_net_hdr, through an AF_PACKET socket (PACKET_VNET_HDR, TPACKET_V2
 * TX ring, qdisc bypass) or a TAP (vnet_tap.c).  The kernel validates the
 * header (virtio_net_hdr_to_skb) and hands the skb to the driver, which
 * programs the NIC's TSO or is preceded by the stack's software GSO when
 * the device cannot segment.
 *
 * Ring protocol (Documentation/networking/packet_mmap.rst, tpacket_snd()):
 * we fill frames in order, set tp_status to SEND_REQUEST (release), and a
 * sendto() makes the kernel walk from its own head while it finds
 * SEND_REQUEST; a frame comes back AVAILABLE when its skb is freed.  The
 * kernel references the ring pages (zero-copy, skb_zcopy_set_nouarg) and
 * copies them itself before they could outlive the frame, so a frame seen
 * AVAILABLE may be rewritten.  PACKET_LOSS makes the kernel skip a frame it
 * refuses instead of stopping the ring on it forever; everything is
 * validated before it reaches the ring, so that should never happen.
 * TPACKET_V3 would buy nothing here: its TX ring has the same fixed-size
 * slots (tpacket_parse_header() refuses tp_next_offset != 0).
 *
 * On a veth the ring is not the cheapest path: the kernel's zero-copy
 * frags are copied at the crossing (skb_orphan_frags in
 * __dev_forward_skb), after our copy into the ring; sendmmsg
 * (GSO_VNET_F_NO_RING) copies once.  On a NIC the ring saves that copy.
 */
#include "vnet_internal.h"
#include "kernel/link_internal.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include "opts_internal.h"
#include "kernel/sleep_internal.h"

#ifndef PACKET_QDISC_BYPASS
#define PACKET_QDISC_BYPASS 20 /* Linux 3.14 */
#endif
#ifndef PACKET_VNET_HDR
#define PACKET_VNET_HDR 15     /* Linux 3.1 */
#endif

#define DEF_FRAMES 240u
#define DEF_CHUNK 4096u
#define DEF_NCHUNKS 4096u
#define IOV_SCRATCH 4096u      /* software segments per super-segment without a ring */
/* Frames start with struct tpacket2_hdr; TX data follows at TPACKET_ALIGN(sizeof hdr). */
#define TX_DATA_OFF TPACKET_ALIGN(sizeof(struct tpacket2_hdr))
/* Largest frame a super-segment makes: a 65535-byte IP datagram behind Ethernet + 802.1Q. */
#define MAX_WIRE_FRAME (GSO_MAX_IP_LEN + 18u)
#define FRAME_SIZE TPACKET_ALIGN(TX_DATA_OFF + GSO_VNET_HDR_LEN + MAX_WIRE_FRAME)
/*
 * The kernel allocates each block as 2^order pages: 15 frames of 65600
 * bytes take 241 pages of a 256-page block, where one frame per block
 * would waste half of a 32-page one.
 */
#define FRAMES_PER_BLOCK 15u
#define CLOSE_DRAIN_MS 200
/*
 * Largest linear part we ask AF_PACKET for (see gsoi_vnet_linear_hint): with
 * the kernel's headroom and struct skb_shared_info (320 bytes with 17
 * fragments, 768 with CONFIG_MAX_SKB_FRAGS=45) the skb's head stays one
 * 64 KiB block (an order-4 allocation), never 128 KiB.
 */
#define VNET_LINEAR_MAX (65536u - 1024u)

static struct vnet_dev *to_vnet(struct gso_dev *d)
{
	return (struct vnet_dev *)d;
}

/* ---- ring frames ---- */

static uint8_t *frame_at(const struct vnet_dev *v, uint32_t i)
{
	size_t block = (size_t)FRAMES_PER_BLOCK * v->frame_size;

	block = (block + 4095) & ~(size_t)4095;
	return v->map + (i / FRAMES_PER_BLOCK) * block + (size_t)(i % FRAMES_PER_BLOCK) * v->frame_size;
}

static uint32_t status_of(const uint8_t *f)
{
	/* Acquire pairs with the kernel's smp_wmb() in __packet_set_status(): the frame is ours once seen AVAILABLE. */
	return __atomic_load_n(&((const struct tpacket2_hdr *)f)->tp_status, __ATOMIC_ACQUIRE);
}

/* Where the virtio header of a frame goes; the Ethernet frame follows it. */
static uint8_t *frame_data(const struct vnet_dev *v, uint32_t i)
{
	return frame_at(v, i) + TX_DATA_OFF;
}

static uint32_t frame_cap(const struct vnet_dev *v)
{
	return v->frame_size - TX_DATA_OFF - GSO_VNET_HDR_LEN;
}

/* Hand frame `i` (virtio header + `len` bytes of Ethernet frame) to the kernel. */
static void frame_queue(struct vnet_dev *v, uint32_t i, uint32_t len)
{
	struct tpacket2_hdr *h = (struct tpacket2_hdr *)frame_at(v, i);

	h->tp_len = GSO_VNET_HDR_LEN + len;
	/* Release pairs with the kernel's smp_rmb() in __packet_get_status(): contents before status. */
	__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
	v->last = i;
	v->pending = true;
}

static int vnet_reap(struct gso_dev *d, unsigned max)
{
	struct vnet_dev *v = to_vnet(d);
	uint32_t n = 0;

	if (!v->ring || !v->map)
		return 0;
	while (v->inflight && (!max || n < max)) {
		uint32_t st = status_of(frame_at(v, v->tail));

		if (st & (TP_STATUS_SEND_REQUEST | TP_STATUS_SENDING))
			break;
		if (st & TP_STATUS_WRONG_FORMAT) {
			/* Only without PACKET_LOSS; counted, then reused. */
			v->st.kernel_invalid++;
			__atomic_store_n(&((struct tpacket2_hdr *)frame_at(v, v->tail))->tp_status,
					 TP_STATUS_AVAILABLE, __ATOMIC_RELAXED);
		}
		v->tail = (v->tail + 1) % v->nframes;
		v->inflight--;
		n++;
	}
	v->st.tx_completed += n;
	return (int)n;
}

/* Free ring frames for `n` more packets (reaping if needed)? */
static bool ring_room(struct vnet_dev *v, uint32_t n)
{
	if (v->nframes - v->inflight < n)
		vnet_reap(&v->t.dev, 0);
	return v->nframes - v->inflight >= n;
}

/* ---- pushing ---- */

static int mark_dead(struct vnet_dev *v)
{
	v->dead = true;
	return -ENODEV;
}

/* Errors of a send: "later", the interface down, gone, or something else. */
static int send_errno(struct vnet_dev *v, int err)
{
	switch (err) {
	case EAGAIN:
	case ENOBUFS:
	case EBUSY:
		v->st.kick_busy++;
		return -EAGAIN;
	case ENETDOWN:
		return -ENETDOWN;
	case ENXIO:
	case ENODEV:
		return mark_dead(v);
	default:
		return -err;
	}
}

/*
 * Whether the interface carries frames now: up, and with carrier as the
 * driver says it (IFLA_CARRIER; IFF_RUNNING follows it only once
 * linkwatch has run, up to a second later).  An answer we cannot get
 * counts as "carries".
 */
static bool link_carries(const struct vnet_dev *v)
{
	struct link_info li;

	memset(&li, 0, sizeof(li));
	if (gsoi_link_rtnl(v->t.dev.ifindex, &li))
		return true;
	return (li.ifi_flags & IFF_UP) && (!li.has_carrier || li.carrier);
}

/*
 * Qdisc bypass (packet_direct_xmit -> __dev_direct_xmit) drops a GSO skb
 * that the device cannot segment: validate_xmit_skb() hands back a list
 * of segments, which the direct path refuses ("skb != orig_skb"), and the
 * send fails with ENOBUFS; from a ring the frame is put back and retried
 * forever.  The qdisc path (dev_queue_xmit) segments in software.  So the
 * first such ENOBUFS turns bypass off for good: on a busy real NIC that
 * costs only the qdisc, which handles a full queue properly.
 *
 * The direct path also drops everything, with the same ENOBUFS, while the
 * interface is not running or has no carrier (a link flap, the peer of a
 * veth down): that is the link, not segmentation, and bypass stays on
 * (the caller reports -ENETDOWN and the frames wait).  Only a flap that
 * ends between the drop and the rtnetlink question still reads as
 * "cannot segment".
 */
/* A send's errno, ENOBUFS of the direct path on a link that does not carry frames read as ENETDOWN. */
static int bypass_errno(const struct vnet_dev *v, int err)
{
	return err == ENOBUFS && v->bypass && !link_carries(v) ? ENETDOWN : err;
}

static bool bypass_off(struct vnet_dev *v, int err)
{
	int zero = 0;

	if (err != ENOBUFS || !v->bypass)
		return false;
	if (setsockopt(v->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &zero, sizeof(zero)))
		return false;
	v->bypass = false;
	snprintf(v->t.dev.name, sizeof(v->t.dev.name), "af_packet vnet%s qdisc", v->ring ? " ring" : "");
	return true;
}

static int vnet_push(struct vnet_dev *v)
{
	int err = 0;

	if (v->dead)
		return -ENODEV;
	if (!v->ring || !v->pending) {
		v->t.link_down = false;
		return 0;
	}
	for (int tries = 0; tries < 2; tries++) {
		int e = 0;

		v->st.kicks++;
		if (sendto(v->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0)
			e = bypass_errno(v, errno);
		/* A partial walk (send buffer full) still returns a positive count. */
		if (!(status_of(frame_at(v, v->last)) & TP_STATUS_SEND_REQUEST)) {
			v->pending = false;
			err = 0;
			break;
		}
		err = e ? send_errno(v, e) : -EAGAIN;
		if (!bypass_off(v, e))
			break;
	}
	/* Admin down: tpacket_snd() takes nothing and the frames keep SEND_REQUEST. */
	v->t.link_down = err == -ENETDOWN;
	return err;
}

static int vnet_kick(struct gso_dev *d)
{
	return vnet_push(to_vnet(d));
}

/*
 * Send messages now (no ring): AF_PACKET sendmmsg, TAP one writev each.
 * `lin`, if not NULL, is the virtio header of the one message, whose
 * hdr_len asks for a linear skb (gsoi_vnet_linear_hint): if the kernel cannot
 * allocate it (ENOBUFS), hdr_len goes back to `hdr_len` (the headers, the
 * rest in pages) and the message is sent again, before ENOBUFS is read as
 * the direct path's refusal (bypass_off).
 */
static int iov_send(struct vnet_dev *v, struct mmsghdr *m, unsigned n, uint8_t *lin, uint16_t hdr_len)
{
	unsigned done = 0;

	if (v->dead)
		return -ENODEV;
	while (done < n) {
		int r;

		v->st.kicks++;
		if (v->tap) {
			ssize_t w = writev(v->fd, m[done].msg_hdr.msg_iov, (int)m[done].msg_hdr.msg_iovlen);
			r = w < 0 ? -1 : 1;
		} else {
			r = sendmmsg(v->fd, m + done, n - done, 0);
		}
		if (r < 0 && errno == ENOBUFS && lin) {
			lin[2] = (uint8_t)hdr_len;
			lin[3] = (uint8_t)(hdr_len >> 8);
			lin = NULL;
			continue;
		}
		if (r < 0) {
			int e = bypass_errno(v, errno);

			if (e == EINTR || bypass_off(v, e))
				continue;
			/* Earlier messages of this super-segment are on the wire already. */
			return done ? -EIO : send_errno(v, e);
		}
		done += (unsigned)r;
	}
	return 0;
}

/* ---- queueing one super-segment ---- */

static int payload_of(struct vnet_dev *v, const struct gso_tx *tx, const uint8_t **p)
{
	int err;

	if (tx->buf) {
		err = gsoi_dev_buf_check(&v->mem, tx->buf, tx->off, tx->len);
		if (err)
			return err;
		*p = tx->buf->data + tx->off;
		return 0;
	}
	if (tx->len && !tx->data)
		return -EINVAL;
	*p = tx->data;
	return 0;
}

/* The caller's chunks were read: count them sent (QUEUED -> HELD). */
static void mark_sent(struct vnet_dev *v, const struct gso_tx *tx)
{
	uint32_t cs = v->mem.chunk_size, first, last;

	if (!tx->buf || !tx->len)
		return;
	first = tx->buf->first_ + (tx->off + v->mem.headroom) / cs;
	last = tx->buf->first_ + (tx->off + tx->len - 1 + v->mem.headroom) / cs;
	gsoi_ua_mark_sent_run(&v->mem.ua, first, last - first + 1);
}

/* Every frame must fit the interface: L3 and up at most the MTU. */
static void iov_msg(struct mmsghdr *m, struct iovec *iov, unsigned niov)
{
	memset(m, 0, sizeof(*m));
	m->msg_hdr.msg_iov = iov;
	m->msg_hdr.msg_iovlen = niov;
}

/*
 * hdr_len of the virtio header of a super-segment sent by sendmmsg on
 * AF_PACKET: the whole frame, up to VNET_LINEAR_MAX.  packet_snd() makes
 * the skb's linear part hdr_len bytes long and puts the rest in order-0
 * pages: with the headers' length, that is 16 page allocations and 16
 * fragments per 64 KiB super-segment, every one a fresh page (the
 * receiver frees them on its own CPU), where kernel TCP fills recycled
 * 32 KiB page fragments.  One 64 KiB head instead cut offload-vnet's
 * CPU per GB by about a quarter on the direct veth bed (README,
 * "offload path").  hdr_len is only a hint to Linux (virtio: "how much of
 * the header needs to be kept"): the skb's headers are parsed, never
 * taken from it, and it must not exceed the frame, which it never does
 * here.  A TAP caps its linear part below a page whatever we say, and the
 * TX ring would copy the hinted bytes out of the ring: both keep the
 * headers' length.
 */
uint16_t gsoi_vnet_linear_hint(uint32_t frame_len, uint16_t hdr_len)
{
	uint32_t lin = frame_len < VNET_LINEAR_MAX ? frame_len : VNET_LINEAR_MAX;

	return (uint16_t)(lin > hdr_len ? lin : hdr_len);
}

static int queue_offload(struct vnet_dev *v, const struct gso_tx *tx, const struct gso_offload_req *r)
{
	uint8_t *hdr = v->hdrs;
	struct gso_vnet_hdr vh;
	const uint8_t *pay;
	uint32_t flen;
	uint16_t hdr_len;
	int err;

	err = payload_of(v, tx, &pay);
	if (err)
		return err;
	err = gsoi_tso_mtu_check(tx, v->mtu);
	if (err)
		return err;
	flen = r->hdr_len + tx->len;
	if (v->ring && flen > frame_cap(v))
		return -EMSGSIZE;
	if (v->ring && !ring_room(v, 1))
		return -EAGAIN;
	err = gso_offload_vnet(r, tx->tmpl, &vh, hdr + 16, GSO_MAX_HDR_LEN);
	if (err)
		return err;
	hdr_len = vh.hdr_len;
	if (!v->ring && !v->tap)
		vh.hdr_len = gsoi_vnet_linear_hint(flen, vh.hdr_len);
	err = gso_vnet_hdr_encode(&vh, hdr, GSO_VNET_HDR_LEN);
	if (err)
		return err;
	if (v->ring) {
		uint8_t *d = frame_data(v, v->head);

		memcpy(d, hdr, GSO_VNET_HDR_LEN);
		memcpy(d + GSO_VNET_HDR_LEN, hdr + 16, r->hdr_len);
		if (tx->len)
			memcpy(d + GSO_VNET_HDR_LEN + r->hdr_len, pay, tx->len);
		frame_queue(v, v->head, flen);
		v->head = (v->head + 1) % v->nframes;
		v->inflight++;
	} else {
		struct iovec *iov = v->iov;

		iov[0] = (struct iovec){ hdr, GSO_VNET_HDR_LEN };
		iov[1] = (struct iovec){ hdr + 16, r->hdr_len };
		iov[2] = (struct iovec){ (void *)pay, tx->len };
		iov_msg(&v->msgs[0], iov, tx->len ? 3 : 2);
		err = iov_send(v, v->msgs, 1, vh.hdr_len != hdr_len ? hdr : NULL, hdr_len);
		if (err)
			return err;
		v->st.tx_completed++;
	}
	mark_sent(v, tx);
	v->st.tx_super++;
	v->st.tx_frames += r->segs;
	v->st.tx_descs++;
	v->st.tx_bytes += (uint64_t)r->segs * r->hdr_len + tx->len;
	v->st.tx_csum_offload += r->segs;
	if (v->ring)
		v->st.fallback_copy++;
	return 0;
}

/* Virtio header of a software-made frame: none, or a checksum request. */
static void sw_vnet(uint8_t *out, const struct gso_tmpl *t, bool partial, uint16_t start, uint16_t off)
{
	struct gso_vnet_hdr h = { 0 };

	if (partial) {
		h.flags = GSO_VNET_HDR_F_NEEDS_CSUM;
		h.hdr_len = t->hdr_len;
		h.csum_start = start;
		h.csum_offset = off;
	}
	gso_vnet_hdr_encode(&h, out, GSO_VNET_HDR_LEN);
}

static int queue_software(struct vnet_dev *v, const struct gso_tx *tx)
{
	bool partial = !(tx->flags & GSO_TX_F_SW_CSUM);
	struct gso_extent ext;
	struct gso_super s;
	struct gso_seg_opts o;
	const uint8_t *pay;
	uint32_t n;
	int r, err;

	err = payload_of(v, tx, &pay);
	if (err)
		return err;
	r = gsoi_tso_sw_count(tx, pay, partial, &s, &ext, &o);
	if (r < 0)
		return r;
	n = (uint32_t)r;
	err = gsoi_tso_mtu_check(tx, v->mtu);
	if (err)
		return err;
	if (n > v->scratch_n || (v->ring && tx->tmpl->hdr_len + (tx->len < tx->mss ? tx->len : tx->mss) > frame_cap(v)))
		return -EMSGSIZE;
	if (v->ring) {
		if (!ring_room(v, n))
			return -EAGAIN;
		for (uint32_t i = 0; i < n; i++) {
			v->frames[i].buf = frame_data(v, (v->head + i) % v->nframes) + GSO_VNET_HDR_LEN;
			v->frames[i].cap = frame_cap(v);
		}
		r = gso_segment(&s, &o, v->frames, n);
		if (r != (int)n)
			return r < 0 ? r : -EIO;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t slot = (v->head + i) % v->nframes;

			sw_vnet(frame_data(v, slot), tx->tmpl, partial, v->frames[i].csum_start,
				v->frames[i].csum_offset);
			v->st.tx_bytes += v->frames[i].len;
			frame_queue(v, slot, v->frames[i].len);
		}
		v->head = (v->head + n) % v->nframes;
		v->inflight += n;
	} else {
		for (uint32_t i = 0; i < n; i++) {
			v->refs[i].hdr = v->hdrs + (size_t)i * VNET_SLOT + 16;
			v->refs[i].hdr_cap = GSO_MAX_HDR_LEN;
		}
		r = gso_segment_ref(&s, &o, v->refs, n);
		if (r != (int)n)
			return r < 0 ? r : -EIO;
		for (uint32_t i = 0; i < n; i++) {
			const struct gso_seg_ref *g = &v->refs[i];
			uint8_t *vh = v->hdrs + (size_t)i * VNET_SLOT;
			struct iovec *iov = v->iov + 3 * i;

			sw_vnet(vh, tx->tmpl, partial, g->csum_start, g->csum_offset);
			iov[0] = (struct iovec){ vh, GSO_VNET_HDR_LEN };
			iov[1] = (struct iovec){ g->hdr, g->hdr_len };
			iov[2] = (struct iovec){ (void *)(pay + g->pay_off), g->pay_len };
			iov_msg(&v->msgs[i], iov, g->pay_len ? 3 : 2);
			v->st.tx_bytes += g->hdr_len + g->pay_len;
		}
		err = iov_send(v, v->msgs, n, NULL, 0);
		if (err)
			return err;
		v->st.tx_completed += n;
	}
	mark_sent(v, tx);
	v->st.tx_super++;
	v->st.tx_frames += n;
	v->st.tx_descs += n;
	if (partial)
		v->st.tx_csum_offload += n;
	else
		v->st.fallback_csum++;
	if (v->ring && tx->len)
		v->st.fallback_copy++;
	return 0;
}

static int vnet_queue(struct tso_dev *t, const struct gso_tx *tx, const struct tso_choice *c)
{
	struct vnet_dev *v = (struct vnet_dev *)t;

	if (v->dead)
		return -ENODEV;
	return c->offload ? queue_offload(v, tx, &c->req) : queue_software(v, tx);
}

static void vnet_make_room(struct tso_dev *t)
{
	struct vnet_dev *v = (struct vnet_dev *)t;

	vnet_push(v);
	vnet_reap(&t->dev, 0);
}

static int vnet_push_hook(struct tso_dev *t)
{
	return vnet_push((struct vnet_dev *)t);
}

static const struct tso_hooks vnet_hooks = {
	.queue = vnet_queue,
	.make_room = vnet_make_room,
	.push = vnet_push_hook,
};

int gso_vnet__send_frame(struct gso_dev *d, const struct gso_vnet_hdr *h, const void *frame, size_t len)
{
	struct vnet_dev *v;
	uint8_t vh[GSO_VNET_HDR_LEN];
	int err;

	if (!d || d->ops != &gsoi_vnet_ops || !h || !frame || !len)
		return -EINVAL;
	if (d->closed)
		return -ESHUTDOWN;
	v = to_vnet(d);
	if (v->dead)
		return -ENODEV;
	/* The kernel's own checks, with its errno, before anything is sent. */
	err = gso_vnet_hdr_check(h, len);
	if (!err)
		err = gso_vnet_hdr_encode(h, vh, sizeof(vh));
	if (err) {
		v->t.invalid++;
		return err;
	}
	if (v->ring) {
		if (len > frame_cap(v))
			return -EMSGSIZE;
		if (!ring_room(v, 1)) {
			vnet_make_room(&v->t);
			if (!ring_room(v, 1)) {
				v->t.ring_full++;
				return -EAGAIN;
			}
		}
		memcpy(frame_data(v, v->head), vh, sizeof(vh));
		memcpy(frame_data(v, v->head) + sizeof(vh), frame, len);
		frame_queue(v, v->head, (uint32_t)len);
		v->head = (v->head + 1) % v->nframes;
		v->inflight++;
		err = vnet_push(v);
		if (err == -EAGAIN)
			err = 0;
	} else {
		struct iovec iov[2] = { { vh, sizeof(vh) }, { (void *)frame, len } };

		iov_msg(&v->msgs[0], iov, 2);
		err = iov_send(v, v->msgs, 1, NULL, 0);
		if (!err)
			v->st.tx_completed++;
	}
	if (err)
		return err;
	v->st.tx_super++;
	v->st.tx_frames++;
	v->st.tx_descs++;
	v->st.tx_bytes += len;
	return 0;
}

/* ---- ops ---- */

static int vnet_plan(struct gso_dev *d, const struct gso_tx *tx, struct gso_tx_plan *plan)
{
	struct vnet_dev *v = to_vnet(d);
	struct tso_choice c;
	int err = gsoi_tso_choose(&v->t.lim, tx, v->t.mode, v->t.flags, &c);
	struct gso_extent ext;
	struct gso_super s;
	struct gso_seg_opts o;
	const uint8_t *pay;

	if (!err)
		err = payload_of(v, tx, &pay);
	if (!err)
		err = gsoi_tso_mtu_check(tx, v->mtu);
	if (err)
		return err;
	memset(plan, 0, sizeof(*plan));
	plan->copy = v->ring;
	if (c.offload) {
		plan->seg = c.req.type == GSO_OFFLOAD_NONE ? GSO_TX_SOFTWARE : GSO_TX_DEVICE;
		plan->csum = GSO_TX_DEVICE;
		plan->frames = c.req.segs;
		plan->descs = 1;
		return 0;
	}
	err = gsoi_tso_sw_count(tx, pay, !(tx->flags & GSO_TX_F_SW_CSUM), &s, &ext, &o);
	if (err < 0)
		return err;
	plan->seg = GSO_TX_SOFTWARE;
	plan->csum = tx->flags & GSO_TX_F_SW_CSUM ? GSO_TX_SOFTWARE : GSO_TX_DEVICE;
	plan->frames = plan->descs = (uint32_t)err;
	return 0;
}

static void vnet_caps(const struct gso_dev *d, struct gso_dev_caps *c)
{
	const struct vnet_dev *v = (const struct vnet_dev *)d;

	c->flags = v->t.lim.seg_types | GSO_DEV_CSUM;
	c->mtu = v->mtu;
	c->max_frame = v->mtu + 14;
	c->max_segs = v->t.lim.max_segs;
	c->max_segs_udp = v->t.lim.udp_max_segs;
	c->max_frags = 1;
}

static uint32_t vnet_inflight(const struct gso_dev *d)
{
	return ((const struct vnet_dev *)d)->inflight;
}

static uint64_t vnet_completed(const struct gso_dev *d)
{
	return ((const struct vnet_dev *)d)->st.tx_completed;
}

static void vnet_stats(struct gso_dev *d, struct gso_dev_stats *st)
{
	struct vnet_dev *v = to_vnet(d);

	*st = v->st;
	st->ring_full = v->t.ring_full;
	st->umem_full = v->t.umem_full;
	st->invalid = v->t.invalid;
	st->inflight_descs = v->inflight;
}

static void vnet_close(struct gso_dev *d)
{
	struct vnet_dev *v = to_vnet(d);

	if (v->ring && v->fd >= 0 && !v->dead) {
		for (int t = 0; t < CLOSE_DRAIN_MS && v->inflight; t++) {
			int err = vnet_push(v);

			vnet_reap(d, 0);
			if (err && err != -EAGAIN)
				break;
			if (v->inflight)
				sleep_ms(1);
		}
	}
	if (v->map) {
		munmap(v->map, v->map_len);
		v->map = NULL;
	}
	if (v->fd >= 0)
		close(v->fd);
	v->fd = -1;
	v->inflight = 0;
}

static void vnet_destroy(struct gso_dev *d)
{
	gsoi_vnet_free(to_vnet(d));
}

const struct gso_dev_ops gsoi_vnet_ops = {
	.kind = "af_packet",
	.caps = vnet_caps,
	.plan = vnet_plan,
	.submit = gsoi_tso_dev_submit,
	.kick = vnet_kick,
	.reap = vnet_reap,
	.stats = vnet_stats,
	.close = vnet_close,
	.destroy = vnet_destroy,
	.inflight = vnet_inflight,
	.completed = vnet_completed,
};

int gso_vnet__fd(const struct gso_dev *d)
{
	if (!d || d->ops != &gsoi_vnet_ops)
		return -EINVAL;
	if (d->closed)
		return -ESHUTDOWN;
	return ((const struct vnet_dev *)d)->fd;
}

/* ---- set-up ---- */

/* VIRTIO_NET_HDR_GSO_UDP_L4 is accepted from Linux 6.2 on. */
static bool kernel_has_udp_l4(void)
{
	struct utsname u;
	unsigned major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 2);
}

static bool pow2(uint32_t x)
{
	return x && !(x & (x - 1));
}

int gsoi_vnet_read_opts(const struct gso_vnet_opts *o)
{
	uint32_t frames, cs, nch;

	if (!GSO_OPTS_VALID(gso_vnet_opts, o))
		return -EINVAL;
	frames = GSO_OPTS_GET(o, frames, 0);
	cs = GSO_OPTS_GET(o, chunk_size, 0);
	nch = GSO_OPTS_GET(o, nchunks, 0);
	if (GSO_OPTS_GET(o, mode, 0) > GSO_TSO_OFFLOAD ||
	    (GSO_OPTS_GET(o, tso_flags, 0) & ~GSO_TSO_F_KNOWN) ||
	    (GSO_OPTS_GET(o, flags, 0) & ~GSO_VNET_F_KNOWN))
		return -EINVAL;
	if (frames && (frames < 8 || frames > 65536))
		return -EINVAL;
	if (cs && (cs < 2048 || cs > 65536 || !pow2(cs)))
		return -EINVAL;
	if (nch > (1u << 24))
		return -EINVAL;
	return 0;
}

int gsoi_vnet_init(struct vnet_dev *v, const struct gso_vnet_opts *o, uint32_t scratch_n)
{
	uint32_t flags = GSO_OPTS_GET(o, flags, 0);
	struct tso_limits *l = &v->t.lim;
	int err;

	v->t.dev.ops = &gsoi_vnet_ops;
	v->t.hooks = &vnet_hooks;
	v->t.mode = (uint8_t)GSO_OPTS_GET(o, mode, 0);
	v->t.flags = (uint8_t)GSO_OPTS_GET(o, tso_flags, 0);
	l->seg_types = GSO_DEV_SEG_TCP4 | GSO_DEV_SEG_TCP6;
	if (!(flags & GSO_VNET_F_NO_UDP_L4) && kernel_has_udp_l4())
		l->seg_types |= GSO_DEV_SEG_UDP4 | GSO_DEV_SEG_UDP6;
	l->max_hdr_len = GSO_MAX_HDR_LEN;
	l->max_mss = 0xfffe;     /* 0xffff is GSO_BY_FRAGS */
	l->max_segs = GSO_MAX_SEGS;
	l->udp_max_segs = flags & GSO_VNET_F_UDP_MAX64 ? 64 : GSO_UDP_MAX_SEGS;
	l->max_frame = v->mtu + 14;
	l->cwr_every_seg = false; /* VIRTIO_NET_HDR_GSO_ECN: the kernel keeps CWR on the first segment only */
	l->csum = true;

	v->mem.chunk_size = GSO_OPTS_GET(o, chunk_size, 0) ?: DEF_CHUNK;
	v->mem.len = (uint64_t)(GSO_OPTS_GET(o, nchunks, 0) ?: DEF_NCHUNKS) * v->mem.chunk_size;
	v->mem.base = mmap(NULL, v->mem.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (v->mem.base == MAP_FAILED) {
		v->mem.base = NULL;
		return -ENOMEM;
	}
	err = gsoi_ua_init(&v->mem.ua, (uint32_t)(v->mem.len / v->mem.chunk_size),
			   (uint32_t)(v->mem.len / v->mem.chunk_size));
	if (err)
		return err;
	v->t.dev.mem = &v->mem;

	v->scratch_n = scratch_n;
	v->frames = calloc(scratch_n, sizeof(*v->frames));
	v->refs = calloc(scratch_n, sizeof(*v->refs));
	v->hdrs = calloc(scratch_n, VNET_SLOT);
	v->iov = calloc((size_t)scratch_n * 3, sizeof(*v->iov));
	v->msgs = calloc(scratch_n, sizeof(*v->msgs));
	if (!v->frames || !v->refs || !v->hdrs || !v->iov || !v->msgs)
		return -ENOMEM;
	return 0;
}

void gsoi_vnet_free(struct vnet_dev *v)
{
	if (!v)
		return;
	if (v->map)
		munmap(v->map, v->map_len);
	if (v->fd >= 0)
		close(v->fd);
	gsoi_ua_fini(&v->mem.ua);
	if (v->mem.base)
		munmap(v->mem.base, v->mem.len);
	free(v->frames);
	free(v->refs);
	free(v->hdrs);
	free(v->iov);
	free(v->msgs);
	free(v);
}

static int set_int(int fd, int level, int opt, int val)
{
	return setsockopt(fd, level, opt, &val, sizeof(val)) ? -errno : 0;
}

static int setup_ring(struct vnet_dev *v, uint32_t frames)
{
	struct tpacket_req req;
	size_t block;
	int err;

	frames = (frames + FRAMES_PER_BLOCK - 1) / FRAMES_PER_BLOCK * FRAMES_PER_BLOCK;
	v->frame_size = FRAME_SIZE;
	block = ((size_t)FRAMES_PER_BLOCK * v->frame_size + 4095) & ~(size_t)4095;
	memset(&req, 0, sizeof(req));
	req.tp_block_size = (unsigned)block;
	req.tp_block_nr = frames / FRAMES_PER_BLOCK;
	req.tp_frame_size = v->frame_size;
	req.tp_frame_nr = frames;
	err = set_int(v->fd, SOL_PACKET, PACKET_VERSION, TPACKET_V2);
	if (!err)
		err = set_int(v->fd, SOL_PACKET, PACKET_LOSS, 1);
	if (!err && setsockopt(v->fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)))
		err = -errno;
	if (err)
		return err;
	v->map_len = block * req.tp_block_nr;
	v->map = mmap(NULL, v->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->map == MAP_FAILED) {
		v->map = NULL;
		return -errno;
	}
	v->nframes = frames;
	return 0;
}

int gso_vnet__create(struct gso_dev **out, int ifindex, const struct gso_vnet_opts *o)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET };
	char name[IF_NAMESIZE];
	struct vnet_dev *v;
	uint32_t flags, frames, sndbuf;
	int err;

	if (!out || ifindex <= 0)
		return -EINVAL;
	err = gsoi_vnet_read_opts(o);
	if (err)
		return err;
	if (!if_indextoname((unsigned)ifindex, name))
		return -ENODEV;
	flags = GSO_OPTS_GET(o, flags, 0);
	frames = GSO_OPTS_GET(o, frames, 0) ?: DEF_FRAMES;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->fd = -1;
	v->t.dev.ifindex = ifindex;
	v->ring = !(flags & GSO_VNET_F_NO_RING);
	err = gsoi_link_mtu(0, name, &v->mtu);
	if (!err)
		err = gsoi_vnet_init(v, o, v->ring ? (frames + FRAMES_PER_BLOCK - 1) / FRAMES_PER_BLOCK *
						  FRAMES_PER_BLOCK : IOV_SCRATCH);
	if (err)
		goto fail;
	v->t.lim.max_frame = v->mtu + 14;
	/* Protocol 0: a transmit-only socket, nothing is delivered to it. */
	v->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (v->fd < 0) {
		err = -errno;
		goto fail;
	}
	err = set_int(v->fd, SOL_PACKET, PACKET_VNET_HDR, 1);
	if (!err && !(flags & GSO_VNET_F_QDISC)) {
		err = set_int(v->fd, SOL_PACKET, PACKET_QDISC_BYPASS, 1);
		v->bypass = !err;
	}
	if (!err && v->ring)
		err = setup_ring(v, frames);
	if (err)
		goto fail;
	/* The ring's frames in flight are charged to the send buffer. */
	sndbuf = GSO_OPTS_GET(o, sndbuf, 0);
	if (!sndbuf) {
		uint64_t want = (uint64_t)(v->ring ? v->nframes : 64) * (FRAME_SIZE + 4096);
		sndbuf = want > (1u << 30) ? 1u << 30 : (uint32_t)want;
	}
	if (set_int(v->fd, SOL_SOCKET, SO_SNDBUFFORCE, (int)(sndbuf / 2)))
		set_int(v->fd, SOL_SOCKET, SO_SNDBUF, (int)(sndbuf / 2));
	ll.sll_ifindex = ifindex;
	if (bind(v->fd, (struct sockaddr *)&ll, sizeof(ll))) {
		err = -errno;
		goto fail;
	}
	snprintf(v->t.dev.name, sizeof(v->t.dev.name), "af_packet vnet%s%s", v->ring ? " ring" : "",
		 v->bypass ? " bypass" : " qdisc");
	*out = &v->t.dev;
	return 0;
fail:
	gsoi_vnet_free(v);
	return err;
}
