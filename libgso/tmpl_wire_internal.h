/*
 * Byte-order loads and stores for wire headers and descriptor layouts
 * (not installed).  Everything goes through memcpy so that unaligned
 * fields in packet buffers never become aliasing or alignment bugs.
 */
#ifndef GSO_TMPL_WIRE_INTERNAL_H
#define GSO_TMPL_WIRE_INTERNAL_H

#include <stdint.h>
#include <string.h>

/* Offsets of the fixed header fields this library reads or writes. */
#define ETH_HLEN_ 14u
#define VLAN_HLEN_ 4u
#define ETHERTYPE_IPV4_ 0x0800u
#define ETHERTYPE_IPV6_ 0x86ddu
#define ETHERTYPE_VLAN_ 0x8100u
#define ETHERTYPE_QINQ_ 0x88a8u
#define ETHERTYPE_QINQ_OLD_ 0x9100u

#define IP4_TOT_LEN_ 2u
#define IP4_ID_ 4u
#define IP4_FRAG_ 6u
#define IP4_TTL_ 8u
#define IP4_PROTO_ 9u
#define IP4_CHECK_ 10u
#define IP4_SADDR_ 12u
#define IP4_DADDR_ 16u
#define IP4_DF_ 0x4000u
#define IP4_MF_ 0x2000u
#define IP4_OFFMASK_ 0x1fffu

#define IP6_HLEN_ 40u
#define IP6_PLEN_ 4u
#define IP6_NEXT_ 6u
#define IP6_HOPS_ 7u
#define IP6_SADDR_ 8u
#define IP6_DADDR_ 24u

#define TCP_SEQ_ 4u
#define TCP_ACK_ 8u
#define TCP_DOFF_ 12u
#define TCP_FLAGS_ 13u
#define TCP_WIN_ 14u
#define TCP_CHECK_ 16u
#define TCP_URG_ 18u
#define TCP_HLEN_MIN_ 20u

#define UDP_HLEN_ 8u
#define UDP_LEN_ 4u
#define UDP_CHECK_ 6u

static inline uint16_t get_be16(const void *p)
{
	uint8_t b[2];

	memcpy(b, p, 2);
	return (uint16_t)(b[0] << 8 | b[1]);
}

static inline uint32_t get_be32(const void *p)
{
	uint8_t b[4];

	memcpy(b, p, 4);
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static inline void put_be16(void *p, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	memcpy(p, b, 2);
}

static inline void put_be32(void *p, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

	memcpy(p, b, 4);
}

static inline uint16_t get_le16(const void *p)
{
	uint8_t b[2];

	memcpy(b, p, 2);
	return (uint16_t)(b[1] << 8 | b[0]);
}

static inline uint32_t get_le32(const void *p)
{
	uint8_t b[4];

	memcpy(b, p, 4);
	return (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

static inline uint64_t get_le64(const void *p)
{
	const uint8_t *b = p;

	return (uint64_t)get_le32(b + 4) << 32 | get_le32(b);
}

static inline void put_le16(void *p, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };

	memcpy(p, b, 2);
}

static inline void put_le32(void *p, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	memcpy(p, b, 4);
}

static inline void put_le64(void *p, uint64_t v)
{
	uint8_t *b = p;

	put_le32(b, (uint32_t)v);
	put_le32(b + 4, (uint32_t)(v >> 32));
}

#endif
