#include "gso_test.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gso/tmpl.h>

const char *gso_test_build_path(const char *rel)
{
	static __thread char path[4096];
	const char *b = getenv("GSO_BUILD_DIR");

	snprintf(path, sizeof(path), "%s/%s", b && *b ? b : GSO_BUILD_DIR, rel);
	return path;
}

void gso_test_skip(const char *fmt, ...)
{
	const char *ci = getenv("CI");
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (ci && !strcmp(ci, "true"))
		cr_assert_fail("%s; CI=true makes a skip a failure", why);
	cr_skip_test("%s", why);
}

void gso_test_require_root(void)
{
	if (geteuid() != 0)
		gso_test_skip("needs root (network namespaces, veth, AF_PACKET); run as root to include it");
}

int gso_test_sh(const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int st, n;

	/* Formatted in full, whatever its length: a cut command would run a different one. */
	va_start(ap, fmt);
	n = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	st = system(cmd);
	free(cmd);
	if (st == -1)
		return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int gso_testbed_create(struct nsbed *tb)
{
	const struct nsbed_opts o = {
		/* nsbed's default tag and names ("t"; gva, gvb) are the tests'. */
		.ip4 = { "10.77.0.1/24", "10.77.0.2/24" },
		.ip6 = { "fd77::1/64", "fd77::2/64" },
	};

	return nsbed_create(tb, &o);
}

void gso_test_count_wire(void *ctx, const void *frame, uint32_t len)
{
	(void)frame;
	(void)len;
	atomic_fetch_add_explicit((_Atomic uint32_t *)ctx, 1, memory_order_relaxed);
}

uint64_t gso_test_env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	char *end;
	uint64_t x;

	if (!v || !*v)
		return dflt;
	errno = 0;
	x = strtoull(v, &end, 0);
	cr_assert(!errno && !*end, "%s=%s is not a number", name, v);
	return x;
}

uint64_t gso_test_seed(const char *env)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return gso_test_env_u64(env, ((uint64_t)now.tv_sec * 1000003u ^ (uint64_t)now.tv_nsec) &
					     0xffffffffffffull);
}

int gso_test_count_dir(const char *path)
{
	DIR *d = opendir(path);
	int n = 0;

	cr_assert_not_null(d, "opendir %s", path);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

void gso_test_tmpl_tcp4(struct gso_tmpl *t)
{
	GSO_OPTS(gso_tmpl_fields, f, .l3 = GSO_L3_IPV4, .l4 = GSO_L4_TCP, .sport = 7, .dport = 8, .df = true,
		 .seq = 1, .ack = 1, .window = 100, .tcp_flags = GSO_TCP_ACK);

	memset(f.eth_dst, 2, 6);
	memset(f.eth_src, 4, 6);
	memset(f.saddr, 10, 4);
	memset(f.daddr, 11, 4);
	cr_assert_eq(gso_tmpl__build(t, &f), 0);
}
