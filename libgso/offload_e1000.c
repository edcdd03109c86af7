/*
 * Intel 8254x (e1000) transmit descriptors: the TCP/IP context descriptor
 * that programs checksum insertion and TCP segmentation, and the data
 * descriptors that point at the packet's buffers.  16 bytes each,
 * little-endian; layout from Linux e1000_hw.h (struct e1000_context_desc,
 * struct e1000_tx_desc).
 *
 *   context: 0 IPCSS | 1 IPCSO | 2-3 IPCSE | 4 TUCSS | 5 TUCSO | 6-7 TUCSE |
 *            8-11 PAYLEN(0..19) DTYP=0(20..23) TUCMD(24..31) | 12 STA |
 *            13 HDRLEN | 14-15 MSS
 *   data:    0-7 address | 8-11 length(0..19) DTYP=1(20..23) DCMD(24..31) |
 *            12 STA | 13 POPTS | 14-15 special (VLAN)
 */
#include <errno.h>
#include <string.h>

#include <gso/offload.h>
#include "tmpl_offload_internal.h"
#include "tmpl_wire_internal.h"

#define DTYP_SHIFT 20
#define DTYP_CONTEXT 0u
#define DTYP_DATA 1u
#define CMD_SHIFT 24

/*
 * [addr, addr + len) runs past the top of the 64-bit address space: the
 * device's DMA would wrap to address 0.  A buffer may end exactly at 2^64.
 */
static bool buf_wraps(uint64_t addr, uint32_t len)
{
	return len && (uint64_t)len - 1 > UINT64_MAX - addr;
}

GSO_API enum gso_e1000_kind gso_e1000_desc_kind(const void *desc)
{
	uint32_t w;

	/* No error to return: NULL gets the kind no device takes. */
	if (!desc)
		return GSO_E1000_RESERVED;
	w = get_le32((const uint8_t *)desc + 8);
	if (!(w >> CMD_SHIFT & GSO_E1000_CMD_DEXT))
		return GSO_E1000_LEGACY;
	switch (w >> DTYP_SHIFT & 0xf) {
	case DTYP_CONTEXT:
		return GSO_E1000_CONTEXT;
	case DTYP_DATA:
		return GSO_E1000_DATA;
	default:
		return GSO_E1000_RESERVED;
	}
}

GSO_API int gso_e1000_ctx_encode(const struct gso_e1000_ctx *c, void *out)
{
	uint8_t b[GSO_E1000_DESC_LEN];

	if (!c || !out || !(c->tucmd & GSO_E1000_CMD_DEXT) || c->paylen > GSO_E1000_MAX_LEN)
		return -EINVAL;
	b[0] = c->ipcss;
	b[1] = c->ipcso;
	put_le16(b + 2, c->ipcse);
	b[4] = c->tucss;
	b[5] = c->tucso;
	put_le16(b + 6, c->tucse);
	put_le32(b + 8, c->paylen | DTYP_CONTEXT << DTYP_SHIFT | (uint32_t)c->tucmd << CMD_SHIFT);
	b[12] = c->sta;
	b[13] = c->hdr_len;
	put_le16(b + 14, c->mss);
	memcpy(out, b, sizeof(b));
	return 0;
}

GSO_API int gso_e1000_ctx_decode(const void *in, struct gso_e1000_ctx *c)
{
	const uint8_t *b = in;
	uint32_t w;

	if (!in || !c || gso_e1000_desc_kind(in) != GSO_E1000_CONTEXT)
		return -EINVAL;
	w = get_le32(b + 8);
	c->ipcss = b[0];
	c->ipcso = b[1];
	c->ipcse = get_le16(b + 2);
	c->tucss = b[4];
	c->tucso = b[5];
	c->tucse = get_le16(b + 6);
	c->paylen = w & GSO_E1000_MAX_LEN;
	c->tucmd = (uint8_t)(w >> CMD_SHIFT);
	c->sta = b[12];
	c->hdr_len = b[13];
	c->mss = get_le16(b + 14);
	return 0;
}

GSO_API int gso_e1000_data_encode(const struct gso_e1000_data *d, void *out)
{
	uint8_t b[GSO_E1000_DESC_LEN];

	if (!d || !out || !(d->dcmd & GSO_E1000_CMD_DEXT) || d->len > GSO_E1000_MAX_LEN)
		return -EINVAL;
	if (buf_wraps(d->addr, d->len))
		return -EOVERFLOW;
	put_le64(b, d->addr);
	put_le32(b + 8, d->len | DTYP_DATA << DTYP_SHIFT | (uint32_t)d->dcmd << CMD_SHIFT);
	b[12] = d->sta;
	b[13] = d->popts;
	put_le16(b + 14, d->special);
	memcpy(out, b, sizeof(b));
	return 0;
}

GSO_API int gso_e1000_data_decode(const void *in, struct gso_e1000_data *d)
{
	const uint8_t *b = in;
	uint32_t w;

	if (!in || !d || gso_e1000_desc_kind(in) != GSO_E1000_DATA)
		return -EINVAL;
	w = get_le32(b + 8);
	d->addr = get_le64(b);
	d->len = w & GSO_E1000_MAX_LEN;
	d->dcmd = (uint8_t)(w >> CMD_SHIFT);
	d->sta = b[12];
	d->popts = b[13];
	d->special = get_le16(b + 14);
	return 0;
}

static bool is_tso(const struct gso_offload_req *r)
{
	return r->type != GSO_OFFLOAD_NONE;
}

GSO_API int gso_offload_e1000(const struct gso_offload_req *r, const struct gso_tmpl *t,
			      struct gso_e1000_ctx *c, void *hdr_out, size_t hdr_cap)
{
	struct gso_e1000_ctx o;
	uint8_t *h = hdr_out;
	bool tcp;

	if (!c || !hdr_out || !gsoi_offload_req_valid(r, t))
		return -EINVAL;
	/* The engine segments IPv4 only (Linux e1000: NETIF_F_TSO, no TSO6)
	 * and always steps the IPv4 ID.  CWR is not refused here: the
	 * engine keeping it on every frame is a policy question for the
	 * caller, not a layout one. */
	if (is_tso(r) && (!(r->flags & GSO_OFFLOAD_F_IPV4) || (r->flags & GSO_OFFLOAD_F_FIXEDID)))
		return -ENOTSUP;
	if (hdr_cap < r->hdr_len)
		return -ENOBUFS;

	tcp = t->l4 == GSO_L4_TCP;
	memset(&o, 0, sizeof(o));
	o.tucss = (uint8_t)r->csum_start;
	o.tucso = (uint8_t)(r->csum_start + r->csum_offset);
	o.tucse = 0;
	o.tucmd = GSO_E1000_CMD_DEXT | (tcp ? GSO_E1000_TUCMD_TCP : 0);
	if (!is_tso(r)) {
		/* Checksum offload only: the device adds no length, so the
		 * seed must already hold it. */
		gsoi_offload_prep_full(r, t, h);
		*c = o;
		return 0;
	}

	o.ipcss = r->l2_len;
	o.ipcso = (uint8_t)(r->l2_len + IP4_CHECK_);
	o.ipcse = (uint16_t)(r->csum_start - 1);
	o.tucmd |= GSO_E1000_CMD_TSE | GSO_E1000_TUCMD_IP;
	o.paylen = r->payload_len;
	o.hdr_len = (uint8_t)r->hdr_len;
	o.mss = r->mss;

	/* The device writes tot_len per frame and checksums the IP header
	 * without clearing the field first; it adds each frame's L4 length
	 * to the seed itself, so the seed carries none. */
	memcpy(h, t->hdr, r->hdr_len);
	put_be16(h + r->l2_len + IP4_TOT_LEN_, 0);
	put_be16(h + r->l2_len + IP4_CHECK_, 0);
	uint16_t seed = gsoi_offload_pseudo_seed(h, t->l3, r->l2_len, t->l4, 0);
	memcpy(h + r->csum_start + r->csum_offset, &seed, 2);
	*c = o;
	return 0;
}

GSO_API int gso_offload_e1000_data(const struct gso_offload_req *r, uint64_t addr,
				   uint32_t len, bool eop, uint32_t max_per_desc,
				   struct gso_e1000_data *out, unsigned n_out)
{
	uint32_t n, off = 0;
	uint8_t dcmd, popts;

	if (!r || r->sz < GSOI_OFFLOAD_REQ_MIN_SZ || !out || len == 0 || max_per_desc > GSO_E1000_MAX_PER_DESC ||
	    r->type > GSO_OFFLOAD_UDP_L4)
		return -EINVAL;
	if (buf_wraps(addr, len))
		return -EOVERFLOW;
	if (max_per_desc == 0)
		max_per_desc = GSO_E1000_MAX_PER_DESC;
	n = len / max_per_desc + (len % max_per_desc != 0);
	if (n > n_out)
		return -ENOSPC;

	dcmd = GSO_E1000_CMD_DEXT | GSO_E1000_CMD_IFCS;
	popts = GSO_E1000_POPTS_TXSM;
	if (is_tso(r)) {
		dcmd |= GSO_E1000_CMD_TSE;
		if (r->flags & GSO_OFFLOAD_F_IPV4)
			popts |= GSO_E1000_POPTS_IXSM;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t piece = len - off < max_per_desc ? len - off : max_per_desc;

		memset(&out[i], 0, sizeof(out[i]));
		out[i].addr = addr + off;
		out[i].len = piece;
		out[i].dcmd = dcmd;
		out[i].popts = popts;
		off += piece;
	}
	if (eop)
		out[n - 1].dcmd |= GSO_E1000_CMD_EOP | GSO_E1000_CMD_RS;
	return (int)n;
}
