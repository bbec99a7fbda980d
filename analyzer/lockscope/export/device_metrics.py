"""Block devices in the metrics: what each device did, from the recorder's block[] entries
of each interval (kern/block.bpf.inc: requests issued and completed, their service times,
and the time the device had at least one in flight).

Requests and times are counted in the observed part of an interval and scaled to all of
it as the lock waits are (interval_digest.Weighting): ``rate()`` of a counter is then the
device's own rate. Busy time exists only where the recorder measured it (BPF atomic
fetch-and-add, 5.12+): elsewhere the busy series are absent, never 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric

from ..analysis.stats import add_hist
from .log2_buckets import log2_buckets


@dataclass(frozen=True)
class DeviceTotals:
    """One device over some intervals; ``busy_ns`` None where it was not measured."""

    requests: int = 0
    service_ns: int = 0
    busy_ns: int | None = None
    hist: tuple[int, ...] = field(default_factory=tuple)   # log2 ns slots

    def plus(self, o: DeviceTotals) -> DeviceTotals:
        busy = None if self.busy_ns is None and o.busy_ns is None else \
            (self.busy_ns or 0) + (o.busy_ns or 0)
        return DeviceTotals(self.requests + o.requests, self.service_ns + o.service_ns, busy,
                            tuple(add_hist(list(self.hist), o.hist)))


def device_label(entry: Mapping[str, Any]) -> str:
    """The device's kernel name (loop0, nvme0n1), else its major:minor."""
    return str(entry.get("name") or entry.get("dev") or "?")


def interval_devices(iv: Mapping[str, Any], scale: float) -> dict[str, DeviceTotals]:
    """Each device's figures in one interval, scaled from its observed part to the whole
    (``scale``: the interval's length over its observed time, 1 at duty 100)."""
    duration = int((iv.get("interval") or {}).get("duration_ns", 0) or 0)
    out: dict[str, DeviceTotals] = {}
    for e in iv.get("block") or []:
        observed = int(e.get("observed_ns") or 0)
        busy = e.get("busy_ns")
        # the busy share of the observed part, over the whole interval
        busy_ns = None if busy is None or not observed else round(
            min(1.0, int(busy) / observed) * duration)
        add_devices(out, {device_label(e): DeviceTotals(
            requests=round(int(e.get("count", 0)) * scale),
            service_ns=round(int(e.get("total_ns", 0)) * scale), busy_ns=busy_ns,
            hist=tuple(round(int(n) * scale) for n in e.get("hist_log2_ns") or []))})
    return out


def add_devices(total: dict[str, DeviceTotals], add: Mapping[str, DeviceTotals]) -> None:
    for name, fig in add.items():
        total[name] = total[name].plus(fig) if name in total else fig


def device_metrics(totals: Mapping[str, DeviceTotals],
                   recent: Iterable[tuple[Mapping[str, DeviceTotals], int]]) -> Iterator[Metric]:
    """The device families: counters over the whole run, the busy ratio over the recent
    window (the exporter's --window: each interval's devices and its length where the
    recorder reported block devices; a device without requests in one was idle in it),
    the service-time histogram."""
    if not totals:
        return
    labels = ["device"]
    requests = CounterMetricFamily("lockscope_device_requests", "Block requests the "
                                   "device completed (issued in the window)", labels=labels)
    service = CounterMetricFamily("lockscope_device_service_seconds", "Sum of the requests' "
                                  "service times, issue to completion; its rate is the mean "
                                  "number in flight", labels=labels, unit="seconds")
    busy = CounterMetricFamily("lockscope_device_busy_seconds", "Time the device had at "
                               "least one request in flight (where measured: BPF atomic "
                               "fetch-and-add, 5.12+)", labels=labels, unit="seconds")
    hist = HistogramMetricFamily("lockscope_device_service_duration_seconds",
                                 "Block request service times, issue to completion",
                                 labels=labels, unit="seconds")
    for name, fig in sorted(totals.items()):
        requests.add_metric([name], fig.requests)
        service.add_metric([name], fig.service_ns / 1e9)
        if fig.busy_ns is not None:
            busy.add_metric([name], fig.busy_ns / 1e9)
        hist.add_metric([name], log2_buckets(fig.hist), fig.service_ns / 1e9)
    yield requests
    yield service
    if busy.samples:
        yield busy
    yield hist
    busy_in_window: dict[str, int] = {}
    span = 0
    for devices, duration_ns in recent:
        span += duration_ns
        for name, fig in devices.items():
            if fig.busy_ns is not None:
                busy_in_window[name] = busy_in_window.get(name, 0) + fig.busy_ns
    ratio = GaugeMetricFamily("lockscope_device_busy_ratio", "Share of the recent window "
                              "(the exporter's --window) the device had at least one request "
                              "in flight", labels=labels)
    for name in sorted(busy_in_window):
        if span:
            ratio.add_metric([name], min(1.0, busy_in_window[name] / span))
    if ratio.samples:
        yield ratio
