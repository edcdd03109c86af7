/*
 * Flow send queue internals shared by flowq.c (entries, append, send,
 * teardown, checks) and flowq_ack.c (ACK, SACK and loss processing).
 */
#ifndef GSO_FLOWQ_INTERNAL_H
#define GSO_FLOWQ_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <gso/flowq.h>

#define FQ_NIL UINT32_MAX

/* Entry flags. */
#define FQ_SENT    (1u << 0) /* transmitted at least once */
#define FQ_SACKED  (1u << 1) /* the peer holds it (SACK); never with LOST/RETRANS */
#define FQ_LOST    (1u << 2) /* presumed lost: to be retransmitted */
#define FQ_RETRANS (1u << 3) /* with LOST: retransmitted, in flight again */
#define FQ_EVER_RT (1u << 4) /* retransmitted at some point: no RTT sample (Karn) */
#define FQ_APP_LIM (1u << 5) /* last transmission made while app-limited (rate sample) */
#define FQ_RATE    (1u << 6) /* rate_* hold the last transmission's delivery state */

/*
 * Each transmission records the flow's delivery state at that moment
 * (Linux's skb->tx, tcp_rate_skb_sent): what an ACK that delivers the
 * entry needs to make a rate sample; valid with FQ_RATE, which SACK
 * clears (the sample was taken then, as Linux zeroes delivered_mstamp).
 */
struct fq_ent {
	uint64_t handle;
	uint64_t tx_ns;  /* last transmission */
	uint64_t rate_delivered; /* q->delivered at that transmission */
	uint64_t rate_ns;        /* q->delivered_ns then */
	uint64_t rate_first_ns;  /* q->first_tx_ns then: start of its flight */
	uint32_t seq;
	uint32_t len;    /* > 0 */
	uint32_t off;
	uint32_t next, prev;
	uint16_t mss;    /* >= 1; the entry's segment count is derived from len and mss */
	uint8_t flags;
};

/* What an entry adds to the flow's counters; see gsoi_fq_account(). */
struct fq_count {
	uint32_t unsent_segs;
	uint32_t packets_out, sacked_out, lost_out, retrans_out, lost_pending;
	uint32_t in_flight, in_flight_bytes;
};

struct gso_flowq {
	uint32_t cap, nfree, free_head, n;
	uint32_t head, tail;
	uint32_t nxt_idx;   /* first unsent entry (starts at snd_nxt), or FQ_NIL */
	uint32_t una, nxt, end;
	uint32_t wnd, max_wnd;
	bool wnd_known;
	uint32_t max_bytes, dupthresh, flags;
	uint32_t dupacks;
	uint32_t reno_dup;     /* without SACK: segments the duplicate ACKs say have left (not in flight) */
	bool recovery;
	uint32_t recovery_end;
	bool owned;
	struct fq_count c;
	uint64_t sent_segs, retrans_segs, lost_marked, sack_unsplit, rack_lost;
	uint64_t min_rtt_ns;   /* smallest RTT sample taken (0: none yet) */
	uint64_t rack_xmit_ns; /* send time of the newest delivered, never retransmitted bytes */
	/* Delivery-rate estimation (tcp_rate.c), bytes and ns: */
	uint64_t delivered;     /* payload bytes delivered so far (tp->delivered) */
	uint64_t delivered_ns;  /* when the last delivery was acknowledged (delivered_mstamp) */
	uint64_t first_tx_ns;   /* send time of the packet that started the current flight */
	uint64_t app_limited;   /* nonzero: app-limited until delivered passes it */
	uint64_t rate_delivered, rate_interval_ns; /* tcpi_delivery_rate's sample */
	uint64_t delivery_rate;    /* its bytes/s, computed when it is taken */
	struct gso_rate_sample rs; /* the last ACK's sample */
	struct fq_ent ent[];
};

static inline bool fq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool fq_after(uint32_t a, uint32_t b)
{
	return (int32_t)(b - a) < 0;
}

static inline uint32_t fq_end(const struct fq_ent *e)
{
	return e->seq + e->len;
}

static inline uint32_t fq_segs(const struct fq_ent *e)
{
	return gso_flowq_segs(e->len, e->mss);
}

/* Add (sign +1) or remove (-1) an entry's contribution to q->c. */
void gsoi_fq_account(struct gso_flowq *q, const struct fq_ent *e, int sign);
/* Contribution of one entry, as gsoi_fq_account() applies it. */
void gsoi_fq_contrib(const struct fq_ent *e, struct fq_count *c);

/* Change an entry's flags with its contribution kept exact. */
void gsoi_fq_set_flags(struct gso_flowq *q, uint32_t i, uint8_t flags);

/*
 * Split entry i so that it keeps its first `at` bytes (0 < at < len) and a
 * new entry right after it holds the rest (same state).  Returns the new
 * index, or FQ_NIL when no entry is free (nothing changed).
 */
uint32_t gsoi_fq_split(struct gso_flowq *q, uint32_t i, uint32_t at);

/* Unlink entry i and put it on the free list (its contribution removed). */
void gsoi_fq_remove(struct gso_flowq *q, uint32_t i);

/*
 * RFC 6675 pipe in segments and bytes, as gso_flowq__info() reports it
 * (without SACK, less one segment per duplicate ACK): what
 * gso_flowq__check_app_limited() and a rate sample's prior_in_flight use,
 * as Linux uses tcp_packets_in_flight() for both.
 */
void gsoi_fq_pipe(const struct gso_flowq *q, uint32_t *segs, uint32_t *bytes);

/* Peek with the window and slot rules; shared by peek and sent. */
int gsoi_fq_peek(const struct gso_flowq *q, uint32_t max_segs, struct gso_flowq_tx *tx, uint32_t *idx);

#endif
