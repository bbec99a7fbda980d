// SPDX-License-Identifier: GPL-2.0
/* lockscope-record's kernel side: one object, several probe groups. Each
 * tracepoint has a tp_btf, a raw_tp and (where its fields suffice) a classic
 * tracepoint program named <handler>_btf/_raw/_tp; the user side loads one
 * variant per group (record_probe.c). Everything is aggregated in maps. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "record.h"
#include "record_maps.bpf.h"
#include "record_util.bpf.h"
#include "record_lock.bpf.h"
#include "record_holder.bpf.h"
#include "record_inode.bpf.h"
#include "record_dio.bpf.h"
#include "record_extent.bpf.h"
#include "record_sched.bpf.h"
#include "record_io.bpf.h"
#include "record_jbd2.bpf.h"
#include "record_extra.bpf.h"

char LICENSE[] SEC("license") = "GPL";
