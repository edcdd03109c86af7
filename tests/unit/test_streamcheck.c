/*
 * streamcheck on hand-made captures (no root): a short TCP connection is
 * written frame by frame here -- handshake, five 1000-byte segments each
 * acknowledged, FIN both ways -- with one fault put in at a time, and the
 * program's exit code, FAIL message and summary keys are checked.  The
 * checksums of these frames come from a plain loop written here.
 */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pcap/pcap.h>

#include "gso_test.h"
#include "test_progs.h"
#include "ref_csum.h"

#define SEG 1000
#define NSEG 5
#define PORT_C 40000
#define PORT_S 5201

enum fault {
	F_NONE,
	F_TCP_CSUM,     /* data segment 2's TCP checksum off by one */
	F_TCP_CSUM_ACK, /* the ACK of segment 2 */
	F_IP_CSUM,      /* data segment 3's IPv4 header checksum */
	F_OVERSIZE,     /* segment 4 carries 2 * SEG bytes in one frame */
	F_GAP,          /* segment 3 never sent */
	F_RETRANS,      /* segment 1 sent twice */
	F_NO_FIN,       /* the client's FIN missing */
	F_PARTIAL,      /* segment 2's checksum field holds only the pseudo-header sum */
	F_NO_SYN,       /* the capture starts after the handshake */
	F_REORDER,      /* segment 3 arrives before segment 2 */
};

struct stream_opts {
	enum fault fault;
	bool v6;
	bool vlan;
	uint32_t isn_c, isn_s;
};

struct writer {
	pcap_t *dead;
	pcap_dumper_t *d;
	const struct stream_opts *o;
	uint32_t ts;
};

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gso-streamcheck-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void teardown(void)
{
	if (dir[0])
		nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	dir[0] = 0;
}

/* The n low bytes of v at p, most significant first. */
static void put_be(uint8_t *p, uint32_t v, int n)
{
	while (n--)
		*p++ = (uint8_t)(v >> (8 * n));
}

/* One frame from the client (from_c) or the server. */
static void frame(struct writer *w, bool from_c, uint8_t flags, uint32_t seq, uint32_t ack,
		  uint32_t payload, bool bad_tcp, bool bad_ip, bool partial)
{
	static uint8_t f[4096];
	const struct stream_opts *o = w->o;
	uint8_t ca[16] = { 0 }, sa[16] = { 0 };
	uint32_t off = 12, alen = o->v6 ? 16 : 4, l4 = 20 + payload, ph;
	uint8_t *ip, *th;
	struct pcap_pkthdr h = { 0 };

	if (o->v6) {
		ca[0] = sa[0] = 0xfd;
		ca[15] = 1;
		sa[15] = 2;
	} else {
		ca[0] = sa[0] = 10;
		ca[3] = 1;
		sa[3] = 2;
	}
	memset(f, 0, sizeof(f));
	memcpy(f, from_c ? "\x02\x00\x00\x00\x00\x02" "\x02\x00\x00\x00\x00\x01" :
			   "\x02\x00\x00\x00\x00\x01" "\x02\x00\x00\x00\x00\x02", 12);
	if (o->vlan) {
		put_be(f + off, 0x8100, 2);
		put_be(f + off + 2, 7, 2);
		off += 4;
	}
	put_be(f + off, o->v6 ? 0x86dd : 0x0800, 2);
	off += 2;
	ip = f + off;
	if (o->v6) {
		ip[0] = 0x60;
		put_be(ip + 4, l4, 2);
		ip[6] = 6;
		ip[7] = 64;
		memcpy(ip + 8, from_c ? ca : sa, 16);
		memcpy(ip + 24, from_c ? sa : ca, 16);
		th = ip + 40;
	} else {
		ip[0] = 0x45;
		put_be(ip + 2, 20 + l4, 2);
		put_be(ip + 6, 0x4000, 2);
		ip[8] = 64;
		ip[9] = 6;
		memcpy(ip + 12, from_c ? ca : sa, 4);
		memcpy(ip + 16, from_c ? sa : ca, 4);
		put_be(ip + 10, (uint16_t)~ref_fold(ref_sum(ip, 20, 0)) ^ (bad_ip ? 1 : 0), 2);
		th = ip + 20;
	}
	put_be(th, from_c ? PORT_C : PORT_S, 2);
	put_be(th + 2, from_c ? PORT_S : PORT_C, 2);
	put_be(th + 4, seq, 4);
	put_be(th + 8, ack, 4);
	th[12] = 5 << 4;
	th[13] = flags;
	put_be(th + 14, 65535, 2);
	for (uint32_t i = 0; i < payload; i++)
		th[20 + i] = (uint8_t)(seq + i);
	/* Pseudo-header: both addresses, protocol, TCP length. */
	ph = ref_fold(ref_sum(from_c ? ca : sa, alen, 0));
	ph = ref_fold(ref_sum(from_c ? sa : ca, alen, ph + 6 + l4));
	if (partial)
		put_be(th + 16, ph, 2);
	else
		put_be(th + 16, (uint16_t)~ref_fold(ref_sum(th, l4, ph)) ^ (bad_tcp ? 1 : 0), 2);
	h.caplen = h.len = (uint32_t)(th + l4 - f);
	if (h.len < 60)
		h.caplen = h.len = 60; /* Ethernet padding, as on a wire */
	h.ts.tv_sec = 1;
	h.ts.tv_usec = (suseconds_t)w->ts++;
	pcap_dump((u_char *)w->d, &h, f);
}

static const char *write_stream(const struct stream_opts *o)
{
	static char path[128];
	struct writer w = { .o = o };
	uint32_t c = o->isn_c, s = o->isn_s;
	enum fault f = o->fault;

	snprintf(path, sizeof(path), "%s/stream.pcap", dir);
	w.dead = pcap_open_dead(DLT_EN10MB, 65535);
	cr_assert_not_null(w.dead);
	w.d = pcap_dump_open(w.dead, path);
	cr_assert_not_null(w.d, "%s", pcap_geterr(w.dead));
	if (f != F_NO_SYN) {
		frame(&w, true, 0x02, c, 0, 0, false, false, false);          /* SYN */
		frame(&w, false, 0x12, s, c + 1, 0, false, false, false);     /* SYN-ACK */
		frame(&w, true, 0x10, c + 1, s + 1, 0, false, false, false);  /* ACK */
	}
	for (uint32_t i = 0; i < NSEG; i++) {
		uint32_t seq = c + 1 + i * SEG, len = SEG;

		if (f == F_REORDER && (i == 2 || i == 3))
			seq = c + 1 + (5 - i) * SEG;

		if (f == F_GAP && i == 3)
			continue;
		if (f == F_OVERSIZE && i == 3)
			continue; /* segment 4 carries both */
		if (f == F_OVERSIZE && i == 4) {
			seq -= SEG;
			len = 2 * SEG;
		}
		frame(&w, true, 0x18, seq, s + 1, len, f == F_TCP_CSUM && i == 2,
		      f == F_IP_CSUM && i == 3, f == F_PARTIAL && i == 2);
		if (f == F_RETRANS && i == 1)
			frame(&w, true, 0x18, seq, s + 1, len, false, false, false);
		frame(&w, false, 0x10, s + 1, f == F_GAP && i >= 3 ? c + 1 + 3 * SEG : seq + len, 0,
		      f == F_TCP_CSUM_ACK && i == 2, false, false);
	}
	if (f != F_NO_FIN)
		frame(&w, true, 0x11, c + 1 + NSEG * SEG, s + 1, 0, false, false, false);
	frame(&w, false, 0x11, s + 1, c + 2 + NSEG * SEG, 0, false, false, false);
	frame(&w, true, 0x10, c + 2 + NSEG * SEG, s + 2, 0, false, false, false);
	pcap_dump_close(w.d);
	pcap_close(w.dead);
	return path;
}

static char out[8192];

/* Run streamcheck on path with up to 3 extra options; the output lands in out. */
static int check(const char *path, const char *a1, const char *a2, const char *a3)
{
	char opath[128];
	const char *args[6] = { 0 };
	size_t n = 0;
	char *text;
	int rc;

	if (a1)
		args[n++] = a1;
	if (a2)
		args[n++] = a2;
	if (a3)
		args[n++] = a3;
	args[n++] = path;
	snprintf(opath, sizeof(opath), "%s/out.txt", dir);
	rc = test_prog_run("tests/streamcheck", args, opath);
	cr_assert_geq(rc, 0, "streamcheck did not start: %s", strerror(-rc));
	text = test_read_file(opath);
	cr_assert_not_null(text);
	snprintf(out, sizeof(out), "%s", text);
	free(text);
	return rc;
}

static uint64_t key(const char *k)
{
	uint64_t v;

	cr_assert(test_summary_u64(out, k, &v), "no %s= in the summary:\n%s", k, out);
	return v;
}

TestSuite(streamcheck, .init = setup, .fini = teardown);

Test(streamcheck, clean_ipv4_passes)
{
	struct stream_opts o = { .isn_c = 1000, .isn_s = 77 };
	int rc = check(write_stream(&o), "--port", "5201", NULL);

	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_not_null(strstr(out, "summary result=ok "), "%s", out);
	cr_assert_eq(key("stream_bytes"), NSEG * SEG);
	cr_assert_eq(key("covered_bytes"), NSEG * SEG);
	cr_assert_eq(key("syn"), 1);
	cr_assert_eq(key("fin"), 1);
	cr_assert_eq(key("fin_acked"), 1);
	cr_assert_eq(key("gaps"), 0);
	cr_assert_eq(key("retrans_bytes"), 0);
	cr_assert_eq(key("isn"), 1000);
	cr_assert_eq(key("ipv"), 4);
	cr_assert_eq(key("max_frame"), 14 + 20 + 20 + SEG);
	/* 3 handshake + 2 per segment + 3 closing */
	cr_assert_eq(key("conn_frames"), 3 + 2 * NSEG + 3);
	cr_assert_eq(key("data_frames"), 2 + NSEG + 2);
}

/* The sequence space wraps inside the stream, IPv6 behind a VLAN tag. */
Test(streamcheck, ipv6_vlan_wrapping_sequence_passes)
{
	struct stream_opts o = { .v6 = true, .vlan = true, .isn_c = 0xffffffffu - 2500,
				 .isn_s = 0xfffffff0u };
	int rc = check(write_stream(&o), NULL, NULL, NULL);

	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(key("ipv"), 6);
	cr_assert_eq(key("covered_bytes"), NSEG * SEG);
	cr_assert_eq(key("stream_bytes"), NSEG * SEG);
	cr_assert_eq(key("fin_acked"), 1);
	cr_assert_eq(key("max_frame"), 14 + 4 + 40 + 20 + SEG);
}

Test(streamcheck, corrupt_tcp_checksum_fails)
{
	struct stream_opts o = { .fault = F_TCP_CSUM, .isn_c = 1000, .isn_s = 77 };

	cr_assert_eq(check(write_stream(&o), NULL, NULL, NULL), 1, "%s", out);
	/* SYN, SYN-ACK, ACK, seg 0, ack, seg 1, ack, seg 2 = frame 8 */
	cr_assert_not_null(strstr(out, "FAIL: 1 TCP checksum errors (--partial-csum-ok accepts "
				       "pseudo-header-only ones) (frame 8)"), "%s", out);
	cr_assert_eq(key("tcp_csum_errors"), 1);
	cr_assert_eq(key("ipv4_csum_errors"), 0);
	cr_assert_eq(key("gaps"), 0);
	cr_assert_not_null(strstr(out, "summary result=fail "));
}

Test(streamcheck, corrupt_tcp_checksum_in_ack_direction_fails)
{
	struct stream_opts o = { .fault = F_TCP_CSUM_ACK, .v6 = true, .isn_c = 5, .isn_s = 9 };

	cr_assert_eq(check(write_stream(&o), NULL, NULL, NULL), 1, "%s", out);
	cr_assert_not_null(strstr(out, "TCP checksum errors (--partial-csum-ok accepts "
				       "pseudo-header-only ones) (frame 9)"), "%s", out);
	cr_assert_eq(key("tcp_csum_errors"), 1);
}

Test(streamcheck, corrupt_ipv4_checksum_fails)
{
	struct stream_opts o = { .fault = F_IP_CSUM, .isn_c = 1000, .isn_s = 77 };

	cr_assert_eq(check(write_stream(&o), NULL, NULL, NULL), 1, "%s", out);
	cr_assert_not_null(strstr(out, "FAIL: 1 IPv4 header checksum errors (frame 10)"), "%s", out);
	cr_assert_eq(key("ipv4_csum_errors"), 1);
	cr_assert_eq(key("tcp_csum_errors"), 0);
}

Test(streamcheck, oversize_frame_fails_unless_allowed)
{
	struct stream_opts o = { .fault = F_OVERSIZE, .isn_c = 1000, .isn_s = 77 };
	const char *path = write_stream(&o);

	cr_assert_eq(check(path, NULL, NULL, NULL), 1, "%s", out);
	cr_assert_not_null(strstr(out, "FAIL: 1 frames above the MTU (frame 10)"), "%s", out);
	cr_assert_eq(key("mtu_violations"), 1);
	cr_assert_eq(key("max_frame"), 14 + 20 + 20 + 2 * SEG);
	cr_assert_eq(key("gaps"), 0);
	/* A vnet tap: super-packets are expected, reported, not an error. */
	cr_assert_eq(check(path, "--allow-gso", NULL, NULL), 0, "%s", out);
	cr_assert_eq(key("over_mtu"), 1);
	cr_assert_eq(key("mtu_violations"), 0);
	cr_assert_eq(check(path, "--mtu", "2100", NULL), 0, "%s", out);
	cr_assert_eq(check(path, "--mtu", "0", NULL), 0, "%s", out);
	cr_assert_eq(key("over_mtu"), 0);
}

Test(streamcheck, gap_fails_with_its_range)
{
	struct stream_opts o = { .fault = F_GAP, .isn_c = 1000, .isn_s = 77 };

	cr_assert_eq(check(write_stream(&o), NULL, NULL, NULL), 1, "%s", out);
	cr_assert_not_null(strstr(out, "gap: bytes 3000..4000 (1000 bytes; seq 4001..5001)"), "%s",
			   out);
	cr_assert_not_null(strstr(out, "FAIL: 1 gaps, 1000 bytes never seen"), "%s", out);
	cr_assert_eq(key("gaps"), 1);
	cr_assert_eq(key("gap_bytes"), SEG);
	cr_assert_eq(key("covered_bytes"), (NSEG - 1) * SEG);
}

Test(streamcheck, retransmission_is_counted_not_an_error)
{
	struct stream_opts o = { .fault = F_RETRANS, .isn_c = 1000, .isn_s = 77 };

	cr_assert_eq(check(write_stream(&o), NULL, NULL, NULL), 0, "%s", out);
	cr_assert_eq(key("retrans_bytes"), SEG);
	cr_assert_eq(key("retrans_frames"), 1);
	cr_assert_eq(key("dup_frames"), 1);
	cr_assert_eq(key("covered_bytes"), NSEG * SEG);
}

Test(streamcheck, missing_fin_fails)
{
	struct stream_opts o = { .fault = F_NO_FIN, .isn_c = 1000, .isn_s = 77 };

	cr_assert_eq(check(write_stream(&o), NULL, NULL, NULL), 1, "%s", out);
	cr_assert_not_null(strstr(out, "FAIL: no FIN from 10.0.0.1:40000"), "%s", out);
	cr_assert_eq(key("fin"), 0);
	cr_assert_eq(key("syn"), 1);
	cr_assert_eq(key("gaps"), 0);
}

Test(streamcheck, partial_checksum_is_a_mode)
{
	struct stream_opts o = { .fault = F_PARTIAL, .isn_c = 1000, .isn_s = 77 };
	const char *path = write_stream(&o);

	cr_assert_eq(check(path, NULL, NULL, NULL), 1, "%s", out);
	cr_assert_eq(key("tcp_csum_errors"), 1);
	cr_assert_eq(key("tcp_csum_partial"), 1);
	cr_assert_eq(check(path, "--partial-csum-ok", NULL, NULL), 0, "%s", out);
	cr_assert_eq(key("tcp_csum_errors"), 0);
	cr_assert_eq(key("tcp_csum_partial"), 1);
}

Test(streamcheck, usage_and_missing_connection_exit_codes)
{
	struct stream_opts o = { .isn_c = 1000, .isn_s = 77 };
	const char *path = write_stream(&o);

	cr_assert_eq(check(path, "--port", "9", NULL), 3, "%s", out);
	cr_assert_not_null(strstr(out, "FAIL: no TCP connection with port 9"), "%s", out);
	cr_assert_eq(check(path, "--mtu", "x", NULL), 2, "%s", out);
	cr_assert_eq(check("/nonexistent/x.pcap", NULL, NULL, NULL), 2, "%s", out);
	cr_assert_eq(check(path, "--help", NULL, NULL), 0, "%s", out);
	cr_assert_not_null(strstr(out, "Exit status:"));
}

Test(streamcheck, missing_syn_fails_but_coverage_is_known)
{
	struct stream_opts o = { .fault = F_NO_SYN, .isn_c = 0xfffffe00u, .isn_s = 77 };

	cr_assert_eq(check(write_stream(&o), NULL, NULL, NULL), 1, "%s", out);
	cr_assert_not_null(strstr(out, "FAIL: no SYN from 10.0.0.1:40000"), "%s", out);
	cr_assert_eq(key("syn"), 0);
	cr_assert_eq(key("fin"), 1);
	cr_assert_eq(key("gaps"), 0);
	cr_assert_eq(key("covered_bytes"), NSEG * SEG);
}

/* A segment filling a hole is neither a gap nor a retransmission. */
Test(streamcheck, reordered_segments_pass)
{
	struct stream_opts o = { .fault = F_REORDER, .v6 = true, .isn_c = 1000, .isn_s = 77 };

	cr_assert_eq(check(write_stream(&o), NULL, NULL, NULL), 0, "%s", out);
	cr_assert_eq(key("covered_bytes"), NSEG * SEG);
	cr_assert_eq(key("retrans_bytes"), 0);
	cr_assert_eq(key("gaps"), 0);
}
