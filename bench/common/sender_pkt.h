/*
 * bench/sender's packet helpers: parse the peer's TCP segments as they
 * arrive (Ethernet, IPv4/IPv6, TCP with options), and build the option
 * blocks the sender puts on its own segments.  Pure functions.
 *
 * Received checksums are not verified: on a veth the peer's segments cross
 * with CHECKSUM_PARTIAL (only the pseudo-header seed in the field), and
 * AF_XDP hands the frame over as it is.
 */
#ifndef BENCH_SENDER_PKT_H
#define BENCH_SENDER_PKT_H

#include <stdbool.h>
#include <stdint.h>

/* Our connection as seen on frames coming back (source = the peer). */
struct snd_flow {
	uint8_t l3;          /* 4 or 6 */
	uint8_t peer_addr[16], our_addr[16];
	uint16_t peer_port, our_port; /* host order */
};

#define SND_MAX_SACK 4

struct snd_seg {
	uint32_t seq, ack;
	uint16_t win;        /* as on the wire (unscaled) */
	uint8_t flags;       /* TCP flags byte */
	uint32_t payload;    /* payload bytes */
	bool has_ts;
	uint32_t tsval, tsecr;
	unsigned nsack;
	uint32_t sack[SND_MAX_SACK][2]; /* start, end */
	/* SYN options */
	bool has_mss, sack_perm;
	uint16_t mss;
	int wscale;          /* -1: no window scale option */
};

/*
 * Parse `frame` (`len` bytes from the Ethernet header).  Returns 0 and
 * fills *seg when it is a TCP segment of `flow`; -ENOENT when it is some
 * other traffic; -EBADMSG when it is ours but malformed (truncated,
 * bad header or option lengths).
 */
int snd_parse(const uint8_t *frame, uint32_t len, const struct snd_flow *flow, struct snd_seg *seg);

/* TCP option blocks (each a multiple of 4 bytes). */
#define SND_SYN_OPTS_LEN 20 /* MSS, SACK-permitted, timestamps, NOP, window scale */
#define SND_TS_OPTS_LEN 12  /* NOP, NOP, timestamps */

/*
 * The SYN's options: MSS `mss`; SACK-permitted if `sack`; timestamps
 * (tsval, 0) if `ts`, else NOPs in their place; window scale `wscale`
 * (0..14).  Writes SND_SYN_OPTS_LEN bytes.
 */
void snd_syn_opts(uint8_t out[SND_SYN_OPTS_LEN], uint16_t mss, bool sack, bool ts, uint32_t tsval,
		  uint8_t wscale);

/* NOP, NOP, timestamps (tsval, tsecr).  Writes SND_TS_OPTS_LEN bytes. */
void snd_ts_opts(uint8_t out[SND_TS_OPTS_LEN], uint32_t tsval, uint32_t tsecr);

#endif
