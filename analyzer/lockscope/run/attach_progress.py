"""The live line of ``lockscope attach``: per-second throughput and the top wait class.

On a terminal it is one line that updates (rich); otherwise a plain line every
few seconds (logs, pipes). Figures come from, in order of preference, the
database's counters, the recorder's per-interval deltas, and /proc/PID/io.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from ..analysis.observed import observed_ns
from ..analysis.series import interval_throughput, interval_wait_classes
from ..analysis.waitclass import CLASSES, LOSS_CLASSES
from ..schema import TraceSection

PLAIN_EVERY_S = 5.0


def proc_io(pids: list[int]) -> dict[str, int]:
    """Summed /proc/PID/io counters of the target's processes."""
    tot = {"syscw": 0, "syscr": 0, "write_bytes": 0}
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/io").read_text().splitlines():
                key, _, val = line.partition(":")
                if key in tot:
                    tot[key] += int(val)
        except (OSError, ValueError):
            continue
    return tot


class AttachProgress:
    """Call ``tick()`` about once a second; ``close()`` at the end."""

    def __init__(self, label: str, duration_s: float, series_path: Path | None,
                 sampler=None):
        self.label = label
        self.duration_s = duration_s
        self.series_path = series_path
        self.sampler = sampler
        self.started = time.monotonic()
        self.tty = sys.stderr.isatty()
        self._live: Any = None          # a rich Live on a terminal
        self._series_pos = 0
        self._last_plain = 1.0 - PLAIN_EVERY_S  # the first plain line after one second
        self._last_io: tuple[float, dict] | None = None
        self._io_rate: float | None = None
        self.last_text = ""
        self._printed = ""

    def __enter__(self) -> AttachProgress:
        if self.tty:
            from rich.live import Live

            from ..console import stderr_console

            self._live = Live("", console=stderr_console(), transient=True,
                              refresh_per_second=4)
            self._live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._live:
            self._live.__exit__(*exc)
        elif self.last_text and self.last_text != self._printed:
            # the window's last state, whatever the plain lines' cadence left unsaid
            print(self.last_text, file=sys.stderr, flush=True)

    def _series_tail(self) -> TraceSection | None:
        """The newest complete interval line of the recorder's series file."""
        if not self.series_path or not self.series_path.exists():
            return None
        last = None
        with open(self.series_path) as fh:
            fh.seek(self._series_pos)
            while True:
                line = fh.readline()
                if not line.endswith("\n"):
                    break
                self._series_pos = fh.tell()
                try:
                    last = json.loads(line)
                except ValueError:
                    continue
        return last

    def tick(self, pids: list[int]) -> None:
        elapsed = time.monotonic() - self.started
        parts = [f"{self.label}: {elapsed:.0f}/{self.duration_s:.0f} s"]
        db = self._db_rate()
        if db:
            parts.append(db)
        interval = self._series_tail()
        if interval is not None:
            tp = interval_throughput(interval)
            parts.append(f"{tp['write_calls_s']:,.0f} writes/s {tp['fsync_calls_s']:,.0f} "
                         f"fsyncs/s")
            classes = interval_wait_classes(interval)
            loss = {k: v for k, v in classes.items() if k in LOSS_CLASSES and v > 0}
            if loss:
                top = max(loss, key=lambda k: loss[k])
                dur = observed_ns(interval) or 1e9
                parts.append(f"top wait: {CLASSES[top]} {loss[top] / dur:.1f} threads")
        else:
            now = time.monotonic()
            io = proc_io(pids)
            if self._last_io and now - self._last_io[0] >= 0.5:
                dt = now - self._last_io[0]
                self._io_rate = (io['syscw'] - self._last_io[1]['syscw']) / dt
            if not self._last_io or now - self._last_io[0] >= 0.5:
                self._last_io = (now, io)
            if self._io_rate is not None:
                parts.append(f"{self._io_rate:,.0f} write calls/s")
        self.last_text = "  ".join(parts)
        if self._live:
            self._live.update(self.last_text)
        elif elapsed - self._last_plain >= PLAIN_EVERY_S:
            self._last_plain = elapsed
            self._printed = self.last_text
            print(self.last_text, file=sys.stderr, flush=True)

    def _db_rate(self) -> str | None:
        s = self.sampler
        if s is None or len(s.samples) < 2:
            return None
        a, b = s.samples[-2], s.samples[-1]
        dt = (b["mono_ns"] - a["mono_ns"]) / 1e9 or 1.0
        key = "Com_commit" if s.engine == "mariadb" else "xact_commit"
        if key not in a or key not in b:
            return None
        return f"{(b[key] - a[key]) / dt:,.0f} commits/s"
