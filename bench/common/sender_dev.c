#include "sender_dev.h"

#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <gso/tso.h>

static const char *const mode_names[SND_MODE_COUNT] = {
	[SND_MODE_SOFTWARE] = "software",
	[SND_MODE_CSUM] = "csum",
	[SND_MODE_MULTIBUF] = "multibuf",
	[SND_MODE_E1000] = "offload-e1000",
	[SND_MODE_VNET] = "offload-vnet",
	[SND_MODE_AUTO] = "auto",
};

/* Receive ring sizes: ACKs are small and come at most one per two segments. */
#define RX_SIZE 1024u
#define RX_CHUNKS 2048u

const char *snd_mode_name(unsigned m)
{
	return m < SND_MODE_COUNT ? mode_names[m] : NULL;
}

int snd_mode_parse(const char *s)
{
	for (unsigned m = 0; m < SND_MODE_COUNT; m++)
		if (!strcmp(s, mode_names[m]))
			return (int)m;
	return -EINVAL;
}

static int fail(char *err, size_t len, int e, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(err, len, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < len)
		snprintf(err + n, len - (size_t)n, ": %s", strerror(-e));
	return e;
}

static int open_xsk(struct gso_dev **dev, int ifindex, uint32_t queue, uint32_t flags, bool tx_too)
{
	GSO_OPTS(gso_xsk_opts, o, .queue_id = queue, .mode = GSO_XSK_MODE_AUTO, .flags = flags,
		 .rx_size = RX_SIZE, .rx_chunks = RX_CHUNKS);
	if (!tx_too) {
		/* Receive only: a few chunks for the (unused) transmit side. */
		o.nchunks = RX_CHUNKS + 64;
		o.buf_chunks = 16;
		o.flags |= GSO_XSK_F_NO_CSUM | GSO_XSK_F_NO_SG;
	}
	return gso_xsk__create(dev, ifindex, &o);
}

static uint32_t dev_flags(struct gso_dev *dev)
{
	GSO_OPTS(gso_dev_caps, c);

	return gso_dev__caps(dev, &c) ? 0 : c.flags;
}

int snd_dev_open(struct snd_dev *d, int mode, int ifindex, uint32_t queue, char *err, size_t errlen)
{
	uint32_t flags = 0;
	int e;

	memset(d, 0, sizeof(*d));
	d->mode = mode;
	err[0] = 0;
	if (mode == SND_MODE_AUTO) {
		GSO_OPTS(gso_ifcaps, ic);
		char name[16];

		e = gso_ifcaps__probe(if_indextoname((unsigned)ifindex, name) ? name : "", GSO_IFCAPS_NO_XSK,
				      &ic);
		mode = !e && (ic.features & GSO_IF_TSO4) ? SND_MODE_VNET : SND_MODE_AUTO;
	}
	switch (mode) {
	case SND_MODE_SOFTWARE:
		flags = GSO_XSK_F_NO_SG | GSO_XSK_F_NO_CSUM;
		d->tx_flags = GSO_TX_F_SW_CSUM | GSO_TX_F_COPY;
		break;
	case SND_MODE_CSUM:
		flags = GSO_XSK_F_NO_SG;
		d->tx_flags = GSO_TX_F_COPY;
		break;
	case SND_MODE_MULTIBUF:
	case SND_MODE_AUTO:
		break;
	case SND_MODE_VNET: {
		GSO_OPTS(gso_vnet_opts, vo, .mode = d->mode == SND_MODE_AUTO ? GSO_TSO_AUTO : GSO_TSO_OFFLOAD);

		e = gso_vnet__create(&d->tx, ifindex, &vo);
		if (e)
			return fail(err, errlen, e, "virtio_net_hdr device");
		d->tso = true;
		break;
	}
	case SND_MODE_E1000: {
		GSO_OPTS(gso_ifcaps, ic);
		char name[16];

		e = gso_ifcaps__probe(if_indextoname((unsigned)ifindex, name) ? name : "", GSO_IFCAPS_NO_XSK,
				      &ic);
		if (e)
			return fail(err, errlen, e, "interface capabilities");
		if (ic.tx_queues < 2 || ic.rx_queues < 2)
			return fail(err, errlen, -EOPNOTSUPP,
				    "offload-e1000 needs 2 queues on %s (the model's wire on queue 1, ACKs on 0); "
				    "it has %u/%u", name, ic.rx_queues, ic.tx_queues);
		GSO_OPTS(gso_e1000_opts, eo, .mode = GSO_TSO_OFFLOAD, .queue_id = 1,
			 .xsk_mode = GSO_XSK_MODE_AUTO);
		e = gso_e1000__create(&d->tx, ifindex, &eo);
		if (e)
			return fail(err, errlen, e, "e1000 device model");
		d->tso = true;
		break;
	}
	default:
		return fail(err, errlen, -EINVAL, "mode %d", mode);
	}

	if (!d->tx) {
		e = open_xsk(&d->tx, ifindex, queue, flags, true);
		if (e) {
			fail(err, errlen, e, "AF_XDP device on queue %u", queue);
			return e == -EOPNOTSUPP ? -EOPNOTSUPP : e;
		}
		d->rx = d->tx;
		uint32_t f = dev_flags(d->tx);
		if (mode == SND_MODE_CSUM && !(f & GSO_DEV_CSUM)) {
			e = fail(err, errlen, -EOPNOTSUPP, "AF_XDP checksum metadata not available");
			goto out;
		}
		if (mode == SND_MODE_MULTIBUF && !(f & GSO_DEV_SG)) {
			e = fail(err, errlen, -EOPNOTSUPP, "AF_XDP multi-buffer not available");
			goto out;
		}
	} else {
		e = open_xsk(&d->rx, ifindex, 0, 0, false);
		if (e) {
			fail(err, errlen, e, "AF_XDP receive socket on queue 0");
			goto out;
		}
	}
	if (!(dev_flags(d->rx) & GSO_DEV_RX)) {
		e = fail(err, errlen, -EOPNOTSUPP, "no AF_XDP receive side");
		goto out;
	}
	e = gso_steer__create(&d->steer, ifindex, NULL);
	if (e) {
		fail(err, errlen, e, "XDP steering program");
		goto out;
	}
	e = gso_steer__add_dev(d->steer, d->rx);
	if (e) {
		fail(err, errlen, e, "steering to the receive socket");
		goto out;
	}
	snprintf(d->desc, sizeof(d->desc), "%s%s%s", gso_dev__name(d->tx), d->rx != d->tx ? " + rx " : "",
		 d->rx != d->tx ? gso_dev__name(d->rx) : "");
	return 0;
out:
	snd_dev_close(d);
	snd_dev_destroy(d);
	d->mode = mode;
	return e;
}

int snd_dev_steer(struct snd_dev *d, int l3, const uint8_t peer_addr[16], const uint8_t our_addr[16],
		  uint16_t peer_port, uint16_t our_port)
{
	int e;

	memset(&d->flow, 0, sizeof(d->flow));
	d->flow.l3 = l3 == 6 ? GSO_L3_IPV6 : GSO_L3_IPV4;
	d->flow.l4 = GSO_L4_TCP;
	d->flow.sport = peer_port;
	d->flow.dport = our_port;
	memcpy(d->flow.saddr, peer_addr, l3 == 6 ? 16 : 4);
	memcpy(d->flow.daddr, our_addr, l3 == 6 ? 16 : 4);
	e = gso_steer__flow_add(d->steer, &d->flow);
	if (!e)
		d->flow_added = true;
	return e;
}

int snd_dev_rx_fd(const struct snd_dev *d)
{
	return gso_xsk__fd(d->rx);
}

void snd_dev_close(struct snd_dev *d)
{
	if (d->steer && d->flow_added)
		gso_steer__flow_del(d->steer, &d->flow);
	d->flow_added = false;
	gso_steer__destroy(d->steer);
	d->steer = NULL;
	if (d->rx && d->rx != d->tx)
		gso_dev__close(d->rx);
	if (d->tx)
		gso_dev__close(d->tx);
}

void snd_dev_destroy(struct snd_dev *d)
{
	if (d->rx && d->rx != d->tx)
		gso_dev__destroy(d->rx);
	gso_dev__destroy(d->tx);
	d->rx = d->tx = NULL;
}
