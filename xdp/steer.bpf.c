// SPDX-License-Identifier: GPL-2.0
/*
 * ACK steering: frames of registered flows go to the AF_XDP socket bound
 * to the queue they arrived on; everything else goes on to the kernel (or
 * to the next program when libxdp's dispatcher runs several).  Loaded and
 * fed by xdp/steer.c (gso_steer__*).
 *
 * A flow is the 5-tuple as the frame carries it (source = the remote
 * end), IPv4 or IPv6, TCP or UDP, behind at most one VLAN tag.  What is
 * never steered, because the kernel needs all of it or we cannot name the
 * flow: IP fragments (a first fragment would leave the rest stranded),
 * IPv6 with extension headers, truncated headers.
 *
 * bpf_redirect_map() with XDP_PASS as its fallback: a matched frame on a
 * queue without a socket in the map reaches the kernel instead of being
 * dropped, so a flow registered before its socket loses nothing.
 *
 * "xdp.frags": without it, attaching to a veth switches off the peer's
 * TSO and caps the MTU.  Only the first buffer is read.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "steer_map.h"

/* Sizes are set by the loader before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct steer_key);
	__type(value, struct steer_val);
} gso_steer_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} gso_steer_xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STEER_C_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} gso_steer_cnt SEC(".maps");

/* libxdp run config: early in a dispatcher chain, and go on after XDP_PASS. */
struct {
	__uint(priority, 10);
	__uint(XDP_PASS, 1);
} _gso_steer SEC(".xdp_run_config");

#define VLAN_HLEN 4
#define IP_MF 0x2000
#define IP_OFFSET 0x1fff

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&gso_steer_cnt, &idx);

	if (c)
		*c += 1;
}

/* Fill `k` from the frame; returns 0 when the frame is not a flow we can name. */
static __always_inline int parse(void *data, void *end, struct steer_key *k)
{
	struct ethhdr *eth = data;
	void *l3 = eth + 1;
	__u16 proto, *ports;

	if (l3 > end)
		return 0;
	proto = eth->h_proto;
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		if (l3 + VLAN_HLEN > end)
			return 0;
		proto = *(__u16 *)(l3 + 2);
		l3 += VLAN_HLEN;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = l3;

		if ((void *)(ip + 1) > end || ip->ihl < 5)
			return 0;
		if (ip->frag_off & bpf_htons(IP_MF | IP_OFFSET))
			return 0;
		k->l3 = 4;
		k->l4 = ip->protocol;
		__builtin_memcpy(k->saddr, &ip->saddr, 4);
		__builtin_memcpy(k->daddr, &ip->daddr, 4);
		ports = l3 + ip->ihl * 4;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = l3;

		if ((void *)(ip6 + 1) > end)
			return 0;
		k->l3 = 6;
		k->l4 = ip6->nexthdr;
		__builtin_memcpy(k->saddr, &ip6->saddr, 16);
		__builtin_memcpy(k->daddr, &ip6->daddr, 16);
		ports = (void *)(ip6 + 1);
	} else {
		return 0;
	}
	if (k->l4 != IPPROTO_TCP && k->l4 != IPPROTO_UDP)
		return 0;
	if ((void *)(ports + 2) > end)
		return 0;
	k->sport = ports[0];
	k->dport = ports[1];
	return 1;
}

SEC("xdp.frags")
int gso_steer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct steer_key k;
	struct steer_val *v;
	long act;

	__builtin_memset(&k, 0, sizeof(k));
	count(STEER_C_SEEN);
	if (!parse(data, end, &k)) {
		count(STEER_C_PASSED);
		return XDP_PASS;
	}
	v = bpf_map_lookup_elem(&gso_steer_flows, &k);
	if (!v) {
		count(STEER_C_PASSED);
		return XDP_PASS;
	}
	__sync_fetch_and_add(&v->packets, 1);
	__sync_fetch_and_add(&v->bytes, bpf_xdp_get_buff_len(ctx));
	act = bpf_redirect_map(&gso_steer_xsks, ctx->rx_queue_index, XDP_PASS);
	count(act == XDP_REDIRECT ? STEER_C_STEERED : STEER_C_NO_SOCKET);
	return (int)act;
}

char _license[] SEC("license") = "GPL";
