"""Each reference experiment, run small (seconds) through ``lockscope experiments``: its
table rows carry measured figures and ratios, each filesystem a verdict, each claim an
outcome; and what the trace saw matches how the experiment laid its files out."""

from __future__ import annotations

import json

import pytest

from lockscope.experiments import claims as c
from lockscope.experiments.catalog import EXPERIMENTS, QUICK

from conftest import LOCKSCOPE, require_tool

pytestmark = pytest.mark.kernel

TOOLS = {1: "fio", 2: "sysbench", 3: None, 4: "sysbench", 5: "dd"}
STATUSES = {c.HOLDS, c.FAILS, c.INCONCLUSIVE}


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    return tmp_path_factory.mktemp("docs")


@pytest.mark.parametrize("number", sorted(EXPERIMENTS))
def test_experiment_runs_small(number, docs, tmp_path):
    if TOOLS[number]:
        require_tool(TOOLS[number])
    doc = docs / "experiments.md"
    res = LOCKSCOPE.run("experiments", "--scale", "quick", "--only", number, "--doc", doc,
                        "--out", tmp_path / "out", timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    exp = EXPERIMENTS[number]
    saved = json.loads(doc.with_suffix(".json").read_text())["experiments"][str(number)]
    assert not saved["errors"]
    sweeps = exp.sweeps(QUICK)
    # every point of every sweep has a figure, every (case, fs) a verdict
    expected = {(s.case, fs, n) for s in sweeps for fs in s.fss for n in s.threads}
    figures = {(cs, fs, n): v for cs, fs, n, v in saved["figures"]}
    assert set(figures) == expected
    assert all(v > 0 for v in figures.values())
    verdicts = {(cs, fs): v for cs, fs, v in saved["verdicts"]}
    assert set(verdicts) == {(s.case, fs) for s in sweeps for fs in s.fss}
    assert all(v.get("kind") and v.get("summary") for v in verdicts.values())

    text = doc.read_text()
    section = text.split(f"\n## {number}. ")[1].split("\n## ")[0]
    for case, fs, n in expected:
        row = next((ln for ln in section.splitlines()
                    if ln.startswith(f"| {case} | {fs} | {n} |")), None)
        assert row is not None, (case, fs, n)
        cells = [x.strip() for x in row.strip("|").split("|")]
        assert cells[-len(exp.ratios) - 1] != "—"      # the measured figure
        assert any(x.endswith("x") for x in cells[-len(exp.ratios):])  # and its ratios
    statuses = [ln.split("| **")[1].split("**")[0] for ln in section.splitlines()
                if ln.startswith("| ") and "| **" in ln and "confidence" not in ln]
    assert len(statuses) == len(exp.claims)
    # the quick scale leaves out the cases some claims need; the rest are decided
    assert set(statuses) <= STATUSES | {c.MISSING}
    assert set(statuses) & STATUSES

    facts = {(cs, fs): f for cs, fs, f in saved["facts"]}
    _check_layout(number, facts)


def _check_layout(number: int, facts: dict) -> None:
    """What the trace saw, from how each experiment lays out its files."""
    if number in (4, 5):
        # sysbench prepare and dd write the whole file first: every timed write overwrites
        for (case, fs), f in facts.items():
            assert f["dio_states"]["mapped"] > 0.95, (case, fs, f)
    if number == 1:
        # fio preallocates with fallocate(): the timed writes find unwritten extents
        for (case, fs), f in facts.items():
            assert f["dio_states"]["unwritten"] > 0, (case, fs, f)
    if number == 3:
        # ext2 has no journal; ext3 and ext4 commit one while the file is made durable
        assert facts[("write", "ext2")]["journal"]["commits"] == 0
        assert facts[("write", "ext3")]["journal"]["commits"] > 0
        assert facts[("write", "ext4")]["journal"]["commits"] > 0
