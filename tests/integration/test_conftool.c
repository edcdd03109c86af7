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
 * MTU 4000 (GSO_CONFTOOL_MTU, at most 4078: the e1000 model copies each
 * frame into one 4 KiB chunk).  Cases are the boundary table and
 * GSO_CONFTOOL_CASES random ones (default 1500) from a printed seed
 * (GSO_CONFORMANCE_SEED), those that fit the MTU.  GSO_CONFTOOL_KEEP=DIR
 * keeps the captures and expected.pcap in DIR, to compare a VM's capture
 * of the same cases with them (the same seed, count and MTU).
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
#define CT_MTU_MAX 4078
#define CT_DEFAULT_RANDOM 1500u

static struct nsbed tb;
static char dir[256];
static int cap_fd = -1;

struct capture {
	pthread_t thr;
	atomic_bool stop;
	pcap_dumper_t *d;
	pcap_t *dead;
	unsigned frames;
	int err;
};

static bool keep_dir;

static void rm_dir(void)
{
	char cmd[320];

	if (!dir[0] || keep_dir)
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
	nsbed_destroy(&tb);
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

Test(conftool, kernel_e1000_model_and_libgso_equal, .fini = fini, .timeout = 180)
{
	static const char *const impl[] = { "kernel", "e1000", "vnet" };
	const char *tool = gso_test_build_path("tests/conftool");
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	uint64_t seed;
	unsigned n_random = (unsigned)gso_test_env_u64("GSO_CONFTOOL_CASES", CT_DEFAULT_RANDOM);
	char cases[128], out[320];
	int one = 1, rcv = 64 << 20, st;
	unsigned mtu;

	gso_test_require_root();
	cr_assert_eq(access(tool, X_OK), 0, "%s not built (make build/tests/integration)", tool);
	seed = gso_test_seed("GSO_CONFORMANCE_SEED");
	mtu = (unsigned)gso_test_env_u64("GSO_CONFTOOL_MTU", CT_MTU);
	cr_assert(mtu >= 1280 && mtu <= CT_MTU_MAX, "GSO_CONFTOOL_MTU 1280..%d", CT_MTU_MAX);
	snprintf(cases, sizeof(cases), "--seed %" PRIu64 " --random %u --mtu %u", seed, n_random, mtu);
	fprintf(stderr, "conftool test: seed %" PRIu64 " (GSO_CONFORMANCE_SEED), %u random cases "
		"(GSO_CONFTOOL_CASES), MTU %u (GSO_CONFTOOL_MTU)\n", seed, n_random, mtu);
	if (getenv("GSO_CONFTOOL_KEEP") && *getenv("GSO_CONFTOOL_KEEP")) {
		snprintf(dir, sizeof(dir), "%s", getenv("GSO_CONFTOOL_KEEP"));
		cr_assert(!mkdir(dir, 0755) || errno == EEXIST, "%s: %s", dir, strerror(errno));
		keep_dir = true;
		fprintf(stderr, "conftool test: keeping the captures in %s (GSO_CONFTOOL_KEEP)\n", dir);
	} else {
		snprintf(dir, sizeof(dir), "/tmp/gso-conftool-XXXXXX");
		cr_assert_not_null(mkdtemp(dir));
	}

	cr_assert_eq(gso_testbed_create(&tb), 0);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(nsbed_sh(&tb, i, "ip link set %s mtu %u", tb.ifname[i], mtu), 0);
	/* Software GSO with checksums finished in software (offload reference section 8). */
	cr_assert_eq(nsbed_sh(&tb, 0, "ethtool -K %s tso off gso on tx off >/dev/null 2>&1",
			      tb.ifname[0]), 0);
	nsbed_sh(&tb, 1, "ethtool -K %s gro off >/dev/null 2>&1", tb.ifname[1]);

	cr_assert_eq(nsbed_enter(&tb, 1), 0);
	cap_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	cr_assert_geq(cap_fd, 0, "AF_PACKET: %s", strerror(errno));
	if (setsockopt(cap_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)))
		setsockopt(cap_fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	ll.sll_ifindex = tb.ifindex[1];
	cr_assert_eq(bind(cap_fd, (struct sockaddr *)&ll, sizeof(ll)), 0);
	cr_assert_eq(setsockopt(cap_fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)), 0);

	for (unsigned i = 0; i < sizeof(impl) / sizeof(impl[0]); i++) {
		struct capture c;
		char pcap[320], log[320];

		snprintf(pcap, sizeof(pcap), "%s/%s.pcap", dir, impl[i]);
		snprintf(log, sizeof(log), "%s/send-%s.txt", dir, impl[i]);
		capture_start(&c, pcap);
		st = nsbed_sh(&tb, 0, "%s send --backend %s --ifname %s %s >%s 2>&1", tool,
			      impl[i], tb.ifname[0], cases, log);
		capture_stop(&c);
		show(log);
		fprintf(stderr, "conftool test: %s: %u frames captured on the peer\n", impl[i],
			c.frames);
		cr_assert_eq(st, 0, "conftool send --backend %s: exit status %d (output above)",
			     impl[i], st);
	}
	st = gso_test_sh("%s expect %s %s/expected.pcap 2>%s/expect.txt", tool, cases, dir, dir);
	snprintf(out, sizeof(out), "%s/expect.txt", dir);
	show(out);
	cr_assert_eq(st, 0, "conftool expect: exit status %d", st);
	st = gso_test_sh("%s compare %s/expected.pcap kernel=%s/kernel.pcap e1000-model=%s/e1000.pcap "
		"vnet-on-veth=%s/vnet.pcap >%s/compare.txt 2>&1", tool, dir, dir, dir, dir, dir);
	snprintf(out, sizeof(out), "%s/compare.txt", dir);
	show(out);
	cr_assert_eq(st, 0, "conftool compare: exit status %d (seed %" PRIu64 "; output above)", st,
		     seed);
}

/* ---- compare's classification, on a doctored copy of expect's output ---- */

struct rec {
	uint8_t *p;
	uint32_t len;
	unsigned idx;
	size_t l4;
	uint8_t proto;
};

static unsigned read_pcap(const char *path, struct rec *r, unsigned cap)
{
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *in = pcap_open_offline(path, eb);
	struct pcap_pkthdr *h;
	const u_char *p;
	unsigned n = 0;

	cr_assert_not_null(in, "%s: %s", path, eb);
	while (n < cap && pcap_next_ex(in, &h, &p) == 1) {
		r[n].p = malloc(h->caplen + 64);
		cr_assert_not_null(r[n].p);
		memcpy(r[n].p, p, h->caplen);
		r[n].len = h->caplen;
		cr_assert(conf_frame_case(r[n].p, r[n].len, &r[n].idx, &r[n].l4, &r[n].proto),
			  "expect wrote a frame of no case");
		n++;
	}
	pcap_close(in);
	return n;
}

static void write_rec(pcap_dumper_t *d, const uint8_t *p, uint32_t len)
{
	struct pcap_pkthdr h = { .caplen = len, .len = len };

	pcap_dump((u_char *)d, &h, p);
}

struct row {
	unsigned cases, frames, equal, csum0, pad, untag, empty, mismatch, missing, extra, bad, unrelated;
};

static int compare_row(const char *tool, const char *exp, const char *got, const char *flags,
		       struct row *r)
{
	char line[512];
	FILE *f;
	int st;

	st = gso_test_sh("%s compare %s %s x=%s >%s/cmp.txt 2>&1", tool, flags, exp, got, dir);
	snprintf(line, sizeof(line), "%s/cmp.txt", dir);
	show(line);
	f = fopen(line, "r");
	cr_assert_not_null(f);
	memset(r, 0xff, sizeof(*r));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "x ", 2))
			cr_assert_eq(sscanf(line + 2, "%u %u %u %u %u %u %u %u %u %u %u %u", &r->cases,
					    &r->frames, &r->equal, &r->csum0, &r->pad, &r->untag, &r->empty,
					    &r->mismatch, &r->missing, &r->extra, &r->bad,
					    &r->unrelated), 12, "row: %s", line);
	fclose(f);
	return st;
}

Test(conftool, compare_counts_each_kind_of_difference, .fini = fini, .timeout = 60)
{
	enum { CAP = 4096 };
	const char *tool = gso_test_build_path("tests/conftool");
	static struct rec r[CAP];
	static const uint8_t arp[60] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06 };
	char exp[320], exp2[320], got[320];
	unsigned n, pad = ~0u, csum = ~0u, ipck = ~0u, untag = ~0u, flip = ~0u, drop = ~0u, dup = ~0u,
		 tail = ~0u;
	uint8_t empty[128];
	size_t empty_len = 0;
	pcap_t *dead;
	pcap_dumper_t *d, *d2;
	struct row row;
	int st;

	cr_assert_eq(access(tool, X_OK), 0, "%s not built (make build/tests/integration)", tool);
	snprintf(dir, sizeof(dir), "/tmp/gso-conftool-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(exp, sizeof(exp), "%s/exp.pcap", dir);
	snprintf(exp2, sizeof(exp2), "%s/exp2.pcap", dir);
	snprintf(got, sizeof(got), "%s/got.pcap", dir);
	/* The table alone (seed 1): it has 1-byte payloads, zero checksums and 802.1Q tags. */
	st = gso_test_sh("%s expect --seed 1 --random 0 --mtu 1500 --proto tcp4,udp6 %s 2>/dev/null", tool, exp);
	cr_assert_eq(st, 0, "conftool expect: %d", st);
	n = read_pcap(exp, r, CAP);
	cr_assert_lt(n, CAP);

	/* One frame for each kind; flip, drop and dup in three different cases. */
	for (unsigned i = 0; i < n; i++) {
		struct rec *x = &r[i];
		size_t ck = x->l4 + (x->proto == 6 ? 16 : 6);
		bool last = i + 1 == n || r[i + 1].idx != x->idx;

		if (pad == ~0u && x->len < 60)
			pad = i;
		else if (csum == ~0u && x->proto == 6 && !x->p[ck] && !x->p[ck + 1])
			csum = i;
		else if (ipck == ~0u && x->p[12] == 0x08 && x->p[13] == 0)
			ipck = i;
		else if (untag == ~0u && x->p[12] == 0x81 && x->p[13] == 0)
			untag = i;
		else if (flip == ~0u && x->len > 200)
			flip = i;
		else if (drop == ~0u && flip != ~0u && last && i > 0 && r[i - 1].idx == x->idx &&
			 x->idx != r[flip].idx)
			drop = i;
		else if (dup == ~0u && drop != ~0u && last && x->idx != r[flip].idx &&
			 x->idx != r[drop].idx)
			dup = i;
		else if (tail == ~0u && dup != ~0u && last && x->proto == 6 && x->p[12] == 0x08 &&
			 x->p[13] == 0 && x->len > 100 && x->idx != r[flip].idx && x->idx != r[drop].idx &&
			 x->idx != r[dup].idx)
			tail = i;
	}
	/*
	 * QEMU 7.2's e1000 after a payload of whole MSS: one more frame, the
	 * last one's headers with no payload and the sequence number where
	 * that one's payload ended ("empty", tolerated unless --strict).
	 */
	if (tail != ~0u) {
		const uint8_t *t = r[tail].p;
		size_t l4 = r[tail].l4, hl = l4 + (size_t)(t[l4 + 12] >> 4) * 4;
		uint32_t pay = (uint32_t)(14 + ((size_t)t[16] << 8 | t[17]) - hl);
		uint32_t seq = (uint32_t)t[l4 + 4] << 24 | (uint32_t)t[l4 + 5] << 16 | (uint32_t)t[l4 + 6] << 8 |
			       t[l4 + 7];

		cr_assert_leq(hl, sizeof(empty));
		memcpy(empty, t, hl);
		empty[16] = (uint8_t)((hl - 14) >> 8);
		empty[17] = (uint8_t)(hl - 14);
		seq += pay;
		empty[l4 + 4] = (uint8_t)(seq >> 24);
		empty[l4 + 5] = (uint8_t)(seq >> 16);
		empty[l4 + 6] = (uint8_t)(seq >> 8);
		empty[l4 + 7] = (uint8_t)seq;
		empty_len = hl < 60 ? 60 : hl;
		memset(empty + hl, 0, empty_len - hl);
	}
	cr_assert(pad != ~0u && csum != ~0u && ipck != ~0u && untag != ~0u && flip != ~0u && drop != ~0u && dup != ~0u &&
		  tail != ~0u,
		  "the table lacks a frame to doctor");

	/*
	 * An IPv4 header checksum that computes to 0 is rare in the table; the
	 * expected side gets one doctored too (compare does not check sums).
	 */
	dead = pcap_open_dead(DLT_EN10MB, 262144);
	d = pcap_dump_open(dead, got);
	d2 = pcap_dump_open(dead, exp2);
	cr_assert(d && d2);
	r[ipck].p[24] = r[ipck].p[25] = 0;
	for (unsigned i = 0; i < n; i++)
		write_rec(d2, r[i].p, r[i].len);
	r[ipck].p[24] = r[ipck].p[25] = 0xff;
	memset(r[pad].p + r[pad].len, 0, 60 - r[pad].len);
	r[pad].len = 60;
	r[csum].p[r[csum].l4 + 16] = r[csum].p[r[csum].l4 + 17] = 0xff;
	memmove(r[untag].p + 12, r[untag].p + 16, r[untag].len - 16);
	r[untag].len -= 4;
	r[flip].p[150] ^= 0x40;
	write_rec(d, arp, sizeof(arp));
	for (unsigned i = 0; i < n; i++) {
		if (i == drop)
			continue;
		write_rec(d, r[i].p, r[i].len);
		if (i == dup)
			write_rec(d, r[i].p, r[i].len);
		if (i == tail)
			write_rec(d, empty, (uint32_t)empty_len);
	}
	pcap_dump_close(d);
	pcap_dump_close(d2);
	pcap_close(dead);

	st = compare_row(tool, exp2, got, "", &row);
	cr_expect_eq(st, 1, "compare with differences: exit status %d", st);
	cr_expect_eq(row.frames, n + 1);
	cr_expect_eq(row.csum0, 2, "one L4, one IPv4 header checksum");
	cr_expect_eq(row.pad, 1);
	cr_expect_eq(row.untag, 1);
	cr_expect_eq(row.empty, 1, "one header-only frame after a case's last");
	cr_expect_eq(row.mismatch, 1);
	cr_expect_eq(row.missing, 1);
	cr_expect_eq(row.extra, 1);
	cr_expect_eq(row.bad, 3);
	cr_expect_eq(row.unrelated, 1);
	cr_expect_eq(row.equal, n - 6);

	st = compare_row(tool, exp2, got, "--strict", &row);
	cr_expect_eq(st, 1);
	cr_expect_eq(row.mismatch, 5, "--strict: the four tolerated count as mismatches too");
	cr_expect_eq(row.extra, 2, "--strict: the header-only frame is an extra one");

	st = compare_row(tool, exp, exp, "", &row);
	cr_expect_eq(st, 0, "compare of a file with itself: exit status %d", st);
	cr_expect_eq(row.equal, n);
	for (unsigned i = 0; i < n; i++)
		free(r[i].p);
}
