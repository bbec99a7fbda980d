/* SPDX-License-Identifier: GPL-2.0 */
/* Flag and enum names of tracepoint fields, read from each event's tracefs
 * `format` file (its __print_flags/__print_symbolic tables), so that bit
 * values are never hard-coded where the kernel says what they are. */
#ifndef LOCKSCOPE_RECORD_TPFMT_H
#define LOCKSCOPE_RECORD_TPFMT_H

#include <stdbool.h>
#include "record.h"

#define TPFMT_NAME_LEN 32
#define TPFMT_MAX_SYMS 40

struct tpfmt_sym {
	unsigned long long value;
	char name[TPFMT_NAME_LEN];
};

/* Mounts tracefs at /sys/kernel/tracing when it is missing (root only);
 * tp_btf and raw_tp do not need it, formats and classic tracepoints do. */
bool tpfmt_ensure_tracefs(void);

/* The {value, "NAME"} table printed for REC->field in SYS/EVENT's print fmt.
 * Returns the number of entries, or a negative errno (-ENOENT: no format
 * file or no table for that field). */
int tpfmt_symbols(const char *sys, const char *event, const char *field,
		  struct tpfmt_sym *out, int max);

/* Where one decoded table came from, for the JSON "decoding" list. */
struct tpfmt_source {
	const char *event;    /* "sys:event" */
	const char *field;
	bool decoded;    /* decoded from the kernel (tracefs or BTF), else defaults */
};

#define TPFMT_NR_SOURCES 11

/* What the kernel side uses where nothing can be decoded. */
extern const struct rec_bits tpfmt_default_bits;

/* Fills *bits from the tracefs formats; what cannot be read keeps the
 * defaults already in *bits (tpfmt_default_bits to start from). */
void tpfmt_decode_bits(struct rec_bits *bits, struct tpfmt_source src[TPFMT_NR_SOURCES]);

/* The offset and size of SYS/EVENT's field NAME in its record, from the
 * tracefs format. Returns 0, or -ENOENT (no format or no such field). */
int tpfmt_field(const char *sys, const char *event, const char *name, struct rec_tpfield *out);

/* Names of lock:contention_begin flag bits set in flags (from the format
 * when readable). Returns the number of names written. */
int tpfmt_lock_flag_names(unsigned int flags, const char **names, int max);

#endif
