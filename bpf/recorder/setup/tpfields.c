// SPDX-License-Identifier: GPL-2.0
/* Offsets of the ext4 extent events' fields, for kernels without module BTF
 * (before 5.11), where ext4's trace_event_raw_* types cannot be relocated. */
#include <stdio.h>
#include "setup/tpfields.h"
#include "setup/tpfmt.h"

struct wanted_field {
	const char *event, *name;
	size_t member;     /* in struct rec_tpoff */
};

#define F(event, name, member) { event, name, __builtin_offsetof(struct rec_tpoff, member) }

/* include/trace/events/ext4.h: ext4_es_lookup_extent_exit, ext4__map_blocks_exit
 * (ext4_ext_map_blocks_exit), ext4_allocate_blocks */
static const struct wanted_field wanted[] = {
	F("ext4_es_lookup_extent_exit", "ino", es_lookup_ino),
	F("ext4_es_lookup_extent_exit", "found", es_lookup_found),
	F("ext4_es_lookup_extent_exit", "status", es_lookup_status),
	F("ext4_ext_map_blocks_exit", "ino", map_exit_ino),
	F("ext4_ext_map_blocks_exit", "flags", map_exit_flags),
	F("ext4_ext_map_blocks_exit", "ret", map_exit_ret),
	F("ext4_ext_map_blocks_exit", "mflags", map_exit_mflags),
	F("ext4_allocate_blocks", "ino", alloc_ino),
	F("ext4_allocate_blocks", "flags", alloc_flags),
};

bool tpfields_decode(struct rec_tpoff *o, char *why, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
		struct rec_tpfield *f = (struct rec_tpfield *)((char *)o + wanted[i].member);

		if (tpfmt_field("ext4", wanted[i].event, wanted[i].name, f) != 0) {
			if (why)
				snprintf(why, len, "ext4:%s has no field %s in its tracefs format",
					 wanted[i].event, wanted[i].name);
			return false;
		}
		if (f->size != 1 && f->size != 4 && f->size != 8) {
			if (why)
				snprintf(why, len, "ext4:%s field %s is %u bytes (read: 1, 4 or 8)",
					 wanted[i].event, wanted[i].name, f->size);
			return false;
		}
	}
	return true;
}
