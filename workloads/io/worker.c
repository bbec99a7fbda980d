// SPDX-License-Identifier: GPL-2.0
/* The per-thread I/O loop: choose direction, file and offset, hand units to
 * the engine, account completions. Engine-agnostic: a synchronous engine
 * completes each unit inside queue(), an async one keeps up to iodepth in flight. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "clock.h"
#include "io/run.h"
#include "io/verify.h"
#include "io/worker.h"
#include "job/options.h"

#define MAX_FILES_PER_THREAD 4096

static size_t buf_stride(const struct worker *w)
{
	return (size_t)((w->job->bs + 4095) & ~4095ULL);	/* page-aligned for O_DIRECT */
}

static int open_flags(const struct job_opts *j)
{
	int flags = job_writes(j) ? O_RDWR : O_RDONLY;

	if (j->direct)
		flags |= O_DIRECT;
	if (j->sync == SYNC_SYNC)
		flags |= O_SYNC;
	else if (j->sync == SYNC_DSYNC)
		flags |= O_DSYNC;
	return flags | O_CLOEXEC;
}

static int setup_files(struct worker *w)
{
	struct job_opts *j = w->job;
	struct file_region regs[MAX_FILES_PER_THREAD];
	unsigned n = files_regions(j, w->clone, w->run->fs, regs, MAX_FILES_PER_THREAD);

	w->files = calloc(n, sizeof(*w->files));
	if (!w->files)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		struct wfile *f = &w->files[i];

		f->fd = -1;
		w->nfiles++;
		f->r = regs[i];
		f->nblocks = regs[i].len / j->bs;
		f->fd = open(regs[i].lf->path, open_flags(j));
		if (f->fd < 0) {
			snprintf(w->error_msg, sizeof(w->error_msg), "cannot open %s: %s",
				 regs[i].lf->path, strerror(errno));
			return -errno;
		}
		if (rw_is_random(j->rw) && !j->norandommap &&
		    randmap_init(&f->map, f->nblocks))
			return -ENOMEM;
	}
	return 0;
}

static void seed_rngs(struct worker *w)
{
	const struct job_opts *j = w->job;
	uint64_t base = (j->randrepeat || options_is_set(j, "randseed")) ? j->randseed
								      : rng_entropy();
	uint64_t t = (uint64_t)w->index + 1;

	rng_seed(&w->rng_off, base ^ (t * 0x9e3779b97f4a7c15ULL));
	rng_seed(&w->rng_mix, base ^ (t * 0xc2b2ae3d27d4eb4fULL) ^ 1);
	rng_seed(&w->rng_data, base ^ (t * 0x165667b19e3779f9ULL) ^ 2);
}

static int setup_buffers(struct worker *w)
{
	unsigned depth = w->eng.depth;
	size_t stride = buf_stride(w);
	unsigned char *mem;

	if (posix_memalign(&w->bufmem, 4096, stride * depth))
		return -ENOMEM;
	mem = w->bufmem;
	/* random contents, written once (no compressible zeroes); touching them
	 * now keeps page faults out of the timed phase */
	for (size_t i = 0; i + 8 <= stride * depth; i += 8) {
		uint64_t v = rng_next(&w->rng_data);

		memcpy(mem + i, &v, 8);
	}
	w->units = calloc(depth, sizeof(*w->units));
	w->free_units = calloc(depth, sizeof(*w->free_units));
	if (!w->units || !w->free_units)
		return -ENOMEM;
	for (unsigned i = 0; i < depth; i++) {
		w->units[i].slot = i;
		w->units[i].buf = mem + stride * i;
		w->free_units[w->nfree++] = &w->units[depth - 1 - i];
	}
	return 0;
}

int worker_setup(struct worker *w)
{
	const struct job_opts *j = w->job;
	const struct engine_ops *ops = engine_registry[j->ioengine];
	int ret;

	w->tid = gettid();
	seed_rngs(w);
	ret = setup_files(w);
	if (ret) {
		if (!w->error_msg[0])
			snprintf(w->error_msg, sizeof(w->error_msg), "setting up files: %s",
				 strerror(-ret));
		return w->error = ret;
	}
	w->eng.ops = ops;
	ret = ops->init(&w->eng, ops->async ? j->iodepth : 1);
	if (ret) {
		w->eng.ops = NULL;
		snprintf(w->error_msg, sizeof(w->error_msg), "ioengine %s: cannot set up: %s",
			 options_engine_name(j->ioengine), strerror(-ret));
		return w->error = ret;
	}
	ret = setup_buffers(w);
	if (ret) {
		snprintf(w->error_msg, sizeof(w->error_msg), "buffers: %s", strerror(-ret));
		return w->error = ret;
	}
	if (!j->time_based) {
		uint64_t per_loop = 0;

		if (j->io_size)
			per_loop = j->io_size / j->bs;
		else
			for (unsigned i = 0; i < w->nfiles; i++)
				per_loop += w->files[i].nblocks;
		w->budget = per_loop * j->loops;
		if (!w->budget)
			w->budget = 1;
	}
	return 0;
}

static void begin_timed(struct worker *w, uint64_t t)
{
	struct rusage ru;

	stats_thread_reset(&w->st);
	w->st.start_ns = t;
	w->in_ramp = false;
	getrusage(RUSAGE_THREAD, &ru);
	w->st.usr_ns = timeval_ns(&ru.ru_utime);
	w->st.sys_ns = timeval_ns(&ru.ru_stime);
	w->st.ctx = (uint64_t)(ru.ru_nvcsw + ru.ru_nivcsw);
	w->st.majf = (uint64_t)ru.ru_majflt;
	w->st.minf = (uint64_t)ru.ru_minflt;
}

static void end_timed(struct worker *w, uint64_t t)
{
	struct rusage ru;

	w->st.end_ns = t;
	getrusage(RUSAGE_THREAD, &ru);
	/* begin_timed left the starting values in place: turn them into deltas */
	w->st.usr_ns = timeval_ns(&ru.ru_utime) - w->st.usr_ns;
	w->st.sys_ns = timeval_ns(&ru.ru_stime) - w->st.sys_ns;
	w->st.ctx = (uint64_t)(ru.ru_nvcsw + ru.ru_nivcsw) - w->st.ctx;
	w->st.majf = (uint64_t)ru.ru_majflt - w->st.majf;
	w->st.minf = (uint64_t)ru.ru_minflt - w->st.minf;
}

static int pick_ddir(struct worker *w)
{
	switch (w->job->rw) {
	case RW_READ:
	case RW_RANDREAD:
		return DDIR_READ;
	case RW_WRITE:
	case RW_RANDWRITE:
		return DDIR_WRITE;
	default:
		return rng_below(&w->rng_mix, 100) < w->job->rwmixread ? DDIR_READ : DDIR_WRITE;
	}
}

/* Fills u with the next I/O; false when there is none (an append file is full). */
static bool prep(struct worker *w, struct io_unit *u)
{
	const struct job_opts *j = w->job;
	struct wfile *f = &w->files[w->cur_file];
	uint64_t block, off;

	u->file_idx = w->cur_file;
	if (w->nfiles > 1)	/* fio's file_service_type=roundrobin */
		w->cur_file = w->cur_file + 1 == w->nfiles ? 0 : w->cur_file + 1;
	u->ddir = pick_ddir(w);
	if (j->layout == LAYOUT_APPEND) {
		off = __atomic_fetch_add(&f->r.lf->append_cursor, j->bs, __ATOMIC_RELAXED);
		if (off + j->unaligned + j->bs > f->r.lf->append_limit) {
			w->append_exhausted = true;
			return false;
		}
		off += j->unaligned;
	} else {
		if (!rw_is_random(j->rw)) {
			block = f->seq_next;
			f->seq_next = block + 1 == f->nblocks ? 0 : block + 1;
		} else if (j->norandommap) {
			block = rng_below(&w->rng_off, f->nblocks);
		} else {
			if (randmap_full(&f->map))
				randmap_reset(&f->map);	/* a new pass */
			block = randmap_take(&f->map, rng_below(&w->rng_off, f->nblocks));
		}
		off = f->r.start + block * j->bs + j->unaligned;
	}
	u->fd = f->fd;
	u->offset = off;
	u->len = (uint32_t)j->bs;
	if (u->ddir == DDIR_WRITE && j->verify == VERIFY_PATTERN)
		verify_fill(u->buf, u->len, off, rng_next(&w->rng_data));
	return true;
}

static bool error_stops(const struct worker *w, int ddir)
{
	int kind = ddir == DDIR_READ ? COE_READ : COE_WRITE;

	return !(w->job->continue_on_error & kind);
}

static void complete(struct worker *w, struct io_unit *u, uint64_t t_done, bool async)
{
	struct dir_stats *d = &w->st.dir[u->ddir];
	uint64_t clat;

	if (u->result < 0) {
		d->errors++;
		if (!w->st.first_error)
			w->st.first_error = (int)-u->result;
		if (error_stops(w, u->ddir))
			w->stopped_on_error = true;
		return;
	}
	d->ios++;
	d->bytes += (uint64_t)u->result;
	if ((uint64_t)u->result < u->len)
		d->short_ios++;
	clat = t_done - (async ? u->t_issue : u->t_start);
	lat_hist_add(&d->clat, clat);
	if (async) {
		lat_summary_add(&d->slat, u->t_issue - u->t_start);
		lat_summary_add(&d->lat, t_done - u->t_start);
	}
	/* the sampler reads these from another thread; relaxed is enough. Ramp
	 * I/O is left out, like the statistics begin_timed() resets. */
	if (!w->in_ramp) {
		__atomic_store_n(&w->live.ios[u->ddir], w->live.ios[u->ddir] + 1,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&w->live.bytes[u->ddir],
				 w->live.bytes[u->ddir] + (uint64_t)u->result, __ATOMIC_RELAXED);
	}
	if (u->ddir == DDIR_READ && w->job->verify == VERIFY_PATTERN &&
	    (uint64_t)u->result == u->len) {
		uint64_t before = w->st.verify.mismatches;

		verify_account(&w->st.verify, u->fd, u->buf, u->len, u->offset);
		if (w->st.verify.mismatches > before && !(w->job->continue_on_error & COE_VERIFY))
			w->stopped_on_error = true;
	}
}

static bool sync_due(const struct worker *w)
{
	const struct job_opts *j = w->job;

	return (j->fsync_every && w->writes_since_sync >= j->fsync_every) ||
	       (j->fdatasync_every && w->writes_since_sync >= j->fdatasync_every);
}

/* fsync/fdatasync the thread's files; timed into the "sync" statistics. */
static void do_sync(struct worker *w, bool data_only)
{
	for (unsigned i = 0; i < w->nfiles; i++) {
		uint64_t t0 = now_ns();
		int r = data_only ? fdatasync(w->files[i].fd) : fsync(w->files[i].fd);

		if (r) {
			w->st.dir[DDIR_WRITE].errors++;
			if (!w->st.first_error)
				w->st.first_error = errno;
			if (error_stops(w, DDIR_WRITE))
				w->stopped_on_error = true;
			continue;
		}
		w->st.sync_ios++;
		lat_summary_add(&w->st.sync_lat, now_ns() - t0);
	}
	w->writes_since_sync = 0;
}

static bool should_stop(struct worker *w, uint64_t t)
{
	if (w->in_ramp && t >= w->ramp_end_ns)
		begin_timed(w, t);
	return *w->run->stop || w->stopped_on_error || w->append_exhausted ||
	       (w->deadline_ns && t >= w->deadline_ns) ||
	       (w->budget && w->issued >= w->budget);
}

/* The sync that is due: fsync once fsync_every writes were issued, else
 * fdatasync (fdatasync_every). */
static void sync_now(struct worker *w)
{
	const struct job_opts *j = w->job;

	do_sync(w, !(j->fsync_every && w->writes_since_sync >= j->fsync_every));
}

/* Queues I/O until the depth is full, the job is done (*more = false) or a
 * sync must wait for the in-flight writes. Units the engine completed at
 * once are completed here; the others go into batch. Returns how many. */
static unsigned queue_units(struct worker *w, struct io_unit **batch, unsigned *inflight,
			    bool *more, uint64_t *t)
{
	const struct engine_ops *ops = w->eng.ops;
	unsigned queued = 0;

	while (*more && *inflight < w->eng.depth) {
		struct io_unit *u;

		if (sync_due(w)) {
			if (*inflight)
				break;	/* drain first: the sync covers every write */
			sync_now(w);
		}
		if (w->budget && w->issued >= w->budget) {
			*more = false;
			break;
		}
		u = w->free_units[--w->nfree];
		if (!prep(w, u)) {
			w->free_units[w->nfree++] = u;
			*more = false;
			break;
		}
		w->issued++;
		if (u->ddir == DDIR_WRITE)
			w->writes_since_sync++;	/* fio counts issued writes */
		u->t_start = now_ns();
		if (ops->queue(&w->eng, u) == Q_COMPLETED) {
			*t = now_ns();
			complete(w, u, *t, false);
			w->free_units[w->nfree++] = u;
			if (should_stop(w, *t))
				*more = false;
			continue;
		}
		batch[queued++] = u;
		(*inflight)++;
	}
	return queued;
}

/* Submits the queued batch; if nothing of it went out, each unit completes
 * with the error. */
static void commit_batch(struct worker *w, struct io_unit **batch, unsigned queued,
			 unsigned *inflight)
{
	int ret = w->eng.ops->commit(&w->eng);
	uint64_t ti = now_ns();

	for (unsigned i = 0; i < queued; i++) {
		batch[i]->t_issue = ti;
		if (ret < 0) {
			batch[i]->result = ret;
			complete(w, batch[i], ti, true);
			w->free_units[w->nfree++] = batch[i];
			(*inflight)--;
		}
	}
}

/* Waits for at least one completion and completes what came. False when
 * the engine cannot reap: the error is recorded and the worker stops. */
static bool reap(struct worker *w, unsigned *inflight, uint64_t *t)
{
	const struct engine_ops *ops = w->eng.ops;
	int n = ops->getevents(&w->eng, 1, *inflight);

	*t = now_ns();
	if (n < 0) {
		/* give up on what is in flight */
		w->st.first_error = w->st.first_error ? w->st.first_error : -n;
		w->stopped_on_error = true;
		return false;
	}
	for (int i = 0; i < n; i++) {
		struct io_unit *u = ops->event(&w->eng, (unsigned)i);

		complete(w, u, *t, true);
		w->free_units[w->nfree++] = u;
		(*inflight)--;
	}
	return true;
}

void worker_run(struct worker *w)
{
	const struct job_opts *j = w->job;
	struct io_unit *batch[w->eng.depth];
	unsigned inflight = 0;
	bool more = true;
	uint64_t t = now_ns();

	w->ramp_end_ns = w->run->go_ns + j->ramp_time_us * 1000;
	w->deadline_ns = j->runtime_us ? w->ramp_end_ns + j->runtime_us * 1000 : 0;
	w->in_ramp = true;
	if (t >= w->ramp_end_ns)
		begin_timed(w, t);

	for (;;) {
		unsigned queued;

		if (more && should_stop(w, t))
			more = false;
		queued = queue_units(w, batch, &inflight, &more, &t);
		if (queued)
			commit_batch(w, batch, queued, &inflight);
		if (inflight) {
			if (!reap(w, &inflight, &t))
				break;
			continue;
		}
		if (!more)
			break;
		t = now_ns();
	}
	/* the writes since the last sync still owe one, as in fio */
	if (sync_due(w) && !w->stopped_on_error)
		sync_now(w);
	if (j->end_fsync && job_writes(j))
		do_sync(w, false);
	t = now_ns();
	if (w->in_ramp)	/* ended inside the ramp: an empty timed phase */
		begin_timed(w, t);
	end_timed(w, t);
}

void worker_teardown(struct worker *w)
{
	if (w->eng.ops)
		w->eng.ops->cleanup(&w->eng);
	w->eng.ops = NULL;
	for (unsigned i = 0; i < w->nfiles; i++) {
		struct wfile *f = &w->files[i];

		if (f->fd >= 0) {
			if (w->job->fsync_on_close && job_writes(w->job))
				fsync(f->fd);
			close(f->fd);
		}
		randmap_free(&f->map);
	}
	free(w->files);
	w->files = NULL;
	w->nfiles = 0;
	free(w->units);
	free(w->free_units);
	free(w->bufmem);
	w->units = NULL;
	w->free_units = NULL;
	w->bufmem = NULL;
}
