/*
 * The one encoder of AF_XDP transmit metadata (struct xsk_tx_metadata,
 * GSO_XSK_TXMD_LEN bytes, little-endian), not installed.  Inline, because
 * the AF_XDP device (xdp/xsk/xsk_tx.c) writes it once per frame with constant
 * flags; gso_xsk_txmd_encode() (offload_xsk.c) validates, then calls it.
 *
 *   0-7 flags | 8-9 csum_start | 10-11 csum_offset | 12-15 reserved |
 *   16-23 launch_time
 */
#ifndef GSO_OFFLOAD_XSK_INTERNAL_H
#define GSO_OFFLOAD_XSK_INTERNAL_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <gso/offload.h>

/*
 * Write `m` to `out` (GSO_XSK_TXMD_LEN bytes); `m` is not checked.  With
 * `whole` false only what the kernel reads is written: the flags and the
 * checksum request always, launch_time under its flag; the reserved bytes
 * (which it never looks at) and a launch_time without its flag are left
 * as they are, which saves the data path two stores per frame.
 */
static inline void gsoi_xsk_txmd_put(const struct gso_xsk_txmd *m, void *out, bool whole)
{
	uint8_t *b = out;
	/* Whole words (csum_start and csum_offset as one): one store each. */
	uint64_t flags = htole64(m->flags), launch = htole64(m->launch_time);
	uint32_t req = htole32((uint32_t)m->csum_start | (uint32_t)m->csum_offset << 16);
	uint32_t rsv = htole32(m->reserved);

	memcpy(b, &flags, sizeof(flags));
	memcpy(b + 8, &req, sizeof(req));
	if (whole)
		memcpy(b + 12, &rsv, sizeof(rsv));
	if (whole || (m->flags & GSO_XSK_TXMD_LAUNCH_TIME))
		memcpy(b + 16, &launch, sizeof(launch));
}

#endif
