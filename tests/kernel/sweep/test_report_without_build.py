"""A results.json analyzed where lockscope was never built: the document a kernel-phase
sweep wrote, copied with the analyzer alone (no build/, no recorder on PATH), gives the
same report the checkout gives; and that document matches the trace types."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, require_kernel
from lockscope_cli import LOCKSCOPE
from patience import patience
from trace_types import check_trace_types

pytestmark = pytest.mark.kernel


def test_a_copied_results_json_is_reported_without_the_binaries(tmp_path):
    require_kernel()
    out = tmp_path / "sweep"
    res = LOCKSCOPE.run("sweep", "--fs", "ext4", "--threads", "1,2", "--runtime", "1",
                        "--no-report", "--out", str(out), timeout=600)
    assert res.returncode == 0, res.stderr
    doc = json.loads((out / "results.json").read_text())
    check_trace_types(doc)          # the recorder's own output, not a fixture
    assert all(e.get("kind") for r in doc["runs"] for e in r["trace"]["syscalls"])

    laptop = tmp_path / "laptop"
    shutil.copytree(ROOT / "analyzer" / "lockscope", laptop / "lockscope",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(out / "results.json", laptop / "results.json")
    env = {k: v for k, v in os.environ.items() if k not in ("LOCKSCOPE_BIN_DIR",
                                                             "LOCKSCOPE_COMMAND")}
    env.update(PYTHONPATH=str(laptop), PATH="/usr/bin:/bin")
    assert shutil.which("lockscope-record", path=env["PATH"]) is None
    got = subprocess.run([sys.executable, "-m", "lockscope", "report",
                          str(laptop / "results.json"), "-o", str(laptop / "report.html")],
                         capture_output=True, text=True, env=env, cwd=laptop,
                         timeout=patience(600))
    assert got.returncode == 0, got.stderr
    assert "not found" not in got.stderr
    assert (laptop / "report.html").stat().st_size > 0
