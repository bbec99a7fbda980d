"""The device under the filesystem under test fails: the loop images sit on a FUSE
filesystem (tests/support/failing_fuse.py) whose reads and writes fail with EIO on command,
before the sweep, during a point and after one. Each ends in one line naming the I/O
error (and the point), keeps the finished points, and leaves no mount, loop device or
process."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import KERNEL_TESTS_REQUIRED
from fault_harness import (
    assert_nothing_left,
    assert_one_line_failure,
    find_child,
    job_file,
    mounted,
    start_sweep,
)
from patience import patience

pytestmark = pytest.mark.kernel
HERE = Path(__file__).resolve().parents[2] / "support"
RUNTIME = "2"


@pytest.fixture
def failing_disk(tmp_path):
    """(the FUSE mount point to make images in, the control file: EIO while it exists)."""
    try:
        import fuse  # noqa: F401  (fusepy loads libfuse2 as it is imported)
    except (ImportError, OSError) as exc:
        why = f"fusepy (requirements-dev.txt) on libfuse2 (TEST_PACKAGES): {exc}"
        if KERNEL_TESTS_REQUIRED:
            pytest.fail(f"LOCKSCOPE_KERNEL_TESTS=1 but {why}")
        pytest.skip(why)
    backing, mnt, control = tmp_path / "backing", tmp_path / "disk", tmp_path / "fail"
    backing.mkdir()
    mnt.mkdir()
    server = subprocess.Popen([sys.executable, str(HERE / "failing_fuse.py"), str(backing),
                               str(mnt), str(control)], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + patience(30)
    while str(mnt) not in mounted():
        assert server.poll() is None and time.monotonic() < deadline, server.stderr
        time.sleep(0.05)
    try:
        yield mnt, control
    finally:
        # an image's blocks are freed by a short-lived child holding it (loopfs):
        # the mount is busy until it closes
        deadline = time.monotonic() + patience(30)
        while subprocess.run(["umount", str(mnt)], capture_output=True).returncode and \
                time.monotonic() < deadline:
            time.sleep(0.2)
        try:
            server.wait(patience(10))
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        assert str(mnt) not in mounted()


def sweep_on(tmp_path: Path, images: Path, *extra: str):
    return start_sweep(tmp_path / "out", "--fs", "ext4", "--image-dir", images,
                       "--image-size", "1g", "--job", job_file(tmp_path),
                       "--runtime", RUNTIME, *extra)


def test_device_failing_before_the_sweep(tmp_path, failing_disk):
    images, control = failing_disk
    control.touch()
    run = sweep_on(tmp_path, images, "--threads", "1")
    run.finish()
    last = assert_one_line_failure(run, "mkfs.ext4")
    assert "Input/output error" in last or "I/O" in last, last
    assert list(images.iterdir()) == []


def test_device_failing_during_a_point(tmp_path, failing_disk):
    images, control = failing_disk
    run = sweep_on(tmp_path, images, "--threads", "1,2")
    find_child("lockscope-load", str(run.out))
    control.touch()
    run.finish()
    assert_one_line_failure(run, "point ext4 threads=1 failed", "Input/output error")
    doc = run.results()
    assert doc["partial"] is True and doc["runs"] == []
    assert_nothing_left(doc, run.out)


def test_device_failing_after_a_point(tmp_path, failing_disk):
    images, control = failing_disk
    run = sweep_on(tmp_path, images, "--threads", "1,2")
    run.wait_runs(1)
    control.touch()
    run.finish()
    last = assert_one_line_failure(run, "point ext4 threads=2 failed")
    assert "Input/output error" in last or "reported" in last, last
    doc = run.results()
    assert doc["partial"] is True and [r["threads"] for r in doc["runs"]] == [1]
    assert_nothing_left(doc, run.out)
