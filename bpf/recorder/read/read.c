// SPDX-License-Identifier: GPL-2.0
/* Map readers: one generic key/value walk, typed arrays out. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "record.h"
#include "record.skel.h"
#include "read/read.h"
#include "read/offcpu.h"

/* Walks a hash map into an array of records of entry_size bytes, each the
 * key at offset 0 and the value at voff (left zero for a per-CPU map: the
 * caller reads and reduces those). */
static int dump_map(const struct bpf_map *map, size_t entry_size, size_t voff,
		    void **out, size_t *nr)
{
	bool percpu = bpf_map__type(map) == BPF_MAP_TYPE_PERCPU_HASH;
	size_t ksz = bpf_map__key_size(map), vsz = bpf_map__value_size(map), cap = 0, n = 0;
	int fd = bpf_map__fd(map), err = 0;
	char key[64], next[64], *arr = NULL;
	void *prev = NULL;

	if (ksz > sizeof(key) || voff < ksz || entry_size < voff + vsz)
		return -EINVAL;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		if (n == cap) {
			char *na = realloc(arr, (cap = cap ? cap * 2 : 64) * entry_size);

			if (!na) {
				err = -ENOMEM;
				break;
			}
			arr = na;
		}
		memset(arr + n * entry_size, 0, entry_size);
		memcpy(arr + n * entry_size, next, ksz);
		if (percpu || bpf_map_lookup_elem(fd, next, arr + n * entry_size + voff) == 0)
			n++;
		memcpy(key, next, ksz);
		prev = key;
	}
	*out = arr;
	*nr = n;
	return err;
}

#define DUMP(map, type, dst) \
	dump_map(skel->maps.map, sizeof(type), offsetof(type, v), (void **)&d->dst, &d->nr_##dst)

/* Per-CPU values are summed, except the fields at max_off[], which keep the
 * largest CPU's value. Every field is a __u64. */
struct reduce {
	size_t max_off[10];
	int nr_max;
};

static void reduce_cpus(void *dst, const void *vals, int ncpu, size_t vsz, const struct reduce *r)
{
	size_t stride = (vsz + 7) & ~7UL, w, m;
	__u64 *out = dst;
	int c;

	memset(dst, 0, vsz);
	for (c = 0; c < ncpu; c++) {
		const __u64 *in = (const __u64 *)((const char *)vals + c * stride);

		for (w = 0; w < vsz / 8; w++) {
			bool is_max = false;

			for (m = 0; m < (size_t)r->nr_max; m++)
				is_max |= r->max_off[m] == w * 8;
			if (is_max)
				out[w] = in[w] > out[w] ? in[w] : out[w];
			else
				out[w] += in[w];
		}
	}
}

/* dump_map for per-CPU hash maps (values reduced with r). */
static int dump_percpu(const struct bpf_map *map, size_t entry_size, size_t voff,
		       const struct reduce *r, void **out, size_t *nr)
{
	size_t vsz = bpf_map__value_size(map), i;
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(map);
	char *arr;
	void *vals;
	int err;

	if (ncpu <= 0)
		return -EINVAL;
	err = dump_map(map, entry_size, voff, out, nr); /* keys; values below */
	if (err)
		return err;
	vals = malloc(ncpu * ((vsz + 7) & ~7UL));
	if (!vals)
		return -ENOMEM;
	arr = *out;
	for (i = 0; i < *nr; i++) {
		char *e = arr + i * entry_size;

		if (bpf_map_lookup_elem(fd, e, vals) == 0)
			reduce_cpus(e + voff, vals, ncpu, vsz, r);
	}
	free(vals);
	return 0;
}

#define DUMP_PERCPU(map, type, dst, reduce) \
	dump_percpu(skel->maps.map, sizeof(type), offsetof(type, v), reduce, \
		    (void **)&d->dst, &d->nr_##dst)

static const struct reduce lock_reduce = {
	{ offsetof(struct lock_val, max_ns) }, 1 };
static const struct reduce sum_reduce = { { 0 }, 0 };
static const struct reduce lat_reduce = { { offsetof(struct lat_stat, max_ns) }, 1 };
static const struct reduce dio_reduce = {
	{ offsetof(struct dio_val, blksize),
	  offsetof(struct dio_val, write_lat) + offsetof(struct lat_stat, max_ns),
	  offsetof(struct dio_val, read_lat) + offsetof(struct lat_stat, max_ns),
	  offsetof(struct dio_val, pre_iomap) + offsetof(struct lat_stat, max_ns),
	  offsetof(struct dio_val, sync_lat) + offsetof(struct lat_stat, max_ns),
	  offsetof(struct dio_val, range_lat) + offsetof(struct lat_stat, max_ns),
	  offsetof(struct dio_val, dsync_lat) + offsetof(struct lat_stat, max_ns),
	  offsetof(struct dio_val, iowq_wait) + offsetof(struct lat_stat, max_ns),
	  offsetof(struct dio_val, iowq_behind) + offsetof(struct lat_stat, max_ns) }, 9 };

int read_inodes(struct record_bpf *skel, struct rec_inode **out, size_t *nr)
{
	return dump_map(skel->maps.inode_locks, sizeof(struct rec_inode),
			offsetof(struct rec_inode, v), (void **)out, nr);
}

static int read_percpu_elem(int fd, const void *key, void *dst, size_t vsz, const struct reduce *r)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	void *vals;

	if (ncpu <= 0)
		return -EINVAL;
	vals = malloc(ncpu * ((vsz + 7) & ~7UL));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, key, vals))
		err = -errno;
	else
		reduce_cpus(dst, vals, ncpu, vsz, r);
	free(vals);
	return err;
}

static int read_tallies(struct record_bpf *skel, __u64 *tallies)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(skel->maps.drops), c;
	__u64 *vals;
	__u32 i;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (i = 0; i < NR_TALLIES; i++) {
		tallies[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (c = 0; c < ncpu; c++)
			tallies[i] += vals[c];
	}
	free(vals);
	return 0;
}

/* The busy time of slot i up to at (struct block_busy, record.h): the
 * word is the closed periods' sum, or, while one is open, that sum minus
 * its start, which closes at `at` (at an "off" phase's start, whose
 * observed part ended at observe_end_ns). The programs update the count
 * and the word in two steps: a read between a period's close on one CPU
 * and the next one's open on another may see both opens at once, a
 * negative sum or one longer than the window, and is taken again. */
static __u64 busy_until(struct record_bpf *skel, __u32 i, __u64 at)
{
	__u64 end = __atomic_load_n(&skel->bss->observe_end_ns, __ATOMIC_RELAXED);
	__u64 start = skel->bss->start_ns, close = end && end < at ? end : at;
	__s64 acc = 0, busy = 0;
	int tries;

	for (tries = 0; tries < 8; tries++) {
		acc = __atomic_load_n(&skel->bss->block_busy[i].acc, __ATOMIC_RELAXED);
		busy = acc < 0 ? acc + (__s64)close : acc;
		if (busy >= 0 && (__u64)busy <= close - start)
			return busy;
	}
	if (busy < 0)
		return 0;
	return (__u64)busy > close - start ? close - start : (__u64)busy;
}

/* Block devices: the claimed slots of block_devs, each with its per-CPU
 * stats and its busy time up to at (kern/block.bpf.inc). */
static int read_block(struct record_bpf *skel, struct rec_data *d, __u64 at)
{
	int fd = bpf_map__fd(skel->maps.block_stats), err = 0;
	__u32 i;

	d->block = calloc(REC_BLOCK_SLOTS, sizeof(*d->block));
	if (!d->block)
		return -ENOMEM;
	for (i = 0; i < REC_BLOCK_SLOTS && !err; i++) {
		__u64 dev = __atomic_load_n(&skel->bss->block_devs[i], __ATOMIC_RELAXED);
		struct rec_block *b = &d->block[d->nr_block];

		if (!(dev & REC_BLOCK_USED))
			continue;
		b->dev = (__u32)dev;
		err = read_percpu_elem(fd, &i, &b->v, sizeof(b->v), &lat_reduce);
		b->busy_ns = busy_until(skel, i, at);
		if (!err && (b->v.count || b->busy_ns))
			d->nr_block++;
	}
	return err;
}

/* The per-file buffered-write slots (kern/io.bpf.inc buffered_add), added
 * to each file's dio entry; a file without one gets one. */
static int read_buffered(struct record_bpf *skel, struct rec_data *d)
{
	int fd = bpf_map__fd(skel->maps.buf_counts), err = 0;
	struct buf_count c;
	__u32 i;
	size_t j;

	/* every slot: buf_next is only a hint (buf_slot_of) */
	for (i = 0; i < REC_BUF_SLOTS && !err; i++) {
		struct inode_key k = skel->bss->buf_files[i];
		struct rec_dio *e = NULL;

		if (!k.ino && !k.dev)
			continue; /* not given, or given up in a race (buf_slot_of) */
		err = read_percpu_elem(fd, &i, &c, sizeof(c), &sum_reduce);
		if (err || !c.count)
			continue;
		for (j = 0; j < d->nr_dio && !e; j++)
			if (d->dio[j].k.ino == k.ino && d->dio[j].k.dev == k.dev)
				e = &d->dio[j];
		if (!e) {
			struct rec_dio *na = realloc(d->dio, (d->nr_dio + 1) * sizeof(*na));

			if (!na)
				return -ENOMEM;
			d->dio = na;
			e = &d->dio[d->nr_dio++];
			memset(e, 0, sizeof(*e));
			e->k.ino = k.ino;
			e->k.dev = k.dev;
		}
		e->v.count[DC_BUFFERED] += c.count;
		e->v.bytes[DC_BUFFERED] += c.bytes;
	}
	return err;
}

int read_maps(struct record_bpf *skel, struct rec_data *d, __u64 at)
{
	int fd = bpf_map__fd(skel->maps.syscall_stats), err = 0;
	__u32 i;

	memset(d, 0, sizeof(*d));
	err = err ?: DUMP_PERCPU(lock_stats, struct rec_lock, locks, &lock_reduce);
	err = err ?: DUMP(inode_locks, struct rec_inode, inodes);
	/* The off-CPU map before the threads' pending records: a slot flushed into
	 * the map between the two reads is then missed by this read (the next one
	 * has it), never counted twice. A series raises each read to the one
	 * before (offcpu_raise), so that the miss is not counted again once back. */
	err = err ?: DUMP_PERCPU(offcpu, struct rec_offcpu, offcpu, &sum_reduce);
	err = err ?: DUMP(tasks, struct rec_task, tasks);
	err = err ?: DUMP_PERCPU(dio_stats, struct rec_dio, dio, &dio_reduce);
	err = err ?: read_buffered(skel, d);
	err = err ?: read_block(skel, d, at);
	err = err ?: DUMP_PERCPU(jbd2_handles, struct rec_handle, handles, &sum_reduce);
	err = err ?: DUMP(jbd2_commits, struct rec_commit, commits);
	for (i = 0; i < REC_NR_SYSCALLS && !err; i++)
		err = read_percpu_elem(fd, &i, &d->syscalls[i], sizeof(d->syscalls[i]), &lat_reduce);
	err = err ?: holder_read_maps(skel, &d->holders);
	err = err ?: read_tallies(skel, d->tallies);
	/* raw sums per key, cumulative (series intervals are their deltas); the
	 * unsampled time is spread when a document or interval is written */
	err = err ?: offcpu_add_pending(d, bpf_map__max_entries(skel->maps.offcpu));
	return err;
}

/* ---- deltas between two reads (series intervals) ---- */

static bool is_max(const struct reduce *r, size_t off)
{
	int m;

	for (m = 0; m < r->nr_max; m++)
		if (r->max_off[m] == off)
			return true;
	return false;
}

/* out = cur - prev word by word; maxima keep cur's value (the window's
 * maximum so far). True when a counted word changed. */
static bool diff_value(void *out, const void *cur, const void *prev, size_t vsz,
		       const struct reduce *r)
{
	const __u64 *c = cur, *p = prev;
	__u64 *o = out;
	bool changed = false;
	size_t w;

	for (w = 0; w < vsz / 8; w++) {
		if (is_max(r, w * 8)) {
			o[w] = c[w];
		} else {
			o[w] = p && c[w] > p[w] ? c[w] - p[w] : p ? 0 : c[w];
			changed |= o[w] != 0;
		}
	}
	return changed;
}

static size_t cmp_size;

static int cmp_key(const void *a, const void *b)
{
	return memcmp(a, b, cmp_size);
}

/* Entries of cur whose counted values changed since prev (sorted here by
 * key), as deltas, into a new array. */
static int diff_array(void *cur_arr, size_t ncur, void *prev_arr, size_t nprev, size_t esize,
		      size_t voff, const struct reduce *r, void **out, size_t *nout)
{
	char *cur = cur_arr, *res = malloc((ncur ? ncur : 1) * esize);
	size_t i, n = 0;

	if (!res)
		return -ENOMEM;
	cmp_size = voff;
	qsort(prev_arr, nprev, esize, cmp_key);
	for (i = 0; i < ncur; i++) {
		const char *e = cur + i * esize;
		const char *p = nprev ? bsearch(e, prev_arr, nprev, esize, cmp_key) : NULL;

		memcpy(res + n * esize, e, voff);
		if (diff_value(res + n * esize + voff, e + voff, p ? p + voff : NULL, esize - voff, r))
			n++;
	}
	*out = res;
	*nout = n;
	return 0;
}

#define DIFF(field, type, r) \
	diff_array(cur->field, cur->nr_##field, prev->field, prev->nr_##field, sizeof(type), \
		   offsetof(type, v), r, (void **)&out->field, &out->nr_##field)

static int cmp_tid(const void *a, const void *b)
{
	const struct rec_task *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Every thread, its time accounting as deltas (the rest as in cur). */
static int diff_tasks(const struct rec_data *cur, struct rec_data *prev, struct rec_data *out)
{
	size_t i;

	out->tasks = malloc((cur->nr_tasks ? cur->nr_tasks : 1) * sizeof(*out->tasks));
	if (!out->tasks)
		return -ENOMEM;
	out->nr_tasks = cur->nr_tasks;
	qsort(prev->tasks, prev->nr_tasks, sizeof(*prev->tasks), cmp_tid);
	for (i = 0; i < cur->nr_tasks; i++) {
		struct rec_task *t = &out->tasks[i];
		const struct rec_task *p = bsearch(&cur->tasks[i], prev->tasks, prev->nr_tasks,
						   sizeof(*p), cmp_tid);

		*t = cur->tasks[i];
		if (!p)
			continue;
		t->v.oncpu_ns = t->v.oncpu_ns > p->v.oncpu_ns ? t->v.oncpu_ns - p->v.oncpu_ns : 0;
		t->v.offcpu_ns = t->v.offcpu_ns > p->v.offcpu_ns ? t->v.offcpu_ns - p->v.offcpu_ns : 0;
		t->v.runq_ns = t->v.runq_ns > p->v.runq_ns ? t->v.runq_ns - p->v.runq_ns : 0;
		t->v.rx_calls -= p->v.rx_calls;     /* cumulative per thread */
		t->v.rx_bytes -= p->v.rx_bytes;
		t->v.tx_calls -= p->v.tx_calls;
		t->v.tx_bytes -= p->v.tx_bytes;
		t->v.tx_writes -= p->v.tx_writes;
	}
	return 0;
}

int read_delta(const struct rec_data *cur, struct rec_data *prev, struct rec_data *out)
{
	int err = 0, i;

	memset(out, 0, sizeof(*out));
	out->inodes = malloc((cur->nr_inodes ? cur->nr_inodes : 1) * sizeof(*out->inodes));
	if (!out->inodes)
		return -ENOMEM;
	memcpy(out->inodes, cur->inodes, cur->nr_inodes * sizeof(*out->inodes));
	out->nr_inodes = cur->nr_inodes;
	err = err ?: diff_tasks(cur, prev, out);
	err = err ?: DIFF(locks, struct rec_lock, &lock_reduce);
	err = err ?: DIFF(offcpu, struct rec_offcpu, &sum_reduce);
	err = err ?: DIFF(dio, struct rec_dio, &dio_reduce);
	err = err ?: DIFF(block, struct rec_block, &lat_reduce);
	err = err ?: DIFF(handles, struct rec_handle, &sum_reduce);
	err = err ?: DIFF(commits, struct rec_commit, &sum_reduce);
	for (i = 0; i < REC_NR_SYSCALLS; i++)
		diff_value(&out->syscalls[i], &cur->syscalls[i], &prev->syscalls[i],
			   sizeof(out->syscalls[i]), &lat_reduce);
	diff_value(out->tallies, cur->tallies, prev->tallies, sizeof(out->tallies), &sum_reduce);
	return err;
}

int read_copy(const struct rec_data *src, struct rec_data *dst)
{
	int err = 0;

	*dst = *src;
#define COPY(field) do { \
		dst->field = malloc((src->nr_##field ? src->nr_##field : 1) * sizeof(*src->field)); \
		if (!dst->field) \
			err = -ENOMEM; \
		else \
			memcpy(dst->field, src->field, src->nr_##field * sizeof(*src->field)); \
	} while (0)
	COPY(locks); COPY(inodes); COPY(tasks); COPY(offcpu); COPY(dio); COPY(block);
	COPY(handles); COPY(commits);
#undef COPY
	return holder_read_copy(&src->holders, &dst->holders) ?: err;
}

void read_free(struct rec_data *d)
{
	free(d->locks);
	free(d->inodes);
	free(d->tasks);
	free(d->offcpu);
	free(d->dio);
	free(d->block);
	free(d->handles);
	free(d->commits);
	holder_read_free(&d->holders);
	memset(d, 0, sizeof(*d));
}
