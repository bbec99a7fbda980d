// SPDX-License-Identifier: GPL-2.0
/* One job's options: copying a [global] into a job, freeing them, and the
 * options as the user wrote them. Their defaults come from the option table
 * (options_defaults()), which calls in here, never the other way round. */
#include <stdlib.h>
#include <string.h>
#include "job/job.h"

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

