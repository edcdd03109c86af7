/*
 * The ICMP path-MTU error parser (gsoi_icmp_err_parse,
 * xdp/engine/icmp_err.c) on frames built byte by byte (icmpframe.h): IPv4 and
 * IPv6, tagged and untagged, quoting TCP and UDP.  Every field of a good
 * one; the IPv4 clamp to 552 and the IPv6 floor of 1280; what is not
 * ours (OTHER) and each reason to ignore one (BAD), every cut of a good
 * frame included.  Each frame is parsed from a heap copy of its exact
 * length, so that a read past it shows under ASan (build/tests/unit-asan).
 */
#include <criterion/criterion.h>

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "engine/icmp_err_internal.h"
#include "icmpframe.h"

static const uint8_t OUR4[4] = { 10, 0, 0, 1 }, PEER4[4] = { 192, 0, 2, 7 }, RTR4[4] = { 10, 0, 9, 254 };
static const uint8_t OUR6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
static const uint8_t PEER6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7 };
static const uint8_t RTR6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0xfe };

enum { LPORT = 40000, RPORT = 443 };
#define SEQ 0x8badf00du

/* A good message about our packet to the peer, through the router. */
static struct icmp_knobs knobs(bool v6, bool vlan, uint8_t proto)
{
	struct icmp_knobs k = { .v6 = v6, .vlan = vlan, .tci = 0x2000 | 123, .type = v6 ? 2 : 3,
				.code = v6 ? 0 : 4, .mtu = 1400, .q_ver = v6 ? 6 : 4, .q_ihl = 5,
				.q_proto = proto, .q_l4 = 8, .lport = LPORT, .rport = RPORT, .seq = SEQ };

	memcpy(k.router, v6 ? RTR6 : RTR4, v6 ? 16 : 4);
	memcpy(k.our, v6 ? OUR6 : OUR4, v6 ? 16 : 4);
	memcpy(k.peer, v6 ? PEER6 : PEER4, v6 ? 16 : 4);
	return k;
}

/* Parses `len` bytes of f from a heap copy of exactly that size. */
static enum icmp_err_verdict parse_n(const struct icmp_frame *f, uint32_t len, struct icmp_err *e)
{
	uint8_t *c = malloc(len ? len : 1);
	enum icmp_err_verdict v;

	cr_assert(c);
	memcpy(c, f->b, len);
	v = gsoi_icmp_err_parse(c, len, e);
	free(c);
	return v;
}

static enum icmp_err_verdict parse(const struct icmp_frame *f, struct icmp_err *e)
{
	return parse_n(f, f->len, e);
}

static enum icmp_err_verdict verdict_of(const struct icmp_knobs *k)
{
	struct icmp_frame f;
	struct icmp_err e;

	icmp_frame_build(&f, k);
	return parse(&f, &e);
}

Test(icmp_err, good_messages_fill_every_field)
{
	for (int v6 = 0; v6 < 2; v6++)
		for (int vlan = 0; vlan < 2; vlan++)
			for (int tcp = 0; tcp < 2; tcp++) {
				struct icmp_knobs k = knobs(v6, vlan, tcp ? IPPROTO_TCP : IPPROTO_UDP);
				struct icmp_err e, want = { 0 };
				struct icmp_frame f;

				icmp_frame_build(&f, &k);
				memset(&e, 0xa5, sizeof(e));
				cr_assert_eq(parse(&f, &e), ICMP_ERR_PMTU, "v6 %d vlan %d tcp %d", v6, vlan, tcp);
				want.l3 = v6 ? 6 : 4;
				want.l4 = k.q_proto;
				want.vlan = vlan ? 123 : 0;
				memcpy(want.local, v6 ? OUR6 : OUR4, v6 ? 16 : 4);
				memcpy(want.remote, v6 ? PEER6 : PEER4, v6 ? 16 : 4);
				memcpy(want.router, v6 ? RTR6 : RTR4, v6 ? 16 : 4);
				want.lport = LPORT;
				want.rport = RPORT;
				want.seq = tcp ? SEQ : 0;
				want.mtu = 1400;
				cr_assert_eq(e.l3, want.l3);
				cr_assert_eq(e.l4, want.l4);
				cr_assert_eq(e.vlan, want.vlan, "v6 %d vlan %d tcp %d: vlan %u", v6, vlan, tcp, e.vlan);
				cr_assert_arr_eq(e.local, want.local, 16);
				cr_assert_arr_eq(e.remote, want.remote, 16);
				cr_assert_arr_eq(e.router, want.router, 16);
				cr_assert_eq(e.lport, want.lport);
				cr_assert_eq(e.rport, want.rport);
				cr_assert_eq(e.seq, want.seq, "v6 %d tcp %d: seq %#x", v6, tcp, e.seq);
				cr_assert_eq(e.mtu, want.mtu);
			}
}

Test(icmp_err, ipv4_mtu_below_552_is_raised_to_it)
{
	static const uint32_t said[] = { 0, 1, 68, 551, 552, 553, 576, 1500, 9000, 65535 };
	static const uint32_t got[] = { 552, 552, 552, 552, 552, 553, 576, 1500, 9000, 65535 };

	for (unsigned i = 0; i < sizeof(said) / sizeof(said[0]); i++)
		for (int vlan = 0; vlan < 2; vlan++) {
			struct icmp_knobs k = knobs(false, vlan, IPPROTO_TCP);
			struct icmp_err e;
			struct icmp_frame f;

			k.mtu = said[i];
			icmp_frame_build(&f, &k);
			cr_assert_eq(parse(&f, &e), ICMP_ERR_PMTU, "mtu %u", said[i]);
			cr_assert_eq(e.mtu, got[i], "mtu %u -> %u", said[i], e.mtu);
		}
}

Test(icmp_err, ipv6_mtu_below_1280_is_ignored_and_the_field_is_32_bits)
{
	static const uint32_t said[] = { 0, 1279, 1280, 1281, 9000, 65536, 0x01000500, 0xffffffff };

	for (unsigned i = 0; i < sizeof(said) / sizeof(said[0]); i++)
		for (int tcp = 0; tcp < 2; tcp++) {
			struct icmp_knobs k = knobs(true, false, tcp ? IPPROTO_TCP : IPPROTO_UDP);
			struct icmp_err e;
			struct icmp_frame f;

			k.mtu = said[i];
			icmp_frame_build(&f, &k);
			if (said[i] < 1280) {
				cr_assert_eq(parse(&f, &e), ICMP_ERR_BAD, "mtu %u", said[i]);
				continue;
			}
			cr_assert_eq(parse(&f, &e), ICMP_ERR_PMTU, "mtu %u", said[i]);
			cr_assert_eq(e.mtu, said[i]);
		}
}

Test(icmp_err, other_types_codes_and_protocols_are_not_ours)
{
	static const uint8_t tc4[][2] = { { 3, 0 }, { 3, 1 }, { 3, 3 }, { 3, 5 }, { 0, 0 }, { 8, 0 }, { 11, 0 },
					  { 12, 0 }, { 4, 4 }, { 2, 0 } };
	static const uint8_t tc6[][2] = { { 1, 0 }, { 1, 4 }, { 2, 1 }, { 2, 4 }, { 3, 0 }, { 4, 0 },
					  { 128, 0 }, { 129, 0 }, { 135, 0 }, { 3, 4 } };

	for (int v6 = 0; v6 < 2; v6++)
		for (unsigned i = 0; i < 10; i++) {
			struct icmp_knobs k = knobs(v6, v6, IPPROTO_TCP);
			struct icmp_frame f;
			struct icmp_err e;

			k.type = v6 ? tc6[i][0] : tc4[i][0];
			k.code = v6 ? tc6[i][1] : tc4[i][1];
			cr_assert_eq(verdict_of(&k), ICMP_ERR_OTHER, "v6 %d type %u code %u", v6, k.type, k.code);
			/* Not ours even when its checksum is wrong: another handler's to judge. */
			icmp_frame_build(&f, &k);
			f.b[f.icmp + 2] ^= 0x10;
			cr_assert_eq(parse(&f, &e), ICMP_ERR_OTHER, "v6 %d type %u code %u, bad sum", v6, k.type, k.code);
		}
}

Test(icmp_err, frames_that_are_not_icmp_are_not_ours)
{
	for (int v6 = 0; v6 < 2; v6++)
		for (int vlan = 0; vlan < 2; vlan++) {
			struct icmp_knobs k = knobs(v6, vlan, IPPROTO_UDP);
			unsigned et = ICMPF_ETH - 2 + (vlan ? ICMPF_VLAN : 0);
			struct icmp_err e;
			struct icmp_frame f;

			icmp_frame_build(&f, &k);
			icmpf_put16(f.b + et, 0x0806); /* ARP */
			cr_assert_eq(parse(&f, &e), ICMP_ERR_OTHER, "v6 %d vlan %d: ARP", v6, vlan);

			/* TCP, UDP, and the other family's ICMP */
			static const uint8_t protos[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_ICMPV6 };
			for (unsigned i = 0; i < 4; i++) {
				if (protos[i] == (v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP))
					continue;
				icmp_frame_build(&f, &k);
				f.b[f.ip + (v6 ? 6 : 9)] = protos[i];
				icmp_frame_reseal(&f);
				cr_assert_eq(parse(&f, &e), ICMP_ERR_OTHER, "v6 %d vlan %d: proto %u", v6, vlan, protos[i]);
			}
		}
	/* ICMPv6 behind an extension header: not walked, so not ours. */
	struct icmp_knobs k = knobs(true, false, IPPROTO_TCP);
	struct icmp_err e;
	struct icmp_frame f;

	static const uint8_t ext[] = { IPPROTO_HOPOPTS, IPPROTO_ROUTING, IPPROTO_FRAGMENT, IPPROTO_DSTOPTS };
	for (unsigned i = 0; i < 4; i++) {
		icmp_frame_build(&f, &k);
		f.b[f.ip + 6] = ext[i];
		cr_assert_eq(parse(&f, &e), ICMP_ERR_OTHER, "next header %u", ext[i]);
	}
}

Test(icmp_err, every_cut_of_a_good_frame_is_ignored)
{
	for (int v6 = 0; v6 < 2; v6++)
		for (int vlan = 0; vlan < 2; vlan++)
			for (int tcp = 0; tcp < 2; tcp++) {
				struct icmp_knobs k = knobs(v6, vlan, tcp ? IPPROTO_TCP : IPPROTO_UDP);
				struct icmp_err e;
				struct icmp_frame f;

				icmp_frame_build(&f, &k);
				for (uint32_t n = 0; n < f.len; n++) {
					cr_assert_eq(parse_n(&f, n, &e), ICMP_ERR_BAD, "v6 %d vlan %d tcp %d: %u of %u bytes",
						     v6, vlan, tcp, n, f.len);
				}
			}
}

Test(icmp_err, the_ip_length_not_the_frame_says_where_it_ends)
{
	for (int v6 = 0; v6 < 2; v6++) {
		struct icmp_knobs k = knobs(v6, true, IPPROTO_TCP);
		struct icmp_err e;
		struct icmp_frame f;

		/* Ethernet padding after the packet is no part of the ICMP message or its checksum. */
		icmp_frame_build(&f, &k);
		memset(f.b + f.len, 0xee, 10);
		f.len += 10;
		cr_assert_eq(parse(&f, &e), ICMP_ERR_PMTU, "v6 %d: a trailer", v6);
		cr_assert_eq(e.seq, SEQ);

		/* A length past the frame's end: cut. */
		icmp_frame_build(&f, &k);
		if (v6)
			icmpf_put16(f.b + f.ip + 4, (uint16_t)(f.len - f.icmp + 1));
		else
			icmpf_put16(f.b + f.ip + 2, (uint16_t)(f.len - f.ip + 1));
		icmp_frame_reseal(&f);
		cr_assert_eq(parse(&f, &e), ICMP_ERR_BAD, "v6 %d: length past the frame", v6);

		/* A length that leaves out the quoted ports: too short, though the frame has them. */
		icmp_frame_build(&f, &k);
		f.len -= 4;
		if (v6)
			icmpf_put16(f.b + f.ip + 4, (uint16_t)(f.len - f.icmp));
		else
			icmpf_put16(f.b + f.ip + 2, (uint16_t)(f.len - f.ip));
		icmp_frame_reseal(&f);
		f.len += 4;
		cr_assert_eq(parse(&f, &e), ICMP_ERR_BAD, "v6 %d: length short of the quote", v6);
	}
}

Test(icmp_err, a_wrong_checksum_anywhere_is_ignored)
{
	for (int v6 = 0; v6 < 2; v6++)
		for (int tcp = 0; tcp < 2; tcp++) {
			struct icmp_knobs k = knobs(v6, false, tcp ? IPPROTO_TCP : IPPROTO_UDP);
			struct icmp_err e;
			struct icmp_frame f;

			icmp_frame_build(&f, &k);
			/* Past the type and code, which would make it another's. */
			for (unsigned i = f.icmp + 2; i < f.len; i++) {
				icmp_frame_build(&f, &k);
				f.b[i] ^= 0x20;
				cr_assert_eq(parse(&f, &e), ICMP_ERR_BAD, "v6 %d tcp %d: byte %u of the ICMP message",
					     v6, tcp, i - f.icmp);
			}
			/* ICMPv6's pseudo-header covers the addresses. */
			if (v6) {
				icmp_frame_build(&f, &k);
				f.b[f.ip + 8 + 15] ^= 1;
				cr_assert_eq(parse(&f, &e), ICMP_ERR_BAD, "v6: router address not in the sum");
			}
		}
	/* The outer IPv4 header's checksum. */
	struct icmp_knobs k = knobs(false, true, IPPROTO_TCP);
	struct icmp_err e;
	struct icmp_frame f;

	icmp_frame_build(&f, &k);
	f.b[f.ip + 8] ^= 1; /* TTL */
	cr_assert_eq(parse(&f, &e), ICMP_ERR_BAD, "outer IPv4 header sum");
}

Test(icmp_err, the_quoted_ipv4_header_checksum_is_not_checked)
{
	struct icmp_knobs k = knobs(false, false, IPPROTO_UDP);
	struct icmp_err e;
	struct icmp_frame f;

	icmp_frame_build(&f, &k);
	f.b[f.q + 10] ^= 0xff;
	f.b[f.q + 8] = 0;
	icmp_frame_reseal(&f);
	cr_assert_eq(parse(&f, &e), ICMP_ERR_PMTU);
}

Test(icmp_err, a_bad_outer_ipv4_header_or_a_fragment_is_ignored)
{
	struct icmp_knobs k = knobs(false, false, IPPROTO_TCP);
	struct icmp_err e;
	struct icmp_frame f;

	static const uint16_t frag[] = { 0x2000 /* MF */, 0x0001, 0x4001, 0x1fff };
	for (unsigned i = 0; i < 4; i++) {
		icmp_frame_build(&f, &k);
		icmpf_put16(f.b + f.ip + 6, frag[i]);
		icmp_frame_reseal(&f);
		cr_assert_eq(parse(&f, &e), ICMP_ERR_BAD, "frag field %#x", frag[i]);
	}
	icmp_frame_build(&f, &k);
	icmpf_put16(f.b + f.ip + 6, 0x4000); /* DF alone is no fragment */
	icmp_frame_reseal(&f);
	cr_assert_eq(parse(&f, &e), ICMP_ERR_PMTU);

	for (unsigned ihl = 0; ihl < 5; ihl++) {
		icmp_frame_build(&f, &k);
		f.b[f.ip] = (uint8_t)(0x40 | ihl);
		cr_assert_eq(parse(&f, &e), ICMP_ERR_BAD, "outer ihl %u", ihl);
	}
	/* The version: not IPv4, though the EtherType says so. */
	icmp_frame_build(&f, &k);
	f.b[f.ip] = 0x65;
	cr_assert_eq(parse(&f, &e), ICMP_ERR_BAD, "outer version 6 under 0x0800");
	k = knobs(true, false, IPPROTO_TCP);
	icmp_frame_build(&f, &k);
	f.b[f.ip] = 0x40;
	cr_assert_eq(parse(&f, &e), ICMP_ERR_BAD, "outer version 4 under 0x86dd");
}

Test(icmp_err, an_icmp_header_without_a_quote_is_ignored)
{
	for (int v6 = 0; v6 < 2; v6++)
		for (unsigned keep = 0; keep <= ICMPF_HDR; keep++) {
			struct icmp_knobs k = knobs(v6, false, IPPROTO_TCP);
			struct icmp_err e;
			struct icmp_frame f;

			icmp_frame_build(&f, &k);
			f.len = f.icmp + keep;
			if (v6)
				icmpf_put16(f.b + f.ip + 4, (uint16_t)keep);
			else
				icmpf_put16(f.b + f.ip + 2, (uint16_t)(f.len - f.ip));
			icmp_frame_reseal(&f);
			cr_assert_eq(parse(&f, &e), ICMP_ERR_BAD, "v6 %d: %u bytes of ICMP", v6, keep);
		}
}

Test(icmp_err, the_quote_must_hold_a_whole_ip_header_and_8_bytes_of_tcp_or_udp)
{
	for (int v6 = 0; v6 < 2; v6++)
		for (int tcp = 0; tcp < 2; tcp++) {
			struct icmp_knobs k = knobs(v6, true, tcp ? IPPROTO_TCP : IPPROTO_UDP);

			for (unsigned n = 0; n < 8; n++) {
				k.q_l4 = n;
				cr_assert_eq(verdict_of(&k), ICMP_ERR_BAD, "v6 %d tcp %d: %u L4 bytes", v6, tcp, n);
			}
			k.q_l4 = 8;
			cr_assert_eq(verdict_of(&k), ICMP_ERR_PMTU);
			k.q_l4 = 100;
			cr_assert_eq(verdict_of(&k), ICMP_ERR_PMTU, "more quoted than needed");

			/* Protocols of no flow of ours; ICMP quoting ICMP never makes an error. */
			static const uint8_t protos[] = { IPPROTO_ICMP, IPPROTO_ICMPV6, IPPROTO_SCTP, 0, 41, 255 };
			for (unsigned i = 0; i < sizeof(protos); i++) {
				k = knobs(v6, true, protos[i]);
				cr_assert_eq(verdict_of(&k), ICMP_ERR_BAD, "v6 %d: quoted proto %u", v6, protos[i]);
			}

			/* The other family quoted, or a version the EtherType never vouched for. */
			k = knobs(v6, false, tcp ? IPPROTO_TCP : IPPROTO_UDP);
			k.q_ver = v6 ? 4 : 6;
			cr_assert_eq(verdict_of(&k), ICMP_ERR_BAD, "v6 %d: the other family quoted", v6);
		}

	/* Quoted IPv4: ihl below 5; options counted; options that leave no room for the ports. */
	struct icmp_knobs k = knobs(false, false, IPPROTO_TCP);
	struct icmp_err e;
	struct icmp_frame f;

	for (uint8_t ihl = 0; ihl < 5; ihl++) {
		k.q_ihl = ihl;
		k.q_l4 = 40;
		cr_assert_eq(verdict_of(&k), ICMP_ERR_BAD, "quoted ihl %u", ihl);
	}
	k = knobs(false, false, IPPROTO_TCP);
	k.q_ihl = 15;
	icmp_frame_build(&f, &k);
	cr_assert_eq(parse(&f, &e), ICMP_ERR_PMTU, "60-byte quoted header");
	cr_assert_eq(e.lport, LPORT);
	cr_assert_eq(e.seq, SEQ);
	/* ihl 15, but the router quoted 20 + 8 bytes: the "ports" would lie past the quote. */
	icmp_frame_build(&f, &k);
	f.len = f.q + 28;
	icmpf_put16(f.b + f.ip + 2, (uint16_t)(f.len - f.ip));
	icmp_frame_reseal(&f);
	cr_assert_eq(parse(&f, &e), ICMP_ERR_BAD, "quoted ihl 15 in 28 bytes");
	k = knobs(false, false, IPPROTO_TCP);
	k.q_ihl = 6;
	k.q_l4 = 7;
	cr_assert_eq(verdict_of(&k), ICMP_ERR_BAD, "ihl 6, 7 L4 bytes");

	/* Quoted IPv6: TCP behind an extension header is not followed. */
	k = knobs(true, false, IPPROTO_HOPOPTS);
	k.q_l4 = 40;
	cr_assert_eq(verdict_of(&k), ICMP_ERR_BAD, "quoted hop-by-hop");
}

Test(icmp_err, the_vlan_id_leaves_the_priority_out)
{
	static const uint16_t tci[] = { 0, 1, 123, 0xe00a, 0x1fff, 0x0fff };
	static const uint16_t id[] = { 0, 1, 123, 10, 0xfff, 0xfff };

	for (unsigned i = 0; i < 6; i++) {
		struct icmp_knobs k = knobs(i & 1, true, IPPROTO_UDP);
		struct icmp_err e;
		struct icmp_frame f;

		k.tci = tci[i];
		icmp_frame_build(&f, &k);
		cr_assert_eq(parse(&f, &e), ICMP_ERR_PMTU);
		cr_assert_eq(e.vlan, id[i], "tci %#x -> %#x", tci[i], e.vlan);
	}
}
