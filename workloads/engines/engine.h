/* SPDX-License-Identifier: GPL-2.0 */
/* I/O engines behind one ops table, as in fio: the worker prepares io_units,
 * queues them, commits the batch and reaps completions; a synchronous engine
 * completes each unit inside queue(). */
#ifndef LOAD_ENGINE_H
#define LOAD_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

/* The direction of one I/O, and the index of per-direction counters. */
enum ddir { DDIR_READ = 0, DDIR_WRITE = 1, DDIR_NR = 2 };

struct io_unit {
	void *buf;
	uint64_t offset;
	uint32_t len;
	int ddir;
	int fd;
	unsigned file_idx;	/* the worker's file this unit targets */
	unsigned slot;
	uint64_t t_start;	/* ns: prepared */
	uint64_t t_issue;	/* ns: submitted (async engines) */
	int64_t result;		/* bytes moved, or -errno */
};

enum { Q_COMPLETED, Q_QUEUED };

struct engine {
	const struct engine_ops *ops;
	void *priv;
	unsigned depth;
};

struct engine_ops {
	const char *help;
	bool async;		/* honours iodepth; sync engines run at depth 1 */
	int (*init)(struct engine *e, unsigned depth);		/* 0 or -errno */
	int (*queue)(struct engine *e, struct io_unit *u);	/* Q_COMPLETED or Q_QUEUED */
	int (*commit)(struct engine *e);			/* 0 or -errno */
	int (*getevents)(struct engine *e, unsigned min, unsigned max); /* count or -errno */
	struct io_unit *(*event)(struct engine *e, unsigned i);
	void (*cleanup)(struct engine *e);
};

/* Every engine, in registry order: (ops suffix, the name users give). */
#define ENGINE_LIST(X)			\
	X(sync_psync, "psync")	\
	X(sync, "sync")			\
	X(io_uring, "io_uring")		\
	X(libaio, "libaio")

#define ENGINE_DECLARE(id, name) extern const struct engine_ops engine_##id;
ENGINE_LIST(ENGINE_DECLARE)

#define ENGINE_INDEX(id, name) ENGINE_##id,
enum engine_index { ENGINE_LIST(ENGINE_INDEX) NR_ENGINES };

/* Indexed by job_opts.ioengine (the option table names them from ENGINE_LIST). */
extern const struct engine_ops *const engine_registry[];

#endif
