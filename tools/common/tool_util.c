#include "tool_util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tool_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* The errno values <gso/gso.h> lists, with what they mean for a record. */
static const struct {
	int err;
	const char *name;
	const char *text;
} gso_errs[] = {
	{ EINVAL, "EINVAL", "invalid argument (option out of range for this packet, e.g. fixed IP ID without DF)" },
	{ ENODATA, "ENODATA", "truncated: frame shorter than the headers it must hold" },
	{ EBADMSG, "EBADMSG", "malformed header (bad version, header length, options, or lengths that contradict each other or the frame)" },
	{ EPROTONOSUPPORT, "EPROTONOSUPPORT", "protocol not supported (not IPv4/IPv6 + TCP/UDP, IPv6 extension header, IPv4 fragment, stacked VLAN)" },
	{ EMSGSIZE, "EMSGSIZE", "too large (IP datagram over 65535 bytes or headers over 255 bytes)" },
	{ E2BIG, "E2BIG", "too many segments for this MSS (UDP allows 128, as Linux)" },
	{ ENOSPC, "ENOSPC", "output array too small" },
	{ ENOBUFS, "ENOBUFS", "output buffer too small for a frame" },
	{ ENOTSUP, "ENOTSUP", "not supported here" },
	{ ENOMEM, "ENOMEM", "out of memory" },
};

const char *tool_errno_name(int err)
{
	if (err < 0)
		err = -err;
	for (size_t i = 0; i < sizeof(gso_errs) / sizeof(gso_errs[0]); i++)
		if (gso_errs[i].err == err)
			return gso_errs[i].name;
	return "E?";
}

const char *tool_gso_strerror(int err)
{
	if (err < 0)
		err = -err;
	for (size_t i = 0; i < sizeof(gso_errs) / sizeof(gso_errs[0]); i++)
		if (gso_errs[i].err == err)
			return gso_errs[i].text;
	return strerror(err);
}

int tool_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

void tool_die(const char *prog, int code, int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err < 0 ? -err : err));
	fputc('\n', stderr);
	exit(code);
}

uint64_t tool_opt_u64(const char *prog, const char *name, const char *v, uint64_t lo, uint64_t hi)
{
	uint64_t x;

	if (tool_parse_u64(v, lo, hi, &x))
		tool_die(prog, TOOL_EXIT_USAGE, 0, "bad --%s '%s' (%" PRIu64 "..%" PRIu64 ")", name, v, lo, hi);
	return x;
}

void tool_write_ready(const char *prog, const char *path, const char *listen, unsigned port)
{
	char tmp[PATH_MAX];
	FILE *f;

	if (!path)
		return;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp) || !(f = fopen(tmp, "w")))
		tool_die(prog, TOOL_EXIT_USAGE, errno, "--ready %s", path);
	fprintf(f, "%s %u\n", listen, port);
	if (fclose(f) || rename(tmp, path))
		tool_die(prog, TOOL_EXIT_USAGE, errno, "--ready %s", path);
}
