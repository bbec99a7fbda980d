// SPDX-License-Identifier: GPL-2.0
/* Grouping threads into the job entries fio would print. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report/report.h"
#include "io/worker.h"

static void sample_stats(const struct run *r, const struct job_entry *e, int d,
			 bool bytes, struct sample_stats *out)
{
	unsigned n = UINT32_MAX;
	double sum = 0, sumsq = 0;

	memset(out, 0, sizeof(*out));
	for (unsigned i = e->first; i < e->first + e->count; i++)
		if (r->workers[i].nsamples < n)
			n = r->workers[i].nsamples;
	if (n == UINT32_MAX || !n)
		return;
	for (unsigned s = 0; s < n; s++) {
		double v = 0;

		for (unsigned i = e->first; i < e->first + e->count; i++) {
			const struct second_sample *x = &r->workers[i].samples[s];

			v += bytes ? (double)x->bytes[d] / 1024.0 : (double)x->ios[d];
		}
		if (!s || v < out->min)
			out->min = v;
		if (v > out->max)
			out->max = v;
		sum += v;
		sumsq += v * v;
	}
	out->n = n;
	out->mean = sum / n;
	out->dev = n > 1 ? sqrt(fmax(0.0, (sumsq - sum * sum / n) / (n - 1))) : 0.0;
}

static void fill_entry(const struct run *r, struct job_entry *e)
{
	memset(&e->st, 0, sizeof(e->st));
	memset(e->runtime_ns, 0, sizeof(e->runtime_ns));
	e->job_runtime_ns = 0;
	for (unsigned i = e->first; i < e->first + e->count; i++) {
		const struct thread_stats *s = &r->workers[i].st;
		uint64_t rt = stats_runtime_ns(s);

		stats_thread_merge(&e->st, s);
		e->job_runtime_ns += rt;
		for (int d = 0; d < DDIR_NR; d++)
			if (s->dir[d].ios && rt > e->runtime_ns[d])
				e->runtime_ns[d] = rt;
	}
	for (int d = 0; d < DDIR_NR; d++) {
		sample_stats(r, e, d, true, &e->bw_kib[d]);
		sample_stats(r, e, d, false, &e->iops[d]);
	}
}

unsigned report_group_entries(const struct run *r, struct job_entry **out)
{
	bool group = false;
	unsigned n;
	struct job_entry *e;
	struct thread_stats tot;

	for (unsigned i = 0; i < r->js->njobs; i++)
		group |= r->js->jobs[i].group_reporting;
	n = group ? 1 : r->nworkers;
	e = calloc(n ? n : 1, sizeof(*e));
	if (!e) {
		*out = NULL;
		return 0;
	}
	for (unsigned k = 0; k < n; k++) {
		e[k].first = group ? 0 : k;
		e[k].count = group ? r->nworkers : 1;
		e[k].job = r->nworkers ? r->workers[e[k].first].job : &r->js->jobs[0];
		fill_entry(r, &e[k]);
	}
	report_group_totals(r, &tot);
	for (unsigned k = 0; k < n; k++) {
		for (int d = 0; d < DDIR_NR; d++)
			e[k].bw_agg[d] = tot.dir[d].bytes ?
				100.0 * (double)e[k].st.dir[d].bytes / (double)tot.dir[d].bytes : 0;
	}
	*out = e;
	return n;
}

void report_group_totals(const struct run *r, struct thread_stats *tot)
{
	memset(tot, 0, sizeof(*tot));
	for (unsigned i = 0; i < r->nworkers; i++)
		stats_thread_merge(tot, &r->workers[i].st);
}
