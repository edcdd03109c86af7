/*
 * ACK steering (gso_steer__*): loads xdp/steer/steer.bpf.c through libxdp,
 * attaches it, and keeps its flow hash map and socket map.
 *
 * Listener entries (saddr all zero, sport 0) share the flow map; while at
 * least one is registered the config's listener flag is set, and only
 * then does the program look for one when a frame's flow is not there.
 *
 * libxdp first tries its multi-program dispatcher (so that our program
 * runs next to others); where the kernel refuses the dispatcher (EPERM on
 * 6.18 here, offload-reference §8) it attaches the program alone.  We take
 * whatever it managed and report which (gso_steer_stats.multiprog).
 *
 * libbpf and libxdp print warnings to stderr by default; the library never
 * prints, so their print hooks are swapped for silent ones during our
 * calls and restored afterwards.
 */
#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <limits.h>
#include <net/if.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <xdp/libxdp.h>

#include <gso/dev.h>
#include <gso/steer.h>
#include "flow_internal.h"
#include "kernel/link_internal.h"
#include "opts_internal.h"
#include "steer_map.h"
#include "xsk/xsk_internal.h"

_Static_assert(sizeof(struct steer_key) == 40, "key layout shared with steer.bpf.c");
_Static_assert(sizeof(struct steer_val) == 24, "value layout shared with steer.bpf.c");
_Static_assert(sizeof(struct steer_cfg) == 8, "config layout shared with steer.bpf.c");

#define DEF_MAX_FLOWS 1024u
#define MIN_QUEUES 64u
#define OBJ_NAME "steer.bpf.o"

struct gso_steer {
	struct bpf_object *obj;
	struct xdp_program *prog;
	int ifindex;
	enum xdp_attach_mode mode; /* as attached */
	bool multiprog;
	bool alone; /* known to be attached without the dispatcher: detached without libxdp */
	int flows_fd, xsks_fd, cnt_fd, cfg_fd;
	uint32_t max_queues;
	/* Atomic: the engines of a multi-queue port add and remove flows from their own threads. */
	atomic_uint nflows;
	/*
	 * Listener entries registered, and the config as written (cfg.listeners
	 * says whether the program looks for them).  Under `lock`: a count
	 * that crosses zero and the write that follows it must not interleave
	 * with another thread's, or the last write could clear the flag while
	 * a listener entry is in the map.
	 */
	pthread_mutex_t lock;
	uint32_t nlisteners;
	struct steer_cfg cfg;
	struct gso_dev **devs; /* per queue; compared, never dereferenced */
};

/* ---- silence libbpf/libxdp for the length of a call ---- */

static int quiet_bpf(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l;
	(void)f;
	(void)ap;
	return 0;
}

static int quiet_xdp(enum libxdp_print_level l, const char *f, va_list ap)
{
	(void)l;
	(void)f;
	(void)ap;
	return 0;
}

struct hush {
	libbpf_print_fn_t bpf;
	libxdp_print_fn_t xdp;
};

/*
 * One lock for the whole process around our libbpf/libxdp sections: the
 * print hooks are process-wide (two threads swapping them at once could
 * leave the silent ones in place for good), and the descriptor sweep
 * below must not see another steering program's attach or detach as its
 * own.
 */
static pthread_mutex_t xdp_lock = PTHREAD_MUTEX_INITIALIZER;

static void hush_on(struct hush *h)
{
	pthread_mutex_lock(&xdp_lock);
	h->bpf = libbpf_set_print(quiet_bpf);
	h->xdp = libxdp_set_print(quiet_xdp);
}

static void hush_off(const struct hush *h)
{
	libbpf_set_print(h->bpf);
	libxdp_set_print(h->xdp);
	pthread_mutex_unlock(&xdp_lock);
}

/* ---- what libxdp 1.3.1 leaves open ---- */

/*
 * libxdp 1.3.1 leaks a program descriptor each time it reads back what
 * is attached to an interface (xdp_multiprog__get_from_ifindex):
 * xdp_multiprog__from_id() opens the attached program by id, and
 * xdp_program__from_fd() keeps a duplicate of that descriptor and
 * closes only the duplicate, never the original; xdp_program__from_pin()
 * does the same for each component of a dispatcher (fixed upstream in
 * 1.4.1).  xdp_program__attach reads back when the interface already has
 * a program, xdp_program__detach always does, and so did our own query
 * after the attach: two descriptors per create/destroy cycle.
 *
 * So we avoid those calls where we can (the query after the attach is a
 * netlink bpf_xdp_query, which opens nothing; a program attached alone is
 * detached with bpf_xdp_detach), and around the calls that remain (an
 * attach next to another program, a detach from the dispatcher) we close
 * what they leave: the bpf-prog descriptors that appeared during the call
 * (/proc/self/fd, prog_id from /proc/self/fdinfo), that are not the
 * program's own, and that name a program libxdp read back: one attached
 * to this interface before or after the call, or a dispatcher component
 * (BPF_PROG_TYPE_EXT, which only libxdp's dispatcher uses here).  Our
 * sections hold xdp_lock, so another steering program's descriptors are
 * never taken for these.  Where /proc is not readable nothing is closed.
 * (Code outside the library that opened a descriptor of one of these very
 * programs while the call ran would lose it; in practice only libxdp's
 * read-back opens them.)
 */

#define FDS_MAX 4096u

/* prog_id and prog_type of a bpf-prog descriptor, from /proc/self/fdinfo; false if it is none. */
static bool prog_fdinfo(int fd, uint32_t *id, uint32_t *type)
{
	char path[64], link[64], line[128];
	bool got_id = false;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	if (strcmp(link, "anon_inode:bpf-prog"))
		return false;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return false;
	*type = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned v;

		if (sscanf(line, "prog_id: %u", &v) == 1) {
			*id = v;
			got_id = true;
		} else if (sscanf(line, "prog_type: %u", &v) == 1) {
			*type = v;
		}
	}
	fclose(f);
	return got_id;
}

/*
 * Calls fn(fd, id, type, arg) for each bpf-prog descriptor of the process.
 * -errno if /proc/self/fd cannot be read.
 */
static int each_prog_fd(void (*fn)(int fd, uint32_t id, uint32_t type, void *arg), void *arg)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		uint32_t id, type;
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (*end || end == e->d_name || fd < 0 || fd == dirfd(d))
			continue;
		if (prog_fdinfo((int)fd, &id, &type))
			fn((int)fd, id, type, arg);
	}
	closedir(d);
	return 0;
}

struct sweep {
	int *fd;              /* before the call: the bpf-prog descriptors and their programs */
	uint32_t *id;
	unsigned n, cap;
	bool full;            /* more than cap: we do not know what is new, close nothing */
	uint32_t ids[8];      /* programs attached to the interface, before and after */
	unsigned nids;
	int own[8];           /* the steering program's own descriptors (libxdp's and the object's) */
	unsigned nown;
};

static void note_before(int fd, uint32_t id, uint32_t type, void *arg)
{
	struct sweep *sw = arg;

	(void)type;
	if (sw->n == sw->cap) {
		sw->full = true;
		return;
	}
	sw->fd[sw->n] = fd;
	sw->id[sw->n++] = id;
}

static void note_attached(struct sweep *sw, int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(ifindex, 0, &q))
		return;
	uint32_t v[3] = { q.drv_prog_id, q.skb_prog_id, q.hw_prog_id };
	for (unsigned i = 0; i < 3; i++)
		if (v[i] && sw->nids < sizeof(sw->ids) / sizeof(sw->ids[0]))
			sw->ids[sw->nids++] = v[i];
}

/* Before a libxdp call that may leak on ifindex (xdp_lock held).  own: the program's descriptors. */
static void sweep_begin(struct sweep *sw, int ifindex)
{
	memset(sw, 0, sizeof(*sw));
	sw->cap = FDS_MAX;
	sw->fd = malloc(sw->cap * sizeof(*sw->fd));
	sw->id = malloc(sw->cap * sizeof(*sw->id));
	if (!sw->fd || !sw->id || each_prog_fd(note_before, sw))
		sw->full = true;
	note_attached(sw, ifindex);
}

static void close_leaked(int fd, uint32_t id, uint32_t type, void *arg)
{
	struct sweep *sw = arg;
	bool read_back = type == BPF_PROG_TYPE_EXT;

	for (unsigned i = 0; i < sw->nown; i++)
		if (fd == sw->own[i])
			return;
	for (unsigned i = 0; i < sw->n; i++)
		if (sw->fd[i] == fd && sw->id[i] == id)
			return; /* there before the call */
	for (unsigned i = 0; i < sw->nids && !read_back; i++)
		read_back = sw->ids[i] == id;
	if (read_back)
		close(fd);
}

/* After the call: close what it left behind (see above). */
static void sweep_end(struct sweep *sw, int ifindex, struct gso_steer *st)
{
	struct bpf_program *bp;

	if (st->prog)
		sw->own[sw->nown++] = xdp_program__fd(st->prog);
	bpf_object__for_each_program(bp, st->obj) {
		if (sw->nown == sizeof(sw->own) / sizeof(sw->own[0])) {
			sw->full = true; /* cannot tell ours apart: close nothing */
			break;
		}
		sw->own[sw->nown++] = bpf_program__fd(bp);
	}
	if (!sw->full) {
		note_attached(sw, ifindex);
		each_prog_fd(close_leaked, sw);
	}
	free(sw->fd);
	free(sw->id);
}

/* ---- flows ---- */

int gso_flow__reply_of(struct gso_flow *f, const struct gso_tmpl *t)
{
	struct gso_flow r;
	unsigned alen, so, doff;

	if (!GSO_OUT_VALID(f) || !t)
		return -EINVAL;
	if (t->l3 == GSO_L3_IPV4) {
		alen = 4;
		so = 12;
		doff = 16;
	} else if (t->l3 == GSO_L3_IPV6) {
		alen = 16;
		so = 8;
		doff = 24;
	} else {
		return -EINVAL;
	}
	if ((t->l4 != GSO_L4_TCP && t->l4 != GSO_L4_UDP) || t->l4_off + 4u > t->hdr_len ||
	    t->l3_off + doff + alen > t->l4_off)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.l3 = t->l3;
	r.l4 = t->l4;
	/* The reply comes from where we send to. */
	memcpy(r.saddr, t->hdr + t->l3_off + doff, alen);
	memcpy(r.daddr, t->hdr + t->l3_off + so, alen);
	r.sport = (uint16_t)(t->hdr[t->l4_off + 2] << 8 | t->hdr[t->l4_off + 3]);
	r.dport = (uint16_t)(t->hdr[t->l4_off] << 8 | t->hdr[t->l4_off + 1]);
	/* The replies carry the tag we send with (a priority tag, VLAN 0, is no VLAN). */
	if (t->vlan)
		r.vlan = (uint16_t)((t->hdr[14] << 8 | t->hdr[15]) & 0xfff);
	GSO_OUT_PUT(f, r);
	return 0;
}

/* The map key of a caller's flow, and its GSO_FLOW_F_* (flags NULL: not wanted).  0 or -EINVAL. */
static int make_key(const struct gso_flow *caller, struct steer_key *k, uint32_t *flags)
{
	static const uint8_t zero[12];
	struct gso_flow full, *f = &full;

	if (!gsoi_flow_read(caller, &full) || (f->l3 != GSO_L3_IPV4 && f->l3 != GSO_L3_IPV6) || (f->l4 != GSO_L4_TCP && f->l4 != GSO_L4_UDP) ||
	    f->vlan > 4094 || (f->flags & ~GSO_FLOW_F_ICMP_ONLY))
		return -EINVAL;
	if (f->l3 == GSO_L3_IPV4 && (memcmp(f->saddr + 4, zero, 12) || memcmp(f->daddr + 4, zero, 12)))
		return -EINVAL;
	memset(k, 0, sizeof(*k));
	k->l3 = f->l3;
	k->l4 = f->l4;
	k->sport = htons(f->sport);
	k->dport = htons(f->dport);
	k->vlan = f->vlan;
	memcpy(k->saddr, f->saddr, 16);
	memcpy(k->daddr, f->daddr, 16);
	if (flags)
		*flags = f->flags;
	return 0;
}

/* A listener entry (steer.h): every source, that is saddr all zero and sport 0. */
static bool is_listener(const struct steer_key *k)
{
	static const uint8_t zero[16];

	return !k->sport && !memcmp(k->saddr, zero, sizeof(zero));
}

static int write_cfg(struct gso_steer *st, const struct steer_cfg *cfg)
{
	uint32_t zero = 0;

	/*
	 * The program reads the entry in place while it is rewritten: the MAC
	 * bytes are written as they were, the flag is one byte.
	 */
	if (bpf_map_update_elem(st->cfg_fd, &zero, cfg, BPF_ANY))
		return -errno;
	st->cfg = *cfg;
	return 0;
}

/* Under lock, after nlisteners changed: the program's flag rewritten if it crossed zero.  0 or -errno. */
static int listeners_changed(struct gso_steer *st)
{
	struct steer_cfg cfg = st->cfg;

	cfg.listeners = st->nlisteners > 0;
	return cfg.listeners == st->cfg.listeners ? 0 : write_cfg(st, &cfg);
}

int gso_steer__flow_add(struct gso_steer *st, const struct gso_flow *f)
{
	struct steer_val v = { 0 };
	struct steer_key k;
	uint32_t flags;
	bool listener;
	int err;

	if (!st)
		return -EINVAL;
	err = make_key(f, &k, &flags);
	if (err)
		return err;
	listener = is_listener(&k);
	if (flags & GSO_FLOW_F_ICMP_ONLY) {
		/* A listener entry quotes no packet of its own. */
		if (listener)
			return -EINVAL;
		v.flags = STEER_VAL_ICMP_ONLY;
	}
	if (listener)
		pthread_mutex_lock(&st->lock);
	if (bpf_map_update_elem(st->flows_fd, &k, &v, BPF_NOEXIST)) {
		err = -errno;
		/* A full hash map says E2BIG. */
		err = err == -E2BIG ? -ENOSPC : err;
	} else if (listener) {
		/* The entry first, then the flag: both are there when the call returns. */
		st->nlisteners++;
		err = listeners_changed(st);
		if (err) {
			st->nlisteners--;
			bpf_map_delete_elem(st->flows_fd, &k);
		}
	}
	if (listener)
		pthread_mutex_unlock(&st->lock);
	if (err)
		return err;
	atomic_fetch_add_explicit(&st->nflows, 1, memory_order_relaxed);
	return 0;
}

int gso_steer__flow_del(struct gso_steer *st, const struct gso_flow *f)
{
	struct steer_key k;
	bool listener;
	int err;

	if (!st)
		return -EINVAL;
	err = make_key(f, &k, NULL);
	if (err)
		return err;
	listener = is_listener(&k);
	if (listener)
		pthread_mutex_lock(&st->lock);
	if (bpf_map_delete_elem(st->flows_fd, &k)) {
		err = -errno;
	} else if (listener) {
		/*
		 * The entry is gone; a flag that stays set after a failed write
		 * costs a lookup per frame and loses nothing, so the call has
		 * done what it says.
		 */
		st->nlisteners--;
		listeners_changed(st);
	}
	if (listener)
		pthread_mutex_unlock(&st->lock);
	if (err)
		return err;
	atomic_fetch_sub_explicit(&st->nflows, 1, memory_order_relaxed);
	return 0;
}

int gso_steer__flow_count(struct gso_steer *st, const struct gso_flow *f, uint64_t *packets, uint64_t *bytes)
{
	struct steer_val v;
	struct steer_key k;
	int err;

	if (!st)
		return -EINVAL;
	err = make_key(f, &k, NULL);
	if (err)
		return err;
	if (bpf_map_lookup_elem(st->flows_fd, &k, &v))
		return -errno;
	if (packets)
		*packets = v.packets;
	if (bytes)
		*bytes = v.bytes;
	return 0;
}

/* ---- sockets ---- */

int gso_steer__add_dev(struct gso_steer *st, struct gso_dev *dev)
{
	uint32_t q;
	int ifindex, fd, err;
	bool rx;

	if (!st || !dev)
		return -EINVAL;
	err = gsoi_xsk_dev_info(dev, &ifindex, &q, &fd, &rx);
	if (err)
		return err;
	if (ifindex != st->ifindex)
		return -EINVAL;
	if (!rx)
		return -EOPNOTSUPP;
	if (q >= st->max_queues)
		return -E2BIG;
	if (st->devs[q] && st->devs[q] != dev) {
		/*
		 * Two open devices cannot share a queue (bind says EBUSY), so
		 * the one recorded has been closed: the kernel dropped its
		 * socket from the map then.  Take the queue over.
		 */
		st->devs[q] = NULL;
	}
	if (bpf_map_update_elem(st->xsks_fd, &q, &fd, BPF_ANY))
		return -errno;
	st->devs[q] = dev;
	return 0;
}

int gso_steer__del_dev(struct gso_steer *st, struct gso_dev *dev)
{
	if (!st || !dev)
		return -EINVAL;
	for (uint32_t q = 0; q < st->max_queues; q++) {
		if (st->devs[q] != dev)
			continue;
		/* ENOENT: the kernel removed it already when the socket closed. */
		if (bpf_map_delete_elem(st->xsks_fd, &q) && errno != ENOENT)
			return -errno;
		st->devs[q] = NULL;
		return 0;
	}
	return -ENOENT;
}

/* ---- statistics ---- */

int gso_steer__stats(struct gso_steer *st, struct gso_steer_stats *out)
{
	struct gso_steer_stats full;
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v;

	if (!st || !GSO_OUT_VALID(out))
		return -EINVAL;
	if (ncpu <= 0)
		return ncpu < 0 ? ncpu : -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(&full, 0, sizeof(full));
	for (uint32_t c = 0; c < STEER_C_COUNT; c++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(st->cnt_fd, &c, v)) {
			int err = -errno;

			free(v);
			return err;
		}
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
		switch (c) {
		case STEER_C_SEEN: full.seen = sum; break;
		case STEER_C_STEERED: full.steered = sum; break;
		case STEER_C_NO_SOCKET: full.no_socket = sum; break;
		case STEER_C_OTHER_MAC: full.other_mac = sum; break;
		case STEER_C_VLAN: full.vlan = sum; break;
		case STEER_C_BAD_HDR: full.bad_hdr = sum; break;
		default: full.passed = sum; break;
		}
	}
	free(v);
	full.flows = atomic_load_explicit(&st->nflows, memory_order_relaxed);
	for (uint32_t q = 0; q < st->max_queues; q++)
		full.devs += st->devs[q] != NULL;
	full.xdp_mode = st->mode == XDP_MODE_SKB ? GSO_STEER_XDP_SKB : GSO_STEER_XDP_NATIVE;
	full.multiprog = st->multiprog;
	GSO_OUT_PUT(out, full);
	return 0;
}

/* ---- creation ---- */

static bool readable(const char *p)
{
	return access(p, R_OK) == 0;
}

/* Directory part of `path` into `dir` (no trailing slash). */
static void dir_of(const char *path, char *dir, size_t cap)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (!slash) {
		snprintf(dir, cap, ".");
		return;
	}
	if (n >= cap)
		n = cap - 1;
	memcpy(dir, path, n);
	dir[n] = '\0';
}

/* `dir`/`sub`OBJ_NAME into out if it fits and is readable. */
static bool try_dir(char *out, size_t cap, const char *dir, const char *sub)
{
	int n = snprintf(out, cap, "%s/%s%s", dir, sub, OBJ_NAME);

	return n > 0 && (size_t)n < cap && readable(out);
}

/* The object's path by the rules of struct gso_steer_opts (steer.h); -ENOENT if none is there. */
static int find_obj(const char *given, char *out, size_t cap)
{
	char exe[PATH_MAX], dir[PATH_MAX];
	const char *env = getenv("GSO_BPF_DIR");
	Dl_info di;
	ssize_t n;

	if (given) {
		n = snprintf(out, cap, "%s", given);
		return n > 0 && (size_t)n < cap && readable(out) ? 0 : -ENOENT;
	}
	if (env && *env)
		return try_dir(out, cap, env, "") ? 0 : -ENOENT;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		dir_of(exe, dir, sizeof(dir));
		if (try_dir(out, cap, dir, "../bpf/") || try_dir(out, cap, dir, "bpf/"))
			return 0;
	}
	/* In a static link this names the program again, which was tried. */
	if (dladdr((void *)gso_steer__create, &di) && di.dli_fname) {
		dir_of(di.dli_fname, dir, sizeof(dir));
		if (try_dir(out, cap, dir, "bpf/"))
			return 0;
	}
	return -ENOENT;
}

static int map_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	return m ? bpf_map__fd(m) : -ENOENT;
}

/*
 * The interface's MAC into the program's config (no listener yet).  Until
 * this is written every frame passes (the zeroed MAC is nobody's), and no
 * flow can be registered before gso_steer__create returns, so nothing is
 * lost.
 */
static int init_cfg(struct gso_steer *st, const char *ifname)
{
	struct steer_cfg cfg;
	int err;

	memset(&cfg, 0, sizeof(cfg));
	err = gsoi_link_mac(st->ifindex, ifname, cfg.mac);
	return err ? err : write_cfg(st, &cfg);
}

/*
 * Detaches the program (xdp_lock held).  Attached alone, it is replaced by
 * nothing only if it is still ours there (XDP_FLAGS_REPLACE), as libxdp
 * would, but without libxdp's read-back and its leak; an interface that
 * went away took it along (ENODEV), and ignoring that is right.
 */
static void detach(struct gso_steer *st)
{
	struct sweep sw;

	if (st->alone) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, ao, .old_prog_fd = xdp_program__fd(st->prog));
		uint32_t flags = XDP_FLAGS_REPLACE | (st->mode == XDP_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);

		bpf_xdp_detach(st->ifindex, flags, &ao);
		return;
	}
	sweep_begin(&sw, st->ifindex);
	xdp_program__detach(st->prog, st->ifindex, st->mode, 0);
	sweep_end(&sw, st->ifindex, st);
}

static void steer_free(struct gso_steer *st)
{
	if (st->prog)
		xdp_program__close(st->prog);
	if (st->obj)
		bpf_object__close(st->obj);
	pthread_mutex_destroy(&st->lock);
	free(st->devs);
	free(st);
}

static int read_opts(const struct gso_steer_opts *o, uint32_t *mode, uint32_t *flows, uint32_t *queues)
{
	if (!GSO_OPTS_VALID(gso_steer_opts, o))
		return -EINVAL;
	*mode = GSO_OPTS_GET(o, xdp_mode, GSO_STEER_XDP_AUTO);
	*flows = GSO_OPTS_GET(o, max_flows, 0) ?: DEF_MAX_FLOWS;
	*queues = GSO_OPTS_GET(o, max_queues, 0);
	if (*mode > GSO_STEER_XDP_SKB || *flows > (1u << 24) || *queues > 4096)
		return -EINVAL;
	return 0;
}

int gso_steer__create(struct gso_steer **out, int ifindex, const struct gso_steer_opts *o)
{
	static const enum xdp_attach_mode modes[] = { XDP_MODE_UNSPEC, XDP_MODE_NATIVE, XDP_MODE_SKB };
	DECLARE_LIBXDP_OPTS(xdp_program_opts, po, .prog_name = STEER_PROG_NAME);
	char path[PATH_MAX], name[IF_NAMESIZE];
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct gso_steer *st;
	struct sweep sw;
	struct link_info li;
	uint32_t mode, flows, queues;
	struct hush h;
	int err;

	if (!out || ifindex <= 0)
		return -EINVAL;
	err = read_opts(o, &mode, &flows, &queues);
	if (err)
		return err;
	if (!if_indextoname((unsigned)ifindex, name))
		return -ENODEV;
	err = find_obj(GSO_OPTS_GET(o, bpf_obj, NULL), path, sizeof(path));
	if (err)
		return err;
	if (!queues) {
		memset(&li, 0, sizeof(li));
		queues = !gsoi_link_rtnl(ifindex, &li) && li.rx_queues > MIN_QUEUES ? li.rx_queues : MIN_QUEUES;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->ifindex = ifindex;
	st->max_queues = queues;
	st->devs = calloc(queues, sizeof(*st->devs));
	if (!st->devs) {
		free(st);
		return -ENOMEM;
	}
	pthread_mutex_init(&st->lock, NULL);

	hush_on(&h);
	st->obj = bpf_object__open_file(path, NULL);
	if (!st->obj) {
		err = errno ? -errno : -EINVAL;
		goto fail;
	}
	err = bpf_map__set_max_entries(bpf_object__find_map_by_name(st->obj, STEER_MAP_FLOWS), flows);
	if (!err)
		err = bpf_map__set_max_entries(bpf_object__find_map_by_name(st->obj, STEER_MAP_XSKS), queues);
	if (err)
		goto fail;
	/* libxdp loads the object itself: as a dispatcher extension, or alone. */
	po.obj = st->obj;
	st->prog = xdp_program__create(&po);
	err = (int)libxdp_get_error(st->prog);
	if (err) {
		st->prog = NULL;
		goto fail;
	}
	sweep_begin(&sw, ifindex);
	err = xdp_program__attach(st->prog, ifindex, modes[mode], 0);
	sweep_end(&sw, ifindex, st);
	if (err)
		goto fail;
	/*
	 * What libxdp managed, asked of the kernel rather than of
	 * xdp_multiprog__get_from_ifindex (which leaks, see above): our
	 * program itself attached, or a dispatcher with ours as a component.
	 */
	if (!bpf_xdp_query(ifindex, 0, &q) && (q.drv_prog_id || q.skb_prog_id)) {
		uint32_t id = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;

		st->mode = q.drv_prog_id ? XDP_MODE_NATIVE : XDP_MODE_SKB;
		st->alone = id == xdp_program__id(st->prog);
		st->multiprog = !st->alone;
	} else {
		st->mode = mode == GSO_STEER_XDP_SKB ? XDP_MODE_SKB : XDP_MODE_NATIVE;
	}
	st->flows_fd = map_fd(st->obj, STEER_MAP_FLOWS);
	st->xsks_fd = map_fd(st->obj, STEER_MAP_XSKS);
	st->cnt_fd = map_fd(st->obj, STEER_MAP_COUNTERS);
	st->cfg_fd = map_fd(st->obj, STEER_MAP_CFG);
	err = st->flows_fd < 0 || st->xsks_fd < 0 || st->cnt_fd < 0 || st->cfg_fd < 0 ? -ENOENT : init_cfg(st, name);
	if (err) {
		detach(st);
		goto fail;
	}
	hush_off(&h);
	*out = st;
	return 0;
fail:
	steer_free(st);
	hush_off(&h);
	/* libxdp reports a program that is in the way this way when it cannot join it. */
	return err == -EBUSY ? -EEXIST : err;
}

void gso_steer__destroy(struct gso_steer *st)
{
	struct hush h;

	if (!st)
		return;
	hush_on(&h);
	/* An interface that went away took the program with it: nothing to detach. */
	if (st->prog)
		detach(st);
	steer_free(st);
	hush_off(&h);
}
