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
 *  - IPv4 header checksum recomputed;
 *  - TCP: seq + i*mss; FIN and PSH only on the last segment; CWR only on
 *    the first; everything else (options included) copied;
 *  - L4 checksum: complete (GSO_CSUM_FULL; TCP may carry 0x0000 as Linux
 *    GSO does, UDP maps 0 to 0xffff), or a partial seed for a device that
 *    finishes it (GSO_CSUM_PARTIAL: pseudo-header sum with this segment's L4
 *    length, folded, not complemented, plus csum_start/csum_offset).
 * A payload of at most one MSS gives one frame, the packet itself.
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
	GSO_IPID_FIXED = 1, /* same ID on every segment; needs DF (else -EINVAL) */
};

/* A contiguous piece of payload.  The library only reads it. */
struct gso_extent {
	const void *base;
	size_t len;
};

/* A super-segment: headers plus payload in one or more extents, in order. */
struct gso_super {
	const struct gso_tmpl *tmpl;
	const struct gso_extent *ext;
	unsigned n_ext;
};

struct gso_seg_opts {
	size_t sz;
	uint32_t mss;      /* payload bytes per segment (Linux gso_size); required, 1..65535 */
	uint8_t csum;      /* enum gso_csum_mode */
	uint8_t ipid;      /* enum gso_ipid_mode */
	uint32_t max_segs; /* 0 = GSO_MAX_SEGS for TCP, GSO_UDP_MAX_SEGS for UDP */
	size_t :0;
};
#define gso_seg_opts__last_field max_segs

/*
 * Validate a super-segment and return how many segments it makes (>= 1),
 * or -EINVAL (mss 0 or > 65535, bad options, NULL), -EMSGSIZE (the IP
 * datagram of the whole would exceed GSO_MAX_IP_LEN), -E2BIG (more segments
 * than max_segs).
 */
GSO_API int gso_seg_count(const struct gso_super *s, const struct gso_seg_opts *o);

/* Output form (a): complete frames in caller buffers. */
struct gso_frame {
	void *buf;            /* in: where the frame is written */
	uint32_t cap;         /* in: bytes available at buf */
	uint32_t len;         /* out: frame length */
	uint16_t csum_start;  /* out: L4 header offset in the frame */
	uint16_t csum_offset; /* out: checksum field offset from csum_start (16 TCP, 6 UDP) */
};

/*
 * Segment `s` into complete frames, one per entry of `out` (which needs at
 * least gso_seg_count() entries).  Returns the number of frames, or the
 * errors of gso_seg_count(), -ENOSPC (n_out too small), -ENOBUFS (a frame
 * does not fit its buffer).  Validation happens before anything is
 * written: on error no buffer and no `out` entry is touched.  Payload is
 * copied and checksummed in one pass.
 */
GSO_API int gso_segment(const struct gso_super *s, const struct gso_seg_opts *o,
			struct gso_frame *out, unsigned n_out);

/* Output form (b): a header frame plus a reference into the payload. */
struct gso_seg_ref {
	void *hdr;            /* in: buffer for this segment's headers */
	uint16_t hdr_cap;     /* in: bytes available at hdr */
	uint16_t hdr_len;     /* out: header bytes written (= template hdr_len) */
	uint32_t pay_off;     /* out: offset of the payload in the whole super-segment payload */
	uint32_t pay_len;     /* out: payload bytes of this segment */
	uint32_t ext_idx;     /* out: extent holding the first payload byte */
	uint32_t ext_off;     /* out: offset of that byte within the extent */
	uint16_t csum_start;  /* out: as in struct gso_frame */
	uint16_t csum_offset; /* out */
};

/*
 * Segment `s` into header frames plus payload references (for devices that
 * gather: multi-buffer AF_XDP, scatter-gather DMA).  The payload is not
 * copied; with GSO_CSUM_FULL it is read once to checksum it, with
 * GSO_CSUM_PARTIAL not at all.  The frame on the wire is hdr[0..hdr_len)
 * followed by pay_len payload bytes starting at (ext_idx, ext_off), possibly
 * continuing into the following extents.  Same returns and guarantees as
 * gso_segment() (-ENOBUFS when a header does not fit hdr_cap).
 */
GSO_API int gso_segment_ref(const struct gso_super *s, const struct gso_seg_opts *o,
			    struct gso_seg_ref *out, unsigned n_out);

#ifdef __cplusplus
}
#endif
#endif
