/* SPDX-License-Identifier: GPL-2.0 */
/* Latency statistics without per-I/O records: exact min/max/mean/stddev
 * (Welford) and a log-linear histogram for percentiles (64 buckets per power
 * of two, like fio and HdrHistogram: at most 1/128 relative error). */
#ifndef LOAD_LAT_H
#define LOAD_LAT_H

#include <stdint.h>

#define HIST_SUB_BITS 6
#define HIST_SUB (1u << HIST_SUB_BITS)		/* buckets per power of two */
#define HIST_EXACT (2u * HIST_SUB)		/* values below this are exact */
#define HIST_MAX_MSB 47				/* ~39 hours in ns; larger values clamp */
#define HIST_NBUCKETS (HIST_EXACT + (HIST_MAX_MSB - HIST_SUB_BITS) * HIST_SUB)

struct lat_summary {
	uint64_t n;
	uint64_t min;
	uint64_t max;
	double mean;
	double m2;		/* sum of squared deviations */
};

struct lat_hist {
	struct lat_summary s;
	uint64_t buckets[HIST_NBUCKETS];
};

static inline void lat_summary_add(struct lat_summary *s, uint64_t v)
{
	double d;

	s->n++;
	if (v < s->min || s->n == 1)
		s->min = v;
	if (v > s->max)
		s->max = v;
	d = (double)v - s->mean;
	s->mean += d / (double)s->n;
	s->m2 += d * ((double)v - s->mean);
}

static inline unsigned hist_index(uint64_t v)
{
	unsigned msb;

	if (v < HIST_EXACT)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	if (msb > HIST_MAX_MSB)
		return HIST_NBUCKETS - 1;
	return HIST_EXACT + (msb - HIST_SUB_BITS - 1) * HIST_SUB +
	       (unsigned)((v >> (msb - HIST_SUB_BITS)) - HIST_SUB);
}

static inline void lat_hist_add(struct lat_hist *h, uint64_t v)
{
	lat_summary_add(&h->s, v);
	h->buckets[hist_index(v)]++;
}

void lat_summary_merge(struct lat_summary *dst, const struct lat_summary *src);
double lat_summary_stddev(const struct lat_summary *s);
void lat_hist_merge(struct lat_hist *dst, const struct lat_hist *src);

/* The value a bucket stands for: the middle of its range. */
uint64_t lat_hist_bucket_value(unsigned idx);

/* Percentile values as fio computes them: the first bucket where the running
 * count reaches p% of all samples. out[i] for pct[i] (pct sorted ascending). */
void lat_hist_percentiles(const struct lat_hist *h, const double *pct, unsigned n,
			  uint64_t *out);

#endif
