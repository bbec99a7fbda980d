// SPDX-License-Identifier: GPL-2.0
/* The probe-group table and the loader: open -> configure -> choose one
 * attach kind per group -> load -> attach. A kind that the kernel refuses
 * (at load or at attach) is marked failed for its group only, and the
 * object is loaded again with that group's next kind, or without it. */
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "record.h"
#include "record.skel.h"
#include "attach/alternatives.h"
#include "kernel_btf.h"
#include "setup/fsdetect.h"
#include "setup/kallsyms_snapshot.h"
#include "attach/probe.h"
#include "attach/probe_cache.h"
#include "setup/tpfields.h"
#include "setup/tpfmt.h"
#include "attach/tplink.h"
#include "msg.h"
#include "setup/syscall_names.h"
#include "setup/privileges.h"
#include "setup/atomics.h"
#include <linux/capability.h>

#define K(kind) (1u << ATTACH_##kind)
#define TRACEPOINT_KINDS (K(TP_BTF) | K(RAW_TP) | K(TRACEPOINT))
#define BTF_KINDS (K(TP_BTF) | K(RAW_TP))
#define TRACEFS "/sys/kernel/tracing"

const char *const probe_attach_names[NR_ATTACH] = {
	"tp_btf", "raw_tp", "tracepoint", "fentry", "kprobe",
};

/* Program name suffix per kind, as named in the kern/ fragments; the
 * function-return programs of a kind have their own. */
/* What group g attaches to with kind: an alternative's events (alternatives.c),
 * else its own tracepoints. */
static const char *const *group_needs(int g, int kind)
{
	return alternatives_needs(g, kind) ?: probe_groups[g].tracepoints;
}

static const char *const suffixes[NR_ATTACH] = { "_btf", "_raw", "_tp", "_fentry", "_kprobe" };
static const char *const exit_suffixes[NR_ATTACH] = { NULL, NULL, NULL, "_fexit", "_kretprobe" };

const struct rec_group_def probe_groups[NR_GROUPS] = {
	[GROUP_LOCK] = { "lock", { "lock:contention_begin", "lock:contention_end" },
		{ "contention_begin", "contention_end" }, TRACEPOINT_KINDS, false,
		"no lock waits at all", NULL, .kept = true },
	/* Where lock:contention_* are absent (before 5.19): the sleeping locks'
	 * slow paths, entered only when the fast path found the lock taken
	 * (kernel/locking/rwsem.c rwsem_down_write_slowpath and
	 * rwsem_down_read_slowpath, from 5.3; kernel/locking/mutex.c
	 * __mutex_lock_slowpath and its killable and interruptible twins, from
	 * 4.10). kern/lock_slowpath.bpf.inc. */
	[GROUP_LOCK_SLOWPATH] = { "lock_slowpath", { "rwsem_down_write_slowpath",
		"rwsem_down_read_slowpath", "__mutex_lock_slowpath", "__mutex_lock_killable_slowpath",
		"__mutex_lock_interruptible_slowpath" },
		{ "rwsem_write_wait", "rwsem_read_wait", "mutex_wait", "mutex_killable_wait",
		  "mutex_intr_wait" }, K(FENTRY) | K(KPROBE), false,
		"no lock waits at all", NULL, "lock", .kept = true },
	/* fentry, kprobe: on the functions the tracepoints fire in (alternatives.c) */
	[GROUP_DIO] = { "dio", { "iomap:iomap_dio_rw_begin", "iomap:iomap_dio_complete" },
		{ "dio_rw_begin", "dio_complete" }, TRACEPOINT_KINDS | K(FENTRY) | K(KPROBE), false,
		"no DIO write classes, counts or latency; i_rwsem not learned from direct I/O", NULL,
		.kept = true },
	[GROUP_DIO_MAP] = { "dio_map", { "iomap:iomap_iter_dstmap" }, { "dstmap" },
		TRACEPOINT_KINDS, false, "DIO writes not classified as hole/unwritten/mapped", NULL },
	[GROUP_XFS_ILOCK] = { "xfs_ilock", { "xfs:xfs_ilock" }, { "xfs_ilock" }, BTF_KINDS, false,
		"XFS ILOCK and MMAPLOCK waits not attributed to files", "xfs" },
	[GROUP_XFS_ALLOC] = { "xfs_alloc", { "xfs:xfs_iomap_alloc", "xfs:xfs_unwritten_convert" },
		{ "xfs_iomap_alloc", "xfs_unwritten_convert" }, BTF_KINDS, false,
		"XFS allocating writes and unwritten-extent conversions not counted", "xfs" },
	[GROUP_XFS_BUFFERED] = { "xfs_buffered", { "xfs:xfs_file_buffered_write" },
		{ "xfs_buffered_write" }, BTF_KINDS, false,
		"XFS buffered-write i_rwsem learned only from write syscalls", "xfs" },
	[GROUP_EXT4_MAP] = { "ext4_map", { "ext4:ext4_ext_map_blocks_exit" }, { "ext4_map_exit" },
		BTF_KINDS, false, "ext4 i_data_sem waits not attributed to files", "ext4" },
	/* classic tracepoints: their records carry the extent status and flags
	 * already decoded from the kernel's structures */
	[GROUP_EXT4_EXTENT] = { "ext4_extent", { "ext4:ext4_es_lookup_extent_exit",
		"ext4:ext4_ext_map_blocks_exit", "ext4:ext4_allocate_blocks" },
		{ "ext4_es_lookup", "ext4_map_state", "ext4_alloc" }, K(TRACEPOINT), false,
		"ext4 DIO writes classified from iomap_iter_dstmap only, which reports unwritten "
		"extents a write converts like holes; ext4 allocating writes not counted", "ext4" },
	[GROUP_EXT4_BUFFERED] = { "ext4_buffered", { "ext4:ext4_da_write_begin", "ext4:ext4_write_begin" },
		{ "ext4_da_write_begin", "ext4_write_begin" }, BTF_KINDS, false,
		"ext4 buffered-write i_rwsem learned only from write syscalls", "ext4" },
	[GROUP_SYSCALLS] = { "syscalls", { "raw_syscalls:sys_enter", "raw_syscalls:sys_exit" },
		{ "sys_enter", "sys_exit" }, TRACEPOINT_KINDS, false,
		"no write-syscall latency; buffered writes counted only on XFS; fewer i_rwsem addresses", NULL },
	/* raw_syscalls:sys_exit: a long wait's user stack, and sched_switch
	 * again: long waits at a switch (kern/longwait.bpf.inc, sched.bpf.inc),
	 * loaded with --long-wait-us only */
	[GROUP_SCHED] = { "sched", { "sched:sched_switch", "sched:sched_wakeup",
		"raw_syscalls:sys_exit", "sched:sched_switch" },
		{ "sched_switch", "sched_wakeup", "long_wait_exit", "long_wait_switch" },
		TRACEPOINT_KINDS, false,
		"no per-thread on/off-CPU time and no off-CPU stacks", NULL, .kept = true },
	/* block_rq_*: service and busy time; block_lat_*, their twins for
	 * kernels without BPF atomic fetch, service time alone: one pair is
	 * loaded (choose_block_twins) */
	[GROUP_BLOCK] = { "block", { "block:block_rq_issue", "block:block_rq_complete",
		"block:block_rq_issue", "block:block_rq_complete" },
		{ "block_rq_issue", "block_rq_complete", "block_lat_issue", "block_lat_complete" },
		TRACEPOINT_KINDS, false, "no block-device latency or busy time", NULL },
	/* jbd2 is the journal of ext3/ext4 (and of ocfs2, which is not studied here) */
	[GROUP_JBD2] = { "jbd2", { "jbd2:jbd2_handle_start", "jbd2:jbd2_handle_stats", "jbd2:jbd2_run_stats" },
		{ "jbd2_handle_start", "jbd2_handle_stats", "jbd2_run_stats" }, TRACEPOINT_KINDS, false,
		"no ext4 journal handle and commit statistics", "ext4" },
	[GROUP_EXT4_WRITE_ENTRY] = { "ext4_write_entry", { "ext4_file_write_iter" }, { "ext4_write_entry" },
		K(FENTRY) | K(KPROBE), true,
		"no per-file time from ext4_file_write_iter entry to iomap (i_rwsem and write checks)", "ext4" },
	/* After "lock", so that it shares that group's tracepoints; its own
	 * programs, so that it can be turned off or shed alone. */
	[GROUP_HOLDERS] = { "holders", { "lock:contention_begin", "lock:contention_end" },
		{ "holder_begin", "holder_end", "holder_tick" }, BTF_KINDS, false,
		"no lock-holder snapshots (what the holder did while others waited)", NULL },
	/* Needs the holders group's waiter slots (task storage of the woken task). */
	[GROUP_RELEASERS] = { "releasers", { "sched:sched_waking" }, { "releaser_wake" },
		K(TP_BTF), false, "no releaser stacks (where a waited-for lock was released)", NULL },
	/* The classic tracepoint only: its record's fields are read through
	 * CO-RE (kern/iowq.bpf.inc); tp_btf and raw_tp arguments differ in
	 * order between 5.10 and 6.1. The end of the wait is the dio group's. */
	[GROUP_IOURING] = { "io_uring", { "io_uring:io_uring_queue_async_work" }, { "iowq_queue" },
		K(TRACEPOINT), false, "io_uring requests io-wq serializes per file (hashed) not "
		"measured", NULL },
};

/* ---- libbpf messages: kept to find which program a load failed on ---- */

#define LOG_LINES 64
static char log_ring[LOG_LINES][256];
static unsigned int log_next;
static bool log_verbose;

static int log_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	va_list copy;

	va_copy(copy, args);
	vsnprintf(log_ring[log_next++ % LOG_LINES], sizeof(log_ring[0]), fmt, copy);
	va_end(copy);
	return log_verbose ? vfprintf(stderr, fmt, args) : 0;
}

/* The program named in the newest "prog 'NAME'" libbpf message. */
static bool failed_prog_from_log(char *name, size_t len)
{
	unsigned int i;

	for (i = 1; i <= LOG_LINES && i <= log_next; i++) {
		const char *line = log_ring[(log_next - i) % LOG_LINES];
		const char *p = strstr(line, "prog '"), *q;

		if (p && (q = strchr(p + 6, '\'')) && (size_t)(q - p - 6) < len) {
			memcpy(name, p + 6, q - p - 6);
			name[q - p - 6] = 0;
			return true;
		}
	}
	return false;
}

/* The struct a failed CO-RE relocation named in the newest load log
 * ("failed to resolve CO-RE relocation <byte_off> [530] struct
 * xfs_inode.i_vnode ..."). */
static bool failed_relo_struct(char *name, size_t len)
{
	unsigned int i;

	for (i = 1; i <= LOG_LINES && i <= log_next; i++) {
		const char *line = log_ring[(log_next - i) % LOG_LINES];
		const char *p = strstr(line, "failed to resolve CO-RE relocation");
		size_t n;

		if (!p || !(p = strstr(p, "] struct ")))
			continue;
		p += 9;
		n = strcspn(p, ". \n");
		if (!n || n >= len)
			return false;
		memcpy(name, p, n);
		name[n] = 0;
		return true;
	}
	return false;
}

/* ---- what the running kernel offers ---- */

struct kernel_view {
	struct kernel_btf btf;   /* vmlinux and modules: the lookup lockscope-features shares */
	bool tracefs;
	char *kallsyms;        /* text symbols, "\nname\n" separated */
};

static bool tracefs_event(const char *sys, const char *event)
{
	char path[300];

	snprintf(path, sizeof(path), TRACEFS "/events/%s/%s/id", sys, event);
	return access(path, R_OK) == 0;
}

/* Text symbols as "\nname\n..." (a module's with its " [mod]" cut off),
 * read only when a kprobe's function must be looked up (session.c reads
 * kallsyms again after the load); parsed by hand: sscanf per line of the
 * ~200000 takes seconds on a slow (emulated) machine. */
static char *read_text_symbols(void)
{
	size_t size, len = 1;
	const char *line = kallsyms_snapshot(&size);
	char *out;

	if (!line || !(out = malloc(size + 2)))
		return NULL;
	out[0] = '\n';
	while (*line) {
		/* "ADDR T NAME[\t[MOD]]\n" */
		const char *nl = strchr(line, '\n'), *type = strchr(line, ' '), *name;
		size_t n;

		if (!nl)
			nl = line + strlen(line);
		if (type && type < nl && (type[1] == 't' || type[1] == 'T') && type[2] == ' ') {
			name = type + 3;
			n = strcspn(name, "\t\n ");
			memcpy(out + len, name, n);
			len += n;
			out[len++] = '\n';
		}
		line = *nl ? nl + 1 : nl;
	}
	out[len] = 0;
	return out;
}

static bool kallsyms_has(struct kernel_view *v, const char *name)
{
	char needle[160];

	if (!v->kallsyms && !(v->kallsyms = read_text_symbols()))
		return false;
	snprintf(needle, sizeof(needle), "\n%s\n", name);
	return strstr(v->kallsyms, needle) != NULL;
}

static void view_init(struct kernel_view *v)
{
	memset(v, 0, sizeof(*v));
	kernel_btf_open(&v->btf);
	v->tracefs = tpfmt_ensure_tracefs();
}

static void view_free(struct kernel_view *v)
{
	kernel_btf_close(&v->btf);
	free(v->kallsyms);
}

/* Whether kind can attach every tracepoint (or function) group g needs
 * with it; if not, why. */
static bool kind_available(struct kernel_view *v, int g, int kind, char *why, size_t len)
{
	const char *const *needs = group_needs(g, kind);
	int i;

	for (i = 0; i < GROUP_MAX_TPS && needs[i]; i++) {
		const char *tp = needs[i], *colon = strchr(tp, ':');
		char sys[64] = "";
		const char *event = colon ? colon + 1 : tp;

		if (colon)
			snprintf(sys, sizeof(sys), "%.*s", (int)(colon - tp), tp);
		switch (kind) {
		case ATTACH_TP_BTF:
			if (!v->btf.vmlinux) {
				snprintf(why, len, "no kernel BTF");
				return false;
			}
			if (!kernel_btf_has_tracepoint(&v->btf, tp)) {
				snprintf(why, len, "%s not in kernel BTF", tp);
				return false;
			}
			break;
		case ATTACH_RAW_TP:
			if (!kernel_btf_has_tracepoint(&v->btf, tp) && !tracefs_event(sys, event)) {
				snprintf(why, len, "tracepoint %s not found (BTF, tracefs)", tp);
				return false;
			}
			break;
		case ATTACH_TRACEPOINT:
			if (!v->tracefs) {
				snprintf(why, len, "tracefs not mounted at " TRACEFS);
				return false;
			}
			if (!tracefs_event(sys, event)) {
				snprintf(why, len, "%s not in tracefs", tp);
				return false;
			}
			break;
		case ATTACH_FENTRY:
			if (!kernel_btf_has(&v->btf, tp, BTF_KIND_FUNC)) {
				snprintf(why, len, "function %s not in kernel BTF", tp);
				return false;
			}
			break;
		case ATTACH_KPROBE:
			if (!kallsyms_has(v, tp)) {
				snprintf(why, len, "function %s not in /proc/kallsyms", tp);
				return false;
			}
			break;
		}
	}
	/* its programs read the records at the format's offsets where BTF has
	 * no type for them (kern/extent.bpf.inc) */
	if (g == GROUP_EXT4_EXTENT && kind == ATTACH_TRACEPOINT) {
		struct rec_tpoff off;

		return tpfields_decode(&off, why, len);
	}
	return true;
}

/* ---- programs <-> groups ---- */

int probe_prog_group(const char *name, int *kind)
{
	int g, i, k;

	for (g = 0; g < NR_GROUPS; g++) {
		for (i = 0; i < GROUP_MAX_TPS && probe_groups[g].progs[i]; i++) {
			size_t n = strlen(probe_groups[g].progs[i]);

			if (strncmp(name, probe_groups[g].progs[i], n))
				continue;
			for (k = 0; k < NR_ATTACH; k++) {
				if (!strcmp(name + n, suffixes[k]) ||
				    (exit_suffixes[k] && !strcmp(name + n, exit_suffixes[k]))) {
					*kind = k;
					return g;
				}
			}
		}
	}
	return -1;
}

/* The block group's twin not loaded on this kernel: block_rq_* hold BPF
 * atomic fetch-and-add (kern/block.bpf.inc), which a kernel without it
 * refuses in any program it loads; block_lat_* then stand in. */
static bool other_block_twin(const char *name)
{
	const char *other = atomics_fetch_add() ? "block_lat_" : "block_rq_";

	return !strncmp(name, other, strlen(other));
}

/* Autoload exactly the chosen variant of each group that is on, or, when
 * only is a program name, that program alone. */
static void choose_programs(struct record_bpf *skel, const struct rec_group_state *st,
			    const char *only)
{
	/* the verifier's statistics of each program (its time, states and
	 * instructions processed), shown with --verbose: what a load costs on a
	 * kernel whose verifier is slower (docs/long-waits.md) */
	const char *stats = getenv("LOCKSCOPE_VERIFIER_STATS");
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj) {
		const char *name = bpf_program__name(prog);
		int kind, g = probe_prog_group(name, &kind);
		bool on;

		if (only)
			on = !strcmp(name, only);
		else
			on = g >= 0 && st[g].attach == kind && !(g == GROUP_BLOCK && other_block_twin(name));
		bpf_program__set_autoload(prog, on);
		if (on && stats && *stats && strcmp(stats, "0"))
			bpf_program__set_log_level(prog, 4 /* BPF_LOG_STATS */);
	}
}

static bool struct_has(struct kernel_view *v, const char *type, const char *member)
{
	int id = v->btf.vmlinux ? btf__find_by_name_kind(v->btf.vmlinux, type, BTF_KIND_STRUCT) : -1;
	const struct btf_type *t = id > 0 ? btf__type_by_id(v->btf.vmlinux, id) : NULL;
	const struct btf_member *m = t ? btf_members(t) : NULL;
	int i;

	for (i = 0; t && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(v->btf.vmlinux, m[i].name_off), member))
			return true;
	return false;
}

/* The run-queue wait of a task switching in can be read from its
 * sched_info (kern/sched.bpf.inc, runq_delay) when the kernel has it and
 * the runqueue link of group scheduling, and the program sees that task
 * (tp_btf, raw_tp):
 * then sched_wakeup, which runs at every wake-up on the machine, is left
 * out. */
static void skip_wakeup_if_sched_info(struct rec_probe *p, struct kernel_view *v)
{
	int kind = p->groups[GROUP_SCHED].attach;
	struct bpf_program *prog;
	char name[64];

	if ((kind != ATTACH_TP_BTF && kind != ATTACH_RAW_TP) || !v->btf.vmlinux ||
	    !struct_has(v, "sched_info", "last_queued") || !struct_has(v, "sched_entity", "cfs_rq") ||
	    !struct_has(v, "cfs_rq", "rq"))
		return;
	p->skel->rodata->runq_from_sched_info = true;
	snprintf(name, sizeof(name), "sched_wakeup%s", suffixes[kind]);
	prog = bpf_object__find_program_by_name(p->skel->obj, name);
	if (prog)
		bpf_program__set_autoload(prog, false);
}

/* Without --long-wait-us, the programs of long waits are not loaded: the
 * one waiting at system calls' exits for a long wait's user stack and the
 * one following long waits at switches. */
static void skip_long_wait_progs(struct rec_probe *p)
{
	static const char *const progs[] = { "long_wait_exit", "long_wait_switch" };
	int kind = p->groups[GROUP_SCHED].attach;
	struct bpf_program *prog;
	char name[64];
	size_t i;

	if (kind < 0 || kind >= ATTACH_FENTRY || p->skel->rodata->long_wait_ns)
		return;
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		snprintf(name, sizeof(name), "%s%s", progs[i], suffixes[kind]);
		prog = bpf_object__find_program_by_name(p->skel->obj, name);
		if (prog)
			bpf_program__set_autoload(prog, false);
	}
}

bool probe_prog_follows_long_waits(const char *name)
{
	return !strncmp(name, "long_wait_switch_", 17) || !strncmp(name, "long_wait_exit_", 15) ||
	       !strncmp(name, "contention_begin_", 17) || !strncmp(name, "contention_end_", 15);
}

/* The programs that follow long waits, kept attached through the "off"
 * phases of --duty and the budget's pauses (kern/longwait.bpf.inc). */
static bool long_wait_prog(const struct rec_probe *p, int i)
{
	if (!p->skel->rodata->long_wait_ns || p->link_cpus[i] != -1)
		return false;
	return probe_prog_follows_long_waits(bpf_program__name(p->link_progs[i]));
}

/* Parameters of a function prototype in kernel BTF: of a FUNC, or of the
 * function pointer a typedef names (btf_trace_EVENT); -1 when not found. */
static int func_params(struct kernel_view *v, const char *name, int kind)
{
	const struct btf *b = v->btf.vmlinux;
	int id = b ? btf__find_by_name_kind(b, name, kind) : -1;
	const struct btf_type *t = id > 0 ? btf__type_by_id(b, id) : NULL;

	if (t && kind == BTF_KIND_TYPEDEF) {
		t = btf__type_by_id(b, t->type);
		t = t && btf_is_ptr(t) ? btf__type_by_id(b, t->type) : NULL;
	} else if (t) {
		t = btf__type_by_id(b, t->type);
	}
	return t && btf_is_func_proto(t) ? btf_vlen(t) : -1;
}

/* Shapes that differ between kernels and that a program must know before
 * load: sched_switch's prev_state argument (from 5.18; the handler has the
 * typedef's leading void * too), rwsem_down_read_slowpath's count
 * argument (kernel/locking/rwsem.c, from 5.13) and block_rq_issue's
 * request queue before the request (include/trace/events/block.h, through
 * 5.10: the typedef's void *, the queue, the request). */
static void set_kernel_shapes(struct rec_probe *p, struct kernel_view *v)
{
	int n = func_params(v, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);

	if (n >= 0)
		p->skel->rodata->switch_state_arg = n >= 5;
	n = func_params(v, "rwsem_down_read_slowpath", BTF_KIND_FUNC);
	if (n == 2 || n == 3)
		p->skel->rodata->read_slowpath_args = n;
	n = func_params(v, "btf_trace_block_rq_issue", BTF_KIND_TYPEDEF);
	if (n >= 0)
		p->skel->rodata->rq_issue_after_queue = n >= 3;
	p->block_busy = atomics_fetch_add();
}

static void mark_failed(struct rec_group_state *st, int kind, const char *stage, int err)
{
	st->failed |= 1u << kind;
	snprintf(st->why[kind], sizeof(st->why[kind]), "%s failed: %s", stage, strerror(err));
}

/* A load refused because a program reads a struct no kernel BTF has: a
 * module's own types (struct xfs_inode, ext4's tracepoint records) where
 * the kernel has no BTF for its modules (/sys/kernel/btf/MODULE comes with
 * CONFIG_DEBUG_INFO_BTF_MODULES, from 5.11): say so, no kind can help. */
static void note_missing_type(struct rec_group_state *st, int kind, struct kernel_view *v)
{
	char name[80];
	size_t len = strlen(st->why[kind]);

	if (failed_relo_struct(name, sizeof(name)) && !kernel_btf_has(&v->btf, name, BTF_KIND_STRUCT))
		snprintf(st->why[kind] + len, sizeof(st->why[kind]) - len,
			 " (struct %s is in no kernel BTF: no BTF for its module)", name);
}

/* A group on functions (fentry, kprobe: an optional extra, or a
 * fallback where tracepoints are missing) is tried alone (its programs
 * only, tiny maps) before it joins the real object: on kernels without
 * kprobes or fentry this costs a small load instead of a reload of
 * everything. */
static int try_alone(int g, int kind, const char **stage)
{
	struct bpf_program *prog;
	struct bpf_map *map;
	struct bpf_link *link;
	struct record_bpf *skel;
	int k, err;

	skel = record_bpf__open();
	*stage = "open";
	if (!skel)
		return -errno;
	bpf_object__for_each_map(map, skel->obj) {
		if (bpf_map__type(map) == BPF_MAP_TYPE_TASK_STORAGE) /* no such group uses one */
			bpf_map__set_autocreate(map, false);
		else if (bpf_map__type(map) != BPF_MAP_TYPE_ARRAY &&
			 bpf_map__type(map) != BPF_MAP_TYPE_PERCPU_ARRAY &&
			 bpf_map__type(map) != BPF_MAP_TYPE_RINGBUF) /* a ring is pages */
			bpf_map__set_max_entries(map, 1);
	}
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, probe_prog_group(bpf_program__name(prog), &k) == g &&
					  k == kind && !(g == GROUP_BLOCK &&
							 other_block_twin(bpf_program__name(prog))));
	*stage = "load";
	log_next = 0;
	err = record_bpf__load(skel);
	if (!err)
		*stage = "attach";
	bpf_object__for_each_program(prog, skel->obj) {
		if (err || !bpf_program__autoload(prog))
			continue;
		link = bpf_program__attach(prog);
		err = link ? 0 : -errno;
		bpf_link__destroy(link);
	}
	record_bpf__destroy(skel);
	return err;
}

/* A group whose tracepoints kernel BTF does not know, on a kernel that has
 * BTF: they are a module's, and that module has none (/sys/kernel/btf/MODULE
 * comes with CONFIG_DEBUG_INFO_BTF_MODULES, from 5.11). Such a group's
 * programs often read the module's own types and then load on no kind; tried
 * alone, each refusal costs a small load instead of a reload of every
 * program (on 5.10: five groups, seven kinds). */
static bool outside_kernel_btf(struct kernel_view *v, int g)
{
	const char *const *needs = group_needs(g, ATTACH_RAW_TP);

	return v->btf.vmlinux && needs[0] && !kernel_btf_has_tracepoint(&v->btf, needs[0]);
}

static unsigned int parse_kinds(const char *list)
{
	unsigned int mask = 0;
	char *copy, *tok, *save = NULL;
	int k;

	if (!list)
		return (1u << NR_ATTACH) - 1;
	copy = strdup(list);
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save))
		for (k = 0; k < NR_ATTACH; k++)
			if (!strcmp(tok, probe_attach_names[k]))
				mask |= 1u << k;
	free(copy);
	return mask;
}

static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while (p && *p) {
		if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == 0))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

/* A filesystem type --fs may name: one a group is tagged with, one ext4
 * mounts, or one this kernel knows. */
static bool fs_type_valid(const char *type)
{
	int g;

	for (g = 0; g < NR_GROUPS; g++)
		if (probe_groups[g].fs && !strcmp(probe_groups[g].fs, fsdetect_family(type)))
			return true;
	return fsdetect_known(type);
}

/* --fs: all, auto, or a list of filesystem types. */
static int check_fs_list(const char *list)
{
	char *copy, *tok, *save = NULL;
	int bad = 0;

	if (!list || !strcmp(list, "all") || !strcmp(list, "auto"))
		return 0;
	if (!*list || list[strlen(list) - 1] == ',' || strstr(list, ",,") || list[0] == ',') {
		msg_error("--fs: an empty filesystem type in '%s'", list);
		return -1;
	}
	copy = strdup(list);
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !bad;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all") || !strcmp(tok, "auto")) {
			msg_error("--fs: '%s' stands alone, not in a list", tok);
			bad = 1;
		} else if (!fs_type_valid(tok)) {
			msg_error("--fs: unknown filesystem type '%s' (a type of /proc/filesystems, "
				  "all or auto)", tok);
			bad = 1;
		}
	}
	free(copy);
	return bad ? -1 : 0;
}

int probe_check_names(const struct rec_opts *o)
{
	const char *lists[2] = { o->disable, o->attach_kinds };
	const char *src = o->lock_source;
	int l;

	if (check_fs_list(o->fs))
		return -1;
	if (src && strcmp(src, "auto") && strcmp(src, "tracepoint") && strcmp(src, "slowpath")) {
		msg_error("--lock-source: unknown source '%s' (auto, tracepoint or slowpath)", src);
		return -1;
	}

	for (l = 0; l < 2; l++) {
		char *copy, *tok, *save = NULL;
		int bad = 0;

		if (!lists[l])
			continue;
		copy = strdup(lists[l]);
		for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !bad;
		     tok = strtok_r(NULL, ",", &save)) {
			int i, found = 0;

			if (l == 0) {
				for (i = 0; i < NR_GROUPS; i++)
					found |= !strcmp(tok, probe_groups[i].name);
			} else {
				for (i = 0; i < NR_ATTACH; i++)
					found |= !strcmp(tok, probe_attach_names[i]);
			}
			if (!found) {
				msg_error("%s: unknown %s '%s'", l ? "--attach-kinds" : "--disable",
					  l ? "attach kind" : "probe group (see --list-features)", tok);
				bad = 1;
			}
		}
		free(copy);
		if (bad)
			return -1;
	}
	return 0;
}

/* Per-system-call tracepoints (syscalls:sys_enter_NAME, with
 * CONFIG_FTRACE_SYSCALLS) run a program only for the calls followed; the
 * raw_syscalls ones run it for every call of every task. */
static bool raw_syscalls_only; /* --raw-syscalls */

static bool per_syscall_events(void)
{
	return !raw_syscalls_only && tracefs_event("syscalls", "sys_exit_write");
}

/* The kinds in the order they are tried: tp_btf first, except for the
 * system calls when per-call tracepoints exist. */
static int kind_order(int g, int i)
{
	if (g != GROUP_SYSCALLS || !per_syscall_events())
		return i;
	if (i == 0)
		return ATTACH_TRACEPOINT;
	return i <= ATTACH_TRACEPOINT ? i - 1 : i;
}

/* Whether any kind offered can attach every tracepoint of group g. */
static bool group_present(struct kernel_view *v, int g)
{
	char why[160];
	int k;

	for (k = 0; k < NR_ATTACH; k++)
		if ((probe_groups[g].kinds & (1u << k)) &&
		    kind_available(v, g, k, why, sizeof(why)))
			return true;
	return false;
}

/* --lock-source: whether a group standing in for another (lock_slowpath
 * for lock) or the one it stands for is left out, and why. auto takes the
 * stand-in only where the other's tracepoints are absent: detected, never
 * inferred from the kernel version. */
static bool lock_source_leaves_out(const struct rec_opts *o, struct kernel_view *v, int g,
				   struct rec_group_state *st)
{
	const char *src = o->lock_source ? o->lock_source : "auto";
	int stand_in = GROUP_LOCK_SLOWPATH;

	if (g == GROUP_LOCK && !strcmp(src, "slowpath")) {
		snprintf(st->reason, sizeof(st->reason), "--lock-source slowpath");
		return true;
	}
	if (g != stand_in || !strcmp(src, "slowpath"))
		return false;
	if (!strcmp(src, "tracepoint")) {
		snprintf(st->reason, sizeof(st->reason), "--lock-source tracepoint");
		return true;
	}
	if (group_present(v, GROUP_LOCK)) {
		st->not_needed = true;
		snprintf(st->reason, sizeof(st->reason),
			 "lock:contention_begin/end are present: the lock group records lock waits");
		return true;
	}
	return false;
}

/* After the kinds are chosen: a group whose stand-in is on is not missing;
 * its reason says where its facts come from and what the stand-in lacks. */
static void mark_replaced(struct rec_probe *p)
{
	int g, r;

	for (g = 0; g < NR_GROUPS; g++) {
		const char *of = probe_groups[g].stands_for;

		if (!of || p->groups[g].attach < 0)
			continue;
		for (r = 0; r < NR_GROUPS; r++) {
			struct rec_group_state *st = &p->groups[r];
			size_t len = strlen(st->reason);

			if (strcmp(probe_groups[r].name, of) || st->attach >= 0 || st->not_needed)
				continue;
			st->replaced = true;
			snprintf(st->reason + len, sizeof(st->reason) - len,
				 "%slock waits come from %s instead, rwsem and mutex waits only "
				 "(spinlock, rwlock, per-CPU rwsem and rt-mutex waits are not recorded)",
				 len ? "; " : "", probe_groups[g].name);
		}
	}
}

/* A refusal kept for the next start (probe_cache.h), with its reason. */
static void keep_failed(int g, int kind, int err, const struct rec_group_state *st)
{
	probe_cache_put(probe_groups[g].name, probe_attach_names[kind], err, st->why[kind]);
}

/* A refusal of (g, kind) an earlier start of this boot kept: marked failed, with its
 * reason, as that start found it. */
static bool kept_refusal(int g, int kind, struct rec_group_state *st)
{
	char why[sizeof(st->why[kind])];
	int err;

	if (!probe_cache_get(probe_groups[g].name, probe_attach_names[kind], &err, why, sizeof(why)) ||
	    !err)
		return false;
	st->failed |= 1u << kind;
	memcpy(st->why[kind], why, sizeof(why));
	return true;
}

/* try_alone, unless an earlier start of this boot found the kind works alone (a
 * refusal it kept, kept_refusal() took before): 0 when the kind works alone, else
 * non-zero with the kind marked failed. */
static int tried_alone(int g, int kind, struct rec_group_state *st, struct kernel_view *v)
{
	char why[8];
	const char *stage;
	int err;

	if (probe_cache_get(probe_groups[g].name, probe_attach_names[kind], &err, why, sizeof(why)) &&
	    !err)
		return 0;
	err = try_alone(g, kind, &stage);
	if (!err) {
		probe_cache_put(probe_groups[g].name, probe_attach_names[kind], 0, "");
		return 0;
	}
	mark_failed(st, kind, stage, -err);
	if (!strcmp(stage, "load"))
		note_missing_type(st, kind, v);
	keep_failed(g, kind, -err, st);
	return err;
}

/* Pick a kind for every group from what is offered, allowed, present and
 * not yet failed. */
static void choose_kinds(struct rec_probe *p, const struct rec_opts *o, struct kernel_view *v,
			 unsigned int allowed)
{
	int g, k, i;

	for (g = 0; g < NR_GROUPS; g++) {
		const struct rec_group_def *def = &probe_groups[g];
		struct rec_group_state *st = &p->groups[g];
		size_t off = 0;

		st->attach = -1;
		st->reason[0] = 0;
		st->replaced = false;
		/* before --disable: such a group would not have run anyway */
		if (st->not_needed && (g == GROUP_LOCK || g == GROUP_LOCK_SLOWPATH)) {
			st->not_needed = false; /* decided again below */
		} else if (st->not_needed) {
			snprintf(st->reason, sizeof(st->reason), "%s", p->fs_reason);
			continue;
		}
		if (lock_source_leaves_out(o, v, g, st))
			continue;
		if (in_list(o->disable, def->name)) {
			snprintf(st->reason, sizeof(st->reason), "disabled by --disable");
			continue;
		}
		for (i = 0; i < NR_ATTACH; i++) {
			k = kind_order(g, i);

			if (!(def->kinds & (1u << k)) || (st->failed & (1u << k)))
				continue;
			if (!(allowed & (1u << k))) {
				snprintf(st->why[k], sizeof(st->why[k]), "not in --attach-kinds");
				continue;
			}
			if (!kind_available(v, g, k, st->why[k], sizeof(st->why[k])))
				continue;
			/* refused at an earlier start's load or attach: no reload for it */
			if (kept_refusal(g, k, st))
				continue;
			/* functions: refused on kernels without kprobes or fentry */
			if ((def->extra || k == ATTACH_FENTRY || k == ATTACH_KPROBE ||
			     outside_kernel_btf(v, g)) && tried_alone(g, k, st, v))
				continue;
			st->attach = k;
			break;
		}
		/* reason: every kind passed over, in order */
		for (k = 0; k < NR_ATTACH; k++) {
			if (!(def->kinds & (1u << k)) || k == st->attach || !st->why[k][0])
				continue;
			if (st->attach >= 0 && k > st->attach)
				break;
			off += snprintf(st->reason + off, off < sizeof(st->reason) ? sizeof(st->reason) - off : 0,
					"%s%s: %s", off ? "; " : "", probe_attach_names[k], st->why[k]);
			if (off >= sizeof(st->reason))
				break;
		}
	}
	mark_replaced(p);
}

static void *destroy_link(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

static void *close_fd(void *fd)
{
	close((int)(intptr_t)fd);
	return NULL;
}

/* fn on every non-NULL arg, each on a thread of its own (inline when no
 * thread can be made); side_by_side_join() waits for them all. */
struct side_by_side {
	pthread_t *th;
	bool *started;
	int n;
};

static void side_by_side_start(struct side_by_side *s, void *(*fn)(void *), void **args, int n)
{
	int i;

	s->n = n;
	s->th = calloc(n ? n : 1, sizeof(*s->th));
	s->started = calloc(n ? n : 1, sizeof(*s->started));
	for (i = 0; i < n; i++) {
		if (!args[i])
			continue;
		if (!s->th || !s->started || pthread_create(&s->th[i], NULL, fn, args[i]))
			fn(args[i]);
		else
			s->started[i] = true;
	}
}

static void side_by_side_join(struct side_by_side *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->started && s->started[i])
			pthread_join(s->th[i], NULL);
	free(s->th);
	free(s->started);
}

/* Each destroy waits for the tracepoint's callers to leave
 * (kernel/trace/trace_event_perf.c perf_trace_event_unreg() and
 * kernel/bpf/syscall.c bpf_raw_tp_link_release() end in
 * tracepoint_synchronize_unregister()): tens of ms each for classic
 * tracepoints. The program stops running at the unregister, before that
 * wait; destroyed side by side, the waits overlap. Returns when the
 * destroys began (CLOCK_MONOTONIC ns). */
static __u64 destroy_links_but(struct rec_probe *p, bool keep_long_waits);

static __u64 destroy_links(struct rec_probe *p)
{
	return destroy_links_but(p, false);
}

static __u64 destroy_links_but(struct rec_probe *p, bool keep_long_waits)
{
	void **links = calloc(p->nr_links ? p->nr_links : 1, sizeof(*links));
	struct side_by_side s;
	__u64 t;
	int i;

	for (i = 0; i < p->nr_links; i++) {
		if (keep_long_waits && long_wait_prog(p, i)) {
			if (links)
				links[i] = NULL;
			continue;
		}
		if (links)
			links[i] = p->links[i];
		else
			bpf_link__destroy(p->links[i]);
		p->links[i] = NULL;
	}
	side_by_side_start(&s, destroy_link, links, links ? p->nr_links : 0);
	t = clock_ns(CLOCK_MONOTONIC);
	side_by_side_join(&s);
	free(links);
	return t;
}

/* The perf events kept for classic tracepoints (tplink.c): closing one
 * waits as a destroy does, so they too are closed side by side. */
static void close_kept(struct rec_probe *p)
{
	void **fds = calloc(p->nr_links ? p->nr_links : 1, sizeof(*fds));
	struct side_by_side s;
	int i;

	for (i = 0; i < p->nr_links && p->link_kept; i++) {
		if (p->link_kept[i] < 0)
			continue;
		if (fds)
			fds[i] = (void *)(intptr_t)p->link_kept[i];
		else
			close(p->link_kept[i]);
		p->link_kept[i] = -1;
	}
	side_by_side_start(&s, close_fd, fds, fds ? p->nr_links : 0);
	side_by_side_join(&s);
	free(fds);
}

static void destroy_attempt(struct rec_probe *p)
{
	destroy_links(p);
	close_kept(p);
	free(p->links);
	free(p->link_kept);
	p->link_kept = NULL;
	free(p->link_groups);
	free(p->link_progs);
	free(p->link_events);
	free(p->link_cpus);
	p->link_cpus = NULL;
	p->links = NULL;
	p->link_groups = NULL;
	p->link_progs = NULL;
	p->link_events = NULL;
	p->nr_links = 0;
	record_bpf__destroy(p->skel);
	p->skel = NULL;
}

static void add_link(struct rec_probe *p, struct bpf_link *link, struct bpf_program *prog,
		     int event, int kept)
{
	int kind;

	p->link_groups[p->nr_links] = probe_prog_group(bpf_program__name(prog), &kind);
	p->link_cpus[p->nr_links] = -1;
	p->link_progs[p->nr_links] = prog;
	p->link_events[p->nr_links] = event;
	p->link_kept[p->nr_links] = kept;
	p->links[p->nr_links++] = link;
}

static bool enter_prog(struct bpf_program *prog)
{
	return !strcmp(bpf_program__name(prog), "sys_enter_tp");
}

static struct bpf_link *attach_syscall_event(struct bpf_program *prog, int i, int *kept)
{
	char event[64];

	snprintf(event, sizeof(event), "sys_%s_%s", enter_prog(prog) ? "enter" : "exit",
		 syscall_names[i]);
	return tplink_attach(prog, "syscalls", event, kept);
}

/* A classic tracepoint program on its section's event ("tracepoint/SYS/EVENT"
 * or "tp/SYS/EVENT"), its perf event kept; others as libbpf attaches them. */
static struct bpf_link *attach_prog(struct bpf_program *prog, int *kept)
{
	const char *sec = bpf_program__section_name(prog), *slash;
	char sys[64];

	*kept = -1;
	if (bpf_program__type(prog) != BPF_PROG_TYPE_TRACEPOINT)
		return bpf_program__attach(prog);
	sec = strchr(sec, '/');
	slash = sec ? strchr(sec + 1, '/') : NULL;
	if (!slash || (size_t)(slash - sec) > sizeof(sys))
		return bpf_program__attach(prog);
	snprintf(sys, sizeof(sys), "%.*s", (int)(slash - sec - 1), sec + 1);
	return tplink_attach(prog, sys, slash + 1, kept);
}

/* The classic sys_enter/sys_exit programs on each followed call's own
 * tracepoint (their records start like raw_syscalls' ones: the call number
 * at offset 8, then the arguments or the return value at 16). Entry only
 * for the timed calls. NULL with errno set on failure. */
static struct bpf_link *attach_per_syscall(struct rec_probe *p, struct bpf_program *prog,
					   int *last, int *kept)
{
	bool enter = enter_prog(prog);
	struct bpf_link *link = NULL;
	char event[64];
	int i;

	for (i = 0; i < (enter ? REC_TIMED_SYSCALLS : REC_NR_SYSCALLS); i++) {
		snprintf(event, sizeof(event), "sys_%s_%s", enter ? "enter" : "exit",
			 syscall_names[i]);
		if (!tracefs_event("syscalls", event))
			continue;
		if (link)
			add_link(p, link, prog, *last, *kept);
		link = attach_syscall_event(prog, i, kept);
		if (!link)
			return NULL;
		*last = i;
	}
	if (!link)
		errno = ENOENT;
	return link;
}

static bool per_syscall_prog(struct bpf_program *prog)
{
	const char *name = bpf_program__name(prog);

	return per_syscall_events() && (!strcmp(name, "sys_enter_tp") || !strcmp(name, "sys_exit_tp"));
}

static int attach_all(struct rec_probe *p)
{
	struct bpf_program *prog;
	int n = 0;

	bpf_object__for_each_program(prog, p->skel->obj)
		n += bpf_program__autoload(prog) ? (per_syscall_prog(prog) ? REC_NR_SYSCALLS : 1) : 0;
	p->links = calloc(n ? n : 1, sizeof(*p->links));
	p->link_groups = calloc(n ? n : 1, sizeof(*p->link_groups));
	p->link_progs = calloc(n ? n : 1, sizeof(*p->link_progs));
	p->link_events = calloc(n ? n : 1, sizeof(*p->link_events));
	p->link_kept = calloc(n ? n : 1, sizeof(*p->link_kept));
	p->link_cpus = calloc(n ? n : 1, sizeof(*p->link_cpus));
	if (!p->links || !p->link_groups || !p->link_progs || !p->link_events || !p->link_kept ||
	    !p->link_cpus)
		return -ENOMEM;
	bpf_object__for_each_program(prog, p->skel->obj) {
		struct bpf_link *link;
		int kind, g, event = -1, kept = -1;

		if (!bpf_program__autoload(prog))
			continue;
		/* timer programs: one link per CPU, once the rest is attached
		 * (probe_attach_timers) */
		if (bpf_program__type(prog) == BPF_PROG_TYPE_PERF_EVENT)
			continue;
		link = per_syscall_prog(prog) ? attach_per_syscall(p, prog, &event, &kept) :
						attach_prog(prog, &kept);
		if (!link) {
			int err = errno;

			g = probe_prog_group(bpf_program__name(prog), &kind);
			if (g < 0)
				return -err;
			mark_failed(&p->groups[g], kind, "attach", err);
			keep_failed(g, kind, err, &p->groups[g]);
			return 1; /* retry without this kind */
		}
		add_link(p, link, prog, event, kept);
	}
	return 0;
}

/* The filesystem types --fs names, or, for auto, those of the target's
 * files (fsdetect.c). False when every group is wanted. */
static bool wanted_types(const struct rec_opts *o, struct fsdetect_set *set, bool *detected)
{
	const char *list = o->fs ? o->fs : o->nr_pids ? "auto" : "all";
	char err[256] = "", names[200];
	char *copy, *tok, *save = NULL;
	int i;

	*detected = !strcmp(list, "auto");
	if (!strcmp(list, "all"))
		return false;
	if (!*detected) {
		copy = strdup(list);
		for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok;
		     tok = strtok_r(NULL, ",", &save))
			fsdetect_add(set, tok);
		free(copy);
		return set->n > 0;
	}
	if (!o->nr_pids) {
		msg_note("--fs auto: no --pid to look at; every filesystem's probe groups attached");
		return false;
	}
	if (fsdetect_pids(o->pids, o->nr_pids, set, err, sizeof(err)) || !set->n) {
		msg_note("--fs auto: %s; every filesystem's probe groups attached",
			 err[0] ? err : "no open file or working directory found");
		return false;
	}
	for (i = 0; i < set->n; i++) {
		if (fsdetect_stacked(set->types[i])) {
			fsdetect_join(set, names, sizeof(names));
			msg_note("--fs auto: target files are on %s, and %s passes I/O on to other "
				 "filesystems; every filesystem's probe groups attached", names,
				 set->types[i]);
			return false;
		}
	}
	return true;
}

/* Marks the groups of filesystems the target does not use as not needed
 * (--fs); with auto, says on stderr which and why. */
static void leave_out_other_fs(struct rec_probe *p, const struct rec_opts *o)
{
	struct fsdetect_set set = { 0 };
	char names[200], left[300] = "";
	size_t off = 0;
	bool detected;
	int g, i;

	if (!wanted_types(o, &set, &detected))
		return;
	fsdetect_join(&set, names, sizeof(names));
	snprintf(p->fs_reason, sizeof(p->fs_reason), "target files are on %s (--fs%s)", names,
		 detected ? " auto" : "");
	for (g = 0; g < NR_GROUPS; g++) {
		const char *fs = probe_groups[g].fs;
		bool used = !fs;

		for (i = 0; i < set.n && !used; i++)
			used = !strcmp(fsdetect_family(set.types[i]), fs);
		p->groups[g].not_needed = !used;
		if (!used && off < sizeof(left))
			off += snprintf(left + off, sizeof(left) - off, "%s%s", off ? ", " : "",
					probe_groups[g].name);
	}
	if (detected && left[0])
		msg_note("probe groups %s left out: target files are on %s (--fs auto; files it "
			 "opens later on another filesystem are not covered; --fs all attaches every "
			 "group)", left, names);
}

int probe_prepare(struct rec_probe *p, const struct rec_opts *o, rec_config_fn config, void *arg)
{
	unsigned int allowed = parse_kinds(o->attach_kinds);
	struct kernel_view view;
	int attempt, err = -EINVAL, g;

	memset(p, 0, sizeof(*p));
	log_verbose = o->verbose;
	raw_syscalls_only = o->raw_syscalls;
	libbpf_set_print(log_print);
	leave_out_other_fs(p, o);
	view_init(&view);
	msg_step("kernel_view");
	{
		size_t size;
		const void *object = record_bpf__elf_bytes(&size);

		probe_cache_open(object, size);
	}
	for (attempt = 0; attempt < NR_GROUPS * NR_ATTACH; attempt++) {
		char name[128];
		int kind;

		choose_kinds(p, o, &view, allowed);
		msg_step("choose_kinds");
		p->skel = record_bpf__open();
		msg_step("open");
		if (!p->skel) {
			err = -errno;
			msg_error("cannot open the BPF object: %s", strerror(errno));
			break;
		}
		err = config(p->skel, arg);
		if (err)
			break;
		choose_programs(p->skel, p->groups, NULL);
		skip_wakeup_if_sched_info(p, &view);
		skip_long_wait_progs(p);
		set_kernel_shapes(p, &view);
		log_next = 0;
		msg_step("configure");
		err = record_bpf__load(p->skel);
		msg_step("load");
		if (err) {
			if (!failed_prog_from_log(name, sizeof(name)) ||
			    (g = probe_prog_group(name, &kind)) < 0 || p->groups[g].attach != kind) {
				/* measured on 6.1: without CAP_SYS_ADMIN the object
				 * does not load (EINVAL), with CAP_BPF and CAP_PERFMON */
				msg_error("cannot load the BPF object: %s%s (run with --verbose, or "
					  "'lockscope doctor')", strerror(-err),
					  privileges_effective(CAP_SYS_ADMIN) ? "" :
					  "; CAP_SYS_ADMIN is missing, which some kernels need to "
					  "load it");
				break;
			}
			mark_failed(&p->groups[g], kind, "load", -err);
			note_missing_type(&p->groups[g], kind, &view);
			keep_failed(g, kind, -err, &p->groups[g]);
			destroy_attempt(p);
			continue;
		}
		err = attach_all(p);
		msg_step("attach");
		if (err == 1) {
			destroy_attempt(p);
			continue;
		}
		if (err)
			msg_error("cannot attach: %s", strerror(-err));
		break;
	}
	view_free(&view);
	probe_cache_save();
	if (err) {
		destroy_attempt(p);
		return err < 0 ? err : -EINVAL;
	}
	return 0;
}

void probe_destroy(struct rec_probe *p)
{
	destroy_attempt(p);
}

/* A cpu-clock perf event on cpu running prog every period_ms; NULL with errno. */
static struct bpf_link *attach_timer(struct bpf_program *prog, int cpu, unsigned int period_ms)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = (__u64)period_ms * 1000000,
	};
	struct bpf_link *link;
	int fd, err;

	fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return NULL;
	link = bpf_program__attach_perf_event(prog, fd);
	if (!link) {
		err = errno;
		close(fd);
		errno = err;
	}
	return link;
}

/* Room for n more links in the table. */
static int grow_links(struct rec_probe *p, int n)
{
	size_t cap = (size_t)p->nr_links + n;
	void *a[] = {
		realloc(p->links, cap * sizeof(*p->links)),
		realloc(p->link_groups, cap * sizeof(*p->link_groups)),
		realloc(p->link_progs, cap * sizeof(*p->link_progs)),
		realloc(p->link_events, cap * sizeof(*p->link_events)),
		realloc(p->link_kept, cap * sizeof(*p->link_kept)),
		realloc(p->link_cpus, cap * sizeof(*p->link_cpus)),
	};

	p->links = a[0] ?: p->links;
	p->link_groups = a[1] ?: p->link_groups;
	p->link_progs = a[2] ?: p->link_progs;
	p->link_events = a[3] ?: p->link_events;
	p->link_kept = a[4] ?: p->link_kept;
	p->link_cpus = a[5] ?: p->link_cpus;
	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		if (!a[i])
			return -ENOMEM;
	return 0;
}

int probe_attach_timers(struct rec_probe *p, unsigned int period_ms)
{
	int ncpu = libbpf_num_possible_cpus(), cpu, g, kind, err = 0;
	struct bpf_program *prog;
	struct bpf_link *link;

	p->timer_period_ms = period_ms;
	p->timer_why[0] = 0;
	bpf_object__for_each_program(prog, p->skel->obj) {
		if (bpf_program__type(prog) != BPF_PROG_TYPE_PERF_EVENT ||
		    !bpf_program__autoload(prog) || bpf_program__fd(prog) < 0)
			continue;
		g = probe_prog_group(bpf_program__name(prog), &kind);
		if (g < 0 || !probe_group_on(p, g))
			continue;
		if (ncpu <= 0 || grow_links(p, ncpu))
			return -ENOMEM;
		for (cpu = 0; cpu < ncpu; cpu++) {
			link = attach_timer(prog, cpu, period_ms);
			if (!link && errno == ENODEV)
				continue; /* a possible CPU that is not online */
			if (!link) {
				err = -errno;
				snprintf(p->timer_why, sizeof(p->timer_why), "cpu-clock timer on CPU %d: %s",
					 cpu, strerror(-err));
				/* said where the groups are listed too: no snapshot will be taken */
				snprintf(p->groups[g].reason, sizeof(p->groups[g].reason),
					 "no snapshots: %s", p->timer_why);
				probe_detach_group(p, g);
				return err;
			}
			add_link(p, link, prog, -1, -1);
			p->link_cpus[p->nr_links - 1] = cpu;
		}
	}
	return 0;
}

int probe_timer_cpus(const struct rec_probe *p, int g, const char **why)
{
	int i, n = 0;

	*why = p->timer_why[0] ? p->timer_why : NULL;
	for (i = 0; i < p->nr_links; i++)
		n += p->link_cpus[i] >= 0 && p->link_groups[i] == g &&
		     (p->links[i] || p->timers_paused);
	return n;
}

int probe_detach_group(struct rec_probe *p, int g)
{
	int i, n = 0;

	for (i = 0; i < p->nr_links; i++) {
		if (g < 0 || p->link_groups[i] == g) {
			if (p->link_cpus[i] >= 0)
				p->link_cpus[i] = -2; /* a timer detached for good */
			if (!p->links[i])
				continue;
			bpf_link__destroy(p->links[i]);
			p->links[i] = NULL;
			n++;
		}
	}
	/* the releasers need the holders' waiter slots, so they go with them */
	if (g == GROUP_HOLDERS)
		n += probe_detach_group(p, GROUP_RELEASERS);
	return n;
}

__u64 probe_pause(struct rec_probe *p)
{
	p->timers_paused = true;
	return destroy_links_but(p, true);
}

int probe_resume(struct rec_probe *p, const bool off[NR_GROUPS])
{
	int i, g, failed = 0;

	p->timers_paused = false;
	for (i = 0; i < p->nr_links; i++) {
		g = p->link_groups[i];
		/* the releasers need the holders' slots: off with them */
		if (p->links[i] || p->link_cpus[i] == -2 ||
		    (g >= 0 && (off[g] || (g == GROUP_RELEASERS && off[GROUP_HOLDERS]))))
			continue;
		p->links[i] = p->link_cpus[i] >= 0 ?
			attach_timer(p->link_progs[i], p->link_cpus[i], p->timer_period_ms) :
			p->link_kept[i] >= 0 ? tplink_again(p->link_progs[i], p->link_kept[i]) :
			p->link_events[i] >= 0 ?
			attach_syscall_event(p->link_progs[i], p->link_events[i], &p->link_kept[i]) :
			attach_prog(p->link_progs[i], &p->link_kept[i]);
		failed += !p->links[i];
	}
	return failed;
}

bool probe_group_on(const struct rec_probe *p, enum rec_group_id g)
{
	return p->groups[g].attach >= 0;
}

void probe_all_off(struct rec_probe *p, const char *reason)
{
	int g;

	for (g = 0; g < NR_GROUPS; g++) {
		p->groups[g].attach = -1;
		p->groups[g].not_needed = false;
		snprintf(p->groups[g].reason, sizeof(p->groups[g].reason), "%s", reason);
	}
}

static void json_syscall_events(struct json_out *j)
{
	char event[80];
	int i, e;

	for (e = 0; e < 2; e++)
		for (i = 0; i < (e ? REC_NR_SYSCALLS : REC_TIMED_SYSCALLS); i++) {
			snprintf(event, sizeof(event), "sys_%s_%s", e ? "exit" : "enter",
				 syscall_names[i]);
			if (!tracefs_event("syscalls", event))
				continue;
			snprintf(event, sizeof(event), "syscalls:sys_%s_%s", e ? "exit" : "enter",
				 syscall_names[i]);
			json_value_string(j, event);
		}
}

/* Each tracepoint once: a group attaches two programs to one (sched:
 * sched_switch's and long_wait_switch), its list has one per program. */
static void json_tracepoint_names(struct json_out *j, const char *const *tps)
{
	int i, k;

	for (i = 0; i < GROUP_MAX_TPS && tps[i]; i++) {
		for (k = 0; k < i && strcmp(tps[k], tps[i]); k++)
			;
		if (k == i)
			json_value_string(j, tps[i]);
	}
}

void probe_json(const struct rec_probe *p, struct json_out *j, bool with_lost)
{
	int g, i;

	json_begin_array(j);
	for (g = 0; g < NR_GROUPS; g++) {
		const struct rec_group_def *def = &probe_groups[g];
		const struct rec_group_state *st = &p->groups[g];

		json_begin_object(j);
		json_string(j, "name", def->name);
		json_bool(j, "enabled", st->attach >= 0);
		if (st->attach >= 0)
			json_string(j, "attach", probe_attach_names[st->attach]);
		else
			json_null(j, "attach");
		/* what the group needs, whatever it attached to */
		json_key(j, "needs");
		json_begin_array(j);
		json_tracepoint_names(j, def->tracepoints);
		json_end_array(j);
		json_key(j, "tracepoints");
		json_begin_array(j);
		if (g == GROUP_SYSCALLS && st->attach == ATTACH_TRACEPOINT && per_syscall_events()) {
			json_syscall_events(j);
		} else {
			json_tracepoint_names(j, group_needs(g, st->attach >= 0 ? st->attach : 0));
		}
		json_end_array(j);
		if (st->reason[0])
			json_string(j, "reason", st->reason);
		else
			json_null(j, "reason");
		json_bool(j, "extra", def->extra);
		if (def->fs)
			json_string(j, "fs", def->fs);
		else
			json_null(j, "fs");
		json_bool(j, "not_needed", st->not_needed || st->replaced);
		if (def->stands_for)
			json_string(j, "stands_for", def->stands_for);
		json_bool(j, "kept_by_budget", def->kept);
		json_key(j, "kinds");
		json_begin_array(j);
		for (i = 0; i < NR_ATTACH; i++)
			if (def->kinds & (1u << i))
				json_value_string(j, probe_attach_names[i]);
		json_end_array(j);
		if (with_lost || (st->attach < 0 && !st->not_needed && !st->replaced))
			json_string(j, "lost", def->lost);
		json_end_object(j);
	}
	json_end_array(j);
}
