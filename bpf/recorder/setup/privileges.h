/* SPDX-License-Identifier: GPL-2.0 */
/* The capabilities this process holds (privileges.c). */
#ifndef LOCKSCOPE_RECORD_PRIVILEGES_H
#define LOCKSCOPE_RECORD_PRIVILEGES_H

#include <stdbool.h>

/* Whether capability cap (include/uapi/linux/capability.h) is in the effective set. */
bool privileges_effective(int cap);

#endif
