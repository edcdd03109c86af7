/*
 * A received frame's headers (frame_rx.c; not installed): the one walk
 * of Ethernet, one optional 802.1Q tag and the IPv4 or IPv6 header that
 * the receive path makes, and the checksums it verifies before any flow
 * sees a frame, as the kernel does.  Pure functions, shared by the
 * datagram listeners and the ICMP error parser (engine/) and the stream
 * flows (tcp/).
 */
#ifndef GSO_XDP_FRAME_RX_INTERNAL_H
#define GSO_XDP_FRAME_RX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Where a frame's IP and L4 headers are (`len` bytes from the Ethernet
 * header, behind at most one 802.1Q tag): the one header walk of the
 * receive path, for gsoi_tcp_frame_key(), gsoi_tcp_frame_parse(), the datagram
 * listeners and gsoi_rx_frame_csum().
 */
struct frame_l4 {
	uint32_t ip;     /* offset of the IP header */
	uint32_t l4;     /* offset of the L4 header */
	uint32_t l4_len; /* L4 header and payload, as the IP header says */
	uint16_t vlan;   /* 0x8000 | VLAN ID when tagged, else 0 */
	uint8_t l3;      /* GSO_L3_IPV4 or GSO_L3_IPV6 */
	uint8_t proto;   /* IPv4 protocol or IPv6 next header */
	bool frag;       /* an IPv4 fragment (l4 and l4_len are this fragment's) */
};

/*
 * Returns 0, -ENOENT when the frame is not IPv4 or IPv6, or -EBADMSG when
 * the Ethernet or IP header is cut, the IP header is of another version,
 * or it says lengths the frame does not hold.  On -EBADMSG, out->l3 and
 * out->proto are still set (else 0) when the IP header's fixed part is
 * there, so that a caller can tell a damaged frame of its protocol from
 * one that is none of its business (gsoi_icmp_err_parse()).
 */
int gsoi_frame_l4(const uint8_t *frame, uint32_t len, struct frame_l4 *out);

/* Whether the IPv4 header of a walked frame has a right checksum. */
bool gsoi_frame_ip4_sum_ok(const uint8_t *frame, const struct frame_l4 *w);

/* The pseudo-header's sum for a walked frame's addresses, protocol and L4 length. */
uint32_t gsoi_frame_pseudo(const uint8_t *frame, const struct frame_l4 *w);

/*
 * Whether a walked frame's L4 bytes (w->l4_len from w->l4), with `seed`
 * added (the pseudo-header's sum, or 0 for ICMP over IPv4, which has
 * none), sum to all ones: a right checksum.
 */
bool gsoi_frame_l4_sum_ok(const uint8_t *frame, const struct frame_l4 *w, uint32_t seed);

enum rx_csum {
	RX_CSUM_OK,      /* right (or nothing to check: not IP, a fragment, UDP over IPv4 without one) */
	RX_CSUM_PARTIAL, /* L4 field holds only the folded pseudo-header: a local sender's CHECKSUM_PARTIAL */
	RX_CSUM_BAD,     /* IPv4 header or TCP/UDP checksum wrong, or the lengths do not fit the frame */
};

/* The IPv4 header and TCP/UDP checksums of a frame (`len` bytes from the Ethernet header). */
enum rx_csum gsoi_rx_frame_csum(const uint8_t *frame, uint32_t len);

/* The same for a frame gsoi_frame_l4() walked already (into *w). */
enum rx_csum gsoi_rx_csum_walked(const uint8_t *frame, const struct frame_l4 *w);

#endif
