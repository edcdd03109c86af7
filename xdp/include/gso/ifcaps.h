/*
 * libgso-xdp: interface names (gso_ifindex) and the capabilities of an
 * interface (gso_ifcaps__probe), as printed by the gsocaps tool: ethtool
 * features, rtnetlink limits, the netdev generic netlink family and
 * AF_XDP socket probes.  Conventions as in <gso/dev.h>.
 */
#ifndef GSO_IFCAPS_H
#define GSO_IFCAPS_H

#include <gso/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===================================================================== */
/* Interface capabilities                                                 */
/* ===================================================================== */

/*
 * The ifindex of interface `name` in the current network namespace: every
 * call of libgso-xdp names an interface by its ifindex, and this turns a
 * name into one.  Returns the ifindex (> 0), or -EINVAL (NULL, empty, or
 * IF_NAMESIZE characters or more), -ENODEV (no such interface).
 */
GSO_API int gso_ifindex(const char *name);

/* ethtool features active on the interface (struct gso_ifcaps.features). */
#define GSO_IF_SG          (1ull << 0)  /* tx-scatter-gather */
#define GSO_IF_CSUM_IPV4   (1ull << 1)  /* tx-checksum-ipv4 */
#define GSO_IF_CSUM_IPV6   (1ull << 2)  /* tx-checksum-ipv6 */
#define GSO_IF_CSUM_HW     (1ull << 3)  /* tx-checksum-ip-generic */
#define GSO_IF_TSO4        (1ull << 4)  /* tx-tcp-segmentation */
#define GSO_IF_TSO6        (1ull << 5)  /* tx-tcp6-segmentation */
#define GSO_IF_TSO_ECN     (1ull << 6)  /* tx-tcp-ecn-segmentation */
#define GSO_IF_TSO_MANGLEID (1ull << 7) /* tx-tcp-mangleid-segmentation */
#define GSO_IF_USO         (1ull << 8)  /* tx-udp-segmentation */
#define GSO_IF_GSO         (1ull << 9)  /* tx-generic-segmentation */
#define GSO_IF_GRO         (1ull << 10) /* rx-gro */
#define GSO_IF_LRO         (1ull << 11) /* rx-lro */
#define GSO_IF_RX_CSUM     (1ull << 12) /* rx-checksum */
#define GSO_IF_GSO_PARTIAL (1ull << 13) /* tx-gso-partial */
#define GSO_IF_GRO_HW      (1ull << 14) /* rx-gro-hw */
#define GSO_IF_LLTX        (1ull << 15) /* tx-lockless */
#define GSO_IF_NFEATURES   16

/* Name of feature bit `i` (0 .. GSO_IF_NFEATURES-1) as ethtool -k prints it, or NULL. */
GSO_API const char *gso_ifcaps_feature_name(unsigned i);

/*
 * A probe's answer: 1 yes, 0 no, negative errno: no, because of this
 * error (-EOPNOTSUPP: the kernel or driver refuses it), or -ECANCELED: not
 * probed (a GSO_IFCAPS_NO_* flag skipped it).
 */
typedef int gso_probe_t;

struct gso_ifcaps {
	size_t sz;
	int ifindex;
	char ifname[16];
	char driver[32];        /* ethtool driver name ("veth"; "loopback" for IFF_LOOPBACK), "" if unknown */
	uint32_t mtu;
	uint32_t rx_queues;     /* RX / TX queues in use (ethtool channels, else rtnetlink's allocated count) */
	uint32_t tx_queues;
	uint32_t gso_max_size;  /* rtnetlink; 0 = unknown */
	uint32_t gso_max_segs;
	uint32_t tso_max_size;
	uint32_t tso_max_segs;
	uint64_t features;      /* GSO_IF_* active now */
	uint64_t features_fixed; /* GSO_IF_* that cannot be changed */
	/* generic netlink family "netdev" (Linux 6.3+) */
	gso_probe_t netdev_genl; /* family present and answered for this interface */
	uint64_t xdp_features;  /* NETDEV_XDP_ACT_* bits */
	uint32_t xdp_zc_max_segs; /* zero-copy descriptors per packet (1 = no multi-buffer; 0 = not reported) */
	uint64_t xsk_features;  /* NETDEV_XSK_FLAGS_* bits (zero-copy driver's TX metadata) */
	/* AF_XDP, found by binding sockets to queue 0 (skipped with GSO_IFCAPS_NO_XSK) */
	gso_probe_t xsk_copy;      /* copy mode binds */
	gso_probe_t xsk_zerocopy;  /* zero-copy binds (-EOPNOTSUPP on veth); not tried when netlink
				    * reports xsk-zerocopy (the bind would reset a live NIC queue): 1 */
	gso_probe_t xsk_sg;        /* XDP_USE_SG binds in copy mode */
	uint32_t xsk_copy_max_descs; /* copy-mode descriptors per packet (MAX_SKB_FRAGS + 1) */
	gso_probe_t xsk_unaligned; /* unaligned chunk mode registers */
	gso_probe_t xsk_tx_metadata; /* tx_metadata_len registers (Linux 6.8+) */
	gso_probe_t xsk_csum;      /* a checksum request is carried in copy mode (probe frame sent) */
	gso_probe_t xsk_tx_budget; /* XDP_MAX_TX_SKB_BUDGET accepted */
	size_t :0;
};
#define gso_ifcaps__last_field xsk_tx_budget

#define GSO_IFCAPS_REFRESH (1u << 0) /* probe again instead of answering from the cache */
#define GSO_IFCAPS_NO_XSK  (1u << 1) /* skip the AF_XDP socket probes (they bind queue 0 for a moment) */
#define GSO_IFCAPS_NO_SEND (1u << 2) /* do not send the checksum probe frame (xsk_csum = -ECANCELED) */

/*
 * Probe interface `ifindex` in the current network namespace and fill
 * `caps` up to caps->sz (caps->ifname gets its name).  Answers are cached per (namespace, ifindex,
 * flags) for the life of the process; GSO_IFCAPS_REFRESH probes again.
 * Probes that cannot run leave a negative errno in their field instead of
 * failing the call (a kernel without the netdev family gives netdev_genl =
 * -ENOENT; an interface whose queue 0 already has an AF_XDP socket gives
 * -EBUSY in the xsk_* fields).  Returns 0, or -EINVAL (NULL, ifindex <= 0,
 * bad sz, unknown flag), -ENODEV (no such interface).
 */
GSO_API int gso_ifcaps__probe(int ifindex, unsigned flags, struct gso_ifcaps *caps);

#ifdef __cplusplus
}
#endif
#endif
