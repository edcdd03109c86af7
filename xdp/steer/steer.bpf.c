// SPDX-License-Identifier: GPL-2.0
/*
 * ACK steering: frames of registered flows and listener entries go to the
 * AF_XDP socket bound to the queue they arrived on; everything else goes
 * on to the kernel (or to the next program when libxdp's dispatcher runs
 * several).  Loaded and fed by xdp/steer/steer.c (gso_steer__*).
 *
 * A flow is the 5-tuple as the frame carries it (source = the remote
 * end), IPv4 or IPv6, TCP or UDP, and its VLAN: one 802.1Q tag with that
 * VLAN ID, or no tag.  A listener entry is a flow whose source address is
 * all zero and source port 0: it takes the frames to its local address
 * and port (and VLAN) from every source that has no flow of its own, so
 * a server sees the first segment of a connection it does not know yet.
 * Only frames to the interface's own MAC are ours.
 * What is never steered, because the kernel needs all of it, would drop
 * it, or we cannot name the flow: frames to other MACs, IP fragments (a
 * first fragment would leave the rest stranded), IPv6 with extension
 * headers, IP headers that fail the kernel's sanity checks, truncated
 * headers.  ICMP "fragmentation needed" and ICMPv6 "packet too big"
 * errors that quote a packet of a registered flow (or of a listener's
 * address and port) go where that flow's frames go: its engine follows
 * the path MTU (engine.h, "Path MTU").  The counters (steer_map.h) say
 * why each frame passed.
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

/* One entry, written by the loader after the load (zero until then: every frame passes). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct steer_cfg);
} gso_steer_cfg SEC(".maps");

/* libxdp run config: early in a dispatcher chain, and go on after XDP_PASS. */
struct {
	__uint(priority, 10);
	__uint(XDP_PASS, 1);
} _gso_steer SEC(".xdp_run_config");

#define VLAN_HLEN 4
#define VLAN_VID_MASK 0x0fff
#define IP_MF 0x2000
#define IP_OFFSET 0x1fff

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&gso_steer_cnt, &idx);

	if (c)
		*c += 1;
}

/*
 * An ICMP "fragmentation needed" (IPv4 type 3 code 4) or ICMPv6 "packet
 * too big" (type 2) at `icmp`: `k` becomes the key of the flow whose
 * packet it quotes (that packet's destination is the flow's source),
 * keeping the frame's VLAN, so that the lookups below find the flow, or
 * its listener entry, as for one of its own frames.  0 when it quotes a
 * TCP or UDP packet whose ports are in the first buffer; else PASSED:
 * any other ICMP is the kernel's.  The engine checks the rest (checksums,
 * the flow, the sequence number) as the kernel would.
 */
static __always_inline int icmp_key(__u8 *icmp, void *end, struct steer_key *k)
{
	__u8 *in = icmp + 8;
	__u16 *ports;
	__u8 proto;

	if (in > (__u8 *)end)
		return STEER_C_PASSED;
	if (k->l3 == 4) {
		struct iphdr *ip = (void *)in;

		if (icmp[0] != 3 || icmp[1] != 4 || (void *)(ip + 1) > end || ip->version != 4 || ip->ihl < 5)
			return STEER_C_PASSED;
		ports = (void *)(in + ip->ihl * 4);
		proto = ip->protocol;
		__builtin_memset(k->saddr, 0, sizeof(k->saddr));
		__builtin_memset(k->daddr, 0, sizeof(k->daddr));
		__builtin_memcpy(k->saddr, &ip->daddr, 4);
		__builtin_memcpy(k->daddr, &ip->saddr, 4);
	} else {
		struct ipv6hdr *ip6 = (void *)in;

		if (icmp[0] != 2 || icmp[1] != 0 || (void *)(ip6 + 1) > end || ip6->version != 6)
			return STEER_C_PASSED;
		ports = (void *)(ip6 + 1);
		proto = ip6->nexthdr;
		__builtin_memcpy(k->saddr, &ip6->daddr, 16);
		__builtin_memcpy(k->daddr, &ip6->saddr, 16);
	}
	/* The ports and, for TCP, the sequence number the engine checks. */
	if ((proto != IPPROTO_TCP && proto != IPPROTO_UDP) || (void *)(ports + 4) > end)
		return STEER_C_PASSED;
	k->l4 = proto;
	k->sport = ports[1];
	k->dport = ports[0];
	return 0;
}

/*
 * Fill `k` from the frame, if it is to `cfg`'s MAC.  Returns 0 when it
 * names a flow we may steer, else the counter that says why it goes on
 * to the kernel.  The checks
 * are those the kernel would make before a socket ever saw the frame
 * (ip_rcv_core(), ipv6_rcv(), eth_type_trans()'s PACKET_OTHERHOST), so
 * nothing reaches the socket that the kernel would have dropped; the
 * checksums, which need the whole frame, are verified in user space.
 */
static __always_inline int parse(struct xdp_md *ctx, void *data, void *end, const struct steer_cfg *cfg,
				 struct steer_key *k, int *icmp)
{
	struct ethhdr *eth = data;
	void *l3 = eth + 1;
	__u32 len = bpf_xdp_get_buff_len(ctx), l3_off;
	__u16 proto, *ports;
	__u32 l4_len;

	if (l3 > end)
		return STEER_C_BAD_HDR;
#pragma unroll
	for (int i = 0; i < 6; i++)
		if (eth->h_dest[i] != cfg->mac[i])
			return STEER_C_OTHER_MAC;
	proto = eth->h_proto;
	/* Flows know one 802.1Q tag or none (gso_tmpl): 802.1ad, stacked and priority tags are not ours. */
	if (proto == bpf_htons(ETH_P_8021AD))
		return STEER_C_VLAN;
	if (proto == bpf_htons(ETH_P_8021Q)) {
		if (l3 + VLAN_HLEN > end)
			return STEER_C_BAD_HDR;
		k->vlan = bpf_ntohs(*(__u16 *)l3) & VLAN_VID_MASK;
		proto = *(__u16 *)(l3 + 2);
		l3 += VLAN_HLEN;
		if (!k->vlan || proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD))
			return STEER_C_VLAN;
	}
	l3_off = (__u32)(l3 - data);
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = l3;
		__u32 hl, tot;

		if ((void *)(ip + 1) > end || ip->version != 4 || ip->ihl < 5)
			return STEER_C_BAD_HDR;
		hl = ip->ihl * 4;
		tot = bpf_ntohs(ip->tot_len);
		if (l3 + hl > end || tot < hl || l3_off + tot > len)
			return STEER_C_BAD_HDR;
		if (ip->frag_off & bpf_htons(IP_MF | IP_OFFSET))
			return STEER_C_PASSED;
		k->l3 = 4;
		k->l4 = ip->protocol;
		__builtin_memcpy(k->saddr, &ip->saddr, 4);
		__builtin_memcpy(k->daddr, &ip->daddr, 4);
		ports = l3 + hl;
		l4_len = tot - hl;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = l3;

		if ((void *)(ip6 + 1) > end || ip6->version != 6)
			return STEER_C_BAD_HDR;
		l4_len = bpf_ntohs(ip6->payload_len);
		if (l3_off + sizeof(*ip6) + l4_len > len)
			return STEER_C_BAD_HDR;
		k->l3 = 6;
		k->l4 = ip6->nexthdr;
		__builtin_memcpy(k->saddr, &ip6->saddr, 16);
		__builtin_memcpy(k->daddr, &ip6->daddr, 16);
		ports = (void *)(ip6 + 1);
	} else {
		return STEER_C_PASSED;
	}
	if ((k->l3 == 4 && k->l4 == IPPROTO_ICMP) || (k->l3 == 6 && k->l4 == IPPROTO_ICMPV6)) {
		*icmp = 1;
		return icmp_key((__u8 *)ports, end, k);
	}
	if (k->l4 != IPPROTO_TCP && k->l4 != IPPROTO_UDP)
		return STEER_C_PASSED;
	/* The L4 header must fit in what the IP header says it carries, and in the frame. */
	if (l4_len < (k->l4 == IPPROTO_TCP ? 20u : 8u) || (void *)(ports + 2) > end)
		return STEER_C_BAD_HDR;
	k->sport = ports[0];
	k->dport = ports[1];
	return 0;
}

/*
 * The listener entry for `k`'s frame: the same key with the source
 * address and port zeroed (steer_map.h), VLAN and the rest kept, so that
 * a listener on a VLAN takes that VLAN's frames only.  A copy: the
 * caller's exact key is what the untagged retry below looks for.
 */
static __always_inline struct steer_val *listener_of(const struct steer_key *k)
{
	struct steer_key l = *k;

	__builtin_memset(l.saddr, 0, sizeof(l.saddr));
	l.sport = 0;
	return bpf_map_lookup_elem(&gso_steer_flows, &l);
}

SEC("xdp.frags")
int gso_steer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct steer_cfg *cfg;
	struct steer_key k;
	struct steer_val *v;
	int icmp = 0;
	__u32 zero = 0;
	long act;
	int why;

	__builtin_memset(&k, 0, sizeof(k));
	count(STEER_C_SEEN);
	cfg = bpf_map_lookup_elem(&gso_steer_cfg, &zero);
	why = cfg ? parse(ctx, data, end, cfg, &k, &icmp) : STEER_C_OTHER_MAC;
	if (why) {
		count((__u32)why);
		return XDP_PASS;
	}
	/* The exact flow first: a connection the server knows wins over its listener. */
	v = bpf_map_lookup_elem(&gso_steer_flows, &k);
	/* An entry for the ICMP errors about a flow alone: its own frames are not ours (steer_map.h). */
	if (v && (v->flags & STEER_VAL_ICMP_ONLY) && !icmp)
		v = NULL;
	/*
	 * Then the listener entry, only while the loader says there is one:
	 * a host without listeners pays nothing for them, one with listeners
	 * one lookup per frame that has no flow.
	 */
	if (!v && cfg->listeners)
		v = listener_of(&k);
	if (!v) {
		/*
		 * A registered flow's tuple with a tag its frames do not carry:
		 * say so.  Exact flows only: looking for an untagged listener
		 * entry too would cost tagged frames a second extra lookup, so a
		 * listener's address and port under a foreign tag count as passed.
		 */
		if (k.vlan) {
			k.vlan = 0;
			if (bpf_map_lookup_elem(&gso_steer_flows, &k)) {
				count(STEER_C_VLAN);
				return XDP_PASS;
			}
		}
		count(STEER_C_PASSED);
		return XDP_PASS;
	}
	/* The entry that matched counts it: the flow's, or the listener's. */
	__sync_fetch_and_add(&v->packets, 1);
	__sync_fetch_and_add(&v->bytes, bpf_xdp_get_buff_len(ctx));
	act = bpf_redirect_map(&gso_steer_xsks, ctx->rx_queue_index, XDP_PASS);
	count(act == XDP_REDIRECT ? STEER_C_STEERED : STEER_C_NO_SOCKET);
	return (int)act;
}

char _license[] SEC("license") = "GPL";
