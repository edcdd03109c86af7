/*
 * bench/sender's view of the interface it sends on: index, MAC, MTU, a
 * local address, and the next hop's MAC (the kernel's neighbour table,
 * asked to resolve it when it has no entry).
 */
#ifndef BENCH_SENDER_NET_H
#define BENCH_SENDER_NET_H

#include <stdint.h>

struct snd_if {
	int ifindex;
	uint8_t mac[6];
	uint32_t mtu;
};

/* Index, MAC and MTU of `ifname` in the current namespace.  0 or -errno. */
int snd_if_info(const char *ifname, struct snd_if *out);

/* The first address of family 4 or 6 configured on `ifname`.  0 or -errno (-ENOENT: none). */
int snd_if_addr(const char *ifname, int l3, uint8_t addr[16]);

/*
 * "aa:bb:cc:dd:ee:ff" into mac.  0 or -EINVAL.
 */
int snd_parse_mac(const char *s, uint8_t mac[6]);

/*
 * The MAC of IPv4 neighbour `addr` on `ifname`: from the kernel's table;
 * if absent, one UDP datagram (port 9, discard) makes the kernel resolve
 * it, and the table is read again for up to `wait_ms`.  0, -ENOENT, or
 * -errno.  IPv6 neighbours are not looked up (pass --dst-mac).
 */
int snd_resolve_mac(const char *ifname, const uint8_t addr[4], uint8_t mac[6], int wait_ms);

#endif
