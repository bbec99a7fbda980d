"""The I/O limits cgroups set on processes, as the host shows them: cgroup v1's
blk-throttle files (``blkio.throttle.{read,write}_{iops,bps}_device``) of each process's
own cgroup, and v2's ``io.max`` of its cgroup and every ancestor. On v2 a group's limit
holds its whole subtree; on v1 each group is throttled alone, whatever its place in the
hierarchy (block/blk-throttle.c, throtl_pd_init(): the parent service queue is the
parent group's only on the default hierarchy, in every kernel lockscope supports).
Read-only. Not read: io.latency and io.cost, which hold I/O by targets, not rates
(docs/block-layer.md)."""

from __future__ import annotations

from pathlib import Path

from ..schema import IoLimit

PROC = Path("/proc")
V1_FILES = {"blkio.throttle.read_iops_device": "read IOPS",
            "blkio.throttle.write_iops_device": "write IOPS",
            "blkio.throttle.read_bps_device": "read bytes/s",
            "blkio.throttle.write_bps_device": "write bytes/s"}
V2_KEYS = {"riops": "read IOPS", "wiops": "write IOPS",
           "rbps": "read bytes/s", "wbps": "write bytes/s"}


def cgroup_mounts(mountinfo: Path = PROC / "self" / "mountinfo") -> tuple[Path | None, Path | None]:
    """(the v1 hierarchy with the blkio controller, the v2 hierarchy), None where absent."""
    v1 = v2 = None
    try:
        lines = mountinfo.read_text().splitlines()
    except OSError:
        return None, None
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        if tail[0] == "cgroup2" and v2 is None:
            v2 = Path(fields[4])
        elif tail[0] == "cgroup" and "blkio" in tail[2].split(",") and v1 is None:
            v1 = Path(fields[4])
    return v1, v2


def process_cgroups(pid: int) -> tuple[str | None, str | None]:
    """(its v1 blkio cgroup, its v2 cgroup) from /proc/PID/cgroup; None where it has none."""
    v1 = v2 = None
    for line in (PROC / str(pid) / "cgroup").read_text().splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            v2 = parts[2]
        elif "blkio" in parts[1].split(","):
            v1 = parts[2]
    return v1, v2


def _own(cgroup: str) -> list[str]:
    return [cgroup.rstrip("/") or "/"]


def _up(cgroup: str) -> list[str]:
    """The cgroup and its ancestors, the root last: "/a/b" -> ["/a/b", "/a", "/"]."""
    out, path = [], cgroup.rstrip("/") or "/"
    while True:
        out.append(path)
        if path == "/":
            return out
        path = path.rsplit("/", 1)[0] or "/"


def _v1_limits(root: Path, cgroup: str) -> list[tuple[str, str, str, str, int]]:
    found = []
    for name, what in V1_FILES.items():
        f = root / cgroup.lstrip("/") / name
        try:
            text = f.read_text()
        except OSError:
            continue
        for line in text.splitlines():
            dev, _, value = line.partition(" ")
            if value.strip().isdigit():
                found.append((dev, str(f), name, what, int(value)))
    return found


def _v2_limits(root: Path, cgroup: str) -> list[tuple[str, str, str, str, int]]:
    f = root / cgroup.lstrip("/") / "io.max"
    try:
        text = f.read_text()
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        dev, *pairs = line.split()
        for pair in pairs:
            key, _, value = pair.partition("=")
            if key in V2_KEYS and value.isdigit():
                found.append((dev, str(f), f"io.max {key}", V2_KEYS[key], int(value)))
    return found


def io_limits(pids: list[int], mountinfo: Path = PROC / "self" / "mountinfo"
              ) -> tuple[list[IoLimit], str | None]:
    """Every rate limit set on a device in the cgroups of ``pids`` or their ancestors, and
    None, or why none could be read (no process left, no cgroup hierarchy)."""
    v1_root, v2_root = cgroup_mounts(mountinfo)
    if v1_root is None and v2_root is None:
        return [], "no cgroup hierarchy with an I/O controller is mounted"
    limits: dict[tuple[str, str], IoLimit] = {}
    read = 0
    for pid in sorted(set(pids)):
        try:
            v1, v2 = process_cgroups(pid)
        except OSError:
            continue  # exited
        read += 1
        for root, cgroup, reader, levels in ((v1_root, v1, _v1_limits, _own),
                                             (v2_root, v2, _v2_limits, _up)):
            if root is None or cgroup is None:
                continue
            for level in levels(cgroup):
                for dev, path, key, what, value in reader(root, level):
                    entry = limits.setdefault((path, f"{dev} {key}"), {
                        "dev": dev, "cgroup": level, "file": path, "key": key, "what": what,
                        "value": value, "pids": []})
                    if pid not in entry["pids"]:
                        entry["pids"].append(pid)
    if not read:
        return [], "the traced processes had exited: their cgroups were not read"
    return sorted(limits.values(), key=lambda e: (e["dev"], e["file"], e["key"])), None
