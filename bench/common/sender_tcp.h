/*
 * bench/sender's TCP: one active-open connection that sends the bench
 * stream (stream.h, with the proto.h header) through a libgso device.
 *
 * The library does the work; this file only glues it together:
 *  - gso_tmpl_build() makes every header (SYN with MSS, SACK-permitted,
 *    timestamps and window scale; data and ACKs with timestamps);
 *  - the payload is generated straight into device buffers
 *    (gso_dev__buf_alloc), which a flow send queue (gso/flowq.h) holds
 *    until the peer acknowledges them; partial ACKs give chunks back at
 *    once (gso_dev__buf_release);
 *  - gso_burst_size() sizes each super-segment from the pacing rate, cwnd,
 *    the pipe and the peer's window, a gso_pacer stamps its departure, and
 *    Reno/CUBIC (gso/cc.h) grow and cut cwnd from the flow queue's
 *    per-segment counts;
 *  - loss recovery: SACK scoreboard or NewReno in the flow queue,
 *    retransmissions re-segmented from the held buffers, RTO with
 *    exponential backoff, zero-window probes, FIN.
 *
 * Time is passed in (CLOCK_MONOTONIC ns); the caller's loop receives
 * frames, calls snd_input(), snd_timers() and snd_output(), and waits
 * until snd_deadline().
 */
#ifndef BENCH_SENDER_TCP_H
#define BENCH_SENDER_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include <gso/cc.h>
#include <gso/flowq.h>
#include <gso/pacer.h>
#include <gso/tso.h>
#include <gso/xdp.h>

#include "sender_pkt.h"
#include "stream.h"

struct snd_cfg {
	struct gso_dev *dev;     /* transmit device */
	bool tso;                /* submit with gso_tso__submit (tso.h backends) */
	uint8_t tx_flags;        /* GSO_TX_F_* on every request */
	uint8_t l3;              /* 4 or 6 */
	uint8_t our_mac[6], peer_mac[6];
	uint8_t our_addr[16], peer_addr[16];
	uint16_t our_port, peer_port;
	uint32_t mtu;            /* L3 MTU of the interface */
	uint32_t mss_cap;        /* 0: from the MTU and the peer's MSS */
	uint64_t bytes;          /* stream bytes to send; UINT64_MAX: until duration_ns */
	uint64_t duration_ns;    /* stop queueing new data after this (whichever of bytes and
				  * duration comes first; the header then says "until FIN"); 0 = no limit */
	uint64_t seed;
	bool raw;                /* no bench header: the receiver runs with --seed */
	uint64_t max_rate;       /* pacing rate cap, wire bytes/s; 0 = none */
	uint32_t pacing_shift, min_segs, win_divisor; /* gso_burst_opts; 0 = defaults */
	uint32_t cc_algo;        /* enum gso_cc_algo */
	bool no_sack, no_ts;     /* do not offer SACK / timestamps */
	uint64_t idle_ns;        /* fail after this long without an ACK; 0 = 10 s */
	bool check;              /* gso_flowq__check() after every ACK and send (tests) */
	/*
	 * Called when the SYN-ACK is in, with the receive queue it arrived on,
	 * before anything is sized on the device: may replace dev, tso and
	 * tx_flags (the e1000 model's wire takes a queue the ACKs do not use).
	 * Returns 0 or -errno (the connection fails).  NULL: nothing to do.
	 */
	int (*on_estab)(void *ctx, unsigned rxq, struct snd_cfg *c);
	void *ctx;
};

enum snd_state { SND_SYN_SENT, SND_ESTAB, SND_FIN_SENT, SND_CLOSING, SND_DONE, SND_FAILED };

#define SND_BURST_HIST 129 /* exact counts 1..128 segments, the last bin for more */

struct snd_stats {
	uint64_t t_start, t_estab, t_data_acked, t_end;
	uint64_t acked_bytes;    /* TCP payload acknowledged (header included) */
	uint64_t stream_acked;   /* stream bytes acknowledged */
	uint64_t supers;         /* super-segments submitted */
	uint64_t segs;           /* segments in them (retransmissions included) */
	uint64_t retrans_segs, retrans_supers;
	uint64_t rto, fast_recov, probes, syn_retries, fin_retries;
	uint64_t burst_hist[SND_BURST_HIST];
	uint32_t burst_max;
	uint64_t acks, dupacks, sacked_segs, lost_segs, bad_acks, rx_other, rx_bad;
	uint64_t wnd_checks, wnd_violations; /* sends of new data checked against the peer's window */
	int64_t max_over_wnd;    /* largest (outstanding - window) at a send; <= 0 is right */
	uint32_t max_outstanding, min_wnd, max_wnd;
	uint64_t zero_wnd;       /* ACKs announcing a zero window */
	uint64_t backpressure, umem_waits, slot_waits;
	uint64_t tsq_waits;      /* sends held back: the device still had enough queued */
	uint64_t gen_ns;         /* time spent generating the stream */
	uint32_t max_cwnd;
	uint64_t rtt_samples;
	struct gso_cc_state cc_end; /* congestion control when the connection ended */
	int ack_queue;           /* receive queue the SYN-ACK arrived on (-1: none) */
	const char *fail;        /* why it failed */
	int fail_err;
};

struct snd_slot {
	struct gso_buf buf;
	bool used;
};

struct snd {
	struct snd_cfg c;
	enum snd_state state;
	struct snd_flow flow;
	struct gso_tmpl tmpl;    /* data and ACK template (flags ACK) */
	uint32_t tmpl_tsval, tmpl_tsecr, tmpl_ack;
	uint16_t ip_id;
	uint32_t iss, irs, rcv_nxt;
	uint8_t snd_wscale, rcv_wscale;
	bool sack_ok, ts_ok;
	uint32_t ts_recent, ts_off;
	uint32_t mss, hdr_len, ip_hdr, seg_limit; /* seg_limit: payload per super-segment */
	uint32_t dev_max_segs;
	uint32_t burst_descs;    /* device descriptors of one full super-segment (gso_dev__plan) */
	struct gso_flowq *fq;
	struct gso_flowq_rel *rel;
	unsigned nrel;
	struct gso_cc *cc;
	struct gso_pacer pacer;
	struct gso_burst_opts bo;
	struct gso_tso_flow tso;
	struct snd_slot *slots;
	uint32_t nslots, slot_hint;
	uint64_t appended, tcp_total;
	bool data_done;
	struct bench_stream stream;
	uint8_t hdr_bytes[32];
	uint64_t syn_ns, syn_at, rto_at, probe_at, retry_at, pace_at, linger_at, stop_at;
	uint64_t last_heard;
	uint32_t backoff, syn_tries;
	bool more;               /* output stopped early with more to send */
	bool fin_sent, fin_acked, peer_fin, cwnd_limited;
	uint32_t fin_seq;
	struct snd_stats st;
};

/* Set up (allocations happen here); 0 or -errno. */
int snd_init(struct snd *s, const struct snd_cfg *c, uint64_t now);
/* Everything back to the device (buffers freed); the struct may be reused. */
void snd_fini(struct snd *s);

/* Send the SYN.  0 or -errno (the connection failed). */
int snd_connect(struct snd *s, uint64_t now);
/* One received frame (any traffic; others are counted and ignored), from receive queue `rxq`. */
void snd_input(struct snd *s, const uint8_t *frame, uint32_t len, unsigned rxq, uint64_t now);
/* Expire timers (SYN and data retransmission, probes, linger). */
void snd_timers(struct snd *s, uint64_t now);
/* Send what cwnd, the window and pacing allow. */
void snd_output(struct snd *s, uint64_t now);
/* When to call again at the latest (UINT64_MAX: only on input). */
uint64_t snd_deadline(const struct snd *s);

static inline bool snd_finished(const struct snd *s)
{
	return s->state == SND_DONE || s->state == SND_FAILED;
}

/* A few live numbers for the progress line / report. */
uint32_t snd_cwnd(const struct snd *s);
uint64_t snd_srtt_ns(const struct snd *s);
uint64_t snd_min_rtt_ns(const struct snd *s);

#endif
