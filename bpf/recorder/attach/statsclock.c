// SPDX-License-Identifier: GPL-2.0
/* The statistics' own share of every measured run. With run-time statistics
 * on, the kernel reads sched_clock() before and after each program
 * (include/linux/filter.h, __bpf_prog_run()), so run_time_ns includes one
 * clock read even for a program that does nothing. That read is paid only
 * while the statistics are on; it is measured here by test-running an empty
 * socket filter (net/bpf/test_run.c, bpf_test_run() calls bpf_prog_run(), the
 * same accounting path as a tracepoint's program). */
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "attach/statsclock.h"

#define STATSCLOCK_RUNS 20000
#define STATSCLOCK_TRIES 3

static int empty_prog(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "lockscope_clock", "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), NULL);
}

static int run_stats(int fd, __u64 *cnt, __u64 *ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	*cnt = info.run_cnt;
	*ns = info.run_time_ns;
	return 0;
}

double statsclock_ns_per_run(void)
{
	unsigned char packet[64] = { 0 }; /* at least an Ethernet header */
	double best = -1;
	int fd = empty_prog(), i;

	if (fd < 0)
		return -1;
	/* the smallest of a few tries: a try preempted midway only reads high */
	for (i = 0; i < STATSCLOCK_TRIES; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = packet,
			    .data_size_in = sizeof(packet), .repeat = STATSCLOCK_RUNS);
		__u64 cnt0, ns0, cnt1, ns1;
		double v;

		if (run_stats(fd, &cnt0, &ns0) || bpf_prog_test_run_opts(fd, &opts) ||
		    run_stats(fd, &cnt1, &ns1) || cnt1 <= cnt0)
			break;
		v = (double)(ns1 - ns0) / (double)(cnt1 - cnt0);
		if (best < 0 || v < best)
			best = v;
	}
	close(fd);
	return best;
}
