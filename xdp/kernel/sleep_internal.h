/*
 * The short waits of set-up and teardown (not installed): a socket just
 * closed on a queue, a device draining at close.  Never on the data path.
 * Any folder of xdp/ may include it.
 */
#ifndef GSO_XDP_SLEEP_INTERNAL_H
#define GSO_XDP_SLEEP_INTERNAL_H

#include <time.h>

static inline void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

#endif
