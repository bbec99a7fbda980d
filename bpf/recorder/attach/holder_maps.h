/* SPDX-License-Identifier: GPL-2.0 */
/* The holders group before load (holder_maps.c). */
#ifndef LOCKSCOPE_RECORD_HOLDER_MAPS_H
#define LOCKSCOPE_RECORD_HOLDER_MAPS_H

#include "attach/probe.h"

struct record_bpf;

/* The group's maps only when it is on (and it is turned off where the kernel
 * lacks what it needs). */
void holder_maps_configure(struct record_bpf *skel, struct rec_probe *p);

#endif
