/*
 * The AF_XDP receive side: RX and fill rings over a fixed set of UMEM
 * chunks taken from the backend region at creation (not installed).
 *
 * Each receive chunk is always held by the receive side (one hold in the
 * chunk accounting) and carries one in-flight reference while the kernel
 * owns it (posted to the fill ring, or written to the RX ring and not read
 * yet).  A frame handed to the caller is held with no reference, so it
 * counts as HELD; a spare chunk waiting for room in the fill ring too.
 * Invariant 7 therefore holds with receive traffic: after teardown and
 * the release of every frame, all chunks are free.
 */
#ifndef GSO_XDP_XSK_RX_INTERNAL_H
#define GSO_XDP_XSK_RX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "dev/dev_internal.h"
#include "xsk_internal.h"

/* Where a receive chunk is. */
enum { RXC_SPARE = 0, RXC_KERNEL, RXC_USER, RXC_GONE };

struct xsk_rx {
	uint32_t first;      /* first receive chunk (they are consecutive) */
	uint32_t n;          /* receive chunks; 0 = no receive side */
	uint8_t *where;      /* RXC_* per receive chunk */
	uint32_t *spare;     /* chunk indices (relative to first) waiting for the fill ring */
	uint32_t nspare;
	uint32_t nuser;      /* frames with the caller */
	uint32_t nkernel;    /* chunks the kernel owns */
	uint32_t empty;      /* empty receive calls since the last liveness probe */
	bool dropping;       /* inside a multi-buffer frame being recycled */
	bool zerocopy;       /* the fill ring may need a wake-up */
	uint64_t frames, bytes, multi_dropped, bad_descs;
	struct compat_xdp_statistics kfinal; /* kernel counters at close */
};

/*
 * Take `n` chunks of the backend region (right after gsoi_ua_init, so that
 * they are consecutive) for receiving.  Returns 0, -ENOBUFS (not enough
 * backend chunks), -ENOMEM, or -EIO (not consecutive: a bug).
 */
int gsoi_xsk_rx_init(struct xsk_rx *r, struct umem_alloc *ua, uint32_t n);

/* Post every spare chunk the fill ring has room for. */
void gsoi_xsk_rx_refill(struct xsk_rx *r, struct xsk_sock *s, struct dev_mem *m);

/*
 * Up to `n` frames from the RX ring into `out`, then refill.  Returns the
 * count (0 = none now), or -ENODEV when nothing is there and the socket
 * turned out to be unbound (interface gone; probed every few empty calls).
 */
int gsoi_xsk_rx_recv(struct xsk_rx *r, struct xsk_sock *s, struct dev_mem *m, struct gso_rx_pkt *out, unsigned n);

/*
 * Give frames back.  All are checked first: -EINVAL (a frame not handed
 * out, or twice in the list) releases none.  With `s` NULL (device closed)
 * their chunks go back to the free pool.  Returns n.
 */
int gsoi_xsk_rx_release(struct xsk_rx *r, struct xsk_sock *s, struct dev_mem *m, const struct gso_rx_pkt *p,
			unsigned n);

/* Wait for frames: 0 (there are some), -ETIMEDOUT, -ENODEV, -ENETDOWN, or another -errno of poll. */
int gsoi_xsk_rx_wait(struct xsk_rx *r, struct xsk_sock *s, int timeout_ms);

/* Is the socket still bound?  0, -ENODEV (unbound: the interface went away), -ENETDOWN. */
int gsoi_xsk_rx_probe(const struct xsk_sock *s);

/*
 * After the socket is closed and every in-flight reference reclaimed:
 * chunks not with the caller go back to the free pool.  `s` is the socket
 * before closing, for the final kernel counters (fd < 0: none).
 */
void gsoi_xsk_rx_save_stats(struct xsk_rx *r, const struct xsk_sock *s);
void gsoi_xsk_rx_close(struct xsk_rx *r, struct umem_alloc *ua);

/* Counters into st (the rx_* fields). */
void gsoi_xsk_rx_stats(const struct xsk_rx *r, const struct xsk_sock *s, struct gso_dev_stats *st);

/* Free the tables.  Idempotent. */
void gsoi_xsk_rx_fini(struct xsk_rx *r);

#endif
