/*
 * The soak's flows (soak.h), run on the port's workers: a stream writes
 * the bench header (verdict wanted) and its bytes, shuts down, and reads
 * the receiver's verdict back; a datagram flow keeps SOAK_DG_BUFS
 * super-segments queued until it has sent `count`, then closes.  Every
 * datagram carries its flow, its number and a pattern the sink checks.
 * A slot's results are written before its DONE is stored (release), so
 * the main thread reads them after its acquire load.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <gso/tmpl.h>

#include "soak.h"
#include "xfer_write.h"

#define SINK_BATCH 32

static void done(atomic_int *state)
{
	atomic_store_explicit(state, SLOT_DONE, memory_order_release);
}

/* ---- streams ---- */

static void stream_fill(struct soak_stream *ss)
{
	if (!ss->shut && bench_xfer_write(ss->s, ss->hdr, BENCH_HDR_LEN, &ss->bs, &ss->written, ss->total)) {
		ss->shut = true;
		gso_stream__shutdown(ss->s);
	}
}

static void stream_read(struct soak_stream *ss)
{
	uint8_t buf[256];
	int n;

	while ((n = gso_stream__read(ss->s, buf, sizeof(buf))) > 0) {
		uint32_t take = (uint32_t)n;

		if (take > BENCH_VERDICT_LEN - ss->vlen) {
			take = BENCH_VERDICT_LEN - ss->vlen;
			ss->vextra = true;
		}
		memcpy(ss->verdict + ss->vlen, buf, take);
		ss->vlen += take;
	}
}

/* Take the stream's figures, free it, hand the slot back. */
static void stream_finish(struct soak_stream *ss, bool aborted)
{
	GSO_OPTS(gso_stream_info, si);

	stream_read(ss);
	if (!gso_stream__info(ss->s, &si)) {
		ss->err = si.err;
		ss->acked = si.acked;
		snprintf(ss->why, sizeof(ss->why), "%s", si.why ? si.why : "");
	}
	ss->aborted = aborted;
	gso_stream__close(ss->s);
	ss->s = NULL;
	ss->t_end = gso_evloop_now_ns();
	done(&ss->state);
}

void soak_stream_connect(struct gso_engine *e, void *arg)
{
	struct soak_stream *ss = arg;

	ss->connect_err = gso_stream__connect(&ss->s, e, &ss->so);
	if (ss->connect_err) {
		ss->s = NULL;
		ss->t_end = gso_evloop_now_ns();
		done(&ss->state);
	}
}

void soak_stream_abort(struct gso_engine *e, void *arg)
{
	struct soak_stream *ss = arg;

	(void)e;
	/* It may have ended (and been handed back) after the main thread asked. */
	if (atomic_load_explicit(&ss->state, memory_order_relaxed) == SLOT_ACTIVE && ss->s)
		stream_finish(ss, true);
}

static void stream_event(struct soak_stream *ss, const struct gso_engine_event *ev)
{
	if (!ss->s || ev->stream != ss->s)
		return; /* a flow this slot held before */
	switch (ev->type) {
	case GSO_EV_STREAM_WRITABLE:
		stream_fill(ss);
		break;
	case GSO_EV_STREAM_READABLE:
		stream_read(ss);
		break;
	case GSO_EV_STREAM_CLOSED:
		stream_finish(ss, false);
		break;
	default:
		break;
	}
}

/* ---- datagram flows ---- */

/* Datagram `seq` of flow `id`: magic, id, seq, then a pattern of both (soak_sink checks it). */
static uint8_t dg_pattern(uint32_t id, uint64_t seq, uint32_t i)
{
	return (uint8_t)(id * 131u + seq * 7u + i);
}

static void dg_fill(uint8_t *p, uint32_t id, uint64_t seq)
{
	uint32_t magic = htonl(SOAK_DG_MAGIC), nid = htonl(id);
	uint64_t s = seq;

	memcpy(p, &magic, 4);
	memcpy(p + 4, &nid, 4);
	for (int b = 7; b >= 0; b--, s >>= 8)
		p[8 + b] = (uint8_t)s;
	for (uint32_t i = 16; i < SOAK_DG_SIZE; i++)
		p[i] = dg_pattern(id, seq, i);
}

static void dgram_close(struct soak_dgram *dg)
{
	/* Closing drops what is queued, and those events may come while it runs: closing marks them. */
	dg->closing = true;
	gso_dgram__close(dg->d);
	dg->d = NULL;
	dg->t_end = gso_evloop_now_ns();
	done(&dg->state);
}

/* Queue super-segments into free buffers while there are any and more are due. */
static void dgram_push(struct soak_dgram *dg)
{
	while (!dg->err && dg->queued < dg->count && dg->inflight < SOAK_DG_BUFS) {
		uint32_t buf = dg->queued % SOAK_DG_BUFS;
		uint8_t *mem = dg->mem[buf];
		int err;

		for (uint32_t i = 0; i < SOAK_DG_PER_SUPER; i++)
			dg_fill(mem + i * SOAK_DG_SIZE, (uint32_t)dg->id, (uint64_t)dg->queued * SOAK_DG_PER_SUPER + i);
		err = gso_dgram__send(dg->d, mem, SOAK_DG_SUPER, SOAK_DG_SIZE, buf);
		if (err == -EAGAIN || err == -ENOBUFS)
			break; /* a SENT event comes back here */
		if (err) {
			dg->err = err;
			break;
		}
		dg->queued++;
		dg->inflight++;
	}
	if (!dg->inflight && (dg->err || dg->queued >= dg->count))
		dgram_close(dg);
}

void soak_dgram_open(struct gso_engine *e, void *arg)
{
	struct soak_dgram *dg = arg;
	GSO_OPTS(gso_tmpl_fields, tf, .l4 = GSO_L4_UDP, .sport = (uint16_t)(30000 + dg->id % 20000),
		 .dport = SOAK_SINK_PORT);
	struct gso_tmpl tm;
	int err;

	dg->closing = dg->aborted = false;
	err = gso_route__tmpl_fields(&dg->rt, &tf);
	if (!err)
		err = gso_tmpl__build(&tm, &tf);
	if (!err) {
		GSO_OPTS(gso_dgram_opts, o, .tmpl = &tm, .rate = dg->rate, .route = &dg->rt,
			 .tx_flags = GSO_TX_F_SW_CSUM | GSO_TX_F_COPY, .ctx = dg);
		err = gso_dgram__open(&dg->d, e, &o);
	}
	if (err) {
		dg->err = err;
		dg->d = NULL;
		dg->t_end = gso_evloop_now_ns();
		done(&dg->state);
		return;
	}
	dgram_push(dg);
}

void soak_dgram_abort(struct gso_engine *e, void *arg)
{
	struct soak_dgram *dg = arg;

	(void)e;
	if (atomic_load_explicit(&dg->state, memory_order_relaxed) == SLOT_ACTIVE && dg->d) {
		dg->aborted = true;
		dgram_close(dg);
	}
}

static void dgram_event(struct soak_dgram *dg, const struct gso_engine_event *ev)
{
	if (ev->type != GSO_EV_DGRAM_SENT && ev->type != GSO_EV_DGRAM_DROPPED)
		return;
	if (dg->closing || !dg->d || ev->dgram != dg->d)
		return;
	dg->inflight--;
	dg->done++;
	if (ev->type == GSO_EV_DGRAM_SENT)
		dg->dgrams_sent += SOAK_DG_PER_SUPER;
	else if (!dg->err)
		dg->err = ev->err ? ev->err : -ECANCELED;
	dgram_push(dg);
}

void soak_on_event(void *ctx, uint32_t q, struct gso_engine *e, const struct gso_engine_event *ev)
{
	const int *kind = ev->flow_ctx;

	(void)ctx;
	(void)q;
	(void)e;
	if (!kind)
		return;
	if (*kind == KIND_STREAM)
		stream_event(ev->flow_ctx, ev);
	else if (*kind == KIND_DGRAM)
		dgram_event(ev->flow_ctx, ev);
}

/* ---- the sink ---- */

static bool dg_check(const uint8_t *p, size_t len, char *why, size_t wlen)
{
	uint32_t magic, id;
	uint64_t seq = 0;

	if (len != SOAK_DG_SIZE) {
		snprintf(why, wlen, "a datagram of %zu bytes, not %u", len, SOAK_DG_SIZE);
		return false;
	}
	memcpy(&magic, p, 4);
	memcpy(&id, p + 4, 4);
	id = ntohl(id);
	for (int b = 0; b < 8; b++)
		seq = seq << 8 | p[8 + b];
	if (ntohl(magic) != SOAK_DG_MAGIC) {
		snprintf(why, wlen, "a datagram without the soak's magic (0x%08x)", ntohl(magic));
		return false;
	}
	for (uint32_t i = 16; i < SOAK_DG_SIZE; i++)
		if (p[i] != dg_pattern(id, seq, i)) {
			snprintf(why, wlen, "flow %u datagram %llu: byte %u is 0x%02x, not 0x%02x", id,
				 (unsigned long long)seq, i, p[i], dg_pattern(id, seq, i));
			return false;
		}
	return true;
}

static void *sink_main(void *arg)
{
	static uint8_t buf[SINK_BATCH][2048];
	struct soak_sink *k = arg;
	struct mmsghdr m[SINK_BATCH];
	struct iovec iov[SINK_BATCH];

	for (int i = 0; i < SINK_BATCH; i++) {
		iov[i] = (struct iovec){ .iov_base = buf[i], .iov_len = sizeof(buf[i]) };
		m[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	while (!atomic_load(&k->stop)) {
		int n;

		if (poll(&(struct pollfd){ .fd = k->fd, .events = POLLIN }, 1, 200) <= 0)
			continue;
		n = recvmmsg(k->fd, m, SINK_BATCH, MSG_DONTWAIT, NULL);
		for (int i = 0; i < n; i++) {
			char why[128];

			atomic_fetch_add(&k->dgrams, 1);
			atomic_fetch_add(&k->bytes, m[i].msg_len);
			if (dg_check(buf[i], m[i].msg_len, why, sizeof(why)))
				continue;
			/* Only this thread writes: the text before the count that publishes it. */
			if (!atomic_load_explicit(&k->bad, memory_order_relaxed))
				snprintf(k->first_bad, sizeof(k->first_bad), "%s", why);
			atomic_fetch_add_explicit(&k->bad, 1, memory_order_release);
		}
	}
	return NULL;
}

int soak_sink_start(struct soak_sink *k, const struct nsbed *nb)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(SOAK_SINK_PORT) };
	int rcvbuf = 4 << 20, err, back;

	memset(k, 0, sizeof(*k));
	inet_pton(AF_INET, SOAK_ADDR_B, &a.sin_addr);
	/* The socket lives in the namespace it was made in. */
	if ((err = nsbed_enter(nb, 1)))
		return err;
	k->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	err = k->fd < 0 ? -errno : 0;
	back = nsbed_enter(nb, 0);
	if (err || back) {
		if (k->fd >= 0)
			close(k->fd);
		return err ? err : back;
	}
	if (setsockopt(k->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(k->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(k->fd, (struct sockaddr *)&a, sizeof(a))) {
		err = -errno;
		close(k->fd);
		return err;
	}
	err = pthread_create(&k->th, NULL, sink_main, k);
	if (err) {
		close(k->fd);
		return -err;
	}
	return 0;
}

void soak_sink_stop(struct soak_sink *k)
{
	atomic_store(&k->stop, true);
	pthread_join(k->th, NULL);
	close(k->fd);
}
