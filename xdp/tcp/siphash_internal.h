/*
 * SipHash-2-4 (siphash.c; not installed): a keyed pseudo-random function
 * of a byte string under a 128-bit key, written from its published
 * specification (Aumasson and Bernstein, "SipHash: a fast short-input
 * PRF", 2012).  Short inputs are what it is for: the SYN cookies hash a
 * 4-tuple and two numbers (syncookie.c).  Pure.
 *
 * Included by tcp/'s files only.
 */
#ifndef GSO_XDP_SIPHASH_INTERNAL_H
#define GSO_XDP_SIPHASH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define SIPHASH_KEY_LEN 16

/* SipHash-2-4 of `len` bytes at `msg` under `key` (read as two little-endian 64-bit words). */
uint64_t gsoi_siphash24(const uint8_t key[SIPHASH_KEY_LEN], const void *msg, size_t len);

#endif
