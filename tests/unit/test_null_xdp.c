/*
 * libgso-xdp's and libgso-e1000's public functions with NULL pointers (and
 * zero or all-ones counts and indices), header by header, in the format of
 * null_args.h.  Valid devices, engines and flows for the other arguments
 * come from the e1000 model with a callback wire (no root, no interface);
 * where only an interface or a BPF program gives one (AF_XDP, AF_PACKET,
 * TAP, steering, ports) the row says so and the NULL handle alone is called.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <gso/e1000.h>
#include <gso/xdp.h>

#include "gso_test.h"
#include "null_args.h"

/* ---- valid arguments for the parameters that are not under test ---- */

static uint8_t buf[256];
static uint64_t u64;
static uint32_t u32;
static _Atomic uint32_t wired;
static void *vp;
static const void *cvp;

static const struct gso_tmpl *tmpl(uint8_t l4)
{
	static struct gso_tmpl t[2];
	struct gso_tmpl *p = &t[l4 == GSO_L4_UDP];
	GSO_OPTS(gso_tmpl_fields, f, .l3 = GSO_L3_IPV4, .l4 = l4, .df = true, .sport = 1, .dport = 2,
		 .tcp_flags = l4 == GSO_L4_TCP ? GSO_TCP_ACK : 0);

	if (!p->hdr_len)
		cr_assert_eq(gso_tmpl__build(p, &f), 0);
	return p;
}

/* A handle `name()` that `open` (which fills `h`, returning 0) makes once per test process. */
#define FIXTURE(type, name, open)              \
	static type *name(void)                \
	{                                      \
		static type *h;                \
                                               \
		if (!h)                        \
			cr_assert_eq(open, 0); \
		return h;                      \
	}

/* An e1000 model on a callback wire, run by the caller (no thread). */
static struct gso_dev *new_dev(void)
{
	GSO_OPTS(gso_e1000_opts, o, .flags = GSO_E1000_F_NO_THREAD, .nchunks = 256, .wire_frames = 64,
		 .wire_fn = gso_test_count_wire, .wire_ctx = (void *)&wired);
	struct gso_dev *d = NULL;

	cr_assert_eq(gso_e1000__create(&d, 0, &o), 0);
	return d;
}

static struct gso_dev *dev(void)
{
	static struct gso_dev *d;

	if (!d)
		d = new_dev();
	return d;
}

static const struct gso_e1000_opts e1000_o = { .sz = sizeof(e1000_o), .flags = GSO_E1000_F_NO_THREAD,
					       .wire_fn = gso_test_count_wire, .wire_ctx = (void *)&wired };

/* One payload of plain memory, a single frame. */
static const struct gso_tx *tx(void)
{
	static struct gso_tx t;

	t = (struct gso_tx){ .tmpl = tmpl(GSO_L4_TCP), .len = 100, .data = buf, .mss = 1000 };
	return &t;
}
static struct gso_tso_flow tso_flow = { .sz = sizeof(tso_flow) };
static struct gso_buf gbuf;
static struct gso_rx_pkt rx_pkt;

static const struct gso_engine_opts engine_o = { .sz = sizeof(engine_o), .flags = GSO_ENGINE_F_NO_LINK_MONITOR };
FIXTURE(struct gso_engine, engine, gso_engine__create(&h, new_dev(), &engine_o))

/* An engine with default options (NULL): 0 if it was made (and destroyed again). */
static int engine_defaults(void)
{
	struct gso_engine *e = NULL;
	int err = gso_engine__create(&e, new_dev(), NULL);

	gso_engine__destroy(e);
	return err;
}

#define DGRAM_O (&(struct gso_dgram_opts){ .sz = sizeof(struct gso_dgram_opts), .tmpl = tmpl(GSO_L4_UDP) })
FIXTURE(struct gso_dgram, dgram, gso_dgram__open(&h, engine(), DGRAM_O))

static void on_recv(void *ctx, struct gso_dgram_listener *l, const struct gso_dgram_msg *m)
{
	(void)ctx, (void)l, (void)m;
}
static const struct gso_dgram_listen_opts dlisten_o = { .sz = sizeof(dlisten_o), .l3 = GSO_L3_IPV4,
							 .addr = { 10, 0, 0, 1 }, .port = 4433, .on_recv = on_recv };
FIXTURE(struct gso_dgram_listener, dlistener, gso_dgram_listener__open(&h, engine(), &dlisten_o))
static const struct gso_dgram_msg dmsg = { .sz = sizeof(dmsg), .l3 = GSO_L3_IPV4, .sport = 5000, .dport = 4433,
					    .saddr = { 10, 0, 0, 2 }, .daddr = { 10, 0, 0, 1 },
					    .smac = { 2, 0, 0, 0, 0, 2 }, .dmac = { 2, 0, 0, 0, 0, 1 } };
static struct gso_dgram *dgram_out;

/* A reply flow with default options (NULL): 0 if it opened (and closed again). */
static int reply_defaults(void)
{
	struct gso_dgram *d = NULL;
	int err = gso_dgram__open_reply(&d, dlistener(), &dmsg, NULL);

	if (!err)
		err = gso_dgram__close(d);
	return err;
}

static const struct gso_route route = { .sz = sizeof(route), .l3 = GSO_L3_IPV4, .dst = { 10, 0, 0, 2 },
					.src = { 10, 0, 0, 1 }, .nexthop = { 10, 0, 0, 2 },
					.src_mac = { 2, 0, 0, 0, 0, 1 }, .dst_mac = { 2, 0, 0, 0, 0, 2 }, .mtu = 1500 };
static const struct gso_stream_opts stream_o = { .sz = sizeof(stream_o), .route = &route, .sport = 40000,
						 .dport = 80 };
FIXTURE(struct gso_stream, stream, gso_stream__connect(&h, engine(), &stream_o))
static struct gso_stream *stream_out;

static const struct gso_listen_opts listen_o = { .sz = sizeof(listen_o), .l3 = GSO_L3_IPV4, .addr = { 10, 0, 0, 1 },
						 .port = 80 };
FIXTURE(struct gso_listener, listener, gso_listener__open(&h, engine(), &listen_o))
static struct gso_listener *listener_out;
static struct gso_dgram_listener *dlistener_out;
static struct gso_engine *engine_out;
static struct gso_dev *dev_out;

FIXTURE(struct gso_evloop, evloop, gso_evloop__create(&h, NULL))

/* A loop with default options (NULL): 0 if it was made (and destroyed again). */
static int evloop_defaults(void)
{
	struct gso_evloop *l = NULL;
	int err = gso_evloop__create(&l, NULL);

	gso_evloop__destroy(l);
	return err;
}
static struct gso_evloop_event ev;

static struct gso_flow flow = { .sz = sizeof(flow), .l3 = GSO_L3_IPV4, .l4 = GSO_L4_TCP, .sport = 1, .dport = 2 };
static struct gso_tmpl_fields tf = { .sz = sizeof(tf) };

static void port_fn(struct gso_engine *e, void *arg)
{
	(void)e, (void)arg;
}

/* A pointer result that must be NULL with errno `want`: 0 if so. */
static int null_errno(const void *p, int want)
{
	return p || errno != want;
}

/* Stats and info structs, each with its sz set. */
#define OUT(type) (&(struct type){ .sz = sizeof(struct type) })

#define NEEDS_IF "needs an interface and root for a live device of this backend"
#define NEEDS_STEER "needs a steering program (BPF, root, an interface) for a live handle"
#define NEEDS_PORT "needs a live port (AF_XDP engines on an interface, root)"

/* ---- the rows, header by header ---- */

#define DEV_ROWS(R, C, N)                                                                           \
	R(gso_dev__caps, dev, gso_dev__caps(NULL, OUT(gso_dev_caps)), -EINVAL)                         \
	R(gso_dev__caps, caps, gso_dev__caps(dev(), NULL), -EINVAL)                                   \
	R(gso_dev__name, dev, NULLARG_PTR(gso_dev__name(NULL)), 0)                                    \
	R(gso_dev__max_payload, dev, gso_dev__max_payload(NULL, tmpl(GSO_L4_TCP), 0), -EINVAL)        \
	R(gso_dev__max_payload, t, gso_dev__max_payload(dev(), NULL, 0), -EINVAL)                     \
	R(gso_dev__max_payload, flags_all1, gso_dev__max_payload(dev(), tmpl(GSO_L4_TCP), ~0u), -EINVAL) \
	R(gso_dev__inflight, dev, gso_dev__inflight(NULL), -EINVAL)                                   \
	R(gso_dev__ifindex, dev, gso_dev__ifindex(NULL), -EINVAL)                                     \
	R(gso_dev__probe, dev, gso_dev__probe(NULL), -EINVAL)                                         \
	R(gso_dev__buf_alloc, dev, gso_dev__buf_alloc(NULL, 100, &gbuf), -EINVAL)                     \
	R(gso_dev__buf_alloc, buf, gso_dev__buf_alloc(dev(), 100, NULL), -EINVAL)                     \
	R(gso_dev__buf_alloc, len0, gso_dev__buf_alloc(dev(), 0, &gbuf), -EINVAL)                     \
	R(gso_dev__buf_alloc, len_all1, gso_dev__buf_alloc(dev(), ~0u, &gbuf), -EMSGSIZE)             \
	R(gso_dev__buf_release, dev, gso_dev__buf_release(NULL, &gbuf, 0), -EINVAL)                   \
	R(gso_dev__buf_release, buf, gso_dev__buf_release(dev(), NULL, 0), -EINVAL)                   \
	R(gso_dev__buf_free, dev, (gso_dev__buf_free(NULL, &(struct gso_buf){ .data = buf, .cap = 1 }), 0), 0)       \
	R(gso_dev__buf_free, buf, (gso_dev__buf_free(dev(), NULL), 0), 0)                             \
	R(gso_dev__plan, dev, gso_dev__plan(NULL, tx(), OUT(gso_tx_plan)), -EINVAL)                  \
	R(gso_dev__plan, tx, gso_dev__plan(dev(), NULL, OUT(gso_tx_plan)), -EINVAL)                   \
	R(gso_dev__plan, plan, gso_dev__plan(dev(), tx(), NULL), -EINVAL)                             \
	R(gso_dev__submit, dev, gso_dev__submit(NULL, tx(), 1), -EINVAL)                              \
	R(gso_dev__submit, tx, gso_dev__submit(dev(), NULL, 1), -EINVAL)                              \
	R(gso_dev__submit, n0, gso_dev__submit(dev(), tx(), 0), -EINVAL)                              \
	R(gso_dev__kick, dev, gso_dev__kick(NULL), -EINVAL)                                           \
	R(gso_dev__reap, dev, gso_dev__reap(NULL, 0), -EINVAL)                                        \
	R(gso_dev__stats, dev, gso_dev__stats(NULL, OUT(gso_dev_stats)), -EINVAL)                     \
	R(gso_dev__stats, st, gso_dev__stats(dev(), NULL), -EINVAL)                                   \
	R(gso_dev__recv, dev, gso_dev__recv(NULL, &rx_pkt, 1), -EINVAL)                               \
	R(gso_dev__recv, out, gso_dev__recv(dev(), NULL, 1), -EINVAL)                                 \
	R(gso_dev__recv, n0, gso_dev__recv(dev(), &rx_pkt, 0), -EINVAL)                               \
	R(gso_dev__rx_release, dev, gso_dev__rx_release(NULL, &rx_pkt, 1), -EINVAL)                   \
	R(gso_dev__rx_release, pkts, gso_dev__rx_release(dev(), NULL, 1), -EINVAL)                    \
	R(gso_dev__rx_release, n0, gso_dev__rx_release(dev(), NULL, 0), 0)                            \
	R(gso_dev__rx_wait, dev, gso_dev__rx_wait(NULL, 0), -EINVAL)                                  \
	R(gso_dev__close, dev, gso_dev__close(NULL), 0)                                               \
	R(gso_dev__destroy, dev, (gso_dev__destroy(NULL), 0), 0)                                      \
	R(gso_tso_why_name, count, NULLARG_PTR(gso_tso_why_name(GSO_TSO_WHY_COUNT)), 0)               \
	R(gso_tso_why_name, all1, NULLARG_PTR(gso_tso_why_name(~0u)), 0)                              \
	R(gso_tso__submit, dev, gso_tso__submit(NULL, &tso_flow, tx(), 1), -EINVAL)                   \
	R(gso_tso__submit, flow, gso_tso__submit(dev(), NULL, tx(), 1), 1)                            \
	R(gso_tso__submit, tx, gso_tso__submit(dev(), &tso_flow, NULL, 1), -EINVAL)                   \
	R(gso_tso__set_mode, dev, gso_tso__set_mode(NULL, GSO_TSO_AUTO, 0), -EINVAL)                  \
	R(gso_tso__set_mode, all1, gso_tso__set_mode(dev(), (enum gso_tso_mode)~0u, ~0u), -EINVAL)    \
	R(gso_tso__choice, dev, gso_tso__choice(NULL, &tso_flow, tx()), -EINVAL)                      \
	R(gso_tso__choice, flow, gso_tso__choice(dev(), NULL, tx()), GSO_TSO_WHY_SINGLE)              \
	R(gso_tso__choice, tx, gso_tso__choice(dev(), &tso_flow, NULL), -EINVAL)                      \
	R(gso_tso__stats, dev, gso_tso__stats(NULL, OUT(gso_tso_stats)), -EINVAL)                     \
	R(gso_tso__stats, st, gso_tso__stats(dev(), NULL), -EINVAL)

#define E1000_ROWS(R, C, N)                                                                         \
	R(gso_e1000__create, dev, gso_e1000__create(NULL, 0, &e1000_o), -EINVAL)                      \
	R(gso_e1000__create, opts, gso_e1000__create(&dev_out, 0, NULL), -EINVAL)                     \
	R(gso_e1000__poll, dev, gso_e1000__poll(NULL), -EINVAL)                                       \
	R(gso_e1000__stats, dev, gso_e1000__stats(NULL, OUT(gso_e1000_stats)), -EINVAL)               \
	R(gso_e1000__stats, st, gso_e1000__stats(dev(), NULL), -EINVAL)

#define BACKEND_ROWS(R, C, N)                                                                       \
	R(gso_xsk__create, dev, gso_xsk__create(NULL, 1, NULL), -EINVAL)                              \
	N(gso_xsk__create, opts, "NULL is the defaults: " NEEDS_IF)                                   \
	R(gso_xsk__fd, dev, gso_xsk__fd(NULL), -EINVAL)                                               \
	R(gso_xsk__queue, dev, gso_xsk__queue(NULL), -EINVAL)                                         \
	R(gso_vnet__create, dev, gso_vnet__create(NULL, 1, NULL), -EINVAL)                            \
	N(gso_vnet__create, opts, "NULL is the defaults: " NEEDS_IF)                                  \
	R(gso_vnet__create_tap, dev, gso_vnet__create_tap(NULL, "gsonull0", NULL), -EINVAL)           \
	R(gso_vnet__create_tap, ifname, gso_vnet__create_tap(&dev_out, NULL, NULL), -EINVAL)          \
	N(gso_vnet__create_tap, opts, "NULL is the defaults: needs /dev/net/tun and root")            \
	R(gso_vnet__fd, dev, gso_vnet__fd(NULL), -EINVAL)                                             \
	R(gso_vnet__send_frame, dev, gso_vnet__send_frame(NULL, &(struct gso_vnet_hdr){ 0 }, buf, 60), -EINVAL) \
	N(gso_vnet__send_frame, h, NEEDS_IF)                                                          \
	N(gso_vnet__send_frame, frame, NEEDS_IF)                                                      \
	R(gso_ifindex, name, gso_ifindex(NULL), -EINVAL)                                              \
	R(gso_ifcaps_feature_name, count, NULLARG_PTR(gso_ifcaps_feature_name(GSO_IF_NFEATURES)), 0)  \
	R(gso_ifcaps_feature_name, all1, NULLARG_PTR(gso_ifcaps_feature_name(~0u)), 0)                \
	R(gso_ifcaps__probe, caps, gso_ifcaps__probe(1, 0, NULL), -EINVAL)                            \
	R(gso_ifcaps__probe, ifindex0, gso_ifcaps__probe(0, 0, OUT(gso_ifcaps)), -EINVAL)             \
	R(gso_route__lookup, dst, gso_route__lookup(GSO_L3_IPV4, NULL, 0, 0, OUT(gso_route)), -EINVAL) \
	R(gso_route__lookup, out, gso_route__lookup(GSO_L3_IPV4, route.dst, 0, 0, NULL), -EINVAL)     \
	R(gso_route__tmpl_fields, r, gso_route__tmpl_fields(NULL, &tf), -EINVAL)                      \
	R(gso_route__tmpl_fields, f, gso_route__tmpl_fields(&route, NULL), -EINVAL)

#define STEER_ROWS(R, C, N)                                                                         \
	R(gso_flow__reply_of, f, gso_flow__reply_of(NULL, tmpl(GSO_L4_TCP)), -EINVAL)                 \
	R(gso_flow__reply_of, t, gso_flow__reply_of(&flow, NULL), -EINVAL)                            \
	R(gso_steer__create, out, gso_steer__create(NULL, 1, NULL), -EINVAL)                          \
	N(gso_steer__create, opts, "NULL is the defaults: needs root and an interface to attach to")  \
	R(gso_steer__add_dev, st, gso_steer__add_dev(NULL, dev()), -EINVAL)                           \
	N(gso_steer__add_dev, dev, NEEDS_STEER)                                                       \
	R(gso_steer__del_dev, st, gso_steer__del_dev(NULL, dev()), -EINVAL)                           \
	N(gso_steer__del_dev, dev, NEEDS_STEER)                                                       \
	R(gso_steer__flow_add, st, gso_steer__flow_add(NULL, &flow), -EINVAL)                         \
	N(gso_steer__flow_add, f, NEEDS_STEER)                                                        \
	R(gso_steer__flow_del, st, gso_steer__flow_del(NULL, &flow), -EINVAL)                         \
	N(gso_steer__flow_del, f, NEEDS_STEER)                                                        \
	R(gso_steer__flow_count, st, gso_steer__flow_count(NULL, &flow, &u64, &u64), -EINVAL)         \
	N(gso_steer__flow_count, f, NEEDS_STEER)                                                      \
	N(gso_steer__flow_count, packets, "may be NULL; " NEEDS_STEER)                                \
	N(gso_steer__flow_count, bytes, "may be NULL; " NEEDS_STEER)                                  \
	R(gso_steer__stats, st, gso_steer__stats(NULL, OUT(gso_steer_stats)), -EINVAL)                \
	N(gso_steer__stats, out, NEEDS_STEER)                                                         \
	R(gso_steer__destroy, st, (gso_steer__destroy(NULL), 0), 0)

#define EVLOOP_ROWS(R, C, N)                                                                        \
	R(gso_evloop__create, out, gso_evloop__create(NULL, NULL), -EINVAL)                           \
	R(gso_evloop__create, opts, evloop_defaults(), 0)                                             \
	R(gso_evloop__destroy, loop, (gso_evloop__destroy(NULL), 0), 0)                               \
	R(gso_evloop__add_fd, loop, gso_evloop__add_fd(NULL, 0, POLLIN, 0), -EINVAL)                  \
	R(gso_evloop__add_fd, fd_all1, gso_evloop__add_fd(evloop(), -1, POLLIN, 0), -EINVAL)          \
	R(gso_evloop__add_fd, events_all1, gso_evloop__add_fd(evloop(), 0, ~0u, 0), -EINVAL)          \
	R(gso_evloop__mod_fd, loop, gso_evloop__mod_fd(NULL, 0, POLLIN, 0), -EINVAL)                  \
	R(gso_evloop__del_fd, loop, gso_evloop__del_fd(NULL, 0), -EINVAL)                             \
	R(gso_evloop__wait_until, loop, gso_evloop__wait_until(NULL, 0, &ev, 1), -EINVAL)             \
	R(gso_evloop__wait_until, ev, gso_evloop__wait_until(evloop(), 0, NULL, 1), -EINVAL)          \
	R(gso_evloop__wait_until, max0, gso_evloop__wait_until(evloop(), 0, &ev, 0), -EINVAL)         \
	R(gso_evloop_now_ns, nonzero, gso_evloop_now_ns() > 0, 1)                                     \
	R(gso_evloop__stats, loop, gso_evloop__stats(NULL, OUT(gso_evloop_stats)), -EINVAL)           \
	R(gso_evloop__stats, st, gso_evloop__stats(evloop(), NULL), -EINVAL)                          \
	R(gso_evloop__stats_reset, loop, (gso_evloop__stats_reset(NULL), 0), 0)                       \
	R(gso_evloop_backend_name, all1, NULLARG_PTR(gso_evloop_backend_name(~0u)), 0)

#define ENGINE_ROWS(R, C, N)                                                                        \
	R(gso_engine__create, out, gso_engine__create(NULL, dev(), &engine_o), -EINVAL)               \
	R(gso_engine__create, dev, gso_engine__create(&engine_out, NULL, &engine_o), -EINVAL)         \
	R(gso_engine__create, opts, engine_defaults(), 0)                                             \
	R(gso_engine__open, out, gso_engine__open(NULL, 1, 0, NULL, NULL), -EINVAL)                   \
	N(gso_engine__open, xsk, "NULL is the defaults: " NEEDS_IF)                                   \
	N(gso_engine__open, opts, "NULL is the defaults: " NEEDS_IF)                                  \
	R(gso_engine__destroy, e, (gso_engine__destroy(NULL), 0), 0)                                  \
	R(gso_engine__close, e, gso_engine__close(NULL), -EINVAL)                                     \
	R(gso_engine__add_rx, e, gso_engine__add_rx(NULL, dev()), -EINVAL)                            \
	R(gso_engine__add_rx, rx, gso_engine__add_rx(engine(), NULL), -EINVAL)                        \
	R(gso_engine__del_rx, e, gso_engine__del_rx(NULL, dev()), -EINVAL)                            \
	R(gso_engine__del_rx, rx, gso_engine__del_rx(engine(), NULL), -EINVAL)                        \
	R(gso_engine__set_tx, e, gso_engine__set_tx(NULL, dev()), -EINVAL)                            \
	R(gso_engine__set_tx, tx, gso_engine__set_tx(engine(), NULL), -EINVAL)                        \
	R(gso_engine__dev, e, NULLARG_PTR(gso_engine__dev(NULL)), 0)                                  \
	R(gso_engine__rx, e, NULLARG_PTR(gso_engine__rx(NULL, 0)), 0)                                 \
	R(gso_engine__rx, i_all1, NULLARG_PTR(gso_engine__rx(engine(), ~0u)), 0)                      \
	R(gso_engine__steer, e, NULLARG_PTR(gso_engine__steer(NULL)), 0)                              \
	R(gso_path_name, count, NULLARG_PTR(gso_path_name(GSO_PATH_COUNT)), 0)                        \
	R(gso_path_name, all1, NULLARG_PTR(gso_path_name(~0u)), 0)                                    \
	R(gso_engine__open_path, out, gso_engine__open_path(NULL, 1, NULL, NULL), -EINVAL)            \
	N(gso_engine__open_path, path, "NULL is auto on queue 0: " NEEDS_IF)                          \
	N(gso_engine__open_path, opts, "NULL is the defaults: " NEEDS_IF)                             \
	R(gso_engine__path, e, gso_engine__path(NULL, OUT(gso_path_info)), -EINVAL)                   \
	R(gso_engine__path, info, gso_engine__path(engine(), NULL), -EINVAL)                          \
	R(gso_engine__poll, e, gso_engine__poll(NULL, &u64), -EINVAL)                                 \
	R(gso_engine__poll, next_ns, gso_engine__poll(engine(), NULL), 0)                             \
	R(gso_engine__run, e, gso_engine__run(NULL, 0), -EINVAL)                                      \
	R(gso_engine__drain, e, gso_engine__drain(NULL, 0), -EINVAL)                                  \
	R(gso_engine__start, e, gso_engine__start(NULL, -1), -EINVAL)                                 \
	R(gso_engine__stop, e, gso_engine__stop(NULL), -EINVAL)                                       \
	R(gso_engine__wake, e, gso_engine__wake(NULL), -EINVAL)                                       \
	R(gso_engine__link_changed, e, gso_engine__link_changed(NULL, true), -EINVAL)                 \
	R(gso_engine__stats, e, gso_engine__stats(NULL, OUT(gso_engine_stats)), -EINVAL)              \
	R(gso_engine__stats, st, gso_engine__stats(engine(), NULL), -EINVAL)                          \
	R(gso_engine__evloop_stats, e, gso_engine__evloop_stats(NULL, OUT(gso_evloop_stats)), -EINVAL) \
	R(gso_engine__evloop_stats, st, gso_engine__evloop_stats(engine(), NULL), -EINVAL)

#define DGRAM_ROWS(R, C, N)                                                                         \
	R(gso_dgram__open, out, gso_dgram__open(NULL, engine(), DGRAM_O), -EINVAL)                    \
	R(gso_dgram__open, e, gso_dgram__open(&dgram_out, NULL, DGRAM_O), -EINVAL)                    \
	R(gso_dgram__open, o, gso_dgram__open(&dgram_out, engine(), NULL), -EINVAL)                   \
	R(gso_dgram__send, d, gso_dgram__send(NULL, buf, 100, 1000, 0), -EINVAL)                      \
	R(gso_dgram__send, payload, gso_dgram__send(dgram(), NULL, 100, 1000, 0), -EINVAL)            \
	R(gso_dgram__send, payload_len0, gso_dgram__send(dgram(), NULL, 0, 1000, 0), 0)               \
	R(gso_dgram__send, gso_size0, gso_dgram__send(dgram(), buf, 100, 0, 0), -EINVAL)              \
	R(gso_dgram__send_at, d, gso_dgram__send_at(NULL, buf, 100, 1000, 0, 0), -EINVAL)             \
	R(gso_dgram__send_at, payload, gso_dgram__send_at(dgram(), NULL, 100, 1000, 0, 0), -EINVAL)   \
	R(gso_dgram__send_at, at_all1, gso_dgram__send_at(dgram(), buf, 100, 1000, 0, ~0ull), -ERANGE) \
	R(gso_dgram__set_rate, d, gso_dgram__set_rate(NULL, 0), -EINVAL)                              \
	R(gso_dgram__close, d, gso_dgram__close(NULL), -EINVAL)                                       \
	R(gso_dgram__info, d, gso_dgram__info(NULL, OUT(gso_dgram_info)), -EINVAL)                    \
	R(gso_dgram__info, info, gso_dgram__info(dgram(), NULL), -EINVAL)                             \
	R(gso_dgram_listener__open, out, gso_dgram_listener__open(NULL, engine(), &dlisten_o), -EINVAL) \
	R(gso_dgram_listener__open, e, gso_dgram_listener__open(&dlistener_out, NULL, &dlisten_o), -EINVAL) \
	R(gso_dgram_listener__open, o, gso_dgram_listener__open(&dlistener_out, engine(), NULL), -EINVAL) \
	R(gso_dgram_listener__close, l, gso_dgram_listener__close(NULL), -EINVAL)                     \
	R(gso_dgram_listener__info, l, gso_dgram_listener__info(NULL, OUT(gso_dgram_listener_info)), -EINVAL) \
	R(gso_dgram_listener__info, info, gso_dgram_listener__info(dlistener(), NULL), -EINVAL)       \
	R(gso_dgram__open_reply, out, gso_dgram__open_reply(NULL, dlistener(), &dmsg, NULL), -EINVAL) \
	R(gso_dgram__open_reply, l, gso_dgram__open_reply(&dgram_out, NULL, &dmsg, NULL), -EINVAL)    \
	R(gso_dgram__open_reply, m, gso_dgram__open_reply(&dgram_out, dlistener(), NULL, NULL), -EINVAL) \
	R(gso_dgram__open_reply, o, reply_defaults(), 0)

#define STREAM_ROWS(R, C, N)                                                                        \
	R(gso_stream__connect, out, gso_stream__connect(NULL, engine(), &stream_o), -EINVAL)          \
	R(gso_stream__connect, e, gso_stream__connect(&stream_out, NULL, &stream_o), -EINVAL)         \
	R(gso_stream__connect, o, gso_stream__connect(&stream_out, engine(), NULL), -EINVAL)          \
	R(gso_stream__reserve, s, gso_stream__reserve(NULL, &vp, &u32), -EINVAL)                      \
	R(gso_stream__reserve, buf, gso_stream__reserve(stream(), NULL, &u32), -EINVAL)               \
	R(gso_stream__reserve, len, gso_stream__reserve(stream(), &vp, NULL), -EINVAL)                \
	R(gso_stream__commit, s, gso_stream__commit(NULL, 0), -EINVAL)                                \
	R(gso_stream__write, s, gso_stream__write(NULL, buf, 1), -EINVAL)                             \
	R(gso_stream__write, data, gso_stream__write(stream(), NULL, 1), -EINVAL)                     \
	R(gso_stream__shutdown, s, gso_stream__shutdown(NULL), -EINVAL)                               \
	R(gso_stream__close, s, gso_stream__close(NULL), -EINVAL)                                     \
	R(gso_stream__read, s, gso_stream__read(NULL, buf, 1), -EINVAL)                               \
	R(gso_stream__read, buf, gso_stream__read(stream(), NULL, 1), -EINVAL)                        \
	R(gso_stream__peek, s, gso_stream__peek(NULL, &cvp, &u32), -EINVAL)                           \
	R(gso_stream__peek, data, gso_stream__peek(stream(), NULL, &u32), -EINVAL)                    \
	R(gso_stream__peek, len, gso_stream__peek(stream(), &cvp, NULL), -EINVAL)                     \
	R(gso_stream__consume, s, gso_stream__consume(NULL, 0), -EINVAL)                              \
	R(gso_stream__info, s, gso_stream__info(NULL, OUT(gso_stream_info)), -EINVAL)                 \
	R(gso_stream__info, info, gso_stream__info(stream(), NULL), -EINVAL)                          \
	R(gso_listener__open, out, gso_listener__open(NULL, engine(), &listen_o), -EINVAL)            \
	R(gso_listener__open, e, gso_listener__open(&listener_out, NULL, &listen_o), -EINVAL)         \
	R(gso_listener__open, o, gso_listener__open(&listener_out, engine(), NULL), -EINVAL)          \
	R(gso_listener__accept, out, gso_listener__accept(NULL, listener(), NULL), -EINVAL)           \
	R(gso_listener__accept, l, gso_listener__accept(&stream_out, NULL, NULL), -EINVAL)            \
	R(gso_listener__accept, o, gso_listener__accept(&stream_out, listener(), NULL), -EAGAIN)      \
	R(gso_listener__close, l, gso_listener__close(NULL), -EINVAL)                                 \
	R(gso_listener__info, l, gso_listener__info(NULL, OUT(gso_listener_info)), -EINVAL)          \
	R(gso_listener__info, info, gso_listener__info(listener(), NULL), -EINVAL)

#define PORT_ROWS(R, C, N)                                                                          \
	R(gso_port__open, out, gso_port__open(NULL, 1, NULL), -EINVAL)                                \
	N(gso_port__open, opts, "NULL is the defaults: " NEEDS_PORT)                                  \
	R(gso_port__queues, p, gso_port__queues(NULL), 0)                                             \
	R(gso_port__engine, p, null_errno(gso_port__engine(NULL, 0), EINVAL), 0)                      \
	R(gso_port__steer, p, NULLARG_PTR(gso_port__steer(NULL)), 0)                                  \
	R(gso_port__start, p, gso_port__start(NULL), -EINVAL)                                         \
	R(gso_port__stop, p, gso_port__stop(NULL), -EINVAL)                                           \
	R(gso_port__drain, p, gso_port__drain(NULL, 0), -EINVAL)                                      \
	R(gso_port__call, p, gso_port__call(NULL, 0, port_fn, NULL), -EINVAL)                         \
	R(gso_port__call, fn, gso_port__call(NULL, 0, NULL, NULL), -EINVAL)                           \
	N(gso_port__call, arg, "handed to fn as it is, NULL too: " NEEDS_PORT)                        \
	R(gso_port__queue_of, p, gso_port__queue_of(NULL, &flow), -EINVAL)                            \
	N(gso_port__queue_of, f, NEEDS_PORT)                                                          \
	R(gso_port__listen, p, gso_port__listen(NULL, &listen_o), -EINVAL)                            \
	N(gso_port__listen, o, NEEDS_PORT)                                                            \
	R(gso_port__listener, p, NULLARG_PTR(gso_port__listener(NULL, 0)), 0)                         \
	R(gso_flow__rss_hash, f, gso_flow__rss_hash(NULL), 0)                                         \
	R(gso_port__close, p, gso_port__close(NULL), -EINVAL)                                         \
	R(gso_port__destroy, p, (gso_port__destroy(NULL), 0), 0)                                      \
	R(gso_port__stats, p, gso_port__stats(NULL, GSO_PORT_ALL, OUT(gso_port_stats)), -EINVAL)      \
	N(gso_port__stats, st, NEEDS_PORT)

#define XDP_ROWS(R, C, N)                                                                           \
	DEV_ROWS(R, C, N) E1000_ROWS(R, C, N) BACKEND_ROWS(R, C, N) STEER_ROWS(R, C, N)               \
	EVLOOP_ROWS(R, C, N) ENGINE_ROWS(R, C, N) DGRAM_ROWS(R, C, N) STREAM_ROWS(R, C, N)            \
	PORT_ROWS(R, C, N)

NULLARG_TABLE(nullarg_xdp, XDP_ROWS);

NULLARG_TESTS(null_xdp, nullarg_xdp);
