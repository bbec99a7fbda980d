"""sweep --verify's outcomes (analysis/remedy_outcome.py) on hand-built analyses: each
outcome from the shares and efficiencies it is defined by, and the confidence step."""

from __future__ import annotations

import copy

import pytest

from lockscope.analysis.remedy_outcome import (
    FELL_RATIO,
    GONE_SHARE,
    blamed_lock,
    lower_confidence,
    outcome,
)
from lockscope.analysis.verdict import SCALES_EFFICIENCY

LOCK = {"name": "i_rwsem", "inode": True, "path": "/mnt/f"}


def point(threads: int, share: float | None, efficiency: float, files: int = 1) -> dict:
    """A traced point (None: not traced) whose i_rwsem waits are spread over files."""
    p = {"threads": threads, "iops": {"mean": 1000.0 * threads * efficiency},
         "efficiency": efficiency, "traced": share is not None}
    if share is not None:
        p["inode_locks"] = [{"name": "i_rwsem", "share": share / files} for _ in range(files)]
        p["other_locks"] = [{"name": "j_state_lock", "share": 0.2}]
    return p


def fs(kind: str, points: list[dict], summary: str = "") -> dict:
    return {"verdict": {"kind": kind, "confidence": "high", "summary": summary,
                        "evidence": ["e"]},
            "points": points,
            "locks": [{"name": "i_rwsem", "inode": True, "path": "/mnt/f"}]}


BEFORE = fs("inode_lock_contention", [point(1, 0.05, 1.0), point(4, 0.6, 0.3)])


def test_the_blamed_lock_is_a_lock_verdict_s_top_lock():
    assert blamed_lock(BEFORE) == LOCK
    assert blamed_lock(fs("device_bound", BEFORE["points"])) is None
    assert blamed_lock({**BEFORE, "locks": []}) is None


def test_verified_when_the_wait_is_gone_and_the_rerun_scales():
    after = fs("scales", [point(1, 0.0, 1.0), point(4, GONE_SHARE / 2, SCALES_EFFICIENCY + 0.1)])
    res = outcome(BEFORE, after, LOCK, cpus=8)
    assert res["outcome"] == "verified", res["line"]
    assert res["share_before"] == 0.6 and res["share_after"] == round(GONE_SHARE / 2, 4)
    assert res["limit"] is None


def test_a_file_per_thread_rerun_sums_the_lock_over_its_files():
    # each file's lock under GONE_SHARE, their sum over it: the wait fell, it is not gone
    total = GONE_SHARE * 2.4
    after = fs("scales", [point(1, 0.0, 1.0), point(4, total, 0.9, files=4)])
    res = outcome(BEFORE, after, LOCK, cpus=8)
    assert res["share_after"] == pytest.approx(total)
    assert res["outcome"] == "partly"


def test_cpu_bound_counts_as_scaling_only_past_the_cpus():
    after = fs("cpu_bound", [point(1, 0.0, 1.0), point(4, 0.0, 0.5)], summary="CPUs are busy")
    assert outcome(BEFORE, after, LOCK, cpus=2)["outcome"] == "verified"
    held = outcome(BEFORE, after, LOCK, cpus=4)
    assert held["outcome"] == "partly" and held["limit"] == "CPUs are busy"


def test_partly_when_the_wait_fell_but_something_else_limits():
    fell = 0.6 * FELL_RATIO
    after = fs("device_bound", [point(1, 0.0, 1.0), point(4, fell, 0.35)],
               summary="the device is busy")
    res = outcome(BEFORE, after, LOCK, cpus=8)
    assert res["outcome"] == "partly"
    assert res["limit"] == "the device is busy" and "device_bound" in res["line"]


def test_not_verified_when_the_wait_stayed():
    after = fs("inode_lock_contention", [point(1, 0.05, 1.0), point(4, 0.6 * FELL_RATIO + 0.05,
                                                                     0.31)])
    res = outcome(BEFORE, after, LOCK, cpus=8)
    assert res["outcome"] == "not_verified" and "lowered in confidence" in res["line"]


@pytest.mark.parametrize("points", [[point(1, None, 1.0), point(4, None, 0.3)],
                                    [point(4, 0.0, 1.0)]])
def test_not_measured_without_a_traced_curve(points):
    res = outcome(BEFORE, fs("scales", points), LOCK, cpus=8)
    assert res["outcome"] == "not_measured" and "not measured" in res["line"]


def analysis_with(outcomes: list[str], confidence: str = "high") -> tuple[dict, dict]:
    a = {"ext4": copy.deepcopy(BEFORE)}
    a["ext4"]["verdict"]["confidence"] = confidence
    verify = {"filesystems": {"ext4": {"remedies": [
        {"remedy": f"r{i}", "outcome": o} for i, o in enumerate(outcomes)]}}}
    return a, verify


def test_a_diagnosis_whose_remedies_all_failed_loses_one_step_once():
    a, verify = analysis_with(["not_verified", "not_verified"])
    lower_confidence(a, verify)
    assert a["ext4"]["verdict"]["confidence"] == "medium"
    assert a["ext4"]["verdict"]["evidence"][-1].startswith("sweep --verify:")
    lower_confidence(a, verify)           # analyzed again: not lowered twice
    assert a["ext4"]["verdict"]["confidence"] == "medium"
    a, verify = analysis_with(["not_verified"], confidence="low")
    lower_confidence(a, verify)
    assert a["ext4"]["verdict"]["confidence"] == "low"


@pytest.mark.parametrize("outcomes", [["not_verified", "partly"], ["verified"],
                                      ["not_measured"], []])
def test_a_diagnosis_keeps_its_confidence_when_a_remedy_moved_the_wait_or_none_ran(outcomes):
    a, verify = analysis_with(outcomes)
    lower_confidence(a, verify)
    assert a["ext4"]["verdict"]["confidence"] == "high"
    assert a["ext4"]["verdict"]["evidence"] == ["e"]
