// SPDX-License-Identifier: GPL-2.0
/* BPF atomic fetch-and-add, asked of the kernel by loading the smallest
 * program that holds one: the instruction came in 5.12 (kernel/bpf/verifier.c,
 * check_atomic(); before, the verifier refuses any program holding it,
 * "BPF_STX uses reserved fields"), and nothing in BTF tells it. A refusal
 * for any other reason (no privilege) reads as "no": the busy time is then
 * reported as not measured, never as zero. */
#include <errno.h>
#include <stdbool.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "setup/atomics.h"

#ifndef BPF_ATOMIC
#define BPF_ATOMIC 0xc0
#endif
#ifndef BPF_FETCH
#define BPF_FETCH 0x01
#endif

bool atomics_fetch_add(void)
{
	static int known = -1;
	/* *(u64 *)(r10 - 8) = 0; r1 = 1;
	 * r1 = atomic_fetch_add((u64 *)(r10 - 8), r1); r0 = 0; exit */
	const struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1,
		  .off = -8, .imm = BPF_ADD | BPF_FETCH },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd;

	if (known >= 0)
		return known;
	fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "lockscope_fetch", "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), NULL);
	known = fd >= 0;
	if (fd >= 0)
		close(fd);
	return known;
}
