/*
 * Segmentation internals (not installed), shared by seg.c, seg_tcp.c and
 * seg_udp.c; offload.c uses gsoi_seg_rules() only.  The plan, per
 * super-segment, as gso_segment() and gso_segment_ref() use it:
 *
 *     struct seg_req r;
 *     struct seg_plan p;
 *     int n = gsoi_seg_check(&r, tmpl, payload_len, opts);  // validates
 *     gsoi_seg_plan_fill(&p, &r);                          // if n > 0
 *     for (i = 0; i < n; i++) {
 *         uint32_t sum = seg_hdr_write(&p, i, frame);       // headers, inline
 *         ... place seg_pay_len(&p, i) payload bytes after them; for
 *         GSO_CSUM_FULL add their sum (gso_csum_partial/copy, seeded
 *         with `sum`: the payload starts at an even L4 offset) ...
 *         seg_csum_store(&p, frame, sum);                   // FULL only
 *     }
 *
 * The plan holds everything that is the same for all segments (two header
 * images, the checksum parts), so the per-segment work is a header copy
 * and a handful of stores and ones'-complement adds.
 */
#ifndef SEG_INTERNAL_H
#define SEG_INTERNAL_H

#include <stdbool.h>
#include <string.h>

#include <gso/csum.h>
#include <gso/seg.h>
#include <gso/tmpl.h>

struct seg_plan {
	const struct gso_tmpl *t;
	uint32_t total;     /* payload bytes of the super-segment */
	uint32_t mss;
	uint32_t n;         /* segments, >= 1 */
	uint32_t last_pay;  /* payload bytes of segment n-1 (0 only if total is 0) */
	uint8_t csum;       /* enum gso_csum_mode */
	bool ipid_inc;      /* step the IPv4 ID (IPv4 and GSO_IPID_INC) */
	bool v4, tcp;
	uint8_t hdr_len, l3_off, l4_off;
	uint8_t csum_off;   /* check field offset from l4_off: 16 or 6 */
	uint8_t tcp_flags;  /* template's flags */
	uint16_t ip_id0;    /* host order */
	uint32_t seq0;      /* host order */
	/* Index 0: every segment but the last; index 1: the last one. */
	uint16_t l3_len[2]; /* IPv4 tot_len or IPv6 payload_len */
	uint16_t l4_len[2]; /* L4 header + payload: the pseudo-header length */
	/* IPv4 header partial sum with tot_len filled in, ID and check zero. */
	uint32_t ip_sum[2];
	/*
	 * GSO_CSUM_FULL: pseudo-header + the L4 header words that do not
	 * change between segments (TCP: all but seq and doff/flags; UDP: the
	 * whole header, check as 0).  GSO_CSUM_PARTIAL: 0 (the seed is in
	 * the image).
	 */
	uint32_t l4_sum[2];
	/*
	 * The headers of a non-last and of the last segment with everything
	 * but IPv4 ID, IPv4 checksum and TCP seq (all 0 here) filled in:
	 * lengths, TCP flags without CWR, L4 checksum seed or 0.
	 */
	uint8_t img[2][GSO_MAX_HDR_LEN + 1];
};

/*
 * The rules a super-segment must meet whoever segments it, software or a
 * device: template `t` consistent (offsets inside the header bytes, the
 * header bytes agree with them, not an IPv4 fragment), `mss` 1..65535,
 * the IP datagram of the whole within GSO_MAX_IP_LEN, at most `max_segs`
 * segments (0: GSO_MAX_SEGS for TCP, GSO_UDP_MAX_SEGS for UDP), a fixed
 * IPv4 ID (`fixed_id`) only with DF, SYN and RST only on a TCP
 * super-segment of one segment.  gsoi_seg_check() (gso_segment and friends) and
 * gso_offload_describe() (every offload encoder) both start with it, so
 * that nothing software GSO refuses reaches a device, and the refusal has
 * the same errno on every path.  Returns the segment count (>= 1), or
 * -EINVAL, -EMSGSIZE, -E2BIG.
 */
int gsoi_seg_rules(const struct gso_tmpl *t, size_t total, uint32_t mss, uint32_t max_segs, bool fixed_id);

/* A request that passed gsoi_seg_check(): what the plan is built from. */
struct seg_req {
	const struct gso_tmpl *t;
	uint32_t total;
	uint32_t mss;
	uint32_t n;
	uint8_t csum;  /* enum gso_csum_mode */
	uint8_t ipid;  /* enum gso_ipid_mode */
};

/*
 * Validate tmpl + payload length + options (everything gso_seg_count()
 * checks: the options, then gsoi_seg_rules()) and fill `r`.  Returns the segment count or -errno; `r` is
 * undefined on error.
 */
int gsoi_seg_check(struct seg_req *r, const struct gso_tmpl *t, size_t total,
		   const struct gso_seg_opts *o);

/* Build the plan of a checked request.  `p` keeps a pointer to r->t. */
void gsoi_seg_plan_fill(struct seg_plan *p, const struct seg_req *r);

/* ---- small helpers ---- */

/* A 16-bit word as the checksum code sees it: loaded in memory order. */
static inline uint32_t seg_word(const uint8_t *p)
{
	uint16_t w;

	memcpy(&w, p, 2);
	return w;
}

/* Big-endian stores; the byte swap keeps them one instruction each. */
static inline void seg_put_be16(uint8_t *p, uint16_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap16(v);
#endif
	memcpy(p, &v, 2);
}

static inline void seg_put_be32(uint8_t *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, 4);
}

/*
 * Copy headers (len is 42..255: at least 14 + 20 + 8) with two overlapping
 * fixed-size moves.  A plain memcpy of a length known to be < 256 becomes
 * `rep movs` here, which costs more than the rest of a segment's header
 * work.
 */
static inline void seg_copy_hdr(uint8_t *dst, const uint8_t *src, unsigned len)
{
	if (len <= 64) {
		memcpy(dst, src, 32);
		memcpy(dst + len - 32, src + len - 32, 32);
	} else if (len <= 96) {
		memcpy(dst, src, 64);
		memcpy(dst + len - 32, src + len - 32, 32);
	} else if (len <= 128) {
		memcpy(dst, src, 64);
		memcpy(dst + len - 64, src + len - 64, 64);
	} else {
		memcpy(dst, src, 128);
		memcpy(dst + len - 128, src + len - 128, 128);
	}
}

/* ---- per segment ---- */

static inline bool seg_is_last(const struct seg_plan *p, uint32_t i)
{
	return i + 1 == p->n;
}

static inline uint32_t seg_pay_len(const struct seg_plan *p, uint32_t i)
{
	return seg_is_last(p, i) ? p->last_pay : p->mss;
}

/* Frame length of segment i (headers + payload). */
static inline uint32_t seg_frame_len(const struct seg_plan *p, uint32_t i)
{
	return p->hdr_len + seg_pay_len(p, i);
}

#define SEG_TCP_SEQ 4u
#define SEG_TCP_FLAGS_WORD 12u
#define SEG_TCP_FLAGS 13u
#define SEG_TCP_CHECK 16u
#define SEG_UDP_LEN 4u
#define SEG_UDP_CHECK 6u

/*
 * TCP fields of segment i over the image: seq advances by MSS, CWR goes
 * back on the first segment (FIN/PSH are already right in the image).
 * Returns what seg_hdr_write() returns.
 */
static inline uint32_t seg_tcp_fix(const struct seg_plan *p, uint32_t i, bool last, uint8_t *l4)
{
	uint32_t seq;

	if (i == 0)
		l4[SEG_TCP_FLAGS] |= p->tcp_flags & GSO_TCP_CWR;
	seg_put_be32(l4 + SEG_TCP_SEQ, p->seq0 + i * p->mss);
	if (p->csum == GSO_CSUM_PARTIAL)
		return 0;
	/* A 32-bit word adds like its two halves: 2^16 == 1 (mod 0xffff). */
	memcpy(&seq, l4 + SEG_TCP_SEQ, 4);
	return gso_csum_add(gso_csum_add(p->l4_sum[last], seq), seg_word(l4 + SEG_TCP_FLAGS_WORD));
}

/*
 * Write segment i's headers (p->hdr_len bytes) at `dst`.  GSO_CSUM_PARTIAL:
 * the L4 check field gets the seed and the return value is 0.
 * GSO_CSUM_FULL: the check field is left 0 and the return value is the
 * partial sum of pseudo-header + L4 header, to which the caller adds the
 * payload's sum before seg_csum_store().  Inline because it is the whole
 * per-segment cost of the header+reference form.
 */
static inline uint32_t seg_hdr_write(const struct seg_plan *p, uint32_t i, void *dst)
{
	uint8_t *h = dst;
	bool last = seg_is_last(p, i);

	seg_copy_hdr(h, p->img[last], p->hdr_len);
	if (p->v4) {
		uint8_t *ip = h + p->l3_off;
		uint16_t check;

		seg_put_be16(ip + 4, (uint16_t)(p->ip_id0 + (p->ipid_inc ? i : 0)));
		check = gso_csum_finish(gso_csum_add(p->ip_sum[last], seg_word(ip + 4)));
		memcpy(ip + 10, &check, 2);
	}
	if (p->tcp)
		return seg_tcp_fix(p, i, last, h + p->l4_off);
	return p->l4_sum[last];
}

/*
 * GSO_CSUM_FULL: complete the L4 checksum of the headers at `hdr` from the
 * partial sum of pseudo-header + L4 header + payload.  Applies Linux's
 * zero rule: UDP and single-segment TCP send 0xffff for a computed 0,
 * segmented TCP sends 0x0000.
 */
static inline void seg_csum_store(const struct seg_plan *p, void *hdr, uint32_t sum)
{
	uint16_t c = gso_csum_finish(sum);

	if (c == 0 && (!p->tcp || p->n == 1))
		c = 0xffff;
	memcpy((uint8_t *)hdr + p->l4_off + p->csum_off, &c, 2);
}

/* ---- a super-segment that makes one segment ---- */

/*
 * Sum of `len` bytes at `p`, len a multiple of 4 and at most 60 (IPv4
 * header, TCP header, IPv6 addresses): congruent to the sum of its 16-bit
 * words and zero only when the bytes are.
 */
static inline uint32_t seg_sum32(const uint8_t *p, unsigned len)
{
	uint64_t s = 0;

	for (unsigned k = 0; k < len; k += 4) {
		uint32_t w;

		memcpy(&w, p + k, 4);
		s += w;
	}
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	return (uint32_t)s;
}

/* A host-order 16-bit value as the memory-order word it becomes on the wire. */
static inline uint32_t seg_be16_word(uint16_t v)
{
	uint8_t b[2];

	seg_put_be16(b, v);
	return seg_word(b);
}

/* Pseudo-header partial sum for the IP header at `ip` and `l4_len`. */
static inline uint32_t seg_pseudo_ip(const uint8_t *ip, bool v4, uint8_t proto, uint16_t l4_len)
{
	uint32_t s = v4 ? seg_sum32(ip + 12, 8) : seg_sum32(ip + 8, 32);

	return gso_csum_add(s, seg_be16_word(proto) + seg_be16_word(l4_len));
}

/*
 * Headers of the only segment of a checked request (r->n == 1) at `dst`:
 * what seg_hdr_write() writes for segment 0 of 1, without a plan.  The
 * template's ID, seq and flags stand as they are (CWR is on the first
 * segment, FIN/PSH on the last: both are this one), so only lengths and
 * checksums change.  Returns as seg_hdr_write(); finish a FULL checksum
 * with seg_one_csum_store().  For small frames the plan (two header images,
 * four checksum calls) costs more than everything else together.
 */
static inline uint32_t seg_one_hdr(const struct seg_req *r, void *dst)
{
	const struct gso_tmpl *t = r->t;
	uint8_t *h = dst, *ip = h + t->l3_off, *l4 = h + t->l4_off;
	uint16_t l4_len = (uint16_t)(t->l4_len + r->total);
	bool tcp = t->l4 == GSO_L4_TCP;
	unsigned coff = tcp ? SEG_TCP_CHECK : SEG_UDP_CHECK;
	uint32_t ph;

	seg_copy_hdr(h, t->hdr, t->hdr_len);
	if (t->l3 == GSO_L3_IPV4) {
		unsigned ihl = (unsigned)t->l4_off - t->l3_off;
		uint16_t c;

		seg_put_be16(ip + 2, (uint16_t)(ihl + l4_len));
		memset(ip + 10, 0, 2);
		c = gso_csum_finish(seg_sum32(ip, ihl));
		memcpy(ip + 10, &c, 2);
	} else {
		seg_put_be16(ip + 4, l4_len);
	}
	ph = seg_pseudo_ip(ip, t->l3 == GSO_L3_IPV4, t->l4, l4_len);
	if (!tcp)
		seg_put_be16(l4 + SEG_UDP_LEN, l4_len);
	if (r->csum == GSO_CSUM_PARTIAL) {
		uint16_t seed = gso_csum_fold(ph);

		memcpy(l4 + coff, &seed, 2);
		return 0;
	}
	memset(l4 + coff, 0, 2);
	return gso_csum_add(ph, seg_sum32(l4, t->l4_len));
}

/* seg_csum_store() for the only segment: a computed 0 is sent as 0xffff. */
static inline void seg_one_csum_store(const struct seg_req *r, void *hdr, uint32_t sum)
{
	uint16_t c = gso_csum_finish(sum);

	if (c == 0)
		c = 0xffff;
	memcpy((uint8_t *)hdr + r->t->l4_off +
		       (r->t->l4 == GSO_L4_TCP ? SEG_TCP_CHECK : SEG_UDP_CHECK),
	       &c, 2);
}

/* ---- once per super-segment ---- */

/* Pseudo-header partial sum of the template's addresses with `l4_len`. */
static inline uint32_t seg_pseudo(const struct seg_plan *p, uint32_t l4_len)
{
	return seg_pseudo_ip(p->t->hdr + p->l3_off, p->v4, p->tcp ? GSO_L4_TCP : GSO_L4_UDP,
			     (uint16_t)l4_len);
}

/*
 * Per protocol (seg_tcp.c, seg_udp.c): fill csum_off, the L4 fields and
 * l4_sum[] of a plan whose generic part is set (gsoi_seg_check() has refused
 * what cannot be segmented).
 */
void gsoi_seg_tcp_plan(struct seg_plan *p);
void gsoi_seg_udp_plan(struct seg_plan *p);

#endif
