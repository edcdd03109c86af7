/*
 * Multi-flow bottleneck simulator on the library's transmit path; see
 * flowsim.h.  Integer virtual time (ns), one event heap, no wall clock.
 */
#include "flowsim_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

double fs_payload_rate(const struct fs_params *p)
{
	return (double)p->link_rate * p->mss / (p->mss + p->hdr_len);
}

/* ---- events ----------------------------------------------------------- */

void fs_push(struct fs_sim *s, uint64_t t, uint32_t type, uint32_t flow, uint64_t arg)
{
	int err = sim_heap_push(&s->heap, t, type, flow, arg);

	if (err)
		s->err = err;
}

uint32_t fs_rand32(struct fs_sim *s)
{
	uint32_t x = s->rng;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	s->rng = x;
	return x;
}

/* ---- the path ----------------------------------------------------------- */

void fs_queue_account(struct fs_sim *s, uint64_t until)
{
	uint64_t from = s->q_area_from > s->p->measure_from_ns ? s->q_area_from : s->p->measure_from_ns;

	if (until > from)
		s->q_area += s->q_bytes * (until - from);
	s->q_area_from = until;
}

/* Frames that left the bottleneck by `t` leave its queue. */
void fs_queue_drain(struct fs_sim *s, uint64_t t)
{
	while (s->qn && s->qdep[s->qhead] <= t) {
		fs_queue_account(s, s->qdep[s->qhead]);
		s->q_bytes -= s->qlen_bytes[s->qhead];
		s->dev.done += s->qlen_bytes[s->qhead]; /* a sender device's completions */
		s->qhead = (s->qhead + 1) % s->qcap;
		s->qn--;
	}
	fs_queue_account(s, t);
}

/* When a frame that left the bottleneck at `dep` reaches the receivers. */
uint64_t fs_arrival(struct fs_sim *s, uint64_t dep)
{
	uint64_t t = dep + s->p->rtt_ns / 2;

	if (s->p->jitter_ns) {
		t = t - s->p->jitter_ns + fs_rand32(s) % (2 * s->p->jitter_ns + 1);
		if (t < s->last_arrival)
			t = s->last_arrival; /* never reorders */
		s->last_arrival = t;
	}
	return t;
}

static void transmit(struct fs_sim *s, struct fs_flow *f, uint64_t seg)
{
	const struct fs_params *p = s->p;
	uint32_t wire = p->mss + p->hdr_len;
	uint64_t dep;

	f->res->segs_sent++;
	if (p->loss_ppm && fs_rand32(s) % 1000000u < p->loss_ppm) {
		f->res->losses_random++;
		return;
	}
	if (p->dev.on && p->dev.interval_ns) {
		fs_dev_post(s, f, seg, wire);
		return;
	}
	fs_queue_drain(s, s->now);
	/* A sender device has no buffer limit of its own: TSQ bounds it. */
	if ((!p->dev.on && s->q_bytes + wire > p->queue_bytes) || s->qn == s->qcap) {
		f->res->losses_queue++;
		return;
	}
	dep = (s->now > s->link_free ? s->now : s->link_free) + (uint64_t)wire * 1000000000u / p->link_rate;
	s->link_free = dep;
	s->qdep[(s->qhead + s->qn) % s->qcap] = dep;
	s->qlen_bytes[(s->qhead + s->qn) % s->qcap] = wire;
	s->qn++;
	s->q_bytes += wire;
	if (s->now >= p->measure_from_ns && s->q_bytes > s->r->max_queue_bytes)
		s->r->max_queue_bytes = s->q_bytes;
	fs_push(s, fs_arrival(s, dep), EV_SEG, f->id, seg);
}

/* ---- receiver ----------------------------------------------------------- */

static uint32_t seq_of(const struct fs_sim *s, uint64_t seg)
{
	return (uint32_t)(ISN + seg * s->p->mss);
}

static void send_ack(struct fs_sim *s, struct fs_flow *f)
{
	struct ack_msg *m;
	uint32_t idx, k = 0;
	int first = -1;

	f->unacked = 0;
	f->delack_armed = false;
	f->delack_gen++;
	if (s->ack_free == UINT32_MAX) {
		uint32_t nc = s->nacks ? s->nacks * 2 : 4096;
		struct ack_msg *a = realloc(s->acks, (size_t)nc * sizeof(*a));

		if (!a) {
			s->err = -ENOMEM;
			return;
		}
		for (uint32_t i = s->nacks; i < nc; i++)
			a[i].next_free = i + 1 < nc ? i + 1 : UINT32_MAX;
		s->acks = a;
		s->ack_free = s->nacks;
		s->nacks = nc;
	}
	idx = s->ack_free;
	m = &s->acks[idx];
	s->ack_free = m->next_free;
	m->ack = seq_of(s, f->rcv_nxt);
	/* RFC 2018: the block with the latest arrival first, then the highest ones. */
	for (uint32_t i = 0; i < f->nrng; i++)
		if (f->last_ooo >= f->rng[i].lo && f->last_ooo < f->rng[i].hi)
			first = (int)i;
	if (first >= 0)
		m->sack[k++] = (struct gso_flowq_sack){ seq_of(s, f->rng[first].lo), seq_of(s, f->rng[first].hi) };
	for (int i = (int)f->nrng - 1; i >= 0 && k < 3; i--)
		if (i != first)
			m->sack[k++] = (struct gso_flowq_sack){ seq_of(s, f->rng[i].lo), seq_of(s, f->rng[i].hi) };
	m->n_sack = k;
	fs_push(s, s->now + s->p->rtt_ns / 2, EV_ACK, f->id, idx);
}

/* Hold an out-of-order segment: extend, merge or insert a range (kept sorted). */
static int hold(struct fs_flow *f, uint64_t seg)
{
	uint32_t i = 0;

	while (i < f->nrng && f->rng[i].hi < seg)
		i++;
	if (i < f->nrng && seg >= f->rng[i].lo && seg < f->rng[i].hi)
		return 0; /* a duplicate */
	if (i < f->nrng && f->rng[i].hi == seg) {
		f->rng[i].hi++;
		if (i + 1 < f->nrng && f->rng[i + 1].lo == f->rng[i].hi) {
			f->rng[i].hi = f->rng[i + 1].hi;
			memmove(&f->rng[i + 1], &f->rng[i + 2], (f->nrng - i - 2) * sizeof(*f->rng));
			f->nrng--;
		}
		return 0;
	}
	if (i < f->nrng && f->rng[i].lo == seg + 1) {
		f->rng[i].lo = seg;
		return 0;
	}
	if (f->nrng == MAX_RANGES)
		return -E2BIG;
	memmove(&f->rng[i + 1], &f->rng[i], (f->nrng - i) * sizeof(*f->rng));
	f->rng[i] = (struct range){ seg, seg + 1 };
	f->nrng++;
	return 0;
}

static void deliver_bytes(struct fs_sim *s, struct fs_flow *f, uint64_t segs)
{
	uint64_t b = segs * s->p->mss;

	f->res->delivered += b;
	if (s->now >= s->p->measure_from_ns)
		f->res->measured += b;
}

static void rx_seg(struct fs_sim *s, struct fs_flow *f, uint64_t seg)
{
	bool filled = false;

	if (seg < f->rcv_nxt) {
		send_ack(s, f); /* a spurious retransmission: tell the sender at once */
		return;
	}
	if (seg > f->rcv_nxt) {
		int err = hold(f, seg);

		if (err)
			s->err = err;
		f->last_ooo = seg;
		send_ack(s, f);
		return;
	}
	f->rcv_nxt++;
	deliver_bytes(s, f, 1);
	if (f->nrng && f->rng[0].lo == f->rcv_nxt) {
		deliver_bytes(s, f, f->rng[0].hi - f->rng[0].lo);
		f->rcv_nxt = f->rng[0].hi;
		memmove(&f->rng[0], &f->rng[1], (f->nrng - 1) * sizeof(*f->rng));
		f->nrng--;
		filled = true;
	}
	if (filled || f->nrng || ++f->unacked >= (s->p->ack_every ? s->p->ack_every : 2)) {
		send_ack(s, f);
	} else if (!f->delack_armed) {
		f->delack_armed = true;
		fs_push(s, s->now + (s->p->delack_ns ? s->p->delack_ns : 5000000u), EV_DELACK, f->id, f->delack_gen);
	}
}

/* ---- sender ------------------------------------------------------------- */

static bool app_limited_now(const struct fs_sim *s, const struct fs_flow *f)
{
	return f->fp->app_rate && s->now >= f->fp->app_from_ns && s->now < f->fp->app_to_ns;
}

/* The application hands data to the queue: bulk keeps UNSENT_TARGET queued. */
static void top_up(struct fs_sim *s, struct fs_flow *f)
{
	const struct fs_params *p = s->p;
	struct gso_flowq_info fi = { .sz = sizeof(fi) };
	uint32_t chunk = 65160u / p->mss * p->mss;

	gso_flowq__info(f->q, &fi);
	if (!app_limited_now(s, f))
		f->avail = f->written + (fi.unsent_bytes < UNSENT_TARGET ? UNSENT_TARGET - fi.unsent_bytes : 0);
	while (f->avail >= f->written + p->mss) {
		uint64_t want = f->avail - f->written;
		uint32_t len = want < chunk ? (uint32_t)(want / p->mss * p->mss) : chunk;
		int err;

		if (f->handle_off + len > HANDLE_BYTES) {
			f->handle++;
			f->handle_off = 0;
		}
		err = gso_flowq__append(f->q, f->handle, (uint32_t)f->handle_off, len, p->mss);
		if (err == -ENOSPC)
			return; /* entries full: wait for ACKs */
		if (err) {
			s->err = err;
			return;
		}
		f->handle_off += len;
		f->written += len;
	}
}

static void arm_rto(struct fs_sim *s, struct fs_flow *f)
{
	struct gso_flowq_info fi = { .sz = sizeof(fi) };
	struct gso_cc_state cs = { .sz = sizeof(cs) };
	uint64_t rto;

	gso_flowq__info(f->q, &fi);
	if (!fi.unacked_bytes) {
		f->rto_at = 0;
		return;
	}
	gso_cc__state(f->cc, &cs);
	rto = cs.rto_ns << f->backoff;
	f->rto_at = s->now + rto;
	fs_push(s, f->rto_at, EV_RTO, f->id, ++f->rto_gen);
}

/*
 * The flow's full burst at its rate, in wire bytes: the rate-based size
 * within the device's super-segment, before cwnd or data cut it (what a
 * queue limit of "two bursts" counts).
 */
static uint64_t full_burst(const struct fs_params *p, const struct gso_burst *b)
{
	uint32_t max = (GSO_BURST_DEF_DEV_MAX_BYTES - p->hdr_len) / p->mss;
	uint32_t segs = b->goal_segs < max ? b->goal_segs : max;

	return (uint64_t)(p->dev.floor_max_burst ? max : segs) * (p->mss + p->hdr_len);
}

static void try_send(struct fs_sim *s, struct fs_flow *f)
{
	const struct fs_params *p = s->p;

	if (s->now < f->fp->start_ns)
		return;
	for (;;) {
		struct gso_flowq_info fi = { .sz = sizeof(fi) };
		struct gso_cc_state cs = { .sz = sizeof(cs) };
		struct gso_flowq_tx tx = { .sz = sizeof(tx) };
		struct gso_burst b = { .sz = sizeof(b) };
		uint64_t next = gso_pacer__next(&f->pacer), dep;
		uint32_t cwnd;
		int segs, r;

		top_up(s, f);
		if (s->err)
			return;
		if (next > s->now) {
			if (f->tx_at != next) {
				f->tx_at = next;
				fs_push(s, next, EV_TX, f->id, ++f->tx_gen);
			}
			return;
		}
		gso_flowq__info(f->q, &fi);
		gso_cc__state(f->cc, &cs);
		cwnd = cs.cwnd;
		GSO_OPTS(gso_burst_in, in, .rate = cs.pacing_rate,
			 .queued = fi.unsent_bytes + (uint64_t)fi.lost_pending * p->mss, .mss = p->mss,
			 .hdr_len = p->hdr_len, .cwnd = cwnd, .in_flight = fi.in_flight,
			 .peer_wnd = UINT32_MAX, .min_rtt_ns = cs.min_rtt_ns,
			 .flags = fi.in_recovery ? GSO_BURST_IN_RECOVERY : 0);
		GSO_OPTS(gso_burst_opts, bo, .min_segs = gso_cc__min_burst_segs(f->cc));
		if (p->dev.on)
			bo.pacing_shift = fs_dev_shift(s, f, cs.pacing_rate);
		segs = gso_burst_size(&in, &bo, &b);
		if (segs < 0) {
			s->err = segs;
			return;
		}
		if (p->dev.on) {
			/* As the engine's s_arm: cwnd growth only while cwnd limits us. */
			if (b.limit == GSO_BURST_LIM_QUOTA || b.limit == GSO_BURST_LIM_CWND_DIV)
				f->cwnd_limited = true;
			else if (fi.in_flight * 2 < cwnd)
				f->cwnd_limited = false;
		}
		if (segs && p->dev.on && fs_dev_tsq_full(s, f, cs.pacing_rate, full_burst(p, &b))) {
			f->tx_at = s->now + FS_TSQ_RETRY_NS;
			fs_push(s, f->tx_at, EV_TX, f->id, ++f->tx_gen);
			return;
		}
		if (!segs) {
			if (!fi.lost_pending && fi.unsent_bytes < p->mss)
				gso_flowq__check_app_limited(f->q, cwnd);
			return;
		}
		r = gso_flowq__peek(f->q, (uint32_t)segs, &tx);
		if (r <= 0) {
			if (r < 0)
				s->err = r;
			return;
		}
		if (!fi.packets_out)
			gso_cc__on_tx_start(f->cc, s->now, fi.app_limited);
		r = gso_flowq__sent(f->q, &tx, s->now);
		if (r) {
			s->err = r;
			return;
		}
		gso_pacer__stamp(&f->pacer, s->now, cs.pacing_rate, tx.len + tx.segs * p->hdr_len, tx.segs, &dep);
		if (tx.flags & GSO_FLOWQ_TX_RETRANS)
			f->res->retrans_segs += tx.segs;
		for (uint32_t k = 0; k < tx.segs; k++)
			transmit(s, f, (uint32_t)(tx.seq - ISN) / p->mss + k);
		if (!f->rto_at)
			arm_rto(s, f);
	}
}

static void rx_ack(struct fs_sim *s, struct fs_flow *f, const struct ack_msg *m)
{
	struct gso_flowq_ack_res res = { .sz = sizeof(res) };
	struct gso_flowq_info after = { .sz = sizeof(after) };
	struct gso_rate_sample rs = { .sz = sizeof(rs) };
	int err;

	GSO_OPTS(gso_flowq_ack, a, .now_ns = s->now, .ack = m->ack, .wnd = 1u << 30, .n_sack = m->n_sack);
	memcpy(a.sack, m->sack, sizeof(m->sack));
	err = gso_flowq__ack(f->q, &a, &res, f->rel, FQ_ENTRIES + 1);
	if (err) {
		s->err = err;
		return;
	}
	if (res.flags & GSO_FLOWQ_RES_OLD)
		return;
	gso_flowq__info(f->q, &after);
	gso_flowq__rate_sample(f->q, &rs);
	if (s->p->dev.on && res.rtt_ns && s->now >= s->p->measure_from_ns)
		fs_dev_rtt(s, res.rtt_ns);
	/* As the engine: every ACK to BBR, delivering ones to Reno and CUBIC. */
	if (res.delivered_segs || res.rtt_ns || f->fp->cc_algo == GSO_CC_BBR) {
		GSO_OPTS(gso_cc_ack, ca, .now_ns = s->now, .rtt_ns = res.rtt_ns, .acked_segs = res.delivered_segs,
			 .packets_out = after.in_flight, .rs = &rs,
			 .flags = (after.in_recovery ? GSO_CC_ACK_RECOVERY : 0) |
				  (s->p->dev.on && !f->cwnd_limited ? GSO_CC_ACK_NOT_CWND_LIMITED : 0));
		gso_cc__on_ack(f->cc, &ca);
	}
	if (res.lost_segs)
		gso_cc__on_loss(f->cc, s->now, res.lost_sent_ns);
	if (res.flags & GSO_FLOWQ_RES_ADVANCED) {
		f->backoff = 0;
		arm_rto(s, f);
	}
	if (s->p->hook)
		s->p->hook(s->p->hook_ctx, f->id, s->now, f->cc, f->q);
	try_send(s, f);
}

static void rto_fire(struct fs_sim *s, struct fs_flow *f)
{
	f->res->rto++;
	if (f->backoff < MAX_BACKOFF)
		f->backoff++;
	gso_flowq__timeout(f->q);
	gso_cc__on_rto(f->cc, s->now);
	f->rto_at = 0;
	arm_rto(s, f);
	try_send(s, f);
}

static void app_tick(struct fs_sim *s, struct fs_flow *f)
{
	if (app_limited_now(s, f)) {
		f->avail += f->fp->app_rate * APP_TICK_NS / 1000000000u;
		fs_push(s, s->now + APP_TICK_NS, EV_APP, f->id, 0);
	} else if (s->now < f->fp->app_from_ns) {
		fs_push(s, f->fp->app_from_ns, EV_APP, f->id, 0);
		return;
	}
	try_send(s, f);
}

/* ---- set-up ------------------------------------------------------------- */

static int flow_init(struct fs_sim *s, struct fs_flow *f, unsigned i)
{
	const struct fs_params *p = s->p;

	f->id = i;
	f->fp = &p->flow[i];
	f->res = &s->r->flow[i];
	GSO_OPTS(gso_flowq_opts, fo, .max_entries = FQ_ENTRIES, .isn = ISN);
	GSO_OPTS(gso_cc_opts, co, .algo = f->fp->cc_algo, .mss = p->mss, .hdr_len = p->hdr_len,
		 .seed = f->fp->seed ? f->fp->seed : i + 1);
	f->rel = calloc(FQ_ENTRIES + 1, sizeof(*f->rel));
	f->rng = calloc(MAX_RANGES, sizeof(*f->rng));
	if (!f->rel || !f->rng)
		return -ENOMEM;
	if (gso_flowq__create(&f->q, &fo) || gso_cc__create(&f->cc, &co))
		return -EINVAL;
	f->pacer.sz = sizeof(f->pacer);
	gso_pacer__init(&f->pacer, NULL);
	f->aggr.sz = sizeof(f->aggr);
	gso_aggr__init(&f->aggr);
	fs_push(s, f->fp->start_ns, EV_TX, i, ++f->tx_gen);
	if (f->fp->app_rate)
		fs_push(s, f->fp->app_from_ns, EV_APP, i, 0);
	return 0;
}

int fs_run(const struct fs_params *p, struct fs_result *r)
{
	struct fs_sim s;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	if (!p->nflows || p->nflows > FS_MAX_FLOWS || !p->link_rate || !p->mss || (!p->queue_bytes && !p->dev.on))
		return -EINVAL;
	s.p = p;
	s.r = r;
	s.rng = p->seed ? p->seed : 1;
	s.ack_free = UINT32_MAX;
	s.qcap = p->dev.on ? FS_DEV_MAX_FRAMES : (uint32_t)(p->queue_bytes / (p->mss + p->hdr_len)) + 2;
	s.qdep = calloc(s.qcap, sizeof(*s.qdep));
	s.qlen_bytes = calloc(s.qcap, sizeof(*s.qlen_bytes));
	if (!s.qdep || !s.qlen_bytes)
		rc = -ENOMEM;
	if (!rc && p->dev.on)
		rc = fs_dev_init(&s);
	for (unsigned i = 0; !rc && i < p->nflows; i++)
		rc = flow_init(&s, &s.flow[i], i);

	while (!rc && s.heap.n && !s.err) {
		struct sim_ev e = sim_heap_pop(&s.heap);
		struct fs_flow *f = &s.flow[e.flow];

		if (e.t > p->duration_ns)
			break;
		s.now = e.t;
		r->events++;
		switch (e.type) {
		case EV_SEG:
			rx_seg(&s, f, e.arg);
			break;
		case EV_ACK: {
			struct ack_msg m = s.acks[e.arg];

			s.acks[e.arg].next_free = s.ack_free;
			s.ack_free = (uint32_t)e.arg;
			rx_ack(&s, f, &m);
			break;
		}
		case EV_DELACK:
			if (f->delack_armed && e.arg == f->delack_gen)
				send_ack(&s, f);
			break;
		case EV_TX:
			if (e.arg == f->tx_gen) {
				f->tx_at = 0;
				try_send(&s, f);
			}
			break;
		case EV_RTO:
			if (e.arg == f->rto_gen && f->rto_at)
				rto_fire(&s, f);
			break;
		case EV_APP:
			app_tick(&s, f);
			break;
		case EV_OPP:
		case EV_DONE:
			fs_dev_event(&s, &e);
			break;
		}
		/* Sequence numbers are 32 bits: keep every run below 4 GiB per flow. */
		if (f->written > 0xf0000000ull)
			s.err = -EOVERFLOW;
	}
	if (!rc)
		rc = s.err;
	if (!rc) {
		double cap = fs_payload_rate(p), sum = 0;
		uint64_t span = p->duration_ns - p->measure_from_ns;

		fs_queue_drain(&s, p->duration_ns);
		r->mean_queue_bytes = span ? (double)s.q_area / (double)span : 0;
		for (unsigned i = 0; i < p->nflows; i++) {
			uint64_t from = p->measure_from_ns > p->flow[i].start_ns ? p->measure_from_ns
										  : p->flow[i].start_ns;

			r->flow[i].goodput = p->duration_ns > from ? (double)r->flow[i].measured * 1e9 /
									 (double)(p->duration_ns - from)
								   : 0;
			r->flow[i].cwnd_end = gso_cc__cwnd(s.flow[i].cc);
			r->flow[i].rate_end = gso_cc__pacing_rate(s.flow[i].cc);
			sum += (double)r->flow[i].measured;
		}
		r->utilization = span ? sum * 1e9 / (double)span / cap : 0;
		if (p->dev.on)
			fs_dev_results(&s);
	}
	for (unsigned i = 0; i < p->nflows; i++) {
		gso_flowq__destroy(s.flow[i].q);
		gso_cc__destroy(s.flow[i].cc);
		free(s.flow[i].rel);
		free(s.flow[i].rng);
	}
	fs_dev_free(&s);
	sim_heap_free(&s.heap);
	free(s.acks);
	free(s.qdep);
	free(s.qlen_bytes);
	return rc;
}
