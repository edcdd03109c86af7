/*
 * kernel_sender: the baseline.  The same transfer as the libgso sender
 * (bench stream, header, verdict; proto.h) through an ordinary kernel TCP
 * socket, so that runs with the veth's TSO/GSO on and off can be compared
 * side by side with the library's modes.
 *
 * It reports goodput (bytes until the receiver's verdict, i.e. delivered
 * and verified), the process's CPU-seconds per GB, the time spent
 * generating the stream (included in the CPU figure, reported so it can be
 * taken out), retransmissions, and the kernel's burst size: TCP segments
 * per packet handed to IP (Tcp.OutSegs / Ip.OutRequests), i.e. the
 * TSO/GSO super-packet size TCP chose.
 *
 * Its options are the bench sender contract (bench/testbed/README.md):
 * the libgso sender accepts the same ones plus --mode.
 */
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
#include <linux/tcp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "cpu.h"
#include "json.h"
#include "proto.h"
#include "snmp.h"
#include "util.h"

#define DEF_PORT 5201
#define DEF_BYTES (256ull << 20)
#define DEF_WRITE (128u << 10)

struct opts {
	const char *dst, *src, *dev, *netns, *label, *cc, *mode;
	uint16_t port;
	uint64_t bytes, seed, sndbuf, wsize, mss;
	double time_s, connect_s, verdict_s, rate_bps;
	bool json, raw, no_verdict;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kernel_sender --dst ADDR [options]\n"
		"Sends the bench stream through a kernel TCP socket (the baseline).\n\n"
		"  -d, --dst ADDR          receiver address (IPv4 or IPv6)\n"
		"  -p, --port P            receiver port (default %d)\n"
		"  -b, --bytes N           stream bytes to send (default 256M, or unlimited with --time)\n"
		"  -T, --time S            stop after S seconds (whichever of --bytes/--time comes first)\n"
		"  -s, --seed S            stream seed (default 1)\n"
		"  -j, --json              one JSON object on stdout\n"
		"  -n, --netns NAME        run in network namespace NAME\n"
		"      --src ADDR          bind to this local address\n"
		"      --dev IFNAME        SO_BINDTODEVICE\n"
		"      --dst-mac MAC       accepted for the sender contract; unused (the kernel resolves)\n"
		"      --mode kernel       accepted for the sender contract; only \"kernel\"\n"
		"      --sndbuf BYTES      SO_SNDBUF (default: kernel autotuning)\n"
		"      --write BYTES       bytes per write(2) (default 128K)\n"
		"      --mss N             TCP_MAXSEG\n"
		"      --cc NAME           TCP_CONGESTION (default: the namespace's)\n"
		"      --rate R            SO_MAX_PACING_RATE, bits/s with k/M/G (TCP paces itself without fq)\n"
		"      --raw               no header (receiver needs --seed); implies --no-verdict\n"
		"      --no-verdict        do not ask the receiver for a verdict\n"
		"      --connect-timeout S keep retrying connect for S s (default 5)\n"
		"      --verdict-timeout S wait this long for the verdict after the last byte (default 30)\n"
		"  -l, --label TEXT        copied into the result\n"
		"  -h, --help\n\n"
		"Exit: 0 sent and (with a verdict) verified, 1 transfer or verification failed,\n"
		"2 usage or setup error.\n",
		DEF_PORT);
}

enum { O_SRC = 256, O_DEV, O_DSTMAC, O_MODE, O_SNDBUF, O_WRITE, O_MSS, O_CC, O_RAW, O_NOVERDICT,
       O_CONNTO, O_VERDICTTO, O_RATE };

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "dst", required_argument, 0, 'd' },
		{ "port", required_argument, 0, 'p' },
		{ "bytes", required_argument, 0, 'b' },
		{ "time", required_argument, 0, 'T' },
		{ "seed", required_argument, 0, 's' },
		{ "json", no_argument, 0, 'j' },
		{ "netns", required_argument, 0, 'n' },
		{ "label", required_argument, 0, 'l' },
		{ "help", no_argument, 0, 'h' },
		{ "src", required_argument, 0, O_SRC },
		{ "dev", required_argument, 0, O_DEV },
		{ "dst-mac", required_argument, 0, O_DSTMAC },
		{ "mode", required_argument, 0, O_MODE },
		{ "sndbuf", required_argument, 0, O_SNDBUF },
		{ "write", required_argument, 0, O_WRITE },
		{ "mss", required_argument, 0, O_MSS },
		{ "cc", required_argument, 0, O_CC },
		{ "raw", no_argument, 0, O_RAW },
		{ "no-verdict", no_argument, 0, O_NOVERDICT },
		{ "connect-timeout", required_argument, 0, O_CONNTO },
		{ "verdict-timeout", required_argument, 0, O_VERDICTTO },
		{ "rate", required_argument, 0, O_RATE },
		{ 0, 0, 0, 0 },
	};
	bool have_bytes = false;
	uint64_t v;
	int c;

	*o = (struct opts){ .port = DEF_PORT, .seed = 1, .wsize = DEF_WRITE, .connect_s = 5,
			    .verdict_s = 30, .mode = "kernel" };
	while ((c = getopt_long(argc, argv, "d:p:b:T:s:jn:l:h", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o->dst = optarg; break;
		case 'p':
			if (bench_parse_u64(optarg, &v) || !v || v > 65535)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --port '%s'", optarg);
			o->port = (uint16_t)v;
			break;
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
		case 'h': usage(stdout); exit(0);
		case O_SRC: o->src = optarg; break;
		case O_DEV: o->dev = optarg; break;
		case O_DSTMAC: break;
		case O_MODE:
			if (strcmp(optarg, "kernel"))
				bench_die(BENCH_EXIT_SKIP, 0, "mode '%s' is not offered (only \"kernel\")", optarg);
			break;
		case O_SNDBUF:
			if (bench_parse_size(optarg, &o->sndbuf) || !o->sndbuf || o->sndbuf > INT32_MAX / 2)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --sndbuf '%s'", optarg);
			break;
		case O_WRITE:
			if (bench_parse_size(optarg, &o->wsize) || !o->wsize || o->wsize > (1u << 30))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --write '%s'", optarg);
			break;
		case O_MSS:
			if (bench_parse_u64(optarg, &o->mss) || o->mss < 64 || o->mss > 65535)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --mss '%s'", optarg);
			break;
		case O_CC: o->cc = optarg; break;
		case O_RAW: o->raw = o->no_verdict = true; break;
		case O_NOVERDICT: o->no_verdict = true; break;
		case O_CONNTO:
			if (bench_parse_double(optarg, &o->connect_s))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --connect-timeout '%s'", optarg);
			break;
		case O_VERDICTTO:
			if (bench_parse_double(optarg, &o->verdict_s) || o->verdict_s <= 0)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --verdict-timeout '%s'", optarg);
			break;
		case O_RATE:
			if (bench_parse_rate(optarg, &o->rate_bps) || o->rate_bps < 8000)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --rate '%s'", optarg);
			break;
		default: usage(stderr); exit(BENCH_EXIT_USAGE);
		}
	}
	if (optind != argc || !o->dst) {
		usage(stderr);
		exit(BENCH_EXIT_USAGE);
	}
	if (!have_bytes && !o->time_s)
		o->bytes = DEF_BYTES;
	if (!have_bytes && o->time_s)
		o->bytes = UINT64_MAX;
}

static int setup_socket(const struct opts *o, struct sockaddr_storage *dst, socklen_t dlen)
{
	int fd = socket(dst->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		bench_die(BENCH_EXIT_USAGE, errno, "socket");
	if (o->sndbuf) {
		int v = (int)o->sndbuf;

		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)))
			bench_die(BENCH_EXIT_USAGE, errno, "SO_SNDBUF");
	}
	if (o->mss) {
		int v = (int)o->mss;

		if (setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &v, sizeof(v)))
			bench_die(BENCH_EXIT_USAGE, errno, "TCP_MAXSEG");
	}
	if (o->rate_bps > 0) {
		/* Bytes per second. */
		uint64_t v = (uint64_t)(o->rate_bps / 8);

		if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &v, sizeof(v)))
			bench_die(BENCH_EXIT_USAGE, errno, "SO_MAX_PACING_RATE");
	}
	if (o->cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o->cc, (socklen_t)strlen(o->cc)))
		bench_die(BENCH_EXIT_USAGE, errno, "TCP_CONGESTION %s", o->cc);
	if (o->dev && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, o->dev, (socklen_t)strlen(o->dev)))
		bench_die(BENCH_EXIT_USAGE, errno, "SO_BINDTODEVICE %s", o->dev);
	if (o->src) {
		struct sockaddr_storage ss;
		socklen_t len;

		if (bench_addr_parse(o->src, 0, dst->ss_family, &ss, &len) || ss.ss_family != dst->ss_family)
			bench_die(BENCH_EXIT_USAGE, 0, "bad --src '%s'", o->src);
		if (bind(fd, (struct sockaddr *)&ss, len))
			bench_die(BENCH_EXIT_USAGE, errno, "bind %s", o->src);
	}
	(void)dlen;
	return fd;
}

/* Connect, retrying while the receiver is not listening yet. */
static int connect_retry(const struct opts *o, struct sockaddr_storage *dst, socklen_t dlen)
{
	double end = bench_now() + o->connect_s;

	for (;;) {
		int fd = setup_socket(o, dst, dlen), err;

		if (!connect(fd, (struct sockaddr *)dst, dlen))
			return fd;
		err = errno;
		close(fd);
		if ((err != ECONNREFUSED && err != ENETUNREACH && err != EHOSTUNREACH &&
		     err != ETIMEDOUT) || bench_now() >= end || stop_flag)
			bench_die(BENCH_EXIT_FAIL, err, "connect %s port %u", o->dst, o->port);
		usleep(50000);
	}
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR) {
			if (stop_flag)
				return -EINTR;
			continue;
		}
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read exactly len bytes within timeout_s; returns 0, -ETIME, -ECONNRESET (EOF) or -errno. */
static int read_exact(int fd, uint8_t *p, size_t len, double timeout_s)
{
	double end = bench_now() + timeout_s;

	while (len) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		double left = end - bench_now();
		ssize_t n;

		if (left <= 0)
			return -ETIME;
		n = poll(&pf, 1, (int)(left * 1000) + 1);
		if (n < 0 && errno == EINTR && !stop_flag)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ETIME;
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR && !stop_flag)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sockaddr_storage dst;
	socklen_t dlen, sl;
	struct opts o;
	struct bench_stream *st;
	struct bench_cpu c0, c1, cpu;
	struct bench_snmp *s0, *s1;
	struct bench_verdict vd = { 0 };
	struct tcp_info ti;
	char cc_used[16] = "";
	bool have_ti, have_vd = false;
	uint8_t *buf, hdr[BENCH_HDR_LEN], vwire[BENCH_VERDICT_LEN];
	uint64_t sent = 0, gen_ns = 0;
	double t_end, t_sent, deadline;
	const char *status = "ok";
	int fd, err = 0, verr = 0;

	parse_args(argc, argv, &o);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (o.netns && (err = bench_netns_enter(o.netns)))
		bench_die(BENCH_EXIT_USAGE, err, "netns %s", o.netns);
	if (bench_addr_parse(o.dst, o.port, AF_INET, &dst, &dlen))
		bench_die(BENCH_EXIT_USAGE, 0, "bad --dst '%s'", o.dst);
	st = malloc(sizeof(*st));
	s0 = malloc(sizeof(*s0));
	s1 = malloc(sizeof(*s1));
	buf = malloc(o.wsize);
	if (!st || !s0 || !s1 || !buf)
		bench_die(BENCH_EXIT_USAGE, ENOMEM, "buffers");
	bench_stream_init(st, o.seed);

	fd = connect_retry(&o, &dst, dlen);
	bench_snmp_read(s0);
	bench_cpu_now(&c0);
	deadline = o.time_s ? c0.wall + o.time_s : 0;
	if (!o.raw) {
		struct bench_hdr h = {
			.flags = o.no_verdict ? 0 : BENCH_HDR_F_VERDICT,
			.seed = o.seed,
			/* A time-limited run does not know its length: until FIN. */
			.total = o.time_s > 0 ? 0 : o.bytes,
		};

		bench_hdr_encode(&h, hdr);
		err = write_all(fd, hdr, sizeof(hdr));
	}
	while (!err && sent < o.bytes && !stop_flag) {
		size_t n = o.bytes - sent < o.wsize ? (size_t)(o.bytes - sent) : (size_t)o.wsize;
		uint64_t g0 = bench_thread_cpu_ns();

		bench_stream_fill(st, sent, buf, n);
		gen_ns += bench_thread_cpu_ns() - g0;
		err = write_all(fd, buf, n);
		if (!err)
			sent += n;
		if (deadline && bench_now() >= deadline)
			break;
	}
	t_sent = bench_now();
	if (!err)
		shutdown(fd, SHUT_WR);
	/* The transfer ends when the receiver has everything: its verdict, or its FIN. */
	if (!err && !o.no_verdict) {
		verr = read_exact(fd, vwire, sizeof(vwire), o.verdict_s);
		have_vd = !verr && !bench_verdict_decode(vwire, &vd);
	} else if (!err) {
		uint8_t c;

		verr = read_exact(fd, &c, 1, o.verdict_s);
		if (verr == -ECONNRESET)
			verr = 0; /* EOF: the receiver closed after reading everything */
	}
	bench_cpu_now(&c1);
	t_end = c1.wall;
	sl = sizeof(ti);
	have_ti = !getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &sl);
	/* The congestion control the socket ran with: --cc, or the namespace's default. */
	sl = sizeof(cc_used) - 1;
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc_used, &sl))
		snprintf(cc_used, sizeof(cc_used), "%s", o.cc ? o.cc : "");
	bench_snmp_read(s1);
	close(fd);
	bench_cpu_diff(&c0, &c1, &cpu);

	if (err)
		status = stop_flag ? "interrupted" : "io_error";
	else if (verr)
		status = verr == -ETIME ? "timeout" : "io_error";
	else if (have_vd && vd.status != BENCH_OK)
		status = bench_status_name((int)vd.status);
	else if (have_vd && vd.received != sent)
		status = "count_mismatch";
	else if (!o.no_verdict && !have_vd)
		status = "no_verdict";

	double secs = t_end - c0.wall;
	double gb = (double)sent / 1e9;
	double cpu_s = cpu.user + cpu.sys;
	int64_t outsegs = bench_snmp_delta(s0, s1, "Tcp.OutSegs");
	int64_t outpkts = bench_snmp_delta(s0, s1, "Ip.OutRequests");
	int64_t retrans = bench_snmp_delta(s0, s1, "Tcp.RetransSegs");
	char ifname[IF_NAMESIZE] = "";

	if (o.dev)
		snprintf(ifname, sizeof(ifname), "%s", o.dev);
	if (!o.json) {
		printf("kernel_sender (%s): %s: %" PRIu64 " bytes in %.3f s = %.3f Gbit/s, CPU %.3f s "
		       "(%.3f s/GB, stream generation %.3f s), %" PRId64 " retransmitted segments, "
		       "%.1f segments/packet\n",
		       cc_used, status, sent, secs, secs > 0 ? (double)sent * 8 / secs / 1e9 : 0, cpu_s,
		       gb > 0 ? cpu_s / gb : 0, (double)gen_ns * 1e-9, retrans,
		       outpkts > 0 ? (double)outsegs / (double)outpkts : 0);
	} else {
		struct bench_json j;

		bench_json_begin(&j, stdout);
		bench_json_str(&j, "tool", "kernel_sender");
		bench_json_str(&j, "mode", o.mode);
		if (o.label)
			bench_json_str(&j, "label", o.label);
		bench_json_str(&j, "status", status);
		bench_json_str(&j, "cc", cc_used);
		if (have_vd)
			bench_json_bool(&j, "verified", vd.status == BENCH_OK && vd.received == sent);
		else
			bench_json_null(&j, "verified");
		bench_json_u64(&j, "seed", o.seed);
		bench_json_u64(&j, "bytes", sent);
		bench_json_dbl(&j, "seconds", secs);
		bench_json_dbl(&j, "send_seconds", t_sent - c0.wall);
		bench_json_dbl(&j, "goodput_gbps", secs > 0 ? (double)sent * 8 / secs / 1e9 : 0);
		bench_json_dbl(&j, "cpu_s", cpu_s);
		bench_json_dbl(&j, "cpu_user_s", cpu.user);
		bench_json_dbl(&j, "cpu_sys_s", cpu.sys);
		bench_json_dbl(&j, "cpu_s_per_gb", gb > 0 ? cpu_s / gb : 0);
		bench_json_dbl(&j, "gen_cpu_s", (double)gen_ns * 1e-9);
		bench_json_i64(&j, "retrans", retrans);
		bench_json_i64(&j, "tcp_out_segs", outsegs);
		bench_json_i64(&j, "ip_out_packets", outpkts);
		bench_json_dbl(&j, "burst_mean_segs", outpkts > 0 ? (double)outsegs / (double)outpkts : 0);
		bench_json_str(&j, "burst_source", "snmp Tcp.OutSegs/Ip.OutRequests");
		bench_json_str(&j, "dev", ifname[0] ? ifname : NULL);
		bench_json_u64(&j, "write_size", o.wsize);
		if (have_ti) {
			bench_json_u64(&j, "ti_total_retrans", ti.tcpi_total_retrans);
			bench_json_u64(&j, "ti_snd_mss", ti.tcpi_snd_mss);
			bench_json_u64(&j, "ti_snd_cwnd", ti.tcpi_snd_cwnd);
			bench_json_u64(&j, "ti_rtt_us", ti.tcpi_rtt);
			bench_json_u64(&j, "ti_min_rtt_us", ti.tcpi_min_rtt);
			bench_json_u64(&j, "ti_bytes_retrans", ti.tcpi_bytes_retrans);
			bench_json_u64(&j, "ti_segs_out", ti.tcpi_segs_out);
			bench_json_u64(&j, "ti_rwnd_limited_us", ti.tcpi_rwnd_limited);
			bench_json_u64(&j, "ti_sndbuf_limited_us", ti.tcpi_sndbuf_limited);
			bench_json_u64(&j, "ti_dsack_dups", ti.tcpi_dsack_dups);
			bench_json_u64(&j, "ti_reord_seen", ti.tcpi_reord_seen);
		}
		if (have_vd) {
			bench_json_u64(&j, "verdict_received", vd.received);
			bench_json_u64(&j, "verdict_verified", vd.verified);
		}
		bench_json_end(&j);
	}
	free(st);
	free(s0);
	free(s1);
	free(buf);
	return strcmp(status, "ok") ? BENCH_EXIT_FAIL : BENCH_EXIT_OK;
}
