"""A budget judged on sampled statistics (lockscope-record --budget-stats-every N): the
kernel's BPF run-time statistics are on one second in N, so the kernel's own run counts
stand still part of the time; the budget is still judged (a budget far below the cost
lowers the duty), and the series intervals carry the estimated cost, said to be one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_record_overhead import sampled_window

pytestmark = [pytest.mark.kernel, pytest.mark.alone]   # others would hold them on


def test_a_sampled_budget_turns_the_statistics_off_and_still_judges(tmp_path: Path):
    series = tmp_path / "series.jsonl"
    doc, counts = sampled_window(
        tmp_path, "--max-overhead", "0.001", "--budget-stats-every", "3", "--duty-flag",
        "--series-out", str(series), "--interval-ms", "500", seconds=7)
    o = doc["overhead"]
    if o["stats"] == "already_on":   # kernel.bpf_stats_enabled=1: nothing to sample
        assert o["stats_every"] == 1
        return
    assert o["stats_every"] == 3
    assert 0 < o["measured_ns"] < o["window_ns"]
    # the kernel's counters grew in some polls and stood still in others
    grew = [c1 > c0 for (_, c0), (_, c1) in zip(counts, counts[1:])]
    assert any(grew) and not all(grew)
    # judged all the same: a budget of 0.001% lowered the duty
    assert any(s["kind"] == "duty" for s in o["shed"]), o["shed"]
    assert doc["sampling"]["duty_pct"] < 100
    lines = [json.loads(x) for x in series.read_text().splitlines()]
    est = [iv["overhead"] for iv in lines if iv["overhead"].get("estimated")]
    assert est, [iv["overhead"] for iv in lines]
    assert all(e["bpf_ns"] > 0 and "measured_bpf_ns" in e for e in est)
