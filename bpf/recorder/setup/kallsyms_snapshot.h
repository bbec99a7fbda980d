/* SPDX-License-Identifier: GPL-2.0 */
/* /proc/kallsyms, read once per start (kallsyms_snapshot.c). */
#ifndef LOCKSCOPE_KALLSYMS_SNAPSHOT_H
#define LOCKSCOPE_KALLSYMS_SNAPSHOT_H

#include <stddef.h>

/* The file as read at its first use in this process (NUL-terminated; its
 * length in *len when len is set), or NULL with errno. Not to be changed. */
const char *kallsyms_snapshot(size_t *len);
/* The snapshot itself (the file read now when there is none), for the caller
 * to change and free; the next use reads the file again. NULL with errno. */
char *kallsyms_snapshot_take(size_t *len);
/* Frees it: the next use reads the file again. */
void kallsyms_snapshot_drop(void);

#endif
