/*
 * Stream flows (engine.h): one active-open TCP connection that sends what
 * the application writes, through the engine's device.
 *
 * The parts do the work, this file glues them to the engine:
 *  - gso_tmpl__build() makes every header (SYN with MSS, SACK-permitted,
 *    timestamps and window scale; data and ACKs with timestamps);
 *  - the application writes straight into device buffers
 *    (gso_stream__reserve), which the flow send queue (gso/flowq.h) holds
 *    until the peer acknowledges them; partial ACKs give chunks back at
 *    once (gso_dev__buf_release);
 *  - gso_burst_size() sizes each super-segment from the pacing rate, cwnd,
 *    the pipe and the peer's window, and the engine's scheduler stamps and
 *    sends it (the flow's one "token" burst: build() decides at departure
 *    what it carries, a retransmission first); Reno/CUBIC grow and cut cwnd
 *    from the flow queue's per-segment counts;
 *  - loss recovery: SACK scoreboard or NewReno and RACK in the flow queue,
 *    retransmissions re-segmented from the held buffers, RTO with
 *    exponential backoff, zero-window probes, FIN.
 *
 * Control segments (SYN, pure ACKs, FIN, probes, RST) are not paced: they
 * go to the device at once.  Timers are one deadline per stream in the
 * engine's heap (s_timer_update).
 */
#include "engine/engine_internal.h"
#include "engine/icmp_err_internal.h"
#include "engine_tcp_internal.h"
#include "tcp_conn_internal.h"
#include "rcvq_internal.h"
#include "opts_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <gso/cc.h>
#include <gso/flowq.h>

#define NS_PER_MS 1000000ull
#define SYN_RTO_NS (1000 * NS_PER_MS)  /* RFC 6298 initial RTO */
#define SYN_TRIES 6
#define MAX_BACKOFF 10
#define MAX_RTO_NS (60000 * NS_PER_MS)
#define LINGER_NS (500 * NS_PER_MS)    /* wait this long for the peer's FIN */
#define RETRY_NS 20000ull              /* a control segment the device could not take yet */
#define DELACK_NS (40 * NS_PER_MS)     /* Linux's TCP_DELACK_MIN (and ATO_MIN) */
#define QUICK_ACKS 16                  /* TCP_MAX_QUICKACKS */
#define FQ_ENTRIES 8192u
#define TSQ_MAX_BYTES (256u << 10)     /* device queue limit (tcp_limit_output_bytes, 2012-2018) */
#define TSQ_RETRY_NS 200000ull

struct tslot {
	struct gso_buf buf;
	bool used;
	bool writing;     /* the application may still append to it */
	bool done_early;  /* the queue let go of all its bytes while it was still being written */
};

/* The API's struct gso_stream * is the flow's handle (engine/handle_internal.h), not this. */
struct stream {
	struct eflow f;          /* first: engine.c sees flows through it */
	struct tcp_key key;      /* the peer's segments, for lookup */
	struct stream *hnext;
	uint32_t flags, cc_algo, mss_cap, tx_flags, notsent_lowat;
	uint64_t max_rate, idle_ns;
	struct gso_burst_opts bo;
	bool user_min_segs;      /* min_segs set by the user: the CC's minimum burst does not apply */

	uint32_t state;          /* enum gso_stream_state */
	bool sized;              /* the flow queue and CC exist: data may be written */
	bool need_size;          /* ESTABLISHED was announced; size at the next timer run */
	struct gso_tmpl tmpl;    /* data and ACK template (flags ACK) */
	uint32_t tmpl_tsval, tmpl_tsecr, tmpl_ack;
	uint16_t ip_id;
	uint32_t iss, irs, rcv_nxt;
	uint32_t rcv_wnd;        /* the window we advertise, scaled: the peer's segments must fall in it */
	uint64_t oow_at;         /* when the last challenge or out-of-window ACK left (gsoi_tcp_oow_allow) */
	uint8_t snd_wscale;
	bool sack_ok, ts_ok;
	uint32_t ts_recent, ts_off;
	uint32_t peer_mss, syn_wnd;
	uint64_t syn_rtt_ns;
	uint32_t ip_hdr;
	struct gso_flowq *fq;
	struct gso_flowq_rel *rel;
	unsigned nrel;
	struct gso_cc *cc;
	struct gso_tso_flow tso;
	struct tslot *slots;
	uint32_t nslots, slot_hint;
	int wslot;               /* slot being written, -1: none */
	uint32_t wfill;          /* bytes committed into it */
	bool want_write, data_done;
	struct gso_flowq_tx ptx; /* what build() peeked, for sent() */
	uint64_t syn_ns, syn_at, rto_at, probe_at, retry_at, tsq_at, linger_at;
	uint64_t deadline;       /* as in the engine's heap */
	uint64_t last_heard;
	uint64_t wait_from;      /* when we last began to wait for the peer (data into an empty pipe, FIN, probe) */
	uint32_t backoff, syn_tries;
	bool fin_sent, fin_acked, peer_fin, cwnd_limited;
	uint32_t fin_seq;
	/* receiving (engine.h, "Receiving") */
	struct rcvq rq;          /* the peer's bytes: in order, unread, and out of order */
	uint32_t rcvbuf;         /* bytes we advertise at most (rq holds one window-scale unit more) */
	uint8_t rcv_wscale;      /* our shift (0 when the peer does not scale) */
	uint32_t rcv_right;      /* right edge of the window advertised last: never moves back */
	uint16_t tmpl_win;       /* window field in the template */
	uint32_t rcv_mss;        /* largest segment payload seen (Linux's rcv_mss): what "full-sized" means */
	uint32_t fq_max;         /* the flow queue's entry limit (seg_limit at sizing): seg_limit stays within it */
	uint32_t ack_owed;       /* in-order bytes received since our last ACK */
	uint32_t rcv_wup;        /* RCV.NXT our last ACK carried: TS.Recent comes from segments up to it */
	uint32_t quick;          /* quick ACKs left */
	uint64_t delack_at;      /* the delayed-ACK timer (0: off) */
	bool fin_known;          /* the peer's FIN came, maybe ahead of bytes still missing */
	uint32_t peer_fin_seq;   /* its sequence number */
	bool read_since;         /* the application read since the last READABLE (or none was raised) */
	bool closed_first;       /* our FIN went before the peer's: we keep TIME_WAIT */
	bool rx_reset;           /* the peer reset in FIN-WAIT-2: its bytes end without a FIN */
	/* passive open */
	bool passive;            /* a listener made it */
	bool accepted;           /* ... and handed it out: events from now on */
	bool ev_readable;        /* a READABLE held until the accept */
	bool ev_fin;             /* a PEER_CLOSED held until the accept */
	bool in_memq;            /* waiting for device memory (tcp_state.memq) */
	struct stream *memq_next;
	uint64_t mem_retry_at;   /* ... and its fallback timer: memory also comes back by device completions */
	struct gso_stream_info st; /* counters kept where gso_stream__info reports them */
};

static struct stream *to_s(struct eflow *f)
{
	return (struct stream *)f;
}

static bool seq_after(uint32_t a, uint32_t b)
{
	return (int32_t)(b - a) < 0;
}

static uint32_t tsval(const struct stream *s, uint64_t now)
{
	return (uint32_t)(now / NS_PER_MS) + s->ts_off;
}

static bool finished(const struct stream *s)
{
	return s->state == GSO_STREAM_DONE || s->state == GSO_STREAM_FAILED;
}

static void emit(struct stream *s, uint32_t type, int err)
{
	/* Nobody knows a stream the listener has not handed out: nothing to tell. */
	if (s->passive && !s->accepted)
		return;
	gsoi_engine_emit(s->f.e, &(struct gso_engine_event){ .type = type, .err = err, .flow_ctx = s->f.ctx,
						       .stream = (struct gso_stream *)s->f.handle, .acked = s->st.acked });
}

static void s_timer_update(struct stream *s);
static uint32_t ack_seq(const struct stream *s);
static void ended_clean(struct stream *s, uint64_t now);
static void rx_data(struct stream *s, const uint8_t *frame, const struct tcp_seg *g, uint64_t now);

/* ---- the end ----------------------------------------------------------------------- */

/* ---- device memory, shared by the engine's streams ---------------------------------------- */

#define MEM_RETRY_NS (10 * NS_PER_MS)

static void mem_wait(struct stream *s)
{
	struct tcp_state *ts = gsoi_tcp_state(s->f.e);

	s->mem_retry_at = engine_now(s->f.e) + MEM_RETRY_NS;
	s_timer_update(s);
	if (!ts || s->in_memq)
		return;
	s->in_memq = true;
	s->memq_next = ts->memq;
	ts->memq = s;
}

static void mem_unwait(struct stream *s)
{
	struct tcp_state *ts = s->f.e->tcp;

	s->mem_retry_at = 0;
	if (!s->in_memq || !ts)
		return;
	for (struct stream **p = &ts->memq; *p; p = &(*p)->memq_next)
		if (*p == s) {
			*p = s->memq_next;
			break;
		}
	s->in_memq = false;
}

static void maybe_writable(struct stream *s);

/* Memory came back: every stream that waited for it may try again (those still short wait again). */
static void mem_wake(struct engine *e)
{
	struct tcp_state *ts = e->tcp;
	struct stream *s;

	if (!ts || !ts->memq)
		return;
	s = ts->memq;
	ts->memq = NULL;
	while (s) {
		struct stream *next = s->memq_next;

		s->in_memq = false;
		s->mem_retry_at = 0;
		maybe_writable(s);
		s = next;
	}
}

static void free_slot(struct stream *s, uint32_t i)
{
	struct tslot *sl = &s->slots[i];

	gso_dev__buf_free(s->f.e->tx, &sl->buf);
	memset(sl, 0, sizeof(*sl));
	if ((int)i == s->wslot)
		s->wslot = -1;
}

/* Everything back to the device: the queue's buffers, the one being written. */
static void release_all(struct stream *s)
{
	if (s->fq) {
		int n = gso_flowq__flush(s->fq, s->rel, s->nrel);

		for (int i = 0; i < n; i++)
			if (s->slots[s->rel[i].handle].used)
				free_slot(s, (uint32_t)s->rel[i].handle);
	}
	for (uint32_t i = 0; s->slots && i < s->nslots; i++)
		if (s->slots[i].used)
			free_slot(s, i);
	mem_unwait(s);
	mem_wake(s->f.e);
}

static void close_state(struct stream *s, uint32_t state, int err, const char *why, uint64_t now)
{
	if (finished(s))
		return;
	s->state = state;
	s->st.err = err;
	s->st.why = why;
	if (!s->st.t_end)
		s->st.t_end = now;
	/* A token still in the scheduler finds the stream finished and sends nothing. */
	release_all(s);
	emit(s, GSO_EV_STREAM_CLOSED, err);
}

static void fail(struct stream *s, const char *why, int err, uint64_t now)
{
	close_state(s, GSO_STREAM_FAILED, err, why, now);
}

/* ---- headers ------------------------------------------------------------------------ */

static void base_fields(const struct stream *s, struct gso_tmpl_fields *f)
{
	const struct gso_route *r = &s->f.route;

	f->l3 = r->l3;
	f->l4 = GSO_L4_TCP;
	memcpy(f->eth_dst, r->dst_mac, 6);
	memcpy(f->eth_src, r->src_mac, 6);
	memcpy(f->saddr, r->src, 16);
	memcpy(f->daddr, r->dst, 16);
	f->sport = s->key.our_port;
	f->dport = s->key.peer_port;
	if (r->l3 == GSO_L3_IPV4) {
		f->df = true;
		f->ip_id = s->ip_id;
	}
}

/* ---- the receive window ------------------------------------------------------------- */

/*
 * The window to advertise now, in bytes: the free part of the buffer,
 * in whole units of our scale, and never less than what we advertised
 * before (the right edge does not move back, RFC 7323 section 2.4).  The
 * queue holds one unit more than rcvbuf, so rounding up still fits.
 */
static uint32_t rcv_window_bytes(const struct stream *s)
{
	uint32_t gran = 1u << s->rcv_wscale, cur = 0, w, free, slack;

	if (!s->rq.buf)
		return s->rcvbuf > 65535 ? 65535 : s->rcvbuf;
	free = gsoi_rcvq_free_space(&s->rq);
	slack = s->rq.size - s->rcvbuf;
	w = (free > slack ? free - slack : 0) & ~(gran - 1);
	if (seq_after(s->rcv_right, s->rq.nxt))
		cur = s->rcv_right - s->rq.nxt;
	if (w < cur)
		w = (cur + gran - 1) & ~(gran - 1);
	if (w > (65535u << s->rcv_wscale))
		w = 65535u << s->rcv_wscale;
	return w;
}

/* The window field of a segment we send now; it sets the edge the peer's bytes must stay behind. */
static uint16_t adv_window(struct stream *s)
{
	uint32_t w = rcv_window_bytes(s);

	if (s->rq.buf) {
		s->rcv_right = s->rq.nxt + w;
		s->rcv_wnd = w;
		s->st.rcv_wnd = w;
	}
	return (uint16_t)(w >> s->rcv_wscale);
}

/* The data/ACK template, rebuilt when the timestamps, the ACK or the window change (at most about every ms). */
static int refresh_tmpl(struct stream *s, uint64_t now, bool force)
{
	uint32_t tv = tsval(s, now);
	uint8_t opts[TCP_TS_OPTS_LEN];
	uint16_t win = adv_window(s);
	int err;

	if (!force && s->tmpl.hdr_len && s->tmpl_ack == s->rcv_nxt && s->tmpl_win == win &&
	    (!s->ts_ok || (s->tmpl_tsval == tv && s->tmpl_tsecr == s->ts_recent)))
		return 0;
	GSO_OPTS(gso_tmpl_fields, f, .seq = 0, .ack = s->rcv_nxt, .tcp_flags = GSO_TCP_ACK, .window = win);
	base_fields(s, &f);
	if (s->ts_ok) {
		gsoi_tcp_ts_opts(opts, tv, s->ts_recent);
		f.tcp_opts = opts;
		f.tcp_opts_len = TCP_TS_OPTS_LEN;
	}
	err = gso_tmpl__build(&s->tmpl, &f);
	if (err)
		return err;
	s->tmpl_tsval = tv;
	s->tmpl_tsecr = s->ts_recent;
	s->tmpl_ack = s->rcv_nxt;
	s->tmpl_win = win;
	return 0;
}

/* A control segment, at once (not paced).  0, -EAGAIN/-ENOBUFS/-ENETDOWN (later), or -errno. */
static int submit_now(struct stream *s, const struct gso_tx *tx)
{
	struct engine *e = s->f.e;
	int r;

	if (e->dead)
		return -ENODEV;
	r = e->tx_is_tso ? gso_tso__submit(e->tx, &s->tso, tx, 1) : gso_dev__submit(e->tx, tx, 1);
	if (r == 1)
		return 0;
	if (r == -EAGAIN || r == -ENOBUFS)
		s->st.backpressure++;
	return r < 0 ? r : -EIO;
}

static bool later(int err)
{
	return err == -EAGAIN || err == -ENOBUFS || err == -ENETDOWN;
}

/* A segment that carries our ACK of everything received left: no ACK is owed any more. */
static void acked_all(struct stream *s)
{
	s->ack_owed = 0;
	s->rcv_wup = s->rcv_nxt;
	s->delack_at = 0;
}

/* A header-only segment with `flags` (ACK, FIN|ACK, RST|ACK, a probe) at `seq`. */
static int send_ctl(struct stream *s, uint8_t flags, uint32_t seq, uint64_t now)
{
	struct gso_tx tx = { .tmpl = &s->tmpl, .mss = 536, .flags = (uint8_t)s->tx_flags };
	int err = refresh_tmpl(s, now, false);

	if (err)
		return err;
	gso_tmpl__set_tcp_seq(&s->tmpl, seq);
	/* The setter refuses RST (never on a super-segment); this one is a single header-only segment. */
	s->tmpl.hdr[s->tmpl.l4_off + 13] = flags;
	if (s->f.route.l3 == GSO_L3_IPV4)
		gso_tmpl__set_ip_id(&s->tmpl, s->ip_id);
	err = submit_now(s, &tx);
	gso_tmpl__set_tcp_flags(&s->tmpl, GSO_TCP_ACK);
	if (!err) {
		s->ip_id++;
		acked_all(s); /* it carries our ACK and window */
	}
	return err;
}

/* A pure ACK with SACK blocks for the out-of-order ranges held (RFC 2018: the newest first). */
static int send_sack_ack(struct stream *s, uint64_t now)
{
	uint8_t opts[TCP_ACK_OPTS_MAX];
	uint32_t blocks[RCVQ_MAX_RANGES][2];
	unsigned nb = gsoi_rcvq_sack(&s->rq, blocks, RCVQ_MAX_RANGES);
	unsigned n = gsoi_tcp_ack_opts(opts, s->ts_ok, tsval(s, now), s->ts_recent, (const uint32_t(*)[2])blocks, nb);
	struct gso_tmpl t;
	int err;

	GSO_OPTS(gso_tmpl_fields, f, .seq = ack_seq(s), .ack = s->rcv_nxt, .tcp_flags = GSO_TCP_ACK,
		 .window = adv_window(s), .tcp_opts = opts, .tcp_opts_len = (uint8_t)n);
	base_fields(s, &f);
	err = gso_tmpl__build(&t, &f);
	if (err)
		return err;
	struct gso_tx tx = { .tmpl = &t, .mss = 536, .flags = (uint8_t)s->tx_flags };
	err = submit_now(s, &tx);
	if (!err) {
		s->ip_id++;
		acked_all(s);
	}
	return err;
}

/* An ACK of everything received, now (out-of-order ranges as SACK blocks when agreed). */
static int send_ack(struct stream *s, uint64_t now)
{
	int err = s->sack_ok && s->rq.nranges ? send_sack_ack(s, now) : send_ctl(s, GSO_TCP_ACK, ack_seq(s), now);

	if (!err)
		s->st.acks_sent++;
	return err;
}

static int send_syn(struct stream *s, uint64_t now)
{
	uint8_t opts[TCP_SYN_OPTS_LEN];
	struct gso_tmpl syn;
	uint32_t mss = s->f.route.mtu - s->ip_hdr - 20;
	int err;

	if (s->mss_cap && s->mss_cap < mss)
		mss = s->mss_cap;
	gsoi_tcp_syn_opts(opts, (uint16_t)(mss > 65535 ? 65535 : mss), !(s->flags & GSO_STREAM_F_NO_SACK),
			  !(s->flags & GSO_STREAM_F_NO_TS), tsval(s, now), s->rcv_wscale);
	/* A SYN's window is never scaled. */
	GSO_OPTS(gso_tmpl_fields, f, .seq = s->iss, .window = (uint16_t)(s->rcvbuf > 65535 ? 65535 : s->rcvbuf),
		 .tcp_opts = opts, .tcp_opts_len = TCP_SYN_OPTS_LEN);
	base_fields(s, &f);
	err = gsoi_tcp_ctl_tmpl(&syn, &f, GSO_TCP_SYN);
	if (err)
		return err;
	struct gso_tx tx = { .tmpl = &syn, .mss = 536, .flags = (uint8_t)s->tx_flags };
	err = submit_now(s, &tx);
	if (!err)
		s->ip_id++;
	return err;
}

/* Sequence number of our next pure ACK: snd_nxt, or past the FIN once it is sent. */
static uint32_t ack_seq(const struct stream *s)
{
	if (s->fin_sent)
		return s->fin_seq + 1;
	return s->fq ? gso_flowq__snd_nxt(s->fq) : s->iss + 1;
}

/* ---- timers -------------------------------------------------------------------------- */

static uint64_t rto_ns(const struct stream *s)
{
	struct gso_cc_state cs = { .sz = sizeof(cs) };
	uint64_t r = GSO_RTT_INIT_RTO_NS;

	if (s->cc && !gso_cc__state(s->cc, &cs))
		r = cs.rto_ns;
	r <<= s->backoff;
	return r > MAX_RTO_NS ? MAX_RTO_NS : r;
}

static bool outstanding(const struct stream *s)
{
	if (s->fin_sent && !s->fin_acked)
		return true;
	return s->fq && gso_flowq__unacked_bytes(s->fq);
}

/*
 * The peer owes us an answer (data or our FIN outstanding, a closed
 * window probed): its silence for idle_ns ends the connection.  A quiet
 * connection with nothing in flight is only idle, as in TCP.
 */
static bool waiting_on_peer(const struct stream *s)
{
	return (s->state == GSO_STREAM_ESTABLISHED || s->state == GSO_STREAM_CLOSE_WAIT ||
		s->state == GSO_STREAM_FIN_SENT || s->state == GSO_STREAM_LAST_ACK) &&
	       (outstanding(s) || s->probe_at);
}

/*
 * FIN-WAIT-2's end without the peer's FIN: idle_ns after it was last
 * heard from if it ever sent us data (it may still be sending: a
 * half-close), else LINGER_NS after our FIN's ACK (a sink that never
 * closes).
 */
static uint64_t closing_end(const struct stream *s)
{
	return s->st.rx_bytes ? s->last_heard + s->idle_ns : s->linger_at;
}

/*
 * Since when the peer has owed us an answer: its last segment, or when we
 * began to wait, whichever is later (a keep-alive connection quiet for
 * longer than idle_ns must not fail the moment it sends again).
 */
static uint64_t silent_since(const struct stream *s)
{
	return s->wait_from > s->last_heard ? s->wait_from : s->last_heard;
}

static void s_timer_update(struct stream *s)
{
	uint64_t d = UINT64_MAX;
	uint64_t t[] = { s->syn_at, s->rto_at, s->probe_at, s->retry_at, s->tsq_at, s->delack_at, s->mem_retry_at,
			 s->state == GSO_STREAM_CLOSING ? closing_end(s) : 0 };

	if (!finished(s)) {
		for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
			if (t[i] && t[i] < d)
				d = t[i];
		if (s->need_size)
			d = 0;
		if (waiting_on_peer(s) && silent_since(s) + s->idle_ns < d)
			d = silent_since(s) + s->idle_ns + 1;
	}
	if (d != s->deadline) {
		s->deadline = d;
		gsoi_engine_timer_set(s->f.e, s->f.slot, d);
	}
}

static void check_fq(struct stream *s, uint64_t now)
{
	int err;

	if ((s->flags & GSO_STREAM_F_CHECK) && s->fq && (err = gso_flowq__check(s->fq)))
		fail(s, "flow queue inconsistent", err, now);
}

/* ---- sending data ----------------------------------------------------------------------- */

/*
 * The burst shift and device-queue limit in force (<gso/pacer.h> section
 * 3): TCP Small Queues as Linux had them in 2015 (about 1 ms of data at
 * the pacing rate, at least two super-segments, at most TSQ_MAX_BYTES),
 * unless the engine saw the device send in aggregates and the stream's
 * pacing_shift is the default: then about one aggregation interval per
 * burst and two intervals of data in the device, so that it finds a full
 * aggregate at each opportunity (the 2015 seed).
 */
static void dev_policy(const struct stream *s, uint64_t rate, struct gso_aggr_policy *p)
{
	*p = (struct gso_aggr_policy){ .sz = sizeof(*p) };
	if (gso_aggr__policy(&s->f.e->aggr, rate, s->bo.pacing_shift, s->st.seg_limit, s->st.burst_descs,
			     TSQ_MAX_BYTES, p)) {
		/* Not reachable with the engine's own estimator; the fixed floor if it were. */
		p->pacing_shift = s->bo.pacing_shift ? s->bo.pacing_shift : GSO_BURST_DEF_PACING_SHIFT;
		p->queue_limit = 2ull * s->st.seg_limit;
	}
}

/*
 * Hold back while the device has the policy's limit posted and not
 * completed, so that an asynchronous device (the e1000 model's thread)
 * does not build a deep queue that only inflates the RTT.  Devices that
 * complete inside the submit call (AF_XDP copy mode, the AF_PACKET ring)
 * never hit it.  The limit is in bytes; the device counts descriptors, a
 * full super-segment's worth (burst_descs) per seg_limit bytes.
 */
static bool tsq_full(struct stream *s, const struct gso_aggr_policy *p, uint64_t now)
{
	uint64_t bursts;
	uint32_t inflight;

	if (!s->st.burst_descs)
		return false;
	/* Completions are reaped once a pass; what the device finished since then does not count. */
	gsoi_engine_look(s->f.e, now);
	inflight = gsoi_engine_dev_inflight(s->f.e);
	if (!inflight)
		return false;
	bursts = p->queue_limit / s->st.seg_limit;
	if (bursts < 2)
		bursts = 2;
	return (uint64_t)inflight >= bursts * s->st.burst_descs;
}

static uint64_t pacing_rate(const struct stream *s)
{
	uint64_t rate = gso_cc__pacing_rate(s->cc);

	return s->max_rate && rate > s->max_rate ? s->max_rate : rate;
}

static void maybe_fin(struct stream *s, const struct gso_flowq_info *fi, uint64_t now)
{
	int err;

	if (s->fin_sent || !s->data_done || fi->unsent_bytes || fi->unacked_bytes || s->wslot >= 0)
		return;
	if (!s->st.t_data_acked)
		s->st.t_data_acked = now;
	s->fin_seq = fi->write_seq;
	err = send_ctl(s, GSO_TCP_FIN | GSO_TCP_ACK, s->fin_seq, now);
	if (later(err)) {
		s->retry_at = now + RETRY_NS;
		return;
	}
	if (err) {
		fail(s, "sending the FIN", err, now);
		return;
	}
	s->fin_sent = true;
	s->wait_from = now;
	s->closed_first = !s->peer_fin;
	s->state = s->peer_fin ? GSO_STREAM_LAST_ACK : GSO_STREAM_FIN_SENT;
	s->rto_at = now + rto_ns(s);
}

/*
 * Put the flow's token into the scheduler when cwnd, the window and the
 * device allow a burst: its size now (gso_burst_size) is what the
 * scheduler charges; build() decides at departure what it carries.
 */
static void s_arm(struct stream *s, uint64_t now)
{
	struct gso_flowq_info fi = { .sz = sizeof(fi) };
	struct gso_burst b = { .sz = sizeof(b) };
	struct gso_burst_opts bo;
	struct gso_aggr_policy pol;
	uint64_t rate;
	uint32_t cwnd;
	int segs;

	if ((s->state != GSO_STREAM_ESTABLISHED && s->state != GSO_STREAM_CLOSE_WAIT) || !s->sized || s->f.e->dead)
		return;
	/* Called on every write, send and ACK: an armed flow with work queued is done here. */
	if (s->f.armed && (gso_flowq__lost_pending(s->fq) || gso_flowq__unsent_bytes(s->fq)))
		return;
	gso_flowq__info(s->fq, &fi);
	cwnd = gso_cc__cwnd(s->cc);
	if (!fi.lost_pending && !fi.unsent_bytes) {
		/* Room in cwnd and nothing to send: samples from now on measure us, not the path. */
		if (!s->f.armed && !fi.app_limited && gso_flowq__check_app_limited(s->fq, cwnd) == 1)
			s->st.app_limited_marks++;
		/*
		 * Even while armed: the burst in the engine (paced, or held by
		 * the device) was sized for a retransmission this ACK made
		 * needless, and finds nothing when it leaves; the engine does not
		 * call us back then, and with nothing outstanding no timer would,
		 * so the FIN would wait for the idle timeout.
		 */
		maybe_fin(s, &fi, now);
		return;
	}
	rate = pacing_rate(s);
	if (!s->user_min_segs)
		s->bo.min_segs = gso_cc__min_burst_segs(s->cc); /* BBR's own; 0: the pacer's default */
	if (cwnd > s->st.cwnd_max)
		s->st.cwnd_max = cwnd;
	GSO_OPTS(gso_burst_in, in, .rate = rate, .queued = fi.unsent_bytes + (uint64_t)fi.lost_pending * s->st.mss,
		 .mss = s->st.mss, .hdr_len = s->st.hdr_len, .cwnd = cwnd, .in_flight = fi.in_flight,
		 .peer_wnd = fi.lost_pending ? UINT32_MAX : fi.wnd_left,
		 .dev_max_segs = s->f.e->caps.max_segs_tcp, .dev_max_bytes = s->st.hdr_len + s->st.seg_limit,
		 .flags = fi.in_recovery ? GSO_BURST_IN_RECOVERY : 0);
	{
		struct gso_cc_state cs = { .sz = sizeof(cs) };

		if (!gso_cc__state(s->cc, &cs))
			in.min_rtt_ns = cs.min_rtt_ns;
	}
	dev_policy(s, rate, &pol);
	/* BBR's window holds the two aggregates the limit is sized for (a no-op for the others). */
	gso_cc__set_dev_quantum(s->cc, pol.adapted ? (uint32_t)(pol.queue_limit / 2) : 0);
	bo = s->bo;
	bo.pacing_shift = pol.pacing_shift;
	segs = gso_burst_size(&in, &bo, &b);
	if (segs < 0) {
		fail(s, "burst sizing", segs, now);
		return;
	}
	if (b.limit == GSO_BURST_LIM_QUOTA || b.limit == GSO_BURST_LIM_CWND_DIV)
		s->cwnd_limited = true;
	else if (fi.in_flight * 2 < cwnd)
		s->cwnd_limited = false;
	if (!segs && b.limit == GSO_BURST_LIM_PEER_WND && fi.in_flight < cwnd) {
		/* A window below one segment: the queue's SWS rule decides (and may say probe). */
		segs = 1;
		b.wire_bytes = s->st.mss + s->st.hdr_len;
	} else if (!segs) {
		return;
	}
	if (tsq_full(s, &pol, now)) {
		/* Sleep, not spin: the queue holds more than this wait drains. */
		s->st.tsq_waits++;
		s->tsq_at = now + TSQ_RETRY_NS;
		s_timer_update(s);
		return;
	}
	gsoi_engine_arm(s->f.e, &s->f, rate, b.wire_bytes, (uint32_t)segs, now, false);
}

static int t_build(struct eflow *f, const struct gso_sched_burst *b, struct gso_tx *tx, uint64_t now)
{
	struct stream *s = to_s(f);
	struct gso_flowq_info fi = { .sz = sizeof(fi) };
	struct gso_flowq_tx *t = &s->ptx;
	int err;

	t->sz = sizeof(*t);
	if ((s->state != GSO_STREAM_ESTABLISHED && s->state != GSO_STREAM_CLOSE_WAIT) || !s->sized)
		return -ENODATA;
	gso_flowq__info(s->fq, &fi);
	err = gso_flowq__peek(s->fq, b->segs, t);
	if (err < 0) {
		fail(s, "flow queue peek", err, now);
		return -ENODATA;
	}
	if (!err) {
		/* Closed (or silly) window with nothing in flight: probe it. */
		if ((t->why == GSO_FLOWQ_WHY_WND || t->why == GSO_FLOWQ_WHY_SWS) && !fi.unacked_bytes &&
		    !s->probe_at) {
			s->probe_at = now + rto_ns(s);
			s->wait_from = now;
			s_timer_update(s);
		}
		return -ENODATA;
	}
	if (!(t->flags & GSO_FLOWQ_TX_RETRANS)) {
		/* Our own check of the peer's window, independent of the queue's. */
		int64_t over = (int64_t)(uint32_t)(t->seq + t->len - fi.snd_una) - (int64_t)fi.snd_wnd;
		uint32_t out = t->seq + t->len - fi.snd_una;

		s->st.wnd_checks++;
		if (over > 0)
			s->st.wnd_violations++;
		if (s->st.wnd_checks == 1 || over > s->st.max_over_wnd)
			s->st.max_over_wnd = over;
		if (out > s->st.max_outstanding)
			s->st.max_outstanding = out;
	}
	err = refresh_tmpl(s, now, false);
	if (err) {
		fail(s, "building the header", err, now);
		return -ENODATA;
	}
	gso_tmpl__set_tcp_seq(&s->tmpl, t->seq);
	if (s->f.route.l3 == GSO_L3_IPV4)
		gso_tmpl__set_ip_id(&s->tmpl, s->ip_id);
	*tx = (struct gso_tx){ .tmpl = &s->tmpl, .buf = &s->slots[t->handle].buf, .off = t->off, .len = t->len,
			       .mss = t->mss, .ipid = GSO_IPID_INC, .flags = (uint8_t)s->tx_flags };
	return 0;
}

static void note_burst(struct stream *s, const struct gso_flowq_tx *t)
{
	s->st.supers++;
	s->st.segs += t->segs;
	s->st.burst_hist[t->segs < GSO_STREAM_BURST_HIST ? t->segs : GSO_STREAM_BURST_HIST - 1]++;
	if (t->segs > s->st.burst_max)
		s->st.burst_max = t->segs;
	if (t->flags & GSO_FLOWQ_TX_RETRANS) {
		s->st.retrans_segs += t->segs;
		s->st.retrans_supers++;
	}
}

static void t_sent(struct eflow *f, const struct gso_sched_burst *b, const struct gso_tx *tx, uint64_t now)
{
	struct stream *s = to_s(f);
	uint32_t wire;
	int err;

	(void)tx;
	/* Sized before it was built: a burst that left shorter (wire bytes) gives the pacer back the rest. */
	wire = s->ptx.len + s->ptx.segs * s->st.hdr_len;
	if (b->wire_bytes > wire)
		gso_sched__flow_refund(f->e->sched, f->sched_id, b->wire_bytes - wire);
	s->ip_id = (uint16_t)(s->ip_id + s->ptx.segs);
	f->e->st.frames += s->ptx.segs;
	if (s->tmpl_ack == s->rcv_nxt)
		acked_all(s); /* data carries the ACK (and the window) */
	if (!gso_flowq__packets_out(s->fq)) {
		struct gso_flowq_info fi = { .sz = sizeof(fi) };

		s->wait_from = now;

		/* Sending into an empty pipe: a restart after idle (CA_EVENT_TX_START). */
		if (!gso_flowq__info(s->fq, &fi))
			gso_cc__on_tx_start(s->cc, now, fi.app_limited);
	}
	err = gso_flowq__sent(s->fq, &s->ptx, now);
	if (err) {
		fail(s, "recording a send", err, now);
		return;
	}
	note_burst(s, &s->ptx);
	if (!s->rto_at)
		s->rto_at = now + rto_ns(s);
	check_fq(s, now);
	s_arm(s, now);
	s_timer_update(s);
}

static void t_refused(struct eflow *f, const struct gso_sched_burst *b, int err, uint64_t now)
{
	(void)b;
	fail(to_s(f), "submitting a super-segment", err, now);
}

static void t_ended(struct eflow *f, int err)
{
	struct stream *s = to_s(f);

	fail(s, err == -ENODEV ? "the interface went away" : "the engine was closed", err, engine_now(f->e));
	s_timer_update(s);
}

static void t_neigh(struct eflow *f)
{
	struct stream *s = to_s(f);

	memcpy(s->tmpl.hdr, f->route.dst_mac, 6);
}

static void unhash(struct stream *s);

static void t_free(struct eflow *f)
{
	struct stream *s = to_s(f);

	release_all(s);
	unhash(s);
	if (s->f.e->steer && !s->passive) {
		struct gso_flow fl = { .sz = sizeof(fl), .l3 = s->key.l3, .l4 = GSO_L4_TCP, .sport = s->key.peer_port,
				       .dport = s->key.our_port };

		memcpy(fl.saddr, s->key.peer_addr, 16);
		memcpy(fl.daddr, s->key.our_addr, 16);
		gso_steer__flow_del(s->f.e->steer, &fl);
	}
	if (s->cc)
		gso_cc__destroy(s->cc);
	gso_flowq__destroy(s->fq);
	gsoi_rcvq_free(&s->rq);
	free(s->slots);
	free(s->rel);
	free(s);
}

static void t_timers(struct eflow *f, uint64_t now);
static void t_mtu(struct eflow *f, uint32_t src, uint64_t now);

const struct eflow_ops gsoi_engine_stream_ops = {
	.build = t_build,
	.sent = t_sent,
	.refused = t_refused,
	.ended = t_ended,
	.neigh = t_neigh,
	.free = t_free,
	.timers = t_timers,
	.mtu = t_mtu,
};

/* ---- the handshake ----------------------------------------------------------------------- */

/* The receive queue from the peer's first byte on: rcvbuf and one unit of our scale (adv_window). */
static int rx_init(struct stream *s, uint32_t first)
{
	int err = gsoi_rcvq_init(&s->rq, s->rcvbuf + (1u << s->rcv_wscale), first);

	if (err)
		return err;
	s->rcv_nxt = first;
	s->rcv_wup = first;
	s->rcv_right = first;
	s->quick = QUICK_ACKS;
	s->read_since = true;
	s->st.rcvbuf = s->rcvbuf;
	s->st.rcv_wscale = s->rcv_wscale;
	adv_window(s);
	return 0;
}

/* SYN-ACK: agree on options; the sizing waits until ESTABLISHED was delivered. */
static void establish(struct stream *s, const struct tcp_seg *g, struct gso_dev *rx, uint64_t now)
{
	s->irs = g->seq;
	s->rcv_nxt = g->seq + 1;
	s->ts_ok = !(s->flags & GSO_STREAM_F_NO_TS) && g->has_ts;
	if (s->ts_ok)
		s->ts_recent = g->tsval;
	s->sack_ok = !(s->flags & GSO_STREAM_F_NO_SACK) && g->sack_perm;
	/* Our SYN offered rcv_wscale: it applies both ways only if the peer's SYN-ACK has the option too. */
	if (g->wscale >= 0)
		s->snd_wscale = (uint8_t)(g->wscale > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : g->wscale);
	else
		s->rcv_wscale = 0;
	if (rx_init(s, s->irs + 1)) {
		fail(s, "receive buffer", -ENOMEM, now);
		return;
	}
	s->peer_mss = g->has_mss ? g->mss : 536;
	s->syn_wnd = g->win; /* never scaled in a SYN-ACK */
	if (s->syn_tries == 1 && now > s->syn_ns)
		s->syn_rtt_ns = now - s->syn_ns;
	s->state = GSO_STREAM_ESTABLISHED;
	s->st.t_estab = now;
	s->syn_at = 0;
	s->backoff = 0;
	s->last_heard = now;
	s->need_size = true;
	s_timer_update(s);
	gsoi_engine_emit(s->f.e, &(struct gso_engine_event){ .type = GSO_EV_STREAM_ESTABLISHED, .flow_ctx = s->f.ctx,
							 .stream = (struct gso_stream *)s->f.handle, .dev = rx });
}

/*
 * The segment payload the path MTU, the peer's MSS and the caller's cap
 * allow, less the timestamp option (the device's own limit comes after:
 * gso_dev__max_payload).  false: below Linux's floor (TCP_MIN_MSS 88,
 * less the options): a broken peer or path.
 */
static bool path_mss(const struct stream *s, uint32_t *out)
{
	uint32_t mss = s->f.pmtu > s->ip_hdr + 20 ? s->f.pmtu - s->ip_hdr - 20 : 0;

	if (s->peer_mss < mss)
		mss = s->peer_mss;
	if (s->mss_cap && s->mss_cap < mss)
		mss = s->mss_cap;
	if (mss < GSO_STREAM_MIN_MSS + (s->ts_ok ? TCP_TS_OPTS_LEN : 0))
		return false;
	*out = s->ts_ok ? mss - TCP_TS_OPTS_LEN : mss;
	return true;
}

/*
 * The path MTU moved (engine.h, "Path MTU").  Down: cut at the new MSS
 * and retransmit what was sent too large for it (Linux's tcp_sync_mss and
 * tcp_simple_retransmit; cwnd stays in segments, no congestion response).
 * Up (the interface's MTU rose): larger segments from the next append,
 * up to the peer's MSS.  A stream still in its handshake is sized from
 * the path MTU when it is established.
 */
static void t_mtu(struct eflow *f, uint32_t src, uint64_t now)
{
	struct stream *s = to_s(f);
	uint32_t mss;
	int mp, n;

	if (!s->sized || finished(s))
		goto told;
	if (!path_mss(s, &mss)) {
		fail(s, "the path MTU leaves no room for a segment", -EMSGSIZE, now);
		goto told;
	}
	mp = gso_dev__max_payload(f->e->tx, &s->tmpl, s->tx_flags);
	if (mp > 0 && (uint32_t)mp < mss)
		mss = (uint32_t)mp;
	if (mss == s->st.mss)
		goto told;
	if (mss < s->st.mss) {
		n = gso_flowq__set_mss(s->fq, mss);
		if (n > 0) {
			s->st.pmtu_lost_segs += (uint64_t)n;
			/* Recovery: the retransmissions go first, without waiting for a timeout. */
			if (!s->rto_at)
				s->rto_at = now + rto_ns(s);
		}
	}
	gso_cc__set_mss(s->cc, mss);
	s->st.mss = mss;
	s->st.seg_limit = s->fq_max / mss * mss;
	s_arm(s, now);
	s_timer_update(s);
told:
	/* Last: the application may close the stream from the callback. */
	if (!(s->passive && !s->accepted))
		gsoi_engine_emit(f->e, &(struct gso_engine_event){ .type = GSO_EV_PATH_MTU, .flow_ctx = f->ctx,
								 .stream = (struct gso_stream *)f->handle,
								 .mtu = f->pmtu, .mtu_src = src });
}

/* After ESTABLISHED: size segments on the device, build the queue, CC and pacer. */
static void size_stream(struct stream *s, uint64_t now)
{
	struct engine *e = s->f.e;
	uint32_t max_ip = GSO_MAX_IP_LEN - s->ip_hdr, mss, limit;
	int mp, err;

	s->need_size = false;
	if (!path_mss(s, &mss)) {
		fail(s, "segment size too small (peer MSS or path MTU)", -EINVAL, now);
		return;
	}
	s->st.hdr_len = 14 + s->ip_hdr + 20 + (s->ts_ok ? TCP_TS_OPTS_LEN : 0);
	err = refresh_tmpl(s, now, true);
	if (err) {
		fail(s, "building the header", err, now);
		return;
	}
	/* What the device puts in one frame: a fact it states, not found by trying. */
	mp = gso_dev__max_payload(e->tx, &s->tmpl, s->tx_flags);
	if (mp < 0) {
		fail(s, "segment size on this device", mp, now);
		return;
	}
	if ((uint32_t)mp < mss)
		mss = (uint32_t)mp;
	s->st.mss = mss;
	/* Payload per super-segment: an IP datagram of at most 64 KiB, within one device buffer. */
	limit = max_ip - 20 - (s->ts_ok ? TCP_TS_OPTS_LEN : 0);
	if (e->caps.buf_max && e->caps.buf_max < limit)
		limit = e->caps.buf_max;
	if (limit > 65535)
		limit = 65535;
	s->st.seg_limit = limit / mss * mss;
	s->fq_max = s->st.seg_limit;
	if (!s->st.seg_limit) {
		fail(s, "segment size larger than a device buffer", -EMSGSIZE, now);
		return;
	}
	{
		/* What one full super-segment costs the device, for the small-queue limit. */
		static const uint8_t zeros[65536];
		struct gso_tx_plan plan = { .sz = sizeof(plan) };
		struct gso_tx ptx = { .tmpl = &s->tmpl, .data = zeros, .len = s->st.seg_limit, .mss = mss,
				      .flags = (uint8_t)s->tx_flags };

		if (!gso_dev__plan(e->tx, &ptx, &plan))
			s->st.burst_descs = plan.descs;
	}
	if (!s->notsent_lowat)
		s->notsent_lowat = 4 * s->st.seg_limit;
	GSO_OPTS(gso_flowq_opts, fo, .max_entries = FQ_ENTRIES, .max_bytes = s->st.seg_limit, .isn = s->iss + 1,
		 .flags = s->sack_ok ? 0 : GSO_FLOWQ_F_NO_SACK);
	err = gso_flowq__create(&s->fq, &fo);
	if (err) {
		fail(s, "flow queue", err, now);
		return;
	}
	gso_flowq__set_wnd(s->fq, s->syn_wnd);
	GSO_OPTS(gso_cc_opts, co, .algo = s->cc_algo, .mss = mss, .hdr_len = s->st.hdr_len, .max_rate = s->max_rate,
		 .pacing_shift = s->bo.pacing_shift);
	err = gso_cc__create(&s->cc, &co);
	if (err) {
		fail(s, "congestion control", err, now);
		return;
	}
	if (s->syn_rtt_ns) {
		GSO_OPTS(gso_cc_ack, a, .now_ns = now, .rtt_ns = s->syn_rtt_ns);
		gso_cc__on_ack(s->cc, &a);
		s->st.rtt_samples++;
	}
	s->sized = true;
	if (!s->passive) {
		err = send_ctl(s, GSO_TCP_ACK, s->iss + 1, now);
		if (err && !later(err)) {
			fail(s, "sending the handshake ACK", err, now);
			return;
		}
	}
	emit(s, GSO_EV_STREAM_WRITABLE, 0);
	/* What an accepted stream received before its accept. */
	if (s->ev_readable) {
		s->ev_readable = false;
		emit(s, GSO_EV_STREAM_READABLE, 0);
	}
	if (s->ev_fin) {
		s->ev_fin = false;
		emit(s, GSO_EV_STREAM_PEER_CLOSED, 0);
	}
}

/* ---- ACKs ------------------------------------------------------------------------------ */

static void give_back(struct stream *s, const struct gso_flowq_rel *r)
{
	struct tslot *sl = &s->slots[r->handle];

	if (!sl->used)
		return;
	if (r->done && !sl->writing) {
		free_slot(s, (uint32_t)r->handle);
		return;
	}
	gso_dev__buf_release(s->f.e->tx, &sl->buf, r->upto);
	if (r->done)
		sl->done_early = true;
}

/* A challenge ACK (RFC 5961), or the answer to an out-of-window segment: our SND.NXT and RCV.NXT, throttled. */
static void challenge_ack(struct stream *s, uint64_t now)
{
	if (!gsoi_tcp_oow_allow(&s->oow_at, now)) {
		s->st.challenge_limited++;
		return;
	}
	if (!send_ctl(s, GSO_TCP_ACK, ack_seq(s), now))
		s->st.challenge_acks++;
}

/* The ACK field of an acceptable segment.  Returns false when the segment is to be dropped. */
static bool process_ack(struct stream *s, const struct tcp_seg *g, uint64_t now)
{
	struct gso_flowq_info fi = { .sz = sizeof(fi) };
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	uint32_t ack = g->ack, wnd = (uint32_t)g->win << s->snd_wscale;
	int err;

	gso_flowq__info(s->fq, &fi);
	switch (gsoi_tcp_ack_check(ack, fi.snd_una, s->fin_sent ? s->fin_seq + 1 : fi.snd_nxt, fi.max_wnd)) {
	case TCP_ACK_UNSENT:
		s->st.bad_acks++;
		return false;
	case TCP_ACK_TOO_OLD:
		s->st.rx_old_acks++;
		challenge_ack(s, now);
		return false;
	case TCP_ACK_OK:
		break;
	}
	if (s->fin_sent && ack == s->fin_seq + 1) {
		if (!s->fin_acked) {
			s->fin_acked = true;
			/* FIN-WAIT-2 (after LAST-ACK, input() ends it) */
			if (!s->peer_fin)
				s->state = GSO_STREAM_CLOSING;
			s->linger_at = now + LINGER_NS;
			s->rto_at = 0;
			s->st.t_end = now;
		}
		ack = s->fin_seq;
	}
	/*
	 * TS.Recent from a segment at or before what our last ACK acknowledged
	 * (RFC 7323 section 4.3, Linux's rcv_wup): a delayed ACK echoes the
	 * earliest segment it covers, so the peer's RTT includes the delay.
	 */
	if (s->ts_ok && g->has_ts && !seq_after(g->seq, s->rcv_wup))
		s->ts_recent = g->tsval;
	GSO_OPTS(gso_flowq_ack, a, .now_ns = now, .ack = ack, .wnd = wnd);
	if (g->payload || (g->flags & (GSO_TCP_SYN | GSO_TCP_FIN)))
		a.flags = GSO_FLOWQ_ACK_F_DATA;
	for (unsigned i = 0; s->sack_ok && i < g->nsack; i++) {
		uint32_t b = g->sack[i][0], e = g->sack[i][1];

		/* Blocks past what we sent (or reversed) are the peer's bug: leave them out. */
		if (!seq_after(e, b) || seq_after(e, fi.snd_nxt))
			continue;
		a.sack[a.n_sack].start = b;
		a.sack[a.n_sack].end = e;
		a.n_sack++;
	}
	err = gso_flowq__ack(s->fq, &a, &res, s->rel, s->nrel);
	if (err == -EINVAL) {
		s->st.bad_acks++; /* acknowledges data never sent */
		return false;
	}
	if (err) {
		fail(s, "processing an ACK", err, now);
		return false;
	}
	s->st.acks++;
	for (unsigned i = 0; i < res.n_rel; i++)
		give_back(s, &s->rel[i]);
	if (res.n_rel)
		mem_wake(s->f.e);
	if (res.flags & GSO_FLOWQ_RES_OLD)
		return true;
	s->st.acked += res.acked_bytes;
	if (res.flags & GSO_FLOWQ_RES_DUP)
		s->st.dupacks++;
	s->st.sacked_segs += res.sacked_segs;
	s->st.lost_segs += res.lost_segs;
	if (wnd < s->st.min_wnd)
		s->st.min_wnd = wnd;
	if (wnd > s->st.max_wnd)
		s->st.max_wnd = wnd;
	if (!wnd)
		s->st.zero_wnd_acks++;
	/* A peer that answers is alive, even while its window stays shut. */
	s->last_heard = now;
	if (res.flags & GSO_FLOWQ_RES_ADVANCED)
		s->backoff = 0;
	if (wnd && s->probe_at) {
		s->probe_at = 0;
		s->backoff = 0;
	}
	/* BBR takes every ACK (bbr_main runs per ACK); Reno and CUBIC those that deliver. */
	if (res.delivered_segs || res.rtt_ns || s->cc_algo == GSO_CC_BBR) {
		struct gso_flowq_info after = { .sz = sizeof(after) };
		struct gso_rate_sample rs = { .sz = sizeof(rs) };

		gso_flowq__info(s->fq, &after);
		gso_flowq__rate_sample(s->fq, &rs);
		GSO_OPTS(gso_cc_ack, ca, .now_ns = now, .rtt_ns = res.rtt_ns, .acked_segs = res.delivered_segs,
			 .packets_out = after.in_flight, .rs = &rs,
			 .flags = (s->cwnd_limited ? 0 : GSO_CC_ACK_NOT_CWND_LIMITED) |
				  (after.in_recovery ? GSO_CC_ACK_RECOVERY : 0));
		gso_cc__on_ack(s->cc, &ca);
		if (res.rtt_ns)
			s->st.rtt_samples++;
	}
	if (res.lost_segs) {
		gso_cc__on_loss(s->cc, now, res.lost_sent_ns);
		if (res.flags & GSO_FLOWQ_RES_RECOVERY)
			s->st.fast_recov++;
	}
	/* The retransmission timer restarts on progress and stops with nothing outstanding. */
	if ((res.flags & GSO_FLOWQ_RES_ADVANCED) || !outstanding(s))
		s->rto_at = outstanding(s) ? now + rto_ns(s) : 0;
	check_fq(s, now);
	if (res.acked_bytes)
		emit(s, GSO_EV_STREAM_ACKED, 0);
	return true;
}

/* The writer waits: tell it when the queue or the device memory has room again. */
static void maybe_writable(struct stream *s)
{
	if (!s->want_write || !s->sized || s->data_done || finished(s))
		return;
	if (gso_flowq__unsent_bytes(s->fq) >= s->notsent_lowat)
		return;
	s->want_write = false;
	emit(s, GSO_EV_STREAM_WRITABLE, 0);
}

static void input(struct stream *s, const uint8_t *frame, const struct tcp_seg *g, struct gso_dev *rx,
		  uint64_t now)
{
	if (s->state == GSO_STREAM_SYN_SENT) {
		/* In SYN-SENT only an RST acknowledging our SYN counts (RFC 793). */
		if (g->flags & GSO_TCP_RST) {
			if (g->ack == s->iss + 1)
				fail(s, "connection refused", -ECONNREFUSED, now);
		} else if ((g->flags & (GSO_TCP_SYN | GSO_TCP_ACK)) == (GSO_TCP_SYN | GSO_TCP_ACK) &&
			   g->ack == s->iss + 1) {
			establish(s, g, rx, now);
		}
		return;
	}
	if (s->rq.buf)
		s->rcv_wnd = seq_after(s->rcv_right, s->rcv_nxt) ? s->rcv_right - s->rcv_nxt : 0;
	/*
	 * Synchronized from here on: a segment must fall in our window, and
	 * only an RST at exactly RCV.NXT resets (RFC 5961).  What an
	 * attacker who cannot see the flow can guess at best earns the peer
	 * a challenge ACK, which a real peer that lost its state answers
	 * with an RST at the right sequence number.
	 */
	switch (gsoi_tcp_rx_check(g, s->rcv_nxt, s->rcv_wnd)) {
	case TCP_RX_RESET:
		if (s->state == GSO_STREAM_CLOSING) {
			/* Everything we sent, FIN included, was acknowledged; what we receive ends in a reset. */
			s->rx_reset = true;
			close_state(s, GSO_STREAM_DONE, 0, NULL, now);
		} else {
			fail(s, "connection reset by the peer", -ECONNRESET, now);
		}
		return;
	case TCP_RX_DROP:
		s->st.rx_rst_ignored++;
		return;
	case TCP_RX_CHALLENGE:
		/* A SYN-ACK again (our handshake ACK was lost) is answered the same way: with an ACK. */
		if (g->flags & GSO_TCP_RST)
			s->st.rx_rst_challenged++;
		else
			s->st.rx_syn_challenged++;
		if (s->sized || s->passive)
			challenge_ack(s, now);
		return;
	case TCP_RX_DUPACK:
		s->st.rx_out_of_window++;
		/*
		 * Data outside the window (a retransmission of what we have, a
		 * probe of a closed window) gets its ACK at once, as Linux's
		 * tcp_oow_rate_limited() lets it; only a pure ACK is throttled.
		 */
		if (g->payload && (s->sized || s->passive)) {
			if (!seq_after(g->seq + g->payload, s->rcv_nxt))
				s->st.rx_dup_segs++;
			send_ack(s, now);
		} else if (s->sized || s->passive) {
			challenge_ack(s, now);
		}
		return;
	case TCP_RX_ACCEPT:
		break;
	}
	if (!(g->flags & GSO_TCP_ACK))
		return; /* RFC 793: without ACK, drop */
	if (s->sized) {
		if (!process_ack(s, g, now) || finished(s))
			return;
	} else {
		/* Accepted but not sized yet (or not accepted): nothing of ours outstanding but the SYN-ACK. */
		if (s->ts_ok && g->has_ts && !seq_after(g->seq, s->rcv_wup))
			s->ts_recent = g->tsval;
		s->syn_wnd = (uint32_t)g->win << s->snd_wscale; /* the window the queue starts with */
		s->last_heard = now;
	}
	if (s->fin_acked && s->peer_fin) {
		/* Our FIN's ACK after theirs (LAST-ACK, or a simultaneous close): the end. */
		ended_clean(s, now);
		return;
	}
	if (g->payload || (g->flags & GSO_TCP_FIN)) {
		rx_data(s, frame, g, now);
		if (finished(s))
			return;
	}
	maybe_writable(s);
	s_arm(s, now);
}

/* ---- receiving ---------------------------------------------------------------------- */

/* Everything, FIN included, was acknowledged both ways. */
static void ended_clean(struct stream *s, uint64_t now)
{
	if (s->closed_first) {
		/* We closed first: the 4-tuple stays in TIME_WAIT, answered there. */
		struct tw_entry t = { .snd_nxt = s->fin_seq + 1, .rcv_nxt = s->rcv_nxt, .ts = s->ts_ok,
				      .ts_off = s->ts_off, .ts_recent = s->ts_recent };

		t.peer.key = s->key;
		memcpy(t.peer.our_mac, s->f.route.src_mac, 6);
		memcpy(t.peer.peer_mac, s->f.route.dst_mac, 6);
		if (!gsoi_tw_add(s->f.e, &t, now))
			unhash(s);
	}
	close_state(s, GSO_STREAM_DONE, 0, NULL, now);
}

static void readable(struct stream *s)
{
	if (!s->read_since)
		return;
	s->read_since = false;
	if (s->passive && !s->accepted)
		s->ev_readable = true;
	else
		emit(s, GSO_EV_STREAM_READABLE, 0);
}

/* The peer's FIN, with every byte before it in: no more data comes. */
static void peer_closed(struct stream *s, uint64_t now)
{
	s->peer_fin = true;
	s->rcv_nxt = s->rq.nxt + 1;
	if (!s->fin_sent)
		s->closed_first = false;
	send_ack(s, now);
	switch (s->state) {
	case GSO_STREAM_ESTABLISHED:
		s->state = GSO_STREAM_CLOSE_WAIT;
		break;
	case GSO_STREAM_CLOSING:
		/* FIN-WAIT-2: ours was acknowledged already. */
		emit(s, GSO_EV_STREAM_PEER_CLOSED, 0);
		ended_clean(s, now);
		return;
	default:
		break; /* FIN-WAIT-1: ends when ours is acknowledged */
	}
	if (s->passive && !s->accepted)
		s->ev_fin = true;
	emit(s, GSO_EV_STREAM_PEER_CLOSED, 0);
	readable(s);
}

/*
 * The payload and FIN of an acceptable segment: into the receive queue,
 * then the ACK as Linux would send it (engine.h, "Receiving").
 */
static void rx_data(struct stream *s, const uint8_t *frame, const struct tcp_seg *g, uint64_t now)
{
	struct rcvq_res res = { 0 };
	bool now_ack = false;

	if (s->peer_fin) {
		/* Past the peer's FIN everything is a retransmission: say where we are. */
		s->st.rx_dup_segs++;
		send_ack(s, now);
		return;
	}
	if (g->payload) {
		gsoi_rcvq_put(&s->rq, g->seq, frame + g->data_off, g->payload, s->rcv_right, &res);
		s->st.rx_segs++;
		s->st.rx_beyond_wnd += res.beyond;
		if (res.ooo_held)
			s->st.rx_ooo_segs++;
		if (res.ooo_dropped)
			s->st.rx_ooo_dropped++;
		if (res.dup)
			s->st.rx_dup_segs++;
		if (g->payload > s->rcv_mss)
			s->rcv_mss = g->payload;
		if (res.advanced) {
			s->st.rx_bytes += res.advanced;
			s->rcv_nxt = s->rq.nxt;
			s->ack_owed += res.advanced;
		}
		/* Out of order, a hole filled, old or cut bytes: the peer must hear at once (fast retransmit, SACK). */
		now_ack = res.ooo_held || res.ooo_dropped || res.dup || res.beyond || res.hole_filled ||
			  s->rq.nranges;
	}
	if ((g->flags & GSO_TCP_FIN) && !res.beyond && !s->fin_known) {
		s->fin_known = true;
		s->peer_fin_seq = g->seq + g->payload;
		/* A FIN past a hole is out of order too: a duplicate ACK at once (Linux queues it out of order). */
		if (s->rq.nxt != s->peer_fin_seq)
			now_ack = true;
	}
	if (s->fin_known && s->rq.nxt == s->peer_fin_seq) {
		peer_closed(s, now);
		return;
	}
	if (res.advanced)
		readable(s);
	if (!now_ack && s->ack_owed) {
		if (s->quick) {
			s->quick--;
			now_ack = true;
		} else if (s->ack_owed > s->rcv_mss) {
			/* More than one full-sized segment unacknowledged (Linux's __tcp_ack_snd_check). */
			now_ack = true;
		} else if (!s->delack_at) {
			s->delack_at = now + DELACK_NS;
		}
	}
	if (now_ack)
		send_ack(s, now);
}

/* After a read: a window that grew enough is worth telling the peer about (a window update). */
static void after_read(struct stream *s, uint64_t now)
{
	uint32_t cur = seq_after(s->rcv_right, s->rq.nxt) ? s->rcv_right - s->rq.nxt : 0;
	uint32_t next = rcv_window_bytes(s), mss = s->rcv_mss ? s->rcv_mss : 536;

	s->read_since = true;
	if (finished(s) || s->peer_fin || !next)
		return;
	/* Reopening a window below two segments, or growing it by half the buffer (Linux: when it doubles). */
	if ((cur < 2 * mss && next >= 2 * mss) || next - cur >= s->rcvbuf / 2) {
		if (!send_ack(s, now))
			s->st.wnd_updates++;
	}
}

static int read_state(const struct stream *s)
{
	if (gsoi_rcvq_readable(&s->rq))
		return 1;
	if (s->peer_fin)
		return 0;
	if (s->rx_reset)
		return -ECONNRESET;
	if (s->state == GSO_STREAM_FAILED)
		return s->st.err ? s->st.err : -ECONNRESET;
	if (finished(s))
		return 0;
	return -EAGAIN;
}

/* ---- lookup -------------------------------------------------------------------------------- */

static bool key_eq(const struct tcp_key *a, const struct tcp_key *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static struct stream **bucket(struct engine *e, const struct tcp_key *k)
{
	return &e->hash[gsoi_tcp_key_hash(k) & e->hash_mask];
}

static struct stream *lookup(struct engine *e, const struct tcp_key *k)
{
	for (struct stream *s = *bucket(e, k); s; s = s->hnext)
		if (key_eq(&s->key, k))
			return s;
	return NULL;
}

int gsoi_tcp_icmp_flow(struct engine *e, const struct icmp_err *ie, const uint8_t *frame, uint32_t len,
		       struct eflow **out)
{
	size_t alen = ie->l3 == GSO_L3_IPV6 ? 16 : 4;
	struct tcp_key k = { .l3 = ie->l3, .peer_port = ie->rport, .our_port = ie->lport,
			     .vlan = ie->vlan ? (uint16_t)(0x8000 | ie->vlan) : 0 };
	uint32_t una, nxt;
	struct stream *s;

	memcpy(k.peer_addr, ie->remote, alen);
	memcpy(k.our_addr, ie->local, alen);
	s = lookup(e, &k);
	if (!s) {
		/* In a port, another queue's stream may own it: the port hands the frame over. */
		if (e->port && e->port->foreign(e->port_ctx, &k, frame, len))
			return -EXDEV;
		return 0;
	}
	if (finished(s))
		return 0;
	/* tcp_v4_err(): the quoted sequence number must be in flight, SND.UNA <= seq <= SND.NXT. */
	if (s->fq) {
		nxt = gso_flowq__snd_nxt(s->fq);
		una = nxt - gso_flowq__unacked_bytes(s->fq);
	} else {
		una = s->iss;
		nxt = s->iss + 1;
	}
	if (ie->seq - una > nxt - una)
		return -ERANGE;
	*out = &s->f;
	return 1;
}

static void unhash(struct stream *s)
{
	struct stream **p = bucket(s->f.e, &s->key);

	for (; *p; p = &(*p)->hnext)
		if (*p == s) {
			*p = s->hnext;
			if (s->f.e->port)
				s->f.e->port->stream_removed(s->f.e->port_ctx, &s->key);
			return;
		}
}

void gsoi_engine_stream_input(struct engine *e, struct gso_dev *rx, const uint8_t *frame, uint32_t len,
			      uint64_t now)
{
	struct tcp_key k;
	struct tcp_seg g;
	struct stream *s;

	if (gsoi_tcp_frame_key(frame, len, &k)) {
		/* Not TCP: an ICMP error about one of our flows, or nobody's. */
		if (!gsoi_engine_icmp_input(e, frame, len, now))
			e->st.rx_other++;
		return;
	}
	/* As the kernel does, before any socket sees it: a frame the checksums refuse has no flow. */
	switch (gsoi_rx_frame_csum(frame, len)) {
	case RX_CSUM_BAD:
		e->st.rx_bad_csum++;
		return;
	case RX_CSUM_PARTIAL:
		e->st.rx_csum_partial++;
		break;
	case RX_CSUM_OK:
		break;
	}
	if (!(s = lookup(e, &k))) {
		/* TIME_WAIT or a half-open connection here first: a frame handed over for it lands here too. */
		if (e->tcp && gsoi_tcp_unowned_input(e, rx, frame, len, &k, now, true))
			return;
		/* In a port, another queue's stream may own it (its ACKs arrive where the peer chose). */
		if (e->port && e->port->foreign(e->port_ctx, &k, frame, len))
			return;
		/* A listener's: a SYN, a cookie's ACK, or no one's (an RST). */
		if (e->tcp && gsoi_tcp_unowned_input(e, rx, frame, len, &k, now, false))
			return;
		e->st.rx_other++;
		return;
	}
	if (gsoi_tcp_frame_parse(frame, len, &g)) {
		s->st.rx_bad++;
		return;
	}
	if (finished(s))
		return;
	input(s, frame, &g, rx, now);
	s_timer_update(s);
}

void gsoi_stream_segment(struct stream *s, struct gso_dev *rx, const uint8_t *frame, const struct tcp_seg *g,
			 uint64_t now)
{
	if (finished(s))
		return;
	input(s, frame, g, rx, now);
	s_timer_update(s);
}

/* ---- timers --------------------------------------------------------------------------------- */

static void syn_timer(struct stream *s, uint64_t now)
{
	int err;

	if (now < s->syn_at)
		return;
	if (s->syn_tries >= SYN_TRIES || now - s->syn_ns > s->idle_ns) {
		fail(s, "no SYN-ACK", -ETIMEDOUT, now);
		return;
	}
	err = send_syn(s, now);
	if (err && !later(err)) {
		fail(s, "sending the SYN", err, now);
		return;
	}
	if (!err) {
		s->st.syn_retries++;
		s->syn_tries++;
	}
	s->syn_at = now + (err ? RETRY_NS : SYN_RTO_NS << (s->syn_tries - 1));
}

static void rto_timer(struct stream *s, uint64_t now)
{
	if (!outstanding(s)) {
		s->rto_at = 0;
		return;
	}
	s->st.rto++;
	if (s->backoff < MAX_BACKOFF)
		s->backoff++;
	if (s->fin_sent && !s->fin_acked) {
		send_ctl(s, GSO_TCP_FIN | GSO_TCP_ACK, s->fin_seq, now);
	} else {
		gso_flowq__timeout(s->fq);
		gso_cc__on_rto(s->cc, now);
		check_fq(s, now);
	}
	s->rto_at = now + rto_ns(s);
}

static void probe_timer(struct stream *s, uint64_t now)
{
	struct gso_flowq_info fi = { .sz = sizeof(fi) };

	gso_flowq__info(s->fq, &fi);
	if (fi.unacked_bytes || (fi.wnd_left && fi.wnd_left * 2 >= fi.max_wnd)) {
		s->probe_at = 0;
		return;
	}
	/* An old sequence number: the peer answers with its window. */
	s->st.probes++;
	send_ctl(s, GSO_TCP_ACK, fi.snd_una - 1, now);
	if (s->backoff < MAX_BACKOFF)
		s->backoff++;
	s->probe_at = now + rto_ns(s);
}

static void t_timers(struct eflow *f, uint64_t now)
{
	struct stream *s = to_s(f);

	s->deadline = UINT64_MAX; /* the engine took it out of the heap */
	if (finished(s))
		return;
	if (s->need_size)
		size_stream(s, now);
	if (finished(s))
		goto out;
	if (s->delack_at && now >= s->delack_at) {
		s->delack_at = 0;
		if (s->ack_owed && !send_ack(s, now))
			s->st.acks_delayed++;
	}
	if (s->state == GSO_STREAM_SYN_SENT) {
		syn_timer(s, now);
	} else if (s->state == GSO_STREAM_CLOSING) {
		if (now >= closing_end(s))
			close_state(s, GSO_STREAM_DONE, 0, NULL, now); /* the peer's FIN is a courtesy, not a result */
	} else if (waiting_on_peer(s) && now - silent_since(s) > s->idle_ns) {
		fail(s, "the peer went silent", -ETIMEDOUT, now);
	} else if (s->sized) {
		if (s->rto_at && now >= s->rto_at)
			rto_timer(s, now);
		if (s->probe_at && now >= s->probe_at)
			probe_timer(s, now);
		if (s->retry_at && now >= s->retry_at)
			s->retry_at = 0;
		if (s->tsq_at && now >= s->tsq_at)
			s->tsq_at = 0;
		if (s->mem_retry_at && now >= s->mem_retry_at)
			mem_unwait(s); /* maybe_writable() tells the writer to try again */
		maybe_writable(s);
		s_arm(s, now);
	}
out:
	s_timer_update(s);
}

/* ---- the API ---------------------------------------------------------------------------------- */

static uint32_t random32(void)
{
	uint32_t v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		v = (uint32_t)(uintptr_t)&v ^ (uint32_t)gso_evloop_now_ns();
	return v;
}

static int steer_add(struct stream *s)
{
	struct gso_flow fl = { .sz = sizeof(fl), .l3 = s->key.l3, .l4 = GSO_L4_TCP, .sport = s->key.peer_port,
			       .dport = s->key.our_port };

	if (!s->f.e->steer)
		return 0;
	memcpy(fl.saddr, s->key.peer_addr, 16);
	memcpy(fl.daddr, s->key.our_addr, 16);
	return gso_steer__flow_add(s->f.e->steer, &fl);
}

_Static_assert(TCP_TS_OPTS_LEN == GSO_STREAM_TS_LEN, "engine.h says what timestamps take");

int gso_stream__connect(struct gso_stream **out, struct gso_engine *h, const struct gso_stream_opts *o)
{
	struct engine *e = gsoi_engine_of(h);
	const struct gso_route *rt;
	struct stream *s;
	uint64_t now;
	size_t alen;
	int err;

	if (!h || !o || !out || !GSO_OPTS_VALID(gso_stream_opts, o))
		return -EINVAL;
	if (!e)
		return -EBADF;
	rt = GSO_OPTS_GET(o, route, (const struct gso_route *)NULL);
	if (!rt || rt->sz <= sizeof(size_t) || (rt->l3 != GSO_L3_IPV4 && rt->l3 != GSO_L3_IPV6) ||
	    !GSO_OPTS_GET(o, sport, 0) || !GSO_OPTS_GET(o, dport, 0) ||
	    (GSO_OPTS_GET(o, flags, 0u) & ~GSO_STREAM_F_KNOWN) || GSO_OPTS_GET(o, cc_algo, 0u) > GSO_CC_BBR ||
	    (GSO_OPTS_GET(o, mss, 0u) &&
	     GSO_OPTS_GET(o, mss, 0u) < GSO_STREAM_MIN_MSS +
						(GSO_OPTS_GET(o, flags, 0u) & GSO_STREAM_F_NO_TS ? 0 : GSO_STREAM_TS_LEN)) ||
	    (GSO_OPTS_GET(o, rcvbuf, 0u) &&
	     (GSO_OPTS_GET(o, rcvbuf, 0u) < GSO_STREAM_MIN_RCVBUF || GSO_OPTS_GET(o, rcvbuf, 0u) > GSO_STREAM_MAX_RCVBUF)))
		return -EINVAL;
	if (e->ifindex && rt->ifindex && rt->ifindex != e->ifindex)
		return -EINVAL;
	err = engine_thread_ok(e);
	if (err)
		return err;
	if (e->dead)
		return -ENODEV;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(&s->f.route, rt, rt->sz < sizeof(s->f.route) ? rt->sz : sizeof(s->f.route));
	s->f.route.sz = sizeof(s->f.route);
	if (!s->f.route.mtu)
		s->f.route.mtu = e->link_mtu;
	alen = rt->l3 == GSO_L3_IPV6 ? 16 : 4;
	s->key.l3 = rt->l3;
	memcpy(s->key.peer_addr, s->f.route.dst, alen);
	memcpy(s->key.our_addr, s->f.route.src, alen);
	s->key.peer_port = GSO_OPTS_GET(o, dport, 0);
	s->key.our_port = GSO_OPTS_GET(o, sport, 0);
	if (lookup(e, &s->key)) {
		free(s);
		return -EEXIST;
	}
	s->flags = GSO_OPTS_GET(o, flags, 0u);
	s->cc_algo = GSO_OPTS_GET(o, cc_algo, 0u);
	s->user_min_segs = GSO_OPTS_GET(o, min_segs, 0u) != 0;
	s->mss_cap = GSO_OPTS_GET(o, mss, 0u);
	s->max_rate = GSO_OPTS_GET(o, max_rate, (uint64_t)0);
	s->tx_flags = GSO_OPTS_GET(o, tx_flags, 0u);
	s->notsent_lowat = GSO_OPTS_GET(o, notsent_lowat, 0u);
	s->idle_ns = GSO_OPTS_GET(o, idle_ns, (uint64_t)0) ?: GSO_STREAM_DEF_IDLE_NS;
	s->rcvbuf = GSO_OPTS_GET(o, rcvbuf, 0u) ?: GSO_STREAM_DEF_RCVBUF;
	s->rcv_wscale = gsoi_tcp_wscale_for(s->rcvbuf);
	s->bo = (struct gso_burst_opts){ .sz = sizeof(s->bo), .pacing_shift = GSO_OPTS_GET(o, pacing_shift, 0u),
					 .min_segs = GSO_OPTS_GET(o, min_segs, 0u),
					 .win_divisor = GSO_OPTS_GET(o, win_divisor, 0u) };
	s->iss = GSO_OPTS_GET(o, isn, 0u) ?: random32();
	s->ts_off = random32();
	s->ip_id = (uint16_t)random32();
	s->ip_hdr = rt->l3 == GSO_L3_IPV4 ? 20 : 40;
	s->wslot = -1;
	s->deadline = UINT64_MAX;
	s->nslots = FQ_ENTRIES;
	s->slots = calloc(s->nslots, sizeof(*s->slots));
	s->nrel = FQ_ENTRIES + 1;
	s->rel = calloc(s->nrel, sizeof(*s->rel));
	if (!s->slots || !s->rel) {
		err = -ENOMEM;
		goto fail;
	}
	s->st.min_wnd = UINT32_MAX;
	s->f.follow = true;
	err = gsoi_engine_flow_add(e, &s->f, &gsoi_engine_stream_ops, false, GSO_OPTS_GET(o, ctx, (void *)NULL),
				   HANDLE_STREAM);
	if (err)
		goto fail;
	err = steer_add(s);
	if (err && err != -EEXIST) {
		gsoi_engine_flow_del(e, &s->f);
		goto fail;
	}
	s->tso.sz = sizeof(s->tso);
	s->f.tso = &s->tso;
	s->hnext = *bucket(e, &s->key);
	*bucket(e, &s->key) = s;
	/* Before the SYN leaves: the other queues must know the owner when the SYN-ACK comes. */
	if (e->port)
		e->port->stream_added(e->port_ctx, &s->key);
	now = engine_now(e);
	s->st.t_start = now;
	s->state = GSO_STREAM_SYN_SENT;
	err = send_syn(s, now);
	if (err && !later(err)) {
		gsoi_engine_flow_del(e, &s->f);
		t_free(&s->f);
		return err;
	}
	s->syn_ns = now;
	s->syn_tries = 1;
	s->syn_at = now + (err ? RETRY_NS : SYN_RTO_NS);
	s->last_heard = now;
	s_timer_update(s);
	*out = (struct gso_stream *)s->f.handle;
	return 0;
fail:
	free(s->slots);
	free(s->rel);
	free(s);
	return err;
}

/*
 * The flow of handle `h` for a call on it: 0 and *out, -EINVAL (NULL),
 * -EBADF (closed, or its engine destroyed), -EPERM (another thread runs
 * its engine).
 */
static inline __attribute__((always_inline)) int get(const struct gso_stream *h, struct stream **out)
{
	struct eflow *f = NULL;
	int err = gsoi_flow_get((uintptr_t)h, HANDLE_STREAM, &f);

	if (f)
		*out = to_s(f);
	return err;
}

/* ---- streams of a listener (tcp_conn_internal.h) ------------------------------------------ */

static int alloc_parts(struct stream *s)
{
	s->wslot = -1;
	s->deadline = UINT64_MAX;
	s->nslots = FQ_ENTRIES;
	s->slots = calloc(s->nslots, sizeof(*s->slots));
	s->nrel = FQ_ENTRIES + 1;
	s->rel = calloc(s->nrel, sizeof(*s->rel));
	s->st.min_wnd = UINT32_MAX;
	return s->slots && s->rel ? 0 : -ENOMEM;
}

int gsoi_stream_passive(struct engine *e, const struct passive_open *p, struct stream **out)
{
	size_t alen = p->peer.key.l3 == GSO_L3_IPV6 ? 16 : 4;
	struct gso_route *r;
	struct stream *s;
	uint64_t now = engine_now(e);
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = alloc_parts(s);
	if (err)
		goto fail;
	/* Replies go where the SYN came from (engine.h, "Listeners"): no route lookup. */
	r = &s->f.route;
	r->sz = sizeof(*r);
	r->l3 = p->peer.key.l3;
	r->ifindex = e->ifindex;
	r->mtu = e->link_mtu ? e->link_mtu : 1500;
	memcpy(r->src, p->peer.key.our_addr, alen);
	memcpy(r->dst, p->peer.key.peer_addr, alen);
	memcpy(r->src_mac, p->peer.our_mac, 6);
	memcpy(r->dst_mac, p->peer.peer_mac, 6);
	s->key = p->peer.key;
	s->passive = true;
	s->flags = p->flags;
	s->mss_cap = p->mss_cap;
	s->idle_ns = GSO_STREAM_DEF_IDLE_NS;
	s->iss = p->iss;
	s->irs = p->irs;
	s->ts_ok = p->ts_ok;
	s->ts_recent = p->ts_recent;
	s->ts_off = p->ts_off;
	s->sack_ok = p->sack_ok;
	s->snd_wscale = p->snd_wscale >= 0 ? (uint8_t)p->snd_wscale : 0;
	s->rcv_wscale = p->snd_wscale >= 0 ? p->rcv_wscale : 0;
	s->peer_mss = p->peer_mss;
	s->syn_rtt_ns = p->syn_rtt_ns;
	s->rcvbuf = p->rcvbuf ? p->rcvbuf : GSO_STREAM_DEF_RCVBUF;
	s->ip_id = (uint16_t)random32();
	s->ip_hdr = r->l3 == GSO_L3_IPV4 ? 20 : 40;
	s->bo.sz = sizeof(s->bo);
	err = rx_init(s, p->irs + 1);
	if (err)
		goto fail;
	err = gsoi_engine_flow_add(e, &s->f, &gsoi_engine_stream_ops, false, NULL, HANDLE_STREAM);
	if (err)
		goto fail;
	s->tso.sz = sizeof(s->tso);
	s->f.tso = &s->tso;
	s->hnext = *bucket(e, &s->key);
	*bucket(e, &s->key) = s;
	if (e->port)
		e->port->stream_added(e->port_ctx, &s->key);
	s->state = GSO_STREAM_ESTABLISHED;
	s->st.t_start = s->st.t_estab = now;
	s->last_heard = now;
	s_timer_update(s);
	*out = s;
	return 0;
fail:
	gsoi_rcvq_free(&s->rq);
	free(s->slots);
	free(s->rel);
	free(s);
	return err;
}

int gsoi_stream_accept(struct stream *s, const struct gso_stream_opts *o, uintptr_t *handle)
{
	if (o && ((GSO_OPTS_GET(o, flags, 0u) & ~GSO_STREAM_F_KNOWN) || GSO_OPTS_GET(o, cc_algo, 0u) > GSO_CC_BBR))
		return -EINVAL;
	if (o) {
		s->flags |= GSO_OPTS_GET(o, flags, 0u) & GSO_STREAM_F_CHECK;
		s->cc_algo = GSO_OPTS_GET(o, cc_algo, 0u);
		s->user_min_segs = GSO_OPTS_GET(o, min_segs, 0u) != 0;
		s->max_rate = GSO_OPTS_GET(o, max_rate, (uint64_t)0);
		s->tx_flags = GSO_OPTS_GET(o, tx_flags, 0u);
		s->notsent_lowat = GSO_OPTS_GET(o, notsent_lowat, 0u);
		s->idle_ns = GSO_OPTS_GET(o, idle_ns, (uint64_t)0) ?: GSO_STREAM_DEF_IDLE_NS;
		s->bo = (struct gso_burst_opts){ .sz = sizeof(s->bo), .pacing_shift = GSO_OPTS_GET(o, pacing_shift, 0u),
						 .min_segs = GSO_OPTS_GET(o, min_segs, 0u),
						 .win_divisor = GSO_OPTS_GET(o, win_divisor, 0u) };
		s->f.ctx = GSO_OPTS_GET(o, ctx, (void *)NULL);
	}
	s->accepted = true;
	/*
	 * Sized on the next timer run, as a connected stream after
	 * ESTABLISHED: then WRITABLE, and READABLE / PEER_CLOSED for what came
	 * before the accept.  Not from here: the caller does not have the
	 * handle until this call returns.
	 */
	s->need_size = true;
	s_timer_update(s);
	*handle = s->f.handle;
	return 0;
}

bool gsoi_stream_gone(const struct stream *s)
{
	return finished(s);
}

void gsoi_stream_abort(struct stream *s, bool reset)
{
	struct engine *e = s->f.e;

	if (reset && !finished(s) && !e->dead)
		send_ctl(s, GSO_TCP_RST | GSO_TCP_ACK, ack_seq(s), engine_now(e));
	gsoi_engine_flush_flow_events(e, &s->f);
	gsoi_engine_flow_del(e, &s->f);
	t_free(&s->f);
}

/* ---- reading -------------------------------------------------------------------------------- */

int gso_stream__read(struct gso_stream *h, void *buf, uint32_t len)
{
	struct stream *s;
	uint32_t n;
	int err;

	if (!h || (!buf && len))
		return -EINVAL;
	err = get(h, &s);
	if (err)
		return err;
	if (!s->rq.buf)
		return finished(s) ? read_state(s) : -EAGAIN;
	err = read_state(s);
	if (err <= 0) {
		s->read_since = true;
		return err;
	}
	if (!len)
		return 0;
	n = gsoi_rcvq_read(&s->rq, buf, len > INT32_MAX ? INT32_MAX : len);
	s->st.rx_read += n;
	after_read(s, engine_now(s->f.e));
	s_timer_update(s);
	return (int)n;
}

int gso_stream__peek(struct gso_stream *h, const void **data, uint32_t *len)
{
	struct stream *s;
	const uint8_t *p = NULL;
	int err;

	if (!h || !data || !len)
		return -EINVAL;
	*data = NULL;
	*len = 0;
	err = get(h, &s);
	if (err)
		return err;
	if (!s->rq.buf)
		return finished(s) ? read_state(s) : -EAGAIN;
	err = read_state(s);
	if (err <= 0) {
		s->read_since = true;
		return err;
	}
	*len = gsoi_rcvq_peek(&s->rq, &p);
	*data = p;
	return 0;
}

int gso_stream__consume(struct gso_stream *h, uint32_t len)
{
	struct stream *s;
	int err = get(h, &s);

	if (err)
		return err;
	if (!s->rq.buf || len > gsoi_rcvq_readable(&s->rq))
		return len ? -EINVAL : 0;
	gsoi_rcvq_consume(&s->rq, len);
	s->st.rx_read += len;
	after_read(s, engine_now(s->f.e));
	s_timer_update(s);
	return 0;
}

static int can_write(const struct stream *s)
{
	if (finished(s))
		return s->st.err ? s->st.err : -ENOTCONN;
	if (s->data_done)
		return -ESHUTDOWN;
	if (!s->sized)
		return -EAGAIN;
	return 0;
}

static int find_slot(struct stream *s, uint32_t *idx)
{
	for (uint32_t k = 0; k < s->nslots; k++) {
		uint32_t i = (s->slot_hint + k) % s->nslots;

		if (!s->slots[i].used) {
			s->slot_hint = i + 1;
			*idx = i;
			return 0;
		}
	}
	return -ENOBUFS;
}

static int reserve(struct stream *s, void **buf, uint32_t *len)
{
	struct tslot *sl;
	uint32_t i;
	int err = can_write(s);

	if (err) {
		if (err == -EAGAIN)
			s->want_write = true;
		return err;
	}
	if (gso_flowq__unsent_bytes(s->fq) >= s->notsent_lowat) {
		s->want_write = true;
		return -EAGAIN;
	}
	if (s->wslot < 0) {
		if (find_slot(s, &i)) {
			s->want_write = true;
			return -ENOBUFS;
		}
		sl = &s->slots[i];
		err = gso_dev__buf_alloc(s->f.e->tx, s->st.seg_limit, &sl->buf);
		if (err) {
			if (err == -ENOBUFS) {
				s->st.umem_waits++;
				s->want_write = true;
				mem_wait(s);
			}
			return err;
		}
		sl->used = true;
		sl->writing = true;
		s->wslot = (int)i;
		s->wfill = 0;
	}
	sl = &s->slots[s->wslot];
	*buf = sl->buf.data + s->wfill;
	*len = s->st.seg_limit - s->wfill;
	return 0;
}

/* The slot being written is full (or no more is coming): hand it over to the queue alone. */
static void end_write(struct stream *s)
{
	struct tslot *sl;

	if (s->wslot < 0)
		return;
	sl = &s->slots[s->wslot];
	sl->writing = false;
	if (!s->wfill || sl->done_early)
		free_slot(s, (uint32_t)s->wslot);
	s->wslot = -1;
}

int gso_stream__reserve(struct gso_stream *h, void **buf, uint32_t *len)
{
	struct stream *s;
	int err;

	if (!h || !buf || !len)
		return -EINVAL;
	err = get(h, &s);
	return err ? err : reserve(s, buf, len);
}

static int commit(struct stream *s, uint32_t len)
{
	uint64_t now;
	int err;

	if (s->wslot < 0 || len > s->st.seg_limit - s->wfill)
		return -EINVAL;
	err = can_write(s);
	if (err)
		return err;
	if (!len)
		return 0;
	err = gso_flowq__append(s->fq, (uint64_t)s->wslot, s->wfill, len, s->st.mss);
	if (err)
		return err == -ENOSPC ? -EAGAIN : err;
	s->slots[s->wslot].done_early = false;
	s->wfill += len;
	s->st.written += len;
	if (s->wfill == s->st.seg_limit)
		end_write(s);
	now = engine_now(s->f.e);
	s_arm(s, now);
	s_timer_update(s);
	return 0;
}

int gso_stream__commit(struct gso_stream *h, uint32_t len)
{
	struct stream *s;
	int err = get(h, &s);

	return err ? err : commit(s, len);
}

int gso_stream__write(struct gso_stream *h, const void *data, uint32_t len)
{
	struct stream *s;
	void *p;
	uint32_t room;
	int err;

	if (!h || (!data && len))
		return -EINVAL;
	err = get(h, &s);
	if (!err)
		err = reserve(s, &p, &room);
	if (err)
		return err;
	if (room > len)
		room = len;
	memcpy(p, data, room);
	err = commit(s, room);
	return err ? err : (int)room;
}

int gso_stream__shutdown(struct gso_stream *h)
{
	struct stream *s;
	uint64_t now;
	int err = get(h, &s);

	if (err)
		return err;
	if (finished(s))
		return -ENOTCONN;
	s->data_done = true;
	end_write(s);
	now = engine_now(s->f.e);
	s_arm(s, now);
	s_timer_update(s);
	return 0;
}

int gso_stream__close(struct gso_stream *h)
{
	struct engine *e;
	struct stream *s;
	int err = get(h, &s);

	if (err)
		return err;
	e = s->f.e;
	if (!finished(s) && s->state != GSO_STREAM_SYN_SENT && s->sized && !e->dead)
		send_ctl(s, GSO_TCP_RST | GSO_TCP_ACK, ack_seq(s), engine_now(e));
	gsoi_engine_flush_flow_events(e, &s->f);
	gsoi_engine_flow_del(e, &s->f);
	t_free(&s->f);
	return 0;
}

int gso_stream__info(const struct gso_stream *h, struct gso_stream_info *info)
{
	struct gso_stream_info full;
	struct gso_cc_state cs = { .sz = sizeof(cs) };
	struct stream *s;
	int err;

	if (!h || !GSO_OUT_VALID(info))
		return -EINVAL;
	err = get(h, &s);
	if (err)
		return err;
	full = s->st;
	full.state = s->state;
	full.sack = s->sack_ok;
	full.timestamps = s->ts_ok;
	if (full.min_wnd == UINT32_MAX)
		full.min_wnd = 0;
	full.cc_algo = s->cc_algo;
	full.path_mtu = s->f.pmtu;
	full.pmtu_changes = s->f.pmtu_changes;
	if (s->sized) {
		struct gso_aggr_info ai = { .sz = sizeof(ai) };
		struct gso_aggr_policy pol;

		dev_policy(s, pacing_rate(s), &pol);
		full.dev_queue_limit = pol.queue_limit;
		full.burst_shift = pol.pacing_shift;
		full.dev_aggr_adapted = pol.adapted;
		if (!gso_aggr__info(&s->f.e->aggr, &ai) && ai.aggregating) {
			full.dev_aggr_interval_ns = ai.interval_ns;
			if (s->st.burst_descs)
				full.dev_aggr_bytes = ai.batch_work * s->st.seg_limit / s->st.burst_descs;
		}
	}
	if (s->fq) {
		struct gso_flowq_info fi = { .sz = sizeof(fi) };

		if (!gso_flowq__info(s->fq, &fi))
			full.delivery_rate = fi.delivery_rate;
	}
	full.bbr.sz = 0;
	if (s->cc && s->cc_algo == GSO_CC_BBR) {
		full.bbr.sz = sizeof(full.bbr);
		gso_cc__bbr_info(s->cc, &full.bbr);
	}
	if (s->cc && !gso_cc__state(s->cc, &cs)) {
		full.cwnd = cs.cwnd;
		full.ssthresh = cs.ssthresh == UINT32_MAX ? 0 : cs.ssthresh;
		full.pacing_rate = cs.pacing_rate;
		full.srtt_ns = cs.srtt_ns;
		full.min_rtt_ns = cs.min_rtt_ns;
	}
	full.rx_queued = s->rq.buf ? gsoi_rcvq_readable(&s->rq) : 0;
	full.offloaded = s->tso.offloaded;
	full.software = s->tso.software + s->tso.single;
	GSO_OUT_PUT(info, full);
	return 0;
}
