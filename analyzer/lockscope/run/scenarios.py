"""Built-in scenarios: fio-style jobs for the cases where ext4 and XFS lock differently,
and reproductions of published ext4-vs-XFS experiments."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..binaries import find_binary
from ..errors import UsageError


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    # fio options for lockscope-load (and fio); numjobs/runtime/filename are set per point.
    job: dict = field(default_factory=dict)
    expect: str = ""
    reference: str = ""

    @property
    def file_per_thread(self) -> bool:
        return "nrfiles" in self.job


_BASE = {"rw": "randwrite", "bs": "4k", "direct": "1", "ioengine": "psync", "iodepth": "1",
         "size": "1g", "randrepeat": "0"}

# the default is named by sweep_choices.DEFAULT_SCENARIO (sweep --help shows it)
SCENARIOS = [
    Scenario("shared-sparse-randwrite",
             "4 KiB random O_DIRECT writes into one shared sparse file (holes), iodepth 1",
             {**_BASE, "layout": "sparse"},
             "ext4 serializes on i_rwsem (writes into holes); XFS allocates under a shared IOLOCK",
             "experiment 1 (fio randwrite direct=1 bs=4k, one shared file) on a modern kernel"),
    Scenario("shared-written-randwrite",
             "4 KiB random O_DIRECT aligned overwrites of a fully written shared file",
             {**_BASE, "layout": "written"},
             "pure aligned overwrites: both filesystems keep the inode lock shared"),
    Scenario("shared-buffered-randwrite",
             "4 KiB random buffered writes into one written shared file",
             {**_BASE, "direct": "0", "layout": "written"},
             "buffered writes take the inode lock exclusive on both filesystems"),
    Scenario("shared-fallocated-unaligned",
             "4 KiB random O_DIRECT writes 512 bytes off the block grid into fallocated space",
             {**_BASE, "layout": "fallocated", "unaligned": "512"},
             "ext4: exclusive i_rwsem plus a wait for in-flight DIO; XFS: exclusive retry"),
    Scenario("shared-append",
             "64 KiB sequential O_DIRECT appends to one shared file",
             # size is per thread for appends: the file may grow to numjobs x size
             {**_BASE, "rw": "write", "bs": "64k", "layout": "append", "size": "256m"},
             "every write extends i_size, which needs the inode lock exclusive"),
    Scenario("shared-dsync-overwrite",
             "4 KiB random O_DSYNC O_DIRECT overwrites of a written shared file",
             {**_BASE, "layout": "written", "dsync": "1"},
             "durability per write: journal commits, not the inode lock, should dominate"),
    Scenario("shared-iouring-holes",
             "4 KiB random O_DIRECT writes through io_uring (iodepth 16 per thread) into "
             "one shared sparse file (holes)",
             {**_BASE, "ioengine": "io_uring", "iodepth": "16", "layout": "sparse"},
             "writes into holes are refused non-blocking and queued to io-wq: before 6.4 "
             "io-wq runs them one at a time per file (io_uring_serialized); from 6.4 not on "
             "ext4 or XFS"),
    Scenario("file-per-thread-sparse",
             "4 KiB random O_DIRECT writes, each thread into its own sparse file",
             {**_BASE, "layout": "sparse", "nrfiles": "1", "size": "256m"},
             "no shared inode: i_rwsem contention disappears on ext4"),
    Scenario("exp1-64k-sparse",
             "experiment 1 at 64 KiB: random O_DIRECT writes into one shared sparse file",
             {**_BASE, "bs": "64k", "layout": "sparse"},
             "ext4 flat, XFS scaling (399 -> 1236 MB/s on the original hardware)",
             "experiment 1, bs=64k"),
    Scenario("exp4-sysbench-16k",
             "experiment 4: 16 KiB random O_DIRECT sync writes into one written file",
             {**_BASE, "bs": "16k", "layout": "written"},
             "on 2.6-era kernels ext4 fell from 87 to 74 MiB/s at 4 threads",
             "experiment 4 (sysbench fileio rndwr 16K, 1 file, O_DIRECT, sync)"),
]

def get_scenario(name: str) -> Scenario:
    for s in SCENARIOS:
        if s.name == name:
            return s
    raise UsageError(f"unknown scenario '{name}' (lockscope scenarios lists them)")


def scenario_from_job_file(path: str) -> Scenario:
    """A scenario from a fio job file: [global] plus the first job section, as
    lockscope-load's own parser reads them (``--parse-only``: the options as written,
    names canonical)."""
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"{path}: no such job file")
    try:
        res = subprocess.run([find_binary("lockscope-load"), "--parse-only=1", str(p)],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"{path}: lockscope-load could not read it: {exc}") from None
    if res.returncode != 0:
        why = (res.stderr.strip().splitlines() or ["unreadable"])[-1]
        raise UsageError(f"{path}: not a fio job file: {why.removeprefix('lockscope-load: ')}")
    parsed = json.loads(res.stdout)
    jobs = parsed.get("jobs") or []
    job: dict = {**parsed.get("globals", {}), **(jobs[0].get("given", {}) if jobs else {})}
    for key in ("numjobs", "runtime", "filename", "directory", "output", "output-format"):
        job.pop(key, None)  # the sweep sets these per point
    job.pop("time_based", None)
    return Scenario(p.stem, f"job file {path}", job)
