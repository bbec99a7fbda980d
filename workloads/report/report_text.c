// SPDX-License-Identifier: GPL-2.0
/* The human-readable report, laid out like fio's normal output. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/report.h"
#include "io/worker.h"

static const char *scaled(double v, char *buf, size_t len)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.1fG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.1fM", v / 1e6);
	else if (v >= 1e4)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
	return buf;
}

static const char *mib(double bytes, char *buf, size_t len)
{
	if (bytes >= 1024.0 * 1048576)
		snprintf(buf, len, "%.1fGiB", bytes / (1024.0 * 1048576));
	else if (bytes >= 1048576)
		snprintf(buf, len, "%.1fMiB", bytes / 1048576);
	else
		snprintf(buf, len, "%.1fKiB", bytes / 1024);
	return buf;
}

static void ddir_text(FILE *f, const char *name, const struct job_entry *e, int d)
{
	const struct dir_stats *s = &e->st.dir[d];
	const struct job_opts *o = e->job;
	uint64_t rt = e->runtime_ns[d], vals[MAX_PERCENTILES];
	double bw = rate_per_s(s->bytes, rt);
	char a[32], b[32], c[32];

	if (!s->ios && !s->errors)
		return;
	fprintf(f, "  %s: IOPS=%s, BW=%s/s (%.1fMB/s)(%s/%" PRIu64 "msec)\n", name,
		scaled(rate_per_s(s->ios, rt), a, sizeof(a)), mib(bw, b, sizeof(b)), bw / 1e6,
		mib((double)s->bytes, c, sizeof(c)), (rt + 500000) / 1000000);
	if (!s->clat.s.n)
		return;
	fprintf(f, "    clat (nsec): min=%" PRIu64 ", max=%" PRIu64 ", avg=%.2f, stdev=%.2f\n",
		s->clat.s.min, s->clat.s.max, s->clat.s.mean, lat_summary_stddev(&s->clat.s));
	lat_hist_percentiles(&s->clat, o->percentiles, o->npercentiles, vals);
	fprintf(f, "    clat percentiles (nsec):\n");
	for (unsigned k = 0; k < o->npercentiles; k++)
		fprintf(f, "%s%6.2fth=[%" PRIu64 "]%s", k % 4 == 0 ? "     |" : "",
			o->percentiles[k], vals[k],
			k % 4 == 3 || k + 1 == o->npercentiles ? "\n" : ",");
	if (s->short_ios || s->errors)
		fprintf(f, "    short=%" PRIu64 ", errors=%" PRIu64 "\n", s->short_ios, s->errors);
}

int report_text(FILE *f, const struct run *r)
{
	struct job_entry *e;
	unsigned n = report_group_entries(r, &e);
	struct thread_stats tot;
	uint64_t dur = r->timed_end_ns > r->timed_start_ns ? r->timed_end_ns - r->timed_start_ns : 0;

	for (unsigned k = 0; k < n; k++) {
		const struct job_entry *x = &e[k];
		uint64_t jr = x->job_runtime_ns;

		fprintf(f, "%s: (groupid=0, jobs=%u): err=%2d: pid=%d\n", x->job->name, x->count,
			x->st.first_error, (int)r->pid);
		ddir_text(f, "read", x, DDIR_READ);
		ddir_text(f, "write", x, DDIR_WRITE);
		if (x->st.sync_ios)
			fprintf(f, "  sync: %" PRIu64 " calls, avg=%.0f nsec\n", x->st.sync_ios,
				x->st.sync_lat.mean);
		fprintf(f, "  cpu          : usr=%.2f%%, sys=%.2f%%, ctx=%" PRIu64 ", majf=%" PRIu64
			", minf=%" PRIu64 "\n",
			jr ? 100.0 * (double)x->st.usr_ns / (double)jr : 0.0,
			jr ? 100.0 * (double)x->st.sys_ns / (double)jr : 0.0,
			x->st.ctx, x->st.majf, x->st.minf);
	}
	report_group_totals(r, &tot);
	fprintf(f, "\nlockscope: timed phase %.3f s, %u thread(s), errors=%" PRIu64
		", short reads=%" PRIu64 ", short writes=%" PRIu64 "%s\n", (double)dur / 1e9,
		r->nworkers, tot.dir[0].errors + tot.dir[1].errors, tot.dir[0].short_ios,
		tot.dir[1].short_ios, r->interrupted ? " (interrupted)" : "");
	for (unsigned i = 0; i < r->fs->n; i++) {
		const struct lfile *lf = &r->fs->files[i];

		fprintf(f, "  file %s: layout=%s%s\n", lf->path,
			lf->layout_done ? lf->layout_done : "none",
			lf->created ? " (created)" : "");
		if (lf->verified)
			fprintf(f, "    verify: %" PRIu64 " blocks, %" PRIu64 " ok, %" PRIu64
				" mismatches, %" PRIu64 " unwritten\n", lf->verify_result.blocks,
				lf->verify_result.ok, lf->verify_result.mismatches,
				lf->verify_result.unwritten);
	}
	if (tot.verify.blocks)
		fprintf(f, "  verified reads: %" PRIu64 " blocks, %" PRIu64 " ok, %" PRIu64
			" mismatches, %" PRIu64 " unwritten\n", tot.verify.blocks, tot.verify.ok,
			tot.verify.mismatches, tot.verify.unwritten);
	free(e);
	return ferror(f) ? -1 : 0;
}
