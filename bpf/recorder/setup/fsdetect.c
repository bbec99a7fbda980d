// SPDX-License-Identifier: GPL-2.0
/* Which filesystem types the traced processes work on: each open regular
 * file and the working directory are stat()ed through /proc/PID (the links
 * are followed into any mount namespace) and their st_dev is looked up in
 * the process's own mountinfo. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include "setup/fsdetect.h"

#ifndef XFS_SUPER_MAGIC
#define XFS_SUPER_MAGIC 0x58465342
#endif
#ifndef EXT4_SUPER_MAGIC
#define EXT4_SUPER_MAGIC 0xEF53 /* ext2, ext3 and ext4 alike */
#endif
#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#endif
#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif
#ifndef BTRFS_SUPER_MAGIC
#define BTRFS_SUPER_MAGIC 0x9123683E
#endif

struct mount_type {
	dev_t dev;
	char type[FSDETECT_NAME_LEN];
};

struct mount_table {
	struct mount_type *m;
	size_t n, cap;
};

void fsdetect_add(struct fsdetect_set *set, const char *type)
{
	if (fsdetect_has(set, type) || set->n >= FSDETECT_MAX_TYPES)
		return;
	snprintf(set->types[set->n++], FSDETECT_NAME_LEN, "%s", type);
}

bool fsdetect_has(const struct fsdetect_set *set, const char *type)
{
	int i;

	for (i = 0; i < set->n; i++)
		if (!strcmp(set->types[i], type))
			return true;
	return false;
}

void fsdetect_join(const struct fsdetect_set *set, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < set->n && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "", set->types[i]);
}

/* "ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [TAGS...] - TYPE SOURCE ..."
 * (Documentation/filesystems/proc.rst, /proc/PID/mountinfo). */
static int read_mounts(const char *path, struct mount_table *t)
{
	FILE *f = fopen(path, "re");
	char line[4096];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");
		unsigned int major, minor;
		char type[FSDETECT_NAME_LEN];

		if (!sep || sscanf(line, "%*s %*s %u:%u", &major, &minor) != 2 ||
		    sscanf(sep + 3, "%63s", type) != 1)
			continue;
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 64;
			struct mount_type *m = realloc(t->m, cap * sizeof(*m));

			if (!m)
				break;
			t->m = m;
			t->cap = cap;
		}
		t->m[t->n].dev = makedev(major, minor);
		snprintf(t->m[t->n++].type, FSDETECT_NAME_LEN, "%s", type);
	}
	fclose(f);
	return 0;
}

static const char *mount_type_of(const struct mount_table *t, dev_t dev)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->m[i].dev == dev)
			return t->m[i].type;
	return NULL;
}

/* A file whose device no mountinfo lists: a kernel-internal mount (memfd,
 * shared memory), a lazily unmounted one, or a btrfs subvolume (its own
 * anonymous st_dev). The superblock magic still tells the types that
 * matter here; any other is no disk filesystem probe groups serve. */
static const char *magic_type_of(const char *path)
{
	static const struct {
		unsigned long magic;
		const char *type;
	} known[] = {
		{ XFS_SUPER_MAGIC, "xfs" }, { EXT4_SUPER_MAGIC, "ext4" },
		{ OVERLAYFS_SUPER_MAGIC, "overlay" }, { FUSE_SUPER_MAGIC, "fuse" },
		{ BTRFS_SUPER_MAGIC, "btrfs" },
	};
	struct statfs sfs;
	size_t i;

	if (statfs(path, &sfs))
		return NULL;
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if ((unsigned long)sfs.f_type == known[i].magic)
			return known[i].type;
	return NULL;
}

static void add_path(struct fsdetect_set *set, const char *path, bool regular_only,
		     const struct mount_table *own, const struct mount_table *self)
{
	struct stat st;
	const char *type;

	if (stat(path, &st) || (regular_only && !S_ISREG(st.st_mode)))
		return;
	type = mount_type_of(own, st.st_dev);
	if (!type)
		type = mount_type_of(self, st.st_dev);
	if (!type)
		type = magic_type_of(path);
	if (type)
		fsdetect_add(set, type);
}

int fsdetect_pids(const int *pids, int n, struct fsdetect_set *set, char *err, size_t len)
{
	struct mount_table self = { 0 };
	char path[96];
	int i, rc = 0;

	read_mounts("/proc/self/mountinfo", &self);
	for (i = 0; i < n && !rc; i++) {
		struct mount_table own = { 0 };
		struct dirent *e;
		DIR *d;
		int r;

		snprintf(path, sizeof(path), "/proc/%d/mountinfo", pids[i]);
		r = read_mounts(path, &own);
		if (r < 0) {
			snprintf(err, len, "cannot read %s: %s", path, strerror(-r));
			rc = -1;
			break;
		}
		snprintf(path, sizeof(path), "/proc/%d/fd", pids[i]);
		d = opendir(path);
		if (!d) {
			snprintf(err, len, "cannot read %s: %s", path, strerror(errno));
			rc = -1;
		}
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fd/%.32s", pids[i], e->d_name);
			add_path(set, path, true, &own, &self);
		}
		if (d)
			closedir(d);
		snprintf(path, sizeof(path), "/proc/%d/cwd", pids[i]);
		add_path(set, path, false, &own, &self);
		free(own.m);
	}
	free(self.m);
	return rc;
}

/* fs/ext4/super.c: ext4 registers "ext3" (and "ext2" with
 * CONFIG_EXT4_USE_FOR_EXT2) and mounts them with its own code, tracepoints
 * included. An ext2 the old ext2 driver mounted gets ext4's groups too:
 * needless, not wrong. */
const char *fsdetect_family(const char *type)
{
	if (!strcmp(type, "ext2") || !strcmp(type, "ext3"))
		return "ext4";
	return type;
}

/* The write path runs on in the caller's task, on another filesystem's file:
 * fs/overlayfs/file.c ovl_write_iter() and fs/fuse/passthrough.c
 * fuse_passthrough_write_iter() -> backing_file_write_iter() on the real
 * file; fs/ecryptfs/read_write.c ecryptfs_write_lower() -> kernel_write()
 * on the lower file. FUSE types read "fuse", "fuseblk" or "fuse.SUBTYPE". */
bool fsdetect_stacked(const char *type)
{
	return !strcmp(type, "overlay") || !strncmp(type, "fuse", 4) ||
	       !strcmp(type, "ecryptfs");
}

bool fsdetect_known(const char *type)
{
	FILE *f = fopen("/proc/filesystems", "re");
	char line[256], name[FSDETECT_NAME_LEN];
	bool found = false;

	/* "nodev\tproc\n" or "\text4\n" */
	while (f && !found && fgets(line, sizeof(line), f)) {
		const char *tab = strchr(line, '\t');

		found = tab && sscanf(tab + 1, "%63s", name) == 1 && !strcmp(name, type);
	}
	if (f)
		fclose(f);
	return found;
}
