// SPDX-License-Identifier: GPL-2.0
/* lockscope-record's options, as data: one table drives parsing and --help. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"

enum {
	OPT_DURATION = 'd', OPT_OUT = 'o', OPT_PID = 'p', OPT_COMM = 'c', OPT_HELP = 'h',
	OPT_VERBOSE = 'v',
	OPT_CGROUP = 256, OPT_START_STDIN, OPT_LIST, OPT_NO_USTACKS, OPT_MIN_BLOCK,
	OPT_MAX_LOCKS, OPT_MAX_STACKS, OPT_STACK_DEPTH, OPT_MAX_INODES, OPT_MAX_THREADS,
	OPT_MAX_OFFCPU, OPT_MAX_INFLIGHT, OPT_SCAN_MS, OPT_MOUNT_MAX, OPT_DISABLE, OPT_ATTACH,
	OPT_STACK_REFRESH, OPT_MAX_OVERHEAD, OPT_INTERVAL, OPT_SERIES_OUT,
	OPT_HOLDER_PERIOD,
};

struct opt_doc {
	struct option opt;
	const char *arg;
	const char *help;
};

static const struct opt_doc docs[] = {
	{ { "duration", required_argument, NULL, OPT_DURATION }, "S",
	  "record for S seconds (fractions allowed); default: until SIGINT/SIGTERM" },
	{ { "out", required_argument, NULL, OPT_OUT }, "FILE",
	  "write the JSON document to FILE (default: stdout)" },
	{ { "pid", required_argument, NULL, OPT_PID }, "PID[,PID...]",
	  "trace these processes and all their threads" },
	{ { "comm", required_argument, NULL, OPT_COMM }, "NAME",
	  "trace threads whose command name is NAME" },
	{ { "cgroup", required_argument, NULL, OPT_CGROUP }, "PATH",
	  "trace tasks in this cgroup v2 directory and its descendants" },
	{ { "start-on-stdin", no_argument, NULL, OPT_START_STDIN }, NULL,
	  "attach, print 'ready', count from the first line on stdin (then print "
	  "'started') until a second line, EOF, a signal or --duration; with --out, print "
	  "'done' once the file is written (detaching follows)" },
	{ { "list-features", no_argument, NULL, OPT_LIST }, NULL,
	  "load and attach every probe group, print which are usable as JSON, exit" },
	{ { "min-block-us", required_argument, NULL, OPT_MIN_BLOCK }, "N",
	  "off-CPU periods shorter than N us get no stack record (default 1)" },
	{ { "no-user-stacks", no_argument, NULL, OPT_NO_USTACKS }, NULL,
	  "do not collect user stacks" },
	{ { "stack-refresh-ms", required_argument, NULL, OPT_STACK_REFRESH }, "N",
	  "off-CPU stacks are sampled once per N ms per thread, system call and reason (the "
	  "rest weighted onto the samples), and a lock wait on the same code path (return "
	  "addresses, lock, user IP, syscall) within N ms reuses its stacks (default 100; "
	  "0: walk every time)" },
	{ { "holder-period-ms", required_argument, NULL, OPT_HOLDER_PERIOD }, "N",
	  "every N ms, a snapshot of the holder of each lock traced threads wait on "
	  "(probe group 'holders'; default 2)" },
	{ { "max-locks", required_argument, NULL, OPT_MAX_LOCKS }, "N",
	  "entries of the lock-wait map, one per (lock, flags, stacks, process) (default 16384)" },
	{ { "max-stacks", required_argument, NULL, OPT_MAX_STACKS }, "N",
	  "entries of the stack map, kernel and user stacks together (default 16384)" },
	{ { "stack-depth", required_argument, NULL, OPT_STACK_DEPTH }, "N",
	  "frames kept per stack, at most 127 (default 64)" },
	{ { "max-inodes", required_argument, NULL, OPT_MAX_INODES }, "N",
	  "entries of the lock-address->inode map and of the per-inode I/O map (default 16384)" },
	{ { "max-threads", required_argument, NULL, OPT_MAX_THREADS }, "N",
	  "traced threads (default 8192)" },
	{ { "max-offcpu", required_argument, NULL, OPT_MAX_OFFCPU }, "N",
	  "entries of the off-CPU map, one per (thread, stacks, reason) (default 16384)" },
	{ { "max-inflight", required_argument, NULL, OPT_MAX_INFLIGHT }, "N",
	  "DIOs and block requests in flight at once (default 8192)" },
	{ { "scan-interval-ms", required_argument, NULL, OPT_SCAN_MS }, "N",
	  "read /proc/PID/fd and maps of traced processes every N ms while recording "
	  "(default 500; 0: only at start and stop)" },
	{ { "mount-search-max", required_argument, NULL, OPT_MOUNT_MAX }, "N",
	  "directory entries visited when searching a mount for an inode's path (default 200000)" },
	{ { "disable", required_argument, NULL, OPT_DISABLE }, "GROUP[,GROUP...]",
	  "turn probe groups off (names as in --list-features)" },
	{ { "attach-kinds", required_argument, NULL, OPT_ATTACH }, "KIND[,KIND...]",
	  "attach kinds that may be used, from tp_btf,raw_tp,tracepoint,fentry,kprobe (default all)" },
	{ { "max-overhead", required_argument, NULL, OPT_MAX_OVERHEAD }, "PCT",
	  "BPF CPU budget in percent of all online CPUs: once a second, when the last second "
	  "went over it, shed user stacks, then all stacks, then the costliest non-core probe "
	  "group; with only the core groups (lock, dio, sched) left and still over, detach and "
	  "end the window early (default 2; 0: never shed)" },
	{ { "interval-ms", required_argument, NULL, OPT_INTERVAL }, "N",
	  "every N ms, add the changes since the last interval to the document's \"series\" "
	  "(default 0: off; at least 100)" },
	{ { "series-out", required_argument, NULL, OPT_SERIES_OUT }, "FILE",
	  "also write each interval as one JSON line to FILE, flushed per line (needs --interval-ms)" },
	{ { "verbose", no_argument, NULL, OPT_VERBOSE }, NULL, "libbpf and loader messages on stderr" },
	{ { "help", no_argument, NULL, OPT_HELP }, NULL, "this text" },
};

#define NR_DOCS (sizeof(docs) / sizeof(docs[0]))

void rec_error(const char *fmt, ...)
{
	va_list ap;

	fputs("lockscope-record: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"usage: lockscope-record [OPTIONS]\n"
		"Record which lock each thread waited on, on which file, through which kernel\n"
		"path; direct-I/O write classes per file; where thread time goes. Writes one\n"
		"JSON document (schema lockscope-record/1, see docs/recorder-json.md).\n\n");
	for (i = 0; i < NR_DOCS; i++) {
		char left[64];

		snprintf(left, sizeof(left), "--%s%s%s", docs[i].opt.name,
			 docs[i].arg ? " " : "", docs[i].arg ? docs[i].arg : "");
		fprintf(f, "  %-30s %s\n", left, docs[i].help);
	}
	fprintf(f, "\nExit status: 0 recorded; 1 cannot record here (not root, no BPF: see "
		"'lockscope doctor'); 2 bad input.\n");
}

static int parse_uint(const char *name, const char *s, unsigned int min, unsigned int max,
		      unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		rec_error("--%s: expected an integer in [%u, %u], got '%s'", name, min, max, s);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_pids(const char *s, struct rec_opts *o)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int rc = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v;

		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || end == tok || *end || v <= 0 || v > INT_MAX) {
			rec_error("--pid: not a process id: '%s'", tok);
			rc = -1;
			break;
		}
		if (o->nr_pids >= REC_MAX_PIDS) {
			rec_error("--pid: at most %d processes", REC_MAX_PIDS);
			rc = -1;
			break;
		}
		o->pids[o->nr_pids++] = v;
	}
	free(copy);
	return rc;
}

int rec_opts_parse(int argc, char **argv, struct rec_opts *o, int *exit_code)
{
	struct option longopts[NR_DOCS + 1];
	const char *shortopts = ":d:o:p:c:hv";
	char *end;
	size_t i;
	int c;

	memset(o, 0, sizeof(*o));
	o->user_stacks = true;
	o->min_block_us = 1;
	o->stack_refresh_ms = 100;
	o->holder_period_ms = 2;
	o->max_locks = 16384;
	o->max_stacks = 16384;
	o->stack_depth = 64;
	o->max_inodes = 16384;
	o->max_threads = 8192;
	o->max_offcpu = 16384;
	o->max_inflight = 8192;
	o->scan_ms = 500;
	o->mount_search_max = 200000;
	o->max_overhead_pct = 2;
	o->argc = argc;
	o->argv = argv;
	for (i = 0; i < NR_DOCS; i++)
		longopts[i] = docs[i].opt;
	memset(&longopts[NR_DOCS], 0, sizeof(longopts[0]));

	*exit_code = EXIT_USAGE;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		unsigned int *target = NULL, min = 1, max = 1u << 24;
		const char *name = "";

		switch (c) {
		case OPT_DURATION:
			errno = 0;
			o->duration = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->duration > 0) || o->duration > 1e7) {
				rec_error("--duration: expected a number of seconds > 0, got '%s'", optarg);
				return -1;
			}
			break;
		case OPT_OUT: o->out = optarg; break;
		case OPT_SERIES_OUT: o->series_out = optarg; break;
		case OPT_MAX_OVERHEAD:
			errno = 0;
			o->max_overhead_pct = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->max_overhead_pct >= 0) ||
			    o->max_overhead_pct > 100) {
				rec_error("--max-overhead: expected a percentage in [0, 100], got '%s'", optarg);
				return -1;
			}
			break;
		case OPT_INTERVAL:
			target = &o->interval_ms; name = "interval-ms"; min = 0; max = 3600000;
			break;
		case OPT_PID:
			if (parse_pids(optarg, o))
				return -1;
			break;
		case OPT_COMM:
			if (!*optarg || strlen(optarg) > 15) {
				rec_error("--comm: a command name has 1 to 15 characters: '%s'", optarg);
				return -1;
			}
			o->comm = optarg;
			break;
		case OPT_CGROUP: o->cgroup = optarg; break;
		case OPT_START_STDIN: o->start_on_stdin = true; break;
		case OPT_LIST: o->list_features = true; break;
		case OPT_NO_USTACKS: o->user_stacks = false; break;
		case OPT_VERBOSE: o->verbose = true; break;
		case OPT_DISABLE: o->disable = optarg; break;
		case OPT_ATTACH: o->attach_kinds = optarg; break;
		case OPT_MIN_BLOCK: target = &o->min_block_us; name = "min-block-us"; min = 0; break;
		case OPT_STACK_REFRESH:
			target = &o->stack_refresh_ms; name = "stack-refresh-ms"; min = 0; max = 60000;
			break;
		case OPT_HOLDER_PERIOD:
			target = &o->holder_period_ms; name = "holder-period-ms"; min = 1; max = 1000;
			break;
		case OPT_MAX_LOCKS: target = &o->max_locks; name = "max-locks"; break;
		case OPT_MAX_STACKS: target = &o->max_stacks; name = "max-stacks"; break;
		case OPT_STACK_DEPTH:
			target = &o->stack_depth; name = "stack-depth"; max = REC_MAX_STACK_DEPTH;
			break;
		case OPT_MAX_INODES: target = &o->max_inodes; name = "max-inodes"; break;
		case OPT_MAX_THREADS: target = &o->max_threads; name = "max-threads"; break;
		case OPT_MAX_OFFCPU: target = &o->max_offcpu; name = "max-offcpu"; break;
		case OPT_MAX_INFLIGHT: target = &o->max_inflight; name = "max-inflight"; break;
		case OPT_SCAN_MS: target = &o->scan_ms; name = "scan-interval-ms"; min = 0; break;
		case OPT_MOUNT_MAX: target = &o->mount_search_max; name = "mount-search-max"; min = 0;
			break;
		case OPT_HELP:
			usage(stdout);
			*exit_code = 0;
			return -1;
		case ':':
			rec_error("option %s needs an argument", argv[optind - 1]);
			return -1;
		default:
			rec_error("unknown option '%s' (see --help)", argv[optind - 1]);
			return -1;
		}
		if (target && parse_uint(name, optarg, min, max, target))
			return -1;
	}
	if (o->interval_ms && o->interval_ms < 100) {
		rec_error("--interval-ms: at least 100 (or 0 for no series), got %u", o->interval_ms);
		return -1;
	}
	if (o->series_out && !o->interval_ms) {
		rec_error("--series-out needs --interval-ms N");
		return -1;
	}
	if (optind < argc) {
		rec_error("unexpected argument '%s' (see --help)", argv[optind]);
		return -1;
	}
	*exit_code = 0;
	return 0;
}
