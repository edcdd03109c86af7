#include "proto.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

const char *bench_status_name(int status)
{
	switch (status) {
	case BENCH_OK: return "ok";
	case BENCH_MISMATCH: return "mismatch";
	case BENCH_SHORT: return "short";
	case BENCH_LONG: return "long";
	case BENCH_BAD_HEADER: return "bad_header";
	case BENCH_TIMEOUT: return "timeout";
	case BENCH_IO_ERROR: return "io_error";
	case BENCH_NO_DATA: return "no_data";
	default: return "unknown";
	}
}

static void put16(uint8_t *p, uint16_t v) { v = htobe16(v); memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { v = htobe32(v); memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { v = htobe64(v); memcpy(p, &v, 8); }
static uint16_t get16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return be16toh(v); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return be32toh(v); }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return be64toh(v); }

static uint32_t hdr_check(const struct bench_hdr *h)
{
	uint64_t st = h->seed ^ h->total ^ ((uint64_t)h->flags << 48) ^ BENCH_HDR_MAGIC;

	return (uint32_t)bench_splitmix64(&st);
}

void bench_hdr_encode(const struct bench_hdr *h, uint8_t out[BENCH_HDR_LEN])
{
	memset(out, 0, BENCH_HDR_LEN);
	put32(out, BENCH_HDR_MAGIC);
	put16(out + 4, BENCH_HDR_LEN);
	put16(out + 6, h->flags);
	put64(out + 8, h->seed);
	put64(out + 16, h->total);
	put32(out + 28, hdr_check(h));
}

int bench_hdr_decode(const uint8_t in[BENCH_HDR_LEN], struct bench_hdr *h)
{
	struct bench_hdr t = {
		.flags = get16(in + 6),
		.seed = get64(in + 8),
		.total = get64(in + 16),
	};

	if (get32(in) != BENCH_HDR_MAGIC || get16(in + 4) != BENCH_HDR_LEN ||
	    (t.flags & ~BENCH_HDR_F_VERDICT) || get32(in + 24) != 0 ||
	    get32(in + 28) != hdr_check(&t))
		return -EBADMSG;
	*h = t;
	return 0;
}

void bench_verdict_encode(const struct bench_verdict *v, uint8_t out[BENCH_VERDICT_LEN])
{
	put32(out, BENCH_VERDICT_MAGIC);
	put32(out + 4, v->status);
	put64(out + 8, v->received);
	put64(out + 16, v->verified);
	put64(out + 24, v->bad_off);
}

int bench_verdict_decode(const uint8_t in[BENCH_VERDICT_LEN], struct bench_verdict *v)
{
	if (get32(in) != BENCH_VERDICT_MAGIC)
		return -EBADMSG;
	v->status = get32(in + 4);
	v->received = get64(in + 8);
	v->verified = get64(in + 16);
	v->bad_off = get64(in + 24);
	return 0;
}

void bench_rx_init(struct bench_rx *rx, bool raw, uint64_t seed)
{
	/* st (16 KiB, the last member) is set up when the seed is known. */
	memset(rx, 0, offsetof(struct bench_rx, st));
	rx->raw = raw;
	rx->bad_off = BENCH_NO_OFFSET;
	rx->status = BENCH_OK;
	if (raw) {
		rx->hdr.seed = seed;
		bench_stream_init(&rx->st, seed);
	}
}

static void verify(struct bench_rx *rx, const uint8_t *p, size_t len)
{
	if (rx->status == BENCH_OK) {
		size_t ok = bench_stream_check(&rx->st, rx->received, p, len);

		rx->verified += ok;
		if (ok < len) {
			rx->status = BENCH_MISMATCH;
			rx->bad_off = rx->received + ok;
			rx->bad_got = p[ok];
			rx->bad_want = bench_stream_byte(&rx->st, rx->bad_off);
		}
	}
	rx->received += len;
}

int bench_rx_feed(struct bench_rx *rx, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (!rx->raw && !rx->have_hdr) {
		size_t n = BENCH_HDR_LEN - rx->hlen < len ? BENCH_HDR_LEN - rx->hlen : len;

		memcpy(rx->hbuf + rx->hlen, p, n);
		rx->hlen += (unsigned)n;
		p += n;
		len -= n;
		if (rx->hlen < BENCH_HDR_LEN)
			return rx->status;
		if (bench_hdr_decode(rx->hbuf, &rx->hdr)) {
			rx->status = BENCH_BAD_HEADER;
			/* Nothing after a bad header can be verified. */
			rx->have_hdr = true;
			rx->received += len;
			return rx->status;
		}
		rx->have_hdr = true;
		bench_stream_init(&rx->st, rx->hdr.seed);
	}
	if (!len)
		return rx->status;
	if (rx->hdr.total && rx->received + len > rx->hdr.total) {
		size_t in = (size_t)(rx->hdr.total - rx->received);

		verify(rx, p, in);
		rx->received += len - in;
		if (rx->status == BENCH_OK)
			rx->status = BENCH_LONG;
		return rx->status;
	}
	verify(rx, p, len);
	return rx->status;
}

int bench_rx_eof(struct bench_rx *rx)
{
	if (rx->status != BENCH_OK)
		return rx->status;
	if (!rx->raw && !rx->have_hdr)
		rx->status = BENCH_NO_DATA;
	else if (rx->hdr.total && rx->received < rx->hdr.total)
		rx->status = BENCH_SHORT;
	return rx->status;
}

void bench_rx_fail(struct bench_rx *rx, int status)
{
	if (rx->status == BENCH_OK)
		rx->status = status;
}

void bench_rx_verdict(const struct bench_rx *rx, struct bench_verdict *v)
{
	v->status = (uint32_t)rx->status;
	v->received = rx->received;
	v->verified = rx->verified;
	v->bad_off = rx->bad_off;
}

void bench_xfer_fill(const uint8_t *hdr, uint32_t hlen, const struct bench_stream *s, uint64_t off, void *dst,
		     size_t len)
{
	uint8_t *p = dst;

	while (len && off < hlen) {
		*p++ = hdr[off++];
		len--;
	}
	if (len)
		bench_stream_fill(s, off - hlen, p, len);
}
