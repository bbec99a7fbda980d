"""FIEMAP (FS_IOC_FIEMAP, include/uapi/linux/fiemap.h) through fcntl: the extent state of
every filesystem block of a file, as the filesystem reports it, independent of lockscope.

No tests here; test_record_dio_states.py imports it.
"""

from __future__ import annotations

import fcntl
import os
import struct

FS_IOC_FIEMAP = 0xC020660B          # _IOWR('f', 11, struct fiemap)
FIEMAP_FLAG_SYNC = 0x1              # write dirty pages back first
FIEMAP_EXTENT_LAST = 0x1
FIEMAP_EXTENT_UNWRITTEN = 0x800
_HEAD = struct.Struct("=QQIIII")     # fm_start, fm_length, fm_flags, mapped, count, reserved
# logical, physical, length, reserved64[2], flags, reserved[3]
_EXTENT = struct.Struct("=QQQQQIIII")
_BATCH = 256


def extents(path: str) -> list[tuple[int, int, int]]:
    """(logical, length, flags) of every extent of the file, in order."""
    out: list[tuple[int, int, int]] = []
    start = 0
    with open(path, "rb") as f:
        while True:
            buf = bytearray(_HEAD.pack(start, 2**64 - 1 - start, FIEMAP_FLAG_SYNC, 0, _BATCH, 0)
                            + bytes(_EXTENT.size * _BATCH))
            fcntl.ioctl(f.fileno(), FS_IOC_FIEMAP, buf)
            mapped = _HEAD.unpack_from(buf)[3]
            if not mapped:
                return out
            for i in range(mapped):
                logical, _, length, _, _, flags, *_ = _EXTENT.unpack_from(
                    buf, _HEAD.size + i * _EXTENT.size)
                out.append((logical, length, flags))
                if flags & FIEMAP_EXTENT_LAST:
                    return out
            start = out[-1][0] + out[-1][1]


def block_states(path: str, region: int) -> list[str]:
    """'hole', 'unwritten' or 'written' for each fs block of [0, region)."""
    bs = os.statvfs(path).f_bsize
    states = ["hole"] * (region // bs)
    for logical, length, flags in extents(path):
        state = "unwritten" if flags & FIEMAP_EXTENT_UNWRITTEN else "written"
        for b in range(logical // bs, min(len(states), (logical + length + bs - 1) // bs)):
            states[b] = state
    return states
