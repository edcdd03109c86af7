/*
 * Checksums of a received frame (see engine_tcp_internal.h): the IPv4
 * header's, and the TCP or UDP checksum over the pseudo-header, with the
 * project's checksum code (gso/csum.h), behind the receive path's one
 * header walk (gsoi_frame_l4).  Pure.
 */
#include "engine_tcp_internal.h"

#include <errno.h>
#include <string.h>

#include <gso/csum.h>
#include <gso/tmpl.h>

enum rx_csum gsoi_rx_frame_csum(const uint8_t *f, uint32_t len)
{
	struct frame_l4 w;
	const uint8_t *ip;
	uint32_t seed;
	uint16_t field, want;
	int err = gsoi_frame_l4(f, len, &w);

	if (err)
		return err == -ENOENT ? RX_CSUM_OK : RX_CSUM_BAD; /* not IP: nothing of ours to check */
	ip = f + w.ip;
	if (w.l3 == GSO_L3_IPV4) {
		/* The IPv4 header's sum, its checksum included, folds to all ones. */
		if (gso_csum_fold(gso_csum_partial(ip, w.l4 - w.ip, 0)) != 0xffff)
			return RX_CSUM_BAD;
		if (w.frag)
			return RX_CSUM_OK; /* a fragment: its L4 checksum covers the whole datagram */
		seed = gso_csum_pseudo4(ip + 12, ip + 16, w.proto, w.l4_len);
	} else {
		seed = gso_csum_pseudo6(ip + 8, ip + 24, w.proto, w.l4_len);
	}
	if (w.proto == 6 && w.l4_len >= 20)
		memcpy(&field, f + w.l4 + 16, 2);
	else if (w.proto == 17 && w.l4_len >= 8)
		memcpy(&field, f + w.l4 + 6, 2);
	else
		return w.proto == 6 || w.proto == 17 ? RX_CSUM_BAD : RX_CSUM_OK;
	/* UDP over IPv4 may go without a checksum (RFC 768); over IPv6 it may not (RFC 8200 8.1). */
	if (w.proto == 17 && !field)
		return w.l3 == GSO_L3_IPV4 ? RX_CSUM_OK : RX_CSUM_BAD;
	if (gso_csum_fold(gso_csum_partial(f + w.l4, w.l4_len, seed)) == 0xffff)
		return RX_CSUM_OK;
	/*
	 * The folded pseudo-header alone is what a Linux sender on this host
	 * leaves in the field for the device to finish (CHECKSUM_PARTIAL); a
	 * veth hands such a frame to XDP as it is.
	 */
	want = gso_csum_fold(seed);
	return field == want ? RX_CSUM_PARTIAL : RX_CSUM_BAD;
}
