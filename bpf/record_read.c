// SPDX-License-Identifier: GPL-2.0
/* Map readers: one generic key/value walk, typed arrays out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "record.h"
#include "record.skel.h"
#include "record_read.h"

/* Walks a hash map into an array of records of entry_size bytes, each the
 * key at offset 0 and the value at voff. */
static int dump_map(const struct bpf_map *map, size_t entry_size, size_t voff,
		    void **out, size_t *nr)
{
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
		if (bpf_map_lookup_elem(fd, next, arr + n * entry_size + voff) == 0)
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

int rec_read_inodes(struct record_bpf *skel, struct rec_inode **out, size_t *nr)
{
	return dump_map(skel->maps.inode_locks, sizeof(struct rec_inode),
			offsetof(struct rec_inode, v), (void **)out, nr);
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

int rec_read_maps(struct record_bpf *skel, struct rec_data *d)
{
	int fd = bpf_map__fd(skel->maps.syscall_stats), err = 0;
	__u32 i;

	memset(d, 0, sizeof(*d));
	err = err ?: DUMP(lock_stats, struct rec_lock, locks);
	err = err ?: DUMP(inode_locks, struct rec_inode, inodes);
	err = err ?: DUMP(tasks, struct rec_task, tasks);
	err = err ?: DUMP(offcpu, struct rec_offcpu, offcpu);
	err = err ?: DUMP(dio_stats, struct rec_dio, dio);
	err = err ?: DUMP(block_stats, struct rec_block, block);
	err = err ?: DUMP(jbd2_handles, struct rec_handle, handles);
	err = err ?: DUMP(jbd2_commits, struct rec_commit, commits);
	for (i = 0; i < REC_NR_SYSCALLS && !err; i++)
		if (bpf_map_lookup_elem(fd, &i, &d->syscalls[i]))
			err = -errno;
	return err ?: read_drops(skel, d->drops);
}

int rec_read_stack(struct record_bpf *skel, __u32 id, __u64 *ips, int max)
{
	size_t vsz = bpf_map__value_size(skel->maps.stacks);
	__u64 buf[REC_MAX_STACK_DEPTH];
	int n = 0;

	if (id == REC_NO_STACK || vsz > sizeof(buf))
		return 0;
	memset(buf, 0, sizeof(buf));
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.stacks), &id, buf))
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
