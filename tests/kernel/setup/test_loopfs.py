"""The loop-filesystem fixtures: real ext4/XFS, O_DIRECT round trip, nothing left behind."""

import mmap
import os
import subprocess

import pytest

from lockscope.errors import UsageError
from lockscope.run import loopfs

from patience import patience

pytestmark = pytest.mark.kernel


def _odirect_roundtrip(path: str, nblocks: int = 64) -> None:
    size = 4096 * nblocks
    wbuf = mmap.mmap(-1, size)  # page-aligned, as O_DIRECT needs
    wbuf.write(os.urandom(size))
    fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_DIRECT, 0o600)
    try:
        assert os.pwritev(fd, [wbuf], 0) == size
        os.fsync(fd)
        rbuf = mmap.mmap(-1, size)
        assert os.preadv(fd, [rbuf], 0) == size
    finally:
        os.close(fd)
    assert rbuf[:] == wbuf[:]


def _mounted_type(mountpoint: str) -> str:
    for line in open("/proc/mounts"):
        dev, mnt, fstype = line.split()[:3]
        if mnt == mountpoint:
            return fstype
    return ""


def test_odirect_write_reads_back(any_fs):
    assert _mounted_type(any_fs.mountpoint) == any_fs.fstype
    assert any_fs.device.startswith("/dev/loop")
    dio = open(f"/sys/block/{os.path.basename(any_fs.device)}/loop/dio").read().strip()
    assert dio == "1", "loop device must pass O_DIRECT through to the backing file"
    _odirect_roundtrip(str(any_fs.path / "data"))


def test_destroy_leaves_nothing(loopfs_factory):
    fs = loopfs_factory("xfs", 512 << 20)
    device, image, mnt = fs.device, fs.image, fs.mountpoint
    fs.destroy()
    assert _mounted_type(mnt) == ""
    assert not os.path.exists(image)
    listing = subprocess.run(["losetup", "-l", "-n", "-O", "NAME"], capture_output=True,
                             text=True).stdout.split()
    assert device not in listing


def test_stale_ledger_from_dead_process_is_cleaned(loopfs_factory):
    fs = loopfs_factory("ext4", 512 << 20)
    # Pretend the owner was SIGKILLed: point the ledger at a pid that is gone.
    dead = subprocess.Popen(["true"])
    dead.wait()
    fs.owner_pid = dead.pid
    fs._save()
    cleaned = loopfs.cleanup_stale()
    assert fs.mountpoint in cleaned
    assert _mounted_type(fs.mountpoint) == ""
    assert not os.path.exists(fs.image)


def test_never_touches_existing_file(tmp_path):
    existing = tmp_path / "precious.img"
    existing.write_bytes(b"keep me")
    fs = loopfs.LoopFilesystem(fstype="ext4", image=str(existing),
                               mountpoint=str(tmp_path / "mnt"))
    with pytest.raises(FileExistsError):
        fs.create(64 << 20)
    assert existing.read_bytes() == b"keep me"


def test_unknown_fstype_is_usage_error(tmp_path):
    with pytest.raises(UsageError):
        loopfs.LoopFilesystem(fstype="btrfs", image=str(tmp_path / "x"),
                              mountpoint=str(tmp_path / "m")).create(1 << 20)


def test_wait_for_frees_waits_only_for_a_live_freeing_child(tmp_path, monkeypatch):
    monkeypatch.setattr(loopfs, "LEDGER_DIR", tmp_path)
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / "freeing-old").write_text(str(dead.pid))
    loopfs.wait_for_frees(timeout=patience(60))  # returns at once: nobody is freeing
    assert not (tmp_path / "freeing-old").exists()
    live = subprocess.Popen(["sleep", "60"])
    try:
        (tmp_path / "freeing-now").write_text(str(live.pid))
        loopfs.wait_for_frees(timeout=0.3)  # gives up; the marker stays for the child
        assert (tmp_path / "freeing-now").exists()
        live.kill()
        live.wait()
        loopfs.wait_for_frees(timeout=patience(60))  # a killed child leaves a stale marker
        assert not (tmp_path / "freeing-now").exists()
    finally:
        if live.poll() is None:
            live.kill()
            live.wait()


def _journal_threads(device: str) -> list[str]:
    """jbd2's commit thread is named after the device it journals (jbd2/loopN-8)."""
    name = f"jbd2/{os.path.basename(device)}-"
    return [comm for comm in (_comm(p) for p in os.listdir("/proc") if p.isdigit())
            if comm.startswith(name)]


def _comm(pid: str) -> str:
    try:
        return open(f"/proc/{pid}/comm").read().strip()
    except OSError:
        return ""


@pytest.mark.parametrize("fstype,journaled", [("ext2", False), ("ext3", True)])
def test_ext2_ext3_images(loopfs_factory, fstype, journaled):
    fs = loopfs_factory(fstype, 256 << 20)
    assert _mounted_type(fs.mountpoint) == fstype
    # the journal is there (ext3) or not (ext2), seen from the kernel's own thread
    assert bool(_journal_threads(fs.device)) == journaled
    _odirect_roundtrip(str(fs.path / "data"))


def test_concurrent_images_of_one_type_have_their_own_ledger_entries(tmp_path):
    a, b = (loopfs.LoopFilesystem(fstype="ext4", image=str(tmp_path / d / "ext4.img"),
                                  mountpoint=str(tmp_path / d / "mnt")) for d in ("a", "b"))
    assert a._ledger() != b._ledger()


def test_a_failed_mount_is_told_by_its_reason_not_its_dmesg_hint():
    """util-linux's mount (2.38 on) adds a line after its reason; the reason is kept."""
    said = ("mount: /m: unknown filesystem type 'xfs'.\n"
            "       dmesg(1) may have more information after failed mount system call.\n")
    assert loopfs._error_line(said) == "mount: /m: unknown filesystem type 'xfs'."
    assert loopfs._error_line("mkfs.xfs: too small\nUsage: mkfs.xfs ...\n") == \
        "mkfs.xfs: too small"
