/*
 * The test-bed of the AF_XDP benchmarks (bench_xsk_tx, bench_xsk_pps):
 * two fresh network namespaces joined by one veth pair with `queues`
 * queues each way, 10.99.0.1/24 on side 0 ("xa") and 10.99.0.2/24 on
 * side 1 ("xb"), static neighbour entries both ways (so that a side that
 * drops everything, ARP included, is still reachable).  Nothing of the
 * host is touched.
 *
 * Cleanup cannot be forgotten: once configured, the namespaces are held
 * by file descriptors only and their names are removed, so the kernel
 * deletes them, veth included, when the process ends however it ends.
 * While they still have names (during set-up), SIGINT, SIGTERM, SIGHUP
 * and SIGQUIT remove them before the process dies.
 */
#ifndef BENCH_XSKBED_H
#define BENCH_XSKBED_H

#include <stdint.h>

struct xskbed {
	char ns[2][40];     /* names during set-up, "" afterwards */
	int nsfd[2];
	int ifindex[2];     /* "xa" in side 0, "xb" in side 1 */
	uint8_t mac[2][6];
};

#define XSKBED_IP0 "10.99.0.1"
#define XSKBED_IP1 "10.99.0.2"

/* Create both sides; returns 0 or -errno (everything made is removed again). */
int xskbed_create(struct xskbed *b, const char *tag, unsigned queues);
/* Move the calling thread into side 0 or 1.  0 or -errno. */
int xskbed_enter(const struct xskbed *b, int side);
/* Close the namespaces' descriptors (they go with the last user).  Idempotent. */
void xskbed_destroy(struct xskbed *b);

/*
 * Attach the counting drop program (xdp/xdp_drop.bpf.c, found in
 * $GSO_BPF_DIR or <exe dir>/../bpf/) to side `side`'s veth in native
 * mode through a BPF link: it goes away with the process.  Returns 0 and
 * the map fd of its counters in *cnt_fd, or -errno with a reason in err.
 */
int xskbed_attach_drop(const struct xskbed *b, int side, int *cnt_fd, char *err, unsigned errlen);
/* Frames and bytes the drop program has counted (all CPUs).  0 or -errno. */
int xskbed_drop_count(int cnt_fd, uint64_t *frames, uint64_t *bytes);
/*
 * Frames the drop program counted on receive queue `queue` of its veth
 * (= the peer's transmit queue: a veth keeps the queue number).  0,
 * -ERANGE (queue >= XSKBED_DROP_QUEUES) or -errno.
 */
#define XSKBED_DROP_QUEUES 64 /* XDP_DROP_QUEUES in xdp/xdp_drop.bpf.c */
int xskbed_drop_queue_count(int cnt_fd, uint32_t queue, uint64_t *frames);

struct gso_tmpl;
/*
 * A UDP/IPv4 template from side 0 to side 1 (MACs and addresses of the
 * test-bed, DF set).  Exits the program if it cannot be built.
 */
void xskbed_udp_tmpl(const struct xskbed *b, uint16_t sport, uint16_t dport, struct gso_tmpl *t);

#endif
