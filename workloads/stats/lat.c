// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include "stats/lat.h"

void lat_summary_merge(struct lat_summary *dst, const struct lat_summary *src)
{
	double n, delta;

	if (!src->n)
		return;
	if (!dst->n) {
		*dst = *src;
		return;
	}
	/* Chan et al.: combine means and squared deviations of two samples. */
	n = (double)dst->n + (double)src->n;
	delta = src->mean - dst->mean;
	dst->m2 += src->m2 + delta * delta * (double)dst->n * (double)src->n / n;
	dst->mean += delta * (double)src->n / n;
	dst->n += src->n;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

double lat_summary_stddev(const struct lat_summary *s)
{
	/* sample standard deviation (n - 1), as fio reports it */
	return s->n > 1 ? sqrt(s->m2 / (double)(s->n - 1)) : 0.0;
}

void lat_hist_merge(struct lat_hist *dst, const struct lat_hist *src)
{
	lat_summary_merge(&dst->s, &src->s);
	for (unsigned i = 0; i < HIST_NBUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
}

uint64_t lat_hist_bucket_value(unsigned idx)
{
	unsigned group, sub, shift;
	uint64_t lower;

	if (idx < HIST_EXACT)
		return idx;
	group = (idx - HIST_EXACT) / HIST_SUB;	/* 0 for values with msb 7 */
	sub = (idx - HIST_EXACT) % HIST_SUB;
	shift = group + 1;
	lower = (uint64_t)(HIST_SUB + sub) << shift;
	return lower + ((1ULL << shift) >> 1);
}

void lat_hist_percentiles(const struct lat_hist *h, const double *pct, unsigned n,
			  uint64_t *out)
{
	uint64_t total = 0, sum = 0;
	unsigned j = 0;

	for (unsigned i = 0; i < HIST_NBUCKETS; i++)
		total += h->buckets[i];
	for (unsigned k = 0; k < n; k++)
		out[k] = 0;
	if (!total)
		return;
	for (unsigned i = 0; i < HIST_NBUCKETS && j < n; i++) {
		sum += h->buckets[i];
		while (j < n && (long double)sum >= (long double)pct[j] / 100.0L * total)
			out[j++] = lat_hist_bucket_value(i);
	}
	/* a bucket's middle can lie outside what was seen: clamp to min..max */
	for (unsigned k = 0; k < n; k++) {
		if (out[k] > h->s.max && h->s.n)
			out[k] = h->s.max;
		if (out[k] < h->s.min)
			out[k] = h->s.min;
	}
}
