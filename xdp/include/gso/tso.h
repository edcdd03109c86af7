/*
 * libgso-xdp: backends that let something else segment a super-segment
 * (TSO through driver metadata), and the per-super-segment choice between
 * that and software GSO.
 *
 *  1. virtio_net_hdr backend (gso_vnet__create, gso_vnet__create_tap): an
 *     AF_PACKET socket with PACKET_VNET_HDR, a memory-mapped TPACKET_V2 TX
 *     ring and qdisc bypass, or a TAP opened with IFF_VNET_HDR.  Each
 *     super-segment leaves whole with its virtio_net_hdr; the kernel hands
 *     it to the driver, which programs the NIC's TSO or segments it in
 *     software when the device cannot.
 *  2. e1000-class TSO device model (gso_e1000__create): a descriptor ring
 *     in shared memory (context + data descriptors, as Linux e1000_tso()
 *     writes them) consumed by a device thread that segments as QEMU's
 *     e1000 does and puts the frames on the wire through an AF_XDP socket.
 *  3. Selection (enum gso_tso_mode, struct gso_tso_flow): software,
 *     offload or auto, per device and per flow, with every fallback counted
 *     by reason.
 *
 * Both backends implement the device interface of <gso/xdp.h>
 * (gso_dev__submit and friends); conventions and errors are those of
 * that header.  gso_dev__submit() uses the device's default mode;
 * gso_tso__submit() uses a flow's.
 */
#ifndef GSO_TSO_H
#define GSO_TSO_H

#include <stdbool.h>
#include <gso/common.h>
#include <gso/offload.h>
#include <gso/xdp.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===================================================================== */
/* Selection: software, offload or auto                                   */
/* ===================================================================== */

enum gso_tso_mode {
	/* Offload when the device can (see enum gso_tso_why), else software. */
	GSO_TSO_AUTO = 0,
	/* Always segment in software (the device may still finish checksums). */
	GSO_TSO_SOFTWARE = 1,
	/* Always offload; a super-segment the device cannot take fails with -EOPNOTSUPP. */
	GSO_TSO_OFFLOAD = 2,
};

/*
 * Why a super-segment went the way it did.  GSO_TSO_WHY_OFFLOAD and
 * GSO_TSO_WHY_SINGLE are not fallbacks; every other value is a reason to
 * segment in software.
 */
enum gso_tso_why {
	GSO_TSO_WHY_OFFLOAD = 0, /* handed whole to the device */
	GSO_TSO_WHY_SINGLE,      /* payload <= MSS: one packet, nothing to segment (checksum offload only) */
	GSO_TSO_WHY_MODE,        /* the flow or device is set to GSO_TSO_SOFTWARE */
	GSO_TSO_WHY_PROTO,       /* the device does not segment this L3/L4 (e1000: IPv6) */
	GSO_TSO_WHY_HDR_LEN,     /* headers longer than the device takes */
	GSO_TSO_WHY_MSS,         /* MSS outside the device's range (frame over its MTU) */
	GSO_TSO_WHY_SEGS,        /* more segments than the device takes (virtio UDP: 128) */
	GSO_TSO_WHY_CSUM,        /* software checksums requested (GSO_TX_F_SW_CSUM): the device would compute them */
	GSO_TSO_WHY_ECN,         /* CWR set and the device keeps CWR on every segment (e1000), not allowed */
	GSO_TSO_WHY_IPID,        /* fixed IPv4 IDs requested; the device increments them */
	GSO_TSO_WHY_COUNT
};

/* Name of a reason ("offload", "single", "mode", "proto", ...), or NULL. */
GSO_API const char *gso_tso_why_name(unsigned why);

/* struct gso_tso_flow.flags and gso_tso__set_mode() flags. */
#define GSO_TSO_F_ECN_EVERY (1u << 0) /* auto may offload CWR super-segments to a device that keeps CWR on every segment */
#define GSO_TSO_F_KNOWN     0x1u

/*
 * A flow's (or socket's) choice and its counters.  Owned by the caller,
 * who sets `sz`, `mode` and `flags` (declare it with GSO_OPTS: all-zero
 * is auto); gso_tso__submit() adds to the counters for every
 * super-segment it queues.  `sz` must reach at least `why`; why[] is
 * last, so that a new reason extends it, and reasons past the caller's
 * sz are counted only in the totals.  Not shared between threads.
 */
struct gso_tso_flow {
	size_t sz;
	uint8_t mode;      /* enum gso_tso_mode */
	uint8_t flags;     /* GSO_TSO_F_* */
	uint64_t offloaded; /* super-segments the device segments */
	uint64_t software;  /* super-segments segmented in software (any reason) */
	uint64_t single;    /* super-segments sent as one packet */
	uint64_t why[GSO_TSO_WHY_COUNT]; /* the same, by reason */
	size_t :0;
};
#define gso_tso_flow__last_field why

/*
 * Queue super-segments of one flow: like gso_dev__submit(), but each one
 * is offloaded or segmented in software by the flow's mode (for the
 * backends of this header) and counted in `flow` (NULL: the device's
 * default mode, counted only in the device's statistics).  On an AF_XDP
 * device everything is software (GSO_TSO_OFFLOAD fails with -EOPNOTSUPP).
 *
 * Returns what gso_dev__submit() returns, and -EOPNOTSUPP when the flow is
 * set to GSO_TSO_OFFLOAD and the device cannot segment the first request
 * (a later one ends the batch); -EINVAL also for an unknown mode or flag
 * or a flow whose sz does not reach why.
 */
GSO_API int gso_tso__submit(struct gso_dev *dev, struct gso_tso_flow *flow,
			    const struct gso_tx *tx, unsigned n);

/*
 * Set the default mode and GSO_TSO_F_* flags of a device of this header
 * (used by gso_dev__submit and gso_tso__submit with a NULL flow).  Returns
 * 0, -EINVAL (NULL, unknown mode or flag, not a TSO backend), -ESHUTDOWN.
 */
GSO_API int gso_tso__set_mode(struct gso_dev *dev, enum gso_tso_mode mode, unsigned flags);

/*
 * What gso_tso__submit() would do with `tx` on `dev` under `flow`'s mode
 * and flags (NULL: the device's defaults), decided by the same code and
 * without queueing, sending or counting anything (gsocaps asks it about
 * example super-segments).  On a device without TSO (AF_XDP) the answer
 * is what gso_tso__submit() counts there: everything is software.
 * `tx` payload (buf/data) is not read.
 *
 * Returns the enum gso_tso_why it would count (>= 0: GSO_TSO_WHY_OFFLOAD
 * means the device gets it whole), or -EINVAL (NULL, bad tx, flow sz too
 * small, unknown mode or flag), -EOPNOTSUPP (mode GSO_TSO_OFFLOAD and the device cannot
 * segment it), -ESHUTDOWN, or an error of gso_offload_describe() for a
 * super-segment no path can send.
 */
GSO_API int gso_tso__choice(struct gso_dev *dev, const struct gso_tso_flow *flow,
			    const struct gso_tx *tx);

/* Limits a TSO backend applies in auto mode (struct gso_tso_stats.lim_*). */
struct gso_tso_stats {
	size_t sz;
	uint64_t offloaded;      /* super-segments segmented by the device */
	uint64_t software;       /* super-segments segmented in software */
	uint64_t single;         /* one-packet super-segments */
	uint32_t mode;           /* the device's default enum gso_tso_mode */
	uint32_t seg_types;      /* GSO_DEV_SEG_* the device segments */
	uint32_t lim_hdr_len;    /* longest L2+L3+L4 header it segments */
	uint32_t lim_max_segs;   /* most segments per super-segment (TCP) */
	uint32_t lim_udp_segs;   /* most segments per UDP super-segment */
	uint32_t lim_max_frame;  /* longest frame it emits (hdr_len + MSS) */
	uint32_t cwr_every_seg;  /* 1: the device keeps CWR on every segment (e1000) */
	uint64_t why[GSO_TSO_WHY_COUNT]; /* by reason; last, so that a new reason extends it */
	size_t :0;
};
#define gso_tso_stats__last_field why

/*
 * Fill `st` up to st->sz with the device-wide selection counters and
 * limits.  Returns 0, or -EINVAL (NULL, sz too small, not a TSO backend).
 * Works after gso_dev__close().
 */
GSO_API int gso_tso__stats(struct gso_dev *dev, struct gso_tso_stats *st);

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
 * then says "qdisc").  Payload is copied into the ring at
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
 * Returns the fd, -EINVAL (not a vnet device), -ESHUTDOWN.
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
#define GSO_E1000_F_KNOWN     0x1u

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
	size_t :0;
};
#define gso_e1000_opts__last_field wire_ctx

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
 * 0 without wire_fn, opts->mtu outside GSO_E1000_MIN_MTU..GSO_E1000_MAX_MTU
 * or set with an interface), -EMSGSIZE (the interface's MTU too large for
 * the chunk size),
 * -ENODEV, -ENOMEM, -EPERM, -EBUSY, or an errno of the AF_XDP socket or
 * of pthread_create.
 */
GSO_API int gso_e1000__create(struct gso_dev **dev, int ifindex, const struct gso_e1000_opts *opts);

/*
 * With GSO_E1000_F_NO_THREAD: run the device on the calling thread until
 * the ring is empty or the wire takes no more.  Returns the number of
 * descriptors consumed (>= 0), -EINVAL (NULL, not an e1000 device, or it
 * has a thread), -ESHUTDOWN.
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
	size_t :0;
};
#define gso_e1000_stats__last_field inflight_descs

/*
 * Fill `st` up to st->sz.  Returns 0, -EINVAL (NULL, sz too small, not an
 * e1000 device).  Works after gso_dev__close().
 */
GSO_API int gso_e1000__stats(struct gso_dev *dev, struct gso_e1000_stats *st);

#ifdef __cplusplus
}
#endif
#endif
