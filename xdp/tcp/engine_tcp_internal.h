/*
 * Stream flows' packet helpers (engine_tcp_pkt.c; not installed): parse
 * the peer's TCP segments as they arrive (Ethernet, one optional 802.1Q
 * tag, IPv4 or IPv6, TCP with options) and build the option blocks of our
 * own segments.  Pure functions.
 *
 * Received checksums are verified before a segment is looked up
 * (gsoi_rx_frame_csum, engine/frame_rx.c).  On a veth a local Linux peer's segments
 * cross with CHECKSUM_PARTIAL (only the folded pseudo-header in the TCP
 * field; measured: every ACK of a kernel receiver, 1668 of 1668 in
 * sender_inject/rfc5961_forgeries) and AF_XDP hands them over as they are,
 * without the skb's ip_summed that tells the kernel to trust them; such a
 * field is accepted and counted (gso_engine_stats.rx_csum_partial).  A
 * corrupted frame matches it by chance as rarely as it matches the right
 * sum, and a forger gains nothing from it: one who can write the seed can
 * write the right checksum.
 *
 * Included by tcp/'s files and by the port (port/), whose hand-over
 * parses a segment to find its owner.
 */
#ifndef GSO_XDP_ENGINE_TCP_INTERNAL_H
#define GSO_XDP_ENGINE_TCP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/frame_rx_internal.h"

/* A connection's 4-tuple as seen on frames coming back (source = the peer). */
struct tcp_key {
	uint8_t l3;            /* GSO_L3_IPV4 or GSO_L3_IPV6 */
	uint8_t peer_addr[16]; /* IPv4 in the first 4 bytes, the rest zero */
	uint8_t our_addr[16];
	uint16_t peer_port, our_port; /* host order */
	uint16_t vlan;         /* 0: untagged; a tagged frame: 0x8000 | VLAN ID (streams are untagged) */
};

#define TCP_MAX_SACK 4

struct tcp_seg {
	uint32_t seq, ack;
	uint16_t win;        /* as on the wire (unscaled) */
	uint8_t flags;       /* TCP flags byte */
	uint32_t payload;    /* payload bytes */
	uint32_t data_off;   /* where the payload starts in the frame */
	bool has_ts;
	uint32_t tsval, tsecr;
	unsigned nsack;
	uint32_t sack[TCP_MAX_SACK][2]; /* start, end */
	/* SYN options */
	bool has_mss, sack_perm;
	uint16_t mss;
	int wscale;          /* -1: no window scale option */
};

/*
 * The 4-tuple of a TCP frame (`len` bytes from the Ethernet header).
 * Returns 0, or -ENOENT when it is not TCP over IPv4/IPv6 (or an IP
 * fragment), -EBADMSG when the IP header is inconsistent (gsoi_frame_l4()) or
 * the TCP header does not fit.
 */
int gsoi_tcp_frame_key(const uint8_t *frame, uint32_t len, struct tcp_key *key);

/* The hash of a key, for the engine's stream table and the port's owner tables (FNV-1a). */
uint32_t gsoi_tcp_key_hash(const struct tcp_key *key);

/*
 * Parse the TCP segment of a frame whose key gsoi_tcp_frame_key() gave.
 * Returns 0 and fills *seg, or -EBADMSG (truncated, bad header or option
 * lengths).
 */
int gsoi_tcp_frame_parse(const uint8_t *frame, uint32_t len, struct tcp_seg *seg);

#define TCP_SYN_OPTS_LEN 20 /* MSS, SACK-permitted, timestamps, NOP, window scale */
#define TCP_TS_OPTS_LEN 12  /* NOP, NOP, timestamps */

/*
 * The SYN's options in Linux's layout: MSS `mss`; SACK-permitted if
 * `sack`; timestamps (tsval, 0) if `ts`, else NOPs in their place; window
 * scale `wscale` (0..14).  Writes TCP_SYN_OPTS_LEN bytes.
 */
void gsoi_tcp_syn_opts(uint8_t out[TCP_SYN_OPTS_LEN], uint16_t mss, bool sack, bool ts, uint32_t tsval,
		       uint8_t wscale);

#define TCP_MAX_WSCALE 14 /* RFC 7323 section 2.3 */

/* Our window scale for a receive buffer: the smallest shift that fits it into the 16-bit field. */
uint8_t gsoi_tcp_wscale_for(uint32_t rcvbuf);

/* NOP, NOP, timestamps (tsval, tsecr).  Writes TCP_TS_OPTS_LEN bytes. */
void gsoi_tcp_ts_opts(uint8_t out[TCP_TS_OPTS_LEN], uint32_t tsval, uint32_t tsecr);

/*
 * A SYN-ACK's options: the SYN's layout, with the client's TSval echoed
 * (`tsecr`), and the window scale left out when `wscale` is -1 (the
 * client offered none: RFC 7323 says the SYN-ACK must not carry it).
 * Returns the length written (a multiple of 4).
 */
unsigned gsoi_tcp_synack_opts(uint8_t out[TCP_SYN_OPTS_LEN], uint16_t mss, bool sack, bool ts, uint32_t tsval,
			      uint32_t tsecr, int wscale);

/*
 * A pure ACK's options: timestamps if `ts`, then up to `nsack` SACK
 * blocks (3 with timestamps, 4 without: what 40 bytes hold), each
 * NOP-aligned as Linux sends them.  Returns the length written.
 */
#define TCP_ACK_OPTS_MAX 40
unsigned gsoi_tcp_ack_opts(uint8_t out[TCP_ACK_OPTS_MAX], bool ts, uint32_t tsval, uint32_t tsecr,
			   const uint32_t (*sack)[2], unsigned nsack);

/* ---- acceptance after the handshake (engine_tcp_valid.c) ---- */

enum tcp_rx_verdict {
	TCP_RX_ACCEPT,    /* in the window, no RST or SYN: on to the ACK and FIN */
	TCP_RX_RESET,     /* RST at exactly RCV.NXT: the peer reset the connection */
	TCP_RX_CHALLENGE, /* RST in the window but not at RCV.NXT, or any SYN: drop, challenge ACK */
	TCP_RX_DUPACK,    /* outside the window (not RST): drop, answer with an ACK */
	TCP_RX_DROP,      /* RST outside the window: drop silently */
};

/*
 * What to do with segment `g` in a synchronized state (RFC 793's window
 * test, RFC 5961 sections 3 and 4).  `rcv_wnd` is the window we
 * advertise, in bytes (scaled).
 */
enum tcp_rx_verdict gsoi_tcp_rx_check(const struct tcp_seg *g, uint32_t rcv_nxt, uint32_t rcv_wnd);

enum tcp_ack_verdict {
	TCP_ACK_OK,
	TCP_ACK_UNSENT,  /* acknowledges what was never sent: drop (Linux sends nothing) */
	TCP_ACK_TOO_OLD, /* below SND.UNA - MAX.SND.WND: drop, challenge ACK (RFC 5961 5.2) */
};

/*
 * The ACK field's acceptability: `snd_max` is one past the last sequence
 * number sent (the FIN included), `max_wnd` the largest window the peer
 * has advertised (MAX.SND.WND).
 */
enum tcp_ack_verdict gsoi_tcp_ack_check(uint32_t ack, uint32_t snd_una, uint32_t snd_max, uint32_t max_wnd);

/*
 * RFC 5961 section 7's throttle on challenge ACKs and on the ACKs that
 * answer out-of-window segments, as Linux 6.x has it: one per connection
 * per 500 ms (net.ipv4.tcp_invalid_ratelimit's default, per socket), and
 * no host-wide budget (tcp_challenge_ack_limit is INT_MAX, i.e. off, by
 * default since Linux 6.0: a shared counter let an off-path attacker
 * count the challenge ACKs of other connections, CVE-2016-5696).
 * Returns true and records `now_ns` in *last_ns when an ACK may go now.
 */
#define TCP_OOW_INTERVAL_NS 500000000ull
bool gsoi_tcp_oow_allow(uint64_t *last_ns, uint64_t now_ns);

/* ---- listeners (listen.c) ---- */

struct gso_listener;
struct gso_engine;
struct gso_listen_opts;
/*
 * gso_listener__open(), and for a port (port/) without the steering
 * entry when `steer` is false: the port adds one for all its engines.
 */
int gsoi_listener_open(struct gso_listener **out, struct gso_engine *e, const struct gso_listen_opts *o,
		       bool steer);
/*
 * Engine `to` takes the SYN-cookie (and timestamp offset) secret of
 * `from`: a port's listeners share one, so that a cookie's ACK opens its
 * connection on whichever queue it arrives.  0, -EBADF, -ENOMEM.
 */
int gsoi_tcp_share_secret(struct gso_engine *from, struct gso_engine *to);

#endif
