"""Host facts for results.json: kernel, CPUs, memory, and the device under each filesystem."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path
from typing import cast

from ..schema import FsFacts, Host


def _meminfo_bytes() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return 0


def dev_name(st_dev: int) -> str:
    """``MAJOR:MINOR`` of a device number, as the recorder writes ``dev``."""
    return f"{os.major(st_dev)}:{os.minor(st_dev)}"


def block_device_of(path: str) -> str:
    """Name of the block device holding ``path`` (e.g. vda), via /sys/dev/block."""
    dev = dev_name(os.stat(path).st_dev)
    try:
        return Path(f"/sys/dev/block/{dev}").resolve().name
    except OSError:
        return dev


def mounts() -> list[dict]:
    """The /proc/mounts entries: device, mountpoint, fstype, mount_options."""
    out = []
    for line in Path("/proc/mounts").read_text().splitlines():
        dev, mnt, fstype, opts = line.split()[:4]
        out.append({"device": dev, "mountpoint": mnt.replace("\\040", " "), "fstype": fstype,
                    "mount_options": opts})
    return out


def mount_of(path: str) -> dict:
    """The /proc/mounts entry whose mount point holds ``path`` (longest prefix)."""
    real = os.path.realpath(path)
    best: dict = {}
    for m in mounts():
        mnt = m["mountpoint"]
        if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and \
                len(mnt) >= len(best.get("mountpoint", "")):
            best = m
    return best


def cgroup2_root() -> Path | None:
    """The cgroup v2 mount (/sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid hosts)."""
    return next((Path(m["mountpoint"]) for m in mounts() if m["fstype"] == "cgroup2"), None)


def host_facts() -> Host:
    u = platform.uname()
    return {"kernel": u.release, "kernel_version": u.version, "machine": u.machine,
            "cpus": os.cpu_count(), "memory_bytes": _meminfo_bytes(),
            "hostname": socket.gethostname(), "filesystems": {}}


def filesystem_facts(path: str, image: str | None = None, image_bytes: int | None = None
                      ) -> FsFacts:
    m = mount_of(path)
    facts = {**m, "block_size": os.statvfs(path).f_bsize, "made_by_lockscope": image is not None}
    if image:
        facts.update({"backing": image, "backing_device": block_device_of(os.path.dirname(image)),
                      "image_bytes": image_bytes})
    return cast(FsFacts, facts)
