/*
 * The impair relay's `--mtu N` (bench/testbed/impair.c): judge a frame
 * against a next hop of MTU N, and build the ICMP error a router sends
 * back for a packet it cannot forward (RFC 1191 / RFC 1812 for IPv4,
 * RFC 4443 for IPv6).  Pure computation on the relay's buffers: a frame
 * here is a struct virtio_net_hdr followed by the Ethernet frame, as an
 * AF_PACKET socket with PACKET_VNET_HDR reads and writes it.
 *
 * A GSO frame (gso_type != NONE) is judged by the first segment the
 * kernel would cut it into (its headers plus gso_size bytes, or fewer
 * when the unit carries less), and the error quotes that segment as a
 * router would have received it: IP total / payload length of the
 * segment, IPv4 header checksum recomputed, TCP FIN and PSH cleared when
 * more segments follow, the unit's first sequence number, and the L4
 * checksum completed (a checksum-partial frame, GSO or not, carries only
 * the pseudo-header sum, which no router ever sees).
 */
#ifndef BENCH_MTU_ICMP_H
#define BENCH_MTU_ICMP_H

#include <stdbool.h>
#include <stdint.h>

/* Where the error's IP source comes from. */
struct bench_mtu_src {
	bool has4, has6;    /* false: the dropped packet's destination address */
	uint8_t addr4[4];   /* --mtu-src, network order */
	uint8_t addr6[16];  /* --mtu-src6 */
};

enum bench_mtu_verdict {
	BENCH_MTU_PASS = 0,  /* fits (or not IP): forward it */
	BENCH_MTU_ICMP,      /* too big; a router answers it with an ICMP error */
	BENCH_MTU_SILENT,    /* too big; no error is allowed about it (an ICMP error, a non-first
			      * fragment, a non-unicast source, an IPv4 multicast or broadcast) */
	BENCH_MTU_NO_DF,     /* IPv4 without DF, too big: a router would fragment it */
};

/* Largest frame bench_mtu_icmp_build() writes (vnet header, 802.1Q, IPv6, 1280 bytes). */
#define BENCH_MTU_ICMP_MAX (10 + 18 + 1280)

/*
 * Judge `frame` (`len` bytes, vnet header included) against next-hop MTU
 * `mtu`.  IPv4 is judged by its total length, IPv6 by 40 + payload
 * length, a GSO unit by its first segment (see above).
 */
enum bench_mtu_verdict bench_mtu_judge(const uint8_t *frame, uint32_t len, uint32_t mtu);

/*
 * Write into `out` (at least BENCH_MTU_ICMP_MAX bytes) the frame that
 * answers `frame`, which bench_mtu_judge() found BENCH_MTU_ICMP: vnet
 * header (no offload), Ethernet with the addresses swapped and the same
 * 802.1Q tag, IP from `src` (or the packet's destination) to the packet's
 * source with TTL / hop limit 64, then ICMP type 3 code 4 with next-hop
 * MTU `mtu` quoting up to 576 bytes in all, or ICMPv6 type 2 with MTU
 * `mtu` quoting up to 1280 bytes in all; checksums complete.  `ip_id` is
 * the IPv4 identification to use.  Returns the frame's length, 0 when
 * none can be built (the source would not be unicast).
 */
uint32_t bench_mtu_icmp_build(const uint8_t *frame, uint32_t len, uint32_t mtu, const struct bench_mtu_src *src,
			      uint16_t ip_id, uint8_t *out);

#endif
