// SPDX-License-Identifier: GPL-2.0
/* The command line, read the way fio reads it: "--key=value" (or "--key value",
 * or a bare "--flag"); job options before the first --name are defaults for every
 * job, under what job files set; each --name starts a job; other arguments are
 * job files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "job/cmdline.h"
#include "job/jobfile.h"
#include "job/options.h"

struct pending {
	const struct opt_def *d;
	const char *val;
	int job;		/* -1: global; else index among command-line jobs */
};

static int apply_pending(const struct pending *p, struct job_opts *job,
			 char *err, size_t errlen)
{
	return options_apply(p->d, job, NULL, p->val, err, errlen);
}

int cmdline_parse(int argc, char **argv, struct prog_opts *prog, struct jobset *js,
		  char *err, size_t errlen)
{
	struct pending *pend = calloc((size_t)argc + 1, sizeof(*pend));
	const char **files = calloc((size_t)argc + 1, sizeof(*files));
	unsigned npend = 0, nfiles = 0;
	int ncmdjobs = 0, ret = -1;
	struct job_opts base;

	options_defaults(&base, NULL);
	if (!pend || !files) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *eq, *val = NULL;
		char name[128];
		const struct opt_def *d;

		if (strncmp(arg, "--", 2) || !arg[2]) {
			files[nfiles++] = arg;
			continue;
		}
		arg += 2;
		eq = strchr(arg, '=');
		if ((eq ? (size_t)(eq - arg) : strlen(arg)) >= sizeof(name)) {
			snprintf(err, errlen, "unknown option '--%.40s...'", arg);
			goto out;
		}
		snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
		d = options_find(name);
		if (!d) {
			snprintf(err, errlen, "unknown option '--%s'", name);
			goto out;
		}
		if (eq)
			val = eq + 1;
		else if (d->type != OPT_BOOL && d->type != OPT_BOOL_INV && i + 1 < argc)
			val = argv[++i];
		if (d->scope == SCOPE_PROG) {
			if (options_apply(d, NULL, prog, val, err, errlen))
				goto out;
			continue;
		}
		if (!strcmp(d->name, "name"))
			ncmdjobs++;
		pend[npend++] = (struct pending){ d, val, ncmdjobs - 1 };
	}

	/* Defaults for every job: what came before the first --name. */
	for (unsigned i = 0; i < npend; i++) {
		if (pend[i].job >= 0)
			continue;
		if (apply_pending(&pend[i], &base, err, errlen))
			goto out;
		job_opts_remember(&js->globals, pend[i].d->name, pend[i].val ? pend[i].val : "1");
	}
	for (unsigned f = 0; f < nfiles; f++)
		if (jobfile_parse(files[f], &base, js, err, errlen))
			goto out;
	for (int j = 0; j < ncmdjobs; j++) {
		struct job_opts *job = jobset_add(js, &base);

		if (!job) {
			snprintf(err, errlen, "too many jobs (max %d)", MAX_JOBS);
			goto out;
		}
		for (unsigned i = 0; i < npend; i++)
			if (pend[i].job == j && apply_pending(&pend[i], job, err, errlen))
				goto out;
	}
	ret = 0;
out:
	job_opts_free(&base);
	free(pend);
	free(files);
	return ret;
}
