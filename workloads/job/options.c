// SPDX-License-Identifier: GPL-2.0
/* The option table: every option lockscope-load accepts, its type, where its
 * value lands and its help. fio's names, value syntax and units; lockscope's
 * own additions (layout, unaligned, start_on_stdin) are marked as such. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engines/engine.h"
#include "job/options.h"
#include "job/values.h"

#define JOB(field) SCOPE_JOB, offsetof(struct job_opts, field)
#define PROG(field) SCOPE_PROG, offsetof(struct prog_opts, field)

static const struct opt_value rw_values[] = {
	{ "read", RW_READ }, { "write", RW_WRITE }, { "randread", RW_RANDREAD },
	{ "randwrite", RW_RANDWRITE }, { "randrw", RW_RANDRW },
	{ "readwrite", RW_READWRITE }, { "rw", RW_READWRITE }, { NULL, 0 },
};

static const struct opt_value layout_values[] = {
	{ "auto", LAYOUT_AUTO }, { "written", LAYOUT_WRITTEN },
	{ "fallocated", LAYOUT_FALLOCATED }, { "sparse", LAYOUT_SPARSE },
	{ "append", LAYOUT_APPEND }, { NULL, 0 },
};

static const struct opt_value falloc_values[] = {
	{ "none", FALLOC_NONE }, { "native", FALLOC_NATIVE }, { "posix", FALLOC_POSIX },
	{ "keep", FALLOC_KEEP }, { "truncate", FALLOC_TRUNCATE },
	{ "0", FALLOC_NONE }, { "1", FALLOC_POSIX }, { NULL, 0 },
};

static const struct opt_value sync_values[] = {
	{ "none", SYNC_NONE }, { "0", SYNC_NONE }, { "sync", SYNC_SYNC }, { "1", SYNC_SYNC },
	{ "dsync", SYNC_DSYNC }, { NULL, 0 },
};

static const struct opt_value verify_values[] = {
	{ "0", VERIFY_NONE }, { "none", VERIFY_NONE }, { "pattern", VERIFY_PATTERN },
	{ NULL, 0 },
};

static const struct opt_value coe_values[] = {
	{ "none", 0 }, { "0", 0 }, { "read", COE_READ }, { "write", COE_WRITE },
	{ "io", COE_READ | COE_WRITE }, { "verify", COE_VERIFY }, { "all", COE_ALL },
	{ "1", COE_ALL }, { NULL, 0 },
};

/* In registry order: the value is the index into engine_registry. */
#define ENGINE_VALUE(id, name) { name, ENGINE_##id },
static const struct opt_value engine_values[] = { ENGINE_LIST(ENGINE_VALUE) { NULL, 0 } };

static const struct opt_value outfmt_values[] = {
	{ "normal", OUTFMT_NORMAL }, { "json", OUTFMT_JSON }, { NULL, 0 },
};

static int parse_rwmixwrite(struct job_opts *o, const char *val, char *err, size_t len)
{
	uint64_t v;

	if (values_parse_uint64(val, &v) || v > 100) {
		snprintf(err, len, "bad value '%s' for rwmixwrite: expected 0..100", val ? val : "");
		return -1;
	}
	o->rwmixread = 100 - (unsigned)v;
	return 0;
}

/* lockscope extension: dsync=1 is fio's sync=dsync. */
static int parse_dsync(struct job_opts *o, const char *val, char *err, size_t len)
{
	bool b;

	if (values_parse_bool(val, &b)) {
		snprintf(err, len, "bad value '%s' for dsync: expected 0 or 1", val);
		return -1;
	}
	o->sync = b ? SYNC_DSYNC : SYNC_NONE;
	return 0;
}

static int parse_percentiles(struct job_opts *o, const char *val, char *err, size_t len)
{
	char buf[512], *save = NULL, *tok;
	unsigned n = 0;

	if (!val || strlen(val) >= sizeof(buf))
		goto bad;
	strcpy(buf, val);
	for (tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		char *end;
		double d = strtod(tok, &end);

		if (*end || d <= 0 || d > 100 || n >= MAX_PERCENTILES)
			goto bad;
		o->percentiles[n++] = d;
	}
	if (!n)
		goto bad;
	o->npercentiles = n;
	return 0;
bad:
	snprintf(err, len, "bad value '%s' for percentile_list: expected up to %d "
		 "values in (0,100] separated by ':'", val ? val : "", MAX_PERCENTILES);
	return -1;
}

const struct opt_def options_table[] = {
	/* job identity and files */
	{ "name", NULL, OPT_STR, JOB(name),
	  .help = "job name; on the command line it starts a new job (as in fio)" },
	{ "description", NULL, OPT_STR, JOB(description), .help = "free text, ignored" },
	{ "filename", NULL, OPT_STR, JOB(filename),
	  .help = "file (or block device) shared by all threads of the job" },
	{ "directory", NULL, OPT_STR, JOB(directory),
	  .help = "directory for the job's files; without filename each thread gets its own "
		  "files named <name>.<thread>.<file>" },
	{ "nrfiles", NULL, OPT_UINT, JOB(nrfiles), .min = 1, .max = 4096,
	  .help = "files per thread when filename is not given; size is split among them",
	  .def = "1" },
	/* what I/O */
	{ "rw", "readwrite", OPT_ENUM, JOB(rw), .values = rw_values,
	  .help = "I/O pattern",
	  .def = "read" },
	{ "rwmixread", NULL, OPT_UINT, JOB(rwmixread), .min = 0, .max = 100,
	  .help = "percentage of reads in randrw/readwrite",
	  .def = "50" },
	{ "rwmixwrite", NULL, OPT_SPECIAL, SCOPE_JOB, 0, .parse = parse_rwmixwrite,
	  .help = "percentage of writes in randrw/readwrite" },
	{ "bs", "blocksize", OPT_SIZE, JOB(bs), .min = 1, .max = 1ULL << 30,
	  .help = "bytes per I/O (k = 1024)",
	  .def = "4k" },
	{ "size", NULL, OPT_SIZE, JOB(size),
	  .help = "bytes of file region per job (all threads of a job share it when "
		  "filename is given); default: the existing file's size" },
	{ "io_size", "io_limit", OPT_SIZE, JOB(io_size),
	  .help = "bytes of I/O per thread per loop, if not size" },
	{ "offset", NULL, OPT_SIZE, JOB(offset), .help = "start of the region in the file" },
	{ "numjobs", NULL, OPT_UINT, JOB(numjobs), .min = 1, .max = 4096,
	  .help = "threads running this job",
	  .def = "1" },
	{ "iodepth", NULL, OPT_UINT, JOB(iodepth), .min = 1, .max = 65536,
	  .help = "I/Os in flight per thread (async engines only)",
	  .def = "1" },
	{ "ioengine", NULL, OPT_ENUM, JOB(ioengine), .values = engine_values,
	  .help = "how I/O is issued",
	  .def = "psync" },
	{ "loops", NULL, OPT_UINT, JOB(loops), .min = 1, .max = 1000000,
	  .help = "passes over the region when not time_based",
	  .def = "1" },
	/* time */
	{ "runtime", "timeout", OPT_TIME, JOB(runtime_us),
	  .help = "limit of the timed phase, seconds unless suffixed (ms, m, h)" },
	{ "time_based", NULL, OPT_BOOL, JOB(time_based),
	  .help = "run for runtime, looping over the region" },
	{ "ramp_time", NULL, OPT_TIME, JOB(ramp_time_us),
	  .help = "run this long before the timed phase; not counted" },
	/* how */
	{ "direct", NULL, OPT_BOOL, JOB(direct), .help = "O_DIRECT" },
	{ "buffered", NULL, OPT_BOOL_INV, JOB(direct), .help = "the opposite of direct" },
	{ "sync", NULL, OPT_ENUM, JOB(sync), .values = sync_values,
	  .help = "open for synchronous writes: sync/1 = O_SYNC, dsync = O_DSYNC" },
	{ "dsync", NULL, OPT_SPECIAL, SCOPE_JOB, 0, .parse = parse_dsync,
	  .help = "(lockscope) dsync=1 is sync=dsync: O_DSYNC" },
	{ "fsync", NULL, OPT_UINT, JOB(fsync_every), .max = 1u << 31,
	  .help = "fsync after every N writes (0 = never)" },
	{ "fdatasync", NULL, OPT_UINT, JOB(fdatasync_every), .max = 1u << 31,
	  .help = "fdatasync after every N writes (0 = never)" },
	{ "end_fsync", NULL, OPT_BOOL, JOB(end_fsync), .help = "fsync when the job ends" },
	{ "fsync_on_close", NULL, OPT_BOOL, JOB(fsync_on_close),
	  .help = "fsync each file before closing it" },
	{ "fallocate", NULL, OPT_ENUM, JOB(fallocate), .values = falloc_values,
	  .help = "how a file is preallocated when laid out",
	  .def = "native" },
	{ "randrepeat", NULL, OPT_BOOL, JOB(randrepeat),
	  .help = "same random sequence on every run",
	  .def = "1" },
	{ "randseed", NULL, OPT_UINT, JOB(randseed), .wide = true,
	  .help = "seed of the random sequences",
	  .def = "0x89" },
	{ "norandommap", NULL, OPT_BOOL, JOB(norandommap),
	  .help = "random offsets may repeat within a pass" },
	{ "invalidate", NULL, OPT_BOOL, JOB(invalidate),
	  .help = "drop the files' page cache before the timed phase",
	  .def = "1" },
	{ "overwrite", NULL, OPT_BOOL, JOB(overwrite),
	  .help = "allow writing into or truncating a file that lockscope-load did not "
		  "create (it is never deleted); a new file is laid out written, as in fio" },
	{ "unlink", NULL, OPT_BOOL, JOB(unlink),
	  .help = "delete the job's files at the end (only files lockscope-load made)" },
	{ "continue_on_error", NULL, OPT_ENUM, JOB(continue_on_error), .values = coe_values,
	  .help = "errors that do not stop a thread (they are always counted)" },
	{ "group_reporting", NULL, OPT_BOOL, JOB(group_reporting),
	  .help = "report all threads as one job" },
	{ "thread", NULL, OPT_BOOL, JOB(thread),
	  .help = "accepted for fio compatibility; jobs always run as threads" },
	{ "percentile_list", NULL, OPT_SPECIAL, SCOPE_JOB, 0, .parse = parse_percentiles,
	  .help = "completion latency percentiles, e.g. 50:99:99.9",
	  .def = "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99" },
	/* data integrity */
	{ "verify", NULL, OPT_ENUM, JOB(verify), .values = verify_values,
	  .help = "pattern: each written block carries a header (magic, offset, seed) and "
		  "seeded data; reads check it" },
	{ "do_verify", NULL, OPT_BOOL, JOB(do_verify),
	  .help = "with verify, read the region back after a write job",
	  .def = "1" },
	{ "verify_only", NULL, OPT_BOOL, JOB(verify_only),
	  .help = "do not write: read the region back and check the pattern" },
	/* lockscope additions */
	{ "layout", NULL, OPT_ENUM, JOB(layout), .values = layout_values,
	  .help = "(lockscope) file state before the timed phase: written, fallocated, "
		  "sparse, append, or auto (as fio)",
	  .def = "auto" },
	{ "unaligned", NULL, OPT_SIZE, JOB(unaligned), .max = 1ULL << 20,
	  .help = "(lockscope) shift every I/O offset by N bytes, N not a multiple of the "
		  "filesystem block" },
	/* program */
	{ "output", NULL, OPT_STR, PROG(output), .help = "write the report to FILE" },
	{ "output-format", NULL, OPT_ENUM, PROG(output_format), .values = outfmt_values,
	  .help = "normal or json",
	  .def = "normal" },
	{ "status-interval", NULL, OPT_TIME, PROG(status_interval_us),
	  .help = "report progress every N seconds (json: one object per line on stderr)" },
	{ "start_on_stdin", NULL, OPT_BOOL, PROG(start_on_stdin),
	  .help = "(lockscope) after layout print 'ready' and wait for a line on stdin "
		  "before the timed phase; needs --output" },
	{ "parse-only", NULL, OPT_BOOL, PROG(parse_only),
	  .help = "print the parsed jobs as JSON and exit; nothing runs" },
	{ "help", NULL, OPT_BOOL, PROG(help), .help = "this text" },
	{ "version", NULL, OPT_BOOL, PROG(version), .help = "print the version" },
};

const size_t options_count = sizeof(options_table) / sizeof(options_table[0]);

static bool name_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char ca = *a == '-' ? '_' : *a, cb = *b == '-' ? '_' : *b;

		if (ca != cb)
			return false;
	}
	return *a == *b;
}

const struct opt_def *options_find(const char *name)
{
	for (size_t i = 0; i < options_count; i++) {
		const struct opt_def *d = &options_table[i];

		if (name_eq(name, d->name) || (d->alias && name_eq(name, d->alias)))
			return d;
	}
	return NULL;
}

size_t options_index(const struct opt_def *d)
{
	return (size_t)(d - options_table);
}

bool options_is_set(const struct job_opts *o, const char *name)
{
	const struct opt_def *d = options_find(name);
	size_t i;

	if (!d)
		return false;
	i = options_index(d);
	return o->set_mask[i / 64] & (1ULL << (i % 64));
}

static void values_list(const struct opt_value *v, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (; v->name && used + 2 < len; v++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 used ? ", " : "", v->name);
}

/* Parses val and stores it where the option lands; nothing else. */
/* OPT_UINT, OPT_SIZE, OPT_TIME: a number within the option's bounds. */
static int store_number(const struct opt_def *d, const char *val, void *dst, char *err,
			size_t errlen)
{
	uint64_t u;

	switch (d->type) {
	case OPT_UINT:
		if (values_parse_uint64(val, &u) || u < d->min || (d->max && u > d->max)) {
			if (d->max)
				snprintf(err, errlen, "bad value '%s' for %s: expected an integer "
					 "%llu..%llu", val, d->name, (unsigned long long)d->min,
					 (unsigned long long)d->max);
			else
				snprintf(err, errlen, "bad value '%s' for %s: expected an integer",
					 val, d->name);
			return -1;
		}
		if (d->wide)
			*(uint64_t *)dst = u;
		else
			*(unsigned *)dst = (unsigned)u;
		return 0;
	case OPT_SIZE:
		if (values_parse_size(val, &u) || u < d->min || (d->max && u > d->max)) {
			snprintf(err, errlen, "bad value '%s' for %s: expected a size like 4k, "
				 "64k, 1m, 2g%s", val, d->name, d->min ? " (not 0)" : "");
			return -1;
		}
		*(uint64_t *)dst = u;
		return 0;
	default: /* OPT_TIME */
		if (values_parse_time_us(val, &u)) {
			snprintf(err, errlen, "bad value '%s' for %s: expected seconds, or a "
				 "time like 500ms, 2m", val, d->name);
			return -1;
		}
		*(uint64_t *)dst = u;
		return 0;
	}
}

/* OPT_ENUM: one of the option's value names. */
static int store_enum(const struct opt_def *d, const char *val, int *dst, char *err,
		      size_t errlen)
{
	const struct opt_value *v;
	char list[256];

	for (v = d->values; v->name; v++) {
		if (!strcmp(v->name, val)) {
			*dst = v->val;
			return 0;
		}
	}
	values_list(d->values, list, sizeof(list));
	snprintf(err, errlen, "unsupported value '%s' for %s (supported: %s)", val, d->name, list);
	return -1;
}

static int opt_store(const struct opt_def *d, struct job_opts *job, struct prog_opts *prog,
		     const char *val, char *err, size_t errlen)
{
	char *base = d->scope == SCOPE_JOB ? (char *)job : (char *)prog;
	void *dst = base + d->off;
	bool b;

	if (!val && d->type != OPT_BOOL && d->type != OPT_BOOL_INV) {
		snprintf(err, errlen, "option '%s' needs a value", d->name);
		return -1;
	}
	switch (d->type) {
	case OPT_STR:
		if (!*val) {
			snprintf(err, errlen, "option '%s' needs a value", d->name);
			return -1;
		}
		free(*(char **)dst);
		*(char **)dst = strdup(val);
		return 0;
	case OPT_BOOL:
	case OPT_BOOL_INV:
		if (values_parse_bool(val, &b)) {
			snprintf(err, errlen, "bad value '%s' for %s: expected 0 or 1", val, d->name);
			return -1;
		}
		*(bool *)dst = d->type == OPT_BOOL ? b : !b;
		return 0;
	case OPT_UINT:
	case OPT_SIZE:
	case OPT_TIME:
		return store_number(d, val, dst, err, errlen);
	case OPT_ENUM:
		return store_enum(d, val, (int *)dst, err, errlen);
	case OPT_SPECIAL:
		return d->parse(job, val, err, errlen) ? -1 : 0;
	}
	return 0;
}

int options_apply(const struct opt_def *d, struct job_opts *job, struct prog_opts *prog,
		  const char *val, char *err, size_t errlen)
{
	if (opt_store(d, job, prog, val, err, errlen))
		return -1;
	if (d->scope == SCOPE_JOB) {
		size_t i = options_index(d);

		job->set_mask[i / 64] |= 1ULL << (i % 64);
		job_opts_remember(job, d->name, val ? val : "1");
	}
	return 0;
}

static const char *type_hint(const struct opt_def *d)
{
	switch (d->type) {
	case OPT_STR: return "=STR";
	case OPT_BOOL: case OPT_BOOL_INV: return "[=0|1]";
	case OPT_UINT: return "=N";
	case OPT_SIZE: return "=SIZE";
	case OPT_TIME: return "=TIME";
	case OPT_ENUM: return "=MODE";
	case OPT_SPECIAL: return "=VAL";
	}
	return "";
}

void options_print_help(FILE *f)
{
	for (size_t i = 0; i < options_count; i++) {
		const struct opt_def *d = &options_table[i];
		char head[64], list[256];

		snprintf(head, sizeof(head), "--%s%s", d->name, type_hint(d));
		fprintf(f, "  %-26s %s", head, d->help);
		if (d->type == OPT_ENUM && d->values != layout_values) {
			values_list(d->values, list, sizeof(list));
			fprintf(f, " [%s]", list);
		}
		if (d->def)
			fprintf(f, " (default %s)", d->def);
		if (d->alias)
			fprintf(f, " (alias: %s)", d->alias);
		fputc('\n', f);
	}
}

void options_defaults(struct job_opts *job, struct prog_opts *prog)
{
	char err[256];

	if (job)
		memset(job, 0, sizeof(*job));
	if (prog)
		memset(prog, 0, sizeof(*prog));
	for (size_t i = 0; i < options_count; i++) {
		const struct opt_def *d = &options_table[i];

		if (!d->def || !(d->scope == SCOPE_JOB ? (void *)job : (void *)prog))
			continue;
		/* The table's own defaults always parse (tests/unit/run/test_workload_parse.py
		 * checks every one through --parse-only). */
		if (opt_store(d, job, prog, d->def, err, sizeof(err)))
			abort();
	}
}

static const char *value_name(const struct opt_value *v, int val)
{
	for (; v->name; v++)
		if (v->val == val)
			return v->name;
	return "?";
}

const char *options_rw_name(int rw)
{
	return value_name(rw_values, rw);
}

const char *options_layout_name(int layout)
{
	/* States the engine finds but users cannot ask for. */
	if (layout == LAYOUT_EMPTY)
		return "empty";
	if (layout == LAYOUT_EXISTING)
		return "existing";
	return value_name(layout_values, layout);
}

const char *options_falloc_name(int mode)
{
	return value_name(falloc_values, mode);
}

const char *options_engine_name(int engine)
{
	return value_name(engine_values, engine);
}
