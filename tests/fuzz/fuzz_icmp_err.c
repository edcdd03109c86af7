/*
 * libFuzzer target for the ICMP path-MTU error parser
 * (gsoi_icmp_err_parse, xdp/engine/icmp_err.c) over raw frames.
 *
 * The first byte asks for sums to be made right before the parse (bit 0:
 * the outer IPv4 header's, bit 1: the ICMP message's), so that the
 * fuzzer gets past them; the rest is the frame, parsed from a heap copy of
 * exactly its length, so that ASan sees a read past it.  Checked against
 * this target's own walk (fuzz_frame.h): a frame that is not IP, or IP
 * that is not ICMP, is OTHER; a PMTU verdict comes only from a whole,
 * unfragmented frame of the right type and code whose sums add up, with
 * the family the EtherType says, TCP or UDP quoted, the MTU at or above
 * its family's floor, and every field equal to the bytes it came from;
 * bytes after the IP packet (Ethernet padding) change nothing of it.
 *
 * Links: xdp/engine/frame_rx.c xdp/engine/icmp_err.c
 */
#include <stdlib.h>
#include <string.h>

#include "engine/icmp_err_internal.h"
#include "fuzz_frame.h"
#include "fuzz_input.h"

/* Make the sums the first byte asks for right, in the copy. */
static void seal(uint8_t *f, size_t n, uint8_t how)
{
	struct fwalk w;

	if (!fwalk(f, n, &w))
		return;
	if ((how & 1) && !w.v6)
		ref_seal(f + w.ip, w.l4 - w.ip, f + w.ip + 10, 0);
	if ((how & 2) && w.l4_len >= 4)
		ref_seal(f + w.l4, w.l4_len, f + w.l4 + 2, w.v6 ? fwalk_pseudo(f, &w) : 0);
}

/* What a PMTU verdict promises, from the bytes. */
static void check_pmtu(const uint8_t *f, size_t n, const struct icmp_err *e)
{
	static const uint8_t zero[16];
	struct fwalk w;
	const uint8_t *icmp, *q;
	size_t qn, hl, alen;

	check(fwalk(f, n, &w));
	icmp = f + w.l4;
	check(e->l3 == (w.v6 ? 6 : 4));
	check(w.l4_len >= 8);
	if (w.v6) {
		check(w.proto == 58 && icmp[0] == 2 && icmp[1] == 0);
		check(e->mtu == be32(icmp + 4) && e->mtu >= ICMP_ERR_MIN_MTU6);
	} else {
		check(w.proto == 1 && icmp[0] == 3 && icmp[1] == 4 && !w.frag);
		check(ref_fold(ref_sum(f + w.ip, w.l4 - w.ip, 0)) == 0xffff);
		check(e->mtu == (be16(icmp + 6) < 552 ? 552 : be16(icmp + 6)) && e->mtu >= ICMP_ERR_MIN_PMTU4);
	}
	check(ref_fold(ref_sum(icmp, w.l4_len, w.v6 ? fwalk_pseudo(f, &w) : 0)) == 0xffff);
	check(e->vlan == (w.tagged ? w.vid : 0));

	/* The quote. */
	q = icmp + 8;
	qn = w.l4_len - 8;
	alen = w.v6 ? 16 : 4;
	hl = w.v6 ? 40 : (q[0] & 15u) * 4;
	check(qn >= 20 && q[0] >> 4 == (w.v6 ? 6 : 4) && hl >= 20 && qn >= hl + 8);
	check(e->l4 == q[w.v6 ? 6 : 9] && (e->l4 == 6 || e->l4 == 17));
	check(!memcmp(e->local, q + (w.v6 ? 8 : 12), alen) && !memcmp(e->local + alen, zero, 16 - alen));
	check(!memcmp(e->remote, q + (w.v6 ? 24 : 16), alen) && !memcmp(e->remote + alen, zero, 16 - alen));
	check(!memcmp(e->router, f + w.ip + (w.v6 ? 8 : 12), alen) && !memcmp(e->router + alen, zero, 16 - alen));
	check(e->lport == be16(q + hl) && e->rport == be16(q + hl + 2));
	check(e->seq == (e->l4 == 6 ? be32(q + hl + 4) : 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	uint8_t how = take8(&in);
	size_t n = in.n;
	uint8_t *f = malloc(n ? n : 1), *g;
	struct icmp_err e, e2;
	enum icmp_err_verdict v;
	struct fwalk w;

	check(f);
	memcpy(f, in.p, n);
	seal(f, n, how);
	memset(&e, 0, sizeof(e));
	v = gsoi_icmp_err_parse(f, (uint32_t)n, &e);
	check(v == ICMP_ERR_PMTU || v == ICMP_ERR_OTHER || v == ICMP_ERR_BAD);

	/* Not IP, or IP whose header says another protocol: never ours. */
	if (n >= 14) {
		uint32_t et = be16(f + 12);
		size_t ip = 14;

		if (et == 0x8100 && n >= 18) {
			et = be16(f + 16);
			ip = 18;
		}
		if (et != 0x8100 && et != 0x0800 && et != 0x86dd)
			check(v == ICMP_ERR_OTHER);
		if (et == 0x0800 && n >= ip + 20 && f[ip] >> 4 == 4 && f[ip + 9] != 1)
			check(v == ICMP_ERR_OTHER);
		if (et == 0x86dd && n >= ip + 40 && f[ip] >> 4 == 6 && f[ip + 6] != 58)
			check(v == ICMP_ERR_OTHER);
	}
	if (v != ICMP_ERR_PMTU) {
		free(f);
		return 0;
	}
	check_pmtu(f, n, &e);

	/* Padding after the IP packet is not read as part of it. */
	check(fwalk(f, n, &w));
	g = malloc(n + 7);
	check(g);
	memcpy(g, f, n);
	memset(g + n, how, 7);
	memset(&e2, 0, sizeof(e2));
	check(gsoi_icmp_err_parse(g, (uint32_t)n + 7, &e2) == ICMP_ERR_PMTU);
	check(!memcmp(&e, &e2, sizeof(e)));
	free(g);
	free(f);
	return 0;
}
