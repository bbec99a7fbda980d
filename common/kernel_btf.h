/* SPDX-License-Identifier: GPL-2.0 */
/* The running kernel's BTF: vmlinux and, when asked about a name vmlinux
 * lacks, every module's split BTF (/sys/kernel/btf/MODULE). The one answer
 * lockscope-features and lockscope-record give to "does this tracepoint (or
 * function) exist", whether its code is built in or a module (XFS often is). */
#ifndef LOCKSCOPE_KERNEL_BTF_H
#define LOCKSCOPE_KERNEL_BTF_H

#include <stdbool.h>

struct btf;

#define KERNEL_BTF_MAX_MODS 128

/* The names of the kinds asked about (typedefs, functions), hashed once:
 * libbpf's btf__find_by_name_kind() walks every type per call, and a
 * module's split BTF walks vmlinux's again, which takes seconds for the
 * loader's few hundred questions on a slow (emulated) machine. */
struct kernel_btf_name {
	const char *name;
	int kind;
};

struct kernel_btf {
	struct btf *vmlinux;        /* NULL: the kernel has no BTF */
	struct btf *mods[KERNEL_BTF_MAX_MODS];
	int nr_mods;
	bool mods_loaded;           /* modules are parsed on the first miss */
	struct kernel_btf_name *names; /* open addressing, names_mask + 1 slots */
	unsigned int names_mask, nr_names;
};

void kernel_btf_open(struct kernel_btf *k);
void kernel_btf_close(struct kernel_btf *k);

/* Whether a type of this BTF kind (BTF_KIND_TYPEDEF, BTF_KIND_FUNC, ...) and
 * name is in vmlinux or a module. */
bool kernel_btf_has(struct kernel_btf *k, const char *name, int kind);

/* Whether the tracepoint "sys:event" (or "event") has BTF: the kernel
 * declares a typedef btf_trace_EVENT for each (include/trace/bpf_probe.h,
 * __DEFINE_EVENT), in the module's BTF when the module defines it. */
bool kernel_btf_has_tracepoint(struct kernel_btf *k, const char *tracepoint);

#endif
