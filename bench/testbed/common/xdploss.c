#include "xdploss.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "util.h"

_Static_assert(sizeof(struct bench_xdploss_cfg) == 16, "layout shared with impair_loss.bpf.c");
_Static_assert(sizeof(struct bench_xdploss_stats) == 32, "layout shared with impair_loss.bpf.c");

struct bench_xdploss {
	struct bpf_object *obj;
	int link_fd;
	int stats_fd;
};

uint32_t bench_xdploss_threshold(double p)
{
	if (p <= 0)
		return 0;
	if (p >= 1)
		return UINT32_MAX;
	return (uint32_t)(p * 4294967296.0);
}

const char *bench_xdploss_default_obj(void)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/../bpf/impair_loss.bpf.o", bench_exe_dir());
	return path;
}

/* libbpf prints to stderr by default; the caller reports through errbuf. */
static int quiet(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	(void)lvl;
	(void)fmt;
	(void)ap;
	return 0;
}

int bench_xdploss_attach(struct bench_xdploss **out, const char *obj_path, int ifindex,
			 const struct bench_xdploss_cfg *cfg, bool skb_mode, char *errbuf, size_t errlen)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = skb_mode ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);
	struct bench_xdploss *x = calloc(1, sizeof(*x));
	struct bpf_program *prog;
	struct bpf_map *m;
	uint32_t key = 0;
	int err, cfg_fd;
	const char *step;

	if (!x)
		return -ENOMEM;
	x->link_fd = -1;
	libbpf_set_print(quiet);
	step = "open";
	x->obj = bpf_object__open_file(obj_path, NULL);
	if (!x->obj) {
		err = -errno;
		x->obj = NULL;
		goto fail;
	}
	step = "load";
	err = bpf_object__load(x->obj);
	if (err)
		goto fail;
	step = "find program/maps";
	prog = bpf_object__find_program_by_name(x->obj, "impair_loss");
	m = bpf_object__find_map_by_name(x->obj, "impair_cfg");
	if (!prog || !m) {
		err = -ENOENT;
		goto fail;
	}
	cfg_fd = bpf_map__fd(m);
	m = bpf_object__find_map_by_name(x->obj, "impair_stats");
	if (!m) {
		err = -ENOENT;
		goto fail;
	}
	x->stats_fd = bpf_map__fd(m);
	step = "configure";
	if (bpf_map_update_elem(cfg_fd, &key, cfg, BPF_ANY)) {
		err = -errno;
		goto fail;
	}
	step = skb_mode ? "attach (generic XDP)" : "attach (native XDP)";
	x->link_fd = bpf_link_create(bpf_program__fd(prog), ifindex, BPF_XDP, &lo);
	if (x->link_fd < 0) {
		err = x->link_fd < -1 ? x->link_fd : -errno;
		x->link_fd = -1;
		goto fail;
	}
	*out = x;
	return 0;
fail:
	if (errbuf)
		snprintf(errbuf, errlen, "%s %s: %s", step, obj_path, strerror(-err));
	bench_xdploss_detach(x);
	return err;
}

int bench_xdploss_stats(struct bench_xdploss *x, struct bench_xdploss_stats *st)
{
	int ncpu = libbpf_num_possible_cpus();
	struct bench_xdploss_stats *v;
	uint32_t key = 0;

	if (ncpu <= 0)
		return ncpu < 0 ? ncpu : -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(x->stats_fd, &key, v)) {
		int err = -errno;

		free(v);
		return err;
	}
	memset(st, 0, sizeof(*st));
	for (int i = 0; i < ncpu; i++) {
		st->seen += v[i].seen;
		st->matched += v[i].matched;
		st->dropped += v[i].dropped;
		st->dropped_bytes += v[i].dropped_bytes;
	}
	free(v);
	return 0;
}

void bench_xdploss_detach(struct bench_xdploss *x)
{
	if (!x)
		return;
	if (x->link_fd >= 0)
		close(x->link_fd);
	bpf_object__close(x->obj);
	free(x);
}
