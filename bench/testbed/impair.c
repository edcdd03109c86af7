/*
 * impair: network faults for the bench test-bed (this kernel has no netem).
 *
 *   impair relay --a IF_A --b IF_B [impairments]
 *       A user-space relay in a middle namespace between two veth pairs:
 *       every frame arriving on IF_A leaves on IF_B ("fwd", sender ->
 *       receiver) and the other way round ("rev", the ACKs), through a
 *       per-direction FIFO with loss, delay +- jitter, reordering,
 *       duplication and a rate limit.  Frames are read and written with
 *       AF_PACKET sockets carrying a virtio_net_hdr, so checksum-partial
 *       and GSO packets cross unchanged (a GSO packet is one unit here:
 *       give the sending veth `tso off` for per-segment faults).
 *
 *   impair xdp --dev IF --loss PCT
 *       Attaches bench/bpf/impair_loss.bpf.c to IF (the receiving veth) and drops
 *       that share of matching packets in the kernel, at line rate.
 *
 * Both run until SIGINT/SIGTERM or --time, then print their settings and
 * counters (one JSON line with --json).  The settings line is also printed
 * on stderr at start, so every log of a run says what was impaired.
 *
 * Relay semantics (per direction that is impaired; --dir):
 *   loss     each IP frame is dropped with probability PCT/100
 *   delay    each frame leaves `delay` ms after it arrived, plus a uniform
 *            jitter in [-jitter, +jitter]; jitter never reorders (a frame
 *            never leaves before the one ahead of it), as with netem plus rate
 *   reorder  with probability PCT/100 a frame is held back until `gap`
 *            later frames of its direction have been queued (or 10 ms
 *            passed), so it arrives after them
 *   dup      with probability PCT/100 a frame is queued twice
 *   rate     bits/s serialisation (frame + 24 bytes of preamble/IFG/FCS)
 *   limit    at most this many frames / bytes queued; beyond, tail drop
 *   mtu      a router whose next hop has MTU N (--mtu N, 68..65535): an IP
 *            packet longer than N (IPv4 total length, IPv6 40 + payload
 *            length) is dropped, and answered like a router does: IPv4 with
 *            DF by ICMP "fragmentation needed" (type 3 code 4, next-hop MTU
 *            N, RFC 1191) quoting up to 576 bytes in all (RFC 1812), IPv6
 *            by ICMPv6 "packet too big" (type 2, MTU N) quoting up to 1280
 *            bytes in all (RFC 4443), also when N < 1280 (the IPv6 minimum:
 *            a broken router; Linux TCP ignores such an MTU).  IPv4 without
 *            DF would be fragmented by a router; the relay drops it
 *            (counted apart).  A GSO unit is judged by its first segment
 *            (headers + gso_size): too big, the whole unit goes and one
 *            error quotes that segment as it would have been on the wire.
 *            The error leaves through the interface the packet came in on,
 *            queued behind that side's traffic (so the return direction's
 *            delay and rate apply to it), Ethernet addresses swapped, the
 *            802.1Q tag kept, from --mtu-src / --mtu-src6 or else from the
 *            packet's destination address, TTL / hop limit 64.  Errors are
 *            rate-limited per direction by a token bucket of 10, refilled
 *            one per 10 ms; none is sent about an ICMP error, a non-first
 *            fragment or a non-unicast source (nor an IPv4 multicast).
 *            JSON counters, both directions together and per direction
 *            (fwd_, rev_): mtu_drops (an error was due), mtu_drops_no_df,
 *            mtu_drops_gso (GSO units among both; a unit counts once),
 *            mtu_icmp_sent, mtu_icmp_ratelimited, mtu_icmp_suppressed (not
 *            allowed, or the return queue was full).  The errors sent count
 *            in the other direction's tx.
 *   block-ack  --block-ack MS, on the reverse path (b -> a, the ACKs) whatever
 *            --dir says: every frame is held and all that are held leave
 *            together at the next multiple of MS since the start, as a
 *            Wi-Fi receiver's ACKs come back in its aggregates (the 2015
 *            ath10k thread).  Never reordered, never dropped: at most
 *            --block-ack-max frames (default 64, a block-ACK window) are
 *            held, and the one that fills the hold releases them all early
 *            (counted).  Released frames then take the direction's queue
 *            (its delay, rate and limits when --dir impairs it); the
 *            relay's own ICMP errors (--mtu) are not held.  JSON: rev_
 *            block_ack_frames, _releases, _early, _max_burst.
 * Non-IP frames (ARP) are only delayed, never lost, duplicated or reordered.
 * Decisions come from one seeded PRNG (--seed), drawn in arrival order.
 * Memory is bounded by the limits (plus a fixed receive batch).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "blockack.h"
#include "cpu.h"
#include "json.h"
#include "mtu_icmp.h"
#include "stream.h"
#include "util.h"
#include "xdploss.h"

#define BATCH 64
#define MAX_FRAME (65536 + 14 + 4)
#define VNET_LEN ((uint32_t)sizeof(struct virtio_net_hdr))
#define HOLD_TIMEOUT_NS 10000000ull
#define DIR_FWD 1
#define O_MTU_SRC 256
#define O_MTU_SRC6 257
#define O_BLOCK_ACK 258
#define O_BLOCK_ACK_MAX 259
#define DIR_REV 2
/* ICMP errors of --mtu: a token bucket per direction (RFC 1812 4.3.2.8 asks for a limit). */
#define ICMP_BURST 10u
#define ICMP_TOKEN_NS 10000000ull

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* ---- relay ---------------------------------------------------------------- */

struct relay_cfg {
	const char *if_a, *if_b;
	double loss, reorder, dup; /* probabilities 0..1 */
	double delay_ms, jitter_ms, rate_bps;
	uint32_t gap, limit_pkts;
	uint64_t limit_bytes, seed;
	int dirs;
	uint32_t mtu; /* 0: no --mtu */
	struct bench_mtu_src mtu_src;
	double ba_ms;    /* --block-ack on the reverse path; 0: none */
	uint32_t ba_max; /* frames held at most */
};

struct pkt {
	uint64_t t_depart;
	uint32_t len; /* virtio_net_hdr included */
	uint8_t *data;
};

struct dir_stats {
	uint64_t rx, rx_bytes, lost, dup, reordered, qdrop, tx, tx_bytes, tx_err, gso, nonip;
	uint64_t max_q_pkts, max_q_bytes, sock_drops;
	/* --mtu: dropped with an error due, dropped without DF; errors queued, held back by the
	 * rate limit, not allowed (RFC 1812 4.3.2.7) or lost to a full return queue; GSO units
	 * among the drops. */
	uint64_t mtu_drops, mtu_no_df, icmp_sent, icmp_ratelimited, icmp_suppressed, mtu_gso;
};

struct dir {
	const char *name;
	int in_fd, out_fd;
	bool impaired;
	struct pkt *ring;
	uint32_t head, count;
	uint64_t bytes;
	uint64_t last_release, link_free;
	struct pkt held;
	bool has_held;
	uint32_t held_wait;
	uint64_t held_deadline;
	uint32_t icmp_tokens;
	uint64_t icmp_refill; /* when the bucket last gained a token */
	struct dir *back;     /* the other direction: where this one's ICMP errors queue */
	bool ba_on;           /* --block-ack holds this direction's frames */
	struct bench_blockack ba;
	struct dir_stats st;
};

struct relay {
	struct relay_cfg c;
	uint64_t rng;
	uint16_t ip_id; /* of the IPv4 errors */
	struct dir d[2];
	int fd[2];
	uint8_t *rxbuf; /* BATCH * MAX_FRAME */
};

static double rnd01(struct relay *r)
{
	return (double)(bench_splitmix64(&r->rng) >> 11) * 0x1.0p-53;
}

static void settings_str(const struct relay_cfg *c, char *out, size_t n)
{
	char rate[32], mtu[128] = "", ba[64] = "";

	if (c->rate_bps >= 1e9)
		snprintf(rate, sizeof(rate), "%.6gGbit/s", c->rate_bps / 1e9);
	else if (c->rate_bps >= 1e6)
		snprintf(rate, sizeof(rate), "%.6gMbit/s", c->rate_bps / 1e6);
	else if (c->rate_bps > 0)
		snprintf(rate, sizeof(rate), "%.6gkbit/s", c->rate_bps / 1e3);
	else
		snprintf(rate, sizeof(rate), "unlimited");
	if (c->mtu) {
		char a4[INET_ADDRSTRLEN] = "dst", a6[INET6_ADDRSTRLEN] = "dst";

		if (c->mtu_src.has4)
			inet_ntop(AF_INET, c->mtu_src.addr4, a4, sizeof(a4));
		if (c->mtu_src.has6)
			inet_ntop(AF_INET6, c->mtu_src.addr6, a6, sizeof(a6));
		snprintf(mtu, sizeof(mtu), " mtu=%u mtu-src=%s mtu-src6=%s", c->mtu, a4, a6);
	}
	if (c->ba_ms > 0)
		snprintf(ba, sizeof(ba), " block-ack=%.6gms/%u", c->ba_ms, c->ba_max);
	snprintf(out, n,
		 "relay %s<->%s dir=%s loss=%.6g%% delay=%.6gms jitter=%.6gms reorder=%.6g%% gap=%u "
		 "dup=%.6g%% rate=%s limit=%upkts/%" PRIu64 "B seed=%" PRIu64 "%s%s",
		 c->if_a, c->if_b, c->dirs == DIR_FWD ? "fwd" : c->dirs == DIR_REV ? "rev" : "both",
		 c->loss * 100, c->delay_ms, c->jitter_ms, c->reorder * 100, c->gap, c->dup * 100, rate,
		 c->limit_pkts, c->limit_bytes, c->seed, mtu, ba);
}

static int open_port(const char *ifname)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int fd, one = 1, big = 32 << 20;

	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sll.sll_ifindex)
		bench_die(BENCH_EXIT_USAGE, errno, "interface %s", ifname);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (fd < 0)
		bench_die(BENCH_EXIT_USAGE, errno, "AF_PACKET socket");
	if (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)))
		bench_die(BENCH_EXIT_USAGE, errno, "PACKET_VNET_HDR");
	/* Our own transmissions on this port must not come back as input. */
	if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)))
		bench_die(BENCH_EXIT_USAGE, errno, "PACKET_IGNORE_OUTGOING");
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		bench_die(BENCH_EXIT_USAGE, errno, "bind to %s", ifname);
	return fd;
}

static bool is_ip(const uint8_t *frame, uint32_t len)
{
	uint16_t et;

	if (len < 14)
		return false;
	memcpy(&et, frame + 12, 2);
	et = ntohs(et);
	if (et == 0x8100 && len >= 18) {
		memcpy(&et, frame + 16, 2);
		et = ntohs(et);
	}
	return et == ETH_P_IP || et == ETH_P_IPV6;
}

/* Put p at the tail with its departure time; false when over a limit (p not taken). */
static bool enqueue(struct relay *r, struct dir *d, struct pkt *p, uint64_t now)
{
	uint64_t delay = 0, release, depart;
	uint32_t cap = r->c.limit_pkts;

	if (d->count >= cap || d->bytes + p->len > r->c.limit_bytes) {
		d->st.qdrop++;
		return false;
	}
	if (d->impaired) {
		double ms = r->c.delay_ms;

		if (r->c.jitter_ms > 0)
			ms += (2 * rnd01(r) - 1) * r->c.jitter_ms;
		if (ms > 0)
			delay = (uint64_t)(ms * 1e6);
	}
	release = now + delay;
	if (release < d->last_release)
		release = d->last_release;
	d->last_release = release;
	depart = release;
	if (d->impaired && r->c.rate_bps > 0) {
		if (depart < d->link_free)
			depart = d->link_free;
		d->link_free = depart + (uint64_t)((double)(p->len - VNET_LEN + 24) * 8e9 / r->c.rate_bps);
	}
	p->t_depart = depart;
	d->ring[(d->head + d->count) % cap] = *p;
	d->count++;
	d->bytes += p->len;
	if (d->count > d->st.max_q_pkts)
		d->st.max_q_pkts = d->count;
	if (d->bytes > d->st.max_q_bytes)
		d->st.max_q_bytes = d->bytes;
	return true;
}

static void enqueue_or_free(struct relay *r, struct dir *d, struct pkt *p, uint64_t now)
{
	if (!enqueue(r, d, p, now))
		free(p->data);
}

struct ba_ctx {
	struct relay *r;
	struct dir *d;
	uint64_t now;
};

static void ba_out(void *ctx, const struct bench_ba_frame *f)
{
	struct ba_ctx *c = ctx;
	struct pkt p = { .data = f->data, .len = f->len };

	enqueue_or_free(c->r, c->d, &p, c->now);
}

/* --block-ack: what d holds into its queue, when due (or at once: `early`, the hold is full). */
static void ba_release(struct relay *r, struct dir *d, uint64_t now, bool early)
{
	struct ba_ctx c = { r, d, now };

	bench_ba_release(&d->ba, now, early, ba_out, &c);
}

/* A frame of d past the faults: into d's queue, through the block-ACK hold if d has one. */
static bool admit(struct relay *r, struct dir *d, struct pkt *p, uint64_t now)
{
	if (!d->ba_on)
		return enqueue(r, d, p, now);
	if (bench_ba_hold(&d->ba, p->data, p->len, now))
		ba_release(r, d, now, true);
	return true;
}

static void admit_or_free(struct relay *r, struct dir *d, struct pkt *p, uint64_t now)
{
	if (!admit(r, d, p, now))
		free(p->data);
}

static void release_held(struct relay *r, struct dir *d, uint64_t now)
{
	if (!d->has_held)
		return;
	d->has_held = false;
	admit_or_free(r, d, &d->held, now);
}

/* Take a token of d's ICMP error bucket, if there is one. */
static bool icmp_token(struct dir *d, uint64_t now)
{
	uint64_t k = (now - d->icmp_refill) / ICMP_TOKEN_NS;

	if (k) {
		d->icmp_tokens = k >= ICMP_BURST - d->icmp_tokens ? ICMP_BURST : d->icmp_tokens + (uint32_t)k;
		d->icmp_refill = d->icmp_tokens == ICMP_BURST ? now : d->icmp_refill + k * ICMP_TOKEN_NS;
	}
	if (!d->icmp_tokens)
		return false;
	d->icmp_tokens--;
	return true;
}

/*
 * --mtu: true when the frame is too big for the next hop and was dropped,
 * its ICMP error (if any is due and allowed) queued on the way back.
 */
static bool mtu_drop(struct relay *r, struct dir *d, const uint8_t *buf, uint32_t len, uint64_t now)
{
	const struct virtio_net_hdr *vh = (const void *)buf;
	enum bench_mtu_verdict v = bench_mtu_judge(buf, len, r->c.mtu);
	struct pkt e;

	if (v != BENCH_MTU_PASS && vh->gso_type != VIRTIO_NET_HDR_GSO_NONE)
		d->st.mtu_gso++;
	switch (v) {
	case BENCH_MTU_PASS:
		return false;
	case BENCH_MTU_NO_DF:
		d->st.mtu_no_df++;
		return true;
	case BENCH_MTU_SILENT:
		d->st.mtu_drops++;
		d->st.icmp_suppressed++;
		return true;
	case BENCH_MTU_ICMP:
		break;
	}
	d->st.mtu_drops++;
	if (!icmp_token(d, now)) {
		d->st.icmp_ratelimited++;
		return true;
	}
	e.data = malloc(BENCH_MTU_ICMP_MAX);
	e.len = e.data ? bench_mtu_icmp_build(buf, len, r->c.mtu, &r->c.mtu_src, r->ip_id, e.data) : 0;
	if (e.len && enqueue(r, d->back, &e, now)) {
		r->ip_id++;
		d->st.icmp_sent++;
	} else {
		free(e.data);
		d->st.icmp_suppressed++;
	}
	return true;
}

/* One received frame (vnet header + frame) of direction d. */
static void on_frame(struct relay *r, struct dir *d, const uint8_t *buf, uint32_t len, uint64_t now)
{
	const struct virtio_net_hdr *vh = (const void *)buf;
	bool ip = is_ip(buf + VNET_LEN, len - VNET_LEN);
	struct pkt p = { .len = len };
	bool dup = false, hold = false;

	d->st.rx++;
	d->st.rx_bytes += len - VNET_LEN;
	if (vh->gso_type != VIRTIO_NET_HDR_GSO_NONE)
		d->st.gso++;
	if (!ip)
		d->st.nonip++;
	if (d->impaired && ip && r->c.mtu && mtu_drop(r, d, buf, len, now))
		return;
	if (d->impaired && ip) {
		if (r->c.loss > 0 && rnd01(r) < r->c.loss) {
			d->st.lost++;
			return;
		}
		dup = r->c.dup > 0 && rnd01(r) < r->c.dup;
		hold = r->c.reorder > 0 && rnd01(r) < r->c.reorder && !d->has_held;
	}
	p.data = malloc(len);
	if (!p.data) {
		d->st.qdrop++;
		return;
	}
	memcpy(p.data, buf, len);
	if (hold) {
		d->held = p;
		d->has_held = true;
		d->held_wait = r->c.gap;
		d->held_deadline = now + HOLD_TIMEOUT_NS;
		d->st.reordered++;
		return;
	}
	if (dup) {
		struct pkt q = { .len = len, .data = malloc(len) };

		if (q.data) {
			memcpy(q.data, buf, len);
			if (admit(r, d, &p, now)) {
				d->st.dup++;
				admit_or_free(r, d, &q, now);
			} else {
				free(p.data);
				free(q.data);
			}
		} else {
			admit_or_free(r, d, &p, now);
		}
	} else {
		admit_or_free(r, d, &p, now);
	}
	if (d->has_held && --d->held_wait == 0)
		release_held(r, d, now);
}

static void drain_rx(struct relay *r, int side, uint64_t now)
{
	struct dir *d = &r->d[side];
	struct mmsghdr mm[BATCH];
	struct iovec iov[BATCH];

	/* Bounded rounds so that transmission is not starved by a flood. */
	for (int round = 0; round < 8; round++) {
		int n;

		for (int i = 0; i < BATCH; i++) {
			iov[i].iov_base = r->rxbuf + (size_t)i * MAX_FRAME;
			iov[i].iov_len = MAX_FRAME;
			memset(&mm[i].msg_hdr, 0, sizeof(mm[i].msg_hdr));
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
		n = recvmmsg(d->in_fd, mm, BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			return;
		for (int i = 0; i < n; i++) {
			if (mm[i].msg_len <= VNET_LEN || (mm[i].msg_hdr.msg_flags & MSG_TRUNC)) {
				d->st.qdrop++;
				continue;
			}
			on_frame(r, d, iov[i].iov_base, mm[i].msg_len, now);
		}
		if (n < BATCH)
			return;
	}
}

/* Send every due frame of d; returns true when the socket pushed back. */
static bool transmit(struct relay *r, struct dir *d, uint64_t now)
{
	uint32_t cap = r->c.limit_pkts;

	while (d->count) {
		struct mmsghdr mm[BATCH];
		struct iovec iov[BATCH];
		int n = 0, sent;

		while (n < BATCH && (uint32_t)n < d->count) {
			struct pkt *p = &d->ring[(d->head + (uint32_t)n) % cap];

			if (p->t_depart > now)
				break;
			iov[n].iov_base = p->data;
			iov[n].iov_len = p->len;
			memset(&mm[n].msg_hdr, 0, sizeof(mm[n].msg_hdr));
			mm[n].msg_hdr.msg_iov = &iov[n];
			mm[n].msg_hdr.msg_iovlen = 1;
			n++;
		}
		if (!n)
			return false;
		sent = sendmmsg(d->out_fd, mm, (unsigned)n, MSG_DONTWAIT);
		if (sent < 0) {
			if (errno == EAGAIN || errno == ENOBUFS || errno == EINTR)
				return true;
			/* This frame cannot be sent (too big, bad header): drop it. */
			sent = 0;
			d->st.tx_err++;
			free(d->ring[d->head].data);
			d->head = (d->head + 1) % cap;
			d->count--;
			d->bytes -= iov[0].iov_len;
			continue;
		}
		for (int i = 0; i < sent; i++) {
			struct pkt *p = &d->ring[d->head];

			d->st.tx++;
			d->st.tx_bytes += p->len - VNET_LEN;
			d->bytes -= p->len;
			free(p->data);
			d->head = (d->head + 1) % cap;
			d->count--;
		}
		if (sent < n)
			return true;
	}
	return false;
}

static void sock_drops(struct relay *r)
{
	for (int s = 0; s < 2; s++) {
		struct tpacket_stats ts;
		socklen_t l = sizeof(ts);

		if (!getsockopt(r->d[s].in_fd, SOL_PACKET, PACKET_STATISTICS, &ts, &l))
			r->d[s].st.sock_drops += ts.tp_drops;
	}
}

static const char *dkey(char *k, size_t n, const char *dir, const char *name)
{
	snprintf(k, n, "%s_%s", dir, name);
	return k;
}

static void relay_report(struct relay *r, bool json, double secs)
{
	char set[512];

	settings_str(&r->c, set, sizeof(set));
	if (!json) {
		printf("impair: %s\n", set);
		for (int s = 0; s < 2; s++) {
			struct dir_stats *t = &r->d[s].st;

			printf("  %s: rx %" PRIu64 " tx %" PRIu64 " lost %" PRIu64 " dup %" PRIu64
			       " reordered %" PRIu64 " queue-drops %" PRIu64 " tx-errors %" PRIu64
			       " socket-drops %" PRIu64 " gso %" PRIu64 " max-queue %" PRIu64 " pkts\n",
			       r->d[s].name, t->rx, t->tx, t->lost, t->dup, t->reordered, t->qdrop,
			       t->tx_err, t->sock_drops, t->gso, t->max_q_pkts);
			if (r->d[s].ba_on)
				printf("  %s block-ack: frames %" PRIu64 " releases %" PRIu64 " early %" PRIu64
				       " max-burst %" PRIu64 "\n", r->d[s].name, r->d[s].ba.frames, r->d[s].ba.releases,
				       r->d[s].ba.early, r->d[s].ba.max_burst);
			if (r->c.mtu)
				printf("  %s mtu: drops %" PRIu64 " no-df-drops %" PRIu64 " (gso units %" PRIu64
				       ") icmp-sent %" PRIu64 " icmp-ratelimited %" PRIu64 " icmp-suppressed %" PRIu64
				       "\n", r->d[s].name, t->mtu_drops, t->mtu_no_df, t->mtu_gso, t->icmp_sent,
				       t->icmp_ratelimited, t->icmp_suppressed);
		}
		fflush(stdout);
		return;
	}
	struct bench_json j;

	bench_json_begin(&j, stdout);
	bench_json_str(&j, "tool", "impair");
	bench_json_str(&j, "mode", "relay");
	bench_json_str(&j, "settings", set);
	bench_json_str(&j, "dir", r->c.dirs == DIR_FWD ? "fwd" : r->c.dirs == DIR_REV ? "rev" : "both");
	bench_json_dbl(&j, "loss_pct", r->c.loss * 100);
	bench_json_dbl(&j, "delay_ms", r->c.delay_ms);
	bench_json_dbl(&j, "jitter_ms", r->c.jitter_ms);
	bench_json_dbl(&j, "reorder_pct", r->c.reorder * 100);
	bench_json_u64(&j, "reorder_gap", r->c.gap);
	bench_json_dbl(&j, "dup_pct", r->c.dup * 100);
	bench_json_dbl(&j, "rate_bps", r->c.rate_bps);
	bench_json_u64(&j, "limit_pkts", r->c.limit_pkts);
	bench_json_u64(&j, "limit_bytes", r->c.limit_bytes);
	bench_json_u64(&j, "seed", r->c.seed);
	bench_json_dbl(&j, "seconds", secs);
	bench_json_u64(&j, "mtu", r->c.mtu);
	bench_json_dbl(&j, "block_ack_ms", r->c.ba_ms);
	bench_json_u64(&j, "block_ack_max", r->c.ba_ms > 0 ? r->c.ba_max : 0);
	/* Both directions together; fwd_ and rev_ below say which. */
	bench_json_u64(&j, "mtu_drops", r->d[0].st.mtu_drops + r->d[1].st.mtu_drops);
	bench_json_u64(&j, "mtu_drops_no_df", r->d[0].st.mtu_no_df + r->d[1].st.mtu_no_df);
	bench_json_u64(&j, "mtu_icmp_sent", r->d[0].st.icmp_sent + r->d[1].st.icmp_sent);
	bench_json_u64(&j, "mtu_icmp_ratelimited", r->d[0].st.icmp_ratelimited + r->d[1].st.icmp_ratelimited);
	bench_json_u64(&j, "mtu_icmp_suppressed", r->d[0].st.icmp_suppressed + r->d[1].st.icmp_suppressed);
	bench_json_u64(&j, "mtu_drops_gso", r->d[0].st.mtu_gso + r->d[1].st.mtu_gso);
	for (int s = 0; s < 2; s++) {
		struct dir_stats *t = &r->d[s].st;
		char k[40];
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "rx"), t->rx);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "rx_bytes"), t->rx_bytes);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "tx"), t->tx);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "tx_bytes"), t->tx_bytes);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "lost"), t->lost);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "dup"), t->dup);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "reordered"), t->reordered);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "queue_drops"), t->qdrop);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "tx_errors"), t->tx_err);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "socket_drops"), t->sock_drops);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "gso"), t->gso);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "non_ip"), t->nonip);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "max_queue_pkts"), t->max_q_pkts);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "max_queue_bytes"), t->max_q_bytes);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "mtu_drops"), t->mtu_drops);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "mtu_drops_no_df"), t->mtu_no_df);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "mtu_icmp_sent"), t->icmp_sent);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "mtu_icmp_ratelimited"), t->icmp_ratelimited);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "mtu_icmp_suppressed"), t->icmp_suppressed);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "mtu_drops_gso"), t->mtu_gso);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "block_ack_frames"), r->d[s].ba.frames);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "block_ack_releases"), r->d[s].ba.releases);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "block_ack_early"), r->d[s].ba.early);
		bench_json_u64(&j, dkey(k, sizeof(k), r->d[s].name, "block_ack_max_burst"), r->d[s].ba.max_burst);
	}
	bench_json_end(&j);
}

static void relay_usage(FILE *f)
{
	fprintf(f,
		"usage: impair relay --a IF_A --b IF_B [options]\n"
		"Forwards frames between IF_A (sender side) and IF_B (receiver side) with faults.\n\n"
		"  -a, --a IFNAME          sender-side interface (frames from here go \"fwd\")\n"
		"  -b, --b IFNAME          receiver-side interface\n"
		"  -L, --loss PCT          drop probability, percent (default 0)\n"
		"  -D, --delay MS          one-way delay, milliseconds (default 0)\n"
		"  -J, --jitter MS         uniform jitter +-MS around the delay (never reorders)\n"
		"  -O, --reorder PCT       probability that a frame is held back behind later ones\n"
		"  -G, --reorder-gap N     frames that overtake a held frame (default 1)\n"
		"  -U, --dup PCT           duplication probability, percent\n"
		"  -r, --rate RATE         rate limit in bit/s, k/M/G suffixes (default unlimited)\n"
		"  -q, --limit PKTS        frames queued per direction (default 10000)\n"
		"  -Q, --limit-bytes B     bytes queued per direction (default 32M)\n"
		"  -d, --dir fwd|rev|both  which direction gets the faults (default fwd)\n"
		"  -m, --mtu N             next-hop MTU, 68..65535: drop longer IP packets (a GSO unit\n"
		"                          by its first segment's length) and answer each like a router:\n"
		"                          IPv4 with DF: ICMP type 3 code 4 with next-hop MTU N; IPv6:\n"
		"                          ICMPv6 packet too big with MTU N, also when N < 1280 (below\n"
		"                          IPv6's minimum, as a broken router would); IPv4 without DF is\n"
		"                          dropped, not fragmented.  Errors go back out of the arrival\n"
		"                          interface, at most 10 at once and 100/s per direction (token\n"
		"                          bucket); counted in mtu_* (JSON)\n"
		"      --mtu-src ADDR4     source address of the IPv4 errors (default: the dropped\n"
		"                          packet's destination address)\n"
		"      --mtu-src6 ADDR6    source address of the IPv6 errors (default: likewise)\n"
		"      --block-ack MS      the reverse path (IF_B -> IF_A, the ACKs), whatever --dir says:\n"
		"                          hold every frame and release all held together every MS ms\n"
		"                          (0 < MS <= 1000), as a Wi-Fi receiver's ACKs come back; never\n"
		"                          reordered or dropped; counted in rev_block_ack_* (JSON)\n"
		"      --block-ack-max N   frames held at most (default 64); the frame that fills the\n"
		"                          hold releases it early (rev_block_ack_early)\n"
		"  -s, --seed S            PRNG seed (default 1)\n"
		"  -T, --time S            exit after S seconds (default: at SIGINT/SIGTERM)\n"
		"  -j, --json              final report as one JSON line\n"
		"  -n, --netns NAME        run in network namespace NAME\n"
		"  -R, --ready-file PATH   create PATH once forwarding\n"
		"  -h, --help\n");
}

static int run_relay(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "a", required_argument, 0, 'a' },
		{ "b", required_argument, 0, 'b' },
		{ "loss", required_argument, 0, 'L' },
		{ "delay", required_argument, 0, 'D' },
		{ "jitter", required_argument, 0, 'J' },
		{ "reorder", required_argument, 0, 'O' },
		{ "reorder-gap", required_argument, 0, 'G' },
		{ "dup", required_argument, 0, 'U' },
		{ "rate", required_argument, 0, 'r' },
		{ "limit", required_argument, 0, 'q' },
		{ "limit-bytes", required_argument, 0, 'Q' },
		{ "dir", required_argument, 0, 'd' },
		{ "seed", required_argument, 0, 's' },
		{ "mtu", required_argument, 0, 'm' },
		{ "mtu-src", required_argument, 0, O_MTU_SRC },
		{ "mtu-src6", required_argument, 0, O_MTU_SRC6 },
		{ "block-ack", required_argument, 0, O_BLOCK_ACK },
		{ "block-ack-max", required_argument, 0, O_BLOCK_ACK_MAX },
		{ "time", required_argument, 0, 'T' },
		{ "json", no_argument, 0, 'j' },
		{ "netns", required_argument, 0, 'n' },
		{ "ready-file", required_argument, 0, 'R' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct relay *r = calloc(1, sizeof(*r));
	const char *netns = NULL, *ready = NULL;
	double time_s = 0, pct;
	bool json = false, ba_max_set = false;
	uint64_t v;
	int c, err;
	char set[512];

	if (!r)
		bench_die(BENCH_EXIT_USAGE, ENOMEM, "relay");
	r->c = (struct relay_cfg){ .gap = 1, .limit_pkts = 10000, .limit_bytes = 32u << 20,
				   .dirs = DIR_FWD, .seed = 1, .ba_max = 64 };
	while ((c = getopt_long(argc, argv, "a:b:L:D:J:O:G:U:r:q:Q:d:s:m:T:jn:R:h", lo, NULL)) != -1) {
		switch (c) {
		case 'a': r->c.if_a = optarg; break;
		case 'b': r->c.if_b = optarg; break;
		case 'L': case 'O': case 'U':
			if (bench_parse_double(optarg, &pct) || pct > 100)
				bench_die(BENCH_EXIT_USAGE, 0, "bad percentage '%s'", optarg);
			*(c == 'L' ? &r->c.loss : c == 'O' ? &r->c.reorder : &r->c.dup) = pct / 100;
			break;
		case 'D':
			if (bench_parse_double(optarg, &r->c.delay_ms) || r->c.delay_ms > 60000)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --delay '%s'", optarg);
			break;
		case 'J':
			if (bench_parse_double(optarg, &r->c.jitter_ms) || r->c.jitter_ms > 60000)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --jitter '%s'", optarg);
			break;
		case 'G':
			if (bench_parse_u64(optarg, &v) || !v || v > 1000000)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --reorder-gap '%s'", optarg);
			r->c.gap = (uint32_t)v;
			break;
		case 'r':
			if (bench_parse_rate(optarg, &r->c.rate_bps))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --rate '%s'", optarg);
			break;
		case 'q':
			if (bench_parse_u64(optarg, &v) || !v || v > 10000000)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --limit '%s'", optarg);
			r->c.limit_pkts = (uint32_t)v;
			break;
		case 'Q':
			if (bench_parse_size(optarg, &r->c.limit_bytes) || r->c.limit_bytes < MAX_FRAME ||
			    r->c.limit_bytes > (16ull << 30))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --limit-bytes '%s' (at least 64K)", optarg);
			break;
		case 'd':
			r->c.dirs = !strcmp(optarg, "fwd") ? DIR_FWD : !strcmp(optarg, "rev") ? DIR_REV
				  : !strcmp(optarg, "both") ? DIR_FWD | DIR_REV : 0;
			if (!r->c.dirs)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --dir '%s'", optarg);
			break;
		case 's':
			if (bench_parse_u64(optarg, &r->c.seed))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --seed '%s'", optarg);
			break;
		case 'm':
			if (bench_parse_u64(optarg, &v) || v < 68 || v > 65535)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --mtu '%s' (68..65535)", optarg);
			r->c.mtu = (uint32_t)v;
			break;
		case O_MTU_SRC:
			if (inet_pton(AF_INET, optarg, r->c.mtu_src.addr4) != 1)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --mtu-src '%s' (an IPv4 address)", optarg);
			r->c.mtu_src.has4 = true;
			break;
		case O_MTU_SRC6:
			if (inet_pton(AF_INET6, optarg, r->c.mtu_src.addr6) != 1)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --mtu-src6 '%s' (an IPv6 address)", optarg);
			r->c.mtu_src.has6 = true;
			break;
		case O_BLOCK_ACK:
			if (bench_parse_double(optarg, &r->c.ba_ms) || !(r->c.ba_ms > 0 && r->c.ba_ms <= 1000))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --block-ack '%s' (milliseconds, 0 < MS <= 1000)", optarg);
			break;
		case O_BLOCK_ACK_MAX:
			if (bench_parse_u64(optarg, &v) || !v || v > 65536)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --block-ack-max '%s' (1..65536 frames)", optarg);
			r->c.ba_max = (uint32_t)v;
			ba_max_set = true;
			break;
		case 'T':
			if (bench_parse_double(optarg, &time_s))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --time '%s'", optarg);
			break;
		case 'j': json = true; break;
		case 'n': netns = optarg; break;
		case 'R': ready = optarg; break;
		case 'h': relay_usage(stdout); exit(0);
		default: relay_usage(stderr); exit(BENCH_EXIT_USAGE);
		}
	}
	if (optind != argc || !r->c.if_a || !r->c.if_b) {
		relay_usage(stderr);
		exit(BENCH_EXIT_USAGE);
	}
	if ((r->c.mtu_src.has4 || r->c.mtu_src.has6) && !r->c.mtu)
		bench_die(BENCH_EXIT_USAGE, 0, "--mtu-src and --mtu-src6 need --mtu");
	if (ba_max_set && !(r->c.ba_ms > 0))
		bench_die(BENCH_EXIT_USAGE, 0, "--block-ack-max needs --block-ack");
	if (netns && (err = bench_netns_enter(netns)))
		bench_die(BENCH_EXIT_USAGE, err, "netns %s", netns);
	r->rng = r->c.seed;
	r->fd[0] = open_port(r->c.if_a);
	r->fd[1] = open_port(r->c.if_b);
	r->rxbuf = malloc((size_t)BATCH * MAX_FRAME);
	for (int s = 0; s < 2; s++) {
		struct dir *d = &r->d[s];

		d->name = s == 0 ? "fwd" : "rev";
		d->in_fd = r->fd[s];
		d->out_fd = r->fd[1 - s];
		d->impaired = r->c.dirs & (s == 0 ? DIR_FWD : DIR_REV);
		d->back = &r->d[1 - s];
		d->icmp_tokens = ICMP_BURST;
		d->ring = calloc(r->c.limit_pkts, sizeof(*d->ring));
		if (!d->ring || !r->rxbuf)
			bench_die(BENCH_EXIT_USAGE, ENOMEM, "queues");
		/* The ACKs come back from the receiver's side: b -> a. */
		d->ba_on = s == 1 && r->c.ba_ms > 0;
		if (d->ba_on && bench_ba_init(&d->ba, (uint64_t)(r->c.ba_ms * 1e6), r->c.ba_max, bench_now_ns()))
			bench_die(BENCH_EXIT_USAGE, ENOMEM, "block-ack hold");
	}
	settings_str(&r->c, set, sizeof(set));
	fprintf(stderr, "impair: %s\n", set);
	if (ready) {
		int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0)
			bench_die(BENCH_EXIT_USAGE, errno, "ready file %s", ready);
		close(fd);
	}

	uint64_t t0 = bench_now_ns(), end = time_s > 0 ? t0 + (uint64_t)(time_s * 1e9) : UINT64_MAX;

	while (!stop_flag) {
		uint64_t now = bench_now_ns(), next = end;
		struct pollfd pf[2] = { { .fd = r->fd[0], .events = POLLIN },
					{ .fd = r->fd[1], .events = POLLIN } };
		struct timespec ts, *tsp = NULL;
		bool pushed_back = false;

		if (now >= end)
			break;
		for (int s = 0; s < 2; s++) {
			struct dir *d = &r->d[s];

			if (d->has_held && now >= d->held_deadline)
				release_held(r, d, now);
			if (d->ba_on)
				ba_release(r, d, now, false);
			pushed_back |= transmit(r, d, now);
			if (d->count && d->ring[d->head].t_depart < next)
				next = d->ring[d->head].t_depart;
			if (d->has_held && d->held_deadline < next)
				next = d->held_deadline;
			if (d->ba_on && bench_ba_deadline(&d->ba) < next)
				next = bench_ba_deadline(&d->ba);
		}
		if (pushed_back && next > now + 100000)
			next = now + 100000;
		if (next != UINT64_MAX) {
			uint64_t dt = next > now ? next - now : 0;

			ts.tv_sec = (time_t)(dt / 1000000000ull);
			ts.tv_nsec = (long)(dt % 1000000000ull);
			tsp = &ts;
		}
		if (ppoll(pf, 2, tsp, NULL) < 0 && errno != EINTR)
			bench_die(BENCH_EXIT_FAIL, errno, "ppoll");
		now = bench_now_ns();
		for (int s = 0; s < 2; s++)
			if (pf[s].revents & POLLIN)
				drain_rx(r, s, now);
	}
	sock_drops(r);
	relay_report(r, json, (double)(bench_now_ns() - t0) * 1e-9);
	if (r->d[1].ba_on)
		bench_ba_fini(&r->d[1].ba);
	return 0;
}

/* ---- xdp loss ------------------------------------------------------------- */

static void xdp_usage(FILE *f)
{
	fprintf(f,
		"usage: impair xdp --dev IFNAME --loss PCT [options]\n"
		"Drops PCT %% of matching packets arriving on IFNAME, in XDP (bench/bpf/impair_loss.bpf.c).\n\n"
		"  -i, --dev IFNAME        receiving interface (one of the bench's own veths)\n"
		"  -L, --loss PCT          drop probability, percent\n"
		"  -P, --proto any|tcp|udp only this L4 protocol (default any IP)\n"
		"  -p, --port N            only packets with this source or destination port\n"
		"  -s, --seed S            deterministic per-CPU PRNG (default 0: kernel PRNG)\n"
		"  -S, --skb-mode          generic XDP instead of native\n"
		"  -o, --bpf-obj PATH      program object (default <exe>/../bpf/impair_loss.bpf.o)\n"
		"  -T, --time S            detach and exit after S seconds (default: at SIGINT/SIGTERM)\n"
		"  -j, --json              final report as one JSON line\n"
		"  -n, --netns NAME        run in network namespace NAME\n"
		"  -R, --ready-file PATH   create PATH once attached\n"
		"  -h, --help\n");
}

static int run_xdp(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", required_argument, 0, 'i' },
		{ "loss", required_argument, 0, 'L' },
		{ "proto", required_argument, 0, 'P' },
		{ "port", required_argument, 0, 'p' },
		{ "seed", required_argument, 0, 's' },
		{ "skb-mode", no_argument, 0, 'S' },
		{ "bpf-obj", required_argument, 0, 'o' },
		{ "time", required_argument, 0, 'T' },
		{ "json", no_argument, 0, 'j' },
		{ "netns", required_argument, 0, 'n' },
		{ "ready-file", required_argument, 0, 'R' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct bench_xdploss_cfg cfg = { 0 };
	struct bench_xdploss_stats st;
	struct bench_xdploss *x;
	const char *dev = NULL, *netns = NULL, *ready = NULL, *obj = NULL, *proto = "any";
	double loss = -1, time_s = 0;
	bool json = false, skb = false;
	char errbuf[256], set[256];
	uint64_t v;
	int c, err, ifindex;

	while ((c = getopt_long(argc, argv, "i:L:P:p:s:So:T:jn:R:h", lo, NULL)) != -1) {
		switch (c) {
		case 'i': dev = optarg; break;
		case 'L':
			if (bench_parse_double(optarg, &loss) || loss > 100)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --loss '%s'", optarg);
			break;
		case 'P':
			proto = optarg;
			if (!strcmp(optarg, "tcp"))
				cfg.proto = IPPROTO_TCP;
			else if (!strcmp(optarg, "udp"))
				cfg.proto = IPPROTO_UDP;
			else if (strcmp(optarg, "any"))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --proto '%s'", optarg);
			break;
		case 'p':
			if (bench_parse_u64(optarg, &v) || !v || v > 65535)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --port '%s'", optarg);
			cfg.port = (uint16_t)v;
			break;
		case 's':
			if (bench_parse_u64(optarg, &cfg.seed))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --seed '%s'", optarg);
			break;
		case 'S': skb = true; break;
		case 'o': obj = optarg; break;
		case 'T':
			if (bench_parse_double(optarg, &time_s))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --time '%s'", optarg);
			break;
		case 'j': json = true; break;
		case 'n': netns = optarg; break;
		case 'R': ready = optarg; break;
		case 'h': xdp_usage(stdout); exit(0);
		default: xdp_usage(stderr); exit(BENCH_EXIT_USAGE);
		}
	}
	if (optind != argc || !dev || loss < 0) {
		xdp_usage(stderr);
		exit(BENCH_EXIT_USAGE);
	}
	if (!obj)
		obj = bench_xdploss_default_obj();
	if (netns && (err = bench_netns_enter(netns)))
		bench_die(BENCH_EXIT_USAGE, err, "netns %s", netns);
	ifindex = (int)if_nametoindex(dev);
	if (!ifindex)
		bench_die(BENCH_EXIT_USAGE, errno, "interface %s", dev);
	cfg.threshold = bench_xdploss_threshold(loss / 100);
	err = bench_xdploss_attach(&x, obj, ifindex, &cfg, skb, errbuf, sizeof(errbuf));
	if (err)
		bench_die(BENCH_EXIT_USAGE, 0, "xdp: %s", errbuf);
	snprintf(set, sizeof(set), "xdp %s loss=%.6g%% proto=%s port=%u seed=%" PRIu64 " mode=%s", dev,
		 loss, proto, cfg.port, cfg.seed, skb ? "generic" : "native");
	fprintf(stderr, "impair: %s\n", set);
	if (ready) {
		int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0)
			bench_die(BENCH_EXIT_USAGE, errno, "ready file %s", ready);
		close(fd);
	}
	double t0 = bench_now();

	while (!stop_flag && (time_s <= 0 || bench_now() - t0 < time_s))
		usleep(20000);
	err = bench_xdploss_stats(x, &st);
	bench_xdploss_detach(x);
	if (err)
		bench_die(BENCH_EXIT_FAIL, err, "reading XDP counters");
	if (!json) {
		printf("impair: %s\n  seen %" PRIu64 " matched %" PRIu64 " dropped %" PRIu64 " (%.2f%%)\n",
		       set, st.seen, st.matched, st.dropped,
		       st.matched ? 100.0 * (double)st.dropped / (double)st.matched : 0.0);
		return 0;
	}
	struct bench_json j;

	bench_json_begin(&j, stdout);
	bench_json_str(&j, "tool", "impair");
	bench_json_str(&j, "mode", "xdp");
	bench_json_str(&j, "settings", set);
	bench_json_str(&j, "dev", dev);
	bench_json_dbl(&j, "loss_pct", loss);
	bench_json_str(&j, "proto", proto);
	bench_json_u64(&j, "port", cfg.port);
	bench_json_u64(&j, "seed", cfg.seed);
	bench_json_str(&j, "xdp_mode", skb ? "generic" : "native");
	bench_json_u64(&j, "seen", st.seen);
	bench_json_u64(&j, "matched", st.matched);
	bench_json_u64(&j, "dropped", st.dropped);
	bench_json_u64(&j, "dropped_bytes", st.dropped_bytes);
	bench_json_dbl(&j, "drop_fraction", st.matched ? (double)st.dropped / (double)st.matched : 0);
	bench_json_end(&j);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: impair relay --a IF_A --b IF_B [faults]   user-space relay with faults\n"
		"       impair xdp --dev IF --loss PCT             XDP random loss on a receiving veth\n"
		"       impair COMMAND --help                      options of a command\n");
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (argc < 2) {
		usage(stderr);
		return BENCH_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "relay"))
		return run_relay(argc - 1, argv + 1);
	if (!strcmp(argv[1], "xdp"))
		return run_xdp(argc - 1, argv + 1);
	usage(stderr);
	return BENCH_EXIT_USAGE;
}
