/*
 * libgso-xdp transmit engine: the layer between the parts (<gso/gso.h>)
 * and a device (<gso/dev.h>; backends <gso/xsk.h>, <gso/vnet.h>).  One
 * engine drives ONE device queue from ONE thread and owns everything on
 * its transmit path:
 *
 *  - the device (an AF_XDP socket on one queue, the virtio_net_hdr
 *    backend or the e1000 model) and any extra receive devices;
 *  - a scheduler (<gso/pacer.h> gso_sched: earliest departure time per
 *    flow, deficit round robin between flows, an optional aggregate cap);
 *  - completion reaping, kicking again after backpressure, and the wait
 *    for "a socket is readable or the next burst is due" (<gso/evloop.h>);
 *  - link and neighbour events (rtnetlink): while the interface is down
 *    or without carrier nothing is sent and nothing is lost; when it comes
 *    back the device is kicked again; when it is removed every flow ends
 *    with -ENODEV and every buffer goes back to the device;
 *  - flows:
 *      datagram flows (UDP, QUIC-style): gso_dgram__send() queues one
 *      super-segment of caller memory cut at gso_size; the engine fills
 *      lengths, IP IDs and checksums (in software or as device metadata),
 *      paces it at the flow's rate (or sends it at the application's
 *      departure time) and reports when the memory is free; datagram
 *      listeners hand the application the datagrams to a local address
 *      and port, and reply flows answer them ("Datagram receive");
 *      stream flows (TCP, connected, or accepted from a listener): the
 *      application writes bytes and reads what the peer sends; the
 *      engine runs the handshake, the flow send queue (<gso/flowq.h>),
 *      congestion control (<gso/cc.h>), RTT, RTO, RACK and zero-window
 *      probing, burst sizing and pacing, the receive queue and its
 *      ACKs, and reports what happened.
 *
 * Time.  The engine's clock is CLOCK_MONOTONIC (gso_evloop_now_ns()), or
 * opts.clock for tests that run it in virtual time through
 * gso_engine__poll().  Nothing here sleeps except gso_engine__run().
 *
 * Pacing.  A flow's next super-segment is stamped when it becomes the
 * flow's head (when the previous one leaves), at the flow's current rate:
 * a rate change takes effect from the next super-segment on.  Stamps
 * follow each other on the flow's own grid, so a late wake-up does not
 * lower the long-run rate: a flow that is late catches up, by at most
 * catchup_ns worth of its rate (then its grid moves).  A burst due within
 * slack_ns leaves now, with its own stamp (sch_fq's timer slack).
 * A datagram flow is paced from its first super-segment: the first leaves
 * at once, each next one wire bytes / rate after the one before (no
 * unpaced initial window).  A stream flow leaves its first 10 segments
 * unpaced, as Linux does (its initial window), then follows its pacing
 * rate.
 *
 * Pacing debt.  The time a flow's grid moves (it was more than
 * catchup_ns late, on a loaded machine or a slow device) is lost for
 * good: the flow runs below its rate.  The engine counts it per flow
 * (gso_dgram_info.lost_ns) and in all (gso_engine_stats.lost_ns), and
 * looks at it per window of the flow's own sends, each at least
 * GSO_ENGINE_BEHIND_WIN_NS long: a flow whose window lost more than
 * 1/GSO_ENGINE_BEHIND_RAISE of its length (it ran below about 7/8 of its
 * rate while it had data queued) falls behind: GSO_EV_FLOW_BEHIND with
 * err -ETIME, once per episode, and behind_events counts it.  A window
 * that lost at most 1/GSO_ENGINE_BEHIND_CLEAR of its length ends the
 * episode: GSO_EV_FLOW_BEHIND with err 0.  Windows close only when the
 * flow sends, so a flow that stops sending stays behind until it sends
 * again.  Stream flows are stamped when they send (their rate is the
 * congestion control's, not a grid), lose nothing by this measure and
 * never raise the event; their lateness shows in late_ns_max.
 *
 * Path MTU.  Every flow sends IP packets of at most its path MTU: the
 * interface's MTU, or its route's when that is lower (gso_route.mtu at
 * open; `ip route ... mtu N` later), or lower still when an ICMP
 * "fragmentation needed" (RFC 1191) or ICMPv6 "packet too big" (RFC 8201)
 * about one of its packets came back.  The link monitor reports the
 * interface's changes, down or up, to every flow of the engine, and a
 * route change on the interface makes every flow with a destination
 * (streams, datagram flows opened with a route) ask the kernel for its
 * route's MTU again (one RTM_GETROUTE each, on the engine's thread).
 * The steering program (<gso/steer.h>) hands the engine the ICMP errors
 * that quote a flow's packets: a stream's, a datagram listener's reply
 * flows' (its entry), and those of a datagram flow opened with a route
 * (gso_dgram_opts.route), which registers an entry for its ICMP errors
 * alone (GSO_FLOW_F_ICMP_ONLY: one of the program's max_flows entries;
 * best effort, with the table full it follows the interface only).  An
 * error that arrives on a queue without an AF_XDP socket of the engine
 * (RSS hashes it by its addresses, not by the flow it quotes) goes to the
 * kernel; the engine reads the kernel's copy from raw ICMP and ICMPv6
 * sockets bound to its interface (with CAP_NET_RAW; not in a port, whose
 * engines receive on every queue).  The engine checks them as Linux does
 * (RFC 5927): the IP header and ICMP checksums, a live flow, for a stream
 * a quoted sequence number in flight; an IPv4 MTU below 552 counts as 552
 * (ip_rt_min_pmtu), an IPv6 one below 1280 is ignored; an error only
 * lowers.  What fails is counted (gso_engine_stats.icmp_*) and changes
 * nothing.  On a change the flow raises GSO_EV_PATH_MTU.  A stream cuts
 * its segments at the new size at once and retransmits what it sent too
 * large (Linux's tcp_sync_mss and tcp_simple_retransmit; not a congestion
 * signal, cwnd stays); it grows them again when the interface's or the
 * route's MTU rises, up to the peer's MSS.  A datagram flow refuses, with
 * -EMSGSIZE, sends whose datagrams no longer fit
 * (gso_dgram_info.max_gso_size); what it had queued leaves as it was.
 * Unlike Linux, what an ICMP error taught a flow stays for the flow's
 * life (the kernel forgets it after 10 minutes, ip_rt_mtu_expires).
 *
 * Threads.  An engine is used by one thread at a time: the caller's own
 * loop (gso_engine__run / gso_engine__poll), or the thread that
 * gso_engine__start() creates, in which case every call on the engine and
 * its flows must come from the event callback (which runs on that thread),
 * except gso_engine__wake() and gso_engine__stop(), which any thread may
 * call.  Hand-off between threads, one engine per queue: <gso/port.h>.
 * Checked in every build: while a thread runs the engine (it is inside
 * gso_engine__run, __poll or __drain, or it is the thread of
 * gso_engine__start until gso_engine__stop), a call on the engine or its
 * flows from any other thread fails with -EPERM and changes nothing
 * (wake and stop aside; gso_engine__close stops the engine's thread
 * first).  While no thread runs it, calls are accepted from any thread:
 * the caller keeps them to one thread at a time.  (A relaxed atomic load
 * and pthread_self() per call.)
 *
 * Handles.  struct gso_engine *, struct gso_dgram * and struct
 * gso_stream * (and <gso/port.h>'s struct gso_port *) are handles, not
 * addresses: each names an entry of a process-wide table of live objects
 * and that entry's generation, which changes when the object is closed or
 * destroyed.  So every call with the handle of a flow closed (or freed
 * with its engine) or of an engine destroyed fails with -EBADF and
 * touches nothing, also after a new object has taken its place: a new
 * object never gets the handle of an old one (the generation is 40 bits
 * on 64-bit systems).  gso_engine__destroy() of a destroyed engine does
 * nothing.  Compare handles with ==, never dereference them.  The check
 * does not make a handle safe to use concurrently with the call that
 * closes it on another thread (see "Threads").
 *
 * Conventions as in <gso/dev.h>: calls return 0, a count or a negative
 * errno and a failed call changes nothing; options and output structs
 * start with `size_t sz`, are declared with GSO_OPTS() and 0 means
 * "default"; the library never prints.  Errors used here:
 *   -EINVAL     bad argument (NULL, unknown flag, option out of range,
 *               gso_size 0, a template of another protocol)
 *   -EMSGSIZE   a datagram larger than its flow allows (over an IP
 *               datagram, more segments than UDP allows, or gso_size over
 *               what the device puts in one frame for this template)
 *   -EAGAIN     backpressure: the flow's queue or the engine's is full;
 *               wait for GSO_EV_DGRAM_SENT (or _WRITABLE) and retry
 *   -ENOBUFS    backpressure: no device memory now
 *   -ENOSPC     every flow slot of the engine is in use
 *   -ENODEV     the interface is gone: the engine is dead, destroy it
 *   -ESHUTDOWN  the flow is closing (no more data)
 *   -EBADF      the handle of a closed flow or a destroyed engine ("Handles")
 *   -EPERM      another thread runs the engine ("Threads")
 */
#ifndef GSO_ENGINE_H
#define GSO_ENGINE_H

#include <stdbool.h>
#include <gso/cc.h>
#include <gso/common.h>
#include <gso/evloop.h>
#include <gso/tmpl.h>
#include <gso/route.h>
#include <gso/dev.h>
#include <gso/xsk.h>
#include <gso/steer.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gso_engine; /* opaque */
struct gso_dgram;  /* a datagram flow, opaque */
struct gso_stream; /* a stream (TCP) flow, opaque */
struct gso_listener; /* a stream listener (passive open), opaque */
struct gso_dgram_listener; /* datagrams to a local address and UDP port, opaque */

/* ===================================================================== */
/* Events                                                                 */
/* ===================================================================== */

enum gso_ev_type {
	/* A datagram super-segment was handed to the device: its payload memory is the caller's again. */
	GSO_EV_DGRAM_SENT = 1,
	/* A queued datagram super-segment will never be sent (err: -ECANCELED flow closed, -ENODEV). */
	GSO_EV_DGRAM_DROPPED,
	/*
	 * The handshake completed; `dev` is the receive device the SYN-ACK came
	 * in on.  The stream is sized for the transmit device when the callback
	 * returns (so it may still gso_engine__set_tx()); then comes WRITABLE.
	 */
	GSO_EV_STREAM_ESTABLISHED,
	/* The stream takes data (first after ESTABLISHED, then again after -EAGAIN / -ENOBUFS). */
	GSO_EV_STREAM_WRITABLE,
	/* The peer acknowledged stream bytes up to `acked` (bytes since the first). */
	GSO_EV_STREAM_ACKED,
	/* The connection ended: err 0 (all data and the FIN acknowledged) or -errno
	 * (-ECONNREFUSED, -ECONNRESET, -ETIMEDOUT, -ENODEV, -ECANCELED).  The flow
	 * stays valid until gso_stream__close(). */
	GSO_EV_STREAM_CLOSED,
	/* The interface changed: err 0 it carries frames again, -ENETDOWN it does not. */
	GSO_EV_LINK,
	/* gso_engine__wake() was called (delivered on the engine's thread). */
	GSO_EV_WAKE,
	/* The interface went away: every flow has ended (err -ENODEV). */
	GSO_EV_DEV_GONE,
	/*
	 * A paced flow fell behind its rate (err -ETIME), or caught up again
	 * (err 0): see "Pacing debt" above.  Once per episode each way.
	 * `dgram` (or `stream`) and `flow_ctx` name the flow.
	 */
	GSO_EV_FLOW_BEHIND,
	/*
	 * A listener has connections waiting (`listener`, flow_ctx = its
	 * opts.ctx): take them with gso_listener__accept() until -EAGAIN.
	 * Raised when its accept queue goes from empty to not empty.
	 */
	GSO_EV_LISTENER_READY,
	/*
	 * The peer's bytes wait to be read (gso_stream__read / __peek), or
	 * its FIN does (a read returns 0).  Raised when in-order bytes (or
	 * the FIN) arrive and the application has read since the last
	 * READABLE (or never): read until -EAGAIN or 0 after each.
	 */
	GSO_EV_STREAM_READABLE,
	/*
	 * The peer sent its FIN: every byte it will send is in the receive
	 * buffer.  Writing goes on (half-close) until gso_stream__shutdown().
	 */
	GSO_EV_STREAM_PEER_CLOSED,
	/*
	 * A receive pass handed datagrams to a datagram listener's on_recv
	 * (`dlistener`, flow_ctx = its opts.ctx, `acked` = how many): raised
	 * once per pass, after the pass and before the engine sends, so the
	 * replies to a batch can be written in one go.
	 */
	GSO_EV_DGRAM_RECV_DONE,
	/*
	 * A flow's path MTU changed ("Path MTU" below): `stream` or `dgram`
	 * and flow_ctx name it, `mtu` is the IP packet size in force now and
	 * `mtu_src` (enum gso_pmtu_src) what moved it.  A stream has already
	 * resized its segments; a datagram flow refuses sends that no longer
	 * fit (-EMSGSIZE) from now on.
	 */
	GSO_EV_PATH_MTU,
};

/* What moved a flow's path MTU (GSO_EV_PATH_MTU). */
enum gso_pmtu_src {
	GSO_PMTU_SRC_LINK = 1, /* the interface's MTU changed */
	GSO_PMTU_SRC_ICMP,     /* an ICMP "fragmentation needed" or ICMPv6 "packet too big" */
	GSO_PMTU_SRC_ROUTE,    /* the MTU of the flow's route changed (ip route ... mtu N) */
};

struct gso_engine_event {
	uint32_t type;    /* enum gso_ev_type */
	int32_t err;      /* 0 or -errno, per type */
	void *flow_ctx;   /* the flow's opts.ctx (NULL for engine events) */
	struct gso_dgram *dgram;   /* GSO_EV_DGRAM_*: the flow */
	struct gso_stream *stream; /* GSO_EV_STREAM_*: the flow */
	uint64_t cookie;  /* GSO_EV_DGRAM_*: the cookie given to gso_dgram__send() */
	uint64_t acked;   /* GSO_EV_STREAM_ACKED: stream bytes acknowledged in all */
	struct gso_dev *dev; /* GSO_EV_STREAM_ESTABLISHED: the receive device the SYN-ACK came in on */
	struct gso_listener *listener; /* GSO_EV_LISTENER_READY: the listener */
	/* GSO_EV_DGRAM_SENT: when the device took the super-segment (engine clock) */
	uint64_t time_ns;
	struct gso_dgram_listener *dlistener; /* GSO_EV_DGRAM_RECV_DONE: the listener */
	uint32_t mtu;     /* GSO_EV_PATH_MTU: the path MTU now (IP bytes) */
	uint32_t mtu_src; /* GSO_EV_PATH_MTU: enum gso_pmtu_src */
};

/*
 * Called on the engine's thread for every event, in order.  It may call
 * any engine or flow function except gso_engine__destroy(),
 * gso_engine__run() and gso_engine__poll().  While the engine works on a
 * batch (a receive pass, a send pass) events wait and come after it, so
 * the callback sees a settled state; inside a callback nothing waits: a
 * call it makes may raise events at once, before the call returns (a
 * commit that frees memory: WRITABLE; gso_stream__close() first delivers
 * what was still due for that stream).  Keep the application's state
 * consistent before each call, as for any re-entrant callback.
 */
typedef void (*gso_engine_event_fn)(void *ctx, const struct gso_engine_event *ev);

/* A clock in ns (CLOCK_MONOTONIC domain, or virtual for tests). */
typedef uint64_t (*gso_engine_clock_fn)(void *ctx);

/* ===================================================================== */
/* The engine                                                             */
/* ===================================================================== */

#define GSO_ENGINE_DEF_MAX_FLOWS 1024u
#define GSO_ENGINE_MAX_FLOWS (1u << 20)
#define GSO_ENGINE_DEF_FLOW_QUEUE 64u   /* super-segments queued per datagram flow */
#define GSO_ENGINE_DEF_BATCH 32u        /* super-segments per device submit */
#define GSO_ENGINE_MAX_BATCH 256u
#define GSO_ENGINE_DEF_SLACK_NS 50000u  /* ~ a timer wake-up's typical lateness (evloop.h) */
#define GSO_ENGINE_DEF_CATCHUP_NS 1000000u
#define GSO_ENGINE_DEF_QUANTUM (65536u + 4096u) /* one largest super-segment with its headers */
#define GSO_ENGINE_MAX_WAIT_NS 10000000000ull /* slack / catch-up bounds: 10 s */
#define GSO_ENGINE_LINK_RETRY_NS 100000000ull /* while down, kick again this often */
#define GSO_ENGINE_BEHIND_WIN_NS 100000000ull /* pacing debt: windows of at least 100 ms */
#define GSO_ENGINE_BEHIND_RAISE 8u   /* behind: a window lost more than 1/8 of its length */
#define GSO_ENGINE_BEHIND_CLEAR 32u  /* caught up: a window lost at most 1/32 of its length */

/* No rtnetlink monitor: link changes come only from gso_engine__link_changed(). */
#define GSO_ENGINE_F_NO_LINK_MONITOR (1u << 0)
/* Never spin in gso_engine__run(): every wait sleeps in the kernel. */
#define GSO_ENGINE_F_NO_SPIN (1u << 1)
#define GSO_ENGINE_F_KNOWN 0x3u

struct gso_engine_opts {
	size_t sz;
	uint32_t max_flows;   /* datagram + stream flows open at once, 1..GSO_ENGINE_MAX_FLOWS
			       * (0 = GSO_ENGINE_DEF_MAX_FLOWS) */
	uint32_t max_queued;  /* datagram super-segments queued at once over all flows
			       * (0 = flow_queue * max_flows, at most 2^22) */
	uint32_t flow_queue;  /* datagram super-segments queued per flow by default,
			       * 1..2^16 (0 = GSO_ENGINE_DEF_FLOW_QUEUE) */
	uint32_t batch;       /* super-segments handed to the device per submit,
			       * 1..GSO_ENGINE_MAX_BATCH (0 = GSO_ENGINE_DEF_BATCH) */
	uint32_t slack_ns;    /* 0 = GSO_ENGINE_DEF_SLACK_NS */
	uint32_t catchup_ns;  /* 0 = GSO_ENGINE_DEF_CATCHUP_NS; 1 = hardly any catch-up */
	uint32_t quantum;     /* fair-queue bytes per flow per round (0 = GSO_ENGINE_DEF_QUANTUM) */
	uint32_t flags;       /* GSO_ENGINE_F_* */
	uint64_t max_rate;    /* aggregate cap over all flows, wire bytes/s (0 = none) */
	gso_engine_event_fn on_event; /* may be NULL: no events */
	void *ctx;                    /* for on_event */
	gso_engine_clock_fn clock;    /* NULL: CLOCK_MONOTONIC; gso_engine__run()/start() need NULL */
	void *clock_ctx;
	/*
	 * Stream flows register the flow of their peer's segments here, so
	 * that an XDP program takes them away from the kernel and into the
	 * receive devices.  The engine also joins its receive devices to it:
	 * the transmit device if it receives, and every gso_engine__add_rx()
	 * device that is AF_XDP (gso_steer__add_dev, which is harmless when
	 * the caller added one already); gso_engine__del_rx() and
	 * gso_engine__destroy() take them out again.  A device the program
	 * refuses (another interface) fails the call that adds it with the
	 * program's errno.  Not owned; must outlive the engine.  NULL: the
	 * caller steers (or nothing needs steering).
	 */
	struct gso_steer *steer;
	size_t :0;
};
#define gso_engine_opts__last_field steer

/*
 * Make an engine around transmit device `dev`.  On success the engine
 * owns the device (gso_engine__destroy() closes and destroys it); on
 * failure it stays the caller's.  If `dev` receives (GSO_DEV_RX) it is also the
 * engine's receive device 0.  Link monitoring needs the device's
 * interface (gso_dev__ifindex); a device without one (callback wire)
 * gets none.  `opts` may be NULL (the defaults).  Returns 0 and *out, or
 * -EINVAL (out or dev NULL, bad opts), -ENOMEM,
 * -ESHUTDOWN (device closed), or the errno of the event loop or the
 * rtnetlink socket.
 */
GSO_API int gso_engine__create(struct gso_engine **out, struct gso_dev *dev,
			       const struct gso_engine_opts *opts);

/*
 * Open an AF_XDP device on queue `queue_id` of interface `ifindex` and make
 * an engine of it.  `xsk` NULL: the defaults plus a receive ring of 1024
 * (what stream flows need to hear their ACKs); otherwise the options as
 * given (queue_id aside), so a sender of datagrams only can leave rx_size
 * 0 and save the ring's memory.  Returns what gso_engine__create() and
 * gso_xsk__create() return, and -ENXIO when the interface has no such
 * queue.
 */
GSO_API int gso_engine__open(struct gso_engine **out, int ifindex, uint32_t queue_id,
			     const struct gso_xsk_opts *xsk, const struct gso_engine_opts *opts);

/*
 * Stop and free everything: every flow ends (queued datagrams get
 * GSO_EV_DGRAM_DROPPED with -ECANCELED, streams GSO_EV_STREAM_CLOSED with
 * -ECANCELED unless closed already), every device is closed and destroyed.
 * Must not run on the engine's own thread; stops that thread first.  NULL
 * and a destroyed engine's handle are a no-op.  The engine's handle is
 * stale from the start of the call: the callbacks it runs get -EBADF for
 * calls on the engine (and on the flows once each is freed).
 */
GSO_API void gso_engine__destroy(struct gso_engine *e);

/*
 * End every flow (as gso_engine__destroy() does) and close every device:
 * what was queued or in flight is reclaimed, so each device's chunk
 * accounting can be read as balanced (gso_dev__stats keeps working until
 * gso_engine__destroy()).  The engine does nothing afterwards but be
 * destroyed.  Must not run on the engine's own thread.  0, -EINVAL,
 * -EBADF, -EDEADLK (called inside one of the engine's own passes, i.e.
 * from its event callback), -EPERM (another thread runs it with
 * gso_engine__run / __poll).
 */
GSO_API int gso_engine__close(struct gso_engine *e);

/*
 * Add a receive device (GSO_DEV_RX): the engine reads it and hands the
 * segments of its stream flows to them; it owns the device from now on.
 * With opts.steer an AF_XDP device joins the steering program too.
 * Returns 0, -EINVAL (NULL, no receive side), -EEXIST (added already),
 * -E2BIG (16 receive devices already), -EBADF, -EPERM, or an errno of
 * the event loop or of gso_steer__add_dev() (nothing added then).
 */
GSO_API int gso_engine__add_rx(struct gso_engine *e, struct gso_dev *rx);

/*
 * Remove receive device `rx` and give it back to the caller (not closed;
 * out of the steering program of opts.steer).  Returns 0, -EINVAL,
 * -ENOENT (not a receive device of this engine), -EBUSY (it is the
 * transmit device), -EBADF, -EPERM.
 */
GSO_API int gso_engine__del_rx(struct gso_engine *e, struct gso_dev *rx);

/*
 * Transmit on `tx` from now on (the engine owns it).  What the old device
 * queued is pushed to it first; the old device stays open while it is a
 * receive device, else it is closed and destroyed with the engine.
 * Flows sized for the old device keep their sizes: switch before data
 * flows (e.g. on GSO_EV_STREAM_ESTABLISHED, before which a stream has
 * sent only its SYN and handshake ACK).  Returns 0, -EINVAL, -ESHUTDOWN,
 * -E2BIG, -EBADF, -EPERM.
 */
GSO_API int gso_engine__set_tx(struct gso_engine *e, struct gso_dev *tx);

/*
 * The transmit device (for gso_dev__caps / __stats), never NULL for a
 * live engine; NULL for NULL and a destroyed engine's handle.
 */
GSO_API struct gso_dev *gso_engine__dev(const struct gso_engine *e);

/*
 * Receive device `i` (0, 1, ... in the order they were added; the
 * transmit device, if it receives, is 0), or NULL past the last or for
 * NULL `e`.  gso_xsk__queue() says an AF_XDP device's queue.
 */
GSO_API struct gso_dev *gso_engine__rx(const struct gso_engine *e, uint32_t i);

/* The steering program (opts.steer, or gso_engine__open_path's own), NULL if none. */
GSO_API struct gso_steer *gso_engine__steer(const struct gso_engine *e);

/* ===================================================================== */
/* One call to a transmit path                                            */
/* ===================================================================== */

/*
 * The transmit paths of an interface (gso_path_name() gives the names):
 *
 *   software      AF_XDP, whole frames, checksums in software
 *                 (GSO_XSK_F_NO_SG | GSO_XSK_F_NO_CSUM)
 *   csum          AF_XDP, whole frames, checksum requests in TX metadata
 *                 (GSO_XSK_F_NO_SG)
 *   multibuf      AF_XDP, header + payload reference, checksum requests
 *                 (the gso_xsk_opts defaults)
 *   offload-vnet  virtio_net_hdr over AF_PACKET (<gso/vnet.h>): each
 *                 super-segment goes to the driver whole, and the NIC's
 *                 TSO (or the kernel) segments it; through the TX ring,
 *                 or with sendmmsg on a veth (GSO_VNET_F_NO_RING: a veth
 *                 copies the ring's pages again at the crossing)
 *   auto          one of them, for this interface:
 *     1. the interface does TSO (ethtool tx-tcp-segmentation on):
 *        offload-vnet, per super-segment offload-or-software
 *        (GSO_TSO_AUTO).  One descriptor and one system call move up to
 *        64 KiB and the segmentation happens in the driver or the NIC,
 *        which software GSO over AF_XDP cannot beat.
 *     2. no TSO, and the driver does zero-copy AF_XDP with TX checksum
 *        offload (netdev xsk-features tx-checksum): csum.  The NIC reads
 *        the frames in place and sums them, so no CPU touches the payload
 *        twice.
 *     3. otherwise (copy mode: veth, and every driver without zero-copy):
 *        software.  In copy mode the kernel copies each frame into an skb
 *        anyway, so a payload reference saves no copy but costs a
 *        multi-descriptor frame, and a checksum request only moves the
 *        sum into the kernel (skb_checksum_help, with the frame cold)
 *        after the copy; whole frames with checksums computed while the
 *        payload is copied in are the cheapest per byte there.
 *     The choice and its reason are in gso_engine__path().
 */
enum gso_path {
	GSO_PATH_AUTO = 0,
	GSO_PATH_SOFTWARE = 1,
	GSO_PATH_CSUM = 2,
	GSO_PATH_MULTIBUF = 3,
	GSO_PATH_OFFLOAD_VNET = 4,
};
#define GSO_PATH_COUNT 5

/* Why a path runs (struct gso_path_info.why). */
enum gso_path_why {
	GSO_PATH_WHY_ASKED = 1,  /* the caller named it */
	GSO_PATH_WHY_TSO,        /* auto, rule 1: the interface does TSO */
	GSO_PATH_WHY_ZC_CSUM,    /* auto, rule 2: no TSO; zero-copy AF_XDP with TX checksum offload */
	GSO_PATH_WHY_COPY_MODE,  /* auto, rule 3: no TSO; AF_XDP in copy mode (or zero-copy without
				  * checksum offload) */
	GSO_PATH_WHY_PORT,       /* auto in a port (one AF_XDP engine per queue: rule 1 does not
				  * apply) and rule 3 */
};

/* "auto", "software", "csum", "multibuf", "offload-vnet", or NULL. */
GSO_API const char *gso_path_name(unsigned path);

/* Datagrams only: no receive sockets and no steering program (streams cannot connect). */
#define GSO_PATH_F_NO_RX (1u << 0)
#define GSO_PATH_F_KNOWN 0x1u

struct gso_path_opts {
	size_t sz;
	uint32_t path;      /* enum gso_path (0 = GSO_PATH_AUTO) */
	uint32_t queue_id;  /* AF_XDP paths: the transmit queue */
	uint32_t flags;     /* GSO_PATH_F_* */
	/* The engine's own steering program, when the engine options give none (NULL: defaults). */
	const struct gso_steer_opts *steer_opts;
	size_t :0;
};
#define gso_path_opts__last_field steer_opts

struct gso_path_info {
	size_t sz;
	uint32_t path;      /* enum gso_path that runs (never GSO_PATH_AUTO) */
	uint32_t asked;     /* enum gso_path asked for */
	uint32_t why;       /* enum gso_path_why */
	uint32_t rx_devs;   /* receive devices opened (the engine's, gso_engine__rx) */
	const char *reason; /* why, for people: one sentence (static) */
	char ifname[16];    /* the interface */
	char driver[32];    /* its driver (ethtool), "" if unknown */
	size_t :0;
};
#define gso_path_info__last_field driver

/*
 * Open an engine on interface `ifindex` on the path `path->path` (NULL:
 * auto, queue 0), in one call: probe the interface once
 * (gso_ifcaps__probe), choose the path (above), open the transmit device
 * (AF_XDP on path->queue_id, or the virtio_net_hdr device), an AF_XDP
 * receive socket on every receive queue (the peer picks the queue our
 * ACKs arrive on; at most 16), the steering program (opts->steer, or one
 * of the engine's own, destroyed with it), and wire them together
 * (gso_engine__add_rx; the engine joins them to the program).  With
 * GSO_PATH_F_NO_RX only the transmit device.  `opts` as for
 * gso_engine__create().  The flows' tx_flags need nothing: each path's
 * device offers only what it should use.
 *
 * Returns 0 and *out (gso_engine__path() says what was chosen and why),
 * or -EINVAL (NULL, bad options, an unknown path), -ENODEV (no such
 * interface), -ENXIO (no such queue), -EOPNOTSUPP (csum or multibuf asked
 * and the kernel did not give the AF_XDP socket checksum requests or
 * multi-buffer), or what gso_xsk__create(), gso_vnet__create(),
 * gso_steer__create() and gso_engine__create() return.  On failure
 * nothing is left open.
 */
GSO_API int gso_engine__open_path(struct gso_engine **out, int ifindex, const struct gso_path_opts *path,
				  const struct gso_engine_opts *opts);

/*
 * What gso_engine__open_path() (or gso_port__open()) chose and why: fills
 * `info` up to info->sz.  Returns 0, -EINVAL (NULL, sz too small),
 * -EBADF (a destroyed engine), -ENOENT (an engine made otherwise: nothing
 * chose its path).
 */
GSO_API int gso_engine__path(const struct gso_engine *e, struct gso_path_info *info);

/*
 * One pass without blocking: read the receive devices and the rtnetlink
 * monitor, run expired timers, send everything due (within slack_ns),
 * reap completions.  *next_ns (may be NULL) is when the engine has work
 * next (GSO_EVLOOP_FOREVER: only an event can give it work).  Returns 0,
 * -ENODEV (the device is gone; every flow has ended), -EINVAL, -EBADF,
 * -EPERM (another thread runs the engine).
 */
GSO_API int gso_engine__poll(struct gso_engine *e, uint64_t *next_ns);

/*
 * Run until CLOCK_MONOTONIC reaches `until_ns` (GSO_EVLOOP_FOREVER: until
 * gso_engine__stop()), sleeping whenever nothing is due: a quiet engine
 * uses no CPU, and it spins only for waits shorter than the event loop's
 * spin threshold.  Never blocks past until_ns.  Returns 0 (until_ns
 * reached, or stopped), -ENODEV, -EINVAL (also with opts.clock set),
 * -EBADF, -EPERM (another thread runs the engine).
 */
GSO_API int gso_engine__run(struct gso_engine *e, uint64_t until_ns);

/*
 * Run (as gso_engine__run) until every datagram super-segment queued has
 * been handed to the device and the device has completed every frame
 * (GSO_EV_DGRAM_SENT means only that the caller's memory is free: the
 * frames may still be in the device's ring), or until `until_ns`.
 * Stream flows are not waited for (their end is GSO_EV_STREAM_CLOSED).
 * Returns 0 (drained), -ETIMEDOUT, -ENODEV, -EINVAL (also with opts.clock
 * set), -EBADF, -EPERM (another thread runs the engine).
 */
GSO_API int gso_engine__drain(struct gso_engine *e, uint64_t until_ns);

/*
 * Run on a thread of the engine's own (pinned to CPU `cpu` when >= 0)
 * until gso_engine__stop().  From then on see "Threads" above.  Returns
 * 0, -EINVAL (opts.clock set), -EALREADY (running), -EBADF, -EPERM
 * (another thread runs the engine), or pthread's errno.
 */
GSO_API int gso_engine__start(struct gso_engine *e, int cpu);

/*
 * Ask gso_engine__run() (or the engine's thread) to return, and join the
 * thread if there is one (unless called on it).  Any thread.  From the
 * event callback of a gso_engine__run() it costs no system call: run
 * returns once the current pass is over (how an application whose own
 * timers moved earlier, a QUIC stack's, takes control back).  Returns 0,
 * -EINVAL, -EBADF.
 */
GSO_API int gso_engine__stop(struct gso_engine *e);

/* Deliver GSO_EV_WAKE on the engine's thread soon.  Any thread.  0, -EINVAL, -EBADF. */
GSO_API int gso_engine__wake(struct gso_engine *e);

/*
 * Tell the engine the interface's state (with GSO_ENGINE_F_NO_LINK_MONITOR,
 * or a caller that learns of it first): `up` true = it carries frames
 * (kick again, send); false = hold everything.  0, -EINVAL, -EBADF, -EPERM.
 */
GSO_API int gso_engine__link_changed(struct gso_engine *e, bool up);

struct gso_engine_stats {
	size_t sz;
	uint64_t polls;          /* passes (gso_engine__poll, and inside run) */
	uint64_t waits;          /* sleeps or spins in gso_engine__run */
	uint64_t submits;        /* device submit calls */
	uint64_t supers;         /* super-segments the device took */
	uint64_t frames;         /* frames in them (as the device plans them) */
	uint64_t backpressure;   /* submits the device answered -EAGAIN / -ENOBUFS */
	uint64_t kicks;          /* gso_dev__kick() calls made by the engine */
	uint64_t link_down;      /* times the link went down (or the device said -ENETDOWN) */
	uint64_t link_up;        /* times it came back */
	uint64_t link_down_ns;   /* time spent down */
	uint64_t neigh_updates;  /* next-hop MAC changes applied to flows */
	uint64_t rx_frames;      /* frames read from the receive devices */
	uint64_t rx_other;       /* of those, for no flow of this engine */
	uint64_t late_ns_max;    /* largest (send time - departure stamp) */
	uint32_t flows;          /* flows open now */
	uint32_t queued;         /* datagram super-segments queued now */
	uint32_t link_usable;    /* 1 while the engine sends */
	uint32_t dead;           /* 1 once the interface is gone */
	/* TCP frames received with a wrong IPv4 header or TCP checksum: dropped before TCP saw them. */
	uint64_t rx_bad_csum;
	/*
	 * TCP frames accepted whose checksum field holds only the folded
	 * pseudo-header: a sender on this host (over a veth) left it for a
	 * device to finish, and the kernel would have trusted it
	 * (CHECKSUM_PARTIAL).  Anything else wrong is rx_bad_csum.
	 */
	uint64_t rx_csum_partial;
	/* Pacing debt ("Pacing debt" at the top): behind episodes of all flows, and the schedule time they lost. */
	uint64_t behind_events;
	uint64_t lost_ns;
	/* Path MTU ("Path MTU" below): */
	uint32_t link_mtu;         /* the interface's MTU as the engine knows it */
	uint64_t link_mtu_changes; /* changes of it the link monitor reported */
	uint64_t icmp_pmtu;        /* ICMP PMTU errors that lowered a flow's path MTU */
	uint64_t icmp_stale;       /* ... about a flow, reporting no less than its path MTU: no change */
	uint64_t icmp_forged;      /* ... quoting no live flow, or (TCP) a sequence number not in flight: ignored */
	uint64_t icmp_bad;         /* ... malformed, with a wrong checksum, or an IPv6 MTU below 1280: ignored */
	uint64_t icmp_kernel;      /* ... of those accepted or stale, received through the kernel (below) */
	/*
	 * Transmit descriptors whose completion the device never gave: it
	 * held them for GSO_ENGINE_DEV_STALL_NS and completed nothing.  The
	 * device-queue limit stops counting them (a stream would otherwise
	 * wait behind them for ever); their memory stays in flight until
	 * a late completion or the device's close.  Seen with AF_XDP copy
	 * mode's multi-buffer frames into a veth whose peer runs XDP.
	 */
	uint64_t tx_lost_completions;
	size_t :0;
};
#define gso_engine_stats__last_field tx_lost_completions

/* A device holding descriptors this long without completing one has lost their completions. */
#define GSO_ENGINE_DEV_STALL_NS 1000000000ull

/* Fill `st` up to st->sz (0: whole).  0, -EINVAL (NULL, sz 1..sizeof(size_t)), -EBADF, -EPERM. */
GSO_API int gso_engine__stats(const struct gso_engine *e, struct gso_engine_stats *st);

/*
 * The statistics of the engine's event loop (wake-up lateness, sleeps,
 * spins): gso_evloop__stats()'s returns, and -EBADF, -EPERM.
 */
GSO_API int gso_engine__evloop_stats(const struct gso_engine *e, struct gso_evloop_stats *st);

/* ===================================================================== */
/* Datagram flows                                                         */
/* ===================================================================== */

struct gso_dgram_opts {
	size_t sz;
	/* UDP over IPv4 or IPv6, addresses, ports and MACs filled in (copied).
	 * Lengths, IP ID and checksums are the engine's to set. */
	const struct gso_tmpl *tmpl;
	uint64_t rate;        /* pacing rate, wire bytes/s (payload + every frame's
			       * L2-L4 headers); 0 = unpaced */
	uint32_t queue_len;   /* super-segments queued at once, 1..2^16 (0 = engine's flow_queue) */
	uint32_t tx_flags;    /* GSO_TX_F_* on every super-segment */
	/* The next hop to follow (the template's Ethernet destination is
	 * rewritten when the kernel's neighbour entry for it changes); NULL:
	 * the template's MAC is kept as given. */
	const struct gso_route *route;
	void *ctx;            /* returned in this flow's events */
	size_t :0;
};
#define gso_dgram_opts__last_field ctx

/*
 * Open a datagram flow.  Returns 0 and *out, or -EINVAL (NULL, not a UDP
 * template, bad option), -ENOSPC (max_flows open), -ENODEV, -ENOMEM,
 * -EBADF (a destroyed engine), -EPERM (another thread runs the engine).
 */
GSO_API int gso_dgram__open(struct gso_dgram **out, struct gso_engine *e,
			    const struct gso_dgram_opts *o);

/*
 * Queue one super-segment: `len` payload bytes at `payload`, cut into
 * datagrams of `gso_size` bytes (the last may be shorter; len 0 sends one
 * empty datagram), as UDP_SEGMENT does.  The memory must stay unchanged
 * until this send's GSO_EV_DGRAM_SENT (or _DROPPED) event, which carries
 * `cookie`.  Datagrams leave in order, paced at the flow's rate.
 *
 * Returns 0, or -EINVAL (NULL with len > 0, gso_size 0 or > 65535),
 * -EMSGSIZE (see the header comment; gso_dgram__info says the limits),
 * -EAGAIN (the flow's queue or the engine's is full), -ENODEV, -EBADF (the
 * flow was closed, or its engine destroyed), -EPERM (another thread runs
 * the engine).  Nothing is queued on error.
 */
GSO_API int gso_dgram__send(struct gso_dgram *d, const void *payload, uint32_t len,
			    uint32_t gso_size, uint64_t cookie);

/* Set the pacing rate (0 = unpaced), for super-segments stamped from now on.  0, -EINVAL, -EBADF, -EPERM. */
GSO_API int gso_dgram__set_rate(struct gso_dgram *d, uint64_t rate);

/*
 * Close the flow: every super-segment still queued gets
 * GSO_EV_DGRAM_DROPPED (-ECANCELED) now, during this call, and the flow
 * is freed: its handle is stale afterwards, and every call with it (a
 * second close too) returns -EBADF.  0, -EINVAL, -EBADF, -EPERM.
 */
GSO_API int gso_dgram__close(struct gso_dgram *d);

struct gso_dgram_info {
	size_t sz;
	uint32_t queued;      /* super-segments queued now */
	uint32_t queue_len;   /* the flow's limit */
	uint32_t max_gso_size; /* largest gso_size the device puts in one frame with this template */
	uint32_t max_segs;    /* most datagrams per super-segment (UDP: 128, or the device's limit) */
	uint32_t max_len;     /* largest len (an IP datagram's worth) */
	uint64_t rate;        /* current pacing rate (0 = unpaced) */
	uint64_t sent_supers; /* super-segments handed to the device */
	uint64_t sent_frames; /* datagrams in them */
	uint64_t sent_bytes;  /* their payload bytes */
	uint64_t dropped;     /* super-segments dropped */
	/* Pacing debt ("Pacing debt" at the top): */
	uint32_t behind;      /* 1 while the flow is behind its rate */
	uint64_t behind_events; /* episodes it fell behind */
	uint64_t lost_ns;     /* schedule time it lost (more than catchup_ns late) */
	/* Sends with a departure time (gso_dgram__send_at): how late the device took them. */
	uint64_t timed_sends;
	uint64_t timed_late_ns_sum; /* sum over them of (taken - at_ns), 0 when early or on time */
	uint64_t timed_late_ns_max;
	/* Path MTU ("Path MTU" at the top): */
	uint32_t path_mtu;    /* IP bytes per datagram in force: max_gso_size follows it */
	uint64_t pmtu_changes; /* times it moved */
	/*
	 * The engine's device sends in aggregates this far apart (0: it does
	 * not, or nothing seen yet; <gso/pacer.h> section 3).  A datagram flow
	 * has no device-queue limit of the engine's to adapt: a transport that
	 * sizes its own sends (QUIC) should keep about two intervals of data
	 * at its rate queued, as a stream does, rather than 1 ms.
	 */
	uint64_t dev_aggr_interval_ns;
	size_t :0;
};
#define gso_dgram_info__last_field dev_aggr_interval_ns

/* Fill `info` up to info->sz (0: whole).  0, -EINVAL, -EBADF, -EPERM. */
GSO_API int gso_dgram__info(const struct gso_dgram *d, struct gso_dgram_info *info);

/*
 * Departure times (EDT).  A send with a departure time leaves at `at_ns`
 * (engine clock), not before, and at once if that is past: the
 * application's own pacer (a QUIC stack's, e.g. ngtcp2's
 * ngtcp2_conn_update_pkt_tx_time() schedule) chooses the times, as with
 * the kernel's SO_TXTIME, and the flow's rate is not applied to it.  The
 * flow keeps its order: a send waits for the one before it.  at_ns 0 is
 * gso_dgram__send(): paced at the flow's rate.  GSO_EV_DGRAM_SENT gives
 * the time the device took it (time_ns); gso_dgram_info counts how late
 * timed sends left.  Errors as gso_dgram__send(), and -ERANGE: at_ns more
 * than GSO_ENGINE_MAX_WAIT_NS (10 s) ahead of the engine's clock (a time
 * of another clock, most likely; the flow would wait for it).
 */
GSO_API int gso_dgram__send_at(struct gso_dgram *d, const void *payload, uint32_t len, uint32_t gso_size,
			       uint64_t cookie, uint64_t at_ns);

/* ===================================================================== */
/* Datagram receive                                                       */
/* ===================================================================== */

/*
 * A datagram listener receives the UDP datagrams to one local address
 * and port, from every source: the steering program (the engine's) hands
 * them to the engine's receive devices, and everything else still goes to
 * the kernel.  The engine checks the IP header, the UDP length and the
 * IPv4 header and UDP checksums (a UDP checksum of 0 is allowed over IPv4
 * and refused over IPv6, as the kernel does; a datagram whose field holds
 * only the pseudo-header's sum, left by a sender on this host for a
 * device to finish, is accepted and counted) and drops what fails,
 * counting why (gso_dgram_listener_info).  IP fragments and IPv6
 * extension headers never reach it (the steering program passes them to
 * the kernel).
 *
 * Each datagram is given to opts.on_recv during the engine's receive
 * pass, in arrival order.  Its bytes stay in the device's receive frame:
 * m->data is valid only until on_recv returns (copy what must live
 * longer).  The callback runs on the engine's thread and may call any
 * engine or flow function but gso_engine__destroy/__run/__poll
 * (gso_dgram__send, gso_dgram__open_reply, ...); events it causes wait
 * until the pass ends.  After the pass comes GSO_EV_DGRAM_RECV_DONE.
 *
 * The alternative: keep a kernel UDP socket for receiving (no listener,
 * no steering entry) and send through datagram flows.  The two do not
 * mix on one port: while a listener is open, the socket hears nothing.
 */
struct gso_dgram_msg {
	size_t sz;              /* sizeof(struct gso_dgram_msg) as the library knows it */
	const uint8_t *data;    /* the UDP payload (valid during on_recv only) */
	uint32_t len;           /* its bytes */
	uint8_t l3;             /* GSO_L3_IPV4 or GSO_L3_IPV6 */
	uint8_t tos;            /* IPv4 TOS or IPv6 traffic class (ECN in the low two bits) */
	uint16_t vlan;          /* VLAN ID of the 802.1Q tag, 0: untagged */
	uint16_t sport, dport;  /* source (remote) and destination (local) ports, host order */
	uint8_t saddr[16];      /* source (remote) address, network order; IPv4 in the first 4 bytes */
	uint8_t daddr[16];      /* destination (local) address */
	uint8_t smac[6];        /* the frame's Ethernet source: where replies go */
	uint8_t dmac[6];        /* its Ethernet destination (ours) */
	struct gso_dev *dev;    /* the receive device */
	uint64_t rx_ns;         /* engine clock when the engine read it */
	size_t :0;
};

typedef void (*gso_dgram_recv_fn)(void *ctx, struct gso_dgram_listener *l, const struct gso_dgram_msg *m);

struct gso_dgram_listen_opts {
	size_t sz;
	uint8_t l3;           /* GSO_L3_IPV4 or GSO_L3_IPV6 (required) */
	uint8_t addr[16];     /* local address (required; IPv4 in the first 4 bytes), network order */
	uint16_t port;        /* local UDP port, host order (required) */
	gso_dgram_recv_fn on_recv; /* required */
	void *ctx;            /* on_recv's ctx and GSO_EV_DGRAM_RECV_DONE's flow_ctx */
	size_t :0;
};
#define gso_dgram_listen_opts__last_field ctx

/*
 * Receive the datagrams to addr:port (see above).  Returns 0 and *out, or
 * -EINVAL (NULL, bad option, no on_recv), -EADDRINUSE (a datagram
 * listener on that address and port in this engine), -ENOSPC, -ENOMEM,
 * -ENODEV, -EBADF, -EPERM, or the steering program's errno.  An engine
 * without a steering program (opts.steer NULL) listens all the same: the
 * caller steers the frames to its receive devices.
 */
GSO_API int gso_dgram_listener__open(struct gso_dgram_listener **out, struct gso_engine *e,
				     const struct gso_dgram_listen_opts *o);

/*
 * Stop receiving: the steering entry goes (the port's datagrams reach the
 * kernel again).  Flows opened with gso_dgram__open_reply() stay.  The
 * handle is stale afterwards (-EBADF).  0, -EINVAL, -EBADF, -EPERM.
 */
GSO_API int gso_dgram_listener__close(struct gso_dgram_listener *l);

struct gso_dgram_listener_info {
	size_t sz;
	uint64_t datagrams;    /* handed to on_recv */
	uint64_t bytes;        /* their payload bytes */
	uint64_t passes;       /* receive passes that handed it any (GSO_EV_DGRAM_RECV_DONE) */
	uint64_t bad_csum;     /* dropped: wrong IPv4 header or UDP checksum (or none over IPv6) */
	uint64_t bad_len;      /* dropped: UDP length below 8 or past the IP payload */
	uint64_t csum_partial; /* accepted with the pseudo-header's sum alone (see above) */
	size_t :0;
};
#define gso_dgram_listener_info__last_field csum_partial

/* Fill `info` up to info->sz (0: whole).  0, -EINVAL, -EBADF, -EPERM. */
GSO_API int gso_dgram_listener__info(const struct gso_dgram_listener *l, struct gso_dgram_listener_info *info);

/*
 * Open a datagram flow that answers datagram `m` of listener `l`: from
 * m's destination address and port to its source, to the Ethernet address
 * it came from (m->smac), on its VLAN, through the engine's transmit
 * device (TTL or hop limit 64, TOS 0; IPv4 with DF set, as the path MTU
 * discovery of a QUIC stack wants).  Only m's addresses,
 * ports, MACs and VLAN are read, so a copy of a message kept after its
 * on_recv serves (a QUIC server keeps one per path; two messages of one
 * path still differ in len, tos, dev and rx_ns: compare those fields, not
 * the structs).  `o` (NULL =
 * defaults) gives rate, queue_len, tx_flags and ctx; its tmpl and route
 * must be NULL.  Returns what gso_dgram__open() returns.
 */
GSO_API int gso_dgram__open_reply(struct gso_dgram **out, struct gso_dgram_listener *l,
				  const struct gso_dgram_msg *m, const struct gso_dgram_opts *o);

/* ===================================================================== */
/* Stream flows (TCP)                                                     */
/* ===================================================================== */

/* gso_stream_opts.flags */
#define GSO_STREAM_F_NO_SACK  (1u << 0) /* do not offer SACK (NewReno recovery) */
#define GSO_STREAM_F_NO_TS    (1u << 1) /* do not offer timestamps */
#define GSO_STREAM_F_CHECK    (1u << 2) /* gso_flowq__check() after every ACK and send (tests; O(queue)) */
#define GSO_STREAM_F_KNOWN    0x7u

#define GSO_STREAM_DEF_IDLE_NS 10000000000ull /* end the connection after 10 s without a word from the peer */
/*
 * The smallest segment payload a stream sends: Linux's floor (TCP_MIN_MSS
 * 88) less 24 bytes of options.  Timestamps, when agreed, take
 * GSO_STREAM_TS_LEN more from every segment, so the smallest opts.mss is
 * GSO_STREAM_MIN_MSS + GSO_STREAM_TS_LEN (76), or GSO_STREAM_MIN_MSS (64)
 * with GSO_STREAM_F_NO_TS.
 */
#define GSO_STREAM_MIN_MSS 64u
#define GSO_STREAM_TS_LEN 12u

struct gso_stream_opts {
	size_t sz;
	/* Where to: addresses and MACs (gso_route__lookup(), or filled by hand);
	 * required.  Its nexthop is followed for neighbour changes. */
	const struct gso_route *route;
	uint16_t sport;       /* our port, host order (required, 1..65535) */
	uint16_t dport;       /* the peer's port (required) */
	uint32_t flags;       /* GSO_STREAM_F_* */
	uint32_t cc_algo;     /* enum gso_cc_algo (GSO_CC_BBR: rate samples from the flow queue) */
	uint32_t mss;         /* cap on the segment size, the MSS we announce (0: MTU, peer and
			       * device decide); 0 or >= GSO_STREAM_MIN_MSS + GSO_STREAM_TS_LEN
			       * (>= GSO_STREAM_MIN_MSS with GSO_STREAM_F_NO_TS) */
	uint64_t max_rate;    /* pacing rate cap, wire bytes/s (0 = none) */
	uint32_t pacing_shift, min_segs, win_divisor; /* gso_burst_opts (0 = Linux's defaults) */
	uint32_t tx_flags;    /* GSO_TX_F_* on every super-segment */
	uint32_t notsent_lowat; /* unsent bytes above which writes wait (0 = 4 super-segments) */
	uint64_t idle_ns;     /* 0 = GSO_STREAM_DEF_IDLE_NS */
	uint32_t isn;         /* initial sequence number; 0 = random */
	void *ctx;            /* returned in this flow's events */
	/*
	 * Receive buffer: the peer's bytes not read yet, in order and out of
	 * order, GSO_STREAM_MIN_RCVBUF..GSO_STREAM_MAX_RCVBUF (0 =
	 * GSO_STREAM_DEF_RCVBUF).  The window we advertise is what of it is
	 * free.  For gso_listener__accept() it is ignored: the listener's
	 * rcvbuf applies, since bytes arrive before the accept.
	 */
	uint32_t rcvbuf;
	size_t :0;
};
#define gso_stream_opts__last_field rcvbuf

#define GSO_STREAM_DEF_RCVBUF (256u << 10)
#define GSO_STREAM_MIN_RCVBUF 4096u
#define GSO_STREAM_MAX_RCVBUF (64u << 20)
/* Out-of-order byte ranges a stream holds (beyond: a new range is dropped, the peer sends it again). */
#define GSO_STREAM_OOO_RANGES 4u

/*
 * Open a TCP connection: send the SYN now (retransmitted as RFC 6298
 * says until the handshake completes or idle_ns passes).  The peer's
 * segments must reach one of the engine's receive devices (opts.steer).
 * What the peer sends is received as "Receiving" below says.  Returns
 * 0 and *out, or -EINVAL (NULL, bad option, mss
 * below its minimum (see GSO_STREAM_MIN_MSS), a route of another
 * interface), -ENOSPC, -EEXIST (a stream with this 4-tuple is open),
 * -ENODEV, -ENOMEM, -EBADF (a destroyed engine), -EPERM (another thread
 * runs the engine), or the steering program's errno.  A segment size
 * that the peer's MSS or the route's MTU makes smaller than the minimum
 * ends the connection after the handshake (GSO_EV_STREAM_CLOSED,
 * -EINVAL).
 */
GSO_API int gso_stream__connect(struct gso_stream **out, struct gso_engine *e,
				const struct gso_stream_opts *o);

/*
 * Zero-copy write: room for up to *len bytes at *buf, in device memory
 * (from GSO_EV_STREAM_WRITABLE on).  Write the bytes there, then gso_stream__commit()
 * how many of them to send.  A second reserve before a commit returns the
 * same room.  Returns 0, or -EAGAIN (not established yet, or notsent_lowat
 * reached: wait for GSO_EV_STREAM_WRITABLE), -ENOBUFS (no device memory:
 * wait for ACKs, also signalled with WRITABLE), -ESHUTDOWN, -ECONNRESET /
 * other -errno (the connection has ended), -EINVAL, -EBADF (the stream
 * was closed, or its engine destroyed), -EPERM (another thread runs the
 * engine).
 */
GSO_API int gso_stream__reserve(struct gso_stream *s, void **buf, uint32_t *len);

/*
 * Send `len` (<= what reserve gave) bytes written at the reserved room.
 * 0, -EINVAL, -EAGAIN, the connection's -errno (as reserve), -EBADF, -EPERM.
 */
GSO_API int gso_stream__commit(struct gso_stream *s, uint32_t len);

/* Copy in up to `len` bytes.  Returns how many were taken (>= 1), or reserve's errors. */
GSO_API int gso_stream__write(struct gso_stream *s, const void *data, uint32_t len);

/* No more data: the FIN follows the last byte.  0, -EINVAL, -ENOTCONN (ended), -EBADF, -EPERM. */
GSO_API int gso_stream__shutdown(struct gso_stream *s);

/*
 * Free the flow.  A connection still open is abandoned: queued data is
 * dropped, and the peer gets a RST.  Its handle is stale afterwards, and
 * every call with it (a second close too) returns -EBADF.  0, -EINVAL,
 * -EBADF, -EPERM.
 */
GSO_API int gso_stream__close(struct gso_stream *s);

/*
 * Receiving.  Every stream (connected or accepted) takes the peer's bytes
 * into its receive buffer (opts.rcvbuf) and acknowledges them as Linux
 * does: every segment at once for the first 16 (quick ACKs), then at
 * least every second full-sized segment, else after 40 ms (delayed ACK);
 * data we send carries the ACK with it.  Out-of-order bytes within the
 * window are held (at most GSO_STREAM_OOO_RANGES ranges) and answered at
 * once with a duplicate ACK carrying SACK blocks (when SACK was agreed),
 * the newest first; filling a hole is acknowledged at once too.  The
 * window advertised is the free part of the buffer (scaled, never
 * moving its right edge back), and reopens with a window update when
 * reads free at least two segments or half the buffer.
 *
 * The peer's FIN comes as GSO_EV_STREAM_PEER_CLOSED (state
 * GSO_STREAM_CLOSE_WAIT); writing goes on until gso_stream__shutdown(),
 * after which our FIN's ACK ends the stream (GSO_EV_STREAM_CLOSED, err
 * 0).  A stream that shut down first keeps receiving until the peer's FIN
 * (state GSO_STREAM_CLOSING), or until it has been silent for idle_ns
 * (500 ms if it never sent a byte: a sink that does not close).  The
 * side that closes first keeps TIME_WAIT: the engine remembers the
 * 4-tuple for GSO_STREAM_TIME_WAIT_NS after the stream ends (and after
 * gso_stream__close()), answers a retransmitted FIN with an ACK, and lets
 * a listener take a new SYN for it (sequence number past the old one),
 * as Linux does; at most GSO_STREAM_MAX_TIME_WAIT per engine, the oldest
 * forgotten first.  An accepted stream's segments keep coming to the
 * engine (its listener's steering entry brings them); a connected
 * stream's steering entry goes with gso_stream__close(), and what its
 * peer sends after that reaches the kernel, which answers with an RST.
 */
#define GSO_STREAM_TIME_WAIT_NS 60000000000ull /* TCP_TIMEWAIT_LEN */
#define GSO_STREAM_MAX_TIME_WAIT 16384u

/*
 * Copy up to `len` received bytes, in order, to `buf` and free their
 * room in the window.  Returns the bytes copied (>= 1), 0 at the end of
 * the stream (the peer's FIN, everything before it read), -EAGAIN
 * (nothing to read yet: wait for GSO_EV_STREAM_READABLE), the error that
 * ended the connection (-ECONNRESET, ...) once the bytes received
 * before it are read, -EINVAL, -EBADF, -EPERM.
 */
GSO_API int gso_stream__read(struct gso_stream *s, void *buf, uint32_t len);

/*
 * Zero-copy read: *data and *len are the next in-order bytes, in the
 * receive buffer itself (the first contiguous part of what is readable:
 * peek again after consuming it for the rest).  Valid until the next
 * call on the stream or until the event callback returns.  Returns 0
 * (*len >= 1), or what gso_stream__read returns where it returns 0 or
 * less (then *len is 0).
 */
GSO_API int gso_stream__peek(struct gso_stream *s, const void **data, uint32_t *len);

/* Done with the first `len` peeked bytes.  0, -EINVAL (more than readable), -EBADF, -EPERM. */
GSO_API int gso_stream__consume(struct gso_stream *s, uint32_t len);

enum gso_stream_state {
	GSO_STREAM_SYN_SENT = 0,
	GSO_STREAM_ESTABLISHED,
	GSO_STREAM_FIN_SENT,   /* shutdown, everything sent with the FIN; waiting for its ACK (FIN-WAIT-1) */
	GSO_STREAM_CLOSING,    /* FIN acknowledged; receiving until the peer's FIN (FIN-WAIT-2) */
	GSO_STREAM_DONE,
	GSO_STREAM_FAILED,
	GSO_STREAM_CLOSE_WAIT, /* the peer's FIN came; we may still send */
	GSO_STREAM_LAST_ACK,   /* the peer's FIN came, ours is sent; waiting for its ACK */
};

#define GSO_STREAM_BURST_HIST 129 /* burst_hist[i]: super-segments of i segments (the last: more) */

struct gso_stream_info {
	size_t sz;
	uint32_t state;          /* enum gso_stream_state */
	int32_t err;             /* 0, or why it failed */
	const char *why;         /* what failed, for people ("no SYN-ACK", ...); NULL if nothing */
	uint64_t t_start, t_estab, t_data_acked, t_end; /* engine clock, 0 = not yet */
	uint32_t mss, hdr_len;   /* segment payload and wire headers per segment */
	uint32_t seg_limit;      /* payload bytes per super-segment */
	uint32_t burst_descs;    /* device descriptors of one full super-segment */
	bool sack, timestamps;   /* agreed in the handshake */
	uint64_t written;        /* bytes committed */
	uint64_t acked;          /* bytes acknowledged */
	uint64_t supers, segs;   /* super-segments and segments sent (retransmissions included) */
	uint64_t retrans_segs, retrans_supers, rto, fast_recov, probes, syn_retries;
	uint64_t acks, dupacks, sacked_segs, lost_segs;
	uint64_t bad_acks;       /* ACKs of data never sent: dropped */
	uint64_t rx_bad;         /* segments that do not parse */
	uint64_t wnd_checks, wnd_violations; /* sends checked against the peer's window */
	int64_t max_over_wnd;    /* largest (outstanding - window) at a send; <= 0 is right */
	uint32_t max_outstanding, min_wnd, max_wnd, burst_max;
	uint64_t zero_wnd_acks;
	uint64_t backpressure, umem_waits, tsq_waits;
	uint32_t cwnd, cwnd_max, ssthresh;
	uint64_t pacing_rate;    /* wire bytes/s, GSO_RATE_UNPACED before the first RTT sample */
	uint64_t srtt_ns, min_rtt_ns, rtt_samples;
	uint64_t offloaded, software; /* super-segments the device / software segmented (TSO backends) */
	/*
	 * The peer's segments refused after the handshake (RFC 5961), each
	 * dropped without effect on the connection:
	 */
	uint64_t rx_rst_ignored;     /* RSTs outside the receive window: dropped silently */
	uint64_t rx_rst_challenged;  /* RSTs in the window but not at RCV.NXT: a challenge ACK instead */
	uint64_t rx_syn_challenged;  /* SYNs (SYN-ACKs included): a challenge ACK */
	uint64_t rx_old_acks;        /* ACKs below SND.UNA - MAX.SND.WND: a challenge ACK */
	uint64_t rx_out_of_window;   /* other segments outside the receive window: answered with an ACK */
	uint64_t challenge_acks;     /* ACKs sent for the four lines above */
	uint64_t challenge_limited;  /* ACKs due that were not sent: at most one per 500 ms per stream */
	/* Congestion control and delivery rate: */
	uint32_t cc_algo;            /* enum gso_cc_algo */
	uint32_t app_limited_marks;  /* times the flow was found app-limited (gso_flowq__check_app_limited) */
	uint64_t delivery_rate;      /* payload bytes/s, latest sample (tcpi_delivery_rate) */
	struct gso_cc_bbr_info bbr;  /* with GSO_CC_BBR: the model (sz 0 otherwise) */
	/* Last, so that a longer histogram extends it: */
	uint64_t burst_hist[GSO_STREAM_BURST_HIST];
	/* Receiving ("Receiving" above): */
	uint64_t rx_bytes;           /* in-order bytes received */
	uint64_t rx_read;            /* bytes the application has read */
	uint64_t rx_segs;            /* segments that carried data */
	uint64_t rx_ooo_segs;        /* ... of them out of order, held */
	uint64_t rx_ooo_dropped;     /* ... of them out of order, dropped (no range left) */
	uint64_t rx_dup_segs;        /* ... of them wholly old (answered with an ACK) */
	uint64_t rx_beyond_wnd;      /* bytes past the advertised window: cut off */
	uint64_t acks_sent;          /* pure ACKs sent for received data (quick, delayed, out of order) */
	uint64_t acks_delayed;       /* ... of them when the delayed-ACK timer fired */
	uint64_t wnd_updates;        /* ... of them window updates after reads */
	uint32_t rcv_wnd;            /* the window advertised last, bytes */
	uint32_t rcv_wscale;         /* our window scale (what the peer shifts by) */
	uint32_t rcvbuf;             /* receive buffer bytes */
	uint32_t rx_queued;          /* bytes received and not read */
	/* Path MTU ("Path MTU" above): */
	uint32_t path_mtu;           /* IP bytes per packet in force (mss follows it) */
	uint64_t pmtu_changes;       /* times it moved */
	uint64_t pmtu_lost_segs;     /* segments sent too large for a lowered MTU: retransmitted */
	/*
	 * The device's aggregation and the sizing in force (<gso/pacer.h>
	 * section 3: a device that sends in aggregates, such as Wi-Fi, gets
	 * bursts and a device-queue limit of its aggregation interval, with
	 * no setting), learned by the engine from its device's completions:
	 */
	uint64_t dev_aggr_interval_ns; /* median interval between the device's aggregates; 0: it
					* does not aggregate (or nothing seen yet) */
	uint64_t dev_aggr_bytes;     /* median payload bytes per aggregate (the device counts
				      * descriptors: converted at a full super-segment's bytes
				      * per descriptor) */
	uint64_t dev_queue_limit;    /* payload bytes the stream may keep posted and not
				      * completed in the device now (0: not sized yet) */
	uint32_t burst_shift;        /* pacing shift its bursts are sized with now */
	uint32_t dev_aggr_adapted;   /* 1: the two above follow the learned interval; 0: the
				      * fixed policy (no aggregation, or pacing_shift set) */
	size_t :0;
};
#define gso_stream_info__last_field dev_aggr_adapted

/* ===================================================================== */
/* Listeners (TCP passive open)                                           */
/* ===================================================================== */

#define GSO_LISTEN_DEF_BACKLOG 128u      /* connections waiting for gso_listener__accept() */
#define GSO_LISTEN_MAX_BACKLOG 65535u
#define GSO_LISTEN_DEF_SYN_BACKLOG 256u  /* half-open connections held */
#define GSO_LISTEN_MAX_SYN_BACKLOG 65536u
/* Answer every SYN with a SYN cookie, also while the half-open table has room (tests). */
#define GSO_LISTEN_F_COOKIES_ALWAYS (1u << 8)
#define GSO_LISTEN_F_KNOWN (GSO_STREAM_F_NO_SACK | GSO_STREAM_F_NO_TS | GSO_LISTEN_F_COOKIES_ALWAYS)

struct gso_listen_opts {
	size_t sz;
	uint8_t l3;           /* GSO_L3_IPV4 or GSO_L3_IPV6 (required) */
	uint8_t addr[16];     /* local address (required; IPv4 in the first 4 bytes), network order */
	uint16_t port;        /* local port, host order (required) */
	uint32_t backlog;     /* accept queue, 1..GSO_LISTEN_MAX_BACKLOG (0 = GSO_LISTEN_DEF_BACKLOG) */
	uint32_t syn_backlog; /* half-open table, 1..GSO_LISTEN_MAX_SYN_BACKLOG (0 = DEF) */
	uint32_t flags;       /* GSO_STREAM_F_NO_SACK, GSO_STREAM_F_NO_TS (not offered), GSO_LISTEN_F_* */
	uint32_t mss;         /* cap on the MSS we announce (as gso_stream_opts.mss; 0: MTU) */
	uint32_t rcvbuf;      /* accepted streams' receive buffer (as gso_stream_opts.rcvbuf) */
	void *ctx;            /* GSO_EV_LISTENER_READY's flow_ctx */
	size_t :0;
};
#define gso_listen_opts__last_field ctx

/*
 * Listen for TCP connections to addr:port on the engine's receive
 * devices: the steering program (the engine's) hands every TCP segment
 * to that address and port to the engine, so the kernel never sees them
 * (and never answers them).
 *
 * A SYN is answered with a SYN-ACK that carries what the client offered
 * and we support: MSS (ours from the device's MTU, and opts.mss), window
 * scale, SACK-permitted and timestamps.  The half-open connection is
 * held (SYN-ACK retransmitted at 1, 2, 4, 8, 16 s, as Linux does) until
 * the client's ACK.  When the half-open table is full, or with
 * GSO_LISTEN_F_COOKIES_ALWAYS, the SYN is answered statelessly with a
 * SYN cookie (as Linux's tcp_syncookies=1): the initial sequence number
 * is a keyed hash of the 4-tuple, a 64-second time slot and the MSS
 * class, and our timestamp (echoed by the client) carries the window
 * scale and SACK (without timestamps, a cookie connection has neither).
 * So a flood of spoofed SYNs fills the table and then costs one SYN-ACK
 * each, and a real client's ACK still opens its connection.  When the
 * handshake completes the connection waits in the accept queue (its
 * first bytes are received and acknowledged meanwhile); when that is
 * full, the client's ACK is dropped (the client sends it again with its
 * data), as Linux does.  A segment for no connection of the listener (no
 * SYN, no valid cookie) is answered with an RST.
 *
 * A stream accepted replies to the link-layer address its SYN came from,
 * through the engine's transmit device, with the device's MTU: no route
 * lookup per connection (right for a server on the client's LAN or
 * behind one gateway).
 *
 * Returns 0 and *out, or -EINVAL (NULL, bad option), -EADDRINUSE (a
 * listener on that address and port in this engine), -ENOSPC,
 * -ENOMEM, -ENODEV, -EBADF, -EPERM, or the steering program's errno.
 * An engine without a steering program (opts.steer NULL) listens all
 * the same: the caller steers the segments to its receive devices.
 */
GSO_API int gso_listener__open(struct gso_listener **out, struct gso_engine *e,
			       const struct gso_listen_opts *o);

/*
 * Take the oldest connection of the accept queue: *out is an established
 * stream (GSO_EV_STREAM_WRITABLE follows once it is sized, and
 * GSO_EV_STREAM_READABLE if bytes came before the accept).  `o` (NULL =
 * defaults) gives its cc_algo, max_rate, pacing_shift, min_segs,
 * win_divisor, tx_flags, notsent_lowat, idle_ns, ctx and flag
 * GSO_STREAM_F_CHECK; route, ports, isn, mss, rcvbuf and the other flags
 * are the handshake's.  Returns 0, -EAGAIN (none waiting), -EINVAL,
 * -EBADF, -EPERM.
 */
GSO_API int gso_listener__accept(struct gso_stream **out, struct gso_listener *l,
				 const struct gso_stream_opts *o);

/*
 * Stop listening: the steering entry goes, half-open connections are
 * forgotten, connections not accepted are reset.  Streams accepted stay.
 * The handle is stale afterwards (-EBADF).  0, -EINVAL, -EBADF, -EPERM.
 */
GSO_API int gso_listener__close(struct gso_listener *l);

struct gso_listener_info {
	size_t sz;
	uint32_t half_open;       /* half-open connections held now */
	uint32_t queued;          /* connections waiting for accept now */
	uint32_t backlog, syn_backlog;
	uint64_t syns;            /* SYNs received */
	uint64_t synacks;         /* SYN-ACKs sent (retransmissions and cookies included) */
	uint64_t synack_retrans;  /* ... retransmitted */
	uint64_t cookies_sent;    /* SYNs answered with a cookie */
	uint64_t cookies_ok;      /* ACKs whose cookie opened a connection */
	uint64_t cookies_bad;     /* ACKs with no half-open entry and no valid cookie */
	uint64_t half_open_expired; /* half-open connections given up (no ACK after the retransmissions) */
	uint64_t accepted;        /* gso_listener__accept() that gave a stream */
	uint64_t overflows;       /* handshakes completed with the accept queue full: ACK dropped */
	uint64_t resets;          /* RSTs sent for segments of no connection */
	uint64_t time_wait;       /* connections in TIME_WAIT in this engine now */
	uint64_t time_wait_reused; /* SYNs that took over a TIME_WAIT 4-tuple */
	size_t :0;
};
#define gso_listener_info__last_field time_wait_reused

/* Fill `info` up to info->sz (0: whole).  0, -EINVAL, -EBADF, -EPERM. */
GSO_API int gso_listener__info(const struct gso_listener *l, struct gso_listener_info *info);

/* Fill `info` up to info->sz.  Works until gso_stream__close().  0, -EINVAL, -EBADF, -EPERM. */
GSO_API int gso_stream__info(const struct gso_stream *s, struct gso_stream_info *info);

#ifdef __cplusplus
}
#endif
#endif
