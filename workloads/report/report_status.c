// SPDX-License-Identifier: GPL-2.0
/* The progress line of --status-interval: one JSON object per line on stderr
 * with --output-format=json, a line of text on stdout otherwise. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include "json_out.h"
#include "report/report.h"
#include "io/worker.h"

void report_status(const struct run *r, double elapsed_s, double iops, double bw_bytes,
		   uint64_t total_ios)
{
	if (r->prog->output_format == OUTFMT_JSON) {
		struct json_out j = JSON_OUT_INIT(stderr);

		json_begin_object(&j);
		json_key(&j, "status");
		json_begin_object(&j);
		json_double(&j, "elapsed_s", round(elapsed_s * 1000) / 1000);
		json_double(&j, "iops", round(iops * 10) / 10);
		json_uint(&j, "bw_bytes", (uint64_t)llround(bw_bytes));
		json_uint(&j, "total_ios", total_ios);
		json_end_object(&j);
		json_end_object(&j);
		fputc('\n', stderr);
		fflush(stderr);
		return;
	}
	printf("[%7.1fs] %10.0f IOPS  %9.1f MiB/s  %12" PRIu64 " I/Os\n", elapsed_s, iops,
	       bw_bytes / 1048576.0, total_ios);
	fflush(stdout);
}
