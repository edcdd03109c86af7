/*
 * The AF_XDP device (not installed): its state, shared by xsk_dev.c
 * (creation, options, capabilities, statistics, receive glue, teardown,
 * the ops table) and xsk_tx.c (the transmit path: planning, software GSO
 * into UMEM, TX metadata, kicking, completions).
 */
#ifndef GSO_XDP_XSK_DEV_INTERNAL_H
#define GSO_XDP_XSK_DEV_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <gso/seg.h>
#include <gso/dev.h>
#include <gso/xsk.h>
#include "dev/dev_internal.h"
#include "xsk_internal.h"
#include "xsk_rx_internal.h"

struct slab {
	bool valid;
	uint32_t chunk;
	uint32_t off;
};

struct xsk_dev {
	struct gso_dev dev; /* first: the public handle */
	struct dev_mem mem;
	struct xsk_sock sk;
	int ifindex;
	uint32_t queue_id;
	uint32_t mtu;
	uint32_t meta;      /* metadata room before every descriptor (the registered tx_metadata_len) */
	uint32_t max_descs; /* descriptors per packet */
	uint32_t cs_shift;  /* log2(chunk_size) when a power of 2, else 0: a 64-bit divide per completion is dozens of cycles */
	bool csum;          /* frames may carry checksum requests */
	bool sg;            /* frames may be header + payload references */
	bool dead;          /* the interface went away */
	bool link_down;     /* the last kick said -ENETDOWN; frames wait in the ring */
	bool probe_pending; /* the checksum probe could not run (interface down at creation) */
	uint64_t probe_tried_ns; /* last time submit tried the pending probe */
	int64_t invalid_base; /* kernel tx_invalid_descs not ours (the probe) */
	uint64_t kernel_invalid_final;
	struct slab slab;
	uint32_t scratch_n;
	struct gso_frame *frames;
	struct gso_seg_ref *refs;
	uint32_t inflight;
	struct xsk_rx rx;   /* receive side (rx.n == 0: none) */
	struct gso_dev_stats st; /* the backend's counters */
};

static inline struct xsk_dev *to_xsk(struct gso_dev *d)
{
	return (struct xsk_dev *)d;
}

static inline uint32_t align8(uint32_t v)
{
	return (v + 7) & ~7u;
}

/* ---- the transmit path (xsk_tx.c), the device's ops ---- */

int gsoi_xsk_reap(struct gso_dev *d, unsigned max);
/* Push what the TX ring holds to the kernel; returns as gso_dev__kick(). */
int gsoi_xsk_push(struct xsk_dev *x);
int gsoi_xsk_kick(struct gso_dev *d);
int gsoi_xsk_submit(struct gso_dev *d, const struct gso_tx *tx, unsigned n);
int gsoi_xsk_plan(struct gso_dev *d, const struct gso_tx *tx, struct gso_tx_plan *plan);

/* ---- the device (xsk_dev.c) ---- */

/* Run the checksum probe a device created with its interface down still owes (ops.probe). */
int gsoi_xsk_probe_op(struct gso_dev *d);

#endif
