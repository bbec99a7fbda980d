"""One sweep point of an external command: prepare → attach → timed run → collect.

The command's processes are started first, held by a gate (a shell waiting for a line
on stdin) after they joined the point's cgroup; the recorder attaches to the cgroup (or
to their pids, or to ``--trace-comm``), opens its window, and only then are the gates
opened: the trace covers the command's whole run and nothing before it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...analysis.syscall_kinds import calls_of_kind
from ..held_signals import interrupts_held
from ..point import PhaseClock, PointResult, file_facts
from ..point_errors import PointFailed, status_text
from ..recording import RecorderWindow, last_line, open_window
from .gate import RanTooLong, end_group, run_gated, spawn_gated, tool_env
from .parsers import PARSERS, Throughput, ToolOutputError, fio_job
from .scope import Scope
from .template import Split, render
from .workers import worker_threads


@dataclass(frozen=True)
class CommandSpec:
    """What ``sweep --command`` runs at each point."""

    command: str
    prepare: str | None = None
    throughput: str | None = None        # a PARSERS name, or None: from the trace
    per_thread: bool = False
    trace_comm: str | None = None
    split: Split = field(default_factory=lambda: Split(1 << 30, 64 << 10))
    # the recorder's filter for processes the command talks to but did not start (a
    # database preset's server: --cgroup PATH, --pid N or --comm NAME)
    trace_target: tuple[str, ...] = ()

    def lines(self, threads: int, runtime_s: float, workdir: Path) -> list[str]:
        if not self.per_thread:
            return [render(self.command, threads, runtime_s, workdir)]
        return [render(self.command, threads, runtime_s, workdir, self.split.part(i, threads))
                for i in range(threads)]


def run_command_point(spec: CommandSpec, threads: int, runtime_s: float, workdir: Path,
                      scratch: Path, trace: bool = True,
                      recorder_args: list[str] | None = None,
                      before_timed: Callable[[], None] | None = None,
                      on_phase: Callable[[str], None] = lambda what: None,
                      limit_s: float | None = None) -> PointResult:
    """Run one point with the command's files in ``workdir`` and outputs in ``scratch``;
    ``on_phase`` hears what the point is doing (for a progress line). A command still
    running after ``limit_s`` seconds is killed and the point fails."""
    scratch.mkdir(parents=True, exist_ok=True)
    phase = PhaseClock()

    if spec.prepare:
        on_phase("preparing")
        _prepare(render(spec.prepare, threads, runtime_s, workdir), workdir, scratch)
    phase("layout")
    lines = spec.lines(threads, runtime_s, workdir)
    scope = Scope.make()
    procs: list[subprocess.Popen] = []
    recorder: RecorderWindow | None = None
    try:
        for i, line in enumerate(lines):
            with interrupts_held():
                procs.append(spawn_gated(line, workdir, scope.procs, scratch, i,
                                         tool_env(spec.throughput is not None)))
        if trace:
            on_phase("attaching")
            target = (list(spec.trace_target) if spec.trace_target
                      else ["--comm", spec.trace_comm] if spec.trace_comm
                      else scope.recorder_filter([p.pid for p in procs]))
            with interrupts_held():
                recorder = RecorderWindow(target, scratch, recorder_args)
        open_window(recorder, phase, before_timed)
        on_phase("running")
        try:
            walls = run_gated(procs, limit_s)
        except RanTooLong:
            raise PointFailed(f"command still running after --time-limit {limit_s:g} s: "
                              "killed") from None
        phase("timed")
        detaching = recorder.close() if recorder else None
        trace_doc = recorder.trace if recorder else None
        _check_exits(procs, scratch)
        if not spec.throughput and trace_doc is None:
            raise PointFailed("no throughput: the command's operations are counted by the "
                              f"trace, and there is none ({recorder.error if recorder else ''})")
        workload = _workload(spec, lines, procs, walls, scratch, trace_doc)
        phase("collect")
        return PointResult(workload, trace_doc, recorder.error if recorder else None,
                           file_facts(workdir), [], phase.phases, detaching)
    except BaseException:
        for p in procs:
            end_group(p)
        if recorder:
            recorder.abort()
        raise
    finally:
        scope.remove()
        if recorder:
            recorder.release()
        for p in procs:
            if p.stdin:
                try:
                    p.stdin.close()
                except (OSError, ValueError):
                    pass


def _prepare(line: str, workdir: Path, scratch: Path) -> None:
    """Run --prepare (untraced) in the point's directory; a failure ends the point."""
    with open(scratch / "prepare.out", "w") as out, open(scratch / "prepare.err", "w+") as err:
        proc = subprocess.Popen(["/bin/sh", "-c", line], cwd=workdir,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                start_new_session=True)
        try:
            while proc.poll() is None:
                try:
                    proc.wait(0.5)  # short waits: Ctrl-C is delivered between them
                except subprocess.TimeoutExpired:
                    pass
        except BaseException:
            end_group(proc)
            raise
        if proc.returncode != 0:
            last = last_line(err)
            raise PointFailed(f"--prepare exited {proc.returncode}"
                              + (f": {last}" if last else ""), proc.returncode, last)


def _check_exits(procs: list[subprocess.Popen], scratch: Path) -> None:
    for i, p in enumerate(procs):
        if p.returncode == 0:
            continue
        with open(scratch / f"command-{i}.err") as err:
            last = last_line(err)
        who = f"command (writer {i})" if len(procs) > 1 else "command"
        status = status_text(p.returncode)
        raise PointFailed(f"{who} {status}" + (f": {last}" if last else ""), p.returncode,
                          last)


def _workload(spec: CommandSpec, lines: list[str], procs: list[subprocess.Popen],
              walls: list[float], scratch: Path, trace: dict | None) -> dict:
    """The point's figures in fio's JSON shape (``jobs``), which the analysis reads."""
    wall = max(walls) if walls else 0.0
    if spec.throughput:
        parser, stream = PARSERS[spec.throughput]
        ext = "out" if stream == "stdout" else "err"
        jobs: list[dict] = []
        for i in range(len(procs)):
            text = (scratch / f"command-{i}.{ext}").read_text(errors="replace")
            try:
                tp: Throughput = parser(text)
            except ToolOutputError as exc:
                raise PointFailed(f"writer {i}: {exc}" if spec.per_thread else str(exc)) \
                    from None
            jobs += tp.fio_jobs(f"writer {i}" if spec.per_thread else spec.throughput)
        source = spec.throughput
    else:
        jobs = [fio_job("trace", _write_calls(trace) / wall if wall > 0 else 0.0, 0.0,
                        runtime_s=wall)]
        source = "trace"
    lockscope: dict = {"timed_phase": {"duration_ns": int(wall * 1e9)}}
    workers = worker_threads(trace)
    if workers:
        lockscope["threads"] = workers  # the analysis counts only their time, as the engine's
    return {"jobs": jobs, "throughput_source": source, "lockscope": lockscope,
            "command": {"lines": lines, "pids": [p.pid for p in procs],
                        "exit_status": [p.returncode for p in procs],
                        "wall_s": [round(w, 3) for w in walls],
                        "per_thread": spec.per_thread}}


def _write_calls(trace: dict | None) -> int:
    """The write calls the trace counted (the recorder's own list): the operations when
    no parser reads the tool's own report."""
    return calls_of_kind((trace or {}).get("syscalls") or [], "write")
