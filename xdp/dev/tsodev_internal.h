/*
 * Shared by the two TSO backends (not installed): the common head of
 * their devices, the offload-or-software choice per super-segment, and
 * the submit loop that applies it.
 *
 * The virtio_net_hdr backend (vnet.c, vnet_tap.c) and the e1000 device
 * model (e1000/e1000*.c) both embed struct tso_dev first and fill its hooks;
 * tsodev.c implements gso_tso__* and the backends' ops.submit on top.
 *
 * Included by dev/'s own files and by the two backends (vnet/, e1000/).
 */
#ifndef GSO_XDP_TSODEV_INTERNAL_H
#define GSO_XDP_TSODEV_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <gso/offload.h>
#include <gso/seg.h>
#include <gso/dev.h>
#include "dev_internal.h"

/* What a device segments, for auto mode. */
struct tso_limits {
	uint32_t seg_types;    /* GSO_DEV_SEG_* */
	uint32_t max_hdr_len;  /* longest L2+L3+L4 header */
	uint32_t max_mss;      /* largest MSS */
	uint32_t max_segs;     /* TCP segments per super-segment */
	uint32_t udp_max_segs; /* UDP segments per super-segment (64 or 128) */
	uint32_t max_frame;    /* longest frame on the wire, L2 header included */
	bool cwr_every_seg;    /* keeps CWR on every segment (e1000, DPDK) */
	bool csum;             /* finishes checksums of single packets and software segments */
};

/* The choice for one super-segment. */
struct tso_choice {
	uint8_t why;     /* enum gso_tso_why */
	bool offload;    /* true: `req` goes to the device (GSO, or one packet with checksum offload) */
	bool keep_cwr;   /* offload of a CWR super-segment the user allowed on a cwr_every_seg device */
	struct gso_offload_req req; /* valid when offload */
};

struct tso_dev;

struct tso_hooks {
	/*
	 * Queue one super-segment (not yet pushed to the device) as `c`
	 * says.  Returns 0, -EAGAIN / -ENOBUFS (backpressure, nothing
	 * queued) or a validation error (nothing queued).
	 */
	int (*queue)(struct tso_dev *t, const struct gso_tx *tx, const struct tso_choice *c);
	/* Make room after backpressure: push what is queued, reap. */
	void (*make_room)(struct tso_dev *t);
	/* Push what is queued to the device; returns as gso_dev__kick(). */
	int (*push)(struct tso_dev *t);
};

struct tso_dev {
	struct gso_dev dev;  /* first: the public handle */
	const struct tso_hooks *hooks;
	struct tso_limits lim;
	uint8_t mode;        /* device default enum gso_tso_mode */
	uint8_t flags;       /* device default GSO_TSO_F_* */
	struct gso_tso_stats st; /* counters (sz unused) */
	uint64_t ring_full, umem_full, invalid; /* submit refusals, for struct gso_dev_stats */
	bool link_down;      /* the last push said -ENETDOWN: what is queued waits */
};

/* The TSO device behind `dev` (its ops.submit is gsoi_tso_dev_submit), or NULL. */
struct tso_dev *gsoi_tso_of(struct gso_dev *dev);

/*
 * Decide how to send `tx` under `mode`/`flags`.  Returns 0 and fills `c`,
 * or -EINVAL (bad tx, mode or flags), the errors of
 * gso_offload_describe() for a request that no path can send, and
 * -EOPNOTSUPP when mode is GSO_TSO_OFFLOAD and the device cannot.
 */
int gsoi_tso_choose(const struct tso_limits *l, const struct gso_tx *tx, unsigned mode, unsigned flags,
		    struct tso_choice *c);

/* The ops.submit of a TSO backend: the device's default mode, no flow. */
int gsoi_tso_dev_submit(struct gso_dev *dev, const struct gso_tx *tx, unsigned n);

/*
 * The software path of `tx`, its payload at `payload`: fills `s` (over
 * `ext`) and `o` and returns gso_seg_count() -- the segments, or its error.
 */
int gsoi_tso_sw_count(const struct gso_tx *tx, const void *payload, bool partial, struct gso_super *s,
		      struct gso_extent *ext, struct gso_seg_opts *o);

/* -EMSGSIZE when the first segment's IP packet of `tx` exceeds `mtu`, else 0. */
int gsoi_tso_mtu_check(const struct gso_tx *tx, uint32_t mtu);

#endif
