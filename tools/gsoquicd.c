/*
 * gsoquicd: a static file server over HTTP/3 (QUIC v1, ngtcp2 + nghttp3 +
 * GnuTLS), whose datagrams leave through libgso datagram flows.  GET of
 * the files under --root, for stock HTTP/3 clients (its tests run
 * Debian's ngtcp2 client, gtlsclient).
 *
 * The parts (tools/quic/):
 *   quic_io.h        the datagram I/O, two backends behind one interface:
 *     quic_io_gso.c      a libgso engine on --ifname (--mode auto, software,
 *                        csum, multibuf, offload-vnet): a datagram listener
 *                        receives the port's datagrams (the steering program
 *                        takes them from the kernel), and each (connection,
 *                        path) has a datagram flow that sends one
 *                        super-segment per call;
 *     quic_io_kernel.c   a kernel UDP socket (--mode kernel, the reference
 *                        row): recvmmsg, sendmsg with UDP_SEGMENT;
 *   quic_conn.c      the QUIC connections: accept, read, write batches of
 *                    equal-sized packets as one super-segment, timers,
 *                    pacing (--pacing), closing and draining, stateless
 *                    reset and version negotiation;
 *   quic_h3.c        HTTP/3 requests: the path opened beneath the root by
 *                    tools/common/file_path.c as gsohttpd does, the file
 *                    mapped and given to nghttp3 whole;
 *   quic_tls.c       TLS 1.3 sessions (ALPN h3) from --cert / --key (PEM);
 *   cid_map.c        connection IDs to connections;
 *   quic_hist.c      the departure-error histogram.
 *
 * One thread: the loop runs the I/O until the earliest connection timer
 * (ngtcp2_conn_get_expiry), runs the timers that are due and writes.
 *
 * Exit: 0 after SIGTERM/SIGINT with every connection closed and every
 * device buffer back (--json says so); 1 the interface went away, or
 * buffers were missing at exit; 2 bad options or setup failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gso/engine.h>
#include <gso/ifcaps.h>

#include "quic_server.h"
#include "tool_util.h"

#define DEF_PORT 4433
#define DEF_IDLE_S 30
#define DEF_MAX_CONNS 256u
#define DEF_CONN_BUFS 16u
#define DEF_MAX_BUFS 1024u
#define DEF_WRITE_DELAY_US 0u
#define SHUTDOWN_NS 1000000000ull  /* at exit, time for the CONNECTION_CLOSE packets to leave */
#define EXIT_FAIL 1

enum { M_AUTO, M_SOFTWARE, M_CSUM, M_MULTIBUF, M_VNET, M_KERNEL, M_COUNT };
static const char *const mode_names[M_COUNT] = { "auto", "software", "csum", "multibuf", "offload-vnet", "kernel" };
static const uint32_t mode_path[M_COUNT] = { GSO_PATH_AUTO, GSO_PATH_SOFTWARE, GSO_PATH_CSUM, GSO_PATH_MULTIBUF,
					     GSO_PATH_OFFLOAD_VNET, 0 };

struct opts {
	const char *ifname, *listen, *root, *key, *cert, *json, *ready;
	int mode, cc;
	enum pacing pacing;
	uint16_t port;
	uint32_t max_conns, conn_bufs;
	uint64_t idle_s, write_delay_us;
	bool quiet, verbose;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: gsoquicd --listen ADDR --root DIR --key KEY --cert CERT [--ifname IF] [options]\n"
"\n"
"Serve the files under DIR over HTTP/3 (QUIC v1, GET) on ADDR:PORT.  Every\n"
"datagram leaves through a libgso datagram flow, one super-segment per batch of\n"
"equal-sized QUIC packets, and the port's datagrams are received by a libgso\n"
"datagram listener (an XDP program takes them from the kernel); --mode kernel\n"
"uses a plain UDP socket instead, for comparison.\n"
"\n"
"  --ifname IF        interface to serve on (required but for --mode kernel)\n"
"  --listen ADDR      local IPv4 or IPv6 address (required; its family is the\n"
"                     server's)\n"
"  --port P           UDP port (default %d)\n"
"  --root DIR         directory served (required).  Paths are resolved by the\n"
"                     kernel beneath it (openat2, RESOLVE_BENEATH), as gsohttpd\n"
"                     does: '..', encoded dots and slashes, NUL and symlinks that\n"
"                     leave it are refused (400, 403 or 404)\n"
"  --key FILE         the server's private key, PEM (required)\n"
"  --cert FILE        its certificate (chain), PEM (required)\n"
"  --mode MODE        datagram path (default auto):\n"
"                       software      AF_XDP, whole frames, software checksums\n"
"                       csum          AF_XDP, whole frames, checksum metadata\n"
"                       multibuf      AF_XDP, header + payload reference frames\n"
"                       offload-vnet  AF_PACKET + virtio_net_hdr (UDP segmentation\n"
"                                     by the kernel or the NIC)\n"
"                       auto          what libgso picks for IF\n"
"                       kernel        a kernel UDP socket: recvmmsg, sendmsg with\n"
"                                     UDP_SEGMENT (no libgso; the reference)\n"
"  --pacing edt|rate  how ngtcp2's pacing schedule reaches the wire (default edt):\n"
"                       edt   each super-segment carries its departure time\n"
"                             (gso_dgram__send_at): it is written up to 1 ms\n"
"                             early and the engine holds it until then\n"
"                       rate  the flow's rate follows ngtcp2's pacing rate\n"
"                             (gso_dgram__set_rate) and the engine spaces them\n"
"                     (--mode kernel sends at once either way)\n"
"  --cc cubic|reno|bbr  ngtcp2's congestion control (default cubic)\n"
"  --idle-timeout S   the QUIC idle timeout (default %d)\n"
"  --max-conns N      connections at once (default %u); more are not answered\n"
"  --conn-bufs N      send buffers (64 KiB, one super-segment each) a connection\n"
"                     may have in flight (default %u)\n"
"  --write-delay US   after a receive pass, wait US microseconds before writing,\n"
"                     so that more ACKs open the window at once and the\n"
"                     super-segments are larger (default %u: at once)\n"
"  --ready FILE       write FILE (\"ADDR PORT\\n\") once listening\n"
"  --json FILE        at exit, write statistics to FILE: connections, requests by\n"
"                     status, bytes served, datagrams and super-segments, the\n"
"                     departure error against ngtcp2's schedule (median, p99,\n"
"                     max), the listener's and the engine's counters and the\n"
"                     device buffer accounting\n"
"  -q, --quiet        no start and exit lines on stderr\n"
"  -v, --verbose      ngtcp2's log on stderr (much)\n"
"  -h, --help         this text\n"
"\n"
"SIGTERM or SIGINT: close every connection (CONNECTION_CLOSE), let those\n"
"packets leave (at most 1 s), free everything, write --json, exit.\n"
"\n"
"Exit: 0 stopped by a signal, every device buffer back; 1 the interface went\n"
"away, or buffers were missing at exit; 2 bad options or setup failure.\n",
		DEF_PORT, DEF_IDLE_S, DEF_MAX_CONNS, DEF_CONN_BUFS, DEF_WRITE_DELAY_US);
}

/* Fatal errors and option values (tools/common/tool_util.h), named for this program. */
#define die(...) tool_die("gsoquicd", __VA_ARGS__)
#define num(name, v, lo, hi) tool_opt_u64("gsoquicd", name, v, lo, hi)

enum { O_IFNAME = 256, O_LISTEN, O_PORT, O_ROOT, O_KEY, O_CERT, O_MODE, O_PACING, O_CC, O_IDLE, O_MAXC, O_BUFS,
       O_JSON, O_READY, O_WDELAY };

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "ifname", required_argument, 0, O_IFNAME },
		{ "listen", required_argument, 0, O_LISTEN },
		{ "port", required_argument, 0, O_PORT },
		{ "root", required_argument, 0, O_ROOT },
		{ "key", required_argument, 0, O_KEY },
		{ "cert", required_argument, 0, O_CERT },
		{ "mode", required_argument, 0, O_MODE },
		{ "pacing", required_argument, 0, O_PACING },
		{ "cc", required_argument, 0, O_CC },
		{ "idle-timeout", required_argument, 0, O_IDLE },
		{ "max-conns", required_argument, 0, O_MAXC },
		{ "conn-bufs", required_argument, 0, O_BUFS },
		{ "write-delay", required_argument, 0, O_WDELAY },
		{ "json", required_argument, 0, O_JSON },
		{ "ready", required_argument, 0, O_READY },
		{ "quiet", no_argument, 0, 'q' },
		{ "verbose", no_argument, 0, 'v' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c;

	*o = (struct opts){ .port = DEF_PORT, .mode = M_AUTO, .pacing = PACE_EDT, .cc = NGTCP2_CC_ALGO_CUBIC,
			    .max_conns = DEF_MAX_CONNS, .conn_bufs = DEF_CONN_BUFS, .idle_s = DEF_IDLE_S,
			    .write_delay_us = DEF_WRITE_DELAY_US };
	while ((c = getopt_long(argc, argv, "qvh", lo, NULL)) != -1) {
		switch (c) {
		case O_IFNAME: o->ifname = optarg; break;
		case O_LISTEN: o->listen = optarg; break;
		case O_PORT: o->port = (uint16_t)num("port", optarg, 1, 65535); break;
		case O_ROOT: o->root = optarg; break;
		case O_KEY: o->key = optarg; break;
		case O_CERT: o->cert = optarg; break;
		case O_MODE:
			o->mode = -1;
			for (int m = 0; m < M_COUNT; m++)
				if (!strcmp(optarg, mode_names[m]))
					o->mode = m;
			if (o->mode < 0)
				die(TOOL_EXIT_USAGE, 0,
				    "bad --mode '%s' (auto, software, csum, multibuf, offload-vnet or kernel)", optarg);
			break;
		case O_PACING:
			if (!strcmp(optarg, "edt"))
				o->pacing = PACE_EDT;
			else if (!strcmp(optarg, "rate"))
				o->pacing = PACE_RATE;
			else
				die(TOOL_EXIT_USAGE, 0, "bad --pacing '%s' (edt or rate)", optarg);
			break;
		case O_CC:
			if (!strcmp(optarg, "cubic"))
				o->cc = NGTCP2_CC_ALGO_CUBIC;
			else if (!strcmp(optarg, "reno"))
				o->cc = NGTCP2_CC_ALGO_RENO;
			else if (!strcmp(optarg, "bbr"))
				o->cc = NGTCP2_CC_ALGO_BBR;
			else
				die(TOOL_EXIT_USAGE, 0, "bad --cc '%s' (cubic, reno or bbr)", optarg);
			break;
		case O_IDLE: o->idle_s = num("idle-timeout", optarg, 1, 3600); break;
		case O_MAXC: o->max_conns = (uint32_t)num("max-conns", optarg, 1, 65536); break;
		case O_BUFS: o->conn_bufs = (uint32_t)num("conn-bufs", optarg, 2, 1024); break;
		case O_WDELAY: o->write_delay_us = num("write-delay", optarg, 0, 10000); break;
		case O_JSON: o->json = optarg; break;
		case O_READY: o->ready = optarg; break;
		case 'q': o->quiet = true; break;
		case 'v': o->verbose = true; break;
		case 'h': usage(stdout); exit(TOOL_EXIT_OK);
		default: usage(stderr); exit(TOOL_EXIT_USAGE);
		}
	}
	if (optind != argc)
		die(TOOL_EXIT_USAGE, 0, "unexpected argument '%s' (--help)", argv[optind]);
	if (!o->listen || !o->root || !o->key || !o->cert)
		die(TOOL_EXIT_USAGE, 0, "--listen, --root, --key and --cert are required (--help)");
	if (o->mode != M_KERNEL && !o->ifname)
		die(TOOL_EXIT_USAGE, 0, "--ifname is required for --mode %s (--help)", mode_names[o->mode]);
}


/* ---- the report ------------------------------------------------------------------------ */

#define KV(f, name, v) fprintf(f, "%s\"%s\": %" PRIu64, sep, name, (uint64_t)(v)), sep = ", "

static void write_json(const struct opts *o, const struct server *s, const struct qio_report *r, const int fds[2])
{
	const struct srv_counters *k = &s->c;
	const char *sep = "";
	FILE *f = fopen(o->json, "w");

	if (!f) {
		fprintf(stderr, "gsoquicd: --json %s: %s\n", o->json, strerror(errno));
		return;
	}
	fprintf(f, "{\"tool\": \"gsoquicd\", \"mode\": \"%s\", \"path\": \"%s\", \"path_reason\": \"%s\", "
		   "\"pacing\": \"%s\", \"ifname\": \"%s\", \"listen\": \"%s\", \"port\": %u,\n",
		mode_names[o->mode], r->path ? r->path : "", r->reason ? r->reason : "",
		o->mode == M_KERNEL ? "none" : o->pacing == PACE_EDT ? "edt" : "rate", o->ifname ? o->ifname : "",
		o->listen, o->port);
	fputs(" \"connections\": {", f);
	KV(f, "accepted", k->accepted);
	KV(f, "closed", k->closed);
	KV(f, "idle_timeouts", k->timed_out);
	KV(f, "handshake_timeouts", k->handshake_timeouts);
	KV(f, "draining", k->draining);
	KV(f, "errors", k->errors);
	KV(f, "refused", k->refused);
	KV(f, "closed_at_exit", k->closed_at_exit);
	KV(f, "open_at_exit", s->nconns);
	KV(f, "max_open", k->max_conns_seen);
	KV(f, "path_validations", k->path_validations);
	KV(f, "path_opens", k->path_opens);
	KV(f, "path_evictions", k->path_evictions);
	fprintf(f, "},\n \"requests\": %" PRIu64 ", \"status\": {\"200\": %" PRIu64 ", \"400\": %" PRIu64
		   ", \"403\": %" PRIu64 ", \"404\": %" PRIu64 ", \"405\": %" PRIu64 ", \"414\": %" PRIu64
		   ", \"500\": %" PRIu64 "}, \"bytes_served\": %" PRIu64 ", \"bytes_acked\": %" PRIu64
		   ", \"responses_aborted\": %" PRIu64 ",\n",
		k->requests, k->st200, k->st400, k->st403, k->st404, k->st405, k->st414, k->st500, k->bytes_served,
		k->bytes_acked, k->responses_aborted);
	fputs(" \"rx\": {", f);
	sep = "";
	KV(f, "datagrams", k->rx_datagrams);
	KV(f, "bytes", k->rx_bytes);
	KV(f, "garbage", k->rx_garbage);
	KV(f, "unknown_cid", k->rx_unknown);
	KV(f, "to_closing", k->rx_closing);
	KV(f, "stateless_resets", k->stateless_resets);
	KV(f, "version_negotiations", k->version_negotiations);
	fputs("},\n \"tx\": {", f);
	sep = "";
	KV(f, "send_calls", k->tx_send_calls);
	KV(f, "supers", k->tx_supers);
	KV(f, "datagrams", k->tx_datagrams);
	KV(f, "bytes", k->tx_bytes);
	fprintf(f, ", \"datagrams_per_super\": %.2f", k->tx_supers ? (double)k->tx_datagrams / (double)k->tx_supers : 0.0);
	sep = ", ";
	KV(f, "errors", k->tx_errors);
	KV(f, "dropped", k->tx_dropped);
	KV(f, "buffer_waits", k->buf_waits);
	KV(f, "close_resends", k->close_resends);
	KV(f, "no_path_drops", k->no_path_drops);
	KV(f, "buffers_allocated", s->bufs_alloc);
	KV(f, "batch_end_quantum", k->end_quantum);
	KV(f, "batch_end_short", k->end_short);
	KV(f, "batch_end_empty", k->end_empty);
	KV(f, "batch_end_spill", k->end_spill);
	KV(f, "loop_stops", k->loop_stops);
	KV(f, "recv_done", k->recv_done);
	KV(f, "dirty_after_run", k->dirty_after_run);
	fputs("},\n \"departure_error_ns\": {", f);
	sep = "";
	KV(f, "count", s->dep.n);
	KV(f, "mean", s->dep.n ? s->dep.sum / s->dep.n : 0);
	KV(f, "median", hist_quantile(&s->dep, 0.5));
	KV(f, "p90", hist_quantile(&s->dep, 0.9));
	KV(f, "p99", hist_quantile(&s->dep, 0.99));
	KV(f, "max", s->dep.max);
	KV(f, "early_max", s->early_max);
	/* Lateness alone (early counts as 0), in us, as bench/bench_quic.sh reads it. */
	fprintf(f, "},\n \"supers_sent\": %" PRIu64 ", \"depart_late_p50_us\": %.1f, \"depart_late_p99_us\": %.1f, "
		   "\"depart_late_max_us\": %.1f", k->tx_supers, (double)hist_quantile(&s->late, 0.5) / 1e3,
		(double)hist_quantile(&s->late, 0.99) / 1e3, (double)s->late.max / 1e3);
	fputs(",\n \"last_conn\": {", f);
	sep = "";
	if (s->have_last_stat) {
		const ngtcp2_conn_stat *cs = &s->last_stat;

		KV(f, "min_rtt_ns", cs->min_rtt);
		KV(f, "smoothed_rtt_ns", cs->smoothed_rtt);
		KV(f, "cwnd", cs->cwnd);
		KV(f, "ssthresh", cs->ssthresh);
		KV(f, "pacing_rate_Bps", (uint64_t)(cs->pacing_rate * 1e9));
		KV(f, "delivery_rate_Bps", cs->delivery_rate_sec);
		KV(f, "send_quantum", cs->send_quantum);
		KV(f, "max_tx_udp_payload_size", cs->max_tx_udp_payload_size);
	}
	/* The I/O backend's own counters: what it sent, and (kernel) what it read. */
	fputs("},\n \"io\": {", f);
	sep = "";
	if (!r->have_listener) {
		KV(f, "rx_datagrams", r->rx_datagrams);
		KV(f, "rx_bytes", r->rx_bytes);
		KV(f, "rx_passes", r->rx_passes);
		KV(f, "rx_truncated", r->rx_truncated);
	}
	KV(f, "tx_calls", r->tx_calls);
	KV(f, "tx_supers", r->tx_supers);
	KV(f, "tx_datagrams", r->tx_datagrams);
	KV(f, "tx_errors", r->tx_errors);
	KV(f, "tx_blocked", r->tx_blocked);
	KV(f, "once_sent", r->once_sent);
	KV(f, "once_dropped", r->once_dropped);
	/* libgso: the datagram listener (gso_dgram_listener__info). */
	fputs("},\n \"listener\": {", f);
	sep = "";
	if (r->have_listener) {
		KV(f, "datagrams", r->rx_datagrams);
		KV(f, "bytes", r->rx_bytes);
		KV(f, "passes", r->rx_passes);
		KV(f, "bad_csum", r->rx_bad_csum);
		KV(f, "bad_len", r->rx_bad_len);
		KV(f, "csum_partial", r->rx_csum_partial);
	}
	fputs("},\n \"engine\": {", f);
	sep = "";
	if (r->have_engine) {
		KV(f, "polls", r->e_polls);
		KV(f, "waits", r->e_waits);
		KV(f, "submits", r->e_submits);
		KV(f, "supers", r->e_supers);
		KV(f, "frames", r->e_frames);
		KV(f, "backpressure", r->e_backpressure);
		KV(f, "kicks", r->e_kicks);
		KV(f, "rx_frames", r->e_rx_frames);
		KV(f, "rx_other", r->e_rx_other);
		KV(f, "late_ns_max", r->e_late_ns_max);
		KV(f, "behind_events", r->e_behind_events);
		KV(f, "lost_ns", r->e_lost_ns);
		KV(f, "link_down", r->e_link_down);
		KV(f, "link_up", r->e_link_up);
	}
	fputs("},\n \"umem\": {", f);
	sep = "";
	KV(f, "chunks_total", r->chunks_total);
	KV(f, "chunks_free", r->chunks_free);
	fprintf(f, ", \"balanced\": %s},\n \"fds\": {\"at_start\": %d, \"at_exit\": %d}, \"dev_gone\": %s}\n",
		r->balanced ? "true" : "false", fds[0], fds[1], r->dev_gone ? "true" : "false");
	if (fclose(f))
		fprintf(stderr, "gsoquicd: --json %s: %s\n", o->json, strerror(errno));
}

/* ---- main -------------------------------------------------------------------------------- */

static volatile sig_atomic_t stop_sig;
static struct qio *sig_io;

static void on_signal(int sig)
{
	(void)sig;
	stop_sig++;
	if (sig_io)
		qio_stop(sig_io); /* an atomic store (and for libgso a write(2)) */
}

/* Run the I/O until the earliest timer (or `cap`), then the timers.  false: the interface is gone. */
static bool turn(struct server *s, uint64_t cap)
{
	uint64_t next = server_next_expiry(s);
	int err;

	if (next > cap)
		next = cap;
	s->run_until = next;
	s->in_run = true;
	err = qio_run(s->io, next);
	s->in_run = false;
	server_timers(s, qio_now_ns());
	return err != -ENODEV;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct server s;
	struct srv_opts so;
	struct qio_report rep = { 0 };
	struct qio_cfg cfg = { 0 };
	struct stat st;
	char err[512] = "";
	bool alive = true;
	int e, fds[2];

	parse_args(argc, argv, &o);
	fds[0] = tool_count_fds();
	signal(SIGPIPE, SIG_IGN);
	memset(cfg.addr, 0, sizeof(cfg.addr));
	if (inet_pton(AF_INET, o.listen, cfg.addr) == 1)
		cfg.family = AF_INET;
	else if (inet_pton(AF_INET6, o.listen, cfg.addr) == 1)
		cfg.family = AF_INET6;
	else
		die(TOOL_EXIT_USAGE, 0, "bad --listen '%s' (an IPv4 or IPv6 address)", o.listen);
	if (o.ifname) {
		cfg.ifindex = gso_ifindex(o.ifname);
		if (cfg.ifindex < 0)
			die(TOOL_EXIT_USAGE, cfg.ifindex, "interface '%s'", o.ifname);
	}
	so = (struct srv_opts){ .max_conns = o.max_conns, .conn_bufs = o.conn_bufs,
				.max_bufs = o.max_conns * o.conn_bufs < DEF_MAX_BUFS ? o.max_conns * o.conn_bufs
										      : DEF_MAX_BUFS,
				.idle_ns = o.idle_s * 1000000000ull, .write_delay_ns = o.write_delay_us * 1000,
				.cc = o.cc, .pacing = o.pacing,
				.edt_io = o.mode != M_KERNEL, .family = cfg.family, .verbose = o.verbose };
	if (so.max_bufs < o.conn_bufs)
		so.max_bufs = o.conn_bufs;
	if (server_init(&s, &so, err, sizeof(err)))
		die(TOOL_EXIT_USAGE, ENOMEM, "%s", err);
	s.root_fd = open(o.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s.root_fd < 0 || fstat(s.root_fd, &st))
		die(TOOL_EXIT_USAGE, errno, "--root %s", o.root);
	if (quic_tls_init(&s.tls, o.key, o.cert, err, sizeof(err)))
		die(TOOL_EXIT_USAGE, 0, "%s", err);

	cfg.backend = o.mode == M_KERNEL ? QIO_KERNEL : QIO_GSO;
	cfg.gso_path = mode_path[o.mode];
	cfg.port = o.port;
	cfg.max_flows = o.max_conns * MAX_PATHS;
	/* A flow holds at most what its connection may have in flight (and a CONNECTION_CLOSE). */
	cfg.flow_queue = o.conn_bufs + 2;
	cfg.cb = (struct qio_callbacks){ .on_recv = server_on_recv, .on_recv_done = server_on_recv_done,
					 .on_sent = server_on_sent };
	cfg.ctx = &s;
	e = qio_open(&s.io, &cfg, err, sizeof(err));
	if (e)
		die(TOOL_EXIT_USAGE, e, "%s on %s", err, o.ifname ? o.ifname : o.listen);

	sig_io = s.io;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	tool_write_ready("gsoquicd", o.ready, o.listen, o.port);
	if (!o.quiet)
		fprintf(stderr, "gsoquicd: serving %s on %s port %u (HTTP/3), mode %s%s%s, pacing %s\n", o.root,
			o.listen, o.port, mode_names[o.mode], o.ifname ? " on " : "", o.ifname ? o.ifname : "",
			o.mode == M_KERNEL ? "ngtcp2's timer" : o.pacing == PACE_EDT ? "edt" : "rate");
	while (!stop_sig && alive)
		alive = turn(&s, qio_now_ns() + 1000000000ull);

	/* Close every connection; let the CONNECTION_CLOSE packets leave. */
	if (alive) {
		uint64_t end = qio_now_ns() + SHUTDOWN_NS;

		server_shutdown(&s);
		while (alive && !server_quiet(&s) && stop_sig < 3 && qio_now_ns() < end)
			alive = turn(&s, end);
	}
	sig_io = NULL;
	server_drop_conns(&s);
	qio_close(s.io, &rep);
	qio_destroy(s.io);
	quic_tls_free(&s.tls);
	close(s.root_fd);
	if (!alive)
		rep.dev_gone = true;
	fds[1] = tool_count_fds();
	if (o.json)
		write_json(&o, &s, &rep, fds);
	if (!o.quiet)
		fprintf(stderr, "gsoquicd: %" PRIu64 " connections, %" PRIu64 " requests, %" PRIu64
			" bytes served; %" PRIu64 " datagrams in %" PRIu64 " super-segments; device buffers %s\n",
			s.c.accepted, s.c.requests, s.c.bytes_served, s.c.tx_datagrams, s.c.tx_supers,
			rep.balanced ? "all back" : "NOT all back");
	server_free(&s);
	if (rep.dev_gone) {
		fprintf(stderr, "gsoquicd: %s went away\n", o.ifname ? o.ifname : "the interface");
		return EXIT_FAIL;
	}
	return rep.balanced ? TOOL_EXIT_OK : EXIT_FAIL;
}
