"""What the device the threads waited on did over the window: its busy share, mean
requests in flight, service-time percentiles and request rate from the recorder's
``block[]``, beside the threads' own mean block wait and the host's facts of its queue
and of the cgroup limits on it (``window.devices``, run/device_facts.py). The figures
device_verdict.py judges by."""

from __future__ import annotations

from collections.abc import Iterable

from ..schema import BlockEntry, DeviceFacts, DeviceFigures, DioEntry, OffcpuRecord, Trace
from .observed import observed_ns


def hist_quantile_ns(hist: list[int], q: float) -> float | None:
    """The upper end of the log2 bucket holding quantile q: bucket i counts times in
    [2^i, 2^(i+1)) ns (the recorder's hist_slot), so the quantile is at most this."""
    total = sum(hist)
    if not total:
        return None
    seen = 0
    for i, n in enumerate(hist):
        seen += n
        if seen >= q * total:
            return float(2 ** (i + 1))
    return float(2 ** len(hist))


def thread_block_wait_ns(records: Iterable[OffcpuRecord]) -> float | None:
    """The traced threads' mean wait in the given block-I/O ``offcpu`` records (every
    wait counted, long ones in every --duty phase alike), None without any."""
    ns = count = 0
    for r in records:
        ns += r.get("total_ns") or 0
        count += r.get("count") or 0
    return ns / count if count else None


def _facts_by_disk(devices: list[DeviceFacts]) -> tuple[dict[str, DeviceFacts], dict[str, str]]:
    by_dev = {d["dev"]: d for d in devices}
    disk_of = {f: d["dev"] for d in devices for f in d.get("file_devs") or []}
    return by_dev, disk_of


def _file_ios(e: DioEntry) -> int:
    """The traced threads' I/O calls on one file: its writes, reads and buffered writes."""
    return sum((c or {}).get("count", 0) for c in (e.get("writes"), e.get("reads"),
                                                  e.get("buffered_writes")))


def _chosen(trace: Trace, devices: list[DeviceFacts]) -> tuple[BlockEntry, str] | None:
    """The block entry of the disk the traced threads did most of their file I/O on
    (through the host's partition -> disk map where it was read: a loop device's backing
    disk has its requests too, and other processes'); else the device with the most
    service time."""
    entries = {b["dev"]: b for b in trace.get("block") or [] if b.get("dev")}
    if not entries:
        return None
    _, disk_of = _facts_by_disk(devices)
    ios: dict[str, int] = {}
    for e in trace.get("dio") or []:
        if (dev := e.get("dev")):
            disk = disk_of.get(dev, dev)
            ios[disk] = ios.get(disk, 0) + _file_ios(e)
    mine = [d for d in ios if d in entries]
    if mine:
        return entries[max(mine, key=lambda d: (ios[d], entries[d].get("count") or 0))], \
            "the disk of the traced threads' file I/O"
    return (max(entries.values(), key=lambda b: b.get("service_ns_total") or
                b.get("total_ns") or 0),
            "the device with the most service time (no traced file's device had requests)")


def queue_limit(facts: DeviceFacts | None) -> tuple[int | None, str | None]:
    """The fewest requests the device's queue lets be in flight: the smallest of
    nr_requests, the hardware queue's tags and the driver's queue depth the host showed."""
    if not facts:
        return None, None
    known = [(v, k) for k in ("nr_requests", "hw_tags", "queue_depth")
             if isinstance(v := facts.get(k), int) and v > 0]
    if not known:
        return None, None
    v, k = min(known)
    return v, k


def device_figures(trace: Trace | None, devices: list[DeviceFacts] | None,
                   block_waits: Iterable[OffcpuRecord]) -> DeviceFigures | None:
    """The figures of the device the threads waited on; None when the trace has no
    block[] (the block group off, or an older recorder). ``block_waits``: the threads'
    off-CPU records classed as block I/O."""
    if not trace:
        return None
    chosen = _chosen(trace, devices or [])
    if chosen is None:
        return None
    b, how = chosen
    by_dev, _ = _facts_by_disk(devices or [])
    facts = by_dev.get(b["dev"])
    window = float(b.get("observed_ns") or observed_ns(trace))
    count = int(b.get("count") or 0)
    service = float(b.get("service_ns_total", b.get("total_ns")) or 0)
    hist = list(b.get("hist_log2_ns") or [])
    limit, limit_from = queue_limit(facts)
    if "busy_unmeasured" in b:
        busy, why = b.get("busy_share"), b.get("busy_unmeasured")
    else:
        busy, why = None, "the recorder predates busy time (no busy_share in block[])"
    fig: DeviceFigures = {
        "dev": b["dev"], "name": b.get("name") or (facts["name"] if facts else None),
        "chosen_as": how, "requests": count, "observed_s": window / 1e9,
        "requests_per_s": count / (window / 1e9) if window else None,
        "busy_share": busy, "busy_unmeasured": why if busy is None else None,
        "inflight_mean": b.get("inflight_mean", service / window if window else None),
        "queue_limit": limit, "queue_limit_from": limit_from,
        "service_mean_ns": service / count if count else None,
        "service_p50_ns": hist_quantile_ns(hist, 0.5),
        "service_p99_ns": hist_quantile_ns(hist, 0.99),
        "thread_wait_mean_ns": thread_block_wait_ns(block_waits),
        "facts": facts,
    }
    return fig
