/*
 * Request paths to files under a root directory, for gsohttpd and gsoquicd.
 *
 * Two steps, each with its own refusals:
 *  1. file_path_decode(): percent-decoding of the request path ("%41" is
 *     "A"), then its segments: empty ones and "." are dropped, ".." is
 *     refused (after decoding, so "%2e%2e" and "..%2f" are refused too),
 *     as are NUL ("%00"), a bad escape and a path longer than PATH_MAX.
 *     The result is relative ("a/b.html"; "." for the root itself).
 *  2. file_path_open(): openat2(2) of that relative path on a descriptor
 *     of the root with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS, so that
 *     the kernel refuses every resolution that would leave the root: an
 *     absolute symlink, one whose target climbs out with "..", a
 *     /proc-style magic link.  Symlinks that stay inside are followed.
 *     A directory is served as its index.html (opened the same way) when
 *     that is a regular file, and is 404 otherwise; anything but a
 *     regular file (FIFO, device, socket) is 403.  Opened O_NONBLOCK, so
 *     that a FIFO never blocks the server.  Without openat2 (ENOSYS) the
 *     path is walked with O_NOFOLLOW instead, and no symlink is followed.
 * Statuses: 400 bad escape or NUL, 403 outside the root or not a regular
 * file or not readable, 404 no such file, 414 too long.
 */
#ifndef GSO_TOOL_FILE_PATH_H
#define GSO_TOOL_FILE_PATH_H

#include <stddef.h>
#include <sys/stat.h>

/*
 * Decode request path `p` (p_len bytes, starting with '/', query already
 * cut off) into `out` (cap bytes, NUL-terminated).  0, or the status to
 * answer (400, 403, 414).
 */
unsigned file_path_decode(const char *p, size_t p_len, char *out, size_t cap);

/*
 * Open `rel` (file_path_decode's result, in a buffer of `cap` bytes)
 * beneath the directory `root_fd`.  0 and *fd (O_RDONLY | O_CLOEXEC, a
 * regular file) with *st, `rel` then naming what was opened (".../index.html"
 * for a directory); or the status to answer (403, 404, 414, 500).
 */
unsigned file_path_open(int root_fd, char *rel, size_t cap, int *fd, struct stat *st);

/*
 * What file_path_open() does where openat2 is missing (ENOSYS: a kernel
 * before 5.6, or valgrind): `rel` walked a component at a time with
 * O_NOFOLLOW, so no symbolic link is followed at all (-ELOOP).  A
 * descriptor, or -errno.  Exposed for its tests.
 */
int file_path_walk(int root_fd, const char *rel);

#endif
