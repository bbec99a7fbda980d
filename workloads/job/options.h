/* SPDX-License-Identifier: GPL-2.0 */
/* Options as data: one table row per option (name, type, where it lands, help),
 * shared by the command line and the job-file parser, as in fio. */
#ifndef LOAD_OPTIONS_H
#define LOAD_OPTIONS_H

#include <stddef.h>
#include <stdio.h>
#include "job/job.h"

enum opt_type {
	OPT_STR,	/* char *, strdup'ed */
	OPT_BOOL,	/* bool; a bare name means 1 */
	OPT_BOOL_INV,	/* bool stored inverted (buffered=1 -> direct=0) */
	OPT_UINT,	/* unsigned or uint64_t, see .wide */
	OPT_SIZE,	/* uint64_t bytes, fio suffixes (k = 1024) */
	OPT_TIME,	/* uint64_t microseconds; a bare number is seconds */
	OPT_ENUM,	/* int, one of .values */
	OPT_SPECIAL,	/* parsed by .parse */
};

enum opt_scope { SCOPE_JOB, SCOPE_PROG };

struct opt_value {
	const char *name;
	int val;
};

struct opt_def {
	const char *name;
	const char *alias;
	enum opt_type type;
	enum opt_scope scope;
	size_t off;		/* into struct job_opts or struct prog_opts */
	bool wide;		/* OPT_UINT: uint64_t rather than unsigned */
	uint64_t min, max;	/* OPT_UINT/OPT_SIZE bounds; max 0 = none */
	const struct opt_value *values;
	int (*parse)(struct job_opts *o, const char *val, char *err, size_t errlen);
	const char *help;
	const char *def;	/* default in the option's own syntax: applied by
				 * options_defaults() and shown by --help; NULL = 0 */
};

extern const struct opt_def options_table[];
extern const size_t options_count;

/* The row for a name ('-' and '_' are the same), or NULL. */
const struct opt_def *options_find(const char *name);
size_t options_index(const struct opt_def *d);

/* Applies one value. On error fills err with one line naming the option and
 * returns -1. val is NULL for a bare option (e.g. --time_based). */
int options_apply(const struct opt_def *d, struct job_opts *job, struct prog_opts *prog,
		  const char *val, char *err, size_t errlen);

bool options_is_set(const struct job_opts *o, const char *name);

/* Every option of that scope at its default (the table's .def); job or prog
 * may be NULL for the other scope. */
void options_defaults(struct job_opts *job, struct prog_opts *prog);

void options_print_help(FILE *f);

/* The name users give for an enum value (from the option table). */
const char *options_rw_name(int rw);
const char *options_layout_name(int layout);
const char *options_falloc_name(int mode);
const char *options_engine_name(int engine);

#endif
