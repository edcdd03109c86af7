/*
 * Random super-packets for the tools, deterministic from a seed: what a
 * Linux GSO skb looks like on the sending host (IP/UDP lengths cover the
 * whole super-packet, L4 checksum field = pseudo-header seed with the whole
 * L4 length, as CHECKSUM_PARTIAL leaves it), one Ethernet frame each.
 */
#ifndef GSO_TOOL_GEN_H
#define GSO_TOOL_GEN_H

#include <stddef.h>
#include <stdint.h>

/* Largest frame gen_next() writes: VLAN-tagged Ethernet + a 65535-byte IP datagram. */
#define GEN_FRAME_MAX (18u + 65535u)

enum gen_proto { GEN_MIX = 0, GEN_TCP4, GEN_TCP6, GEN_UDP4, GEN_UDP6 };

struct gen {
	uint64_t state;
	enum gen_proto proto;
	uint32_t max_payload; /* upper bound; each packet is also kept within 65535 IP bytes */
};

void gen_init(struct gen *g, uint64_t seed, enum gen_proto proto, uint32_t max_payload);

/* "tcp4", "tcp6", "udp4", "udp6", "mix" -> *out; 0 or -EINVAL. */
int gen_proto_parse(const char *s, enum gen_proto *out);

/* Next pseudo-random 64-bit value of the generator's stream. */
uint64_t gen_rand(struct gen *g);

/*
 * Write the next super-packet into `frame` (`cap` >= GEN_FRAME_MAX).
 * Returns its length, or a negative errno from the library's header builder.
 */
int gen_next(struct gen *g, uint8_t *frame, size_t cap);

#endif
