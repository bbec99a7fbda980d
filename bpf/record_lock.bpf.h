/* SPDX-License-Identifier: GPL-2.0 */
/* Lock waits from lock:contention_begin/end (include/trace/events/lock.h).
 *
 * Slots: spinning waits use a per-CPU slot, sleeping waits (rwsem, mutex,
 * rt, percpu-rwsem) a per-thread slot, because spinlock contention happens
 * inside sleeping-lock slow paths. A mutex emits several begins for one
 * wait (optimistic spin, then sleep: kernel/locking/mutex.c,
 * __mutex_lock_common): the first begin's time is kept, the last begin's
 * flags are reported, and the extra begins are counted as repeats. */
#ifndef LOCKSCOPE_RECORD_LOCK_BPF_H
#define LOCKSCOPE_RECORD_LOCK_BPF_H

/* kernel/locking/rwsem.c: count bit 0 is RWSEM_WRITER_LOCKED, readers are
 * counted from bit 8 (RWSEM_READER_SHIFT), bit 63 is RWSEM_FLAG_READFAIL. */
#define RWSEM_WRITER_LOCKED 1UL
#define RWSEM_READER_MASK 0x7fffffffffffff00UL

static __always_inline bool spin_slot_flags(__u32 flags)
{
	return (flags & bits.lcb_spin) && !(flags & bits.lcb_mutex);
}

static __always_inline bool plain_rwsem(__u32 flags)
{
	return (flags & (bits.lcb_read | bits.lcb_write)) &&
	       !(flags & (bits.lcb_spin | bits.lcb_percpu | bits.lcb_mutex | bits.lcb_rt));
}

/* Who holds a rwsem at the moment a waiter queues: read the count word. */
static __always_inline __u32 rwsem_state(__u64 lock, __u32 flags)
{
	struct rw_semaphore *sem = (void *)lock;
	long count;

	if (!plain_rwsem(flags))
		return 0;
	count = BPF_CORE_READ(sem, count.counter);
	if (count & RWSEM_WRITER_LOCKED)
		return LS_EXCL;
	if (count & RWSEM_READER_MASK)
		return LS_READERS;
	return 0;
}

static struct lock_val zero_lock;

static __always_inline void count_if_enabled(__u32 what)
{
	if (enabled)
		drop(what);
}

static __always_inline void lock_account(__u64 lock, __u32 flags, __u32 kstack, __u32 ustack,
					 __u32 pid, __u64 ts, __u32 state, __u32 repeats, int ret)
{
	struct lock_key key = {
		.addr = lock, .flags = flags, .kstack = kstack, .ustack = ustack, .pid = pid,
	};
	__u64 ns = bpf_ktime_get_ns() - ts;
	struct lock_val *v;
	__u32 slot = hist_slot(ns);

	/* Slots are filled from attach on, so that a wait in flight when the
	 * window opens has its begin; only waits begun inside it count. */
	if (!start_ns || ts < start_ns)
		return;
	v = lookup_or_init(&lock_stats, &key, &zero_lock, DROP_LOCKS_FULL);
	if (!v)
		return;
	/* per-CPU value: plain adds */
	v->count++;
	v->total_ns += ns;
	max_update(&v->max_ns, ns);
	if (slot < REC_HIST_SLOTS)
		v->hist[slot]++;
	if (ret < 0)
		v->interrupted++;
	v->repeats += repeats;
	if (state & LS_EXCL) {
		v->excl_count++;
		v->excl_ns += ns;
	} else if (state & LS_READERS) {
		v->reader_count++;
		v->reader_ns += ns;
	}
}

/* The kernel stack of a spinning wait: the one last walked on this CPU at
 * the same code path and flags, if less than stack_refresh_ns old. */
static __always_inline __u32 spin_stack(void *ctx, bool on_stack, __u32 flags, __u64 now)
{
	__u64 fp = on_stack ? path_fingerprint(ctx) : 0;
	__u32 slot;
	struct path_cache_entry *e;

	if (!fp || !stack_refresh_ns)
		return spin_kstack_id(ctx);
	fp ^= (__u64)flags << 56;
	slot = (fp ^ (fp >> 29)) & (PATH_CACHE_SLOTS - 1);
	e = bpf_map_lookup_elem(&path_cache, &slot);
	if (!e)
		return spin_kstack_id(ctx);
	if (e->fp == fp && now - e->ts < stack_refresh_ns && e->kstack != REC_NO_STACK) {
		drop(COUNT_LOCK_STACKS_REUSED);
		return e->kstack;
	}
	drop(COUNT_LOCK_STACKS_WALKED);
	e->kstack = spin_kstack_id(ctx);
	e->fp = fp;
	e->ts = now;
	return e->kstack;
}

static __always_inline void on_contention_begin(void *ctx, __u64 lock, __u32 flags, bool on_stack)
{
	struct task_val *t;
	__u64 now;
	__u32 zero = 0;

	if (!traced_current())
		return;
	now = bpf_ktime_get_ns();
	if (spin_slot_flags(flags)) {
		struct spin_slot *s = bpf_map_lookup_elem(&spin_slots, &zero);

		if (!s)
			return;
		if (s->lock) {
			if (s->lock == lock) {
				count_if_enabled(DROP_REPEAT_BEGIN);
			} else {
				s->nested++;
				count_if_enabled(DROP_NESTED_BEGIN);
			}
			return;
		}
		s->lock = lock;
		s->ts = now;
		s->flags = flags;
		s->pid = bpf_get_current_pid_tgid() >> 32;
		s->state = 0;
		s->nested = 0;
		/* Spinning happens inside the kernel, often with interrupts
		 * off, so it must stay cheap: a shallow kernel stack, cached
		 * per CPU by code path, and no user stack. */
		s->kstack = spin_stack(ctx, on_stack, flags, now);
		s->ustack = REC_NO_STACK;
		return;
	}

	t = current_task();
	if (!t)
		return;
	if (t->lock) {
		if (t->lock == lock) {
			t->lock_repeats++;
			t->lock_flags = flags;
			count_if_enabled(DROP_REPEAT_BEGIN);
		} else {
			t->lock_nested++;
			count_if_enabled(DROP_NESTED_BEGIN);
		}
		return;
	}
	t->lock_state = rwsem_state(lock, flags);
	t->lock_ts = now;
	t->lock_flags = flags;
	t->lock_repeats = 0;
	t->lock_nested = 0;
	/* Same thread, code path, lock, flags, user IP and system call: the
	 * same stacks, reused for stack_refresh_ns. */
	memo_stacks(ctx, &t->lock_memo, place_fingerprint(ctx, on_stack, lock ^ flags), now,
		    &t->lock_kstack, &t->lock_ustack, COUNT_LOCK_STACKS_REUSED, false);
	t->lock = lock;
}

static __always_inline void on_contention_end(void *ctx, __u64 lock, int ret)
{
	__u32 zero = 0, tid;
	struct spin_slot *s = bpf_map_lookup_elem(&spin_slots, &zero);
	struct task_val *t;

	if (s && s->lock) {
		if (s->lock == lock) {
			lock_account(lock, s->flags, s->kstack, s->ustack, s->pid, s->ts,
				     s->state, 0, ret);
			s->lock = 0;
			return;
		}
		if (s->nested) {
			s->nested--;
			return;
		}
	}
	tid = (__u32)bpf_get_current_pid_tgid();
	t = bpf_map_lookup_elem(&tasks, &tid);
	if (t && t->lock) {
		if (t->lock == lock) {
			lock_account(lock, t->lock_flags, t->lock_kstack, t->lock_ustack, t->pid,
				     t->lock_ts, t->lock_state, t->lock_repeats, ret);
			t->lock = 0;
			return;
		}
		if (t->lock_nested) {
			t->lock_nested--;
			return;
		}
	}
	if (enabled && traced_current())
		drop(DROP_END_WITHOUT_BEGIN);
}

TP_TWIN(contention_begin, contention_begin,
	on_contention_begin(ctx, (__u64)lock, flags, true), void *lock, unsigned int flags)
TP_TWIN(contention_end, contention_end,
	on_contention_end(ctx, (__u64)lock, ret), void *lock, int ret)

SEC("tracepoint/lock/contention_begin")
int contention_begin_tp(struct trace_event_raw_contention_begin *ctx)
{
	on_contention_begin(ctx, (__u64)ctx->lock_addr, ctx->flags, false);
	return 0;
}

SEC("tracepoint/lock/contention_end")
int contention_end_tp(struct trace_event_raw_contention_end *ctx)
{
	on_contention_end(ctx, (__u64)ctx->lock_addr, ctx->ret);
	return 0;
}

#endif
