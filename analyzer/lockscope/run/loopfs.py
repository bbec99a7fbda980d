"""Loop-backed scratch filesystems: a sparse image, a direct-I/O loop device, a mount.

Everything made here is recorded in a ledger under ``/run/lockscope`` before it
exists, so that a crash or SIGKILL leaves enough behind for the next run to
unmount, detach and delete exactly what lockscope made, and nothing else.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..errors import LockscopeError, UsageError
from .host import mount_of
from .pids import pid_exists

LEDGER_DIR = Path(os.environ.get("LOCKSCOPE_LEDGER_DIR", "/run/lockscope/loopfs"))
# -K / nodiscard: discarding a sparse image only costs time. The ext* inode tables and
# journal are zeroed at mkfs (cheap on a sparse image), not by the kernel's ext4lazyinit
# thread in the background of the first measurements.
_EXT_OPTS = ["-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0"]
MKFS = {
    "ext4": ["mkfs.ext4", "-q", "-F", *_EXT_OPTS],
    "xfs": ["mkfs.xfs", "-q", "-f", "-K"],
    # ext2 (no journal) and ext3 (a journal, block maps, no extents or delayed
    # allocation): the pair that shows what the journal costs, beside ext4.
    "ext2": ["mke2fs", "-q", "-F", "-t", "ext2", *_EXT_OPTS],
    "ext3": ["mke2fs", "-q", "-F", "-t", "ext3", *_EXT_OPTS],
}


@dataclass
class LoopFilesystem:
    """One image + loop device + mount point made by lockscope."""

    fstype: str
    image: str
    mountpoint: str
    device: str = ""
    owner_pid: int = field(default_factory=os.getpid)
    mounted: bool = False
    image_created: bool = False

    @property
    def path(self) -> Path:
        return Path(self.mountpoint)

    def _ledger(self) -> Path:
        # Named by the image's private directory: every ext4 image is "ext4.img", and
        # filesystems of concurrent runs must not share (and overwrite) one entry.
        return LEDGER_DIR / (Path(self.image).parent.name + ".json")

    def _save(self) -> None:
        LEDGER_DIR.mkdir(parents=True, exist_ok=True)
        tmp = self._ledger().with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self)))
        tmp.replace(self._ledger())

    def create(self, size_bytes: int, mkfs_options: list[str] | None = None,
               mount_options: str | None = None) -> LoopFilesystem:
        """Make the image, attach it with --direct-io=on, mkfs and mount it."""
        if self.fstype not in MKFS:
            raise UsageError(f"unsupported filesystem '{self.fstype}' "
                             f"(use {', '.join(MKFS)})")
        self._save()  # ledger first: a crash below is still cleaned up
        try:
            # O_EXCL: never reuse or truncate a file that is already there.
            fd = os.open(self.image, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            self.image_created = True
            self._save()
            try:
                os.ftruncate(fd, size_bytes)
            finally:
                os.close(fd)
            self.device = _run(["losetup", "--find", "--show", "--direct-io=on",
                                self.image]).strip()
            self._save()
            _run(MKFS[self.fstype] + list(mkfs_options or []) + [self.device])
            Path(self.mountpoint).mkdir(parents=True, exist_ok=True)
            cmd = ["mount", "-t", self.fstype]
            if mount_options:
                cmd += ["-o", mount_options]
            _run(cmd + [self.device, self.mountpoint])
            self.mounted = True
            self._save()
        except BaseException:
            self.destroy()
            raise
        return self

    def destroy(self, free_later: bool = False) -> None:
        """Unmount, detach and delete; safe to call more than once. free_later: the
        image's name goes now, its blocks are freed by a short-lived child afterwards."""
        teardown(self, free_later)

    def __enter__(self) -> LoopFilesystem:
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()


def _run(cmd: list[str]) -> str:
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise UsageError(f"{cmd[0]} not found: install it (make demo installs it)") from exc
    if res.returncode != 0:
        raise LockscopeError(f"{' '.join(cmd)}: "
                             f"{_error_line(res.stderr or res.stdout) or f'exit {res.returncode}'}")
    return res.stdout


# what util-linux's mount (from 2.38, libmount) adds after the line that says why
MOUNT_HINT = "dmesg(1) may have more information"


def _error_line(text: str) -> str:
    """The line that says why a tool failed: its last, or the last before the usage text
    it printed after it (mkfs.xfs does), never mount's hint to read dmesg."""
    lines = [line.strip() for line in text.strip().splitlines()
             if line.strip() and not line.strip().startswith(MOUNT_HINT)]
    for i, line in enumerate(lines):
        if line.startswith("Usage:"):
            lines = lines[:i] or lines
            break
    return lines[-1] if lines else ""


def _is_mounted(mountpoint: str) -> bool:
    return mount_of(mountpoint).get("mountpoint") == os.path.realpath(mountpoint)


def _loop_backing(device: str) -> str:
    try:
        return Path(f"/sys/block/{Path(device).name}/loop/backing_file").read_text().strip()
    except OSError:
        return ""


# how long a just-killed writer may hold the mount, or a lazy unmount the loop device
UNMOUNT_WAIT_S = 15.0
FREEING_GLOB = "freeing-*"
FREEING_WAIT_S = 120


def _unlink_freeing_later(path: str) -> None:
    """Remove the name now and leave the freeing of the blocks to a child: freeing a
    fragmented image of several GiB takes seconds of kernel time, paid by the last close
    of the unlinked file. The child holds the file as its stdin, closes it (that frees
    the blocks) and then removes a marker, so that the next filesystem made here waits
    for the disk to be quiet (wait_for_frees)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        os.unlink(path)
        return
    try:
        marker = LEDGER_DIR / f"freeing-{Path(path).parent.name}"
        try:
            LEDGER_DIR.mkdir(parents=True, exist_ok=True)
            child = subprocess.Popen(
                ["sh", "-c", 'sleep 1; exec 0<&-; rm -f "$1"', "sh", str(marker)],
                stdin=fd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True)
            marker.write_text(str(child.pid))  # before it can remove it: it sleeps first
        except OSError:
            marker.unlink(missing_ok=True)  # then the close below frees them here
        os.unlink(path)
    finally:
        os.close(fd)


def wait_for_frees(timeout: float = FREEING_WAIT_S) -> None:
    """Until no image deleted by an earlier run is still being freed (bounded): its
    disk work would otherwise run beside this run's measurements."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = False
        for marker in LEDGER_DIR.glob(FREEING_GLOB):
            try:
                pid = int(marker.read_text())
            except (OSError, ValueError):
                continue
            if _running(pid):
                busy = True
            else:
                marker.unlink(missing_ok=True)  # its child died before it could say so
        if not busy:
            return
        time.sleep(0.1)


def _running(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def teardown(fs: LoopFilesystem, free_later: bool = False) -> None:
    """Undo what the ledger says lockscope made, in reverse order. An image that cannot
    be deleted (its filesystem went read-only, or fails) stays in the ledger, for the
    next run to delete, and is one LockscopeError after the rest is undone."""
    if fs.mountpoint and _is_mounted(fs.mountpoint):
        deadline = time.monotonic() + UNMOUNT_WAIT_S
        while subprocess.run(["umount", fs.mountpoint], capture_output=True).returncode:
            if time.monotonic() >= deadline:
                subprocess.run(["umount", "-l", fs.mountpoint], capture_output=True)
                break
            time.sleep(0.1)  # a just-killed writer may still hold the mount busy
    # Only detach the device if it still points at our image.
    if fs.device and _loop_backing(fs.device).startswith(fs.image):
        subprocess.run(["losetup", "-d", fs.device], capture_output=True)
        # a device still in use (a lazy unmount's last user) is only marked to go when
        # that user does (drivers/block/loop.c, LO_FLAGS_AUTOCLEAR): wait for it, bounded
        deadline = time.monotonic() + UNMOUNT_WAIT_S
        while _loop_backing(fs.device).startswith(fs.image) and time.monotonic() < deadline:
            time.sleep(0.1)
    kept = ""
    if fs.image_created and os.path.exists(fs.image):
        try:
            if free_later:
                _unlink_freeing_later(fs.image)
            else:
                os.unlink(fs.image)
        except OSError as exc:
            kept = (f"the image {fs.image} could not be deleted: {exc.strerror} "
                    f"({errno.errorcode.get(exc.errno or 0, exc.errno)}); the next "
                    "lockscope run here deletes it")
    mp = Path(fs.mountpoint) if fs.mountpoint else None
    if mp and mp.is_dir() and not _is_mounted(str(mp)):
        try:
            mp.rmdir()
        except OSError:
            pass
    home = Path(fs.image).parent
    if home.name.startswith("lockscope-") and home.is_dir():
        try:
            home.rmdir()  # only when empty: the image and mount point went above
        except OSError:
            pass
    if kept:
        raise LockscopeError(kept)
    try:
        fs._ledger().unlink()
    except FileNotFoundError:
        pass



def cleanup_stale() -> list[str]:
    """Tear down filesystems left by lockscope processes that no longer exist, after
    stopping the servers such a process left running on them (procledger)."""
    from .procledger import cleanup_stale as stop_stale_processes

    stop_stale_processes()
    cleaned: list[str] = []
    if not LEDGER_DIR.is_dir():
        return cleaned
    for entry in sorted(LEDGER_DIR.glob("*.json")):
        try:
            fs = LoopFilesystem(**json.loads(entry.read_text()))
        except (OSError, ValueError, TypeError):
            continue
        if pid_exists(fs.owner_pid):
            continue
        try:
            teardown(fs)
        except LockscopeError:
            continue  # its image is still on a read-only or failing filesystem
        cleaned.append(fs.mountpoint)
    return cleaned


def image_dir(given: str | None = None) -> str:
    """Where loop images are made: ``given`` (--image-dir), else $LOCKSCOPE_IMAGE_DIR,
    else /var/tmp."""
    return given or os.environ.get("LOCKSCOPE_IMAGE_DIR", "/var/tmp")


def make_loopfs(fstype: str, size_bytes: int = 2 << 30, workdir: str | None = None,
                mkfs_options: list[str] | None = None,
                mount_options: str | None = None) -> LoopFilesystem:
    """Create and mount a fresh loop-backed filesystem under ``workdir``.

    The image lives in a new private directory so that its name can never
    collide with a user's file.
    """
    cleanup_stale()
    wait_for_frees()
    base = image_dir(workdir)
    Path(base).mkdir(parents=True, exist_ok=True)
    need = size_bytes // 64  # metadata of a fresh sparse image; data grows later
    if shutil.disk_usage(base).free < need:
        raise UsageError(f"not enough space in {base} for a {size_bytes >> 20} MiB image")
    home = tempfile.mkdtemp(prefix=f"lockscope-{fstype}-", dir=base)
    fs = LoopFilesystem(fstype=fstype, image=os.path.join(home, f"{fstype}.img"),
                        mountpoint=os.path.join(home, "mnt"))
    return fs.create(size_bytes, mkfs_options, mount_options)
