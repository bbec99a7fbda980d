/* SPDX-License-Identifier: GPL-2.0 */
/* Classic tracepoint programs on perf events this process keeps open, so that
 * the program can be detached and attached again (--duty) without the perf
 * event's slow teardown each time. */
#ifndef LOCKSCOPE_RECORD_TPLINK_H
#define LOCKSCOPE_RECORD_TPLINK_H

struct bpf_program;
struct bpf_link;

/* Attaches prog to tracepoint sys:event; *kept: the perf event's fd to
 * attach again with, or -1 when the kernel ties the program to the event
 * for good (no perf links). NULL with errno set on failure. */
struct bpf_link *tplink_attach(struct bpf_program *prog, const char *sys, const char *event,
			       int *kept);
/* Attaches prog again to the kept perf event. NULL with errno set on failure. */
struct bpf_link *tplink_again(struct bpf_program *prog, int kept);

#endif
