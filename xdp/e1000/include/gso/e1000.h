/*
 * libgso-e1000: an e1000-class TSO device model (gso_e1000__create), a
 * stand-in for a NIC with TSO in tests and benchmarks.  A descriptor ring
 * in shared memory (context + data descriptors, as Linux e1000_tso()
 * writes them) is consumed by a device thread that segments as QEMU's
 * e1000 does and puts the frames on the wire through an AF_XDP socket or
 * a callback.  It implements the device interface of <gso/dev.h>
 * (gso_dev__submit, gso_tso__submit and friends); conventions and errors
 * are those of that header.
 *
 * Not installed: a static library of its own (libgso-e1000.a) that the
 * bench programs and the tests link before libgso-xdp.a, so that a user
 * of AF_XDP links no device model.
 */
#ifndef GSO_E1000_H
#define GSO_E1000_H

#include <gso/common.h>
#include <gso/offload.h>
#include <gso/dev.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===================================================================== */
/* e1000-class TSO device model                                           */
/* ===================================================================== */

/*
 * Where the device's frames go when it has no interface (ifindex 0):
 * called on the device thread for every frame, in order.  `frame` is valid
 * during the call only.
 */
typedef void (*gso_e1000_wire_fn)(void *ctx, const void *frame, uint32_t len);

#define GSO_E1000_F_NO_THREAD (1u << 0) /* no device thread: gso_e1000__poll() runs the device (tests) */
#define GSO_E1000_F_TXOP      (1u << 1) /* transmit-opportunity mode: send in aggregates (below) */
#define GSO_E1000_F_TXOP_NO_JITTER (1u << 2) /* with F_TXOP: opportunities exactly txop_us apart */
#define GSO_E1000_F_TXOP_SPLIT (1u << 3) /* with F_TXOP: aggregates of frames, a TSO packet may span them */
#define GSO_E1000_F_KNOWN     0xfu

/*
 * Transmit-opportunity mode (GSO_E1000_F_TXOP): a device that sends in
 * aggregates, as Wi-Fi does (A-MPDU: a station wins the medium every few
 * milliseconds and then sends many frames at once).  Linux's 2015 TSO
 * autosizing starved such devices (ath10k fell from 600 to 250 Mbit/s),
 * which is what this mode lets tests reproduce.
 *
 *  - The device sends only at opportunities, txop_us apart (0 = 4000),
 *    each interval drawn uniformly from txop_us +- txop_jitter_us (0 =
 *    txop_us / 8; GSO_E1000_F_TXOP_NO_JITTER for none).  Opportunities keep
 *    to their schedule; one the device reaches more than half an interval
 *    late (its thread was not scheduled) restarts the schedule from then.
 *  - At an opportunity it takes whole packets (a packet is the descriptors
 *    up to EOP; a TSO packet counts as the frames it makes), in ring order,
 *    while the aggregate stays within txop_frames frames (0 = 64) and
 *    txop_bytes frame bytes (0 = no limit), but always at least one
 *    packet, however large.  Their frames go on the wire at once.
 *    With GSO_E1000_F_TXOP_SPLIT the limits count frames, not packets, as
 *    A-MPDU does (mac80211 segments a GSO packet before it aggregates):
 *    the aggregate takes frames up to txop_frames and txop_bytes (at
 *    least one), and a TSO packet's other frames go in the aggregates
 *    that follow; the packet completes with the one that carries its
 *    last frame.  Without it, a TSO packet larger than txop_frames goes
 *    whole, alone, which lets large packets beat the limit.
 *  - The aggregate is on the air for its frame bytes / link_rate (bytes/s;
 *    0 = no airtime).  Its descriptors complete (the head register moves,
 *    gso_dev__reap() and gso_dev__inflight() see them) only when it has
 *    left: at the opportunity's start + airtime.
 *  - The next opportunity is at max(start + the interval, end of the
 *    airtime).  An opportunity with nothing posted sends nothing, and the
 *    next one follows an interval later.
 *
 * The device thread sleeps between opportunities (an absolute deadline; no
 * polling, so spin_us does not apply).  With GSO_E1000_F_NO_THREAD,
 * gso_e1000__poll() does what is due at the time of the call: whoever
 * polls decides how late the opportunities run.  gso_e1000_stats has the
 * mode's counters (txops, txop_*).
 */

/*
 * MTU range of a callback wire (opts->mtu with ifindex 0): outside it
 * gso_e1000__create() fails with -EINVAL.  The upper bound is what an IPv4
 * total length can describe; an interface with a larger MTU (loopback has
 * 65536) cannot be modelled.  Callers compare against these to say which
 * limit an -EINVAL came from.
 */
#define GSO_E1000_MIN_MTU 68u
#define GSO_E1000_MAX_MTU 65535u

struct gso_e1000_opts {
	size_t sz;
	uint32_t mode;         /* enum gso_tso_mode, the device default; 0 = auto */
	uint32_t tso_flags;    /* GSO_TSO_F_* defaults */
	uint32_t flags;        /* GSO_E1000_F_* */
	uint32_t ring_size;    /* transmit descriptors, power of 2, 64..65536; 0 = 4096 */
	uint32_t chunk_size;   /* memory chunk, 2048..page size, power of 2; 0 = 4096 */
	uint32_t nchunks;      /* driver-side chunks (buffers + headers); 0 = 4096 */
	uint32_t buf_chunks;   /* of those, for gso_dev__buf_alloc(); 0 = 3/4 */
	uint32_t wire_frames;  /* device-side frame chunks (AF_XDP UMEM); 0 = 2048 */
	uint32_t max_segs;     /* segments per super-segment the device advertises; 0 = 65535 */
	uint32_t mtu;          /* ifindex 0 only: MTU of the callback wire, GSO_E1000_MIN_MTU..
				* GSO_E1000_MAX_MTU; 0 = 1500 */
	uint32_t cpu;          /* 1 + the CPU to pin the device thread to; 0 = not pinned */
	uint32_t spin_us;      /* device thread: microseconds of polling before it sleeps; 0 = 50 */
	uint32_t queue_id;     /* AF_XDP queue */
	uint32_t xsk_mode;     /* enum gso_xsk_mode of the AF_XDP socket */
	gso_e1000_wire_fn wire_fn; /* ifindex 0: frames go here instead of AF_XDP */
	void *wire_ctx;
	/* GSO_E1000_F_TXOP (see above); each must be 0 without it */
	uint32_t txop_us;        /* interval between opportunities, 1..1000000; 0 = 4000 */
	uint32_t txop_jitter_us; /* uniform +- per interval, below txop_us; 0 = txop_us / 8 (set it
				  * with GSO_E1000_F_TXOP_NO_JITTER is -EINVAL) */
	uint32_t txop_frames;    /* frames per aggregate at most, 1..65535; 0 = 64 */
	uint32_t txop_bytes;     /* frame bytes per aggregate at most; 0 = no byte limit */
	uint64_t link_rate;      /* bytes/s on the air; 0 = no airtime (completion at the opportunity) */
	size_t :0;
};
#define gso_e1000_opts__last_field link_rate

/*
 * Create an e1000-class transmit device.  The caller's side (this thread)
 * acts as the Linux e1000 driver: per super-segment a context descriptor
 * (gso_offload_e1000) and data descriptors (gso_offload_e1000_data: at
 * most 4 KiB each) pointing at a header copy and at the payload in the
 * device memory, then a tail bump.  The device thread (own core with
 * opts->cpu) consumes the ring as QEMU's e1000 does: IPv4 tot_len and ID
 * (template ID + frame index) per frame, TCP seq, FIN/PSH only on the
 * last frame, CWR kept on every frame, UDP length, checksum seed + frame
 * L4 length then the L4 and IPv4 header checksums (a computed 0 is sent
 * as 0xffff), and sends each frame through an AF_XDP socket bound to
 * `ifindex` queue opts->queue_id (copy mode on veth), or to opts->wire_fn
 * with ifindex 0.  Nothing of a packet whose descriptors are inconsistent
 * (no EOP before a context descriptor, lengths not matching PAYLEN,
 * addresses outside the device memory) is sent; it is counted (struct
 * gso_e1000_stats).
 *
 * Capabilities: GSO_DEV_SEG_TCP4|UDP4, GSO_DEV_CSUM, GSO_DEV_SG (the
 * device reads payload in place), GSO_DEV_BUFS.  IPv6 super-segments are
 * segmented in software (auto) and their checksums finished by the device.
 *
 * Device memory: opts->nchunks driver chunks (buffers, header copies,
 * copies of payload given as plain memory) and, with an interface,
 * opts->wire_frames chunks of one frame each for the AF_XDP socket, whose
 * UMEM is the whole of it; a frame must fit a chunk (MTU + 18 <= chunk).
 *
 * Returns 0 and *dev, or -EINVAL (NULL, bad option, unknown flag, ifindex
 * 0 without wire_fn, a txop_* field or link_rate set without
 * GSO_E1000_F_TXOP, GSO_E1000_F_TXOP_NO_JITTER or _SPLIT without it, a
 * txop_* field out of its range, txop_jitter_us not below txop_us,
 * opts->mtu outside GSO_E1000_MIN_MTU..GSO_E1000_MAX_MTU or set with an
 * interface), -EMSGSIZE (the interface's MTU too large for
 * the chunk size),
 * -ENODEV, -ENOMEM, -EPERM, -EBUSY, or an errno of the AF_XDP socket or
 * of pthread_create.
 */
GSO_API int gso_e1000__create(struct gso_dev **dev, int ifindex, const struct gso_e1000_opts *opts);

/*
 * With GSO_E1000_F_NO_THREAD: run the device on the calling thread until
 * the ring is empty or the wire takes no more.  With GSO_E1000_F_TXOP:
 * complete the aggregate whose airtime is over and send at the
 * opportunity that is due, if any (nothing else: the next call after the
 * next opportunity sends more).  Returns the number of descriptors
 * consumed (>= 0), -EINVAL (NULL, not an e1000 device, or it has a
 * thread), -ESHUTDOWN.
 */
GSO_API int gso_e1000__poll(struct gso_dev *dev);

/* Counters of the device model (struct gso_e1000_stats). */
struct gso_e1000_stats {
	size_t sz;
	uint64_t descs;        /* descriptors consumed */
	uint64_t ctx_descs;    /* of those, context descriptors */
	uint64_t packets;      /* packets (EOP) transmitted */
	uint64_t tso_packets;  /* of those, with TSE */
	uint64_t frames;       /* frames put on the wire */
	uint64_t bytes;        /* frame bytes put on the wire */
	uint64_t eop_missing;  /* packets dropped: a context/legacy descriptor came before EOP */
	uint64_t tail_no_eop;  /* times the tail stopped inside a packet (the device waits for the rest) */
	uint64_t bad_desc;     /* packets dropped: legacy/reserved descriptor, address outside memory, VLE */
	uint64_t bad_ctx;      /* packets dropped: no usable context (offsets outside the frame, IPv6 TSE, MSS 0) */
	uint64_t bad_len;      /* packets dropped: data != HDRLEN + PAYLEN, shorter than HDRLEN, frame over the MTU */
	uint64_t wire_full;    /* times the wire took no more frames (the device waited) */
	uint64_t wire_errors;  /* wire send errors other than "busy" */
	uint64_t ring_full;    /* driver submits refused: descriptor ring full */
	uint64_t wakeups;      /* doorbells that woke a sleeping device thread */
	uint64_t dev_cpu_ns;   /* device thread CPU time (CLOCK_THREAD_CPUTIME_ID) */
	uint64_t dev_busy_ns;  /* of which spent with descriptors to process */
	uint32_t last_err_desc; /* ring index of the last dropped packet's first descriptor */
	uint32_t inflight_descs; /* descriptors posted, not yet consumed */
	/* GSO_E1000_F_TXOP (0 without it): mean aggregate txop_bytes / txops frame bytes and
	 * frames / txops frames; mean interval between aggregates txop_span_ns / (txops - 1) */
	uint64_t txops;          /* aggregates sent */
	uint64_t txop_empty;     /* opportunities with nothing to send */
	uint64_t txop_full;      /* aggregates closed by txop_frames/txop_bytes with more posted */
	uint64_t txop_bytes;     /* frame bytes sent in aggregates */
	uint64_t txop_frames_max; /* largest aggregate, frames */
	uint64_t txop_bytes_max; /* largest aggregate, frame bytes */
	uint64_t txop_airtime_ns; /* sum of the aggregates' airtime */
	uint64_t txop_span_ns;   /* from the first aggregate's start to the last one's */
	uint64_t txop_late_ns;   /* sum of how late the device reached its opportunities */
	uint64_t txop_late_max_ns; /* the latest it reached one */
	size_t :0;
};
#define gso_e1000_stats__last_field txop_late_max_ns

/*
 * Fill `st` up to st->sz.  Returns 0, -EINVAL (NULL, sz too small, not an
 * e1000 device).  Works after gso_dev__close().
 */
GSO_API int gso_e1000__stats(struct gso_dev *dev, struct gso_e1000_stats *st);

#ifdef __cplusplus
}
#endif
#endif
