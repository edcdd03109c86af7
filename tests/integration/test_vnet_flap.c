/*
 * The virtio_net_hdr device across link flaps: qdisc bypass drops every
 * frame while the link has no carrier (packet_direct_xmit answers
 * ENOBUFS), which must read as "the link is down" (the frame waits, the
 * kick says -ENETDOWN), not as "the device cannot segment" (which turns
 * bypass off for good).  Flapped both ways on the tests' veth: the peer
 * down (our side up without carrier) and our own side down and up.
 * Every frame sent must reach side b's UDP socket once the link is back.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <gso/csum.h>
#include <gso/dev.h>
#include <gso/offload.h>
#include <gso/vnet.h>

#include "gso_test.h"

#define PORT 5421

static struct nsbed tb;
static int usock = -1;

static void fini(void)
{
	if (usock >= 0)
		close(usock);
	usock = -1;
	nsbed_destroy(&tb);
}

/* A whole UDP/IPv4 frame from side a to side b's socket, checksum 0 (none). */
static size_t frame(uint8_t *f, uint32_t seq)
{
	uint8_t *ip = f + 14, *udp = ip + 20;
	uint16_t tot = 20 + 8 + 4;

	memcpy(f, tb.mac[1], 6);
	memcpy(f + 6, tb.mac[0], 6);
	f[12] = 0x08;
	f[13] = 0x00;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	inet_pton(AF_INET, "10.77.0.1", ip + 12);
	inet_pton(AF_INET, "10.77.0.2", ip + 16);
	{
		uint16_t c = gso_csum_finish(gso_csum_partial(ip, 20, 0));

		memcpy(ip + 10, &c, 2);
	}
	udp[0] = 0x9c;
	udp[1] = 0x40;
	udp[2] = (uint8_t)(PORT >> 8);
	udp[3] = (uint8_t)PORT;
	udp[4] = 0;
	udp[5] = 12;
	udp[6] = udp[7] = 0;
	memcpy(udp + 8, &seq, 4);
	return 14 + tot;
}

static int send_one(struct gso_dev *dev, uint32_t seq)
{
	struct gso_vnet_hdr h = { 0 };
	uint8_t f[128];
	int err = gso_vnet__send_frame(dev, &h, f, frame(f, seq));

	return err ? err : gso_dev__kick(dev);
}

/* Kick until the device has taken everything (the link is back), within 5 s. */
static void kick_until_sent(struct gso_dev *dev)
{
	int err = -EAGAIN;

	for (int i = 0; i < 500 && err; i++) {
		err = gso_dev__kick(dev);
		if (err)
			usleep(10000);
	}
	cr_assert_eq(err, 0, "kick after the flap: %s", strerror(-err));
}

/* The datagrams side b got, by sequence number (each once). */
static unsigned received(uint32_t n)
{
	unsigned got = 0;
	uint8_t buf[64];
	bool seen[16] = { false };
	struct pollfd p = { .fd = usock, .events = POLLIN };

	while (poll(&p, 1, 1000) == 1) {
		uint32_t s;

		if (recv(usock, buf, sizeof(buf), 0) != 4)
			continue;
		memcpy(&s, buf, 4);
		if (s < n && !seen[s]) {
			seen[s] = true;
			got++;
		}
		if (got == n)
			break;
	}
	return got;
}

static struct gso_dev *setup(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	struct gso_dev *dev;

	gso_test_require_root();
	cr_assert_eq(gso_testbed_create(&tb), 0);
	/* Static neighbours: the frames carry the MACs, but b's reply-less UDP needs none. */
	cr_assert_eq(nsbed_enter(&tb, 1), 0);
	usock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	inet_pton(AF_INET, "10.77.0.2", &a.sin_addr);
	cr_assert_eq(bind(usock, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(nsbed_enter(&tb, 0), 0);
	cr_assert_eq(gso_vnet__create(&dev, tb.ifindex[0], NULL), 0);
	cr_assert(strstr(gso_dev__name(dev), "bypass"), "%s", gso_dev__name(dev));
	cr_assert_eq(send_one(dev, 0), 0);
	cr_assert_eq(received(1), 1, "a frame before the flap");
	return dev;
}

Test(vnet_flap, peer_down_keeps_bypass, .fini = fini, .timeout = 60)
{
	struct gso_dev *dev = setup();
	int err;

	/* The peer down: our side stays up, without carrier. */
	cr_assert_eq(nsbed_sh(&tb, 1, "ip link set %s down", tb.ifname[1]), 0);
	err = send_one(dev, 1);
	cr_assert(err == -ENETDOWN || err == -EAGAIN || err == 0, "send without carrier: %s", strerror(-err));
	cr_assert(strstr(gso_dev__name(dev), "bypass"), "no carrier turned qdisc bypass off: %s", gso_dev__name(dev));
	cr_assert_eq(nsbed_sh(&tb, 1, "ip link set %s up", tb.ifname[1]), 0);
	kick_until_sent(dev);
	cr_assert_eq(send_one(dev, 2), 0);
	cr_assert(strstr(gso_dev__name(dev), "bypass"), "after the flap: %s", gso_dev__name(dev));
	cr_assert_geq(received(3), 2, "the frames after the flap arrive");
	gso_dev__destroy(dev);
}

Test(vnet_flap, own_flap_keeps_bypass, .fini = fini, .timeout = 60)
{
	struct gso_dev *dev = setup();

	for (uint32_t k = 0; k < 5; k++) {
		int err;

		cr_assert_eq(nsbed_sh(&tb, 0, "ip link set %s down && ip link set %s up", tb.ifname[0], tb.ifname[0]), 0);
		/* Right after up: the link may not carry yet; the frame waits, it is not lost. */
		err = send_one(dev, 1 + k);
		cr_assert(err == -ENETDOWN || err == -EAGAIN || err == 0, "flap %u: %s", k, strerror(-err));
		kick_until_sent(dev);
		cr_assert(strstr(gso_dev__name(dev), "bypass"), "flap %u turned qdisc bypass off: %s", k,
			  gso_dev__name(dev));
	}
	gso_dev__destroy(dev);
}
