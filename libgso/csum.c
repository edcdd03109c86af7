/*
 * Checksum front door: run-time dispatch to the widest kernel the CPU has,
 * plus the pseudo-header and incremental-update helpers.
 */
#include <errno.h>
#include <stdatomic.h>

#include "csum_internal.h"

static const struct csum_ops ops_scalar = { gsoi_csum_partial_scalar, gsoi_csum_copy_scalar };
#if CSUM_HAVE_X86
static const struct csum_ops ops_avx2 = { gsoi_csum_partial_avx2, gsoi_csum_copy_avx2 };
static const struct csum_ops ops_avx512 = { gsoi_csum_partial_avx512, gsoi_csum_copy_avx512 };
#endif

static uint32_t resolve_partial(const void *buf, size_t len, uint32_t sum);
static uint32_t resolve_copy(void *dst, const void *src, size_t len, uint32_t sum);

/*
 * The kernels in use, one pointer each so that a call costs one load and
 * an indirect jump.  They start at resolvers that pick the widest kernel
 * on first use.  Every call reads its pointer once, so it runs on a single
 * kernel even while gso_csum_select() switches; the kernels are stateless
 * code, so no ordering beyond the pointer's own atomicity is needed.
 */
static _Atomic(csum_partial_fn *) cur_partial = resolve_partial;
static _Atomic(csum_copy_fn *) cur_copy = resolve_copy;

static const struct csum_ops *impl_ops(enum gso_csum_impl impl)
{
	switch (impl) {
	case GSO_CSUM_IMPL_SCALAR:
		return &ops_scalar;
#if CSUM_HAVE_X86
	case GSO_CSUM_IMPL_AVX2:
		return &ops_avx2;
	case GSO_CSUM_IMPL_AVX512:
		return &ops_avx512;
#endif
	default:
		return NULL;
	}
}

int gso_csum_impl_supported(enum gso_csum_impl impl)
{
	switch (impl) {
	case GSO_CSUM_IMPL_AUTO:
	case GSO_CSUM_IMPL_SCALAR:
		return 1;
#if CSUM_HAVE_X86
	case GSO_CSUM_IMPL_AVX2:
		__builtin_cpu_init();
		return __builtin_cpu_supports("avx2") != 0;
	case GSO_CSUM_IMPL_AVX512:
		__builtin_cpu_init();
		return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
#endif
	default:
		return 0;
	}
}

static const struct csum_ops *best_ops(void)
{
	if (gso_csum_impl_supported(GSO_CSUM_IMPL_AVX512))
		return impl_ops(GSO_CSUM_IMPL_AVX512);
	if (gso_csum_impl_supported(GSO_CSUM_IMPL_AVX2))
		return impl_ops(GSO_CSUM_IMPL_AVX2);
	return impl_ops(GSO_CSUM_IMPL_SCALAR);
}

static void install(const struct csum_ops *ops)
{
	atomic_store_explicit(&cur_copy, ops->copy, memory_order_relaxed);
	atomic_store_explicit(&cur_partial, ops->partial, memory_order_relaxed);
}

/*
 * First use: install the best kernels unless gso_csum_select() got there
 * first (compare-and-swap from the resolver, so an explicit choice made by
 * another thread meanwhile is never overwritten).  Racing first calls all
 * install the same thing.
 */
static const struct csum_ops *resolve(void)
{
	const struct csum_ops *ops = best_ops();
	csum_partial_fn *rp = resolve_partial;
	csum_copy_fn *rc = resolve_copy;

	atomic_compare_exchange_strong_explicit(&cur_copy, &rc, ops->copy, memory_order_relaxed,
						memory_order_relaxed);
	atomic_compare_exchange_strong_explicit(&cur_partial, &rp, ops->partial,
						memory_order_relaxed, memory_order_relaxed);
	return ops;
}

static uint32_t resolve_partial(const void *buf, size_t len, uint32_t sum)
{
	return resolve()->partial(buf, len, sum);
}

static uint32_t resolve_copy(void *dst, const void *src, size_t len, uint32_t sum)
{
	return resolve()->copy(dst, src, len, sum);
}

int gso_csum_select(enum gso_csum_impl impl)
{
	if ((unsigned)impl >= GSO_CSUM_IMPL_COUNT)
		return -EINVAL;
	if (impl == GSO_CSUM_IMPL_AUTO) {
		install(best_ops());
		return 0;
	}
	if (!gso_csum_impl_supported(impl))
		return -ENOTSUP;
	install(impl_ops(impl));
	return 0;
}

enum gso_csum_impl gso_csum_current(void)
{
	csum_partial_fn *fn = atomic_load_explicit(&cur_partial, memory_order_relaxed);

	if (fn == resolve_partial)
		fn = resolve()->partial;
#if CSUM_HAVE_X86
	if (fn == gsoi_csum_partial_avx512)
		return GSO_CSUM_IMPL_AVX512;
	if (fn == gsoi_csum_partial_avx2)
		return GSO_CSUM_IMPL_AVX2;
#endif
	return GSO_CSUM_IMPL_SCALAR;
}

const char *gso_csum_impl_name(enum gso_csum_impl impl)
{
	switch (impl) {
	case GSO_CSUM_IMPL_AUTO:
		return "auto";
	case GSO_CSUM_IMPL_SCALAR:
		return "scalar";
	case GSO_CSUM_IMPL_AVX2:
		return "avx2";
	case GSO_CSUM_IMPL_AVX512:
		return "avx512";
	default:
		return NULL;
	}
}

/* Out of line: inlined, it would cost the common path a stack frame. */
__attribute__((noinline)) uint32_t gsoi_csum_partial_split(csum_partial_fn *fn, const void *buf, size_t len, uint32_t sum,
			    size_t chunk)
{
	const unsigned char *p = buf;

	for (; len > chunk; p += chunk, len -= chunk)
		sum = fn(p, chunk, sum);
	return fn(p, len, sum);
}

__attribute__((noinline)) uint32_t gsoi_csum_copy_split(csum_copy_fn *fn, void *dst, const void *src, size_t len, uint32_t sum,
			 size_t chunk)
{
	const unsigned char *s = src;
	unsigned char *d = dst;

	for (; len > chunk; d += chunk, s += chunk, len -= chunk)
		sum = fn(d, s, chunk, sum);
	return fn(d, s, len, sum);
}

/*
 * Below this, buffers (IPv4 headers, ACK-sized payloads, the 22 bytes of
 * a 64-byte UDP frame) are summed here with plain loads: the indirect call
 * and a kernel's set-up cost more than the few words.  Measured side by
 * side on 12..31 bytes (callgrind for scalar/AVX2; a timing loop for
 * AVX-512, which callgrind cannot run): fewer instructions than every
 * kernel, and as fast as or faster than AVX-512's single masked load.
 */
#define CSUM_SHORT 32

/*
 * csum_small() for len < CSUM_SHORT without its loop: one test per length
 * bit, loads in address order (an odd final byte is still the first half
 * of a zero-padded word).
 */
static inline uint64_t csum_tiny(const unsigned char *p, unsigned char *d, size_t len)
{
	uint64_t s = 0, w0, w1;
	uint32_t v;
	uint16_t h = 0;

	if (len & 16) {
		memcpy(&w0, p, 8);
		memcpy(&w1, p + 8, 8);
		if (d) {
			memcpy(d, &w0, 8);
			memcpy(d + 8, &w1, 8);
			d += 16;
		}
		s += csum_halves(w0) + csum_halves(w1);
		p += 16;
	}
	if (len & 8) {
		memcpy(&w0, p, 8);
		if (d) {
			memcpy(d, &w0, 8);
			d += 8;
		}
		s += csum_halves(w0);
		p += 8;
	}
	if (len & 4) {
		memcpy(&v, p, 4);
		if (d) {
			memcpy(d, &v, 4);
			d += 4;
		}
		s += v;
		p += 4;
	}
	if (len & 2) {
		memcpy(&h, p, 2);
		if (d) {
			memcpy(d, &h, 2);
			d += 2;
		}
		s += h;
		p += 2;
	}
	if (len & 1) {
		h = 0;
		memcpy(&h, p, 1);
		if (d)
			*d = *p;
		s += h;
	}
	return s;
}

uint32_t gso_csum_partial(const void *buf, size_t len, uint32_t sum)
{
	csum_partial_fn *fn;

	if (len < CSUM_SHORT)
		return gso_csum_add(csum_fold64(csum_tiny(buf, NULL, len)), sum);
	fn = atomic_load_explicit(&cur_partial, memory_order_relaxed);
	if (__builtin_expect(len > CSUM_CHUNK, 0))
		return gsoi_csum_partial_split(fn, buf, len, sum, CSUM_CHUNK);
	return fn(buf, len, sum);
}

uint32_t gso_csum_copy(void *dst, const void *src, size_t len, uint32_t sum)
{
	csum_copy_fn *fn;

	if (len < CSUM_SHORT)
		return gso_csum_add(csum_fold64(csum_tiny(src, dst, len)), sum);
	fn = atomic_load_explicit(&cur_copy, memory_order_relaxed);
	if (__builtin_expect(len > CSUM_CHUNK, 0))
		return gsoi_csum_copy_split(fn, dst, src, len, sum, CSUM_CHUNK);
	return fn(dst, src, len, sum);
}

/* ---- pseudo-headers ---- */

/* A 16-bit big-endian field as the memory-order word it occupies. */
static inline uint32_t be16_word(uint32_t v)
{
	const unsigned char b[2] = { (unsigned char)(v >> 8), (unsigned char)v };
	uint16_t w;

	memcpy(&w, b, 2);
	return w;
}

/* Sum of `n` 16-bit words at `p`, any alignment. */
static inline uint32_t words_sum(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint32_t s = 0;

	for (size_t i = 0; i < n; i++) {
		uint16_t w;

		memcpy(&w, c + 2 * i, 2);
		s += w;
	}
	return s;
}

uint32_t gso_csum_pseudo4(const void *saddr, const void *daddr, uint8_t proto, uint32_t l4_len)
{
	/* At most 4*0xffff + 3*0xffff: no 32-bit overflow. */
	uint32_t s = words_sum(saddr, 2) + words_sum(daddr, 2);

	s += be16_word(proto) + be16_word(l4_len >> 16) + be16_word(l4_len & 0xffff);
	return s;
}

uint32_t gso_csum_pseudo6(const void *saddr, const void *daddr, uint8_t proto, uint32_t l4_len)
{
	/* At most 16*0xffff + 3*0xffff: no 32-bit overflow. */
	uint32_t s = words_sum(saddr, 8) + words_sum(daddr, 8);

	s += be16_word(proto) + be16_word(l4_len >> 16) + be16_word(l4_len & 0xffff);
	return s;
}

/* ---- incremental update ---- */

uint16_t gso_csum_replace2(uint16_t check, uint16_t old, uint16_t new_)
{
	uint32_t s = gso_csum_add((uint16_t)~check, (uint16_t)~old);

	return gso_csum_finish(gso_csum_add(s, new_));
}

uint16_t gso_csum_replace4(uint16_t check, uint32_t old, uint32_t new_)
{
	uint32_t s = gso_csum_add((uint16_t)~check, ~old);

	return gso_csum_finish(gso_csum_add(s, new_));
}
