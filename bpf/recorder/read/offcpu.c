// SPDX-License-Identifier: GPL-2.0
/* Off-CPU records after the window: the threads' pending sums added, the
 * unsampled time spread over the sampled stacks. No libbpf: a test driver
 * (offcputest.c) runs it on records of its own. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "read/offcpu.h"

/* Each thread's last off-CPU records are still summed in its entry (the
 * kernel side flushes a slot when another key takes it): add them to the
 * map's. A new key beyond the map's size is a drop, as it would have been
 * in the map. */
int offcpu_add_pending(struct rec_data *d, size_t max)
{
	size_t i, k, n = d->nr_offcpu;
	struct rec_offcpu *arr;
	int s;

	for (i = 0; i < d->nr_tasks; i++)
		for (s = 0; s < REC_PENDING_SLOTS; s++)
			n += d->tasks[i].v.pend[s].count != 0;
	arr = realloc(d->offcpu, (n ? n : 1) * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	d->offcpu = arr;
	for (i = 0; i < d->nr_tasks; i++) {
		for (s = 0; s < REC_PENDING_SLOTS; s++) {
			const struct offcpu_pending *p = &d->tasks[i].v.pend[s];

			if (!p->count)
				continue;
			for (k = 0; k < d->nr_offcpu; k++)
				if (!memcmp(&arr[k].k, &p->k, sizeof(p->k)))
					break;
			if (k == d->nr_offcpu) {
				if (d->nr_offcpu >= max) {
					d->tallies[DROP_OFFCPU_FULL]++;
					continue;
				}
				memset(&arr[k], 0, sizeof(arr[k]));
				arr[k].k = p->k;
				d->nr_offcpu++;
			}
			arr[k].v.count += p->count;
			arr[k].v.total_ns += p->ns;
		}
	}
	return 0;
}

static int cmp_offcpu_key(const void *a, const void *b)
{
	return memcmp(&((const struct rec_offcpu *)a)->k, &((const struct rec_offcpu *)b)->k,
		      sizeof(struct offcpu_key));
}

/* A key's raw sums never fall in the kernel (no entry is deleted), but a
 * read can see them fall: a pending slot flushed into the map after
 * read_maps read the map is in neither part of that read. The next read
 * has it again, so an interval taken as cur - prev would count it twice
 * (a fall is no delta, the rise after it is). Each of prev's records
 * raises cur's of the same key to its sums, and one cur lacks is added.
 * prev is sorted by key. 0 or -ENOMEM. */
int offcpu_raise(struct rec_data *cur, struct rec_data *prev)
{
	size_t i, n = cur->nr_offcpu, lacking = 0;
	struct rec_offcpu *arr;
	bool *seen;

	if (!prev->nr_offcpu)
		return 0;
	seen = calloc(prev->nr_offcpu, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	qsort(prev->offcpu, prev->nr_offcpu, sizeof(*prev->offcpu), cmp_offcpu_key);
	for (i = 0; i < n; i++) {
		struct rec_offcpu *c = &cur->offcpu[i];
		const struct rec_offcpu *p = bsearch(c, prev->offcpu, prev->nr_offcpu,
						     sizeof(*p), cmp_offcpu_key);

		if (!p)
			continue;
		seen[p - prev->offcpu] = true;
		if (p->v.count > c->v.count)
			c->v.count = p->v.count;
		if (p->v.total_ns > c->v.total_ns)
			c->v.total_ns = p->v.total_ns;
	}
	for (i = 0; i < prev->nr_offcpu; i++)
		lacking += !seen[i];
	arr = lacking ? realloc(cur->offcpu, (n + lacking) * sizeof(*arr)) : cur->offcpu;
	if (!arr) {
		free(seen);
		return -ENOMEM;
	}
	cur->offcpu = arr;
	for (i = 0; i < prev->nr_offcpu; i++)
		if (!seen[i])
			arr[cur->nr_offcpu++] = prev->offcpu[i];
	free(seen);
	return 0;
}

/* A long wait (REC_OFF_LONG) is recorded whole: one without stacks stays so,
 * never spread over others. */
static bool offcpu_unsampled(const struct offcpu_key *k)
{
	return k->kstack == REC_NO_STACK && k->ustack == REC_NO_STACK && !(k->reason & REC_OFF_LONG);
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
void offcpu_spread(struct rec_data *d)
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

