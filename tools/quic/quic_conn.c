/*
 * gsoquicd's QUIC connections: accepting them, ngtcp2's callbacks,
 * feeding them the datagrams that arrive, stateless resets and version
 * negotiation, their timers and their end (draining, idle, at exit).
 * Writing, pacing and closing are quic_send.c's.
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

#include <gnutls/crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include "quic_server.h"

static void conn_free(struct conn *c);

static void rand_bytes(void *p, size_t n)
{
	if (gnutls_rnd(GNUTLS_RND_NONCE, p, n))
		memset(p, 0, n); /* never: GnuTLS's generator does not fail once initialised */
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
	conn_timer_moved(c);
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
	p = conn_path_note(c, rx);
	if (c->st == C_CLOSING) {
		/* Answer with the CONNECTION_CLOSE again, ever more rarely (1st, 2nd, 4th, 8th ... packet). */
		s->c.rx_closing++;
		c->close_rx++;
		if (!(c->close_rx & (c->close_rx - 1)))
			conn_close_resend(c, (const struct sockaddr *)&p->peer.remote);
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
		conn_mark_dirty(c);
		return;
	case NGTCP2_ERR_DRAINING:
		/* The peer closed: say nothing more, forget it after 3 PTO. */
		c->st = C_DRAINING;
		c->close_deadline = qio_now_ns() + 3 * ngtcp2_conn_get_pto(c->q);
		s->c.draining++;
		conn_timer_moved(c);
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
		conn_start_closing(c);
		return;
	default:
		s->c.errors++;
		conn_close_liberr(c, rv);
		return;
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
			conn_close_liberr(c, rv);
			continue;
		}
		/* Its timer goes back in the heap when it has written (conn_write). */
		conn_mark_dirty(c);
	}
	server_flush_dirty(s);
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
			conn_start_closing(c);
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
