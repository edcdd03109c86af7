#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char *program_invocation_short_name;

int bench_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int bench_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* number[suffix] with a multiplier table; the result must fit 64 bits. */
static int parse_scaled(const char *s, const char *sfx, const double *mul, double *out)
{
	char *end;
	double v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	if (*end) {
		const char *p = strchr(sfx, *end);

		if (!p || end[1])
			return -EINVAL;
		v *= mul[p - sfx];
	}
	*out = v;
	return 0;
}

int bench_parse_size(const char *s, uint64_t *out)
{
	static const double mul[] = { 1024.0, 1024.0, 1048576.0, 1048576.0, 1073741824.0,
				      1073741824.0, 1099511627776.0, 1099511627776.0 };
	double v;
	int err = parse_scaled(s, "kKmMgGtT", mul, &v);

	if (err)
		return err;
	if (v >= 18446744073709551615.0 || v != floor(v))
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

int bench_parse_rate(const char *s, double *out)
{
	static const double mul[] = { 1e3, 1e3, 1e6, 1e6, 1e9, 1e9 };

	return parse_scaled(s, "kKmMgG", mul, out);
}

int bench_netns_enter(const char *name)
{
	char path[PATH_MAX];
	int fd, err = 0;

	if (strchr(name, '/'))
		return -EINVAL;
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET))
		err = -errno;
	close(fd);
	return err;
}

int bench_addr_parse(const char *ip, uint16_t port, int family, struct sockaddr_storage *ss,
		     socklen_t *len)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (ip && inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
		family = AF_INET;
	} else if (ip && inet_pton(AF_INET6, ip, &s6->sin6_addr) == 1) {
		family = AF_INET6;
	} else if (ip) {
		return -EINVAL;
	} else if (family != AF_INET && family != AF_INET6) {
		return -EINVAL;
	}
	if (family == AF_INET) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		*len = sizeof(*s4);
	} else {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		*len = sizeof(*s6);
	}
	return 0;
}

void bench_die(int code, int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err < 0 ? -err : err));
	fputc('\n', stderr);
	exit(code);
}

const char *bench_exe_dir(void)
{
	static char dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	char *slash;

	if (n <= 0)
		return ".";
	dir[n] = 0;
	slash = strrchr(dir, '/');
	if (!slash)
		return ".";
	*slash = 0;
	return dir;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bench_median(const double *v, unsigned n)
{
	double t[1024];

	if (!n)
		return 0;
	if (n > 1024)
		n = 1024;
	memcpy(t, v, n * sizeof(*t));
	qsort(t, n, sizeof(*t), cmp_double);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}
