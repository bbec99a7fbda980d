/* SPDX-License-Identifier: GPL-2.0 */
/* Time-sampled recording (--duty, --duty-period-ms): in each period the
 * programs are attached for duty% of it and detached for the rest, so that
 * their cost, a run per event of every process, is paid part of the time
 * only. Keeps the time they were attached ("observed"), which rates and
 * shares of the document rest on (docs/recorder-json.md, "sampling"). */
#ifndef LOCKSCOPE_RECORD_DUTY_H
#define LOCKSCOPE_RECORD_DUTY_H

#include <stdbool.h>
#include <linux/types.h>
#include "json_out.h"
#include "attach/probe.h"

/* The lowest duty --max-overhead lowers to before it sheds stacks and groups. */
#define DUTY_FLOOR_PCT 10

struct rec_duty {
	unsigned int requested_pct;  /* --duty */
	unsigned int pct;            /* now: --max-overhead may lower it */
	__u64 period_ns;
	bool running;                /* the window is open */
	bool on;                     /* programs attached now, in the observed part */
	bool closing;                /* observed part over, programs still on (grace) */
	__u64 close_at;              /* CLOCK_MONOTONIC: when closing detaches them */
	bool ended_on;               /* the window closed in an "on" phase */
	__u64 phase_start;           /* CLOCK_MONOTONIC, when this phase began */
	__u64 observed_ns;           /* of the "on" phases that ended */
	__u64 cycles;                /* "on" phases begun, the window's first included */
	unsigned int failed;         /* links that could not be attached again */
	/* what switching the programs off and on cost: wall time of the
	 * detaches and attaches, and this thread's CPU in them (the text
	 * patching and the IPIs it sends land on the other CPUs too) */
	__u64 toggles;
	__u64 toggle_ns;
	__u64 toggle_cpu_ns;
	bool by_flag;                /* off phases set duty_off instead of detaching */
	/* --max-overhead's last resort: every program detached until then
	 * (CLOCK_MONOTONIC), 0 when not paused */
	__u64 paused_until;
	__u64 pause_start;
	__u64 pauses;
	__u64 paused_ns;             /* of the pauses that ended */
};

void duty_init(struct rec_duty *d, unsigned int pct, unsigned int period_ms,
	       bool by_flag);
/* The window opens (the programs are attached). */
void duty_start(struct rec_duty *d, __u64 now);
/* The window closes: the observed time stops growing. */
void duty_stop(struct rec_duty *d, __u64 now);
/* Observed time from the window's start up to now. */
__u64 duty_observed(const struct rec_duty *d, __u64 now);
/* When the phase ends (CLOCK_MONOTONIC ns), 0 when it does not (duty 100,
 * or the window closed). */
__u64 duty_next(const struct rec_duty *d);
/* Detaches or attaches again when the phase is over; shed: groups left off
 * (--max-overhead). */
void duty_tick(struct rec_duty *d, struct rec_probe *p, const bool shed[NR_GROUPS]);
/* A new duty (--max-overhead), from the current phase on. */
void duty_set(struct rec_duty *d, unsigned int pct);
/* Detaches every program until now + len_ns (a flag is not enough: a
 * program left attached still runs), then duty_tick attaches them again. */
void duty_pause(struct rec_duty *d, struct rec_probe *p, __u64 now, __u64 len_ns);
/* Paused time up to now, the pause in progress included. */
__u64 duty_paused_ns(const struct rec_duty *d, __u64 now);
/* The "sampling" object. */
void duty_json(const struct rec_duty *d, struct json_out *j, __u64 end);

#endif
