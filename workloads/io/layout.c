// SPDX-License-Identifier: GPL-2.0
/* Laying the files out before the timed phase, so that the filesystem sees
 * the extent state the run asks for:
 *   written     every block written and synced: mapped extents, pure overwrites
 *   fallocated  fallocate(): unwritten extents (zeroes on read, converted on write)
 *   sparse      ftruncate() only: holes, so each write allocates
 *   append      empty: each write lands at the end of file and grows i_size
 * plus fio's auto rules (empty for fallocate=none, existing when big enough). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "io/layout.h"
#include "job/options.h"
#include "io/rng.h"
#include "io/verify.h"

#define LAYOUT_CHUNK (1u << 20)

static void fill_random(unsigned char *buf, size_t len, struct rng *r)
{
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t w = rng_next(r);

		memcpy(buf + i, &w, 8);
	}
}

static int write_all(int fd, const unsigned char *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t r = pwrite(fd, buf, len, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		buf += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* Writes [0, region_end). With verify, blocks on the I/O grid carry the pattern
 * so that a later verify pass accepts every block; other bytes are random. */
static int write_region(int fd, struct lfile *lf, uint64_t seed, volatile int *stop)
{
	size_t chunk = LAYOUT_CHUNK;
	unsigned char *buf;
	struct rng r;
	uint64_t pos = 0;
	int ret = 0;

	if (lf->verify && lf->grid_bs > chunk)
		chunk = (size_t)lf->grid_bs;
	buf = malloc(chunk + 8);
	if (!buf)
		return -ENOMEM;
	rng_seed(&r, seed);
	fill_random(buf, chunk, &r);
	while (pos < lf->region_end && !ret && !*stop) {
		uint64_t grid_end = lf->grid_start + lf->grid_blocks * lf->grid_bs;
		size_t len = lf->region_end - pos < chunk ? (size_t)(lf->region_end - pos) : chunk;

		if (lf->verify && pos < lf->grid_start && pos + len > lf->grid_start)
			len = (size_t)(lf->grid_start - pos);	/* stop at the grid */
		if (lf->verify && pos >= lf->grid_start && pos < grid_end) {
			uint64_t blocks = (grid_end - pos) / lf->grid_bs;
			uint64_t fit = chunk / lf->grid_bs;

			if (blocks > fit)
				blocks = fit;
			len = (size_t)(blocks * lf->grid_bs);
			for (uint64_t b = 0; b < blocks; b++)
				verify_fill(buf + b * lf->grid_bs, (uint32_t)lf->grid_bs,
					    pos + b * lf->grid_bs, rng_next(&r));
			ret = write_all(fd, buf, len, pos);
			fill_random(buf, chunk, &r);
		} else {
			ret = write_all(fd, buf, len, pos);
		}
		pos += len;
	}
	free(buf);
	return ret;
}

static int do_fallocate(int fd, struct lfile *lf)
{
	int r;

	switch (lf->falloc) {
	case FALLOC_POSIX:
		r = posix_fallocate(fd, 0, (off_t)lf->region_end);
		return -r;
	case FALLOC_KEEP:
		r = fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)lf->region_end);
		return r ? -errno : 0;
	default:
		r = fallocate(fd, 0, 0, (off_t)lf->region_end);
		return r ? -errno : 0;
	}
}

static int lay_out_one(struct lfile *lf, uint64_t seed, volatile int *stop,
		       char *err, size_t errlen)
{
	int fd, ret = 0;
	const char *step = "open";

	fd = open(lf->path, O_RDWR | O_CREAT | (lf->existed ? 0 : O_EXCL), 0644);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s", lf->path, strerror(errno));
		return -1;
	}
	if (!lf->existed) {
		lf->created = true;
		lf->ours = true;
		if (fsetxattr(fd, OWNER_XATTR, "1", 1, 0) == 0)
			lf->marked = true;
		else
			fprintf(stderr, "lockscope-load: warning: cannot mark %s as made by "
				"lockscope-load (%s); a later run will treat it as foreign\n",
				lf->path, strerror(errno));
	}
	step = "truncate";
	if (ftruncate(fd, 0)) {
		ret = -errno;
		goto fail;
	}
	switch (lf->layout) {
	case LAYOUT_WRITTEN:
		step = "write";
		ret = write_region(fd, lf, seed, stop);
		break;
	case LAYOUT_FALLOCATED:
		step = "fallocate";
		ret = do_fallocate(fd, lf);
		break;
	case LAYOUT_SPARSE:
		step = "truncate";
		ret = ftruncate(fd, (off_t)lf->region_end) ? -errno : 0;
		break;
	case LAYOUT_APPEND:
		/* holes below the first append offset, if any */
		step = "truncate";
		ret = ftruncate(fd, (off_t)lf->append_cursor) ? -errno : 0;
		break;
	default:	/* LAYOUT_EMPTY */
		break;
	}
	if (!ret) {
		/* the layout's journal and writeback must not leak into the timed phase */
		step = "fsync";
		ret = fsync(fd) ? -errno : 0;
	}
	if (ret)
		goto fail;
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	return 0;
fail:
	snprintf(err, errlen, "laying out %s (%s): %s", lf->path, step, strerror(-ret));
	close(fd);
	return -1;
}

static void drop_cache(const struct lfile *lf)
{
	int fd = open(lf->path, O_RDONLY);

	if (fd >= 0) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
}

int layout_files(struct fileset *fs, const struct jobset *js, volatile int *stop,
		 char *err, size_t errlen)
{
	bool invalidate = false;
	uint64_t seed = js->njobs ? js->jobs[0].randseed : 0x89;

	for (unsigned i = 0; i < js->njobs; i++)
		invalidate |= js->jobs[i].invalidate;
	for (unsigned i = 0; i < fs->n; i++) {
		struct lfile *lf = &fs->files[i];
		uint64_t t0 = now_ns();

		if (*stop)
			return 1;
		if (lf->layout == LAYOUT_EXISTING) {
			lf->layout_done = "existing";
			if (invalidate)
				drop_cache(lf);	/* fio's invalidate=1 */
			continue;
		}
		if (lay_out_one(lf, seed ^ (i * 0x9e3779b97f4a7c15ULL), stop, err, errlen))
			return -1;
		lf->layout_done = options_layout_name(lf->layout);
		lf->layout_ns = now_ns() - t0;
	}
	return *stop ? 1 : 0;
}
