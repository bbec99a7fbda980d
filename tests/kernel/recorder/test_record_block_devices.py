"""Block-device latency per device (the recorder's `block` section): each device's
requests counted under its own entry, whatever order devices appear in."""

from __future__ import annotations

import mmap
import os
from pathlib import Path

import pytest

from record_common import recorder

pytestmark = pytest.mark.kernel


def direct_writes(path: Path, n: int) -> None:
    """n synchronous 4 KiB O_DIRECT writes at distinct aligned offsets: each one is a
    request of its own (the next is issued only once it completed)."""
    buf = mmap.mmap(-1, 4096)  # page-aligned, as O_DIRECT wants
    buf.write(b"x" * 4096)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600)
    try:
        for i in range(n):
            assert os.pwritev(fd, [buf], i * 8192) == 4096
    finally:
        os.close(fd)
        buf.close()


def test_requests_counted_per_device(loopfs_factory, tmp_path):
    fs_a = loopfs_factory("ext4", 64 << 20)
    fs_b = loopfs_factory("ext4", 64 << 20)
    n_a, n_b = 150, 400
    with recorder(["--pid", str(os.getpid())], tmp_path / "r.json") as (_, start, finish):
        start()
        direct_writes(fs_a.path / "a", n_a)
        direct_writes(fs_b.path / "b", n_b)
        doc = finish()
    by_dev = {b["dev"]: b for b in doc["block"]}
    assert len(by_dev) == len(doc["block"]), "one entry per device"
    for fs, n in ((fs_a, n_a), (fs_b, n_b)):
        rdev = os.stat(fs.device).st_rdev
        b = by_dev.get(f"{os.major(rdev)}:{os.minor(rdev)}")
        assert b, f"{fs.device} missing from {list(by_dev)}"
        assert b["name"] == os.path.basename(fs.device)
        assert b["count"] >= n
        assert sum(b["hist_log2_ns"]) == b["count"]
        assert 0 < b["max_ns"] <= b["total_ns"]
