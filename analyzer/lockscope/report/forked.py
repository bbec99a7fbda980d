"""Run one function in a forked child while this process goes on; collect its result later.

The report draws its plots (matplotlib: ~1 s to import, ~1 s to draw) in a child
while the parent sums the flame-graph stacks: on two or more CPUs the two overlap.
Linux forks copy the loaded results without a copy. When the child cannot be
forked or fails, the function runs here instead when its result is asked for, so
the output never depends on the child.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Forked(Generic[T]):
    """``Forked(fn).result()`` is ``fn()``, computed in a child started at construction."""

    def __init__(self, fn: Callable[[], T]):
        self.fn = fn
        self.pid = 0
        self.fd = -1
        if not hasattr(os, "fork"):
            return
        try:
            r, w = os.pipe()
        except OSError:
            return
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return
        if pid == 0:  # the child: never returns into the caller's code
            code = 1
            try:
                os.close(r)
                data = pickle.dumps(fn(), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(w, "wb") as fh:
                    fh.write(data)
                code = 0
            finally:
                os._exit(code)
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
            if os.waitstatus_to_exitcode(status) == 0 and chunks:
                value: T = pickle.loads(b"".join(chunks))
                return value
        return self.fn()  # no child, or it failed: the same work here
