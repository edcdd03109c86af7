// SPDX-License-Identifier: GPL-2.0
/*
 * Random loss for the bench test-bed: attached to the receiving veth, it
 * drops each matching packet with a probability set from user space and
 * counts what it saw and dropped.  netem is not available on this kernel;
 * this is the stand-in for its `loss` option.  Loaded and read by
 * bench/impair (`impair xdp`, bench/testbed/common/xdploss.c).
 *
 * Matching: ARP and other non-IP frames always pass (losing ARP would only
 * stall the start); IPv4/IPv6 frames match when cfg.proto is 0 or their L4
 * protocol, and cfg.port is 0 or their source or destination port.
 * IPv6 extension headers are not walked (such packets match only proto 0).
 *
 * Randomness: cfg.seed 0 uses bpf_get_prandom_u32(); any other value runs
 * a per-CPU xorshift64* seeded from it, so a run that sees the same
 * packets on the same CPUs drops the same ones.
 *
 * "xdp.frags": a sender whose veth has TSO on hands the peer multi-page
 * super-packets; a program without frags support would make veth refuse
 * them.  One such super-packet is one packet here (and is dropped whole).
 *
 * The map value layouts are mirrored in bench/testbed/common/xdploss.h.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct impair_loss_cfg {
	__u32 threshold; /* drop when a 32-bit random number is below this */
	__u8 proto;      /* 0 = any IP protocol, else IPPROTO_* */
	__u8 pad;
	__u16 port;      /* host order, 0 = any */
	__u64 seed;      /* 0 = bpf_get_prandom_u32 */
};

struct impair_loss_stats {
	__u64 seen;          /* every frame */
	__u64 matched;       /* frames the loss applies to */
	__u64 dropped;
	__u64 dropped_bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct impair_loss_cfg);
} impair_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct impair_loss_stats);
} impair_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} impair_rng SEC(".maps");

static __always_inline __u32 next_random(const struct impair_loss_cfg *cfg)
{
	__u32 key = 0;
	__u64 *st, x;

	if (!cfg->seed)
		return bpf_get_prandom_u32();
	st = bpf_map_lookup_elem(&impair_rng, &key);
	if (!st)
		return bpf_get_prandom_u32();
	x = *st;
	if (!x)
		x = cfg->seed ^ ((__u64)(bpf_get_smp_processor_id() + 1) * 0x9e3779b97f4a7c15ull);
	if (!x)
		x = 1;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*st = x;
	return (__u32)((x * 0x2545f4914f6cdd1dull) >> 32);
}

/* L4 protocol and ports of an IP frame; returns 0 when it is not IP. */
static __always_inline int parse(void *data, void *end, __u8 *proto, __u16 *sport, __u16 *dport)
{
	struct ethhdr *eth = data;
	__u16 *ports = 0;

	if ((void *)(eth + 1) > end)
		return 0;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end || ip->ihl < 5)
			return 0;
		*proto = ip->protocol;
		/* Only first fragments carry ports. */
		if (!(ip->frag_off & bpf_htons(0x1fff)))
			ports = (void *)ip + ip->ihl * 4;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return 0;
		*proto = ip6->nexthdr;
		ports = (void *)(ip6 + 1);
	} else {
		return 0;
	}
	*sport = *dport = 0;
	if (ports && (*proto == IPPROTO_TCP || *proto == IPPROTO_UDP) && (void *)(ports + 2) <= end) {
		*sport = bpf_ntohs(ports[0]);
		*dport = bpf_ntohs(ports[1]);
	}
	return 1;
}

SEC("xdp.frags")
int impair_loss(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct impair_loss_cfg *cfg;
	struct impair_loss_stats *s;
	__u16 sport, dport;
	__u32 key = 0;
	__u8 proto;

	cfg = bpf_map_lookup_elem(&impair_cfg, &key);
	s = bpf_map_lookup_elem(&impair_stats, &key);
	if (!cfg || !s)
		return XDP_PASS;
	s->seen++;
	if (!parse(data, end, &proto, &sport, &dport))
		return XDP_PASS;
	if (cfg->proto && cfg->proto != proto)
		return XDP_PASS;
	if (cfg->port && cfg->port != sport && cfg->port != dport)
		return XDP_PASS;
	s->matched++;
	if (cfg->threshold && next_random(cfg) < cfg->threshold) {
		s->dropped++;
		s->dropped_bytes += bpf_xdp_get_buff_len(ctx);
		return XDP_DROP;
	}
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
