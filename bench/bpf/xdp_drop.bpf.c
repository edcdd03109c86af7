// SPDX-License-Identifier: GPL-2.0
/*
 * Drop every frame and count it: the sink on the receiving side of the
 * packet-rate benchmarks (bench/bench_xsk_pps, bench/bench_scale), so
 * that what a sender costs is measured without a receive stack behind it,
 * and the frames that really crossed the link are counted where they
 * arrive.  Per-CPU counters: [0] frames, [1] bytes, [2 + q] frames that
 * arrived on receive queue q (q < XDP_DROP_QUEUES; a veth delivers a frame
 * sent on its peer's transmit queue q to receive queue q), so that a
 * multi-queue sender can be checked queue by queue.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define XDP_DROP_QUEUES 64

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 + XDP_DROP_QUEUES);
	__type(key, __u32);
	__type(value, __u64);
} xdp_drop_cnt SEC(".maps");

static __always_inline void add(__u32 k, __u64 v)
{
	__u64 *c = bpf_map_lookup_elem(&xdp_drop_cnt, &k);

	if (c)
		*c += v;
}

SEC("xdp.frags")
int xdp_drop(struct xdp_md *ctx)
{
	add(0, 1);
	add(1, bpf_xdp_get_buff_len(ctx));
	if (ctx->rx_queue_index < XDP_DROP_QUEUES)
		add(2 + ctx->rx_queue_index, 1);
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
