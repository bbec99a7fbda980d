// SPDX-License-Identifier: GPL-2.0
/* Tiny programs, one per attach type, that lockscope doctor loads and attaches
 * one at a time: a kernel says what it allows only when asked for real. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

__u64 hits = 0;

SEC("tp_btf/sched_switch")
int BPF_PROG(probe_tp_btf)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

SEC("raw_tp/sched_switch")
int probe_raw_tp(void *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

SEC("tracepoint/sched/sched_switch")
int probe_tracepoint(void *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

SEC("kprobe/vfs_write")
int probe_kprobe(void *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

SEC("fentry/vfs_write")
int BPF_PROG(probe_fentry)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

SEC("perf_event")
int probe_perf_event(void *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
