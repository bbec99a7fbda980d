"""``lockscope attach --continuous``: the recorder runs until SIGTERM or SIGINT, its
per-interval series drained into the exporter's state (lockscope.export) as it comes.

One recorder at a time (recording.RecorderWindow, no --duration): its ``--series-out`` is
the write end of a pipe that a reader thread drains line by line into
``ExportState.add_interval``, so nothing grows on disk or in memory with the run's
length (each interval's ``state``, the maps in use, drops and duty, sets the exporter's
context there). The main thread watches the target once a second:

- ``--comm``: the recorder's filter is the name, so a restarted server is traced again
  by the same recorder; ``target_up`` follows whether a process has the name;
- ``--cgroup``/``--unit``: the filter is the cgroup's id; a cgroup made again (a unit's
  restart) has a new one, so the recorder is started again on it;
- ``--pid``: once every process exited, the recorder is stopped, ``target_up`` is 0 and
  the exporter keeps serving until told to stop.

A recorder that ends on its own (over --max-overhead with only its core probes left, or
a failure) is started again after RESTART_BACKOFF_S. Every --rotate seconds the recorder
is replaced by a new one: its maps keep an entry per lock, file, thread and stack seen,
so a server that keeps making threads (a connection each) would fill them in the end;
a new recorder starts them empty (the exporter's figures go on, cumulative).

Stopping: the recorder closes its window and detaches while the exporter still
answers (a scrape then reads the last snapshot), the final results.json is written
when --out was given, then the exporter stops. A recorder whose parent dies reads EOF
on stdin and detaches (SIGKILL leaves nothing attached).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import LockscopeError
from ..export.export_state import RESTARTS_KEY
from .held_signals import interrupts_held
from .recording import RecorderWindow, stop
from .target import Target

RESTART_BACKOFF_S = 10.0
WATCH_PERIOD_S = 1.0


class SeriesDrain:
    """A pipe the recorder writes its series into, and the thread that empties it."""

    def __init__(self, feed: Callable[[dict[str, Any]], None]) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_inheritable(self.write_fd, True)
        self.feed = feed
        self.intervals = 0
        self.bad_lines = 0
        self.feed_errors = 0
        self.thread = threading.Thread(target=self._run, name="lockscope-series", daemon=True)
        self.thread.start()

    @property
    def path(self) -> str:
        return f"/dev/fd/{self.write_fd}"

    def handed_over(self) -> None:
        """The recorder has its own copy of the write end: ours closes, so EOF comes
        when the recorder is gone."""
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    def _run(self) -> None:
        with os.fdopen(self.read_fd, "rb") as f:
            for line in f:
                try:
                    iv = json.loads(line)
                except ValueError:
                    self.bad_lines += 1
                    continue
                if not isinstance(iv, dict):
                    continue
                self.intervals += 1
                try:
                    self.feed(iv)
                except Exception as exc:  # the pipe must keep draining, or the recorder blocks
                    self.feed_errors += 1
                    if self.feed_errors == 1:
                        say(f"an interval could not be exported ({type(exc).__name__}: "
                            f"{exc}); later ones still are")

    def join(self, timeout: float) -> None:
        self.handed_over()
        self.thread.join(timeout)


class ContinuousRecorder:
    """The recorder windows of a continuous attach and the drain of their series."""

    def __init__(self, target: Target, scratch: Path, recorder_args: list[str],
                 feed: Callable[[dict[str, Any]], None], note: Callable[[str], None]) -> None:
        self.target = target
        self.scratch = scratch
        self.recorder_args = recorder_args
        self.feed = feed
        self.note = note
        self.window: RecorderWindow | None = None
        self.drain: SeriesDrain | None = None
        self.trace: dict | None = None       # the last window's document
        self.argv: list[str] = []
        self.starts = 0
        self.rotations = 0
        # restarts by reason, exported with each interval (lockscope_recorder_restarts)
        self.restarts = {"ended": 0, "rotated": 0, "target_restarted": 0}
        self.started_at = 0.0
        self.cgroup_id = _cgroup_id(target)

    def start(self) -> None:
        """A recorder on the target, counting; LockscopeError when it cannot attach."""
        drain = SeriesDrain(self._feed)
        args = [*self.recorder_args, "--series-out", drain.path]
        with interrupts_held():
            window = RecorderWindow(self.target.recorder_filter(), self.scratch, args,
                                    prefix=".", pass_fds=(drain.write_fd,))
            self.window, self.drain = window, drain
        drain.handed_over()
        window.wait_ready()
        if not window.error:
            window.open()
        if window.error:
            self.close()
            raise LockscopeError(window.error)
        self.argv = [Path(window.argv[0]).name] + window.argv[1:]
        self.cgroup_id = _cgroup_id(self.target)
        self.starts += 1
        self.started_at = time.monotonic()

    def _feed(self, iv: dict[str, Any]) -> None:
        state = iv.get("state")
        if not isinstance(state, dict):
            state = iv["state"] = {}
        state[RESTARTS_KEY] = dict(self.restarts)
        self.feed(iv)

    def running(self) -> bool:
        return self.window is not None and self.window.running()

    def close(self) -> str:
        """Close the window, wait for the detach, keep its document, drain the rest;
        returns how the recorder ended (its document's word on the overhead, or its
        error)."""
        window, drain = self.window, self.drain
        self.window = self.drain = None
        if window is None:
            return "not running"
        detaching = window.close() if window.proc and window.proc.poll() is None else None
        if detaching is not None:
            try:
                detaching.wait(60)
            except subprocess.TimeoutExpired:
                stop(detaching)
        elif window.proc is not None:
            stop(window.proc)
            if window.trace is None and window.out.is_file():
                try:
                    window.trace = json.loads(window.out.read_text())
                except ValueError:
                    pass
        window.release()
        if drain is not None:
            drain.join(30)
        if window.trace is not None:
            self.trace = window.trace
        for p in (window.out, window.log_path):
            if p.exists():
                p.unlink()
        if window.trace is None:
            return window.error or f"exit status {window.exit_status}"
        return f"exit status {window.exit_status}"

    def cgroup_changed(self) -> bool:
        """The target's cgroup was made again (a unit's restart): a new id."""
        if self.target.how not in ("cgroup", "unit"):
            return False
        now = _cgroup_id(self.target)
        return now is not None and now != self.cgroup_id


def _cgroup_id(target: Target) -> int | None:
    """A cgroup v2 directory's inode number is its kernfs id, the one the recorder filters
    on (kernel/cgroup/cgroup.c, cgroup_id(); fs/kernfs/inode.c sets i_ino from it)."""
    if target.how not in ("cgroup", "unit") or not target.cgroup:
        return None
    try:
        return os.stat(target.cgroup).st_ino
    except OSError:
        return None


class StopFlag:
    """SIGTERM and SIGINT set it (the main thread polls it), instead of raising inside
    whatever runs."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signal: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopFlag:
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._previous[sig] = signal.signal(sig, self._set)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, prev in self._previous.items():
            signal.signal(sig, prev)

    def _set(self, signum: int, frame: object) -> None:
        self.signal = signum
        self.event.set()

    def wait(self, seconds: float) -> bool:
        return self.event.wait(seconds)


SCRATCH_PREFIX = "lockscope-continuous-"
# what a scratch directory holds (the recorder's log and trace): one holding anything
# else is not taken for ours
SCRATCH_FILES = {".record.log", ".trace.json"}


def scratch_dir(out: Path | None, tmp: Path | None = None) -> tuple[Path, bool]:
    """Where the recorder's document and log go while it runs: --out, else a private
    temporary directory named with this process's pid (removed at the end: the second
    value). The scratch directories of attaches that were killed are removed first."""
    if out is not None:
        return out, False
    tmp = tmp or Path(tempfile.gettempdir())
    remove_stale_scratch(tmp)
    return Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=tmp)), True


def remove_stale_scratch(tmp: Path) -> list[Path]:
    """Removes the scratch directories a killed attach left (SIGKILL runs no clean-up):
    named ours with a pid no process has now, and holding only the recorder's files.
    Returns them."""
    gone = []
    for d in tmp.glob(f"{SCRATCH_PREFIX}*-*"):
        pid = d.name[len(SCRATCH_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or Path(f"/proc/{pid}").exists() or d.is_symlink():
            continue
        try:
            if not d.is_dir() or d.stat().st_uid != os.geteuid() or \
                    not {f.name for f in d.iterdir()} <= SCRATCH_FILES:
                continue
            shutil.rmtree(d)
        except OSError:
            continue
        gone.append(d)
    return gone


def remove_scratch(path: Path, made: bool) -> None:
    if made:
        shutil.rmtree(path, ignore_errors=True)


def say(text: str) -> None:
    print(f"lockscope attach: {text}", file=sys.stderr, flush=True)


def watch(rec: ContinuousRecorder, target: Target, flag: StopFlag,
          set_up: Callable[[bool], None], tick: Callable[[], None],
          rotate_s: float = 0.0) -> str:
    """The main loop until told to stop; returns how the recording ended."""
    retry_at: float | None = None
    pid_gone = False
    while not flag.wait(WATCH_PERIOD_S):
        tick()
        up = bool(target.alive_pids())
        set_up(up)
        if pid_gone:
            continue    # --pid: a process id does not come back
        if target.how == "pid" and not up:
            pid_gone = True
            say("the target exited: target_up 0; the recorder detaches, the exporter "
                "keeps serving until SIGTERM or SIGINT")
            rec.close()
            continue
        if rotate_s and rec.running() and time.monotonic() - rec.started_at >= rotate_s:
            rec.close()     # its maps go with it
            rec.rotations += 1
            rec.restarts["rotated"] += 1
            retry_at = time.monotonic()
        elif rec.cgroup_changed():
            say("the target's cgroup was made again (a restart): recording it anew")
            rec.close()
            rec.restarts["target_restarted"] += 1
            retry_at = time.monotonic()
        elif not rec.running() and rec.window is not None:
            why = rec.close()
            rec.restarts["ended"] += 1
            say(f"the recorder ended ({why}); starting it again in {RESTART_BACKOFF_S:g} s")
            retry_at = time.monotonic() + RESTART_BACKOFF_S
        if retry_at is not None and time.monotonic() >= retry_at and \
                (up or target.how == "comm"):
            try:
                rec.start()
                retry_at = None
            except LockscopeError as exc:
                say(f"the recorder did not start again ({exc}); retrying in "
                    f"{RESTART_BACKOFF_S:g} s")
                retry_at = time.monotonic() + RESTART_BACKOFF_S
    return "target exited" if pid_gone else "stopped"
