/*
 * rxbed: the receiving veth's XDP program for bench_e2e's receiver beds
 * (bench/testbed/common/demobed.sh).  Run inside the receiver's namespace:
 *
 *   rxbed --dev DEV pass             attach xdp_rx_pass (XDP_PASS): the veth
 *                                    then takes every frame of its peer
 *                                    through its NAPI context (threaded
 *                                    NAPI can run it on another CPU)
 *   rxbed --dev DEV cpumap --cpu N   attach xdp_rx_cpumap, every frame to
 *                                    a cpumap entry for CPU N (its kthread
 *                                    builds the skbs, in batches, there)
 *   rxbed --dev DEV off              detach whatever XDP program DEV has
 *
 * Native (driver) XDP, attached through netlink: it stays when rxbed exits,
 * until "off" or the veth goes.  Options: --obj PATH (default
 * <exe>/../bpf/xdp_rxbed.bpf.o), --qsize N (the cpumap's queue, default
 * 2048 frames).  Exit 0 when attached (or detached), 1 on error.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "util.h"

static int quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l;
	(void)f;
	(void)ap;
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: rxbed --dev DEV [--obj PATH] [--qsize N] pass | cpumap --cpu N | off\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *what = NULL, *objp = NULL, *step;
	char path[PATH_MAX];
	long cpu = -1, qsize = 2048;
	struct bpf_object *obj;
	struct bpf_program *prog;
	int ifindex, err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dev") && i + 1 < argc)
			dev = argv[++i];
		else if (!strcmp(argv[i], "--obj") && i + 1 < argc)
			objp = argv[++i];
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--qsize") && i + 1 < argc)
			qsize = strtol(argv[++i], NULL, 10);
		else if (argv[i][0] != '-' && !what)
			what = argv[i];
		else
			return usage();
	}
	if (!dev || !what)
		return usage();
	ifindex = (int)if_nametoindex(dev);
	if (!ifindex) {
		fprintf(stderr, "rxbed: no device %s\n", dev);
		return 1;
	}
	if (!strcmp(what, "off")) {
		err = bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
		if (err)
			fprintf(stderr, "rxbed: detach from %s: %s\n", dev, strerror(-err));
		return err ? 1 : 0;
	}
	if (strcmp(what, "pass") && strcmp(what, "cpumap"))
		return usage();
	if (!strcmp(what, "cpumap") && (cpu < 0 || qsize <= 0))
		return usage();
	if (!objp) {
		snprintf(path, sizeof(path), "%s/../bpf/xdp_rxbed.bpf.o", bench_exe_dir());
		objp = path;
	}
	libbpf_set_print(quiet);
	step = "open";
	obj = bpf_object__open_file(objp, NULL);
	if (!obj) {
		err = -errno;
		goto fail;
	}
	if (!strcmp(what, "cpumap")) {
		/* The program's rx_cpu (its .rodata), before the load freezes it. */
		struct bpf_map *ro = bpf_object__find_map_by_name(obj, ".rodata");
		__u32 c = (__u32)cpu;

		step = "set rx_cpu";
		if (!ro || cpu >= 64) {
			err = -EINVAL;
			goto fail;
		}
		err = bpf_map__set_initial_value(ro, &c, sizeof(c));
		if (err)
			goto fail;
	}
	step = "load";
	err = bpf_object__load(obj);
	if (err)
		goto fail;
	step = "find";
	prog = bpf_object__find_program_by_name(obj, !strcmp(what, "pass") ? "xdp_rx_pass" : "xdp_rx_cpumap");
	if (!prog) {
		err = -ENOENT;
		goto fail;
	}
	if (!strcmp(what, "cpumap")) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, "xdp_rx_cpus");
		struct bpf_cpumap_val v = { .qsize = (__u32)qsize };
		__u32 key = (__u32)cpu;

		step = "cpumap entry";
		if (!m) {
			err = -ENOENT;
			goto fail;
		}
		/* A cpumap's key is the CPU its kthread runs on. */
		err = bpf_map_update_elem(bpf_map__fd(m), &key, &v, BPF_ANY);
		if (err) {
			err = -errno;
			goto fail;
		}
	}
	step = "attach (native XDP)";
	err = bpf_xdp_attach(ifindex, bpf_program__fd(prog), XDP_FLAGS_DRV_MODE, NULL);
	if (err)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "rxbed: %s %s on %s: %s\n", step, objp, dev, strerror(-err));
	return 1;
}
