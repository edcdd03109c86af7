/*
 * libgso-xdp: the transmit device interface every backend implements, and
 * the per-super-segment choice between offload and software GSO.
 *
 *  1. The device interface (struct gso_dev): capabilities, buffers,
 *     plan, submit, kick, reap, statistics, receive, teardown.  A backend
 *     either segments super-segments in software (AF_XDP, <gso/xsk.h>: no
 *     kernel offers TSO through AF_XDP) or hands them to something that
 *     segments (virtio_net_hdr, <gso/vnet.h>; a device model); callers see
 *     the same calls.
 *  2. Offload selection (enum gso_tso_mode, struct gso_tso_flow): software,
 *     offload or auto, per device and per flow, with every fallback counted
 *     by reason.  gso_dev__submit() uses the device's default mode;
 *     gso_tso__submit() uses a flow's.
 *
 * Conventions (as in <gso/gso.h>): calls return 0, a count, or a negative
 * errno, and a failed call changes nothing.  Options and output structs
 * start with `size_t sz` and are declared with GSO_OPTS(type, name, ...);
 * zero means "default".  The library never prints, exits or aborts.  A
 * device is not thread-safe: one thread uses it at a time.  NULL
 * pointers, in every header of libgso-xdp: a call that returns int
 * answers -EINVAL for a NULL pointer (or handle) it needs, and takes a
 * NULL the header calls optional as its documented default; the destroy
 * calls (and gso_dev__close) take NULL as a no-op; a getter or lookup that returns a
 * value says next to it what NULL gives (0, NULL).
 *
 * Errors of the device calls:
 *  -EINVAL      bad argument (NULL, MSS 0, payload outside its buffer or in
 *               an already released part of it, unknown flag)
 *  -EMSGSIZE    can never be sent by this device: a frame over the MTU, a
 *               super-segment needing more descriptors than the TX ring
 *               holds, a buffer larger than the device's buffer share
 *  -E2BIG       more segments than allowed (see gso_seg_count())
 *  -EAGAIN      backpressure: the TX ring is full, or the device did not
 *               take everything yet.  Reap, kick, retry.  Nothing was lost.
 *  -ENOBUFS     backpressure: no free device memory (UMEM) right now.
 *               Reap completions or release buffers, retry.
 *  -ENETDOWN    the interface is down; queued frames stay queued
 *  -ENODEV      the interface went away; the device is dead: close it
 *  -ESHUTDOWN   the device was closed
 *  -EPROTONOSUPPORT, -EBADMSG, -ENODATA: from the template (see gso.h)
 */
#ifndef GSO_DEV_H
#define GSO_DEV_H

#include <stdbool.h>
#include <gso/common.h>
#include <gso/tmpl.h>
#include <gso/seg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===================================================================== */
/* Device interface                                                       */
/* ===================================================================== */

/* A transmit device (one backend instance).  Opaque. */
struct gso_dev;

/* Capability flags (struct gso_dev_caps.flags). */
#define GSO_DEV_SEG_TCP4 (1u << 0) /* the device segments TCP/IPv4 super-segments (TSO) */
#define GSO_DEV_SEG_TCP6 (1u << 1) /* ... TCP/IPv6 */
#define GSO_DEV_SEG_UDP4 (1u << 2) /* ... UDP/IPv4 with UDP_SEGMENT semantics (USO) */
#define GSO_DEV_SEG_UDP6 (1u << 3) /* ... UDP/IPv6 */
#define GSO_DEV_CSUM     (1u << 4) /* the device finishes L4 checksums from a partial seed */
#define GSO_DEV_SG       (1u << 5) /* frames go out as header + payload reference (no copy) */
#define GSO_DEV_ZEROCOPY (1u << 6) /* the NIC reads frames in place (AF_XDP zero-copy) */
#define GSO_DEV_BUFS     (1u << 7) /* gso_dev__buf_alloc() is available */
#define GSO_DEV_RX       (1u << 8) /* gso_dev__recv() is available (AF_XDP with an RX ring) */
/*
 * Offloads are not known yet: the interface was down when the device was
 * created, so the probe that decides them could not run.  Until then the
 * device works without them (software checksums); gso_dev__probe() runs
 * the probe once the interface is up (the device also tries by itself
 * when a kick finds the link up again).  The flags above then say what
 * was found.
 */
#define GSO_DEV_PROBE_PENDING (1u << 9)

/* What a device can do, for the pacer and the flow queue. */
struct gso_dev_caps {
	size_t sz;
	uint32_t flags;       /* GSO_DEV_* */
	uint32_t mtu;         /* interface MTU (L3 bytes per frame) */
	uint32_t max_frame;   /* largest frame, L2 header included (MTU + 14, + 4 for one VLAN tag) */
	uint32_t max_segs;    /* most segments one super-segment may make on this device */
	uint32_t max_frags;   /* descriptors per frame with GSO_DEV_SG (1 without) */
	uint32_t buf_chunk;   /* buffers are accounted and released in chunks of this many bytes */
	uint32_t buf_max;     /* largest gso_dev__buf_alloc() length (the buffer share); 0 without GSO_DEV_BUFS */
	uint32_t buf_headroom; /* bytes the device keeps before a buffer's data in its first chunk */
	uint32_t rx_max_frame; /* longest frame gso_dev__recv() delivers (L2 header on); 0 without GSO_DEV_RX */
	/*
	 * Most segments one super-segment may make, per protocol: TCP (the
	 * same as max_segs) and UDP (never more than GSO_UDP_MAX_SEGS, which
	 * is what Linux's UDP_SEGMENT allows; a virtio device of an older
	 * kernel: 64).  Pass the one of the flow's protocol to gso_burst_size().
	 */
	uint32_t max_segs_tcp;
	uint32_t max_segs_udp;
	size_t :0;
};
#define gso_dev_caps__last_field max_segs_udp

/*
 * Fill `caps` (set caps->sz, e.g. with GSO_OPTS(gso_dev_caps, c)); fields
 * past caps->sz are not written.  Returns 0 or -EINVAL (NULL, sz no larger
 * than the sz field).
 */
GSO_API int gso_dev__caps(const struct gso_dev *dev, struct gso_dev_caps *caps);

/* Backend name and mode for people, e.g. "af_xdp copy"; NULL for a NULL device. */
GSO_API const char *gso_dev__name(const struct gso_dev *dev);

/*
 * The largest payload per frame (the MSS, Linux gso_size) this device can
 * send with template `t`: what fits the interface's MTU and, where frames
 * are copied whole into device memory chunks (AF_XDP without multi-buffer,
 * or with GSO_TX_F_COPY in `tx_flags`, which is also what payload in
 * ordinary memory gets), what fits a chunk.  gso_dev__plan() accepts
 * every MSS up to it (given the other limits hold) and refuses the next
 * one with -EMSGSIZE.  Returns the byte count (1..65535), or -EINVAL
 * (NULL, unknown flag, a template with no L3), -EMSGSIZE (the headers
 * alone fill the frame), -ESHUTDOWN.
 */
GSO_API int gso_dev__max_payload(struct gso_dev *dev, const struct gso_tmpl *t, uint32_t tx_flags);

/*
 * Descriptors posted to the device and not completed yet (what a TCP
 * Small Queues limit looks at), without filling the statistics.  Returns
 * the count (>= 0), or -EINVAL.  After gso_dev__close(): 0.
 */
GSO_API int gso_dev__inflight(const struct gso_dev *dev);

/*
 * The interface the device sends on (ifindex > 0), or -ENODEV for a
 * device without one (the e1000 model with a callback wire), -EINVAL.
 */
GSO_API int gso_dev__ifindex(const struct gso_dev *dev);

/*
 * Run a probe that GSO_DEV_PROBE_PENDING says is pending.  Returns 0 (done,
 * or nothing was pending: gso_dev__caps() tells what was found), -EAGAIN
 * (not yet: frames are in flight; retry once they completed), -ENETDOWN
 * (the interface is still down), -ESHUTDOWN, -ENODEV, -EINVAL.
 */
GSO_API int gso_dev__probe(struct gso_dev *dev);

/*
 * A buffer of device memory (AF_XDP: a run of consecutive UMEM chunks)
 * holding a super-segment's payload.  The caller writes payload at `data`
 * and sends it with gso_dev__submit() as often as needed (retransmits);
 * frames in flight reference it, so it is not copied on devices with
 * GSO_DEV_SG.  The device keeps every chunk until the caller has released
 * it (gso_dev__buf_release: the ACKed head) AND every frame referencing it
 * has completed.  The caller reads `data` and `cap` and changes none of
 * the fields; the private ones are the device's.
 *
 * A copy of a gso_buf is the same buffer only until one of them is
 * released or freed: the device stamps each allocation with a generation,
 * so a copy kept after gso_dev__buf_free() (or after a release made
 * through another copy) is a buffer it did not hand out, even once the
 * same memory belongs to a new buffer; every call refuses it.  (The
 * generation is 32 bits wide: a copy kept over 2^32 allocations is not
 * guaranteed to be told apart.)  Callers allocate it: its size and the
 * offsets of `data` and `cap` are part of the ABI.
 *
 * No sz field: one per super-segment in flight, referenced by every
 * struct gso_tx; growing it needs a new symbol version of the calls that
 * take it.
 */
struct gso_buf {
	uint8_t *data;     /* first payload byte */
	uint32_t cap;      /* bytes available at data */
	/* private: the library's own; do not read or write */
	uint32_t first_;   /* first chunk (the chunk count follows from cap) */
	uint32_t gen_;     /* generation of the allocation */
	uint32_t done_;    /* leading chunks already released */
};

/*
 * Allocate a buffer of at least `len` bytes (1 .. caps.buf_max).  Returns
 * 0 and fills `buf`, or -EINVAL (NULL, len 0), -EOPNOTSUPP (device without
 * GSO_DEV_BUFS), -EMSGSIZE (len > buf_max: never possible), -ENOBUFS
 * (backpressure: not enough free device memory now), -ESHUTDOWN.
 */
GSO_API int gso_dev__buf_alloc(struct gso_dev *dev, uint32_t len, struct gso_buf *buf);

/*
 * Release the head of a buffer: every chunk whose bytes all lie before
 * data + `upto` goes back to the device (at once if nothing in flight uses
 * it, else when its last frame completes).  Payload in a released chunk
 * cannot be sent again (gso_dev__submit says -EINVAL).  Partial ACKs call this with the
 * ACKed payload length; calling again with a smaller `upto` is a no-op.
 * Returns the number of chunks released by this call (>= 0), or -EINVAL
 * (NULL, a buffer this device did not hand out -- a stale copy too --,
 * upto > cap): then nothing is released.
 * Works after gso_dev__close(), so that callers can drain their queues.
 */
GSO_API int gso_dev__buf_release(struct gso_dev *dev, struct gso_buf *buf, uint32_t upto);

/*
 * Release all of a buffer and zero `buf`.  NULL or a zeroed buf is a
 * no-op; a buffer gso_dev__buf_release() refuses (a stale copy) is zeroed
 * and releases nothing.
 */
GSO_API void gso_dev__buf_free(struct gso_dev *dev, struct gso_buf *buf);

/* Per-request flags (struct gso_tx.flags). */
#define GSO_TX_F_SW_CSUM (1u << 0) /* compute checksums in software even if the device could */
#define GSO_TX_F_COPY    (1u << 1) /* copy the payload into whole frames even if the device could reference it */

/*
 * One super-segment to send: headers from `tmpl`, payload either in a
 * device buffer (buf != NULL: bytes [off, off + len) of buf->data) or in
 * ordinary memory (buf == NULL: `len` bytes at `data`, always copied).
 * The template is read during the call only (set its TCP seq / IP ID for
 * this super-segment before).  len 0 sends one header-only packet (a TCP
 * ACK, say).
 *
 * No sz field: an element of the request arrays of gso_dev__submit(),
 * passed by the thousand on the data path; its size is part of the ABI,
 * and growing it needs a new symbol version of the calls that take it.
 */
struct gso_tx {
	const struct gso_tmpl *tmpl;
	const struct gso_buf *buf;
	uint32_t off;       /* with buf: payload offset from buf->data */
	uint32_t len;       /* payload bytes */
	const void *data;   /* without buf: the payload */
	uint32_t mss;       /* payload bytes per segment (Linux gso_size), 1..65535 */
	uint8_t ipid;       /* enum gso_ipid_mode */
	uint8_t flags;      /* GSO_TX_F_* */
};

/* Who does what for one super-segment (gso_dev__plan). */
enum gso_tx_who { GSO_TX_SOFTWARE = 0, GSO_TX_DEVICE = 1 };

struct gso_tx_plan {
	size_t sz;
	uint8_t seg;      /* enum gso_tx_who: who cuts it into frames */
	uint8_t csum;     /* enum gso_tx_who: who finishes the L4 checksums */
	uint8_t copy;     /* 1: payload copied into frames; 0: referenced in place */
	uint32_t frames;  /* frames on the wire */
	uint32_t descs;   /* device descriptors it takes */
	size_t :0;
};
#define gso_tx_plan__last_field descs

/*
 * How this device would send `tx` now (capabilities per super-segment),
 * without sending it; `plan` is filled up to plan->sz.  Returns 0, or
 * the validation errors of gso_dev__submit() (never the backpressure
 * ones); -EINVAL also when plan->sz does not reach a field.
 */
GSO_API int gso_dev__plan(struct gso_dev *dev, const struct gso_tx *tx, struct gso_tx_plan *plan);

/*
 * Queue super-segments for transmission, each whole or not at all, in
 * order, then kick the device (AF_XDP copy mode: the kernel transmits
 * inside this call, as many sendto() calls as its per-call budget needs).
 * Everything is validated before it reaches the ring: a bad request never
 * produces a descriptor.
 *
 * Returns how many requests were queued (1..n).  If the first one could
 * not be, returns its error: the backpressure errors -EAGAIN (ring full)
 * and -ENOBUFS (no UMEM for headers/frames) mean "reap, then retry", the
 * others that this request is bad (-EINVAL, -EMSGSIZE, -E2BIG, template
 * errors) or the device is unusable (-ENODEV, -ESHUTDOWN).  A request that
 * fails after the first ends the batch; submitting the rest again reports
 * its error.  Queued frames whose kick failed stay queued: gso_dev__kick().
 *
 * -ENETDOWN: the interface is down (a kick found it so, and a kick tried
 * now still does): nothing of this call was queued; what was queued before
 * stays queued and leaves once gso_dev__kick() returns 0 again.  So the
 * call that first meets a down interface queues its requests (they wait),
 * and every later one says -ENETDOWN until the link is back.
 */
GSO_API int gso_dev__submit(struct gso_dev *dev, const struct gso_tx *tx, unsigned n);

/*
 * Push queued descriptors to the device (the wake-up).  Returns 0 when the
 * device has taken everything queued, -EAGAIN when it could not take all
 * yet (busy; retry after reaping), -ENETDOWN, -ENODEV, -ESHUTDOWN, -EINVAL
 * (NULL).
 */
GSO_API int gso_dev__kick(struct gso_dev *dev);

/*
 * Reap up to `max` transmit completions (0 = all available) and drop the
 * references they held.  Returns the number of descriptors completed
 * (>= 0), -ESHUTDOWN or -EINVAL (NULL).
 */
GSO_API int gso_dev__reap(struct gso_dev *dev, unsigned max);

/* Counters since creation (struct gso_dev_stats). */
struct gso_dev_stats {
	size_t sz;
	uint64_t tx_super;        /* super-segments queued */
	uint64_t tx_frames;       /* frames queued */
	uint64_t tx_descs;        /* descriptors queued */
	uint64_t tx_bytes;        /* frame bytes queued (L2 header on, no FCS) */
	uint64_t tx_completed;    /* descriptors completed */
	uint64_t tx_csum_offload; /* frames that carry a checksum request for the device */
	uint64_t tx_sg_frames;    /* frames sent as header + payload reference */
	uint64_t kicks;           /* wake-up syscalls */
	uint64_t kick_busy;       /* wake-ups answered "later" (EAGAIN/EBUSY/ENOBUFS) */
	uint64_t ring_full;       /* submits refused: TX ring full (-EAGAIN) */
	uint64_t umem_full;       /* submits or buffer allocations refused: no UMEM (-ENOBUFS) */
	uint64_t invalid;         /* requests refused by validation (never reached the ring) */
	uint64_t fallback_csum;   /* super-segments checksummed in software: device cannot, or GSO_TX_F_SW_CSUM */
	uint64_t fallback_copy;   /* super-segments copied: no SG, payload not in a buffer, too many fragments, or GSO_TX_F_COPY */
	uint64_t kernel_invalid;  /* descriptors the kernel rejected (AF_XDP tx_invalid_descs) */
	uint64_t bad_completions; /* completions for descriptors never posted (ignored) */
	uint32_t chunks_total;    /* device memory chunks; the next four always add up to it */
	uint32_t chunks_free;
	uint32_t chunks_queued;   /* held by their owner, never sent yet */
	uint32_t chunks_inflight; /* referenced by a descriptor not yet completed */
	uint32_t chunks_held;     /* sent, nothing in flight, owner still holds them (retransmit) */
	uint32_t inflight_descs;  /* descriptors posted, not yet completed */
	/*
	 * Receive side (GSO_DEV_RX).  Receive chunks are in the counts above:
	 * in flight while the kernel owns them (fill or RX ring), held while
	 * the caller has the frame, held or queued while spare.
	 */
	uint32_t rx_held;           /* frames handed out by gso_dev__recv(), not yet released */
	uint32_t rx_posted;         /* receive chunks the kernel owns now */
	uint64_t rx_frames;         /* frames handed out */
	uint64_t rx_bytes;          /* their bytes (L2 header on) */
	uint64_t rx_dropped_multi;  /* frames longer than one chunk (several descriptors): recycled, never handed out */
	uint64_t rx_bad_descs;      /* RX descriptors naming a chunk not posted (ignored) */
	uint64_t rx_kernel_dropped; /* kernel (XDP_STATISTICS): frames it could not place, e.g. too long */
	uint64_t rx_ring_full;      /* kernel: RX ring full, frame dropped (receive faster) */
	uint64_t rx_fill_empty;     /* kernel: no chunk in the fill ring, frame dropped (release frames sooner, or more rx_chunks) */
	uint64_t rx_kernel_invalid; /* kernel: invalid fill ring entries */
	size_t :0;
};
#define gso_dev_stats__last_field rx_kernel_invalid

/* Fill `st` up to st->sz.  Returns 0 or -EINVAL (NULL, sz too small). */
GSO_API int gso_dev__stats(struct gso_dev *dev, struct gso_dev_stats *st);

/* ---- receiving (devices with GSO_DEV_RX) ---- */

/*
 * A received frame.  `data` points into device memory and stays valid,
 * unchanged, until the frame is given back with gso_dev__rx_release() (or
 * the device is destroyed); the device cannot reuse its chunk before.
 * Frames the caller keeps are taken from the device's receive chunks, so
 * keeping many starves the fill ring (stats: rx_fill_empty).
 *
 * No sz field: an element of the arrays of gso_dev__recv(), on the data
 * path; its size is part of the ABI, and growing it needs a new symbol
 * version of the calls that take it.
 */
struct gso_rx_pkt {
	const uint8_t *data; /* frame, from the Ethernet header */
	uint32_t len;        /* frame bytes (no FCS) */
	/* private: the library's own; do not read or write */
	uint32_t id_;        /* the receive chunk it is in */
};

/*
 * Take up to `n` received frames, in arrival order, without blocking, and
 * keep the device's fill ring topped up.  Returns the number of frames
 * written to out[0..] (0: none now; see gso_dev__rx_wait), or -EINVAL
 * (NULL, n 0), -EOPNOTSUPP (the device has no receive side: an AF_XDP
 * device created without rx_size, or another backend), -ENODEV (nothing
 * left to read and the interface is gone; found by a probe every 64 empty
 * calls, or at once by gso_dev__rx_wait), -ESHUTDOWN.
 *
 * Frames arrive only through an XDP program that redirects them to this
 * socket's queue (gso_steer__*).  Frames longer than rx_max_frame are
 * not delivered (rx_dropped_multi, rx_kernel_dropped).
 */
GSO_API int gso_dev__recv(struct gso_dev *dev, struct gso_rx_pkt *out, unsigned n);

/*
 * Give `n` frames from gso_dev__recv() back, in any order, and refill.
 * All are checked first: a frame that is not currently handed out (twice
 * in the list, released already, not from this device) makes the call
 * return -EINVAL and release none.  Returns n, or -EINVAL (NULL with n >
 * 0).  Works after gso_dev__close(): the chunks then become free.
 */
GSO_API int gso_dev__rx_release(struct gso_dev *dev, const struct gso_rx_pkt *pkts, unsigned n);

/*
 * Block until frames can be received, at most `timeout_ms` (< 0: no
 * limit; 0: just check).  Returns 0 (frames ready), -ETIMEDOUT, -ENODEV
 * (the interface went away; noticed within about 50 ms), -ENETDOWN
 * (interface down), -EOPNOTSUPP, -ESHUTDOWN, -EINVAL, or -EINTR.
 */
GSO_API int gso_dev__rx_wait(struct gso_dev *dev, int timeout_ms);

/*
 * Tear down the kernel side: try briefly to send and complete what is
 * queued, then close the socket/queue and reclaim every descriptor still
 * queued or in flight (their chunks become free unless a buffer holds
 * them).  Buffer memory stays mapped until gso_dev__destroy(), and
 * gso_dev__buf_release()/__buf_free()/__stats() keep working; everything
 * else returns -ESHUTDOWN.  Returns 0 (also when already closed or dead,
 * and for NULL: teardown, like gso_dev__destroy()).
 */
GSO_API int gso_dev__close(struct gso_dev *dev);

/* Close if needed and free everything; buffers become invalid.  NULL is a no-op. */
GSO_API void gso_dev__destroy(struct gso_dev *dev);

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
 * super-segment it queues.  `sz` must reach at least `why`, or be 0 (a
 * flow written `= {0}`: the whole struct); why[] is last, so that a new
 * reason extends it, and reasons past the caller's sz are counted only in
 * the totals.  Not shared between threads.
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
 * is offloaded or segmented in software by the flow's mode (on a TSO
 * backend: vnet, a device model) and counted in `flow` (NULL: the
 * device's default mode, counted only in the device's statistics).  On an AF_XDP
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
 * Set the default mode and GSO_TSO_F_* flags of a TSO device (vnet, a
 * device model), used by gso_dev__submit and gso_tso__submit with a NULL
 * flow.  Returns
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

#ifdef __cplusplus
}
#endif
#endif
