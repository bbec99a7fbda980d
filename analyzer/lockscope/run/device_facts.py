"""The disks a window's requests went to, as the host shows them when the window closes:
each one's queue (block_queues.py), the traced files' devices on it, and the I/O limits
the traced processes' cgroups set on it (io_limits.py). What the verdict needs to tell a
busy device from I/O held before it (analysis/device_busy.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..schema import DeviceFacts
from .block_queues import disk_of, queue_facts
from .io_limits import io_limits


def traced_pids(trace: Mapping[str, Any] | None) -> list[int]:
    return sorted({int(t["pid"]) for t in (trace or {}).get("threads") or [] if t.get("pid")})


def device_facts(trace: Mapping[str, Any] | None, pids: list[int] | None = None
                 ) -> list[DeviceFacts]:
    """One entry per disk of the trace's block[] and of its files' devices. ``pids``: whose
    cgroups to read (default: the processes of the trace's threads)."""
    trace = trace or {}
    file_devs = {str(dev) for e in trace.get("dio") or [] if (dev := e.get("dev"))}
    by_disk: dict[str, set[str]] = {b["dev"]: set() for b in trace.get("block") or []
                                    if b.get("dev")}
    for dev in file_devs:
        by_disk.setdefault(disk_of(dev), set()).add(dev)
    limits, why = io_limits(traced_pids(trace) if pids is None else pids)
    out: list[DeviceFacts] = []
    for disk in sorted(by_disk):
        q = queue_facts(disk)
        out.append({"dev": disk, "name": q["name"], "file_devs": sorted(by_disk[disk]),
                    "scheduler": q["scheduler"], "nr_requests": q["nr_requests"],
                    "hw_tags": q["hw_tags"], "queue_depth": q["queue_depth"],
                    "wbt_lat_usec": q["wbt_lat_usec"],
                    "io_limits": [lim for lim in limits if lim["dev"] == disk],
                    "limits_read": why})
    return out
