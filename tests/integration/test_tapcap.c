/*
 * tapcap + streamcheck on a real kernel TCP connection: bench/kernel_sender
 * (side a) to bench/receiver (side b) across the namespace test-bed's veth,
 * captured by tapcap on side b's end of the veth while it runs, then the
 * capture checked by streamcheck: frames within the MTU, every checksum
 * right in both directions, the stream covered from SYN to FIN.
 *
 * Offloads off on both ends (no TSO/GSO, no checksum offload, no GRO)
 * make the veth carry what an e1000 would: MTU-sized frames with full
 * checksums.  With them on, the veth passes super-packets with partial
 * checksums whole, as a vnet tap does, and streamcheck's vnet modes
 * (--allow-gso, --partial-csum-ok) are what make that capture pass.
 */
#include "test_bench_util.h"
#include "test_progs.h"

#include <pcap/pcap.h>

static struct nsbed tb;

static void fini(void)
{
	bt_fini();
	nsbed_destroy(&tb);
}

static const char *tprog(const char *name)
{
	static char p[2][4096];
	static int k;
	char *s = p[k++ & 1];
	char rel[64];

	snprintf(rel, sizeof(rel), "tests/%s", name);
	snprintf(s, 4096, "%s", gso_test_build_path(rel));
	cr_assert_eq(access(s, X_OK), 0, "%s not built (make test-progs)", s);
	return s;
}

/*
 * One transfer of `bytes` to `dst` with tapcap on side b; the capture is
 * left at bt_path("cap.pcap").  Returns the receiver's byte count.
 */
static double capture_transfer(const char *dst, const char *port, const char *bytes)
{
	const char *ready = bt_path("ready"), *cready = bt_path("cap.ready");
	const char *cargv[] = { tprog("tapcap"), "--netns", tb.ns[1], "-i", tb.ifname[1],
				"-w", bt_path("cap.pcap"), "--ready-file", cready, NULL };
	const char *rargv[] = { bt_prog("receiver"), "--netns", tb.ns[1], "--once", "--json",
				"--port", port, "--idle-timeout", "10", "--accept-timeout", "20",
				"--ready-file", ready, NULL };
	const char *sargv[] = { bt_prog("kernel_sender"), "--netns", tb.ns[0], "--dst", dst,
				"--port", port, "--bytes", bytes, "--json", NULL };
	struct bt_proc *cp, *rp, *sp;
	int cs, rs, ss;
	const char *rj, *cerr;

	cp = bt_spawn(cargv);
	bt_wait_file(cready, cp, 10);
	rp = bt_spawn(rargv);
	bt_wait_file(ready, rp, 10);
	sp = bt_spawn(sargv);
	ss = bt_wait(sp, 60);
	rs = bt_wait(rp, 20);
	if (rs || ss) {
		bt_dump(rp, "receiver");
		bt_dump(sp, "kernel_sender");
	}
	cr_assert_eq(ss, 0, "kernel_sender exit %d", ss);
	cr_assert_eq(rs, 0, "receiver exit %d", rs);
	rj = bt_read(rp->out);
	cr_assert_str_eq(bt_str(rj, "status"), "ok", "%s", rj);
	/* Both ends have closed; the last ACK is on the wire by now. */
	usleep(200 * 1000);
	cs = bt_stop(cp, 10);
	cerr = bt_read(cp->err);
	cr_assert_eq(cs, 0, "tapcap exit %d: %s", cs, cerr);
	cr_assert(strstr(cerr, "tapcap: frames=") && strstr(cerr, " kernel_drops=0 "), "%s", cerr);
	cr_assert_neq(access(cready, F_OK), 0, "tapcap left its ready file behind");
	return bt_num(rj, "bytes");
}

/* streamcheck on the capture with up to two options; its output in *text. */
static int streamcheck(const char *port, const char *o1, const char *o2, const char **text)
{
	const char *args[8] = { "--port", port };
	int n = 2, rc;

	if (o1)
		args[n++] = o1;
	if (o2)
		args[n++] = o2;
	args[n++] = bt_path("cap.pcap");
	rc = test_prog_run("tests/streamcheck", args, bt_path("check.txt"));
	cr_assert_geq(rc, 0, "streamcheck did not start: %s", strerror(-rc));
	*text = bt_read(bt_path("check.txt"));
	cr_log_info("streamcheck exit %d:\n%s", rc, *text); /* shown with --verbose */
	return rc;
}

static uint64_t sum_key(const char *text, const char *key)
{
	uint64_t v;

	cr_assert(test_summary_u64(text, key, &v), "no %s= in:\n%s", key, text);
	return v;
}

static void bed(bool offloads)
{
	int err;

	gso_test_require_root();
	err = gso_testbed_create(&tb);
	cr_assert_eq(err, 0, "test-bed: %s", strerror(-err));
	for (int side = 0; side < 2; side++)
		cr_assert_eq(nsbed_sh(&tb, side, "ethtool -K %s tso %s gso %s tx %s gro off "
				      ">/dev/null 2>&1", tb.ifname[side],
				      offloads ? "on" : "off", offloads ? "on" : "off",
				      offloads ? "on" : "off"), 0, "ethtool -K %s", tb.ifname[side]);
}

static void check_mtu_sized(const char *dst, const char *port, int ipv)
{
	const char *text;
	double rbytes = capture_transfer(dst, port, "16M");
	int rc = streamcheck(port, NULL, NULL, &text);

	cr_assert_eq(rc, 0, "streamcheck exit %d:\n%s", rc, text);
	cr_assert(strstr(text, "summary result=ok "), "%s", text);
	cr_assert_leq(sum_key(text, "max_frame"), 1514, "%s", text);
	cr_assert_eq(sum_key(text, "ipv"), (uint64_t)ipv);
	cr_assert_eq(sum_key(text, "syn"), 1);
	cr_assert_eq(sum_key(text, "fin"), 1);
	cr_assert_eq(sum_key(text, "gaps"), 0);
	cr_assert_eq(sum_key(text, "tcp_csum_partial"), 0, "%s", text);
	/* The stream carries the bench header before the receiver's counted bytes. */
	cr_assert_geq((double)sum_key(text, "covered_bytes"), rbytes, "%s", text);
	cr_assert_eq(sum_key(text, "covered_bytes"), sum_key(text, "stream_bytes"));
	cr_assert_gt(sum_key(text, "ack_frames"), 0);
}

Test(tapcap, kernel_stream_ipv4_offloads_off, .fini = fini, .timeout = 120)
{
	bed(false);
	check_mtu_sized("10.77.0.2", "7311", 4);
}

Test(tapcap, kernel_stream_ipv6_offloads_off, .fini = fini, .timeout = 120)
{
	bed(false);
	check_mtu_sized("fd77::2", "7312", 6);
}

/* As a vnet tap: super-packets and partial checksums cross whole. */
Test(tapcap, kernel_stream_offloads_on_needs_vnet_modes, .fini = fini, .timeout = 120)
{
	const char *text;
	int rc;

	bed(true);
	capture_transfer("10.77.0.2", "7313", "16M");
	rc = streamcheck("7313", "--allow-gso", "--partial-csum-ok", &text);
	cr_assert_eq(rc, 0, "streamcheck exit %d:\n%s", rc, text);
	cr_assert_eq(sum_key(text, "gaps"), 0);
	cr_assert_eq(sum_key(text, "tcp_csum_errors"), 0);
	cr_assert_eq(sum_key(text, "mtu_violations"), 0);
	/* The offloads took effect: what crossed was not all MTU-sized and finished. */
	cr_assert_gt(sum_key(text, "over_mtu") + sum_key(text, "tcp_csum_partial"), 0, "%s", text);
	/* Without the modes the same capture fails, and says why. */
	rc = streamcheck("7313", NULL, NULL, &text);
	cr_assert_eq(rc, 1, "streamcheck exit %d:\n%s", rc, text);
	cr_assert(strstr(text, "summary result=fail "), "%s", text);
}

/* IPv4 (no VLAN, no IP options), UDP, to port 9: the datagrams the tests send. */
static bool is_udp9(const struct pcap_pkthdr *h, const u_char *d)
{
	return h->caplen >= 38 && d[12] == 0x08 && d[13] == 0 && d[23] == 17 && d[36] == 0 &&
	       d[37] == 9;
}

/* Frames in the pcap at path, all of them or those that match says yes to. */
static int pcap_frames(const char *path, bool (*match)(const struct pcap_pkthdr *, const u_char *))
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	pcap_t *p = pcap_open_offline(path, errbuf);
	int n = 0;

	cr_assert_not_null(p, "%s: %s", path, errbuf);
	while (pcap_next_ex(p, &h, &d) == 1)
		n += !match || match(h, d);
	pcap_close(p);
	return n;
}

/* --count stops after that many frames, --idle on a quiet link; both exit 0 with the file whole. */
Test(tapcap, count_and_idle_stop_it, .fini = fini, .timeout = 60)
{
	const char *cready = bt_path("cap.ready");
	const char *cargv[] = { tprog("tapcap"), "--netns", tb.ns[1], "-i", tb.ifname[1],
				"-w", bt_path("count.pcap"), "--ready-file", cready, "--count", "3",
				NULL };
	const char *iargv[] = { tprog("tapcap"), "--netns", tb.ns[1], "-i", tb.ifname[1],
				"-w", bt_path("idle.pcap"), "--idle", "1", NULL };
	struct bt_proc *cp;
	double t0;
	int cs;

	bed(false);
	cp = bt_spawn(cargv);
	bt_wait_file(cready, cp, 10);
	/* Datagrams to a closed port: ARP, the datagrams, ICMP replies; more than three frames. */
	cr_assert_eq(nsbed_sh(&tb, 0, "for i in 1 2 3 4 5; do "
			      "bash -c \"echo x >/dev/udp/10.77.0.2/9\"; sleep 0.1; done"), 0);
	cs = bt_wait(cp, 10);
	cr_assert_eq(cs, 0, "tapcap --count exit %d: %s", cs, bt_read(cp->err));
	cr_assert(strstr(bt_read(cp->err), "tapcap: frames=3 "), "%s", bt_read(cp->err));
	cr_assert_eq(pcap_frames(bt_path("count.pcap"), NULL), 3);

	t0 = bt_now();
	cp = bt_spawn(iargv);
	cs = bt_wait(cp, 20);
	cr_assert_eq(cs, 0, "tapcap --idle exit %d: %s", cs, bt_read(cp->err));
	cr_assert_geq(bt_now() - t0, 1.0, "stopped before a second of quiet");
}

/* Bad command lines exit 2 with a message, before any capture is opened. */
Test(tapcap, usage_errors)
{
	const char *bad[][4] = { { "-i", "lo", NULL }, { "-w", "/dev/null", NULL },
				 { "-i", "lo", "--ring-mb", "2048" }, { "--no-such", NULL } };
	const char *help[] = { "--help", NULL };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *args[6] = { 0 };
		int rc;

		memcpy(args, bad[i], sizeof(bad[i]));
		rc = test_prog_run("tests/tapcap", args, bt_path("usage.txt"));
		cr_assert_eq(rc, 2, "case %zu: exit %d: %s", i, rc, bt_read(bt_path("usage.txt")));
		cr_assert(strstr(bt_read(bt_path("usage.txt")), "tapcap"), "case %zu", i);
	}
	cr_assert_eq(test_prog_run("tests/tapcap", help, bt_path("usage.txt")), 0);
	cr_assert(strstr(bt_read(bt_path("usage.txt")), "Exit status: 0"));
	bt_fini();
}

/*
 * SIGTERM right after the traffic: the frames sit in a ring block the
 * kernel has not handed over yet (up to tapcap's block timeout), and
 * tapcap drains it before closing the file.
 */
Test(tapcap, sigterm_keeps_the_last_frames, .fini = fini, .timeout = 60)
{
	const char *cready = bt_path("cap.ready");
	const char *cargv[] = { tprog("tapcap"), "--netns", tb.ns[1], "-i", tb.ifname[1],
				"-w", bt_path("term.pcap"), "--ready-file", cready, NULL };
	struct bt_proc *cp;
	int cs;

	bed(false);
	cp = bt_spawn(cargv);
	bt_wait_file(cready, cp, 10);
	cr_assert_eq(nsbed_sh(&tb, 0, "for i in 1 2 3 4 5; do "
			      "bash -c \"echo x >/dev/udp/10.77.0.2/9\"; done"), 0);
	cs = bt_stop(cp, 10);
	cr_assert_eq(cs, 0, "tapcap exit %d: %s", cs, bt_read(cp->err));
	cr_assert_eq(pcap_frames(bt_path("term.pcap"), is_udp9), 5, "%s", bt_read(cp->err));
}
