/*
 * HTTP/3 on gsoquicd's connections (nghttp3): GET of the files under the
 * root.  The path is decoded and opened beneath the root by the kernel's
 * rules exactly as gsohttpd does (tools/common/file_path.c: openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), the file is mapped, and the
 * mapping is handed to nghttp3 whole in one read_data call
 * (NGHTTP3_DATA_FLAG_EOF): ngtcp2 encrypts straight from the mapping into
 * the send buffer, the only copy this program makes.  The mapping lives
 * until the stream closes.  Statuses: 200 (content-length), 400 a bad or
 * missing path, 403 / 404 / 414 / 500 as file_path.h says, 405 any
 * method but GET (with allow: GET).
 *
 * A file truncated while it is served raises SIGBUS inside ngtcp2's
 * encryption, where it cannot be caught and undone: serve files that do
 * not shrink.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "file_path.h"
#include "quic_server.h"

static struct conn *C(void *ud)
{
	return ud;
}

static void stream_free(struct conn *c, struct stream *st)
{
	if (st->prev)
		st->prev->next = st->next;
	else
		c->streams = st->next;
	if (st->next)
		st->next->prev = st->prev;
	if (st->map)
		munmap(st->map, st->map_len);
	free(st);
}

void h3_free_streams(struct conn *c)
{
	while (c->streams) {
		if (c->streams->status == 200 && !c->streams->fin_sent)
			c->s->c.responses_aborted++;
		stream_free(c, c->streams);
	}
}

static void count_status(struct srv_counters *k, unsigned status)
{
	switch (status) {
	case 200: k->st200++; break;
	case 400: k->st400++; break;
	case 403: k->st403++; break;
	case 404: k->st404++; break;
	case 405: k->st405++; break;
	case 414: k->st414++; break;
	default: k->st500++; break;
	}
}

static nghttp3_ssize read_data(nghttp3_conn *h3, int64_t sid, nghttp3_vec *vec, size_t veccnt, uint32_t *pflags,
			       void *ud, void *sud)
{
	struct stream *st = sud;

	(void)h3, (void)sid, (void)veccnt, (void)ud;
	vec[0].base = st->map;
	vec[0].len = st->map_len;
	*pflags |= NGHTTP3_DATA_FLAG_EOF;
	return 1;
}

/* The status of the request on st, and the file mapped for a 200. */
static unsigned resolve(struct conn *c, struct stream *st)
{
	char rel[PATH_MAX];
	struct stat sb;
	const char *q;
	size_t len;
	unsigned status;
	int fd;

	if (st->bad_path)
		return 414;
	if (!st->method_len || !st->path_len || st->path[0] != '/')
		return 400;
	if (st->method_len != 3 || memcmp(st->method, "GET", 3))
		return 405;
	q = memchr(st->path, '?', st->path_len);
	len = q ? (size_t)(q - st->path) : st->path_len;
	status = file_path_decode(st->path, len, rel, sizeof(rel));
	if (status)
		return status;
	status = file_path_open(c->s->root_fd, rel, sizeof(rel), &fd, &sb);
	if (status)
		return status;
	if (sb.st_size > 0) {
		void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);

		if (m == MAP_FAILED) {
			close(fd);
			return 500;
		}
		st->map = m;
		st->map_len = (size_t)sb.st_size;
	}
	close(fd);
	return 200;
}

#define NV(n, v, vl) { (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vl), \
		       NGHTTP3_NV_FLAG_NO_COPY_NAME | NGHTTP3_NV_FLAG_NO_COPY_VALUE }

static int respond(struct conn *c, struct stream *st)
{
	static const nghttp3_data_reader dr = { .read_data = read_data };
	/* Names and values are the stream's (or static) and outlive the response: no copies. */
	nghttp3_nv nva[] = {
		NV(":status", st->code, 3),
		NV("server", "gsoquicd", 8),
		NV("content-length", st->clen, 0),
		NV("allow", "GET", 3),
	};

	st->responded = true;
	st->status = resolve(c, st);
	snprintf(st->code, sizeof(st->code), "%u", st->status);
	snprintf(st->clen, sizeof(st->clen), "%zu", st->map_len);
	nva[2].valuelen = strlen(st->clen);
	c->s->c.requests++;
	count_status(&c->s->c, st->status);
	return nghttp3_conn_submit_response(c->h3, st->id, nva, st->status == 405 ? 4 : 3, st->map_len ? &dr : NULL);
}

static int cb_begin_headers(nghttp3_conn *h3, int64_t sid, void *ud, void *sud)
{
	struct conn *c = C(ud);
	struct stream *st;

	(void)sud;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NGHTTP3_ERR_CALLBACK_FAILURE;
	st->c = c;
	st->id = sid;
	st->next = c->streams;
	if (c->streams)
		c->streams->prev = st;
	c->streams = st;
	nghttp3_conn_set_stream_user_data(h3, sid, st);
	return 0;
}

static int cb_recv_header(nghttp3_conn *h3, int64_t sid, int32_t token, nghttp3_rcbuf *name, nghttp3_rcbuf *value,
			  uint8_t flags, void *ud, void *sud)
{
	struct stream *st = sud;
	nghttp3_vec v = nghttp3_rcbuf_get_buf(value);

	(void)h3, (void)sid, (void)name, (void)flags, (void)ud;
	if (!st)
		return 0;
	switch (token) {
	case NGHTTP3_QPACK_TOKEN__METHOD:
		st->method_len = v.len < sizeof(st->method) ? v.len : 0;
		memcpy(st->method, v.base, st->method_len);
		if (v.len >= sizeof(st->method)) {
			/* A method that long is none we serve. */
			memcpy(st->method, "LONG", 4);
			st->method_len = 4;
		}
		break;
	case NGHTTP3_QPACK_TOKEN__PATH:
		if (v.len >= sizeof(st->path)) {
			st->bad_path = true;
			break;
		}
		memcpy(st->path, v.base, v.len);
		st->path_len = v.len;
		break;
	default:
		break;
	}
	return 0;
}

static int cb_end_stream(nghttp3_conn *h3, int64_t sid, void *ud, void *sud)
{
	struct stream *st = sud;

	(void)h3, (void)sid;
	if (!st || st->responded)
		return 0;
	return respond(C(ud), st) ? NGHTTP3_ERR_CALLBACK_FAILURE : 0;
}

static int cb_stream_close(nghttp3_conn *h3, int64_t sid, uint64_t app_error, void *ud, void *sud)
{
	struct conn *c = C(ud);
	struct stream *st = sud;

	(void)h3, (void)app_error;
	if (st) {
		if (st->status == 200 && !st->fin_sent)
			c->s->c.responses_aborted++;
		stream_free(c, st);
	}
	/* A request stream of the client's is done: it may open another. */
	if (!(sid & 0x3) && c->q)
		ngtcp2_conn_extend_max_streams_bidi(c->q, 1);
	return 0;
}

/* Body bytes the client acknowledged: what was served. */
static int cb_acked_stream_data(nghttp3_conn *h3, int64_t sid, uint64_t len, void *ud, void *sud)
{
	struct stream *st = sud;

	(void)h3, (void)sid;
	if (st)
		st->acked += len;
	C(ud)->s->c.bytes_acked += len;
	return 0;
}

void h3_fin_sent(struct conn *c, int64_t sid)
{
	for (struct stream *st = c->streams; st; st = st->next)
		if (st->id == sid) {
			if (!st->fin_sent && st->responded && st->status == 200)
				c->s->c.bytes_served += st->map_len;
			st->fin_sent = true;
			return;
		}
}

/* Request bodies (a POST answered 405) are read and thrown away: give the window back. */
static int cb_recv_data(nghttp3_conn *h3, int64_t sid, const uint8_t *data, size_t len, void *ud, void *sud)
{
	struct conn *c = C(ud);

	(void)h3, (void)data, (void)sud;
	ngtcp2_conn_extend_max_stream_offset(c->q, sid, len);
	ngtcp2_conn_extend_max_offset(c->q, len);
	return 0;
}

static int cb_deferred_consume(nghttp3_conn *h3, int64_t sid, size_t n, void *ud, void *sud)
{
	struct conn *c = C(ud);

	(void)h3, (void)sud;
	ngtcp2_conn_extend_max_stream_offset(c->q, sid, n);
	ngtcp2_conn_extend_max_offset(c->q, n);
	return 0;
}

static int cb_stop_sending(nghttp3_conn *h3, int64_t sid, uint64_t app_error, void *ud, void *sud)
{
	struct conn *c = C(ud);

	(void)h3, (void)sud;
	return ngtcp2_conn_shutdown_stream_read(c->q, sid, app_error) ? NGHTTP3_ERR_CALLBACK_FAILURE : 0;
}

static int cb_reset_stream(nghttp3_conn *h3, int64_t sid, uint64_t app_error, void *ud, void *sud)
{
	struct conn *c = C(ud);

	(void)h3, (void)sud;
	return ngtcp2_conn_shutdown_stream_write(c->q, sid, app_error) ? NGHTTP3_ERR_CALLBACK_FAILURE : 0;
}

static const nghttp3_callbacks h3_callbacks = {
	.acked_stream_data = cb_acked_stream_data,
	.stream_close = cb_stream_close,
	.recv_data = cb_recv_data,
	.deferred_consume = cb_deferred_consume,
	.begin_headers = cb_begin_headers,
	.recv_header = cb_recv_header,
	.stop_sending = cb_stop_sending,
	.end_stream = cb_end_stream,
	.reset_stream = cb_reset_stream,
};

int h3_setup(struct conn *c)
{
	nghttp3_settings st;
	int64_t ctrl, enc, dec;

	if (c->h3)
		return 0;
	/* HTTP/3 needs three unidirectional streams of ours: control, QPACK encoder and decoder. */
	if (ngtcp2_conn_get_max_local_streams_uni(c->q) < 3)
		return -1;
	nghttp3_settings_default(&st);
	if (nghttp3_conn_server_new(&c->h3, &h3_callbacks, &st, NULL, c))
		return -1;
	nghttp3_conn_set_max_client_streams_bidi(c->h3,
						ngtcp2_conn_get_local_transport_params(c->q)->initial_max_streams_bidi);
	if (ngtcp2_conn_open_uni_stream(c->q, &ctrl, NULL) || nghttp3_conn_bind_control_stream(c->h3, ctrl) ||
	    ngtcp2_conn_open_uni_stream(c->q, &enc, NULL) || ngtcp2_conn_open_uni_stream(c->q, &dec, NULL) ||
	    nghttp3_conn_bind_qpack_streams(c->h3, enc, dec))
		return -1;
	return 0;
}
