#include "xskbed.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <arpa/inet.h>
#include <gso/gso.h>

#include "util.h"

/* Names to remove if a signal ends set-up (read by the handler). */
static char pending[2][40];

static void run_ip_del(const char *name)
{
	pid_t p = fork();

	if (p == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("ip", "ip", "netns", "del", name, (char *)NULL);
		_exit(127);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
}

static void on_signal(int sig)
{
	for (int i = 0; i < 2; i++)
		if (pending[i][0])
			run_ip_del(pending[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return st == 0 ? 0 : -EIO;
}

static int open_ns(const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int xskbed_enter(const struct xskbed *b, int side)
{
	return setns(b->nsfd[side], CLONE_NEWNET) ? -errno : 0;
}

static int read_link(struct xskbed *b, int side, const char *ifname)
{
	struct ifreq ifr;
	int s, err = 0;

	if (xskbed_enter(b, side))
		return -errno;
	b->ifindex[side] = (int)if_nametoindex(ifname);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (s < 0 || ioctl(s, SIOCGIFHWADDR, &ifr) || !b->ifindex[side])
		err = -ENODEV;
	else
		memcpy(b->mac[side], ifr.ifr_hwaddr.sa_data, 6);
	if (s >= 0)
		close(s);
	return err;
}

static void drop_names(struct xskbed *b)
{
	for (int i = 0; i < 2; i++) {
		if (b->ns[i][0])
			run_ip_del(b->ns[i]);
		b->ns[i][0] = '\0';
		pending[i][0] = '\0';
	}
}

int xskbed_create(struct xskbed *b, const char *tag, unsigned queues)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	char mac[2][20];
	int err = 0;

	memset(b, 0, sizeof(*b));
	b->nsfd[0] = b->nsfd[1] = -1;
	for (int i = 0; i < 2; i++) {
		snprintf(b->ns[i], sizeof(b->ns[i]), "gso%s-%d-%c", tag, (int)getpid(), 'a' + i);
		memcpy(pending[i], b->ns[i], sizeof(pending[i]));
	}
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_signal);
	if (sh("ip netns add %s", b->ns[0]) || sh("ip netns add %s", b->ns[1]))
		err = -EIO;
	if (!err)
		err = sh("ip link add xa netns %s numtxqueues %u numrxqueues %u type veth peer name xb netns %s "
			 "numtxqueues %u numrxqueues %u", b->ns[0], queues, queues, b->ns[1], queues, queues);
	if (!err)
		err = sh("ip -n %s link set lo up && ip -n %s link set xa up && ip -n %s addr add %s/24 dev xa && "
			 "ip -n %s link set lo up && ip -n %s link set xb up && ip -n %s addr add %s/24 dev xb",
			 b->ns[0], b->ns[0], b->ns[0], XSKBED_IP0, b->ns[1], b->ns[1], b->ns[1], XSKBED_IP1);
	for (int i = 0; !err && i < 2; i++) {
		b->nsfd[i] = open_ns(b->ns[i]);
		if (b->nsfd[i] < 0)
			err = b->nsfd[i];
	}
	if (!err)
		err = read_link(b, 0, "xa") ?: read_link(b, 1, "xb");
	for (int i = 0; !err && i < 2; i++)
		snprintf(mac[i], sizeof(mac[i]), "%02x:%02x:%02x:%02x:%02x:%02x", b->mac[i][0], b->mac[i][1],
			 b->mac[i][2], b->mac[i][3], b->mac[i][4], b->mac[i][5]);
	if (!err)
		err = sh("ip -n %s neigh replace %s lladdr %s dev xa nud permanent && "
			 "ip -n %s neigh replace %s lladdr %s dev xb nud permanent",
			 b->ns[0], XSKBED_IP1, mac[1], b->ns[1], XSKBED_IP0, mac[0]);
	/* From here on the descriptors alone keep the namespaces. */
	drop_names(b);
	if (err)
		xskbed_destroy(b);
	return err;
}

void xskbed_destroy(struct xskbed *b)
{
	drop_names(b);
	for (int i = 0; i < 2; i++) {
		if (b->nsfd[i] >= 0)
			close(b->nsfd[i]);
		b->nsfd[i] = -1;
	}
}

static int quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l;
	(void)f;
	(void)ap;
	return 0;
}

int xskbed_attach_drop(const struct xskbed *b, int side, int *cnt_fd, char *errbuf, unsigned errlen)
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
	err = xskbed_enter(b, side);
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

void xskbed_udp_tmpl(const struct xskbed *b, uint16_t sport, uint16_t dport, struct gso_tmpl *t)
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
