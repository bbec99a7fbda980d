"""Where lock waits come from: lock:contention_begin/end (probe group ``lock``), or on
kernels without them (before 5.19) the rwsem and mutex slow paths (``lock_slowpath``,
fentry/fexit or kprobe/kretprobe). Either way, 4 direct writers into holes of one ext4 file
wait on its i_rwsem, taken exclusive (fs/ext4/file.c, ext4_dio_write_checks), and the
waits are recorded on that file; on XFS (shared IOLOCK) there are none.

Expectations come from the machine: which source runs follows from whether tracefs has
lock:contention_begin; whether the forced slow-path source can run here follows from the
recorder's own attach result, and either outcome is checked.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import require_tool
from record_common import file_locks, wait_share
from record_common import record_writers as record_sparse_writers

pytestmark = pytest.mark.kernel

LARGE = 0.15       # of traced thread time (0.45-0.5 measured with the tracepoints)
NEAR_ZERO = 0.02
TRACEFS = Path("/sys/kernel/tracing")


@pytest.fixture(scope="module")
def fio():
    return require_tool("fio")


SIZE_MB = 128


def record_writers(fio: str, path: Path, out: Path, extra: list[str] | None = None) -> dict:
    """4 direct writers into holes of one file (punched again once the recorder is
    ready), recorded for 2 s."""
    return record_sparse_writers(fio, path, "sparse", out, extra=extra, size_mb=SIZE_MB)


def rows(doc: dict) -> dict[str, dict]:
    return {f["name"]: f for f in doc["features"]}


def lock_tracepoints() -> bool:
    assert (TRACEFS / "events").is_dir(), "tracefs is not mounted (the recorder mounts it)"
    return (TRACEFS / "events" / "lock" / "contention_begin").is_dir()


def assert_waits_on_file(doc: dict, path: Path) -> None:
    assert wait_share(doc, path) > LARGE, doc["locks"][:2]
    lock = file_locks(doc, path, "i_rwsem")[0]
    assert lock["ino"] == os.stat(path).st_ino
    assert lock["exclusive_held"]["count"] > 0
    waits = [w for w in lock["waits"] if "WRITE" in w["flag_names"]]
    assert waits and any(w["kstack"] for w in waits), lock["waits"][:2]


def test_the_kernels_source_records_i_rwsem_waits_on_the_file(filesystems, fio, tmp_path):
    path = filesystems["ext4"].path / "sparse"
    doc = record_writers(fio, path, tmp_path / "r.json")
    f = rows(doc)
    tracepoints = lock_tracepoints()
    # the stand-in runs only where the tracepoints are absent, and the group it
    # replaces then reads as not missing
    assert f["lock"]["enabled"] == tracepoints
    assert f["lock_slowpath"]["enabled"] == (not tracepoints)
    assert f["lock_slowpath"]["stands_for"] == "lock"
    assert f["lock_slowpath" if tracepoints else "lock"]["not_needed"]
    assert_waits_on_file(doc, path)


def test_xfs_direct_writes_into_holes_do_not_wait(filesystems, fio, tmp_path):
    path = filesystems["xfs"].path / "sparse"
    doc = record_writers(fio, path, tmp_path / "r.json")
    assert rows(doc)["lock"]["enabled"] or rows(doc)["lock_slowpath"]["enabled"]
    assert wait_share(doc, path) < NEAR_ZERO


def test_forced_slow_paths_record_or_say_why_not(filesystems, fio, tmp_path):
    """--lock-source slowpath: where fentry or kprobes work, the same waits on the file;
    where neither does (this project's 6.18 build host), no lock waits, the lock group
    reported off (not as replaced) and the slow-path row saying why for each kind."""
    path = filesystems["ext4"].path / "sparse"
    doc = record_writers(fio, path, tmp_path / "r.json",
                         extra=["--lock-source", "slowpath"])
    f = rows(doc)
    assert not f["lock"]["enabled"]
    if f["lock_slowpath"]["enabled"]:
        assert f["lock_slowpath"]["attach"] in ("fentry", "kprobe")
        assert f["lock"]["not_needed"]
        assert_waits_on_file(doc, path)
    else:
        reason = f["lock_slowpath"]["reason"]
        assert "fentry:" in reason and "kprobe:" in reason, reason
        assert not f["lock"]["not_needed"] and f["lock"]["lost"]
        assert doc["locks"] == []
