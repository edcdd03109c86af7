/*
 * Segmentation front door: validation, the plan (lengths, header images,
 * IPv4 checksum parts), and the walk over the payload extents for both
 * output forms.  TCP and UDP specifics of the plan live in seg_tcp.c and
 * seg_udp.c; the per-segment header writer is inline in seg_internal.h.
 */
#include <errno.h>

#include "opts_internal.h"
#include "seg_internal.h"

#define ETH_HLEN 14u
#define IP4_HLEN 20u
#define IP6_HLEN 40u

/*
 * The template struct is exposed and could have been damaged by the
 * caller; every offset used to write is checked against the header bytes
 * so that nothing can be written outside hdr_len.
 */
static int tmpl_check(const struct gso_tmpl *t)
{
	const uint8_t *h = t->hdr;
	unsigned l3_len = (unsigned)t->l4_off - t->l3_off;

	/* Sizes first: every byte read below must lie inside hdr_len. */
	if (t->hdr_len > GSO_MAX_HDR_LEN || t->l3_off < ETH_HLEN || t->l4_off <= t->l3_off ||
	    (unsigned)t->l4_off + t->l4_len != t->hdr_len)
		return -EINVAL;
	if (t->l3 == GSO_L3_IPV4) {
		if (l3_len < IP4_HLEN || l3_len > 60 || l3_len % 4 ||
		    h[t->l3_off] != (0x40 | l3_len / 4) || h[t->l3_off + 9] != t->l4)
			return -EINVAL;
		/* A fragment cannot be segmented: MF or a fragment offset. */
		if ((h[t->l3_off + 6] & 0x3fu) || h[t->l3_off + 7])
			return -EINVAL;
	} else if (t->l3 == GSO_L3_IPV6) {
		if (l3_len != IP6_HLEN || h[t->l3_off] >> 4 != 6 || h[t->l3_off + 6] != t->l4)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (t->l4 == GSO_L4_TCP) {
		if (t->l4_len < 20 || (h[t->l4_off + 12] >> 4) * 4u != t->l4_len)
			return -EINVAL;
	} else if (t->l4 == GSO_L4_UDP) {
		if (t->l4_len != 8)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	return 0;
}

int gsoi_seg_rules(const struct gso_tmpl *t, size_t total, uint32_t mss, uint32_t max_segs, bool fixed_id)
{
	uint32_t n, limit;
	size_t ip_len;
	int err;

	if (mss == 0 || mss > 65535)
		return -EINVAL;
	err = tmpl_check(t);
	if (err)
		return err;

	/* The whole datagram must be expressible in IPv4 tot_len. */
	ip_len = (size_t)(t->hdr_len - t->l3_off);
	if (total > GSO_MAX_IP_LEN || ip_len + total > GSO_MAX_IP_LEN)
		return -EMSGSIZE;

	/* Small frames are one segment: no division (tens of cycles) for them. */
	n = total <= mss ? 1 : (uint32_t)((total + mss - 1) / mss);
	limit = max_segs ? max_segs : t->l4 == GSO_L4_TCP ? GSO_MAX_SEGS : GSO_UDP_MAX_SEGS;
	if (n > limit)
		return -E2BIG;

	/* Linux fails segmentation with fixed IDs unless DF says nobody reassembles. */
	if (t->l3 == GSO_L3_IPV4 && fixed_id && !(t->hdr[t->l3_off + 6] & 0x40))
		return -EINVAL;
	/* Every segment would claim to open or reset the connection. */
	if (t->l4 == GSO_L4_TCP && n > 1 &&
	    (t->hdr[t->l4_off + SEG_TCP_FLAGS] & (GSO_TCP_SYN | GSO_TCP_RST)))
		return -EINVAL;
	return (int)n;
}

int gsoi_seg_check(struct seg_req *r, const struct gso_tmpl *t, size_t total,
		   const struct gso_seg_opts *o)
{
	uint32_t mss, max_segs;
	uint8_t csum, ipid;
	int n;

	if (!t || !o)
		return -EINVAL;
	if (o->sz == sizeof(*o)) {
		/* The usual caller, built against this header: one load for the tail. */
		uint32_t tail;

		_Static_assert(sizeof(struct gso_seg_opts) - GSO_OPTS_KNOWN(gso_seg_opts) ==
				       sizeof(tail),
			       "gso_seg_opts tail");
		memcpy(&tail, (const uint8_t *)o + GSO_OPTS_KNOWN(gso_seg_opts), sizeof(tail));
		if (tail)
			return -EINVAL;
		mss = o->mss;
		csum = o->csum;
		ipid = o->ipid;
		max_segs = o->max_segs;
	} else {
		if (!GSO_OPTS_VALID(gso_seg_opts, o))
			return -EINVAL;
		mss = GSO_OPTS_GET(o, mss, 0);
		csum = GSO_OPTS_GET(o, csum, GSO_CSUM_FULL);
		ipid = GSO_OPTS_GET(o, ipid, GSO_IPID_INC);
		max_segs = GSO_OPTS_GET(o, max_segs, 0);
	}
	if (csum > GSO_CSUM_PARTIAL || ipid > GSO_IPID_FIXED || max_segs > GSO_MAX_SEGS)
		return -EINVAL;
	n = gsoi_seg_rules(t, total, mss, max_segs, ipid == GSO_IPID_FIXED);
	if (n < 0)
		return n;

	r->t = t;
	r->total = (uint32_t)total;
	r->mss = mss;
	r->n = (uint32_t)n;
	r->csum = csum;
	r->ipid = ipid;
	return n;
}

void gsoi_seg_plan_fill(struct seg_plan *p, const struct seg_req *r)
{
	const struct gso_tmpl *t = r->t;
	uint32_t mss = r->mss, n = r->n;

	p->t = t;
	p->total = r->total;
	p->mss = mss;
	p->n = n;
	p->last_pay = r->total - (n - 1) * mss;
	p->csum = r->csum;
	p->v4 = t->l3 == GSO_L3_IPV4;
	p->tcp = t->l4 == GSO_L4_TCP;
	p->ipid_inc = false;
	p->hdr_len = (uint8_t)t->hdr_len;
	p->l3_off = t->l3_off;
	p->l4_off = t->l4_off;
	p->ip_id0 = 0;

	/*
	 * Two header images, for the non-last segments and for the last:
	 * lengths in place, IPv4 ID and checksum zero.  The L4 plan adds
	 * its own fields; per segment only ID, IP checksum and TCP seq remain.
	 */
	for (int k = 0; k < 2; k++) {
		uint32_t pay = k ? p->last_pay : mss;
		uint8_t *ip = p->img[k] + t->l3_off;

		p->l4_len[k] = (uint16_t)(t->l4_len + pay);
		p->l3_len[k] = (uint16_t)(t->hdr_len - t->l3_off + pay - (p->v4 ? 0 : IP6_HLEN));
		seg_copy_hdr(p->img[k], t->hdr, t->hdr_len);
		if (p->v4) {
			seg_put_be16(ip + 2, p->l3_len[k]);
			memset(ip + 4, 0, 2);
			memset(ip + 10, 0, 2);
			p->ip_sum[k] = seg_sum32(ip, (unsigned)t->l4_off - t->l3_off);
		} else {
			seg_put_be16(ip + 4, p->l3_len[k]);
			p->ip_sum[k] = 0;
		}
	}

	if (p->v4) {
		const uint8_t *ip = t->hdr + t->l3_off;

		p->ipid_inc = r->ipid == GSO_IPID_INC;
		p->ip_id0 = (uint16_t)(ip[4] << 8 | ip[5]);
	}
	if (p->tcp)
		gsoi_seg_tcp_plan(p);
	else
		gsoi_seg_udp_plan(p);
}

/* ---- payload extents ---- */

/* A position in the payload: extent index and offset inside it. */
struct ext_pos {
	const struct gso_extent *ext;
	unsigned n_ext;
	unsigned idx;
	size_t off;
};

/* Total payload length, or -EINVAL for an extent that cannot be read. */
static int ext_total(const struct gso_super *s, size_t *total)
{
	size_t sum = 0;

	if (s->n_ext && !s->ext)
		return -EINVAL;
	for (unsigned k = 0; k < s->n_ext; k++) {
		if (s->ext[k].len && !s->ext[k].base)
			return -EINVAL;
		/* Anything over 64 KiB is rejected later; just avoid wrapping. */
		if (s->ext[k].len > GSO_MAX_IP_LEN + 1u)
			sum = GSO_MAX_IP_LEN + 1u;
		else
			sum += s->ext[k].len;
		if (sum > GSO_MAX_IP_LEN)
			sum = GSO_MAX_IP_LEN + 1u;
	}
	*total = sum;
	return 0;
}

static void ext_pos_init(struct ext_pos *c, const struct gso_super *s)
{
	c->ext = s->ext;
	c->n_ext = s->n_ext;
	c->idx = 0;
	c->off = 0;
}

/* Move past empty extents and the end of the current one. */
static inline void ext_pos_settle(struct ext_pos *c)
{
	while (c->idx < c->n_ext && c->off == c->ext[c->idx].len) {
		c->idx++;
		c->off = 0;
	}
}

/*
 * Copy `len` payload bytes from the cursor to `dst`, checksumming them
 * into `sum` when `csum` (`sum` is the running sum of a region in which
 * the payload starts at an even offset).
 */
static uint32_t ext_copy(struct ext_pos *c, uint8_t *dst, uint32_t len, bool csum, uint32_t sum)
{
	uint32_t done = 0;

	while (done < len) {
		const struct gso_extent *e;
		size_t k;
		const uint8_t *src;

		ext_pos_settle(c);
		e = &c->ext[c->idx];
		k = e->len - c->off;
		if (k > len - done)
			k = len - done;
		src = (const uint8_t *)e->base + c->off;
		if (!csum)
			memcpy(dst + done, src, k);
		else if (!(done & 1))
			sum = gso_csum_copy(dst + done, src, k, sum);
		else
			sum = gso_csum_block_add(sum, gso_csum_copy(dst + done, src, k, 0), done);
		done += (uint32_t)k;
		c->off += k;
	}
	return sum;
}

/* Same walk, reading only (form (b) with a full checksum). */
static uint32_t ext_sum(struct ext_pos *c, uint32_t len, uint32_t sum)
{
	uint32_t done = 0;

	while (done < len) {
		const struct gso_extent *e;
		size_t k;
		const uint8_t *src;

		ext_pos_settle(c);
		e = &c->ext[c->idx];
		k = e->len - c->off;
		if (k > len - done)
			k = len - done;
		src = (const uint8_t *)e->base + c->off;
		if (!(done & 1))
			sum = gso_csum_partial(src, k, sum);
		else
			sum = gso_csum_block_add(sum, gso_csum_partial(src, k, 0), done);
		done += (uint32_t)k;
		c->off += k;
	}
	return sum;
}

/* Advance the cursor by `len` bytes without touching them. */
static void ext_skip(struct ext_pos *c, uint32_t len)
{
	while (len) {
		size_t k;

		ext_pos_settle(c);
		k = c->ext[c->idx].len - c->off;
		if (k > len)
			k = len;
		c->off += k;
		len -= (uint32_t)k;
	}
}

/* ---- front door ---- */

static int check_super(struct seg_req *r, const struct gso_super *s, const struct gso_seg_opts *o)
{
	size_t total;
	int err;

	if (!s)
		return -EINVAL;
	err = ext_total(s, &total);
	if (err)
		return err;
	return gsoi_seg_check(r, s->tmpl, total, o);
}

int gso_seg_count(const struct gso_super *s, const struct gso_seg_opts *o)
{
	struct seg_req r;

	return check_super(&r, s, o);
}

/* gso_segment() of a super-segment that makes one frame: no plan needed. */
static int segment_one(const struct seg_req *r, const struct gso_super *s, struct gso_frame *out)
{
	const struct gso_tmpl *t = r->t;
	struct ext_pos c;
	uint8_t *f = out->buf;
	bool full = r->csum == GSO_CSUM_FULL;
	uint32_t sum;

	if (!f)
		return -EINVAL;
	if (out->cap < t->hdr_len + r->total)
		return -ENOBUFS;
	sum = seg_one_hdr(r, f);
	if (!r->total) {
		/* nothing to copy; an empty extent may have a NULL base */
	} else if (s->n_ext == 1 && full) {
		sum = gso_csum_copy(f + t->hdr_len, s->ext[0].base, r->total, sum);
	} else if (s->n_ext == 1) {
		memcpy(f + t->hdr_len, s->ext[0].base, r->total);
	} else {
		ext_pos_init(&c, s);
		sum = ext_copy(&c, f + t->hdr_len, r->total, full, sum);
	}
	if (full)
		seg_one_csum_store(r, f, sum);
	out->len = t->hdr_len + r->total;
	out->csum_start = t->l4_off;
	out->csum_offset = t->l4 == GSO_L4_TCP ? SEG_TCP_CHECK : SEG_UDP_CHECK;
	return 1;
}

int gso_segment(const struct gso_super *s, const struct gso_seg_opts *o,
		struct gso_frame *out, unsigned n_out)
{
	struct seg_req r;
	struct seg_plan p;
	struct ext_pos c;
	bool full;
	int n = check_super(&r, s, o);

	if (n < 0)
		return n;
	if (!out)
		return -EINVAL;
	if ((unsigned)n > n_out)
		return -ENOSPC;
	if (n == 1)
		return segment_one(&r, s, out);
	gsoi_seg_plan_fill(&p, &r);
	for (uint32_t i = 0; i < (uint32_t)n; i++) {
		if (!out[i].buf)
			return -EINVAL;
		if (out[i].cap < seg_frame_len(&p, i))
			return -ENOBUFS;
	}

	full = p.csum == GSO_CSUM_FULL;
	ext_pos_init(&c, s);
	for (uint32_t i = 0; i < (uint32_t)n; i++) {
		uint8_t *f = out[i].buf;
		uint32_t pay = seg_pay_len(&p, i);
		uint32_t sum = seg_hdr_write(&p, i, f);

		sum = ext_copy(&c, f + p.hdr_len, pay, full, sum);
		if (full)
			seg_csum_store(&p, f, sum);
		out[i].len = p.hdr_len + pay;
		out[i].csum_start = p.l4_off;
		out[i].csum_offset = p.csum_off;
	}
	return n;
}

/* gso_segment_ref() of a super-segment that makes one frame. */
static int segment_ref_one(const struct seg_req *r, const struct gso_super *s,
			   struct gso_seg_ref *out)
{
	const struct gso_tmpl *t = r->t;
	bool full = r->csum == GSO_CSUM_FULL;
	uint32_t sum;

	if (!out->hdr)
		return -EINVAL;
	if (out->hdr_cap < t->hdr_len)
		return -ENOBUFS;
	sum = seg_one_hdr(r, out->hdr);
	out->hdr_len = t->hdr_len;
	out->pay_off = 0;
	out->pay_len = r->total;
	out->ext_idx = 0;
	out->ext_off = 0;
	if (!r->total) {
		/* no payload: the extents are not read */
	} else if (s->n_ext == 1) {
		if (full)
			sum = gso_csum_partial(s->ext[0].base, r->total, sum);
	} else {
		struct ext_pos c;

		ext_pos_init(&c, s);
		ext_pos_settle(&c);
		out->ext_idx = c.idx;
		if (full)
			sum = ext_sum(&c, r->total, sum);
	}
	if (full)
		seg_one_csum_store(r, out->hdr, sum);
	out->csum_start = t->l4_off;
	out->csum_offset = t->l4 == GSO_L4_TCP ? SEG_TCP_CHECK : SEG_UDP_CHECK;
	return 1;
}

int gso_segment_ref(const struct gso_super *s, const struct gso_seg_opts *o,
		    struct gso_seg_ref *out, unsigned n_out)
{
	struct seg_req q;
	struct seg_plan p;
	struct ext_pos c;
	bool full, single;
	int n = check_super(&q, s, o);

	if (n < 0)
		return n;
	if (!out)
		return -EINVAL;
	if ((unsigned)n > n_out)
		return -ENOSPC;
	if (n == 1)
		return segment_ref_one(&q, s, out);
	gsoi_seg_plan_fill(&p, &q);
	for (uint32_t i = 0; i < (uint32_t)n; i++) {
		if (!out[i].hdr)
			return -EINVAL;
		if (out[i].hdr_cap < p.hdr_len)
			return -ENOBUFS;
	}

	full = p.csum == GSO_CSUM_FULL;
	single = s->n_ext == 1;
	ext_pos_init(&c, s);
	for (uint32_t i = 0; i < (uint32_t)n; i++) {
		struct gso_seg_ref *r = &out[i];
		uint32_t pay = seg_pay_len(&p, i);
		uint32_t sum = seg_hdr_write(&p, i, r->hdr);

		r->hdr_len = p.hdr_len;
		r->pay_off = i * p.mss;
		r->pay_len = pay;
		r->ext_idx = 0;
		r->ext_off = 0;
		if (single) {
			/* one extent (the common case): no walk needed */
			r->ext_off = r->pay_off;
			if (full)
				sum = gso_csum_partial((const uint8_t *)s->ext[0].base + r->pay_off, pay,
						       sum);
		} else if (pay) {
			ext_pos_settle(&c);
			r->ext_idx = c.idx;
			r->ext_off = (uint32_t)c.off;
			if (full)
				sum = ext_sum(&c, pay, sum);
			else
				ext_skip(&c, pay);
		}
		if (full)
			seg_csum_store(&p, r->hdr, sum);
		r->csum_start = p.l4_off;
		r->csum_offset = p.csum_off;
	}
	return n;
}
