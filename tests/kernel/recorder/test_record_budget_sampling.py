"""A budget judged on sampled statistics (lockscope-record --budget-stats-every N): the
kernel's BPF run-time statistics are on one second in N while the recorder is within
its budget, so the kernel's own run counts stand still part of the time, and the series
intervals carry the estimated cost, said to be one; over the budget, each step's effect
is measured the next second, so the steps still come about a second apart. What the
measuring costs (the statistics' clock, paid by every run while they are on) is the
recorder's cost too: the intervals count it as the document's window does."""

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


def test_the_intervals_count_what_the_measuring_costs(tmp_path: Path):
    # The document's window cost is the kernel's own count over the measured seconds
    # (their clock included) and the rest estimated; the intervals', each estimated,
    # must add up to it: left out, the clock is a fifth to a half of it on this write loop.
    series = tmp_path / "series.jsonl"
    doc, _ = sampled_window(
        tmp_path, "--max-overhead", "90", "--budget-stats-every", "2",
        "--series-out", str(series), "--interval-ms", "500", seconds=7)
    o = doc["overhead"]
    if o["stats"] == "already_on":
        return
    lines = [json.loads(x) for x in series.read_text().splitlines()]
    assert all(iv["overhead"].get("estimated") for iv in lines[1:]), lines
    counted = sum(iv["overhead"]["bpf_ns"] for iv in lines)
    clock = o["stats_clock"]["bpf_ns"]
    assert 0 < clock < o["bpf_ns"]
    # the intervals agree with the window within half the clock: closer than without
    # it. Not closer: each interval's estimate is of the measured seconds before it, the
    # window's of all of them, and the loop's cost moves between them. Measured one
    # second in 2 the intervals came to 0.98-1.06 times the window, the clock to
    # 0.20-0.50 of it; one in 3, up to 1.14 times, with less of a clock to tell by
    assert abs(counted - o["bpf_ns"]) <= 0.5 * clock, (counted, o["bpf_ns"], clock)


def bare_per_observed_s(doc: dict) -> float:
    """The window's BPF time less the statistics' clock, per second attached."""
    o = doc["overhead"]
    return (o["bpf_ns"] - o["stats_clock"]["bpf_ns"]) / o["observed_ns"]


def test_under_a_duty_the_estimate_is_per_second_attached(tmp_path: Path):
    # A duty period as long as the statistics' cycle (3 s) puts every measured second
    # at about the same point of it: 0.25 s of its 2 s "on" phase (the checks fall
    # 0.25 s past each second). Scaled by wall time, the measured seconds' cost stood
    # for a third of the window's where two thirds were attached (0.21-0.37 of what a
    # window measured throughout says, and the intervals 1.5 times the window);
    # scaled by the time attached, it is that within the noise of two runs of a write
    # loop (0.65-1.24 on a loaded host), and the intervals add up to it.
    duty = ("--duty", "67", "--duty-period-ms", "3000")
    series = tmp_path / "series.jsonl"
    (tmp_path / "full").mkdir()
    full, _ = sampled_window(tmp_path / "full", *duty, "--max-overhead", "0",
                             "--stats-every", "1", seconds=9)
    doc, _ = sampled_window(tmp_path, *duty, "--max-overhead", "90", "--budget-stats-every",
                            "3", "--series-out", str(series), "--interval-ms", "500",
                            seconds=9)
    o = doc["overhead"]
    if o["stats"] == "already_on":
        return
    assert o["shed"] == [] and 0 < o["measured_ns"] < 0.5 * o["window_ns"]
    ratio = bare_per_observed_s(doc) / bare_per_observed_s(full)
    assert 0.5 <= ratio <= 2.0, (ratio, o, full["overhead"])
    counted = sum(json.loads(x)["overhead"]["bpf_ns"] for x in series.read_text().splitlines())
    assert 0.8 <= counted / o["bpf_ns"] <= 1.25, (counted, o["bpf_ns"])
