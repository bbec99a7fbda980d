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
#include "record_read.h"

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
	size_t max_off[6];
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
	  offsetof(struct dio_val, sync_lat) + offsetof(struct lat_stat, max_ns) }, 5 };

int rec_read_inodes(struct record_bpf *skel, struct rec_inode **out, size_t *nr)
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

static int read_drops(struct record_bpf *skel, __u64 *drops)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(skel->maps.drops), c;
	__u64 *vals;
	__u32 i;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (i = 0; i < DROP_MAX; i++) {
		drops[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (c = 0; c < ncpu; c++)
			drops[i] += vals[c];
	}
	free(vals);
	return 0;
}

/* Each thread's last off-CPU record is still summed in its entry (the
 * kernel side flushes it when the key changes): add it to the map's. A new
 * key beyond the map's size is a drop, as it would have been in the map. */
static int add_pending(struct rec_data *d, size_t max)
{
	size_t i, k, n = d->nr_offcpu;
	struct rec_offcpu *arr;

	for (i = 0; i < d->nr_tasks; i++)
		n += d->tasks[i].v.pending_count != 0;
	arr = realloc(d->offcpu, (n ? n : 1) * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	d->offcpu = arr;
	for (i = 0; i < d->nr_tasks; i++) {
		const struct task_val *t = &d->tasks[i].v;

		if (!t->pending_count)
			continue;
		for (k = 0; k < d->nr_offcpu; k++)
			if (!memcmp(&arr[k].k, &t->out, sizeof(t->out)))
				break;
		if (k == d->nr_offcpu) {
			if (d->nr_offcpu >= max) {
				d->drops[DROP_OFFCPU_FULL]++;
				continue;
			}
			memset(&arr[k], 0, sizeof(arr[k]));
			arr[k].k = t->out;
			d->nr_offcpu++;
		}
		arr[k].v.count += t->pending_count;
		arr[k].v.total_ns += t->pending_ns;
	}
	return 0;
}

static bool offcpu_unsampled(const struct offcpu_key *k)
{
	return k->kstack == REC_NO_STACK && k->ustack == REC_NO_STACK;
}

/* Records of one thread, reason, lock and system call sort together, the
 * unsampled one last. */
static int cmp_offcpu_group(const void *a, const void *b)
{
	const struct offcpu_key *x = &((const struct rec_offcpu *)a)->k;
	const struct offcpu_key *y = &((const struct rec_offcpu *)b)->k;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
	if (x->lock_addr != y->lock_addr)
		return x->lock_addr < y->lock_addr ? -1 : 1;
	if (x->syscall != y->syscall)
		return x->syscall < y->syscall ? -1 : 1;
	return (int)offcpu_unsampled(x) - (int)offcpu_unsampled(y);
}

static bool same_group(const struct offcpu_key *x, const struct offcpu_key *y)
{
	return x->tid == y->tid && x->reason == y->reason && x->lock_addr == y->lock_addr &&
	       x->syscall == y->syscall;
}

/* part of whole in proportion weight / total, without overflow */
static __u64 share_of(__u64 whole, __u64 weight, __u64 total)
{
	return total ? (__u64)((unsigned __int128)whole * weight / total) : 0;
}

/* Off-CPU stacks are sampled (one walk per thread per stack_refresh_ns); the
 * switch-outs in between are summed without stacks per thread, reason, lock
 * and system call. Their count and time are spread over the sampled stacks
 * of the same group in proportion to the sampled time (the rounding rest to
 * the largest), so that each thread's records still sum to its measured
 * off-CPU time; a group without any sample keeps its record without stacks. */
static void spread_unsampled(struct rec_data *d)
{
	struct rec_offcpu *o = d->offcpu;
	size_t i = 0, g, e, big, out = 0;

	qsort(o, d->nr_offcpu, sizeof(*o), cmp_offcpu_group);
	while (i < d->nr_offcpu) {
		struct offcpu_key key = o[i].k;
		__u64 tot = 0, ns_left, cnt_left;

		for (e = i; e < d->nr_offcpu && same_group(&o[e].k, &key); e++)
			o[e].sampled = offcpu_unsampled(&o[e].k) ? (struct offcpu_val){ 0 } : o[e].v;
		/* [i, e) is one group; its unsampled record, if any, is o[e - 1] */
		if (e - i > 1 && offcpu_unsampled(&o[e - 1].k)) {
			struct offcpu_val rest = o[e - 1].v;

			for (g = i, big = i; g < e - 1; g++) {
				tot += o[g].v.total_ns;
				if (o[g].v.total_ns > o[big].v.total_ns)
					big = g;
			}
			ns_left = rest.total_ns;
			cnt_left = rest.count;
			for (g = i; g < e - 1; g++) {
				__u64 ns = share_of(rest.total_ns, o[g].sampled.total_ns, tot);
				__u64 cnt = share_of(rest.count, o[g].sampled.total_ns, tot);

				o[g].v.total_ns += ns;
				o[g].v.count += cnt;
				ns_left -= ns;
				cnt_left -= cnt;
			}
			o[big].v.total_ns += ns_left;
			o[big].v.count += cnt_left;
			e--; /* the spread record is dropped */
		}
		for (g = i; g < e; g++)
			o[out++] = o[g];
		while (e < d->nr_offcpu && same_group(&o[e].k, &key))
			e++;
		i = e;
	}
	d->nr_offcpu = out;
}

int rec_read_maps(struct record_bpf *skel, struct rec_data *d)
{
	int fd = bpf_map__fd(skel->maps.syscall_stats), err = 0;
	__u32 i;

	memset(d, 0, sizeof(*d));
	err = err ?: DUMP_PERCPU(lock_stats, struct rec_lock, locks, &lock_reduce);
	err = err ?: DUMP(inode_locks, struct rec_inode, inodes);
	err = err ?: DUMP(tasks, struct rec_task, tasks);
	err = err ?: DUMP_PERCPU(offcpu, struct rec_offcpu, offcpu, &sum_reduce);
	err = err ?: DUMP_PERCPU(dio_stats, struct rec_dio, dio, &dio_reduce);
	err = err ?: DUMP_PERCPU(block_stats, struct rec_block, block, &lat_reduce);
	err = err ?: DUMP(jbd2_handles, struct rec_handle, handles);
	err = err ?: DUMP(jbd2_commits, struct rec_commit, commits);
	for (i = 0; i < REC_NR_SYSCALLS && !err; i++)
		err = read_percpu_elem(fd, &i, &d->syscalls[i], sizeof(d->syscalls[i]), &lat_reduce);
	err = err ?: read_drops(skel, d->drops);
	err = err ?: add_pending(d, bpf_map__max_entries(skel->maps.offcpu));
	if (!err)
		spread_unsampled(d);
	return err;
}

int rec_read_stack(struct record_bpf *skel, __u32 id, __u64 *ips, int max)
{
	const struct bpf_map *map = id & REC_SPIN_STACK ? skel->maps.spin_stacks : skel->maps.stacks;
	size_t vsz = bpf_map__value_size(map);
	__u64 buf[REC_MAX_STACK_DEPTH];
	int n = 0;

	if (id == REC_NO_STACK || vsz > sizeof(buf))
		return 0;
	id &= ~REC_SPIN_STACK;
	memset(buf, 0, sizeof(buf));
	if (bpf_map_lookup_elem(bpf_map__fd(map), &id, buf))
		return 0;
	while (n < max && (size_t)n < vsz / sizeof(__u64) && buf[n])
		ips[n] = buf[n], n++;
	return n;
}

void rec_data_free(struct rec_data *d)
{
	free(d->locks);
	free(d->inodes);
	free(d->tasks);
	free(d->offcpu);
	free(d->dio);
	free(d->block);
	free(d->handles);
	free(d->commits);
	memset(d, 0, sizeof(*d));
}
