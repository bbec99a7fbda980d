// SPDX-License-Identifier: GPL-2.0
/* Inode path cache on top of inode_path.h. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "inode_path.h"
#include "record.h"
#include "paths.h"

#define FD_TRIES 3          /* fd-table reads per inode while recording */
#define MOUNT_SEARCHES 64   /* inodes searched for by walking a mount */

struct path_entry {
	__u32 kdev;
	__u64 ino;
	char *path;
	int fd_tries;
	bool mount_tried;
};

struct rec_paths {
	struct path_entry *e;
	size_t n, cap;
	size_t *slots;      /* index + 1 into e, 0 = empty */
	size_t nslots;
	int pids[REC_MAX_PIDS];
	int nr_pids;
	unsigned int mount_max;
	int mount_searches;
};

struct rec_paths *paths_new(unsigned int mount_search_max)
{
	struct rec_paths *p = calloc(1, sizeof(*p));

	if (p)
		p->mount_max = mount_search_max;
	return p;
}

void paths_free(struct rec_paths *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		free(p->e[i].path);
	free(p->e);
	free(p->slots);
	free(p);
}

void paths_add_pids(struct rec_paths *p, const int *pids, int n)
{
	int i;

	for (i = 0; i < n && p->nr_pids < REC_MAX_PIDS; i++)
		p->pids[p->nr_pids++] = pids[i];
}

static size_t slot_of(const struct rec_paths *p, __u32 kdev, __u64 ino)
{
	__u64 h = (ino * 0x9e3779b97f4a7c15ULL) ^ ((__u64)kdev << 17);

	return (h ^ (h >> 29)) & (p->nslots - 1);
}

static int grow(struct rec_paths *p)
{
	size_t nslots = p->nslots ? p->nslots * 2 : 256, i;
	size_t *slots = calloc(nslots, sizeof(*slots)), h, old = p->nslots;

	if (!slots)
		return -ENOMEM;
	free(p->slots);
	p->slots = slots;
	p->nslots = nslots;
	for (i = 0; old && i < p->n; i++) {
		for (h = slot_of(p, p->e[i].kdev, p->e[i].ino); p->slots[h]; h = (h + 1) & (nslots - 1))
			;
		p->slots[h] = i + 1;
	}
	return 0;
}

/* The entry for (kdev, ino), created when missing. */
static struct path_entry *entry(struct rec_paths *p, __u32 kdev, __u64 ino)
{
	size_t h;

	if ((p->n + 1) * 2 > p->nslots && grow(p))
		return NULL;
	for (h = slot_of(p, kdev, ino); p->slots[h]; h = (h + 1) & (p->nslots - 1)) {
		struct path_entry *e = &p->e[p->slots[h] - 1];

		if (e->kdev == kdev && e->ino == ino)
			return e;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct path_entry *ne = realloc(p->e, cap * sizeof(*ne));

		if (!ne)
			return NULL;
		p->e = ne;
		p->cap = cap;
	}
	memset(&p->e[p->n], 0, sizeof(p->e[0]));
	p->e[p->n].kdev = kdev;
	p->e[p->n].ino = ino;
	p->slots[h] = ++p->n;
	return &p->e[p->n - 1];
}

static bool from_fds(struct path_entry *e, int pid)
{
	char buf[PATH_MAX];

	if (pid <= 0 || inode_path_from_fds(pid, kdev_to_udev(e->kdev), e->ino, buf, sizeof(buf)))
		return false;
	e->path = strdup(buf);
	return e->path != NULL;
}

bool paths_try_fds(struct rec_paths *p, __u32 kdev, __u64 ino, int pid)
{
	struct path_entry *e = entry(p, kdev, ino);
	int i;

	if (!e || e->path || e->fd_tries >= FD_TRIES)
		return false;
	e->fd_tries++;
	if (from_fds(e, pid))
		return true;
	for (i = 0; i < p->nr_pids; i++)
		if (p->pids[i] != pid && from_fds(e, p->pids[i]))
			break;
	return true;
}

const char *paths_lookup(struct rec_paths *p, __u32 kdev, __u64 ino, int pid)
{
	struct path_entry *e = entry(p, kdev, ino);
	char buf[PATH_MAX];
	int i;

	if (!e)
		return NULL;
	if (e->path)
		return e->path;
	if (from_fds(e, pid))
		return e->path;
	for (i = 0; i < p->nr_pids; i++)
		if (from_fds(e, p->pids[i]))
			return e->path;
	if (e->mount_tried || p->mount_searches >= MOUNT_SEARCHES || !p->mount_max)
		return NULL;
	e->mount_tried = true;
	p->mount_searches++;
	if (inode_path_from_mount(kdev_to_udev(kdev), ino, buf, sizeof(buf), p->mount_max) == 0)
		e->path = strdup(buf);
	return e->path;
}
