"""``python -m lockscope`` from this checkout, as the tests (conftest's ``lockscope_cli``
fixture) and the harnesses they share with bench/ start it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from patience import patience

ROOT = Path(__file__).resolve().parents[2]


class Lockscope:
    """``python -m lockscope`` from this checkout, as the tests start it: ``run`` waits
    for it (output captured as text), ``start`` returns the running process.
    LOCKSCOPE_COMMAND names an installed ``lockscope`` to test instead (the host matrix
    runs the tests against the release installed in each guest)."""

    argv = [os.environ["LOCKSCOPE_COMMAND"]] if os.environ.get("LOCKSCOPE_COMMAND") \
        else [sys.executable, "-m", "lockscope"]

    def env(self, **extra: str) -> dict[str, str]:
        return dict(os.environ, PYTHONPATH=str(ROOT / "analyzer"), **extra)

    def run(self, *args: object, timeout: float = 300, env: dict | None = None,
            **kw) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv + [str(a) for a in args], capture_output=True,
                              text=True, timeout=patience(timeout), env=env or self.env(), **kw)

    def start(self, *args: object, env: dict | None = None, **kw) -> subprocess.Popen:
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen(self.argv + [str(a) for a in args], text=True,
                                env=env or self.env(), **kw)


LOCKSCOPE = Lockscope()


def says_window_open(line: str) -> bool:
    """lockscope attach's stderr line that says the window is open (a warning before it
    may also say \"tracing\")."""
    return line.startswith("lockscope attach: tracing ")


@contextmanager
def attach_with_open_window(*args: object, env: dict | None = None, timeout: float = 60,
                            **popen) -> Iterator[tuple[subprocess.Popen, list[str]]]:
    """``lockscope attach ARGS`` started, its stderr read by a thread into the list
    yielded beside the process once the counting window is open (AssertionError with
    what it said if it does not open in ``timeout`` s). Killed on leaving if it still
    runs; the reader is joined so the list is whole. ``popen``: Popen's own keywords."""
    proc = LOCKSCOPE.start("attach", *args, env=env, **popen)
    err: list[str] = []
    opened = threading.Event()

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            err.append(line)
            if says_window_open(line):
                opened.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        assert opened.wait(patience(timeout)), "".join(err)
        yield proc, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(patience(5))
