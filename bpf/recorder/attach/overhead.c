// SPDX-License-Identifier: GPL-2.0
/* The recorder's own cost, measured by the kernel: BPF run-time statistics
 * (bpf_enable_stats(BPF_STATS_RUN_TIME) holds them on while its fd is open,
 * kernel/bpf/syscall.c bpf_enable_runtime_stats(); nothing to restore at
 * exit), read per program with BPF_OBJ_GET_INFO_BY_FD (run_cnt,
 * run_time_ns). See docs/recorder-json.md, "overhead". */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "record.h"
#include "record.skel.h"
#include "attach/overhead.h"
#include "attach/statsclock.h"

#define STATS_SYSCTL "/proc/sys/kernel/bpf_stats_enabled"

/* The group table says which (kept): lock waits, DIO (and the i_rwsem
 * addresses it learns), per-thread time. */
bool overhead_group_core(int g)
{
	return g >= 0 && g < NR_GROUPS && probe_groups[g].kept;
}

static bool sysctl_on(void)
{
	FILE *f = fopen(STATS_SYSCTL, "re");
	int v = 0;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v != 0;
}

static void read_progs(struct rec_overhead *v)
{
	int i;

	for (i = 0; i < v->nr_progs; i++) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(v->progs[i].fd, &info, &len))
			continue;
		v->progs[i].id = info.id;
		v->progs[i].cnt = info.run_cnt;
		v->progs[i].ns = info.run_time_ns;
	}
}

/* All programs' run counts as read_progs() last left them. */
static __u64 summed_runs(const struct rec_overhead *v)
{
	__u64 n = 0;
	int i;

	for (i = 0; i < v->nr_progs; i++)
		n += v->progs[i].cnt;
	return n;
}

static __u64 tv_ns(const struct timeval *t)
{
	return (__u64)t->tv_sec * 1000000000ULL + (__u64)t->tv_usec * 1000ULL;
}

static __u64 ru_ns(const struct rusage *r)
{
	return tv_ns(&r->ru_utime) + tv_ns(&r->ru_stime);
}

/* What the statistics' clock added to runs program runs (0 when unknown). */
static double clock_of(const struct rec_overhead *v, __u64 runs)
{
	return v->clock_ns > 0 ? v->clock_ns * (double)runs : 0;
}

static double share_of(const struct rec_overhead *v, __u64 ns, __u64 window)
{
	return window && v->online_cpus > 0 ? (double)ns / ((double)window * v->online_cpus) : 0;
}

void overhead_init(struct rec_overhead *v, struct record_bpf *skel, const struct rec_duty *duty,
		   double max_overhead_pct, unsigned int max_pause_ms,
		   unsigned int restore_after_ms, unsigned int stats_every,
		   unsigned int budget_stats_every)
{
	struct bpf_program *prog;
	bool was_on = sysctl_on();

	memset(v, 0, sizeof(*v));
	v->max_share = max_overhead_pct / 100.0;
	v->max_pause_ns = (__u64)max_pause_ms * 1000000ULL;
	v->restore_base_ns = v->restore_wait_ns = (__u64)restore_after_ms * 1000000ULL;
	v->online_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	v->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (v->stats_fd < 0) {
		snprintf(v->stats_error, sizeof(v->stats_error), "bpf_enable_stats: %s",
			 strerror(errno));
		v->src = was_on ? STATS_ALREADY_ON : STATS_OFF;
	} else {
		v->src = was_on ? STATS_ALREADY_ON : STATS_SESSION;
	}
	v->stats_on = v->src != STATS_OFF;
	/* A budget is judged on every second's statistics; statistics that
	 * someone else holds on cannot be switched off. */
	v->stats_every = stats_every ? stats_every : 1;
	v->sampling = v->stats_every > 1 && v->max_share <= 0 && v->src == STATS_SESSION;
	/* a budget judged on one second in N (--budget-stats-every), the
	 * statistics' own clock subtracted: what the programs cost unmeasured */
	v->est_ns_per_s = -1;
	if (v->max_share > 0 && budget_stats_every > 1 && v->src == STATS_SESSION) {
		v->sampling = v->judge_sampled = true;
		v->stats_every = budget_stats_every;
	}
	if (!v->sampling)
		v->stats_every = 1;
	v->clock_ns = v->src == STATS_OFF ? -1 : statsclock_ns_per_run();
	if (v->sampling) {
		/* off until the window opens (a sweep attaches during its layout) */
		close(v->stats_fd);
		v->stats_fd = -1;
		v->stats_on = false;
	}
	bpf_object__for_each_program(prog, skel->obj) {
		struct rec_prog_stat *p;
		int kind;

		if (bpf_program__fd(prog) < 0 || v->nr_progs == REC_MAX_PROGS)
			continue;
		p = &v->progs[v->nr_progs++];
		p->name = bpf_program__name(prog);
		p->fd = bpf_program__fd(prog);
		p->group = probe_prog_group(p->name, &kind);
		p->kept = duty->by_flag ||
			  (skel->rodata->long_wait_ns && probe_prog_follows_long_waits(p->name));
	}
	read_progs(v);
}

void overhead_start(struct rec_overhead *v, __u64 now)
{
	int i;

	read_progs(v);
	for (i = 0; i < v->nr_progs; i++) {
		struct rec_prog_stat *p = &v->progs[i];

		p->cnt0 = p->mark_cnt = p->cnt;
		p->ns0 = p->mark_ns = p->tick_ns = p->ns;
		p->tick_cnt = p->cnt;
	}
	v->start_mono = v->tick_mono = v->mark_mono = v->run_since = v->on_since = now;
	v->obs_mark = 0;
	if (v->sampling && !v->stats_on) {
		v->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		v->stats_on = v->stats_fd >= 0;
		v->off_since = now;
		read_progs(v);
		v->off_runs = summed_runs(v);
	}
	v->tick_observed = 0;
	getrusage(RUSAGE_SELF, &v->ru_start);
	v->ru_mark = v->ru_start;
}

/* A part of the window the statistics counted ends at now: its time, and
 * of it the time the probes were attached (observed: --duty's so far). */
static void count_measured(struct rec_overhead *v, __u64 since, __u64 now, __u64 observed)
{
	v->measured_ns += now - since;
	v->measured_obs_ns += observed - v->obs_mark;
}

void overhead_stop(struct rec_overhead *v, __u64 now)
{
	if (!v->start_mono || v->end_mono)
		return;
	v->end_mono = now;
	read_progs(v);
	if (v->stats_on)
		count_measured(v, v->on_since, now, v->observed_ns);
	else if (v->sampling && summed_runs(v) != v->off_runs)
		count_measured(v, v->off_since, now, v->observed_ns); /* by someone else's statistics */
	getrusage(RUSAGE_SELF, &v->ru_end);
}

void overhead_free(struct rec_overhead *v)
{
	if (v->stats_fd > 0)
		close(v->stats_fd);
	v->stats_fd = -1;
}

/* A step, kept while there is room (the last ones of a long window are
 * counted in "sampling" only). */
static struct rec_shed *add_shed(struct rec_overhead *v, __u64 now, const char *kind,
				 const char *what, double share)
{
	struct rec_shed *s;

	if (v->nr_shed == REC_MAX_SHED)
		return NULL;
	s = &v->shed[v->nr_shed++];
	memset(s, 0, sizeof(*s));
	s->t_ns = now;
	s->kind = kind;
	snprintf(s->what, sizeof(s->what), "%s", what);
	s->share_before = share;
	return s;
}

/* The duty is aimed a little under the budget (the window's share is a mean
 * of noisy periods). It is raised towards that aim whenever a judged second
 * leaves room for a step of DUTY_RAISE_STEP or more, so that a second judged
 * high (the window's first, with every thread's first stack walks in it)
 * does not hold it down for the rest of the window, and it does not swing at
 * every tick. What was shed comes back only well under the budget. */
#define DUTY_AIM 0.8
#define DUTY_RAISE_STEP 1.15
#define RESTORE_BELOW 0.5

static void note_duty(struct rec_overhead *v, struct rec_duty *duty, __u64 now, double share,
		      unsigned int pct)
{
	char what[32];

	duty_set(duty, pct);
	snprintf(what, sizeof(what), "duty %u%%", pct);
	add_shed(v, now, "duty", what, share);
}

/* Over budget with duty above its floor: lower it in proportion. The share
 * was measured over "on" time and scaled by the duty, so the new duty
 * brings the whole period's share just under the budget. */
static bool lower_duty(struct rec_overhead *v, struct rec_duty *duty, __u64 now, double share)
{
	unsigned int pct = duty->pct * DUTY_AIM * v->max_share / share;

	if (duty->pct <= DUTY_FLOOR_PCT)
		return false;
	if (pct >= duty->pct)
		pct = duty->pct - 1;
	if (pct < DUTY_FLOOR_PCT)
		pct = DUTY_FLOOR_PCT;
	note_duty(v, duty, now, share, pct);
	return true;
}

static bool group_restorable(int g);

/* Under budget by a step or more: raise the duty towards the aim, at most
 * --duty, once the stacks and groups shed came back (restore_step; a group
 * that cannot come back does not hold the duty down). */
static void raise_duty(struct rec_overhead *v, struct rec_duty *duty, __u64 now, double share)
{
	double want = share > 0 ? duty->pct * DUTY_AIM * v->max_share / share : 100;
	unsigned int pct = want > duty->requested_pct ? duty->requested_pct : (unsigned int)want;
	int i;

	if (v->stacks_shed || want < duty->pct * DUTY_RAISE_STEP || pct <= duty->pct)
		return;
	for (i = 0; i < NR_GROUPS; i++)
		if (v->group_shed[i] && group_restorable(i))
			return;
	note_duty(v, duty, now, share, pct);
}

/* The pause that brings the mean share, over the run since the last pause
 * (or the window's start) and the pause itself, to DUTY_AIM of the budget:
 * run × (share / aim − 1), within [PAUSE_MIN_NS, --max-pause-ms]. A budget
 * far below the share pauses for the longest, and checks again after it. */
#define PAUSE_MIN_NS 1000000000ULL
#define PAUSE_SETTLE_NS 500000000ULL

static __u64 pause_len(const struct rec_overhead *v, double share, __u64 now)
{
	double run = (double)(now - v->run_since);
	double len = run * (share / (DUTY_AIM * v->max_share) - 1);

	return len > (double)v->max_pause_ns ? v->max_pause_ns :
	       len < PAUSE_MIN_NS ? PAUSE_MIN_NS : (__u64)len;
}

/* Sampling: the statistics' clock reads are paid in one tick of stats_every
 * (the static key behind them, kernel/bpf/syscall.c bpf_stats_handler() and
 * bpf_enable_runtime_stats(), is flipped twice per stats_every seconds). The
 * static key also counts for others: the sysctl, another process's
 * bpf_enable_stats(). A tick off in which the counts still grew was measured
 * by them, and counts as measured; with the sysctl on, the statistics are
 * kept on to the end. */
static void sample_tick(struct rec_overhead *v, __u64 now, __u64 observed)
{
	bool was_on = v->stats_on;
	int fd;

	if (was_on) {
		close(v->stats_fd);
		v->stats_fd = -1;
		v->stats_on = false;
		count_measured(v, v->on_since, now, observed);
		v->ticks_off = 0;
	}
	/* read once, after the close: counts that grow from here on are others' */
	read_progs(v);
	if (!was_on && summed_runs(v) != v->off_runs)
		count_measured(v, v->off_since, now, observed);
	v->off_since = now;
	v->obs_mark = observed;
	v->off_runs = summed_runs(v);
	if (!sysctl_on()) {
		if (v->ticks_off++ < v->stats_every - 1)
			return;
	} else {
		v->sampling = false;
	}
	fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (fd < 0 && v->sampling)
		return; /* tried again next tick */
	v->stats_fd = fd;
	v->stats_on = true;
	v->on_since = now;
}

static void judge(struct rec_overhead *v, struct record_bpf *skel, struct rec_probe *probe,
		  struct rec_duty *duty, __u64 now, double share, __u64 on,
		  const __u64 group_ns[NR_GROUPS]);

/* The programs' cost since the last tick: all of it, per group, and the
 * part of the programs attached in --duty's "off" phases too (kept). */
struct tick_sum {
	__u64 ns, runs;
	__u64 kept_ns, kept_runs;
};

static struct tick_sum tick_cost(struct rec_overhead *v, __u64 group_ns[NR_GROUPS])
{
	struct tick_sum t = { 0 };
	int i;

	read_progs(v);
	for (i = 0; i < v->nr_progs; i++) {
		struct rec_prog_stat *p = &v->progs[i];
		__u64 d = p->ns - p->tick_ns, n = p->cnt - p->tick_cnt;

		t.ns += d;
		t.runs += n;
		if (p->kept) {
			t.kept_ns += d;
			t.kept_runs += n;
		}
		if (p->group >= 0)
			group_ns[p->group] += d;
		p->tick_ns = p->ns;
		p->tick_cnt = p->cnt;
	}
	return t;
}

/* The share of a whole duty period: the cost of the programs attached only
 * in "on" phases per second attached, times the duty, and the rest's over
 * the tick (dt). The cost per second attached is a ratio of sums over the
 * judged ticks, the older ones decayed by e^(-age / the duty's period): one
 * tick alone is no measure of it, as its "on" part may be a sliver right
 * after an attach, whose first events walk every thread's stacks again, or
 * leave them out, or take in the grace after a detach (the programs run then
 * too, unobserved); the judged ticks fall at every point of the period. */
static double on_cost_per_s(const struct rec_overhead *v)
{
	return v->on_time_ns > 0 ? v->on_cost_ns * 1e9 / v->on_time_ns : 0;
}

static double period_share(struct rec_overhead *v, const struct rec_duty *duty, double on_ns,
			   double on_clock_ns, double kept_ns, __u64 on, __u64 dt)
{
	double keep = duty->period_ns ? exp(-(double)dt / (double)duty->period_ns) : 0;

	v->on_cost_ns = v->on_cost_ns * keep + on_ns;
	v->on_time_ns = v->on_time_ns * keep + (double)on;
	return (share_of(v, (__u64)on_cost_per_s(v), 1000000000ULL) +
		share_of(v, (__u64)on_clock_ns, on)) * duty->pct / 100 +
	       share_of(v, (__u64)kept_ns, dt);
}

/* The part of the window so far the statistics were on, this tick's dt
 * included: at least one second in N, more while each step was measured
 * at once. */
static double measured_part(const struct rec_overhead *v, __u64 now, __u64 dt)
{
	double part = now > v->start_mono ?
		      (double)(v->measured_ns + dt) / (double)(now - v->start_mono) : 1;

	return part > 1 ? 1 : part < 1.0 / v->stats_every ? 1.0 / v->stats_every : part;
}

/* Sampled judging: the tick that closes a second of statistics judges the
 * budget on it, with their clock taken out of every run (of the groups'
 * figures too, in proportion) and put back spread over the window
 * (measured_part): the measuring is the recorder's cost too (every program
 * on the machine pays the clock while the statistics are on; at 700k runs
 * a second it is 1.7% of 2 CPUs in those seconds, docs/recorder-json.md).
 * The tick that turns them on marks where the next measured second starts. */
static void sampled_tick(struct rec_overhead *v, struct record_bpf *skel, struct rec_probe *probe,
			 struct rec_duty *duty, __u64 now)
{
	__u64 group_ns[NR_GROUPS] = { 0 }, dt = now - v->tick_mono;
	__u64 observed = duty_observed(duty, now), on = observed - v->tick_observed, steps;
	bool measured = v->stats_on;
	double clock, kept_clock, bare, kept_bare, part, share;
	struct tick_sum t;
	int i;

	if (measured) {
		t = tick_cost(v, group_ns);
		clock = clock_of(v, t.runs);
		if (clock > (double)t.ns)
			clock = (double)t.ns;
		kept_clock = t.runs ? clock * (double)t.kept_runs / (double)t.runs : 0;
		bare = (double)t.ns - clock;
		kept_bare = (double)t.kept_ns - kept_clock;
		if (kept_bare < 0)
			kept_bare = 0;
		for (i = 0; i < NR_GROUPS && t.ns; i++)
			group_ns[i] = (__u64)((double)group_ns[i] * bare / (double)t.ns);
		part = measured_part(v, now, dt);
		if (dt)
			v->est_ns_per_s = kept_bare * 1e9 / (double)dt;
		share = on ? period_share(v, duty, bare - kept_bare, (clock - kept_clock) * part,
					  kept_bare + kept_clock * part, on, dt) : 0;
		sample_tick(v, now, observed);
		steps = v->nr_shed + duty->pauses + duty->pct;
		judge(v, skel, probe, duty, now, share, on, group_ns);
		/* a step was taken: its effect is measured at once, the next
		 * second, so that the steps come a second apart as without sampling */
		if (steps != v->nr_shed + duty->pauses + duty->pct && !v->stats_on) {
			int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

			if (fd >= 0) {
				v->stats_fd = fd;
				v->stats_on = true;
				v->on_since = now;
			}
		}
	} else {
		sample_tick(v, now, observed);
	}
	if (v->stats_on) { /* on from now: the next tick's figures start here */
		tick_cost(v, group_ns);
		v->tick_mono = now;
		v->tick_observed = observed;
	}
}

void overhead_tick(struct rec_overhead *v, struct record_bpf *skel, struct rec_probe *probe,
		   struct rec_duty *duty, __u64 now)
{
	__u64 group_ns[NR_GROUPS] = { 0 }, dt = now - v->tick_mono;
	__u64 observed = duty_observed(duty, now), on = observed - v->tick_observed;
	struct tick_sum t;
	double share;

	if (!v->start_mono || v->end_mono || v->src == STATS_OFF || !dt)
		return;
	if (v->judge_sampled && v->sampling) {
		sampled_tick(v, skel, probe, duty, now);
		return;
	}
	if (v->sampling) {
		sample_tick(v, now, observed);
		return;
	}
	t = tick_cost(v, group_ns);
	v->tick_mono = now;
	v->tick_observed = observed;
	share = on ? period_share(v, duty, (double)(t.ns - t.kept_ns), 0, (double)t.kept_ns, on, dt) : 0;
	judge(v, skel, probe, duty, now, share, on, group_ns);
}

/* A stack or group step was shed: the next return waits restore_wait_ns,
 * doubled when a return came since the last step (it did not hold). */
#define RESTORE_WAIT_MAX_NS 3600000000000ULL

static void shed_taken(struct rec_overhead *v, __u64 now)
{
	if (v->restored && v->restore_wait_ns < RESTORE_WAIT_MAX_NS / 2)
		v->restore_wait_ns *= 2;
	v->restored = false;
	v->restore_after = now + v->restore_wait_ns;
}

static void set_shed_stacks(struct rec_overhead *v, struct record_bpf *skel, __u32 level)
{
	v->stacks_shed = level;
	__atomic_store_n(&skel->bss->shed_stacks, level, __ATOMIC_SEQ_CST);
}

/* The next stack step: user stacks, then all stack walks; false when both
 * are shed already. */
static bool shed_stacks_step(struct rec_overhead *v, struct record_bpf *skel, __u64 now,
			     double share)
{
	if (v->stacks_shed < REC_SHED_USTACKS && skel->rodata->user_stacks) {
		set_shed_stacks(v, skel, REC_SHED_USTACKS);
		v->ustacks_shed_at = now;
		add_shed(v, now, "stacks", "user_stacks", share);
		shed_taken(v, now);
		return true;
	}
	if (v->stacks_shed < REC_SHED_STACKS) {
		set_shed_stacks(v, skel, REC_SHED_STACKS);
		v->stacks_shed_at = now;
		add_shed(v, now, "stacks", "stacks", share);
		shed_taken(v, now);
		return true;
	}
	return false;
}

/* A group whose links can be made again: a timer group's are detached for
 * good (probe_detach_group), and the releasers need the holders' slots. */
static bool group_restorable(int g)
{
	return g != GROUP_HOLDERS && g != GROUP_RELEASERS;
}

/* Well under budget: the last shed step comes back, once restore_after has
 * come (true while a step is shed: the duty is raised only with none). The
 * group's links are made at once in an "on" phase, else at the next. */
static bool restore_step(struct rec_overhead *v, struct record_bpf *skel,
			 struct rec_probe *probe, struct rec_duty *duty, __u64 now, double share)
{
	__u64 last = 0;
	int i, g = -1;
	bool stacks = false;

	for (i = 0; i < NR_GROUPS; i++) {
		if (v->group_shed[i] && group_restorable(i) && v->group_shed_at[i] >= last) {
			last = v->group_shed_at[i];
			g = i;
		}
	}
	if (v->stacks_shed && (v->stacks_shed == REC_SHED_STACKS ? v->stacks_shed_at :
			       v->ustacks_shed_at) >= last) {
		stacks = true;
		g = -1;
	}
	if (!stacks && g < 0)
		return false;
	if (!v->restore_base_ns || now < v->restore_after)
		return true;
	if (stacks) {
		/* all stacks back, user stacks still off where they were shed */
		if (v->stacks_shed == REC_SHED_STACKS && v->ustacks_shed_at) {
			set_shed_stacks(v, skel, REC_SHED_USTACKS);
			add_shed(v, now, "restore", "stacks", share);
		} else {
			set_shed_stacks(v, skel, 0);
			add_shed(v, now, "restore", "user_stacks", share);
		}
	} else {
		v->group_shed[g] = false;
		if (duty->on && !duty->paused_until)
			duty->failed += probe_resume(probe, v->group_shed);
		add_shed(v, now, "restore", probe_groups[g].name, share);
	}
	v->restored = true;
	v->restore_after = now + v->restore_wait_ns;
	return true;
}

static void judge(struct rec_overhead *v, struct record_bpf *skel, struct rec_probe *probe,
		  struct rec_duty *duty, __u64 now, double share, __u64 on,
		  const __u64 group_ns[NR_GROUPS])
{
	__u64 best_ns = 0, pause;
	struct rec_shed *step;
	int i, best = -1;

	/* not judged in a pause, nor on the first part-second after it */
	if (v->max_share <= 0 || duty->paused_until ||
	    (v->run_since > v->start_mono && now < v->run_since + PAUSE_SETTLE_NS))
		return;
	if (share <= v->max_share) {
		if (on && !(share < RESTORE_BELOW * v->max_share &&
			    restore_step(v, skel, probe, duty, now, share)))
			raise_duty(v, duty, now, share);
		return;
	}
	if (lower_duty(v, duty, now, share))
		return;
	/* stacks first: they cost inside the switch and lock programs; but
	 * while long waits are followed (--long-wait-us) the stacks are what
	 * the recording is for, and the other groups go first */
	if (!skel->rodata->long_wait_ns && shed_stacks_step(v, skel, now, share))
		return;
	for (i = 0; i < NR_GROUPS; i++) {
		if (overhead_group_core(i) || v->group_shed[i] || !probe_group_on(probe, i))
			continue;
		if (group_ns[i] > best_ns) {
			best_ns = group_ns[i];
			best = i;
		}
	}
	if (best >= 0) {
		probe_detach_group(probe, best);
		v->group_shed[best] = true;
		v->group_shed_at[best] = now;
		add_shed(v, now, "group", probe_groups[best].name, share);
		shed_taken(v, now);
		return;
	}
	if (shed_stacks_step(v, skel, now, share))
		return;
	/* Only the core groups are left, and they alone are over budget: a
	 * pause keeps the budget and the window (a continuous attach goes on
	 * recording after it). */
	pause = pause_len(v, share, now);
	duty_pause(duty, probe, now, pause);
	step = add_shed(v, now, "pause", "all", share);
	if (step)
		step->pause_ns = pause;
	v->run_since = now + pause;
}

static void json_runs(struct json_out *j, __u64 cnt, __u64 ns, double share)
{
	json_uint(j, "run_cnt", cnt);
	json_uint(j, "run_time_ns", ns);
	json_double(j, "ns_per_run", cnt ? (double)ns / cnt : 0);
	json_double(j, "cpu_share", share);
}

static void json_share(struct rec_overhead *v, struct json_out *j, const char *key, __u64 ns,
		       __u64 window)
{
	if (v->src == STATS_OFF || !window)
		json_null(j, key);
	else
		json_double(j, key, share_of(v, ns, window));
}

/* The part of bpf_ns that is the statistics' own clock read, one per run:
 * what the same runs cost less while nobody measures them. */
static void json_stats_clock(struct rec_overhead *v, struct json_out *j, __u64 runs, __u64 ns,
			     __u64 window)
{
	double clock = clock_of(v, runs);

	json_key(j, "stats_clock");
	json_begin_object(j);
	if (v->clock_ns < 0) {
		json_null(j, "ns_per_run");
		json_null(j, "bpf_ns");
		json_null(j, "cpu_share");
	} else {
		if (clock > (double)ns)
			clock = (double)ns;
		json_double(j, "ns_per_run", v->clock_ns);
		json_uint(j, "bpf_ns", (__u64)clock);
		json_share(v, j, "cpu_share", (__u64)clock, window);
	}
	json_end_object(j);
}

/* What a program cost while the statistics were off (sampling): the
 * measured runs' time less the statistics' clock, scaled to the unmeasured
 * part of the window; of a program attached only in --duty's "on" phases,
 * to the unmeasured part of the time it was attached (the measured seconds
 * need not take in the same share of "on" time as the window). Without a
 * clock figure, the measured time as it is (an estimate that errs high). */
static __u64 with_unmeasured(const struct rec_overhead *v, const struct rec_prog_stat *p,
			     __u64 window)
{
	__u64 cnt = p->cnt - p->cnt0, ns = p->ns - p->ns0, all = window, part = v->measured_ns;
	double bare = (double)ns - clock_of(v, cnt);

	if (!p->kept && v->measured_obs_ns && v->observed_ns < window) {
		all = v->observed_ns;
		part = v->measured_obs_ns;
	}
	if (!part || all <= part || bare <= 0)
		return ns;
	return ns + (__u64)(bare * (double)(all - part) / (double)part);
}

static int cmp_prog_ns(const void *a, const void *b)
{
	const struct rec_prog_stat *x = a, *y = b;
	__u64 dx = x->ns - x->ns0, dy = y->ns - y->ns0;

	return dx > dy ? -1 : dx < dy;
}

static void json_runs_est(struct rec_overhead *v, struct json_out *j, __u64 cnt, __u64 ns,
			  __u64 est, __u64 window)
{
	json_runs(j, cnt, ns, share_of(v, est, window));
	json_uint(j, "bpf_ns", est);
}

void overhead_json(struct rec_overhead *v, struct json_out *j)
{
	static const char *const src_names[] = { "unavailable", "session", "already_on" };
	__u64 window = v->end_mono > v->start_mono ? v->end_mono - v->start_mono : 0;
	__u64 g_cnt[NR_GROUPS] = { 0 }, g_ns[NR_GROUPS] = { 0 }, g_est[NR_GROUPS] = { 0 };
	__u64 measured = 0, est = 0, runs = 0, p_est[REC_MAX_PROGS];
	bool g_loaded[NR_GROUPS] = { false };
	__u64 user;
	int i;

	/* a window that never opened costs nothing */
	for (i = 0; i < v->nr_progs && !window; i++) {
		v->progs[i].cnt0 = v->progs[i].cnt;
		v->progs[i].ns0 = v->progs[i].ns;
	}
	qsort(v->progs, v->nr_progs, sizeof(v->progs[0]), cmp_prog_ns);
	for (i = 0; i < v->nr_progs; i++) {
		const struct rec_prog_stat *p = &v->progs[i];

		p_est[i] = with_unmeasured(v, p, window);
		measured += p->ns - p->ns0;
		est += p_est[i];
		runs += p->cnt - p->cnt0;
		if (p->group >= 0) {
			g_loaded[p->group] = true;
			g_cnt[p->group] += p->cnt - p->cnt0;
			g_ns[p->group] += p->ns - p->ns0;
			g_est[p->group] += p_est[i];
		}
	}
	json_key(j, "overhead");
	json_begin_object(j);
	json_string(j, "stats", src_names[v->src]);
	if (v->stats_error[0] && v->src == STATS_OFF)
		json_string(j, "stats_error", v->stats_error);
	else
		json_null(j, "stats_error");
	json_int(j, "online_cpus", v->online_cpus);
	json_uint(j, "window_ns", window);
	json_uint(j, "stats_every", v->stats_every);
	json_uint(j, "measured_ns", v->src == STATS_OFF ? 0 : v->measured_ns);
	json_uint(j, "measured_bpf_ns", measured);
	json_uint(j, "bpf_ns", est);
	json_share(v, j, "cpu_share", est, window);
	json_uint(j, "observed_ns", v->observed_ns);
	json_share(v, j, "cpu_share_observed", est, v->observed_ns);
	json_stats_clock(v, j, runs, measured, window);
	json_double(j, "max_overhead_pct", v->max_share * 100);
	json_uint(j, "max_pause_ns", v->max_pause_ns);
	json_key(j, "core_groups");
	json_begin_array(j);
	for (i = 0; i < NR_GROUPS; i++)
		if (overhead_group_core(i))
			json_value_string(j, probe_groups[i].name);
	json_end_array(j);
	json_key(j, "per_program");
	json_begin_array(j);
	for (i = 0; i < v->nr_progs; i++) {
		const struct rec_prog_stat *p = &v->progs[i];

		json_begin_object(j);
		json_string(j, "name", p->name);
		json_uint(j, "id", p->id);
		if (p->group >= 0)
			json_string(j, "group", probe_groups[p->group].name);
		else
			json_null(j, "group");
		json_runs_est(v, j, p->cnt - p->cnt0, p->ns - p->ns0, p_est[i], window);
		json_end_object(j);
	}
	json_end_array(j);
	json_key(j, "per_group");
	json_begin_array(j);
	for (i = 0; i < NR_GROUPS; i++) {
		if (!g_loaded[i])
			continue;
		json_begin_object(j);
		json_string(j, "name", probe_groups[i].name);
		json_runs_est(v, j, g_cnt[i], g_ns[i], g_est[i], window);
		json_bool(j, "core", overhead_group_core(i));
		json_bool(j, "shed", v->group_shed[i]);
		json_end_object(j);
	}
	json_end_array(j);
	user = window ? ru_ns(&v->ru_end) - ru_ns(&v->ru_start) : 0;
	json_key(j, "user");
	json_begin_object(j);
	json_uint(j, "cpu_ns", user);
	json_uint(j, "user_ns", window ? tv_ns(&v->ru_end.ru_utime) - tv_ns(&v->ru_start.ru_utime) : 0);
	json_uint(j, "system_ns", window ? tv_ns(&v->ru_end.ru_stime) - tv_ns(&v->ru_start.ru_stime) : 0);
	json_double(j, "cpu_share", share_of(v, user, window));
	json_end_object(j);
	json_key(j, "shed");
	json_begin_array(j);
	for (i = 0; i < v->nr_shed; i++) {
		json_begin_object(j);
		json_uint(j, "t_ns", v->shed[i].t_ns);
		json_uint(j, "after_ns", v->shed[i].t_ns - v->start_mono);
		json_string(j, "kind", v->shed[i].kind);
		json_string(j, "what", v->shed[i].what);
		json_double(j, "share_before", v->shed[i].share_before);
		if (v->shed[i].pause_ns)
			json_uint(j, "pause_ns", v->shed[i].pause_ns);
		json_end_object(j);
	}
	json_end_array(j);
	json_bool(j, "detached", v->detached);
	json_end_object(j);
}

void overhead_interval_json(struct rec_overhead *v, struct json_out *j, __u64 now, __u64 observed,
			    bool reread)
{
	__u64 total = 0, runs = 0, window = now > v->mark_mono ? now - v->mark_mono : 0, user;
	struct rusage ru;
	int i;

	if (reread)
		read_progs(v);
	if (reread || !v->end_mono)
		getrusage(RUSAGE_SELF, &ru);
	else
		ru = v->ru_end;
	for (i = 0; i < v->nr_progs; i++) {
		struct rec_prog_stat *p = &v->progs[i];

		total += p->ns - p->mark_ns;
		runs += p->cnt - p->mark_cnt;
		p->mark_ns = p->ns;
		p->mark_cnt = p->cnt;
	}
	user = ru_ns(&ru) - ru_ns(&v->ru_mark);
	json_key(j, "overhead");
	json_begin_object(j);
	/* sampled judging: the statistics were on a second in N; the interval's
	 * cost is the last measured second's, clock taken out, over its time,
	 * and the clock the runs counted here paid (made while they were on) */
	if (v->judge_sampled && v->est_ns_per_s >= 0) {
		json_uint(j, "measured_bpf_ns", total);
		total = (__u64)(v->est_ns_per_s * (double)window / 1e9 +
				on_cost_per_s(v) * (double)observed / 1e9 +
				clock_of(v, runs));
		json_bool(j, "estimated", true);
	}
	json_uint(j, "bpf_ns", total);
	json_share(v, j, "cpu_share", total, window);
	json_share(v, j, "cpu_share_observed", total, observed);
	json_uint(j, "user_cpu_ns", user);
	json_double(j, "user_cpu_share", share_of(v, user, window));
	json_end_object(j);
	v->mark_mono = now;
	v->ru_mark = ru;
}
