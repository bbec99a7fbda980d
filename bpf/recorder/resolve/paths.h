/* SPDX-License-Identifier: GPL-2.0 */
/* (dev, ino) -> path for the inodes the recording names: first through the
 * open files of the processes that used them (read while they still live),
 * then by searching the mount. The lookups return 0 or a negative errno:
 * -ENOENT when the inode was not found, -ENAMETOOLONG when the path does
 * not fit in buf, -E2BIG when a bounded walk ran out of budget first. */
#ifndef LOCKSCOPE_RECORD_PATHS_H
#define LOCKSCOPE_RECORD_PATHS_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The kernel's internal dev_t (major << 20 | minor, as in tracepoint 'dev'
 * fields and sb->s_dev) as a user-space dev_t (makedev), comparable with
 * st_dev. */
dev_t paths_kdev_to_udev(uint32_t kdev);

/* Path of (dev, ino) among the open files of pid (/proc/PID/fd; threads
 * share the table). The path is the fd link as the kernel prints it, so a
 * deleted file ends in " (deleted)". */
int paths_from_fds(int pid, dev_t dev, uint64_t ino, char *buf, size_t len);

/* Path of (dev, ino) found by walking, breadth first, the mounts of dev in
 * /proc/self/mountinfo. Visits at most max_entries directory entries in all
 * (0: a default of 1,000,000) and never crosses into another mount. */
int paths_from_mount(dev_t dev, uint64_t ino, char *buf, size_t len, unsigned max_entries);

struct rec_paths;

struct rec_paths *paths_new(unsigned int mount_search_max);
void paths_free(struct rec_paths *p);

/* Pids whose open files are worth reading for any inode (--pid list). */
void paths_add_pids(struct rec_paths *p, const int *pids, int n);

/* Tries, through pid's open files, an inode seen in the kernel map (kdev is
 * the kernel's dev_t). Returns whether /proc was read (false when the path
 * is known or was tried often enough). */
bool paths_try_fds(struct rec_paths *p, __u32 kdev, __u64 ino, int pid);

/* Makes (kdev, ino) one of the inodes the next search of its device looks
 * for: register every inode a document names before the first lookup. */
void paths_want(struct rec_paths *p, __u32 kdev, __u64 ino);

/* The final answer: cached, else fds of pid and of the --pid list, else a
 * bounded walk of the device's mounts, which looks for every wanted inode of
 * that device at once. NULL when not found. */
const char *paths_lookup(struct rec_paths *p, __u32 kdev, __u64 ino, int pid);

/* Walks of a device's mounts so far (each bounded by mount_search_max). */
unsigned paths_walks(const struct rec_paths *p);

#endif
