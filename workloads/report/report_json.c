// SPDX-License-Identifier: GPL-2.0
/* The JSON report: fio's keys and units for jobs[] (bw in KiB/s, bw_bytes in
 * B/s, runtime in ms, latencies in ns, usr_cpu/sys_cpu in percent), and
 * lockscope's own facts under "lockscope", in snake_case. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include "clock.h"
#include "job/options.h"
#include "json_out.h"
#include "report/report.h"
#include "io/worker.h"

static void summary_json(struct json_out *j, const char *key, const struct lat_summary *s)
{
	json_key(j, key);
	json_begin_object(j);
	json_uint(j, "min", s->n ? s->min : 0);
	json_uint(j, "max", s->max);
	json_double(j, "mean", s->mean);
	json_double(j, "stddev", lat_summary_stddev(s));
	json_uint(j, "N", s->n);
}

static void percentile_key(char *buf, size_t len, double p)
{
	snprintf(buf, len, "%f", p);	/* fio's spelling: "99.000000" */
}

static void clat_json(struct json_out *j, const struct lat_hist *h, const struct job_opts *o)
{
	uint64_t vals[MAX_PERCENTILES];
	double pct[MAX_PERCENTILES];
	char key[32];

	summary_json(j, "clat_ns", &h->s);
	if (h->s.n) {
		memcpy(pct, o->percentiles, sizeof(double) * o->npercentiles);
		lat_hist_percentiles(h, pct, o->npercentiles, vals);
		json_key(j, "percentile");
		json_begin_object(j);
		for (unsigned k = 0; k < o->npercentiles; k++) {
			percentile_key(key, sizeof(key), pct[k]);
			json_uint(j, key, vals[k]);
		}
		json_end_object(j);
	}
	json_end_object(j);
}

static void samples_json(struct json_out *j, const char *prefix, const struct sample_stats *s,
			 bool is_bw)
{
	char key[32];

	snprintf(key, sizeof(key), "%s_min", prefix);
	if (is_bw)
		json_uint(j, key, (uint64_t)llround(s->min));
	else
		json_double(j, key, s->min);
	snprintf(key, sizeof(key), "%s_max", prefix);
	if (is_bw)
		json_uint(j, key, (uint64_t)llround(s->max));
	else
		json_double(j, key, s->max);
	snprintf(key, sizeof(key), "%s_mean", prefix);
	json_double(j, key, s->mean);
	snprintf(key, sizeof(key), is_bw ? "%s_dev" : "%s_stddev", prefix);
	json_double(j, key, s->dev);
	snprintf(key, sizeof(key), "%s_samples", prefix);
	json_uint(j, key, s->n);
}

static void ddir_json(struct json_out *j, const char *name, const struct job_entry *e, int d)
{
	const struct dir_stats *s = &e->st.dir[d];
	uint64_t rt = e->runtime_ns[d];
	double bw_bytes = rate_per_s(s->bytes, rt);

	json_key(j, name);
	json_begin_object(j);
	json_uint(j, "io_bytes", s->bytes);
	json_uint(j, "io_kbytes", s->bytes >> 10);
	json_uint(j, "bw_bytes", (uint64_t)bw_bytes);
	json_uint(j, "bw", (uint64_t)(bw_bytes / 1024.0));
	json_double(j, "iops", rate_per_s(s->ios, rt));
	json_uint(j, "runtime", (rt + 500000) / 1000000);
	json_uint(j, "total_ios", s->ios);
	json_uint(j, "short_ios", s->short_ios);
	json_uint(j, "drop_ios", 0);
	summary_json(j, "slat_ns", &s->slat);
	json_end_object(j);
	clat_json(j, &s->clat, e->job);
	/* sync engines: total latency is the completion latency */
	summary_json(j, "lat_ns", s->lat.n ? &s->lat : &s->clat.s);
	json_end_object(j);
	samples_json(j, "bw", &e->bw_kib[d], true);
	json_double(j, "bw_agg", e->bw_agg[d]);
	samples_json(j, "iops", &e->iops[d], false);
	json_end_object(j);
}

static void empty_ddir_json(struct json_out *j, const char *name)
{
	static const struct job_entry zero;
	static const struct job_opts none;

	struct job_entry e = zero;

	e.job = &none;
	ddir_json(j, name, &e, DDIR_READ);
}

static void options_json(struct json_out *j, const char *key, const struct job_opts *o)
{
	json_key(j, key);
	json_begin_object(j);
	for (unsigned i = 0; i < o->ngiven; i++)
		json_string(j, o->given[i].key, o->given[i].val);
	json_end_object(j);
}

static double cpu_pct(uint64_t cpu_ns, uint64_t runtime_ns)
{
	return runtime_ns ? 100.0 * (double)cpu_ns / (double)runtime_ns : 0.0;
}

static void job_json(struct json_out *j, const struct run *r, const struct job_entry *e)
{
	json_begin_object(j);
	json_string(j, "jobname", e->job->name);
	json_uint(j, "groupid", 0);
	json_int(j, "error", e->st.first_error);
	json_uint(j, "elapsed", (r->timed_end_ns - r->go_ns + 500000000ULL) / 1000000000ULL);
	options_json(j, "job options", e->job);
	ddir_json(j, "read", e, DDIR_READ);
	ddir_json(j, "write", e, DDIR_WRITE);
	empty_ddir_json(j, "trim");
	json_key(j, "sync");
	json_begin_object(j);
	json_uint(j, "total_ios", e->st.sync_ios);
	summary_json(j, "lat_ns", &e->st.sync_lat);
	json_end_object(j);
	json_end_object(j);
	json_uint(j, "job_runtime", (e->job_runtime_ns + 500000) / 1000000);
	json_double(j, "usr_cpu", cpu_pct(e->st.usr_ns, e->job_runtime_ns));
	json_double(j, "sys_cpu", cpu_pct(e->st.sys_ns, e->job_runtime_ns));
	json_uint(j, "ctx", e->st.ctx);
	json_uint(j, "majf", e->st.majf);
	json_uint(j, "minf", e->st.minf);

	json_key(j, "lockscope");
	json_begin_object(j);
	json_key(j, "tids");
	json_begin_array(j);
	for (unsigned i = e->first; i < e->first + e->count; i++)
		json_value_int(j, r->workers[i].tid);
	json_end_array(j);
	json_uint(j, "threads", e->count);
	json_uint(j, "errors", e->st.dir[DDIR_READ].errors + e->st.dir[DDIR_WRITE].errors);
	json_uint(j, "short_reads", e->st.dir[DDIR_READ].short_ios);
	json_uint(j, "short_writes", e->st.dir[DDIR_WRITE].short_ios);
	json_uint(j, "usr_ns", e->st.usr_ns);
	json_uint(j, "sys_ns", e->st.sys_ns);
	json_end_object(j);
	json_end_object(j);
}

static void dir_totals_json(struct json_out *j, const char *key, const struct dir_stats *d)
{
	json_key(j, key);
	json_begin_object(j);
	json_uint(j, "ios", d->ios);
	json_uint(j, "bytes", d->bytes);
	json_uint(j, "short_ios", d->short_ios);
	json_uint(j, "errors", d->errors);
	json_end_object(j);
}

static void threads_json(struct json_out *j, const struct run *r)
{
	json_key(j, "threads");
	json_begin_array(j);
	for (unsigned i = 0; i < r->nworkers; i++) {
		const struct worker *w = &r->workers[i];

		json_begin_object(j);
		json_int(j, "tid", w->tid);
		json_uint(j, "thread", w->index);
		json_string(j, "jobname", w->job->name);
		json_uint(j, "job_index", w->job_index);
		json_uint(j, "clone", w->clone);
		dir_totals_json(j, "read", &w->st.dir[DDIR_READ]);
		dir_totals_json(j, "write", &w->st.dir[DDIR_WRITE]);
		json_uint(j, "sync_ios", w->st.sync_ios);
		json_uint(j, "runtime_ns", stats_runtime_ns(&w->st));
		json_uint(j, "start_monotonic_ns", w->st.start_ns);
		json_uint(j, "end_monotonic_ns", w->st.end_ns);
		json_uint(j, "usr_ns", w->st.usr_ns);
		json_uint(j, "sys_ns", w->st.sys_ns);
		json_int(j, "first_error", w->st.first_error);
		if (w->st.first_error)
			json_string(j, "first_error_text", strerror(w->st.first_error));
		json_bool(j, "stopped_on_error", w->stopped_on_error);
		json_bool(j, "append_exhausted", w->append_exhausted);
		json_end_object(j);
	}
	json_end_array(j);
}

static void series_json(struct json_out *j, const struct run *r)
{
	json_key(j, "series");
	json_begin_object(j);
	json_uint(j, "interval_ns", 1000000000ULL);
	json_key(j, "points");
	json_begin_array(j);
	for (unsigned i = 0; i < r->nseries; i++) {
		const struct series_point *p = &r->series[i];

		json_begin_object(j);
		json_double(j, "t_s", (double)p->t_ns / 1e9);
		json_double(j, "dur_s", (double)p->dur_ns / 1e9);
		json_double(j, "iops", rate_per_s(p->ios[0] + p->ios[1], p->dur_ns));
		json_uint(j, "bw_bytes", (uint64_t)rate_per_s(p->bytes[0] + p->bytes[1], p->dur_ns));
		json_uint(j, "read_ios", p->ios[DDIR_READ]);
		json_uint(j, "write_ios", p->ios[DDIR_WRITE]);
		json_uint(j, "read_bytes", p->bytes[DDIR_READ]);
		json_uint(j, "write_bytes", p->bytes[DDIR_WRITE]);
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
}

static void verify_json(struct json_out *j, const struct verify_stats *v)
{
	json_uint(j, "blocks", v->blocks);
	json_uint(j, "ok", v->ok);
	json_uint(j, "mismatches", v->mismatches);
	json_uint(j, "unwritten", v->unwritten);
	if (v->have_first) {
		json_uint(j, "first_mismatch_offset", v->first_offset);
		json_string(j, "first_mismatch_reason", v->first_reason);
	}
}

static void files_json(struct json_out *j, const struct run *r)
{
	json_key(j, "files");
	json_begin_array(j);
	for (unsigned i = 0; i < r->fs->n; i++) {
		const struct lfile *lf = &r->fs->files[i];
		struct stat st;
		char dev[32];

		json_begin_object(j);
		json_string(j, "path", lf->path);
		json_string(j, "layout", lf->layout_done ? lf->layout_done : "none");
		if (lf->layout == LAYOUT_FALLOCATED)
			json_string(j, "fallocate", options_falloc_name(lf->falloc));
		json_uint(j, "region_bytes", lf->region_end);
		json_bool(j, "created", lf->created);
		json_bool(j, "made_by_lockscope_load", lf->ours);
		json_bool(j, "block_device", lf->is_blockdev);
		json_double(j, "layout_s", (double)lf->layout_ns / 1e9);
		if (!stat(lf->path, &st)) {
			snprintf(dev, sizeof(dev), "%u:%u", major(st.st_dev), minor(st.st_dev));
			json_string(j, "dev", dev);
			json_uint(j, "ino", st.st_ino);
			json_uint(j, "size_bytes", (uint64_t)st.st_size);
			json_uint(j, "allocated_bytes", (uint64_t)st.st_blocks * 512);
		}
		if (lf->verified) {
			json_key(j, "verify");
			json_begin_object(j);
			verify_json(j, &lf->verify_result);
			json_end_object(j);
		}
		json_end_object(j);
	}
	json_end_array(j);
}

/* The run's layout in one word: the files' common layout, or "mixed". */
static const char *run_layout(const struct run *r)
{
	const char *l = NULL;

	for (unsigned i = 0; i < r->fs->n; i++) {
		const char *x = r->fs->files[i].layout_done ? r->fs->files[i].layout_done : "none";

		if (l && strcmp(l, x))
			return "mixed";
		l = x;
	}
	return l ? l : "none";
}

static void lockscope_json(struct json_out *j, const struct run *r)
{
	struct thread_stats tot;
	struct verify_stats v;
	bool any_verify = false;
	uint64_t dur = r->timed_end_ns > r->timed_start_ns ? r->timed_end_ns - r->timed_start_ns : 0;

	report_group_totals(r, &tot);
	memset(&v, 0, sizeof(v));
	json_key(j, "lockscope");
	json_begin_object(j);
	json_uint(j, "schema", 1);
	json_int(j, "pid", r->pid);
	json_string(j, "layout", run_layout(r));
	json_string(j, "ioengine", r->js->njobs ?
		    options_engine_name(r->js->jobs[0].ioengine) : "");
	json_bool(j, "interrupted", r->interrupted);
	json_bool(j, "started", r->started);
	json_key(j, "timed_phase");
	json_begin_object(j);
	json_uint(j, "start_monotonic_ns", r->timed_start_ns);
	json_uint(j, "end_monotonic_ns", r->timed_end_ns);
	json_uint(j, "start_realtime_ns", r->timed_start_real_ns);
	json_uint(j, "end_realtime_ns", r->timed_start_real_ns + dur);
	json_uint(j, "duration_ns", dur);
	json_uint(j, "threads_released_monotonic_ns", r->go_ns);
	json_end_object(j);
	json_uint(j, "errors", tot.dir[DDIR_READ].errors + tot.dir[DDIR_WRITE].errors);
	json_uint(j, "short_reads", tot.dir[DDIR_READ].short_ios);
	json_uint(j, "short_writes", tot.dir[DDIR_WRITE].short_ios);
	json_int(j, "first_error", tot.first_error);
	threads_json(j, r);
	series_json(j, r);
	files_json(j, r);
	/* reads verified during the run, and verify passes over whole files */
	stats_verify_merge(&v, &tot.verify);
	any_verify = tot.verify.blocks > 0;
	for (unsigned i = 0; i < r->fs->n; i++) {
		if (r->fs->files[i].verified) {
			stats_verify_merge(&v, &r->fs->files[i].verify_result);
			any_verify = true;
		}
	}
	if (any_verify) {
		json_key(j, "verify");
		json_begin_object(j);
		verify_json(j, &v);
		json_end_object(j);
	}
	json_end_object(j);
}

int report_json(FILE *f, const struct run *r)
{
	struct json_out j = JSON_OUT_INIT(f);
	struct job_entry *e;
	unsigned n = report_group_entries(r, &e);
	uint64_t now_real = clock_ns(CLOCK_REALTIME);
	time_t secs = (time_t)(now_real / 1000000000ULL);
	char when[64];

	strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", localtime(&secs));
	json_begin_object(&j);
	json_string(&j, "lockscope-load version", LOAD_VERSION);
	json_uint(&j, "timestamp", (uint64_t)secs);
	json_uint(&j, "timestamp_ms", now_real / 1000000ULL);
	json_string(&j, "time", when);
	if (r->js->globals.ngiven)
		options_json(&j, "global options", &r->js->globals);
	json_key(&j, "jobs");
	json_begin_array(&j);
	for (unsigned k = 0; k < n; k++)
		job_json(&j, r, &e[k]);
	json_end_array(&j);
	lockscope_json(&j, r);
	json_end_object(&j);
	fputc('\n', f);
	free(e);
	return ferror(f) ? -1 : 0;
}
