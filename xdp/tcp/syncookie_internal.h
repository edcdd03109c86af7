/*
 * SYN cookies (syncookie.c; not installed): the listener's stateless
 * SYN-ACK when its half-open table is full (or always, with
 * GSO_LISTEN_F_COOKIES_ALWAYS).  Our initial sequence number carries what
 * we must remember of the SYN, under a keyed hash, so that the client's
 * ACK alone opens the connection:
 *
 *   cookie = H1(tuple, peer ISN)
 *          + (slot mod 256) << 24
 *          + ((H2(tuple, peer ISN, slot) + MSS class) mod 2^24)
 *
 * H1 and H2 are SipHash-2-4 (siphash_internal.h) under the listener's
 * 128-bit secret, and the slot is the time in 64-second units.  H1 hides
 * the slot and makes the ISN unpredictable (RFC 6528's aim); H2 binds the
 * MSS class to the tuple and the slot.  Both hash the peer's ISN, so an
 * ACK whose sequence number is off by any amount fails, rather than
 * decoding to a neighbouring MSS class as when the ISN is only added.
 *
 * A cookie is good in its slot and the next one: 64 to 128 seconds, as
 * Linux's MAX_SYNCOOKIE_AGE.  A value picked at random passes with
 * probability 2/256 (slot byte) * 4/2^24 (class) = 2^-29.
 *
 * The window scale and SACK-permitted the client offered ride in the low
 * 6 bits of our SYN-ACK's TSval, which the client echoes in the TSecr of
 * its ACK; without timestamps a cookie connection has neither.
 *
 * Pure: time is an argument.  Included by tcp/'s files only.
 */
#ifndef GSO_XDP_SYNCOOKIE_INTERNAL_H
#define GSO_XDP_SYNCOOKIE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "engine_tcp_internal.h" /* struct tcp_key */

#define SYNCOOKIE_KEY_LEN 16
/* A cookie's time slot: 64 s; good in the current and the previous slot. */
#define SYNCOOKIE_SLOT_NS (64ull * 1000000000ull)
#define SYNCOOKIE_MSS_CLASSES 4 /* per address family: 2 bits */

/*
 * The MSS classes of an address family (GSO_L3_IPV4, else IPv6), in
 * increasing order, SYNCOOKIE_MSS_CLASSES of them.
 */
const uint16_t *gsoi_syncookie_mss_table(uint8_t l3);

/*
 * The cookie ISN for a SYN from k (as seen on incoming frames: the peer
 * is the source) carrying the peer's ISN `peer_isn`, at now_ns, when we
 * would use MSS `mss`.  The MSS goes down to the largest class <= mss (the
 * smallest class if mss is below it); *mss_used (may be NULL) gets it.
 */
uint32_t gsoi_syncookie_make(const uint8_t key[SYNCOOKIE_KEY_LEN], const struct tcp_key *k, uint32_t peer_isn,
			     uint64_t now_ns, uint16_t mss, uint16_t *mss_used);

/*
 * Check the ACK of a cookie SYN-ACK: cookie = its ack - 1, peer_isn = its
 * seq - 1.  Returns the MSS the cookie encodes (> 0), or 0 when it is not
 * a cookie of this key for k made in the slot of now_ns or the one
 * before.
 */
uint16_t gsoi_syncookie_check(const uint8_t key[SYNCOOKIE_KEY_LEN], const struct tcp_key *k, uint32_t peer_isn,
			      uint32_t cookie, uint64_t now_ns);

/*
 * Our SYN-ACK's TSval `tsval` with its low 6 bits carrying the client's
 * options: bits 0-3 the window scale (0..14, a larger one as 14, 15 for
 * none: wscale < 0), bit 4 SACK-permitted, bit 5 zero.  The result is
 * never after tsval (64 less when the bits would raise it), so the
 * connection's later TSvals, from the same clock, never go back.
 */
uint32_t gsoi_syncookie_tsval(uint32_t tsval, int wscale, bool sack);

/*
 * Decode the TSecr of the client's ACK: true and *wscale (-1: none),
 * *sack; or false, nothing written, when it cannot be ours (bit 5 set).
 */
bool gsoi_syncookie_ts_decode(uint32_t tsecr, int *wscale, bool *sack);

#endif
