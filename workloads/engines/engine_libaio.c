// SPDX-License-Identifier: GPL-2.0
/* Linux native AIO through libaio: units become iocbs, commit calls io_submit
 * until the batch is in, getevents calls io_getevents. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <libaio.h>
#include "engines/engine.h"

struct aio_priv {
	io_context_t ctx;
	struct iocb *iocbs;	/* one per slot */
	struct iocb **pending;
	unsigned npending;
	struct io_event *ev;
	struct io_unit **events;
};

static void aio_free(struct aio_priv *p)
{
	free(p->iocbs);
	free(p->pending);
	free(p->ev);
	free(p->events);
	free(p);
}

static int aio_init(struct engine *e, unsigned depth)
{
	struct aio_priv *p = calloc(1, sizeof(*p));
	int ret;

	if (!p)
		return -ENOMEM;
	p->iocbs = calloc(depth, sizeof(*p->iocbs));
	p->pending = calloc(depth, sizeof(*p->pending));
	p->ev = calloc(depth, sizeof(*p->ev));
	p->events = calloc(depth, sizeof(*p->events));
	if (!p->iocbs || !p->pending || !p->ev || !p->events) {
		aio_free(p);
		return -ENOMEM;
	}
	ret = io_setup((int)depth, &p->ctx);
	if (ret < 0) {
		aio_free(p);
		return ret;
	}
	e->priv = p;
	e->depth = depth;
	return 0;
}

static int aio_queue(struct engine *e, struct io_unit *u)
{
	struct aio_priv *p = e->priv;
	struct iocb *cb = &p->iocbs[u->slot];

	if (u->ddir == DDIR_WRITE)
		io_prep_pwrite(cb, u->fd, u->buf, u->len, (long long)u->offset);
	else
		io_prep_pread(cb, u->fd, u->buf, u->len, (long long)u->offset);
	cb->data = u;
	p->pending[p->npending++] = cb;
	return Q_QUEUED;
}

static int aio_commit(struct engine *e)
{
	struct aio_priv *p = e->priv;
	unsigned done = 0;

	while (done < p->npending) {
		int ret = io_submit(p->ctx, (long)(p->npending - done), p->pending + done);

		if (ret == -EINTR || ret == -EAGAIN)
			continue;
		if (ret < 0) {
			p->npending = 0;
			return ret;
		}
		done += (unsigned)ret;
	}
	p->npending = 0;
	return 0;
}

static int aio_getevents(struct engine *e, unsigned min, unsigned max)
{
	struct aio_priv *p = e->priv;
	int ret;

	do {
		ret = io_getevents(p->ctx, (long)min, (long)max, p->ev, NULL);
	} while (ret == -EINTR);
	if (ret < 0)
		return ret;
	for (int i = 0; i < ret; i++) {
		struct io_unit *u = p->ev[i].data;

		/* res carries a negative errno in an unsigned long */
		u->result = (int64_t)(long)p->ev[i].res;
		p->events[i] = u;
	}
	return ret;
}

static struct io_unit *aio_event(struct engine *e, unsigned i)
{
	return ((struct aio_priv *)e->priv)->events[i];
}

static void aio_cleanup(struct engine *e)
{
	struct aio_priv *p = e->priv;

	if (!p)
		return;
	io_destroy(p->ctx);
	aio_free(p);
	e->priv = NULL;
}

const struct engine_ops engine_libaio = {
	.help = "Linux native AIO (libaio), up to iodepth I/Os in flight per thread",
	.async = true,
	.init = aio_init,
	.queue = aio_queue,
	.commit = aio_commit,
	.getevents = aio_getevents,
	.event = aio_event,
	.cleanup = aio_cleanup,
};
