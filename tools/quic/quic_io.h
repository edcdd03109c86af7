/*
 * The datagram I/O under gsoquicd: one small interface, two backends.
 *
 *   libgso  (quic_io_gso.c)    a libgso engine on --ifname: a datagram
 *           listener (<gso/engine.h>, "Datagram receive") takes the
 *           port's datagrams, and each (connection, path) sends through a
 *           datagram flow of its own (gso_dgram__open_reply), one
 *           super-segment per gso_dgram__send / __send_at.
 *   kernel  (quic_io_kernel.c) a plain UDP socket: recvmmsg, sendmsg with
 *           UDP_SEGMENT.  The reference row.
 *
 * The contract is libgso's, so that the server is written once: a send
 * hands over caller memory, which stays the caller's concern until
 * on_sent() for its cookie (both backends call it later, never from inside
 * qio_send); datagrams are handed to on_recv() one by one and are valid
 * only during that call; on_recv_done() follows each receive pass, so the
 * replies to a batch can be written in one go.  Every callback runs inside
 * qio_run() on the caller's thread.  Not part of libgso.
 */
#ifndef GSO_TOOL_QUIC_IO_H
#define GSO_TOOL_QUIC_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

enum qio_backend { QIO_GSO, QIO_KERNEL };

/*
 * Where a datagram came from, kept by the server per path so that a reply
 * flow can be opened later (after on_recv returned): the remote address,
 * and the backend's own record of the frame (libgso: the gso_dgram_msg,
 * whose Ethernet source is where replies go).
 */
struct qio_peer {
	struct sockaddr_storage remote;
	socklen_t remote_len;
	_Alignas(8) unsigned char be[192];
};

struct qio_rx {
	const uint8_t *data;     /* valid during on_recv only */
	size_t len;
	uint8_t ecn;             /* the two ECN bits of TOS / traffic class */
	uint64_t rx_ns;          /* CLOCK_MONOTONIC when read */
	const struct qio_peer *peer;
	const struct sockaddr *local;
	socklen_t local_len;
};

struct qio_callbacks {
	void (*on_recv)(void *ctx, const struct qio_rx *rx);
	void (*on_recv_done)(void *ctx);
	/* err 0: the datagrams left at time_ns (CLOCK_MONOTONIC); else -errno, they were dropped. */
	void (*on_sent)(void *ctx, uint64_t cookie, int err, uint64_t time_ns);
};

struct qio_cfg {
	enum qio_backend backend;
	int ifindex;             /* libgso: the interface */
	uint32_t gso_path;       /* libgso: enum gso_path */
	int family;              /* AF_INET or AF_INET6 */
	uint8_t addr[16];        /* local address, network order */
	uint16_t port;
	uint32_t max_flows;      /* libgso: reply flows open at once */
	uint32_t flow_queue;     /* libgso: super-segments queued per flow */
	struct qio_callbacks cb;
	void *ctx;
};

/* Counters of the backend, for --json. */
struct qio_report {
	const char *path, *reason;  /* libgso: the transmit path and why; kernel: "kernel" */
	uint64_t rx_datagrams, rx_bytes, rx_passes, rx_bad_csum, rx_bad_len, rx_csum_partial, rx_truncated;
	uint64_t tx_calls, tx_supers, tx_datagrams, tx_bytes, tx_errors, tx_blocked, once_sent, once_dropped;
	/* libgso: rx_* above are the datagram listener's (gso_dgram_listener__info) */
	bool have_listener;
	/* libgso engine */
	bool have_engine;
	uint64_t e_polls, e_waits, e_submits, e_supers, e_frames, e_backpressure, e_kicks, e_rx_frames,
		e_rx_other, e_late_ns_max, e_behind_events, e_lost_ns, e_link_down, e_link_up;
	uint64_t chunks_total, chunks_free;
	bool balanced;           /* every device buffer back (kernel: true) */
	bool dev_gone;
};

struct qio;
struct qio_path;

/* 0 and *out, or -errno (with a message in errbuf). */
int qio_open(struct qio **out, const struct qio_cfg *cfg, char *errbuf, size_t errlen);

/* A reply flow to peer (one per connection and path).  0 and *out, or -errno. */
int qio_path_open(struct qio *q, const struct qio_peer *peer, struct qio_path **out);

/*
 * Close it.  Sends still queued are dropped: their on_sent (err
 * -ECANCELED) may come during this call.
 */
void qio_path_close(struct qio *q, struct qio_path *p);

/*
 * Send `len` bytes at buf cut into datagrams of gso_size (the last may be
 * shorter): one super-segment.  at_ns 0: at the path's rate (or now);
 * otherwise not before at_ns (CLOCK_MONOTONIC).  buf stays untouched until
 * on_sent(cookie).  0, or -errno and nothing was queued (no on_sent).
 */
int qio_send(struct qio *q, struct qio_path *p, const void *buf, uint32_t len, uint32_t gso_size,
	     uint64_t at_ns, uint64_t cookie);

/* The path's pacing rate in wire bytes/s (0 unpaced); the kernel backend ignores it. */
int qio_set_rate(struct qio *q, struct qio_path *p, uint64_t rate);

/*
 * One datagram to peer, copied (stateless reset, version negotiation):
 * no flow of the caller's, no on_sent.  Bounded: -EAGAIN when too many
 * are under way.
 */
int qio_send_once(struct qio *q, const struct qio_peer *peer, const void *buf, uint32_t len);

/*
 * Receive and send until CLOCK_MONOTONIC reaches until_ns or qio_stop().
 * 0, or -ENODEV (the interface went away), or -errno.
 */
int qio_run(struct qio *q, uint64_t until_ns);

/* Make qio_run() return soon: from a callback, another thread or a signal handler. */
void qio_stop(struct qio *q);

/*
 * Stop receiving and sending, reclaim every buffer and fill rep (the
 * buffer balance after everything was reclaimed).  Then qio_destroy.
 */
void qio_close(struct qio *q, struct qio_report *rep);
void qio_destroy(struct qio *q);

/* Backend entry points (quic_io.c dispatches). */
struct qio_ops {
	int (*path_open)(struct qio *q, const struct qio_peer *peer, struct qio_path **out);
	void (*path_close)(struct qio *q, struct qio_path *p);
	int (*send)(struct qio *q, struct qio_path *p, const void *buf, uint32_t len, uint32_t gso_size,
		    uint64_t at_ns, uint64_t cookie);
	int (*set_rate)(struct qio *q, struct qio_path *p, uint64_t rate);
	int (*send_once)(struct qio *q, const struct qio_peer *peer, const void *buf, uint32_t len);
	int (*run)(struct qio *q, uint64_t until_ns);
	void (*stop)(struct qio *q);
	void (*close)(struct qio *q, struct qio_report *rep);
	void (*destroy)(struct qio *q);
};

/* Every backend's struct starts with this. */
struct qio {
	const struct qio_ops *ops;
	struct qio_cfg cfg;
};

int qio_kernel_open(struct qio **out, const struct qio_cfg *cfg, char *errbuf, size_t errlen);
int qio_gso_open(struct qio **out, const struct qio_cfg *cfg, char *errbuf, size_t errlen);

/* CLOCK_MONOTONIC in ns: the clock of the engine, of ngtcp2's timestamps and of at_ns. */
uint64_t qio_now_ns(void);

#endif
