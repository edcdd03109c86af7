/*
 * Real-time pacing on this machine, side by side in one run:
 *
 *  - libgso: one flow paced by gso_sched (EDT pacer + burst sizing) and
 *    woken by gso_evloop, sending UDP bursts through the AF_XDP backend
 *    (software GSO, copy mode on the veth) or, with --tx udp or when
 *    AF_XDP cannot open, through a UDP socket (one sendmsg per burst,
 *    UDP_SEGMENT when it has more than one datagram, SO_TXTIME carrying
 *    the EDT stamp);
 *  - the kernel: one TCP connection (CUBIC) capped with SO_MAX_PACING_RATE;
 *    without sch_fq, TCP paces itself with an hrtimer per burst.
 *
 * Both run over the same veth between two namespaces this program creates
 * (names unique to the process, gone when it ends, however it ends), one
 * after the other for each target rate.  Departure times come from an
 * AF_PACKET TPACKET_V3 capture on the peer.  Per target it reports rate
 * error, departure-time error against the ideal schedule, wake-ups, CPU.
 * For libgso it also reports the pacer's own error: each burst's first
 * segment carries its sequence number, so its departure is set against the
 * EDT stamp the pacer gave it, and split into the sender's lateness
 * (wake-up, loop, preemption), waiting for earlier send calls and the
 * device (send call to departure).  A run short of the rate while the
 * sender sat in the send calls nearly all the time is "device-limited at
 * X": the copy-mode veth, not the pacer, set the rate, and it is not
 * counted as a pacing error.
 *
 * --timers measures what the event loop is built on instead: lateness and
 * CPU cost of absolute-deadline sleeps (io_uring, epoll + timerfd,
 * clock_nanosleep) and of spinning, for 10 us, 100 us and 1 ms.
 *
 * What decides the results on a small shared machine: the sender's tails
 * are preemption by other load (a spinning thread gets its CPU share, a
 * sleeping one is woken late), which the printed load average and
 * involuntary context switches show; --burst-us trades departure error for
 * fewer, larger departures (more robust to a starved CPU, fewer wake-ups);
 * --rt takes normal threads out of the picture but meets RT throttling
 * (a thread spinning for more than 0.95 s of a second is stopped for the
 * rest, longer than the default lookahead).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <linux/net_tstamp.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <gso/evloop.h>
#include <gso/sched.h>
#include <gso/dev.h>
#include <gso/xsk.h>

#include "benchbed.h"
#include "cpu.h"
#include "pktcap.h"
#include "util.h"

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef SO_TXTIME
#define SO_TXTIME 61
#define SCM_TXTIME SO_TXTIME
#endif

enum { TX_AUTO, TX_UDP, TX_XSK };

#define UDP_PORT 9400
#define TCP_PORT 9401
#define UDP_HDR (14u + 20u + 8u) /* Ethernet + IPv4 + UDP */
#define UDP_MSS 1472u            /* 1514-byte frames at MTU 1500 */
#define UDP_MAX_SEGS 64u         /* UDP_MAX_SEGMENTS on older kernels */
#define SNAPLEN 96u
#define CAP_RING_MB 256u
#define MAX_AHEAD 4096u /* bursts stamped ahead of time, at most */

static atomic_bool g_stop;
static int g_stop_efd = -1;

static void on_signal(int sig)
{
	uint64_t one = 1;

	(void)sig;
	atomic_store(&g_stop, true);
	if (g_stop_efd >= 0 && write(g_stop_efd, &one, sizeof(one)) < 0)
		return;
}

/* Time spent in softirq by all CPUs (/proc/stat), in ns; 0 if unreadable. */
static uint64_t machine_softirq_ns(void)
{
	unsigned long long v[8] = { 0 };
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
		   &v[5], &v[6]);
	fclose(f);
	return n == 7 && hz > 0 ? v[6] * (1000000000ull / (unsigned long long)hz) : 0;
}

/* SCHED_FIFO for the calling thread when asked for; 0 or -errno. */
static int set_rt(int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	return prio ? -pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) : 0;
}

/* ---- settings ----------------------------------------------------------------- */

struct cfg {
	double seconds;
	double targets[16]; /* bit/s of Ethernet frames */
	int ntargets;
	uint32_t spin_ns, early_ns;
	unsigned shift;     /* burst = rate >> shift bytes */
	uint64_t lookahead_ns; /* bursts are stamped this far ahead */
	double warmup;      /* seconds left out of the analysis */
	bool ours, kernel, timers;
	unsigned timer_samples;
	unsigned backend;   /* evloop backend */
	int tx;             /* TX_AUTO, TX_UDP, TX_XSK */
	int rt;             /* SCHED_FIFO priority of the sending threads, 0 = normal */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench_pacing [options]   (needs root: namespaces, veth, AF_PACKET)\n"
		"  --seconds S        seconds per target and sender (default 10)\n"
		"  --targets LIST     comma-separated rates, suffix k/M/G bit/s of Ethernet frames\n"
		"                     (default 100M,1G,5G,10G)\n"
		"  --burst-us US      burst duration at the target rate: the pacing shift is\n"
		"                     round(log2(1e6 / US)) (default 15.3 us, shift 16)\n"
		"  --spin-us US       event loop spin threshold (default %u us)\n"
		"  --early-us US      event loop: end sleeps this early and spin the rest (default 0)\n"
		"  --lookahead-ms MS  queue (and stamp) this much data ahead: how long a stall the\n"
		"                     sender can make up for by sending what is due at once (default 10)\n"
		"  --epoll            event loop on epoll + timerfd instead of io_uring\n"
		"  --tx auto|xsk|udp  libgso sends through its AF_XDP backend (copy mode on the\n"
		"                     veth: one skb per frame) or through a UDP socket (UDP_SEGMENT:\n"
		"                     one skb per burst); auto (default): AF_XDP if it opens\n"
		"  --rt PRIO          run both sending threads SCHED_FIFO at PRIO (1..99): shows the\n"
		"                     senders without preemption by other load (RT throttling leaves\n"
		"                     5%% of each CPU to others)\n"
		"  --only-ours, --only-kernel   run one sender only\n"
		"  --timers           measure sleep/spin lateness and CPU cost instead (no root)\n"
		"  --timer-samples N  samples per method and sleep length (default 1000)\n"
		"  --quick            a smoke run: 1 s per target, targets 100M,1G (make bench\n"
		"                     BENCH_ARGS=--quick); numbers are rough\n"
		"  --help\n",
		GSO_EVLOOP_DEF_SPIN_NS / 1000u);
}

static void parse_args(int argc, char **argv, struct cfg *c)
{
	enum { O_SEC = 1, O_TGT, O_BURST, O_SPIN, O_EARLY, O_EPOLL, O_OURS, O_KERN, O_TIMERS, O_TSAMP,
	       O_LOOK, O_TX, O_RT, O_QUICK };
	static const struct option lo[] = {
		{ "seconds", 1, 0, O_SEC }, { "targets", 1, 0, O_TGT }, { "burst-us", 1, 0, O_BURST },
		{ "spin-us", 1, 0, O_SPIN }, { "early-us", 1, 0, O_EARLY }, { "epoll", 0, 0, O_EPOLL },
		{ "only-ours", 0, 0, O_OURS }, { "only-kernel", 0, 0, O_KERN },
		{ "timers", 0, 0, O_TIMERS }, { "timer-samples", 1, 0, O_TSAMP },
		{ "lookahead-ms", 1, 0, O_LOOK }, { "tx", 1, 0, O_TX }, { "rt", 1, 0, O_RT },
		{ "quick", 0, 0, O_QUICK },
		{ "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	const char *tg = "100M,1G,5G,10G";
	int o;

	*c = (struct cfg){ .seconds = 10, .spin_ns = 0, .shift = 16, .ours = true, .kernel = true,
			   .timer_samples = 1000, .lookahead_ns = 10000000 };
	while ((o = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		double v;

		switch (o) {
		case O_SEC:
			c->seconds = atof(optarg);
			if (c->seconds < 0.2)
				bench_die(BENCH_EXIT_USAGE, 0, "--seconds: at least 0.2");
			break;
		case O_TGT:
			tg = optarg;
			break;
		case O_QUICK:
			c->seconds = 1;
			tg = "100M,1G";
			c->timer_samples = 200;
			break;
		case O_BURST:
			v = atof(optarg);
			if (v <= 0 || v > 1e6)
				bench_die(BENCH_EXIT_USAGE, 0, "--burst-us: 0 < US <= 1e6");
			c->shift = (unsigned)lround(log2(1e6 / v));
			if (c->shift < 1)
				c->shift = 1;
			break;
		case O_SPIN:
			c->spin_ns = (uint32_t)(atof(optarg) * 1000);
			if (!c->spin_ns)
				c->spin_ns = 1; /* 0 would mean the default */
			break;
		case O_EARLY:
			c->early_ns = (uint32_t)(atof(optarg) * 1000);
			break;
		case O_EPOLL:
			c->backend = GSO_EVLOOP_EPOLL;
			break;
		case O_LOOK:
			c->lookahead_ns = (uint64_t)(atof(optarg) * 1e6);
			break;
		case O_RT:
			c->rt = atoi(optarg);
			if (c->rt < 1 || c->rt > 99)
				bench_die(BENCH_EXIT_USAGE, 0, "--rt: 1..99");
			break;
		case O_TX:
			c->tx = !strcmp(optarg, "auto") ? TX_AUTO : !strcmp(optarg, "udp") ? TX_UDP
			      : !strcmp(optarg, "xsk") ? TX_XSK : -1;
			if (c->tx < 0)
				bench_die(BENCH_EXIT_USAGE, 0, "--tx: auto, xsk or udp");
			break;
		case O_OURS:
			c->kernel = false;
			break;
		case O_KERN:
			c->ours = false;
			break;
		case O_TIMERS:
			c->timers = true;
			break;
		case O_TSAMP:
			c->timer_samples = (unsigned)atoi(optarg);
			if (c->timer_samples < 50)
				c->timer_samples = 50;
			break;
		case 'h':
			usage(stdout);
			exit(BENCH_EXIT_OK);
		default:
			usage(stderr);
			exit(BENCH_EXIT_USAGE);
		}
	}
	char list[256], *rest = list, *tok;

	if (snprintf(list, sizeof(list), "%s", tg) >= (int)sizeof(list))
		bench_die(BENCH_EXIT_USAGE, 0, "--targets: list too long");
	while ((tok = strsep(&rest, ",")) && c->ntargets < 16) {
		if (bench_parse_rate(tok, &c->targets[c->ntargets]) || c->targets[c->ntargets] <= 0)
			bench_die(BENCH_EXIT_USAGE, 0, "--targets: bad rate \"%s\"", tok);
		c->ntargets++;
	}
	c->warmup = c->seconds / 10 < 0.5 ? c->seconds / 10 : 0.5;
}

/* ---- percentiles ----------------------------------------------------------------- */

static void swapd(double *a, double *b)
{
	double t = *a;

	*a = *b;
	*b = t;
}

/* The k-th smallest of v[0..n) (v is reordered). */
static double select_k(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		double pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				swapd(&v[i], &v[j]);
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}

static double pct(double *v, size_t n, double p)
{
	size_t k = (size_t)ceil(p * (double)n);

	return select_k(v, n, k ? k - 1 : 0);
}

/* ---- capture and analysis ------------------------------------------------------------- */

struct rec {
	uint64_t ts;      /* CLOCK_REALTIME ns */
	uint32_t payload; /* L4 payload bytes of the captured (maybe GSO) packet */
	uint16_t hdr;     /* L2+L3+L4 header bytes */
	uint32_t tag;     /* libgso: its burst's sequence + 1 on a burst's first segment, else 0 */
};

struct collector {
	struct rec *r;
	size_t n, cap;
	uint64_t overflow;
	uint8_t proto;    /* IPPROTO_UDP / IPPROTO_TCP */
	uint16_t port;    /* destination port */
};

static void collect(void *arg, const struct pktcap_pkt *p)
{
	struct collector *c = arg;
	const uint8_t *d = p->data;
	uint32_t ihl, l4len;
	uint16_t dport;

	if (p->caplen < 14 + 20 + 8 || d[12] != 0x08 || d[13] != 0x00 || (d[14] >> 4) != 4)
		return;
	ihl = (d[14] & 15u) * 4u;
	if (d[23] != c->proto || p->caplen < 14 + ihl + 20)
		return;
	dport = (uint16_t)(d[14 + ihl + 2] << 8 | d[14 + ihl + 3]);
	if (dport != c->port)
		return;
	l4len = c->proto == IPPROTO_UDP ? 8u : (d[14 + ihl + 12] >> 4) * 4u;
	if (p->len <= 14 + ihl + l4len)
		return; /* no payload: handshake, pure ACK */
	if (c->n == c->cap) {
		c->overflow++;
		return;
	}
	c->r[c->n] = (struct rec){ .ts = p->ts_ns, .payload = p->len - 14 - ihl - l4len,
				   .hdr = (uint16_t)(14 + ihl + l4len) };
	if (c->proto == IPPROTO_UDP && p->caplen >= 14 + ihl + l4len + sizeof(uint32_t))
		memcpy(&c->r[c->n].tag, d + 14 + ihl + l4len, sizeof(uint32_t));
	c->n++;
}

struct capthr {
	const struct nsbed *bed;
	struct collector col;
	atomic_bool stop, ready;
	int err;
	int udp_sink;
	uint64_t kpackets, kdrops;
	pthread_t thr;
};

static void *cap_main(void *arg)
{
	struct capthr *t = arg;
	struct pktcap *pc = NULL;
	int err = nsbed_enter(t->bed, 1);

	/* The instrument must not be starved by other load: it mostly sleeps in poll(). */
	set_rt(1);
	if (!err)
		err = pktcap_open(&pc, t->bed->ifindex[1], SNAPLEN, CAP_RING_MB);
	if (!err && t->col.proto == IPPROTO_UDP) {
		/* A bound socket, so that no ICMP goes back; UDP_GRO keeps bursts whole; never read. */
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(UDP_PORT) };
		int one = 1, small = 4096;

		t->udp_sink = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (t->udp_sink < 0 || bind(t->udp_sink, (struct sockaddr *)&a, sizeof(a)))
			err = -errno;
		else {
			setsockopt(t->udp_sink, SOL_UDP, UDP_GRO, &one, sizeof(one));
			setsockopt(t->udp_sink, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
		}
	}
	t->err = err;
	atomic_store(&t->ready, true);
	if (err)
		return NULL;
	while (!atomic_load(&t->stop))
		pktcap_poll(pc, 20, collect, &t->col);
	pktcap_poll(pc, 0, collect, &t->col);
	pktcap_stats(pc, &t->kpackets, &t->kdrops);
	pktcap_close(pc);
	if (t->udp_sink >= 0)
		close(t->udp_sink);
	return NULL;
}

static void cap_start(struct capthr *t, const struct nsbed *bed, uint8_t proto, uint16_t port,
		      size_t cap)
{
	memset(t, 0, sizeof(*t));
	t->bed = bed;
	t->udp_sink = -1;
	t->col.proto = proto;
	t->col.port = port;
	t->col.cap = cap;
	t->col.r = malloc(cap * sizeof(*t->col.r));
	if (!t->col.r)
		bench_die(BENCH_EXIT_FAIL, ENOMEM, "capture buffer");
	if (pthread_create(&t->thr, NULL, cap_main, t))
		bench_die(BENCH_EXIT_FAIL, errno, "pthread_create");
	while (!atomic_load(&t->ready))
		usleep(1000);
	if (t->err)
		bench_die(BENCH_EXIT_FAIL, t->err, "capture");
}

static void cap_stop(struct capthr *t)
{
	usleep(30000); /* the last packets, and the 2 ms block timeout */
	atomic_store(&t->stop, true);
	pthread_join(t->thr, NULL);
}

struct anal {
	bool ok;
	size_t skbs, segs;
	double dur;         /* s, first to last packet analysed */
	double wire_bytes;  /* Ethernet frame bytes of the segments analysed */
	double rate_bps;    /* achieved, frame bits per second */
	double rate_err;    /* % vs target */
	double e50, e90, e99; /* |departure error| vs the target-rate schedule, us */
	double j50, j90, j99; /* same vs the achieved-rate schedule (drift removed), us */
};

/*
 * Every segment of a captured packet departs when the packet was captured
 * (a GSO packet crosses the veth whole).  Segment j's ideal departure is
 * t0 + B_j / rate, B_j the frame bytes before it; the schedule is placed
 * where it fits best (median error 0), and the p50 / p99 of |error| are
 * reported.
 */
static void errors(const struct rec *r, size_t n, uint32_t mss, double rate_Bps, double *e,
		   size_t nseg, double *p50, double *p90, double *p99)
{
	double B = 0, med;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		double t = (double)(r[i].ts - r[0].ts);
		uint32_t left = r[i].payload;

		while (left && k < nseg) {
			uint32_t p = left < mss ? left : mss;

			e[k++] = t - B / rate_Bps * 1e9;
			B += p + r[i].hdr;
			left -= p;
		}
	}
	med = pct(e, k, 0.5);
	for (size_t i = 0; i < k; i++)
		e[i] = fabs(e[i] - med);
	*p50 = pct(e, k, 0.5) / 1e3;
	*p90 = pct(e, k, 0.9) / 1e3;
	*p99 = pct(e, k, 0.99) / 1e3;
}

static void analyse(const struct collector *c, uint32_t mss, double target_bps, double warmup,
		    struct anal *a)
{
	size_t i0 = 0, n, nseg = 0;
	double bytes = 0, last_bytes = 0, *e;

	memset(a, 0, sizeof(*a));
	if (c->n < 10)
		return;
	while (i0 < c->n && c->r[i0].ts < c->r[0].ts + (uint64_t)(warmup * 1e9))
		i0++;
	n = c->n - i0;
	if (n < 10)
		return;
	for (size_t i = i0; i < c->n; i++) {
		uint32_t segs = (c->r[i].payload + mss - 1) / mss;

		nseg += segs;
		last_bytes = c->r[i].payload + (double)segs * c->r[i].hdr;
		bytes += last_bytes;
	}
	a->skbs = n;
	a->segs = nseg;
	a->wire_bytes = bytes;
	a->dur = (double)(c->r[c->n - 1].ts - c->r[i0].ts) / 1e9;
	if (a->dur <= 0)
		return;
	/* Bytes sent before the last packet, over the time to it. */
	a->rate_bps = (bytes - last_bytes) * 8 / a->dur;
	a->rate_err = (a->rate_bps - target_bps) / target_bps * 100;
	e = malloc(nseg * sizeof(*e));
	if (!e)
		bench_die(BENCH_EXIT_FAIL, ENOMEM, "analysis buffer");
	errors(c->r + i0, n, mss, target_bps / 8, e, nseg, &a->e50, &a->e90, &a->e99);
	errors(c->r + i0, n, mss, a->rate_bps / 8, e, nseg, &a->j50, &a->j90, &a->j99);
	free(e);
	a->ok = true;
}

/* ---- our sender --------------------------------------------------------------------------- */

/* One burst of ours, by sequence number; CLOCK_MONOTONIC ns. */
struct brec {
	uint64_t stamp; /* the EDT stamp the pacer gave it (0: not sent) */
	uint64_t call;  /* handed to the device: the send call began */
	uint64_t ret;   /* the send call returned */
	uint64_t reap;  /* AF_XDP: time in gso_dev__reap within it (the rest is submit and its kick) */
};

struct ours {
	const struct nsbed *bed;
	const struct cfg *cfg;
	double target_bps;
	/* results */
	int err;
	uint32_t burst_segs;
	uint64_t bursts, send_err, tx_retries;
	char txname[96];
	bool xsk;
	double wall, cpu;
	long nvcsw, nivcsw;
	uint64_t late_max_ns;
	struct gso_evloop_stats st;
	struct brec *br;     /* by burst sequence, br_cap of them */
	size_t br_cap;
	uint64_t busy_ns;    /* time inside the send calls */
	int64_t real_off_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC at the start (capture stamps are REALTIME) */
};

/* CLOCK_REALTIME - CLOCK_MONOTONIC, read between two monotonic readings. */
static int64_t realtime_offset_ns(void)
{
	struct timespec ts;
	uint64_t a = bench_now_ns(), b;

	clock_gettime(CLOCK_REALTIME, &ts);
	b = bench_now_ns();
	return (int64_t)((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) - (int64_t)(a + (b - a) / 2);
}

static uint8_t g_payload[65536];

static int send_burst(int fd, uint32_t segs, uint64_t departure)
{
	char cbuf[CMSG_SPACE(sizeof(uint16_t)) + CMSG_SPACE(sizeof(uint64_t))];
	struct iovec iov = { .iov_base = g_payload, .iov_len = (size_t)segs * UDP_MSS };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf };
	struct cmsghdr *cm;
	uint16_t gso = UDP_MSS;

	memset(cbuf, 0, sizeof(cbuf));
	m.msg_controllen = CMSG_SPACE(sizeof(uint64_t)) + (segs > 1 ? CMSG_SPACE(sizeof(gso)) : 0);
	cm = CMSG_FIRSTHDR(&m);
	/* The EDT stamp becomes the skb's delivery time, as TCP's does. */
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_TXTIME;
	cm->cmsg_len = CMSG_LEN(sizeof(uint64_t));
	memcpy(CMSG_DATA(cm), &departure, sizeof(departure));
	if (segs > 1) {
		cm = CMSG_NXTHDR(&m, cm);
		cm->cmsg_level = SOL_UDP;
		cm->cmsg_type = UDP_SEGMENT;
		cm->cmsg_len = CMSG_LEN(sizeof(gso));
		memcpy(CMSG_DATA(cm), &gso, sizeof(gso));
	}
	return sendmsg(fd, &m, 0) < 0 ? -errno : 0;
}

/* Where libgso's bursts go: a UDP socket, or the AF_XDP backend. */
struct tx {
	int fd;
	struct gso_dev *dev;
	struct gso_tmpl tmpl;
	uint64_t retries;
	uint64_t reap_ns;  /* time in gso_dev__reap during the last tx_send */
	int xsk_err;  /* why AF_XDP is not used (auto) */
	char name[48];
};

static int tx_open(struct tx *t, const struct nsbed *bed, int mode)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(UDP_PORT) };
	struct sock_txtime txt = { .clockid = CLOCK_MONOTONIC };
	int sndbuf = 4 << 20, err;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	if (mode != TX_UDP) {
		GSO_OPTS(gso_xsk_opts, xo, .mode = GSO_XSK_MODE_COPY);
		GSO_OPTS(gso_tmpl_fields, f, .l3 = GSO_L3_IPV4, .l4 = GSO_L4_UDP, .df = true,
			 .sport = UDP_PORT, .dport = UDP_PORT);

		memcpy(f.eth_dst, bed->mac[1], 6);
		memcpy(f.eth_src, bed->mac[0], 6);
		inet_pton(AF_INET, bed->ip[0], f.saddr);
		inet_pton(AF_INET, bed->ip[1], f.daddr);
		err = gso_tmpl__build(&t->tmpl, &f);
		if (!err)
			err = gso_xsk__create(&t->dev, bed->ifindex[0], &xo);
		if (!err) {
			snprintf(t->name, sizeof(t->name), "%s", gso_dev__name(t->dev));
			return 0;
		}
		t->xsk_err = err;
		if (mode == TX_XSK)
			return err;
	}
	inet_pton(AF_INET, bed->ip[1], &dst.sin_addr);
	t->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (t->fd < 0 || connect(t->fd, (struct sockaddr *)&dst, sizeof(dst)) ||
	    setsockopt(t->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) ||
	    setsockopt(t->fd, SOL_SOCKET, SO_TXTIME, &txt, sizeof(txt)))
		return -errno;
	snprintf(t->name, sizeof(t->name), "udp socket");
	return 0;
}

static int tx_send(struct tx *t, uint32_t segs, uint64_t departure)
{
	struct gso_tx req = { .tmpl = &t->tmpl, .data = g_payload, .len = segs * UDP_MSS,
			      .mss = UDP_MSS };
	int n;

	if (!t->dev)
		return send_burst(t->fd, segs, departure);
	/* Copy mode transmits inside submit; reaping makes room for the next. */
	t->reap_ns = 0;
	for (int i = 0; i < 100; i++) {
		uint64_t r0;

		n = gso_dev__submit(t->dev, &req, 1);
		r0 = bench_now_ns();
		gso_dev__reap(t->dev, 0);
		t->reap_ns += bench_now_ns() - r0;
		if (n != -EAGAIN && n != -ENOBUFS)
			return n < 0 ? n : 0;
		t->retries++;
	}
	return n;
}

static void tx_close(struct tx *t)
{
	if (t->dev)
		gso_dev__destroy(t->dev);
	if (t->fd >= 0)
		close(t->fd);
}

static void *ours_main(void *arg)
{
	struct ours *o = arg;
	const struct cfg *c = o->cfg;
	GSO_OPTS(gso_evloop_opts, eo, .backend = c->backend, .spin_ns = c->spin_ns,
		 .early_ns = c->early_ns);
	GSO_OPTS(gso_sched_opts, so, .max_flows = 1, .max_bursts = MAX_AHEAD);
	GSO_OPTS(gso_pacer_opts, po, .flags = GSO_PACER_F_PACE_ALL);
	GSO_OPTS(gso_burst_opts, bo, .pacing_shift = c->shift, .min_segs = 1,
		 .flags = GSO_BURST_F_NO_RTT_BONUS);
	GSO_OPTS(gso_burst_in, bi, .rate = (uint64_t)(o->target_bps / 8), .queued = 1u << 30,
		 .mss = UDP_MSS, .hdr_len = UDP_HDR, .cwnd = 65535, .peer_wnd = UINT32_MAX,
		 .dev_max_segs = UDP_MAX_SEGS, .dev_max_bytes = UDP_HDR + 65507);
	struct gso_evloop_event ev[4];
	struct gso_evloop *loop = NULL;
	struct gso_sched *s = NULL;
	struct gso_sched_stats ss = { .sz = sizeof(ss) };
	struct gso_burst burst = { .sz = sizeof(burst) };
	struct rusage ru0, ru1;
	uint64_t t0, t_end, cpu0, now, seq = 0, gap;
	uint32_t flow, ahead, queued = 0;
	struct tx tx = { .fd = -1 };
	int err;

	err = nsbed_enter(o->bed, 0);
	if (!err)
		err = set_rt(c->rt);
	if (!err)
		err = tx_open(&tx, o->bed, c->tx);
	if (tx.xsk_err)
		snprintf(o->txname, sizeof(o->txname), "udp socket (AF_XDP: %s)", strerror(-tx.xsk_err));
	else
		snprintf(o->txname, sizeof(o->txname), "%s", tx.name);
	o->xsk = tx.dev != NULL;
	if (err)
		goto out;
	err = gso_evloop__create(&loop, &eo);
	if (!err)
		err = gso_evloop__add_fd(loop, g_stop_efd, POLLIN, 1);
	if (!err)
		err = gso_sched__create(&s, &so);
	if (!err)
		err = gso_sched__flow_add(s, &po, &flow);
	if (!err)
		err = gso_sched__flow_set_rate(s, flow, bi.rate);
	if (err)
		goto out;
	err = gso_burst_size(&bi, &bo, &burst);
	if (err <= 0) {
		err = err ? err : -EINVAL;
		goto out;
	}
	err = 0;
	o->burst_segs = burst.segs;
	/*
	 * Bursts are stamped when queued, so keep `lookahead` of them queued:
	 * a sender woken late then finds several due and sends them at once,
	 * and the rate holds.  Stamped only when due (a queue of one), a late
	 * burst would get the pacer's credit for at most half a gap, and with
	 * wake-ups as late as a gap the rate would fall behind for good.
	 */
	gap = (uint64_t)((double)burst.wire_bytes * 8e9 / o->target_bps);
	ahead = (uint32_t)(c->lookahead_ns / (gap ? gap : 1));
	ahead = ahead < 2 ? 2 : ahead > MAX_AHEAD ? MAX_AHEAD : ahead;

	o->br_cap = (size_t)(o->target_bps / 8 / burst.wire_bytes * (c->seconds + 1)) + 1000;
	o->br = calloc(o->br_cap, sizeof(*o->br));
	if (!o->br) {
		err = -ENOMEM;
		goto out;
	}
	o->real_off_ns = realtime_offset_ns();
	getrusage(RUSAGE_THREAD, &ru0);
	cpu0 = bench_thread_cpu_ns();
	t0 = now = bench_now_ns();
	t_end = t0 + (uint64_t)(c->seconds * 1e9);
	while (now < t_end && !atomic_load(&g_stop)) {
		struct gso_sched_burst b;
		uint64_t next;
		int n;

		while (queued < ahead) {
			b = (struct gso_sched_burst){ .flow = flow, .wire_bytes = burst.wire_bytes,
						      .segs = burst.segs, .cookie = seq };
			if (gso_sched__enqueue(s, now, &b))
				break;
			seq++;
			queued++;
		}
		n = gso_sched__dequeue(s, now, &b, &next);
		if (n == 1) {
			/* The burst's first segment carries its tag, to match its capture. */
			uint32_t tag = (uint32_t)(b.cookie + 1);
			uint64_t call;

			queued--;
			memcpy(g_payload, &tag, sizeof(tag));
			call = bench_now_ns();
			if (tx_send(&tx, b.segs, b.departure_ns))
				o->send_err++;
			o->bursts++;
			now = bench_now_ns();
			o->busy_ns += now - call;
			if (b.cookie < o->br_cap)
				o->br[b.cookie] = (struct brec){ .stamp = b.departure_ns, .call = call, .ret = now,
								 .reap = tx.reap_ns };
			continue;
		}
		n = gso_evloop__wait_until(loop, next < t_end ? next : t_end, ev, 4);
		if (n < 0 && n != -EINTR) {
			err = n;
			break;
		}
		now = bench_now_ns();
	}
	o->wall = (double)(bench_now_ns() - t0) / 1e9;
	o->cpu = (double)(bench_thread_cpu_ns() - cpu0) / 1e9;
	getrusage(RUSAGE_THREAD, &ru1);
	o->nvcsw = ru1.ru_nvcsw - ru0.ru_nvcsw;
	o->nivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
	o->st.sz = sizeof(o->st);
	gso_evloop__stats(loop, &o->st);
	if (gso_sched__stats(s, &ss) == 0)
		o->late_max_ns = ss.late_ns_max;
out:
	o->err = err;
	gso_sched__destroy(s);
	gso_evloop__destroy(loop);
	o->tx_retries = tx.retries;
	tx_close(&tx);
	return NULL;
}

/*
 * The pacer's own error, burst by burst.  Each of our bursts' first segment
 * carries its sequence (rec.tag), so its capture (departure) can be set
 * against the EDT stamp the pacer gave it, and against when it was handed
 * to the device:
 *   own   = departure - stamp   (vs the schedule the pacer itself set)
 *         = wait + hand + dev:
 *   wait  = the part of call - stamp spent in earlier bursts' send calls
 *           (the device's back-pressure)
 *   hand  = the rest of call - stamp: the sender was woken or looped late,
 *           or preempted (the pacer's, event loop's and scheduler's share)
 *   dev   = departure - call    (the device's share: the send call, then the
 *                                kernel's way to the wire after it returned)
 * For the worst 1 % by own, the means of each say where the tail comes from.
 */
struct own {
	size_t n;                       /* bursts matched */
	double o50, o90, o99;           /* |own|, us */
	double h50, h90, h99;           /* hand, us */
	double b50, b90, b99;           /* wait, us */
	double d50, d90, d99;           /* dev, us */
	double w_own, w_hand, w_wait, w_send, w_dev; /* worst 1 % by own: means, us */
	/* Stalls: runs of consecutive bursts handed down >= STALL_NS late. */
	size_t stalls, stall_bursts;
	double stall_max;               /* the latest hand-down, us */
	/* Send calls: duration p50/p99/max, us; how many took >= STALL_NS, and their time in reap. */
	double s50, s99, smax;
	size_t slow;
	double slow_reap;               /* mean, us */
};

#define STALL_NS 100000u

static void pcts(const double *v, double *tmp, size_t n, double *p50, double *p90, double *p99)
{
	memcpy(tmp, v, n * sizeof(*v));
	*p50 = pct(tmp, n, 0.5) / 1e3;
	*p90 = pct(tmp, n, 0.9) / 1e3;
	*p99 = pct(tmp, n, 0.99) / 1e3;
}

/* Time burst k waited, after its stamp, in earlier bursts' send calls, ns. */
static uint64_t send_overlap(const struct ours *o, size_t k)
{
	uint64_t stamp = o->br[k].stamp, sum = 0;

	for (size_t j = k; j-- > 0 && k - j <= MAX_AHEAD;) {
		const struct brec *b = &o->br[j];

		if (!b->stamp || b->ret <= stamp)
			break;
		sum += b->ret - (b->call > stamp ? b->call : stamp);
	}
	return sum;
}

static void own_errors(const struct collector *c, double warmup, const struct ours *o, struct own *w)
{
	double *own, *hand, *wait, *send, *dev, *tmp, thr;
	size_t n = 0, nw = 0, cap;

	memset(w, 0, sizeof(*w));
	if (!c->n || !o->br)
		return;
	cap = c->n;
	own = malloc(6 * cap * sizeof(double));
	if (!own)
		bench_die(BENCH_EXIT_FAIL, ENOMEM, "analysis buffer");
	hand = own + cap;
	wait = hand + cap;
	send = wait + cap;
	dev = send + cap;
	tmp = dev + cap;
	for (size_t i = 0; i < c->n; i++) {
		const struct rec *r = &c->r[i];
		const struct brec *b;
		uint64_t late, busy;
		double dep;

		if (r->ts < c->r[0].ts + (uint64_t)(warmup * 1e9) || !r->tag || r->tag > o->br_cap)
			continue;
		b = &o->br[r->tag - 1];
		if (!b->stamp)
			continue;
		late = b->call - b->stamp;
		busy = send_overlap(o, r->tag - 1);
		busy = busy < late ? busy : late;
		dep = (double)((int64_t)r->ts - o->real_off_ns);
		own[n] = fabs(dep - (double)b->stamp);
		wait[n] = (double)busy;
		hand[n] = (double)(late - busy);
		send[n] = (double)(b->ret - b->call);
		dev[n] = dep - (double)b->call;
		n++;
	}
	w->n = n;
	if (n >= 10) {
		pcts(own, tmp, n, &w->o50, &w->o90, &w->o99);
		pcts(hand, tmp, n, &w->h50, &w->h90, &w->h99);
		pcts(wait, tmp, n, &w->b50, &w->b90, &w->b99);
		pcts(dev, tmp, n, &w->d50, &w->d90, &w->d99);
		thr = w->o99 * 1e3;
		for (size_t i = 0; i < n; i++) {
			if (own[i] < thr)
				continue;
			w->w_own += own[i];
			w->w_hand += hand[i];
			w->w_wait += wait[i];
			w->w_send += send[i];
			w->w_dev += dev[i];
			nw++;
		}
		if (nw) {
			w->w_own /= (double)nw * 1e3;
			w->w_hand /= (double)nw * 1e3;
			w->w_wait /= (double)nw * 1e3;
			w->w_send /= (double)nw * 1e3;
			w->w_dev /= (double)nw * 1e3;
		}
	}
	free(own);
	{
		double *sc = malloc(o->br_cap * sizeof(double));
		size_t m = 0;

		if (!sc)
			bench_die(BENCH_EXIT_FAIL, ENOMEM, "analysis buffer");
		for (size_t k = 0; k < o->br_cap; k++) {
			const struct brec *b = &o->br[k];

			if (!b->stamp)
				continue;
			sc[m++] = (double)(b->ret - b->call);
			w->smax = sc[m - 1] / 1e3 > w->smax ? sc[m - 1] / 1e3 : w->smax;
			if (b->ret - b->call >= STALL_NS) {
				w->slow++;
				w->slow_reap += (double)b->reap / 1e3;
			}
		}
		if (m >= 10) {
			w->s50 = pct(sc, m, 0.5) / 1e3;
			w->s99 = pct(sc, m, 0.99) / 1e3;
		}
		if (w->slow)
			w->slow_reap /= (double)w->slow;
		free(sc);
	}
	/*
	 * One late wake-up makes every burst due during it late: the runs say
	 * how many stalls the tail is made of, and how long the worst was.
	 */
	for (size_t k = 0, in = 0; k < o->br_cap; k++) {
		const struct brec *b = &o->br[k];
		uint64_t late = b->stamp ? b->call - b->stamp : 0, busy;

		/* Time in earlier send calls is the device's, not a stall of the sender. */
		busy = late ? send_overlap(o, k) : 0;
		late = busy < late ? late - busy : 0;

		if (!b->stamp || late < STALL_NS) {
			in = 0;
			continue;
		}
		w->stalls += !in;
		w->stall_bursts++;
		w->stall_max = (double)late / 1e3 > w->stall_max ? (double)late / 1e3 : w->stall_max;
		in = 1;
	}
}

/* ---- the kernel's TCP ---------------------------------------------------------------------- */

struct ktcp {
	const struct nsbed *bed;
	const struct cfg *cfg;
	double target_bps;
	atomic_bool listening, done;
	int err;
	uint32_t mss, hdr;
	uint64_t max_rate, sent;
	double wall, cpu;
	long nvcsw, nivcsw;
};

static void *ktcp_rx_main(void *arg)
{
	struct ktcp *k = arg;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(TCP_PORT) };
	int one = 1, l = -1, s = -1;
	struct timeval tv = { .tv_usec = 100000 };
	static char sink[1 << 16];

	if (nsbed_enter(k->bed, 1) ||
	    (l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		k->err = -errno;
		atomic_store(&k->listening, true);
		goto out;
	}
	atomic_store(&k->listening, true);
	while (s < 0 && !atomic_load(&k->done))
		s = accept(l, NULL, NULL);
	if (s >= 0)
		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (s >= 0) {
		/* MSG_TRUNC: TCP discards the data without copying it. */
		ssize_t n = recv(s, sink, 1 << 30, MSG_TRUNC);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			break;
		if (n < 0 && atomic_load(&k->done))
			break;
	}
out:
	if (s >= 0)
		close(s);
	if (l >= 0)
		close(l);
	return NULL;
}

static void *ktcp_tx_main(void *arg)
{
	struct ktcp *k = arg;
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(TCP_PORT) };
	struct timeval tv = { .tv_usec = 100000 };
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	struct rusage ru0, ru1;
	uint64_t t0, t_end, cpu0;
	int fd = -1, mss = 0;

	if (nsbed_enter(k->bed, 0) || (fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		k->err = -errno;
		goto out;
	}
	k->err = set_rt(k->cfg->rt);
	if (k->err)
		goto out;
	inet_pton(AF_INET, k->bed->ip[1], &dst.sin_addr);
	/* CUBIC: BBR's pacing gain cycle would dip below the cap on purpose. */
	if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "cubic", 5) ||
	    connect(fd, (struct sockaddr *)&dst, sizeof(dst)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv))) {
		k->err = -errno;
		goto out;
	}
	len = sizeof(mss);
	getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &len);
	len = sizeof(ti);
	getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len);
	k->mss = mss > 0 ? (uint32_t)mss : 1448;
	k->hdr = 14 + 20 + 20 + ((ti.tcpi_options & TCPI_OPT_TIMESTAMPS) ? 12 : 0);
	/* TCP charges payload bytes to its pacing rate (tcp_update_skb_after_send). */
	k->max_rate = (uint64_t)(k->target_bps / 8 * k->mss / (k->mss + k->hdr));
	if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &k->max_rate, sizeof(k->max_rate))) {
		k->err = -errno;
		goto out;
	}
	getrusage(RUSAGE_THREAD, &ru0);
	cpu0 = bench_thread_cpu_ns();
	t0 = bench_now_ns();
	t_end = t0 + (uint64_t)(k->cfg->seconds * 1e9);
	while (bench_now_ns() < t_end && !atomic_load(&g_stop)) {
		ssize_t n = send(fd, g_payload, sizeof(g_payload), MSG_NOSIGNAL);

		if (n > 0)
			k->sent += (uint64_t)n;
		else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			k->err = -errno;
			break;
		}
	}
	k->wall = (double)(bench_now_ns() - t0) / 1e9;
	k->cpu = (double)(bench_thread_cpu_ns() - cpu0) / 1e9;
	getrusage(RUSAGE_THREAD, &ru1);
	k->nvcsw = ru1.ru_nvcsw - ru0.ru_nvcsw;
	k->nivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
out:
	atomic_store(&k->done, true);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* ---- one target ------------------------------------------------------------------------- */

struct row {
	const char *who;
	double target;
	struct anal a;
	struct own own;     /* ours only (own.n == 0 otherwise) */
	double busy;        /* ours: share of the sender's time inside the send calls */
	bool dev_limited;   /* ours: the device, not the pacer, set the rate */
	double wake_s, spin_s, skb_s, cpu_s, si_s, wake_gb, skb_gb;
	uint64_t drops, overflow, send_err;
	char note[320];
};

static size_t rec_cap(const struct cfg *c, double target)
{
	/* One record per 1514-byte frame is the most there can be (AF_XDP; GSO packets are fewer). */
	return (size_t)(target / 8 / 1514 * (c->seconds + 1)) + 100000;
}

static void fill_row(struct row *r, const struct capthr *cap, double wall, double cpu, double wakes,
		     double spins, uint64_t si_ns)
{
	double gb = r->a.wire_bytes / 1e9;

	r->drops = cap->kdrops;
	r->overflow = cap->col.overflow;
	if (wall <= 0)
		return;
	r->wake_s = wakes / wall;
	r->spin_s = spins / wall;
	r->cpu_s = cpu / wall;
	r->si_s = (double)si_ns / 1e9 / wall;
	r->skb_s = r->a.dur > 0 ? (double)r->a.skbs / r->a.dur : 0;
	/* Per GB over the analysed window, with wake-ups scaled to that window. */
	r->wake_gb = gb > 0 ? r->wake_s * r->a.dur / gb : 0;
	r->skb_gb = gb > 0 ? (double)r->a.skbs / gb : 0;
}

static void run_ours(const struct nsbed *bed, const struct cfg *c, double target, struct row *r)
{
	struct capthr cap;
	struct ours o = { .bed = bed, .cfg = c, .target_bps = target };
	pthread_t thr;
	uint64_t si0;

	cap_start(&cap, bed, IPPROTO_UDP, UDP_PORT, rec_cap(c, target));
	si0 = machine_softirq_ns();
	if (pthread_create(&thr, NULL, ours_main, &o))
		bench_die(BENCH_EXIT_FAIL, errno, "pthread_create");
	pthread_join(thr, NULL);
	si0 = machine_softirq_ns() - si0;
	cap_stop(&cap);
	if (o.err)
		bench_die(BENCH_EXIT_FAIL, o.err, "libgso sender");
	memset(r, 0, sizeof(*r));
	r->who = o.xsk ? "libgso/xsk" : "libgso/udp";
	r->target = target;
	r->send_err = o.send_err;
	analyse(&cap.col, UDP_MSS, target, c->warmup, &r->a);
	fill_row(r, &cap, o.wall, o.cpu, (double)o.st.wakeups, (double)o.st.spins, si0);
	own_errors(&cap.col, c->warmup, &o, &r->own);
	r->busy = o.wall > 0 ? (double)o.busy_ns / 1e9 / o.wall : 0;
	/*
	 * Short of the rate while the sender sat in the send calls nearly all
	 * the time: the device carried what it could, and the pacer was never
	 * the limit (copy mode on the veth: one skb per frame).
	 */
	r->dev_limited = r->a.ok && r->a.rate_err < -0.5 && r->busy >= 0.8;
	free(o.br);
	const char *loop = gso_evloop_backend_name(o.st.backend);
	snprintf(r->note, sizeof(r->note),
		 "%s, burst %u seg, %.0f bursts/s, send err %llu, ctx sw %.0f+%.0f/s, %s, sleep late p99 %.1f us, spin %.2f s/s",
		 o.txname, o.burst_segs, o.wall > 0 ? (double)o.bursts / o.wall : 0,
		 (unsigned long long)o.send_err, o.wall > 0 ? (double)o.nvcsw / o.wall : 0,
		 o.wall > 0 ? (double)o.nivcsw / o.wall : 0, loop ? loop : "unknown",
		 (double)o.st.late_sleep_p99_ns / 1e3, o.wall > 0 ? (double)o.st.spin_ns / 1e9 / o.wall : 0);
	free(cap.col.r);
}

static void run_kernel(const struct nsbed *bed, const struct cfg *c, double target, struct row *r)
{
	struct capthr cap;
	struct ktcp k = { .bed = bed, .cfg = c, .target_bps = target };
	pthread_t rx, tx;
	uint64_t si0;

	cap_start(&cap, bed, IPPROTO_TCP, TCP_PORT, rec_cap(c, target));
	if (pthread_create(&rx, NULL, ktcp_rx_main, &k))
		bench_die(BENCH_EXIT_FAIL, errno, "pthread_create");
	while (!atomic_load(&k.listening))
		usleep(1000);
	si0 = machine_softirq_ns();
	if (pthread_create(&tx, NULL, ktcp_tx_main, &k))
		bench_die(BENCH_EXIT_FAIL, errno, "pthread_create");
	pthread_join(tx, NULL);
	si0 = machine_softirq_ns() - si0;
	pthread_join(rx, NULL);
	cap_stop(&cap);
	if (k.err)
		bench_die(BENCH_EXIT_FAIL, k.err, "kernel TCP");
	memset(r, 0, sizeof(*r));
	r->who = "kernel/tcp";
	r->target = target;
	analyse(&cap.col, k.mss, target, c->warmup, &r->a);
	/*
	 * Kernel wake-ups: the writer's own (blocking on a full send buffer)
	 * plus one per departure, since each paced departure is started by the
	 * pacing hrtimer or by an ACK's softirq.
	 */
	fill_row(r, &cap, k.wall, k.cpu, (double)k.nvcsw, 0, si0);
	if (r->a.dur > 0) {
		r->wake_s += r->skb_s;
		r->wake_gb += r->skb_gb;
	}
	snprintf(r->note, sizeof(r->note), "mss %u, SO_MAX_PACING_RATE %.4g B/s, writer wakes %.0f/s",
		 k.mss, (double)k.max_rate, k.wall > 0 ? (double)k.nvcsw / k.wall : 0);
	free(cap.col.r);
}

static const char *fmt_rate(double bps, char *buf, size_t n)
{
	if (bps >= 1e9)
		snprintf(buf, n, "%gG", bps / 1e9);
	else if (bps >= 1e6)
		snprintf(buf, n, "%gM", bps / 1e6);
	else
		snprintf(buf, n, "%gk", bps / 1e3);
	return buf;
}

static void print_header(void)
{
	printf("%-6s %-11s %8s %7s %22s %22s %7s %7s %7s %5s %5s %8s %7s %5s\n", "target", "sender",
	       "Gbit/s", "err%", "dep.err p50/p90/p99", "jitter p50/p90/p99", "wake/s", "spin/s", "pkt/s",
	       "CPU", "si", "wake/GB", "pkt/GB", "lost");
}

static void print_row(const struct row *r)
{
	char t[16], e[32], j[32], re[16];

	fmt_rate(r->target, t, sizeof(t));
	if (!r->a.ok) {
		printf("%-6s %-11s   (too few packets captured: %zu)\n", t, r->who, r->a.skbs);
		return;
	}
	/* A device that cannot carry the rate is not a pacing error: no err% or dep.err for it. */
	snprintf(re, sizeof(re), r->dev_limited ? "dev-lim" : "%+.3f", r->a.rate_err);
	snprintf(e, sizeof(e), r->dev_limited ? "(device-limited)" : "%.1f/%.1f/%.1f", r->a.e50,
		 r->a.e90, r->a.e99);
	snprintf(j, sizeof(j), "%.1f/%.1f/%.1f", r->a.j50, r->a.j90, r->a.j99);
	printf("%-6s %-11s %8.4f %7s %22s %22s %7.0f %7.0f %7.0f %5.2f %5.2f %8.0f %7.0f %5llu\n", t,
	       r->who, r->a.rate_bps / 1e9, re, e, j, r->wake_s, r->spin_s, r->skb_s,
	       r->cpu_s, r->si_s, r->wake_gb, r->skb_gb,
	       (unsigned long long)(r->drops + r->overflow));
	printf("%-6s %-11s   %s\n", "", "", r->note);
	if (r->dev_limited)
		printf("%-6s %-11s   device-limited at %.3f Gbit/s: %.1f %% short of the target while the "
		       "sender spent %.0f %% of its time in the send calls\n", "", "", r->a.rate_bps / 1e9,
		       -r->a.rate_err, r->busy * 100);
	if (r->own.n >= 10)
		printf("%-6s %-11s   pacer's own error p50/p90/p99 %.1f/%.1f/%.1f us (departure vs its EDT "
		       "stamp, %zu bursts) = sender late %.1f/%.1f/%.1f (wake-up, loop, preemption) + "
		       "waiting for the previous send call %.1f/%.1f/%.1f + device %.1f/%.1f/%.1f (send "
		       "call to departure); worst 1 %%: %.0f us = %.0f sender late + %.0f waiting + %.0f "
		       "device (send calls %.0f); %zu stalls (bursts the sender handed down >= %u us late: "
		       "%zu, latest %.0f us); send calls %.0f %% of the time, each p50/p99/max "
		       "%.1f/%.1f/%.0f us, %zu took >= %u us (of which in reap: %.0f us on average)\n", "", "",
		       r->own.o50, r->own.o90, r->own.o99, r->own.n, r->own.h50, r->own.h90, r->own.h99,
		       r->own.b50, r->own.b90, r->own.b99, r->own.d50, r->own.d90, r->own.d99,
		       r->own.w_own, r->own.w_hand, r->own.w_wait, r->own.w_dev, r->own.w_send,
		       r->own.stalls, STALL_NS / 1000u, r->own.stall_bursts, r->own.stall_max,
		       r->busy * 100, r->own.s50, r->own.s99, r->own.smax, r->own.slow, STALL_NS / 1000u,
		       r->own.slow_reap);
	if (r->drops || r->overflow)
		printf("%-6s %-11s   CAPTURE INCOMPLETE: %llu dropped by the kernel (ring full), %llu past "
		       "the record buffer; the figures above cover what was captured\n", "", "",
		       (unsigned long long)r->drops, (unsigned long long)r->overflow);
}

static void verdict(const struct row *o, const struct row *k)
{
	char t[16];
	bool rate = o->a.ok && fabs(o->a.rate_err) <= 0.5;
	bool dep = o->a.ok && o->a.e99 <= 20;
	bool wake = o->a.ok && k && k->a.ok && o->wake_gb < k->wake_gb;

	fmt_rate(o->target, t, sizeof(t));
	if (o->dev_limited) {
		printf("  %-6s goals: n/a, device-limited at %.3f Gbit/s (pacer's own p99 %.1f us: sender "
		       "late p99 %.1f, waiting for the device p99 %.1f)\n", t, o->a.rate_bps / 1e9,
		       o->own.o99, o->own.h99, o->own.b99);
		return;
	}
	printf("  %-6s goals: rate error <= 0.5%%: %s (%+.3f%%); p99 departure error <= 20 us: %s "
	       "(%.1f us; pacer's own %.1f us); wake-ups/GB below the kernel's: %s",
	       t, rate ? "met" : "MISSED", o->a.rate_err, dep ? "met" : "MISSED", o->a.e99, o->own.o99,
	       !k ? "n/a" : wake ? "met" : "MISSED");
	if (k && k->a.ok)
		printf(" (%.0f vs %.0f)", o->wake_gb, k->wake_gb);
	printf("\n");
}

/* ---- --timers --------------------------------------------------------------------------------- */

enum tmeth { TM_URING, TM_EPOLL, TM_NSLEEP, TM_NSLEEP_SLACK, TM_SPIN, TM_LOOP, TM_EARLY, TM_N };

static const char *const tm_name[TM_N] = {
	"io_uring TIMEOUT_ABS", "epoll + timerfd", "clock_nanosleep ABSTIME",
	"clock_nanosleep, slack 1ns", "spin (clock_gettime)", "evloop default", "evloop early 20us",
};

struct tm_acc {
	double *late; /* ns */
	size_t n;
	uint64_t cpu_ns;
	uint64_t sleeps;
};

static void timers(const struct cfg *c)
{
	static const uint64_t len[3] = { 10000, 100000, 1000000 };
	struct tm_acc acc[TM_N][3];
	struct gso_evloop *loop[TM_N] = { 0 };
	struct gso_evloop_event ev[1];
	const unsigned block = 50, rounds = (c->timer_samples + block - 1) / block;
	unsigned long slack0 = (unsigned long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	struct utsname u;

	for (int m = 0; m < TM_N; m++) {
		GSO_OPTS(gso_evloop_opts, o);

		switch (m) {
		case TM_URING: o.backend = GSO_EVLOOP_URING; o.flags = GSO_EVLOOP_F_NO_SPIN; break;
		case TM_EPOLL: o.backend = GSO_EVLOOP_EPOLL; o.flags = GSO_EVLOOP_F_NO_SPIN; break;
		case TM_SPIN: o.spin_ns = GSO_EVLOOP_MAX_SPIN_NS; break;
		case TM_LOOP: break;
		case TM_EARLY: o.early_ns = 20000; break;
		default: continue;
		}
		int err = gso_evloop__create(&loop[m], &o);
		if (err)
			bench_die(BENCH_EXIT_FAIL, err, "%s", tm_name[m]);
	}
	for (int m = 0; m < TM_N; m++)
		for (int s = 0; s < 3; s++) {
			acc[m][s] = (struct tm_acc){ .late = calloc((size_t)rounds * block, sizeof(double)) };
			if (!acc[m][s].late)
				bench_die(BENCH_EXIT_FAIL, ENOMEM, "timers");
		}

	uname(&u);
	printf("wake-up lateness of absolute CLOCK_MONOTONIC deadlines: %s %s, %ld CPUs, "
	       "timer slack %lu ns, %u samples each, interleaved in blocks of %u\n",
	       u.sysname, u.release, sysconf(_SC_NPROCESSORS_ONLN), slack0, rounds * block, block);
	/* Interleave methods and lengths so that noise from other processes hits all alike. */
	for (unsigned r = 0; r < rounds && !atomic_load(&g_stop); r++)
		for (int m = 0; m < TM_N; m++)
			for (int s = 0; s < 3; s++) {
				struct tm_acc *a = &acc[m][s];
				uint64_t cpu0 = bench_thread_cpu_ns();
				struct gso_evloop_stats st = { .sz = sizeof(st) };

				if (m == TM_NSLEEP_SLACK)
					prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
				if (loop[m])
					gso_evloop__stats_reset(loop[m]);
				for (unsigned i = 0; i < block; i++) {
					uint64_t dl = bench_now_ns() + len[s], t;
					struct timespec ts = { .tv_sec = (time_t)(dl / 1000000000ull),
							       .tv_nsec = (long)(dl % 1000000000ull) };

					if (loop[m]) {
						gso_evloop__wait_until(loop[m], dl, ev, 1);
					} else {
						while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
							;
						a->sleeps++;
					}
					t = bench_now_ns();
					a->late[a->n++] = (double)(t - dl);
				}
				a->cpu_ns += bench_thread_cpu_ns() - cpu0;
				if (loop[m] && !gso_evloop__stats(loop[m], &st))
					a->sleeps += st.sleeps;
				if (m == TM_NSLEEP_SLACK)
					prctl(PR_SET_TIMERSLACK, slack0, 0, 0, 0);
			}
	printf("%-28s %-27s %-27s %-27s\n", "lateness p50/p99/max us", "10 us", "100 us", "1 ms");
	for (int m = 0; m < TM_N; m++) {
		printf("%-28s", tm_name[m]);
		for (int s = 0; s < 3; s++) {
			struct tm_acc *a = &acc[m][s];
			char b[40];
			double mx = 0;

			for (size_t i = 0; i < a->n; i++)
				mx = a->late[i] > mx ? a->late[i] : mx;
			snprintf(b, sizeof(b), "%.1f / %.1f / %.0f", pct(a->late, a->n, 0.5) / 1e3,
				 pct(a->late, a->n, 0.99) / 1e3, mx / 1e3);
			printf(" %-27s", b);
		}
		printf("\n");
	}
	printf("%-28s %-27s %-27s %-27s\n", "CPU us per wait (sleeps)", "10 us", "100 us", "1 ms");
	for (int m = 0; m < TM_N; m++) {
		printf("%-28s", tm_name[m]);
		for (int s = 0; s < 3; s++) {
			char b[40];

			snprintf(b, sizeof(b), "%.2f (%llu)", (double)acc[m][s].cpu_ns / 1e3 / (double)acc[m][s].n,
				 (unsigned long long)acc[m][s].sleeps);
			printf(" %-27s", b);
		}
		printf("\n");
	}
	for (int m = 0; m < TM_N; m++) {
		gso_evloop__destroy(loop[m]);
		for (int s = 0; s < 3; s++)
			free(acc[m][s].late);
	}
}

/* ---- main ------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct cfg c;
	struct nsbed bed;
	struct utsname u;
	int err;

	parse_args(argc, argv, &c);
	g_stop_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g_stop_efd < 0)
		bench_die(BENCH_EXIT_FAIL, errno, "eventfd");
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (c.timers) {
		timers(&c);
		return 0;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bench_pacing: needs root (network namespaces, veth, AF_PACKET); "
				"--timers runs without\n");
		return 77;
	}
	err = benchbed_create(&bed, NULL);
	if (err)
		bench_die(BENCH_EXIT_FAIL, err, "namespace test-bed");
	if (atomic_load(&g_stop)) {
		nsbed_destroy(&bed);
		return 130;
	}
	uname(&u);
	printf("bench_pacing: %s %s, %ld CPUs; veth %s <-> %s in two fresh namespaces (MTU 1500, "
	       "TSO/GSO on, noqueue), %.1f s per run, first %.2f s left out\n",
	       u.sysname, u.release, sysconf(_SC_NPROCESSORS_ONLN), bed.ifname[0], bed.ifname[1],
	       c.seconds, c.warmup);
	printf("libgso: %s, pacing shift %u (~%.1f us bursts), min 1 segment, %.0f ms stamped ahead, "
	       "event loop %s, spin below %u us, early %u us\n",
	       c.tx == TX_UDP ? "UDP socket, one sendmsg per burst (UDP_SEGMENT; the veth carries it "
				"whole), SO_TXTIME = EDT stamp"
			      : "AF_XDP backend (libgso/xsk; falls back to a UDP socket, libgso/udp, "
				"if it cannot open), copy mode on the veth: software GSO, one submit per "
				"burst, every 1514-byte frame becomes an skb",
	       c.shift, 1e6 / (double)(1u << c.shift), (double)c.lookahead_ns / 1e6,
	       gso_evloop_backend_name(c.backend) ? gso_evloop_backend_name(c.backend) : "unknown",
	       (c.spin_ns ? c.spin_ns : GSO_EVLOOP_DEF_SPIN_NS) / 1000u, c.early_ns / 1000u);
	if (c.rt)
		printf("both sending threads SCHED_FIFO priority %d\n", c.rt);
	printf("kernel: TCP CUBIC, SO_MAX_PACING_RATE = target x mss/(mss+headers) (TCP charges "
	       "payload), internal pacing (no fq)\n");
	printf("rates are Ethernet frame bits (no preamble/FCS); dep.err = |departure - ideal schedule "
	       "at the target rate| (schedule placed at median error 0), jitter = same at the achieved "
	       "rate, both per 1514-byte segment (a GSO packet's segments share its capture time), us; "
	       "wake = returns from a sleeping syscall (kernel: writer wake-ups + one per departure); "
	       "CPU = sending thread CPU-s/s; si = softirq CPU-s/s, whole machine; "
	       "libgso's pacer's own error = |departure - the EDT stamp it gave the burst|, split into "
	       "handed down late (stamp to send call) and device (send call to departure); "
	       "device-limited = short of the rate by > 0.5 %% with >= 80 %% of the sender's time in "
	       "the send calls (err%% and dep.err then measure the device, not the pacer)\n\n");
	print_header();
	for (int i = 0; i < c.ntargets && !atomic_load(&g_stop); i++) {
		struct row ro, rk;
		double la[1] = { 0 };

		/* Other load on the machine decides the tails: say how much there was. */
		getloadavg(la, 1);
		printf("-- load average %.2f\n", la[0]);

		if (c.ours) {
			run_ours(&bed, &c, c.targets[i], &ro);
			print_row(&ro);
		}
		if (c.kernel && !atomic_load(&g_stop)) {
			run_kernel(&bed, &c, c.targets[i], &rk);
			print_row(&rk);
		}
		if (c.ours && !atomic_load(&g_stop))
			verdict(&ro, c.kernel ? &rk : NULL);
	}
	nsbed_destroy(&bed);
	return atomic_load(&g_stop) ? 130 : 0;
}
