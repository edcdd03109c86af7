/*
 * ICMP "fragmentation needed" and ICMPv6 "packet too big" frames built
 * byte by byte, quoting one of our TCP or UDP packets, for the parser's
 * tests (test_icmp_err.c) and the engine's (test_tcp_pmtu.c).  Every
 * field a knob, so that a test can break exactly one.
 */
#ifndef GSO_TEST_ICMPFRAME_H
#define GSO_TEST_ICMPFRAME_H

#include <stdbool.h>
#include <stdint.h>

enum { ICMPF_ETH = 14, ICMPF_VLAN = 4, ICMPF_IP4 = 20, ICMPF_IP6 = 40, ICMPF_HDR = 8, ICMPF_MAX = 256 };

/* What the frame says. */
struct icmp_knobs {
	bool v6;
	bool vlan;
	uint16_t tci;        /* the tag's TCI (priority bits included) */
	uint8_t type, code;
	uint32_t mtu;        /* IPv4: its low 16 bits */
	uint8_t q_ver;       /* the quoted header's version: 4 or 6 */
	uint8_t q_ihl;       /* the quoted IPv4 header's ihl, in words */
	uint8_t q_proto;     /* the quoted protocol (IPv6: next header) */
	unsigned q_l4;       /* bytes of the quoted L4 header */
	uint8_t router[16];  /* the message's source (IPv4: first 4 bytes) */
	uint8_t our[16];     /* its destination, and the quoted packet's source */
	uint8_t peer[16];    /* the quoted packet's destination */
	uint16_t lport, rport; /* the quoted source and destination ports */
	uint32_t seq;        /* the quoted TCP sequence number (UDP: length and checksum 1472, 0) */
};

/* Where icmp_frame_build() put things. */
struct icmp_frame {
	uint8_t b[ICMPF_MAX];
	uint32_t len;
	unsigned ip, icmp, q;
	bool v6;
};

/* A good message (type 3 code 4, ICMPv6 2/0) with its right checksums. */
void icmp_frame_build(struct icmp_frame *f, const struct icmp_knobs *k);
/* The outer IPv4 header's checksum and the ICMP checksum, again, after a change. */
void icmp_frame_reseal(struct icmp_frame *f);
void icmpf_put16(uint8_t *p, uint16_t v);
void icmpf_put32(uint8_t *p, uint32_t v);

#endif
