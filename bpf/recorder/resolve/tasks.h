/* SPDX-License-Identifier: GPL-2.0 */
/* Command names of the recorded threads and processes (tasks.c). */
#ifndef LOCKSCOPE_RECORD_TASKS_H
#define LOCKSCOPE_RECORD_TASKS_H

#include <stddef.h>
#include "read/read_data.h"

/* The 16-byte comm of the thread map as a string. */
void tasks_comm_string(const __u64 *words, char *buf, size_t len);
/* qsort/bsearch order of struct rec_task by tid. */
int tasks_cmp_tid(const void *a, const void *b);
/* A process's command name (d->tasks sorted by tid). */
const char *tasks_pid_comm(const struct rec_data *d, __u32 pid, char *buf, size_t len);
/* A thread's command name, else its process's. */
const char *tasks_tid_comm(const struct rec_data *d, __u32 tid, __u32 pid, char *buf,
			   size_t len);

#endif
