/* SPDX-License-Identifier: GPL-2.0 */
/* Per-interval series (--interval-ms, --series-out): what changed in each
 * interval, as one JSON object per interval (docs/recorder-json.md). */
#ifndef LOCKSCOPE_RECORD_SERIES_H
#define LOCKSCOPE_RECORD_SERIES_H

#include <stdio.h>
#include <linux/types.h>
#include "json_out.h"
#include "read/read_data.h"

/* The document keeps at most this much series JSON; later intervals go only
 * to --series-out and are counted in "series_omitted". */
#define REC_SERIES_MAX_BYTES (64u << 20)

struct rec_series {
	FILE *out;              /* --series-out, or NULL */
	FILE *store;            /* the lines kept for the document */
	size_t stored_bytes;
	unsigned int nr_stored, nr_omitted;
	struct rec_data prev;   /* the last sample (cumulative) */
	__u64 last_mono;
	__u64 last_observed;    /* --duty: observed time at last_mono */
};

/* NULL with a message printed when --series-out cannot be opened. */
struct rec_series *series_open(const char *path);
void series_start(struct rec_series *ser, __u64 now);
/* One interval's line (with its newline): to --series-out, and kept for the
 * document while the kept lines stay under REC_SERIES_MAX_BYTES. */
void series_add(struct rec_series *ser, const char *line, size_t len);
/* "series" and "series_omitted" members of the final document. */
void series_json(struct rec_series *ser, struct json_out *j);
void series_free(struct rec_series *ser);

#endif
