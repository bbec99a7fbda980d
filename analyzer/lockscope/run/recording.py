"""The one driver of lockscope-record's window protocol, for every caller (a sweep
point of the engine or of an external command, an attach): attach (``ready``) →
``start`` → ``started`` → EOF (or its own ``--duration``) → ``done`` → detach.

Also the line-protocol helpers both sides of a point use (the engine speaks the same).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ..binaries import find_binary
from ..errors import LockscopeError
from .point_errors import status_text

# the seconds the recorder may take to load and attach its probes: seconds on a usual
# machine; an emulated or much slower one sets LOCKSCOPE_LOAD_TIMEOUT_S (docs/setup.md)
LOAD_TIMEOUT_S = 60.0
LOAD_TIMEOUT_VARIABLE = "LOCKSCOPE_LOAD_TIMEOUT_S"
PR_SET_PDEATHSIG = 1


def load_timeout_s() -> float:
    """LOAD_TIMEOUT_S, or LOCKSCOPE_LOAD_TIMEOUT_S where set; a value that is not a
    positive number of seconds is a one-line error."""
    raw = os.environ.get(LOAD_TIMEOUT_VARIABLE)
    if not raw:
        return LOAD_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise LockscopeError(f"{LOAD_TIMEOUT_VARIABLE}={raw!r}: expected a positive number "
                             "of seconds")
    return value


def last_line(stream) -> str:
    """Last non-empty line of a finished process's stderr (a pipe or a log file)."""
    if stream is None:
        return ""
    if stream.seekable():
        stream.seek(0)
    lines = stream.read().strip().splitlines()
    return lines[-1] if lines else ""


def read_line(proc: subprocess.Popen, timeout: float) -> str:
    """The next stdout line, stripped; "" at EOF or after the timeout."""
    result: list[str] = []

    def reader():
        result.append(proc.stdout.readline())

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    t.join(timeout)
    return result[0].strip() if result else ""


def read_until(proc: subprocess.Popen, word: str, timeout: float) -> bool:
    """Whether the process says `word` on a line of its own within the timeout."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        line = read_line(proc, left)
        if line == word:
            return True
        if not line and proc.poll() is not None:
            return False
    return False


CHECK_EVERY_S = 0.5


def read_ready(proc: subprocess.Popen, what: str, timeout: float, stderr=None,
               check: Callable[[], None] | None = None) -> None:
    """Wait for the ``ready`` line; a process that dies first is an error with its stderr.
    ``check`` runs every CHECK_EVERY_S while waiting and may raise to end the wait (a
    process stuck on a failing device neither says ``ready`` nor exits)."""
    result: list[str] = []

    def reader():
        result.append(proc.stdout.readline())

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    deadline = time.monotonic() + timeout
    while t.is_alive() and (left := deadline - time.monotonic()) > 0:
        t.join(min(left, CHECK_EVERY_S) if check else left)
        if check and t.is_alive():
            check()
    if result and result[0].strip() == "ready":
        return
    if result:  # EOF (or another line): it is ending; its status follows shortly
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
    if proc.poll() is None:
        raise LockscopeError(f"{what} did not become ready within {timeout:.0f} s")
    err = last_line(stderr if stderr is not None else proc.stderr)
    raise LockscopeError(f"{what} {status_text(proc.returncode)} before it was ready"
                         + (f": {err}" if err else ""))


def stop(proc: subprocess.Popen | None, grace: float = 10.0) -> None:
    """SIGINT, then SIGKILL after ``grace`` seconds."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class RecorderWindow:
    """One lockscope-record run whose counting window is the caller's timed phase.

    ``error`` says why there is no trace (a sweep point still runs without one, an
    attach stops); ``trace`` is the recorder's document after close(). Its files are
    ``<prefix>trace.json`` and ``<prefix>record.log`` in ``scratch``.
    ``die_with_parent``: the recorder gets SIGTERM (and writes what it has) if lockscope
    is killed; only for callers without threads of their own (it needs a preexec_fn).
    ``pass_fds``: descriptors the recorder inherits (a pipe for ``--series-out /dev/fd/N``).
    """

    def __init__(self, target: list[str], scratch: Path,
                 recorder_args: list[str] | None = None, *, prefix: str = "",
                 die_with_parent: bool = False, pass_fds: tuple[int, ...] = ()) -> None:
        # read before the recorder starts: a bad value is the caller's error, at once
        self.load_timeout_s = load_timeout_s()
        self.out = scratch / f"{prefix}trace.json"
        self.log_path = scratch / f"{prefix}record.log"
        self.error: str | None = None
        self.trace: dict | None = None
        self.exit_status: int | None = None
        self._log = None
        self.proc: subprocess.Popen | None = None
        self.argv = [find_binary("lockscope-record"), *target, "--start-on-stdin",
                     "--out", str(self.out), *(recorder_args or [])]
        try:
            # stderr to a file: nobody drains a pipe while the point runs
            self._log = open(self.log_path, "w+")
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                text=True, bufsize=1, preexec_fn=_die_with_parent if die_with_parent else None,
                pass_fds=pass_fds)
        except OSError as exc:
            self.error = f"lockscope-record did not start: {exc}"

    def wait_ready(self) -> None:
        """Until its probes are attached; one that fails leaves the point untraced."""
        if not self.proc:
            return
        try:
            read_ready(self.proc, "lockscope-record", self.load_timeout_s, self._log)
        except LockscopeError as exc:
            self.error = str(exc)
            if self.proc.poll() is None:    # still loading: a slow machine may need longer
                self.error += f" (a slow machine: raise {LOAD_TIMEOUT_VARIABLE})"
            self.exit_status = self.proc.returncode
            self.abort()

    def open(self) -> None:
        """Start counting; returns once the recorder says its window is open (the
        workload's first operations must fall inside it)."""
        if not self.proc:
            return
        assert self.proc.stdin is not None      # started with stdin=PIPE
        try:
            self.proc.stdin.write("start\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            self.error = "lockscope-record ended before its window opened"
            return  # close() reads how it ended
        if not read_until(self.proc, "started", 30):
            self.error = "lockscope-record did not open its window"

    def running(self) -> bool:
        """Whether the recorder still runs (one with ``--duration`` ends on its own)."""
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> subprocess.Popen | None:
        """Stop counting and read the document. Returns the recorder while it still
        detaches (the caller waits for it before anything else is measured)."""
        if not self.proc:
            return None
        rec = self.proc
        assert rec.stdin is not None
        try:
            rec.stdin.close()  # EOF: stop counting, write the JSON, 'done', detach
        except OSError:
            pass  # it already ended (its own --duration)
        done = read_until(rec, "done", 60)
        if not done:
            try:
                rec.wait(60)
            except subprocess.TimeoutExpired:
                stop(rec)
        self.exit_status = rec.returncode
        if (done or rec.returncode == 0) and self.out.is_file():
            self.trace = json.loads(self.out.read_text())
            return rec if done else None
        # a killed recorder's last log line is whatever it said before, not why
        last = last_line(self._log) if rec.returncode > 0 else ""
        self.error = f"lockscope-record {status_text(rec.returncode)}" + (
            f": {last}" if last else "")
        return None

    def abort(self) -> None:
        stop(self.proc)
        self.release()
        self.proc = None

    def release(self) -> None:
        """Close the log and our ends of the pipes (the process may still detach)."""
        if self._log:
            self._log.close()
            self._log = None
        for stream in (self.proc.stdin, self.proc.stdout) if self.proc else ():
            try:
                if stream:
                    stream.close()
            except (OSError, ValueError):
                pass


def _die_with_parent() -> None:
    # runs in the child between fork and exec
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def open_window(recorder: RecorderWindow | None, phase: Callable[[str], None],
                before_timed: Callable[[], None] | None) -> None:
    """The steps from the recorder's attach to the timed part, alike for every workload:
    wait until its probes are attached (the "attach" phase), run the caller's last step
    before the timed part, then open the window."""
    if recorder:
        recorder.wait_ready()
    phase("attach")
    if before_timed:
        before_timed()
    if recorder:
        recorder.open()
