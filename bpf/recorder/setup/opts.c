// SPDX-License-Identifier: GPL-2.0
/* lockscope-record's options, as data: one table drives parsing and --help. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_out.h"
#include "msg.h"
#include "setup/opts.h"

/* How an option's argument is read into struct rec_opts. */
enum opt_kind {
	OK_SET,       /* no argument: sets the bool */
	OK_CLEAR,     /* no argument: clears the bool (its default is true) */
	OK_STRING,
	OK_UINT,      /* integer in [min, max] */
	OK_DOUBLE,    /* number in [min, max], or (min, max] with min_open */
	OK_PIDS,
	OK_COMM,
	OK_HELP,
};

/* One option: its name, how it is parsed, its default and bounds, its help.
 * The only place each of these is written: parsing, defaults and --help all
 * read this table. */
struct opt_def {
	const char *name;
	char short_name;       /* 0: long only */
	const char *arg;       /* NULL: takes no argument */
	enum opt_kind kind;
	size_t offset;         /* of the field in struct rec_opts */
	double def, min, max;  /* OK_UINT, OK_DOUBLE */
	bool min_open;
	const char *help;
	const char *def_note;  /* after the numeric default (e.g. what 0 means), or the
				* whole default text for other kinds */
};

#define F(field) offsetof(struct rec_opts, field)
#define MAP_MAX (1u << 24)

static const struct opt_def defs[] = {
	{ "duration", 'd', "S", OK_DOUBLE, F(duration), 0, 0, 1e7, true,
	  "record for S seconds (fractions allowed)", "until SIGINT/SIGTERM" },
	{ "out", 'o', "FILE", OK_STRING, F(out), 0, 0, 0, false,
	  "write the JSON document to FILE", "stdout" },
	{ "pid", 'p', "PID[,PID...]", OK_PIDS, 0, 0, 0, 0, false,
	  "trace these processes and all their threads", NULL },
	{ "comm", 'c', "NAME", OK_COMM, F(comm), 0, 0, 0, false,
	  "trace threads whose command name is NAME", NULL },
	{ "cgroup", 0, "PATH", OK_STRING, F(cgroup), 0, 0, 0, false,
	  "trace tasks in this cgroup v2 directory and its descendants", NULL },
	{ "start-on-stdin", 0, NULL, OK_SET, F(start_on_stdin), 0, 0, 0, false,
	  "attach, print 'ready', count from the first line on stdin (then print "
	  "'started') until a second line, EOF, a signal or --duration; with --out, print "
	  "'done' once the file is written (detaching follows)", NULL },
	{ "list-features", 0, NULL, OK_SET, F(list_features), 0, 0, 0, false,
	  "load and attach every probe group, print which are usable as JSON, exit", NULL },
	{ "list-facts", 0, NULL, OK_SET, F(list_facts), 0, 0, 0, false,
	  "print the recorder's fixed names as JSON (the system calls it follows by kind, the "
	  "DIO write classes, the inode lock kinds, the attach kinds; --list-features has them "
	  "too), exit; loads nothing, needs no root", NULL },
	{ "min-block-us", 0, "N", OK_UINT, F(min_block_us), 1, 0, MAP_MAX, false,
	  "off-CPU periods shorter than N us get no stack record", NULL },
	{ "long-wait-us", 0, "N", OK_UINT, F(long_wait_us), 0, 0, 60000000, false,
	  "every off-CPU wait (blocked, not runnable) and lock wait of a traced thread "
	  "lasting N us or more is recorded with its kernel and user stack in every phase of "
	  "--duty and whatever --max-overhead sheds; shorter ones are sampled",
	  "0: none, waits are then sampled like the rest; lockscope attach --long-wait MS "
	  "passes MS x 1000" },
	{ "no-user-stacks", 0, NULL, OK_CLEAR, F(user_stacks), 0, 0, 0, false,
	  "do not collect user stacks", NULL },
	{ "raw-syscalls", 0, NULL, OK_SET, F(raw_syscalls), 0, 0, 0, false,
	  "follow system calls at raw_syscalls:sys_enter/sys_exit (every call of every task "
	  "runs them) instead of each followed call's own syscalls:* event: two links instead "
	  "of about 25, which detach in a fraction of the time", NULL },
	{ "stack-refresh-ms", 0, "N", OK_UINT, F(stack_refresh_ms), 100, 0, 60000, false,
	  "off-CPU stacks are sampled once per N ms per thread, system call and reason (the "
	  "rest weighted onto the samples), and a lock wait on the same code path (return "
	  "addresses, lock, user IP, syscall) within N ms reuses its stacks, as do a lock "
	  "holder's snapshot and a long wait's kernel stack at the same place",
	  "0: walk every time" },
	{ "holder-period-ms", 0, "N", OK_UINT, F(holder_period_ms), 2, 1, 1000, false,
	  "every N ms, a snapshot of the holder of each lock traced threads wait on "
	  "(probe group 'holders')", NULL },
	{ "max-locks", 0, "N", OK_UINT, F(max_locks), 16384, 1, MAP_MAX, false,
	  "entries of the lock-wait map, one per (lock, flags, stacks, process)", NULL },
	{ "max-stacks", 0, "N", OK_UINT, F(max_stacks), 16384, 1, MAP_MAX, false,
	  "entries of the stack map, kernel and user stacks together", NULL },
	{ "stack-depth", 0, "N", OK_UINT, F(stack_depth), 64, 1, REC_MAX_STACK_DEPTH, false,
	  "frames kept per stack", NULL },
	{ "max-inodes", 0, "N", OK_UINT, F(max_inodes), 16384, 1, MAP_MAX, false,
	  "entries of the lock-address->inode map and of the per-inode I/O map", NULL },
	{ "max-threads", 0, "N", OK_UINT, F(max_threads), 8192, 1, MAP_MAX, false,
	  "traced threads", NULL },
	{ "max-offcpu", 0, "N", OK_UINT, F(max_offcpu), 16384, 1, MAP_MAX, false,
	  "entries of the off-CPU map, one per (thread, stacks, reason)", NULL },
	{ "max-inflight", 0, "N", OK_UINT, F(max_inflight), 8192, 1, MAP_MAX, false,
	  "DIOs and block requests in flight at once", NULL },
	{ "scan-interval-ms", 0, "N", OK_UINT, F(scan_ms), 500, 0, MAP_MAX, false,
	  "read /proc/PID/fd and maps of traced processes every N ms while recording",
	  "0: only at start and stop" },
	{ "mount-search-max", 0, "N", OK_UINT, F(mount_search_max), 200000, 0, MAP_MAX, false,
	  "directory entries visited in one walk of a device's mounts for the paths of its "
	  "inodes", NULL },
	{ "disable", 0, "GROUP[,GROUP...]", OK_STRING, F(disable), 0, 0, 0, false,
	  "turn probe groups off (names as in --list-features)", NULL },
	{ "fs", 0, "LIST", OK_STRING, F(fs), 0, 0, 0, false,
	  "attach the xfs_* and ext4_*/jbd2 probe groups only for these filesystem types "
	  "(comma list, e.g. xfs or ext4,xfs), or all, or auto: the types of the regular files "
	  "the --pid processes have open at start and of their working directories (all when "
	  "none is found; files opened later on another type are not covered)",
	  "auto with --pid, else all" },
	{ "attach-kinds", 0, "KIND[,KIND...]", OK_STRING, F(attach_kinds), 0, 0, 0, false,
	  "attach kinds that may be used, from tp_btf,raw_tp,tracepoint,fentry,kprobe", "all" },
	{ "lock-source", 0, "SOURCE", OK_STRING, F(lock_source), 0, 0, 0, false,
	  "where lock waits come from: tracepoint (lock:contention_begin/end, probe group "
	  "'lock'), slowpath (fentry/kprobe on the rwsem and mutex slow paths, probe group "
	  "'lock_slowpath'), or auto: the tracepoints, and the slow paths only on kernels "
	  "without them", "auto" },
	{ "max-overhead", 0, "PCT", OK_DOUBLE, F(max_overhead_pct), 2, 0, 100, false,
	  "BPF CPU budget in percent of all online CPUs: once a second, when the last second "
	  "went over it, lower --duty (down to 10%), then shed user stacks, then all stacks, then "
	  "the costliest non-core probe group; with only the core groups (kept_by_budget in "
	  "--list-features) left and still over, detach every probe for a pause long enough "
	  "to bring the mean share under the budget (at most --max-pause-ms), then attach "
	  "them again and go on checking; the window stays open", "0: never adjust" },
	{ "max-pause-ms", 0, "N", OK_UINT, F(max_pause_ms), 600000, 1000, 3600000, false,
	  "the longest pause of --max-overhead's last resort", NULL },
	{ "restore-after-ms", 0, "N", OK_UINT, F(restore_after_ms), 30000, 0, 3600000, false,
	  "with a budget (--max-overhead), what it shed (stacks, probe groups) comes back, the "
	  "last shed first, after N ms once a judged second is under half the budget, and the "
	  "duty rises again after; each time a step is shed again after a return, its wait "
	  "doubles (at most an hour)", "0: what is shed stays shed" },
	{ "budget-stats-every", 0, "N", OK_UINT, F(budget_stats_every), 1, 1, 60, false,
	  "with a budget (--max-overhead), keep the BPF run-time statistics on for one second "
	  "in every N only and judge the budget on those seconds, their own clock taken out "
	  "of every run: what the programs cost unmeasured; the intervals of a series carry "
	  "that estimate (overhead.estimated). lockscope attach passes 4",
	  "1: on throughout, every second judged" },
	{ "stats-every", 0, "N", OK_UINT, F(stats_every), 4, 1, 60, false,
	  "without a budget (--max-overhead 0), a series or a --duty, the kernel's BPF run-time "
	  "statistics are on for one second in every N: with them on, every run of every "
	  "program reads the clock twice (bench/stats_cost: 68 ns a run on a 2-CPU VM). The cost of the other seconds is "
	  "estimated from the measured ones, less the statistics' own clock "
	  "(docs/recorder-json.md, \"overhead\".measured_ns); a budget, a series or a duty "
	  "below 100 keeps them on",
	  "1: always on" },
	{ "duty", 0, "PCT", OK_UINT, F(duty_pct), 100, 1, 100, false,
	  "time-sampled recording: in each --duty-period-ms, attach the probes for PCT% of it "
	  "and detach them for the rest (a probe left attached costs a run per event of every "
	  "process); rates and shares are then per observed second (docs/recorder-json.md, "
	  "\"sampling\")", "always attached" },
	{ "duty-period-ms", 0, "N", OK_UINT, F(duty_period_ms), 1000, 100, 3600000, false,
	  "the period of --duty", NULL },
	{ "duty-flag", 0, NULL, OK_SET, F(duty_flag), 0, 0, 0, false,
	  "the off part of --duty sets a flag every program tests at its first instruction, "
	  "instead of detaching the programs: no kernel text patched, no links made, at the "
	  "cost of a short run per event while off (\"sampling\".toggle_ns/toggle_cpu_ns say "
	  "what switching cost)", NULL },
	{ "interval-ms", 0, "N", OK_UINT, F(interval_ms), 0, 0, 3600000, false,
	  "every N ms, add the changes since the last interval to the document's \"series\" "
	  "(0: off; else at least 100)", NULL },
	{ "series-out", 0, "FILE", OK_STRING, F(series_out), 0, 0, 0, false,
	  "also write each interval as one JSON line to FILE, flushed per line (needs --interval-ms)",
	  NULL },
	{ "verbose", 'v', NULL, OK_SET, F(verbose), 0, 0, 0, false,
	  "libbpf and loader messages on stderr", NULL },
	{ "help", 'h', NULL, OK_HELP, 0, 0, 0, 0, false, "this text", NULL },
};

#define NR_DEFS (sizeof(defs) / sizeof(defs[0]))

/* "(default 100; 0: walk every time)", from the table. */
static void default_text(const struct opt_def *d, char *buf, size_t len)
{
	buf[0] = 0;
	if (d->kind == OK_UINT || (d->kind == OK_DOUBLE && d->def))
		snprintf(buf, len, " (default %g%s%s)", d->def, d->def_note ? "; " : "",
			 d->def_note ? d->def_note : "");
	else if (d->def_note)
		snprintf(buf, len, " (default: %s)", d->def_note);
}

static void usage(FILE *f)
{
	char left[64], def[128];
	size_t i;

	fprintf(f,
		"usage: lockscope-record [OPTIONS]\n"
		"Record which lock each thread waited on, on which file, through which kernel\n"
		"path; direct-I/O write classes per file; where thread time goes. Writes one\n"
		"JSON document (schema lockscope-record/1, see docs/recorder-json.md).\n\n");
	for (i = 0; i < NR_DEFS; i++) {
		snprintf(left, sizeof(left), "--%s%s%s", defs[i].name,
			 defs[i].arg ? " " : "", defs[i].arg ? defs[i].arg : "");
		default_text(&defs[i], def, sizeof(def));
		fprintf(f, "  %-30s %s%s\n", left, defs[i].help, def);
	}
	fprintf(f, "\nExamples:\n"
		"  lockscope-record -p 1234 -d 10 -o rec.json   # one process, 10 s, into rec.json\n"
		"  lockscope-record -c mariadbd -d 30 --max-overhead 1   # within 1%% of the CPUs\n"
		"  lockscope-record -c mariadbd -d 3600 --max-overhead 1 --max-pause-ms 10000"
		"   # over 1%% with only the core probes: pauses of at most 10 s\n"
		"  lockscope-record -c mariadbd -d 3600 --max-overhead 1 --restore-after-ms 120000"
		"   # what a burst shed comes back 2 min on\n"
		"  lockscope-record --cgroup /sys/fs/cgroup/app.slice --interval-ms 1000 -d 60\n"
		"                                            # per-second deltas in \"series\"\n"
		"  lockscope-record -p 1234 -d 60 --max-overhead 0 --stats-every 1"
		"   # BPF cost measured every second, not estimated\n"
		"  lockscope-record -p 1234 --fs ext4 --disable holders,releasers   # fewer probes\n"
		"  lockscope-record --list-features   # which probe groups load and attach here\n"
		"  lockscope-record --list-facts      # the system calls, classes and kinds it names\n");
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
		msg_error("--%s: expected an integer in [%u, %u], got '%s'", name, min, max, s);
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
			msg_error("--pid: not a process id: '%s'", tok);
			rc = -1;
			break;
		}
		if (o->nr_pids >= REC_MAX_PIDS) {
			msg_error("--pid: at most %d processes", REC_MAX_PIDS);
			rc = -1;
			break;
		}
		o->pids[o->nr_pids++] = v;
	}
	free(copy);
	return rc;
}

static int parse_double(const struct opt_def *d, const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(d->min_open ? v > d->min : v >= d->min) || v > d->max) {
		msg_error("--%s: expected a number in %c%g, %g], got '%s'", d->name,
			  d->min_open ? '(' : '[', d->min, d->max, s);
		return -1;
	}
	*out = v;
	return 0;
}

static void set_defaults(struct rec_opts *o)
{
	size_t i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < NR_DEFS; i++) {
		char *field = (char *)o + defs[i].offset;

		if (defs[i].kind == OK_UINT)
			*(unsigned int *)field = defs[i].def;
		else if (defs[i].kind == OK_DOUBLE)
			*(double *)field = defs[i].def;
		else if (defs[i].kind == OK_CLEAR)
			*(bool *)field = true;
	}
}

/* Reads one option's argument into o. 0, or -1 with a message printed. */
static int apply(const struct opt_def *d, const char *arg, struct rec_opts *o)
{
	char *field = (char *)o + d->offset;

	switch (d->kind) {
	case OK_SET: *(bool *)field = true; return 0;
	case OK_CLEAR: *(bool *)field = false; return 0;
	case OK_STRING: *(const char **)field = arg; return 0;
	case OK_UINT: return parse_uint(d->name, arg, d->min, d->max, (unsigned int *)field);
	case OK_DOUBLE: return parse_double(d, arg, (double *)field);
	case OK_PIDS: return parse_pids(arg, o);
	case OK_COMM:
		if (!*arg || strlen(arg) > 15) {
			msg_error("--comm: a command name has 1 to 15 characters: '%s'", arg);
			return -1;
		}
		*(const char **)field = arg;
		return 0;
	case OK_HELP: return 0;
	}
	return 0;
}

/* Rules between options, once all are read. */
static int check_combinations(const struct rec_opts *o)
{
	if (o->interval_ms && o->interval_ms < 100) {
		msg_error("--interval-ms: at least 100 (or 0 for no series), got %u", o->interval_ms);
		return -1;
	}
	if (o->series_out && !o->interval_ms) {
		msg_error("--series-out needs --interval-ms N");
		return -1;
	}
	return 0;
}

/* getopt_long's tables from defs: a long option returns its index + 256,
 * a short one its letter. */
static void getopt_tables(struct option *longopts, char *shortopts, size_t len)
{
	size_t i, n = 0;

	n += snprintf(shortopts, len, ":");
	for (i = 0; i < NR_DEFS; i++) {
		longopts[i] = (struct option){ defs[i].name,
			defs[i].arg ? required_argument : no_argument, NULL,
			defs[i].short_name ? defs[i].short_name : (int)(256 + i) };
		if (defs[i].short_name && n + 3 < len)
			n += snprintf(shortopts + n, len - n, "%c%s", defs[i].short_name,
				      defs[i].arg ? ":" : "");
	}
	memset(&longopts[NR_DEFS], 0, sizeof(longopts[0]));
}

static const struct opt_def *def_of(int c)
{
	size_t i;

	if (c >= 256 && (size_t)c < 256 + NR_DEFS)
		return &defs[c - 256];
	for (i = 0; i < NR_DEFS; i++)
		if (defs[i].short_name && defs[i].short_name == c)
			return &defs[i];
	return NULL;
}

void opts_ranges_json(struct json_out *j)
{
	json_begin_object(j);
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		if (defs[i].kind != OK_UINT && defs[i].kind != OK_DOUBLE)
			continue;
		json_key(j, defs[i].name);
		json_begin_array(j);
		json_value_double(j, defs[i].min);
		json_value_double(j, defs[i].max);
		json_end_array(j);
	}
	json_end_object(j);
}

int opts_parse(int argc, char **argv, struct rec_opts *o, int *exit_code)
{
	struct option longopts[NR_DEFS + 1];
	char shortopts[64];
	int c;

	set_defaults(o);
	o->argc = argc;
	o->argv = argv;
	getopt_tables(longopts, shortopts, sizeof(shortopts));
	*exit_code = EXIT_USAGE;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct opt_def *d = def_of(c);

		if (c == ':') {
			msg_error("option %s needs an argument", argv[optind - 1]);
			return -1;
		}
		if (!d) {
			msg_error("unknown option '%s' (see --help)", argv[optind - 1]);
			return -1;
		}
		if (d->kind == OK_HELP) {
			usage(stdout);
			*exit_code = 0;
			return -1;
		}
		if (apply(d, optarg, o))
			return -1;
	}
	if (check_combinations(o))
		return -1;
	if (optind < argc) {
		msg_error("unexpected argument '%s' (see --help)", argv[optind]);
		return -1;
	}
	*exit_code = 0;
	return 0;
}
