/* SPDX-License-Identifier: GPL-2.0 */
/* One run: start the threads, hold them on the start gate, release them
 * together, sample progress once a second, stop on time, budget or signal. */
#ifndef LOAD_CONTROL_H
#define LOAD_CONTROL_H

#include "io/run.h"

/* Set by the signal handler; every thread polls it. */
extern volatile int control_stop;

void control_install_signals(void);

/* Runs the workload. 0 when it ran (possibly interrupted), -1 with r->error
 * when the threads could not start. */
int control_run(struct run *r);

#endif
