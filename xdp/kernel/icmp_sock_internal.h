/*
 * The kernel's copy of the path-MTU errors that reach an interface (not
 * installed): two raw sockets, ICMP and ICMPv6, bound to the interface and
 * filtered to "destination unreachable" and "packet too big", for the ICMP
 * errors the steering program could not hand to an AF_XDP socket (they
 * came in on a queue without one: RSS hashes an ICMP error by its
 * addresses, not by the flow it quotes) and so passed to the kernel,
 * which has no socket of ours to tell.  Each is handed back as the frame it
 * was (a zeroed Ethernet header, the IP header as it came, or as the
 * IPv6 addresses and length say), for the same checks as a steered one.
 *
 * Included by the engine (engine/).
 */
#ifndef GSO_XDP_ICMP_SOCK_INTERNAL_H
#define GSO_XDP_ICMP_SOCK_INTERNAL_H

#include <stdint.h>

struct icmp_sock {
	int fd4, fd6; /* -1: not open */
};

typedef void (*icmp_sock_fn)(void *ctx, const uint8_t *frame, uint32_t len);

/*
 * Open both on interface `ifindex` (CAP_NET_RAW).  0, or -errno with
 * neither open (s->fd4 = s->fd6 = -1).
 */
int gsoi_icmp_sock_open(struct icmp_sock *s, int ifindex);
/* Close both; idempotent. */
void gsoi_icmp_sock_close(struct icmp_sock *s);
/*
 * Read what is pending on `fd` (one of s's), without blocking, at most
 * `max` messages, calling fn for each as a frame.  Returns how many.
 */
int gsoi_icmp_sock_read(const struct icmp_sock *s, int fd, unsigned max, icmp_sock_fn fn, void *ctx);

#endif
