/*
 * SYN cookies (see syncookie_internal.h for the layout and why).
 */
#include "syncookie_internal.h"

#include <string.h>

#include <gso/tmpl.h>

#include "siphash_internal.h"

/*
 * The MSS classes, 2 bits' worth per family.  IPv4: 536 (RFC 1122's
 * default, old or odd stacks), 1300 (behind VPNs and tunnels), 1440
 * (PPPoE and similar 1492-byte links), 1460 (Ethernet).  IPv6: 1220 (the
 * 1280-byte minimum MTU), 1420 (6in4 and other 1480-byte tunnels), 1440
 * (Ethernet), 8940 (9000-byte jumbo frames).  A client whose MSS falls
 * between two gets the lower: a smaller segment always fits.
 */
static const uint16_t mss_v4[SYNCOOKIE_MSS_CLASSES] = { 536, 1300, 1440, 1460 };
static const uint16_t mss_v6[SYNCOOKIE_MSS_CLASSES] = { 1220, 1420, 1440, 8940 };

const uint16_t *gsoi_syncookie_mss_table(uint8_t l3)
{
	return l3 == GSO_L3_IPV4 ? mss_v4 : mss_v6;
}

#define TS_WSCALE_MASK 0x0fu
#define TS_WSCALE_NONE 0x0fu
#define TS_SACK 0x10u
#define TS_RESERVED 0x20u /* always 0 in ours */
#define TS_BITS 6
#define MAX_WSCALE 14 /* RFC 7323 section 2.3 */

/*
 * What the hashes read: a tag (1 for H1, 2 for H2), the tuple, the
 * peer's ISN and, for H2, the slot; multi-byte fields little endian, so
 * the cookie of a tuple does not depend on the host.
 */
enum { MSG_TUPLE_ISN = 44, MSG_SLOT = 8 };

static size_t put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return n;
}

static void tuple_msg(uint8_t m[MSG_TUPLE_ISN + MSG_SLOT], const struct tcp_key *k, uint32_t peer_isn)
{
	size_t o = 0;

	o++; /* the tag: h1() and h2() write it */
	m[o++] = k->l3;
	memcpy(m + o, k->peer_addr, 16);
	o += 16;
	memcpy(m + o, k->our_addr, 16);
	o += 16;
	o += put_le(m + o, k->peer_port, 2);
	o += put_le(m + o, k->our_port, 2);
	o += put_le(m + o, k->vlan, 2);
	put_le(m + o, peer_isn, 4);
}

static uint32_t h1(const uint8_t key[SYNCOOKIE_KEY_LEN], uint8_t m[MSG_TUPLE_ISN + MSG_SLOT])
{
	m[0] = 1;
	return (uint32_t)gsoi_siphash24(key, m, MSG_TUPLE_ISN);
}

static uint32_t h2(const uint8_t key[SYNCOOKIE_KEY_LEN], uint8_t m[MSG_TUPLE_ISN + MSG_SLOT], uint64_t slot)
{
	m[0] = 2;
	put_le(m + MSG_TUPLE_ISN, slot, MSG_SLOT);
	return (uint32_t)gsoi_siphash24(key, m, MSG_TUPLE_ISN + MSG_SLOT);
}

uint32_t gsoi_syncookie_make(const uint8_t key[SYNCOOKIE_KEY_LEN], const struct tcp_key *k, uint32_t peer_isn,
			     uint64_t now_ns, uint16_t mss, uint16_t *mss_used)
{
	const uint16_t *tab = gsoi_syncookie_mss_table(k->l3);
	unsigned idx = SYNCOOKIE_MSS_CLASSES - 1;
	uint64_t slot = now_ns / SYNCOOKIE_SLOT_NS;
	uint8_t m[MSG_TUPLE_ISN + MSG_SLOT];

	while (idx && tab[idx] > mss)
		idx--;
	if (mss_used)
		*mss_used = tab[idx];
	tuple_msg(m, k, peer_isn);
	return h1(key, m) + ((uint32_t)(slot & 0xff) << 24) + ((h2(key, m, slot) + idx) & 0xffffff);
}

uint16_t gsoi_syncookie_check(const uint8_t key[SYNCOOKIE_KEY_LEN], const struct tcp_key *k, uint32_t peer_isn,
			      uint32_t cookie, uint64_t now_ns)
{
	uint64_t slot = now_ns / SYNCOOKIE_SLOT_NS;
	uint8_t m[MSG_TUPLE_ISN + MSG_SLOT];

	tuple_msg(m, k, peer_isn);
	/* Adding the masked H2 part never carries into the top byte: it is the slot's. */
	uint32_t c = cookie - h1(key, m);
	uint8_t age = (uint8_t)((uint8_t)slot - (c >> 24));

	/* This slot or the one before; none before slot 0 (a clock near 0). */
	if (age > 1 || age > slot)
		return 0;
	uint32_t idx = (c - h2(key, m, slot - age)) & 0xffffff;

	if (idx >= SYNCOOKIE_MSS_CLASSES)
		return 0;
	return gsoi_syncookie_mss_table(k->l3)[idx];
}

uint32_t gsoi_syncookie_tsval(uint32_t tsval, int wscale, bool sack)
{
	uint32_t opt = wscale < 0 ? TS_WSCALE_NONE : wscale > MAX_WSCALE ? MAX_WSCALE : (uint32_t)wscale;
	uint32_t mask = (1u << TS_BITS) - 1;

	if (sack)
		opt |= TS_SACK;
	uint32_t ts = (tsval & ~mask) | opt;

	/* Never ahead of the clock: a later TSval below this one would fail the client's PAWS test. */
	if (ts > tsval)
		ts -= 1u << TS_BITS;
	return ts;
}

bool gsoi_syncookie_ts_decode(uint32_t tsecr, int *wscale, bool *sack)
{
	if (tsecr & TS_RESERVED)
		return false;
	uint32_t w = tsecr & TS_WSCALE_MASK;

	*wscale = w == TS_WSCALE_NONE ? -1 : (int)w;
	*sack = tsecr & TS_SACK;
	return true;
}
