/*
 * HTTP/1.x request heads for gsohttpd: the request line and the header
 * fields the server acts on, parsed from the bytes a connection has
 * received so far.  Pure: no allocation, no system calls.
 *
 * What is accepted (RFC 9112, strictly where it matters for safety):
 *  - "METHOD SP request-target SP HTTP/D.D" CRLF, then fields, then an
 *    empty line; bare LF is taken for CRLF, and empty lines before the
 *    request line are skipped (RFC 9112 2.2);
 *  - targets in origin form ("/path?query") or absolute form
 *    ("http://host/path"); the query is dropped;
 *  - versions HTTP/1.0 and HTTP/1.1 (a higher 1.x is answered as 1.1);
 *  - Connection: close / keep-alive (a comma-separated list, any case);
 *  - a body only as Content-Length (one value, or equal repeats), which the
 *    server reads and discards.
 * Anything else is refused with the status to answer, and the connection
 * closes after that answer: a malformed line, whitespace before a colon,
 * a folded line, a control byte, no Host in HTTP/1.1 or two Hosts (400),
 * Transfer-Encoding (501, which also rules out request smuggling through
 * TE + CL), a request line longer than the head limit (414) or a head
 * longer than it (431), a major version other than 1 (505), a method
 * other than GET or HEAD (405 for the registered ones, 501 otherwise).
 */
#ifndef GSO_TOOL_HTTP_REQ_H
#define GSO_TOOL_HTTP_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest request head (request line and fields) kept: 16 KiB. */
#define HTTP_REQ_MAX_HEAD 16384u
/* The longest request body read and discarded (Content-Length). */
#define HTTP_REQ_MAX_BODY (1u << 20)

enum http_method {
	HTTP_M_GET = 1,
	HTTP_M_HEAD,
	HTTP_M_OTHER, /* a method we do not serve */
};

struct http_req {
	uint32_t method;     /* enum http_method */
	uint32_t minor;      /* HTTP/1.minor (0 or 1) */
	bool keep_alive;     /* the connection stays open after the answer */
	const char *path;    /* the target's path, still percent-encoded: into the buffer, not NUL-terminated */
	size_t path_len;
	uint64_t body_len;   /* Content-Length: bytes that follow the head (to discard) */
	size_t head_len;     /* bytes of the head, its empty line included */
	uint32_t status;     /* when parsing fails: the status to answer (400, 405, 414, 431, 501, 505) */
};

/*
 * Parse the request head at the start of buf[0..len).  `max_head` caps
 * the head (0 = HTTP_REQ_MAX_HEAD).  Returns
 *   > 0  a whole head: its length (r->head_len), r filled;
 *   0    not whole yet and under the cap: read more;
 *   < 0  refused (-EBADMSG malformed, -EMSGSIZE too long, -ENOTSUP
 *        method, version or transfer coding not served); r->status is the
 *        status to answer and r->keep_alive is false.
 */
int http_req_parse(const char *buf, size_t len, size_t max_head, struct http_req *r);

/* The reason phrase of `status` ("Not Found"), or NULL for one the server does not send. */
const char *http_status_text(unsigned status);

#endif
