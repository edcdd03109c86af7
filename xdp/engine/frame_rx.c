/*
 * A received frame's headers and checksums (frame_rx_internal.h): the
 * walk of Ethernet, 802.1Q and IP, and the IPv4 header's and the TCP or
 * UDP checksum over the pseudo-header, with the project's checksum code
 * (gso/csum.h).  Pure.
 */
#include "frame_rx_internal.h"

#include <errno.h>
#include <string.h>

#include <gso/csum.h>
#include <gso/tmpl.h>

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

int gsoi_frame_l4(const uint8_t *f, uint32_t len, struct frame_l4 *o)
{
	uint32_t off = 14;
	uint16_t et;

	memset(o, 0, sizeof(*o));
	if (len < 14)
		return -EBADMSG;
	et = get16(f + 12);
	if (et == 0x8100) {
		if (len < 18)
			return -EBADMSG;
		et = get16(f + 16);
		off = 18;
		o->vlan = (uint16_t)(0x8000 | (get16(f + 14) & 0xfff));
	}
	o->ip = off;
	if (et == 0x0800) {
		const uint8_t *ip = f + off;
		unsigned ihl, tot;

		if (len < off + 20 || (ip[0] >> 4) != 4)
			return -EBADMSG;
		o->l3 = GSO_L3_IPV4;
		o->proto = ip[9];
		ihl = (ip[0] & 15) * 4u;
		tot = get16(ip + 2);
		if (ihl < 20 || tot < ihl || off + tot > len)
			return -EBADMSG;
		o->frag = (get16(ip + 6) & 0x3fff) != 0;
		o->l4 = off + ihl;
		o->l4_len = tot - ihl;
	} else if (et == 0x86dd) {
		const uint8_t *ip = f + off;

		if (len < off + 40 || (ip[0] >> 4) != 6)
			return -EBADMSG;
		o->l3 = GSO_L3_IPV6;
		o->proto = ip[6];
		if (off + 40 + get16(ip + 4) > len)
			return -EBADMSG;
		o->l4 = off + 40;
		o->l4_len = get16(ip + 4);
	} else {
		return -ENOENT;
	}
	return 0;
}

enum rx_csum gsoi_rx_frame_csum(const uint8_t *f, uint32_t len)
{
	struct frame_l4 w;
	int err = gsoi_frame_l4(f, len, &w);

	if (err)
		return err == -ENOENT ? RX_CSUM_OK : RX_CSUM_BAD; /* not IP: nothing of ours to check */
	return gsoi_rx_csum_walked(f, &w);
}

enum rx_csum gsoi_rx_csum_walked(const uint8_t *f, const struct frame_l4 *wp)
{
	const struct frame_l4 w = *wp;
	uint32_t seed;
	uint16_t field, want;

	if (w.l3 == GSO_L3_IPV4) {
		if (!gsoi_frame_ip4_sum_ok(f, &w))
			return RX_CSUM_BAD;
		if (w.frag)
			return RX_CSUM_OK; /* a fragment: its L4 checksum covers the whole datagram */
	}
	seed = gsoi_frame_pseudo(f, &w);
	if (w.proto == 6 && w.l4_len >= 20)
		memcpy(&field, f + w.l4 + 16, 2);
	else if (w.proto == 17 && w.l4_len >= 8)
		memcpy(&field, f + w.l4 + 6, 2);
	else
		return w.proto == 6 || w.proto == 17 ? RX_CSUM_BAD : RX_CSUM_OK;
	/* UDP over IPv4 may go without a checksum (RFC 768); over IPv6 it may not (RFC 8200 8.1). */
	if (w.proto == 17 && !field)
		return w.l3 == GSO_L3_IPV4 ? RX_CSUM_OK : RX_CSUM_BAD;
	if (gsoi_frame_l4_sum_ok(f, &w, seed))
		return RX_CSUM_OK;
	/*
	 * The folded pseudo-header alone is what a Linux sender on this host
	 * leaves in the field for the device to finish (CHECKSUM_PARTIAL); a
	 * veth hands such a frame to XDP as it is.
	 */
	want = gso_csum_fold(seed);
	return field == want ? RX_CSUM_PARTIAL : RX_CSUM_BAD;
}

bool gsoi_frame_ip4_sum_ok(const uint8_t *f, const struct frame_l4 *w)
{
	/* The header's sum, its checksum included, folds to all ones. */
	return gso_csum_fold(gso_csum_partial(f + w->ip, w->l4 - w->ip, 0)) == 0xffff;
}

uint32_t gsoi_frame_pseudo(const uint8_t *f, const struct frame_l4 *w)
{
	const uint8_t *ip = f + w->ip;

	if (w->l3 == GSO_L3_IPV4)
		return gso_csum_pseudo4(ip + 12, ip + 16, w->proto, w->l4_len);
	return gso_csum_pseudo6(ip + 8, ip + 24, w->proto, w->l4_len);
}

bool gsoi_frame_l4_sum_ok(const uint8_t *f, const struct frame_l4 *w, uint32_t seed)
{
	return gso_csum_fold(gso_csum_partial(f + w->l4, w->l4_len, seed)) == 0xffff;
}
