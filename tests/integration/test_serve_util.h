/*
 * What the file-server suites share (test_httpd.c: gsohttpd or nginx to
 * curl, wget and wrk; test_quic.c: gsoquicd or gtlsserver to gtlsclient):
 * the files they serve and their digests, waiting for a server's --ready
 * file, the impair relay between two beds, and the checks of a server's
 * --json report at exit.  On top of test_bench_util.h.
 */
#ifndef GSO_TEST_SERVE_UTIL_H
#define GSO_TEST_SERVE_UTIL_H

#include <inttypes.h>

#include "test_bench_util.h"
#include "test_progs.h"

#define SERVE_MIB (1ull << 20)

/* A file of `size` bytes from httpprobe gen (seed 1) at root/name. */
static inline void serve_make_file(const char *root, const char *name, uint64_t size)
{
	char path[256], sz[24], out[256];

	snprintf(path, sizeof(path), "%s/%s", root, name);
	snprintf(sz, sizeof(sz), "%" PRIu64, size);
	snprintf(out, sizeof(out), "%s/gen.out", bt_tmpdir());
	const char *args[] = { "gen", "--size", sz, path, NULL };

	cr_assert_eq(test_prog_run("tests/httpprobe", args, out), 0, "gen %s: %s", path, bt_read(out));
}

/*
 * The sha256 of httpprobe gen's first `size` bytes (seed 1): known for the
 * sizes the suites use, so that a 1 GiB file is not hashed again per test;
 * test_httpd.c's small file checks the table against the generator every run.
 */
static inline const char *serve_file_digest(uint64_t size)
{
	static const struct {
		uint64_t size;
		const char *sha;
	} known[] = {
		{ 4096, "276c10c86aa9b9ba5575128554e181e036ac203a3df34143d9d175927312b924" },
		{ 1 * SERVE_MIB, "85b66b3a5816d686deb42f2d2473d9a7121ceb75c822b838f958c76ca86ed8ea" },
		{ 8 * SERVE_MIB, "b90e46b6528f14cd05f49c4f0105e3e446a20698f4a401f621d6bfac85143403" },
		{ 16 * SERVE_MIB, "fac9551d34247bcce5ddd3ea59c084218b09cdca7f50afc13d4ee8d80e2e565c" },
		{ 32 * SERVE_MIB, "93be6d417914e825fa26a760e8971ac7cb318b819f10d7519058c546132252ce" },
		{ 100 * SERVE_MIB, "e2d30e664b61b472816fb2295e2b3862be1077748e18145c477585b8ea555e87" },
		{ 256 * SERVE_MIB, "992aab0605525f43b37105da4bd384b88460922d67ce467a348aa9d99626648e" },
		{ 1024 * SERVE_MIB, "4bbaad95feb98d609ed2f9e6a6a2962a494e4782200c13ce12f976e6a5e91aa9" },
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i].size == size)
			return known[i].sha;
	cr_assert_fail("no digest for a %" PRIu64 "-byte file: add it to serve_file_digest()", size);
	return NULL;
}

/*
 * Wait (20 s at most) for server `p` (`name`, in `mode`) to write its
 * ready file.  Returns false when it exits 77 in a mode other than
 * software or auto (says out loud that this machine lacks what the mode
 * needs); fails the test when it exits otherwise or never gets ready.
 */
static inline bool serve_wait_ready(struct bt_proc *p, const char *ready, const char *name, const char *mode)
{
	double end = bt_now() + 20;

	while (access(ready, F_OK)) {
		if (waitpid(p->pid, &p->status, WNOHANG) == p->pid) {
			int st = p->status;

			p->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			if (p->status == 77 && strcmp(mode, "software") && strcmp(mode, "auto")) {
				cr_log_warn("%s: mode %s not available here: %s", name, mode, bt_read(p->err));
				return false;
			}
			bt_dump(p, name);
			cr_assert_fail("%s exited (%d) before it was ready", name, p->status);
		}
		if (bt_now() > end) {
			bt_dump(p, name);
			cr_assert_fail("%s: not ready within 20 s", name);
		}
		usleep(10000);
	}
	return true;
}

/*
 * The impair relay between bt_relay_beds()'s two beds: the server in bed 0
 * side a, the relay in bed 0 side b joining bed 0's veth and bed 1's
 * (moved in), the client in bed 1 side b: a transparent L2 hop
 * (10.77.0.1 and .2, fd77::1 and ::2 talk through it).  The server's veth
 * segments in software (TSO, GSO and UDP segmentation off: a veth passes
 * super-packets whole otherwise) so that the relay's loss falls on
 * segments and datagrams, not on super-packets.  `loss` percent and
 * `delay` ms; returns the relay once it is ready.
 */
static inline struct bt_proc *serve_relay_start(const char *loss, const char *delay)
{
	const char *iready = bt_path("iready");
	struct bt_proc *ip;

	bt_relay_beds();
	cr_assert_eq(nsbed_sh(&bt_bed[0], 1,
			      "ip addr flush dev %s && "
			      "echo 1 > /proc/sys/net/ipv6/conf/%s/disable_ipv6 && "
			      "echo 1 > /proc/sys/net/ipv6/conf/%s/disable_ipv6 && ip link set %s up",
			      bt_bed[0].ifname[1], bt_bed[0].ifname[1], bt_bed[1].ifname[0], bt_bed[1].ifname[0]),
		     0);
	cr_assert_eq(nsbed_sh(&bt_bed[0], 0, "ethtool -K %s tso off gso off tx-udp-segmentation off >/dev/null",
			      bt_bed[0].ifname[0]),
		     0);
	const char *iargv[] = { bt_prog("impair"), "relay", "--netns", bt_bed[0].ns[1], "--a", bt_bed[0].ifname[1],
				"--b", bt_bed[1].ifname[0], "--loss", loss, "--delay", delay, "--seed", "11",
				"--json", "--ready-file", iready, NULL };
	ip = bt_spawn(iargv);
	bt_wait_file(iready, ip, 10);
	return ip;
}

/* Stop the relay; it must have seen the transfer (more than 1000 frames) and lost some of it. */
static inline void serve_relay_check(struct bt_proc *ip, const char *tag)
{
	const char *ij;

	bt_stop(ip, 10);
	ij = bt_read(ip->out);
	cr_log_info("%s: relay: %s", tag, ij);
	cr_assert_gt(bt_num(ij, "fwd_rx"), 1000, "%s", ij);
	cr_assert_gt(bt_num(ij, "fwd_lost"), 0, "%s", ij);
}

/*
 * A server's --json report at exit (gsohttpd's, gsoquicd's): every device
 * buffer back in its pool ("balanced": true, chunks_free == chunks_total),
 * no connection open ("open_at_exit" 0), exactly the descriptors it had
 * at the start ("at_exit" == "at_start": the steering program's are
 * released too).  Returns the report.
 */
static inline const char *serve_expect_no_leaks(const char *json_path, const char *name)
{
	const char *j = bt_read(json_path);

	cr_assert(j[0], "%s: no --json report at %s", name, json_path);
	cr_log_info("%s report: %s", name, j);
	cr_assert_not_null(strstr(j, "\"balanced\": true"), "buffers not all back: %s", j);
	cr_assert_gt(bt_num(j, "chunks_total"), 0, "%s", j);
	cr_assert_eq(bt_num(j, "chunks_free"), bt_num(j, "chunks_total"), "buffers leaked: %s", j);
	cr_assert_eq(bt_num(j, "open_at_exit"), 0, "connections leaked: %s", j);
	cr_assert_eq(bt_num(j, "at_exit"), bt_num(j, "at_start"), "descriptors leaked: %s", j);
	return j;
}

#endif
