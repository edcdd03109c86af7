/*
 * TCP segmentation plan, as tcp_gso_segment() does it: the header images
 * get the non-last and last flags (FIN/PSH on the last only; CWR, first
 * segment only, is put back by seg_tcp_fix() in seg_internal.h) and the
 * checksum seed or the invariant part of the checksum.
 *
 * Checksum cost: the pseudo-header and the TCP header words that are the
 * same in every segment are summed once per super-segment for the
 * non-last length and once for the last one; per segment only the
 * sequence number and the doff/flags word are added (the kernel swaps the
 * length term with ~L + (thlen + mss) for the same reason).
 */
#include "seg_internal.h"

void gsoi_seg_tcp_plan(struct seg_plan *p)
{
	const uint8_t *th = p->t->hdr + p->l4_off;
	unsigned thlen = p->t->l4_len;

	p->csum_off = SEG_TCP_CHECK;
	p->seq0 = (uint32_t)th[SEG_TCP_SEQ] << 24 | (uint32_t)th[SEG_TCP_SEQ + 1] << 16 |
		  (uint32_t)th[SEG_TCP_SEQ + 2] << 8 | th[SEG_TCP_SEQ + 3];
	p->tcp_flags = th[SEG_TCP_FLAGS];

	for (int k = 0; k < 2; k++) {
		uint8_t *l4 = p->img[k] + p->l4_off;
		uint8_t flags = p->tcp_flags & (uint8_t)~GSO_TCP_CWR; /* CWR: first only */

		if (!k)
			flags &= (uint8_t)~(GSO_TCP_FIN | GSO_TCP_PSH);
		l4[SEG_TCP_FLAGS] = flags;
		memset(l4 + SEG_TCP_SEQ, 0, 4);
		memset(l4 + SEG_TCP_CHECK, 0, 2);
		if (p->csum == GSO_CSUM_PARTIAL) {
			uint16_t seed = gso_csum_fold(seg_pseudo(p, p->l4_len[k]));

			memcpy(l4 + SEG_TCP_CHECK, &seed, 2);
			p->l4_sum[k] = 0;
		} else {
			/*
			 * Everything but seq (0 here) and the doff/flags word,
			 * which seg_tcp_fix() adds per segment.
			 */
			uint8_t w[2];

			memcpy(w, l4 + SEG_TCP_FLAGS_WORD, 2);
			memset(l4 + SEG_TCP_FLAGS_WORD, 0, 2);
			p->l4_sum[k] = gso_csum_add(seg_pseudo(p, p->l4_len[k]), seg_sum32(l4, thlen));
			memcpy(l4 + SEG_TCP_FLAGS_WORD, w, 2);
		}
	}
}
