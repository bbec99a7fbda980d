// SPDX-License-Identifier: GPL-2.0
/* lockscope-record's kernel side: one object, several probe groups. Each
 * tracepoint has a tp_btf, a raw_tp and (where its fields suffice) a classic
 * tracepoint program named <handler>_btf/_raw/_tp; the user side loads one
 * variant per group (probe.c). Everything is aggregated in maps. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "record.h"
#include "kern/maps.bpf.inc"
#include "kern/util.bpf.inc"
#include "kern/lock.bpf.inc"
#include "kern/lock_slowpath.bpf.inc"
#include "kern/holder.bpf.inc"
#include "kern/inode.bpf.inc"
#include "kern/dio_mode.bpf.inc"
#include "kern/iowq.bpf.inc"
#include "kern/dio.bpf.inc"
#include "kern/extent.bpf.inc"
#include "kern/sched.bpf.inc"
#include "kern/io.bpf.inc"
#include "kern/block.bpf.inc"
#include "kern/jbd2.bpf.inc"
#include "kern/extra.bpf.inc"

char LICENSE[] SEC("license") = "GPL";
