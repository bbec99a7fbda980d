// SPDX-License-Identifier: GPL-2.0
/* Stack symbolization. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "resolve/stacks.h"
#include "json_out.h"
#include "record.skel.h"
#include "resolve/symbolize.h"

/* Room for the copies of a burst of stack walks (every thread blocking
 * at a new place at once) while the unwinder catches up: ~500 copies. */
#define USTACK_RING_BYTES (8u << 20)

/* Frames of the tracing machinery between the traced kernel code and the
 * BPF program; they say nothing about the wait. The list is the analyzer's
 * (analysis/frames.py), written into machinery.h at build time. */
#include "machinery.h"

/* A stack's frames (leaf first) into ips; returns the frame count, 0 when
 * the id is REC_NO_STACK or the stack is gone. */
static int stack_ips(struct record_bpf *skel, __u32 id, __u64 *ips, int max)
{
	const struct bpf_map *map = id & REC_SPIN_STACK ? skel->maps.spin_stacks : skel->maps.stacks;
	size_t vsz = bpf_map__value_size(map);
	__u64 buf[REC_MAX_STACK_DEPTH];
	int n = 0;

	if (id == REC_NO_STACK || vsz > sizeof(buf))
		return 0;
	if (id & REC_TASK_STACK) {
		map = skel->maps.task_kstacks;
		vsz = bpf_map__value_size(map);
		if (vsz > sizeof(buf))
			return 0;
	}
	id &= ~REC_SPIN_STACK;
	memset(buf, 0, sizeof(buf));
	if (bpf_map_lookup_elem(bpf_map__fd(map), &id, buf))
		return 0;
	while (n < max && (size_t)n < vsz / sizeof(__u64) && buf[n])
		ips[n] = buf[n], n++;
	return n;
}

void stacks_machinery_json(struct json_out *j)
{
	size_t i;

	json_begin_array(j);
	for (i = 0; i < sizeof(machinery) / sizeof(machinery[0]); i++)
		json_value_string(j, machinery[i]);
	json_end_array(j);
}

static bool is_machinery(const char *frame)
{
	size_t i;

	for (i = 0; i < sizeof(machinery) / sizeof(machinery[0]); i++)
		if (!strncmp(frame, machinery[i], strlen(machinery[i])))
			return true;
	return false;
}

/* ---- user stacks unwound from copies: id -> frames -------------------- */

struct dwarf_stack {
	__u32 id;                 /* 0: empty slot */
	int n;
	char *frames;             /* n NUL-terminated strings, leaf first */
};

struct dwarf_stacks {
	struct dwarf_stack *slots;
	size_t nslots, n;
};

static size_t dwarf_hash(__u32 id, size_t nslots)
{
	return (id * 2654435761u) & (nslots - 1);
}

static struct dwarf_stack *dwarf_find(struct dwarf_stacks *d, __u32 id)
{
	size_t h;

	if (!d || !d->nslots)
		return NULL;
	for (h = dwarf_hash(id, d->nslots); d->slots[h].id; h = (h + 1) & (d->nslots - 1))
		if (d->slots[h].id == id)
			return &d->slots[h];
	return NULL;
}

static int dwarf_grow(struct dwarf_stacks *d)
{
	size_t nslots = d->nslots ? d->nslots * 2 : 1024, i, h;
	struct dwarf_stack *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < d->nslots; i++) {
		if (!d->slots[i].id)
			continue;
		for (h = dwarf_hash(d->slots[i].id, nslots); slots[h].id; h = (h + 1) & (nslots - 1))
			;
		slots[h] = d->slots[i];
	}
	free(d->slots);
	d->slots = slots;
	d->nslots = nslots;
	return 0;
}

static void dwarf_put(struct dwarf_stacks *d, __u32 id, int n, char *frames)
{
	size_t h;

	if (dwarf_find(d, id) || ((d->n + 1) * 2 > d->nslots && dwarf_grow(d))) {
		free(frames);
		return;
	}
	for (h = dwarf_hash(id, d->nslots); d->slots[h].id; h = (h + 1) & (d->nslots - 1))
		;
	d->slots[h] = (struct dwarf_stack){ .id = id, .n = n, .frames = frames };
	d->n++;
}

static void dwarf_free(struct dwarf_stacks *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nslots; i++)
		free(d->slots[i].frames);
	free(d->slots);
	free(d);
}

/* The unwinder's sink: symbolized now, while the process and its mappings
 * are there to read. */
static void on_unwound(void *arg, __u32 id, int pid, const __u64 *pcs, int n)
{
	struct rec_stacks *s = arg;
	char frame[FRAME_LEN], *buf = NULL;
	size_t len = 0, l;
	int i;

	if (n > s->depth)
		n = s->depth;
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < n; i++) {
		char *nb;

		if (s->usyms)
			symbolize_user_format(s->usyms, pid, pcs[i], frame, sizeof(frame));
		else
			snprintf(frame, sizeof(frame), SYM_UNKNOWN);
		l = strlen(frame) + 1;
		nb = realloc(buf, len + l);
		if (!nb)
			break;
		buf = nb;
		memcpy(buf + len, frame, l);
		len += l;
	}
	if (buf)
		dwarf_put(s->dwarf, id, i, buf);
	pthread_mutex_unlock(&s->lock);
}

int stacks_configure(struct record_bpf *skel, bool user_stacks)
{
	skel->rodata->dwarf_ustacks = user_stacks;
	/* the smallest ring (one page) when nothing is copied */
	return bpf_map__set_max_entries(skel->maps.ustack_samples,
					user_stacks ? USTACK_RING_BYTES : (__u32)getpagesize());
}

int stacks_init(struct rec_stacks *s, struct record_bpf *skel, size_t max_stacks)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->skel = skel;
	s->ksyms = symbolize_kernel_load();
	if (!s->ksyms)
		s->ksyms_err = errno;
	s->usyms = symbolize_user_new();
	s->kcache_len = 2 * max_stacks; /* ids of the stack map, then of the spin map */
	s->kcache = calloc(s->kcache_len, sizeof(*s->kcache));
	s->tcache_len = 2 * bpf_map__max_entries(skel->maps.task_kstacks);
	s->tcache = calloc(s->tcache_len, sizeof(*s->tcache));
	s->tcache_ids = calloc(s->tcache_len, sizeof(*s->tcache_ids));
	if (!s->kcache || !s->tcache || !s->tcache_ids)
		return -ENOMEM;
	/* --stack-depth, as the stack map's value size says */
	s->depth = bpf_map__value_size(skel->maps.stacks) / sizeof(__u64);
	if (skel->rodata->dwarf_ustacks) {
		s->dwarf = calloc(1, sizeof(*s->dwarf));
		if (!s->dwarf)
			return -ENOMEM;
		s->unwinder = unwind_start(bpf_map__fd(skel->maps.ustack_samples), on_unwound, s);
		if (!s->unwinder)
			return -errno;
	}
	return 0;
}

void stacks_unwind_finish(struct rec_stacks *s)
{
	if (!s->unwinder)
		return;
	unwind_stop(s->unwinder, &s->unwind);
	s->unwinder = NULL;
}

void stacks_free(struct rec_stacks *s)
{
	size_t i;

	stacks_unwind_finish(s);
	dwarf_free(s->dwarf);
	for (i = 0; s->kcache && i < s->kcache_len; i++)
		free(s->kcache[i]);
	free(s->kcache);
	for (i = 0; s->tcache && i < s->tcache_len; i++)
		free(s->tcache[i]);
	free(s->tcache);
	free(s->tcache_ids);
	if (s->ksyms)
		symbolize_kernel_free(s->ksyms);
	if (s->usyms)
		symbolize_user_free(s->usyms);
	pthread_mutex_destroy(&s->lock);
	memset(s, 0, sizeof(*s));
}

void stacks_add_pid(struct rec_stacks *s, int pid)
{
	if (!s->usyms || pid <= 0)
		return;
	pthread_mutex_lock(&s->lock);
	symbolize_user_add_pid(s->usyms, pid);
	pthread_mutex_unlock(&s->lock);
}

/* The cache slot of a kernel stack id: kcache by id, tcache (open
 * addressing) for task stacks; NULL when there is no room. */
static struct frames **kernel_slot(struct rec_stacks *s, __u32 id)
{
	size_t h, i;
	__u32 slot;

	if (id == REC_NO_STACK)
		return NULL;
	if (!(id & REC_TASK_STACK) || (id & REC_SPIN_STACK)) {
		slot = id & REC_SPIN_STACK ? (id & ~REC_SPIN_STACK) + s->kcache_len / 2 : id;
		return slot < s->kcache_len ? &s->kcache[slot] : NULL;
	}
	for (h = id * 2654435761u, i = 0; s->tcache_len && i < s->tcache_len; i++) {
		size_t k = (h + i) % s->tcache_len;

		if (s->tcache_ids[k] == id || !s->tcache_ids[k]) {
			s->tcache_ids[k] = id;
			return &s->tcache[k];
		}
	}
	return NULL;
}

const struct frames *stacks_kernel(struct rec_stacks *s, __u32 id)
{
	__u64 ips[REC_MAX_STACK_DEPTH];
	struct frames *fr, **slot = kernel_slot(s, id);
	int n, i, skip = 0;

	if (!slot)
		return NULL;
	if (*slot)
		return *slot;
	n = stack_ips(s->skel, id, ips, REC_MAX_STACK_DEPTH);
	if (n <= 0 || !(fr = calloc(1, sizeof(*fr))))
		return NULL;
	for (i = 0; i < n; i++) {
		if (s->ksyms)
			symbolize_kernel_format(s->ksyms, ips[i], fr->f[fr->n], FRAME_LEN);
		else
			snprintf(fr->f[fr->n], FRAME_LEN, SYM_UNKNOWN);
		if (fr->n == 0 && skip == i && is_machinery(fr->f[0])) {
			skip++;
			continue;
		}
		fr->n++;
	}
	*slot = fr;
	return fr;
}

/* An unwound stack's frames into out; none when the unwinder has not
 * reached it yet (stacks_unwind_finish at the end of a recording does). */
static void user_dwarf(struct rec_stacks *s, __u32 id, struct frames *out)
{
	const struct dwarf_stack *d = dwarf_find(s->dwarf, id);
	const char *f;
	int i;

	for (i = 0, f = d ? d->frames : NULL; d && i < d->n && i < REC_MAX_STACK_DEPTH; i++) {
		snprintf(out->f[out->n++], FRAME_LEN, "%s", f);
		f += strlen(f) + 1;
	}
}

static void user_walked(struct rec_stacks *s, __u32 id, int pid, struct frames *out)
{
	__u64 ips[REC_MAX_STACK_DEPTH];
	int n, i;

	n = stack_ips(s->skel, id, ips, REC_MAX_STACK_DEPTH);
	for (i = 0; i < n; i++) {
		if (s->usyms)
			symbolize_user_format(s->usyms, pid, ips[i], out->f[out->n], FRAME_LEN);
		else
			snprintf(out->f[out->n], FRAME_LEN, SYM_UNKNOWN);
		out->n++;
	}
	/* Code built without frame pointers ends the walk in garbage: keep one
	 * [unknown] for the whole unresolvable root end. */
	while (out->n > 1 && !strcmp(out->f[out->n - 1], SYM_UNKNOWN) &&
	       !strcmp(out->f[out->n - 2], SYM_UNKNOWN))
		out->n--;
}

bool stacks_user(struct rec_stacks *s, __u32 id, int pid, struct frames *out)
{
	out->n = 0;
	if (id == REC_NO_STACK)
		return false;
	pthread_mutex_lock(&s->lock);   /* the unwinder may still write */
	if (id & REC_DWARF_STACK)
		user_dwarf(s, id, out);
	else
		user_walked(s, id, pid, out);
	pthread_mutex_unlock(&s->lock);
	return out->n > 0;
}

/* The owner's frames, symbolized, leaf first. */
int stacks_holder(struct rec_stacks *s, __u32 hash, struct frames *out)
{
	struct holder_frames fr;
	int i;

	out->n = 0;
	if (hash == REC_NO_STACK ||
	    bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.holder_stacks), &hash, &fr))
		return 0;
	for (i = 0; i < REC_HOLDER_DEPTH && fr.ip[i]; i++) {
		if (s->ksyms)
			symbolize_kernel_format(s->ksyms, fr.ip[i], out->f[out->n], FRAME_LEN);
		else
			snprintf(out->f[out->n], FRAME_LEN, "[unknown]");
		out->n++;
	}
	return out->n;
}

const char *stacks_data_name(struct rec_stacks *s, __u64 addr, char *buf, size_t len)
{
	return s->ksyms ? symbolize_kernel_data_name(s->ksyms, addr, buf, len) : NULL;
}
