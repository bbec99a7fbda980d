"""A small program that makes known durability calls on files in one directory, for
test_record_durability.py: it waits for a line on stdin, then per file does exactly the
calls below, prints the counts as JSON and exits.

- ``plain``: buffered writes, ``sync_file_range`` (write, then wait), ``fdatasync``, ``fsync``;
- ``dsync``: buffered writes on a file opened ``O_DSYNC``;
- ``osync``: buffered writes on a file opened ``O_SYNC``;
- ``direct``: 4 KiB ``O_DIRECT | O_DSYNC`` overwrites of a written file.
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import sys

# include/uapi/linux/fs.h
SYNC_FILE_RANGE_WAIT_BEFORE, SYNC_FILE_RANGE_WRITE, SYNC_FILE_RANGE_WAIT_AFTER = 1, 2, 4
N = {"plain_writes": 40, "sync_file_range": 30, "fdatasync": 7, "fsync": 5,
     "dsync_writes": 25, "osync_writes": 15, "direct_writes": 20}


def main(directory: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.sync_file_range.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64,
                                     ctypes.c_uint]
    buf = mmap.mmap(-1, 4096)  # page-aligned, as O_DIRECT needs
    buf.write(b"x" * 4096)
    paths = {k: os.path.join(directory, k) for k in ("plain", "dsync", "osync", "direct")}
    with open(paths["direct"], "wb") as f:
        f.write(b"\0" * (N["direct_writes"] << 12))
        os.fsync(f.fileno())
    fds = {"plain": os.open(paths["plain"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
           "dsync": os.open(paths["dsync"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_DSYNC),
           "osync": os.open(paths["osync"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_SYNC),
           "direct": os.open(paths["direct"], os.O_WRONLY | os.O_DIRECT | os.O_DSYNC)}
    print("ready", flush=True)
    sys.stdin.readline()
    fd = fds["plain"]
    for i in range(N["plain_writes"]):
        os.pwrite(fd, buf, i << 12)
    flags = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER
    for i in range(N["sync_file_range"]):
        os.pwrite(fd, buf, (i % N["plain_writes"]) << 12)  # dirty, so that it writes back
        if libc.sync_file_range(fd, 0, 0, flags) != 0:
            raise OSError(ctypes.get_errno(), "sync_file_range")
    N["plain_writes"] += N["sync_file_range"]
    for _ in range(N["fdatasync"]):
        os.fdatasync(fd)
    for _ in range(N["fsync"]):
        os.fsync(fd)
    for name in ("dsync", "osync", "direct"):
        for i in range(N[f"{name}_writes"]):
            os.pwrite(fds[name], buf, i << 12)
    for fd in fds.values():
        os.close(fd)
    print(json.dumps({"paths": paths, "counts": N}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
