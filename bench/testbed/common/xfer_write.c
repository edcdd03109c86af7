/* A bench transfer into a libgso stream's device buffers (xfer_write.h). */
#include "proto.h"
#include "xfer_write.h"

bool bench_xfer_write(struct gso_stream *s, const uint8_t *hdr, uint32_t hlen, const struct bench_stream *bs,
		      uint64_t *written, uint64_t total)
{
	while (*written < total) {
		void *p;
		uint32_t room;

		if (gso_stream__reserve(s, &p, &room))
			return false;
		if (room > total - *written)
			room = (uint32_t)(total - *written);
		bench_xfer_fill(hdr, hlen, bs, *written, p, room);
		if (gso_stream__commit(s, room))
			return false;
		*written += room;
	}
	return true;
}
