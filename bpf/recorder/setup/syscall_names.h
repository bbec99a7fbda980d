/* SPDX-License-Identifier: GPL-2.0 */
/* The system calls the recorder follows, by index (record.h: REC_NR_SYSCALLS). */
#ifndef LOCKSCOPE_RECORD_SYSCALL_NAMES_H
#define LOCKSCOPE_RECORD_SYSCALL_NAMES_H

#include "record.h"

extern const char *const syscall_names[REC_NR_SYSCALLS];

/* Call i's kind, as documents name it: write, sync (durability), sync_range
 * (starts writeback only), received, sent. */
const char *syscall_names_kind(int i);

#endif
