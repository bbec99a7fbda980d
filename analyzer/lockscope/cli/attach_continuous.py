"""``lockscope attach --continuous``: the command around run.continuous.

Order: the arguments, the target, root and the recorder binary are checked, the
--listen address is bound and --out made and tried for writing, all before anything is
attached (a failure is one line and exit status 2, nothing attached). Then the exporter
serves, the database login is opened if asked, and the recorder runs until SIGTERM or
SIGINT; at the end the recorder detaches while the exporter still answers, the final
results.json is written when --out was given, and the exporter stops.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from ..binaries import find_binary
from ..capabilities import require_recording, what_is_lost
from ..errors import UsageError
from ..export.exporter_link import ExporterLink
from ..run.continuous import (
    ContinuousRecorder,
    StopFlag,
    remove_scratch,
    say,
    scratch_dir,
    watch,
)
from ..run.session import Session
from ..run.target import resolve
from .attach_parts import check_fs, fill_window, finish, open_db
from .long_wait_option import long_wait_args

DB_SAMPLES_KEPT = 600   # the database sampler's last samples (10 min at 1 s): bounded


def _session(args) -> Session | None:
    """The --out session, made and tried for writing now; an unwritable one is a
    UsageError."""
    if not args.out:
        return None
    try:
        session = Session("attach", args.out, "lockscope-attach", kind="attach")
        probe = session.out / ".lockscope-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"--out {args.out}: cannot write there: "
                         f"{exc.strerror or exc}") from None
    return session


# The duty's period: the probes are detached in the "off" part, as a flag every program
# tests would cost a run per event (on 4 KiB direct-I/O overwrites ~650k runs a second,
# more than half the budget: docs/fleet.md); at 5 s the detaches and attaches cost the
# recorder ~0.2% of 2 CPUs.
DUTY_PERIOD_MS = 5000


def _recorder_args(args) -> list[str]:
    out = ["--max-overhead", f"{args.max_overhead:g}", "--duty-period-ms", str(DUTY_PERIOD_MS),
           "--interval-ms", str(max(100, int(args.interval * 1000)))]
    if args.fs:
        out += ["--fs", args.fs]
    if args.duty is not None:
        out += ["--duty", str(args.duty)]
    return out + long_wait_args(args)


def run_continuous(args) -> int:
    if args.fs is not None:
        check_fs(args.fs)
    target = resolve(pid=args.pid, comm=args.comm, cgroup=args.cgroup, unit=args.unit)
    require_recording()
    for line in what_is_lost():
        say(f"warning: {line}")
    find_binary("lockscope-record")
    # UsageError (a bad address or web config): nothing bound, nothing attached
    server = ExporterLink(args.listen, top_files=args.top_files, web_config=args.web_config,
                          user=args.export_user, redact_outside=args.redact_paths_outside,
                          say=say)
    state = server
    try:
        session = _session(args)
    except BaseException:
        server.stop()
        raise
    scratch, made = scratch_dir(session.out if session else None)
    sampler, db_warning = open_db(args)
    if db_warning:
        say(f"warning: {db_warning}; recording without database counters")
    state.set_context(target=f"{target.how}={target.value}", target_up=True,
                      max_overhead_pct=args.max_overhead,
                      db_engine=("mariadb" if args.mysql else "postgres")
                      if sampler is not None else None)

    def feed(iv: dict[str, Any]) -> None:
        try:
            state.add_interval(iv)
        except ValueError:
            pass    # not an interval: skipped

    def tick() -> None:
        if sampler is None:
            return
        del sampler.samples[:-DB_SAMPLES_KEPT]
        key = "Com_commit" if args.mysql else "xact_commit"
        last = sampler.samples[-1] if sampler.samples else {}
        if key in last:
            state.set_context(db_commits=float(last[key]))
        if sampler.names:
            state.set_context(pg_names=dict(sampler.names))

    rec = ContinuousRecorder(target, scratch, _recorder_args(args), feed, say)
    ended = "stopped"
    server.start()
    try:
        with StopFlag() as flag:
            rec.start()
            if sampler is not None:
                sampler.start()
            say(f"recording {target.label()} ({target.how} {target.value}) until SIGTERM or "
                f"SIGINT; serving {server.url}/metrics, {server.url}/debug/pprof/mutex and "
                f"/block (budget {args.max_overhead:g}% of the CPUs)")
            ended = watch(rec, target, flag, lambda up: state.set_context(target_up=up), tick,
                          rotate_s=args.rotate)
            say("stopping: the recorder detaches (the exporter answers meanwhile)")
            rec.close()
    finally:
        rec.close()
        if sampler is not None:
            sampler.stop()
        try:
            if session is not None:
                _final(session, args, target, rec, sampler, db_warning, ended)
        finally:
            server.stop()
            remove_scratch(scratch, made)
    return 0


def _final(session: Session, args, target, rec: ContinuousRecorder, sampler, db_warning,
           ended: str) -> None:
    """The final results.json: the last recorder window's document, analyzed as an
    attach's."""
    trace = rec.trace
    if trace is None:
        say(f"no recording to write to {session.results}")
        return
    doc = cast(dict, session.doc)
    doc.update({"target": target.facts(),
                "attach": {"continuous": True, "listen": str(args.listen),
                           "top_files": args.top_files, "interval_s": args.interval,
                           "max_overhead_pct": args.max_overhead, "duty_pct": args.duty,
                           "ended": ended, "recorder_argv": rec.argv,
                           "recorder_starts": rec.starts, "rotate_s": args.rotate,
                           "privileges_lost": what_is_lost(),
                           "rotations": rec.rotations},
                "db": None, "analysis": {}})
    fill_window(doc, args, target.label(), trace, None, ended, sampler, db_warning)
    finish(session, args, "target exited" if ended == "target exited" else "duration")
    say(f"final results: {Path(session.results)}")
