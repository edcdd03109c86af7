/*
 * The transmit device interface, backend side (not installed).
 *
 * Every backend embeds struct gso_dev first in its own struct and fills an
 * ops table.  dev.c implements the public gso_dev__* calls once: argument
 * and state checks, the sz handling of output structs, and the buffer
 * calls over struct dev_mem, so a backend only does its own work.
 *
 * Backends that segment in software (AF_XDP) and backends that hand whole
 * super-segments to something that segments (AF_PACKET + virtio_net_hdr,
 * the e1000 device model) fit the same table: `plan` tells the caller
 * which it is, per super-segment.
 *
 * Included by the backends: xsk/, vnet/ (through tsodev_internal.h) and
 * the e1000 model; and by dev/'s own files.
 */
#ifndef GSO_XDP_DEV_INTERNAL_H
#define GSO_XDP_DEV_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <gso/dev.h>
#include "umem_alloc_internal.h"

/* Only on clear hot/cold splits (a fault on the data path). */
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

struct gso_dev_ops {
	const char *kind; /* "af_xdp", "af_packet", "e1000" */
	/* Fill every field of a full-size struct (dev.c copies caps->sz bytes). */
	void (*caps)(const struct gso_dev *dev, struct gso_dev_caps *caps);
	/* Called only while the device is open; dev.c has checked NULL args and n > 0. */
	int (*plan)(struct gso_dev *dev, const struct gso_tx *tx, struct gso_tx_plan *plan);
	int (*submit)(struct gso_dev *dev, const struct gso_tx *tx, unsigned n);
	int (*kick)(struct gso_dev *dev);
	int (*reap)(struct gso_dev *dev, unsigned max);
	/* Fill the backend's counters of a full-size struct; dev.c adds the chunk counts. */
	void (*stats)(struct gso_dev *dev, struct gso_dev_stats *st);
	/* Tear down the kernel side and reclaim every in-flight reference. */
	void (*close)(struct gso_dev *dev);
	/* Free the backend (after close); must free `dev` itself. */
	void (*destroy)(struct gso_dev *dev);
	/*
	 * Receive side, optional (NULL: -EOPNOTSUPP).  dev.c has checked
	 * NULL args and n > 0; recv and rx_wait run only while open,
	 * rx_release also after close.
	 */
	int (*recv)(struct gso_dev *dev, struct gso_rx_pkt *out, unsigned n);
	int (*rx_release)(struct gso_dev *dev, const struct gso_rx_pkt *pkts, unsigned n);
	int (*rx_wait)(struct gso_dev *dev, int timeout_ms);
	/* Descriptors posted, not completed (called while open). */
	uint32_t (*inflight)(const struct gso_dev *dev);
	/*
	 * Descriptors completed since creation, however reaped (internal
	 * reaps included).  Optional: NULL for a device whose inflight() is
	 * always 0 (it completes inside submit; nothing to learn from).
	 */
	uint64_t (*completed)(const struct gso_dev *dev);
	/*
	 * Optional: the largest payload a whole-frame copy of a segment with
	 * template `t` holds (AF_XDP: a chunk less metadata and headers), when
	 * `tx_flags` (GSO_TX_F_COPY) or the device copies frames whole; return
	 * UINT32_MAX when frames are not limited by device memory.  dev.c
	 * applies the MTU itself.
	 */
	uint32_t (*frame_room)(const struct gso_dev *dev, const struct gso_tmpl *t, uint32_t tx_flags);
	/* Optional: run a pending probe (GSO_DEV_PROBE_PENDING); as gso_dev__probe(). */
	int (*probe)(struct gso_dev *dev);
};

/*
 * Device memory cut into chunks (AF_XDP: the UMEM).  Buffers handed to
 * callers are runs of chunks in the buffer region of `ua`; each starts
 * `headroom` bytes into its first chunk (room for TX metadata in front of
 * payload descriptors).
 */
struct dev_mem {
	uint8_t *base;
	uint64_t len;
	uint32_t chunk_size;
	uint32_t headroom;
	struct umem_alloc ua;
};

struct gso_dev {
	const struct gso_dev_ops *ops;
	struct dev_mem *mem;  /* NULL: the backend offers no buffers */
	bool closed;
	int ifindex;          /* the interface sent on; 0: none (callback wire) */
	char name[32];
	uint64_t buf_nobufs;  /* buffer allocations refused for lack of memory */
};

/*
 * Check that [off, off + len) of `buf` may be sent: a buffer of `mem`,
 * inside its capacity, not in a released chunk, every chunk still held.
 * Returns 0 or -EINVAL.
 */
int gsoi_dev_buf_check(const struct dev_mem *mem, const struct gso_buf *buf, uint32_t off, uint32_t len);

/* ops->completed, or 0 for a closed device or one without the op. */
uint64_t gsoi_dev_completed(const struct gso_dev *dev);

/* Offset in device memory of byte `off` of `buf`. */
static inline uint64_t dev_buf_addr(const struct dev_mem *mem, const struct gso_buf *buf, uint32_t off)
{
	return (uint64_t)buf->first_ * mem->chunk_size + mem->headroom + off;
}

#endif
