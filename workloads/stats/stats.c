// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "stats/stats.h"

void stats_thread_reset(struct thread_stats *s)
{
	memset(s, 0, sizeof(*s));
}

static void dir_merge(struct dir_stats *d, const struct dir_stats *s)
{
	d->ios += s->ios;
	d->bytes += s->bytes;
	d->short_ios += s->short_ios;
	d->errors += s->errors;
	lat_hist_merge(&d->clat, &s->clat);
	lat_summary_merge(&d->slat, &s->slat);
	lat_summary_merge(&d->lat, &s->lat);
}

void stats_verify_mismatch(struct verify_stats *v, uint64_t offset, const char *reason)
{
	v->mismatches++;
	if (!v->have_first || offset < v->first_offset) {
		v->have_first = true;
		v->first_offset = offset;
		snprintf(v->first_reason, sizeof(v->first_reason), "%s", reason);
	}
}

void stats_verify_merge(struct verify_stats *d, const struct verify_stats *s)
{
	d->blocks += s->blocks;
	d->ok += s->ok;
	d->unwritten += s->unwritten;
	d->mismatches += s->mismatches;
	if (s->have_first && (!d->have_first || s->first_offset < d->first_offset)) {
		d->have_first = true;
		d->first_offset = s->first_offset;
		memcpy(d->first_reason, s->first_reason, sizeof(d->first_reason));
	}
}

void stats_thread_merge(struct thread_stats *dst, const struct thread_stats *src)
{
	for (int d = 0; d < DDIR_NR; d++)
		dir_merge(&dst->dir[d], &src->dir[d]);
	dst->sync_ios += src->sync_ios;
	lat_summary_merge(&dst->sync_lat, &src->sync_lat);
	if (!dst->start_ns || (src->start_ns && src->start_ns < dst->start_ns))
		dst->start_ns = src->start_ns;
	if (src->end_ns > dst->end_ns)
		dst->end_ns = src->end_ns;
	dst->usr_ns += src->usr_ns;
	dst->sys_ns += src->sys_ns;
	dst->ctx += src->ctx;
	dst->majf += src->majf;
	dst->minf += src->minf;
	if (!dst->first_error)
		dst->first_error = src->first_error;
	stats_verify_merge(&dst->verify, &src->verify);
}
