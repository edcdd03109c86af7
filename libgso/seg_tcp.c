/*
 * TCP segmentation, as tcp_gso_segment() does it: seq advances by MSS,
 * FIN/PSH stay on the last segment only and CWR on the first only.
 *
 * Checksum cost: the pseudo-header and the TCP header words that are the
 * same in every segment are summed once per super-segment for the
 * non-last length and once for the last one; per segment only the
 * sequence number and the doff/flags word are added (the kernel swaps the
 * length term with ~L + (thlen + mss) for the same reason).
 */
#include <errno.h>

#include "seg_internal.h"

#define TCP_SEQ 4u
#define TCP_FLAGS_WORD 12u
#define TCP_FLAGS 13u
#define TCP_CHECK 16u

int seg_tcp_plan(struct seg_plan *p)
{
	const uint8_t *th = p->t->hdr + p->l4_off;
	unsigned thlen = p->t->l4_len;

	p->csum_off = TCP_CHECK;
	p->seq0 = (uint32_t)th[TCP_SEQ] << 24 | (uint32_t)th[TCP_SEQ + 1] << 16 |
		  (uint32_t)th[TCP_SEQ + 2] << 8 | th[TCP_SEQ + 3];
	p->tcp_flags = th[TCP_FLAGS];
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
		memset(scratch + TCP_SEQ, 0, 4);
		memset(scratch + TCP_FLAGS_WORD, 0, 2);
		memset(scratch + TCP_CHECK, 0, 2);
		fixed = gso_csum_partial(scratch, thlen, 0);
		for (int k = 0; k < 2; k++)
			p->l4_sum[k] = gso_csum_add(fixed, seg_pseudo(p, p->l4_len[k]));
	}
	return 0;
}

uint32_t seg_tcp_hdr(const struct seg_plan *p, uint32_t i, uint8_t *l4)
{
	int last = seg_is_last(p, i);
	uint8_t flags = p->tcp_flags;
	uint32_t seq;

	if (!last)
		flags &= (uint8_t)~(GSO_TCP_FIN | GSO_TCP_PSH);
	if (i)
		flags &= (uint8_t)~GSO_TCP_CWR;
	l4[TCP_FLAGS] = flags;
	seg_put_be32(l4 + TCP_SEQ, p->seq0 + i * p->mss);

	if (p->csum == GSO_CSUM_PARTIAL) {
		uint16_t seed = (uint16_t)p->l4_sum[last];

		memcpy(l4 + TCP_CHECK, &seed, 2);
		return 0;
	}
	memset(l4 + TCP_CHECK, 0, 2);
	/* A 32-bit word adds like its two halves: 2^16 == 1 (mod 0xffff). */
	memcpy(&seq, l4 + TCP_SEQ, 4);
	return gso_csum_add(gso_csum_add(p->l4_sum[last], seq), seg_word(l4 + TCP_FLAGS_WORD));
}
