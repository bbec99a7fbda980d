// SPDX-License-Identifier: GPL-2.0
/* Per-interval series: each interval's line (emit/document.c writes it)
 * written out (flushed, so a caller can follow the file while the recording
 * runs) and kept for the final document up to a bound. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "emit/series.h"
#include "read/read.h"
#include "msg.h"

struct rec_series *series_open(const char *path)
{
	struct rec_series *ser = calloc(1, sizeof(*ser));

	if (!ser)
		return NULL;
	ser->store = tmpfile();
	if (!ser->store) {
		msg_error("cannot create a temporary file for the series: %s", strerror(errno));
		free(ser);
		return NULL;
	}
	if (path && !(ser->out = fopen(path, "we"))) {
		msg_error("cannot write %s: %s", path, strerror(errno));
		fclose(ser->store);
		free(ser);
		return NULL;
	}
	return ser;
}

void series_start(struct rec_series *ser, __u64 now)
{
	ser->last_mono = now;
}

void series_add(struct rec_series *ser, const char *line, size_t len)
{
	if (ser->out) {
		fwrite(line, 1, len, ser->out);
		fflush(ser->out);
	}
	if (ser->stored_bytes + len <= REC_SERIES_MAX_BYTES) {
		fwrite(line, 1, len, ser->store);
		ser->stored_bytes += len;
		ser->nr_stored++;
	} else {
		ser->nr_omitted++;
	}
}

void series_json(struct rec_series *ser, struct json_out *j)
{
	char line[65536];
	bool first = true, at_start = true;

	json_key(j, "series");
	json_begin_array(j);
	fflush(ser->store);
	rewind(ser->store);
	/* each stored line is one complete object: copied as is */
	while (fgets(line, sizeof(line), ser->store)) {
		size_t n = strlen(line);
		bool end = n && line[n - 1] == '\n';

		if (end)
			line[--n] = 0;
		if (at_start && !first)
			fputc(',', j->f);
		fputs(line, j->f);
		first = false;
		at_start = end;
	}
	j->need_comma[j->depth] = !first;
	json_end_array(j);
	json_uint(j, "series_omitted", ser->nr_omitted);
}

void series_free(struct rec_series *ser)
{
	if (!ser)
		return;
	if (ser->out)
		fclose(ser->out);
	if (ser->store)
		fclose(ser->store);
	read_free(&ser->prev);
	free(ser);
}
