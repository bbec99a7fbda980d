/* SPDX-License-Identifier: GPL-2.0 */
/* User stacks of code built without frame pointers, perf --call-graph=dwarf's
 * way: when a user stack is walked, the user registers and up to
 * REC_USTACK_BYTES of the stack above the stack pointer (no further than
 * the thread's stack is readable) go to user space
 * through a ring buffer, and the recorder unwinds them there with the CFI
 * (.eh_frame, .debug_frame) of the mapped files (unwind.c, elfutils libdwfl).
 *
 * Why not CFI tables in BPF: they must be built for every mapped file and
 * loaded into maps before its first sample, and kept in step with dlopen;
 * the unwinder that reads them is a second DWARF interpreter to keep
 * correct. The copy costs one bounded memcpy per walk, and stack walks are
 * already rare (memo_stacks, and the place cache below).
 *
 * The id of a copied stack is REC_DWARF_STACK | a sample number; the same
 * thread at the same user IP and stack pointer is the same call chain, so
 * it reuses the id instead of copying again. */
#ifndef LOCKSCOPE_RECORD_USTACK_BPF_H
#define LOCKSCOPE_RECORD_USTACK_BPF_H

/* Set by the user side when it runs an unwinder on the ring buffer. */
const volatile bool dwarf_ustacks = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} ustack_samples SEC(".maps");

struct ustack_place {
	__u32 tid;
	__u32 pad;
	__u64 ip;
	__u64 sp;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct ustack_place);
	__type(value, __u32);
} ustack_places SEC(".maps");

#define USTACK_CHUNK 4096
#define USTACK_WAKE_BYTES (1u << 20)

/* The user registers at kernel entry, in DWARF register order. */
static __always_inline void copy_user_regs(struct pt_regs *r, __u64 *out)
{
#if defined(__TARGET_ARCH_x86)
	/* x86_64 psABI DWARF numbers 0..16: rax rdx rcx rbx rsi rdi rbp rsp
	 * r8..r15, then the return address column (rip) */
	out[0] = r->ax; out[1] = r->dx; out[2] = r->cx; out[3] = r->bx;
	out[4] = r->si; out[5] = r->di; out[6] = r->bp; out[7] = r->sp;
	out[8] = r->r8; out[9] = r->r9; out[10] = r->r10; out[11] = r->r11;
	out[12] = r->r12; out[13] = r->r13; out[14] = r->r14; out[15] = r->r15;
	out[16] = r->ip;
#elif defined(__TARGET_ARCH_arm64)
	/* AArch64 DWARF numbers: x0..x30, sp (31), then pc */
	int i;

	for (i = 0; i < 31; i++)
		out[i] = r->regs[i];
	out[31] = r->sp;
	out[32] = r->pc;
#endif
}

/* Where each thread's stack stops being readable, learned at the first
 * copy that faulted there (pthread stacks end in the thread's TLS and a
 * guard page; a fault costs more than the copy). Looking the mapping up
 * instead (bpf_find_vma) costs more than the fault: measured. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} ustack_ends SEC(".maps");

/* Bytes from sp to the thread's known stack end, at most REC_USTACK_BYTES. */
static __always_inline __u32 stack_room(__u32 tid, __u64 sp)
{
	__u64 *end = bpf_map_lookup_elem(&ustack_ends, &tid);

	if (!end || *end <= sp)
		return REC_USTACK_BYTES;
	return *end - sp < REC_USTACK_BYTES ? *end - sp : REC_USTACK_BYTES;
}

/* Copies the stack above sp into s->data: whole chunks while they fit in
 * room, then the rest of room, or of the page that faulted (whose end is
 * then learned as the thread's stack end). */
static __always_inline __u32 copy_user_stack(struct ustack_sample *s, __u32 tid, __u64 sp,
					     __u32 room)
{
	__u32 off = 0, rem;
	__u64 end;
	int i;

	for (i = 0; i < REC_USTACK_BYTES / USTACK_CHUNK; i++) {
		if (off > REC_USTACK_BYTES - USTACK_CHUNK)
			break;
		if (off + USTACK_CHUNK <= room &&
		    !bpf_probe_read_user(&s->data[off], USTACK_CHUNK, (void *)(sp + off))) {
			off += USTACK_CHUNK;
			continue;
		}
		if (off + USTACK_CHUNK <= room) { /* faulted: up to that page */
			rem = (USTACK_CHUNK - ((sp + off) & (USTACK_CHUNK - 1))) & (USTACK_CHUNK - 1);
			if (rem && !bpf_probe_read_user(&s->data[off], rem, (void *)(sp + off))) {
				off += rem;
				end = sp + off;
				bpf_map_update_elem(&ustack_ends, &tid, &end, BPF_ANY);
			}
		} else {
			rem = (room - off) & (USTACK_CHUNK - 1);
			if (rem && !bpf_probe_read_user(&s->data[off], rem, (void *)(sp + off)))
				off += rem;
		}
		break;
	}
	return off;
}

/* Unique without atomics: this CPU's count of copies (the per-CPU
 * COUNT_USTACKS_COPIED slot) times 1024, plus the CPU. */
static __always_inline __u32 sample_number(void)
{
	__u32 what = COUNT_USTACKS_COPIED;
	__u64 *n = bpf_map_lookup_elem(&drops, &what), seq = 0;

	if (n)
		seq = (*n)++;
	return (__u32)(seq << 10) | (bpf_get_smp_processor_id() & 1023);
}

/* A copied user stack's id, REC_NO_STACK when none could be sent (the
 * caller then walks the frame pointers). */
static __always_inline __u32 ustack_copy(struct task_struct *task)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct ustack_place place = {};
	struct ustack_sample *s;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 *known, sid;

	if (!regs)
		return REC_NO_STACK;
	place.tid = (__u32)id;
	place.ip = PT_REGS_IP(regs);
	place.sp = PT_REGS_SP(regs);
	known = bpf_map_lookup_elem(&ustack_places, &place);
	if (known)
		return *known;
	s = bpf_ringbuf_reserve(&ustack_samples, sizeof(*s), 0);
	if (!s) {
		drop(DROP_USTACK_RINGBUF);
		return REC_NO_STACK;
	}
	sid = REC_DWARF_STACK | (sample_number() & REC_DWARF_ID_MASK);
	s->id = sid;
	s->pid = id >> 32;
	s->tid = (__u32)id;
	copy_user_regs(regs, s->regs);
	s->size = copy_user_stack(s, place.tid, place.sp, stack_room(place.tid, place.sp));
	/* the unwinder polls; a wakeup per copy would cost a context switch */
	bpf_ringbuf_submit(s, bpf_ringbuf_query(&ustack_samples, BPF_RB_AVAIL_DATA) > USTACK_WAKE_BYTES ?
			   BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	bpf_map_update_elem(&ustack_places, &place, &sid, BPF_ANY);
	return sid;
}

#endif
