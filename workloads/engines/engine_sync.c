// SPDX-License-Identifier: GPL-2.0
/* Synchronous engines: psync (pread/pwrite) and sync (lseek + read/write).
 * Each unit completes inside queue(); the worker runs them at depth 1. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "engines/engine.h"

struct sync_priv {
	struct io_unit *done;
};

static int sync_init(struct engine *e, unsigned depth)
{
	(void)depth;
	e->priv = calloc(1, sizeof(struct sync_priv));
	if (!e->priv)
		return -ENOMEM;
	e->depth = 1;
	return 0;
}

static int64_t result_of(ssize_t r)
{
	return r < 0 ? -(int64_t)errno : (int64_t)r;
}

static int psync_queue(struct engine *e, struct io_unit *u)
{
	ssize_t r;

	if (u->ddir == DDIR_WRITE)
		r = pwrite(u->fd, u->buf, u->len, (off_t)u->offset);
	else
		r = pread(u->fd, u->buf, u->len, (off_t)u->offset);
	u->result = result_of(r);
	((struct sync_priv *)e->priv)->done = u;
	return Q_COMPLETED;
}

static int sync_queue(struct engine *e, struct io_unit *u)
{
	ssize_t r;

	if (lseek(u->fd, (off_t)u->offset, SEEK_SET) < 0)
		r = -1;
	else if (u->ddir == DDIR_WRITE)
		r = write(u->fd, u->buf, u->len);
	else
		r = read(u->fd, u->buf, u->len);
	u->result = result_of(r);
	((struct sync_priv *)e->priv)->done = u;
	return Q_COMPLETED;
}

static int sync_commit(struct engine *e)
{
	(void)e;
	return 0;
}

static int sync_getevents(struct engine *e, unsigned min, unsigned max)
{
	(void)e; (void)min; (void)max;
	return 0; /* nothing is ever in flight */
}

static struct io_unit *sync_event(struct engine *e, unsigned i)
{
	(void)i;
	return ((struct sync_priv *)e->priv)->done;
}

static void sync_cleanup(struct engine *e)
{
	free(e->priv);
	e->priv = NULL;
}

const struct engine_ops engine_sync_psync = {
	.help = "pread/pwrite, one I/O at a time per thread",
	.init = sync_init,
	.queue = psync_queue,
	.commit = sync_commit,
	.getevents = sync_getevents,
	.event = sync_event,
	.cleanup = sync_cleanup,
};

const struct engine_ops engine_sync = {
	.help = "lseek + read/write, one I/O at a time per thread",
	.init = sync_init,
	.queue = sync_queue,
	.commit = sync_commit,
	.getevents = sync_getevents,
	.event = sync_event,
	.cleanup = sync_cleanup,
};
