#include "benchbed.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <arpa/inet.h>
#include <gso/gso.h>

#include "util.h"

int benchbed_create(struct nsbed *b, const char *const setup[2])
{
	const struct nsbed_opts o = {
		.tag = "b",
		.ifname = { "gba", "gbb" },
		.ip4 = { "10.79.0.1/24", "10.79.0.2/24" },
		.no_ipv6 = true,
		.setup = { setup ? setup[0] : NULL, setup ? setup[1] : NULL },
		.anonymous = true,
	};

	return nsbed_create(b, &o);
}

int xskbed_create(struct nsbed *b, const char *tag, unsigned queues)
{
	const struct nsbed_opts o = {
		.tag = tag,
		.ifname = { "xa", "xb" },
		.ip4 = { XSKBED_IP0 "/24", XSKBED_IP1 "/24" },
		.queues = queues,
		.static_neigh = true,
		.anonymous = true,
	};

	return nsbed_create(b, &o);
}

static int quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l;
	(void)f;
	(void)ap;
	return 0;
}

int xskbed_attach_drop(const struct nsbed *b, int side, int *cnt_fd, char *errbuf, unsigned errlen)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = XDP_FLAGS_DRV_MODE);
	char path[PATH_MAX];
	const char *dir = getenv("GSO_BPF_DIR");
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_map *m;
	const char *step;
	int err, link;

	if (dir && *dir)
		snprintf(path, sizeof(path), "%s/xdp_drop.bpf.o", dir);
	else
		snprintf(path, sizeof(path), "%s/../bpf/xdp_drop.bpf.o", bench_exe_dir());
	libbpf_set_print(quiet);
	step = "open";
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		err = -errno;
		goto fail;
	}
	step = "load";
	err = bpf_object__load(obj);
	if (err)
		goto fail;
	prog = bpf_object__find_program_by_name(obj, "xdp_drop");
	m = bpf_object__find_map_by_name(obj, "xdp_drop_cnt");
	step = "find";
	if (!prog || !m) {
		err = -ENOENT;
		goto fail;
	}
	step = "attach";
	err = nsbed_enter(b, side);
	if (err)
		goto fail;
	link = bpf_link_create(bpf_program__fd(prog), b->ifindex[side], BPF_XDP, &lo);
	if (link < 0) {
		err = -errno;
		goto fail;
	}
	/* The object stays open for the life of the process: the link and map need it. */
	*cnt_fd = bpf_map__fd(m);
	return 0;
fail:
	snprintf(errbuf, errlen, "%s %s: %s", step, path, strerror(-err));
	return err;
}

/* One counter of the drop program, summed over CPUs. */
static int drop_key(int cnt_fd, uint32_t k, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	uint64_t *v;

	if (ncpu <= 0)
		return -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	*sum = 0;
	if (bpf_map_lookup_elem(cnt_fd, &k, v))
		err = -errno;
	for (int i = 0; !err && i < ncpu; i++)
		*sum += v[i];
	free(v);
	return err;
}

int xskbed_drop_count(int cnt_fd, uint64_t *frames, uint64_t *bytes)
{
	return drop_key(cnt_fd, 0, frames) ?: drop_key(cnt_fd, 1, bytes);
}

int xskbed_drop_queue_count(int cnt_fd, uint32_t queue, uint64_t *frames)
{
	if (queue >= XSKBED_DROP_QUEUES)
		return -ERANGE;
	return drop_key(cnt_fd, 2 + queue, frames);
}

void xskbed_udp_tmpl(const struct nsbed *b, uint16_t sport, uint16_t dport, struct gso_tmpl *t)
{
	GSO_OPTS(gso_tmpl_fields, f, .l3 = GSO_L3_IPV4, .l4 = GSO_L4_UDP, .sport = sport, .dport = dport,
		 .df = true);

	memcpy(f.eth_dst, b->mac[1], 6);
	memcpy(f.eth_src, b->mac[0], 6);
	inet_pton(AF_INET, XSKBED_IP0, f.saddr);
	inet_pton(AF_INET, XSKBED_IP1, f.daddr);
	if (gso_tmpl__build(t, &f))
		bench_die(BENCH_EXIT_FAIL, EINVAL, "template");
}
