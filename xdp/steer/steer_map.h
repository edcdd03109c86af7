/*
 * Map layouts shared by the steering program (steer.bpf.c, built with
 * clang -target bpf) and its loader (steer.c).  Only fixed-width types, so
 * both compilers lay them out the same; steer.c checks the sizes.
 * Not installed.
 */
#ifndef GSO_XDP_STEER_MAP_H
#define GSO_XDP_STEER_MAP_H

#include <linux/types.h>

/*
 * Hash key of a steered flow, as its packets arrive: source = the remote
 * end.  Zero-filled before use (the unused 12 address bytes of IPv4 are
 * part of the hash).  Ports in network byte order.  saddr all zero and
 * sport 0: a listener entry, looked up for a frame that has no flow of
 * its own (every source to daddr:dport, on that VLAN).
 */
struct steer_key {
	__u8 l3;        /* 4 or 6 */
	__u8 l4;        /* IPPROTO_TCP or IPPROTO_UDP */
	__u16 sport;    /* network order */
	__u16 dport;    /* network order */
	__u16 vlan;     /* VLAN ID of the frame's one 802.1Q tag (host order), 0: untagged */
	__u8 saddr[16]; /* IPv4: first 4 bytes */
	__u8 daddr[16];
};

/* Per-flow value: packets the program matched (redirected or not), and how to match. */
struct steer_val {
	__u64 packets;
	__u64 bytes;
	__u32 flags;    /* STEER_VAL_* */
	__u32 pad;
};

/*
 * Only the ICMP path-MTU errors that quote the flow's packets are steered;
 * its own frames are not (a listener entry may still take them): a sender
 * whose replies go elsewhere (a kernel socket) hears of the path's MTU.
 */
#define STEER_VAL_ICMP_ONLY 1u

/* The loader's settings, in the one entry of the config array (all zero until it writes them). */
struct steer_cfg {
	__u8 mac[6];    /* the interface's own MAC: frames to any other address are not ours */
	__u8 listeners; /* non-zero while a listener entry may be in the flow map: look for one on a miss */
	__u8 pad;
};

/*
 * Indices of the per-CPU counter array.  Every frame lands in SEEN and in
 * exactly one of the others, which say why it went where it went.
 */
enum steer_counter {
	STEER_C_SEEN = 0,    /* every frame the program ran on */
	STEER_C_STEERED,     /* matched (a flow or a listener entry) and handed to the socket's queue */
	STEER_C_NO_SOCKET,   /* matched, but no socket on that queue: passed */
	STEER_C_PASSED,      /* well formed, neither a registered flow nor a listener's (or a kind never
			      * steered): passed */
	STEER_C_OTHER_MAC,   /* destination MAC not the interface's (another host, multicast, broadcast): passed */
	STEER_C_VLAN,        /* VLAN tagging no flow has: a registered flow's tuple under another VLAN (or
			      * none), an 802.1ad or stacked tag, a priority tag (VLAN 0): passed (a
			      * listener entry's address and port under another tag: PASSED) */
	STEER_C_BAD_HDR,     /* IP header insane (version, header length, total/payload length beyond the
			      * frame) or IP/L4 header truncated: passed, for the kernel to drop */
	STEER_C_COUNT
};

#define STEER_PROG_NAME "gso_steer"
#define STEER_MAP_FLOWS "gso_steer_flows"
#define STEER_MAP_XSKS "gso_steer_xsks"
#define STEER_MAP_COUNTERS "gso_steer_cnt"
#define STEER_MAP_CFG "gso_steer_cfg"

#endif
