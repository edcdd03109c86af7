/*
 * The virtio_net_hdr backend over a TAP: what we write is what the kernel
 * receives on the TAP interface, GSO packets included (the TAP's receive
 * path validates the header with virtio_net_hdr_to_skb and segments later,
 * if the packet is forwarded, or delivers it whole to a local socket).
 */
#include "vnet_internal.h"
#include "kernel/link_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/if.h>
#include <linux/if_tun.h>

#include "opts_internal.h"

#define TAP_SCRATCH 4096u

/* Open /dev/net/tun as `ifname` with a 10-byte virtio header; returns the fd or -errno. */
static int tap_open(const char *ifname)
{
	struct ifreq ifr;
	int fd, sz = GSO_VNET_HDR_LEN, err = 0;

	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	if (ioctl(fd, TUNSETIFF, &ifr) || ioctl(fd, TUNSETVNETHDRSZ, &sz))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int gso_vnet__create_tap(struct gso_dev **out, const char *ifname, const struct gso_vnet_opts *o)
{
	struct vnet_dev *v;
	int err;

	if (!out || !ifname || !*ifname || strlen(ifname) >= IFNAMSIZ)
		return -EINVAL;
	err = gsoi_vnet_read_opts(o);
	if (err)
		return err;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->fd = -1;
	v->tap = true;
	v->fd = tap_open(ifname);
	if (v->fd < 0) {
		err = v->fd;
		v->fd = -1;
		goto fail;
	}
	err = gsoi_link_mtu(0, ifname, &v->mtu);
	if (!err)
		err = gsoi_vnet_init(v, o, TAP_SCRATCH);
	if (err)
		goto fail;
	v->t.lim.max_frame = v->mtu + 14;
	v->t.dev.ifindex = (int)if_nametoindex(ifname);
	snprintf(v->t.dev.name, sizeof(v->t.dev.name), "tap vnet");
	*out = &v->t.dev;
	return 0;
fail:
	gsoi_vnet_free(v);
	return err;
}
