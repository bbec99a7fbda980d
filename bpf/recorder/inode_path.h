/* SPDX-License-Identifier: GPL-2.0 */
/* (dev, inode) -> path, for the recorder's lock -> inode -> path table.
 * Functions return 0 or a negative errno: -ENOENT when the inode was not
 * found, -ENAMETOOLONG when the path does not fit in buf, -E2BIG when a
 * bounded walk ran out of budget before finding it. */
#ifndef LOCKSCOPE_INODE_PATH_H
#define LOCKSCOPE_INODE_PATH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The kernel's internal dev_t (major << 20 | minor, as in tracepoint 'dev'
 * fields and sb->s_dev) as a user-space dev_t (makedev), comparable with
 * st_dev. */
dev_t kdev_to_udev(uint32_t kdev);

/* Path of (dev, ino) among the open files of pid (/proc/PID/fd; threads
 * share the table). The path is the fd link as the kernel prints it, so a
 * deleted file ends in " (deleted)". */
int inode_path_from_fds(int pid, dev_t dev, uint64_t ino, char *buf, size_t len);

/* Path of (dev, ino) found by walking, breadth first, the mounts of dev in
 * /proc/self/mountinfo. Visits at most max_entries directory entries in all
 * (0: a default of 1,000,000) and never crosses into another mount. */
int inode_path_from_mount(dev_t dev, uint64_t ino, char *buf, size_t len, unsigned max_entries);

#endif
