// SPDX-License-Identifier: GPL-2.0
/* Threads and processes by name: the command names the thread map recorded,
 * else /proc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "resolve/tasks.h"

void tasks_comm_string(const __u64 *words, char *buf, size_t len)
{
	char comm[17] = { 0 };

	memcpy(comm, words, 16);
	snprintf(buf, len, "%s", comm);
}

int tasks_cmp_tid(const void *a, const void *b)
{
	const struct rec_task *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Command name of a process: its main thread's, else any of its threads',
 * else /proc. d->tasks sorted by tid. */
const char *tasks_pid_comm(const struct rec_data *d, __u32 pid, char *buf, size_t len)
{
	struct rec_task key = { .tid = pid }, *t;
	size_t i;
	FILE *f;
	char path[64];

	t = bsearch(&key, d->tasks, d->nr_tasks, sizeof(key), tasks_cmp_tid);
	if (t) {
		tasks_comm_string(t->v.comm, buf, len);
		return buf;
	}
	for (i = 0; i < d->nr_tasks; i++) {
		if (d->tasks[i].v.pid == pid) {
			tasks_comm_string(d->tasks[i].v.comm, buf, len);
			return buf;
		}
	}
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (f && fgets(buf, len, f)) {
		buf[strcspn(buf, "\n")] = 0;
		fclose(f);
		return buf;
	}
	if (f)
		fclose(f);
	snprintf(buf, len, "[%u]", pid);
	return buf;
}

const char *tasks_tid_comm(const struct rec_data *d, __u32 tid, __u32 pid, char *buf,
			   size_t len)
{
	struct rec_task key = { .tid = tid }, *t;

	t = bsearch(&key, d->tasks, d->nr_tasks, sizeof(key), tasks_cmp_tid);
	if (t) {
		tasks_comm_string(t->v.comm, buf, len);
		return buf;
	}
	return tasks_pid_comm(d, pid, buf, len);
}
