/* SPDX-License-Identifier: GPL-2.0 */
/* The recorder's own cost: kernel BPF run-time statistics of its programs
 * (turned on for the session only), its user-side CPU time, and shedding
 * stacks and probe groups to stay within --max-overhead. */
#ifndef LOCKSCOPE_RECORD_OVERHEAD_H
#define LOCKSCOPE_RECORD_OVERHEAD_H

#include <stdbool.h>
#include <sys/resource.h>
#include <linux/types.h>
#include "json_out.h"
#include "attach/probe.h"
#include "attach/duty.h"

#define REC_MAX_PROGS 64
#define REC_MAX_SHED 32

struct rec_prog_stat {
	const char *name;
	int fd;
	__u32 id;
	int group;              /* enum rec_group_id, -1 if none */
	bool kept;              /* attached in the "off" phases of --duty too */
	__u64 cnt, ns;          /* last read (cumulative since load) */
	__u64 cnt0, ns0;        /* at the window's start */
	__u64 tick_ns;          /* at the last budget check */
	__u64 tick_cnt;         /* run count then (sampled judging) */
	__u64 mark_cnt, mark_ns; /* at the last series sample */
};

struct rec_shed {
	__u64 t_ns;             /* CLOCK_MONOTONIC */
	const char *kind;       /* "duty", "stacks", "group", "pause", "restore" */
	char what[32];          /* "duty 35%", "user_stacks", "stacks", a group name, "all" */
	double share_before;    /* BPF CPU share over the last second */
	__u64 pause_ns;         /* "pause": how long */
};

/* What the stats rest on. */
enum rec_stats_src {
	STATS_OFF,              /* unavailable: no share, no shedding */
	STATS_SESSION,          /* turned on by the recorder for the session */
	STATS_ALREADY_ON,       /* kernel.bpf_stats_enabled was already 1 */
};

struct rec_overhead {
	enum rec_stats_src src;
	char stats_error[128];
	int stats_fd;
	int online_cpus;
	double clock_ns;         /* statsclock_ns_per_run(), < 0 if unknown */
	double max_share;       /* --max-overhead as a fraction; 0: never shed */
	struct rec_prog_stat progs[REC_MAX_PROGS];
	int nr_progs;
	__u64 start_mono, end_mono, tick_mono, mark_mono;
	__u64 tick_observed;    /* --duty: observed time at the last budget check */
	__u64 observed_ns;      /* of the whole window, set when it closes */
	struct rusage ru_start, ru_end, ru_mark;
	bool group_shed[NR_GROUPS];
	__u32 stacks_shed;      /* REC_SHED_* */
	/* --restore-after-ms: when each shed step was taken (CLOCK_MONOTONIC;
	 * the last comes back first), the wait before the next return (doubled
	 * by a step shed again after a return) and when it may come */
	__u64 group_shed_at[NR_GROUPS];
	__u64 ustacks_shed_at, stacks_shed_at;
	__u64 restore_base_ns, restore_wait_ns, restore_after;
	bool restored;          /* something came back since the last step shed */
	bool detached;          /* the window ended in a pause (set when it closes) */
	__u64 run_since;        /* CLOCK_MONOTONIC: the window's start or the last pause */
	__u64 max_pause_ns;     /* --max-pause-ms */
	/* --stats-every: the statistics on one budget tick in N (sampling), or
	 * always; measured_ns is their time on within the window */
	unsigned int stats_every;
	bool sampling;
	bool stats_on;
	__u64 on_since;         /* CLOCK_MONOTONIC: when they were last turned on */
	__u64 measured_ns;      /* of the "on" parts that ended */
	__u64 measured_obs_ns;  /* of them, the time the probes were attached (--duty) */
	__u64 obs_mark;         /* --duty's observed time when they were last turned on or off */
	unsigned int ticks_off;
	__u64 off_since;        /* when they were last turned off */
	__u64 off_runs;         /* all programs' run_cnt then */
	/* --budget-stats-every: a budget judged on the seconds the statistics
	 * are on, their clock subtracted from each run and its cost spread
	 * over the window; the last such estimate of the cost unmeasured of the
	 * programs kept attached in --duty's "off" phases, in ns per second of
	 * wall time (-1: none yet) */
	bool judge_sampled;
	double est_ns_per_s;
	/* the judged ticks' cost of the programs attached only in "on" phases,
	 * and their "on" time, decayed (period_share): their estimate per
	 * second attached */
	double on_cost_ns, on_time_ns;
	struct rec_shed shed[REC_MAX_SHED];
	int nr_shed;
};

struct record_bpf;

/* After load and attach: turn the statistics on and list the programs;
 * stats_every > 1 without a budget: on for one tick in stats_every only;
 * restore_after_ms 0: what the budget sheds stays shed. */
void overhead_init(struct rec_overhead *v, struct record_bpf *skel, const struct rec_duty *duty,
		   double max_overhead_pct, unsigned int max_pause_ms,
		   unsigned int restore_after_ms, unsigned int stats_every,
		   unsigned int budget_stats_every);
void overhead_start(struct rec_overhead *v, __u64 now);
void overhead_stop(struct rec_overhead *v, __u64 now);
void overhead_free(struct rec_overhead *v);

/* Once a second while recording: when sampling, turns the statistics off
 * after a tick on and on after stats_every - 1 ticks off; else, when the last second's share was over the
 * budget, lowers the duty (down to DUTY_FLOOR_PCT), else sheds one step; the
 * last step pauses every program for a while (duty_pause), and the checks go
 * on when they are attached again. */
void overhead_tick(struct rec_overhead *v, struct record_bpf *skel, struct rec_probe *probe,
		   struct rec_duty *duty, __u64 now);

/* The "overhead" object of the final document. */
void overhead_json(struct rec_overhead *v, struct json_out *j);

/* The "overhead" object of one series interval (since the last call), with
 * observed ns of it; reread: read the programs' statistics now (else: as
 * overhead_stop left them). */
void overhead_interval_json(struct rec_overhead *v, struct json_out *j, __u64 now, __u64 observed,
			    bool reread);

/* Whether a group is core: never shed alone; when only core groups remain
 * over budget, the recorder detaches everything. */
bool overhead_group_core(int g);

#endif
