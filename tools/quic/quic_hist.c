/*
 * A log-linear histogram of departure errors (ns): HIST_SUB buckets per
 * power of two, so that a quantile is known to within 1/HIST_SUB of its
 * value in 4 KiB, whatever the range (ns to seconds).
 */
#include "quic_server.h"

static unsigned bucket(uint64_t v)
{
	unsigned lg;

	if (v < HIST_SUB)
		return (unsigned)v;
	lg = 63u - (unsigned)__builtin_clzll(v);                       /* >= 3 */
	return (lg - 2) * HIST_SUB + (unsigned)((v >> (lg - 3)) & (HIST_SUB - 1));
}

static uint64_t bucket_low(unsigned b)
{
	unsigned lg;

	if (b < HIST_SUB)
		return b;
	lg = b / HIST_SUB + 2;
	return (1ull << lg) | ((uint64_t)(b % HIST_SUB) << (lg - 3));
}

void hist_add(struct hist *h, uint64_t v)
{
	unsigned b = bucket(v);

	h->b[b < HIST_BUCKETS ? b : HIST_BUCKETS - 1]++;
	h->n++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t want, seen = 0;

	if (!h->n)
		return 0;
	want = (uint64_t)(q * (double)(h->n - 1)) + 1;
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		seen += h->b[b];
		if (seen >= want)
			return bucket_low(b);
	}
	return h->max;
}
