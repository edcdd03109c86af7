/*
 * Discrete-event link simulator for the pacer tests; see linksim.h.
 * Everything is integer virtual time (ns); the same parameters always give
 * the same result.
 */
#include "linksim.h"
#include "simheap.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gso/gso.h>

#define RING (1u << 16)  /* per-segment send records; > any window here */
#define EV_CAP (1u << 16) /* events held at once; more is a bug in the model */

enum { EV_RX_SEG, EV_RX_ACK, EV_DELACK, EV_SEND_TIMER, EV_RTO };


struct sim {
	const struct ls_params *p;
	struct ls_result *r;
	struct sim_heap heap;
	uint64_t now;
	bool overflow;
	/* path */
	uint64_t nic_free, link_free;
	uint64_t *qdep;
	uint32_t qhead, qlen;
	/* receiver */
	uint64_t rcv_nxt;
	uint32_t unacked;
	uint64_t delack_gen;
	bool delack_armed;
	/* sender */
	uint64_t snd_una, snd_nxt, high_water;
	uint32_t dupacks;
	uint64_t *sent_at;
	uint8_t *retx;
	struct gso_cc *cc;
	struct gso_sched *sched;
	uint32_t flow, queued_bursts;
	uint64_t timer_at, rto_at;
	uint64_t last_send;
};

static void push(struct sim *s, uint64_t t, uint32_t type, uint64_t arg)
{
	if (sim_heap_push(&s->heap, t, type, 0, arg))
		s->overflow = true;
}

static uint64_t ser_ns(uint64_t bytes, uint64_t rate)
{
	return bytes * 1000000000u / rate;
}

/* ---- path: NIC, then the bottleneck's FIFO of finite size ---- */

static void nic_send(struct sim *s, uint64_t seg)
{
	const struct ls_params *p = s->p;
	uint64_t wire = p->mss + p->hdr_len, start, arrive, dep;

	if (seg < s->high_water) {
		s->retx[seg % RING] = 1;
		s->r->retransmits++;
	} else {
		s->retx[seg % RING] = 0;
		s->high_water = seg + 1;
	}
	s->sent_at[seg % RING] = s->now;
	s->last_send = s->now;
	s->r->segs_sent++;

	start = s->nic_free > s->now ? s->nic_free : s->now;
	s->nic_free = start + ser_ns(wire, p->nic_rate);
	arrive = s->nic_free;
	while (s->qlen && s->qdep[s->qhead] <= arrive) {
		s->qhead = (s->qhead + 1) % p->queue_pkts;
		s->qlen--;
	}
	if (s->qlen >= p->queue_pkts) {
		s->r->drops++;
		return;
	}
	dep = (arrive > s->link_free ? arrive : s->link_free) + ser_ns(wire, p->link_rate);
	s->link_free = dep;
	s->qdep[(s->qhead + s->qlen) % p->queue_pkts] = dep;
	s->qlen++;
	if (s->qlen > s->r->max_queue)
		s->r->max_queue = s->qlen;
	push(s, dep + p->rtt_ns / 2, EV_RX_SEG, seg);
}

static void note_burst(struct sim *s, uint32_t segs)
{
	s->r->bursts++;
	if (segs > s->r->max_burst_segs)
		s->r->max_burst_segs = segs;
}

/* ---- receiver ---- */

static void send_ack(struct sim *s)
{
	s->unacked = 0;
	s->delack_armed = false;
	s->delack_gen++;
	s->r->acks++;
	push(s, s->now + s->p->rtt_ns / 2, EV_RX_ACK, s->rcv_nxt);
}

static void rx_seg(struct sim *s, uint64_t seg)
{
	if (seg != s->rcv_nxt) {
		/* out of order after a loss, or a duplicate: tell the sender now */
		send_ack(s);
		return;
	}
	s->rcv_nxt++;
	if (s->now >= s->p->warmup_ns)
		s->r->delivered += s->p->mss;
	if (++s->unacked >= s->p->ack_every) {
		send_ack(s);
	} else if (!s->delack_armed) {
		s->delack_armed = true;
		push(s, s->now + s->p->delack_ns, EV_DELACK, s->delack_gen);
	}
}

/* ---- sender ---- */

static uint32_t in_flight(const struct sim *s)
{
	return (uint32_t)(s->snd_nxt - s->snd_una);
}

static void arm_timer(struct sim *s, uint64_t t)
{
	if (t == UINT64_MAX || t >= s->timer_at)
		return;
	s->timer_at = t;
	push(s, t, EV_SEND_TIMER, t);
}

static void go_back_n(struct sim *s)
{
	if (s->sched) {
		struct gso_sched_burst junk[8];

		while (gso_sched__flow_drain(s->sched, s->flow, junk, 8) > 0)
			;
		s->queued_bursts = 0;
	}
	s->snd_nxt = s->snd_una;
}

/* Hand every burst that is due to the NIC; returns how many. */
static int release(struct sim *s)
{
	struct gso_sched_burst b;
	uint64_t next = UINT64_MAX;
	int n = 0;

	while (gso_sched__dequeue(s->sched, s->now, &b, &next) == 1) {
		for (uint32_t k = 0; k < b.segs; k++)
			nic_send(s, b.cookie + k);
		s->queued_bursts--;
		n++;
	}
	arm_timer(s, next);
	return n;
}

static void try_send(struct sim *s)
{
	const struct ls_params *p = s->p;
	uint32_t cwnd;

	if (p->mode == LS_WHOLE_WINDOW) {
		for (;;) {
			uint32_t frame = 65536 / p->mss;

			cwnd = gso_cc__cwnd(s->cc);
			if (frame > cwnd)
				frame = cwnd;
			/* 2.6.9-rc2 tcp_snd_test: the whole TSO frame must fit */
			if (in_flight(s) + frame > cwnd ||
			    (uint64_t)(in_flight(s) + frame) * p->mss > p->rcvbuf)
				return;
			for (uint32_t k = 0; k < frame; k++)
				nic_send(s, s->snd_nxt++);
			note_burst(s, frame);
		}
	}

	do {
		for (;;) {
			struct gso_cc_state st = { .sz = sizeof(st) };
			struct gso_burst b = { .sz = sizeof(b) };
			uint64_t room;
			int n;

			if (s->sched && s->queued_bursts >= 2)
				break;
			gso_cc__state(s->cc, &st);
			room = (uint64_t)in_flight(s) * p->mss;
			room = room >= p->rcvbuf ? 0 : p->rcvbuf - room;
			GSO_OPTS(gso_burst_in, in, .rate = st.pacing_rate, .queued = UINT64_MAX,
				 .mss = p->mss, .hdr_len = p->hdr_len, .cwnd = st.cwnd,
				 .in_flight = in_flight(s), .peer_wnd = (uint32_t)room,
				 .dev_max_segs = p->dev_max_segs, .min_rtt_ns = st.min_rtt_ns,
				 .now_ns = s->now, .last_send_ns = s->last_send,
				 .oldest_unacked_ns = s->sent_at[s->snd_una % RING],
				 .srtt_ns = st.srtt_ns);
			GSO_OPTS(gso_burst_opts, o, .pacing_shift = p->pacing_shift,
				 .flags = p->defer ? GSO_BURST_F_DEFER : 0);
			n = gso_burst_size(&in, &o, &b);
			if (n == 0 && b.limit == GSO_BURST_LIM_DEFER) {
				/* no ACK by then: look again, the bound sends it */
				s->r->deferrals++;
				arm_timer(s, b.defer_until_ns);
			}
			if (n <= 0)
				break;
			if (!s->sched) {
				for (int k = 0; k < n; k++)
					nic_send(s, s->snd_nxt++);
			} else {
				struct gso_sched_burst sb = { .cookie = s->snd_nxt, .flow = s->flow,
							      .wire_bytes = b.wire_bytes, .segs = b.segs };

				gso_sched__flow_set_rate(s->sched, s->flow, st.pacing_rate);
				if (gso_sched__enqueue(s->sched, s->now, &sb))
					break;
				s->queued_bursts++;
				s->snd_nxt += b.segs;
			}
			note_burst(s, b.segs);
		}
	} while (s->sched && release(s) > 0);
}

static void arm_rto(struct sim *s)
{
	struct gso_cc_state st = { .sz = sizeof(st) };

	if (!in_flight(s)) {
		s->rto_at = UINT64_MAX;
		return;
	}
	gso_cc__state(s->cc, &st);
	s->rto_at = s->now + st.rto_ns;
	push(s, s->rto_at, EV_RTO, s->rto_at);
}

static void rx_ack(struct sim *s, uint64_t ackno)
{
	const struct ls_params *p = s->p;

	if (ackno > s->snd_una) {
		uint64_t last = ackno - 1, rtt = 0;
		uint32_t acked = (uint32_t)(ackno - s->snd_una);
		uint32_t cwnd = gso_cc__cwnd(s->cc);

		if (!s->retx[last % RING])
			rtt = s->now - s->sent_at[last % RING];
		s->snd_una = ackno;
		if (s->snd_nxt < s->snd_una)
			s->snd_nxt = s->snd_una;
		s->dupacks = 0;
		/* growing cwnd past what the receiver lets out would be fiction */
		GSO_OPTS(gso_cc_ack, a, .now_ns = s->now, .rtt_ns = rtt, .acked_segs = acked,
			 .packets_out = in_flight(s),
			 .flags = (uint64_t)cwnd * p->mss < p->rcvbuf ? 0 : GSO_CC_ACK_NOT_CWND_LIMITED);
		gso_cc__on_ack(s->cc, &a);
		arm_rto(s);
	} else if (ackno == s->snd_una && in_flight(s) && ++s->dupacks == 3) {
		gso_cc__on_loss(s->cc, s->now, s->sent_at[s->snd_una % RING]);
		go_back_n(s);
	}
	try_send(s);
}

int ls_run(const struct ls_params *p, struct ls_result *r)
{
	struct sim s;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	s.p = p;
	s.r = r;
	s.timer_at = UINT64_MAX;
	s.rto_at = UINT64_MAX;
	s.heap.max = EV_CAP;
	s.qdep = calloc(p->queue_pkts, sizeof(*s.qdep));
	s.sent_at = calloc(RING, sizeof(*s.sent_at));
	s.retx = calloc(RING, 1);
	GSO_OPTS(gso_cc_opts, co, .algo = p->cc_algo, .mss = p->mss, .hdr_len = p->hdr_len,
		 .max_rate = p->max_rate);
	if (!s.qdep || !s.sent_at || !s.retx || gso_cc__create(&s.cc, &co))
		goto out;
	if (p->mode == LS_SCHED) {
		GSO_OPTS(gso_sched_opts, so, .max_flows = 1, .max_bursts = 8,
			 .mtu = p->mss + p->hdr_len);
		if (gso_sched__create(&s.sched, &so) || gso_sched__flow_add(s.sched, NULL, &s.flow))
			goto out;
	}

	try_send(&s);
	while (s.heap.n && !s.overflow) {
		struct sim_ev e = sim_heap_pop(&s.heap);

		if (e.t > p->duration_ns)
			break;
		s.now = e.t;
		r->events++;
		switch (e.type) {
		case EV_RX_SEG:
			rx_seg(&s, e.arg);
			break;
		case EV_RX_ACK:
			rx_ack(&s, e.arg);
			break;
		case EV_DELACK:
			if (s.delack_armed && e.arg == s.delack_gen) {
				r->delack_timeouts++;
				send_ack(&s);
			}
			break;
		case EV_SEND_TIMER:
			if (e.arg == s.timer_at) {
				s.timer_at = UINT64_MAX;
				try_send(&s);
			}
			break;
		case EV_RTO:
			if (e.arg == s.rto_at && in_flight(&s)) {
				gso_cc__on_rto(s.cc, s.now);
				go_back_n(&s);
				s.rto_at = UINT64_MAX;
				try_send(&s);
				arm_rto(&s);
			}
			break;
		}
	}
	if (s.overflow)
		goto out;
	r->goodput = (double)r->delivered * 1e9 / (double)(p->duration_ns - p->warmup_ns);
	r->utilization = r->goodput / ((double)p->link_rate * p->mss / (p->mss + p->hdr_len));
	r->final_cwnd = gso_cc__cwnd(s.cc);
	r->final_rate = gso_cc__pacing_rate(s.cc);
	rc = 0;
out:
	gso_sched__destroy(s.sched);
	gso_cc__destroy(s.cc);
	sim_heap_free(&s.heap);
	free(s.qdep);
	free(s.sent_at);
	free(s.retx);
	return rc;
}
