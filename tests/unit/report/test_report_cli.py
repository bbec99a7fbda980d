"""``lockscope report`` through the command line: formats, bad input, missing inferno."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from lockscope.schema import SCHEMA

from conftest import LOCKSCOPE
from recorded import recorded_sweep

ROOT = Path(__file__).resolve().parents[3]
ENV = LOCKSCOPE.env()


def _run(*args, env=None, **kw):
    return LOCKSCOPE.run(*args, env=env or ENV, timeout=120, **kw)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """A sweep-like output directory holding a small results.json."""
    d = tmp_path_factory.mktemp("sweep")
    (d / "results.json").write_text(json.dumps(recorded_sweep()))
    return d


def _one_line_error(res) -> str:
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "Traceback" not in res.stderr
    return lines[0]


def test_report_html_default_beside_results(results):
    res = _run("report", results / "results.json", "--no-flame")
    assert res.returncode == 0, res.stderr
    assert "wrote" in res.stdout and str(results / "report.html") in res.stdout
    assert (results / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_report_accepts_the_sweep_directory(results, tmp_path):
    res = _run("report", results, "-o", tmp_path / "r.html", "--no-flame")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "r.html").is_file()


def test_report_json_to_stdout(results):
    res = _run("report", results / "results.json", "--format", "json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["analysis"] == json.loads((results / "results.json").read_text())["analysis"]


def test_report_markdown_with_pngs(results, tmp_path):
    res = _run("report", results / "results.json", "-o", tmp_path / "issue.md", "--no-flame")
    assert res.returncode == 0, res.stderr
    md = (tmp_path / "issue.md").read_text()
    assert "## Verdict" in md and "(issue-scaling.png)" in md
    assert (tmp_path / "issue-scaling.png").is_file()


@pytest.mark.parametrize("schema", ["lockscope/0", "lockscope/3", "perf-lock"])
def test_unknown_schema_is_one_line_and_nonzero(tmp_path, schema):
    doc = recorded_sweep()
    doc["schema"] = schema
    (tmp_path / "results.json").write_text(json.dumps(doc))
    res = _run("report", tmp_path / "results.json")
    assert res.returncode == 1
    line = _one_line_error(res)
    assert schema in line and SCHEMA in line
    assert not (tmp_path / "report.html").exists()


def test_truncated_results_is_one_line_and_nonzero(tmp_path, results):
    text = (results / "results.json").read_text()
    (tmp_path / "results.json").write_text(text[: len(text) // 2])
    res = _run("report", tmp_path / "results.json")
    assert res.returncode == 1
    assert "not valid JSON" in _one_line_error(res)


def test_missing_results_is_a_usage_error(tmp_path):
    res = _run("report", tmp_path / "nope.json")
    assert res.returncode == 2
    assert "no such file" in _one_line_error(res)


def test_refuses_to_overwrite_a_foreign_file(results, tmp_path):
    target = tmp_path / "notes.html"
    target.write_text("<p>mine</p>")
    res = _run("report", results, "-o", target, "--no-flame")
    assert res.returncode == 2
    assert "--force" in _one_line_error(res)
    assert target.read_text() == "<p>mine</p>"
    res = _run("report", results, "-o", target, "--no-flame", "--force")
    assert res.returncode == 0, res.stderr
    assert "lockscope report" in target.read_text()


def test_without_inferno_the_rest_still_renders(results, tmp_path):
    # No cargo bin on PATH and a HOME without ~/.cargo: inferno cannot be found.
    env = dict(ENV, PATH=os.pathsep.join(p for p in ("/usr/local/bin", "/usr/bin", "/bin")
                                          if os.path.isdir(p)), HOME=str(tmp_path))
    env.pop("CARGO_HOME", None)
    if shutil.which("inferno-flamegraph", path=env["PATH"]):
        pytest.skip("inferno-flamegraph is installed system-wide; cannot hide it")
    res = _run("report", results, "-o", tmp_path / "out" / "report.html", env=env)
    assert res.returncode == 0, res.stderr
    line = _one_line_error(res)
    assert "cargo install inferno --locked" in line and "flame graphs skipped" in line
    html = (tmp_path / "out" / "report.html").read_text()
    assert "cargo install inferno --locked" in html and 'id="plot-scaling"' in html
    flame = tmp_path / "out" / "flame"
    assert list(flame.glob("*.folded")) and not list(flame.glob("*.svg"))
