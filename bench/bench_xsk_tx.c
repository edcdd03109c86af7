/*
 * AF_XDP transmit paths side by side, in copy mode on a veth made for the
 * run (two namespaces, removed at exit; needs root):
 *
 *   copy+sw    whole frames, payload copied and checksummed in software
 *   copy+csum  whole frames, payload copied, checksum request to the kernel
 *   sg+sw      header frame + payload reference (multi-buffer), software checksum
 *   sg+csum    header frame + payload reference, checksum request
 *
 * Each mode has its own device on its own veth queue, and rounds
 * interleave the modes so that noise hits them alike.  The same UDP
 * super-segment (default 64 000 bytes, MSS 1400) is sent again and again
 * for --seconds per mode per round; frames go to a MAC that is not the
 * peer's, so the peer drops them at once and its receive work stays small.
 * Copy mode transmits inside sendto(), so the sender thread's CPU time
 * (user + system) is what a byte costs: the table prints medians of
 * Gbit/s of payload, Mpps of frames, CPU-seconds per GB (all, and user
 * space alone: the library's share) and each mode's ratio to copy+sw.
 * User time comes from getrusage(RUSAGE_THREAD), at tick resolution:
 * use rounds of 0.5 s or more.  No checksum is finished by anyone in the csum modes
 * (a veth passes requests on), which is the point: the work moves to the
 * NIC on real hardware.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <arpa/inet.h>

#include <gso/gso.h>
#include <gso/dev.h>
#include <gso/xsk.h>

#include "cpu.h"
#include "util.h"
#include "benchbed.h"

enum { M_COPY_SW, M_COPY_CSUM, M_SG_SW, M_SG_CSUM, M_COUNT };
static const char *const mode_name[M_COUNT] = { "copy+sw", "copy+csum", "sg+sw", "sg+csum" };
static const uint32_t mode_flags[M_COUNT] = {
	GSO_XSK_F_NO_SG | GSO_XSK_F_NO_CSUM, GSO_XSK_F_NO_SG, GSO_XSK_F_NO_CSUM, 0,
};

#define MAX_ROUNDS 64

struct result {
	double gbps, mpps, cpu_per_gb, user_per_gb;
};

/* The calling thread's user CPU in seconds (the rest of its CPU is system time). */
static double thread_user(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Send for `secs`; fills payload bytes, frames and thread CPU seconds. */
static void run(struct gso_dev *dev, const struct gso_tx *tx, double secs, uint64_t *bytes, uint64_t *frames,
		double *cpu, double *user, double *wall)
{
	struct bench_cpu a, b, d;
	double u0 = thread_user();
	uint32_t nseg = (tx->len + tx->mss - 1) / tx->mss;
	double end;

	*bytes = *frames = 0;
	bench_cpu_now(&a);
	end = a.wall + secs;
	for (unsigned i = 0;; i++) {
		int r = gso_dev__submit(dev, tx, 1);
		if (r == 1) {
			*bytes += tx->len;
			*frames += nseg;
		} else if (r == -EAGAIN || r == -ENOBUFS) {
			gso_dev__kick(dev);
			gso_dev__reap(dev, 0);
		} else {
			bench_die(BENCH_EXIT_FAIL, -r, "submit");
		}
		if ((i & 15) == 0 && bench_now() >= end)
			break;
	}
	gso_dev__reap(dev, 0);
	bench_cpu_now(&b);
	bench_cpu_diff(&a, &b, &d);
	*cpu = d.thread;
	*user = thread_user() - u0;
	*wall = d.wall;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_xsk_tx [--quick] [--seconds S] [--rounds N] [--len BYTES] [--mss BYTES]\n"
		   "The four AF_XDP copy-mode paths for 64 KiB UDP super-segments side by side.\n"
		   "Needs root: creates two network namespaces and a veth for the run (removed at\n"
		   "exit, also on signals); the host's interfaces are never touched.\n"
		   "  --quick       one short round (a smoke test; numbers are rough)\n"
		   "  --seconds S   time per mode per round (default 0.5)\n"
		   "  --rounds N    rounds, modes interleaved (default 5)\n"
		   "  --len BYTES   super-segment payload (default 64000)\n"
		   "  --mss BYTES   segment payload (default 1400)\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seconds", required_argument, NULL, 's' }, { "rounds", required_argument, NULL, 'r' },
		{ "len", required_argument, NULL, 'l' },     { "mss", required_argument, NULL, 'm' },
		{ "quick", no_argument, NULL, 'q' },         { "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	double secs = 0.5;
	uint64_t rounds = 5, len = 64000, mss = 1400;
	int o;

	while ((o = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (o) {
		case 's': if (bench_parse_double(optarg, &secs) || secs <= 0) bench_die(2, 0, "--seconds"); break;
		case 'r': if (bench_parse_u64(optarg, &rounds) || !rounds || rounds > MAX_ROUNDS) bench_die(2, 0, "--rounds"); break;
		case 'l': if (bench_parse_size(optarg, &len) || !len || len > 65000) bench_die(2, 0, "--len (1..65000)"); break;
		case 'm': if (bench_parse_u64(optarg, &mss) || !mss || mss > 1472) bench_die(2, 0, "--mss (1..1472)"); break;
		case 'q': secs = 0.2; rounds = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return BENCH_EXIT_USAGE;
		}
	}
	if (geteuid())
		bench_die(BENCH_EXIT_SKIP, EPERM, "needs root");
	if ((len + mss - 1) / mss > GSO_UDP_MAX_SEGS)
		bench_die(BENCH_EXIT_USAGE, 0, "more than %u segments", GSO_UDP_MAX_SEGS);

	if (optind != argc) {
		usage(stderr);
		return BENCH_EXIT_USAGE;
	}
	struct nsbed bed;
	int e = xskbed_create(&bed, "xtx", M_COUNT);
	if (e)
		bench_die(BENCH_EXIT_USAGE, -e, "test-bed");
	if (nsbed_enter(&bed, 0))
		bench_die(BENCH_EXIT_USAGE, errno, "setns");
	int ifindex = bed.ifindex[0];

	struct gso_dev *dev[M_COUNT];
	struct gso_buf buf[M_COUNT];
	struct gso_tx tx[M_COUNT];
	struct gso_tmpl t;
	GSO_OPTS(gso_tmpl_fields, f, .l3 = GSO_L3_IPV4, .l4 = GSO_L4_UDP, .sport = 9, .dport = 9, .df = true);
	memcpy(f.eth_dst, "\x02\x00\x00\x00\x00\x99", 6); /* nobody's: the peer drops it at once */
	memcpy(f.eth_src, "\x02\x00\x00\x00\x00\x01", 6);
	inet_pton(AF_INET, "198.18.0.1", f.saddr);
	inet_pton(AF_INET, "198.18.0.2", f.daddr);
	if (gso_tmpl__build(&t, &f))
		bench_die(BENCH_EXIT_FAIL, EINVAL, "template");
	for (int m = 0; m < M_COUNT; m++) {
		GSO_OPTS(gso_xsk_opts, xo, .mode = GSO_XSK_MODE_COPY, .queue_id = (uint32_t)m, .flags = mode_flags[m]);
		int err = gso_xsk__create(&dev[m], ifindex, &xo);
		if (err)
			bench_die(BENCH_EXIT_SKIP, -err, "AF_XDP device for %s", mode_name[m]);
		err = gso_dev__buf_alloc(dev[m], (uint32_t)len, &buf[m]);
		if (err)
			bench_die(BENCH_EXIT_FAIL, -err, "buffer");
		for (uint64_t i = 0; i < len; i++)
			buf[m].data[i] = (uint8_t)(i * 7);
		tx[m] = (struct gso_tx){ .tmpl = &t, .buf = &buf[m], .len = (uint32_t)len, .mss = (uint32_t)mss };
	}

	static double gbps[M_COUNT][MAX_ROUNDS], mpps[M_COUNT][MAX_ROUNDS], cpugb[M_COUNT][MAX_ROUNDS],
		usergb[M_COUNT][MAX_ROUNDS];
	for (unsigned r = 0; r < rounds; r++) {
		for (int k = 0; k < M_COUNT; k++) {
			int m = (int)((k + r) % M_COUNT); /* rotate who goes first */
			uint64_t bytes, frames;
			double cpu, user, wall;
			run(dev[m], &tx[m], secs, &bytes, &frames, &cpu, &user, &wall);
			usergb[m][r] = user / ((double)bytes / 1e9);
			gbps[m][r] = (double)bytes * 8 / wall / 1e9;
			mpps[m][r] = (double)frames / wall / 1e6;
			cpugb[m][r] = cpu / ((double)bytes / 1e9);
		}
	}

	struct result res[M_COUNT];
	for (int m = 0; m < M_COUNT; m++) {
		res[m].gbps = median(gbps[m], (int)rounds);
		res[m].mpps = median(mpps[m], (int)rounds);
		res[m].cpu_per_gb = median(cpugb[m], (int)rounds);
		res[m].user_per_gb = median(usergb[m], (int)rounds);
	}
	printf("AF_XDP copy mode on veth, UDP super-segment %lu bytes, MSS %lu (%lu frames), %lu rounds x %.2f s per mode\n",
	       (unsigned long)len, (unsigned long)mss, (unsigned long)((len + mss - 1) / mss), (unsigned long)rounds, secs);
	printf("sender thread CPU (user+sys; copy mode transmits inside sendto), medians\n\n");
	printf("%-10s %8s %7s %9s %10s %15s %16s\n", "mode", "Gbit/s", "Mpps", "CPU-s/GB", "user-s/GB",
	       "CPU vs copy+sw", "user vs copy+sw");
	for (int m = 0; m < M_COUNT; m++)
		printf("%-10s %8.2f %7.3f %9.3f %10.3f %14.2fx %15.2fx\n", mode_name[m], res[m].gbps, res[m].mpps,
		       res[m].cpu_per_gb, res[m].user_per_gb, res[m].cpu_per_gb / res[M_COPY_SW].cpu_per_gb,
		       res[m].user_per_gb / res[M_COPY_SW].user_per_gb);
	for (int m = 0; m < M_COUNT; m++) {
		gso_dev__buf_free(dev[m], &buf[m]);
		gso_dev__destroy(dev[m]);
	}
	nsbed_destroy(&bed);
	return BENCH_EXIT_OK;
}
