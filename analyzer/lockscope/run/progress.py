"""Sweep progress: a live line with the point, elapsed time and IOPS on a terminal,
plain lines otherwise (CI logs, pipes)."""

from __future__ import annotations

import sys
import time
from typing import Any, cast

from ..schema import EngineJson


class SweepProgress:
    def __init__(self, total: int, runtime_s: float):
        self.total = total
        self.runtime_s = runtime_s
        self.started = time.monotonic()
        self.tty = sys.stderr.isatty()
        self._progress: Any = None      # a rich Progress on a terminal
        self._task: Any = None

    def __enter__(self) -> SweepProgress:
        if self.tty:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            from ..console import stderr_console

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                      TextColumn("{task.fields[live]}"), TimeElapsedColumn(),
                                      console=stderr_console(), transient=True)
            self._progress.__enter__()
            self._task = self._progress.add_task("sweep", total=self.total, live="")
        return self

    def __exit__(self, *exc) -> None:
        if self._progress:
            self._progress.__exit__(*exc)

    def _elapsed(self) -> str:
        s = int(time.monotonic() - self.started)
        return f"{s // 60}:{s % 60:02d}"

    def start_point(self, index: int, label: str) -> None:
        self.label = f"[{index + 1}/{self.total}] {label}"
        if self._progress:
            self._progress.update(self._task, description=self.label, live="laying out")
        else:
            print(f"{self._elapsed()} {self.label}: start", file=sys.stderr, flush=True)

    def phase(self, what: str) -> None:
        """What the point is doing, where no per-second status comes (external commands)."""
        if self._progress:
            self._progress.update(self._task, live=what)

    def status(self, status: dict) -> None:
        """Called with each per-second status of the workload engine."""
        iops = status.get("iops", 0)
        el = status.get("elapsed_s", 0)
        if self._progress:
            self._progress.update(self._task, live=f"{el:.0f}/{self.runtime_s:.0f} s "
                                  f"{iops:,.0f} IOPS")

    def end_point(self, index: int, label: str, workload: dict, trace_error: str | None) -> None:
        from ..analysis.runs import DEFAULT_OPS_UNIT, ops_unit_of, workload_figures

        f = workload_figures({"workload": cast(EngineJson, workload)})
        # a database client counts transactions, not I/Os (workload.ops_unit)
        unit = ops_unit_of(workload)
        line = (f"{self._elapsed()} {self.label}: {f['iops']:,.0f} {unit}"
                + (f" {f['bw_bytes'] / 2**20:.1f} MiB/s" if unit == DEFAULT_OPS_UNIT else "")
                + (f" (no trace: {trace_error})" if trace_error else ""))
        if self._progress:
            self._progress.console.print(line, highlight=False, markup=False)
            self._progress.update(self._task, advance=1, live="")
        else:
            print(line, file=sys.stderr, flush=True)
