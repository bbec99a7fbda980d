// SPDX-License-Identifier: GPL-2.0
/* Lookups in the running kernel's BTF, modules included (kernel_btf.h). */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>
#include "kernel_btf.h"

void kernel_btf_open(struct kernel_btf *k)
{
	memset(k, 0, sizeof(*k));
	k->vmlinux = btf__load_vmlinux_btf();
}

void kernel_btf_close(struct kernel_btf *k)
{
	int i;

	for (i = 0; i < k->nr_mods; i++)
		btf__free(k->mods[i]);
	btf__free(k->vmlinux);
	memset(k, 0, sizeof(*k));
}

static void load_modules(struct kernel_btf *k)
{
	struct dirent *de;
	DIR *d;

	k->mods_loaded = true;
	if (!k->vmlinux || !(d = opendir("/sys/kernel/btf")))
		return;
	while ((de = readdir(d)) && k->nr_mods < KERNEL_BTF_MAX_MODS) {
		char path[300];
		struct btf *b;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "vmlinux"))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/btf/%s", de->d_name);
		b = btf__parse_split(path, k->vmlinux);
		if (b)
			k->mods[k->nr_mods++] = b;
	}
	closedir(d);
}

bool kernel_btf_has(struct kernel_btf *k, const char *name, int kind)
{
	int i;

	if (!k->vmlinux)
		return false;
	if (btf__find_by_name_kind(k->vmlinux, name, kind) > 0)
		return true;
	if (!k->mods_loaded)
		load_modules(k);
	for (i = 0; i < k->nr_mods; i++)
		if (btf__find_by_name_kind(k->mods[i], name, kind) > 0)
			return true;
	return false;
}

bool kernel_btf_has_tracepoint(struct kernel_btf *k, const char *tracepoint)
{
	const char *colon = strchr(tracepoint, ':');
	char name[200];

	snprintf(name, sizeof(name), "btf_trace_%s", colon ? colon + 1 : tracepoint);
	return kernel_btf_has(k, name, BTF_KIND_TYPEDEF);
}
