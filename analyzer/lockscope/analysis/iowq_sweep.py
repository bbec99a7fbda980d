"""io-wq's hashed queue in a sweep: analysis/iowq.py's measure per point, and whether the
verdict names it, with io_uring's rule for the kernel (rules_iouring.py).

A sweep's verdict splits the submitting threads' time, but an io_uring program's threads
wait for completions (waiting for work, ``other_offcpu``) while its requests queue behind
their file's hash. So the measure is request time: at each point, the time hashed
requests spent queued behind another of their file's (the recorder's ``behind``, the same
figure as attach's class) over the requests' own time, total_ios x mean lat_ns
(submission to completion) of each direction the engine reports. By Little's law a thread
that keeps iodepth requests in flight spends iodepth x its time per I/O on each request,
so a share of request time is the same share of the thread's time per I/O, and
explain.py's loss model applies to it unchanged. (Over runtime x iodepth x threads
instead, slots the submitter left empty would count as request time and dilute it.)
Where the recorder did not measure it, or the workload reports no latency, the share is
None and said so: never 0.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..schema import DirectionStats, IoUringHashedFile, Point, PointIoWq, Run, SweepIoWq
from .explain import explained_loss
from .iowq import hashed_cause, hashed_summary
from .kernel_release import KernelVersion, version_text
from .rules_iouring import HASHED
from .thresholds import EXPLAINS

# of request time at the top thread count behind the hash, and EXPLAINS of the lost
# efficiency: io-wq's hash is the limit. The hash holds request time as a wait class
# holds thread time, so the share that explains is the same.
REQUEST_SHARE = EXPLAINS


def request_ns(run: Run) -> float | None:
    """The run's requests' own time: total_ios x mean lat_ns per direction, or None
    when the workload reports no latency (a --command tool, an older engine)."""
    total, seen = 0.0, False
    for job in (run.get("workload") or {}).get("jobs") or []:
        for key in ("write", "read"):
            d: DirectionStats = job.get(key) or {}  # type: ignore[assignment]
            ios = float(d.get("total_ios", 0) or 0)
            lat = (d.get("lat_ns") or {}).get("mean")
            if ios and lat is not None:
                total += ios * float(lat)
                seen = True
    return total if seen else None


def _key(f: IoUringHashedFile) -> tuple[str | None, str | None, int | None]:
    return f["path"], f["dev"], f["ino"]


def point_hashed(runs: list[Run]) -> PointIoWq | None:
    """The point's traced runs together; None when none was traced. One run not
    measured makes the point not measured (its sum would be short)."""
    traced = [t for r in runs if (t := r.get("trace"))]
    if not traced:
        return None
    sums = [hashed_summary(t) for t in traced]
    unmeasured = next((s for s in sums if not s["measured"]), None)
    files: dict[tuple[str | None, str | None, int | None], IoUringHashedFile] = {}
    for s in sums:
        for f in s["files"]:
            acc = files.setdefault(_key(f), {**f, "queued": 0, "unhashed": 0, "waited_ns": 0,
                                             "behind": 0, "behind_ns": 0})
            for k in ("queued", "unhashed", "waited_ns", "behind", "behind_ns"):
                acc[k] += f[k]
    reqs = [request_ns(r) for r in runs if r.get("trace")]
    req = None if any(q is None for q in reqs) else sum(q or 0.0 for q in reqs)
    measured = unmeasured is None
    out: PointIoWq = {
        "measured": measured,
        "reason": unmeasured["reason"] if unmeasured else None,
        "queued": sum(s["queued"] for s in sums), "unhashed": sum(s["unhashed"] for s in sums),
        "waited_ns": sum(s["waited_ns"] for s in sums), "behind": sum(s["behind"] for s in sums),
        "behind_ns": sum(s["behind_ns"] for s in sums),
        "files": sorted(files.values(), key=lambda f: -f["behind_ns"]),
        "request_ns": req, "share": None}
    if measured and req:
        out["share"] = min(out["behind_ns"] / req, 1.0)
    elif measured:
        out["reason"] = "the workload reports no request latency (lat_ns)"
    return out


def _writes(runs: Iterable[Run], f: IoUringHashedFile) -> int:
    """The file's O_DIRECT writes the recorder counted in these runs."""
    return sum(int((e.get("writes") or {}).get("count", 0))
               for r in runs for e in (r.get("trace") or {}).get("dio") or []
               if (e.get("path"), e.get("dev"), e.get("ino")) == _key(f))


def sweep_hashed(fstype: str, points: list[Point], runs: list[Run], cpus: int | None,
                 version: KernelVersion | None) -> SweepIoWq | None:
    """analysis.<fs>.io_uring_hashed: at the top traced point, with the explained loss
    and, when it is the limit, the rule (None: no point was traced)."""
    traced = [p for p in points if p.get("io_uring_hashed")]
    if not traced:
        return None
    hi = traced[-1]
    h: PointIoWq = hi["io_uring_hashed"]
    by_n = {str(p["threads"]): s for p in traced
            if (s := p["io_uring_hashed"]["share"]) is not None}
    ends = (str(points[0]["threads"]), str(points[-1]["threads"]))
    loss = (round(explained_loss(points, by_n, cpus), 4)
            if len(points) > 1 and all(k in by_n for k in ends) else None)
    top_runs = [r for r in runs if int(r["threads"]) == hi["threads"]]
    top = h["files"][0] if h["files"] else None
    cause = hashed_cause(fstype, top, _writes(top_runs, top), version) if top else None
    share = h["share"]
    named = bool(cause and share is not None and share >= REQUEST_SHARE
                 and loss is not None and loss >= EXPLAINS)
    running = HASHED.holds_for(version)
    disagreement = None
    if top and cause and cause["kernel_range"] != running.range_text():
        disagreement = (f"io_uring hashed {top['queued']:,} O_DIRECT writes to "
                        f"{top['path'] or top['ino']} "
                        f"although {fstype} allows parallel O_DIRECT writes on kernels "
                        f"{running.range_text()}"
                        + (f" ({version_text(version)} here)" if version else "")
                        + ": this kernel behaves like < 6.4")
    return {"measured": h["measured"] and share is not None, "reason": h["reason"],
            "threads": hi["threads"], "queued": h["queued"], "unhashed": h["unhashed"],
            "behind": h["behind"], "behind_ns": h["behind_ns"], "share": share,
            "share_by_threads": by_n, "explained_loss": loss, "named": named,
            "cause": cause, "path": top["path"] if top else None,
            "disagreement": disagreement}


def hashed_note(s: SweepIoWq, io_uring: bool) -> str:
    """The verdict's line on io-wq when it does not name it: not measured (an io_uring
    workload), or what was measured when requests went to io-wq at all; else ''."""
    at = f"at {s['threads']} threads"
    if not s["measured"]:
        return (f"io-wq's hashed queue {at}: not measured ({s['reason']})" if io_uring else "")
    if not s["queued"] and not s["unhashed"]:
        return f"io-wq's hashed queue {at}: measured, no request went to io-wq" \
            if io_uring else ""
    if not s["queued"]:
        return (f"io-wq's hashed queue {at}: measured, none hashed ({s['unhashed']:,} "
                "O_DIRECT requests went to io-wq unhashed)")
    loss = (f", {s['explained_loss']:.0%} of the lost efficiency"
            if s["explained_loss"] is not None else "")
    return (f"io-wq's hashed queue {at}: {s['behind']:,} requests queued behind another of "
            f"their file's, {s['share']:.0%} of request time{loss}: not the limit")

