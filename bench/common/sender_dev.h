/*
 * bench/sender's devices: the transmit backend of each --mode, the AF_XDP
 * receive side that the peer's ACKs arrive on, and the XDP steering
 * program that takes those ACKs away from the kernel (which would answer
 * a SYN-ACK for a connection it does not know with a RST).
 *
 *   mode           transmit                                   receive
 *   software       AF_XDP, whole frames, software checksums   same socket
 *   csum           AF_XDP, whole frames, checksum metadata    same socket
 *   multibuf       AF_XDP, header + payload reference (+csum) same socket
 *   offload-vnet   AF_PACKET + virtio_net_hdr, kernel/NIC TSO AF_XDP queue 0
 *   offload-e1000  e1000 TSO device model, wire on queue 1    AF_XDP queue 0
 *   auto           offload-vnet in auto mode when the interface does TSO,
 *                  else AF_XDP with the library's defaults
 *
 * offload-e1000 needs an interface with at least two queues (the model's
 * AF_XDP wire socket and the receive socket cannot share one), and the
 * ACKs must arrive on queue 0 (a veth whose peer has one TX queue).
 */
#ifndef BENCH_SENDER_DEV_H
#define BENCH_SENDER_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gso/tmpl.h>
#include <gso/xdp.h>

enum snd_mode {
	SND_MODE_SOFTWARE,
	SND_MODE_CSUM,
	SND_MODE_MULTIBUF,
	SND_MODE_E1000,
	SND_MODE_VNET,
	SND_MODE_AUTO,
	SND_MODE_COUNT
};

/* "software", "csum", ... or NULL. */
const char *snd_mode_name(unsigned m);
/* The mode named `s`, or -EINVAL. */
int snd_mode_parse(const char *s);

struct snd_dev {
	int mode;              /* enum snd_mode */
	struct gso_dev *tx;    /* transmit backend */
	struct gso_dev *rx;    /* receive side (== tx for the AF_XDP modes) */
	struct gso_steer *steer;
	struct gso_flow flow;  /* the ACKs' flow, once steered */
	bool flow_added;
	bool tso;              /* a <gso/tso.h> backend: submit with gso_tso__submit */
	uint8_t tx_flags;      /* GSO_TX_F_* for every request */
	char desc[96];         /* what runs, for people */
};

/*
 * Open mode `mode` on interface `ifindex` (AF_XDP queue `queue` for the
 * AF_XDP modes).  Returns 0, -EOPNOTSUPP when the mode is not available
 * here (exit 77), or another -errno; `err` then says what failed.
 */
int snd_dev_open(struct snd_dev *d, int mode, int ifindex, uint32_t queue, char *err, size_t errlen);

/*
 * Steer the peer's TCP segments (from peer_addr:peer_port to
 * our_addr:our_port, ports in host order) to the receive socket, away from
 * the kernel.  0 or -errno.
 */
int snd_dev_steer(struct snd_dev *d, int l3, const uint8_t peer_addr[16], const uint8_t our_addr[16],
		  uint16_t peer_port, uint16_t our_port);

/* The receive socket's file descriptor, for the event loop. */
int snd_dev_rx_fd(const struct snd_dev *d);

/*
 * Stop steering and close the devices' kernel side (statistics and buffer
 * calls keep working until snd_dev_destroy()).
 */
void snd_dev_close(struct snd_dev *d);
void snd_dev_destroy(struct snd_dev *d);

#endif
