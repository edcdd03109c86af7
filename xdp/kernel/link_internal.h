/*
 * Interface facts from rtnetlink and ethtool (link_info.c) and from the
 * netdev generic-netlink family (netdev_genl.c).  Not installed; any
 * folder of xdp/ may include it.
 */
#ifndef GSO_XDP_LINK_INTERNAL_H
#define GSO_XDP_LINK_INTERNAL_H

#include <stdint.h>

struct link_info {
	char driver[32];
	uint32_t mtu, rx_queues, tx_queues;
	uint32_t ifi_flags;      /* IFF_* */
	uint8_t carrier;         /* IFLA_CARRIER: 1 on, 0 off (netif_carrier_ok, not delayed by linkwatch) */
	uint8_t has_carrier;     /* the kernel reported it */
	uint32_t gso_max_size, gso_max_segs, tso_max_size, tso_max_segs;
	uint64_t features;       /* GSO_IF_* active */
	uint64_t features_fixed; /* GSO_IF_* not changeable */
};

/* RTM_GETLINK: MTU, real queue counts, GSO/TSO limits.  0 or -errno. */
int gsoi_link_rtnl(int ifindex, struct link_info *li);
/*
 * The receive and transmit queues in use (what an AF_XDP socket can bind):
 * rtnetlink's allocated counts, narrowed by ethtool's channel counts where
 * the driver has them.  0 (a count may be 0: unknown), -ENODEV or -errno.
 */
int gsoi_link_queues(int ifindex, uint32_t *rx, uint32_t *tx);
/* ETHTOOL_GDRVINFO + GSTRINGS/GFEATURES/GCHANNELS.  0 or -errno (driver may be set anyway). */
int gsoi_link_ethtool(const char *ifname, struct link_info *li);
/* ethtool name of GSO_IF_* bit i, or NULL. */
const char *gsoi_link_feature_name(unsigned i);

/*
 * The backends' one-off interface questions, asked with an ioctl on a
 * throw-away socket: the interface is named by `ifname`, or by `ifindex`
 * when ifname is NULL.  0 or -errno (-ENODEV when there is no such
 * interface).
 */
int gsoi_link_mtu(int ifindex, const char *ifname, uint32_t *mtu);
int gsoi_link_mac(int ifindex, const char *ifname, uint8_t mac[6]);

/*
 * The netdev generic netlink answer for `ifindex` (Linux 6.3+).  Returns
 * 0, -ENOENT (no such family: older kernel), or another -errno.  Fields the
 * kernel did not send stay 0.
 */
int gsoi_xsk_netdev_get(int ifindex, uint64_t *xdp_features, uint32_t *zc_max_segs,
			uint64_t *xsk_features);

#endif
