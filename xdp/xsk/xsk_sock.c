/*
 * The AF_XDP socket (struct xsk_sock, xsk_internal.h): UMEM registration
 * with TX metadata, ring creation and mapping, bind.  Done here rather
 * than through libxdp because libxdp 1.3 (Debian 12) cannot pass
 * tx_metadata_len.
 */
#include "xsk_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gso/offload.h>

static int set_ring(int fd, int opt, uint32_t size)
{
	return setsockopt(fd, SOL_XDP, opt, &size, sizeof(size)) ? -errno : 0;
}

/*
 * Three tries, newest kernel first:
 *  1. tx_metadata_len + XDP_UMEM_TX_METADATA_LEN (about 6.11+);
 *  2. tx_metadata_len without the flag (6.8-6.10 take the length as is);
 *  3. neither metadata nor TX_SW_CSUM (older kernels refuse unknown flags).
 * Pre-6.8 kernels accept try 2 but ignore the length; the checksum probe
 * finds that out.
 */
static int register_umem(struct xsk_sock *s, const struct xsk_sock_cfg *c)
{
	struct compat_xdp_umem_reg reg;
	uint32_t base = c->unaligned ? XDP_UMEM_UNALIGNED_CHUNK_FLAG : 0;
	int tries = c->want_meta ? 3 : 1, err = 0;

	for (int t = 0; t < tries; t++) {
		int try_ = c->want_meta ? t : 2;
		memset(&reg, 0, sizeof(reg));
		reg.addr = (uint64_t)(uintptr_t)c->area;
		reg.len = c->area_len;
		reg.chunk_size = c->chunk_size;
		reg.flags = base;
		if (try_ < 2) {
			reg.tx_metadata_len = GSO_XSK_TXMD_LEN;
			if (c->kernel_csum)
				reg.flags |= XDP_UMEM_TX_SW_CSUM;
			if (try_ == 0)
				reg.flags |= XDP_UMEM_TX_METADATA_LEN;
		}
		if (!setsockopt(s->fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg))) {
			s->meta_len = reg.tx_metadata_len;
			s->kernel_csum = reg.flags & XDP_UMEM_TX_SW_CSUM;
			s->meta_flag = reg.flags & XDP_UMEM_TX_METADATA_LEN;
			return 0;
		}
		err = -errno;
		if (err != -EINVAL)
			break;
	}
	return err;
}

int gsoi_xsk_sock_open(struct xsk_sock *s, const struct xsk_sock_cfg *c)
{
	struct sockaddr_xdp sxdp;
	struct xdp_options xo;
	socklen_t ol = sizeof(xo);
	int err;

	memset(s, 0, sizeof(*s));
	s->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		err = -errno;
		s->fd = -1;
		return err;
	}
	err = register_umem(s, c);
	if (!err)
		err = set_ring(s->fd, XDP_UMEM_FILL_RING, c->fill_size);
	if (!err)
		err = set_ring(s->fd, XDP_UMEM_COMPLETION_RING, c->cq_size);
	if (!err)
		err = set_ring(s->fd, XDP_TX_RING, c->tx_size);
	if (!err && c->rx_size)
		err = set_ring(s->fd, XDP_RX_RING, c->rx_size);
	/* Rings can only be mapped before bind: bind moves them into the pool. */
	if (!err)
		err = gsoi_xring_map(&s->tx, s->fd, XRING_TX, c->tx_size);
	if (!err)
		err = gsoi_xring_map(&s->cq, s->fd, XRING_CQ, c->cq_size);
	if (!err && c->rx_size)
		err = gsoi_xring_map(&s->rx, s->fd, XRING_RX, c->rx_size);
	if (!err && c->rx_size)
		err = gsoi_xring_map(&s->fill, s->fd, XRING_FILL, c->fill_size);
	if (!err) {
		memset(&sxdp, 0, sizeof(sxdp));
		sxdp.sxdp_family = AF_XDP;
		sxdp.sxdp_ifindex = (uint32_t)c->ifindex;
		sxdp.sxdp_queue_id = c->queue_id;
		sxdp.sxdp_flags = c->bind_flags;
		if (bind(s->fd, (struct sockaddr *)&sxdp, sizeof(sxdp)))
			err = -errno;
	}
	if (err) {
		gsoi_xsk_sock_close(s);
		return err;
	}
	s->bind_flags = c->bind_flags;
	memset(&xo, 0, sizeof(xo));
	if (!getsockopt(s->fd, SOL_XDP, XDP_OPTIONS, &xo, &ol))
		s->zerocopy = xo.flags & XDP_OPTIONS_ZEROCOPY;
	return 0;
}

void gsoi_xsk_sock_close(struct xsk_sock *s)
{
	gsoi_xring_unmap(&s->tx);
	gsoi_xring_unmap(&s->cq);
	gsoi_xring_unmap(&s->rx);
	gsoi_xring_unmap(&s->fill);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

int gsoi_xsk_sock_stats(const struct xsk_sock *s, struct compat_xdp_statistics *st)
{
	socklen_t ol = sizeof(*st);

	memset(st, 0, sizeof(*st));
	/* Older kernels fill a shorter struct and say so in ol; the rest stays 0. */
	return getsockopt(s->fd, SOL_XDP, XDP_STATISTICS, st, &ol) ? -errno : 0;
}

int64_t gsoi_xsk_sock_tx_invalid(const struct xsk_sock *s)
{
	struct compat_xdp_statistics st;
	int err = gsoi_xsk_sock_stats(s, &st);

	return err ? err : (int64_t)st.tx_invalid_descs;
}

int gsoi_xsk_sock_kick(const struct xsk_sock *s)
{
	return sendto(s->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 ? -errno : 0;
}

uint32_t gsoi_xsk_copy_max_descs(void)
{
	unsigned v = 0;
	FILE *f = fopen("/proc/sys/net/core/max_skb_frags", "re");

	/* The sysctl can only lower MAX_SKB_FRAGS, so it is a safe bound. */
	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v ? v + 1 : COMPAT_XSK_COPY_MAX_DESCS;
}

