/*
 * The AF_XDP device (gso_xsk__create): options, UMEM and socket set-up,
 * the checksum probe, capabilities, statistics, the receive glue
 * (xsk_rx.c), teardown and the ops table.  Its transmit path is xsk_tx.c.
 */
#include "xsk_dev_internal.h"
#include "kernel/link_internal.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <gso/offload.h>
#include <gso/seg.h>
#include "opts_internal.h"
#include "kernel/sleep_internal.h"

#define DEF_CHUNK_SIZE 4096u
#define DEF_NCHUNKS 4096u
#define DEF_TX_SIZE 2048u
#define DEF_BIND_WAIT_MS 2000u
#define FILL_SIZE 64u        /* bind needs a fill ring even without RX */
#define CLOSE_DRAIN_MS 200

/* ---- caps, stats, teardown ---- */

static void xsk_caps(const struct gso_dev *d, struct gso_dev_caps *c)
{
	const struct xsk_dev *x = (const struct xsk_dev *)d;

	c->flags = (x->csum ? GSO_DEV_CSUM : 0) | (x->sg ? GSO_DEV_SG : 0) |
		   (x->sk.zerocopy ? GSO_DEV_ZEROCOPY : 0) | (x->probe_pending ? GSO_DEV_PROBE_PENDING : 0);
	c->mtu = x->mtu;
	c->max_frame = x->mtu + 14;
	/* A segment takes one descriptor, or a header and up to two payload pieces with SG. */
	c->max_segs = x->sk.tx.size / (x->sg ? 3 : 1);
	if (!c->max_segs)
		c->max_segs = x->scratch_n;
	c->max_frags = x->sg ? x->max_descs : 1;
	if (x->rx.n) {
		c->flags |= GSO_DEV_RX;
		/* Copy mode and the usual drivers put XDP_PACKET_HEADROOM before the frame. */
		c->rx_max_frame = x->mem.chunk_size - COMPAT_XDP_PACKET_HEADROOM;
	}
}

static uint32_t xsk_inflight(const struct gso_dev *d)
{
	return ((const struct xsk_dev *)d)->inflight;
}

static uint64_t xsk_completed(const struct gso_dev *d)
{
	return ((const struct xsk_dev *)d)->st.tx_completed;
}

/*
 * Whole frames are copied into a slab slot of one chunk: metadata room,
 * headers, payload, the slot rounded up to 8 bytes (xplan_make).
 * Multi-buffer frames reference the payload where it is (only the MTU
 * limits them), but payload outside a device buffer, or GSO_TX_F_COPY,
 * still makes whole frames.
 */
static uint32_t xsk_frame_room(const struct gso_dev *d, const struct gso_tmpl *t, uint32_t tx_flags)
{
	const struct xsk_dev *x = (const struct xsk_dev *)d;
	uint32_t slot_max = x->mem.chunk_size & ~7u;

	if (x->sg && !(tx_flags & GSO_TX_F_COPY))
		return UINT32_MAX;
	if (slot_max <= x->meta + t->hdr_len)
		return 0;
	return slot_max - x->meta - t->hdr_len;
}

static uint64_t kernel_invalid(struct xsk_dev *x)
{
	int64_t v;

	if (x->sk.fd < 0)
		return x->kernel_invalid_final;
	v = gsoi_xsk_sock_tx_invalid(&x->sk);
	if (v >= x->invalid_base)
		x->kernel_invalid_final = (uint64_t)(v - x->invalid_base);
	return x->kernel_invalid_final;
}

static void xsk_stats(struct gso_dev *d, struct gso_dev_stats *st)
{
	struct xsk_dev *x = to_xsk(d);

	*st = x->st;
	st->kernel_invalid = kernel_invalid(x);
	st->inflight_descs = x->inflight;
	gsoi_xsk_rx_stats(&x->rx, &x->sk, st);
}

static void xsk_close(struct gso_dev *d)
{
	struct xsk_dev *x = to_xsk(d);

	if (x->sk.fd >= 0 && !x->dead) {
		for (int t = 0; t < CLOSE_DRAIN_MS && x->inflight; t++) {
			int err = gsoi_xsk_push(x);
			gsoi_xsk_reap(d, 0);
			if (err && err != -EAGAIN)
				break;
			if (x->inflight)
				sleep_ms(1);
		}
	}
	if (x->sk.fd >= 0) {
		gsoi_xsk_reap(d, 0);
		kernel_invalid(x);
		gsoi_xsk_rx_save_stats(&x->rx, &x->sk);
		/* After this the kernel no longer reads the rings or the UMEM. */
		gsoi_xsk_sock_close(&x->sk);
	}
	gsoi_ua_reclaim(&x->mem.ua);
	gsoi_xsk_rx_close(&x->rx, &x->mem.ua);
	x->inflight = 0;
	if (x->slab.valid)
		gsoi_ua_unhold(&x->mem.ua, x->slab.chunk);
	x->slab.valid = false;
}

static void xsk_destroy(struct gso_dev *d)
{
	struct xsk_dev *x = to_xsk(d);

	gsoi_xsk_rx_fini(&x->rx);
	gsoi_ua_fini(&x->mem.ua);
	if (x->mem.base)
		munmap(x->mem.base, x->mem.len);
	free(x->frames);
	free(x->refs);
	free(x);
}

/* ---- receiving (xsk_rx.c) ---- */

static int xsk_recv(struct gso_dev *d, struct gso_rx_pkt *out, unsigned n)
{
	struct xsk_dev *x = to_xsk(d);
	int r;

	if (!x->rx.n)
		return -EOPNOTSUPP;
	r = gsoi_xsk_rx_recv(&x->rx, &x->sk, &x->mem, out, n);
	if (r == -ENODEV)
		x->dead = true;
	/* Frames still in the ring are worth more than the news that the interface is gone. */
	return r == 0 && x->dead ? -ENODEV : r;
}

static int xsk_rx_release_op(struct gso_dev *d, const struct gso_rx_pkt *p, unsigned n)
{
	struct xsk_dev *x = to_xsk(d);

	if (!x->rx.n)
		return -EINVAL;
	return gsoi_xsk_rx_release(&x->rx, d->closed || x->sk.fd < 0 ? NULL : &x->sk, &x->mem, p, n);
}

static int xsk_rx_wait_op(struct gso_dev *d, int timeout_ms)
{
	struct xsk_dev *x = to_xsk(d);
	int r;

	if (!x->rx.n)
		return -EOPNOTSUPP;
	if (x->dead)
		return xring_cons_avail(&x->sk.rx) ? 0 : -ENODEV;
	r = gsoi_xsk_rx_wait(&x->rx, &x->sk, timeout_ms);
	if (r == -ENODEV)
		x->dead = true;
	return r;
}

static const struct gso_dev_ops xsk_ops = {
	.kind = "af_xdp",
	.caps = xsk_caps,
	.plan = gsoi_xsk_plan,
	.submit = gsoi_xsk_submit,
	.kick = gsoi_xsk_kick,
	.reap = gsoi_xsk_reap,
	.stats = xsk_stats,
	.close = xsk_close,
	.destroy = xsk_destroy,
	.recv = xsk_recv,
	.rx_release = xsk_rx_release_op,
	.rx_wait = xsk_rx_wait_op,
	.inflight = xsk_inflight,
	.completed = xsk_completed,
	.frame_room = xsk_frame_room,
	.probe = gsoi_xsk_probe_op,
};

int gsoi_xsk_dev_info(const struct gso_dev *d, int *ifindex, uint32_t *queue_id, int *fd, bool *rx)
{
	const struct xsk_dev *x = (const struct xsk_dev *)d;

	if (!d || d->ops != &xsk_ops)
		return -EINVAL;
	if (d->closed || x->sk.fd < 0)
		return -ESHUTDOWN;
	*ifindex = x->ifindex;
	*queue_id = x->queue_id;
	*fd = x->sk.fd;
	*rx = x->rx.n > 0;
	return 0;
}

int gso_xsk__fd(const struct gso_dev *d)
{
	if (!d || d->ops != &xsk_ops)
		return -EINVAL;
	if (d->closed)
		return -ESHUTDOWN;
	return ((const struct xsk_dev *)d)->sk.fd;
}

int gso_xsk__queue(const struct gso_dev *d)
{
	if (!d || d->ops != &xsk_ops)
		return -EINVAL;
	if (d->closed)
		return -ESHUTDOWN;
	return (int)((const struct xsk_dev *)d)->queue_id;
}

/* ---- creation ---- */

struct xcfg {
	uint32_t mode, flags, chunk_size, nchunks, buf_chunks, tx_size, cq_size, budget, bind_wait_ms, queue_id;
	uint32_t rx_size, fill_size, rx_chunks;
};

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static int read_opts(const struct gso_xsk_opts *o, struct xcfg *c)
{
	long page = sysconf(_SC_PAGESIZE);

	if (!GSO_OPTS_VALID(gso_xsk_opts, o))
		return -EINVAL;
	c->queue_id = GSO_OPTS_GET(o, queue_id, 0);
	c->mode = GSO_OPTS_GET(o, mode, GSO_XSK_MODE_AUTO);
	c->flags = GSO_OPTS_GET(o, flags, 0);
	c->chunk_size = GSO_OPTS_GET(o, chunk_size, 0) ?: DEF_CHUNK_SIZE;
	c->rx_size = GSO_OPTS_GET(o, rx_size, 0);
	c->fill_size = c->rx_size ? (GSO_OPTS_GET(o, fill_size, 0) ?: 2 * c->rx_size) : FILL_SIZE;
	c->rx_chunks = c->rx_size ? (GSO_OPTS_GET(o, rx_chunks, 0) ?: c->fill_size) : 0;
	if (!c->rx_size && (GSO_OPTS_GET(o, fill_size, 0) || GSO_OPTS_GET(o, rx_chunks, 0)))
		return -EINVAL;
	if (c->rx_size && (!pow2(c->rx_size) || c->rx_size < 64 || c->rx_size > 32768 ||
			   !pow2(c->fill_size) || c->fill_size < c->rx_size || c->fill_size > 65536 ||
			   c->rx_chunks > (1u << 24)))
		return -EINVAL;
	c->nchunks = GSO_OPTS_GET(o, nchunks, 0) ?: DEF_NCHUNKS + c->rx_chunks;
	if (c->rx_chunks >= c->nchunks)
		return -EINVAL;
	c->buf_chunks = GSO_OPTS_GET(o, buf_chunks, 0) ?: (c->nchunks - c->rx_chunks) / 4 * 3;
	c->tx_size = GSO_OPTS_GET(o, tx_size, 0) ?: DEF_TX_SIZE;
	c->cq_size = GSO_OPTS_GET(o, cq_size, 0) ?: 2 * c->tx_size;
	c->budget = GSO_OPTS_GET(o, tx_budget, 0) ?: c->tx_size;
	c->bind_wait_ms = GSO_OPTS_GET(o, bind_wait_ms, 0) ?: DEF_BIND_WAIT_MS;
	if (c->mode > GSO_XSK_MODE_ZEROCOPY || (c->flags & ~GSO_XSK_F_KNOWN))
		return -EINVAL;
	if (c->chunk_size < 2048 || c->chunk_size > (uint32_t)page)
		return -EINVAL;
	if ((c->flags & GSO_XSK_F_ALIGNED) && !pow2(c->chunk_size))
		return -EINVAL;
	/* The backend needs a few chunks of its own for headers and frames. */
	if (c->nchunks < 8 || c->nchunks > (1u << 24) || (uint64_t)c->buf_chunks + c->rx_chunks + 4 > c->nchunks)
		return -EINVAL;
	if (!pow2(c->tx_size) || c->tx_size < 64 || c->tx_size > 32768)
		return -EINVAL;
	if (!pow2(c->cq_size) || c->cq_size < c->tx_size || c->cq_size > 65536)
		return -EINVAL;
	if (c->budget > c->tx_size)
		c->budget = c->tx_size;
	if (c->budget < COMPAT_XSK_TX_BUDGET_DEFAULT)
		c->budget = COMPAT_XSK_TX_BUDGET_DEFAULT;
	return 0;
}

/* Open the socket, retrying what older kernels and a just-closed queue need. */
static int open_sock(struct xsk_dev *x, const struct xcfg *c, bool want_meta)
{
	struct xsk_sock_cfg sc = {
		.ifindex = x->ifindex,
		.queue_id = c->queue_id,
		.area = x->mem.base,
		.area_len = x->mem.len,
		.chunk_size = c->chunk_size,
		.unaligned = !(c->flags & GSO_XSK_F_ALIGNED),
		.want_meta = want_meta,
		.kernel_csum = c->flags & GSO_XSK_F_KERNEL_CSUM,
		.fill_size = c->fill_size,
		.cq_size = c->cq_size,
		.tx_size = c->tx_size,
		.rx_size = c->rx_size,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	long waited = 0, step = 5;
	int err;

	if (c->mode == GSO_XSK_MODE_COPY)
		sc.bind_flags |= XDP_COPY;
	else if (c->mode == GSO_XSK_MODE_ZEROCOPY)
		sc.bind_flags |= XDP_ZEROCOPY;
	if (!(c->flags & GSO_XSK_F_NO_SG))
		sc.bind_flags |= XDP_USE_SG;
	for (;;) {
		err = gsoi_xsk_sock_open(&x->sk, &sc);
		if (!err)
			return 0;
		if (err == -EBUSY && waited < (long)c->bind_wait_ms) {
			/* The queue is released a moment after the previous socket closes. */
			sleep_ms(step);
			waited += step;
			step = step < 80 ? step * 2 : 100;
			continue;
		}
		/* Before 6.6 XDP_USE_SG is an unknown bind flag; zero-copy drivers may lack it. */
		if ((err == -EINVAL || err == -EOPNOTSUPP) && (sc.bind_flags & XDP_USE_SG)) {
			sc.bind_flags &= (uint16_t)~XDP_USE_SG;
			continue;
		}
		return err;
	}
}

/*
 * Send the checksum probe frame (xsk_probe.c) from a chunk of the backend
 * region.  Returns 1 (requests are carried), 0 (not), or -errno; the
 * chunk's accounting is settled either way: a descriptor that did not
 * complete yet (-ETIMEDOUT, or -ENETDOWN: still in the ring) is in flight
 * and its completion gives the chunk back like any other.
 */
static int csum_probe(struct xsk_dev *x)
{
	uint8_t mac[6] = { 0 };
	uint32_t chunk;
	bool completed;
	int r;

	if (gsoi_link_mac(x->ifindex, NULL, mac) || gsoi_ua_alloc_one(&x->mem.ua, &chunk))
		return 0;
	gsoi_ua_get(&x->mem.ua, chunk);
	r = gsoi_xsk_probe_csum(&x->sk, x->mem.base, (uint64_t)chunk * x->mem.chunk_size + x->meta, mac,
				&completed);
	/* Invalid descriptors are dropped without a completion. */
	if (completed || r == 0)
		gsoi_ua_put(&x->mem.ua, chunk);
	else
		x->inflight++;
	gsoi_ua_unhold(&x->mem.ua, chunk);
	if (r == -ENETDOWN)
		x->link_down = true;
	return r;
}

static void set_name(struct xsk_dev *x)
{
	snprintf(x->dev.name, sizeof(x->dev.name), "af_xdp %s%s%s%s", x->sk.zerocopy ? "zerocopy" : "copy",
		 x->sg ? " sg" : "", x->csum ? " csum" : x->probe_pending ? " csum?" : "",
		 x->rx.n ? " rx" : "");
}

/* The interface is administratively up (what the probe's sendto needs). */
static bool link_is_up(int ifindex)
{
	struct link_info li;

	memset(&li, 0, sizeof(li));
	return !gsoi_link_rtnl(ifindex, &li) && (li.ifi_flags & IFF_UP);
}

/*
 * Decide checksum metadata.  Returns 0, or -EAGAIN when the probe left
 * the socket unusable and it must be opened again without metadata.  On
 * an interface that is down the probe cannot run (sendto says ENETDOWN):
 * it is left pending rather than deciding "no checksums" for the device's
 * whole life.
 */
static int setup_csum(struct xsk_dev *x)
{
	int r;

	x->csum = false;
	x->probe_pending = false;
	x->invalid_base = gsoi_xsk_sock_tx_invalid(&x->sk);
	if (x->invalid_base < 0)
		x->invalid_base = 0;
	if (!x->meta)
		return 0;
	if (x->sk.zerocopy) {
		uint64_t xf, kf;
		uint32_t zc;
		x->csum = !gsoi_xsk_netdev_get(x->ifindex, &xf, &zc, &kf) && (kf & NETDEV_XSK_FLAGS_TX_CHECKSUM);
		return 0;
	}
	if (!link_is_up(x->ifindex)) {
		x->probe_pending = true;
		return 0;
	}
	r = csum_probe(x);
	if (r == -EINVAL)
		return -EAGAIN;
	x->csum = r == 1;
	x->probe_pending = r == -ENETDOWN;
	/* The probe's own invalid descriptor is not the caller's. */
	x->invalid_base = gsoi_xsk_sock_tx_invalid(&x->sk);
	if (x->invalid_base < 0)
		x->invalid_base = 0;
	return 0;
}

/*
 * The pending probe, once the interface is up and the ring is quiet (the
 * probe waits for its own completion, which must not be mixed up with the
 * frames of others).
 */
int gsoi_xsk_probe_op(struct gso_dev *d)
{
	struct xsk_dev *x = to_xsk(d);
	int64_t inv0, inv1;
	int r;

	if (!x->probe_pending)
		return 0;
	if (x->dead)
		return -ENODEV;
	if (!link_is_up(x->ifindex))
		return -ENETDOWN;
	if (x->link_down && gsoi_xsk_push(x) == -ENETDOWN)
		return -ENETDOWN;
	gsoi_xsk_reap(d, 0);
	if (x->inflight || xring_prod_pending(&x->sk.tx))
		return -EAGAIN;
	inv0 = gsoi_xsk_sock_tx_invalid(&x->sk);
	r = csum_probe(x);
	if (r == -ENETDOWN || r == -EAGAIN)
		return r;
	inv1 = gsoi_xsk_sock_tx_invalid(&x->sk);
	if (inv0 >= 0 && inv1 > inv0)
		x->invalid_base += inv1 - inv0;
	x->probe_pending = false;
	if (r == -EINVAL) {
		/*
		 * At creation this reopens the socket without metadata; here
		 * the socket may be steered to already.  A kernel that took the
		 * metadata room at registration and then refuses a well-formed
		 * request keeps the refused descriptor at the ring's head, so
		 * nothing could be sent after it: the device is unusable.
		 */
		x->dead = true;
		return -ENODEV;
	}
	x->csum = r == 1;
	set_name(x);
	return 0;
}

int gso_xsk__create(struct gso_dev **out, int ifindex, const struct gso_xsk_opts *o)
{
	struct xsk_dev *x;
	struct xcfg c;
	uint64_t xf = 0, kf = 0;
	uint32_t zc = 0;
	bool want_meta;
	int err;

	if (!out || ifindex <= 0)
		return -EINVAL;
	err = read_opts(o, &c);
	if (err)
		return err;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->sk.fd = -1;
	x->ifindex = ifindex;
	x->dev.ifindex = ifindex;
	x->queue_id = c.queue_id;
	x->dev.ops = &xsk_ops;
	x->dev.mem = &x->mem;
	err = gsoi_link_mtu(ifindex, NULL, &x->mtu);
	if (err)
		goto fail;
	x->mem.chunk_size = c.chunk_size;
	x->cs_shift = pow2(c.chunk_size) ? (uint32_t)__builtin_ctz(c.chunk_size) : 0;
	x->mem.len = (uint64_t)c.nchunks * c.chunk_size;
	x->mem.base = mmap(NULL, x->mem.len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (x->mem.base == MAP_FAILED) {
		x->mem.base = NULL;
		err = -ENOMEM;
		goto fail;
	}
	err = gsoi_ua_init(&x->mem.ua, c.nchunks, c.buf_chunks);
	if (err)
		goto fail;
	err = gsoi_xsk_rx_init(&x->rx, &x->mem.ua, c.rx_chunks);
	if (err)
		goto fail;
	x->scratch_n = c.tx_size;
	x->frames = calloc(x->scratch_n, sizeof(*x->frames));
	x->refs = calloc(x->scratch_n, sizeof(*x->refs));
	if (!x->frames || !x->refs) {
		err = -ENOMEM;
		goto fail;
	}

	want_meta = !(c.flags & GSO_XSK_F_NO_CSUM);
	for (int round = 0; round < 2; round++) {
		err = open_sock(x, &c, want_meta);
		if (err)
			goto fail;
		x->meta = x->sk.meta_len;
		err = setup_csum(x);
		if (err != -EAGAIN)
			break;
		/* The kernel refused our metadata at send: start over without it. */
		gsoi_xsk_sock_close(&x->sk);
		gsoi_ua_reclaim(&x->mem.ua);
		x->inflight = 0;
		want_meta = false;
	}
	if (err)
		goto fail;
	/* Buffers start past the metadata room so a payload descriptor at offset 0 has it. */
	x->mem.headroom = align8(x->meta);
	x->sg = x->sk.bind_flags & XDP_USE_SG;
	/* Aligned chunks put a payload piece at a chunk start, with no room for metadata. */
	if ((c.flags & GSO_XSK_F_ALIGNED) && x->meta)
		x->sg = false;
	if (x->sk.zerocopy)
		x->max_descs = !gsoi_xsk_netdev_get(ifindex, &xf, &zc, &kf) && zc ? zc : 1;
	else
		x->max_descs = gsoi_xsk_copy_max_descs();
	if (x->max_descs < 2)
		x->sg = false;
	/*
	 * TX_SW_CSUM finishes the checksum while the kernel builds the skb
	 * from the first descriptor, before the payload fragments are added
	 * (seen on 6.18: wrong checksums), so it only works for whole frames.
	 */
	if (x->csum && x->sk.kernel_csum)
		x->sg = false;
	/* Copy mode: more descriptors per sendto; a kernel without the option keeps its default. */
	if (!x->sk.zerocopy)
		(void)setsockopt(x->sk.fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &c.budget, sizeof(c.budget));
	set_name(x);
	/* Receiving works from here on: the kernel needs chunks before the first frame. */
	x->rx.zerocopy = x->sk.zerocopy;
	gsoi_xsk_rx_refill(&x->rx, &x->sk, &x->mem);
	*out = &x->dev;
	return 0;
fail:
	if (x->sk.fd >= 0)
		gsoi_xsk_sock_close(&x->sk);
	xsk_destroy(&x->dev);
	return err;
}
