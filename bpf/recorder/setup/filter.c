// SPDX-License-Identifier: GPL-2.0
/* Filters: validation and setting them on the BPF object. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <bpf/libbpf.h>
#include "record.h"
#include "record.skel.h"
#include "setup/filter.h"
#include "msg.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static bool pid_exists(int pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return access(path, F_OK) == 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* The cgroup id the kernel uses (kernfs node id): the file handle of the
 * directory, as perf and bpftool read it. */
static int cgroup_id_of(const char *path, __u64 *id)
{
	struct {
		struct file_handle fh;
		__u64 id;
	} h = { .fh.handle_bytes = sizeof(__u64) };
	int mount_id;

	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) < 0)
		return -errno;
	if (h.fh.handle_bytes != sizeof(__u64))
		return -EINVAL;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}

static int components(const char *p)
{
	int n = 0;

	for (; *p; p++)
		if (*p != '/' && (p[1] == '/' || p[1] == 0))
			n++;
	return n;
}

/* Depth below the cgroup v2 root: components under the longest cgroup2
 * mount point, plus the mount's own root within the hierarchy. */
static int cgroup_level_of(const char *real, __u32 *level)
{
	char line[4096], best_mnt[PATH_MAX] = "", best_root[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/mountinfo", "re");
	size_t best = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char root[PATH_MAX], mnt[PATH_MAX], *sep = strstr(line, " - "), fstype[64];
		size_t n;

		if (!sep || sscanf(sep + 3, "%63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2)
			continue;
		n = strlen(mnt);
		if (strncmp(real, mnt, n) || (real[n] != '/' && real[n] != 0 && strcmp(mnt, "/")))
			continue;
		if (n >= best) {
			best = n;
			snprintf(best_mnt, sizeof(best_mnt), "%s", mnt);
			snprintf(best_root, sizeof(best_root), "%s", root);
		}
	}
	fclose(f);
	if (!best_mnt[0])
		return -ENOENT;
	*level = components(best_root) + components(real + strlen(best_mnt));
	return 0;
}

/* Whether tracing programs may call bpf_get_current_ancestor_cgroup_id: the
 * kernel's own answer (5.10 has the helper, not for tracing). Else the
 * programs read the cgroup's ancestors (util.bpf.inc), which
 * LOCKSCOPE_CGROUP_ANCESTORS=1 forces, for tests. */
static bool cgroup_helper(void)
{
	const char *force = getenv("LOCKSCOPE_CGROUP_ANCESTORS");

	if (force && *force && strcmp(force, "0"))
		return false;
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT,
				       BPF_FUNC_get_current_ancestor_cgroup_id, NULL) == 1;
}

int filter_resolve(const struct rec_opts *o, struct rec_filter *f)
{
	char real[PATH_MAX];
	struct statfs sfs;
	int i, err;

	memset(f, 0, sizeof(*f));
	f->pids = o->pids;
	f->nr_pids = o->nr_pids;
	f->comm = o->comm;
	f->cgroup = o->cgroup;
	for (i = 0; i < o->nr_pids; i++) {
		if (!pid_exists(o->pids[i])) {
			msg_error("--pid: no such process: %d", o->pids[i]);
			return -1;
		}
	}
	if (!o->cgroup)
		return 0;
	if (!realpath(o->cgroup, real)) {
		msg_error("--cgroup: %s: %s", o->cgroup, strerror(errno));
		return -1;
	}
	if (statfs(real, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		msg_error("--cgroup: %s is not a cgroup v2 directory", o->cgroup);
		return -1;
	}
	err = cgroup_id_of(real, &f->cgroup_id);
	if (!err)
		err = cgroup_level_of(real, &f->cgroup_level);
	if (err) {
		msg_error("--cgroup: cannot read the cgroup id of %s: %s", o->cgroup, strerror(-err));
		return -1;
	}
	f->cgroup_helper = cgroup_helper();
	return 0;
}

void filter_rodata(struct record_bpf *skel, const struct rec_filter *f)
{
	int i;

	skel->rodata->has_pid_filter = f->nr_pids > 0;
	skel->rodata->nr_filter_pids = f->nr_pids;
	for (i = 0; i < f->nr_pids && i < REC_MAX_PIDS; i++)
		((__u32 *)skel->rodata->filter_pid_list)[i] = f->pids[i];
	if (f->comm) {
		skel->rodata->has_comm_filter = true;
		strncpy((char *)skel->rodata->comm_filter, f->comm, sizeof(skel->rodata->comm_filter) - 1);
	}
	if (f->cgroup) {
		skel->rodata->has_cgroup_filter = true;
		skel->rodata->cgroup_id = f->cgroup_id;
		skel->rodata->cgroup_level = f->cgroup_level;
		skel->rodata->cgroup_ancestor_helper = f->cgroup_helper;
	}
}
