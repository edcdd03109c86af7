/*
 * libFuzzer target for the segmenter: a random super-segment (a frame for
 * gso_tmpl__parse_pkt, headers for gso_tmpl__parse, fields for gso_tmpl__build,
 * or raw template-struct bytes) cut into random extents, a random MSS and
 * options, and output buffers sized exactly -- or one of them too small.
 *
 * Checked on every input: no crash and no access outside any buffer (ASan
 * sees exact-size allocations), gso_seg_count / gso_segment /
 * gso_segment_ref agree, a failing call wrote nothing, form (a) equals form
 * (b) rebuilt from its references, payload lengths add up, every FULL frame
 * has valid IPv4 and L4 checksums under a plain reference sum, every
 * PARTIAL seed finishes to the FULL checksum, and gso_offload_describe()
 * refuses what gso_seg_count() refuses, with the same errno.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gso/offload.h>
#include <gso/seg.h>
#include <gso/tmpl.h>

#include "fuzz_input.h"
#include "../common/ref_csum.h"

#define POISON 0x5a
#define MAX_FRAMES 1024u /* above this only counts and errors are checked */

static unsigned rd16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }

static uint32_t pseudo(const struct gso_tmpl *t, const uint8_t *f, uint32_t l4len)
{
	const uint8_t *ip = f + t->l3_off;
	uint32_t s = t->l3 == GSO_L3_IPV4 ? ref_sum(ip + 12, 8, 0) : ref_sum(ip + 8, 32, 0);

	return s + t->l4 + (l4len >> 16) + (l4len & 0xffff);
}

/* Template from one of four sources; returns false if there is none. */
static bool get_tmpl(struct gso_tmpl *t, struct in *in, uint8_t how, const uint8_t **pay,
		     size_t *pay_len)
{
	size_t len, off, plen;

	switch (how & 3) {
	case 0: /* a whole super-packet frame */
		len = take16(in);
		if (len > in->n)
			len = in->n;
		if (gso_tmpl__parse_pkt(t, in->p, len, &off, &plen))
			return false;
		*pay = in->p + off;
		*pay_len = plen;
		in->p += len;
		in->n -= len;
		return true;
	case 1: /* headers, then the rest of the input is payload */
		len = take8(in);
		if (len > in->n)
			len = in->n;
		if (gso_tmpl__parse(t, in->p, len))
			return false;
		in->p += len;
		in->n -= len;
		return true;
	case 2: { /* fields */
		GSO_OPTS(gso_tmpl_fields, f, .l3 = (how & 4) ? GSO_L3_IPV6 : GSO_L3_IPV4,
			 .l4 = (how & 8) ? GSO_L4_UDP : GSO_L4_TCP);
		uint8_t opts[40];
		uint8_t b = take8(in);

		f.has_vlan = b & 1;
		f.vlan_tci = f.has_vlan ? take16(in) : 0;
		for (int k = 0; k < 16; k++) {
			f.saddr[k] = take8(in);
			f.daddr[k] = take8(in);
		}
		f.tos = take8(in);
		f.ttl = take8(in);
		if (f.l3 == GSO_L3_IPV4) {
			f.df = b & 2;
			f.ip_id = take16(in);
		} else {
			f.flow_label = take16(in) | (uint32_t)(take8(in) & 0xf) << 16;
		}
		f.sport = take16(in);
		f.dport = take16(in);
		/* options: NOP padding of a fuzzed length */
		memset(opts, 1, sizeof(opts));
		if (f.l4 == GSO_L4_TCP) {
			f.seq = (uint32_t)take16(in) << 16 | take16(in);
			f.ack = (uint32_t)take16(in) << 16 | take16(in);
			f.tcp_flags = take8(in) & (uint8_t)~(GSO_TCP_SYN | GSO_TCP_RST | GSO_TCP_URG);
			f.window = take16(in);
			f.tcp_opts = opts;
			f.tcp_opts_len = (uint8_t)(4 * ((b >> 2) % 11));
		}
		if (f.l3 == GSO_L3_IPV4) {
			f.ip_opts = opts;
			f.ip_opts_len = (uint8_t)(4 * ((b >> 5) % 11));
		}
		return gso_tmpl__build(t, &f) == 0;
	}
	default: /* raw struct bytes: the segmenter must refuse garbage */
		memset(t, 0, sizeof(*t));
		len = in->n < sizeof(*t) ? in->n : sizeof(*t);
		memcpy(t, in->p, len);
		in->p += len;
		in->n -= len;
		return true;
	}
}

/* Every byte of the n buffers still poisoned (cap + 1 bytes each). */
static void check_untouched(struct gso_frame *fr, struct gso_seg_ref *rf, unsigned n, size_t hcap)
{
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *b = fr[i].buf;

		check(fr[i].len == 0xeeeeeeee && fr[i].csum_start == 0xeeee);
		for (uint32_t k = 0; k <= fr[i].cap; k++)
			check(b[k] == POISON);
		check(rf[i].hdr_len == 0xeeee && rf[i].pay_len == 0xeeeeeeee);
		for (size_t k = 0; k <= hcap; k++)
			check(((const uint8_t *)rf[i].hdr)[k] == POISON);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct gso_tmpl t;
	const uint8_t *pay = NULL;
	size_t total;
	uint8_t how = take8(&in), mode = take8(&in);
	uint32_t mss = take16(&in);
	struct gso_extent ext[16];
	void *own[16] = { 0 };
	unsigned n_ext = 0;
	int n, r;

	if (mode & 0x80)
		mss |= 0x10000; /* too large */
	GSO_OPTS(gso_seg_opts, o, .mss = mss, .csum = (mode & 1) ? GSO_CSUM_PARTIAL : GSO_CSUM_FULL,
		 .ipid = (mode >> 1) & 1, .max_segs = (mode & 0x40) ? take8(&in) : 0);
	if (mode & 0x20)
		o.csum = 2; /* unknown mode */

	if (!get_tmpl(&t, &in, how, &pay, &total))
		return 0;
	if (!pay) { /* payload: the rest of the input, at most 64 KiB */
		pay = in.p;
		total = in.n > 65536 ? 65536 : in.n;
	}

	/* cut into up to 16 extents, each its own exact allocation */
	{
		size_t done = 0;
		uint8_t cuts = (uint8_t)(how >> 4);

		while (n_ext < 16 && (done < total || n_ext == 0)) {
			size_t k = n_ext == 15 || !(cuts & 1) ? total - done
							     : ((size_t)data[(done + n_ext) % size] * 37) % (total - done + 1);
			cuts = (uint8_t)(cuts >> 1 | cuts << 7);
			own[n_ext] = malloc(k ? k : 1);
			if (k)
				memcpy(own[n_ext], pay + done, k);
			ext[n_ext].base = own[n_ext];
			ext[n_ext].len = k;
			n_ext++;
			done += k;
		}
	}
	struct gso_super s = { &t, ext, n_ext };

	n = gso_seg_count(&s, &o);
	if (n < 0) {
		check(n == -EINVAL || n == -EMSGSIZE || n == -E2BIG);
	} else {
		check(n >= 1);
		check(n == (total ? (int)((total + mss - 1) / mss) : 1));
	}
	/*
	 * The offload path, on the same super-segment (options it has no
	 * equivalent for left out): the same refusals with the same errno;
	 * where software accepts, the same count, or its own refusals
	 * (GSO_BY_FRAGS, offsets no device can be told: -EINVAL).
	 */
	if (o.csum <= GSO_CSUM_PARTIAL && !o.max_segs) {
		struct gso_offload_req r = { .sz = sizeof(r) };
		int d = gso_offload_describe(&t, (uint32_t)total, mss, o.ipid ? GSO_OFFLOAD_F_FIXEDID : 0, &r);

		if (n < 0)
			check(d == n);
		else
			check(d == -EINVAL || (d == 0 && r.segs == (uint32_t)n));
	}

	/* outputs: exact frame sizes, or one frame/header a byte short */
	unsigned n_out = n > 0 ? (unsigned)n : 4u;
	bool room = n > 0 && (unsigned)n <= MAX_FRAMES;
	if (!room)
		n_out = 4; /* too few: must be -ENOSPC (or the count's own error) */
	int shrink = (mode & 0x10) && room ? (int)(take8(&in) % n_out) : -1;
	int shrink_hdr = shrink >= 0 && (mode & 0x08);
	size_t hcap = t.hdr_len <= GSO_MAX_HDR_LEN ? t.hdr_len : 0;
	struct gso_frame *fr = calloc(n_out, sizeof(*fr));
	struct gso_seg_ref *rf = calloc(n_out, sizeof(*rf));
	size_t stride = (size_t)(mss < 65536 ? mss : 0) + hcap;

	for (unsigned i = 0; i < n_out; i++) {
		uint32_t cap = (uint32_t)hcap;

		if (room)
			cap += (uint32_t)(i + 1 < n_out ? mss : total - (size_t)i * mss);
		if ((int)i == shrink)
			cap = shrink_hdr ? (hcap ? (uint32_t)hcap - 1 : 0) : (cap ? cap - 1 : 0);
		fr[i].cap = cap;
		fr[i].buf = malloc(cap + 1u);
		memset(fr[i].buf, POISON, cap + 1u);
		fr[i].len = 0xeeeeeeee;
		fr[i].csum_start = fr[i].csum_offset = 0xeeee;
		rf[i].hdr_cap = (uint16_t)(shrink_hdr && (int)i == shrink ? hcap - (hcap > 0) : hcap);
		rf[i].hdr = malloc(hcap + 1);
		memset(rf[i].hdr, POISON, hcap + 1);
		memset(&rf[i].hdr_len, 0xee, sizeof(rf[i]) - offsetof(struct gso_seg_ref, hdr_len));
	}

	r = gso_segment(&s, &o, fr, n_out);
	int rr = gso_segment_ref(&s, &o, rf, n_out);
	if (n < 0) {
		check(r == n && rr == n);
		check_untouched(fr, rf, n_out, hcap);
	} else if (!room) {
		check(r == -ENOSPC && rr == -ENOSPC);
		check_untouched(fr, rf, n_out, hcap);
	} else if (shrink >= 0) {
		check(r == -ENOBUFS);
		check(shrink_hdr && hcap ? rr == -ENOBUFS : rr == n);
		for (unsigned i = 0; i < n_out; i++)
			for (uint32_t k = 0; k <= fr[i].cap; k++)
				check(((uint8_t *)fr[i].buf)[k] == POISON);
	} else {
		check(r == n && rr == n);
	}

	if (r == n && n > 0) {
		/* the other checksum mode, for PARTIAL <-> FULL finishing */
		struct gso_frame *fo = calloc((size_t)n, sizeof(*fo));
		uint8_t *other = malloc((size_t)n * stride + 1);
		GSO_OPTS(gso_seg_opts, o2, .mss = o.mss, .ipid = o.ipid, .max_segs = o.max_segs,
			 .csum = o.csum == GSO_CSUM_FULL ? GSO_CSUM_PARTIAL : GSO_CSUM_FULL);
		size_t pay_done = 0;

		for (int i = 0; i < n; i++)
			fo[i] = (struct gso_frame){ .buf = other + (size_t)i * stride, .cap = (uint32_t)stride };
		check(gso_segment(&s, &o2, fo, (unsigned)n) == n);

		for (int i = 0; i < n; i++) {
			const uint8_t *f = fr[i].buf;
			const uint8_t *full = o.csum == GSO_CSUM_FULL ? f : fo[i].buf;
			const uint8_t *part = o.csum == GSO_CSUM_FULL ? fo[i].buf : f;
			uint32_t len = fr[i].len, l4len = len - t.l4_off;
			uint32_t pl = rr == n ? rf[i].pay_len : len - t.hdr_len;
			unsigned co = t.l4 == GSO_L4_TCP ? 16 : 6;

			check(len == t.hdr_len + pl && fo[i].len == len);
			check(fr[i].csum_start == t.l4_off && fr[i].csum_offset == co);
			for (uint32_t k = len; k <= fr[i].cap; k++)
				check(f[k] == POISON);
			check(pl == (i + 1 < n ? mss : total - pay_done));
			/* payload copied unchanged */
			check(memcmp(f + t.hdr_len, pay + pay_done, pl) == 0);
			pay_done += pl;
			if (t.l3 == GSO_L3_IPV4)
				check(ref_fold(ref_sum(f + t.l3_off, t.l4_off - t.l3_off, 0)) == 0xffff);
			check(ref_fold(pseudo(&t, full, l4len) + ref_sum(full + t.l4_off, l4len, 0)) == 0xffff);
			/* the seed finishes to the full checksum (Linux's zero rule applied) */
			unsigned fin = (uint16_t)~ref_fold(ref_sum(part + t.l4_off, l4len, 0));
			if (fin == 0 && (t.l4 == GSO_L4_UDP || n == 1))
				fin = 0xffff;
			check(fin == rd16(full + t.l4_off + co));
			check(memcmp(full, part, t.l4_off + co) == 0);

			if (rr == n) {
				/* form (b) rebuilds form (a) */
				const uint8_t *h = rf[i].hdr;
				uint32_t idx = rf[i].ext_idx, off = rf[i].ext_off, left = pl, at = t.hdr_len;

				check(rf[i].hdr_len == t.hdr_len && memcmp(h, f, t.hdr_len) == 0);
				check(rf[i].pay_off == (uint32_t)i * mss);
				check(h[t.hdr_len] == POISON);
				check(!left || (idx < n_ext && off < ext[idx].len));
				while (left) {
					check(idx < n_ext);
					size_t k = ext[idx].len - off < left ? ext[idx].len - off : left;
					check(memcmp(f + at, (const uint8_t *)ext[idx].base + off, k) == 0);
					at += (uint32_t)k;
					left -= (uint32_t)k;
					idx++;
					off = 0;
				}
			}
		}
		check(pay_done == total);
		free(other);
		free(fo);
	}

	for (unsigned i = 0; i < n_out; i++) {
		free(fr[i].buf);
		free(rf[i].hdr);
	}
	free(fr);
	free(rf);
	for (unsigned k = 0; k < n_ext; k++)
		free(own[k]);
	return 0;
}
