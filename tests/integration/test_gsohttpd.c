/*
 * tools/gsohttpd end to end, as a user runs it: the server in side a of a
 * veth test-bed (its own TCP over AF_XDP or virtio_net_hdr, through
 * `ip netns exec`), a client of plain kernel sockets in side b (this
 * process, moved there for the test).  One connection carries pipelined
 * requests answered in order (a 3 MB file byte for byte, HEAD, 404, then
 * Connection: close); '..', encoded dots and a symlink out of the root
 * never reach the file outside; 1 MB of headers gets 431 and a closed
 * connection; SIGTERM ends the server with exit 0, and its --json shows
 * every device buffer back and no connection left.  In one engine and in
 * a port of two queues, over IPv4 and IPv6.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>

#include "test_bench_util.h"

#define H_PORT 8080
#define H_BIG (3u << 20)

static struct nsbed tb;
static char www[64], secret[96];

static int rm_tree(const char *dir)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static void fini(void)
{
	bt_fini();
	nsbed_destroy(&tb);
	if (www[0] && rm_tree(www)) {
		/* scratch only */
	}
	www[0] = 0;
}

static void put(const char *name, const void *data, size_t len)
{
	char p[160];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", www, name);
	f = fopen(p, "w");
	cr_assert_not_null(f, "%s", p);
	cr_assert_eq(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* top/secret.txt outside; top/www/{index.html, big.bin, up -> ../secret.txt} the root. */
static uint8_t *make_root(void)
{
	uint8_t *big = malloc(H_BIG);
	uint64_t seed = 7;
	char p[160];
	FILE *f;

	snprintf(www, sizeof(www), "/tmp/gso-httpd-XXXXXX");
	cr_assert_not_null(mkdtemp(www));
	snprintf(secret, sizeof(secret), "%s/secret.txt", www);
	f = fopen(secret, "w");
	cr_assert_not_null(f);
	fputs("SECRET\n", f);
	fclose(f);
	strcat(www, "/www");
	cr_assert_eq(mkdir(www, 0755), 0);
	cr_assert_not_null(big);
	gso_test_fill_random(big, H_BIG, &seed);
	put("big.bin", big, H_BIG);
	put("index.html", "<h1>hi</h1>\n", 12);
	snprintf(p, sizeof(p), "%s/up", www);
	cr_assert_eq(symlink("../secret.txt", p), 0);
	return big;
}

/* Connect from side b, send `req`, read until the server closes (or 10 s).  *len: bytes read. */
static char *exchange(const char *addr, const void *req, size_t req_len, size_t *len, bool *closed)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	size_t cap = 8u << 20, n = 0, sent = 0;
	char *buf = malloc(cap);
	double end = bt_now() + 10;
	int fd;

	cr_assert_not_null(buf);
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(H_PORT);
		cr_assert_eq(inet_pton(AF_INET6, addr, &a->sin6_addr), 1);
		sl = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(H_PORT);
		cr_assert_eq(inet_pton(AF_INET, addr, &a->sin_addr), 1);
		sl = sizeof(*a);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&ss, sl), 0, "connect %s: %s", addr, strerror(errno));
	fcntl(fd, F_SETFL, O_NONBLOCK);
	*closed = false;
	while (bt_now() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN | (sent < req_len ? POLLOUT : 0) };
		ssize_t r;

		poll(&pfd, 1, 100);
		if (sent < req_len && (pfd.revents & POLLOUT)) {
			r = send(fd, (const char *)req + sent, req_len - sent, MSG_NOSIGNAL);
			if (r > 0)
				sent += (size_t)r;
			else if (r < 0 && errno != EAGAIN)
				sent = req_len; /* the server closed its side: read its answer */
		}
		if (!(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		r = recv(fd, buf + n, cap - n, 0);
		if (r > 0) {
			n += (size_t)r;
			continue;
		}
		if (r == 0 || (r < 0 && errno != EAGAIN)) {
			*closed = true;
			break;
		}
	}
	close(fd);
	*len = n;
	return buf;
}

/* The next response at *p (a HEAD's has no body): its status, its body at *body (*blen). */
static int next_response(const char **p, const char *end, bool head, const char **body, size_t *blen)
{
	const char *h = memmem(*p, (size_t)(end - *p), "\r\n\r\n", 4), *cl;
	int status;

	if (!h)
		return -1;
	status = atoi(*p + 9);
	cl = memmem(*p, (size_t)(h - *p), "Content-Length: ", 16);
	*blen = head || !cl ? 0 : strtoul(cl + 16, NULL, 10);
	*body = h + 4;
	cr_assert_leq(*blen, (size_t)(end - *body), "a body cut short");
	*p = *body + *blen;
	return status;
}

struct h_case {
	char name[16];
	char addr[16];
	char mode[16];
	char queues[4];
};

static struct h_case h_cases[] = {
	{ "v4-software", "10.77.0.1", "software", "1" },
	{ "v6-auto", "fd77::1", "auto", "1" },
	{ "v4-port2", "10.77.0.1", "software", "2" },
};

ParameterizedTestParameters(gsohttpd, serve)
{
	return cr_make_param_array(struct h_case, h_cases, sizeof(h_cases) / sizeof(h_cases[0]));
}

ParameterizedTest(struct h_case *c, gsohttpd, serve, .fini = fini, .timeout = 90)
{
	const struct nsbed_opts no = { .ip4 = { "10.77.0.1/24", "10.77.0.2/24" },
				       .ip6 = { "fd77::1/64", "fd77::2/64" }, .queues = 2 };
	char prog[4096], ready[128], json[128], *junk, *buf;
	const char *p, *end, *body, *js;
	size_t len, blen, jl = 0;
	uint8_t *big;
	bool closed;
	int err, self, st;
	struct bt_proc *sp;

	gso_test_require_root();
	snprintf(prog, sizeof(prog), "%s", gso_test_build_path("tools/gsohttpd"));
	cr_assert_eq(access(prog, X_OK), 0, "%s not built (make tools)", prog);
	err = nsbed_create(&tb, &no);
	cr_assert_eq(err, 0, "test-bed: %s", strerror(-err));
	big = make_root();
	snprintf(ready, sizeof(ready), "%s", bt_path("ready"));
	snprintf(json, sizeof(json), "%s", bt_path("stats.json"));
	{
		const char *argv[] = { "/usr/sbin/ip", "netns", "exec", tb.ns[0], prog, "--ifname", tb.ifname[0],
				       "--listen", c->addr, "--port", "8080", "--root", www, "--mode", c->mode,
				       "--queues", c->queues, "--ready", ready, "--json", json, NULL };

		if (access(argv[0], X_OK))
			argv[0] = "/sbin/ip";
		sp = bt_spawn(argv);
	}
	bt_wait_file(ready, sp, 20);
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(self, 0);
	cr_assert_eq(nsbed_enter(&tb, 1), 0);

	/* Pipelined on one connection, answered in order. */
	{
		const char req[] = "GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n"
				   "HEAD /big.bin HTTP/1.1\r\nHost: t\r\n\r\n"
				   "GET /nope HTTP/1.1\r\nHost: t\r\n\r\n"
				   "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";

		buf = exchange(c->addr, req, sizeof(req) - 1, &len, &closed);
		p = buf;
		end = buf + len;
		cr_assert_eq(next_response(&p, end, false, &body, &blen), 200, "%s: %.200s", c->name, buf);
		cr_assert_eq(blen, H_BIG);
		cr_assert(!memcmp(body, big, H_BIG), "%s: the file's bytes", c->name);
		cr_assert_eq(next_response(&p, end, true, &body, &blen), 200);
		cr_assert_eq(next_response(&p, end, false, &body, &blen), 404);
		cr_assert_eq(next_response(&p, end, false, &body, &blen), 200);
		cr_assert(blen == 12 && !memcmp(body, "<h1>hi</h1>\n", 12));
		cr_assert_eq(p, end, "%s: nothing after the last answer", c->name);
		cr_assert(closed, "%s: Connection: close honoured", c->name);
		free(buf);
	}
	/* Never outside the root. */
	{
		static const char *const out[] = { "/../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt",
						   "/up", "/%2e%2e%2fsecret.txt" };

		for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++) {
			char req[128];
			int s;

			snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", out[i]);
			buf = exchange(c->addr, req, strlen(req), &len, &closed);
			p = buf;
			s = next_response(&p, buf + len, false, &body, &blen);
			cr_assert(s == 403 || s == 404, "%s: %s gave %d", c->name, out[i], s);
			cr_assert_null(memmem(buf, len, "SECRET", 6), "%s: %s", c->name, out[i]);
			free(buf);
		}
	}
	/* 1 MB of headers: 431 and a closed connection, not a server that buffers it. */
	{
		size_t jn = 1u << 20;

		junk = malloc(jn);
		cr_assert_not_null(junk);
		memcpy(junk, "GET / HTTP/1.1\r\nHost: t\r\n", 25);
		for (size_t i = 25; i < jn; i++) {
			size_t j = (i - 25) % 100; /* lines "XXX:aaa...a\n" */

			junk[i] = j == 99 ? '\n' : j < 3 ? 'X' : j == 3 ? ':' : 'a';
		}
		buf = exchange(c->addr, junk, jn, &len, &closed);
		p = buf;
		cr_assert_eq(next_response(&p, buf + len, false, &body, &blen), 431, "%s: %.200s", c->name, buf);
		cr_assert(closed, "%s: closed after 431", c->name);
		free(buf);
		free(junk);
	}
	cr_assert_eq(setns(self, CLONE_NEWNET), 0);
	close(self);

	st = bt_stop(sp, 20);
	js = bt_read(json);
	if (st != 0)
		bt_dump(sp, "gsohttpd");
	cr_assert_eq(st, 0, "%s: gsohttpd exit %d: %s", c->name, st, bt_read(sp->err));
	jl = strlen(js);
	cr_assert_gt(jl, 0, "%s: no --json", c->name);
	cr_assert(strstr(js, "\"balanced\": true"), "%s: device buffers: %s", c->name, js);
	cr_assert_eq(bt_num(js, "open_at_exit"), 0, "%s: %s", c->name, js);
	cr_assert_eq(bt_num(js, "requests"), 4 + 5 + 1, "%s: %s", c->name, js);
	cr_assert_eq(bt_num(js, "accepted"), 1 + 5 + 1, "%s: %s", c->name, js);
	cr_log_info("%s: %s", c->name, js);
	free(big);
}
