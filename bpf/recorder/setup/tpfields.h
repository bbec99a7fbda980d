/* SPDX-License-Identifier: GPL-2.0 */
/* The record fields classic tracepoint programs read where the kernel's BTF
 * has no type for the record (kern/extent.bpf.inc). */
#ifndef LOCKSCOPE_RECORD_TPFIELDS_H
#define LOCKSCOPE_RECORD_TPFIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include "record.h"

/* Fills *o from the tracefs formats. False, and why (when why is given), if
 * a field is missing or is not of a size the programs read (1, 4 or 8). */
bool tpfields_decode(struct rec_tpoff *o, char *why, size_t len);

#endif
