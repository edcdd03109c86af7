/*
 * libgso-xdp: the AF_XDP backend (gso_xsk__create) of the device interface
 * of <gso/dev.h>: UMEM with TX metadata, TX and completion rings, software
 * GSO with checksum metadata where the device finishes checksums,
 * multi-buffer frames (header + payload reference) where the kernel takes
 * them, and an optional RX ring (gso_dev__recv, with <gso/steer.h>).
 * Conventions and errors are those of <gso/dev.h>.
 */
#ifndef GSO_XSK_H
#define GSO_XSK_H

#include <gso/common.h>
#include <gso/dev.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===================================================================== */
/* AF_XDP backend                                                         */
/* ===================================================================== */

enum gso_xsk_mode {
	GSO_XSK_MODE_AUTO = 0, /* zero-copy if the driver can, else copy */
	GSO_XSK_MODE_COPY = 1, /* copy (generic skb) mode */
	GSO_XSK_MODE_ZEROCOPY = 2, /* zero-copy or fail with -EOPNOTSUPP */
};

#define GSO_XSK_F_ALIGNED     (1u << 0) /* aligned chunk mode (default unaligned; multi-buffer then needs no TX metadata) */
/*
 * No multi-buffer: every frame is copied whole into UMEM.  Multi-buffer
 * saves the copy in user space and UMEM, and is what zero-copy drivers
 * want; in copy mode the kernel copies each fragment into a fresh page
 * anyway, so on a veth whole frames take less CPU in total while
 * multi-buffer takes less user CPU.  Set this in copy mode when total CPU
 * matters more than UMEM.
 */
#define GSO_XSK_F_NO_SG       (1u << 1)
#define GSO_XSK_F_NO_CSUM     (1u << 2) /* no checksum metadata: software checksums, no tx_metadata_len */
/*
 * XDP_UMEM_TX_SW_CSUM: copy mode finishes requested checksums at once, so
 * frames leave complete (for tests that compare bytes).  The kernel sums
 * only the first descriptor of a packet, so this turns multi-buffer off.
 */
#define GSO_XSK_F_KERNEL_CSUM (1u << 3)
#define GSO_XSK_F_KNOWN       0xfu

struct gso_xsk_opts {
	size_t sz;
	uint32_t queue_id;    /* device queue to bind */
	uint32_t mode;        /* enum gso_xsk_mode */
	uint32_t flags;       /* GSO_XSK_F_* */
	uint32_t chunk_size;  /* 0 = 4096; 2048..page size; a power of 2 in aligned mode */
	uint32_t nchunks;     /* UMEM chunks; 0 = 4096 */
	uint32_t buf_chunks;  /* chunks for gso_dev__buf_alloc(); 0 = 3/4 of nchunks; the rest hold headers and frames */
	uint32_t tx_size;     /* TX ring entries, power of 2, 64..32768; 0 = 2048 */
	uint32_t cq_size;     /* completion ring entries, power of 2, >= tx_size; 0 = 2 * tx_size */
	uint32_t tx_budget;   /* copy-mode descriptors per sendto (XDP_MAX_TX_SKB_BUDGET); 0 = tx_size; kernel default 32 where not settable */
	uint32_t bind_wait_ms; /* how long EBUSY on bind is retried (queue still held by a closed socket); 0 = 2000 */
	/*
	 * Receive side: an RX ring of rx_size entries (power of 2, 64..32768;
	 * 0 = none, TX only) and a fill ring of fill_size entries (power of 2,
	 * >= rx_size, <= 65536; 0 = 2 * rx_size), fed from rx_chunks UMEM
	 * chunks of the backend region reserved for receiving (0 = fill_size;
	 * at least 1).  With rx_size, nchunks defaults to 4096 + rx_chunks and
	 * buf_chunks to 3/4 of the chunks not reserved for receiving.
	 */
	uint32_t rx_size;
	uint32_t fill_size;
	uint32_t rx_chunks;
	size_t :0;
};
#define gso_xsk_opts__last_field rx_chunks

/*
 * Open an AF_XDP transmit device on interface `ifindex`, queue
 * opts->queue_id, in the current network namespace.  No XDP program is
 * attached (a TX-only socket needs none).  With opts->rx_size the device
 * also receives (GSO_DEV_RX): the fill ring is filled at once, and frames
 * arrive once an XDP program redirects them here (gso_steer__add_dev).
 *
 * Registers the UMEM (32-byte xdp_umem_reg with tx_metadata_len 24; the
 * registration is retried without XDP_UMEM_TX_METADATA_LEN for Linux
 * 6.8-6.10 and without metadata for older kernels), maps the rings itself,
 * binds with need_wakeup (and XDP_USE_SG unless GSO_XSK_F_NO_SG; retried
 * without it), raises the copy-mode budget, and probes checksum metadata
 * by sending one frame: Ethernet, to the interface's own MAC, ethertype
 * 0x88b5 (IEEE local experimental), 60 bytes, carrying a checksum request.
 * Captures on the link see it once; receivers ignore it.  Zero-copy uses
 * checksum metadata only when netlink xsk-features says tx-checksum.
 *
 * Returns 0 and *dev, or -EINVAL (NULL, bad option, unknown flag),
 * -ENODEV (no such interface), -EOPNOTSUPP (zero-copy requested but not
 * available), -EBUSY (queue taken by another socket longer than
 * bind_wait_ms), -ENOMEM, -EPERM, or another errno of the socket calls.
 */
GSO_API int gso_xsk__create(struct gso_dev **dev, int ifindex, const struct gso_xsk_opts *opts);

/* The AF_XDP socket's descriptor (for poll), -EINVAL if `dev` is NULL or not AF_XDP, -ESHUTDOWN after close. */
GSO_API int gso_xsk__fd(const struct gso_dev *dev);

/* The queue an AF_XDP device is bound to, -EINVAL if `dev` is NULL or not AF_XDP, -ESHUTDOWN after close. */
GSO_API int gso_xsk__queue(const struct gso_dev *dev);

#ifdef __cplusplus
}
#endif
#endif
