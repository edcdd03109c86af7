/*
 * UDP segmentation plan with UDP_SEGMENT semantics (__udp_gso_segment):
 * every segment is a complete datagram with its own length and checksum.
 * The whole UDP header is the same in all non-last segments, so it goes
 * into the header images once (length, and the seed for
 * GSO_CSUM_PARTIAL), and its sum with the pseudo-header's is taken once
 * for the non-last segments and once for the last.
 */
#include "seg_internal.h"

void gsoi_seg_udp_plan(struct seg_plan *p)
{
	p->csum_off = SEG_UDP_CHECK;
	for (int k = 0; k < 2; k++) {
		uint8_t *uh = p->img[k] + p->l4_off;
		uint32_t pseudo = seg_pseudo(p, p->l4_len[k]);

		seg_put_be16(uh + SEG_UDP_LEN, p->l4_len[k]);
		memset(uh + SEG_UDP_CHECK, 0, 2);
		if (p->csum == GSO_CSUM_PARTIAL) {
			uint16_t seed = gso_csum_fold(pseudo);

			memcpy(uh + SEG_UDP_CHECK, &seed, 2);
			p->l4_sum[k] = 0;
		} else {
			p->l4_sum[k] = gso_csum_add(pseudo, seg_sum32(uh, 8));
		}
	}
}
