/*
 * Flow placement: the Toeplitz hash of receive-side scaling, with the
 * default key of Microsoft's RSS specification (also the default of
 * Linux drivers that do not pick a random one, and of DPDK's examples),
 * so that the queue a flow is given matches the queue a NIC with that
 * key puts the peer's frames on.
 */
#include <errno.h>
#include <string.h>

#include <gso/port.h>
#include "steer/flow_internal.h"
#include "port_internal.h"

const uint8_t gsoi_port_rss_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

uint32_t gsoi_port_toeplitz(const uint8_t *key, uint32_t keylen, const uint8_t *in, uint32_t n)
{
	/* The 32-bit window of the key that starts at the input bit being looked at. */
	uint32_t win = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 | (uint32_t)key[2] << 8 | key[3];
	uint32_t h = 0;

	if (n + 4 > keylen)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		for (int b = 7; b >= 0; b--) {
			if ((in[i] >> b) & 1)
				h ^= win;
			win = win << 1 | ((uint32_t)(key[i + 4] >> b) & 1);
		}
	}
	return h;
}

uint32_t gso_flow__rss_hash(const struct gso_flow *caller)
{
	struct gso_flow full, *f = &full;
	uint8_t in[36];
	uint32_t alen, n;

	if (!gsoi_flow_read(caller, &full) || (f->l3 != GSO_L3_IPV4 && f->l3 != GSO_L3_IPV6))
		return 0;
	alen = f->l3 == GSO_L3_IPV4 ? 4 : 16;
	memcpy(in, f->saddr, alen);
	memcpy(in + alen, f->daddr, alen);
	n = 2 * alen;
	in[n++] = (uint8_t)(f->sport >> 8);
	in[n++] = (uint8_t)f->sport;
	in[n++] = (uint8_t)(f->dport >> 8);
	in[n++] = (uint8_t)f->dport;
	return gsoi_port_toeplitz(gsoi_port_rss_key, sizeof(gsoi_port_rss_key), in, n);
}

int gso_port__queue_of(const struct gso_port *h, const struct gso_flow *caller)
{
	const struct port *p = port_of(h);
	struct gso_flow f;

	if (h && !p)
		return -EBADF;
	if (!p || !gsoi_flow_read(caller, &f) || (f.l3 != GSO_L3_IPV4 && f.l3 != GSO_L3_IPV6))
		return -EINVAL;
	return (int)(gso_flow__rss_hash(&f) % p->n);
}
