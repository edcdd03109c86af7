#include "pktcap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23 /* Linux 4.20 */
#endif

#define BLOCK_SIZE (1u << 20)
#define FRAME_SIZE 2048u

struct pktcap {
	int fd;
	uint8_t *map;
	size_t map_len;
	uint32_t nblocks;
	uint32_t cur;
	uint64_t packets, drops;
};

int pktcap_open(struct pktcap **out, int ifindex, uint32_t snaplen, uint32_t ring_mb)
{
	struct sock_filter snap[] = { BPF_STMT(BPF_RET | BPF_K, snaplen) };
	struct sock_fprog prog = { .len = 1, .filter = snap };
	struct tpacket_req3 req = {
		.tp_block_size = BLOCK_SIZE,
		.tp_block_nr = ring_mb,
		.tp_frame_size = FRAME_SIZE,
		.tp_frame_nr = ring_mb * (BLOCK_SIZE / FRAME_SIZE),
		.tp_retire_blk_tov = 2,
	};
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = ifindex,
	};
	int one = 1, ver = TPACKET_V3, err;
	struct pktcap *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	/* Protocol 0: nothing is queued until bind(), after the ring exists. */
	c->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		err = -errno;
		free(c);
		return err;
	}
	if (setsockopt(c->fd, SOL_PACKET, PACKET_VERSION, &ver, sizeof(ver)) ||
	    setsockopt(c->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) ||
	    setsockopt(c->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) ||
	    setsockopt(c->fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) ||
	    setsockopt(c->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)))
		goto fail;
	c->nblocks = ring_mb;
	c->map_len = (size_t)ring_mb * BLOCK_SIZE;
	c->map = mmap(NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, c->fd, 0);
	if (c->map == MAP_FAILED)
		c->map = mmap(NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	if (c->map == MAP_FAILED)
		goto fail;
	if (bind(c->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		munmap(c->map, c->map_len);
		goto fail;
	}
	*out = c;
	return 0;
fail:
	err = -errno;
	close(c->fd);
	free(c);
	return err;
}

int pktcap_poll(struct pktcap *c, int timeout_ms, pktcap_fn fn, void *arg)
{
	int n = 0;

	for (;;) {
		struct tpacket_block_desc *bd =
			(struct tpacket_block_desc *)(c->map + (size_t)c->cur * BLOCK_SIZE);
		_Atomic uint32_t *status = (_Atomic uint32_t *)&bd->hdr.bh1.block_status;
		struct tpacket3_hdr *h;

		/* Acquire: pairs with the kernel's barrier before it hands the block to us. */
		if (!(atomic_load_explicit(status, memory_order_acquire) & TP_STATUS_USER)) {
			struct pollfd pfd = { .fd = c->fd, .events = POLLIN | POLLERR };

			if (n || timeout_ms == 0)
				return n;
			if (poll(&pfd, 1, timeout_ms) < 0)
				return errno == EINTR ? 0 : -errno;
			timeout_ms = 0;
			continue;
		}
		h = (struct tpacket3_hdr *)((uint8_t *)bd + bd->hdr.bh1.offset_to_first_pkt);
		for (uint32_t i = 0; i < bd->hdr.bh1.num_pkts; i++) {
			struct pktcap_pkt p = {
				.ts_ns = (uint64_t)h->tp_sec * 1000000000ull + h->tp_nsec,
				.len = h->tp_len,
				.caplen = h->tp_snaplen,
				.data = (const uint8_t *)h + h->tp_mac,
			};

			fn(arg, &p);
			n++;
			h = (struct tpacket3_hdr *)((uint8_t *)h + h->tp_next_offset);
		}
		/* Release: our reads of the block are done before the kernel may refill it. */
		atomic_store_explicit(status, TP_STATUS_KERNEL, memory_order_release);
		c->cur = (c->cur + 1) % c->nblocks;
	}
}

int pktcap_stats(struct pktcap *c, uint64_t *packets, uint64_t *drops)
{
	struct tpacket_stats_v3 st;
	socklen_t len = sizeof(st);

	/* The kernel zeroes its counters on every read: accumulate. */
	if (getsockopt(c->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len))
		return -errno;
	c->packets += st.tp_packets;
	c->drops += st.tp_drops;
	*packets = c->packets;
	*drops = c->drops;
	return 0;
}

void pktcap_close(struct pktcap *c)
{
	if (!c)
		return;
	munmap(c->map, c->map_len);
	close(c->fd);
	free(c);
}
