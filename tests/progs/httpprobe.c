/*
 * httpprobe: the HTTP clients of tests/integration/test_httpd.c that curl,
 * wget and wrk cannot be (a slow client, a client that sends garbage,
 * thousands of short connections at C speed), and the tests' file maker.
 * HTTP/1.1 over one kernel TCP socket per connection; IPv4 or IPv6.
 *
 *   httpprobe get --addr A --port P --path /F [--out FILE] [--slow-ms N]
 *       One GET; the body to FILE (or counted only).  --slow-ms sends the
 *       request one byte every N ms (TCP_NODELAY: one segment each).
 *   httpprobe garbage --addr A --port P [--bytes N]
 *       A request line, then N bytes of header lines of random printable
 *       junk, sent while reading; reports the server's status and whether
 *       it closed the connection.
 *   httpprobe loop --addr A --port P --path /F [--count N]
 *       N sequential connections: connect, GET, read the whole response
 *       (Content-Length), close.
 *   httpprobe gen --size N [--seed S] FILE
 *       A file of N pseudo-random bytes (splitmix64), quickly.
 *
 * One line on stdout at the end, "httpprobe: mode=... key=value ...".
 * Exit status: 0 the exchange went as expected (get: status 200 and the
 * whole body; garbage: a 4xx status and the connection closed; loop: every
 * connection got a 200 and its body), 1 it did not (the line says what
 * happened), 2 usage or setup error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tool_util.h"

#define EXIT_UNEXPECTED 1
#define HDR_MAX 65536

struct opts {
	const char *addr, *path, *out;
	uint64_t port, slow_ms, bytes, count, size, seed, timeout_s;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: httpprobe get --addr A --port P --path /F [--out FILE] [--slow-ms N]\n"
		"       httpprobe garbage --addr A --port P [--bytes N]\n"
		"       httpprobe loop --addr A --port P --path /F [--count N]\n"
		"       httpprobe gen --size N [--seed S] FILE\n"
		"\n"
		"HTTP/1.1 test clients over kernel TCP (IPv4 or IPv6 address A):\n"
		"  get      one GET; the body to --out FILE, or only counted; --slow-ms N\n"
		"           sends the request one byte every N ms\n"
		"  garbage  a request line then --bytes N (default 1048576) of junk header\n"
		"           lines; reports the server's status and whether it closed\n"
		"  loop     --count N (default 10000) sequential connections, each a GET of\n"
		"           --path read whole, then closed\n"
		"  gen      write FILE with --size N pseudo-random bytes (--seed S, default 1)\n"
		"\n"
		"options: --timeout S (default 30) per connection for reads and writes.\n"
		"Last line on stdout: httpprobe: mode=M key=value ...\n"
		"Exit status: 0 as expected (get: 200 and the whole body; garbage: a 4xx\n"
		"status and the connection closed; loop: every connection a 200 with its\n"
		"body), 1 not, 2 usage or setup error.\n");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A connected socket to addr:port, with read and write timeouts; -1 and a message if not. */
static int dial(const struct opts *o)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	struct timeval tv = { (time_t)o->timeout_s, 0 };
	socklen_t len;
	int fd;

	if (inet_pton(AF_INET, o->addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)o->port);
		len = sizeof(*s4);
	} else if (inet_pton(AF_INET6, o->addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)o->port);
		len = sizeof(*s6);
	} else {
		fprintf(stderr, "httpprobe: --addr %s: not an IPv4 or IPv6 address\n", o->addr);
		return -1;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "httpprobe: socket: %s\n", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&ss, len)) {
		fprintf(stderr, "httpprobe: connect %s port %" PRIu64 ": %s\n", o->addr, o->port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The request for o->path, with a Host header naming the address. */
static int request(const struct opts *o, char *buf, size_t cap)
{
	bool v6 = strchr(o->addr, ':') != NULL;

	return snprintf(buf, cap, "GET %s HTTP/1.1\r\nHost: %s%s%s:%" PRIu64 "\r\nUser-Agent: httpprobe\r\n\r\n",
			o->path, v6 ? "[" : "", o->addr, v6 ? "]" : "", o->port);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

struct resp {
	int status;          /* 0 when no status line came */
	int64_t clen;        /* Content-Length, -1 when absent */
	uint64_t body;       /* body bytes read */
	bool eof;            /* the server closed (FIN or reset) */
	int err;             /* errno of a failed read, 0 if none */
};

/* Status and Content-Length of a header block (NUL-terminated). */
static void parse_head(const char *h, struct resp *r)
{
	const char *p;

	if (!strncmp(h, "HTTP/1.", 7) && h[8] == ' ')
		r->status = atoi(h + 9);
	for (p = strstr(h, "\r\n"); p; p = strstr(p + 2, "\r\n"))
		if (!strncasecmp(p + 2, "Content-Length:", 15))
			r->clen = strtoll(p + 17, NULL, 10);
}

/*
 * Read one response: the header block, then Content-Length bytes of body
 * (to out when not -1), or until the server closes when it sends none.
 * Returns 0 when a whole response came, -1 otherwise (r says how far).
 */
static int read_response(int fd, int out, struct resp *r)
{
	static char buf[1 << 16];
	size_t have = 0;
	char *end = NULL;

	memset(r, 0, sizeof(*r));
	r->clen = -1;
	while (!end) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r->eof = n == 0 || errno == ECONNRESET;
			r->err = n < 0 ? errno : 0;
			buf[have] = 0;
			parse_head(buf, r);
			return -1;
		}
		have += (size_t)n;
		buf[have] = 0;
		end = strstr(buf, "\r\n\r\n");
		if (!end && have == sizeof(buf) - 1)
			return -1;
	}
	*end = 0;
	parse_head(buf, r);
	end += 4;
	size_t left = have - (size_t)(end - buf);

	for (;;) {
		if (r->clen >= 0 && left > (uint64_t)r->clen - r->body)
			left = (size_t)((uint64_t)r->clen - r->body);
		if (left && out >= 0 && write_all(out, end, left)) {
			fprintf(stderr, "httpprobe: writing the body: %s\n", strerror(errno));
			return -1;
		}
		r->body += left;
		if (r->clen >= 0 && r->body == (uint64_t)r->clen)
			return 0;
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR) {
			left = 0;
			continue;
		}
		if (n <= 0) {
			r->eof = n == 0 || errno == ECONNRESET;
			r->err = n < 0 ? errno : 0;
			return r->clen < 0 && n == 0 ? 0 : -1;
		}
		end = buf;
		left = (size_t)n;
	}
}

static int do_get(const struct opts *o)
{
	char req[4096];
	int n = request(o, req, sizeof(req)), fd, out = -1, rc, one = 1;
	struct resp r;
	double t0 = now_s();

	if (o->out) {
		out = open(o->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out < 0) {
			fprintf(stderr, "httpprobe: %s: %s\n", o->out, strerror(errno));
			return TOOL_EXIT_USAGE;
		}
	}
	fd = dial(o);
	if (fd < 0)
		return TOOL_EXIT_USAGE;
	if (o->slow_ms) {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		for (int i = 0; i < n; i++) {
			struct timespec ts = { (time_t)(o->slow_ms / 1000), (long)(o->slow_ms % 1000) * 1000000 };

			if (write_all(fd, req + i, 1)) {
				fprintf(stderr, "httpprobe: write byte %d of the request: %s\n", i, strerror(errno));
				break;
			}
			if (i + 1 < n)
				nanosleep(&ts, NULL);
		}
	} else if (write_all(fd, req, (size_t)n)) {
		fprintf(stderr, "httpprobe: write: %s\n", strerror(errno));
	}
	rc = read_response(fd, out, &r);
	close(fd);
	if (out >= 0 && close(out)) {
		fprintf(stderr, "httpprobe: %s: %s\n", o->out, strerror(errno));
		rc = -1;
	}
	printf("httpprobe: mode=get status=%d content_length=%" PRId64 " body=%" PRIu64 " request_bytes=%d "
	       "seconds=%.3f error=%s\n", r.status, r.clen, r.body, n, now_s() - t0, r.err ? strerror(r.err) : "none");
	return rc == 0 && r.status == 200 && r.clen >= 0 && r.body == (uint64_t)r.clen ? 0 : EXIT_UNEXPECTED;
}

static int do_garbage(const struct opts *o)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.;=/";
	char line[160];
	uint64_t sent = 0, rng = 7, k = 0;
	bool send_done = false, write_failed = false;
	struct resp r = { .clen = -1 };
	int fd = dial(o), n;
	double t0 = now_s();

	if (fd < 0)
		return TOOL_EXIT_USAGE;
	n = snprintf(line, sizeof(line), "GET %s HTTP/1.1\r\nHost: probe\r\n", o->path ? o->path : "/");
	if (write_all(fd, line, (size_t)n))
		send_done = write_failed = true;
	sent += (uint64_t)n;
	/* Junk header lines until --bytes are out, or the server answered or closed. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while (!send_done) {
		struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };

		if (poll(&p, 1, (int)o->timeout_s * 1000) <= 0)
			break;
		if (p.revents & (POLLIN | POLLHUP | POLLERR))
			break; /* an answer (or the end): read it below */
		int m = snprintf(line, sizeof(line), "X-Junk-%" PRIu64 ": ", k++);

		while (m < 126)
			line[m++] = alphabet[rnd(&rng) % (sizeof(alphabet) - 1)];
		line[m++] = '\r';
		line[m++] = '\n';
		if (sent + (uint64_t)m > o->bytes)
			m = (int)(o->bytes - sent);
		ssize_t w = write(fd, line, (size_t)m);

		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (w < 0) {
			write_failed = true;
			break;
		}
		sent += (uint64_t)w;
		/* A partly written line is finished on the next round as junk of its own. */
		send_done = sent >= o->bytes;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	read_response(fd, -1, &r);
	if (r.status && !r.eof) {
		/* After the answer: the server must close. */
		char b[4096];
		ssize_t m;

		while ((m = read(fd, b, sizeof(b))) > 0 || (m < 0 && errno == EINTR))
			;
		r.eof = m == 0 || errno == ECONNRESET;
		if (m < 0)
			r.err = errno;
	}
	close(fd);
	printf("httpprobe: mode=garbage status=%d sent=%" PRIu64 " closed=%d write_failed=%d seconds=%.3f error=%s\n",
	       r.status, sent, r.eof, write_failed, now_s() - t0, r.err ? strerror(r.err) : "none");
	return r.status >= 400 && r.status < 500 && r.eof ? 0 : EXIT_UNEXPECTED;
}

static int do_loop(const struct opts *o)
{
	char req[4096];
	int n = request(o, req, sizeof(req));
	uint64_t ok = 0, failed = 0, bytes = 0;
	double t0 = now_s(), secs;
	struct resp r;

	for (uint64_t i = 0; i < o->count; i++) {
		int fd = dial(o);

		if (fd < 0) {
			failed++;
			continue;
		}
		if (!write_all(fd, req, (size_t)n) && !read_response(fd, -1, &r) && r.status == 200 && r.clen >= 0) {
			ok++;
			bytes += r.body;
		} else {
			if (!failed)
				fprintf(stderr, "httpprobe: connection %" PRIu64 ": status %d, body %" PRIu64 ", %s\n",
					i, r.status, r.body, r.err ? strerror(r.err) : "short");
			failed++;
		}
		close(fd);
	}
	secs = now_s() - t0;
	printf("httpprobe: mode=loop count=%" PRIu64 " ok=%" PRIu64 " failed=%" PRIu64 " body_bytes=%" PRIu64
	       " seconds=%.3f conn_per_s=%.0f\n", o->count, ok, failed, bytes, secs,
	       secs > 0 ? (double)o->count / secs : 0.0);
	return failed ? EXIT_UNEXPECTED : 0;
}

static int do_gen(const struct opts *o, const char *path)
{
	static uint64_t blk[1 << 17]; /* 1 MiB */
	uint64_t left = o->size, rng = o->seed;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0) {
		fprintf(stderr, "httpprobe: %s: %s\n", path, strerror(errno));
		return TOOL_EXIT_USAGE;
	}
	while (left) {
		size_t n = left < sizeof(blk) ? (size_t)left : sizeof(blk);

		for (size_t i = 0; i < (n + 7) / 8; i++)
			blk[i] = rnd(&rng);
		if (write_all(fd, (const char *)blk, n)) {
			fprintf(stderr, "httpprobe: %s: %s\n", path, strerror(errno));
			close(fd);
			return TOOL_EXIT_USAGE;
		}
		left -= n;
	}
	if (close(fd)) {
		fprintf(stderr, "httpprobe: %s: %s\n", path, strerror(errno));
		return TOOL_EXIT_USAGE;
	}
	printf("httpprobe: mode=gen size=%" PRIu64 " seed=%" PRIu64 "\n", o->size, o->seed);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "addr", required_argument, NULL, 'a' },   { "port", required_argument, NULL, 'p' },
		{ "path", required_argument, NULL, 'P' },   { "out", required_argument, NULL, 'o' },
		{ "slow-ms", required_argument, NULL, 'w' }, { "bytes", required_argument, NULL, 'b' },
		{ "count", required_argument, NULL, 'n' },  { "size", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },   { "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },         { NULL, 0, NULL, 0 },
	};
	struct opts o = { .bytes = 1 << 20, .count = 10000, .seed = 1, .timeout_s = 30 };
	const char *mode;
	uint64_t v;
	int c;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 2 || argv[1][0] == '-') {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	/* The mode first, then its options. */
	mode = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		uint64_t *dst = NULL, lo = 0, hi = UINT64_MAX;

		switch (c) {
		case 'a': o.addr = optarg; continue;
		case 'P': o.path = optarg; continue;
		case 'o': o.out = optarg; continue;
		case 'h': usage(stdout); return 0;
		case 'p': dst = &o.port; lo = 1; hi = 65535; break;
		case 'w': dst = &o.slow_ms; hi = 60000; break;
		case 'b': dst = &o.bytes; break;
		case 'n': dst = &o.count; break;
		case 's': dst = &o.size; break;
		case 'S': dst = &o.seed; break;
		case 't': dst = &o.timeout_s; lo = 1; hi = 3600; break;
		default: usage(stderr); return TOOL_EXIT_USAGE;
		}
		if (tool_parse_u64(optarg, lo, hi, &v)) {
			fprintf(stderr, "httpprobe: %s: not a number in range\n", optarg);
			return TOOL_EXIT_USAGE;
		}
		*dst = v;
	}
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(mode, "gen")) {
		if (optind + 1 != argc) {
			usage(stderr);
			return TOOL_EXIT_USAGE;
		}
		return do_gen(&o, argv[optind]);
	}
	if (optind != argc || !o.addr || !o.port || (strcmp(mode, "garbage") && (!o.path || o.path[0] != '/'))) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (!strcmp(mode, "get"))
		return do_get(&o);
	if (!strcmp(mode, "garbage"))
		return do_garbage(&o);
	if (!strcmp(mode, "loop"))
		return do_loop(&o);
	fprintf(stderr, "httpprobe: unknown mode %s\n", mode);
	usage(stderr);
	return TOOL_EXIT_USAGE;
}
