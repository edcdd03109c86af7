/*
 * sender: a minimal TCP sender over libgso.  It opens a connection to a
 * stock Linux TCP receiver (bench/receiver) from user space, through one
 * of the library's transmit backends (--mode), and sends the bench stream
 * (header + seeded bytes the receiver verifies, bench/common/proto.h).
 *
 * Everything on the wire is built by the library: headers from templates,
 * super-segments segmented in software or by a device, ACKs received on an
 * AF_XDP socket to which an XDP program steers them (so the kernel, which
 * knows nothing of this connection, never sees them and never answers with
 * a RST).  The TCP is in bench/common/sender_tcp.c, the devices in
 * sender_dev.c.
 *
 * Options follow the bench sender contract (bench/common/README.md, the
 * same as bench/kernel_sender) plus --mode and the pacing settings.
 * Exit: 0 the stream was sent, acknowledged and the FIN too; 1 the
 * transfer failed; 2 usage or setup error; 77 the mode is not available
 * here.  With --json one JSON object on stdout (keys in report()).
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

#include <gso/evloop.h>
#include <gso/tso.h>
#include <gso/xdp.h>

#include "cpu.h"
#include "json.h"
#include "proto.h"
#include "sender_dev.h"
#include "sender_net.h"
#include "sender_tcp.h"
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
	uint32_t queue, pacing_shift, min_segs, win_divisor, cc;
	bool json, raw, no_sack, no_ts, check, quiet;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag++;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sender --dev IFNAME --dst ADDR [options]\n"
		"A TCP sender over libgso: active open, the bench stream, SACK/NewReno recovery,\n"
		"Reno/CUBIC, pacing, FIN.  ACKs come back on an AF_XDP socket (XDP steering).\n\n"
		"  -m, --mode MODE         software | csum | multibuf | offload-e1000 | offload-vnet | auto\n"
		"                          (default software; --list-modes prints them):\n"
		"                            software       AF_XDP, whole frames, software checksums\n"
		"                            csum           AF_XDP, whole frames, checksum metadata\n"
		"                            multibuf       AF_XDP, header + payload reference frames\n"
		"                            offload-vnet   AF_PACKET + virtio_net_hdr: the kernel/NIC segments\n"
		"                            offload-e1000  e1000 TSO device model (needs 2 queues)\n"
		"                            auto           offload-vnet (auto) if the interface does TSO,\n"
		"                                           else AF_XDP with the library's defaults\n"
		"      --dev IFNAME        interface to send on (required)\n"
		"  -d, --dst ADDR          receiver address, IPv4 or IPv6 (required)\n"
		"      --src ADDR          our address (default: the interface's first)\n"
		"      --dst-mac MAC       next hop (default: the kernel's neighbour table, IPv4)\n"
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
		"      --cc reno|cubic     congestion control (default cubic)\n"
		"      --mss N             cap the segment size\n"
		"      --no-sack           do not offer SACK (NewReno recovery)\n"
		"      --no-ts             do not offer timestamps\n"
		"      --queue Q           AF_XDP queue (default 0)\n"
		"      --idle-timeout S    fail after S s without hearing from the peer (default 10)\n"
		"      --check             verify the flow queue's accounting after every step\n"
		"  -j, --json              one JSON object on stdout\n"
		"  -n, --netns NAME        run in network namespace NAME\n"
		"  -l, --label TEXT        copied into the result\n"
		"  -q, --quiet             no progress line\n"
		"      --list-modes        print the modes, one per line\n"
		"  -h, --help\n\n"
		"Exit: 0 sent and acknowledged, 1 transfer failed, 2 usage or setup error,\n"
		"77 mode not available here.\n",
		DEF_PORT);
}

enum { O_DEV = 256, O_SRC, O_DSTMAC, O_SPORT, O_RAW, O_RATE, O_SHIFT, O_MINSEGS, O_DIV, O_CC, O_MSS,
       O_NOSACK, O_NOTS, O_QUEUE, O_IDLE, O_CHECK, O_LIST };

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
			else
				bench_die(BENCH_EXIT_USAGE, 0, "bad --cc '%s' (reno or cubic)", optarg);
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
}

/* ---- reporting ---------------------------------------------------------- */

static uint32_t burst_pct(const struct snd_stats *st, double p)
{
	uint64_t n = 0, acc = 0;

	for (unsigned i = 0; i < SND_BURST_HIST; i++)
		n += st->burst_hist[i];
	if (!n)
		return 0;
	for (unsigned i = 0; i < SND_BURST_HIST; i++) {
		acc += st->burst_hist[i];
		if ((double)acc >= p * (double)n)
			return i == SND_BURST_HIST - 1 ? st->burst_max : i;
	}
	return st->burst_max;
}

static double stream_seconds(const struct snd *s)
{
	uint64_t end = s->st.t_data_acked ? s->st.t_data_acked : s->st.t_end;

	return s->st.t_estab && end > s->st.t_estab ? (double)(end - s->st.t_estab) * 1e-9 : 0;
}

static uint64_t stream_bytes(const struct snd *s)
{
	uint64_t h = s->c.raw ? 0 : BENCH_HDR_LEN;

	return s->st.acked_bytes > h ? s->st.acked_bytes - h : 0;
}

static void progress(const struct snd *s, uint64_t now, uint64_t *last_ns, uint64_t *last_bytes)
{
	double dt = (double)(now - *last_ns) * 1e-9;
	uint64_t b = s->st.acked_bytes;

	fprintf(stderr, "\r%7.1f s %9.3f Gbit/s  acked %8.1f MB  cwnd %6u  srtt %6.0f us  retrans %8" PRIu64 "  ",
		(double)(now - s->st.t_start) * 1e-9, dt > 0 ? (double)(b - *last_bytes) * 8e-9 / dt : 0,
		(double)b * 1e-6, snd_cwnd(s), (double)snd_srtt_ns(s) * 1e-3, s->st.retrans_segs);
	*last_ns = now;
	*last_bytes = b;
}

static void report(const struct opts *o, const struct snd *s, const struct snd_dev *d,
		   const struct bench_cpu *cpu, const struct gso_dev_stats *ds, bool umem_ok,
		   const struct gso_evloop_stats *ls, const char *status)
{
	struct bench_json j;
	const struct snd_stats *st = &s->st;
	double secs = stream_seconds(s), gb = (double)stream_bytes(s) * 1e-9, cpu_s = cpu->user + cpu->sys;
	uint64_t hist[8] = { 0 };

	for (unsigned i = 1; i < SND_BURST_HIST; i++) {
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
	bench_json_str(&j, "status", status);
	if (st->fail)
		bench_json_str(&j, "error", strerror(-st->fail_err));
	bench_json_str(&j, "device", d->desc);
	bench_json_i64(&j, "ack_queue", st->ack_queue);
	bench_json_i64(&j, "wire_queue", d->wire_queue);
	bench_json_u64(&j, "seed", o->seed);
	bench_json_u64(&j, "bytes", stream_bytes(s));
	bench_json_dbl(&j, "seconds", secs);
	bench_json_dbl(&j, "goodput_gbps", secs > 0 ? (double)stream_bytes(s) * 8 / secs / 1e9 : 0);
	bench_json_dbl(&j, "cpu_s", cpu_s);
	bench_json_dbl(&j, "cpu_user_s", cpu->user);
	bench_json_dbl(&j, "cpu_sys_s", cpu->sys);
	bench_json_dbl(&j, "cpu_s_per_gb", gb > 0 ? cpu_s / gb : 0);
	bench_json_dbl(&j, "gen_cpu_s", (double)st->gen_ns * 1e-9);
	bench_json_u64(&j, "mss", s->mss);
	bench_json_u64(&j, "hdr_len", s->hdr_len);
	bench_json_bool(&j, "sack", s->sack_ok);
	bench_json_bool(&j, "timestamps", s->ts_ok);
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
	bench_json_u64(&j, "acks", st->acks);
	bench_json_u64(&j, "rx_other", st->rx_other);
	bench_json_u64(&j, "rx_bad", st->rx_bad);
	bench_json_u64(&j, "dupacks", st->dupacks);
	bench_json_u64(&j, "sacked_segs", st->sacked_segs);
	bench_json_u64(&j, "lost_segs", st->lost_segs);
	bench_json_u64(&j, "cwnd_max", st->max_cwnd);
	bench_json_u64(&j, "cwnd_end", st->cc_end.cwnd);
	bench_json_u64(&j, "ssthresh_end", st->cc_end.ssthresh == UINT32_MAX ? 0 : st->cc_end.ssthresh);
	bench_json_u64(&j, "rtt_samples", st->rtt_samples);
	bench_json_dbl(&j, "pacing_rate_gbps_end",
		       st->cc_end.pacing_rate == GSO_RATE_UNPACED ? 0 : (double)st->cc_end.pacing_rate * 8e-9);
	bench_json_dbl(&j, "srtt_us", (double)snd_srtt_ns(s) * 1e-3);
	bench_json_dbl(&j, "min_rtt_us", (double)snd_min_rtt_ns(s) * 1e-3);
	bench_json_u64(&j, "wnd_min", st->min_wnd == UINT32_MAX ? 0 : st->min_wnd);
	bench_json_u64(&j, "wnd_max", st->max_wnd);
	bench_json_u64(&j, "zero_window_acks", st->zero_wnd);
	bench_json_u64(&j, "wnd_checks", st->wnd_checks);
	bench_json_u64(&j, "wnd_violations", st->wnd_violations);
	bench_json_i64(&j, "max_over_wnd", st->max_over_wnd);
	bench_json_u64(&j, "max_outstanding", st->max_outstanding);
	bench_json_u64(&j, "backpressure", st->backpressure);
	bench_json_u64(&j, "umem_waits", st->umem_waits);
	bench_json_u64(&j, "tsq_waits", st->tsq_waits);
	bench_json_u64(&j, "burst_descs", s->burst_descs);
	bench_json_u64(&j, "tx_frames", ds->tx_frames);
	bench_json_u64(&j, "tx_kicks", ds->kicks);
	bench_json_u64(&j, "tx_csum_offload", ds->tx_csum_offload);
	bench_json_u64(&j, "tx_sg_frames", ds->tx_sg_frames);
	bench_json_u64(&j, "offloaded", s->tso.offloaded);
	bench_json_u64(&j, "software_segmented", s->tso.software);
	bench_json_str(&j, "evloop", gso_evloop_backend_name(ls->backend));
	bench_json_u64(&j, "evloop_sleeps", ls->sleeps);
	bench_json_u64(&j, "evloop_spins", ls->spins);
	bench_json_dbl(&j, "wake_late_p50_us", (double)ls->late_sleep_p50_ns * 1e-3);
	bench_json_dbl(&j, "wake_late_p99_us", (double)ls->late_sleep_p99_ns * 1e-3);
	bench_json_dbl(&j, "wake_late_max_us", (double)ls->late_sleep_max_ns * 1e-3);
	if (o->rate_bps > 0) {
		/* What the rate cap asked for and what went out (payload + headers of what was acknowledged). */
		double wire = secs > 0 ? (double)s->st.acked_bytes * (1.0 + (double)s->hdr_len / s->mss) * 8 / secs : 0;

		bench_json_dbl(&j, "rate_cap_gbps", o->rate_bps * 1e-9);
		bench_json_dbl(&j, "wire_gbps", wire * 1e-9);
	}
	bench_json_u64(&j, "umem_chunks", ds->chunks_total);
	bench_json_u64(&j, "umem_free_at_end", ds->chunks_free);
	bench_json_bool(&j, "umem_balanced", umem_ok);
	bench_json_end(&j);
}

/* ---- main ---------------------------------------------------------------- */

static int parse_addr(const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	if (inet_pton(AF_INET, s, out) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, out) == 1)
		return 6;
	return -EINVAL;
}

struct estab_ctx {
	struct snd_dev *d;
	struct gso_evloop *loop;
	char err[256];
};

/* The SYN-ACK is in: the e1000 model's wire takes a queue the ACKs do not use. */
static int on_estab(void *ctx, unsigned rxq, struct snd_cfg *c)
{
	struct estab_ctx *ec = ctx;
	int w = snd_dev_wire_pick(ec->d, rxq), e;

	if (w == -ENOENT)
		return 0;
	if (w < 0) {
		fprintf(stderr, "sender: no queue for the e1000 wire besides the ACKs' (%u)\n", rxq);
		return w;
	}
	gso_evloop__del_fd(ec->loop, gso_xsk__fd(ec->d->rx[w]));
	e = snd_dev_wire(ec->d, w, ec->err, sizeof(ec->err));
	if (e) {
		fprintf(stderr, "sender: %s\n", ec->err);
		return e;
	}
	c->dev = ec->d->tx;
	c->tso = ec->d->tso;
	c->tx_flags = ec->d->tx_flags;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct snd_if ifi;
	struct snd_dev d;
	struct snd s;
	struct snd_cfg c;
	struct gso_evloop *loop = NULL;
	struct bench_cpu c0, c1, cpu;
	struct gso_dev_stats ds;
	struct estab_ctx ec = { .d = &d };
	char err[256];
	int e, l3;
	uint64_t now, last_print, last_bytes = 0;
	bool tty, ok, umem_ok;

	parse_args(argc, argv, &o);
	if (o.netns && (e = bench_netns_enter(o.netns)))
		bench_die(BENCH_EXIT_USAGE, -e, "netns %s", o.netns);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	memset(&c, 0, sizeof(c));
	e = snd_if_info(o.dev, &ifi);
	if (e)
		bench_die(BENCH_EXIT_USAGE, -e, "interface %s", o.dev);
	l3 = parse_addr(o.dst, c.peer_addr);
	if (l3 < 0)
		bench_die(BENCH_EXIT_USAGE, 0, "bad --dst '%s'", o.dst);
	if (o.src) {
		if (parse_addr(o.src, c.our_addr) != l3)
			bench_die(BENCH_EXIT_USAGE, 0, "bad --src '%s' (same family as --dst)", o.src);
	} else if ((e = snd_if_addr(o.dev, l3, c.our_addr))) {
		bench_die(BENCH_EXIT_USAGE, -e, "no IPv%d address on %s (use --src)", l3, o.dev);
	}
	if (o.dst_mac) {
		if (snd_parse_mac(o.dst_mac, c.peer_mac))
			bench_die(BENCH_EXIT_USAGE, 0, "bad --dst-mac '%s'", o.dst_mac);
	} else if (l3 == 6) {
		bench_die(BENCH_EXIT_USAGE, 0, "IPv6 needs --dst-mac");
	} else if ((e = snd_resolve_mac(o.dev, c.peer_addr, c.peer_mac, 1000))) {
		bench_die(BENCH_EXIT_USAGE, -e, "no MAC for %s on %s (use --dst-mac)", o.dst, o.dev);
	}

	e = snd_dev_open(&d, o.mode, ifi.ifindex, o.queue, err, sizeof(err));
	if (e == -EOPNOTSUPP)
		bench_die(BENCH_EXIT_SKIP, 0, "mode %s not available here: %s", snd_mode_name((unsigned)o.mode), err);
	if (e)
		bench_die(BENCH_EXIT_USAGE, 0, "mode %s: %s", snd_mode_name((unsigned)o.mode), err);

	c.dev = d.tx;
	c.tso = d.tso;
	c.tx_flags = d.tx_flags;
	c.l3 = (uint8_t)l3;
	memcpy(c.our_mac, ifi.mac, 6);
	c.our_port = o.sport ? o.sport : (uint16_t)(32768 + getpid() % 28000);
	c.peer_port = o.port;
	c.mtu = ifi.mtu;
	c.mss_cap = (uint32_t)o.mss;
	c.bytes = o.bytes;
	c.duration_ns = (uint64_t)(o.time_s * 1e9);
	c.seed = o.seed;
	c.raw = o.raw;
	c.max_rate = (uint64_t)(o.rate_bps / 8);
	c.pacing_shift = o.pacing_shift;
	c.min_segs = o.min_segs;
	c.win_divisor = o.win_divisor;
	c.cc_algo = o.cc;
	c.no_sack = o.no_sack;
	c.no_ts = o.no_ts;
	c.idle_ns = (uint64_t)(o.idle_s * 1e9);
	c.check = o.check;
	c.on_estab = on_estab;
	c.ctx = &ec;

	e = snd_dev_steer(&d, l3, c.peer_addr, c.our_addr, c.peer_port, c.our_port);
	if (e)
		bench_die(BENCH_EXIT_USAGE, -e, "steering the ACKs");
	e = gso_evloop__create(&loop, NULL);
	if (e)
		bench_die(BENCH_EXIT_USAGE, -e, "event loop");
	ec.loop = loop;
	for (unsigned q = 0; q < d.nrxq; q++) {
		int fd = gso_xsk__fd(d.rx[q]);

		e = fd < 0 ? fd : gso_evloop__add_fd(loop, fd, POLLIN, q);
		if (e)
			bench_die(BENCH_EXIT_USAGE, -e, "watching receive queue %u", q);
	}

	tty = !o.quiet && isatty(STDERR_FILENO);
	bench_cpu_now(&c0);
	now = gso_evloop_now_ns();
	last_print = now;
	e = snd_init(&s, &c, now);
	if (e)
		bench_die(BENCH_EXIT_USAGE, -e, "sender state");
	snd_connect(&s, now);

	while (!snd_finished(&s)) {
		struct gso_rx_pkt pk[RX_BATCH];
		struct gso_evloop_event ev[4];
		uint64_t dl;
		int n;

		bool full = false;

		now = gso_evloop_now_ns();
		for (unsigned q = 0; q < d.nrxq && !snd_finished(&s); q++) {
			/* The e1000 wire's queue has no receive socket once the model runs. */
			if ((int)q == d.wire_queue)
				continue;
			n = gso_dev__recv(d.rx[q], pk, RX_BATCH);
			if (n < 0) {
				s.state = SND_FAILED;
				s.st.fail = "receiving";
				s.st.fail_err = n;
				break;
			}
			for (int i = 0; i < n; i++)
				snd_input(&s, pk[i].data, pk[i].len, q, now);
			if (n > 0)
				gso_dev__rx_release(d.rx[q], pk, (unsigned)n);
			full |= n == RX_BATCH;
		}
		if (s.state == SND_FAILED)
			break;
		if (stop_flag == 1 && !s.data_done && s.state == SND_ESTAB)
			s.stop_at = now; /* Ctrl-C: finish what is queued, then FIN */
		if (stop_flag > 1)
			break;
		snd_timers(&s, now);
		snd_output(&s, now);
		gso_dev__reap(d.tx, 0);
		if (tty && now - last_print > 500000000ull)
			progress(&s, now, &last_print, &last_bytes);
		if (full || snd_finished(&s))
			continue;
		dl = snd_deadline(&s);
		if (tty && dl > last_print + 500000000ull)
			dl = last_print + 500000000ull;
		if (dl > now)
			gso_evloop__wait_until(loop, dl, ev, 4);
	}
	now = gso_evloop_now_ns();
	if (!s.st.t_end)
		s.st.t_end = now;
	bench_cpu_now(&c1);
	bench_cpu_diff(&c0, &c1, &cpu);
	if (tty) {
		progress(&s, now, &last_print, &last_bytes);
		fputc('\n', stderr);
	}
	ok = s.state == SND_DONE;

	GSO_OPTS(gso_evloop_stats, ls);
	gso_evloop__stats(loop, &ls);
	gso_evloop__destroy(loop);
	snd_fini(&s);
	snd_dev_close(&d);
	umem_ok = snd_dev_umem_balanced(&d, &ds);
	if (!ok)
		fprintf(stderr, "sender: %s: %s\n", s.st.fail ? s.st.fail : "interrupted",
			s.st.fail ? strerror(-s.st.fail_err) : "signal");
	if (o.json)
		report(&o, &s, &d, &cpu, &ds, umem_ok, &ls, ok ? "ok" : s.st.fail ? s.st.fail : "interrupted");
	else if (!o.quiet)
		fprintf(stderr, "sender: %s %s: %.3f Gbit/s, %" PRIu64 " bytes in %.3f s, %.3f CPU-s/GB, "
			"retrans %" PRIu64 ", UMEM %s\n", snd_mode_name((unsigned)o.mode), ok ? "ok" : "FAILED",
			stream_seconds(&s) > 0 ? (double)stream_bytes(&s) * 8e-9 / stream_seconds(&s) : 0,
			stream_bytes(&s), stream_seconds(&s),
			stream_bytes(&s) ? (cpu.user + cpu.sys) / ((double)stream_bytes(&s) * 1e-9) : 0,
			s.st.retrans_segs, umem_ok ? "balanced" : "NOT balanced");
	snd_dev_destroy(&d);
	return ok && umem_ok ? BENCH_EXIT_OK : BENCH_EXIT_FAIL;
}
