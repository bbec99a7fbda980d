/* SPDX-License-Identifier: GPL-2.0 */
/* Naming a lock that lives inside a known inode object (for example the
 * wait_lock spinlock of an inode's i_rwsem, or the page cache's xa_lock) by
 * the member at its offset, read from kernel BTF. */
#ifndef LOCKSCOPE_RECORD_BTFNAME_H
#define LOCKSCOPE_RECORD_BTFNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct btfname;

/* The name of a lock kind (enum rec_lock_kind), as locks[].kind has it;
 * NULL past the last kind. */
const char *btfname_kind(__u32 kind);

struct btfname *btfname_new(void);
void btfname_free(struct btfname *b);
/* Forgets the objects added, keeps the kernel BTF (to reuse b). */
void btfname_clear(struct btfname *b);

/* An object known to hold a lock of `kind` (enum rec_lock_kind) at
 * lock_addr: remembers the enclosing object's range. */
void btfname_add(struct btfname *b, __u64 lock_addr, __u32 kind, __u32 dev, __u64 ino, int pid);

/* If addr lies inside a remembered object, writes "struct.member.path" and
 * the object's inode; false otherwise. */
bool btfname_lookup(struct btfname *b, __u64 addr, char *buf, size_t len,
		    __u32 *dev, __u64 *ino, int *pid);

#endif
