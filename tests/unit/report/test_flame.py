"""``lockscope flame``: one lock-wait, off-CPU or differential flame graph."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from lockscope.analysis.runs import worker_tids
from lockscope.report.flame.folded import merge

from conftest import LOCKSCOPE, require_tool
from recorded import recorded_sweep, runs_at, thread_counts

ROOT = Path(__file__).resolve().parents[3]
CARGO_BIN = str(Path.home() / ".cargo" / "bin")
ENV = LOCKSCOPE.env(PATH=f"{CARGO_BIN}{os.pathsep}{os.environ.get('PATH', '')}")


def _run(*args, env=None):
    return LOCKSCOPE.run(*args, env=env or ENV, timeout=120)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("flame") / "results.json"
    p.write_text(json.dumps(recorded_sweep()))
    return p


DOC = recorded_sweep()
LO, HI = thread_counts(DOC, "ext4")[0], thread_counts(DOC, "ext4")[-1]


@pytest.fixture
def inferno(monkeypatch):
    monkeypatch.setenv("PATH", ENV["PATH"])
    return require_tool("inferno-flamegraph")


def _titles(svg: Path) -> str:
    root = ET.parse(svg).getroot()
    return " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}title"))


def test_lockwait_graph(results, tmp_path, inferno):
    out = tmp_path / "ext4.svg"
    res = _run("flame", results, "--kind", "lockwait", "--fs", "ext4", "--threads", HI, "-o", out)
    assert res.returncode == 0, res.stderr
    text = out.read_text()
    assert f"ext4: lock waits at {HI} threads (ns waited)" in text
    waited_in = DOC["analysis"]["ext4"]["locks"][0]["functions"][0]   # the top lock's waiter
    assert "ns waited" in _titles(out) and waited_in in _titles(out)
    # one line per distinct stack of the point's runs
    lines = (tmp_path / "ext4.folded").read_text().splitlines()
    assert len(lines) == len(merge(runs_at(DOC, "ext4", HI), "lockwait")) > 1


def test_offcpu_graph_defaults_to_highest_thread_count(results, tmp_path, inferno):
    out = tmp_path / "off.svg"
    res = _run("flame", results, "--kind", "offcpu", "--fs", "xfs", "-o", out)
    assert res.returncode == 0, res.stderr
    hi = thread_counts(DOC, "xfs")[-1]
    assert f"xfs: off-CPU time at {hi} threads (ns blocked)" in out.read_text()
    # the frames of the workers' heaviest off-CPU stack are the widest: all drawn
    heaviest = max((rec for run in runs_at(DOC, "xfs", hi) for rec in run["trace"]["offcpu"]
                    if rec["tid"] in worker_tids(run)), key=lambda rec: rec["total_ns"])
    for frame in heaviest["kstack"]:
        assert frame.split("+")[0] in _titles(out)


def test_differential_graph(results, tmp_path, inferno):
    out = tmp_path / "diff.svg"
    res = _run("flame", results, "--fs", "ext4", "--diff", f"{LO}:{HI}", "-o", out)
    assert res.returncode == 0, res.stderr
    assert f"what grew from {LO} to {HI} threads" in out.read_text()
    ET.parse(out)
    rows = (tmp_path / "diff.folded").read_text().splitlines()
    assert rows and all(len(r.split(" ")) == 3 for r in rows)


def test_default_output_name(results, tmp_path, inferno):
    n = thread_counts(DOC, "xfs")[0]
    res = LOCKSCOPE.run("flame", results, "--fs", "xfs", "--threads", n, env=ENV,
                        cwd=tmp_path, timeout=120)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / f"xfs-lockwait-{n}threads.svg").is_file()
    assert (tmp_path / f"xfs-lockwait-{n}threads.folded").is_file()


@pytest.mark.parametrize("args, words", [
    (["--threads", "8"], "--fs"),                                  # two filesystems ran
    (["--fs", "btrfs"], "btrfs"),
    (["--fs", "ext4", "--threads", "3"], "3 threads"),             # 1, 2 and 4 ran
    (["--fs", "ext4", "--diff", "1-8"], "1:8"),
])
def test_bad_choices_are_one_line_usage_errors(results, tmp_path, args, words):
    res = _run("flame", results, *args, "-o", tmp_path / "x.svg")
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0]


def test_without_inferno_says_how_to_install(results, tmp_path):
    env = dict(ENV, PATH="/usr/bin:/bin", HOME=str(tmp_path))
    env.pop("CARGO_HOME", None)
    res = _run("flame", results, "--fs", "ext4", "-o", tmp_path / "x.svg", env=env)
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "cargo install inferno --locked" in lines[0]
    assert (tmp_path / "x.folded").is_file() and not (tmp_path / "x.svg").exists()
