/*
 * AF_XDP transmit metadata (struct xsk_tx_metadata, 24 bytes since Linux
 * 6.15, placed tx_metadata_len bytes before the packet in the UMEM; the
 * layout and the encoder are in offload_xsk_internal.h) and the per-frame
 * checksum seed the CHECKSUM request needs.
 */
#include <errno.h>
#include <string.h>

#include <gso/offload.h>
#include "offload_xsk_internal.h"
#include "tmpl_offload_internal.h"
#include "tmpl_wire_internal.h"

GSO_API int gso_xsk_txmd_encode(const struct gso_xsk_txmd *m, void *out)
{
	/* Unknown flags make the kernel fail the whole send (EINVAL). */
	if (!m || !out || (m->flags & ~GSO_XSK_TXMD_KNOWN) || m->reserved)
		return -EINVAL;
	gsoi_xsk_txmd_put(m, out, true);
	return 0;
}

GSO_API int gso_xsk_txmd_decode(const void *in, struct gso_xsk_txmd *m)
{
	const uint8_t *b = in;

	if (!in || !m)
		return -EINVAL;
	m->flags = get_le64(b);
	m->csum_start = get_le16(b + 8);
	m->csum_offset = get_le16(b + 10);
	m->reserved = get_le32(b + 12);
	m->launch_time = get_le64(b + 16);
	return 0;
}

GSO_API int gso_offload_xsk(const struct gso_offload_req *r, const struct gso_tmpl *t,
			    uint64_t launch_time_ns, struct gso_xsk_txmd *m,
			    void *hdr_out, size_t hdr_cap)
{
	struct gso_xsk_txmd o;

	if (!m || !hdr_out || !gsoi_offload_req_valid(r, t))
		return -EINVAL;
	/* Mainline AF_XDP has checksum, timestamp and launch-time offloads,
	 * no segmentation. */
	if (r->type != GSO_OFFLOAD_NONE)
		return -ENOTSUP;
	if (hdr_cap < r->hdr_len)
		return -ENOBUFS;
	memset(&o, 0, sizeof(o));
	o.flags = GSO_XSK_TXMD_CHECKSUM | (launch_time_ns ? GSO_XSK_TXMD_LAUNCH_TIME : 0);
	o.csum_start = r->csum_start;
	o.csum_offset = r->csum_offset;
	o.launch_time = launch_time_ns;
	gsoi_offload_prep_full(r, t, hdr_out);
	*m = o;
	return 0;
}

GSO_API int gso_offload_seed_frame(const struct gso_tmpl *t, void *frame, size_t len,
				   uint16_t *csum_start, uint16_t *csum_offset)
{
	uint8_t *f = frame, *ip;
	size_t l3_len, ip_len;
	uint16_t seed, off;

	if (!t || !frame || (t->l3 != GSO_L3_IPV4 && t->l3 != GSO_L3_IPV6) ||
	    (t->l4 != GSO_L4_TCP && t->l4 != GSO_L4_UDP) || t->l4_off <= t->l3_off ||
	    t->hdr_len < t->l4_off + (t->l4 == GSO_L4_TCP ? TCP_HLEN_MIN_ : UDP_HLEN_) ||
	    t->l3_off < ETH_HLEN_)
		return -EINVAL;
	if (len < t->hdr_len)
		return -ENODATA;
	ip = f + t->l3_off;
	l3_len = (size_t)t->l4_off - t->l3_off;
	/* The frame is trusted for nothing but the fields read here: a
	 * frame that does not match the template is refused, not seeded. */
	if (t->l3 == GSO_L3_IPV4) {
		if (get_be16(ip - 2) != ETHERTYPE_IPV4_ || ip[0] != (0x40 | l3_len / 4) ||
		    ip[IP4_PROTO_] != t->l4)
			return -EBADMSG;
		ip_len = get_be16(ip + IP4_TOT_LEN_);
	} else {
		if (get_be16(ip - 2) != ETHERTYPE_IPV6_ || ip[0] >> 4 != 6 || ip[IP6_NEXT_] != t->l4)
			return -EBADMSG;
		ip_len = IP6_HLEN_ + (size_t)get_be16(ip + IP6_PLEN_);
	}
	if (ip_len < l3_len + t->l4_len || t->l3_off + ip_len > len)
		return -EBADMSG;

	off = t->l4 == GSO_L4_TCP ? GSO_OFFLOAD_CSUM_OFF_TCP : GSO_OFFLOAD_CSUM_OFF_UDP;
	seed = gsoi_offload_pseudo_seed(f, t->l3, t->l3_off, t->l4, (uint32_t)(ip_len - l3_len));
	memcpy(f + t->l4_off + off, &seed, 2);
	if (csum_start)
		*csum_start = t->l4_off;
	if (csum_offset)
		*csum_offset = off;
	return 0;
}
