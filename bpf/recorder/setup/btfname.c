// SPDX-License-Identifier: GPL-2.0
/* Member names at an offset inside inode objects, from kernel BTF. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "record.h"
#include "setup/btfname.h"

/* Each lock kind: its name in the document (locks[].kind), and the object
 * that holds it: the lock is member `member` of struct `type`, so the object
 * starts at lock - offsetof(type, member). The outermost type is preferred:
 * ext4_inode_info and xfs_inode embed struct inode. */
static const struct {
	const char *name, *type, *member;
} holders[NR_LOCK_KINDS] = {
	[KIND_UNKNOWN] = { "unknown", NULL, NULL },
	[KIND_I_RWSEM] = { "i_rwsem", "inode", "i_rwsem" },
	[KIND_XFS_ILOCK] = { "xfs_ilock", "xfs_inode", "i_lock" },
	[KIND_INVALIDATE_LOCK] = { "invalidate_lock", "address_space", "invalidate_lock" },
	[KIND_I_DATA_SEM] = { "i_data_sem", "ext4_inode_info", "i_data_sem" },
};

const char *btfname_kind(__u32 kind)
{
	return kind < NR_LOCK_KINDS ? holders[kind].name : NULL;
}

#define NR_HOLDERS (sizeof(holders) / sizeof(holders[0]))

struct object {
	__u64 start, end;
	__u32 type_id;
	__u32 dev;
	__u64 ino;
	int pid;
};

struct btfname {
	struct btf *btf;
	struct {
		__u32 type_id;
		__u32 size;
		__u32 lock_off;
	} holder[NR_HOLDERS];
	struct object *obj;
	size_t n, cap;
	bool sorted;
};

static bool member_offset(const struct btf *btf, __u32 type_id, const char *name, __u32 *off)
{
	const struct btf_type *t = btf__type_by_id(btf, type_id);
	const struct btf_member *m = btf_members(t);
	int i;

	for (i = 0; i < btf_vlen(t); i++, m++) {
		if (!strcmp(btf__name_by_offset(btf, m->name_off), name)) {
			*off = btf_member_bit_offset(t, i) / 8;
			return true;
		}
	}
	return false;
}

struct btfname *btfname_new(void)
{
	struct btfname *b = calloc(1, sizeof(*b));
	size_t k;

	if (!b)
		return NULL;
	b->btf = btf__load_vmlinux_btf();
	for (k = 0; b->btf && k < NR_HOLDERS; k++) {
		int id;

		if (!holders[k].type)
			continue;
		id = btf__find_by_name_kind(b->btf, holders[k].type, BTF_KIND_STRUCT);
		if (id <= 0 || !member_offset(b->btf, id, holders[k].member, &b->holder[k].lock_off))
			continue;
		b->holder[k].type_id = id;
		b->holder[k].size = btf__type_by_id(b->btf, id)->size;
	}
	return b;
}

void btfname_free(struct btfname *b)
{
	if (!b)
		return;
	btf__free(b->btf);
	free(b->obj);
	free(b);
}

void btfname_clear(struct btfname *b)
{
	if (b)
		b->n = 0;
}

void btfname_add(struct btfname *b, __u64 lock_addr, __u32 kind, __u32 dev, __u64 ino, int pid)
{
	struct object *o;

	if (!b || kind >= NR_HOLDERS || !b->holder[kind].type_id || lock_addr < b->holder[kind].lock_off)
		return;
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct object *no = realloc(b->obj, cap * sizeof(*no));

		if (!no)
			return;
		b->obj = no;
		b->cap = cap;
	}
	o = &b->obj[b->n++];
	o->start = lock_addr - b->holder[kind].lock_off;
	o->end = o->start + b->holder[kind].size;
	o->type_id = b->holder[kind].type_id;
	o->dev = dev;
	o->ino = ino;
	o->pid = pid;
	b->sorted = false;
}

/* Larger objects first among equal starts: the outermost type names. */
static int cmp_obj(const void *x, const void *y)
{
	const struct object *a = x, *c = y;

	if (a->start != c->start)
		return a->start < c->start ? -1 : 1;
	return a->end > c->end ? -1 : a->end < c->end;
}

/* Locks by type name: their own insides (rlock.raw_lock.val...) say
 * nothing more. */
static bool is_lock_type(const struct btf *btf, const struct btf_type *t)
{
	static const char *const words[] = { "lock", "rw_semaphore", "mutex", "semaphore", "seqcount" };
	const char *name = btf__name_by_offset(btf, t->name_off);
	size_t i;

	for (i = 0; name && i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(name, words[i]))
			return true;
	return false;
}

/* Appends the member path at byte offset off inside type_id. */
static void member_path(const struct btf *btf, __u32 type_id, __u32 off, char *buf, size_t len,
			int depth)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, type_id));
	size_t used = strlen(buf);
	int i;

	if (!t || depth > 16 || used + 2 >= len)
		return;
	if (btf_is_array(t)) {
		const struct btf_array *a = btf_array(t);
		__s64 esz = btf__resolve_size(btf, a->type);

		if (esz <= 0)
			return;
		snprintf(buf + used, len - used, "[%u]", (unsigned int)(off / esz));
		member_path(btf, a->type, off % esz, buf, len, depth + 1);
		return;
	}
	/* at offset 0 of a lock is the lock itself; elsewhere, a lock inside
	 * it (an rwsem's wait_lock) */
	if (!btf_is_composite(t) || (depth && off == 0 && is_lock_type(btf, t)))
		return;
	for (i = 0; i < btf_vlen(t); i++) {
		const struct btf_member *m = btf_members(t) + i;
		__u32 moff = btf_member_bit_offset(t, i) / 8;
		__s64 msz = btf__resolve_size(btf, m->type);
		const char *name = btf__name_by_offset(btf, m->name_off);

		if (msz <= 0 || off < moff || off >= moff + msz)
			continue;
		if (name && *name)
			snprintf(buf + used, len - used, ".%s", name);
		member_path(btf, m->type, off - moff, buf, len, depth + 1);
		return;
	}
}

bool btfname_lookup(struct btfname *b, __u64 addr, char *buf, size_t len,
		    __u32 *dev, __u64 *ino, int *pid)
{
	const struct object *best = NULL;
	size_t i;

	if (!b || !b->btf || !b->n)
		return false;
	if (!b->sorted) {
		qsort(b->obj, b->n, sizeof(*b->obj), cmp_obj);
		b->sorted = true;
	}
	/* Objects never overlap except by nesting; keep the outermost match. */
	for (i = 0; i < b->n && b->obj[i].start <= addr; i++)
		if (addr < b->obj[i].end && (!best || b->obj[i].end - b->obj[i].start > best->end - best->start))
			best = &b->obj[i];
	if (!best)
		return false;
	snprintf(buf, len, "%s", btf__name_by_offset(b->btf, btf__type_by_id(b->btf, best->type_id)->name_off));
	member_path(b->btf, best->type_id, addr - best->start, buf, len, 0);
	*dev = best->dev;
	*ino = best->ino;
	*pid = best->pid;
	return true;
}
