"""``lockscope sweep --verify``: after the verdict, the sweep again with each remedy that
can be applied to the same workload mechanically, and the outcome of each.

Per filesystem whose verdict blames a lock: the built-in engine's and a job file's
remedies are the rules' fixes (analysis/remedies.py) applied to the job's options and
written as a job file; a ``--command`` workload reruns with ``--remedy-command``; a
database preset has no rule that proposes a setting changing its write pattern, which
the section says. Each rerun is a sweep of its own (``lockscope sweep --job ... --out
OUT/verify/<fs>-<fix>``, recorded with its command line, analyzed with its own
verdict) at the lowest and highest thread counts the verdict compared; its outcome
(analysis/remedy_outcome.py) and a differential flame graph go into results.json
``verify``.
"""

from __future__ import annotations

import datetime
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..analysis.remedies import FIXES, verdict_fixes
from ..analysis.remedy_outcome import THRESHOLDS, blamed_lock, curve, lower_confidence, outcome
from ..errors import LockscopeError
from ..results import load_results
from ..schema import ResultsDoc

VERIFY_DIR = "verify"
NOT_MECHANICAL = "not mechanically applicable"
PRESET_WHY = ("a database preset: no rule proposes a setting that changes its write pattern "
              "(innodb_flush_method, wal_sync_method), and settings that give up durability "
              "(innodb_flush_log_at_trx_commit, synchronous_commit) are not applied to verify "
              "a diagnosis")
NO_LOCK = "not run: the verdict blames no lock, so there is no wait to verify"
COMMAND_WHY = "a --command workload: --remedy-command gives the remedied command"


@dataclass
class Rerun:
    """One remedied sweep to run."""

    fs: str
    fix: str
    remedy: str
    title: str
    out: Path
    argv: list[str]
    threads: list[int]
    changes: dict[str, list[Any]] = field(default_factory=dict)


def _changes(before: dict, after: dict) -> dict[str, list[Any]]:
    """option -> [before, after] (None: absent)."""
    return {k: [before.get(k), after.get(k)] for k in sorted(set(before) | set(after))
            if before.get(k) != after.get(k)}


def _job_file(path: Path, name: str, job: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("; written by lockscope sweep --verify\n[global]\n"
                    + "".join(f"{k}={v}\n" for k, v in job.items()) + f"\n[{name}]\n")
    return path


def _common_argv(args, fs_arg: list[str], threads: list[int], out: Path) -> list[str]:
    argv = fs_arg + ["--threads", ",".join(map(str, threads)), "--runtime", f"{args.runtime:g}",
                     "--repeat", str(args.repeat), "--out", str(out), "--no-report",
                     "--max-overhead", f"{args.max_overhead:g}"]
    if args.time_limit is not None:
        argv += ["--time-limit", f"{args.time_limit:g}"]
    if args.image_dir:
        argv += ["--image-dir", args.image_dir]
    if not args.target:
        argv += ["--image-size", args.image_size]
    return argv


def _fs_arg(args, label: str, fstype: str) -> list[str]:
    if not args.target:
        return ["--fs", label]
    from .host import mount_of

    same = [t for t in args.target if mount_of(t).get("fstype") == fstype]
    return ["--target", same[0]] if same else ["--fs", fstype]


def _command_argv(args) -> list[str]:
    argv = ["--command", args.remedy_command]
    for opt in ("prepare", "throughput", "span", "block_size", "trace_comm"):
        if getattr(args, opt, None):
            argv += [f"--{opt.replace('_', '-')}", str(getattr(args, opt))]
    return argv + (["--per-thread"] if args.per_thread else [])


def plan(doc: ResultsDoc, args, out: Path) -> tuple[dict[str, Any], list[Rerun]]:
    """results.json ``verify`` before the reruns, and the reruns to make."""
    analysis: Any = doc.get("analysis") or {}
    fsinfo = (doc.get("host") or {}).get("filesystems") or {}
    job = dict((doc.get("workload") or {}).get("job") or {})
    section: dict[str, Any] = {"thresholds": THRESHOLDS, "filesystems": {}}
    reruns: list[Rerun] = []
    for label, value in analysis.items():
        if label == "comparison" or not isinstance(value, dict):
            continue
        fa: Any = value
        fstype = (fsinfo.get(label) or {}).get("fstype") or label
        verdict, lock = fa["verdict"], blamed_lock(fa)
        points = fa.get("points") or []
        threads = sorted({points[0]["threads"], points[-1]["threads"]}) if points else []
        entry: dict[str, Any] = {"verdict": verdict["kind"], "confidence":
                                 verdict["confidence"], "lock": lock, "threads": threads,
                                 "remedies": []}
        section["filesystems"][label] = entry
        pairs = verdict_fixes(fstype, verdict, fa.get("causes") or [])
        if getattr(args, "preset", None):
            entry["remedies"] = [_skipped(r, "", PRESET_WHY) for r, _ in pairs]
            continue
        if lock is None:
            entry["note"] = NO_LOCK.removeprefix("not run: ")
            entry["remedies"] = [{"remedy": r, "fix": fix or None, "outcome": "not_applicable",
                                  "line": NO_LOCK} for r, fix in pairs]
            continue
        if args.command_template:
            entry["remedies"] = [_skipped(r, "", COMMAND_WHY) for r, _ in pairs]
            if args.remedy_command:
                out_dir = out / VERIFY_DIR / f"{label}-remedy-command"
                reruns.append(Rerun(label, "remedy_command", args.remedy_command,
                                    "--remedy-command", out_dir, _common_argv(
                                        args, _fs_arg(args, label, fstype), threads, out_dir)
                                    + _command_argv(args), threads))
            continue
        by_fix: dict[str, list[str]] = {}
        for remedy, fix in pairs:
            if fix:
                by_fix.setdefault(fix, []).append(remedy)
            else:
                entry["remedies"].append(_skipped(remedy, "", NOT_MECHANICAL))
        for fix, remedies in by_fix.items():
            remedied = FIXES[fix].apply(job, max(threads))
            if isinstance(remedied, str):
                entry["remedies"].append(_skipped("; ".join(remedies), fix, remedied, False))
                continue
            out_dir = out / VERIFY_DIR / f"{label}-{fix.replace('_', '-')}"
            if out_dir.exists():    # not made by this sweep: never written into
                entry["remedies"].append({"remedy": "; ".join(remedies), "fix": fix,
                                          "outcome": "failed",
                                          "line": f"not run: {out_dir} exists"})
                continue
            name = f"{(doc.get('workload') or {}).get('scenario') or 'job'}-{fix}"
            path = _job_file(out_dir / f"{name}.fio", name, remedied)
            reruns.append(Rerun(label, fix, "; ".join(remedies), FIXES[fix].title, out_dir,
                                _common_argv(args, _fs_arg(args, label, fstype), threads,
                                             out_dir) + ["--job", str(path)], threads,
                                _changes(job, remedied)))
    return section, reruns


def _skipped(remedy: str, fix: str, why: str, needed: bool = True) -> dict[str, Any]:
    """A remedy not rerun: not mechanically applicable (``why``), or a fix the workload
    does not need (``needed`` False: it already does what the fix would do)."""
    if not needed:
        return {"remedy": remedy, "fix": fix, "outcome": "not_needed",
                "line": f"not applied: {why}"}
    return {"remedy": remedy, "fix": fix or None, "outcome": "not_applicable",
            "line": NOT_MECHANICAL if why == NOT_MECHANICAL else f"{NOT_MECHANICAL}: {why}"}


def estimate_s(doc: ResultsDoc, reruns: list[Rerun], repeat: int) -> tuple[float, str]:
    """How long the reruns take, from the measured durations of the sweep's points (and
    its setup: the wall time not spent in points, per filesystem)."""
    runs = doc.get("runs") or []
    took = {id(r): sum((r.get("phases_s") or {}).values()) for r in runs}

    def at(fs: str, n: int) -> float:
        same = [took[id(r)] for r in runs if r["threads"] == n and r["fs"] == fs] or \
            [took[id(r)] for r in runs if r["threads"] == n] or list(took.values()) or [0.0]
        return sum(same) / len(same)

    try:
        start = datetime.datetime.fromisoformat(str(doc.get("created_wall")))
        wall = (datetime.datetime.now(datetime.UTC) - start).total_seconds()
    except (TypeError, ValueError):
        wall = 0.0   # no start time: the points alone
    n_fs = len({r["fs"] for r in runs}) or 1
    setup = max(wall - sum(took.values()), 0.0) / n_fs
    total = sum(setup + repeat * sum(at(rr.fs, n) for n in rr.threads) for rr in reruns)
    how = (f"from the {len(runs)} points run ({min(took.values(), default=0):.1f}-"
           f"{max(took.values(), default=0):.1f} s each) and {setup:.1f} s of setup and "
           "analysis per filesystem")
    return total, how


@contextmanager
def _argv(argv: list[str]) -> Iterator[None]:
    # results.json records sys.argv as the command that made it: the rerun's own
    saved = sys.argv
    sys.argv = ["lockscope", "sweep", *argv]
    try:
        yield
    finally:
        sys.argv = saved


def verify(doc: ResultsDoc, args, out: Path, sweep: Callable[[list[str]], int],
           note: Callable[[str], None]) -> tuple[dict[str, Any], bool]:
    """Plan, announce, run the reruns and judge each; returns (``verify``, interrupted).
    ``sweep(argv)`` runs ``lockscope sweep argv`` and returns its exit status."""
    section, reruns = plan(doc, args, out)
    total, how = estimate_s(doc, reruns, args.repeat)
    section["estimate_s"] = round(total, 1)
    if reruns:
        note(f"--verify: {len(reruns)} remedied rerun(s) ("
             + ", ".join(f"{r.fs}: {r.title} at threads {','.join(map(str, r.threads))}"
                         for r in reruns) + f"): about {total:.0f} s, {how}")
    else:
        note("--verify: nothing to rerun: " + "; ".join(
            f"{fs}: {e.get('note') or 'no remedy can be applied mechanically'}"
            for fs, e in section["filesystems"].items()))
    begun, interrupted = time.monotonic(), False
    for i, rr in enumerate(reruns):
        entry = section["filesystems"][rr.fs]
        row: dict[str, Any] = {"remedy": rr.remedy, "fix": rr.fix, "title": rr.title,
                               "changes": rr.changes, "threads": rr.threads,
                               "out": str(rr.out.relative_to(out)),
                               "command": "lockscope sweep " + " ".join(rr.argv)}
        entry["remedies"].insert(i, row)
        if interrupted:
            row.update(outcome="not_run", line="not run: the verification was interrupted")
            continue
        note(f"--verify [{i + 1}/{len(reruns)}] {rr.fs}: {rr.title}")
        try:
            with _argv(rr.argv):
                status = sweep(rr.argv)
        except LockscopeError as exc:
            row.update(outcome="failed", line=f"the remedied sweep failed: {exc}")
            continue
        if status == 130:
            interrupted = True
            row.update(outcome="not_run", line="not run: the verification was interrupted")
            continue
        _judge(doc, row, rr, entry, out, getattr(args, "cpus", None)
               or (doc.get("host") or {}).get("cpus"))
    section["elapsed_s"] = round(time.monotonic() - begun, 1)
    section["partial"] = interrupted
    analysis: Any = doc.get("analysis") or {}
    lower_confidence(analysis, section)
    for label, entry in section["filesystems"].items():
        if isinstance(analysis.get(label), dict):
            entry["confidence_after"] = analysis[label]["verdict"]["confidence"]
    return section, interrupted


def _judge(doc: ResultsDoc, row: dict[str, Any], rr: Rerun, entry: dict[str, Any],
           out: Path, cpus: int | None) -> None:
    try:
        after_doc = load_results(rr.out / "results.json")
    except (LockscopeError, OSError, ValueError) as exc:
        row.update(outcome="failed", line=f"the remedied sweep left no results: {exc}")
        return
    after_an: Any = after_doc.get("analysis") or {}
    label = next((k for k in after_an if k != "comparison"), None)
    before: Any = (doc.get("analysis") or {})[rr.fs]
    if label is None:
        row.update(outcome="failed", line="the remedied sweep has no analysis")
        return
    after = after_an[label]
    lock = entry["lock"]
    row.update(outcome(before, after, lock, cpus))
    row["before"], row["after"] = curve(before, lock), curve(after, lock)
    row["after_verdict"] = {k: after["verdict"].get(k) for k in ("kind", "confidence",
                                                                 "summary", "lock")}
    top = max(rr.threads)
    from ..report.flame.remedy_diff import remedy_diff

    runs: Any = doc.get("runs") or []
    after_runs: Any = after_doc.get("runs") or []
    flame = remedy_diff([r for r in runs if r["fs"] == rr.fs and r["threads"] == top],
                        [r for r in after_runs if r["threads"] == top],
                        rr.out / "flame", f"{rr.fs} at {top} threads: off-CPU time, before "
                        f"-> after {rr.title}")
    row["flame_diff"] = {k: (str(Path(v).relative_to(out)) if k != "error" and v else v)
                         for k, v in flame.items()}


def run_verify(session: Any, args, sweep: Callable[[list[str]], int]) -> int:
    """After the sweep's own finish: the reruns, results.json ``verify`` (saved), the
    report with its verify section, and one line per remedy. Returns the exit status."""
    interrupted = False
    with session.interruptible():
        try:
            section, interrupted = verify(session.doc, args, session.out, sweep, session.note)
        except KeyboardInterrupt:
            section, interrupted = {"partial": True, "filesystems": {},
                                    "thresholds": THRESHOLDS}, True
    session.doc["verify"] = section
    session.checkpoint()
    report = session.report() if not args.no_report else None
    for label, entry in section["filesystems"].items():
        for row in entry["remedies"]:
            print(f"verify {label}: {row.get('title') or row['remedy']}: {row['line']}")
    if report:
        print(f"report: {report}")
    if interrupted:
        session.note(f"interrupted; the verification so far is in {session.results}")
        return 130
    return 0
