/* SPDX-License-Identifier: GPL-2.0 */
/* Nanoseconds of a clock, for the recorder and the engine. clock_gettime() goes
 * through the vDSO: no system call per reading, so the engine can time every I/O.
 * CLOCK_MONOTONIC is the clock of bpf_ktime_get_ns() and of every *_mono_ns
 * figure the recorder writes. */
#ifndef LOCKSCOPE_CLOCK_H
#define LOCKSCOPE_CLOCK_H

#include <stdint.h>
#include <sys/time.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC, the clock of every interval the engine measures. */
static inline uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* A struct timeval (getrusage's CPU times) in nanoseconds. */
static inline uint64_t timeval_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ULL + (uint64_t)tv->tv_usec * 1000ULL;
}

#endif
