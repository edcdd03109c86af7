/*
 * An AF_XDP socket with its UMEM registration and mapped rings (xsk_sock.c,
 * the probe xsk_probe.c), shared by the AF_XDP device (xsk_dev.c,
 * xsk_tx.c) and the capability probes (ifcaps.c).  Not installed.
 *
 * Included by xsk/'s files and by the layers above that use a socket or
 * an AF_XDP device: the steering loader (steer/) and the e1000 model's
 * wire (e1000/e1000_wire.c).
 */
#ifndef GSO_XDP_XSK_INTERNAL_H
#define GSO_XDP_XSK_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ring_internal.h"

struct xsk_sock_cfg {
	int ifindex;
	uint32_t queue_id;
	void *area;          /* UMEM memory, page aligned */
	uint64_t area_len;
	uint32_t chunk_size;
	bool unaligned;      /* XDP_UMEM_UNALIGNED_CHUNK_FLAG */
	bool want_meta;      /* ask for tx_metadata_len = GSO_XSK_TXMD_LEN */
	bool kernel_csum;    /* XDP_UMEM_TX_SW_CSUM */
	uint32_t fill_size;  /* power of 2; bind needs a fill ring even for TX only (then it stays unmapped) */
	uint32_t cq_size;
	uint32_t tx_size;
	uint32_t rx_size;    /* 0: no RX ring; else a power of 2, and the fill ring is mapped too */
	uint16_t bind_flags; /* XDP_COPY / XDP_ZEROCOPY / neither, | XDP_USE_SG | XDP_USE_NEED_WAKEUP */
};

struct xsk_sock {
	int fd;
	uint32_t meta_len;   /* tx_metadata_len the registration was accepted with (0: none) */
	bool kernel_csum;    /* registered with XDP_UMEM_TX_SW_CSUM */
	bool meta_flag;      /* registered with XDP_UMEM_TX_METADATA_LEN */
	bool zerocopy;       /* bound in zero-copy mode */
	uint16_t bind_flags; /* as bound */
	struct xring tx, cq;
	struct xring rx, fill; /* mapped only with rx_size */
};

/*
 * One attempt: socket, UMEM registration (32-byte struct; retried without
 * XDP_UMEM_TX_METADATA_LEN, then without metadata and TX_SW_CSUM, on
 * EINVAL), rings, mmap, bind.  Returns 0, or -errno of the step that
 * failed with nothing left open.  A failed bind consumes the socket's
 * rings in the kernel, so retries need a new attempt.
 */
int gsoi_xsk_sock_open(struct xsk_sock *s, const struct xsk_sock_cfg *c);
/* Unmap the rings, then close (the mmaps hold the socket alive). Idempotent. */
void gsoi_xsk_sock_close(struct xsk_sock *s);

/* XDP_STATISTICS tx_invalid_descs, or -errno. */
int64_t gsoi_xsk_sock_tx_invalid(const struct xsk_sock *s);
/* All of XDP_STATISTICS (fields the kernel does not report stay 0); 0 or -errno. */
int gsoi_xsk_sock_stats(const struct xsk_sock *s, struct compat_xdp_statistics *st);

/* sendto() wake-up; returns 0 or -errno. */
int gsoi_xsk_sock_kick(const struct xsk_sock *s);

/*
 * Probe checksum metadata by sending one 60-byte frame (to `mac`, from
 * `mac`, ethertype 0x88b5) with a checksum request, built at UMEM offset
 * `addr` (with s->meta_len bytes of room before it, in one chunk).  The TX
 * ring must be empty and the completion ring drained.  Returns
 *   1  the kernel took the request and completed the frame;
 *   0  the kernel ignores TX metadata (descriptor invalid, no completion);
 *   -EINVAL  the kernel refused the metadata at send: the descriptor stays
 *            at the ring head and the socket is unusable;
 *   other -errno: could not tell.
 * *completed says whether the frame's completion was reaped here.
 */
int gsoi_xsk_probe_csum(struct xsk_sock *s, uint8_t *area, uint64_t addr, const uint8_t mac[6],
			bool *completed);

/* Copy-mode descriptors per packet: MAX_SKB_FRAGS + 1 as the kernel reports it. */
uint32_t gsoi_xsk_copy_max_descs(void);

struct gso_dev;
/*
 * What the steering loader needs of an AF_XDP device (xsk_dev.c): its
 * interface, queue, socket and whether it has a receive side.  Returns 0,
 * -EINVAL (not an AF_XDP device) or -ESHUTDOWN (closed).
 */
int gsoi_xsk_dev_info(const struct gso_dev *d, int *ifindex, uint32_t *queue_id, int *fd, bool *rx);

#endif
