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
 * Declare and zero-fill an options struct, setting its size:
 *   GSO_OPTS(gso_seg_opts, o, .mss = 1448);
 * Fields not named are zero, which always means "default".
 */
#define GSO_OPTS(TYPE, NAME, ...)                                   \
	struct TYPE NAME = ({                                       \
		memset(&NAME, 0, sizeof(struct TYPE));              \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ }; \
	})

/* Largest IP datagram a super-segment may describe (IPv4 tot_len is 16 bits). */
#define GSO_MAX_IP_LEN 65535u
/* Longest L2+L3+L4 header the library accepts (e1000 HDRLEN is 8 bits). */
#define GSO_MAX_HDR_LEN 255u

#endif
