/*
 * receiver: a kernel TCP sink for the benches.  It listens, accepts, reads
 * with io_uring and verifies every byte of the bench stream (proto.h:
 * a 32-byte header carrying the seed and length, or `--seed` for a raw
 * stream), then reports goodput, bytes verified and the receiving stack's
 * view: segments vs packets (GRO/GSO merging) from the namespace's SNMP
 * counters and the socket's TCP_INFO.
 *
 * One connection at a time; with --once it exits after the first.  Exit
 * status: 0 every connection verified, 1 a connection failed (mismatch,
 * short, timeout, ...), 2 usage or setup error.  With --json each
 * connection prints one JSON object on one line (keys in print_result()).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <liburing.h>

#include "cpu.h"
#include "json.h"
#include "proto.h"
#include "snmp.h"
#include "util.h"

#define DEF_PORT 5201
#define DEF_BUF (256u << 10)
#define UD_RECV 1
#define UD_TIMEOUT 2
#define UD_ACCEPT 3

struct opts {
	uint16_t port;
	const char *bind;
	bool raw;
	uint64_t seed;
	uint64_t rcvbuf;
	bool once;
	bool json;
	const char *netns;
	double idle_s;
	double accept_s;
	const char *ready_file;
	uint64_t buf;
	const char *label;
	bool no_uring;
};

struct conn_result {
	struct bench_rx rx;
	char peer[INET6_ADDRSTRLEN + 8];
	double t_accept, t_first, t_last;
	struct bench_cpu cpu0, cpu1;
	struct bench_snmp snmp0, snmp1;
	struct tcp_info ti;
	bool have_ti;
	int rcvbuf_eff;
	int err; /* errno of a failed read, 0 if none */
	bool verdict_sent;
	bool reset; /* ended by RST after all announced bytes */
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
		"usage: receiver [options]\n"
		"A kernel TCP sink that verifies every byte of the bench stream.\n\n"
		"  -p, --port P            TCP port to listen on (default %d)\n"
		"  -B, --bind ADDR         local address (default: any, IPv4 and IPv6)\n"
		"  -s, --seed S            raw stream with seed S (no header expected);\n"
		"                          default: the stream's 32-byte header gives seed and length\n"
		"  -r, --rcvbuf BYTES      SO_RCVBUF for accepted sockets (e.g. 4K: the tiny-buffer\n"
		"                          case); the kernel doubles it and enforces a minimum\n"
		"  -1, --once              exit after one connection\n"
		"  -j, --json              one JSON object per connection on stdout\n"
		"  -n, --netns NAME        run in network namespace NAME (/run/netns/NAME)\n"
		"  -t, --idle-timeout S    fail a connection with no data for S seconds (default 10)\n"
		"  -a, --accept-timeout S  give up when no connection comes within S s (default: wait)\n"
		"  -R, --ready-file PATH   create PATH once listening (for scripts)\n"
		"  -b, --buf BYTES         read size (default 256K)\n"
		"  -l, --label TEXT        copied into the result\n"
		"      --no-uring          read with read(2) instead of io_uring\n"
		"  -h, --help\n\n"
		"Sizes take K/M/G suffixes (binary).  Exit: 0 all verified, 1 a connection\n"
		"failed verification or timed out, 2 usage or setup error.\n"
		"Stream and header format: bench/testbed/common/proto.h and stream.h.\n",
		DEF_PORT);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "port", required_argument, 0, 'p' },
		{ "bind", required_argument, 0, 'B' },
		{ "seed", required_argument, 0, 's' },
		{ "rcvbuf", required_argument, 0, 'r' },
		{ "once", no_argument, 0, '1' },
		{ "json", no_argument, 0, 'j' },
		{ "netns", required_argument, 0, 'n' },
		{ "idle-timeout", required_argument, 0, 't' },
		{ "accept-timeout", required_argument, 0, 'a' },
		{ "ready-file", required_argument, 0, 'R' },
		{ "buf", required_argument, 0, 'b' },
		{ "label", required_argument, 0, 'l' },
		{ "no-uring", no_argument, 0, 'U' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	uint64_t v;
	int c;

	*o = (struct opts){ .port = DEF_PORT, .idle_s = 10, .buf = DEF_BUF };
	while ((c = getopt_long(argc, argv, "p:B:s:r:1jn:t:a:R:b:l:h", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (bench_parse_u64(optarg, &v) || !v || v > 65535)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --port '%s'", optarg);
			o->port = (uint16_t)v;
			break;
		case 'B': o->bind = optarg; break;
		case 's':
			if (bench_parse_u64(optarg, &o->seed))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --seed '%s'", optarg);
			o->raw = true;
			break;
		case 'r':
			if (bench_parse_size(optarg, &o->rcvbuf) || !o->rcvbuf || o->rcvbuf > INT32_MAX / 2)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --rcvbuf '%s'", optarg);
			break;
		case '1': o->once = true; break;
		case 'j': o->json = true; break;
		case 'n': o->netns = optarg; break;
		case 't':
			if (bench_parse_double(optarg, &o->idle_s) || o->idle_s <= 0)
				bench_die(BENCH_EXIT_USAGE, 0, "bad --idle-timeout '%s'", optarg);
			break;
		case 'a':
			if (bench_parse_double(optarg, &o->accept_s))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --accept-timeout '%s'", optarg);
			break;
		case 'R': o->ready_file = optarg; break;
		case 'b':
			if (bench_parse_size(optarg, &o->buf) || o->buf < 1 || o->buf > (1u << 30))
				bench_die(BENCH_EXIT_USAGE, 0, "bad --buf '%s'", optarg);
			break;
		case 'l': o->label = optarg; break;
		case 'U': o->no_uring = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(BENCH_EXIT_USAGE);
		}
	}
	if (optind != argc) {
		usage(stderr);
		exit(BENCH_EXIT_USAGE);
	}
}

static int listen_socket(const struct opts *o)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, zero = 0;

	if (bench_addr_parse(o->bind, o->port, AF_INET6, &ss, &len))
		bench_die(BENCH_EXIT_USAGE, 0, "bad --bind address '%s'", o->bind);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		bench_die(BENCH_EXIT_USAGE, errno, "socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	/*
	 * Set before listen so accepted sockets inherit it: the window scale
	 * is chosen at the handshake, so setting it later would not shrink
	 * the advertised window the way a small buffer does.
	 */
	if (o->rcvbuf) {
		int v = (int)o->rcvbuf;

		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)))
			bench_die(BENCH_EXIT_USAGE, errno, "SO_RCVBUF");
	}
	if (bind(fd, (struct sockaddr *)&ss, len))
		bench_die(BENCH_EXIT_USAGE, errno, "bind port %u", o->port);
	if (listen(fd, 8))
		bench_die(BENCH_EXIT_USAGE, errno, "listen");
	return fd;
}

static void peer_name(int fd, char *out, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char ip[INET6_ADDRSTRLEN] = "?";
	uint16_t port = 0;

	if (!getpeername(fd, (struct sockaddr *)&ss, &len)) {
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

			inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
			port = ntohs(s4->sin_port);
		} else {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

			inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
			port = ntohs(s6->sin6_port);
		}
	}
	snprintf(out, n, "%s:%u", ip, port);
}

static void ts_from_s(struct __kernel_timespec *ts, double s)
{
	ts->tv_sec = (long long)s;
	ts->tv_nsec = (long long)((s - (double)ts->tv_sec) * 1e9);
}

/*
 * Wait for a completion, returning -EINTR once a stop signal was seen: a
 * signal landing just before io_uring_enter() would not interrupt it, so
 * the wait wakes up now and then to look at the flag.
 */
static int wait_cqe(struct io_uring *ring, struct io_uring_cqe **cqe)
{
	for (;;) {
		struct __kernel_timespec ts = { .tv_nsec = 200000000 };
		int err;

		if (stop_flag == 1)
			return -EINTR;
		err = io_uring_wait_cqe_timeout(ring, cqe, &ts);
		if (err != -ETIME)
			return err;
	}
}

/*
 * Accept with a timeout.  io_uring when available (accept linked to a
 * timeout), poll otherwise.  Returns the fd, -ETIME, -EINTR or -errno.
 */
static int do_accept(struct io_uring *ring, int lfd, double timeout_s)
{
	if (ring) {
		struct __kernel_timespec ts;
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
		struct io_uring_cqe *cqe;
		int res = -EIO, pending = timeout_s > 0 ? 2 : 1;

		io_uring_prep_accept(sqe, lfd, NULL, NULL, SOCK_CLOEXEC);
		sqe->user_data = UD_ACCEPT;
		if (timeout_s > 0) {
			sqe->flags |= IOSQE_IO_LINK;
			ts_from_s(&ts, timeout_s);
			sqe = io_uring_get_sqe(ring);
			io_uring_prep_link_timeout(sqe, &ts, 0);
			sqe->user_data = UD_TIMEOUT;
		}
		io_uring_submit(ring);
		while (pending) {
			int err = wait_cqe(ring, &cqe);

			if (err == -EINTR) {
				if (stop_flag == 1) {
					/* Cancel, then still reap what is in flight. */
					sqe = io_uring_get_sqe(ring);
					io_uring_prep_cancel64(sqe, UD_ACCEPT, 0);
					sqe->user_data = 0;
					io_uring_submit(ring);
					pending++;
					stop_flag = 2;
				}
				continue;
			}
			if (err)
				return err;
			if (cqe->user_data == UD_ACCEPT)
				res = cqe->res;
			pending--;
			io_uring_cqe_seen(ring, cqe);
		}
		if (res == -ECANCELED)
			res = stop_flag ? -EINTR : -ETIME;
		return res;
	}
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	int n = poll(&p, 1, timeout_s > 0 ? (int)(timeout_s * 1000) : -1);

	if (n < 0)
		return -errno;
	if (n == 0)
		return -ETIME;
	n = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	return n < 0 ? -errno : n;
}

/*
 * One recv of up to len bytes with an idle timeout.  Returns bytes (0 at
 * FIN), -ETIME on timeout, -EINTR on a stop signal, or -errno.
 */
static ssize_t recv_uring(struct io_uring *ring, int fd, void *buf, size_t len, double idle_s)
{
	struct __kernel_timespec ts;
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	ssize_t res = -EIO;
	int pending = 2;
	bool timed_out = false;

	io_uring_prep_recv(sqe, fd, buf, len, 0);
	sqe->user_data = UD_RECV;
	sqe->flags |= IOSQE_IO_LINK;
	ts_from_s(&ts, idle_s);
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_link_timeout(sqe, &ts, 0);
	sqe->user_data = UD_TIMEOUT;
	io_uring_submit(ring);
	while (pending) {
		int err = wait_cqe(ring, &cqe);

		if (err == -EINTR) {
			if (stop_flag == 1) {
				sqe = io_uring_get_sqe(ring);
				io_uring_prep_cancel64(sqe, UD_RECV, 0);
				sqe->user_data = 0;
				io_uring_submit(ring);
				pending++;
				stop_flag = 2;
			}
			continue;
		}
		if (err)
			return err;
		if (cqe->user_data == UD_RECV)
			res = cqe->res;
		else if (cqe->user_data == UD_TIMEOUT && cqe->res == -ETIME)
			timed_out = true;
		pending--;
		io_uring_cqe_seen(ring, cqe);
	}
	if (res == -ECANCELED)
		res = timed_out ? -ETIME : -EINTR;
	return res;
}

static ssize_t recv_plain(int fd, void *buf, size_t len, double idle_s)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, (int)(idle_s * 1000));
	ssize_t r;

	if (n < 0)
		return -errno;
	if (n == 0)
		return -ETIME;
	r = read(fd, buf, len);
	return r < 0 ? -errno : r;
}

static void write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

static void serve(const struct opts *o, struct io_uring *ring, int cfd, struct conn_result *r)
{
	uint8_t *bufs[2];
	ssize_t n;
	int cur = 0;
	socklen_t sl = sizeof(r->rcvbuf_eff);

	bufs[0] = malloc(o->buf);
	bufs[1] = malloc(o->buf);
	if (!bufs[0] || !bufs[1])
		bench_die(BENCH_EXIT_USAGE, ENOMEM, "read buffers");
	getsockopt(cfd, SOL_SOCKET, SO_RCVBUF, &r->rcvbuf_eff, &sl);
	bench_rx_init(&r->rx, o->raw, o->seed);
	peer_name(cfd, r->peer, sizeof(r->peer));

	for (;;) {
		n = ring ? recv_uring(ring, cfd, bufs[cur], o->buf, o->idle_s)
			 : recv_plain(cfd, bufs[cur], o->buf, o->idle_s);
		if (n == -EINTR && !stop_flag)
			continue;
		if (n <= 0)
			break;
		if (!r->t_first)
			r->t_first = bench_now();
		r->t_last = bench_now();
		/*
		 * Keep reading after a mismatch (counting bytes) so the sender
		 * is not left blocked; the failure is already recorded.
		 */
		bench_rx_feed(&r->rx, bufs[cur], (size_t)n);
		cur ^= 1;
	}
	if (n == 0) {
		bench_rx_eof(&r->rx);
	} else if (n == -ECONNRESET && r->rx.have_hdr && r->rx.hdr.total &&
		   r->rx.received == r->rx.hdr.total) {
		/*
		 * A minimal sender may end with RST instead of FIN; with every
		 * announced byte read and verified, nothing is missing.
		 */
		r->reset = true;
		bench_rx_eof(&r->rx);
	} else {
		r->err = (int)-n;
		bench_rx_fail(&r->rx, n == -ETIME ? BENCH_TIMEOUT : BENCH_IO_ERROR);
	}
	sl = sizeof(r->ti);
	r->have_ti = !getsockopt(cfd, IPPROTO_TCP, TCP_INFO, &r->ti, &sl);
	if (!r->rx.raw && r->rx.have_hdr && (r->rx.hdr.flags & BENCH_HDR_F_VERDICT) && n == 0) {
		struct bench_verdict v;
		uint8_t wire[BENCH_VERDICT_LEN];

		bench_rx_verdict(&r->rx, &v);
		bench_verdict_encode(&v, wire);
		write_all(cfd, wire, sizeof(wire));
		r->verdict_sent = true;
	}
	free(bufs[0]);
	free(bufs[1]);
}

static void print_result(const struct opts *o, struct conn_result *r, bool uring)
{
	const struct bench_rx *rx = &r->rx;
	double secs = r->t_last > r->t_first ? r->t_last - r->t_first : 0;
	double gbps = secs > 0 ? (double)rx->received * 8 / secs / 1e9 : 0;
	struct bench_cpu cpu;
	int64_t pkts = bench_snmp_delta(&r->snmp0, &r->snmp1, "Ip.InReceives");
	int64_t segs = bench_snmp_delta(&r->snmp0, &r->snmp1, "IpExt.InNoECTPkts") +
		       bench_snmp_delta(&r->snmp0, &r->snmp1, "IpExt.InECT0Pkts") +
		       bench_snmp_delta(&r->snmp0, &r->snmp1, "IpExt.InECT1Pkts") +
		       bench_snmp_delta(&r->snmp0, &r->snmp1, "IpExt.InCEPkts");

	bench_cpu_diff(&r->cpu0, &r->cpu1, &cpu);
	if (!o->json) {
		printf("receiver: %s from %s: %" PRIu64 " bytes, %" PRIu64 " verified, %.3f s, %.3f Gbit/s",
		       bench_status_name(rx->status), r->peer, rx->received, rx->verified, secs, gbps);
		if (rx->status == BENCH_MISMATCH)
			printf(", first wrong byte at offset %" PRIu64 " (got 0x%02x, want 0x%02x)",
			       rx->bad_off, rx->bad_got, rx->bad_want);
		if (r->err)
			printf(" (%s)", strerror(r->err));
		printf("\n  receiver view: %" PRId64 " IP packets carrying %" PRId64
		       " segments (%.2f segments/packet), TCP segs_in %u, rcv_mss %u, rcvbuf %d\n",
		       pkts, segs, pkts > 0 ? (double)segs / (double)pkts : 0.0,
		       r->have_ti ? r->ti.tcpi_segs_in : 0, r->have_ti ? r->ti.tcpi_rcv_mss : 0,
		       r->rcvbuf_eff);
		fflush(stdout);
		return;
	}
	struct bench_json j;

	bench_json_begin(&j, stdout);
	bench_json_str(&j, "tool", "receiver");
	if (o->label)
		bench_json_str(&j, "label", o->label);
	bench_json_str(&j, "status", bench_status_name(rx->status));
	bench_json_bool(&j, "verified", rx->status == BENCH_OK);
	bench_json_str(&j, "peer", r->peer);
	bench_json_str(&j, "stream", rx->raw ? "raw" : "header");
	bench_json_u64(&j, "seed", rx->hdr.seed);
	bench_json_u64(&j, "expected_bytes", rx->hdr.total);
	bench_json_u64(&j, "bytes", rx->received);
	bench_json_u64(&j, "bytes_verified", rx->verified);
	if (rx->bad_off != BENCH_NO_OFFSET) {
		bench_json_u64(&j, "bad_offset", rx->bad_off);
		bench_json_u64(&j, "bad_got", rx->bad_got);
		bench_json_u64(&j, "bad_want", rx->bad_want);
	} else {
		bench_json_null(&j, "bad_offset");
	}
	if (r->err)
		bench_json_str(&j, "error", strerror(r->err));
	bench_json_dbl(&j, "seconds", secs);
	bench_json_dbl(&j, "seconds_since_accept", r->t_last > 0 ? r->t_last - r->t_accept : 0);
	bench_json_dbl(&j, "goodput_gbps", gbps);
	bench_json_dbl(&j, "cpu_s", cpu.user + cpu.sys);
	bench_json_dbl(&j, "cpu_user_s", cpu.user);
	bench_json_dbl(&j, "cpu_sys_s", cpu.sys);
	bench_json_str(&j, "io", uring ? "io_uring" : "read");
	bench_json_u64(&j, "read_buf", o->buf);
	bench_json_u64(&j, "rcvbuf_requested", o->rcvbuf);
	bench_json_i64(&j, "rcvbuf", r->rcvbuf_eff);
	bench_json_bool(&j, "verdict_sent", r->verdict_sent);
	bench_json_bool(&j, "ended_by_reset", r->reset);
	/* Namespace-wide counters over the connection. */
	bench_json_i64(&j, "ip_packets_in", pkts);
	bench_json_i64(&j, "ip_segments_in", segs);
	bench_json_dbl(&j, "segments_per_packet", pkts > 0 ? (double)segs / (double)pkts : 0.0);
	bench_json_i64(&j, "tcp_in_segs", bench_snmp_delta(&r->snmp0, &r->snmp1, "Tcp.InSegs"));
	bench_json_i64(&j, "tcp_out_segs", bench_snmp_delta(&r->snmp0, &r->snmp1, "Tcp.OutSegs"));
	bench_json_i64(&j, "tcp_in_errs", bench_snmp_delta(&r->snmp0, &r->snmp1, "Tcp.InErrs"));
	bench_json_i64(&j, "tcp_ofo_queue", bench_snmp_delta(&r->snmp0, &r->snmp1, "TcpExt.TCPOFOQueue"));
	bench_json_i64(&j, "tcp_rcv_coalesce", bench_snmp_delta(&r->snmp0, &r->snmp1, "TcpExt.TCPRcvCoalesce"));
	bench_json_i64(&j, "tcp_rcvq_drop", bench_snmp_delta(&r->snmp0, &r->snmp1, "TcpExt.TCPRcvQDrop"));
	bench_json_i64(&j, "tcp_prune_called", bench_snmp_delta(&r->snmp0, &r->snmp1, "TcpExt.PruneCalled"));
	bench_json_i64(&j, "tcp_dsack_sent", bench_snmp_delta(&r->snmp0, &r->snmp1, "TcpExt.TCPDSACKOldSent") +
			   bench_snmp_delta(&r->snmp0, &r->snmp1, "TcpExt.TCPDSACKOfoSent"));
	bench_json_i64(&j, "tcp_zero_window_adv", bench_snmp_delta(&r->snmp0, &r->snmp1, "TcpExt.TCPToZeroWindowAdv"));
	if (r->have_ti) {
		bench_json_u64(&j, "ti_segs_in", r->ti.tcpi_segs_in);
		bench_json_u64(&j, "ti_data_segs_in", r->ti.tcpi_data_segs_in);
		bench_json_u64(&j, "ti_rcv_mss", r->ti.tcpi_rcv_mss);
		bench_json_u64(&j, "ti_rcv_space", r->ti.tcpi_rcv_space);
		bench_json_u64(&j, "ti_rcv_rtt_us", r->ti.tcpi_rcv_rtt);
		bench_json_u64(&j, "ti_rcv_ooopack", r->ti.tcpi_rcv_ooopack);
		bench_json_u64(&j, "ti_bytes_received", r->ti.tcpi_bytes_received);
	}
	bench_json_end(&j);
}

int main(int argc, char **argv)
{
	struct io_uring ring_s, *ring = NULL;
	struct opts o;
	int lfd, failed = 0, err;
	struct sigaction sa = { .sa_handler = on_signal };

	parse_args(argc, argv, &o);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (o.netns && (err = bench_netns_enter(o.netns)))
		bench_die(BENCH_EXIT_USAGE, err, "netns %s", o.netns);
	if (!o.no_uring) {
		err = io_uring_queue_init(8, &ring_s, 0);
		if (!err)
			ring = &ring_s;
		else
			fprintf(stderr, "receiver: io_uring unavailable (%s), using read(2)\n", strerror(-err));
	}
	lfd = listen_socket(&o);
	if (o.ready_file) {
		int fd = open(o.ready_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0)
			bench_die(BENCH_EXIT_USAGE, errno, "ready file %s", o.ready_file);
		close(fd);
	}

	while (!stop_flag) {
		struct conn_result *r = calloc(1, sizeof(*r));
		int cfd;

		if (!r)
			bench_die(BENCH_EXIT_USAGE, ENOMEM, "result");
		cfd = do_accept(ring, lfd, o.accept_s);
		if (cfd == -EINTR || cfd == -ECANCELED) {
			free(r);
			if (stop_flag)
				break;
			continue;
		}
		if (cfd == -ETIME) {
			fprintf(stderr, "receiver: no connection within %.1f s\n", o.accept_s);
			free(r);
			failed = 1;
			break;
		}
		if (cfd < 0)
			bench_die(BENCH_EXIT_USAGE, cfd, "accept");
		r->t_accept = bench_now();
		bench_snmp_read(&r->snmp0);
		bench_cpu_now(&r->cpu0);
		serve(&o, ring, cfd, r);
		bench_cpu_now(&r->cpu1);
		bench_snmp_read(&r->snmp1);
		close(cfd);
		print_result(&o, r, ring != NULL);
		if (r->rx.status != BENCH_OK)
			failed = 1;
		free(r);
		if (o.once)
			break;
	}
	close(lfd);
	if (ring)
		io_uring_queue_exit(ring);
	return failed ? BENCH_EXIT_FAIL : BENCH_EXIT_OK;
}
