/* SPDX-License-Identifier: GPL-2.0 */
/* What one job asks for: the parsed options, in fio's terms and units. */
#ifndef LOAD_JOB_H
#define LOAD_JOB_H

#include <stdbool.h>
#include <stdint.h>

enum rw_mode { RW_READ, RW_WRITE, RW_RANDREAD, RW_RANDWRITE, RW_RANDRW, RW_READWRITE };

/* How the file looks before the timed phase (see --help / README.md). */
enum layout_mode {
	LAYOUT_AUTO,		/* as fio: lay out only a missing or short file */
	LAYOUT_WRITTEN,		/* every block written: mapped extents */
	LAYOUT_FALLOCATED,	/* unwritten extents */
	LAYOUT_SPARSE,		/* ftruncate only: holes */
	LAYOUT_APPEND,		/* empty; every write extends i_size */
	/* resolved from AUTO only, never asked for */
	LAYOUT_EMPTY,		/* created with size 0 (fio's fallocate=none) */
	LAYOUT_EXISTING,	/* left as it was: the file was already big enough */
};

enum falloc_mode { FALLOC_NONE, FALLOC_NATIVE, FALLOC_POSIX, FALLOC_KEEP, FALLOC_TRUNCATE };

enum sync_mode { SYNC_NONE, SYNC_SYNC, SYNC_DSYNC };

enum verify_mode { VERIFY_NONE, VERIFY_PATTERN };

/* verify=pattern: the smallest bs, a block that holds the header io/verify.h writes */
#define VERIFY_MIN_BS 64

/* continue_on_error: bit set of the error kinds that do not stop a job. */
enum { COE_READ = 1, COE_WRITE = 2, COE_VERIFY = 4, COE_ALL = 7 };

#define MAX_PERCENTILES 20
#define MAX_JOB_OPTS 64

/* One option as the user gave it, kept for the "job options" output. */
struct given_opt {
	char *key;
	char *val;
};

struct job_opts {
	char *name;
	char *description;
	char *filename;
	char *directory;
	unsigned nrfiles;
	int rw;
	unsigned rwmixread;
	uint64_t bs;
	uint64_t size;		/* per job; 0 = the existing file's size */
	uint64_t io_size;	/* bytes of I/O per job per loop; 0 = size */
	uint64_t offset;
	unsigned numjobs;
	unsigned iodepth;
	unsigned loops;
	int ioengine;		/* index into the engine registry */
	uint64_t runtime_us;
	uint64_t ramp_time_us;
	bool time_based;
	bool direct;
	int sync;
	unsigned fsync_every;
	unsigned fdatasync_every;
	bool end_fsync;
	bool fsync_on_close;
	int fallocate;
	bool randrepeat;
	uint64_t randseed;
	bool norandommap;
	bool invalidate;
	bool overwrite;
	bool unlink;
	int continue_on_error;
	bool group_reporting;
	bool thread;		/* accepted for fio compatibility: jobs are always threads */
	int verify;
	bool do_verify;
	bool verify_only;
	int layout;
	uint64_t unaligned;
	double percentiles[MAX_PERCENTILES];
	unsigned npercentiles;

	/* Which options were set, by table index: "is it set" questions, as fio asks. */
	uint64_t set_mask[2];
	struct given_opt given[MAX_JOB_OPTS];
	unsigned ngiven;
};

/* Options that belong to the program, not to a job (command line only). */
struct prog_opts {
	char *output;
	int output_format;	/* OUTFMT_* */
	uint64_t status_interval_us;
	bool start_on_stdin;
	bool parse_only;
	bool help;
	bool version;
};

enum { OUTFMT_NORMAL, OUTFMT_JSON };

void job_opts_copy(struct job_opts *dst, const struct job_opts *src);
void job_opts_free(struct job_opts *o);
void job_opts_remember(struct job_opts *o, const char *key, const char *val);

static inline bool rw_is_random(int rw)
{
	return rw == RW_RANDREAD || rw == RW_RANDWRITE || rw == RW_RANDRW;
}

static inline bool rw_reads(int rw)
{
	return rw == RW_READ || rw == RW_RANDREAD || rw == RW_RANDRW || rw == RW_READWRITE;
}

static inline bool rw_writes(int rw)
{
	return rw == RW_WRITE || rw == RW_RANDWRITE || rw == RW_RANDRW || rw == RW_READWRITE;
}

/* A verify_only job reads its files back, whatever rw says. */
static inline bool job_writes(const struct job_opts *o)
{
	return !o->verify_only && rw_writes(o->rw);
}

static inline bool job_reads(const struct job_opts *o)
{
	return o->verify_only || rw_reads(o->rw);
}

#endif
