/*
 * Received frames' checksums (gsoi_rx_frame_csum, xdp/tcp/rx_csum.c), which the
 * engine checks before TCP input: right sums pass, one flipped bit fails,
 * the CHECKSUM_PARTIAL seed a local Linux peer leaves is told apart, UDP
 * without a checksum is fine over IPv4 only, and lengths that do not fit
 * the frame fail.  On a live transfer: tests/integration/test_sender_inject.c.
 */
#include <criterion/criterion.h>

#include <string.h>

#include <gso/csum.h>

#include "tcp/engine_tcp_internal.h"

enum { ETH = 14, VLAN = 4, IP4 = 20, IP6 = 40, TCP = 20, UDP = 8, PAY = 11 };

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Sums are in memory order (gso/csum.h): stored as they are. */
static void set_csum(uint8_t *p, uint16_t c)
{
	memcpy(p, &c, 2);
}

/* The L4 checksum field's offset in the L4 header. */
static unsigned csum_at(uint8_t proto)
{
	return proto == 6 ? 16 : 6;
}

/* Ethernet (with a VLAN tag when `vlan`), IPv4 or IPv6, TCP or UDP, PAY bytes; right sums. Returns the length. */
static uint32_t frame(uint8_t *f, bool v6, bool vlan, uint8_t proto, unsigned *l4_off)
{
	unsigned off = ETH + (vlan ? VLAN : 0), l4h = proto == 6 ? TCP : UDP, l4_len = l4h + PAY;
	uint8_t *ip = f + off, *l4;
	uint32_t seed;

	memset(f, 0, 256);
	memset(f, 0x02, 12);
	if (vlan) {
		put16(f + 12, 0x8100);
		put16(f + 14, 7);
	}
	put16(f + off - 2, v6 ? 0x86dd : 0x0800);
	if (v6) {
		ip[0] = 0x60;
		put16(ip + 4, (uint16_t)l4_len);
		ip[6] = proto;
		ip[7] = 64;
		ip[8] = 0xfd;
		ip[23] = 1;
		ip[24] = 0xfd;
		ip[39] = 2;
		l4 = ip + IP6;
		seed = gso_csum_pseudo6(ip + 8, ip + 24, proto, l4_len);
	} else {
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(IP4 + l4_len));
		put16(ip + 6, 0x4000); /* DF */
		ip[8] = 64;
		ip[9] = proto;
		memcpy(ip + 12, (uint8_t[]){ 10, 0, 0, 1, 10, 0, 0, 2 }, 8);
		set_csum(ip + 10, gso_csum_finish(gso_csum_partial(ip, IP4, 0)));
		l4 = ip + IP4;
		seed = gso_csum_pseudo4(ip + 12, ip + 16, proto, l4_len);
	}
	put16(l4, 40000);
	put16(l4 + 2, 5201);
	if (proto == 6)
		l4[12] = 5 << 4;
	else
		put16(l4 + 4, (uint16_t)l4_len);
	for (unsigned i = 0; i < PAY; i++)
		l4[l4h + i] = (uint8_t)(i * 37 + 1);
	set_csum(l4 + csum_at(proto), gso_csum_finish(gso_csum_partial(l4, l4_len, seed)));
	*l4_off = (unsigned)(l4 - f);
	return (uint32_t)(*l4_off + l4_len);
}

Test(rx_csum, right_sums_pass_and_a_flipped_bit_fails)
{
	for (int v6 = 0; v6 < 2; v6++)
		for (int vlan = 0; vlan < 2; vlan++)
			for (int tcp = 0; tcp < 2; tcp++) {
				uint8_t f[256];
				unsigned l4;
				uint32_t len = frame(f, v6, vlan, tcp ? 6 : 17, &l4);

				cr_assert_eq(gsoi_rx_frame_csum(f, len), RX_CSUM_OK, "v6 %d vlan %d tcp %d", v6, vlan, tcp);
				/* Every byte from the IP header on is covered by one of the sums. */
				for (uint32_t i = l4 - (v6 ? IP6 : IP4); i < len; i++) {
					unsigned h = i - (l4 - (v6 ? IP6 : IP4));

					/*
					 * No sum covers IPv6's version, class, flow label and hop
					 * limit; a next header flipped from TCP or UDP is a protocol
					 * with nothing to check.
					 */
					if (v6 && (h < 4 || h == 6 || h == 7))
						continue;
					f[i] ^= 0x10;
					cr_assert_eq(gsoi_rx_frame_csum(f, len), RX_CSUM_BAD, "v6 %d vlan %d tcp %d byte %u", v6,
						     vlan, tcp, i);
					f[i] ^= 0x10;
				}
			}
}

Test(rx_csum, partial_seed_is_told_apart)
{
	for (int v6 = 0; v6 < 2; v6++) {
		uint8_t f[256];
		unsigned l4;
		uint32_t len = frame(f, v6, false, 6, &l4);
		const uint8_t *ip = f + ETH;
		uint32_t l4_len = len - l4;
		uint16_t seed = gso_csum_fold(v6 ? gso_csum_pseudo6(ip + 8, ip + 24, 6, l4_len)
						 : gso_csum_pseudo4(ip + 12, ip + 16, 6, l4_len));

		set_csum(f + l4 + 16, seed);
		cr_assert_eq(gsoi_rx_frame_csum(f, len), RX_CSUM_PARTIAL, "v6 %d", v6);
		/* A seed for another length is just a wrong sum. */
		seed = (uint16_t)(seed + 1);
		set_csum(f + l4 + 16, seed);
		cr_assert_eq(gsoi_rx_frame_csum(f, len), RX_CSUM_BAD, "v6 %d", v6);
	}
}

Test(rx_csum, udp_without_checksum_only_over_ipv4)
{
	for (int v6 = 0; v6 < 2; v6++) {
		uint8_t f[256];
		unsigned l4;
		uint32_t len = frame(f, v6, false, 17, &l4);

		memset(f + l4 + 6, 0, 2);
		cr_assert_eq(gsoi_rx_frame_csum(f, len), v6 ? RX_CSUM_BAD : RX_CSUM_OK, "v6 %d", v6);
	}
}

Test(rx_csum, lengths_that_do_not_fit_fail)
{
	uint8_t f[256];
	unsigned l4;
	uint32_t len = frame(f, false, false, 6, &l4);

	cr_assert_eq(gsoi_rx_frame_csum(f, len - 1), RX_CSUM_BAD, "total length past the frame");
	cr_assert_eq(gsoi_rx_frame_csum(f, ETH + IP4 - 1), RX_CSUM_BAD, "a cut IPv4 header");
	cr_assert_eq(gsoi_rx_frame_csum(f, 10), RX_CSUM_BAD, "a cut Ethernet header");
	f[ETH] = 0x44; /* ihl 16 bytes */
	cr_assert_eq(gsoi_rx_frame_csum(f, len), RX_CSUM_BAD, "ihl below 5");
	len = frame(f, false, false, 6, &l4);
	put16(f + ETH + 2, IP4 + 10); /* says 10 bytes of TCP: less than its header */
	set_csum(f + ETH + 10, 0);
	set_csum(f + ETH + 10, gso_csum_finish(gso_csum_partial(f + ETH, IP4, 0)));
	cr_assert_eq(gsoi_rx_frame_csum(f, len), RX_CSUM_BAD, "a TCP header longer than the IP payload");
	len = frame(f, true, false, 17, &l4);
	cr_assert_eq(gsoi_rx_frame_csum(f, len - 1), RX_CSUM_BAD, "IPv6 payload length past the frame");
}

Test(rx_csum, not_ip_is_not_ours_to_check)
{
	uint8_t f[64] = { 0 };

	put16(f + 12, 0x0806); /* ARP */
	cr_assert_eq(gsoi_rx_frame_csum(f, sizeof(f)), RX_CSUM_OK);
}
