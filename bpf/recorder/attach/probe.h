/* SPDX-License-Identifier: GPL-2.0 */
/* Probe groups: which tracepoints each needs, which attach kinds it offers,
 * and the loader that picks one kind per group from what the kernel allows
 * (tp_btf, then raw_tp, then tracepoint; fentry, then kprobe for extras). */
#ifndef LOCKSCOPE_RECORD_PROBE_H
#define LOCKSCOPE_RECORD_PROBE_H

#include <stdbool.h>
#include <linux/types.h>
#include "json_out.h"
#include "setup/opts.h"

#include "attach/probe_groups.h"

struct rec_group_def {
	const char *name;
	const char *tracepoints[GROUP_MAX_TPS]; /* "sys:event"; a function for fentry/kprobe */
	const char *progs[GROUP_MAX_TPS];       /* handler names: program = name + kind suffix */
	unsigned int kinds;                     /* bit per enum rec_attach offered */
	bool extra;                             /* optional extra: off is normal */
	const char *lost;                       /* what is lost when off */
	const char *fs;                         /* the filesystem whose code fires it (--fs),
						 * NULL: every one */
	const char *stands_for;                 /* the group it replaces where that one's
						 * tracepoints are absent, NULL: none */
	bool kept;                              /* the budget never sheds it alone: the
						 * analysis cannot stand without it */
};

extern const struct rec_group_def probe_groups[NR_GROUPS];
extern const char *const probe_attach_names[NR_ATTACH];

struct rec_group_state {
	int attach;                 /* enum rec_attach, or -1 when off */
	char reason[512];           /* why off, or which kinds were passed over */
	unsigned int failed;        /* kinds that failed to load or attach */
	bool not_needed;            /* its filesystem is not the target's (--fs) */
	bool replaced;              /* another group stands in for it (stands_for) */
	char why[NR_ATTACH][160];   /* why each kind was not used */
};

struct record_bpf;
struct bpf_link;

struct rec_probe {
	struct record_bpf *skel;
	struct bpf_link **links;    /* NULL: detached (shed, or an "off" phase of --duty) */
	int *link_groups;           /* group of each link (-1: none) */
	struct bpf_program **link_progs; /* the program of each link, to attach it again */
	int *link_events;           /* its syscalls:sys_*_NAME event (index), -1: its own */
	int *link_kept;             /* its classic tracepoint's perf event (tplink.c), or -1 */
	int *link_cpus;             /* a timer's CPU (its own cpu-clock event); -1: not a
				     * timer; -2: a timer detached for good */
	unsigned int timer_period_ms;
	bool timers_paused;         /* an "off" phase of --duty: timers counted still */
	char timer_why[160];        /* why timers are missing, or "" */
	int nr_links;
	struct rec_group_state groups[NR_GROUPS];
	char fs_reason[256];        /* the reason of the groups --fs leaves out */
	bool block_busy;            /* the block group's programs measure device busy time
				     * (kern/block.bpf.inc: the kernel has BPF atomic fetch) */
};

/* A callback that sets rodata, map sizes and filters on the opened skeleton
 * before load; non-zero aborts. */
typedef int (*rec_config_fn)(struct record_bpf *skel, void *arg);

/* open -> configure -> choose programs per group -> load -> attach, falling
 * back per group when a kind fails. 0, or a negative errno with a message
 * printed. */
int probe_prepare(struct rec_probe *p, const struct rec_opts *o, rec_config_fn config,
		      void *arg);
void probe_destroy(struct rec_probe *p);

/* Validates --disable, --attach-kinds and --fs names; -1 with a message if bad. */
int probe_check_names(const struct rec_opts *o);

/* Detaches group g's programs (every program when g < 0) while recording;
 * the programs stay loaded, so their run-time statistics stay readable.
 * Returns how many links were destroyed. */
int probe_detach_group(struct rec_probe *p, int g);

/* Time-sampled recording (duty.c): detaches every program and the holder
 * timers, not marking any group shed, and returns when (CLOCK_MONOTONIC ns)
 * the programs stopped running; then attaches again those of groups not in
 * off (the groups shed meanwhile). probe_resume returns how many links
 * failed to attach again (left detached). */
__u64 probe_pause(struct rec_probe *p);
int probe_resume(struct rec_probe *p, const bool off[NR_GROUPS]);

/* The timer programs (BPF_PROG_TYPE_PERF_EVENT: the holders' snapshots), one link
 * per CPU every period_ms, into the link table like any other (after the
 * rest is attached); 0 or a negative errno, its reason kept (probe_timer_cpus). */
int probe_attach_timers(struct rec_probe *p, unsigned int period_ms);
/* CPUs with a timer of group g attached (or paused by --duty); *why: why
 * none, or NULL. */
int probe_timer_cpus(const struct rec_probe *p, int g, const char **why);

/* The group of a program by its name (and its attach kind), or -1. */
int probe_prog_group(const char *name, int *kind);
/* Whether the program of this name follows long waits: with --long-wait-us
 * it stays attached through the "off" phases of --duty. */
bool probe_prog_follows_long_waits(const char *name);

bool probe_group_on(const struct rec_probe *p, enum rec_group_id g);

/* The "features" array (also --list-features' "groups"). */
void probe_json(const struct rec_probe *p, struct json_out *j, bool with_lost);

/* Marks every group off with the same reason (e.g. not root). */
void probe_all_off(struct rec_probe *p, const char *reason);

#endif
