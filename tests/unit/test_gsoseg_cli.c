/*
 * gsoseg and gsogen end to end, as a user runs them (no root needed): the
 * built programs are run on pcaps written here, and their output files,
 * messages and exit codes are checked.  Output frames are checked with a
 * plain checksum loop written here, not the library's.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pcap/pcap.h>

#include "gso_test.h"
#include "ref_csum.h"

extern char **environ;

static char dir[64];
static char small_fs[96]; /* a tmpfs mounted by a test, unmounted in teardown */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gso-gsoseg-cli-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	if (small_fs[0])
		umount2(small_fs, MNT_DETACH);
	small_fs[0] = 0;
	if (dir[0])
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	dir[0] = 0;
}

static const char *tmp(const char *name)
{
	static char paths[32][128];
	static unsigned next;
	char *p = paths[next++ % 32];

	snprintf(p, sizeof(paths[0]), "%s/%s", dir, name);
	return p;
}

/*
 * Where a tool's stdin and stdout go: `in` NULL leaves stdin alone; `out`
 * NULL is stdout.txt in the test directory, TOOL_OUT_CLOSED runs the tool
 * with descriptor 1 closed; `out_flags` 0 means O_WRONLY|O_CREAT|O_TRUNC.
 */
struct tool_io {
	const char *in, *out;
	int out_flags;
};
#define TOOL_OUT_CLOSED ((const char *)1)

/* Run build/tools/<tool> with args (NULL-terminated); stderr to stderr.txt. */
static int run_io(const char *tool, const char *const *args, const struct tool_io *io)
{
	static const struct tool_io plain;
	char path[256];
	const char *argv[16] = { tool };
	posix_spawn_file_actions_t fa;
	unsigned n = 1;
	pid_t pid;
	int st, err;

	if (!io)
		io = &plain;
	snprintf(path, sizeof(path), "tools/%s", tool);
	snprintf(path, sizeof(path), "%s", gso_test_build_path(path));
	cr_assert_eq(access(path, X_OK), 0, "%s is not built (make tools)", path);
	while (args[n - 1] && n < 15) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	if (io->in)
		posix_spawn_file_actions_addopen(&fa, 0, io->in, O_RDONLY, 0);
	if (io->out == TOOL_OUT_CLOSED)
		posix_spawn_file_actions_addclose(&fa, 1);
	else
		posix_spawn_file_actions_addopen(&fa, 1, io->out ? io->out : tmp("stdout.txt"),
						 io->out_flags ? io->out_flags : O_WRONLY | O_CREAT | O_TRUNC,
						 0644);
	posix_spawn_file_actions_addopen(&fa, 2, tmp("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	err = posix_spawn(&pid, path, &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	cr_assert_eq(err, 0, "spawn %s: %s", path, strerror(err));
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "%s died with signal %d", tool, WTERMSIG(st));
	return WEXITSTATUS(st);
}

static int run(const char *tool, const char *const *args)
{
	return run_io(tool, args, NULL);
}

static const char *slurp(const char *name)
{
	static char buf[16384];
	FILE *f = fopen(tmp(name), "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	return buf;
}

#define RUN(tool, ...) run(tool, (const char *const[]){ __VA_ARGS__, NULL })
#define RUN_IO(io, tool, ...) run_io(tool, (const char *const[]){ __VA_ARGS__, NULL }, io)

/* ---- pcaps ---- */

struct rec {
	uint8_t *data;
	uint32_t caplen, len;
	struct timeval ts;
};

struct recs {
	struct rec r[4096];
	unsigned n;
	int precision;
};

static void read_pcap(const char *path, struct recs *out)
{
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, eb);
	struct pcap_pkthdr *h;
	const u_char *d;

	cr_assert_not_null(p, "%s: %s", path, eb);
	cr_assert_eq(pcap_datalink(p), DLT_EN10MB);
	out->n = 0;
	while (pcap_next_ex(p, &h, &d) == 1) {
		cr_assert_lt(out->n, 4096u);
		struct rec *r = &out->r[out->n++];

		r->data = malloc(h->caplen + 1);
		cr_assert_not_null(r->data);
		memcpy(r->data, d, h->caplen);
		r->caplen = h->caplen;
		r->len = h->len;
		r->ts = h->ts;
	}
	pcap_close(p);
}

static void free_recs(struct recs *rs)
{
	for (unsigned i = 0; i < rs->n; i++)
		free(rs->r[i].data);
	rs->n = 0;
}

static void write_pcap(const char *path, const struct recs *rs, int precision)
{
	pcap_t *dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 262144, (u_int)precision);
	pcap_dumper_t *d = pcap_dump_open(dead, path);

	cr_assert_not_null(d, "%s: %s", path, pcap_geterr(dead));
	for (unsigned i = 0; i < rs->n; i++) {
		struct pcap_pkthdr h = { .ts = rs->r[i].ts, .caplen = rs->r[i].caplen,
					 .len = rs->r[i].len };

		pcap_dump((u_char *)d, &h, rs->r[i].data);
	}
	pcap_dump_close(d);
	pcap_close(dead);
}

/* ---- hand-built super-packets and an independent frame checker ---- */

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * A super-packet: Ethernet + IPv4 (v6 = 0) or IPv6 + TCP (tcp = 1) or UDP,
 * `pay` payload bytes, lengths covering the whole.  Returns the frame length.
 */
static uint32_t build(uint8_t *f, int v6, int tcp, uint32_t pay, int df, uint64_t *rng)
{
	uint32_t l3 = 14, l4 = l3 + (v6 ? 40 : 20), th = tcp ? 20 : 8;

	memset(f, 0, l4 + th);
	memcpy(f, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01", 12);
	put16(f + 12, v6 ? 0x86dd : 0x0800);
	if (v6) {
		f[l3] = 0x60;
		put16(f + l3 + 4, th + pay);
		f[l3 + 6] = tcp ? 6 : 17;
		f[l3 + 7] = 64;
		f[l3 + 8] = 0xfd, f[l3 + 23] = 1;
		f[l3 + 24] = 0xfd, f[l3 + 39] = 2;
	} else {
		f[l3] = 0x45;
		put16(f + l3 + 2, 20 + th + pay);
		put16(f + l3 + 4, 0x4242);
		put16(f + l3 + 6, df ? 0x4000 : 0);
		f[l3 + 8] = 64;
		f[l3 + 9] = tcp ? 6 : 17;
		f[l3 + 12] = 10, f[l3 + 15] = 1;
		f[l3 + 16] = 10, f[l3 + 19] = 2;
		put16(f + l3 + 10, (uint16_t)~ref_fold(ref_sum(f + l3, 20, 0)));
	}
	put16(f + l4, 1234);
	put16(f + l4 + 2, 80);
	if (tcp) {
		put16(f + l4 + 4, 0x1000);
		f[l4 + 12] = 0x50;
		f[l4 + 13] = 0x18; /* ACK PSH */
		put16(f + l4 + 14, 500);
	} else {
		put16(f + l4 + 4, 8 + pay);
	}
	gso_test_fill_random(f + l4 + th, pay, rng);
	return l4 + th + pay;
}

struct seginfo {
	int v6, tcp;
	uint32_t pay;
	uint16_t ip_id;
	uint32_t seq;
};

/*
 * Check one output frame on its own: lengths consistent with the frame,
 * IPv4 header checksum, L4 checksum (complete) with a plain loop.
 */
static void check_frame(const uint8_t *f, uint32_t len, struct seginfo *si, unsigned idx)
{
	uint32_t l3 = 14, l4, th, acc;
	uint16_t type = get16(f + 12);
	uint8_t proto;

	if (type == 0x8100) {
		l3 += 4;
		type = get16(f + 16);
	}
	si->v6 = type == 0x86dd;
	cr_assert(type == 0x0800 || type == 0x86dd, "frame %u: ethertype 0x%04x", idx, type);
	if (!si->v6) {
		uint32_t ihl = (f[l3] & 0xf) * 4u;

		cr_assert_eq(get16(f + l3 + 2), len - l3, "frame %u: IPv4 total length", idx);
		cr_assert_eq(ref_fold(ref_sum(f + l3, ihl, 0)), 0xffff, "frame %u: IPv4 header checksum",
			     idx);
		proto = f[l3 + 9];
		l4 = l3 + ihl;
		si->ip_id = get16(f + l3 + 4);
		acc = ref_sum(f + l3 + 12, 8, 0);
	} else {
		cr_assert_eq(get16(f + l3 + 4), len - l3 - 40, "frame %u: IPv6 payload length", idx);
		proto = f[l3 + 6];
		l4 = l3 + 40;
		acc = ref_sum(f + l3 + 8, 32, 0);
	}
	si->tcp = proto == 6;
	th = si->tcp ? (f[l4 + 12] >> 4) * 4u : 8;
	if (!si->tcp)
		cr_assert_eq(get16(f + l4 + 4), len - l4, "frame %u: UDP length", idx);
	else
		si->seq = (uint32_t)get16(f + l4 + 4) << 16 | get16(f + l4 + 6);
	si->pay = len - l4 - th;
	acc += proto + (len - l4);
	acc = ref_sum(f + l4, len - l4, acc);
	cr_assert_eq(ref_fold(acc), 0xffff, "frame %u: L4 checksum does not verify", idx);
}

/* ---- tests ---- */

TestSuite(gsoseg_cli, .init = setup, .fini = teardown, .timeout = 60);

Test(gsoseg_cli, help_documents_exit_codes)
{
	cr_assert_eq(RUN("gsoseg", "--help"), 0);
	const char *out = slurp("stdout.txt");

	cr_assert_not_null(strstr(out, "usage: gsoseg"), "%s", out);
	cr_assert_not_null(strstr(out, "exit status"), "%s", out);
	cr_assert_not_null(strstr(out, "counted from 1"), "%s", out);
	for (const char *o = "--mss\0--csum\0--ipid\0--quiet\0"; *o; o += strlen(o) + 1)
		cr_assert_not_null(strstr(out, o), "--help does not mention %s", o);
	cr_assert_eq(RUN("gsogen", "--help"), 0);
	cr_assert_not_null(strstr(slurp("stdout.txt"), "usage: gsogen"));
}

Test(gsoseg_cli, bad_usage_exits_2)
{
	static const char *const cases[][4] = {
		{ "--mss", "0", NULL },
		{ "--mss", "65536", NULL },
		{ "--mss", "12x", NULL },
		{ "--csum", "maybe", NULL },
		{ "--ipid", "random", NULL },
		{ "--bogus", NULL },
		{ "only-one-file.pcap", NULL },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *a[8] = { 0 };
		unsigned n = 0;

		while (cases[i][n]) {
			a[n] = cases[i][n];
			n++;
		}
		if (n == 2) {
			a[n++] = tmp("none.pcap");
			a[n++] = tmp("out.pcap");
		}
		cr_expect_eq(run("gsoseg", a), 2, "gsoseg %s %s: expected exit 2; stderr: %s",
			     cases[i][0], cases[i][1] ? cases[i][1] : "", slurp("stderr.txt"));
		cr_expect_neq(slurp("stderr.txt")[0], 0, "no message for bad usage %s", cases[i][0]);
	}
	cr_expect_eq(RUN("gsogen", "--count", "0", tmp("g.pcap")), 2);
	cr_expect_eq(RUN("gsogen", "--proto", "sctp", tmp("g.pcap")), 2);
	cr_expect_eq(RUN("gsogen", "--max-payload", "70000", tmp("g.pcap")), 2);
}

Test(gsoseg_cli, unreadable_input_exits_2)
{
	FILE *f;

	cr_assert_eq(RUN("gsoseg", tmp("missing.pcap"), tmp("out.pcap")), 2);
	cr_assert_not_null(strstr(slurp("stderr.txt"), "missing.pcap"));

	f = fopen(tmp("junk.pcap"), "w");
	cr_assert_not_null(f);
	fputs("this is not a capture file\n", f);
	fclose(f);
	cr_assert_eq(RUN("gsoseg", tmp("junk.pcap"), tmp("out.pcap")), 2);

	/* A link type other than Ethernet. */
	pcap_t *dead = pcap_open_dead(DLT_RAW, 65535);
	pcap_dumper_t *d = pcap_dump_open(dead, tmp("raw.pcap"));
	cr_assert_not_null(d);
	pcap_dump_close(d);
	pcap_close(dead);
	cr_assert_eq(RUN("gsoseg", tmp("raw.pcap"), tmp("out.pcap")), 2);
	cr_assert_not_null(strstr(slurp("stderr.txt"), "Ethernet"), "%s", slurp("stderr.txt"));

	/* Output directory that does not exist. */
	cr_assert_eq(RUN("gsogen", "--count", "1", tmp("g.pcap")), 0);
	cr_assert_eq(RUN("gsoseg", tmp("g.pcap"), tmp("no/such/dir/out.pcap")), 2);
}

/*
 * Good and bad records interleaved: each bad one is reported with its
 * 1-based index and reason, skipped, and the exit status is 1; the good
 * ones are all segmented, in order, with their timestamps.
 */
Test(gsoseg_cli, bad_records_reported_skipped_exit_1)
{
	static struct recs in, out;
	uint64_t rng = 7;
	uint8_t *f;
	struct {
		const char *what, *expect; /* expect: substring of the record's message */
		int v6, tcp;
		uint32_t pay;
	} rows[] = {
		{ "good tcp4 3000", NULL, 0, 1, 3000 },
		{ "truncated inside the IPv4 header", "ENODATA", 0, 1, 100 },
		{ "good udp6 2500", NULL, 1, 0, 2500 },
		{ "ARP, not IP", "EPROTONOSUPPORT", 0, 0, 28 },
		{ "IPv6 hop-by-hop extension header", "EPROTONOSUPPORT", 1, 1, 1000 },
		{ "IPv4 total length one byte past the frame", "EBADMSG", 0, 1, 1500 },
		{ "UDP length disagreeing with IPv6 payload length", "EBADMSG", 1, 0, 1500 },
		{ "cut by the capture's snap length", "truncated by the capture", 0, 1, 4000 },
		{ "good tcp6 1000 (one MSS)", NULL, 1, 1, 1000 },
		{ "IPv4 fragment", "EPROTONOSUPPORT", 0, 0, 1200 },
		{ "good udp4 1", NULL, 0, 0, 1 },
	};
	unsigned n = sizeof(rows) / sizeof(rows[0]), expect_frames = 0, bad = 0;

	for (unsigned i = 0; i < n; i++) {
		struct rec *r = &in.r[i];
		uint32_t len;

		f = calloc(1, 70000);
		cr_assert_not_null(f);
		len = build(f, rows[i].v6, rows[i].tcp, rows[i].pay, 1, &rng);
		switch (i) {
		case 1:
			len = 14 + 16;
			break;
		case 3:
			put16(f + 12, 0x0806);
			break;
		case 4: /* next header 0 (hop-by-hop) in front of TCP */
			f[14 + 6] = 0;
			break;
		case 5:
			put16(f + 16, get16(f + 16) + 1);
			put16(f + 24, 0);
			put16(f + 24, (uint16_t)~ref_fold(ref_sum(f + 14, 20, 0)));
			break;
		case 6:
			put16(f + 54 + 4, get16(f + 54 + 4) - 1);
			break;
		case 9: /* more-fragments set */
			put16(f + 20, 0x2000);
			put16(f + 24, 0);
			put16(f + 24, (uint16_t)~ref_fold(ref_sum(f + 14, 20, 0)));
			break;
		}
		r->data = f;
		r->caplen = r->len = len;
		if (i == 7)
			r->caplen = 1000;
		r->ts.tv_sec = 1000 + i;
		r->ts.tv_usec = 17 * i;
		if (rows[i].expect)
			bad++;
		else
			expect_frames += rows[i].pay <= 1000 ? 1 : (rows[i].pay + 999) / 1000;
	}
	in.n = n;
	write_pcap(tmp("in.pcap"), &in, PCAP_TSTAMP_PRECISION_MICRO);

	cr_assert_eq(RUN("gsoseg", "--mss", "1000", tmp("in.pcap"), tmp("out.pcap")), 1,
		     "stderr: %s", slurp("stderr.txt"));
	const char *err = slurp("stderr.txt");

	for (unsigned i = 0; i < n; i++) {
		char tag[64];
		const char *line;

		snprintf(tag, sizeof(tag), "record %u:", i + 1);
		line = strstr(err, tag);
		if (!rows[i].expect) {
			cr_expect_null(line, "good record %u (%s) reported: %s", i + 1, rows[i].what, err);
			continue;
		}
		cr_assert_not_null(line, "record %u (%s) not reported: %s", i + 1, rows[i].what, err);
		const char *eol = strchr(line, '\n');
		cr_expect(strstr(line, rows[i].expect) && strstr(line, rows[i].expect) < eol,
			  "record %u (%s): expected '%s' in: %.*s", i + 1, rows[i].what,
			  rows[i].expect, (int)(eol - line), line);
	}
	char summary[128];
	snprintf(summary, sizeof(summary), "%u records in, %u frames out, %u bad records", n,
		 expect_frames, bad);
	cr_expect_not_null(strstr(err, summary), "want '%s' in: %s", summary, err);

	read_pcap(tmp("out.pcap"), &out);
	cr_assert_eq(out.n, expect_frames);
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++) {
		uint32_t segs;

		if (rows[i].expect)
			continue;
		segs = rows[i].pay <= 1000 ? 1 : (rows[i].pay + 999) / 1000;
		for (unsigned s = 0; s < segs; s++, k++) {
			struct seginfo si;

			cr_assert_eq(out.r[k].ts.tv_sec, in.r[i].ts.tv_sec, "frame %u timestamp", k);
			/* Output is read at nanosecond precision. */
			cr_assert_eq(out.r[k].ts.tv_usec, in.r[i].ts.tv_usec * 1000, "frame %u timestamp", k);
			check_frame(out.r[k].data, out.r[k].caplen, &si, k);
			cr_assert_eq(si.v6, rows[i].v6);
			cr_assert_eq(si.tcp, rows[i].tcp);
			cr_assert_eq(si.pay, s + 1 < segs ? 1000 : rows[i].pay - 1000 * (segs - 1),
				     "record %u segment %u payload", i + 1, s);
			cr_assert_eq(memcmp(out.r[k].data + out.r[k].caplen - si.pay,
					    in.r[i].data + in.r[i].len - rows[i].pay + 1000 * s, si.pay),
				     0, "record %u segment %u payload bytes", i + 1, s);
		}
	}
	free_recs(&in);
	free_recs(&out);

	/* --quiet drops the summary but not the per-record reports. */
	cr_assert_eq(RUN("gsoseg", "--quiet", "--mss", "1000", tmp("in.pcap"), tmp("out.pcap")), 1);
	cr_expect_null(strstr(slurp("stderr.txt"), "records in"));
	cr_expect_not_null(strstr(slurp("stderr.txt"), "record 2:"));
}

/* Whatever gsogen writes, gsoseg accepts, for every protocol, and the frames verify. */
Test(gsoseg_cli, gsogen_output_segments_cleanly)
{
	static struct recs out;
	static const char *const protos[] = { "mix", "tcp4", "tcp6", "udp4", "udp6" };

	for (unsigned p = 0; p < 5; p++) {
		cr_assert_eq(RUN("gsogen", "--seed", "11", "--count", "60", "--max-payload", "30000",
				 "--proto", protos[p], tmp("g.pcap")), 0, "%s", slurp("stderr.txt"));
		cr_assert_eq(RUN("gsoseg", "--mss", "1460", tmp("g.pcap"), tmp("s.pcap")), 0,
			     "gsoseg on gsogen --proto %s: %s", protos[p], slurp("stderr.txt"));
		cr_expect_not_null(strstr(slurp("stderr.txt"), "60 records in"));
		cr_expect_not_null(strstr(slurp("stderr.txt"), " 0 bad records"));
		read_pcap(tmp("s.pcap"), &out);
		cr_assert_geq(out.n, 60u);
		for (unsigned i = 0; i < out.n; i++) {
			struct seginfo si;

			check_frame(out.r[i].data, out.r[i].caplen, &si, i);
			cr_assert_leq(si.pay, 1460u);
			if (p == 1 || p == 3)
				cr_assert(!si.v6);
			if (p == 2 || p == 4)
				cr_assert(si.v6);
			if (p)
				cr_assert_eq(si.tcp, p <= 2);
		}
		free_recs(&out);
	}
}

Test(gsoseg_cli, gsogen_is_deterministic)
{
	static struct recs a, b;

	cr_assert_eq(RUN("gsogen", "--seed", "99", "--count", "40", tmp("a.pcap")), 0);
	cr_assert_eq(RUN("gsogen", "--seed", "99", "--count", "40", tmp("b.pcap")), 0);
	read_pcap(tmp("a.pcap"), &a);
	read_pcap(tmp("b.pcap"), &b);
	cr_assert_eq(a.n, 40u);
	cr_assert_eq(b.n, 40u);
	for (unsigned i = 0; i < a.n; i++) {
		cr_assert_eq(a.r[i].caplen, b.r[i].caplen);
		cr_assert_eq(memcmp(a.r[i].data, b.r[i].data, a.r[i].caplen), 0, "record %u", i);
	}
	free_recs(&b);
	cr_assert_eq(RUN("gsogen", "--seed", "100", "--count", "40", tmp("b.pcap")), 0);
	read_pcap(tmp("b.pcap"), &b);
	unsigned same = 0;
	for (unsigned i = 0; i < a.n; i++)
		same += a.r[i].caplen == b.r[i].caplen &&
			!memcmp(a.r[i].data, b.r[i].data, a.r[i].caplen);
	cr_assert_lt(same, 40u, "seeds 99 and 100 gave the same file");
	free_recs(&a);
	free_recs(&b);
}

/* --ipid fixed: same ID everywhere, refused (reported) without DF; --csum partial: seeds. */
Test(gsoseg_cli, ipid_and_csum_modes)
{
	static struct recs in, out;
	uint64_t rng = 3;

	for (unsigned i = 0; i < 2; i++) {
		in.r[i].data = calloc(1, 70000);
		cr_assert_not_null(in.r[i].data);
		in.r[i].caplen = in.r[i].len = build(in.r[i].data, 0, 1, 5000, i == 0, &rng);
		in.r[i].ts.tv_sec = 5 + i;
	}
	in.n = 2;
	write_pcap(tmp("in.pcap"), &in, PCAP_TSTAMP_PRECISION_MICRO);

	cr_assert_eq(RUN("gsoseg", "--mss", "1000", "--ipid", "fixed", tmp("in.pcap"),
			 tmp("out.pcap")), 1, "%s", slurp("stderr.txt"));
	cr_expect_not_null(strstr(slurp("stderr.txt"), "record 2: "), "%s", slurp("stderr.txt"));
	read_pcap(tmp("out.pcap"), &out);
	cr_assert_eq(out.n, 5u);
	for (unsigned i = 0; i < out.n; i++) {
		struct seginfo si;

		check_frame(out.r[i].data, out.r[i].caplen, &si, i);
		cr_assert_eq(si.ip_id, 0x4242, "frame %u: IP ID 0x%04x", i, si.ip_id);
	}
	free_recs(&out);

	cr_assert_eq(RUN("gsoseg", "--mss", "1000", tmp("in.pcap"), tmp("out.pcap")), 0);
	read_pcap(tmp("out.pcap"), &out);
	cr_assert_eq(out.n, 10u);
	for (unsigned i = 0; i < out.n; i++) {
		struct seginfo si;

		check_frame(out.r[i].data, out.r[i].caplen, &si, i);
		cr_assert_eq(si.ip_id, (uint16_t)(0x4242 + i % 5), "frame %u: IP ID 0x%04x", i, si.ip_id);
		cr_assert_eq(si.seq, 0x10000000u + 1000 * (i % 5), "frame %u: seq", i);
	}
	free_recs(&out);

	/* Partial: the checksum field holds the pseudo-header sum of the segment's own length. */
	cr_assert_eq(RUN("gsoseg", "--mss", "1000", "--csum", "partial", tmp("in.pcap"),
			 tmp("out.pcap")), 0);
	read_pcap(tmp("out.pcap"), &out);
	cr_assert_eq(out.n, 10u);
	for (unsigned i = 0; i < out.n; i++) {
		const uint8_t *f = out.r[i].data;
		uint32_t l4len = out.r[i].caplen - 34;
		uint16_t want = ref_fold(ref_sum(f + 26, 8, 0) + 6 + l4len);

		cr_assert_eq(get16(f + 34 + 16), want, "frame %u: seed 0x%04x, want 0x%04x", i,
			     get16(f + 34 + 16), want);
	}
	free_recs(&out);
	free_recs(&in);
}

/* Nanosecond captures keep their nanoseconds. */
Test(gsoseg_cli, nanosecond_timestamps_kept)
{
	static struct recs in, out;
	uint64_t rng = 5;

	in.r[0].data = calloc(1, 70000);
	cr_assert_not_null(in.r[0].data);
	in.r[0].caplen = in.r[0].len = build(in.r[0].data, 1, 0, 3000, 1, &rng);
	in.r[0].ts.tv_sec = 1700000000;
	in.r[0].ts.tv_usec = 123456789; /* nanoseconds in a nano-precision file */
	in.n = 1;
	write_pcap(tmp("in.pcap"), &in, PCAP_TSTAMP_PRECISION_NANO);
	cr_assert_eq(RUN("gsoseg", "--mss", "1448", tmp("in.pcap"), tmp("out.pcap")), 0);
	read_pcap(tmp("out.pcap"), &out);
	cr_assert_eq(out.n, 3u);
	for (unsigned i = 0; i < out.n; i++) {
		cr_assert_eq(out.r[i].ts.tv_sec, 1700000000);
		cr_assert_eq(out.r[i].ts.tv_usec, 123456789);
	}
	free_recs(&in);
	free_recs(&out);
}

/* ---- output that cannot be written ---- */

static off_t file_size(const char *path)
{
	struct stat st;

	cr_assert_eq(stat(path, &st), 0, "%s: %s", path, strerror(errno));
	return st.st_size;
}

/*
 * A write that fails is reported with its reason and exit status 2 (as
 * --help documents for unwritable output), and no summary claims frames
 * or super-packets were written.
 */
static void expect_write_failure(int st, const char *tool, const char *reason)
{
	const char *err = slurp("stderr.txt");

	cr_expect_eq(st, 2, "%s: exit %d, want 2; stderr: %s", tool, st, err);
	cr_expect_not_null(strstr(err, reason), "%s: no '%s' in: %s", tool, reason, err);
	cr_expect_null(strstr(err, "frames out"), "%s claims frames were written: %s", tool, err);
	cr_expect_null(strstr(err, "super-packets,"), "%s claims a file was written: %s", tool, err);
}

Test(gsoseg_cli, write_to_dev_full_fails)
{
	const struct tool_io full = { .out = "/dev/full", .out_flags = O_WRONLY };

	/* Many records (the buffer fills and is written) and one (only the final flush writes). */
	expect_write_failure(RUN("gsogen", "--count", "50", "/dev/full"), "gsogen", "No space left on device");
	expect_write_failure(RUN("gsogen", "--count", "1", "--max-payload", "100", "/dev/full"), "gsogen",
			     "No space left on device");
	expect_write_failure(RUN_IO(&full, "gsogen", "--count", "50", "-"), "gsogen -", "No space left on device");

	cr_assert_eq(RUN("gsogen", "--count", "50", tmp("g.pcap")), 0, "%s", slurp("stderr.txt"));
	cr_assert_eq(RUN("gsogen", "--count", "1", "--max-payload", "100", tmp("g1.pcap")), 0);
	expect_write_failure(RUN("gsoseg", tmp("g.pcap"), "/dev/full"), "gsoseg", "No space left on device");
	expect_write_failure(RUN("gsoseg", tmp("g1.pcap"), "/dev/full"), "gsoseg", "No space left on device");
	expect_write_failure(RUN_IO(&full, "gsoseg", tmp("g.pcap"), "-"), "gsoseg -", "No space left on device");
}

Test(gsoseg_cli, write_to_closed_stdout_fails)
{
	const struct tool_io closed = { .out = TOOL_OUT_CLOSED };

	cr_assert_eq(RUN("gsogen", "--count", "20", tmp("g.pcap")), 0, "%s", slurp("stderr.txt"));
	expect_write_failure(RUN_IO(&closed, "gsogen", "--count", "20", "-"), "gsogen -", "Bad file descriptor");
	expect_write_failure(RUN_IO(&closed, "gsoseg", tmp("g.pcap"), "-"), "gsoseg -", "Bad file descriptor");
	/* Whatever took descriptor 1 (here: the input) is not written to. */
	const struct tool_io in_closed = { .in = tmp("g.pcap"), .out = TOOL_OUT_CLOSED };
	expect_write_failure(RUN_IO(&in_closed, "gsoseg", "-", "-"), "gsoseg - -", "Bad file descriptor");
}

/*
 * A 64 KiB tmpfs in a mount namespace of this test process only (the
 * tools it runs inherit it): the output fills it part-way.
 */
Test(gsoseg_cli, write_to_full_filesystem_fails)
{
	char out[128];

	gso_test_require_root();
	cr_assert_eq(RUN("gsogen", "--count", "50", tmp("g.pcap")), 0, "%s", slurp("stderr.txt"));
	cr_assert_gt(file_size(tmp("g.pcap")), 4 * 65536, "input too small to fill the file system");

	cr_assert_eq(unshare(CLONE_NEWNS), 0, "unshare: %s", strerror(errno));
	cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0, "%s", strerror(errno));
	snprintf(small_fs, sizeof(small_fs), "%s", tmp("small"));
	cr_assert_eq(mkdir(small_fs, 0755), 0);
	cr_assert_eq(mount("gso-test", small_fs, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k"), 0, "mount: %s",
		     strerror(errno));

	snprintf(out, sizeof(out), "%s/g.pcap", small_fs);
	expect_write_failure(RUN("gsogen", "--count", "50", out), "gsogen", "No space left on device");
	cr_expect_leq(file_size(out), 65536);
	cr_assert_eq(unlink(out), 0);
	snprintf(out, sizeof(out), "%s/s.pcap", small_fs);
	expect_write_failure(RUN("gsoseg", tmp("g.pcap"), out), "gsoseg", "No space left on device");
	cr_expect_leq(file_size(out), 65536);
	cr_assert_eq(unlink(out), 0);

	/* What fits is written, and succeeds. */
	snprintf(out, sizeof(out), "%s/ok.pcap", small_fs);
	cr_assert_eq(RUN("gsogen", "--count", "2", "--max-payload", "1000", out), 0, "%s", slurp("stderr.txt"));

	cr_assert_eq(umount2(small_fs, 0), 0, "umount: %s", strerror(errno));
	small_fs[0] = 0;
}

/* gsoseg never writes over the file it reads, by whatever name or descriptor it gets it. */
Test(gsoseg_cli, output_that_is_the_input_refused)
{
	static uint8_t before[1 << 21], after[1 << 21];
	size_t n_before, n_after;
	FILE *f;

	cr_assert_eq(RUN("gsogen", "--count", "20", tmp("in.pcap")), 0, "%s", slurp("stderr.txt"));
	f = fopen(tmp("in.pcap"), "rb");
	cr_assert_not_null(f);
	n_before = fread(before, 1, sizeof(before), f);
	fclose(f);
	cr_assert(n_before > 24 && n_before < sizeof(before));
	cr_assert_eq(link(tmp("in.pcap"), tmp("hard.pcap")), 0);
	cr_assert_eq(symlink(tmp("in.pcap"), tmp("sym.pcap")), 0);

	const struct tool_io append = { .out = tmp("in.pcap"), .out_flags = O_WRONLY | O_APPEND };
	const struct tool_io from_stdin = { .in = tmp("in.pcap") };
	const struct {
		const char *what;
		const struct tool_io *io;
		const char *in, *out;
	} cases[] = {
		{ "same name", NULL, tmp("in.pcap"), tmp("in.pcap") },
		{ "a hard link", NULL, tmp("in.pcap"), tmp("hard.pcap") },
		{ "a symbolic link", NULL, tmp("in.pcap"), tmp("sym.pcap") },
		{ "stdout appending to it", &append, tmp("in.pcap"), "-" },
		{ "stdin, written by name", &from_stdin, "-", tmp("in.pcap") },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st = RUN_IO(cases[i].io, "gsoseg", cases[i].in, cases[i].out);
		const char *err = slurp("stderr.txt");

		cr_expect_eq(st, 2, "%s: exit %d, want 2: %s", cases[i].what, st, err);
		cr_expect_not_null(strstr(err, "is the input"), "%s: %s", cases[i].what, err);
		f = fopen(tmp("in.pcap"), "rb");
		cr_assert_not_null(f);
		n_after = fread(after, 1, sizeof(after), f);
		fclose(f);
		cr_assert(n_after == n_before && !memcmp(before, after, n_before),
			  "%s: the input changed (%zu bytes, was %zu)", cases[i].what, n_after, n_before);
	}
	/* A copy is another file. */
	cr_assert_eq(RUN("gsoseg", tmp("in.pcap"), tmp("copy.pcap")), 0, "%s", slurp("stderr.txt"));
	cr_assert_eq(RUN("gsoseg", tmp("copy.pcap"), tmp("copy.pcap")), 2);
}

/* A SYN or RST over one MSS cannot be segmented; the report says so, not "option out of range". */
Test(gsoseg_cli, syn_rst_super_packet_reason)
{
	static struct recs in, out;
	static const struct {
		uint8_t flags;
		uint32_t pay;
		const char *expect; /* NULL: segmented */
	} rows[] = {
		{ 0x02, 3000, "SYN with 3000 payload bytes, more than one MSS (1000)" },
		{ 0x14, 2500, "RST with 2500 payload bytes, more than one MSS (1000)" },
		{ 0x12, 1001, "SYN with 1001 payload bytes, more than one MSS (1000)" },
		{ 0x02, 1000, NULL },
		{ 0x04, 0, NULL },
	};
	unsigned n = sizeof(rows) / sizeof(rows[0]);
	uint64_t rng = 9;

	for (unsigned i = 0; i < n; i++) {
		in.r[i].data = calloc(1, 70000);
		cr_assert_not_null(in.r[i].data);
		in.r[i].caplen = in.r[i].len = build(in.r[i].data, i == 1, 1, rows[i].pay, 1, &rng);
		in.r[i].data[14 + (i == 1 ? 40 : 20) + 13] = rows[i].flags;
	}
	in.n = n;
	write_pcap(tmp("in.pcap"), &in, PCAP_TSTAMP_PRECISION_MICRO);
	cr_assert_eq(RUN("gsoseg", "--mss", "1000", tmp("in.pcap"), tmp("out.pcap")), 1, "%s",
		     slurp("stderr.txt"));
	const char *err = slurp("stderr.txt");

	for (unsigned i = 0; i < n; i++) {
		char tag[32];
		const char *line;

		snprintf(tag, sizeof(tag), "record %u:", i + 1);
		line = strstr(err, tag);
		if (!rows[i].expect) {
			cr_expect_null(line, "record %u reported: %s", i + 1, err);
			continue;
		}
		cr_assert_not_null(line, "record %u not reported: %s", i + 1, err);
		const char *eol = strchr(line, '\n');
		const char *hit = strstr(line, rows[i].expect);
		cr_expect(hit && hit < eol, "record %u: want '%s' in: %.*s", i + 1, rows[i].expect,
			  (int)(eol - line), line);
		hit = strstr(line, "fixed IP ID");
		cr_expect(!hit || hit > eol, "record %u blamed on the IP ID: %.*s", i + 1, (int)(eol - line), line);
	}
	read_pcap(tmp("out.pcap"), &out);
	cr_expect_eq(out.n, 2u);
	free_recs(&out);
	free_recs(&in);

	/* The other -EINVAL of a record names its own cause. */
	in.r[0].data = calloc(1, 70000);
	cr_assert_not_null(in.r[0].data);
	in.r[0].caplen = in.r[0].len = build(in.r[0].data, 0, 1, 5000, 0, &rng);
	in.n = 1;
	write_pcap(tmp("in.pcap"), &in, PCAP_TSTAMP_PRECISION_MICRO);
	cr_assert_eq(RUN("gsoseg", "--mss", "1000", "--ipid", "fixed", tmp("in.pcap"), tmp("out.pcap")), 1);
	cr_expect_not_null(strstr(slurp("stderr.txt"), "record 1: --ipid fixed needs DF"), "%s", slurp("stderr.txt"));
	free_recs(&in);
}
