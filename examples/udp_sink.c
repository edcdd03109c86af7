/*
 * udp_sink: receive COUNT datagrams of udp_pacer on PORT (IPv4 or IPv6) with
 * a plain UDP socket, and check every byte.
 *
 *   udp_sink PORT COUNT [PAYLOAD [IDLE_S]]     (PAYLOAD: 1200 bytes, IDLE_S: 3)
 *
 * Says "listening" on stderr once bound.  Stops after COUNT intact datagrams
 * or IDLE_S seconds without one, prints one line, and exits 0 only if none
 * was bad (wrong length or bytes, or a number >= COUNT), duplicated or missing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* recvmmsg */
#endif
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#define BATCH 64

/* What udp_pacer.c writes at byte i of datagram seq. */
static uint8_t pattern(uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 7 + i);
}

/* The datagram's sequence number if it is as udp_pacer wrote it, else UINT64_MAX. */
static uint64_t check(const uint8_t *dg, size_t len, size_t payload)
{
	uint64_t seq = 0;

	if (len != payload)
		return UINT64_MAX;
	for (int b = 0; b < 8; b++)
		seq = seq << 8 | dg[b];
	for (size_t i = 8; i < len; i++)
		if (dg[i] != pattern(seq, (uint32_t)i))
			return UINT64_MAX;
	return seq;
}

int main(int argc, char **argv)
{
	static uint8_t buf[BATCH][65536];
	struct mmsghdr m[BATCH] = { 0 };
	struct iovec iov[BATCH];
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(argc > 1 ? atoi(argv[1]) : 0) };
	unsigned long long count = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
	unsigned long long rx = 0, good = 0, bad = 0, dup = 0, reord = 0, next = 0;
	size_t payload = argc > 3 ? (size_t)atoi(argv[3]) : 1200;
	int fd, off = 0, rcvbuf = 64 << 20, idle_ms = argc > 4 ? (int)(atof(argv[4]) * 1000) : 3000;
	uint8_t *seen;

	if (argc > 5 || !a.sin6_port || !count || payload < 8) {
		fprintf(stderr, "usage: udp_sink PORT COUNT [PAYLOAD >= 8 [IDLE_S]]\n");
		return 2;
	}
	/* One socket for both families (V6ONLY off): IPv4 senders show up as ::ffff:a.b.c.d. */
	if (!(seen = calloc(count, 1)) || (fd = socket(AF_INET6, SOCK_DGRAM, 0)) < 0 ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("udp_sink");
		return 1;
	}
	/* The sender does not wait for us: make room for a whole run, so that nothing counted as
	 * missing was dropped by this socket.  FORCE (root) goes past net.core.rmem_max. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	fprintf(stderr, "udp_sink: listening on port %s\n", argv[1]);
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ .iov_base = buf[i], .iov_len = sizeof(buf[i]) };
		m[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1 };
	}
	while (good < count && poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, idle_ms) > 0) {
		int n = recvmmsg(fd, m, BATCH, MSG_DONTWAIT, NULL);

		for (int i = 0; i < n; i++, rx++) {
			uint64_t seq = check(buf[i], m[i].msg_len, payload);

			if (seq >= count) {
				bad++;
			} else if (seen[seq]) {
				dup++;
			} else {
				seen[seq] = 1;
				good++;
				reord += seq < next; /* arrived after a later one */
				next = seq < next ? next : seq + 1;
			}
		}
	}
	printf("received=%llu bad=%llu dup=%llu reordered=%llu missing=%llu\n", rx, bad, dup, reord, count - good);
	return good == count && !bad && !dup ? 0 : 1;
}
