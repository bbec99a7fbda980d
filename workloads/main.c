// SPDX-License-Identifier: GPL-2.0
/* lockscope-load: a fio-compatible workload engine for lockscope.
 * parse -> check -> lay out files -> start threads on a gate -> timed phase
 * -> verify -> report. Exit status: 0 ran, 1 failed (I/O errors, verify
 * mismatches, setup), 2 refused before starting (bad input, a foreign file,
 * no space), 130 interrupted (the report still covers what ran). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "control.h"
#include "io/worker.h"
#include "engines/engine.h"
#include "io/files.h"
#include "io/layout.h"
#include "io/verify.h"
#include "job/cmdline.h"
#include "job/jobset.h"
#include "job/options.h"
#include "job/parse_dump.h"
#include "job/validate.h"
#include "report/report.h"

static const char usage_head[] =
"usage: lockscope-load [options] [jobfile ...]\n"
"\n"
"Runs a fio-style workload and reports it in fio's JSON (or text) format, with\n"
"lockscope's additions under \"lockscope\". Options use fio's names and value\n"
"syntax, on the command line (--key=value) or in ini job files ([global],\n"
"[job], key=value). Command-line options before the first --name are defaults\n"
"for every job (a job file overrides them, as in fio); each --name starts a job.\n"
"Sizes take k/m/g/t suffixes (k = 1024); times are seconds unless suffixed.\n"
"\n"
"File layouts (--layout), i.e. what the filesystem holds when the timed phase\n"
"starts:\n"
"  written     every block written and synced first: later writes are pure\n"
"              overwrites of mapped extents (no allocation, i_size fixed)\n"
"  fallocated  fallocate() (fallocate=native|posix|keep): unwritten extents; a\n"
"              write converts them to written (keep: i_size stays 0, so writes\n"
"              also extend the file)\n"
"  sparse      ftruncate() only: holes, so every first write allocates blocks\n"
"  append      the file starts empty and every write lands at its end and\n"
"              grows i_size (rw=write; threads share one end-of-file cursor;\n"
"              a thread stops when the file reaches offset + numjobs * size)\n"
"  auto        fio's rule (default): a file that exists and is big enough is\n"
"              used as it is; otherwise reads or overwrite=1 lay it out\n"
"              written, writes lay it out with fallocate= (native by default)\n"
"--unaligned=N shifts every I/O offset by N bytes (not a multiple of the\n"
"filesystem block; a multiple of 512 for direct=1) to issue unaligned I/O.\n"
"ext4 and XFS take the inode lock differently for each of these cases.\n"
"\n"
"Files: lockscope-load marks the files it creates (xattr " OWNER_XATTR ").\n"
"An existing file without the mark is only read, never written, truncated or\n"
"deleted, unless --overwrite=1. A run that needs more space than is free is\n"
"refused before it starts.\n"
"\n"
"Driver hook: --start_on_stdin=1 lays out the files, starts the threads, prints\n"
"'ready' on stdout and waits for a line (or EOF) on stdin before the timed\n"
"phase. With --output-format=json --status-interval=N, one JSON object per\n"
"interval goes to stderr: {\"status\": {\"elapsed_s\", \"iops\", \"bw_bytes\",\n"
"\"total_ios\"}}.\n"
"\n"
"Exit status: 0 ran; 1 I/O errors, verify mismatches or setup failure;\n"
"2 refused (bad option or value, foreign file, no space); 130 interrupted\n"
"(SIGINT/SIGTERM: the threads stop and the report covers what ran).\n"
"\n"
"Options:\n";

static void usage(FILE *f)
{
	fputs(usage_head, f);
	options_print_help(f);
	fputs("\nEngines (ioengine=):\n", f);
	for (int i = 0; i < NR_ENGINES; i++)
		fprintf(f, "  %-10s %s\n", options_engine_name(i), engine_registry[i]->help);
	fputs("\nExamples:\n"
	      "  lockscope-load --name=w --filename=/mnt/f --size=1g --rw=randwrite --bs=4k \\\n"
	      "      --direct=1 --numjobs=4 --runtime=10 --time_based   # 4 threads, 10 s\n"
	      "  lockscope-load --name=w --filename=/mnt/f --size=1g --rw=randwrite --direct=1 \\\n"
	      "      --layout=sparse --output-format=json   # writes into holes, fio's JSON\n"
	      "  lockscope-load job.fio                  # a fio job file\n"
	      "  lockscope-load --parse-only=1 job.fio   # the parsed jobs as JSON; nothing runs\n",
	      f);
}

static int refuse(const char *msg)
{
	fprintf(stderr, "lockscope-load: %s\n", msg);
	return 2;
}

static int make_workers(struct run *r)
{
	unsigned n = 0, k = 0;

	for (unsigned i = 0; i < r->js->njobs; i++)
		n += r->js->jobs[i].numjobs;
	r->workers = calloc(n ? n : 1, sizeof(*r->workers));
	if (!r->workers)
		return -1;
	for (unsigned i = 0; i < r->js->njobs; i++) {
		for (unsigned c = 0; c < r->js->jobs[i].numjobs; c++, k++) {
			struct worker *w = &r->workers[k];

			w->run = r;
			w->job = &r->js->jobs[i];
			w->index = k;
			w->job_index = i;
			w->clone = c;
		}
	}
	r->nworkers = n;
	return 0;
}

/* The verify passes: verify_only jobs, and write jobs with verify=pattern. */
static int run_verify(struct run *r)
{
	int bad = 0;

	for (unsigned i = 0; i < r->fs->n; i++) {
		struct lfile *lf = &r->fs->files[i];
		bool want = false;

		if (!lf->verify)
			continue;
		for (unsigned k = 0; k < r->js->njobs; k++) {
			const struct job_opts *j = &r->js->jobs[k];

			if (j->verify != VERIFY_PATTERN)
				continue;
			want |= j->verify_only;
			want |= job_writes(j) && j->do_verify && r->started && !r->interrupted;
		}
		if (!want || control_stop)
			continue;
		int ret = verify_file(lf, &control_stop);

		if (ret) {
			fprintf(stderr, "lockscope-load: verify %s: %s\n", lf->path, strerror(-ret));
			bad = 1;
		} else if (lf->verify_result.mismatches) {
			fprintf(stderr, "lockscope-load: verify %s: %llu of %llu blocks do not "
				"match, first at offset %llu (%s)\n", lf->path,
				(unsigned long long)lf->verify_result.mismatches,
				(unsigned long long)lf->verify_result.blocks,
				(unsigned long long)lf->verify_result.first_offset,
				lf->verify_result.first_reason);
			bad = 1;
		}
	}
	return bad;
}

static bool any_verify_only(const struct jobset *js)
{
	for (unsigned i = 0; i < js->njobs; i++)
		if (js->jobs[i].verify_only)
			return true;
	return false;
}

/* Reads and checks the command line and job files, and answers --help,
 * --version and --parse-only. -1 to go on, else the exit status. */
static int parse_and_check(int argc, char **argv, struct jobset *js, struct prog_opts *prog)
{
	char err[600];

	options_defaults(NULL, prog);
	if (cmdline_parse(argc, argv, prog, js, err, sizeof(err)))
		return refuse(err);
	if (prog->help) {
		usage(stdout);
		return 0;
	}
	if (prog->version) {
		puts(LOAD_VERSION);
		return 0;
	}
	if (!js->njobs)
		return refuse("no job defined: give --name=NAME with job options, or a job file "
			      "(--help lists the options)");
	if (validate_jobs(js, prog, err, sizeof(err)))
		return refuse(err);
	if (prog->parse_only) {
		parse_dump(stdout, js, prog);
		return 0;
	}
	return -1;
}

/* Plans and lays out the files, runs the timed phase, then the verify
 * passes (their failure in *status). -1 to go on, else the exit status. */
static int run_jobs(struct run *run, int *status)
{
	char err[600];
	int ret;

	control_install_signals();
	if (files_plan(run->js, run->fs, err, sizeof(err)))
		return refuse(err);
	pthread_mutex_init(&run->lock, NULL);
	pthread_cond_init(&run->cond, NULL);
	run->stop = &control_stop;
	run->pid = getpid();
	if (make_workers(run)) {
		fprintf(stderr, "lockscope-load: out of memory\n");
		return 1;
	}
	ret = layout_files(run->fs, run->js, &control_stop, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "lockscope-load: %s\n", err);
		return 1;
	}
	if (any_verify_only(run->js)) {
		/* nothing to time: the verify pass is the whole job */
		run->interrupted = control_stop != 0;
	} else if (control_run(run)) {
		fprintf(stderr, "lockscope-load: %s\n", run->error);
		return 1;
	}
	*status |= run_verify(run);
	run->interrupted = control_stop != 0;
	return -1;
}

/* Writes the report to out, removes the files the run made for itself, and
 * says on stderr what went wrong. Returns the exit status. */
static int report_and_status(struct run *run, FILE *out, int status)
{
	struct thread_stats tot;
	int ret;

	if (run->prog->output_format == OUTFMT_JSON)
		ret = report_json(out, run);
	else
		ret = report_text(out, run);
	if (ret || (out != stdout && fclose(out))) {
		fprintf(stderr, "lockscope-load: writing the report: %s\n", strerror(errno));
		status = 1;
	}
	files_unlink(run->fs);

	report_group_totals(run, &tot);
	if (tot.first_error) {
		fprintf(stderr, "lockscope-load: I/O errors: %llu (first: %s)\n",
			(unsigned long long)(tot.dir[0].errors + tot.dir[1].errors),
			strerror(tot.first_error));
		status = 1;
	}
	if (tot.verify.mismatches) {
		fprintf(stderr, "lockscope-load: verify: %llu of %llu blocks read did not match, "
			"first at offset %llu (%s)\n", (unsigned long long)tot.verify.mismatches,
			(unsigned long long)tot.verify.blocks,
			(unsigned long long)tot.verify.first_offset, tot.verify.first_reason);
		status = 1;
	}
	return run->interrupted ? 130 : status;
}

int main(int argc, char **argv)
{
	static struct jobset js;
	struct prog_opts prog;
	struct fileset fs = { 0 };
	struct run run = { .js = &js, .fs = &fs, .prog = &prog };
	FILE *out = stdout;
	char err[600];
	int status = 0, ret;

	ret = parse_and_check(argc, argv, &js, &prog);
	if (ret >= 0)
		return ret;
	if (prog.output) {
		out = fopen(prog.output, "w");
		if (!out) {
			snprintf(err, sizeof(err), "cannot write --output=%s: %s", prog.output,
				 strerror(errno));
			return refuse(err);
		}
	}
	ret = run_jobs(&run, &status);
	if (ret >= 0)
		return ret;
	return report_and_status(&run, out, status);
}
