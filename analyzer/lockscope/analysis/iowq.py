"""io_uring requests io-wq ran one at a time per file: the wait class ``io_uring_hashed``
and its cause (rules_iouring.py).

The recorder follows each hashed O_DIRECT request from its queueing to io-wq to the start
of its direct I/O in a worker (bpf/recorder/kern/iowq.bpf.inc): ``dio[].io_wq_hashed``.
The class is the time of the requests queued while another of the same file on their ring
was queued or in flight (``behind``): request time, not thread time. Threads of an
io_uring program wait for completions in io_uring_enter (``idle`` in
analysis/waitclass.py), so the requests' own wait is what names the loss: one request
waiting all window counts as one thread lost. Where the recorder did not measure it (no
io_uring group, an older recorder), the class is absent and ``measured`` false: never a
zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..schema import (
    Cause,
    DioEntry,
    HowRow,
    IoUringHashed,
    IoUringHashedFile,
    Trace,
    WaitClassEntry,
)
from .kernel_release import KernelVersion
from .rule_types import Holds
from .rules_iouring import HASHED, PARALLEL_DIO_FS
from .wait_classes import BY_KEY

CLASS = "io_uring_hashed"
NAME = BY_KEY[CLASS].words
MIN_SHARE = 0.01    # of the file's DIO writes hashed and waited behind another: a cause


def add_behind_ns(section: Mapping[str, Any], classes: dict[str, float]) -> None:
    """The class's request time in one recorder section (a document or one interval of
    its series) into classes: the requests queued behind another of the same file. Only
    where the recorder measured it (its files' entries carry io_wq_hashed only then):
    absent, no class, never a zero."""
    hashed = [e["io_wq_hashed"] for e in section.get("dio") or []
              if isinstance(e, Mapping) and isinstance(e.get("io_wq_hashed"), Mapping)]
    if hashed:
        classes[CLASS] = float(sum((h.get("behind") or {}).get("total_ns", 0)
                                   for h in hashed))


def hashed_summary(trace: Trace) -> IoUringHashed:
    """Per file and in all, from a recorder document (a trace)."""
    top = trace.get("io_wq_hashed")
    if not isinstance(top, dict):
        return _summary(False, "the recording predates io_wq_hashed", [])
    measured = bool(top.get("measured"))
    files = [_file(e) for e in trace.get("dio") or [] if measured and e.get("io_wq_hashed")]
    return _summary(measured, None if measured else (top.get("reason") or "not measured"),
                    [f for f in files if f["queued"] or f["unhashed"] or f["waited_ns"]])


def _file(e: DioEntry) -> IoUringHashedFile:
    h = e.get("io_wq_hashed") or {}
    waited, behind = h.get("waited") or {}, h.get("behind") or {}
    return {"path": e.get("path"), "dev": e.get("dev"), "ino": e.get("ino"),
            "queued": int(h.get("queued", 0)), "unhashed": int(h.get("unhashed", 0)),
            "waited_ns": int(waited.get("total_ns", 0)),
            "behind": int(behind.get("count", 0)), "behind_ns": int(behind.get("total_ns", 0))}


def _summary(measured: bool, reason: str | None,
             files: list[IoUringHashedFile]) -> IoUringHashed:
    files.sort(key=lambda f: -f["behind_ns"])
    return {"measured": measured, "reason": reason,
            "queued": sum(f["queued"] for f in files),
            "unhashed": sum(f["unhashed"] for f in files),
            "waited_ns": sum(f["waited_ns"] for f in files),
            "behind": sum(f["behind"] for f in files),
            "behind_ns": sum(f["behind_ns"] for f in files), "files": files}


def hashed_wait_class(s: IoUringHashed, observed_ns: float, total_ns: float = 0.0,
                      lost_ns: float = 0.0) -> WaitClassEntry | None:
    """The class entry (None where not measured); shares against the thread time and loss
    that already count it."""
    if not s["measured"]:
        return None
    ns = float(s["behind_ns"])
    how: list[HowRow] = [
        {"method": "io-wq hash", "detail": f"{_name(f)}: {f['behind']} requests queued "
         "behind another of the file's", "ns": float(f["behind_ns"])}
        for f in s["files"] if f["behind_ns"]]
    return {"class": CLASS, "name": NAME, "ns": ns,
            "threads": ns / observed_ns if observed_ns else 0.0,
            "share": ns / total_ns if total_ns else 0.0,
            "loss_share": ns / lost_ns if lost_ns else 0.0, "how": how[:6]}


def _name(f: IoUringHashedFile) -> str:
    return f["path"] or f"{f['dev']}:{f['ino']}"


def _range(fstype: str, f: IoUringHashedFile, version: KernelVersion | None) -> Holds:
    """The version's range, unless it says the filesystem's O_DIRECT writes are not hashed
    and they were: then the range whose rule hashes them (a measurement wins)."""
    h = HASHED.holds_for(version)
    if h.since and fstype in PARALLEL_DIO_FS and f["queued"]:
        return HASHED.ranges[0]
    return h


def hashed_cause(fstype: str, f: IoUringHashedFile, dio_writes: int,
                 version: KernelVersion | None) -> Cause | None:
    """The cause for one file's hashed waits, when they hold MIN_SHARE of its writes."""
    if not f["behind_ns"] or not dio_writes or f["behind"] < MIN_SHARE * dio_writes:
        return None
    running = HASHED.holds_for(version)
    h = _range(fstype, f, version)
    evidence = (f"{f['queued']} of the file's {dio_writes} O_DIRECT writes were queued to "
                f"io-wq hashed, {f['behind']} of them behind another of the file's: "
                f"{f['behind_ns'] / 1e9:.2f} s queued in all")
    if h is not running:
        evidence += (f"; {fstype} sets the parallel-DIO flag from 6.4, yet these were "
                     "hashed: this kernel behaves like < 6.4 (an IOPOLL ring, or an older "
                     "rule kept?)")
    remedy = h.remedy + (f"; {h.later}" if h is running and h.later else "")
    return {"reason": h.reason or "", "rule": h.rule, "kernel_source": h.source,
            "kernel_range": h.range_text(), "commit": h.commit, "evidence": evidence,
            "fraction": round(f["behind"] / dio_writes, 4), "remedy": remedy, "mode": None}
