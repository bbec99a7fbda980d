"""``lockscope flame``: one lock-wait, off-CPU or differential flame graph."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import require_tool
from synthetic_results import make_results

ROOT = Path(__file__).resolve().parents[1]
LOCKSCOPE = [sys.executable, "-m", "lockscope"]
CARGO_BIN = str(Path.home() / ".cargo" / "bin")
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "analyzer"),
           PATH=f"{CARGO_BIN}{os.pathsep}{os.environ.get('PATH', '')}")


def _run(*args, env=None):
    return subprocess.run(LOCKSCOPE + [str(a) for a in args], capture_output=True, text=True,
                          env=env or ENV, timeout=120)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("flame") / "results.json"
    p.write_text(json.dumps(make_results(stacks=40, repeats=2)))
    return p


@pytest.fixture
def inferno(monkeypatch):
    monkeypatch.setenv("PATH", ENV["PATH"])
    return require_tool("inferno-flamegraph")


def _titles(svg: Path) -> str:
    root = ET.parse(svg).getroot()
    return " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}title"))


def test_lockwait_graph(results, tmp_path, inferno):
    out = tmp_path / "ext4.svg"
    res = _run("flame", results, "--kind", "lockwait", "--fs", "ext4", "--threads", 8, "-o", out)
    assert res.returncode == 0, res.stderr
    text = out.read_text()
    assert "ext4: lock waits at 8 threads (ns waited)" in text
    assert "ns waited" in _titles(out) and "ext4_dio_write_iter" in _titles(out)
    assert (tmp_path / "ext4.folded").read_text().count("\n") > 10


def test_offcpu_graph_defaults_to_highest_thread_count(results, tmp_path, inferno):
    out = tmp_path / "off.svg"
    res = _run("flame", results, "--kind", "offcpu", "--fs", "xfs", "-o", out)
    assert res.returncode == 0, res.stderr
    assert "xfs: off-CPU time at 8 threads (ns blocked)" in out.read_text()
    assert "io_schedule" in _titles(out)


def test_differential_graph(results, tmp_path, inferno):
    out = tmp_path / "diff.svg"
    res = _run("flame", results, "--fs", "ext4", "--diff", "1:8", "-o", out)
    assert res.returncode == 0, res.stderr
    assert "what grew from 1 to 8 threads" in out.read_text()
    ET.parse(out)
    rows = (tmp_path / "diff.folded").read_text().splitlines()
    assert rows and all(len(r.split(" ")) == 3 for r in rows)


def test_default_output_name(results, tmp_path, inferno):
    res = subprocess.run(LOCKSCOPE + ["flame", str(results), "--fs", "xfs", "--threads", "2"],
                         capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=120)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "xfs-lockwait-2threads.svg").is_file()
    assert (tmp_path / "xfs-lockwait-2threads.folded").is_file()


@pytest.mark.parametrize("args, words", [
    (["--threads", "8"], "--fs"),                                  # two filesystems ran
    (["--fs", "btrfs"], "btrfs"),
    (["--fs", "ext4", "--threads", "3"], "3 threads"),
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
