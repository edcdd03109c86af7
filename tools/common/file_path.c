#include "file_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

unsigned file_path_decode(const char *p, size_t p_len, char *out, size_t cap)
{
	char dec[PATH_MAX];
	size_t n = 0, o = 0, i = 0;

	if (!p_len || p[0] != '/' || cap < 2)
		return 400;
	/* Percent-decoding first, so that encoded dots and slashes meet the segment rules. */
	for (size_t k = 0; k < p_len; k++) {
		char c = p[k];

		if (c == '%') {
			int h, l;

			if (k + 2 >= p_len)
				return 400;
			h = hexval(p[k + 1]);
			l = hexval(p[k + 2]);
			if (h < 0 || l < 0)
				return 400;
			c = (char)(h * 16 + l);
			k += 2;
		}
		if (!c)
			return 400;
		if (n + 1 >= sizeof(dec))
			return 414;
		dec[n++] = c;
	}
	/* Segments: "" and "." dropped, ".." refused. */
	while (i < n) {
		size_t s, l;

		while (i < n && dec[i] == '/')
			i++;
		s = i;
		while (i < n && dec[i] != '/')
			i++;
		l = i - s;
		if (!l || (l == 1 && dec[s] == '.'))
			continue;
		if (l == 2 && dec[s] == '.' && dec[s + 1] == '.')
			return 403;
		if (o + (o ? 1 : 0) + l + 1 > cap)
			return 414;
		if (o)
			out[o++] = '/';
		memcpy(out + o, dec + s, l);
		o += l;
	}
	if (!o)
		out[o++] = '.';
	out[o] = 0;
	return 0;
}

/*
 * Without openat2 (a kernel before 5.6, or valgrind, which does not know
 * the call): the normalised path (no "." or "..", single slashes) walked a
 * component at a time with O_NOFOLLOW, so no symbolic link is followed at
 * all, inside the root or not: stricter than RESOLVE_BENEATH, never looser.
 */
int file_path_walk(int root_fd, const char *rel)
{
	const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW;
	char comp[NAME_MAX + 1];
	int dir = root_fd, fd;

	if (!strcmp(rel, ".")) {
		fd = openat(root_fd, ".", flags);
		return fd < 0 ? -errno : fd;
	}
	for (;;) {
		const char *slash = strchr(rel, '/');
		size_t l = slash ? (size_t)(slash - rel) : strlen(rel);

		if (!l || l > NAME_MAX) {
			fd = l ? -ENAMETOOLONG : -ENOENT;
			break;
		}
		memcpy(comp, rel, l);
		comp[l] = 0;
		fd = openat(dir, comp, slash ? flags | O_DIRECTORY : flags);
		if (fd < 0)
			fd = -errno;
		if (dir != root_fd)
			close(dir);
		if (fd < 0 || !slash)
			break;
		dir = fd;
		rel = slash + 1;
	}
	/* A symbolic link is refused (ELOOP: 403), as one that leaves the root would be. */
	return fd;
}

static int open_beneath(int root_fd, const char *rel)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, root_fd, rel, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		return file_path_walk(root_fd, rel);
	return fd < 0 ? -errno : (int)fd;
}

static unsigned status_of(int err)
{
	switch (err) {
	case -ENOENT:
	case -ENOTDIR:
		return 404;
	case -ENAMETOOLONG:
		return 414;
	case -EXDEV:  /* the path would leave the root */
	case -ELOOP:  /* a magic link, or too many links */
	case -EACCES:
	case -EPERM:
		return 403;
	default:
		return 500;
	}
}

/* A regular file: 0 (fd kept); else the status (fd closed). */
static unsigned regular(int fd, struct stat *st)
{
	if (fstat(fd, st)) {
		close(fd);
		return 500;
	}
	if (S_ISREG(st->st_mode))
		return 0;
	close(fd);
	return S_ISDIR(st->st_mode) ? 404 : 403;
}

unsigned file_path_open(int root_fd, char *rel, size_t cap, int *fd_out, struct stat *st)
{
	int fd = open_beneath(root_fd, rel);
	unsigned s;

	if (fd < 0)
		return status_of(fd);
	if (fstat(fd, st)) {
		close(fd);
		return 500;
	}
	if (S_ISDIR(st->st_mode)) {
		size_t n = strlen(rel);

		close(fd);
		if (!strcmp(rel, "."))
			n = 0;
		if (n + sizeof("/index.html") > cap)
			return 414;
		memcpy(rel + n, n ? "/index.html" : "index.html", n ? sizeof("/index.html") : sizeof("index.html"));
		fd = open_beneath(root_fd, rel);
		if (fd < 0)
			return status_of(fd);
	}
	s = regular(fd, st);
	if (s)
		return s;
	/* Served with plain reads of the mapping: no O_NONBLOCK needed from here on. */
	fcntl(fd, F_SETFL, 0);
	*fd_out = fd;
	return 0;
}
