/*
 * The micro-benchmarks' test-beds, both the shared namespace test-bed
 * (tests/nsbed/nsbed.h) with bench addresses, anonymous once set up: the
 * kernel removes them with the process, however the process ends.  Enter a
 * side with nsbed_enter(), run a command in one with nsbed_sh(), remove
 * them with nsbed_destroy().
 */
#ifndef BENCH_BENCHBED_H
#define BENCH_BENCHBED_H

#include <stdint.h>

#include "nsbed.h"

/*
 * The veth test-bed of bench_tso and bench_pacing: veths "gba" (side 0,
 * 10.79.0.1/24) and "gbb" (side 1, 10.79.0.2/24), IPv6 off, names
 * "gsob<run>-<pid>-<n>a/b" during set-up; `setup[side]` (may be NULL, or
 * either entry) runs inside that side once configured.  0 or -errno.
 */
int benchbed_create(struct nsbed *b, const char *const setup[2]);

/*
 * The test-bed of the AF_XDP benchmarks (bench_xsk_tx, bench_xsk_pps,
 * bench_engine, bench_scale): one veth pair with `queues` queues each way,
 * 10.99.0.1/24 on side 0 ("xa") and 10.99.0.2/24 on side 1 ("xb"), static
 * neighbour entries both ways (so that a side that drops everything, ARP
 * included, is still reachable), names "gso<tag><run>-<pid>-<n>a/b" during
 * set-up.  0 or -errno (everything made is removed again).
 */
int xskbed_create(struct nsbed *b, const char *tag, unsigned queues);

#define XSKBED_IP0 "10.99.0.1"
#define XSKBED_IP1 "10.99.0.2"

/*
 * Attach the counting drop program (bench/bpf/xdp_drop.bpf.c, found in
 * $GSO_BPF_DIR or <exe dir>/../bpf/) to side `side`'s veth in native
 * mode through a BPF link: it goes away with the process.  Returns 0 and
 * the map fd of its counters in *cnt_fd, or -errno with a reason in err.
 */
int xskbed_attach_drop(const struct nsbed *b, int side, int *cnt_fd, char *err, unsigned errlen);
/* Frames and bytes the drop program has counted (all CPUs).  0 or -errno. */
int xskbed_drop_count(int cnt_fd, uint64_t *frames, uint64_t *bytes);
/*
 * Frames the drop program counted on receive queue `queue` of its veth
 * (= the peer's transmit queue: a veth keeps the queue number).  0,
 * -ERANGE (queue >= XSKBED_DROP_QUEUES) or -errno.
 */
#define XSKBED_DROP_QUEUES 64 /* XDP_DROP_QUEUES in bench/bpf/xdp_drop.bpf.c */
int xskbed_drop_queue_count(int cnt_fd, uint32_t queue, uint64_t *frames);

struct gso_tmpl;
/*
 * A UDP/IPv4 template from side 0 to side 1 (MACs and addresses of the
 * test-bed, DF set).  Exits the program if it cannot be built.
 */
void xskbed_udp_tmpl(const struct nsbed *b, uint16_t sport, uint16_t dport, struct gso_tmpl *t);

#endif
