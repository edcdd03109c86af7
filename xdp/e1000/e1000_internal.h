/*
 * The e1000-class TSO device model (not installed).
 *
 *   e1000_engine.c  the transmit engine: descriptor ring in memory -> frames.
 *                   Pure: no threads, no syscalls; the unit tests drive it.
 *   e1000_wire.c    where frames go: an AF_XDP socket, or a callback.
 *   e1000_dev.c     the device thread (own core, doorbell, CPU accounting).
 *   e1000_txop.c    transmit-opportunity mode: when aggregates leave and
 *                   complete.  Time is an argument: no clock, no syscalls.
 *   e1000.c         the driver side: struct gso_dev backend, descriptors
 *                   for each super-segment, completions.
 *
 * Behaviour follows QEMU hw/net/e1000.c (process_tx_desc, xmit_seg,
 * putsum) as summarised in offload-reference section 4, with these
 * deliberate differences, all of which drop the packet and count it where
 * QEMU would send something broken: no EOP before a context or legacy
 * descriptor (QEMU keeps accumulating), TSO data not exactly HDRLEN +
 * PAYLEN, TSE without TUCMD.IP (QEMU writes a wrong IPv6 payload length),
 * checksum insertion without a context, VLE (tag insertion needs CTRL.VME,
 * not modelled), legacy descriptors.
 */
#ifndef GSO_XDP_E1000_INTERNAL_H
#define GSO_XDP_E1000_INTERNAL_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <pthread.h>

#include <gso/offload.h>
#include <gso/dev.h>
#include <gso/xsk.h>
#include <gso/e1000.h>
#include "dev/tsodev_internal.h"

/* STA bits the device writes back (byte 12 of every descriptor). */
#define E1000_STA_DD 0x01u

/* Where frames go.  Called on the device's thread only. */
struct e1000_wire {
	/* Room for up to `want` more frames of up to `max_len` bytes; returns how many (0: full). */
	uint32_t (*room)(struct e1000_wire *w, uint32_t want, uint32_t max_len);
	/* Buffer for the next frame, at least max_len bytes (after room() made room). */
	uint8_t *(*buf)(struct e1000_wire *w);
	/* The frame at buf() is complete with `len` bytes. */
	void (*put)(struct e1000_wire *w, uint32_t len);
	/* End of a batch: push what was put. */
	void (*flush)(struct e1000_wire *w);
};

/* Device counters: written by the device's thread only, read by anyone. */
struct e1000_counters {
	_Atomic uint64_t descs, ctx_descs, packets, tso_packets, frames, bytes;
	_Atomic uint64_t eop_missing, tail_no_eop, bad_desc, bad_ctx, bad_len, wire_full;
	_Atomic uint32_t last_err_desc;
};

static inline void e1000_cnt_add(_Atomic uint64_t *c, uint64_t v)
{
	/* Single writer: a relaxed load and store are enough, no locked add. */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v, memory_order_relaxed);
}

struct e1000_piece {
	const uint8_t *p;
	uint32_t len;
};

/* The packet being emitted (validated, descriptors first..end-1). */
struct e1000_pkt {
	bool active;
	bool tse;
	uint8_t popts;
	uint32_t first, end;  /* ring indices (free-running) */
	uint32_t npieces;
	uint32_t total;       /* data bytes */
	uint32_t frames;      /* frames it makes */
	uint32_t done;        /* frames emitted */
	uint32_t cur, cur_off; /* payload cursor: piece, offset in it */
	uint32_t ctx;         /* context descriptors right before it */
	bool ctx_held;        /* with a budget: those are not in the head while it is half out */
};

/*
 * What an aggregate may still take (transmit-opportunity mode): the engine
 * starts a packet only if its frames and frame bytes fit, except the
 * aggregate's first packet, which it always takes.  With `split`, frames
 * count one by one instead: a packet's frames may span aggregates, and
 * the aggregate takes at least one frame.
 */
struct e1000_budget {
	uint32_t frames;      /* frames left */
	uint64_t bytes;       /* frame bytes left */
	uint32_t took_frames; /* taken so far */
	uint64_t took_bytes;
	bool split;
	bool full;            /* something posted was left for the next aggregate */
	bool stopped;         /* the engine stopped for the budget (not for a full wire) */
};

struct e1000_engine {
	const uint8_t *dma;   /* device-visible memory: descriptor addresses are offsets into it */
	uint64_t dma_len;
	uint32_t max_frame;   /* longest frame the wire takes, L2 header included */
	struct gso_e1000_ctx tso, csum; /* the two context slots (TSE / not), as QEMU keeps them */
	bool tso_valid, csum_valid;
	struct e1000_pkt pkt;
	struct e1000_piece *pieces; /* ring_size entries */
	uint32_t ring_size;
	uint32_t stall_at;    /* head index at which the tail was last found inside a packet */
	bool stalled;
	uint8_t hdr[GSO_MAX_HDR_LEN + 1]; /* the TSO packet's header as the driver wrote it */
	struct e1000_budget *budget; /* NULL: no limit (the plain device) */
	struct e1000_counters cnt;
};

/*
 * Set up an engine for a ring of `ring_size` descriptors over device
 * memory [dma, dma + dma_len).  Returns 0, -EINVAL or -ENOMEM.
 */
int gsoi_e1000_engine_init(struct e1000_engine *e, uint32_t ring_size, const uint8_t *dma,
			   uint64_t dma_len, uint32_t max_frame);
void gsoi_e1000_engine_fini(struct e1000_engine *e);

/*
 * Consume descriptors of `ring` (ring_size x 16 bytes, index & (size-1))
 * from *head up to `tail` (exclusive, free-running indices) and emit
 * frames to `w`.  A packet's descriptors are consumed only once all its
 * frames are out: a full wire stops the run in the middle of a packet,
 * and the next run resumes it.  Writes STA.DD into every consumed
 * descriptor that has RS.  With e->budget set, stops before a packet
 * the budget cannot take.  Returns the number of descriptors consumed;
 * *head is advanced by as many.
 */
uint32_t gsoi_e1000_engine_run(struct e1000_engine *e, uint8_t *ring, uint32_t *head, uint32_t tail,
			       struct e1000_wire *w);

/* ---- wires (e1000_wire.c) ---- */

struct xsk_wire_cfg {
	int ifindex;
	uint32_t queue_id;
	uint32_t xsk_mode;    /* enum gso_xsk_mode */
	uint8_t *area;        /* the whole device memory, registered as the UMEM */
	uint64_t area_len;
	uint32_t chunk_size;
	uint32_t first_chunk; /* frame chunks [first_chunk, first_chunk + nchunks) */
	uint32_t nchunks;
	uint32_t bind_wait_ms;
};

/* Open an AF_XDP wire; *out is freed with gsoi_e1000_wire_free().  0 or -errno. */
int gsoi_e1000_wire_xsk(struct e1000_wire **out, const struct xsk_wire_cfg *c);
/* A wire that hands each frame to fn (frames up to max_frame bytes). */
int gsoi_e1000_wire_cb(struct e1000_wire **out, gso_e1000_wire_fn fn, void *ctx, uint32_t max_frame);
/* Completions the wire still waits for (AF_XDP); 0 for a callback. */
uint32_t gsoi_e1000_wire_inflight(struct e1000_wire *w);
/* Send errors other than "busy" so far. */
uint64_t gsoi_e1000_wire_errors(const struct e1000_wire *w);
/* Close the socket (if any) and free. */
void gsoi_e1000_wire_free(struct e1000_wire *w);

/* ---- the device (e1000.c: driver side; e1000_dev.c: device thread) ---- */

/* ---- transmit-opportunity mode (e1000_txop.c) ---- */

struct e1000_txop_cfg {
	uint64_t period_ns, jitter_ns;
	uint32_t max_frames;
	uint64_t max_bytes;   /* UINT64_MAX: no limit */
	uint64_t rate;        /* bytes/s; 0: no airtime */
	bool split;           /* GSO_E1000_F_TXOP_SPLIT */
};

/* Counters: written by whoever runs the device, read by anyone. */
struct e1000_txop_counters {
	_Atomic uint64_t txops, empty, full, bytes, frames_max, bytes_max, airtime_ns, span_ns, late_ns,
		late_max_ns;
};

struct e1000_txop {
	bool on;
	struct e1000_txop_cfg c;
	uint64_t rng;
	bool started;         /* next_op is set */
	uint64_t next_op;     /* when the next opportunity is due */
	bool sending;         /* the wire took only part of the aggregate: its frames still go out */
	uint32_t tail;        /* the tail the aggregate was taken from */
	uint64_t start;       /* the aggregate's opportunity */
	uint64_t first_start; /* the first aggregate's (span_ns) */
	bool in_air;          /* the aggregate is on the air until done_at */
	uint64_t done_at;
	uint32_t done_head;   /* the head register to publish at done_at */
	struct e1000_budget budget;
	struct e1000_txop_counters cnt;
};

struct e1000_dev;

/* Set up from the options (GSO_E1000_F_TXOP); t->on stays false without it. */
void gsoi_e1000_txop_init(struct e1000_txop *t, const struct e1000_txop_cfg *c);
/*
 * Do what is due at `now` (CLOCK_MONOTONIC ns): publish the head of an
 * aggregate whose airtime is over, send at an opportunity that is due.
 * *consumed (may be NULL) gets the descriptors taken.  Returns when the
 * next thing is due (<= now: the wire was full, try again soon).
 */
uint64_t gsoi_e1000_txop_step(struct e1000_dev *x, uint64_t now, uint32_t *consumed);
/* The device stops: complete what went on the wire (the head register covers it). */
void gsoi_e1000_txop_flush(struct e1000_dev *x);

/* ---- the device (e1000.c: driver side; e1000_dev.c: device thread) ---- */

struct e1000_slot {
	uint32_t chunk;  /* first driver chunk the descriptor references */
	uint32_t n;      /* how many (0: context descriptor, or none) */
};

struct e1000_dev {
	struct tso_dev t;        /* first */
	struct dev_mem mem;      /* driver chunks [0, dchunks) of `area` */
	uint8_t *area;           /* driver chunks, then the device's frame chunks */
	uint64_t area_len;
	uint32_t dchunks, fchunks;
	uint32_t mtu;
	/* descriptor ring */
	uint8_t *ring;
	uint32_t ring_size;
	uint32_t next;           /* driver: next slot to fill (published as tdt on push) */
	uint32_t clean;          /* driver: first slot not yet completed */
	struct e1000_slot *slots;
	struct { bool valid; uint32_t chunk, off; } slab; /* header slots */
	uint32_t scratch_n;
	struct gso_seg_ref *refs;
	struct gso_e1000_data *dd;
	/* shared with the device thread: each index on its own cache line */
	alignas(64) _Atomic uint32_t tdt;
	alignas(64) _Atomic uint32_t tdh;
	alignas(64) _Atomic uint32_t sleeping;
	_Atomic uint32_t bell;
	_Atomic bool stop;
	_Atomic uint64_t cpu_ns, busy_ns, wakeups;
	alignas(64) uint32_t dev_head; /* device thread only */
	struct e1000_engine eng;
	struct e1000_txop txop;  /* device side (thread, or gso_e1000__poll) only */
	struct e1000_wire *wire;
	pthread_t thr;
	bool threaded, thread_started;
	uint32_t cpu;            /* 1 + CPU to pin to, 0 none */
	uint32_t spin_us;
	struct gso_dev_stats st;
};

/* Start the device thread.  0 or -errno. */
int gsoi_e1000_dev_start(struct e1000_dev *x);
/* Ask the device thread to finish what is queued (up to `ms`), stop and join it. */
void gsoi_e1000_dev_stop(struct e1000_dev *x, unsigned ms);
/* Ring the doorbell after publishing a new tail. */
void gsoi_e1000_dev_doorbell(struct e1000_dev *x);
/* Run the device once on the calling thread (no device thread). */
uint32_t gsoi_e1000_dev_poll(struct e1000_dev *x);

#endif
