/*
 * One call to a transmit path (engine.h, gso_engine__open_path): probe
 * the interface, choose the path, open the transmit device, a receive
 * socket per queue and the steering program, and make an engine of them.
 * gsoi_path_choose() is the choice alone, which the port (port/) uses for
 * its engines too.
 */
#include "engine_internal.h"
#include "opts_internal.h"

#include <errno.h>
#include <string.h>

#include <gso/ifcaps.h>
#include <gso/vnet.h>
#include <gso/xsk.h>

#include "kernel/compat.h"

/* The transmit queue's socket: ACKs are small and come at most one per two segments. */
#define RX_SIZE 1024u
#define RX_CHUNKS 2048u
/* Another queue's receive socket: the peer's hash puts a connection's ACKs there or not at all. */
#define RX_SMALL_SIZE 256u
#define RX_SMALL_CHUNKS 512u

static const char *const path_names[GSO_PATH_COUNT] = {
	[GSO_PATH_AUTO] = "auto",
	[GSO_PATH_SOFTWARE] = "software",
	[GSO_PATH_CSUM] = "csum",
	[GSO_PATH_MULTIBUF] = "multibuf",
	[GSO_PATH_OFFLOAD_VNET] = "offload-vnet",
};

static const char *const why_text[] = {
	[GSO_PATH_WHY_ASKED] = "asked for by the caller",
	[GSO_PATH_WHY_TSO] = "the interface does TSO: super-segments go to the driver whole "
			     "(virtio_net_hdr over AF_PACKET)",
	[GSO_PATH_WHY_ZC_CSUM] = "no TSO; zero-copy AF_XDP with TX checksum offload: whole frames, "
				 "the NIC computes the checksums",
	[GSO_PATH_WHY_COPY_MODE] = "no TSO; AF_XDP in copy mode: whole frames with software checksums "
				   "(the kernel copies every frame anyway)",
	[GSO_PATH_WHY_PORT] = "a port runs one AF_XDP engine per queue; AF_XDP in copy mode: whole frames "
			      "with software checksums",
};

const char *gso_path_name(unsigned path)
{
	return path < GSO_PATH_COUNT ? path_names[path] : NULL;
}

static uint32_t xsk_flags_of(uint32_t path)
{
	switch (path) {
	case GSO_PATH_SOFTWARE:
		return GSO_XSK_F_NO_SG | GSO_XSK_F_NO_CSUM;
	case GSO_PATH_CSUM:
		return GSO_XSK_F_NO_SG;
	default:
		return 0;
	}
}

int gsoi_path_choose(const struct gso_ifcaps *ic, uint32_t asked, bool xsk_only, struct gso_path_info *info,
		     uint32_t *xsk_flags)
{
	uint32_t path = asked, why = GSO_PATH_WHY_ASKED;

	if (asked >= GSO_PATH_COUNT)
		return -EINVAL;
	if (asked == GSO_PATH_OFFLOAD_VNET && xsk_only)
		return -EOPNOTSUPP;
	if (asked == GSO_PATH_AUTO) {
		bool zc = ic->xdp_features & NETDEV_XDP_ACT_XSK_ZEROCOPY;

		if (!xsk_only && (ic->features & GSO_IF_TSO4)) {
			path = GSO_PATH_OFFLOAD_VNET;
			why = GSO_PATH_WHY_TSO;
		} else if (zc && (ic->xsk_features & NETDEV_XSK_FLAGS_TX_CHECKSUM)) {
			path = GSO_PATH_CSUM;
			why = GSO_PATH_WHY_ZC_CSUM;
		} else {
			path = GSO_PATH_SOFTWARE;
			why = xsk_only && (ic->features & GSO_IF_TSO4) ? GSO_PATH_WHY_PORT : GSO_PATH_WHY_COPY_MODE;
		}
	}
	memset(info, 0, sizeof(*info));
	info->sz = sizeof(*info);
	info->path = path;
	info->asked = asked;
	info->why = why;
	info->reason = why_text[why];
	memcpy(info->ifname, ic->ifname, sizeof(info->ifname));
	memcpy(info->driver, ic->driver, sizeof(info->driver));
	*xsk_flags = xsk_flags_of(path);
	return 0;
}

static uint32_t dev_flags(struct gso_dev *dev)
{
	GSO_OPTS(gso_dev_caps, c);

	return gso_dev__caps(dev, &c) ? 0 : c.flags;
}

/* The transmit device of the path; an AF_XDP one receives too (unless no_rx). */
static int open_tx(struct gso_dev **dev, int ifindex, const struct gso_path_info *info, uint32_t queue,
		   uint32_t xflags, bool no_rx)
{
	uint32_t f;
	int err;

	if (info->path == GSO_PATH_OFFLOAD_VNET) {
		/*
		 * A veth copies the ring's zero-copy pages again at the crossing
		 * (skb_orphan_frags): sendmmsg (one copy, the kernel's) is the
		 * cheaper path there (vnet.c).
		 */
		GSO_OPTS(gso_vnet_opts, vo, .mode = info->why == GSO_PATH_WHY_TSO ? GSO_TSO_AUTO : GSO_TSO_OFFLOAD,
			 .flags = !strcmp(info->driver, "veth") ? GSO_VNET_F_NO_RING : 0);

		return gso_vnet__create(dev, ifindex, &vo);
	}
	GSO_OPTS(gso_xsk_opts, xo, .queue_id = queue, .mode = GSO_XSK_MODE_AUTO, .flags = xflags,
		 .rx_size = no_rx ? 0 : RX_SIZE, .rx_chunks = no_rx ? 0 : RX_CHUNKS);
	err = gso_xsk__create(dev, ifindex, &xo);
	if (err)
		return err;
	/* Asked by name, a path runs as named or not at all (auto takes what came). */
	f = dev_flags(*dev);
	if (info->why == GSO_PATH_WHY_ASKED && ((info->path == GSO_PATH_CSUM && !(f & GSO_DEV_CSUM)) ||
						(info->path == GSO_PATH_MULTIBUF && !(f & GSO_DEV_SG)))) {
		gso_dev__destroy(*dev);
		*dev = NULL;
		return -EOPNOTSUPP;
	}
	return 0;
}

/* A receive socket on `queue`, with a few chunks for its transmit side. */
static int open_rx(struct gso_dev **dev, int ifindex, uint32_t queue, bool small)
{
	uint32_t rx = small ? RX_SMALL_SIZE : RX_SIZE, chunks = small ? RX_SMALL_CHUNKS : RX_CHUNKS;
	GSO_OPTS(gso_xsk_opts, o, .queue_id = queue, .mode = GSO_XSK_MODE_AUTO,
		 .flags = GSO_XSK_F_NO_CSUM | GSO_XSK_F_NO_SG, .rx_size = rx, .rx_chunks = chunks,
		 .nchunks = chunks + 64, .buf_chunks = 16, .tx_size = 64);
	int err = gso_xsk__create(dev, ifindex, &o);

	if (!err && !(dev_flags(*dev) & GSO_DEV_RX)) {
		gso_dev__destroy(*dev);
		*dev = NULL;
		err = -EOPNOTSUPP;
	}
	return err;
}

/* A receive socket on every receive queue the transmit device does not cover. */
static int open_rxs(struct gso_engine *h, int ifindex, uint32_t nq, uint32_t tx_queue)
{
	const struct engine *e = gsoi_engine_of(h);

	for (uint32_t q = 0; q < nq; q++) {
		struct gso_dev *rx;
		int err;

		if (e->nrx && gso_xsk__queue(e->rx[0]) == (int)q)
			continue;
		err = open_rx(&rx, ifindex, q, q != tx_queue);
		if (!err) {
			err = gso_engine__add_rx(h, rx);
			if (err)
				gso_dev__destroy(rx);
		}
		if (err)
			return err;
	}
	return 0;
}

int gso_engine__open_path(struct gso_engine **out, int ifindex, const struct gso_path_opts *po,
			  const struct gso_engine_opts *opts)
{
	GSO_OPTS(gso_ifcaps, ic);
	GSO_OPTS(gso_engine_opts, eo);
	struct gso_path_info info;
	struct gso_steer *own = NULL;
	struct gso_dev *tx = NULL;
	struct gso_engine *e;
	struct engine *eng;
	uint32_t asked, queue, flags, xflags, nq;
	bool no_rx;
	int err;

	if (!out || ifindex <= 0 || !GSO_OPTS_VALID(gso_path_opts, po) || !GSO_OPTS_VALID(gso_engine_opts, opts))
		return -EINVAL;
	asked = GSO_OPTS_GET(po, path, 0u);
	queue = GSO_OPTS_GET(po, queue_id, 0u);
	flags = GSO_OPTS_GET(po, flags, 0u);
	if (flags & ~GSO_PATH_F_KNOWN)
		return -EINVAL;
	no_rx = flags & GSO_PATH_F_NO_RX;
	/* Afresh (features change at run time), without the socket probes (they bind queue 0 for a moment). */
	err = gso_ifcaps__probe(ifindex, GSO_IFCAPS_NO_XSK | GSO_IFCAPS_REFRESH, &ic);
	if (err)
		return err;
	err = gsoi_path_choose(&ic, asked, false, &info, &xflags);
	if (err)
		return err;
	nq = ic.rx_queues ? ic.rx_queues : 1;
	if (nq > ENGINE_MAX_RX)
		nq = ENGINE_MAX_RX;
	if (info.path != GSO_PATH_OFFLOAD_VNET &&
	    ((ic.rx_queues && queue >= ic.rx_queues) || (ic.tx_queues && queue >= ic.tx_queues)))
		return -ENXIO;
	if (opts)
		memcpy(&eo, opts, opts->sz < sizeof(eo) ? opts->sz : sizeof(eo));
	eo.sz = sizeof(eo);
	if (!no_rx && !eo.steer) {
		err = gso_steer__create(&own, ifindex, GSO_OPTS_GET(po, steer_opts, (const struct gso_steer_opts *)NULL));
		if (err)
			return err;
		eo.steer = own;
	}
	err = open_tx(&tx, ifindex, &info, queue, xflags, no_rx);
	if (err)
		goto fail;
	err = gso_engine__create(&e, tx, &eo);
	if (err) {
		gso_dev__destroy(tx);
		goto fail;
	}
	eng = gsoi_engine_of(e);
	eng->own_steer = own != NULL;
	if (!no_rx) {
		err = open_rxs(e, ifindex, nq, queue);
		if (err) {
			gso_engine__destroy(e);
			return err;
		}
	}
	info.rx_devs = eng->nrx;
	eng->path = info;
	eng->has_path = true;
	*out = e;
	return 0;
fail:
	gso_steer__destroy(own);
	return err;
}

int gso_engine__path(const struct gso_engine *h, struct gso_path_info *info)
{
	const struct engine *e = gsoi_engine_of(h);
	struct gso_path_info full;

	if (h && !e)
		return -EBADF;
	if (!e || !GSO_OUT_VALID(info))
		return -EINVAL;
	if (!e->has_path)
		return -ENOENT;
	full = e->path;
	GSO_OUT_PUT(info, full);
	return 0;
}
