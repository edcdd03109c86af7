/*
 * libgso-xdp: the kernel-facing side of libgso, all of it (the umbrella
 * header, as <gso/gso.h> is libgso's):
 *
 *   <gso/dev.h>     the transmit device interface and offload selection
 *   <gso/xsk.h>     the AF_XDP backend
 *   <gso/vnet.h>    the virtio_net_hdr backend (AF_PACKET, TAP)
 *   <gso/steer.h>   ACK steering (XDP program, flows)
 *   <gso/ifcaps.h>  interface capabilities
 *   <gso/evloop.h>  the event loop
 *   <gso/engine.h>  the transmit engine (TCP and datagram streams)
 *   <gso/port.h>    ports: engines across queues
 *   <gso/route.h>   routes and neighbours
 *
 * Conventions for all of them (errors, options structs, what a NULL
 * argument does) are written once, at the top of <gso/dev.h>.
 */
#ifndef GSO_XDP_H
#define GSO_XDP_H

#include <gso/dev.h>
#include <gso/xsk.h>
#include <gso/vnet.h>
#include <gso/steer.h>
#include <gso/ifcaps.h>
#include <gso/evloop.h>
#include <gso/engine.h>
#include <gso/port.h>
#include <gso/route.h>

#endif
