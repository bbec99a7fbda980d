"""A budget judged on sampled statistics (lockscope-record --budget-stats-every N): the
kernel's BPF run-time statistics are on one second in N while the recorder is within
its budget, so the kernel's own run counts stand still part of the time, and the series
intervals carry the estimated cost, said to be one; over the budget, each step's effect
is measured the next second, so the steps still come about a second apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_record_overhead import sampled_window

pytestmark = [pytest.mark.kernel, pytest.mark.alone]   # others would hold them on


def test_within_the_budget_the_statistics_are_on_a_second_in_n(tmp_path: Path):
    series = tmp_path / "series.jsonl"
    doc, counts = sampled_window(
        tmp_path, "--max-overhead", "90", "--budget-stats-every", "3", "--duty-flag",
        "--series-out", str(series), "--interval-ms", "500", seconds=7)
    o = doc["overhead"]
    if o["stats"] == "already_on":   # kernel.bpf_stats_enabled=1: nothing to sample
        assert o["stats_every"] == 1
        return
    assert o["stats_every"] == 3 and o["shed"] == []
    assert 0 < o["measured_ns"] < o["window_ns"]
    # the kernel's counters grew in some polls and stood still in others
    grew = [c1 > c0 for (_, c0), (_, c1) in zip(counts, counts[1:])]
    assert any(grew) and not all(grew)
    lines = [json.loads(x) for x in series.read_text().splitlines()]
    est = [iv["overhead"] for iv in lines if iv["overhead"].get("estimated")]
    assert est, [iv["overhead"] for iv in lines]
    assert all(e["bpf_ns"] > 0 and "measured_bpf_ns" in e for e in est)


def test_over_the_budget_steps_come_a_second_apart(tmp_path: Path):
    doc, _ = sampled_window(tmp_path, "--max-overhead", "0.001", "--budget-stats-every", "3",
                            "--duty-flag", seconds=6)
    o = doc["overhead"]
    if o["stats"] == "already_on":
        return
    assert o["stats_every"] == 3
    steps = o["shed"]
    assert steps and steps[0]["kind"] == "duty", steps
    assert doc["sampling"]["duty_pct"] < 100
    # without measuring each step's effect at once they would come every 3 s
    gaps = [(b["t_ns"] - a["t_ns"]) / 1e9 for a, b in zip(steps, steps[1:])
            if a["kind"] != "pause"]
    assert gaps and min(gaps) < 2.5, [(s["kind"], s["what"], s["after_ns"]) for s in steps]
