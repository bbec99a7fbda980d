"""Block devices in the metrics (export/device_metrics.py), from recorder intervals shaped
as the recorder writes them (bpf/recorder/emit/document.c write_block)."""

from __future__ import annotations

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from lockscope.export import ExportState
from lockscope.export.device_metrics import interval_devices
from lockscope.export.metrics_registry import make_registry


def interval(start_s: float, block: list[dict], observed_s: float = 1.0) -> dict:
    return {"interval": {"start_mono_ns": int(start_s * 1e9),
                         "end_mono_ns": int((start_s + 1) * 1e9), "duration_ns": 10**9},
            "sampling": {"observed_ns": int(observed_s * 1e9)},
            "block": block}


def device(name: str, count: int, total_ns: int, busy_ns: int | None,
           observed_ns: int = 10**9) -> dict:
    return {"dev": "7:0", "name": name, "count": count, "total_ns": total_ns,
            "max_ns": total_ns, "hist_log2_ns": [0] * 17 + [count],
            "service_ns_total": total_ns, "observed_ns": observed_ns, "busy_ns": busy_ns,
            "busy_share": None if busy_ns is None else busy_ns / observed_ns,
            "busy_unmeasured": None if busy_ns is not None else
            "the kernel's BPF has no atomic fetch-and-add (5.12+)"}


def samples(state: ExportState) -> dict[str, dict[str, float]]:
    text = generate_latest(make_registry(state.snapshot)).decode()
    out: dict[str, dict[str, float]] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if "device" in s.labels and s.labels.get("le") in (None, "+Inf"):
                out.setdefault(s.name, {})[s.labels["device"]] = s.value
    return out


def test_counters_sum_the_intervals_and_the_ratio_is_of_the_window():
    state = ExportState()
    state.add_interval(interval(0, [device("loop0", 100, 40_000_000, 300_000_000)]))
    state.add_interval(interval(1, [device("loop0", 50, 20_000_000, 100_000_000)]))
    s = samples(state)
    assert s["lockscope_device_requests_total"] == {"loop0": 150}
    assert s["lockscope_device_service_seconds_total"]["loop0"] == pytest.approx(0.06)
    assert s["lockscope_device_busy_seconds_total"]["loop0"] == pytest.approx(0.4)
    assert s["lockscope_device_busy_ratio"]["loop0"] == pytest.approx(0.2)
    assert s["lockscope_device_service_duration_seconds_count"] == {"loop0": 150}


def test_a_device_whose_busy_time_was_not_measured_has_no_busy_series():
    state = ExportState()
    state.add_interval(interval(0, [device("sda", 10, 5_000_000, None),
                                    device("loop0", 10, 5_000_000, 10_000_000)]))
    s = samples(state)
    assert s["lockscope_device_requests_total"] == {"sda": 10, "loop0": 10}
    assert set(s["lockscope_device_busy_seconds_total"]) == {"loop0"}
    assert set(s["lockscope_device_busy_ratio"]) == {"loop0"}


def test_an_interval_observed_in_part_is_scaled_to_all_of_it():
    # a quarter observed: its requests and service times stand for four times as many,
    # its busy share of the observed part for the whole interval
    iv = interval(0, [device("loop0", 10, 4_000_000, 50_000_000, observed_ns=250_000_000)],
                  observed_s=0.25)
    fig = interval_devices(iv, scale=4.0)["loop0"]
    assert (fig.requests, fig.service_ns) == (40, 16_000_000)
    assert fig.busy_ns == 200_000_000       # busy 20% of the observed part: of the second
    assert sum(fig.hist) == 40


def test_an_interval_without_requests_on_a_device_counts_as_idle_for_it():
    state = ExportState()
    state.add_interval(interval(0, [device("loop0", 100, 40_000_000, 500_000_000)]))
    state.add_interval(interval(1, []))     # the block group on, no request at all
    assert samples(state)["lockscope_device_busy_ratio"]["loop0"] == pytest.approx(0.25)
