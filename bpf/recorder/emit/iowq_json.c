// SPDX-License-Identifier: GPL-2.0
/* io_uring requests io-wq serializes per file (kern/iowq.bpf.inc): the
 * document says whether they were measured (absent per-file keys then mean
 * not measured, never 0), and per file how many were queued and how long
 * they waited in io-wq (docs/recorder-json.md). */
#include "json_out.h"
#include "emit/iowq_json.h"

/* The wait ends at the request's DIO begin, found by its kiocb: the classic
 * iomap tracepoint has none. */
bool iowq_json_measured(const struct rec_session *s)
{
	int dio = s->probe.groups[GROUP_DIO].attach;

	return probe_group_on(&s->probe, GROUP_IOURING) && dio >= 0 && dio != ATTACH_TRACEPOINT;
}

void iowq_json_write(const struct rec_session *s, struct json_out *j)
{
	int dio = s->probe.groups[GROUP_DIO].attach;

	json_key(j, "io_wq_hashed");
	json_begin_object(j);
	json_bool(j, "measured", iowq_json_measured(s));
	if (iowq_json_measured(s))
		json_null(j, "reason");
	else if (!probe_group_on(&s->probe, GROUP_IOURING))
		json_string(j, "reason", "the io_uring group is off");
	else if (dio < 0)
		json_string(j, "reason", "the dio group is off: no start of a request in io-wq");
	else
		json_string(j, "reason", "the dio group's classic tracepoint carries no kiocb");
	json_end_object(j);
}

static void lat(struct json_out *j, const char *key, const struct lat_stat *l)
{
	json_key(j, key);
	json_begin_object(j);
	json_uint(j, "count", l->count);
	json_uint(j, "total_ns", l->total_ns);
	json_uint(j, "max_ns", l->max_ns);
	json_end_object(j);
}

void iowq_json_file(const struct rec_session *s, struct json_out *j, const struct rec_dio *d)
{
	if (!iowq_json_measured(s))
		return;
	json_key(j, "io_wq_hashed");
	json_begin_object(j);
	json_uint(j, "queued", d->v.iowq_queued);
	json_uint(j, "unhashed", d->v.iowq_unhashed);
	lat(j, "waited", &d->v.iowq_wait);
	lat(j, "behind", &d->v.iowq_behind);
	json_end_object(j);
}
