/*
 * virtio_net_hdr: the descriptor AF_PACKET (PACKET_VNET_HDR) and TAP
 * (IFF_VNET_HDR) take in front of a frame to let the kernel or the NIC
 * segment it.  Little-endian on the wire (AF_PACKET uses vio_le()).
 */
#include <errno.h>
#include <string.h>

#include <gso/offload.h>
#include <gso/seg.h>
#include "tmpl_offload_internal.h"
#include "tmpl_wire_internal.h"

GSO_API int gso_vnet_hdr_encode(const struct gso_vnet_hdr *h, void *out, size_t len)
{
	uint8_t b[GSO_VNET_HDR_V1_LEN];

	if (!h || !out || (len != GSO_VNET_HDR_LEN && len != GSO_VNET_HDR_V1_LEN))
		return -EINVAL;
	if (len == GSO_VNET_HDR_LEN && h->num_buffers)
		return -EINVAL;
	b[0] = h->flags;
	b[1] = h->gso_type;
	put_le16(b + 2, h->hdr_len);
	put_le16(b + 4, h->gso_size);
	put_le16(b + 6, h->csum_start);
	put_le16(b + 8, h->csum_offset);
	put_le16(b + 10, h->num_buffers);
	memcpy(out, b, len);
	return 0;
}

GSO_API int gso_vnet_hdr_decode(const void *in, size_t len, struct gso_vnet_hdr *h)
{
	const uint8_t *b = in;

	if (!in || !h || (len != GSO_VNET_HDR_LEN && len != GSO_VNET_HDR_V1_LEN))
		return -EINVAL;
	h->flags = b[0];
	h->gso_type = b[1];
	h->hdr_len = get_le16(b + 2);
	h->gso_size = get_le16(b + 4);
	h->csum_start = get_le16(b + 6);
	h->csum_offset = get_le16(b + 8);
	h->num_buffers = len == GSO_VNET_HDR_V1_LEN ? get_le16(b + 10) : 0;
	return 0;
}

/* Mirrors virtio_net_hdr_to_skb() (Linux 6.x, after the 2024 nh_min_len
 * fix) and __packet_snd_vnet_parse(); every refusal there is -EINVAL. */
GSO_API int gso_vnet_hdr_check(const struct gso_vnet_hdr *h, size_t frame_len)
{
	unsigned thlen = 0, nh_min = 20, p_off = 0, hdr_len;
	unsigned type;
	bool gso, csum;

	if (!h)
		return -EINVAL;
	type = h->gso_type & ~GSO_VNET_HDR_GSO_ECN;
	gso = h->gso_type != GSO_VNET_HDR_GSO_NONE;
	csum = h->flags & GSO_VNET_HDR_F_NEEDS_CSUM;
	if (gso) {
		switch (type) {
		case GSO_VNET_HDR_GSO_TCPV4:
			thlen = TCP_HLEN_MIN_;
			break;
		case GSO_VNET_HDR_GSO_TCPV6:
			thlen = TCP_HLEN_MIN_;
			nh_min = IP6_HLEN_;
			break;
		case GSO_VNET_HDR_GSO_UDP:
		case GSO_VNET_HDR_GSO_UDP_L4:
			thlen = UDP_HLEN_;
			break;
		default:
			return -EINVAL;
		}
		if (h->gso_size == 0)
			return -EINVAL;
	}
	if (csum) {
		unsigned start = h->csum_start, off = h->csum_offset;
		unsigned need = start + (thlen > off + 2 ? thlen : off + 2);

		if (need > frame_len)
			return -EINVAL;
		if (start < nh_min)
			return -EINVAL;
		p_off = start + thlen;
	} else if (gso) {
		/* Linux dissects the frame here; only the minimum is modelled. */
		p_off = nh_min + thlen;
	}
	if (p_off > frame_len)
		return -EINVAL;
	if (gso) {
		if (type == GSO_VNET_HDR_GSO_UDP_L4) {
			if (!csum || h->csum_offset != GSO_OFFLOAD_CSUM_OFF_UDP)
				return -EINVAL;
			if (frame_len - p_off > (size_t)h->gso_size * GSO_UDP_MAX_SEGS)
				return -EINVAL;
			if (h->gso_type != GSO_VNET_HDR_GSO_UDP_L4)
				return -EINVAL;
		} else if (type != GSO_VNET_HDR_GSO_UDP && csum &&
			   h->csum_offset != GSO_OFFLOAD_CSUM_OFF_TCP) {
			return -EINVAL;
		}
		if (h->gso_size == 0xffff)
			return -EINVAL;
	}
	hdr_len = h->hdr_len;
	if (csum && (unsigned)h->csum_start + h->csum_offset + 2 > hdr_len)
		hdr_len = (unsigned)h->csum_start + h->csum_offset + 2;
	if (hdr_len > frame_len)
		return -EINVAL;
	return 0;
}

GSO_API int gso_offload_vnet(const struct gso_offload_req *r, const struct gso_tmpl *t,
			     struct gso_vnet_hdr *h, void *hdr_out, size_t hdr_cap)
{
	static const uint8_t vtype[] = {
		[GSO_OFFLOAD_NONE] = GSO_VNET_HDR_GSO_NONE,
		[GSO_OFFLOAD_TCPV4] = GSO_VNET_HDR_GSO_TCPV4,
		[GSO_OFFLOAD_TCPV6] = GSO_VNET_HDR_GSO_TCPV6,
		[GSO_OFFLOAD_UDP_L4] = GSO_VNET_HDR_GSO_UDP_L4,
	};
	struct gso_vnet_hdr o;

	if (!h || !hdr_out || !gsoi_offload_req_valid(r, t))
		return -EINVAL;
	if (r->type != GSO_OFFLOAD_NONE && (r->flags & GSO_OFFLOAD_F_FIXEDID))
		return -ENOTSUP;
	if (hdr_cap < r->hdr_len)
		return -ENOBUFS;

	memset(&o, 0, sizeof(o));
	o.flags = GSO_VNET_HDR_F_NEEDS_CSUM;
	o.gso_type = vtype[r->type];
	if (r->type != GSO_OFFLOAD_NONE && r->type != GSO_OFFLOAD_UDP_L4 &&
	    (r->flags & GSO_OFFLOAD_F_ECN))
		o.gso_type |= GSO_VNET_HDR_GSO_ECN;
	o.hdr_len = r->hdr_len;
	o.gso_size = r->type == GSO_OFFLOAD_NONE ? 0 : r->mss;
	o.csum_start = r->csum_start;
	o.csum_offset = r->csum_offset;
	gsoi_offload_prep_full(r, t, hdr_out);
	*h = o;
	return 0;
}
