"""Whether the threads' block waits were the device's: ``device_bound`` stands only when
the device was busy; when it idled, the I/O was held before it
(``io_held_before_device``), by a cgroup's I/O limit where one is found that the requests
reach, else by something lockscope does not measure yet (docs/block-layer.md). Sweep and
attach verdicts alike ask ``judge_device`` before they say device_bound."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..schema import DeviceFigures, IoLimit, VerdictKind

# Busy (at least one request in flight) for half the window or more: the device's own
# pace accounts for at least half of it. Below, the device idled more than half the
# time the threads spent waiting on it, so most of their wait was not its service.
DEVICE_BUSY = 0.5
# Requests in flight on average at 80% of what the queue admits (the smallest of
# nr_requests, the hardware tags, the driver's depth): the queue is full most of the
# time, so the device with its queue sets the pace.
DEPTH_NEAR_LIMIT = 0.8
# Requests per second at 80% of a cgroup's IOPS limit or more: the limit is reached.
# blk-throttle dispatches by slices (block/blk-throttle.c, tg_within_iops_limit()),
# so a window's rate sits at or just under a binding limit, far under one that does not.
LIMIT_BINDS = 0.8

RANK = {"low": 0, "medium": 1, "high": 2}
BLOCK_LAYER_DOC = "docs/block-layer.md"


@dataclass
class DeviceCall:
    """What the device's figures say: the kind, the most confidence they allow, the
    evidence to add, and for io_held_before_device its remedies and summary."""

    kind: VerdictKind
    most: str
    evidence: list[str]
    remedies: list[str] = field(default_factory=list)
    summary: str | None = None


def capped(confidence: str, most: str) -> str:
    return confidence if RANK[confidence] <= RANK[most] else most


def _ms(ns: float | None) -> str:
    return "?" if ns is None else f"{ns / 1e6:.2f} ms"


def _name(fig: DeviceFigures) -> str:
    return fig["name"] or fig["dev"]


def device_lines(fig: DeviceFigures) -> list[str]:
    """The device's figures as evidence sentences."""
    name = _name(fig)
    rate = fig["requests_per_s"]
    depth = fig["inflight_mean"]
    limit = (f"; its queue admits {fig['queue_limit']} ({fig['queue_limit_from']})"
             if fig["queue_limit"] else "")
    busy = (f"busy {fig['busy_share']:.0%} of the {fig['observed_s']:.1f} s observed (at "
            "least one request in flight)" if fig["busy_share"] is not None else
            f"busy time not measured ({fig['busy_unmeasured']})")
    lines = [f"{name} ({fig['chosen_as']}): {busy}; {fig['requests']:,} requests"
             + (f" ({rate:,.0f}/s)" if rate is not None else "")
             + (f", {depth:.2f} in flight on average (Little's law){limit}"
                if depth is not None else "")]
    wait = fig["thread_wait_mean_ns"]
    lines.append(f"{name} served its requests in at most {_ms(fig['service_p50_ns'])} at the "
                 f"median and {_ms(fig['service_p99_ns'])} at p99 (mean "
                 f"{_ms(fig['service_mean_ns'])}); the threads' block waits lasted "
                 f"{_ms(wait)} on average" if wait is not None else
                 f"{name} served its requests in at most {_ms(fig['service_p50_ns'])} at the "
                 f"median and {_ms(fig['service_p99_ns'])} at p99 (mean "
                 f"{_ms(fig['service_mean_ns'])})")
    return lines


def _limit_text(lim: IoLimit) -> str:
    return f"the cgroup {lim['cgroup']}'s {lim['what']} limit of {lim['value']:,} ({lim['file']})"


def binding_limit(fig: DeviceFigures) -> tuple[IoLimit | None, bool, list[str]]:
    """(the limit that holds the requests, whether its binding was checked, notes on the
    others). IOPS limits are checked against the device's request rate; a bytes/s limit
    cannot be (block[] has no bytes), so one is named unchecked."""
    limits = fig["facts"]["io_limits"] if fig["facts"] else []
    rate = fig["requests_per_s"]
    notes: list[str] = []
    unchecked: IoLimit | None = None
    for lim in sorted(limits, key=lambda x: x["value"]):
        if lim["what"].endswith("IOPS"):
            if rate is not None and rate >= LIMIT_BINDS * lim["value"]:
                return lim, True, notes
            notes.append(f"{_limit_text(lim)} is set, but {_name(fig)}'s requests reached "
                         f"{rate or 0:,.0f}/s: it does not bind")
        elif unchecked is None:
            unchecked = lim
    return unchecked, False, notes


def _candidates(fig: DeviceFigures) -> str:
    f = fig["facts"]
    sched = f["scheduler"] if f else None
    wbt = f["wbt_lat_usec"] if f else None
    nr = f["nr_requests"] if f else None
    return ("not measured, so only candidates: the I/O scheduler's queue"
            + (f" ({sched})" if sched else "") + " between block_rq_insert and "
            "block_rq_issue; requests and driver tags (blk_mq_get_tag"
            + (f", nr_requests {nr}" if nr else "") + "); "
            "writeback throttling (block/blk-wbt.c"
            + (f", wbt_lat_usec {wbt}" if wbt is not None else "") + "); a cgroup's "
            f"io.latency or io.cost, not read ({BLOCK_LAYER_DOC})")


def _held(fig: DeviceFigures, idle: str, most_measured: str) -> DeviceCall:
    """io_held_before_device: with the limit that holds the I/O, or the candidates."""
    name = _name(fig)
    lim, checked, notes = binding_limit(fig)
    ev = device_lines(fig) + notes
    why = fig["facts"]["limits_read"] if fig["facts"] else None
    if lim:
        ev.append(f"{_limit_text(lim)} on {name} ({lim['dev']}) holds the traced "
                  f"process{'es' if len(lim['pids']) > 1 else ''} "
                  f"{', '.join(map(str, lim['pids']))}; "
                  + (f"{name}'s requests reached {fig['requests_per_s'] or 0:,.0f}/s against it"
                     if checked else "a bytes/s limit, which block[] (no bytes) cannot check"))
        return DeviceCall(
            VerdictKind.IO_HELD_BEFORE_DEVICE, most_measured if checked else "medium", ev,
            [f"raise or remove the cgroup's I/O limit ({lim['file']}: {lim['dev']} "
             f"{lim['value']})"],
            f"Block waits, but {name} was idle {idle} of the time: {_limit_text(lim)} "
            "holds the I/O before the device.")
    if why:
        ev.append(f"the cgroups' I/O limits were not read: {why}")
    elif fig["facts"] is None:
        ev.append("the host's facts of the device (its queue, the cgroups' limits on it) "
                  "were not recorded")
    else:
        ev.append(f"no I/O limit of the traced processes' cgroups on {name}")
    ev.append(_candidates(fig))
    return DeviceCall(
        VerdictKind.IO_HELD_BEFORE_DEVICE, "low", ev,
        [f"find what holds the I/O before the device: {BLOCK_LAYER_DOC} lists where a "
         "request waits and how to see each"],
        f"Block waits, but {name} was not shown busy (idle {idle} of the time): something "
        "holds the I/O before the device, and lockscope did not find what.")


def judge_device(fig: DeviceFigures | None) -> DeviceCall:
    """device_bound only when the device was busy: its busy share at DEVICE_BUSY or more,
    or its mean depth near its queue's limit; io_held_before_device when it idled. The
    mean depth bounds the busy share from above (a busy device has a request in flight),
    so it tells an idle device where the busy time was not measured."""
    if fig is None:
        return DeviceCall(VerdictKind.DEVICE_BOUND, "medium", [
            "the device's figures were not recorded (no block[] entry: the block probe "
            "group was off, or the recorder predates them): whether it was busy is not "
            "known"])
    busy, depth, limit = fig["busy_share"], fig["inflight_mean"], fig["queue_limit"]
    if busy is not None and busy >= DEVICE_BUSY:
        return DeviceCall(VerdictKind.DEVICE_BOUND, "high", device_lines(fig))
    if depth is not None and limit and depth >= DEPTH_NEAR_LIMIT * limit:
        return DeviceCall(VerdictKind.DEVICE_BOUND, "medium" if busy is None else "high",
                          device_lines(fig) + [f"{depth:.1f} requests in flight on average "
                                               f"against a queue of {limit}: it is full"])
    if busy is not None:
        return _held(fig, f"{1 - busy:.0%}", "high")
    if depth is not None and depth < DEVICE_BUSY:
        return _held(fig, f"at least {1 - depth:.0%} (its mean depth bounds its busy time)",
                     "medium")
    return DeviceCall(VerdictKind.DEVICE_BOUND, "medium", device_lines(fig) + [
        "whether the device was busy is not known: its busy time was not measured and its "
        "mean depth does not rule it out"])
