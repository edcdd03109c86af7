/*
 * libgso-xdp: ACK steering (gso_steer__*): an XDP program sends the
 * frames of registered flows and listener entries (struct gso_flow) to
 * the AF_XDP device bound to their queue and passes everything else to
 * the kernel.  Conventions and errors are those of <gso/dev.h>.
 */
#ifndef GSO_STEER_H
#define GSO_STEER_H

#include <gso/common.h>
#include <gso/tmpl.h>
#include <gso/dev.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===================================================================== */
/* ACK steering                                                           */
/* ===================================================================== */

/*
 * An XDP program on one interface (steer.bpf.o, installed with the
 * library) that redirects the frames of registered flows (and listener
 * entries) to the AF_XDP device bound to the queue they arrive on, and
 * passes every other frame on (to the next XDP program, or to the
 * kernel).  Attached through libxdp, so it joins other programs under
 * libxdp's dispatcher where the kernel allows that; where the dispatcher
 * cannot be loaded (EPERM on some kernels) libxdp attaches it alone, and
 * an interface that already has a program of its own then refuses it
 * (-EEXIST).  Flows and devices are added and removed at run time.  Not
 * thread-safe, like a device.
 *
 * A frame is a registered flow's when its 5-tuple and its VLAN (one
 * 802.1Q tag with the flow's VLAN ID, or no tag for a flow without one)
 * are the flow's and its destination MAC is the interface's own (as it was
 * when the program was attached).  A listener entry is a flow whose
 * source address is all zero and source port 0 (TCP or UDP): it matches
 * the frames to its destination address and port, on its VLAN, from every
 * source, unless they belong to a registered flow, whose entry wins (and
 * counts them).  So a server registers one listener entry for its local
 * address and port, and a flow per connection it opens (which keeps the
 * connection's frames coming when the listener entry goes).  The
 * destination address is never a wildcard.  A source address or port
 * that is zero alone makes an ordinary flow (a UDP sender may use port
 * 0).  While no listener entry is registered, frames that match no flow
 * cost the program no second lookup.  Frames whose IP headers the kernel
 * would drop (a wrong version, header length or total length, truncated)
 * are never steered, whatever they match: gso_steer_stats says why each
 * frame passed.  Checksums are not verified by the program.
 *
 * A registered flow's frame (or a listener's) goes to the socket only
 * when it arrives on that socket's queue (single-queue devices such as
 * veth: always; NICs: steer the flow to the queue with ethtool ntuple
 * rules).  With no device on that queue it reaches the kernel (counted in
 * no_socket), as do IP fragments and IPv6 frames with extension headers.
 * A frame that the socket cannot take (RX ring full, fill ring empty) is
 * dropped by the kernel and counted in the device's rx_* statistics.
 */
struct gso_steer;

/*
 * The 5-tuple and VLAN of a flow's frames as they arrive here (source =
 * the remote end).  saddr all zero and sport 0: a listener entry, every
 * source to daddr:dport (see above).
 */
struct gso_flow {
	size_t sz;          /* sizeof(struct gso_flow): declare it with GSO_OPTS */
	uint8_t l3;         /* GSO_L3_IPV4 or GSO_L3_IPV6 */
	uint8_t l4;         /* GSO_L4_TCP or GSO_L4_UDP */
	uint16_t sport;     /* source port (remote), host order */
	uint16_t dport;     /* destination port (local), host order */
	uint8_t saddr[16];  /* source address (remote), network order; IPv4 in the first 4 bytes, rest zero */
	uint8_t daddr[16];  /* destination address (local) */
	uint16_t vlan;      /* VLAN ID (1..4094) of the 802.1Q tag the frames carry; 0: untagged */
	uint32_t flags;     /* GSO_FLOW_F_* */
	size_t :0;
};
#define gso_flow__last_field flags

/*
 * Steer only the ICMP "fragmentation needed" and ICMPv6 "packet too big"
 * errors that quote this flow's packets (sent from daddr:dport to
 * saddr:sport); its own frames go on as if it were not registered (to a
 * listener entry that matches them, else the kernel).  For a sender that
 * receives by other means, such as a kernel UDP socket on its port, to
 * follow the path MTU (engine.h, "Path MTU").  Not on a listener entry.
 */
#define GSO_FLOW_F_ICMP_ONLY (1u << 0)

/*
 * The flow of the frames that come back for what is sent with template
 * `t` (the peer's ACKs for a TCP template): addresses and ports swapped,
 * the template's VLAN ID (0 if it has no tag or a priority tag).  `f` is
 * filled up to f->sz, which the caller sets (GSO_OPTS).  Returns 0, or
 * -EINVAL (NULL, f->sz not reaching past sz, not a TCP/UDP over IPv4/IPv6
 * template).
 */
GSO_API int gso_flow__reply_of(struct gso_flow *f, const struct gso_tmpl *t);

enum gso_steer_xdp_mode {
	GSO_STEER_XDP_AUTO = 0,   /* native if the driver has it, else generic */
	GSO_STEER_XDP_NATIVE = 1, /* driver mode or fail */
	GSO_STEER_XDP_SKB = 2,    /* generic (skb) mode */
};

struct gso_steer_opts {
	size_t sz;
	/*
	 * Path of the compiled program.  NULL: $GSO_BPF_DIR/steer.bpf.o if
	 * GSO_BPF_DIR is set, else the first that exists of
	 * <directory of the running program>/../bpf/steer.bpf.o,
	 * <directory of the running program>/bpf/steer.bpf.o and
	 * <directory of libgso-xdp.so>/bpf/steer.bpf.o (an installed tree
	 * keeps it in LIBDIR/bpf; a build tree keeps bpf/ beside the folders
	 * of its programs and its libraries).
	 */
	const char *bpf_obj;
	uint32_t xdp_mode;  /* enum gso_steer_xdp_mode */
	uint32_t max_flows; /* flows registered at once; 0 = 1024 */
	uint32_t max_queues; /* queues the socket map covers; 0 = the interface's RX queues, at least 64 */
	size_t :0;
};
#define gso_steer_opts__last_field max_queues

/*
 * Load the program and attach it to interface `ifindex` of the current
 * network namespace.  No flow and no device yet: everything passes.
 * Returns 0 and *out, or -EINVAL (NULL, bad option), -ENOENT (no program
 * file found), -ENODEV (no such interface), -EEXIST (another XDP program
 * is attached and libxdp could not join it), -EOPNOTSUPP (the mode is not
 * available), -EPERM, -ENOMEM, or another -errno from libbpf/libxdp.
 * libbpf's and libxdp's log output is silenced during the call.
 */
GSO_API int gso_steer__create(struct gso_steer **out, int ifindex, const struct gso_steer_opts *opts);

/*
 * Receive the registered flows' frames that arrive on `dev`'s queue with
 * `dev` (an AF_XDP device on this interface created with rx_size).
 * Returns 0, or -EINVAL (NULL, not an AF_XDP device, another interface),
 * -EOPNOTSUPP (no receive side), -EEXIST (that queue has a device
 * already), -E2BIG (queue beyond max_queues), -ESHUTDOWN (device closed),
 * -ENODEV (the program is gone with its interface).
 */
GSO_API int gso_steer__add_dev(struct gso_steer *st, struct gso_dev *dev);

/* Stop receiving with `dev` (its queue's frames pass again).  0, -EINVAL, -ENOENT (not added). */
GSO_API int gso_steer__del_dev(struct gso_steer *st, struct gso_dev *dev);

/*
 * Register a flow or a listener entry: from the next frame on, it goes
 * to the socket of its queue.  A flow and a listener entry on the same
 * destination address and port are distinct entries and coexist.
 * Returns 0, -EINVAL (NULL, f->sz not covering sz or non-zero bytes past
 * the fields this library knows, unknown l3/l4, IPv4 address with
 * non-zero padding, vlan above 4094), -EEXIST (registered already),
 * -ENOSPC (max_flows reached), -ENODEV.
 */
GSO_API int gso_steer__flow_add(struct gso_steer *st, const struct gso_flow *f);

/*
 * Unregister a flow or a listener entry: its frames go to the kernel
 * again (or, for a flow, to its listener entry if there is one).
 * 0, -EINVAL, -ENOENT (not registered).
 */
GSO_API int gso_steer__flow_del(struct gso_steer *st, const struct gso_flow *f);

/*
 * Frames the program matched for flow `f` since it was registered (for a
 * listener entry: the frames that no flow took).
 * Returns 0 and fills *packets and *bytes (either may be NULL), -EINVAL,
 * -ENOENT.
 */
GSO_API int gso_steer__flow_count(struct gso_steer *st, const struct gso_flow *f, uint64_t *packets,
				  uint64_t *bytes);

struct gso_steer_stats {
	size_t sz;
	uint64_t seen;       /* frames the program ran on */
	uint64_t steered;    /* matched and redirected to a socket */
	uint64_t no_socket;  /* matched, no device on their queue: passed */
	uint64_t passed;     /* well formed, neither a registered flow's nor a listener's (or fragments,
			      * other protocols): passed */
	uint32_t flows;      /* registered now, listener entries included */
	uint32_t devs;       /* devices added now */
	uint32_t xdp_mode;   /* enum gso_steer_xdp_mode as attached (NATIVE or SKB) */
	bool multiprog;      /* attached under libxdp's dispatcher (false: alone) */
	/* Passed for what they are; each frame seen is counted once in steered, no_socket, passed or these: */
	uint64_t other_mac;  /* to another destination MAC than the interface's (broadcast, multicast too) */
	uint64_t vlan;       /* VLAN tagging no flow has: a flow's tuple under another VLAN or none,
			      * 802.1ad or stacked tags, priority tags (a listener entry's address
			      * and port under another tag count in passed) */
	uint64_t bad_hdr;    /* IP header the kernel would drop (version, header or total length) or
			      * IP/L4 header truncated */
	size_t :0;
};
#define gso_steer_stats__last_field bad_hdr

/* Fill `st` up to st->sz.  Returns 0, -EINVAL (NULL, sz too small), or -errno of the map read. */
GSO_API int gso_steer__stats(struct gso_steer *st, struct gso_steer_stats *out);

/*
 * Detach the program (if its interface still exists) and free everything.
 * Devices added stay open; frames they hold stay valid.  NULL is a no-op.
 */
GSO_API void gso_steer__destroy(struct gso_steer *st);

#ifdef __cplusplus
}
#endif
#endif
