/*
 * Packet capture for benches: AF_PACKET with a TPACKET_V3 receive ring on
 * one interface, incoming packets only (PACKET_IGNORE_OUTGOING), each cut
 * to a snap length by a one-instruction BPF filter, with the kernel's
 * software receive timestamp (SO_TIMESTAMPNS is switched on so that the
 * stack takes precise timestamps rather than a coarse clock).
 *
 * On a veth the timestamp is taken when the sender's transmission reaches
 * the peer: at netif_rx() for packets without a delivery time, at the tap
 * in the receive softirq (which runs right after, on the sending CPU) for
 * packets carrying a CLOCK_MONOTONIC delivery time (TCP's EDT, SO_TXTIME).
 */
#ifndef BENCH_PKTCAP_H
#define BENCH_PKTCAP_H

#include <stdint.h>

struct pktcap;

struct pktcap_pkt {
	uint64_t ts_ns;      /* CLOCK_REALTIME receive timestamp */
	uint32_t len;        /* the packet's length (a GSO packet counts whole) */
	uint32_t caplen;     /* bytes at data */
	const uint8_t *data; /* from the Ethernet header */
};

typedef void (*pktcap_fn)(void *arg, const struct pktcap_pkt *p);

/*
 * Open a capture on `ifindex` in the calling thread's network namespace,
 * ring of `ring_mb` 1 MiB blocks, each block handed over after at most
 * 2 ms.  Returns 0 and *out, or -errno.
 */
int pktcap_open(struct pktcap **out, int ifindex, uint32_t snaplen, uint32_t ring_mb);

/*
 * Hand every packet in the ring to fn, waiting up to timeout_ms for the
 * first block.  Returns the number of packets, or -errno.
 */
int pktcap_poll(struct pktcap *c, int timeout_ms, pktcap_fn fn, void *arg);

/* Packets the kernel counted and dropped (ring full) since opening.  0 or -errno. */
int pktcap_stats(struct pktcap *c, uint64_t *packets, uint64_t *drops);

void pktcap_close(struct pktcap *c);

#endif
