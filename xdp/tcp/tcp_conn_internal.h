/*
 * Between the stream flows (engine_tcp.c) and what answers segments no
 * stream owns: listeners and their half-open connections (listen.c),
 * TIME_WAIT (time_wait.c), and header-only replies built from a
 * received frame (tcp_reply.c).  Not installed; tcp/ only.
 */
#ifndef GSO_XDP_TCP_CONN_INTERNAL_H
#define GSO_XDP_TCP_CONN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine_internal.h"
#include "engine_tcp_internal.h"

struct listener;

/* ---- header-only segments from what a frame says (tcp_reply.c) ---- */

/* A reply's addressing: the received frame's, turned round. */
struct tcp_peer {
	struct tcp_key key;   /* as on the frame (source = the peer) */
	uint8_t our_mac[6];   /* the frame's destination MAC */
	uint8_t peer_mac[6];  /* its source MAC: where replies go (no route lookup) */
};

/* A header-only segment's template with any flags (SYN, RST: gso_tmpl__build refuses them).  0 or -EINVAL. */
int gsoi_tcp_ctl_tmpl(struct gso_tmpl *out, const struct gso_tmpl_fields *f, uint8_t flags);

/* Fill `p` from a frame whose key is `k`. */
void gsoi_tcp_peer_of(const uint8_t *frame, const struct tcp_key *k, struct tcp_peer *p);

/*
 * Send one header-only segment to the peer at once (not paced): `flags`
 * any of SYN, ACK, FIN, RST, window field `win`, options `opts` (a
 * multiple of 4 bytes, at most 40).  0, -EAGAIN / -ENOBUFS (the device
 * is full: the segment is not sent), -ENODEV, or -errno.
 */
int gsoi_tcp_reply(struct engine *e, const struct tcp_peer *p, uint32_t seq, uint32_t ack, uint8_t flags,
		   uint16_t win, const uint8_t *opts, unsigned opts_len);

/* An RST for segment `g` of no connection (RFC 793: seq from its ACK, or ACK of what it covered). */
int gsoi_tcp_reset_for(struct engine *e, const struct tcp_peer *p, const struct tcp_seg *g);

/* ---- the engine's TCP state (listen.c) ---- */

/*
 * A frame of no stream of this engine: TIME_WAIT answers it, or a
 * listener of its address and port.  False: nobody's (rx_other).  With
 * `local`, only what this engine holds for the 4-tuple (TIME_WAIT, a
 * half-open connection): asked before the port, which may hand the frame
 * to another queue's stream, and before a listener answers for it.
 */
bool gsoi_tcp_unowned_input(struct engine *e, struct gso_dev *rx, const uint8_t *frame, uint32_t len,
			    const struct tcp_key *k, uint64_t now, bool local);

/* ---- TIME_WAIT (time_wait.c) ---- */

struct tw_state;

struct tw_entry {
	struct tcp_peer peer;
	uint32_t snd_nxt;    /* our sequence number past our FIN */
	uint32_t rcv_nxt;    /* past the peer's FIN */
	bool ts;
	uint32_t ts_off, ts_recent;
	uint64_t expires;
	uint32_t hnext;      /* chain in the hash, NIL32 = end */
	bool live;
};

/* Remember a connection that closed first, until now + GSO_STREAM_TIME_WAIT_NS.  -ENOMEM or 0. */
int gsoi_tw_add(struct engine *e, const struct tw_entry *t, uint64_t now);
/* The live entry for `k`, NULL if none (expired entries are forgotten here). */
struct tw_entry *gsoi_tw_find(struct engine *e, const struct tcp_key *k, uint64_t now);
void gsoi_tw_del(struct engine *e, struct tw_entry *t);
uint32_t gsoi_tw_count(struct engine *e, uint64_t now);
void gsoi_tw_free(struct tw_state *tw);

/* The engine's TCP state, e->tcp (listen.c). */
struct tcp_state {
	struct listener *listeners;   /* of this engine */
	struct tw_state *tw;
	uint8_t secret[16];           /* SYN cookies and timestamp offsets */
	uint64_t reused;              /* TIME_WAIT tuples a SYN took over */
	/*
	 * Streams whose writer met -ENOBUFS from the device's memory, which
	 * all the engine's streams share: woken (WRITABLE) when any of them
	 * gives memory back, not only by their own ACKs, which may never come
	 * (nothing of theirs in flight).  Linked by stream.memq_next.
	 */
	struct stream *memq;
};
struct tcp_state *gsoi_tcp_state(struct engine *e);

/* A passive stream's timestamp offset: a keyed hash of its 4-tuple, so a cookie's ACK finds it again. */
uint32_t gsoi_tcp_ts_off(struct engine *e, const struct tcp_key *k);

/* ---- streams of a listener (engine_tcp.c) ---- */

/* What the handshake agreed, for a stream the listener opens. */
struct passive_open {
	struct tcp_peer peer;
	uint32_t iss, irs;          /* our initial sequence number, the peer's */
	bool sack_ok, ts_ok;
	int snd_wscale;             /* the peer's shift; -1: no window scaling either way */
	uint8_t rcv_wscale;         /* ours, when snd_wscale >= 0 */
	uint32_t ts_recent, ts_off;
	uint16_t peer_mss;
	uint32_t flags;             /* GSO_STREAM_F_NO_SACK / NO_TS as the listener has them */
	uint32_t mss_cap, rcvbuf;
	uint64_t syn_rtt_ns;        /* SYN-ACK to ACK, 0: unknown (retransmitted, or a cookie) */
	struct listener *l;
};

/*
 * A stream for a completed handshake, ESTABLISHED, hashed; it receives
 * and acknowledges, but raises no events until gso_listener__accept().
 * Then feed it the segment that completed the handshake
 * (gsoi_stream_segment), which may carry data.  0 or -errno.
 */
int gsoi_stream_passive(struct engine *e, const struct passive_open *p, struct stream **out);
/* A received segment for stream `s` (as the engine's input would give it). */
void gsoi_stream_segment(struct stream *s, struct gso_dev *rx, const uint8_t *frame, const struct tcp_seg *g,
			 uint64_t now);
/* Hand the stream to the application: its options from `o` (NULL: defaults). *handle for the API. */
int gsoi_stream_accept(struct stream *s, const struct gso_stream_opts *o, uintptr_t *handle);
/* Ended before anyone accepted it (reset by the peer, timed out). */
bool gsoi_stream_gone(const struct stream *s);
/* Free a stream never handed out: an RST first if `reset` and it is still open. */
void gsoi_stream_abort(struct stream *s, bool reset);

/* The listener frees what it queued when the engine goes (the engine frees its flows itself). */
extern const struct eflow_ops gsoi_listener_ops;

#endif
