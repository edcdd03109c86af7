/*
 * libgso-xdp: the kernel-facing side of libgso.
 *
 *  1. A transmit device interface (struct gso_dev) that every backend
 *     implements: capabilities, buffers, submit, kick, reap, statistics,
 *     teardown.  A backend either segments super-segments in software (the
 *     AF_XDP backend here: no kernel offers TSO through AF_XDP) or hands
 *     them to something that segments (an AF_PACKET/virtio_net_hdr backend,
 *     an e1000-class device model); callers see the same calls.
 *  2. The AF_XDP backend (gso_xsk__create): UMEM with TX metadata, TX and
 *     completion rings, software GSO with checksum metadata where the
 *     device finishes checksums, multi-buffer frames (header + payload
 *     reference) where the kernel takes them.
 *  3. Capability probing of an interface (gso_ifcaps__probe), as printed
 *     by the gsocaps tool.
 *  4. The receive side of a device (gso_dev__recv) and ACK steering
 *     (gso_steer__*): an XDP program sends the frames of registered flows
 *     to the AF_XDP socket and passes everything else to the kernel.
 *
 * Conventions (as in <gso/gso.h>): calls return 0, a count, or a negative
 * errno, and a failed call changes nothing.  Options and output structs
 * start with `size_t sz` and are declared with GSO_OPTS(type, name, ...);
 * zero means "default".  The library never prints, exits or aborts.  A
 * device is not thread-safe: one thread uses it at a time.
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
#ifndef GSO_XDP_H
#define GSO_XDP_H

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
 * past caps->sz are not written.  Returns 0 or -EINVAL (NULL, sz too small
 * to hold even the sz field).
 */
GSO_API int gso_dev__caps(const struct gso_dev *dev, struct gso_dev_caps *caps);

/* Backend name and mode for people, e.g. "af_xdp copy"; never NULL. */
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
 * has completed.  Fields other than `data` and `cap` are private; the
 * caller reads `data` and `cap` and changes none of the fields.
 *
 * A copy of a gso_buf is the same buffer only until one of them is
 * released or freed: the device stamps each allocation with a generation,
 * so a copy kept after gso_dev__buf_free() (or after a release made
 * through another copy) is a buffer it did not hand out, even once the
 * same memory belongs to a new buffer; every call refuses it.  (The
 * generation is 32 bits wide: a copy kept over 2^32 allocations is not
 * guaranteed to be told apart.)  Callers allocate it: its size and the
 * offsets of `data` and `cap` are part of the ABI.
 */
struct gso_buf {
	uint8_t *data;     /* first payload byte */
	uint32_t cap;      /* bytes available at data */
	uint32_t first_;   /* private: first chunk (the chunk count follows from cap) */
	uint32_t gen_;     /* private: generation of the allocation */
	uint32_t done_;    /* private: leading chunks already released */
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
 * yet (busy; retry after reaping), -ENETDOWN, -ENODEV, -ESHUTDOWN.
 */
GSO_API int gso_dev__kick(struct gso_dev *dev);

/*
 * Reap up to `max` transmit completions (0 = all available) and drop the
 * references they held.  Returns the number of descriptors completed
 * (>= 0) or -ESHUTDOWN.
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
 */
struct gso_rx_pkt {
	const uint8_t *data; /* frame, from the Ethernet header */
	uint32_t len;        /* frame bytes (no FCS) */
	uint32_t id_;        /* private */
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
 * else returns -ESHUTDOWN.  Returns 0 (also when already closed or dead).
 */
GSO_API int gso_dev__close(struct gso_dev *dev);

/* Close if needed and free everything; buffers become invalid.  NULL is a no-op. */
GSO_API void gso_dev__destroy(struct gso_dev *dev);

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

/* The AF_XDP socket's descriptor (for poll), -EINVAL if `dev` is not AF_XDP, -ESHUTDOWN after close. */
GSO_API int gso_xsk__fd(const struct gso_dev *dev);

/* ===================================================================== */
/* ACK steering                                                           */
/* ===================================================================== */

/*
 * An XDP program on one interface (steer.bpf.o, installed with the
 * library) that redirects the frames of registered flows to the AF_XDP
 * device bound to the queue they arrive on, and passes every other frame
 * on (to the next XDP program, or to the kernel).  Attached through
 * libxdp, so it joins other programs under libxdp's dispatcher where the
 * kernel allows that; where the dispatcher cannot be loaded (EPERM on some
 * kernels) libxdp attaches it alone, and an interface that already has a
 * program of its own then refuses it (-EEXIST).  Flows and devices are added and removed at run
 * time.  Not thread-safe, like a device.
 *
 * A frame is a registered flow's when its 5-tuple and its VLAN (one
 * 802.1Q tag with the flow's VLAN ID, or no tag for a flow without one)
 * are the flow's and its destination MAC is the interface's own (as it was
 * when the program was attached); IP headers the kernel would drop (a
 * wrong version, header length or total length, truncated) are never
 * steered either: gso_steer_stats says why each frame passed.  Checksums
 * are not verified by the program.
 *
 * A registered flow's frame goes to the socket only when it arrives on
 * that socket's queue (single-queue devices such as veth: always; NICs:
 * steer the flow to the queue with ethtool ntuple rules).  With no device
 * on that queue it reaches the kernel (counted in no_socket), as do IP
 * fragments and IPv6 frames with extension headers.  A frame that the
 * socket cannot take (RX ring full, fill ring empty) is dropped by the
 * kernel and counted in the device's rx_* statistics.
 */
struct gso_steer;

/* The 5-tuple and VLAN of a flow's frames as they arrive here (source = the remote end). */
struct gso_flow {
	uint8_t l3;         /* GSO_L3_IPV4 or GSO_L3_IPV6 */
	uint8_t l4;         /* GSO_L4_TCP or GSO_L4_UDP */
	uint16_t sport;     /* source port (remote), host order */
	uint16_t dport;     /* destination port (local), host order */
	uint8_t saddr[16];  /* source address (remote), network order; IPv4 in the first 4 bytes, rest zero */
	uint8_t daddr[16];  /* destination address (local) */
	uint16_t vlan;      /* VLAN ID (1..4094) of the 802.1Q tag the frames carry; 0: untagged */
};

/*
 * The flow of the frames that come back for what is sent with template
 * `t` (the peer's ACKs for a TCP template): addresses and ports swapped,
 * the template's VLAN ID (0 if it has no tag or a priority tag).
 * Returns 0, or -EINVAL (NULL, not a TCP/UDP over IPv4/IPv6 template).
 */
GSO_API int gso_flow__reply_of(struct gso_flow *f, const struct gso_tmpl *t);

enum gso_steer_xdp_mode {
	GSO_STEER_XDP_AUTO = 0,   /* native if the driver has it, else generic */
	GSO_STEER_XDP_NATIVE = 1, /* driver mode or fail */
	GSO_STEER_XDP_SKB = 2,    /* generic (skb) mode */
};

struct gso_steer_opts {
	size_t sz;
	/*
	 * Path of the compiled program.  NULL: $GSO_BPF_DIR/steer.bpf.o if
	 * GSO_BPF_DIR is set, else the first that exists of
	 * <directory of the running program>/../bpf/steer.bpf.o,
	 * <directory of the running program>/bpf/steer.bpf.o and
	 * <directory of libgso-xdp.so>/bpf/steer.bpf.o (an installed tree
	 * keeps it in LIBDIR/bpf; a build tree keeps bpf/ beside the folders
	 * of its programs and its libraries).
	 */
	const char *bpf_obj;
	uint32_t xdp_mode;  /* enum gso_steer_xdp_mode */
	uint32_t max_flows; /* flows registered at once; 0 = 1024 */
	uint32_t max_queues; /* queues the socket map covers; 0 = the interface's RX queues, at least 64 */
	size_t :0;
};
#define gso_steer_opts__last_field max_queues

/*
 * Load the program and attach it to interface `ifindex` of the current
 * network namespace.  No flow and no device yet: everything passes.
 * Returns 0 and *out, or -EINVAL (NULL, bad option), -ENOENT (no program
 * file found), -ENODEV (no such interface), -EEXIST (another XDP program
 * is attached and libxdp could not join it), -EOPNOTSUPP (the mode is not
 * available), -EPERM, -ENOMEM, or another -errno from libbpf/libxdp.
 * libbpf's and libxdp's log output is silenced during the call.
 */
GSO_API int gso_steer__create(struct gso_steer **out, int ifindex, const struct gso_steer_opts *opts);

/*
 * Receive the registered flows' frames that arrive on `dev`'s queue with
 * `dev` (an AF_XDP device on this interface created with rx_size).
 * Returns 0, or -EINVAL (NULL, not an AF_XDP device, another interface),
 * -EOPNOTSUPP (no receive side), -EEXIST (that queue has a device
 * already), -E2BIG (queue beyond max_queues), -ESHUTDOWN (device closed),
 * -ENODEV (the program is gone with its interface).
 */
GSO_API int gso_steer__add_dev(struct gso_steer *st, struct gso_dev *dev);

/* Stop receiving with `dev` (its queue's frames pass again).  0, -EINVAL, -ENOENT (not added). */
GSO_API int gso_steer__del_dev(struct gso_steer *st, struct gso_dev *dev);

/*
 * Register a flow: from the next frame on, it goes to the socket of its
 * queue.  Returns 0, -EINVAL (NULL, unknown l3/l4, IPv4 address with
 * non-zero padding, vlan above 4094), -EEXIST (registered already), -ENOSPC (max_flows
 * reached), -ENODEV.
 */
GSO_API int gso_steer__flow_add(struct gso_steer *st, const struct gso_flow *f);

/* Unregister a flow: its frames go to the kernel again.  0, -EINVAL, -ENOENT (not registered). */
GSO_API int gso_steer__flow_del(struct gso_steer *st, const struct gso_flow *f);

/*
 * Frames the program matched for flow `f` since it was registered.
 * Returns 0 and fills *packets and *bytes (either may be NULL), -EINVAL,
 * -ENOENT.
 */
GSO_API int gso_steer__flow_count(struct gso_steer *st, const struct gso_flow *f, uint64_t *packets,
				  uint64_t *bytes);

struct gso_steer_stats {
	size_t sz;
	uint64_t seen;       /* frames the program ran on */
	uint64_t steered;    /* matched and redirected to a socket */
	uint64_t no_socket;  /* matched, no device on their queue: passed */
	uint64_t passed;     /* well formed, not a registered flow (or fragments, other protocols): passed */
	uint32_t flows;      /* registered now */
	uint32_t devs;       /* devices added now */
	uint32_t xdp_mode;   /* enum gso_steer_xdp_mode as attached (NATIVE or SKB) */
	bool multiprog;      /* attached under libxdp's dispatcher (false: alone) */
	/* Passed for what they are; each frame seen is counted once in steered, no_socket, passed or these: */
	uint64_t other_mac;  /* to another destination MAC than the interface's (broadcast, multicast too) */
	uint64_t vlan;       /* VLAN tagging no flow has: a flow's tuple under another VLAN or none,
			      * 802.1ad or stacked tags, priority tags */
	uint64_t bad_hdr;    /* IP header the kernel would drop (version, header or total length) or
			      * IP/L4 header truncated */
	size_t :0;
};
#define gso_steer_stats__last_field bad_hdr

/* Fill `st` up to st->sz.  Returns 0, -EINVAL (NULL, sz too small), or -errno of the map read. */
GSO_API int gso_steer__stats(struct gso_steer *st, struct gso_steer_stats *out);

/*
 * Detach the program (if its interface still exists) and free everything.
 * Devices added stay open; frames they hold stay valid.  NULL is a no-op.
 */
GSO_API void gso_steer__destroy(struct gso_steer *st);

/* ===================================================================== */
/* Interface capabilities                                                 */
/* ===================================================================== */

/* ethtool features active on the interface (struct gso_ifcaps.features). */
#define GSO_IF_SG          (1ull << 0)  /* tx-scatter-gather */
#define GSO_IF_CSUM_IPV4   (1ull << 1)  /* tx-checksum-ipv4 */
#define GSO_IF_CSUM_IPV6   (1ull << 2)  /* tx-checksum-ipv6 */
#define GSO_IF_CSUM_HW     (1ull << 3)  /* tx-checksum-ip-generic */
#define GSO_IF_TSO4        (1ull << 4)  /* tx-tcp-segmentation */
#define GSO_IF_TSO6        (1ull << 5)  /* tx-tcp6-segmentation */
#define GSO_IF_TSO_ECN     (1ull << 6)  /* tx-tcp-ecn-segmentation */
#define GSO_IF_TSO_MANGLEID (1ull << 7) /* tx-tcp-mangleid-segmentation */
#define GSO_IF_USO         (1ull << 8)  /* tx-udp-segmentation */
#define GSO_IF_GSO         (1ull << 9)  /* tx-generic-segmentation */
#define GSO_IF_GRO         (1ull << 10) /* rx-gro */
#define GSO_IF_LRO         (1ull << 11) /* rx-lro */
#define GSO_IF_RX_CSUM     (1ull << 12) /* rx-checksum */
#define GSO_IF_GSO_PARTIAL (1ull << 13) /* tx-gso-partial */
#define GSO_IF_GRO_HW      (1ull << 14) /* rx-gro-hw */
#define GSO_IF_LLTX        (1ull << 15) /* tx-lockless */
#define GSO_IF_NFEATURES   16

/* Name of feature bit `i` (0 .. GSO_IF_NFEATURES-1) as ethtool -k prints it, or NULL. */
GSO_API const char *gso_ifcaps_feature_name(unsigned i);

/*
 * A probe's answer: 1 yes, 0 no, negative errno: no, because of this
 * error (-EOPNOTSUPP: the kernel or driver refuses it), or -ECANCELED: not
 * probed (a GSO_IFCAPS_NO_* flag skipped it).
 */
typedef int gso_probe_t;

struct gso_ifcaps {
	size_t sz;
	int ifindex;
	char ifname[16];
	char driver[32];        /* ethtool driver name ("veth"; "loopback" for IFF_LOOPBACK), "" if unknown */
	uint32_t mtu;
	uint32_t rx_queues;     /* RX / TX queues in use (ethtool channels, else rtnetlink's allocated count) */
	uint32_t tx_queues;
	uint32_t gso_max_size;  /* rtnetlink; 0 = unknown */
	uint32_t gso_max_segs;
	uint32_t tso_max_size;
	uint32_t tso_max_segs;
	uint64_t features;      /* GSO_IF_* active now */
	uint64_t features_fixed; /* GSO_IF_* that cannot be changed */
	/* generic netlink family "netdev" (Linux 6.3+) */
	gso_probe_t netdev_genl; /* family present and answered for this interface */
	uint64_t xdp_features;  /* NETDEV_XDP_ACT_* bits */
	uint32_t xdp_zc_max_segs; /* zero-copy descriptors per packet (1 = no multi-buffer; 0 = not reported) */
	uint64_t xsk_features;  /* NETDEV_XSK_FLAGS_* bits (zero-copy driver's TX metadata) */
	/* AF_XDP, found by binding sockets to queue 0 (skipped with GSO_IFCAPS_NO_XSK) */
	gso_probe_t xsk_copy;      /* copy mode binds */
	gso_probe_t xsk_zerocopy;  /* zero-copy binds (-EOPNOTSUPP on veth); not tried when netlink
				    * reports xsk-zerocopy (the bind would reset a live NIC queue): 1 */
	gso_probe_t xsk_sg;        /* XDP_USE_SG binds in copy mode */
	uint32_t xsk_copy_max_descs; /* copy-mode descriptors per packet (MAX_SKB_FRAGS + 1) */
	gso_probe_t xsk_unaligned; /* unaligned chunk mode registers */
	gso_probe_t xsk_tx_metadata; /* tx_metadata_len registers (Linux 6.8+) */
	gso_probe_t xsk_csum;      /* a checksum request is carried in copy mode (probe frame sent) */
	gso_probe_t xsk_tx_budget; /* XDP_MAX_TX_SKB_BUDGET accepted */
	size_t :0;
};
#define gso_ifcaps__last_field xsk_tx_budget

#define GSO_IFCAPS_REFRESH (1u << 0) /* probe again instead of answering from the cache */
#define GSO_IFCAPS_NO_XSK  (1u << 1) /* skip the AF_XDP socket probes (they bind queue 0 for a moment) */
#define GSO_IFCAPS_NO_SEND (1u << 2) /* do not send the checksum probe frame (xsk_csum = -ECANCELED) */

/*
 * Probe interface `ifname` in the current network namespace and fill
 * `caps` up to caps->sz.  Answers are cached per (namespace, ifindex,
 * flags) for the life of the process; GSO_IFCAPS_REFRESH probes again.
 * Probes that cannot run leave a negative errno in their field instead of
 * failing the call (a kernel without the netdev family gives netdev_genl =
 * -ENOENT; an interface whose queue 0 already has an AF_XDP socket gives
 * -EBUSY in the xsk_* fields).  Returns 0, or -EINVAL (NULL, bad sz,
 * unknown flag), -ENODEV (no such interface).
 */
GSO_API int gso_ifcaps__probe(const char *ifname, unsigned flags, struct gso_ifcaps *caps);

#ifdef __cplusplus
}
#endif
#endif
