// SPDX-License-Identifier: GPL-2.0
/* Job option defaults (fio's), copying a [global] into a job, names of modes. */
#include <stdlib.h>
#include <string.h>
#include "job.h"

/* fio's default completion-latency percentiles. */
static const double default_percentiles[] = {
	1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99,
};

void job_opts_defaults(struct job_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->nrfiles = 1;
	o->rw = RW_READ;
	o->rwmixread = 50;
	o->bs = 4096;
	o->numjobs = 1;
	o->iodepth = 1;
	o->loops = 1;
	o->fallocate = FALLOC_NATIVE;
	o->randrepeat = true;
	o->randseed = 0x89;
	o->invalidate = true;
	o->do_verify = true;
	o->layout = LAYOUT_AUTO;
	o->npercentiles = sizeof(default_percentiles) / sizeof(default_percentiles[0]);
	memcpy(o->percentiles, default_percentiles, sizeof(default_percentiles));
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

void job_opts_copy(struct job_opts *dst, const struct job_opts *src)
{
	*dst = *src;
	dst->name = dup_or_null(src->name);
	dst->description = dup_or_null(src->description);
	dst->filename = dup_or_null(src->filename);
	dst->directory = dup_or_null(src->directory);
	/* "job options" lists only what the job itself set, as fio does */
	dst->ngiven = 0;
}

void job_opts_free(struct job_opts *o)
{
	free(o->name);
	free(o->description);
	free(o->filename);
	free(o->directory);
	for (unsigned i = 0; i < o->ngiven; i++) {
		free(o->given[i].key);
		free(o->given[i].val);
	}
	memset(o, 0, sizeof(*o));
}

void job_opts_remember(struct job_opts *o, const char *key, const char *val)
{
	for (unsigned i = 0; i < o->ngiven; i++) {
		if (!strcmp(o->given[i].key, key)) {
			free(o->given[i].val);
			o->given[i].val = strdup(val);
			return;
		}
	}
	if (o->ngiven < MAX_JOB_OPTS) {
		o->given[o->ngiven].key = strdup(key);
		o->given[o->ngiven].val = strdup(val);
		o->ngiven++;
	}
}

const char *rw_name(int rw)
{
	static const char *names[] = { "read", "write", "randread", "randwrite", "randrw",
				       "readwrite" };

	return rw >= 0 && rw <= RW_READWRITE ? names[rw] : "?";
}

const char *layout_name(int layout)
{
	static const char *names[] = { "auto", "written", "fallocated", "sparse", "append",
				       "empty", "existing" };

	return layout >= 0 && layout <= LAYOUT_EXISTING ? names[layout] : "?";
}

const char *falloc_name(int mode)
{
	static const char *names[] = { "none", "native", "posix", "keep", "truncate" };

	return mode >= 0 && mode <= FALLOC_TRUNCATE ? names[mode] : "?";
}
