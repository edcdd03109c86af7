/*
 * bench/sender's devices: the transmit backend of each --mode, the AF_XDP
 * receive sockets the peer's ACKs arrive on, and the XDP steering program
 * that takes those ACKs away from the kernel (which would answer a
 * SYN-ACK for a connection it does not know with a RST).  The transmit
 * engine (<gso/engine.h>) takes the devices over; this file only knows
 * which device each mode wants.
 *
 *   mode           transmit                                   receive
 *   software       AF_XDP, whole frames, software checksums   AF_XDP, every queue
 *   csum           AF_XDP, whole frames, checksum metadata    (the transmit
 *   multibuf       AF_XDP, header + payload reference (+csum)  socket on its own)
 *   offload-vnet   AF_PACKET + virtio_net_hdr, kernel/NIC TSO
 *   offload-e1000  e1000 TSO device model, wire on a queue the ACKs do not use
 *   auto           what gso_engine__open_path() chooses: offload-vnet in
 *                  auto mode when the interface does TSO, else the AF_XDP
 *                  variant fastest for the driver (software on a veth)
 *
 * Every mode but offload-e1000 is one gso_engine__open_path() call: the
 * library opens the devices and the steering program and wires them; the
 * e1000 model is the test-bed's own (<gso/e1000.h>) and is set up here.
 *
 * An AF_XDP socket only sees its own queue, and the peer picks the queue
 * our ACKs arrive on (its transmit hash), so there is a receive socket on
 * every receive queue.  The e1000 model's wire is an AF_XDP socket of its
 * own, which needs a queue to itself: it is opened once the SYN-ACK has
 * shown which queue the connection's segments arrive on (they all take
 * that one: the peer hashes the 4-tuple), on another queue, whose receive
 * socket gives way.  So offload-e1000 needs an interface with two queues.
 */
#ifndef BENCH_SENDER_DEV_H
#define BENCH_SENDER_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gso/engine.h>
#include <gso/dev.h>
#include <gso/steer.h>
#include <gso/e1000.h>

enum snd_mode {
	SND_MODE_SOFTWARE,
	SND_MODE_CSUM,
	SND_MODE_MULTIBUF,
	SND_MODE_E1000,
	SND_MODE_VNET,
	SND_MODE_AUTO,
	SND_MODE_COUNT
};

#define SND_MAX_RXQ 16

/* "software", "csum", ... or NULL. */
const char *snd_mode_name(unsigned m);
/* The mode named `s`, or -EINVAL. */
int snd_mode_parse(const char *s);

struct snd_dev {
	int mode;              /* enum snd_mode as asked */
	int kind;              /* enum snd_mode that runs (auto resolved) */
	int ifindex;
	struct gso_dev *tx;    /* transmit backend (offload-e1000: queue 0's socket until snd_dev_wire()) */
	struct gso_dev *rx[SND_MAX_RXQ]; /* receive socket of queue i, or NULL */
	unsigned nrxq;         /* receive queues of the interface (covered up to SND_MAX_RXQ) */
	struct gso_steer *steer;
	bool own_steer;        /* steer is ours (offload-e1000), not the engine's */
	bool given;            /* the devices belong to an engine now */
	uint8_t tx_flags;      /* GSO_TX_F_* for every request */
	int wire_queue;        /* offload-e1000: the model's queue, -1 before snd_dev_wire() */
	bool wire_rx_balanced; /* the receive socket the wire replaced gave every chunk back */
	/* offload-e1000's transmit-opportunity mode (GSO_E1000_F_TXOP), set before snd_dev_wire() */
	uint32_t txop_us;      /* interval between opportunities; 0: the plain model */
	uint32_t txop_frames;  /* frames per aggregate at most; 0: the model's default */
	uint64_t txop_rate;    /* bytes/s on the air; 0: no airtime */
	bool txop_split;       /* GSO_E1000_F_TXOP_SPLIT: aggregates of frames, not packets */
	char desc[128];        /* what runs, for people */
};

/*
 * Open mode `mode` on interface `ifindex` (AF_XDP modes: transmit on
 * queue `queue`) and the engine `*e` on it (options `eo`; its steer is
 * set here).  The devices are the engine's.  Returns 0, -EOPNOTSUPP when
 * the mode is not available here (exit 77), or another -errno; `err`
 * then says what failed and nothing is left open.
 */
int snd_dev_open(struct snd_dev *d, int mode, int ifindex, uint32_t queue, const struct gso_engine_opts *eo,
		 struct gso_engine **e, char *err, size_t errlen);

/* The receive queue of device `rx`, or -1. */
int snd_dev_queue_of(const struct snd_dev *d, const struct gso_dev *rx);

/*
 * offload-e1000, once the SYN-ACK arrived on receive queue `ack_queue`:
 * the model's wire takes another queue (the highest), whose receive socket
 * leaves the engine and closes; the model becomes the engine's transmit
 * device.  Returns 0, -ENOENT (another mode, or the wire runs already:
 * nothing to do), -EOPNOTSUPP (no other queue), or -errno with `err` set.
 */
int snd_dev_wire(struct snd_dev *d, struct gso_engine *e, unsigned ack_queue, char *err, size_t errlen);

/* offload-e1000 once the model runs: its counters (also after gso_engine__close()); else -ENOENT. */
int snd_dev_e1000_stats(const struct snd_dev *d, struct gso_e1000_stats *st);

/*
 * Every chunk of every device back to free (after gso_engine__close());
 * the transmit device's statistics in *tx_st.
 */
bool snd_dev_umem_balanced(struct snd_dev *d, struct gso_engine *e, struct gso_dev_stats *tx_st);

/* Free what is still ours: devices not given to an engine, and the steering program (after the engine). */
void snd_dev_destroy(struct snd_dev *d);

#endif
