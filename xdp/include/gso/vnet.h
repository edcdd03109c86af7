/*
 * libgso-xdp: the virtio_net_hdr backend (gso_vnet__create,
 * gso_vnet__create_tap) of the device interface of <gso/dev.h>: an
 * AF_PACKET socket with PACKET_VNET_HDR, a memory-mapped TPACKET_V2 TX
 * ring and qdisc bypass, or a TAP opened with IFF_VNET_HDR.  Each
 * super-segment leaves whole with its virtio_net_hdr; the kernel hands it
 * to the driver, which programs the NIC's TSO or segments it in software
 * when the device cannot.  Offload or software is chosen per super-segment
 * (gso_tso__submit, <gso/dev.h>).  Conventions and errors are those of
 * <gso/dev.h>.
 */
#ifndef GSO_VNET_H
#define GSO_VNET_H

#include <stddef.h>
#include <gso/common.h>
#include <gso/offload.h>
#include <gso/dev.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===================================================================== */
/* virtio_net_hdr backend (AF_PACKET and TAP)                             */
/* ===================================================================== */

#define GSO_VNET_F_NO_RING   (1u << 0) /* AF_PACKET: sendmmsg() instead of the mmap()ed TX ring */
#define GSO_VNET_F_QDISC     (1u << 1) /* AF_PACKET: go through the qdisc (no PACKET_QDISC_BYPASS) */
#define GSO_VNET_F_NO_UDP_L4 (1u << 2) /* never offload UDP (kernels before 6.2 lack VIRTIO_NET_HDR_GSO_UDP_L4) */
#define GSO_VNET_F_UDP_MAX64 (1u << 3) /* UDP segment limit 64 (kernels before 2024) instead of 128 */
#define GSO_VNET_F_KNOWN     0xfu

struct gso_vnet_opts {
	size_t sz;
	uint32_t mode;        /* enum gso_tso_mode, the device default; 0 = auto */
	uint32_t tso_flags;   /* GSO_TSO_F_* defaults */
	uint32_t flags;       /* GSO_VNET_F_* */
	uint32_t frames;      /* TX ring frames (one packet each, 64 KiB + headers), 8..65536, rounded up to a multiple of 15; 0 = 240 */
	uint32_t chunk_size;  /* buffer memory chunk, 2048..65536 and a power of 2; 0 = 4096 */
	uint32_t nchunks;     /* buffer memory chunks for gso_dev__buf_alloc(); 0 = 4096 */
	uint32_t sndbuf;      /* socket send buffer bytes; 0 = enough for the whole ring */
	size_t :0;
};
#define gso_vnet_opts__last_field sndbuf

/*
 * Open a virtio_net_hdr transmit device on interface `ifindex` of the
 * current network namespace: AF_PACKET, PACKET_VNET_HDR (10-byte header),
 * PACKET_QDISC_BYPASS, PACKET_LOSS (a frame the kernel refuses is skipped,
 * never stalls the ring; everything is validated before it is queued) and
 * a TPACKET_V2 TX ring of opts->frames frames of 64 KiB + headers, or
 * sendmmsg() with GSO_VNET_F_NO_RING.  Qdisc bypass cannot segment: Linux
 * drops a GSO packet the interface cannot segment on that path (ENOBUFS),
 * so the first ENOBUFS turns bypass off for good and the packet is sent
 * again through the qdisc, where the stack segments it (gso_dev__name()
 * then says "qdisc").  The direct path drops every frame with the same
 * ENOBUFS while the interface has no carrier (a link flap, a veth whose
 * peer is down): then, asked through rtnetlink, it counts as the link
 * being down (-ENETDOWN, the frames wait) and bypass stays on.  With
 * GSO_VNET_F_NO_RING a super-segment's virtio header carries hdr_len =
 * the frame's length up to 64 KiB - 1 KiB, not the headers' length: Linux
 * takes it as the length of the skb's linear part (the headers are parsed,
 * never taken from it), and one 64 KiB block costs less than 16 pages; if
 * the kernel has no such block the frame is sent again paged.  Payload is copied into the ring at
 * submit, so buffers (GSO_DEV_BUFS, plain memory) are free to change once
 * gso_dev__submit() returns.
 *
 * Capabilities: GSO_DEV_SEG_TCP4|TCP6 (|UDP4|UDP6 unless
 * GSO_VNET_F_NO_UDP_L4), GSO_DEV_CSUM, GSO_DEV_BUFS.  The kernel segments
 * in software when the interface lacks TSO/USO; both count as offload
 * here (the super-segment leaves this library whole).
 *
 * Returns 0 and *dev, or -EINVAL (NULL, bad option, unknown flag),
 * -ENODEV (no such interface), -ENOMEM, -EPERM (needs CAP_NET_RAW), or
 * another errno of the socket calls.
 */
GSO_API int gso_vnet__create(struct gso_dev **dev, int ifindex, const struct gso_vnet_opts *opts);

/*
 * Open (and create, if it does not exist) TAP interface `ifname` in the
 * current network namespace with IFF_TAP|IFF_NO_PI|IFF_VNET_HDR and a
 * 10-byte virtio_net_hdr, and use it as a transmit device: every packet
 * written is received by the kernel as if it had arrived on the TAP
 * (writev(), synchronous: completions are immediate).  The interface goes
 * away with the device unless it was made persistent.  GSO_VNET_F_NO_RING
 * and GSO_VNET_F_QDISC do not apply.  Returns as gso_vnet__create(), and
 * -EBUSY (the TAP is attached to another process), -ENOENT (no
 * /dev/net/tun).
 */
GSO_API int gso_vnet__create_tap(struct gso_dev **dev, const char *ifname,
				 const struct gso_vnet_opts *opts);

/*
 * The socket (AF_PACKET) or TAP file descriptor, e.g. to read what the
 * kernel sends into a TAP (each read: a 10-byte virtio_net_hdr + a frame).
 * Returns the fd, -EINVAL (NULL, not a vnet device), -ESHUTDOWN.
 */
GSO_API int gso_vnet__fd(const struct gso_dev *dev);

/*
 * Queue one frame with a caller-made virtio_net_hdr, as a forwarder would.
 * `h` is validated with gso_vnet_hdr_check() first: a header the kernel
 * would refuse fails here with the kernel's errno (-EINVAL) and nothing is
 * sent.  `frame` (Ethernet, `len` bytes) is copied.  Counted as a
 * super-segment in the device statistics, not in the selection counters.
 * Returns 0, -EINVAL, -EMSGSIZE (len over the ring frame), -EAGAIN (ring
 * full: reap, retry), -ESHUTDOWN, or an errno of the send.
 */
GSO_API int gso_vnet__send_frame(struct gso_dev *dev, const struct gso_vnet_hdr *h,
				 const void *frame, size_t len);

#ifdef __cplusplus
}
#endif
#endif
