/*
 * sender: a TCP sender over libgso.  It opens a connection to a stock
 * Linux TCP receiver (bench/receiver) from user space, through one of the
 * library's transmit backends (--mode), and sends the bench stream
 * (header + seeded bytes the receiver verifies, bench/testbed/common/proto.h).
 *
 * The transport is the library's: a transmit engine (<gso/engine.h>) with
 * one stream flow, which runs the handshake, the flow send queue, loss
 * recovery, congestion control and pacing; the next hop comes from the
 * kernel (<gso/route.h>).  What stays here is option parsing, the bench
 * stream written straight into the stream's device buffers, the e1000
 * mode's device hand-over after the SYN-ACK (bench/testbed/common/sender_dev.c),
 * and reporting.
 *
 * Options follow the bench sender contract (bench/testbed/README.md, the
 * same as bench/kernel_sender) plus --mode and the pacing settings.
 * Exit: 0 the stream was sent, acknowledged and the FIN too; 1 the
 * transfer failed (the peer went silent or reset it, the interface went
 * away: the message and the JSON "status" say which); 2 usage or setup
 * error (no route, an unresolvable next hop); 77 the mode is not
 * available here.  With --json one JSON object on stdout (keys in
 * report()).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ifaddrs.h>
#include <net/if.h>
#include <sys/ioctl.h>

#include <gso/cc.h>
#include <gso/engine.h>
#include <gso/evloop.h>
#include <gso/port.h>
#include <gso/route.h>
#include <gso/dev.h>
#include <gso/steer.h>
#include <gso/e1000.h>

#include "cpu.h"
#include "json.h"
#include "proto.h"
#include "sender_dev.h"
#include "sender_port.h"
#include "stream.h"
#include "util.h"

#define DEF_PORT 5201
#define DEF_BYTES (256ull << 20)
#define RX_BATCH 64

struct opts {
	const char *dev, *src, *dst, *dst_mac, *netns, *label;
	int mode;
	uint16_t port, sport;
	uint64_t bytes, seed, mss;
	double time_s, rate_bps, idle_s;
	uint32_t queue, pacing_shift, min_segs, win_divisor, cc, queues, streams;
	uint32_t txop_us, txop_frames;
	double txop_mbit;
	bool txop_split;
	bool json, raw, no_sack, no_ts, check, quiet, progress;
};

static volatile sig_atomic_t stop_flag;


static void usage(FILE *f)
{
	fprintf(f,
		"usage: sender --dev IFNAME --dst ADDR [options]\n"
		"A TCP sender over libgso: active open, the bench stream, SACK/NewReno recovery,\n"
		"Reno/CUBIC/BBR, pacing, FIN.  ACKs come back on an AF_XDP socket (XDP steering).\n\n"
		"  -m, --mode MODE         software | csum | multibuf | offload-e1000 | offload-vnet | auto\n"
		"                          (default software; --list-modes prints them):\n"
		"                            software       AF_XDP, whole frames, software checksums\n"
		"                            csum           AF_XDP, whole frames, checksum metadata\n"
		"                            multibuf       AF_XDP, header + payload reference frames\n"
		"                            offload-vnet   AF_PACKET + virtio_net_hdr: the kernel/NIC segments\n"
		"                            offload-e1000  e1000 TSO device model (needs 2 queues)\n"
		"                            auto           offload-vnet (auto) if the interface does TSO,\n"
		"                                           else the AF_XDP mode the library picks (software in copy mode)\n"
		"      --dev IFNAME        interface to send on (required)\n"
		"  -d, --dst ADDR          receiver address, IPv4 or IPv6 (required)\n"
		"      --src ADDR          our address (default: the interface's first)\n"
		"      --dst-mac MAC       next hop's MAC (default: the kernel's, resolved if needed)\n"
		"  -p, --port P            receiver port (default %d)\n"
		"      --sport P           our port (default: from the process id)\n"
		"  -b, --bytes N           stream bytes (default 256M, or unlimited with --time)\n"
		"  -T, --time S            stop queueing new data after S seconds (whichever of\n"
		"                          --bytes and --time comes first)\n"
		"  -s, --seed S            stream seed (default 1)\n"
		"      --raw               no header (receiver needs --seed)\n"
		"      --rate R            pacing rate cap in bit/s (k/M/G suffixes)\n"
		"      --pacing-shift N    burst = rate >> N bytes (default 10, ~1 ms)\n"
		"      --min-segs N        smallest rate-based burst (default 2)\n"
		"      --win-divisor N     a cwnd-limited burst is at most cwnd/N (default 3)\n"
		"      --cc reno|cubic|bbr congestion control (default cubic; this kernel's TCP default may differ)\n"
		"      --mss N             cap the segment size\n"
		"      --no-sack           do not offer SACK (NewReno recovery)\n"
		"      --no-ts             do not offer timestamps\n"
		"      --txop US           offload-e1000: the model sends in aggregates, as Wi-Fi does: at\n"
		"                          transmit opportunities every US microseconds (1..1000000, +-1/8\n"
		"                          jitter), completing an aggregate's descriptors once it has left\n"
		"      --txop-frames N     with --txop: frames per aggregate at most (1..65535, default 64;\n"
		"                          a larger TSO packet still goes whole, alone)\n"
		"      --txop-rate MBIT    with --txop: link rate on the air in Mbit/s (an aggregate\n"
		"                          completes its bytes / rate after the opportunity; default none)\n"
		"      --txop-split        with --txop: the limit counts frames, not packets (A-MPDU): a TSO\n"
		"                          packet's frames may span aggregates\n"
		"      --queue Q           AF_XDP queue (default 0)\n"
		"      --queues N          N > 1: a multi-queue port (<gso/port.h>), one engine and worker\n"
		"                          per queue, streams placed by their RSS hash (AF_XDP modes;\n"
		"                          default 1: one engine on this thread)\n"
		"      --streams M         with --queues: M streams, to ports P..P+M-1 from sports\n"
		"                          S..S+M-1 (default M = N)\n"
		"      --idle-timeout S    fail after S s without hearing from the peer (default 10)\n"
		"      --check             verify the flow queue's accounting after every step\n"
		"  -j, --json              one JSON object on stdout\n"
		"  -n, --netns NAME        run in network namespace NAME\n"
		"  -l, --label TEXT        copied into the result\n"
		"  -q, --quiet             no progress line\n"
		"      --progress          progress lines on stderr even when it is not a terminal,\n"
		"                          one per line, with BBR's mode, bw and min RTT (for logs)\n"
		"      --list-modes        print the modes, one per line\n"
		"  -h, --help\n\n"
		"Exit: 0 sent and acknowledged; 1 transfer failed (peer silent or reset, the\n"
		"interface went away); 2 usage or setup error (no route, next hop unresolvable);\n"
		"77 mode not available here.\n",
		DEF_PORT);
}

enum { O_DEV = 256, O_SRC, O_DSTMAC, O_SPORT, O_RAW, O_RATE, O_SHIFT, O_MINSEGS, O_DIV, O_CC, O_MSS,
       O_NOSACK, O_NOTS, O_QUEUE, O_IDLE, O_CHECK, O_LIST, O_QUEUES, O_STREAMS, O_PROGRESS, O_TXOP,
       O_TXOP_FRAMES, O_TXOP_RATE, O_TXOP_SPLIT };

static uint32_t parse_u32(const char *name, const char *v, uint64_t lo, uint64_t hi)
{
	uint64_t x;

	if (bench_parse_u64(v, &x) || x < lo || x > hi)
		bench_die(BENCH_EXIT_USAGE, 0, "bad --%s '%s'", name, v);
	return (uint32_t)x;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "mode", required_argument, 0, 'm' },
		{ "dst", required_argument, 0, 'd' },
		{ "port", required_argument, 0, 'p' },
		{ "bytes", required_argument, 0, 'b' },
		{ "time", required_argument, 0, 'T' },
		{ "seed", required_argument, 0, 's' },
		{ "json", no_argument, 0, 'j' },
		{ "netns", required_argument, 0, 'n' },
		{ "label", required_argument, 0, 'l' },
		{ "quiet", no_argument, 0, 'q' },
		{ "progress", no_argument, 0, O_PROGRESS },
		{ "help", no_argument, 0, 'h' },
		{ "dev", required_argument, 0, O_DEV },
		{ "src", required_argument, 0, O_SRC },
		{ "dst-mac", required_argument, 0, O_DSTMAC },
		{ "sport", required_argument, 0, O_SPORT },
		{ "raw", no_argument, 0, O_RAW },
		{ "rate", required_argument, 0, O_RATE },
		{ "pacing-shift", required_argument, 0, O_SHIFT },
		{ "min-segs", required_argument, 0, O_MINSEGS },
		{ "win-divisor", required_argument, 0, O_DIV },
		{ "cc", required_argument, 0, O_CC },
		{ "mss", required_argument, 0, O_MSS },
		{ "no-sack", no_argument, 0, O_NOSACK },
		{ "no-ts", no_argument, 0, O_NOTS },
		{ "queue", required_argument, 0, O_QUEUE },
		{ "idle-timeout", required_argument, 0, O_IDLE },
		{ "check", no_argument, 0, O_CHECK },
		{ "list-modes", no_argument, 0, O_LIST },
		{ "queues", required_argument, 0, O_QUEUES },
		{ "streams", required_argument, 0, O_STREAMS },
		{ "txop", required_argument, 0, O_TXOP },
		{ "txop-frames", required_argument, 0, O_TXOP_FRAMES },
		{ "txop-rate", required_argument, 0, O_TXOP_RATE },
		{ "txop-split", no_argument, 0, O_TXOP_SPLIT },
		{ 0, 0, 0, 0 },
	};
	bool have_bytes = false;
	int c;

	*o = (struct opts){ .port = DEF_PORT, .seed = 1, .mode = SND_MODE_SOFTWARE, .idle_s = 10,
			    .cc = GSO_CC_CUBIC };
	while ((c = getopt_long(argc, argv, "m:d:p:b:T:s:jn:l:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			o->mode = snd_mode_parse(optarg);
			if (o->mode < 0)
				bench_die(BENCH_EXIT_USAGE, 0, "unknown --mode '%s' (see --list-modes)", optarg);
			break;
		case 'd': o->dst = optarg; break;
		case 'p': o->port = (uint16_t)parse_u32("port", optarg, 1, 65535); break;
		case 'b':
			if (bench_parse_size(optarg, &o->bytes) || !o->bytes)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --bytes '%s'", optarg);
			have_bytes = true;
			break;
		case 'T':
			if (bench_parse_double(optarg, &o->time_s) || o->time_s <= 0)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --time '%s'", optarg);
			break;
		case 's':
			if (bench_parse_u64(optarg, &o->seed))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --seed '%s'", optarg);
			break;
		case 'j': o->json = true; break;
		case 'n': o->netns = optarg; break;
		case 'l': o->label = optarg; break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); exit(0);
		case O_DEV: o->dev = optarg; break;
		case O_SRC: o->src = optarg; break;
		case O_DSTMAC: o->dst_mac = optarg; break;
		case O_SPORT: o->sport = (uint16_t)parse_u32("sport", optarg, 1, 65535); break;
		case O_RAW: o->raw = true; break;
		case O_RATE:
			if (bench_parse_rate(optarg, &o->rate_bps) || o->rate_bps < 8000)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --rate '%s' (at least 8k)", optarg);
			break;
		case O_SHIFT: o->pacing_shift = parse_u32("pacing-shift", optarg, 1, 31); break;
		case O_MINSEGS: o->min_segs = parse_u32("min-segs", optarg, 1, 65535); break;
		case O_DIV: o->win_divisor = parse_u32("win-divisor", optarg, 1, 255); break;
		case O_CC:
			if (!strcmp(optarg, "reno"))
				o->cc = GSO_CC_RENO;
			else if (!strcmp(optarg, "cubic"))
				o->cc = GSO_CC_CUBIC;
			else if (!strcmp(optarg, "bbr"))
				o->cc = GSO_CC_BBR;
			else
				bench_die(BENCH_EXIT_USAGE, 0, "bad --cc '%s' (reno, cubic or bbr)", optarg);
			break;
		case O_MSS: o->mss = parse_u32("mss", optarg, 64, 65535); break;
		case O_NOSACK: o->no_sack = true; break;
		case O_NOTS: o->no_ts = true; break;
		case O_QUEUE: o->queue = parse_u32("queue", optarg, 0, 65535); break;
		case O_IDLE:
			if (bench_parse_double(optarg, &o->idle_s) || o->idle_s <= 0)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --idle-timeout '%s'", optarg);
			break;
		case O_CHECK: o->check = true; break;
		case O_PROGRESS: o->progress = true; break;
		case O_QUEUES: o->queues = parse_u32("queues", optarg, 1, GSO_PORT_MAX_QUEUES); break;
		case O_STREAMS: o->streams = parse_u32("streams", optarg, 1, 1024); break;
		case O_TXOP: o->txop_us = parse_u32("txop", optarg, 1, 1000000); break;
		case O_TXOP_FRAMES: o->txop_frames = parse_u32("txop-frames", optarg, 1, 65535); break;
		case O_TXOP_SPLIT: o->txop_split = true; break;
		case O_TXOP_RATE:
			/* At least 1 Mbit/s: below, one aggregate of 64 full frames is on the air for a second. */
			if (bench_parse_double(optarg, &o->txop_mbit) || !(o->txop_mbit >= 1 && o->txop_mbit <= 1e6))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --txop-rate '%s' (Mbit/s, 1..1000000)", optarg);
			break;
		case O_LIST:
			for (unsigned m = 0; m < SND_MODE_COUNT; m++)
				printf("%s\n", snd_mode_name(m));
			exit(0);
		default: usage(stderr); exit(BENCH_EXIT_USAGE);
		}
	}
	if (optind != argc || !o->dst || !o->dev) {
		usage(stderr);
		exit(BENCH_EXIT_USAGE);
	}
	if (!have_bytes)
		o->bytes = o->time_s ? UINT64_MAX : DEF_BYTES;
	if (!o->queues)
		o->queues = 1;
	if (!o->streams)
		o->streams = o->queues;
	if (o->streams > 1 && o->queues == 1)
		bench_die(BENCH_EXIT_USAGE, 0, "--streams needs --queues > 1");
	if ((o->txop_frames || o->txop_mbit > 0 || o->txop_split) && !o->txop_us)
		bench_die(BENCH_EXIT_USAGE, 0, "--txop-frames, --txop-rate and --txop-split need --txop");
	if (o->txop_us && (o->mode != SND_MODE_E1000 || o->queues > 1))
		bench_die(BENCH_EXIT_USAGE, 0, "--txop is a mode of the e1000 model: it needs --mode offload-e1000 "
			  "(and one queue)");
}

/* ---- addressing --------------------------------------------------------- */

static int parse_addr(const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	if (inet_pton(AF_INET, s, out) == 1)
		return GSO_L3_IPV4;
	if (inet_pton(AF_INET6, s, out) == 1)
		return GSO_L3_IPV6;
	return -EINVAL;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char tail;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		if (v[i] > 255)
			return -EINVAL;
		mac[i] = (uint8_t)v[i];
	}
	return 0;
}

/* The first address of family l3 on `ifname` (for --dst-mac without --src). */
static int first_addr(const char *ifname, int l3, uint8_t addr[16])
{
	struct ifaddrs *ifa, *i;
	int err = -ENOENT;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i && err; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
			continue;
		memset(addr, 0, 16);
		if (l3 == GSO_L3_IPV4 && i->ifa_addr->sa_family == AF_INET) {
			memcpy(addr, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
			err = 0;
		} else if (l3 == GSO_L3_IPV6 && i->ifa_addr->sa_family == AF_INET6 &&
			   !IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr)) {
			memcpy(addr, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
			err = 0;
		}
	}
	freeifaddrs(ifa);
	return err;
}

/* Explicit MACs (--dst-mac): the route by hand, the kernel asked only for our MAC and MTU. */
static int route_by_hand(const struct opts *o, int l3, const uint8_t dst[16], int ifindex, struct gso_route *rt)
{
	struct ifreq ifr;
	int fd, err = 0;

	rt->ifindex = ifindex;
	rt->l3 = (uint8_t)l3;
	memcpy(rt->dst, dst, 16);
	memcpy(rt->nexthop, dst, 16);
	if (parse_mac(o->dst_mac, rt->dst_mac))
		bench_die(BENCH_EXIT_USAGE, 0, "bad --dst-mac '%s'", o->dst_mac);
	if (!o->src && (err = first_addr(o->dev, l3, rt->src)))
		bench_die(BENCH_EXIT_USAGE, -err, "no IPv%d address on %s (use --src)", l3 == GSO_L3_IPV4 ? 4 : 6,
			  o->dev);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o->dev);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		err = -errno;
	else
		memcpy(rt->src_mac, ifr.ifr_hwaddr.sa_data, 6);
	if (!err && ioctl(fd, SIOCGIFMTU, &ifr) < 0)
		err = -errno;
	else
		rt->mtu = (uint32_t)ifr.ifr_mtu;
	close(fd);
	return err;
}

/* ---- the run -------------------------------------------------------------- */

struct run {
	const struct opts *o;
	struct gso_engine *e;
	struct gso_stream *s;
	struct snd_dev *d;
	struct bench_stream stream;
	uint8_t hdr_bytes[BENCH_HDR_LEN];
	uint64_t total;      /* TCP payload to send, header included; UINT64_MAX: until --time */
	uint64_t written, stop_at, gen_ns;
	bool established, shut, closed, setup_failed;
	int ack_queue;
	char err[256];
};

static struct gso_engine *signal_engine;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag++;
	/* Async-signal-safe: an atomic store and a write(2). */
	gso_engine__stop(signal_engine);
}

/* TCP payload bytes [off, off + len): the bench header, then the stream. */
static void generate(struct run *r, uint64_t off, uint8_t *dst, uint32_t len)
{
	bench_xfer_fill(r->hdr_bytes, r->o->raw ? 0 : BENCH_HDR_LEN, &r->stream, off, dst, len);
}

static void finish_writing(struct run *r)
{
	if (r->shut)
		return;
	r->shut = true;
	gso_stream__shutdown(r->s);
}

/* Write the stream straight into the stream's device buffers until it says "later". */
static void fill(struct run *r)
{
	while (!r->shut) {
		void *p;
		uint32_t room;
		uint64_t t0;

		if (r->written >= r->total || (r->stop_at && gso_evloop_now_ns() >= r->stop_at)) {
			finish_writing(r);
			break;
		}
		if (gso_stream__reserve(r->s, &p, &room))
			break; /* -EAGAIN / -ENOBUFS: GSO_EV_STREAM_WRITABLE comes back */
		if (room > r->total - r->written)
			room = (uint32_t)(r->total - r->written);
		t0 = bench_now_ns();
		generate(r, r->written, p, room);
		r->gen_ns += bench_now_ns() - t0;
		if (gso_stream__commit(r->s, room))
			break;
		r->written += room;
	}
}

static void on_event(void *ctx, const struct gso_engine_event *ev)
{
	struct run *r = ctx;
	int err;

	switch (ev->type) {
	case GSO_EV_STREAM_ESTABLISHED:
		r->established = true;
		r->ack_queue = snd_dev_queue_of(r->d, ev->dev);
		if (r->o->time_s)
			r->stop_at = gso_evloop_now_ns() + (uint64_t)(r->o->time_s * 1e9);
		/* The e1000 model's wire takes a queue the ACKs do not use. */
		err = snd_dev_wire(r->d, r->e, r->ack_queue < 0 ? 0 : (unsigned)r->ack_queue, r->err, sizeof(r->err));
		if (err && err != -ENOENT) {
			r->setup_failed = true;
			gso_engine__stop(r->e);
		}
		break;
	case GSO_EV_STREAM_WRITABLE:
		fill(r);
		break;
	case GSO_EV_STREAM_CLOSED:
		r->closed = true;
		gso_engine__stop(r->e);
		break;
	case GSO_EV_PATH_MTU:
		if (!r->o->quiet)
			fprintf(stderr, "sender: path MTU now %u bytes (%s)\n", ev->mtu,
				ev->mtu_src == GSO_PMTU_SRC_ICMP ? "an ICMP error from the path" : "the interface's MTU changed");
		break;
	default:
		break;
	}
}

/* ---- reporting ---------------------------------------------------------- */

static const char *cc_name(uint32_t cc)
{
	return cc == GSO_CC_RENO ? "reno" : cc == GSO_CC_BBR ? "bbr" : "cubic";
}

static const char *bbr_mode_name(uint32_t m)
{
	static const char *const names[] = { "startup", "drain", "probe_bw", "probe_rtt" };

	return m < sizeof(names) / sizeof(names[0]) ? names[m] : "?";
}

static uint32_t burst_pct(const struct gso_stream_info *st, double p)
{
	uint64_t n = 0, acc = 0;

	for (unsigned i = 0; i < GSO_STREAM_BURST_HIST; i++)
		n += st->burst_hist[i];
	if (!n)
		return 0;
	for (unsigned i = 0; i < GSO_STREAM_BURST_HIST; i++) {
		acc += st->burst_hist[i];
		if ((double)acc >= p * (double)n)
			return i == GSO_STREAM_BURST_HIST - 1 ? st->burst_max : i;
	}
	return st->burst_max;
}

static double stream_seconds(const struct gso_stream_info *st)
{
	uint64_t end = st->t_data_acked ? st->t_data_acked : st->t_end;

	return st->t_estab && end > st->t_estab ? (double)(end - st->t_estab) * 1e-9 : 0;
}

static uint64_t stream_bytes(const struct opts *o, const struct gso_stream_info *st)
{
	uint64_t h = o->raw ? 0 : BENCH_HDR_LEN;

	return st->acked > h ? st->acked - h : 0;
}

/* One progress line; `log`: a line each (for files), else overwritten in place (a terminal). */
static void progress(const struct gso_stream_info *st, uint64_t t0, uint64_t now, uint64_t *last_ns,
		     uint64_t *last_bytes, bool log)
{
	double dt = (double)(now - *last_ns) * 1e-9;
	uint64_t b = st->acked;

	fprintf(stderr, "%s%7.1f s %9.3f Gbit/s  acked %8.1f MB  cwnd %6u  srtt %6.0f us  retrans %8" PRIu64 "  ",
		log ? "" : "\r", (double)(now - t0) * 1e-9, dt > 0 ? (double)(b - *last_bytes) * 8e-9 / dt : 0,
		(double)b * 1e-6, st->cwnd, (double)st->srtt_ns * 1e-3, st->retrans_segs);
	if (log) {
		fprintf(stderr, "pacing %.3f Gbit/s  rto %" PRIu64, st->pacing_rate == GSO_RATE_UNPACED ? 0 :
			(double)st->pacing_rate * 8e-9, st->rto);
		if (st->bbr.sz)
			fprintf(stderr, "  bbr %s bw %.3f Gbit/s min_rtt %.0f us pacing_gain %.2f",
				bbr_mode_name(st->bbr.mode), (double)st->bbr.bw * 8e-9,
				(double)st->bbr.min_rtt_ns * 1e-3, (double)st->bbr.pacing_gain / GSO_BBR_UNIT);
		fprintf(stderr, "  devq %.0f KB shift %u", (double)st->dev_queue_limit * 1e-3, st->burst_shift);
		if (st->dev_aggr_interval_ns)
			fprintf(stderr, " aggr %.2f ms x %.0f KB%s", (double)st->dev_aggr_interval_ns * 1e-6,
				(double)st->dev_aggr_bytes * 1e-3, st->dev_aggr_adapted ? "" : " (fixed shift)");
		fputc('\n', stderr);
	}
	*last_ns = now;
	*last_bytes = b;
}

struct report_in {
	const struct opts *o;
	const struct run *r;
	const struct gso_stream_info *st;
	const struct gso_engine_stats *es;
	const struct gso_evloop_stats *ls;
	const struct gso_dev_stats *ds;
	const struct gso_steer_stats *ss; /* NULL: no steering program */
	const struct gso_e1000_stats *e1000; /* NULL: the e1000 model did not run */
	const struct gso_route *rt;
	const struct bench_cpu *cpu;
	bool umem_ok;
	const char *status;
	struct gso_dev_stats open_ds; /* the transmit device before the engine closed it */
};

/*
 * The e1000 model's counters, flat (the README's rule for the sender's
 * line): with --txop, its aggregates (mean size, mean interval between them).
 */
static void report_e1000(struct bench_json *j, const struct opts *o, const struct gso_e1000_stats *e)
{
	bench_json_u64(j, "e1000_packets", e->packets);
	bench_json_u64(j, "e1000_tso_packets", e->tso_packets);
	bench_json_u64(j, "e1000_frames", e->frames);
	bench_json_u64(j, "e1000_wire_full", e->wire_full);
	bench_json_dbl(j, "e1000_dev_cpu_s", (double)e->dev_cpu_ns * 1e-9);
	bench_json_bool(j, "txop", o->txop_us != 0);
	if (!o->txop_us)
		return;
	bench_json_u64(j, "txop_us", o->txop_us);
	bench_json_u64(j, "txop_frames_limit", o->txop_frames ? o->txop_frames : 64); /* <gso/e1000.h>'s default */
	bench_json_dbl(j, "txop_rate_mbit", o->txop_mbit);
	bench_json_bool(j, "txop_split", o->txop_split);
	bench_json_u64(j, "txops", e->txops);
	bench_json_u64(j, "txop_empty", e->txop_empty);
	bench_json_u64(j, "txop_full", e->txop_full);
	bench_json_dbl(j, "txop_frames_mean", e->txops ? (double)e->frames / (double)e->txops : 0);
	bench_json_dbl(j, "txop_bytes_mean", e->txops ? (double)e->txop_bytes / (double)e->txops : 0);
	bench_json_u64(j, "txop_frames_max", e->txop_frames_max);
	bench_json_u64(j, "txop_bytes_max", e->txop_bytes_max);
	bench_json_dbl(j, "txop_interval_mean_us",
		       e->txops > 1 ? (double)e->txop_span_ns * 1e-3 / (double)(e->txops - 1) : 0);
	bench_json_dbl(j, "txop_airtime_s", (double)e->txop_airtime_ns * 1e-9);
	bench_json_dbl(j, "txop_late_mean_us", e->txops + e->txop_empty ?
		       (double)e->txop_late_ns * 1e-3 / (double)(e->txops + e->txop_empty) : 0);
	bench_json_dbl(j, "txop_late_max_us", (double)e->txop_late_max_ns * 1e-3);
}

static void report(const struct report_in *in)
{
	const struct gso_stream_info *st = in->st;
	const struct opts *o = in->o;
	struct bench_json j;
	double secs = stream_seconds(st), gb = (double)stream_bytes(o, st) * 1e-9, cpu_s = in->cpu->user + in->cpu->sys;
	uint64_t hist[8] = { 0 };

	for (unsigned i = 1; i < GSO_STREAM_BURST_HIST; i++) {
		unsigned b = 0;

		while (b < 7 && (2u << b) <= i)
			b++;
		hist[b] += st->burst_hist[i];
	}
	bench_json_begin(&j, stdout);
	bench_json_str(&j, "tool", "sender");
	bench_json_str(&j, "mode", snd_mode_name((unsigned)o->mode));
	if (o->label)
		bench_json_str(&j, "label", o->label);
	bench_json_str(&j, "status", in->status);
	if (st->err)
		bench_json_str(&j, "error", strerror(-st->err));
	bench_json_str(&j, "device", in->r->d->desc);
	bench_json_i64(&j, "ack_queue", in->r->ack_queue);
	bench_json_i64(&j, "wire_queue", in->r->d->wire_queue);
	bench_json_bool(&j, "nexthop_resolved", !o->dst_mac);
	bench_json_u64(&j, "sport", o->sport);
	bench_json_u64(&j, "dport", o->port);
	bench_json_u64(&j, "seed", o->seed);
	bench_json_u64(&j, "bytes", stream_bytes(o, st));
	bench_json_dbl(&j, "seconds", secs);
	bench_json_dbl(&j, "goodput_gbps", secs > 0 ? (double)stream_bytes(o, st) * 8 / secs / 1e9 : 0);
	bench_json_dbl(&j, "cpu_s", cpu_s);
	bench_json_dbl(&j, "cpu_user_s", in->cpu->user);
	bench_json_dbl(&j, "cpu_sys_s", in->cpu->sys);
	bench_json_dbl(&j, "cpu_s_per_gb", gb > 0 ? cpu_s / gb : 0);
	bench_json_dbl(&j, "gen_cpu_s", (double)in->r->gen_ns * 1e-9);
	bench_json_str(&j, "cc", cc_name(o->cc));
	bench_json_dbl(&j, "delivery_rate_gbps_end", (double)st->delivery_rate * 8e-9);
	bench_json_u64(&j, "app_limited_marks", st->app_limited_marks);
	if (st->bbr.sz) {
		/* BBR's model at the end (as ss -i shows bbr:(bw,mrtt,pacing_gain,cwnd_gain)). */
		bench_json_obj(&j, "bbr");
		bench_json_str(&j, "mode", bbr_mode_name(st->bbr.mode));
		bench_json_dbl(&j, "bw_gbps", (double)st->bbr.bw * 8e-9);
		bench_json_dbl(&j, "min_rtt_us", (double)st->bbr.min_rtt_ns * 1e-3);
		bench_json_dbl(&j, "pacing_gain", (double)st->bbr.pacing_gain / GSO_BBR_UNIT);
		bench_json_dbl(&j, "cwnd_gain", (double)st->bbr.cwnd_gain / GSO_BBR_UNIT);
		bench_json_u64(&j, "cycle_idx", st->bbr.cycle_idx);
		bench_json_bool(&j, "full_bw_reached", st->bbr.full_bw_reached);
		bench_json_u64(&j, "rounds", st->bbr.rounds);
		bench_json_u64(&j, "probe_rtts", st->bbr.probe_rtts);
		bench_json_u64(&j, "extra_acked_segs", st->bbr.extra_acked);
		bench_json_u64(&j, "target_cwnd", st->bbr.target_cwnd);
		bench_json_close(&j);
	}
	bench_json_u64(&j, "mss", st->mss);
	bench_json_u64(&j, "path_mtu", st->path_mtu);
	bench_json_u64(&j, "pmtu_changes", st->pmtu_changes);
	bench_json_u64(&j, "pmtu_lost_segs", st->pmtu_lost_segs);
	bench_json_u64(&j, "link_mtu", in->es->link_mtu);
	bench_json_u64(&j, "icmp_pmtu", in->es->icmp_pmtu);
	bench_json_u64(&j, "icmp_stale", in->es->icmp_stale);
	bench_json_u64(&j, "icmp_forged", in->es->icmp_forged);
	bench_json_u64(&j, "icmp_bad", in->es->icmp_bad);
	bench_json_u64(&j, "icmp_kernel", in->es->icmp_kernel);
	bench_json_u64(&j, "hdr_len", st->hdr_len);
	bench_json_bool(&j, "sack", st->sack);
	bench_json_bool(&j, "timestamps", st->timestamps);
	bench_json_u64(&j, "super_segments", st->supers);
	bench_json_u64(&j, "segments", st->segs);
	bench_json_dbl(&j, "burst_mean_segs", st->supers ? (double)st->segs / (double)st->supers : 0);
	bench_json_u64(&j, "burst_p50_segs", burst_pct(st, 0.5));
	bench_json_u64(&j, "burst_p99_segs", burst_pct(st, 0.99));
	bench_json_u64(&j, "burst_max_segs", st->burst_max);
	bench_json_u64_array(&j, "burst_hist_log2", hist, 8);
	bench_json_u64(&j, "retrans", st->retrans_segs);
	bench_json_u64(&j, "retrans_supers", st->retrans_supers);
	bench_json_u64(&j, "rto", st->rto);
	bench_json_u64(&j, "fast_recoveries", st->fast_recov);
	bench_json_u64(&j, "zero_window_probes", st->probes);
	bench_json_u64(&j, "syn_retries", st->syn_retries);
	bench_json_u64(&j, "acks", st->acks);
	bench_json_u64(&j, "rx_other", in->es->rx_other);
	if (in->ss) {
		/* Where the steering program sent what arrived, and why it passed the rest. */
		bench_json_str(&j, "steer_xdp_mode",
			       in->ss->xdp_mode == GSO_STEER_XDP_SKB ? "generic" : "native");
		bench_json_u64(&j, "steer_seen", in->ss->seen);
		bench_json_u64(&j, "steer_steered", in->ss->steered);
		bench_json_u64(&j, "steer_no_socket", in->ss->no_socket);
		bench_json_u64(&j, "steer_passed", in->ss->passed);
		bench_json_u64(&j, "steer_other_mac", in->ss->other_mac);
		bench_json_u64(&j, "steer_vlan", in->ss->vlan);
		bench_json_u64(&j, "steer_bad_hdr", in->ss->bad_hdr);
	}
	bench_json_u64(&j, "rx_bad_csum", in->es->rx_bad_csum);
	bench_json_u64(&j, "rx_csum_partial", in->es->rx_csum_partial);
	bench_json_u64(&j, "rx_bad", st->rx_bad);
	bench_json_u64(&j, "bad_acks", st->bad_acks);
	bench_json_u64(&j, "rx_rst_ignored", st->rx_rst_ignored);
	bench_json_u64(&j, "rx_rst_challenged", st->rx_rst_challenged);
	bench_json_u64(&j, "rx_syn_challenged", st->rx_syn_challenged);
	bench_json_u64(&j, "rx_old_acks", st->rx_old_acks);
	bench_json_u64(&j, "rx_out_of_window", st->rx_out_of_window);
	bench_json_u64(&j, "challenge_acks", st->challenge_acks);
	bench_json_u64(&j, "challenge_limited", st->challenge_limited);
	bench_json_u64(&j, "dupacks", st->dupacks);
	bench_json_u64(&j, "sacked_segs", st->sacked_segs);
	bench_json_u64(&j, "lost_segs", st->lost_segs);
	bench_json_u64(&j, "cwnd_max", st->cwnd_max);
	bench_json_u64(&j, "cwnd_end", st->cwnd);
	bench_json_u64(&j, "ssthresh_end", st->ssthresh);
	bench_json_u64(&j, "rtt_samples", st->rtt_samples);
	bench_json_dbl(&j, "pacing_rate_gbps_end",
		       st->pacing_rate == GSO_RATE_UNPACED ? 0 : (double)st->pacing_rate * 8e-9);
	bench_json_dbl(&j, "srtt_us", (double)st->srtt_ns * 1e-3);
	bench_json_dbl(&j, "min_rtt_us", (double)st->min_rtt_ns * 1e-3);
	bench_json_u64(&j, "wnd_min", st->min_wnd);
	bench_json_u64(&j, "wnd_max", st->max_wnd);
	bench_json_u64(&j, "zero_window_acks", st->zero_wnd_acks);
	bench_json_u64(&j, "wnd_checks", st->wnd_checks);
	bench_json_u64(&j, "wnd_violations", st->wnd_violations);
	bench_json_i64(&j, "max_over_wnd", st->max_over_wnd);
	bench_json_u64(&j, "max_outstanding", st->max_outstanding);
	bench_json_u64(&j, "backpressure", st->backpressure + in->es->backpressure);
	bench_json_u64(&j, "umem_waits", st->umem_waits);
	bench_json_u64(&j, "tsq_waits", st->tsq_waits);
	/* What the engine learned of the device's aggregation, and the sizing in force at the end. */
	bench_json_dbl(&j, "dev_aggr_interval_us", (double)st->dev_aggr_interval_ns * 1e-3);
	bench_json_u64(&j, "dev_aggr_bytes", st->dev_aggr_bytes);
	bench_json_u64(&j, "dev_queue_limit", st->dev_queue_limit);
	bench_json_u64(&j, "burst_shift", st->burst_shift);
	bench_json_bool(&j, "dev_aggr_adapted", st->dev_aggr_adapted);
	bench_json_u64(&j, "burst_descs", st->burst_descs);
	bench_json_u64(&j, "link_down", in->es->link_down);
	bench_json_u64(&j, "link_up", in->es->link_up);
	bench_json_dbl(&j, "link_down_s", (double)in->es->link_down_ns * 1e-9);
	bench_json_u64(&j, "tx_frames", in->ds->tx_frames);
	bench_json_u64(&j, "tx_kicks", in->ds->kicks);
	/* Descriptors posted, completed and still out at the end: a completion the kernel never gave shows here. */
	bench_json_u64(&j, "tx_descs", in->ds->tx_descs);
	bench_json_u64(&j, "tx_completed", in->ds->tx_completed);
	/* Before the close reclaimed them: descriptors still out when the stream ended (or failed). */
	bench_json_u64(&j, "tx_inflight_descs_end", in->open_ds.inflight_descs);
	bench_json_u64(&j, "tx_completed_before_close", in->open_ds.tx_completed);
	bench_json_u64(&j, "tx_kernel_invalid", in->open_ds.kernel_invalid);
	bench_json_u64(&j, "tx_lost_completions", in->es->tx_lost_completions);
	bench_json_u64(&j, "tx_csum_offload", in->ds->tx_csum_offload);
	bench_json_u64(&j, "tx_sg_frames", in->ds->tx_sg_frames);
	bench_json_u64(&j, "offloaded", st->offloaded);
	bench_json_u64(&j, "software_segmented", st->software);
	const char *loop = gso_evloop_backend_name(in->ls->backend);
	bench_json_str(&j, "evloop", loop ? loop : "unknown");
	bench_json_u64(&j, "evloop_sleeps", in->ls->sleeps);
	bench_json_u64(&j, "evloop_spins", in->ls->spins);
	bench_json_dbl(&j, "wake_late_p50_us", (double)in->ls->late_sleep_p50_ns * 1e-3);
	bench_json_dbl(&j, "wake_late_p99_us", (double)in->ls->late_sleep_p99_ns * 1e-3);
	bench_json_dbl(&j, "wake_late_max_us", (double)in->ls->late_sleep_max_ns * 1e-3);
	if (o->rate_bps > 0) {
		/* What the rate cap asked for and what went out (payload + headers of what was acknowledged). */
		double wire = secs > 0 && st->mss ?
				      (double)st->acked * (1.0 + (double)st->hdr_len / st->mss) * 8 / secs : 0;

		bench_json_dbl(&j, "rate_cap_gbps", o->rate_bps * 1e-9);
		bench_json_dbl(&j, "wire_gbps", wire * 1e-9);
	}
	if (in->e1000)
		report_e1000(&j, o, in->e1000);
	bench_json_u64(&j, "umem_chunks", in->ds->chunks_total);
	bench_json_u64(&j, "umem_free_at_end", in->ds->chunks_free);
	bench_json_bool(&j, "umem_balanced", in->umem_ok);
	bench_json_end(&j);
}

/* ---- main ---------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct opts o;
	struct snd_dev d;
	struct run r;
	struct gso_route rt;
	struct bench_cpu c0, c1, cpu;
	struct gso_dev_stats ds;
	char err[256];
	uint8_t dst[16], src[16];
	int e, l3, ifindex;
	uint64_t now, t0, last_print, last_bytes = 0;
	bool tty, ok, umem_ok, have_sts, have_e1000;
	struct gso_e1000_stats e1s = { .sz = sizeof(e1s) };
	const char *status;

	parse_args(argc, argv, &o);
	if (o.netns && (e = bench_netns_enter(o.netns)))
		bench_die(BENCH_EXIT_USAGE, -e, "netns %s", o.netns);
	signal(SIGPIPE, SIG_IGN);

	ifindex = (int)if_nametoindex(o.dev);
	if (!ifindex)
		bench_die(BENCH_EXIT_USAGE, errno, "interface %s", o.dev);
	l3 = parse_addr(o.dst, dst);
	if (l3 < 0)
		bench_die(BENCH_EXIT_USAGE, 0, "bad --dst '%s'", o.dst);
	if (o.src && parse_addr(o.src, src) != l3)
		bench_die(BENCH_EXIT_USAGE, 0, "bad --src '%s' (same family as --dst)", o.src);
	memset(&rt, 0, sizeof(rt));
	rt.sz = sizeof(rt);
	if (o.dst_mac)
		e = route_by_hand(&o, l3, dst, ifindex, &rt);
	else
		e = gso_route__lookup(l3, dst, ifindex, 3000, &rt);
	if (e)
		bench_die(BENCH_EXIT_USAGE, -e, "no next hop for %s on %s%s", o.dst, o.dev,
			  o.dst_mac ? "" : " (the kernel could not resolve it; --dst-mac sets it)");
	if (o.src)
		memcpy(rt.src, src, 16);
	/* Our port, chosen once: the JSON names it so that a capture can be matched. */
	if (!o.sport)
		o.sport = (uint16_t)(32768 + getpid() % 28000);
	if (o.queues > 1)
		return sender_port_run(&(struct sender_port_args){
			.mode = o.mode, .ifindex = ifindex, .queues = o.queues, .streams = o.streams, .route = &rt,
			.sport = o.sport, .dport = o.port,
			.bytes = o.bytes, .seed = o.seed, .raw = o.raw, .time_s = o.time_s, .json = o.json,
			.quiet = o.quiet, .label = o.label,
			.so = { .sz = sizeof(struct gso_stream_opts), .route = &rt, .cc_algo = o.cc, .mss = (uint32_t)o.mss,
				.max_rate = (uint64_t)(o.rate_bps / 8), .pacing_shift = o.pacing_shift,
				.min_segs = o.min_segs, .win_divisor = o.win_divisor,
				.idle_ns = (uint64_t)(o.idle_s * 1e9),
				.flags = (o.no_sack ? GSO_STREAM_F_NO_SACK : 0) | (o.no_ts ? GSO_STREAM_F_NO_TS : 0) |
					 (o.check ? GSO_STREAM_F_CHECK : 0) } });

	memset(&r, 0, sizeof(r));
	r.o = &o;
	r.d = &d;
	r.ack_queue = -1;
	r.total = o.bytes == UINT64_MAX ? UINT64_MAX : o.bytes + (o.raw ? 0 : BENCH_HDR_LEN);
	bench_stream_init(&r.stream, o.seed);
	if (!o.raw) {
		struct bench_hdr h = { .flags = 0, .seed = o.seed,
				       .total = o.bytes == UINT64_MAX || o.time_s ? 0 : o.bytes };
		bench_hdr_encode(&h, r.hdr_bytes);
	}
	{
		GSO_OPTS(gso_engine_opts, eo, .max_flows = 4, .on_event = on_event, .ctx = &r);

		e = snd_dev_open(&d, o.mode, ifindex, o.queue, &eo, &r.e, err, sizeof(err));
		if (e == -EOPNOTSUPP)
			bench_die(BENCH_EXIT_SKIP, 0, "mode %s not available here: %s", snd_mode_name((unsigned)o.mode), err);
		if (e)
			bench_die(BENCH_EXIT_USAGE, 0, "mode %s: %s", snd_mode_name((unsigned)o.mode), err);
		/* Taken when the model opens its wire, after the SYN-ACK. */
		d.txop_us = o.txop_us;
		d.txop_frames = o.txop_frames;
		d.txop_rate = (uint64_t)(o.txop_mbit * 1e6 / 8);
		d.txop_split = o.txop_split;
	}
	signal_engine = r.e;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	tty = o.progress || (!o.quiet && isatty(STDERR_FILENO));
	bench_cpu_now(&c0);
	t0 = last_print = gso_evloop_now_ns();
	{
		GSO_OPTS(gso_stream_opts, so, .route = &rt, .sport = o.sport,
			 .dport = o.port, .cc_algo = o.cc, .mss = (uint32_t)o.mss, .max_rate = (uint64_t)(o.rate_bps / 8),
			 .pacing_shift = o.pacing_shift, .min_segs = o.min_segs, .win_divisor = o.win_divisor,
			 .tx_flags = d.tx_flags, .idle_ns = (uint64_t)(o.idle_s * 1e9),
			 .flags = (o.no_sack ? GSO_STREAM_F_NO_SACK : 0) | (o.no_ts ? GSO_STREAM_F_NO_TS : 0) |
				  (o.check ? GSO_STREAM_F_CHECK : 0));
		e = gso_stream__connect(&r.s, r.e, &so);
		if (e)
			bench_die(BENCH_EXIT_USAGE, -e, "connecting");
	}

	while (!r.closed && !r.setup_failed) {
		uint64_t until;

		now = gso_evloop_now_ns();
		if (stop_flag > 1)
			break;
		if (stop_flag == 1 && r.established)
			finish_writing(&r); /* Ctrl-C: finish what is queued, then FIN */
		if (r.stop_at && now >= r.stop_at)
			finish_writing(&r);
		until = now + 500000000ull;
		if (r.stop_at && !r.shut && r.stop_at < until)
			until = r.stop_at;
		e = gso_engine__run(r.e, until);
		if (e == -ENODEV && !r.closed)
			break;
		if (tty && gso_evloop_now_ns() - last_print > 500000000ull) {
			GSO_OPTS(gso_stream_info, si);
			gso_stream__info(r.s, &si);
			progress(&si, t0, gso_evloop_now_ns(), &last_print, &last_bytes, o.progress);
		}
	}
	bench_cpu_now(&c1);
	bench_cpu_diff(&c0, &c1, &cpu);

	GSO_OPTS(gso_stream_info, si);
	GSO_OPTS(gso_engine_stats, es);
	GSO_OPTS(gso_evloop_stats, ls);
	gso_stream__info(r.s, &si);
	gso_engine__stats(r.e, &es);
	gso_engine__evloop_stats(r.e, &ls);
	GSO_OPTS(gso_steer_stats, sts);
	have_sts = d.steer && !gso_steer__stats(d.steer, &sts);
	if (tty) {
		progress(&si, t0, gso_evloop_now_ns(), &last_print, &last_bytes, o.progress);
		if (!o.progress)
			fputc('\n', stderr);
	}
	GSO_OPTS(gso_dev_stats, open_ds);
	gso_dev__stats(gso_engine__dev(r.e), &open_ds);
	ok = si.state == GSO_STREAM_DONE;
	status = ok ? "ok" : r.setup_failed ? "setting up the transmit device" : si.why ? si.why : "interrupted";
	gso_stream__close(r.s);
	gso_engine__close(r.e);
	umem_ok = snd_dev_umem_balanced(&d, r.e, &ds);
	have_e1000 = !snd_dev_e1000_stats(&d, &e1s);
	if (r.setup_failed)
		fprintf(stderr, "sender: %s\n", r.err);
	else if (!ok)
		/* The path MTU too: a path that drops large frames without telling looks like a silent peer. */
		fprintf(stderr, "sender: %s: %s (path MTU %u, MSS %u, interface MTU %u)\n", status,
			si.err ? strerror(-si.err) : "signal", si.path_mtu, si.mss, es.link_mtu);
	if (o.json) {
		struct report_in in = { .o = &o, .r = &r, .st = &si, .es = &es, .ls = &ls, .ds = &ds,
					.ss = have_sts ? &sts : NULL, .e1000 = have_e1000 ? &e1s : NULL, .rt = &rt,
					.cpu = &cpu, .umem_ok = umem_ok, .status = status, .open_ds = open_ds };
		report(&in);
	} else if (!o.quiet) {
		fprintf(stderr, "sender: %s %s: %.3f Gbit/s, %" PRIu64 " bytes in %.3f s, %.3f CPU-s/GB, "
			"retrans %" PRIu64 ", UMEM %s\n", snd_mode_name((unsigned)o.mode), ok ? "ok" : "FAILED",
			stream_seconds(&si) > 0 ? (double)stream_bytes(&o, &si) * 8e-9 / stream_seconds(&si) : 0,
			stream_bytes(&o, &si), stream_seconds(&si),
			stream_bytes(&o, &si) ? (cpu.user + cpu.sys) / ((double)stream_bytes(&o, &si) * 1e-9) : 0,
			si.retrans_segs, umem_ok ? "balanced" : "NOT balanced");
	}
	signal_engine = NULL;
	gso_engine__destroy(r.e);
	snd_dev_destroy(&d);
	if (r.setup_failed)
		return BENCH_EXIT_USAGE;
	return ok && umem_ok ? BENCH_EXIT_OK : BENCH_EXIT_FAIL;
}
