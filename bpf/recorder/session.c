// SPDX-License-Identifier: GPL-2.0
/* The recording lifecycle: prepare / start / tick / stop / read / finish. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "record.h"
#include "record.skel.h"
#include "setup/btfname.h"
#include "setup/tpfields.h"
#include "resolve/paths.h"
#include "read/offcpu.h"
#include "emit/series.h"
#include "emit/document.h"
#include "session.h"
#include "attach/holder_maps.h"
#include "msg.h"
#include "setup/kallsyms_snapshot.h"

#define PATH_TRIES_PER_TICK 32

/* CONFIG_HZ, to turn jbd2's jiffies into time. */
static unsigned int kernel_hz(void)
{
	char line[256];
	unsigned int hz = 0;
	gzFile gz = gzopen("/proc/config.gz", "rb");

	if (gz) {
		while (!hz && gzgets(gz, line, sizeof(line)))
			sscanf(line, "CONFIG_HZ=%u", &hz);
		gzclose(gz);
	}
	if (!hz) {
		char path[300], rel[200];
		FILE *f;
		int fd = open("/proc/sys/kernel/osrelease", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, rel, sizeof(rel) - 1) : -1;

		if (fd >= 0)
			close(fd);
		if (n <= 0)
			return 0;
		rel[n] = 0;
		rel[strcspn(rel, "\n")] = 0;
		snprintf(path, sizeof(path), "/boot/config-%s", rel);
		f = fopen(path, "re");
		while (f && !hz && fgets(line, sizeof(line), f))
			sscanf(line, "CONFIG_HZ=%u", &hz);
		if (f)
			fclose(f);
	}
	return hz;
}

/* Kernel text bounds from kallsyms (_stext, _etext); 0 when hidden. Only
 * the two lines are parsed: the file has a line per kernel symbol. */
static __u64 symbol_address(const char *text, const char *name)
{
	char needle[64];
	const char *at;

	/* "ADDR T NAME\n": the name starts 3 characters after the address */
	snprintf(needle, sizeof(needle), " %s\n", name);
	for (at = strstr(text, needle); at; at = strstr(at + 1, needle)) {
		const char *line = at - 2;

		while (line > text && line[-1] != '\n')
			line--;
		if (at - line > 2 && at[-2] == ' ')
			return strtoull(line, NULL, 16);
	}
	return 0;
}

/* The kernel text's bounds, into the programs' data (0: unknown) */
static void kernel_text(struct record_bpf *skel)
{
	const char *text = kallsyms_snapshot(NULL);
	__u64 start = text ? symbol_address(text, "_stext") : 0;
	__u64 end = text ? symbol_address(text, "_etext") : 0;

	if (end <= start)
		start = end = 0;
	skel->bss->text_start = start;
	skel->bss->text_end = end;
}

/* Whether hash maps may allocate their elements at run time: the kernel has
 * BPF's own any-context allocator (kernel/bpf/memalloc.c, bpf_mem_alloc, 6.1),
 * which hash maps use since then. Before it, a kprobe, tracepoint or raw_tp
 * program using a hash map created with BPF_F_NO_PREALLOC makes the verifier
 * WARN_ONCE "trace type BPF program uses run-time allocation" (5.10
 * kernel/bpf/verifier.c, check_map_prog_compatibility), which taints the
 * kernel and panics it under kernel.panic_on_warn; 6.1 dropped the warning.
 * Told by the type in vmlinux BTF, not by the version (backports).
 * LOCKSCOPE_FORCE_PREALLOC=1 (for tests) preallocates anyway. */
static const char *prealloc_why; /* why not, once runtime_alloc_ok answered */

static bool runtime_alloc_ok(void)
{
	static int ok = -1;
	const char *force = getenv("LOCKSCOPE_FORCE_PREALLOC");
	struct btf *btf;

	if (ok >= 0)
		return ok;
	if (force && *force && strcmp(force, "0")) {
		prealloc_why = "LOCKSCOPE_FORCE_PREALLOC is set";
		ok = 0;
		return ok;
	}
	btf = btf__load_vmlinux_btf();
	/* no BTF: no allocator known, the safe side */
	ok = btf && btf__find_by_name_kind(btf, "bpf_mem_alloc", BTF_KIND_STRUCT) > 0;
	if (!ok)
		prealloc_why = "the kernel has no BPF memory allocator (no struct bpf_mem_alloc "
			       "in its BTF)";
	btf__free(btf);
	return ok;
}

static bool hash_map(const struct bpf_map *map)
{
	enum bpf_map_type t = bpf_map__type(map);

	return t == BPF_MAP_TYPE_HASH || t == BPF_MAP_TYPE_PERCPU_HASH ||
	       t == BPF_MAP_TYPE_HASH_OF_MAPS;
}

/* What a preallocated hash map takes up front, about (5.10
 * kernel/bpf/hashtab.c, htab_map_alloc and prealloc_init): max_entries
 * elements of a 48-byte struct htab_elem, the key rounded up to 8 bytes and
 * the value (per-CPU maps: a pointer here, the value rounded up to 8 bytes
 * on each possible CPU). Left out: the buckets, which a map has either
 * way, and a plain hash's few extra elements (one per CPU). */
static unsigned long long prealloc_bytes(const struct bpf_map *map, int cpus)
{
	unsigned long long key = (bpf_map__key_size(map) + 7) & ~7u;
	unsigned long long value = (bpf_map__value_size(map) + 7) & ~7u;
	unsigned long long n = bpf_map__max_entries(map);

	if (bpf_map__type(map) == BPF_MAP_TYPE_PERCPU_HASH)
		return n * (48 + key + 8 + value * (cpus > 0 ? cpus : 1));
	return n * (48 + key + value);
}

/* Preallocated, the large maps below would take memory up front in
 * proportion to the CPUs (dio_stats' per-CPU value alone: 2.6 GiB on 64
 * CPUs at the defaults). Their entries are lowered together until they fit
 * this; a map that then fills counts its drops (drops.map_full). */
#define PREALLOC_BUDGET (64ULL << 20)

static unsigned long long lazy_bytes(struct bpf_map **lazy, size_t n, int cpus)
{
	unsigned long long bytes = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (bpf_map__autocreate(lazy[i]))
			bytes += prealloc_bytes(lazy[i], cpus);
	return bytes;
}

/* Where they are preallocated: fit them into PREALLOC_BUDGET, and say so. */
static int fit_prealloc(struct rec_session *s, struct bpf_map **lazy, size_t n)
{
	int cpus = libbpf_num_possible_cpus();
	unsigned long long bytes = lazy_bytes(lazy, n, cpus);
	double scale = bytes > PREALLOC_BUDGET ? (double)PREALLOC_BUDGET / bytes : 1.0;
	size_t i;
	int err = 0;

	for (i = 0; i < n && !err && scale < 1.0; i++) {
		__u32 entries = bpf_map__max_entries(lazy[i]) * scale;

		err = bpf_map__set_max_entries(lazy[i], entries > 64 ? entries : 64);
	}
	s->prealloc_bytes = lazy_bytes(lazy, n, cpus);
	if (s->prealloc_noted++)    /* once, not at every load attempt */
		return err;
	msg_note("hash maps preallocated: %s; lock_stats, offcpu, dio_stats and jbd2_handles "
		 "take %.0f MiB up front (%d possible CPUs%s; docs/kernels.md)",
		 prealloc_why, s->prealloc_bytes / 1048576.0, cpus,
		 scale < 1.0 ? ", their entries lowered to fit" : "");
	return err;
}

/* Before load: rodata and map sizes. Called once per load attempt, after
 * the probe groups were chosen. */
static int configure(struct record_bpf *skel, void *arg)
{
	struct rec_session *s = arg;
	const struct rec_opts *o = s->opts;
	struct {
		struct bpf_map *map;
		unsigned int entries;
	} sizes[] = {
		{ skel->maps.stacks, o->max_stacks },
		{ skel->maps.spin_stacks, o->max_stacks / 4 ? o->max_stacks / 4 : 1 },
		{ skel->maps.lock_stats, o->max_locks },
		{ skel->maps.inode_locks, o->max_inodes },
		{ skel->maps.tasks, o->max_threads },
		{ skel->maps.offcpu, o->max_offcpu },
		{ skel->maps.dio_stats, o->max_inodes },
		{ skel->maps.dio_inflight, o->max_inflight },
		{ skel->maps.block_inflight, o->max_inflight },
	};
	/* Written once per key and large: allocate on first use, not up front,
	 * where the kernel allows it (runtime_alloc_ok). */
	struct bpf_map *lazy[] = {
		skel->maps.lock_stats, skel->maps.offcpu, skel->maps.dio_stats, skel->maps.jbd2_handles,
	};
	struct bpf_map *map;
	size_t i;
	int err = 0;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && !err; i++)
		err = bpf_map__set_max_entries(sizes[i].map, sizes[i].entries);
	for (i = 0; i < sizeof(lazy) / sizeof(lazy[0]) && !err && runtime_alloc_ok(); i++)
		err = bpf_map__set_map_flags(lazy[i], bpf_map__map_flags(lazy[i]) | BPF_F_NO_PREALLOC);
	/* Elsewhere every hash map is preallocated, whatever its declaration
	 * says (task storage, which needs the flag, is no hash map and is
	 * left alone: check_map_prealloc looks at hash maps only). */
	bpf_object__for_each_map(map, skel->obj)
		if (!err && !runtime_alloc_ok() && hash_map(map))
			err = bpf_map__set_map_flags(map, bpf_map__map_flags(map) & ~BPF_F_NO_PREALLOC);
	s->maps_preallocated = !runtime_alloc_ok();
	if (!err && s->maps_preallocated)
		err = fit_prealloc(s, lazy, sizeof(lazy) / sizeof(lazy[0]));
	if (!err)
		err = bpf_map__set_value_size(skel->maps.stacks, o->stack_depth * sizeof(__u64));
	if (!err)
		err = stacks_configure(skel, o->user_stacks);
	if (err) {
		msg_error("cannot size the BPF maps: %s", strerror(-err));
		return err;
	}
	skel->rodata->bits = s->bits;
	skel->rodata->tpoff = s->tpoff;
	skel->rodata->self_pid = getpid();
	skel->rodata->min_block_ns = (__u64)o->min_block_us * 1000;
	skel->rodata->stack_refresh_ns = (__u64)o->stack_refresh_ms * 1000000;
	skel->rodata->long_wait_ns = (__u64)o->long_wait_us * 1000;
	skel->rodata->holder_period_ns = (__u64)o->holder_period_ms * 1000000;
	skel->rodata->user_stacks = o->user_stacks;
	for (i = 0; i < REC_NR_SYSCALLS; i++)
		if (s->syscall_nrs[i] < REC_SYSCALL_TABLE)
			((__u8 *)skel->rodata->syscall_slot)[s->syscall_nrs[i]] = i + 1;
	skel->rodata->count_buffered_in_fs = !probe_group_on(&s->probe, GROUP_SYSCALLS);
	filter_rodata(skel, &s->filter);
	holder_maps_configure(skel, &s->probe);
	/* A followed call's state stays per CPU while a sched_switch program
	 * hands it off (kern/maps.bpf.inc, calls_on_cpu). */
	skel->rodata->calls_on_cpu = probe_group_on(&s->probe, GROUP_SCHED);
	return 0;
}

int session_prepare(struct rec_session *s, const struct rec_opts *o, const struct rec_filter *f)
{
	const __u32 nrs[REC_NR_SYSCALLS] = {
		SYS_write, SYS_pwrite64, SYS_pwritev, SYS_pwritev2, SYS_io_submit, SYS_io_uring_enter,
		SYS_fsync, SYS_fdatasync, SYS_sync_file_range, SYS_read, SYS_recvfrom, SYS_recvmsg,
		SYS_sendto, SYS_sendmsg,
	};
	int err;

	memset(s, 0, sizeof(*s));
	s->opts = o;
	duty_init(&s->duty, o->duty_pct, o->duty_period_ms, o->duty_flag);
	if (o->interval_ms && !(s->series = series_open(o->series_out)))
		return -EIO;
	s->filter = *f;
	s->bits = tpfmt_default_bits;
	memcpy(s->syscall_nrs, nrs, sizeof(nrs));
	s->hz = kernel_hz();
	s->paths = paths_new(o->mount_search_max);
	if (!s->paths)
		return -ENOMEM;
	paths_add_pids(s->paths, f->pids, f->nr_pids);
	tpfmt_ensure_tracefs();
	tpfmt_decode_bits(&s->bits, s->decoding);
	/* a field it cannot place leaves ext4_extent off (attach/probe.c) */
	tpfields_decode(&s->tpoff, NULL, 0);
	msg_step("session_setup");
	err = probe_prepare(&s->probe, o, configure, s);
	/* kallsyms is read once, now (a read before the load, for a kprobe's
	 * function, is stale): the symbolizer needs the programs just loaded and
	 * attached (bpf_prog_* and bpf_trampoline_* symbols, the tracing frames
	 * the stacks are trimmed of); on a slow machine a read takes seconds */
	kallsyms_snapshot_drop();
	if (err)
		return err;
	probe_attach_timers(&s->probe, o->holder_period_ms); /* a failure: in the JSON */
	kernel_text(s->probe.skel);
	msg_step("kernel_text");
	err = stacks_init(&s->stacks, s->probe.skel, o->max_stacks);
	if (err)
		return err;
	s->stacks_ready = true;
	msg_step("stacks");
	overhead_init(&s->ovh, s->probe.skel, &s->duty, o->max_overhead_pct, o->max_pause_ms,
		      o->restore_after_ms,
		      /* sampled statistics estimate the rest of the window from a
		       * second in N: the probes must be attached throughout */
		      s->series || o->duty_pct < 100 ? 1 : o->stats_every,
		      o->budget_stats_every);
	s->ovh_ready = true;
	msg_step("overhead");
	session_tick(s);
	return 0;
}

void session_start(struct rec_session *s)
{
	s->start_wall = clock_ns(CLOCK_REALTIME);
	s->start_mono = clock_ns(CLOCK_MONOTONIC); /* the clock of bpf_ktime_get_ns */
	s->probe.skel->bss->start_ns = s->start_mono;
	overhead_start(&s->ovh, s->start_mono);
	duty_start(&s->duty, s->start_mono);
	if (s->series)
		series_start(s->series, s->start_mono);
	__atomic_store_n(&s->probe.skel->bss->enabled, 1, __ATOMIC_SEQ_CST);
	s->started = true;
}

static bool seen_pid(struct rec_session *s, int pid)
{
	size_t i;

	for (i = 0; i < s->nr_seen; i++)
		if (s->seen_pids[i] == pid)
			return true;
	if (s->nr_seen == s->cap_seen) {
		size_t cap = s->cap_seen ? s->cap_seen * 2 : 64;
		int *n = realloc(s->seen_pids, cap * sizeof(*n));

		if (!n)
			return true;
		s->seen_pids = n;
		s->cap_seen = cap;
	}
	s->seen_pids[s->nr_seen++] = pid;
	return false;
}

void session_tick(struct rec_session *s)
{
	struct record_bpf *skel = s->probe.skel;
	struct rec_inode *inodes = NULL;
	size_t n = 0, i;
	__u32 key, next, *prev = NULL;
	struct task_val tv;
	int fd = bpf_map__fd(skel->maps.tasks);
	int k;

	for (k = 0; k < s->filter.nr_pids; k++)
		if (!seen_pid(s, s->filter.pids[k]))
			stacks_add_pid(&s->stacks, s->filter.pids[k]);
	/* new processes: their maps now, before they can exit */
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (bpf_map_lookup_elem(fd, &next, &tv) == 0 && !seen_pid(s, tv.pid))
			stacks_add_pid(&s->stacks, tv.pid);
		key = next;
		prev = &key;
	}
	/* a bounded number of fd-table reads per tick keeps ticks short */
	if (read_inodes(skel, &inodes, &n) == 0)
		for (i = 0, k = 0; i < n && k < PATH_TRIES_PER_TICK; i++)
			k += paths_try_fds(s->paths, inodes[i].v.dev, inodes[i].v.ino, inodes[i].v.pid);
	free(inodes);
}

/* Closes the window (once: an early detach closes it before the stop). */
static void close_window(struct rec_session *s)
{
	if (!s->started || s->end_mono)
		return;
	__atomic_store_n(&s->probe.skel->bss->enabled, 0, __ATOMIC_SEQ_CST);
	s->end_mono = clock_ns(CLOCK_MONOTONIC);
	s->end_wall = clock_ns(CLOCK_REALTIME);
	duty_stop(&s->duty, s->end_mono);
	s->ovh.observed_ns = s->duty.observed_ns;
	s->ovh.detached = s->duty.paused_until != 0;
	overhead_stop(&s->ovh, s->end_mono);
}

void session_stop(struct rec_session *s)
{
	close_window(s);
	session_tick(s);
	if (s->stacks_ready)
		stacks_unwind_finish(&s->stacks);
}

void session_overhead_tick(struct rec_session *s)
{
	if (s->started && !s->end_mono)
		overhead_tick(&s->ovh, s->probe.skel, &s->probe, &s->duty, clock_ns(CLOCK_MONOTONIC));
}

__u64 session_duty_tick(struct rec_session *s)
{
	if (!s->started || s->end_mono)
		return 0;
	duty_tick(&s->duty, &s->probe, s->ovh.group_shed);
	return duty_next(&s->duty);
}

static bool thread_alive(__u32 pid, __u32 tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/task/%u", pid, tid);
	return access(path, F_OK) == 0;
}

/* Time since each thread's last switch, up to the window's end, for
 * threads still alive (an exited thread's last switch-out was its exit).
 * With --duty, only switches seen since the last re-attach (observe). */
static void close_thread_times(struct rec_data *d, __u64 start, __u64 end, __u64 observe)
{
	size_t i;

	for (i = 0; i < d->nr_tasks; i++) {
		struct task_val *t = &d->tasks[i].v;
		__u64 from;

		if (!thread_alive(t->pid, d->tasks[i].tid))
			continue;
		if ((t->out_ts ? t->out_ts : t->in_ts) < observe)
			continue;
		if (!t->out_ts && t->in_ts) {
			from = t->in_ts > start ? t->in_ts : start;
			if (end > from)
				t->oncpu_ns += end - from;
		} else if (t->out_ts) {
			from = t->out_ts > start ? t->out_ts : start;
			if (end <= from)
				continue;
			if (t->flags & TF_PREEMPTED) {
				t->runq_ns += end - from;
			} else if (t->wake_ts > from && t->wake_ts <= end) {
				t->offcpu_ns += t->wake_ts - from;
				t->runq_ns += end - t->wake_ts;
			} else {
				t->offcpu_ns += end - from;
			}
		}
	}
}

int session_read(struct rec_session *s)
{
	int err = read_maps(s->probe.skel, &s->data, s->end_mono ? s->end_mono : clock_ns(CLOCK_MONOTONIC));

	if (err) {
		msg_error("cannot read the BPF maps: %s", strerror(-err));
		return err;
	}
	s->data_ready = true;
	/* a window that ended in an "off" phase of --duty: its last
	 * switches were not seen, no period is open */
	if (s->started && probe_group_on(&s->probe, GROUP_SCHED) && s->duty.ended_on)
		close_thread_times(&s->data, s->start_mono, s->end_mono,
				   s->probe.skel->bss->observe_start_ns);
	if (s->series && s->started) {
		struct rec_data last = { 0 };

		/* the last interval ends with the window: the sums come out whole,
		 * and the document's are the series' (offcpu_raise) */
		if (offcpu_raise(&s->data, &s->series->prev) == 0 && read_copy(&s->data, &last) == 0)
			document_interval(s, &last, s->end_mono, false);
		else
			read_free(&last);
	}
	return 0;
}

void session_series_tick(struct rec_session *s)
{
	struct rec_data cur;
	__u64 now;

	if (!s->series || !s->started || s->end_mono)
		return;
	now = clock_ns(CLOCK_MONOTONIC);
	if (read_maps(s->probe.skel, &cur, now)) {
		read_free(&cur);
		return;
	}
	/* thread periods still open are not closed here: they count in the
	 * interval where they end, so the intervals add up to the document */
	document_interval(s, &cur, now, true);
}

void session_finish(struct rec_session *s)
{
	if (s->data_ready)
		read_free(&s->data);
	if (s->stacks_ready)
		stacks_free(&s->stacks);
	probe_destroy(&s->probe);
	if (s->ovh_ready)
		overhead_free(&s->ovh);
	series_free(s->series);
	btfname_free(s->series_names);
	paths_free(s->paths);
	free(s->seen_pids);
	memset(s, 0, sizeof(*s));
}
