/*
 * Checksum-metadata probe: the only reliable answer to "does this kernel
 * carry AF_XDP checksum requests in copy mode?" is to send one.  Pre-6.8
 * kernels accept the UMEM registration with tx_metadata_len (they ignore
 * the tail) but call the descriptor invalid.
 */
#include "xsk_internal.h"
#include "kernel/sleep_internal.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include <gso/offload.h>

#define PROBE_LEN 60            /* minimum Ethernet frame without FCS */
#define PROBE_ETHERTYPE 0x88b5  /* IEEE 802 local experimental: every receiver ignores it */
#define PROBE_WAIT_MS 1000

int gsoi_xsk_probe_csum(struct xsk_sock *s, uint8_t *area, uint64_t addr, const uint8_t mac[6],
			bool *completed)
{
	struct gso_xsk_txmd m = {
		.flags = GSO_XSK_TXMD_CHECKSUM,
		.csum_start = 14, /* sum the payload; the field is its first two bytes */
		.csum_offset = 0,
	};
	uint8_t *f = area + addr;
	struct xdp_desc *d;
	int64_t inv0, inv;
	uint32_t idx;
	int err;

	*completed = false;
	if (s->meta_len < GSO_XSK_TXMD_LEN)
		return 0;
	memset(f, 0, PROBE_LEN);
	memcpy(f, mac, 6);
	memcpy(f + 6, mac, 6);
	f[12] = PROBE_ETHERTYPE >> 8;
	f[13] = PROBE_ETHERTYPE & 0xff;
	err = gso_xsk_txmd_encode(&m, f - s->meta_len);
	if (err)
		return err;
	inv0 = gsoi_xsk_sock_tx_invalid(s);
	if (inv0 < 0)
		return (int)inv0;
	if (!xring_prod_reserve(&s->tx, 1, &idx))
		return -EAGAIN;
	d = xring_tx_desc(&s->tx, idx);
	d->addr = addr;
	d->len = PROBE_LEN;
	d->options = XDP_TX_METADATA;
	xring_prod_submit(&s->tx);

	for (int waited = 0; waited <= PROBE_WAIT_MS; waited++) {
		uint32_t ci;

		if (xring_prod_pending(&s->tx)) {
			err = gsoi_xsk_sock_kick(s);
			/* Copy mode refuses bad metadata here and keeps the descriptor. */
			if (err == -EINVAL)
				return -EINVAL;
			if (err && err != -EAGAIN && err != -EBUSY && err != -ENOBUFS)
				return err;
		}
		if (xring_cons_peek(&s->cq, 1, &ci)) {
			uint64_t got = xring_cq_addr(&s->cq, ci);
			xring_cons_release(&s->cq);
			*completed = true;
			return got == addr ? 1 : -EPROTO;
		}
		inv = gsoi_xsk_sock_tx_invalid(s);
		if (inv > inv0)
			return 0;
		sleep_ms(1);
	}
	return -ETIMEDOUT;
}
