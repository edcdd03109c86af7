/* Mapping the AF_XDP rings (accessors: ring_internal.h). */
#include "ring_internal.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

int gsoi_xring_map(struct xring *r, int fd, enum xring_kind kind, uint32_t size)
{
	struct xdp_mmap_offsets off;
	const struct xdp_ring_offset *ro;
	socklen_t optlen = sizeof(off);
	size_t entry;
	off_t pgoff;
	void *map;

	memset(r, 0, sizeof(*r));
	if (!size || (size & (size - 1)))
		return -EINVAL;
	memset(&off, 0, sizeof(off));
	if (getsockopt(fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen))
		return -errno;
	/* Linux 5.3 and older lack the flags field (need_wakeup), which we rely on. */
	if (optlen != sizeof(off))
		return -EOPNOTSUPP;
	switch (kind) {
	case XRING_TX:
		ro = &off.tx;
		entry = sizeof(struct xdp_desc);
		pgoff = XDP_PGOFF_TX_RING;
		break;
	case XRING_RX:
		ro = &off.rx;
		entry = sizeof(struct xdp_desc);
		pgoff = XDP_PGOFF_RX_RING;
		break;
	case XRING_FILL:
		ro = &off.fr;
		entry = sizeof(uint64_t);
		pgoff = (off_t)XDP_UMEM_PGOFF_FILL_RING;
		break;
	case XRING_CQ:
	default:
		ro = &off.cr;
		entry = sizeof(uint64_t);
		pgoff = (off_t)XDP_UMEM_PGOFF_COMPLETION_RING;
		break;
	}
	r->map_len = ro->desc + (size_t)size * entry;
	map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, pgoff);
	if (map == MAP_FAILED) {
		int err = -errno;
		memset(r, 0, sizeof(*r));
		return err;
	}
	r->map = map;
	r->size = size;
	r->mask = size - 1;
	r->producer = (_Atomic uint32_t *)((uint8_t *)map + ro->producer);
	r->consumer = (_Atomic uint32_t *)((uint8_t *)map + ro->consumer);
	r->flags = (_Atomic uint32_t *)((uint8_t *)map + ro->flags);
	r->ring = (uint8_t *)map + ro->desc;
	/* Both start at the kernel's view (0 on a fresh ring). */
	r->cached_prod = atomic_load_explicit(r->producer, memory_order_relaxed);
	r->cached_cons = atomic_load_explicit(r->consumer, memory_order_relaxed);
	return 0;
}

void gsoi_xring_unmap(struct xring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	memset(r, 0, sizeof(*r));
}
