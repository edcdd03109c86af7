/*
 * The conformance harness (build/tests/conftool) over a veth, three of its
 * four implementations: the kernel's software GSO (raw AF_PACKET +
 * virtio_net_hdr on a `tso off gso on tx off` veth) and libgso's e1000
 * model (AF_XDP copy mode) are each sent with `conftool send` and captured
 * on the peer; libgso's software GSO comes from `conftool expect`;
 * `conftool compare` must find zero mismatches, missing or extra frames.
 * The fourth, QEMU's e1000 under a Linux guest, runs `send --backend vnet`
 * in a VM (issue #13); here that backend runs on the veth too, where the
 * kernel segments what it hands down whole.
 *
 * MTU 4000: the e1000 model copies each frame into one 4 KiB chunk.  Cases
 * are the boundary table and GSO_CONFTOOL_CASES random ones (default 1500)
 * from a printed seed (GSO_CONFORMANCE_SEED), those that fit the MTU.
 * The capture keeps everything that arrives (IPv6 ND too): compare must
 * filter it.  An 802.1Q tag the receive path moves into metadata is put
 * back, as a tap capture would show it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <pcap/pcap.h>

#include "conf_cases.h"
#include "gso_test.h"

#define CT_MTU 4000
#define CT_DEFAULT_RANDOM 1500u

static struct gso_testbed tb;
static char dir[64];
static int cap_fd = -1;

struct capture {
	pthread_t thr;
	atomic_bool stop;
	pcap_dumper_t *d;
	pcap_t *dead;
	unsigned frames;
	int err;
};

static void rm_dir(void)
{
	char cmd[128];

	if (!dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "conftool test: could not remove %s\n", dir);
	dir[0] = 0;
}

static void fini(void)
{
	if (cap_fd >= 0)
		close(cap_fd);
	cap_fd = -1;
	gso_testbed_destroy(&tb);
	rm_dir();
}

/* Everything that arrives on side b, until told to stop and the link is quiet. */
static void *capture_main(void *arg)
{
	struct capture *c = arg;
	uint8_t *buf = malloc(CONF_FRAME_MAX + 4);

	if (!buf) {
		c->err = -ENOMEM;
		return NULL;
	}
	for (;;) {
		struct pcap_pkthdr h = { 0 };
		uint8_t *frame;
		int pkttype;
		ssize_t n = conf_recv(cap_fd, buf, CONF_FRAME_MAX + 4, 200, &frame, &pkttype);

		if (n < 0) {
			c->err = (int)n;
			break;
		}
		if (n == 0) {
			if (atomic_load(&c->stop))
				break;
			continue;
		}
		if (pkttype == PACKET_OUTGOING)
			continue;
		gettimeofday(&h.ts, NULL);
		h.caplen = h.len = (bpf_u_int32)n;
		pcap_dump((u_char *)c->d, &h, frame);
		c->frames++;
	}
	free(buf);
	return NULL;
}

static void capture_start(struct capture *c, const char *path)
{
	memset(c, 0, sizeof(*c));
	c->dead = pcap_open_dead(DLT_EN10MB, 262144);
	cr_assert_not_null(c->dead);
	c->d = pcap_dump_open(c->dead, path);
	cr_assert_not_null(c->d, "%s: %s", path, pcap_geterr(c->dead));
	cr_assert_eq(pthread_create(&c->thr, NULL, capture_main, c), 0);
}

static void capture_stop(struct capture *c)
{
	atomic_store(&c->stop, true);
	pthread_join(c->thr, NULL);
	pcap_dump_close(c->d);
	pcap_close(c->dead);
	cr_assert_eq(c->err, 0, "capture: %s", strerror(-c->err));
}

static void show(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fputs(line, stderr);
	fclose(f);
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return st < 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	char *end;
	uint64_t x;

	if (!v || !*v)
		return dflt;
	errno = 0;
	x = strtoull(v, &end, 0);
	cr_assert(!errno && !*end, "%s=%s is not a number", name, v);
	return x;
}

Test(conftool, kernel_e1000_model_and_libgso_equal, .fini = fini, .timeout = 180)
{
	static const char *const impl[] = { "kernel", "e1000", "vnet" };
	const char *tool = gso_test_build_path("tests/conftool");
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	struct timespec now;
	uint64_t seed;
	unsigned n_random = (unsigned)env_u64("GSO_CONFTOOL_CASES", CT_DEFAULT_RANDOM);
	char cases[128], out[128];
	int one = 1, rcv = 64 << 20, st;

	gso_test_require_root();
	cr_assert_eq(access(tool, X_OK), 0, "%s not built (make build/tests/all)", tool);
	clock_gettime(CLOCK_REALTIME, &now);
	seed = env_u64("GSO_CONFORMANCE_SEED",
		       ((uint64_t)now.tv_sec * 1000003u ^ (uint64_t)now.tv_nsec) & 0xffffffffffffull);
	snprintf(cases, sizeof(cases), "--seed %" PRIu64 " --random %u --mtu %d", seed, n_random,
		 CT_MTU);
	fprintf(stderr, "conftool test: seed %" PRIu64 " (GSO_CONFORMANCE_SEED), %u random cases "
		"(GSO_CONFTOOL_CASES), MTU %d\n", seed, n_random, CT_MTU);
	snprintf(dir, sizeof(dir), "/tmp/gso-conftool-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));

	cr_assert_eq(gso_testbed_create(&tb), 0);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(gso_testbed_sh(&tb, i, "ip link set %s mtu %d", tb.ifname[i], CT_MTU), 0);
	/* Software GSO with checksums finished in software (offload reference section 8). */
	cr_assert_eq(gso_testbed_sh(&tb, 0, "ethtool -K %s tso off gso on tx off >/dev/null 2>&1",
				    tb.ifname[0]), 0);
	gso_testbed_sh(&tb, 1, "ethtool -K %s gro off >/dev/null 2>&1", tb.ifname[1]);

	cr_assert_eq(gso_testbed_enter(&tb, 1), 0);
	cap_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	cr_assert_geq(cap_fd, 0, "AF_PACKET: %s", strerror(errno));
	if (setsockopt(cap_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)))
		setsockopt(cap_fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	ll.sll_ifindex = tb.ifindex[1];
	cr_assert_eq(bind(cap_fd, (struct sockaddr *)&ll, sizeof(ll)), 0);
	cr_assert_eq(setsockopt(cap_fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)), 0);

	for (unsigned i = 0; i < sizeof(impl) / sizeof(impl[0]); i++) {
		struct capture c;
		char pcap[128], log[128];

		snprintf(pcap, sizeof(pcap), "%s/%s.pcap", dir, impl[i]);
		snprintf(log, sizeof(log), "%s/send-%s.txt", dir, impl[i]);
		capture_start(&c, pcap);
		st = gso_testbed_sh(&tb, 0, "%s send --backend %s --ifname %s %s >%s 2>&1", tool,
				    impl[i], tb.ifname[0], cases, log);
		capture_stop(&c);
		show(log);
		fprintf(stderr, "conftool test: %s: %u frames captured on the peer\n", impl[i],
			c.frames);
		cr_assert_eq(st, 0, "conftool send --backend %s: exit status %d (output above)",
			     impl[i], st);
	}
	st = sh("%s expect %s %s/expected.pcap 2>%s/expect.txt", tool, cases, dir, dir);
	snprintf(out, sizeof(out), "%s/expect.txt", dir);
	show(out);
	cr_assert_eq(st, 0, "conftool expect: exit status %d", st);
	st = sh("%s compare %s/expected.pcap kernel=%s/kernel.pcap e1000-model=%s/e1000.pcap "
		"vnet-on-veth=%s/vnet.pcap >%s/compare.txt 2>&1", tool, dir, dir, dir, dir, dir);
	snprintf(out, sizeof(out), "%s/compare.txt", dir);
	show(out);
	cr_assert_eq(st, 0, "conftool compare: exit status %d (seed %" PRIu64 "; output above)", st,
		     seed);
}
