/*
 * gsoquicd's QUIC connections: accepting them, feeding them the datagrams
 * that arrive, writing what they have to send as super-segments, their
 * timers, and their end (closing, draining, idle).
 *
 * Writing.  A connection writes when a datagram for it arrived (after the
 * receive pass: server_on_recv_done), when its timer runs, and when a send
 * buffer comes back while it waited for one.  Each write fills one send
 * buffer with packets of one path (ngtcp2_conn_writev_stream, one packet
 * after the other), all of the first packet's size but the last, at most
 * send quantum / 64 KiB / 128 packets, and hands it to the I/O as ONE
 * super-segment with gso_size = the first packet's size.  A packet that
 * does not fit (another path, a larger size) is kept and starts the next
 * batch.  The buffer is the I/O's until on_sent; a connection holds at
 * most conn_bufs of them, and waits (blocked) when it has no more.
 *
 * Pacing.  ngtcp2 0.12 paces by itself: after a batch,
 * ngtcp2_conn_update_pkt_tx_time() sets when the next may go
 * (bytes / pacing rate later), get_expiry() includes that time, and
 * writing more than NGTCP2_PKT_PACING_OVERHEAD (1 ms) before it gives no
 * packet.  We keep the same schedule (pace_ts) and give each batch its
 * time on it, `sched` = max(now, pace_ts), and pass sched to
 * update_pkt_tx_time so that ngtcp2's gate follows the schedule, not our
 * wake-ups.  --pacing edt hands sched to the I/O as the departure time
 * (gso_dgram__send_at): the batch is written up to 1 ms early and the
 * engine holds it until then; ngtcp2 is told the packets were written at
 * that time too (its RTT samples must not include our own hold).
 * What ngtcp2 writes while its gate is shut (ACKs, handshake, probes) is
 * not paced: sched = now.  --pacing rate sets the path's rate to
 * ngtcp2's pacing rate (in wire bytes/s) and sends at once; the engine's
 * pacer spaces the batches.  Either way on_sent's time against sched is
 * the departure error (struct hist).
 *
 * Timers: every connection's ngtcp2_conn_get_expiry (or its closing
 * deadline) is kept in c->expiry and a min-heap (timer_heap.h); the loop
 * runs until the earliest (server_next_expiry), and a callback
 * that makes a connection's timer earlier than the loop's deadline stops
 * the loop (qio_stop) so that it is recomputed.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <gnutls/crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include "quic_server.h"

/* The engine's slack (GSO_ENGINE_DEF_SLACK_NS): a send due within it may leave that much early. */
#define EDT_SLACK_NS 50000ull

static void conn_free(struct conn *c);
static void flush_dirty(struct server *s);

/* ---- small helpers --------------------------------------------------------------- */

static bool sa_eq(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port && !memcmp(&x->sin6_addr, &y->sin6_addr, 16);
	}
	if (a->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	return false;
}

static void rand_bytes(void *p, size_t n)
{
	if (gnutls_rnd(GNUTLS_RND_NONCE, p, n))
		memset(p, 0, n); /* never: GnuTLS's generator does not fail once initialised */
}

/* Expiry changed: if it comes before the loop's deadline, the loop must look again. */
static void timer_moved(struct conn *c)
{
	struct server *s = c->s;

	if (c->st == C_LIVE) {
		c->expiry = ngtcp2_conn_get_expiry(c->q);
		/* Without a send buffer it can write nothing: a buffer's return wakes it, a timer need not spin. */
		if (c->blocked) {
			uint64_t later = qio_now_ns() + 1000000;

			if (c->expiry < later)
				c->expiry = later;
		}
		if (c->write_at && c->write_at < c->expiry)
			c->expiry = c->write_at;
	} else {
		c->expiry = c->close_deadline;
	}
	theap_set(&s->timers, &c->tn, c->expiry);
	if (s->in_run && c->expiry < s->run_until) {
		s->run_until = c->expiry;
		s->c.loop_stops++;
		qio_stop(s->io);
	}
}

static void mark_dirty(struct conn *c)
{
	if (c->dirty)
		return;
	c->dirty = true;
	c->dirty_next = c->s->dirty;
	c->s->dirty = c;
}

/* ---- send buffers ------------------------------------------------------------------ */

static int buf_get(struct server *s)
{
	struct sbuf *b;
	int32_t i = s->free_buf;

	if (i >= 0) {
		s->free_buf = s->bufs[i].next_free;
	} else {
		if (s->bufs_alloc >= s->o.max_bufs)
			return -1;
		i = (int32_t)s->bufs_alloc;
		s->bufs[i].mem = malloc(SBUF_LEN);
		if (!s->bufs[i].mem)
			return -1;
		s->bufs_alloc++;
	}
	b = &s->bufs[i];
	b->busy = true;
	s->bufs_busy++;
	return i;
}

static void buf_put(struct server *s, int32_t i)
{
	s->bufs[i].busy = false;
	s->bufs[i].next_free = s->free_buf;
	s->free_buf = i;
	s->bufs_busy--;
}

/* ---- paths ------------------------------------------------------------------------- */

static struct path *path_find(struct conn *c, const struct sockaddr *remote)
{
	for (int i = 0; i < MAX_PATHS; i++)
		if (c->paths[i].used && sa_eq((const struct sockaddr *)&c->paths[i].peer.remote, remote))
			return &c->paths[i];
	return NULL;
}

/* The path a datagram came on: remembered (its newest message), the least recently used one evicted. */
static struct path *path_note(struct conn *c, const struct qio_rx *rx)
{
	struct path *p = path_find(c, (const struct sockaddr *)&rx->peer->remote), *old = NULL;

	if (!p) {
		for (int i = 0; i < MAX_PATHS && !p; i++)
			if (!c->paths[i].used)
				p = &c->paths[i];
		if (!p) {
			for (int i = 0; i < MAX_PATHS; i++)
				if (!old || c->paths[i].last_ns < old->last_ns)
					old = &c->paths[i];
			qio_path_close(c->s->io, old->io);
			c->s->c.path_evictions++;
			p = old;
		}
		*p = (struct path){ .used = true };
	}
	/* A new frame may carry another next hop (the Ethernet source): keep the latest. */
	if (p->io && memcmp(p->peer.be, rx->peer->be, sizeof(p->peer.be))) {
		qio_path_close(c->s->io, p->io);
		p->io = NULL;
	}
	p->peer = *rx->peer;
	p->last_ns = rx->rx_ns;
	return p;
}

static struct qio_path *path_io(struct conn *c, struct path *p)
{
	if (!p->io) {
		if (qio_path_open(c->s->io, &p->peer, &p->io))
			return NULL;
		p->rate = 0;
		c->s->c.path_opens++;
	}
	return p->io;
}

/* ---- sending ------------------------------------------------------------------------ */

/*
 * Hand buffer bi (len bytes, datagrams of gso_size) to the path: 0, or
 * -1 and the buffer is back (the packets count as lost; ngtcp2 resends).
 */
static int send_buf(struct conn *c, int32_t bi, const struct sockaddr *to, uint32_t len, uint32_t gso_size,
		    uint64_t sched)
{
	struct server *s = c->s;
	struct path *p = path_find(c, to);
	struct qio_path *io = p ? path_io(c, p) : NULL;
	struct sbuf *b = &s->bufs[bi];
	uint64_t at = 0;
	int err;

	if (!io) {
		s->c.no_path_drops++;
		buf_put(s, bi);
		return -1;
	}
	b->owner_slot = c->slot;
	b->owner_gen = c->gen;
	b->sched = sched;
	if (s->o.pacing == PACE_EDT) {
		at = sched ? sched : 1;
	} else if (c->st == C_LIVE) {
		ngtcp2_conn_stat cs;
		double bpns;
		uint64_t rate, hdr = (s->o.family == AF_INET6 ? 62 : 42);

		/* ngtcp2's rate is payload bytes per ns (0: cwnd / srtt * 1.25, as it paces); ours wire bytes/s. */
		ngtcp2_conn_get_conn_stat(c->q, &cs);
		bpns = cs.pacing_rate > 0 ? cs.pacing_rate
					  : (double)cs.cwnd / (double)(cs.smoothed_rtt ? cs.smoothed_rtt : 1) * 1.25;
		rate = (uint64_t)(bpns * 1e9 * (double)(gso_size + hdr) / (double)gso_size);
		if (rate && (rate > p->rate + p->rate / 64 || rate < p->rate - p->rate / 64)) {
			qio_set_rate(s->io, io, rate);
			p->rate = rate;
		}
	}
	err = qio_send(s->io, io, b->mem, len, gso_size, at, (uint64_t)bi);
	s->c.tx_send_calls++;
	if (err) {
		s->c.tx_errors++;
		buf_put(s, bi);
		return -1;
	}
	c->bufs_busy++;
	s->c.tx_supers++;
	s->c.tx_datagrams += (len + gso_size - 1) / gso_size;
	s->c.tx_bytes += len;
	return 0;
}

static void close_resend(struct conn *c, const struct sockaddr *to)
{
	int32_t bi;

	if (!c->close_len || c->bufs_busy >= c->s->o.conn_bufs || (bi = buf_get(c->s)) < 0)
		return;
	memcpy(c->s->bufs[bi].mem, c->close_pkt, c->close_len);
	if (!send_buf(c, bi, to, c->close_len, c->close_len, 0))
		c->s->c.close_resends++;
}

/* Enter the closing period: write CONNECTION_CLOSE (ccerr), send it, keep it. */
static void start_closing(struct conn *c)
{
	ngtcp2_path_storage ps;
	ngtcp2_pkt_info pi;
	ngtcp2_ssize n;
	uint64_t now = qio_now_ns();

	if (c->st != C_LIVE)
		return;
	ngtcp2_path_storage_zero(&ps);
	n = ngtcp2_conn_write_connection_close(c->q, &ps.path, &pi, c->close_pkt, sizeof(c->close_pkt), &c->ccerr,
					       now);
	c->st = C_CLOSING;
	c->close_deadline = now + 3 * ngtcp2_conn_get_pto(c->q);
	if (n > 0) {
		c->close_len = (uint32_t)n;
		close_resend(c, ps.path.remote.addr);
	}
	timer_moved(c);
}

void conn_close_app(struct conn *c, uint64_t app_error)
{
	ngtcp2_connection_close_error_set_application_error(&c->ccerr, app_error, NULL, 0);
	start_closing(c);
}

static void close_liberr(struct conn *c, int liberr)
{
	if (!c->ccerr.error_code)
		ngtcp2_connection_close_error_set_transport_error_liberr(&c->ccerr, liberr, NULL, 0);
	start_closing(c);
}

struct batch {
	uint32_t len, gso_size, npkts;
	struct sockaddr_storage to;
};

/*
 * ngtcp2 took ndata bytes of what nghttp3 gave for stream sid (vec, nv;
 * fin: they end the stream): tell nghttp3, and note a response whose
 * last byte and FIN went out.  0 or nghttp3's error.
 */
static int stream_written(struct conn *c, int64_t sid, ngtcp2_ssize ndata, int fin, const nghttp3_vec *vec,
			  nghttp3_ssize nv)
{
	size_t all = 0;
	int rv = nghttp3_conn_add_write_offset(c->h3, sid, (size_t)ndata);

	for (nghttp3_ssize i = 0; i < nv; i++)
		all += vec[i].len;
	if (!rv && fin && (size_t)ndata == all)
		h3_fin_sent(c, sid);
	return rv;
}

/*
 * Fill buf with packets for one path: see the opening comment.  0 and
 * b->len > 0, or 0 and b->len == 0 (nothing to send now), or -1: the
 * connection is closing (an error was met).
 */
static int write_batch(struct conn *c, uint8_t *buf, uint64_t ts, struct batch *b)
{
	size_t max_pkt = ngtcp2_conn_get_max_tx_udp_payload_size(c->q);
	size_t quantum = ngtcp2_conn_get_send_quantum(c->q);
	size_t max_pkts = quantum / max_pkt;
	ngtcp2_path_storage ps;

	if (max_pkt > PKT_MAX)
		max_pkt = PKT_MAX;
	if (max_pkts < 1)
		max_pkts = 1;
	if (max_pkts > BATCH_SEGS)
		max_pkts = BATCH_SEGS;
	memset(b, 0, sizeof(*b));
	ngtcp2_path_storage_zero(&ps);
	if (c->spill_len) {
		memcpy(buf, c->spill, c->spill_len);
		b->len = b->gso_size = c->spill_len;
		b->npkts = 1;
		memcpy(&b->to, &c->spill_to, sizeof(b->to));
		c->spill_len = 0;
	}
	for (;;) {
		nghttp3_vec vec[16];
		int64_t sid = -1;
		int fin = 0;
		nghttp3_ssize nv = 0;
		ngtcp2_ssize n, ndata = -1;
		ngtcp2_pkt_info pi;
		uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE;

		if (b->npkts >= max_pkts || b->len + max_pkt > BATCH_MAX) {
			c->s->c.end_quantum++;
			break;
		}

		if (c->h3 && ngtcp2_conn_get_max_data_left(c->q)) {
			nv = nghttp3_conn_writev_stream(c->h3, &sid, &fin, vec, sizeof(vec) / sizeof(vec[0]));
			if (nv < 0) {
				conn_close_app(c, nghttp3_err_infer_quic_app_error_code((int)nv));
				return -1;
			}
		}
		if (fin)
			flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
		/* nghttp3_vec and ngtcp2_vec are both { uint8_t *base; size_t len; } */
		n = ngtcp2_conn_writev_stream(c->q, &ps.path, &pi, buf + b->len, max_pkt, &ndata, flags, sid,
					      (const ngtcp2_vec *)(const void *)vec, (size_t)nv, ts);
		if (n < 0) {
			int rv = 0;

			switch (n) {
			case NGTCP2_ERR_STREAM_DATA_BLOCKED:
				nghttp3_conn_block_stream(c->h3, sid);
				continue;
			case NGTCP2_ERR_STREAM_SHUT_WR:
				nghttp3_conn_shutdown_stream_write(c->h3, sid);
				continue;
			case NGTCP2_ERR_WRITE_MORE:
				rv = stream_written(c, sid, ndata, fin, vec, nv);
				if (rv) {
					conn_close_app(c, nghttp3_err_infer_quic_app_error_code(rv));
					return -1;
				}
				continue;
			default:
				close_liberr(c, (int)n);
				return -1;
			}
		}
		if (ndata >= 0 && c->h3) {
			int rv = stream_written(c, sid, ndata, fin, vec, nv);

			if (rv) {
				conn_close_app(c, nghttp3_err_infer_quic_app_error_code(rv));
				return -1;
			}
		}
		if (n == 0) {
			c->s->c.end_empty++;
			break;
		}
		if (!b->npkts) {
			memcpy(&b->to, ps.path.remote.addr, ps.path.remote.addrlen);
			b->gso_size = (uint32_t)n;
		} else if (!sa_eq(ps.path.remote.addr, (const struct sockaddr *)&b->to) || (uint32_t)n > b->gso_size) {
			/* Not of this super-segment: it starts the next. */
			memcpy(c->spill, buf + b->len, (size_t)n);
			c->spill_len = (uint32_t)n;
			memset(&c->spill_to, 0, sizeof(c->spill_to));
			memcpy(&c->spill_to, ps.path.remote.addr, ps.path.remote.addrlen);
			c->s->c.end_spill++;
			break;
		}
		b->len += (uint32_t)n;
		b->npkts++;
		if ((uint32_t)n < b->gso_size) {
			c->s->c.end_short++;
			break; /* the last may be shorter */
		}
	}
	return 0;
}

/* The time a batch of `bytes` takes at ngtcp2's pacing rate (its own formula). */
static uint64_t pace_interval(struct conn *c, uint32_t bytes)
{
	ngtcp2_conn_stat cs;
	double rate;

	ngtcp2_conn_get_conn_stat(c->q, &cs);
	rate = cs.pacing_rate > 0 ? cs.pacing_rate
				  : (double)cs.cwnd / (double)(cs.smoothed_rtt ? cs.smoothed_rtt : 1) * 1.25;
	return rate > 0 ? (uint64_t)((double)bytes / rate) : 0;
}

/* Write until ngtcp2 has nothing more to send now, or no send buffer is left. */
static void conn_write(struct conn *c)
{
	struct server *s = c->s;

	c->write_at = 0;
	while (c->st == C_LIVE) {
		uint64_t now = qio_now_ns(), sched, ts = now;
		bool paced = c->pace_ts <= now + NGTCP2_MILLISECONDS;
		struct batch b;
		int32_t bi;

		if (c->bufs_busy >= s->o.conn_bufs || (bi = buf_get(s)) < 0) {
			if (!c->blocked)
				s->c.buf_waits++;
			c->blocked = true;
			break;
		}
		c->blocked = false;
		/*
		 * ngtcp2's gate is open (its next send time within 1 ms): this batch
		 * is due at the schedule's time.  Shut: what ngtcp2 does not pace
		 * (ACKs, handshake, probes) leaves now, and the schedule stays.
		 */
		sched = paced && c->pace_ts > now ? c->pace_ts : now;
		if (s->o.pacing == PACE_EDT && s->o.edt_io) {
			/*
			 * The packets leave at sched (the engine may send up to its slack
			 * early), not now: stamped with when they leave, ngtcp2's RTT
			 * samples do not count our own hold, which would lower the pacing
			 * rate that causes it.  Never later than they leave (an RTT
			 * sample below zero), never before an earlier packet's stamp
			 * (ngtcp2 wants them in packet-number order): the flow is FIFO.
			 */
			ts = sched > now + EDT_SLACK_NS ? sched - EDT_SLACK_NS : now;
			if (ts < c->last_ts)
				ts = c->last_ts;
			c->last_ts = ts;
		}
		if (write_batch(c, s->bufs[bi].mem, ts, &b) || !b.len) {
			buf_put(s, bi);
			break;
		}
		if (paced) {
			c->pace_ts = sched + pace_interval(c, b.len);
			/* ngtcp2's gate follows the schedule: the next batch is due bytes / rate after this one. */
			ngtcp2_conn_update_pkt_tx_time(c->q, sched);
		}
		send_buf(c, bi, (const struct sockaddr *)&b.to, b.len, b.gso_size, sched);
	}
	timer_moved(c);
}

static void flush_dirty(struct server *s)
{
	if (s->writing)
		return;
	s->writing = true;
	while (s->dirty) {
		struct conn *c = s->dirty;

		s->dirty = c->dirty_next;
		c->dirty = false;
		conn_write(c);
	}
	s->writing = false;
}

/* ---- ngtcp2 callbacks ------------------------------------------------------------------- */

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
	return ((struct conn *)ref->user_data)->q;
}

static void cb_rand(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
	(void)ctx;
	rand_bytes(dest, len);
}

static int cb_get_new_cid(ngtcp2_conn *q, ngtcp2_cid *cid, uint8_t *token, size_t cidlen, void *ud)
{
	struct conn *c = ud;

	(void)q;
	for (int tries = 0;; tries++) {
		if (gnutls_rnd(GNUTLS_RND_RANDOM, cid->data, cidlen))
			return NGTCP2_ERR_CALLBACK_FAILURE;
		cid->datalen = cidlen;
		if (!cid_map_get(&c->s->cids, cid->data, cid->datalen))
			break;
		if (tries > 8)
			return NGTCP2_ERR_CALLBACK_FAILURE;
	}
	if (ngtcp2_crypto_generate_stateless_reset_token(token, c->s->reset_secret, RESET_SECRET_LEN, cid) ||
	    cid_map_add(&c->s->cids, cid->data, cid->datalen, c))
		return NGTCP2_ERR_CALLBACK_FAILURE;
	return 0;
}

static int cb_remove_cid(ngtcp2_conn *q, const ngtcp2_cid *cid, void *ud)
{
	struct conn *c = ud;

	(void)q;
	if (cid_map_get(&c->s->cids, cid->data, cid->datalen) == c)
		cid_map_del(&c->s->cids, cid->data, cid->datalen);
	return 0;
}

static int cb_recv_stream_data(ngtcp2_conn *q, uint32_t flags, int64_t sid, uint64_t off, const uint8_t *data,
			       size_t len, void *ud, void *sud)
{
	struct conn *c = ud;
	nghttp3_ssize n;

	(void)off, (void)sud;
	if (!c->h3)
		return 0;
	n = nghttp3_conn_read_stream(c->h3, sid, data, len, flags & NGTCP2_STREAM_DATA_FLAG_FIN);
	if (n < 0) {
		ngtcp2_connection_close_error_set_application_error(
			&c->ccerr, nghttp3_err_infer_quic_app_error_code((int)n), NULL, 0);
		return NGTCP2_ERR_CALLBACK_FAILURE;
	}
	/* What nghttp3 took is consumed: the peer may send as much again. */
	ngtcp2_conn_extend_max_stream_offset(q, sid, (uint64_t)n);
	ngtcp2_conn_extend_max_offset(q, (uint64_t)n);
	return 0;
}

static int cb_acked_stream_data(ngtcp2_conn *q, int64_t sid, uint64_t off, uint64_t len, void *ud, void *sud)
{
	struct conn *c = ud;

	(void)q, (void)off, (void)sud;
	if (c->h3 && nghttp3_conn_add_ack_offset(c->h3, sid, len))
		return NGTCP2_ERR_CALLBACK_FAILURE;
	return 0;
}

static int cb_stream_close(ngtcp2_conn *q, uint32_t flags, int64_t sid, uint64_t app_error, void *ud, void *sud)
{
	struct conn *c = ud;
	int rv;

	(void)q, (void)sud;
	if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET))
		app_error = NGHTTP3_H3_NO_ERROR;
	if (!c->h3)
		return 0;
	rv = nghttp3_conn_close_stream(c->h3, sid, app_error);
	if (rv && rv != NGHTTP3_ERR_STREAM_NOT_FOUND) {
		ngtcp2_connection_close_error_set_application_error(&c->ccerr, nghttp3_err_infer_quic_app_error_code(rv),
								    NULL, 0);
		return NGTCP2_ERR_CALLBACK_FAILURE;
	}
	return 0;
}

static int cb_stream_reset(ngtcp2_conn *q, int64_t sid, uint64_t final_size, uint64_t app_error, void *ud,
			   void *sud)
{
	struct conn *c = ud;

	(void)q, (void)final_size, (void)app_error, (void)sud;
	if (c->h3 && nghttp3_conn_shutdown_stream_read(c->h3, sid))
		return NGTCP2_ERR_CALLBACK_FAILURE;
	return 0;
}

static int cb_stream_stop_sending(ngtcp2_conn *q, int64_t sid, uint64_t app_error, void *ud, void *sud)
{
	struct conn *c = ud;

	(void)q, (void)app_error, (void)sud;
	if (c->h3 && nghttp3_conn_shutdown_stream_read(c->h3, sid))
		return NGTCP2_ERR_CALLBACK_FAILURE;
	return 0;
}

static int cb_extend_max_remote_bidi(ngtcp2_conn *q, uint64_t max_streams, void *ud)
{
	struct conn *c = ud;

	(void)q;
	if (c->h3)
		nghttp3_conn_set_max_client_streams_bidi(c->h3, max_streams);
	return 0;
}

static int cb_extend_max_stream_data(ngtcp2_conn *q, int64_t sid, uint64_t max_data, void *ud, void *sud)
{
	struct conn *c = ud;

	(void)q, (void)max_data, (void)sud;
	if (c->h3 && nghttp3_conn_unblock_stream(c->h3, sid))
		return NGTCP2_ERR_CALLBACK_FAILURE;
	return 0;
}

/* The 1-RTT keys are there: HTTP/3 may open its control and QPACK streams (0.5-RTT). */
static int cb_recv_tx_key(ngtcp2_conn *q, ngtcp2_crypto_level level, void *ud)
{
	(void)q;
	if (level != NGTCP2_CRYPTO_LEVEL_APPLICATION)
		return 0;
	return h3_setup(ud) ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int cb_handshake_completed(ngtcp2_conn *q, void *ud)
{
	struct conn *c = ud;

	(void)q;
	c->handshake_done = true;
	return 0;
}

static int cb_path_validation(ngtcp2_conn *q, uint32_t flags, const ngtcp2_path *path,
			      ngtcp2_path_validation_result res, void *ud)
{
	struct conn *c = ud;

	(void)q, (void)flags, (void)path;
	if (res == NGTCP2_PATH_VALIDATION_RESULT_SUCCESS)
		c->s->c.path_validations++;
	return 0;
}

static void log_printf(void *ud, const char *fmt, ...)
{
	va_list ap;

	(void)ud;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const ngtcp2_callbacks callbacks = {
	.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb,
	.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
	.handshake_completed = cb_handshake_completed,
	.encrypt = ngtcp2_crypto_encrypt_cb,
	.decrypt = ngtcp2_crypto_decrypt_cb,
	.hp_mask = ngtcp2_crypto_hp_mask_cb,
	.recv_stream_data = cb_recv_stream_data,
	.acked_stream_data_offset = cb_acked_stream_data,
	.stream_close = cb_stream_close,
	.rand = cb_rand,
	.get_new_connection_id = cb_get_new_cid,
	.remove_connection_id = cb_remove_cid,
	.update_key = ngtcp2_crypto_update_key_cb,
	.path_validation = cb_path_validation,
	.stream_reset = cb_stream_reset,
	.extend_max_remote_streams_bidi = cb_extend_max_remote_bidi,
	.extend_max_stream_data = cb_extend_max_stream_data,
	.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,
	.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,
	.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,
	.stream_stop_sending = cb_stream_stop_sending,
	.version_negotiation = ngtcp2_crypto_version_negotiation_cb,
	.recv_tx_key = cb_recv_tx_key,
};

/* ---- connections ---------------------------------------------------------------------- */

static struct conn *conn_new(struct server *s, const struct qio_rx *rx, const ngtcp2_pkt_hd *hd)
{
	ngtcp2_path path = {
		.local = { .addr = (struct sockaddr *)rx->local, .addrlen = rx->local_len },
		.remote = { .addr = (struct sockaddr *)&rx->peer->remote, .addrlen = rx->peer->remote_len },
	};
	ngtcp2_settings st;
	ngtcp2_transport_params tp;
	struct conn *c;
	uint32_t slot;

	for (slot = 0; slot < s->o.max_conns && s->slots[slot]; slot++)
		;
	if (slot == s->o.max_conns) {
		s->c.refused++;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->s = s;
	c->slot = slot;
	c->gen = ++s->gen;
	tnode_init(&c->tn);
	c->ref = (ngtcp2_crypto_conn_ref){ .get_conn = get_conn, .user_data = c };
	ngtcp2_connection_close_error_default(&c->ccerr);
	c->scid.datalen = SCID_LEN;
	if (gnutls_rnd(GNUTLS_RND_RANDOM, c->scid.data, SCID_LEN))
		goto fail;
	c->odcid = hd->dcid;

	ngtcp2_settings_default(&st);
	st.initial_ts = qio_now_ns();
	st.cc_algo = (ngtcp2_cc_algo)s->o.cc;
	/* The path MTU of Ethernet (1500) less the IP and UDP headers: PMTUD probes up to this. */
	st.max_tx_udp_payload_size = s->o.family == AF_INET6 ? 1500 - 40 - 8 : 1500 - 20 - 8;
	st.handshake_timeout = 10 * NGTCP2_SECONDS;
	if (s->o.verbose)
		st.log_printf = log_printf;

	ngtcp2_transport_params_default(&tp);
	/* What the client may send us: requests, a little body; ngtcp2 extends them as we consume. */
	tp.initial_max_stream_data_bidi_local = 1 << 20;
	tp.initial_max_stream_data_bidi_remote = 1 << 20;
	tp.initial_max_stream_data_uni = 1 << 20;
	tp.initial_max_data = 16 << 20;
	tp.initial_max_streams_bidi = 100;
	tp.initial_max_streams_uni = 3;
	tp.max_idle_timeout = s->o.idle_ns;
	tp.max_udp_payload_size = 1500 - 20 - 8;  /* what we receive: our receive frames hold one MTU */
	tp.active_connection_id_limit = 7;
	tp.stateless_reset_token_present = 1;
	tp.original_dcid = hd->dcid;
	if (ngtcp2_crypto_generate_stateless_reset_token(tp.stateless_reset_token, s->reset_secret, RESET_SECRET_LEN,
							 &c->scid))
		goto fail;
	if (ngtcp2_conn_server_new(&c->q, &hd->scid, &c->scid, &path, hd->version, &callbacks, &st, &tp, NULL, c))
		goto fail;
	if (quic_tls_session(&s->tls, &c->ref, &c->tls)) {
		ngtcp2_conn_del(c->q);
		goto fail;
	}
	ngtcp2_conn_set_tls_native_handle(c->q, c->tls);
	if (cid_map_add(&s->cids, c->scid.data, c->scid.datalen, c) ||
	    cid_map_add(&s->cids, hd->dcid.data, hd->dcid.datalen, c)) {
		cid_map_del(&s->cids, c->scid.data, c->scid.datalen);
		gnutls_deinit(c->tls);
		ngtcp2_conn_del(c->q);
		goto fail;
	}
	s->slots[slot] = c;
	s->nconns++;
	timer_moved(c);
	if (s->nconns > s->c.max_conns_seen)
		s->c.max_conns_seen = s->nconns;
	s->c.accepted++;
	return c;
fail:
	free(c);
	return NULL;
}

/* Gone: its CIDs, its paths (sends still queued are dropped), its streams, its state. */
static void conn_free(struct conn *c)
{
	struct server *s = c->s;
	ngtcp2_cid cids[16];
	size_t n;

	s->slots[c->slot] = NULL; /* first: on_sent for its buffers, also during the closes below, sees no owner */
	s->nconns--;
	theap_del(&s->timers, &c->tn);
	if (c->dirty) {
		for (struct conn **p = &s->dirty; *p; p = &(*p)->dirty_next)
			if (*p == c) {
				*p = c->dirty_next;
				break;
			}
	}
	if (c->q) {
		ngtcp2_conn_get_conn_stat(c->q, &s->last_stat);
		s->have_last_stat = true;
		n = ngtcp2_conn_get_num_scid(c->q);
		if (n <= sizeof(cids) / sizeof(cids[0])) {
			ngtcp2_conn_get_scid(c->q, cids);
			for (size_t i = 0; i < n; i++)
				if (cid_map_get(&s->cids, cids[i].data, cids[i].datalen) == c)
					cid_map_del(&s->cids, cids[i].data, cids[i].datalen);
		}
	}
	if (cid_map_get(&s->cids, c->scid.data, c->scid.datalen) == c)
		cid_map_del(&s->cids, c->scid.data, c->scid.datalen);
	if (cid_map_get(&s->cids, c->odcid.data, c->odcid.datalen) == c)
		cid_map_del(&s->cids, c->odcid.data, c->odcid.datalen);
	for (int i = 0; i < MAX_PATHS; i++)
		if (c->paths[i].used)
			qio_path_close(s->io, c->paths[i].io);
	h3_free_streams(c);
	if (c->h3)
		nghttp3_conn_del(c->h3);
	if (c->q)
		ngtcp2_conn_del(c->q);
	if (c->tls)
		gnutls_deinit(c->tls);
	free(c);
}

/* ---- receiving ----------------------------------------------------------------------------- */

static void send_stateless_reset(struct server *s, const struct qio_rx *rx, const uint8_t *dcid, size_t dcidlen)
{
	uint8_t buf[64], rnd[64], token[NGTCP2_STATELESS_RESET_TOKENLEN];
	ngtcp2_cid cid;
	ngtcp2_ssize n;
	size_t rlen;
	uint64_t now = rx->rx_ns;

	/* Smaller than what triggered it (no reset loops), and at most 1000 a second. */
	if (rx->len <= 43 || dcidlen != SCID_LEN)
		return;
	if (now - s->reset_window_ns > 1000000000ull) {
		s->reset_window_ns = now;
		s->reset_count = 0;
	}
	if (++s->reset_count > 1000)
		return;
	rlen = rx->len - 1 - 1 - NGTCP2_STATELESS_RESET_TOKENLEN;
	if (rlen > 40)
		rlen = 40;
	ngtcp2_cid_init(&cid, dcid, dcidlen);
	if (ngtcp2_crypto_generate_stateless_reset_token(token, s->reset_secret, RESET_SECRET_LEN, &cid))
		return;
	rand_bytes(rnd, rlen);
	n = ngtcp2_pkt_write_stateless_reset(buf, sizeof(buf), token, rnd, rlen);
	if (n > 0 && !qio_send_once(s->io, rx->peer, buf, (uint32_t)n))
		s->c.stateless_resets++;
}

static void send_version_negotiation(struct server *s, const struct qio_rx *rx, const ngtcp2_version_cid *vc)
{
	static const uint32_t sv[] = { NGTCP2_PROTO_VER_V1, NGTCP2_PROTO_VER_V2_DRAFT };
	uint8_t buf[256], r;
	ngtcp2_ssize n;

	/* Only to what could be a client's first flight (RFC 9000 6.1: at least 1200 bytes). */
	if (rx->len < 1200)
		return;
	rand_bytes(&r, 1);
	n = ngtcp2_pkt_write_version_negotiation(buf, sizeof(buf), r, vc->scid, vc->scidlen, vc->dcid, vc->dcidlen,
						 sv, sizeof(sv) / sizeof(sv[0]));
	if (n > 0 && !qio_send_once(s->io, rx->peer, buf, (uint32_t)n))
		s->c.version_negotiations++;
}

void server_on_recv(void *ctx, const struct qio_rx *rx)
{
	struct server *s = ctx;
	ngtcp2_version_cid vc;
	ngtcp2_pkt_info pi = { .ecn = rx->ecn };
	struct conn *c;
	struct path *p;
	int rv;

	s->c.rx_datagrams++;
	s->c.rx_bytes += rx->len;
	if (!rx->len) {
		s->c.rx_garbage++; /* ngtcp2 asserts on an empty datagram */
		return;
	}
	rv = ngtcp2_pkt_decode_version_cid(&vc, rx->data, rx->len, SCID_LEN);
	if (rv == NGTCP2_ERR_VERSION_NEGOTIATION) {
		send_version_negotiation(s, rx, &vc);
		return;
	}
	if (rv) {
		s->c.rx_garbage++;
		return;
	}
	c = cid_map_get(&s->cids, vc.dcid, vc.dcidlen);
	if (!c) {
		ngtcp2_pkt_hd hd;

		if (!(rx->data[0] & 0x80)) {
			/* A short header for no connection of ours: a peer that lost its state, or garbage. */
			s->c.rx_unknown++;
			send_stateless_reset(s, rx, vc.dcid, vc.dcidlen);
			return;
		}
		if (s->stopping || ngtcp2_accept(&hd, rx->data, rx->len)) {
			s->c.rx_unknown++;
			return;
		}
		c = conn_new(s, rx, &hd);
		if (!c)
			return;
	}
	if (c->st == C_DRAINING)
		return;
	p = path_note(c, rx);
	if (c->st == C_CLOSING) {
		/* Answer with the CONNECTION_CLOSE again, ever more rarely (1st, 2nd, 4th, 8th ... packet). */
		s->c.rx_closing++;
		c->close_rx++;
		if (!(c->close_rx & (c->close_rx - 1)))
			close_resend(c, (const struct sockaddr *)&p->peer.remote);
		return;
	}
	{
		ngtcp2_path path = {
			.local = { .addr = (struct sockaddr *)rx->local, .addrlen = rx->local_len },
			.remote = { .addr = (struct sockaddr *)&p->peer.remote, .addrlen = p->peer.remote_len },
		};

		rv = ngtcp2_conn_read_pkt(c->q, &path, &pi, rx->data, rx->len, qio_now_ns());
	}
	switch (rv) {
	case 0:
		mark_dirty(c);
		return;
	case NGTCP2_ERR_DRAINING:
		/* The peer closed: say nothing more, forget it after 3 PTO. */
		c->st = C_DRAINING;
		c->close_deadline = qio_now_ns() + 3 * ngtcp2_conn_get_pto(c->q);
		s->c.draining++;
		timer_moved(c);
		return;
	case NGTCP2_ERR_DROP_CONN:
	case NGTCP2_ERR_RETRY: /* no Retry from this server: it cannot come */
		s->c.errors++;
		conn_free(c);
		return;
	case NGTCP2_ERR_CRYPTO:
		s->c.errors++;
		if (!c->ccerr.error_code)
			ngtcp2_connection_close_error_set_transport_error_tls_alert(
				&c->ccerr, ngtcp2_conn_get_tls_alert(c->q), NULL, 0);
		start_closing(c);
		return;
	default:
		s->c.errors++;
		close_liberr(c, rv);
		return;
	}
}

void server_on_recv_done(void *ctx)
{
	struct server *s = ctx;
	uint64_t now;

	s->c.recv_done++;
	if (!s->o.write_delay_ns) {
		flush_dirty(s);
		return;
	}
	/*
	 * --write-delay: what arrived waits a little for more of its kind, so
	 * that the ACKs of several receive passes open the window once and
	 * one larger super-segment goes instead of several small ones.
	 */
	now = qio_now_ns();
	while (s->dirty) {
		struct conn *c = s->dirty;

		s->dirty = c->dirty_next;
		c->dirty = false;
		if (!c->write_at)
			c->write_at = now + s->o.write_delay_ns;
		timer_moved(c);
	}
}

void server_on_sent(void *ctx, uint64_t cookie, int err, uint64_t time_ns)
{
	struct server *s = ctx;
	int32_t bi = (int32_t)(cookie & 0xffffffffu);
	struct sbuf *b;
	struct conn *c;

	if (bi < 0 || (uint32_t)bi >= s->bufs_alloc || !s->bufs[bi].busy)
		return;
	b = &s->bufs[bi];
	if (err) {
		s->c.tx_dropped++;
	} else if (b->sched) {
		uint64_t e = time_ns > b->sched ? time_ns - b->sched : b->sched - time_ns;

		hist_add(&s->dep, e);
		hist_add(&s->late, time_ns > b->sched ? time_ns - b->sched : 0);
		if (time_ns < b->sched && b->sched - time_ns > s->early_max)
			s->early_max = b->sched - time_ns;
	}
	c = s->slots[b->owner_slot];
	buf_put(s, bi);
	if (!c || c->gen != b->owner_gen)
		return;
	c->bufs_busy--;
	if (c->blocked) {
		mark_dirty(c);
		flush_dirty(s);
	}
}

/* ---- timers and the server ------------------------------------------------------------------ */

uint64_t server_next_expiry(struct server *s)
{
	struct tnode *t = theap_min(&s->timers);

	return t ? t->key : UINT64_MAX;
}

void server_timers(struct server *s, uint64_t now)
{
	struct conn *due = NULL;
	struct tnode *t;

	/* Written after every receive pass (RECV_DONE): none should be left. */
	for (struct conn *c = s->dirty; c; c = c->dirty_next)
		s->c.dirty_after_run++;

	/* Take the due ones out first: handling one moves (or ends) its timer. */
	while ((t = theap_min(&s->timers)) && t->key <= now) {
		struct conn *c = (struct conn *)(void *)((char *)t - offsetof(struct conn, tn));

		theap_del(&s->timers, t);
		c->due_next = due;
		due = c;
	}
	while (due) {
		struct conn *c = due;
		int rv;

		due = c->due_next;
		if (c->st != C_LIVE) {
			s->c.closed++;
			conn_free(c);
			continue;
		}
		c->write_at = 0;
		rv = ngtcp2_conn_handle_expiry(c->q, now);
		if (rv == NGTCP2_ERR_IDLE_CLOSE || rv == NGTCP2_ERR_HANDSHAKE_TIMEOUT) {
			/* Silently: the peer has gone quiet (idle timeout, RFC 9000 10.1). */
			if (rv == NGTCP2_ERR_IDLE_CLOSE)
				s->c.timed_out++;
			else
				s->c.handshake_timeouts++;
			conn_free(c);
			continue;
		}
		if (rv) {
			s->c.errors++;
			close_liberr(c, rv);
			continue;
		}
		/* Its timer goes back in the heap when it has written (conn_write). */
		mark_dirty(c);
	}
	flush_dirty(s);
}

void server_shutdown(struct server *s)
{
	s->stopping = true;
	for (uint32_t i = 0; i < s->o.max_conns; i++) {
		struct conn *c = s->slots[i];

		if (!c)
			continue;
		if (c->st == C_LIVE && c->handshake_done) {
			s->c.closed_at_exit++;
			conn_close_app(c, NGHTTP3_H3_NO_ERROR);
		} else if (c->st == C_LIVE) {
			s->c.closed_at_exit++;
			ngtcp2_connection_close_error_set_transport_error(&c->ccerr, NGTCP2_NO_ERROR, NULL, 0);
			start_closing(c);
		}
	}
}

bool server_quiet(const struct server *s)
{
	return !s->bufs_busy;
}

int server_init(struct server *s, const struct srv_opts *o, char *errbuf, size_t errlen)
{
	uint64_t seed;

	memset(s, 0, sizeof(*s));
	s->o = *o;
	s->free_buf = -1;
	s->root_fd = -1;
	rand_bytes(&seed, sizeof(seed));
	rand_bytes(s->reset_secret, sizeof(s->reset_secret));
	s->slots = calloc(o->max_conns, sizeof(*s->slots));
	s->bufs = calloc(o->max_bufs, sizeof(*s->bufs));
	if (!s->slots || !s->bufs || theap_init(&s->timers, o->max_conns) || cid_map_init(&s->cids, seed)) {
		snprintf(errbuf, errlen, "out of memory");
		theap_free(&s->timers);
		free(s->slots);
		free(s->bufs);
		return -ENOMEM;
	}
	return 0;
}

void server_drop_conns(struct server *s)
{
	for (uint32_t i = 0; i < s->o.max_conns; i++)
		if (s->slots[i])
			conn_free(s->slots[i]);
}

void server_free(struct server *s)
{
	server_drop_conns(s);
	for (uint32_t i = 0; i < s->bufs_alloc; i++)
		free(s->bufs[i].mem);
	free(s->bufs);
	free(s->slots);
	theap_free(&s->timers);
	cid_map_free(&s->cids);
}
