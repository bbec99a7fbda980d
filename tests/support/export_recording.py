"""Real recordings for the exporter tests: 4 fio writers contending on one sparse file
on ext4 (i_rwsem taken exclusive for writes into holes), the recorder following them
with per-interval output (--interval-ms, --series-out).

No tests here; the test_export_* modules import it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from patience import patience
from record_common import prepare_file, recorder, start_fio, stop, wait_threads

INTERVAL_MS = 500


@contextmanager
def contention(fs_path: Path, out_dir: Path, interval_ms: int = INTERVAL_MS
               ) -> Iterator[tuple[Path, Path, Callable[[], None], Callable[[], dict]]]:
    """Writers running and a recorder attached to them, window open; yields (the
    contended file, the series file being written, start(), finish() -> document)."""
    path = fs_path / "sparse"
    prepare_file(path, "sparse", 128)
    series = out_dir / "series.jsonl"
    writers = start_fio("fio", path, "sparse", 128, runtime=120)
    try:
        wait_threads(writers.pid, 5)
        with recorder(["--pid", str(writers.pid), "--interval-ms", str(interval_ms),
                       "--series-out", str(series)], out_dir / "rec.json") as (_, s, f):
            time.sleep(0.3)
            yield path, series, s, f
    finally:
        stop(writers)


def record(fs_path: Path, out_dir: Path, seconds: float = 3.0) -> tuple[Path, dict, list]:
    """(the contended file, the final document, its intervals as --series-out wrote them)."""
    with contention(fs_path, out_dir) as (path, series, start, finish):
        start()
        time.sleep(seconds)
        doc = finish()
    lines = [json.loads(x) for x in series.read_text().splitlines() if x.strip()]
    return path, doc, lines


class SeriesFollower:
    """Follows a --series-out file as the recorder writes it, handing each complete
    line to ``feed`` (ExportState.add_interval) from its own thread."""

    def __init__(self, path: Path, feed: Callable[[dict[str, Any]], None]) -> None:
        self.path = path
        self.feed = feed
        self.fed = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> SeriesFollower:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(patience(10))

    def _run(self) -> None:
        try:
            while not self.path.exists() and not self._stop.is_set():
                time.sleep(0.05)
            with open(self.path) as f:
                buf = ""
                while True:
                    chunk = f.readline()
                    if not chunk:
                        if self._stop.is_set():
                            return
                        time.sleep(0.05)
                        continue
                    buf += chunk
                    if buf.endswith("\n"):
                        self.feed(json.loads(buf))
                        self.fed += 1
                        buf = ""
        except BaseException as e:  # surfaced by the test
            self.error = e
