#include "sender_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int snd_if_info(const char *ifname, struct snd_if *out)
{
	struct ifreq ifr;
	int fd, err = 0;

	if (strlen(ifname) >= IFNAMSIZ)
		return -EINVAL;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, ifname);
	if (ioctl(fd, SIOCGIFINDEX, &ifr) < 0) {
		err = -errno;
		goto out;
	}
	out->ifindex = ifr.ifr_ifindex;
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		err = -errno;
		goto out;
	}
	memcpy(out->mac, ifr.ifr_hwaddr.sa_data, 6);
	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0) {
		err = -errno;
		goto out;
	}
	out->mtu = (uint32_t)ifr.ifr_mtu;
out:
	close(fd);
	return err;
}

int snd_if_addr(const char *ifname, int l3, uint8_t addr[16])
{
	struct ifaddrs *ifa, *i;
	int err = -ENOENT;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
			continue;
		memset(addr, 0, 16);
		if (l3 == 4 && i->ifa_addr->sa_family == AF_INET) {
			memcpy(addr, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
			err = 0;
			break;
		}
		if (l3 == 6 && i->ifa_addr->sa_family == AF_INET6 &&
		    !IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr)) {
			memcpy(addr, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
			err = 0;
			break;
		}
	}
	freeifaddrs(ifa);
	return err;
}

int snd_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char tail;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		if (v[i] > 255)
			return -EINVAL;
		mac[i] = (uint8_t)v[i];
	}
	return 0;
}

/* /proc/net/arp: "IP address  HW type  Flags  HW address  Mask  Device". */
static int arp_lookup(const char *ifname, const uint8_t addr[4], uint8_t mac[6])
{
	char line[256], ip[64], hw[64], dev[64], want[INET_ADDRSTRLEN];
	unsigned type, flags;
	FILE *f = fopen("/proc/net/arp", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	inet_ntop(AF_INET, addr, want, sizeof(want));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s 0x%x 0x%x %63s %*s %63s", ip, &type, &flags, hw, dev) != 5)
			continue;
		/* ATF_COM (0x2): the entry is complete. */
		if (!strcmp(ip, want) && !strcmp(dev, ifname) && (flags & 0x2) && !snd_parse_mac(hw, mac)) {
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

int snd_resolve_mac(const char *ifname, const uint8_t addr[4], uint8_t mac[6], int wait_ms)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(9) };
	int fd, err = arp_lookup(ifname, addr, mac);

	if (err != -ENOENT)
		return err;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname));
	memcpy(&sa.sin_addr, addr, 4);
	sendto(fd, "", 1, MSG_DONTWAIT, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	for (int t = 0; t < wait_ms; t += 10) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		err = arp_lookup(ifname, addr, mac);
		if (err != -ENOENT)
			break;
	}
	return err;
}
