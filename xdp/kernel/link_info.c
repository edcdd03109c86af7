/*
 * Interface facts from the kernel's own interfaces, namespace-correct (a
 * thread that entered a namespace with setns() sees that namespace's
 * devices, which sysfs would not show it): rtnetlink RTM_GETLINK for MTU,
 * queue counts and GSO/TSO limits, the ethtool ioctl for driver name and
 * features.
 */
#include "link_internal.h"

#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>

int gsoi_link_rtnl(int ifindex, struct link_info *li)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		struct rtattr ext;
		uint32_t ext_mask;
	} req;
	static __thread uint8_t buf[16384] __attribute__((aligned(8)));
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 1 };
	ssize_t n;
	int fd, err = 0;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = RTM_GETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nh.nlmsg_seq = 1;
	req.ifi.ifi_family = AF_UNSPEC;
	req.ifi.ifi_index = ifindex;
	/* Statistics are most of the answer and of no use here; kernels without the bit ignore it. */
	req.ext.rta_type = IFLA_EXT_MASK;
	req.ext.rta_len = RTA_LENGTH(sizeof(req.ext_mask));
	req.ext_mask = RTEXT_FILTER_SKIP_STATS;
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		goto out;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	if (!NLMSG_OK(nh, (unsigned)n)) {
		err = -EPROTO;
		goto out;
	}
	if (nh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nh);
		err = e->error ? e->error : -EPROTO;
		goto out;
	}
	li->ifi_flags = ((struct ifinfomsg *)NLMSG_DATA(nh))->ifi_flags;
	int rem = (int)IFLA_PAYLOAD(nh);
	for (struct rtattr *a = IFLA_RTA(NLMSG_DATA(nh)); RTA_OK(a, rem); a = RTA_NEXT(a, rem)) {
		uint32_t v;
		if (a->rta_type == IFLA_CARRIER && RTA_PAYLOAD(a) >= 1) {
			li->carrier = *(const uint8_t *)RTA_DATA(a);
			li->has_carrier = 1;
		}
		if (RTA_PAYLOAD(a) < 4)
			continue;
		memcpy(&v, RTA_DATA(a), 4);
		switch (a->rta_type) {
		case IFLA_MTU: li->mtu = v; break;
		case IFLA_NUM_TX_QUEUES: li->tx_queues = v; break;
		case IFLA_NUM_RX_QUEUES: li->rx_queues = v; break;
		case IFLA_GSO_MAX_SIZE: li->gso_max_size = v; break;
		case IFLA_GSO_MAX_SEGS: li->gso_max_segs = v; break;
		case IFLA_TSO_MAX_SIZE: li->tso_max_size = v; break;
		case IFLA_TSO_MAX_SEGS: li->tso_max_segs = v; break;
		default: break;
		}
	}
out:
	close(fd);
	return err;
}

static int ethtool(int fd, const char *ifname, void *cmd)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : 0;
}

/* Our names for the ethtool features we report, in GSO_IF_* bit order. */
static const char *const feature_names[] = {
	"tx-scatter-gather", "tx-checksum-ipv4", "tx-checksum-ipv6", "tx-checksum-ip-generic",
	"tx-tcp-segmentation", "tx-tcp6-segmentation", "tx-tcp-ecn-segmentation",
	"tx-tcp-mangleid-segmentation", "tx-udp-segmentation", "tx-generic-segmentation",
	"rx-gro", "rx-lro", "rx-checksum", "tx-gso-partial", "rx-gro-hw", "tx-lockless",
};

const char *gsoi_link_feature_name(unsigned i)
{
	return i < sizeof(feature_names) / sizeof(feature_names[0]) ? feature_names[i] : NULL;
}

static int features(int fd, const char *ifname, struct link_info *li)
{
	/* ethtool_sset_info ends in a flexible array: room for one answer. */
	uint64_t ss_buf[(sizeof(struct ethtool_sset_info) + sizeof(uint32_t) + 7) / 8];
	struct ethtool_sset_info *ss = (struct ethtool_sset_info *)ss_buf;
	struct ethtool_gstrings *names = NULL;
	struct ethtool_gfeatures *gf = NULL;
	uint32_t n, blocks;
	int err;

	memset(ss_buf, 0, sizeof(ss_buf));
	ss->cmd = ETHTOOL_GSSET_INFO;
	ss->sset_mask = 1ull << ETH_SS_FEATURES;
	err = ethtool(fd, ifname, ss);
	if (err)
		return err;
	n = ss->sset_mask ? ss->data[0] : 0;
	if (!n || n > 4096)
		return -EOPNOTSUPP;
	blocks = (n + 31) / 32;
	names = calloc(1, sizeof(*names) + (size_t)n * ETH_GSTRING_LEN);
	gf = calloc(1, sizeof(*gf) + blocks * sizeof(gf->features[0]));
	if (!names || !gf) {
		err = -ENOMEM;
		goto out;
	}
	names->cmd = ETHTOOL_GSTRINGS;
	names->string_set = ETH_SS_FEATURES;
	names->len = n;
	gf->cmd = ETHTOOL_GFEATURES;
	gf->size = blocks;
	err = ethtool(fd, ifname, names);
	if (!err)
		err = ethtool(fd, ifname, gf);
	if (err)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		const char *s = (const char *)names->data + (size_t)i * ETH_GSTRING_LEN;
		uint32_t bit = 1u << (i % 32);
		const struct ethtool_get_features_block *b = &gf->features[i / 32];

		for (unsigned k = 0; k < sizeof(feature_names) / sizeof(feature_names[0]); k++) {
			if (strncmp(s, feature_names[k], ETH_GSTRING_LEN))
				continue;
			if (b->active & bit)
				li->features |= 1ull << k;
			if ((b->never_changed & bit) || !(b->available & bit))
				li->features_fixed |= 1ull << k;
		}
	}
out:
	free(names);
	free(gf);
	return err;
}

/*
 * The queues in use, from the driver's channel counts: rtnetlink reports
 * the allocated ones (a veth allocates one per possible CPU and runs
 * one), and an AF_XDP socket binds only a queue in use.  Left as they
 * are when the driver has no channel counts.
 */
static void channels(int fd, const char *ifname, struct link_info *li)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };

	if (!ethtool(fd, ifname, &ch) && (ch.rx_count || ch.tx_count || ch.combined_count)) {
		li->rx_queues = ch.rx_count + ch.combined_count;
		li->tx_queues = ch.tx_count + ch.combined_count;
	}
}

int gsoi_link_queues(int ifindex, uint32_t *rx, uint32_t *tx)
{
	char ifname[IF_NAMESIZE];
	struct link_info li;
	int fd, err;

	memset(&li, 0, sizeof(li));
	err = gsoi_link_rtnl(ifindex, &li);
	if (err)
		return err;
	if (if_indextoname((unsigned)ifindex, ifname)) {
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd >= 0) {
			channels(fd, ifname, &li);
			close(fd);
		}
	}
	*rx = li.rx_queues;
	*tx = li.tx_queues;
	return 0;
}

int gsoi_link_ethtool(const char *ifname, struct link_info *li)
{
	struct ethtool_drvinfo di;
	int fd, err;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&di, 0, sizeof(di));
	di.cmd = ETHTOOL_GDRVINFO;
	if (!ethtool(fd, ifname, &di)) {
		memcpy(li->driver, di.driver, sizeof(li->driver) - 1);
		li->driver[sizeof(li->driver) - 1] = 0;
	}
	channels(fd, ifname, li);
	if (!li->driver[0] && (li->ifi_flags & IFF_LOOPBACK))
		strcpy(li->driver, "loopback");
	err = features(fd, ifname, li);
	close(fd);
	return err;
}

/* One SIOCGIF* request; fills ifr (its name included). */
static int link_ifreq(int ifindex, const char *ifname, unsigned long req, struct ifreq *ifr)
{
	int fd, err = 0;

	memset(ifr, 0, sizeof(*ifr));
	if (ifname) {
		if (strlen(ifname) >= sizeof(ifr->ifr_name))
			return -ENODEV;
		memcpy(ifr->ifr_name, ifname, strlen(ifname) + 1);
	} else if (!if_indextoname((unsigned)ifindex, ifr->ifr_name)) {
		return -ENODEV;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, req, ifr))
		err = -errno;
	close(fd);
	return err;
}

int gsoi_link_mtu(int ifindex, const char *ifname, uint32_t *mtu)
{
	struct ifreq ifr;
	int err = link_ifreq(ifindex, ifname, SIOCGIFMTU, &ifr);

	if (!err)
		*mtu = (uint32_t)ifr.ifr_mtu;
	return err;
}

int gsoi_link_mac(int ifindex, const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr;
	int err = link_ifreq(ifindex, ifname, SIOCGIFHWADDR, &ifr);

	if (!err)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return err;
}
