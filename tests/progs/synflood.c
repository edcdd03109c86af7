/*
 * synflood: send N spoofed TCP SYNs to ADDR:PORT, for tests of a server's
 * listener under a SYN flood (tests/integration/test_httpd.c).  Each SYN
 * has a random source address inside --src (a prefix), a random source
 * port and sequence number, the options a Linux client sends (MSS,
 * SACK-permitted, timestamps, window scale), and correct IPv4 header and
 * TCP checksums.  Sent from a raw IP socket (IPPROTO_RAW: the program
 * writes the IP header) in the calling network namespace, so it needs
 * CAP_NET_RAW; run it inside a test-bed namespace (`ip netns exec`).
 *
 * The SYN-ACKs go to the spoofed addresses: give the server's side a route
 * for --src towards a host that drops them (the tests route it to the
 * client's side, which owns none of those addresses), or they leave
 * nowhere and the server's neighbour resolution fails, which is also a flood.
 *
 * At the end one line on stdout:
 *   synflood: sent=N errors=N seconds=S pps=R
 * (one JSON object with --json).  Exit 0 when all N were sent, 1 when a
 * send failed (counted in errors; the first error goes to stderr), 2 on
 * usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tool_util.h"

#define EXIT_SENDFAIL 1

static void usage(FILE *f)
{
	fprintf(f,
		"usage: synflood --dst ADDR --port PORT [options]\n"
		"\n"
		"Send spoofed TCP SYNs to ADDR:PORT (IPv4 or IPv6) from a raw socket in the\n"
		"current network namespace (needs CAP_NET_RAW): random source addresses in\n"
		"the --src prefix, random source ports and sequence numbers, correct checksums.\n"
		"\n"
		"options:\n"
		"  -d, --dst ADDR      destination address (required)\n"
		"  -p, --port PORT     destination port (required)\n"
		"  -s, --src PREFIX    source addresses, ADDR/LEN (default 198.18.0.0/15 for\n"
		"                      IPv4, 2001:db8::/32 for IPv6: benchmarking and\n"
		"                      documentation space, never routed)\n"
		"  -n, --count N       SYNs to send (default 1000)\n"
		"  -r, --rate PPS      at most PPS SYNs per second (default 0: as fast as\n"
		"                      the socket takes them)\n"
		"  -S, --seed N        PRNG seed (default 1)\n"
		"  -j, --json          the final line as one JSON object\n"
		"  -h, --help          this text\n"
		"\n"
		"Last line on stdout: synflood: sent=N errors=N seconds=S pps=R\n"
		"Exit status: 0 all sent, 1 a send failed, 2 usage or socket error.\n");
}

/* splitmix64: the source addresses, ports and sequence numbers. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One's complement sum of len bytes, added to sum (not folded). */
static uint32_t csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The prefix's address with random bits below its length. */
static void rand_addr(uint8_t *out, const uint8_t *prefix, unsigned alen, unsigned plen, uint64_t *rng)
{
	for (unsigned i = 0; i < alen; i++) {
		unsigned keep = plen >= 8 * (i + 1) ? 8 : plen > 8 * i ? plen - 8 * i : 0;
		uint8_t mask = keep ? (uint8_t)(0xff00 >> keep) : 0;

		out[i] = (uint8_t)((prefix[i] & mask) | (rnd(rng) & ~mask));
	}
}

#define TCP_HLEN 40 /* 20 + MSS 4 + SACK-permitted 2 + timestamps 10 + NOP 1 + window scale 3 */

/* The TCP SYN header with options at tcp (TCP_HLEN bytes), checksum zero. */
static void build_syn(uint8_t *tcp, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t tsval, uint16_t mss)
{
	memset(tcp, 0, TCP_HLEN);
	tcp[0] = (uint8_t)(sport >> 8);
	tcp[1] = (uint8_t)sport;
	tcp[2] = (uint8_t)(dport >> 8);
	tcp[3] = (uint8_t)dport;
	tcp[4] = (uint8_t)(seq >> 24);
	tcp[5] = (uint8_t)(seq >> 16);
	tcp[6] = (uint8_t)(seq >> 8);
	tcp[7] = (uint8_t)seq;
	tcp[12] = (TCP_HLEN / 4) << 4;
	tcp[13] = 0x02; /* SYN */
	tcp[14] = 0xfa; /* window 64240 */
	tcp[15] = 0xf0;
	/* options: MSS, SACK-permitted, timestamps, NOP, window scale 7 */
	tcp[20] = 2;
	tcp[21] = 4;
	tcp[22] = (uint8_t)(mss >> 8);
	tcp[23] = (uint8_t)mss;
	tcp[24] = 4;
	tcp[25] = 2;
	tcp[26] = 8;
	tcp[27] = 10;
	tcp[28] = (uint8_t)(tsval >> 24);
	tcp[29] = (uint8_t)(tsval >> 16);
	tcp[30] = (uint8_t)(tsval >> 8);
	tcp[31] = (uint8_t)tsval;
	/* tsecr 0 */
	tcp[36] = 1;
	tcp[37] = 3;
	tcp[38] = 3;
	tcp[39] = 7;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "dst", required_argument, NULL, 'd' },   { "port", required_argument, NULL, 'p' },
		{ "src", required_argument, NULL, 's' },   { "count", required_argument, NULL, 'n' },
		{ "rate", required_argument, NULL, 'r' },  { "seed", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },        { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dst = NULL, *src = NULL;
	uint64_t port = 0, count = 1000, rate = 0, seed = 1, v;
	uint64_t sent = 0, errors = 0;
	uint8_t daddr[16], prefix[16], pkt[40 + TCP_HLEN];
	struct sockaddr_storage ss = { 0 };
	socklen_t sslen;
	unsigned alen, plen, ihl;
	bool json = false, v6;
	char pfx[INET6_ADDRSTRLEN + 8], *slash;
	double t0, secs;
	int c, fd, first_err = 0;

	while ((c = getopt_long(argc, argv, "d:p:s:n:r:S:jh", lopts, NULL)) != -1) {
		switch (c) {
		case 'd': dst = optarg; continue;
		case 's': src = optarg; continue;
		case 'j': json = true; continue;
		case 'h': usage(stdout); return 0;
		case 'p': case 'n': case 'r': case 'S':
			if (tool_parse_u64(optarg, c == 'p' || c == 'n' ? 1 : 0, c == 'p' ? 65535 : UINT64_MAX, &v)) {
				fprintf(stderr, "synflood: -%c %s: not a number in range\n", c, optarg);
				return TOOL_EXIT_USAGE;
			}
			*(c == 'p' ? &port : c == 'n' ? &count : c == 'r' ? &rate : &seed) = v;
			continue;
		default: usage(stderr); return TOOL_EXIT_USAGE;
		}
	}
	if (!dst || !port || optind != argc) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (inet_pton(AF_INET, dst, daddr) == 1) {
		v6 = false;
		alen = 4;
	} else if (inet_pton(AF_INET6, dst, daddr) == 1) {
		v6 = true;
		alen = 16;
	} else {
		fprintf(stderr, "synflood: --dst %s: not an IPv4 or IPv6 address\n", dst);
		return TOOL_EXIT_USAGE;
	}
	snprintf(pfx, sizeof(pfx), "%s", src ? src : v6 ? "2001:db8::/32" : "198.18.0.0/15");
	slash = strchr(pfx, '/');
	if (slash)
		*slash++ = 0;
	if (inet_pton(v6 ? AF_INET6 : AF_INET, pfx, prefix) != 1 ||
	    tool_parse_u64(slash ? slash : v6 ? "128" : "32", 0, 8 * alen, &v)) {
		fprintf(stderr, "synflood: --src %s: not an IPv%d prefix ADDR/LEN\n", src, v6 ? 6 : 4);
		return TOOL_EXIT_USAGE;
	}
	plen = (unsigned)v;

	/* IPPROTO_RAW: the IP header is ours (IPv4 IP_HDRINCL is implied, as is IPv6's). */
	fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0) {
		fprintf(stderr, "synflood: raw socket: %s (needs CAP_NET_RAW)\n", strerror(errno));
		return TOOL_EXIT_USAGE;
	}
	if (v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, daddr, 16);
		/* Port 0: a raw socket of protocol IPPROTO_RAW takes the port as the protocol. */
		sslen = sizeof(*s6);
		ihl = 40;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, daddr, 4);
		sslen = sizeof(*s4);
		ihl = 20;
	}

	uint64_t rng = seed;
	double next = now_s();

	t0 = next;
	for (uint64_t i = 0; i < count; i++) {
		uint8_t saddr[16], *ip = pkt, *tcp = pkt + ihl;
		uint16_t sport = (uint16_t)(1024 + rnd(&rng) % (65536 - 1024));
		uint32_t sum;

		rand_addr(saddr, prefix, alen, plen, &rng);
		build_syn(tcp, sport, (uint16_t)port, (uint32_t)rnd(&rng), (uint32_t)rnd(&rng), v6 ? 1440 : 1460);
		/* Pseudo-header: addresses, protocol, TCP length. */
		sum = csum_add(0, saddr, alen);
		sum = csum_add(sum, daddr, alen);
		sum += IPPROTO_TCP + TCP_HLEN;
		sum = csum_add(sum, tcp, TCP_HLEN);
		v = csum_fold(sum);
		tcp[16] = (uint8_t)(v >> 8);
		tcp[17] = (uint8_t)v;
		memset(ip, 0, ihl);
		if (v6) {
			ip[0] = 0x60;
			ip[4] = 0;
			ip[5] = TCP_HLEN;
			ip[6] = IPPROTO_TCP;
			ip[7] = 64;
			memcpy(ip + 8, saddr, 16);
			memcpy(ip + 24, daddr, 16);
		} else {
			uint16_t id = (uint16_t)rnd(&rng);

			ip[0] = 0x45;
			ip[2] = 0;
			ip[3] = (uint8_t)(20 + TCP_HLEN);
			ip[4] = (uint8_t)(id >> 8);
			ip[5] = (uint8_t)id;
			ip[6] = 0x40; /* DF */
			ip[8] = 64;
			ip[9] = IPPROTO_TCP;
			memcpy(ip + 12, saddr, 4);
			memcpy(ip + 16, daddr, 4);
			v = csum_fold(csum_add(0, ip, 20));
			ip[10] = (uint8_t)(v >> 8);
			ip[11] = (uint8_t)v;
		}
		if (rate) {
			double t;

			next += 1.0 / (double)rate;
			while ((t = now_s()) < next) {
				double d = next - t;
				struct timespec ts = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };

				nanosleep(&ts, NULL);
			}
		}
		for (;;) {
			if (sendto(fd, pkt, ihl + TCP_HLEN, 0, (struct sockaddr *)&ss, sslen) == (ssize_t)(ihl + TCP_HLEN)) {
				sent++;
				break;
			}
			/* A full device queue: wait for room, as a flood at line rate would. */
			if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR) {
				usleep(100);
				continue;
			}
			if (!first_err) {
				first_err = errno;
				fprintf(stderr, "synflood: sendto: %s\n", strerror(errno));
			}
			errors++;
			break;
		}
	}
	secs = now_s() - t0;
	close(fd);
	if (json)
		printf("{\"tool\": \"synflood\", \"dst\": \"%s\", \"port\": %" PRIu64 ", \"src\": \"%s/%u\", "
		       "\"sent\": %" PRIu64 ", \"errors\": %" PRIu64 ", \"seconds\": %.3f, \"pps\": %.0f}\n",
		       dst, port, pfx, plen, sent, errors, secs, secs > 0 ? (double)sent / secs : 0.0);
	else
		printf("synflood: sent=%" PRIu64 " errors=%" PRIu64 " seconds=%.3f pps=%.0f\n", sent, errors, secs,
		       secs > 0 ? (double)sent / secs : 0.0);
	return errors ? EXIT_SENDFAIL : 0;
}
