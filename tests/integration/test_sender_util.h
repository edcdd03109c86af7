/*
 * Shared by the bench/sender integration tests (test_sender*.c): a
 * test-bed plus a veth pair with 2 queues on each side (the e1000 model
 * needs a second queue for its wire; the peer's 2 transmit queues make the
 * sender listen on both), one receiver + sender transfer with both JSON
 * outputs kept, and the "every byte verified, UMEM balanced" check.
 */
#ifndef TEST_SENDER_UTIL_H
#define TEST_SENDER_UTIL_H

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "test_bench_util.h"

#define IF_A "sq0"
#define IF_B "sq1"
#define ADDR_A "10.76.0.1"
#define ADDR_B "10.76.0.2"
#define ADDR6_A "fd76::1"
#define ADDR6_B "fd76::2"

static struct nsbed tb;

static inline void fini(void)
{
	bt_fini();
	nsbed_destroy(&tb);
}

/* The test-bed plus a veth pair with 2 queues on each side. */
static inline void bed(void)
{
	gso_test_require_root();
	cr_assert_eq(gso_testbed_create(&tb), 0);
	cr_assert_eq(nsbed_sh(&tb, 0,
			      "ip link add " IF_A " numtxqueues 2 numrxqueues 2 type veth peer name " IF_B
			      " netns %s numtxqueues 2 numrxqueues 2", tb.ns[1]), 0);
	cr_assert_eq(nsbed_sh(&tb, 0, "ip addr add " ADDR_A "/24 dev " IF_A " && ip -6 addr add " ADDR6_A
			      "/64 dev " IF_A " nodad && ip link set " IF_A " up"), 0);
	cr_assert_eq(nsbed_sh(&tb, 1, "ip addr add " ADDR_B "/24 dev " IF_B " && ip -6 addr add " ADDR6_B
			      "/64 dev " IF_B " nodad && ip link set " IF_B " up"), 0);
}

static inline const char *peer_mac(void)
{
	static char mac[32];
	struct ifreq ifr = { 0 };
	const uint8_t *m = (const uint8_t *)ifr.ifr_hwaddr.sa_data;
	int fd;

	/* sysfs shows the namespace it was mounted in: ask the kernel from inside side b. */
	cr_assert_eq(nsbed_enter(&tb, 1), 0);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", IF_B);
	cr_assert_eq(ioctl(fd, SIOCGIFHWADDR, &ifr), 0, "SIOCGIFHWADDR: %s", strerror(errno));
	close(fd);
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return mac;
}

struct run {
	const char *mode;        /* "kernel": bench/kernel_sender, the reference (--check is ours only) */
	const char *bytes, *time, *rcvbuf;
	const char *dst;         /* NULL: ADDR_B */
	const char *extra[8];
	int port;
	/* Called once both run (e.g. to fault the link), the sender's process given. */
	void (*during)(struct bt_proc *sender);
	double sender_timeout;   /* 0: 60 s */
	/* results */
	int sender_exit, receiver_exit;
	const char *sj, *rj;
};

/* One transfer: receiver on side b, sender on side a; both outputs kept in r.  mac NULL: the sender resolves it. */
static inline void transfer(struct run *r, const char *mac)
{
	char port[16];
	const char *ready = bt_path("ready");
	const char *rargv[BT_MAX_ARGS] = { bt_prog("receiver"), "--netns", tb.ns[1], "--once", "--json",
					   "--port", port, "--idle-timeout", "20", "--accept-timeout", "30",
					   "--ready-file", ready };
	bool kernel = !strcmp(r->mode, "kernel");
	const char *sargv[BT_MAX_ARGS] = { bt_prog(kernel ? "kernel_sender" : "sender"), "--netns", tb.ns[0],
					   "--dev", IF_A, "--dst", r->dst ? r->dst : ADDR_B, "--port", port,
					   "--seed", "2004", "--json", "--mode", r->mode, kernel ? NULL : "--check" };
	int rn = 13, sn = kernel ? 14 : 15;
	struct bt_proc *rp, *sp;

	snprintf(port, sizeof(port), "%d", r->port);
	unlink(ready);
	if (r->rcvbuf) {
		rargv[rn++] = "--rcvbuf";
		rargv[rn++] = r->rcvbuf;
	}
	if (r->bytes) {
		sargv[sn++] = "--bytes";
		sargv[sn++] = r->bytes;
	}
	if (r->time) {
		sargv[sn++] = "--time";
		sargv[sn++] = r->time;
	}
	if (mac) {
		sargv[sn++] = "--dst-mac";
		sargv[sn++] = mac;
	}
	for (int i = 0; i < 8 && r->extra[i]; i++)
		sargv[sn++] = r->extra[i];
	rp = bt_spawn(rargv);
	bt_wait_file(ready, rp, 10);
	sp = bt_spawn(sargv);
	if (r->during)
		r->during(sp);
	r->sender_exit = bt_wait(sp, r->sender_timeout > 0 ? r->sender_timeout : 60);
	if (r->sender_exit)
		bt_stop(rp, 5); /* a sender that failed or skipped may never have connected */
	r->receiver_exit = bt_wait(rp, 30);
	if ((r->sender_exit && r->sender_exit != 77) || r->receiver_exit) {
		bt_dump(sp, r->mode);
		bt_dump(rp, "receiver");
	}
	/* Read last: bt_read's buffers rotate, and the dumps above use them too. */
	r->sj = bt_read(sp->out);
	r->rj = bt_read(rp->out);
}

/* Every byte verified, the sender's accounting balanced. */
static inline void expect_verified(const struct run *r, double bytes)
{
	cr_assert_eq(r->sender_exit, 0, "%s: sender exit %d: %s", r->mode, r->sender_exit, r->sj);
	cr_assert_eq(r->receiver_exit, 0, "%s: receiver exit %d: %s", r->mode, r->receiver_exit, r->rj);
	cr_assert_str_eq(bt_str(r->rj, "status"), "ok", "%s: %s", r->mode, r->rj);
	cr_assert_eq(bt_num(r->rj, "bytes_verified"), bt_num(r->rj, "bytes"), "%s: %s", r->mode, r->rj);
	if (bytes > 0)
		cr_assert_eq(bt_num(r->rj, "bytes"), bytes, "%s: %s", r->mode, r->rj);
	else
		cr_assert_gt(bt_num(r->rj, "bytes"), 0, "%s: %s", r->mode, r->rj);
	cr_assert_eq(bt_num(r->sj, "bytes"), bt_num(r->rj, "bytes"), "%s: sender %s", r->mode, r->sj);
	cr_assert_str_eq(bt_str(r->sj, "status"), "ok", "%s: %s", r->mode, r->sj);
	cr_assert(strstr(r->sj, "\"umem_balanced\": true"), "%s: UMEM not balanced: %s", r->mode, r->sj);
	cr_assert_eq(bt_num(r->sj, "umem_free_at_end"), bt_num(r->sj, "umem_chunks"), "%s", r->sj);
	cr_assert_eq(bt_num(r->sj, "wnd_violations"), 0, "%s: %s", r->mode, r->sj);
	cr_assert_gt(bt_num(r->sj, "super_segments"), 0, "%s", r->sj);
}

#endif
