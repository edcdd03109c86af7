/*
 * Software segmentation cost, side by side in one run, on one TCPv4
 * super-segment (default: 45 x 1448 bytes of payload, TCP timestamps,
 * 66-byte headers, 65 212-byte IP datagram):
 *
 *   copy+full     gso_segment(), GSO_CSUM_FULL: frames copied into 2 KiB
 *                 buffers (UMEM-chunk-like), payload copied and
 *                 checksummed in one pass
 *   memcpy        the same bytes (headers + payload of every frame) copied
 *                 into the same buffers with memcpy: the bound for copy+full
 *   ref+partial   gso_segment_ref(), GSO_CSUM_PARTIAL: per segment a header
 *                 frame, a payload reference and a pseudo-header seed
 *   ref+full      gso_segment_ref(), GSO_CSUM_FULL (payload read once)
 *   rte_gso       DPDK rte_gso_segment() on the same super-segment in one
 *                 mbuf (header mbuf + indirect mbuf per segment; it writes no
 *                 checksum at all), with and without freeing the output
 *                 mbufs (only when built with HAVE_DPDK)
 *
 * Rounds interleave the candidates so that noise from other processes
 * hits them alike; the table shows medians and ratios of medians.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gso/csum.h>
#include <gso/seg.h>
#include <gso/tmpl.h>

#ifdef HAVE_DPDK
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gso.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#endif

#define CHUNK 2048u
#define MAX_SEGS 512u
#define MAX_ROUNDS 101

enum kind { K_COPY_FULL, K_MEMCPY, K_REF_PARTIAL, K_REF_FULL, K_DPDK, K_DPDK_NOFREE, K_COUNT };

static const char *const kname[K_COUNT] = {
	"copy+full (a)", "memcpy", "ref+partial (b)", "ref+full", "rte_gso+free", "rte_gso only",
};

struct bench {
	struct gso_tmpl t;
	struct gso_extent ext;
	struct gso_super s;
	uint32_t mss, payload, nseg;
	uint8_t *pay;
	uint8_t *chunks;                 /* nseg x CHUNK */
	struct gso_frame fr[MAX_SEGS];
	struct gso_seg_ref rf[MAX_SEGS];
	struct gso_seg_opts o_full;
#ifdef HAVE_DPDK
	struct rte_mbuf *in;
	uint64_t in_flags;
	struct rte_gso_ctx ctx;
	struct rte_mbuf *out[MAX_SEGS];
#endif
	int have_dpdk;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_seg: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static __attribute__((noinline)) void run_memcpy(struct bench *b)
{
	uint32_t off = 0;

	for (uint32_t i = 0; i < b->nseg; i++) {
		uint8_t *f = b->chunks + (size_t)i * CHUNK;
		uint32_t pl = b->payload - off < b->mss ? b->payload - off : b->mss;

		memcpy(f, b->t.hdr, b->t.hdr_len);
		memcpy(f + b->t.hdr_len, b->pay + off, pl);
		off += pl;
	}
}

#ifdef HAVE_DPDK
static int dpdk_setup(struct bench *b)
{
	char *eal_argv[] = { "bench_seg", "--no-huge", "--no-pci", "-m", "256", "--no-shconf",
			     "--no-telemetry", "-l", "0", "--log-level=error", NULL };
	struct rte_mempool *in_pool, *direct, *indirect;
	uint8_t *d;

	if (rte_eal_init(10, eal_argv) < 0)
		return -rte_errno;
	/* one mbuf holds the whole super-packet (data room is 16 bits) */
	in_pool = rte_pktmbuf_pool_create("seg_in", 7, 0, 0, UINT16_MAX, SOCKET_ID_ANY);
	direct = rte_pktmbuf_pool_create("seg_direct", 4095, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					 SOCKET_ID_ANY);
	indirect = rte_pktmbuf_pool_create("seg_indirect", 4095, 256, 0, 0, SOCKET_ID_ANY);
	if (!in_pool || !direct || !indirect)
		return -rte_errno;
	b->in = rte_pktmbuf_alloc(in_pool);
	if (!b->in)
		return -ENOMEM;
	d = (uint8_t *)rte_pktmbuf_append(b->in, (uint16_t)(b->t.hdr_len + b->payload));
	if (!d)
		return -ENOSPC;
	/* the super-packet as a Linux GSO skb would carry it */
	memcpy(d, b->t.hdr, b->t.hdr_len);
	memcpy(d + b->t.hdr_len, b->pay, b->payload);
	{
		uint32_t ip_len = b->t.hdr_len - b->t.l3_off + b->payload;

		d[b->t.l3_off + 2] = (uint8_t)(ip_len >> 8);
		d[b->t.l3_off + 3] = (uint8_t)ip_len;
	}
	b->in->l2_len = b->t.l3_off;
	b->in->l3_len = b->t.l4_off - b->t.l3_off;
	b->in->l4_len = b->t.l4_len;
	b->in->tso_segsz = (uint16_t)b->mss;
	b->in_flags = RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
	b->in->ol_flags = b->in_flags;
	b->ctx.direct_pool = direct;
	b->ctx.indirect_pool = indirect;
	b->ctx.flag = 0; /* incrementing IP IDs, as ours */
	b->ctx.gso_types = RTE_ETH_TX_OFFLOAD_TCP_TSO;
	b->ctx.gso_size = (uint16_t)(b->t.hdr_len + b->mss);
	return 0;
}

static __attribute__((noinline)) int m_rte_gso_only(struct bench *b)
{
	/* rte_gso_segment() clears TCP_SEG on the input each time */
	b->in->ol_flags = b->in_flags;
	return rte_gso_segment(b->in, &b->ctx, b->out, MAX_SEGS);
}

static __attribute__((noinline)) int m_rte_gso_free(struct bench *b)
{
	int n = m_rte_gso_only(b);

	for (int i = 0; i < n; i++)
		rte_pktmbuf_free(b->out[i]);
	return n;
}

static int run_dpdk(struct bench *b, int do_free)
{
	return do_free ? m_rte_gso_free(b) : m_rte_gso_only(b);
}

static void dpdk_free_pending(struct bench *b, int n)
{
	for (int i = 0; i < n; i++)
		rte_pktmbuf_free(b->out[i]);
}
#endif

/*
 * One function per method, never inlined, so that
 *   valgrind --tool=callgrind bench_seg --iters 100 --rounds 1
 * attributes instruction counts to each (repeatable, unlike wall time on
 * a shared machine).
 */
static __attribute__((noinline)) int m_copy_full(struct bench *b, const struct gso_seg_opts *o)
{
	return gso_segment(&b->s, o, b->fr, b->nseg);
}

static __attribute__((noinline)) int m_ref_partial(struct bench *b, const struct gso_seg_opts *o)
{
	return gso_segment_ref(&b->s, o, b->rf, b->nseg);
}

static __attribute__((noinline)) int m_ref_full(struct bench *b, const struct gso_seg_opts *o)
{
	(void)o; /* b's own copy: keeps the compiler from folding this into m_ref_partial */
	return gso_segment_ref(&b->s, &b->o_full, b->rf, b->nseg);
}

static int run(struct bench *b, enum kind k, const struct gso_seg_opts *full,
	       const struct gso_seg_opts *partial)
{
	switch (k) {
	case K_COPY_FULL:
		return m_copy_full(b, full);
	case K_MEMCPY:
		run_memcpy(b);
		return (int)b->nseg;
	case K_REF_PARTIAL:
		return m_ref_partial(b, partial);
	case K_REF_FULL:
		return m_ref_full(b, full);
#ifdef HAVE_DPDK
	case K_DPDK:
		return run_dpdk(b, 1);
	case K_DPDK_NOFREE:
		return run_dpdk(b, 0);
#endif
	default:
		return -ENOTSUP;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench_seg [options]\n"
		"  Segment one TCPv4 super-segment many times with each method, side by\n"
		"  side, and print ns per segment, payload Gbit/s and ratios (medians).\n"
		"  --mss N        payload bytes per segment (default 1448)\n"
		"  --payload N    super-segment payload bytes (default 45 * mss, at most\n"
		"                 what fits a 65535-byte IP datagram)\n"
		"  --iters N      super-segments per measurement (default 2000)\n"
		"  --rounds N     interleaved measurements per method (default 15, max %d)\n"
		"  --csum NAME    checksum kernel: auto, scalar, avx2, avx512 (default auto)\n"
		"  --no-dpdk      skip the DPDK rte_gso comparison\n"
		"  --quick        a smoke run: --iters 200 --rounds 3 (numbers are rough)\n"
		"  --help         this text\n"
		"DPDK comparison: %s.\n",
		MAX_ROUNDS,
#ifdef HAVE_DPDK
		"built in (EAL with --no-huge --no-pci -m 256, no devices)"
#else
		"not built (no libdpdk at build time)"
#endif
	);
}

int main(int argc, char **argv)
{
	static struct bench b;
	static double ns[K_COUNT][MAX_ROUNDS];
	long mss = 1448, payload = -1, iters = 2000, rounds = 15;
	const char *csum = "auto";
	int no_dpdk = 0, err;
	static const struct option lo[] = {
		{ "mss", required_argument, NULL, 'm' },    { "payload", required_argument, NULL, 'p' },
		{ "iters", required_argument, NULL, 'i' },  { "rounds", required_argument, NULL, 'r' },
		{ "csum", required_argument, NULL, 'c' },   { "no-dpdk", no_argument, NULL, 'n' },
		{ "quick", no_argument, NULL, 'q' },        { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "m:p:i:r:c:nqh", lo, NULL)) != -1) {
		switch (opt) {
		case 'm': mss = strtol(optarg, NULL, 0); break;
		case 'p': payload = strtol(optarg, NULL, 0); break;
		case 'i': iters = strtol(optarg, NULL, 0); break;
		case 'r': rounds = strtol(optarg, NULL, 0); break;
		case 'c': csum = optarg; break;
		case 'n': no_dpdk = 1; break;
		case 'q': iters = 200; rounds = 3; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (mss < 1 || mss > (long)CHUNK - 100 || iters < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "bench_seg: bad option value (mss 1..%u, rounds 1..%d)\n", CHUNK - 100,
			MAX_ROUNDS);
		return 2;
	}

	if (strcmp(csum, "auto")) {
		enum gso_csum_impl impl = GSO_CSUM_IMPL_COUNT;

		for (int k = 1; k < GSO_CSUM_IMPL_COUNT; k++)
			if (gso_csum_impl_name(k) && !strcmp(gso_csum_impl_name(k), csum))
				impl = k;
		err = gso_csum_select(impl);
		if (err)
			die("--csum", err);
	}

	/* TCPv4, DF, ACK|PSH, timestamps: what a bulk Linux sender emits */
	{
		static const uint8_t ts[12] = { 1, 1, 8, 10, 0x12, 0x34, 0x56, 0x78, 0, 0, 0, 1 };
		GSO_OPTS(gso_tmpl_fields, f, .l3 = GSO_L3_IPV4, .l4 = GSO_L4_TCP, .df = true,
			 .saddr = { 10, 0, 0, 1 }, .daddr = { 10, 0, 0, 2 }, .sport = 40000, .dport = 5001,
			 .seq = 1, .ack = 1, .tcp_flags = GSO_TCP_ACK | GSO_TCP_PSH, .window = 502,
			 .tcp_opts = ts, .tcp_opts_len = 12, .eth_dst = { 2, 0, 0, 0, 0, 2 },
			 .eth_src = { 2, 0, 0, 0, 0, 1 });
		err = gso_tmpl__build(&b.t, &f);
		if (err)
			die("gso_tmpl__build", err);
	}
	b.mss = (uint32_t)mss;
	if (payload < 0) {
		payload = 45 * mss;
		if (payload > (long)(GSO_MAX_IP_LEN - (b.t.hdr_len - b.t.l3_off)))
			payload = GSO_MAX_IP_LEN - (b.t.hdr_len - b.t.l3_off);
	}
	b.payload = (uint32_t)payload;
	b.pay = aligned_alloc(64, 65536);
	for (long i = 0; i < 65536; i++)
		b.pay[i] = (uint8_t)(i * 131 + (i >> 8));
	b.ext = (struct gso_extent){ b.pay, b.payload };
	b.s = (struct gso_super){ &b.t, &b.ext, 1 };

	GSO_OPTS(gso_seg_opts, full, .mss = b.mss, .csum = GSO_CSUM_FULL);
	GSO_OPTS(gso_seg_opts, partial, .mss = b.mss, .csum = GSO_CSUM_PARTIAL);
	b.o_full = full;
	err = gso_seg_count(&b.s, &full);
	if (err < 0)
		die("gso_seg_count", err);
	if ((unsigned)err > MAX_SEGS) {
		fprintf(stderr, "bench_seg: %d segments, at most %u\n", err, MAX_SEGS);
		return 2;
	}
	b.nseg = (uint32_t)err;
	b.chunks = aligned_alloc(4096, (size_t)b.nseg * CHUNK);
	memset(b.chunks, 0, (size_t)b.nseg * CHUNK);
	for (uint32_t i = 0; i < b.nseg; i++) {
		b.fr[i] = (struct gso_frame){ .buf = b.chunks + (size_t)i * CHUNK, .cap = CHUNK };
		/* headers where the frame would start, payload referenced */
		b.rf[i] = (struct gso_seg_ref){ .hdr = b.chunks + (size_t)i * CHUNK, .hdr_cap = 256 };
	}

#ifdef HAVE_DPDK
	if (!no_dpdk) {
		err = dpdk_setup(&b);
		if (err)
			fprintf(stderr, "bench_seg: DPDK setup failed (%s); skipping rte_gso\n",
				strerror(-err));
		else
			b.have_dpdk = 1;
	}
	if (b.have_dpdk) {
		int n = run_dpdk(&b, 1);

		if (n != (int)b.nseg) {
			fprintf(stderr, "bench_seg: rte_gso_segment gave %d segments, want %u; skipping\n",
				n, b.nseg);
			b.have_dpdk = 0;
		}
	}
#else
	(void)no_dpdk;
#endif

	/* warm up, and check every method works before timing it */
	for (int k = 0; k < K_COUNT; k++) {
		int n;

		if ((k == K_DPDK || k == K_DPDK_NOFREE) && !b.have_dpdk)
			continue;
		n = run(&b, k, &full, &partial);
		if (n != (int)b.nseg) {
			fprintf(stderr, "bench_seg: %s returned %d\n", kname[k], n);
			return 1;
		}
#ifdef HAVE_DPDK
		if (k == K_DPDK_NOFREE)
			dpdk_free_pending(&b, n);
#endif
	}

	for (long r = 0; r < rounds; r++) {
		for (int k = 0; k < K_COUNT; k++) {
			double t0, el = 0;

			if ((k == K_DPDK || k == K_DPDK_NOFREE) && !b.have_dpdk)
				continue;
			if (k == K_DPDK_NOFREE) {
#ifdef HAVE_DPDK
				/* time only the segmentation; free outside the clock */
				for (long i = 0; i < iters; i++) {
					int n;

					t0 = now_s();
					n = run_dpdk(&b, 0);
					el += now_s() - t0;
					dpdk_free_pending(&b, n);
				}
#endif
			} else {
				t0 = now_s();
				for (long i = 0; i < iters; i++)
					run(&b, k, &full, &partial);
				el = now_s() - t0;
			}
			ns[k][r] = el * 1e9 / ((double)iters * b.nseg);
		}
	}

	/* medians, and the best round: the least disturbed by other load */
	double med[K_COUNT] = { 0 }, best[K_COUNT] = { 0 };
	for (int k = 0; k < K_COUNT; k++) {
		if ((k == K_DPDK || k == K_DPDK_NOFREE) && !b.have_dpdk)
			continue;
		qsort(ns[k], (size_t)rounds, sizeof(double), cmp_double);
		med[k] = ns[k][rounds / 2];
		best[k] = ns[k][0];
	}

	printf("bench_seg: TCPv4 super-segment, %u B payload, mss %u -> %u segments, %u-byte headers\n",
	       b.payload, b.mss, b.nseg, b.t.hdr_len);
	printf("checksum kernel: %s; %ld rounds x %ld super-segments per method\n",
	       gso_csum_impl_name(gso_csum_current()), rounds, iters);
	printf("%-18s %10s %12s %12s %10s\n", "method", "ns/seg", "Gbit/s pay", "ns/super", "best ns/seg");
	for (int k = 0; k < K_COUNT; k++) {
		if (!med[k])
			continue;
		printf("%-18s %10.1f %12.2f %12.0f %10.1f\n", kname[k], med[k],
		       (double)b.payload * 8 / (med[k] * b.nseg), med[k] * b.nseg, best[k]);
	}
	printf("\nratios of medians (of best rounds):\n");
	printf("(a) copy+full vs memcpy of the same bytes: %.0f %% (%.0f %%) of memcpy speed (goal >= 67 %%)\n",
	       100.0 * med[K_MEMCPY] / med[K_COPY_FULL], 100.0 * best[K_MEMCPY] / best[K_COPY_FULL]);
	if (b.have_dpdk) {
		printf("(b) ref+partial vs rte_gso+free: %.2fx (%.2fx) faster per segment (goal >= 2x)\n",
		       med[K_DPDK] / med[K_REF_PARTIAL], best[K_DPDK] / best[K_REF_PARTIAL]);
		printf("(b) ref+partial vs rte_gso without freeing: %.2fx (%.2fx)\n",
		       med[K_DPDK_NOFREE] / med[K_REF_PARTIAL], best[K_DPDK_NOFREE] / best[K_REF_PARTIAL]);
		printf("    (rte_gso writes no checksums; (b) writes IPv4 checksums and L4 seeds)\n");
	} else {
		printf("(b) rte_gso comparison not run\n");
	}
	return 0;
}
