"""DIO write patterns recorded: lockscope-load's writers on one shared file, traced by
lockscope-record. No tests here: test_record_dio_lock_mode.py uses it, and
tools/record_dio_modes.py records tests/data/dio-lock-modes.json with it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from record_common import ROOT, dio_entry, record_engine, start_engine

LOAD = ROOT / "build" / "bin" / "lockscope-load"


@dataclass(frozen=True)
class DioCase:
    """One write pattern: the engine's layout of the file before the timed phase
    (written, fallocated, sparse, append) and the I/O's alignment to the fs block."""

    fstype: str
    layout: str
    unaligned: bool

    @property
    def name(self) -> str:
        return f"{self.fstype}-{self.layout}-{'unaligned' if self.unaligned else 'aligned'}"


def record_case(directory: Path, case: DioCase, out: Path, threads: int = 2,
                seconds: float = 2.0, size_mb: int = 64) -> tuple[dict, dict]:
    """`threads` writers of fs-block-sized DIO writes (shifted by half a block when
    unaligned) on one file for `seconds`; (the recorder's document, the file's dio[])."""
    if not LOAD.is_file():
        raise AssertionError(f"{LOAD} is missing: run 'make bins'")
    path = directory / case.name
    path.unlink(missing_ok=True)
    blk = os.statvfs(directory).f_bsize
    argv = [str(LOAD), "--name=w", f"--filename={path}", f"--layout={case.layout}",
            "--direct=1", f"--bs={blk}", f"--size={size_mb}m", f"--numjobs={threads}",
            "--thread", f"--runtime={seconds}", "--time_based", "--group_reporting",
            "--rw=write" if case.layout == "append" else "--rw=randwrite",
            "--output-format=json", f"--output={out.with_suffix('.load.json')}",
            "--start_on_stdin=1"] + ([f"--unaligned={blk // 2}"] if case.unaligned else [])
    try:
        doc = record_engine(start_engine(argv), out, 300)
    finally:
        path.unlink(missing_ok=True)
    return doc, dio_entry(doc, path)
