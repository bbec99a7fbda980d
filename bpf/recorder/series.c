// SPDX-License-Identifier: GPL-2.0
/* Per-interval series: each sample of the maps minus the previous one,
 * written as one line (flushed, so a caller can follow the file while the
 * recording runs) and kept for the final document up to a bound. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "session.h"
#include "series.h"
#include "msg.h"
#include "document.h"

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

void series_emit(struct rec_session *s, struct rec_data *cur, __u64 now, bool reread)
{
	struct rec_series *ser = s->series;
	struct rec_data delta;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;

	if (now <= ser->last_mono || read_delta(cur, &ser->prev, &delta)) {
		read_free(cur);
		return;
	}
	mem = open_memstream(&buf, &len);
	if (mem) {
		document_write_interval(s, &delta, cur, ser->last_mono, now,
					duty_observed(&s->duty, now) - ser->last_observed, reread, mem);
		fputc('\n', mem);
		fclose(mem);
	}
	if (buf && ser->out) {
		fwrite(buf, 1, len, ser->out);
		fflush(ser->out);
	}
	if (buf && ser->stored_bytes + len <= REC_SERIES_MAX_BYTES) {
		fwrite(buf, 1, len, ser->store);
		ser->stored_bytes += len;
		ser->nr_stored++;
	} else {
		ser->nr_omitted++;
	}
	free(buf);
	read_free(&delta);
	read_free(&ser->prev);
	ser->prev = *cur;
	memset(cur, 0, sizeof(*cur));
	ser->last_mono = now;
	ser->last_observed = duty_observed(&s->duty, now);
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
