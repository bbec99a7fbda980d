/* SPDX-License-Identifier: GPL-2.0 */
/* Stacks as strings: kernel frames through kallsyms, user frames through
 * each process's ELF symbols (symbolize.h). Folded lines for flame graphs
 * are the analyzer's (report/flame/folded.py), built from these stacks. */
#ifndef LOCKSCOPE_RECORD_STACKS_H
#define LOCKSCOPE_RECORD_STACKS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "record.h"
#include "resolve/unwind.h"

struct record_bpf;
struct ksyms;
struct usyms;
struct dwarf_stacks;

#define FRAME_LEN 160

struct frames {
	int n;
	char f[REC_MAX_STACK_DEPTH][FRAME_LEN];   /* leaf first */
};

struct rec_stacks {
	struct record_bpf *skel;
	struct ksyms *ksyms;
	struct usyms *usyms;
	struct frames **kcache;     /* by kernel stack id */
	size_t kcache_len;
	/* long waits' task stacks (REC_TASK_STACK ids: hashes), open addressing */
	struct frames **tcache;
	__u32 *tcache_ids;
	size_t tcache_len;
	int ksyms_err;              /* errno of symbolize_kernel_load, 0 if loaded */
	/* user stacks unwound from copies (ids with REC_DWARF_STACK), filled
	 * by the unwinder's thread; usyms is shared with it under lock */
	struct unwinder *unwinder;
	struct dwarf_stacks *dwarf;
	struct unwind_stats unwind; /* final, once the unwinder stopped */
	int depth;                  /* frames kept per unwound stack */
	pthread_mutex_t lock;
};

/* Before load: whether the kernel side copies user stacks for the unwinder,
 * and the size of its ring buffer. 0 or a negative errno. */
int stacks_configure(struct record_bpf *skel, bool user_stacks);

int stacks_init(struct rec_stacks *s, struct record_bpf *skel, size_t max_stacks);
void stacks_free(struct rec_stacks *s);

/* Unwinds what is still queued and stops the unwinder: at the end of the
 * recording, before the stacks are read. */
void stacks_unwind_finish(struct rec_stacks *s);

/* Reads /proc/PID/maps and the ELF files now, while pid still lives. */
void stacks_add_pid(struct rec_stacks *s, int pid);

/* Kernel stack: the tracing machinery's own frames (BPF program,
 * __traceiter_*, perf_trace_*) are trimmed from the leaf end. NULL when the
 * id is REC_NO_STACK or gone. The result is cached: do not free. */
const struct frames *stacks_kernel(struct rec_stacks *s, __u32 id);

/* The machinery prefixes trimmed by stacks_kernel, as a JSON array. */
struct json_out;
void stacks_machinery_json(struct json_out *j);

/* User stack of pid into out; false when none. */
bool stacks_user(struct rec_stacks *s, __u32 id, int pid, struct frames *out);

/* Name of a global kernel object at addr (kallsyms data symbol), or NULL. */
const char *stacks_data_name(struct rec_stacks *s, __u64 addr, char *buf, size_t len);

/* A lock holder's snapshot stack (the holders group's own stack map, by
 * hash), symbolized, leaf first; its frame count. */
int stacks_holder(struct rec_stacks *s, __u32 hash, struct frames *out);

#endif
