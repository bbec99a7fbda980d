// SPDX-License-Identifier: GPL-2.0
/* The lockscope-record/1 document (docs/recorder-json.md): turns what was
 * read from the maps into names, paths and symbolized stacks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include "json_out.h"
#include "clock.h"
#include "setup/btfname.h"
#include "read/offcpu.h"
#include "resolve/paths.h"
#include "emit/series.h"
#include "emit/recording.h"
#include "record.skel.h"
#include "emit/document.h"
#include "resolve/tasks.h"
#include "emit/iowq_json.h"
#include "emit/holder_json.h"
#include "setup/syscall_names.h"
#include "setup/opts.h"
#include "attach/duty.h"

#define SCHEMA "lockscope-record/1"

static const char *const class_names[DC_MAX] = {
	[DC_WRITE] = "writes", [DC_READ] = "reads", [DC_ALIGNED] = "aligned",
	[DC_UNALIGNED] = "unaligned", [DC_EXTENDING] = "extending", [DC_HOLE] = "hole",
	[DC_UNWRITTEN] = "unwritten", [DC_MAPPED] = "mapped", [DC_DSYNC] = "dsync",
	[DC_BUFFERED] = "buffered_writes", [DC_ALLOCATING] = "allocating", [DC_AIO] = "aio",
	[DC_CONVERTED] = "unwritten_converted",
};

static const char *const map_full_names[DROP_OTHER_FULL + 1] = {
	[DROP_LOCKS_FULL] = "locks", [DROP_INODES_FULL] = "inodes", [DROP_TASKS_FULL] = "threads",
	[DROP_OFFCPU_FULL] = "offcpu", [DROP_DIO_FULL] = "dio", [DROP_INFLIGHT_FULL] = "inflight",
	[DROP_OTHER_FULL] = "other",
};

/* ---- small helpers ---- */

static void names_json(struct json_out *j, const char *key, const char *const *names, int from,
		       int to)
{
	int i;

	json_key(j, key);
	json_begin_array(j);
	for (i = from; i < to; i++)
		json_value_string(j, names[i]);
	json_end_array(j);
}

static void dev_string(__u32 kdev, char *buf, size_t len)
{
	snprintf(buf, len, "%u:%u", kdev >> 20, kdev & 0xfffff);
}

static void json_dev(struct json_out *j, const char *key, __u32 kdev)
{
	char buf[32];

	dev_string(kdev, buf, sizeof(buf));
	json_string(j, key, buf);
}

static void json_hist(struct json_out *j, const __u64 *hist)
{
	int last = REC_HIST_SLOTS - 1, i;

	while (last >= 0 && !hist[last])
		last--;
	json_key(j, "hist_log2_ns");
	json_begin_array(j);
	for (i = 0; i <= last; i++)
		json_value_uint(j, hist[i]);
	json_end_array(j);
}

static void json_lat(struct json_out *j, const char *key, const struct lat_stat *l)
{
	if (key) {
		json_key(j, key);
		json_begin_object(j);
	}
	json_uint(j, "count", l->count);
	json_uint(j, "total_ns", l->total_ns);
	json_uint(j, "max_ns", l->max_ns);
	json_hist(j, l->hist);
	if (key)
		json_end_object(j);
}

static void json_count_ns(struct json_out *j, const char *key, __u64 count, __u64 ns)
{
	json_key(j, key);
	json_begin_object(j);
	json_uint(j, "count", count);
	json_uint(j, "total_ns", ns);
	json_end_object(j);
}

static void json_frames(struct json_out *j, const char *key, const struct frames *f)
{
	int i;

	json_key(j, key);
	json_begin_array(j);
	for (i = 0; f && i < f->n; i++)
		json_value_string(j, f->f[i]);
	json_end_array(j);
}

static int cmp_inode_addr(const void *a, const void *b)
{
	const struct rec_inode *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const struct rec_inode *inode_of(struct rec_session *s, __u64 addr)
{
	struct rec_inode key = { .addr = addr };

	return bsearch(&key, s->data.inodes, s->data.nr_inodes, sizeof(key), cmp_inode_addr);
}

/* Every inode the sections may name, wanted before the first lookup: one
 * walk of a device's mounts then looks for them all (resolve/paths.h). */
static void want_paths(struct rec_session *s)
{
	size_t i;

	for (i = 0; i < s->data.nr_inodes; i++)
		paths_want(s->paths, s->data.inodes[i].v.dev, s->data.inodes[i].v.ino);
	for (i = 0; i < s->data.nr_dio; i++)
		paths_want(s->paths, s->data.dio[i].k.dev, s->data.dio[i].k.ino);
}

/* ---- top-level sections ---- */

static void write_header(struct rec_session *s, struct json_out *j)
{
	const struct rec_opts *o = s->opts;
	struct utsname u;
	int i;

	json_string(j, "schema", SCHEMA);
	json_key(j, "argv");
	json_begin_array(j);
	for (i = 0; i < o->argc; i++)
		json_value_string(j, o->argv[i]);
	json_end_array(j);
	json_string(j, "kernel", uname(&u) == 0 ? u.release : "");
	json_int(j, "pid", getpid());

	json_key(j, "interval");
	json_begin_object(j);
	json_uint(j, "start_mono_ns", s->start_mono);
	json_uint(j, "end_mono_ns", s->end_mono);
	json_uint(j, "duration_ns", s->end_mono > s->start_mono ? s->end_mono - s->start_mono : 0);
	json_uint(j, "observed_ns", duty_observed(&s->duty, s->end_mono));
	json_uint(j, "start_wall_ns", s->start_wall);
	json_uint(j, "end_wall_ns", s->end_wall);
	json_end_object(j);
	duty_json(&s->duty, j, s->end_mono);

	json_key(j, "filter");
	json_begin_object(j);
	json_key(j, "pids");
	json_begin_array(j);
	for (i = 0; i < s->filter.nr_pids; i++)
		json_value_int(j, s->filter.pids[i]);
	json_end_array(j);
	if (s->filter.comm)
		json_string(j, "comm", s->filter.comm);
	else
		json_null(j, "comm");
	if (s->filter.cgroup) {
		json_string(j, "cgroup", s->filter.cgroup);
		json_uint(j, "cgroup_id", s->filter.cgroup_id);
		json_string(j, "cgroup_match", s->filter.cgroup_helper ? "helper" : "ancestors");
	} else {
		json_null(j, "cgroup");
	}
	json_end_object(j);

	json_key(j, "features");
	probe_json(&s->probe, j, false);

	json_key(j, "decoding");
	json_begin_array(j);
	for (i = 0; i < TPFMT_NR_SOURCES; i++) {
		json_begin_object(j);
		json_string(j, "event", s->decoding[i].event);
		json_string(j, "field", s->decoding[i].field);
		json_string(j, "source", !s->decoding[i].decoded ? "default" :
			    strncmp(s->decoding[i].event, "btf:", 4) ? "tracefs" : "btf");
		json_end_object(j);
	}
	json_end_array(j);

	json_key(j, "config");
	json_begin_object(j);
	json_uint(j, "max_locks", o->max_locks);
	json_uint(j, "max_stacks", o->max_stacks);
	json_uint(j, "stack_depth", o->stack_depth);
	json_uint(j, "max_inodes", o->max_inodes);
	json_uint(j, "max_threads", o->max_threads);
	json_uint(j, "max_offcpu", o->max_offcpu);
	json_uint(j, "max_inflight", o->max_inflight);
	json_uint(j, "min_block_us", o->min_block_us);
	json_uint(j, "stack_refresh_ms", o->stack_refresh_ms);
	json_uint(j, "long_wait_us", o->long_wait_us);
	json_bool(j, "user_stacks", o->user_stacks);
	json_bool(j, "maps_preallocated", s->maps_preallocated);
	if (s->maps_preallocated)
		json_uint(j, "prealloc_bytes", s->prealloc_bytes);
	json_end_object(j);
}

/* Whether long waits were followed (--long-wait-us): else their tallies are null. */
static bool long_waits_followed(const struct rec_session *s)
{
	return s->opts->long_wait_us != 0;
}

/* A long-wait tally, null when long waits were not followed (--long-wait-us 0). */
static void long_wait_uint(struct json_out *j, const char *key, bool followed, __u64 v)
{
	if (followed)
		json_uint(j, key, v);
	else
		json_null(j, key);
}

/* The losses of tallies d, as the object "drops" (totals are lower bounds). */
static void write_drops(const struct rec_session *s, struct json_out *j, const __u64 *d)
{
	bool long_waits = long_waits_followed(s);
	__u64 full = 0;
	int i;

	for (i = 0; i <= DROP_OTHER_FULL; i++)
		full += d[i];
	json_key(j, "drops");
	json_begin_object(j);
	json_uint(j, "map_full", full);
	json_uint(j, "stack_missing", d[DROP_STACK_MISSING] + d[DROP_USTACK_MISSING]);
	json_uint(j, "kernel_stack_missing", d[DROP_STACK_MISSING]);
	json_uint(j, "user_stack_missing", d[DROP_USTACK_MISSING]);
	json_uint(j, "user_stack_ring_full", d[DROP_USTACK_RINGBUF]);
	json_uint(j, "nested_begin", d[DROP_NESTED_BEGIN]);
	json_uint(j, "end_without_begin", d[DROP_END_WITHOUT_BEGIN]);
	json_uint(j, "dio_untracked", d[DROP_DIO_UNTRACKED]);
	json_uint(j, "calls_lost", d[DROP_CALL_LOST]);
	long_wait_uint(j, "long_wait_kernel_stack_missing", long_waits, d[DROP_LONG_KSTACK]);
	long_wait_uint(j, "long_wait_user_stack_missing", long_waits, d[DROP_LONG_USTACK]);
	long_wait_uint(j, "long_wait_stacks_full", long_waits, d[DROP_LONG_TASK_STACKS_FULL]);
	long_wait_uint(j, "long_wait_switch_in_unseen", long_waits,
		       d[DROP_LONG_SWITCH_IN_UNSEEN]);
	json_key(j, "map_full_by_map");
	json_begin_object(j);
	for (i = 0; i <= DROP_OTHER_FULL; i++)
		json_uint(j, map_full_names[i], d[i]);
	json_end_object(j);
	json_end_object(j);
}

/* "drops" and "counts" (not losses). */
static void write_drops_and_counts(struct rec_session *s, struct json_out *j)
{
	const __u64 *d = s->data.tallies;
	bool long_waits = long_waits_followed(s);

	write_drops(s, j, d);
	/* not losses */
	json_key(j, "counts");
	json_begin_object(j);
	json_uint(j, "repeat_begin", d[COUNT_REPEAT_BEGIN]);
	json_uint(j, "offcpu_stacks_walked", d[COUNT_STACKS_WALKED]);
	json_uint(j, "lock_stacks_reused", d[COUNT_LOCK_STACKS_REUSED]);
	json_uint(j, "lock_stacks_walked", d[COUNT_LOCK_STACKS_WALKED]);
	json_uint(j, "offcpu_unsampled", d[COUNT_OFFCPU_UNSAMPLED]);
	json_uint(j, "user_stacks_copied", d[COUNT_USTACKS_COPIED]);
	json_uint(j, "calls_handed_off", d[COUNT_CALLS_HANDED_OFF]);
	long_wait_uint(j, "long_waits", long_waits, d[COUNT_LONG_WAITS]);
	long_wait_uint(j, "long_lock_waits", long_waits, d[COUNT_LONG_LOCK_WAITS]);
	long_wait_uint(j, "long_wait_switch_in_unseen_ns", long_waits, d[COUNT_LONG_UNSEEN_NS]);
	long_wait_uint(j, "long_wait_kernel_stacks_reused", long_waits,
		       d[COUNT_LONG_KSTACKS_REUSED]);
	json_uint(j, "user_stacks_unwound", s->stacks.unwind.samples);
	json_uint(j, "unwind_cpu_us", s->stacks.unwind.cpu_ns / 1000);
	json_end_object(j);
}

static void write_threads(struct rec_session *s, struct json_out *j)
{
	char comm[32];
	size_t i;

	json_key(j, "threads");
	json_begin_array(j);
	for (i = 0; i < s->data.nr_tasks; i++) {
		const struct rec_task *t = &s->data.tasks[i];

		if (s->in_series && !t->v.oncpu_ns && !t->v.offcpu_ns && !t->v.runq_ns)
			continue;
		json_begin_object(j);
		json_uint(j, "tid", t->tid);
		json_uint(j, "pid", t->v.pid);
		tasks_comm_string(t->v.comm, comm, sizeof(comm));
		json_string(j, "comm", comm);
		json_uint(j, "oncpu_ns", t->v.oncpu_ns);
		json_uint(j, "offcpu_ns", t->v.offcpu_ns);
		json_uint(j, "runqueue_ns", t->v.runq_ns);
		json_end_object(j);
	}
	json_end_array(j);
}

/* Socket and pipe traffic per process, summed over its threads (sorted by
 * tid, so a process's threads are not adjacent: a small scan per pid). */
static void write_net(struct rec_session *s, struct json_out *j)
{
	char comm[32];
	size_t i, k;

	json_key(j, "net");
	json_begin_array(j);
	for (i = 0; i < s->data.nr_tasks; i++) {
		const struct task_val *t = &s->data.tasks[i].v;
		__u64 v[5] = { 0 };
		bool first = true;

		for (k = 0; k < i && first; k++)
			first = s->data.tasks[k].v.pid != t->pid;
		if (!first)
			continue;
		for (k = i; k < s->data.nr_tasks; k++) {
			const struct task_val *u = &s->data.tasks[k].v;

			if (u->pid != t->pid)
				continue;
			v[0] += u->rx_calls;
			v[1] += u->rx_bytes;
			v[2] += u->tx_calls;
			v[3] += u->tx_bytes;
			v[4] += u->tx_writes;
		}
		if (!v[0] && !v[2])
			continue;
		json_begin_object(j);
		json_uint(j, "pid", t->pid);
		json_string(j, "comm", tasks_pid_comm(&s->data, t->pid, comm, sizeof(comm)));
		json_uint(j, "rx_calls", v[0]);
		json_uint(j, "rx_bytes", v[1]);
		json_uint(j, "tx_calls", v[2]);
		json_uint(j, "tx_bytes", v[3]);
		json_uint(j, "tx_write_calls", v[4]);
		json_end_object(j);
	}
	json_end_array(j);
}

/* ---- locks ---- */

struct lock_group {
	size_t first, n;
	__u64 total;
};

static int cmp_lock_entry(const void *a, const void *b)
{
	const struct rec_lock *x = a, *y = b;

	if (x->k.addr != y->k.addr)
		return x->k.addr < y->k.addr ? -1 : 1;
	return x->v.total_ns > y->v.total_ns ? -1 : x->v.total_ns < y->v.total_ns;
}

static int cmp_group_total(const void *a, const void *b)
{
	const struct lock_group *x = a, *y = b;

	return x->total > y->total ? -1 : x->total < y->total;
}

static void write_wait(struct rec_session *s, struct json_out *j, const struct rec_lock *l)
{
	const char *names[8];
	static struct frames user;
	const struct frames *kern = stacks_kernel(&s->stacks, l->k.kstack);
	bool have_user = l->k.ustack != REC_NO_STACK &&
			 stacks_user(&s->stacks, l->k.ustack, l->k.pid, &user);
	char comm[32];
	__u32 flags = l->k.flags & ~REC_LOCK_LONG;
	int n = tpfmt_lock_flag_names(flags, names, 8), i;

	tasks_pid_comm(&s->data, l->k.pid, comm, sizeof(comm));
	json_begin_object(j);
	json_uint(j, "flags", flags);
	/* every wait of at least --long-wait-us, in every phase */
	json_bool(j, "long", l->k.flags & REC_LOCK_LONG);
	json_key(j, "flag_names");
	json_begin_array(j);
	for (i = 0; i < n; i++)
		json_value_string(j, names[i]);
	json_end_array(j);
	json_frames(j, "kstack", kern);
	json_frames(j, "ustack", have_user ? &user : NULL);
	json_uint(j, "pid", l->k.pid);
	json_string(j, "comm", comm);
	json_uint(j, "count", l->v.count);
	json_uint(j, "total_ns", l->v.total_ns);
	json_uint(j, "max_ns", l->v.max_ns);
	json_uint(j, "interrupted", l->v.interrupted);
	json_uint(j, "repeats", l->v.repeats);
	json_count_ns(j, "exclusive_held", l->v.excl_count, l->v.excl_ns);
	json_count_ns(j, "readers_held", l->v.reader_count, l->v.reader_ns);
	json_hist(j, l->v.hist);
	json_end_object(j);
}

static void write_lock(struct rec_session *s, struct json_out *j, const struct lock_group *g,
		       struct btfname *members)
{
	const struct rec_lock *l = &s->data.locks[g->first];
	const struct rec_inode *ino = inode_of(s, l->k.addr);
	__u64 count = 0, max = 0, excl = 0, excl_ns = 0, rd = 0, rd_ns = 0, intr = 0;
	char buf[256];
	const char *name = NULL, *kind = "unknown", *path = NULL;
	struct rec_inode inside = {};
	int pid = 0;
	size_t i;

	for (i = 0; i < g->n; i++) {
		const struct lock_val *v = &l[i].v;

		count += v->count;
		max = v->max_ns > max ? v->max_ns : max;
		excl += v->excl_count;
		excl_ns += v->excl_ns;
		rd += v->reader_count;
		rd_ns += v->reader_ns;
		intr += v->interrupted;
	}
	if (ino && btfname_kind(ino->v.kind)) {
		kind = btfname_kind(ino->v.kind);
		path = paths_lookup(s->paths, ino->v.dev, ino->v.ino, ino->v.pid);
	} else if (btfname_lookup(members, l->k.addr, buf, 128, &inside.v.dev, &inside.v.ino, &pid)) {
		/* another lock inside a known inode object: named by its member */
		name = buf;
		inside.v.pid = pid;
		ino = &inside;
		path = paths_lookup(s->paths, inside.v.dev, inside.v.ino, pid);
	} else if ((name = stacks_data_name(&s->stacks, l->k.addr, buf, 128))) {
		kind = "global";
	}
	json_begin_object(j);
	snprintf(buf + 128, 32, "0x%llx", (unsigned long long)l->k.addr);
	json_string(j, "addr", buf + 128);
	json_string(j, "kind", kind);
	if (name)
		json_string(j, "name", name);
	else
		json_null(j, "name");
	if (ino) {
		json_dev(j, "dev", ino->v.dev);
		json_uint(j, "ino", ino->v.ino);
	} else {
		json_null(j, "dev");
		json_null(j, "ino");
	}
	if (path)
		json_string(j, "path", path);
	else
		json_null(j, "path");
	json_uint(j, "count", count);
	json_uint(j, "total_ns", g->total);
	json_uint(j, "max_ns", max);
	json_uint(j, "interrupted", intr);
	json_count_ns(j, "exclusive_held", excl, excl_ns);
	json_count_ns(j, "readers_held", rd, rd_ns);
	json_key(j, "waits");
	json_begin_array(j);
	for (i = 0; i < g->n; i++)
		write_wait(s, j, &l[i]);
	json_end_array(j);
	json_end_object(j);
}

/* Series intervals reuse one set of names: loading kernel BTF costs
 * milliseconds each time. */
static struct btfname *lock_names(struct rec_session *s)
{
	if (!s->in_series)
		return btfname_new();
	if (!s->series_names)
		s->series_names = btfname_new();
	btfname_clear(s->series_names);
	return s->series_names;
}

static void write_locks(struct rec_session *s, struct json_out *j)
{
	struct btfname *members = lock_names(s);
	struct rec_lock *locks = s->data.locks;
	size_t n = s->data.nr_locks, i, ng = 0;
	struct lock_group *groups = calloc(n ? n : 1, sizeof(*groups));

	json_key(j, "locks");
	json_begin_array(j);
	if (!groups) {
		json_end_array(j);
		if (members != s->series_names)
			btfname_free(members);
		return;
	}
	for (i = 0; i < s->data.nr_inodes; i++)
		btfname_add(members, s->data.inodes[i].addr, s->data.inodes[i].v.kind,
			    s->data.inodes[i].v.dev, s->data.inodes[i].v.ino, s->data.inodes[i].v.pid);
	qsort(locks, n, sizeof(*locks), cmp_lock_entry);
	for (i = 0; i < n; i++) {
		if (!ng || locks[i].k.addr != locks[groups[ng - 1].first].k.addr)
			groups[ng++] = (struct lock_group){ .first = i };
		groups[ng - 1].n++;
		groups[ng - 1].total += locks[i].v.total_ns;
	}
	qsort(groups, ng, sizeof(*groups), cmp_group_total);
	for (i = 0; i < ng; i++)
		write_lock(s, j, &groups[i], members);
	json_end_array(j);
	free(groups);
	if (members != s->series_names)
		btfname_free(members);
}

/* ---- per-inode I/O ---- */

static int cmp_dio(const void *a, const void *b)
{
	const struct rec_dio *x = a, *y = b;
	__u64 wx = x->v.bytes[DC_WRITE] + x->v.bytes[DC_BUFFERED];
	__u64 wy = y->v.bytes[DC_WRITE] + y->v.bytes[DC_BUFFERED];

	return wx > wy ? -1 : wx < wy;
}

/* A pid that touched the inode: from the address map, for /proc/PID/fd. */
static int inode_pid(struct rec_session *s, __u32 dev, __u64 ino)
{
	size_t i;

	for (i = 0; i < s->data.nr_inodes; i++)
		if (s->data.inodes[i].v.dev == dev && s->data.inodes[i].v.ino == ino)
			return s->data.inodes[i].v.pid;
	return 0;
}

/* Whether the dio group's programs read each DIO write's i_rwsem mode (they
 * have its inode: not the classic tracepoint) and its dio_flags (the
 * tracepoint's record has them: not fentry/kprobe on __iomap_dio_rw). */
static bool dio_mode_measured(const struct rec_session *s)
{
	int a = s->probe.groups[GROUP_DIO].attach;

	return a >= 0 && a != ATTACH_TRACEPOINT && s->probe.skel && s->probe.skel->bss &&
	       !s->probe.skel->bss->dio_mode_unreadable;
}

static bool dio_flags_read(const struct rec_session *s)
{
	int a = s->probe.groups[GROUP_DIO].attach;

	return a == ATTACH_TP_BTF || a == ATTACH_RAW_TP || a == ATTACH_TRACEPOINT;
}

/* "dio_lock_mode": what the per-class exclusive/shared and flag counts
 * stand for in this document (absent keys: not measured, never 0). */
static void write_dio_lock_mode(const struct rec_session *s, struct json_out *j)
{
	int a = s->probe.groups[GROUP_DIO].attach;

	json_key(j, "dio_lock_mode");
	json_begin_object(j);
	json_bool(j, "measured", dio_mode_measured(s));
	json_bool(j, "dio_flags", dio_flags_read(s));
	if (dio_mode_measured(s))
		json_null(j, "reason");
	else if (a < 0)
		json_string(j, "reason", "the dio group is off");
	else if (a == ATTACH_TRACEPOINT)
		json_string(j, "reason", "classic tracepoint: no inode pointer to read i_rwsem from");
	else
		json_string(j, "reason", "the kernel's rw_semaphore has no count or owner word "
			    "(PREEMPT_RT)");
	json_end_object(j);
}

/* The classes a DIO write's lock mode and flags are counted in. */
static bool mode_class(int c)
{
	return c != DC_READ && c != DC_BUFFERED && c != DC_CONVERTED;
}

static void write_dio(struct rec_session *s, struct json_out *j)
{
	bool mode = dio_mode_measured(s), flags = dio_flags_read(s);
	size_t i;
	int c;

	qsort(s->data.dio, s->data.nr_dio, sizeof(*s->data.dio), cmp_dio);
	json_key(j, "dio");
	json_begin_array(j);
	for (i = 0; i < s->data.nr_dio; i++) {
		const struct rec_dio *d = &s->data.dio[i];
		const char *path = paths_lookup(s->paths, d->k.dev, d->k.ino,
						inode_pid(s, d->k.dev, d->k.ino));

		json_begin_object(j);
		json_dev(j, "dev", d->k.dev);
		json_uint(j, "ino", d->k.ino);
		if (path)
			json_string(j, "path", path);
		else
			json_null(j, "path");
		if (d->v.blksize)
			json_uint(j, "fs_block_size", d->v.blksize);
		else
			json_null(j, "fs_block_size");
		for (c = 0; c < DC_MAX; c++) {
			json_key(j, class_names[c]);
			json_begin_object(j);
			json_uint(j, "count", d->v.count[c]);
			json_uint(j, "bytes", d->v.bytes[c]);
			if (mode && mode_class(c)) {
				json_uint(j, "exclusive", d->v.exclusive[c]);
				json_uint(j, "shared", d->v.shared[c]);
			}
			if (flags && mode_class(c)) {
				json_uint(j, "force_wait", d->v.force_wait[c]);
				json_uint(j, "overwrite_only", d->v.overwrite_only[c]);
			}
			json_end_object(j);
		}
		json_lat(j, "latency", &d->v.write_lat);
		json_lat(j, "read_latency", &d->v.read_lat);
		json_lat(j, "pre_iomap", &d->v.pre_iomap);
		json_lat(j, "fsync", &d->v.sync_lat);
		json_lat(j, "sync_file_range", &d->v.range_lat);
		json_lat(j, "dsync_writes", &d->v.dsync_lat);
		iowq_json_file(s, j, d);
		json_end_object(j);
	}
	json_end_array(j);
}

/* ---- off-CPU ---- */

/* The kernel's own reason only: what blocked time waited for (I/O, the
 * journal, a client, ...) is classed by the analyzer from the stacks and the
 * system call (analysis/waitclass.py), so a new rule needs no new recording. */
static const char *offcpu_reason(const struct rec_offcpu *o)
{
	__u32 reason = o->k.reason & ~REC_OFF_LONG;

	if (reason == OFF_LOCK)
		return "lock";
	if (reason == OFF_RUNQUEUE)
		return "runqueue";
	return "blocked";
}

static int cmp_offcpu(const void *a, const void *b)
{
	const struct rec_offcpu *x = a, *y = b;

	return x->v.total_ns > y->v.total_ns ? -1 : x->v.total_ns < y->v.total_ns;
}

static void write_offcpu(struct rec_session *s, struct json_out *j)
{
	static struct frames user;
	char comm[32], addr[32];
	size_t i;

	offcpu_spread(&s->data);
	qsort(s->data.offcpu, s->data.nr_offcpu, sizeof(*s->data.offcpu), cmp_offcpu);
	json_key(j, "offcpu");
	json_begin_array(j);
	for (i = 0; i < s->data.nr_offcpu; i++) {
		const struct rec_offcpu *o = &s->data.offcpu[i];
		const struct frames *kern = stacks_kernel(&s->stacks, o->k.kstack);
		bool have_user = o->k.ustack != REC_NO_STACK &&
				 stacks_user(&s->stacks, o->k.ustack, o->k.pid, &user);

		tasks_tid_comm(&s->data, o->k.tid, o->k.pid, comm, sizeof(comm));
		json_begin_object(j);
		json_uint(j, "tid", o->k.tid);
		json_uint(j, "pid", o->k.pid);
		json_string(j, "comm", comm);
		json_string(j, "reason", offcpu_reason(o));
		if (o->k.lock_addr) {
			snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)o->k.lock_addr);
			json_string(j, "lock_addr", addr);
		} else {
			json_null(j, "lock_addr");
		}
		json_frames(j, "kstack", kern);
		json_frames(j, "ustack", have_user ? &user : NULL);
		if (o->k.syscall != REC_NO_SYSCALL) {
			json_uint(j, "syscall", o->k.syscall & ~REC_SYSCALL_DSYNC);
			if (o->k.syscall & REC_SYSCALL_DSYNC)
				json_bool(j, "dsync", true);
		} else {
			json_null(j, "syscall");
		}
		json_uint(j, "count", o->v.count);
		json_uint(j, "total_ns", o->v.total_ns);
		json_uint(j, "sampled_count", o->sampled.count);
		json_uint(j, "sampled_ns", o->sampled.total_ns);
		/* every wait of at least --long-wait-us, in every phase */
		json_bool(j, "long", o->k.reason & REC_OFF_LONG);
		json_end_object(j);
	}
	json_end_array(j);
}

/* ---- block, syscalls, jbd2 ---- */

static void block_name(__u32 kdev, char *buf, size_t len)
{
	char path[128], line[64];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", kdev >> 20, kdev & 0xfffff);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "DEVNAME=", 8)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(buf, len, "%s", line + 8);
		}
	}
	if (f)
		fclose(f);
}

/* What the device did over the time observed (s->view_ns): the sum of its
 * requests' service times, their mean number in flight (that sum over the
 * time: Little's law) and, where the programs count requests in flight
 * (kern/block.bpf.inc), the time it had at least one, and that as a share. */
static void write_device_time(struct rec_session *s, struct json_out *j, const struct rec_block *b)
{
	__u64 view = s->view_ns;

	json_uint(j, "service_ns_total", b->v.total_ns);
	json_uint(j, "observed_ns", view);
	if (view)
		json_double(j, "inflight_mean", (double)b->v.total_ns / view);
	else
		json_null(j, "inflight_mean");
	if (!s->probe.block_busy) {
		json_null(j, "busy_ns");
		json_null(j, "busy_share");
		json_string(j, "busy_unmeasured", "the kernel's BPF has no atomic fetch-and-add "
			    "(5.12+), which counting requests in flight needs");
		return;
	}
	json_uint(j, "busy_ns", b->busy_ns);
	if (view)
		json_double(j, "busy_share", b->busy_ns > view ? 1.0 : (double)b->busy_ns / view);
	else
		json_null(j, "busy_share");
	if (view)
		json_null(j, "busy_unmeasured");
	else
		json_string(j, "busy_unmeasured", "no time observed");
}

static void write_block(struct rec_session *s, struct json_out *j)
{
	char name[64];
	size_t i;

	json_key(j, "block");
	json_begin_array(j);
	for (i = 0; i < s->data.nr_block; i++) {
		json_begin_object(j);
		json_dev(j, "dev", s->data.block[i].dev);
		block_name(s->data.block[i].dev, name, sizeof(name));
		if (name[0])
			json_string(j, "name", name);
		else
			json_null(j, "name");
		json_lat(j, NULL, &s->data.block[i].v);
		write_device_time(s, j, &s->data.block[i]);
		json_end_object(j);
	}
	json_end_array(j);
}

static void write_syscalls(struct rec_session *s, struct json_out *j)
{
	int i;

	json_key(j, "syscalls");
	json_begin_array(j);
	for (i = 0; i < REC_TIMED_SYSCALLS; i++) {
		const struct syscall_stat *c = &s->data.syscalls[i];

		if (s->in_series && !c->calls)
			continue;
		json_begin_object(j);
		json_string(j, "name", syscall_names[i]);
		/* the kind travels with the call: an analysis needs no recorder binary */
		json_string(j, "kind", syscall_names_kind(i));
		/* every call counted; the times are of the timed ones */
		json_uint(j, "count", c->calls);
		json_uint(j, "timed", c->lat.count);
		json_uint(j, "total_ns", c->lat.total_ns);
		json_uint(j, "max_ns", c->lat.max_ns);
		json_hist(j, c->lat.hist);
		json_end_object(j);
	}
	json_end_array(j);
}

static void json_jiffies(struct rec_session *s, struct json_out *j, const char *name, __u64 jiffies)
{
	char key[64];

	snprintf(key, sizeof(key), "%s_jiffies", name);
	json_uint(j, key, jiffies);
	snprintf(key, sizeof(key), "%s_ms", name);
	if (s->hz)
		json_double(j, key, jiffies * 1000.0 / s->hz);
	else
		json_null(j, key);
}

static void write_jbd2(struct rec_session *s, struct json_out *j)
{
	size_t i;

	json_key(j, "jbd2");
	json_begin_object(j);
	if (s->hz)
		json_uint(j, "hz", s->hz);
	else
		json_null(j, "hz");
	json_key(j, "handles");
	json_begin_array(j);
	for (i = 0; i < s->data.nr_handles; i++) {
		const struct rec_handle *h = &s->data.handles[i];

		json_begin_object(j);
		json_dev(j, "dev", h->k.dev);
		json_uint(j, "type", h->k.type);
		json_uint(j, "line_no", h->k.line_no);
		json_uint(j, "starts", h->v.starts);
		json_uint(j, "requested_blocks", h->v.requested_blocks);
		json_uint(j, "stops", h->v.stats);
		json_jiffies(s, j, "interval", h->v.interval_jiffies);
		json_uint(j, "sync", h->v.sync);
		json_uint(j, "dirtied_blocks", h->v.dirtied_blocks);
		json_end_object(j);
	}
	json_end_array(j);
	json_key(j, "commits");
	json_begin_array(j);
	for (i = 0; i < s->data.nr_commits; i++) {
		const struct rec_commit *c = &s->data.commits[i];

		json_begin_object(j);
		json_dev(j, "dev", c->dev);
		json_uint(j, "count", c->v.count);
		json_jiffies(s, j, "wait", c->v.wait);
		json_jiffies(s, j, "request_delay", c->v.request_delay);
		json_jiffies(s, j, "running", c->v.running);
		json_jiffies(s, j, "locked", c->v.locked);
		json_jiffies(s, j, "flushing", c->v.flushing);
		json_jiffies(s, j, "logging", c->v.logging);
		json_jiffies(s, j, "max_locked", c->v.max_locked);
		json_jiffies(s, j, "max_running", c->v.max_running);
		json_uint(j, "handle_count", c->v.handle_count);
		json_uint(j, "blocks", c->v.blocks);
		json_uint(j, "blocks_logged", c->v.blocks_logged);
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
}

/* The sections both the whole window and each interval of a series have, in order. */
static void write_activity(struct rec_session *s, struct json_out *j)
{
	qsort(s->data.tasks, s->data.nr_tasks, sizeof(*s->data.tasks), tasks_cmp_tid);
	qsort(s->data.inodes, s->data.nr_inodes, sizeof(*s->data.inodes), cmp_inode_addr);
	write_threads(s, j);
	write_locks(s, j);
	write_dio(s, j);
	write_offcpu(s, j);
	write_block(s, j);
	write_syscalls(s, j);
	write_net(s, j);
}

int document_write(struct rec_session *s, FILE *f)
{
	struct json_out j = JSON_OUT_INIT(f);

	want_paths(s);
	json_begin_object(&j);
	write_header(s, &j);
	write_drops_and_counts(s, &j);
	s->view_ns = duty_observed(&s->duty, s->end_mono);
	write_activity(s, &j);
	write_dio_lock_mode(s, &j);
	iowq_json_write(s, &j);
	write_jbd2(s, &j);
	holder_json_write(s, &j);
	if (s->ovh_ready)
		overhead_json(&s->ovh, &j);
	if (s->series)
		series_json(s->series, &j);
	json_end_object(&j);
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

static void json_occupancy(struct json_out *j, const char *name, size_t n, const struct bpf_map *m)
{
	json_key(j, name);
	json_begin_object(j);
	json_uint(j, "entries", n);
	json_uint(j, "max_entries", bpf_map__max_entries(m));
	json_end_object(j);
}

/* What a long recording watches to know it stays bounded: the entries of the
 * keyed maps now, and the drops since the start. */
static void write_state(struct rec_session *s, const struct rec_data *cur, struct json_out *j)
{
	struct record_bpf *skel = s->probe.skel;

	json_key(j, "state");
	json_begin_object(j);
	json_key(j, "maps");
	json_begin_object(j);
	json_occupancy(j, "locks", cur->nr_locks, skel->maps.lock_stats);
	json_occupancy(j, "inodes", cur->nr_inodes, skel->maps.inode_locks);
	json_occupancy(j, "threads", cur->nr_tasks, skel->maps.tasks);
	json_occupancy(j, "offcpu", cur->nr_offcpu, skel->maps.offcpu);
	json_occupancy(j, "dio", cur->nr_dio, skel->maps.dio_stats);
	json_occupancy(j, "jbd2_handles", cur->nr_handles, skel->maps.jbd2_handles);
	json_occupancy(j, "jbd2_commits", cur->nr_commits, skel->maps.jbd2_commits);
	json_end_object(j);
	write_drops(s, j, cur->tallies);
	duty_json(&s->duty, j, clock_ns(CLOCK_MONOTONIC));
	json_end_object(j);
}

int document_write_interval(struct rec_session *s, struct rec_data *delta,
			    const struct rec_data *cur, __u64 start, __u64 end,
			    __u64 observed, bool reread, FILE *f)
{
	struct json_out j = JSON_OUT_INIT(f);
	struct rec_data whole = s->data;

	/* the section writers read s->data: the delta stands in for it */
	s->data = *delta;
	s->in_series = true;
	want_paths(s);
	s->view_ns = observed;
	json_begin_object(&j);
	json_key(&j, "interval");
	json_begin_object(&j);
	json_uint(&j, "start_mono_ns", start);
	json_uint(&j, "end_mono_ns", end);
	json_uint(&j, "duration_ns", end - start);
	json_uint(&j, "observed_ns", observed);
	json_end_object(&j);
	write_activity(s, &j);
	overhead_interval_json(&s->ovh, &j, end, observed, reread);
	write_state(s, cur, &j);
	json_end_object(&j);
	*delta = s->data;
	s->data = whole;
	s->in_series = false;
	return ferror(f) ? -EIO : 0;
}

void document_interval(struct rec_session *s, struct rec_data *cur, __u64 now, bool reread)
{
	struct rec_series *ser = s->series;
	struct rec_data delta;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;

	/* raised first: what an earlier read had, this one counts too */
	if (now <= ser->last_mono || offcpu_raise(cur, &ser->prev) ||
	    read_delta(cur, &ser->prev, &delta)) {
		read_free(cur);
		return;
	}
	mem = open_memstream(&buf, &len);
	if (mem) {
		document_write_interval(s, &delta, cur, ser->last_mono, now,
					duty_observed(&s->duty, now) - ser->last_observed, reread, mem);
		fputc('\n', mem);
		fclose(mem);
	}
	if (buf)
		series_add(ser, buf, len);
	else
		ser->nr_omitted++;
	free(buf);
	read_free(&delta);
	read_free(&ser->prev);
	ser->prev = *cur;
	memset(cur, 0, sizeof(*cur));
	ser->last_mono = now;
	ser->last_observed = duty_observed(&s->duty, now);
}

void document_facts(struct json_out *j)
{
	const char *kinds[NR_LOCK_KINDS];
	__u32 k;

	json_key(j, "syscalls");
	json_begin_object(j);
	names_json(j, "write", syscall_names, 0, REC_SYNC_FIRST);
	names_json(j, "sync", syscall_names, REC_SYNC_FIRST, REC_SYNC_RANGE);
	names_json(j, "sync_range", syscall_names, REC_SYNC_RANGE, REC_TIMED_SYSCALLS);
	names_json(j, "received", syscall_names, REC_RX_FIRST, REC_TX_FIRST);
	names_json(j, "sent", syscall_names, REC_TX_FIRST, REC_NR_SYSCALLS);
	json_end_object(j);
	names_json(j, "dio_write_classes", class_names, DC_ALIGNED, DC_DSYNC + 1);
	for (k = 0; k < NR_LOCK_KINDS; k++)
		kinds[k] = btfname_kind(k);
	names_json(j, "inode_lock_kinds", kinds, KIND_UNKNOWN + 1, NR_LOCK_KINDS);
	names_json(j, "attach_kinds", probe_attach_names, 0, NR_ATTACH);
	json_key(j, "dio_mode_classes");
	json_begin_array(j);
	for (k = 0; k < DC_MAX; k++)
		if (mode_class((int)k))
			json_value_string(j, class_names[k]);
	json_end_array(j);
	json_uint(j, "duty_floor_pct", DUTY_FLOOR_PCT);
	json_key(j, "option_ranges");
	opts_ranges_json(j);
	json_key(j, "budget_kept_groups");
	json_begin_array(j);
	for (k = 0; k < NR_GROUPS; k++)
		if (probe_groups[k].kept)
			json_value_string(j, probe_groups[k].name);
	json_end_array(j);
}
