/* SPDX-License-Identifier: GPL-2.0 */
/* The files a run touches: which jobs use them, what region, who made them,
 * and what must happen to them before the timed phase. */
#ifndef LOAD_FILES_H
#define LOAD_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "job/jobset.h"
#include "stats/stats.h"

/* The xattr that marks a file as made by lockscope-load. A user.* xattr does
 * not clear S_NOSEC (only security.* ones do, fs/xattr.c), so the direct-I/O
 * write path treats a marked file like an unmarked one. */
#define OWNER_XATTR "user.lockscope-load"

struct lfile {
	char *path;
	uint64_t region_end;	/* highest byte any job touches, exclusive */
	int layout;		/* LAYOUT_*: requested, then resolved from AUTO */
	bool layout_explicit;
	int falloc;		/* FALLOC_* used by a fallocated layout */
	bool writes, reads, direct, overwrite, unlink;
	bool verify_only;	/* a job only reads it back: it must exist */
	bool is_blockdev;
	bool existed;		/* before this run */
	bool ours;		/* carries OWNER_XATTR (or made by this run) */
	bool created;		/* made by this run */
	bool marked;		/* the xattr is on it */
	uint64_t old_size;
	uint64_t old_alloc;	/* bytes allocated before this run */
	dev_t dev;
	const char *layout_done; /* what was done: written, fallocated, sparse, append,
				    empty, existing */
	uint64_t layout_ns;
	/* the I/O grid, for the verify pattern */
	bool verify;
	uint64_t grid_start, grid_bs, grid_blocks;
	/* layout=append: the shared end of file that writers claim */
	uint64_t append_cursor;
	uint64_t append_limit;
	struct verify_stats verify_result;
	bool verified;
};

struct fileset {
	struct lfile *files;
	unsigned n, cap;
};

/* Where a job's thread does I/O: a file and a region in it. */
struct file_region {
	struct lfile *lf;
	uint64_t start;		/* region start, before the unaligned shift */
	uint64_t len;		/* region bytes */
};

/* The files of thread `clone` of job `j`: nrfiles regions into out (capacity cap). */
unsigned files_regions(const struct job_opts *j, unsigned clone, struct fileset *fs,
		       struct file_region *out, unsigned cap);

/* Builds the file list from the jobs and checks, without changing anything,
 * that the run may go ahead: ownership, sizes, free space, alignment.
 * Returns 0, or -1 with a one-line reason in err (exit 2). */
int files_plan(struct jobset *js, struct fileset *fs, char *err, size_t errlen);

/* Deletes the files that unlink=1 asked for and that lockscope-load made. */
void files_unlink(struct fileset *fs);

#endif
