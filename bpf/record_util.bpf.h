/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the probe groups: drops, histograms, filters, stacks,
 * the per-thread entry and lock-address learning. */
#ifndef LOCKSCOPE_RECORD_UTIL_BPF_H
#define LOCKSCOPE_RECORD_UTIL_BPF_H

static __always_inline void drop(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &what);

	if (n)
		*n += 1; /* per-CPU slot */
}

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xffffffffULL) << 5; v >>= shift; r |= shift;
	shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
	shift = (v > 0xff) << 3; v >>= shift; r |= shift;
	shift = (v > 0xf) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline __u32 hist_slot(__u64 ns)
{
	__u32 s = log2_u64(ns);

	return s < REC_HIST_SLOTS ? s : REC_HIST_SLOTS - 1;
}

static __always_inline void max_update(__u64 *max, __u64 v)
{
	/* A lost race only under-reports one maximum; no atomics needed. */
	if (v > *max)
		*max = v;
}

/* On a per-CPU map value: plain adds (a program is not migrated while it
 * runs). */
static __always_inline void lat_add(struct lat_stat *s, __u64 ns)
{
	__u32 slot = hist_slot(ns);

	s->count++;
	s->total_ns += ns;
	max_update(&s->max_ns, ns);
	if (slot < REC_HIST_SLOTS)
		s->hist[slot]++;
}

/* Look a key up, inserting a zeroed value first when it is missing; a full
 * map counts one drop of kind what. */
static __always_inline void *lookup_or_init(void *map, const void *key, const void *zero, __u32 what)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(map, key);
	if (!v)
		drop(what);
	return v;
}

static __always_inline bool pid_listed(__u32 tgid)
{
	int i;

	for (i = 0; i < REC_MAX_PIDS; i++) {
		if (i >= nr_filter_pids)
			break;
		if (filter_pid_list[i] == tgid)
			return true;
	}
	return false;
}

static __always_inline bool comm_matches(void)
{
	char comm[16];
	int i;

	bpf_get_current_comm(comm, sizeof(comm));
	for (i = 0; i < 16; i++) {
		if (comm[i] != comm_filter[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

/* The filters of perf lock contention: a process list, a command name and a
 * cgroup (with its descendants), all about the current task. */
static __always_inline bool traced_current(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	if ((__u32)id == 0 || tgid == self_pid)
		return false;
	if (has_pid_filter && !pid_listed(tgid))
		return false;
	if (has_comm_filter && !comm_matches())
		return false;
	if (has_cgroup_filter && bpf_get_current_ancestor_cgroup_id(cgroup_level) != cgroup_id)
		return false;
	return true;
}

/* A pointer's value as a plain number. tp_btf arguments are typed
 * pointers, and the verifier refuses arithmetic such as >> on them; a copy
 * through the stack with a helper yields a scalar. */
static __always_inline __u64 ptr_value(__u64 p)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &p);
	return v;
}

/* Stack id from `map`, tagged with `tag`; a lost stack is counted once. */
static __always_inline __u32 stack_id_from(void *ctx, void *map, __u32 tag)
{
	long id;

	if (shed_stacks >= REC_SHED_STACKS)
		return REC_NO_STACK;
	id = bpf_get_stackid(ctx, map, BPF_F_FAST_STACK_CMP);
	if (id < 0) {
		drop(DROP_STACK_MISSING);
		return REC_NO_STACK;
	}
	return id | tag;
}

static __always_inline __u32 kstack_id(void *ctx)
{
	return stack_id_from(ctx, &stacks, 0);
}

static __always_inline __u32 spin_kstack_id(void *ctx)
{
	return stack_id_from(ctx, &spin_stacks, REC_SPIN_STACK);
}

#include "record_ustack.bpf.h"

/* A copy for the unwinder when it runs (frame pointers are absent from
 * distribution builds of libc and the servers, and a frame-pointer walk
 * through such code gives no sign of having gone wrong, so it is no
 * fallback worth trying first); else, or when the copy cannot be sent,
 * the frame-pointer walk. */
static __always_inline __u32 ustack_id(void *ctx)
{
	struct task_struct *task;
	long id;

	if (!user_stacks)
		return REC_NO_STACK;
	task = bpf_get_current_task_btf();
	if (task->flags & 0x00200000 /* PF_KTHREAD */)
		return REC_NO_STACK;
	if (dwarf_ustacks) {
		id = ustack_copy(task);
		if (id != REC_NO_STACK)
			return id;
	}
	id = bpf_get_stackid(ctx, &stacks, BPF_F_FAST_STACK_CMP | BPF_F_USER_STACK);
	if (id < 0) {
		drop(DROP_USTACK_MISSING);
		return REC_NO_STACK;
	}
	return id;
}

static struct task_val zero_task;

/* The current thread's entry, created on first use. */
static __always_inline struct task_val *current_task(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct task_val *t = bpf_map_lookup_elem(&tasks, &tid);

	if (t)
		return t;
	t = lookup_or_init(&tasks, &tid, &zero_task, DROP_TASKS_FULL);
	if (t) {
		t->pid = id >> 32;
		bpf_get_current_comm(t->comm, sizeof(t->comm));
	}
	return t;
}

static __always_inline __u64 since_start(__u64 ts)
{
	__u64 s = start_ns;

	return ts > s ? ts : s;
}

/* Remember that addr is lock `kind` of inode (dev, ino). */
static __always_inline void learn(__u64 ptr, __u32 dev, __u64 ino, __u32 kind)
{
	struct inode_lock_val v = {}, *old;
	__u64 addr = ptr_value(ptr);
	__u32 zero = 0, slot = (addr >> 6) & (LEARN_CACHE_SLOTS - 1);
	struct learn_cache *c = bpf_map_lookup_elem(&learn_cache, &zero);

	if (!addr)
		return;
	if (c && c->addr[slot] == addr && c->ino[slot] == ino)
		return;
	old = bpf_map_lookup_elem(&inode_locks, &addr);
	if (!old || old->ino != ino || old->dev != dev || old->kind != kind) {
		v.ino = ino;
		v.dev = dev;
		v.kind = kind;
		v.pid = bpf_get_current_pid_tgid() >> 32;
		if (bpf_map_update_elem(&inode_locks, &addr, &v, BPF_ANY))
			drop(DROP_INODES_FULL);
	}
	if (c) {
		c->addr[slot] = addr;
		c->ino[slot] = ino;
	}
}

/* A field of a kernel object: a direct load in tp_btf programs, where the
 * verifier knows the argument types (no helper call), a CO-RE probe read in
 * raw_tp and classic programs. `btf` is a constant at every use, so the
 * other branch is compiled out. */
#define RD(p, f) (btf ? (p)->f : BPF_CORE_READ(p, f))
#define RD2(p, f, g) (btf ? (p)->f->g : BPF_CORE_READ(p, f, g))

static __always_inline void inode_ids(struct inode *inode, __u32 *dev, __u64 *ino, const bool btf)
{
	*dev = RD2(inode, i_sb, s_dev);
	*ino = RD(inode, i_ino);
}

static __always_inline void learn_i_rwsem(struct inode *inode, const bool btf)
{
	__u32 dev;
	__u64 ino;

	inode_ids(inode, &dev, &ino, btf);
	learn((__u64)&inode->i_rwsem, dev, ino, KIND_I_RWSEM);
}

/* The system call a thread is in, from its user registers. */
#if defined(__TARGET_ARCH_x86)
#define syscall_nr(regs) ((__u64)(regs)->orig_ax)
#define syscall_nr_core(regs, btf) ((long)RD(regs, orig_ax))
#elif defined(__TARGET_ARCH_arm64)
#define syscall_nr(regs) ((__u64)(regs)->syscallno)
#define syscall_nr_core(regs, btf) ((long)RD(regs, syscallno))
#else
#define syscall_nr(regs) 0ULL
#define syscall_nr_core(regs, btf) (-1L)
#endif

/* The code path that reached a tp_btf or raw_tp program, without walking
 * the stack: its arguments array sits on the kernel stack, right below the
 * frames of the tracepoint's callers, so the kernel-text words (return
 * addresses) in the FP_WORDS above it identify the path. Kernels that
 * randomize the stack offset per system call move the frames, not the
 * words. 0 when unknown. */
static __always_inline __u64 path_fingerprint(void *ctx)
{
	__u32 zero = 0, i;
	struct stack_window *sw = bpf_map_lookup_elem(&scratch, &zero);
	__u64 fp = 0, v;

	if (!sw || !text_start || bpf_probe_read_kernel(sw, sizeof(*sw), (void *)ptr_value((__u64)ctx)))
		return 0;
	for (i = 0; i < FP_WORDS; i++) {
		v = sw->w[i];
		if (v >= text_start && v < text_end)
			fp = (fp ^ v) * 0x100000001b3ULL;
	}
	return fp;
}

/* Where the current thread is, cheaply: the code path (path_fingerprint,
 * when the arguments are on the stack), its user-space IP and system call,
 * whether it waits for I/O (io_schedule sets in_iowait), whether it holds a
 * journal handle, plus what the caller adds (lock, flags, task state).
 * 0 means "unknown": the stacks are then walked. */
static __always_inline __u64 place_fingerprint(void *ctx, bool use_path, __u64 extra)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u64 path = use_path ? path_fingerprint(ctx) : 1, fp;

	if (!path)
		return 0;
	fp = path ^ (extra * 0x9e3779b97f4a7c15ULL);
	if (regs)
		fp ^= PT_REGS_IP(regs) ^ (syscall_nr(regs) << 48);
	fp ^= (__u64)BPF_CORE_READ_BITFIELD(task, in_iowait) << 62;
	fp ^= (__u64)(task->journal_info != NULL) << 61;
	return fp;
}

/* Kernel and user stack ids at this place: the ones last taken at the same
 * fingerprint, if less than stack_refresh_ns old, else walked now. */
static __always_inline void memo_stacks(void *ctx, struct stack_memo *m, __u64 fp, __u64 now,
					__u32 *kstack, __u32 *ustack, __u32 counter, bool spin)
{
	__u32 i = (fp ^ (fp >> 32)) & (REC_MEMO_SLOTS - 1);

	if (fp && stack_refresh_ns && m->fp[i] == fp && now - m->ts[i] < stack_refresh_ns &&
	    m->kstack[i] != REC_NO_STACK) {
		*kstack = m->kstack[i];
		*ustack = m->ustack[i];
		drop(counter);     /* reused */
		return;
	}
	drop(counter + 1); /* walked */
	*kstack = spin ? spin_kstack_id(ctx) : kstack_id(ctx);
	*ustack = spin || shed_stacks ? REC_NO_STACK : ustack_id(ctx);
	m->fp[i] = fp;
	m->ts[i] = now;
	m->kstack[i] = *kstack;
	m->ustack[i] = *ustack;
}

static struct dio_val zero_dio;

static __always_inline struct dio_val *dio_stats_of(__u32 dev, __u64 ino)
{
	struct inode_key k = { .ino = ino, .dev = dev };

	return lookup_or_init(&dio_stats, &k, &zero_dio, DROP_DIO_FULL);
}

static __always_inline void class_add(struct dio_val *d, __u32 cls, __u64 bytes)
{
	if (cls >= DC_MAX)
		return;
	d->count[cls]++;    /* per-CPU value */
	d->bytes[cls] += bytes;
}

/* Two programs per tracepoint, one body: tp_btf first, raw_tp as the
 * fallback the user side picks when tp_btf is refused. The body sees a
 * constant `btf` that selects how RD() reads. */
#define TP_TWIN(event, name, call, args...)				\
	SEC("tp_btf/" #event) int BPF_PROG(name##_btf, ##args)		\
	{ const bool btf = true; (void)btf; call; return 0; }		\
	SEC("raw_tp/" #event) int BPF_PROG(name##_raw, ##args)		\
	{ const bool btf = false; (void)btf; call; return 0; }

#endif
