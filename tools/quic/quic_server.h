/*
 * gsoquicd's HTTP/3 server: QUIC connections (ngtcp2), HTTP/3 on them
 * (nghttp3), over the datagram I/O of quic_io.h.  quic_conn.c runs the
 * connections (accept, receive, timers), quic_send.c their sending
 * (super-segments, pacing, closing),
 * quic_h3.c the requests, quic_hist.c the departure-error histogram;
 * tools/gsoquicd.c the options, the loop and the report.  Not part of
 * libgso.
 */
#ifndef GSO_TOOL_QUIC_SERVER_H
#define GSO_TOOL_QUIC_SERVER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <gnutls/gnutls.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include "cid_map.h"
#include "quic_io.h"
#include "quic_tls.h"
#include "timer_heap.h"

#define SCID_LEN 18           /* the CIDs this server issues */
#define MAX_PATHS 4           /* paths remembered per connection (migration, NAT rebinding) */
#define SBUF_LEN 65536        /* one send buffer: one super-segment */
#define BATCH_MAX 65000u      /* payload of one super-segment: within an IP datagram (UDP_SEGMENT's limit) */
#define BATCH_SEGS 128u       /* UDP_SEGMENT's most segments */
#define PKT_MAX 1500u         /* a QUIC packet written here (max_tx_udp_payload_size is below) */
#define RESET_SECRET_LEN 32

enum pacing { PACE_EDT, PACE_RATE };

struct srv_opts {
	uint32_t max_conns;
	uint32_t conn_bufs;      /* send buffers a connection may hold at once */
	uint32_t max_bufs;       /* send buffers in all */
	uint64_t idle_ns;
	uint64_t write_delay_ns; /* after a receive pass, wait this long before writing (0: at once) */
	int cc;                  /* ngtcp2_cc_algo */
	enum pacing pacing;
	bool edt_io;             /* the I/O honours departure times (libgso): --pacing edt stamps writes with them */
	int family;
	bool verbose;
};

/* The departure error |sent - scheduled| of super-segments, in ns. */
#define HIST_SUB 8
#define HIST_BUCKETS (64 * HIST_SUB)
struct hist {
	uint64_t n, sum, max;
	uint64_t b[HIST_BUCKETS];
};
void hist_add(struct hist *h, uint64_t v);
/* The q-quantile (0..1), the lower bound of its bucket. */
uint64_t hist_quantile(const struct hist *h, double q);

struct srv_counters {
	uint64_t accepted, closed, timed_out, handshake_timeouts, errors, draining, refused, closed_at_exit;
	uint64_t requests, st200, st400, st403, st404, st405, st414, st500, responses_aborted;
	uint64_t bytes_served;   /* bodies of 200s whose every byte and FIN went out (once; not necessarily acknowledged) */
	uint64_t bytes_acked;    /* body bytes the clients acknowledged (a client that closes at once leaves the last unacknowledged) */
	uint64_t rx_datagrams, rx_bytes, rx_garbage, rx_unknown, rx_closing, stateless_resets, version_negotiations;
	uint64_t tx_supers, tx_datagrams, tx_bytes, tx_send_calls, tx_errors, tx_dropped, buf_waits, close_resends;
	uint64_t path_opens, path_evictions, path_validations, no_path_drops, max_conns_seen;
	/* why batches ended: the send quantum (or 64 KiB, 128 packets), a shorter packet, nothing more to send, a packet of another path or a larger size */
	uint64_t end_quantum, end_short, end_empty, end_spill;
	uint64_t loop_stops;     /* a callback made a timer earlier than the loop's deadline */
	uint64_t recv_done, dirty_after_run; /* receive passes ended; connections still to write when the I/O returned */
};

struct server;
struct conn;

struct path {
	bool used;
	struct qio_peer peer;
	struct qio_path *io;     /* opened when something is first sent on it */
	uint64_t last_ns;
	uint64_t rate;           /* --pacing rate: the rate last set */
};

struct stream {
	struct stream *prev, *next;
	struct conn *c;
	int64_t id;
	unsigned status;
	bool head_done, responded, bad_path;
	char method[16];
	size_t method_len;
	char path[PATH_MAX];
	size_t path_len;
	uint8_t *map;            /* the file, mapped */
	size_t map_len;
	uint64_t acked;          /* body bytes the client acknowledged */
	bool fin_sent;           /* the last body byte and the FIN went out */
	char code[4];
	char clen[24];
};

enum conn_state { C_LIVE, C_CLOSING, C_DRAINING };

struct conn {
	struct server *s;
	uint32_t slot, gen;
	enum conn_state st;
	ngtcp2_conn *q;
	nghttp3_conn *h3;
	gnutls_session_t tls;
	ngtcp2_crypto_conn_ref ref;
	ngtcp2_connection_close_error ccerr;
	ngtcp2_cid scid, odcid;
	struct path paths[MAX_PATHS];
	struct stream *streams;
	uint32_t bufs_busy;
	bool blocked;            /* no send buffer: write again when one comes back */
	bool dirty;              /* on the server's list of connections to write */
	struct conn *dirty_next;
	uint64_t expiry;         /* when its timer runs (ngtcp2_conn_get_expiry, or the closing deadline) */
	struct tnode tn;         /* its place in the server's timer heap, keyed by expiry */
	struct conn *due_next;   /* server_timers' list of the connections whose timer ran */
	uint64_t write_at;       /* --write-delay: write then (0: no write waits) */
	uint64_t pace_ts;        /* ngtcp2's schedule: when the next batch is due */
	uint64_t last_ts;        /* --pacing edt: the last time given to ngtcp2 for a write */
	/* A packet ngtcp2 wrote that did not fit the batch (another path or size): the next batch's first. */
	uint8_t spill[PKT_MAX];
	uint32_t spill_len;
	struct sockaddr_storage spill_to;
	/* closing: the CONNECTION_CLOSE packet, sent again on the peer's packets */
	uint8_t close_pkt[PKT_MAX];
	uint32_t close_len;
	uint64_t close_rx;
	uint64_t close_deadline;
	bool handshake_done;
};

struct sbuf {
	uint8_t *mem;            /* SBUF_LEN, allocated on first use */
	uint32_t owner_slot, owner_gen;
	uint64_t sched;          /* ngtcp2's schedule for it */
	int32_t next_free;
	bool busy;
};

struct server {
	struct srv_opts o;
	struct qio *io;
	struct quic_tls tls;
	int root_fd;
	struct cid_map cids;
	struct conn **slots;     /* max_conns, NULL: free */
	uint32_t nconns;
	struct theap timers;     /* the connections by expiry */
	uint32_t gen;
	struct sbuf *bufs;
	int32_t free_buf;
	uint32_t bufs_alloc, bufs_busy;
	struct conn *dirty;
	bool writing;            /* inside flush_dirty: a nested call only queues */
	bool in_run;             /* inside qio_run: an earlier timer must stop it */
	uint64_t run_until;
	bool stopping;
	uint8_t reset_secret[RESET_SECRET_LEN];
	uint64_t reset_window_ns;
	uint32_t reset_count;
	struct srv_counters c;
	struct hist dep;         /* departure error |sent - scheduled|, ns */
	struct hist late;        /* lateness max(0, sent - scheduled), ns */
	ngtcp2_conn_stat last_stat; /* of the connection freed last (for --json) */
	bool have_last_stat;
	uint64_t early_max;      /* most a super-segment left before its schedule (kernel: ngtcp2's 1 ms lead) */
};

/* quic_conn.c */
int server_init(struct server *s, const struct srv_opts *o, char *errbuf, size_t errlen);
/* The qio callbacks (cfg.ctx = the server). */
void server_on_recv(void *ctx, const struct qio_rx *rx);
void server_on_recv_done(void *ctx);
void server_on_sent(void *ctx, uint64_t cookie, int err, uint64_t time_ns);
/* The earliest timer of all connections (UINT64_MAX: none): the heap's top. */
uint64_t server_next_expiry(struct server *s);
/* Run the timers that are due, and write. */
void server_timers(struct server *s, uint64_t now);
/* Close every connection (CONNECTION_CLOSE, H3_NO_ERROR); true once none holds a send buffer. */
void server_shutdown(struct server *s);
bool server_quiet(const struct server *s);
/* Free every connection (their reply flows close: what they still had queued is dropped). */
void server_drop_conns(struct server *s);
/* Free every connection and buffer (after the I/O was closed: no send may be under way). */
void server_free(struct server *s);

/* quic_send.c, for quic_conn.c and quic_h3.c */
/* c's timer moved (or may have): its place in the heap, and stop the loop if it is now earlier. */
void conn_timer_moved(struct conn *c);
/* Write c at the next server_flush_dirty (after the receive pass). */
void conn_mark_dirty(struct conn *c);
void server_flush_dirty(struct server *s);
/* The path a datagram came on, remembered (its newest message); the least recently used one evicted. */
struct path *conn_path_note(struct conn *c, const struct qio_rx *rx);
/* Enter the closing period with c->ccerr: CONNECTION_CLOSE written, sent, kept. */
void conn_start_closing(struct conn *c);
void conn_close_liberr(struct conn *c, int liberr);
void conn_close_app(struct conn *c, uint64_t app_error);
/* Send the kept CONNECTION_CLOSE again, to `to`. */
void conn_close_resend(struct conn *c, const struct sockaddr *to);

/* quic_h3.c */
int h3_setup(struct conn *c);
void h3_free_streams(struct conn *c);
/* ngtcp2 took the last of stream sid's data and its FIN: its response is served. */
void h3_fin_sent(struct conn *c, int64_t sid);

#endif
