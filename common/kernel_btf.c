// SPDX-License-Identifier: GPL-2.0
/* Lookups in the running kernel's BTF, modules included (kernel_btf.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
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
	free(k->names);
	memset(k, 0, sizeof(*k));
}

static bool indexed_kind(int kind)
{
	return kind == BTF_KIND_TYPEDEF || kind == BTF_KIND_FUNC;
}

static unsigned int name_hash(const char *name, int kind)
{
	unsigned int h = 2166136261u ^ (unsigned int)kind;

	while (*name)
		h = (h ^ (unsigned char)*name++) * 16777619u;
	return h;
}

static bool index_grow(struct kernel_btf *k)
{
	unsigned int cap = k->names ? (k->names_mask + 1) * 2 : 1u << 16, i, j;
	struct kernel_btf_name *n = calloc(cap, sizeof(*n));

	if (!n)
		return false;
	for (i = 0; k->names && i <= k->names_mask; i++) {
		if (!k->names[i].name)
			continue;
		for (j = name_hash(k->names[i].name, k->names[i].kind) & (cap - 1); n[j].name;
		     j = (j + 1) & (cap - 1))
			;
		n[j] = k->names[i];
	}
	free(k->names);
	k->names = n;
	k->names_mask = cap - 1;
	return true;
}

/* Adds the types of b from first on (a module's own types follow vmlinux's). */
static void index_types(struct kernel_btf *k, const struct btf *b, unsigned int first)
{
	unsigned int id, n = btf__type_cnt(b), j;

	for (id = first; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		const char *name;

		if (!indexed_kind(btf_kind(t)) || !t->name_off)
			continue;
		if ((k->nr_names + 1) * 2 > (k->names ? k->names_mask + 1 : 0) && !index_grow(k)) {
			free(k->names); /* no memory: the lookups scan instead */
			k->names = NULL;
			k->nr_names = 0;
			return;
		}
		name = btf__name_by_offset(b, t->name_off);
		for (j = name_hash(name, btf_kind(t)) & k->names_mask; k->names[j].name;
		     j = (j + 1) & k->names_mask)
			if (k->names[j].kind == btf_kind(t) && !strcmp(k->names[j].name, name))
				break;
		if (!k->names[j].name)
			k->nr_names++;
		k->names[j].name = name;
		k->names[j].kind = btf_kind(t);
	}
}

static bool index_has(const struct kernel_btf *k, const char *name, int kind)
{
	unsigned int j;

	for (j = name_hash(name, kind) & k->names_mask; k->names[j].name; j = (j + 1) & k->names_mask)
		if (k->names[j].kind == kind && !strcmp(k->names[j].name, name))
			return true;
	return false;
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
		if (!b)
			continue;
		k->mods[k->nr_mods++] = b;
		if (k->names)
			index_types(k, b, btf__type_cnt(k->vmlinux));
	}
	closedir(d);
}

static bool scan_has(struct kernel_btf *k, const char *name, int kind)
{
	int i;

	if (btf__find_by_name_kind(k->vmlinux, name, kind) > 0)
		return true;
	if (!k->mods_loaded)
		load_modules(k);
	for (i = 0; i < k->nr_mods; i++)
		if (btf__find_by_name_kind(k->mods[i], name, kind) > 0)
			return true;
	return false;
}

bool kernel_btf_has(struct kernel_btf *k, const char *name, int kind)
{
	int i;

	if (!k->vmlinux)
		return false;
	if (indexed_kind(kind) && !k->names) {
		index_types(k, k->vmlinux, 1);
		for (i = 0; i < k->nr_mods; i++)
			index_types(k, k->mods[i], btf__type_cnt(k->vmlinux));
	}
	if (!indexed_kind(kind) || !k->names)
		return scan_has(k, name, kind);
	if (index_has(k, name, kind))
		return true;
	if (k->mods_loaded)
		return false;
	load_modules(k);
	return k->names ? index_has(k, name, kind) : scan_has(k, name, kind);
}

bool kernel_btf_has_tracepoint(struct kernel_btf *k, const char *tracepoint)
{
	const char *colon = strchr(tracepoint, ':');
	char name[200];

	snprintf(name, sizeof(name), "btf_trace_%s", colon ? colon + 1 : tracepoint);
	return kernel_btf_has(k, name, BTF_KIND_TYPEDEF);
}
