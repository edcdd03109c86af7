/*
 * Header templates: parse, validate and build the L2+L3+L4 headers of a
 * super-segment, and change the few fields a transport updates between
 * super-segments.
 *
 * Parsing works on a local template and copies it out only on success, so
 * a failed call leaves the caller's template as it was.  Checks are ordered
 * so that a header cut short anywhere reports -ENODATA (or -EBADMSG when a
 * field already visible contradicts itself), never reads past `len`.
 */
#include <errno.h>
#include <string.h>

#include <gso/tmpl.h>
#include "opts_internal.h"
#include "tmpl_wire_internal.h"

/*
 * Walk a TCP or IPv4 option area (both use kind 0 = end, 1 = no-op, else
 * kind, length >= 2, data).  Malformed lengths are refused because every
 * segment copies the options verbatim to the wire.
 */
static int opts_wellformed(const uint8_t *o, size_t len)
{
	size_t i = 0;

	while (i < len) {
		uint8_t kind = o[i];

		if (kind == 0)
			return 0;
		if (kind == 1) {
			i++;
			continue;
		}
		if (len - i < 2 || o[i + 1] < 2 || o[i + 1] > len - i)
			return -EBADMSG;
		i += o[i + 1];
	}
	return 0;
}

/* Parse into *o (zero-filled by the caller); *ip_len gets the IP datagram
 * length the L3 header claims. */
static int parse_hdrs(struct gso_tmpl *o, const uint8_t *p, size_t len, size_t *ip_len)
{
	size_t l3_off = ETH_HLEN_, l3_hlen, l4_off, l4_len, l3_pay;
	uint16_t type;
	uint8_t proto;
	int err;

	if (len < ETH_HLEN_)
		return -ENODATA;
	type = get_be16(p + 12);
	if (type == ETHERTYPE_VLAN_) {
		if (len < ETH_HLEN_ + VLAN_HLEN_)
			return -ENODATA;
		type = get_be16(p + 16);
		l3_off += VLAN_HLEN_;
		o->vlan = 1;
	}
	/* Stacked tags (QinQ, or the pre-standard 0x9100) are not handled. */
	if (type == ETHERTYPE_VLAN_ || type == ETHERTYPE_QINQ_ || type == ETHERTYPE_QINQ_OLD_)
		return -EPROTONOSUPPORT;

	const uint8_t *ip = p + l3_off;
	if (type == ETHERTYPE_IPV4_) {
		uint16_t tot, frag;

		if (len - l3_off < 20)
			return -ENODATA;
		if (ip[0] >> 4 != 4)
			return -EBADMSG;
		l3_hlen = (size_t)(ip[0] & 0x0f) * 4;
		if (l3_hlen < 20)
			return -EBADMSG;
		if (len - l3_off < l3_hlen)
			return -ENODATA;
		tot = get_be16(ip + IP4_TOT_LEN_);
		if (tot < l3_hlen)
			return -EBADMSG;
		err = opts_wellformed(ip + 20, l3_hlen - 20);
		if (err)
			return err;
		frag = get_be16(ip + IP4_FRAG_);
		if (frag & (IP4_MF_ | IP4_OFFMASK_))
			return -EPROTONOSUPPORT;
		proto = ip[IP4_PROTO_];
		o->l3 = GSO_L3_IPV4;
		*ip_len = tot;
		l3_pay = tot - l3_hlen;
	} else if (type == ETHERTYPE_IPV6_) {
		if (len - l3_off < IP6_HLEN_)
			return -ENODATA;
		if (ip[0] >> 4 != 6)
			return -EBADMSG;
		l3_hlen = IP6_HLEN_;
		/* Any other next header is an extension header or another L4. */
		proto = ip[IP6_NEXT_];
		o->l3 = GSO_L3_IPV6;
		l3_pay = get_be16(ip + IP6_PLEN_);
		*ip_len = IP6_HLEN_ + l3_pay;
	} else {
		return -EPROTONOSUPPORT;
	}
	if (proto != GSO_L4_TCP && proto != GSO_L4_UDP)
		return -EPROTONOSUPPORT;

	l4_off = l3_off + l3_hlen;
	const uint8_t *l4 = p + l4_off;
	if (proto == GSO_L4_TCP) {
		if (len - l4_off < TCP_HLEN_MIN_)
			return -ENODATA;
		l4_len = (size_t)(l4[TCP_DOFF_] >> 4) * 4;
		if (l4_len < TCP_HLEN_MIN_)
			return -EBADMSG;
		if (len - l4_off < l4_len)
			return -ENODATA;
		err = opts_wellformed(l4 + TCP_HLEN_MIN_, l4_len - TCP_HLEN_MIN_);
		if (err)
			return err;
	} else {
		if (len - l4_off < UDP_HLEN_)
			return -ENODATA;
		l4_len = UDP_HLEN_;
		if (get_be16(l4 + UDP_LEN_) < UDP_HLEN_)
			return -EBADMSG;
	}
	if (l3_pay < l4_len)
		return -EBADMSG;
	/* Unreachable with the header sizes above (138 bytes at most), kept so
	 * that the limit holds if the supported set grows. */
	if (l4_off + l4_len > GSO_MAX_HDR_LEN)
		return -EMSGSIZE;

	o->l4 = proto;
	o->l3_off = (uint8_t)l3_off;
	o->l4_off = (uint8_t)l4_off;
	o->l4_len = (uint8_t)l4_len;
	o->hdr_len = (uint16_t)(l4_off + l4_len);
	memcpy(o->hdr, p, o->hdr_len);
	return 0;
}

GSO_API int gso_tmpl__parse(struct gso_tmpl *t, const void *buf, size_t len)
{
	struct gso_tmpl o;
	size_t ip_len;
	int err;

	if (!t || !buf)
		return -EINVAL;
	memset(&o, 0, sizeof(o));
	err = parse_hdrs(&o, buf, len, &ip_len);
	if (err)
		return err;
	*t = o;
	return 0;
}

GSO_API int gso_tmpl__parse_pkt(struct gso_tmpl *t, const void *frame, size_t len,
			  size_t *payload_off, size_t *payload_len)
{
	struct gso_tmpl o;
	size_t ip_len, avail;
	int err;

	if (!t || !frame)
		return -EINVAL;
	memset(&o, 0, sizeof(o));
	err = parse_hdrs(&o, frame, len, &ip_len);
	if (err)
		return err;
	if (ip_len > GSO_MAX_IP_LEN)
		return -EMSGSIZE;
	avail = len - o.l3_off;
	if (ip_len > avail)
		return -EBADMSG;
	/* Trailing bytes are only acceptable as padding up to the Ethernet
	 * minimum (60 bytes without FCS, 64 when a tag was added after
	 * padding); anything else means the lengths disagree. */
	if (ip_len < avail && len > 60u + VLAN_HLEN_ * o.vlan)
		return -EBADMSG;
	if (o.l4 == GSO_L4_UDP &&
	    get_be16(o.hdr + o.l4_off + UDP_LEN_) != ip_len - (o.l4_off - o.l3_off))
		return -EBADMSG;

	*t = o;
	if (payload_off)
		*payload_off = o.hdr_len;
	if (payload_len)
		*payload_len = o.l3_off + ip_len - o.hdr_len;
	return 0;
}

/* Option bytes must come in whole 32-bit words, at most 40, well formed. */
static bool opts_ok(const uint8_t *opts, uint8_t len)
{
	if (len == 0)
		return true;
	return opts && len % 4 == 0 && len <= 40 && opts_wellformed(opts, len) == 0;
}

#define TCP_FLAGS_REFUSED (GSO_TCP_SYN | GSO_TCP_RST | GSO_TCP_URG)

static int fields_check(const struct gso_tmpl_fields *f)
{
	bool v4 = f->l3 == GSO_L3_IPV4, tcp = f->l4 == GSO_L4_TCP;

	if (!v4 && f->l3 != GSO_L3_IPV6)
		return -EINVAL;
	if (!tcp && f->l4 != GSO_L4_UDP)
		return -EINVAL;
	if (f->vlan_tci && !f->has_vlan)
		return -EINVAL;
	/* Fields of the other protocol must be left zero: a value there means
	 * the caller meant a different packet. */
	if (v4 ? f->flow_label != 0 : (f->df || f->ip_id || f->ip_opts_len))
		return -EINVAL;
	if (f->flow_label > 0xfffff)
		return -EINVAL;
	if (!opts_ok(f->ip_opts, f->ip_opts_len))
		return -EINVAL;
	if (!tcp && (f->seq || f->ack || f->tcp_flags || f->window || f->tcp_opts_len))
		return -EINVAL;
	if (f->tcp_flags & TCP_FLAGS_REFUSED)
		return -EINVAL;
	if (!opts_ok(f->tcp_opts, f->tcp_opts_len))
		return -EINVAL;
	return 0;
}

GSO_API int gso_tmpl__build(struct gso_tmpl *t, const struct gso_tmpl_fields *fp)
{
	struct gso_tmpl_fields f;
	struct gso_tmpl o;
	size_t l3_off, l3_hlen, l4_len;
	uint8_t *h;
	int err;

	if (!t || !fp || !GSO_OPTS_VALID(gso_tmpl_fields, fp))
		return -EINVAL;
	/* Fields past the caller's sz read as zero (default). */
	memset(&f, 0, sizeof(f));
	memcpy(&f, fp, fp->sz < sizeof(f) ? fp->sz : sizeof(f));
	err = fields_check(&f);
	if (err)
		return err;

	memset(&o, 0, sizeof(o));
	h = o.hdr;
	l3_off = f.has_vlan ? ETH_HLEN_ + VLAN_HLEN_ : ETH_HLEN_;
	l3_hlen = f.l3 == GSO_L3_IPV4 ? 20u + f.ip_opts_len : IP6_HLEN_;
	l4_len = f.l4 == GSO_L4_TCP ? TCP_HLEN_MIN_ + f.tcp_opts_len : UDP_HLEN_;

	memcpy(h, f.eth_dst, 6);
	memcpy(h + 6, f.eth_src, 6);
	if (f.has_vlan) {
		put_be16(h + 12, ETHERTYPE_VLAN_);
		put_be16(h + 14, f.vlan_tci);
	}
	put_be16(h + l3_off - 2, f.l3 == GSO_L3_IPV4 ? ETHERTYPE_IPV4_ : ETHERTYPE_IPV6_);

	uint8_t *ip = h + l3_off;
	uint8_t ttl = f.ttl ? f.ttl : 64;
	if (f.l3 == GSO_L3_IPV4) {
		ip[0] = (uint8_t)(0x40 | l3_hlen / 4);
		ip[1] = f.tos;
		put_be16(ip + IP4_TOT_LEN_, (uint16_t)(l3_hlen + l4_len));
		put_be16(ip + IP4_ID_, f.ip_id);
		put_be16(ip + IP4_FRAG_, f.df ? IP4_DF_ : 0);
		ip[IP4_TTL_] = ttl;
		ip[IP4_PROTO_] = f.l4;
		memcpy(ip + IP4_SADDR_, f.saddr, 4);
		memcpy(ip + IP4_DADDR_, f.daddr, 4);
		if (f.ip_opts_len)
			memcpy(ip + 20, f.ip_opts, f.ip_opts_len);
	} else {
		put_be32(ip, 6u << 28 | (uint32_t)f.tos << 20 | f.flow_label);
		put_be16(ip + IP6_PLEN_, (uint16_t)l4_len);
		ip[IP6_NEXT_] = f.l4;
		ip[IP6_HOPS_] = ttl;
		memcpy(ip + IP6_SADDR_, f.saddr, 16);
		memcpy(ip + IP6_DADDR_, f.daddr, 16);
	}

	uint8_t *l4 = ip + l3_hlen;
	put_be16(l4, f.sport);
	put_be16(l4 + 2, f.dport);
	if (f.l4 == GSO_L4_TCP) {
		put_be32(l4 + TCP_SEQ_, f.seq);
		put_be32(l4 + TCP_ACK_, f.ack);
		l4[TCP_DOFF_] = (uint8_t)(l4_len / 4 << 4);
		l4[TCP_FLAGS_] = f.tcp_flags;
		put_be16(l4 + TCP_WIN_, f.window);
		if (f.tcp_opts_len)
			memcpy(l4 + TCP_HLEN_MIN_, f.tcp_opts, f.tcp_opts_len);
	} else {
		put_be16(l4 + UDP_LEN_, UDP_HLEN_);
	}

	o.l3 = f.l3;
	o.l4 = f.l4;
	o.vlan = f.has_vlan;
	o.l3_off = (uint8_t)l3_off;
	o.l4_off = (uint8_t)(l3_off + l3_hlen);
	o.l4_len = (uint8_t)l4_len;
	o.hdr_len = (uint16_t)(l3_off + l3_hlen + l4_len);
	*t = o;
	return 0;
}

/* ---- accessors ---- */

static inline bool is_tcp(const struct gso_tmpl *t)
{
	return t && t->l4 == GSO_L4_TCP;
}

static inline bool is_v4(const struct gso_tmpl *t)
{
	return t && t->l3 == GSO_L3_IPV4;
}

/* A getter's answer before it reads: -EINVAL (NULL), -ENOENT (absent) or 0. */
static inline int get_check(const struct gso_tmpl *t, const void *out, bool present)
{
	if (!t || !out)
		return -EINVAL;
	return present ? 0 : -ENOENT;
}

GSO_API int gso_tmpl__tcp_seq(const struct gso_tmpl *t, uint32_t *seq)
{
	int err = get_check(t, seq, is_tcp(t));

	if (!err)
		*seq = get_be32(t->hdr + t->l4_off + TCP_SEQ_);
	return err;
}

GSO_API int gso_tmpl__set_tcp_seq(struct gso_tmpl *t, uint32_t seq)
{
	if (!is_tcp(t))
		return -EINVAL;
	put_be32(t->hdr + t->l4_off + TCP_SEQ_, seq);
	return 0;
}

GSO_API int gso_tmpl__set_tcp_ack(struct gso_tmpl *t, uint32_t ack, uint16_t window)
{
	if (!is_tcp(t))
		return -EINVAL;
	put_be32(t->hdr + t->l4_off + TCP_ACK_, ack);
	put_be16(t->hdr + t->l4_off + TCP_WIN_, window);
	return 0;
}

GSO_API int gso_tmpl__set_tcp_flags(struct gso_tmpl *t, uint8_t flags)
{
	if (!is_tcp(t) || (flags & TCP_FLAGS_REFUSED))
		return -EINVAL;
	t->hdr[t->l4_off + TCP_FLAGS_] = flags;
	return 0;
}

GSO_API int gso_tmpl__tcp_flags(const struct gso_tmpl *t, uint8_t *flags)
{
	int err = get_check(t, flags, is_tcp(t));

	if (!err)
		*flags = t->hdr[t->l4_off + TCP_FLAGS_];
	return err;
}

GSO_API int gso_tmpl__ip_id(const struct gso_tmpl *t, uint16_t *id)
{
	int err = get_check(t, id, is_v4(t));

	if (!err)
		*id = get_be16(t->hdr + t->l3_off + IP4_ID_);
	return err;
}

GSO_API int gso_tmpl__set_ip_id(struct gso_tmpl *t, uint16_t id)
{
	if (!is_v4(t))
		return -EINVAL;
	put_be16(t->hdr + t->l3_off + IP4_ID_, id);
	return 0;
}

GSO_API int gso_tmpl__df(const struct gso_tmpl *t, bool *df)
{
	int err = get_check(t, df, is_v4(t));

	if (!err)
		*df = get_be16(t->hdr + t->l3_off + IP4_FRAG_) & IP4_DF_;
	return err;
}
