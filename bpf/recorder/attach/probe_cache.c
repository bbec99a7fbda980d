// SPDX-License-Identifier: GPL-2.0
/* The answers of earlier tries of probe groups' attach kinds (probe_cache.h).
 *
 * A file per BPF object in the cache directory, "probes-<object hash>": a key
 * line (boot id, the object's hash, the loaded modules' names and sizes,
 * this recorder's executable (inode, size, modification time),
 * the effective capabilities), then one line per answer, "group kind errno
 * reason". A file whose key differs is ignored and replaced: another boot,
 * a module loaded or unloaded (a module's tracepoints and types come and go
 * with it), other privileges. Only a file owned by this user and writable by
 * no other is read. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "attach/probe_cache.h"

#define CACHE_DIR "/run/lockscope"
#define MAX_ANSWERS 128
#define ENOTSUPP 524 /* the kernel's own, for an untraceable function */

struct answer {
	char group[32];
	char kind[16];
	int err;
	char why[160];
};

static struct {
	bool on;
	bool changed;
	char path[512];
	char key[256];
	int n;
	struct answer answers[MAX_ANSWERS];
} cache;

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len--)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

static void read_line(const char *path, const char *prefix, char *out, size_t len)
{
	char line[256];
	FILE *f = fopen(path, "r");

	out[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, prefix, strlen(prefix))) {
			snprintf(out, len, "%s", line + strlen(prefix));
			out[strcspn(out, " \t\n")] = 0;
			break;
		}
	}
	fclose(f);
}

/* Names and sizes of the loaded modules, in any order: their use counts change
 * while the key should not. */
static uint64_t modules_hash(void)
{
	char line[512], name[128];
	unsigned long size;
	uint64_t sum = 0;
	FILE *f = fopen("/proc/modules", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %lu", name, &size) == 2) {
			uint64_t h = fnv(0xcbf29ce484222325ULL, name, strlen(name));

			sum += fnv(h, &size, sizeof(size));
		}
	}
	fclose(f);
	return sum;
}

static bool usable_file(FILE *f)
{
	struct stat st;

	return !fstat(fileno(f), &st) && st.st_uid == geteuid() && !(st.st_mode & 022);
}

void probe_cache_open(const void *object, size_t size)
{
	const char *dir = getenv("LOCKSCOPE_PROBE_CACHE_DIR");
	char boot[64], caps[32], line[512];
	uint64_t obj = fnv(0xcbf29ce484222325ULL, object, size);
	struct stat exe = { 0 };
	FILE *f;

	memset(&cache, 0, sizeof(cache));
	if (!dir || !*dir)
		dir = CACHE_DIR;
	if (!strcmp(dir, "off"))
		return;
	read_line("/proc/sys/kernel/random/boot_id", "", boot, sizeof(boot));
	read_line("/proc/self/status", "CapEff:\t", caps, sizeof(caps));
	if (!boot[0])
		return;
	cache.on = true;
	snprintf(cache.path, sizeof(cache.path), "%s/probes-%016llx", dir, (unsigned long long)obj);
	/* the loader too: how it sets the object up before load (which maps it
	 * creates, say) changes the answers as much as the object does */
	stat("/proc/self/exe", &exe);
	snprintf(cache.key, sizeof(cache.key),
		 "lockscope-probe-cache 1 %s %016llx %016llx %s %llx-%llx-%llx", boot,
		 (unsigned long long)obj, (unsigned long long)modules_hash(), caps,
		 (unsigned long long)exe.st_ino, (unsigned long long)exe.st_size,
		 (unsigned long long)exe.st_mtime);
	f = fopen(cache.path, "r");
	if (!f)
		return;
	if (usable_file(f) && fgets(line, sizeof(line), f) && !strncmp(line, cache.key, strlen(cache.key)) &&
	    line[strlen(cache.key)] == '\n') {
		while (cache.n < MAX_ANSWERS && fgets(line, sizeof(line), f)) {
			struct answer *a = &cache.answers[cache.n];
			int used = 0;

			line[strcspn(line, "\n")] = 0;
			if (sscanf(line, "%31s %15s %d %n", a->group, a->kind, &a->err, &used) >= 3 &&
			    used > 0) {
				snprintf(a->why, sizeof(a->why), "%s", line + used);
				cache.n++;
			}
		}
	}
	fclose(f);
}

static struct answer *find(const char *group, const char *kind)
{
	for (int i = 0; i < cache.n; i++)
		if (!strcmp(cache.answers[i].group, group) && !strcmp(cache.answers[i].kind, kind))
			return &cache.answers[i];
	return NULL;
}

bool probe_cache_get(const char *group, const char *kind, int *err, char *why, size_t len)
{
	struct answer *a = cache.on ? find(group, kind) : NULL;

	if (!a)
		return false;
	*err = a->err;
	snprintf(why, len, "%s", a->why);
	return true;
}

/* A refusal for this program on this kernel: the same next time. ENOMEM,
 * EBUSY, EAGAIN and the like depend on the moment. */
static bool lasting(int err)
{
	switch (err) {
	case 0: case EINVAL: case EPERM: case EACCES: case ENOENT: case EOPNOTSUPP:
	case ENOTSUPP: case E2BIG: case ESRCH:
		return true;
	default:
		return false;
	}
}

void probe_cache_put(const char *group, const char *kind, int err, const char *why)
{
	struct answer *a;

	if (!cache.on || !lasting(err < 0 ? -err : err))
		return;
	a = find(group, kind);
	if (!a) {
		if (cache.n >= MAX_ANSWERS)
			return;
		a = &cache.answers[cache.n++];
		snprintf(a->group, sizeof(a->group), "%s", group);
		snprintf(a->kind, sizeof(a->kind), "%s", kind);
	} else if (a->err == (err < 0 ? -err : err) && !strcmp(a->why, why ? why : "")) {
		return;
	}
	a->err = err < 0 ? -err : err;
	/* one line per answer */
	snprintf(a->why, sizeof(a->why), "%s", why ? why : "");
	a->why[strcspn(a->why, "\n")] = 0;
	cache.changed = true;
}

void probe_cache_save(void)
{
	char dir[512], tmp[600];
	char *slash;
	FILE *f;
	int fd;

	if (!cache.on || !cache.changed)
		return;
	snprintf(dir, sizeof(dir), "%s", cache.path);
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = 0;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return;
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", cache.path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return;
	}
	fprintf(f, "%s\n", cache.key);
	for (int i = 0; i < cache.n; i++)
		fprintf(f, "%s %s %d %s\n", cache.answers[i].group, cache.answers[i].kind,
			cache.answers[i].err, cache.answers[i].why);
	if (fclose(f) || rename(tmp, cache.path))
		unlink(tmp);
	else
		cache.changed = false;
}
