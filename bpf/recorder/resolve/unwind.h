/* SPDX-License-Identifier: GPL-2.0 */
/* The user-side half of DWARF user stacks (kern/ustack.bpf.inc): a thread
 * that takes the copied stacks off the ring buffer as they come, while their
 * processes still live, and unwinds each with elfutils libdwfl through the
 * CFI (.eh_frame, .debug_frame) of the files mapped in /proc/PID/maps, as
 * perf --call-graph=dwarf does. One Dwfl per process, rebuilt when a sample
 * runs in a mapping it has not seen. */
#ifndef LOCKSCOPE_UNWIND_H
#define LOCKSCOPE_UNWIND_H

#include <stdbool.h>
#include <linux/types.h>

/* Receives each unwound stack: n addresses, leaf first; a caller's return
 * address is given minus one, so that it falls in the call instruction. Runs
 * on the unwinder's thread. */
typedef void (*unwind_sink)(void *arg, __u32 id, int pid, const __u64 *pcs, int n);

struct unwinder;

/* Starts consuming the ring buffer map ringbuf_fd. NULL with errno set. */
struct unwinder *unwind_start(int ringbuf_fd, unwind_sink sink, void *arg);

/* Stacks unwound, and the CPU time of the unwinder's thread (polling,
 * unwinding, symbolizing). */
struct unwind_stats {
	__u64 samples;
	__u64 cpu_ns;
};

/* Stops the thread, unwinds what is left in the ring buffer, frees; the
 * totals go to stats when it is not NULL. */
void unwind_stop(struct unwinder *u, struct unwind_stats *stats);

#endif
