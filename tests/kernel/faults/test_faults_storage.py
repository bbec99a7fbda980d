"""Faults of the storage under a sweep: the images' storage runs out or goes read-only,
the filesystem under test reports errors, --out fills or goes read-only, mkfs fails, no
loop device can be had. Each ends in one line naming the fault and the point, keeps
the finished points (results.json partial), leaves no mount, loop device or process,
and exits non-zero. docs/faults.md is the table of these cases."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

from lockscope.run.fs_health import FsHealth
from lockscope.run.loopfs import LEDGER_DIR, cleanup_stale
from lockscope.run.point import READY_TIMEOUT_S
from lockscope.run.point_errors import PointFailed
from lockscope.run.recording import read_ready

from fault_harness import (
    assert_nothing_left,
    assert_one_line_failure,
    ext4_error,
    job_file,
    keep_line,
    mounted,
    start_sweep,
    thin_storage,
)
from patience import patience

pytestmark = pytest.mark.kernel
RUNTIME = "2"


def test_images_storage_runs_out_during_a_point(tmp_path):
    """Thin provisioning: the images' ext4 sits on a sparse file on a tmpfs that holds
    the first point's file (48 MiB) but not the second's four; the second point fails at
    once with the I/O error, not after the readiness timeout."""
    with thin_storage(tmp_path, 160) as (outer, _dev):
        run = start_sweep(tmp_path / "out", "--fs", "ext4", "--image-dir", outer,
                          "--image-size", "1g", "--job", job_file(tmp_path, "48m"),
                          "--threads", "1,4", "--runtime", RUNTIME)
        started = run.wait_line("[2/2] ext4 threads=4: start")
        run.finish()
        ended = run.lines[-1][0]
        last = assert_one_line_failure(run, "point ext4 threads=4 failed")
        assert "No space left on device" in last or "Input/output error" in last, last
        # the line comes as the engine fails: far from the readiness timeout
        assert ended - started < READY_TIMEOUT_S / 10, ended - started
        doc = run.results()
        assert doc["partial"] is True
        assert [(r["fs"], r["threads"]) for r in doc["runs"]] == [("ext4", 1)]
        assert doc["failed_point"]["threads"] == 4
        assert_nothing_left(doc, run.out)


def test_images_filesystem_goes_read_only_after_a_point(tmp_path):
    """The ext4 under the images fails (errors=remount-ro) once the first point is
    saved: --keep-going tries the later points, each fails in one line, the image that
    cannot be deleted is said, and the next run deletes it (its ledger entry)."""
    with thin_storage(tmp_path, 512) as (outer, dev):
        run = start_sweep(tmp_path / "out", "--fs", "ext4", "--image-dir", outer,
                          "--image-size", "1g", "--job", job_file(tmp_path),
                          "--threads", "1,2,4", "--runtime", RUNTIME, "--keep-going")
        run.wait_runs(1)
        ext4_error(dev)
        run.finish()
        last = assert_one_line_failure(run, "failed")
        assert "point ext4 threads=" in last, last
        doc = run.results()
        assert doc["partial"] is True and doc["runs"][0]["threads"] == 1
        failed = doc["failed_points"]
        assert failed and all(f["threads"] in (2, 4) for f in failed), failed
        assert "going on (--keep-going)" in run.text() or len(doc["runs"]) + len(failed) == 3
        image = doc["host"]["filesystems"]["ext4"]["backing"]
        assert f"the image {image} could not be deleted: Read-only file system" in run.text()
        assert_nothing_left(doc, run.out, image_kept=True)
        entry = LEDGER_DIR / (Path(image).parent.name + ".json")
        assert entry.is_file()
    # the storage is gone with its image: the next run forgets the entry
    cleanup_stale()
    assert not entry.exists()


def test_filesystem_under_test_reports_an_error_between_points(tmp_path):
    """ext4 under the points reports an error after the first point (as on a failing
    device): the next point fails naming the device and the error, at its start or at
    the latest when its timed phase ends."""
    run = start_sweep(tmp_path / "out", "--fs", "ext4", "--image-dir", tmp_path,
                      "--image-size", "1g", "--job", job_file(tmp_path),
                      "--threads", "1,2", "--runtime", RUNTIME)
    doc = run.wait_runs(1)
    device = doc["host"]["filesystems"]["ext4"]["device"]
    ext4_error(device)
    run.finish()
    last = assert_one_line_failure(run, "point ext4 threads=2 failed",
                                   f"ext4 on {device} reported 1 error(s)")
    assert "(2 later" not in last  # it was the last point: nothing said as not run
    doc = run.results()
    assert doc["partial"] is True and len(doc["runs"]) == 1
    assert_nothing_left(doc, run.out)


def test_readiness_wait_ends_when_the_filesystem_fails(ext4_fs):
    """A process that never says ready (one stuck on a failing device): the wait ends
    with the filesystem's error within a few checks, not at the timeout."""
    health = FsHealth(ext4_fs.path)
    stuck = subprocess.Popen(["sleep", "600"], stdout=subprocess.PIPE, text=True)
    try:
        timer = threading.Timer(0.3, ext4_error, (ext4_fs.device,))
        timer.start()
        t0 = time.monotonic()
        with pytest.raises(PointFailed, match=f"ext4 on {ext4_fs.device} reported"):
            read_ready(stuck, "the stuck process", READY_TIMEOUT_S, check=health.check)
        assert time.monotonic() - t0 < READY_TIMEOUT_S / 10
    finally:
        stuck.kill()
        stuck.wait()


@pytest.mark.parametrize("fault", ["full", "read-only"])
def test_out_directory_fills_or_goes_read_only(tmp_path, fault):
    """--out on a filesystem that fills (a tmpfs) or fails read-only (ext4,
    errors=remount-ro) after the first point: one line naming the errno and the file,
    the first point's results.json kept as it was saved."""
    where = tmp_path / "outfs"
    where.mkdir()
    dev = ""
    if fault == "full":
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "lockscope-out",
                        str(where)], check=True)
    else:
        img = tmp_path / "out.img"
        subprocess.run(["truncate", "-s", "256m", str(img)], check=True)
        dev = subprocess.run(["losetup", "--find", "--show", str(img)], check=True,
                             capture_output=True, text=True).stdout.strip()
        subprocess.run(["mkfs.ext4", "-q", dev], check=True)
        subprocess.run(["mount", "-o", "errors=remount-ro", dev, str(where)], check=True)
    try:
        run = start_sweep(where / "out", "--fs", "ext4", "--image-dir", tmp_path,
                          "--image-size", "1g", "--job", job_file(tmp_path),
                          "--threads", "1,2", "--runtime", RUNTIME)
        saved = run.wait_runs(1)
        if fault == "full":
            with open(where / "filler", "wb") as f:
                try:
                    while True:
                        f.write(b"\0" * (1 << 20))
                        f.flush()
                except OSError:
                    pass
        else:
            ext4_error(dev)
        run.finish()
        errno_word = "No space left on device" if fault == "full" else "Read-only file system"
        last = assert_one_line_failure(run, errno_word)
        assert str(where / "out") in last, last
        assert run.results()["runs"] == saved["runs"]
        assert run.results()["partial"] is True
        assert_nothing_left(saved, run.out)
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
        if dev:
            subprocess.run(["losetup", "-d", dev], check=False)


def test_mkfs_that_fails_is_one_line_and_leaves_nothing(tmp_path):
    """mkfs.xfs refuses an image under its minimum size: its own reason, and no image,
    directory or loop device left in the image directory."""
    images = tmp_path / "images"
    images.mkdir()
    run = start_sweep(tmp_path / "out", "--fs", "xfs", "--image-dir", images,
                      "--image-size", "200m", "--job", job_file(tmp_path),
                      "--threads", "1", "--runtime", RUNTIME)
    run.finish()
    last = assert_one_line_failure(run, "mkfs.xfs")
    assert "Usage" not in last and "xxx" not in last, last
    assert list(images.iterdir()) == []
    assert not any(str(images) in m for m in mounted())


def test_no_loop_device_to_be_had(tmp_path):
    """A /dev without loop devices or /dev/loop-control (a container's): losetup's own
    reason in one line, nothing left. (Every loop device in use cannot be made here: the
    kernel makes a new one on demand through /dev/loop-control.)"""
    images = tmp_path / "images"
    images.mkdir()
    dev = tmp_path / "dev"
    dev.mkdir()
    binds = ""
    for name in ("null", "zero", "urandom", "random", "full"):
        (dev / name).touch()
        binds += f"mount --bind /dev/{name} {dev}/{name} && "
    from lockscope_cli import LOCKSCOPE

    cmd = " ".join(f"'{a}'" for a in LOCKSCOPE.argv + [
        "sweep", "--fs", "ext4", "--image-dir", str(images), "--image-size", "1g",
        "--job", str(job_file(tmp_path)), "--threads", "1", "--runtime", RUNTIME,
        "--out", str(tmp_path / "out"), "--no-report"])
    res = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                          f"{binds}mount --bind {dev} /dev && exec {cmd}"],
                         capture_output=True, text=True, env=LOCKSCOPE.env(), timeout=patience(120))
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("lockscope sweep: losetup") and "loop device" in last, last
    keep_line(last)
    assert list(images.iterdir()) == []
