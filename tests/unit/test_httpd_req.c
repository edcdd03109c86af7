/*
 * gsohttpd's request parser (tools/common/http_req.c), no root: whole,
 * partial and pipelined heads, the refusals and their statuses (400, 405,
 * 413, 414, 431, 501, 505), versions and the Connection header.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/common/http_req.c"

static int parse(const char *s, struct http_req *r)
{
	return http_req_parse(s, strlen(s), 0, r);
}

static void assert_path(const struct http_req *r, const char *want)
{
	cr_assert_eq(r->path_len, strlen(want), "path '%.*s', want '%s'", (int)r->path_len, r->path, want);
	cr_assert(!memcmp(r->path, want, r->path_len));
}

static void assert_refused(const char *s, int err, unsigned status)
{
	struct http_req r;
	int k = parse(s, &r);

	cr_assert_eq(k, err, "'%s': %d, want %d", s, k, err);
	cr_assert_eq(r.status, status, "'%s': status %u, want %u", s, r.status, status);
	cr_assert(!r.keep_alive);
}

Test(httpd_req, good_get)
{
	const char *s = "GET /index.html HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n";
	struct http_req r;

	cr_assert_eq(parse(s, &r), (int)strlen(s));
	cr_assert_eq(r.method, HTTP_M_GET);
	cr_assert_eq(r.minor, 1);
	cr_assert(r.keep_alive);
	cr_assert_eq(r.head_len, strlen(s));
	cr_assert_eq(r.body_len, 0);
	assert_path(&r, "/index.html");
}

Test(httpd_req, head_query_and_absolute_form)
{
	struct http_req r;

	cr_assert_gt(parse("HEAD /a/b?x=1&y=/.. HTTP/1.1\r\nHost: h\r\n\r\n", &r), 0);
	cr_assert_eq(r.method, HTTP_M_HEAD);
	assert_path(&r, "/a/b");
	cr_assert_gt(parse("GET http://example.com/dir/f.txt HTTP/1.1\r\nHost: example.com\r\n\r\n", &r), 0);
	assert_path(&r, "/dir/f.txt");
	cr_assert_gt(parse("GET HTTPS://example.com HTTP/1.1\r\nHost: example.com\r\n\r\n", &r), 0);
	assert_path(&r, "/");
}

Test(httpd_req, bare_lf_and_leading_empty_lines)
{
	const char *s = "\r\n\nGET / HTTP/1.1\nHost: x\n\n";
	struct http_req r;

	cr_assert_eq(parse(s, &r), (int)strlen(s));
	assert_path(&r, "/");
}

Test(httpd_req, partial)
{
	const char *s = "GET /f HTTP/1.1\r\nHost: x\r\n\r\n";
	struct http_req r;

	/* Every prefix short of the whole head asks for more. */
	for (size_t n = 0; n < strlen(s); n++)
		cr_assert_eq(http_req_parse(s, n, 0, &r), 0, "prefix of %zu bytes", n);
	cr_assert_eq(http_req_parse(s, strlen(s), 0, &r), (int)strlen(s));
}

Test(httpd_req, pipelined)
{
	const char *s = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
			"HEAD /b HTTP/1.1\r\nHost: x\r\n\r\n"
			"GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
			"GET /d HTTP/1.1\r\nHo";
	const char *want[] = { "/a", "/b", "/c" };
	size_t off = 0, len = strlen(s);
	struct http_req r;

	for (int i = 0; i < 3; i++) {
		int k = http_req_parse(s + off, len - off, 0, &r);

		cr_assert_gt(k, 0, "request %d", i);
		assert_path(&r, want[i]);
		cr_assert_eq(r.keep_alive, i < 2);
		cr_assert_eq(r.method, i == 1 ? HTTP_M_HEAD : HTTP_M_GET);
		off += (size_t)k;
	}
	cr_assert_eq(http_req_parse(s + off, len - off, 0, &r), 0, "the fourth is not whole");
}

Test(httpd_req, versions_and_connection)
{
	struct http_req r;

	cr_assert_gt(parse("GET / HTTP/1.0\r\n\r\n", &r), 0, "no Host needed in 1.0");
	cr_assert_eq(r.minor, 0);
	cr_assert(!r.keep_alive, "1.0 closes by default");
	cr_assert_gt(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &r), 0);
	cr_assert(r.keep_alive);
	cr_assert_gt(parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, CLOSE\r\n\r\n", &r), 0);
	cr_assert(!r.keep_alive, "close wins");
	cr_assert_gt(parse("GET / HTTP/1.1\r\nHost: x\r\nconnection:   upgrade ,  close  \r\n\r\n", &r), 0);
	cr_assert(!r.keep_alive);
	cr_assert_gt(parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: closed\r\n\r\n", &r), 0);
	cr_assert(r.keep_alive, "'closed' is not 'close'");
	cr_assert_gt(parse("GET / HTTP/1.9\r\nHost: x\r\n\r\n", &r), 0, "a later 1.x is served as 1.1");
	cr_assert_eq(r.minor, 1);
	assert_refused("GET / HTTP/2.0\r\nHost: x\r\n\r\n", -ENOTSUP, 505);
	assert_refused("GET / HTTP/0.9\r\n\r\n", -ENOTSUP, 505);
	assert_refused("GET / HTTP/1.10\r\nHost: x\r\n\r\n", -EBADMSG, 400);
	assert_refused("GET / http/1.1\r\nHost: x\r\n\r\n", -EBADMSG, 400);
	assert_refused("GET /\r\n\r\n", -EBADMSG, 400);
}

Test(httpd_req, methods)
{
	assert_refused("POST /f HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", -ENOTSUP, 405);
	assert_refused("DELETE /f HTTP/1.1\r\nHost: x\r\n\r\n", -ENOTSUP, 405);
	assert_refused("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", -EBADMSG, 400);
	assert_refused("BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n", -ENOTSUP, 501);
	assert_refused("get / HTTP/1.1\r\nHost: x\r\n\r\n", -ENOTSUP, 501);
	assert_refused("G(T / HTTP/1.1\r\nHost: x\r\n\r\n", -EBADMSG, 400);
}

Test(httpd_req, malformed)
{
	static const char *const bad[] = {
		"GET  / HTTP/1.1\r\nHost: x\r\n\r\n",          /* two spaces */
		" GET / HTTP/1.1\r\nHost: x\r\n\r\n",          /* leading space */
		"GET / HTTP/1.1 \r\nHost: x\r\n\r\n",          /* trailing space */
		"GET foo HTTP/1.1\r\nHost: x\r\n\r\n",         /* not origin form */
		"GET /a#frag HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /a\tb HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /\x7f HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /\x80 HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET / HTTP/1.1\rHost: x\r\n\r\n",             /* bare CR */
		"GET / HTTP/1.1\r\nHost : x\r\n\r\n",          /* space before the colon */
		"GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", /* obs-fold */
		"GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\n: empty name\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nX: a\x01z\r\n\r\n",
		"GET / HTTP/1.1\r\n\r\n",                      /* 1.1 without Host */
		"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 4\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_refused(bad[i], -EBADMSG, 400);
	/* NUL in the head (strlen would stop at it). */
	{
		const char s[] = "GET / HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n\r\n";
		struct http_req r;

		cr_assert_eq(http_req_parse(s, sizeof(s) - 1, 0, &r), -EBADMSG);
		cr_assert_eq(r.status, 400);
	}
	/* A bad line is refused before the head is whole. */
	assert_refused("GET / HTTP/1.1\r\nHost : x\r\n", -EBADMSG, 400);
}

Test(httpd_req, bodies_and_codings)
{
	const char *s = "GET /f HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
	struct http_req r;

	cr_assert_eq(parse(s, &r), (int)strlen(s) - 5);
	cr_assert_eq(r.body_len, 5);
	cr_assert_gt(parse("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 7, 7\r\nContent-Length: 7\r\n\r\n", &r), 0);
	cr_assert_eq(r.body_len, 7);
	assert_refused("GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", -ENOTSUP, 501);
	assert_refused("GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
		       -ENOTSUP, 501);
	assert_refused("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", -EMSGSIZE, 413);
}

Test(httpd_req, oversize)
{
	size_t big = 1 << 20;
	char *s = malloc(big);
	struct http_req r;
	const char *line = "GET / HTTP/1.1\r\nHost: x\r\n";

	cr_assert_not_null(s);
	/* 1 MB of header lines with no end: refused at the cap, whatever follows. */
	strcpy(s, line);
	for (size_t i = strlen(line); i < big; i++)
		s[i] = (i % 64 == 63) ? '\n' : 'a' + (char)(i % 26);
	for (size_t i = strlen(line); i + 64 < big; i += 64)
		memcpy(s + i, "X-Junk: ", 8);
	cr_assert_eq(http_req_parse(s, big, 0, &r), -EMSGSIZE);
	cr_assert_eq(r.status, 431);
	cr_assert_eq(http_req_parse(s, HTTP_REQ_MAX_HEAD, 0, &r), -EMSGSIZE, "exactly the cap, no end: refused");
	cr_assert_eq(http_req_parse(s, HTTP_REQ_MAX_HEAD - 1, 0, &r), 0, "under the cap: more may come");
	/* The request line alone too long: 414. */
	memset(s, 'a', big);
	memcpy(s, "GET /", 5);
	cr_assert_eq(http_req_parse(s, big, 0, &r), -EMSGSIZE);
	cr_assert_eq(r.status, 414);
	/* 1 MB of garbage without a line end. */
	memset(s, 'z', big);
	cr_assert_eq(http_req_parse(s, big, 0, &r), -EMSGSIZE);
	cr_assert(r.status == 414 || r.status == 431);
	/* Binary garbage with line ends: refused as malformed at its first line. */
	for (size_t i = 0; i < big; i++)
		s[i] = (char)(i * 131 + 7);
	cr_assert_lt(http_req_parse(s, big, 0, &r), 0);
	cr_assert_geq(r.status, 400);
	/* A head that ends just inside a smaller cap, and one just past it. */
	{
		const char *h = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

		cr_assert_eq(http_req_parse(h, strlen(h), strlen(h), &r), (int)strlen(h));
		cr_assert_eq(http_req_parse(h, strlen(h), strlen(h) - 1, &r), -EMSGSIZE);
		cr_assert_eq(r.status, 431);
	}
	free(s);
}

Test(httpd_req, status_text)
{
	cr_assert_str_eq(http_status_text(404), "Not Found");
	cr_assert_str_eq(http_status_text(431), "Request Header Fields Too Large");
	cr_assert_null(http_status_text(299));
}
