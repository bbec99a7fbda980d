"""``lockscope attach`` without --continuous: trace a live server for a bounded time and
explain its waits. Its options are checked before (attach_cmd).

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

import subprocess
import sys
import time
from pathlib import Path
from typing import cast

from ..binaries import find_binary
from ..capabilities import require_recording, what_is_lost
from ..errors import LockscopeError, UsageError
from ..run.held_signals import interrupts_held
from ..run.recording import RecorderWindow, stop
from ..run.session import Session
from ..run.target import Target, resolve
from .attach_parts import fill_window, finish, open_db
from .long_wait_option import long_wait_args


def run_bounded(args) -> int:
    """A bounded attach, its options checked (attach_cmd.run)."""
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
