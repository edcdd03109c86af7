/*
 * Small helpers shared by the command-line tools: option values and the
 * text for the library's error numbers.  Not part of libgso.
 */
#ifndef GSO_TOOL_UTIL_H
#define GSO_TOOL_UTIL_H

#include <stdint.h>

/* Exit codes every tool uses. */
#define TOOL_EXIT_OK 0
#define TOOL_EXIT_BAD_RECORDS 1 /* ran to the end, some input was refused */
#define TOOL_EXIT_USAGE 2       /* bad options, unreadable input, unwritable output */

/*
 * Parse a decimal (or 0x hex) unsigned integer in [min, max].  Returns 0,
 * or -EINVAL (not a number, trailing junk) / -ERANGE (out of range).
 */
int tool_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * Symbolic name ("EBADMSG") of a negative or positive errno, "E?" if not
 * one the library uses.
 */
const char *tool_errno_name(int err);

/*
 * What a libgso error number means for a super-packet (taken from the
 * list in <gso/gso.h>), or strerror() text for other values.
 */
const char *tool_gso_strerror(int err);

/* Open descriptors of this process (/proc/self/fd), or -1. */
int tool_count_fds(void);

/*
 * The servers' (gsohttpd, gsoquicd) fatal errors: "PROG: message[: strerror(err)]"
 * on stderr, then exit(code).  err 0: no errno text.
 */
void tool_die(const char *prog, int code, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5), noreturn));

/* Option --NAME's value `v` as an integer in [lo, hi], or tool_die(TOOL_EXIT_USAGE) saying why. */
uint64_t tool_opt_u64(const char *prog, const char *name, const char *v, uint64_t lo, uint64_t hi);

/*
 * --ready PATH: "LISTEN PORT\n" written to PATH.tmp and renamed into place,
 * so that whoever waits for PATH never reads it half written.  NULL path:
 * nothing.  On failure tool_die(TOOL_EXIT_USAGE).
 */
void tool_write_ready(const char *prog, const char *path, const char *listen, unsigned port);

#endif
