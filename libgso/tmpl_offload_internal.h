/*
 * Shared by the offload encoders (not installed): request re-validation
 * and the two header-seeding conventions.
 */
#ifndef GSO_TMPL_OFFLOAD_INTERNAL_H
#define GSO_TMPL_OFFLOAD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gso/offload.h>

/*
 * The encoders need every field of the request as LIBGSO_0.1 defined it:
 * a shorter sz is refused.  This minimum stays when fields are added at
 * the tail; those must be optional (read with GSO_OPTS_GET).
 */
#define GSOI_OFFLOAD_REQ_MIN_SZ (offsetof(struct gso_offload_req, flags) + sizeof(uint32_t))

/*
 * True if `r` is exactly what gso_offload_describe() makes of `t` with
 * r's payload length, MSS and input flags.  Encoders call it so that a
 * request edited by hand, or paired with the wrong template, can never
 * produce a descriptor the device would misread.  False for a NULL or
 * a shorter-than-GSOI_OFFLOAD_REQ_MIN_SZ request.
 */
bool gsoi_offload_req_valid(const struct gso_offload_req *r, const struct gso_tmpl *t);

/*
 * Copy t's headers to `out` and set them up for a consumer that is told
 * the whole super-packet: IP (and UDP) lengths of the whole, IPv4 header
 * checksum computed, L4 checksum = folded pseudo-header sum including the
 * whole L4 length, not complemented.
 */
void gsoi_offload_prep_full(const struct gso_offload_req *r, const struct gso_tmpl *t, uint8_t *out);

/* Folded, non-complemented pseudo-header sum of the headers at `h`. */
uint16_t gsoi_offload_pseudo_seed(const uint8_t *h, uint8_t l3, unsigned l3_off, uint8_t proto,
				  uint32_t l4_len);

/* Compute and store the IPv4 header checksum of the header at `ip`. */
void gsoi_offload_ip4_csum(uint8_t *ip, unsigned ihl);

#endif
