// SPDX-License-Identifier: GPL-2.0
/*
 * The receiving veth's programs of bench_e2e's receiver beds
 * (bench/testbed/common/demobed.sh, loaded by bench/testbed/rxbed):
 *
 *   xdp_rx_pass    XDP_PASS.  Attached, it gives the veth a NAPI context
 *                  for every frame its peer sends (veth_xmit takes the
 *                  NAPI path when the receiving queue has an XDP program,
 *                  whatever the sending device's TSO), so that threaded
 *                  NAPI can run the receive on a CPU of its own.
 *   xdp_rx_cpumap  every frame to the cpumap entry of CPU rx_cpu (the
 *                  loader sets it, and the entry): the cpumap's kthread on
 *                  that CPU builds the skbs in batches and runs the stack.
 *
 * Both take multi-buffer frames (xdp.frags): a TSO sender's super-packets
 * reach the program as one frame of up to 64 KB.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} xdp_rx_cpus SEC(".maps");

/* A cpumap's key is the CPU; set by the loader before it loads the object. */
const volatile __u32 rx_cpu = 0;

SEC("xdp.frags")
int xdp_rx_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

SEC("xdp.frags")
int xdp_rx_cpumap(struct xdp_md *ctx)
{
	(void)ctx;
	return bpf_redirect_map(&xdp_rx_cpus, rx_cpu, XDP_PASS);
}

char _license[] SEC("license") = "GPL";
