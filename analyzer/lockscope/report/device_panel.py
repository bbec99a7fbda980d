"""The report's device panel: what the device the threads' block waits were on did
(analysis/device_busy.py), beside how long the threads waited on it. A device busy most
of the time with waits close to its service time is the limit; an idle one with long
waits held the I/O before it (docs/block-layer.md)."""

from __future__ import annotations

from typing import Any

from ..schema import DeviceFigures
from .fmt import duration_ns


def _ns(value: float | None) -> str:
    return duration_ns(value) if value is not None else "not measured"


def _limits(facts: Any) -> str:
    if not facts:
        return "not read"
    if facts.get("limits_read"):
        return f"not read: {facts['limits_read']}"
    limits = facts.get("io_limits") or []
    if not limits:
        return "none on the traced processes' cgroups"
    return "; ".join(f"{lim['what']} {lim['value']:,}/s ({lim['cgroup']}, {lim['key']})"
                     for lim in limits)


def device_panel(fig: DeviceFigures | None) -> list[tuple[str, str]]:
    """(what, value) rows of the panel; none without a device (no block I/O recorded)."""
    if not fig:
        return []
    busy = (f"{fig['busy_share']:.0%} of the {fig['observed_s']:.1f} s observed"
            if fig["busy_share"] is not None else
            f"not measured ({fig['busy_unmeasured']})")
    depth = fig["inflight_mean"]
    limit = (f" (its queue admits {fig['queue_limit']}: {fig['queue_limit_from']})"
             if fig["queue_limit"] else "")
    rate = fig["requests_per_s"]
    facts: Any = fig.get("facts") or {}
    rows = [
        ("device", f"{fig['name'] or fig['dev']} ({fig['dev']}; {fig['chosen_as']})"),
        ("requests", f"{fig['requests']:,}" + (f" ({rate:,.0f}/s)" if rate is not None else "")),
        ("busy (at least one request in flight)", busy),
        ("requests in flight, mean (Little's law)",
         f"{depth:.2f}{limit}" if depth is not None else "not measured"),
        ("service time, issue to completion",
         f"mean {_ns(fig['service_mean_ns'])}, p50 at most {_ns(fig['service_p50_ns'])}, "
         f"p99 at most {_ns(fig['service_p99_ns'])}"),
        ("the threads' mean block wait", _ns(fig["thread_wait_mean_ns"])),
        ("scheduler", str(facts.get("scheduler") or "not read")),
        ("cgroup I/O limits", _limits(facts)),
    ]
    return rows
