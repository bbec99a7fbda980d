// SPDX-License-Identifier: GPL-2.0
/* (dev, ino) -> path: a cache for the inodes a recording names, filled
 * through a process's open files or by a bounded breadth-first walk of the
 * mounts of that device. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "record.h"
#include "resolve/paths.h"

#define KDEV_MINOR_BITS 20
#define DEFAULT_MAX_ENTRIES 1000000u

dev_t paths_kdev_to_udev(uint32_t kdev)
{
	return makedev(kdev >> KDEV_MINOR_BITS, kdev & ((1u << KDEV_MINOR_BITS) - 1));
}

static int copy_out(char *buf, size_t len, const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);

	if (na + nb >= len)
		return -ENAMETOOLONG;
	memcpy(buf, a, na);
	memcpy(buf + na, b, nb + 1);
	return 0;
}

int paths_from_fds(int pid, dev_t dev, uint64_t ino, char *buf, size_t len)
{
	char dir[64], link[PATH_MAX];
	struct dirent *de;
	int dfd, err = -ENOENT;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		struct stat st;
		ssize_t n;

		/* stat follows the fd link to the open file itself */
		if (de->d_name[0] == '.' || fstatat(dfd, de->d_name, &st, 0) ||
		    st.st_dev != dev || st.st_ino != ino)
			continue;
		n = readlinkat(dfd, de->d_name, link, sizeof(link) - 1);
		if (n < 0)
			continue;  /* closed meanwhile */
		link[n] = '\0';
		err = copy_out(buf, len, link, "");
		break;
	}
	closedir(d);
	return err;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *o = s;

	for (; *s; s++, o++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*o = *s;
		}
	}
	*o = '\0';
}

/* Mount points of dev, in mountinfo order. */
static int mounts_of(dev_t dev, char ***out, size_t *nout)
{
	char *line = NULL, **v = NULL;
	size_t cap = 0, n = 0;
	FILE *fp = fopen("/proc/self/mountinfo", "re");
	int err = 0;

	if (!fp)
		return -errno;
	while (getline(&line, &cap, fp) > 0) {
		unsigned maj, min;
		char mp[PATH_MAX], **nv;

		/* id parent maj:min root mount-point ... */
		if (sscanf(line, "%*d %*d %u:%u %*s %4095s", &maj, &min, mp) != 3 ||
		    makedev(maj, min) != dev)
			continue;
		unescape_octal(mp);
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv || !(nv[n] = strdup(mp))) {
			v = nv ? nv : v;
			err = -ENOMEM;
			break;
		}
		v = nv;
		n++;
	}
	free(line);
	fclose(fp);
	if (err) {
		while (n)
			free(v[--n]);
		free(v);
		return err;
	}
	*out = v;
	*nout = n;
	return 0;
}

/* Breadth-first queue of directories, as paths relative to the mount. The
 * walk looks for every inode want() says yes to, and ends when found()
 * returns non-zero (1: all found; negative: an error). */
struct walk {
	dev_t dev;
	unsigned budget;      /* entries left to visit */
	bool (*want)(void *ctx, uint64_t ino);
	int (*found)(void *ctx, uint64_t ino, const char *path);
	void *ctx;
	char **q;
	size_t head;
	size_t n;
	size_t cap;
};

/* Queues rel/name, or rel itself when name is NULL. */
static int push(struct walk *w, const char *rel, const char *name)
{
	char *p;

	if (w->n == w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 64;
		char **nq = realloc(w->q, ncap * sizeof(*nq));

		if (!nq)
			return -ENOMEM;
		w->q = nq;
		w->cap = ncap;
	}
	if (name ? asprintf(&p, "%s/%s", rel, name) < 0 : !(p = strdup(rel)))
		return -ENOMEM;
	w->q[w->n++] = p;
	return 0;
}

static void walk_reset(struct walk *w)
{
	while (w->n > w->head)
		free(w->q[--w->n]);
	w->head = w->n = 0;
}

/* An entry the walk looks for: confirmed by stat (d_ino saves a stat per
 * entry, but only the stat is exact), then handed to found(). */
static int match(struct walk *w, int fd, const char *mp, const char *rel, const char *nm)
{
	char tail[PATH_MAX], path[PATH_MAX];
	struct stat st;

	if (fstatat(fd, nm, &st, AT_SYMLINK_NOFOLLOW) || st.st_dev != w->dev ||
	    !w->want(w->ctx, st.st_ino))
		return 0;
	if ((size_t)snprintf(tail, sizeof(tail), "%s/%s", rel, nm) >= sizeof(tail) ||
	    copy_out(path, sizeof(path), mp, tail))
		return w->found(w->ctx, st.st_ino, NULL);
	return w->found(w->ctx, st.st_ino, path);
}

/* Scans one directory: non-zero ends the walk (see struct walk). */
static int scan_dir(struct walk *w, const char *mp, const char *rel)
{
	char full[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int fd, ret = 0;
	DIR *d;

	if ((size_t)snprintf(full, sizeof(full), "%s%s", mp, rel) >= sizeof(full))
		return 0;
	if (!full[0])
		strcpy(full, "/");  /* the root of a mount on "/" */
	fd = open(full, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* another filesystem mounted here: not ours to walk */
	if (fstat(fd, &st) || st.st_dev != w->dev || !(d = fdopendir(fd))) {
		close(fd);
		return 0;
	}
	while (!ret && (de = readdir(d))) {
		const char *nm = de->d_name;
		bool dir = de->d_type == DT_DIR;

		if (nm[0] == '.' && (!nm[1] || (nm[1] == '.' && !nm[2])))
			continue;
		if (!w->budget) {
			ret = -E2BIG;
			break;
		}
		w->budget--;
		if (w->want(w->ctx, de->d_ino) && (ret = match(w, fd, mp, rel, nm)))
			break;
		if (de->d_type == DT_UNKNOWN)
			dir = !fstatat(fd, nm, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode);
		if (dir)
			ret = push(w, rel, nm);
	}
	closedir(d);
	return ret;
}

static int walk_mount(struct walk *w, const char *mountpoint)
{
	/* "/" would give "//a": relative paths start with '/' already */
	const char *mp = strcmp(mountpoint, "/") ? mountpoint : "";
	struct stat st;
	int ret;

	if (!stat(mountpoint, &st) && st.st_dev == w->dev && w->want(w->ctx, st.st_ino)) {
		ret = w->found(w->ctx, st.st_ino, mountpoint);
		if (ret)
			return ret;
	}
	walk_reset(w);
	ret = push(w, "", NULL);
	if (ret)
		return ret;
	while (w->head < w->n) {
		char *rel = w->q[w->head];

		ret = scan_dir(w, mp, rel);
		free(rel);
		w->q[w->head++] = NULL;
		if (ret)
			return ret;
	}
	return 0;
}

/* One walk of every mount of w->dev, within one budget: 1 when found()
 * said all were found, 0 when the walk ended first, negative on error. */
static int walk_device(struct walk *w)
{
	char **mps = NULL;
	size_t n = 0;
	int ret;

	ret = mounts_of(w->dev, &mps, &n);
	if (ret)
		return ret;
	for (size_t i = 0; i < n && !ret; i++)
		ret = walk_mount(w, mps[i]);
	walk_reset(w);
	free(w->q);
	for (size_t i = 0; i < n; i++)
		free(mps[i]);
	free(mps);
	return ret;
}

struct one_inode {
	uint64_t ino;
	char *buf;
	size_t len;
};

static bool one_want(void *ctx, uint64_t ino)
{
	return ((struct one_inode *)ctx)->ino == ino;
}

static int one_found(void *ctx, uint64_t ino, const char *path)
{
	struct one_inode *o = ctx;
	int err = path ? copy_out(o->buf, o->len, path, "") : -ENAMETOOLONG;

	(void)ino;
	return err ? err : 1;
}

int paths_from_mount(dev_t dev, uint64_t ino, char *buf, size_t len, unsigned max_entries)
{
	struct one_inode o = { .ino = ino, .buf = buf, .len = len };
	struct walk w = { .dev = dev, .want = one_want, .found = one_found, .ctx = &o };
	int ret;

	w.budget = max_entries ? max_entries : DEFAULT_MAX_ENTRIES;
	ret = walk_device(&w);
	if (ret == 1)
		return 0;
	return ret ? ret : -ENOENT;
}

/* ---- the cache ---- */

#define FD_TRIES 3          /* fd-table reads per inode while recording */
#define MOUNT_SEARCHES 64   /* walks of a device's mounts, each for all its inodes */

struct path_entry {
	__u32 kdev;
	__u64 ino;
	char *path;
	int fd_tries;
	bool mount_tried;
	bool searching;     /* looked for by the walk under way */
};

struct rec_paths {
	struct path_entry *e;
	size_t n, cap;
	size_t *slots;      /* index + 1 into e, 0 = empty */
	size_t nslots;
	int pids[REC_MAX_PIDS];
	int nr_pids;
	unsigned int mount_max;
	unsigned mount_searches;
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

/* The slot holding (kdev, ino), or the empty slot where it would go; the
 * table has slots (nslots > 0). */
static size_t probe_slot(const struct rec_paths *p, __u32 kdev, __u64 ino)
{
	size_t h;

	for (h = slot_of(p, kdev, ino); p->slots[h]; h = (h + 1) & (p->nslots - 1)) {
		const struct path_entry *e = &p->e[p->slots[h] - 1];

		if (e->kdev == kdev && e->ino == ino)
			break;
	}
	return h;
}

/* The entry for (kdev, ino), or NULL. */
static struct path_entry *find(const struct rec_paths *p, __u32 kdev, __u64 ino)
{
	size_t h;

	if (!p->nslots)
		return NULL;
	h = probe_slot(p, kdev, ino);
	return p->slots[h] ? &p->e[p->slots[h] - 1] : NULL;
}

/* The entry for (kdev, ino), created when missing. */
static struct path_entry *entry(struct rec_paths *p, __u32 kdev, __u64 ino)
{
	size_t h;

	if ((p->n + 1) * 2 > p->nslots && grow(p))
		return NULL;
	h = probe_slot(p, kdev, ino);
	if (p->slots[h])
		return &p->e[p->slots[h] - 1];
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

	if (pid <= 0 || paths_from_fds(pid, paths_kdev_to_udev(e->kdev), e->ino, buf, sizeof(buf)))
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

void paths_want(struct rec_paths *p, __u32 kdev, __u64 ino)
{
	entry(p, kdev, ino);
}

struct device_search {
	struct rec_paths *p;
	__u32 kdev;
	size_t left;
};

static bool search_want(void *ctx, uint64_t ino)
{
	struct device_search *d = ctx;
	struct path_entry *e = find(d->p, d->kdev, ino);

	return e && e->searching;
}

static int search_found(void *ctx, uint64_t ino, const char *path)
{
	struct device_search *d = ctx;
	struct path_entry *e = find(d->p, d->kdev, ino);

	if (!path || !e || !e->searching)
		return 0;
	e->searching = false;
	e->path = strdup(path);
	return --d->left ? 0 : 1;
}

/* One walk of kdev's mounts for all its inodes not named yet: the walk's
 * cost is the tree's, whatever the number of inodes looked for. */
static void search_device(struct rec_paths *p, __u32 kdev)
{
	struct device_search d = { .p = p, .kdev = kdev };
	struct walk w = { .dev = paths_kdev_to_udev(kdev), .budget = p->mount_max,
			  .want = search_want, .found = search_found, .ctx = &d };
	size_t i;

	for (i = 0; i < p->n; i++) {
		struct path_entry *e = &p->e[i];

		if (e->kdev == kdev && !e->path && !e->mount_tried) {
			e->mount_tried = e->searching = true;
			d.left++;
		}
	}
	p->mount_searches++;
	if (d.left)
		walk_device(&w);
	for (i = 0; i < p->n; i++)
		p->e[i].searching = false;
}

const char *paths_lookup(struct rec_paths *p, __u32 kdev, __u64 ino, int pid)
{
	struct path_entry *e = entry(p, kdev, ino);
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
	search_device(p, kdev);
	return e->path;
}

unsigned paths_walks(const struct rec_paths *p)
{
	return p->mount_searches;
}
