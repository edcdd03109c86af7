/*
 * libgso software segmentation (GSO): one super-segment in, the frames the
 * Linux kernel's software GSO would put on the wire out (IPv4 ID policy
 * selectable).  TCP over IPv4/IPv6 (tcp_gso_segment) and UDP over IPv4/IPv6
 * with UDP_SEGMENT semantics (every segment a full datagram).
 *
 * Per segment i of n (payload bytes [i*mss, min((i+1)*mss, total))):
 *  - IPv4 total length / IPv6 payload length / UDP length for that segment;
 *  - IPv4 ID: template ID + i (mod 2^16), or the template ID on every
 *    segment with GSO_IPID_FIXED (allowed only when DF is set);
 *  - IPv4 header checksum recomputed; everything else of L2/L3 (VLAN tag,
 *    TOS/traffic class, TTL, flow label, IPv4 options) copied;
 *  - TCP: seq + i*mss; FIN and PSH only on the last segment; CWR only on
 *    the first; everything else (ACK, ECE, URG, urgent pointer, window,
 *    options) copied;
 *  - L4 checksum: complete (GSO_CSUM_FULL), or a partial seed for a device
 *    that finishes it (GSO_CSUM_PARTIAL: pseudo-header sum with this
 *    segment's L4 length, folded, not complemented, plus
 *    csum_start/csum_offset -- what AF_XDP checksum metadata,
 *    virtio_net_hdr NEEDS_CSUM and CHECKSUM_PARTIAL expect).
 *
 * A payload of at most one MSS (zero included) gives one frame, the packet
 * itself: Linux sends it without GSO.  This matters for one bit of the
 * output, which follows Linux (checked against 6.18): a TCP checksum that
 * computes to 0 goes out as 0xffff in a single packet but as 0x0000 in
 * every segment of a segmented one; a UDP checksum that computes to 0
 * always goes out as 0xffff.  Frames are not padded to the Ethernet
 * minimum (the device does that).
 *
 * Template (s->tmpl): one made by gso_tmpl__parse/gso_tmpl__parse_pkt/
 * gso_tmpl__build.  Its length and checksum fields are ignored (rewritten
 * per segment), everything else is copied.  Its structure is checked
 * again (offsets against the header bytes, IP version/protocol, IHL/doff,
 * no IPv4 fragment) so that a damaged struct gives -EINVAL, never a bad
 * write.
 *
 * Memory: nothing is allocated.  The template and the extents are only
 * read; output buffers must not overlap them or each other.  Calls on
 * different outputs may run concurrently.
 */
#ifndef GSO_SEG_H
#define GSO_SEG_H

#include <gso/common.h>
#include <gso/tmpl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Linux's UDP_MAX_SEGMENTS since 2024 (it was 64 before). */
#define GSO_UDP_MAX_SEGS 128u
/* The segment count is 16 bits in Linux (gso_segs). */
#define GSO_MAX_SEGS 65535u

enum gso_csum_mode {
	GSO_CSUM_FULL = 0,    /* complete L4 checksum in software */
	GSO_CSUM_PARTIAL = 1, /* leave a pseudo-header seed for the device */
};

enum gso_ipid_mode {
	GSO_IPID_INC = 0,   /* ID + i per segment, as Linux does */
	GSO_IPID_FIXED = 1, /* same ID on every segment; needs DF (else -EINVAL); no effect on IPv6 */
};

/*
 * A contiguous piece of payload.  The library only reads it.  An element
 * of a per-super-segment array: no sz field; growing it needs a new
 * symbol version (as for gso_frame and gso_seg_ref).
 */
struct gso_extent {
	const void *base; /* may be NULL only when len is 0 */
	size_t len;       /* 0 is allowed (the extent is skipped) */
};

/* A super-segment: headers plus payload in one or more extents, in order. */
struct gso_super {
	const struct gso_tmpl *tmpl;
	const struct gso_extent *ext; /* may be NULL only when n_ext is 0 */
	unsigned n_ext;               /* 0 = no payload */
};

struct gso_seg_opts {
	size_t sz;
	uint32_t mss;      /* payload bytes per segment (Linux gso_size); required, 1..65535 */
	uint8_t csum;      /* enum gso_csum_mode */
	uint8_t ipid;      /* enum gso_ipid_mode */
	/*
	 * Most segments allowed, 1..GSO_MAX_SEGS; 0 = the Linux limit:
	 * GSO_MAX_SEGS for TCP, GSO_UDP_MAX_SEGS for UDP.  A larger value
	 * for UDP is honoured (our frames do not go through udp_send_skb).
	 */
	uint32_t max_segs;
	size_t :0;
};
#define gso_seg_opts__last_field max_segs

/*
 * Validate a super-segment and return how many segments it makes (>= 1).
 * `o` is required (mss has no default).  Errors:
 *   -EINVAL    s, s->tmpl or o NULL; bad o->sz or non-zero unknown tail;
 *              mss 0 or > 65535; csum/ipid not a known mode; max_segs >
 *              GSO_MAX_SEGS; GSO_IPID_FIXED on IPv4 without DF; an extent
 *              with NULL base and non-zero length (or ext NULL with n_ext
 *              > 0); a damaged template; SYN or RST on a TCP super-segment
 *              of more than one segment
 *   -EMSGSIZE  the IP datagram of the whole (IP header + L4 header +
 *              payload; IPv6 included) would exceed GSO_MAX_IP_LEN
 *   -E2BIG     more segments than the limit in force (max_segs)
 */
GSO_API int gso_seg_count(const struct gso_super *s, const struct gso_seg_opts *o);

/* Output form (a): complete frames in caller buffers (one per segment: no sz field). */
struct gso_frame {
	void *buf;            /* in: where the frame is written */
	uint32_t cap;         /* in: bytes available at buf */
	uint32_t len;         /* out: frame length (headers + this segment's payload) */
	uint16_t csum_start;  /* out: L4 header offset in the frame */
	uint16_t csum_offset; /* out: checksum field offset from csum_start (16 TCP, 6 UDP) */
};

/*
 * Segment `s` into complete frames, one per entry of `out` (which needs at
 * least gso_seg_count() entries; entries past the count are not touched).
 * The frame is the headers followed by the payload.  Returns the number of
 * frames, or the errors of gso_seg_count() and:
 *   -EINVAL   out NULL, or the buf of an entry that would be used is NULL
 *   -ENOSPC   n_out smaller than the segment count
 *   -ENOBUFS  a frame is longer than its entry's cap
 * Validation happens before anything is written: on error no buffer and
 * no `out` entry is touched.  Payload is copied and checksummed in one pass
 * (GSO_CSUM_FULL) or only copied (GSO_CSUM_PARTIAL).
 */
GSO_API int gso_segment(const struct gso_super *s, const struct gso_seg_opts *o,
			struct gso_frame *out, unsigned n_out);

/* Output form (b): a header frame plus a reference into the payload (one per segment: no sz field). */
struct gso_seg_ref {
	void *hdr;            /* in: buffer for this segment's headers */
	uint16_t hdr_cap;     /* in: bytes available at hdr */
	uint16_t hdr_len;     /* out: header bytes written (= template hdr_len) */
	uint32_t pay_off;     /* out: offset of the payload in the whole super-segment payload */
	uint32_t pay_len;     /* out: payload bytes of this segment */
	uint32_t ext_idx;     /* out: extent holding the first payload byte (0 when pay_len is 0) */
	uint32_t ext_off;     /* out: offset of that byte within the extent (0 when pay_len is 0) */
	uint16_t csum_start;  /* out: as in struct gso_frame */
	uint16_t csum_offset; /* out */
};

/*
 * Segment `s` into header frames plus payload references (for devices that
 * gather: multi-buffer AF_XDP, scatter-gather DMA).  The payload is not
 * copied; with GSO_CSUM_FULL it is read once to checksum it, with
 * GSO_CSUM_PARTIAL not at all.  The frame on the wire is hdr[0..hdr_len)
 * followed by pay_len payload bytes starting at (ext_idx, ext_off), possibly
 * continuing into the following extents (skip empty ones); ext_idx never
 * names an empty extent.  The result is byte for byte the frame
 * gso_segment() writes.  Same returns and guarantees as gso_segment()
 * (-EINVAL for a NULL hdr, -ENOBUFS when the headers do not fit hdr_cap).
 * The references stay valid as long as the caller keeps the extents.
 */
GSO_API int gso_segment_ref(const struct gso_super *s, const struct gso_seg_opts *o,
			    struct gso_seg_ref *out, unsigned n_out);

#ifdef __cplusplus
}
#endif
#endif
