/*
 * The one place for kernel uapi that Debian 12's linux-libc-dev (6.1) lacks.
 *
 * Each constant sits behind its own #ifndef, so a newer <linux/if_xdp.h>
 * wins when it has it, and names the kernel release that introduced it
 * (releases marked "about" were not re-verified against a tag).  Structs
 * whose size changed between releases get our own names, so that the size
 * we pass to the kernel is the one we mean, whatever header is installed.
 * Not installed; any folder of xdp/ (and bench/ and tests/) may include it.
 */
#ifndef GSO_XDP_COMPAT_H
#define GSO_XDP_COMPAT_H

#include <stdint.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>

#ifndef AF_XDP
#define AF_XDP 44                       /* Linux 4.18 */
#endif
#ifndef SOL_XDP
#define SOL_XDP 283                     /* Linux 4.18 */
#endif

/* ---- bind flags (sockaddr_xdp.sxdp_flags) ---- */
#ifndef XDP_USE_NEED_WAKEUP
#define XDP_USE_NEED_WAKEUP (1 << 3)    /* Linux 5.4 */
#endif
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)             /* Linux 6.6: multi-buffer */
#endif

/* ---- UMEM registration flags (xdp_umem_reg.flags) ---- */
#ifndef XDP_UMEM_UNALIGNED_CHUNK_FLAG
#define XDP_UMEM_UNALIGNED_CHUNK_FLAG (1 << 0) /* Linux 5.4 */
#endif
#ifndef XDP_UMEM_TX_SW_CSUM
#define XDP_UMEM_TX_SW_CSUM (1 << 1)    /* Linux 6.8: copy mode finishes checksum requests in software */
#endif
#ifndef XDP_UMEM_TX_METADATA_LEN
#define XDP_UMEM_TX_METADATA_LEN (1 << 2) /* about Linux 6.11: tx_metadata_len only honoured with this flag */
#endif

/* ---- socket options ---- */
#ifndef XDP_MMAP_OFFSETS
#define XDP_MMAP_OFFSETS 1
#endif
#ifndef XDP_STATISTICS
#define XDP_STATISTICS 7
#endif
#ifndef XDP_OPTIONS
#define XDP_OPTIONS 8                   /* Linux 5.3 */
#endif
#ifndef XDP_OPTIONS_ZEROCOPY
#define XDP_OPTIONS_ZEROCOPY (1 << 0)   /* Linux 5.3 */
#endif
#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9         /* about Linux 6.17: copy-mode descriptors per sendto, [32, tx ring size] */
#endif

/* ---- descriptor options (xdp_desc.options) ---- */
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)          /* Linux 6.6: another fragment of this packet follows */
#endif
#ifndef XDP_TX_METADATA
#define XDP_TX_METADATA (1 << 1)        /* Linux 6.8: metadata before addr is valid */
#endif

/* ---- TX metadata flags (struct compat_xsk_tx_metadata.flags) ---- */
#ifndef XDP_TXMD_FLAGS_TIMESTAMP
#define XDP_TXMD_FLAGS_TIMESTAMP (1 << 0) /* Linux 6.8 */
#endif
#ifndef XDP_TXMD_FLAGS_CHECKSUM
#define XDP_TXMD_FLAGS_CHECKSUM (1 << 1)  /* Linux 6.8 */
#endif
#ifndef XDP_TXMD_FLAGS_LAUNCH_TIME
#define XDP_TXMD_FLAGS_LAUNCH_TIME (1 << 2) /* Linux 6.15 */
#endif

#ifndef XDP_RING_NEED_WAKEUP
#define XDP_RING_NEED_WAKEUP (1 << 0)   /* Linux 5.4 */
#endif
#ifndef XSK_UNALIGNED_BUF_OFFSET_SHIFT
#define XSK_UNALIGNED_BUF_OFFSET_SHIFT 48 /* Linux 5.4 */
#endif
#ifndef XSK_UNALIGNED_BUF_ADDR_MASK
#define XSK_UNALIGNED_BUF_ADDR_MASK ((1ULL << XSK_UNALIGNED_BUF_OFFSET_SHIFT) - 1)
#endif

/*
 * struct xdp_umem_reg as of Linux 6.8 (tx_metadata_len) and about 6.11
 * (flag XDP_UMEM_TX_METADATA_LEN).  Always zero it and pass all 32 bytes:
 * 6.1 has 28 bytes plus 4 of tail padding, and 6.8-6.10 read that padding
 * as tx_metadata_len.
 */
struct compat_xdp_umem_reg {
	uint64_t addr;
	uint64_t len;
	uint32_t chunk_size;
	uint32_t headroom;
	uint32_t flags;
	uint32_t tx_metadata_len;
};
_Static_assert(sizeof(struct compat_xdp_umem_reg) == 32, "xdp_umem_reg v2 is 32 bytes");

/*
 * struct xsk_tx_metadata as of Linux 6.15 (launch_time makes it 24 bytes;
 * 6.8-6.14 have 16).  It sits tx_metadata_len bytes before a descriptor's
 * addr; only the first descriptor of a packet carries it.
 */
struct compat_xsk_tx_metadata {
	uint64_t flags;
	union {
		struct {
			uint16_t csum_start;  /* from the packet start */
			uint16_t csum_offset; /* from csum_start */
			uint32_t reserved;    /* must be zero */
			uint64_t launch_time; /* ns, NIC PTP clock */
		} request;
		struct {
			uint64_t tx_timestamp;
		} completion;
	};
};
_Static_assert(sizeof(struct compat_xsk_tx_metadata) == 24, "xsk_tx_metadata is 24 bytes");

/* struct xdp_statistics as of Linux 5.9 (48 bytes; 4.18 had the first 3). */
struct compat_xdp_statistics {
	uint64_t rx_dropped;
	uint64_t rx_invalid_descs;
	uint64_t tx_invalid_descs;
	uint64_t rx_ring_full;
	uint64_t rx_fill_ring_empty_descs;
	uint64_t tx_ring_empty_descs;
};

/* ---- generic netlink family "netdev" (Linux 6.3, include/uapi/linux/netdev.h) ---- */
#ifndef NETDEV_FAMILY_NAME
#define NETDEV_FAMILY_NAME "netdev"
#endif
#ifndef NETDEV_CMD_DEV_GET
#define NETDEV_CMD_DEV_GET 1
#endif
#ifndef NETDEV_A_DEV_IFINDEX
#define NETDEV_A_DEV_IFINDEX 1
#endif
#ifndef NETDEV_A_DEV_XDP_FEATURES
#define NETDEV_A_DEV_XDP_FEATURES 3
#endif
#ifndef NETDEV_A_DEV_XDP_ZC_MAX_SEGS
#define NETDEV_A_DEV_XDP_ZC_MAX_SEGS 4  /* Linux 6.6 */
#endif
#ifndef NETDEV_A_DEV_XDP_RX_METADATA_FEATURES
#define NETDEV_A_DEV_XDP_RX_METADATA_FEATURES 5 /* Linux 6.8 */
#endif
#ifndef NETDEV_A_DEV_XSK_FEATURES
#define NETDEV_A_DEV_XSK_FEATURES 6     /* Linux 6.8 */
#endif
#ifndef NETDEV_XDP_ACT_BASIC
#define NETDEV_XDP_ACT_BASIC 1
#define NETDEV_XDP_ACT_REDIRECT 2
#define NETDEV_XDP_ACT_NDO_XMIT 4
#define NETDEV_XDP_ACT_XSK_ZEROCOPY 8
#define NETDEV_XDP_ACT_HW_OFFLOAD 16
#define NETDEV_XDP_ACT_RX_SG 32
#define NETDEV_XDP_ACT_NDO_XMIT_SG 64
#endif
#ifndef NETDEV_XSK_FLAGS_TX_TIMESTAMP
#define NETDEV_XSK_FLAGS_TX_TIMESTAMP 1 /* Linux 6.8 */
#endif
#ifndef NETDEV_XSK_FLAGS_TX_CHECKSUM
#define NETDEV_XSK_FLAGS_TX_CHECKSUM 2  /* Linux 6.8 */
#endif
#ifndef NETDEV_XSK_FLAGS_TX_LAUNCH_TIME_FIFO
#define NETDEV_XSK_FLAGS_TX_LAUNCH_TIME_FIFO 4 /* Linux 6.15 */
#endif

/* Bytes before a received frame in its chunk: XDP_PACKET_HEADROOM (copy mode, most drivers). */
#define COMPAT_XDP_PACKET_HEADROOM 256u

/* Copy-mode descriptors per packet: MAX_SKB_FRAGS + 1 with the usual 17. */
#define COMPAT_XSK_COPY_MAX_DESCS 18u
/* Copy-mode descriptors per sendto() before XDP_MAX_TX_SKB_BUDGET. */
#define COMPAT_XSK_TX_BUDGET_DEFAULT 32u

#endif
