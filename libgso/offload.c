/*
 * The neutral offload request: what to tell a device about one
 * super-segment, validated as Linux validates a virtio_net_hdr, plus the
 * header preparation shared by the consumers that want the full length in
 * the checksum seed.
 */
#include <errno.h>
#include <string.h>

#include <gso/csum.h>
#include <gso/offload.h>
#include <gso/seg.h>
#include "opts_internal.h"
#include "seg_internal.h"
#include "tmpl_offload_internal.h"
#include "tmpl_wire_internal.h"

/* Linux's GSO_BY_FRAGS: a gso_size value with a special meaning, refused. */
#define GSO_BY_FRAGS_ 0xffffu

/* The template's recorded offsets must describe headers we could have parsed. */
static bool tmpl_sane(const struct gso_tmpl *t)
{
	unsigned l3_len = (unsigned)t->l4_off - t->l3_off;

	if (t->l3_off != ETH_HLEN_ + (t->vlan ? VLAN_HLEN_ : 0u) || t->vlan > 1)
		return false;
	if (t->l4_off <= t->l3_off || t->hdr_len != (unsigned)t->l4_off + t->l4_len ||
	    t->hdr_len > GSO_MAX_HDR_LEN)
		return false;
	if (t->l3 == GSO_L3_IPV4) {
		if (l3_len < 20 || l3_len > 60 || l3_len % 4)
			return false;
	} else if (t->l3 != GSO_L3_IPV6 || l3_len != IP6_HLEN_) {
		return false;
	}
	if (t->l4 == GSO_L4_TCP)
		return t->l4_len >= TCP_HLEN_MIN_ && t->l4_len <= 60 && t->l4_len % 4 == 0;
	return t->l4 == GSO_L4_UDP && t->l4_len == UDP_HLEN_;
}

GSO_API int gso_offload_describe(const struct gso_tmpl *t, uint32_t payload_len,
				 uint32_t mss, uint32_t flags, struct gso_offload_req *r)
{
	struct gso_offload_req o; /* cleared below, sz set by GSO_OUT_PUT */
	bool v4, tcp;
	int n;

	if (!t || !GSO_OUT_VALID(r))
		return -EINVAL;
	/*
	 * What software GSO refuses first, with its errno: a device must
	 * never be handed a super-segment gso_segment() would not cut (a
	 * SYN over seven frames, a fragment, a fixed ID without DF).
	 */
	n = gsoi_seg_rules(t, payload_len, mss, flags & GSO_OFFLOAD_F_UDP_MAX64 ? 64 : 0,
			   flags & GSO_OFFLOAD_F_FIXEDID);
	if (n < 0)
		return n;
	/* Then what only the offload paths refuse. */
	if ((flags & ~GSO_OFFLOAD_F_IN_MASK) || !tmpl_sane(t) || mss >= GSO_BY_FRAGS_)
		return -EINVAL;
	v4 = t->l3 == GSO_L3_IPV4;
	tcp = t->l4 == GSO_L4_TCP;

	memset(&o, 0, sizeof(o));
	o.payload_len = payload_len;
	o.mss = (uint16_t)mss;
	o.hdr_len = t->hdr_len;
	o.l2_len = t->l3_off;
	o.l3_len = (uint8_t)(t->l4_off - t->l3_off);
	o.l4_len = t->l4_len;
	o.csum_start = t->l4_off;
	o.csum_offset = tcp ? GSO_OFFLOAD_CSUM_OFF_TCP : GSO_OFFLOAD_CSUM_OFF_UDP;
	o.flags = flags | (v4 ? GSO_OFFLOAD_F_IPV4 : 0);
	if (tcp && (t->hdr[t->l4_off + TCP_FLAGS_] & GSO_TCP_CWR))
		o.flags |= GSO_OFFLOAD_F_ECN;
	o.segs = (uint32_t)n;
	if (payload_len <= mss)
		o.type = GSO_OFFLOAD_NONE;
	else
		o.type = !tcp ? GSO_OFFLOAD_UDP_L4 : v4 ? GSO_OFFLOAD_TCPV4 : GSO_OFFLOAD_TCPV6;
	GSO_OUT_PUT(r, o);
	return 0;
}

bool gsoi_offload_req_valid(const struct gso_offload_req *r, const struct gso_tmpl *t)
{
	struct gso_offload_req o = { .sz = sizeof(o) };

	if (!r || r->sz < GSOI_OFFLOAD_REQ_MIN_SZ || !t)
		return false;
	if (gso_offload_describe(t, r->payload_len, r->mss, r->flags & GSO_OFFLOAD_F_IN_MASK, &o))
		return false;
	return o.payload_len == r->payload_len && o.segs == r->segs && o.mss == r->mss &&
	       o.hdr_len == r->hdr_len && o.csum_start == r->csum_start &&
	       o.csum_offset == r->csum_offset && o.l2_len == r->l2_len &&
	       o.l3_len == r->l3_len && o.l4_len == r->l4_len && o.type == r->type &&
	       o.flags == r->flags;
}

uint16_t gsoi_offload_pseudo_seed(const uint8_t *h, uint8_t l3, unsigned l3_off, uint8_t proto,
				  uint32_t l4_len)
{
	const uint8_t *ip = h + l3_off;
	uint32_t sum;

	if (l3 == GSO_L3_IPV4)
		sum = gso_csum_pseudo4(ip + IP4_SADDR_, ip + IP4_DADDR_, proto, l4_len);
	else
		sum = gso_csum_pseudo6(ip + IP6_SADDR_, ip + IP6_DADDR_, proto, l4_len);
	return gso_csum_fold(sum);
}

void gsoi_offload_ip4_csum(uint8_t *ip, unsigned ihl)
{
	uint16_t c = 0;

	memcpy(ip + IP4_CHECK_, &c, 2);
	c = gso_csum_finish(gso_csum_partial(ip, ihl, 0));
	memcpy(ip + IP4_CHECK_, &c, 2);
}

void gsoi_offload_prep_full(const struct gso_offload_req *r, const struct gso_tmpl *t, uint8_t *out)
{
	uint8_t *ip = out + r->l2_len, *l4 = out + r->csum_start;
	uint32_t l4_len = r->l4_len + r->payload_len;
	uint16_t seed;

	memcpy(out, t->hdr, r->hdr_len);
	if (t->l3 == GSO_L3_IPV4) {
		put_be16(ip + IP4_TOT_LEN_, (uint16_t)(r->l3_len + l4_len));
		gsoi_offload_ip4_csum(ip, r->l3_len);
	} else {
		put_be16(ip + IP6_PLEN_, (uint16_t)l4_len);
	}
	if (t->l4 == GSO_L4_UDP)
		put_be16(l4 + UDP_LEN_, (uint16_t)l4_len);
	seed = gsoi_offload_pseudo_seed(out, t->l3, r->l2_len, t->l4, l4_len);
	memcpy(l4 + r->csum_offset, &seed, 2);
}
