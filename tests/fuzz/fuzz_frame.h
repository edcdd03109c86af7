/*
 * The fuzz targets' own walk of a received frame (Ethernet, one 802.1Q
 * tag, IPv4 or IPv6), written apart from xdp/engine/frame_rx.c on purpose:
 * what a parser of the engine reports is checked against it.  Also the
 * big-endian loads and the reference sums (tests/common/ref_csum.h) the
 * frame targets share.
 */
#ifndef GSO_FUZZ_FRAME_H
#define GSO_FUZZ_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/ref_csum.h"

static inline uint32_t be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static inline uint32_t be32(const uint8_t *p)
{
	return be16(p) << 16 | be16(p + 2);
}

struct fwalk {
	bool tagged;
	uint16_t vid;     /* the tag's VLAN ID */
	bool v6;
	size_t ip, l4;    /* offsets of the IP header and what follows it */
	size_t l4_len;    /* as the IP header says */
	uint8_t proto;
	bool frag;        /* IPv4: MF or an offset */
};

/* False when the frame is not IP or its IP header does not fit what `n` holds. */
static inline bool fwalk(const uint8_t *f, size_t n, struct fwalk *w)
{
	size_t off = 14;
	uint32_t et;

	*w = (struct fwalk){ 0 };
	if (n < 14)
		return false;
	et = be16(f + 12);
	if (et == 0x8100) {
		if (n < 18)
			return false;
		w->tagged = true;
		w->vid = (uint16_t)(be16(f + 14) & 0xfff);
		et = be16(f + 16);
		off = 18;
	}
	w->ip = off;
	if (et == 0x0800) {
		size_t ihl, tot;

		if (n < off + 20 || f[off] >> 4 != 4)
			return false;
		ihl = (f[off] & 15u) * 4;
		tot = be16(f + off + 2);
		if (ihl < 20 || tot < ihl || off + tot > n)
			return false;
		w->l4 = off + ihl;
		w->l4_len = tot - ihl;
		w->proto = f[off + 9];
		w->frag = (be16(f + off + 6) & 0x3fff) != 0;
		return true;
	}
	if (et == 0x86dd) {
		if (n < off + 40 || f[off] >> 4 != 6)
			return false;
		w->v6 = true;
		w->l4 = off + 40;
		w->l4_len = be16(f + off + 4);
		w->proto = f[off + 6];
		return off + 40 + w->l4_len <= n;
	}
	return false;
}

/* The pseudo-header's sum for the walked frame (its addresses, protocol and L4 length). */
static inline uint32_t fwalk_pseudo(const uint8_t *f, const struct fwalk *w)
{
	const uint8_t *ip = f + w->ip;
	uint32_t acc = w->proto + (uint32_t)(w->l4_len >> 16) + (uint32_t)(w->l4_len & 0xffff);

	return w->v6 ? ref_sum(ip + 8, 32, acc) : ref_sum(ip + 12, 8, acc);
}

/* Write the sum of n bytes at p (seeded) into the 16-bit field at c, big-endian, so that they add up. */
static inline void ref_seal(uint8_t *p, size_t n, uint8_t *c, uint32_t seed)
{
	uint16_t s;

	c[0] = c[1] = 0;
	s = (uint16_t)~ref_fold(ref_sum(p, n, seed));
	c[0] = (uint8_t)(s >> 8);
	c[1] = (uint8_t)s;
}

#endif
