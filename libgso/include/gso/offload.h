/*
 * libgso offload descriptors: tell a device (or the kernel) to segment a
 * super-segment, or to finish a checksum, instead of doing it in software.
 *
 * Two layers:
 *  1. gso_offload_describe() turns a template, a payload length and an MSS
 *     into one neutral request (struct gso_offload_req), validated the way
 *     the Linux kernel validates a virtio_net_hdr.
 *  2. One encoder per consumer turns the request into that consumer's
 *     descriptor AND a copy of the headers prepared with the consumer's own
 *     checksum-seed convention:
 *       virtio_net_hdr, AF_XDP checksum metadata: L4 checksum field = folded,
 *         not complemented, pseudo-header sum INCLUDING the L4 length of the
 *         whole (super-)packet; IP lengths and IPv4 header checksum real.
 *       e1000 TSO context: pseudo-header sum with length 0, IPv4 tot_len 0
 *         and header checksum 0 (what Linux e1000_tso() writes).
 *     The frame handed to the device is the prepared headers followed by
 *     the payload.  The template itself is never modified.
 *
 * Descriptors have a plain struct form (host-order fields) and a byte form
 * (the exact little-endian layout the consumer reads); the _encode and
 * _decode functions convert between them.  No kernel headers are needed.
 *
 * All functions are pure: no allocation, no syscalls.  A failed call
 * writes nothing.
 */
#ifndef GSO_OFFLOAD_H
#define GSO_OFFLOAD_H

#include <stdbool.h>
#include <gso/common.h>
#include <gso/tmpl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===================================================================== */
/* Neutral request                                                        */
/* ===================================================================== */

enum gso_offload_type {
	GSO_OFFLOAD_NONE = 0,   /* one packet: payload <= mss; checksum offload only */
	GSO_OFFLOAD_TCPV4 = 1,
	GSO_OFFLOAD_TCPV6 = 2,
	GSO_OFFLOAD_UDP_L4 = 3, /* UDP_SEGMENT semantics, IPv4 or IPv6 (see GSO_OFFLOAD_F_IPV4) */
};

/* Request flags (struct gso_offload_req.flags). */
#define GSO_OFFLOAD_F_ECN       (1u << 0) /* out: TCP template has CWR; only the first segment keeps it (SKB_GSO_TCP_ECN) */
#define GSO_OFFLOAD_F_IPV4      (1u << 1) /* out: L3 is IPv4 */
#define GSO_OFFLOAD_F_FIXEDID   (1u << 2) /* in/out: every segment keeps the template's IPv4 ID (IPv4 needs DF; devices: TCP over IPv4 only) */
#define GSO_OFFLOAD_F_UDP_MAX64 (1u << 3) /* in/out: UDP segment limit 64 (kernels before 2024) instead of GSO_UDP_MAX_SEGS */
/* Flags a caller may pass to gso_offload_describe(). */
#define GSO_OFFLOAD_F_IN_MASK (GSO_OFFLOAD_F_FIXEDID | GSO_OFFLOAD_F_UDP_MAX64)

/* Checksum field offsets from the L4 header (virtio csum_offset). */
#define GSO_OFFLOAD_CSUM_OFF_TCP 16u
#define GSO_OFFLOAD_CSUM_OFF_UDP 6u

/*
 * One super-segment's offload request.  The caller sets sz (GSO_OPTS or
 * .sz = sizeof); gso_offload_describe() fills it up to sz and sets sz to
 * the bytes written.  The encoders need the whole struct: a shorter sz is
 * -EINVAL there.
 */
struct gso_offload_req {
	size_t sz;
	uint32_t payload_len; /* L4 payload bytes of the whole super-segment */
	uint32_t segs;        /* segments the device will emit (1 for NONE) */
	uint16_t mss;         /* payload bytes per segment (Linux gso_size), as passed */
	uint16_t hdr_len;     /* l2_len + l3_len + l4_len */
	uint16_t csum_start;  /* L4 header offset from the frame start (= l2_len + l3_len) */
	uint16_t csum_offset; /* GSO_OFFLOAD_CSUM_OFF_TCP or GSO_OFFLOAD_CSUM_OFF_UDP */
	uint8_t l2_len;       /* 14, or 18 with an 802.1Q tag */
	uint8_t l3_len;       /* IP header with options */
	uint8_t l4_len;       /* TCP header with options, or 8 */
	uint8_t type;         /* enum gso_offload_type */
	uint32_t flags;       /* GSO_OFFLOAD_F_* */
	size_t :0;
};
#define gso_offload_req__last_field flags

/*
 * Describe the super-segment made of template `t` and `payload_len` bytes
 * of payload, to be cut at `mss` payload bytes per segment.  The type is
 * NONE when payload_len <= mss: like the kernel ("too small packets are not
 * really GSO ones"), and also because a TCP super-segment whose payload
 * fits one MSS only once its options are counted would be dropped by Linux
 * (the kernel counts TCP options as payload when it decides to segment;
 * sendmsg fails with ENOMEM).  Otherwise TCPV4, TCPV6 or UDP_L4 from the
 * template.  `flags` takes GSO_OFFLOAD_F_IN_MASK bits; ECN and IPV4 are
 * derived from the template and set in r->flags.
 *
 * Every super-segment gso_segment() refuses (same template, payload
 * length and MSS, GSO_IPID_FIXED for GSO_OFFLOAD_F_FIXEDID) is refused
 * here first, with gso_segment()'s errno, so that no device is ever
 * handed one; the encoders below re-check through this function.
 *
 * Returns 0, or
 *   -EINVAL    `t`/`r` NULL, r->sz 1..sizeof(size_t) (0: the whole struct),
 *              unknown flag; mss 0 or >= 0xffff (0xffff is
 *              the kernel's GSO_BY_FRAGS) -- the errno Linux gives for the
 *              same virtio_net_hdr; FIXEDID on IPv4 without DF (Linux fails
 *              segmentation); a template gso_segment() refuses (damaged,
 *              an IPv4 fragment) or whose offsets contradict each other;
 *              SYN or RST on a TCP super-segment of more than one segment
 *   -EMSGSIZE  the IP datagram (headers + payload) over GSO_MAX_IP_LEN
 *   -E2BIG     UDP payload over mss * GSO_UDP_MAX_SEGS (64 with
 *              GSO_OFFLOAD_F_UDP_MAX64; Linux says EINVAL for the
 *              virtio_net_hdr)
 * FIXEDID is kept in r->flags where it is valid but no device can honour
 * it when segmenting (UDP; TCP over IPv6, where it has no effect): the
 * encoders refuse to segment with it (-ENOTSUP), software GSO can.
 * On error `r` is untouched.
 */
GSO_API int gso_offload_describe(const struct gso_tmpl *t, uint32_t payload_len,
				 uint32_t mss, uint32_t flags, struct gso_offload_req *r);

/* ===================================================================== */
/* virtio_net_hdr (AF_PACKET PACKET_VNET_HDR, TAP IFF_VNET_HDR)           */
/* ===================================================================== */

#define GSO_VNET_HDR_LEN    10u /* struct virtio_net_hdr */
#define GSO_VNET_HDR_V1_LEN 12u /* virtio_net_hdr_v1 / _mrg_rxbuf: + num_buffers */

#define GSO_VNET_HDR_F_NEEDS_CSUM 0x01u
#define GSO_VNET_HDR_F_DATA_VALID 0x02u /* receive side only */
#define GSO_VNET_HDR_F_RSC_INFO   0x04u /* receive side only */

#define GSO_VNET_HDR_GSO_NONE   0x00u
#define GSO_VNET_HDR_GSO_TCPV4  0x01u
#define GSO_VNET_HDR_GSO_UDP    0x03u /* UFO: accepted by Linux, never produced here */
#define GSO_VNET_HDR_GSO_TCPV6  0x04u
#define GSO_VNET_HDR_GSO_UDP_L4 0x05u
#define GSO_VNET_HDR_GSO_ECN    0x80u

/* virtio_net_hdr, fields in host order. */
struct gso_vnet_hdr {
	uint8_t flags;        /* GSO_VNET_F_* */
	uint8_t gso_type;     /* GSO_VNET_HDR_GSO_*, possibly | GSO_VNET_HDR_GSO_ECN */
	uint16_t hdr_len;     /* L2+L3+L4 header bytes (a hint on transmit) */
	uint16_t gso_size;    /* MSS; 0 when gso_type is NONE */
	uint16_t csum_start;  /* from the frame start (L2) */
	uint16_t csum_offset; /* from csum_start */
	uint16_t num_buffers; /* 12-byte form only; 0 on transmit */
};

/*
 * Write `h` as a `len`-byte (GSO_VNET_HDR_LEN or GSO_VNET_HDR_V1_LEN)
 * little-endian virtio_net_hdr at `out`.  Returns 0, or -EINVAL (NULL, len
 * not 10 or 12, num_buffers non-zero with len 10).
 */
GSO_API int gso_vnet_hdr_encode(const struct gso_vnet_hdr *h, void *out, size_t len);
/* Read a `len`-byte (10 or 12) header; num_buffers is 0 for 10.  0 or -EINVAL. */
GSO_API int gso_vnet_hdr_decode(const void *in, size_t len, struct gso_vnet_hdr *h);

/*
 * Validate `h` for a transmitted frame of `frame_len` bytes (the Ethernet
 * frame after the virtio header) the way Linux does (virtio_net_hdr_to_skb
 * and AF_PACKET's vnet parsing, kernel 6.x): known gso_type, gso_size not 0
 * or 0xffff with GSO, NEEDS_CSUM offsets inside the frame and csum_start
 * >= 20 (40 for TCPV6), csum_offset 16 for TCP GSO, UDP_L4 only with
 * NEEDS_CSUM, offset 6, no ECN bit and at most 128 segments, hdr_len (raised
 * to csum_start + csum_offset + 2) not past the frame.  GSO without
 * NEEDS_CSUM is accepted when the minimal headers fit: Linux would then
 * dissect the frame, which this function does not.  Returns 0 or -EINVAL.
 */
GSO_API int gso_vnet_hdr_check(const struct gso_vnet_hdr *h, size_t frame_len);

/*
 * Encode request `r` (from gso_offload_describe() on template `t`) for a
 * virtio_net_hdr consumer: fill `h` and write r->hdr_len bytes of headers
 * to `hdr_out` with the lengths of the whole super-packet (IPv4 tot_len and
 * a correct IPv4 header checksum, IPv6 payload length, UDP length) and the
 * L4 checksum field seeded with the folded pseudo-header sum including the
 * full L4 length, not complemented.  NEEDS_CSUM is always set (Linux GSO
 * requires it for UDP_L4, and a single packet gets checksum offload); the
 * ECN bit is set for a TCP GSO request whose template carries CWR.
 *
 * Returns 0, or -EINVAL (NULL, `r` not describing `t` or
 * with an sz shorter than the request gso_offload_describe() writes), -ENOTSUP (FIXEDID:
 * virtio_net_hdr cannot ask for fixed IDs), -ENOBUFS (hdr_cap < r->hdr_len).
 */
GSO_API int gso_offload_vnet(const struct gso_offload_req *r, const struct gso_tmpl *t,
			     struct gso_vnet_hdr *h, void *hdr_out, size_t hdr_cap);

/* ===================================================================== */
/* e1000 (Intel 8254x) transmit descriptors                               */
/* ===================================================================== */

#define GSO_E1000_DESC_LEN 16u
#define GSO_E1000_MAX_PER_DESC 4096u /* Linux E1000_MAX_DATA_PER_TXD */
#define GSO_E1000_MAX_LEN 0xfffffu    /* 20-bit length / PAYLEN fields */

/* TUCMD (context) and DCMD (data) bits, as the byte at bits 24..31. */
#define GSO_E1000_CMD_EOP  0x01u /* data: end of packet */
#define GSO_E1000_CMD_IFCS 0x02u /* data: insert FCS */
#define GSO_E1000_CMD_TSE  0x04u /* both: TCP segmentation enable */
#define GSO_E1000_CMD_RS   0x08u /* both: report status */
#define GSO_E1000_CMD_DEXT 0x20u /* both: extended descriptor (must be set) */
#define GSO_E1000_CMD_VLE  0x40u /* data: insert VLAN tag */
#define GSO_E1000_CMD_IDE  0x80u /* both: interrupt delay enable */
#define GSO_E1000_TUCMD_TCP 0x01u /* context: L4 is TCP (else UDP) */
#define GSO_E1000_TUCMD_IP  0x02u /* context: L3 is IPv4 (else IPv6) */
/* POPTS bits of a data descriptor. */
#define GSO_E1000_POPTS_IXSM 0x01u /* insert IPv4 header checksum */
#define GSO_E1000_POPTS_TXSM 0x02u /* insert L4 checksum */

/* TCP/IP context descriptor (DEXT=1, DTYP=0), host order. */
struct gso_e1000_ctx {
	uint8_t ipcss;    /* IP checksum start */
	uint8_t ipcso;    /* IP checksum field offset (from frame start) */
	uint16_t ipcse;   /* IP checksum end, inclusive; 0 = none */
	uint8_t tucss;    /* L4 checksum start */
	uint8_t tucso;    /* L4 checksum field offset (from frame start) */
	uint16_t tucse;   /* L4 checksum end, inclusive; 0 = to the end of the frame */
	uint32_t paylen;  /* L4 payload bytes of the whole packet (20 bits) */
	uint8_t tucmd;    /* GSO_E1000_CMD_* and GSO_E1000_TUCMD_*; DEXT required */
	uint8_t sta;      /* status, written by the device */
	uint8_t hdr_len;  /* HDRLEN: L2+L3+L4 header bytes */
	uint16_t mss;     /* payload bytes per segment */
};

/* Data descriptor (DEXT=1, DTYP=1), host order. */
struct gso_e1000_data {
	uint64_t addr;    /* buffer address */
	uint32_t len;     /* buffer length (20 bits) */
	uint8_t dcmd;     /* GSO_E1000_CMD_*; DEXT required */
	uint8_t sta;      /* status, written by the device */
	uint8_t popts;    /* GSO_E1000_POPTS_* */
	uint16_t special; /* VLAN tag when VLE */
};

/* Kind of a 16-byte transmit descriptor. */
enum gso_e1000_kind { GSO_E1000_LEGACY = 0, GSO_E1000_CONTEXT = 1, GSO_E1000_DATA = 2,
		      GSO_E1000_RESERVED = 3 };
/*
 * Kind of the descriptor at `desc` (16 bytes); never fails: NULL is
 * GSO_E1000_RESERVED, the kind no device takes.
 */
GSO_API enum gso_e1000_kind gso_e1000_desc_kind(const void *desc);

/*
 * Write 16 bytes.  Returns 0, or -EINVAL (NULL, DEXT missing, paylen/len
 * over 20 bits), and for a data descriptor -EOVERFLOW (its buffer
 * [addr, addr + len) runs past 2^64: the device would wrap to address 0).
 */
GSO_API int gso_e1000_ctx_encode(const struct gso_e1000_ctx *c, void *out);
GSO_API int gso_e1000_data_encode(const struct gso_e1000_data *d, void *out);
/* Read 16 bytes.  Returns 0, or -EINVAL (NULL, not a context / data descriptor). */
GSO_API int gso_e1000_ctx_decode(const void *in, struct gso_e1000_ctx *c);
GSO_API int gso_e1000_data_decode(const void *in, struct gso_e1000_data *d);

/*
 * Encode request `r` (on template `t`) as an e1000 context descriptor and
 * prepared headers, as Linux e1000_tso() / e1000_tx_csum() do.
 *  - TSO (TCPV4, UDP_L4 over IPv4): IPCSS/IPCSO/IPCSE over the IPv4 header,
 *    TUCSS/TUCSO at the L4 header, TUCSE 0, PAYLEN = payload_len, HDRLEN,
 *    MSS, TUCMD = DEXT|TSE|IP (|TCP for TCP).  Headers: IPv4 tot_len 0,
 *    header checksum 0, L4 checksum = pseudo-header sum with length 0
 *    (folded, not complemented): the device adds each frame's L4 length.
 *    UDP over IPv4 is not used by Linux but is what the device model
 *    implements (per-frame UDP length, QEMU hw/net/e1000.c).
 *  - NONE: a checksum-only context (TUCSS/TUCSO, TUCMD = DEXT (|TCP)); the
 *    device adds no length, so the headers are prepared as for
 *    virtio_net_hdr (real lengths, IPv4 checksum computed, seed with length).
 * A request with GSO_OFFLOAD_F_ECN is encoded, but the engine keeps CWR on
 * every frame where Linux GSO keeps it on the first only; Linux never hands
 * e1000 such a packet (no NETIF_F_TSO_ECN).  Whether that is acceptable is
 * the caller's policy.
 * Returns 0, or -EINVAL (NULL, `r` not describing `t` or
 * with an sz shorter than the request gso_offload_describe() writes), -ENOTSUP (TCPV6 or
 * UDP over IPv6: the e1000 does IPv4 TSO only; FIXEDID: it always
 * increments the ID), -ENOBUFS (hdr_cap < r->hdr_len).
 */
GSO_API int gso_offload_e1000(const struct gso_offload_req *r, const struct gso_tmpl *t,
			      struct gso_e1000_ctx *c, void *hdr_out, size_t hdr_cap);

/*
 * Data descriptors for one buffer of the packet described by `r`: the
 * buffer [addr, addr + len) is cut into pieces of at most `max_per_desc`
 * bytes (0 = GSO_E1000_MAX_PER_DESC; Linux also caps at 4 * mss with TSO,
 * pass that here to match it).  Every piece gets DEXT|IFCS (|TSE with TSO)
 * and POPTS TXSM (|IXSM for IPv4 TSO); if `eop`, the last piece also gets
 * EOP|RS (this buffer ends the packet).  Returns the number of descriptors
 * written to `out`, or -EINVAL (NULL, r->sz shorter than the request
 * gso_offload_describe() writes, len 0, max_per_desc over 4096),
 * -EOVERFLOW (addr + len runs past 2^64: the pieces' addresses would wrap
 * to 0; a buffer ending at 2^64 is fine), -ENOSPC (n_out too small).
 * Nothing is written on error.
 */
GSO_API int gso_offload_e1000_data(const struct gso_offload_req *r, uint64_t addr,
				   uint32_t len, bool eop, uint32_t max_per_desc,
				   struct gso_e1000_data *out, unsigned n_out);

/* ===================================================================== */
/* AF_XDP transmit metadata (kernel >= 6.8; launch time >= 6.15)          */
/* ===================================================================== */

#define GSO_XSK_TXMD_LEN 24u /* use as the UMEM's tx_metadata_len */
#define GSO_XSK_TXMD_TIMESTAMP   (1ull << 0)
#define GSO_XSK_TXMD_CHECKSUM    (1ull << 1)
#define GSO_XSK_TXMD_LAUNCH_TIME (1ull << 2)
#define GSO_XSK_TXMD_KNOWN (GSO_XSK_TXMD_TIMESTAMP | GSO_XSK_TXMD_CHECKSUM | GSO_XSK_TXMD_LAUNCH_TIME)

/* struct xsk_tx_metadata, request side, host order. */
struct gso_xsk_txmd {
	uint64_t flags;       /* GSO_XSK_TXMD_* */
	uint16_t csum_start;  /* from the packet start */
	uint16_t csum_offset; /* from csum_start */
	uint32_t reserved;    /* must be 0 */
	uint64_t launch_time; /* ns, NIC PTP clock, with GSO_XSK_TXMD_LAUNCH_TIME */
};

/*
 * Write the 24-byte metadata (place it at addr - GSO_XSK_TXMD_LEN in the
 * UMEM).  Returns 0, or -EINVAL (NULL, unknown flag: the kernel would fail
 * the send with EINVAL; reserved non-zero).
 */
GSO_API int gso_xsk_txmd_encode(const struct gso_xsk_txmd *m, void *out);
/* Read it back.  Returns 0 or -EINVAL (NULL). */
GSO_API int gso_xsk_txmd_decode(const void *in, struct gso_xsk_txmd *m);

/*
 * Encode request `r` (on template `t`) for AF_XDP checksum offload: `m`
 * gets GSO_XSK_TXMD_CHECKSUM with csum_start/csum_offset (and
 * LAUNCH_TIME when launch_time_ns != 0), `hdr_out` the headers prepared as
 * for virtio_net_hdr (seed including the L4 length).  AF_XDP cannot
 * segment, so only NONE requests are accepted.
 * Returns 0, or -EINVAL (NULL, `r` not describing `t` or
 * with an sz shorter than the request gso_offload_describe() writes), -ENOTSUP (a GSO
 * type: segment in software first), -ENOBUFS (hdr_cap < r->hdr_len).
 */
GSO_API int gso_offload_xsk(const struct gso_offload_req *r, const struct gso_tmpl *t,
			    uint64_t launch_time_ns, struct gso_xsk_txmd *m,
			    void *hdr_out, size_t hdr_cap);

/*
 * Seed the L4 checksum of one already-built frame for a device that
 * finishes it (AF_XDP checksum metadata, virtio NEEDS_CSUM): the frame
 * must have `t`'s header layout (e.g. a segment made from `t`); its own IP
 * length field gives the L4 length.  Writes the folded, non-complemented
 * pseudo-header sum into the checksum field and, if non-NULL, csum_start
 * and csum_offset.  Returns 0, or -EINVAL (NULL), -ENODATA (len <
 * t->hdr_len), -EBADMSG (the frame's IP length shorter than its headers or
 * past `len`, or its L3/L4 bytes not matching the template's protocols).
 */
GSO_API int gso_offload_seed_frame(const struct gso_tmpl *t, void *frame, size_t len,
				   uint16_t *csum_start, uint16_t *csum_offset);

#ifdef __cplusplus
}
#endif
#endif
