/*
 * Offload or software, per super-segment, for the TSO backends (virtio_net_hdr
 * and the e1000 model): the choice, the submit loop that applies it, and
 * the per-flow and per-device counters of every fallback.
 */
#include "tsodev_internal.h"
#include "opts_internal.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

static const char *const why_names[GSO_TSO_WHY_COUNT] = {
	[GSO_TSO_WHY_OFFLOAD] = "offload",
	[GSO_TSO_WHY_SINGLE] = "single",
	[GSO_TSO_WHY_MODE] = "mode",
	[GSO_TSO_WHY_PROTO] = "proto",
	[GSO_TSO_WHY_HDR_LEN] = "hdr_len",
	[GSO_TSO_WHY_MSS] = "mss",
	[GSO_TSO_WHY_SEGS] = "segs",
	[GSO_TSO_WHY_CSUM] = "csum",
	[GSO_TSO_WHY_ECN] = "ecn",
	[GSO_TSO_WHY_IPID] = "ipid",
};

const char *gso_tso_why_name(unsigned why)
{
	return why < GSO_TSO_WHY_COUNT ? why_names[why] : NULL;
}

struct tso_dev *gsoi_tso_of(struct gso_dev *dev)
{
	return dev && dev->ops && dev->ops->submit == gsoi_tso_dev_submit ? (struct tso_dev *)dev : NULL;
}

/* Software-segmentation options for `tx` (mss, IP ID, checksum mode). */
static void seg_opts(const struct gso_tx *tx, bool partial, struct gso_seg_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->mss = tx->mss;
	o->ipid = tx->ipid;
	o->csum = partial ? GSO_CSUM_PARTIAL : GSO_CSUM_FULL;
}

int gsoi_tso_mtu_check(const struct gso_tx *tx, uint32_t mtu)
{
	uint32_t first = tx->len < tx->mss ? tx->len : tx->mss;

	return (uint64_t)tx->tmpl->hdr_len - tx->tmpl->l3_off + first > mtu ? -EMSGSIZE : 0;
}

int gsoi_tso_sw_count(const struct gso_tx *tx, const void *payload, bool partial, struct gso_super *s,
		      struct gso_extent *ext, struct gso_seg_opts *o)
{
	ext->base = payload;
	ext->len = tx->len;
	s->tmpl = tx->tmpl;
	s->ext = ext;
	s->n_ext = tx->len ? 1 : 0;
	seg_opts(tx, partial, o);
	return gso_seg_count(s, o);
}

static uint32_t seg_type_bit(const struct gso_offload_req *r)
{
	bool v4 = r->flags & GSO_OFFLOAD_F_IPV4;

	switch (r->type) {
	case GSO_OFFLOAD_TCPV4:
		return GSO_DEV_SEG_TCP4;
	case GSO_OFFLOAD_TCPV6:
		return GSO_DEV_SEG_TCP6;
	case GSO_OFFLOAD_UDP_L4:
		return v4 ? GSO_DEV_SEG_UDP4 : GSO_DEV_SEG_UDP6;
	default:
		return 0;
	}
}

/* Why the device cannot take request `r` (GSO_TSO_WHY_OFFLOAD if it can). */
static unsigned device_refuses(const struct tso_limits *l, const struct gso_offload_req *r,
			       unsigned flags)
{
	if (!(l->seg_types & seg_type_bit(r)))
		return GSO_TSO_WHY_PROTO;
	if (r->hdr_len > l->max_hdr_len)
		return GSO_TSO_WHY_HDR_LEN;
	if (r->mss > l->max_mss)
		return GSO_TSO_WHY_MSS;
	/*
	 * Each segment is a frame of hdr_len + mss bytes; one that does not
	 * fit the wire would be dropped by the device (e1000: bad length)
	 * or the peer.  An 802.1Q tag is not counted in the MTU.
	 */
	if (r->segs > 1 && (uint32_t)r->hdr_len + r->mss > l->max_frame + (r->l2_len > 14 ? 4u : 0u))
		return GSO_TSO_WHY_MSS;
	if (r->segs > (r->type == GSO_OFFLOAD_UDP_L4 ? l->udp_max_segs : l->max_segs))
		return GSO_TSO_WHY_SEGS;
	/* Neither backend can keep IDs fixed: virtio has no such request, e1000 always steps. */
	if (r->flags & GSO_OFFLOAD_F_FIXEDID)
		return GSO_TSO_WHY_IPID;
	if ((r->flags & GSO_OFFLOAD_F_ECN) && l->cwr_every_seg && !(flags & GSO_TSO_F_ECN_EVERY))
		return GSO_TSO_WHY_ECN;
	return GSO_TSO_WHY_OFFLOAD;
}

int gsoi_tso_choose(const struct tso_limits *l, const struct gso_tx *tx, unsigned mode, unsigned flags,
		    struct tso_choice *c)
{
	uint32_t in = 0;
	unsigned why;
	int err;

	memset(c, 0, sizeof(*c));
	if (!tx->tmpl || mode > GSO_TSO_OFFLOAD || (flags & ~GSO_TSO_F_KNOWN) ||
	    (tx->flags & ~(GSO_TX_F_SW_CSUM | GSO_TX_F_COPY)) || tx->ipid > GSO_IPID_FIXED)
		return -EINVAL;
	if (mode == GSO_TSO_SOFTWARE) {
		/* The software path validates on its own (gso_seg_count). */
		c->why = tx->len <= tx->mss && tx->mss ? GSO_TSO_WHY_SINGLE : GSO_TSO_WHY_MODE;
		return 0;
	}
	if (tx->ipid == GSO_IPID_FIXED)
		in |= GSO_OFFLOAD_F_FIXEDID;
	/*
	 * UDP over the device's segment limit: the kernel refuses it with
	 * EINVAL; auto segments it in software instead, where the software
	 * limit applies.  Checked before describe(), whose own limit (128)
	 * may be looser than the device's.
	 */
	if (tx->tmpl->l4 == GSO_L4_UDP && tx->mss && tx->len > tx->mss &&
	    tx->len > (uint64_t)tx->mss * l->udp_max_segs) {
		if (mode == GSO_TSO_OFFLOAD)
			return -EINVAL;
		c->why = GSO_TSO_WHY_SEGS;
		return 0;
	}
	if (l->udp_max_segs <= 64)
		in |= GSO_OFFLOAD_F_UDP_MAX64;
	/* Refusals here (MSS 0, FIXEDID without DF, too long) are the software path's too. */
	c->req.sz = sizeof(c->req);
	err = gso_offload_describe(tx->tmpl, tx->len, tx->mss, in, &c->req);
	if (err)
		return err;
	if (c->req.type == GSO_OFFLOAD_NONE) {
		c->why = GSO_TSO_WHY_SINGLE;
		c->offload = l->csum && !(tx->flags & GSO_TX_F_SW_CSUM) &&
			     !(c->req.flags & GSO_OFFLOAD_F_FIXEDID);
		return 0;
	}
	if (tx->flags & GSO_TX_F_SW_CSUM)
		why = GSO_TSO_WHY_CSUM;
	else
		why = device_refuses(l, &c->req, mode == GSO_TSO_OFFLOAD ? GSO_TSO_F_ECN_EVERY : flags);
	if (why != GSO_TSO_WHY_OFFLOAD) {
		if (mode == GSO_TSO_OFFLOAD)
			return -EOPNOTSUPP;
		c->why = (uint8_t)why;
		return 0;
	}
	c->why = GSO_TSO_WHY_OFFLOAD;
	c->offload = true;
	c->keep_cwr = (c->req.flags & GSO_OFFLOAD_F_ECN) && l->cwr_every_seg;
	return 0;
}

/*
 * A caller's flow reaches at least why[] (its sz, as GSO_OPTS sets it),
 * or has sz 0 (`= {0}`: the whole struct, GSO_SZ0); a caller built
 * against an older header has fewer reasons, and a reason past its sz is
 * counted in the totals only.
 */
static bool flow_sz_ok(const struct gso_tso_flow *flow)
{
	return flow->sz >= offsetof(struct gso_tso_flow, why) || flow->sz == 0;
}

static void flow_count_why(struct gso_tso_flow *flow, unsigned why)
{
	size_t sz = flow->sz ? flow->sz : GSO_SZ0(*flow);

	if ((sz - offsetof(struct gso_tso_flow, why)) / sizeof(flow->why[0]) > why)
		flow->why[why]++;
}

static void count(struct gso_tso_stats *st, struct gso_tso_flow *flow, unsigned why)
{
	uint64_t *a = why == GSO_TSO_WHY_OFFLOAD ? &st->offloaded :
		      why == GSO_TSO_WHY_SINGLE ? &st->single : &st->software;

	(*a)++;
	st->why[why]++;
	if (flow) {
		a = why == GSO_TSO_WHY_OFFLOAD ? &flow->offloaded :
		    why == GSO_TSO_WHY_SINGLE ? &flow->single : &flow->software;
		(*a)++;
		flow_count_why(flow, why);
	}
}

static int submit(struct tso_dev *t, struct gso_tso_flow *flow, const struct gso_tx *tx, unsigned n)
{
	unsigned mode = flow ? flow->mode : t->mode, flags = flow ? flow->flags : t->flags, done = 0;
	int err = 0;

	/* Nothing more is queued behind frames that wait for the link (see gso_dev__submit). */
	if (unlikely(t->link_down) && t->hooks->push(t) == -ENETDOWN)
		return -ENETDOWN;
	while (done < n) {
		struct tso_choice c;

		err = gsoi_tso_choose(&t->lim, &tx[done], mode, flags, &c);
		if (!err) {
			err = t->hooks->queue(t, &tx[done], &c);
			if (err == -EAGAIN || err == -ENOBUFS) {
				t->hooks->make_room(t);
				err = t->hooks->queue(t, &tx[done], &c);
				if (err == -EAGAIN)
					t->ring_full++;
				else if (err == -ENOBUFS)
					t->umem_full++;
			}
		}
		if (err) {
			if (err != -EAGAIN && err != -ENOBUFS)
				t->invalid++;
			break;
		}
		count(&t->st, flow, c.why);
		done++;
	}
	if (done) {
		/* Queued frames whose push failed stay queued: gso_dev__kick(). */
		t->hooks->push(t);
		return (int)done;
	}
	return err;
}

int gsoi_tso_dev_submit(struct gso_dev *dev, const struct gso_tx *tx, unsigned n)
{
	return submit((struct tso_dev *)dev, NULL, tx, n);
}

/* An AF_XDP device segments everything in software; the flow still counts it. */
static int submit_plain(struct gso_dev *dev, struct gso_tso_flow *flow, const struct gso_tx *tx,
			unsigned n)
{
	int r;

	if (flow->mode > GSO_TSO_OFFLOAD || (flow->flags & ~GSO_TSO_F_KNOWN))
		return -EINVAL;
	if (flow->mode == GSO_TSO_OFFLOAD)
		return -EOPNOTSUPP;
	r = gso_dev__submit(dev, tx, n);
	for (int i = 0; i < r; i++) {
		unsigned why = tx[i].len <= tx[i].mss ? GSO_TSO_WHY_SINGLE :
			       flow->mode == GSO_TSO_SOFTWARE ? GSO_TSO_WHY_MODE : GSO_TSO_WHY_PROTO;
		uint64_t *a = why == GSO_TSO_WHY_SINGLE ? &flow->single : &flow->software;

		(*a)++;
		flow_count_why(flow, why);
	}
	return r;
}

int gso_tso__submit(struct gso_dev *dev, struct gso_tso_flow *flow, const struct gso_tx *tx, unsigned n)
{
	struct tso_dev *t = gsoi_tso_of(dev);

	if (!dev || !tx || !n)
		return -EINVAL;
	if (flow && !flow_sz_ok(flow))
		return -EINVAL;
	if (dev->closed)
		return -ESHUTDOWN;
	if (!t)
		return flow ? submit_plain(dev, flow, tx, n) : gso_dev__submit(dev, tx, n);
	return submit(t, flow, tx, n);
}

int gso_tso__set_mode(struct gso_dev *dev, enum gso_tso_mode mode, unsigned flags)
{
	struct tso_dev *t = gsoi_tso_of(dev);

	if (!t || (unsigned)mode > GSO_TSO_OFFLOAD || (flags & ~GSO_TSO_F_KNOWN))
		return -EINVAL;
	if (dev->closed)
		return -ESHUTDOWN;
	t->mode = (uint8_t)mode;
	t->flags = (uint8_t)flags;
	return 0;
}

int gso_tso__stats(struct gso_dev *dev, struct gso_tso_stats *st)
{
	struct tso_dev *t = gsoi_tso_of(dev);
	struct gso_tso_stats full;

	if (!t || !GSO_OUT_VALID(st))
		return -EINVAL;
	full = t->st;
	full.mode = t->mode;
	full.seg_types = t->lim.seg_types;
	full.lim_hdr_len = t->lim.max_hdr_len;
	full.lim_max_segs = t->lim.max_segs;
	full.lim_udp_segs = t->lim.udp_max_segs;
	full.lim_max_frame = t->lim.max_frame;
	full.cwr_every_seg = t->lim.cwr_every_seg;
	GSO_OUT_PUT(st, full);
	return 0;
}

int gso_tso__choice(struct gso_dev *dev, const struct gso_tso_flow *flow, const struct gso_tx *tx)
{
	struct tso_dev *t = gsoi_tso_of(dev);
	unsigned mode, flags;
	struct tso_choice c;
	int err;

	if (!dev || !tx || !tx->tmpl || (flow && !flow_sz_ok(flow)))
		return -EINVAL;
	if (dev->closed)
		return -ESHUTDOWN;
	if (!t) {
		/* As submit_plain() counts it. */
		if (!flow)
			return tx->len <= tx->mss ? GSO_TSO_WHY_SINGLE : GSO_TSO_WHY_PROTO;
		if (flow->mode > GSO_TSO_OFFLOAD || (flow->flags & ~GSO_TSO_F_KNOWN))
			return -EINVAL;
		if (flow->mode == GSO_TSO_OFFLOAD)
			return -EOPNOTSUPP;
		return tx->len <= tx->mss ? GSO_TSO_WHY_SINGLE :
		       flow->mode == GSO_TSO_SOFTWARE ? GSO_TSO_WHY_MODE : GSO_TSO_WHY_PROTO;
	}
	mode = flow ? flow->mode : t->mode;
	flags = flow ? flow->flags : t->flags;
	err = gsoi_tso_choose(&t->lim, tx, mode, flags, &c);
	return err ? err : c.why;
}
