/*
 * Checksums of a received frame (see engine_tcp_internal.h): the IPv4
 * header's, and the TCP or UDP checksum over the pseudo-header, with the
 * project's checksum code (gso/csum.h).  Pure.
 */
#include "engine_tcp_internal.h"

#include <string.h>

#include <gso/csum.h>

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

enum rx_csum rx_frame_csum(const uint8_t *f, uint32_t len)
{
	uint32_t off = 14, l4, l4_len, seed;
	const uint8_t *ip;
	uint16_t et, field, want;
	uint8_t proto;

	if (len < 14)
		return RX_CSUM_BAD;
	et = get16(f + 12);
	if (et == 0x8100) {
		if (len < 18)
			return RX_CSUM_BAD;
		et = get16(f + 16);
		off = 18;
	}
	ip = f + off;
	if (et == 0x0800) {
		unsigned ihl, tot;

		if (len < off + 20)
			return RX_CSUM_BAD;
		ihl = (ip[0] & 15) * 4u;
		tot = get16(ip + 2);
		if (ihl < 20 || tot < ihl || off + tot > len)
			return RX_CSUM_BAD;
		/* The IPv4 header's sum, its checksum included, folds to all ones. */
		if (gso_csum_fold(gso_csum_partial(ip, ihl, 0)) != 0xffff)
			return RX_CSUM_BAD;
		proto = ip[9];
		l4 = off + ihl;
		l4_len = tot - ihl;
		if (get16(ip + 6) & 0x3fff)
			return RX_CSUM_OK; /* a fragment: its L4 checksum covers the whole datagram */
		seed = gso_csum_pseudo4(ip + 12, ip + 16, proto, l4_len);
	} else if (et == 0x86dd) {
		if (len < off + 40)
			return RX_CSUM_BAD;
		proto = ip[6];
		l4 = off + 40;
		l4_len = get16(ip + 4);
		if (l4 + l4_len > len)
			return RX_CSUM_BAD;
		seed = gso_csum_pseudo6(ip + 8, ip + 24, proto, l4_len);
	} else {
		return RX_CSUM_OK; /* nothing of ours to check */
	}
	if (proto == 6 && l4_len >= 20)
		memcpy(&field, f + l4 + 16, 2);
	else if (proto == 17 && l4_len >= 8)
		memcpy(&field, f + l4 + 6, 2);
	else
		return proto == 6 || proto == 17 ? RX_CSUM_BAD : RX_CSUM_OK;
	/* UDP over IPv4 may go without a checksum (RFC 768); over IPv6 it may not (RFC 8200 8.1). */
	if (proto == 17 && !field)
		return et == 0x0800 ? RX_CSUM_OK : RX_CSUM_BAD;
	if (gso_csum_fold(gso_csum_partial(f + l4, l4_len, seed)) == 0xffff)
		return RX_CSUM_OK;
	/*
	 * The folded pseudo-header alone is what a Linux sender on this host
	 * leaves in the field for the device to finish (CHECKSUM_PARTIAL); a
	 * veth hands such a frame to XDP as it is.
	 */
	want = gso_csum_fold(seed);
	return field == want ? RX_CSUM_PARTIAL : RX_CSUM_BAD;
}
