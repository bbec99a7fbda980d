"""The skeleton every recording command shares (``lockscope sweep``, ``lockscope attach``):
its results document, its signals, its output directory, its recorder windows and its
finish. A command validates its arguments first, then::

    session = Session("attach", args.out, "lockscope-attach", kind="attach")
    session.doc.update(...)                 # the command's own keys (workload, target, ...)
    with session.interruptible():           # SIGTERM ends the body like Ctrl-C does
        ...                                 # recorder windows: recording.RecorderWindow,
        session.checkpoint()                # the one driver; after each window or point
    session.finish(analyze, summary, render=not args.no_report, partial=...)
    return 0                                # or 130 when interrupted: the command decides

Hooks, in the order they run:

- ``checkpoint()``: the interval hook. Call it after each finished window (a sweep point,
  an attach interval); it saves results.json atomically, so that a crash or a kill
  later still leaves a readable, partial recording. A command that records window after
  window (a continuous attach) calls it at each interval boundary after it appended the
  window's recording to the document.
- ``finish(analyze, summary, render, partial)``: the finish hook, once, after the last
  window: marks the document partial or not, stores ``analyze(doc)`` as its
  ``analysis``, saves results.json, writes the report (a failure there is one line: the
  recording is saved) and prints ``summary(doc, out, report)``. Returns the report
  result; the command says how the session ended and picks its exit status.
"""

from __future__ import annotations

import datetime
import shlex
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import LockscopeError
from ..results import SCHEMA, save_results
from ..schema import Analysis, ResultsDoc
from .host import host_facts
from .outdir import new_out_dir


def new_document(kind: str | None) -> ResultsDoc:
    """The keys every results.json starts with; ``kind`` is absent for a sweep."""
    # `lockscope ...` and `python -m lockscope ...` both leave the options in argv[1:]
    command = ["lockscope"] + sys.argv[1:]
    doc: ResultsDoc = {"schema": SCHEMA}
    if kind:
        doc["kind"] = kind
    doc.update({"partial": True,
                "created_wall": datetime.datetime.now(datetime.UTC).isoformat(
                    timespec="seconds"),
                "command": command, "reproduce": [shlex.join(command)],
                "host": host_facts()})
    return doc


class Session:
    """One recording session; see the module docstring for its hooks."""

    def __init__(self, name: str, out_arg: str | None, out_prefix: str,
                 kind: str | None = None) -> None:
        self.name = name                       # the subcommand, for its messages
        self.out: Path = new_out_dir(out_arg, out_prefix)
        self.doc = new_document(kind)

    @property
    def results(self) -> Path:
        return self.out / "results.json"

    @contextmanager
    def interruptible(self) -> Iterator[None]:
        """SIGTERM raises KeyboardInterrupt inside the block, so that it cleans up and
        keeps what was recorded the way Ctrl-C does."""
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, previous)

    def checkpoint(self) -> None:
        """The interval hook: results.json as recorded so far (atomically)."""
        save_results(self.results, self.doc)

    def finish(self, analyze: Callable[[ResultsDoc], Analysis] | None,
               summary: Callable[[ResultsDoc, Path, Any], None], *, render: bool,
               partial: bool) -> Any:
        """The finish hook: analysis, results.json, report, summary; returns the report
        (None when not written)."""
        self.doc["partial"] = partial
        if analyze is not None:
            self.doc["analysis"] = analyze(self.doc)
        self.checkpoint()
        report = self._report() if render else None
        summary(self.doc, self.out, report)
        return report

    def note(self, text: str) -> None:
        print(f"lockscope {self.name}: {text}", file=sys.stderr)

    def report(self) -> Any:
        """The report of the document as it is now (after a later section was added)."""
        return self._report()

    def _report(self) -> Any:
        try:
            from ..report import render_report
        except ImportError:
            return None
        try:
            return render_report(self.doc, self.out)
        except LockscopeError as exc:
            self.note(f"report not written: {exc}")
        except Exception as exc:  # results.json is saved: say so instead of a traceback
            self.note(f"report not written ({type(exc).__name__}: {exc}); the recording "
                      f"is in {self.results}")
        return None


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt
