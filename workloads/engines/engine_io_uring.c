// SPDX-License-Identifier: GPL-2.0
/* io_uring through liburing: units become SQEs, commit submits the batch,
 * getevents waits for at least min CQEs and takes up to max. */
#include <errno.h>
#include <stdlib.h>
#include <liburing.h>
#include "engines/engine.h"

struct uring_priv {
	struct io_uring ring;
	unsigned queued;
	struct io_unit **events;
};

static int uring_init(struct engine *e, unsigned depth)
{
	struct uring_priv *p = calloc(1, sizeof(*p));
	int ret;

	if (!p)
		return -ENOMEM;
	p->events = calloc(depth, sizeof(*p->events));
	if (!p->events) {
		free(p);
		return -ENOMEM;
	}
	ret = io_uring_queue_init(depth, &p->ring, 0);
	if (ret < 0) {
		free(p->events);
		free(p);
		return ret;
	}
	e->priv = p;
	e->depth = depth;
	return 0;
}

static int uring_queue(struct engine *e, struct io_unit *u)
{
	struct uring_priv *p = e->priv;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&p->ring);

	/* The worker never queues more than depth units, so an SQE is always free. */
	if (u->ddir == DDIR_WRITE)
		io_uring_prep_write(sqe, u->fd, u->buf, u->len, u->offset);
	else
		io_uring_prep_read(sqe, u->fd, u->buf, u->len, u->offset);
	io_uring_sqe_set_data(sqe, u);
	p->queued++;
	return Q_QUEUED;
}

static int uring_commit(struct engine *e)
{
	struct uring_priv *p = e->priv;

	while (p->queued) {
		int ret = io_uring_submit(&p->ring);

		if (ret == -EINTR || ret == -EAGAIN)
			continue;
		if (ret < 0)
			return ret;
		p->queued -= (unsigned)ret > p->queued ? p->queued : (unsigned)ret;
	}
	return 0;
}

static int uring_getevents(struct engine *e, unsigned min, unsigned max)
{
	struct uring_priv *p = e->priv;
	struct io_uring_cqe *cqe;
	unsigned n = 0;

	while (n < max) {
		int ret;

		if (n < min) {
			ret = io_uring_wait_cqe(&p->ring, &cqe);
			if (ret == -EINTR)
				continue;
			if (ret < 0)
				return n ? (int)n : ret;
		} else if (io_uring_peek_cqe(&p->ring, &cqe) != 0) {
			break;
		}
		struct io_unit *u = io_uring_cqe_get_data(cqe);

		u->result = cqe->res;
		p->events[n++] = u;
		io_uring_cqe_seen(&p->ring, cqe);
	}
	return (int)n;
}

static struct io_unit *uring_event(struct engine *e, unsigned i)
{
	return ((struct uring_priv *)e->priv)->events[i];
}

static void uring_cleanup(struct engine *e)
{
	struct uring_priv *p = e->priv;

	if (!p)
		return;
	io_uring_queue_exit(&p->ring);
	free(p->events);
	free(p);
	e->priv = NULL;
}

const struct engine_ops engine_io_uring = {
	.help = "io_uring (liburing), up to iodepth I/Os in flight per thread",
	.async = true,
	.init = uring_init,
	.queue = uring_queue,
	.commit = uring_commit,
	.getevents = uring_getevents,
	.event = uring_event,
	.cleanup = uring_cleanup,
};
