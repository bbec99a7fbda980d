"""The block device under the filesystem under test fails, as the block layer sees it:
a sweep runs (``--target``) on an ext4 on a device-mapper device over a loop device,
whose table is switched to ``error`` (every I/O fails), to ``flakey`` with
``error_writes`` (writes fail, reads work) or with ``drop_writes`` (writes are
acknowledged and thrown away), before a point, during one or after one. And a
filesystem whose module cannot load: ``mount -t xfs`` refused by modprobe.

These need device-mapper (the kernel matrix's guests have it; a host without it skips
them) and, for the module case, an xfs module that can be unloaded. Each failure ends in
one line naming the point and the I/O error, keeps the finished points, exits non-zero
and leaves nothing behind (the test's own dm table, mount and loop device included)."""

from __future__ import annotations

import mmap
import os
import signal
import subprocess
import time
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from lockscope.run.point import READY_TIMEOUT_S

from fault_harness import (
    assert_nothing_left,
    assert_one_line_failure,
    find_child,
    job_file,
    mounted,
    processes_mentioning,
    start_sweep,
)
from patience import patience

pytestmark = pytest.mark.kernel
RUNTIME = "1"
SIZE_MB = 256
UP_S, DOWN_S = 0, 3600      # flakey: never up (drivers/md/dm-flakey.c, flakey_map)


def _run(*cmd: object, check: bool = True) -> subprocess.CompletedProcess:
    res = subprocess.run([str(c) for c in cmd], check=False, capture_output=True, text=True)
    assert not check or res.returncode == 0, f"{cmd}: exit {res.returncode}: {res.stderr}"
    return res


def device_mapper_missing() -> str | None:
    """Why device-mapper cannot be used here, or None (its module loaded if it can be)."""
    if os.geteuid() != 0:
        return "not root"
    try:
        _run("modprobe", "-q", "dm_mod", check=False)
        res = _run("dmsetup", "version", check=False)
    except FileNotFoundError:
        return "dmsetup is not installed"
    if res.returncode:
        return "no device-mapper in this kernel (dmsetup version: " + \
            (res.stderr.strip().splitlines() or ["failed"])[0] + ")"
    return None


class DmDisk:
    """An ext4 on a dm device (its table first linear over a loop device): its mount
    point, and the table switched while it stays mounted."""

    def __init__(self, base: Path) -> None:
        self.name = f"lockscope-fault-{os.getpid()}-{base.name}"[:120]
        self.backing = base / "dm-backing"
        self.mnt = base / "dm-ext4"
        self.loop = ""
        self.sectors = SIZE_MB << 11

    @property
    def device(self) -> str:
        """The kernel's node (devtmpfs makes it): /dev/mapper's links are udev's, and a
        host (or a guest) without udev has none."""
        name = _run("dmsetup", "info", "-c", "--noheadings", "-o", "blkdevname",
                    self.name).stdout.strip()
        return f"/dev/{name}"

    def table(self, target: str, *args: object) -> str:
        return " ".join(str(a) for a in (0, self.sectors, target, *args))

    def linear(self) -> str:
        return self.table("linear", self.loop, 0)

    def switch(self, table: str) -> None:
        """Swap in ``table`` without freezing the filesystem first (--nolockfs: a freeze
        would wait for the writes in flight and sync them)."""
        _run("dmsetup", "load", self.name, "--table", table)
        _run("dmsetup", "resume", "--noudevsync", "--nolockfs", self.name)

    def exists(self) -> bool:
        return _run("dmsetup", "info", self.name, check=False).returncode == 0


@contextmanager
def dm_disk(base: Path):
    """A fresh DmDisk, mounted; unmounted, its table removed and its loop device detached
    on every way out, and checked gone."""
    disk = DmDisk(base)
    disk.mnt.mkdir()
    try:
        _run("truncate", "-s", f"{SIZE_MB}m", disk.backing)
        disk.loop = _run("losetup", "--find", "--show", disk.backing).stdout.strip()
        # --noudevsync: no udev to wait for where there is none
        _run("dmsetup", "create", "--noudevsync", disk.name, "--table", disk.linear())
        # no discard: the backing file is on the guest's tmpfs
        _run("mkfs.ext4", "-q", "-E", "nodiscard", disk.device)
        _run("mount", disk.device, disk.mnt)
        yield disk
    finally:
        _teardown(disk)
    assert str(disk.mnt) not in mounted(), f"{disk.mnt} still mounted"
    assert not disk.exists(), f"dm table {disk.name} left behind"
    left = _run("losetup", "-j", disk.backing, check=False).stdout.strip()
    assert not left, f"loop device left attached: {left}"


def _teardown(disk: DmDisk) -> None:
    if str(disk.mnt) in mounted():
        # a filesystem whose device failed unmounts (its journal aborted); a process of
        # the sweep still in it would keep it busy a moment
        deadline = time.monotonic() + patience(30)
        while _run("umount", disk.mnt, check=False).returncode and \
                time.monotonic() < deadline:
            time.sleep(0.2)
        if str(disk.mnt) in mounted():
            _run("umount", "-l", disk.mnt, check=False)
    if disk.exists():
        _run("dmsetup", "remove", "--noudevsync", "--retry", disk.name, check=False)
    if disk.loop:
        _run("losetup", "-d", disk.loop, check=False)


@pytest.fixture
def disk(tmp_path):
    missing = device_mapper_missing()
    if missing:
        # not require_kernel: a host without device-mapper is not a broken setup
        pytest.skip(f"device-mapper: {missing}")
    with dm_disk(tmp_path) as d:
        yield d


def flakey(disk: DmDisk, feature: str) -> str:
    """The flakey table with ``feature``, or skip naming why this kernel takes none:
    tried, not told from a version (error_writes is younger than drop_writes)."""
    _run("modprobe", "-q", "dm_flakey", check=False)
    table = disk.table("flakey", disk.loop, 0, UP_S, DOWN_S, 1, feature)
    probe = f"{disk.name}-probe"
    res = _run("dmsetup", "create", "--noudevsync", probe, "--table", table, check=False)
    if res.returncode == 0:
        _run("dmsetup", "remove", "--noudevsync", "--retry", probe)
        return table
    targets = _run("dmsetup", "targets", check=False).stdout.split()
    pytest.skip(f"dm-flakey {feature}: {res.stderr.strip().splitlines()[-1:]} "
                f"(dmsetup targets: {' '.join(targets)})")


def sweep_on(tmp_path: Path, disk: DmDisk, threads: str, runtime: str = RUNTIME):
    # --no-trace: the device fails the workload and the filesystem, not the recorder;
    # a small job: under emulation (the kernel matrix) a sweep's own start is most of it
    return start_sweep(tmp_path / "out", "--target", disk.mnt, "--job",
                       job_file(tmp_path, "4m"), "--threads", threads, "--runtime", runtime,
                       "--no-trace")


@contextmanager
def held(pids: list[int]):
    """SIGSTOP ``pids`` for the block, SIGCONT after (those still there)."""
    stopped = []
    try:
        for pid in pids:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
        yield
    finally:
        for pid in stopped:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def assert_soon(run, since: float) -> None:
    """The line came as the I/O failed: far from the readiness timeout (as the storage
    faults: a tenth of it)."""
    assert run.lines[-1][0] - since < READY_TIMEOUT_S / 10, run.lines[-1][0] - since


def assert_failed_on_io(run, point: str | None) -> str:
    """The one line names the point (when one ran) and the I/O error."""
    last = assert_one_line_failure(run, *([f"point ext4 threads={point} failed"]
                                          if point else []))
    assert "Input/output error" in last or "EIO" in last, last
    return last


@pytest.mark.parametrize("when", ["before", "during", "after"])
def test_dm_error(tmp_path, disk, when):
    """Every I/O of the device fails (dm-error), before the first point, while it lays
    out, or once the first point is saved."""
    if when == "before":
        disk.switch(disk.table("error"))
    # after: the second point runs long enough to still be running once the first is
    # saved and the table swapped (5.10's guest ran a 1 s point whole before the swap)
    run = sweep_on(tmp_path, disk, "1,2", "3" if when == "after" else RUNTIME)
    if when == "during":
        find_child("lockscope-load", str(run.out))
        disk.switch(disk.table("error"))
    elif when == "after":
        run.wait_runs(1)
        # the sweep and its engine held while the table is swapped: on a slow host (an
        # emulated guest) the next point could otherwise finish before the switch
        with held(processes_mentioning(str(run.out))):
            disk.switch(disk.table("error"))
    swapped = time.monotonic()
    run.finish()
    # before: the line names the first point, or what failed before it
    assert_failed_on_io(run, {"before": None, "during": "1", "after": "2"}[when])
    assert_soon(run, swapped)
    doc = run.results()
    assert doc["partial"] is True
    assert [r["threads"] for r in doc["runs"]] == ([1] if when == "after" else [])
    assert_nothing_left(doc, run.out)


def test_dm_flakey_error_writes_during_a_point(tmp_path, disk):
    """Writes fail, reads work (dm-flakey error_writes) from the first point's layout."""
    table = flakey(disk, "error_writes")
    run = sweep_on(tmp_path, disk, "1,2")
    find_child("lockscope-load", str(run.out))
    disk.switch(table)
    swapped = time.monotonic()
    run.finish()
    assert_failed_on_io(run, "1")
    assert_soon(run, swapped)
    doc = run.results()
    assert doc["partial"] is True and doc["runs"] == []
    assert_nothing_left(doc, run.out)


def test_dm_flakey_drop_writes_is_not_seen(tmp_path, disk):
    """Writes acknowledged and thrown away (dm-flakey drop_writes) fail no call: nothing
    on the host can tell, and the sweep does not claim to. It finishes its point,
    exit 0; that its figures are of lost writes is this test's to show: a block written
    with O_DIRECT and synced reads back (O_DIRECT, from the device) as other bytes."""
    table = flakey(disk, "drop_writes")
    run = sweep_on(tmp_path, disk, "1")
    find_child("lockscope-load", str(run.out))
    disk.switch(table)
    assert run.finish() == 0, run.text()[-3000:]
    doc = run.results()
    assert not doc.get("partial") and [r["threads"] for r in doc["runs"]] == [1]
    assert_nothing_left(doc, run.out)
    # O_DIRECT wants an aligned buffer: an anonymous mapping is page-aligned
    probe, data, back = disk.mnt / "dropped", mmap.mmap(-1, 4096), mmap.mmap(-1, 4096)
    data.write(b"\xa5" * 4096)
    fd = os.open(probe, os.O_CREAT | os.O_WRONLY | os.O_DIRECT, 0o600)
    try:
        assert os.write(fd, data) == 4096
        os.fsync(fd)
    finally:
        os.close(fd)
    fd = os.open(probe, os.O_RDONLY | os.O_DIRECT)
    try:
        assert os.readv(fd, [back]) == 4096
    finally:
        os.close(fd)
    assert back[:] != data[:], "the write was not dropped: the table was not swapped in"


XFS_BLOCKED = Path("/etc/modprobe.d/lockscope-fault-no-xfs.conf")


def _module_state(name: str) -> str | None:
    """Why ``name`` cannot be made to fail its load here, or None."""
    sysmod = Path("/sys/module") / name
    if sysmod.is_dir() and not (sysmod / "initstate").exists():
        return f"{name} is built into this kernel"
    if _run("modinfo", name, check=False).returncode:
        return f"no {name} module for {os.uname().release}"
    if (sysmod / "refcnt").exists() and (sysmod / "refcnt").read_text().strip() != "0":
        return f"{name} is in use"
    if XFS_BLOCKED.exists():
        return f"{XFS_BLOCKED} exists (not this test's)"
    return None


@pytest.mark.alone   # no other test may mount XFS while its module is refused
def test_a_filesystem_module_that_cannot_load(tmp_path):
    """modprobe refuses xfs (an install line running /bin/false, as a blacklisting host
    has): the sweep's mount -t xfs fails, and that is one line naming it."""
    if os.geteuid() != 0:
        pytest.skip("not root")
    why = _module_state("xfs")
    if why:
        pytest.skip(f"xfs cannot be unloaded and refused here: {why}")
    was_loaded = Path("/sys/module/xfs").is_dir()
    try:
        XFS_BLOCKED.write_text("# lockscope's fault test; deleted when it ends\n"
                               "install xfs /bin/false\n")
        if was_loaded:
            _run("modprobe", "-r", "xfs")
        # where the guests' images go (LOCKSCOPE_IMAGE_DIR): loop devices with direct I/O
        images = Path(os.environ.get("LOCKSCOPE_IMAGE_DIR", tmp_path)) / f"fault-{tmp_path.name}"
        images.mkdir()
        run = start_sweep(tmp_path / "out", "--fs", "xfs", "--image-dir", images,
                          "--image-size", "512m", "--job", job_file(tmp_path),
                          "--threads", "1", "--runtime", RUNTIME, "--no-trace")
        run.finish()
        last = assert_one_line_failure(run, "xfs")
        assert "mount" in last, last
        # no image, directory, mount or loop device left in the image directory
        assert list(images.iterdir()) == []
        assert not [m for m in mounted() if m.startswith(str(images))]
        assert not _run("losetup", "-a", check=False).stdout.count(str(images))
        assert not processes_mentioning(str(run.out))
        images.rmdir()
    finally:
        XFS_BLOCKED.unlink(missing_ok=True)
        if was_loaded:
            _run("modprobe", "xfs", check=False)
    assert Path("/sys/module/xfs").is_dir() == was_loaded
