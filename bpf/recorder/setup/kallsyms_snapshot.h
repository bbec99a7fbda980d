/* SPDX-License-Identifier: GPL-2.0 */
/* /proc/kallsyms, read once per start (kallsyms_snapshot.c). */
#ifndef LOCKSCOPE_KALLSYMS_SNAPSHOT_H
#define LOCKSCOPE_KALLSYMS_SNAPSHOT_H

#include <stddef.h>

/* The file as read at its first use in this process (NUL-terminated; its
 * length in *len when len is set), or NULL with errno. Not to be changed. */
const char *kallsyms_snapshot(size_t *len);
/* A copy of it for the caller to change and free, or NULL with errno. */
char *kallsyms_snapshot_copy(size_t *len);
/* Frees it: the next use reads the file again. */
void kallsyms_snapshot_drop(void);

#endif
