/* SPDX-License-Identifier: GPL-2.0 */
/* Timestamps in nanoseconds (vDSO clock_gettime: no syscall per I/O). */
#ifndef LOAD_CLOCK_H
#define LOAD_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t timeval_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ULL + (uint64_t)tv->tv_usec * 1000ULL;
}

#endif
