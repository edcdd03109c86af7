/*
 * gsohttpd: a static file server over libgso's own TCP.  HTTP/1.1 GET and
 * HEAD of the files under --root, with Content-Length, keep-alive and
 * pipelining, served from an AF_XDP (or virtio_net_hdr) transmit engine
 * whose listener (<gso/engine.h>, "Listeners") takes the connections: the
 * steering program hands every segment to --listen ADDR:--port to the
 * engine, so the kernel's TCP never sees them.
 *
 * One engine on this thread (gso_engine__open_path on --mode), or with
 * --queues N > 1 a port (<gso/port.h>): an engine per queue on a worker
 * thread of its own, each with its own listener (gso_port__listen), its
 * connections and its counters; nothing is shared between workers.
 *
 * Per connection, on its engine's thread:
 *   GSO_EV_LISTENER_READY  accept until -EAGAIN (gso_listener__accept)
 *   GSO_EV_STREAM_READABLE read into the request buffer (gso_stream__read;
 *                          a request body is dropped with __peek/__consume)
 *                          and parse (tools/common/http_req.c); the path is
 *                          opened beneath the root by the kernel's rules
 *                          (tools/common/file_path.c: openat2 with
 *                          RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) and
 *                          mapped (mmap)
 *   GSO_EV_STREAM_WRITABLE the response: header bytes, then the mapping,
 *                          copied into the room gso_stream__reserve gives
 *                          and gso_stream__commit'ed, until -EAGAIN or
 *                          -ENOBUFS; then the next pipelined request
 *   GSO_EV_STREAM_PEER_CLOSED  answer what was asked, then shutdown (FIN)
 *   GSO_EV_STREAM_CLOSED   gso_stream__close and free
 * The request buffer is HTTP_REQ_MAX_HEAD (16 KiB): while a response is
 * being sent nothing more is read (the peer's window closes), and a head
 * that does not end within 16 KiB is answered 431 (414 when the request
 * line alone does not) and the connection closed.  A directory is served
 * as its index.html, else 404.
 *
 * Copies per byte served.  The file's pages are mapped, not read: the
 * only copy this program makes is from the mapping into the room
 * gso_stream__reserve gives, which is device memory (the flow send queue
 * keeps it for retransmission).  After that, by --mode (the path that
 * runs; see <gso/engine.h>):
 *   software   AF_XDP, whole frames: the library copies each segment into
 *              a frame of UMEM while it computes the checksum (a second
 *              copy in this process), and in copy mode (veth, drivers
 *              without zero-copy) the kernel copies the frame into an skb
 *              (a third): 3 per byte, 2 in user space; 2 with a zero-copy
 *              driver.
 *   csum       as software, the checksum left to the device: 3 per byte in
 *              copy mode (the kernel sums the skb after its copy), 2 with
 *              a zero-copy driver.
 *   multibuf   AF_XDP, header + payload reference: the frames point into
 *              the reserved room, no second user-space copy: 2 per byte in
 *              copy mode (ours, the kernel's into the skb), 1 zero-copy.
 *   offload-vnet  the room is the virtio_net_hdr device's plain buffer
 *              memory.  On a NIC the backend copies each super-segment
 *              into its AF_PACKET TX ring at submit (a second copy in this
 *              process) and the kernel references the ring's pages in the
 *              skb, which the NIC DMAs: 2 per byte.  On a veth, whose
 *              crossing would copy those pages again (skb_orphan_frags),
 *              gso_engine__open_path takes sendmmsg instead: the kernel
 *              copies from our room into the skb once, 2 per byte.
 *              Segmentation in the NIC or the stack adds no copy.
 * A retransmission copies again from the held room (not from the file).
 * The e1000 model (offload-e1000 of bench/sender) is not offered: it is
 * built for bench and tests and not installed, and its wire needs an
 * AF_XDP queue of its own, chosen per connection after the handshake.
 *
 * A file truncated while it is served would raise SIGBUS in the copy: it
 * is caught for that copy alone, and the connection is reset (its
 * Content-Length can no longer be met).
 *
 * Exit: 0 after SIGTERM/SIGINT with every connection closed and every
 * device buffer back (--json says so); 1 the interface went away, or
 * buffers were missing at exit; 2 bad options or setup failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gso/cc.h>
#include <gso/engine.h>
#include <gso/evloop.h>
#include <gso/ifcaps.h>
#include <gso/port.h>

#include "file_path.h"
#include "http_req.h"
#include "tool_util.h"

#define DEF_PORT 8080
#define DEF_IDLE_S 60
#define DEF_MAX_CONNS 1024u
#define RCVBUF (64u << 10)          /* per connection: requests are small */
#define DRAIN_NS 2000000000ull      /* at exit, time for responses under way to finish */
#define HDR_MAX 512
#define LINGER_MAX (4u << 20)     /* bytes dropped after our FIN before the connection is reset */
#define EXIT_FAIL 1

enum { M_SOFTWARE, M_CSUM, M_MULTIBUF, M_VNET, M_AUTO, M_COUNT };
static const char *const mode_names[M_COUNT] = { "software", "csum", "multibuf", "offload-vnet", "auto" };
static const uint32_t mode_path[M_COUNT] = { GSO_PATH_SOFTWARE, GSO_PATH_CSUM, GSO_PATH_MULTIBUF,
					     GSO_PATH_OFFLOAD_VNET, GSO_PATH_AUTO };

struct opts {
	const char *ifname, *listen, *root, *json, *ready;
	int mode;
	uint16_t port;
	uint32_t queues, max_conns, cc;
	uint64_t idle_s;
	bool quiet;
};

/* Statuses counted, in the order the JSON lists them. */
static const unsigned statuses[] = { 200, 400, 403, 404, 405, 413, 414, 431, 500, 501, 505 };
#define NSTATUS (sizeof(statuses) / sizeof(statuses[0]))

struct counters {
	uint64_t requests, by_status[NSTATUS], body_bytes, header_bytes;
	uint64_t accepted, closed, reset, timed_out, failed, aborted, forced, at_limit, bus_errors, idle_closed;
};

struct worker;

struct conn {
	struct worker *w;
	struct gso_stream *s;
	struct conn *prev, *next;
	/* the response under way */
	char hdr[HDR_MAX];
	uint32_t hdr_len, hdr_off;
	uint8_t *map;          /* the file's mapping (NULL: no body, or an error's body in hdr) */
	size_t map_len;
	uint64_t body_off, body_len;
	bool busy;             /* a response is under way */
	bool close_after;      /* FIN once it is sent */
	bool eof;              /* the peer's FIN read */
	bool shut;             /* our FIN asked for */
	bool freeing;          /* in gso_stream__close: events for it are stale */
	bool in_pump, again;   /* pump() runs (events come at once from calls made in it) */
	bool ended;            /* to free when pump() returns */
	uint64_t discard;      /* request body bytes still to drop */
	uint64_t dropped;      /* bytes dropped after our FIN */
	uint64_t last_ns;      /* the last event of the connection (for --idle-timeout) */
	uint32_t req_len;
	char req[HTTP_REQ_MAX_HEAD];
};

struct worker {
	const struct opts *o;
	int root_fd;
	uint32_t q;
	struct gso_listener *l; /* this engine's (for accepting again once under --max-conns) */
	struct conn *conns;    /* open connections, a list */
	uint32_t nconns;
	bool draining;
	bool at_limit;         /* connections wait in the backlog: accept when one closes */
	bool have_linfo;
	struct gso_listener_info linfo;
	struct counters c;
	time_t date_t;
	char date[40];
};

static atomic_uint open_conns; /* over all workers, for the main thread's wait at exit */
static atomic_bool dev_gone;   /* GSO_EV_DEV_GONE on any engine */

/* ---- options ------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: gsohttpd --ifname IF --listen ADDR --root DIR [options]\n"
"\n"
"Serve the files under DIR over HTTP/1.1 (GET and HEAD, keep-alive,\n"
"pipelining) on ADDR:PORT, with libgso's own TCP on an AF_XDP (or\n"
"virtio_net_hdr) transmit engine: an XDP program hands the connections'\n"
"segments to it, the kernel's TCP never sees them.  ADDR must be an address\n"
"of IF (the kernel still answers ARP and neighbour discovery for it).\n"
"\n"
"  --ifname IF        interface to serve on (required)\n"
"  --listen ADDR      local IPv4 or IPv6 address (required)\n"
"  --port P           TCP port (default %d)\n"
"  --root DIR         directory served (required).  Paths are resolved by the\n"
"                     kernel beneath it (openat2, RESOLVE_BENEATH): '..', encoded\n"
"                     dots and slashes, NUL, and symlinks that leave it are\n"
"                     refused (403 or 404).  A directory is served as its\n"
"                     index.html, else 404.\n"
"  --mode MODE        transmit path (default auto):\n"
"                       software      AF_XDP, whole frames, software checksums\n"
"                       csum          AF_XDP, whole frames, checksum metadata\n"
"                       multibuf      AF_XDP, header + payload reference frames\n"
"                       offload-vnet  AF_PACKET + virtio_net_hdr: the kernel/NIC\n"
"                                     segments (one engine only)\n"
"                       auto          what the library picks for IF\n"
"                     (offload-e1000, a model for bench and tests, is not offered)\n"
"  --queues N         N > 1: one engine per queue 0..N-1, each on a thread of its\n"
"                     own (a port, gso_port__listen); default 1: one engine here\n"
"  --cc reno|cubic|bbr  congestion control of the connections (default cubic)\n"
"  --idle-timeout S   a connection quiet for S s between requests gets our FIN\n"
"                     (checked every second), and one whose client stays silent\n"
"                     for S s while we wait for it is ended (default %d)\n"
"  --max-conns N      connections open at once per engine (per queue with\n"
"                     --queues; default %u); more wait in the listener's backlog\n"
"  --ready FILE       write FILE (\"ADDR PORT\\n\") once listening\n"
"  --json FILE        at exit, write statistics to FILE: requests by status,\n"
"                     bytes served, connections accepted/closed/reset, the\n"
"                     listener's and the engine's counters (summed over the\n"
"                     queues), the device buffer accounting (every chunk back)\n"
"                     and open descriptors\n"
"  -q, --quiet        no start and exit lines on stderr\n"
"  -h, --help         this text\n"
"\n"
"Requests: GET and HEAD (other methods 405 or 501), HTTP/1.0 and 1.1 (others\n"
"505), a head of at most %u bytes (else 431, or 414 for the request line);\n"
"a malformed request is 400.  Every error but 404 and 403 closes the\n"
"connection.  HTTP/1.1 keeps the connection open unless 'Connection: close',\n"
"HTTP/1.0 closes it unless 'Connection: keep-alive'.\n"
"\n"
"SIGTERM or SIGINT: stop accepting, let responses under way finish (at most\n"
"2 s), close every connection and the engine, write --json, exit.\n"
"\n"
"Exit: 0 stopped by a signal, every device buffer back; 1 the interface went\n"
"away, or buffers were missing at exit; 2 bad options or setup failure.\n",
		DEF_PORT, DEF_IDLE_S, DEF_MAX_CONNS, HTTP_REQ_MAX_HEAD);
}

/* Fatal errors and option values (tools/common/tool_util.h), named for this program. */
#define die(...) tool_die("gsohttpd", __VA_ARGS__)
#define num(name, v, lo, hi) tool_opt_u64("gsohttpd", name, v, lo, hi)

enum { O_IFNAME = 256, O_LISTEN, O_PORT, O_ROOT, O_MODE, O_QUEUES, O_JSON, O_READY, O_CC, O_IDLE, O_MAXC };

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "ifname", required_argument, 0, O_IFNAME },
		{ "listen", required_argument, 0, O_LISTEN },
		{ "port", required_argument, 0, O_PORT },
		{ "root", required_argument, 0, O_ROOT },
		{ "mode", required_argument, 0, O_MODE },
		{ "queues", required_argument, 0, O_QUEUES },
		{ "json", required_argument, 0, O_JSON },
		{ "ready", required_argument, 0, O_READY },
		{ "cc", required_argument, 0, O_CC },
		{ "idle-timeout", required_argument, 0, O_IDLE },
		{ "max-conns", required_argument, 0, O_MAXC },
		{ "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c;

	*o = (struct opts){ .port = DEF_PORT, .mode = M_AUTO, .queues = 1, .max_conns = DEF_MAX_CONNS,
			    .cc = GSO_CC_CUBIC, .idle_s = DEF_IDLE_S };
	while ((c = getopt_long(argc, argv, "qh", lo, NULL)) != -1) {
		switch (c) {
		case O_IFNAME: o->ifname = optarg; break;
		case O_LISTEN: o->listen = optarg; break;
		case O_PORT: o->port = (uint16_t)num("port", optarg, 1, 65535); break;
		case O_ROOT: o->root = optarg; break;
		case O_MODE:
			o->mode = -1;
			for (int m = 0; m < M_COUNT; m++)
				if (!strcmp(optarg, mode_names[m]))
					o->mode = m;
			if (o->mode < 0)
				die(TOOL_EXIT_USAGE, 0, "bad --mode '%s' (software, csum, multibuf, offload-vnet or auto%s)",
				    optarg, strcmp(optarg, "offload-e1000") ? "" :
				    "; the e1000 model is for bench and tests, not installed");
			break;
		case O_QUEUES: o->queues = (uint32_t)num("queues", optarg, 1, GSO_PORT_MAX_QUEUES); break;
		case O_JSON: o->json = optarg; break;
		case O_READY: o->ready = optarg; break;
		case O_CC:
			if (!strcmp(optarg, "reno"))
				o->cc = GSO_CC_RENO;
			else if (!strcmp(optarg, "cubic"))
				o->cc = GSO_CC_CUBIC;
			else if (!strcmp(optarg, "bbr"))
				o->cc = GSO_CC_BBR;
			else
				die(TOOL_EXIT_USAGE, 0, "bad --cc '%s' (reno, cubic or bbr)", optarg);
			break;
		case O_IDLE: o->idle_s = num("idle-timeout", optarg, 1, 86400); break;
		case O_MAXC: o->max_conns = (uint32_t)num("max-conns", optarg, 1, GSO_ENGINE_MAX_FLOWS / 2); break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); exit(TOOL_EXIT_OK);
		default: usage(stderr); exit(TOOL_EXIT_USAGE);
		}
	}
	if (optind != argc)
		die(TOOL_EXIT_USAGE, 0, "unexpected argument '%s' (--help)", argv[optind]);
	if (!o->ifname || !o->listen || !o->root)
		die(TOOL_EXIT_USAGE, 0, "--ifname, --listen and --root are required (--help)");
	if (o->queues > 1 && o->mode == M_VNET)
		die(TOOL_EXIT_USAGE, 0, "--queues > 1 needs an AF_XDP mode (software, csum, multibuf or auto)");
}

/* ---- file bytes, guarded against SIGBUS (a file truncated under its mapping) ---- */

static _Thread_local sigjmp_buf bus_jmp;
static _Thread_local volatile sig_atomic_t bus_armed;

static void on_sigbus(int sig)
{
	if (bus_armed)
		siglongjmp(bus_jmp, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int copy_file_bytes(void *dst, const void *src, size_t n)
{
	if (sigsetjmp(bus_jmp, 0)) {
		bus_armed = 0;
		return -EIO;
	}
	bus_armed = 1;
	memcpy(dst, src, n);
	bus_armed = 0;
	return 0;
}

/* ---- responses ----------------------------------------------------------- */

static const char *content_type(const char *path)
{
	static const char *const types[][2] = {
		{ "html", "text/html; charset=utf-8" }, { "htm", "text/html; charset=utf-8" },
		{ "txt", "text/plain; charset=utf-8" }, { "css", "text/css" },
		{ "js", "text/javascript" },            { "json", "application/json" },
		{ "png", "image/png" },                 { "jpg", "image/jpeg" },
		{ "jpeg", "image/jpeg" },               { "gif", "image/gif" },
		{ "svg", "image/svg+xml" },             { "pdf", "application/pdf" },
		{ "wasm", "application/wasm" },
	};
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');

	if (dot && (!slash || dot > slash))
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (!strcasecmp(dot + 1, types[i][0]))
				return types[i][1];
	return "application/octet-stream";
}

static const char *date_now(struct worker *w)
{
	time_t t = time(NULL);
	struct tm tm;

	if (t != w->date_t && gmtime_r(&t, &tm)) {
		strftime(w->date, sizeof(w->date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		w->date_t = t;
	}
	return w->date;
}

static void count_status(struct counters *c, unsigned status)
{
	for (size_t i = 0; i < NSTATUS; i++)
		if (statuses[i] == status)
			c->by_status[i]++;
}

/*
 * Start the response: its header (and for an error, its short body) in
 * c->hdr, the file's mapping for a 200 GET.  `r` NULL: a refused request.
 */
static void start_response(struct conn *c, unsigned status, const struct http_req *r, const char *rel,
			   const struct stat *st, int fd)
{
	struct worker *w = c->w;
	bool head = r && r->method == HTTP_M_HEAD;
	const char *text = http_status_text(status);
	char body[64] = "";
	uint64_t len;
	int n;

	c->close_after = !r || !r->keep_alive || (status != 200 && status != 404 && status != 403) ||
			 w->draining;
	c->map = NULL;
	c->map_len = 0;
	c->body_off = c->body_len = 0;
	if (status == 200) {
		len = (uint64_t)st->st_size;
		if (!head && len) {
			void *m = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, 0);

			if (m == MAP_FAILED) {
				close(fd);
				start_response(c, 500, r, rel, NULL, -1);
				return;
			}
			madvise(m, (size_t)len, MADV_SEQUENTIAL);
			c->map = m;
			c->map_len = (size_t)len;
			c->body_len = len;
		}
		close(fd);
	} else {
		snprintf(body, sizeof(body), "%u %s\n", status, text);
		len = strlen(body);
	}
	n = snprintf(c->hdr, sizeof(c->hdr),
		     "HTTP/1.1 %u %s\r\nServer: gsohttpd\r\nDate: %s\r\nContent-Type: %s\r\n"
		     "Content-Length: %" PRIu64 "\r\n%sConnection: %s\r\n\r\n%s",
		     status, text, date_now(w), status == 200 ? content_type(rel) : "text/plain; charset=utf-8",
		     len, status == 405 ? "Allow: GET, HEAD\r\n" : "", c->close_after ? "close" : "keep-alive",
		     head ? "" : body);
	c->hdr_len = n > 0 && n < (int)sizeof(c->hdr) ? (uint32_t)n : 0;
	c->hdr_off = 0;
	c->busy = true;
	w->c.requests++;
	count_status(&w->c, status);
}

/* One parsed (or refused) request: resolve, open, start the response. */
static void handle_request(struct conn *c, int parsed, const struct http_req *r)
{
	char rel[PATH_MAX];
	struct stat st = { 0 };
	unsigned status;
	int fd = -1;

	if (parsed < 0) {
		start_response(c, r->status, NULL, NULL, NULL, -1);
		return;
	}
	status = file_path_decode(r->path, r->path_len, rel, sizeof(rel));
	if (!status)
		status = file_path_open(c->w->root_fd, rel, sizeof(rel), &fd, &st);
	start_response(c, status ? status : 200, r, rel, &st, fd);
}

static void end_response(struct conn *c)
{
	if (c->map)
		munmap(c->map, c->map_len);
	c->map = NULL;
	c->busy = false;
}

/* ---- connections ---------------------------------------------------------- */

static void accept_all(struct worker *w, struct gso_listener *l);

static void unlink_conn(struct conn *c)
{
	struct worker *w = c->w;

	if (c->prev)
		c->prev->next = c->next;
	else
		w->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	w->nconns--;
	atomic_fetch_sub(&open_conns, 1);
	free(c);
}

/* Free the connection; a stream still open is reset (gso_stream__close). */
static void conn_free(struct conn *c)
{
	struct worker *w = c->w;

	c->freeing = true;
	gso_stream__close(c->s); /* events still due for it come now, and are ignored */
	end_response(c);
	unlink_conn(c);
	if (w->at_limit && !w->draining && w->l)
		accept_all(w, w->l);
}

/* The connection is over: free it now, or when pump() (further up this thread's stack) returns. */
static void conn_end(struct conn *c)
{
	if (c->in_pump)
		c->ended = true;
	else
		conn_free(c);
}

/* We end it: an error while sending or reading, a peer that never stops after our FIN. */
static void conn_abort(struct conn *c)
{
	c->w->c.aborted++;
	conn_end(c);
}

static void shut(struct conn *c)
{
	if (c->shut)
		return;
	c->shut = true;
	gso_stream__shutdown(c->s);
}

/* Send what the stream takes now: 0 (done or "later"), or the error that ended the connection. */
static int send_some(struct conn *c)
{
	while (c->busy) {
		uint32_t room, h = 0, b = 0;
		uint8_t *p;
		int err = gso_stream__reserve(c->s, (void **)&p, &room);

		if (err == -EAGAIN || err == -ENOBUFS)
			return 0; /* GSO_EV_STREAM_WRITABLE comes back */
		if (err)
			return err;
		if (c->hdr_off < c->hdr_len) {
			h = c->hdr_len - c->hdr_off < room ? c->hdr_len - c->hdr_off : room;
			memcpy(p, c->hdr + c->hdr_off, h);
		}
		if (h < room && c->body_off < c->body_len) {
			uint64_t left = c->body_len - c->body_off;

			b = left < room - h ? (uint32_t)left : room - h;
			if (copy_file_bytes(p + h, c->map + c->body_off, b)) {
				c->w->c.bus_errors++;
				return -EIO;
			}
		}
		err = gso_stream__commit(c->s, h + b);
		if (err)
			return err;
		c->hdr_off += h;
		c->body_off += b;
		c->w->c.header_bytes += h;
		c->w->c.body_bytes += b;
		if (c->hdr_off == c->hdr_len && c->body_off == c->body_len) {
			end_response(c);
			if (c->close_after)
				shut(c);
		}
	}
	return 0;
}

/* Read what has come, into the request buffer: 0, or the error that ended the connection. */
static int read_some(struct conn *c)
{
	while (!c->eof && c->req_len < sizeof(c->req)) {
		int n = gso_stream__read(c->s, c->req + c->req_len, (uint32_t)(sizeof(c->req) - c->req_len));

		if (n == -EAGAIN)
			return 0;
		if (n < 0)
			return n;
		if (!n)
			c->eof = true;
		c->req_len += (uint32_t)n;
	}
	return 0;
}

/*
 * Drop up to *left received bytes in place (peek/consume: no copy), all
 * that is readable when `left` is NULL.  0 or the connection's error;
 * the end of the stream sets c->eof.
 */
static int drop_input(struct conn *c, uint64_t *left, uint64_t *count)
{
	while (!left || *left) {
		const void *d;
		uint32_t n;
		int err = gso_stream__peek(c->s, &d, &n);

		if (err == -EAGAIN)
			return 0;
		if (err < 0)
			return err;
		if (!n) {
			c->eof = true;
			if (left)
				*left = 0;
			return 0;
		}
		if (left && n > *left)
			n = (uint32_t)*left;
		err = gso_stream__consume(c->s, n);
		if (err)
			return err;
		if (left)
			*left -= n;
		*count += n;
	}
	return 0;
}

/* Everything a connection can do now: send, read, parse, answer, in order. */
static void pump_once(struct conn *c)
{
	struct http_req r;
	uint64_t body = 0;
	int err, k;

	while (!c->ended) {
		if (c->busy && (err = send_some(c))) {
			conn_abort(c);
			return;
		}
		if (c->busy)
			return;
		if (c->shut) {
			/* Our FIN is out: what still comes is dropped, not buffered, up to LINGER_MAX. */
			if (drop_input(c, NULL, &c->dropped) || c->dropped > LINGER_MAX)
				conn_abort(c);
			return;
		}
		if ((err = drop_input(c, &c->discard, &body)) || (err = read_some(c))) {
			conn_abort(c);
			return;
		}
		if (c->discard) {
			if (c->eof)
				shut(c);
			return;
		}
		k = c->req_len ? http_req_parse(c->req, c->req_len, sizeof(c->req), &r) : 0;
		if (!k) {
			/* Nothing whole to answer: the end of the stream or of the server ends it. */
			if (c->eof || (c->w->draining && !c->req_len))
				shut(c);
			return;
		}
		handle_request(c, k, &r);
		if (k < 0) {
			c->req_len = 0; /* refused: the connection closes after the answer */
			continue;
		}
		{
			uint32_t left = c->req_len - (uint32_t)k;

			body = r.body_len < left ? r.body_len : left;
			c->discard = r.body_len - body;
			left -= (uint32_t)body;
			memmove(c->req, c->req + (uint32_t)k + body, left);
			c->req_len = left;
		}
	}
}

/*
 * The library delivers the events that a call made from the callback
 * causes at once, from inside that call: a WRITABLE or CLOSED of this
 * connection may come while pump_once() is between a commit and its
 * bookkeeping.  Such a nested pump only asks for another round.
 */
static void pump(struct conn *c)
{
	if (c->in_pump) {
		c->again = true;
		return;
	}
	c->in_pump = true;
	do {
		c->again = false;
		pump_once(c);
	} while (c->again && !c->ended);
	c->in_pump = false;
	if (c->ended)
		conn_free(c);
}

static struct conn *conn_new(struct worker *w)
{
	struct conn *c;

	if (w->nconns >= w->o->max_conns || !(c = calloc(1, sizeof(*c))))
		return NULL;
	c->w = w;
	c->next = w->conns;
	if (c->next)
		c->next->prev = c;
	w->conns = c;
	w->nconns++;
	atomic_fetch_add(&open_conns, 1);
	return c;
}

static void accept_all(struct worker *w, struct gso_listener *l)
{
	w->l = l;
	w->at_limit = false;
	for (;;) {
		struct conn *c = conn_new(w);
		struct gso_stream *s;
		int err;

		if (!c) {
			/* The rest wait in the backlog until a connection closes. */
			w->at_limit = true;
			w->c.at_limit++;
			return;
		}
		/*
		 * The stream's idle_ns ends a connection whose client stays
		 * silent that long while it owes us an answer (an ACK, its FIN);
		 * the keep-alive time between requests is ours (sweep_idle()).
		 */
		GSO_OPTS(gso_stream_opts, so, .cc_algo = w->o->cc, .idle_ns = w->o->idle_s * 1000000000ull, .ctx = c);
		err = gso_listener__accept(&s, l, &so);
		if (err) {
			unlink_conn(c);
			/* Not "none waiting" (-ENOSPC: no flow slot): try again when a connection closes. */
			if (err != -EAGAIN) {
				w->at_limit = true;
				w->c.at_limit++;
			}
			return;
		}
		c->s = s;
		c->last_ns = gso_evloop_now_ns();
		w->c.accepted++;
	}
}

static void begin_drain(struct worker *w)
{
	struct conn *c, *next;

	w->draining = true;
	for (c = w->conns; c; c = next) {
		next = c->next;
		if (!c->busy && !c->req_len)
			shut(c);
		else
			c->close_after = true;
	}
}

/*
 * Keep-alive: a connection quiet for --idle-timeout with no answer under
 * way gets our FIN.  (The stream's own idle_ns ends a connection whose
 * peer is silent while we wait for it, not one that is merely quiet.)
 * Every second, on the connection's engine thread.
 */
static void sweep_idle(struct worker *w)
{
	uint64_t now = gso_evloop_now_ns(), idle = w->o->idle_s * 1000000000ull;
	struct conn *c, *next;

	for (c = w->conns; c; c = next) {
		next = c->next;
		if (!c->busy && !c->shut && c->last_ns && now - c->last_ns > idle) {
			w->c.idle_closed++;
			shut(c);
		}
	}
}

static void close_all(struct worker *w)
{
	w->draining = true;
	while (w->conns) {
		w->c.forced++;
		conn_free(w->conns);
	}
}

static void handle_event(struct worker *w, const struct gso_engine_event *ev)
{
	struct conn *c = ev->flow_ctx;

	switch (ev->type) {
	case GSO_EV_LISTENER_READY:
		if (!w->draining)
			accept_all(w, ev->listener);
		return;
	case GSO_EV_DEV_GONE:
		atomic_store(&dev_gone, true);
		return;
	default:
		break;
	}
	if (!c || !ev->stream || c->freeing)
		return;
	if (!c->s)
		c->s = ev->stream; /* an event during gso_listener__accept */
	c->last_ns = gso_evloop_now_ns();
	switch (ev->type) {
	case GSO_EV_STREAM_READABLE:
	case GSO_EV_STREAM_WRITABLE:
	case GSO_EV_STREAM_PEER_CLOSED:
		pump(c);
		break;
	case GSO_EV_STREAM_CLOSED:
		if (c->ended)
			break;
		if (!ev->err)
			w->c.closed++;
		else if (ev->err == -ETIMEDOUT)
			w->c.timed_out++;
		else if (ev->err == -ECONNRESET)
			w->c.reset++;
		else
			w->c.failed++;
		conn_end(c);
		break;
	default:
		break;
	}
}

/* ---- setup helpers ------------------------------------------------------- */

static int parse_addr(const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	if (inet_pton(AF_INET, s, out) == 1)
		return GSO_L3_IPV4;
	if (inet_pton(AF_INET6, s, out) == 1)
		return GSO_L3_IPV6;
	return -EINVAL;
}

/* Whether `addr` is an address of interface `ifname`: else nobody can find us (ARP, ND). */
static bool addr_on(const char *ifname, int l3, const uint8_t addr[16])
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (getifaddrs(&ifa))
		return true; /* cannot tell: no warning */
	for (i = ifa; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
			continue;
		if (l3 == GSO_L3_IPV4 && i->ifa_addr->sa_family == AF_INET)
			found = !memcmp(&((struct sockaddr_in *)i->ifa_addr)->sin_addr, addr, 4);
		else if (l3 == GSO_L3_IPV6 && i->ifa_addr->sa_family == AF_INET6)
			found = !memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, addr, 16);
	}
	freeifaddrs(ifa);
	return found;
}

/* -ENOENT from opening a path is the steering program's object file, most likely. */
static const char *no_obj_hint(int err)
{
	return err != -ENOENT ? "" :
	       " (the XDP steering program, steer.bpf.o, is looked for in ../bpf/ and bpf/ beside the program, "
	       "in bpf/ beside libgso-xdp.so, or in $GSO_BPF_DIR)";
}



/* ---- statistics ------------------------------------------------------------ */

struct report {
	const struct opts *o;
	const char *path, *reason;
	struct counters c;
	struct gso_listener_info li;
	bool have_li;
	struct gso_engine_stats es;
	uint64_t chunks_total, chunks_free, chunks_queued, chunks_inflight, chunks_held;
	bool balanced, dev_gone;
	int fds_start, fds_exit;
	uint32_t open_at_exit;
	uint64_t queue_accepted[GSO_PORT_MAX_QUEUES]; /* connections per queue (a port) */
};

static void sum_counters(struct counters *a, const struct counters *b)
{
	a->requests += b->requests;
	for (size_t i = 0; i < NSTATUS; i++)
		a->by_status[i] += b->by_status[i];
	a->body_bytes += b->body_bytes;
	a->header_bytes += b->header_bytes;
	a->accepted += b->accepted;
	a->closed += b->closed;
	a->reset += b->reset;
	a->timed_out += b->timed_out;
	a->failed += b->failed;
	a->aborted += b->aborted;
	a->forced += b->forced;
	a->at_limit += b->at_limit;
	a->bus_errors += b->bus_errors;
	a->idle_closed += b->idle_closed;
}

static void sum_linfo(struct gso_listener_info *a, const struct gso_listener_info *b)
{
	a->half_open += b->half_open;
	a->queued += b->queued;
	a->backlog += b->backlog;
	a->syn_backlog += b->syn_backlog;
	a->syns += b->syns;
	a->synacks += b->synacks;
	a->synack_retrans += b->synack_retrans;
	a->cookies_sent += b->cookies_sent;
	a->cookies_ok += b->cookies_ok;
	a->cookies_bad += b->cookies_bad;
	a->half_open_expired += b->half_open_expired;
	a->accepted += b->accepted;
	a->overflows += b->overflows;
	a->resets += b->resets;
	a->time_wait += b->time_wait;
	a->time_wait_reused += b->time_wait_reused;
}

static void sum_estats(struct gso_engine_stats *a, const struct gso_engine_stats *b)
{
	a->polls += b->polls;
	a->waits += b->waits;
	a->submits += b->submits;
	a->supers += b->supers;
	a->frames += b->frames;
	a->backpressure += b->backpressure;
	a->kicks += b->kicks;
	a->link_down += b->link_down;
	a->link_up += b->link_up;
	a->rx_frames += b->rx_frames;
	a->rx_other += b->rx_other;
	a->rx_bad_csum += b->rx_bad_csum;
	a->rx_csum_partial += b->rx_csum_partial;
	a->late_ns_max = b->late_ns_max > a->late_ns_max ? b->late_ns_max : a->late_ns_max;
}

#define KV(f, name, v) fprintf(f, "%s\"%s\": %" PRIu64, sep, name, (uint64_t)(v)), sep = ", "

static void write_json(const struct report *r)
{
	const struct gso_listener_info *li = &r->li;
	const struct gso_engine_stats *es = &r->es;
	const char *sep = "";
	FILE *f = fopen(r->o->json, "w");

	if (!f) {
		fprintf(stderr, "gsohttpd: --json %s: %s\n", r->o->json, strerror(errno));
		return;
	}
	fprintf(f, "{\"tool\": \"gsohttpd\", \"mode\": \"%s\", \"path\": \"%s\", \"path_reason\": \"%s\", "
		   "\"queues\": %u, \"ifname\": \"%s\", \"listen\": \"%s\", \"port\": %u,\n",
		mode_names[r->o->mode], r->path, r->reason, r->o->queues, r->o->ifname, r->o->listen, r->o->port);
	fprintf(f, " \"requests\": %" PRIu64 ", \"status\": {", r->c.requests);
	for (size_t i = 0; i < NSTATUS; i++)
		fprintf(f, "%s\"%u\": %" PRIu64, i ? ", " : "", statuses[i], r->c.by_status[i]);
	fprintf(f, "},\n \"bytes_served\": %" PRIu64 ", \"header_bytes\": %" PRIu64 ",\n", r->c.body_bytes,
		r->c.header_bytes);
	fputs(" \"connections\": {", f);
	KV(f, "accepted", r->c.accepted);
	KV(f, "closed", r->c.closed);
	KV(f, "reset", r->c.reset);
	KV(f, "timed_out", r->c.timed_out);
	KV(f, "failed", r->c.failed);
	KV(f, "aborted", r->c.aborted);
	KV(f, "idle_closed", r->c.idle_closed);
	KV(f, "closed_at_exit", r->c.forced);
	KV(f, "max_conns_reached", r->c.at_limit);
	KV(f, "open_at_exit", r->open_at_exit);
	KV(f, "file_bus_errors", r->c.bus_errors);
	fputs("},\n \"queue_accepted\": [", f);
	for (uint32_t q = 0; q < r->o->queues; q++)
		fprintf(f, "%s%" PRIu64, q ? ", " : "", r->o->queues > 1 ? r->queue_accepted[q] : r->c.accepted);
	fputs("],\n \"listener\": {", f);
	sep = "";
	if (r->have_li) {
		KV(f, "syns", li->syns);
		KV(f, "synacks", li->synacks);
		KV(f, "synack_retrans", li->synack_retrans);
		KV(f, "cookies_sent", li->cookies_sent);
		KV(f, "cookies_ok", li->cookies_ok);
		KV(f, "cookies_bad", li->cookies_bad);
		KV(f, "half_open", li->half_open);
		KV(f, "half_open_expired", li->half_open_expired);
		KV(f, "queued", li->queued);
		KV(f, "backlog", li->backlog);
		KV(f, "syn_backlog", li->syn_backlog);
		KV(f, "accepted", li->accepted);
		KV(f, "overflows", li->overflows);
		KV(f, "resets", li->resets);
		KV(f, "time_wait", li->time_wait);
		KV(f, "time_wait_reused", li->time_wait_reused);
	}
	fputs("},\n \"engine\": {", f);
	sep = "";
	KV(f, "polls", es->polls);
	KV(f, "waits", es->waits);
	KV(f, "submits", es->submits);
	KV(f, "supers", es->supers);
	KV(f, "frames", es->frames);
	KV(f, "backpressure", es->backpressure);
	KV(f, "kicks", es->kicks);
	KV(f, "rx_frames", es->rx_frames);
	KV(f, "rx_other", es->rx_other);
	KV(f, "rx_bad_csum", es->rx_bad_csum);
	KV(f, "rx_csum_partial", es->rx_csum_partial);
	KV(f, "link_down", es->link_down);
	KV(f, "link_up", es->link_up);
	KV(f, "late_ns_max", es->late_ns_max);
	fputs("},\n \"umem\": {", f);
	sep = "";
	KV(f, "chunks_total", r->chunks_total);
	KV(f, "chunks_free", r->chunks_free);
	KV(f, "chunks_queued", r->chunks_queued);
	KV(f, "chunks_inflight", r->chunks_inflight);
	KV(f, "chunks_held", r->chunks_held);
	fprintf(f, ", \"balanced\": %s},\n", r->balanced ? "true" : "false");
	fprintf(f, " \"fds\": {\"at_start\": %d, \"at_exit\": %d}, \"dev_gone\": %s}\n", r->fds_start, r->fds_exit,
		r->dev_gone ? "true" : "false");
	if (fclose(f))
		fprintf(stderr, "gsohttpd: --json %s: %s\n", r->o->json, strerror(errno));
}

/* ---- one engine on this thread --------------------------------------------- */

static volatile sig_atomic_t stop_sig;
static struct gso_engine *sig_engine;

static void on_signal(int sig)
{
	(void)sig;
	stop_sig++;
	if (sig_engine)
		gso_engine__stop(sig_engine); /* an atomic store and a write(2) */
}

static void on_event(void *ctx, const struct gso_engine_event *ev)
{
	handle_event(ctx, ev);
}

static void dev_chunks(struct gso_dev *d, struct report *r)
{
	GSO_OPTS(gso_dev_stats, st);

	if (!d || gso_dev__stats(d, &st)) {
		r->balanced = false;
		return;
	}
	r->chunks_total += st.chunks_total;
	r->chunks_free += st.chunks_free;
	r->chunks_queued += st.chunks_queued;
	r->chunks_inflight += st.chunks_inflight;
	r->chunks_held += st.chunks_held;
}

static void run_engine(struct worker *w, int ifindex, const struct gso_listen_opts *lo, struct report *r)
{
	GSO_OPTS(gso_engine_opts, eo, .max_flows = w->o->max_conns + 16, .on_event = on_event, .ctx = w);
	GSO_OPTS(gso_path_opts, po, .path = mode_path[w->o->mode]);
	GSO_OPTS(gso_path_info, pi);
	struct gso_engine *e;
	struct gso_dev *d;
	int err;

	err = gso_engine__open_path(&e, ifindex, &po, &eo);
	if (err)
		die(TOOL_EXIT_USAGE, err, "%s path on %s%s", mode_names[w->o->mode], w->o->ifname, no_obj_hint(err));
	if (!gso_engine__path(e, &pi)) {
		r->path = gso_path_name(pi.path);
		r->reason = pi.reason ? pi.reason : "";
	}
	err = gso_listener__open(&w->l, e, lo);
	if (err) {
		gso_engine__destroy(e);
		die(TOOL_EXIT_USAGE, err, "listening on %s port %u", w->o->listen, w->o->port);
	}
	sig_engine = e;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	tool_write_ready("gsohttpd", w->o->ready, w->o->listen, w->o->port);
	if (!w->o->quiet)
		fprintf(stderr, "gsohttpd: serving %s on %s port %u, %s on %s (%s)\n", w->o->root, w->o->listen,
			w->o->port, r->path, w->o->ifname, r->reason);
	while (!stop_sig && !atomic_load(&dev_gone)) {
		err = gso_engine__run(e, gso_evloop_now_ns() + 1000000000ull);
		if (err == -ENODEV)
			atomic_store(&dev_gone, true);
		sweep_idle(w);
	}
	/* Stop accepting; answer what is under way, for DRAIN_NS at most. */
	w->linfo.sz = sizeof(w->linfo);
	w->have_linfo = !gso_listener__info(w->l, &w->linfo);
	gso_listener__close(w->l);
	w->l = NULL;
	if (!atomic_load(&dev_gone)) {
		uint64_t end = gso_evloop_now_ns() + DRAIN_NS;

		begin_drain(w);
		while (w->nconns && stop_sig < 2 && gso_evloop_now_ns() < end &&
		       gso_engine__run(e, end) != -ENODEV)
			;
	}
	close_all(w);
	r->es.sz = sizeof(r->es);
	gso_engine__stats(e, &r->es);
	sig_engine = NULL;
	err = gso_engine__close(e);
	r->balanced = !err;
	d = gso_engine__dev(e);
	dev_chunks(d, r);
	for (uint32_t i = 0; gso_engine__rx(e, i); i++)
		if (gso_engine__rx(e, i) != d)
			dev_chunks(gso_engine__rx(e, i), r);
	r->balanced = r->balanced && r->chunks_free == r->chunks_total;
	gso_engine__destroy(e);
	r->c = w->c;
	r->li = w->linfo;
	r->have_li = w->have_linfo;
}

/* ---- a port: one engine per queue, each on a worker ------------------------ */

static void on_port_event(void *ctx, uint32_t q, struct gso_engine *e, const struct gso_engine_event *ev)
{
	struct worker *w = ctx;

	(void)e;
	handle_event(&w[q], ev);
}

static void sweep_call(struct gso_engine *e, void *arg)
{
	(void)e;
	sweep_idle(arg);
}

static void drain_call(struct gso_engine *e, void *arg)
{
	(void)e;
	begin_drain(arg);
}

static void run_port(struct worker *ws, int ifindex, const struct gso_listen_opts *lo, struct report *r)
{
	const struct opts *o = ws[0].o;
	GSO_OPTS(gso_engine_opts, eo, .max_flows = o->max_conns + 16);
	GSO_OPTS(gso_port_opts, po, .queues = o->queues, .engine = &eo, .on_event = on_port_event, .ctx = ws,
		 .path = mode_path[o->mode]);
	GSO_OPTS(gso_path_info, pi);
	GSO_OPTS(gso_port_stats, ps);
	struct timespec tick = { .tv_nsec = 100000000 };
	struct gso_port *p;
	sigset_t sigs;
	uint64_t end;
	int err, sig;

	/* The workers inherit the mask: the signals come to sigtimedwait below only. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	err = gso_port__open(&p, ifindex, &po);
	if (err)
		die(TOOL_EXIT_USAGE, err, "port of %u queues (%s) on %s%s", o->queues, mode_names[o->mode], o->ifname,
		    no_obj_hint(err));
	if (!gso_engine__path(gso_port__engine(p, 0), &pi)) {
		r->path = gso_path_name(pi.path);
		r->reason = pi.reason ? pi.reason : "";
	}
	err = gso_port__listen(p, lo);
	if (!err)
		err = gso_port__start(p);
	if (err) {
		gso_port__destroy(p);
		die(TOOL_EXIT_USAGE, err, "listening on %s port %u on %u queues", o->listen, o->port, o->queues);
	}
	tool_write_ready("gsohttpd", o->ready, o->listen, o->port);
	if (!o->quiet)
		fprintf(stderr, "gsohttpd: serving %s on %s port %u, %s on %s, %u queues (%s)\n", o->root, o->listen,
			o->port, r->path, o->ifname, o->queues, r->reason);
	for (unsigned n = 1; !atomic_load(&dev_gone); n++) {
		sig = sigtimedwait(&sigs, NULL, &tick);
		if (sig > 0)
			break;
		if (n % 10 == 0) /* a full ring skips a sweep: the next comes in a second */
			for (uint32_t q = 0; q < o->queues; q++)
				gso_port__call(p, q, sweep_call, &ws[q]);
	}
	for (uint32_t q = 0; q < o->queues; q++)
		while (gso_port__call(p, q, drain_call, &ws[q]) == -EAGAIN)
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	end = gso_evloop_now_ns() + DRAIN_NS;
	while (atomic_load(&open_conns) && gso_evloop_now_ns() < end)
		if (sigtimedwait(&sigs, NULL, &(struct timespec){ .tv_nsec = 20000000 }) > 0)
			break;
	gso_port__stop(p);
	/* The engines are this thread's now. */
	memset(&r->es, 0, sizeof(r->es));
	for (uint32_t q = 0; q < o->queues; q++) {
		struct gso_listener *l = gso_port__listener(p, q);
		GSO_OPTS(gso_listener_info, li);
		GSO_OPTS(gso_engine_stats, es);

		close_all(&ws[q]);
		if (l && !gso_listener__info(l, &li)) {
			sum_linfo(&r->li, &li);
			r->have_li = true;
		}
		if (!gso_engine__stats(gso_port__engine(p, q), &es))
			sum_estats(&r->es, &es);
		sum_counters(&r->c, &ws[q].c);
		r->queue_accepted[q] = ws[q].c.accepted;
	}
	err = gso_port__close(p);
	r->balanced = !err && !gso_port__stats(p, GSO_PORT_ALL, &ps) && ps.chunks_free == ps.chunks_total;
	r->chunks_total = ps.chunks_total;
	r->chunks_free = ps.chunks_free;
	gso_port__destroy(p);
}

/* ---- main -------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct opts o;
	struct report r = { .o = &o, .path = "?", .reason = "" };
	struct worker *ws;
	struct stat st;
	uint8_t addr[16];
	int ifindex, l3, root_fd;

	parse_args(argc, argv, &o);
	r.fds_start = tool_count_fds();
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGBUS, &(struct sigaction){ .sa_handler = on_sigbus, .sa_flags = SA_NODEFER }, NULL);
	ifindex = gso_ifindex(o.ifname);
	if (ifindex < 0)
		die(TOOL_EXIT_USAGE, ifindex, "interface '%s'", o.ifname);
	l3 = parse_addr(o.listen, addr);
	if (l3 < 0)
		die(TOOL_EXIT_USAGE, 0, "bad --listen '%s' (an IPv4 or IPv6 address)", o.listen);
	if (!addr_on(o.ifname, l3, addr))
		fprintf(stderr, "gsohttpd: warning: %s is not an address of %s: clients will not find it\n",
			o.listen, o.ifname);
	root_fd = open(o.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0 || fstat(root_fd, &st))
		die(TOOL_EXIT_USAGE, errno, "--root %s", o.root);
	ws = calloc(o.queues, sizeof(*ws));
	if (!ws)
		die(TOOL_EXIT_USAGE, ENOMEM, "workers");
	for (uint32_t q = 0; q < o.queues; q++)
		ws[q] = (struct worker){ .o = &o, .root_fd = root_fd, .q = q };
	{
		GSO_OPTS(gso_listen_opts, lo, .l3 = (uint8_t)l3, .port = o.port, .backlog = GSO_LISTEN_DEF_BACKLOG,
			 .rcvbuf = RCVBUF);

		memcpy(lo.addr, addr, 16);
		if (o.queues > 1)
			run_port(ws, ifindex, &lo, &r);
		else
			run_engine(&ws[0], ifindex, &lo, &r);
	}
	r.open_at_exit = atomic_load(&open_conns);
	r.dev_gone = atomic_load(&dev_gone);
	free(ws);
	close(root_fd);
	r.fds_exit = tool_count_fds();
	if (o.json)
		write_json(&r);
	if (!o.quiet)
		fprintf(stderr, "gsohttpd: %" PRIu64 " requests, %" PRIu64 " bytes served, %" PRIu64
			" connections (%" PRIu64 " reset, %" PRIu64 " closed at exit), device buffers %s, "
			"descriptors %d at start, %d at exit\n", r.c.requests, r.c.body_bytes, r.c.accepted, r.c.reset,
			r.c.forced, r.balanced ? "all back" : "NOT all back", r.fds_start, r.fds_exit);
	if (r.dev_gone) {
		fprintf(stderr, "gsohttpd: %s went away\n", o.ifname);
		return EXIT_FAIL;
	}
	return r.balanced ? TOOL_EXIT_OK : EXIT_FAIL;
}
