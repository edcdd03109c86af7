/*
 * A libgso stream writing a bench transfer (proto.h: header, then the
 * stream) straight into its device buffers: what bench/sender --queues
 * and the soak (tests/soak) do on every GSO_EV_STREAM_WRITABLE.
 */
#ifndef BENCH_XFER_WRITE_H
#define BENCH_XFER_WRITE_H

#include <stdbool.h>
#include <stdint.h>

#include <gso/engine.h>

#include "stream.h"

/*
 * Write transfer bytes [*written, total) (bench_xfer_fill with `hdr` and
 * `hlen`) into stream `s` until it says "later" (-EAGAIN, -ENOBUFS:
 * GSO_EV_STREAM_WRITABLE comes back) or everything is written; *written
 * advances by what was committed.  Returns true once *written == total
 * (the caller shuts the stream down).
 */
bool bench_xfer_write(struct gso_stream *s, const uint8_t *hdr, uint32_t hlen, const struct bench_stream *bs,
		      uint64_t *written, uint64_t total);

#endif
