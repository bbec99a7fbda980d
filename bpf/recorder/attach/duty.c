// SPDX-License-Identifier: GPL-2.0
/* Time-sampled recording: detach every program (bpf_link destroy) for the
 * "off" part of each period and attach them again for the "on" part. A
 * program left attached would still cost a run per event, even one that
 * leaves at its first test. Those that follow long waits (--long-wait-us)
 * stay, told by duty_off to do that alone. Pairs of events (begin, end) that span an "off"
 * phase are told by observe_start_ns (kern/util.bpf.inc, begun_in_view). */
#include <string.h>
#include <time.h>
#include "clock.h"
#include "record.h"
#include "record.skel.h"
#include "attach/duty.h"

void duty_init(struct rec_duty *d, unsigned int pct, unsigned int period_ms,
	       bool by_flag)
{
	memset(d, 0, sizeof(*d));
	d->requested_pct = d->pct = pct;
	d->period_ns = (__u64)period_ms * 1000000ULL;
	d->by_flag = by_flag;
}

void duty_start(struct rec_duty *d, __u64 now)
{
	d->running = d->on = true;
	d->phase_start = now;
	d->cycles = 1;
}

void duty_stop(struct rec_duty *d, __u64 now)
{
	if (!d->running)
		return;
	d->observed_ns = duty_observed(d, now);
	if (d->paused_until) { /* the window ends paused: paused_until stays set */
		d->paused_ns += now - d->pause_start;
		d->pause_start = now;
	}
	d->ended_on = d->on;
	d->running = d->on = false;
}

__u64 duty_observed(const struct rec_duty *d, __u64 now)
{
	return d->observed_ns + (d->running && d->on && now > d->phase_start ? now - d->phase_start : 0);
}

__u64 duty_next(const struct rec_duty *d)
{
	__u64 on_ns = d->period_ns * d->pct / 100;

	if (!d->running)
		return 0;
	if (d->paused_until)
		return d->paused_until;
	if (d->closing)
		return d->close_at;
	if (d->pct >= 100) /* raised back to 100 in an "off" phase: attach now */
		return d->on ? 0 : d->phase_start;
	return d->phase_start + (d->on ? on_ns : d->period_ns - on_ns);
}

void duty_set(struct rec_duty *d, unsigned int pct)
{
	d->pct = pct < 1 ? 1 : pct > 100 ? 100 : pct;
}

/* A switch off or on that began at t0 (CLOCK_MONOTONIC) and at cpu0 of this
 * thread's CPU time, counted in "sampling". */
static void count_toggle(struct rec_duty *d, __u64 t0, __u64 cpu0)
{
	d->toggles++;
	d->toggle_ns += clock_ns(CLOCK_MONOTONIC) - t0;
	d->toggle_cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
}

/* The observed part of an "on" phase ends now: pairs begun from now on
 * are not counted (begun_in_view). */
static void end_observed(struct rec_duty *d, struct rec_probe *p, __u64 now)
{
	__atomic_store_n(&p->skel->bss->observe_end_ns, now, __ATOMIC_SEQ_CST);
	d->observed_ns += now > d->phase_start ? now - d->phase_start : 0;
	d->on = false;
}

/* Requests counted in the last phase may end unseen while the programs
 * are off: each device's open busy period closes at that phase's observed
 * end, and the count starts over; requests counted before are not counted
 * down after (block_phase; kern/block.bpf.inc, busy_complete). Nothing runs
 * meanwhile: the programs are detached, or gated by duty_off. */
static void close_block_busy(struct record_bpf *skel, __u64 now)
{
	__u64 end = __atomic_load_n(&skel->bss->observe_end_ns, __ATOMIC_SEQ_CST);
	__u32 i;

	for (i = 0; i < REC_BLOCK_SLOTS; i++) {
		struct block_busy *b = &skel->bss->block_busy[i];
		__s64 acc = __atomic_load_n(&b->acc, __ATOMIC_SEQ_CST);

		if (acc < 0)
			__atomic_store_n(&b->acc, acc + (__s64)(end ? end : now), __ATOMIC_SEQ_CST);
		__atomic_store_n(&b->inflight, 0, __ATOMIC_SEQ_CST);
	}
	__atomic_add_fetch(&skel->bss->block_phase, 1, __ATOMIC_SEQ_CST);
}

/* Attach again: state left by the last phase is stale, and marked so.
 * relink: the links were destroyed (a pause) even with --duty-flag. */
static void attach_again(struct rec_duty *d, struct rec_probe *p, const bool shed[NR_GROUPS],
			 bool relink)
{
	struct record_bpf *skel = p->skel;
	__u64 t0, t1, cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

	/* Nothing runs while detached: the holders' table of waited-for
	 * locks is cleared (its waiters' ends were missed), and pairs begun
	 * before now are stale to the programs. */
	memset(skel->bss->holder_locks, 0, sizeof(skel->bss->holder_locks));
	__atomic_store_n(&skel->bss->holder_waiting, 0, __ATOMIC_SEQ_CST);
	t0 = clock_ns(CLOCK_MONOTONIC);
	close_block_busy(skel, t0);
	__atomic_store_n(&skel->bss->observe_start_ns, t0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&skel->bss->observe_end_ns, 0, __ATOMIC_SEQ_CST);
	if (!d->by_flag || relink)
		d->failed += probe_resume(p, shed);
	if (d->by_flag || skel->rodata->long_wait_ns)
		__atomic_store_n(&skel->bss->duty_off, 0, __ATOMIC_SEQ_CST);
	/* The programs came on one by one since t0 (tens of ms on a busy
	 * host): a pair begun meanwhile may have had its begin missed, so
	 * the phase, for the programs and for the observed time alike,
	 * starts once all are on. */
	count_toggle(d, t0, cpu0);
	t1 = clock_ns(CLOCK_MONOTONIC);
	__atomic_store_n(&skel->bss->observe_start_ns, t1, __ATOMIC_SEQ_CST);
	d->phase_start = t1;
	d->on = true;
	d->cycles++;
}

/* How long the programs stay on after the observed part, for pairs in
 * flight to end: a quarter of the "on" part, at most DUTY_GRACE_MAX_NS. */
#define DUTY_GRACE_MAX_NS 25000000ULL

static __u64 grace_ns(const struct rec_duty *d)
{
	__u64 g = d->period_ns * d->pct / 100 / 4;

	return g < DUTY_GRACE_MAX_NS ? g : DUTY_GRACE_MAX_NS;
}

void duty_tick(struct rec_duty *d, struct rec_probe *p, const bool shed[NR_GROUPS])
{
	__u64 next = duty_next(d), now;

	if (!next || clock_ns(CLOCK_MONOTONIC) < next)
		return;
	if (d->paused_until) {
		now = clock_ns(CLOCK_MONOTONIC);
		d->paused_ns += now - d->pause_start;
		d->paused_until = 0;
		attach_again(d, p, shed, true);
		return;
	}
	if (d->on) {
		/* pairs in flight end in the grace */
		now = clock_ns(CLOCK_MONOTONIC);
		end_observed(d, p, now);
		d->phase_start = now; /* the "off" part starts here */
		d->closing = true;
		d->close_at = now + grace_ns(d);
		return;
	}
	if (d->closing) {
		__u64 t0 = clock_ns(CLOCK_MONOTONIC), cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		/* the programs that follow long waits stay, for them alone */
		if (d->by_flag || p->skel->rodata->long_wait_ns)
			__atomic_store_n(&p->skel->bss->duty_off, 1, __ATOMIC_SEQ_CST);
		if (!d->by_flag)
			probe_pause(p);
		count_toggle(d, t0, cpu0);
		d->closing = false;
		return;
	}
	attach_again(d, p, shed, false);
}

void duty_pause(struct rec_duty *d, struct rec_probe *p, __u64 now, __u64 len_ns)
{
	__u64 t0 = clock_ns(CLOCK_MONOTONIC), cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	/* with --duty-flag the links stay in off phases; else only in on ones
	 * and their grace */
	bool linked = d->by_flag || d->on || d->closing;

	if (!d->running || d->paused_until)
		return;
	if (d->on) /* without the grace: what is in flight now ends unseen */
		end_observed(d, p, now);
	d->closing = false;
	if (p->skel->rodata->long_wait_ns)
		__atomic_store_n(&p->skel->bss->duty_off, 1, __ATOMIC_SEQ_CST);
	if (linked) {
		probe_pause(p);
		count_toggle(d, t0, cpu0);
	}
	d->phase_start = d->pause_start = now;
	d->paused_until = now + (len_ns ? len_ns : 1);
	d->pauses++;
}

__u64 duty_paused_ns(const struct rec_duty *d, __u64 now)
{
	return d->paused_ns + (d->paused_until && now > d->pause_start ? now - d->pause_start : 0);
}

void duty_json(const struct rec_duty *d, struct json_out *j, __u64 end)
{
	json_key(j, "sampling");
	json_begin_object(j);
	json_uint(j, "duty_pct", d->pct);
	json_uint(j, "requested_pct", d->requested_pct);
	json_uint(j, "period_ns", d->period_ns);
	json_uint(j, "observed_ns", duty_observed(d, end));
	json_uint(j, "cycles", d->cycles);
	json_uint(j, "attach_failures", d->failed);
	json_string(j, "switch", d->by_flag ? "flag" : "detach");
	json_uint(j, "toggles", d->toggles);
	json_uint(j, "toggle_ns", d->toggle_ns);
	json_uint(j, "toggle_cpu_ns", d->toggle_cpu_ns);
	json_uint(j, "pauses", d->pauses);
	json_uint(j, "paused_ns", duty_paused_ns(d, end));
	json_end_object(j);
}
