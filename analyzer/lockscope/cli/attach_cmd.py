"""``lockscope attach``: trace a live server for a bounded time and explain its waits.

Order: check the target (one line, exit 2 when bad) → log in to the database
if asked (a failure is a warning) → start the recorder on the target and wait
for ``ready`` → count, sampling the database each second, with a live line →
stop at --duration, Ctrl-C/SIGTERM, or when the target exits → analyze, write
results.json, report.html and flame/.

Safety: the recorder gets --duration as a hard stop of its own and dies with
this process (PR_SET_PDEATHSIG), its BPF links die with it (nothing pinned),
its maps are bounded, and nothing is written outside --out.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import cast

from ..binaries import find_binary
from ..errors import LockscopeError, UsageError
from ..run.host import filesystem_facts, mount_of
from ..run.recording import RecorderWindow, stop
from ..run.session import Session
from ..run.target import Target, resolve

DEFAULT_DURATION_S = 30.0
MAX_DURATION_S = 3600.0
DEFAULT_MAX_OVERHEAD = 2.0


def add_parser(sub) -> None:
    p = sub.add_parser(
        "attach", help="trace a live server (database) and explain its waits over time",
        description="Attach the eBPF recorder to running processes for a bounded time, "
        "split their threads' off-CPU time into wait classes (waiting for work apart from "
        "loss), name their files as the database knows them, line throughput up with the "
        "waits per second, and write results.json, report.html and flame graphs.")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--pid", metavar="PID[,PID]", help="these processes (all their threads)")
    who.add_argument("--comm", metavar="NAME", help="threads with this command name")
    who.add_argument("--cgroup", metavar="PATH", help="a cgroup v2 directory and below")
    who.add_argument("--unit", metavar="NAME", help="a systemd unit's cgroup "
                     "(/sys/fs/cgroup/system.slice/NAME)")
    p.add_argument("--duration", type=float, default=DEFAULT_DURATION_S, metavar="S",
                   help=f"seconds to trace (default {DEFAULT_DURATION_S:.0f}, at most "
                   f"{MAX_DURATION_S:.0f})")
    p.add_argument("--interval", type=float, default=1.0, metavar="S",
                   help="seconds per interval of the time series (default 1)")
    p.add_argument("--max-overhead", type=float, default=DEFAULT_MAX_OVERHEAD, metavar="PCT",
                   help="CPU the recorder may use, in %% of the machine; probe groups are shed "
                   f"above it (default {DEFAULT_MAX_OVERHEAD:g})")
    p.add_argument("--fs", metavar="LIST", help="the recorder's --fs: filesystem types "
                   "whose xfs/ext4 probe groups are attached (e.g. xfs or ext4,xfs), or all "
                   "(default: the recorder's own, auto with --pid: the types of the files "
                   "the processes have open when tracing starts)")
    p.add_argument("--duty", type=int, metavar="PCT",
                   help="time-sampled recording: probes attached PCT%% of each second, "
                   "rates per observed second (lockscope-record --duty; default: always)")
    p.add_argument("--mysql", metavar="SOCKET|DSN", help="read-only login to MariaDB/MySQL "
                   "for its counters (socket path or mysql://user:pass@host:port/)")
    p.add_argument("--postgres", metavar="DSN", help="read-only login to PostgreSQL for "
                   "pg_stat_database/pg_stat_activity and table names (libpq DSN)")
    p.add_argument("--out", metavar="DIR", help="output directory (default: "
                   "./lockscope-attach-YYYYmmdd-HHMMSS)")
    p.add_argument("--no-report", action="store_true", help="skip the HTML report")
    p.set_defaults(func=run)


def _check_args(args) -> None:
    if not 0 < args.duration <= MAX_DURATION_S:
        raise UsageError(f"--duration must be in (0, {MAX_DURATION_S:.0f}] seconds")
    if not 0.1 <= args.interval <= max(args.duration, 0.1):
        raise UsageError("--interval must be at least 0.1 s and at most --duration")
    if not 0 < args.max_overhead <= 100:
        raise UsageError("--max-overhead must be a percentage in (0, 100]")
    if args.duty is not None and not 1 <= args.duty <= 100:
        raise UsageError("--duty must be a percentage in [1, 100]")
    if args.mysql and args.postgres:
        raise UsageError("give --mysql or --postgres, not both")
    if args.fs is not None:
        _check_fs(args.fs)


def _check_fs(value: str) -> None:
    """--fs before anything is made (the recorder checks it again, and has the last word):
    all, auto, or filesystem types the recorder has groups for or the kernel knows."""
    if value in ("all", "auto"):
        return
    types = value.split(",")
    if any(t in ("", "all", "auto") for t in types):
        raise UsageError(f"--fs: a comma list of filesystem types, or all, or auto: '{value}'")
    try:
        with open("/proc/filesystems") as f:
            known = {line.split()[-1] for line in f if line.strip()}
    except OSError:
        return
    for t in types:
        if t not in known | {"xfs", "ext4", "ext3", "ext2"}:
            raise UsageError(f"--fs: unknown filesystem type '{t}' (see /proc/filesystems)")



def _open_db(args):
    """The database sampler, or (None, warning)."""
    if not (args.mysql or args.postgres):
        return None, None
    from ..run.dbstats import DbUnavailable, MysqlSampler, PostgresSampler

    sampler = MysqlSampler(args.mysql) if args.mysql else PostgresSampler(args.postgres)
    try:
        sampler.open()
    except DbUnavailable as exc:
        return None, str(exc)
    return sampler, None


def run(args) -> int:
    _check_args(args)
    target = resolve(pid=args.pid, comm=args.comm, cgroup=args.cgroup, unit=args.unit)
    if os.geteuid() != 0:
        raise LockscopeError("not root: attaching loads BPF programs "
                             "(lockscope doctor has the detail)")
    find_binary("lockscope-record")
    session = Session("attach", args.out, "lockscope-attach", kind="attach")
    sampler, db_warning = _open_db(args)
    if db_warning:
        session.note(f"warning: {db_warning}; tracing without database counters")
    doc = cast(dict, session.doc)
    doc.update({"target": target.facts(),
                "attach": {"duration_s": args.duration, "interval_s": args.interval,
                           "max_overhead_pct": args.max_overhead, "duty_pct": args.duty},
                "db": None, "analysis": {}})
    with session.interruptible():
        trace, ended, rec_argv, trace_error = _record(args, target, session.out, sampler)
    if ended == "duration" and ((trace or {}).get("overhead") or {}).get("detached"):
        ended = "overhead limit"  # the recorder shed all it could and was still over
    doc["attach"].update({"ended": ended, "recorder_argv": rec_argv})
    if sampler is not None:
        doc["db"] = sampler.result()
    elif db_warning:
        doc["db"] = {"engine": "mariadb" if args.mysql else "postgres", "samples": [],
                     "counters": [], "errors": [db_warning], "warning": db_warning}
    doc["target"]["exited"] = ended == "target exited"
    doc["window"] = {"label": target.label(),
                     "threads": len((trace or {}).get("threads") or []),
                     "trace": trace, "trace_error": trace_error, "files": _file_facts(trace)}
    doc["host"]["filesystems"] = _filesystems(trace)
    return _finish(session, args, ended)


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
    recorder_args += ["--interval-ms", str(max(100, int(args.interval * 1000))),
                      "--series-out", str(series_path)]
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


def _paths(trace: dict | None) -> set[str]:
    paths = set()
    for e in (trace or {}).get("dio") or []:
        if e.get("path"):
            paths.add(e["path"])
    for lk in (trace or {}).get("locks") or []:
        if lk.get("path"):
            paths.add(lk["path"])
    return paths


def _file_facts(trace: dict | None) -> list[dict]:
    """Filesystem, mode bits and security xattrs of the traced files (read-only: stat,
    listxattr); they decide which locking rule applies."""
    facts = []
    for path in sorted(_paths(trace)):
        try:
            st = os.stat(path)
            xattrs = [x for x in os.listxattr(path) if x.startswith("security.")]
        except OSError:
            continue
        facts.append({"path": path, "fstype": mount_of(path).get("fstype"),
                      "size_bytes": st.st_size, "setuid": bool(st.st_mode & 0o4000),
                      "setgid": bool(st.st_mode & 0o2000), "security_xattrs": xattrs})
    return facts


def _filesystems(trace: dict | None) -> dict:
    out = {}
    for path in sorted(_paths(trace)):
        m = mount_of(path)
        if m and m["mountpoint"] not in out:
            try:
                out[m["mountpoint"]] = filesystem_facts(path)
            except OSError:
                continue
    return out


def _finish(session: Session, args, ended: str) -> int:
    from ..analysis.attach import analyze_attach
    from ..report.attach_summary import print_attach_summary

    session.finish(lambda doc: {"attach": analyze_attach(doc)}, print_attach_summary,
                   render=not args.no_report, partial=ended == "interrupted")
    if ended == "interrupted":
        session.note(f"interrupted; the window so far is in {session.results} (marked partial)")
        return 130
    if ended == "target exited":
        session.note("the target exited; results cover the window until then")
    if ended == "overhead limit":
        session.note(f"the recorder stayed above --max-overhead {args.max_overhead:g}% with "
                     "only its core probes and detached; results cover the window until then")
    return 0
