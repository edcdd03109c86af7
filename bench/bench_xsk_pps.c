/*
 * Packet rate of small and full-size frames from one core, side by side
 * in one run on a veth made for the run (needs root):
 *
 *   raw xsk     a minimal AF_XDP sender of pre-built frames: UMEM filled
 *               once, descriptors recycled from the completion ring, one
 *               sendto() per batch.  No library logic; the same uapi
 *               constants (xdp/kernel/compat.h).  It is the limit.
 *   gso xsk     the same frames through libgso's AF_XDP backend
 *               (gso_dev__submit of one-segment super-segments, whole
 *               frames, checksum request as the device takes it)
 *   gso xsk sw  the same, checksums computed in software
 *   af_packet   AF_PACKET sendmmsg() of the pre-built frames, qdisc bypassed
 *   udp         a connected UDP socket, sendmmsg() of the payloads
 *
 * The peer veth drops every frame in an XDP program (bench/bpf/xdp_drop.bpf.c)
 * that also counts them: frames/s are frames that crossed the link, per
 * second of the sender's wall time, with everything (sender and the
 * peer's softirq) pinned to one CPU.  Gbit/s counts L2 bytes (Ethernet
 * header on, no FCS, no preamble).  AF_XDP runs in copy mode: a veth has
 * no zero-copy.  Rounds interleave the methods so that noise hits them
 * alike; the table prints medians and ratios to raw xsk.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <gso/gso.h>
#include <gso/dev.h>
#include <gso/xsk.h>

#include "kernel/compat.h"
#include "cpu.h"
#include "util.h"
#include "benchbed.h"

enum { M_RAW, M_GSO, M_GSO_SW, M_PACKET, M_UDP, M_COUNT };
static const char *const mname[M_COUNT] = { "raw xsk", "gso xsk", "gso xsk sw", "af_packet", "udp" };

#define BATCH 64
#define RING 2048u
#define MAX_ROUNDS 64
#define UDP_PORT 9

/* ---- the frames ---- */

struct frames {
	uint32_t len;            /* L2 frame bytes */
	uint32_t payload;        /* UDP payload bytes */
	uint8_t frame[2048];     /* the pre-built frame, checksums done */
	struct gso_tmpl tmpl;
};

static void build_frames(struct frames *f, const struct nsbed *b, uint32_t len)
{
	static uint8_t payload[2048];
	struct gso_frame out = { .buf = f->frame, .cap = sizeof(f->frame) };

	xskbed_udp_tmpl(b, UDP_PORT, UDP_PORT, &f->tmpl);
	f->len = len;
	f->payload = len - f->tmpl.hdr_len;
	for (uint32_t i = 0; i < f->payload; i++)
		payload[i] = (uint8_t)(i * 13 + 1);
	struct gso_extent ext = { payload, f->payload };
	struct gso_super s = { &f->tmpl, &ext, 1 };
	GSO_OPTS(gso_seg_opts, so, .mss = f->payload);
	if (gso_segment(&s, &so, &out, 1) != 1 || out.len != len)
		bench_die(BENCH_EXIT_FAIL, EINVAL, "frame");
}

/* ---- the raw AF_XDP sender ---- */

struct raw_ring {
	_Atomic uint32_t *prod, *cons;
	void *ring;
	uint32_t mask;
	void *map;
	size_t map_len;
};

struct raw_xsk {
	int fd;
	uint8_t *umem;
	uint64_t *free_;  /* frame addresses not in flight */
	uint32_t nfree;
	uint32_t tx_prod, tx_cons_cached, cq_cons;
	struct raw_ring tx, cq;
	uint32_t frame_len;
};

#define RAW_FRAME 2048u
#define RAW_NFRAMES (2 * RING)

static void raw_map(int fd, struct raw_ring *r, const struct xdp_ring_offset *o, off_t pgoff, size_t bytes)
{
	r->map_len = o->desc + bytes;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, pgoff);
	if (r->map == MAP_FAILED)
		bench_die(BENCH_EXIT_FAIL, errno, "mmap ring");
	r->prod = (_Atomic uint32_t *)((uint8_t *)r->map + o->producer);
	r->cons = (_Atomic uint32_t *)((uint8_t *)r->map + o->consumer);
	r->ring = (uint8_t *)r->map + o->desc;
}

/* Socket, rings, bind: 0, or -errno with nothing of the socket left open. */
static int raw_sock(struct raw_xsk *x, int ifindex, uint32_t queue)
{
	struct compat_xdp_umem_reg reg = { 0 };
	struct xdp_mmap_offsets off;
	socklen_t ol = sizeof(off);
	uint32_t tx = RING, cq = 2 * RING, fill = 64, budget = RING;
	struct sockaddr_xdp sx = { .sxdp_family = AF_XDP, .sxdp_ifindex = (uint32_t)ifindex,
				   .sxdp_queue_id = queue, .sxdp_flags = XDP_COPY | XDP_USE_NEED_WAKEUP };
	int err;

	x->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (x->fd < 0)
		bench_die(BENCH_EXIT_SKIP, errno, "AF_XDP socket");
	reg.addr = (uint64_t)(uintptr_t)x->umem;
	reg.len = (uint64_t)RAW_NFRAMES * RAW_FRAME;
	reg.chunk_size = RAW_FRAME;
	if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_UMEM_FILL_RING, &fill, sizeof(fill)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &cq, sizeof(cq)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_TX_RING, &tx, sizeof(tx)) ||
	    getsockopt(x->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &ol))
		bench_die(BENCH_EXIT_FAIL, errno, "raw AF_XDP set-up");
	raw_map(x->fd, &x->tx, &off.tx, XDP_PGOFF_TX_RING, RING * sizeof(struct xdp_desc));
	x->tx.mask = RING - 1;
	raw_map(x->fd, &x->cq, &off.cr, (off_t)XDP_UMEM_PGOFF_COMPLETION_RING, 2 * RING * sizeof(uint64_t));
	x->cq.mask = 2 * RING - 1;
	if (bind(x->fd, (struct sockaddr *)&sx, sizeof(sx))) {
		err = -errno;
		close(x->fd);
		munmap(x->tx.map, x->tx.map_len);
		munmap(x->cq.map, x->cq.map_len);
		return err;
	}
	/* Same per-call budget as the backend asks for. */
	setsockopt(x->fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &budget, sizeof(budget));
	return 0;
}

static void raw_open(struct raw_xsk *x, int ifindex, uint32_t queue, const struct frames *f)
{
	int err;

	memset(x, 0, sizeof(*x));
	x->frame_len = f->len;
	x->umem = mmap(NULL, (size_t)RAW_NFRAMES * RAW_FRAME, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	x->free_ = calloc(RAW_NFRAMES, sizeof(*x->free_));
	if (x->umem == MAP_FAILED || !x->free_)
		bench_die(BENCH_EXIT_FAIL, ENOMEM, "raw umem");
	for (uint32_t i = 0; i < RAW_NFRAMES; i++) {
		memcpy(x->umem + (size_t)i * RAW_FRAME, f->frame, f->len);
		x->free_[x->nfree++] = (uint64_t)i * RAW_FRAME;
	}
	/*
	 * The queue is released a moment after the previous socket on it (the
	 * last frame size's) closed: EBUSY until then, as gso_xsk__create()
	 * knows.  A failed bind consumes the socket's rings, so each try is a
	 * new socket.
	 */
	for (int waited_ms = 0;; waited_ms += 10) {
		err = raw_sock(x, ifindex, queue);
		if (err != -EBUSY || waited_ms >= 2000)
			break;
		usleep(10000);
	}
	if (err)
		bench_die(BENCH_EXIT_FAIL, -err, "raw AF_XDP bind");
}

static uint64_t raw_reap(struct raw_xsk *x)
{
	uint32_t prod = atomic_load_explicit(x->cq.prod, memory_order_acquire), n = prod - x->cq_cons;
	const uint64_t *ring = x->cq.ring;

	for (uint32_t i = 0; i < n; i++)
		x->free_[x->nfree++] = ring[(x->cq_cons + i) & x->cq.mask];
	x->cq_cons = prod;
	atomic_store_explicit(x->cq.cons, prod, memory_order_release);
	return n;
}

/* One batch: reserve, describe, publish, kick, reap.  Returns frames completed. */
static uint64_t raw_batch(struct raw_xsk *x)
{
	struct xdp_desc *ring = x->tx.ring;
	uint32_t n = BATCH;

	if (RING - (x->tx_prod - x->tx_cons_cached) < n)
		x->tx_cons_cached = atomic_load_explicit(x->tx.cons, memory_order_acquire);
	if (RING - (x->tx_prod - x->tx_cons_cached) < n)
		n = RING - (x->tx_prod - x->tx_cons_cached);
	if (n > x->nfree)
		n = x->nfree;
	for (uint32_t i = 0; i < n; i++) {
		struct xdp_desc *d = &ring[(x->tx_prod + i) & x->tx.mask];
		d->addr = x->free_[--x->nfree];
		d->len = x->frame_len;
		d->options = 0;
	}
	x->tx_prod += n;
	atomic_store_explicit(x->tx.prod, x->tx_prod, memory_order_release);
	/* Copy mode transmits inside sendto(); always kick. */
	sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
	return raw_reap(x);
}

/* ---- the other senders ---- */

struct gso_side {
	struct gso_dev *dev;
	struct gso_buf buf;
	struct gso_tx tx[BATCH];
};

static void gso_open(struct gso_side *g, int ifindex, uint32_t queue, uint32_t flags, const struct frames *f)
{
	GSO_OPTS(gso_xsk_opts, o, .mode = GSO_XSK_MODE_COPY, .queue_id = queue, .flags = flags);
	int err = gso_xsk__create(&g->dev, ifindex, &o);

	if (err)
		bench_die(BENCH_EXIT_SKIP, -err, "libgso AF_XDP device");
	err = gso_dev__buf_alloc(g->dev, f->payload, &g->buf);
	if (err)
		bench_die(BENCH_EXIT_FAIL, -err, "buffer");
	memcpy(g->buf.data, f->frame + f->tmpl.hdr_len, f->payload);
	for (int i = 0; i < BATCH; i++)
		g->tx[i] = (struct gso_tx){ .tmpl = &f->tmpl, .buf = &g->buf, .len = f->payload, .mss = f->payload };
}

static uint64_t gso_batch(struct gso_side *g)
{
	int r = gso_dev__submit(g->dev, g->tx, BATCH);

	if (r < 0 && r != -EAGAIN && r != -ENOBUFS)
		bench_die(BENCH_EXIT_FAIL, -r, "gso_dev__submit");
	if (r < 0)
		gso_dev__reap(g->dev, 0);
	return r > 0 ? (uint64_t)r : 0;
}

static int packet_open(int ifindex)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP), .sll_ifindex = ifindex };
	int one = 1, fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&ll, sizeof(ll)))
		bench_die(BENCH_EXIT_FAIL, errno, "AF_PACKET");
	/* AF_XDP copy mode bypasses the qdisc too. */
	setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	return fd;
}

static int udp_open(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(UDP_PORT) };
	int big = 4 << 20, fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, XSKBED_IP1, &a.sin_addr);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		bench_die(BENCH_EXIT_FAIL, errno, "UDP socket");
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
	return fd;
}

static struct mmsghdr msgs[BATCH];
static struct iovec iovs[BATCH];

static void mmsg_prepare(const void *p, size_t len)
{
	for (int i = 0; i < BATCH; i++) {
		iovs[i] = (struct iovec){ (void *)p, len };
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_iov = &iovs[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
}

static uint64_t mmsg_batch(int fd)
{
	int r = sendmmsg(fd, msgs, BATCH, 0);

	if (r < 0 && errno != ENOBUFS && errno != EAGAIN)
		bench_die(BENCH_EXIT_FAIL, errno, "sendmmsg");
	return r > 0 ? (uint64_t)r : 0;
}

/* ---- measuring ---- */

struct senders {
	struct raw_xsk raw;
	struct gso_side gso, gso_sw;
	int pkt_fd, udp_fd;
	const struct frames *f;
};

/* Run method m for `secs`; frames counted at the peer, per second, and the sender's own count. */
static double run(struct senders *s, int m, double secs, int cnt_fd, double *sender_fps)
{
	uint64_t f0, b0, f1, b1, sent = 0;
	double t0, t1;

	if (m == M_PACKET || m == M_UDP)
		mmsg_prepare(m == M_PACKET ? (const void *)s->f->frame : (const void *)(s->f->frame + s->f->tmpl.hdr_len),
			     m == M_PACKET ? s->f->len : s->f->payload);
	xskbed_drop_count(cnt_fd, &f0, &b0);
	t0 = bench_now();
	for (unsigned i = 0;; i++) {
		switch (m) {
		case M_RAW: sent += raw_batch(&s->raw); break;
		case M_GSO: sent += gso_batch(&s->gso); break;
		case M_GSO_SW: sent += gso_batch(&s->gso_sw); break;
		case M_PACKET: sent += mmsg_batch(s->pkt_fd); break;
		default: sent += mmsg_batch(s->udp_fd); break;
		}
		if ((i & 7) == 0 && bench_now() - t0 >= secs)
			break;
	}
	t1 = bench_now();
	/* Let what is still queued drain before the next method starts. */
	if (m == M_GSO || m == M_GSO_SW) {
		struct gso_side *g = m == M_GSO ? &s->gso : &s->gso_sw;
		gso_dev__kick(g->dev);
		gso_dev__reap(g->dev, 0);
	} else if (m == M_RAW) {
		raw_reap(&s->raw);
	}
	xskbed_drop_count(cnt_fd, &f1, &b1);
	*sender_fps = (double)sent / (t1 - t0);
	return (double)(f1 - f0) / (t1 - t0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(const double *v, unsigned n)
{
	double t[MAX_ROUNDS];

	memcpy(t, v, n * sizeof(*t));
	qsort(t, n, sizeof(*t), cmp_double);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bench_xsk_pps [--quick] [--seconds S] [--rounds N] [--cpu C]\n"
		"Frames/s and Gbit/s of 64-byte and 1514-byte frames from one core: libgso's AF_XDP\n"
		"backend next to a minimal raw AF_XDP sender of pre-built frames (the limit), AF_PACKET\n"
		"sendmmsg and a UDP socket, on a veth whose peer drops everything in XDP.\n"
		"Needs root: creates two network namespaces for the run (removed at exit, also on\n"
		"signals); the host's interfaces are never touched.  The drop program is looked up in\n"
		"$GSO_BPF_DIR, else <program dir>/../bpf/xdp_drop.bpf.o.\n"
		"  --quick       one short round (a smoke test; numbers are rough)\n"
		"  --seconds S   time per method per round (default 1)\n"
		"  --rounds N    rounds, methods interleaved (default 5)\n"
		"  --cpu C       CPU to run on (default: the one it starts on)\n"
		"  --only M      run one method (\"raw xsk\", \"gso xsk\", \"gso xsk sw\", af_packet, udp): for profiling\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },         { "seconds", required_argument, NULL, 's' },
		{ "rounds", required_argument, NULL, 'r' },  { "cpu", required_argument, NULL, 'c' },
		{ "only", required_argument, NULL, 'o' },    { "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static const uint32_t sizes[2] = { 64, 1514 };
	static double fps[2][M_COUNT][MAX_ROUNDS], sfps[2][M_COUNT][MAX_ROUNDS];
	double secs = 1;
	uint64_t rounds = 5, cpu = UINT64_MAX;
	char err[256];
	int o, cnt_fd, only = -1;

	while ((o = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (o) {
		case 'q': secs = 0.25; rounds = 1; break;
		case 's': if (bench_parse_double(optarg, &secs) || secs <= 0 || secs > 60) bench_die(2, 0, "--seconds"); break;
		case 'r': if (bench_parse_u64(optarg, &rounds) || !rounds || rounds > MAX_ROUNDS) bench_die(2, 0, "--rounds (1..%d)", MAX_ROUNDS); break;
		case 'c': if (bench_parse_u64(optarg, &cpu) || cpu >= CPU_SETSIZE) bench_die(2, 0, "--cpu"); break;
		case 'o':
			for (int m = 0; m < M_COUNT; m++)
				if (!strcmp(optarg, mname[m]))
					only = m;
			if (only < 0)
				bench_die(2, 0, "--only: raw xsk, gso xsk, gso xsk sw, af_packet or udp");
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return BENCH_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return BENCH_EXIT_USAGE;
	}
	if (geteuid())
		bench_die(BENCH_EXIT_SKIP, EPERM, "needs root");
	if (cpu == UINT64_MAX)
		cpu = (uint64_t)sched_getcpu();
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	/* One core: the sender, and the peer's receive softirq that its sends raise. */
	if (sched_setaffinity(0, sizeof(set), &set))
		bench_die(BENCH_EXIT_USAGE, errno, "pin to CPU %lu", (unsigned long)cpu);

	struct nsbed bed;
	int e = xskbed_create(&bed, "pps", 3);
	if (e)
		bench_die(BENCH_EXIT_USAGE, -e, "test-bed");
	if (xskbed_attach_drop(&bed, 1, &cnt_fd, err, sizeof(err)))
		bench_die(BENCH_EXIT_SKIP, 0, "XDP drop program: %s", err);
	if (nsbed_enter(&bed, 0))
		bench_die(BENCH_EXIT_FAIL, errno, "enter side a");

	for (int z = 0; z < 2; z++) {
		struct frames f;
		struct senders s;
		build_frames(&f, &bed, sizes[z]);
		s.f = &f;
		/* A queue each, so that the AF_XDP senders stay bound side by side. */
		raw_open(&s.raw, bed.ifindex[0], 0, &f);
		gso_open(&s.gso, bed.ifindex[0], 1, GSO_XSK_F_NO_SG, &f);
		gso_open(&s.gso_sw, bed.ifindex[0], 2, GSO_XSK_F_NO_SG | GSO_XSK_F_NO_CSUM, &f);
		s.pkt_fd = packet_open(bed.ifindex[0]);
		s.udp_fd = udp_open();
		for (unsigned r = 0; r < rounds; r++)
			for (int k = 0; k < M_COUNT; k++) {
				int m = (int)((k + r) % M_COUNT);
				if (only < 0 || only == m)
					fps[z][m][r] = run(&s, m, secs, cnt_fd, &sfps[z][m][r]);
			}
		gso_dev__buf_free(s.gso.dev, &s.gso.buf);
		gso_dev__destroy(s.gso.dev);
		gso_dev__buf_free(s.gso_sw.dev, &s.gso_sw.buf);
		gso_dev__destroy(s.gso_sw.dev);
		close(s.raw.fd);
		munmap(s.raw.tx.map, s.raw.tx.map_len);
		munmap(s.raw.cq.map, s.raw.cq.map_len);
		munmap(s.raw.umem, (size_t)RAW_NFRAMES * RAW_FRAME);
		free(s.raw.free_);
		close(s.pkt_fd);
		close(s.udp_fd);
	}

	printf("one core (CPU %lu), veth, peer drops in XDP and counts; %lu round%s x %.2f s per method;\n"
	       "frames/s counted at the peer, medians; AF_XDP in copy mode; batches of %d\n",
	       (unsigned long)cpu, (unsigned long)rounds, rounds == 1 ? "" : "s", secs, BATCH);
	for (int z = 0; z < 2; z++) {
		double med[M_COUNT], smed[M_COUNT];
		printf("\n%u-byte frames\n%-11s %10s %9s %8s %14s\n", sizes[z], "method", "Mframes/s", "Gbit/s", "vs raw",
		       "sender Mfr/s");
		for (int m = 0; m < M_COUNT; m++) {
			med[m] = median(fps[z][m], (unsigned)rounds);
			smed[m] = median(sfps[z][m], (unsigned)rounds);
		}
		for (int m = 0; m < M_COUNT; m++)
			printf("%-11s %10.3f %9.3f %7.1f%% %14.3f\n", mname[m], med[m] / 1e6, med[m] * sizes[z] * 8 / 1e9,
			       100 * med[m] / med[M_RAW], smed[m] / 1e6);
		printf("goal: gso xsk >= 90%% of raw xsk: %s (%.1f%%); ahead of af_packet: %s (%.2fx); ahead of udp: %s (%.2fx)\n",
		       med[M_GSO] >= 0.9 * med[M_RAW] ? "met" : "MISSED", 100 * med[M_GSO] / med[M_RAW],
		       med[M_GSO] > med[M_PACKET] ? "met" : "MISSED", med[M_GSO] / med[M_PACKET],
		       med[M_GSO] > med[M_UDP] ? "met" : "MISSED", med[M_GSO] / med[M_UDP]);
	}
	nsbed_destroy(&bed);
	return BENCH_EXIT_OK;
}
