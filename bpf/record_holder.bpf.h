/* SPDX-License-Identifier: GPL-2.0 */
/* What a sleeping lock's holder was doing while traced threads waited for
 * it. lock:contention_begin/end keep a small table of the locks traced
 * threads are waiting on, with their number of waiters; a timer on every CPU
 * (a perf cpu-clock event, every holder_period_ns) looks at each such lock:
 * reads the owner task from the lock's owner field, its state (on CPU,
 * runnable, blocked) and its kernel stack, and adds waiters x the time since
 * the lock's last snapshot (at most a period) to that snapshot. So each
 * snapshot weighs the wait it stands for, and the holder is seen at times
 * spread over the waits. (A snapshot taken when a wait begins
 * is biased: in a convoy a thread queues again just after its own release,
 * when the next holder has only begun its critical section.)
 *
 * Its own probe group ("holders": programs holder_begin/holder_end on the lock
 * tracepoints, holder_tick on the timer, own maps), so it can be turned off
 * or shed alone and its cost is its own. Every snapshot that could not be
 * taken is counted in holder_counts (enum rec_holder_count). */
#ifndef LOCKSCOPE_RECORD_HOLDER_BPF_H
#define LOCKSCOPE_RECORD_HOLDER_BPF_H

/* Set before load: the timer's period. */
const volatile __u64 holder_period_ns = 2000000;

/* kernel/locking/rwsem.c: the low bits of rw_semaphore::owner are
 * RWSEM_READER_OWNED (bit 0) and RWSEM_NONSPINNABLE (bit 1),
 * RWSEM_OWNER_FLAGS_MASK; rwsem_owner() masks them off. A writer stores
 * current there after taking the count (rwsem_set_owner); a reader leaves
 * itself with RWSEM_READER_OWNED set, a hint only ("take it with a grain of
 * salt": the readers may have left, and other readers are not named). */
#define RWSEM_READER_OWNED_BIT 1UL
#define RWSEM_OWNER_FLAGS 3UL
/* kernel/locking/mutex.c: MUTEX_FLAG_WAITERS, _HANDOFF and _PICKUP are the
 * low three bits of mutex::owner (MUTEX_FLAGS 0x07, __owner_task()). */
#define MUTEX_OWNER_FLAGS 7UL

/* struct task_struct::state before it became __state */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

/* Locks traced threads wait on now. */

/* A global array, not a map: indexed in bounded loops without a helper call. */
struct holder_lock holder_locks[REC_HOLDER_LOCKS];

/* A waiter's slot, per thread: the wait in progress, its table entry and
 * who woke it (the releaser, group "releasers"). */
struct holder_slot {
	__u64 lock;
	__u64 ts;
	__u32 idx;
	__u32 waker_kstack;
	__u32 waker_pid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct holder_slot);
} holder_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct holder_key);
	__type(value, struct holder_val);
} holder_stats SEC(".maps");

/* Owner stacks by a hash of their frames (bpf_get_task_stack copies frames
 * and gives no stack id). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct holder_frames);
} holder_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct holder_frames);
} holder_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HC_MAX);
	__type(key, __u32);
	__type(value, __u64);
} holder_counts SEC(".maps");

static __always_inline void holder_count(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&holder_counts, &what);

	if (n)
		*n += 1; /* per-CPU slot */
}

/* ---- waiters: the table of contended locks ---- */

static __always_inline bool holder_lock_kind(__u32 flags)
{
	if (flags & bits.lcb_mutex)
		return !(flags & bits.lcb_rt);
	return plain_rwsem(flags);
}

/* The table entry of lock, claimed when new; REC_HOLDER_LOCKS when full. */
static __always_inline __u32 holder_join(__u64 lock, __u32 flags)
{
	struct holder_lock *e;
	__u32 i, free = REC_HOLDER_LOCKS;

	for (i = 0; i < REC_HOLDER_LOCKS; i++) {
		e = &holder_locks[i];
		if (e->lock == lock) {
			__sync_fetch_and_add(&e->waiters, 1);
			return i;
		}
		if (free == REC_HOLDER_LOCKS && (__s64)e->waiters <= 0)
			free = i;
	}
	if (free >= REC_HOLDER_LOCKS)
		return REC_HOLDER_LOCKS;
	e = &holder_locks[free];
	{
		__u64 old = e->lock;

		if ((__s64)e->waiters > 0 || __sync_val_compare_and_swap(&e->lock, old, lock) != old)
			return REC_HOLDER_LOCKS; /* taken by another CPU meanwhile */
	}
	e->flags = flags;
	__sync_fetch_and_add(&e->waiters, 1);
	return free;
}

static __always_inline void on_holder_begin(__u64 lock, __u32 flags)
{
	struct holder_slot *s;

	if (!enabled || !holder_lock_kind(flags) || !traced_current())
		return;
	s = bpf_task_storage_get(&holder_slots, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s) {
		holder_count(HC_MAP_FULL);
		return;
	}
	/* A mutex emits several begins for one wait; a nested wait keeps the
	 * outer one. */
	if (s->lock)
		return;
	s->idx = holder_join(lock, flags);
	if (s->idx >= REC_HOLDER_LOCKS) {
		holder_count(HC_TABLE_FULL);
		return;
	}
	s->lock = lock;
	s->ts = bpf_ktime_get_ns();
	s->waker_kstack = REC_NO_STACK;
	holder_count(HC_WAITS);
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct holder_key);
	__type(value, struct holder_val);
} releaser_stats SEC(".maps");

static struct holder_val zero_releaser;

/* A wait that ended after a wake-up: who woke it, where (on an rwsem or
 * mutex hand-off the waker is the releaser: kernel/locking/rwsem.c
 * rwsem_wake() and kernel/locking/mutex.c __mutex_unlock_slowpath() wake the
 * waiter from the unlock), and how long it had waited. */
static __always_inline void releaser_add(struct holder_slot *s, __u64 lock)
{
	struct holder_key k = { .lock = lock, .kstack = s->waker_kstack,
				.owner_pid = s->waker_pid };
	struct holder_val *v = bpf_map_lookup_elem(&releaser_stats, &k);

	if (!v) {
		bpf_map_update_elem(&releaser_stats, &k, &zero_releaser, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&releaser_stats, &k);
	}
	if (!v) {
		holder_count(HC_MAP_FULL);
		return;
	}
	v->count++;  /* per-CPU value */
	v->wait_ns += bpf_ktime_get_ns() - s->ts;
}

static __always_inline void on_holder_end(__u64 lock)
{
	struct holder_slot *s;
	struct holder_lock *e;
	__u32 idx;

	s = bpf_task_storage_get(&holder_slots, bpf_get_current_task_btf(), 0, 0);
	if (!s || !s->lock || s->lock != lock)
		return;
	idx = s->idx;
	s->lock = 0;
	if (s->waker_kstack != REC_NO_STACK && start_ns && s->ts >= start_ns)
		releaser_add(s, lock);
	if (idx >= REC_HOLDER_LOCKS)
		return;
	e = &holder_locks[idx];
	if (e->lock == lock)
		__sync_fetch_and_add(&e->waiters, -1);
}

TP_TWIN(contention_begin, holder_begin,
	on_holder_begin((__u64)lock, flags), void *lock, unsigned int flags)
TP_TWIN(contention_end, holder_end,
	on_holder_end((__u64)lock), void *lock, int ret)

/* When this CPU last walked a waker's stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} releaser_clock SEC(".maps");

/* The waker of a thread in a holder slot: its kernel stack, at most one
 * walk per CPU per holder period (the other wakes of waiters are counted,
 * not kept). Only tp_btf, where the woken task is a trusted pointer for its
 * task storage. */
SEC("tp_btf/sched_waking")
int BPF_PROG(releaser_wake_btf, struct task_struct *p)
{
	struct holder_slot *s;
	__u32 zero = 0;
	__u64 *last, now;

	/* Most wake-ups are of other processes: the pid list is cheaper than
	 * the task storage. */
	if (!enabled || (has_pid_filter && !pid_listed(p->tgid)))
		return 0;
	s = bpf_task_storage_get(&holder_slots, p, 0, 0);
	if (!s || !s->lock)
		return 0;
	last = bpf_map_lookup_elem(&releaser_clock, &zero);
	now = bpf_ktime_get_ns();
	if (!last || now - *last < holder_period_ns) {
		holder_count(HC_WAKE_UNSAMPLED);
		return 0;
	}
	*last = now;
	s->waker_kstack = kstack_id(ctx);
	s->waker_pid = bpf_get_current_pid_tgid() >> 32;
	return 0;
}

/* ---- the timer: snapshots of the owners ---- */

/* The owner task of a writer-held rwsem or a mutex, 0 when there is none
 * to name: then *state and *why (a counter) say why not. */
static __always_inline __u64 lock_owner(__u64 lock, __u32 flags, __u32 *state, __u32 *why)
{
	struct rw_semaphore *sem = (void *)lock;
	struct mutex *mtx = (void *)lock;
	long count, owner;

	if (flags & bits.lcb_mutex) {
		if (!bpf_core_field_exists(mtx->owner)) { /* PREEMPT_RT: an rt_mutex */
			*why = HC_NO_LAYOUT;
			return 0;
		}
		owner = BPF_CORE_READ(mtx, owner.counter);
		if (!(owner & ~MUTEX_OWNER_FLAGS))
			*why = HC_NO_OWNER;
		return owner & ~MUTEX_OWNER_FLAGS;
	}
	if (!bpf_core_field_exists(sem->owner)) { /* PREEMPT_RT: rwbase_rt */
		*why = HC_NO_LAYOUT;
		return 0;
	}
	count = BPF_CORE_READ(sem, count.counter);
	owner = BPF_CORE_READ(sem, owner.counter);
	if (!(count & RWSEM_WRITER_LOCKED)) {
		if (count & RWSEM_READER_MASK) {
			*state = HS_READER_OWNED;
			*why = HC_READER_OWNED;
		} else {
			*why = HC_NO_OWNER; /* being handed over */
		}
		return 0;
	}
	/* Writer-locked, but the owner not yet stored (or a stale reader hint). */
	if ((owner & RWSEM_READER_OWNED_BIT) || !(owner & ~RWSEM_OWNER_FLAGS)) {
		*why = HC_NO_OWNER;
		return 0;
	}
	return owner & ~RWSEM_OWNER_FLAGS;
}

static __always_inline __u32 owner_task_state(struct task_struct *task)
{
	struct task_struct___old *old = (void *)task;

	if (bpf_core_field_exists(task->__state))
		return BPF_CORE_READ(task, __state);
	return BPF_CORE_READ(old, state);
}

/* Owner stacks are shed with the others under --max-overhead (stacks go
 * before whole groups): the snapshots then keep states only. */
static __always_inline bool holder_stacks_shed(void)
{
	if (shed_stacks < REC_SHED_STACKS)
		return false;
	holder_count(HC_STACKS_SHED);
	return true;
}

/* Keeps the frames in buf (n bytes) by content hash; the hash is the id. */
static __always_inline __u32 keep_frames(struct holder_frames *buf, long n)
{
	__u32 hash = 2166136261u, i;
	long err;

	if (n <= 0) {
		holder_count(HC_STACK_FAILED);
		return REC_NO_STACK;
	}
	for (i = 0; i < REC_HOLDER_DEPTH; i++) {
		if (i * sizeof(__u64) >= n)
			buf->ip[i] = 0;
		hash = (hash ^ (__u32)buf->ip[i] ^ (__u32)(buf->ip[i] >> 32)) * 16777619u;
	}
	if (hash == REC_NO_STACK)
		hash--;
	/* -EEXIST: another CPU stored the same frames first */
	if (!bpf_map_lookup_elem(&holder_stacks, &hash) &&
	    (err = bpf_map_update_elem(&holder_stacks, &hash, buf, BPF_NOEXIST)) && err != -17)
		holder_count(HC_MAP_FULL);
	return hash;
}

/* The kernel stack of an owner that is off CPU. It needs a trusted task
 * pointer, which bpf_task_from_pid (a kfunc) gives; the _raw variant of the
 * group does without it and records the state alone. */
static __always_inline __u32 owner_stack(__u32 tid, __u64 owner, const bool btf)
{
	struct holder_frames *buf;
	struct task_struct *task;
	__u32 zero = 0;
	long n;

	if (!btf || !bpf_task_from_pid) { /* a weak kfunc: 0 when missing */
		holder_count(HC_NO_STACK_SUPPORT);
		return REC_NO_STACK;
	}
	if (holder_stacks_shed())
		return REC_NO_STACK;
	buf = bpf_map_lookup_elem(&holder_scratch, &zero);
	if (!buf)
		return REC_NO_STACK;
	task = bpf_task_from_pid(tid);
	if (!task) {
		holder_count(HC_OWNER_GONE);
		return REC_NO_STACK;
	}
	/* The same thread id may name a new task by now. */
	if ((__u64)task != owner) {
		bpf_task_release(task);
		holder_count(HC_OWNER_GONE);
		return REC_NO_STACK;
	}
	n = bpf_get_task_stack(task, buf->ip, sizeof(buf->ip), 0);
	bpf_task_release(task);
	return keep_frames(buf, n);
}

/* The stack of the task this timer interrupted: the owner, running here. */
static __always_inline __u32 running_stack(void *ctx)
{
	struct holder_frames *buf;
	__u32 zero = 0;

	if (holder_stacks_shed())
		return REC_NO_STACK;
	buf = bpf_map_lookup_elem(&holder_scratch, &zero);
	if (!buf)
		return REC_NO_STACK;
	return keep_frames(buf, bpf_get_stack(ctx, buf->ip, sizeof(buf->ip), 0));
}

/* About one snapshot per period and lock, whichever CPU gets here first
 * (the CPUs' timers need not be in phase). Returns the time the snapshot
 * stands for: since the last one, at most a period; 0 when not claimed. */
static __always_inline __u64 claim(struct holder_lock *e, __u64 now)
{
	__u64 last = e->last_ts;

	if (now - last < holder_period_ns / 2)
		return 0;
	if (__sync_val_compare_and_swap(&e->last_ts, last, now) != last)
		return 0;
	return now - last < holder_period_ns ? now - last : holder_period_ns;
}

static struct holder_val zero_holder;

static __always_inline void holder_add(struct holder_key *k, __s64 waiters, __u64 span)
{
	struct holder_val *v = bpf_map_lookup_elem(&holder_stats, k);

	if (!v) {
		bpf_map_update_elem(&holder_stats, k, &zero_holder, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&holder_stats, k);
	}
	if (!v) {
		holder_count(HC_MAP_FULL);
		return;
	}
	v->count++;  /* per-CPU value */
	v->wait_ns += (__u64)waiters * span;
	holder_count(HC_SAMPLED);
}

/* A running owner is sampled by the timer of its own CPU, where it is the
 * interrupted task (the stack of a task running elsewhere cannot be walked:
 * arch/x86/kernel/unwind_orc.c: __unwind_start() starts a task that is not
 * current from its saved task->thread.sp, stale while it runs). */
static __always_inline void snapshot_lock(void *ctx, struct holder_lock *e, __u64 now,
					  __u64 current, const bool btf)
{
	struct holder_key k = { .lock = e->lock, .kstack = REC_NO_STACK };
	__s64 waiters = (__s64)e->waiters;
	struct task_struct *task;
	__u64 owner, span;
	__u32 state = HS_UNKNOWN, why = HC_MAX;

	if (waiters <= 0)
		return;
	if (e->flags & bits.lcb_mutex)
		k.flags |= HF_MUTEX;
	owner = lock_owner(k.lock, e->flags, &state, &why);
	task = (void *)owner;
	/* Without on_cpu (no CONFIG_SMP) only the current task runs. */
	if (owner && owner != current && bpf_core_field_exists(task->on_cpu) &&
	    BPF_CORE_READ(task, on_cpu))
		return; /* running on another CPU: that CPU's timer takes it */
	span = claim(e, now);
	if (!span)
		return;
	if (why < HC_MAX)
		holder_count(why);
	k.state = state;
	if (owner) {
		k.owner_tid = BPF_CORE_READ(task, pid);
		k.owner_pid = BPF_CORE_READ(task, tgid);
		if (BPF_CORE_READ_BITFIELD_PROBED(task, in_iowait))
			k.flags |= HF_IOWAIT;
		if (owner == current) {
			k.state = HS_ON_CPU;
			k.kstack = running_stack(ctx);
		} else {
			k.state = owner_task_state(task) == 0 ? HS_RUNQUEUE : HS_BLOCKED;
			k.kstack = owner_stack(k.owner_tid, owner, btf);
		}
	}
	holder_add(&k, waiters, span);
}

static __always_inline void on_holder_tick(void *ctx, const bool btf)
{
	__u64 now, current;
	struct holder_lock *e;
	__u32 i;

	if (!enabled || !start_ns)
		return;
	now = bpf_ktime_get_ns();
	current = bpf_get_current_task();
	for (i = 0; i < REC_HOLDER_LOCKS; i++) {
		e = &holder_locks[i];
		if ((__s64)e->waiters > 0)
			snapshot_lock(ctx, e, now, current, btf);
	}
}

/* Both variants are perf_event programs; the suffix ties each to the
 * group's attach kind, so that the loader picks the one matching it. */
SEC("perf_event")
int holder_tick_btf(void *ctx)
{
	on_holder_tick(ctx, true);
	return 0;
}

SEC("perf_event")
int holder_tick_raw(void *ctx)
{
	on_holder_tick(ctx, false);
	return 0;
}

#endif
