/*
 * The bench stream and its verifier.
 *
 * bench_stream/ *: the generator and protocol code itself (no root):
 * seeking gives the same bytes as generating from 0, the checker finds the
 * exact first wrong byte for every alignment, the header rejects any
 * single-bit error, the receive state machine settles short/long/bad
 * streams.
 *
 * bench_verify/ *: bench/receiver fed by this test over a veth test-bed,
 * with a stream written here (independently of kernel_sender): a flipped
 * byte anywhere, a short or long stream, a damaged header, a wrong seed --
 * each must make the receiver report failure (exit 1, its status, the
 * offset), and the verdict it sends back must say the same.
 *
 * The bench helpers are compiled into this file: the test binary does not
 * link bench/testbed/common.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "../../bench/testbed/common/proto.c"
#include "../../bench/testbed/common/stream.c"

#include "test_bench_util.h"

/* ---- generator and protocol, no root ------------------------------------- */

Test(bench_stream, seek_equals_sequential)
{
	static struct bench_stream st;
	static uint8_t whole[70000], part[4096];
	uint64_t rng = 7;

	bench_stream_init(&st, 99);
	bench_stream_fill(&st, 0, whole, sizeof(whole));
	for (size_t i = 0; i < 64; i++)
		cr_assert_eq(bench_stream_byte(&st, i), whole[i]);
	for (int k = 0; k < 2000; k++) {
		size_t off = gso_test_rand(&rng) % (sizeof(whole) - sizeof(part));
		size_t len = gso_test_rand(&rng) % sizeof(part);

		bench_stream_fill(&st, off, part, len);
		cr_assert_eq(memcmp(part, whole + off, len), 0, "off %zu len %zu", off, len);
		cr_assert_eq(bench_stream_check(&st, off, whole + off, len), len);
	}
}

Test(bench_stream, seeds_and_offsets_differ)
{
	static struct bench_stream a, b;
	uint8_t x[64], y[64];

	bench_stream_init(&a, 1);
	bench_stream_init(&b, 2);
	bench_stream_fill(&a, 0, x, sizeof(x));
	bench_stream_fill(&b, 0, y, sizeof(y));
	cr_assert_neq(memcmp(x, y, sizeof(x)), 0);
	/* Data one table period (2048 words) later is not a repeat. */
	bench_stream_fill(&a, 8 * BENCH_STREAM_TAB, y, sizeof(y));
	cr_assert_neq(memcmp(x, y, sizeof(x)), 0);
	/* Shifted by any amount: the checker notices at once. */
	for (uint64_t sh = 1; sh < 40; sh++) {
		bench_stream_fill(&a, sh, y, sizeof(y));
		cr_assert_lt(bench_stream_check(&a, 0, y, sizeof(y)), 8, "shift %" PRIu64, sh);
	}
}

Test(bench_stream, check_finds_first_wrong_byte)
{
	static struct bench_stream st;
	static const size_t offs[] = { 0, 1, 3, 7, 8, 9, 31, 32, 33, 63, 64, 4095, 4096 };
	static const size_t lens[] = { 1, 2, 7, 8, 9, 31, 32, 33, 100, 4097 };
	static uint8_t buf[8192];

	bench_stream_init(&st, 5);
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			size_t len = lens[j];

			for (size_t bad = 0; bad < len; bad += (len > 40 ? 13 : 1)) {
				bench_stream_fill(&st, offs[i], buf, len);
				buf[bad] ^= 0x10;
				cr_assert_eq(bench_stream_check(&st, offs[i], buf, len), bad,
					     "off %zu len %zu bad %zu", offs[i], len, bad);
				buf[len - 1] ^= 0x01;
				cr_assert_eq(bench_stream_check(&st, offs[i], buf, len), bad);
			}
		}
	}
}

Test(bench_stream, header_rejects_every_bit_flip)
{
	struct bench_hdr h = { .flags = BENCH_HDR_F_VERDICT, .seed = 0x123456789abcdefull, .total = 1ull << 33 }, o;
	uint8_t w[BENCH_HDR_LEN];

	bench_hdr_encode(&h, w);
	cr_assert_eq(bench_hdr_decode(w, &o), 0);
	cr_assert_eq(o.seed, h.seed);
	cr_assert_eq(o.total, h.total);
	cr_assert_eq(o.flags, h.flags);
	for (int bit = 0; bit < 8 * (int)BENCH_HDR_LEN; bit++) {
		memset(&o, 0xa5, sizeof(o));
		w[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		cr_assert_eq(bench_hdr_decode(w, &o), -EBADMSG, "bit %d", bit);
		cr_assert_eq(o.seed, 0xa5a5a5a5a5a5a5a5ull, "failed decode wrote its output");
		w[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
}

struct rx_case {
	char name[24];
	bool raw;
	uint64_t total;     /* header total */
	uint64_t send;      /* stream bytes fed */
	long flip;          /* stream offset to corrupt, -1 none */
	bool bad_hdr;
	bool header_only_part; /* feed only 10 header bytes */
	int want;
	uint64_t want_verified;
};

static struct rx_case rx_cases[] = {
	{ "exact", false, 100000, 100000, -1, false, false, BENCH_OK, 100000 },
	{ "until_fin", false, 0, 77777, -1, false, false, BENCH_OK, 77777 },
	{ "raw", true, 0, 5000, -1, false, false, BENCH_OK, 5000 },
	{ "short", false, 100000, 99999, -1, false, false, BENCH_SHORT, 99999 },
	{ "long", false, 100000, 100001, -1, false, false, BENCH_LONG, 100000 },
	{ "flip_first", false, 0, 5000, 0, false, false, BENCH_MISMATCH, 0 },
	{ "flip_middle", false, 0, 50000, 33333, false, false, BENCH_MISMATCH, 33333 },
	{ "flip_last", false, 50000, 50000, 49999, false, false, BENCH_MISMATCH, 49999 },
	{ "bad_header", false, 0, 100, -1, true, false, BENCH_BAD_HEADER, 0 },
	{ "truncated_header", false, 0, 0, -1, false, true, BENCH_NO_DATA, 0 },
	{ "empty", false, 0, 0, -1, false, false, BENCH_OK, 0 },
};

ParameterizedTestParameters(bench_stream, rx_state_machine)
{
	return cr_make_param_array(struct rx_case, rx_cases, sizeof(rx_cases) / sizeof(rx_cases[0]));
}

/* Feeds the stream in uneven chunks so that every boundary is crossed. */
ParameterizedTest(struct rx_case *c, bench_stream, rx_state_machine)
{
	static struct bench_rx rx;
	static struct bench_stream st;
	static uint8_t data[200000];
	struct bench_hdr h = { .seed = 31337, .total = c->total };
	uint8_t hdr[BENCH_HDR_LEN];
	size_t pos = 0, step = 1;
	uint64_t n = c->send;

	bench_stream_init(&st, 31337);
	bench_stream_fill(&st, 0, data, n);
	if (c->flip >= 0)
		data[c->flip] ^= 0x80;
	bench_rx_init(&rx, c->raw, 31337);
	if (!c->raw) {
		bench_hdr_encode(&h, hdr);
		if (c->bad_hdr)
			hdr[30] ^= 1;
		bench_rx_feed(&rx, hdr, c->header_only_part ? 10 : 5);
		if (!c->header_only_part)
			bench_rx_feed(&rx, hdr + 5, sizeof(hdr) - 5);
	}
	while (pos < n) {
		size_t k = step < n - pos ? step : n - pos;

		bench_rx_feed(&rx, data + pos, k);
		pos += k;
		step = step * 3 + 1;
	}
	cr_assert_eq(bench_rx_eof(&rx), c->want, "%s: status %s", c->name, bench_status_name(rx.status));
	cr_assert_eq(rx.verified, c->want_verified, "%s", c->name);
	if (c->want == BENCH_MISMATCH) {
		cr_assert_eq(rx.bad_off, (uint64_t)c->flip);
		cr_assert_eq(rx.bad_got ^ rx.bad_want, 0x80);
	}
	cr_assert_eq(rx.received, n, "%s", c->name);
}

/* ---- the receiver program ------------------------------------------------ */

static struct nsbed tb;

static void fini(void)
{
	bt_fini();
	nsbed_destroy(&tb);
}

struct wire_case {
	char name[24];
	bool raw;          /* receiver --seed 77 */
	uint64_t seed;     /* stream written */
	uint64_t total;    /* header total */
	uint64_t send;     /* stream bytes written */
	long flip;         /* -1 none */
	bool bad_hdr;
	char want[16];
	long want_off;     /* -1: bad_offset null */
	bool rst;          /* end with RST (SO_LINGER 0) instead of FIN */
};

#define MB (1u << 20)
static struct wire_case wire_cases[] = {
	{ "clean", false, 77, 2 * MB, 2 * MB, -1, false, "ok", -1, false },
	{ "flip_byte_0", false, 77, 2 * MB, 2 * MB, 0, false, "mismatch", 0, false },
	{ "flip_byte_4095", false, 77, 2 * MB, 2 * MB, 4095, false, "mismatch", 4095, false },
	{ "flip_byte_1M_plus_7", false, 77, 2 * MB, 2 * MB, MB + 7, false, "mismatch", MB + 7, false },
	{ "flip_last_byte", false, 77, 2 * MB, 2 * MB, 2 * MB - 1, false, "mismatch", 2 * MB - 1, false },
	{ "short", false, 77, 2 * MB, 2 * MB - 1, -1, false, "short", -1, false },
	{ "long", false, 77, 2 * MB, 2 * MB + 1, -1, false, "long", -1, false },
	{ "bad_header", false, 77, 2 * MB, 2 * MB, -1, true, "bad_header", -1, false },
	{ "raw_wrong_seed", true, 78, 0, MB, -1, false, "mismatch", 0, false },
	{ "raw_flip", true, 77, 0, MB, 12345, false, "mismatch", 12345, false },
	/* A minimal sender may end with RST: fine once every announced byte is in. */
	{ "rst_after_all_bytes", false, 77, MB, MB, -1, false, "ok", -1, true },
	{ "rst_before_the_end", false, 77, MB, MB - 1000, -1, false, "io_error", -1, true },
};

ParameterizedTestParameters(bench_verify, receiver_detects_bad_stream)
{
	return cr_make_param_array(struct wire_case, wire_cases, sizeof(wire_cases) / sizeof(wire_cases[0]));
}

static void write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		cr_assert_gt(n, 0, "write: %s", strerror(errno));
		p += n;
		len -= (size_t)n;
	}
}

ParameterizedTest(struct wire_case *c, bench_verify, receiver_detects_bad_stream, .fini = fini, .timeout = 60)
{
	static struct bench_stream st;
	static uint8_t chunk[65536];
	const char *ready = bt_path("ready");
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(7311) };
	struct bench_verdict vd;
	uint8_t hdr[BENCH_HDR_LEN], vw[BENCH_VERDICT_LEN];
	const char *rj;
	uint64_t off = 0;
	int err, fd, rs;

	gso_test_require_root();
	err = gso_testbed_create(&tb);
	cr_assert_eq(err, 0, "test-bed: %s", strerror(-err));
	const char *rargv[] = { bt_prog("receiver"), "--netns", tb.ns[1], "--once", "--json",
				"--port", "7311", "--idle-timeout", "10", "--accept-timeout", "20",
				"--ready-file", ready, c->raw ? "--seed" : NULL, "77", NULL };
	struct bt_proc *rp = bt_spawn(rargv);

	bt_wait_file(ready, rp, 10);
	cr_assert_eq(nsbed_enter(&tb, 0), 0);
	inet_pton(AF_INET, "10.77.0.2", &dst.sin_addr);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&dst, sizeof(dst)), 0, "connect: %s", strerror(errno));
	if (!c->raw) {
		struct bench_hdr h = { .flags = BENCH_HDR_F_VERDICT, .seed = c->seed, .total = c->total };

		bench_hdr_encode(&h, hdr);
		if (c->bad_hdr)
			hdr[9] ^= 0x04; /* a seed bit: only the check can tell */
		write_all(fd, hdr, sizeof(hdr));
	}
	bench_stream_init(&st, c->seed);
	while (off < c->send) {
		size_t n = c->send - off < sizeof(chunk) ? (size_t)(c->send - off) : sizeof(chunk);

		bench_stream_fill(&st, off, chunk, n);
		if (c->flip >= 0 && (uint64_t)c->flip >= off && (uint64_t)c->flip < off + n)
			chunk[(uint64_t)c->flip - off] ^= 0x01;
		write_all(fd, chunk, n);
		off += n;
	}
	if (c->rst) {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		/* Let the data leave before the RST (nothing is lost here). */
		usleep(200000);
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	} else {
		shutdown(fd, SHUT_WR);
	}
	/* The verdict comes only when the (valid) header asked for it, after a FIN. */
	if (!c->raw && !c->bad_hdr && !c->rst) {
		size_t got = 0;

		while (got < sizeof(vw)) {
			struct pollfd pf = { .fd = fd, .events = POLLIN };
			ssize_t n;

			cr_assert_eq(poll(&pf, 1, 20000), 1, "no verdict");
			n = read(fd, vw + got, sizeof(vw) - got);
			cr_assert_gt(n, 0, "verdict: %s", n ? strerror(errno) : "EOF");
			got += (size_t)n;
		}
		cr_assert_eq(bench_verdict_decode(vw, &vd), 0);
		cr_assert_str_eq(bench_status_name((int)vd.status), c->want, "%s: verdict", c->name);
		cr_assert_eq(vd.received, c->send);
		if (c->want_off >= 0)
			cr_assert_eq(vd.bad_off, (uint64_t)c->want_off);
	}
	close(fd);
	rs = bt_wait(rp, 20);
	rj = bt_read(rp->out);
	cr_assert_str_eq(bt_str(rj, "status"), c->want, "%s: %s", c->name, rj);
	cr_assert_eq(rs, strcmp(c->want, "ok") ? 1 : 0, "%s: exit %d: %s", c->name, rs, rj);
	if (c->rst && strcmp(c->want, "ok"))
		cr_assert_leq(bt_num(rj, "bytes"), (double)c->send, "%s: %s", c->name, rj);
	else
		cr_assert_eq(bt_num(rj, "bytes"), (double)c->send, "%s: %s", c->name, rj);
	if (c->want_off >= 0) {
		cr_assert_eq(bt_num(rj, "bad_offset"), (double)c->want_off, "%s: %s", c->name, rj);
		cr_assert_eq(bt_num(rj, "bytes_verified"), (double)c->want_off, "%s: %s", c->name, rj);
	} else {
		cr_assert(strstr(rj, "\"bad_offset\": null"), "%s: %s", c->name, rj);
	}
	if (!strcmp(c->want, "ok"))
		cr_assert_eq(bt_num(rj, "bytes_verified"), (double)c->send);
	if (c->rst && !strcmp(c->want, "ok"))
		cr_assert(strstr(rj, "\"ended_by_reset\": true"), "%s", rj);
}
