/*
 * Offload vs software segmentation, measured as the sender core's CPU per
 * byte at equal wire output (the 2002 e1000 experiment: 940 Mbit/s both
 * ways, 40 % CPU without TSO, 19 % with), side by side in one run on a
 * veth pair made for the run, the stock Linux stack receiving in the peer
 * namespace:
 *
 *   sw gso        AF_XDP backend (copy mode): software GSO, full frames
 *   e1000         the e1000 model: descriptors only on the sender; the
 *                 device thread (own core) segments and sends via AF_XDP
 *   vnet tso on   virtio_net_hdr backend, veth TSO/USO on: the
 *                 super-segment crosses the veth whole
 *   vnet tso off  the same with TSO/USO off: the kernel segments it in
 *                 software, in the sender's sendto()
 *   vnet sendmsg  the same backend without the TX ring (sendmmsg): the
 *                 kernel copies the payload into the skb once, where the
 *                 ring's zero-copy pages are copied again at the veth
 *                 crossing (skb_orphan_frags), after our copy into the ring
 *   tcp tso on/off  the kernel's own TCP (send() of 64 KiB), veth TSO on/off
 *   udp gso       the kernel's UDP_SEGMENT, for reference
 *
 * Our modes send UDP super-segments (44 x 1472 bytes of payload from
 * device buffers, resent over and over) to a UDP socket on the peer; TCP
 * goes to a TCP socket.  Receivers drain with MSG_TRUNC (no copy).  Each
 * mode runs paced at --rate (default 940 Mbit/s of payload) and unpaced.
 * The sender thread is pinned to CPU 0; the peer's receive processing is
 * steered to CPU 1 (RPS), where the e1000 device thread and the receivers
 * also run, so that the sender core does only sending work.
 *
 * Reported (medians over --rounds, modes interleaved per round):
 *   Gbit/s       payload delivered to the receiving socket per second
 *   snd s/GB     sender thread CPU (CLOCK_THREAD_CPUTIME_ID) per GB delivered
 *   vs sw        that, relative to sw gso at the same target rate
 *   core0 s/GB   all of CPU 0 (/proc/stat, includes softirq and other
 *                processes on this shared machine) per GB delivered
 *   dev s/GB     the e1000 device thread's own CPU per GB
 *   loss         payload sent but not delivered (UDP modes)
 * Kernel TCP's ACK-clocked transmit work runs in softirq, not in the
 * sender thread: its snd s/GB understates it; core0 s/GB includes it.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <gso/tmpl.h>
#include <gso/dev.h>
#include <gso/xsk.h>
#include <gso/vnet.h>
#include <gso/e1000.h>

#include "cpu.h"
#include "benchbed.h"
#include "util.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif

#define UDP_PORT 9000
#define TCP_PORT 9001
#define MSS 1472u
#define SEGS 44u
#define SUPER (MSS * SEGS)     /* 64768 bytes of payload per super-segment */
#define NBUF 16
#define TCP_WRITE 65536u
#define WARMUP_S 0.2
#define MAX_ROUNDS 15

enum mode { M_SW, M_E1000, M_VNET_ON, M_VNET_OFF, M_VNET_MSG, M_TCP_ON, M_TCP_OFF, M_UDP_GSO, M_COUNT };

static const char *const mode_name[M_COUNT] = {
	"sw gso (af_xdp)", "e1000 offload", "vnet tso on", "vnet tso off", "vnet sendmsg tso on",
	"kernel tcp tso on", "kernel tcp tso off", "kernel udp gso",
};
static const char *const mode_key[M_COUNT] = { "sw", "e1000", "vnet-on", "vnet-off", "vnet-msg",
					       "tcp-on", "tcp-off", "udp-gso" };
/* veth side-0 features per mode (TSO for TCP, USO for UDP super-segments). */
static const char *const mode_features[M_COUNT] = {
	"tso on tx-udp-segmentation on", "tso on tx-udp-segmentation on",
	"tso on tx-udp-segmentation on", "tso off tx-udp-segmentation off",
	"tso on tx-udp-segmentation on", "tso on", "tso off", "tx-udp-segmentation on",
};

struct result {
	double gbps, snd_gb, core0_gb, dev_gb, loss;
	bool ok;
};

struct cfg {
	double seconds, rate;
	unsigned rounds;
	unsigned modes; /* bit per mode */
	int cpu_send, cpu_rx;
	uint32_t spin_us;  /* e1000 device thread polling before it sleeps; 0 = library default */
	unsigned burst;    /* writes per wake-up / device submit; 0 = about 1 ms of data (4 unpaced) */
};

static struct nsbed bed;
static _Atomic uint64_t rx_bytes[2]; /* UDP, TCP */
static _Atomic bool rx_stop;
static int udp_fd = -1, tcp_lfd = -1;

/* ---- small helpers ---- */

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void sleep_until(uint64_t t_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(t_ns / 1000000000u), .tv_nsec = (long)(t_ns % 1000000000u) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void nap_us(long us)
{
	struct timespec ts = { 0, us * 1000L };

	nanosleep(&ts, NULL);
}

/* Busy jiffies of one CPU from /proc/stat (user nice system idle iowait irq softirq steal). */
static double cpu_busy_s(int cpu)
{
	char want[16], line[256];
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "re");
	double s = 0;

	if (!f)
		return 0;
	snprintf(want, sizeof(want), "cpu%d ", cpu);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want))) {
			sscanf(line + strlen(want), "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			       &v[3], &v[4], &v[5], &v[6], &v[7]);
			s = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)sysconf(_SC_CLK_TCK);
			break;
		}
	fclose(f);
	return s;
}

/* ---- receivers (side 1) ---- */

static void *udp_rx(void *arg)
{
	enum { BATCH = 64 };
	static char bufs[BATCH][64];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];

	pin(*(int *)arg);
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
		memset(&m[i], 0, sizeof(m[i]));
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	while (!atomic_load_explicit(&rx_stop, memory_order_relaxed)) {
		struct pollfd p = { .fd = udp_fd, .events = POLLIN };
		int n;

		if (poll(&p, 1, 50) <= 0)
			continue;
		/* MSG_TRUNC: msg_len is the datagram's length, only 64 bytes are copied. */
		n = recvmmsg(udp_fd, m, BATCH, MSG_DONTWAIT | MSG_TRUNC, NULL);
		for (int i = 0; i < n; i++)
			atomic_fetch_add_explicit(&rx_bytes[0], m[i].msg_len, memory_order_relaxed);
	}
	return NULL;
}

static void *tcp_rx(void *arg)
{
	pin(*(int *)arg);
	while (!atomic_load_explicit(&rx_stop, memory_order_relaxed)) {
		struct pollfd p = { .fd = tcp_lfd, .events = POLLIN };
		int c;

		if (poll(&p, 1, 50) <= 0)
			continue;
		c = accept(tcp_lfd, NULL, NULL);
		if (c < 0)
			continue;
		for (;;) {
			struct pollfd q = { .fd = c, .events = POLLIN };
			ssize_t n;

			if (atomic_load_explicit(&rx_stop, memory_order_relaxed))
				break;
			if (poll(&q, 1, 50) <= 0)
				continue;
			/* TCP discards with MSG_TRUNC (Linux 4.x+): counted, not copied. */
			n = recv(c, NULL, 1 << 20, MSG_TRUNC | MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				break;
			if (n > 0)
				atomic_fetch_add_explicit(&rx_bytes[1], (uint64_t)n, memory_order_relaxed);
		}
		close(c);
	}
	return NULL;
}

static int start_receivers(pthread_t th[2], int *cpu)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int big = 64 << 20, one = 1, err;

	err = nsbed_enter(&bed, 1);
	if (err)
		return err;
	inet_pton(AF_INET, bed.ip[1], &a.sin_addr);
	udp_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	tcp_lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (udp_fd < 0 || tcp_lfd < 0)
		return -errno;
	if (setsockopt(udp_fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)))
		setsockopt(udp_fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	a.sin_port = htons(UDP_PORT);
	if (bind(udp_fd, (struct sockaddr *)&a, sizeof(a)))
		return -errno;
	setsockopt(tcp_lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_port = htons(TCP_PORT);
	if (bind(tcp_lfd, (struct sockaddr *)&a, sizeof(a)) || listen(tcp_lfd, 4))
		return -errno;
	/* Threads inherit the namespace of the thread that creates them. */
	if (pthread_create(&th[0], NULL, udp_rx, cpu) || pthread_create(&th[1], NULL, tcp_rx, cpu))
		return -EAGAIN;
	return nsbed_enter(&bed, 0);
}

/* ---- senders (side 0), one thread per run ---- */

struct run {
	enum mode m;
	const struct cfg *c;
	double rate;     /* bit/s of payload, 0 = as fast as it goes */
	struct result r;
	char err[160];
};

/* What the timed part measures. */
struct meter {
	uint64_t t0, cpu0, dev0, rx0, sent0;
	double core0;
};

static unsigned rx_kind(enum mode m)
{
	return m == M_TCP_ON || m == M_TCP_OFF;
}

static void meter_start(struct meter *mt, const struct run *r, uint64_t dev_ns, uint64_t sent)
{
	mt->t0 = bench_now_ns();
	mt->cpu0 = bench_thread_cpu_ns();
	mt->core0 = cpu_busy_s(r->c->cpu_send);
	mt->dev0 = dev_ns;
	mt->rx0 = atomic_load(&rx_bytes[rx_kind(r->m)]);
	mt->sent0 = sent;
}

static void meter_stop(const struct meter *mt, struct run *r, uint64_t dev_ns, uint64_t sent)
{
	double wall = (double)(bench_now_ns() - mt->t0) * 1e-9;
	double cpu = (double)(bench_thread_cpu_ns() - mt->cpu0) * 1e-9;
	double core = cpu_busy_s(r->c->cpu_send) - mt->core0;
	uint64_t rx = atomic_load(&rx_bytes[rx_kind(r->m)]) - mt->rx0;
	double gb = (double)rx * 1e-9;

	r->r.gbps = (double)rx * 8 / wall * 1e-9;
	r->r.snd_gb = gb > 0 ? cpu / gb : 0;
	r->r.core0_gb = gb > 0 ? core / gb : 0;
	r->r.dev_gb = gb > 0 ? (double)(dev_ns - mt->dev0) * 1e-9 / gb : 0;
	r->r.loss = sent > mt->sent0 ? 1.0 - (double)rx / (double)(sent - mt->sent0) : 0;
	r->r.ok = rx > 0;
}

/*
 * The send loop shared by every mode.  `one` sends up to `n` writes of
 * `bytes` payload each and returns how many it sent (>= 1), -EAGAIN to be
 * retried after a short nap, or another -errno.  Paced, each wake-up
 * sends a burst of writes, about 1 ms of data at the rate (Linux's
 * pacing shift 10, design invariant 2), handed to the device at once.
 */
static void loop(struct run *r, int (*one)(void *, unsigned), void *ctx, uint32_t bytes,
		 uint64_t (*dev_ns)(void *))
{
	uint64_t start = bench_now_ns(), next = start, sent = 0, end, gap = 0;
	unsigned burst = 1;
	struct meter mt = { 0 };
	bool measuring = false;

	if (r->rate > 0) {
		burst = r->c->burst ? r->c->burst : (unsigned)(r->rate / 8 * 1e-3 / bytes + 0.5);
		if (!burst)
			burst = 1;
		gap = (uint64_t)((double)bytes * burst * 8 / r->rate * 1e9);
	} else {
		burst = r->c->burst ? r->c->burst : 4;
	}
	end = start + (uint64_t)((WARMUP_S + r->c->seconds) * 1e9);
	for (;;) {
		uint64_t now = bench_now_ns();

		if (!measuring && now >= start + (uint64_t)(WARMUP_S * 1e9)) {
			meter_start(&mt, r, dev_ns ? dev_ns(ctx) : 0, sent);
			measuring = true;
		}
		if (now >= end)
			break;
		if (gap) {
			if (now < next)
				sleep_until(next);
			next += gap;
			/* Behind by more than a few bursts: do not burst to catch up. */
			if (next + 4 * gap < now)
				next = now;
		}
		for (unsigned left = burst; left;) {
			int n = one(ctx, left);

			if (n == -EAGAIN) {
				nap_us(20);
				continue;
			}
			if (n < 0) {
				snprintf(r->err, sizeof(r->err), "send: %s", strerror(-n));
				return;
			}
			left -= (unsigned)n;
			sent += (uint64_t)n * bytes;
		}
	}
	if (measuring)
		meter_stop(&mt, r, dev_ns ? dev_ns(ctx) : 0, sent);
}

/* -- our devices -- */

struct devctx {
	struct gso_dev *dev;
	struct gso_buf buf[NBUF];
	struct gso_tmpl t;
	struct gso_tmpl tmpls[64]; /* one per super-segment of a burst: each has its IP ID */
	struct gso_tso_flow flow;
	unsigned i;
	uint16_t id;
};

static int dev_one(void *p, unsigned n)
{
	struct devctx *d = p;
	struct gso_tx tx[64];
	int r;

	for (unsigned k = 0; k < n; k++) {
		tx[k] = (struct gso_tx){ .tmpl = &d->tmpls[k], .buf = &d->buf[(d->i + k) % NBUF], .len = SUPER,
					 .mss = MSS };
		d->tmpls[k] = d->t;
		gso_tmpl__set_ip_id(&d->tmpls[k], (uint16_t)(d->id + k * SEGS));
	}
	r = gso_tso__submit(d->dev, &d->flow, tx, n);
	gso_dev__reap(d->dev, 0);
	if (r == -ENOBUFS)
		r = -EAGAIN;
	if (r < 0)
		return r;
	d->i += (unsigned)r;
	d->id = (uint16_t)(d->id + (unsigned)r * SEGS);
	return r;
}

static uint64_t e1000_cpu(void *p)
{
	struct devctx *d = p;
	struct gso_e1000_stats st = { .sz = sizeof(st) };

	return gso_e1000__stats(d->dev, &st) ? 0 : st.dev_cpu_ns;
}

static int open_dev(struct run *r, struct devctx *d)
{
	int err;

	switch (r->m) {
	case M_SW: {
		GSO_OPTS(gso_xsk_opts, o, .mode = GSO_XSK_MODE_COPY);
		err = gso_xsk__create(&d->dev, bed.ifindex[0], &o);
		break;
	}
	case M_E1000: {
		GSO_OPTS(gso_e1000_opts, o, .xsk_mode = GSO_XSK_MODE_COPY, .cpu = (uint32_t)r->c->cpu_rx + 1,
			 .spin_us = r->c->spin_us);
		err = gso_e1000__create(&d->dev, bed.ifindex[0], &o);
		break;
	}
	case M_VNET_MSG: {
		GSO_OPTS(gso_vnet_opts, o, .flags = GSO_VNET_F_NO_RING);
		err = gso_vnet__create(&d->dev, bed.ifindex[0], &o);
		break;
	}
	default:
		err = gso_vnet__create(&d->dev, bed.ifindex[0], NULL);
		break;
	}
	return err;
}

static void run_dev(struct run *r)
{
	struct devctx *d = calloc(1, sizeof(*d));
	GSO_OPTS(gso_tmpl_fields, f, .l3 = GSO_L3_IPV4, .l4 = GSO_L4_UDP, .sport = 4000, .dport = UDP_PORT,
		 .df = true);
	int err;

	if (!d) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		return;
	}
	d->flow.sz = sizeof(d->flow);
	err = open_dev(r, d);
	if (err) {
		snprintf(r->err, sizeof(r->err), "device: %s", strerror(-err));
		free(d);
		return;
	}
	memcpy(f.eth_src, bed.mac[0], 6);
	memcpy(f.eth_dst, bed.mac[1], 6);
	inet_pton(AF_INET, bed.ip[0], f.saddr);
	inet_pton(AF_INET, bed.ip[1], f.daddr);
	err = gso_tmpl__build(&d->t, &f);
	for (int i = 0; !err && i < NBUF; i++) {
		err = gso_dev__buf_alloc(d->dev, SUPER, &d->buf[i]);
		if (!err)
			memset(d->buf[i].data, 0x40 + i, SUPER);
	}
	if (err)
		snprintf(r->err, sizeof(r->err), "set-up: %s", strerror(-err));
	else
		loop(r, dev_one, d, SUPER, r->m == M_E1000 ? e1000_cpu : NULL);
	for (int i = 0; i < NBUF; i++)
		gso_dev__buf_free(d->dev, &d->buf[i]);
	gso_dev__destroy(d->dev);
	free(d);
}

/* -- kernel sockets -- */

struct sockctx {
	int fd;
	const uint8_t *buf;
	uint32_t len;
};

static int sock_one(void *p, unsigned n)
{
	struct sockctx *s = p;
	ssize_t w = send(s->fd, s->buf, s->len, 0);

	(void)n;
	if (w < 0)
		return errno == ENOBUFS || errno == EAGAIN || errno == EINTR ? -EAGAIN : -errno;
	return 1;
}

static void run_sock(struct run *r)
{
	static uint8_t buf[TCP_WRITE];
	struct sockaddr_in a = { .sin_family = AF_INET };
	bool tcp = rx_kind(r->m);
	struct sockctx s = { .buf = buf, .len = tcp ? TCP_WRITE : SUPER };
	int seg = MSS;

	memset(buf, 0x5a, sizeof(buf));
	inet_pton(AF_INET, bed.ip[1], &a.sin_addr);
	a.sin_port = htons(tcp ? TCP_PORT : UDP_PORT);
	s.fd = socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
	if (s.fd < 0 || connect(s.fd, (struct sockaddr *)&a, sizeof(a)) ||
	    (!tcp && setsockopt(s.fd, SOL_UDP, UDP_SEGMENT, &seg, sizeof(seg)))) {
		snprintf(r->err, sizeof(r->err), "socket: %s", strerror(errno));
	} else {
		/* A send() may stop short with a full buffer: count only whole writes, as the others. */
		loop(r, sock_one, &s, s.len, NULL);
	}
	if (s.fd >= 0)
		close(s.fd);
}

static void *sender(void *arg)
{
	struct run *r = arg;

	pin(r->c->cpu_send);
	if (nsbed_enter(&bed, 0)) {
		snprintf(r->err, sizeof(r->err), "setns failed");
		return NULL;
	}
	if (r->m == M_TCP_ON || r->m == M_TCP_OFF || r->m == M_UDP_GSO)
		run_sock(r);
	else
		run_dev(r);
	return NULL;
}

static void run_one(struct run *r)
{
	pthread_t th;

	memset(&r->r, 0, sizeof(r->r));
	r->err[0] = 0;
	if (nsbed_sh(&bed, 0, "ethtool -K %s gso on sg on tx on %s >/dev/null 2>&1", bed.ifname[0],
		     mode_features[r->m])) {
		snprintf(r->err, sizeof(r->err), "ethtool -K %s failed", mode_features[r->m]);
		return;
	}
	if (pthread_create(&th, NULL, sender, r)) {
		snprintf(r->err, sizeof(r->err), "pthread_create failed");
		return;
	}
	pthread_join(th, NULL);
	/* Let what is in flight land before the next mode is measured. */
	nap_us(100000);
}

/* ---- report ---- */

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}

static void usage(const char *p)
{
	fprintf(stderr,
		"usage: %s [--seconds S] [--rounds N] [--rate R] [--modes LIST] [--cpus SEND,RX] [--quick]\n"
		"  --seconds S   measured time per mode, rate and round (default 1)\n"
		"  --rounds N    rounds, modes interleaved in each (default 3)\n"
		"  --rate R      paced payload rate, e.g. 940M (default 940M)\n"
		"  --modes LIST  comma-separated subset of: sw,e1000,vnet-on,vnet-off,vnet-msg,tcp-on,tcp-off,udp-gso\n"
		"  --cpus S,R    sender CPU, receiver/device CPU (default 0,1)\n"
		"  --burst N     writes per wake-up / per device submit (default: 1 ms of data paced, 4 unpaced)\n"
		"  --spin-us N   e1000 device thread: poll N us before sleeping (default: library's)\n"
		"  --quick       0.5 s, 1 round\n",
		p);
}

static int parse_modes(const char *s, unsigned *out)
{
	char buf[256], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", s);
	*out = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int m;

		for (m = 0; m < M_COUNT && strcmp(tok, mode_key[m]); m++)
			;
		if (m == M_COUNT)
			return -EINVAL;
		*out |= 1u << m;
	}
	return *out ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seconds", required_argument, NULL, 's' }, { "rounds", required_argument, NULL, 'n' },
		{ "rate", required_argument, NULL, 'r' },    { "modes", required_argument, NULL, 'm' },
		{ "cpus", required_argument, NULL, 'c' },    { "quick", no_argument, NULL, 'q' },
		{ "spin-us", required_argument, NULL, 'p' }, { "burst", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },          { 0 },
	};
	struct cfg c = { .seconds = 1, .rate = 940e6, .rounds = 3, .modes = (1u << M_COUNT) - 1,
			 .cpu_send = 0, .cpu_rx = 1 };
	static double v[2][M_COUNT][5][MAX_ROUNDS];
	static char errs[2][M_COUNT][160];
	pthread_t rx[2];
	char rps[2][256];
	int o, err;

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		uint64_t u;

		switch (o) {
		case 's':
			if (bench_parse_double(optarg, &c.seconds) || c.seconds <= 0)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --seconds %s", optarg);
			break;
		case 'n':
			if (bench_parse_u64(optarg, &u) || !u || u > MAX_ROUNDS)
				bench_die(BENCH_EXIT_USAGE, 0, "--rounds: 1..%d", MAX_ROUNDS);
			c.rounds = (unsigned)u;
			break;
		case 'r':
			if (bench_parse_rate(optarg, &c.rate) || c.rate <= 0)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --rate %s", optarg);
			break;
		case 'm':
			if (parse_modes(optarg, &c.modes))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --modes %s", optarg);
			break;
		case 'c':
			if (sscanf(optarg, "%d,%d", &c.cpu_send, &c.cpu_rx) != 2 || c.cpu_send < 0 || c.cpu_rx < 0)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --cpus %s", optarg);
			break;
		case 'p':
			if (bench_parse_u64(optarg, &u) || u > 1000000)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --spin-us %s", optarg);
			c.spin_us = (uint32_t)u;
			break;
		case 'b':
			if (bench_parse_u64(optarg, &u) || !u || u > 64)
				bench_die(BENCH_EXIT_USAGE, 0, "--burst: 1..64");
			c.burst = (unsigned)u;
			break;
		case 'q':
			c.seconds = 0.5;
			c.rounds = 1;
			break;
		default:
			usage(argv[0]);
			return o == 'h' ? BENCH_EXIT_OK : BENCH_EXIT_USAGE;
		}
	}
	if (geteuid()) {
		fprintf(stderr, "bench_tso: needs root (namespaces, AF_XDP, AF_PACKET); skipped\n");
		return BENCH_EXIT_SKIP;
	}
	/*
	 * Receive processing of each side on a chosen core (RPS).  The set-up
	 * commands run under `ip netns exec`, which gives them the side's own /sys.
	 */
	for (int i = 0; i < 2; i++)
		snprintf(rps[i], sizeof(rps[i]),
			 "echo %x > /sys/class/net/gb%c/queues/rx-0/rps_cpus 2>/dev/null; "
			 "ethtool -K gb%c gro off >/dev/null 2>&1; true",
			 1u << (i ? c.cpu_rx : c.cpu_send), 'a' + i, 'a' + i);
	err = benchbed_create(&bed, (const char *const[2]){ rps[0], rps[1] });
	if (err)
		bench_die(BENCH_EXIT_USAGE, -err, "test-bed");
	err = start_receivers(rx, &c.cpu_rx);
	if (err)
		bench_die(BENCH_EXIT_USAGE, -err, "receivers");

	printf("bench_tso: veth %s <-> %s, stock stack receiving (UDP/TCP sockets, MSG_TRUNC), "
	       "sender on CPU %d, receive softirq (RPS) + receivers + e1000 device on CPU %d\n",
	       bed.ifname[0], bed.ifname[1], c.cpu_send, c.cpu_rx);
	printf("UDP super-segments %u x %u bytes; TCP writes %u bytes; %.2f s per run after %.1f s warm-up, "
	       "%u round(s), medians\n\n", SEGS, MSS, TCP_WRITE, c.seconds, WARMUP_S, c.rounds);
	fflush(stdout);
	for (unsigned round = 0; round < c.rounds; round++)
		for (int pace = 0; pace < 2; pace++)
			for (int m = 0; m < M_COUNT; m++) {
				struct run r = { .m = (enum mode)m, .c = &c, .rate = pace ? 0 : c.rate };

				if (!(c.modes & (1u << m)))
					continue;
				run_one(&r);
				if (r.err[0])
					snprintf(errs[pace][m], sizeof(errs[pace][m]), "%s", r.err);
				v[pace][m][0][round] = r.r.gbps;
				v[pace][m][1][round] = r.r.snd_gb;
				v[pace][m][2][round] = r.r.core0_gb;
				v[pace][m][3][round] = r.r.dev_gb;
				v[pace][m][4][round] = r.r.loss;
			}
	atomic_store(&rx_stop, true);
	pthread_join(rx[0], NULL);
	pthread_join(rx[1], NULL);

	for (int pace = 0; pace < 2; pace++) {
		double sw = 0;

		printf("%s%-8s %-20s %8s %10s %7s %11s %9s %7s\n", pace ? "\n" : "", "target", "mode", "Gbit/s",
		       "snd s/GB", "vs sw", "core0 s/GB", "dev s/GB", "loss");
		for (int m = 0; m < M_COUNT; m++) {
			char vs[16] = "-", dev[16] = "-", loss[16] = "-";
			double q[5];

			if (!(c.modes & (1u << m)))
				continue;
			for (int k = 0; k < 5; k++)
				q[k] = median(v[pace][m][k], c.rounds);
			if (m == M_SW)
				sw = q[1];
			if (sw > 0)
				snprintf(vs, sizeof(vs), "%.2f", q[1] / sw);
			if (m == M_E1000)
				snprintf(dev, sizeof(dev), "%.3f", q[3]);
			if (!rx_kind((enum mode)m))
				snprintf(loss, sizeof(loss), "%.1f%%", q[4] * 100);
			printf("%-8s %-20s %8.3f %10.3f %7s %11.3f %9s %7s%s%s\n", pace ? "max" : "paced",
			       mode_name[m], q[0], q[1], vs, q[2], dev, loss, errs[pace][m][0] ? "  " : "",
			       errs[pace][m]);
		}
	}
	printf("\npaced target %.0f Mbit/s of payload.  vs sw = snd s/GB relative to sw gso at the same target;"
	       " the goal is <= 0.50 for the offload modes.\n", c.rate / 1e6);
	nsbed_destroy(&bed);
	return BENCH_EXIT_OK;
}
