"""Durability per file, checked against what a program did on a real ext4 loop mount:
fsync/fdatasync apart from sync_file_range (writeback, no durability promised), and
writes on files opened O_DSYNC/O_SYNC (buffered or direct) counted as durability writes;
the off-CPU records of those writes carry ``dsync`` and are classed durability, those of
sync_file_range writeback."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from lockscope.analysis.waitclass import classify, syscall_of

from record_common import dio_entry, record_gated_program

pytestmark = pytest.mark.kernel
PROGRAM = Path(__file__).resolve().parents[2] / "support" / "durability_calls.py"


def run_program(directory: Path, out: Path, recorder_args: tuple[str, ...]) -> tuple[dict, dict]:
    """The program under the recorder (--pid): its counts and the recording."""
    said, doc, _ = record_gated_program([sys.executable, str(PROGRAM), str(directory)], out,
                                        recorder_args, ready=True)
    return said, doc


# With --long-wait-us 1 every blocked wait is a long one, whose key (its system call
# and O_DSYNC mark) is read at its switch-in, from the task switching in.
@pytest.mark.parametrize("long_waits", [False, True], ids=["sampled", "long"])
def test_sync_file_range_fsync_and_dsync_writes_are_counted_apart(filesystems, tmp_path,
                                                                  long_waits):
    work = filesystems["ext4"].path / "durability"
    work.mkdir(exist_ok=True)
    said, doc = run_program(work, tmp_path / "r.json",
                            ("--long-wait-us", "1") if long_waits else ())
    n, paths = said["counts"], said["paths"]

    plain = dio_entry(doc, Path(paths["plain"]))
    assert plain["fsync"]["count"] == n["fdatasync"] + n["fsync"]
    assert plain["sync_file_range"]["count"] == n["sync_file_range"]
    assert plain["sync_file_range"]["total_ns"] > 0
    assert plain["dsync_writes"]["count"] == 0
    assert plain["buffered_writes"]["count"] == n["plain_writes"]

    for name in ("dsync", "osync"):
        e = dio_entry(doc, Path(paths[name]))
        assert e["dsync_writes"]["count"] == n[f"{name}_writes"], name
        assert e["buffered_writes"]["count"] == n[f"{name}_writes"], name
        assert e["fsync"]["count"] == 0 and e["sync_file_range"]["count"] == 0, name

    direct = dio_entry(doc, Path(paths["direct"]))
    assert direct["dsync_writes"]["count"] == n["direct_writes"]
    assert direct["writes"]["count"] == n["direct_writes"]
    assert direct["dsync"]["count"] == n["direct_writes"]   # the DIO class from the kiocb
    assert direct["buffered_writes"]["count"] == 0

    # The syscall table keeps sync_file_range apart from fsync and fdatasync.
    calls = {s["name"]: s["count"] for s in doc["syscalls"]}
    assert calls["sync_file_range"] == n["sync_file_range"]
    assert calls["fsync"] == n["fsync"] and calls["fdatasync"] == n["fdatasync"]

    # Off-CPU: each blocked record of a self-syncing write is marked dsync and classed
    # durability; those of sync_file_range (it waited for writeback) are writeback.
    blocked = [r for r in doc["offcpu"] if r["pid"] == doc["threads"][0]["pid"]
               and r["reason"] == "blocked" and bool(r.get("long")) == long_waits]
    marked = [r for r in blocked if r.get("dsync")]
    assert marked, [(r["syscall"], r["kstack"][:4]) for r in blocked]
    assert {classify(r).cls for r in marked} == {"durability"}
    if long_waits:
        # the only direct writes are O_DSYNC ones: each long wait for their I/O,
        # its stack the one it slept on, is marked
        direct = [r for r in blocked if any("iomap_dio_rw" in f for f in r["kstack"] or [])]
        assert direct and all(r.get("dsync") for r in direct), direct
    ranged = [r for r in blocked if syscall_of(r["kstack"], r["syscall"]) == "sync_file_range"]
    assert ranged, [(r["syscall"], r["kstack"][:4]) for r in blocked]
    assert {classify(r).cls for r in ranged} == {"writeback"}
    assert not any(r.get("dsync") for r in ranged)
    for p in paths.values():
        os.unlink(p)
