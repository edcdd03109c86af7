/*
 * Loader for bench/bpf/impair_loss.bpf.c (random loss on a receiving interface).
 * The program is attached through a BPF link, so it goes away when the
 * process exits, however it exits; bench_xdploss_detach() removes it
 * earlier.  Attach only to interfaces the bench created.
 */
#ifndef BENCH_XDPLOSS_H
#define BENCH_XDPLOSS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Mirrors struct impair_loss_cfg / impair_loss_stats in the BPF program. */
struct bench_xdploss_cfg {
	uint32_t threshold; /* drop when rand32 < threshold */
	uint8_t proto;      /* 0 = any IP protocol, else IPPROTO_* */
	uint8_t pad;
	uint16_t port;      /* 0 = any; else source or destination port */
	uint64_t seed;      /* 0 = kernel PRNG; else per-CPU xorshift from this seed */
};

struct bench_xdploss_stats {
	uint64_t seen, matched, dropped, dropped_bytes;
};

struct bench_xdploss;

/* Probability (0..1) to the program's threshold. */
uint32_t bench_xdploss_threshold(double p);

/*
 * Open obj_path, load it, set cfg and attach to ifindex (native XDP, or
 * generic with skb_mode).  Returns 0 and *out, or -errno; errbuf gets a
 * short description of the failing step.
 */
int bench_xdploss_attach(struct bench_xdploss **out, const char *obj_path, int ifindex,
			 const struct bench_xdploss_cfg *cfg, bool skb_mode, char *errbuf, size_t errlen);
/* Sum of the per-CPU counters.  Returns 0 or -errno. */
int bench_xdploss_stats(struct bench_xdploss *x, struct bench_xdploss_stats *st);
/* Detach and free.  NULL is fine. */
void bench_xdploss_detach(struct bench_xdploss *x);

/* build/bpf/impair_loss.bpf.o next to the running program's build/bench/ dir. */
const char *bench_xdploss_default_obj(void);

#endif
