"""One sweep point: lay out (recorder attaching meanwhile) → timed phase → stop → collect.

The engine lays the file out and parks its threads on a barrier (``ready``);
the recorder, started at the same time, attaches to the engine's pid and says
``ready``; then one line
to each starts the count and the timed phase, so the trace covers the timed
phase and not the layout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..binaries import find_binary
from ..errors import LockscopeError
from .fs_health import FsHealth
from .held_signals import interrupts_held
from .host import dev_name
from .point_errors import PointFailed, status_text
from .recording import RecorderWindow, open_window, read_ready, stop

READY_TIMEOUT_S = 600  # laying out a written file can take a while on a slow device



class PhaseClock:
    """Seconds spent in each phase of a point, in order: call it as each phase ends."""

    def __init__(self) -> None:
        self.phases: dict[str, float] = {}
        self._mark = time.monotonic()

    def __call__(self, label: str) -> None:
        now = time.monotonic()
        self.phases[label] = round(now - self._mark, 3)
        self._mark = now

@dataclass
class PointResult:
    workload: dict
    trace: dict | None
    trace_error: str | None
    files: list[dict] = field(default_factory=list)
    engine_argv: list[str] = field(default_factory=list)
    # Wall seconds per phase: layout, attach, timed, collect (what a sweep costs).
    phases_s: dict[str, float] = field(default_factory=dict)
    # The recorder, still detaching after it wrote its document: wait_detached() it
    # before anything else is measured.
    detaching: subprocess.Popen | None = None

    def wait_detached(self) -> None:
        if self.detaching is not None:
            try:
                self.detaching.wait(60)
            except subprocess.TimeoutExpired:
                stop(self.detaching)
            self.detaching = None


def engine_argv(job: dict, threads: int, runtime_s: float, workdir: Path, name: str,
                output: Path) -> list[str]:
    """lockscope-load's command line for a job (fio option syntax)."""
    opts = dict(job)
    opts.update({"name": name, "numjobs": str(threads), "runtime": str(runtime_s),
                 "time_based": "1", "group_reporting": "1", "output-format": "json",
                 "output": str(output)})
    if "nrfiles" in opts:
        opts["directory"] = str(workdir)
    else:
        opts["filename"] = str(workdir / f"{name}.dat")
    return [find_binary("lockscope-load")] + [f"--{k}={v}" for k, v in opts.items()]


def security_facts(path: str | os.PathLike, mode: int,
                   xattrs: list[str] | None = None) -> dict:
    """What decides IS_NOSEC, so whether a write must drop privileges under the inode
    lock: the setuid and setgid bits and the security.* xattrs (listed here unless
    given; OSError when they cannot be)."""
    if xattrs is None:
        xattrs = [x for x in os.listxattr(path) if x.startswith("security.")]
    return {"setuid": bool(mode & 0o4000), "setgid": bool(mode & 0o2000),
            "security_xattrs": xattrs}


def file_facts(workdir: Path) -> list[dict]:
    """Sizes and security facts of the data files."""
    facts = []
    for p in sorted(workdir.iterdir()):
        if not p.is_file():
            continue
        st = p.stat()
        try:
            security = security_facts(p, st.st_mode)
        except OSError:
            security = security_facts(p, st.st_mode, xattrs=[])
        facts.append({"path": str(p), "dev": dev_name(st.st_dev),
                      "ino": st.st_ino, "size_bytes": st.st_size,
                      "allocated_bytes": st.st_blocks * 512, **security})
    return facts


def run_point(job: dict, threads: int, runtime_s: float, workdir: Path, name: str,
              scratch: Path, trace: bool = True, recorder_args: list[str] | None = None,
              on_status: Callable[[dict], None] | None = None,
              before_timed: Callable[[], None] | None = None,
              health: FsHealth | None = None) -> PointResult:
    """Run one point with its data files in ``workdir`` (a directory the sweep made and
    owns on the filesystem under test) and its outputs in ``scratch`` (elsewhere, so that
    writing them does not touch the filesystem being measured). ``before_timed`` runs
    just before the timed phase starts (the sweep finishes its background work there).
    ``health``: the filesystem under test, watched while the engine lays out and checked
    after the timed phase; an error it reported fails the point (PointFailed)."""
    # The same data file name at every point: locks and files are keyed by path
    # when points are compared.
    scratch.mkdir(parents=True, exist_ok=True)
    out = scratch / "workload.json"
    argv = engine_argv(job, threads, runtime_s, workdir, name, out)
    engine = None
    recorder: RecorderWindow | None = None
    phase = PhaseClock()

    try:
        with interrupts_held():
            engine = subprocess.Popen(argv + ["--start_on_stdin=1", "--status-interval=1"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, bufsize=1)
        if trace:
            # The recorder loads and attaches while the engine lays its files out: it
            # counts nothing before the start line, so only the wait shrinks.
            with interrupts_held():
                recorder = RecorderWindow(["--pid", str(engine.pid)], scratch,
                                          recorder_args)
        try:
            read_ready(engine, "lockscope-load", READY_TIMEOUT_S,
                       check=health.check if health else None)
        except PointFailed:
            raise
        except LockscopeError as exc:
            raise PointFailed(str(exc), engine.returncode) from None
        phase("layout")
        open_window(recorder, phase, before_timed)
        assert engine.stdin is not None     # started with stdin=PIPE
        try:
            engine.stdin.write("go\n")
            engine.stdin.flush()
        except BrokenPipeError:
            engine.wait()  # it died after 'ready': its status says how
            raise PointFailed(f"lockscope-load {status_text(engine.returncode)} before its "
                              "timed phase", engine.returncode) from None
        engine_errors: list[str] = []
        status_thread = threading.Thread(target=_pump_status,
                                         args=(engine, on_status, engine_errors), daemon=True)
        status_thread.start()
        engine.wait()
        status_thread.join(2)
        phase("timed")
        detaching = recorder.close() if recorder else None
        if engine.returncode != 0:
            last = engine_errors[-1] if engine_errors else ""
            raise PointFailed(f"lockscope-load {status_text(engine.returncode)}: "
                              f"{last or ' '.join(argv[1:])}", engine.returncode, last)
        if health:
            health.check()  # a buffered write that failed after the engine's own call
        if recorder and recorder.exit_status is not None and recorder.exit_status < 0:
            # killed, not refused: this point would be the only one without a trace
            raise PointFailed(f"lockscope-record {status_text(recorder.exit_status)}: the "
                              "point has no trace", recorder.exit_status)
        workload = json.loads(out.read_text())
        phase("collect")
        return PointResult(workload, recorder.trace if recorder else None,
                           recorder.error if recorder else None, file_facts(workdir), argv,
                           phase.phases, detaching)
    except BaseException:
        stop(engine)
        if recorder:
            recorder.abort()
        raise
    finally:
        if recorder:
            recorder.release()
        for stream in (engine.stdin, engine.stdout, engine.stderr) if engine else ():
            try:
                if stream:
                    stream.close()
            except (OSError, ValueError):
                pass


def _pump_status(engine: subprocess.Popen, on_status, errors: list[str]) -> None:
    """Per-interval JSON status lines from the engine's stderr, for live IOPS;
    other lines are kept as the engine's error messages."""
    assert engine.stderr is not None     # started with stderr=PIPE
    for line in engine.stderr:
        if not line.startswith("{"):
            if line.strip():
                errors.append(line.strip())
            continue
        if not on_status:
            continue
        try:
            status = json.loads(line).get("status")
        except ValueError:
            continue
        if status:
            on_status(status)


def clean_workdir(workdir: Path) -> None:
    """Remove what a point made in its own directory (the sweep created the directory;
    an external command may have made subdirectories, links or sockets in it)."""
    for p in workdir.iterdir():
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
