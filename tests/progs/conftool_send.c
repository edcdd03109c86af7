/*
 * conftool send: each case's super-packet out of an interface, one case at
 * a time.  Nothing may be lost on the way to the capture, so after each
 * case the sender waits for the device: the backend's completions, then
 * the interface's TX packet counter, which drivers raise when the device
 * has sent the frames (Linux e1000: at TX clean-up, counting each TSO
 * segment), then a pause for whatever sits behind the wire (a host's tap
 * and its 1000-frame backlog).
 */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include <gso/tmpl.h>
#include <gso/dev.h>
#include <gso/xsk.h>
#include <gso/vnet.h>
#include <gso/e1000.h>

#include "conftool.h"
#include "tool_util.h"

/* The interface's TX packet counter from /proc/net/dev (this network namespace); -errno. */
static int64_t tx_packets(const char *ifname)
{
	char line[512];
	size_t len = strlen(ifname);
	int64_t r = -ENODEV;
	FILE *f = fopen("/proc/net/dev", "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " ");
		unsigned long long v[10];

		if (strncmp(p, ifname, len) || p[len] != ':')
			continue;
		if (sscanf(p + len + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
			   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) == 10)
			r = (int64_t)v[9];
		break;
	}
	fclose(f);
	return r;
}

static uint64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

struct sender {
	const struct conftool_send *o;
	int ifindex;
	struct gso_dev *dev; /* vnet, e1000 */
	int raw;             /* kernel: AF_PACKET with PACKET_VNET_HDR */
	uint8_t *scratch;
};

static int open_backend(struct sender *s)
{
	int err, one = 1;

	if (!strcmp(s->o->backend, "kernel")) {
		s->raw = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
		if (s->raw < 0)
			return -errno;
		if (setsockopt(s->raw, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)))
			return -errno;
		return 0;
	}
	if (!strcmp(s->o->backend, "vnet")) {
		/*
		 * Through the qdisc: with qdisc bypass a frame the driver's ring has
		 * no room for is dropped (PACKET_LOSS), and a slow device's ring
		 * (e1000 under TCG) fills; the qdisc holds it instead.
		 */
		GSO_OPTS(gso_vnet_opts, vo, .flags = GSO_VNET_F_QDISC);

		err = gso_vnet__create(&s->dev, s->ifindex, &vo);
	} else {
		GSO_OPTS(gso_e1000_opts, eo, .ring_size = 1024, .nchunks = 2048, .wire_frames = 512,
			 .xsk_mode = GSO_XSK_MODE_COPY);

		err = gso_e1000__create(&s->dev, s->ifindex, &eo);
	}
	return err;
}

/* Send one case; 0 or -errno with *step naming what failed. */
static int send_case(struct sender *s, const struct conf_case *c, const uint8_t *frame, size_t len,
		     const char **step)
{
	struct gso_tmpl t;
	size_t poff, plen;
	int r;

	if (s->raw >= 0) {
		struct sockaddr_ll ll = {
			.sll_family = AF_PACKET,
			.sll_protocol = htons(c->vlan_tci ? ETH_P_8021Q
					      : CONF_IS_V4(c->proto) ? ETH_P_IP : ETH_P_IPV6),
			.sll_ifindex = s->ifindex,
			.sll_halen = 6,
		};
		size_t hdr_diff;
		long n = conf_vnet_packet(c, frame, len, s->scratch, step, &hdr_diff);

		if (n < 0)
			return (int)n;
		memcpy(ll.sll_addr, conf_dst_mac, 6);
		*step = "sendto";
		for (;;) {
			if (sendto(s->raw, s->scratch, (size_t)n, 0, (struct sockaddr *)&ll,
				   sizeof(ll)) >= 0)
				return 0;
			/* The qdisc or the driver is full: wait, the case must not be lost. */
			if (errno != ENOBUFS && errno != EAGAIN)
				return -errno;
			usleep(1000);
		}
	}
	*step = "gso_tmpl__parse_pkt";
	r = gso_tmpl__parse_pkt(&t, frame, len, &poff, &plen);
	if (r)
		return r;
	struct gso_tx tx = { .tmpl = &t, .data = frame + poff, .len = (uint32_t)plen, .mss = c->mss };

	*step = "gso_dev__submit";
	while ((r = gso_dev__submit(s->dev, &tx, 1)) == -EAGAIN || r == -ENOBUFS) {
		gso_dev__reap(s->dev, 0);
		usleep(100);
	}
	if (r < 0)
		return r;
	/* Completions: the frame has left the backend's ring (copied, or sent by the model). */
	*step = "gso_dev__reap";
	for (uint64_t end = now_us() + 5000000u; gso_dev__inflight(s->dev) > 0;) {
		gso_dev__reap(s->dev, 0);
		if (now_us() > end)
			return -ETIMEDOUT;
		usleep(50);
	}
	return 0;
}

static void print_tso_stats(struct gso_dev *dev)
{
	struct gso_tso_stats st = { .sz = sizeof(st) };
	char why[512];
	size_t at = 0;

	if (gso_tso__stats(dev, &st))
		return;
	why[0] = 0;
	for (unsigned i = 0; i < GSO_TSO_WHY_COUNT; i++)
		if (st.why[i] && at < sizeof(why))
			at += (size_t)snprintf(why + at, sizeof(why) - at, " %s %" PRIu64,
					       gso_tso_why_name(i) ? gso_tso_why_name(i) : "unknown", st.why[i]);
	fprintf(stderr, "conftool: %s: %" PRIu64 " super-packets handed whole to what is below, %" PRIu64
		" segmented by libgso, %" PRIu64 " single; by reason:%s\n", gso_dev__name(dev),
		st.offloaded, st.software, st.single, why);
}

int conftool_send(const struct conftool_send *o, const struct conftool_sel *sel,
		  const struct conf_set *cs)
{
	static uint8_t frame[CONF_FRAME_MAX];
	struct sender s = { .o = o, .raw = -1 };
	unsigned sent = 0, frames = 0, failed = 0, short_count = 0, refused = 0, cwr = 0;
	int64_t before, counted = 0;
	struct ifreq ifr = { 0 };
	uint64_t t0;
	int err, fd;

	s.ifindex = (int)if_nametoindex(o->ifname);
	if (!s.ifindex) {
		fprintf(stderr, "conftool: --ifname %s: %s\n", o->ifname, strerror(errno));
		return TOOL_EXIT_USAGE;
	}
	/* A case whose frames the interface cannot carry would be lost or refused: say so first. */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o->ifname);
	if (fd < 0 || ioctl(fd, SIOCGIFMTU, &ifr)) {
		fprintf(stderr, "conftool: %s: reading the MTU: %s\n", o->ifname, strerror(errno));
		if (fd >= 0)
			close(fd);
		return TOOL_EXIT_USAGE;
	}
	close(fd);
	for (unsigned i = 0; i < cs->n; i++) {
		if (conf_max_ip_len(&cs->c[i]) > (uint32_t)ifr.ifr_mtu) {
			fprintf(stderr, "conftool: case %u needs an MTU of %u, %s has %d: pass --mtu %d "
				"to send and to expect (or raise the MTU)\n", cs->c[i].idx,
				conf_max_ip_len(&cs->c[i]), o->ifname, ifr.ifr_mtu, ifr.ifr_mtu);
			return TOOL_EXIT_USAGE;
		}
	}
	s.scratch = malloc(CONF_FRAME_MAX + 64);
	err = s.scratch ? open_backend(&s) : -ENOMEM;
	if (err) {
		fprintf(stderr, "conftool: opening the %s backend on %s: %s\n", o->backend, o->ifname,
			strerror(-err));
		if (s.raw >= 0)
			close(s.raw);
		free(s.scratch);
		return TOOL_EXIT_USAGE;
	}
	conftool_print_selection(stderr, sel, cs);
	fprintf(stderr, "conftool: sending on %s (MTU %d) through %s\n", o->ifname, ifr.ifr_mtu,
		s.dev ? gso_dev__name(s.dev) : "AF_PACKET + PACKET_VNET_HDR");
	t0 = now_us();
	for (unsigned i = 0; i < cs->n; i++) {
		const struct conf_case *c = &cs->c[i];
		size_t l4, len = conf_build_frame(c, sel->src_mac, frame, &l4);
		unsigned want = conf_frames(c);
		const char *step = "";

		if (c->refused) {
			fprintf(stderr, "conftool: case %u skipped: %s (the kernel refuses it)\n", c->idx,
				c->what);
			refused++;
			continue;
		}
		before = tx_packets(o->ifname);
		err = send_case(&s, c, frame, len, &step);
		if (err) {
			fprintf(stderr, "conftool: case %u: %s: %s\n", c->idx, step, strerror(-err));
			failed++;
			continue;
		}
		sent++;
		frames += want;
		cwr += CONF_IS_TCP(c->proto) && (c->flags & GSO_TCP_CWR) && want > 1;
		if (before >= 0 && o->wait_ms) {
			uint64_t end = now_us() + (uint64_t)o->wait_ms * 1000u;
			int64_t now;

			while ((now = tx_packets(o->ifname)) >= 0 && now - before < want &&
			       now_us() < end)
				usleep(100);
			/* Other traffic (ND, ARP) counts too: a count past `want` is no error. */
			if (now >= 0 && now - before < want) {
				fprintf(stderr, "conftool: case %u: %s counted %" PRId64 " of %u frames "
					"within %u ms\n", c->idx, o->ifname, now - before, want,
					o->wait_ms);
				short_count++;
			}
			counted += now >= 0 ? now - before : 0;
		}
		if (o->gap_us)
			usleep(o->gap_us);
	}
	fprintf(stderr, "conftool: sent %u cases (%u frames expected) in %.1f s, %u failed, %u refused "
		"skipped, %u short of the device count; %s counted %" PRId64 " TX packets meanwhile\n",
		sent, frames, (double)(now_us() - t0) / 1e6, failed, refused, short_count, o->ifname,
		counted);
	if (cwr && s.dev && !strcmp(o->backend, "vnet"))
		fprintf(stderr, "conftool: %u segmented cases carry CWR: handed to the kernel whole with "
			"the ECN bit; a driver without TSO_ECN (Linux's e1000) has the kernel segment them "
			"in software (CWR on the first frame only), so QEMU's e1000, which would keep CWR "
			"on every frame, never segments them\n", cwr);
	else if (cwr && s.dev)
		fprintf(stderr, "conftool: %u segmented cases carry CWR: the e1000 model would keep it on "
			"every frame, so libgso segments them in software (auto mode, reason \"ecn\"; "
			"IPv6 ones already for \"proto\")\n", cwr);
	if (s.dev)
		print_tso_stats(s.dev);
	gso_dev__destroy(s.dev);
	if (s.raw >= 0)
		close(s.raw);
	free(s.scratch);
	return failed || short_count ? TOOL_EXIT_BAD_RECORDS : TOOL_EXIT_OK;
}
