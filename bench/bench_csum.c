/*
 * Checksum throughput, everything measured side by side in one run:
 * our kernels (through the public API, dispatch included), a plain 16-bit
 * reference loop, DPDK's rte_raw_cksum (when built with HAVE_DPDK) and a
 * 64-bit read pass, which bounds any checksum out of cache.  Then
 * gso_csum_copy against memcpy.  Rounds interleave the candidates so that
 * noise from other processes hits them alike; the table shows medians.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <gso/csum.h>

#ifdef HAVE_DPDK
#include <rte_ip.h>
#endif

enum kind { K_READ, K_REF16, K_DPDK, K_GSO, K_MEMCPY, K_MEMCPY_CSUM, K_GSO_COPY };

struct cand {
	const char *name;
	enum kind kind;
	enum gso_csum_impl impl; /* for K_GSO / K_GSO_COPY */
	double gbs[3][64];       /* per size, per round */
	double ns[4][64];        /* short buffers: per size, per round */
};

static volatile uint64_t sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The memory-bandwidth bound: touch every byte once with 64-bit loads. */
static __attribute__((noinline)) uint64_t read_pass(const unsigned char *p, size_t len)
{
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, w0, w1, w2, w3;
	size_t i;

	for (i = 0; i + 32 <= len; i += 32) {
		memcpy(&w0, p + i, 8);
		memcpy(&w1, p + i + 8, 8);
		memcpy(&w2, p + i + 16, 8);
		memcpy(&w3, p + i + 24, 8);
		s0 += w0;
		s1 += w1;
		s2 += w2;
		s3 += w3;
	}
	return s0 + s1 + s2 + s3;
}

/* RFC 1071 as written: one 16-bit word at a time. */
static __attribute__((noinline)) uint64_t ref16(const unsigned char *p, size_t len)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		uint16_t w;

		memcpy(&w, p + i, 2);
		s += w;
	}
	if (len & 1)
		s += p[len - 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

static uint64_t run_once(struct cand *c, unsigned char *dst, const unsigned char *src, size_t len)
{
	switch (c->kind) {
	case K_READ:
		return read_pass(src, len);
	case K_REF16:
		return ref16(src, len);
	case K_DPDK:
#ifdef HAVE_DPDK
		return rte_raw_cksum(src, len);
#else
		return 0;
#endif
	case K_GSO:
		return gso_csum_fold(gso_csum_partial(src, len, 0));
	case K_MEMCPY:
		memcpy(dst, src, len);
		return dst[len - 1];
	case K_MEMCPY_CSUM:
		memcpy(dst, src, len);
		return gso_csum_fold(gso_csum_partial(dst, len, 0));
	case K_GSO_COPY:
		return gso_csum_fold(gso_csum_copy(dst, src, len, 0));
	}
	return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
	double t[64];

	memcpy(t, v, sizeof(*v) * (size_t)n);
	qsort(t, (size_t)n, sizeof(*t), cmp_dbl);
	return n & 1 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static double best_of(const double *v, int n)
{
	double b = v[0];

	for (int i = 1; i < n; i++)
		b = v[i] > b ? v[i] : b;
	return b;
}

static void *big_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		fprintf(stderr, "mmap %zu bytes: %s\n", len, strerror(errno));
		exit(1);
	}
	return p;
}

static void usage(const char *argv0)
{
	printf("usage: %s [--quick] [--rounds N] [--big MiB] [--offset N]\n"
	       "  Throughput of the checksum kernels in GB/s (1e9 bytes/s), medians of\n"
	       "  interleaved rounds, on 1448 B and 64 KiB buffers (in cache) and one\n"
	       "  buffer far larger than the caches.\n"
	       "  --quick      fewer rounds and a 64 MiB big buffer (a smoke run)\n"
	       "  --rounds N   rounds per cell (default 11, quick 3, max 64)\n"
	       "  --big MiB    size of the out-of-cache buffer (default 256)\n"
	       "  --offset N   start buffers N bytes past a 4 KiB boundary (default 0)\n",
	       argv0);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },	   { "quick", no_argument, NULL, 'q' },
		{ "rounds", required_argument, NULL, 'r' }, { "big", required_argument, NULL, 'b' },
		{ "offset", required_argument, NULL, 'o' }, { NULL, 0, NULL, 0 },
	};
	int rounds = 11, quick = 0, c;
	size_t big_mib = 256, offset = 0;

	while ((c = getopt_long(argc, argv, "hqr:b:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(argv[0]);
			return 0;
		case 'q':
			quick = 1;
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'b':
			big_mib = strtoul(optarg, NULL, 0);
			break;
		case 'o':
			offset = strtoul(optarg, NULL, 0) % 4096;
			break;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (quick) {
		rounds = rounds == 11 ? 3 : rounds;
		big_mib = big_mib == 256 ? 64 : big_mib;
	}
	if (rounds < 1 || rounds > 64 || big_mib < 1) {
		usage(argv[0]);
		return 2;
	}

	const size_t sizes[3] = { 1448, 64 * 1024, big_mib << 20 };
	const char *size_names[3] = { "1448 B", "64 KiB", NULL };
	char big_name[32];

	snprintf(big_name, sizeof(big_name), "%zu MiB", big_mib);
	size_names[2] = big_name;

	struct cand cands[16];
	int nc = 0, first_copy;
	enum gso_csum_impl auto_impl;

	gso_csum_select(GSO_CSUM_IMPL_AUTO);
	auto_impl = gso_csum_current();

	cands[nc++] = (struct cand){ .name = "read pass (64-bit loads)", .kind = K_READ };
	cands[nc++] = (struct cand){ .name = "reference 16-bit loop", .kind = K_REF16 };
#ifdef HAVE_DPDK
	cands[nc++] = (struct cand){ .name = "DPDK rte_raw_cksum", .kind = K_DPDK };
#endif
	for (int i = GSO_CSUM_IMPL_SCALAR; i < GSO_CSUM_IMPL_COUNT; i++)
		if (gso_csum_impl_supported((enum gso_csum_impl)i))
			cands[nc++] = (struct cand){ .name = gso_csum_impl_name((enum gso_csum_impl)i),
						     .kind = K_GSO,
						     .impl = (enum gso_csum_impl)i };
	first_copy = nc;
	cands[nc++] = (struct cand){ .name = "memcpy", .kind = K_MEMCPY };
	cands[nc++] = (struct cand){ .name = "memcpy, then checksum (auto)",
				     .kind = K_MEMCPY_CSUM,
				     .impl = auto_impl };
	for (int i = GSO_CSUM_IMPL_SCALAR; i < GSO_CSUM_IMPL_COUNT; i++)
		if (gso_csum_impl_supported((enum gso_csum_impl)i))
			cands[nc++] = (struct cand){ .name = gso_csum_impl_name((enum gso_csum_impl)i),
						     .kind = K_GSO_COPY,
						     .impl = (enum gso_csum_impl)i };

	size_t alloc = sizes[2] + 8192;
	unsigned char *srcb = big_alloc(alloc), *dstb = big_alloc(alloc);
	unsigned char *src = srcb + offset, *dst = dstb + offset;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	/* Random data, and every page of both buffers faulted in before timing. */
	for (size_t i = 0; i + 8 <= alloc; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(srcb + i, &x, 8);
	}
	memset(dstb, 0, alloc);

	/* All kernels must agree before their speed means anything. */
	for (int s = 0; s < 3; s++) {
		uint64_t want = ref16(src, sizes[s]);

		for (int k = 0; k < nc; k++) {
			struct cand *cd = &cands[k];
			uint64_t got;

			if (cd->kind == K_READ || cd->kind == K_REF16 || cd->kind == K_MEMCPY)
				continue;
			/* DPDK's 32-bit accumulator wraps beyond 128 KiB. */
			if (cd->kind == K_DPDK && sizes[s] > 65536)
				continue;
			if (cd->impl)
				gso_csum_select(cd->impl);
			got = run_once(cd, dst, src, sizes[s]);
			if (got != want) {
				fprintf(stderr, "MISMATCH: %s on %s: %#llx, reference %#llx\n", cd->name,
					size_names[s], (unsigned long long)got, (unsigned long long)want);
				return 1;
			}
		}
	}

	for (int s = 0; s < 3; s++) {
		size_t len = sizes[s];
		/* About 32 MiB per timed sample in cache (a few ms), one pass out of it. */
		size_t reps = s == 2 ? 1 : (32u << 20) / len;

		for (int r = 0; r < rounds; r++)
			for (int k = 0; k < nc; k++) {
				struct cand *cd = &cands[k];
				uint64_t acc = 0;
				double t0, t1;

				if (cd->impl)
					gso_csum_select(cd->impl);
				run_once(cd, dst, src, len); /* warm: caches, page tables */
				t0 = now_s();
				for (size_t i = 0; i < reps; i++)
					acc += run_once(cd, dst, src, len);
				t1 = now_s();
				sink += acc;
				cd->gbs[s][r] = (double)len * (double)reps / (t1 - t0) / 1e9;
			}
	}
	/* Short buffers (headers, pseudo-headers): call overhead dominates. */
	static const size_t shorts[4] = { 20, 40, 64, 256 };

	for (int z = 0; z < 4; z++) {
		size_t reps = 1u << 20;

		for (int r = 0; r < rounds; r++)
			for (int k = 0; k < first_copy; k++) {
				struct cand *cd = &cands[k];
				uint64_t acc = 0;
				double t0, t1;

				if (cd->impl)
					gso_csum_select(cd->impl);
				t0 = now_s();
				for (size_t i = 0; i < reps; i++)
					acc += run_once(cd, dst, src + (i & 7) * 2, shorts[z]);
				t1 = now_s();
				sink += acc;
				cd->ns[z][r] = (t1 - t0) * 1e9 / (double)reps;
			}
	}
	gso_csum_select(GSO_CSUM_IMPL_AUTO);

	printf("libgso checksum bench: %s, auto = %s, %d rounds, median GB/s, buffers at +%zu\n",
	       __VERSION__, gso_csum_impl_name(auto_impl), rounds, offset);
#ifdef HAVE_DPDK
	printf("(rte_raw_cksum sums into 32 bits: its %s result is wrong, its speed is shown)\n",
	       size_names[2]);
#else
	printf("(built without DPDK: no rte_raw_cksum row)\n");
#endif
	printf("\n%-30s %10s %10s %10s\n", "checksum", size_names[0], size_names[1], size_names[2]);
	double med[16][3];

	for (int k = 0; k < nc; k++) {
		if (k == first_copy)
			printf("\n%-30s %10s %10s %10s\n", "copy (+ checksum)", size_names[0],
			       size_names[1], size_names[2]);
		for (int s = 0; s < 3; s++)
			med[k][s] = median(cands[k].gbs[s], rounds);
		printf("%-30s %10.2f %10.2f %10.2f\n", cands[k].name, med[k][0], med[k][1], med[k][2]);
	}

	printf("\n%-30s %10s %10s %10s %10s\n", "short buffers, ns per call", "20 B", "40 B",
	       "64 B", "256 B");
	for (int k = 1; k < first_copy; k++)
		printf("%-30s %10.2f %10.2f %10.2f %10.2f\n", cands[k].name, median(cands[k].ns[0], rounds),
		       median(cands[k].ns[1], rounds), median(cands[k].ns[2], rounds),
		       median(cands[k].ns[3], rounds));

	/* The goals, as ratios of medians from this same run. */
	int best = -1, dpdk = -1, bestc = -1;

	for (int k = 0; k < nc; k++) {
		if (cands[k].kind == K_DPDK)
			dpdk = k;
		if (cands[k].kind == K_GSO && cands[k].impl == auto_impl)
			best = k;
		if (cands[k].kind == K_GSO_COPY && cands[k].impl == auto_impl)
			bestc = k;
	}
	printf("\nratios (auto = %s):\n", cands[best].name);
	if (dpdk >= 0)
		printf("  vs DPDK rte_raw_cksum:  1448 B %.2fx, 64 KiB %.2fx (goal >= 1.3x)\n",
		       med[best][0] / med[dpdk][0], med[best][1] / med[dpdk][1]);
	printf("  vs read pass:           %s %.0f%% (goal >= 90%%; best-of-rounds %.0f%%), 64 KiB %.0f%%\n",
	       size_names[2], 100 * med[best][2] / med[0][2],
	       100 * best_of(cands[best].gbs[2], rounds) / best_of(cands[0].gbs[2], rounds),
	       100 * med[best][1] / med[0][1]);
	printf("  copy vs memcpy:         1448 B %.2fx, 64 KiB %.2fx, %s %.2fx\n",
	       med[bestc][0] / med[first_copy][0], med[bestc][1] / med[first_copy][1], size_names[2],
	       med[bestc][2] / med[first_copy][2]);
	printf("  copy vs memcpy+csum:    1448 B %.2fx, 64 KiB %.2fx, %s %.2fx\n",
	       med[bestc][0] / med[first_copy + 1][0], med[bestc][1] / med[first_copy + 1][1],
	       size_names[2], med[bestc][2] / med[first_copy + 1][2]);
	munmap(srcb, alloc);
	munmap(dstb, alloc);
	return 0;
}
