// SPDX-License-Identifier: GPL-2.0
/* Planning the files: which exist, which are ours, what layout each gets, and
 * whether the run may go ahead. Nothing on disk changes here, so a refusal
 * leaves every file as it was. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "io/files.h"
#include "job/options.h"
#include "job/values.h"

#define MAX_FILES 65536

static void file_path(const struct job_opts *j, unsigned clone, unsigned k,
		      char *buf, size_t len)
{
	if (j->filename) {
		if (j->directory && j->filename[0] != '/')
			snprintf(buf, len, "%s/%s", j->directory, j->filename);
		else
			snprintf(buf, len, "%s", j->filename);
	} else {
		/* fio's default name for a job's own files */
		snprintf(buf, len, "%s/%s.%u.%u", j->directory ? j->directory : ".",
			 j->name, clone, k);
	}
}

static struct lfile *fileset_get(struct fileset *fs, const char *path, bool add)
{
	struct lfile *lf;

	for (unsigned i = 0; i < fs->n; i++)
		if (!strcmp(fs->files[i].path, path))
			return &fs->files[i];
	if (!add || fs->n >= MAX_FILES)
		return NULL;
	if (fs->n == fs->cap) {
		unsigned cap = fs->cap ? fs->cap * 2 : 4;
		struct lfile *nf = realloc(fs->files, cap * sizeof(*nf));

		if (!nf)
			return NULL;
		fs->files = nf;
		fs->cap = cap;
	}
	lf = &fs->files[fs->n++];
	memset(lf, 0, sizeof(*lf));
	lf->path = strdup(path);
	lf->layout = LAYOUT_AUTO;
	lf->falloc = FALLOC_NATIVE;
	return lf;
}

unsigned files_regions(const struct job_opts *j, unsigned clone, struct fileset *fs,
		       struct file_region *out, unsigned cap)
{
	unsigned n = j->filename ? 1 : j->nrfiles;
	char path[PATH_MAX];

	for (unsigned k = 0; k < n && k < cap; k++) {
		file_path(j, clone, k, path, sizeof(path));
		out[k].lf = fileset_get(fs, path, false);
		out[k].start = j->offset;
		out[k].len = j->filename ? j->size : j->size / j->nrfiles;
	}
	return n < cap ? n : cap;
}

/* size=0 means "the existing file's size", as in fio. */
static int resolve_size(struct job_opts *j, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct stat st;
	uint64_t size;

	if (j->size)
		return 0;
	if (!j->filename) {
		snprintf(err, errlen, "job '%s': size is required when each thread gets its "
			 "own files", j->name);
		return -1;
	}
	file_path(j, 0, 0, path, sizeof(path));
	if (stat(path, &st)) {
		snprintf(err, errlen, "job '%s': size is not set and %s cannot be used: %s",
			 j->name, path, strerror(errno));
		return -1;
	}
	size = (uint64_t)st.st_size;
	if (S_ISBLK(st.st_mode)) {
		int fd = open(path, O_RDONLY);

		if (fd < 0 || ioctl(fd, BLKGETSIZE64, &size)) {
			snprintf(err, errlen, "%s: cannot read the device size: %s", path,
				 strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	if (size <= j->offset) {
		snprintf(err, errlen, "job '%s': size is not set and %s has no bytes after "
			 "offset %llu", j->name, path, (unsigned long long)j->offset);
		return -1;
	}
	j->size = size - j->offset;
	return 0;
}

/* Adds job j's files to the set and widens their regions. */
static int plan_job(struct job_opts *j, struct fileset *fs, char *err, size_t errlen)
{
	unsigned nper = j->filename ? 1 : j->nrfiles;
	uint64_t len = j->filename ? j->size : j->size / j->nrfiles;
	char path[PATH_MAX];

	if (len < j->bs) {
		snprintf(err, errlen, "job '%s': bs (%llu) is larger than the region of each "
			 "file (%llu bytes)", j->name, (unsigned long long)j->bs,
			 (unsigned long long)len);
		return -1;
	}
	for (unsigned c = 0; c < j->numjobs; c++) {
		for (unsigned k = 0; k < nper; k++) {
			struct lfile *lf;
			uint64_t end = j->offset + len + j->unaligned;

			file_path(j, c, k, path, sizeof(path));
			lf = fileset_get(fs, path, true);
			if (!lf) {
				snprintf(err, errlen, "too many files (max %d)", MAX_FILES);
				return -1;
			}
			if (j->layout == LAYOUT_APPEND) {
				/* every appending thread adds its size to the one cursor */
				if (!lf->append_limit)
					lf->append_limit = j->offset + j->unaligned;
				lf->append_cursor = j->offset;
				lf->append_limit += len;
				end = lf->append_limit;
			}
			if (end > lf->region_end)
				lf->region_end = end;
			if (j->layout != LAYOUT_AUTO) {
				if (lf->layout_explicit && lf->layout != j->layout) {
					snprintf(err, errlen, "jobs ask for different layouts of %s "
						 "(%s and %s)", path,
						 options_layout_name(lf->layout),
						 options_layout_name(j->layout));
					return -1;
				}
				lf->layout = j->layout;
				lf->layout_explicit = true;
			}
			if (options_is_set(j, "fallocate") || !lf->writes)
				lf->falloc = j->fallocate;
			lf->writes |= job_writes(j);
			lf->reads |= job_reads(j);
			lf->direct |= j->direct;
			lf->overwrite |= j->overwrite;
			lf->unlink |= j->unlink;
			lf->verify_only |= j->verify_only;
			if (j->verify == VERIFY_PATTERN) {
				uint64_t gs = j->offset + j->unaligned, gb = len / j->bs;
				bool append = j->layout == LAYOUT_APPEND;

				/* appends: the grid grows with every thread that shares the file */
				if (append)
					gb = (lf->append_limit - gs) / j->bs;
				if (lf->verify && (lf->grid_start != gs || lf->grid_bs != j->bs ||
						   (!append && lf->grid_blocks != gb))) {
					snprintf(err, errlen, "jobs verifying %s must use the same "
						 "offset, bs, size and unaligned", path);
					return -1;
				}
				lf->verify = true;
				lf->grid_start = gs;
				lf->grid_bs = j->bs;
				lf->grid_blocks = gb;
			}
		}
	}
	return 0;
}

/* Learns what is on disk now: existence, type, size, allocation, our mark. */
static int inspect(struct lfile *lf, char *err, size_t errlen)
{
	struct stat st;
	char v[16];

	if (stat(lf->path, &st)) {
		char dir[PATH_MAX];

		if (errno != ENOENT) {
			snprintf(err, errlen, "cannot use %s: %s", lf->path, strerror(errno));
			return -1;
		}
		snprintf(dir, sizeof(dir), "%s", lf->path);
		if (stat(dirname(dir), &st) || !S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "cannot create %s: directory %s does not exist",
				 lf->path, dir);
			return -1;
		}
		lf->dev = st.st_dev;
		return 0;
	}
	lf->existed = true;
	lf->dev = st.st_dev;
	lf->old_size = (uint64_t)st.st_size;
	lf->old_alloc = (uint64_t)st.st_blocks * 512;
	if (S_ISBLK(st.st_mode)) {
		int fd = open(lf->path, O_RDONLY);

		lf->is_blockdev = true;
		if (fd < 0 || ioctl(fd, BLKGETSIZE64, &lf->old_size)) {
			snprintf(err, errlen, "%s: cannot read the device size: %s", lf->path,
				 strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
		lf->old_alloc = lf->old_size;
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file or a block device", lf->path);
		return -1;
	}
	lf->ours = getxattr(lf->path, OWNER_XATTR, v, sizeof(v)) >= 0;
	lf->marked = lf->ours;
	return 0;
}

static int refuse(struct lfile *lf, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "refusing to %s %s: it exists and was not made by "
		 "lockscope-load (give --overwrite=1 to allow it)", what, lf->path);
	return -1;
}

/* Picks the layout (fio's rules for auto) and refuses what would harm a file
 * that lockscope-load did not make. */
static int decide(struct lfile *lf, char *err, size_t errlen)
{
	bool may_modify = !lf->existed || lf->ours || lf->overwrite;
	bool short_file = lf->existed && lf->old_size < lf->region_end;

	if (lf->verify_only && (!lf->existed || short_file)) {
		snprintf(err, errlen, "verify_only: %s %s", lf->path, lf->existed ?
			 "is shorter than the region to verify" : "does not exist");
		return -1;
	}
	if (lf->is_blockdev) {
		if (lf->layout_explicit) {
			snprintf(err, errlen, "%s is a block device: layout=%s needs a regular "
				 "file", lf->path, options_layout_name(lf->layout));
			return -1;
		}
		if (lf->region_end > lf->old_size) {
			snprintf(err, errlen, "%s is smaller (%llu bytes) than the jobs' region "
				 "(%llu bytes)", lf->path, (unsigned long long)lf->old_size,
				 (unsigned long long)lf->region_end);
			return -1;
		}
		if (lf->writes && !lf->overwrite)
			return refuse(lf, "write to", err, errlen);
		lf->layout = LAYOUT_EXISTING;
		return 0;
	}
	if (lf->layout_explicit) {
		if (lf->existed && !may_modify)
			return refuse(lf, "lay out (truncate)", err, errlen);
		if (lf->layout == LAYOUT_FALLOCATED &&
		    (lf->falloc == FALLOC_NONE || lf->falloc == FALLOC_TRUNCATE)) {
			snprintf(err, errlen, "layout=fallocated needs fallocate=native, posix or "
				 "keep (not %s)", options_falloc_name(lf->falloc));
			return -1;
		}
		return 0;
	}
	if (lf->existed && !short_file) {
		if (lf->writes && !may_modify)
			return refuse(lf, "write to", err, errlen);
		lf->layout = LAYOUT_EXISTING;
		return 0;
	}
	/* missing or too short: lay it out as fio would */
	if (lf->existed && !may_modify)
		return refuse(lf, "extend (truncate and lay out)", err, errlen);
	if (lf->reads || lf->overwrite)
		lf->layout = LAYOUT_WRITTEN;
	else if (lf->falloc == FALLOC_NONE)
		lf->layout = LAYOUT_EMPTY;
	else if (lf->falloc == FALLOC_TRUNCATE)
		lf->layout = LAYOUT_SPARSE;
	else
		lf->layout = LAYOUT_FALLOCATED;
	return 0;
}

/* Bytes the run may allocate in this file, and bytes its layout frees first. */
static void space_need(const struct lfile *lf, uint64_t *need, uint64_t *freed)
{
	*need = 0;
	*freed = 0;
	if (lf->is_blockdev)
		return;
	switch (lf->layout) {
	case LAYOUT_EXISTING:
		if (lf->writes && lf->region_end > lf->old_alloc)
			*need = lf->region_end - lf->old_alloc;
		return;
	case LAYOUT_WRITTEN:
	case LAYOUT_FALLOCATED:
		*need = lf->region_end;
		break;
	default:	/* holes that the writes will fill */
		*need = lf->writes ? lf->region_end : 0;
		break;
	}
	if (lf->existed)
		*freed = lf->old_alloc;	/* the layout truncates the file first */
}

static int check_space(struct fileset *fs, char *err, size_t errlen)
{
	for (unsigned i = 0; i < fs->n; i++) {
		struct lfile *lf = &fs->files[i];
		uint64_t need = 0, freed = 0, avail;
		char dir[PATH_MAX], a[32], b[32];
		struct statvfs sv;
		bool first = true;

		/* one check per filesystem, summing every file on it */
		for (unsigned k = 0; k < fs->n; k++) {
			uint64_t n, f;

			if (fs->files[k].dev != lf->dev)
				continue;
			if (k < i) {
				first = false;
				break;
			}
			space_need(&fs->files[k], &n, &f);
			need += n;
			freed += f;
		}
		if (!first || need <= freed)
			continue;
		need -= freed;
		snprintf(dir, sizeof(dir), "%s", lf->path);
		if (statvfs(lf->existed ? lf->path : dirname(dir), &sv))
			continue;	/* cannot tell: let the writes say */
		avail = (uint64_t)sv.f_bavail * sv.f_frsize;
		if (need > avail) {
			snprintf(dir, sizeof(dir), "%s", lf->path);
			snprintf(err, errlen, "not enough space in %s: the jobs need %s, %s is free",
				 dirname(dir), values_format_bytes(need, a, sizeof(a)),
				 values_format_bytes(avail, b, sizeof(b)));
			return -1;
		}
	}
	return 0;
}

/* Direct I/O needs offsets and sizes on the device's alignment; --unaligned
 * must be off the filesystem block grid or it would not be unaligned. */
static int check_alignment(const struct job_opts *j, struct fileset *fs,
			   char *err, size_t errlen)
{
	struct file_region r[1];
	struct statx stx;
	struct statvfs sv;
	char dir[PATH_MAX];
	uint64_t dio_align = 512, fs_block = 4096;
	const char *probe;

	if (!files_regions(j, 0, fs, r, 1) || !r[0].lf)
		return 0;
	snprintf(dir, sizeof(dir), "%s", r[0].lf->path);
	probe = r[0].lf->existed ? r[0].lf->path : dirname(dir);
	if (!statx(AT_FDCWD, probe, 0, STATX_DIOALIGN, &stx) &&
	    (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align)
		dio_align = stx.stx_dio_offset_align;
	if (!statvfs(probe, &sv) && sv.f_bsize)
		fs_block = sv.f_bsize;
	if (j->direct) {
		const char *bad = j->bs % dio_align ? "bs" : j->offset % dio_align ? "offset" :
				  j->unaligned % dio_align ? "unaligned" : NULL;

		if (bad) {
			snprintf(err, errlen, "job '%s': with direct=1, %s must be a multiple of "
				 "%llu (the direct-I/O alignment of %s)", j->name, bad,
				 (unsigned long long)dio_align, probe);
			return -1;
		}
	}
	if (j->unaligned && j->unaligned % fs_block == 0) {
		snprintf(err, errlen, "job '%s': unaligned=%llu is a multiple of the filesystem "
			 "block (%llu), so the I/O would be aligned", j->name,
			 (unsigned long long)j->unaligned, (unsigned long long)fs_block);
		return -1;
	}
	return 0;
}

int files_plan(struct jobset *js, struct fileset *fs, char *err, size_t errlen)
{
	memset(fs, 0, sizeof(*fs));
	for (unsigned i = 0; i < js->njobs; i++) {
		if (resolve_size(&js->jobs[i], err, errlen) ||
		    plan_job(&js->jobs[i], fs, err, errlen))
			return -1;
	}
	for (unsigned i = 0; i < fs->n; i++)
		if (inspect(&fs->files[i], err, errlen) || decide(&fs->files[i], err, errlen))
			return -1;
	for (unsigned i = 0; i < js->njobs; i++)
		if (check_alignment(&js->jobs[i], fs, err, errlen))
			return -1;
	return check_space(fs, err, errlen);
}

void files_unlink(struct fileset *fs)
{
	for (unsigned i = 0; i < fs->n; i++) {
		struct lfile *lf = &fs->files[i];

		/* only what we made, and only when asked */
		if (lf->unlink && !lf->is_blockdev && (lf->created || lf->marked))
			unlink(lf->path);
	}
}

