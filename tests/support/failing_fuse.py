"""A FUSE filesystem that passes every call through to a directory, and fails the data
calls (read, write, fsync) with EIO while a control file exists: a disk that fails on
command, under a loop image. Used by tests/kernel/faults/test_faults_device.py; run as

    python failing_fuse.py BACKING_DIR MOUNTPOINT CONTROL_FILE

in the foreground until unmounted. fusepy (pinned in requirements-dev.txt) on Debian's
libfuse2."""

from __future__ import annotations

import errno
import os
import sys

from fuse import FUSE, FuseOSError, Operations


class FailingPassthrough(Operations):
    def __init__(self, root: str, control: str) -> None:
        self.root = os.path.realpath(root)
        self.control = control
        self.failed_calls = 0

    def _path(self, path: str) -> str:
        return os.path.join(self.root, path.lstrip("/"))

    def _check(self) -> None:
        if os.path.exists(self.control):
            raise FuseOSError(errno.EIO)

    # metadata: always passed through
    def access(self, path, mode):
        if not os.access(self._path(path), mode):
            raise FuseOSError(errno.EACCES)

    def chmod(self, path, mode):
        os.chmod(self._path(path), mode)

    def chown(self, path, uid, gid):
        os.chown(self._path(path), uid, gid)

    def getattr(self, path, fh=None):
        st = os.lstat(self._path(path))
        return {k: getattr(st, k) for k in ("st_atime", "st_ctime", "st_gid", "st_mode",
                                            "st_mtime", "st_nlink", "st_size", "st_uid",
                                            "st_blocks")}

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._path(path))

    def mkdir(self, path, mode):
        os.mkdir(self._path(path), mode)

    def rmdir(self, path):
        os.rmdir(self._path(path))

    def unlink(self, path):
        os.unlink(self._path(path))

    def rename(self, old, new):
        os.rename(self._path(old), self._path(new))

    def statfs(self, path):
        st = os.statvfs(self._path(path))
        return {k: getattr(st, k) for k in ("f_bavail", "f_bfree", "f_blocks", "f_bsize",
                                            "f_favail", "f_ffree", "f_files", "f_flag",
                                            "f_frsize", "f_namemax")}

    def utimens(self, path, times=None):
        os.utime(self._path(path), times)

    def create(self, path, mode, fi=None):
        return os.open(self._path(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)

    def open(self, path, flags):
        return os.open(self._path(path), flags & ~os.O_DIRECT)

    def truncate(self, path, length, fh=None):
        if fh is not None:
            os.ftruncate(fh, length)
        else:
            os.truncate(self._path(path), length)

    def release(self, path, fh):
        os.close(fh)

    def flush(self, path, fh):
        return 0

    # data: failing on command
    def read(self, path, size, offset, fh):
        self._check()
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        self._check()
        return os.pwrite(fh, data, offset)

    def fsync(self, path, datasync, fh):
        self._check()
        os.fdatasync(fh) if datasync else os.fsync(fh)


def main() -> None:
    root, mountpoint, control = sys.argv[1:4]
    FUSE(FailingPassthrough(root, control), mountpoint, foreground=True, nothreads=False,
         fsname="lockscope-failing")


if __name__ == "__main__":
    main()
