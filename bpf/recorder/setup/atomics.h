/* SPDX-License-Identifier: GPL-2.0 */
/* Whether the kernel's BPF has atomic fetch-and-add (atomics.c). */
#ifndef LOCKSCOPE_RECORD_ATOMICS_H
#define LOCKSCOPE_RECORD_ATOMICS_H

#include <stdbool.h>

/* True when a program holding BPF_ATOMIC | BPF_ADD | BPF_FETCH loads: the
 * device busy time needs it (kern/block.bpf.inc). Asked of the kernel once. */
bool atomics_fetch_add(void);

#endif
