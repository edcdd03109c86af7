/*
 * The bench transfer protocol, over one TCP connection, sender -> receiver:
 *
 *   [header, 32 bytes][stream bytes 0 .. total-1 (or until FIN)]
 *
 * and, only when the header asks for it, receiver -> sender after the
 * sender's FIN: [verdict, 32 bytes], then the receiver closes.
 *
 * Header (all fields big-endian):
 *    0  u32  magic   0x47534231 ("GSB1")
 *    4  u16  length  32 (a receiver refuses any other value)
 *    6  u16  flags   bit 0 BENCH_HDR_F_VERDICT: send a verdict back;
 *                    other bits must be 0
 *    8  u64  seed    stream seed (stream.h)
 *   16  u64  total   stream bytes that follow; 0 = until the sender's FIN
 *   24  u32  zero    must be 0
 *   28  u32  check   low 32 bits of splitmix64 step from state
 *                    seed ^ total ^ (flags << 48) ^ magic
 *
 * With `receiver --seed S` there is no header: the connection carries
 * stream S from offset 0 until FIN and no verdict is sent.  A sender that
 * cannot read data from the peer (a minimal TCP over AF_XDP) simply does
 * not set BENCH_HDR_F_VERDICT.
 *
 * Verdict (big-endian):
 *    0  u32  magic   0x47534256 ("GSBV")
 *    4  u32  status  enum bench_status
 *    8  u64  received  stream bytes received (header excluded)
 *   16  u64  verified  stream bytes that matched, from offset 0
 *   24  u64  bad_off   first wrong offset, or UINT64_MAX
 */
#ifndef BENCH_PROTO_H
#define BENCH_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stream.h"

#define BENCH_HDR_MAGIC 0x47534231u
#define BENCH_VERDICT_MAGIC 0x47534256u
#define BENCH_HDR_LEN 32u
#define BENCH_VERDICT_LEN 32u
#define BENCH_HDR_F_VERDICT 0x1u
#define BENCH_NO_OFFSET UINT64_MAX

enum bench_status {
	BENCH_OK = 0,
	BENCH_MISMATCH = 1,   /* a stream byte was wrong */
	BENCH_SHORT = 2,      /* FIN before `total` bytes */
	BENCH_LONG = 3,       /* more than `total` bytes */
	BENCH_BAD_HEADER = 4, /* magic, length, flags, zero or check wrong */
	BENCH_TIMEOUT = 5,    /* no progress within the idle timeout */
	BENCH_IO_ERROR = 6,   /* the connection failed (reset, ...) */
	BENCH_NO_DATA = 7,    /* FIN before a complete header */
};

const char *bench_status_name(int status);

struct bench_hdr {
	uint16_t flags;
	uint64_t seed;
	uint64_t total;
};

struct bench_verdict {
	uint32_t status;
	uint64_t received;
	uint64_t verified;
	uint64_t bad_off;
};

void bench_hdr_encode(const struct bench_hdr *h, uint8_t out[BENCH_HDR_LEN]);
/* Returns 0, or -EBADMSG when any field is invalid (nothing written to h). */
int bench_hdr_decode(const uint8_t in[BENCH_HDR_LEN], struct bench_hdr *h);

void bench_verdict_encode(const struct bench_verdict *v, uint8_t out[BENCH_VERDICT_LEN]);
/* Returns 0 or -EBADMSG (wrong magic). */
int bench_verdict_decode(const uint8_t in[BENCH_VERDICT_LEN], struct bench_verdict *v);

/*
 * Sending side: transfer bytes [off, off + len) into dst, i.e. the first
 * `hlen` bytes of the connection are `hdr` (BENCH_HDR_LEN bytes, or hlen
 * 0 for a raw stream), then stream `s` from its offset 0.
 */
void bench_xfer_fill(const uint8_t *hdr, uint32_t hlen, const struct bench_stream *s, uint64_t off, void *dst,
		     size_t len);

/*
 * Receiving side: feed every byte of the connection in order; it parses
 * the header (unless raw), verifies the stream and keeps the counters.
 */
struct bench_rx {
	bool raw;          /* no header: stream `seed` from the first byte */
	bool have_hdr;
	struct bench_hdr hdr;
	uint8_t hbuf[BENCH_HDR_LEN];
	unsigned hlen;
	int status;        /* BENCH_OK until something fails; first failure sticks */
	uint64_t received; /* stream bytes (header excluded) */
	uint64_t verified;
	uint64_t bad_off;
	uint8_t bad_got, bad_want;
	struct bench_stream st;
};

/* raw: seed is the stream's; else it comes from the header. */
void bench_rx_init(struct bench_rx *rx, bool raw, uint64_t seed);
/* Feed bytes; returns rx->status. */
int bench_rx_feed(struct bench_rx *rx, const void *buf, size_t len);
/* The connection ended cleanly (FIN); settles SHORT / NO_DATA.  Returns status. */
int bench_rx_eof(struct bench_rx *rx);
/* The connection failed (timeout or error status): sticks unless already failed. */
void bench_rx_fail(struct bench_rx *rx, int status);
void bench_rx_verdict(const struct bench_rx *rx, struct bench_verdict *v);

#endif
