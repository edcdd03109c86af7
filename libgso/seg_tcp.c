/*
 * TCP segmentation plan, as tcp_gso_segment() does it (the per-segment
 * field rewrite is seg_tcp_fix() in seg_internal.h, inline in the loops).
 *
 * Checksum cost: the pseudo-header and the TCP header words that are the
 * same in every segment are summed once per super-segment for the
 * non-last length and once for the last one; per segment only the
 * sequence number and the doff/flags word are added (the kernel swaps the
 * length term with ~L + (thlen + mss) for the same reason).
 */
#include <errno.h>

#include "seg_internal.h"

int seg_tcp_plan(struct seg_plan *p)
{
	const uint8_t *th = p->t->hdr + p->l4_off;
	unsigned thlen = p->t->l4_len;

	p->csum_off = SEG_TCP_CHECK;
	p->seq0 = (uint32_t)th[SEG_TCP_SEQ] << 24 | (uint32_t)th[SEG_TCP_SEQ + 1] << 16 |
		  (uint32_t)th[SEG_TCP_SEQ + 2] << 8 | th[SEG_TCP_SEQ + 3];
	p->tcp_flags = th[SEG_TCP_FLAGS];
	/* Every segment would claim to open or reset the connection. */
	if (p->n > 1 && (p->tcp_flags & (GSO_TCP_SYN | GSO_TCP_RST)))
		return -EINVAL;

	if (p->csum == GSO_CSUM_PARTIAL) {
		for (int k = 0; k < 2; k++)
			p->l4_sum[k] = gso_csum_fold(seg_pseudo(p, p->l4_len[k]));
	} else {
		uint8_t scratch[60];
		uint32_t fixed;

		memcpy(scratch, th, thlen);
		memset(scratch + SEG_TCP_SEQ, 0, 4);
		memset(scratch + SEG_TCP_FLAGS_WORD, 0, 2);
		memset(scratch + SEG_TCP_CHECK, 0, 2);
		fixed = gso_csum_partial(scratch, thlen, 0);
		for (int k = 0; k < 2; k++)
			p->l4_sum[k] = gso_csum_add(fixed, seg_pseudo(p, p->l4_len[k]));
	}
	return 0;
}
