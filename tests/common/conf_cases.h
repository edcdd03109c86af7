/*
 * The conformance cases: super-packets built byte by byte, independently of
 * the library's header code, from a seed.  Shared by the kernel oracle
 * (tests/integration/test_conformance.c) and the harness that sends the
 * same cases through every implementation and compares what they put on
 * the wire (tests/progs/conftool.c), so that one seed means one set of
 * super-packets everywhere.
 *
 * A case set is a fixed table of boundaries plus random cases, both drawn
 * from one PRNG stream (conf_table_cases then conf_random_cases), or the
 * small-MSS set (conf_small_cases, its own stream).  Case i has source port
 * CONF_SPORT_BASE + i: every frame on the wire names its case.  Frames go
 * from conf_saddr4/6 to addresses and a MAC nobody owns, so no stack answers.
 *
 * Nothing here prints or exits; errors are negative errno.
 */
#ifndef GSO_CONF_CASES_H
#define GSO_CONF_CASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum { CONF_TCP4, CONF_TCP6, CONF_UDP4, CONF_UDP6, CONF_NPROTO };
extern const char *const conf_proto_name[CONF_NPROTO];

#define CONF_IS_V4(p) ((p) == CONF_TCP4 || (p) == CONF_UDP4)
#define CONF_IS_TCP(p) ((p) == CONF_TCP4 || (p) == CONF_TCP6)

#define CONF_SPORT_BASE 20000u
#define CONF_MAX_CASES 40000u
/* Ethernet + 802.1Q + IPv4 with options + TCP with options + 64 KiB payload fits. */
#define CONF_FRAME_MAX (1u << 17)

extern const uint8_t conf_dst_mac[6];
extern const uint8_t conf_saddr4[4], conf_daddr4[4];
extern const uint8_t conf_saddr6[16], conf_daddr6[16];

struct conf_case {
	unsigned idx;       /* index in its set; source port CONF_SPORT_BASE + idx */
	const char *what;   /* table label, or "random" (static text) */
	uint8_t proto;      /* CONF_TCP4 ... */
	uint32_t mss;
	uint32_t paylen;
	uint8_t flags;      /* TCP */
	uint8_t topt_len;   /* TCP option bytes, multiple of 4, <= 40 */
	uint8_t ipopt_len;  /* IPv4 option bytes, multiple of 4, <= 40 */
	bool df;
	uint16_t ip_id;
	uint8_t tos;        /* IPv4 TOS / IPv6 traffic class */
	uint32_t flow;      /* IPv6 flow label */
	bool zero_csum;     /* payload tuned so the first frame's L4 checksum computes to 0 */
	uint16_t vlan_tci;  /* non-zero: one 802.1Q tag with this TCI */
	bool refused;       /* the kernel and libgso must both refuse it */
	unsigned rec;       /* free for the user (the oracle: record number in gsoseg's input) */
	uint64_t fill;      /* PRNG state for ports, numbers, options and payload */
};

/* A growing array of cases (at most CONF_MAX_CASES); zero-fill to start. */
struct conf_set {
	struct conf_case *c;
	unsigned n, cap;
};

/* Append `c` with idx = its position.  Returns 0, -ENOSPC (CONF_MAX_CASES), -ENOMEM. */
int conf_add(struct conf_set *s, struct conf_case c);
void conf_set_free(struct conf_set *s);

/* The fixed boundary table (about 150 cases, all four protocols), drawing fill from rng. */
int conf_table_cases(struct conf_set *s, uint64_t *rng);
/* `count` random cases, MSS 536..8960 from a pool drawn per call. */
int conf_random_cases(struct conf_set *s, unsigned count, uint64_t *rng);
/*
 * MSS 1..535: 64 fixed cases (each protocol x 8 MSS x smallest/largest;
 * UDP one past 128 segments where that fits: refused) plus `n_random`.
 * Up to ~1200 frames per case: more than a peer's backlog takes at once.
 */
int conf_small_cases(struct conf_set *s, unsigned n_random, uint64_t *rng);

/* Largest payload that keeps the whole IP datagram within 65535 bytes. */
uint32_t conf_max_payload(const struct conf_case *c);
/* Bytes of the largest IP datagram on the wire once segmented (what an MTU limits). */
uint32_t conf_max_ip_len(const struct conf_case *c);
/* Frames Linux's software GSO makes of it (refused cases: 0). */
unsigned conf_frames(const struct conf_case *c);

/*
 * Build case `c` into `f` (CONF_FRAME_MAX bytes): the GSO input, lengths
 * of the whole, L4 checksum = pseudo-header seed with the whole L4 length.
 * Returns the frame length; *l4_off gets the L4 header offset.
 */
size_t conf_build_frame(const struct conf_case *c, const uint8_t src_mac[6], uint8_t *f,
			size_t *l4_off);

/* One line about the case, for people. */
void conf_describe(const struct conf_case *c, char *buf, size_t n);

/*
 * What an AF_PACKET socket with PACKET_VNET_HDR sends for the super-packet
 * `frame` (built by conf_build_frame): into `out` (GSO_VNET_HDR_LEN +
 * len bytes at least) a virtio_net_hdr from the library's encoder
 * (gso_offload_describe: GSO only when the payload exceeds the MSS, the
 * ECN bit for CWR; gso_offload_vnet: headers with the checksum seed)
 * followed by those headers and the payload.  *hdr_diff: SIZE_MAX when the
 * prepared headers equal `frame`'s, else the first differing byte.
 * Returns the bytes to send, or -errno with *step naming the call that failed.
 */
long conf_vnet_packet(const struct conf_case *c, const uint8_t *frame, size_t len, uint8_t *out,
		      const char **step, size_t *hdr_diff);

/*
 * Which case a frame on the wire belongs to: Ethernet (an inline 802.1Q tag
 * allowed) from conf_saddr4/6 with a source port in the case range.
 * Returns true with *idx (and *l4_off, *l4proto 6/17) for one of ours.
 */
bool conf_frame_case(const uint8_t *f, size_t n, unsigned *idx, size_t *l4_off, uint8_t *l4proto);

/*
 * Receive one frame from an AF_PACKET socket with PACKET_AUXDATA on, into
 * `buf` (`cap` bytes, CONF_FRAME_MAX + 4 for any frame), within `wait_ms`:
 * an 802.1Q tag the receive path moved into metadata is put back inline,
 * as it was on the wire.  *frame points at the frame in buf, *pkttype is
 * its sll_pkttype (PACKET_OUTGOING for a capture on the sending side).
 * Returns its length, 0 on timeout, or -errno.
 */
ssize_t conf_recv(int fd, uint8_t *buf, size_t cap, int wait_ms, uint8_t **frame, int *pkttype);

#endif
