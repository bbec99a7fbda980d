/* SPDX-License-Identifier: GPL-2.0 */
/* Filesystem types for --fs: which ones the traced processes work on (their
 * open regular files and working directories), which family of probe groups
 * serves a type, and which types this kernel knows. */
#ifndef LOCKSCOPE_RECORD_FSDETECT_H
#define LOCKSCOPE_RECORD_FSDETECT_H

#include <stdbool.h>
#include <stddef.h>

#define FSDETECT_MAX_TYPES 32
#define FSDETECT_NAME_LEN 64

/* A set of filesystem type names, as /proc/PID/mountinfo spells them. */
struct fsdetect_set {
	int n;
	char types[FSDETECT_MAX_TYPES][FSDETECT_NAME_LEN];
};

void fsdetect_add(struct fsdetect_set *set, const char *type);
bool fsdetect_has(const struct fsdetect_set *set, const char *type);

/* "a, b, c" into buf. */
void fsdetect_join(const struct fsdetect_set *set, char *buf, size_t len);

/* Adds the types of the regular files each pid has open (/proc/PID/fd) and
 * of its working directory. 0, or -1 with what could not be read in err. */
int fsdetect_pids(const int *pids, int n, struct fsdetect_set *set, char *err, size_t len);

/* The family whose probe groups serve a type: the type itself, except
 * ext2 and ext3, which ext4's code mounts. */
const char *fsdetect_family(const char *type);

/* Whether a type passes its files' I/O on to files of another filesystem in
 * the caller's own context (overlayfs, FUSE passthrough, eCryptfs). */
bool fsdetect_stacked(const char *type);

/* Whether the running kernel knows the type (/proc/filesystems). */
bool fsdetect_known(const char *type);

#endif
