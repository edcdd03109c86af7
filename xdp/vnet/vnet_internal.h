/*
 * The virtio_net_hdr backend's device (not installed): vnet.c (AF_PACKET,
 * the shared set-up and the transports) and vnet_tap.c (TAP) share it.
 * It is a TSO device (tsodev_internal.h).
 */
#ifndef GSO_XDP_VNET_INTERNAL_H
#define GSO_XDP_VNET_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <gso/vnet.h>
#include "dev/tsodev_internal.h"

struct vnet_dev {
	struct tso_dev t;       /* first */
	struct dev_mem mem;     /* callers' buffers (plain memory; payload is copied at submit) */
	int fd;                 /* AF_PACKET socket or TAP */
	bool tap;
	bool ring;              /* AF_PACKET TX ring (else sendmmsg / writev) */
	bool bypass;            /* PACKET_QDISC_BYPASS on */
	uint32_t mtu;
	/* TX ring: frame i at map + i * frame_size, data at +TX_DATA_OFF */
	uint8_t *map;
	size_t map_len;
	uint32_t frame_size;
	uint32_t nframes;
	uint32_t head;          /* next frame to fill */
	uint32_t tail;          /* oldest frame not yet seen back */
	uint32_t inflight;      /* frames from tail to head */
	uint32_t last;          /* the frame queued last (its status tells whether the kernel took all) */
	bool pending;           /* frames queued since the kernel last took everything */
	/* software segmentation scratch, scratch_n segments */
	uint32_t scratch_n;
	struct gso_frame *frames;
	struct gso_seg_ref *refs;
	uint8_t *hdrs;          /* scratch_n * VNET_SLOT: virtio header + headers, iov path */
	struct iovec *iov;      /* 3 per segment */
	struct mmsghdr *msgs;
	bool dead;
	struct gso_dev_stats st;
};

extern const struct gso_dev_ops gsoi_vnet_ops;

/* Per-segment header scratch of the iov path: virtio header, then the headers. */
#define VNET_SLOT (16u + GSO_MAX_HDR_LEN + 1u)

/*
 * Set up everything but the fd (vnet.c): buffers, scratch, limits, ops.
 * `v` is zeroed by the caller with fd = -1.  Returns 0 or -errno; on error
 * the caller calls gsoi_vnet_free(v).
 */
int gsoi_vnet_init(struct vnet_dev *v, const struct gso_vnet_opts *o, uint32_t scratch_n);
/* Free what gsoi_vnet_init and the transports allocated, close the fd, free v. */
void gsoi_vnet_free(struct vnet_dev *v);
/*
 * The virtio header's hdr_len for a super-segment frame of `frame_len`
 * bytes (L2 header on) whose headers take `hdr_len` bytes, sent through
 * AF_PACKET's sendmmsg: the length of the linear part the kernel gives
 * the skb (vnet.c says why).  At least hdr_len, at most the frame and
 * VNET_LINEAR_MAX.
 */
uint16_t gsoi_vnet_linear_hint(uint32_t frame_len, uint16_t hdr_len);
/* Read and check the options shared by both constructors. */
int gsoi_vnet_read_opts(const struct gso_vnet_opts *o);

#endif
