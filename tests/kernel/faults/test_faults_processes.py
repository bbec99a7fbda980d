"""A process of a sweep killed during a point: the engine (lockscope-load), the recorder
(lockscope-record), a --command, a preset's database server; and the sweep itself
stopped by SIGTERM or SIGINT while a point lays out. Each ends in one line naming the
process and the signal, keeps the finished points, and leaves nothing running."""

from __future__ import annotations

import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from lockscope.run.dbserver.presets import PRESETS

from conftest import KERNEL_TESTS_REQUIRED
from fault_harness import (
    assert_nothing_left,
    assert_one_line_failure,
    find_child,
    job_file,
    keep_line,
    kill_child,
    processes_mentioning,
    start_sweep,
)

pytestmark = pytest.mark.kernel
RUNTIME = "3"


def test_engine_killed_mid_point_and_the_sweep_goes_on(tmp_path):
    run = start_sweep(tmp_path / "out", "--fs", "ext4", "--image-dir", tmp_path,
                      "--image-size", "1g", "--job", job_file(tmp_path),
                      "--threads", "1,2", "--runtime", RUNTIME, "--keep-going")
    kill_child("lockscope-load", str(run.out))
    run.finish()
    assert ("point ext4 threads=1 failed: lockscope-load killed by signal 9 (SIGKILL)"
            in run.text()), run.text()[-3000:]
    assert "going on (--keep-going)" in run.text()
    assert_one_line_failure(run, "point ext4 threads=1 failed", "SIGKILL")
    doc = run.results()
    assert doc["partial"] is True
    assert [r["threads"] for r in doc["runs"]] == [2]  # the later point ran
    assert [f["threads"] for f in doc["failed_points"]] == [1]
    assert doc["failed_point"]["went_on"] is True
    assert_nothing_left(doc, run.out)


def test_recorder_killed_mid_point(tmp_path):
    run = start_sweep(tmp_path / "out", "--fs", "ext4", "--image-dir", tmp_path,
                      "--image-size", "1g", "--job", job_file(tmp_path),
                      "--threads", "1,2", "--runtime", RUNTIME)
    kill_child("lockscope-record", str(run.out))
    run.finish()
    last = assert_one_line_failure(run, "point ext4 threads=1 failed",
                                   "lockscope-record killed by signal 9 (SIGKILL)")
    assert "1 later point(s) not run; --keep-going runs them" in last
    doc = run.results()
    assert doc["partial"] is True and doc["runs"] == []
    assert_nothing_left(doc, run.out)


def test_command_killed_mid_point(tmp_path):
    # dd writes 8 GiB into a 1 GiB image: it is killed long before it would end
    run = start_sweep(tmp_path / "out", "--fs", "ext4", "--image-dir", tmp_path,
                      "--image-size", "1g", "--threads", "1,2", "--throughput", "dd",
                      "--command", "dd if=/dev/zero of={dir}/f bs=4k count=2097152 "
                      "oflag=direct")
    kill_child("dd", str(tmp_path))
    run.finish()
    assert_one_line_failure(run, "point ext4 threads=1 failed",
                            "command killed by signal 9 (SIGKILL)")
    doc = run.results()
    assert doc["partial"] is True and doc["runs"] == []
    assert doc["failed_point"]["exit_status"] == -signal.SIGKILL
    assert_nothing_left(doc, run.out)
    assert not processes_mentioning(str(tmp_path / "lockscope-ext4"))


def test_database_server_killed_mid_point(tmp_path):
    why = PRESETS["postgres-pgbench"].missing()
    if why:
        if KERNEL_TESTS_REQUIRED:
            pytest.fail(f"LOCKSCOPE_KERNEL_TESTS=1 but {why}")
        pytest.skip(why)
    # the server's user must reach its datadir: not under pytest's private tmp_path
    images = Path(tempfile.mkdtemp(prefix="lockscope-faults-", dir="/var/tmp"))
    try:
        images.chmod(0o711)
        run = start_sweep(tmp_path / "out", "--fs", "ext4", "--image-dir", images,
                          "--image-size", "2g", "--preset", "postgres-pgbench",
                          "--db-scale", "1", "--threads", "1", "--runtime", "5")
        run.wait_line("[1/1] ext4 threads=1: start")
        find_child("pgbench", "pgbench")  # the client runs: now its server goes
        kill_child("postgres", str(images))  # the postmaster: -D names its datadir
        run.finish()
        assert list(images.iterdir()) == []
    finally:
        shutil.rmtree(images, ignore_errors=True)
    doc = run.results()
    text = run.text()
    assert run.proc.returncode == 1, text[-3000:]
    assert "Traceback" not in text
    assert run.last_line().startswith("lockscope sweep: point ext4 threads=1 failed: the "
                                      "postgres server (pid "), text
    assert "is gone; command exited" in run.last_line()
    keep_line(run.last_line())
    assert doc["partial"] is True and doc["runs"] == []
    assert_nothing_left(doc, run.out)
    assert not processes_mentioning(str(images))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stopped_while_a_point_lays_out(tmp_path, sig):
    """SIGTERM or SIGINT while the engine runs: exit 130, the results marked partial,
    nothing left (the interrupt after a finished point is test_sweep's)."""
    run = start_sweep(tmp_path / "out", "--fs", "ext4", "--image-dir", tmp_path,
                      "--image-size", "1g", "--job", job_file(tmp_path, "256m"),
                      "--threads", "1", "--runtime", RUNTIME)
    run.wait_line("[1/1] ext4 threads=1: start")
    run.proc.send_signal(sig)
    assert run.finish() == 130, run.text()[-3000:]
    assert "Traceback" not in run.text()
    keep_line(run.last_line())
    doc = run.results()
    assert doc["partial"] is True and doc["runs"] == []
    assert_nothing_left(doc, run.out)
