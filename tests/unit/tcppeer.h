/*
 * A scripted TCP peer for the stream and listener tests (test_tcp_passive.c,
 * test_tcp_rx.c), in virtual time:
 *  - a fake transmit device that records every segment the engine hands
 *    it, whole: the template's headers parsed (seq, ack, flags, window,
 *    MSS, window scale, SACK-permitted, timestamps, SACK blocks), the
 *    payload's length and first bytes;
 *  - the peer's segments as frames with options, payload and right
 *    checksums (IPv4 or IPv6), given to the engine as its receive path
 *    would (gsoi_engine_input_frame);
 *  - a connection and its peer: a stream accepted from a listener or
 *    connected, with everything offered in the handshake.
 *
 * Our side is 10.0.0.1 / fd00::1 port OUR_PORT, the peer 10.0.0.2 / fd00::2.
 */
#ifndef GSO_TEST_TCPPEER_H
#define GSO_TEST_TCPPEER_H

#include <stdbool.h>
#include <stdint.h>

#include <gso/engine.h>
#include "dev/dev_internal.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define MAX_REC 20000
#define MAX_EV 20000
#define PEEK 16 /* payload bytes recorded per segment */
#define OUR_PORT 8080

/* ---- the fake device ---- */

/* One segment we sent (a super-segment: `len` payload bytes cut at mss_seg). */
struct frec {
	uint64_t t;
	uint8_t l3, l4;
	uint16_t sport, dport;
	uint32_t seq, ack, len, mss_seg;
	uint8_t flags;
	uint16_t win;
	bool has_mss, sack_perm, has_ts, has_ws;
	uint16_t mss;
	uint8_t ws;
	uint32_t tsval, tsecr;
	unsigned nsack;
	uint32_t sack[4][2];
	uint8_t data[PEEK];
};

struct fk {
	struct gso_dev dev;
	uint32_t mtu;
	unsigned n;
	struct frec *r;
	struct dev_mem mem;
	bool discard;    /* count segments (sent), record none */
	uint64_t sent;
	uint32_t stuck;  /* descriptors the device says are in flight and never completes */
};

struct evlog {
	unsigned n;
	struct gso_engine_event ev[MAX_EV];
};

extern uint64_t vnow;        /* the engines' clock */
extern struct evlog *evs;    /* every event, in order */
extern uint8_t pattern[1 << 20]; /* the peer's bytes: byte i of its stream is pattern[i] (fill_pattern) */
extern const uint8_t our4[4], peer4[4], our6[16], peer6[16];

/* The suites' .init and .fini: vnow 1 s, an empty event log. */
void tp_setup(void);
void tp_teardown(void);
/* A device (MTU 1500, memory for stream buffers) and an engine on it, in virtual time. */
struct fk *fk_new(void);
struct gso_engine *tp_engine(struct fk *f);
/* Poll at every time the engine names, until `until`. */
void run_until(struct gso_engine *e, uint64_t until);
/* Events of `type` from event `from` on. */
unsigned nev(uint32_t type, unsigned from);

/* ---- the peer ---- */

struct pseg {
	uint8_t l3;
	uint16_t sport, dport;    /* the peer's port, ours */
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win;
	uint16_t mss;             /* 0: no MSS option */
	bool has_ws, sackperm, ts;
	uint8_t ws;
	uint32_t tsval, tsecr;
	unsigned nsack;
	uint32_t sack[4][2];
	const uint8_t *data;
	uint32_t len;
};

/* One frame from the peer, options in Linux's layout, right checksums, into the engine. */
void inject(struct gso_engine *h, const struct pseg *p);
/* The last segment we sent to peer port `pport` from record `from` on (NULL: none). */
const struct frec *last_to(const struct fk *f, uint16_t pport, unsigned from);
/* Segments to `pport` from `from` on with all of `flags` and none of `not`; pure ACKs. */
unsigned count_to(const struct fk *f, uint16_t pport, unsigned from, uint8_t flags, uint8_t not);
unsigned pure_acks(const struct fk *f, uint16_t pport, unsigned from);
struct gso_stream_info sinfo(struct gso_stream *s);
struct gso_listener_info linfo(struct gso_listener *l);
/* A listener on our address, port OUR_PORT (ctx 0x5157). */
struct gso_listener *listen_on(struct gso_engine *e, uint8_t l3, uint32_t flags, uint32_t backlog,
			       uint32_t syn_backlog, uint32_t rcvbuf, uint32_t mss);
/* A client's SYN with Linux's options (MSS 1460, SACK-permitted, timestamps, window scale 7). */
struct pseg client_syn(uint8_t l3, uint16_t pport, uint32_t isn);
/* A client's whole handshake with the listener of `e`; returns our ISN. */
uint32_t handshake(struct fk *f, struct gso_engine *e, uint8_t l3, uint16_t pport, uint32_t isn);
void fill_pattern(void);
bool after32(uint32_t a, uint32_t b);

/* ---- a connection and its peer ---- */

struct conn {
	struct fk *f;
	struct gso_engine *e;
	struct gso_listener *l;   /* the listener (accepted), or one opened by tw_listener() */
	struct gso_stream *s;
	uint8_t l3;
	bool passive;
	uint16_t pport;
	uint32_t irs;    /* the peer's ISN + 1: our stream's byte 0 */
	uint32_t oseq;   /* our next sequence number (what the peer acknowledges) */
	uint32_t pts;    /* the peer's clock */
	uint8_t ows;     /* our window scale */
};

/* The kinds every receive test runs on: accepted and connected, IPv4 and IPv6. */
struct kind {
	bool passive;
	uint8_t l3;
};
#define NKINDS 4u
extern const struct kind kinds[NKINDS];
#define KIND(k) kinds[k].passive ? "accepted" : "connected", kinds[k].l3 == GSO_L3_IPV6 ? "v6" : "v4"

/* The peer's ISN for conn_open (0: its own); tp_setup() clears it. */
extern uint32_t peer_isn;

/*
 * An established stream, accepted from a listener (passive) or connected,
 * over l3, with rcvbuf (0: default); the peer offered everything.
 */
struct conn conn_open(bool passive, uint8_t l3, uint32_t rcvbuf);
/* The same in two steps: up to our SYN-ACK (passive) or SYN; then the peer's reply, and established. */
struct conn conn_start(bool passive, uint8_t l3, uint32_t rcvbuf);
void conn_finish(struct conn *c);
void conn_close(struct conn *c);
/* A segment of the peer (ACK of c->oseq, timestamps, window 512 << 7). */
struct pseg cseg(const struct conn *c, uint32_t seq, uint8_t flags, const uint8_t *data, uint32_t len);
/* The peer sends bytes [off, off + len) of its stream; a header-only segment at seq. */
void pdata(struct conn *c, uint32_t off, uint32_t len, uint8_t flags);
void pctl(struct conn *c, uint32_t seq, uint8_t flags);
/* c->oseq past everything we sent, so that the peer's next ACK covers it. */
void sync_oseq(struct conn *c);
/* Events of `type` for c's stream from event `from` on. */
unsigned sev(const struct conn *c, uint32_t type, unsigned from);
/* Read `len` bytes and check they are the peer's bytes from `off`. */
void read_expect(struct conn *c, uint32_t off, uint32_t len);
struct gso_listener *tw_listener(struct conn *c);
void expect_end(struct conn *c, unsigned k, unsigned e0, int err, uint64_t tw);

#endif
