/*
 * The one encoder of AF_XDP transmit metadata (struct xsk_tx_metadata,
 * GSO_XSK_TXMD_LEN bytes, little-endian), not installed.  Inline, because
 * the AF_XDP device (xdp/xsk_tx.c) writes it once per frame with constant
 * flags; gso_xsk_txmd_encode() (offload_xsk.c) validates, then calls it.
 *
 *   0-7 flags | 8-9 csum_start | 10-11 csum_offset | 12-15 reserved |
 *   16-23 launch_time
 */
#ifndef GSO_OFFLOAD_XSK_INTERNAL_H
#define GSO_OFFLOAD_XSK_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include <gso/offload.h>
#include "tmpl_wire_internal.h"

/* Write `m` to `out` (GSO_XSK_TXMD_LEN bytes); `m` is not checked. */
static inline void gsoi_xsk_txmd_put(const struct gso_xsk_txmd *m, void *out)
{
	uint8_t b[GSO_XSK_TXMD_LEN];

	put_le64(b, m->flags);
	put_le16(b + 8, m->csum_start);
	put_le16(b + 10, m->csum_offset);
	put_le32(b + 12, m->reserved);
	put_le64(b + 16, m->launch_time);
	memcpy(out, b, sizeof(b));
}

#endif
