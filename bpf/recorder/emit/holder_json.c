// SPDX-License-Identifier: GPL-2.0
/* The "holders" object: one row per (lock, owner state, owner stack, owner
 * thread), weighted by the waits it stands for, plus the samples not taken
 * (docs/recorder-json.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_out.h"
#include "emit/holder_json.h"
#include "resolve/symbolize.h"
#include "resolve/tasks.h"

/* Frames of a sleeping-lock wait: a holder asleep here waits for another lock. */
static const char *const lock_frames[] = {
	"rwsem_down_", "__mutex_lock", "mutex_lock", "__down_", "percpu_rwsem_wait",
	"rt_mutex_slowlock", "rwbase_", NULL,
};

static const char *const count_names[HC_MAX] = {
	[HC_WAITS] = "waits", [HC_TABLE_FULL] = "table_full", [HC_SAMPLED] = "sampled",
	[HC_READER_OWNED] = "reader_owned", [HC_NO_OWNER] = "no_owner",
	[HC_NO_LAYOUT] = "no_owner_field", [HC_OWNER_GONE] = "owner_gone",
	[HC_STACK_FAILED] = "stack_failed", [HC_NO_STACK_SUPPORT] = "no_stack_support",
	[HC_MAP_FULL] = "map_full", [HC_STACKS_SHED] = "stacks_shed",
	[HC_WAKE_UNSAMPLED] = "wake_unsampled", [HC_STACK_REUSED] = "stacks_reused",
};

static const char *const state_names[] = {
	[HS_UNKNOWN] = "unknown", [HS_ON_CPU] = "on_cpu", [HS_RUNQUEUE] = "runqueue",
	[HS_BLOCKED] = "blocked", [HS_READER_OWNED] = "reader_owned",
};

static int cmp_holder(const void *a, const void *b)
{
	const struct rec_holder *x = a, *y = b;

	return x->v.wait_ns > y->v.wait_ns ? -1 : x->v.wait_ns < y->v.wait_ns;
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

	stacks_holder(&s->stacks, h->k.kstack, &fr);
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
			    tasks_tid_comm(&s->data, h->k.owner_tid, h->k.owner_pid, comm, sizeof(comm)));
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
	json_string(j, "waker_comm", tasks_tid_comm(&s->data, r->k.owner_pid, r->k.owner_pid, comm,
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

void holder_json_write(struct rec_session *s, struct json_out *j)
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
	json_uint(j, "timer_cpus", probe_timer_cpus(&s->probe, GROUP_HOLDERS, &why));
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
