"""The observed time of a recorder section (analysis.observed): rates and time shares
divide by the time the probes were attached (--duty), not by the window."""

from __future__ import annotations

import pytest

from lockscope.analysis.observed import observed_ns, observed_share, sampling_note
from lockscope.analysis.series import build_series, interval_throughput

S = 1_000_000_000


def section(duration_s: float, observed_s: float | None = None, writes: int = 0) -> dict:
    iv = {"start_mono_ns": 5 * S, "end_mono_ns": 5 * S + int(duration_s * S),
          "duration_ns": int(duration_s * S)}
    if observed_s is not None:
        iv["observed_ns"] = int(observed_s * S)
    return {"interval": iv,
            "syscalls": [{"name": "pwrite64", "count": writes, "total_ns": 0, "max_ns": 0}]}


def test_observed_time_is_the_duration_without_sampling():
    assert observed_ns(section(4)) == 4 * S
    assert observed_share(section(4)) == 1.0 and sampling_note(section(4)) is None
    # older documents and merged intervals may carry only their ends
    assert observed_ns({"interval": {"start_mono_ns": S, "end_mono_ns": 3 * S}}) == 2 * S
    assert observed_ns({}) == 0 and observed_ns(None) == 0
    assert observed_share({}) is None


def test_observed_time_under_a_duty_cycle():
    s = section(10, observed_s=3)
    assert observed_ns(s) == 3 * S
    assert observed_share(s) == pytest.approx(0.3)
    assert sampling_note(s) == "observed 30% of the time (--duty)"
    # zero observed (a window that closed in its first "off" phase) is not the duration
    assert observed_ns(section(10, observed_s=0)) == 0


def test_rates_are_per_observed_second():
    full = interval_throughput(section(10, writes=3000))
    sampled = interval_throughput(section(10, observed_s=3, writes=900))
    assert full["write_calls_s"] == pytest.approx(300)
    assert sampled["write_calls_s"] == pytest.approx(300)


def test_series_rows_use_observed_time_and_merged_tails_add_it_up():
    trace = section(3, observed_s=0.9)
    parts = [section(1, 0.3, 300), section(1, 0.3, 300), section(0.2, 0.06, 60)]
    for i, p in enumerate(parts):
        p["interval"]["start_mono_ns"] = 5 * S + i * S
        p["interval"]["end_mono_ns"] = p["interval"]["start_mono_ns"] + \
            p["interval"]["duration_ns"]
    trace["series"] = parts
    rows = build_series(trace, None)
    assert len(rows) == 2  # the short tail folded into the interval before it
    assert rows[0]["duration_s"] == pytest.approx(0.3)
    assert rows[1]["duration_s"] == pytest.approx(0.36)
    assert [r["trace"]["write_calls_s"] for r in rows] == pytest.approx([1000, 1000])
