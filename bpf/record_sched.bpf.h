/* SPDX-License-Identifier: GPL-2.0 */
/* Where each traced thread's time goes (on CPU, blocked, runnable but
 * waiting) and off-CPU time by stack, the offcputime way: stacks are taken
 * at switch-out, the time is known at switch-in.
 *
 * The filters apply to the thread switching out (it is current) and, from
 * the task pointer, to the one switching in. Walking stacks here costs
 * microseconds with the runqueue lock held, so a thread's stacks are walked
 * at one switch-out per stack_refresh_ns (a sample) and the others are
 * counted without stacks, keyed by reason, lock and system call; user space
 * spreads their time over the samples (docs/recorder-json.md). Consecutive
 * switch-outs with one key are summed in the thread's entry and reach the
 * offcpu map only when the key changes. */
#ifndef LOCKSCOPE_RECORD_SCHED_BPF_H
#define LOCKSCOPE_RECORD_SCHED_BPF_H

static struct offcpu_val zero_off;

/* The thread's pending off-CPU record into the offcpu map. */
static __always_inline void offcpu_flush(struct task_val *t)
{
	struct offcpu_val *v;

	if (!t->pending_count)
		return;
	v = lookup_or_init(&offcpu, &t->out, &zero_off, DROP_OFFCPU_FULL);
	if (v) {
		v->count += t->pending_count;   /* per-CPU value */
		v->total_ns += t->pending_ns;
	}
	t->pending_count = 0;
	t->pending_ns = 0;
}

static __always_inline bool same_key(const struct offcpu_key *a, const struct offcpu_key *b)
{
	return a->lock_addr == b->lock_addr && a->kstack == b->kstack && a->ustack == b->ustack &&
	       a->reason == b->reason && a->syscall == b->syscall;
}

/* The system call the current thread is in, REC_NO_SYSCALL if none. */
static __always_inline __u32 current_syscall(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;
	__u64 nr;

	if (task->flags & 0x00200000 /* PF_KTHREAD */)
		return REC_NO_SYSCALL;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return REC_NO_SYSCALL;
	nr = syscall_nr(regs);
	return nr < REC_SYSCALL_TABLE ? (__u32)nr : REC_NO_SYSCALL;
}

/* Whether this switch-out's stacks are walked: the first of the thread in
 * this system call and reason for stack_refresh_ns (REC_MEMO_SLOTS such
 * places per thread, the oldest replaced), so that every place a thread
 * blocks at has samples; and at most one walk per thread per
 * stack_refresh_ns / REC_MEMO_SLOTS, so that a thread moving between many
 * places walks rarely all the same. */
static __always_inline bool sample_due(struct task_val *t, __u32 key, __u64 now)
{
	__u32 i, oldest = 0;

	if (!stack_refresh_ns)
		return true;
	for (i = 0; i < REC_MEMO_SLOTS; i++) {
		if (t->sample_key[i] == key && t->sample_ts[i] &&
		    now - t->sample_ts[i] < stack_refresh_ns)
			return false;
		if (t->sample_ts[i] < t->sample_ts[oldest])
			oldest = i;
	}
	if (now - t->walk_ts < stack_refresh_ns / REC_MEMO_SLOTS)
		return false;
	t->walk_ts = now;
	t->sample_key[oldest & (REC_MEMO_SLOTS - 1)] = key;
	t->sample_ts[oldest & (REC_MEMO_SLOTS - 1)] = now;
	return true;
}

static __always_inline void switch_out(void *ctx, struct task_val *t, __u32 tid, bool runnable,
				       __u64 now)
{
	struct offcpu_key k = { .tid = tid, .kstack = REC_NO_STACK, .ustack = REC_NO_STACK };

	t->oncpu_ns += now - since_start(t->in_ts);
	t->out_ts = now;
	if (runq_from_sched_info) /* current: its finished waits are all in run_delay */
		t->runq_delay = bpf_get_current_task_btf()->sched_info.run_delay;
	t->wake_ts = 0;
	t->flags = runnable ? TF_PREEMPTED : 0;
	k.pid = t->pid;
	k.syscall = current_syscall();
	if (runnable) {
		k.reason = OFF_RUNQUEUE;
	} else if (t->lock) { /* blocked in a lock wait: its stacks are the wait's */
		k.reason = OFF_LOCK;
		k.lock_addr = t->lock;
		k.kstack = t->lock_kstack;
		k.ustack = t->lock_ustack;
	} else {
		k.reason = OFF_OTHER;
	}
	if (k.kstack == REC_NO_STACK) {
		/* no samples while --max-overhead has shed the stacks */
		if (shed_stacks < REC_SHED_STACKS && sample_due(t, k.syscall << 2 | k.reason, now)) {
			drop(COUNT_STACKS_WALKED);
			k.kstack = kstack_id(ctx);
			k.ustack = shed_stacks ? REC_NO_STACK : ustack_id(ctx);
		} else {
			drop(COUNT_OFFCPU_UNSAMPLED);
		}
	}
	if (!same_key(&k, &t->out)) {
		offcpu_flush(t);
		t->out = k;
	}
}

/* Whether a task that is not current passes the filters (tp_btf and raw_tp
 * give the task; the classic event does not, so there next is not followed
 * until it first switches out). */
static __always_inline bool traced_task(struct task_struct *task, const bool btf)
{
	__u32 tgid = RD(task, tgid);
	char comm[16];
	int i;

	if (tgid == self_pid || !RD(task, pid))
		return false;
	if (has_pid_filter && !pid_listed(tgid))
		return false;
	if (has_comm_filter) {
		BPF_CORE_READ_INTO(&comm, task, comm);
		for (i = 0; i < 16; i++) {
			if (comm[i] != comm_filter[i])
				return false;
			if (!comm[i])
				break;
		}
	}
	if (has_cgroup_filter) {
		struct cgroup *cgrp = BPF_CORE_READ(task, cgroups, dfl_cgrp), *anc = NULL;

		if (!cgrp || BPF_CORE_READ(cgrp, level) < (int)cgroup_level)
			return false;
		bpf_probe_read_kernel(&anc, sizeof(anc), &cgrp->ancestors[cgroup_level]);
		if (!anc || BPF_CORE_READ(anc, kn, id) != cgroup_id)
			return false;
	}
	return true;
}

/* The entry of a thread switching in; created when it passes the filters.
 * With a pid filter, the filter (a small map) is asked before the thread
 * map, so untraced threads cost one lookup. */
static __always_inline struct task_val *task_entry_for(__u32 tid, struct task_struct *task,
						       const bool btf)
{
	struct task_val *t;

	if (task && has_pid_filter && !traced_task(task, btf))
		return NULL;
	t = bpf_map_lookup_elem(&tasks, &tid);
	if (t || !task || (!has_pid_filter && !traced_task(task, btf)))
		return t;
	t = lookup_or_init(&tasks, &tid, &zero_task, DROP_TASKS_FULL);
	if (t) {
		t->pid = RD(task, tgid);
		BPF_CORE_READ_INTO(&t->comm, task, comm);
		/* Off CPU since the window opened or the thread was forked
		 * (start_time is CLOCK_MONOTONIC, like bpf_ktime_get_ns);
		 * blocked or runnable is unknown, and there is no stack. */
		t->offcpu_ns += bpf_ktime_get_ns() - since_start(RD(task, start_time));
	}
	return t;
}

/* The run-queue wait a task has had so far, from the scheduler's own
 * accounting (CONFIG_SCHED_INFO, kernel/sched/stats.h): run_delay sums the
 * finished waits, and a wait in progress began at last_queued (set by
 * sched_info_enqueue at wake-up or preemption, cleared by sched_info_arrive,
 * which runs after the sched_switch tracepoint, in context_switch). Both
 * are in rq_clock time, so the wait ends at this CPU's rq->clock, updated
 * by __schedule before the tracepoint; the task switching in is on this
 * CPU's runqueue, which its se.cfs_rq->rq is (set_task_rq, with
 * CONFIG_FAIR_GROUP_SCHED). */
static __always_inline __u64 runq_delay(struct task_struct *task, const bool btf)
{
	__u64 delay = RD(task, sched_info.run_delay), queued = RD(task, sched_info.last_queued);
	__u64 clock = btf ? task->se.cfs_rq->rq->clock : BPF_CORE_READ(task, se.cfs_rq, rq, clock);

	return queued && clock > queued ? delay + clock - queued : delay;
}

static __always_inline void switch_in(struct task_val *t, __u32 tid, struct task_struct *task,
				      __u64 now, const bool btf)
{
	__u64 out, wake, ns, runq;
	bool sched_info = runq_from_sched_info && task;

	if (t->out_ts) {
		out = since_start(t->out_ts);
		if (t->flags & TF_PREEMPTED) {
			ns = now - out;
			t->runq_ns += ns;
		} else {
			if (sched_info) {
				ns = now - out;
				runq = runq_delay(task, btf) - t->runq_delay;
				runq = runq < ns ? runq : ns;
				ns -= runq;
				t->runq_ns += runq;
			} else if ((wake = t->wake_ts) > out && wake <= now) {
				ns = wake - out;
				t->runq_ns += now - wake;
			} else {
				ns = now - out;
			}
			t->offcpu_ns += ns;
		}
		if (ns >= min_block_ns && t->out.tid == tid) {
			t->pending_count++;
			t->pending_ns += ns;
		}
	}
	t->out_ts = 0;
	t->in_ts = now;
}

static __always_inline void on_switch(void *ctx, __u32 prev_tid, bool runnable,
				      __u32 next_tid, struct task_struct *next, const bool btf)
{
	struct task_val *out = NULL, *in = NULL;
	__u64 now;

	if (!enabled)
		return;
	/* the filters first: a switch between untraced threads reads no clock */
	if (prev_tid && traced_current())
		out = current_task();
	if (next_tid)
		in = task_entry_for(next_tid, next, btf);
	if (out) {
		now = bpf_ktime_get_ns();
		switch_out(ctx, out, prev_tid, runnable, now);
		if (in)
			switch_in(in, next_tid, next, now, btf);
	} else if (in) {
		switch_in(in, next_tid, next, bpf_ktime_get_ns(), btf);
	}
}

/* sched_switch's prev_state is the state the task blocks in; preempt says
 * it was preempted while runnable (kernel/sched/core.c, __schedule). */
TP_TWIN(sched_switch, sched_switch,
	on_switch(ctx, RD(prev, pid), preempt || prev_state == 0, RD(next, pid), next, btf),
	bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state)

/* The classic event reports TASK_REPORT_MAX for a preempted task and
 * masks the rest with TASK_REPORT_MAX - 1 (include/trace/events/sched.h,
 * __trace_sched_switch_state): a zero low byte is runnable. */
SEC("tracepoint/sched/sched_switch")
int sched_switch_tp(struct trace_event_raw_sched_switch *ctx)
{
	on_switch(ctx, ctx->prev_pid, (ctx->prev_state & 0xff) == 0, ctx->next_pid, NULL, false);
	return 0;
}

static __always_inline void on_wakeup(__u32 tid)
{
	struct task_val *t;

	if (!enabled)
		return;
	t = bpf_map_lookup_elem(&tasks, &tid);
	if (t && t->out_ts && !(t->flags & TF_PREEMPTED) && !t->wake_ts)
		t->wake_ts = bpf_ktime_get_ns();
}

/* Not loaded when the run-queue wait comes from sched_info (see
 * runq_delay; record_probe.c). With a pid list, the woken task's process is
 * checked first: most wakeups are of other tasks, and the list is cheaper
 * than the thread map. */
TP_TWIN(sched_wakeup, sched_wakeup,
	if (!has_pid_filter || pid_listed(RD(p, tgid))) on_wakeup(RD(p, pid)),
	struct task_struct *p)
SEC("tracepoint/sched/sched_wakeup")
int sched_wakeup_tp(struct trace_event_raw_sched_wakeup_template *ctx)
{
	on_wakeup(ctx->pid);
	return 0;
}

#endif
