/*
 * The bench byte stream: a deterministic, seekable, seeded sequence of
 * bytes that senders write and the receiver verifies byte for byte.
 *
 * Definition (version 1; a sender written in any language can reproduce it):
 *
 *   T[0..2047]  = 2048 64-bit words from splitmix64 started at state = seed
 *                 (state += 0x9e3779b97f4a7c15; z = state;
 *                  z = (z ^ z>>30) * 0xbf58476d1ce4e5b9;
 *                  z = (z ^ z>>27) * 0x94d049bb133111eb; T[k] = z ^ z>>31)
 *   word(i)     = T[i mod 2048] XOR (i * 0x9e3779b97f4a7c15 mod 2^64)
 *   byte(o)     = byte (o mod 8) of word(o / 8), least significant first
 *
 * Every 8-byte word is distinct (i * odd constant is a bijection), so data
 * delivered at the wrong offset -- duplicated, skipped, reordered, shifted
 * by any amount -- fails verification, and any offset can be produced
 * without state (retransmissions).  Producing it costs about as much as a
 * memcpy, so a sender's CPU-per-byte is not dominated by the generator.
 *
 * The wire protocol around it (header, verdict) is in proto.h.
 */
#ifndef BENCH_STREAM_H
#define BENCH_STREAM_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_STREAM_TAB 2048u

struct bench_stream {
	uint64_t seed;
	uint64_t tab[BENCH_STREAM_TAB];
};

/* Set up the stream for `seed` (any value, 0 included). */
void bench_stream_init(struct bench_stream *s, uint64_t seed);

/* Write stream bytes [off, off + len) to dst. */
void bench_stream_fill(const struct bench_stream *s, uint64_t off, void *dst, size_t len);

/*
 * Compare buf with stream bytes [off, off + len).  Returns how many leading
 * bytes match: len when all do, else the index of the first wrong byte.
 */
size_t bench_stream_check(const struct bench_stream *s, uint64_t off, const void *buf, size_t len);

/* The stream byte at offset off (slow; for reports and tests). */
uint8_t bench_stream_byte(const struct bench_stream *s, uint64_t off);

/* splitmix64 step, the generator behind the table and other bench PRNGs. */
uint64_t bench_splitmix64(uint64_t *state);

#endif
