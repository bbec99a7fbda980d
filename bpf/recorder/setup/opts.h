/* SPDX-License-Identifier: GPL-2.0 */
/* lockscope-record's command line. */
#ifndef LOCKSCOPE_RECORD_OPTS_H
#define LOCKSCOPE_RECORD_OPTS_H

#include <stdbool.h>
#include "record.h"

#define EXIT_USAGE 2

struct rec_opts {
	double duration;            /* seconds; 0 = until a signal (or stdin) */
	const char *out;            /* NULL = stdout */
	int pids[REC_MAX_PIDS];
	int nr_pids;
	const char *comm;
	const char *cgroup;
	bool start_on_stdin;
	bool list_features;
	bool list_facts;
	bool user_stacks;
	bool raw_syscalls;          /* raw_syscalls:sys_enter/exit, not the per-call events */
	bool verbose;
	unsigned int min_block_us;
	unsigned int stack_refresh_ms;
	unsigned int long_wait_us;  /* waits recorded with stacks in every phase; 0: off */
	unsigned int holder_period_ms; /* holder snapshot timer period */
	unsigned int max_locks;
	unsigned int max_stacks;
	unsigned int stack_depth;
	unsigned int max_inodes;
	unsigned int max_threads;
	unsigned int max_offcpu;
	unsigned int max_inflight;
	unsigned int scan_ms;       /* how often /proc is read during the run */
	unsigned int mount_search_max;
	const char *disable;        /* comma-separated group names */
	const char *attach_kinds;   /* comma-separated attach kinds allowed */
	const char *fs;             /* --fs: all, auto or filesystem types; NULL = default */
	const char *lock_source;    /* --lock-source: auto (NULL), tracepoint or slowpath */
	double max_overhead_pct;    /* BPF CPU budget, % of all CPUs; 0 = never shed */
	unsigned int max_pause_ms;  /* the longest over-budget pause */
	unsigned int restore_after_ms; /* when shed steps come back (0: never) */
	unsigned int stats_every;   /* statistics on one second in N without a budget */
	unsigned int budget_stats_every; /* with a budget: judged on one second in N */
	unsigned int duty_pct;      /* programs attached this % of each duty period */
	unsigned int duty_period_ms;
	bool duty_flag;             /* --duty-flag: off phases by a flag, not by detaching */
	unsigned int interval_ms;   /* per-interval series; 0 = off */
	const char *series_out;     /* one JSON line per interval, or NULL */
	int argc;
	char **argv;
};

/* Fills opts from argv. Returns 0 to go on, -1 when the run should end with
 * *exit_code (help printed: 0; bad input: EXIT_USAGE, message printed). */
int opts_parse(int argc, char **argv, struct rec_opts *opts, int *exit_code);

struct json_out;

/* The numeric options' ranges, {"name": [min, max]}: --list-facts' option_ranges,
 * which the analyzer's own checks of the same options are tested against. */
void opts_ranges_json(struct json_out *j);

#endif
