"""``lockscope attach``: its options, their check (one line, exit status 2, before
anything is made), and the attach they ask for: bounded (cli.attach_bounded) or, with
``--continuous``, until SIGTERM or SIGINT, serving what it records
(cli.attach_continuous, run.continuous, lockscope.export).

Every start of lockscope builds this parser: what the attach runs is imported only when
it runs.
"""

from __future__ import annotations

import os

from ..errors import UsageError

# Shown at the end of --help (command, what it does), as libbpf-tools do; NOTES below.
EXAMPLES = [
    ("lockscope attach --comm mariadbd --duration 60 --mysql /run/mysqld/mysqld.sock",
     "every mariadbd thread for 60 s, with its counters"),
    ("lockscope attach --unit postgresql@15-main --postgres 'dbname=postgres' --out pgwaits",
     "a unit's cgroup; results in pgwaits/"),
    ("lockscope attach --pid 1234 --max-overhead 1", "within 1% of the CPUs"),
    ("lockscope attach --cgroup /sys/fs/cgroup/app.slice --duty 30",
     "probes on 30% of the time"),
    ("lockscope attach --continuous --comm mariadbd --listen 127.0.0.1:9433 "
     "--mysql /run/mysqld/mysqld.sock", "serve Prometheus metrics and pprof profiles"),
    ("lockscope attach --continuous --unit mariadb --listen :9433 --out /var/lib/lockscope/final",
     "until stopped; a final results.json"),
    ("lockscope attach --continuous --comm mariadbd --listen :9433 "
     "--web-config /etc/lockscope/web.yml --redact-paths-outside /var/lib/mysql",
     "TLS and basic auth for a fleet; no path outside the data directory served"),
]

DEFAULT_DURATION_S = 30.0
MAX_DURATION_S = 3600.0
DEFAULT_MAX_OVERHEAD = 2.0
CONTINUOUS_MAX_OVERHEAD = 1.0
DEFAULT_TOP_FILES = 50
DEFAULT_ROTATE_S = 3600.0
NOTES = """
--continuous runs until SIGTERM or SIGINT (a systemd service: docs/fleet.md), holding
the recorder's CPU under --max-overhead (default 1% there) by its duty, and serves
/metrics (Prometheus), /debug/pprof/mutex and /debug/pprof/block (pprof, as a Go
service does; ?seconds=N) and a page at /:
  curl -s 127.0.0.1:9433/metrics;  go tool pprof -top http://127.0.0.1:9433/debug/pprof/mutex
Label cardinality is bounded: files are labelled by name only for the --top-files N
(default 50) with the most wait and I/O time, decayed over about five minutes, and every
other file is "other"; locks and wait classes come from fixed lists, so series never grow
with the files, threads or stacks of the server. With --out, a final results.json (and
report) is written when it stops.

The HTTP side runs in a process of its own that holds no capability and is not root
(--export-user, default nobody when started as root). --web-config FILE reads the
Prometheus exporter-toolkit's web configuration (TLS, client certificates, bcrypt basic
auth), the file node_exporter takes as --web.config.file; a change to it or to the files
it names is served from the next connection on (docs/fleet.md)."""


def add_parser(sub) -> None:
    p = sub.add_parser(
        "attach", help="trace a live server (database) and explain its waits over time",
        description="Attach the eBPF recorder to running processes for a bounded time, "
        "split their threads' off-CPU time into wait classes (waiting for work apart from "
        "loss), name their files as the database knows them, line throughput up with the "
        "waits per second, and write results.json, report.html and flame graphs; or, "
        "with --continuous, run until stopped and serve the figures to Prometheus and "
        "the stacks to a continuous profiler.")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--pid", metavar="PID[,PID]", help="these processes (all their threads)")
    who.add_argument("--comm", metavar="NAME", help="threads with this command name")
    who.add_argument("--cgroup", metavar="PATH", help="a cgroup v2 directory and below")
    who.add_argument("--unit", metavar="NAME", help="a systemd unit's cgroup "
                     "(/sys/fs/cgroup/system.slice/NAME)")
    p.add_argument("--duration", type=float, metavar="S",
                   help=f"seconds to trace (default {DEFAULT_DURATION_S:.0f}, at most "
                   f"{MAX_DURATION_S:.0f}; not with --continuous)")
    p.add_argument("--continuous", action="store_true",
                   help="run until SIGTERM or SIGINT, serving /metrics and pprof profiles "
                   "on --listen; memory and cost stay bounded (see below)")
    p.add_argument("--listen", metavar="[HOST:]PORT",
                   help="with --continuous: where to serve (host default 127.0.0.1: "
                   "another address only when given; [V6]:PORT for IPv6)")
    p.add_argument("--web-config", metavar="FILE",
                   help="with --continuous: TLS and basic auth, in the exporter-toolkit's "
                   "web configuration format (node_exporter's --web.config.file)")
    p.add_argument("--export-user", metavar="USER",
                   help="with --continuous: the user the exporter process runs as when "
                   "started as root (default nobody); it holds no capability either way")
    p.add_argument("--redact-paths-outside", metavar="DIR", action="append", default=[],
                   help="with --continuous: serve file paths under DIR only (repeatable); "
                   "any other becomes [redacted dev D ino N]")
    p.add_argument("--rotate", type=float, default=DEFAULT_ROTATE_S, metavar="S",
                   help="with --continuous: a new recorder every S seconds, its maps empty "
                   "(they keep an entry per thread, lock, file and stack seen; 0: never; "
                   f"default {DEFAULT_ROTATE_S:g})")
    p.add_argument("--top-files", type=int, default=DEFAULT_TOP_FILES, metavar="N",
                   help="with --continuous: files labelled by name in the metrics and "
                   f"profiles, the rest as \"other\" (default {DEFAULT_TOP_FILES})")
    p.add_argument("--interval", type=float, default=1.0, metavar="S",
                   help="seconds per interval of the time series (default 1)")
    p.add_argument("--max-overhead", type=float, metavar="PCT",
                   help="CPU the recorder may use, in %% of the machine, held by lowering its "
                   "duty, then shedding stacks and probe groups (default "
                   f"{DEFAULT_MAX_OVERHEAD:g}; {CONTINUOUS_MAX_OVERHEAD:g} with --continuous)")
    p.add_argument("--fs", metavar="LIST", help="the recorder's --fs: filesystem types "
                   "whose xfs/ext4 probe groups are attached (e.g. xfs or ext4,xfs), or all "
                   "(default: the recorder's own, auto with --pid: the types of the files "
                   "the processes have open when tracing starts)")
    p.add_argument("--duty", type=int, metavar="PCT",
                   help="time-sampled recording: probes attached PCT%% of each second, "
                   "rates per observed second (lockscope-record --duty; default: always)")
    p.add_argument("--long-wait", type=float, default=0.0, metavar="MS",
                   help="off-CPU and lock waits of the traced threads lasting MS "
                   "milliseconds or more are recorded with their kernel and user stacks "
                   "all the time, whatever --duty and --max-overhead leave on; shorter ones "
                   "are sampled (default 0: every wait sampled alike; e.g. --long-wait 1). "
                   "Its programs stay on in every phase: on loads of ~100k context switches "
                   "a second they cost more than a 1%% budget by themselves (docs/long-waits.md)")
    p.add_argument("--mysql", metavar="SOCKET|DSN", help="read-only login to MariaDB/MySQL "
                   "for its counters (socket path or mysql://user:pass@host:port/)")
    p.add_argument("--postgres", metavar="DSN", help="read-only login to PostgreSQL for "
                   "pg_stat_database/pg_stat_activity and table names (libpq DSN)")
    p.add_argument("--out", metavar="DIR", help="output directory (default: "
                   "./lockscope-attach-YYYYmmdd-HHMMSS)")
    p.add_argument("--no-report", action="store_true", help="skip the HTML report")
    p.set_defaults(func=run)


def _check_args(args) -> None:
    from ..run.outdir import check_dir, default_out_dir
    from .attach_parts import check_fs
    from .long_wait_option import check_long_wait

    if args.max_overhead is None:
        args.max_overhead = CONTINUOUS_MAX_OVERHEAD if args.continuous else DEFAULT_MAX_OVERHEAD
    if args.continuous:
        _check_continuous(args)
    else:
        for opt in ("listen", "web_config", "export_user", "redact_paths_outside"):
            if getattr(args, opt):
                raise UsageError(f"--{opt.replace('_', '-')} serves a --continuous attach: "
                                 "add --continuous")
    if args.duration is None:
        args.duration = DEFAULT_DURATION_S
    if not 0 < args.duration <= MAX_DURATION_S:
        raise UsageError(f"--duration must be in (0, {MAX_DURATION_S:.0f}] seconds")
    if not 0.1 <= args.interval <= max(args.duration, 0.1):
        raise UsageError("--interval must be at least 0.1 s and at most --duration")
    if not 0 < args.max_overhead <= 100:
        raise UsageError("--max-overhead must be a percentage in (0, 100]")
    if args.duty is not None and not 1 <= args.duty <= 100:
        raise UsageError("--duty must be a percentage in [1, 100]")
    check_long_wait(args)
    if args.mysql and args.postgres:
        raise UsageError("give --mysql or --postgres, not both")
    if args.fs is not None:
        check_fs(args.fs)
    if args.out or not args.continuous:  # a continuous attach writes only with --out
        check_dir(args.out or default_out_dir("lockscope-attach"), "--out", fresh=True)


def _check_continuous(args) -> None:
    if args.duration is not None:
        raise UsageError("--continuous runs until SIGTERM or SIGINT: drop --duration")
    if args.listen is None:
        raise UsageError("--continuous needs --listen [HOST:]PORT (e.g. 127.0.0.1:9433)")
    if not 1 <= args.top_files <= 1000:
        raise UsageError("--top-files must be in [1, 1000]")
    if args.rotate != 0 and not 2 <= args.rotate <= 86400 * 7:
        raise UsageError("--rotate must be 0 (never) or in [2, 604800] seconds")
    if not 0.1 <= args.interval <= 60:
        raise UsageError("--interval must be in [0.1, 60] seconds with --continuous")
    for d in args.redact_paths_outside:
        if not os.path.isabs(d):
            raise UsageError(f"--redact-paths-outside {d}: give an absolute directory")
    args.duration = MAX_DURATION_S  # only a bound for the checks below


def run(args) -> int:
    _check_args(args)
    if args.continuous:
        from .attach_continuous import run_continuous

        return run_continuous(args)
    from .attach_bounded import run_bounded

    return run_bounded(args)
