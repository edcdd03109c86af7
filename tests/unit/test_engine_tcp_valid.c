/*
 * The stream flows' acceptance rules after the handshake
 * (xdp/tcp/engine_tcp_valid.c): RFC 793's window test and RFC 5961's answers
 * to RSTs, SYNs and ACKs, row by row, at the edges and across the 2^32
 * wrap, and the challenge-ACK throttle.  The same rules on a live
 * transfer, next to the kernel's: tests/integration/test_sender_inject.c.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <gso/tmpl.h>

#include "tcp/engine_tcp_internal.h"

struct rx_case {
	char name[40];
	uint32_t rcv_nxt, wnd;
	uint32_t seq, payload;
	uint8_t flags;
	enum tcp_rx_verdict want;
};

#define RST GSO_TCP_RST
#define SYN GSO_TCP_SYN
#define ACK GSO_TCP_ACK
#define FIN GSO_TCP_FIN

ParameterizedTestParameters(tcp_valid, rx)
{
	static struct rx_case c[] = {
		{ "pure ack at rcv_nxt", 1000, 65535, 1000, 0, ACK, TCP_RX_ACCEPT },
		{ "keepalive rcv_nxt-1", 1000, 65535, 999, 0, ACK, TCP_RX_DUPACK },
		{ "data overlapping left edge", 1000, 65535, 900, 200, ACK, TCP_RX_ACCEPT },
		{ "data ending before rcv_nxt", 1000, 65535, 900, 99, ACK, TCP_RX_DUPACK },
		{ "fin at rcv_nxt", 1000, 65535, 1000, 0, ACK | FIN, TCP_RX_ACCEPT },
		{ "fin again (rcv_nxt-1)", 1001, 65535, 1000, 0, ACK | FIN, TCP_RX_ACCEPT },
		{ "right edge", 1000, 65535, 1000 + 65535, 1, ACK, TCP_RX_ACCEPT },
		{ "past right edge", 1000, 65535, 1000 + 65536, 1, ACK, TCP_RX_DUPACK },
		{ "far away", 1000, 65535, 0x80001000u, 0, ACK, TCP_RX_DUPACK },
		{ "rst exact", 1000, 65535, 1000, 0, RST, TCP_RX_RESET },
		{ "rst|ack exact", 1000, 65535, 1000, 0, RST | ACK, TCP_RX_RESET },
		{ "rst in window", 1000, 65535, 1001, 0, RST, TCP_RX_CHALLENGE },
		{ "rst right edge", 1000, 65535, 1000 + 65535, 0, RST, TCP_RX_CHALLENGE },
		{ "rst past right edge", 1000, 65535, 1000 + 65536, 0, RST, TCP_RX_DROP },
		{ "rst before rcv_nxt", 1000, 65535, 999, 0, RST, TCP_RX_DROP },
		{ "rst blind", 1000, 65535, 0x40001000u, 0, RST, TCP_RX_DROP },
		{ "rst exact across wrap", 0xfffffff0u, 65535, 0xfffffff0u, 0, RST, TCP_RX_RESET },
		{ "rst in window across wrap", 0xfffffff0u, 65535, 0x10, 0, RST, TCP_RX_CHALLENGE },
		{ "syn in window", 1000, 65535, 1000, 0, SYN, TCP_RX_CHALLENGE },
		{ "syn anywhere", 1000, 65535, 12345678, 0, SYN, TCP_RX_CHALLENGE },
		{ "syn-ack again", 1000, 65535, 999, 0, SYN | ACK, TCP_RX_CHALLENGE },
		{ "syn|rst is an rst", 1000, 65535, 5000, 0, SYN | RST, TCP_RX_CHALLENGE },
	};
	return cr_make_param_array(struct rx_case, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct rx_case *c, tcp_valid, rx)
{
	struct tcp_seg g = { .seq = c->seq, .payload = c->payload, .flags = c->flags };

	cr_assert_eq(gsoi_tcp_rx_check(&g, c->rcv_nxt, c->wnd), c->want, "%s", c->name);
}

struct ack_case {
	char name[40];
	uint32_t ack, una, max, wnd;
	enum tcp_ack_verdict want;
};

ParameterizedTestParameters(tcp_valid, ack)
{
	static struct ack_case c[] = {
		{ "snd_una", 5000, 5000, 9000, 1000, TCP_ACK_OK },
		{ "snd_max", 9000, 5000, 9000, 1000, TCP_ACK_OK },
		{ "past snd_max", 9001, 5000, 9000, 1000, TCP_ACK_UNSENT },
		{ "old within max window", 4000, 5000, 9000, 1000, TCP_ACK_OK },
		{ "older than max window", 3999, 5000, 9000, 1000, TCP_ACK_TOO_OLD },
		{ "1 GB old", 5000u - 0x40000000u, 5000, 9000, 1 << 20, TCP_ACK_TOO_OLD },
		{ "across wrap", 0x10, 0xfffffff0u, 0x100, 1000, TCP_ACK_OK },
		{ "unsent across wrap", 0x101, 0xfffffff0u, 0x100, 1000, TCP_ACK_UNSENT },
		/* Below SND.UNA and, by wrap, past SND.MAX: old first, as Linux's tcp_ack() judges (fuzz_tcp_rx). */
		{ "2^31 behind snd_una", 5000u + 0x80000000u, 5000, 9000, 1000, TCP_ACK_TOO_OLD },
		{ "2^31 - 3999 behind snd_una", 5000u + 0x80000000u + 3999, 5000, 9000, 1000, TCP_ACK_TOO_OLD },
	};
	return cr_make_param_array(struct ack_case, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct ack_case *c, tcp_valid, ack)
{
	cr_assert_eq(gsoi_tcp_ack_check(c->ack, c->una, c->max, c->wnd), c->want, "%s", c->name);
}

Test(tcp_valid, throttle)
{
	uint64_t last = 0, t = 123;

	cr_assert(gsoi_tcp_oow_allow(&last, t));
	cr_assert_not(gsoi_tcp_oow_allow(&last, t + 1));
	cr_assert_not(gsoi_tcp_oow_allow(&last, t + TCP_OOW_INTERVAL_NS - 1));
	cr_assert(gsoi_tcp_oow_allow(&last, t + TCP_OOW_INTERVAL_NS));
	cr_assert_not(gsoi_tcp_oow_allow(&last, t + TCP_OOW_INTERVAL_NS + 1));
	/* A clock that went back does not silence the stream for good. */
	cr_assert(gsoi_tcp_oow_allow(&last, 5));
	last = 0;
	cr_assert(gsoi_tcp_oow_allow(&last, 0), "time 0 is a time too");
	cr_assert_not(gsoi_tcp_oow_allow(&last, 1));
}
