// SPDX-License-Identifier: GPL-2.0
/*
 * Drop every frame and count it: the sink on the receiving side of the
 * packet-rate benchmark (bench/bench_xsk_pps), so that what a sender
 * costs is measured without a receive stack behind it, and the frames
 * that really crossed the link are counted where they arrive.
 * Per-CPU counters: [0] frames, [1] bytes.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} xdp_drop_cnt SEC(".maps");

SEC("xdp.frags")
int xdp_drop(struct xdp_md *ctx)
{
	__u32 k = 0;
	__u64 *c = bpf_map_lookup_elem(&xdp_drop_cnt, &k);

	if (c)
		*c += 1;
	k = 1;
	c = bpf_map_lookup_elem(&xdp_drop_cnt, &k);
	if (c)
		*c += bpf_xdp_get_buff_len(ctx);
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
