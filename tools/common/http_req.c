#include "http_req.h"

#include <errno.h>
#include <string.h>

/* RFC 9110 5.6.2 tchar. */
static bool is_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Field value bytes: VCHAR, obs-text, SP, HTAB (no other control byte, no NUL). */
static bool is_vbyte(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static bool ieq(const char *a, size_t n, const char *lit)
{
	size_t m = strlen(lit);

	if (n != m)
		return false;
	for (size_t i = 0; i < n; i++) {
		char x = a[i], y = lit[i];

		if (x >= 'A' && x <= 'Z')
			x = (char)(x - 'A' + 'a');
		if (x != y)
			return false;
	}
	return true;
}

static int refuse(struct http_req *r, int err, uint32_t status)
{
	r->status = status;
	r->keep_alive = false;
	return err;
}

/*
 * The next line at buf[*pos..len): its start and length without CR LF.
 * 1 a whole line (*pos past its LF), 0 not whole yet, -1 a CR not
 * followed by LF (bare CR, refused).
 */
static int next_line(const char *buf, size_t len, size_t *pos, const char **line, size_t *n)
{
	const char *s = buf + *pos, *lf = memchr(s, '\n', len - *pos);
	size_t l;

	if (!lf)
		return 0;
	l = (size_t)(lf - s);
	if (l && s[l - 1] == '\r')
		l--;
	if (memchr(s, '\r', l))
		return -1;
	*line = s;
	*n = l;
	*pos += (size_t)(lf - s) + 1;
	return 1;
}

static const char *const other_methods[] = { "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH" };

static int parse_method(const char *m, size_t n, struct http_req *r)
{
	if (n == 3 && !memcmp(m, "GET", 3))
		r->method = HTTP_M_GET;
	else if (n == 4 && !memcmp(m, "HEAD", 4))
		r->method = HTTP_M_HEAD;
	else
		r->method = HTTP_M_OTHER;
	return 0;
}

/* The request line: method, target (path kept), version.  0 or a refusal. */
static int parse_request_line(const char *l, size_t n, struct http_req *r)
{
	const char *sp1 = memchr(l, ' ', n), *t, *sp2, *v;
	size_t tn, vn;

	if (!sp1 || sp1 == l)
		return refuse(r, -EBADMSG, 400);
	for (const char *p = l; p < sp1; p++)
		if (!is_tchar((unsigned char)*p))
			return refuse(r, -EBADMSG, 400);
	parse_method(l, (size_t)(sp1 - l), r);
	t = sp1 + 1;
	sp2 = memchr(t, ' ', n - (size_t)(t - l));
	if (!sp2 || sp2 == t) /* no version (HTTP/0.9), or two spaces */
		return refuse(r, -EBADMSG, 400);
	tn = (size_t)(sp2 - t);
	for (size_t i = 0; i < tn; i++)
		if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f)
			return refuse(r, -EBADMSG, 400);
	v = sp2 + 1;
	vn = n - (size_t)(v - l);
	if (vn != 8 || memcmp(v, "HTTP/", 5) || v[5] < '0' || v[5] > '9' || v[6] != '.' || v[7] < '0' ||
	    v[7] > '9')
		return refuse(r, -EBADMSG, 400);
	if (v[5] != '1')
		return refuse(r, -ENOTSUP, 505);
	r->minor = v[7] == '0' ? 0 : 1;
	/* Absolute form: drop "scheme://authority". */
	if (tn > 7 && (ieq(t, 7, "http://") || (tn > 8 && ieq(t, 8, "https://")))) {
		const char *a = t + (t[4] == ':' ? 7 : 8), *slash = memchr(a, '/', tn - (size_t)(a - t));

		if (!slash) {
			r->path = "/";
			r->path_len = 1;
			return 0;
		}
		tn -= (size_t)(slash - t);
		t = slash;
	}
	if (t[0] != '/' || memchr(t, '#', tn))
		return refuse(r, -EBADMSG, 400);
	for (size_t i = 0; i < tn; i++)
		if (t[i] == '?') {
			tn = i;
			break;
		}
	r->path = t;
	r->path_len = tn;
	return 0;
}

struct fields {
	unsigned hosts;
	bool close, keep_alive, te, have_cl;
	uint64_t cl;
};

/* One comma-separated list element of a Connection or Content-Length value. */
static int each_elem(const char *v, size_t n, int (*fn)(struct fields *, const char *, size_t), struct fields *f)
{
	size_t i = 0;

	while (i <= n) {
		size_t s = i, e;

		while (i < n && v[i] != ',')
			i++;
		e = i;
		while (s < e && (v[s] == ' ' || v[s] == '\t'))
			s++;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e > s && fn(f, v + s, e - s))
			return -1;
		i++;
	}
	return 0;
}

static int conn_token(struct fields *f, const char *t, size_t n)
{
	if (ieq(t, n, "close"))
		f->close = true;
	else if (ieq(t, n, "keep-alive"))
		f->keep_alive = true;
	return 0;
}

static int cl_value(struct fields *f, const char *t, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		if (t[i] < '0' || t[i] > '9' || v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(t[i] - '0');
	}
	if (f->have_cl && v != f->cl)
		return -1;
	f->have_cl = true;
	f->cl = v;
	return 0;
}

/* One header field line.  0 or a refusal. */
static int parse_field(const char *l, size_t n, struct fields *f, struct http_req *r)
{
	const char *colon = memchr(l, ':', n), *v;
	size_t nn, vn;

	if (l[0] == ' ' || l[0] == '\t') /* obs-fold */
		return refuse(r, -EBADMSG, 400);
	if (!colon || colon == l)
		return refuse(r, -EBADMSG, 400);
	nn = (size_t)(colon - l);
	for (size_t i = 0; i < nn; i++)
		if (!is_tchar((unsigned char)l[i])) /* whitespace before the colon among them */
			return refuse(r, -EBADMSG, 400);
	v = colon + 1;
	vn = n - nn - 1;
	for (size_t i = 0; i < vn; i++)
		if (!is_vbyte((unsigned char)v[i]))
			return refuse(r, -EBADMSG, 400);
	while (vn && (v[0] == ' ' || v[0] == '\t')) {
		v++;
		vn--;
	}
	while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
		vn--;
	if (ieq(l, nn, "host"))
		f->hosts++;
	else if (ieq(l, nn, "connection"))
		each_elem(v, vn, conn_token, f);
	else if (ieq(l, nn, "transfer-encoding"))
		f->te = true;
	else if (ieq(l, nn, "content-length") && (!vn || each_elem(v, vn, cl_value, f)))
		return refuse(r, -EBADMSG, 400);
	return 0;
}

int http_req_parse(const char *buf, size_t len, size_t max_head, struct http_req *r)
{
	struct fields f = { 0 };
	const char *l;
	size_t pos = 0, n;
	bool have_line = false;
	int k, err;

	if (!max_head)
		max_head = HTTP_REQ_MAX_HEAD;
	memset(r, 0, sizeof(*r));
	for (;;) {
		k = next_line(buf, len < max_head ? len : max_head, &pos, &l, &n);
		if (k < 0)
			return refuse(r, -EBADMSG, 400);
		if (!k) {
			if (len < max_head)
				return 0;
			return have_line ? refuse(r, -EMSGSIZE, 431) : refuse(r, -EMSGSIZE, 414);
		}
		if (!have_line) {
			if (!n)
				continue; /* empty lines before the request line */
			err = parse_request_line(l, n, r);
			if (err)
				return err;
			have_line = true;
			continue;
		}
		if (!n)
			break;
		err = parse_field(l, n, &f, r);
		if (err)
			return err;
	}
	r->head_len = pos;
	if (r->method == HTTP_M_OTHER) {
		/* The method's name is the start of the request line. */
		const char *m = buf;
		size_t mn;

		while (*m == '\r' || *m == '\n')
			m++;
		mn = (size_t)((const char *)memchr(m, ' ', (size_t)(buf + pos - m)) - m);
		for (size_t i = 0; i < sizeof(other_methods) / sizeof(other_methods[0]); i++)
			if (strlen(other_methods[i]) == mn && !memcmp(m, other_methods[i], mn))
				return refuse(r, -ENOTSUP, 405);
		return refuse(r, -ENOTSUP, 501);
	}
	if (f.hosts > 1 || (r->minor >= 1 && !f.hosts))
		return refuse(r, -EBADMSG, 400);
	if (f.te)
		return refuse(r, -ENOTSUP, 501);
	if (f.have_cl && f.cl > HTTP_REQ_MAX_BODY)
		return refuse(r, -EMSGSIZE, 413);
	r->body_len = f.have_cl ? f.cl : 0;
	r->keep_alive = !f.close && (r->minor >= 1 || f.keep_alive);
	r->status = 0;
	return (int)pos;
}

const char *http_status_text(unsigned status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return NULL;
	}
}
