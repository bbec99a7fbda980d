// SPDX-License-Identifier: GPL-2.0
/* Test driver for offcpu.c (tests/unit/recorder/test_offcpu_spread.py): reads
 *   max N
 *   R tid reason lock syscall kstack ustack count ns   (a map record)
 *   T tid reason lock syscall kstack ustack count ns   (a thread's pending sum;
 *     consecutive T lines of one tid fill its slots in turn)
 *   P tid reason lock syscall kstack ustack count ns   (a record of the read
 *     before, raw)
 * from stdin, runs offcpu_add_pending, offcpu_raise (with P lines) and
 * offcpu_spread, prints
 *   tid reason lock syscall kstack ustack count ns sampled_count sampled_ns
 * per record and a last line "drops N". Stack ids are numbers, -1 none. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "read/read_data.h"
#include "read/offcpu.h"

/* One more record at the end of d's. */
static int add_record(struct rec_data *d, size_t *cap, const struct offcpu_key *k,
		      const struct offcpu_val *v)
{
	if (d->nr_offcpu == *cap &&
	    !(d->offcpu = realloc(d->offcpu, (*cap = *cap * 2 + 8) * sizeof(*d->offcpu))))
		return -1;
	memset(&d->offcpu[d->nr_offcpu], 0, sizeof(*d->offcpu));
	d->offcpu[d->nr_offcpu].k = *k;
	d->offcpu[d->nr_offcpu++].v = *v;
	return 0;
}

static int read_key(const char *line, struct offcpu_key *k, struct offcpu_val *v)
{
	unsigned long long lock, count, ns;
	unsigned int tid, reason;
	int sys, ks, us;

	if (sscanf(line + 1, "%u %u %llu %d %d %d %llu %llu", &tid, &reason, &lock, &sys, &ks, &us,
		   &count, &ns) != 8)
		return -1;
	memset(k, 0, sizeof(*k));
	k->tid = tid;
	k->pid = tid;
	k->reason = reason;
	k->lock_addr = lock;
	k->syscall = sys < 0 ? REC_NO_SYSCALL : (__u32)sys;
	k->kstack = ks < 0 ? REC_NO_STACK : (__u32)ks;
	k->ustack = us < 0 ? REC_NO_STACK : (__u32)us;
	v->count = count;
	v->total_ns = ns;
	return 0;
}

int main(void)
{
	struct rec_data d, prev;
	char line[256];
	size_t max = 1 << 20, cap_o = 0, cap_p = 0, cap_t = 0, i, slot = 0;

	memset(&d, 0, sizeof(d));
	memset(&prev, 0, sizeof(prev));
	while (fgets(line, sizeof(line), stdin)) {
		struct offcpu_key k;
		struct offcpu_val v;

		if (!strncmp(line, "max ", 4)) {
			max = strtoul(line + 4, NULL, 10);
			continue;
		}
		if ((line[0] != 'R' && line[0] != 'T' && line[0] != 'P') ||
		    read_key(line, &k, &v)) {
			fprintf(stderr, "offcputest: bad line: %s", line);
			return 2;
		}
		if (line[0] == 'R' || line[0] == 'P') {
			if (line[0] == 'R' ? add_record(&d, &cap_o, &k, &v) :
					     add_record(&prev, &cap_p, &k, &v))
				return 1;
		} else {
			struct rec_task *t = d.nr_tasks ? &d.tasks[d.nr_tasks - 1] : NULL;
			struct offcpu_pending *p;

			/* the thread of the line before, while it has slots left */
			if (!t || t->tid != k.tid || slot == REC_PENDING_SLOTS) {
				if (d.nr_tasks == cap_t &&
				    !(d.tasks = realloc(d.tasks, (cap_t = cap_t * 2 + 8) * sizeof(*d.tasks))))
					return 1;
				t = &d.tasks[d.nr_tasks++];
				memset(t, 0, sizeof(*t));
				t->tid = k.tid;
				slot = 0;
			}
			p = &t->v.pend[slot++];
			p->k = k;
			p->count = v.count;
			p->ns = v.total_ns;
		}
	}
	if (offcpu_add_pending(&d, max) || offcpu_raise(&d, &prev))
		return 1;
	offcpu_spread(&d);
	for (i = 0; i < d.nr_offcpu; i++) {
		const struct rec_offcpu *o = &d.offcpu[i];

		printf("%u %u %llu %d %d %d %llu %llu %llu %llu\n", o->k.tid, o->k.reason,
		       (unsigned long long)o->k.lock_addr, (int)o->k.syscall, (int)o->k.kstack,
		       (int)o->k.ustack, (unsigned long long)o->v.count,
		       (unsigned long long)o->v.total_ns, (unsigned long long)o->sampled.count,
		       (unsigned long long)o->sampled.total_ns);
	}
	printf("drops %llu\n", (unsigned long long)d.tallies[DROP_OFFCPU_FULL]);
	free(d.offcpu);
	free(d.tasks);
	free(prev.offcpu);
	return 0;
}
