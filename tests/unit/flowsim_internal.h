/*
 * flowsim's state, shared by its two files: flowsim.c (flows, receivers,
 * the shared bottleneck) and flowsim_dev.c (the sender's own device as
 * the bottleneck, with TCP Small Queues and the aggregation estimator).
 * Only they include it.
 */
#ifndef GSO_TEST_FLOWSIM_INTERNAL_H
#define GSO_TEST_FLOWSIM_INTERNAL_H

#include <stdbool.h>

#include "flowsim.h"
#include "simheap.h"

#define ISN 1000u
#define FQ_ENTRIES 16384u
#define MAX_RANGES 65536u  /* out-of-order ranges a receiver holds */
#define UNSENT_TARGET (4u << 20) /* a bulk sender keeps this much queued */
#define APP_TICK_NS 1000000ull
#define HANDLE_BYTES (1ull << 30) /* a new buffer handle every GiB: offsets stay in 32 bits */
#define MAX_BACKOFF 6u
#define FS_TSQ_RETRY_NS 200000ull   /* as xdp/tcp's TSQ_RETRY_NS: a full device queue is looked at again */
#define FS_DEV_MAX_FRAMES (1u << 17) /* frames a sender device holds at most (a run that needs more fails) */

/* EV_OPP and EV_DONE are the aggregating device's (flowsim_dev.c). */
enum { EV_SEG, EV_ACK, EV_DELACK, EV_TX, EV_RTO, EV_APP, EV_OPP, EV_DONE };

struct ack_msg {
	uint32_t ack, n_sack, next_free;
	struct gso_flowq_sack sack[3];
};

struct range {
	uint64_t lo, hi; /* segments [lo, hi) held out of order */
};

struct fs_flow {
	unsigned id;
	const struct fs_flow_params *fp;
	struct gso_flowq *q;
	struct gso_cc *cc;
	struct gso_pacer pacer;
	struct gso_flowq_rel *rel;
	/* application */
	uint64_t written, avail;   /* bytes appended to the queue / made available by the app */
	uint64_t handle, handle_off;
	bool app_tick_armed;
	/* timers */
	uint64_t tx_at, tx_gen, rto_at, rto_gen;
	uint32_t backoff;
	/* with a sender device (p->dev.on): what the transmit engine keeps */
	struct gso_aggr aggr;      /* its looks at the device */
	struct gso_aggr_policy pol; /* the sizing of its last look */
	uint64_t dev_seen;         /* device completions counted at its previous look */
	bool cwnd_limited;         /* as the engine's s->cwnd_limited */
	/* receiver */
	uint64_t rcv_nxt;          /* next in-order segment */
	struct range *rng;
	uint32_t nrng;
	uint64_t last_ooo;
	uint32_t unacked;
	bool delack_armed;
	uint64_t delack_gen;
	struct fs_flow_result *res;
};

/* A frame posted to the aggregating device and not yet on the air. */
struct fs_dev_frame {
	uint64_t seg;
	uint32_t flow, wire;
};

struct fs_dev {
	struct fs_dev_frame *ring;
	uint32_t head, n, cap;
	uint64_t done;             /* wire bytes completed since the start (both modes) */
	uint64_t *rtt;             /* RTT samples in the measurement, ns */
	size_t nrtt, rtt_cap;
};

struct fs_sim {
	const struct fs_params *p;
	struct fs_result *r;
	struct sim_heap heap;
	uint64_t now;
	int err;
	uint32_t rng;
	/* bottleneck (with a sender device: q_bytes is its posted, not completed bytes) */
	uint64_t *qdep;            /* departure times of queued frames (ring) */
	uint32_t *qlen_bytes;      /* their sizes */
	uint32_t qhead, qn, qcap;
	uint64_t q_bytes, link_free, last_arrival;
	uint64_t q_area, q_area_from; /* integral of queue bytes over time (mean) */
	struct fs_dev dev;
	/* ACK messages */
	struct ack_msg *acks;
	uint32_t nacks, ack_free;
	struct fs_flow flow[FS_MAX_FLOWS];
};

/* flowsim.c */
void fs_push(struct fs_sim *s, uint64_t t, uint32_t type, uint32_t flow, uint64_t arg);
uint32_t fs_rand32(struct fs_sim *s);
void fs_queue_account(struct fs_sim *s, uint64_t until);
void fs_queue_drain(struct fs_sim *s, uint64_t t);
uint64_t fs_arrival(struct fs_sim *s, uint64_t dep);

/* flowsim_dev.c */
int fs_dev_init(struct fs_sim *s);
void fs_dev_free(struct fs_sim *s);
void fs_dev_post(struct fs_sim *s, struct fs_flow *f, uint64_t seg, uint32_t wire);
void fs_dev_event(struct fs_sim *s, const struct sim_ev *e);
uint32_t fs_dev_shift(struct fs_sim *s, struct fs_flow *f, uint64_t rate);
bool fs_dev_tsq_full(struct fs_sim *s, struct fs_flow *f, uint64_t rate, uint64_t full_burst);
void fs_dev_rtt(struct fs_sim *s, uint64_t rtt_ns);
void fs_dev_results(struct fs_sim *s);

#endif
