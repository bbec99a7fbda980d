/* SPDX-License-Identifier: GPL-2.0 */
/* Nanoseconds of a clock: CLOCK_MONOTONIC is the clock of bpf_ktime_get_ns()
 * and of every *_mono_ns figure the recorder writes. */
#ifndef LOCKSCOPE_RECORD_CLOCK_H
#define LOCKSCOPE_RECORD_CLOCK_H

#include <time.h>
#include <linux/types.h>

static inline __u64 clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#endif
