#include "sender_tcp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gso/tmpl.h>

#include "cpu.h"
#include "proto.h"

#define NS_PER_MS 1000000ull
#define SYN_RTO_NS (1000 * NS_PER_MS)  /* RFC 6298 initial RTO */
#define SYN_TRIES 6
#define MAX_BACKOFF 10
#define MAX_RTO_NS (60000 * NS_PER_MS)
#define LINGER_NS (500 * NS_PER_MS)    /* wait this long for the peer's FIN */
#define RETRY_NS 20000ull              /* retry after device backpressure */
#define OUR_WSCALE 7
#define OUR_WIN 65535u
#define FQ_ENTRIES 8192u
#define OUTPUT_ROUNDS 32               /* bursts per snd_output() before input is looked at */
#define SLOTS 4096u
#define TSQ_MAX_BYTES (256u << 10)     /* device queue limit (tcp_limit_output_bytes, 2012-2018) */
#define TSQ_RETRY_NS 200000ull
#define PACE_SLACK_NS 50000ull         /* about the wake-up lateness measured here (evloop.h) */

static void fail(struct snd *s, const char *why, int err, uint64_t now)
{
	if (s->state == SND_FAILED)
		return;
	s->state = SND_FAILED;
	s->st.fail = why;
	s->st.fail_err = err;
	s->st.t_end = now;
}

static uint32_t tsval(const struct snd *s, uint64_t now)
{
	return (uint32_t)(now / NS_PER_MS) + s->ts_off;
}

static bool seq_after(uint32_t a, uint32_t b)
{
	return (int32_t)(b - a) < 0;
}

/* ---- headers ---------------------------------------------------------- */

static void base_fields(const struct snd *s, struct gso_tmpl_fields *f)
{
	f->l3 = s->c.l3 == 6 ? GSO_L3_IPV6 : GSO_L3_IPV4;
	f->l4 = GSO_L4_TCP;
	memcpy(f->eth_dst, s->c.peer_mac, 6);
	memcpy(f->eth_src, s->c.our_mac, 6);
	memcpy(f->saddr, s->c.our_addr, 16);
	memcpy(f->daddr, s->c.peer_addr, 16);
	f->sport = s->c.our_port;
	f->dport = s->c.peer_port;
	if (s->c.l3 == 4) {
		f->df = true;
		f->ip_id = s->ip_id;
	}
}

/* The data/ACK template, rebuilt when the timestamps or the ACK change (at most about every ms). */
static int refresh_tmpl(struct snd *s, uint64_t now)
{
	uint32_t tv = tsval(s, now);
	uint8_t opts[SND_TS_OPTS_LEN];
	int err;

	if (s->tmpl.hdr_len && s->tmpl_ack == s->rcv_nxt &&
	    (!s->ts_ok || (s->tmpl_tsval == tv && s->tmpl_tsecr == s->ts_recent)))
		return 0;
	GSO_OPTS(gso_tmpl_fields, f, .seq = 0, .ack = s->rcv_nxt, .tcp_flags = GSO_TCP_ACK,
		 .window = OUR_WIN);
	base_fields(s, &f);
	if (s->ts_ok) {
		snd_ts_opts(opts, tv, s->ts_recent);
		f.tcp_opts = opts;
		f.tcp_opts_len = SND_TS_OPTS_LEN;
	}
	err = gso_tmpl_build(&s->tmpl, &f);
	if (err)
		return err;
	s->tmpl_tsval = tv;
	s->tmpl_tsecr = s->ts_recent;
	s->tmpl_ack = s->rcv_nxt;
	return 0;
}

static int submit(struct snd *s, const struct gso_tx *tx)
{
	int r = s->c.tso ? gso_tso__submit(s->c.dev, &s->tso, tx, 1) : gso_dev__submit(s->c.dev, tx, 1);

	if (r == 1)
		return 0;
	if (r == -EAGAIN || r == -ENOBUFS) {
		/* Backpressure: nothing was lost; give the device a moment. */
		s->st.backpressure++;
		gso_dev__reap(s->c.dev, 0);
		gso_dev__kick(s->c.dev);
	}
	return r < 0 ? r : -EIO;
}

/* A header-only segment with `flags` (ACK, FIN|ACK, a probe) at `seq`. */
static int send_ctl(struct snd *s, uint8_t flags, uint32_t seq, uint64_t now)
{
	struct gso_tx tx = { .tmpl = &s->tmpl, .mss = 536, .flags = s->c.tx_flags };
	int err = refresh_tmpl(s, now);

	if (err)
		return err;
	gso_tmpl_set_tcp_seq(&s->tmpl, seq);
	gso_tmpl_set_tcp_flags(&s->tmpl, flags);
	if (s->c.l3 == 4)
		gso_tmpl_set_ip_id(&s->tmpl, s->ip_id);
	err = submit(s, &tx);
	gso_tmpl_set_tcp_flags(&s->tmpl, GSO_TCP_ACK);
	if (!err)
		s->ip_id++;
	return err;
}

static int send_syn(struct snd *s, uint64_t now)
{
	uint8_t opts[SND_SYN_OPTS_LEN], frame[GSO_MAX_HDR_LEN + 1];
	struct gso_tmpl t, syn;
	uint32_t mss = s->c.mtu - (s->c.l3 == 4 ? 20 : 40) - 20;
	int err;

	if (s->c.mss_cap && s->c.mss_cap < mss)
		mss = s->c.mss_cap;
	snd_syn_opts(opts, (uint16_t)(mss > 65535 ? 65535 : mss), !s->c.no_sack, !s->c.no_ts,
		     tsval(s, now), OUR_WSCALE);
	GSO_OPTS(gso_tmpl_fields, f, .seq = s->iss, .window = OUR_WIN, .tcp_opts = opts,
		 .tcp_opts_len = SND_SYN_OPTS_LEN);
	base_fields(s, &f);
	err = gso_tmpl_build(&t, &f);
	if (err)
		return err;
	/* Templates refuse SYN (it never belongs on a super-segment): set it in a raw frame and parse that. */
	memcpy(frame, t.hdr, t.hdr_len);
	frame[t.l4_off + 13] = GSO_TCP_SYN;
	err = gso_tmpl_parse(&syn, frame, t.hdr_len);
	if (err)
		return err;
	struct gso_tx tx = { .tmpl = &syn, .mss = 536, .flags = s->c.tx_flags };
	err = submit(s, &tx);
	if (!err)
		s->ip_id++;
	return err;
}

/* Sequence number of our next pure ACK: snd_nxt, or past the FIN once it is sent. */
static uint32_t ack_seq(const struct snd *s)
{
	struct gso_flowq_info fi = { .sz = sizeof(fi) };

	if (s->fin_sent)
		return s->fin_seq + 1;
	if (s->fq && !gso_flowq__info(s->fq, &fi))
		return fi.snd_nxt;
	return s->iss + 1;
}

/* ---- set-up ------------------------------------------------------------ */

int snd_init(struct snd *s, const struct snd_cfg *c, uint64_t now)
{
	uint64_t r = now ^ ((uint64_t)c->our_port << 32) ^ c->seed;

	memset(s, 0, sizeof(*s));
	s->c = *c;
	if (!s->c.idle_ns)
		s->c.idle_ns = 10000 * NS_PER_MS;
	s->iss = (uint32_t)bench_splitmix64(&r);
	s->ts_off = (uint32_t)bench_splitmix64(&r);
	s->ip_id = (uint16_t)bench_splitmix64(&r);
	s->flow.l3 = c->l3;
	memcpy(s->flow.peer_addr, c->peer_addr, 16);
	memcpy(s->flow.our_addr, c->our_addr, 16);
	s->flow.peer_port = c->peer_port;
	s->flow.our_port = c->our_port;
	s->ip_hdr = c->l3 == 4 ? 20 : 40;
	bench_stream_init(&s->stream, c->seed);
	if (!c->raw) {
		struct bench_hdr h = { .flags = 0, .seed = c->seed,
				       .total = c->bytes == UINT64_MAX || c->duration_ns ? 0 : c->bytes };
		bench_hdr_encode(&h, s->hdr_bytes);
	}
	s->tcp_total = c->bytes == UINT64_MAX ? UINT64_MAX : c->bytes + (c->raw ? 0 : BENCH_HDR_LEN);
	s->nslots = SLOTS;
	s->slots = calloc(s->nslots, sizeof(*s->slots));
	s->nrel = FQ_ENTRIES + 1;
	s->rel = calloc(s->nrel, sizeof(*s->rel));
	if (!s->slots || !s->rel) {
		free(s->slots);
		free(s->rel);
		return -ENOMEM;
	}
	s->st.min_wnd = UINT32_MAX;
	s->st.ack_queue = -1;
	s->st.t_start = now;
	return 0;
}

void snd_fini(struct snd *s)
{
	if (s->fq) {
		int n = gso_flowq__flush(s->fq, s->rel, s->nrel);

		for (int i = 0; i < n; i++) {
			struct snd_slot *sl = &s->slots[s->rel[i].handle];

			gso_dev__buf_free(s->c.dev, &sl->buf);
			sl->used = false;
		}
		gso_flowq__destroy(s->fq);
		s->fq = NULL;
	}
	for (uint32_t i = 0; s->slots && i < s->nslots; i++)
		if (s->slots[i].used)
			gso_dev__buf_free(s->c.dev, &s->slots[i].buf);
	if (s->cc)
		gso_cc__state(s->cc, &s->st.cc_end);
	gso_cc__destroy(s->cc);
	s->cc = NULL;
	free(s->slots);
	free(s->rel);
	s->slots = NULL;
	s->rel = NULL;
}

int snd_connect(struct snd *s, uint64_t now)
{
	int err = send_syn(s, now);

	if (err && err != -EAGAIN && err != -ENOBUFS) {
		fail(s, "sending the SYN", err, now);
		return err;
	}
	s->state = SND_SYN_SENT;
	s->syn_ns = now;
	s->syn_tries = 1;
	s->syn_at = now + (err ? RETRY_NS : SYN_RTO_NS);
	s->last_heard = now;
	return 0;
}

static uint8_t zeros[65536];

/*
 * The largest segment the device can put on the wire with these headers:
 * the MTU says one thing, but a device that copies whole frames into its
 * memory chunks (AF_XDP without multi-buffer) holds less with a jumbo MTU.
 */
static uint32_t dev_mss(struct snd *s, uint32_t mss)
{
	struct gso_tx_plan plan;
	struct gso_tx t = { .tmpl = &s->tmpl, .data = zeros, .len = mss, .mss = mss, .flags = s->c.tx_flags };
	struct gso_buf buf = { 0 };
	uint32_t lo = 64, hi = mss;

	/* Plan with a device buffer, as the data will go (a multi-buffer device references it). */
	if (!gso_dev__buf_alloc(s->c.dev, mss, &buf)) {
		t.buf = &buf;
		t.data = NULL;
	}
	if (gso_dev__plan(s->c.dev, &t, &plan)) {
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo + 1) / 2;

			t.len = t.mss = mid;
			if (!gso_dev__plan(s->c.dev, &t, &plan))
				lo = mid;
			else
				hi = mid - 1;
		}
		mss = lo;
	}
	gso_dev__buf_free(s->c.dev, &buf);
	return mss;
}

/* SYN-ACK: agree on options, size segments, build the queue, CC and pacer. */
static void establish(struct snd *s, const struct snd_seg *g, unsigned rxq, uint64_t now)
{
	uint32_t peer_mss = g->has_mss ? g->mss : 536, max_ip = GSO_MAX_IP_LEN - s->ip_hdr;
	GSO_OPTS(gso_dev_caps, caps);
	int err;

	s->st.ack_queue = (int)rxq;
	if (s->c.on_estab && (err = s->c.on_estab(s->c.ctx, rxq, &s->c))) {
		fail(s, "setting up the transmit device", err, now);
		return;
	}
	s->irs = g->seq;
	s->rcv_nxt = g->seq + 1;
	s->ts_ok = !s->c.no_ts && g->has_ts;
	if (s->ts_ok)
		s->ts_recent = g->tsval;
	s->sack_ok = !s->c.no_sack && g->sack_perm;
	if (g->wscale >= 0) {
		s->snd_wscale = (uint8_t)g->wscale;
		s->rcv_wscale = OUR_WSCALE;
	}
	s->mss = s->c.mtu - s->ip_hdr - 20;
	if (peer_mss < s->mss)
		s->mss = peer_mss;
	if (s->c.mss_cap && s->c.mss_cap < s->mss)
		s->mss = s->c.mss_cap;
	/* Linux's floor (TCP_MIN_MSS 88) less the options: anything smaller is a broken peer or MTU. */
	if (s->mss < 64 + (s->ts_ok ? SND_TS_OPTS_LEN : 0)) {
		fail(s, "segment size too small (peer MSS or MTU)", -EINVAL, now);
		return;
	}
	if (s->ts_ok)
		s->mss -= SND_TS_OPTS_LEN;
	s->hdr_len = 14 + s->ip_hdr + 20 + (s->ts_ok ? SND_TS_OPTS_LEN : 0);

	if (refresh_tmpl(s, now)) {
		fail(s, "building the header", -EINVAL, now);
		return;
	}
	s->mss = dev_mss(s, s->mss);
	gso_dev__caps(s->c.dev, &caps);
	s->dev_max_segs = caps.max_segs;
	/* Payload per super-segment: an IP datagram of at most 64 KiB, within one device buffer. */
	s->seg_limit = max_ip - 20 - (s->ts_ok ? SND_TS_OPTS_LEN : 0);
	if (caps.buf_max && caps.buf_max < s->seg_limit)
		s->seg_limit = caps.buf_max;
	if (s->seg_limit > 65535)
		s->seg_limit = 65535;
	s->seg_limit = s->seg_limit / s->mss * s->mss;
	if (!s->seg_limit) {
		fail(s, "segment size larger than a device buffer", -EMSGSIZE, now);
		return;
	}

	/* What one full super-segment costs the device, for the small-queue limit. */
	{
		struct gso_tx_plan plan;
		struct gso_tx ptx = { .tmpl = &s->tmpl, .data = zeros, .len = s->seg_limit, .mss = s->mss,
				      .flags = s->c.tx_flags };

		if (!gso_dev__plan(s->c.dev, &ptx, &plan))
			s->burst_descs = plan.descs;
	}

	GSO_OPTS(gso_flowq_opts, fo, .max_entries = FQ_ENTRIES, .max_bytes = s->seg_limit,
		 .isn = s->iss + 1, .flags = s->sack_ok ? 0 : GSO_FLOWQ_F_NO_SACK);
	err = gso_flowq__create(&fo, &s->fq);
	if (err) {
		fail(s, "flow queue", err, now);
		return;
	}
	gso_flowq__set_wnd(s->fq, g->win); /* never scaled in a SYN-ACK */
	GSO_OPTS(gso_cc_opts, co, .algo = s->c.cc_algo, .mss = s->mss, .hdr_len = s->hdr_len,
		 .max_rate = s->c.max_rate);
	err = gso_cc__create(&co, &s->cc);
	if (err) {
		fail(s, "congestion control", err, now);
		return;
	}
	GSO_OPTS(gso_pacer_opts, po);
	gso_pacer__init(&s->pacer, &po);
	s->bo = (struct gso_burst_opts){ .sz = sizeof(s->bo), .pacing_shift = s->c.pacing_shift,
					 .min_segs = s->c.min_segs, .win_divisor = s->c.win_divisor };
	if (s->syn_tries == 1 && now > s->syn_ns) {
		GSO_OPTS(gso_cc_ack, a, .now_ns = now, .rtt_ns = now - s->syn_ns);
		gso_cc__on_ack(s->cc, &a);
		s->st.rtt_samples++;
	}
	s->state = SND_ESTAB;
	s->st.t_estab = now;
	s->syn_at = 0;
	s->backoff = 0;
	s->last_heard = now;
	if (s->c.duration_ns)
		s->stop_at = now + s->c.duration_ns;
	err = send_ctl(s, GSO_TCP_ACK, s->iss + 1, now);
	if (err && err != -EAGAIN && err != -ENOBUFS)
		fail(s, "sending the handshake ACK", err, now);
}

/* ---- ACKs -------------------------------------------------------------- */

static uint64_t rto_ns(const struct snd *s)
{
	struct gso_cc_state cs;
	uint64_t r = GSO_RTT_INIT_RTO_NS;

	if (s->cc && !gso_cc__state(s->cc, &cs))
		r = cs.rto_ns;
	r <<= s->backoff;
	return r > MAX_RTO_NS ? MAX_RTO_NS : r;
}

static bool outstanding(const struct snd *s)
{
	struct gso_flowq_info fi = { .sz = sizeof(fi) };

	if (s->fin_sent && !s->fin_acked)
		return true;
	return s->fq && !gso_flowq__info(s->fq, &fi) && fi.unacked_bytes;
}

static void check_fq(struct snd *s, uint64_t now)
{
	int err;

	if (s->c.check && (err = gso_flowq__check(s->fq)))
		fail(s, "flow queue inconsistent", err, now);
}

static void process_ack(struct snd *s, const struct snd_seg *g, uint64_t now)
{
	struct gso_flowq_info fi = { .sz = sizeof(fi) };
	struct gso_flowq_ack_res res;
	uint32_t ack = g->ack, wnd = (uint32_t)g->win << s->snd_wscale;
	int err;

	gso_flowq__info(s->fq, &fi);
	if (s->fin_sent && ack == s->fin_seq + 1) {
		if (!s->fin_acked) {
			s->fin_acked = true;
			s->state = SND_CLOSING;
			s->linger_at = now + LINGER_NS;
			s->rto_at = 0;
			s->st.t_end = now;
		}
		ack = s->fin_seq;
	}
	if (s->ts_ok && g->has_ts && !seq_after(g->seq, s->rcv_nxt))
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
		return;
	}
	if (err) {
		fail(s, "processing an ACK", err, now);
		return;
	}
	s->st.acks++;
	for (unsigned i = 0; i < res.n_rel; i++) {
		struct snd_slot *sl = &s->slots[s->rel[i].handle];

		if (s->rel[i].done) {
			gso_dev__buf_free(s->c.dev, &sl->buf);
			sl->used = false;
		} else {
			gso_dev__buf_release(s->c.dev, &sl->buf, s->rel[i].upto);
		}
	}
	if (res.flags & GSO_FLOWQ_RES_OLD)
		return;
	s->st.acked_bytes += res.acked_bytes;
	if (res.flags & GSO_FLOWQ_RES_DUP)
		s->st.dupacks++;
	s->st.sacked_segs += res.sacked_segs;
	s->st.lost_segs += res.lost_segs;
	if (wnd < s->st.min_wnd)
		s->st.min_wnd = wnd;
	if (wnd > s->st.max_wnd)
		s->st.max_wnd = wnd;
	if (!wnd)
		s->st.zero_wnd++;
	/* A peer that answers is alive, even while its window stays shut. */
	s->last_heard = now;
	if (res.flags & GSO_FLOWQ_RES_ADVANCED)
		s->backoff = 0;
	if (wnd && s->probe_at) {
		s->probe_at = 0;
		s->backoff = 0;
	}
	if (res.delivered_segs || res.rtt_ns) {
		struct gso_flowq_info after = { .sz = sizeof(after) };

		gso_flowq__info(s->fq, &after);
		GSO_OPTS(gso_cc_ack, ca, .now_ns = now, .rtt_ns = res.rtt_ns, .acked_segs = res.delivered_segs,
			 .packets_out = after.in_flight,
			 .flags = s->cwnd_limited ? 0 : GSO_CC_ACK_NOT_CWND_LIMITED);
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
}

void snd_input(struct snd *s, const uint8_t *frame, uint32_t len, unsigned rxq, uint64_t now)
{
	struct snd_seg g;
	int err = snd_parse(frame, len, &s->flow, &g);

	if (err) {
		if (err == -ENOENT)
			s->st.rx_other++;
		else
			s->st.rx_bad++;
		return;
	}
	if (snd_finished(s))
		return;
	if (g.flags & GSO_TCP_RST) {
		/* In SYN-SENT only an RST acknowledging our SYN counts (RFC 793). */
		if (s->state == SND_CLOSING)
			s->state = SND_DONE; /* everything, FIN included, was acknowledged already */
		else if (s->state != SND_SYN_SENT || g.ack == s->iss + 1)
			fail(s, "connection reset by the peer", -ECONNRESET, now);
		return;
	}
	if (s->state == SND_SYN_SENT) {
		if ((g.flags & (GSO_TCP_SYN | GSO_TCP_ACK)) == (GSO_TCP_SYN | GSO_TCP_ACK) &&
		    g.ack == s->iss + 1)
			establish(s, &g, rxq, now);
		return;
	}
	if (g.flags & GSO_TCP_SYN) {
		/* The SYN-ACK again: our handshake ACK was lost. */
		send_ctl(s, GSO_TCP_ACK, ack_seq(s), now);
		return;
	}
	if (!(g.flags & GSO_TCP_ACK))
		return;
	process_ack(s, &g, now);
	if (snd_finished(s))
		return;
	if ((g.flags & GSO_TCP_FIN) && g.seq + g.payload == s->rcv_nxt) {
		s->rcv_nxt++;
		s->peer_fin = true;
		send_ctl(s, GSO_TCP_ACK, ack_seq(s), now);
		if (s->state == SND_CLOSING)
			s->state = SND_DONE;
	} else if (g.payload || (s->peer_fin && (g.flags & GSO_TCP_FIN))) {
		/* Data we never asked for, or the peer's FIN again: say where we are. */
		send_ctl(s, GSO_TCP_ACK, ack_seq(s), now);
	}
}

/* ---- sending ------------------------------------------------------------ */

static struct snd_slot *free_slot(struct snd *s, uint32_t *idx)
{
	for (uint32_t k = 0; k < s->nslots; k++) {
		uint32_t i = (s->slot_hint + k) % s->nslots;

		if (!s->slots[i].used) {
			s->slot_hint = i + 1;
			*idx = i;
			return &s->slots[i];
		}
	}
	return NULL;
}

/* TCP payload bytes [off, off + len): the bench header, then the stream. */
static void generate(struct snd *s, uint64_t off, uint8_t *dst, uint32_t len)
{
	uint64_t hl = s->c.raw ? 0 : BENCH_HDR_LEN;

	while (len && off < hl) {
		*dst++ = s->hdr_bytes[off++];
		len--;
	}
	if (len)
		bench_stream_fill(&s->stream, off - hl, dst, len);
}

/* Keep a few super-segments of new data queued ahead of the sender. */
static void refill(struct snd *s, const struct gso_flowq_info *fi, uint64_t now)
{
	uint64_t unsent = fi->unsent_bytes, want = 4ull * s->seg_limit;

	if (s->data_done)
		return;
	if (s->stop_at && now >= s->stop_at) {
		s->data_done = true;
		return;
	}
	while (unsent < want) {
		struct snd_slot *sl;
		uint64_t t0;
		uint32_t i, len;
		int err;

		if (s->appended >= s->tcp_total) {
			s->data_done = true;
			return;
		}
		sl = free_slot(s, &i);
		if (!sl) {
			s->st.slot_waits++;
			return;
		}
		len = s->seg_limit;
		if (s->tcp_total - s->appended < len)
			len = (uint32_t)(s->tcp_total - s->appended);
		err = gso_dev__buf_alloc(s->c.dev, len, &sl->buf);
		if (err == -ENOBUFS) {
			s->st.umem_waits++;
			gso_dev__reap(s->c.dev, 0);
			return;
		}
		if (err) {
			fail(s, "allocating a device buffer", err, now);
			return;
		}
		t0 = bench_now_ns();
		generate(s, s->appended, sl->buf.data, len);
		s->st.gen_ns += bench_now_ns() - t0;
		err = gso_flowq__append(s->fq, i, 0, len, s->mss);
		if (err) {
			gso_dev__buf_free(s->c.dev, &sl->buf);
			if (err != -ENOSPC)
				fail(s, "queueing data", err, now);
			return;
		}
		sl->used = true;
		s->appended += len;
		unsent += len;
	}
}

static void note_burst(struct snd *s, const struct gso_flowq_tx *tx)
{
	s->st.supers++;
	s->st.segs += tx->segs;
	s->st.burst_hist[tx->segs < SND_BURST_HIST ? tx->segs : SND_BURST_HIST - 1]++;
	if (tx->segs > s->st.burst_max)
		s->st.burst_max = tx->segs;
	if (tx->flags & GSO_FLOWQ_TX_RETRANS) {
		s->st.retrans_segs += tx->segs;
		s->st.retrans_supers++;
	}
}

static void maybe_fin(struct snd *s, const struct gso_flowq_info *fi, uint64_t now)
{
	int err;

	if (s->fin_sent || !s->data_done || fi->unsent_bytes || fi->unacked_bytes)
		return;
	if (!s->st.t_data_acked)
		s->st.t_data_acked = now;
	s->fin_seq = fi->write_seq;
	err = send_ctl(s, GSO_TCP_FIN | GSO_TCP_ACK, s->fin_seq, now);
	if (err == -EAGAIN || err == -ENOBUFS) {
		s->retry_at = now + RETRY_NS;
		return;
	}
	if (err) {
		fail(s, "sending the FIN", err, now);
		return;
	}
	s->fin_sent = true;
	s->state = SND_FIN_SENT;
	s->rto_at = now + rto_ns(s);
}

/*
 * TCP Small Queues for a device: hold back while it still has about 1 ms
 * of data (at least two super-segments, at most TSQ_MAX_BYTES as Linux's
 * tcp_limit_output_bytes once was) posted and not completed, so that
 * an asynchronous device (the e1000 model's thread) does not build a deep
 * queue that only inflates the RTT.  Devices that complete inside the
 * submit call (AF_XDP copy mode, the AF_PACKET ring) never hit it.
 */
static bool tsq_full(struct snd *s, uint64_t rate)
{
	GSO_OPTS(gso_dev_stats, ds);
	uint64_t bytes = rate == GSO_RATE_UNPACED ? 0 : rate >> 10, bursts;

	if (!s->burst_descs)
		return false;
	gso_dev__reap(s->c.dev, 0);
	if (gso_dev__stats(s->c.dev, &ds))
		return false;
	if (bytes > TSQ_MAX_BYTES)
		bytes = TSQ_MAX_BYTES;
	bursts = bytes / s->seg_limit;
	if (bursts < 2)
		bursts = 2;
	return ds.inflight_descs >= bursts * s->burst_descs;
}

void snd_output(struct snd *s, uint64_t now)
{
	s->more = false;
	s->pace_at = 0;
	if (s->state != SND_ESTAB)
		return;
	if (s->retry_at && now < s->retry_at)
		return;
	s->retry_at = 0;
	for (int round = 0; round < OUTPUT_ROUNDS; round++) {
		struct gso_flowq_info fi = { .sz = sizeof(fi) };
		struct gso_flowq_tx tx;
		struct gso_burst b;
		uint64_t rate, next, dep;
		uint32_t cwnd;
		int segs, err;

		gso_flowq__info(s->fq, &fi);
		refill(s, &fi, now);
		if (snd_finished(s))
			return;
		gso_flowq__info(s->fq, &fi);
		if (!fi.lost_pending && !fi.unsent_bytes) {
			maybe_fin(s, &fi, now);
			return;
		}
		/*
		 * A burst due within the slack leaves now (sch_fq's timer slack):
		 * its departure stamp is still the pacer's, so the rate holds,
		 * and no timer is armed for a wait shorter than a wake-up is late.
		 */
		next = gso_pacer__next(&s->pacer);
		if (next > now + PACE_SLACK_NS) {
			s->pace_at = next - PACE_SLACK_NS;
			return;
		}
		cwnd = gso_cc__cwnd(s->cc);
		rate = gso_cc__pacing_rate(s->cc);
		if (s->c.max_rate && rate > s->c.max_rate)
			rate = s->c.max_rate;
		if (cwnd > s->st.max_cwnd)
			s->st.max_cwnd = cwnd;
		GSO_OPTS(gso_burst_in, in, .rate = rate,
			 .queued = fi.unsent_bytes + (uint64_t)fi.lost_pending * s->mss, .mss = s->mss,
			 .hdr_len = s->hdr_len, .cwnd = cwnd, .in_flight = fi.in_flight,
			 .peer_wnd = fi.lost_pending ? UINT32_MAX : fi.wnd_left,
			 .dev_max_segs = s->dev_max_segs, .dev_max_bytes = s->hdr_len + s->seg_limit,
			 .min_rtt_ns = snd_min_rtt_ns(s),
			 .flags = fi.in_recovery ? GSO_BURST_IN_RECOVERY : 0);
		segs = gso_burst_size(&in, &s->bo, &b);
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
		} else if (!segs) {
			return;
		}
		if (tsq_full(s, rate)) {
			/* Sleep, not spin: the queue holds more than this wait drains. */
			s->st.tsq_waits++;
			s->retry_at = now + TSQ_RETRY_NS;
			return;
		}
		err = gso_flowq__peek(s->fq, (uint32_t)segs, &tx);
		if (err < 0) {
			fail(s, "flow queue peek", err, now);
			return;
		}
		if (!err) {
			/* Closed (or silly) window with nothing in flight: probe it. */
			if ((tx.why == GSO_FLOWQ_WHY_WND || tx.why == GSO_FLOWQ_WHY_SWS) && !fi.unacked_bytes &&
			    !s->probe_at)
				s->probe_at = now + rto_ns(s);
			return;
		}
		if (!(tx.flags & GSO_FLOWQ_TX_RETRANS)) {
			/* Our own check of the peer's window, independent of the queue's. */
			int64_t over = (int64_t)(uint32_t)(tx.seq + tx.len - fi.snd_una) - (int64_t)fi.snd_wnd;
			uint32_t out = tx.seq + tx.len - fi.snd_una;

			s->st.wnd_checks++;
			if (over > 0)
				s->st.wnd_violations++;
			if (s->st.wnd_checks == 1 || over > s->st.max_over_wnd)
				s->st.max_over_wnd = over;
			if (out > s->st.max_outstanding)
				s->st.max_outstanding = out;
		}
		err = refresh_tmpl(s, now);
		if (err) {
			fail(s, "building the header", err, now);
			return;
		}
		gso_tmpl_set_tcp_seq(&s->tmpl, tx.seq);
		if (s->c.l3 == 4)
			gso_tmpl_set_ip_id(&s->tmpl, s->ip_id);
		struct gso_tx t = { .tmpl = &s->tmpl, .buf = &s->slots[tx.handle].buf, .off = tx.off,
				    .len = tx.len, .mss = tx.mss, .ipid = GSO_IPID_INC,
				    .flags = s->c.tx_flags };
		err = submit(s, &t);
		if (err == -EAGAIN || err == -ENOBUFS) {
			s->retry_at = now + RETRY_NS;
			return;
		}
		if (err) {
			fail(s, "submitting a super-segment", err, now);
			return;
		}
		s->ip_id += (uint16_t)tx.segs;
		err = gso_flowq__sent(s->fq, &tx, now);
		if (err) {
			fail(s, "recording a send", err, now);
			return;
		}
		gso_pacer__stamp(&s->pacer, now, rate, tx.len + tx.segs * s->hdr_len, tx.segs, &dep);
		note_burst(s, &tx);
		if (!s->rto_at)
			s->rto_at = now + rto_ns(s);
		check_fq(s, now);
		if (snd_finished(s))
			return;
	}
	s->more = true;
}

/* ---- timers ------------------------------------------------------------- */

void snd_timers(struct snd *s, uint64_t now)
{
	if (snd_finished(s))
		return;
	if (s->state == SND_SYN_SENT) {
		if (now < s->syn_at)
			return;
		if (s->syn_tries >= SYN_TRIES || now - s->syn_ns > s->c.idle_ns) {
			fail(s, "no SYN-ACK", -ETIMEDOUT, now);
			return;
		}
		int err = send_syn(s, now);
		if (err && err != -EAGAIN && err != -ENOBUFS) {
			fail(s, "sending the SYN", err, now);
			return;
		}
		if (!err) {
			s->st.syn_retries++;
			s->syn_tries++;
		}
		s->syn_at = now + (err ? RETRY_NS : SYN_RTO_NS << (s->syn_tries - 1));
		return;
	}
	if (s->state == SND_CLOSING) {
		if (now >= s->linger_at)
			s->state = SND_DONE; /* the peer's FIN is a courtesy, not a result */
		return;
	}
	if (now - s->last_heard > s->c.idle_ns) {
		fail(s, "the peer went silent", -ETIMEDOUT, now);
		return;
	}
	if (s->rto_at && now >= s->rto_at) {
		if (!outstanding(s)) {
			s->rto_at = 0;
		} else {
			s->st.rto++;
			if (s->backoff < MAX_BACKOFF)
				s->backoff++;
			if (s->fin_sent && !s->fin_acked) {
				s->st.fin_retries++;
				send_ctl(s, GSO_TCP_FIN | GSO_TCP_ACK, s->fin_seq, now);
			} else {
				gso_flowq__timeout(s->fq);
				gso_cc__on_rto(s->cc, now);
				check_fq(s, now);
			}
			s->rto_at = now + rto_ns(s);
		}
	}
	if (s->probe_at && now >= s->probe_at) {
		struct gso_flowq_info fi = { .sz = sizeof(fi) };

		gso_flowq__info(s->fq, &fi);
		if (fi.unacked_bytes || (fi.wnd_left && fi.wnd_left * 2 >= fi.max_wnd)) {
			s->probe_at = 0;
		} else {
			/* An old sequence number: the peer answers with its window. */
			s->st.probes++;
			send_ctl(s, GSO_TCP_ACK, fi.snd_una - 1, now);
			if (s->backoff < MAX_BACKOFF)
				s->backoff++;
			s->probe_at = now + rto_ns(s);
		}
	}
}

uint64_t snd_deadline(const struct snd *s)
{
	uint64_t d = UINT64_MAX;
	uint64_t t[] = { s->syn_at, s->rto_at, s->probe_at, s->retry_at, s->pace_at, s->linger_at,
			 s->data_done ? 0 : s->stop_at };

	if (snd_finished(s))
		return 0;
	if (s->more)
		return 0;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i] && t[i] < d)
			d = t[i];
	if (s->state != SND_SYN_SENT && s->state != SND_CLOSING && s->last_heard + s->c.idle_ns < d)
		d = s->last_heard + s->c.idle_ns + 1;
	return d;
}

uint32_t snd_cwnd(const struct snd *s)
{
	return s->cc ? gso_cc__cwnd(s->cc) : s->st.cc_end.cwnd;
}

uint64_t snd_srtt_ns(const struct snd *s)
{
	struct gso_cc_state cs;

	if (!s->cc)
		return s->st.cc_end.srtt_ns;
	return !gso_cc__state(s->cc, &cs) ? cs.srtt_ns : 0;
}

uint64_t snd_min_rtt_ns(const struct snd *s)
{
	struct gso_cc_state cs;

	if (!s->cc)
		return s->st.cc_end.min_rtt_ns;
	return !gso_cc__state(s->cc, &cs) ? cs.min_rtt_ns : 0;
}
