"""The processes of a command point: started held at a gate, released together.

Each process is a shell that joins the point's cgroup, waits for one line on stdin, then
runs the command line; it leads a session of its own, so that its whole tree can be
ended at once.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import threading
import time
from pathlib import Path

# Joins the cgroup ($2, if any), waits for the go line, then runs the command ($1) with
# stdin from /dev/null. exec keeps the pid: the recorder may trace it by pid.
GATE = ('if [ -n "$2" ]; then echo $$ > "$2" || exit 125; fi; '
        'read -r go || exit 125; exec /bin/sh -c "$1" </dev/null')
# What makes a command line more than one simple command (lists, pipelines, subshells,
# compound commands): such a line runs under its shell; a simple one is exec'd, so that
# the tool keeps the gate's pid.
SHELL_KEYWORDS = {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
                  "case", "esac", "{", "}", "!", "function", "select", "time", "[["}


def exec_form(line: str) -> str:
    """``exec LINE`` for one simple command (the tool replaces the shell and keeps its
    pid), else the line as it is."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
    try:
        tokens = list(lexer)
    except ValueError:
        return line  # unbalanced quotes: the shell says what is wrong
    if not tokens or tokens[0] in SHELL_KEYWORDS or "=" in tokens[0]:
        return line
    if any(t and set(t) <= set(";&|()") for t in tokens):
        return line
    return f"exec {line}"


def spawn_gated(line: str, workdir: Path, procs_file: str, scratch: Path, index: int,
                env: dict[str, str] | None = None) -> subprocess.Popen:
    """One held process; its stdout and stderr go to ``command-INDEX.out|err`` in
    ``scratch``."""
    with open(scratch / f"command-{index}.out", "w") as out, \
            open(scratch / f"command-{index}.err", "w") as err:
        # a session of its own: the whole tree can be signalled at once
        return subprocess.Popen(["/bin/sh", "-c", GATE, "lockscope-gate", exec_form(line),
                                 procs_file],
                                cwd=workdir, stdin=subprocess.PIPE, stdout=out, stderr=err,
                                text=True, start_new_session=True, env=env)


def tool_env(parsed: bool) -> dict[str, str] | None:
    """The environment of a command whose report is parsed: the C locale, so that its
    words and numbers are the ones the parsers read (coreutils dd translates its)."""
    return {**os.environ, "LC_ALL": "C"} if parsed else None


class RanTooLong(Exception):
    """The processes were still running at the time limit (they have been killed)."""


def run_gated(procs: list[subprocess.Popen], limit_s: float | None = None) -> list[float]:
    """Open every gate, wait for every process; each one's wall seconds. Past
    ``limit_s`` seconds every process group is killed and RanTooLong raised."""
    walls = [0.0] * len(procs)
    start = time.monotonic()

    def wait(i: int, p: subprocess.Popen) -> None:
        p.wait()
        walls[i] = time.monotonic() - start

    waiters = [threading.Thread(target=wait, args=(i, p), daemon=True)
               for i, p in enumerate(procs)]
    for p in procs:
        try:
            assert p.stdin is not None      # started with stdin=PIPE
            p.stdin.write("go\n")
            p.stdin.close()
        except (BrokenPipeError, OSError):
            pass  # it died at the gate: its exit status says why
    for t in waiters:
        t.start()
    for t in waiters:
        while t.is_alive():
            t.join(0.5)  # short joins: Ctrl-C is delivered between them
            if limit_s and time.monotonic() - start > limit_s:
                for p in procs:
                    end_group(p)
                raise RanTooLong()
    return walls


def end_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process's session (its whole tree, when it forked)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        pass
