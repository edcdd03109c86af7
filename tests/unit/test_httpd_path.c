/*
 * gsohttpd's paths (tools/common/file_path.c), no root: percent-decoding
 * and the segment rules, then openat2 beneath a temporary root that holds
 * a file, a directory with an index, a FIFO, symlinks inside, and
 * symlinks out of it (absolute, relative with '..', /proc magic links):
 * nothing outside the root is ever opened.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../tools/common/file_path.c"

static char top[64], root[96];
static int root_fd = -1;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void put(const char *dir, const char *name, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	cr_assert_not_null(f, "%s", p);
	fputs(text, f);
	fclose(f);
}

static void link_at(const char *target, const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", root, name);
	cr_assert_eq(symlink(target, p), 0, "%s -> %s", p, target);
}

/*
 * top/secret.txt         outside the root
 * top/www/               the root
 *   a.txt, sub/b.txt, sub/index.html, empty/, fifo
 *   in -> a.txt, insub -> sub/b.txt, up -> ../secret.txt, abs -> TOP/secret.txt,
 *   dirup -> .., self -> /proc/self/root/etc/passwd, loop -> loop
 */
static void setup(void)
{
	char p[256];

	snprintf(top, sizeof(top), "/tmp/gso-httpd-path-XXXXXX");
	cr_assert_not_null(mkdtemp(top));
	snprintf(root, sizeof(root), "%s/www", top);
	cr_assert_eq(mkdir(root, 0755), 0);
	put(top, "secret.txt", "secret\n");
	put(root, "a.txt", "a\n");
	snprintf(p, sizeof(p), "%s/sub", root);
	cr_assert_eq(mkdir(p, 0755), 0);
	put(p, "b.txt", "b\n");
	put(p, "index.html", "<p>sub</p>\n");
	snprintf(p, sizeof(p), "%s/empty", root);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/fifo", root);
	cr_assert_eq(mkfifo(p, 0644), 0);
	link_at("a.txt", "in");
	link_at("sub/b.txt", "insub");
	link_at("../secret.txt", "up");
	snprintf(p, sizeof(p), "%s/secret.txt", top);
	link_at(p, "abs");
	link_at("..", "dirup");
	link_at("/proc/self/root/etc/passwd", "self");
	link_at("loop", "loop");
	root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(root_fd, 0);
}

static void teardown(void)
{
	if (root_fd >= 0)
		close(root_fd);
	root_fd = -1;
	if (top[0])
		nftw(top, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	top[0] = 0;
}

static unsigned decode(const char *p, char *out)
{
	return file_path_decode(p, strlen(p), out, PATH_MAX);
}

Test(httpd_path, decode)
{
	static const struct {
		const char *in, *out;
	} ok[] = {
		{ "/", "." },
		{ "/a.txt", "a.txt" },
		{ "//a//b/", "a/b" },
		{ "/./a/./b", "a/b" },
		{ "/%41%62c", "Abc" },
		{ "/a%20b", "a b" },
		{ "/a%2fb", "a/b" },       /* an encoded slash is a separator like any */
		{ "/a%2Fb", "a/b" },
		{ "/%2e/x", "x" },         /* an encoded "." is "." */
		{ "/...", "..." },         /* three dots is a name */
		{ "/..a/b..", "..a/b.." },
	};
	char out[PATH_MAX];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cr_assert_eq(decode(ok[i].in, out), 0, "%s", ok[i].in);
		cr_assert_str_eq(out, ok[i].out, "%s", ok[i].in);
	}
}

Test(httpd_path, decode_refusals)
{
	static const struct {
		const char *in;
		unsigned status;
	} bad[] = {
		{ "/..", 403 },
		{ "/../etc/passwd", 403 },
		{ "/a/../../etc/passwd", 403 },
		{ "/a/..", 403 },          /* even when it would stay inside: never resolved by us */
		{ "/%2e%2e/etc/passwd", 403 },
		{ "/%2E%2E/etc/passwd", 403 },
		{ "/.%2e/x", 403 },
		{ "/%2e./x", 403 },
		{ "/..%2fetc%2fpasswd", 403 },
		{ "/a%2f..%2f..%2fetc", 403 },
		{ "/%00", 400 },
		{ "/a.txt%00.html", 400 },
		{ "/%", 400 },
		{ "/%4", 400 },
		{ "/%zz", 400 },
		{ "/%%41", 400 },
		{ "a.txt", 400 },          /* not absolute */
		{ "", 400 },
	};
	char out[PATH_MAX];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(decode(bad[i].in, out), bad[i].status, "'%s'", bad[i].in);
	/* %25 is a literal '%', decoded once only. */
	cr_assert_eq(decode("/%252e%252e", out), 0);
	cr_assert_str_eq(out, "%2e%2e");
}

Test(httpd_path, decode_lengths)
{
	char in[PATH_MAX + 8], out[16];

	memset(in, 'a', sizeof(in) - 1);
	in[0] = '/';
	in[sizeof(in) - 1] = 0;
	{
		char big[PATH_MAX];

		cr_assert_eq(file_path_decode(in, strlen(in), big, sizeof(big)), 414);
	}
	cr_assert_eq(file_path_decode("/abcdefghijklmnopq", 18, out, sizeof(out)), 414);
	cr_assert_eq(file_path_decode("/abcdefghijklmn", 15, out, sizeof(out)), 0);
	cr_assert_str_eq(out, "abcdefghijklmn");
}

/* file_path_open of a relative path as given (no decoding): the status. */
static unsigned try_open(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;
	int fd = -1;
	unsigned s;

	snprintf(p, sizeof(p), "%s", rel);
	s = file_path_open(root_fd, p, sizeof(p), &fd, &st);
	if (!s)
		close(fd);
	return s;
}

/* Decode and open as the server does: the status, and the file's first line when 0. */
static unsigned serve(const char *target, char *first, size_t cap)
{
	char rel[PATH_MAX];
	struct stat st;
	unsigned s = decode(target, rel);
	int fd = -1;
	ssize_t n;

	if (s)
		return s;
	s = file_path_open(root_fd, rel, sizeof(rel), &fd, &st);
	if (s)
		return s;
	cr_assert(S_ISREG(st.st_mode));
	n = read(fd, first, cap - 1);
	cr_assert_geq(n, 0);
	first[n] = 0;
	close(fd);
	return 0;
}

Test(httpd_path, open_inside, .init = setup, .fini = teardown)
{
	char got[64];

	cr_assert_eq(serve("/a.txt", got, sizeof(got)), 0);
	cr_assert_str_eq(got, "a\n");
	cr_assert_eq(serve("/sub/b.txt", got, sizeof(got)), 0);
	cr_assert_str_eq(got, "b\n");
	cr_assert_eq(serve("/sub", got, sizeof(got)), 0, "a directory: its index.html");
	cr_assert_str_eq(got, "<p>sub</p>\n");
	cr_assert_eq(serve("/sub/", got, sizeof(got)), 0);
	cr_assert_str_eq(got, "<p>sub</p>\n");
	cr_assert_eq(serve("/in", got, sizeof(got)), 0, "a symlink that stays inside is followed");
	cr_assert_str_eq(got, "a\n");
	cr_assert_eq(serve("/insub", got, sizeof(got)), 0);
	cr_assert_str_eq(got, "b\n");
}

Test(httpd_path, index_named, .init = setup, .fini = teardown)
{
	char rel[PATH_MAX] = "sub", small[12] = "sub";
	struct stat st;
	int fd = -1;

	cr_assert_eq(file_path_open(root_fd, rel, sizeof(rel), &fd, &st), 0);
	cr_assert_str_eq(rel, "sub/index.html", "what was opened, for its content type");
	close(fd);
	cr_assert_eq(file_path_open(root_fd, small, sizeof(small), &fd, &st), 414, "no room for /index.html");
	put(root, "index.html", "<p>root</p>\n");
	snprintf(rel, sizeof(rel), ".");
	cr_assert_eq(file_path_open(root_fd, rel, sizeof(rel), &fd, &st), 0);
	cr_assert_str_eq(rel, "index.html");
	close(fd);
}

Test(httpd_path, open_missing, .init = setup, .fini = teardown)
{
	char got[64];

	cr_assert_eq(serve("/nope", got, sizeof(got)), 404);
	cr_assert_eq(serve("/a.txt/x", got, sizeof(got)), 404, "a file as a directory");
	cr_assert_eq(serve("/", got, sizeof(got)), 404, "the root has no index.html");
	cr_assert_eq(serve("/empty", got, sizeof(got)), 404, "a directory without index.html");
	cr_assert_eq(serve("/fifo", got, sizeof(got)), 403, "not a regular file (and it did not block)");
}

Test(httpd_path, never_outside, .init = setup, .fini = teardown)
{
	static const char *const out[] = {
		"/up",                   /* -> ../secret.txt */
		"/abs",                  /* -> /tmp/.../secret.txt */
		"/dirup/secret.txt",     /* -> .. */
		"/dirup/www/a.txt",      /* out and back in: still refused */
		"/self",                 /* -> /proc/self/root/... */
		"/loop",
		"/../secret.txt",
		"/%2e%2e/secret.txt",
		"/..%2fsecret.txt",
		"/sub/..%2f..%2fsecret.txt",
		"/%2e%2e%2fsecret.txt",
		"/secret.txt%00",
	};
	char got[64];

	for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++) {
		unsigned s = serve(out[i], got, sizeof(got));

		cr_assert(s == 400 || s == 403 || s == 404, "'%s' gave %u", out[i], s);
	}
	/* The kernel's refusal, not our decoder's: a symlink out is EXDEV, i.e. 403. */
	{
		cr_assert_eq(try_open("up"), 403);
		cr_assert_eq(try_open("abs"), 403);
		cr_assert_eq(try_open("dirup/secret.txt"), 403);
		cr_assert_eq(try_open("../secret.txt"), 403);
		cr_assert_eq(try_open("/etc/passwd"), 403, "absolute: refused beneath");
		cr_assert_eq(try_open("self"), 403);
	}
	/* The secret is there, and readable, so the refusals above are the rules at work. */
	{
		char p[256];

		snprintf(p, sizeof(p), "%s/secret.txt", top);
		cr_assert_eq(access(p, R_OK), 0);
	}
}

/* Without openat2 (valgrind, old kernels): the walk follows no symlink, inside or out. */
Test(httpd_path, walk_without_openat2, .init = setup, .fini = teardown)
{
	static const char *const refused[] = { "up", "abs", "dirup/secret.txt", "self", "loop", "in", "insub" };
	char buf[8];
	int fd;

	fd = file_path_walk(root_fd, "a.txt");
	cr_assert_geq(fd, 0);
	cr_assert_eq(read(fd, buf, sizeof(buf)), 2);
	close(fd);
	fd = file_path_walk(root_fd, "sub/b.txt");
	cr_assert_geq(fd, 0);
	close(fd);
	fd = file_path_walk(root_fd, ".");
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(file_path_walk(root_fd, "nope"), -ENOENT);
	cr_assert_eq(file_path_walk(root_fd, "a.txt/x"), -ENOTDIR);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		fd = file_path_walk(root_fd, refused[i]);
		cr_assert(fd == -ELOOP || fd == -ENOTDIR, "'%s' gave %d", refused[i], fd);
		cr_assert_eq(status_of(fd), fd == -ELOOP ? 403u : 404u);
	}
}
