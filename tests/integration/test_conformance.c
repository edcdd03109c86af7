/*
 * The kernel oracle: libgso's software GSO (through tools/gsoseg) must put
 * on the wire exactly what the Linux kernel's own software GSO does for the
 * same super-packet, byte for byte (design invariant 6).
 *
 * Side a of a veth test-bed has `tso off gso on tx off`, so the kernel
 * segments in software and finishes every checksum itself (offload
 * reference section 8).  Each super-packet goes out through an AF_PACKET
 * socket with PACKET_VNET_HDR, its virtio_net_hdr and prepared headers from
 * the library's encoder (gso_offload_describe + gso_offload_vnet).  What the
 * kernel emits is captured with a second AF_PACKET socket -- on side b for
 * MSS 536..8960, on side a (PACKET_OUTGOING) for MSS 1..535, whose thousands
 * of segments would overflow the peer's backlog -- and compared with the
 * frames gsoseg writes for the same record.
 *
 * Cases: a fixed table of boundaries plus random cases from a seed that is
 * printed (GSO_CONFORMANCE_SEED overrides it, GSO_CONFORMANCE_CASES sets how
 * many).  The super-packets are built here byte by byte, independently of
 * the library's header code, with the pseudo-header seed the kernel needs
 * in the L4 checksum field; the encoder's prepared headers must equal them.
 * Cases both must refuse (UDP over 128 segments) check the refusal.
 *
 * Frames are steered away from the peer's stack (a destination MAC that is
 * not b's, addresses nobody owns), so nothing answers them; each case has
 * its own source port, so a frame that arrives late is still charged to the
 * right case, and unrelated traffic (IPv6 ND) is filtered out.  An 802.1Q
 * tag, which the receive path moves into metadata, is put back from
 * PACKET_AUXDATA before comparing.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <pcap/pcap.h>

#include <gso/offload.h>
#include <gso/tmpl.h>

#include "conf_cases.h"
#include "gso_test.h"
#include "test_progs.h"

/* Big enough for MSS 8960 + IPv4/TCP headers with 40 bytes of options each. */
#define VETH_MTU 9216
#define DEFAULT_RANDOM_CASES 2000u
/* Waiting longer than this for a frame means the kernel did not send it. */
#define FRAME_WAIT_MS 300
#define RXBUF_LEN CONF_FRAME_MAX

/* ---- the kernel side ---- */

struct oracle {
	struct nsbed tb;
	int tx, rx;
	uint8_t *rxbuf;
	uint8_t *rxframe; /* the last frame received, its 802.1Q tag re-inserted */
	int capture_side;
};

static int ns_socket(const struct nsbed *tb, int side, int proto)
{
	int s, err = nsbed_enter(tb, side);

	if (err)
		return err;
	s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, proto);
	return s < 0 ? -errno : s;
}

/*
 * capture_side 1: the peer, what arrived over the veth.  0: the sending
 * side's own outgoing frames (PACKET_OUTGOING), which the kernel hands to
 * packet taps after segmentation, one by one; needed when a super-packet
 * makes more segments than the peer's backlog (netdev_max_backlog, 1000)
 * takes in one burst.
 */
static void oracle_setup(struct oracle *o, int capture_side)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int one = 1, rcvbuf = 64 << 20, err;

	memset(o, 0, sizeof(*o));
	o->tx = o->rx = -1;
	err = gso_testbed_create(&o->tb);
	cr_assert_eq(err, 0, "test-bed: %s", strerror(-err));
	for (int i = 0; i < 2; i++)
		cr_assert_eq(nsbed_sh(&o->tb, i, "ip link set %s mtu %d", o->tb.ifname[i],
				      VETH_MTU), 0, "setting MTU %d", VETH_MTU);
	/* Software GSO with checksums finished in software (reference section 8). */
	cr_assert_eq(nsbed_sh(&o->tb, 0, "ethtool -K %s tso off gso on tx off >/dev/null 2>&1",
			      o->tb.ifname[0]), 0, "ethtool -K tso off gso on tx off");
	cr_assert_eq(nsbed_sh(&o->tb, 0,
			      "ethtool -k %s | grep -Eq \"^(tx-udp-segmentation|tcp-segmentation-offload|"
			      "tx-checksumming): on\" && exit 1; exit 0",
			      o->tb.ifname[0]), 0,
		     "side a still offloads TSO/USO/checksums after ethtool -K");
	/* Merged frames on the receive side would hide the segmentation. */
	nsbed_sh(&o->tb, 1, "ethtool -K %s gro off >/dev/null 2>&1", o->tb.ifname[1]);

	o->tx = ns_socket(&o->tb, 0, 0);
	cr_assert_geq(o->tx, 0, "AF_PACKET tx socket: %s", strerror(-o->tx));
	cr_assert_eq(setsockopt(o->tx, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)), 0,
		     "PACKET_VNET_HDR: %s", strerror(errno));
	o->capture_side = capture_side;
	o->rx = ns_socket(&o->tb, capture_side, htons(ETH_P_ALL));
	cr_assert_geq(o->rx, 0, "AF_PACKET rx socket: %s", strerror(-o->rx));
	/* A whole 64 KiB super-packet's segments arrive in one burst. */
	if (setsockopt(o->rx, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(o->rx, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	ll.sll_ifindex = o->tb.ifindex[capture_side];
	cr_assert_eq(bind(o->rx, (struct sockaddr *)&ll, sizeof(ll)), 0, "bind rx: %s",
		     strerror(errno));
	/* The receive path moves an 802.1Q tag out of the frame into metadata. */
	cr_assert_eq(setsockopt(o->rx, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)), 0,
		     "PACKET_AUXDATA: %s", strerror(errno));
	o->rxbuf = malloc(RXBUF_LEN);
	cr_assert_not_null(o->rxbuf);
}

static void oracle_teardown(struct oracle *o)
{
	if (o->tx >= 0)
		close(o->tx);
	if (o->rx >= 0)
		close(o->rx);
	o->tx = o->rx = -1;
	free(o->rxbuf);
	o->rxbuf = NULL;
	nsbed_destroy(&o->tb);
}

/*
 * Send case `c`'s super-packet (built in `frame`) through the kernel with a
 * virtio_net_hdr from the library's encoder: gso_offload_describe() picks
 * GSO only when the payload exceeds the MSS (as the kernel does) and the
 * ECN bit for CWR, gso_offload_vnet() prepares the headers with the seed.
 * The prepared headers must equal the ones built here independently.
 * Returns 0, or -errno with *step naming what failed.
 */
static int oracle_send(struct oracle *o, const struct conf_case *c, const uint8_t *frame, size_t len,
		       uint8_t *scratch, const char **step, size_t *hdr_diff)
{
	struct sockaddr_ll ll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(c->vlan_tci ? ETH_P_8021Q
				      : CONF_IS_V4(c->proto) ? ETH_P_IP : ETH_P_IPV6),
		.sll_ifindex = o->tb.ifindex[0],
		.sll_halen = 6,
	};
	long n = conf_vnet_packet(c, frame, len, scratch, step, hdr_diff);

	if (n < 0)
		return (int)n;
	memcpy(ll.sll_addr, conf_dst_mac, 6);
	*step = "sendto";
	if (sendto(o->tx, scratch, (size_t)n, 0, (struct sockaddr *)&ll, sizeof(ll)) < 0)
		return -errno;
	return 0;
}

/*
 * Next frame of ours that arrived on side b, within `wait_ms`, at
 * o->rxframe.  Returns its length and, in *idx, the case it belongs to (from
 * the source port), 0 on timeout.  Everything else on the link is skipped.
 */
static ssize_t oracle_recv(struct oracle *o, int wait_ms, unsigned *idx)
{
	for (;;) {
		int pkttype;
		ssize_t n = conf_recv(o->rx, o->rxbuf, RXBUF_LEN, wait_ms, &o->rxframe, &pkttype);
		size_t l4;
		uint8_t l4proto;

		if (n <= 0)
			return 0;
		if ((pkttype == PACKET_OUTGOING) != (o->capture_side == 0) ||
		    !conf_frame_case(o->rxframe, (size_t)n, idx, &l4, &l4proto))
			continue;
		return n;
	}
}

/* ---- the gsoseg side ---- */

struct frames {
	unsigned n;
	uint8_t **data;
	uint32_t *len;
};

static void frames_free(struct frames *fr)
{
	for (unsigned i = 0; i < fr->n; i++)
		free(fr->data[i]);
	free(fr->data);
	free(fr->len);
	memset(fr, 0, sizeof(*fr));
}

static void frames_add(struct frames *fr, const uint8_t *p, uint32_t len)
{
	fr->data = realloc(fr->data, (fr->n + 1) * sizeof(*fr->data));
	fr->len = realloc(fr->len, (fr->n + 1) * sizeof(*fr->len));
	cr_assert(fr->data && fr->len);
	fr->data[fr->n] = malloc(len ? len : 1);
	cr_assert_not_null(fr->data[fr->n]);
	memcpy(fr->data[fr->n], p, len);
	fr->len[fr->n++] = len;
}

/* ---- the test ---- */

struct tally {
	unsigned cases[CONF_NPROTO], frames[CONF_NPROTO], bad[CONF_NPROTO];
	bool *case_bad; /* per case: counted in bad[] already */
	unsigned printed;
};

static void report(struct tally *t, const struct conf_case *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void report(struct tally *t, const struct conf_case *c, const char *fmt, ...)
{
	char d[512], m[512];
	va_list ap;

	if (!t->case_bad[c->idx]) {
		t->case_bad[c->idx] = true;
		t->bad[c->proto]++;
	}
	if (t->printed++ >= 25)
		return;
	conf_describe(c, d, sizeof(d));
	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	fprintf(stderr, "conformance: MISMATCH %s: %s\n", d, m);
}

static void compare_frame(struct tally *t, const struct conf_case *c, unsigned i,
			  const uint8_t *kern, size_t klen, const uint8_t *ours, size_t olen)
{
	size_t n = klen < olen ? klen : olen, off;

	for (off = 0; off < n && kern[off] == ours[off]; off++)
		;
	if (off == n && klen == olen)
		return;
	if (off == n)
		report(t, c, "frame %u: length kernel %zu, gsoseg %zu (equal up to there)", i, klen,
		       olen);
	else
		report(t, c, "frame %u (length kernel %zu, gsoseg %zu): first difference at byte "
		       "%zu: kernel 0x%02x, gsoseg 0x%02x", i, klen, olen, off, kern[off], ours[off]);
}

/* Static so that the .fini hook removes the test-bed even when an assert ends the test. */
static struct oracle oracle = { .tx = -1, .rx = -1 };
static char tmpdir[64];

struct run {
	struct conf_set set;
	struct conf_case *cs; /* set.c and set.n once the cases are made */
	unsigned n;
	bool *done;
	struct tally t;
	unsigned frames, stray;
	uint8_t *frame, *scratch;
	char *gsoseg_err; /* stderr of the current gsoseg run */
};

static void run_init(struct run *r)
{
	memset(r, 0, sizeof(*r));
	r->done = calloc(CONF_MAX_CASES, sizeof(*r->done));
	r->t.case_bad = calloc(CONF_MAX_CASES, sizeof(*r->t.case_bad));
	r->frame = malloc(RXBUF_LEN);
	r->scratch = malloc(RXBUF_LEN);
	cr_assert(r->done && r->t.case_bad && r->frame && r->scratch);
}

static void run_cases_made(struct run *r, int err)
{
	cr_assert_eq(err, 0, "making the cases: %s (at most %u)", strerror(-err), CONF_MAX_CASES);
	r->cs = r->set.c;
	r->n = r->set.n;
}

static void run_free(struct run *r)
{
	conf_set_free(&r->set);
	free(r->done);
	free(r->t.case_bad);
	free(r->frame);
	free(r->scratch);
	free(r->gsoseg_err);
}

/* gsoseg the cases of one MSS (one run, timestamps = case numbers) into ours[]. */
static void gsoseg_group(struct run *r, struct oracle *o, unsigned first, struct frames *ours)
{
	uint32_t mss = r->cs[first].mss;
	char in[128], out[128], errf[128], mss_s[16], ebuf[PCAP_ERRBUF_SIZE];
	pcap_t *dead, *rd;
	pcap_dumper_t *d;
	int st;

	snprintf(in, sizeof(in), "%s/in-%" PRIu32 ".pcap", tmpdir, mss);
	snprintf(out, sizeof(out), "%s/out-%" PRIu32 ".pcap", tmpdir, mss);
	snprintf(errf, sizeof(errf), "%s/err-%" PRIu32 ".txt", tmpdir, mss);
	dead = pcap_open_dead(DLT_EN10MB, 262144);
	d = pcap_dump_open(dead, in);
	cr_assert_not_null(d, "%s: %s", in, pcap_geterr(dead));
	for (unsigned i = first, rec = 0; i < r->n; i++) {
		struct pcap_pkthdr h = { 0 };
		size_t l4;

		if (r->cs[i].mss != mss)
			continue;
		r->cs[i].rec = ++rec;
		h.caplen = h.len = (bpf_u_int32)conf_build_frame(&r->cs[i], o->tb.mac[0], r->frame, &l4);
		h.ts.tv_sec = r->cs[i].idx;
		pcap_dump((u_char *)d, &h, r->frame);
	}
	pcap_dump_close(d);
	pcap_close(dead);

	snprintf(mss_s, sizeof(mss_s), "%" PRIu32, mss);
	st = test_prog_run("tools/gsoseg", (const char *const[]){ "--quiet", "--mss", mss_s, in, out, NULL }, errf);
	free(r->gsoseg_err);
	r->gsoseg_err = test_read_file(errf);
	cr_assert_not_null(r->gsoseg_err);
	cr_assert(st == 0 || st == 1, "gsoseg failed to run (status %d): %s", st, r->gsoseg_err);

	rd = pcap_open_offline(out, ebuf);
	cr_assert_not_null(rd, "%s: %s", out, ebuf);
	for (;;) {
		struct pcap_pkthdr *h;
		const u_char *p;

		if (pcap_next_ex(rd, &h, &p) != 1)
			break;
		cr_assert_lt((unsigned long)h->ts.tv_sec, r->n, "gsoseg changed a timestamp");
		frames_add(&ours[h->ts.tv_sec], p, h->caplen);
	}
	pcap_close(rd);
	unlink(in);
	unlink(out);
	unlink(errf);
}

/* Send one case through the kernel and compare what it puts out with ours. */
static void kernel_case(struct run *r, struct oracle *o, const struct conf_case *c,
			const struct frames *ours)
{
	const char *step;
	size_t l4, hdr_diff, flen = conf_build_frame(c, o->tb.mac[0], r->frame, &l4);
	unsigned got = 0, who;
	ssize_t len;
	int err;

	err = oracle_send(o, c, r->frame, flen, r->scratch, &step, &hdr_diff);
	if (c->refused) {
		if (!err || ours->n)
			report(&r->t, c, "expected both to refuse it: kernel %s, gsoseg wrote %u frames",
			       err ? "refused" : "accepted", ours->n);
		return;
	}
	if (!ours->n) {
		char tag[32];
		const char *line;

		snprintf(tag, sizeof(tag), "record %u:", c->rec);
		line = strstr(r->gsoseg_err, tag);
		report(&r->t, c, "gsoseg wrote no frame: %.*s", line ? (int)strcspn(line, "\n") : 0,
		       line ? line : "");
	}
	if (hdr_diff != SIZE_MAX)
		report(&r->t, c, "headers from gso_offload_vnet differ from the reference "
		       "super-packet at byte %zu", hdr_diff);
	if (err) {
		report(&r->t, c, "sending through the kernel failed: %s: %s", step, strerror(-err));
		return;
	}
	while (got < ours->n && (len = oracle_recv(o, FRAME_WAIT_MS, &who)) > 0) {
		if (who != c->idx) {
			r->stray++;
			if (who < r->n)
				report(&r->t, &r->cs[who], "an extra frame (%zd bytes) arrived while "
				       "case %u was running", len, c->idx);
			continue;
		}
		compare_frame(&r->t, c, got, o->rxframe, (size_t)len, ours->data[got], ours->len[got]);
		got++;
	}
	r->frames += got;
	r->t.frames[c->proto] += got;
	if (got < ours->n)
		report(&r->t, c, "kernel sent %u frames, gsoseg wrote %u", got, ours->n);
}

/* Run every case (grouped by MSS), then check that nothing else arrived. */
static void run_cases(struct run *r, struct oracle *o, uint64_t seed)
{
	unsigned bad = 0;

	for (unsigned first = 0; first < r->n; first++) {
		struct frames *ours;

		if (r->done[first])
			continue;
		ours = calloc(r->n, sizeof(*ours));
		cr_assert_not_null(ours);
		gsoseg_group(r, o, first, ours);
		for (unsigned i = first; i < r->n; i++) {
			if (r->cs[i].mss != r->cs[first].mss)
				continue;
			r->done[i] = true;
			r->t.cases[r->cs[i].proto]++;
			kernel_case(r, o, &r->cs[i], &ours[i]);
		}
		for (unsigned i = 0; i < r->n; i++)
			frames_free(&ours[i]);
		free(ours);
	}
	for (;;) {
		unsigned who;
		ssize_t len = oracle_recv(o, 50, &who);

		if (len <= 0)
			break;
		r->stray++;
		if (who < r->n)
			report(&r->t, &r->cs[who], "an extra frame (%zd bytes) after the last case", len);
	}
	for (int p = 0; p < CONF_NPROTO; p++) {
		fprintf(stderr, "conformance: %s: %u cases, %u frames compared, %u mismatching cases\n",
			conf_proto_name[p], r->t.cases[p], r->t.frames[p], r->t.bad[p]);
		bad += r->t.bad[p];
	}
	fprintf(stderr, "conformance: seed %" PRIu64 ", %u cases, %u frames, %u mismatches, "
		"%u stray frames\n", seed, r->n, r->frames, bad, r->stray);
	for (int p = 0; p < CONF_NPROTO; p++)
		cr_expect_gt(r->t.frames[p], 0, "no %s frame was compared", conf_proto_name[p]);
	cr_assert_eq(bad, 0, "%u cases differ from the kernel (seed %" PRIu64 "); details above",
		     bad, seed);
}

static void start(int capture_side)
{
	gso_test_require_root();
	cr_assert_eq(access(gso_test_build_path("tools/gsoseg"), X_OK), 0,
		     "%s not built (make tools)", gso_test_build_path("tools/gsoseg"));
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gso-conformance-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
	oracle_setup(&oracle, capture_side);
}

static void finish(void)
{
	oracle_teardown(&oracle);
	if (tmpdir[0])
		rmdir(tmpdir);
	tmpdir[0] = 0;
}

/* MSS 536..8960: boundary table + random cases, captured on the peer. */
Test(conformance, kernel_gso_oracle, .fini = finish, .timeout = 300)
{
	uint64_t seed = gso_test_seed("GSO_CONFORMANCE_SEED"), rng = seed;
	unsigned n_random = (unsigned)gso_test_env_u64("GSO_CONFORMANCE_CASES", DEFAULT_RANDOM_CASES), n_table;
	struct run r;

	cr_assert_leq(n_random, CONF_MAX_CASES - 400, "GSO_CONFORMANCE_CASES at most %u",
		      CONF_MAX_CASES - 400);
	run_init(&r);
	run_cases_made(&r, conf_table_cases(&r.set, &rng));
	n_table = r.set.n;
	run_cases_made(&r, conf_random_cases(&r.set, n_random, &rng));
	fprintf(stderr, "conformance: seed %" PRIu64 " (GSO_CONFORMANCE_SEED), %u table + %u random "
		"cases (GSO_CONFORMANCE_CASES)\n", seed, n_table, n_random);
	start(1);
	run_cases(&r, &oracle, seed);
	run_free(&r);
}

/*
 * MSS 1..535: up to a few thousand segments per super-packet, more than the
 * peer's backlog takes in one burst, so captured on the sending side.  UDP
 * at GSO_UDP_MAX_SEGS + 1 segments must be refused by both.
 */
Test(conformance, small_mss_sending_side, .fini = finish, .timeout = 300)
{
	/* Same seed as the other test, a different stream. */
	uint64_t seed = gso_test_seed("GSO_CONFORMANCE_SEED"), rng = seed ^ 0x5a11u;
	unsigned n_random = (unsigned)gso_test_env_u64("GSO_CONFORMANCE_CASES", DEFAULT_RANDOM_CASES) / 20;
	struct run r;

	run_init(&r);
	run_cases_made(&r, conf_small_cases(&r.set, n_random, &rng));
	fprintf(stderr, "conformance: small MSS: seed %" PRIu64 " (GSO_CONFORMANCE_SEED), %u cases "
		"(GSO_CONFORMANCE_CASES / 20 random)\n", seed, r.n);
	start(0);
	run_cases(&r, &oracle, seed);
	run_free(&r);
}
