#include "sender_dev.h"

#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include <gso/dev.h>
#include <gso/xsk.h>
#include <gso/vnet.h>
#include <gso/steer.h>
#include <gso/ifcaps.h>
#include <gso/e1000.h>

static const char *const mode_names[SND_MODE_COUNT] = {
	[SND_MODE_SOFTWARE] = "software",
	[SND_MODE_CSUM] = "csum",
	[SND_MODE_MULTIBUF] = "multibuf",
	[SND_MODE_E1000] = "offload-e1000",
	[SND_MODE_VNET] = "offload-vnet",
	[SND_MODE_AUTO] = "auto",
};

/* Receive rings: ACKs are small and come at most one per two segments. */
#define RX_SIZE 1024u
#define RX_CHUNKS 2048u
/* A queue only the transmit side uses, or a spare one: less memory. */
#define RX_SMALL_SIZE 256u
#define RX_SMALL_CHUNKS 512u

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

/*
 * Why the AF_XDP device came without checksum requests (csum) or
 * multi-buffer (sg): the kernel feature that is missing, by the library's
 * probe of the interface, with the release that brought it, so that the
 * person on an older kernel (Debian 12 has 6.1) learns what to upgrade.
 */
static int xsk_missing(char *err, size_t len, int ifindex, const char *ifname, bool sg)
{
	struct gso_ifcaps c = { .sz = sizeof(c) };
	struct utsname u;
	const char *rel = uname(&u) ? "?" : u.release;

	if (gso_ifcaps__probe(ifindex, GSO_IFCAPS_NO_SEND, &c))
		c.xsk_tx_metadata = c.xsk_sg = 0;
	if (sg)
		return fail(err, len, -EOPNOTSUPP,
			    c.xsk_sg == 1 ? "AF_XDP multi-buffer: %s binds with XDP_USE_SG, yet the device "
					    "did not offer it (kernel %s)"
					  : "AF_XDP multi-buffer transmit (XDP_USE_SG) needs Linux 6.6 or later, "
					    "and %s refuses it on this kernel (%s)",
			    ifname, rel);
	if (c.xsk_tx_metadata != 1)
		return fail(err, len, -EOPNOTSUPP,
			    "AF_XDP TX metadata (checksum requests) needs Linux 6.8 or later; "
			    "%s refuses tx_metadata_len on this kernel (%s)", ifname, rel);
	return fail(err, len, -EOPNOTSUPP,
		    "AF_XDP checksum requests: this kernel (%s) takes TX metadata on %s but does not "
		    "carry checksum requests in copy mode", rel, ifname);
}

/* A receive socket: a few chunks for its transmit side (SYN and ACKs in offload-e1000 mode). */
static int open_xsk_rx(struct gso_dev **dev, int ifindex, uint32_t queue, bool small)
{
	uint32_t rx = small ? RX_SMALL_SIZE : RX_SIZE, chunks = small ? RX_SMALL_CHUNKS : RX_CHUNKS;
	GSO_OPTS(gso_xsk_opts, o, .queue_id = queue, .mode = GSO_XSK_MODE_AUTO,
		 .flags = GSO_XSK_F_NO_CSUM | GSO_XSK_F_NO_SG, .rx_size = rx, .rx_chunks = chunks,
		 .nchunks = chunks + 64, .buf_chunks = 16, .tx_size = 64);
	return gso_xsk__create(dev, ifindex, &o);
}

static uint32_t dev_flags(struct gso_dev *dev)
{
	GSO_OPTS(gso_dev_caps, c);

	return gso_dev__caps(dev, &c) ? 0 : c.flags;
}

static int probe(int ifindex, struct gso_ifcaps *ic, char *name)
{
	if (!if_indextoname((unsigned)ifindex, name))
		return -errno;
	return gso_ifcaps__probe(ifindex, GSO_IFCAPS_NO_XSK, ic);
}

static void describe(struct snd_dev *d)
{
	unsigned n = 0;
	char txop[32] = "";

	for (unsigned q = 0; q < d->nrxq; q++)
		n += d->rx[q] && d->rx[q] != d->tx && (int)q != d->wire_queue;
	if (d->wire_queue >= 0 && d->txop_us)
		snprintf(txop, sizeof(txop), ", txop every %u us", d->txop_us);
	snprintf(d->desc, sizeof(d->desc), "%s%s%s%s + %u rx queue%s", d->tx ? gso_dev__name(d->tx) : "?",
		 d->wire_queue >= 0 ? " (wire on its own queue" : "", txop, d->wire_queue >= 0 ? ")" : "", n,
		 n == 1 ? "" : "s");
}

static int give(struct snd_dev *d, struct gso_engine *e);

/* offload-e1000: a receive socket on every queue; queue 0's transmits until snd_dev_wire(). */
static int open_e1000(struct snd_dev *d, const struct gso_ifcaps *ic, const char *name,
		      const struct gso_engine_opts *eo, struct gso_engine **e, char *err, size_t errlen)
{
	int r;

	if (ic->tx_queues < 2 || d->nrxq < 2)
		return fail(err, errlen, -EOPNOTSUPP,
			    "offload-e1000 needs 2 queues on %s (the model's wire needs one of its own); "
			    "it has %u/%u", name, ic->rx_queues, ic->tx_queues);
	for (unsigned q = 0; q < d->nrxq; q++) {
		r = open_xsk_rx(&d->rx[q], d->ifindex, q, q != 0);
		if (r)
			return fail(err, errlen, r, "AF_XDP receive socket on queue %u", q);
		if (!(dev_flags(d->rx[q]) & GSO_DEV_RX))
			return fail(err, errlen, -EOPNOTSUPP, "no AF_XDP receive side");
	}
	d->tx = d->rx[0];
	r = gso_steer__create(&d->steer, d->ifindex, NULL);
	if (r)
		return fail(err, errlen, r, "XDP steering program");
	d->own_steer = true;
	{
		struct gso_engine_opts o = *eo;

		/* The engine joins its receive sockets to the program (gso_engine_opts.steer). */
		o.steer = d->steer;
		r = gso_engine__create(e, d->tx, &o);
		if (r)
			return fail(err, errlen, r, "transmit engine");
	}
	r = give(d, *e);
	return r ? fail(err, errlen, r, "receive devices") : 0;
}

static const uint32_t mode_path[SND_MODE_COUNT] = {
	[SND_MODE_SOFTWARE] = GSO_PATH_SOFTWARE,
	[SND_MODE_CSUM] = GSO_PATH_CSUM,
	[SND_MODE_MULTIBUF] = GSO_PATH_MULTIBUF,
	[SND_MODE_VNET] = GSO_PATH_OFFLOAD_VNET,
	[SND_MODE_AUTO] = GSO_PATH_AUTO,
};

/* The library opens the path in one call (gso_engine__open_path); the devices are the engine's. */
static int open_path(struct snd_dev *d, const char *name, uint32_t queue, const struct gso_engine_opts *eo,
		     struct gso_engine **e, char *err, size_t errlen)
{
	GSO_OPTS(gso_path_opts, po, .path = mode_path[d->mode], .queue_id = queue);
	GSO_OPTS(gso_path_info, pi);
	struct gso_dev *rx;
	int r;

	r = gso_engine__open_path(e, d->ifindex, &po, eo);
	if (r == -EOPNOTSUPP && (d->mode == SND_MODE_CSUM || d->mode == SND_MODE_MULTIBUF))
		return xsk_missing(err, errlen, d->ifindex, name, d->mode == SND_MODE_MULTIBUF);
	if (r)
		return fail(err, errlen, r, "%s path on %s", gso_path_name(po.path), name);
	gso_engine__path(*e, &pi);
	for (unsigned k = 0; k < SND_MODE_COUNT; k++)
		if (mode_path[k] == pi.path && k != SND_MODE_E1000)
			d->kind = (int)k;
	if (d->kind == SND_MODE_SOFTWARE)
		d->tx_flags = GSO_TX_F_SW_CSUM | GSO_TX_F_COPY;
	else if (d->kind == SND_MODE_CSUM)
		d->tx_flags = GSO_TX_F_COPY;
	d->given = true;
	d->tx = gso_engine__dev(*e);
	d->steer = gso_engine__steer(*e);
	for (uint32_t i = 0; (rx = gso_engine__rx(*e, i)); i++) {
		int q = gso_xsk__queue(rx);

		if (q >= 0 && q < SND_MAX_RXQ)
			d->rx[q] = rx;
	}
	return 0;
}

int snd_dev_open(struct snd_dev *d, int mode, int ifindex, uint32_t queue, const struct gso_engine_opts *eo,
		 struct gso_engine **e, char *err, size_t errlen)
{
	GSO_OPTS(gso_ifcaps, ic);
	char name[IF_NAMESIZE] = "";
	int r;

	memset(d, 0, sizeof(*d));
	*e = NULL;
	d->mode = d->kind = mode;
	d->ifindex = ifindex;
	d->wire_queue = -1;
	err[0] = 0;
	if (mode < 0 || mode >= SND_MODE_COUNT)
		return fail(err, errlen, -EINVAL, "mode %d", mode);
	r = probe(ifindex, &ic, name);
	if (r)
		return fail(err, errlen, r, "interface capabilities");
	d->nrxq = ic.rx_queues ? ic.rx_queues : 1;
	if (d->nrxq > SND_MAX_RXQ)
		d->nrxq = SND_MAX_RXQ;
	if (queue >= d->nrxq)
		r = fail(err, errlen, -EINVAL, "queue %u (%s has %u)", queue, name, d->nrxq);
	else if (mode == SND_MODE_E1000)
		r = open_e1000(d, &ic, name, eo, e, err, errlen);
	else
		r = open_path(d, name, queue, eo, e, err, errlen);
	if (r) {
		gso_engine__destroy(*e);
		*e = NULL;
		snd_dev_destroy(d);
		d->mode = mode;
		return r == -EOPNOTSUPP ? -EOPNOTSUPP : r;
	}
	describe(d);
	return 0;
}

static bool balanced(struct gso_dev *dev, struct gso_dev_stats *out)
{
	GSO_OPTS(gso_dev_stats, st);

	if (gso_dev__stats(dev, &st))
		return false;
	if (out)
		*out = st;
	return st.chunks_free == st.chunks_total && !st.chunks_queued && !st.chunks_inflight &&
	       !st.chunks_held;
}

static int give(struct snd_dev *d, struct gso_engine *e)
{
	int err = 0;

	d->given = true;
	for (unsigned q = 0; q < d->nrxq; q++) {
		if (!d->rx[q] || d->rx[q] == d->tx)
			continue;
		int e2 = gso_engine__add_rx(e, d->rx[q]);

		if (e2) {
			/* Not the engine's: ours to free. */
			gso_dev__destroy(d->rx[q]);
			d->rx[q] = NULL;
			if (!err)
				err = e2;
		}
	}
	return err;
}

int snd_dev_queue_of(const struct snd_dev *d, const struct gso_dev *rx)
{
	for (unsigned q = 0; q < d->nrxq; q++)
		if (d->rx[q] && d->rx[q] == rx)
			return (int)q;
	return -1;
}

int snd_dev_wire(struct snd_dev *d, struct gso_engine *e, unsigned ack_queue, char *err, size_t errlen)
{
	struct gso_dev *x;
	int w = -1, r;

	if (d->kind != SND_MODE_E1000 || d->wire_queue >= 0)
		return -ENOENT;
	for (int q = (int)d->nrxq - 1; q >= 0 && w < 0; q--)
		if ((unsigned)q != ack_queue)
			w = q;
	if (w < 0)
		return fail(err, errlen, -EOPNOTSUPP, "no queue for the e1000 wire besides the ACKs' (%u)", ack_queue);
	/*
	 * The wire needs that queue's socket gone (the kernel allows one per
	 * queue).  If it carried the SYN and the handshake ACK, the ACKs'
	 * socket transmits until the model takes over.
	 */
	if (d->rx[w] == gso_engine__dev(e)) {
		r = gso_engine__set_tx(e, d->rx[ack_queue]);
		if (r)
			return fail(err, errlen, r, "transmitting on queue %u", ack_queue);
		d->tx = d->rx[ack_queue];
	}
	gso_steer__del_dev(d->steer, d->rx[w]);
	r = gso_engine__del_rx(e, d->rx[w]);
	if (r)
		return fail(err, errlen, r, "taking queue %d's receive socket away", w);
	gso_dev__close(d->rx[w]);
	d->wire_rx_balanced = balanced(d->rx[w], NULL);
	gso_dev__destroy(d->rx[w]);
	d->rx[w] = NULL;
	GSO_OPTS(gso_e1000_opts, eo, .mode = GSO_TSO_OFFLOAD, .queue_id = (uint32_t)w, .xsk_mode = GSO_XSK_MODE_AUTO,
		 .flags = (d->txop_us ? GSO_E1000_F_TXOP : 0) | (d->txop_split ? GSO_E1000_F_TXOP_SPLIT : 0), .txop_us = d->txop_us, .txop_frames = d->txop_frames,
		 .link_rate = d->txop_rate);
	r = gso_e1000__create(&x, d->ifindex, &eo);
	if (r)
		return fail(err, errlen, r, "e1000 device model on queue %d", w);
	r = gso_engine__set_tx(e, x);
	if (r) {
		gso_dev__destroy(x);
		return fail(err, errlen, r, "making the e1000 model the transmit device");
	}
	d->tx = x;
	d->wire_queue = w;
	describe(d);
	return 0;
}

int snd_dev_e1000_stats(const struct snd_dev *d, struct gso_e1000_stats *st)
{
	if (d->kind != SND_MODE_E1000 || d->wire_queue < 0)
		return -ENOENT;
	return gso_e1000__stats(d->tx, st);
}

bool snd_dev_umem_balanced(struct snd_dev *d, struct gso_engine *e, struct gso_dev_stats *tx_st)
{
	bool ok = balanced(gso_engine__dev(e), tx_st) && (d->wire_queue < 0 || d->wire_rx_balanced);

	for (unsigned q = 0; q < SND_MAX_RXQ; q++)
		if (d->rx[q] && d->rx[q] != gso_engine__dev(e))
			ok = balanced(d->rx[q], NULL) && ok;
	return ok;
}

void snd_dev_destroy(struct snd_dev *d)
{
	if (!d->given) {
		for (unsigned q = 0; q < SND_MAX_RXQ; q++)
			if (d->rx[q] && d->rx[q] != d->tx)
				gso_dev__destroy(d->rx[q]);
		gso_dev__destroy(d->tx);
	}
	for (unsigned q = 0; q < SND_MAX_RXQ; q++)
		d->rx[q] = NULL;
	d->tx = NULL;
	if (d->own_steer)
		gso_steer__destroy(d->steer);
	d->steer = NULL;
	d->own_steer = false;
}
