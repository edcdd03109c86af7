/*
 * Fuzz the header parsers (gso_tmpl__parse, gso_tmpl__parse_pkt) over raw bytes.
 * Never crashes; on success the recorded offsets are consistent with each
 * other and with `len`, the template holds exactly the frame's header
 * bytes, and a failed call leaves the template untouched.  Accepted
 * templates are also pushed through gso_offload_describe(), every encoder
 * and gso_offload_seed_frame(), which must not crash either and must keep
 * their own invariants.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gso/gso.h>

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static void check_tmpl(const struct gso_tmpl *t, const uint8_t *data, size_t len)
{
	CHECK(t->hdr_len <= len && t->hdr_len <= GSO_MAX_HDR_LEN);
	CHECK(t->vlan <= 1 && t->l3_off == 14 + 4 * t->vlan);
	CHECK(t->l3 == GSO_L3_IPV4 || t->l3 == GSO_L3_IPV6);
	CHECK(t->l4 == GSO_L4_TCP || t->l4 == GSO_L4_UDP);
	unsigned l3_len = (unsigned)t->l4_off - t->l3_off;
	if (t->l3 == GSO_L3_IPV4)
		CHECK(l3_len >= 20 && l3_len <= 60 && l3_len % 4 == 0 &&
		      l3_len == (data[t->l3_off] & 15u) * 4);
	else
		CHECK(l3_len == 40);
	if (t->l4 == GSO_L4_TCP)
		CHECK(t->l4_len >= 20 && t->l4_len <= 60 && t->l4_len == (data[t->l4_off + 12] >> 4) * 4u);
	else
		CHECK(t->l4_len == 8);
	CHECK(t->hdr_len == t->l4_off + t->l4_len);
	CHECK(memcmp(t->hdr, data, t->hdr_len) == 0);
	for (size_t i = t->hdr_len; i < sizeof(t->hdr); i++)
		CHECK(t->hdr[i] == 0);
}

static void exercise_offload(const struct gso_tmpl *t, const uint8_t *data, size_t len)
{
	struct gso_offload_req r = { .sz = sizeof(r) };
	uint32_t payload = 0, mss = 1;
	uint8_t hdr[GSO_MAX_HDR_LEN + 1];

	/* Derive sizes from the bytes past the headers. */
	if (len >= t->hdr_len + 6u) {
		const uint8_t *p = data + t->hdr_len;

		payload = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
		mss = (uint32_t)p[3] << 16 | (uint32_t)p[4] << 8 | p[5];
	}
	if (gso_offload_describe(t, payload, mss, 0, &r) != 0)
		return;
	CHECK(r.hdr_len == t->hdr_len && r.csum_start == t->l4_off && r.payload_len == payload);
	CHECK(r.segs >= 1 && (uint64_t)(r.segs - 1) * mss < payload + 1u);

	struct gso_vnet_hdr vh;
	if (gso_offload_vnet(&r, t, &vh, hdr, sizeof(hdr)) == 0) {
		uint8_t b[GSO_VNET_HDR_V1_LEN];
		struct gso_vnet_hdr back;

		CHECK(gso_vnet_hdr_check(&vh, r.hdr_len + (size_t)payload) == 0);
		CHECK(gso_vnet_hdr_encode(&vh, b, sizeof(b)) == 0);
		CHECK(gso_vnet_hdr_decode(b, sizeof(b), &back) == 0);
		CHECK(memcmp(&back, &vh, sizeof(vh)) == 0);
	}
	struct gso_e1000_ctx c;
	if (gso_offload_e1000(&r, t, &c, hdr, sizeof(hdr)) == 0) {
		uint8_t b[GSO_E1000_DESC_LEN];
		struct gso_e1000_data d[4];

		CHECK(gso_e1000_ctx_encode(&c, b) == 0);
		CHECK(gso_e1000_desc_kind(b) == GSO_E1000_CONTEXT);
		if (payload)
			CHECK(gso_offload_e1000_data(&r, 0, payload, 1, 0, d, 4) != 0);
	}
	struct gso_xsk_txmd m;
	if (gso_offload_xsk(&r, t, 0, &m, hdr, sizeof(hdr)) == 0)
		CHECK(r.type == GSO_OFFLOAD_NONE && m.csum_start == r.csum_start);

	/* The frame itself, seeded in place on a copy. */
	uint8_t *copy = malloc(len);
	if (!copy)
		return;
	memcpy(copy, data, len);
	uint16_t cs = 0, co = 0;
	if (gso_offload_seed_frame(t, copy, len, &cs, &co) == 0)
		CHECK(cs == t->l4_off && cs + co + 2u <= len);
	else
		CHECK(memcmp(copy, data, len) == 0);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gso_tmpl t, poison;
	size_t off = 0, plen = 0;

	memset(&poison, 0xa5, sizeof(poison));
	t = poison;
	if (gso_tmpl__parse(&t, data, size) == 0) {
		check_tmpl(&t, data, size);
		exercise_offload(&t, data, size);
	} else {
		CHECK(memcmp(&t, &poison, sizeof(t)) == 0);
	}

	t = poison;
	if (gso_tmpl__parse_pkt(&t, data, size, &off, &plen) == 0) {
		check_tmpl(&t, data, size);
		CHECK(off == t.hdr_len && off + plen <= size);
		CHECK(plen + t.hdr_len - t.l3_off <= GSO_MAX_IP_LEN);
		/* the packet parser is stricter than the template parser */
		struct gso_tmpl t2;
		CHECK(gso_tmpl__parse(&t2, data, size) == 0);
		CHECK(memcmp(&t2, &t, sizeof(t)) == 0);
	} else {
		CHECK(memcmp(&t, &poison, sizeof(t)) == 0);
	}
	return 0;
}
