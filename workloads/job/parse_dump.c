// SPDX-License-Identifier: GPL-2.0
/* --parse-only: the jobs as parsed (defaults, [global], job sections and the
 * command line resolved), as JSON on stdout; nothing runs. For tests and for
 * checking a job file. */
#include <stdio.h>
#include "job/options.h"
#include "job/parse_dump.h"
#include "json_out.h"

static const char *sync_name(int s)
{
	return s == SYNC_SYNC ? "sync" : s == SYNC_DSYNC ? "dsync" : "none";
}

/* The options as written (names canonical, a bare key "1"): "given" holds a job
 * section's own, "globals" those of [global] and the command line. lockscope
 * sweep --job takes its job from them. */
static void given_dump(struct json_out *j, const char *key, const struct job_opts *o)
{
	json_key(j, key);
	json_begin_object(j);
	for (unsigned i = 0; i < o->ngiven; i++)
		json_string(j, o->given[i].key, o->given[i].val);
	json_end_object(j);
}

static void job_dump(struct json_out *j, const struct job_opts *o)
{
	json_begin_object(j);
	json_string(j, "name", o->name);
	if (o->filename)
		json_string(j, "filename", o->filename);
	if (o->directory)
		json_string(j, "directory", o->directory);
	json_uint(j, "nrfiles", o->nrfiles);
	json_string(j, "rw", options_rw_name(o->rw));
	json_uint(j, "rwmixread", o->rwmixread);
	json_uint(j, "bs", o->bs);
	json_uint(j, "size", o->size);
	json_uint(j, "io_size", o->io_size);
	json_uint(j, "offset", o->offset);
	json_uint(j, "numjobs", o->numjobs);
	json_uint(j, "iodepth", o->iodepth);
	json_uint(j, "loops", o->loops);
	json_string(j, "ioengine", options_engine_name(o->ioengine));
	json_uint(j, "runtime_us", o->runtime_us);
	json_uint(j, "ramp_time_us", o->ramp_time_us);
	json_bool(j, "time_based", o->time_based);
	json_bool(j, "direct", o->direct);
	json_string(j, "sync", sync_name(o->sync));
	json_uint(j, "fsync", o->fsync_every);
	json_uint(j, "fdatasync", o->fdatasync_every);
	json_string(j, "fallocate", options_falloc_name(o->fallocate));
	json_bool(j, "randrepeat", o->randrepeat);
	json_uint(j, "randseed", o->randseed);
	json_bool(j, "norandommap", o->norandommap);
	json_bool(j, "overwrite", o->overwrite);
	json_bool(j, "group_reporting", o->group_reporting);
	json_string(j, "verify", o->verify == VERIFY_PATTERN ? "pattern" : "none");
	json_bool(j, "verify_only", o->verify_only);
	json_string(j, "layout", options_layout_name(o->layout));
	json_uint(j, "unaligned", o->unaligned);
	json_uint(j, "continue_on_error", (uint64_t)o->continue_on_error);
	json_key(j, "percentiles");
	json_begin_array(j);
	for (unsigned i = 0; i < o->npercentiles; i++)
		json_value_double(j, o->percentiles[i]);
	json_end_array(j);
	given_dump(j, "given", o);
	json_end_object(j);
}

void parse_dump(FILE *f, const struct jobset *js, const struct prog_opts *prog)
{
	struct json_out j = JSON_OUT_INIT(f);

	json_begin_object(&j);
	json_key(&j, "prog");
	json_begin_object(&j);
	if (prog->output)
		json_string(&j, "output", prog->output);
	json_string(&j, "output_format", prog->output_format == OUTFMT_JSON ? "json" : "normal");
	json_uint(&j, "status_interval_us", prog->status_interval_us);
	json_bool(&j, "start_on_stdin", prog->start_on_stdin);
	json_end_object(&j);
	given_dump(&j, "globals", &js->globals);
	json_key(&j, "jobs");
	json_begin_array(&j);
	for (unsigned i = 0; i < js->njobs; i++)
		job_dump(&j, &js->jobs[i]);
	json_end_array(&j);
	json_end_object(&j);
	fputc('\n', f);
}
