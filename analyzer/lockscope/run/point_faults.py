"""A sweep's failed points: each recorded in results.json (``failed_point``, the first;
``failed_points``, all), said in one line, and either the end of the sweep or, with
``--keep-going``, passed over for the next point."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .point_errors import PointFailed, point_os_error
from .workload.points import failed_point


@contextmanager
def os_errors_fail_the_point(what: str) -> Iterator[None]:
    """An OSError in the block (a full or read-only filesystem under the point's files
    or its outputs) fails the point, named with its errno and file."""
    try:
        yield
    except OSError as exc:
        raise point_os_error(exc, what) from None


class PointFaults:
    """The failed points of one sweep of ``total`` points."""

    def __init__(self, doc: Any, keep_going: bool, total: int) -> None:
        self.doc = doc
        self.keep_going = keep_going
        self.total = total
        self.lines: list[str] = []

    def failed(self, fs: str, threads: int, repeat: int, label: str, exc: PointFailed,
               left: int) -> None:
        """Record the point; raise its one line unless the sweep goes on. ``left``: the
        points after it."""
        record = failed_point(fs, threads, repeat, exc, went_on=self.keep_going and left > 0)
        self.doc.setdefault("failed_point", record)
        self.doc.setdefault("failed_points", []).append(record)
        line = f"point {label} failed: {exc}"
        self.lines.append(line)
        if not self.keep_going:
            raise PointFailed(line + (f" ({left} later point(s) not run; --keep-going runs "
                                      "them)" if left else ""),
                              exc.exit_status, exc.stderr_line)
        print(f"lockscope sweep: {line}" + ("; going on (--keep-going)" if left else ""),
              file=sys.stderr, flush=True)

    def finish(self) -> None:
        """After the last point: the sweep's one line when any failed."""
        if not self.lines:
            return
        first = self.lines[0]
        raise PointFailed(first if len(self.lines) == 1 else
                          f"{len(self.lines)} of {self.total} points failed; the first: {first}")
