/* SPDX-License-Identifier: GPL-2.0 */
/* What the BPF run-time statistics charge a program for measuring it: the
 * run time of an empty program, measured on this machine. */
#ifndef LOCKSCOPE_RECORD_STATSCLOCK_H
#define LOCKSCOPE_RECORD_STATSCLOCK_H

/* Nanoseconds per run that the statistics report for an empty program, or a
 * negative value when they cannot be measured (statistics off, no test runs). */
double statsclock_ns_per_run(void);

#endif
