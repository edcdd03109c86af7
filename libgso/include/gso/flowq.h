/*
 * libgso flow send queue: the bytes of one TCP flow from the moment the
 * application hands them over until the peer acknowledges them.
 *
 * The queue holds *entries*, each a run of consecutive sequence space whose
 * payload lies in a caller-owned buffer (an opaque 64-bit handle plus a byte
 * offset; for libgso-xdp, a struct gso_buf) and which was sent, or will be,
 * as one super-segment cut at its own recorded MSS.  The queue does no I/O
 * and never touches payload: the caller sends what gso_flowq__peek() names
 * and releases the buffer bytes gso_flowq__ack() reports as acknowledged.
 *
 * Invariants kept here:
 *  - A segment count is always derived: gso_flowq_segs(len, mss), never
 *    stored.  Every operation that appends, trims or splits an entry takes
 *    the entry's contribution to the flow's counters out before it changes
 *    the entry and puts the new contribution back (the 2004 tso_factor bug
 *    was a count cached across an append or a trim).
 *  - A partial ACK trims the head entry at once, byte-exact: the released
 *    bytes are reported by that call, and the segments it completes are
 *    counted for cwnd growth per segment, not per super-segment (2004:
 *    cwnd grew once per super-segment, freed space came late).
 *  - Every byte is accounted: unsent, in flight, SACKed, lost (to be
 *    retransmitted) or retransmitted and in flight; gso_flowq__check()
 *    recomputes every counter from the entries.
 *
 * Sending is two-phase so that a device's backpressure never desynchronises
 * the queue: gso_flowq__peek() names the next range (a retransmission
 * first, else new data within the peer's window), the caller hands it to
 * the device, and only when the device took it does gso_flowq__sent()
 * record the transmission (splitting the entry at the MSS boundary where
 * the burst ended, as Linux's tso_fragment does).
 *
 * Loss detection: duplicate ACKs (dupthresh, NewReno partial ACKs during
 * recovery) and, unless GSO_FLOWQ_F_NO_SACK, a SACK scoreboard (RFC 6675
 * IsLost: an un-SACKed segment with dupthresh SACKed segments above it is
 * lost) and RACK's time rule (RFC 8985, unless GSO_FLOWQ_F_NO_RACK): an
 * un-SACKed transmission is lost once a transmission sent more than a
 * reordering window (min RTT / 4) after it has been delivered -- the only
 * way short of a timeout to find a lost retransmission.  SACK blocks mark
 * whole segments only (edges rounded inwards to the entry's MSS grid, as
 * Linux does).  Retransmission timeouts are the
 * caller's timer: gso_flowq__timeout() marks everything outstanding lost.
 * Congestion control is not here: the results say how many segments were
 * delivered or found lost and when they were sent, and every ACK leaves a
 * delivery-rate sample (gso_flowq__rate_sample(); gso/cc.h takes those).
 *
 * Delivery-rate estimation (Linux tcp_rate.c): each transmission records
 * the flow's delivered count and the time of the last delivery; an ACK
 * takes the newest transmission it delivers and divides what was
 * delivered since that transmission by the longer of its send and ACK
 * intervals.  A transmission made while the application had nothing more
 * to send (gso_flowq__check_app_limited()) marks its sample app-limited.
 *
 * Sequence numbers are 32-bit and wrap; at most GSO_FLOWQ_MAX_QUEUED bytes
 * may be queued at once so that every comparison is unambiguous.  FIN and
 * SYN are not data: the caller keeps them out of the queue's sequence space.
 *
 * Memory: fixed capacity chosen at creation, in caller memory
 * (gso_flowq__init) or one allocation (gso_flowq__create); nothing is
 * allocated afterwards.  A queue is not thread-safe.  Calls return 0, a
 * count or a negative errno; a failed call changes nothing.
 */
#ifndef GSO_FLOWQ_H
#define GSO_FLOWQ_H

#include <stdbool.h>
#include <gso/cc.h>
#include <gso/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Defaults and limits. */
#define GSO_FLOWQ_DEF_ENTRIES 1024u
#define GSO_FLOWQ_MAX_ENTRIES (1u << 24)
/* Entry payload limit: an IPv4 or IPv6 datagram with 60-byte IP and TCP headers stays <= 65535. */
#define GSO_FLOWQ_DEF_MAX_BYTES (GSO_MAX_IP_LEN - 60u - 60u)
#define GSO_FLOWQ_DEF_DUPTHRESH 3u
/* Most bytes queued at once (unacknowledged + unsent), far below 2^31. */
#define GSO_FLOWQ_MAX_QUEUED (1u << 30)
/* Entries gso_flowq__append() leaves free for the splits of sending and SACK. */
#define GSO_FLOWQ_RESERVE 16u
/* SACK blocks per ACK (a TCP option has room for 4). */
#define GSO_FLOWQ_MAX_SACK 4u

/*
 * Segments of an entry of `len` payload bytes cut at `mss`: the only way
 * the queue counts segments.  0 for len 0; mss must be >= 1.
 */
static inline uint32_t gso_flowq_segs(uint32_t len, uint32_t mss)
{
	return len / mss + (len % mss != 0);
}

struct gso_flowq_opts {
	size_t sz;
	uint32_t max_entries; /* entries held at once, 2*GSO_FLOWQ_RESERVE..GSO_FLOWQ_MAX_ENTRIES
			       * (0 = GSO_FLOWQ_DEF_ENTRIES) */
	uint32_t max_bytes;   /* payload of one entry, i.e. of one super-segment, 1..65535
			       * (0 = GSO_FLOWQ_DEF_MAX_BYTES); appends fill an entry up
			       * to the largest multiple of its MSS within it */
	uint32_t isn;         /* sequence number of the first data byte (ISS + 1) */
	uint32_t dupthresh;   /* duplicate ACKs / SACKed segments above a hole that
			       * make it lost, 1..255 (0 = GSO_FLOWQ_DEF_DUPTHRESH) */
	uint32_t flags;       /* GSO_FLOWQ_F_* */
	size_t :0;
};
#define gso_flowq_opts__last_field flags

/* The peer did not agree to SACK: NewReno loss recovery only. */
#define GSO_FLOWQ_F_NO_SACK (1u << 0)
/* No RACK time-based loss marking (duplicate ACKs and the scoreboard only). */
#define GSO_FLOWQ_F_NO_RACK (1u << 1)

struct gso_flowq;

/* Bytes of caller memory gso_flowq__init() needs (`o` NULL: the defaults; 0 if `o` is invalid). */
GSO_API size_t gso_flowq__mem_size(const struct gso_flowq_opts *o);

/*
 * Build an empty queue in caller memory `mem` of `len` bytes (8-byte
 * aligned, at least gso_flowq__mem_size(o)); `o` may be NULL (defaults).
 * The memory stays the caller's.  The peer's window is unknown (not
 * limiting) until gso_flowq__set_wnd() or the first ACK.  Returns 0 and
 * *out, -EINVAL (NULL mem/out, bad sz or non-zero unknown tail, a value
 * out of range, unknown flag, misaligned mem) or -ENOSPC (len too small).
 */
GSO_API int gso_flowq__init(struct gso_flowq **out, void *mem, size_t len,
			    const struct gso_flowq_opts *o);

/* Same in one allocation made here.  Returns 0 and *out, -EINVAL as above, -ENOMEM. */
GSO_API int gso_flowq__create(struct gso_flowq **out, const struct gso_flowq_opts *o);

/*
 * Free a queue from gso_flowq__create() (no-op for gso_flowq__init()
 * memory, and NULL).  Entries still queued are forgotten: call
 * gso_flowq__flush() first to learn which buffers they held.
 */
GSO_API void gso_flowq__destroy(struct gso_flowq *q);

/*
 * Queue `len` payload bytes that the caller has written at offset `off` of
 * buffer `handle`; they take the sequence space right after what is
 * queued.  They grow the tail entry when it is unsent, has the same handle
 * and MSS and ends at `off`, up to the entry limit (the largest multiple
 * of `mss` within max_bytes); the rest starts new entries of that size.
 *
 * Preconditions the queue relies on for gso_flowq_rel.done: a handle's
 * bytes are appended in increasing offset order and without another
 * handle in between (a buffer is filled, appended, then the next one).
 *
 * Returns 0, or -EINVAL (q NULL, len 0, mss 0 or > 65535 or > max_bytes,
 * off + len past 2^32), -ENOSPC (the entries needed would leave fewer than
 * GSO_FLOWQ_RESERVE free: wait for ACKs), -EOVERFLOW (more than
 * GSO_FLOWQ_MAX_QUEUED bytes would be queued).
 */
GSO_API int gso_flowq__append(struct gso_flowq *q, uint64_t handle, uint32_t off, uint32_t len,
			      uint32_t mss);

/* gso_flowq_tx.flags */
#define GSO_FLOWQ_TX_RETRANS (1u << 0) /* a retransmission of lost bytes */
#define GSO_FLOWQ_TX_END     (1u << 1) /* ends at the last queued byte */

/* Why gso_flowq__peek() found nothing to send (gso_flowq_tx.why). */
enum gso_flowq_why {
	GSO_FLOWQ_WHY_SEND = 0,  /* a range was returned */
	GSO_FLOWQ_WHY_EMPTY,     /* nothing lost and nothing unsent */
	GSO_FLOWQ_WHY_WND,       /* the peer's window has no room (zero window: probe) */
	GSO_FLOWQ_WHY_SWS,       /* the window has room for less than a segment and
				  * less than half the largest window seen: wait (RFC 1122
				  * sender silly-window avoidance) */
	GSO_FLOWQ_WHY_SLOTS,     /* the range needs a split and no entry is free: wait for ACKs */
};

/*
 * The next range to send: one super-segment.  The caller sets sz
 * (GSO_OPTS or .sz = sizeof); gso_flowq__peek() fills it up to sz and
 * sets sz to the bytes written; gso_flowq__sent() reads it back, fields
 * past sz as 0.
 */
struct gso_flowq_tx {
	size_t sz;
	uint64_t handle; /* buffer holding the payload */
	uint32_t off;    /* payload offset in that buffer */
	uint32_t len;    /* payload bytes (0 with nothing to send) */
	uint32_t seq;    /* sequence number of the first byte */
	uint32_t mss;    /* the entry's recorded MSS: cut the super-segment at it */
	uint32_t segs;   /* gso_flowq_segs(len, mss) */
	uint32_t flags;  /* GSO_FLOWQ_TX_* */
	uint32_t why;    /* enum gso_flowq_why */
	size_t :0;
};
#define gso_flowq_tx__last_field why

/*
 * Name the next range to send, of at most `max_segs` segments (the burst
 * size: gso_burst_size()): the oldest lost, not yet retransmitted bytes
 * first; else new data at snd_nxt, within the peer's window (only whole
 * segments when the window limits, except a sub-MSS remainder allowed by
 * sender SWS avoidance).  A range never spans two entries, so it is at
 * most max_bytes.  Nothing changes: send it, then gso_flowq__sent().
 *
 * Returns 1 and fills *tx; 0 when nothing can be sent now (tx->len 0,
 * tx->why says why); -EINVAL (NULL, max_segs 0, tx->sz 1..sizeof(size_t);
 * 0 is the whole struct); -EUCLEAN (the counters
 * and the entries disagree: a bug, see gso_flowq__check()).
 */
GSO_API int gso_flowq__peek(const struct gso_flowq *q, uint32_t max_segs, struct gso_flowq_tx *tx);

/*
 * Record that `tx` (from gso_flowq__peek(), possibly with a smaller len)
 * was handed to the device at `now_ns`.  The entry is split where the
 * range ends; new data advances snd_nxt; a retransmission goes back in
 * flight.  Returns 0, or -EINVAL (NULL, tx->sz 1..sizeof(size_t), len 0,
 * or tx is not what
 * gso_flowq__peek() would allow now: other seq/handle/off/mss/kind, or
 * longer), -ENOSPC (a split is needed and no entry is free; peek says
 * GSO_FLOWQ_WHY_SLOTS first), -EUCLEAN as gso_flowq__peek().
 */
GSO_API int gso_flowq__sent(struct gso_flowq *q, const struct gso_flowq_tx *tx, uint64_t now_ns);

struct gso_flowq_sack {
	uint32_t start; /* first SACKed sequence number */
	uint32_t end;   /* one past the last */
};

/* One ACK as received.  Declare with GSO_OPTS. */
struct gso_flowq_ack {
	size_t sz;
	uint64_t now_ns;   /* when it was processed (RTT samples) */
	uint32_t ack;      /* cumulative acknowledgement */
	uint32_t wnd;      /* the peer's window in bytes (window field << scale) */
	uint32_t flags;    /* GSO_FLOWQ_ACK_F_* */
	uint32_t n_sack;   /* SACK blocks, 0..GSO_FLOWQ_MAX_SACK */
	struct gso_flowq_sack sack[GSO_FLOWQ_MAX_SACK];
	size_t :0;
};
#define gso_flowq_ack__last_field sack

/*
 * The segment carried data, SYN or FIN: never a duplicate ACK (RFC 5681).
 * An ACK that does not move snd_una while something is outstanding is a
 * duplicate unless it has this flag or opens the window further (a window
 * that only grew is an update, as in Linux's tcp_may_update_window).
 */
#define GSO_FLOWQ_ACK_F_DATA (1u << 0)

/* gso_flowq_ack_res.flags */
#define GSO_FLOWQ_RES_OLD         (1u << 0) /* ack below snd_una: ignored, nothing changed */
#define GSO_FLOWQ_RES_DUP         (1u << 1) /* a duplicate ACK */
#define GSO_FLOWQ_RES_ADVANCED    (1u << 2) /* snd_una moved (restart the retransmission timer) */
#define GSO_FLOWQ_RES_RECOVERY    (1u << 3) /* loss recovery started with this ACK */
#define GSO_FLOWQ_RES_RECOVERED   (1u << 4) /* loss recovery ended: snd_una reached its end */
#define GSO_FLOWQ_RES_WND_SHRUNK  (1u << 5) /* the window's right edge moved left (RFC 7323 says it should not) */

/* The result of gso_flowq__ack().  The caller sets sz (GSO_OPTS or .sz = sizeof). */
struct gso_flowq_ack_res {
	size_t sz;
	uint32_t flags;          /* GSO_FLOWQ_RES_* */
	uint32_t acked_bytes;    /* snd_una advance */
	uint32_t acked_segs;     /* segments the cumulative ACK completed, previously
				  * SACKed ones included (partial ACK: full segments only) */
	uint32_t delivered_segs; /* segments newly delivered: cumulatively ACKed and not
				  * SACKed before, plus newly SACKed (for cwnd growth) */
	uint32_t sacked_segs;    /* segments newly SACKed */
	uint32_t lost_segs;      /* segments newly marked lost */
	uint64_t lost_sent_ns;   /* when the oldest of those was sent (gso_cc__on_loss) */
	uint64_t rtt_ns;         /* RTT sample from the newest delivered segment never
				  * retransmitted (Karn); 0 = none */
	uint32_t dupacks;        /* consecutive duplicate ACKs so far */
	uint32_t dsack;          /* SACK blocks at or below the cumulative ACK (D-SACK) */
	uint32_t sack_unsplit;   /* SACK edges not applied: no free entry for the split */
	uint32_t n_rel;          /* release records written */
	size_t :0;
};
#define gso_flowq_ack_res__last_field n_rel

/*
 * A buffer whose head bytes the peer has acknowledged.  An element of the
 * caller's rel[] array: no sz field; growing it needs a new symbol version.
 */
struct gso_flowq_rel {
	uint64_t handle;
	uint32_t upto; /* every byte of the buffer before this offset is acknowledged
			* (gso_dev__buf_release(dev, buf, upto)) */
	uint32_t done; /* 1: the queue holds no byte of this handle any more */
};

/*
 * Process an ACK: trim what it covers (whole entries and the head of a
 * partially acknowledged one), take the peer's window, mark SACKed
 * segments, count duplicate ACKs, mark lost segments.  For every buffer
 * whose acknowledged head grew, one record goes to rel[0..n_rel) (one per
 * handle, in order); never more records than the queue has entries plus
 * one (gso_flowq_info.entries + 1), so an array of max_entries + 1 always
 * suffices.
 *
 * An ACK below snd_una is old: GSO_FLOWQ_RES_OLD and nothing changes (its
 * window and SACK blocks are stale too).  SACK blocks at or below the
 * cumulative ACK are D-SACKs and only counted.
 *
 * Returns 0 and fills *res, or -EINVAL (NULL q/a/res, rel NULL with
 * n_rel > 0, bad sz or tail, unknown flag, n_sack > GSO_FLOWQ_MAX_SACK,
 * ack beyond snd_nxt, a SACK block empty, reversed or beyond snd_nxt),
 * -ENOSPC (more release records than n_rel).  On error nothing changes.
 */
GSO_API int gso_flowq__ack(struct gso_flowq *q, const struct gso_flowq_ack *a,
			   struct gso_flowq_ack_res *res, struct gso_flowq_rel *rel, unsigned n_rel);

/*
 * Retransmission timeout: every sent, un-SACKed segment is lost (to be
 * retransmitted, retransmissions included), duplicate ACKs are forgotten
 * and recovery lasts until snd_nxt as of now.  Returns the number of
 * segments marked lost (>= 0), or -EINVAL (q NULL).
 */
GSO_API int gso_flowq__timeout(struct gso_flowq *q);

/*
 * The path's MSS fell to `mss` (an ICMP "fragmentation needed" or
 * "packet too big", a lower interface MTU: Linux's tcp_sync_mss followed
 * by tcp_simple_retransmit).  Every entry recorded at a larger MSS is cut
 * at `mss` from now on, and each of those that was sent with segments
 * longer than `mss`, is not SACKed and is not already waiting for its
 * retransmission is lost: the path dropped it (a retransmission still in
 * flight too).  Recovery then lasts until snd_nxt as of now, as after a
 * timeout; duplicate ACK state is kept.  It is not a congestion signal:
 * the caller leaves cwnd alone.  An MSS at or above every entry's
 * changes nothing (the caller appends at it from now on).  Returns the
 * number of segments marked lost (>= 0, counted at `mss`), or -EINVAL
 * (q NULL, mss 0 or > 65535).
 */
GSO_API int gso_flowq__set_mss(struct gso_flowq *q, uint32_t mss);

/*
 * The delivery-rate sample of the last gso_flowq__ack() (see the top of
 * this file and struct gso_rate_sample); delivered and interval_ns are 0
 * when the ACK gave none (it delivered nothing newly, it was old, or the
 * interval was shorter than the min RTT).  Fills `rs` up to rs->sz (0:
 * whole) and sets rs->sz to what it wrote.  Returns 0, or -EINVAL (NULL,
 * sz 1..sizeof(size_t)).
 */
GSO_API int gso_flowq__rate_sample(const struct gso_flowq *q, struct gso_rate_sample *rs);

/*
 * Call when the sender could send (cwnd has room: fewer than cwnd_segs
 * segments in flight) but has nothing: less than one MSS unsent and no
 * lost segment waiting for retransmission (Linux
 * tcp_rate_check_app_limited).  Transmissions from then on, until what is
 * in flight now is delivered, make app-limited samples.  Returns 1 if the
 * flow is now marked app-limited, 0 if the conditions do not hold, or
 * -EINVAL (q NULL).
 */
GSO_API int gso_flowq__check_app_limited(struct gso_flowq *q, uint32_t cwnd_segs);

/*
 * Set the peer's window (bytes; e.g. from the SYN-ACK, already scaled).
 * Returns 0 or -EINVAL.
 */
GSO_API int gso_flowq__set_wnd(struct gso_flowq *q, uint32_t wnd);

/* The queue's state and counters. */
struct gso_flowq_info {
	size_t sz;
	uint32_t snd_una;        /* oldest unacknowledged byte */
	uint32_t snd_nxt;        /* next new byte to send */
	uint32_t write_seq;      /* one past the last queued byte */
	uint32_t snd_wnd;        /* the peer's window (UINT32_MAX while unknown) */
	uint32_t wnd_left;       /* snd_una + snd_wnd - snd_nxt, 0 if negative */
	uint32_t max_wnd;        /* largest window seen */
	uint32_t unsent_bytes;   /* write_seq - snd_nxt */
	uint32_t unacked_bytes;  /* snd_nxt - snd_una */
	uint32_t unsent_segs;    /* segments not sent yet (per entry, derived) */
	uint32_t packets_out;    /* segments sent and not cumulatively acknowledged */
	uint32_t sacked_out;     /* of those, SACKed */
	uint32_t lost_out;       /* of those, marked lost (retransmitted or not) */
	uint32_t retrans_out;    /* of those, lost and retransmitted, in flight again */
	uint32_t lost_pending;   /* lost, not yet retransmitted (what peek sends first) */
	uint32_t in_flight;      /* packets_out - sacked_out - lost_out + retrans_out (RFC 6675 pipe);
				  * without SACK also minus one segment per duplicate ACK since
				  * snd_una last moved (Linux's tcp_add_reno_sack: limited transmit
				  * and fast recovery get room to send) */
	uint32_t in_flight_bytes; /* the same in bytes */
	uint32_t dupacks;
	uint32_t in_recovery;    /* 1 during loss recovery */
	uint32_t recovery_end;   /* with in_recovery: recovery ends when snd_una reaches this */
	uint32_t entries;        /* entries in use */
	uint32_t free_entries;
	uint64_t sent_segs;      /* totals since creation: segments sent (new data) */
	uint64_t retrans_segs;   /* segments retransmitted */
	uint64_t lost_marked;    /* segments marked lost (by ACKs and timeouts) */
	uint64_t sack_unsplit;   /* SACK edges not applied for lack of a free entry */
	uint64_t min_rtt_ns;     /* smallest RTT sample the queue took (RACK's reordering window is 1/4) */
	uint64_t rack_lost;      /* segments marked lost by RACK (lost retransmissions among them) */
	uint64_t delivered_bytes; /* payload bytes delivered (cumulatively ACKed or SACKed) */
	uint64_t delivery_rate;  /* payload bytes/s of the latest sample that was not
				  * app-limited or beat the one before (tcpi_delivery_rate); 0 none */
	uint32_t app_limited;    /* 1 while transmissions are marked app-limited */
	size_t :0;
};
#define gso_flowq_info__last_field app_limited

/* Fill `st` up to st->sz.  Returns 0 or -EINVAL (NULL, sz too small). */
GSO_API int gso_flowq__info(const struct gso_flowq *q, struct gso_flowq_info *st);

/*
 * Fields of gso_flowq_info without filling one (a transmit loop asks for
 * them on every ACK, write and send); 0 on NULL.
 */
GSO_API uint32_t gso_flowq__snd_nxt(const struct gso_flowq *q);
GSO_API uint32_t gso_flowq__unacked_bytes(const struct gso_flowq *q);
GSO_API uint32_t gso_flowq__packets_out(const struct gso_flowq *q);
GSO_API uint32_t gso_flowq__unsent_bytes(const struct gso_flowq *q);
GSO_API uint32_t gso_flowq__lost_pending(const struct gso_flowq *q);

/*
 * Remove every entry (teardown) and report each buffer once, done = 1 and
 * upto = the end of its last queued byte.  Sequence state is kept
 * (snd_una = snd_nxt = write_seq afterwards).  Returns the number of
 * records (>= 0), -EINVAL (q NULL, rel NULL with n_rel > 0), -ENOSPC
 * (n_rel too small; entries + 1 always suffices).
 */
GSO_API int gso_flowq__flush(struct gso_flowq *q, struct gso_flowq_rel *rel, unsigned n_rel);

/*
 * Recompute every counter, flag rule and link from the entries and compare
 * (for tests and debugging; O(entries)).  Returns 0, -EINVAL (q NULL) or
 * -EUCLEAN (the queue is inconsistent: a bug).
 */
GSO_API int gso_flowq__check(const struct gso_flowq *q);

#ifdef __cplusplus
}
#endif
#endif
