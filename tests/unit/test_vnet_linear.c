/*
 * The linear part AF_PACKET is asked for (gsoi_vnet_linear_hint, vnet.c):
 * the whole frame while the skb's head stays one 64 KiB block, never less
 * than the headers, never more than the frame (the kernel refuses
 * hdr_len > frame with EINVAL).
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "vnet/vnet_internal.h"

Test(vnet_linear, whole_frame_up_to_one_block)
{
	/* A small frame: all of it (the kernel makes frames under a page linear anyway). */
	cr_expect_eq(gsoi_vnet_linear_hint(1514, 54), 1514);
	/* 45 segments of 1448 behind 66 bytes of headers: 65226 bytes, more than the cap. */
	cr_expect_eq(gsoi_vnet_linear_hint(65226, 66), 65536 - 1024);
	cr_expect_eq(gsoi_vnet_linear_hint(65536 - 1024, 66), 65536 - 1024);
	cr_expect_eq(gsoi_vnet_linear_hint(65536 - 1025, 66), 65536 - 1025);
	/* The largest frame a super-segment makes (a 65535-byte datagram behind Ethernet + 802.1Q). */
	cr_expect_eq(gsoi_vnet_linear_hint(65535 + 18, 86), 65536 - 1024);
}

Test(vnet_linear, never_below_the_headers_nor_past_the_frame)
{
	for (uint32_t len = 0; len <= 70000; len += 7) {
		uint16_t h = (uint16_t)(len < 86 ? len : 86);
		uint16_t lin = gsoi_vnet_linear_hint(len, h);

		cr_assert_geq(lin, h, "frame %u", len);
		cr_assert_leq(lin, len, "frame %u", len);
		cr_assert_leq(lin, 65536 - 1024, "frame %u", len);
	}
}
