/* libgso: macros shared by the public headers. */
#ifndef GSO_COMMON_H
#define GSO_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef GSO_API
#define GSO_API __attribute__((visibility("default")))
#endif

/*
 * Declare an options (or stats) struct, zero-filled, with its size set:
 *   GSO_OPTS(gso_seg_opts, o, .mss = 1448);
 *   GSO_OPTS(gso_dev_caps, c);                  all fields zero
 * Fields not named are zero, which always means "default".
 *
 * A struct written `= {0}` (sz 0) is also safe: a result is filled whole
 * and its sz set; an options struct all zero is all defaults, but one
 * with a field set and sz 0 is -EINVAL (the fields would be ignored);
 * gso_pacer and gso_rtt take sz 0 at __init as their whole size, and
 * refuse every later call if __init did not run or failed.
 *
 * Language: the public headers are ISO C11 and C++11 (from C++ they are
 * extern "C").  GSO_OPTS is ISO C11 and, in C++, needs C++20 (designated
 * initializers): name the fields in declaration order, without narrowing
 * conversions; g++'s -Wextra warns about every field left out
 * (-Wmissing-field-initializers), which is the point here.  It is a
 * declaration with an initializer, at block scope.
 *
 * Why the memset before the initializer: the library rejects a struct whose
 * bytes past the last field it knows, up to sz, are not zero, and those
 * bytes include the struct's tail padding (gso_seg_opts has four after
 * max_segs).  An initializer alone zeroes the members it does not name but
 * not the padding: Clang at -O0 leaves the stack's old bytes there and the
 * call fails with -EINVAL.  Neither standard promises padding bytes across
 * a struct store; GCC and Clang keep the memset's zeros, in C and C++ at
 * every -O level, and the library's tests check it on a dirty stack.
 * GSO_OPTS passes its arguments on to GSO_OPTS_DECL_ (not for direct use)
 * with an empty one added, so that a call naming no field is valid C11,
 * which wants at least one argument for "...".
 */
#define GSO_OPTS(TYPE, ...) GSO_OPTS_DECL_(TYPE, __VA_ARGS__, )
#ifdef __cplusplus
#define GSO_OPTS_DECL_(TYPE, NAME, ...) \
	struct TYPE NAME = (memset(&NAME, 0, sizeof(struct TYPE)), TYPE{ .sz = sizeof(struct TYPE), __VA_ARGS__ })
#else
#define GSO_OPTS_DECL_(TYPE, NAME, ...)                      \
	struct TYPE NAME = (memset(&NAME, 0, sizeof(struct TYPE)), \
			    (struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ })
#endif

/* Largest IP datagram a super-segment may describe (IPv4 tot_len is 16 bits). */
#define GSO_MAX_IP_LEN 65535u
/* Longest L2+L3+L4 header the library accepts (e1000 HDRLEN is 8 bits). */
#define GSO_MAX_HDR_LEN 255u

#endif
