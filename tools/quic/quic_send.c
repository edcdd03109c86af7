/*
 * gsoquicd's sending: what its QUIC connections write goes out as
 * super-segments, paced (see quic_conn.c for the rest of a connection).
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
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <gso/engine.h>

#include "quic_server.h"

/* The engine's slack (quic_io_gso.c leaves opts.slack_ns at its default): a send due within it may leave that much early. */
#define EDT_SLACK_NS ((uint64_t)GSO_ENGINE_DEF_SLACK_NS)

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

/* Expiry changed: if it comes before the loop's deadline, the loop must look again. */
void conn_timer_moved(struct conn *c)
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

void conn_mark_dirty(struct conn *c)
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
struct path *conn_path_note(struct conn *c, const struct qio_rx *rx)
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

void conn_close_resend(struct conn *c, const struct sockaddr *to)
{
	int32_t bi;

	if (!c->close_len || c->bufs_busy >= c->s->o.conn_bufs || (bi = buf_get(c->s)) < 0)
		return;
	memcpy(c->s->bufs[bi].mem, c->close_pkt, c->close_len);
	if (!send_buf(c, bi, to, c->close_len, c->close_len, 0))
		c->s->c.close_resends++;
}

/* Enter the closing period: write CONNECTION_CLOSE (ccerr), send it, keep it. */
void conn_start_closing(struct conn *c)
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
		conn_close_resend(c, ps.path.remote.addr);
	}
	conn_timer_moved(c);
}

void conn_close_app(struct conn *c, uint64_t app_error)
{
	ngtcp2_connection_close_error_set_application_error(&c->ccerr, app_error, NULL, 0);
	conn_start_closing(c);
}

void conn_close_liberr(struct conn *c, int liberr)
{
	if (!c->ccerr.error_code)
		ngtcp2_connection_close_error_set_transport_error_liberr(&c->ccerr, liberr, NULL, 0);
	conn_start_closing(c);
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
				conn_close_liberr(c, (int)n);
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
	conn_timer_moved(c);
}

void server_flush_dirty(struct server *s)
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

void server_on_recv_done(void *ctx)
{
	struct server *s = ctx;
	uint64_t now;

	s->c.recv_done++;
	if (!s->o.write_delay_ns) {
		server_flush_dirty(s);
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
		conn_timer_moved(c);
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
		conn_mark_dirty(c);
		server_flush_dirty(s);
	}
}

