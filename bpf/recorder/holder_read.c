// SPDX-License-Identifier: GPL-2.0
/* Lock holders: the maps of kern/holder.bpf.inc read back, and written as the
 * "holders" object: one row per (lock, owner state, owner stack, owner
 * thread), weighted by the waits it stands for, plus the samples not taken. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "json_out.h"
#include "record.h"
#include "record.skel.h"
#include "holder.h"
#include "session.h"
#include "symbolize.h"
#include "document.h"

static const char *const state_names[] = {
	[HS_UNKNOWN] = "unknown", [HS_ON_CPU] = "on_cpu", [HS_RUNQUEUE] = "runqueue",
	[HS_BLOCKED] = "blocked", [HS_READER_OWNED] = "reader_owned",
};

static const char *const count_names[HC_MAX] = {
	[HC_WAITS] = "waits", [HC_TABLE_FULL] = "table_full", [HC_SAMPLED] = "sampled",
	[HC_READER_OWNED] = "reader_owned", [HC_NO_OWNER] = "no_owner",
	[HC_NO_LAYOUT] = "no_owner_field", [HC_OWNER_GONE] = "owner_gone",
	[HC_STACK_FAILED] = "stack_failed", [HC_NO_STACK_SUPPORT] = "no_stack_support",
	[HC_MAP_FULL] = "map_full", [HC_STACKS_SHED] = "stacks_shed",
	[HC_WAKE_UNSAMPLED] = "wake_unsampled", [HC_STACK_REUSED] = "stacks_reused",
};

/* Frames of a sleeping-lock wait: a holder asleep here waits for another lock. */
static const char *const lock_frames[] = {
	"rwsem_down_", "__mutex_lock", "mutex_lock", "__down_", "percpu_rwsem_wait",
	"rt_mutex_slowlock", "rwbase_", NULL,
};

/* A per-CPU map of holder_key -> holder_val, summed over the CPUs. */
static int read_rows(int fd, int ncpu, struct rec_holder **rows, size_t *nr)
{
	struct holder_key key, next, *prev = NULL;
	struct holder_val *vals = calloc(ncpu, sizeof(*vals));
	size_t cap = 0;
	int c;

	if (!vals)
		return -ENOMEM;
	while (fd >= 0 && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, vals))
			continue;
		if (*nr == cap) {
			struct rec_holder *n = realloc(*rows, (cap = cap ? cap * 2 : 64) * sizeof(*n));

			if (!n)
				break;
			*rows = n;
		}
		(*rows)[*nr].k = key;
		memset(&(*rows)[*nr].v, 0, sizeof((*rows)[*nr].v));
		for (c = 0; c < ncpu; c++) {
			(*rows)[*nr].v.count += vals[c].count;
			(*rows)[*nr].v.wait_ns += vals[c].wait_ns;
		}
		(*nr)++;
	}
	free(vals);
	return 0;
}

int holder_read_maps(struct record_bpf *skel, struct rec_holders *h)
{
	int ncpu = libbpf_num_possible_cpus(), fd, c, err;
	__u64 *cvals;
	__u32 i;

	memset(h, 0, sizeof(*h));
	if (ncpu <= 0)
		return -EINVAL;
	err = read_rows(bpf_map__fd(skel->maps.holder_stats), ncpu, &h->rows, &h->nr);
	err = err ?: read_rows(bpf_map__fd(skel->maps.releaser_stats), ncpu, &h->releasers,
			       &h->nr_releasers);
	cvals = calloc(ncpu, sizeof(*cvals));
	if (err || !cvals) {
		free(cvals);
		return err ?: -ENOMEM;
	}
	fd = bpf_map__fd(skel->maps.holder_counts);
	for (i = 0; i < HC_MAX; i++) {
		if (bpf_map_lookup_elem(fd, &i, cvals))
			continue;
		for (c = 0; c < ncpu; c++)
			h->counts[i] += cvals[c];
	}
	free(cvals);
	return 0;
}

void holder_read_free(struct rec_holders *h)
{
	free(h->rows);
	free(h->releasers);
	memset(h, 0, sizeof(*h));
}

static struct rec_holder *copy_rows(const struct rec_holder *rows, size_t nr)
{
	struct rec_holder *out = malloc((nr ? nr : 1) * sizeof(*out));

	if (out)
		memcpy(out, rows, nr * sizeof(*out));
	return out;
}

int holder_read_copy(const struct rec_holders *src, struct rec_holders *dst)
{
	*dst = *src;
	dst->rows = copy_rows(src->rows, src->nr);
	dst->releasers = copy_rows(src->releasers, src->nr_releasers);
	if (dst->rows && dst->releasers)
		return 0;
	holder_read_free(dst);
	return -ENOMEM;
}

static int cmp_holder(const void *a, const void *b)
{
	const struct rec_holder *x = a, *y = b;

	return x->v.wait_ns > y->v.wait_ns ? -1 : x->v.wait_ns < y->v.wait_ns;
}

/* The owner's frames, symbolized, leaf first. */
static int holder_frames(struct rec_session *s, __u32 hash, struct frames *out)
{
	struct holder_frames fr;
	int i;

	out->n = 0;
	if (hash == REC_NO_STACK ||
	    bpf_map_lookup_elem(bpf_map__fd(s->probe.skel->maps.holder_stacks), &hash, &fr))
		return 0;
	for (i = 0; i < REC_HOLDER_DEPTH && fr.ip[i]; i++) {
		if (s->stacks.ksyms)
			symbolize_kernel_format(s->stacks.ksyms, fr.ip[i], out->f[out->n], FRAME_LEN);
		else
			snprintf(out->f[out->n], FRAME_LEN, "[unknown]");
		out->n++;
	}
	return out->n;
}

static bool frames_have_any(const struct frames *f, const char *const *prefixes)
{
	int i, p;

	for (i = 0; i < f->n; i++)
		for (p = 0; prefixes[p]; p++)
			if (!strncmp(f->f[i], prefixes[p], strlen(prefixes[p])))
				return true;
	return false;
}

static void write_row(struct rec_session *s, struct json_out *j, const struct rec_holder *h)
{
	static struct frames fr;
	char buf[32], comm[32];
	int i;

	holder_frames(s, h->k.kstack, &fr);
	json_begin_object(j);
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)h->k.lock);
	json_string(j, "addr", buf);
	json_string(j, "lock_type", h->k.flags & HF_MUTEX ? "mutex" : "rwsem");
	json_string(j, "state", h->k.state < sizeof(state_names) / sizeof(state_names[0]) ?
		    state_names[h->k.state] : "unknown");
	if (h->k.owner_tid) {
		json_uint(j, "owner_tid", h->k.owner_tid);
		json_uint(j, "owner_pid", h->k.owner_pid);
		json_string(j, "owner_comm",
			    document_tid_comm(s, h->k.owner_tid, h->k.owner_pid, comm, sizeof(comm)));
	} else {
		json_null(j, "owner_tid");
		json_null(j, "owner_pid");
		json_null(j, "owner_comm");
	}
	json_bool(j, "iowait", h->k.flags & HF_IOWAIT);
	if (h->k.state == HS_BLOCKED && fr.n)
		json_string(j, "reason", frames_have_any(&fr, lock_frames) ? "lock" : "blocked");
	else
		json_null(j, "reason");
	json_key(j, "kstack");
	json_begin_array(j);
	for (i = 0; i < fr.n; i++)
		json_value_string(j, fr.f[i]);
	json_end_array(j);
	json_uint(j, "count", h->v.count);
	json_uint(j, "wait_ns", h->v.wait_ns);
	json_end_object(j);
}

/* A wait ended by a wake-up: who woke it and from where. */
static void write_releaser(struct rec_session *s, struct json_out *j, const struct rec_holder *r)
{
	const struct frames *kern = stacks_kernel(&s->stacks, r->k.kstack);
	char buf[32], comm[32];
	int i;

	json_begin_object(j);
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)r->k.lock);
	json_string(j, "addr", buf);
	json_uint(j, "waker_pid", r->k.owner_pid);
	json_string(j, "waker_comm", document_tid_comm(s, r->k.owner_pid, r->k.owner_pid, comm,
						  sizeof(comm)));
	json_key(j, "kstack");
	json_begin_array(j);
	for (i = 0; kern && i < kern->n; i++)
		json_value_string(j, kern->f[i]);
	json_end_array(j);
	json_uint(j, "count", r->v.count);
	json_uint(j, "wait_ns", r->v.wait_ns);
	json_end_object(j);
}

void holder_read_json(struct rec_session *s, struct json_out *j)
{
	struct rec_holders *h = &s->data.holders;
	const struct rec_group_state *g = &s->probe.groups[GROUP_HOLDERS];
	const char *why;
	size_t i;
	int c;

	json_key(j, "holders");
	json_begin_object(j);
	json_bool(j, "enabled", g->attach >= 0);
	json_uint(j, "period_ms", s->opts->holder_period_ms);
	json_uint(j, "timer_cpus", holder_tick_cpus(&why));
	if (why)
		json_string(j, "reason", why);
	else
		json_null(j, "reason");
	/* Stacks of owners off CPU need the tp_btf variant (a trusted task pointer). */
	json_bool(j, "offcpu_stacks", g->attach == ATTACH_TP_BTF && !h->counts[HC_NO_STACK_SUPPORT]);
	json_key(j, "counts");
	json_begin_object(j);
	for (c = 0; c < HC_MAX; c++)
		json_uint(j, count_names[c], h->counts[c]);
	json_end_object(j);
	qsort(h->rows, h->nr, sizeof(*h->rows), cmp_holder);
	json_key(j, "samples");
	json_begin_array(j);
	for (i = 0; i < h->nr; i++)
		write_row(s, j, &h->rows[i]);
	json_end_array(j);
	json_bool(j, "releasers_enabled", probe_group_on(&s->probe, GROUP_RELEASERS));
	qsort(h->releasers, h->nr_releasers, sizeof(*h->releasers), cmp_holder);
	json_key(j, "releasers");
	json_begin_array(j);
	for (i = 0; i < h->nr_releasers; i++)
		write_releaser(s, j, &h->releasers[i]);
	json_end_array(j);
	json_end_object(j);
}
