/*
 * quic_io.h over a plain kernel UDP socket: recvmmsg in batches, one
 * sendmsg with UDP_SEGMENT per super-segment.  The reference row of
 * gsoquicd's comparisons (--mode kernel).
 *
 * A send the socket refuses for now (EAGAIN: its buffer is full) waits in
 * a queue and goes when poll says the socket is writable; so the caller's
 * memory is free only after the send, and on_sent comes from qio_run(),
 * never from inside qio_send (the same contract as libgso's).  Departure
 * times (at_ns) are not honoured: ngtcp2's own timer is the only pacer
 * here; on_sent reports when sendmsg returned.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "quic_io.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

#define RX_BATCH 64
#define RX_BUF 2048      /* larger than any datagram this server accepts (max_udp_payload_size) */
#define QCAP 8192u       /* sends waiting and completions not yet reported */

struct ksend {
	struct sockaddr_storage to;
	socklen_t to_len;
	const void *buf;
	uint32_t len, gso_size;
	uint64_t cookie;
};

struct kdone {
	uint64_t cookie, time_ns;
	int err;
};

struct qio_path {
	struct sockaddr_storage remote;
	socklen_t remote_len;
};

struct qio_k {
	struct qio base;
	int fd;
	atomic_bool stop;
	struct sockaddr_storage local;
	socklen_t local_len;
	struct ksend *pend;      /* a ring: sends waiting for the socket */
	uint32_t pend_head, pend_n;
	struct kdone *done;      /* a ring: completions to report */
	uint32_t done_head, done_n;
	struct mmsghdr msgs[RX_BATCH];
	struct iovec iov[RX_BATCH];
	struct sockaddr_storage from[RX_BATCH];
	uint8_t *rxbuf;
	struct qio_report rep;
};

static struct qio_k *K(struct qio *q)
{
	return (struct qio_k *)q;
}

static int k_path_open(struct qio *q, const struct qio_peer *peer, struct qio_path **out)
{
	struct qio_path *p = calloc(1, sizeof(*p));

	(void)q;
	if (!p)
		return -ENOMEM;
	memcpy(&p->remote, &peer->remote, sizeof(p->remote));
	p->remote_len = peer->remote_len;
	*out = p;
	return 0;
}

/* Sends still waiting keep their own copy of the address and go all the same. */
static void k_path_close(struct qio *q, struct qio_path *p)
{
	(void)q;
	free(p);
}

static void complete(struct qio_k *k, uint64_t cookie, int err)
{
	struct kdone *d = &k->done[(k->done_head + k->done_n++) % QCAP];

	*d = (struct kdone){ .cookie = cookie, .err = err, .time_ns = qio_now_ns() };
}

/* 0 sent (or failed for good: completed with the error), -EAGAIN the socket is full. */
static int send_one(struct qio_k *k, const struct ksend *s)
{
	char ctrl[CMSG_SPACE(sizeof(uint16_t))] = { 0 };
	struct iovec iov = { .iov_base = (void *)s->buf, .iov_len = s->len };
	struct msghdr mh = { .msg_name = (void *)&s->to, .msg_namelen = s->to_len, .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (s->len > s->gso_size) {
		struct cmsghdr *cm;
		uint16_t gs = (uint16_t)s->gso_size;

		mh.msg_control = ctrl;
		mh.msg_controllen = sizeof(ctrl);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_UDP;
		cm->cmsg_type = UDP_SEGMENT;
		cm->cmsg_len = CMSG_LEN(sizeof(gs));
		memcpy(CMSG_DATA(cm), &gs, sizeof(gs));
	}
	do
		n = sendmsg(k->fd, &mh, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS))
		return -EAGAIN;
	k->rep.tx_calls++;
	if (n < 0) {
		k->rep.tx_errors++;
		complete(k, s->cookie, -errno);
		return 0;
	}
	k->rep.tx_supers++;
	k->rep.tx_datagrams += s->gso_size ? (s->len + s->gso_size - 1) / s->gso_size : 1;
	k->rep.tx_bytes += s->len;
	complete(k, s->cookie, 0);
	return 0;
}

static void flush(struct qio_k *k)
{
	while (k->pend_n && send_one(k, &k->pend[k->pend_head]) == 0) {
		k->pend_head = (k->pend_head + 1) % QCAP;
		k->pend_n--;
	}
}

static int k_send(struct qio *q, struct qio_path *p, const void *buf, uint32_t len, uint32_t gso_size,
		  uint64_t at_ns, uint64_t cookie)
{
	struct qio_k *k = K(q);
	struct ksend s = { .to_len = p->remote_len, .buf = buf, .len = len, .gso_size = gso_size ? gso_size : len,
			   .cookie = cookie };

	(void)at_ns;
	if (k->pend_n + k->done_n + 1 >= QCAP)
		return -EAGAIN;
	memcpy(&s.to, &p->remote, sizeof(s.to));
	/* In order: nothing overtakes a send that waits. */
	if (!k->pend_n && send_one(k, &s) == 0)
		return 0;
	k->rep.tx_blocked++;
	k->pend[(k->pend_head + k->pend_n++) % QCAP] = s;
	return 0;
}

static int k_set_rate(struct qio *q, struct qio_path *p, uint64_t rate)
{
	(void)q, (void)p, (void)rate;
	return 0;
}

static int k_send_once(struct qio *q, const struct qio_peer *peer, const void *buf, uint32_t len)
{
	struct qio_k *k = K(q);

	if (sendto(k->fd, buf, len, MSG_DONTWAIT, (const struct sockaddr *)&peer->remote, peer->remote_len) < 0) {
		k->rep.once_dropped++;
		return -errno;
	}
	k->rep.once_sent++;
	return 0;
}

static void receive(struct qio_k *k)
{
	struct qio_peer peer;
	int n;

	do {
		for (int i = 0; i < RX_BATCH; i++) {
			k->iov[i] = (struct iovec){ .iov_base = k->rxbuf + (size_t)i * RX_BUF, .iov_len = RX_BUF };
			k->msgs[i].msg_hdr = (struct msghdr){ .msg_name = &k->from[i], .msg_namelen = sizeof(k->from[i]),
							      .msg_iov = &k->iov[i], .msg_iovlen = 1 };
		}
		n = recvmmsg(k->fd, k->msgs, RX_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			return;
		k->rep.rx_passes++;
		for (int i = 0; i < n; i++) {
			struct qio_rx rx = { .data = k->iov[i].iov_base, .len = k->msgs[i].msg_len, .peer = &peer,
					     .local = (struct sockaddr *)&k->local, .local_len = k->local_len };

			if (k->msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
				k->rep.rx_truncated++;
				continue;
			}
			memset(&peer, 0, sizeof(peer));
			memcpy(&peer.remote, &k->from[i], sizeof(peer.remote));
			peer.remote_len = k->msgs[i].msg_hdr.msg_namelen;
			rx.rx_ns = qio_now_ns();
			k->rep.rx_datagrams++;
			k->rep.rx_bytes += rx.len;
			k->base.cfg.cb.on_recv(k->base.cfg.ctx, &rx);
		}
		if (k->base.cfg.cb.on_recv_done)
			k->base.cfg.cb.on_recv_done(k->base.cfg.ctx);
	} while (n == RX_BATCH);
}

static void report_done(struct qio_k *k)
{
	while (k->done_n) {
		struct kdone d = k->done[k->done_head];

		k->done_head = (k->done_head + 1) % QCAP;
		k->done_n--;
		k->base.cfg.cb.on_sent(k->base.cfg.ctx, d.cookie, d.err, d.time_ns);
	}
}

static int k_run(struct qio *q, uint64_t until_ns)
{
	struct qio_k *k = K(q);

	for (;;) {
		struct pollfd pfd = { .fd = k->fd, .events = POLLIN };
		struct timespec ts;
		uint64_t now, wait;
		int r;

		flush(k);
		report_done(k);
		if (atomic_exchange(&k->stop, false))
			return 0;
		now = qio_now_ns();
		if (now >= until_ns)
			return 0;
		if (k->pend_n)
			pfd.events |= POLLOUT;
		wait = until_ns - now;
		ts.tv_sec = (time_t)(wait / 1000000000ull);
		ts.tv_nsec = (long)(wait % 1000000000ull);
		r = ppoll(&pfd, 1, &ts, NULL);
		if (r < 0 && errno == EINTR)
			return 0; /* a signal: the caller looks at its flags */
		if (r < 0)
			return -errno;
		if (r > 0 && (pfd.revents & POLLIN))
			receive(k);
	}
}

/* Async-signal-safe: a signal also interrupts ppoll. */
static void k_stop(struct qio *q)
{
	atomic_store(&K(q)->stop, true);
}

static void k_close(struct qio *q, struct qio_report *rep)
{
	struct qio_k *k = K(q);

	/* Whatever still waits is dropped: the memory is the caller's again. */
	while (k->pend_n) {
		complete(k, k->pend[k->pend_head].cookie, -ECANCELED);
		k->pend_head = (k->pend_head + 1) % QCAP;
		k->pend_n--;
	}
	report_done(k);
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
	k->rep.path = "kernel";
	k->rep.reason = "a kernel UDP socket: recvmmsg, sendmsg with UDP_SEGMENT";
	k->rep.balanced = true;
	*rep = k->rep;
}

static void k_destroy(struct qio *q)
{
	struct qio_k *k = K(q);

	if (k->fd >= 0)
		close(k->fd);
	free(k->pend);
	free(k->done);
	free(k->rxbuf);
	free(k);
}

static const struct qio_ops k_ops = {
	.path_open = k_path_open, .path_close = k_path_close, .send = k_send, .set_rate = k_set_rate,
	.send_once = k_send_once, .run = k_run, .stop = k_stop, .close = k_close, .destroy = k_destroy,
};

int qio_kernel_open(struct qio **out, const struct qio_cfg *cfg, char *errbuf, size_t errlen)
{
	struct qio_k *k = calloc(1, sizeof(*k));
	int one = 1, err, sz = 4 << 20;

	if (!k)
		return -ENOMEM;
	k->base.ops = &k_ops;
	k->base.cfg = *cfg;
	k->pend = calloc(QCAP, sizeof(*k->pend));
	k->done = calloc(QCAP, sizeof(*k->done));
	k->rxbuf = malloc((size_t)RX_BATCH * RX_BUF);
	k->fd = socket(cfg->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (!k->pend || !k->done || !k->rxbuf || k->fd < 0) {
		err = k->fd < 0 ? -errno : -ENOMEM;
		snprintf(errbuf, errlen, "UDP socket");
		k_destroy(&k->base);
		return err;
	}
	setsockopt(k->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* Room for a few batches of 64 KiB each way (capped by net.core.[rw]mem_max). */
	setsockopt(k->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(k->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (cfg->family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&k->local;

		setsockopt(k->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(cfg->port);
		memcpy(&a->sin6_addr, cfg->addr, 16);
		k->local_len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&k->local;

		a->sin_family = AF_INET;
		a->sin_port = htons(cfg->port);
		memcpy(&a->sin_addr, cfg->addr, 4);
		k->local_len = sizeof(*a);
	}
	if (bind(k->fd, (struct sockaddr *)&k->local, k->local_len)) {
		err = -errno;
		snprintf(errbuf, errlen, "bind");
		k_destroy(&k->base);
		return err;
	}
	*out = &k->base;
	return 0;
}
