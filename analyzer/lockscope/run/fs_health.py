"""Whether the filesystem under a point stayed healthy: the errors its kernel side
counted, and whether it went read-only. Read between points, while a point's engine lays
its files out (a process stuck on a failing device may never say ``ready`` nor exit), and
after its timed phase (a buffered write that failed later shows only here).

ext4 counts the errors it reported in ``/sys/fs/ext4/<dev>/errors_count``, with the last
one's function and code (fs/ext4/sysfs.c; ``save_error_info`` in fs/ext4/super.c counts
them, and ``ext4_errno_to_code`` stores the errno as an ``EXT4_ERR_*`` code of
fs/ext4/ext4.h, from 5.10). A filesystem that stops writing on an error (ext4
``errors=remount-ro``) shows ``ro`` or, from 6.15, ``emergency_ro`` in /proc/mounts; XFS
shuts down instead and fails every later call with EIO. Other filesystems are watched for
the read-only flag alone.
"""

from __future__ import annotations

import errno as errno_names
import os
from pathlib import Path

from .host import mount_of
from .point_errors import PointFailed

EXT4_SYSFS = Path("/sys/fs/ext4")
# EXT4_ERR_UNKNOWN (1) onwards, in the order of fs/ext4/ext4.h
EXT4_ERR_CODES = ("", "EIO", "ENOMEM", "EFSBADCRC", "EFSCORRUPTED", "ENOSPC", "ENOKEY",
                  "EROFS", "EFBIG", "EEXIST", "ERANGE", "EOVERFLOW", "EBUSY", "ENOTDIR",
                  "ENOTEMPTY", "ESHUTDOWN", "EFAULT")
READ_ONLY = {"ro", "emergency_ro"}


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


class FsHealth:
    """A filesystem watched from now on; ``check()`` raises PointFailed once it reported
    errors or turned read-only since."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = str(path)
        entry = mount_of(self.path)
        self.mountpoint = entry.get("mountpoint", "")
        self.device = entry.get("device", "")
        self.fstype = entry.get("fstype", "")
        # ext4's sysfs directory is named by the kernel's name of the device (sb->s_id:
        # fs/ext4/sysfs.c, ext4_register_sysfs), dm-0 for /dev/mapper/NAME (a link)
        self._sysfs = EXT4_SYSFS / Path(os.path.realpath(self.device)).name \
            if self.device else None
        self.was_rw = not READ_ONLY & set(entry.get("mount_options", "").split(","))
        self.errors = self._errors_count()

    def _errors_count(self) -> int | None:
        if self._sysfs is None or not self._sysfs.is_dir():
            return None
        text = _read(self._sysfs / "errors_count")
        return int(text) if text.isdigit() else None

    def problem(self) -> str | None:
        """What went wrong since the start, in words; None while healthy."""
        count = self._errors_count()
        if count is not None and self.errors is not None and count > self.errors:
            return self._ext4_error(count - self.errors)
        entry = mount_of(self.path)
        if entry.get("mountpoint") != self.mountpoint:
            return f"{self.fstype} on {self.device} is no longer mounted at {self.mountpoint}"
        if self.was_rw and READ_ONLY & set(entry.get("mount_options", "").split(",")):
            return f"{self.fstype} on {self.device} went read-only"
        return None

    def _ext4_error(self, new: int) -> str:
        assert self._sysfs is not None
        code = _read(self._sysfs / "last_error_errcode")
        func = _read(self._sysfs / "last_error_func")
        name = ""
        if code.isdigit() and 1 <= int(code) <= len(EXT4_ERR_CODES):
            name = EXT4_ERR_CODES[int(code) - 1] or "an unknown error"
            num = getattr(errno_names, name, None)
            if name.startswith("EFS"):  # the kernel's own names, not in errno
                num = None
            if num is not None:
                name = f"{os.strerror(num)} ({name})"
        return (f"ext4 on {self.device} reported {new} error(s)"
                + (f", the last {name}" if name else "") + (f" in {func}" if func else ""))

    def check(self) -> None:
        why = self.problem()
        if why:
            raise PointFailed(why, stderr_line=why)
