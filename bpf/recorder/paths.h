/* SPDX-License-Identifier: GPL-2.0 */
/* (dev, ino) -> path for the inodes the recording names: first through the
 * open files of the processes that used them (read while they still live),
 * then by searching the mount (inode_path.h). */
#ifndef LOCKSCOPE_RECORD_PATHS_H
#define LOCKSCOPE_RECORD_PATHS_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

struct rec_paths;

struct rec_paths *paths_new(unsigned int mount_search_max);
void paths_free(struct rec_paths *p);

/* Pids whose open files are worth reading for any inode (--pid list). */
void paths_add_pids(struct rec_paths *p, const int *pids, int n);

/* Tries, through pid's open files, an inode seen in the kernel map (kdev is
 * the kernel's dev_t). Returns whether /proc was read (false when the path
 * is known or was tried often enough). */
bool paths_try_fds(struct rec_paths *p, __u32 kdev, __u64 ino, int pid);

/* The final answer: cached, else fds of pid and of the --pid list, else a
 * bounded search of the mount. NULL when not found. */
const char *paths_lookup(struct rec_paths *p, __u32 kdev, __u64 ino, int pid);

#endif
