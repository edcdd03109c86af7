/*
 * Raw ICMP and ICMPv6 sockets for the path-MTU errors the kernel receives
 * on an interface (icmp_sock_internal.h).  A raw socket gets a copy of
 * every ICMP message the host takes in (raw_local_deliver, ahead of the
 * protocol's own handling), so filters keep the traffic to the two kinds
 * of error that matter and SO_BINDTOIFINDEX to the one interface.
 */
#include "icmp_sock_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/filter.h>
#include <linux/icmp.h>

#ifndef SO_BINDTOIFINDEX
#define SO_BINDTOIFINDEX 62 /* Linux 5.0 */
#endif

/* An ICMP error is at most 576 bytes (IPv4) or 1280 (IPv6); more is not one of them. */
#define ICMP_SOCK_BUF 2048

static int open_one(int family, int proto, int ifindex)
{
	int fd = socket(family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto), err;

	if (fd < 0)
		return -errno;
	if (family == AF_INET) {
		/* A set bit filters that type out. */
		struct icmp_filter f = { .data = ~(1u << ICMP_DEST_UNREACH) };
		/*
		 * And of "destination unreachable" only code 4, fragmentation
		 * needed: a host that sends UDP hears many port unreachables,
		 * each of which would wake the engine for nothing.  The packet
		 * starts at the IP header here.
		 */
		struct sock_filter code4[] = {
			BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0),          /* X = the IP header's length */
			BPF_STMT(BPF_LD | BPF_B | BPF_IND, 1),           /* A = the ICMP code */
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ICMP_FRAG_NEEDED, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, 0xffff),
			BPF_STMT(BPF_RET | BPF_K, 0),
		};
		struct sock_fprog prog = { .len = sizeof(code4) / sizeof(code4[0]), .filter = code4 };

		err = setsockopt(fd, SOL_RAW, ICMP_FILTER, &f, sizeof(f));
		if (!err)
			err = setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
	} else {
		struct icmp6_filter f;
		int on = 1;

		ICMP6_FILTER_SETBLOCKALL(&f);
		ICMP6_FILTER_SETPASS(ICMP6_PACKET_TOO_BIG, &f);
		err = setsockopt(fd, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof(f));
		/* The destination address, which an IPv6 raw socket does not hand over with the data. */
		if (!err)
			err = setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof(on));
	}
	if (!err)
		err = setsockopt(fd, SOL_SOCKET, SO_BINDTOIFINDEX, &ifindex, sizeof(ifindex));
	if (err) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int gsoi_icmp_sock_open(struct icmp_sock *s, int ifindex)
{
	s->fd4 = open_one(AF_INET, IPPROTO_ICMP, ifindex);
	if (s->fd4 < 0) {
		int err = s->fd4;

		s->fd4 = s->fd6 = -1;
		return err;
	}
	s->fd6 = open_one(AF_INET6, IPPROTO_ICMPV6, ifindex);
	if (s->fd6 < 0) {
		int err = s->fd6;

		close(s->fd4);
		s->fd4 = s->fd6 = -1;
		return err;
	}
	return 0;
}

void gsoi_icmp_sock_close(struct icmp_sock *s)
{
	if (s->fd4 >= 0)
		close(s->fd4);
	if (s->fd6 >= 0)
		close(s->fd6);
	s->fd4 = s->fd6 = -1;
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

int gsoi_icmp_sock_read(const struct icmp_sock *s, int fd, unsigned max, icmp_sock_fn fn, void *ctx)
{
	/* Room in front for what the frame had before the data: Ethernet, and IPv6's header. */
	uint8_t frame[14 + 40 + ICMP_SOCK_BUF];
	bool v6 = fd == s->fd6;
	uint32_t off = v6 ? 14 + 40 : 14;
	int n = 0;

	if (fd < 0 || (fd != s->fd4 && fd != s->fd6))
		return 0;
	while ((unsigned)n < max) {
		struct sockaddr_in6 from;
		union {
			struct cmsghdr h;
			uint8_t b[CMSG_SPACE(sizeof(struct in6_pktinfo))];
		} cbuf;
		struct iovec iov = { frame + off, ICMP_SOCK_BUF };
		struct msghdr m = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov,
				    .msg_iovlen = 1, .msg_control = cbuf.b, .msg_controllen = sizeof(cbuf.b) };
		const struct in6_pktinfo *pi = NULL;
		ssize_t r = recvmsg(fd, &m, MSG_DONTWAIT);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		n++;
		/* Cut to the buffer: too long to be one of ours, and the checks will say so. */
		if (m.msg_flags & MSG_TRUNC)
			continue;
		memset(frame, 0, 14);
		put16(frame + 12, v6 ? 0x86dd : 0x0800);
		if (v6) {
			uint8_t *ip = frame + 14;

			for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
				if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO)
					pi = (const struct in6_pktinfo *)CMSG_DATA(c);
			if (!pi || from.sin6_family != AF_INET6)
				continue;
			memset(ip, 0, 40);
			ip[0] = 0x60;
			put16(ip + 4, (uint32_t)r);
			ip[6] = IPPROTO_ICMPV6;
			ip[7] = 64;
			memcpy(ip + 8, &from.sin6_addr, 16);
			memcpy(ip + 24, &pi->ipi6_addr, 16);
		}
		fn(ctx, frame, off + (uint32_t)r);
	}
	return n;
}
