/*
 * libgso checksums: the Internet checksum (RFC 1071) and its pieces.
 *
 * Sums are kept "in memory order", as the Linux kernel does: 16-bit words
 * are loaded in host order, so a folded sum is stored into a packet with a
 * plain 16-bit memcpy, without byte swapping.  A partial sum (uint32_t) is
 * unfolded: it may be carried, combined and folded later.  The value of a
 * partial sum is only defined modulo 0xffff; compare folded results.
 * Folded results are the same whichever implementation computed them
 * (0 only when everything summed is 0).
 *
 * Typical use:
 *   full L4 checksum:  check = gso_csum_finish(gso_csum_partial(l4, l4_len,
 *                              gso_csum_pseudo4(&ip->saddr, &ip->daddr, proto, l4_len)));
 *                      (UDP: a result of 0 is sent as 0xffff)
 *   offload seed:      check = gso_csum_fold(gso_csum_pseudo4(..., len or 0))
 *                      (folded, not complemented: what virtio_net_hdr and AF_XDP
 *                      checksum metadata expect, with the whole L4 length; an
 *                      e1000 TSO context wants the sum with length 0)
 *
 * Everything here is pure computation: no allocation, no locks, thread-safe.
 */
#ifndef GSO_CSUM_H
#define GSO_CSUM_H

#include <gso/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- building blocks (inline: they sit on every hot path) ---- */

/* Ones'-complement add of two partial sums (end-around carry). */
static inline uint32_t gso_csum_add(uint32_t a, uint32_t b)
{
	a += b;
	return a + (a < b);
}

/* Subtract b from a in ones'-complement arithmetic. */
static inline uint32_t gso_csum_sub(uint32_t a, uint32_t b)
{
	return gso_csum_add(a, ~b);
}

/* Fold a partial sum to 16 bits (not complemented). */
static inline uint16_t gso_csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Fold and complement: the value that goes into a checksum field. */
static inline uint16_t gso_csum_finish(uint32_t sum)
{
	return (uint16_t)~gso_csum_fold(sum);
}

/*
 * Add the sum of a piece that starts `offset` bytes into the checksummed
 * region.  A piece at an odd offset has its bytes in the other halves of
 * the 16-bit words, so its sum is byte-swapped (rotated by 8) first.
 */
static inline uint32_t gso_csum_block_add(uint32_t sum, uint32_t piece, size_t offset)
{
	if (offset & 1)
		piece = (piece >> 8) | (piece << 24);
	return gso_csum_add(sum, piece);
}

/* ---- whole buffers ---- */

/*
 * Partial sum of `len` bytes at `buf` (any alignment, any length), added
 * to `sum`.  Words are taken at even offsets from `buf`, whatever its
 * address; an odd trailing byte is the first (lower-address) half of a
 * word padded with zero, as RFC 1071 says.  Reads exactly [buf, buf+len).
 * Contract: `buf` may be NULL only when `len` is 0 (a partial sum has no
 * error value, so this is not checked).  Returns the new partial sum.
 */
GSO_API uint32_t gso_csum_partial(const void *buf, size_t len, uint32_t sum);

/*
 * Copy `len` bytes from `src` to `dst` (must not overlap) and return the
 * partial sum of the bytes, added to `sum` (as gso_csum_partial(src, len,
 * sum) would).  One pass over the data; writes exactly [dst, dst+len).
 * Contract: `dst` and `src` may be NULL only when `len` is 0 (not checked,
 * as for gso_csum_partial()).
 */
GSO_API uint32_t gso_csum_copy(void *dst, const void *src, size_t len, uint32_t sum);

/* ---- pseudo-headers (RFC 793/768, RFC 8200 section 8.1) ---- */

/*
 * Partial sum of the IPv4 pseudo-header: addresses (4 bytes each, network
 * order as in the packet, any alignment), protocol, and `l4_len` (host
 * order).  Pass l4_len = 0 for the e1000 TSO / DPDK seed convention, the
 * real L4 length (header + payload of the whole super-packet) for Linux
 * GSO, virtio_net_hdr and AF_XDP checksum metadata.  A length above 65535
 * is summed as a 32-bit big-endian value (two words), like Linux
 * csum_tcpudp_nofold(); only BIG TCP needs that.  Contract: `saddr` and
 * `daddr` must not be NULL (not checked: the sum has no error value).
 */
GSO_API uint32_t gso_csum_pseudo4(const void *saddr, const void *daddr,
				  uint8_t proto, uint32_t l4_len);
/*
 * Same for IPv6 (16-byte addresses, 32-bit upper-layer length).  Contract:
 * `saddr` and `daddr` must not be NULL.
 */
GSO_API uint32_t gso_csum_pseudo6(const void *saddr, const void *daddr,
				  uint8_t proto, uint32_t l4_len);

/* ---- incremental update (RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m')) ---- */

/*
 * New value of checksum field `check` (as stored in the packet) after a
 * 16-bit word changes from `old` to `new_` (all three in memory order, as
 * loaded with memcpy from the packet).  The word must lie at an even
 * offset from the start of the checksummed region.  Like Linux
 * csum_replace2() it returns 0x0000 where a full recomputation gives 0xffff
 * only when the covered bytes become all zero (never with a pseudo-header,
 * whose protocol is non-zero); otherwise the two are equal.  For UDP the
 * caller maps a result of 0 to 0xffff.
 */
GSO_API uint16_t gso_csum_replace2(uint16_t check, uint16_t old, uint16_t new_);
/*
 * Same for a 32-bit field (e.g. a TCP sequence number), memory order, at
 * an even offset.
 */
GSO_API uint16_t gso_csum_replace4(uint16_t check, uint32_t old, uint32_t new_);

/* ---- implementation selection ---- */

enum gso_csum_impl {
	GSO_CSUM_IMPL_AUTO = 0, /* widest the CPU supports (the default) */
	GSO_CSUM_IMPL_SCALAR,   /* portable C, 64-bit accumulators */
	GSO_CSUM_IMPL_AVX2,     /* x86-64 AVX2 */
	GSO_CSUM_IMPL_AVX512,   /* x86-64 AVX-512F + AVX-512BW */
	GSO_CSUM_IMPL_COUNT
};

/*
 * Choose the code behind gso_csum_partial()/gso_csum_copy() for the whole
 * process (mainly for tests and benchmarks).  Returns 0, -EINVAL for an
 * unknown value, -ENOTSUP when this CPU (or this build) lacks it; a failed
 * call changes nothing.  Without it the widest supported implementation is
 * picked once, on first use.  Safe while other threads checksum: each call
 * runs entirely on the implementation current when it started.
 */
GSO_API int gso_csum_select(enum gso_csum_impl impl);
/* The implementation in use (never AUTO). */
GSO_API enum gso_csum_impl gso_csum_current(void);
/* Name of an implementation ("auto", "scalar", "avx2", "avx512"), or NULL. */
GSO_API const char *gso_csum_impl_name(enum gso_csum_impl impl);
/* 1 if this CPU and build can run `impl` (AUTO and SCALAR always), else 0. */
GSO_API int gso_csum_impl_supported(enum gso_csum_impl impl);

#ifdef __cplusplus
}
#endif
#endif
