/*
 * UDP segmentation plan with UDP_SEGMENT semantics (__udp_gso_segment):
 * every segment is a complete datagram with its own length and checksum
 * (the per-segment rewrite is seg_udp_fix() in seg_internal.h).  The whole
 * UDP header is the same in all non-last segments, so its sum and the
 * pseudo-header's are taken once for them and once for the last.
 */
#include "seg_internal.h"

int seg_udp_plan(struct seg_plan *p)
{
	const uint8_t *uh = p->t->hdr + p->l4_off;

	p->csum_off = SEG_UDP_CHECK;
	for (int k = 0; k < 2; k++) {
		uint32_t pseudo = seg_pseudo(p, p->l4_len[k]);
		uint8_t len[2];

		if (p->csum == GSO_CSUM_PARTIAL) {
			p->l4_sum[k] = gso_csum_fold(pseudo);
			continue;
		}
		seg_put_be16(len, p->l4_len[k]);
		/* ports + length; the check field counts as 0 */
		p->l4_sum[k] = gso_csum_add(gso_csum_add(pseudo, seg_word(uh)),
					    gso_csum_add(seg_word(uh + 2), seg_word(len)));
	}
	return 0;
}
