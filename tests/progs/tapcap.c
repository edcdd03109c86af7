/*
 * tapcap: capture every frame on one interface (both directions, in the
 * calling network namespace) into a pcap file, for checking a test-bed's
 * traffic independently of the programs that made it (streamcheck reads
 * the file).  libpcap does the capturing: on Linux it is an AF_PACKET
 * socket with a TPACKET_V3 ring, whose blocks hold frames packed by
 * their real size, whole super-packets included (a 64 KiB GSO frame
 * crossing a virtio tap is kept whole).  The ring is large (--ring-mb) so that
 * a few Gbit/s for a few seconds fit while the file is written.
 *
 * Readiness: --ready-file is written (and renamed into place, so a reader
 * never sees it half written) after the socket is bound and the output
 * file is open, so a script can wait for it before starting traffic.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pcap/pcap.h>

#include "tool_pcap.h"
#include "tool_util.h"

#define EXIT_DROPPED 1 /* the file is complete as far as it goes, the kernel dropped frames */
#define EXIT_USAGE 2
#define EXIT_FAILED 3  /* capture or output failed */

#define BLOCK_MS 10    /* the ring's block timeout */
/* After a stop signal: long enough for the kernel to hand over the last, part-filled block. */
#define DRAIN_S (5 * BLOCK_MS / 1000.0)

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tapcap [options] -i IFACE -w FILE\n"
		"\n"
		"Capture every frame IFACE sends and receives (in the current network\n"
		"namespace) into the pcap FILE (\"-\" = stdout), with nanosecond timestamps,\n"
		"until SIGINT or SIGTERM, --count frames, or --idle seconds without a frame.\n"
		"The file is flushed and closed on every one of these.\n"
		"\n"
		"options:\n"
		"  -i, --interface IFACE  interface to capture on (required)\n"
		"  -n, --netns NAME       capture in network namespace NAME (ip netns)\n"
		"                         instead of the current one\n"
		"  -w, --write FILE       output pcap file (required)\n"
		"  -s, --snaplen N        bytes kept of each frame (default and maximum\n"
		"                         %d: whole frames, GSO super-packets included;\n"
		"                         at least 64)\n"
		"  -c, --count N          stop after N frames\n"
		"  -t, --idle SECONDS     stop after SECONDS without a frame (counted from\n"
		"                         readiness until the first frame)\n"
		"  -r, --ring-mb N        kernel ring size in MiB (default 512, 4..2047; libpcap\n"
		"                         takes an int of bytes). The ring holds what the\n"
		"                         file writing falls behind by: size it to the\n"
		"                         traffic when the machine has no core to spare\n"
		"      --ready-file PATH  write PATH (containing the PID) once the socket is\n"
		"                         bound and FILE is open; removed again at exit\n"
		"  -q, --quiet            no statistics line on stderr\n"
		"  -h, --help             this text\n"
		"\n"
		"At the end one line goes to stderr:\n"
		"  tapcap: frames=N bytes=N max_frame=N kernel_frames=N kernel_drops=N if_drops=N\n"
		"(bytes and max_frame are the frames' wire lengths; kernel_* are the\n"
		"socket's counters from libpcap's pcap_stats).\n"
		"\n"
		"Exit status: 0 done, nothing dropped; 1 the kernel dropped frames (the\n"
		"file lacks them); 2 usage; 3 capture or output failed.\n",
		TOOL_PCAP_SNAPLEN);
}

struct cap {
	struct tool_pcap_out out;
	uint64_t frames, bytes, max_frame, limit;
	int err; /* first output error, -errno */
};

static void on_frame(u_char *arg, const struct pcap_pkthdr *h, const u_char *data)
{
	struct cap *c = (struct cap *)arg;
	int err;

	if (c->err || (c->limit && c->frames >= c->limit))
		return;
	err = tool_pcap_out_write(&c->out, h, data);
	if (err) {
		c->err = err;
		return;
	}
	c->frames++;
	c->bytes += h->len;
	if (h->len > c->max_frame)
		c->max_frame = h->len;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Write PATH atomically: a temporary name in the same directory, then rename. */
static int write_ready(const char *path)
{
	char tmp[4096];
	FILE *f;
	int err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "%d\n", (int)getpid());
	if (ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* Join /run/netns/NAME (as `ip netns exec` does) before the socket is made. */
static int enter_netns(const char *name)
{
	char path[4096];
	int fd, err = 0;

	if (strchr(name, '/') || snprintf(path, sizeof(path), "/run/netns/%s", name) >= (int)sizeof(path)) {
		fprintf(stderr, "tapcap: --netns %s: not a namespace name\n", name);
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		err = -errno;
		fprintf(stderr, "tapcap: --netns %s: %s\n", name, strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	return err;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interface", required_argument, NULL, 'i' },
		{ "netns", required_argument, NULL, 'n' },
		{ "write", required_argument, NULL, 'w' },
		{ "snaplen", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'c' },
		{ "idle", required_argument, NULL, 't' },
		{ "ring-mb", required_argument, NULL, 'r' },
		{ "ready-file", required_argument, NULL, 'R' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *ifname = NULL, *path = NULL, *ready = NULL, *netns = NULL;
	uint64_t snaplen = TOOL_PCAP_SNAPLEN, count = 0, idle = 0, ring_mb = 512;
	bool quiet = false, ready_written = false;
	char errbuf[PCAP_ERRBUF_SIZE];
	struct cap c = { 0 };
	struct pcap_stat st = { 0 };
	struct sigaction sa = { 0 };
	int o, rc = 0, fd;
	double last, drain_until = 0;
	pcap_t *p;

	while ((o = getopt_long(argc, argv, "i:n:w:s:c:t:r:qh", opts, NULL)) != -1) {
		uint64_t *dst = NULL, lo = 0, hi = 0;
		const char *name = "";

		switch (o) {
		case 'i': ifname = optarg; continue;
		case 'n': netns = optarg; continue;
		case 'w': path = optarg; continue;
		case 'R': ready = optarg; continue;
		case 'q': quiet = true; continue;
		case 'h': usage(stdout); return 0;
		case 's': dst = &snaplen; name = "snaplen"; lo = 64; hi = TOOL_PCAP_SNAPLEN; break;
		case 'c': dst = &count; name = "count"; lo = 1; hi = UINT64_MAX; break;
		case 't': dst = &idle; name = "idle"; lo = 1; hi = 86400; break;
		case 'r': dst = &ring_mb; name = "ring-mb"; lo = 4; hi = 2047; break;
		default: usage(stderr); return EXIT_USAGE;
		}
		if (tool_parse_u64(optarg, lo, hi, dst)) {
			fprintf(stderr, "tapcap: --%s: '%s' is not a number in [%" PRIu64 ", %" PRIu64 "]\n",
				name, optarg, lo, hi);
			return EXIT_USAGE;
		}
	}
	if (optind != argc || !ifname || !path) {
		fprintf(stderr, "tapcap: %s\n", optind != argc ? "unexpected argument" :
			"-i IFACE and -w FILE are required (--help)");
		return EXIT_USAGE;
	}
	c.limit = count;

	/* Before the socket exists, so that an early SIGTERM still closes the file. */
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (netns && enter_netns(netns))
		return EXIT_FAILED;
	p = pcap_create(ifname, errbuf);
	if (!p) {
		fprintf(stderr, "tapcap: %s: %s\n", ifname, errbuf);
		return EXIT_FAILED;
	}
	/*
	 * Not immediate mode: with it libpcap picks TPACKET_V2, whose ring has
	 * fixed slots as large as the largest frame (64 KiB once the interface
	 * has any offload on), so a 512 MiB ring held some 8000 frames of any
	 * size.  TPACKET_V3 packs frames into its blocks by their real size; a
	 * block is handed over when full or BLOCK_MS after its first frame.
	 */
	if (pcap_set_snaplen(p, (int)snaplen) || pcap_set_promisc(p, 1) ||
	    pcap_set_buffer_size(p, (int)(ring_mb << 20)) || pcap_set_timeout(p, BLOCK_MS) ||
	    pcap_set_tstamp_precision(p, PCAP_TSTAMP_PRECISION_NANO)) {
		fprintf(stderr, "tapcap: %s: cannot set capture options\n", ifname);
		pcap_close(p);
		return EXIT_FAILED;
	}
	o = pcap_activate(p);
	if (o < 0) {
		fprintf(stderr, "tapcap: %s: %s\n", ifname,
			o == PCAP_ERROR ? pcap_geterr(p) : pcap_statustostr(o));
		pcap_close(p);
		return EXIT_FAILED;
	}
	if (o > 0) /* a warning: capture works */
		fprintf(stderr, "tapcap: %s: warning: %s\n", ifname, pcap_statustostr(o));
	if (pcap_datalink(p) != DLT_EN10MB) {
		fprintf(stderr, "tapcap: %s: link type %s is not Ethernet\n", ifname,
			pcap_datalink_val_to_name(pcap_datalink(p)) ?: "?");
		pcap_close(p);
		return EXIT_FAILED;
	}
	fd = pcap_get_selectable_fd(p);
	if (fd < 0 || pcap_setnonblock(p, 1, errbuf)) {
		fprintf(stderr, "tapcap: %s: no pollable descriptor: %s\n", ifname, errbuf);
		pcap_close(p);
		return EXIT_FAILED;
	}
	o = tool_pcap_out_open(&c.out, path, PCAP_TSTAMP_PRECISION_NANO, NULL, errbuf);
	if (o) {
		fprintf(stderr, "tapcap: %s: %s\n", path, errbuf);
		pcap_close(p);
		return EXIT_FAILED;
	}
	if (ready) {
		o = write_ready(ready);
		if (o) {
			fprintf(stderr, "tapcap: --ready-file %s: %s\n", ready, strerror(-o));
			rc = EXIT_FAILED;
			goto out;
		}
		ready_written = true;
	}

	last = now_s();
	while (!c.err && !(count && c.frames >= count)) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t before = c.frames;
		int n;

		/* Frames that came before the signal are still in an open block: drain them. */
		if (stop_sig && !drain_until)
			drain_until = now_s() + DRAIN_S;
		if (drain_until && now_s() >= drain_until)
			break;
		/* 100 ms: the longest a signal or the idle timeout waits to be seen. */
		n = poll(&pfd, 1, drain_until ? BLOCK_MS : 100);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "tapcap: poll: %s\n", strerror(errno));
			rc = EXIT_FAILED;
			break;
		}
		do {
			n = pcap_dispatch(p, -1, on_frame, (u_char *)&c);
		} while (n > 0 && !c.err && !(count && c.frames >= count));
		if (n == PCAP_ERROR) {
			fprintf(stderr, "tapcap: %s: %s\n", ifname, pcap_geterr(p));
			rc = EXIT_FAILED;
			break;
		}
		if (c.frames != before)
			last = now_s();
		else if (!drain_until && idle && now_s() - last >= (double)idle)
			break;
	}
	if (pcap_stats(p, &st)) {
		fprintf(stderr, "tapcap: %s: no statistics: %s\n", ifname, pcap_geterr(p));
		rc = EXIT_FAILED;
	}
out:
	pcap_close(p);
	o = tool_pcap_out_close(&c.out);
	if (!o)
		o = c.err;
	if (o) {
		fprintf(stderr, "tapcap: %s: %s\n", path, strerror(-o));
		rc = EXIT_FAILED;
	}
	if (ready_written)
		unlink(ready);
	if (!quiet)
		fprintf(stderr,
			"tapcap: frames=%" PRIu64 " bytes=%" PRIu64 " max_frame=%" PRIu64
			" kernel_frames=%u kernel_drops=%u if_drops=%u\n",
			c.frames, c.bytes, c.max_frame, st.ps_recv, st.ps_drop, st.ps_ifdrop);
	if (!rc && st.ps_drop) {
		fprintf(stderr, "tapcap: the kernel dropped %u frames: the capture is incomplete "
			"(a larger --ring-mb, or a faster disk for FILE)\n", st.ps_drop);
		rc = EXIT_DROPPED;
	}
	return rc;
}
