"""Run one function in a forked child while this process goes on; collect its result later.

The report draws its plots (matplotlib: ~0.4 s to import, ~0.4 s to draw) in a
child while the parent sums the flame-graph stacks: on two or more CPUs the two
overlap. ``Forked`` forks when the call is known (the child sees the loaded results
without a copy); ``Standby`` forks before the results are loaded, so matplotlib is
imported meanwhile, and is handed the call's (small) arguments pickled. When the
child cannot be forked or fails, the function runs here instead when its result is
asked for, so the output never depends on the child.
"""

from __future__ import annotations

import importlib
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


def _pipes(n: int) -> list[tuple[int, int]] | None:
    made: list[tuple[int, int]] = []
    try:
        for _ in range(n):
            made.append(os.pipe())
    except OSError:
        for r, w in made:
            os.close(r)
            os.close(w)
        return None
    return made


def _fork() -> int | None:
    """os.fork() with the standard streams flushed first; None when it cannot."""
    if not hasattr(os, "fork"):
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        return os.fork()
    except OSError:
        return None


def _spawn(n: int, child: Callable[[list[tuple[int, int]]], None]
           ) -> tuple[int, list[tuple[int, int]]] | None:
    """Fork a child that runs ``child(pipes)`` with ``n`` new pipes and exits (status 0
    when it returned, never returning into the caller's code); the parent gets (pid,
    pipes), or None when the pipes or the fork cannot be had (nothing left open)."""
    pipes = _pipes(n) if hasattr(os, "fork") else None
    if not pipes:
        return None
    pid = _fork()
    if pid is None:
        for r, w in pipes:
            os.close(r)
            os.close(w)
        return None
    if pid == 0:
        code = 1
        try:
            child(pipes)
            code = 0
        finally:
            os._exit(code)
    return pid, pipes


def _end(pid: int) -> None:
    """Kill a child whose result is not wanted, and reap it."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)


class Forked(Generic[T]):
    """``Forked(fn).result()`` is ``fn()``, computed in a child started at construction."""

    def __init__(self, fn: Callable[[], T], *, start: bool = True):
        self.fn = fn
        self.pid = 0
        self.fd = -1
        self.sender: threading.Thread | None = None
        if start:
            self._start()

    def _start(self) -> None:
        def child(pipes: list[tuple[int, int]]) -> None:
            (r, w), = pipes
            os.close(r)
            _send(w, pickle.dumps(self.fn(), protocol=pickle.HIGHEST_PROTOCOL))

        spawned = _spawn(1, child)
        if spawned is None:
            return
        pid, ((r, w),) = spawned
        os.close(w)
        self.pid, self.fd = pid, r

    def result(self) -> T:
        if self.pid:
            chunks = []
            with os.fdopen(self.fd, "rb") as fh:
                while chunk := fh.read(1 << 20):
                    chunks.append(chunk)
            _, status = os.waitpid(self.pid, 0)
            self.pid = 0
            if self.sender is not None:
                self.sender.join()
            if os.waitstatus_to_exitcode(status) == 0 and chunks:
                value: T = pickle.loads(b"".join(chunks))
                return value
        return self.fn()  # no child, or it failed: the same work here

    def cancel(self) -> None:
        """The result is not wanted: end the child and reap it."""
        if not self.pid:
            return
        os.close(self.fd)
        _end(self.pid)
        self.pid, self.fd = 0, -1
        if self.sender is not None:
            self.sender.join()


class Standby:
    """A child forked before this process loads its input, importing `modules` meanwhile.

    ``run(fn, *args)`` hands it one call (`fn` a module-level function, pickled with
    its arguments) and returns a Forked whose ``result()`` waits for it. A context
    manager: leaving it without a call ends the child."""

    def __init__(self, modules: tuple[str, ...]):
        self.pid = 0
        self.job_fd = self.result_fd = -1

        def child(pipes: list[tuple[int, int]]) -> None:
            (job_r, job_w), (result_r, result_w) = pipes
            os.close(job_w)
            os.close(result_r)
            _serve(modules, job_r, result_w)

        spawned = _spawn(2, child)
        if spawned is None:
            return
        pid, ((job_r, job_w), (result_r, result_w)) = spawned
        os.close(job_r)
        os.close(result_w)
        self.pid, self.job_fd, self.result_fd = pid, job_w, result_r

    def run(self, fn: Callable[..., T], *args: object) -> Forked[T]:
        pending: Forked[T] = Forked(lambda: fn(*args), start=False)
        if not self.pid:
            return pending
        try:
            job = pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, AttributeError, TypeError):
            self.close()  # the child ends; the call runs here
            return pending
        # From a thread: the child reads the call only once its imports are done.
        pending.sender = threading.Thread(target=_send, args=(self.job_fd, job, True),
                                          daemon=True)
        pending.sender.start()
        pending.pid, pending.fd = self.pid, self.result_fd
        self.pid, self.job_fd, self.result_fd = 0, -1, -1
        return pending

    def close(self) -> None:
        """End an unused child (it holds nothing but its imports), and reap it."""
        for fd in (self.job_fd, self.result_fd):
            if fd >= 0:
                os.close(fd)
        self.job_fd = self.result_fd = -1
        if self.pid:
            _end(self.pid)
            self.pid = 0

    def __enter__(self) -> Standby:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _send(fd: int, data: bytes, quiet: bool = False) -> None:
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    except OSError:
        if not quiet:
            raise  # (the parent's side: a child that ended early is seen by its status)


def _serve(modules: tuple[str, ...], job_fd: int, result_fd: int) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # the call itself says what is missing, wherever it runs
    with os.fdopen(job_fd, "rb") as fh:
        job = fh.read()
    if not job:
        os.close(result_fd)
        return  # the parent went on without a call
    fn, args = pickle.loads(job)
    _send(result_fd, pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL))
