"""Starting `lockscope attach --continuous` in tests, and reading what it serves."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from conftest import LOCKSCOPE
from patience import patience

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _a_list_file() -> str:
    """A web config that is YAML but not a mapping."""
    fd, path = tempfile.mkstemp(suffix=".yml")
    os.write(fd, b"- just\n- a list\n")
    os.close(fd)
    return path


def stand_in_recorder(tmp_path: Path) -> tuple[dict, Path]:
    """A LOCKSCOPE_BIN_DIR whose lockscope-record only leaves a mark when run."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    mark = tmp_path / "recorder-ran"
    rec = bindir / "lockscope-record"
    rec.write_text(f"#!/bin/sh\ntouch {mark}\nexit 1\n")
    rec.chmod(rec.stat().st_mode | stat.S_IXUSR)
    env = LOCKSCOPE.env(LOCKSCOPE_BIN_DIR=str(bindir))
    return env, mark


def attach(env: dict, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return LOCKSCOPE.run("attach", *args, timeout=timeout, env=env)


def get(url: str, timeout: float = 10) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=patience(timeout)) as r:
        return r.status, r.read()


def metric(text: str, name: str) -> list[tuple[str, float]]:
    out = []
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            labels, _, value = line.rpartition(" ")
            out.append((labels, float(value)))
    return out


def start_continuous(args: list[str], port: int) -> tuple[subprocess.Popen, list[str]]:
    proc = LOCKSCOPE.start("attach", "--continuous", "--listen", f"127.0.0.1:{port}", *args)
    err: list[str] = []
    assert proc.stderr is not None
    for line in proc.stderr:
        err.append(line)
        if "until SIGTERM or SIGINT" in line:
            return proc, err
    proc.wait()
    raise AssertionError("".join(err))


@contextmanager
def continuous_on_a_sleeper(args: list[str], port: int):
    """``attach --continuous --pid`` of a ``sleep 300`` with ``args``; yields (lockscope,
    its stderr so far); both end on every exit path."""
    target = subprocess.Popen(["sleep", "300"])
    proc = None
    try:
        proc, err = start_continuous(["--pid", str(target.pid), *args], port)
        yield proc, err
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        target.kill()
        target.wait()


def wait_metric(port: int, name: str, ok, timeout: float = 30) -> str:
    deadline = time.monotonic() + patience(timeout)
    text = ""
    while time.monotonic() < deadline:
        text = get(f"http://127.0.0.1:{port}/metrics")[1].decode()
        if ok(metric(text, name)):
            return text
        time.sleep(0.5)
    raise AssertionError(f"{name}: {metric(text, name)}")
