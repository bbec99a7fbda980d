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


def _job(directory: Path, case: DioCase, threads: int, size_mb: int) -> list[str]:
    """One engine job: `threads` writers of fs-block-sized DIO writes (shifted by half
    a block when unaligned) on the case's own file in `directory`."""
    blk = os.statvfs(directory).f_bsize
    return [f"--name={case.name}", f"--filename={directory / case.name}",
            f"--layout={case.layout}", f"--bs={blk}", f"--size={size_mb}m",
            f"--numjobs={threads}",
            "--rw=write" if case.layout == "append" else "--rw=randwrite",
            *([f"--unaligned={blk // 2}"] if case.unaligned else [])]


def record_cases(cases: dict[DioCase, tuple[Path, int]], out: Path, seconds: float = 2.0,
                 size_mb: int = 64) -> tuple[dict, dict[DioCase, dict]]:
    """Every case at once, each with its own writers (case -> (directory, threads)) on
    its own file, in one engine run of `seconds` traced by one recorder: (the
    recorder's document, each case's dio[] entry). The cases share nothing the
    recorder measures per file (a file's i_rwsem, its writes' classes and lock
    modes), so one recording stands for one per case, at one recorder start."""
    if not LOAD.is_file():
        raise AssertionError(f"{LOAD} is missing: run 'make bins'")
    paths = {case: directory / case.name for case, (directory, _) in cases.items()}
    for path in paths.values():
        path.unlink(missing_ok=True)
    argv = [str(LOAD), "--direct=1", "--thread", f"--runtime={seconds}", "--time_based",
            "--output-format=json", f"--output={out.with_suffix('.load.json')}",
            "--start_on_stdin=1"]
    for case, (directory, threads) in cases.items():
        argv += _job(directory, case, threads, size_mb)
    try:
        doc = record_engine(start_engine(argv), out, 300)
    finally:
        for path in paths.values():
            path.unlink(missing_ok=True)
    return doc, {case: dio_entry(doc, path) for case, path in paths.items()}


def record_case(directory: Path, case: DioCase, out: Path, threads: int = 2,
                seconds: float = 2.0, size_mb: int = 64) -> tuple[dict, dict]:
    """One case alone: (the recorder's document, the file's dio[] entry)."""
    doc, entries = record_cases({case: (directory, threads)}, out, seconds, size_mb)
    return doc, entries[case]
