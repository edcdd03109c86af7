/*
 * libgso header templates: the L2+L3+L4 headers of one flow's super-segment.
 *
 * A template is parsed from a frame (gso_tmpl__parse, gso_tmpl__parse_pkt) or
 * built from fields (gso_tmpl__build).  It records where each header is and
 * what it is; the segmenter and the offload encoders copy it and rewrite the
 * per-segment fields.  The struct is exposed because it sits on the hot
 * path; treat its fields as read-only and change a template only through
 * the functions here.
 *
 * Supported: Ethernet II with at most one 802.1Q tag; IPv4 with options (not
 * a fragment); IPv6 without extension headers; TCP with options; UDP.
 */
#ifndef GSO_TMPL_H
#define GSO_TMPL_H

#include <stdbool.h>
#include <gso/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum gso_l3 { GSO_L3_IPV4 = 4, GSO_L3_IPV6 = 6 };
enum gso_l4 { GSO_L4_TCP = 6, GSO_L4_UDP = 17 };

/* TCP flag bits as in byte 13 of the TCP header. */
#define GSO_TCP_FIN 0x01
#define GSO_TCP_SYN 0x02
#define GSO_TCP_RST 0x04
#define GSO_TCP_PSH 0x08
#define GSO_TCP_ACK 0x10
#define GSO_TCP_URG 0x20
#define GSO_TCP_ECE 0x40
#define GSO_TCP_CWR 0x80

/*
 * A fixed-size value type: the library writes all of it, callers copy it
 * by assignment.  It has no sz field; growing it needs a new symbol
 * version.
 */
struct gso_tmpl {
	uint8_t hdr[GSO_MAX_HDR_LEN + 1]; /* the headers, as they go on the wire */
	uint16_t hdr_len;   /* L2 + L3 + L4 header bytes */
	uint8_t l3_off;     /* 14, or 18 with an 802.1Q tag */
	uint8_t l4_off;     /* l3_off + IP header length (options included) */
	uint8_t l4_len;     /* TCP header with options, or 8 for UDP */
	uint8_t l3;         /* enum gso_l3 */
	uint8_t l4;         /* enum gso_l4 */
	uint8_t vlan;       /* 1 if an 802.1Q tag is present */
};

/*
 * Parse the headers at the start of `buf` (`len` bytes, at least the
 * headers; payload may follow and is not looked at) into `t`.  IP length
 * fields must cover at least the headers (IPv4 tot_len, IPv6 payload
 * length; the UDP length must be >= 8); they are otherwise not checked,
 * since the segmenter rewrites them.  IPv4 and TCP options must be well
 * formed (each option's length inside the option area), because every
 * segment copies them verbatim.  TCP flags are not judged here (a template
 * may describe a single SYN); gso_tmpl__set_tcp_flags() and the segmenter do.
 * The IPv4 header checksum and the L4 checksum are not checked.
 *
 * `t` and `buf` are the caller's; `buf` is only read.  Returns:
 *   0                 success, `t` filled (bytes of hdr[] past hdr_len are 0)
 *   -EINVAL           `t` or `buf` NULL
 *   -ENODATA          `len` ends inside a header
 *   -EBADMSG          IP version not matching the ethertype, IHL < 5,
 *                     doff < 5, a length field shorter than the headers,
 *                     malformed options
 *   -EPROTONOSUPPORT  ethertype not IPv4/IPv6, a second VLAN tag or
 *                     0x88a8/0x9100 (QinQ), IPv4 fragment (MF or offset),
 *                     IPv6 next header not TCP/UDP (extension headers),
 *                     L4 not TCP/UDP
 *   -EMSGSIZE         headers longer than GSO_MAX_HDR_LEN (cannot happen
 *                     with the protocols supported today)
 * On error `t` is untouched.
 */
GSO_API int gso_tmpl__parse(struct gso_tmpl *t, const void *buf, size_t len);

/*
 * Parse a whole super-packet frame, as a Linux GSO skb would look on the
 * wire before segmentation: the IPv4 total length / IPv6 payload length
 * (and the UDP length) cover the whole super-packet.  Checks those lengths
 * against each other and against `len` (bytes past the IP datagram are
 * accepted only as Ethernet padding of a frame of at most 60 bytes, 64
 * with an 802.1Q tag) and that the IP datagram is at most GSO_MAX_IP_LEN.
 * On success fills `t` and, if non-NULL, the payload's offset in the frame
 * (= t->hdr_len) and its length (L4 payload per the IP length, padding
 * excluded).  The L4 checksum field is not checked.
 *
 * Returns 0, the errors of gso_tmpl__parse(), and:
 *   -EMSGSIZE  IP datagram longer than GSO_MAX_IP_LEN (IPv6 payload length
 *              over 65495)
 *   -EBADMSG   IP length longer than the frame, frame longer than the IP
 *              length (beyond padding), UDP length != IP payload length
 * On error nothing is written.
 */
GSO_API int gso_tmpl__parse_pkt(struct gso_tmpl *t, const void *frame, size_t len,
			  size_t *payload_off, size_t *payload_len);

/* Fields for gso_tmpl__build().  Zero means the default given. */
struct gso_tmpl_fields {
	size_t sz;
	uint8_t eth_dst[6], eth_src[6];
	uint16_t vlan_tci;      /* used when has_vlan */
	bool has_vlan;
	uint8_t l3;             /* GSO_L3_IPV4 or GSO_L3_IPV6 (required) */
	uint8_t l4;             /* GSO_L4_TCP or GSO_L4_UDP (required) */
	uint8_t saddr[16], daddr[16]; /* first 4 bytes used for IPv4 */
	uint8_t tos;            /* IPv4 TOS / IPv6 traffic class, ECN bits included */
	uint8_t ttl;            /* hop limit; 0 = 64 */
	uint32_t flow_label;    /* IPv6, 20 bits */
	bool df;                /* IPv4 don't-fragment */
	uint16_t ip_id;         /* IPv4 ID of the first segment */
	const uint8_t *ip_opts; /* IPv4 options, multiple of 4 bytes, <= 40 */
	uint8_t ip_opts_len;
	uint16_t sport, dport;  /* host order */
	uint32_t seq, ack;      /* TCP, host order */
	uint8_t tcp_flags;      /* GSO_TCP_* ; SYN/RST/URG are refused (-EINVAL) */
	uint16_t window;        /* TCP, as on the wire (already scaled down), host order */
	const uint8_t *tcp_opts; /* TCP options, multiple of 4 bytes, <= 40 */
	uint8_t tcp_opts_len;
	size_t :0;
};
#define gso_tmpl_fields__last_field tcp_opts_len

/*
 * Build a template from fields.  Length fields are set for a header-only
 * packet and the checksums left zero: they are per-segment and the
 * segmenter writes them.  `f` is only read; fields past f->sz read as 0.
 * Returns 0 or -EINVAL: `t`/`f` NULL, bad sz or non-zero unknown tail,
 * l3/l4 not one of the enums, options not a multiple of 4, over 40 bytes,
 * NULL with a non-zero length or malformed, SYN/RST/URG in tcp_flags,
 * flow_label over 20 bits, vlan_tci without has_vlan, or a field of the
 * other protocol non-zero (IPv4 df/ip_id/ip_opts with IPv6, flow_label with
 * IPv4, seq/ack/tcp_flags/window/tcp_opts with UDP).  On error `t` is
 * untouched.
 */
GSO_API int gso_tmpl__build(struct gso_tmpl *t, const struct gso_tmpl_fields *f);

/*
 * Accessors for the fields the transport changes between super-segments.
 * Values are in host order.
 *
 * Getters return 0 and write *out, or -ENOENT and write nothing when the
 * template has no such field (TCP fields of a UDP template, IPv4 fields of
 * an IPv6 one), or -EINVAL when `t` or the out pointer is NULL.
 *
 * Setters return 0, or -EINVAL when `t` is NULL or has no such field;
 * gso_tmpl__set_tcp_flags() also refuses SYN, RST and URG (-EINVAL), which
 * must never be on a super-segment.  Setters leave checksums alone.
 */
GSO_API int gso_tmpl__tcp_seq(const struct gso_tmpl *t, uint32_t *seq);
GSO_API int gso_tmpl__tcp_flags(const struct gso_tmpl *t, uint8_t *flags);
GSO_API int gso_tmpl__ip_id(const struct gso_tmpl *t, uint16_t *id);
GSO_API int gso_tmpl__df(const struct gso_tmpl *t, bool *df);

GSO_API int gso_tmpl__set_tcp_seq(struct gso_tmpl *t, uint32_t seq);
GSO_API int gso_tmpl__set_tcp_ack(struct gso_tmpl *t, uint32_t ack, uint16_t window);
GSO_API int gso_tmpl__set_tcp_flags(struct gso_tmpl *t, uint8_t flags);
GSO_API int gso_tmpl__set_ip_id(struct gso_tmpl *t, uint16_t id);

#ifdef __cplusplus
}
#endif
#endif
