/*
 * Interface capability probing (gso_ifcaps__probe) and the name helper
 * (gso_ifindex): ethtool and rtnetlink
 * facts, the netdev generic-netlink family, and AF_XDP measured by binding
 * throwaway sockets to queue 0 and sending one probe frame.  Probed once
 * per (network namespace, interface, probe flags) and cached.  It sits
 * with the AF_XDP socket because most of what it reports is measured
 * through one; the kernel's facts come from kernel/.
 */
#include "kernel/link_internal.h"
#include "opts_internal.h"
#include "kernel/sleep_internal.h"
#include "xsk_internal.h"

#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include <gso/ifcaps.h>

#define PROBE_CHUNKS 16u
#define PROBE_CHUNK 4096u
#define PROBE_RING 64u
#define PROBE_BUSY_WAIT_MS 2000
#define CACHE_SLOTS 16

const char *gso_ifcaps_feature_name(unsigned i)
{
	return i < GSO_IF_NFEATURES ? gsoi_link_feature_name(i) : NULL;
}

/* One probe socket on queue 0; EBUSY (a socket just closed there) is waited out. */
static int probe_open(struct xsk_sock *s, int ifindex, void *area, uint16_t flags, bool unaligned,
		      bool meta)
{
	struct xsk_sock_cfg c = {
		.ifindex = ifindex,
		.queue_id = 0,
		.area = area,
		.area_len = (uint64_t)PROBE_CHUNKS * PROBE_CHUNK,
		.chunk_size = PROBE_CHUNK,
		.unaligned = unaligned,
		.want_meta = meta,
		.fill_size = PROBE_RING,
		.cq_size = PROBE_RING,
		.tx_size = PROBE_RING,
		.bind_flags = flags,
	};
	long waited = 0, step = 5;
	int err;

	for (;;) {
		err = gsoi_xsk_sock_open(s, &c);
		if (err != -EBUSY || waited >= PROBE_BUSY_WAIT_MS)
			return err;
		sleep_ms(step);
		waited += step;
		step = step < 80 ? step * 2 : 100;
	}
}

static void probe_xsk(int ifindex, unsigned flags, struct gso_ifcaps *c)
{
	uint16_t base = XDP_COPY | XDP_USE_NEED_WAKEUP;
	struct xsk_sock s;
	uint8_t mac[6] = { 0 };
	void *area;
	bool unaligned = true, completed;
	int err, r;

	area = mmap(NULL, (size_t)PROBE_CHUNKS * PROBE_CHUNK, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		c->xsk_copy = c->xsk_zerocopy = c->xsk_sg = c->xsk_unaligned = -ENOMEM;
		c->xsk_tx_metadata = c->xsk_csum = c->xsk_tx_budget = -ENOMEM;
		return;
	}
	/*
	 * A zero-copy bind makes a capable driver rebuild the queue (traffic
	 * on it stops for a moment), so when netlink already says the driver
	 * can, we take its word; otherwise the bind itself answers.
	 */
	if (c->netdev_genl == 1 && (c->xdp_features & NETDEV_XDP_ACT_XSK_ZEROCOPY)) {
		c->xsk_zerocopy = 1;
	} else {
		err = probe_open(&s, ifindex, area, XDP_ZEROCOPY, false, false);
		c->xsk_zerocopy = err ? err : 1;
		if (!err)
			gsoi_xsk_sock_close(&s);
	}

	/* Everything at once; on failure find out which part the kernel refuses. */
	err = probe_open(&s, ifindex, area, base | XDP_USE_SG, unaligned, true);
	c->xsk_sg = err ? err : 1;
	if (err == -EINVAL || err == -EOPNOTSUPP)
		err = probe_open(&s, ifindex, area, base, unaligned, true);
	c->xsk_unaligned = 1;
	if (err == -EINVAL) {
		c->xsk_unaligned = err;
		unaligned = false;
		err = probe_open(&s, ifindex, area, base, unaligned, true);
	}
	c->xsk_copy = err ? err : 1;
	if (err) {
		c->xsk_sg = c->xsk_unaligned = c->xsk_tx_metadata = c->xsk_csum = c->xsk_tx_budget = err;
		goto out;
	}
	c->xsk_copy_max_descs = c->xsk_sg == 1 ? gsoi_xsk_copy_max_descs() : 1;
	uint32_t budget = PROBE_RING;
	c->xsk_tx_budget = setsockopt(s.fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &budget, sizeof(budget)) ? -errno : 1;

	if (flags & GSO_IFCAPS_NO_SEND) {
		r = -ECANCELED;
	} else if (!s.meta_len) {
		r = 0;
	} else {
		gsoi_link_mac(ifindex, NULL, mac);
		r = gsoi_xsk_probe_csum(&s, area, PROBE_CHUNK + s.meta_len, mac, &completed);
		/* A kernel that refuses the metadata at send has no checksum offload to offer. */
		if (r == -EINVAL)
			r = 0;
	}
	c->xsk_csum = r;
	/* Registered with the flag: honoured.  Without it, pre-6.8 kernels ignore the length. */
	c->xsk_tx_metadata = !s.meta_len ? 0 : s.meta_flag ? 1 : r;
	gsoi_xsk_sock_close(&s);
out:
	munmap(area, (size_t)PROBE_CHUNKS * PROBE_CHUNK);
}

static void probe(const char *ifname, int ifindex, unsigned flags, struct gso_ifcaps *c)
{
	struct link_info li;
	int err;

	memset(&li, 0, sizeof(li));
	memset(c, 0, sizeof(*c));
	c->sz = sizeof(*c);
	c->ifindex = ifindex;
	memcpy(c->ifname, ifname, strnlen(ifname, sizeof(c->ifname) - 1));
	/* rtnetlink first: ethtool reads its flags and refines its queue counts. */
	gsoi_link_rtnl(ifindex, &li);
	gsoi_link_ethtool(ifname, &li);
	memcpy(c->driver, li.driver, sizeof(c->driver));
	c->mtu = li.mtu;
	c->rx_queues = li.rx_queues;
	c->tx_queues = li.tx_queues;
	c->gso_max_size = li.gso_max_size;
	c->gso_max_segs = li.gso_max_segs;
	c->tso_max_size = li.tso_max_size;
	c->tso_max_segs = li.tso_max_segs;
	c->features = li.features;
	c->features_fixed = li.features_fixed;
	err = gsoi_xsk_netdev_get(ifindex, &c->xdp_features, &c->xdp_zc_max_segs, &c->xsk_features);
	c->netdev_genl = err ? err : 1;
	if (flags & GSO_IFCAPS_NO_XSK) {
		c->xsk_copy = c->xsk_zerocopy = c->xsk_sg = c->xsk_unaligned = -ECANCELED;
		c->xsk_tx_metadata = c->xsk_csum = c->xsk_tx_budget = -ECANCELED;
	} else {
		probe_xsk(ifindex, flags, c);
	}
}

/* ---- cache ---- */

struct slot {
	bool used;
	uint64_t netns;
	int ifindex;
	unsigned flags;
	struct gso_ifcaps caps;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot cache[CACHE_SLOTS];
static unsigned cache_next;

static uint64_t netns_id(void)
{
	struct stat st;

	/* Per thread: tests move single threads between namespaces. */
	if (stat("/proc/thread-self/ns/net", &st) && stat("/proc/self/ns/net", &st))
		return 0;
	return (uint64_t)st.st_dev << 32 ^ st.st_ino;
}

int gso_ifindex(const char *name)
{
	unsigned i;

	if (!name || !name[0] || strnlen(name, IF_NAMESIZE) >= IF_NAMESIZE)
		return -EINVAL;
	i = if_nametoindex(name);
	return i && i <= INT32_MAX ? (int)i : -ENODEV;
}

int gso_ifcaps__probe(int ifindex, unsigned flags, struct gso_ifcaps *caps)
{
	const unsigned known = GSO_IFCAPS_REFRESH | GSO_IFCAPS_NO_XSK | GSO_IFCAPS_NO_SEND;
	struct gso_ifcaps full;
	struct slot *hit = NULL;
	unsigned key = flags & (GSO_IFCAPS_NO_XSK | GSO_IFCAPS_NO_SEND);
	uint64_t ns;
	char ifname[IF_NAMESIZE];

	if (ifindex <= 0 || !GSO_OUT_VALID(caps) || (flags & ~known))
		return -EINVAL;
	if (!if_indextoname((unsigned)ifindex, ifname))
		return -ENODEV;
	ns = netns_id();
	pthread_mutex_lock(&cache_lock);
	for (unsigned i = 0; i < CACHE_SLOTS; i++)
		if (cache[i].used && cache[i].netns == ns && cache[i].ifindex == ifindex &&
		    cache[i].flags == key && !strcmp(cache[i].caps.ifname, ifname))
			hit = &cache[i];
	if (hit && !(flags & GSO_IFCAPS_REFRESH)) {
		full = hit->caps;
	} else {
		/* Probing binds sockets and may wait; the lock keeps two probes off one queue. */
		probe(ifname, ifindex, flags, &full);
		if (!hit)
			hit = &cache[cache_next++ % CACHE_SLOTS];
		hit->used = true;
		hit->netns = ns;
		hit->ifindex = ifindex;
		hit->flags = key;
		hit->caps = full;
	}
	pthread_mutex_unlock(&cache_lock);
	GSO_OUT_PUT(caps, full);
	return 0;
}
