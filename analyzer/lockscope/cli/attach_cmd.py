"""``lockscope attach``: trace a live server for a bounded time and explain its waits.

Order: check the target (one line, exit 2 when bad) → log in to the database
if asked (a failure is a warning) → start the recorder on the target and wait
for ``ready`` → count, sampling the database each second, with a live line →
stop at --duration, Ctrl-C/SIGTERM, or when the target exits → analyze, write
results.json, report.html and flame/.

Safety: the recorder gets --duration as a hard stop of its own and dies with
this process (PR_SET_PDEATHSIG), its BPF links die with it (nothing pinned),
its maps are bounded, and nothing is written outside --out.

``--continuous`` runs until SIGTERM or SIGINT and serves what it records
(cli.attach_continuous, run.continuous, lockscope.export).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import cast

from ..binaries import find_binary
from ..capabilities import require_recording, what_is_lost
from ..errors import LockscopeError, UsageError
from ..run.held_signals import interrupts_held
from ..run.outdir import check_dir, default_out_dir
from ..run.recording import RecorderWindow, stop
from ..run.session import Session
from ..run.target import Target, resolve
from .attach_parts import check_fs, fill_window, finish, open_db
from .long_wait_option import check_long_wait, long_wait_args

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
    target = resolve(pid=args.pid, comm=args.comm, cgroup=args.cgroup, unit=args.unit)
    require_recording()
    find_binary("lockscope-record")
    session = Session("attach", args.out, "lockscope-attach", kind="attach")
    for line in what_is_lost():
        session.note(f"warning: {line}")
    sampler, db_warning = open_db(args)
    if db_warning:
        session.note(f"warning: {db_warning}; tracing without database counters")
    doc = cast(dict, session.doc)
    doc.update({"target": target.facts(),
                "attach": {"duration_s": args.duration, "interval_s": args.interval,
                           "max_overhead_pct": args.max_overhead, "duty_pct": args.duty,
                           "privileges_lost": what_is_lost()},
                "db": None, "analysis": {}})
    with session.interruptible():
        trace, ended, rec_argv, trace_error = _record(args, target, session.out, sampler)
    doc["attach"].update({"ended": ended, "recorder_argv": rec_argv})
    fill_window(doc, args, target.label(), trace, trace_error, ended, sampler, db_warning)
    return finish(session, args, ended)


def _record(args, target: Target, out: Path, sampler):
    """The recorder over the window (recording.RecorderWindow, with its own --duration as
    a hard stop); returns (trace, how it ended, argv, error)."""
    series_path = out / ".series.jsonl"
    recorder_args = ["--duration", f"{args.duration:g}",
                     "--max-overhead", f"{args.max_overhead:g}"]
    if args.fs:
        recorder_args += ["--fs", args.fs]
    if args.duty is not None:
        recorder_args += ["--duty", str(args.duty)]
    recorder_args += long_wait_args(args)
    recorder_args += ["--interval-ms", str(max(100, int(args.interval * 1000))),
                      "--series-out", str(series_path)]
    with interrupts_held():
        window = RecorderWindow(target.recorder_filter(), out, recorder_args, prefix=".",
                                die_with_parent=True)
    ended = "duration"
    from ..run.attach_progress import AttachProgress

    try:
        try:
            window.wait_ready()
            if window.error:
                # exit status 2: the recorder refused an option value (--fs)
                raise (UsageError if window.exit_status == 2 else LockscopeError)(window.error)
            window.open()
            if window.error:
                raise LockscopeError(window.error)
            if sampler is not None:
                sampler.start()
            print(f"lockscope attach: tracing {target.label()} ({target.how} {target.value}) "
                  f"for {args.duration:g} s; Ctrl-C stops early and keeps the window so far",
                  file=sys.stderr, flush=True)
            deadline = time.monotonic() + args.duration
            live_line = True
            with AttachProgress(target.label(), args.duration, series_path,
                                sampler) as progress:
                while window.running():
                    now = time.monotonic()
                    if now >= deadline + 5:
                        break  # the recorder's own --duration should have ended it
                    pids = target.alive_pids()
                    if not pids:
                        ended = "target exited"
                        break
                    try:
                        if live_line:
                            progress.tick(pids)
                    except (OSError, ValueError, KeyError) as exc:
                        # the live line is a convenience: it never ends the trace
                        print(f"lockscope attach: live line off: {exc!r}", file=sys.stderr)
                        live_line = False
                    time.sleep(min(1.0, max(deadline - now, 0.05)))
        except KeyboardInterrupt:
            ended = "interrupted"
        except BaseException:
            window.abort()
            raise
        finally:
            if sampler is not None:
                sampler.stop()
        try:
            _close(window)
        except KeyboardInterrupt:
            ended = "interrupted"
            _close(window)
    finally:
        window.release()
        for p in (window.out, series_path, window.log_path):
            if p.exists():
                p.unlink()
    if window.trace is None:
        raise LockscopeError(window.error or "no trace")
    return window.trace, ended, [Path(window.argv[0]).name] + window.argv[1:], window.error


def _close(window: RecorderWindow) -> None:
    """Close the window and wait until the recorder has detached."""
    detaching = window.close()
    if detaching is not None:
        try:
            detaching.wait(60)
        except subprocess.TimeoutExpired:
            stop(detaching)
