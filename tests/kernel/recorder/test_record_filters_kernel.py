"""The probes' filters come before any map work: events of tasks outside the target reach
the programs (their runs are counted) but leave nothing in the recording, and the
per-CPU shortcuts (the last XFS inode per CPU, one per-inode lookup per DIO) still learn
every file's locks and block size."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from conftest import require_tool
from record_common import (
    dio_entry,
    file_locks,
    prepare_file,
    recorder,
    start_fio,
    stop,
    wait_threads,
)

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def fio():
    return require_tool("fio")


def runs(doc: dict, prog_prefix: str) -> int:
    return sum(p["run_cnt"] for p in doc["overhead"]["per_program"]
               if p["name"].startswith(prog_prefix))


def test_an_untraced_load_reaches_the_probes_but_leaves_no_record(filesystems, fio, tmp_path):
    """--pid names an idle process while fio writes: every event is another task's."""
    path = filesystems["xfs"].path / "untraced"
    prepare_file(path, "sparse", 64)
    idle = subprocess.Popen(["sleep", "60"])
    writers = start_fio(fio, path, "sparse", 64)
    try:
        wait_threads(writers.pid, 5)
        with recorder(["--pid", str(idle.pid)], tmp_path / "r.json") as (_, start, finish):
            start()
            time.sleep(1.5)
            doc = finish()
    finally:
        stop(writers)
        idle.kill()
        idle.wait()
    # fio's writes went through the probes (sparse DIO writes switch, map, lock) ...
    for prog in ("dio_rw_begin", "dio_complete", "sched_switch", "sys_exit"):
        assert runs(doc, prog) > 0, prog
    # ... and none of them left a trace or a drop
    assert doc["dio"] == [] and doc["locks"] == [], (doc["dio"][:1], doc["locks"][:1])
    assert {t["pid"] for t in doc["threads"]} <= {idle.pid}, doc["threads"][:3]
    assert all(s["count"] == 0 for s in doc["syscalls"]), doc["syscalls"]
    assert doc["drops"]["end_without_begin"] == 0 and doc["drops"]["dio_untracked"] == 0
    assert doc["holders"]["counts"]["waits"] == 0 and doc["holders"]["releasers"] == []


def test_xfs_files_written_in_turn_each_get_their_block_size_and_locks(
        filesystems, fio, tmp_path):
    """Three fio processes on three sparse XFS files share the CPUs, so the per-CPU memo
    of the last inode keeps changing hands; each file still has its DIO entry with the
    filesystem's block size, and its own ILOCK."""
    paths = [filesystems["xfs"].path / f"turn{i}" for i in range(3)]
    procs = []
    try:
        for p in paths:
            prepare_file(p, "sparse", 64)
            procs.append(start_fio(fio, p, "sparse", 64, jobs=2))
        for w in procs:
            wait_threads(w.pid, 3)
        pids = ",".join(str(w.pid) for w in procs)
        with recorder(["--pid", pids], tmp_path / "r.json") as (_, start, finish):
            start()
            time.sleep(2)
            doc = finish()
    finally:
        for w in procs:
            stop(w)
    bsize = os.statvfs(paths[0]).f_bsize
    for p in paths:
        d = dio_entry(doc, p)
        assert d["writes"]["count"] > 0 and d["fs_block_size"] == bsize
    # Allocating writes take each file's ILOCK exclusive, and its two writers wait for it:
    # every file's ILOCK is named (learned by xfs_ilock while the memo changed hands),
    # and no address is claimed by two files.
    ilocks = [{lk["addr"] for lk in file_locks(doc, p, "xfs_ilock")} for p in paths]
    assert all(ilocks), [(lk["kind"], lk["path"]) for lk in doc["locks"]]
    assert sum(len(a) for a in ilocks) == len(set().union(*ilocks))
