// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "job/options.h"
#include "job/validate.h"

static void sort_percentiles(struct job_opts *o)
{
	for (unsigned a = 1; a < o->npercentiles; a++)
		for (unsigned b = a; b > 0 && o->percentiles[b - 1] > o->percentiles[b]; b--) {
			double t = o->percentiles[b];

			o->percentiles[b] = o->percentiles[b - 1];
			o->percentiles[b - 1] = t;
		}
}

static int validate_job(struct job_opts *j, char *err, size_t errlen)
{
	const char *n = j->name;

	if (!n || !*n) {
		snprintf(err, errlen, "a job has no name (give --name=NAME)");
		return -1;
	}
	if (j->filename && strchr(j->filename, ':')) {
		snprintf(err, errlen, "unsupported value '%s' for filename: ':'-separated file "
			 "lists are not supported", j->filename);
		return -1;
	}
	if (j->filename && j->nrfiles > 1) {
		snprintf(err, errlen, "unsupported value '%u' for nrfiles with filename: files "
			 "per thread need directory and no filename", j->nrfiles);
		return -1;
	}
	if (j->layout == LAYOUT_APPEND && j->rw != RW_WRITE) {
		snprintf(err, errlen, "unsupported value '%s' for rw with layout=append: "
			 "appends are sequential writes (rw=write)", options_rw_name(j->rw));
		return -1;
	}
	if (j->verify_only && j->verify != VERIFY_PATTERN) {
		snprintf(err, errlen, "option 'verify_only' needs verify=pattern");
		return -1;
	}
	if (j->verify_only && j->layout != LAYOUT_AUTO) {
		snprintf(err, errlen, "option 'verify_only' reads existing files: it cannot "
			 "take layout=%s", options_layout_name(j->layout));
		return -1;
	}
	if (j->verify == VERIFY_PATTERN && j->bs < VERIFY_MIN_BS) {
		snprintf(err, errlen, "unsupported value '%llu' for bs with verify=pattern: the "
			 "block header needs at least %d bytes", (unsigned long long)j->bs,
			 VERIFY_MIN_BS);
		return -1;
	}
	if (j->io_size && j->io_size < j->bs) {
		snprintf(err, errlen, "bad value for io_size: %llu is smaller than bs (%llu)",
			 (unsigned long long)j->io_size, (unsigned long long)j->bs);
		return -1;
	}
	if (j->size && j->offset + j->size < j->offset) {
		snprintf(err, errlen, "bad value for offset: offset + size overflows");
		return -1;
	}
	sort_percentiles(j);
	return 0;
}

int validate_jobs(struct jobset *js, const struct prog_opts *prog, char *err, size_t errlen)
{
	if (prog->start_on_stdin && !prog->output) {
		snprintf(err, errlen, "option 'start_on_stdin' needs --output=FILE (stdout "
			 "carries the ready line)");
		return -1;
	}
	for (unsigned i = 0; i < js->njobs; i++)
		if (validate_job(&js->jobs[i], err, errlen))
			return -1;
	return 0;
}
